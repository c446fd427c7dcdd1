"""Error matrix (D3): bad requests and bad documents against the real running service.

Every case asserts the exact HTTP status and ``error.code``, that the body validates
against the wire schema ``error`` and that the message is a readable sentence. Around
the matrix: a good extraction made before it must read back unchanged after it, the
service must still serve a good extraction, and no response may be a 500.

Network: every request goes to loopback. The hosted cases name non-public addresses
(169.254.169.254, 10.0.0.1) only to prove that the D14 guard refuses them *before*
connecting; a loopback HTTP server started here counts every request it receives and
the service-level cases assert that it received none.
"""

from __future__ import annotations

import functools
import io
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from servicetools import LocalService, wire
from servicetools.service.core import hosted
from servicetools.service.core.store_sqlite import SqliteStore
from servicetools.service.settings import MIB, Settings

from ..support.helpers import API, Api, b64, make_invoice_pdf, raw_trigger
from ..support.s3server import S3Server
from ..support.stores import S3_PREFIX

#: On SQLite and PostgreSQL (tests/service/conftest.py).
pytestmark = pytest.mark.both_stores

INVOICE_NUMBER = "INV-2024-0042"
SYNC, ASYNC = "/extraction/trigger_sync", "/extraction/trigger_async"
UPDATE, STATUS = "/extraction/result/update", "/extraction/status/list"

#: (case, status) of every response this module received; checked for 5xx at the end.
SEEN: list[tuple[str, int]] = []


# -- recording callers ----------------------------------------------------------------------
class Caller:
    """An `Api` whose every response is recorded in `SEEN` (for the no-500 check)."""

    def __init__(self, api: Api, label: str) -> None:
        self.api, self.label = api, label

    def _rec(self, resp: requests.Response) -> requests.Response:
        SEEN.append((f"{self.label} {resp.request.method} {resp.request.path_url[:80]}",
                     resp.status_code))
        return resp

    def post(self, path: str, body: Any = None, **kw: Any) -> requests.Response:
        return self._rec(self.api.post(path, body, **kw))

    def post_raw(self, path: str, data: bytes, content_type: str = "application/json",
                 **kw: Any) -> requests.Response:
        return self._rec(self.api.post_raw(path, data, content_type, **kw))

    def get(self, path: str, **kw: Any) -> requests.Response:
        return self._rec(self.api.get(path, **kw))

    def upload(self, data: bytes, name: str = "doc.pdf", doctype: str = "invoice"
               ) -> requests.Response:
        return self._rec(self.api.upload(data, name, doctype))

    def request(self, method: str, path: str, *, prefix: str = API, **kw: Any
                ) -> requests.Response:
        headers = {"X-Api": self.api.token} if self.api.token is not None else {}
        headers.update(kw.pop("headers", {}))
        return self._rec(requests.request(method, self.api.base_url + prefix + path,
                                          headers=headers, timeout=120, **kw))


# -- checks ---------------------------------------------------------------------------------
def assert_sentence(message: Any) -> None:
    """A readable sentence: a non-empty single line of words, no traceback or raw repr."""
    assert isinstance(message, str), message
    assert message.strip() == message and message, repr(message)
    assert "\n" not in message and "Traceback" not in message, message
    assert message[0].isalnum(), message
    assert len(message.split()) >= 3, message


def check_error(resp: requests.Response, status: int, code: str) -> dict[str, Any]:
    """The D3 error body of ``resp``, after asserting status, code, schema and message."""
    try:
        body = resp.json()
    except ValueError:
        pytest.fail(f"{resp.status_code}: body is not JSON: {resp.text[:300]!r}")
    got = (resp.status_code, body.get("error", {}).get("code") if isinstance(body, dict)
           else None)
    assert got == (status, code), f"expected {status} {code}, got {got}: {resp.text[:500]}"
    wire.validate(body, "error")
    assert_sentence(body["error"]["message"])
    assert resp.headers.get("content-type", "").startswith("application/json")
    return body


# -- documents ------------------------------------------------------------------------------
@functools.cache
def many_pages_pdf(pages: int = 51) -> bytes:
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(72, 72))
    for i in range(pages):
        c.drawString(10, 30, str(i + 1))
        c.showPage()
    c.save()
    return buf.getvalue()


@functools.cache
def oversize(size: int) -> bytes:
    """A PDF-headed blob of ``size`` bytes (the size limit is checked before the pages)."""
    head = b"%PDF-1.4\n"
    return head + b"0" * (size - len(head))


# The trigger body may hold 25 MiB * 4/3 + 1 MiB; a 25.5 MiB document fits in the body,
# so it reaches the document check itself (not only the request-body guard).
TRIGGER_OVERSIZE = 25 * MIB + MIB // 2
# The upload is refused by Content-Length beyond 26 MiB; just below that, the form is read
# and the document check answers. Both give 413 document_too_large.
UPLOAD_OVERSIZE = 26 * MIB - 64 * 1024

GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00"
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x00" * 40 + b"PK\x05\x06" + b"\x00" * 18


# -- loopback HTTP server -------------------------------------------------------------------
class Loopback:
    """An HTTP server on 127.0.0.1 that records the paths it was asked for."""

    def __init__(self, pdf: bytes) -> None:
        hits: list[str] = []
        self.hits = hits
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
                hits.append(self.path)
                if self.path == "/doc.pdf":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/pdf")
                    self.send_header("Content-Length", str(len(pdf)))
                    self.end_headers()
                    self.wfile.write(pdf)
                    return
                targets = {"/redirect-to-localhost": f"http://localhost:{outer.port}/doc.pdf",
                           "/loop": "/loop"}
                self.send_response(302 if self.path in targets else 404)
                if self.path in targets:
                    self.send_header("Location", targets[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def loopback(invoice_pdf: bytes) -> Iterator[Loopback]:
    server = Loopback(invoice_pdf)
    yield server
    server.close()


# -- context --------------------------------------------------------------------------------
@dataclass
class Ctx:
    api: Caller
    other: Caller
    anon: Caller
    bad_token: Caller
    extraction_id: str
    first_fetch: dict[str, Any]
    field_target: str
    table_target: str
    document_id: str
    port: int
    pdf: bytes
    png: bytes
    jpeg: bytes


def invoice_number(data: dict[str, Any]) -> str:
    target = next(t for t in data["extracted_targets"]
                  if t["used_extraction_target_id"] == "t-invoice-number")
    return str(target["extracted_values"][0]["extracted_field"])


@pytest.fixture(scope="module")
def ctx(service: LocalService, api: Api, other_api: Api, invoice_pdf: bytes,
        invoice_png: bytes, invoice_jpeg: bytes, loopback: Loopback) -> Ctx:
    return make_ctx(service, api, other_api, invoice_pdf, invoice_png, invoice_jpeg,
                    loopback, "")


@pytest.fixture(scope="module")
def s3_ctx(s3_service: LocalService, s3_api: Api, s3_other_api: Api, invoice_pdf: bytes,
           invoice_png: bytes, invoice_jpeg: bytes, loopback: Loopback) -> Ctx:
    """The same context on the service whose vault is in S3 (for `TOUCHES_VAULT`)."""
    return make_ctx(s3_service, s3_api, s3_other_api, invoice_pdf, invoice_png, invoice_jpeg,
                    loopback, "s3 ")


def make_ctx(service: LocalService, api: Api, other_api: Api, invoice_pdf: bytes,
             invoice_png: bytes, invoice_jpeg: bytes, loopback: Loopback, label: str) -> Ctx:
    me = Caller(api, f"{label}dev")
    resp = me.post(SYNC, raw_trigger(invoice_pdf, extraction_name="matrix-baseline"))
    assert resp.status_code == 200, resp.text
    extraction_id = resp.json()["extraction_info"]["extraction_id"]
    first = me.get(f"/extraction/result/get/{extraction_id}")
    assert first.status_code == 200, first.text
    data = first.json()
    assert invoice_number(data) == INVOICE_NUMBER
    kinds = {t["type"]: t["id"] for t in data["extracted_targets"]}
    doc = me.upload(invoice_pdf, "matrix.pdf")
    assert doc.status_code == 200, doc.text
    return Ctx(api=me, other=Caller(other_api, f"{label}other"),
               anon=Caller(Api(service.base_url, None), f"{label}anon"),
               bad_token=Caller(Api(service.base_url, "not-a-token-" + uuid.uuid4().hex),
                                f"{label}bad-token"),
               extraction_id=extraction_id, first_fetch=data, field_target=kinds["field"],
               table_target=kinds["table"], document_id=doc.json()["document_id"],
               port=loopback.port, pdf=invoice_pdf, png=invoice_png, jpeg=invoice_jpeg)


def unknown_id() -> str:
    return "unknown-" + uuid.uuid4().hex


# -- the matrix -----------------------------------------------------------------------------
Send = Callable[[Ctx], requests.Response]


@dataclass(frozen=True)
class Case:
    id: str
    send: Send
    status: int
    code: str


def sync(make: Callable[[Ctx], Any]) -> Send:
    return lambda c: c.api.post(SYNC, make(c))


def raw(data: bytes | Callable[[Ctx], bytes], **extra: Any) -> Send:
    return sync(lambda c: raw_trigger(data(c) if callable(data) else data, **extra))


def cfg(**fields: Any) -> dict[str, Any]:
    return {"configuration_name": "invoices", **fields}


def update(make: Callable[[Ctx], list[Any] | Any]) -> Send:
    return lambda c: c.api.post(UPDATE, {"extraction_id": c.extraction_id, "updates": make(c)})


def field_update(c: Ctx, values: Any = None, **extra: Any) -> dict[str, Any]:
    return {"extracted_target_id": c.field_target, "type": "field",
            "new_extracted_values": [{"extracted_field": "X-1"}] if values is None else values,
            **extra}


def table_update(c: Ctx, values: list[Any]) -> dict[str, Any]:
    return {"extracted_target_id": c.table_target, "type": "table",
            "new_extracted_values": values}


CELL = {"extracted_cell": "Widget", "table_id": "t1", "row": 0, "column": 0}

BAD = 400, "invalid_request"
NOT_FOUND = 404, "not_found"
UNAUTHORIZED = 401, "unauthorized"
MISMATCH = 400, "content_type_mismatch"
UNSUPPORTED = 415, "unsupported_media_type"

MATRIX: list[Case] = [
    # ---- D4 / spec 2.1: the trigger request --------------------------------------------
    Case("both-configuration-name-and-id",
         raw(lambda c: c.pdf, configuration_id="cfg-invoices-1"), *BAD),
    Case("neither-configuration", sync(lambda c: {
        "input_type": "raw", "document_raw_data": b64(c.pdf)}), *BAD),
    Case("input-type-missing", sync(lambda c: cfg(document_raw_data=b64(c.pdf))), *BAD),
    Case("input-type-bogus", sync(lambda c: cfg(input_type="ftp",
                                                document_raw_data=b64(c.pdf))), *BAD),
    Case("input-type-wrong-type", sync(lambda c: cfg(input_type=1,
                                                     document_raw_data=b64(c.pdf))), *BAD),
    Case("raw-without-document-raw-data", sync(lambda c: cfg(input_type="raw")), *BAD),
    Case("raw-with-host-url-too",
         raw(lambda c: c.pdf, document_host_url="http://127.0.0.1/doc.pdf"), *BAD),
    Case("raw-with-storage-id-too",
         sync(lambda c: raw_trigger(c.pdf, document_storage_id=c.document_id)), *BAD),
    Case("service-without-storage-id", sync(lambda c: cfg(input_type="service")), *BAD),
    Case("hosted-without-host-url", sync(lambda c: cfg(input_type="hosted")), *BAD),
    Case("unknown-body-field", raw(lambda c: c.pdf, priority="high"), *BAD),
    Case("save-extraction-string", raw(lambda c: c.pdf, save_extraction="yes"), *BAD),
    Case("delete-after-first-fetch-int", raw(lambda c: c.pdf, delete_after_first_fetch=1),
         *BAD),
    Case("extraction-name-int", raw(lambda c: c.pdf, extraction_name=5), *BAD),
    Case("configuration-name-int", sync(lambda c: {
        "configuration_name": 5, "input_type": "raw", "document_raw_data": b64(c.pdf)}), *BAD),
    Case("document-raw-data-int", sync(lambda c: cfg(input_type="raw",
                                                     document_raw_data=12345)), *BAD),
    Case("content-type-text-plain", raw(lambda c: c.pdf, content_type="text/plain"), *BAD),
    Case("content-type-image-gif", raw(lambda c: c.pdf, content_type="image/gif"), *BAD),
    Case("content-type-png-for-pdf-bytes", raw(lambda c: c.pdf, content_type="image/png"),
         *MISMATCH),
    Case("content-type-pdf-for-png-bytes",
         raw(lambda c: c.png, content_type="application/pdf"), *MISMATCH),
    Case("content-type-png-for-jpeg-bytes", raw(lambda c: c.jpeg, content_type="image/png"),
         *MISMATCH),
    Case("content-type-jpeg-for-vault-pdf", sync(lambda c: cfg(
        input_type="service", document_storage_id=c.document_id, content_type="image/jpeg")),
         *MISMATCH),
    # ---- the body itself ---------------------------------------------------------------
    Case("malformed-json", lambda c: c.api.post_raw(SYNC, b'{"configuration_name": '),
         400, "invalid_json"),
    Case("not-utf8-json", lambda c: c.api.post_raw(SYNC, b'{"a": "\xff\xfe"}'),
         400, "invalid_json"),
    Case("empty-body", lambda c: c.api.post_raw(SYNC, b""), 400, "invalid_json"),
    Case("json-array-body", lambda c: c.api.post(SYNC, [raw_trigger(c.pdf)]), *BAD),
    Case("json-string-body", lambda c: c.api.post(ASYNC, "raw"), *BAD),
    Case("json-null-body", lambda c: c.api.post_raw(STATUS, b"null"), *BAD),
    # ---- documents ---------------------------------------------------------------------
    Case("bad-base64", sync(lambda c: cfg(input_type="raw", document_raw_data="@@not base64!")),
         400, "invalid_base64"),
    Case("bad-base64-padding", sync(lambda c: cfg(input_type="raw", document_raw_data="JVBER")),
         400, "invalid_base64"),
    Case("zero-byte-document", raw(b""), 400, "empty_document"),
    Case("truncated-pdf", raw(lambda c: c.pdf[: len(c.pdf) // 2]), 400, "invalid_document"),
    Case("pdf-header-only", raw(b"%PDF-1.7\n"), 400, "invalid_document"),
    Case("encrypted-pdf", raw(lambda c: make_invoice_pdf(encrypt=True)),
         400, "encrypted_document"),
    Case("truncated-png", raw(lambda c: c.png[: len(c.png) // 2]), 400, "invalid_document"),
    Case("png-signature-only", raw(lambda c: c.png[:8]), 400, "invalid_document"),
    Case("truncated-jpeg", raw(lambda c: c.jpeg[: len(c.jpeg) // 3]), 400, "invalid_document"),
    Case("hello-bytes", raw(b"hello"), *UNSUPPORTED),
    Case("gif-bytes", raw(GIF), *UNSUPPORTED),
    Case("zip-bytes", raw(ZIP), *UNSUPPORTED),
    Case("oversize-trigger-25.5MiB", raw(lambda c: oversize(TRIGGER_OVERSIZE)),
         413, "document_too_large"),
    Case("51-pages-trigger", raw(lambda c: many_pages_pdf()), 413, "too_many_pages"),
    Case("51-pages-async-trigger",
         lambda c: c.api.post(ASYNC, raw_trigger(many_pages_pdf())), 413, "too_many_pages"),
    Case("hello-bytes-async", lambda c: c.api.post(ASYNC, raw_trigger(b"hello")),
         *UNSUPPORTED),
    # ---- unknown references ------------------------------------------------------------
    Case("unknown-configuration-name", raw(lambda c: c.pdf, configuration_name="no-such"),
         *NOT_FOUND),
    Case("unknown-configuration-id", sync(lambda c: {
        "configuration_id": unknown_id(), "input_type": "raw",
        "document_raw_data": b64(c.pdf)}), *NOT_FOUND),
    Case("unknown-classifier-id", raw(lambda c: c.pdf, classifier_id=unknown_id()),
         *NOT_FOUND),
    Case("unknown-document-storage-id", sync(lambda c: cfg(
        input_type="service", document_storage_id=unknown_id())), *NOT_FOUND),
    Case("unknown-document-storage-id-async", lambda c: c.api.post(ASYNC, cfg(
        input_type="service", document_storage_id=unknown_id())), *NOT_FOUND),
    Case("result-get-unknown-id",
         lambda c: c.api.get(f"/extraction/result/get/{unknown_id()}"), *NOT_FOUND),
    Case("result-list-unknown-id",
         lambda c: c.api.get(f"/extraction/result/list/{unknown_id()}"), *NOT_FOUND),
    Case("result-update-unknown-id", lambda c: c.api.post(UPDATE, {
        "extraction_id": unknown_id(), "updates": [field_update(c)]}), *NOT_FOUND),
    Case("vault-info-unknown-id", lambda c: c.api.get(f"/vault/info/{unknown_id()}"),
         *NOT_FOUND),
    Case("vault-get-unknown-id", lambda c: c.api.get(f"/vault/get/{unknown_id()}"),
         *NOT_FOUND),
    # ---- status list (D5) --------------------------------------------------------------
    Case("status-list-1001-ids", lambda c: c.api.post(STATUS, {
        "extraction_id_list": [unknown_id() for _ in range(1001)]}), 400, "too_many_ids"),
    Case("status-list-empty", lambda c: c.api.post(STATUS, {"extraction_id_list": []}), *BAD),
    Case("status-list-not-a-list",
         lambda c: c.api.post(STATUS, {"extraction_id_list": c.extraction_id}), *BAD),
    Case("status-list-int-id", lambda c: c.api.post(STATUS, {"extraction_id_list": [5]}),
         *BAD),
    Case("status-list-missing-key", lambda c: c.api.post(STATUS, {}), *BAD),
    Case("status-list-unknown-field", lambda c: c.api.post(STATUS, {
        "extraction_id_list": [c.extraction_id], "verbose": True}), *BAD),
    # ---- updates (2.10, D8) ------------------------------------------------------------
    Case("update-unknown-target-id", update(lambda c: [
        {**field_update(c), "extracted_target_id": unknown_id()}]), *BAD),
    Case("update-type-table-for-field-target", update(lambda c: [
        {**table_update(c, [CELL]), "extracted_target_id": c.field_target}]), *BAD),
    Case("update-type-field-for-table-target", update(lambda c: [
        {**field_update(c), "extracted_target_id": c.table_target}]), *BAD),
    Case("update-type-bogus", update(lambda c: [field_update(c, type="cell")]), *BAD),
    Case("update-cell-missing-row", update(lambda c: [table_update(c, [
        {k: v for k, v in CELL.items() if k != "row"}])]), *BAD),
    Case("update-cell-negative-column",
         update(lambda c: [table_update(c, [{**CELL, "column": -1}])]), *BAD),
    Case("update-cell-row-string",
         update(lambda c: [table_update(c, [{**CELL, "row": "0"}])]), *BAD),
    Case("update-cells-same-place",
         update(lambda c: [table_update(c, [CELL, {**CELL, "extracted_cell": "B"}])]), *BAD),
    Case("update-extracted-field-missing",
         update(lambda c: [field_update(c, [{"id": "v1"}])]), *BAD),
    Case("update-extracted-field-int",
         update(lambda c: [field_update(c, [{"extracted_field": 42}])]), *BAD),
    Case("update-unknown-field-in-update", update(lambda c: [field_update(c, confidence=1)]),
         *BAD),
    Case("update-unknown-field-in-value", update(lambda c: [field_update(c, [
        {"extracted_field": "X", "note": "typo"}])]), *BAD),
    Case("update-missing-type", update(lambda c: [
        {k: v for k, v in field_update(c).items() if k != "type"}]), *BAD),
    Case("update-values-not-a-list",
         update(lambda c: [field_update(c, {"extracted_field": "X"})]), *BAD),
    Case("updates-not-a-list", update(lambda c: field_update(c)), *BAD),
    Case("updates-missing", lambda c: c.api.post(UPDATE, {"extraction_id": c.extraction_id}),
         *BAD),
    Case("update-extraction-id-int", lambda c: c.api.post(UPDATE, {
        "extraction_id": 7, "updates": []}), *BAD),
    Case("update-same-target-twice", update(lambda c: [field_update(c), field_update(c)]),
         *BAD),
    # a good update followed by a bad one: nothing may be applied (checked after the matrix)
    Case("update-good-then-unknown-target", update(lambda c: [
        field_update(c), {**field_update(c), "extracted_target_id": unknown_id()}]), *BAD),
    # ---- query parameter ---------------------------------------------------------------
    Case("show-schema-output-banana-get", lambda c: c.api.get(
        f"/extraction/result/get/{c.extraction_id}", params={"show_schema_output": "banana"}),
         *BAD),
    Case("show-schema-output-banana-sync", lambda c: c.api.post(
        SYNC, raw_trigger(c.pdf), params={"show_schema_output": "banana"}), *BAD),
    Case("show-schema-output-banana-update", lambda c: c.api.post(
        UPDATE, {"extraction_id": c.extraction_id, "updates": [field_update(c)]},
        params={"show_schema_output": "banana"}), *BAD),
    # ---- routing -----------------------------------------------------------------------
    Case("unknown-endpoint", lambda c: c.api.get("/extraction/nothing/here"), *NOT_FOUND),
    Case("unknown-endpoint-outside-api",
         lambda c: c.api.request("GET", "/nope", prefix=""), *NOT_FOUND),
    Case("result-get-without-id", lambda c: c.api.get("/extraction/result/get/"), *NOT_FOUND),
    Case("get-on-trigger-sync", lambda c: c.api.get(SYNC), 405, "method_not_allowed"),
    Case("delete-on-vault-list", lambda c: c.api.request("DELETE", "/vault/list"),
         405, "method_not_allowed"),
    Case("post-on-result-get", lambda c: c.api.post(
        f"/extraction/result/get/{c.extraction_id}", {}), 405, "method_not_allowed"),
    # ---- authentication (D2) -----------------------------------------------------------
    Case("no-token-trigger-sync", lambda c: c.anon.post(SYNC, raw_trigger(c.pdf)),
         *UNAUTHORIZED),
    Case("no-token-bad-body", lambda c: c.anon.post_raw(SYNC, b"{not json"), *UNAUTHORIZED),
    Case("no-token-trigger-async", lambda c: c.anon.post(ASYNC, raw_trigger(c.pdf)),
         *UNAUTHORIZED),
    Case("no-token-result-get",
         lambda c: c.anon.get(f"/extraction/result/get/{c.extraction_id}"), *UNAUTHORIZED),
    Case("no-token-result-list",
         lambda c: c.anon.get(f"/extraction/result/list/{c.extraction_id}"), *UNAUTHORIZED),
    Case("no-token-status-list", lambda c: c.anon.post(STATUS, {
        "extraction_id_list": [c.extraction_id]}), *UNAUTHORIZED),
    Case("no-token-update", lambda c: c.anon.post(UPDATE, {
        "extraction_id": c.extraction_id, "updates": []}), *UNAUTHORIZED),
    Case("no-token-vault-upload", lambda c: c.anon.upload(c.pdf), *UNAUTHORIZED),
    Case("no-token-vault-list", lambda c: c.anon.get("/vault/list"), *UNAUTHORIZED),
    Case("no-token-vault-get", lambda c: c.anon.get(f"/vault/get/{c.document_id}"),
         *UNAUTHORIZED),
    Case("empty-token-vault-list",
         lambda c: c.anon.request("GET", "/vault/list", headers={"X-Api": ""}),
         *UNAUTHORIZED),
    Case("unknown-token-trigger-sync", lambda c: c.bad_token.post(SYNC, raw_trigger(c.pdf)),
         *UNAUTHORIZED),
    Case("unknown-token-result-get",
         lambda c: c.bad_token.get(f"/extraction/result/get/{c.extraction_id}"),
         *UNAUTHORIZED),
    Case("unknown-token-status-list", lambda c: c.bad_token.post(STATUS, {
        "extraction_id_list": [c.extraction_id]}), *UNAUTHORIZED),
    Case("unknown-token-vault-info",
         lambda c: c.bad_token.get(f"/vault/info/{c.document_id}"), *UNAUTHORIZED),
    Case("unknown-token-vault-upload", lambda c: c.bad_token.upload(c.pdf), *UNAUTHORIZED),
    # ---- vault upload (D12) ------------------------------------------------------------
    Case("upload-hello", lambda c: c.api.upload(b"hello", "hello.pdf"), *UNSUPPORTED),
    Case("upload-gif", lambda c: c.api.upload(GIF, "a.gif"), *UNSUPPORTED),
    Case("upload-zip", lambda c: c.api.upload(ZIP, "a.zip"), *UNSUPPORTED),
    Case("upload-zero-bytes", lambda c: c.api.upload(b"", "empty.pdf"), 400, "empty_document"),
    Case("upload-encrypted-pdf", lambda c: c.api.upload(make_invoice_pdf(encrypt=True)),
         400, "encrypted_document"),
    Case("upload-truncated-pdf", lambda c: c.api.upload(c.pdf[:700]), 400, "invalid_document"),
    Case("upload-truncated-png", lambda c: c.api.upload(c.png[:2000], "p.png"),
         400, "invalid_document"),
    Case("upload-51-pages", lambda c: c.api.upload(many_pages_pdf()), 413, "too_many_pages"),
    Case("upload-oversize-26MiB", lambda c: c.api.upload(oversize(UPLOAD_OVERSIZE)),
         413, "document_too_large"),
    Case("upload-without-file", lambda c: c.api.request(
        "POST", "/vault/upload", data={"doctype": "invoice"},
        files={"other": ("x.txt", b"x")}), *BAD),
    Case("upload-without-doctype", lambda c: c.api.request(
        "POST", "/vault/upload", files={"uploadFile": ("doc.pdf", c.pdf)}), *BAD),
    Case("upload-json-body", lambda c: c.api.post("/vault/upload", {"uploadFile": "x"}), *BAD),
    # ---- hosted documents (D14), refused at trigger -------------------------------------
    Case("hosted-file-url", sync(lambda c: cfg(
        input_type="hosted", document_host_url="file:///etc/passwd")), *BAD),
    Case("hosted-ftp-url", sync(lambda c: cfg(
        input_type="hosted", document_host_url=f"ftp://127.0.0.1:{c.port}/doc.pdf")), *BAD),
    Case("hosted-no-host", sync(lambda c: cfg(
        input_type="hosted", document_host_url="http:///doc.pdf")), *BAD),
    Case("hosted-not-a-url", sync(lambda c: cfg(
        input_type="hosted", document_host_url="doc.pdf")), *BAD),
    Case("hosted-file-url-async", lambda c: c.api.post(ASYNC, cfg(
        input_type="hosted", document_host_url="file:///etc/passwd")), *BAD),
]


#: D4: "400 naming the offending field". The message of these cases must name it.
NAMES: dict[str, str] = {
    # Pillow's message named its buffer ("<_io.BytesIO object at 0x7f38...>").
    "png-signature-only": "its header is not one of a PNG or JPEG image",
    "both-configuration-name-and-id": "configuration_id",
    "neither-configuration": "configuration_name",
    "input-type-missing": "input_type",
    "input-type-bogus": "input_type",
    "input-type-wrong-type": "input_type",
    "raw-without-document-raw-data": "document_raw_data",
    "raw-with-host-url-too": "document_host_url",
    "raw-with-storage-id-too": "document_storage_id",
    "service-without-storage-id": "document_storage_id",
    "hosted-without-host-url": "document_host_url",
    "unknown-body-field": "priority",
    "save-extraction-string": "save_extraction",
    "delete-after-first-fetch-int": "delete_after_first_fetch",
    "extraction-name-int": "extraction_name",
    "configuration-name-int": "configuration_name",
    "document-raw-data-int": "document_raw_data",
    "content-type-text-plain": "content_type",
    "content-type-image-gif": "content_type",
    "content-type-png-for-pdf-bytes": "content_type",
    "content-type-jpeg-for-vault-pdf": "content_type",
    "bad-base64": "document_raw_data",
    "status-list-unknown-field": "verbose",
    "status-list-empty": "extraction_id_list",
    "update-unknown-field-in-update": "confidence",
    "update-unknown-field-in-value": "note",
    "update-cell-missing-row": "row",
    "update-extracted-field-missing": "extracted_field",
    "update-values-not-a-list": "new_extracted_values",
    "updates-not-a-list": "updates",
    "show-schema-output-banana-get": "show_schema_output",
    "upload-without-file": "uploadFile",
    "upload-without-doctype": "doctype",
    "hosted-file-url": "document_host_url",
    "hosted-ftp-url": "document_host_url",
}


#: The cases that reach the vault (its records or its storage): they run against both
#: backends, the embedded folder and S3; the rest is the same code on either, so once.
TOUCHES_VAULT = {
    "raw-with-storage-id-too", "content-type-jpeg-for-vault-pdf",
    "unknown-document-storage-id", "unknown-document-storage-id-async",
    "vault-info-unknown-id", "vault-get-unknown-id", "delete-on-vault-list",
    "no-token-vault-upload", "no-token-vault-get", "unknown-token-vault-upload",
    "upload-hello", "upload-gif", "upload-zip", "upload-zero-bytes", "upload-encrypted-pdf",
    "upload-truncated-pdf", "upload-truncated-png", "upload-51-pages", "upload-oversize-26MiB",
    "upload-without-file", "upload-without-doctype", "upload-json-body",
}
VAULT_CASES = [c for c in MATRIX if c.id in TOUCHES_VAULT]


def _check_case(ctx: Ctx, case: Case) -> None:
    body = check_error(case.send(ctx), case.status, case.code)
    if case.id in NAMES:
        assert NAMES[case.id] in body["error"]["message"], body["error"]["message"]


# The whole matrix on each store (SQLite, PostgreSQL: the module's `service`)...
@pytest.mark.parametrize("case", MATRIX, ids=[c.id for c in MATRIX])
def test_error_matrix(ctx: Ctx, case: Case) -> None:
    _check_case(ctx, case)


# ... and the cases that reach the vault once more with its documents in S3.
@pytest.mark.parametrize("case", VAULT_CASES, ids=[c.id for c in VAULT_CASES])
def test_error_matrix_s3_vault(s3_ctx: Ctx, case: Case) -> None:
    _check_case(s3_ctx, case)


def test_matrix_is_large_enough() -> None:
    assert len(MATRIX) >= 45
    assert len({c.id for c in MATRIX}) == len(MATRIX)
    assert set(NAMES) <= {c.id for c in MATRIX}
    assert TOUCHES_VAULT <= {c.id for c in MATRIX}


# -- cases that need more than one assertion ------------------------------------------------
def test_status_list_names_the_unknown_ids(ctx: Ctx) -> None:
    unknown = [unknown_id(), unknown_id()]
    resp = ctx.api.post(STATUS, {"extraction_id_list": [unknown[0], ctx.extraction_id,
                                                        unknown[1]]})
    body = check_error(resp, 404, "not_found")
    assert body["error"]["details"]["unknown_ids"] == unknown


def test_unknown_endpoint_answers_the_d3_body_without_a_token(ctx: Ctx) -> None:
    check_error(ctx.anon.get("/no/such/endpoint"), 404, "not_found")


def test_save_extraction_false_result_is_not_saved(ctx: Ctx) -> None:
    resp = ctx.api.post(SYNC, raw_trigger(ctx.pdf, save_extraction=False))
    assert resp.status_code == 200, resp.text
    extraction_id = resp.json()["extraction_info"]["extraction_id"]
    for path in ("get", "list"):
        check_error(ctx.api.get(f"/extraction/result/{path}/{extraction_id}"),
                    404, "extraction_not_saved")


# -- foreign ids (D2): answered exactly like unknown ids ------------------------------------
FOREIGN: dict[str, Callable[[Caller, Ctx, str, str], requests.Response]] = {
    "result-get": lambda who, c, eid, did: who.get(f"/extraction/result/get/{eid}"),
    "result-list": lambda who, c, eid, did: who.get(f"/extraction/result/list/{eid}"),
    "status-list": lambda who, c, eid, did: who.post(STATUS, {"extraction_id_list": [eid]}),
    "result-update": lambda who, c, eid, did: who.post(UPDATE, {
        "extraction_id": eid, "updates": [field_update(c)]}),
    "vault-info": lambda who, c, eid, did: who.get(f"/vault/info/{did}"),
    "vault-get": lambda who, c, eid, did: who.get(f"/vault/get/{did}"),
    "trigger-service-input": lambda who, c, eid, did: who.post(SYNC, cfg(
        input_type="service", document_storage_id=did)),
}


FOREIGN_VAULT = [e for e in FOREIGN if e.startswith("vault-") or e == "trigger-service-input"]


@pytest.mark.parametrize("endpoint", list(FOREIGN))
def test_foreign_id_is_answered_like_an_unknown_id(ctx: Ctx, endpoint: str) -> None:
    _check_foreign(ctx, endpoint)


@pytest.mark.parametrize("endpoint", FOREIGN_VAULT)
def test_foreign_id_is_answered_like_an_unknown_id_s3_vault(s3_ctx: Ctx, endpoint: str
                                                             ) -> None:
    _check_foreign(s3_ctx, endpoint)


def _check_foreign(ctx: Ctx, endpoint: str) -> None:
    send = FOREIGN[endpoint]
    foreign = send(ctx.other, ctx, ctx.extraction_id, ctx.document_id)
    missing = unknown_id()
    unknown = send(ctx.other, ctx, missing, missing)
    foreign_body = check_error(foreign, 404, "not_found")
    unknown_body = check_error(unknown, 404, "not_found")
    placeholder = "<ID>"
    foreign_text = (json.dumps(foreign_body, sort_keys=True)
                    .replace(ctx.extraction_id, placeholder)
                    .replace(ctx.document_id, placeholder))
    unknown_text = json.dumps(unknown_body, sort_keys=True).replace(missing, placeholder)
    assert foreign_text == unknown_text


# -- hosted documents (D14): non-public addresses are refused before connecting -------------
HOSTED_REFUSED: dict[str, tuple[Callable[[int], str], tuple[str, ...]]] = {
    "ipv4-loopback": (lambda port: f"http://127.0.0.1:{port}/doc.pdf", ("127.0.0.1",)),
    "ipv6-loopback": (lambda port: f"http://[::1]:{port}/doc.pdf", ("::1",)),
    "localhost-name": (lambda port: f"http://localhost:{port}/doc.pdf",
                       ("127.0.0.1", "::1")),
    # Never contacted: the address check runs before any connection is made.
    "link-local-metadata": (lambda port: "http://169.254.169.254/latest", ("169.254.169.254",)),
    "private-10": (lambda port: "http://10.0.0.1/doc.pdf", ("10.0.0.1",)),
}


@pytest.mark.parametrize("name", list(HOSTED_REFUSED))
def test_hosted_non_public_address_fails_sync(ctx: Ctx, loopback: Loopback, name: str
                                              ) -> None:
    make_url, addresses = HOSTED_REFUSED[name]
    before = len(loopback.hits)
    resp = ctx.api.post(SYNC, cfg(input_type="hosted", document_host_url=make_url(ctx.port)))
    body = check_error(resp, 422, "extraction_failed")
    error = body["error"]
    status = error["details"]["status"]
    wire.validate(status, "status")
    assert status["status_type"] == "error"
    assert any(a in error["message"] for a in addresses), error["message"]
    assert any(a in status["message"] for a in addresses), status["message"]
    # The failed extraction's results answer 409 extraction_failed (D6).
    extraction_id = error["details"]["extraction_id"]
    check_error(ctx.api.get(f"/extraction/result/get/{extraction_id}"),
                409, "extraction_failed")
    assert loopback.hits[before:] == [], "the service connected to a refused address"


def test_hosted_loopback_fails_async(ctx: Ctx, loopback: Loopback) -> None:
    before = len(loopback.hits)
    resp = ctx.api.post(ASYNC, cfg(input_type="hosted",
                                   document_host_url=f"http://127.0.0.1:{ctx.port}/doc.pdf"))
    assert resp.status_code == 200, resp.text
    extraction_id = resp.json()["extraction_id"]
    status = ctx.api.api.wait(extraction_id, timeout=30)
    assert status["status_type"] == "error"
    assert "127.0.0.1" in status["message"]
    body = check_error(ctx.api.get(f"/extraction/result/get/{extraction_id}"),
                       409, "extraction_failed")
    assert body["error"]["details"]["status"]["status_type"] == "error"
    check_error(ctx.api.get(f"/extraction/result/list/{extraction_id}"),
                409, "extraction_failed")
    assert loopback.hits[before:] == []


# The redirect guard, at unit level. Through the default service the first hop of any
# URL on our loopback server is already refused (see the cases above), so a redirect
# could never be followed there. Here test doubles for the two address checks (name
# resolution, and the peer of a connected socket) let exactly the first host:port
# through; everything else goes through the real checks.
def _allow(monkeypatch: pytest.MonkeyPatch, name: str, host: str, port: int) -> None:
    real = getattr(hosted, name)

    def refused(checked_host: str, checked_port: int) -> str | None:
        if (checked_host, checked_port) == (host, port):
            return None
        result: str | None = real(checked_host, checked_port)
        return result

    monkeypatch.setattr(hosted, name, refused)


@pytest.fixture
def first_hop_allowed(loopback: Loopback, monkeypatch: pytest.MonkeyPatch) -> None:
    _allow(monkeypatch, "_refused_address", "127.0.0.1", loopback.port)
    _allow(monkeypatch, "_refused_peer", "127.0.0.1", loopback.port)
    loopback.hits.clear()


def test_dns_rebinding_is_refused_at_the_connection(
        loopback: Loopback, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The name check is fooled (as by a name that resolved to a public address when
    # checked); the connection still lands on loopback, and nothing may be sent there.
    _allow(monkeypatch, "_refused_address", "127.0.0.1", loopback.port)
    loopback.hits.clear()
    settings = Settings(data_dir=tmp_path, allow_private_hosts=False)
    with pytest.raises(hosted.DownloadError) as err:
        hosted.download(f"http://127.0.0.1:{loopback.port}/doc.pdf", settings)
    assert "non-public address 127.0.0.1" in str(err.value)
    assert loopback.hits == [], "a request reached the refused address"


def test_private_hosts_allowed_skip_the_connection_check(
        loopback: Loopback, tmp_path: Path, invoice_pdf: bytes) -> None:
    settings = Settings(data_dir=tmp_path, allow_private_hosts=True)
    data, _ = hosted.download(f"http://127.0.0.1:{loopback.port}/doc.pdf", settings)
    assert data == invoice_pdf


def test_redirect_guard_double_lets_the_first_hop_through(
        loopback: Loopback, first_hop_allowed: None, tmp_path: Path, invoice_pdf: bytes
) -> None:
    settings = Settings(data_dir=tmp_path, allow_private_hosts=False)
    data, name = hosted.download(f"http://127.0.0.1:{loopback.port}/doc.pdf", settings)
    assert (data, name) == (invoice_pdf, "doc.pdf")


def test_redirect_to_loopback_is_refused(loopback: Loopback, first_hop_allowed: None,
                                         tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, allow_private_hosts=False)
    with pytest.raises(hosted.DownloadError) as err:
        hosted.download(f"http://127.0.0.1:{loopback.port}/redirect-to-localhost", settings)
    message = str(err.value)
    assert f"http://localhost:{loopback.port}/doc.pdf" in message
    assert "127.0.0.1" in message or "::1" in message
    assert loopback.hits == ["/redirect-to-localhost"]  # the target was never fetched


def test_redirect_loop_stops_after_the_limit(loopback: Loopback, first_hop_allowed: None,
                                            tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, allow_private_hosts=False)
    with pytest.raises(hosted.DownloadError, match="too many redirects"):
        hosted.download(f"http://127.0.0.1:{loopback.port}/loop", settings)
    assert loopback.hits == ["/loop"] * (settings.hosted_max_redirects + 1)


# -- after the matrix -----------------------------------------------------------------------
def test_service_still_serves_a_good_extraction(ctx: Ctx) -> None:
    resp = ctx.api.post(SYNC, raw_trigger(ctx.pdf, extraction_name="after-matrix"))
    assert resp.status_code == 200, resp.text
    data = resp.json()
    wire.validate(data, "extracted_data")
    assert invoice_number(data) == INVOICE_NUMBER


def test_earlier_result_is_unchanged(ctx: Ctx) -> None:
    resp = ctx.api.get(f"/extraction/result/get/{ctx.extraction_id}")
    assert resp.status_code == 200, resp.text
    assert resp.json() == ctx.first_fetch


def test_s3_vault_holds_exactly_the_recorded_documents(s3_ctx: Ctx, s3_service: LocalService,
                                                       s3_server: S3Server) -> None:
    # Every refused upload of the matrix stored nothing, and every record's bytes are
    # there whole: the objects under the prefix are exactly the records' keys.
    store = SqliteStore(s3_service.data_dir / "service.sqlite3")
    expected = set()
    for caller in (s3_ctx.api, s3_ctx.other):
        for doc in caller.get("/vault/list").json()["documents"]:
            found = store.document_file(doc["owner_id"], doc["document_id"])
            assert found is not None
            key = found[1]
            expected.add(f"{S3_PREFIX}/{key[:2]}/{key}")
    client = s3_server.client()
    listed = client.list_objects_v2(Bucket=s3_server.bucket, Prefix=f"{S3_PREFIX}/")
    assert {o["Key"] for o in listed.get("Contents", [])} == expected


def test_no_response_was_a_server_error(ctx: Ctx) -> None:
    # Takes ctx to run after the matrix of each backend (the module runs once per backend).
    if len(SEEN) < len(MATRIX):
        pytest.skip("only meaningful after the whole matrix ran in this session")
    failures = [(case, status) for case, status in SEEN if status >= 500]
    assert failures == []
