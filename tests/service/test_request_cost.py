"""What one request may cost, found by bench/limits.py and bench/reliability.py.

- An update carries at most `max_update_values` values, counted before any is checked
  (a body at the size limit held 1.5 million and took 41 s).
- A 400 lists at most `wire.MAX_PROBLEMS` problems (100,000 bad values took 5 s and
  300 MiB to describe, in an answer 45 times the request).
- A body holds at most `max_json_containers` arrays and objects, counted before it is
  parsed (twelve million empty arrays took 17 s and 1.7 GiB to be refused).
- A document at the size limit in MIME base64 (CRLF after every 76 characters) fits the
  body limit.

That bodies are parsed and checked off the event loop (another user's requests waited
28 s behind one large update) is measured by bench/reliability.py, not here: it is a
matter of time.
"""

from __future__ import annotations

import base64

import pytest
import requests

from servicetools import wire
from servicetools.service.settings import Settings

from ..support.helpers import Api, make_invoice_pdf, raw_trigger

STATUS, UPDATE, SYNC = ("/extraction/status/list", "/extraction/result/update",
                        "/extraction/trigger_sync")
LIMIT = Settings(data_dir=".").max_update_values


def _update(values: list[object], extraction_id: str = "no-such-extraction") -> dict[str, object]:
    return {"extraction_id": extraction_id, "updates": [
        {"extracted_target_id": "t-vendor", "type": "field", "new_extracted_values": values}]}


def test_an_update_over_the_value_limit_is_refused_before_its_values_are_checked(
    api: Api,
) -> None:
    over = api.post(UPDATE, _update([{"extracted_field": "x"}] * (LIMIT + 1)))
    assert over.status_code == 400, over.text
    error = over.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["details"] == {"count": LIMIT + 1, "limit": LIMIT}
    # Bad values over the limit: the count answers, not a check of every value.
    assert "problems" not in error["details"]
    # At the limit the values are checked, and then the extraction looked up.
    at_limit = api.post(UPDATE, _update([{"extracted_field": "x"}] * LIMIT))
    assert at_limit.status_code == 404, at_limit.text


def test_a_400_lists_the_first_problems_only(api: Api) -> None:
    answer = api.post(UPDATE, _update([1] * 10_000))
    assert answer.status_code == 400, answer.text
    problems = answer.json()["error"]["details"]["problems"]
    assert len(problems) == wire.MAX_PROBLEMS
    assert problems[0].startswith("$.updates[0].new_extracted_values[")


def test_a_document_at_the_size_limit_fits_in_mime_base64(api: Api) -> None:
    settings = Settings(data_dir=".")
    pdf = make_invoice_pdf()
    # A real PDF padded with a comment to the size limit exactly.
    document = pdf + b"\n%" + b"x" * (settings.max_document_bytes - len(pdf) - 3) + b"\n"
    assert len(document) == settings.max_document_bytes
    mime = base64.encodebytes(document).replace(b"\n", b"\r\n").decode()
    body = raw_trigger(b"")
    body["document_raw_data"] = mime
    answer = api.post(SYNC, body)
    assert answer.status_code == 200, answer.text[:500]


def test_the_body_limit_leaves_room_for_line_breaks() -> None:
    settings = Settings(data_dir=".")
    encoded = len(base64.encodebytes(b"\0" * settings.max_document_bytes)
                  .replace(b"\n", b"\r\n"))
    assert encoded + 1024 < settings.max_body_bytes


@pytest.mark.parametrize("path", [SYNC, STATUS, UPDATE])
def test_a_request_over_the_body_limit_is_refused_with_the_documented_413(api: Api, path: str
                                                                          ) -> None:
    settings = Settings(data_dir=".")
    answer = requests.post(api.base_url + "/service/api" + path,
                           data=b"{" + b" " * settings.max_body_bytes + b"}",
                           headers={"X-Api": str(api.token),
                                    "Content-Type": "application/json"}, timeout=120)
    assert answer.status_code == 413
    assert f"{settings.max_body_bytes:,}" in answer.json()["error"]["message"]
    # Found by the fuzzer with another seed: an update's 413 was not in the OpenAPI
    # document, so a client generated from it knew no such answer.
    document = requests.get(api.base_url + "/openapi.json", timeout=30).json()
    assert "413" in document["paths"]["/service/api" + path]["post"]["responses"]


def test_a_body_of_too_many_arrays_is_refused_before_it_is_parsed(api: Api) -> None:
    most = Settings(data_dir=".").max_json_containers
    # The list and the body's object count too: "most" arrays inside are one too many.
    over = b'{"extraction_id_list":[' + b",".join([b"[]"] * most) + b"]}"
    answer = api.post_raw(STATUS, over)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_json"
    assert f"{most:,}" in error["message"]
    # The largest update there is, a value per object, stays under it.
    at_limit = api.post(UPDATE, _update([{"extracted_field": "x"}] * LIMIT))
    assert at_limit.status_code == 404, at_limit.text
