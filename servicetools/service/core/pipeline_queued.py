"""The pipeline of ``serve --database``: the API process's side of the job queue.

Triggers enqueue, synchronous triggers wait for their job's reply, and unless
``--no-workers`` the process runs engine workers of its own (core/worker.py) so that one
``serve`` works alone.

Nothing here closes extractions at start or when they are quiet, as the embedded
pipeline does (core/pipeline_pool.py): with several API processes on one database,
another process's work would look abandoned. A job whose worker is gone is found by its
expired lease instead (core/pgqueue.py), by whichever worker claims next.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import Future
from typing import Any

from ..settings import Settings
from .pgqueue import PgQueue
from .pipeline import Job, PipelineFailure, Unrecorded
from .store_postgres import PgStore
from .worker import WorkerPool

__all__ = ["QueuedPipeline", "REPLY_POLL"]

log = logging.getLogger("servicetools.service")

#: Seconds between the checks for synchronous replies: the wait a reply adds, on average
#: half of it, against one indexed query per round for all of this process's waiters.
REPLY_POLL = 0.02


class QueuedPipeline:
    """The `Pipeline <.pipeline.Pipeline>` of ``serve --database``: the same methods,
    over the job queue."""

    def __init__(self, settings: Settings, store: PgStore) -> None:
        self.settings = settings
        self.store = store
        self.queue = PgQueue(store, lease_seconds=settings.lease_seconds,
                             max_attempts=settings.job_attempts)
        self.workers = (WorkerPool(settings, settings.workers)
                        if settings.in_process_workers else None)
        self._waiting: dict[str, Future[dict[str, Any]]] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._waiter: threading.Thread | None = None

    def recover(self) -> int:
        """Nothing to recover at start: an interrupted job is taken over after its lease."""
        return 0

    def accept(self, job: Job, *, delete_after_first_fetch: bool) -> None:
        """The extraction, its first status and its job, in one transaction."""
        self.queue.enqueue(job, delete_after_first_fetch=delete_after_first_fetch)

    def warm_up(self) -> None:
        if self.workers is not None:
            self.workers.start()

    def start_watchdog(self) -> None:
        """Start the thread that hands synchronous replies to their waiting requests."""
        if self._waiter is None:
            self._waiter = threading.Thread(target=self._wait_replies, daemon=True,
                                            name="replies")
            self._waiter.start()

    def submit(self, job: Job) -> Future[dict[str, Any]]:
        """A future of a synchronous job's data (or `PipelineFailure`); an asynchronous
        job's future is never resolved, as nobody waits for it (it is queued already)."""
        future: Future[dict[str, Any]] = Future()
        if job.info.get("trigger_type") == "sync":
            with self._guard:
                self._waiting[job.extraction_id] = future
            self.start_watchdog()
        return future

    def _wait_replies(self) -> None:
        while not self._stop.wait(REPLY_POLL):
            with self._guard:
                ids = list(self._waiting)
            if not ids:
                continue
            try:
                replies = self.queue.take_replies(ids)
            except Unrecorded as exc:  # the database restarts: the replies wait there
                log.warning("synchronous replies cannot be read now: %s", exc)
                self._stop.wait(1.0)
                continue
            for extraction_id, (data_json, message) in replies.items():
                with self._guard:
                    future = self._waiting.pop(extraction_id)
                if data_json is None:
                    future.set_exception(PipelineFailure(message))
                else:
                    future.set_result(json.loads(data_json))

    def shutdown(self) -> None:
        self._stop.set()
        if self.workers is not None:
            self.workers.stop()
