"""The per-group statistics of frames in memory (`grouped`), by pandas and numpy.

The work frame (`work.work_frame`) is grouped once; the counts are weighted bincounts of
the group numbers, the confidences' sum is pandas' own (so a mean is pandas' mean to the
last bit), and the distinct confidences come from one sort of (group, confidence).
A key's level is the work frame's categories for a categorical column (the order pandas
sorts its groups by), else the key's sorted values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..frames.conditions import failed_messages
from .grouped import (
    EXTRACTION_COLUMNS,
    MISSING_EXTRACTION,
    ExtractionGroups,
    FailureGroups,
    Level,
    ValueGroups,
)

__all__ = ["extraction_groups", "extractions", "failure_groups", "levels", "value_groups"]


def levels(work: pd.DataFrame, keys: Sequence[str]) -> list[Level]:
    """Each key's `grouped.Level` in ``work``."""
    out = []
    for key in keys:
        column = work[key]
        if isinstance(column.dtype, pd.CategoricalDtype):
            out.append(Level(pd.CategoricalIndex(column.cat.categories,
                                                 categories=column.cat.categories)))
        else:
            out.append(Level(pd.Index(pd.factorize(column, sort=True)[1])))
    return out


def _ids(column: pd.Series, more: list[Any]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Codes of a column of ids and of some more ids, and the id of each code; a missing
    id is ``""``."""
    codes, uniques = pd.factorize(column)  # a categorical's codes, or one hash of the texts
    names = [str(v) for v in uniques]
    index = {name: i for i, name in enumerate(names)}
    blank = index.setdefault("", len(names))
    if blank == len(names):
        names.append("")
    more_codes = []
    for value in more:
        name = "" if value is None or (not isinstance(value, str) and pd.isna(value)) else (
            str(value))
        if name not in index:
            index[name] = len(names)
            names.append(name)
        more_codes.append(index[name])
    return (np.where(codes < 0, blank, codes).astype(np.int64),
            np.array(more_codes, dtype=np.int64), names)


def extractions(work: pd.DataFrame, extra: pd.DataFrame | None) -> dict[str, int]:
    """The distinct extraction ids of each configuration id among ``work``'s rows and the
    (configuration, extraction) pairs of ``extra``; a missing id, of either, is ``""``."""
    more = extra if extra is not None and len(extra) else pd.DataFrame(
        {"configuration_id": [], "extraction_id": []})
    cfg, cfg_more, cfg_names = _ids(work["configuration_id"],
                                    more["configuration_id"].astype(object).tolist())
    ext, ext_more, ext_names = _ids(work["extraction_id"],
                                    more["extraction_id"].astype(object).tolist())
    found, _ = _distinct(np.concatenate([cfg, cfg_more]), np.concatenate([ext, ext_more]),
                         len(ext_names))
    counts = np.bincount(found[:, 0], minlength=len(cfg_names))
    return {name: int(counts[i]) for i, name in enumerate(cfg_names) if counts[i]}


def _counts(group: np.ndarray, n_groups: int, flags: Any) -> np.ndarray:
    weights = np.asarray(flags, dtype=bool)
    return np.bincount(group[weights], minlength=n_groups).astype(np.int64)


def _distinct(group: np.ndarray, codes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (group, code) pairs (codes from 0 to ``width - 1``), and how many rows
    have each, sorted by group then code."""
    key = group.astype(np.int64) * width + codes
    if len(key) and int(key.max()) < 4 * len(key) + 1_000_000:  # a count per possible pair
        counts = np.bincount(key)
        pairs = np.flatnonzero(counts)
        counts = counts[pairs]
    else:  # a hash of the pairs there are (a sort of millions would cost seconds)
        found = pd.Series(key).value_counts(sort=False).sort_index()
        pairs, counts = found.index.to_numpy(np.int64), found.to_numpy(np.int64)
    return np.column_stack([pairs // width, pairs % width]), counts.astype(np.int64)


def value_groups(work: pd.DataFrame, keys: Sequence[str], *,
                 corrected: Collection[Any] | None = None, pairs: pd.DataFrame | None = None,
                 conditions: bool = True) -> ValueGroups:
    """`grouped.ValueGroups` of a work frame: ``corrected`` the ids of corrected values,
    ``pairs`` more (configuration, extraction) ids for the extraction counts (a frame
    with those two columns)."""
    keys = list(keys)
    grouping = work.groupby(keys, observed=True, sort=False)
    size = grouping.size()
    n_groups = len(size)
    number = grouping.ngroup().to_numpy(dtype=float, na_value=np.nan)
    member = ~np.isnan(number)
    group = np.where(member, number, 0).astype(np.int64)
    in_group = group[member]
    index = size.index
    groups = pd.DataFrame({key: (index.get_level_values(key) if len(keys) > 1 else index
                                 ).to_numpy(dtype=object) for key in keys})
    first = grouping[["kind", "target_name", "header"]].first()
    for name in ("kind", "target_name", "header"):
        groups[name] = first[name].to_numpy(dtype=object)
    is_field = (work["kind"] == "field").to_numpy(dtype=bool)
    filled = work["filled"].to_numpy(dtype=bool)
    passed = work["passed"]
    groups["n_values"] = size.to_numpy(dtype=np.int64)
    groups["n_fields"] = _counts(in_group, n_groups, is_field[member])
    groups["n_cells_filled"] = _counts(in_group, n_groups, (~is_field & filled)[member])
    groups["n_judged"] = _counts(in_group, n_groups, passed.notna().to_numpy()[member])
    groups["n_passed"] = _counts(in_group, n_groups,
                                 passed.eq(True).fillna(False).to_numpy(bool)[member])
    groups["n_failed"] = _counts(in_group, n_groups,
                                 passed.eq(False).fillna(False).to_numpy(bool)[member])
    groups["n_corrected"] = (_counts(in_group, n_groups,
                                     work["value_id"].isin(corrected).to_numpy()[member])
                             if corrected is not None else np.zeros(n_groups, dtype=np.int64))
    # Distinct extractions with a filled field; a missing id is one more (as
    # drop_duplicates keeps one NA).
    found = member & is_field & filled
    extraction = pd.factorize(work["extraction_id"], use_na_sentinel=False)[0]
    width = int(extraction.max()) + 1 if len(extraction) else 1
    found_pairs, _ = _distinct(group[found], extraction[found], width)
    groups["n_found"] = np.bincount(found_pairs[:, 0], minlength=n_groups).astype(np.int64)
    groups["confidence_sum"] = grouping["confidence"].sum().to_numpy(dtype=float)
    return ValueGroups(
        keys=keys, levels=levels(work, keys), groups=groups,
        confidences=_confidences(work["confidence"].to_numpy(dtype=float), group, member),
        **_conditions(work, group, member, n_groups, conditions),
        **_configurations(work, group, member, pairs))


def _confidences(values: np.ndarray, group: np.ndarray, member: np.ndarray) -> pd.DataFrame:
    keep = member & ~np.isnan(values)
    codes, uniques = pd.factorize(values[keep])
    # Codes ranked by value, so that pairs sort by group then confidence.
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order] = np.arange(len(uniques))
    found, counts = _distinct(group[keep], rank[codes], max(len(uniques), 1))
    return pd.DataFrame({"group": found[:, 0], "confidence": uniques[order][found[:, 1]],
                         "n": counts})


def _conditions(work: pd.DataFrame, group: np.ndarray, member: np.ndarray, n_groups: int,
                wanted: bool) -> dict[str, Any]:
    condition = work["condition"].array
    categories = list(condition.categories) if wanted else []
    codes = np.asarray(condition.codes, dtype=np.int64)
    keep = member & (codes >= 0) if wanted else np.zeros(len(codes), dtype=bool)
    found, counts = _distinct(group[keep], codes[keep], max(len(categories), 1))
    return {"conditions": pd.DataFrame({
                "group": found[:, 0], "condition": np.array(categories, dtype=object)[
                    found[:, 1]] if len(found) else np.array([], dtype=object),
                "n": counts.astype(np.int64)}),
            "condition_ranks": {c: i for i, c in enumerate(categories)}}


def _configurations(work: pd.DataFrame, group: np.ndarray, member: np.ndarray,
                    pairs: pd.DataFrame | None) -> dict[str, Any]:
    codes, _, names = _ids(work["configuration_id"], [])
    found, _ = _distinct(group[member], codes[member], max(len(names), 1))
    return {"configurations": pd.DataFrame({
                "group": found[:, 0],
                "configuration": np.asarray(names, dtype=object)[found[:, 1]]
                if len(found) else np.array([], dtype=object)}),
            "extractions": extractions(work, pairs)}


def failure_groups(work: pd.DataFrame, keys: Sequence[str], examples: int) -> FailureGroups:
    """`grouped.FailureGroups` of a work frame."""
    keys = list(keys)
    totals = work.groupby(keys, observed=True, sort=False).size()
    total_frame = pd.DataFrame({key: (totals.index.get_level_values(key) if len(keys) > 1
                                      else totals.index).to_numpy(dtype=object)
                                for key in keys})
    total_frame["n"] = totals.to_numpy(dtype=np.int64)
    at, _, conditions_ = failed_messages(work["passed"].eq(False).fillna(False).to_numpy(bool),
                                         work["messages"], work["value"], work["condition"])
    exploded = work[list(dict.fromkeys(
        [*keys, "kind", "value", "extraction_id", "document_name"]))].iloc[at].reset_index(
        drop=True)
    exploded["condition"] = conditions_
    rows = []
    for key, group in exploded.groupby([*keys, "condition"], observed=True, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        # A missing value (NA in the frame) is no example.
        common = Counter(v for v in group["value"] if isinstance(v, str)).most_common(examples)
        docs = list(dict.fromkeys(d for d in group["document_name"] if isinstance(d, str)))
        rows.append({**dict(zip([*keys, "condition"], key, strict=True)),
                     "kind": group["kind"].iloc[0], "n": len(group),
                     "n_documents": group["extraction_id"].nunique(),
                     "examples": tuple(v for v, _ in common),
                     "documents": tuple(docs[:examples])})
    return FailureGroups(keys=keys, levels=levels(work, keys), rows=pd.DataFrame(
        rows, columns=[*dict.fromkeys([*keys, "condition", "kind"]), "n", "n_documents",
                       "examples", "documents"]), totals=total_frame)


def extraction_groups(work: pd.DataFrame) -> ExtractionGroups:
    """`grouped.ExtractionGroups` of a work frame."""
    # The extraction as a plain key (never written back: work may be the caller's frame).
    key = pd.Series(work["extraction_id"].astype(object).fillna(MISSING_EXTRACTION).to_numpy(),
                    index=work.index, name="extraction_id")
    grouping = work.groupby(key, sort=False)
    failed = work["passed"].eq(False).fillna(False).to_numpy(bool)
    # A target's rank is its category's: the order the work frame first sees them.
    targets = work.loc[failed, "target"]
    listed = pd.DataFrame({"key": key[failed].to_numpy(), "rank": targets.cat.codes.to_numpy()})
    listed = listed.loc[listed["rank"] >= 0].drop_duplicates().sort_values(
        ["key", "rank"], kind="stable")
    names = np.asarray(targets.cat.categories, dtype=object)
    failed_targets = {k: tuple(names[r]) for k, r in listed.groupby("key", sort=False)["rank"]}
    first = grouping[["document_name", "configuration_name"]].first()
    confidence = grouping["confidence"]
    empty: tuple[str, ...] = ()
    rows = pd.DataFrame({
        "extraction_id": first.index.to_numpy(dtype=object),
        "document_name": first["document_name"].to_numpy(dtype=object),
        "configuration_name": first["configuration_name"].to_numpy(dtype=object),
        "n_values": grouping.size().to_numpy(dtype=np.int64),
        "n_filled": grouping["filled"].sum().to_numpy(dtype=np.int64),
        "confidence_n": confidence.count().to_numpy(dtype=np.int64),
        "confidence_sum": confidence.sum().to_numpy(dtype=float),
        "confidence_min": confidence.min().to_numpy(dtype=float),
        "n_failed": pd.Series(failed, index=work.index).groupby(key, sort=False).sum()
        .to_numpy(dtype=np.int64),
    })
    rows["failed_targets"] = [failed_targets.get(k, empty) for k in rows["extraction_id"]]
    return ExtractionGroups(rows[list(EXTRACTION_COLUMNS)])
