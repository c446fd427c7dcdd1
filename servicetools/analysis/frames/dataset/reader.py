"""A dataset read back: `dataset` opens one lazily, its `Dataset` reads a table into
the frame the converters give, or connects DuckDB to the files.

Nothing is read until asked: `dataset` lists the batches. `Dataset.fields` (``cells``,
``failures``, ``statuses``) reads the part files of the selected batches with pyarrow and
gives the frame `frames.fields` would give, same columns and dtypes, then ``batch``;
`Dataset.connect` gives a DuckDB connection with a view per table and the audits'
``work`` view (`audit.workview`, which the audits and analysts query).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ....extras import load as load_module
from ..columns import CELL_COLUMNS, FIELD_COLUMNS, ID_COLUMNS
from ..dtypes import STRING
from .layout import (
    FAILURE_COLUMNS,
    SCHEMAS,
    STATUS_COLUMNS,
    TABLES,
    TEXT,
    DatasetError,
    part_files,
    partition,
    partition_batch,
    record_path,
)

if TYPE_CHECKING:
    import duckdb

__all__ = ["Dataset", "dataset", "table_frame"]


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
        found = sorted({b for t in TABLES if (self.root / t).is_dir()
                        for b in map(partition_batch, (self.root / t).iterdir()) if b}
                       | {p.stem for p in record_path(self.root, "*").parent.glob("*.json")})
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
        return {b: record_path(self.root, b).exists() for b in self.batches}

    def info(self) -> pd.DataFrame:
        """One row per batch: documents, failed documents, rows per table, written."""
        rows = []
        for b in self.batches:
            path = record_path(self.root, b)
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
                pieces.append(t.append_column("batch", pa.array([b] * len(t), type=TEXT)))
        if not pieces:
            empty = pa.schema([schema.field(n) for n in names if n != "batch"])
            return empty.empty_table().append_column("batch", pa.array([], type=TEXT))
        return pa.concat_tables(pieces)

    def _parts(self, table: str, batch: str) -> list[str]:
        return part_files(partition(self.root, table, batch))

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
                    "batch", pa.array([], type=TEXT))
                con.register(f"_{table}_empty", empty)
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
        # The audits' view, theirs to define; imported here, where it is used, as its
        # module imports nothing of the reader back.
        from ...audit.workview import add_work_view

        add_work_view(con, self.batches)
        return con

    def __repr__(self) -> str:
        names = ", ".join(self.batches[:3]) + (", ..." if len(self.batches) > 3 else "")
        return f"<Dataset {self.root}: {len(self.batches)} batches ({names})>"


def _sql_list(files: list[str]) -> str:
    return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"


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
    schema = pa.schema([*SCHEMAS[table], pa.field("batch", TEXT)])
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

    >>> try:
    ...     dataset("no/such/folder")
    ... except DatasetError as error:
    ...     print(error)
    no dataset at no/such/folder: not a folder
    """
    return Dataset(path, [batches] if isinstance(batches, str) else batches)
