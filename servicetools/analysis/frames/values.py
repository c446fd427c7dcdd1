"""`fields` and `cells`: one row per field value or table cell, in one pass over the values.

Speed matters here (a batch holds millions of values; ``bench/frames.py``), hence the
shape: the pass fills plain lists (`rows.Rows`) and one DataFrame is built at the end
(`rows.value_frame`); the garbage collector rests during the pass
(`rows.collector_paused`); and a long list of values that is complete and typed as the
interface says goes through C (`_well_formed`) instead of the careful Python loop
(`_add_values`). A saved batch file skips the Python objects altogether when it can
(`batch_file`): pyarrow parses it straight into columns.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Mapping
from itertools import compress
from typing import Any

import pandas as pd

from . import batch_file
from .conditions import conditions
from .read import (
    Complain,
    Errors,
    ResultMeta,
    as_number,
    as_text,
    kind_of,
    read_path,
    read_results,
)
from .rows import EMPTY, Rows, collector_paused, value_frame

__all__ = ["cells", "fields", "fields_and_cells"]

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


def fields_and_cells(data: Any, *, errors: Errors = "raise",
                     documents: Mapping[str, str] | None = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`fields` and `cells` of ``data`` together, reading a file once.

    For the path of a saved batch this parses it once for both frames (about half the
    time of the two calls); for anything else it is the two calls.
    """
    Complain(errors)  # a wrong ``errors`` is refused before any reading
    read = _from_batch_file(data, ("field", "table"), documents)
    if read is not None:
        return read[0], read[1]
    if isinstance(data, str | os.PathLike):
        data = read_path(data)
    return (_values(data, "field", errors, documents),
            _values(data, "table", errors, documents))


def _values(data: Any, kind: str, errors: str, documents: Mapping[str, str] | None
            ) -> pd.DataFrame:
    """The one pass behind `fields` (``kind="field"``) and `cells` (``"table"``)."""
    complain = Complain(errors)
    read = _from_batch_file(data, (kind,), documents)
    if read is not None:
        return read[0]
    rows = Rows(kind == "table")
    texts = rows.texts
    with collector_paused():
        for _data, where, meta in read_results(data, errors, documents):
            start = len(texts)
            _add_targets(rows, meta, where, kind, complain)
            if len(texts) > start:
                rows.add_extraction(meta, len(texts) - start)
        return value_frame(rows)


def _from_batch_file(data: Any, kinds: tuple[str, ...], documents: Mapping[str, str] | None
                     ) -> list[pd.DataFrame] | None:
    """The frames of ``kinds`` read from a saved batch file by pyarrow (`batch_file`);
    None when ``data`` is no such file, or when the file read declines it."""
    if not batch_file.is_batch_file(data):
        return None
    found = batch_file.read_values(data, kinds, documents)
    return None if found is None else [value_frame(*found[kind]) for kind in kinds]


def _add_targets(rows: Rows, meta: ResultMeta, where: str, kind: str, complain: Complain
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


def _add_well_formed(rows: Rows, columns: list[tuple[Any, ...]]) -> None:
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


def _add_values(rows: Rows, values: list[Any], tconf: float, where: str, j: int,
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


def _add_odd(rows: Rows, passed: Any, msgs: Any, text: str | None, where: str, j: int,
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
        msgs = EMPTY if type(msgs) is list else None
        rows.odd_conditions.append(None)
    rows.odd_messages.append(msgs)
