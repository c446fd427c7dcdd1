"""`servicetools report`: saved batches of the real local service, audited per
configuration, written as a page for people (the browser check is tests/e2e)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from servicetools import (
    Batch,
    BatchFailures,
    Client,
    Ledger,
    LocalService,
    audit,
    bundled,
    cli,
    report,
    review,
)
from servicetools import frames as st_frames
from servicetools.report.page import pct, threshold_note

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
    with pytest.raises(ValueError, match="error_budget is a rate between 0 and 1"):
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


# -- estimates without truth ---------------------------------------------------------------
@pytest.fixture(scope="module")
def reference(service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference batch whose truth is known: other invoices and receipts of the
    bundled sample (text PDFs), saved as `servicetools extract` leaves it."""
    folder = tmp_path_factory.mktemp("reference")
    client = Client(base_url=service.base_url, api_key=service.token)
    documents = [DOCUMENTS / "invoices" / f"inv-00{i}.pdf" for i in (16, 17, 18, 19, 20, 21)]
    invoices = client.extract_many(documents, configuration_name="invoices", progress=False)
    receipts = client.extract_many([DOCUMENTS / "receipts" / f"rcp-00{i:02d}.pdf"
                                    for i in (6, 7, 8, 9, 11, 12)],
                                   configuration_name="receipts", progress=False)
    batch = folder / "reference.jsonl"
    invoices.save(batch)
    receipts.save(folder / "receipts.jsonl")
    return folder


def _audited_ledger(runs: Path, path: Path) -> Path:
    """A ledger as the review queue leaves it after a plan: the riskiest values reviewed
    (``audit`` False) and a random audit of the rest (``audit`` True), each confirmed or
    corrected to what the truth says."""
    batch = Batch.load(runs / "invoices.jsonl")
    fields, cells = st_frames.fields(batch), st_frames.cells(batch)
    planned = review.plan(fields, cells, budget=5, audit=0.2, seed=1)
    graded = audit.grade(fields, bundled.TRUTH, cells=cells,
                         normalize=report.NORMALIZE).set_index("value_id")
    ledger = Ledger(path=path)
    for row in planned.loc[planned["review"] | planned["audit"]].itertuples():
        if row.value_id not in graded.index or pd.isna(graded.loc[row.value_id, "correct"]):
            continue
        right = bool(graded.loc[row.value_id, "correct"])
        ledger.append(extraction_id=row.extraction_id, target_name=row.target,
                      value_id=row.value_id, old_value=row.value,
                      new_value=row.value if right else graded.loc[row.value_id, "expected"],
                      old_confidence=row.confidence, audit=bool(row.audit))
    return path


def test_with_a_reference_accuracy_is_estimated_without_truth(
        runs: Path, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    made = report.build([runs / "invoices.jsonl", runs / "receipts.jsonl"], out,
                        reference=[reference / "reference.jsonl", reference / "receipts.jsonl"],
                        reference_truth=bundled.TRUTH)
    assert made.has_reference and not made.has_truth
    invoices, receipts = made.sections
    for section in (invoices, receipts):
        est, reach = section.estimate, section.review
        assert est is not None and reach is not None
        assert list(est.columns) == list(audit.ESTIMATE_COLUMNS)
        assert list(est.index) == [*section.scorecard.index, audit.ALL]
        assert ((est["low"] <= est["estimate"]) & (est["estimate"] <= est["high"])).all()
        assert (est["method"] == "confidence").all()
        assert list(reach.columns) == list(review.REACH_COLUMNS)
        assert (reach["expected_error_after"].fillna(0) <= made.error_budget + 1e-9).all()
    # Each section learns from its own configuration's values of the reference: six
    # invoices give each invoice field six labels, too few to be trusted.
    assert int(invoices.estimate.loc["Total", "n_reference"]) == 6  # type: ignore[union-attr]
    assert not invoices.estimate.loc["Total", "reliable"]  # type: ignore[union-attr]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Accuracy estimated without truth" in page and "90% interval" in page
    assert "to review for ≤ 2% wrong" in page and "No reference was given" not in page
    assert "unreliable: 6 labelled values in the reference (fewer than 30)" in page
    assert re.search(r'<td class="n">\d{1,3}\.\d–\d{1,3}\.\d%</td>', page)  # an interval
    assert not re.search(r"\d\.\d{4,}", page)
    assert "No ground truth was given" in page  # what the batch's own truth would add
    assert pd.read_parquet(out / "frames" / "invoices-estimate.parquet").index.name == "target"
    assert (out / "frames" / "receipts-review.parquet").exists()
    assert "estimated accuracy" in made.summary and "* unreliable" in made.summary
    estimate = made.estimate
    assert estimate is not None and ("receipts", audit.ALL) in estimate.index


def test_with_truth_the_estimate_stands_beside_the_measured_accuracy(
        runs: Path, reference: Path, tmp_path: Path) -> None:
    made = report.build(runs / "receipts.jsonl", tmp_path / "out", truth=bundled.TRUTH,
                        reference=reference / "receipts.jsonl", reference_truth=bundled.TRUTH)
    (section,) = made.sections
    assert section.accuracy is not None and section.estimate is not None
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    table = page[page.index("Accuracy estimated without truth"):]
    table = table[:table.index("</table>")]
    assert "<th>measured accuracy</th>" in table
    measured = pct(section.accuracy.loc[audit.ALL, "accuracy"])
    row = table[table.index("<td>all receipts targets</td>"):]
    numbers = re.findall(r'<td class="n">([^<]*)</td>', row[:row.index("</tr>")])
    # values, estimated accuracy, its interval, then the measured accuracy
    assert numbers[3] == measured and numbers[1].endswith("%")


def test_an_audit_sample_from_the_ledger_corrects_the_estimate(
        runs: Path, reference: Path, tmp_path: Path) -> None:
    ledger = _audited_ledger(runs, tmp_path / "corrections.parquet")
    drawn = Ledger.load(ledger).audit_sample
    assert 0 < len(drawn) < len(Ledger.load(ledger))  # reviewed rows are in it too
    made = report.build(runs / "invoices.jsonl", tmp_path / "out", reference=[
        reference / "reference.jsonl"], reference_truth=bundled.TRUTH, sample=ledger)
    (section,) = made.sections
    assert section.estimate is not None
    overall = section.estimate.loc[audit.ALL]
    # Only the random audit rows are the sample: the values reviewed for their risk
    # would bias it.
    assert overall["method"] == "prediction-powered"
    assert int(overall["n_sample"]) == len(drawn)
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert f"corrected by an audit sample of {len(drawn)}" in page
    assert "audited values (they alone:" in page
    # A ledger of reviews chosen by risk alone is no audit sample.
    risky = Ledger(Ledger.load(ledger).frame.query("audit == False"))
    with pytest.raises(ValueError, match="none drawn at random"):
        report.build(runs / "invoices.jsonl", reference=reference / "reference.jsonl",
                     reference_truth=bundled.TRUTH, sample=risky, write=False)


def test_without_a_reference_the_page_says_what_an_estimate_needs(
        runs: Path, tmp_path: Path) -> None:
    made = report.build(runs / "receipts.jsonl", tmp_path / "out", truth=bundled.TRUTH)
    assert made.estimate is None and not made.has_reference
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "No reference was given" in page and "--reference-truth DIR_OR_LEDGER" in page
    assert "Accuracy estimated without truth" not in page


def test_estimate_arguments_that_do_not_go_together_are_refused(
        runs: Path, reference: Path, tmp_path: Path) -> None:
    batch = runs / "receipts.jsonl"
    with pytest.raises(ValueError, match="needs its truth"):
        report.build(batch, reference=reference / "receipts.jsonl", write=False)
    with pytest.raises(ValueError, match="without a reference"):
        report.build(batch, reference_truth=bundled.TRUTH, write=False)
    with pytest.raises(ValueError, match="audit sample"):
        report.build(batch, sample=bundled.TRUTH, write=False)
    empty = tmp_path / "no-truth"
    empty.mkdir()
    with pytest.raises(ValueError, match="grades none of the reference's values"):
        report.build(batch, reference=reference / "receipts.jsonl", reference_truth=empty,
                     write=False)


def test_cli_estimates(runs: Path, reference: Path, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    ledger = _audited_ledger(runs, tmp_path / "corrections.parquet")
    code = cli.main(["report", str(runs / "invoices.jsonl"), "--reference",
                     str(reference / "reference.jsonl"), "--reference-truth",
                     str(bundled.TRUTH), "--sample", str(ledger), "--error-budget", "0.05",
                     "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and (out / "frames" / "invoices-estimate.parquet").exists()
    assert "estimated accuracy" in printed and "for ≤ 5% wrong among the rest" in printed
    assert "confidence corrected by" in printed
    # A corrections ledger (.parquet) is truth for --truth and --reference-truth as well.
    assert cli.main(["report", str(runs / "invoices.jsonl"), "--truth", str(ledger),
                     "--out", str(tmp_path / "ledger")]) == 0
    capsys.readouterr()
    for args, said in [
        (["--reference", str(reference / "reference.jsonl")], "--reference-truth"),
        (["--reference-truth", str(bundled.TRUTH)], "needs --reference"),
        (["--sample", str(ledger)], "--sample corrects an estimate"),
        (["--reference", str(tmp_path / "missing.jsonl"), "--reference-truth",
          str(bundled.TRUTH)], "missing.jsonl"),
    ]:
        assert cli.main(["report", str(runs / "invoices.jsonl"), *args, "--out",
                         str(out)]) == 2
        assert said in capsys.readouterr().err
