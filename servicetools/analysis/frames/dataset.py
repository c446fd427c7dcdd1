"""Batches as a Parquet dataset on disk: written as results arrive, read lazily.

A batch of a million documents does not fit in a notebook's memory as JSON, nor as
frames; as Parquet it is a few hundred megabytes on disk, and DuckDB aggregates it
without loading it (the audits take a `Dataset` where they take frames). The layout,
one folder per table and one per batch inside (Hive partitions, which DuckDB and
pyarrow read as a ``batch`` column)::

    PATH/
      fields/batch=NAME/part-00000.parquet     `frames.fields` rows (+ ``seq``)
      cells/batch=NAME/part-00000.parquet      `frames.cells` rows (+ ``seq``)
      failures/batch=NAME/part-00000.parquet   one row per failed validation message
      statuses/batch=NAME/part-00000.parquet   one row per document: ended, or where it failed
      batches/NAME.json                        the batch's configuration, timings, counts

``seq`` is a row's place in its batch's frame, so a dataset read back gives the rows
(and categories) in the order `frames.fields` gives them. Batches are ordered by name;
the default name is the UTC time the writing started (``20261125T201500Z``), so that
order is the order they were run in.

`DatasetWriter` holds at most ``results_per_part`` results before it writes them out
(`extract_many(..., to=DatasetWriter(...))` feeds it as results arrive, as the client's
`ResultSink`; `write_dataset` feeds it a batch or saved results). A part is written to a
temporary name and renamed, and the batch's ``batches/NAME.json`` is written last: a
dataset read while a batch is being written shows its finished parts, and
`Dataset.complete` says which batches are whole.

>>> import tempfile
>>> from servicetools import frames as sf
>>> value = {"id": "v1", "extracted_field": "INV-1", "validation_passed": True,
...          "validation_messages": [], "confidence": 0.9}
>>> data = {"extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
...         "extracted_targets": [{"id": "x1", "used_extraction_target_id": "t1",
...                                "type": "field", "extracted_values": [value]}]}
>>> with tempfile.TemporaryDirectory() as folder:
...     ds = sf.write_dataset([data], folder, batch="monday")
...     print(ds.batches, len(ds.fields()))
['monday'] 1
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...client.sinks import ResultSink
from ...extras import load as load_module
from .columns import CELL_COLUMNS, FIELD_COLUMNS, ID_COLUMNS
from .conditions import condition
from .dtypes import STRING
from .read import Complain, Errors, read_path, result_items
from .values import cells as cell_frame
from .values import fields as field_frame

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "DEFAULT_RESULTS_PER_PART",
    "Dataset",
    "DatasetError",
    "DatasetWriter",
    "FAILURE_COLUMNS",
    "SCHEMAS",
    "STATUS_COLUMNS",
    "TABLES",
    "TARGET_LABEL_SQL",
    "dataset",
    "table_frame",
    "write_dataset",
]

#: The tables of a dataset, each a folder of batch partitions.
TABLES: tuple[str, ...] = ("fields", "cells", "failures", "statuses")
#: Results converted and written together: about 40 MB of frames for results of 20
#: fields and a 150-cell table, the writer's whole memory.
DEFAULT_RESULTS_PER_PART = 500

_TEXT = pa.string()
_VALUE_TYPES: dict[str, pa.DataType] = {
    "row": pa.int64(), "column": pa.int64(), "value_index": pa.int64(), "found": pa.bool_(),
    "confidence": pa.float64(), "target_confidence": pa.float64(),
    "validation_passed": pa.bool_(), "validation_messages": pa.list_(_TEXT),
    "created": pa.timestamp("ns", tz="UTC")}


def _schema(columns: Sequence[str]) -> pa.Schema:
    return pa.schema([(name, _VALUE_TYPES.get(name, _TEXT)) for name in columns]
                     + [("seq", pa.int64())])


#: Columns of the failed validation messages: the value's target and place, and the
#: condition of one message (a value failing two rule groups has two rows).
FAILURE_COLUMNS: tuple[str, ...] = (
    "kind", "extraction_id", "document_name", "configuration_id", "configuration_name",
    "target_id", "target_name", "header", "column", "value_id", "value", "message",
    "condition")
#: Columns of the statuses: every document of the batch, ended or not.
STATUS_COLUMNS: tuple[str, ...] = (
    "document_name", "extraction_id", "configuration_name", "status", "stage", "reason",
    "code", "http_status", "created")

SCHEMAS: dict[str, pa.Schema] = {
    "fields": _schema(FIELD_COLUMNS),
    "cells": _schema(CELL_COLUMNS),
    "failures": pa.schema([(name, pa.int64() if name == "column" else _TEXT)
                           for name in FAILURE_COLUMNS] + [("seq", pa.int64())]),
    "statuses": pa.schema([(name, pa.int64() if name == "http_status" else
                            pa.timestamp("ns", tz="UTC") if name == "created" else _TEXT)
                           for name in STATUS_COLUMNS] + [("seq", pa.int64())]),
}

_BATCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class DatasetError(ValueError):
    """A path that holds no dataset, a batch name not allowed, a batch written twice."""


def _batch_name(name: str | None) -> str:
    if name is None:
        return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if not isinstance(name, str) or not _BATCH_NAME.match(name):
        raise DatasetError(f"batch name {name!r}: use letters, digits, '.', '_' and '-' "
                           "(up to 128, not starting with a dot)")
    return name


# -- writing ---------------------------------------------------------------------------------
class DatasetWriter(ResultSink["Dataset"]):
    """Results into one batch of a dataset, a part file every ``results_per_part``.

    `add` takes one result (a `Result` or the extracted data dict) with the document it
    came from, `add_failure` a document that gave none (a `Failure` or its dict);
    `close` writes what is left and the batch's ``batches/NAME.json``, and returns the
    `Dataset`. Thread-safe: `extract_many` calls `add` from its fetching threads. A
    batch name already in the dataset is refused here, before anything runs
    (``overwrite=True`` replaces it). A client `ResultSink` (mypy checks it):
    ``client.extract_many(docs, ..., to=DatasetWriter("runs/fleet", "2026-11-23"))``.
    """

    def __init__(self, path: str | os.PathLike[str], batch: str | None = None, *,
                 results_per_part: int = DEFAULT_RESULTS_PER_PART, overwrite: bool = False,
                 errors: Errors = "raise", meta: Mapping[str, Any] | None = None) -> None:
        if results_per_part < 1:
            raise ValueError("results_per_part must be at least 1")
        self.root = Path(path)
        self.batch = _batch_name(batch)
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
        return self.root / table / f"batch={self.batch}"

    def _meta_path(self) -> Path:
        return self.root / "batches" / f"{self.batch}.json"

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
        final = folder / f"part-{self._parts:05d}.parquet"
        temporary = folder / f".part-{self._parts:05d}.parquet.tmp"
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
    """One row per distinct message of each value that failed validation."""
    failed = values.loc[values["validation_passed"].eq(False).fillna(False).to_numpy(bool)]
    rows: list[dict[str, Any]] = []
    for row in failed.itertuples(index=False):
        value = row.value if isinstance(row.value, str) else None
        for message in dict.fromkeys(row.validation_messages or ()):
            if isinstance(message, str):
                rows.append({"kind": kind, "extraction_id": row.extraction_id,
                             "document_name": row.document_name,
                             "configuration_id": row.configuration_id,
                             "configuration_name": row.configuration_name,
                             "target_id": row.target_id, "target_name": row.target_name,
                             "header": getattr(row, "header", None),
                             "column": getattr(row, "column", None),
                             "value_id": row.value_id, "value": value, "message": message,
                             "condition": condition(message, value)})
    return pd.DataFrame(rows, columns=list(FAILURE_COLUMNS))


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


# -- reading ---------------------------------------------------------------------------------
class Dataset:
    """A dataset of batches on disk, opened lazily: nothing is read until asked.

    `fields`, `cells`, `failures` and `statuses` read a table into the frame
    `frames.fields` (etc.) would give, same columns and dtypes (plus ``batch``);
    `select` keeps some batches; `connect` gives a DuckDB connection with one view per
    table (and ``work``: fields and cells stacked, as the audits group them), which is
    what the audits use when given a dataset. Batches are in name order.
    """

    def __init__(self, path: str | os.PathLike[str], batches: Iterable[str] | None = None
                 ) -> None:
        self.root = Path(path)
        if not self.root.is_dir():
            raise DatasetError(f"no dataset at {self.root}: not a folder")
        found = sorted({p.name.split("=", 1)[1] for t in TABLES
                        if (self.root / t).is_dir() for p in (self.root / t).iterdir()
                        if p.name.startswith("batch=")}
                       | {p.stem for p in (self.root / "batches").glob("*.json")})
        if batches is not None:
            wanted = [batches] if isinstance(batches, str) else list(batches)
            unknown = [b for b in wanted if b not in found]
            if unknown:
                raise DatasetError(f"no batch {', '.join(map(repr, unknown))} in "
                                   f"{self.root}; it holds {', '.join(found) or 'none'}")
            found = [b for b in found if b in set(wanted)]
        if not found:
            raise DatasetError(f"no batches in {self.root}: write one with "
                               "frames.write_dataset or extract_many(to=DatasetWriter(...))")
        self.batches: list[str] = found

    def select(self, batches: str | Iterable[str]) -> Dataset:
        """The same dataset with only ``batches`` (a name or several)."""
        return Dataset(self.root, [batches] if isinstance(batches, str) else batches)

    @property
    def complete(self) -> dict[str, bool]:
        """Whether each batch was closed (its record written), by batch name."""
        return {b: (self.root / "batches" / f"{b}.json").exists() for b in self.batches}

    def info(self) -> pd.DataFrame:
        """One row per batch: documents, failed documents, rows per table, written."""
        rows = []
        for b in self.batches:
            path = self.root / "batches" / f"{b}.json"
            record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            counts = record.get("rows", {})
            rows.append({"batch": b, "complete": path.exists(),
                         "documents": record.get("documents"), "failed": record.get("failed"),
                         **{t: counts.get(t) for t in ("fields", "cells")},
                         "configuration": (record.get("configuration") or {}).get("name")})
        return pd.DataFrame(rows).set_index("batch")

    def files(self, table: str) -> list[str]:
        """The part files of ``table`` in the selected batches, in batch order."""
        if table not in TABLES:
            raise ValueError(f"table is one of {', '.join(TABLES)}, not {table!r}")
        return [part for b in self.batches for part in self._parts(table, b)]

    def table(self, table: str, columns: Sequence[str] | None = None) -> pa.Table:
        """``table`` of the selected batches as one Arrow table, with ``batch``."""
        schema = SCHEMAS[table]
        names = list(columns) if columns is not None else schema.names
        pieces = []
        for b in self.batches:
            for part in self._parts(table, b):
                t = pq.read_table(part, columns=[n for n in names if n != "batch"])
                pieces.append(t.append_column("batch", pa.array([b] * len(t), type=_TEXT)))
        if not pieces:
            empty = pa.schema([schema.field(n) for n in names if n != "batch"])
            return empty.empty_table().append_column("batch", pa.array([], type=_TEXT))
        return pa.concat_tables(pieces)

    def _parts(self, table: str, batch: str) -> list[str]:
        folder = self.root / table / f"batch={batch}"
        return sorted(str(p) for p in folder.glob("part-*.parquet")) if folder.is_dir() else []

    def fields(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The field values of the selected batches: `frames.fields`' columns and dtypes,
        then ``batch``; rows in batch order."""
        return _frame(self.table("fields", columns), FIELD_COLUMNS)

    def cells(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The table cells, as `frames.cells` gives them, then ``batch``."""
        return _frame(self.table("cells", columns), CELL_COLUMNS)

    def failures(self) -> pd.DataFrame:
        """One row per failed validation message (`FAILURE_COLUMNS`, then ``batch``)."""
        return _frame(self.table("failures"), FAILURE_COLUMNS)

    def statuses(self) -> pd.DataFrame:
        """One row per document: ``status`` ended or failed, with the failed stage."""
        return _frame(self.table("statuses"), STATUS_COLUMNS)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection (in memory, no extension ever downloaded) with the views
        ``fields``, ``cells``, ``failures``, ``statuses`` and ``work`` over the parts."""
        duck = load_module("duckdb", "datasets", feature="auditing a dataset")
        con = duck.connect(config={"autoinstall_known_extensions": False,
                                   "autoload_known_extensions": False})
        for table in TABLES:
            files = self.files(table)
            if files:
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet("
                            f"{_sql_list(files)}, hive_partitioning = true, "
                            "hive_types = {'batch': VARCHAR})")
            else:
                empty = SCHEMAS[table].empty_table().append_column(
                    "batch", pa.array([], type=_TEXT))
                con.register(f"_{table}_empty", empty)
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
        batches = pd.DataFrame({"batch": self.batches,
                                "batch_rank": np.arange(len(self.batches), dtype=np.int64)})
        con.register("_batches", batches)
        con.execute(_WORK_VIEW)
        return con

    def __repr__(self) -> str:
        names = ", ".join(self.batches[:3]) + (", ..." if len(self.batches) > 3 else "")
        return f"<Dataset {self.root}: {len(self.batches)} batches ({names})>"


def _sql_list(files: list[str]) -> str:
    return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"


#: A value's target label from its parts, as `audit.work.work_frame` labels it: a field
#: by its name (else its id, D9); a cell by "<table> / <header>", or "/ column <n>" where
#: the configuration names no header. The ``work`` view below and the audits' SQL use it.
TARGET_LABEL_SQL = """
CASE WHEN kind = 'field' THEN coalesce(target_name, target_id)
     ELSE coalesce(target_name, target_id, '?') || ' / ' || coalesce(
          header, 'column ' || coalesce(CAST("column" AS VARCHAR), '?')) END"""

#: Fields and cells stacked and labelled (`TARGET_LABEL_SQL`); ``filled`` is the frames'
#: ``found`` (some text, not blanks). ``order`` sorts rows as the in-memory frames hold
#: them: fields before cells, batches in name order, then ``seq``.
_WORK_VIEW = f"""
CREATE VIEW work AS
SELECT kind, {TARGET_LABEL_SQL} AS target, * EXCLUDE (kind) FROM (
    SELECT 'field' AS kind, target_name, NULL::VARCHAR AS header, NULL::BIGINT AS "column",
           extraction_id, extraction_name, document_name, configuration_id,
           configuration_name, target_id, value_id, value, confidence,
           validation_passed AS passed, coalesce(found, false) AS filled, condition, batch,
           (0::BIGINT << 60) + (b.batch_rank << 40) + seq AS "order"
    FROM fields JOIN _batches b USING (batch)
    UNION ALL
    SELECT 'cell', target_name, header, "column", extraction_id, extraction_name,
           document_name, configuration_id, configuration_name, target_id, value_id, value,
           confidence, validation_passed, coalesce(found, false), condition, batch,
           (1::BIGINT << 60) + (b.batch_rank << 40) + seq
    FROM cells JOIN _batches b USING (batch))
"""


def _frame(table: pa.Table, columns: tuple[str, ...]) -> pd.DataFrame:
    """An Arrow table of a dataset as the frame the in-memory converters give."""
    out: dict[str, Any] = {}
    for name in [*columns, "batch"]:
        if name not in table.column_names:
            continue
        column = table.column(name)
        kind = column.type
        if name == "validation_messages":
            out[name] = _messages(column)
        elif name == "validation_passed":
            out[name] = pd.array(column.to_pandas(), dtype="boolean")
        elif name in ("row", "column", "http_status"):
            out[name] = pd.array(column.to_pandas(), dtype="Int64")
        elif pa.types.is_string(kind):
            values = pd.array(column, dtype=STRING)
            if name in ID_COLUMNS or name in ("value", "message", "reason"):
                out[name] = values
            else:  # names: categories in first-seen order, as the converters make them
                codes, uniques = pd.factorize(values)
                out[name] = pd.Categorical.from_codes(
                    codes, categories=pd.Index(uniques, dtype=STRING))
        else:
            out[name] = column.to_pandas().array
    return pd.DataFrame(out, copy=False)


_TABLE_COLUMNS = {"fields": FIELD_COLUMNS, "cells": CELL_COLUMNS, "failures": FAILURE_COLUMNS,
                  "statuses": STATUS_COLUMNS}


def table_frame(rows: pa.Table, table: str) -> pd.DataFrame:
    """Rows of one of the dataset's tables (``rows``: Arrow, all its columns and
    ``batch``, as a DuckDB query over the table's view gives them) as the frame
    `Dataset.fields` (or ``cells`` ...) gives: the audits fetch a few rows this way."""
    schema = pa.schema([*SCHEMAS[table], pa.field("batch", _TEXT)])
    return _frame(rows.select(schema.names).cast(schema), _TABLE_COLUMNS[table])


def _messages(column: pa.ChunkedArray) -> np.ndarray:
    """Lists of messages as the frames' tuples; most are empty, so only the others are
    converted one by one."""
    out = np.empty(len(column), dtype=object)
    out.fill(())
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy()
    some = np.flatnonzero(lengths)
    for at, messages in zip(some, column.take(pa.array(some)).to_pylist(), strict=True):
        out[at] = tuple(messages)
    return out


def dataset(path: str | os.PathLike[str], batches: str | Iterable[str] | None = None
            ) -> Dataset:
    """Open the dataset at ``path`` (all its batches, or ``batches``) without reading it.

    >>> dataset("no/such/folder")
    Traceback (most recent call last):
    ...
    servicetools.analysis.frames.dataset.DatasetError: no dataset at no/such/folder: not a folder
    """
    return Dataset(path, [batches] if isinstance(batches, str) else batches)
