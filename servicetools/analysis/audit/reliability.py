"""`calibration`: how well confidence predicts correctness, as a `Calibration`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .grading import as_graded, summary_groups, summary_index
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .work import By

__all__ = ["CALIBRATION_COLUMNS", "CALIBRATION_TABLE_COLUMNS", "Calibration", "calibration"]

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
                cells: pd.DataFrame | None = None, normalize: Normalize = DEFAULT_NORMALIZE,
                by: By = "target") -> Calibration:
    """How well confidence predicts correctness, per target and overall.

    Confidences fall into ``bins`` equal bins on [0, 1] (1.0 in the last);
    ECE is the sum over bins of ``n_bin / n * |accuracy - confidence|``, Brier the mean
    of ``(confidence - correct)**2``. Values without a confidence are left out.
    ``data`` is what `grade` takes (a `frames.Dataset` too), or a `grade` frame.
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    graded = _scored(as_graded(data, truth, cells, normalize))
    edges = np.linspace(0.0, 1.0, bins + 1)
    table_rows: list[dict[str, Any]] = []
    labels, summary_rows = [], []
    for label, group in summary_groups(graded, by):
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
    summary = pd.DataFrame(summary_rows, index=summary_index(labels, by),
                           columns=list(CALIBRATION_COLUMNS))
    return Calibration(table=table, summary=summary, bins=bins)
