"""Extracted data -> tidy DataFrames, one row per thing an analyst counts.

Every converter takes one extracted data object (2.3), a three-part schema-output
response (2.11), a list or a ``{extraction_id: result}`` mapping of those, a `Batch`
(anything with a ``results`` mapping; its ``documents`` name the documents), or the
path of a ``.json`` / ``.jsonl`` file holding them.

==============  ===================================================================
`fields`        one row per field value (`FIELD_COLUMNS`)
`cells`         one row per table cell (`CELL_COLUMNS`)
`tables`        ``{table_id: wide DataFrame}``, header names as columns, row as index
`targets`       one row per extracted target (`TARGET_COLUMNS`)
`extractions`   one row per extraction (`EXTRACTION_COLUMNS`)
`statuses`      one row per status object, with stage durations (`STATUS_COLUMNS`)
`vault`         one row per vault document record (`VAULT_COLUMNS`)
`validation`    the schema-output ``validation`` flattened by path (`VALIDATION_COLUMNS`)
`save`, `load`  Parquet or CSV (with a ``.schema.json`` beside it) that round-trip dtypes
==============  ===================================================================

Columns of `fields` and `cells`, in this order (`cells` adds the four table columns):

======================================  ==================================================
extraction_id, extraction_name          the extraction (``extraction_info``)
document_id, document_name              vault id of the document, and its name (below)
configuration_id, configuration_name    the configuration used
target_id, target_name                  the configuration's target and its name
extraction_group, extracted_target_id   group id; the extracted target's id (for updates)
table_id, row, column, header           cells only: table, position (nullable Int64) and
                                        the header name at that column position
value_index, value_id, value            place in the target's list, id, text
confidence, target_confidence           the value's confidence (below), the target's
validation_passed, validation_messages  nullable boolean; tuple of messages
condition                               the messages with the value made a placeholder
created                                 when the extraction finished (UTC)
======================================  ==================================================

Conventions (pandas' ``json_normalize`` vocabulary):

- Column order is fixed and documented by the ``*_COLUMNS`` tuples; empty input gives an
  empty frame with the same columns and dtypes.
- Names and ids that repeat are categoricals, in first-seen order (so targets keep the
  configuration's order); texts use pandas' string dtype; ``validation_passed`` is a
  nullable boolean; confidences are float64; unix timestamps become UTC datetimes.
- A value's ``confidence`` is its own (our service sends one per value and cell), else
  its extracted target's, else NaN: a missing confidence is never replaced by a default.
- ``condition`` is each validation message with its backtick-quoted value replaced by
  ```{value}```, several messages joined by ``"; "``, so failures group by condition.
- A table target without a ``name`` is named by its ``id`` (D9).
- ``document_name`` is the name a `Batch` (or the ``documents`` mapping, keyed by
  extraction id or document id) gives the document, else the ``extraction_name``.
- ``errors="raise"`` raises `FramesError` (a ValueError naming the place) at the first
  malformed part; ``errors="ignore"`` skips malformed parts and leaves missing values NA.
  Missing optional keys are never an error. Unknown keys and target types are ignored.

>>> from servicetools import frames as sf
>>> value = {"id": "v1", "extracted_field": "INV-1", "validation_passed": True,
...          "validation_messages": [], "confidence": 0.9}
>>> data = {"extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
...         "extracted_targets": [{"id": "x1", "used_extraction_target_id": "t1",
...                                "type": "field", "confidence": 0.8,
...                                "extracted_values": [value]}],
...         "used_extraction_configuration": {"extraction_targets": [
...             {"id": "t1", "type": "field", "name": "Invoice Number"}]}}
>>> sf.fields(data)[["document_name", "target_name", "value", "confidence"]]
  document_name     target_name  value  confidence
0         a.pdf  Invoice Number  INV-1         0.9
"""

from __future__ import annotations

import csv
import json
import math
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..wire.protocol import FINAL_STATUSES, STATUS_TYPES

__all__ = [
    "CELL_COLUMNS",
    "EXTRACTION_COLUMNS",
    "FIELD_COLUMNS",
    "FramesError",
    "PLACEHOLDER",
    "STATUS_COLUMNS",
    "STRING",
    "TARGET_COLUMNS",
    "VALIDATION_COLUMNS",
    "VAULT_COLUMNS",
    "cells",
    "condition",
    "extractions",
    "fields",
    "load",
    "save",
    "statuses",
    "tables",
    "targets",
    "validation",
    "vault",
]

Errors = Literal["raise", "ignore"]

#: The placeholder that stands for the quoted value in ``condition``.
PLACEHOLDER = "`{value}`"

#: Columns every value frame starts with: which extraction, document and configuration.
_KEYS = ("extraction_id", "extraction_name", "document_id", "document_name",
         "configuration_id", "configuration_name")
_TARGET_KEYS = ("target_id", "target_name", "extraction_group", "extracted_target_id")
_VALUE_COLUMNS = ("value_index", "value_id", "value", "confidence", "target_confidence",
                  "validation_passed", "validation_messages", "condition", "created")

FIELD_COLUMNS: tuple[str, ...] = _KEYS + _TARGET_KEYS + _VALUE_COLUMNS
CELL_COLUMNS: tuple[str, ...] = (_KEYS + _TARGET_KEYS + ("table_id", "row", "column", "header")
                                 + _VALUE_COLUMNS)
TARGET_COLUMNS: tuple[str, ...] = _KEYS + (
    "target_id", "target_name", "target_type", "extraction_group", "extracted_target_id",
    "is_multiple", "confidence", "n_values", "n_filled", "n_failed", "n_tables", "created")
EXTRACTION_COLUMNS: tuple[str, ...] = _KEYS + (
    "trigger_type", "input_type", "trigger_user_id", "extracted_data_saved", "triggered",
    "created", "duration", "n_targets", "n_values", "n_cells", "n_failed")
STATUS_COLUMNS: tuple[str, ...] = (
    "extraction_id", "status_id", "status_type", "message", "trigger_user_id", "created",
    "is_final", "duration", "elapsed")
VAULT_COLUMNS: tuple[str, ...] = (
    "document_id", "document_name", "document_type", "content_type", "owner_id", "uploaded",
    "num_pages")
VALIDATION_COLUMNS: tuple[str, ...] = (
    "extraction_id", "extraction_name", "document_name", "configuration_name", "path", "key",
    "value", "confidence", "validation_passed", "validation_messages", "condition")

try:  # pandas >= 2.3: the string dtype that pandas 3 infers for text
    STRING: Any = pd.StringDtype(na_value=np.nan)
except TypeError:  # pragma: no cover - older pandas keeps text as object
    STRING = object

_EMPTY: tuple[str, ...] = ()
_QUOTED = re.compile(r"`[^`]*`")


class FramesError(ValueError):
    """Malformed extracted data met with ``errors="raise"``; the message says where."""


# -- small helpers ---------------------------------------------------------------------------
class _Complain:
    """Raise or count a problem, as ``errors`` says."""

    __slots__ = ("errors", "count")

    def __init__(self, errors: str) -> None:
        if errors not in ("raise", "ignore"):
            raise ValueError(f"errors must be 'raise' or 'ignore', not {errors!r}")
        self.errors = errors
        self.count = 0

    def __call__(self, where: str, problem: str) -> None:
        if self.errors == "raise":
            raise FramesError(f"{where}: {problem}")
        self.count += 1


def _text(x: Any) -> str | None:
    """An id or name as text; numbers become text, empty strings and the rest become NA."""
    if type(x) is str:
        return x or None
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return str(x)
    return None


def _number(x: Any) -> float:
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    return math.nan


def _seconds(x: Any) -> float:
    """A unix timestamp, or NaN when it is not a finite number."""
    v = _number(x)
    return v if math.isfinite(v) else math.nan


def condition(message: str, value: str | None = None) -> str:
    """The failed condition of a validation message: its quoted value made a placeholder.

    >>> condition("`31.02.2024` is not a date in format %Y-%m-%d", "31.02.2024")
    '`{value}` is not a date in format %Y-%m-%d'
    >>> condition("`` is empty")
    '`{value}` is empty'
    """
    if value is not None:
        quoted = f"`{value}`"
        at = message.find(quoted)
        if at >= 0:  # the known value first: it may itself hold backticks
            return message[:at] + PLACEHOLDER + message[at + len(quoted):]
    m = _QUOTED.search(message)
    if m is None:
        return message
    return message[:m.start()] + PLACEHOLDER + message[m.end():]


def _conditions(messages: tuple[str, ...], value: str | None) -> str:
    if len(messages) == 1:
        return condition(messages[0], value)
    return "; ".join(condition(m, value) for m in messages)


def _strings(values: list[Any]) -> Any:
    return pd.array(values, dtype=STRING)


def _categorical(values: list[Any] | np.ndarray, counts: np.ndarray | None = None
                 ) -> pd.Categorical:
    """Categories in first-seen order; ``counts`` repeats each entry (per-target lists)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    codes, uniques = pd.factorize(arr)
    if counts is not None:
        codes = np.repeat(codes, counts)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=STRING))


def _booleans(codes: list[int] | np.ndarray) -> pd.arrays.BooleanArray:
    """Nullable booleans from codes 1 (true), 0 (false), 2 (missing)."""
    arr = np.asarray(codes, dtype=np.int8)
    return pd.arrays.BooleanArray(arr == 1, arr == 2)


def _integers(values: list[int] | np.ndarray) -> pd.arrays.IntegerArray:
    """Nullable Int64 from integers where -1 stands for missing."""
    arr = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(arr, arr < 0)


def _objects(values: list[Any]) -> np.ndarray:
    # fromiter keeps each tuple as one element where np.array would nest them.
    return np.fromiter(values, dtype=object, count=len(values))


def _datetimes(seconds: list[float] | np.ndarray) -> pd.DatetimeIndex:
    # Fixed unit: pandas picks another for empty input, and dtypes must not depend on size.
    return pd.to_datetime(np.asarray(seconds, dtype=float), unit="s", utc=True).as_unit("ns")


def _frame(columns: dict[str, Any], order: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({name: columns[name] for name in order}, copy=False)


# -- reading the input -----------------------------------------------------------------------
def _is_result(obj: Mapping[str, Any]) -> bool:
    return ("extracted_targets" in obj or "extraction_info" in obj or "extracted_data" in obj
            or "used_extraction_configuration" in obj)


def _read_path(path: str | os.PathLike[str]) -> Any:
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".jsonl"):
        first = text.split("\n", 1)[0]
        if '"servicetools.batch"' in first:
            from ..client.batch import Batch  # the client side: no service import

            return Batch.load(path)
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


#: One input result: (mapping, where, document name from a Batch, fallback extraction id).
_Item = tuple[Any, str, "str | None", "str | None"]


def _items(obj: Any, complain: _Complain, where: str = "data") -> Iterator[_Item]:
    """Each result in ``obj`` (three-part responses still whole), depth first."""
    if obj is None:
        return
    if isinstance(obj, str | os.PathLike):
        if where != "data":  # only the argument itself may name a file
            complain(where, "not an extracted data object")
            return
        obj = _read_path(obj)
    results = getattr(obj, "results", None)
    if results is not None and not isinstance(obj, Mapping):  # a Batch, by duck typing
        documents = getattr(obj, "documents", None)
        documents = documents if isinstance(documents, Mapping) else {}
        if isinstance(results, Mapping):
            for key, result in results.items():
                yield result, f"{where}.results[{key!r}]", documents.get(key), _text(key)
        else:
            for i, result in enumerate(results):
                yield result, f"{where}.results[{i}]", None, None
        return
    if isinstance(obj, Mapping):
        if _is_result(obj):
            yield obj, where, None, None
            return
        for key, value in obj.items():  # {extraction_id: result}
            if isinstance(value, Mapping) and _is_result(value):
                yield value, f"{where}[{key!r}]", None, _text(key)
            else:
                complain(f"{where}[{key!r}]", "not an extracted data object")
        return
    if isinstance(obj, bytes | bytearray):
        complain(where, "bytes: parse the JSON first (json.loads)")
        return
    if isinstance(obj, Iterable):
        for i, item in enumerate(obj):
            if isinstance(item, Mapping) and _is_result(item):
                yield item, f"{where}[{i}]", None, None
            else:
                yield from _items(item, complain, f"{where}[{i}]")
        return
    complain(where, f"a {type(obj).__name__} is not extracted data")


def _extracted(item: Any, where: str, complain: _Complain) -> dict[str, Any] | None:
    """The extracted data object of an item (unwrapping a three-part response)."""
    if type(item) is not dict:
        if isinstance(item, Mapping):
            item = dict(item)
        else:
            complain(where, "not an extracted data object")
            return None
    inner = item.get("extracted_data")
    if inner is not None:
        if type(inner) is not dict:
            complain(f"{where}.extracted_data", "not an object")
            return None
        return inner
    return item


class _Meta:
    """What one result says about itself; read once per result."""

    __slots__ = ("extraction_id", "extraction_name", "document_id", "document_name",
                 "configuration_id", "configuration_name", "created", "targets", "config",
                 "info")

    def __init__(self, data: dict[str, Any], where: str, document: str | None,
                 key: str | None, documents: Mapping[str, str], complain: _Complain) -> None:
        info = data.get("extraction_info")
        if type(info) is not dict:
            if info is not None:
                complain(f"{where}.extraction_info", "not an object")
            info = {}
        self.info = info
        self.extraction_id = _text(info.get("extraction_id")) or key
        self.extraction_name = _text(info.get("extraction_name"))
        self.document_id = _text(data.get("extracted_document_storage_id"))
        name = document
        if name is None and documents:
            name = documents.get(self.extraction_id or "") or documents.get(
                self.document_id or "")
        self.document_name = _text(name) or self.extraction_name
        config = data.get("used_extraction_configuration")
        if type(config) is not dict:
            if config is not None:
                complain(f"{where}.used_extraction_configuration", "not an object")
            config = {}
        self.configuration_id = (_text(info.get("used_extraction_configuration_id"))
                                 or _text(config.get("id")))
        self.configuration_name = (_text(info.get("used_extraction_configuration_name"))
                                   or _text(config.get("name")))
        self.created = _seconds(data.get("creation_unix_timestamp"))
        targets = data.get("extracted_targets")
        if type(targets) is not list:
            if targets is not None:
                complain(f"{where}.extracted_targets", "not an array")
            targets = []
        self.targets: list[Any] = targets
        self.config = _Config(config.get("extraction_targets"))


class _Config:
    """Target names, types and header names of a used configuration, read on demand."""

    __slots__ = ("targets", "_by_id", "_names")

    def __init__(self, targets: Any) -> None:
        self.targets = targets if type(targets) is list else []
        self._by_id: dict[str, dict[str, Any]] | None = None
        self._names: dict[str, str] = {}

    def _index(self) -> dict[str, dict[str, Any]]:
        self._by_id = {t["id"]: t for t in self.targets
                       if type(t) is dict and type(t.get("id")) is str}
        # D9: a target without a name goes by its id.
        self._names = {i: _text(t.get("name")) or i for i, t in self._by_id.items()}
        return self._by_id

    def target(self, target_id: str | None) -> dict[str, Any]:
        by_id = self._by_id if self._by_id is not None else self._index()
        return by_id.get(target_id, {}) if type(target_id) is str else {}

    def name(self, target_id: str | None) -> str | None:
        if self._by_id is None:
            self._index()
        return self._names.get(target_id, target_id) if type(target_id) is str else None

    def headers(self, target_id: str | None) -> dict[int, str]:
        schema = self.target(target_id).get("header_schema")
        out: dict[int, str] = {}
        if type(schema) is list:
            for i, column in enumerate(schema):
                if type(column) is not dict:
                    continue
                pos = column.get("position", i)
                name = _text(column.get("name")) or _text(column.get("id"))
                if type(pos) is int and name is not None:
                    out[pos] = name
        return out


def _results(data: Any, errors: str, documents: Mapping[str, str] | None
             ) -> Iterator[tuple[dict[str, Any], str, _Meta]]:
    complain = _Complain(errors)
    for item, where, document, key in _items(data, complain):
        extracted = _extracted(item, where, complain)
        if extracted is not None:
            yield extracted, where, _Meta(extracted, where, document, key, documents or {},
                                          complain)


def _target_type(target: dict[str, Any], config: _Config) -> Any:
    kind = target.get("type")
    if kind is None:  # partial result: the configuration still says
        kind = config.target(_text(target.get("used_extraction_target_id"))).get("type")
    return kind


# -- fields and cells ------------------------------------------------------------------------
def _values(data: Any, kind: str, errors: str, documents: Mapping[str, str] | None
            ) -> pd.DataFrame:
    """The one pass behind `fields` and `cells`: plain lists first, one DataFrame at the end.

    Speed matters here (a batch holds millions of values), hence the shape of the loop:
    columns that are the same for a whole extraction or target are kept once per
    extraction/target and repeated at the end; ``value_index`` and ``header`` are
    computed from positions afterwards; and validation results are kept only for the
    values that are not a plain pass (``True`` and no message), the rare case.
    """
    complain = _Complain(errors)
    table = kind == "table"
    key = "extracted_cell" if table else "extracted_field"
    ex: dict[str, list[Any]] = {name: [] for name in _KEYS + ("created",)}
    ex_n: list[int] = []
    tg: dict[str, list[Any]] = {name: [] for name in _TARGET_KEYS + ("target_confidence",)}
    tg_n: list[int] = []
    tg_headers: list[dict[int, str]] = []
    v_id: list[Any] = []
    v_text: list[Any] = []
    v_conf: list[float] = []
    c_table: list[Any] = []
    c_row: list[int] = []
    c_col: list[int] = []
    odd_at: list[int] = []  # rows that are not a plain pass, with what they hold
    odd_pass: list[int] = []
    odd_msgs: list[Any] = []
    odd_cond: list[Any] = []
    skipped_at: list[int] = []  # where a malformed value was left out, this target
    skips: list[tuple[int, int]] = []  # (from, to): rows whose value_index moves on by one
    getter = operator.itemgetter(key, "confidence", "validation_passed",
                                 "validation_messages", "id",
                                 *(("table_id", "row", "column") if table else ()))
    # Bound methods: the loop below runs once per value, millions of times in a batch.
    id_append, text_append, conf_append = v_id.append, v_text.append, v_conf.append
    table_append, row_append, col_append = c_table.append, c_row.append, c_col.append
    for _data, where, meta in _results(data, errors, documents):
        start = len(v_text)
        for j, target in enumerate(meta.targets):
            if type(target) is not dict:
                complain(f"{where}.extracted_targets[{j}]", "not an object")
                continue
            target_type = target.get("type")
            if target_type != kind and (target_type is not None
                                        or _target_type(target, meta.config) != kind):
                continue
            values = target.get("extracted_values")
            if type(values) is not list:
                if values is not None:
                    complain(f"{where}.extracted_targets[{j}].extracted_values", "not an array")
                continue
            target_id = target.get("used_extraction_target_id")
            if type(target_id) is not str:
                target_id = _text(target_id)
            tconf = target.get("confidence")
            if type(tconf) is not float:
                tconf = _number(tconf)
            n0 = len(v_text)
            if skipped_at:
                skipped_at.clear()
            # Short lists (a field's one value) go quicker through the plain loop.
            fast = _well_formed(values, getter, table) if len(values) > 4 else None
            if fast is not None:
                # The usual case, in C: every value complete and typed as the interface says.
                v_text.extend(fast[0])
                v_conf.extend(fast[1])
                v_id.extend(fast[4])
                if table:
                    c_table.extend(fast[5])
                    c_row.extend(fast[6])
                    c_col.extend(fast[7])
                passes, message_lists = fast[2], fast[3]
                if passes.count(True) != len(passes) or any(message_lists):
                    for at, (passed, msgs, text) in enumerate(zip(passes, message_lists,
                                                                  fast[0], strict=True)):
                        if passed is not True or msgs:
                            odd_at.append(n0 + at)
                            odd_pass.append(1 if passed is True else 0)
                            msgs = tuple(msgs)
                            odd_msgs.append(msgs)
                            odd_cond.append(_conditions(msgs, text) if msgs else None)
                values = _NOTHING
            for i, v in enumerate(values):
                if type(v) is not dict:
                    complain(f"{where}.extracted_targets[{j}].extracted_values[{i}]",
                             "not an object")
                    skipped_at.append(len(v_text))
                    continue
                get = v.get
                text = get(key)
                if type(text) is not str:
                    if text is not None:
                        complain(f"{where}.extracted_targets[{j}].extracted_values[{i}]."
                                 f"{key}", "not a string")
                    text = None
                conf = get("confidence")
                if type(conf) is not float:
                    conf = tconf if conf is None else _number(conf)
                passed = get("validation_passed")
                msgs = get("validation_messages")
                if passed is not True or msgs or type(msgs) is not list:
                    odd_at.append(len(v_text))
                    odd_pass.append(1 if passed is True else 0 if passed is False else 2)
                    if msgs and type(msgs) is list and all(type(m) is str for m in msgs):
                        msgs = tuple(msgs)
                        odd_cond.append(_conditions(msgs, text))
                    else:
                        if msgs or (msgs is not None and type(msgs) is not list):
                            complain(f"{where}.extracted_targets[{j}].extracted_values[{i}]."
                                     "validation_messages", "not an array of strings")
                        msgs = _EMPTY if type(msgs) is list else None
                        odd_cond.append(None)
                    odd_msgs.append(msgs)
                if table:
                    t_id = get("table_id")
                    row = get("row")
                    col = get("column")
                    if type(row) is not int or row < 0:
                        row = -1
                    if type(col) is not int or col < 0:
                        col = -1
                    table_append(t_id if type(t_id) is str else _text(t_id))
                    row_append(row)
                    col_append(col)
                vid = get("id")
                id_append(vid if type(vid) is str else _text(vid))
                text_append(text)
                conf_append(conf)
            n = len(v_text) - n0
            if skipped_at:
                skips.extend((at, n0 + n) for at in skipped_at)
            if n:
                tg["target_id"].append(target_id)
                tg["target_name"].append(meta.config.name(target_id))
                group, own_id = target.get("used_extraction_group_id"), target.get("id")
                tg["extraction_group"].append(group if type(group) is str and group
                                              else _text(group))
                tg["extracted_target_id"].append(own_id if type(own_id) is str and own_id
                                                 else _text(own_id))
                tg["target_confidence"].append(tconf)
                tg_n.append(n)
                if table:
                    tg_headers.append(meta.config.headers(target_id))
        n = len(v_text) - start
        if n:
            for name in _KEYS:
                ex[name].append(getattr(meta, name))
            ex["created"].append(meta.created)
            ex_n.append(n)
    rows = len(v_text)
    ex_counts = np.asarray(ex_n, dtype=np.int64)
    tg_counts = np.asarray(tg_n, dtype=np.int64)
    cols: dict[str, Any] = {name: _categorical(ex[name], ex_counts) for name in _KEYS}
    for name in _TARGET_KEYS:
        cols[name] = _categorical(tg[name], tg_counts)
    cols["target_confidence"] = np.repeat(np.asarray(tg["target_confidence"], dtype=float),
                                          tg_counts)
    cols["created"] = _datetimes(np.repeat(np.asarray(ex["created"], dtype=float), ex_counts))
    cols["value_index"] = _value_index(tg_counts, skips, rows)
    cols["value_id"] = _strings(v_id)
    cols["value"] = _strings(v_text)
    cols["confidence"] = np.asarray(v_conf, dtype=np.float64)
    passed_codes = np.ones(rows, dtype=np.int8)
    passed_codes[odd_at] = odd_pass
    cols["validation_passed"] = _booleans(passed_codes)
    messages: np.ndarray = np.empty(rows, dtype=object)
    messages.fill(_EMPTY)
    for at, msgs in zip(odd_at, odd_msgs, strict=True):
        messages[at] = msgs  # one by one: a slice assignment would unpack the tuples
    cols["validation_messages"] = messages
    cols["condition"] = _sparse_categorical(rows, odd_at, odd_cond)
    if table:
        cols["table_id"] = _categorical(c_table)
        cols["row"] = _integers(c_row)
        cols["column"] = _integers(c_col)
        cols["header"] = _headers(tg_headers, tg_counts, np.asarray(c_col, dtype=np.int64))
        return _frame(cols, CELL_COLUMNS)
    return _frame(cols, FIELD_COLUMNS)


_NOTHING: list[Any] = []
_TYPES_OF_VALUES = ({str}, {float}, {bool}, {list}, {str})
_TYPES_OF_CELLS = (*_TYPES_OF_VALUES, {str}, {int}, {int})


def _well_formed(values: list[Any], getter: Callable[[Any], tuple[Any, ...]], table: bool
                 ) -> list[tuple[Any, ...]] | None:
    """The columns of ``values`` when every value is complete and well typed, else None.

    One C-level pass (``itemgetter`` and ``zip``) replaces a Python loop over the values;
    anything unusual (a missing key, another type, a message that is not text) returns
    None and the careful loop takes over.
    """
    try:
        columns = list(zip(*map(getter, values), strict=True))
    except (KeyError, TypeError, IndexError):
        return None
    if not columns:
        return None
    for column, types in zip(columns, _TYPES_OF_CELLS if table else _TYPES_OF_VALUES,
                             strict=True):
        if set(map(type, column)) != types:
            return None
    if table and (min(columns[6]) < 0 or min(columns[7]) < 0):
        return None
    if any(columns[3]):
        for msgs in columns[3]:
            if msgs and set(map(type, msgs)) != {str}:
                return None
    return columns


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


def _sparse_categorical(rows: int, at: list[int], values: list[Any]) -> pd.Categorical:
    """A categorical that is NA except at ``at``."""
    codes = np.full(rows, -1, dtype=np.int64)
    found = _categorical(values)
    codes[at] = found.codes
    return pd.Categorical.from_codes(codes, categories=found.categories)


def _headers(per_target: list[dict[int, str]], counts: np.ndarray, columns: np.ndarray
             ) -> pd.Categorical:
    """Header names by each cell's target and column position."""
    target = np.repeat(np.arange(len(per_target), dtype=np.int64), counts)
    width = int(columns.max()) + 2 if len(columns) else 1
    pairs, uniques = pd.factorize(target * width + columns + 1)
    names = [per_target[int(u) // width].get(int(u) % width - 1) for u in uniques]
    found = _categorical(names)
    return pd.Categorical.from_codes(np.asarray(found.codes)[pairs],
                                     categories=found.categories)


def fields(data: Any, *, errors: Errors = "raise",
           documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per field value, columns `FIELD_COLUMNS`.

    ``value_index`` is the value's place in its target (several for multi-valued targets);
    ``created`` is when the extraction finished.
    """
    return _values(data, "field", errors, documents)


def cells(data: Any, *, errors: Errors = "raise",
          documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per table cell, columns `CELL_COLUMNS`.

    ``header`` is the name of the column at that position in the used configuration's
    ``header_schema``; ``row`` and ``column`` are nullable Int64 (NA when not given).
    """
    return _values(data, "table", errors, documents)


# -- tables ----------------------------------------------------------------------------------
def tables(data: Any, *, errors: Errors = "raise", columns: Literal["header", "position"]
           = "header", documents: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """``{table_id: wide DataFrame}``: cells pivoted by row and column, cells kept verbatim.

    Columns are header names in position order (``columns="position"`` keeps the
    integer positions); a position the header schema lacks is named ``"column <n>"``.
    The index is ``row``; missing cells are NA. Each frame's ``attrs`` hold
    ``extraction_id``, ``document_name``, ``target_id``, ``target_name`` and
    ``table_index`` (the table's place within its target). ``data`` may also be a
    `cells` frame.
    """
    frame = data if isinstance(data, pd.DataFrame) else cells(data, errors=errors,
                                                                documents=documents)
    out: dict[str, pd.DataFrame] = {}
    if frame.empty:
        return out
    keep = frame["table_id"].notna() & frame["row"].notna() & frame["column"].notna()
    part = frame.loc[keep]
    table_ids = part["table_id"].to_numpy(dtype=object)
    rows = part["row"].to_numpy(dtype=np.int64, na_value=-1)
    cols = part["column"].to_numpy(dtype=np.int64, na_value=-1)
    heads = part["header"].to_numpy(dtype=object)
    texts = part["value"].to_numpy(dtype=object)
    meta_cols = ["extraction_id", "document_name", "target_id", "target_name"]
    metas = {c: part[c].to_numpy(dtype=object) for c in meta_cols}
    grouped: dict[str, dict[str, Any]] = {}
    for i, table_id in enumerate(table_ids):
        entry = grouped.get(table_id)
        if entry is None:
            attrs = {c: (None if pd.isna(metas[c][i]) else str(metas[c][i]))
                     for c in meta_cols}
            entry = grouped[table_id] = {"attrs": attrs, "cells": {}, "heads": {}}
        entry["cells"][(rows[i], cols[i])] = texts[i]
        if cols[i] not in entry["heads"] and not pd.isna(heads[i]):
            entry["heads"][cols[i]] = heads[i]
    index_in_target: dict[tuple[Any, Any], int] = {}
    for table_id, entry in grouped.items():
        attrs = entry["attrs"]
        place = (attrs["extraction_id"], attrs["target_id"])
        attrs["table_index"] = index_in_target.get(place, 0)
        index_in_target[place] = attrs["table_index"] + 1
        table_cells: dict[tuple[int, int], Any] = entry["cells"]
        n_rows = max(r for r, _ in table_cells) + 1
        positions = sorted({c for _, c in table_cells})
        labels: list[Any] = positions if columns == "position" else _labels(
            positions, entry["heads"])
        body = {label: _strings([table_cells.get((r, c)) for r in range(n_rows)])
                for label, c in zip(labels, positions, strict=True)}
        wide = pd.DataFrame(body, index=pd.RangeIndex(n_rows, name="row"))
        wide.columns.name = "header" if columns == "header" else "column"
        wide.attrs.update(attrs)
        out[table_id] = wide
    return out


def _labels(positions: list[int], heads: dict[int, str]) -> list[str]:
    labels = [heads.get(p) or f"column {p}" for p in positions]
    if len(set(labels)) < len(labels):  # two columns share a name: tell them apart
        labels = [f"{label} ({p})" for label, p in zip(labels, positions, strict=True)]
    return labels


# -- targets and extractions -----------------------------------------------------------------
def targets(data: Any, *, errors: Errors = "raise",
            documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per extracted target, columns `TARGET_COLUMNS` (also targets with no value).

    ``n_values`` counts values or cells, ``n_filled`` those not blank, ``n_failed`` those
    that failed validation, ``n_tables`` the distinct table ids (0 for fields).
    """
    complain = _Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in TARGET_COLUMNS}
    multiple: list[int] = []
    for _data, where, meta in _results(data, errors, documents):
        for j, target in enumerate(meta.targets):
            if type(target) is not dict:
                complain(f"{where}.extracted_targets[{j}]", "not an object")
                continue
            target_id = _text(target.get("used_extraction_target_id"))
            values = target.get("extracted_values")
            if type(values) is not list:
                if values is not None:
                    complain(f"{where}.extracted_targets[{j}].extracted_values", "not an array")
                values = []
            kind = _target_type(target, meta.config)
            key = "extracted_cell" if kind == "table" else "extracted_field"
            good = [v for v in values if type(v) is dict]
            for name in _KEYS:
                rows[name].append(getattr(meta, name))
            rows["target_id"].append(target_id)
            rows["target_name"].append(meta.config.name(target_id))
            rows["target_type"].append(_text(kind))
            rows["extraction_group"].append(_text(target.get("used_extraction_group_id")))
            rows["extracted_target_id"].append(_text(target.get("id")))
            flag = meta.config.target(target_id).get("is_multiple")
            multiple.append(1 if flag is True else 0 if flag is False else 2)
            rows["confidence"].append(_number(target.get("confidence")))
            rows["n_values"].append(len(good))
            rows["n_filled"].append(sum(1 for v in good if type(v.get(key)) is str
                                        and v[key].strip()))
            rows["n_failed"].append(sum(1 for v in good if v.get("validation_passed") is False))
            rows["n_tables"].append(len({_text(v.get("table_id")) for v in good})
                                    if kind == "table" else 0)
            rows["created"].append(meta.created)
    cols: dict[str, Any] = {name: _categorical(rows[name]) for name in
                            _KEYS + ("target_id", "target_name", "target_type",
                                     "extraction_group", "extracted_target_id")}
    cols["is_multiple"] = _booleans(multiple)
    cols["confidence"] = np.asarray(rows["confidence"], dtype=np.float64)
    for name in ("n_values", "n_filled", "n_failed", "n_tables"):
        cols[name] = np.asarray(rows[name], dtype=np.int64)
    cols["created"] = _datetimes(rows["created"])
    return _frame(cols, TARGET_COLUMNS)


def extractions(data: Any, *, errors: Errors = "raise",
                documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per extraction, columns `EXTRACTION_COLUMNS`.

    ``duration`` is ``created - triggered`` (a timedelta); ``n_values`` counts field
    values, ``n_cells`` table cells, ``n_failed`` both that failed validation.
    """
    complain = _Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in EXTRACTION_COLUMNS}
    saved: list[int] = []
    for _data, where, meta in _results(data, errors, documents):
        info = meta.info
        for name in _KEYS:
            rows[name].append(getattr(meta, name))
        for name in ("trigger_type", "input_type", "trigger_user_id"):
            rows[name].append(_text(info.get(name)))
        flag = info.get("extracted_data_saved")
        saved.append(1 if flag is True else 0 if flag is False else 2)
        rows["triggered"].append(_seconds(info.get("trigger_unix_timestamp")))
        rows["created"].append(meta.created)
        n_targets = n_values = n_cells = n_failed = 0
        for j, target in enumerate(meta.targets):
            if type(target) is not dict:
                complain(f"{where}.extracted_targets[{j}]", "not an object")
                continue
            n_targets += 1
            values = target.get("extracted_values")
            if type(values) is not list:
                continue
            good = [v for v in values if type(v) is dict]
            if _target_type(target, meta.config) == "table":
                n_cells += len(good)
            else:
                n_values += len(good)
            n_failed += sum(1 for v in good if v.get("validation_passed") is False)
        rows["n_targets"].append(n_targets)
        rows["n_values"].append(n_values)
        rows["n_cells"].append(n_cells)
        rows["n_failed"].append(n_failed)
    cols: dict[str, Any] = {name: _categorical(rows[name]) for name in
                            _KEYS + ("trigger_type", "input_type", "trigger_user_id")}
    cols["extracted_data_saved"] = _booleans(saved)
    cols["triggered"] = _datetimes(rows["triggered"])
    cols["created"] = _datetimes(rows["created"])
    cols["duration"] = pd.TimedeltaIndex(cols["created"] - cols["triggered"])
    for name in ("n_targets", "n_values", "n_cells", "n_failed"):
        cols[name] = np.asarray(rows[name], dtype=np.int64)
    return _frame(cols, EXTRACTION_COLUMNS)


# -- statuses --------------------------------------------------------------------------------
def _status_objects(data: Any, complain: _Complain, where: str = "data"
                    ) -> Iterator[tuple[Any, str, str | None]]:
    """(status object, where, extraction id from a key) for every status in ``data``."""
    if data is None:
        return
    if isinstance(data, str | os.PathLike):
        if where != "data":  # only the argument itself may name a file
            complain(where, "not a status object")
            return
        data = _read_path(data)
    failures = getattr(data, "failures", None)
    if failures is not None and not isinstance(data, Mapping):  # a Batch: its pipeline errors
        for i, failure in enumerate(failures):
            details = getattr(failure, "details", None)
            status = details.get("status") if isinstance(details, Mapping) else None
            if isinstance(status, Mapping):
                yield status, f"{where}.failures[{i}]", getattr(failure, "extraction_id", None)
        return
    if isinstance(data, Mapping):
        if "status_map" in data:
            yield from _status_objects(data["status_map"], complain, f"{where}.status_map")
        elif "status_type" in data:
            yield data, where, None
        else:
            for key, value in data.items():
                if isinstance(value, Mapping):
                    yield value, f"{where}[{key!r}]", _text(key)
                elif isinstance(value, list):  # a history: every status the id went through
                    for i, status in enumerate(value):
                        yield status, f"{where}[{key!r}][{i}]", _text(key)
                else:
                    complain(f"{where}[{key!r}]", "not a status object")
        return
    if isinstance(data, Iterable) and not isinstance(data, bytes | bytearray):
        for i, status in enumerate(data):
            yield status, f"{where}[{i}]", None
        return
    complain(where, f"a {type(data).__name__} is not a status object")


def statuses(data: Any, *, errors: Errors = "raise") -> pd.DataFrame:
    """One row per status object, columns `STATUS_COLUMNS`, by extraction then time.

    ``data`` is a status list response (4.5), its ``status_map``, a mapping of
    extraction id to a list of statuses (a history), a list of status objects, or a
    `Batch` (the statuses of its pipeline errors). ``status_type`` is an ordered
    categorical in pipeline order (D5). When an extraction has several statuses,
    ``duration`` is the time spent in each stage (until the next status) and
    ``elapsed`` the time since its first status; otherwise they are NaT.
    """
    complain = _Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in
                                  ("extraction_id", "status_id", "status_type", "message",
                                   "trigger_user_id", "created")}
    for status, where, key in _status_objects(data, complain):
        if not isinstance(status, Mapping):
            complain(where, "not a status object")
            continue
        rows["extraction_id"].append(_text(status.get("extraction_id")) or key)
        rows["status_id"].append(_text(status.get("id")))
        rows["status_type"].append(_text(status.get("status_type")))
        message = status.get("message")
        rows["message"].append(message if type(message) is str else None)
        rows["trigger_user_id"].append(_text(status.get("trigger_user_id")))
        rows["created"].append(_seconds(status.get("creation_unix_timestamp")))
    known = STATUS_TYPES
    seen = [s for s in dict.fromkeys(rows["status_type"]) if s is not None and s not in known]
    kinds = pd.Categorical(rows["status_type"], categories=list(known) + seen, ordered=True)
    frame = pd.DataFrame({
        "extraction_id": _categorical(rows["extraction_id"]),
        "status_id": _strings(rows["status_id"]),
        "status_type": kinds,
        "message": _strings(rows["message"]),
        "trigger_user_id": _categorical(rows["trigger_user_id"]),
        "created": _datetimes(rows["created"]),
    })
    frame["is_final"] = pd.array(frame["status_type"].isin(sorted(FINAL_STATUSES)).to_numpy(),
                                 dtype="boolean")
    frame.loc[frame["status_type"].isna(), "is_final"] = pd.NA
    if len(frame):
        # Time order within an extraction; the stage order breaks ties of equal times.
        frame = frame.sort_values(["extraction_id", "created", "status_type"],
                                  kind="stable").reset_index(drop=True)
    by = frame.groupby("extraction_id", observed=True, sort=False)["created"]
    frame["duration"] = pd.TimedeltaIndex(by.shift(-1) - frame["created"])
    first = by.transform("min")
    count = by.transform("size")
    elapsed = frame["created"] - first
    frame["elapsed"] = pd.TimedeltaIndex(elapsed.where(count > 1))
    return frame[list(STATUS_COLUMNS)]


# -- vault -----------------------------------------------------------------------------------
def vault(data: Any, *, errors: Errors = "raise") -> pd.DataFrame:
    """One row per vault document record (2.9), columns `VAULT_COLUMNS`.

    ``data`` is a vault list response (4.8), a list of records, or one record.
    ``num_pages`` is NA for list entries, which do not carry it.
    """
    complain = _Complain(errors)
    if isinstance(data, str | os.PathLike):
        data = _read_path(data)
    if isinstance(data, Mapping):
        records = data.get("documents") if "documents" in data else [data]
    else:
        records = data if data is not None else []
    if not isinstance(records, Iterable):
        complain("data.documents", "not an array")
        records = []
    rows: dict[str, list[Any]] = {name: [] for name in VAULT_COLUMNS}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            complain(f"data.documents[{i}]", "not a vault document record")
            continue
        for name in ("document_id", "document_name", "document_type", "content_type",
                     "owner_id"):
            rows[name].append(_text(record.get(name)))
        rows["uploaded"].append(_seconds(record.get("upload_unix_timestamp")))
        pages = record.get("num_pages")
        rows["num_pages"].append(pages if type(pages) is int and pages >= 0 else -1)
    return pd.DataFrame({
        "document_id": _strings(rows["document_id"]),
        "document_name": _strings(rows["document_name"]),
        "document_type": _categorical(rows["document_type"]),
        "content_type": _categorical(rows["content_type"]),
        "owner_id": _categorical(rows["owner_id"]),
        "uploaded": _datetimes(rows["uploaded"]),
        "num_pages": _integers(rows["num_pages"]),
    })


# -- schema-output validation ----------------------------------------------------------------
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _step(key: str) -> str:
    # JMESPath spelling (D11): names with spaces or symbols are quoted identifiers.
    return key if _IDENTIFIER.fullmatch(key) else json.dumps(key)


def _walk(node: Any, output: Any, path: str, key: str, out: list[tuple[Any, ...]],
          complain: _Complain) -> None:
    if isinstance(node, Mapping):
        if "validation_passed" in node:
            out.append((path, key, output, node))
            return
        for name, child in node.items():
            step = _step(str(name))
            sub = output.get(name) if isinstance(output, Mapping) else None
            joined = f"{path}.{step}" if path else step
            _walk(child, sub, joined, f"{key}.{step}" if key else step, out, complain)
    elif isinstance(node, list):
        for i, child in enumerate(node):
            sub = output[i] if isinstance(output, list) and i < len(output) else None
            _walk(child, sub, f"{path}[{i}]", f"{key}[*]", out, complain)
    else:
        complain(path or "validation", "neither a leaf, an object nor an array")


def validation(data: Any, *, errors: Errors = "raise",
               documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The ``validation`` of three-part responses flattened, columns `VALIDATION_COLUMNS`.

    One row per leaf: ``path`` is where it sits (``line_items[0][2]``,
    ``items[1]."Unit Price"``), ``key`` the same path with every index made ``[*]``
    (to group rows of a table), ``value`` the string at that path of ``schema_output``.
    Unmatched selections render as ``[]`` (D11) and give no row.
    """
    complain = _Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in VALIDATION_COLUMNS}
    passed: list[int] = []
    for item, where, document, key in _items(data, complain):
        if not isinstance(item, Mapping):
            complain(where, "not a schema-output response")
            continue
        tree = item.get("validation")
        if tree is None:
            continue  # extracted data without schema output: nothing to flatten
        inner = item.get("extracted_data")
        meta = _Meta(inner if type(inner) is dict else {}, where, document, key,
                     documents or {}, complain)
        leaves: list[tuple[Any, ...]] = []
        _walk(tree, item.get("schema_output"), "", "", leaves, complain)
        for path, generic, output, leaf in leaves:
            rows["extraction_id"].append(meta.extraction_id)
            rows["extraction_name"].append(meta.extraction_name)
            rows["document_name"].append(meta.document_name)
            rows["configuration_name"].append(meta.configuration_name)
            rows["path"].append(path)
            rows["key"].append(generic)
            value = output if type(output) is str else None
            rows["value"].append(value)
            rows["confidence"].append(_number(leaf.get("confidence")))
            flag = leaf.get("validation_passed")
            passed.append(1 if flag is True else 0 if flag is False else 2)
            msgs = leaf.get("validation_messages")
            if type(msgs) is list and all(type(m) is str for m in msgs):
                msgs = tuple(msgs)
            else:
                if msgs is not None:
                    complain(f"{where}.validation.{path}.validation_messages",
                             "not an array of strings")
                msgs = None
            rows["validation_messages"].append(msgs)
            rows["condition"].append(_conditions(msgs, value) if msgs else None)
    cols: dict[str, Any] = {name: _categorical(rows[name]) for name in
                            ("extraction_id", "extraction_name", "document_name",
                             "configuration_name", "key", "condition")}
    cols["path"] = _strings(rows["path"])
    cols["value"] = _strings(rows["value"])
    cols["confidence"] = np.asarray(rows["confidence"], dtype=np.float64)
    cols["validation_passed"] = _booleans(passed)
    cols["validation_messages"] = _objects(rows["validation_messages"])
    return _frame(cols, VALIDATION_COLUMNS)


# -- export ----------------------------------------------------------------------------------
_SCHEMA_SUFFIX = ".schema.json"
_NA = "\\N"  # NULL in CSV as PostgreSQL and MySQL write it: "" stays an empty string


def _is_sequence_column(series: pd.Series) -> bool:
    if series.dtype != object:
        return False
    first = series.dropna()
    return bool(len(first)) and isinstance(first.iloc[0], tuple | list | np.ndarray)


def _as_tuples(series: pd.Series) -> pd.Series:
    out = np.empty(len(series), dtype=object)
    out[:] = [tuple(x) if isinstance(x, tuple | list | np.ndarray) else None
              for x in series]
    return pd.Series(out, index=series.index, name=series.name)


def save(frame: pd.DataFrame | Mapping[str, pd.DataFrame], path: str | os.PathLike[str]
         ) -> Path:
    """Write a frame as Parquet (``.parquet``) or CSV (``.csv``), dtypes kept.

    CSV gets a ``<path>.schema.json`` beside it with the dtypes and categories, and
    writes NA as ``\\N`` so an empty string stays an empty string. A mapping of frames
    (`tables`) goes into the folder ``path``, one file per frame (Parquet unless
    ``path`` ends in ``.csv``) plus ``manifest.json`` with their names and ``attrs``.
    """
    target = Path(path)
    if isinstance(frame, Mapping):
        fmt = ".csv" if target.suffix == ".csv" else ".parquet"
        target.mkdir(parents=True, exist_ok=True)
        manifest = []
        for i, (name, part) in enumerate(frame.items()):
            file = f"{i:05d}{fmt}"
            save(part, target / file)
            manifest.append({"name": name, "file": file, "attrs": _jsonable(part.attrs)})
        (target / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".parquet":
        frame.to_parquet(target)
        return target
    if target.suffix != ".csv":
        raise ValueError(f"save writes .parquet or .csv, not {target.suffix or 'no suffix'!r}")
    out = frame.copy()
    schema: dict[str, Any] = {"index": [], "columns": {}, "columns_name": frame.columns.name,
                              "labels": [_plain(c) for c in frame.columns]}
    plain_index = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None and (
        frame.index.start == 0 and frame.index.step == 1)
    if not plain_index:
        out = out.reset_index()
        schema["index"] = [str(n) for n in out.columns[:frame.index.nlevels]]
    for name in out.columns:
        col = out[name]
        entry: dict[str, Any] = {"dtype": str(col.dtype)}
        if isinstance(col.dtype, pd.CategoricalDtype):
            entry["categories"] = [_plain(c) for c in col.cat.categories]
            entry["categories_dtype"] = str(col.cat.categories.dtype)
            entry["ordered"] = bool(col.cat.ordered)
        elif _is_sequence_column(col):
            entry["dtype"] = "sequence"
            out[name] = [json.dumps(list(map(_plain, x))) if isinstance(
                x, tuple | list | np.ndarray) else None for x in col]
        if entry["dtype"] in _TEXT_DTYPES:
            out[name] = col.astype(object).map(_escape)
        schema["columns"][str(name)] = entry
    out.columns = [str(c) for c in out.columns]
    # Quote every text: a lone "\r" in a cell would otherwise end the row for readers.
    out.to_csv(target, index=False, na_rep=_NA, quoting=csv.QUOTE_NONNUMERIC)
    Path(str(target) + _SCHEMA_SUFFIX).write_text(json.dumps(schema, indent=1),
                                                  encoding="utf-8")
    return target


_TEXT_DTYPES = ("str", "string", "object", "category")


def _escape(x: Any) -> Any:
    # PostgreSQL's COPY rule: a text starting with a backslash gets one more, so a
    # literal "\N" is written "\\N" and never read back as NA.
    return "\\" + x if isinstance(x, str) and x.startswith("\\") else x


def _unescape(x: Any) -> Any:
    return x[1:] if isinstance(x, str) and x.startswith("\\") else x


def _plain(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, pd.Timestamp | pd.Timedelta):
        return str(x)
    return x


def _jsonable(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _plain(v) for k, v in attrs.items()}


def load(path: str | os.PathLike[str]) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Read what `save` wrote: the same columns, dtypes and index (a folder: the mapping)."""
    source = Path(path)
    if source.is_dir():
        manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
        out: dict[str, pd.DataFrame] = {}
        for entry in manifest:
            part = load(source / entry["file"])
            assert isinstance(part, pd.DataFrame)
            part.attrs.update(entry.get("attrs", {}))
            out[entry["name"]] = part
        return out
    if source.suffix == ".parquet":
        frame = pd.read_parquet(source)
        for name in frame.columns:
            col = frame[name]
            if _is_sequence_column(col):  # Arrow lists come back as arrays
                frame[name] = _as_tuples(col)
            elif isinstance(col.dtype, pd.CategoricalDtype):
                frame[name] = _text_categories(col.array)
        return frame
    schema_path = Path(str(source) + _SCHEMA_SUFFIX)
    if not schema_path.exists():
        return pd.read_csv(source)
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    columns: dict[str, Any] = schema["columns"]
    text_like = {n for n, e in columns.items() if e["dtype"] in ("str", "string", "object",
                                                                 "category", "sequence")}
    frame = pd.read_csv(source, keep_default_na=False, na_values={n: [_NA] for n in columns},
                        dtype={n: object for n in text_like})
    for name, entry in columns.items():
        frame[name] = _restore(frame[name], entry)
    if schema["index"]:
        frame = frame.set_index(schema["index"])
    if "labels" in schema:  # labels that are not text (positions) and the axis name
        frame.columns = pd.Index(schema["labels"], name=schema.get("columns_name"))
    return frame


def _text_categories(values: Any) -> Any:
    """Text categories as the string dtype (Arrow gives object for an empty dictionary)."""
    cats = values.categories
    if cats.dtype == object and all(isinstance(c, str) for c in cats):
        return pd.Categorical.from_codes(values.codes, categories=pd.Index(cats, dtype=STRING),
                                         ordered=values.ordered)
    return values


def _restore(col: pd.Series, entry: Mapping[str, Any]) -> Any:
    dtype = entry["dtype"]
    if dtype in _TEXT_DTYPES:
        col = col.map(_unescape)
    if dtype == "category":
        categories = entry["categories"]
        kind = type(categories[0]) if categories else str
        values = col if kind is str else col.map(lambda x: None if pd.isna(x) else kind(x))
        index_dtype = entry.get("categories_dtype")
        index = pd.Index(categories, dtype=STRING if index_dtype == "str" else index_dtype)
        return pd.Categorical(values, categories=index, ordered=entry["ordered"])
    if dtype == "sequence":
        return _objects([tuple(json.loads(x)) if isinstance(x, str) else None for x in col])
    if dtype == "boolean":
        return col.map({"True": True, "False": False, True: True, False: False}).astype(
            "boolean")
    if dtype.startswith("datetime64"):
        return pd.to_datetime(col, utc="UTC" in dtype).astype(dtype)
    if dtype.startswith("timedelta64"):
        return pd.to_timedelta(col).astype(dtype)
    if dtype in ("str", "string"):
        return col.astype(STRING if dtype == "str" else dtype)
    if dtype == "object":
        return col
    return col.astype(dtype)
