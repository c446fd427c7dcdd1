"""`Batch`: the results of many documents, failures kept apart; saved as JSON lines.

>>> batch = Batch(results={"e1": {"extracted_targets": []}}, documents={"e1": "a.pdf"},
...               failures=[Failure("b.txt", "trigger", "not a PDF, PNG or JPEG")])
>>> batch
<Batch: 2 documents, 1 ended, 1 failed>
>>> batch.counts()
{'ended': 1, 'trigger': 1}

The file format (``save``/``load``) is the wire's (`wire.saved_batch`): a header line
(format, version, configuration, timings, meta and the number of lines that follow, so a
truncated file is noticed), one line per result, then one line per failure. The analysis
side reads the same files through the wire, not through this module.
"""

from __future__ import annotations

import html
import json
import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ..wire import saved_batch
from ..wire.saved_batch import FORMAT, VERSION
from .errors import APIError

if TYPE_CHECKING:
    from .sinks import ResultSink

__all__ = [
    "Batch",
    "FORMAT",
    "Failure",
    "STAGES",
    "VERSION",
]

_T = TypeVar("_T")  # what a sink's close returns

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
        return saved_batch.write(path, self.results, self.documents,
                                 [asdict(failure) for failure in self.failures],
                                 configuration=self.configuration, timings=self.timings,
                                 meta=self.meta)

    def write_to(self, sink: ResultSink[_T]) -> _T:
        """Every result (with its document), then every failure, into ``sink``, with the
        batch's ``configuration``, ``timings`` and ``meta`` in ``sink.meta``; what
        ``sink.close()`` returns. (Into a dataset: ``st.frames.write_dataset(batch, ...)``.)
        """
        for extraction_id, data in self.results.items():
            sink.add(data, self.documents.get(extraction_id))
        for failure in self.failures:
            sink.add_failure(failure)
        sink.meta.update(configuration=self.configuration, timings=self.timings,
                         meta=self.meta)
        return sink.close()

    def to_dataset(self, path: str | os.PathLike[str], batch_name: str | None = None, *,
                   overwrite: bool = False) -> NoReturn:
        """Gone, with the client's import of the analysis side: TypeError says what to
        write instead, ``st.frames.write_dataset(batch, path, batch_name)``."""
        # json.dumps: a Python string literal in double quotes, as the docs write them.
        arguments = ["batch", *(json.dumps(text, ensure_ascii=False) for text in (
            os.fspath(path), batch_name) if text is not None)]
        if overwrite:
            arguments.append("overwrite=True")
        raise TypeError("Batch.to_dataset is gone; write a batch into a dataset with "
                        f"st.frames.write_dataset({', '.join(arguments)})")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Batch:
        """Read a file written by `save`; ValueError names the line of any problem."""
        saved = saved_batch.read(path)
        return cls(results=saved.results, documents=saved.documents,
                   failures=[Failure(**fields) for fields in saved.failures],
                   configuration=saved.configuration, timings=saved.timings,
                   meta=saved.meta)

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
