"""The layout of a dataset on disk, which its writer and its reader share.

One folder per table and one per batch inside (Hive partitions, which DuckDB and
pyarrow read as a ``batch`` column)::

    PATH/
      fields/batch=NAME/part-00000.parquet     `frames.fields` rows (+ ``seq``)
      cells/batch=NAME/part-00000.parquet      `frames.cells` rows (+ ``seq``)
      failures/batch=NAME/part-00000.parquet   one row per failed validation message
      statuses/batch=NAME/part-00000.parquet   one row per document: ended, or where it failed
      batches/NAME.json                        the batch's configuration, timings, counts

``seq`` is a row's place in its batch's frame, so a dataset read back gives the rows
(and categories) in the order `frames.fields` gives them. Names are stored as plain
text (Parquet dictionary-encodes them on disk), so every part of every batch has one
schema (`SCHEMAS`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from ..columns import CELL_COLUMNS, FIELD_COLUMNS

__all__ = [
    "DatasetError",
    "FAILURE_COLUMNS",
    "SCHEMAS",
    "STATUS_COLUMNS",
    "TABLES",
    "TEXT",
    "batch_name",
    "part_files",
    "part_path",
    "partition",
    "partition_batch",
    "record_path",
]

#: The tables of a dataset, each a folder of batch partitions.
TABLES: tuple[str, ...] = ("fields", "cells", "failures", "statuses")
#: The Arrow type of texts (and of the ``batch`` column a reader adds).
TEXT = pa.string()
_VALUE_TYPES: dict[str, pa.DataType] = {
    "row": pa.int64(), "column": pa.int64(), "value_index": pa.int64(), "found": pa.bool_(),
    "confidence": pa.float64(), "target_confidence": pa.float64(),
    "validation_passed": pa.bool_(), "validation_messages": pa.list_(TEXT),
    "created": pa.timestamp("ns", tz="UTC")}


def _schema(columns: Sequence[str]) -> pa.Schema:
    return pa.schema([(name, _VALUE_TYPES.get(name, TEXT)) for name in columns]
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
    "failures": pa.schema([(name, pa.int64() if name == "column" else TEXT)
                           for name in FAILURE_COLUMNS] + [("seq", pa.int64())]),
    "statuses": pa.schema([(name, pa.int64() if name == "http_status" else
                            pa.timestamp("ns", tz="UTC") if name == "created" else TEXT)
                           for name in STATUS_COLUMNS] + [("seq", pa.int64())]),
}

_BATCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_PARTITION = "batch="


class DatasetError(ValueError):
    """A path that holds no dataset, a batch name not allowed, a batch written twice."""


def batch_name(name: str | None) -> str:
    """``name`` checked, or the UTC time now when None (batches sort in the order they
    were written)."""
    if name is None:
        return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if not isinstance(name, str) or not _BATCH_NAME.match(name):
        raise DatasetError(f"batch name {name!r}: use letters, digits, '.', '_' and '-' "
                           "(up to 128, not starting with a dot)")
    return name


def partition(root: Path, table: str, batch: str) -> Path:
    """The folder of ``batch``'s parts of ``table``."""
    return root / table / f"{_PARTITION}{batch}"


def partition_batch(folder: Path) -> str | None:
    """The batch a partition folder holds, None for another folder."""
    return folder.name[len(_PARTITION):] if folder.name.startswith(_PARTITION) else None


def part_path(folder: Path, number: int) -> Path:
    """The ``number``-th part file of a partition (parts sort in the order written)."""
    return folder / f"part-{number:05d}.parquet"


def part_files(folder: Path) -> list[str]:
    """The part files of a partition folder, in the order written (none if absent)."""
    return sorted(str(p) for p in folder.glob("part-*.parquet")) if folder.is_dir() else []


def record_path(root: Path, batch: str) -> Path:
    """The batch's record, written when it is closed."""
    return root / "batches" / f"{batch}.json"
