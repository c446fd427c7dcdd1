"""D2: another user's ids are answered exactly like unknown ids, on every endpoint."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from ..support.helpers import Api, raw_trigger


def _calls(api: Api, extraction_id: str, document_id: str) -> dict[str, requests.Response]:
    trigger = {"configuration_name": "invoices", "input_type": "service",
               "document_storage_id": document_id}
    return {
        "result/get": api.get(f"/extraction/result/get/{extraction_id}"),
        "result/list": api.get(f"/extraction/result/list/{extraction_id}"),
        "status/list": api.post("/extraction/status/list",
                                {"extraction_id_list": [extraction_id]}),
        "result/update": api.post("/extraction/result/update",
                                  {"extraction_id": extraction_id, "updates": []}),
        "vault/info": api.get(f"/vault/info/{document_id}"),
        "vault/get": api.get(f"/vault/get/{document_id}"),
        "trigger_sync": api.post("/extraction/trigger_sync", trigger),
        "trigger_async": api.post("/extraction/trigger_async", trigger),
    }


def _shape(resp: requests.Response, *ids: str) -> tuple[int, Any]:
    text = resp.text
    for n, id_ in enumerate(ids):
        text = text.replace(id_, f"<id{n}>")
    return resp.status_code, text


@pytest.mark.integration
def test_foreign_ids_look_unknown(api: Api, other_api: Api, invoice_pdf: bytes) -> None:
    data = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf)).json()
    extraction_id = data["extraction_info"]["extraction_id"]
    document_id = data["extracted_document_storage_id"]
    unknown_x, unknown_d = "0" * 32, "1" * 32
    foreign = _calls(other_api, extraction_id, document_id)
    unknown = _calls(other_api, unknown_x, unknown_d)
    for name, resp in foreign.items():
        assert resp.status_code == 404, name
        assert _shape(resp, extraction_id, document_id) == _shape(
            unknown[name], unknown_x, unknown_d), name
    # ... and the owner still has everything.
    for name, resp in _calls(api, extraction_id, document_id).items():
        assert resp.status_code == 200, (name, resp.text)


def test_vault_list_shows_only_own_documents(api: Api, other_api: Api, invoice_pdf: bytes
                                             ) -> None:
    mine = api.upload(invoice_pdf, "mine.pdf").json()["document_id"]
    theirs = other_api.upload(invoice_pdf, "theirs.pdf").json()["document_id"]
    my_ids = {d["document_id"] for d in api.get("/vault/list").json()["documents"]}
    their_docs = other_api.get("/vault/list").json()["documents"]
    assert mine in my_ids and theirs not in my_ids
    assert theirs in {d["document_id"] for d in their_docs}
    assert all(d["owner_id"] == their_docs[0]["owner_id"] for d in their_docs)
    assert mine not in {d["document_id"] for d in their_docs}
