"""Summaries and quality analysis, each checked against an example worked out by hand.

Most examples use ``fixtures/handwritten.json`` (three extractions of a small
configuration "hand"); the arithmetic is spelled out next to each expectation.
"""

from __future__ import annotations

import copy
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import audit, bundled, frames
from servicetools.analysis.audit.matching import document_matcher

FIXTURES = Path(__file__).parent / "fixtures"
DATA = bundled.ROOT
IS_EMPTY = "`{value}` is empty"
NOT_ONE_OF = "`{value}` is not one of: red, blue"
NO_MATCH = "`{value}` does not match the pattern Net \\d+"
NOT_AMOUNT = "`{value}` is not an amount"


@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return results


@pytest.fixture(scope="module")
def truth_a() -> pd.DataFrame:
    """Expected values of invoices/a.pdf (the hand-written extraction e-a)."""
    rows = [("Invoice Number", None, None, 0, "INV-1"), ("Tags", None, None, 0, "red"),
            ("Tags", None, None, 1, "blue"), ("Note", None, None, 0, "net  30"),
            ("Ref", None, None, 0, "R-1")]
    table = [["Widget A", "10.00"], ["Gadget", "12.00"], ["Bolt", ""], ["", "5.00"]]
    rows += [("t-items", r, c, None, text) for r, cells in enumerate(table)
             for c, text in enumerate(cells)]
    return pd.DataFrame(rows, columns=["target_name", "row", "column", "value_index",
                                       "value"]).assign(document="invoices/a.pdf")


# -- scorecard, failures, documents ----------------------------------------------------------
def test_a_threshold_outside_zero_to_one_is_refused(hand: list[dict[str, Any]]) -> None:
    # Before, threshold=80 counted every value "below" without a word.
    with pytest.raises(ValueError, match=r"threshold is a confidence between 0 and 1, not 80 "
                                         r"\(for 80 %, write 0.8\)"):
        audit.scorecard(hand, threshold=80)
    with pytest.raises(ValueError, match="not -0.1"):
        audit.scorecard(hand, threshold=-0.1)
    assert len(audit.scorecard(hand, threshold=1)) > 0


def test_scorecard_by_hand(hand: list[dict[str, Any]]) -> None:
    f, c, t = frames.fields(hand), frames.cells(hand), frames.targets(hand)
    card = audit.scorecard(f, c, targets=t)
    assert list(card.index) == ["Invoice Number", "Tags", "Note", "Ref",
                                "t-items / Description", "t-items / Amount"]
    assert tuple(card.columns) == audit.SCORECARD_COLUMNS
    # Three extractions of "hand" (e-b has no value at all, the targets frame knows it).
    assert card["n_documents"].tolist() == [3] * 6
    assert card["n_values"].tolist() == [2, 2, 2, 2, 4, 4]
    # Fields: documents with a non-blank value / 3; table columns: non-blank cells / cells.
    assert card["fill_rate"].tolist() == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1 / 3, 1, 1])
    # Ref's "" has no confidence at all: one confidence left, never a zero.
    assert card["confidence_n"].tolist() == [2, 2, 2, 1, 4, 4]
    assert card["confidence_mean"].tolist() == pytest.approx(
        [0.975, 0.6, 0.8, 1.0, (0.9 + 0.8 + 0.7 + 1.0) / 4, (0.9 + 0.3 + 0.6 + 1.0) / 4])
    assert card.loc["Invoice Number", "confidence_p10"] == pytest.approx(0.955)  # .95+.1*.05
    assert card.loc["t-items / Amount", "confidence_min"] == 0.3
    # Under 0.5: Tags' 0.4 (1 of 2), the Amount 0.3 (1 of 4).
    assert card["share_below"].tolist() == pytest.approx([0, 0.5, 0, 0, 0, 0.25])
    assert card["pass_rate"].tolist() == pytest.approx([1, 0.5, 0.5, 0.5, 1, 0.75])
    assert card["n_failed"].tolist() == [0, 1, 1, 1, 0, 1]
    assert card["top_condition"].tolist()[1:4] == [NOT_ONE_OF, NO_MATCH, IS_EMPTY]
    assert pd.isna(card.loc["Invoice Number", "top_condition"])
    assert card["correction_rate"].isna().all()
    assert card.loc["t-items / Amount", "kind"] == "cell"
    assert card.loc["t-items / Amount", "header"] == "Amount"
    # Without the targets frame only the extractions with values count (e-a, e-c).
    assert audit.scorecard(f, c)["n_documents"].tolist() == [2] * 6


def ledger() -> pd.DataFrame:
    return pd.DataFrame({
        "extraction_id": ["e-a", "e-a", "e-a", "e-a", "e-a"],
        "target_id": ["t-number", "t-tags", "t-ref", "t-note", "t-note"],
        "value_id": ["v-a1", "v-a3", "v-a5", "v-a4", "v-a4"],
        "old_value": ["INV-1", "blu`e", "", "Net 30", "Net 30"],
        "new_value": ["INV-1", "blue", "R-1", "Net 31", "Net 30"],
        "old_confidence": [0.95, 0.4, None, 0.6, 0.6],
        "time": pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:01", "2026-01-01 10:02",
                                "2026-01-01 10:03", "2026-01-01 10:04"], utc=True),
    })


def test_scorecard_correction_rate_from_a_ledger(hand: list[dict[str, Any]]) -> None:
    card = audit.scorecard(frames.fields(hand), corrections=ledger())
    # Changed: v-a3 (Tags) and v-a5 (Ref); v-a1 confirmed; v-a4 changed, then set back.
    assert card["correction_rate"].tolist() == [0, 0.5, 0, 0.5]


def test_failures_by_hand(hand: list[dict[str, Any]]) -> None:
    out = audit.failures(frames.fields(hand), frames.cells(hand))
    assert tuple(out.columns) == audit.FAILURE_COLUMNS
    assert out.index.names == ["target", "condition"]
    assert list(out.index) == [("Tags", NOT_ONE_OF), ("Note", NO_MATCH), ("Ref", IS_EMPTY),
                               ("t-items / Amount", NOT_AMOUNT)]
    assert out["n"].tolist() == [1, 1, 1, 1]
    assert out["share"].tolist() == [0.5, 0.5, 0.5, 0.25]
    assert out["examples"].tolist() == [("blu`e",), ("Due 31.02.2024",), ("",), ("abc",)]
    assert out["documents"].tolist() == [("invoices/a.pdf",), ("invoices/c.pdf",),
                                         ("invoices/a.pdf",), ("invoices/a.pdf",)]


def test_failures_count_each_condition_and_order_by_frequency() -> None:
    f = pd.DataFrame({
        "target_name": ["Total"] * 4, "extraction_id": ["e1", "e2", "e3", "e4"],
        "document_name": ["1.pdf", "2.pdf", "3.pdf", "4.pdf"],
        "value": ["", "x", "x", "ok"], "confidence": [0.1, 0.2, 0.3, 0.9],
        "validation_passed": [False, False, False, True],
        "validation_messages": [("`` is empty", "`` is not an amount"),
                                ("`x` is not an amount",), ("`x` is not an amount",), ()]})
    out = audit.failures(f, examples=1)
    assert list(out.index) == [("Total", NOT_AMOUNT), ("Total", IS_EMPTY)]
    assert out["n"].tolist() == [3, 1] and out["share"].tolist() == [0.75, 0.25]
    assert out["examples"].tolist() == [("x",), ("",)]  # the most frequent example first
    assert out["n_documents"].tolist() == [3, 1]
    # Without a condition column (a frame made by hand) it is derived from the messages.
    assert audit.scorecard(f).loc["Total", "top_condition"] == NOT_AMOUNT


def test_documents_by_hand(hand: list[dict[str, Any]]) -> None:
    out = audit.documents(frames.fields(hand), frames.cells(hand))
    assert list(out.index) == ["e-a", "e-c"] and tuple(out.columns) == audit.DOCUMENT_COLUMNS
    a, c = out.loc["e-a"], out.loc["e-c"]
    # e-a: 5 field values + 6 cells; blank: Ref's "".
    assert (a["n_values"], a["n_filled"], a["n_failed"]) == (11, 10, 3)
    assert a["fill_rate"] == pytest.approx(10 / 11)
    # Confidences .95 .8 .4 .6 (Ref has none) and cells .9 .9 .8 .3 .7 .6: 6.95 / 10.
    assert a["confidence_mean"] == pytest.approx(0.695) and a["confidence_min"] == 0.3
    assert a["failed_targets"] == ("Tags", "Ref", "t-items / Amount")
    assert (c["n_values"], c["n_failed"], c["failed_targets"]) == (5, 1, ("Note",))
    assert c["document_name"] == "invoices/c.pdf" and c["configuration_name"] == "hand"


def test_summaries_by_keys_that_span_fields_and_cells(hand: list[dict[str, Any]]) -> None:
    # Found comparing with the dataset path (issue 16): these used to raise.
    f, c = frames.fields(hand), frames.cells(hand)
    card = audit.scorecard(f, c, by="configuration_name")
    # e-a and e-c are of "hand"; a group of fields and cells has no one fill rate.
    assert card["n_documents"].tolist() == [2] and math.isnan(card["fill_rate"].iloc[0])
    assert audit.scorecard(f, c, by="configuration_id")["n_values"].tolist() == [16]
    by_kind = audit.failures(f, c, by=("kind", "target"))
    assert by_kind["kind"].tolist() == ["field", "field", "field", "cell"]
    # Only cells have a header: the fields' failures are left out, none of them raises.
    assert list(audit.failures(f, by="header").index) == []
    missing = f.assign(value=f["value"].where(f["value_id"] != "v-a3"))
    # A failed value that is missing is no example (it used to be NaN).
    assert audit.failures(missing)["examples"].tolist() == [(), ("Due 31.02.2024",), ("",)]


def test_empty_summaries_keep_their_columns() -> None:
    empty = frames.fields([])
    assert tuple(audit.scorecard(empty).columns) == audit.SCORECARD_COLUMNS
    assert tuple(audit.failures(empty).columns) == audit.FAILURE_COLUMNS
    assert tuple(audit.documents(empty).columns) == audit.DOCUMENT_COLUMNS
    assert tuple(audit.drift(empty, empty).columns) == audit.DRIFT_COLUMNS


# -- significance and drift ------------------------------------------------------------------
def test_mann_whitney_by_hand() -> None:
    # x below y: ranks 1, 2, 3 -> U1 = 6 - 6 = 0; sigma^2 = 3*3/12 * 7 = 5.25;
    # z = (max(U1, U2) - 4.5 - 0.5) / sqrt(5.25) = 4 / 2.29129 = 1.745743.
    u, p = audit.mann_whitney([1, 2, 3], [4, 5, 6])
    assert u == 0.0 and p == pytest.approx(math.erfc(1.745743 / math.sqrt(2)), rel=1e-6)
    assert p == pytest.approx(0.0808556, rel=1e-5)
    # Ties: ranks 1.5 1.5 3.5 | 3.5 5.5 5.5 -> U1 = 6.5 - 6 = 0.5; three ties of 2:
    # sigma^2 = 9/12 * (7 - 18/30) = 4.8; z = (8.5 - 4.5 - 0.5) / sqrt(4.8) = 1.597524.
    u, p = audit.mann_whitney([1, 1, 2], [2, 3, 3])
    assert u == 0.5 and p == pytest.approx(math.erfc(1.597524 / math.sqrt(2)), rel=1e-6)
    assert audit.mann_whitney([0.5] * 3, [0.5] * 4) == (6.0, 1.0)  # all tied: no evidence
    assert all(math.isnan(v) for v in audit.mann_whitney([], [1.0]))
    assert audit.mann_whitney([1, float("nan"), 2, 3], [4, 5, 6]) == audit.mann_whitney(
        [1, 2, 3], [4, 5, 6])


def test_ks_by_hand() -> None:
    # Disjoint samples: D = 1; en = sqrt(9/6) = 1.224745;
    # lambda = (1.224745 + 0.12 + 0.11/1.224745) * 1 = 1.434559;
    # p = 2 (e^(-2 l^2) - e^(-8 l^2) + ...) = 2 * 0.016311 = 0.032622.
    d, p = audit.ks_2samp([1, 2, 3], [4, 5, 6])
    assert d == 1.0 and p == pytest.approx(0.032622, abs=1e-5)
    d, p = audit.ks_2samp([1, 2, 3, 4], [3, 4, 5, 6])  # the ECDFs differ by 2/4 at most
    assert d == 0.5


def test_drift_by_hand() -> None:
    def batch(conf: list[float], values: list[str], passed: list[bool]) -> pd.DataFrame:
        return pd.DataFrame({"target_name": ["A"] * 3, "configuration_id": ["c"] * 3,
                             "extraction_id": ["e1", "e2", "e3"], "value": values,
                             "confidence": conf, "validation_passed": passed})

    before = batch([0.9, 0.8, 0.7], ["x", "x", ""], [True, True, False])
    after = batch([0.5, 0.4, 0.3], ["x", "x", "x"], [True, True, True])
    out = audit.drift(before, after)
    row = out.loc["A"]
    assert row["confidence_shift"] == pytest.approx(-0.4)
    # Before is all above after: U of before = 9, the same p as [1,2,3] vs [4,5,6].
    assert row["statistic"] == 9.0 and row["p_value"] == pytest.approx(0.0808556, rel=1e-5)
    assert not row["significant"]
    assert row["fill_rate_change"] == pytest.approx(1 / 3)
    assert row["failure_rate_change"] == pytest.approx(-1 / 3)
    ks = audit.drift(before, after, test="ks")
    assert ks.loc["A", "statistic"] == 1.0
    assert bool(audit.drift(before, after, alpha=0.1).loc["A", "significant"])


def test_drift_between_recorded_batches_has_every_target() -> None:
    responses = json.loads((FIXTURES / "recorded_responses.json").read_text(encoding="utf-8"))
    out = audit.drift(responses[:2], responses[2:])
    assert "Invoice Number" in out.index and "Merchant" in out.index
    assert out.loc["Merchant", "n_before"] == 0 and pd.isna(out.loc["Merchant", "p_value"])


# -- normalisation and truth -----------------------------------------------------------------
@pytest.mark.parametrize(("text", "value"), [
    ("1,234.50", "1234.50"), ("1.234,50", "1234.50"), ("$1,234.50", "1234.50"),
    ("USD 1,234.50", "1234.50"), ("1.234,50 EUR", "1234.50"), ("0,21EUR", "0.21"),
    ("1,234", "1234"), ("1.234", "1.234"), ("12,5", "12.5"), ("(12.00)", "-12.00"),
    ("-$3", "-3"), ("$-3", "-3"), ("12.00-", "-12.00"), ("1.234.567,89 €", "1234567.89"),
    ("7", "7"), ("1,23,456", "123456"), ("12,50 zł", "12.50")])
def test_parse_amount(text: str, value: str) -> None:
    assert audit.parse_amount(text) == Decimal(value)


@pytest.mark.parametrize("text", ["INV-1", "15.03.2025", "1,2,3", "abc", "", "1,", "$",
                                  "1,234.567.8"])
def test_parse_amount_refuses(text: str) -> None:
    assert audit.parse_amount(text) is None


def test_parse_date_and_normalize() -> None:
    assert audit.parse_date("2024-03-15") == "2024-03-15"
    assert audit.parse_date("15/03/2024") == "2024-03-15"
    assert audit.parse_date("March 15, 2024") == "2024-03-15"
    assert audit.parse_date("15 mar 2024") == "2024-03-15"
    assert audit.parse_date("31.02.2024") is None and audit.parse_date("Net 30") is None
    assert audit.normalize(" A  b\nC ") == "A b C"
    assert audit.normalize(" A  b ", ["case"]) == " a  b "
    assert audit.normalize("$1,234.50", "amounts") == "1234.5"
    assert audit.normalize("Mar 05, 2024", ["dates"]) == "2024-03-05"
    assert audit.normalize("Mar 05, 2024", None) == "Mar 05, 2024"
    assert audit.normalize(None) is None
    with pytest.raises(ValueError, match="unknown normalisation"):
        audit.normalize("x", ["accents"])


def test_truth_from_the_dev_set() -> None:
    one = audit.truth(DATA / "truth" / "inv-0001.json")
    assert tuple(one.columns) == audit.TRUTH_COLUMNS
    raw = json.loads((DATA / "truth" / "inv-0001.json").read_text(encoding="utf-8"))
    rows = raw["tables"]["Line Items"][0]["rows"]
    assert (one["kind"] == "field").sum() == len(raw["fields"])
    assert (one["kind"] == "cell").sum() == sum(len(r) for r in rows)
    fields = one[one["kind"] == "field"].set_index("target_name")["value"]
    assert fields.to_dict() == raw["fields"]
    cells = one[one["kind"] == "cell"]
    assert cells["value"].iloc[0] == rows[0][0] and "\n" in rows[0][0]
    every = audit.truth(DATA / "truth")
    assert every["document"].nunique() == len(list((DATA / "truth").glob("*.json")))
    # Continued tables: record counts rows across the pages.
    multi = every[(every["kind"] == "cell") & (every["table_index"] == 1)]
    if len(multi):
        doc = multi["document"].iloc[0]
        first = every[(every["document"] == doc) & (every["table_index"] == 0)]
        assert multi["record"].min() == first["row"].max() + 1


def test_truth_from_csv_json_and_records(tmp_path: Path, truth_a: pd.DataFrame) -> None:
    csv_path = tmp_path / "truth.csv"
    truth_a.to_csv(csv_path, index=False)
    from_csv = audit.truth(csv_path)
    from_frame = audit.truth(truth_a)
    pd.testing.assert_frame_equal(from_csv.drop(columns="source"),
                                  from_frame.drop(columns="source"))
    assert (from_frame["kind"] == "cell").sum() == 8
    assert from_frame.loc[from_frame["kind"] == "cell", "record"].tolist() == [
        0, 0, 1, 1, 2, 2, 3, 3]
    json_path = tmp_path / "truth.json"
    json_path.write_text(truth_a.to_json(orient="records"))
    assert len(audit.truth(json_path)) == len(truth_a)
    with pytest.raises(ValueError, match="missing: value"):
        audit.truth(pd.DataFrame({"document": ["a"], "target_name": ["x"]}))


def test_truth_from_a_spreadsheet_of_one_row_per_document(tmp_path: Path) -> None:
    # As analysts keep truth: a document column and one column per target. An empty text
    # is a value the document does not print; a missing cell is no truth.
    sheet = pd.DataFrame({"document_name": ["a.pdf", "b.pdf"],
                          "Invoice Number": [4471093, None],
                          "Total": ["1,00", ""]})
    long = audit.truth(sheet)
    assert tuple(long.columns) == audit.TRUTH_COLUMNS
    got = {(r.document, r.target_name): r.value for r in long.itertuples()}
    assert got == {("a.pdf", "Invoice Number"): "4471093", ("a.pdf", "Total"): "1,00",
                   ("b.pdf", "Total"): ""}
    assert (long["kind"] == "field").all() and (long["value_index"] == 0).all()
    # The same sheet as a CSV: its blank cells are empty texts (not printed).
    path = tmp_path / "truth.csv"
    sheet.rename(columns={"document_name": "document"}).to_csv(path, index=False)
    from_csv = audit.truth(path)
    assert len(from_csv) == 4
    assert from_csv.set_index(["document", "target_name"]).loc[
        ("b.pdf", "Invoice Number"), "value"] == ""
    # A fields frame made by hand, without value_index: each target's values count from
    # 0 in order (without that, every value was graded a miss beside a spurious one).
    fields = pd.DataFrame({"target_name": ["Invoice Number", "Total", "Total"],
                           "extraction_id": ["e1", "e1", "e2"],
                           "document_name": ["in/a.pdf", "in/a.pdf", "in/b.pdf"],
                           "value": ["4471093", "1.00", ""], "confidence": [0.9, 0.8, 0.1],
                           "validation_passed": [True, True, True]})
    acc = audit.accuracy(fields, sheet, normalize="all")
    assert acc.loc[audit.ALL, "n"] == 3 and acc.loc[audit.ALL, "n_correct"] == 3
    with pytest.raises(ValueError, match="a column per target"):
        audit.truth(pd.DataFrame({"document": ["a.pdf"]}))


def test_only_the_targets_the_data_holds_are_graded() -> None:
    # Two configurations in one batch and one truth sheet with the columns of both; a
    # frame filtered to one target; field frames given without the cells. Each grade
    # speaks of what it was given: before, every target the data lacked counted its
    # truth as missed ("All" 2% on a frame filtered to Total).
    def value(extraction: str, document: str, configuration: str, target: str,
              text: str) -> dict[str, Any]:
        return {"extraction_id": extraction, "document_name": document,
                "configuration_id": configuration, "target_name": target, "value": text,
                "value_index": 0, "confidence": 0.9, "validation_passed": True}

    fields = pd.DataFrame([
        value("e1", "a.pdf", "invoices", "Vendor", "Acme"),
        value("e1", "a.pdf", "invoices", "Total", "10.00"),
        value("e2", "b.pdf", "receipts", "Merchant", "Cafe"),
        value("e2", "b.pdf", "receipts", "Total", "3.50")])
    sheet = pd.DataFrame({"document": ["a.pdf", "b.pdf"], "Vendor": ["Acme", ""],
                          "Merchant": ["", "Cafe"], "Total": ["10.00", "3.50"]})
    graded = audit.grade(fields, sheet)
    assert sorted(zip(graded["document"].astype(str), graded["target_name"].astype(str),
                      strict=True)) == [
        ("a.pdf", "Total"), ("a.pdf", "Vendor"), ("b.pdf", "Merchant"), ("b.pdf", "Total")]
    only_total = audit.accuracy(fields[fields["target_name"] == "Total"], sheet)
    assert list(only_total.index) == ["Total", audit.ALL]
    assert only_total.loc[audit.ALL, "n"] == 2 and only_total.loc[audit.ALL, "accuracy"] == 1
    # A truth with a table, graded against field frames alone: the table is left out;
    # with the cells frame (here: no cell found), its cells are missed.
    cells_truth = pd.DataFrame({"document": ["a.pdf"] * 2, "kind": "cell",
                                "target_name": "Items", "record": [0, 0], "column": [0, 1],
                                "value": ["Widget", "10.00"]})
    table_truth = pd.concat([sheet.melt(id_vars="document", var_name="target_name"),
                             cells_truth], ignore_index=True)
    assert audit.accuracy(fields, table_truth).loc[audit.ALL, "n"] == 4
    no_cells = pd.DataFrame({"extraction_id": pd.Series(dtype=object), "table_id": [],
                             "target_name": [], "row": [], "column": [], "value": []})
    with_cells = audit.accuracy(fields, table_truth, cells=no_cells)
    assert with_cells.loc[audit.ALL, "n"] == 6 and with_cells.loc[audit.ALL, "n_missed"] == 2


def test_arguments_given_wrong_get_a_message_that_says_how() -> None:
    fields = pd.DataFrame({"extraction_id": ["e1"], "document_name": ["a.pdf"],
                           "target_name": ["Total"], "value": ["1.00"], "confidence": [0.9],
                           "validation_passed": [True]})
    truth = pd.DataFrame({"document": ["a.pdf"], "Total": ["1.00"]})
    # A TypeError from a comparison, and pandas' KeyError 'nope', before.
    with pytest.raises(ValueError, match="error_budget is a rate between 0 and 1, not '5%'"):
        audit.thresholds(fields, truth, error_budget="5%")
    with pytest.raises(ValueError, match=r"by='nope'.*Group by one of: .*target_name"):
        audit.accuracy(fields, truth, by="nope")
    with pytest.raises(ValueError, match=r"by='nope'.*Group by one of"):
        audit.scorecard(fields, by="nope")


def test_a_value_that_failed_without_a_list_of_messages_is_still_a_failure(
        tmp_path: Path) -> None:
    # A frame made by hand has no messages; one read back from a CSV holds them as text.
    # Either way the failed value was not counted at all (failures came back empty).
    by_hand = pd.DataFrame({"extraction_id": ["e1", "e2"], "target_name": ["Total"] * 2,
                            "value": ["1.00", "abc"], "confidence": [0.9, 0.4],
                            "validation_passed": [True, False]})
    out = audit.failures(by_hand)
    assert out.index.tolist() == [("Total", "(failed, no message)")]
    assert out["n"].tolist() == [1] and out["examples"].tolist() == [("abc",)]
    # As the frames give it (messages as a tuple, their condition beside), and the same
    # frame written to a CSV and read back: one failure under one condition.
    given = by_hand.assign(validation_messages=[(), ("`abc` is not an amount",)],
                           condition=[None, "`{value}` is not an amount"])
    path = tmp_path / "fields.csv"
    given.to_csv(path, index=False)
    for frame in (given, pd.read_csv(path)):
        out = audit.failures(frame)
        assert out.index.tolist() == [("Total", "`{value}` is not an amount")]
        assert out["n"].tolist() == [1]


def test_matching_documents_by_path_suffix() -> None:
    match = document_matcher(["invoices/inv-0001.pdf", "receipts/inv-0001.pdf",
                              "invoices/inv-0002.pdf"])
    assert match("data/documents/invoices/inv-0001.pdf") == "invoices/inv-0001.pdf"
    assert match("invoices/inv-0001.pdf") == "invoices/inv-0001.pdf"
    assert match("inv-0002.pdf") == "invoices/inv-0002.pdf"
    assert match("inv-0001.pdf") is None  # two folders hold it: no guess
    assert match("other.pdf") is None and match(None) is None


# -- grading, accuracy, calibration, thresholds ----------------------------------------------
def test_grade_and_accuracy_by_hand(hand: list[dict[str, Any]], truth_a: pd.DataFrame
                                    ) -> None:
    graded = audit.grade(hand, truth_a)
    assert tuple(graded.columns) == audit.GRADE_COLUMNS
    # Only e-a's document has truth: 5 field values and 8 cell places (two never extracted).
    assert set(graded["extraction_id"]) == {"e-a"} and len(graded) == 13
    absent = graded[~graded["present"]]
    assert sorted(zip(absent["record"], absent["column"], strict=True)) == [(2, 1), (3, 0)]
    assert absent["correct"].all() and absent["confidence"].isna().all()
    acc = audit.accuracy(graded)
    assert tuple(acc.columns) == audit.ACCURACY_COLUMNS
    assert acc.index[-1] == audit.ALL
    # Whitespace only: "Widget\nA" = "Widget A"; "Net 30" != "net 30"; "5,00" != "5.00".
    expected = {"Invoice Number": (1, 1), "Tags": (2, 1), "Note": (1, 0), "Ref": (1, 0),
                "t-items / Description": (4, 4), "t-items / Amount": (4, 2), "All": (13, 8)}
    assert {k: (int(r["n"]), int(r["n_correct"])) for k, r in acc.iterrows()} == expected
    assert acc.loc["Ref", "n_missed"] == 1 and acc.loc["Tags", "n_wrong"] == 1
    assert acc.loc["All", "n_spurious"] == 0
    # Case, dates and amounts too: "Net 30" ~ "net  30" and "5,00" ~ "5.00".
    loose = audit.accuracy(hand, truth_a, normalize="all")
    assert loose.loc["All", "n_correct"] == 10
    assert loose.loc["Note", "accuracy"] == 1.0
    exact = audit.accuracy(hand, truth_a, normalize=None)
    assert exact.loc["t-items / Description", "n_correct"] == 3  # "Widget\nA" != "Widget A"


def test_calibration_by_hand(hand: list[dict[str, Any]], truth_a: pd.DataFrame) -> None:
    cal = audit.calibration(hand, truth_a)
    # Scored (confidence, correct): .95 T, .8 T, .4 F, .6 F | .9 T, .9 T, .8 T, .3 F, .7 T,
    # .6 F. Bins: 3: .3/0; 4: .4/0; 6: .6,.6/0; 7: .7/1; 8: .8,.8/1; 9: .95,.9,.9/1.
    # ECE = (1*.3 + 1*.4 + 2*.6 + 1*.3 + 2*.2 + 3*|.91667 - 1|) / 10 = 2.85 / 10.
    assert cal.ece == pytest.approx(2.85 / 10)
    # Brier: .0025 + .04 + .16 + .36 + .01 + .01 + .04 + .09 + .09 + .36 = 1.1625 over 10.
    assert cal.brier == pytest.approx(0.11625)
    overall = cal.table.xs(audit.ALL, level="target")
    assert overall["n"].tolist() == [0, 0, 0, 1, 1, 0, 2, 1, 2, 3]
    assert overall.loc[9, "confidence"] == pytest.approx((0.95 + 0.9 + 0.9) / 3)
    assert overall.loc[6, "accuracy"] == 0.0 and pd.isna(overall.loc[0, "accuracy"])
    assert cal.summary.loc["All", "n"] == 10 and cal.summary.index[-1] == audit.ALL
    assert cal.summary.loc["Tags", "ece"] == pytest.approx((0.2 + 0.4) / 2)
    assert tuple(cal.summary.columns) == audit.CALIBRATION_COLUMNS
    # One bin: |accuracy - mean confidence| = |6/10 - 6.95/10|.
    assert audit.calibration(hand, truth_a, bins=1).ece == pytest.approx(0.095)
    assert "ece" in cal._repr_html_()


def test_thresholds_by_hand(hand: list[dict[str, Any]], truth_a: pd.DataFrame) -> None:
    result = audit.thresholds(hand, truth_a, error_budget=0.0)
    sweep = result.sweep[result.sweep["target"] == audit.ALL].set_index("threshold")
    # Sorted: .3F .4F .6F .6F .7T .8T .8T .9T .9T .95T; 13 graded values in all.
    assert sweep.index.tolist() == [0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95]
    assert sweep["n_accepted"].tolist() == [10, 9, 8, 6, 5, 3, 1]
    assert sweep["n_errors"].tolist() == [4, 3, 2, 0, 0, 0, 0]
    assert sweep.loc[0.6, "error_rate"] == 0.25
    assert sweep.loc[0.7, "automation_rate"] == pytest.approx(6 / 13)
    assert result.threshold == 0.7  # the lowest with no error
    best = result.recommended.loc[audit.ALL]
    assert best["automation_rate"] == pytest.approx(6 / 13) and best["error_rate"] == 0
    assert audit.thresholds(hand, truth_a, error_budget=0.25).threshold == 0.6
    # A budget nothing meets: no threshold, no automation.
    assert math.isnan(result.recommended.loc["Note", "threshold"])
    assert result.recommended.loc["Note", "automation_rate"] == 0
    grid = audit.thresholds(hand, truth_a, grid=10).sweep
    assert len(grid[grid["target"] == audit.ALL]) == 11


def test_grade_against_a_ledger(hand: list[dict[str, Any]]) -> None:
    graded = audit.grade(hand, ledger())
    # The latest entry per value: v-a1 confirmed, v-a3 and v-a5 changed, v-a4 set back.
    assert graded["value_id"].tolist() == ["v-a1", "v-a3", "v-a4", "v-a5"]
    assert graded["correct"].tolist() == [True, False, True, False]
    assert graded["target"].tolist() == ["Invoice Number", "Tags", "Note", "Ref"]
    assert graded["document_name"].tolist() == ["invoices/a.pdf"] * 4
    assert graded["confidence"].tolist()[:3] == [0.95, 0.4, 0.6]
    assert math.isnan(graded["confidence"].iloc[3])  # neither ledger nor value had one
    acc = audit.accuracy(hand, ledger())
    assert acc.loc[audit.ALL, "accuracy"] == 0.5
    truth = audit.truth(ledger())
    assert (truth["source"] == "ledger").all() and len(truth) == 4


def test_recorded_results_against_the_dev_set_truth() -> None:
    responses = json.loads((FIXTURES / "recorded_responses.json").read_text(encoding="utf-8"))
    graded = audit.grade(responses, DATA / "truth")
    assert graded["document"].nunique() == 4
    truth = audit.truth(DATA / "truth")
    docs = set(graded["document"].astype(str))
    n_truth_fields = ((truth["kind"] == "field") & truth["document"].isin(docs)).sum()
    assert (graded["kind"] == "field").sum() == n_truth_fields
    acc = audit.accuracy(graded)
    assert 0 <= acc.loc[audit.ALL, "accuracy"] <= 1
    assert set(acc.index) >= {"Invoice Number", "Merchant", "Line Items / Amount"}


# -- compare ---------------------------------------------------------------------------------
def test_compare_two_batches_by_hand(hand: list[dict[str, Any]], truth_a: pd.DataFrame
                                     ) -> None:
    better = copy.deepcopy(hand)
    tag = better[0]["extracted_targets"][1]["extracted_values"][1]
    tag.update(extracted_field="blue", validation_passed=True, validation_messages=[],
               confidence=0.9)
    better = better[:1]  # only a.pdf: compare keeps the shared documents
    out = audit.compare(hand, better, truth_a)
    assert tuple(out.columns) == audit.COMPARE_COLUMNS
    tags = out.loc["Tags"]
    # a: .8 and .4 -> .6; b: .8 and .9 -> .85. Failures 1 of 2 -> 0. Accuracy .5 -> 1.
    assert tags["confidence_delta"] == pytest.approx(0.25)
    assert tags["failure_rate_delta"] == pytest.approx(-0.5)
    assert (tags["accuracy_a"], tags["accuracy_b"]) == (0.5, 1.0)
    assert out.loc["Invoice Number", "n_a"] == 1  # e-c's value left out: not in b
    assert audit.compare(hand, better)["accuracy_delta"].isna().all()


def test_a_ledger_object_and_its_target_names() -> None:
    class Ledger:  # what servicetools.ledger.Ledger offers: the rows as .frame
        frame = ledger().assign(target_name="Named", target_id="t-unknown")

    graded = audit.grade(frames.fields([]), Ledger())
    assert set(graded["target"]) == {"Named"} and len(graded) == 4
    assert set(audit.truth(Ledger())["target_name"]) == {"Named"}
