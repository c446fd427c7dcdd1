"""`drift`: per target, what changed from one batch to the next."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from . import shift_sql
from .pushdown import frames_of, is_dataset
from .significance import ks_2samp, mann_whitney
from .summaries import scorecard
from .work import By, empty_summary, group_keys, work_frame

__all__ = ["DRIFT_COLUMNS", "drift"]

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
    takes, or a `frames.Dataset` (``ds.select("monday")``): when both are, DuckDB
    aggregates them (`shift_sql`) and no value comes into Python, only counts per
    target and distinct confidence; a lone dataset is read into frames.
    """
    if test not in ("mannwhitney", "ks"):
        raise ValueError("test must be 'mannwhitney' or 'ks'")
    if is_dataset(before) and is_dataset(after):
        parts = shift_sql.drift_parts(before, after, test=test, by=by)
    else:
        parts = _drift_parts(frames_of(before), frames_of(after), test, by)
    return _drift_frame(*parts, alpha=alpha, by=by)


def _drift_parts(before: Any, after: Any, test: str, by: By
                 ) -> tuple[pd.DataFrame, pd.DataFrame, Callable[[Any], tuple[float, float]]]:
    """Each side's scorecard, and the test of a group's two confidence samples."""
    work_before, work_after = work_frame(before), work_frame(after)
    keys = group_keys(by)
    samples_before = _samples(work_before, keys)
    samples_after = _samples(work_after, keys)
    run = mann_whitney if test == "mannwhitney" else ks_2samp

    def statistic(key: Any) -> tuple[float, float]:
        return run(samples_before.get(key, ()), samples_after.get(key, ()))

    return scorecard(work_before, by=by), scorecard(work_after, by=by), statistic


def _drift_frame(card_before: pd.DataFrame, card_after: pd.DataFrame,
                 statistic: Callable[[Any], tuple[float, float]], *, alpha: float, by: By
                 ) -> pd.DataFrame:
    """The drift table from each side's scorecard (``confidence_n``,
    ``confidence_mean``, ``fill_rate``, ``pass_rate``) and the test of a group's two
    confidence samples."""
    index = card_before.index.append(card_after.index.difference(card_before.index,
                                                                 sort=False))
    if len(index) == 0:
        return empty_summary(DRIFT_COLUMNS, by)
    stats = [statistic(k) for k in index]
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
