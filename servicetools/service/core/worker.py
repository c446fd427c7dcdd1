"""Engine worker processes on the job queue (`servicetools worker`, and the workers a
``serve --database`` process runs beside its API unless ``--no-workers``).

Each process loops: reap abandoned jobs, claim one, run it with a heartbeat thread that
renews the lease, write every stage through the lease. Processes, not threads: the engine
is CPU-bound. They share nothing but the database and the vault's store, so any number
of them, on any machines, may work on one queue.

While the database is away, nothing here stops: the loop waits and claims again, the
heartbeat keeps trying, and a run's writes wait for it within the lease (core/pgqueue.py).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from multiprocessing.process import BaseProcess
from typing import Any

from ..settings import Settings
from .pgqueue import Lease, PgQueue
from .pipeline import PipelineFailure, Stopped, Unrecorded, execute, watch_parent
from .store import StoreUnavailable
from .store_postgres import PgStore

log = logging.getLogger("servicetools.worker")

#: Seconds between claims while the queue is empty: an idle worker costs the database
#: ten cheap index lookups a second, and a new job waits 0.05 s on average.
IDLE_POLL = 0.1
#: Seconds between the loop's tries while the database cannot be reached, at first and
#: at most (the wait doubles).
DATABASE_RETRY = 1.0
DATABASE_RETRY_MOST = 10.0
#: Seconds between the supervisor's checks that its worker processes still run.
SUPERVISE_EVERY = 1.0


class _QueueRecorder:
    """A run's writes, accepted only while this worker holds the job's lease."""

    def __init__(self, queue: PgQueue, lease: Lease) -> None:
        self.queue, self.lease = queue, lease

    def stages(self, stages: list[tuple[str, str, float | None]]) -> bool:
        return not self.lease.lost.is_set() and self.queue.stages(self.lease, stages)

    def finish(self, result: dict[str, Any], save: bool, usage: dict[str, Any],
               stages: list[tuple[str, float]]) -> bool:
        return self.queue.finish(self.lease, result if save else None, usage, stages, result)


def _heartbeat(queue: PgQueue, lease: Lease, done: threading.Event) -> None:
    # A third of the lease: two renewals may fail (a slow database) before it expires.
    # It ends only with the run, or when another worker holds the job: a renewal that
    # fails, however often, is tried again, so the heartbeat resumes after an outage.
    while not done.wait(queue.lease_seconds / 3):
        try:
            if not queue.extend(lease):
                return  # taken over; the run's next write is refused and it stops
        except Unrecorded as exc:
            log.warning("heartbeat of %s failed, trying again: %s", lease.extraction_id, exc)


def run_claimed(queue: PgQueue, lease: Lease, settings: Settings, vault: Any) -> str:
    """Run one claimed job to its end; how it ended (for the log and tests)."""
    done = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(queue, lease, done), daemon=True,
                            name="heartbeat")
    beat.start()
    try:
        execute(lease.job, settings, vault, _QueueRecorder(queue, lease))
        return "ended"
    except PipelineFailure:
        return "error"
    except Stopped:
        return "taken over"
    except Unrecorded as exc:
        # Its lease runs out and another worker (or this one) runs it again.
        log.warning("extraction %s left to its lease: the database is away (%s)",
                    lease.extraction_id, exc)
        return "unrecorded"
    finally:
        done.set()


def work(settings: Settings, parent: int | None = None,
         stop: threading.Event | None = None) -> None:
    """One worker process's loop, until ``stop`` is set (or its ``parent`` is gone)."""
    from .vault import Vault

    if parent is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's
        threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()
    assert settings.database_url is not None
    away = _Backoff()
    while True:  # a worker (re)started while the database is down waits for it
        try:
            store = PgStore(settings.database_url, migrate=False, pool_size=2)
            break
        except StoreUnavailable as exc:
            if stop is not None and stop.is_set():
                return
            away.wait(exc)
    vault = Vault(settings, store)
    queue = PgQueue(store, owner=f"{socket.gethostname()}:{os.getpid()}",
                    lease_seconds=settings.lease_seconds, max_attempts=settings.job_attempts)
    if settings.standin_engine_seconds is None:
        from .. import engine  # noqa: F401  (now, not in the first job's time)
    while stop is None or not stop.is_set():
        try:
            for extraction_id in queue.reap():
                log.warning("extraction %s ended in error: every attempt was abandoned",
                            extraction_id)
            lease = queue.claim()
        except Unrecorded as exc:
            away.wait(exc)
            continue
        away.reset()
        if lease is None:
            time.sleep(IDLE_POLL)
            continue
        run_claimed(queue, lease, settings, vault)
    store.close()


class _Backoff:
    """The loop's wait while the database is away: doubling, and reset when it answers."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.seconds = DATABASE_RETRY

    def wait(self, why: Exception) -> None:
        log.warning("the queue's database is away, trying again in %.0f s: %s",
                    self.seconds, why)
        time.sleep(self.seconds)
        self.seconds = min(2 * self.seconds, DATABASE_RETRY_MOST)


def _child(settings: Settings, parent: int) -> None:
    logging.basicConfig(level=logging.WARNING)
    work(settings, parent)


class WorkerPool:
    """``count`` worker processes, restarted when one dies (killed, out of memory)."""

    def __init__(self, settings: Settings, count: int) -> None:
        self.settings = settings
        self.count = count
        self._processes: list[BaseProcess] = []
        self._stop = threading.Event()
        self._supervisor: threading.Thread | None = None

    def _spawn(self) -> BaseProcess:
        # spawn, not fork: the parent has threads (uvicorn, the pools').
        process = multiprocessing.get_context("spawn").Process(
            target=_child, args=(self.settings, os.getpid()), daemon=True,
            name="servicetools-worker")
        process.start()
        return process

    def start(self) -> WorkerPool:
        self._processes = [self._spawn() for _ in range(self.count)]
        self._supervisor = threading.Thread(target=self._supervise, daemon=True,
                                            name="worker-supervisor")
        self._supervisor.start()
        return self

    def _supervise(self) -> None:
        while not self._stop.wait(SUPERVISE_EVERY):
            for i, process in enumerate(self._processes):
                if not process.is_alive() and not self._stop.is_set():
                    log.warning("worker process %s ended (exit code %s); starting another",
                                process.pid, process.exitcode)
                    self._processes[i] = self._spawn()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes if p.pid is not None]

    def stop(self) -> None:
        """Stop every worker: a job one was running is taken over after its lease."""
        self._stop.set()
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()

    def wait(self) -> None:
        """Block until stopped (the ``worker`` command's main thread)."""
        self._stop.wait()
