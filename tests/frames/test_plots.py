"""Plots rendered headless (Agg) and checked for what they show: axes, labels, bar counts."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd
import pytest

from servicetools import audit, frames, plots

matplotlib.use("Agg")  # no display here; the plots never need pyplot anyway

FIXTURES = Path(__file__).parent / "fixtures"
TARGETS = ["Invoice Number", "Tags", "Note", "Ref", "t-items / Description",
           "t-items / Amount"]


@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return results


@pytest.fixture(scope="module")
def truth_a() -> pd.DataFrame:
    rows = [("Invoice Number", "INV-1"), ("Tags", "red"), ("Note", "Net 30"), ("Ref", "R-1")]
    return pd.DataFrame(rows, columns=["target_name", "value"]).assign(
        document="invoices/a.pdf")


def rendered(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    assert buffer.getvalue().startswith(b"\x89PNG")
    return buffer.getvalue()


def test_confidence_histograms(hand: list[dict[str, Any]]) -> None:
    fig = plots.confidence_histograms(frames.fields(hand), frames.cells(hand), bins=10,
                                      threshold=0.5, columns=4)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 8 and len(visible) == 6  # 2 rows of 4, two left empty
    assert [ax.get_title() for ax in visible] == [
        "Invoice Number (n=2)", "Tags (n=2)", "Note (n=2)", "Ref (n=1)",
        "t-items / Description (n=4)", "t-items / Amount (n=4)"]
    assert all(len(ax.patches) == 10 for ax in visible)  # one bar per bin
    tags = visible[1]
    assert sorted(p.get_height() for p in tags.patches)[-2:] == [1, 1]  # .4 and .8
    assert sum(p.get_height() for p in visible[3].patches) == 1  # Ref's NaN left out
    assert all(ax.lines[0].get_xdata()[0] == 0.5 for ax in visible)  # the threshold
    assert visible[0].get_ylabel() == "values" and visible[-1].get_xlabel() == "confidence"
    rendered(fig)


def test_failure_heatmap(hand: list[dict[str, Any]]) -> None:
    ax = plots.failure_heatmap(frames.fields(hand), frames.cells(hand))
    image = ax.images[0].get_array()
    assert image.shape == (6, 2)  # targets x documents with values (e-a, e-c)
    assert [t.get_text() for t in ax.get_yticklabels()] == TARGETS
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a.pdf", "c.pdf"]
    assert image[1].tolist() == [1, None]  # Tags: one failure in a.pdf, no value in c.pdf
    assert image[2].tolist() == [0, 1]  # Note: one failure in c.pdf
    assert ax.get_xlabel() == "document" and ax.get_ylabel() == "target"
    rates = plots.failure_heatmap(frames.fields(hand), frames.cells(hand), rate=True)
    assert rates.images[0].get_array()[5].tolist() == [1 / 3, 0]  # 1 of a.pdf's 3 amounts
    assert "Share" in rates.get_title()
    rendered(ax.figure)


def test_reliability_diagram(hand: list[dict[str, Any]], truth_a: pd.DataFrame) -> None:
    cal = audit.calibration(hand, truth_a)
    ax = plots.reliability_diagram(cal)
    # Scored: INV-1 .95 T, red .8 T, blu`e .4 F (truth has one tag), Net 30 .6 T: 4 bins.
    assert len(ax.patches) == 4
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == [0, 1, 1, 1]
    assert f"ECE {cal.ece:.3f}" in ax.get_title()
    assert ax.get_xlabel() == "confidence" and ax.get_ylabel() == "accuracy"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["mean confidence", "perfect calibration",
                      "accuracy (number: values in the bin)"]
    same = plots.reliability_diagram(hand, truth_a)
    assert len(same.patches) == 4
    tags = plots.reliability_diagram(cal, target="Tags")
    assert len(tags.patches) == 2 and tags.get_title().startswith("Tags:")
    rendered(ax.figure)


def test_automation_curve(hand: list[dict[str, Any]], truth_a: pd.DataFrame) -> None:
    result = audit.thresholds(hand, truth_a, error_budget=0.0)
    ax = plots.automation_curve(result)
    curve = ax.lines[0]
    sweep = result.sweep[result.sweep["target"] == audit.ALL]
    assert len(curve.get_xdata()) == len(sweep)
    assert ax.lines[1].get_xdata()[0] == 0.0  # the error budget
    best = ax.lines[2]
    assert best.get_ydata()[0] == pytest.approx(result.recommended.loc[audit.ALL,
                                                                       "automation_rate"])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[-1] == f"recommended: {result.threshold:.3g}"
    assert any(t.get_text() == f"threshold {result.threshold:.3g}" for t in ax.texts)
    assert ax.get_xlabel().startswith("error rate") and ax.get_ylabel().startswith("automation")
    none = plots.automation_curve(audit.thresholds(hand, truth_a, error_budget=0.0),
                                  target="Ref")
    assert len(none.lines) == 2  # nothing within budget: no recommended point
    rendered(ax.figure)


def test_drift_plot() -> None:
    def batch(conf: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"target_name": ["A"] * 5 + ["B"] * 5,
                             "extraction_id": [f"e{i}" for i in range(5)] * 2,
                             "value": ["x"] * 10, "confidence": conf,
                             "validation_passed": [True] * 10})

    before = batch([0.9, 0.91, 0.92, 0.93, 0.94, 0.5, 0.6, 0.7, 0.8, 0.9])
    after = batch([0.1, 0.11, 0.12, 0.13, 0.14, 0.5, 0.6, 0.7, 0.8, 0.91])
    ax = plots.drift_plot(before, after)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A *", "B"]
    assert ax.get_xlabel() == "mean confidence"
    points = [line for line in ax.lines if line.get_marker() == "o"]
    assert [len(p.get_xdata()) for p in points] == [2, 2, 1]  # before, after, significant
    again = plots.drift_plot(audit.drift(before, after))
    assert [t.get_text() for t in again.get_yticklabels()] == ["A *", "B"]
    rendered(ax.figure)


def test_scorecard_chart(hand: list[dict[str, Any]]) -> None:
    card = audit.scorecard(frames.fields(hand), frames.cells(hand))
    fig = plots.scorecard_chart(card)
    assert [ax.get_title() for ax in fig.axes] == ["fill rate", "validation pass rate",
                                                   "mean confidence"]
    assert all(len(ax.patches) == 6 for ax in fig.axes)
    widths = [p.get_width() for p in fig.axes[1].patches]
    assert widths == pytest.approx(card["pass_rate"].tolist())
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == TARGETS
    other = plots.scorecard_chart(hand, metrics=("share_below",))
    assert len(other.axes) == 1 and other.axes[0].get_title() == "share below"
    rendered(fig)


def test_plots_of_empty_input_do_not_fail() -> None:
    empty = frames.fields([])
    rendered(plots.confidence_histograms(empty))
    rendered(plots.failure_heatmap(empty).figure)
    rendered(plots.scorecard_chart(empty))


def test_plots_draw_into_given_axes(hand: list[dict[str, Any]]) -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert plots.failure_heatmap(frames.fields(hand), ax=left) is left
    assert plots.drift_plot(frames.fields(hand), frames.fields(hand), ax=right) is right


def test_wrong_arguments_are_refused_with_a_way_out(hand: list[dict[str, Any]],
                                                    truth_a: pd.DataFrame) -> None:
    # Before: an empty plot titled "Totl: no graded values", a line drawn off the axes.
    cal = audit.calibration(hand, truth_a)
    with pytest.raises(ValueError, match="no target 'Tgas'.*Did you mean 'Tags'"):
        plots.reliability_diagram(cal, target="Tgas")
    with pytest.raises(ValueError, match="no target 'Invoice No'"):
        plots.automation_curve(audit.thresholds(hand, truth_a), target="Invoice No")
    with pytest.raises(ValueError, match=r"not 90 \(for 90 %, write 0.9\)"):
        plots.confidence_histograms(hand, threshold=90)
