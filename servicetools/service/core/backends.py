"""The backend the settings name, decided here and nowhere else: a store and the pipeline
that goes with it.

- No ``database_url`` (the embedded default): the SQLite store in the data folder and
  the process-pool pipeline, whose engine workers open the same files
  (`pipeline_pool.PoolPipeline`).
- ``database_url``: the PostgreSQL store and the job queue in that database
  (`pipeline_queued.QueuedPipeline`), so any number of API processes and workers share
  one database. Those modules need the ``scale`` extra and are imported only then.

The pairs are fixed: the pool's workers write to SQLite files, which only one machine
can share, and the queue lives in PostgreSQL. So the app asks for both at once
(`open_backend`) and only a process that needs no pipeline (the helper process, the
``keys`` command) opens a store alone (`open_store`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ...extras import require
from ..settings import Settings
from .pipeline import Pipeline
from .pipeline_pool import PoolPipeline
from .store import Storage
from .store_sqlite import SqliteStore

if TYPE_CHECKING:  # not at run time: they need the 'scale' extra
    from .store_postgres import PgStore

__all__ = ["Backend", "open_backend", "open_store"]


class Backend(NamedTuple):
    """A store and the pipeline that runs its extractions."""

    store: Storage
    pipeline: Pipeline

    def close(self) -> None:
        """Stop the pipeline and close the store (a start that failed halfway)."""
        self.pipeline.shutdown()
        self.store.close()


def open_backend(settings: Settings) -> Backend:
    """The store and pipeline the settings name (see the module); nothing runs yet: the
    app starts the pipeline's workers at start-up (`Pipeline.warm_up`).

    Raises `StoreUnavailable <.store.StoreUnavailable>` when the database cannot be
    used, `MissingExtra` when PostgreSQL is asked for without the ``scale`` extra.
    """
    if settings.database_url is None:
        store = SqliteStore(settings.database_path)
        return Backend(store, PoolPipeline(settings, store))
    from .pipeline_queued import QueuedPipeline

    # Any number of API processes on one database: the jobs go through its queue.
    postgres = _postgres(settings, migrate=True)
    return Backend(postgres, QueuedPipeline(settings, postgres))


def open_store(settings: Settings, *, migrate: bool = True) -> Storage:
    """The store the settings name, alone: PostgreSQL at ``database_url``, else SQLite in
    the data folder. ``migrate=False`` (the helper process) skips bringing the schema up
    to date: the service process did that before starting it.

    Raises as `open_backend` does.
    """
    if settings.database_url is None:
        return SqliteStore(settings.database_path)
    return _postgres(settings, migrate=migrate)


def _postgres(settings: Settings, *, migrate: bool) -> PgStore:
    assert settings.database_url is not None
    require("scale", feature="a PostgreSQL database (--database)")
    from .store_postgres import PgStore

    return PgStore(settings.database_url, migrate=migrate)
