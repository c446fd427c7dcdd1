"""The D5 pipeline's common ground: the `Pipeline` protocol the app and the routes call,
the `Job` they hand it, and `execute`, one job's run through every status stage.

Two pipelines satisfy the protocol, and `backends.open_backend` builds the one that goes
with the store: the embedded one (`pipeline_pool.PoolPipeline`: engine worker processes
in a pool beside the SQLite store) and the scale-out one (`pipeline_queued.QueuedPipeline`:
a job queue in PostgreSQL, run by worker processes on any machine). The engine workers of
both run `execute`; they differ only in where a run's writes go (`Recorder`: the store
itself, or the queue under the job's lease).
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from ...wire.protocol import StatusType
from ..errors import ApiError
from ..settings import Settings
from .documents import inspect_document
from .hosted import DownloadError, download
from .store import StoreUnavailable
from .vault_objects import StorageError

__all__ = ["Job", "Pipeline", "PipelineFailure", "Recorder", "Stopped", "Unrecorded",
           "execute", "watch_parent"]

log = logging.getLogger("servicetools.service")

_PARENT_POLL = 0.5  # seconds between a worker's checks that its service still runs


class PipelineFailure(Exception):
    """An extraction ended in ``error``; the message is the status message."""


class Stopped(Exception):
    """The extraction was already closed by someone else (recovery after a restart)."""


class Unrecorded(Exception):
    """A write could not reach the store (the database is away): the run stops and leaves
    its extraction as it was, for whoever takes the job over after its lease."""


@dataclass
class Job:
    """One extraction as a trigger hands it to a pipeline. Plain data: the pool pickles
    it to its workers, the queue stores it as JSON (``jobs.job_json``)."""

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


class Pipeline(Protocol):
    """What the app and the routes ask of a pipeline, whichever one runs the engine.

    The app calls `recover`, `warm_up` and `start_watchdog` at start and `shutdown` at
    the end; a trigger calls `accept` (the extraction and its first status are stored)
    and then `submit`.
    """

    def recover(self) -> int:
        """D5: deal with the extractions a stopped service left running; how many were
        closed."""
        ...

    def accept(self, job: Job, *, delete_after_first_fetch: bool) -> None:
        """Store a new extraction with its first status, ``not_started`` (before
        `submit`)."""
        ...

    def submit(self, job: Job) -> Future[dict[str, Any]]:
        """Have the job run; a future of its extracted data, or of `PipelineFailure`
        (only a synchronous trigger waits for it)."""
        ...

    def warm_up(self) -> None:
        """Start the engine workers now, so the first extraction does not pay for them."""
        ...

    def start_watchdog(self) -> None:
        """Start the thread that watches over running extractions."""
        ...

    def shutdown(self) -> None:
        """Stop the workers and threads this pipeline started."""
        ...


class Recorder(Protocol):
    """Where a run writes its stages and its end: the store itself (the embedded pool),
    or the job queue, which accepts them only from the worker still holding the job."""

    def stages(self, stages: list[tuple[str, str, float | None]]) -> bool: ...
    def finish(self, result: dict[str, Any], save: bool, usage: dict[str, Any],
               stages: list[tuple[str, float]]) -> bool:
        """Store the closing statuses, and ``result`` when ``save``; False when refused."""
        ...


def watch_parent(parent: int) -> None:
    """End this worker when the service process is gone (killed, or stopped mid-start).

    Orphans would hold a core and the OCR models' memory for nothing; their writes are
    already refused (final statuses are terminal), so exiting loses no data.
    """
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL)
    os._exit(0)


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
    t_rendered = time.perf_counter()
    stage((StatusType.DOC_CONVERTED_TO_PNG, f"{len(document.pages)} page(s) rendered at "
           f"{settings.render_dpi} dpi", None))
    t_extract = time.perf_counter()
    groups = engine.group_targets(job.configuration)
    # Each stage is stored as it is reached, with its own time; stages reached within
    # microseconds of each other share a transaction (fewer write locks taken per
    # extraction means less waiting between the workers and the service).
    formed = time.time()
    t_store = time.perf_counter()
    stage((StatusType.TARGET_GROUPS_FORMED, f"{len(groups)} group(s): "
           + ", ".join(g.search_area for g in groups), formed),
          (StatusType.EXTRACTION_STARTED, "", formed))
    # The status writes are the store's time, not the engine's (a disk's fsync can take
    # as long as a page's extraction): kept apart in the usage record.
    stored = (t_extract - t_rendered) + (time.perf_counter() - t_store)
    t_extract += time.perf_counter() - t_store
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
            "extract": round(t_extracted - t_extract, 4),
            "store": round(stored, 4),
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
