"""The doctor's bench (bench/doctor.py), checked without the real sets: the defects it
plants in a configuration, and how it decides a planted defect was found."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from servicetools import audit, bundled

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import doctor as bench  # noqa: E402


def _rows() -> pd.DataFrame:
    rows = []
    for i in range(40):
        doc = f"d{i:02d}.pdf"
        for target, value in (("Invoice Date", f"{1 + i % 28:02d}.03.2024"),
                              ("Due Date", f"{1 + i % 28:02d}.04.2024"),
                              ("Vendor", ("Acme Works", "Globex Holdings Ltd", "Initech")[i % 3]
                               + (f" {i}" if i % 2 else "")),
                              ("Total", f"{100 + i}.50"), ("Tax", f"{10 + i}.05")):
            rows.append({"document": doc, "target": target, "value": value,
                         "expected": value, "correct": True, "confidence": 0.9})
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


def _configuration() -> dict:
    import json

    return json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text())


def test_every_kind_of_defect_is_planted_by_rule() -> None:
    planted = list(bench.plantings("x", _configuration(), _rows()))
    defects = {p.defect for p in planted}
    assert defects == {"date format", "strict regex", "length", "wrong target", "description",
                       "description only", "search area", "swapped"}
    date = next(p for p in planted if p.defect == "date format")
    formats = bench._target(date.configuration, date.target)["validation_tree"][
        "rule_groups"][0]["rules"][0]["formats"]
    assert "%d.%m.%Y" not in formats  # the format that reads these printed dates
    swapped = next(p for p in planted if p.defect == "swapped")
    assert {swapped.target, swapped.partner} in ({"Invoice Date", "Due Date"},
                                                 {"Total", "Tax"})


def test_a_planted_rule_is_found_only_when_the_doctor_names_its_group() -> None:
    rows = _rows()
    configuration = _configuration()
    planting = next(p for p in bench.plantings("x", configuration, rows)
                    if p.defect == "date format")
    healthy = audit.doctor(rows, configuration=configuration)
    assert bench.found_in_top(audit.doctor(rows, configuration=planting.configuration),
                              planting, healthy)
    # The working configuration's doctor has no such finding.
    assert not bench.found_in_top(healthy, planting, healthy)


def test_a_description_finding_counts_only_when_it_grows() -> None:
    rows, configuration = _rows(), _configuration()
    healthy = audit.doctor(rows, configuration=configuration)
    planting = next(p for p in bench.plantings("x", configuration, rows)
                    if p.defect == "description" and p.renamed[p.target] == "Vendor")
    missed = rows.copy()
    missed.loc[missed["target"] == "Vendor", "target"] = planting.target
    gone = missed["target"] == planting.target
    missed.loc[gone, "value"] = ""
    missed.loc[gone, "correct"] = False
    doc = audit.doctor(missed, configuration=planting.configuration)
    assert bench.changed(rows, missed, planting)
    assert bench.found_in_top(doc, planting, healthy)
    assert not bench.found_in_top(audit.doctor(rows, configuration=configuration),
                                  bench.Planting("x", "description", "Vendor", configuration),
                                  healthy)


def test_the_what_if_agrees_with_the_services_validation_where_values_are_the_same() -> None:
    rows = _rows()
    configuration = _configuration()
    planting = next(p for p in bench.plantings("x", configuration, rows)
                    if p.defect == "date format")
    tree = bench._target(configuration, planting.target)["validation_tree"]
    # The planted batch read the same values as the working one (no engine here): the
    # doctor's rule evaluation and the service's `validate_value` must agree on each.
    got = bench.what_if_agreement(audit.doctor(rows, configuration=planting.configuration),
                                  planting, rows, tree)
    assert got["n"] == got["n_same"] == 40
    assert got["agree"] == got["agree_same"] == 40
    # A value the engine read otherwise under the planted rule counts apart.
    other = rows.copy()
    other.loc[(other["target"] == planting.target) & (other["document"] == "d00.pdf"),
              "value"] = "not a date"
    got = bench.what_if_agreement(audit.doctor(other, configuration=planting.configuration),
                                  planting, rows, tree)
    assert (got["n_same"], got["agree"], got["agree_same"]) == (39, 39, 39)
