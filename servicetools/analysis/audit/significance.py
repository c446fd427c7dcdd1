"""Two-sample tests of confidence, with numpy alone: `mann_whitney`, `ks_2samp`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ks_2samp", "mann_whitney"]


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
