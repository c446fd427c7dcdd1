"""`ResultEditor` against the real local service: edit, save, re-validation, ledger."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import Client, ExtractionNotSaved, LocalService, bundled
from servicetools.analysis.ledger import Ledger
from servicetools.analysis.widgets import ResultEditor
from servicetools.analysis.widgets._data import FAILED_TINT

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


@pytest.fixture
def extraction(client: Client, invoice_pdf: bytes) -> dict[str, Any]:
    """A fresh synchronous extraction of the sample invoice (each test edits its own)."""
    return client.trigger_sync(invoice_pdf, configuration_name="invoices")


def eid(data: dict[str, Any]) -> str:
    return str(data["extraction_info"]["extraction_id"])


def values(data: dict[str, Any], target_id: str) -> list[dict[str, Any]]:
    target = next(t for t in data["extracted_targets"]
                  if t["used_extraction_target_id"] == target_id)
    return list(target["extracted_values"])


def test_save_sends_only_changed_targets_and_shows_revalidation(
        client: Client, extraction: dict[str, Any]) -> None:
    editor = ResultEditor(client, eid(extraction))
    before = values(extraction, "t-invoice-date")[0]
    assert editor.inputs["t-invoice-date"][0].value == "2024-03-15"
    editor.inputs["t-invoice-date"][0].value = "31.02.2024"  # no such day
    assert editor.status.value == "1 unsaved change"
    assert editor.changes()["new_value"].tolist() == ["31.02.2024"]  # pending, as the docs say
    updates = editor.updates()
    assert [u["type"] for u in updates] == ["field"]
    assert updates[0]["new_extracted_values"] == [{"id": before["id"],
                                                   "extracted_field": "31.02.2024"}]
    editor.save_button.click()

    assert editor.error is None
    assert "Saved 1 change in 1 target" in editor.status.value
    assert "1 value fails validation" in editor.status.value
    stored = values(client.get_result(eid(extraction)), "t-invoice-date")[0]
    assert (stored["id"], stored["extracted_field"], stored["validation_passed"]) == (
        before["id"], "31.02.2024", False)
    # The form now shows what the service answered: re-validated, confidence 1.0 (D8).
    control = editor.inputs["t-invoice-date"][0]
    assert control.value == "31.02.2024" and control.style.background == FAILED_TINT
    assert "is not a date" in control.tooltip
    section = editor._sections["t-invoice-date"]
    html = " ".join(w.value for w in _walk(section) if hasattr(w, "value")
                    and isinstance(w.value, str))
    assert "✗" in html and "is not a date" in html
    assert any(getattr(w, "value", None) == 1.0 for w in _walk(section))
    untouched = values(client.get_result(eid(extraction)), "t-total")[0]
    assert untouched["confidence"] < 1.0  # only the changed target was sent

    assert editor.changes().empty  # saved: the change is in the ledger now
    row = editor.ledger.frame.iloc[0]
    assert len(editor.ledger) == 1
    assert (row.extraction_id, row.target_id, row.target_name, row.value_id) == (
        eid(extraction), "t-invoice-date", "Invoice Date", before["id"])
    assert (row.old_value, row.new_value, row.change) == ("2024-03-15", "31.02.2024", "edit")
    assert row.old_confidence == pytest.approx(before["confidence"])
    assert row.time.tzinfo is not None and pd.isna(row.table_id)

    editor.inputs["t-invoice-date"][0].value = "2024-03-16"  # fix it: passes again
    assert editor.save() == 1
    assert "all values pass validation" in editor.status.value
    assert values(editor.data, "t-invoice-date")[0]["validation_passed"] is True
    assert editor.ledger.frame["old_value"].tolist() == ["2024-03-15", "31.02.2024"]


def test_table_cells_rows_and_the_ledger(client: Client, extraction: dict[str, Any]) -> None:
    ledger = Ledger()
    editor = ResultEditor(client, eid(extraction), ledger)
    cells = editor.cells["t-line-items"]
    (table_id,) = {place[0] for place in cells}
    assert cells[table_id, 1, 3].value == "150.00"
    cells[table_id, 0, 3].value = "1OO.00"  # an amount that is not one
    editor.add_row_buttons["t-line-items"][table_id].click()
    editor.cells["t-line-items"][table_id, 2, 0].value = "Freight"
    editor.cells["t-line-items"][table_id, 2, 3].value = "12.50"
    editor.remove_row_buttons["t-line-items"][table_id, 1].click()  # Gadget B goes
    assert editor.cells["t-line-items"][table_id, 1, 0].value == "Freight"  # moved up
    assert editor.save() == 7  # 1 edit, 2 added, 4 removed

    stored = values(client.get_result(eid(extraction)), "t-line-items")
    grid = {(c["row"], c["column"]): c for c in stored}
    assert grid[0, 3]["extracted_cell"] == "1OO.00" and not grid[0, 3]["validation_passed"]
    assert grid[1, 0]["extracted_cell"] == "Freight" and grid[1, 3]["extracted_cell"] == "12.50"
    assert len(stored) == 6
    frame = ledger.frame
    counts = frame["change"].value_counts()
    assert counts[counts > 0].to_dict() == {"remove": 4, "add": 2, "edit": 1}
    added = frame.loc[frame["change"] == "add"]
    assert set(added["value_id"]) == {grid[1, 0]["id"], grid[1, 3]["id"]}
    assert added["old_value"].isna().all() and added["old_confidence"].isna().all()
    removed = frame.loc[frame["change"] == "remove"]
    assert set(removed["old_value"]) == {"Gadget B", "1", "150.00"}
    assert (removed["new_value"] == "").all() and (removed["row"] == 1).all()
    edit = frame.loc[frame["change"] == "edit"].iloc[0]
    assert (edit.table_id, edit.row, edit.column, edit.new_value) == (table_id, 0, 3, "1OO.00")
    # The failing cell is marked in the grid the response rendered.
    assert editor.cells["t-line-items"][table_id, 0, 3].style.background == FAILED_TINT


def test_service_error_is_shown_and_edits_stay(client: Client, invoice_pdf: bytes,
                                               extraction: dict[str, Any]) -> None:
    other = client.trigger_sync(invoice_pdf, configuration_name="invoices")
    # The result of another extraction: its target ids are unknown to this one (400).
    editor = ResultEditor(client, eid(extraction), result=other)
    editor.inputs["t-total"][0].value = "301.00"
    assert editor.save() == 0
    assert "Not saved" in editor.status.value and "no extracted target" in editor.status.value
    assert editor.error is not None and editor.error.status == 400
    assert editor.inputs["t-total"][0].value == "301.00" and len(editor.ledger) == 0
    editor.reset_button.click()
    assert editor.inputs["t-total"][0].value == "300.00" and editor.updates() == []
    editor.save_button.click()
    assert editor.status.value == "Nothing to save."


def test_confirm_records_unchanged_values_once(client: Client,
                                               extraction: dict[str, Any]) -> None:
    editor = ResultEditor(client, eid(extraction))
    editor.inputs["t-vendor"][0].value = "Acme Supplies Limited"
    editor.save()
    n_values = sum(len(t["extracted_values"]) for t in extraction["extracted_targets"])
    assert editor.confirm() == n_values - 1
    assert editor.confirm() == 0
    frame = editor.ledger.frame
    confirmed = frame.loc[frame["change"] == "confirm"]
    assert (confirmed["old_value"] == confirmed["new_value"]).all()
    assert (confirmed["old_confidence"] < 1.0).all()  # the engine's, not D8's 1.0
    assert frame["value_id"].is_unique


def test_a_result_in_hand_stands_for_its_extraction(client: Client,
                                                    invoice_pdf: bytes) -> None:
    r = client.trigger_sync(invoice_pdf, configuration_name="invoices")
    editor = ResultEditor(client, r)  # not r["extraction_info"]["extraction_id"]
    assert editor.extraction_id == r.extraction_id and editor.data == r
    editor.inputs["t-total"][0].value = "301.00"
    assert editor.save() == 1
    assert client.get_result(r).fields["Total"] == "301.00"
    assert editor.ledger.value_ids(r) == editor.ledger.value_ids(r.extraction_id) != set()
    # Shown as it is, not fetched: an unsaved extraction has no stored result (D6).
    unsaved = client.trigger_sync(invoice_pdf, configuration_name="invoices",
                                  save_extraction=False)
    with pytest.raises(ExtractionNotSaved):
        client.get_result(unsaved)
    assert ResultEditor(client, unsaved).inputs["t-total"][0].value == "300.00"
    # The answer of trigger_async holds no data: its result is fetched.
    started = client.trigger_async(invoice_pdf, configuration_name="invoices")
    client.wait(started, progress=False)
    assert ResultEditor(client, started).inputs["t-total"][0].value == "300.00"


# -- is_multiple fields: a configuration with one ---------------------------------------------
@pytest.fixture(scope="module")
def multi_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    folder = tmp_path_factory.mktemp("configurations")
    config = json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text())
    date = next(t for t in config["extraction_targets"] if t["id"] == "t-invoice-date")
    config["extraction_targets"].insert(2, {**date, "id": "t-other-dates",
                                            "name": "Other Dates", "is_multiple": True})
    (folder / "invoices.json").write_text(json.dumps(config))
    with LocalService(configurations=folder) as svc, Client(
            base_url=svc.base_url, api_key=svc.token) as c:
        yield c


@pytest.mark.integration
def test_is_multiple_values_are_added_and_removed(multi_client: Client,
                                                  invoice_pdf: bytes) -> None:
    data = multi_client.trigger_sync(invoice_pdf, configuration_name="invoices")
    editor = ResultEditor(multi_client, eid(data))
    target = "t-other-dates"
    start = [c.value for c in editor.inputs[target]]
    for control in list(editor.remove_buttons[target]):
        control.click()
    assert editor.inputs[target] == []
    editor.add_buttons[target].click()
    editor.add_buttons[target].click()
    editor.add_buttons[target].click()  # left empty: not a value
    editor.inputs[target][0].value = "2024-05-01"
    editor.inputs[target][1].value = "01.06.2024"
    assert editor.save() == 2 + len(start)
    stored = values(multi_client.get_result(eid(data)), target)
    assert [v["extracted_field"] for v in stored] == ["2024-05-01", "01.06.2024"]
    assert all(v["validation_passed"] for v in stored)
    added = editor.ledger.frame.query("change == 'add'")
    assert added["value_id"].tolist() == [v["id"] for v in stored]

    assert [c.value for c in editor.inputs[target]] == ["2024-05-01", "01.06.2024"]
    editor.remove_buttons[target][0].click()
    assert editor.save() == 1
    stored = values(multi_client.get_result(eid(data)), target)
    assert [v["extracted_field"] for v in stored] == ["01.06.2024"]
    last = editor.ledger.frame.iloc[-1]
    assert (last.change, last.value_id, last.old_value, last.new_value) == (
        "remove", added["value_id"].iloc[0], "2024-05-01", "")


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out += _walk(child)
    return out
