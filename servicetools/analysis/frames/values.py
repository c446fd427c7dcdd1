"""`fields` and `cells`: one row per field value or table cell, in one pass over the values.

Speed matters here (a batch holds millions of values; ``bench/frames.py``), hence the
shape: the pass fills plain lists (`_Rows`) and one DataFrame is built at the end;
columns that are the same for a whole extraction or target are kept once per
extraction/target and repeated at the end; ``value_index`` and ``header`` are computed
from positions afterwards; validation results are kept only for the values that are not
a plain pass (``True`` and no message), the rare case; the garbage collector rests during
the pass (`_collector_paused`); and a long list of values that is
complete and typed as the interface says goes through C (`_well_formed`) instead of the
careful Python loop (`_add_values`).
"""

from __future__ import annotations

import gc
import operator
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import compress
from typing import Any

import numpy as np
import pandas as pd

from .columns import CELL_COLUMNS, FIELD_COLUMNS, ID_COLUMNS, KEYS, TARGET_KEYS
from .conditions import conditions
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
from .read import (
    Complain,
    Errors,
    ResultMeta,
    UsedConfiguration,
    as_number,
    as_text,
    kind_of,
    read_results,
)

__all__ = ["cells", "fields"]

_EMPTY: tuple[str, ...] = ()
_TEXT = {str}
#: The types `_well_formed` asks of the columns the getter gives (texts and ids aside):
#: confidence, validation_passed, validation_messages (and row, column).
_VALUE_TYPES = ((1, {float}), (2, {bool}), (3, {list}))
_CELL_TYPES = (*_VALUE_TYPES, (6, {int}), (7, {int}))


def fields(data: Any, *, errors: Errors = "raise",
           documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per field value, columns `FIELD_COLUMNS`.

    ``value_index`` is the value's place in its target (several for multi-valued targets);
    ``found`` is False for a target the service did not find (an empty value);
    ``created`` is when the extraction finished. The least sure values that were read
    are ``f[f.found].nsmallest(8, "confidence")``.
    """
    return _values(data, "field", errors, documents)


def cells(data: Any, *, errors: Errors = "raise",
          documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per table cell, columns `CELL_COLUMNS`.

    ``header`` is the name of the column at that position in the used configuration's
    ``header_schema``; ``row`` and ``column`` are nullable Int64 (NA when not given).
    """
    return _values(data, "table", errors, documents)


def _values(data: Any, kind: str, errors: str, documents: Mapping[str, str] | None
            ) -> pd.DataFrame:
    """The one pass behind `fields` (``kind="field"``) and `cells` (``"table"``)."""
    complain = Complain(errors)
    rows = _Rows(kind == "table")
    texts = rows.texts
    with _collector_paused():
        for _data, where, meta in read_results(data, errors, documents):
            start = len(texts)
            _add_targets(rows, meta, where, kind, complain)
            if len(texts) > start:
                rows.add_extraction(meta, len(texts) - start)
        return _frame(rows)


@contextmanager
def _collector_paused() -> Iterator[None]:
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


class _Rows:
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


def _add_targets(rows: _Rows, meta: ResultMeta, where: str, kind: str, complain: Complain
                 ) -> None:
    """The values of one result's targets of ``kind``, and each target's own columns."""
    texts = rows.texts
    for j, target in enumerate(meta.targets):
        if type(target) is not dict:
            complain(f"{where}.extracted_targets[{j}]", "not an object")
            continue
        target_type = target.get("type")
        if target_type != kind and (target_type is not None
                                    or kind_of(target, meta.config) != kind):
            continue
        values = target.get("extracted_values")
        if type(values) is not list:
            if values is not None:
                complain(f"{where}.extracted_targets[{j}].extracted_values", "not an array")
            continue
        tconf = target.get("confidence")
        if type(tconf) is not float:
            tconf = as_number(tconf)
        n0 = len(texts)
        # Short lists (a field's one value) go quicker through the careful loop.
        columns = _well_formed(values, rows.getter, rows.table) if len(values) > 4 else None
        if columns is not None:
            _add_well_formed(rows, columns)
        else:
            _add_values(rows, values, tconf, where, j, complain)
        if len(texts) > n0:
            rows.add_target(target, tconf, meta.config, len(texts) - n0)


def _well_formed(values: list[Any], getter: Callable[[Any], tuple[Any, ...]], table: bool
                 ) -> list[tuple[Any, ...]] | None:
    """The columns of ``values`` when every value is complete and well typed, else None.

    One C-level pass (``itemgetter`` and ``zip``) replaces a Python loop over the values;
    anything unusual (a missing key, another type, a message that is not text) returns
    None and the careful loop takes over. The texts and ids are checked by joining them
    (a TypeError unless all are text: a fifth of the time of a set of their types), and
    a table's ids by counting the first (a table's cells share it).
    """
    try:
        columns = list(zip(*map(getter, values), strict=True))
        "".join(columns[0])
        "".join(columns[4])
    except (KeyError, TypeError, IndexError):
        return None
    for i, types in _CELL_TYPES if table else _VALUE_TYPES:
        if set(map(type, columns[i])) != types:
            return None
    if table:
        table_ids = columns[5]
        if type(table_ids[0]) is not str or (table_ids.count(table_ids[0]) != len(table_ids)
                                             and set(map(type, table_ids)) != _TEXT):
            return None
        if min(columns[6]) < 0 or min(columns[7]) < 0:
            return None
    if any(columns[3]):
        for msgs in columns[3]:
            if msgs and set(map(type, msgs)) != _TEXT:
                return None
    return columns


def _add_well_formed(rows: _Rows, columns: list[tuple[Any, ...]]) -> None:
    """The values `_well_formed` vouched for: whole columns at once."""
    texts, passes, message_lists = columns[0], columns[2], columns[3]
    n0 = len(rows.texts)
    rows.texts.extend(texts)
    rows.confidences.extend(columns[1])
    rows.value_ids.extend(columns[4])
    if rows.table:
        table_ids = columns[5]
        if table_ids.count(table_ids[0]) == len(table_ids):  # one table: one run
            rows.table_ids.append(table_ids[0])
            rows.table_id_counts.append(len(table_ids))
        else:
            rows.table_ids.extend(table_ids)
            rows.table_id_counts.extend([1] * len(table_ids))
        rows.cell_rows.extend(columns[6])
        rows.cell_columns.extend(columns[7])
    if passes.count(True) == len(passes) and not any(message_lists):
        return
    # The odd few found in C: the failed (passes are booleans here) and those with
    # messages (non-empty lists), instead of a Python test of every value.
    every = range(len(passes))
    odd = set(compress(every, map(operator.not_, passes)))
    odd.update(compress(every, message_lists))
    for at in sorted(odd):
        msgs = tuple(message_lists[at])
        rows.odd_at.append(n0 + at)
        rows.odd_passed.append(1 if passes[at] else 0)
        rows.odd_messages.append(msgs)
        rows.odd_conditions.append(conditions(msgs, texts[at]) if msgs else None)


def _add_values(rows: _Rows, values: list[Any], tconf: float, where: str, j: int,
                complain: Complain) -> None:
    """The values of one target one by one, leaving out (and complaining of) bad ones."""
    key, table, texts = rows.key, rows.table, rows.texts
    skipped: list[int] = []
    for i, v in enumerate(values):
        if type(v) is not dict:
            complain(f"{where}.extracted_targets[{j}].extracted_values[{i}]", "not an object")
            skipped.append(len(texts))
            continue
        get = v.get
        text = get(key)
        if type(text) is not str:
            if text is not None:
                complain(f"{where}.extracted_targets[{j}].extracted_values[{i}].{key}",
                         "not a string")
            text = None
        conf = get("confidence")
        if type(conf) is not float:
            conf = tconf if conf is None else as_number(conf)
        passed = get("validation_passed")
        msgs = get("validation_messages")
        if passed is not True or msgs or type(msgs) is not list:
            _add_odd(rows, passed, msgs, text, where, j, i, complain)
        if table:
            t_id, row, col = get("table_id"), get("row"), get("column")
            rows.table_ids.append(t_id if type(t_id) is str else as_text(t_id))
            rows.table_id_counts.append(1)
            rows.cell_rows.append(row if type(row) is int and row >= 0 else -1)
            rows.cell_columns.append(col if type(col) is int and col >= 0 else -1)
        vid = get("id")
        rows.value_ids.append(vid if type(vid) is str else as_text(vid))
        texts.append(text)
        rows.confidences.append(conf)
    if skipped:
        end = len(texts)
        rows.skips.extend((at, end) for at in skipped)


def _add_odd(rows: _Rows, passed: Any, msgs: Any, text: str | None, where: str, j: int,
             i: int, complain: Complain) -> None:
    """The validation of the next row, which is not a plain pass (or is malformed)."""
    rows.odd_at.append(len(rows.texts))
    rows.odd_passed.append(1 if passed is True else 0 if passed is False else 2)
    if msgs and type(msgs) is list and set(map(type, msgs)) == _TEXT:
        msgs = tuple(msgs)
        rows.odd_conditions.append(conditions(msgs, text))
    else:
        if msgs or (msgs is not None and type(msgs) is not list):
            complain(f"{where}.extracted_targets[{j}].extracted_values[{i}]."
                     "validation_messages", "not an array of strings")
        msgs = _EMPTY if type(msgs) is list else None
        rows.odd_conditions.append(None)
    rows.odd_messages.append(msgs)


# -- the frame -------------------------------------------------------------------------------
def _frame(rows: _Rows) -> pd.DataFrame:
    """The value frame of the filled lists: repeated columns expanded, dtypes made."""
    n = len(rows.texts)
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
    cols["value_id"] = strings(rows.value_ids)
    cols["value"] = strings(rows.texts)
    # Read: some text, not blanks (the service's "not found" is the empty string).
    cols["found"] = nonblank(cols["value"])
    cols["confidence"] = np.asarray(rows.confidences, dtype=np.float64)
    _add_validation_columns(cols, rows, n)
    if not rows.table:
        return ordered_frame(cols, FIELD_COLUMNS)
    positions = np.asarray(rows.cell_columns, dtype=np.int64)
    cols["table_id"] = strings(rows.table_ids,
                               np.asarray(rows.table_id_counts, dtype=np.int64))
    cols["row"] = integers(rows.cell_rows)
    cols["column"] = integers(positions)
    cols["header"] = _headers(rows.target_headers, tg_counts, positions)
    return ordered_frame(cols, CELL_COLUMNS)


def _add_validation_columns(cols: dict[str, Any], rows: _Rows, n: int) -> None:
    """``validation_passed``, ``validation_messages`` and ``condition``: a plain pass
    everywhere but at the odd rows."""
    passed_codes = np.ones(n, dtype=np.int8)
    passed_codes[rows.odd_at] = rows.odd_passed
    cols["validation_passed"] = booleans(passed_codes)
    messages: np.ndarray = np.empty(n, dtype=object)
    messages.fill(_EMPTY)
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
