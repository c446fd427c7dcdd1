"""Results written into a dataset as they arrive: `DatasetWriter` and `write_dataset`.

`DatasetWriter` holds at most ``results_per_part`` results before it writes them out
(`extract_many(..., to=DatasetWriter(...))` feeds it as results arrive, as the client's
`ResultSink`; `write_dataset` feeds it a batch or saved results), converted by `frames.fields` and
`frames.cells` into one part file per table (`layout`). A part is written to a
temporary name and renamed, and the batch's ``batches/NAME.json`` is written last: a
dataset read while a batch is being written shows its finished parts, and
`Dataset.complete` says which batches are whole. Batches are ordered by name; the
default name is the UTC time the writing started (``20261125T201500Z``), so that order
is the order they were run in.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ....client.sinks import ResultSink
from ..conditions import failed_messages
from ..read import Complain, Errors, read_path, result_items
from ..values import cells as cell_frame
from ..values import fields as field_frame
from .layout import (
    FAILURE_COLUMNS,
    SCHEMAS,
    TABLES,
    DatasetError,
    batch_name,
    part_path,
    partition,
    record_path,
)
from .reader import Dataset

__all__ = ["DEFAULT_RESULTS_PER_PART", "DatasetWriter", "write_dataset"]

#: Results converted and written together: about 40 MB of frames for results of 20
#: fields and a 150-cell table, the writer's whole memory.
DEFAULT_RESULTS_PER_PART = 500


class DatasetWriter(ResultSink["Dataset"]):
    """Results into one batch of a dataset, a part file every ``results_per_part``.

    `add` takes one result (a `Result` or the extracted data dict) with the document it
    came from, `add_failure` a document that gave none (a `Failure` or its dict);
    `close` writes what is left and the batch's ``batches/NAME.json``, and returns the
    `Dataset`. Thread-safe: `extract_many` calls `add` from its fetching threads. A
    batch name already in the dataset is refused here, before anything runs
    (``overwrite=True`` replaces it). A client `ResultSink` (mypy checks it):
    ``client.extract_many(docs, ..., to=DatasetWriter("runs/fleet", "2026-11-23"))``.

    ``errors`` defaults to ``"ignore"`` (where `write_dataset` and the frames raise): a
    streamed run converts a part of hundreds of results at once, so a malformed piece of
    one result would otherwise cost the part and stop a run of thousands at its end; it
    is left NA instead, as the frames' ``errors="ignore"`` leaves it.
    """

    def __init__(self, path: str | os.PathLike[str], batch: str | None = None, *,
                 results_per_part: int = DEFAULT_RESULTS_PER_PART, overwrite: bool = False,
                 errors: Errors = "ignore", meta: Mapping[str, Any] | None = None) -> None:
        if results_per_part < 1:
            raise ValueError("results_per_part must be at least 1")
        self.root = Path(path)
        self.batch = batch_name(batch)
        self.results_per_part = results_per_part
        self.errors = errors
        self.meta: dict[str, Any] = dict(meta or {})
        if self.root.exists() and not self.root.is_dir():
            raise DatasetError(f"{self.root} is a file, not a dataset folder")
        existing = [self._folder(t) for t in TABLES if self._folder(t).exists()]
        if (existing or self._meta_path().exists()) and not overwrite:
            raise DatasetError(f"batch {self.batch!r} is already in {self.root}: give "
                               "another batch name, or overwrite=True to replace it")
        for folder in existing:  # overwrite: the old batch goes before anything is written
            for part in folder.iterdir():
                part.unlink()
        self._meta_path().unlink(missing_ok=True)
        self._lock = threading.Lock()
        self._pending: list[tuple[Any, str | None]] = []
        self._parts = 0
        self._rows = dict.fromkeys(TABLES, 0)
        self._documents = 0
        self._failed: list[dict[str, Any]] = []
        self._closed = False

    def _folder(self, table: str) -> Path:
        return partition(self.root, table, self.batch)

    def _meta_path(self) -> Path:
        return record_path(self.root, self.batch)

    def add(self, data: Any, document: str | None = None) -> None:
        """One result, and the name of its document (else its ``extraction_name``)."""
        with self._lock:
            if self._closed:
                raise DatasetError(f"batch {self.batch!r} is closed")
            self._pending.append((getattr(data, "raw", data), document))
            if len(self._pending) >= self.results_per_part:
                self._flush()

    def add_failure(self, failure: Any) -> None:
        """A document that gave no result (`Failure` or a dict with its fields)."""
        record = failure if isinstance(failure, Mapping) else vars(failure)
        with self._lock:
            self._failed.append(dict(record))

    def _flush(self) -> None:
        if not self._pending:
            return
        results = [data for data, _ in self._pending]
        documents = {}
        for data, document in self._pending:
            info = data.get("extraction_info") if isinstance(data, Mapping) else None
            key = info.get("extraction_id") if isinstance(info, Mapping) else None
            if document is not None and isinstance(key, str):
                documents[key] = document
        self._pending = []
        field_rows = field_frame(results, errors=self.errors, documents=documents)
        cell_rows = cell_frame(results, errors=self.errors, documents=documents)
        self._write("fields", field_rows)
        self._write("cells", cell_rows)
        self._write("failures", pd.concat([_failed_messages(field_rows, "field"),
                                           _failed_messages(cell_rows, "cell")],
                                          ignore_index=True))
        self._write("statuses", _ended(results, documents))
        self._documents += len(results)
        self._parts += 1

    def _write(self, table: str, frame: pd.DataFrame) -> None:
        if frame.empty:
            return
        schema = SCHEMAS[table]
        start = self._rows[table]
        self._rows[table] += len(frame)
        arrays = [_arrow(frame[name], field.type) if name in frame.columns
                  else pa.nulls(len(frame), field.type)
                  for name, field in zip(schema.names[:-1], list(schema)[:-1], strict=True)]
        arrays.append(pa.array(np.arange(start, start + len(frame), dtype=np.int64)))
        folder = self._folder(table)
        folder.mkdir(parents=True, exist_ok=True)
        final = part_path(folder, self._parts)
        temporary = final.with_name(f".{final.name}.tmp")
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), temporary,
                       compression="zstd")
        os.replace(temporary, final)

    def close(self) -> Dataset:
        """Write what is left and the batch's record; the dataset (all its batches)."""
        with self._lock:
            if not self._closed:
                self._flush()
                if self._failed:
                    self._write("statuses", _not_ended(self._failed))
                    self._documents += len(self._failed)
                self._closed = True
                record = {"batch": self.batch, "documents": self._documents,
                          "failed": len(self._failed), "rows": self._rows,
                          "written_unix": time.time(), **self.meta}
                path = self._meta_path()
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_name(f".{path.name}.tmp")
                temporary.write_text(json.dumps(record, indent=1, default=str),
                                     encoding="utf-8")
                os.replace(temporary, path)
        return Dataset(self.root)

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _arrow(column: pd.Series, kind: pa.DataType) -> pa.Array:
    """One frame column as the dataset's Arrow type: names as plain text, not
    dictionaries, so every part of every batch has one schema."""
    if isinstance(kind, pa.ListType):  # tuples of messages: pyarrow takes them as lists
        return pa.array(column.to_numpy(dtype=object), type=kind)
    if column.dtype == object:
        return pa.array(column.where(column.notna(), None), type=kind, from_pandas=True)
    return pa.array(column, from_pandas=True).cast(kind)


def _failed_messages(values: pd.DataFrame, kind: str) -> pd.DataFrame:
    """One row per failed validation message of ``values`` (`conditions.failed_messages`),
    with the value's target and place."""
    rows, messages, conditions = failed_messages(
        values["validation_passed"].eq(False).fillna(False).to_numpy(bool),
        values["validation_messages"], values["value"], values.get("condition"))
    found = values.iloc[rows]
    out = pd.DataFrame({name: found[name].to_numpy(dtype=object) if name in found.columns
                        else None for name in FAILURE_COLUMNS if name not in (
                            "kind", "message", "condition")})
    out["value"] = [v if isinstance(v, str) else None for v in out["value"]]
    out.insert(0, "kind", kind)
    out["message"] = messages
    out["condition"] = conditions
    return out[list(FAILURE_COLUMNS)]


def _ended(results: list[Any], documents: Mapping[str, str]) -> pd.DataFrame:
    rows = []
    for data, _, document, key in result_items(results, Complain("ignore")):
        info = data.get("extraction_info") if isinstance(data, Mapping) else None
        info = info if isinstance(info, Mapping) else {}
        extraction_id = info.get("extraction_id") or key
        created = data.get("creation_unix_timestamp") if isinstance(data, Mapping) else None
        rows.append({"document_name": documents.get(str(extraction_id)) or document
                     or info.get("extraction_name"),
                     "extraction_id": extraction_id,
                     "configuration_name": info.get("used_extraction_configuration_name"),
                     "status": "ended",
                     "created": pd.Timestamp(created, unit="s", tz="UTC")
                     if isinstance(created, int | float) else pd.NaT})
    return pd.DataFrame(rows)


def _not_ended(failed: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{"document_name": f.get("document"),
                          "extraction_id": f.get("extraction_id"), "status": "failed",
                          "stage": f.get("stage"), "reason": f.get("reason"),
                          "code": f.get("code"), "http_status": f.get("http_status")}
                         for f in failed])


def write_dataset(data: Any, path: str | os.PathLike[str], batch: str | None = None, *,
          overwrite: bool = False, errors: Errors = "raise",
          results_per_part: int = DEFAULT_RESULTS_PER_PART) -> Dataset:
    """Results (anything `fields` takes: a `Batch`, a saved batch's path, a list ...) as
    one batch of the dataset at ``path``; the `Dataset`.

    A `Batch`'s failures become statuses, and its configuration and timings go into the
    batch's record.
    """
    meta: dict[str, Any] = {}
    for name in ("configuration", "timings", "meta"):
        if isinstance(getattr(data, name, None), Mapping):
            meta[name] = dict(getattr(data, name))
    if isinstance(data, str | os.PathLike) and str(data).endswith(".jsonl"):
        data = read_path(data)
    writer = DatasetWriter(path, batch, overwrite=overwrite, errors=errors,
                           results_per_part=results_per_part, meta=meta)
    for item, _, document, _ in result_items(data, Complain(errors)):
        writer.add(item, document)
    for failure in getattr(data, "failures", None) or ():
        writer.add_failure(failure)
    return writer.close()
