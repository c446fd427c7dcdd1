"""The rows of a value frame (`Rows`) and the frame built from them (`value_frame`).

Both readers of values fill a `Rows`: `values`' pass over parsed results, and
`batch_file`'s read of a saved batch with pyarrow. Columns that are the same for a whole
extraction or target are kept once per extraction/target and repeated at the end;
``value_index`` and ``header`` are computed from positions afterwards; validation results
are kept only for the values that are not a plain pass (``True`` and no message), the
rare case.
"""

from __future__ import annotations

import gc
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .columns import CELL_COLUMNS, FIELD_COLUMNS, ID_COLUMNS, KEYS, TARGET_KEYS
from .dtypes import (
    STRING,
    booleans,
    categorical,
    datetimes,
    integers,
    nonblank,
    ordered_frame,
    sparse_categorical,
    strings,
)
from .read import ResultMeta, UsedConfiguration, as_text

__all__ = ["EMPTY", "Rows", "ValueColumns", "collector_paused", "value_columns", "value_frame"]

#: The messages of a value without any (shared: tuples are immutable).
EMPTY: tuple[str, ...] = ()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the pass, back as it was after.

    The pass allocates millions of tuples and lists, none of them in a cycle; each burst
    of allocations would otherwise set off collections that walk every object of the
    parsed batch (a third of the pass's time on a freshly parsed one).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Rows:
    """The plain lists a value frame is built from.

    One entry per value in ``value_ids``, ``texts``, ``confidences`` (and the cell
    positions); one per extraction in ``extractions`` and per target in ``targets``,
    with the number of values each covers; ``odd_*`` only for the values that are not a
    plain pass, at the row ``odd_at``; ``skips`` (from, to) for the rows whose
    ``value_index`` moves on by one because a malformed value before them was left out.
    """

    __slots__ = ("table", "key", "getter", "extractions", "extraction_counts", "targets",
                 "target_counts", "target_headers", "value_ids", "texts", "confidences",
                 "table_ids", "table_id_counts", "cell_rows", "cell_columns", "odd_at",
                 "odd_passed", "odd_messages", "odd_conditions", "skips")

    def __init__(self, table: bool) -> None:
        self.table = table
        self.key = "extracted_cell" if table else "extracted_field"
        self.getter = operator.itemgetter(self.key, "confidence", "validation_passed",
                                          "validation_messages", "id",
                                          *(("table_id", "row", "column") if table else ()))
        self.extractions: dict[str, list[Any]] = {name: [] for name in KEYS + ("created",)}
        self.extraction_counts: list[int] = []
        self.targets: dict[str, list[Any]] = {name: [] for name in
                                              TARGET_KEYS + ("target_confidence",)}
        self.target_counts: list[int] = []
        self.target_headers: list[dict[int, str]] = []
        self.value_ids: list[Any] = []
        self.texts: list[Any] = []
        self.confidences: list[float] = []
        self.table_ids: list[Any] = []  # in runs: a table's id once, with its length
        self.table_id_counts: list[int] = []
        self.cell_rows: list[int] = []
        self.cell_columns: list[int] = []
        self.odd_at: list[int] = []
        self.odd_passed: list[int] = []  # the nullable-boolean codes of `booleans`
        self.odd_messages: list[Any] = []
        self.odd_conditions: list[Any] = []
        self.skips: list[tuple[int, int]] = []

    def add_extraction(self, meta: ResultMeta, n: int) -> None:
        """The columns the extraction's last ``n`` rows share."""
        extractions = self.extractions
        for name in KEYS:
            extractions[name].append(getattr(meta, name))
        extractions["created"].append(meta.created)
        self.extraction_counts.append(n)

    def add_target(self, target: dict[str, Any], tconf: float, config: UsedConfiguration,
                   n: int) -> None:
        """The columns the target's last ``n`` rows share."""
        target_id = target.get("used_extraction_target_id")
        if type(target_id) is not str:
            target_id = as_text(target_id)
        targets = self.targets
        targets["target_id"].append(target_id)
        targets["target_name"].append(config.name(target_id))
        group, own_id = target.get("used_extraction_group_id"), target.get("id")
        targets["extraction_group"].append(group if type(group) is str and group
                                           else as_text(group))
        targets["extracted_target_id"].append(own_id if type(own_id) is str and own_id
                                              else as_text(own_id))
        targets["target_confidence"].append(tconf)
        self.target_counts.append(n)
        if self.table:
            self.target_headers.append(config.headers(target_id))


# -- the frame -------------------------------------------------------------------------------
class ValueColumns(NamedTuple):
    """The columns with one entry per value, built: ids and texts as `STRING` arrays,
    confidences as float64, and for cells the table ids and the row and column
    positions (-1 where there is none)."""

    value_ids: Any
    texts: Any
    confidences: np.ndarray
    table_ids: Any = None
    cell_rows: np.ndarray | None = None
    cell_columns: np.ndarray | None = None


def value_columns(rows: Rows) -> ValueColumns:
    """The `ValueColumns` of the lists a pass filled."""
    if not rows.table:
        return ValueColumns(strings(rows.value_ids), strings(rows.texts),
                            np.asarray(rows.confidences, dtype=np.float64))
    return ValueColumns(
        strings(rows.value_ids), strings(rows.texts),
        np.asarray(rows.confidences, dtype=np.float64),
        strings(rows.table_ids, np.asarray(rows.table_id_counts, dtype=np.int64)),
        np.asarray(rows.cell_rows, dtype=np.int64),
        np.asarray(rows.cell_columns, dtype=np.int64))


def value_frame(rows: Rows, values: ValueColumns | None = None) -> pd.DataFrame:
    """The value frame of ``rows``: repeated columns expanded, dtypes made.

    ``values`` are the per-value columns when a reader built them itself (`batch_file`);
    else they come from the lists in ``rows``.
    """
    if values is None:
        values = value_columns(rows)
    n = len(values.confidences)
    ex_counts = np.asarray(rows.extraction_counts, dtype=np.int64)
    tg_counts = np.asarray(rows.target_counts, dtype=np.int64)
    ex, tg = rows.extractions, rows.targets
    cols: dict[str, Any] = {
        name: (strings if name in ID_COLUMNS else categorical)(ex[name], ex_counts)
        for name in KEYS}
    for name in TARGET_KEYS:
        cols[name] = (strings if name in ID_COLUMNS else categorical)(tg[name], tg_counts)
    cols["target_confidence"] = np.repeat(np.asarray(tg["target_confidence"], dtype=float),
                                          tg_counts)
    cols["created"] = datetimes(ex["created"], ex_counts)
    cols["value_index"] = _value_index(tg_counts, rows.skips, n)
    cols["value_id"] = values.value_ids
    cols["value"] = values.texts
    # Read: some text, not blanks (the service's "not found" is the empty string).
    cols["found"] = nonblank(cols["value"])
    cols["confidence"] = values.confidences
    _add_validation_columns(cols, rows, n)
    if not rows.table:
        return ordered_frame(cols, FIELD_COLUMNS)
    assert values.cell_rows is not None and values.cell_columns is not None
    cols["table_id"] = values.table_ids
    cols["row"] = integers(values.cell_rows)
    cols["column"] = integers(values.cell_columns)
    cols["header"] = _headers(rows.target_headers, tg_counts, values.cell_columns)
    return ordered_frame(cols, CELL_COLUMNS)


def _add_validation_columns(cols: dict[str, Any], rows: Rows, n: int) -> None:
    """``validation_passed``, ``validation_messages`` and ``condition``: a plain pass
    everywhere but at the odd rows."""
    passed_codes = np.ones(n, dtype=np.int8)
    passed_codes[rows.odd_at] = rows.odd_passed
    cols["validation_passed"] = booleans(passed_codes)
    messages: np.ndarray = np.empty(n, dtype=object)
    messages.fill(EMPTY)
    for at, msgs in zip(rows.odd_at, rows.odd_messages, strict=True):
        messages[at] = msgs  # one by one: a slice assignment would unpack the tuples
    cols["validation_messages"] = messages
    cols["condition"] = sparse_categorical(n, rows.odd_at, rows.odd_conditions)


def _value_index(counts: np.ndarray, skips: list[tuple[int, int]], rows: int) -> np.ndarray:
    """Each row's place in its target's value list, counting left-out malformed values."""
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    index = np.arange(rows, dtype=np.int64) - starts
    if skips:
        bump = np.zeros(rows + 1, dtype=np.int64)
        for first, end in skips:  # the target's later rows move one place on
            bump[first] += 1
            bump[end] -= 1
        index += np.cumsum(bump)[:rows]
    return index


def _headers(per_target: list[dict[int, str]], counts: np.ndarray, columns: np.ndarray
             ) -> pd.Categorical:
    """Header names by each cell's target and column position.

    Targets of one configuration share one header dict (`UsedConfiguration.headers`), so
    each distinct dict becomes one row of a small table of name codes by position, and
    the cells' codes are one lookup in it (about half the time of factorizing the
    1.5 million (target, position) pairs of bench/frames.py: 21 against 38 ms).
    """
    distinct: dict[int, int] = {}  # id of a header dict -> its row in the table
    row_of_target = np.fromiter((distinct.setdefault(id(h), len(distinct))
                                 for h in per_target), dtype=np.int64, count=len(per_target))
    width = int(columns.max()) + 2 if len(columns) else 1  # positions -1 (NA) .. max
    names: dict[str, int] = {}
    table = np.full((max(len(distinct), 1), width), -1, dtype=np.int32)
    for row, header in enumerate({id(h): h for h in per_target}.values()):
        for position, name in header.items():
            if -1 <= position < width - 1:  # -1: the cells without a position
                table[row, position + 1] = names.setdefault(name, len(names))
    found = table[np.repeat(row_of_target, counts), columns + 1]
    # Categories in first-seen order over the cells, as everywhere else.
    seen = pd.unique(found)
    order = seen[seen >= 0]
    recode = np.full(len(names) + 1, -1, dtype=np.int32)  # the last slot keeps -1 (NA)
    recode[order] = np.arange(len(order), dtype=np.int32)
    every_name = list(names)
    return pd.Categorical.from_codes(
        recode[found], categories=pd.Index([every_name[i] for i in order], dtype=STRING))
