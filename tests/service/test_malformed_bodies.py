"""Bodies that used to get a 500 (issue 13) get the documented 400, against the real
service: a non-string input_type, JSON nested a thousand levels deep, lone UTF-16
surrogates in strings, UTF-16 bytes; and a 405 says which methods are allowed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..support.helpers import Api, raw_trigger

SYNC = "/extraction/trigger_sync"


def check_400(resp: Any, code: str = "invalid_request") -> str:
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["code"] == code
    return str(error["message"])


@pytest.mark.parametrize("input_type", [{}, ["raw"], 3, None, True])
def test_an_input_type_that_is_no_string_is_refused(api: Api, invoice_pdf: bytes,
                                                    input_type: Any) -> None:
    body = raw_trigger(invoice_pdf, input_type=input_type)
    assert "input_type" in check_400(api.post(SYNC, body))


@pytest.mark.parametrize("path", [SYNC, "/extraction/trigger_async", "/extraction/status/list",
                                  "/extraction/result/update"])
@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_json_nested_a_thousand_levels_is_refused(api: Api, path: str, opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    data = (opening * 1000 + "1" + closing * 1000).encode()
    assert "levels deep" in check_400(api.post_raw(path, data), "invalid_json")


def test_json_nested_within_the_limit_is_judged_by_the_schema(api: Api) -> None:
    data = ("[" * 60 + "1" + "]" * 60).encode()
    assert "JSON object" in check_400(api.post_raw("/extraction/status/list", data))


@pytest.mark.parametrize("field", ["configuration_name", "extraction_name", "document_name"])
def test_a_lone_surrogate_in_a_string_is_refused_before_any_work(
    api: Api, invoice_pdf: bytes, field: str,
) -> None:
    body = json.dumps(raw_trigger(invoice_pdf, **{field: "x\ud800y"}))
    assert "\\ud800" in body  # json.dumps escapes it; the service reads it back
    message = check_400(api.post_raw(SYNC, body.encode()), "invalid_json")
    assert "surrogate" in message


def test_a_lone_surrogate_in_an_id_list_is_refused(api: Api) -> None:
    body = json.dumps({"extraction_id_list": ["\udfff"]}).encode()
    check_400(api.post_raw("/extraction/status/list", body), "invalid_json")


def test_utf16_bytes_are_refused(api: Api) -> None:
    body = json.dumps({"extraction_id_list": ["a"]}).encode("utf-16")
    assert "UTF-8" in check_400(api.post_raw("/extraction/status/list", body), "invalid_json")


def test_a_405_names_the_allowed_methods(api: Api) -> None:
    import requests

    resp = requests.delete(api.base_url + "/service/api/vault/list",
                           headers={"X-Api": api.token or ""}, timeout=30)
    assert resp.status_code == 405
    assert resp.headers["Allow"] == "GET"
    assert resp.json()["error"]["code"] == "method_not_allowed"
    assert "GET" in resp.json()["error"]["message"]


@pytest.mark.parametrize("field", ["extraction_name", "configuration_name"])
def test_a_name_over_255_characters_is_refused(api: Api, invoice_pdf: bytes, field: str) -> None:
    body = raw_trigger(invoice_pdf, **{field: "n" * 256})
    assert field in check_400(api.post(SYNC, body))


def test_an_upload_with_a_name_over_255_characters_is_refused(api: Api,
                                                               invoice_pdf: bytes) -> None:
    resp = api.upload(invoice_pdf, name="n" * 300 + ".pdf")
    assert "255" in check_400(resp)
    ok = api.upload(invoice_pdf, name="n" * 200 + ".pdf")
    assert ok.status_code == 200, ok.text


def test_the_published_schemas_claim_no_ecma_regex_format(api: Api, invoice_pdf: bytes) -> None:
    # Configurations' patterns are Python regular expressions ("(?i)..."): a "regex"
    # format (ECMA-262) made strict checkers refuse every result.
    import jsonschema
    import requests

    published = requests.get(api.base_url + "/openapi.json", timeout=30).json()
    found: list[Any] = []
    stack: list[Any] = [published]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found += [node] if node.get("format") == "regex" else []
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    assert found == []
    result = api.post(SYNC, raw_trigger(invoice_pdf)).json()
    schema = {**published["components"]["schemas"]["extracted_data"],
              "components": published["components"]}
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(result)
