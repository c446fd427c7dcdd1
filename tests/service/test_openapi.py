"""Drift: the app's OpenAPI documents exactly the wire schemas, and real answers fit them."""

from __future__ import annotations

from typing import Any

import jsonschema
import requests

from servicetools import LocalService, wire

from ..support.helpers import Api, raw_trigger

API = "/service/api"
ROUTES = {  # path -> (method, request schema, response schema)
    "/extraction/trigger_sync": ("post", "trigger_request", "extracted_data"),
    "/extraction/trigger_async": ("post", "trigger_request", "extraction_info"),
    "/extraction/result/get/{extraction_id}": ("get", None, "extracted_data"),
    "/extraction/result/list/{extraction_id}": ("get", None, "targets_list"),
    "/extraction/status/list": ("post", "status_list_request", "status_list_response"),
    "/extraction/result/update": ("post", "update_request", "extracted_data"),
    "/vault/upload": ("post", None, "vault_document"),
    "/vault/list": ("get", None, "vault_list"),
    "/vault/info/{document_id}": ("get", None, "vault_document"),
    "/vault/get/{document_id}": ("get", None, None),
}


def _openapi(service: LocalService) -> dict[str, Any]:
    doc: dict[str, Any] = requests.get(service.base_url + "/openapi.json", timeout=10).json()
    return doc


def _ref_name(schema: dict[str, Any]) -> str:
    ref = schema["oneOf"][0]["$ref"] if "oneOf" in schema else schema["$ref"]
    return str(ref.rsplit("/", 1)[-1])


def test_all_ten_endpoints_documented_with_wire_schemas(service: LocalService) -> None:
    doc = _openapi(service)
    paths = {p.removeprefix(API): ops for p, ops in doc["paths"].items()}
    assert set(paths) == set(ROUTES)
    for path, (method, request_schema, response_schema) in ROUTES.items():
        op = paths[path][method]
        if request_schema:
            body = op["requestBody"]["content"]["application/json"]["schema"]
            assert _ref_name(body) == request_schema, path
        if response_schema:
            ok = op["responses"]["200"]["content"]["application/json"]["schema"]
            assert _ref_name(ok) == response_schema, path
        for status, resp in op["responses"].items():
            if status.startswith(("4", "5")):
                assert _ref_name(resp["content"]["application/json"]["schema"]) == "error"
    for name in wire.SCHEMA_NAMES:
        assert doc["components"]["schemas"][name] == wire.bundled(
            name, ref_root=f"#/components/schemas/{name}"), name


def test_real_answers_fit_the_documented_schemas(service: LocalService, api: Api,
                                                 invoice_pdf: bytes) -> None:
    """Validate live responses with the schemas as published in /openapi.json."""
    doc = _openapi(service)
    components = doc["components"]["schemas"]

    def check(obj: Any, name: str) -> None:
        schema = {**components[name], "components": doc["components"]}
        jsonschema.Draft202012Validator(schema).validate(obj)

    data = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf)).json()
    check(data, "extracted_data")
    eid = data["extraction_info"]["extraction_id"]
    check(api.get(f"/extraction/result/list/{eid}").json(), "targets_list")
    check(api.post("/extraction/status/list", {"extraction_id_list": [eid]}).json(),
          "status_list_response")
    check(api.get("/vault/list").json(), "vault_list")
    check(api.get("/extraction/result/get/nope").json(), "error")
