"""Issue 13, "Nothing breaks it": requests that used to get a 500, slip past a limit or
tell one user about another's documents, against the real local service over loopback.

The cases of the first round (types, depth, surrogates, UTF-16, 405, name lengths,
regex format) are in ``test_malformed_bodies.py``; these are the ones found after it.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import requests

from servicetools import LocalService
from servicetools.service.core import hosted
from servicetools.service.core.hosted import DownloadError, download
from servicetools.service.settings import Settings

from ..support.helpers import Api, make_invoice_pdf, raw_trigger

SYNC, ASYNC = "/extraction/trigger_sync", "/extraction/trigger_async"
STATUS, UPDATE = "/extraction/status/list", "/extraction/result/update"


def check_400(resp: requests.Response, code: str = "invalid_request") -> str:
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["code"] == code
    return str(error["message"])


def hosted_trigger(url: str) -> dict[str, Any]:
    return {"configuration_name": "invoices", "input_type": "hosted", "document_host_url": url}


# -- hosted URLs that cannot be fetched are refused by the trigger -------------------------
@pytest.mark.parametrize("url", [
    "http://[::1/doc.pdf",             # urlsplit raised ValueError: a 500
    "http://example.com:99999/x.pdf",  # port out of range: "internal engine error" later
    "http://example.com:0/x.pdf",
    "http://exa mple.com/x.pdf",       # whitespace and control characters in a URL
    "http://example.com/x\r\nHost: evil.pdf",
    "http://exa\x00mple.com/x.pdf",
])
@pytest.mark.parametrize("path", [SYNC, ASYNC])
def test_a_hosted_url_that_cannot_be_fetched_is_refused_up_front(api: Api, path: str,
                                                                  url: str) -> None:
    # No request leaves the service: each of these is refused before the pipeline runs.
    assert "document_host_url" in check_400(api.post(path, hosted_trigger(url)))


# -- ids and values carry length limits, like names ----------------------------------------
def test_an_id_over_255_characters_in_a_status_request_is_refused(api: Api) -> None:
    assert "extraction_id_list" in check_400(api.post(STATUS, {"extraction_id_list": ["e" * 256]}))


@pytest.fixture(scope="module")
def saved(api: Api, invoice_pdf: bytes) -> dict[str, Any]:
    resp = api.post(SYNC, raw_trigger(invoice_pdf))
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()
    return data


def _field_update(data: dict[str, Any], value: dict[str, Any], **extra: Any) -> dict[str, Any]:
    target = next(t for t in data["extracted_targets"] if t["type"] == "field")
    return {"extraction_id": data["extraction_info"]["extraction_id"],
            "updates": [{"extracted_target_id": target["id"], "type": "field",
                         "new_extracted_values": [value]}], **extra}


@pytest.mark.parametrize(("value", "field"), [
    ({"extracted_field": "x" * 100_001}, "extracted_field"),
    ({"extracted_field": "x", "id": "i" * 256}, "id"),
])
def test_an_update_value_over_its_limit_is_refused(api: Api, saved: dict[str, Any],
                                                   value: dict[str, Any], field: str) -> None:
    assert field in check_400(api.post(UPDATE, _field_update(saved, value)))


def test_an_update_value_at_its_limit_is_stored(api: Api, saved: dict[str, Any]) -> None:
    resp = api.post(UPDATE, _field_update(saved, {"extracted_field": "x" * 100_000}))
    assert resp.status_code == 200, resp.text


def test_an_update_of_an_extraction_id_over_255_characters_is_refused(
    api: Api, saved: dict[str, Any],
) -> None:
    body = _field_update(saved, {"extracted_field": "x"})
    body["extraction_id"] = "e" * 256
    assert "extraction_id" in check_400(api.post(UPDATE, body))


# -- invalid UTF-8 ---------------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    b'{"extraction_id_list": ["\xff"]}',              # not UTF-8 at all
    b'{"extraction_id_list": ["\xed\xa0\x80"]}',      # a surrogate written as UTF-8 bytes
    b'\xef\xbb\xbf{"extraction_id_list": ["a"]}',     # a UTF-8 byte order mark
])
def test_a_body_that_is_not_plain_utf8_is_refused(api: Api, data: bytes) -> None:
    check_400(api.post_raw(STATUS, data), "invalid_json")


# -- a lone surrogate is refused before anything is stored ---------------------------------
@pytest.mark.integration
def test_a_lone_surrogate_leaves_nothing_behind(other_api: Api, invoice_pdf: bytes) -> None:
    # The raw trigger used to run the extraction and store the document and the data,
    # and only then fail to encode its answer: the caller got a 500 for a saved result.
    before = other_api.get("/vault/list").json()["documents"]
    body = json.dumps(raw_trigger(invoice_pdf, extraction_name="bad \ud800 name"))
    check_400(other_api.post_raw(SYNC, body.encode()), "invalid_json")
    assert other_api.get("/vault/list").json()["documents"] == before


# -- 405 -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", SYNC, "POST"),
    ("PUT", STATUS, "POST"),
    ("POST", "/vault/list", "GET"),
    ("DELETE", "/extraction/result/get/x", "GET"),
])
def test_every_405_carries_allow(api: Api, method: str, path: str, allowed: str) -> None:
    resp = requests.request(method, api.base_url + "/service/api" + path,
                            headers={"X-Api": api.token or ""}, timeout=30)
    assert resp.status_code == 405
    assert allowed in resp.headers["Allow"].split(", ")
    assert resp.json()["error"]["code"] == "method_not_allowed"


# -- document names ------------------------------------------------------------------------
def test_a_document_name_the_service_makes_is_at_most_255_characters(
    api: Api, invoice_pdf: bytes,
) -> None:
    # A raw trigger stores its document under the extraction name plus an extension.
    data = api.post(SYNC, raw_trigger(invoice_pdf, extraction_name="n" * 255)).json()
    record = api.get(f"/vault/info/{data['extracted_document_storage_id']}").json()
    assert len(record["document_name"]) <= 255
    assert record["document_name"].endswith(".pdf")


def _filename(resp: requests.Response) -> str:
    """The file name as RFC 6266 has a client read it: ``filename*`` before ``filename``."""
    header = resp.headers["Content-Disposition"]
    assert "\r" not in header and "\n" not in header
    extended = re.search(r"filename\*=UTF-8''([^;\s]+)", header)
    if extended:
        return unquote(extended.group(1), errors="strict")
    plain = re.search(r'filename="([^"\\]*)"', header)
    assert plain, header
    return plain.group(1)


# Quotes are left out: requests (urllib3) sends a " in an upload's file name as %22.
@pytest.mark.parametrize("name", ["Rechnung März; 2024.pdf", "naïve,%20 it's.pdf",
                                  "it\u00b4s (1).pdf", "plain.pdf", "日本語.pdf"])
def test_content_disposition_gives_the_exact_name(api: Api, invoice_pdf: bytes,
                                                  name: str) -> None:
    document_id = api.upload(invoice_pdf, name).json()["document_id"]
    resp = api.get(f"/vault/get/{document_id}")
    assert resp.status_code == 200
    assert _filename(resp) == name
    # The plain filename is printable ASCII with no quote, backslash or percent in it.
    plain = re.search(r'filename="([^"]*)"', resp.headers["Content-Disposition"])
    assert plain and all(" " <= ch <= "~" and ch not in "\\%" for ch in plain.group(1))


@pytest.mark.integration
def test_a_long_name_stored_before_the_limit_still_downloads(tmp_path: Path) -> None:
    # Names had no length limit, and a name made by the service (an extraction's, a
    # hosted URL's) still need not keep to the upload's: the header is made safe at
    # download whatever the database holds. HTTP clients refuse header lines of 64 KiB.
    svc = LocalService(tmp_path / "data", workers=1)
    svc.start()
    try:
        api = Api(svc.base_url, svc.token)
        pdf = make_invoice_pdf()
        document_id = api.upload(pdf, "short.pdf").json()["document_id"]
        long_name = "é" * 100_000 + "\r\nX-Injected: 1\r\n" + "n" * 100_000 + ".pdf"
        with sqlite3.connect(svc.data_dir / "service.sqlite3") as db:
            db.execute("UPDATE documents SET document_name = ? WHERE document_id = ?",
                       (long_name, document_id))
        resp = api.get(f"/vault/get/{document_id}")
        assert resp.status_code == 200
        assert resp.content == pdf
        assert "X-Injected" not in resp.headers
        assert len(resp.headers["Content-Disposition"]) < 4096
        name = _filename(resp)
        assert name.endswith(".pdf") and len(name) <= 255
    finally:
        svc.stop()


# -- the vault: no existence oracle across users -------------------------------------------
def _copies(data_dir: Path, data: bytes) -> list[Path]:
    """The vault's files that hold exactly ``data``."""
    return [p for p in (data_dir / "vault").rglob("*")
            if p.is_file() and p.stat().st_size == len(data) and p.read_bytes() == data]


def test_an_upload_never_finds_another_users_bytes(service: LocalService, api: Api,
                                                   other_api: Api) -> None:
    # The vault used to keep each content once for everyone: an upload of bytes anyone
    # had stored skipped the write and the fsync and answered measurably faster, which
    # told a user whether somebody else held a given document. Timing thresholds are no
    # test on a shared machine, so this checks the mechanism instead: the second user's
    # upload of the same bytes writes a file of its own, exactly as for new bytes.
    pdf = make_invoice_pdf(number=f"INV-{uuid.uuid4().hex[:12]}")  # bytes nobody has
    mine = api.upload(pdf, "a.pdf").json()["document_id"]
    assert len(_copies(service.data_dir, pdf)) == 1
    theirs = other_api.upload(pdf, "b.pdf").json()["document_id"]
    assert len(_copies(service.data_dir, pdf)) == 2
    # A user's own bytes are still stored once, whichever way they arrive.
    assert api.upload(pdf, "again.pdf").status_code == 200
    assert api.post(SYNC, raw_trigger(pdf)).status_code == 200
    assert len(_copies(service.data_dir, pdf)) == 2
    assert api.get(f"/vault/get/{mine}").content == pdf
    assert other_api.get(f"/vault/get/{theirs}").content == pdf


# -- the JSON depth limit is a setting -------------------------------------------------------
@pytest.fixture()
def shallow_service(tmp_path: Path) -> Iterator[Api]:
    """The service built with ``max_json_depth=3``, served over loopback in this process
    (a setting `LocalService` has no option for). Without the lifespan no engine worker
    starts: the requests below never reach the pipeline."""
    import socket
    import time

    import uvicorn

    from servicetools.service.app import create_app

    app = create_app(Settings(data_dir=tmp_path, workers=1, max_json_depth=3,
                              dev_token="shallow-token"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off",
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield Api(f"http://127.0.0.1:{port}", "shallow-token")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.state.parts.pipeline.shutdown()


def test_the_json_depth_limit_is_the_setting(shallow_service: Api) -> None:
    # Three levels: the object, its list, a list in it; a fourth is refused as too deep.
    at_limit = shallow_service.post(STATUS, {"extraction_id_list": [["x"]]})
    assert "is not of type 'string'" in check_400(at_limit)
    too_deep = shallow_service.post(STATUS, {"extraction_id_list": [[["x"]]]})
    assert "more than 3 levels" in check_400(too_deep, "invalid_json")


# -- hosted redirects ----------------------------------------------------------------------
class _Redirects(BaseHTTPRequestHandler):
    """/bad redirects to a URL nobody can read, /spaced to a path with a raw space."""

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        if self.path in ("/bad", "/spaced"):
            self.send_response(302)
            self.send_header("Location", "http://[::1/x.pdf" if self.path == "/bad"
                             else "/a b.pdf")
            self.end_headers()
            return
        body = b"%PDF-1.4 " + self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def redirects() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirects)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_to_a_malformed_url_is_a_download_error(redirects: str,
                                                           tmp_path: Path) -> None:
    # It was a ValueError out of urljoin: "internal engine error" in the status message.
    settings = Settings(data_dir=tmp_path, allow_private_hosts=True)  # loopback server
    with pytest.raises(DownloadError, match="redirected to a malformed URL"):
        download(redirects + "/bad", settings)
    # A raw space in Location is quoted, as requests does, not refused like a given URL.
    data, name = download(redirects + "/spaced", settings)
    assert data == b"%PDF-1.4 /a%20b.pdf" and name == "a%20b.pdf"


# -- hosted addresses: the refused ones are in test_hosted_addresses.py ----------------------
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8",
          "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", PUBLIC)
def test_a_global_address_is_public(address: str) -> None:
    # The same judgement, for addresses a download may go to (nothing is fetched here).
    assert hosted._non_public(address) is None
