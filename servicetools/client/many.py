"""`ExtractMany`: many documents through the service at once, into a `Batch`.

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

__all__ = ["DEFAULT_BATCH_TIMEOUT", "DEFAULT_CONCURRENCY", "ExtractMany"]

#: Triggers and result fetches in flight at once in `Client.extract_many`.
DEFAULT_CONCURRENCY = 8
#: Seconds a whole batch may take before what is left fails at the ``wait`` stage.
DEFAULT_BATCH_TIMEOUT = 3600.0
#: After this many triggers in a row found no service (or ``concurrency``, if more), the
#: rest are not tried: a dead service would otherwise cost every document its connection
#: retries.
_GIVE_UP_AFTER = 8


class ExtractMany:
    """One run of `Client.extract_many` (documents already expanded): the methods are its
    steps, the attributes the state they share.

    `run` triggers every document on a pool of ``concurrency`` threads (`_trigger`: read,
    upload with ``upload_first``, trigger), stops if an error is about every document
    (`_raise_if_fatal`), waits for them all on the calling thread (`_wait`; `_on_final`
    as each ends), fetches each ended one's result on the pool (`_fetch`), keeps it or
    hands it to the sink (`_keep`), records each document's outcome (`_succeed`,
    `_fail`) and makes the `Batch` (`_batch`), warning if some failed (`_warn`).
    """

    def __init__(self, client: Client, sources: list[Source], *,
                 configuration_name: str | None, configuration_id: str | None,
                 classifier_id: str | None, concurrency: int, upload_first: bool,
                 timeout: float | None, progress: bool, chunk_size: int, poll: float,
                 max_poll: float, sink: ResultSink[Any] | None = None) -> None:
        if (configuration_name is None) == (configuration_id is None):
            raise TypeError("give exactly one of configuration_name and configuration_id")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.client, self.sources, self.sink = client, sources, sink
        self.configuration_name = configuration_name
        self.configuration_id = configuration_id
        self.classifier_id = classifier_id
        self.upload_first, self.progress = upload_first, progress
        self.timeout, self.chunk_size, self.poll, self.max_poll = (timeout, chunk_size, poll,
                                                                   max_poll)
        self.give_up_after = max(_GIVE_UP_AFTER, concurrency)

        # The pool's threads (triggers, fetches) and the waiting thread all report to
        # these at once: the lock keeps each update, and the bar's count, whole.
        self.lock = threading.Lock()
        #: Each ended document's extraction id and data, by input index (None: streamed).
        self.results: dict[int, tuple[str, dict[str, Any] | None]] = {}
        self.failures: dict[int, Failure] = {}
        #: The first streamed result's extraction_info: what ran, when no result is kept.
        self.first_info: dict[str, Any] = {}
        #: The current run of triggers that found no service.
        self.unreachable: list[TransportError] = []
        #: The first error about every document: the batch stops and raises it.
        self.fatal: ServiceError | None = None
        self.bar: Any = None
        # Set once, read by any thread: an Event needs no lock.
        self.triggered_any = threading.Event()

        # Only the calling thread touches these (it triggers, waits and runs `_on_final`).
        self.index_of: dict[str, int] = {}
        self.final: set[str] = set()
        self.fetches: list[Future[None]] = []
        # Its threads start with the first task `run` gives it.
        self.pool = ThreadPoolExecutor(max_workers=concurrency,
                                       thread_name_prefix="servicetools")

    # -- the run ---------------------------------------------------------------------
    def run(self) -> Batch:
        """The `Batch` of every document; with a sink, its results went there instead."""
        started_unix, start = time.time(), time.monotonic()
        self.bar = progress_bar(len(self.sources), "triggering", self.progress)
        try:
            self._trigger_all()
            self._raise_if_fatal()
            trigger_s = time.monotonic() - start
            self.bar.set_description("extracting")
            self._wait(trigger_s)
            for fetch in self.fetches:
                fetch.result()  # a fetch's own error (the sink's) is raised here
        except BaseException:
            # Ctrl-C in a notebook: drop the queued work rather than finish it.
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.bar.close()
            raise
        self.pool.shutdown()
        self.bar.close()
        total_s = time.monotonic() - start
        batch = self._batch({"started_unix": started_unix, "trigger_s": trigger_s,
                             "wait_s": total_s - trigger_s, "total_s": total_s})
        if batch.failures:
            self._warn(batch)
        return batch

    # -- triggering (on the pool) ------------------------------------------------------
    def _trigger_all(self) -> None:
        triggered = [self.pool.submit(self._trigger, index, source)
                     for index, source in enumerate(self.sources)]
        for index, future in enumerate(triggered):
            extraction_id = future.result()
            if extraction_id is not None:
                self.index_of[extraction_id] = index

    def _trigger(self, index: int, source: Source) -> str | None:
        """Read, upload (``upload_first``) and trigger one document; its extraction id,
        or None when it failed or was not tried."""
        with self.lock:
            if self.fatal is not None:
                return None
            skipped = (Failure(source.name, "trigger", f"not tried: {self.unreachable[-1]}")
                       if len(self.unreachable) >= self.give_up_after else None)
        if skipped is not None:
            self._fail(index, skipped)
            return None
        stage = "read"
        try:
            if self.upload_first and source.input_type == "raw":
                data = source.read()
                stage = "upload"
                body = self._uploaded(source, data)
            else:
                body = self._request(source)
            stage = "trigger"
            extraction_id = self.client.trigger_async(body).get("extraction_id")
            if not isinstance(extraction_id, str):
                raise InvalidResponse("the trigger answer has no extraction_id")
        except (ServiceError, OSError) as exc:
            self._trigger_failed(index, source, stage, exc)
            return None
        self.triggered_any.set()
        with self.lock:
            self.unreachable.clear()
        return extraction_id

    def _request(self, source: Source, **extra: Any) -> dict[str, Any]:
        return build_request(source, configuration_name=self.configuration_name,
                             configuration_id=self.configuration_id,
                             classifier_id=self.classifier_id, **extra)

    def _uploaded(self, source: Source, data: bytes) -> dict[str, Any]:
        """The trigger request of ``source`` once uploaded to the vault."""
        record = self.client.vault.upload((source.file_name, data),
                                          doctype=self.configuration_name or "document")
        return self._request(
            replace(source, input_type="service", document_id=record["document_id"]),
            extraction_name=source.file_name if source.named else None)

    def _trigger_failed(self, index: int, source: Source, stage: str,
                        error: ServiceError | OSError) -> None:
        if isinstance(error, TransportError):
            with self.lock:
                self.unreachable.append(error)
        if isinstance(error, ServiceError) and self._about_every_document(error):
            with self.lock:
                if self.fatal is None:
                    self.fatal = error
            return
        self._fail(index, Failure.from_error(source.name, stage, error))

    def _about_every_document(self, error: ServiceError) -> bool:
        """Whether a trigger's refusal holds for any document: the key (401), the
        configuration or classifier the batch names is unknown (404 naming it), or no
        service before any trigger got through."""
        if isinstance(error, ServiceUnreachable):
            return not self.triggered_any.is_set()
        if isinstance(error, AuthenticationError):
            return True
        if isinstance(error, NotFound) and not isinstance(error, ExtractionNotSaved):
            named = {error.details.get("name"), error.details.get("id")} - {None}
            return bool(named & {self.configuration_name, self.configuration_id,
                                 self.classifier_id} - {None})
        return False

    def _raise_if_fatal(self) -> None:
        if self.fatal is not None:
            self.fatal.add_note(f"extract_many stopped: this error is about every document, "
                                f"so none of the {len(self.sources)} was extracted.")
            raise self.fatal

    # -- waiting (on the calling thread) and fetching (on the pool) --------------------
    def _wait(self, trigger_s: float) -> None:
        """Poll every triggered extraction until it ends, or the batch's time is up."""
        remaining = None if self.timeout is None else max(0.0, self.timeout - trigger_s)
        try:
            self.client.wait(list(self.index_of), on_final=self._on_final, timeout=remaining,
                             poll=self.poll, max_poll=self.max_poll,
                             chunk_size=self.chunk_size, progress=False)
        except WaitTimeout as exc:
            for extraction_id in exc.pending:
                status = exc.statuses.get(extraction_id)
                last = (status or {}).get("status_type", "unknown")
                self._fail(self.index_of[extraction_id], Failure(
                    self._name(extraction_id), "wait",
                    f"not finished within {self.timeout:g} s (last status: {last})",
                    extraction_id=extraction_id, details={"status": status}))
        except ServiceError as exc:
            # Not transient (e.g. the key was revoked): every unfinished one fails with it.
            for extraction_id, index in self.index_of.items():
                if extraction_id not in self.final:
                    self._fail(index, Failure.from_error(self._name(extraction_id), "wait",
                                                         exc, extraction_id))

    def _on_final(self, extraction_id: str, status: dict[str, Any]) -> None:
        """One extraction ended: fetch its result, or record its error."""
        self.final.add(extraction_id)
        index = self.index_of[extraction_id]
        if status.get("status_type") == StatusType.ENDED:
            self.fetches.append(self.pool.submit(self._fetch, index, extraction_id))
            return
        reason = status.get("message") or "the extraction ended in error"
        self._fail(index, Failure(self.sources[index].name, "extraction", str(reason),
                                  extraction_id=extraction_id, details={"status": status}))

    def _fetch(self, index: int, extraction_id: str) -> None:
        try:
            # The raw dict: a Batch holds (and saves) the service's JSON as it came.
            data = self.client.get_result(extraction_id).raw
        except ServiceError as exc:
            self._fail(index, Failure.from_error(self.sources[index].name, "fetch", exc,
                                                 extraction_id))
            return
        self._keep(index, extraction_id, data)

    def _keep(self, index: int, extraction_id: str, data: dict[str, Any]) -> None:
        """Keep a result for the `Batch`, or hand it to the sink and keep nothing."""
        if self.sink is None:
            self._succeed(index, extraction_id, data)
            return
        # Out of the lock: the sink converts and writes a part every few hundred.
        self.sink.add(data, self.sources[index].name)
        info = data.get("extraction_info")
        with self.lock:
            if not self.first_info and isinstance(info, dict):
                self.first_info.update(info)
        self._succeed(index, extraction_id, None)

    # -- outcomes ----------------------------------------------------------------------
    def _succeed(self, index: int, extraction_id: str, data: dict[str, Any] | None) -> None:
        with self.lock:
            self.results[index] = (extraction_id, data)
            self._count()

    def _fail(self, index: int, failure: Failure) -> None:
        with self.lock:
            self.failures[index] = failure
            self._count()

    def _count(self) -> None:
        """One more document done, on the bar (under the lock)."""
        self.bar.set_postfix(ended=len(self.results), failed=len(self.failures),
                             refresh=False)
        self.bar.update(1)

    def _name(self, extraction_id: str) -> str:
        return self.sources[self.index_of[extraction_id]].name

    def _batch(self, timings: dict[str, float]) -> Batch:
        """The outcomes in input order, with the configuration that ran."""
        batch = Batch(configuration={"name": self.configuration_name,
                                     "id": self.configuration_id},
                      timings=timings,
                      meta={"service": self.client.base_url, "servicetools": __version__})
        for index in sorted(self.results):
            extraction_id, data = self.results[index]
            if data is not None:
                batch.results[extraction_id] = data
            batch.documents[extraction_id] = self.sources[index].name
        batch.failures = [self.failures[index] for index in sorted(self.failures)]
        first = next(iter(batch.results.values()), None)
        info = first.get("extraction_info", {}) if first is not None else self.first_info
        if info:
            # The service's own record of what ran, whichever of name or id was given.
            batch.configuration = {
                "name": info.get("used_extraction_configuration_name",
                                 self.configuration_name),
                "id": info.get("used_extraction_configuration_id", self.configuration_id),
            }
        return batch

    def _warn(self, batch: Batch) -> None:
        # By stage and error code: reasons differ in their details ("last status: ...").
        kinds = Counter((f.stage, f.code) for f in batch.failures)
        (stage, code), count = kinds.most_common(1)[0]
        example = next(f.reason for f in batch.failures if (f.stage, f.code) == (stage, code))
        # stacklevel: here, run, Client.extract_many, then the caller's line.
        warnings.warn(f"{len(batch.failures)} of {len(batch)} documents failed; the commonest "
                      f"failure ({count}) at {stage}{f' ({code})' if code else ''}, such as "
                      f"{example!r}. See batch.failures.", BatchFailures, stacklevel=4)
