"""The embedded pipeline: engine worker processes in a pool beside the SQLite store.

The engine is CPU-bound and partly pure Python, so it runs in worker *processes*
(one per core): threads would serialise on the GIL. Synchronous triggers wait on
the same pool from a request thread, off the event loop; asynchronous triggers
submit and return at once. Workers open the service's SQLite files themselves and
write each stage there (SQLite's locking serialises their writes), so a status query
sees progress as it happens.

Only one service process runs on these files, so whatever it finds unfinished at
start was left by its own last stop, and is closed (`PoolPipeline.recover`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from ...wire.protocol import StatusType
from ..settings import Settings
from .pipeline import Job, PipelineFailure, Stopped, execute, watch_parent
from .store_sqlite import SqliteStore

__all__ = ["INTERRUPTED", "LOST", "PoolPipeline", "run_job"]

log = logging.getLogger("servicetools.service")

INTERRUPTED = ("interrupted: the service stopped before this extraction finished; "
               "trigger it again")
LOST = ("lost: no worker was running this extraction and it made no progress; trigger it "
        "again")


# -- worker process side ------------------------------------------------------------------
_worker: dict[str, Any] = {}


def _init_worker(settings: Settings, database: Path, parent: int) -> None:
    # The service's pid comes from the service itself: read here with getppid(), it
    # would already be 1 if the service died while this worker was still starting.
    if os.getppid() != parent:
        os._exit(0)
    # Ctrl-C on `servicetools serve` is the parent's business; workers end with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .vault import Vault

    # The service's own files: this pipeline goes with the SQLite store (open_backend).
    store = SqliteStore(database)
    _worker.update(settings=settings, store=store, vault=Vault(settings, store), parent=parent)
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()


def _warm_up() -> int:
    from .. import engine  # noqa: F401  (importing the engine is most of a cold start)

    return os.getpid()


class _StoreRecorder:
    def __init__(self, store: SqliteStore, extraction_id: str, parent: int) -> None:
        self.store, self.extraction_id, self.parent = store, extraction_id, parent

    def stages(self, stages: list[tuple[str, str, float | None]]) -> bool:
        # A worker orphaned by a killed service must stop, not race the new one.
        return os.getppid() == self.parent and self.store.add_statuses(self.extraction_id,
                                                                       stages)

    def finish(self, result: dict[str, Any], save: bool, usage: dict[str, Any],
               stages: list[tuple[str, float]]) -> bool:
        return self.store.finish(self.extraction_id, result if save else None, usage, stages)


def run_job(job: Job) -> dict[str, Any]:
    """Run one extraction through every stage; the extracted data, or `PipelineFailure`."""
    recorder = _StoreRecorder(_worker["store"], job.extraction_id, _worker["parent"])
    try:
        return execute(job, _worker["settings"], _worker["vault"], recorder)
    except Stopped:
        raise PipelineFailure(INTERRUPTED) from None


# -- service process side ------------------------------------------------------------------
class PoolPipeline:
    """The `Pipeline <.pipeline.Pipeline>` of the embedded service: the worker pool,
    owned by the app; `submit` returns a future of the extracted data."""

    def __init__(self, settings: Settings, store: SqliteStore) -> None:
        self.settings = settings
        self.store = store
        self._executor = self._new_executor()
        # Extractions submitted and not yet closed: the watchdog leaves these alone.
        self._running: set[str] = set()
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None

    def _new_executor(self) -> ProcessPoolExecutor:
        # spawn, not fork: the service process has threads (uvicorn, sqlite, anyio).
        return ProcessPoolExecutor(
            max_workers=self.settings.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(self.settings, self.store.path, os.getpid()),
        )

    def recover(self) -> int:
        """D5: close every extraction left running by a stopped service."""
        ids = self.store.unfinished()
        for extraction_id in ids:
            self.store.add_status(extraction_id, StatusType.ERROR, INTERRUPTED)
        return len(ids)

    def accept(self, job: Job, *, delete_after_first_fetch: bool) -> None:
        """Store a new extraction with its first status (before `submit`)."""
        self.store.add_extraction(job.info, delete_after_first_fetch=delete_after_first_fetch)

    def warm_up(self) -> None:
        """Start every worker now, so the first extraction does not pay for imports."""
        for _ in range(self.settings.workers):
            self._executor.submit(_warm_up)

    def submit(self, job: Job) -> Future[dict[str, Any]]:
        with self._guard:
            self._running.add(job.extraction_id)
        try:
            future = self._executor.submit(run_job, job)
        except BrokenProcessPool:
            # A worker died hard (a crash in a native library); start a fresh pool.
            self._executor = self._new_executor()
            future = self._executor.submit(run_job, job)
        future.add_done_callback(lambda f: self._closed(job, f))
        return future

    def _closed(self, job: Job, future: Future[dict[str, Any]]) -> None:
        exc = None if future.cancelled() else future.exception()
        try:
            # A PipelineFailure has written its error status already; anything else
            # (a dead worker, a status write that lost to a held lock) has not.
            if isinstance(exc, BrokenProcessPool):
                self.store.add_status(job.extraction_id, StatusType.ERROR,
                                      "the engine process stopped unexpectedly")
            elif exc is not None and not isinstance(exc, PipelineFailure):
                self.store.add_status(job.extraction_id, StatusType.ERROR,
                                      f"internal error: {type(exc).__name__}: {exc}")
        except Exception:  # noqa: BLE001  the watchdog closes it later
            log.exception("could not close extraction %s", job.extraction_id)
        finally:
            with self._guard:
                self._running.discard(job.extraction_id)

    def start_watchdog(self) -> None:
        """Close extractions nobody works on any more, so none stays unfinished for good.

        Every extraction is submitted when it is accepted and closed by `_closed`; one
        that is unfinished, not submitted and quiet for `settings.watchdog_quiet`
        seconds was lost (a status write that failed twice, say) and ends in `error`.
        """
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, name="watchdog", daemon=True)
            self._watchdog.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.settings.watchdog_interval):
            try:
                self.close_lost()
            except Exception:  # noqa: BLE001  a busy database now is no reason to stop
                log.exception("watchdog round failed")

    def close_lost(self) -> list[str]:
        """End in `error` the unfinished extractions that no worker holds; their ids."""
        quiet = self.store.stale_unfinished(self.settings.watchdog_quiet)
        with self._guard:
            lost = [i for i in quiet if i not in self._running]
        for extraction_id in lost:
            self.store.add_status(extraction_id, StatusType.ERROR, LOST)
            log.warning("extraction %s was lost and is closed in error", extraction_id)
        return lost

    def shutdown(self) -> None:
        self._stop.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
