"""`drift`: per target, what changed from one batch to the next."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd

from .grouped import ValueGroups
from .significance import ks_counts, mann_whitney_counts
from .sources import source
from .summaries import SCORECARD_COLUMNS, scorecard_frame
from .work import By, empty_summary

__all__ = ["DRIFT_COLUMNS", "aligned", "drift"]

DRIFT_COLUMNS: tuple[str, ...] = (
    "n_before", "n_after", "confidence_before", "confidence_after", "confidence_shift",
    "statistic", "p_value", "significant", "fill_rate_before", "fill_rate_after",
    "fill_rate_change", "failure_rate_before", "failure_rate_after", "failure_rate_change")


def drift(before: Any, after: Any, *, test: Literal["mannwhitney", "ks"] = "mannwhitney",
          alpha: float = 0.05, by: By = "target") -> pd.DataFrame:
    """Per target, what changed from batch ``before`` to batch ``after``.

    ``confidence_shift`` is the change of mean confidence; ``statistic`` and ``p_value``
    come from a two-sided Mann-Whitney U test (`mann_whitney`) or, with ``test="ks"``,
    a Kolmogorov-Smirnov test (`ks_2samp`) of the two confidence samples;
    ``significant`` is ``p_value < alpha``. Fill and failure rates are as in `scorecard`;
    ``*_change`` is after minus before. Each side is frames or anything `frames.fields`
    takes, or a `frames.Dataset` (``ds.select("monday")``), aggregated by DuckDB: no
    value comes into Python, only counts per target and distinct confidence (both tests
    depend on a sample only through them).
    """
    if test not in ("mannwhitney", "ks"):
        raise ValueError("test must be 'mannwhitney' or 'ks'")
    sides = []
    for data in (before, after):
        with source(data, None, "drift") as side:
            keys = side.keys(by, "drift", names_only=True)
            sides.append(None if side.empty else side.values(keys, conditions=False))
    first, second = sides
    card_before, card_after = (empty_summary(SCORECARD_COLUMNS, by) if s is None
                               else scorecard_frame(s) for s in sides)
    index = card_before.index.append(card_after.index.difference(card_before.index,
                                                                 sort=False))
    if len(index) == 0:
        return empty_summary(DRIFT_COLUMNS, by)
    run = mann_whitney_counts if test == "mannwhitney" else ks_counts
    samples_before, samples_after = _samples(first), _samples(second)
    stats = [run(*aligned(samples_before.get(k, _NONE), samples_after.get(k, _NONE)))
             for k in index]
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


_NONE = (np.zeros(0, dtype=float), np.zeros(0, dtype=np.int64))


def _samples(groups: ValueGroups | None) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    """Each group's distinct confidences and their counts, by the group's key (a tuple
    for several keys)."""
    if groups is None:
        return {}
    keys = groups.keys
    found = groups.confidences
    bounds = np.searchsorted(found["group"].to_numpy(np.int64),
                             np.arange(len(groups.groups) + 1), side="left")
    values = found["confidence"].to_numpy(float)
    counts = found["n"].to_numpy(np.int64)
    labels = zip(*(groups.groups[k].tolist() for k in keys), strict=True)
    return {(label if len(keys) > 1 else label[0]): (values[a:b], counts[a:b])
            for label, a, b in zip(labels, bounds[:-1], bounds[1:], strict=True)}


def aligned(x: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray]:
    """Two samples' (distinct values, counts) as counts over the distinct values of
    both, ascending; infinite values left out, as the tests leave them out.

    >>> aligned((np.array([0.2, 0.5]), np.array([3, 1])), (np.array([0.5, 0.9]), np.array([2, 2])))
    (array([3, 1, 0]), array([0, 2, 2]))
    """
    (vx, cx), (vy, cy) = x, y
    keep_x, keep_y = np.isfinite(vx), np.isfinite(vy)
    vx, cx, vy, cy = vx[keep_x], cx[keep_x], vy[keep_y], cy[keep_y]
    uniques, inverse = np.unique(np.concatenate([vx, vy]), return_inverse=True)
    in_x = np.zeros(len(uniques), dtype=np.int64)
    in_y = np.zeros(len(uniques), dtype=np.int64)
    in_x[inverse[:len(vx)]] = cx
    in_y[inverse[len(vx):]] = cy
    return in_x, in_y
