"""Error answers become the right class with a readable message, whatever their body."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import requests

from servicetools import errors
from servicetools.client.errors import (
    APIError,
    AuthenticationError,
    Conflict,
    DocumentError,
    ExtractionFailed,
    ExtractionRunning,
    InvalidDocument,
    InvalidRequest,
    NotFound,
    ServerError,
    ServiceError,
    error_from_response,
)


def answer(status: int, body: Any, reason: str = "", content_type: str = "application/json"
           ) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    response._content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response.headers["Content-Type"] = content_type
    response.request = requests.Request("GET", "http://svc/service/api/x").prepare()
    return response


def d3(code: str, message: str = "Something.", **details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


@pytest.mark.parametrize(("status", "code", "cls"), [
    (400, "invalid_request", InvalidRequest),
    (400, "invalid_json", InvalidRequest),
    (400, "invalid_base64", InvalidRequest),
    (400, "too_many_ids", InvalidRequest),
    (400, "invalid_multipart", InvalidRequest),
    (400, "content_type_mismatch", InvalidRequest),
    (400, "empty_document", InvalidDocument),
    (400, "encrypted_document", InvalidDocument),
    (401, "unauthorized", AuthenticationError),
    (404, "not_found", NotFound),
    (404, "extraction_not_saved", errors.ExtractionNotSaved),
    (409, "extraction_running", ExtractionRunning),
    (409, "extraction_failed", ExtractionFailed),
    (422, "extraction_failed", ExtractionFailed),
    (410, "extraction_data_deleted", errors.DataDeleted),
    (413, "document_too_large", errors.DocumentTooLarge),
    (413, "too_many_pages", errors.DocumentTooLarge),
    (415, "unsupported_media_type", errors.UnsupportedMediaType),
])
def test_d3_codes(status: int, code: str, cls: type[APIError]) -> None:
    err = error_from_response(answer(status, d3(code, "Readable.", x=1)))
    assert type(err) is cls
    assert (err.status, err.code, err.message, err.details) == (status, code, "Readable.",
                                                                {"x": 1})
    assert str(err) == f"Readable. [{status} {code}]"
    assert isinstance(err, ServiceError)


def test_unknown_code_falls_back_to_the_status() -> None:
    assert type(error_from_response(answer(409, d3("locked")))) is Conflict
    assert type(error_from_response(answer(404, d3("gone_fishing")))) is NotFound
    assert type(error_from_response(answer(500, d3("internal")))) is ServerError
    assert type(error_from_response(answer(418, d3("teapot")))) is APIError


def test_document_errors_share_a_base() -> None:
    for code, status in [("invalid_document", 400), ("document_too_large", 413),
                         ("unsupported_media_type", 415)]:
        assert isinstance(error_from_response(answer(status, d3(code))), DocumentError)


def test_extraction_failed_carries_the_pipeline_message() -> None:
    status = {"status_type": "error", "message": "cannot resolve host 'x'"}
    err = error_from_response(answer(422, d3("extraction_failed", "The extraction failed: "
                                             "cannot resolve host 'x'", status=status)))
    assert isinstance(err, ExtractionFailed)
    assert err.pipeline_message == "cannot resolve host 'x'"
    assert err.extraction_status == status
    bare = error_from_response(answer(409, d3("extraction_failed", "Failed.")))
    assert isinstance(bare, ExtractionFailed) and bare.pipeline_message == "Failed."


@pytest.mark.parametrize(("status", "body", "expected", "cls"), [
    (502, b"<html><h1>502 Bad Gateway</h1></html>", "502 Bad Gateway", ServerError),
    (404, {"detail": "Not Found"}, "Not Found", NotFound),
    (422, {"detail": [{"loc": ["body"], "msg": "field required"}]}, "field required",
     InvalidRequest),
    (401, {"message": "token expired"}, "token expired", AuthenticationError),
    (503, b"", "HTTP 503 Service Unavailable from GET http://svc/service/api/x",
     ServerError),
    (400, [1, 2], "HTTP 400", InvalidRequest),
])
def test_foreign_bodies_stay_readable(status: int, body: Any, expected: str,
                                      cls: type[APIError]) -> None:
    reason = "Service Unavailable" if status == 503 else ""
    err = error_from_response(answer(status, body, reason))
    assert type(err) is cls and err.code is None
    assert expected in str(err)


def test_pickle_keeps_fields_but_not_the_response() -> None:
    err = error_from_response(answer(404, d3("not_found", "No x.", id="x")))
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is NotFound and again.response is None
    assert (again.status, again.code, again.details, str(again)) == (404, "not_found",
                                                                     {"id": "x"}, str(err))
    transport = errors.ServiceUnreachable("down", method="GET", url="http://svc/x")
    assert pickle.loads(pickle.dumps(transport)).url == "http://svc/x"
    timeout = errors.WaitTimeout("late", {"a": {"status_type": "started"}}, ["a"])
    assert pickle.loads(pickle.dumps(timeout)).pending == ["a"]
