"""Two-sample tests of confidence, with numpy alone: `mann_whitney`, `ks_2samp`.

Both tests depend on the samples only through how many times each distinct value occurs
in each: `mann_whitney_counts` and `ks_counts` take those counts, and the sample
functions count and call them. A dataset's `drift` has DuckDB count (one row per target
and distinct confidence, never the values themselves) and calls them too, so the two
paths give the same statistics to the last bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ks_2samp", "ks_counts", "mann_whitney", "mann_whitney_counts"]


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
    return mann_whitney_counts(*_counts(_finite(x), _finite(y)))


def _counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many times each distinct value of ``a`` and ``b`` together (ascending) occurs
    in ``a``, and in ``b``."""
    uniques, inverse, counts = np.unique(np.concatenate([a, b]), return_inverse=True,
                                         return_counts=True)
    in_a = np.bincount(inverse[:len(a)], minlength=len(uniques)).astype(np.int64)
    return in_a, counts.astype(np.int64) - in_a


def mann_whitney_counts(x: Any, y: Any) -> tuple[float, float]:
    """`mann_whitney` of two samples given as counts: ``x[i]`` and ``y[i]`` are how many
    times the i-th smallest distinct value of both samples occurs in each.

    The tied values at ``i`` share the average of the ranks they span, which follows
    from the cumulative counts; U is exact (sums of half-integers) and the tie term is
    the one `mann_whitney` computes, so both give the same figures.

    >>> mann_whitney_counts([2, 1, 0], [0, 1, 2]) == mann_whitney([1, 1, 2], [2, 3, 3])
    True
    """
    cx = np.asarray(x, dtype=np.int64)
    cy = np.asarray(y, dtype=np.int64)
    n1, n2 = int(cx.sum()), int(cy.sum())
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    counts = cx + cy
    starts = np.cumsum(counts) - counts
    ranks = starts + (counts + 1) / 2.0
    u1 = float(np.sum(cx * ranks) - n1 * (n1 + 1) / 2.0)
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
    return ks_counts(*_counts(_finite(x), _finite(y)))


def ks_counts(x: Any, y: Any) -> tuple[float, float]:
    """`ks_2samp` of two samples given as counts of their distinct values (ascending),
    as for `mann_whitney_counts`: D is the largest gap between the two ECDFs at those
    values (an ECDF steps nowhere else).

    >>> ks_counts([1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]) == ks_2samp([1, 2, 3, 4], [3, 4, 5, 6])
    True
    """
    cx = np.asarray(x, dtype=np.int64)
    cy = np.asarray(y, dtype=np.int64)
    n1, n2 = int(cx.sum()), int(cy.sum())
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    d = float(np.max(np.abs(np.cumsum(cx) / n1 - np.cumsum(cy) / n2)))
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
