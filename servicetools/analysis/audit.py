"""Summaries of extracted data, and its quality against ground truth.

Summaries (no truth needed), each a DataFrame indexed by ``target`` (a field's name, or
``"<table> / <header>"`` for a table column), in configuration order:

- `scorecard`: fill rate, confidence (n, mean, quantiles, share under a threshold),
  validation pass rate, the top failed condition, the correction rate when a corrections
  ledger is given;
- `failures`: per target and condition, how many values failed, with examples;
- `documents`: per extraction (document);
- `drift`: per target between two batches: confidence shift with a p-value, fill and
  failure rate changes.

Quality against ground truth (`truth` reads it: the dev set's truth files, a CSV/JSON of
expected values, or the corrections ledger of the review widgets):

- `grade`: one row per compared value, ``correct`` after normalisation (`normalize`);
- `accuracy`, `calibration` (reliability table, ECE, Brier), `thresholds` (automation
  vs error rate, recommended threshold for an error budget), `compare` (two batches or
  configurations on the same documents).

Every function takes frames from `servicetools.frames` or anything those converters
take (then it converts). Missing confidences are left out of confidence statistics,
never counted as zero.

>>> import pandas as pd
>>> fields = pd.DataFrame({"target_name": ["Total", "Total", "Date"],
...                        "extraction_id": ["e1", "e2", "e1"],
...                        "value": ["1.00", "", "2024-01-02"],
...                        "confidence": [0.9, 0.2, 0.8],
...                        "validation_passed": [True, False, True]})
>>> scorecard(fields)[["n_values", "fill_rate", "confidence_mean", "pass_rate"]]
... # doctest: +NORMALIZE_WHITESPACE
        n_values  fill_rate  confidence_mean  pass_rate
target
Total          2        0.5             0.55        0.5
Date           1        0.5             0.80        1.0
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..wire import values as _values
from . import frames as _frames
from .frames.conditions import conditions
from .frames.dtypes import categorical

__all__ = [
    "ACCURACY_COLUMNS",
    "ALL",
    "CALIBRATION_COLUMNS",
    "CALIBRATION_TABLE_COLUMNS",
    "COMPARE_COLUMNS",
    "Calibration",
    "DATE_FORMATS",
    "DOCUMENT_COLUMNS",
    "DRIFT_COLUMNS",
    "FAILURE_COLUMNS",
    "GRADE_COLUMNS",
    "NORMALIZATIONS",
    "RECOMMENDED_COLUMNS",
    "SCORECARD_COLUMNS",
    "SWEEP_COLUMNS",
    "TRUTH_COLUMNS",
    "Thresholds",
    "accuracy",
    "calibration",
    "compare",
    "documents",
    "drift",
    "failures",
    "grade",
    "ks_2samp",
    "mann_whitney",
    "normalize",
    "parse_amount",
    "parse_date",
    "scorecard",
    "thresholds",
    "truth",
]

#: The label of the row that summarises all targets together.
ALL = "All"
#: The date formats of the D10 validation trees in data/configurations (strptime).
DATE_FORMATS: tuple[str, ...] = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%d %b %Y",
                                 "%b %d, %Y", "%B %d, %Y", "%d %B %Y")
#: What `normalize` can do; `grade` and friends take any subset, or "all".
NORMALIZATIONS: tuple[str, ...] = ("case", "whitespace", "dates", "amounts")
_DEFAULT_NORMALIZE: tuple[str, ...] = ("whitespace",)

TRUTH_COLUMNS: tuple[str, ...] = (
    "document", "kind", "target_name", "value_index", "table_index", "page", "row", "record",
    "column", "header", "value", "extraction_id", "target_id", "value_id", "old_value",
    "old_confidence", "time", "source")
GRADE_COLUMNS: tuple[str, ...] = (
    "extraction_id", "document_name", "document", "kind", "target", "target_name", "header",
    "value_index", "record", "column", "value_id", "value", "expected", "confidence",
    "correct", "present")

Normalize = str | Iterable[str] | None
_By = str | Sequence[str]


# -- normalisation ---------------------------------------------------------------------------
def parse_date(text: str, formats: Sequence[str] = DATE_FORMATS) -> str | None:
    """The ISO date of ``text`` read with the first format that fits, else None.

    The date rule's parser (`servicetools.wire.values.parse_date`), giving ISO text.

    >>> parse_date("15.03.2025"), parse_date("Mar 05, 2024"), parse_date("INV-1")
    ('2025-03-15', '2024-03-05', None)
    """
    if not any(ch.isdigit() for ch in text):
        return None  # most texts are no dates: skip trying every format on them
    parsed = _values.parse_date(text, formats)
    return None if parsed is None else parsed.date().isoformat()


#: The amount rule's parser (`servicetools.wire.values.parse_amount`): what the service
#: accepts as an amount is the amount it is graded as.
parse_amount = _values.parse_amount


def normalize(text: Any, options: Normalize = _DEFAULT_NORMALIZE) -> Any:
    """``text`` as compared by `grade`: ``options`` from `NORMALIZATIONS` (or ``"all"``).

    Dates become ISO dates, amounts plain decimals without trailing zeros; a value that
    does not parse as one stays as it is. NA stays NA.

    >>> normalize("  Net\\n30 ", ["whitespace", "case"])
    'net 30'
    >>> normalize("1.234,50 EUR", "all"), normalize("Mar 5, 2024", "all")
    ('1234.5', '2024-03-05')
    """
    if not isinstance(text, str):
        return text
    opts = _options(options)
    s = text
    if "whitespace" in opts:
        s = " ".join(s.split())
    if "dates" in opts:
        iso = parse_date(s)
        if iso is not None:
            return iso
    if "amounts" in opts:
        amount = parse_amount(s)
        if amount is not None:
            return _plain_decimal(amount)
    if "case" in opts:
        s = s.casefold()
    return s


def _plain_decimal(value: Decimal) -> str:
    out = format(value.normalize(), "f")
    return "0" if out in ("-0", "") else out


def _options(options: Normalize) -> frozenset[str]:
    if options is None:
        return frozenset()
    if isinstance(options, str):
        options = NORMALIZATIONS if options == "all" else (options,)
    chosen = frozenset(options)
    unknown = chosen - set(NORMALIZATIONS)
    if unknown:
        raise ValueError(f"unknown normalisation {sorted(unknown)}; choose from "
                         f"{', '.join(NORMALIZATIONS)} or 'all'")
    return chosen


def _normalized(values: pd.Series, options: Normalize) -> pd.Series:
    """Normalise each distinct value once; NA and blank become ""."""
    opts = _options(options)
    text = values.astype(object).where(values.notna(), "")
    uniques = pd.unique(text.to_numpy(dtype=object))
    mapping = {u: normalize(u, opts) for u in uniques}
    return text.map(mapping)


# -- input -----------------------------------------------------------------------------------
def _is_frames(obj: Any) -> bool:
    return isinstance(obj, pd.DataFrame) or (
        isinstance(obj, tuple | list) and bool(obj)
        and all(isinstance(x, pd.DataFrame) for x in obj))


def _value_frames(data: Any, cells: pd.DataFrame | None = None) -> list[pd.DataFrame]:
    """Field and cell frames of ``data`` (frames, or anything `frames.fields` takes)."""
    if _is_frames(data):
        found = [data] if isinstance(data, pd.DataFrame) else list(data)
    else:
        found = [_frames.fields(data), _frames.cells(data)]
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
                                         categories=pd.Index([], dtype=_frames.STRING))
    col = frame[name]
    if isinstance(col.dtype, pd.CategoricalDtype) and col.cat.categories.dtype == (
            _frames.STRING):
        return col.array
    values = col.astype(object)
    return categorical(values.where(values.notna(), None).tolist())


def _target_names(frame: pd.DataFrame) -> pd.Categorical:
    """``target_name``, or the target id where there is no name (D9)."""
    names = _cat(frame, "target_name")
    if (names.codes == -1).any() and "target_id" in frame.columns:
        fallback = frame["target_id"].astype(object).to_numpy()
        values = np.asarray(names, dtype=object)
        values = np.where(pd.isna(values), fallback, values)
        names = categorical([None if pd.isna(v) else str(v) for v in values])
    return names


def _labels_for_cells(frame: pd.DataFrame) -> pd.Categorical:
    """``"<table> / <header>"`` (or ``/ column <n>`` without a header), one per pair.

    Computed on category codes, so a million cells cost one factorisation.
    """
    names = _target_names(frame)
    heads = _cat(frame, "header")
    column = pd.to_numeric(_column(frame, "column"), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan)
    column = np.where(np.isnan(column), -1, column).astype(np.int64)
    width = int(column.max()) + 2 if len(column) else 1
    head_codes = np.asarray(heads.codes, dtype=np.int64)
    per_name = (len(heads.categories) + 1) * width
    key = ((np.asarray(names.codes, dtype=np.int64) + 1) * per_name + (head_codes + 1) * width
           + np.where(head_codes == -1, column + 1, 0))
    codes, uniques = pd.factorize(key)
    labels = []
    for k in uniques:
        n, rest = divmod(int(k), per_name)
        h, c = divmod(rest, width)
        name = names.categories[n - 1] if n else "?"
        if h:
            labels.append(f"{name} / {heads.categories[h - 1]}")
        else:
            labels.append(f"{name} / column {c - 1 if c else '?'}")
    found = categorical(labels)
    return pd.Categorical.from_codes(np.asarray(found.codes)[codes] if len(codes) else codes,
                                     categories=found.categories)


_WORK_MARK = {"kind", "target", "filled", "passed", "messages"}
_WORK_CATEGORIES = ("target_name", "header", "extraction_id", "document_name",
                    "extraction_name", "configuration_id", "configuration_name", "target_id",
                    "extracted_target_id", "table_id", "condition")


def _work(data: Any, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Fields and cells stacked into one frame with a ``target`` label and ``kind``.

    Names stay categoricals (unified across the parts), so grouping a batch of
    millions of values stays quick.
    """
    if isinstance(data, pd.DataFrame) and _WORK_MARK <= set(data.columns) and cells is None:
        return data  # already stacked (summaries call each other)
    parts = []
    for frame in _value_frames(data, cells):
        is_cells = _is_cells(frame)
        n = len(frame)
        value = _column(frame, "value")
        passed = _column(frame, "validation_passed")
        part: dict[str, Any] = {
            "kind": categorical(["cell" if is_cells else "field"] * n),
            "target": _labels_for_cells(frame) if is_cells else _target_names(frame),
            **{name: _cat(frame, name) for name in _WORK_CATEGORIES},
            "value_id": _column(frame, "value_id").astype(object).to_numpy(),
            "value_index": pd.to_numeric(_column(frame, "value_index"), errors="coerce")
            .astype("Int64").array,
            "row": pd.to_numeric(_column(frame, "row"), errors="coerce").astype("Int64").array,
            "column": pd.to_numeric(_column(frame, "column"), errors="coerce").astype(
                "Int64").array,
            "value": value.astype(_frames.STRING).array,
            "confidence": pd.to_numeric(_column(frame, "confidence"), errors="coerce")
            .to_numpy(dtype=float, na_value=np.nan),
            "passed": passed.array if passed.dtype == "boolean" else pd.array(
                passed.astype(object).where(passed.notna(), None), dtype="boolean"),
            "messages": _column(frame, "validation_messages").to_numpy(dtype=object),
        }
        part["filled"] = (pd.Series(part["value"]).str.strip().str.len().fillna(0) > 0
                          ).to_numpy(dtype=bool)
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
    return pd.DataFrame(columns)


def _names(values: Any) -> pd.Categorical:
    """Text labels as a categorical of strings (object columns would not round-trip)."""
    series = pd.Series(values, dtype=object)
    return categorical(series.where(series.notna(), None).tolist())


def _group_keys(by: _By) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


def _empty_summary(columns: Sequence[str], by: _By) -> pd.DataFrame:
    keys = _group_keys(by)
    out = pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    if len(keys) == 1:
        out.index = pd.Index([], name=keys[0], dtype=_frames.STRING)
    else:
        out.index = pd.MultiIndex.from_arrays([[] for _ in keys], names=keys)
    return out


# -- summaries -------------------------------------------------------------------------------
SCORECARD_COLUMNS: tuple[str, ...] = (
    "kind", "target_name", "header", "n_documents", "n_values", "fill_rate", "confidence_n",
    "confidence_mean", "confidence_min", "confidence_p10", "confidence_p50", "confidence_p90",
    "share_below", "pass_rate", "n_failed", "top_condition", "correction_rate")


def scorecard(fields: Any, cells: pd.DataFrame | None = None, *, threshold: float = 0.5,
              corrections: pd.DataFrame | None = None, targets: pd.DataFrame | None = None,
              by: _By = "target") -> pd.DataFrame:
    """Per target: how often it is found, how confident, how often it passes validation.

    ``n_documents`` counts the extractions whose configuration has the target;
    ``fill_rate`` is, for a field, the share of those with a non-blank value, and for a
    table column the share of its cells that are not blank. ``share_below`` is the share
    of values (with a confidence) under ``threshold``; ``pass_rate`` the share passing
    validation. ``correction_rate`` is the share of values whose ``value_id`` the
    ``corrections`` ledger changed (NaN without a ledger). ``targets`` (`frames.targets`)
    adds extractions in which a target has no value at all to the denominators.
    """
    work = _work(fields, cells)
    keys = _group_keys(by)
    if work.empty:
        return _empty_summary(SCORECARD_COLUMNS, by)
    g = work.groupby(keys, observed=True, sort=True)
    conf = g["confidence"]
    quantiles = conf.quantile([0.1, 0.5, 0.9]).unstack()
    index = g.size().index  # every part below aligns to it (some parts may be empty)
    out = pd.DataFrame(index=index, data={
        "kind": g["kind"].first(),
        "target_name": g["target_name"].first(),
        "header": g["header"].first(),
        "n_documents": _documents_per_group(work, keys, targets),
        "n_values": g.size(),
        "fill_rate": _fill_rates(work, keys, targets),
        "confidence_n": conf.count(),
        "confidence_mean": conf.mean(),
        "confidence_min": conf.min(),
        "confidence_p10": quantiles[0.1] if len(quantiles) else np.nan,
        "confidence_p50": quantiles[0.5] if len(quantiles) else np.nan,
        "confidence_p90": quantiles[0.9] if len(quantiles) else np.nan,
        "share_below": (work["confidence"] < threshold).groupby(
            [work[k] for k in keys], observed=True).sum() / conf.count().replace(0, np.nan),
        "pass_rate": g["passed"].mean().astype(float),
        "n_failed": (work["passed"] == False).fillna(False).groupby(  # noqa: E712
            [work[k] for k in keys], observed=True).sum().astype(np.int64),
        "top_condition": _top_conditions(work, keys),
        "correction_rate": _correction_rates(work, keys, corrections),
    })
    out["n_documents"] = out["n_documents"].fillna(0).astype(np.int64)
    out["confidence_n"] = out["confidence_n"].astype(np.int64)
    for name in ("kind", "target_name", "header", "top_condition"):
        out[name] = _names(out[name].to_numpy(dtype=object))
    return out[list(SCORECARD_COLUMNS)]


def _extractions_per_configuration(work: pd.DataFrame, targets: pd.DataFrame | None
                                   ) -> pd.Series:
    pairs = work[["configuration_id", "extraction_id"]]
    if targets is not None and len(targets):
        pairs = pd.concat([pairs, pd.DataFrame({
            "configuration_id": targets["configuration_id"].astype(object).to_numpy(),
            "extraction_id": targets["extraction_id"].astype(object).to_numpy()})])
    pairs = pairs.astype(object).fillna("").drop_duplicates()
    return pairs.groupby("configuration_id").size()


def _documents_per_group(work: pd.DataFrame, keys: list[str], targets: pd.DataFrame | None
                         ) -> pd.Series:
    per_config = _extractions_per_configuration(work, targets)
    configs = work[keys + ["configuration_id"]].copy()
    configs["configuration_id"] = configs["configuration_id"].astype(object).fillna("")
    configs = configs.drop_duplicates()
    configs["n"] = configs["configuration_id"].map(per_config).fillna(0)
    return configs.groupby(keys, observed=True)["n"].sum()


def _fill_rates(work: pd.DataFrame, keys: list[str], targets: pd.DataFrame | None
                ) -> pd.Series:
    is_field = work["kind"] == "field"
    cells = work.loc[~is_field].groupby(keys, observed=True)["filled"].mean()
    fields = work.loc[is_field]
    groups = fields.groupby(keys, observed=True).size().index
    found = fields.loc[fields["filled"]].drop_duplicates(keys + ["extraction_id"]).groupby(
        keys, observed=True).size().reindex(groups, fill_value=0)
    documents = _documents_per_group(work, keys, targets).reindex(groups)
    rates = found / documents.replace(0, np.nan)
    return pd.concat([rates, cells]) if len(cells) else rates


def _top_conditions(work: pd.DataFrame, keys: list[str]) -> pd.Series:
    failed = work.loc[work["condition"].notna(), keys + ["condition"]]
    if failed.empty:
        return pd.Series(dtype=object)
    counts = failed.groupby(keys + ["condition"], observed=True).size().rename("n")
    counts = counts.reset_index().sort_values("n", ascending=False, kind="stable")
    return counts.drop_duplicates(keys).set_index(keys)["condition"]


def _corrected_ids(corrections: pd.DataFrame) -> set[Any]:
    ledger = _latest(corrections)
    changed = ledger["old_value"].astype(object).fillna("") != ledger["new_value"].astype(
        object).fillna("")
    return set(ledger.loc[changed, "value_id"].dropna())


def _correction_rates(work: pd.DataFrame, keys: list[str], corrections: pd.DataFrame | None
                      ) -> pd.Series:
    if corrections is None:
        return pd.Series(np.nan, index=work.groupby(keys, observed=True).size().index)
    corrected = work["value_id"].isin(_corrected_ids(corrections))
    return corrected.groupby([work[k] for k in keys], observed=True).mean()


FAILURE_COLUMNS: tuple[str, ...] = ("kind", "n", "share", "n_documents", "examples",
                                    "documents")


def failures(fields: Any, cells: pd.DataFrame | None = None, *, examples: int = 3,
             by: _By = "target") -> pd.DataFrame:
    """Failed validations per target and condition, most frequent first within a target.

    ``n`` counts values that failed with the condition (a value failing two rule groups
    counts under both), ``share`` is ``n`` over the target's values, ``n_documents`` the
    extractions affected; ``examples`` holds up to ``examples`` distinct failed values,
    most frequent first, and ``documents`` up to as many document names.
    """
    work = _work(fields, cells)
    keys = _group_keys(by)
    index_names = keys + ["condition"]
    if work.empty:
        out = _empty_summary(FAILURE_COLUMNS, index_names)
        return out
    totals = work.groupby(keys, observed=True).size()
    failed = work.loc[(work["passed"] == False).fillna(False)]  # noqa: E712
    failed = failed.loc[failed["messages"].map(
        lambda m: isinstance(m, tuple | list | np.ndarray) and len(m) > 0)]
    records: list[dict[str, Any]] = []
    for row in failed.itertuples(index=False):
        value = row.value if isinstance(row.value, str) else None
        for message in dict.fromkeys(row.messages):  # a message twice is one condition
            if isinstance(message, str):
                rec = {k: getattr(row, k) for k in keys}
                rec.update(kind=row.kind, condition=_frames.condition(message, value),
                           value=value, extraction_id=row.extraction_id,
                           document_name=row.document_name)
                records.append(rec)
    if not records:
        return _empty_summary(FAILURE_COLUMNS, index_names)
    exploded = pd.DataFrame(records)
    for k in keys:
        if isinstance(work[k].dtype, pd.CategoricalDtype):
            exploded[k] = pd.Categorical(exploded[k], categories=work[k].cat.categories)
    rows = []
    for group_key, group in exploded.groupby(index_names, observed=True, sort=True):
        key_tuple = group_key if isinstance(group_key, tuple) else (group_key,)
        target_key = key_tuple[:-1] if len(keys) > 1 else key_tuple[0]
        common = Counter(v for v in group["value"] if v is not None).most_common(examples)
        docs = list(dict.fromkeys(d for d in group["document_name"] if isinstance(d, str)))
        rows.append({**dict(zip(index_names, key_tuple, strict=True)),
                     "kind": group["kind"].iloc[0], "n": len(group),
                     "share": len(group) / totals.loc[target_key],
                     "n_documents": group["extraction_id"].nunique(),
                     "examples": tuple(v for v, _ in common),
                     "documents": tuple(docs[:examples])})
    out = pd.DataFrame(rows)
    order = {k: i for i, k in enumerate(totals.index)}
    out["_order"] = [order.get(tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]], 0)
                     for _, r in out.iterrows()]
    out = out.sort_values(["_order", "n"], ascending=[True, False], kind="stable")
    out = out.drop(columns="_order").set_index(index_names)
    out["n"] = out["n"].astype(np.int64)
    out["n_documents"] = out["n_documents"].astype(np.int64)
    return out[list(FAILURE_COLUMNS)]


DOCUMENT_COLUMNS: tuple[str, ...] = (
    "document_name", "configuration_name", "n_values", "n_filled", "fill_rate",
    "confidence_mean", "confidence_min", "n_failed", "failure_rate", "failed_targets")


def documents(fields: Any, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per extraction (index ``extraction_id``): how full, how confident, what failed.

    ``fill_rate`` and ``failure_rate`` are over the extraction's values and cells;
    ``failed_targets`` names the targets with a failed value, in configuration order.
    """
    work = _work(fields, cells)
    if work.empty:
        return _empty_summary(DOCUMENT_COLUMNS, "extraction_id")
    # The extraction as a plain key (never written back: work may be the caller's frame).
    key = pd.Series(work["extraction_id"].astype(object).fillna("?").to_numpy(),
                    index=work.index, name="extraction_id")
    g = work.groupby(key, sort=False)
    failed = (work["passed"] == False).fillna(False)  # noqa: E712
    order = {t: i for i, t in enumerate(work["target"].cat.categories)}
    failed_targets = work.loc[failed, "target"].groupby(key[failed], sort=False).agg(
        lambda s: tuple(sorted(set(s), key=order.__getitem__)))
    out = pd.DataFrame({
        "document_name": g["document_name"].first(),
        "configuration_name": g["configuration_name"].first(),
        "n_values": g.size(),
        "n_filled": g["filled"].sum(),
        "confidence_mean": g["confidence"].mean(),
        "confidence_min": g["confidence"].min(),
        "n_failed": failed.groupby(key, sort=False).sum(),
    })
    for name in ("document_name", "configuration_name"):
        out[name] = _names(out[name].to_numpy(dtype=object))
    out["fill_rate"] = out["n_filled"] / out["n_values"]
    out["failure_rate"] = out["n_failed"] / out["n_values"]
    empty: tuple[str, ...] = ()
    out["failed_targets"] = [failed_targets.get(i, empty) for i in out.index]
    for name in ("n_values", "n_filled", "n_failed"):
        out[name] = out[name].astype(np.int64)
    return out[list(DOCUMENT_COLUMNS)]


# -- significance ----------------------------------------------------------------------------
def _finite(x: Any) -> np.ndarray:
    arr = np.asarray(pd.to_numeric(pd.Series(x), errors="coerce"), dtype=float)
    return arr[np.isfinite(arr)]


def mann_whitney(x: Any, y: Any) -> tuple[float, float]:
    """Two-sided Mann-Whitney U test: ``(U of x, p)``, normal approximation.

    Ties get average ranks and the tie-corrected variance; the continuity correction
    is applied, as ``scipy.stats.mannwhitneyu(method="asymptotic")`` does.

    >>> u, p = mann_whitney([1, 2, 3], [4, 5, 6])
    >>> u, round(p, 4)
    (0.0, 0.0809)
    """
    a, b = _finite(x), _finite(y)
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    both = np.concatenate([a, b])
    uniques, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
    starts = np.cumsum(counts) - counts
    ranks = (starts + (counts + 1) / 2.0)[inverse]
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    n = n1 + n2
    ties = float(np.sum(counts.astype(float) ** 3 - counts))
    variance = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1))) if n > 1 else 0.0
    if variance <= 0:
        return u1, 1.0
    u = max(u1, n1 * n2 - u1)
    z = (u - n1 * n2 / 2.0 - 0.5) / math.sqrt(variance)
    return u1, min(1.0, math.erfc(z / math.sqrt(2.0)))


def ks_2samp(x: Any, y: Any) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov test: ``(D, p)``, asymptotic p-value.

    The p-value is the Kolmogorov distribution at ``(en + 0.12 + 0.11/en) * D`` with
    ``en = sqrt(n1 n2 / (n1 + n2))`` (Stephens' small-sample correction). The same
    formula whatever else is installed, so a result never depends on the environment.

    >>> ks_2samp([1, 2, 3, 4], [1, 2, 3, 4])
    (0.0, 1.0)
    """
    a, b = np.sort(_finite(x)), np.sort(_finite(y))
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / n1
    cdf_b = np.searchsorted(b, grid, side="right") / n2
    d = float(np.max(np.abs(cdf_a - cdf_b)))
    en = math.sqrt(n1 * n2 / (n1 + n2))
    lam = (en + 0.12 + 0.11 / en) * d
    return d, _kolmogorov_sf(lam)


def _kolmogorov_sf(lam: float) -> float:
    if lam < 0.2:  # the series converges badly here; the tail probability is 1 anyway
        return 1.0
    total = 0.0
    for k in range(1, 101):
        term = 2.0 * (-1) ** (k - 1) * math.exp(-2.0 * k * k * lam * lam)
        total += term
        if abs(term) < 1e-12:
            break
    return min(1.0, max(0.0, total))


# -- drift -----------------------------------------------------------------------------------
DRIFT_COLUMNS: tuple[str, ...] = (
    "n_before", "n_after", "confidence_before", "confidence_after", "confidence_shift",
    "statistic", "p_value", "significant", "fill_rate_before", "fill_rate_after",
    "fill_rate_change", "failure_rate_before", "failure_rate_after", "failure_rate_change")


def drift(before: Any, after: Any, *, test: Literal["mannwhitney", "ks"] = "mannwhitney",
          alpha: float = 0.05, by: _By = "target") -> pd.DataFrame:
    """Per target, what changed from batch ``before`` to batch ``after``.

    ``confidence_shift`` is the change of mean confidence; ``statistic`` and ``p_value``
    come from a two-sided Mann-Whitney U test (`mann_whitney`) or, with ``test="ks"``,
    a Kolmogorov-Smirnov test (`ks_2samp`) of the two confidence samples;
    ``significant`` is ``p_value < alpha``. Fill and failure rates are as in `scorecard`;
    ``*_change`` is after minus before. Each side is frames or anything `frames.fields`
    takes.
    """
    if test not in ("mannwhitney", "ks"):
        raise ValueError("test must be 'mannwhitney' or 'ks'")
    work_before, work_after = _work(before), _work(after)
    keys = _group_keys(by)
    card_before = scorecard(work_before, by=by)
    card_after = scorecard(work_after, by=by)
    index = card_before.index.append(card_after.index.difference(card_before.index,
                                                                 sort=False))
    if len(index) == 0:
        return _empty_summary(DRIFT_COLUMNS, by)
    samples_before = _samples(work_before, keys)
    samples_after = _samples(work_after, keys)
    run = mann_whitney if test == "mannwhitney" else ks_2samp
    stats = [run(samples_before.get(k, ()), samples_after.get(k, ())) for k in index]
    b, a = card_before.reindex(index), card_after.reindex(index)
    out = pd.DataFrame({
        "n_before": b["confidence_n"].fillna(0).astype(np.int64),
        "n_after": a["confidence_n"].fillna(0).astype(np.int64),
        "confidence_before": b["confidence_mean"],
        "confidence_after": a["confidence_mean"],
        "confidence_shift": a["confidence_mean"] - b["confidence_mean"],
        "statistic": [s for s, _ in stats],
        "p_value": [p for _, p in stats],
    }, index=index)
    out["significant"] = pd.array([None if math.isnan(p) else p < alpha
                                   for p in out["p_value"]], dtype="boolean")
    out["fill_rate_before"] = b["fill_rate"]
    out["fill_rate_after"] = a["fill_rate"]
    out["fill_rate_change"] = a["fill_rate"] - b["fill_rate"]
    out["failure_rate_before"] = 1 - b["pass_rate"]
    out["failure_rate_after"] = 1 - a["pass_rate"]
    out["failure_rate_change"] = out["failure_rate_after"] - out["failure_rate_before"]
    return out[list(DRIFT_COLUMNS)]


def _samples(work: pd.DataFrame, keys: list[str]) -> dict[Any, np.ndarray]:
    out: dict[Any, np.ndarray] = {}
    for key, group in work.groupby(keys, observed=True):
        out[key if len(keys) > 1 else key[0]] = group["confidence"].to_numpy(dtype=float)
    return out


# -- ground truth ----------------------------------------------------------------------------
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
      ``column`` for cells);
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


_as_truth = truth  # for functions whose ``truth`` parameter hides the function


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
    missing = {"document", "target_name", "value"} - set(table.columns)
    if missing and len(table.columns):
        raise ValueError(f"ground truth needs the columns document, target_name and value; "
                         f"missing: {', '.join(sorted(missing))}")
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


def _truth_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    for name in ("document", "value", "extraction_id", "value_id", "old_value"):
        frame[name] = frame[name].astype(_frames.STRING)
    for name in ("kind", "target_name", "header", "target_id", "source"):
        frame[name] = _names(frame[name].to_numpy(dtype=object))
    return frame[list(TRUTH_COLUMNS)]


def _concat_truth(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return _truth_from_table(pd.DataFrame())
    joined = pd.concat([p.astype({c: object for c in p.columns
                                  if isinstance(p[c].dtype, pd.CategoricalDtype)})
                        for p in parts], ignore_index=True)
    return _truth_dtypes(joined)


def _latest(ledger: pd.DataFrame) -> pd.DataFrame:
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
    latest = _latest(ledger)
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


# -- matching documents to truth -------------------------------------------------------------
def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))


def _matcher(candidates: Iterable[str]) -> Callable[[Any], str | None]:
    """Match a document name to the candidate sharing the longest path suffix with it.

    ``data/documents/invoices/inv-0001.pdf``, ``invoices/inv-0001.pdf`` and
    ``inv-0001.pdf`` all find the truth of ``invoices/inv-0001.pdf``; a tie between
    candidates (same file name in two folders, name without folder) matches none.
    """
    by_base: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for c in dict.fromkeys(candidates):
        parts = _parts(c)
        if parts:
            by_base.setdefault(parts[-1], []).append((c, parts))
    cache: dict[str, str | None] = {}

    def match(name: Any) -> str | None:
        if not isinstance(name, str):
            return None
        if name in cache:
            return cache[name]
        parts = _parts(name)
        best: list[str] = []
        best_len = 0
        for candidate, cparts in by_base.get(parts[-1] if parts else "", []):
            common = 0
            while (common < min(len(parts), len(cparts))
                   and parts[-1 - common] == cparts[-1 - common]):
                common += 1
            if common > best_len:
                best, best_len = [candidate], common
            elif common == best_len:
                best.append(candidate)
        cache[name] = best[0] if len(best) == 1 else None
        return cache[name]

    return match


# -- grading ---------------------------------------------------------------------------------
def grade(data: Any, truth: Any, *, cells: pd.DataFrame | None = None,
          normalize: Normalize = _DEFAULT_NORMALIZE) -> pd.DataFrame:
    """One row per compared value, columns `GRADE_COLUMNS`.

    With truth files or a table of expected values, each extraction whose
    ``document_name`` (or ``extraction_name``) matches a truth document by path suffix is
    compared target by target: fields on ``value_index``, cells on ``record`` (row
    counted across the target's tables in order) and ``column``. Only targets the truth
    lists for the document are graded; among those, a value the truth lacks is
    expected to be blank; an expected value never extracted has ``present`` False
    and no confidence. With a corrections ledger, each ledger entry is a row: its old
    value and confidence against its new value. ``correct`` compares after `normalize`
    with ``normalize`` (default: whitespace only).
    """
    expected = _as_truth(truth)
    work = _work(data, cells)
    if len(expected) and (expected["source"] == "ledger").all():
        graded = _grade_ledger(work, expected)
    else:
        graded = _grade_truth(work, expected)
    value_n = _normalized(graded["value"], normalize)
    expected_n = _normalized(graded["expected"], normalize)
    graded["correct"] = pd.array((value_n == expected_n).to_numpy(), dtype="boolean")
    graded.loc[graded["expected"].isna(), "correct"] = pd.NA
    return _grade_dtypes(graded, work)


def _grade_dtypes(graded: pd.DataFrame, work: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({name: graded[name] if name in graded.columns else None
                        for name in GRADE_COLUMNS})
    # Rows in the data's order (merges sort their keys): extraction, kind, target, place.
    known = list(work["target"].cat.categories) if len(work) else []
    order = list(dict.fromkeys(known + out["target"].astype(object).dropna().tolist()))
    out["target"] = pd.Categorical(out["target"].astype(object), categories=order)
    extraction_order = {e: i for i, e in enumerate(dict.fromkeys(work["extraction_id"]))}
    out = out.assign(
        _e=out["extraction_id"].map(extraction_order).astype(float),
        _k=(out["kind"] != "field").astype(int), _t=out["target"].cat.codes,
        _v=pd.to_numeric(out["value_index"], errors="coerce"),
        _r=pd.to_numeric(out["record"], errors="coerce"),
        _c=pd.to_numeric(out["column"], errors="coerce"),
    ).sort_values(["_e", "_k", "_t", "_v", "_r", "_c"], kind="stable", na_position="last")
    out = out.drop(columns=["_e", "_k", "_t", "_v", "_r", "_c"])
    for name in ("extraction_id", "document_name", "document", "kind", "target_name",
                 "header"):
        out[name] = _names(out[name].to_numpy(dtype=object))
    for name in ("value_index", "record", "column"):
        out[name] = pd.to_numeric(out[name], errors="coerce").astype("Int64")
    for name in ("value_id", "value", "expected"):
        out[name] = out[name].astype(object).astype(_frames.STRING)
    out["confidence"] = pd.to_numeric(out["confidence"], errors="coerce").astype(float)
    out["correct"] = out["correct"].astype("boolean")
    out["present"] = out["present"].astype(bool)
    return out.reset_index(drop=True)


def _records(work: pd.DataFrame) -> pd.Series:
    """Row numbers counted across each extraction's tables of a target, in table order."""
    cells = work.loc[work["kind"] == "cell", ["extraction_id", "target_name", "table_id", "row"]]
    if cells.empty:
        return pd.Series(dtype="Int64")
    keys = cells[["extraction_id", "target_name", "table_id"]].astype(object).fillna("")
    rows = pd.to_numeric(cells["row"], errors="coerce")
    sizes = (rows.groupby([keys[c] for c in keys.columns], sort=False).max() + 1).rename("n")
    sizes = sizes.reset_index()
    sizes["offset"] = sizes.groupby(["extraction_id", "target_name"], sort=False)["n"].transform(
        lambda s: s.cumsum() - s)
    offsets = keys.merge(sizes, on=["extraction_id", "target_name", "table_id"], how="left")
    return pd.Series(offsets["offset"].to_numpy() + rows.to_numpy(), index=cells.index)


def _grade_truth(work: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    match = _matcher(expected["document"].dropna().astype(str))
    work = work.copy()
    names = work["document_name"].astype(object)
    # A Batch may name documents differently from the extraction: try both names.
    work["document"] = names.map(match).fillna(
        work["extraction_name"].astype(object).map(match))
    work = work.loc[work["document"].notna()]
    extractions = work[["extraction_id", "document"]].astype(object).drop_duplicates()
    parts = []
    for kind, on in (("field", ["value_index"]), ("cell", ["record", "column"])):
        mine = work.loc[work["kind"] == kind].copy()
        if kind == "cell":
            mine["record"] = _records(work)
        theirs = expected.loc[expected["kind"] == kind, ["document", "target_name", *on,
                                                         "value"]].astype(object)
        theirs = theirs.rename(columns={"value": "expected"}).merge(extractions, on="document")
        keys = ["extraction_id", "target_name", *on]
        for frame in (mine, theirs):
            for k in keys:
                frame[k] = frame[k].astype(object)
            for k in on:
                frame[k] = pd.to_numeric(frame[k], errors="coerce").astype(float)
        # Only targets the truth speaks of for the document are graded: a truth of
        # fields alone says nothing about the tables.
        covered = theirs[["extraction_id", "target_name"]].drop_duplicates()
        mine = mine.merge(covered, on=["extraction_id", "target_name"], how="inner")
        mine["present"] = True
        both = mine.merge(theirs.drop(columns="document"), on=keys, how="outer")
        both["present"] = both["present"].astype(object).fillna(False).astype(bool)
        # A value the truth does not list should not exist: it is expected blank.
        both["expected"] = both["expected"].where(both["expected"].notna(), "")
        doc = both["extraction_id"].map(dict(zip(extractions["extraction_id"],
                                                 extractions["document"], strict=True)))
        both["document"] = doc
        names_of = dict(zip(work["extraction_id"], work["document_name"], strict=False))
        both["document_name"] = both["extraction_id"].map(names_of)
        both["kind"] = kind
        if kind == "field":
            both["target"] = both["target_name"]
        else:
            both = _cell_targets(both, work)
        parts.append(both)
    graded = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return graded


def _cell_targets(both: pd.DataFrame, work: pd.DataFrame) -> pd.DataFrame:
    """Header and label for cells only the truth has (their column's header elsewhere)."""
    cells = work.loc[work["kind"] == "cell"]
    heads = cells.dropna(subset=["header"]).drop_duplicates(["target_name", "column"])
    head_of = {(t, c): h for t, c, h in zip(heads["target_name"], heads["column"],
                                            heads["header"], strict=True)}
    missing = both["header"].isna()
    both.loc[missing, "header"] = [head_of.get((t, c)) for t, c in zip(
        both.loc[missing, "target_name"], both.loc[missing, "column"], strict=True)]
    labels = _labels_for_cells(both)
    both["target"] = labels
    return both


def _first_rows(work: pd.DataFrame, keys: list[str]) -> dict[Any, dict[str, Any]]:
    """The first row of ``work`` for each value of ``keys`` (a tuple key when several)."""
    part = work.dropna(subset=keys).drop_duplicates(keys)
    out: dict[Any, dict[str, Any]] = {}
    for row in part.to_dict("records"):
        out[tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]] = row
    return out


def _grade_ledger(work: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    """Each ledger entry against the value it corrected (found by ``value_id``)."""
    ledger = expected.astype({c: object for c in expected.columns
                              if isinstance(expected[c].dtype, pd.CategoricalDtype)})
    by_value = _first_rows(work, ["value_id"])
    # The ledger's target_id may be the configuration's or the extracted target's id.
    by_place = {**_first_rows(work, ["extraction_id", "extracted_target_id"]),
                **_first_rows(work, ["extraction_id", "target_id"])}
    by_target = {**_first_rows(work, ["extracted_target_id"]),
                 **_first_rows(work, ["target_id"])}
    rows = []
    for entry in ledger.to_dict("records"):
        value = by_value.get(entry["value_id"])
        place = value or by_place.get((entry["extraction_id"], entry["target_id"]))
        target = place or by_target.get(entry["target_id"])
        old, confidence = entry["old_value"], entry["old_confidence"]
        if value is not None and not isinstance(old, str):
            old = value["value"]
        if value is not None and (confidence is None or pd.isna(confidence)):
            confidence = value["confidence"]
        named = entry["target_name"] if isinstance(entry["target_name"], str) else (
            entry["target_id"])
        extraction_id = entry["extraction_id"]
        if not isinstance(extraction_id, str) and place is not None:
            extraction_id = place["extraction_id"]
        rows.append({
            "extraction_id": extraction_id,
            "document_name": place["document_name"] if place else None,
            "kind": target["kind"] if target else None,
            "target": target["target"] if target else named,
            "target_name": target["target_name"] if target else named,
            "header": value["header"] if value else None,
            "value_index": value["value_index"] if value else None,
            "column": value["column"] if value else None,
            "value_id": entry["value_id"], "value": old, "expected": entry["value"],
            "confidence": confidence, "present": isinstance(old, str),
        })
    return pd.DataFrame(rows, columns=[c for c in GRADE_COLUMNS if c != "correct"])


def _graded(data: Any, truth: Any, cells: pd.DataFrame | None, normalize: Normalize
            ) -> pd.DataFrame:
    """``data`` itself when it is already a `grade` frame, else graded."""
    if isinstance(data, pd.DataFrame) and "correct" in data.columns and truth is None:
        return data
    if truth is None:
        raise TypeError("give the ground truth (or a frame from grade)")
    return grade(data, truth, cells=cells, normalize=normalize)


def _groups(graded: pd.DataFrame, by: _By) -> list[tuple[Any, pd.DataFrame]]:
    """Each target's rows, then every row together as `ALL`."""
    keys = _group_keys(by)
    out = [(k if len(keys) > 1 else k[0], g)
           for k, g in graded.groupby(keys, observed=True, sort=True)]
    out.append((ALL if len(keys) == 1 else (ALL,) * len(keys), graded))
    return out


def _summary_index(labels: list[Any], by: _By) -> pd.Index:
    keys = _group_keys(by)
    if len(keys) == 1:
        return pd.Index(labels, name=keys[0], dtype=_frames.STRING)
    return pd.MultiIndex.from_tuples(labels, names=keys)


ACCURACY_COLUMNS: tuple[str, ...] = ("n", "n_correct", "accuracy", "n_missed", "n_spurious",
                                     "n_wrong")


def accuracy(data: Any, truth: Any = None, *, cells: pd.DataFrame | None = None,
             normalize: Normalize = _DEFAULT_NORMALIZE, by: _By = "target") -> pd.DataFrame:
    """Per target and overall (`ALL`): share of values equal to the truth after `normalize`.

    ``n_missed``: expected a value, got none or a blank; ``n_spurious``: expected blank,
    got a value; ``n_wrong``: both present and different. ``data`` may be a `grade`
    frame (then leave ``truth`` out).
    """
    graded = _graded(data, truth, cells, normalize)
    graded = graded.loc[graded["correct"].notna()]
    labels, rows = [], []
    blank_value = graded["value"].astype(object).fillna("").map(lambda s: not str(s).strip())
    blank_expected = graded["expected"].astype(object).fillna("").map(
        lambda s: not str(s).strip())
    for label, group in _groups(graded, by):
        idx = group.index
        correct = group["correct"].astype(bool)
        labels.append(label)
        rows.append({
            "n": len(group), "n_correct": int(correct.sum()),
            "accuracy": float(correct.mean()) if len(group) else math.nan,
            "n_missed": int((~correct & blank_value[idx] & ~blank_expected[idx]).sum()),
            "n_spurious": int((~correct & ~blank_value[idx] & blank_expected[idx]).sum()),
            "n_wrong": int((~correct & ~blank_value[idx] & ~blank_expected[idx]).sum()),
        })
    return pd.DataFrame(rows, index=_summary_index(labels, by), columns=list(ACCURACY_COLUMNS))


# -- calibration -----------------------------------------------------------------------------
CALIBRATION_TABLE_COLUMNS: tuple[str, ...] = ("lower", "upper", "n", "confidence", "accuracy",
                                              "gap")
CALIBRATION_COLUMNS: tuple[str, ...] = ("n", "accuracy", "confidence", "overconfidence",
                                        "ece", "brier")


@dataclass(frozen=True)
class Calibration:
    """Reliability of confidence: ``table`` per target and bin, ``summary`` per target.

    ``table`` (index target, bin): bin edges, values, mean confidence, accuracy and
    ``gap`` (confidence minus accuracy); empty bins are kept with NaN means.
    ``summary`` (index target, last row `ALL`): accuracy, mean confidence,
    ``overconfidence`` (their difference), expected calibration error ``ece`` and Brier
    score ``brier``. `ece` and `brier` are the overall figures.
    """

    table: pd.DataFrame
    summary: pd.DataFrame
    bins: int

    @property
    def ece(self) -> float:
        return float(self.summary["ece"].iloc[-1]) if len(self.summary) else math.nan

    @property
    def brier(self) -> float:
        return float(self.summary["brier"].iloc[-1]) if len(self.summary) else math.nan

    def _repr_html_(self) -> str:
        return str(self.summary._repr_html_())


def _scored(graded: pd.DataFrame) -> pd.DataFrame:
    """Rows that have both a confidence and a verdict."""
    return graded.loc[graded["correct"].notna() & np.isfinite(graded["confidence"])]


def calibration(data: Any, truth: Any = None, *, bins: int = 10,
                cells: pd.DataFrame | None = None, normalize: Normalize = _DEFAULT_NORMALIZE,
                by: _By = "target") -> Calibration:
    """How well confidence predicts correctness, per target and overall.

    Confidences fall into ``bins`` equal bins on [0, 1] (1.0 in the last);
    ECE is the sum over bins of ``n_bin / n * |accuracy - confidence|``, Brier the mean
    of ``(confidence - correct)**2``. Values without a confidence are left out.
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    graded = _scored(_graded(data, truth, cells, normalize))
    edges = np.linspace(0.0, 1.0, bins + 1)
    table_rows: list[dict[str, Any]] = []
    labels, summary_rows = [], []
    for label, group in _groups(graded, by):
        conf = group["confidence"].to_numpy(dtype=float)
        hit = group["correct"].to_numpy(dtype=bool).astype(float)
        which = np.clip(np.floor(conf * bins).astype(np.int64), 0, bins - 1)
        n = len(conf)
        ece = 0.0
        for b in range(bins):
            mask = which == b
            count = int(mask.sum())
            mean_conf = float(conf[mask].mean()) if count else math.nan
            acc = float(hit[mask].mean()) if count else math.nan
            if count:
                ece += count / n * abs(acc - mean_conf)
            table_rows.append({"target": label, "bin": b, "lower": edges[b],
                               "upper": edges[b + 1], "n": count, "confidence": mean_conf,
                               "accuracy": acc, "gap": mean_conf - acc})
        labels.append(label)
        summary_rows.append({
            "n": n, "accuracy": float(hit.mean()) if n else math.nan,
            "confidence": float(conf.mean()) if n else math.nan,
            "overconfidence": float(conf.mean() - hit.mean()) if n else math.nan,
            "ece": ece if n else math.nan,
            "brier": float(np.mean((conf - hit) ** 2)) if n else math.nan})
    table = pd.DataFrame(table_rows, columns=["target", "bin", *CALIBRATION_TABLE_COLUMNS])
    table = table.set_index(["target", "bin"])
    summary = pd.DataFrame(summary_rows, index=_summary_index(labels, by),
                           columns=list(CALIBRATION_COLUMNS))
    return Calibration(table=table, summary=summary, bins=bins)


# -- thresholds ------------------------------------------------------------------------------
SWEEP_COLUMNS: tuple[str, ...] = ("target", "threshold", "n", "n_accepted", "n_errors",
                                  "automation_rate", "error_rate")
RECOMMENDED_COLUMNS: tuple[str, ...] = ("threshold", "automation_rate", "error_rate",
                                        "n_accepted", "n")


@dataclass(frozen=True)
class Thresholds:
    """Automation against errors for auto-accept thresholds.

    ``sweep``: for each target (and `ALL`) and threshold, values accepted
    (confidence >= threshold) over all values (``automation_rate``) and wrong ones among
    those accepted (``error_rate``). ``recommended`` (index target): the lowest threshold
    whose error rate stays within ``error_budget``, NaN when none does. `threshold` is
    the overall recommendation.
    """

    sweep: pd.DataFrame
    recommended: pd.DataFrame
    error_budget: float

    @property
    def threshold(self) -> float:
        return float(self.recommended["threshold"].iloc[-1]) if len(
            self.recommended) else math.nan

    def _repr_html_(self) -> str:
        return str(self.recommended._repr_html_())


def thresholds(data: Any, truth: Any = None, *, error_budget: float = 0.01,
               grid: int | Sequence[float] | None = None, cells: pd.DataFrame | None = None,
               normalize: Normalize = _DEFAULT_NORMALIZE, by: _By = "target") -> Thresholds:
    """Sweep auto-accept thresholds; recommend one per target and overall.

    ``grid``: the thresholds to try: None for every distinct confidence (exact), an
    integer ``k`` for ``k + 1`` steps over [0, 1], or a sequence. Values without a
    confidence count in ``n`` but are never accepted.
    """
    if not 0 <= error_budget <= 1:
        raise ValueError("error_budget is a rate between 0 and 1")
    graded = _graded(data, truth, cells, normalize)
    graded = graded.loc[graded["correct"].notna()]
    all_conf = graded["confidence"].to_numpy(dtype=float)
    if grid is None:
        steps = np.unique(all_conf[np.isfinite(all_conf)])
    elif isinstance(grid, int):
        steps = np.linspace(0.0, 1.0, grid + 1)
    else:
        steps = np.unique(np.asarray(grid, dtype=float))
    sweep_parts, labels, best_rows = [], [], []
    for label, group in _groups(graded, by):
        conf = group["confidence"].to_numpy(dtype=float)
        wrong = ~group["correct"].to_numpy(dtype=bool)
        n = len(conf)
        finite = np.isfinite(conf)
        order = np.argsort(conf[finite], kind="stable")
        sorted_conf = conf[finite][order]
        errors_from = np.concatenate([np.cumsum(wrong[finite][order][::-1])[::-1], [0]])
        start = np.searchsorted(sorted_conf, steps, side="left")
        accepted = len(sorted_conf) - start
        errors = errors_from[start]
        with np.errstate(invalid="ignore", divide="ignore"):
            automation = accepted / n if n else np.full(len(steps), np.nan)
            error_rate = np.where(accepted > 0, errors / np.maximum(accepted, 1), np.nan)
        sweep_parts.append(pd.DataFrame({
            "target": [label] * len(steps), "threshold": steps, "n": n,
            "n_accepted": accepted.astype(np.int64), "n_errors": errors.astype(np.int64),
            "automation_rate": automation, "error_rate": error_rate}))
        ok = np.flatnonzero((accepted > 0) & (error_rate <= error_budget + 1e-12))
        labels.append(label)
        if len(ok):
            i = ok[0]  # lowest threshold within budget: the most automation
            best_rows.append({"threshold": steps[i], "automation_rate": automation[i],
                              "error_rate": error_rate[i], "n_accepted": int(accepted[i]),
                              "n": n})
        else:
            best_rows.append({"threshold": math.nan, "automation_rate": 0.0,
                              "error_rate": math.nan, "n_accepted": 0, "n": n})
    sweep = pd.concat(sweep_parts, ignore_index=True) if sweep_parts else pd.DataFrame(
        columns=list(SWEEP_COLUMNS))
    recommended = pd.DataFrame(best_rows, index=_summary_index(labels, by),
                               columns=list(RECOMMENDED_COLUMNS))
    return Thresholds(sweep=sweep[list(SWEEP_COLUMNS)], recommended=recommended,
                      error_budget=error_budget)


# -- comparing two batches -------------------------------------------------------------------
COMPARE_COLUMNS: tuple[str, ...] = (
    "n_a", "n_b", "confidence_a", "confidence_b", "confidence_delta", "failure_rate_a",
    "failure_rate_b", "failure_rate_delta", "fill_rate_a", "fill_rate_b", "fill_rate_delta",
    "accuracy_a", "accuracy_b", "accuracy_delta")


def compare(a: Any, b: Any, truth: Any = None, *,
            normalize: Normalize = _DEFAULT_NORMALIZE, by: _By = "target") -> pd.DataFrame:
    """Two batches or configurations on the documents they share, per target.

    Documents are matched by name (path suffix, as for the truth); each side keeps
    only documents found in the other. ``*_delta`` is b minus a. Accuracy needs
    ``truth`` (NaN without). Targets are matched by name, so two versions of a
    configuration compare even when their target ids differ.
    """
    work_a, work_b = _work(a), _work(b)
    match = _matcher(work_b["document_name"].dropna().astype(str))
    in_b = work_a["document_name"].map(match)
    shared_b = set(in_b.dropna())
    work_a = work_a.loc[in_b.notna()]
    work_b = work_b.loc[work_b["document_name"].isin(shared_b)]
    card_a = scorecard(work_a, by=by)
    card_b = scorecard(work_b, by=by)
    index = card_a.index.append(card_b.index.difference(card_a.index, sort=False))
    if len(index) == 0:
        return _empty_summary(COMPARE_COLUMNS, by)
    ca, cb = card_a.reindex(index), card_b.reindex(index)
    out = pd.DataFrame({
        "n_a": ca["n_values"].fillna(0).astype(np.int64),
        "n_b": cb["n_values"].fillna(0).astype(np.int64),
        "confidence_a": ca["confidence_mean"], "confidence_b": cb["confidence_mean"],
        "failure_rate_a": 1 - ca["pass_rate"], "failure_rate_b": 1 - cb["pass_rate"],
        "fill_rate_a": ca["fill_rate"], "fill_rate_b": cb["fill_rate"],
    }, index=index)
    out["confidence_delta"] = out["confidence_b"] - out["confidence_a"]
    out["failure_rate_delta"] = out["failure_rate_b"] - out["failure_rate_a"]
    out["fill_rate_delta"] = out["fill_rate_b"] - out["fill_rate_a"]
    if truth is not None:
        acc_a = accuracy(work_a, truth, normalize=normalize, by=by)
        acc_b = accuracy(work_b, truth, normalize=normalize, by=by)
        out["accuracy_a"] = acc_a["accuracy"].reindex(index)
        out["accuracy_b"] = acc_b["accuracy"].reindex(index)
    else:
        out["accuracy_a"] = np.nan
        out["accuracy_b"] = np.nan
    out["accuracy_delta"] = out["accuracy_b"] - out["accuracy_a"]
    return out[list(COMPARE_COLUMNS)]
