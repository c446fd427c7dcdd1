"""`drift` between two `frames.Dataset` sides (two batches), aggregated by DuckDB.

Why: a batch of a million documents holds tens of millions of values; the in-memory
`drift` needs them all as frames, and each target's confidences as arrays. Both tests
`drift` runs depend on a sample only through how often each distinct confidence occurs
in it (ranks of ties are averages of the ranks they span; an ECDF steps only at those
values), so DuckDB counts them, one row per target and distinct confidence on each side
(`figures_sql`), and `significance.mann_whitney_counts` / `ks_counts` compute the very
figures `mann_whitney` / `ks_2samp` give on the values. The rest of the table (counts,
means, fill and failure rates) comes from the same two queries per side.

`shift.drift` dispatches here when both sides are datasets, and builds the table from
what `drift_parts` returns, as it does from two scorecards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..frames.dataset import Dataset
from .figures_sql import Side, check_keys, side
from .significance import ks_counts, mann_whitney_counts
from .work import By

__all__ = ["drift_parts"]

_NONE = (np.zeros(0, dtype=float), np.zeros(0, dtype=np.int64))


def drift_parts(before: Dataset, after: Dataset, *, test: Literal["mannwhitney", "ks"],
                by: By) -> tuple[pd.DataFrame, pd.DataFrame,
                                 Callable[[Any], tuple[float, float]]]:
    """Each side's scorecard columns `drift` reads, and the test of a group's two
    confidence samples (a function of the group's key)."""
    check_keys(by, "drift")
    sides: list[Side] = []
    for data in (before, after):
        con = data.connect()
        try:
            sides.append(side(con, by))
        finally:
            con.close()
    first, second = sides
    run = mann_whitney_counts if test == "mannwhitney" else ks_counts

    def statistic(key: Any) -> tuple[float, float]:
        return run(*aligned(first.confidences.get(key, _NONE),
                            second.confidences.get(key, _NONE)))

    return first.card, second.card, statistic


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
