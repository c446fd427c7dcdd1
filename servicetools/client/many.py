"""`extract_many`: many documents through the service at once, into a `Batch`.

Triggers run asynchronously, ``concurrency`` at a time (after a vault upload each, with
``upload_first``); one `Client.wait` then polls every extraction, and each result is
fetched as soon as its extraction ends. Whatever fails becomes a `Failure` of the stage
where it failed, and a batch that ends with failures warns (`BatchFailures`). An error
about every document (a wrong key, an unknown configuration or classifier, no service
before any trigger got through) stops the batch at once and is raised.

With a ``sink`` (`extract_many(..., to=SINK)`: any `sinks.ResultSink`), each result
goes to the sink as soon as it is fetched and is not kept: memory stays that of the
results in flight, whatever the batch's size. The `Batch` returned then holds the
documents and failures only; `Client.extract_many` hands it to the sink
(`Batch.write_to`), which gets the failures, configuration and timings, and returns
what the sink's ``close`` returns.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..wire.protocol import StatusType
from .batch import Batch, Failure
from .documents import Source, build_request
from .errors import (
    APIError,
    AuthenticationError,
    BatchFailures,
    ExtractionNotSaved,
    InvalidResponse,
    NotFound,
    ServiceError,
    ServiceUnreachable,
    TransportError,
    WaitTimeout,
)
from .progress import progress_bar
from .sinks import ResultSink

if TYPE_CHECKING:
    from .client import Client

__all__ = ["DEFAULT_BATCH_TIMEOUT", "DEFAULT_CONCURRENCY", "extract_many"]

#: Triggers and result fetches in flight at once in `Client.extract_many`.
DEFAULT_CONCURRENCY = 8
#: Seconds a whole batch may take before what is left fails at the ``wait`` stage.
DEFAULT_BATCH_TIMEOUT = 3600.0


def _about_every_document(error: APIError, configuration_name: str | None,
                          configuration_id: str | None, classifier_id: str | None) -> bool:
    """Whether a trigger's refusal holds for any document: the key (401), or the
    configuration or classifier the batch names is unknown (404 naming it)."""
    if isinstance(error, AuthenticationError):
        return True
    if isinstance(error, NotFound) and not isinstance(error, ExtractionNotSaved):
        named = {error.details.get("name"), error.details.get("id")} - {None}
        return bool(named & {configuration_name, configuration_id, classifier_id} - {None})
    return False


def extract_many(
    client: Client,
    sources: list[Source],
    *,
    configuration_name: str | None,
    configuration_id: str | None,
    classifier_id: str | None,
    concurrency: int,
    upload_first: bool,
    timeout: float | None,
    progress: bool,
    chunk_size: int,
    poll: float,
    max_poll: float,
    sink: ResultSink[Any] | None = None,
) -> Batch:
    """The machinery of `Client.extract_many` (documents already expanded): the `Batch`;
    with a ``sink``, its results went there and are not in it."""
    if (configuration_name is None) == (configuration_id is None):
        raise TypeError("give exactly one of configuration_name and configuration_id")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    started_unix, start = time.time(), time.monotonic()
    results: dict[int, tuple[str, dict[str, Any]]] = {}
    first_info: dict[str, Any] = {}  # the first result's extraction_info, when streamed
    failures: dict[int, Failure] = {}
    lock = threading.Lock()
    bar = progress_bar(len(sources), "triggering", progress)

    def finish(index: int, *, failure: Failure | None = None,
               result: tuple[str, dict[str, Any]] | None = None) -> None:
        with lock:  # worker threads and the polling thread both report here
            if failure is not None:
                failures[index] = failure
            elif result is not None:
                results[index] = result
            bar.set_postfix(ended=len(results), failed=len(failures), refresh=False)
            bar.update(1)

    # After this many triggers in a row found no service, the rest are not tried: a dead
    # service would otherwise cost every document its connection retries.
    give_up_after = max(8, concurrency)
    unreachable: list[TransportError] = []  # the current run of them, under ``lock``
    # An error about every document (a wrong key, an unknown configuration, no service
    # before any trigger got through): the batch stops and raises it.
    fatal: list[ServiceError] = []
    triggered_any = threading.Event()

    def trigger(index: int, source: Source) -> str | None:
        with lock:
            if fatal:
                return None
            skipped = (Failure(source.name, "trigger", f"not tried: {unreachable[-1]}")
                       if len(unreachable) >= give_up_after else None)
        if skipped is not None:
            finish(index, failure=skipped)
            return None
        stage = "read"
        try:
            if upload_first and source.input_type == "raw":
                data = source.read()
                stage = "upload"
                record = client.vault.upload((source.file_name, data),
                                             doctype=configuration_name or "document")
                body = build_request(
                    replace(source, input_type="service", document_id=record["document_id"]),
                    configuration_name=configuration_name, configuration_id=configuration_id,
                    classifier_id=classifier_id,
                    extraction_name=source.file_name if source.named else None)
            else:
                body = build_request(source, configuration_name=configuration_name,
                                      configuration_id=configuration_id,
                                      classifier_id=classifier_id)
            stage = "trigger"
            extraction_id = client.trigger_async(body).get("extraction_id")
            if not isinstance(extraction_id, str):
                raise InvalidResponse("the trigger answer has no extraction_id")
        except (ServiceError, OSError) as exc:
            if isinstance(exc, TransportError):
                with lock:
                    unreachable.append(exc)
            if (isinstance(exc, APIError) and _about_every_document(
                    exc, configuration_name, configuration_id, classifier_id)) or (
                    isinstance(exc, ServiceUnreachable) and not triggered_any.is_set()):
                with lock:
                    fatal.append(exc)
                return None
            finish(index, failure=Failure.from_error(source.name, stage, exc))
            return None
        triggered_any.set()
        with lock:
            unreachable.clear()
        return extraction_id

    def fetch(index: int, extraction_id: str) -> None:
        try:
            # The raw dict: a Batch holds (and saves) the service's JSON as it came.
            data = client.get_result(extraction_id).raw
        except ServiceError as exc:
            finish(index, failure=Failure.from_error(sources[index].name, "fetch", exc,
                                                     extraction_id))
            return
        if sink is not None:
            # Out of the lock: the sink converts and writes a part every few hundred.
            sink.add(data, sources[index].name)
            if not first_info and isinstance(data.get("extraction_info"), dict):
                first_info.update(data["extraction_info"])
            data = {}  # streamed: not kept
        finish(index, result=(extraction_id, data))

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="servicetools")
    try:
        triggered = [pool.submit(trigger, i, s) for i, s in enumerate(sources)]
        index_of = {}
        for index, future in enumerate(triggered):
            extraction_id = future.result()
            if extraction_id is not None:
                index_of[extraction_id] = index
        if fatal:
            error = fatal[0]
            error.add_note(f"extract_many stopped: this error is about every document, so "
                           f"none of the {len(sources)} was extracted.")
            raise error
        trigger_s = time.monotonic() - start
        bar.set_description("extracting")
        fetches: list[Future[None]] = []
        final: set[str] = set()

        def on_final(extraction_id: str, status: dict[str, Any]) -> None:
            final.add(extraction_id)
            index = index_of[extraction_id]
            if status.get("status_type") == StatusType.ENDED:
                fetches.append(pool.submit(fetch, index, extraction_id))
                return
            reason = status.get("message") or "the extraction ended in error"
            finish(index, failure=Failure(sources[index].name, "extraction", str(reason),
                                          extraction_id=extraction_id,
                                          details={"status": status}))

        remaining = None if timeout is None else max(0.0, timeout - trigger_s)
        try:
            client.wait(list(index_of), on_final=on_final, timeout=remaining, poll=poll,
                        max_poll=max_poll, chunk_size=chunk_size, progress=False)
        except WaitTimeout as exc:
            for extraction_id in exc.pending:
                last = exc.statuses.get(extraction_id, {}).get("status_type", "unknown")
                finish(index_of[extraction_id], failure=Failure(
                    sources[index_of[extraction_id]].name, "wait",
                    f"not finished within {timeout:g} s (last status: {last})",
                    extraction_id=extraction_id,
                    details={"status": exc.statuses.get(extraction_id)}))
        except ServiceError as exc:
            # Not transient (e.g. the key was revoked): every unfinished one fails with it.
            for extraction_id, index in index_of.items():
                if extraction_id not in final:
                    finish(index, failure=Failure.from_error(sources[index].name, "wait",
                                                             exc, extraction_id))
        for pending_fetch in fetches:
            pending_fetch.result()
    except BaseException:
        # Ctrl-C in a notebook: drop the queued work rather than finish it.
        pool.shutdown(wait=False, cancel_futures=True)
        bar.close()
        raise
    pool.shutdown()
    bar.close()
    total_s = time.monotonic() - start
    batch = Batch(
        configuration={"name": configuration_name, "id": configuration_id},
        timings={"started_unix": started_unix, "trigger_s": trigger_s,
                 "wait_s": total_s - trigger_s, "total_s": total_s},
        meta={"service": client.base_url, "servicetools": __version__},
    )
    for index in sorted(results):
        extraction_id, data = results[index]
        if sink is None:
            batch.results[extraction_id] = data
        batch.documents[extraction_id] = sources[index].name
    batch.failures = [failures[index] for index in sorted(failures)]
    if batch.failures:
        # By stage and error code: reasons differ in their details ("last status: ...").
        kinds = Counter((f.stage, f.code) for f in batch.failures)
        (stage, code), count = kinds.most_common(1)[0]
        example = next(f.reason for f in batch.failures if (f.stage, f.code) == (stage, code))
        warnings.warn(f"{len(batch.failures)} of {len(batch)} documents failed; the commonest "
                      f"failure ({count}) at {stage}{f' ({code})' if code else ''}, such as "
                      f"{example!r}. See batch.failures.", BatchFailures, stacklevel=3)
    first = next(iter(batch.results.values()), None)
    info = first.get("extraction_info", {}) if first is not None else first_info
    if info:
        # The service's own record of what ran, whichever of name or id was given.
        batch.configuration = {
            "name": info.get("used_extraction_configuration_name", configuration_name),
            "id": info.get("used_extraction_configuration_id", configuration_id),
        }
    return batch
