"""Ground truth: `truth` reads expected values into one frame (`TRUTH_COLUMNS`).

The sources are the dev set's truth files, a table of expected values, or the
corrections ledger; `latest_entries` is the ledger as it stands now.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import frames
from .work import categorical_names

__all__ = ["TRUTH_COLUMNS", "is_ledger", "latest_entries", "truth"]

TRUTH_COLUMNS: tuple[str, ...] = (
    "document", "kind", "target_name", "value_index", "table_index", "page", "row", "record",
    "column", "header", "value", "extraction_id", "target_id", "value_id", "old_value",
    "old_confidence", "time", "source")
_LEDGER_COLUMNS = ("extraction_id", "target_id", "value_id", "old_value", "new_value",
                   "old_confidence", "time")


def truth(source: Any) -> pd.DataFrame:
    """Expected values as a frame with `TRUTH_COLUMNS`.

    ``source`` is one of:

    - the dev set's truth files (``data/truth``, a glob, one file, or their parsed
      JSON): one ``field`` row per field target (``""`` when not printed) and one
      ``cell`` row per table cell, with ``table_index`` (one table per printed page),
      ``row`` within the table and ``record`` counting rows across the target's tables;
    - a CSV or JSON table of expected values with at least ``document``,
      ``target_name`` and ``value`` (and ``kind``, ``value_index``, ``record``/``row``,
      ``column`` for cells), or a spreadsheet of fields: ``document`` and one column
      per field target, one row per document (an empty text: the document does not
      print the value; an empty cell in a frame, NaN: no truth). ``document_name``, as
      the frames call it, stands for ``document``;
    - a corrections ledger (a `servicetools.ledger.Ledger` or its frame, columns
      ``extraction_id, target_id, value_id, old_value, new_value, old_confidence, time``
      and optionally ``target_name``): the latest ``new_value`` of each value is its
      truth (``source`` ``"ledger"``); an unchanged value is a confirmation.
    """
    frame = getattr(source, "frame", None)
    if isinstance(frame, pd.DataFrame) and not isinstance(source, pd.DataFrame):
        source = frame  # a Ledger (servicetools.ledger), by duck typing
    if isinstance(source, pd.DataFrame):
        if {"value_id", "new_value"} <= set(source.columns):
            return _truth_from_ledger(source)
        return _truth_from_table(source)
    if isinstance(source, str | os.PathLike):
        return _truth_from_paths(_truth_paths(source))
    if isinstance(source, Mapping):
        return _truth_from_records(_dev_rows(source, "data"))
    if isinstance(source, Iterable):
        items = list(source)
        if all(isinstance(x, Mapping) and "fields" in x for x in items):
            rows: list[dict[str, Any]] = []
            for i, item in enumerate(items):
                rows += _dev_rows(item, f"data[{i}]")
            return _truth_from_records(rows)
        return _truth_from_table(pd.DataFrame(items))
    raise TypeError(f"cannot read ground truth from a {type(source).__name__}")



def is_ledger(expected: pd.DataFrame) -> bool:
    """Whether expected values (`truth`) are a corrections ledger: `grade` then grades
    each entry against the value it corrected."""
    return bool(len(expected)) and bool((expected["source"] == "ledger").all())


def _truth_paths(source: str | os.PathLike[str]) -> list[Path]:
    path = Path(source)
    if path.is_dir():
        return sorted(path.glob("*.json"))
    if any(ch in str(source) for ch in "*?["):
        return sorted(Path().glob(str(source))) if not path.is_absolute() else sorted(
            Path(path.anchor).glob(str(path.relative_to(path.anchor))))
    return [path]


def _truth_from_paths(paths: list[Path]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    tables: list[pd.DataFrame] = []
    for path in paths:
        if path.suffix == ".csv":
            tables.append(pd.read_csv(path, dtype=str, keep_default_na=False))
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, Mapping) and "fields" in data:
            rows += _dev_rows(data, str(path))
        elif isinstance(data, list) and all(isinstance(x, Mapping) and "fields" in x
                                            for x in data):
            for i, item in enumerate(data):
                rows += _dev_rows(item, f"{path}[{i}]")
        else:
            tables.append(pd.DataFrame(data))
    parts = [_truth_from_records(rows)] if rows or not tables else []
    parts += [_truth_from_table(t) for t in tables]
    return _concat_truth(parts)


def _dev_rows(data: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    document = data.get("document")
    if not isinstance(document, str):
        raise ValueError(f"{where}: a truth file needs a 'document' string")
    rows: list[dict[str, Any]] = []
    fields = data.get("fields") or {}
    for name, value in fields.items():
        values = value if isinstance(value, list) else [value]
        for i, v in enumerate(values):
            rows.append({"document": document, "kind": "field", "target_name": name,
                         "value_index": i, "value": "" if v is None else str(v)})
    for name, entries in (data.get("tables") or {}).items():
        record = 0
        for t, entry in enumerate(entries):
            for r, cells in enumerate(entry.get("rows", [])):
                for c, text in enumerate(cells):
                    rows.append({"document": document, "kind": "cell", "target_name": name,
                                 "table_index": t, "page": entry.get("page"), "row": r,
                                 "record": record, "column": c,
                                 "value": "" if text is None else str(text)})
                record += 1
    return rows


_TRUTH_INTS = ("value_index", "table_index", "page", "row", "record", "column")


def _truth_from_records(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return _truth_from_table(pd.DataFrame(rows), source="truth")


def _truth_from_table(table: pd.DataFrame, source: str = "table") -> pd.DataFrame:
    if "document" not in table.columns and "document_name" in table.columns:
        table = table.rename(columns={"document_name": "document"})  # as the frames say
    if "document" in table.columns and not {"target_name", "value"} & set(table.columns):
        table = _from_wide(table)
    missing = {"document", "target_name", "value"} - set(table.columns)
    if missing and len(table.columns):
        raise ValueError(f"ground truth needs the columns document, target_name and value "
                         f"(one row per value), or document and one column per target (one "
                         f"row per document); missing: {', '.join(sorted(missing))}")
    n = len(table)
    out: dict[str, Any] = {}
    for name in TRUTH_COLUMNS:
        col = table[name] if name in table.columns else pd.Series([None] * n, dtype=object)
        col = col.reset_index(drop=True)
        if name in _TRUTH_INTS:
            out[name] = pd.to_numeric(col.replace("", None), errors="coerce").astype("Int64")
        elif name in ("old_confidence",):
            out[name] = pd.to_numeric(col, errors="coerce").astype(float)
        elif name == "time":
            out[name] = pd.to_datetime(col, utc=True, errors="coerce").dt.as_unit("ns")
        else:
            out[name] = col.astype(object)
    frame = pd.DataFrame(out)
    if n:
        is_cell = frame["column"].notna() | frame["row"].notna() | frame["record"].notna()
        kind = frame["kind"].where(frame["kind"].notna(), np.where(is_cell, "cell", "field"))
        frame["kind"] = kind
        frame["value_index"] = frame["value_index"].where(
            (frame["kind"] != "field") | frame["value_index"].notna(), 0)
        frame["record"] = frame["record"].where(frame["record"].notna(), frame["row"])
        frame["source"] = frame["source"].where(frame["source"].notna(), source)
    return _truth_dtypes(frame)


def _from_wide(table: pd.DataFrame) -> pd.DataFrame:
    """A spreadsheet of expected values, one row per document and one column per field
    target, as one row per value. An empty text is a value the document does not print;
    a missing cell (NaN, None) is no truth, left out. A number column that pandas read
    as floats because of a missing cell gives its whole numbers without ".0"."""
    targets = [c for c in table.columns if c != "document"]
    if not targets:
        raise ValueError("ground truth of one row per document needs a column per target "
                         "beside document")
    long = table.melt(id_vars="document", value_vars=targets, var_name="target_name",
                      value_name="value")
    long = long.loc[long["value"].notna()].reset_index(drop=True)

    def text(value: Any) -> str:
        if isinstance(value, float | np.floating) and float(value).is_integer():
            return str(int(value))
        return str(value)

    long["value"] = long["value"].map(text).astype(object)
    long["target_name"] = long["target_name"].astype(str)
    return long


def _truth_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    for name in ("document", "value", "extraction_id", "value_id", "old_value"):
        frame[name] = frame[name].astype(frames.STRING)
    for name in ("kind", "target_name", "header", "target_id", "source"):
        frame[name] = categorical_names(frame[name].to_numpy(dtype=object))
    return frame[list(TRUTH_COLUMNS)]


def _concat_truth(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return _truth_from_table(pd.DataFrame())
    joined = pd.concat([p.astype({c: object for c in p.columns
                                  if isinstance(p[c].dtype, pd.CategoricalDtype)})
                        for p in parts], ignore_index=True)
    return _truth_dtypes(joined)


def latest_entries(ledger: pd.DataFrame) -> pd.DataFrame:
    """The latest entry of each value (by ``value_id``) and every entry without one.

    Entries keep the ledger's order; the columns a ledger may lack are added, empty.
    """
    missing = set(_LEDGER_COLUMNS) - set(ledger.columns) - {"time", "old_confidence",
                                                            "extraction_id", "target_id"}
    if missing:
        raise ValueError(f"a corrections ledger needs the columns {', '.join(_LEDGER_COLUMNS)};"
                         f" missing: {', '.join(sorted(missing))}")
    out = ledger.copy()
    for name in _LEDGER_COLUMNS:
        if name not in out.columns:
            out[name] = None
    if out["time"].notna().any():
        out = out.sort_values("time", kind="stable")
    keyed = out["value_id"].notna()
    latest = out.loc[keyed].drop_duplicates("value_id", keep="last")
    return pd.concat([latest, out.loc[~keyed]]).sort_index()


def _truth_from_ledger(ledger: pd.DataFrame) -> pd.DataFrame:
    latest = latest_entries(ledger)
    table = pd.DataFrame({
        "document": None, "kind": None,
        "target_name": (latest["target_name"].astype(object).to_numpy()
                        if "target_name" in latest.columns else None),
        "extraction_id": latest["extraction_id"].astype(object).to_numpy(),
        "target_id": latest["target_id"].astype(object).to_numpy(),
        "value_id": latest["value_id"].astype(object).to_numpy(),
        "value": latest["new_value"].astype(object).to_numpy(),
        "old_value": latest["old_value"].astype(object).to_numpy(),
        "old_confidence": latest["old_confidence"].to_numpy(),
        "time": latest["time"].to_numpy(),
    })
    return _truth_from_table(table, source="ledger")
