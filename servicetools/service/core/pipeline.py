"""The D5 pipeline: status stages, the engine worker pool, recovery at start.

The engine is CPU-bound and partly pure Python, so it runs in worker *processes*
(one per core): threads would serialise on the GIL. Synchronous triggers wait on
the same pool from a request thread, off the event loop; asynchronous triggers
submit and return at once. Workers write each stage to the store themselves, so a
status query sees progress as it happens.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from ...wire.protocol import StatusType
from ..errors import ApiError
from ..settings import Settings
from .documents import inspect_document
from .hosted import DownloadError, download
from .objectstore import StorageError
from .storage import Storage, StoreUnavailable, open_store

log = logging.getLogger("servicetools.service")

_PARENT_POLL = 0.5  # seconds between a worker's checks that its service still runs
INTERRUPTED = ("interrupted: the service stopped before this extraction finished; "
               "trigger it again")
LOST = ("lost: no worker was running this extraction and it made no progress; trigger it "
        "again")


class PipelineFailure(Exception):
    """An extraction ended in ``error``; the message is the status message."""


class Stopped(Exception):
    """The extraction was already closed by someone else (recovery after a restart)."""


@dataclass
class Job:
    extraction_id: str
    owner_id: str
    info: dict[str, Any]
    configuration: dict[str, Any]
    classifier: dict[str, Any] | None
    save: bool
    content_type: str | None = None  # as declared in the request, if it was
    data: bytes | None = None  # raw input, already checked at trigger
    document_storage_id: str = ""  # the vault document (service input, or saved raw input)
    host_url: str | None = None


# -- worker process side ------------------------------------------------------------------
_worker: dict[str, Any] = {}


def _init_worker(settings: Settings, parent: int) -> None:
    # The service's pid comes from the service itself: read here with getppid(), it
    # would already be 1 if the service died while this worker was still starting.
    if os.getppid() != parent:
        os._exit(0)
    # Ctrl-C on `servicetools serve` is the parent's business; workers end with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .vault import Vault

    store = open_store(settings, migrate=False)
    _worker.update(settings=settings, store=store, vault=Vault(settings, store), parent=parent)
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()


def watch_parent(parent: int) -> None:
    """End this worker when the service process is gone (killed, or stopped mid-start).

    Orphans would hold a core and the OCR models' memory for nothing; their writes are
    already refused (final statuses are terminal), so exiting loses no data.
    """
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL)
    os._exit(0)


def _warm_up() -> int:
    from .. import engine  # noqa: F401  (importing the engine is most of a cold start)

    return os.getpid()


class Recorder(Protocol):
    """Where a run writes its stages and its end: the store itself (the embedded pool),
    or the job queue, which accepts them only from the worker still holding the job."""

    def stages(self, stages: list[tuple[str, str, float | None]]) -> bool: ...
    def finish(self, result: dict[str, Any], save: bool, usage: dict[str, Any],
               stages: list[tuple[str, float]]) -> bool:
        """Store the closing statuses, and ``result`` when ``save``; False when refused."""
        ...


class Unrecorded(Exception):
    """A write could not reach the store (the database is away): the run stops and leaves
    its extraction as it was, for whoever takes the job over after its lease."""


class _StoreRecorder:
    def __init__(self, store: Storage, extraction_id: str, parent: int) -> None:
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


def execute(job: Job, settings: Settings, vault: Any, recorder: Recorder) -> dict[str, Any]:
    """Run one extraction, writing through ``recorder``; the extracted data, or
    `PipelineFailure` (its error status written), `Stopped` (someone else closed or took
    the extraction) or `Unrecorded` (the store is away)."""
    picked = time.time()

    def stage(*stages: tuple[str, str, float | None]) -> None:
        if not recorder.stages(list(stages)):
            raise Stopped(job.extraction_id)

    try:
        if job.classifier is None:
            stage((StatusType.STARTED, "", None))
        return _run(job, settings, vault, recorder, stage, picked)
    except (Stopped, Unrecorded):
        raise
    except StoreUnavailable as exc:
        # The database went away under the vault's records: not the document's fault.
        raise Unrecorded(str(exc)) from exc
    except (PipelineFailure, DownloadError) as exc:
        message = str(exc)
    except StorageError as exc:
        message = f"the vault's storage failed: {exc}"
    except ApiError as exc:  # a hosted document that breaks the D12 rules
        message = exc.message
    except Exception as exc:  # noqa: BLE001  the engine must never take a worker down
        log.exception("extraction %s failed", job.extraction_id)
        message = f"internal engine error: {type(exc).__name__}: {exc}"
    recorder.stages([(StatusType.ERROR, message, None)])
    raise PipelineFailure(message)


def _run(job: Job, settings: Settings, vault: Any, recorder: Recorder, stage: Any,
         picked: float) -> dict[str, Any]:
    from .. import engine
    from . import results

    t0 = time.perf_counter()
    storage_id = job.document_storage_id
    if job.host_url is not None:
        data, name = download(job.host_url, settings)
        info = inspect_document(data, settings, job.content_type)
        if job.save:
            record = vault.add(job.owner_id, data, name, "extraction",
                                          content_type=info.content_type,
                                          num_pages=info.num_pages)
            storage_id = record["document_id"]
        content_type = info.content_type
    elif job.data is not None:
        data = job.data
        content_type = job.content_type or inspect_document(data, settings).content_type
    else:
        found = vault.read(job.owner_id, job.document_storage_id)
        if found is None:
            raise PipelineFailure(f"vault document {job.document_storage_id!r} is gone")
        record, data = found
        content_type = record["content_type"]
    t_acquired = time.perf_counter()
    if settings.standin_engine_seconds is not None:
        return _stand_in(job, settings, recorder, stage, storage_id)
    try:
        document = engine.load_document(data, content_type, dpi=settings.render_dpi)
    except engine.UnreadableDocument as exc:
        raise PipelineFailure(f"the document cannot be read: {exc.message}") from exc
    if job.classifier is not None:
        label, score = engine.classify(document, job.classifier)
        verdict = (f"classified as {label!r} (score {score:.2f})" if label
                   else "matched no class")
        stage((StatusType.STARTED, f"{verdict} by classifier {job.classifier['name']!r}", picked))
        wanted = job.configuration.get("document_class")
        if wanted and label != wanted:
            found = f"was classified as {label!r}" if label else "matched no class"
            raise PipelineFailure(
                f"the document {found} but configuration {job.configuration['name']!r} "
                f"is for {wanted!r} documents"
            )
    stage((StatusType.DOC_CONVERTED_TO_PNG, f"{len(document.pages)} page(s) rendered at "
           f"{settings.render_dpi} dpi", None))
    t_rendered = time.perf_counter()
    groups = engine.group_targets(job.configuration)
    # Each stage is stored as it is reached, with its own time; stages reached within
    # microseconds of each other share a transaction (fewer write locks taken per
    # extraction means less waiting between the workers and the service).
    formed = time.time()
    stage((StatusType.TARGET_GROUPS_FORMED, f"{len(groups)} group(s): "
           + ", ".join(g.search_area for g in groups), formed),
          (StatusType.EXTRACTION_STARTED, "", formed))
    extracted = []
    for group in groups:
        extracted += engine.extract_group(document, group, job.configuration)
    extraction_ended = time.time()
    t_extracted = time.perf_counter()
    data_obj = results.build(job.info, job.configuration, extracted,
                             storage_id if job.save else "")
    usage = {
        "pages": len(document.pages),
        "ocr_pages": sum(1 for p in document.pages if p.source == "ocr"),
        "words": sum(len(p.words) for p in document.pages),
        "seconds": {
            "acquire": round(t_acquired - t0, 4),
            "render_and_read": round(t_rendered - t_acquired, 4),
            "extract": round(t_extracted - t_rendered, 4),
        },
    }
    now = time.time()
    if not recorder.finish(data_obj, job.save, usage,
                        [(StatusType.EXTRACTION_ENDED, extraction_ended),
                         (StatusType.USAGE_STATISTICS_AGGREGATED, now), (StatusType.ENDED, now)]):
        raise Stopped(job.extraction_id)
    return data_obj


def _stand_in(job: Job, settings: Settings, recorder: Recorder, stage: Any, storage_id: str
              ) -> dict[str, Any]:
    """A TEST AND BENCH AID, never the service's behaviour: `Settings.standin_engine_seconds`
    replaces the engine by a sleep, so a job's length is known (a kill lands mid-run) and
    is latency-bound (more workers than cores show how the queue scales). The result has
    every target, empty; no page is rendered, so ``doc_converted_to_png`` is not reached."""
    from . import results

    assert settings.standin_engine_seconds is not None
    formed = time.time()
    stage((StatusType.TARGET_GROUPS_FORMED, "stand-in engine", formed),
          (StatusType.EXTRACTION_STARTED, "", formed))
    time.sleep(settings.standin_engine_seconds)
    data_obj = results.build(job.info, job.configuration, [], storage_id if job.save else "")
    now = time.time()
    if not recorder.finish(data_obj, job.save, {"pages": 0, "stand_in": True},
                           [(StatusType.EXTRACTION_ENDED, now),
                            (StatusType.USAGE_STATISTICS_AGGREGATED, now),
                            (StatusType.ENDED, now)]):
        raise Stopped(job.extraction_id)
    return data_obj


# -- service process side ------------------------------------------------------------------
class Pipeline:
    """The worker pool, owned by the app; `submit` returns a future of the extracted data."""

    def __init__(self, settings: Settings, store: Storage) -> None:
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
            initargs=(self.settings, os.getpid()),
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
