"""Plots a report can send: legends for every colour, counts per bin, bounded at 10,000
documents (the failure heatmap once grew to 72,240 px for 2,000 documents)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

from servicetools import audit, frames, plots

matplotlib.use("Agg")

FIXTURES = Path(__file__).parent / "fixtures"


def _results() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return loaded


@pytest.fixture(scope="module")
def many() -> tuple[pd.DataFrame, pd.DataFrame]:
    """10,000 extractions: the hand-written results again and again, renamed; every
    999th document has every value failed: the worst are known."""
    # e-b has no values: a document without any is in no plot.
    base = [r for r in _results() if r["extraction_info"]["extraction_id"] != "e-b"]
    out = []
    for i in range(10_000):
        result = copy.deepcopy(base[i % len(base)])
        info = result["extraction_info"]
        info["extraction_id"], info["extraction_name"] = f"e{i:05d}", f"doc-{i:05d}.pdf"
        if i % 999 == 0:
            for target in result["extracted_targets"]:
                for value in target.get("extracted_values") or []:
                    value["validation_passed"] = False
                    value["validation_messages"] = ["`x` is not an amount"]
        out.append(result)
    return frames.fields(out), frames.cells(out)


def test_heatmap_at_ten_thousand_documents_shows_the_worst_and_says_so(
        many: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    fields, cells = many
    ax = plots.failure_heatmap(fields, cells)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(labels) == 40
    # The eleven documents given extra failures are among those shown.
    assert {f"doc-{i:05d}.pdf" for i in range(0, 10_000, 999)} <= set(labels)
    assert "40 of 10,000 documents with the most failures" in ax.get_title()
    width, height = ax.figure.get_size_inches()
    assert width < 16 and height < 10
    first = fields.loc[fields["extraction_id"].astype(str) < "e00100"]
    unlimited = plots.failure_heatmap(first, documents=None)
    assert len(unlimited.get_xticklabels()) == first["extraction_id"].nunique()
    with pytest.raises(ValueError, match="documents is a number"):
        plots.failure_heatmap(fields, documents=0)


def test_heatmap_legends_every_colour_and_counts_in_steps() -> None:
    hand = _results()
    ax = plots.failure_heatmap(frames.fields(hand), frames.cells(hand))
    bar = ax.images[0].colorbar
    assert bar is not None
    legend = bar.ax.get_legend()  # the grey step, under the colour bar
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["no value\nof this target"]
    # Nothing is drawn over anything else: the legend once sat on a short plot's title.
    ax.figure.draw_without_rendering()  # the layout placed, as a saved figure has it
    boxes = {"legend": legend.get_window_extent(), "title": ax.title.get_window_extent(),
             "heatmap": ax.get_window_extent(), "colour bar": bar.ax.get_window_extent()}
    figure = ax.figure.bbox
    for name, box in boxes.items():
        assert figure.x0 <= box.x0 and box.x1 <= figure.x1 + 0.5, name  # inside
        assert figure.y0 <= box.y0 and box.y1 <= figure.y1 + 0.5, name
    overlapping = [(a, b) for a in boxes for b in boxes
                   if a < b and boxes[a].overlaps(boxes[b])]
    assert overlapping == []
    ticks = bar.get_ticks()
    assert np.allclose(ticks, np.round(ticks))  # whole counts, not 0.25 steps
    assert bar.ax.get_ylabel() == "failed values"


def test_reliability_diagram_counts_each_bin() -> None:
    hand = _results()
    fields = frames.fields(hand)
    truth = pd.DataFrame({"document": ["invoices/a.pdf"] * 2,
                          "target_name": ["Invoice Number", "Tags"],
                          "value": ["INV-1", "red"]})
    cal = audit.calibration(fields, truth)
    ax = plots.reliability_diagram(cal)
    shown = [t.get_text() for t in ax.texts]
    table = cal.table.xs(audit.ALL, level=0)
    assert shown == [f"{int(n):,}" for n in table.loc[table["n"] > 0, "n"]]
    assert any("values in the bin" in t.get_text() for t in ax.get_legend().get_texts())


def test_automation_curve_says_when_no_threshold_meets_the_budget() -> None:
    hand = _results()
    fields = frames.fields(hand)
    wrong = pd.DataFrame({"document": ["invoices/a.pdf"], "target_name": ["Invoice Number"],
                          "value": ["something else"]})
    ax = plots.automation_curve(fields, wrong, error_budget=0.01)
    assert "no threshold keeps errors within 0.01" in ax.get_title()
    right = wrong.assign(value="INV-1")
    assert "no threshold" not in plots.automation_curve(fields, right).get_title()


def test_confidence_histograms_label_the_threshold_line() -> None:
    fig = plots.confidence_histograms(frames.fields(_results()), threshold=0.8)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["threshold 0.80"]
    assert not plots.confidence_histograms(frames.fields(_results())).legends
