"""The work frame every audit starts from: fields and cells stacked, labelled by target.

`work_frame` takes frames from `servicetools.frames` or anything its converters take;
the other names here are the pieces the audits share to label, group and summarise it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from .. import frames
from ..frames.conditions import conditions
from ..frames.dtypes import categorical, observed
from .labels import target_label

__all__ = [
    "By",
    "categorical_names",
    "empty_summary",
    "group_keys",
    "holds_cells",
    "known_keys",
    "target_labels",
    "work_frame",
]

By = str | Sequence[str]


def _is_frames(obj: Any) -> bool:
    return isinstance(obj, pd.DataFrame) or (
        isinstance(obj, tuple | list) and bool(obj)
        and all(isinstance(x, pd.DataFrame) for x in obj))


def holds_cells(data: Any, cells: pd.DataFrame | None = None) -> bool:
    """Whether ``data`` (and ``cells``) include the tables' cells: frames only where one
    is a cells frame; anything else the frames are made from holds both."""
    if cells is not None or not _is_frames(data):
        return True
    return any(_is_cells(f) for f in ([data] if isinstance(data, pd.DataFrame) else data))


def _value_frames(data: Any, cells: pd.DataFrame | None = None) -> list[pd.DataFrame]:
    """Field and cell frames of ``data`` (frames, or anything `frames.fields` takes)."""
    if _is_frames(data):
        found = [data] if isinstance(data, pd.DataFrame) else list(data)
    else:
        found = [frames.fields(data), frames.cells(data)]
    if cells is not None:
        found.append(cells)
    return found


def _is_cells(frame: pd.DataFrame) -> bool:
    return "table_id" in frame.columns or "row" in frame.columns


def _column(frame: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


def _cat(frame: pd.DataFrame, name: str) -> pd.Categorical:
    """A column as a categorical of strings (an all-NA one when the frame lacks it)."""
    if name not in frame.columns:
        return pd.Categorical.from_codes(np.full(len(frame), -1, dtype=np.int64),
                                         categories=pd.Index([], dtype=frames.STRING))
    col = frame[name]
    if isinstance(col.dtype, pd.CategoricalDtype) and col.cat.categories.dtype == (
            frames.STRING):
        return col.array
    values = col.astype(object)
    return categorical(values.where(values.notna(), None).tolist())


def _codes(values: pd.Categorical | np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Codes from 0 (0 for a missing value) and the value of each code."""
    if isinstance(values, pd.Categorical):
        return (np.asarray(values.codes, dtype=np.int64) + 1,
                [None, *(str(c) for c in values.categories)])
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, [None, *(int(u) for u in uniques)]


def target_labels(frame: pd.DataFrame, kind: str) -> pd.Categorical:
    """Each row's target (`labels.target_label`) of a frame of fields or of cells.

    Labelled per distinct combination of its parts (codes), so a million cells cost one
    factorisation. Categories in the order their rows are first seen, except in a frame
    of fields that all have a name: the names' own order then (a configuration's, even
    when the caller sorted the frame).
    """
    names = _cat(frame, "target_name")
    parts = [_codes(names), _codes(_cat(frame, "target_id"))]
    if kind == "cell":
        column = pd.to_numeric(_column(frame, "column"), errors="coerce").to_numpy(
            dtype=float, na_value=np.nan)
        parts += [_codes(_cat(frame, "header")), _codes(column)]
    key = np.zeros(len(frame), dtype=np.int64)
    size = 1
    for part_codes, values in parts:  # one integer per combination of the parts
        if size * len(values) >= 2**62:  # never with a configuration's few targets
            key, size = pd.factorize(key)[0].astype(np.int64), len(frame) + 1
        key, size = key * len(values) + part_codes, size * len(values)
    codes, uniques = pd.factorize(key)
    # Each combination's first row: codes are numbered in the order first seen.
    running = np.maximum.accumulate(codes) if len(codes) else codes
    first = np.flatnonzero(np.concatenate([[True], running[1:] > running[:-1]])[:len(codes)])
    combinations = [[values[part_codes[i]] for part_codes, values in parts] for i in first]
    if kind == "field" and len(codes) and not (names.codes == -1).any():
        rank = np.argsort([names.categories.get_loc(c[0]) for c in combinations], kind="stable")
    else:
        rank = np.arange(len(combinations))
    labels = [target_label(kind, *combination, *([None, None] if kind == "field" else []))
              for combination in combinations]
    found = categorical([labels[i] for i in rank])
    lookup = pd.Index(found.categories)
    label_codes = np.array([-1 if label is None else lookup.get_loc(label) for label in labels],
                           dtype=np.int64)
    return pd.Categorical.from_codes(label_codes[codes] if len(codes) else codes,
                                     categories=found.categories)


_WORK_MARK = {"kind", "target", "filled", "passed", "messages"}
_WORK_CATEGORIES = ("target_name", "header", "document_name", "extraction_name",
                    "configuration_id", "configuration_name", "target_id", "condition")
_WORK_IDS = ("extraction_id", "extracted_target_id", "table_id")


def work_frame(data: Any, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Fields and cells stacked into one frame with a ``target`` label and ``kind``.

    Names stay categoricals (unified across the parts), so grouping a batch of
    millions of values stays quick; ids stay strings (`frames.ID_COLUMNS`). Categories
    the rows do not use are dropped, so a frame the caller filtered (one target, some
    documents) gives summaries and plots of what it holds only.
    """
    if isinstance(data, pd.DataFrame) and _WORK_MARK <= set(data.columns) and cells is None:
        return observed(data)  # already stacked (summaries call each other)
    parts = []
    for number, frame in enumerate(_value_frames(data, cells)):
        is_cells = _is_cells(frame)
        n = len(frame)
        value = _column(frame, "value")
        passed = _column(frame, "validation_passed")
        part: dict[str, Any] = {
            "kind": categorical(["cell" if is_cells else "field"] * n),
            "target": target_labels(frame, "cell" if is_cells else "field"),
            **{name: _cat(frame, name) for name in _WORK_CATEGORIES},
            **{name: _column(frame, name).astype(frames.STRING).array for name in _WORK_IDS},
            # A frame made by hand may have no ids: each row gets one of its place, so
            # that a value and its grade are one value (the doctor counted both).
            "value_id": (_column(frame, "value_id").astype(object).to_numpy()
                         if "value_id" in frame.columns else
                         np.array([f"row-{number}-{i}" for i in range(n)], dtype=object)),
            "value_index": pd.to_numeric(_column(frame, "value_index"), errors="coerce")
            .astype("Int64").array,
            "row": pd.to_numeric(_column(frame, "row"), errors="coerce").astype("Int64").array,
            "column": pd.to_numeric(_column(frame, "column"), errors="coerce").astype(
                "Int64").array,
            "value": value.astype(frames.STRING).array,
            "confidence": pd.to_numeric(_column(frame, "confidence"), errors="coerce")
            .to_numpy(dtype=float, na_value=np.nan),
            "passed": passed.array if passed.dtype == "boolean" else pd.array(
                passed.astype(object).where(passed.notna(), None), dtype="boolean"),
            "messages": _column(frame, "validation_messages").to_numpy(dtype=object),
        }
        part["filled"] = (pd.Series(part["value"]).str.strip().str.len().fillna(0) > 0
                          ).to_numpy(dtype=bool)
        if "value_index" not in frame.columns and not is_cells:
            # A frame made by hand: each value of a target in a document counts from 0
            # in the order given, as the service numbers them (grading pairs values with
            # their truth by it; without it every value was a miss beside a spurious one).
            keys = [c for c in ("extraction_id", "document_name") if c in frame.columns][:1]
            part["value_index"] = pd.array(
                frame.groupby([*keys, "target_name"], sort=False, observed=True,
                              dropna=False).cumcount().to_numpy()
                if "target_name" in frame.columns else np.zeros(n, int), dtype="Int64")
        if "condition" not in frame.columns:  # a frame made by hand: derive it
            part["condition"] = categorical([
                conditions(tuple(m), v if isinstance(v, str) else None)
                if isinstance(m, tuple | list | np.ndarray) and len(m) else None
                for m, v in zip(part["messages"], part["value"], strict=True)])
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=sorted(_WORK_MARK))
    columns: dict[str, Any] = {}
    for name in parts[0]:
        pieces = [p[name] for p in parts]
        if isinstance(pieces[0], pd.Categorical):
            columns[name] = union_categoricals(pieces) if len(pieces) > 1 else pieces[0]
        elif isinstance(pieces[0], np.ndarray):
            columns[name] = np.concatenate(pieces)
        else:
            columns[name] = pd.concat([pd.Series(x) for x in pieces], ignore_index=True).array
    return observed(pd.DataFrame(columns))


def categorical_names(values: Any) -> pd.Categorical:
    """Text labels as a categorical of strings (object columns would not round-trip)."""
    series = pd.Series(values, dtype=object)
    return categorical(series.where(series.notna(), None).tolist())


def group_keys(by: By) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


def known_keys(frame: pd.DataFrame, by: By, audit: str) -> list[str]:
    """``by`` as keys, each a column of ``frame``; else a ValueError naming the columns
    to group by (pandas' own word was KeyError 'nope')."""
    keys = group_keys(by)
    unknown = [k for k in keys if k not in frame.columns]
    if unknown or not keys:
        names = [c for c in frame.columns if not str(c).startswith("_")
                 and isinstance(frame[c].dtype, pd.CategoricalDtype)]
        raise ValueError(f"by={by!r}: {audit} groups by columns of the values; "
                         f"{', '.join(map(repr, unknown)) or 'none given'} not among them. "
                         f"Group by one of: {', '.join(names)}")
    return keys


def empty_summary(columns: Sequence[str], by: By) -> pd.DataFrame:
    keys = group_keys(by)
    out = pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    if len(keys) == 1:
        out.index = pd.Index([], name=keys[0], dtype=frames.STRING)
    else:
        out.index = pd.MultiIndex.from_arrays([[] for _ in keys], names=keys)
    return out
