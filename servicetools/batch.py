"""`Batch`: the results of many documents, failures kept apart; saved as JSON lines.

>>> batch = Batch(results={"e1": {"extracted_targets": []}}, documents={"e1": "a.pdf"},
...               failures=[Failure("b.txt", "trigger", "not a PDF, PNG or JPEG")])
>>> batch
<Batch: 2 documents, 1 ended, 1 failed>
>>> batch.counts()
{'ended': 1, 'trigger': 1}

The file format (``save``/``load``): the first line is a header record (format, version,
configuration, timings, meta and the number of lines that follow, so a truncated file is
noticed); then one line per result (``extraction_id``, ``document``, ``data``: the
extracted data object as the service sent it), then one line per failure.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import APIError, InvalidResponse, ServiceError, TransportError, WaitTimeout

if TYPE_CHECKING:
    from .client import Client, _Source

__all__ = ["FORMAT", "STAGES", "VERSION", "Batch", "Failure", "extract_many"]

FORMAT = "servicetools.batch"
VERSION = 1
#: Where a document can fail, in pipeline order.
STAGES = ("read", "upload", "trigger", "extraction", "wait", "fetch")
_STAGE_LABELS = {
    "read": "unreadable file",
    "upload": "refused at upload",
    "trigger": "refused at trigger",
    "extraction": "error in the pipeline",
    "wait": "not finished",
    "fetch": "result not fetched",
}
_HTML_FAILURES = 5


@dataclass
class Failure:
    """A document that gave no result: where (``stage``, one of `STAGES`) and why.

    ``code`` and ``http_status`` come from the service's error answer when there was
    one; ``details`` holds its details, or ``{"status": ...}`` for a pipeline error.
    """

    document: str
    stage: str
    reason: str
    code: str | None = None
    http_status: int | None = None
    extraction_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_error(cls, document: str, stage: str, error: Exception,
                   extraction_id: str | None = None) -> Failure:
        if isinstance(error, APIError):
            return cls(document, stage, error.message, error.code, error.status,
                       extraction_id, dict(error.details))
        if isinstance(error, OSError) and error.strerror:
            return cls(document, stage, f"{error.strerror}: {error.filename or document}",
                       extraction_id=extraction_id)
        return cls(document, stage, str(error) or type(error).__name__,
                   extraction_id=extraction_id)


@dataclass
class Batch:
    """Results by extraction id (in input order), their documents, and the failures.

    ``results[extraction_id]`` is the extracted data object (unknown fields kept),
    ``documents[extraction_id]`` the document it came from, ``failures`` the documents
    that gave none. ``configuration`` is ``{"name", "id"}``; ``timings`` has
    ``started_unix``, ``trigger_s``, ``wait_s`` and ``total_s``.
    """

    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    configuration: dict[str, str | None] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.results) + len(self.failures)

    def counts(self) -> dict[str, int]:
        """Documents by outcome: ``ended``, then failures by stage (only those present)."""
        by_stage = Counter(failure.stage for failure in self.failures)
        ordered = [s for s in STAGES if s in by_stage] + sorted(set(by_stage) - set(STAGES))
        return {"ended": len(self.results), **{stage: by_stage[stage] for stage in ordered}}

    # -- files -------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the batch as JSON lines (atomically: a crash leaves the old file)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        header = {"record": "header", "format": FORMAT, "version": VERSION,
                  "configuration": self.configuration, "timings": self.timings,
                  "meta": self.meta, "results": len(self.results),
                  "failures": len(self.failures)}
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8", newline="\n") as out:
            out.write(_line(header))
            for extraction_id, data in self.results.items():
                out.write(_line({"record": "result", "extraction_id": extraction_id,
                                 "document": self.documents.get(extraction_id),
                                 "data": data}))
            for failure in self.failures:
                out.write(_line({"record": "failure", **asdict(failure)}))
        os.replace(temporary, target)
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Batch:
        """Read a file written by `save`; ValueError names the line of any problem."""
        batch = cls()
        seen = {"result": 0, "failure": 0}
        header: dict[str, Any] | None = None
        with open(path, encoding="utf-8") as lines:
            for number, text in enumerate(lines, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: not JSON: {exc}") from exc
                kind = record.get("record") if isinstance(record, dict) else None
                if header is None:
                    if kind != "header" or record.get("format") != FORMAT:
                        raise ValueError(f"{path}:{number}: not a {FORMAT} file")
                    if record.get("version") != VERSION:
                        raise ValueError(f"{path}:{number}: {FORMAT} version "
                                         f"{record.get('version')!r}; this reads {VERSION}")
                    header = record
                    batch.configuration = record.get("configuration", {})
                    batch.timings = record.get("timings", {})
                    batch.meta = record.get("meta", {})
                elif kind == "result":
                    extraction_id = record["extraction_id"]
                    batch.results[extraction_id] = record["data"]
                    if record.get("document") is not None:
                        batch.documents[extraction_id] = record["document"]
                    seen["result"] += 1
                elif kind == "failure":
                    del record["record"]
                    try:
                        batch.failures.append(Failure(**record))
                    except TypeError as exc:
                        raise ValueError(f"{path}:{number}: bad failure record: {exc}") from exc
                    seen["failure"] += 1
                else:
                    raise ValueError(f"{path}:{number}: unknown record {kind!r}")
        if header is None:
            raise ValueError(f"{path}: empty file, not a {FORMAT} file")
        expected = {"result": header.get("results"), "failure": header.get("failures")}
        if seen != expected:
            raise ValueError(f"{path}: the header announces {expected['result']} results and "
                             f"{expected['failure']} failures but the file holds "
                             f"{seen['result']} and {seen['failure']} (truncated?)")
        return batch

    # -- display -----------------------------------------------------------------------
    def __repr__(self) -> str:
        name = self.configuration.get("name") or self.configuration.get("id")
        total = self.timings.get("total_s")
        parts = [f"{len(self)} documents", f"{len(self.results)} ended"]
        if self.failures:
            parts.append(f"{len(self.failures)} failed")
        if total is not None:
            parts.append(f"{total:.1f} s")
        return f"<Batch {name}: " + ", ".join(parts) + ">" if name else (
            "<Batch: " + ", ".join(parts) + ">")

    def _repr_html_(self) -> str:
        esc = html.escape
        name = self.configuration.get("name") or self.configuration.get("id") or "-"
        started = self.timings.get("started_unix")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) if started else "-"
        total = self.timings.get("total_s")
        rows = [("configuration", f"<code>{esc(str(name))}</code>"),
                ("documents", str(len(self)))]
        rows += [(_STAGE_LABELS.get(k, k) if k != "ended" else "ended", str(v))
                 for k, v in self.counts().items()]
        rows += [("time", f"{total:.1f} s" if total is not None else "-"),
                 ("started", esc(when))]
        body = "".join(f"<tr><th style='text-align:left'>{esc(k)}</th>"
                       f"<td style='text-align:right'>{v}</td></tr>" for k, v in rows)
        shown = "".join(f"<li><code>{esc(f.document)}</code> ({esc(f.stage)}): "
                        f"{esc(f.reason)}</li>" for f in self.failures[:_HTML_FAILURES])
        more = len(self.failures) - _HTML_FAILURES
        if more > 0:
            shown += f"<li>... and {more} more in <code>batch.failures</code></li>"
        failures = f"<ul>{shown}</ul>" if shown else ""
        return f"<div><b>Batch</b><table>{body}</table>{failures}</div>"


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def extract_many(
    client: Client,
    sources: list[_Source],
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
) -> Batch:
    """The machinery of `Client.extract_many` (documents already expanded)."""
    from . import __version__
    from .client import _build_request, _progress_bar

    if (configuration_name is None) == (configuration_id is None):
        raise TypeError("give exactly one of configuration_name and configuration_id")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    started_unix, start = time.time(), time.monotonic()
    results: dict[int, tuple[str, dict[str, Any]]] = {}
    failures: dict[int, Failure] = {}
    lock = threading.Lock()
    bar = _progress_bar(len(sources), "triggering", progress)

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

    def trigger(index: int, source: _Source) -> str | None:
        with lock:
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
                body = _build_request(
                    replace(source, input_type="service", document_id=record["document_id"]),
                    configuration_name=configuration_name, configuration_id=configuration_id,
                    classifier_id=classifier_id,
                    extraction_name=source.file_name if source.named else None)
            else:
                body = _build_request(source, configuration_name=configuration_name,
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
            finish(index, failure=Failure.from_error(source.name, stage, exc))
            return None
        with lock:
            unreachable.clear()
        return extraction_id

    def fetch(index: int, extraction_id: str) -> None:
        try:
            data = client.get_result(extraction_id)
        except ServiceError as exc:
            finish(index, failure=Failure.from_error(sources[index].name, "fetch", exc,
                                                     extraction_id))
            return
        finish(index, result=(extraction_id, data))

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="servicetools")
    try:
        triggered = [pool.submit(trigger, i, s) for i, s in enumerate(sources)]
        index_of = {}
        for index, future in enumerate(triggered):
            extraction_id = future.result()
            if extraction_id is not None:
                index_of[extraction_id] = index
        trigger_s = time.monotonic() - start
        bar.set_description("extracting")
        fetches: list[Future[None]] = []
        final: set[str] = set()

        def on_final(extraction_id: str, status: dict[str, Any]) -> None:
            final.add(extraction_id)
            index = index_of[extraction_id]
            if status.get("status_type") == "ended":
                fetches.append(pool.submit(fetch, index, extraction_id))
                return
            reason = status.get("message") or "the extraction ended in error"
            finish(index, failure=Failure(sources[index].name, "extraction", str(reason),
                                          extraction_id=extraction_id,
                                          details={"status": status}))

        remaining = None if timeout is None else max(0.0, timeout - trigger_s)
        try:
            client._poll(list(index_of), on_final=on_final, timeout=remaining, poll=poll,
                         max_poll=max_poll, chunk_size=chunk_size)
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
        batch.results[extraction_id] = data
        batch.documents[extraction_id] = sources[index].name
    batch.failures = [failures[index] for index in sorted(failures)]
    first = next(iter(batch.results.values()), None)
    if first is not None:
        # The service's own record of what ran, whichever of name or id was given.
        info = first.get("extraction_info", {})
        batch.configuration = {
            "name": info.get("used_extraction_configuration_name", configuration_name),
            "id": info.get("used_extraction_configuration_id", configuration_id),
        }
    return batch
