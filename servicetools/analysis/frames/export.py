"""`save` and `load`: Parquet or CSV files that round-trip every frame's dtypes.

CSV keeps its dtypes in a ``<path>.schema.json`` beside it and writes NA as ``\\N``
(PostgreSQL's ``COPY`` rule); a mapping of frames (`tables`) becomes a folder. For
people who open tables in a spreadsheet, ``.xlsx`` writes an Excel workbook (the
``excel`` extra, openpyxl), one sheet per frame; it is for reading, not for `load`.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...extras import load as load_module
from .dtypes import STRING, objects

__all__ = ["load", "save"]

_SCHEMA_SUFFIX = ".schema.json"
_NA = "\\N"  # NULL in CSV as PostgreSQL and MySQL write it: "" stays an empty string
_TEXT_DTYPES = ("str", "string", "object", "category")


def save(frame: pd.DataFrame | Mapping[str, pd.DataFrame], path: str | os.PathLike[str]
         ) -> Path:
    """Write a frame as Parquet (``.parquet``) or CSV (``.csv``), dtypes kept; or as an
    Excel workbook (``.xlsx``, the ``excel`` extra), one sheet per frame of a mapping.

    CSV gets a ``<path>.schema.json`` beside it with the dtypes and categories, and
    writes NA as ``\\N`` so an empty string stays an empty string. A mapping of frames
    (`tables`) goes into the folder ``path``, one file per frame (Parquet unless
    ``path`` ends in ``.csv``) plus ``manifest.json`` with their names and ``attrs``.
    """
    target = Path(path)
    if target.suffix == ".xlsx":
        return _save_excel(frame if isinstance(frame, Mapping) else {"data": frame}, target)
    if isinstance(frame, Mapping):
        return _save_folder(frame, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".parquet":
        frame.to_parquet(target)
        return target
    if target.suffix != ".csv":
        raise ValueError(f"save writes .parquet, .csv or .xlsx, not "
                         f"{target.suffix or 'no suffix'!r}")
    return _save_csv(frame, target)


def load(path: str | os.PathLike[str]) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Read what `save` wrote: the same columns, dtypes and index (a folder: the mapping)."""
    source = Path(path)
    if source.is_dir():
        return _load_folder(source)
    if source.suffix == ".parquet":
        return _load_parquet(source)
    return _load_csv(source)


# -- Excel workbooks --------------------------------------------------------------------------
_SHEET_FORBIDDEN = str.maketrans({c: "_" for c in "[]:*?/\\"})


def _save_excel(frames: Mapping[str, pd.DataFrame], target: Path) -> Path:
    """One sheet per frame, named by its key (Excel allows 31 characters, no []:*?/\\)."""
    load_module("openpyxl", "excel", feature="saving a frame as .xlsx")
    target.parent.mkdir(parents=True, exist_ok=True)
    names: set[str] = set()
    with pd.ExcelWriter(target, engine="openpyxl") as writer:
        for key, frame in frames.items():
            name = str(key).translate(_SHEET_FORBIDDEN)[:31] or "sheet"
            while name.lower() in names:  # Excel compares sheet names without case
                name = f"{name[:28]}_{len(names)}"
            names.add(name.lower())
            _for_excel(frame).to_excel(writer, sheet_name=name,
                                       index=not isinstance(frame.index, pd.RangeIndex))
    return target


def _for_excel(frame: pd.DataFrame) -> pd.DataFrame:
    """What a spreadsheet cell can hold: times without a zone (in UTC, as stored), and
    lists and tuples (validation messages) as text, one item per line."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            out[column] = values.dt.tz_convert("UTC").dt.tz_localize(None)
        elif values.dtype == object:
            out[column] = values.map(lambda v: "\n".join(map(str, v))
                                     if isinstance(v, list | tuple) else v)
    return out


# -- folders of frames -----------------------------------------------------------------------
def _save_folder(frames: Mapping[str, pd.DataFrame], target: Path) -> Path:
    fmt = ".csv" if target.suffix == ".csv" else ".parquet"
    target.mkdir(parents=True, exist_ok=True)
    manifest = []
    for i, (name, part) in enumerate(frames.items()):
        file = f"{i:05d}{fmt}"
        save(part, target / file)
        manifest.append({"name": name, "file": file, "attrs": _jsonable(part.attrs)})
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return target


def _load_folder(source: Path) -> dict[str, pd.DataFrame]:
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    out: dict[str, pd.DataFrame] = {}
    for entry in manifest:
        part = load(source / entry["file"])
        assert isinstance(part, pd.DataFrame)
        part.attrs.update(entry.get("attrs", {}))
        out[entry["name"]] = part
    return out


def _jsonable(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _plain(v) for k, v in attrs.items()}


def _plain(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, pd.Timestamp | pd.Timedelta):
        return str(x)
    return x


# -- Parquet ---------------------------------------------------------------------------------
def _load_parquet(source: Path) -> pd.DataFrame:
    frame = pd.read_parquet(source)
    for name in frame.columns:
        col = frame[name]
        if _is_sequence_column(col):  # Arrow lists come back as arrays
            frame[name] = _as_tuples(col)
        elif isinstance(col.dtype, pd.CategoricalDtype):
            frame[name] = _text_categories(col.array)
    return frame


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


def _text_categories(values: Any) -> Any:
    """Text categories as the string dtype (Arrow gives object for an empty dictionary)."""
    cats = values.categories
    if cats.dtype == object and all(isinstance(c, str) for c in cats):
        return pd.Categorical.from_codes(values.codes, categories=pd.Index(cats, dtype=STRING),
                                         ordered=values.ordered)
    return values


# -- CSV -------------------------------------------------------------------------------------
def _save_csv(frame: pd.DataFrame, target: Path) -> Path:
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


def _load_csv(source: Path) -> pd.DataFrame:
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


def _escape(x: Any) -> Any:
    # PostgreSQL's COPY rule: a text starting with a backslash gets one more, so a
    # literal "\N" is written "\\N" and never read back as NA.
    return "\\" + x if isinstance(x, str) and x.startswith("\\") else x


def _unescape(x: Any) -> Any:
    return x[1:] if isinstance(x, str) and x.startswith("\\") else x


def _restore(col: pd.Series, entry: Mapping[str, Any]) -> Any:
    """A CSV column back in the dtype its schema entry names."""
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
        return objects([tuple(json.loads(x)) if isinstance(x, str) else None for x in col])
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
