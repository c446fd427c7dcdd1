"""Every endpoint's happy path over loopback, each response checked against its wire schema,
on both storage backends (SQLite and PostgreSQL; the hosted input's own service only on
SQLite: a download reaches the store as raw input does)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from servicetools import LocalService, wire

from ..support.helpers import Api, b64, make_invoice_pdf, raw_trigger
from ..support.stores import VAULTS, store_of

#: On SQLite and PostgreSQL (tests/service/conftest.py); every test talks to a service.
pytestmark = [pytest.mark.both_stores, pytest.mark.integration]

EXPECTED = {
    "t-invoice-number": ["INV-2024-0042"], "t-invoice-date": ["2024-03-15"],
    "t-due-date": ["2024-04-14"], "t-vendor": ["Acme Supplies Ltd"],
    "t-customer": ["Globex Corporation"], "t-subtotal": ["250.00"], "t-tax": ["50.00"],
    "t-total": ["300.00"],
}
ROWS = [["Widget A", "2", "50.00", "100.00"], ["Gadget B", "1", "150.00", "150.00"]]


def values(data: dict[str, Any]) -> dict[str, list[str]]:
    return {t["used_extraction_target_id"]: [v["extracted_field"] for v in t["extracted_values"]]
            for t in data["extracted_targets"] if t["type"] == "field"}


def rows(data: dict[str, Any], target_id: str = "t-line-items") -> list[list[str]]:
    target = next(t for t in data["extracted_targets"]
                  if t["used_extraction_target_id"] == target_id)
    out: dict[tuple[str, int], dict[int, str]] = {}
    for cell in target["extracted_values"]:
        out.setdefault((cell["table_id"], cell["row"]), {})[cell["column"]] = cell["extracted_cell"]
    return [[r[c] for c in sorted(r)] for r in out.values()]


def check_invoice(data: dict[str, Any]) -> None:
    wire.validate(data, "extracted_data")
    assert values(data) == EXPECTED
    assert rows(data) == ROWS
    # D7: targets in the configuration's order.
    config_order = [t["id"] for t in data["used_extraction_configuration"]["extraction_targets"]]
    assert [t["used_extraction_target_id"] for t in data["extracted_targets"]] == config_order


# Each type once; the S3 vault with one, since the backend stores bytes of any type alike.
@pytest.mark.parametrize(("kind", "backend_api"), [
    ("pdf", "folder"), ("png", "folder"), ("jpeg", "folder"), ("pdf", "s3")],
    indirect=["backend_api"])
def test_sync_raw_each_content_type(backend_api: Api, kind: str, request: pytest.FixtureRequest
                                    ) -> None:
    api = backend_api
    document = request.getfixturevalue(f"invoice_{kind}")
    resp = api.post("/extraction/trigger_sync", raw_trigger(document, extraction_name=f"t.{kind}"))
    assert resp.status_code == 200, resp.text
    data = resp.json()
    check_invoice(data)
    info = data["extraction_info"]
    assert info["trigger_type"] == "sync" and info["input_type"] == "raw"
    assert info["extracted_data_saved"] is True and info["preview"] is False
    assert info["used_extraction_configuration_name"] == "invoices"
    # D6: raw input is kept in the caller's vault under extracted_document_storage_id.
    stored = api.get(f"/vault/info/{data['extracted_document_storage_id']}")
    assert stored.status_code == 200
    assert stored.json()["content_type"] == {"pdf": "application/pdf", "png": "image/png",
                                             "jpeg": "image/jpeg"}[kind]
    again = api.get(f"/extraction/result/get/{info['extraction_id']}")
    assert again.status_code == 200 and again.json() == data


def test_async_raw_then_result_list_and_status_history(api: Api, service: LocalService,
                                                       invoice_pdf: bytes) -> None:
    resp = api.post("/extraction/trigger_async", raw_trigger(invoice_pdf))
    assert resp.status_code == 200, resp.text
    info = resp.json()
    wire.validate(info, "extraction_info")
    assert info["trigger_type"] == "async" and info["extracted_data_saved"] is True
    status = api.wait(info["extraction_id"])
    wire.validate(status, "status")
    assert status["status_type"] == "ended" and status["message"] == ""
    data = api.get(f"/extraction/result/get/{info['extraction_id']}").json()
    check_invoice(data)
    assert data["extraction_info"] == info
    listed = api.get(f"/extraction/result/list/{info['extraction_id']}")
    assert listed.status_code == 200
    wire.validate(listed.json(), "targets_list")
    assert listed.json() == {"extracted_targets": data["extracted_targets"]}
    # D5: every stage stored, in order, with non-decreasing times.
    history = store_of(service).status_history(info["extraction_id"])
    assert [s["status_type"] for s in history] == list(wire.STATUS_TYPES[:-1])
    times = [s["creation_unix_timestamp"] for s in history]
    assert times == sorted(times)
    assert "rendered" in history[2]["message"]  # doc_converted_to_png really rendered


@pytest.mark.parametrize("backend_api", VAULTS, indirect=True)
def test_service_input_from_vault(backend_api: Api, invoice_pdf: bytes) -> None:
    api = backend_api
    record = api.upload(invoice_pdf, "folder/inv.pdf", "invoice").json()
    wire.validate(record, "vault_document")
    assert record["document_name"] == "inv.pdf" and record["num_pages"] == 1
    body = {"configuration_id": "cfg-invoices-1", "input_type": "service",
            "document_storage_id": record["document_id"], "content_type": "application/pdf"}
    data = api.post("/extraction/trigger_sync", body).json()
    check_invoice(data)
    assert data["extracted_document_storage_id"] == record["document_id"]
    assert data["extraction_info"]["input_type"] == "service"


@pytest.fixture(scope="module")
def open_service() -> Iterator[LocalService]:
    """A service allowed to fetch from loopback, for the hosted happy path (D14)."""
    with LocalService(allow_private_hosts=True, workers=1) as svc:
        yield svc


@pytest.fixture(scope="module")
def document_server(invoice_pdf: bytes) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/files/invoice.pdf")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            self.wfile.write(invoice_pdf)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("path", ["/files/invoice.pdf", "/moved"])
def test_hosted_input(open_service: LocalService, document_server: str, path: str) -> None:
    api = Api(open_service.base_url, open_service.token)
    body = {"configuration_name": "invoices", "input_type": "hosted",
            "document_host_url": document_server + path}
    data = api.post("/extraction/trigger_sync", body).json()
    check_invoice(data)
    record = api.get(f"/vault/info/{data['extracted_document_storage_id']}").json()
    assert record["document_name"] == "invoice.pdf"
    info = api.post("/extraction/trigger_async", body).json()
    assert api.wait(info["extraction_id"])["status_type"] == "ended"


def test_schema_output_on_sync_get_and_update(api: Api, invoice_pdf: bytes) -> None:
    resp = api.post("/extraction/trigger_sync?show_schema_output=True", raw_trigger(invoice_pdf))
    three = resp.json()
    wire.validate(three, "schema_output_response")
    assert three["schema_output"]["invoice"]["number"] == "INV-2024-0042"
    assert three["schema_output"]["line_items"] == ROWS
    assert three["schema_output"]["descriptions"] == ["Widget A", "Gadget B"]
    assert three["validation"]["invoice"]["number"]["validation_passed"] is True
    extraction_id = three["extracted_data"]["extraction_info"]["extraction_id"]
    got = api.get(f"/extraction/result/get/{extraction_id}?show_schema_output=True").json()
    assert got["schema_output"] == three["schema_output"]
    number = next(t for t in got["extracted_data"]["extracted_targets"]
                  if t["used_extraction_target_id"] == "t-invoice-number")
    updated = api.post("/extraction/result/update?show_schema_output=True", {
        "extraction_id": extraction_id,
        "updates": [{"extracted_target_id": number["id"], "type": "field",
                     "new_extracted_values": [{"extracted_field": "INV-9"}]}]}).json()
    wire.validate(updated, "schema_output_response")
    assert updated["schema_output"]["invoice"]["number"] == "INV-9"
    assert updated["validation"]["invoice"]["number"]["confidence"] == 1.0


def _target(data: dict[str, Any], target_id: str) -> dict[str, Any]:
    return next(t for t in data["extracted_targets"] if t["used_extraction_target_id"] == target_id)


def test_update_revalidates_sets_confidence_and_is_atomic(api: Api, invoice_pdf: bytes) -> None:
    data = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf)).json()
    extraction_id = data["extraction_info"]["extraction_id"]
    date, items = _target(data, "t-invoice-date"), _target(data, "t-line-items")
    table_id = items["extracted_values"][0]["table_id"]
    good = {"extracted_target_id": date["id"], "type": "field",
            "new_extracted_values": [{"id": "mine", "extracted_field": "31.02.2024"}]}
    table = {"extracted_target_id": items["id"], "type": "table", "new_extracted_values": [
        {"extracted_cell": "Widget\nA", "table_id": table_id, "row": 0, "column": 0},
        {"extracted_cell": "two", "table_id": table_id, "row": 0, "column": 1}]}
    bad = {"extracted_target_id": "no-such-target", "type": "field", "new_extracted_values": []}
    refused = api.post("/extraction/result/update",
                       {"extraction_id": extraction_id, "updates": [good, bad]})
    assert refused.status_code == 400 and "no-such-target" in refused.json()["error"]["message"]
    assert api.get(f"/extraction/result/get/{extraction_id}").json() == data  # all or nothing

    resp = api.post("/extraction/result/update",
                    {"extraction_id": extraction_id, "updates": [good, table]})
    assert resp.status_code == 200, resp.text
    after = resp.json()
    wire.validate(after, "extracted_data")
    new_date = _target(after, "t-invoice-date")
    assert new_date["confidence"] == 1.0
    assert new_date["extracted_values"][0]["id"] == "mine"
    assert new_date["extracted_values"][0]["validation_passed"] is False
    assert new_date["extracted_values"][0]["validation_messages"][0].startswith("`31.02.2024`")
    cells = _target(after, "t-line-items")["extracted_values"]
    assert [c["extracted_cell"] for c in cells] == ["Widget\nA", "two"]
    assert cells[1]["validation_passed"] is False  # the Quantity column wants a number
    assert all(c["id"] for c in cells)
    assert _target(after, "t-total") == _target(data, "t-total")  # untouched targets stay
    assert api.get(f"/extraction/result/get/{extraction_id}").json() == after


@pytest.mark.parametrize("backend_api", VAULTS, indirect=True)
def test_save_extraction_false(backend_api: Api, invoice_pdf: bytes) -> None:
    api = backend_api
    before = api.get("/vault/list").json()["documents"]
    resp = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf, save_extraction=False))
    data = resp.json()
    check_invoice(data)
    assert data["extraction_info"]["extracted_data_saved"] is False
    assert data["extracted_document_storage_id"] == ""
    extraction_id = data["extraction_info"]["extraction_id"]
    got = api.get(f"/extraction/result/get/{extraction_id}")
    assert got.status_code == 404 and got.json()["error"]["code"] == "extraction_not_saved"
    status = api.post("/extraction/status/list", {"extraction_id_list": [extraction_id]})
    assert status.json()["status_map"][extraction_id]["status_type"] == "ended"
    assert api.get("/vault/list").json()["documents"] == before  # the document was not kept


@pytest.mark.parametrize("path", ["get", "list"])
def test_delete_after_first_fetch(api: Api, invoice_pdf: bytes, path: str) -> None:
    info = api.post("/extraction/trigger_async",
                    raw_trigger(invoice_pdf, delete_after_first_fetch=True)).json()
    assert api.wait(info["extraction_id"])["status_type"] == "ended"
    first = api.get(f"/extraction/result/{path}/{info['extraction_id']}")
    assert first.status_code == 200
    for again in ("get", "list"):
        gone = api.get(f"/extraction/result/{again}/{info['extraction_id']}")
        assert gone.status_code == 410
        assert gone.json()["error"]["code"] == "extraction_data_deleted"


def test_result_while_running_is_409(api: Api) -> None:
    # Forty pages keep the pipeline busy long enough to be asked while running.
    info = api.post("/extraction/trigger_async",
                    raw_trigger(make_invoice_pdf(pages=40))).json()
    early = api.get(f"/extraction/result/get/{info['extraction_id']}")
    assert early.status_code == 409
    assert early.json()["error"]["code"] == "extraction_running"
    assert early.json()["error"]["details"]["status"]["status_type"] != "ended"
    assert api.wait(info["extraction_id"])["status_type"] == "ended"


def test_status_list(api: Api, invoice_pdf: bytes) -> None:
    ids = [api.post("/extraction/trigger_async", raw_trigger(invoice_pdf)).json()["extraction_id"]
           for _ in range(3)]
    for extraction_id in ids:
        api.wait(extraction_id)
    resp = api.post("/extraction/status/list", {"extraction_id_list": ids + ids[:1]})
    body = resp.json()
    wire.validate(body, "status_list_response")
    assert list(body["status_map"]) == ids
    assert all(s["status_type"] == "ended" for s in body["status_map"].values())


@pytest.mark.parametrize("backend_api", VAULTS, indirect=True)
def test_vault_list_info_download(backend_api: Api, invoice_pdf: bytes, invoice_png: bytes
                                  ) -> None:
    api = backend_api
    a = api.upload(invoice_pdf, "../../etc/a.pdf", "invoice").json()
    b = api.upload(invoice_png, "C:\\scans\\b.png", "scan").json()
    assert (a["document_name"], b["document_name"]) == ("a.pdf", "b.png")
    listing = api.get("/vault/list").json()
    wire.validate(listing, "vault_list")
    ids = [d["document_id"] for d in listing["documents"]]
    assert ids.index(a["document_id"]) < ids.index(b["document_id"])  # D7: oldest first
    assert all("num_pages" not in d for d in listing["documents"])
    info = api.get(f"/vault/info/{b['document_id']}").json()
    wire.validate(info, "vault_document")
    assert info == b
    got = api.get(f"/vault/get/{a['document_id']}")
    assert got.content == invoice_pdf
    assert got.headers["content-type"] == "application/pdf"
    assert got.headers["content-disposition"] == 'attachment; filename="a.pdf"'


def test_classifier_records_class_and_guards_configuration(api: Api, service: LocalService,
                                                            invoice_pdf: bytes) -> None:
    data = api.post("/extraction/trigger_sync",
                    raw_trigger(invoice_pdf, classifier_id="clf-documents-1")).json()
    history = store_of(service).status_history(
        data["extraction_info"]["extraction_id"])
    assert history[1]["status_type"] == "started"
    assert "'invoice'" in history[1]["message"]
    wrong = api.post("/extraction/trigger_sync", {
        "configuration_name": "receipts", "classifier_id": "clf-documents-1",
        "input_type": "raw", "document_raw_data": b64(invoice_pdf)})
    assert wrong.status_code == 422
    error = wrong.json()["error"]
    assert error["code"] == "extraction_failed"
    assert error["details"]["status"]["status_type"] == "error"
    assert "'invoice'" in error["message"] and "'receipt'" in error["message"]


def test_docs_answer(service: LocalService) -> None:
    import requests

    assert requests.get(service.base_url + "/docs", timeout=10).status_code == 200
