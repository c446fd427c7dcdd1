"""`thresholds`: how much an auto-accept threshold automates, at what error rate."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .arguments import check_rate
from .grading import as_graded, summary_groups, summary_index
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .work import By

__all__ = ["RECOMMENDED_COLUMNS", "SWEEP_COLUMNS", "Thresholds", "thresholds"]

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
               normalize: Normalize = DEFAULT_NORMALIZE, by: By = "target") -> Thresholds:
    """Sweep auto-accept thresholds; recommend one per target and overall.

    ``grid``: the thresholds to try: None for every distinct confidence (exact), an
    integer ``k`` for ``k + 1`` steps over [0, 1], or a sequence. Values without a
    confidence count in ``n`` but are never accepted. ``data`` is what `grade` takes
    (a `frames.Dataset` too), or a `grade` frame.
    """
    check_rate("error_budget", error_budget, "rate")
    graded = as_graded(data, truth, cells, normalize)
    graded = graded.loc[graded["correct"].notna()]
    all_conf = graded["confidence"].to_numpy(dtype=float)
    if grid is None:
        steps = np.unique(all_conf[np.isfinite(all_conf)])
    elif isinstance(grid, int):
        steps = np.linspace(0.0, 1.0, grid + 1)
    else:
        steps = np.unique(np.asarray(grid, dtype=float))
    sweep_parts, labels, best_rows = [], [], []
    for label, group in summary_groups(graded, by):
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
    recommended = pd.DataFrame(best_rows, index=summary_index(labels, by),
                               columns=list(RECOMMENDED_COLUMNS))
    return Thresholds(sweep=sweep[list(SWEEP_COLUMNS)], recommended=recommended,
                      error_budget=error_budget)
