"""Values grouped: the statistics an audit asks of its data, wherever the data is.

The audits take frames in memory or a `frames.Dataset` on disk: two sources of one
relation, the work frame (`work`) and the dataset's ``work`` view (`workview`). Each
source computes the same per-group statistics, pandas over the frame
(`grouped_frames`) and DuckDB over the files (`grouped_dataset`); the audits
(`summaries`, `shift`, `comparison`) turn those into their frames with one piece of code,
so what a fill rate divides by, how groups sort and how a target is labelled are
written once.

The statistics are sufficient for every figure the audits give: counts (values, values
filled, judged, passed, failed, corrected), the distinct extractions with a filled field,
the configurations of each group and the extractions of each configuration, the
confidences' sum, and how many values have each distinct confidence (the service rounds
confidences to 4 decimals: at most 10,001 per group). From the last come the count, the
minimum, the quantiles, the share below a threshold, and the two-sample tests of `drift`.

This module holds what both sources return (`ValueGroups` for `scorecard`, `drift` and
`compare`; `FailureGroups` for `failures`; `ExtractionGroups` for `documents`; `Level`,
a key's values in the order its groups sort) and the figures made from them that more
than one audit reads (`group_order`, `confidence_figures`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..frames.dtypes import STRING

__all__ = [
    "EXTRACTION_COLUMNS",
    "ExtractionGroups",
    "FAILURE_GROUP_COLUMNS",
    "FailureGroups",
    "GROUP_COLUMNS",
    "Level",
    "MISSING_EXTRACTION",
    "QUANTILES",
    "ValueGroups",
    "confidence_figures",
    "group_order",
    "group_positions",
]

#: The columns of `ValueGroups.groups` after the keys: ``kind``, ``target_name`` and
#: ``header`` are the group's first non-missing ones (in the rows' order); the rest count
#: values: all, fields, filled cells, judged by validation, passed, failed, whose
#: ``value_id`` is in a corrected set; ``n_found`` the distinct extractions with a
#: filled field (a missing extraction id is one); ``confidence_sum`` the group's
#: confidences added up (the mean is it over the count).
GROUP_COLUMNS: tuple[str, ...] = (
    "kind", "target_name", "header", "n_values", "n_fields", "n_cells_filled", "n_judged",
    "n_passed", "n_failed", "n_corrected", "n_found", "confidence_sum")
#: The confidence quantiles of a scorecard, interpolated linearly (pandas' default).
QUANTILES: tuple[float, ...] = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class Level:
    """The values of one key in the order its groups sort: ``index`` is the level of
    the audits' result index (a `pandas.CategoricalIndex` for a key the work frame holds
    as categories, in first-seen order; otherwise sorted values with their dtype)."""

    index: pd.Index

    @property
    def categorical(self) -> bool:
        return isinstance(self.index, pd.CategoricalIndex)

    @classmethod
    def of_categories(cls, values: Sequence[Any]) -> Level:
        categories = pd.Index(list(values), dtype=STRING)
        return cls(pd.CategoricalIndex(categories, categories=categories))


@dataclass(frozen=True)
class ValueGroups:
    """A source's statistics of its values per group of ``keys``.

    ``groups``: one row per group with a value for every key (rows with a missing key
    belong to none), the key columns then `GROUP_COLUMNS`, in any order;
    ``levels``: each key's `Level`. The other tables point to a group by its row
    number in ``groups`` (column ``group``):

    - ``confidences``: ``group``, ``confidence``, ``n``: how many of the group's values
      have each distinct confidence, ascending within a group (no missing ones);
    - ``conditions``: ``group``, ``condition``, ``n``: values per failed condition
      (empty when not asked for), and ``condition_ranks`` the order conditions are
      first seen in (a tie between two goes to the first);
    - ``configurations``: ``group``, ``configuration``: each configuration id a group's
      values come from, and ``extractions`` the extractions of each configuration over
      all values (and the extra pairs a caller gave); a missing id, of either, is ``""``.
    """

    keys: list[str]
    levels: list[Level]
    groups: pd.DataFrame
    confidences: pd.DataFrame
    conditions: pd.DataFrame
    condition_ranks: dict[str, int]
    configurations: pd.DataFrame
    extractions: dict[str, int]


#: The columns of `FailureGroups.rows` after the keys and ``condition``: the first
#: failed value's ``kind``; ``n`` failed values; the distinct extractions among them; up
#: to ``examples`` distinct values, the most frequent first (a tie: the first seen), and
#: as many documents in the order first seen.
FAILURE_GROUP_COLUMNS: tuple[str, ...] = ("kind", "n", "n_documents", "examples", "documents")


@dataclass(frozen=True)
class FailureGroups:
    """A source's failed validations per group of ``keys`` and condition.

    ``rows``: one per group and condition (a value failing with two messages counts
    under both; a message twice is one), the key columns, ``condition``, then
    `FAILURE_GROUP_COLUMNS`, in any order; ``totals``: every group of the values (failed
    or not), the key columns and ``n`` (its values); ``levels``: each key's `Level`.
    """

    keys: list[str]
    levels: list[Level]
    rows: pd.DataFrame
    totals: pd.DataFrame


#: The key of the values without an extraction id in `ExtractionGroups`.
MISSING_EXTRACTION = "?"
#: The columns of `ExtractionGroups.rows`: the extraction's id (`MISSING_EXTRACTION`
#: when missing), its first document and configuration name, values, filled ones, the
#: confidences' count, sum and minimum, failed values, and the targets with a failed
#: value (`labels.target_label`s, in the order the targets are first seen).
EXTRACTION_COLUMNS: tuple[str, ...] = (
    "extraction_id", "document_name", "configuration_name", "n_values", "n_filled",
    "confidence_n", "confidence_sum", "confidence_min", "n_failed", "failed_targets")


@dataclass(frozen=True)
class ExtractionGroups:
    """A source's values per extraction: ``rows`` with `EXTRACTION_COLUMNS`, one per
    extraction in the order their first values come."""

    rows: pd.DataFrame


def group_positions(groups: pd.DataFrame, keys: Sequence[str], levels: Sequence[Level]
                    ) -> list[np.ndarray]:
    """Each group's position in each key's level."""
    return [level.index.get_indexer(pd.Index(groups[key].to_numpy(dtype=object), dtype=object)
                                    if level.categorical else groups[key].to_numpy())
            for key, level in zip(keys, levels, strict=True)]


def group_order(groups: pd.DataFrame, keys: Sequence[str], levels: Sequence[Level]
                ) -> tuple[np.ndarray, pd.Index]:
    """The order of ``groups`` (one row per group) and the index of the result in that
    order, as pandas' ``groupby(keys, observed=True, sort=True)`` of the work frame gives
    it: by each key's level in turn; a MultiIndex for several keys."""
    positions = group_positions(groups, keys, levels)
    order = (np.lexsort(positions[::-1]) if len(groups) else np.arange(0))
    codes = [p[order] for p in positions]
    if len(keys) == 1:
        level = levels[0].index
        if isinstance(level, pd.CategoricalIndex):
            index: pd.Index = pd.CategoricalIndex(
                pd.Categorical.from_codes(codes[0], categories=level.categories),
                name=keys[0])
        else:
            index = level.take(codes[0]).rename(keys[0])
        return order, index
    return order, pd.MultiIndex(levels=[level.index for level in levels], codes=codes,
                                names=list(keys), verify_integrity=False)


def confidence_figures(confidences: pd.DataFrame, n_groups: int, threshold: float | None
                       ) -> dict[str, np.ndarray]:
    """Per group (its row in ``groups``), from its distinct confidences and their counts:
    ``n``, ``min``, the `QUANTILES` (``p10`` ...) and, with a threshold, ``below`` (the
    values under it). A group without a confidence has n 0 and NaN for the rest."""
    group = confidences["group"].to_numpy(dtype=np.int64)
    values = confidences["confidence"].to_numpy(dtype=float)
    counts = confidences["n"].to_numpy(dtype=np.int64)
    cum = np.cumsum(counts)
    starts = np.searchsorted(group, np.arange(n_groups), side="left")
    ends = np.searchsorted(group, np.arange(n_groups), side="right")
    has = ends > starts
    before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0) if len(cum) else (
        np.zeros(n_groups, dtype=np.int64))
    n = np.where(has, cum[np.maximum(ends - 1, 0)] - before, 0) if len(cum) else before
    out: dict[str, np.ndarray] = {"n": n.astype(np.int64)}
    out["min"] = np.where(has, values[np.minimum(starts, max(len(values) - 1, 0))], np.nan
                          ) if len(values) else np.full(n_groups, np.nan)
    for q in QUANTILES:
        out[f"p{round(q * 100):d}"] = _quantile(values, cum, before, n, has, q)
    if threshold is not None:
        below = np.zeros(n_groups, dtype=np.int64)
        under = values < threshold
        np.add.at(below, group[under], counts[under])
        out["below"] = below
    return out


def _quantile(values: np.ndarray, cum: np.ndarray, before: np.ndarray, n: np.ndarray,
              has: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile of each group from counts, as pandas computes it from the
    sorted values: the value at ``q * (n - 1)``, interpolated linearly to the next."""
    if not len(values):
        return np.full(len(n), np.nan)
    at = q * (np.maximum(n, 1) - 1).astype(float)
    lower = at.astype(np.int64)
    fraction = at % 1
    # The value at a position is the first distinct one whose running count passes it.
    low = values[np.minimum(np.searchsorted(cum, before + lower, side="right"),
                            len(values) - 1)]
    high = values[np.minimum(np.searchsorted(cum, before + np.minimum(lower + 1, n - 1),
                                             side="right"), len(values) - 1)]
    with np.errstate(invalid="ignore"):
        found = np.where(fraction == 0.0, low, low + (high - low) * fraction)
    return np.where(has, found, np.nan)
