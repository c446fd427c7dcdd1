"""`servicetools report`: saved batches of the real local service, audited per
configuration, written as a page for people (the browser check is tests/e2e)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from servicetools import Batch, BatchFailures, Client, LocalService, bundled, cli, report
from servicetools.report.page import threshold_note

DOCUMENTS = bundled.ROOT / "documents"


@pytest.fixture(scope="module")
def runs(service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two saved batches (three invoices with one file the service refuses, three
    receipts) as `servicetools extract` leaves them."""
    folder = tmp_path_factory.mktemp("runs")
    not_a_document = folder / "notes.txt"
    not_a_document.write_text("not a document")
    client = Client(base_url=service.base_url, api_key=service.token)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchFailures)
        invoices = client.extract_many(
            [*(DOCUMENTS / "invoices" / f"inv-000{i}.pdf" for i in (1, 2, 3)), not_a_document],
            configuration_name="invoices", progress=False)
    receipts = client.extract_many(sorted((DOCUMENTS / "receipts").glob("*.pdf"))[:3],
                                   configuration_name="receipts", progress=False)
    invoices.save(folder / "invoices.jsonl")
    receipts.save(folder / "receipts.jsonl")
    yield folder


def test_report_keeps_configurations_apart(runs: Path, tmp_path: Path) -> None:
    made = report.build([runs / "invoices.jsonl", runs / "receipts.jsonl"], tmp_path / "out",
                        truth=bundled.ROOT / "truth")
    assert [s.label for s in made.sections] == ["invoices", "receipts"]
    invoices, receipts = made.sections
    # Both configurations have a "Tax" field: each section grades only its own.
    assert invoices.accuracy is not None and receipts.accuracy is not None
    assert int(invoices.accuracy.loc["Tax", "n"]) == 3
    assert int(receipts.accuracy.loc["Tax", "n"]) == 3
    assert "Merchant" not in invoices.scorecard.index
    assert list(invoices.fields["target_name"].cat.categories) == list(
        invoices.scorecard.loc[invoices.scorecard["kind"] == "field", "target_name"])
    assert invoices.extractions == 3 and receipts.extractions == 3
    assert 0.5 < made.overall_accuracy <= 1
    accuracy = made.accuracy
    assert accuracy is not None and ("receipts", "Tax") in accuracy.index


def test_the_page_is_made_for_people(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    made = report.build([runs / "invoices.jsonl", runs / "receipts.jsonl"], out,
                        truth=bundled.ROOT / "truth")
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<pre>" not in page  # no console dump
    assert "configuration name: invoices" in page and "configuration name: receipts" in page
    # Formatted figures: percentages with one decimal, confidences with two.
    assert re.search(r'<td class="n">\d{1,3}\.\d%</td>', page)
    assert re.search(r'<td class="n">0\.\d\d</td>', page)
    assert not re.search(r"\d\.\d{4,}", page)  # no raw floats
    # The refused text file is listed, not silently left out.
    assert "Documents without a result" in page and "notes.txt" in page
    assert "What the columns mean" in page
    for name in ("confidence", "failures", "reliability", "automation"):
        for section in ("invoices", "receipts"):
            assert f'src="{section}-{name}.png"' in page
            assert (out / f"{section}-{name}.png").stat().st_size > 1000
    assert pd.read_parquet(out / "frames" / "receipts-accuracy.parquet").index.name == "target"
    assert made.files and all(p.exists() for p in made.files)


def test_without_truth_the_page_says_what_is_missing(runs: Path, tmp_path: Path) -> None:
    made = report.build(runs / "receipts.jsonl", tmp_path / "out", by="none")
    assert [s.label for s in made.sections] == ["all"] and not made.has_truth
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "No ground truth was given" in page and "reliability.png" not in page
    assert "accuracy" not in made.summary


def test_a_threshold_that_cannot_meet_the_budget_is_explained(runs: Path) -> None:
    batch = Batch.load(runs / "receipts.jsonl")
    truth = pd.DataFrame({
        "document": [Path(d).name for d in batch.documents.values()],
        "target_name": "Total", "value": "not the total"})
    made = report.build(batch, truth=truth, write=False)
    (section,) = made.sections
    assert section.thresholds is not None
    threshold, note = threshold_note(section.thresholds, "Total")
    assert threshold == "none"
    assert note.startswith("no threshold keeps errors within 2%: the fewest is 100%")
    assert threshold_note(section.thresholds, "Merchant") == ("–", "no graded values")


def test_bad_arguments_are_refused_before_any_work(runs: Path) -> None:
    with pytest.raises(ValueError, match="by must be one of"):
        report.build(runs / "receipts.jsonl", by="configuration")
    with pytest.raises(ValueError, match="error_budget is a confidence between 0 and 1"):
        report.build(runs / "receipts.jsonl", error_budget=2)
    with pytest.raises(ValueError, match="no batch given"):
        report.build([])


def test_cli(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    code = cli.main(["report", str(runs / "invoices.jsonl"), str(runs / "receipts.jsonl"),
                     "--truth", str(bundled.ROOT / "truth"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and (out / "index.html").exists()
    assert "invoices: scorecard per target" in printed and "Overall accuracy" in printed
    assert cli.main(["report", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
