"""Plots of extracted data and its audit: each returns its Figure or Axes, shows nothing.

=========================  ==================================================  =========
`confidence_histograms`    confidence per target, small multiples              Figure
`failure_heatmap`          validation failures, target x document              Axes
`reliability_diagram`      accuracy against confidence per bin, with ECE       Axes
`automation_curve`         automation rate against error rate, recommended     Axes
                           threshold and error budget marked
`drift_plot`               mean confidence per target before and after         Axes
`scorecard_chart`          fill rate, pass rate and mean confidence per target Figure
=========================  ==================================================  =========

Figures are made with ``matplotlib.figure.Figure``, not pyplot, so they work without a
display (any backend, Agg included) and do not pile up in pyplot's state; Jupyter shows
a returned Figure. Functions returning Axes draw into ``ax`` when given one.
matplotlib is imported only when a plot is drawn (the ``plots`` extra).

>>> from servicetools import plots as sp
>>> sp.confidence_histograms(fields).savefig("confidence.png")  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..extras import load
from . import audit
from .audit.arguments import check_rate, check_target
from .audit.work import work_frame

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "automation_curve",
    "confidence_histograms",
    "drift_plot",
    "failure_heatmap",
    "reliability_diagram",
    "scorecard_chart",
]

#: Colours that read in print and for the common colour-vision deficiencies (Okabe-Ito).
_BLUE, _ORANGE, _GREEN, _RED, _GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#999999"


def _figure(figsize: tuple[float, float]) -> Figure:
    figure = load("matplotlib.figure", "plots", feature="servicetools.plots")
    result: Figure = figure.Figure(figsize=figsize, layout="constrained")
    return result


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    return _figure(figsize).add_subplot()


def _short(name: Any) -> str:
    """A document's file name: folder paths make unreadable tick labels."""
    text = str(name)
    return text.replace("\\", "/").rsplit("/", 1)[-1]


# -- confidence ------------------------------------------------------------------------------
def confidence_histograms(data: Any, cells: pd.DataFrame | None = None, *, bins: int = 20,
                          threshold: float | None = None, columns: int = 4,
                          figsize: tuple[float, float] | None = None) -> Figure:
    """One histogram of confidence per target (fields, then table columns), on [0, 1].

    ``threshold`` draws a dashed line (an auto-accept threshold, say). Values without a
    confidence are left out; each panel's title says how many values it shows.
    """
    check_rate("threshold", threshold)
    work = work_frame(data, cells)
    targets = [t for t in work["target"].cat.categories] if len(work) else []
    n = max(len(targets), 1)
    ncols = max(1, min(columns, n))
    nrows = math.ceil(n / ncols)
    fig = _figure(figsize or (3.2 * ncols, 2.4 * nrows + 0.4))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
    edges = np.linspace(0.0, 1.0, bins + 1)
    groups = dict(iter(work.groupby("target", observed=True))) if len(work) else {}
    for i, ax in enumerate(axes.flat):
        if i >= len(targets):
            ax.set_visible(False)
            continue
        target = targets[i]
        conf = groups[target]["confidence"].to_numpy(dtype=float) if target in groups else (
            np.array([]))
        conf = conf[np.isfinite(conf)]
        ax.hist(np.clip(conf, 0, 1), bins=edges, color=_BLUE)
        if threshold is not None:
            ax.axvline(threshold, color=_RED, linestyle="--", linewidth=1)
        ax.set_title(f"{target} (n={len(conf)})", fontsize=9)
        ax.set_xlim(0, 1)
        if i % ncols == 0:
            ax.set_ylabel("values")
        if i // ncols == nrows - 1 or i + ncols >= len(targets):
            ax.set_xlabel("confidence")
    if not targets:
        axes.flat[0].set_visible(True)
        axes.flat[0].set_title("no values")
    if threshold is not None and targets:
        from matplotlib.lines import Line2D

        fig.legend(handles=[Line2D([], [], color=_RED, linestyle="--", linewidth=1,
                                   label=f"threshold {threshold:.2f}")],
                   loc="outside upper right", fontsize=8, frameon=False)
    fig.suptitle("Confidence per target")
    return fig


# -- failures --------------------------------------------------------------------------------
def failure_heatmap(data: Any, cells: pd.DataFrame | None = None, *, rate: bool = False,
                    documents: int | None = 40, ax: Axes | None = None) -> Axes:
    """Validation failures per target (rows) and document (columns).

    Cells hold the number of failed values, or with ``rate=True`` the share of the
    target's values in that document that failed; grey marks a document without a value
    of the target. Documents are labelled by file name. With more than ``documents`` of
    them (None: no limit), the plot shows those with the most failed values and its
    title says so, so that it stays readable (and small) for a batch of thousands.
    """
    if documents is not None and documents < 1:
        raise ValueError(f"documents is a number of columns (1 or more) or None, not "
                         f"{documents!r}")
    work = work_frame(data, cells)
    total = 0
    if len(work):
        work = work.assign(
            failed=(work["passed"] == False).fillna(False).astype(int),  # noqa: E712
            document=work["document_name"].astype(object).where(
                work["document_name"].notna(), work["extraction_id"].astype(object)))
        table = work.pivot_table(index="target", columns="document", values="failed",
                                 aggfunc="mean" if rate else "sum", observed=True,
                                 sort=False)
        table = table.reindex(index=[t for t in work["target"].cat.categories
                                     if t in table.index])
        total = table.shape[1]
        if documents is not None and total > documents:
            worst = work.groupby("document", sort=False)["failed"].sum()
            # Most failures first; ties keep the batch's order (a stable sort).
            keep = worst.sort_values(ascending=False, kind="stable").index[:documents]
            table = table.loc[:, [d for d in table.columns if d in set(keep)]]
    else:
        table = pd.DataFrame()
    n_rows, n_cols = table.shape
    ax = _axes(ax, (max(4.0, 0.22 * n_cols + 3.5), max(3.0, 0.3 * n_rows + 2.2)))
    values = table.to_numpy(dtype=float) if table.size else np.zeros((0, 0))
    from matplotlib import colormaps
    from matplotlib.colors import BoundaryNorm
    from matplotlib.patches import Patch

    # Grey where the document has no value of the target, so it differs from 0 failures.
    cmap = colormaps["Reds"].with_extremes(bad="#d9d9d9")
    top = int(np.nanmax(values)) if values.size and np.isfinite(values).any() else 0
    if rate:
        norm: Any = None
        options: dict[str, Any] = {"vmin": 0, "vmax": 1}
    else:
        # Whole counts get a stepped colour bar, one step per count (or per band of them).
        step = max(1, math.ceil((top + 1) / 10))
        bounds = np.arange(-0.5, max(top, 1) + step + 0.5, step)
        norm, options = BoundaryNorm(bounds, cmap.N), {}
    image = ax.imshow(np.ma.masked_invalid(values) if values.size else np.zeros((1, 1)),
                      aspect="auto", cmap=cmap, norm=norm, interpolation="nearest", **options)
    ax.set_yticks(range(n_rows), [str(t) for t in table.index], fontsize=8)
    ax.set_xticks(range(n_cols), [_short(d) for d in table.columns], fontsize=7, rotation=90)
    ax.set_xlabel("document")
    ax.set_ylabel("target")
    title = "Share of values failing validation" if rate else "Values failing validation"
    if n_cols < total:
        title += f"\nthe {n_cols:,} of {total:,} documents with the most failures"
    ax.set_title(title, fontsize=10)
    bar = ax.figure.colorbar(image, ax=ax, label="share failed" if rate else "failed values",
                             shrink=0.9)
    if not rate:
        ticks = list(range(0, max(top, 1) + step, step))
        bar.set_ticks(ticks, labels=[str(t) for t in ticks])
    # Under the colour bar, as its grey step: above the axes it met the title on a
    # narrow plot. The layout makes room for it there (it belongs to the bar's axes).
    bar.ax.legend(handles=[Patch(facecolor="#d9d9d9", edgecolor="#999999",
                                 label="no value\nof this target")],
                  loc="upper left", bbox_to_anchor=(0.0, -0.04), borderaxespad=0,
                  handlelength=1.2, fontsize=8, frameon=False)
    return ax


# -- calibration -----------------------------------------------------------------------------
def reliability_diagram(data: Any, truth: Any = None, *, target: str = audit.ALL,
                        bins: int = 10, ax: Axes | None = None, **grade_options: Any) -> Axes:
    """Accuracy per confidence bin against the diagonal of perfect calibration.

    ``data`` is an `audit.Calibration`, or data and ``truth`` for `audit.calibration`.
    Bars show each non-empty bin's accuracy with its number of values over the bar, dots
    its mean confidence; the title gives
    the target's ECE and Brier score.
    """
    cal = data if isinstance(data, audit.Calibration) else audit.calibration(
        data, truth, bins=bins, **grade_options)
    check_target(target, cal.summary.index, audit.ALL)
    ax = _axes(ax, (4.5, 4.5))
    if target in cal.table.index.get_level_values(0):
        rows = cal.table.xs(target, level=0)
        rows = rows.loc[rows["n"] > 0]
    else:
        rows = cal.table.iloc[0:0]
    width = 1.0 / cal.bins
    centers = (rows["lower"] + rows["upper"]).to_numpy() / 2
    bars = ax.bar(centers, rows["accuracy"].to_numpy(), width=width * 0.9, color=_BLUE,
                  edgecolor="white", label="accuracy (number: values in the bin)")
    ax.bar_label(bars, labels=[f"{int(n):,}" for n in rows["n"]], fontsize=7, padding=2)
    ax.plot(centers, rows["confidence"].to_numpy(), "o", color=_ORANGE,
            label="mean confidence")
    ax.plot([0, 1], [0, 1], "--", color=_GREY, linewidth=1, label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)  # room for the counts over full bars
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    if target in cal.summary.index:
        row = cal.summary.loc[target]
        ax.set_title(f"{target}: ECE {row['ece']:.3f}, Brier {row['brier']:.3f}, "
                     f"n={int(row['n'])}")
    else:
        ax.set_title(f"{target}: no graded values")
    # Below the axes: inside, it would cover the bars of the lowest bins.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncols=2,
              frameon=False)
    return ax


def automation_curve(data: Any, truth: Any = None, *, target: str = audit.ALL,
                     error_budget: float | None = None, ax: Axes | None = None,
                     **grade_options: Any) -> Axes:
    """Automation rate against the error rate among accepted values, one point per threshold.

    ``data`` is an `audit.Thresholds`, or data and ``truth`` for `audit.thresholds`
    (``error_budget`` defaults to 0.01 there). The error budget is a dashed vertical
    line; the recommended threshold is a marked, labelled point.
    """
    if isinstance(data, audit.Thresholds):
        result = data
    else:
        result = audit.thresholds(data, truth, error_budget=0.01 if error_budget is None
                                  else error_budget, **grade_options)
    budget = result.error_budget if error_budget is None else error_budget
    check_rate("error_budget", budget, "rate")
    check_target(target, result.recommended.index, audit.ALL)
    ax = _axes(ax, (5.0, 4.0))
    sweep = result.sweep.loc[(result.sweep["target"] == target)
                             & (result.sweep["n_accepted"] > 0)]
    sweep = sweep.sort_values("threshold")
    ax.plot(sweep["error_rate"].to_numpy(), sweep["automation_rate"].to_numpy(), "-",
            color=_BLUE, marker=".", markersize=3, label="thresholds")
    ax.axvline(budget, color=_RED, linestyle="--", linewidth=1,
               label=f"error budget {budget:g}")
    if target in result.recommended.index:
        best = result.recommended.loc[target]
        if not math.isnan(best["threshold"]):
            ax.plot([best["error_rate"]], [best["automation_rate"]], "o", color=_ORANGE,
                    markersize=9, label=f"recommended: {best['threshold']:.3g}")
            ax.annotate(f"threshold {best['threshold']:.3g}",
                        (best["error_rate"], best["automation_rate"]),
                        textcoords="offset points", xytext=(8, -12), fontsize=8)
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_xlabel("error rate among accepted values")
    ax.set_ylabel("automation rate (share accepted)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    title = f"{target}: automation against errors"
    if target in result.recommended.index and math.isnan(
            result.recommended.loc[target, "threshold"]):
        title += f"\nno threshold keeps errors within {budget:g}"
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    return ax


# -- drift and scorecard ---------------------------------------------------------------------
def drift_plot(data: Any, after: Any = None, *, ax: Axes | None = None) -> Axes:
    """Mean confidence per target before (grey) and after (blue/red), joined by a line.

    ``data`` is a frame from `audit.drift`, or the batch before with ``after``. Targets
    whose shift is significant are drawn in red with a ``*`` after their name.
    """
    frame = data if after is None else audit.drift(data, after)
    frame = frame.loc[frame["confidence_before"].notna() | frame["confidence_after"].notna()]
    n = len(frame)
    ax = _axes(ax, (6.0, max(2.5, 0.35 * n + 1.2)))
    y = np.arange(n)[::-1]
    significant = frame["significant"].fillna(False).to_numpy(dtype=bool)
    before = frame["confidence_before"].to_numpy(dtype=float)
    later = frame["confidence_after"].to_numpy(dtype=float)
    for yi, b, a, sig in zip(y, before, later, significant, strict=True):
        ax.plot([b, a], [yi, yi], "-", color=_RED if sig else _GREY, linewidth=1.5)
    ax.plot(before, y, "o", color=_GREY, label="before")
    ax.plot(later, y, "o", color=_BLUE, label="after")
    if significant.any():
        ax.plot(later[significant], y[significant], "o", color=_RED,
                label="significant shift")
    labels = [f"{t} *" if s else str(t) for t, s in zip(frame.index, significant, strict=True)]
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("mean confidence")
    ax.set_title("Confidence drift per target")
    ax.legend(loc="lower left", fontsize=8)
    return ax


_SCORECARD_METRICS = {"fill_rate": "fill rate", "pass_rate": "validation pass rate",
                      "confidence_mean": "mean confidence", "share_below": "share below",
                      "correction_rate": "correction rate"}


def scorecard_chart(data: Any, cells: pd.DataFrame | None = None, *,
                    metrics: Sequence[str] = ("fill_rate", "pass_rate", "confidence_mean"),
                    figsize: tuple[float, float] | None = None) -> Figure:
    """Horizontal bars per target, one panel per metric of `audit.scorecard`.

    ``data`` is a scorecard frame, or what `audit.scorecard` takes.
    """
    card = data if isinstance(data, pd.DataFrame) and "fill_rate" in data.columns else (
        audit.scorecard(data, cells))
    n = len(card)
    fig = _figure(figsize or (3.0 * len(metrics) + 1.5, max(2.5, 0.3 * n + 1.2)))
    axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
    y = np.arange(n)[::-1]
    for i, (ax, metric) in enumerate(zip(axes, metrics, strict=True)):
        values = card[metric].to_numpy(dtype=float) if metric in card.columns else np.full(
            n, np.nan)
        ax.barh(y, np.nan_to_num(values), color=[_BLUE, _GREEN, _ORANGE][i % 3])
        ax.set_xlim(0, 1)
        ax.set_title(_SCORECARD_METRICS.get(metric, metric), fontsize=10)
        ax.set_yticks(y, [str(t) for t in card.index], fontsize=8)
    fig.suptitle("Scorecard per target")
    return fig
