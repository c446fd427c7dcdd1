"""The configuration doctor (`audit.doctor`) on batches whose defects are known: error
kinds, rules as detectors, mined rules, findings, what-if and the changed configuration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from servicetools import audit
from servicetools.analysis.audit.error_kinds import kinds
from servicetools.analysis.audit.suggestions import halves, mine, suggest
from servicetools.service.core.configs import check_configuration
from servicetools.wire.rules import validate_value

DATE_TREE = {"name": "date", "rule_groups": [
    {"name": "date format", "rules": [{"type": "date", "formats": ["%d.%m.%Y", "%Y-%m-%d"]}]}]}
AMOUNT_TREE = {"name": "total", "rule_groups": [
    {"name": "amount", "rules": [{"type": "amount"}]}]}


def _configuration(date_tree: dict = DATE_TREE, total_tree: dict = AMOUNT_TREE) -> dict:
    def target(name: str, description: str, tree: dict, example: str) -> dict:
        return {"id": f"t-{name.lower()}", "type": "field", "name": name,
                "description": description, "example": example, "validation_tree": tree,
                "is_multiple": False, "search_area": "all", "search_area_type": "all",
                "extraction_group_id": "g", "creation_unix_timestamp": 1767225600.0}

    return {"id": "cfg", "name": "invoices", "extraction_targets": [
        target("Date", "The issue date.", date_tree, "01.03.2024"),
        target("Due", "The due date.", DATE_TREE, "01.04.2024"),
        target("Total", "The total.", total_tree, "12.50")]}


def _graded(n: int = 60, seed: int = 0, *, swap: bool = False,
            missing: float = 0.0) -> pd.DataFrame:
    """Grade-like rows of ``n`` documents: dates printed dd.mm.yyyy, totals; a tenth of
    totals wrong; with ``swap``, Date reads the due date and Due the issue date."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        doc = f"doc-{i:03d}.pdf"
        issued, due = f"{1 + i % 28:02d}.03.2024", f"{1 + i % 28:02d}.04.2024"
        total = f"{rng.integers(10, 999)}.{rng.integers(0, 99):02d}"
        read_date, read_due = (due, issued) if swap else (issued, due)
        if rng.random() < missing:
            read_date = ""
        read_total = total if i % 10 else "2024"  # a year read as the total
        for target, value, expected in (("Date", read_date, issued), ("Due", read_due, due),
                                        ("Total", read_total, total)):
            rows.append({"document": doc, "target": target, "value": value,
                         "expected": expected, "correct": value == expected,
                         "confidence": 0.95 if value == expected else 0.6})
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


def test_error_kinds_tell_missed_spurious_form_and_another_targets_value() -> None:
    rows = pd.DataFrame({
        "document": ["a"] * 5, "target": ["Date", "Due", "Total", "No", "Tax"],
        "value": ["2024-03-01", "01.03.2024", "", "7", "8.00"],
        "expected": ["01.03.2024", "2024-04-01", "9.00", "", "7.00"],
        "correct": pd.array([False] * 5, dtype="boolean")})
    found = kinds(rows)
    assert found["kind"].tolist() == ["format_only", "other_target", "missed", "spurious",
                                      "wrong"]
    assert found.loc[1, "other"] == "Date"


def test_a_date_rule_without_the_printed_format_is_the_top_finding() -> None:
    strict = {"name": "date", "rule_groups": [
        {"name": "iso only", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}]}
    dr = audit.doctor(_graded(), configuration=_configuration(date_tree=strict))
    top = dr.findings.loc[dr.findings["target"] == "Date"].iloc[0]
    assert (top["finding"], top["group"], top["affected"]) == (
        "rule rejects right values", "iso only", 60)
    # Its fix is mined from the right values: the printed format, judged on held-back ones.
    assert top["suggestion"]["rules"][0] == {"type": "date", "formats": ["%d.%m.%Y"]}
    row = dr.detectors.loc[dr.detectors["target"] == "Date"].iloc[0]
    assert (row["false_alarms"], row["n_right"], row["verdict"]) == (60, 60, "always fails")
    # What-if with the fix: every value passes, and nothing was extracted again.
    after = dr.what_if("Date", {"name": "date", "rule_groups": [top["suggestion"]]})
    assert (after.pass_rate_before, after.pass_rate_after) == (0.0, 1.0)
    assert after.review.loc["flagged", "before"] == 60
    assert after.review.loc["flagged", "after"] == 0


def test_a_rule_put_on_the_wrong_target_is_named_with_its_owner() -> None:
    dr = audit.doctor(_graded(), configuration=_configuration(total_tree=DATE_TREE))
    top = dr.findings.loc[dr.findings["target"] == "Total"].iloc[0]
    assert top["finding"] == "rule of another target"
    assert top["other"] in ("Date", "Due") and top["group"] == "date format"


def test_the_amount_rule_catches_what_it_can_and_never_fails_right_totals() -> None:
    dr = audit.doctor(_graded(), configuration=_configuration())
    row = dr.detectors.loc[dr.detectors["target"] == "Total"].iloc[0]
    # A year read as the total is an amount too: the rule cannot catch it, and says so.
    assert (row["false_alarms"], row["catches"], row["n_wrong"]) == (0, 0, 6)
    assert row["verdict"] == "never fails"
    errors = dr.errors.loc["Total"]
    assert (errors["right"], errors["wrong"], errors["n_labelled"]) == (54, 6, 60)


def test_swapped_descriptions_are_found_on_both_targets() -> None:
    dr = audit.doctor(_graded(swap=True), configuration=_configuration())
    for target, other in (("Date", "Due"), ("Due", "Date")):
        top = dr.findings.loc[dr.findings["target"] == target].iloc[0]
        assert (top["finding"], top["cause"], top["other"]) == (
            "descriptions look swapped", "description", other)


def test_values_not_found_where_the_rules_accept_the_truth_point_at_the_description() -> None:
    dr = audit.doctor(_graded(missing=0.5, seed=3), configuration=_configuration())
    top = dr.findings.loc[dr.findings["target"] == "Date"].iloc[0]
    assert top["finding"] == "not found" and top["cause"] == "description"
    assert "The issue date." in top["message"] and "the truth is dates" in top["message"]


def test_mined_rules_are_judged_on_documents_they_were_not_mined_from() -> None:
    rows = kinds(_graded())
    table = suggest(rows)
    held = sum(h == "held" for h in halves(list(rows["document"])).values())
    assert held == 30  # an even split, whatever the hashes
    date = table.loc[(table["target"] == "Date") & (table["kind"] == "date")].iloc[0]
    assert date["n_right_held"] == held and date["false_alarm_rate"] == 0
    assert date["n_mined"] == 60 - held and date["mined_from"] == "right values"
    total = table.loc[(table["target"] == "Total") & table["best"]].iloc[0]
    assert total["n_wrong_held"] > 0 and total["meets"]


def test_printed_dates_of_other_languages_are_mined_as_their_shape() -> None:
    values = [f"{d} {m} 2014" for d in (3, 12, 29) for m in ("maart", "april", "mei")]
    group = mine(values + ["7. Mai 2014", "12. Juni 2014"])["date"]
    assert any(r["type"] == "regex" for r in group["rules"])
    tree = {"name": "d", "rule_groups": [group]}
    assert validate_value("17 juli 2015", tree)[0] and validate_value("1. März 2015", tree)[0]
    assert not validate_value("INV-2014", tree)[0]


def test_without_truth_the_doctor_says_what_needs_none() -> None:
    fields = pd.DataFrame({
        "extraction_id": [f"e{i}" for i in range(30)],
        "document_name": [f"d{i}.pdf" for i in range(30)], "target_name": "Date",
        "value_id": [f"v{i}" for i in range(30)], "value_index": 0,
        "value": [f"{1 + i % 28:02d}.03.2024" for i in range(30)], "confidence": 0.95})
    strict = {"name": "date", "rule_groups": [
        {"name": "iso only", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}]}
    dr = audit.doctor(fields, configuration=_configuration(date_tree=strict))
    assert not dr.labelled and dr.errors.loc["Date", "n_labelled"] == 0
    top = dr.findings.loc[dr.findings["target"] == "Date"].iloc[0]
    assert (top["finding"], top["affected"]) == ("rule always fails", 30)
    assert "e.g. '01.03.2024'" in top["message"]
    best = dr.suggestions.loc[dr.suggestions["best"]].iloc[0]
    assert "no truth" in best["mined_from"] and np.isnan(best["catch_rate"])


def test_the_changed_configuration_passes_the_services_check(tmp_path: Path) -> None:
    strict = {"name": "date", "rule_groups": [
        {"name": "iso only", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}]}
    path = tmp_path / "invoices.json"
    path.write_text(json.dumps(_configuration(date_tree=strict)))
    dr = audit.doctor(_graded(), configuration=path)
    fixed = dr.suggested_tree("Date")
    dr.change("Date", fixed)
    written = dr.write(tmp_path / "out" / "invoices.json")
    loaded = json.loads(written.read_text())
    assert check_configuration(loaded) == []
    assert loaded["extraction_targets"][0]["validation_tree"] == fixed
    assert json.loads(path.read_text())["extraction_targets"][0]["validation_tree"] == strict
    # Every target's mined tree is one a configuration file may hold.
    every = {t: dr.suggested_tree(t) for t in ("Date", "Due", "Total")}
    assert all(every.values())
    assert check_configuration(dr.configuration_with(every)) == []


def test_bad_requests_get_clear_errors() -> None:
    dr = audit.doctor(_graded(), configuration=_configuration())
    with pytest.raises(ValueError, match="no values of target 'Nope'"):
        dr.what_if("Nope", DATE_TREE)
    with pytest.raises(ValueError, match="not valid"):
        dr.what_if("Date", {"name": "x", "rule_groups": [{"name": "g", "rules": [
            {"type": "regex", "pattern": "("}]}]})
    with pytest.raises(ValueError, match="no target Nope"):
        dr.configuration_with({"Nope": DATE_TREE})
    with pytest.raises(ValueError, match="cannot read the configuration"):
        audit.doctor(_graded(), configuration="/nonexistent/c.json")
    with pytest.raises(ValueError, match="no configuration"):
        audit.doctor(_graded()).configuration_with({})


def test_a_corrections_ledger_stands_in_for_truth() -> None:
    """Reviewed values graded by the ledger (confirmed or edited); the rest unlabelled."""
    from servicetools import Ledger

    n = 40
    fields = pd.DataFrame({
        "extraction_id": [f"e{i}" for i in range(n)],
        "document_name": [f"d{i}.pdf" for i in range(n)], "target_name": "Date",
        "target_id": "t-date", "value_id": [f"v{i}" for i in range(n)], "value_index": 0,
        "value": [f"{1 + i % 28:02d}.03.2024" if i % 5 else "03/2024" for i in range(n)],
        "confidence": 0.9})
    ledger = Ledger()
    for i in range(30):  # the first 30 reviewed: every fifth was wrong and is edited
        old = fields.loc[i, "value"]
        ledger.append(extraction_id=f"e{i}", target_id="t-date", target_name="Date",
                      value_id=f"v{i}", old_value=old, old_confidence=0.9,
                      new_value=old if i % 5 else f"{1 + i % 28:02d}.03.2024")
    strict = {"name": "date", "rule_groups": [
        {"name": "iso only", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}]}
    dr = audit.doctor(fields, ledger.frame, configuration=_configuration(date_tree=strict))
    errors = dr.errors.loc["Date"]
    assert (errors["n_values"], errors["n_labelled"], errors["right"], errors["wrong"]) == (
        40, 30, 24, 6)
    top = dr.findings.loc[dr.findings["target"] == "Date"].iloc[0]
    assert (top["finding"], top["group"]) == ("rule rejects right values", "iso only")
    row = dr.detectors.loc[dr.detectors["target"] == "Date"].iloc[0]
    assert (row["false_alarms"], row["n_right"], row["catches"], row["n_wrong"]) == (
        24, 24, 6, 6)


def test_values_missed_by_a_target_that_reads_a_box_name_its_search_area() -> None:
    configuration = _configuration()
    configuration["search_areas"] = {"footer": {"page": 1, "box": [0, 0.9, 1, 1]}}
    configuration["extraction_targets"][0].update(search_area="footer",
                                                  search_area_type="box")
    dr = audit.doctor(_graded(missing=0.5, seed=3), configuration=configuration)
    found = dr.findings.loc[dr.findings["target"] == "Date"]
    area = found.loc[found["cause"] == "search area"].iloc[0]
    assert area["rank"] <= 2 and "search area 'footer' (page 1, box [0, 0.9, 1, 1])" in (
        area["message"])
    # A target that reads the whole page gets no such finding.
    assert "search area" not in set(dr.findings.loc[dr.findings["target"] == "Due", "cause"])


def test_a_frame_made_by_hand_without_ids_or_configuration() -> None:
    # No value_id: each value was counted twice, once graded and once unlabelled
    # (n_values 6 of 3). No configuration: the pass rate of trees nobody gave was 1.0
    # (every value "passed" an empty tree), whatever the data's own validation said.
    fields = pd.DataFrame({"extraction_id": ["e1", "e2", "e3"],
                           "document_name": ["a.pdf", "b.pdf", "c.pdf"],
                           "target_name": "Total", "value": ["10.00", "x", "3.50"],
                           "confidence": [0.9, 0.5, 0.8],
                           "validation_passed": [True, False, True]})
    truth = pd.DataFrame({"document": ["a.pdf", "b.pdf", "c.pdf"],
                          "Total": ["10.00", "7.00", "3.50"]})
    dr = audit.doctor(fields, truth)
    row = dr.errors.loc["Total"]
    assert (row["n_values"], row["n_labelled"], row["wrong"]) == (3, 3, 1)
    assert np.isnan(row["pass_rate"])
    assert len(dr.values) == 3
