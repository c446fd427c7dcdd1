"""The main job (`make demo`): the bundled sample batch through the service, audited.

It extracts every document of the bundled sample (`servicetools.bundled`: ``documents/``)
with its configuration (the embedded local service unless
``SERVICE_BASE_URL``/``SERVICE_API_KEY`` are set), grades the results against the
sample's ``truth/``, prints the audit summary and writes
``report/``: ``index.html`` with the tables and plots (PNG) and every frame as
Parquet.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import bundled
from .analysis import audit, frames
from .client import Batch, Client
from .extras import require_all

DATA = bundled.ROOT
#: configuration name -> the sample documents it reads (folders under data/documents)
SAMPLES = {"invoices": "invoices", "receipts": "receipts"}
#: The share of wrong values tolerated among auto-accepted ones.
ERROR_BUDGET = 0.02
#: Dates and amounts are compared as values, not as printed strings.
NORMALIZE = ("whitespace", "dates", "amounts")


@dataclass
class DemoReport:
    """What the demo computed; `summary` is the text printed in the terminal."""

    batches: dict[str, Batch]
    fields: pd.DataFrame
    cells: pd.DataFrame
    scorecard: pd.DataFrame
    accuracy: pd.DataFrame
    calibration: audit.Calibration
    thresholds: audit.Thresholds
    seconds: float
    out_dir: Path
    files: list[Path] = field(default_factory=list)

    @property
    def summary(self) -> str:
        return _summary(self)


def run(out_dir: str | Path = "report", *, data_dir: Path = DATA, client: Client | None = None,
        error_budget: float = ERROR_BUDGET, progress: bool = True) -> DemoReport:
    """Extract, audit and report; returns the `DemoReport` (files already written)."""
    # Before minutes of extraction, not after: the report's plots need matplotlib, and
    # without a remote service (or a client given) the embedded one needs its extra.
    remote = bool(os.environ.get("SERVICE_BASE_URL") and os.environ.get("SERVICE_API_KEY"))
    require_all(["plots"] if client is not None or remote else ["service", "plots"],
                feature="the demo")
    start = time.perf_counter()
    client = client or Client.from_env()
    batches = {}
    for configuration, folder in SAMPLES.items():
        documents = sorted(p for p in (data_dir / "documents" / folder).iterdir()
                           if p.suffix.lower() in (".pdf", ".png", ".jpg", ".jpeg"))
        batches[configuration] = client.extract_many(
            documents, configuration_name=configuration, progress=progress)
    results = list(batches.values())
    field_frame = frames.fields(results)
    cell_frame = frames.cells(results)
    truth = audit.truth(data_dir / "truth")
    graded = audit.grade(field_frame, truth, cells=cell_frame, normalize=NORMALIZE)
    report = DemoReport(
        batches=batches, fields=field_frame, cells=cell_frame,
        scorecard=audit.scorecard(field_frame, cell_frame),
        accuracy=audit.accuracy(graded),
        calibration=audit.calibration(graded),
        thresholds=audit.thresholds(graded, error_budget=error_budget),
        seconds=time.perf_counter() - start, out_dir=Path(out_dir))
    _write(report, graded)
    return report


def _pct(x: Any) -> str:
    return "-" if pd.isna(x) else f"{100 * float(x):5.1f}%"


def _num(x: Any) -> str:
    return "-" if pd.isna(x) else f"{float(x):.2f}"


def _summary(r: DemoReport) -> str:
    counts = {name: b.counts() for name, b in r.batches.items()}
    lines = ["servicetools demo: the sample batch, audited", ""]
    for name, c in counts.items():
        lines.append(f"  {name:<9} " + ", ".join(f"{k} {v}" for k, v in c.items()))
    lines += ["", "Scorecard per target (fill rate, mean confidence, validation pass rate, "
              "accuracy against data/truth):", ""]
    acc = r.accuracy["accuracy"] if "accuracy" in r.accuracy else pd.Series(dtype=float)
    header = f"  {'target':<28} {'kind':<6} {'fill':>6} {'conf':>6} {'pass':>6} {'acc':>6}"
    lines += [header, "  " + "-" * (len(header) - 2)]
    for _, row in r.scorecard.iterrows():
        name = str(row["target_name"])
        if row["kind"] != "field":
            name = f"{name} / {row['header']}"  # a table column, labelled as audit does
        lines.append(f"  {name:<28} {str(row['kind']):<6} {_pct(row['fill_rate'])} "
                     f"{_num(row['confidence_mean']):>6} {_pct(row['pass_rate'])} "
                     f"{_pct(acc.get(name))}")
    overall = acc.get(audit.ALL)
    threshold = r.thresholds.threshold
    rec = r.thresholds.recommended
    automation = rec["automation_rate"].iloc[-1] if len(rec) else float("nan")
    lines += [
        "",
        f"Overall accuracy {_pct(overall).strip()}, expected calibration error "
        f"{r.calibration.ece:.3f}, Brier {r.calibration.brier:.3f}",
        (f"Recommended auto-accept threshold: {threshold:.2f} (error budget "
         f"{r.thresholds.error_budget:.0%}; accepts {_pct(automation).strip()} of values)"
         if threshold == threshold else
         f"No threshold keeps errors within {r.thresholds.error_budget:.0%}."),
        f"Report: {r.out_dir}/index.html  ({len(r.files)} files, {r.seconds:.0f} s)",
    ]
    return "\n".join(lines)


def _write(r: DemoReport, graded: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")  # the demo runs in terminals and CI, never on a screen
    import matplotlib.pyplot as plt

    from .analysis import plots

    out = r.out_dir
    (out / "frames").mkdir(parents=True, exist_ok=True)
    tables = {"fields": r.fields, "cells": r.cells, "scorecard": r.scorecard,
              "accuracy": r.accuracy, "calibration": r.calibration.summary,
              "thresholds": r.thresholds.recommended, "graded": graded}
    for name, frame in tables.items():
        path = out / "frames" / f"{name}.parquet"
        frames.save(frame, path)
        r.files.append(path)
    figures: dict[str, Any] = {  # Figure, or an Axes' .figure (typed Figure | SubFigure)
        "scorecard": plots.scorecard_chart(r.fields, r.cells),
        "confidence": plots.confidence_histograms(r.fields, r.cells),
        "failures": plots.failure_heatmap(r.fields, r.cells).figure,
        "reliability": plots.reliability_diagram(graded).figure,
        "automation": plots.automation_curve(
            graded, error_budget=r.thresholds.error_budget).figure,
    }
    images = []
    for name, fig in figures.items():
        path = out / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        r.files.append(path)
        images.append(path.name)
    page = out / "index.html"
    page.write_text(_html(r, images), encoding="utf-8")
    r.files.append(page)


def _html(r: DemoReport, images: list[str]) -> str:
    def table(title: str, frame: pd.DataFrame) -> str:
        return f"<h2>{html.escape(title)}</h2>\n" + frame.to_html(
            float_format=lambda x: f"{x:.3f}", na_rep="-", border=0, classes="frame")

    body = [f"<h1>servicetools audit report</h1><pre>{html.escape(r.summary)}</pre>",
            table("Scorecard", r.scorecard), table("Accuracy", r.accuracy),
            table("Calibration", r.calibration.summary),
            table("Recommended thresholds", r.thresholds.recommended)]
    body += [f'<h2>{name.removesuffix(".png")}</h2><img src="{name}" alt="{name}">'
             for name in images]
    style = ("body{font-family:sans-serif;margin:2em}table.frame{border-collapse:collapse;"
             "font-size:13px}table.frame td,table.frame th{padding:2px 8px;border-bottom:1px "
             "solid #ddd}img{max-width:100%}")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>servicetools report"
            f"</title><style>{style}</style></head><body>{''.join(body)}</body></html>\n")


def main(out_dir: str = "report") -> int:
    report = run(out_dir)
    print(report.summary)
    return 0
