"""The main job: the sample batch through the service, graded, with its report written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from servicetools import Batch, Client, LocalService, demo


def test_demo_writes_the_report_and_summary(service: LocalService, tmp_path: Path) -> None:
    client = Client(base_url=service.base_url, api_key=service.token)
    report = demo.run(tmp_path / "report", client=client, progress=False)
    summary = report.summary
    assert "scorecard per target" in summary and "recommended auto-accept threshold" in summary
    for target in ("Invoice Number", "Total", "Line Items / Amount", "Merchant"):
        assert target in summary
    assert sum(len(b.results) for b in report.batches.values()) == 40
    out = tmp_path / "report"
    page = (out / "index.html").read_text()
    assert "configuration name: invoices" in page and 'src="invoices-reliability.png"' in page
    for section in ("invoices", "receipts"):
        for name in ("confidence", "failures", "reliability", "automation"):
            assert (out / f"{section}-{name}.png").stat().st_size > 1000
    # The batches are saved beside the report, so `servicetools report` can remake it.
    assert len(Batch.load(out / "batches" / "invoices.jsonl").results) == 24
    scorecard = pd.read_parquet(out / "frames" / "invoices-scorecard.parquet")
    assert set(scorecard["target_name"].astype(str)) >= {"Invoice Number", "Line Items"}
    accuracy = pd.read_parquet(out / "frames" / "receipts-accuracy.parquet")
    assert "Merchant" in accuracy.index and "Invoice Number" not in accuracy.index
    # The engine reads the sample well; a collapse here is a regression, not noise.
    assert report.overall_accuracy > 0.9
