"""Frames and audits of real output of the local service, fetched over loopback now."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from servicetools import Client, LocalService, Result, audit, bundled, frames
from servicetools.client.batch import Batch

from ..support.helpers import Api, b64, raw_trigger

DATA = bundled.ROOT
EXPECTED = {"Invoice Number": "INV-2024-0042", "Invoice Date": "2024-03-15",
            "Due Date": "2024-04-14", "Vendor": "Acme Supplies Ltd",
            "Customer": "Globex Corporation", "Subtotal": "250.00", "Tax": "50.00",
            "Total": "300.00"}
ROWS = [["Widget A", "2", "50.00", "100.00"], ["Gadget B", "1", "150.00", "150.00"]]
NAME = "invoices/helper-invoice.pdf"


@pytest.fixture(scope="module")
def three_part(api: Api, invoice_pdf: bytes) -> dict[str, Any]:
    resp = api.post("/extraction/trigger_sync?show_schema_output=True",
                    raw_trigger(invoice_pdf, extraction_name=NAME))
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()
    return data


def test_fields_cells_tables_and_validation_of_a_live_result(three_part: dict[str, Any]
                                                             ) -> None:
    f = frames.fields(three_part)
    assert dict(zip(f["target_name"], f["value"], strict=True)) == EXPECTED
    assert (f["document_name"] == NAME).all()
    assert f["confidence"].between(0, 1).all()  # every value carries its own confidence
    assert f["validation_passed"].all() and f["condition"].isna().all()
    c = frames.cells(three_part)
    assert set(c["header"]) == {"Description", "Quantity", "Unit Price", "Amount"}
    (wide,) = frames.tables(three_part).values()
    assert wide.to_numpy().tolist() == ROWS
    assert list(wide.columns) == ["Description", "Quantity", "Unit Price", "Amount"]
    v = frames.validation(three_part).set_index("path")
    assert v.loc["invoice.number", "value"] == "INV-2024-0042"
    assert v.loc["line_items[1][0]", "value"] == "Gadget B"
    assert bool(v.loc["invoice.number", "validation_passed"])


def test_statuses_vault_and_an_update(api: Api, invoice_pdf: bytes,
                                      three_part: dict[str, Any]) -> None:
    info = api.post("/extraction/trigger_async", raw_trigger(invoice_pdf)).json()
    assert api.wait(info["extraction_id"])["status_type"] == "ended"
    listed = api.post("/extraction/status/list",
                      {"extraction_id_list": [info["extraction_id"]]}).json()
    s = frames.statuses(listed)
    assert s["status_type"].tolist() == ["ended"] and s["is_final"].tolist() == [True]
    docs = frames.vault(api.get("/vault/list").json())
    storage = three_part["extracted_data"]["extracted_document_storage_id"]
    assert storage in set(docs["document_id"])
    # Correct the total: the update answers with the corrected result (D8).
    data = three_part["extracted_data"]
    total = next(t for t in data["extracted_targets"]
                 if t["used_extraction_target_id"] == "t-total")
    before = frames.fields(data)
    old = before[before["target_id"] == "t-total"].iloc[0]
    resp = api.post("/extraction/result/update", {
        "extraction_id": data["extraction_info"]["extraction_id"],
        "updates": [{"extracted_target_id": total["id"], "type": "field",
                     "new_extracted_values": [{"id": old["value_id"],
                                               "extracted_field": "310.00"}]}]})
    assert resp.status_code == 200, resp.text
    after = frames.fields(resp.json())
    new = after[after["target_id"] == "t-total"].iloc[0]
    assert (new["value"], new["confidence"], new["target_confidence"]) == ("310.00", 1.0, 1.0)
    # The correction as a ledger entry: graded, the old value was wrong.
    ledger = pd.DataFrame({"extraction_id": [data["extraction_info"]["extraction_id"]],
                           "target_id": ["t-total"], "value_id": [old["value_id"]],
                           "old_value": [old["value"]], "new_value": ["310.00"],
                           "old_confidence": [old["confidence"]],
                           "time": [pd.Timestamp.now(tz="UTC")]})
    graded = audit.grade(before, ledger)
    assert graded["correct"].tolist() == [False] and graded["target"].tolist() == ["Total"]
    card = audit.scorecard(before, corrections=ledger)
    assert card.loc["Total", "correction_rate"] == 1.0
    assert card.loc["Vendor", "correction_rate"] == 0.0


def test_a_live_batch_against_ground_truth(api: Api, three_part: dict[str, Any]) -> None:
    name = "receipts/rcp-0003.pdf"  # a dev-set text PDF: quick to extract
    resp = api.post("/extraction/trigger_sync", {
        "configuration_name": "receipts", "input_type": "raw", "extraction_name": name,
        "document_raw_data": b64((DATA / "documents" / name).read_bytes())})
    assert resp.status_code == 200, resp.text
    receipt = resp.json()
    results = {r["extraction_info"]["extraction_id"]: r
               for r in (three_part["extracted_data"], receipt)}
    batch = Batch(results=results, documents={
        receipt["extraction_info"]["extraction_id"]: f"data/documents/{name}"})
    truth = pd.concat([
        pd.DataFrame({"document": NAME, "target_name": list(EXPECTED),
                      "value": list(EXPECTED.values())}),
        pd.DataFrame({"document": NAME, "target_name": "Line Items",
                      "row": [r for r in range(2) for _ in range(4)],
                      "column": list(range(4)) * 2, "value": sum(ROWS, [])})])
    # The helper invoice is graded by the table above, the receipt by the dev-set truth.
    graded = pd.concat([audit.grade(batch, truth), audit.grade(batch, DATA / "truth")])
    invoice = graded[graded["document"] == NAME]
    assert len(invoice) == 8 + 8 and invoice["correct"].all()
    receipt_rows = graded[graded["document"] == name]
    assert (receipt_rows["kind"] == "field").sum() == 6  # Merchant ... Payment Method
    acc = audit.accuracy(audit.grade(batch, truth))
    assert acc.loc[audit.ALL, "accuracy"] == 1.0
    card = audit.scorecard(batch)
    assert {"Invoice Number", "Merchant", "Items / Amount"} <= set(card.index)
    docs = audit.documents(batch)
    assert set(docs["document_name"]) == {NAME, f"data/documents/{name}"}


def test_the_clients_results_convert_like_their_dicts(service: LocalService,
                                                      invoice_pdf: bytes) -> None:
    with Client(base_url=service.base_url, api_key=service.token) as client:
        r = client.trigger_sync(invoice_pdf, configuration_name="invoices",
                                extraction_name=NAME)
        three = client.get_result(r, show_schema_output=True)
    assert isinstance(r, Result) and isinstance(three, Result)
    for convert in (frames.fields, frames.cells, frames.targets, frames.extractions):
        pd.testing.assert_frame_equal(convert(r), convert(r.raw))
        pd.testing.assert_frame_equal(convert([r, three]), convert([r.raw, three.raw]))
    f = frames.fields({r.extraction_id: r})
    assert dict(zip(f["target_name"], f["value"], strict=True)) == EXPECTED
    (wide,) = frames.tables(r).values()
    assert wide.to_numpy().tolist() == ROWS
    v = frames.validation(three)
    assert len(v) and v.equals(frames.validation(three.raw))
    assert v.set_index("path").loc["invoice.number", "value"] == "INV-2024-0042"
