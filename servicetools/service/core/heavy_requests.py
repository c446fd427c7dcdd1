"""Heavy requests: the helper process for request work too heavy to share the service
process with other users (a large result update's checks, application and storing).

Every request is answered by one service process, and Python runs one of its threads
at a time (the GIL). Checking a result/update of a hundred thousand values is seconds
of pure Python; in a thread of the service, every other request waited for its turn at
each step, and another user's triggers took 25 to 139 times as long meanwhile
(bench/reliability.py). In a process of its own the work runs beside the service, which
only writes the request body to a file as it arrives and sends the answer's file back
(deps.read_or_spool, deps.file_json_response): tens of MB copied in memory hold the
GIL too.

The process starts with the first job, not with the service: most services never get
such a request, and each process costs tens of MiB. It reads and writes the service's
database through a store of its own, and ends when the service does.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ..settings import Settings
from .backends import open_store
from .pipeline import watch_parent
from .store import Storage

__all__ = ["HelperProcess", "helper_parts"]

T = TypeVar("T")
_parts: dict[str, Any] = {}


def _init_helper(settings: Settings, parent: int) -> None:
    if os.getppid() != parent:
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the service's business
    _parts.update(settings=settings, store=open_store(settings, migrate=False))
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()


def helper_parts() -> tuple[Settings, Storage]:
    """In the helper process: the service's settings and a store on its database."""
    return _parts["settings"], _parts["store"]


class HelperProcess:
    """One helper process, started on first use; `run` awaits a function run there.

    The function and its arguments travel by pickle, so it must be a module-level
    function; its exceptions come back as they were raised (`ApiError` included).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._executor: ProcessPoolExecutor | None = None
        self._guard = threading.Lock()

    def _pool(self) -> ProcessPoolExecutor:
        with self._guard:
            if self._executor is None:
                # spawn, not fork: the service process has threads (uvicorn, sqlite).
                self._executor = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_init_helper, initargs=(self.settings, os.getpid()))
            return self._executor

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        pool = self._pool()
        try:
            return await asyncio.wrap_future(pool.submit(function, *args))
        except BrokenProcessPool:
            # The process died (killed, or out of memory): the next job gets a new one,
            # and this one is tried once more there.
            with self._guard:
                if self._executor is pool:
                    self._executor = None
            return await asyncio.wrap_future(self._pool().submit(function, *args))

    def shutdown(self) -> None:
        with self._guard:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
