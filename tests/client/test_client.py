"""Every method against the real local service, and each error class for its D3 case."""

from __future__ import annotations

import io
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servicetools import (
    APIError,
    AuthenticationError,
    Client,
    DataDeleted,
    DocumentTooLarge,
    ExtractionFailed,
    ExtractionNotSaved,
    ExtractionRunning,
    InvalidDocument,
    InvalidRequest,
    LocalService,
    NotFound,
    Result,
    ServiceError,
    UnsupportedMediaType,
    VaultDocument,
    WaitTimeout,
    trigger_request,
    wire,
)

from ..support.helpers import Api, make_invoice_pdf

# Loopback is a private address, so the service refuses it in the pipeline (D14): the
# cheapest way to an extraction that ends in `error`.
REFUSED_URL = "http://127.0.0.1:9/invoice.pdf"


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


@pytest.fixture(scope="module")
def other_client(service: LocalService, other_api: Api) -> Client:
    assert other_api.token
    return Client(base_url=service.base_url, api_key=other_api.token)


@pytest.fixture(scope="module")
def stored(client: Client, invoice_pdf: bytes) -> dict[str, Any]:
    return client.vault.upload(invoice_pdf, name="stored.pdf", doctype="invoice")


@pytest.fixture(scope="module")
def ended(client: Client, stored: dict[str, Any]) -> dict[str, Any]:
    """A saved, ended sync extraction."""
    return client.trigger_sync(stored, configuration_name="invoices")


# -- every method -----------------------------------------------------------------------
def test_trigger_sync_from_every_kind_of_document(client: Client, invoice_pdf: bytes,
                                                  invoice_png: bytes, invoice_jpeg: bytes,
                                                  stored: dict[str, Any],
                                                  tmp_path: Path) -> None:
    path = tmp_path / "from-path.pdf"
    path.write_bytes(invoice_pdf)
    documents: list[Any] = [
        path, str(path), invoice_pdf, ("named.png", invoice_png), io.BytesIO(invoice_jpeg),
        stored, VaultDocument(stored["document_id"]),
    ]
    for document in documents:
        data = client.trigger_sync(document, configuration_name="invoices")
        wire.validate(data, "extracted_data")
        assert data["extraction_info"]["trigger_type"] == "sync"
        values = {t["used_extraction_target_id"]: t["extracted_values"]
                  for t in data["extracted_targets"]}
        assert values["t-invoice-number"][0]["extracted_field"] == "INV-2024-0042"
    info = client.trigger_sync(path, configuration_name="invoices")["extraction_info"]
    assert info["extraction_name"] == "from-path.pdf"  # the file name, not the folder


def test_trigger_sync_by_configuration_id_and_ready_request(client: Client,
                                                            invoice_pdf: bytes) -> None:
    body = trigger_request(invoice_pdf, configuration_id="cfg-invoices-1",
                           extraction_name="ready")
    data = client.trigger_sync(body)
    assert data["extraction_info"]["extraction_name"] == "ready"
    assert data["extraction_info"]["used_extraction_configuration_name"] == "invoices"
    with pytest.raises(TypeError, match="extraction_name"):
        client.trigger_sync(body, extraction_name="twice")
    with pytest.raises(TypeError, match="exactly one"):
        client.trigger_sync(invoice_pdf)


def test_show_schema_output_gives_three_parts(client: Client, invoice_pdf: bytes,
                                              ended: dict[str, Any]) -> None:
    data = client.trigger_sync(invoice_pdf, configuration_name="invoices",
                               show_schema_output=True)
    assert set(data) == {"extracted_data", "schema_output", "validation"}
    wire.validate(data, "schema_output_response")
    eid = ended["extraction_info"]["extraction_id"]
    got = client.get_result(eid, show_schema_output=True)
    assert set(got) == {"extracted_data", "schema_output", "validation"}
    assert got["extracted_data"] == client.get_result(eid)


def test_async_wait_result_targets(client: Client, stored: dict[str, Any]) -> None:
    info = client.trigger_async(stored, configuration_name="invoices", extraction_name="a")
    wire.validate(info, "extraction_info")
    assert info["trigger_type"] == "async" and info["extracted_data_saved"] is True
    eid = info["extraction_id"]
    statuses = client.wait([eid], progress=False)
    assert statuses[eid]["status_type"] == "ended"
    data = client.get_result(eid)
    assert data["extraction_info"]["extraction_id"] == eid
    assert client.list_targets(eid) == {"extracted_targets": data["extracted_targets"]}
    assert client.get_statuses(eid)[eid]["status_type"] == "ended"


def test_update_results(client: Client, ended: dict[str, Any]) -> None:
    eid = ended["extraction_info"]["extraction_id"]
    target = ended["extracted_targets"][0]
    update = {"extracted_target_id": target["id"], "type": "field",
              "new_extracted_values": [{"extracted_field": "INV-FIXED-1"}]}
    data = client.update_results(eid, [update])
    changed = next(t for t in data["extracted_targets"] if t["id"] == target["id"])
    assert changed["extracted_values"][0]["extracted_field"] == "INV-FIXED-1"
    assert changed["confidence"] == 1.0
    three = client.update_results(eid, [update], show_schema_output=True)
    assert set(three) == {"extracted_data", "schema_output", "validation"}


def test_a_result_stands_for_its_extraction(client: Client, invoice_pdf: bytes,
                                            stored: dict[str, Any]) -> None:
    r = client.trigger_sync(invoice_pdf, configuration_name="invoices")
    assert isinstance(r, Result)
    wire.validate(r, "extracted_data")
    eid = r.extraction_id
    assert eid == r["extraction_info"]["extraction_id"] and r.configuration_name == "invoices"
    assert r.fields["Invoice Number"] == "INV-2024-0042"
    assert r.tables["Line Items"][0] == {"Description": "Widget A", "Quantity": "2",
                                         "Unit Price": "50.00", "Amount": "100.00"}
    got = client.get_result(r)
    assert isinstance(got, Result) and got == r
    assert client.list_targets(r) == {"extracted_targets": r.targets}
    assert set(client.get_statuses([r, eid])) == {eid}
    assert client.wait(r, progress=False)[eid]["status_type"] == "ended"

    target = next(t for t in r.targets if t["used_extraction_target_id"] == "t-total")
    update = {"extracted_target_id": target["id"], "type": "field",
              "new_extracted_values": [{"extracted_field": "301.00"}]}
    updated = client.update_results(r, [update])
    assert isinstance(updated, Result) and updated.fields["Total"] == "301.00"
    three = client.get_result(updated, show_schema_output=True)
    assert three.extraction_id == eid and three.fields["Total"] == "301.00"
    assert three.schema_output is not None and three.validation is not None
    assert client.get_result(three).extraction_id == eid

    started = client.trigger_async(stored, configuration_name="invoices")  # info object
    assert client.wait(started, progress=False)[started["extraction_id"]]["status_type"] == "ended"
    assert client.get_result(started).extraction_id == started["extraction_id"]


def test_vault(client: Client, invoice_pdf: bytes, invoice_png: bytes, tmp_path: Path) -> None:
    path = tmp_path / "on-disk.pdf"
    path.write_bytes(make_invoice_pdf(pages=2))
    from_path = client.vault.upload(path, doctype="invoice")
    from_bytes = client.vault.upload(invoice_png)
    for record in (from_path, from_bytes):
        wire.validate(record, "vault_document")
    assert from_path["document_name"] == "on-disk.pdf" and from_path["num_pages"] == 2
    assert from_bytes["document_name"] == "document.png"
    assert from_bytes["content_type"] == "image/png"
    listed = client.vault.list()
    ids = [d["document_id"] for d in listed]
    assert from_path["document_id"] in ids and from_bytes["document_id"] in ids
    assert all("num_pages" not in d for d in listed)
    assert client.vault.info(from_path["document_id"]) == from_path
    assert client.vault.download(from_bytes["document_id"]) == invoice_png
    with pytest.raises(TypeError):
        client.vault.upload(VaultDocument("x"))


# -- one error class per D3 case --------------------------------------------------------
def _raises(cls: type[APIError], code: str, status: int, call: Any) -> APIError:
    with pytest.raises(cls) as info:
        call()
    err = info.value
    assert (err.code, err.status) == (code, status), str(err)
    assert err.message and err.message in str(err)
    assert err.response is not None and err.response.status_code == status
    return err


def test_authentication_error(service: LocalService) -> None:
    bad = Client(base_url=service.base_url, api_key="not-a-key")
    _raises(AuthenticationError, "unauthorized", 401, bad.vault.list)


def test_not_found(client: Client, other_client: Client, ended: dict[str, Any],
                   stored: dict[str, Any]) -> None:
    _raises(NotFound, "not_found", 404, lambda: client.get_result("no-such-id"))
    _raises(NotFound, "not_found", 404, lambda: client.vault.info("no-such-id"))
    err = _raises(NotFound, "not_found", 404, lambda: client.get_statuses(["a", "b"]))
    assert err.details["unknown_ids"] == ["a", "b"]
    _raises(NotFound, "not_found", 404, lambda: client.trigger_sync(
        b"%PDF-", configuration_name="no such configuration"))
    # D2: another user's ids are answered exactly like unknown ones.
    eid = ended["extraction_info"]["extraction_id"]
    _raises(NotFound, "not_found", 404, lambda: other_client.get_result(eid))
    _raises(NotFound, "not_found", 404,
            lambda: other_client.vault.download(stored["document_id"]))


def test_extraction_not_saved(client: Client, invoice_pdf: bytes) -> None:
    data = client.trigger_sync(invoice_pdf, configuration_name="invoices",
                               save_extraction=False)
    eid = data["extraction_info"]["extraction_id"]
    err = _raises(ExtractionNotSaved, "extraction_not_saved", 404,
                  lambda: client.get_result(eid))
    assert isinstance(err, NotFound)


def test_extraction_running(client: Client) -> None:
    # A long document, fetched at once: the pipeline cannot have ended yet.
    info = client.trigger_async(make_invoice_pdf(pages=12), configuration_name="invoices")
    err = _raises(ExtractionRunning, "extraction_running", 409,
                  lambda: client.get_result(info["extraction_id"]))
    assert err.details["status"]["status_type"] not in ("ended", "error")
    client.wait([info["extraction_id"]], progress=False)


def test_extraction_failed_sync_and_async(client: Client) -> None:
    err = _raises(ExtractionFailed, "extraction_failed", 422,
                  lambda: client.trigger_sync(REFUSED_URL, configuration_name="invoices"))
    assert isinstance(err, ExtractionFailed)
    assert "127.0.0.1" in err.pipeline_message
    assert err.extraction_status and err.extraction_status["status_type"] == "error"
    eid = client.trigger_async(REFUSED_URL, configuration_name="invoices")["extraction_id"]
    assert client.wait(eid, progress=False)[eid]["status_type"] == "error"
    err = _raises(ExtractionFailed, "extraction_failed", 409, lambda: client.get_result(eid))
    assert isinstance(err, ExtractionFailed) and "127.0.0.1" in err.pipeline_message


def test_data_deleted(client: Client, stored: dict[str, Any]) -> None:
    data = client.trigger_sync(stored, configuration_name="invoices",
                               delete_after_first_fetch=True)
    eid = data["extraction_info"]["extraction_id"]
    assert client.get_result(eid)["extraction_info"]["extraction_id"] == eid
    _raises(DataDeleted, "extraction_data_deleted", 410, lambda: client.get_result(eid))
    _raises(DataDeleted, "extraction_data_deleted", 410, lambda: client.list_targets(eid))


def test_invalid_request(client: Client, invoice_pdf: bytes, ended: dict[str, Any]) -> None:
    body = trigger_request(invoice_pdf, configuration_name="invoices")
    err = _raises(InvalidRequest, "invalid_request", 400,
                  lambda: client.trigger_sync({**body, "bogus": 1}))
    assert "bogus" in err.message
    _raises(InvalidRequest, "invalid_base64", 400, lambda: client.trigger_sync(
        {**body, "document_raw_data": "!!not base64!!"}))
    _raises(InvalidRequest, "content_type_mismatch", 400, lambda: client.trigger_sync(
        invoice_pdf, configuration_name="invoices", content_type="image/png"))
    eid = ended["extraction_info"]["extraction_id"]
    _raises(InvalidRequest, "invalid_request", 400, lambda: client.update_results(
        eid, [{"extracted_target_id": "nope", "type": "field", "new_extracted_values": []}]))


def test_document_errors(client: Client) -> None:
    cases: list[tuple[type[APIError], str, int, bytes]] = [
        (InvalidDocument, "empty_document", 400, b""),
        (InvalidDocument, "invalid_document", 400, b"%PDF-1.4 truncated"),
        (InvalidDocument, "encrypted_document", 400, make_invoice_pdf(encrypt=True)),
        (UnsupportedMediaType, "unsupported_media_type", 415, b"plain text, not a PDF"),
        (DocumentTooLarge, "too_many_pages", 413, make_invoice_pdf(pages=51)),
    ]
    for cls, code, status, data in cases:
        _raises(cls, code, status,
                lambda d=data: client.trigger_sync(d, configuration_name="invoices"))
        _raises(cls, code, status, lambda d=data: client.vault.upload(d))


def test_wait_timeout_reports_what_is_pending(client: Client, stored: dict[str, Any]) -> None:
    ids = [client.trigger_async(stored, configuration_name="invoices")["extraction_id"]
           for _ in range(4)]
    with pytest.raises(WaitTimeout) as info:
        client.wait(ids, timeout=0, progress=False)
    assert info.value.pending and set(info.value.pending) <= set(ids)
    assert set(info.value.statuses) == set(ids)
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, ServiceError)
    client.wait(ids, progress=False)


def test_errors_pickle(client: Client) -> None:
    with pytest.raises(NotFound) as info:
        client.get_result("no-such-id")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is NotFound
    assert (again.status, again.code, str(again)) == (404, "not_found", str(info.value))
