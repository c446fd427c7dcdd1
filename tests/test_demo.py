"""The main job: the sample batch through the service, graded, with its report written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from servicetools import Client, LocalService, demo


def test_demo_writes_the_report_and_summary(service: LocalService, tmp_path: Path) -> None:
    client = Client(base_url=service.base_url, api_key=service.token)
    report = demo.run(tmp_path / "report", client=client, progress=False)
    summary = report.summary
    assert "Scorecard per target" in summary and "Recommended auto-accept threshold" in summary
    for target in ("Invoice Number", "Total", "Line Items / Amount", "Merchant"):
        assert target in summary
    assert sum(b.counts().get("ended", 0) for b in report.batches.values()) == 40
    page = (tmp_path / "report" / "index.html").read_text()
    assert "<h2>Scorecard</h2>" in page and 'src="reliability.png"' in page
    for name in ("scorecard", "confidence", "failures", "reliability", "automation"):
        assert (tmp_path / "report" / f"{name}.png").stat().st_size > 1000
    scorecard = pd.read_parquet(tmp_path / "report" / "frames" / "scorecard.parquet")
    assert set(scorecard["target_name"].astype(str)) >= {"Invoice Number", "Line Items"}
    accuracy = pd.read_parquet(tmp_path / "report" / "frames" / "accuracy.parquet")
    # The engine reads the sample well; a collapse here is a regression, not noise.
    assert accuracy.loc["All", "accuracy"] > 0.9
