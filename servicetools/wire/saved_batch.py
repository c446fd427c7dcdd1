"""The saved-batch file, defined once: what `Batch.save` writes and the frames read back.

JSON lines in UTF-8; every line is an object whose ``record`` says its kind
(`LINE_KINDS`):

- the first line, `HEADER`: ``format`` (`FORMAT`), ``version`` (`VERSION`), the batch's
  ``configuration``, ``timings`` and ``meta``, and how many ``results`` and ``failures``
  lines follow, so that a truncated file is noticed;
- one `RESULT` line per result: ``extraction_id``, ``document`` (or null) and ``data``,
  the extracted data object as the service sent it;
- one `FAILURE` line per document that gave none, with the fields `FAILURE_FIELDS`.

The client writes it (`write`, behind `Batch.save`) and reads it (`read`, behind
`Batch.load`); the analysis side reads it with `read`, or with pyarrow for speed
(`frames.batch_file`, which checks what it reads with `header_problem` and
`failure_fields`). Both sides import this module, never each other, for it.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as folder:
...     path = write(pathlib.Path(folder) / "b.jsonl", {"e1": {"extracted_targets": []}},
...                  {"e1": "a.pdf"}, [{"document": "b.txt", "stage": "trigger",
...                                     "reason": "not a PDF, PNG or JPEG"}])
...     saved = read(path)
...     is_header_line(path.read_text(encoding="utf-8").splitlines()[0])
True
>>> saved.documents, [f["stage"] for f in saved.failures]
({'e1': 'a.pdf'}, ['trigger'])
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FAILURE",
    "FAILURE_FIELDS",
    "FORMAT",
    "HEADER",
    "LINE_KINDS",
    "REQUIRED_FAILURE_FIELDS",
    "RESULT",
    "SavedBatch",
    "VERSION",
    "failure_fields",
    "header_problem",
    "is_header_line",
    "read",
    "write",
]

#: The format's name, in the header's ``format``.
FORMAT = "servicetools.batch"
#: The version this package writes and reads; another is refused, not guessed at.
VERSION = 1
#: The kinds of line, in each line's ``record``, in the order they come in the file.
HEADER, RESULT, FAILURE = "header", "result", "failure"
LINE_KINDS: tuple[str, ...] = (HEADER, RESULT, FAILURE)
#: A failure line's fields besides ``record`` (the client's `Failure`, field for field).
FAILURE_FIELDS: tuple[str, ...] = ("document", "stage", "reason", "code", "http_status",
                                   "extraction_id", "details")
#: The fields a failure line cannot do without; the others may be left out.
REQUIRED_FAILURE_FIELDS: tuple[str, ...] = ("document", "stage", "reason")


@dataclass
class SavedBatch:
    """What a saved batch holds, as plain data: results and their documents by extraction
    id (in file order), failures as dicts of `FAILURE_FIELDS`, and the header's
    ``configuration``, ``timings`` and ``meta``."""

    results: dict[str, Any] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    configuration: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


def is_header_line(text: str) -> bool:
    """Whether a file's first line may be a saved batch's header: a cheap look (it names
    `FORMAT`), for telling a saved batch from other JSON lines; `read` checks it."""
    return f'"{FORMAT}"' in text


def header_problem(record: Any) -> str | None:
    """What is wrong with ``record`` as the header line, or None if it is one this reads."""
    if (not isinstance(record, Mapping) or record.get("record") != HEADER
            or record.get("format") != FORMAT):
        return f"not a {FORMAT} file"
    if record.get("version") != VERSION:
        return f"{FORMAT} version {record.get('version')!r}; this reads {VERSION}"
    return None


def failure_fields(record: Any) -> dict[str, Any]:
    """A failure line's fields (``record`` dropped); ValueError if they are not some of
    `FAILURE_FIELDS` with all of `REQUIRED_FAILURE_FIELDS`."""
    if not isinstance(record, Mapping):
        raise ValueError("bad failure record: not an object")
    fields = {k: v for k, v in record.items() if k != "record"}
    unknown = [k for k in fields if k not in FAILURE_FIELDS]
    missing = [k for k in REQUIRED_FAILURE_FIELDS if k not in fields]
    if unknown or missing:
        said = ([f"unknown field {k!r}" for k in unknown]
                + [f"no {k!r}" for k in missing])
        raise ValueError(f"bad failure record: {', '.join(said)}")
    return fields


def write(path: str | os.PathLike[str], results: Mapping[str, Any],
          documents: Mapping[str, str], failures: Sequence[Mapping[str, Any]], *,
          configuration: Mapping[str, Any] | None = None,
          timings: Mapping[str, Any] | None = None,
          meta: Mapping[str, Any] | None = None) -> Path:
    """Write a saved batch at ``path`` (atomically: a crash leaves the old file); the path.

    ``failures`` are dicts of `FAILURE_FIELDS`; a result's document comes from
    ``documents`` by extraction id (null when it has none).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = {"record": HEADER, "format": FORMAT, "version": VERSION,
              "configuration": dict(configuration or {}), "timings": dict(timings or {}),
              "meta": dict(meta or {}), "results": len(results), "failures": len(failures)}
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8", newline="\n") as out:
        out.write(_line(header))
        for extraction_id, data in results.items():
            out.write(_line({"record": RESULT, "extraction_id": extraction_id,
                             "document": documents.get(extraction_id), "data": data}))
        for failure in failures:
            out.write(_line({"record": FAILURE, **failure}))
    os.replace(temporary, target)
    return target


def read(path: str | os.PathLike[str]) -> SavedBatch:
    """Read a saved batch; ValueError names the line of any problem, and a file holding
    fewer lines than its header announces is refused as truncated."""
    saved = SavedBatch()
    seen = {RESULT: 0, FAILURE: 0}
    header: Mapping[str, Any] | None = None
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
                problem = header_problem(record)
                if problem is not None:
                    raise ValueError(f"{path}:{number}: {problem}")
                header = record
                saved.configuration = record.get("configuration", {})
                saved.timings = record.get("timings", {})
                saved.meta = record.get("meta", {})
            elif kind == RESULT:
                if "extraction_id" not in record or "data" not in record:
                    raise ValueError(f"{path}:{number}: bad result record: it needs "
                                     "extraction_id and data")
                extraction_id = record["extraction_id"]
                saved.results[extraction_id] = record["data"]
                if record.get("document") is not None:
                    saved.documents[extraction_id] = record["document"]
                seen[RESULT] += 1
            elif kind == FAILURE:
                try:
                    saved.failures.append(failure_fields(record))
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: {exc}") from None
                seen[FAILURE] += 1
            else:
                raise ValueError(f"{path}:{number}: unknown record {kind!r}")
    if header is None:
        raise ValueError(f"{path}: empty file, not a {FORMAT} file")
    expected = {RESULT: header.get("results"), FAILURE: header.get("failures")}
    if seen != expected:
        raise ValueError(f"{path}: the header announces {expected[RESULT]} results and "
                         f"{expected[FAILURE]} failures but the file holds "
                         f"{seen[RESULT]} and {seen[FAILURE]} (truncated?)")
    return saved


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
