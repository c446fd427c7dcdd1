"""The vault in S3 (issue 15): a real S3 server (SeaweedFS on loopback), no stand-ins.

The backend alone: object names, the conditional put (a retry never writes twice), an
upload cut off mid-body (no object, not half of one). The service on it: documents land
in the bucket per owner and content, an unreachable store is a 503 (never a 500) that
stores nothing, and ``servicetools serve`` refuses a bucket it cannot use with a
readable message and exit code 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servicetools import LocalService
from servicetools.service.core.vault import object_key, open_objects
from servicetools.service.core.vault_objects import StorageError
from servicetools.service.core.vault_s3 import S3Objects
from servicetools.service.settings import Settings

from ..support.cutproxy import CutProxy
from ..support.helpers import Api, raw_trigger
from ..support.s3server import S3Server
from ..support.stores import S3_PREFIX


@pytest.fixture
def aws_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test server's credentials where boto3 looks for them (the backend reads the
    standard variables, as it does in the service)."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def proxy(s3_server: S3Server) -> Iterator[CutProxy]:
    cut = CutProxy(s3_server.ports["s3"])
    yield cut
    cut.close()


def names(server: S3Server, prefix: str) -> list[str]:
    listed = server.client().list_objects_v2(Bucket=server.bucket, Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []))


# -- the backend ----------------------------------------------------------------------------
def test_settings_choose_the_backend(s3_server: S3Server, aws_env: None, tmp_path: Path
                                     ) -> None:
    folder = open_objects(Settings(data_dir=tmp_path))
    assert type(folder).__name__ == "FolderObjects"
    s3 = open_objects(Settings(data_dir=tmp_path, vault_url=f"s3://{s3_server.bucket}/a/b/",
                               s3_endpoint=s3_server.endpoint))
    assert isinstance(s3, S3Objects) and (s3.bucket, s3.prefix) == (s3_server.bucket, "a/b/")
    for bad in ("s3://", "http://bucket/x", "bucket/prefix", "s3://bucket/x?y=1"):
        with pytest.raises(StorageError, match="s3://BUCKET/PREFIX"):
            open_objects(Settings(data_dir=tmp_path, vault_url=bad))


def test_objects_are_named_by_key_and_never_written_twice(s3_server: S3Server, aws_env: None
                                                          ) -> None:
    objects = S3Objects(s3_server.bucket, "unit/names/", endpoint=s3_server.endpoint)
    objects.check()
    key = object_key("owner", b"first bytes")
    assert not objects.exists(key)
    objects.put(key, b"first bytes")
    assert objects.exists(key) and objects.get(key) == b"first bytes"
    assert names(s3_server, "unit/names/") == [f"unit/names/{key[:2]}/{key}"]
    # A retry (here with other bytes, which no real caller sends under this key) is a
    # success that leaves the stored object as it was: the put is conditional.
    objects.put(key, b"other bytes")
    assert objects.get(key) == b"first bytes"
    assert names(s3_server, "unit/names/") == [f"unit/names/{key[:2]}/{key}"]
    assert not objects.exists(object_key("owner", b"never stored"))
    with pytest.raises(StorageError, match="no such object"):
        objects.get(object_key("owner", b"never stored"))


def test_an_upload_cut_off_mid_body_leaves_no_object(s3_server: S3Server, aws_env: None,
                                                     proxy: CutProxy) -> None:
    data = os.urandom(300_000)
    key = object_key("owner", data)
    through_proxy = S3Objects(s3_server.bucket, "unit/cut/", endpoint=proxy.endpoint)
    proxy.set_mode("cut")
    with pytest.raises(StorageError, match="unit/cut/"):
        through_proxy.put(key, data)
    assert proxy.cuts >= 1  # every attempt (botocore retries) was cut halfway
    direct = S3Objects(s3_server.bucket, "unit/cut/", endpoint=s3_server.endpoint)
    assert not direct.exists(key)
    assert names(s3_server, "unit/cut/") == []
    # Nothing half-written stands in the way of the retry that gets through.
    proxy.set_mode("pass")
    through_proxy.put(key, data)
    assert direct.get(key) == data


@pytest.mark.parametrize("problem", ["no bucket", "wrong secret", "no server"])
def test_check_says_why_the_bucket_cannot_be_used(s3_server: S3Server, aws_env: None,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  problem: str) -> None:
    bucket, endpoint, reason = s3_server.bucket, s3_server.endpoint, ""
    if problem == "no bucket":
        bucket, reason = "no-such-bucket", "there is no such bucket"
    elif problem == "wrong secret":
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
        reason = "access denied"
    else:
        endpoint, reason = f"http://127.0.0.1:{closed_port()}", "Could not connect"
    with pytest.raises(StorageError) as err:
        S3Objects(bucket, "", endpoint=endpoint).check()
    assert f"bucket {bucket!r} at {endpoint}" in str(err.value) and reason in str(err.value)


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- the service on it ----------------------------------------------------------------------
def test_documents_land_in_the_bucket_per_owner_and_content(
        s3_server: S3Server, s3_api: Api, s3_other_api: Api, invoice_pdf: bytes) -> None:
    data = invoice_pdf + b"\n% bucket test\n"  # bytes no other test uploads
    first = s3_api.upload(data, "a.pdf").json()
    again = s3_api.upload(data, "b.pdf").json()
    theirs = s3_other_api.upload(data, "c.pdf").json()
    assert len({first["document_id"], again["document_id"], theirs["document_id"]}) == 3
    mine = object_key(first["owner_id"], data)
    other = object_key(theirs["owner_id"], data)
    stored = set(names(s3_server, f"{S3_PREFIX}/"))
    # One object per owner and content: the second upload wrote nothing.
    assert {f"{S3_PREFIX}/{mine[:2]}/{mine}", f"{S3_PREFIX}/{other[:2]}/{other}"} <= stored
    for api, record in ((s3_api, again), (s3_other_api, theirs)):
        assert api.get(f"/vault/get/{record['document_id']}").content == data


@pytest.fixture(scope="module")
def proxied_service(s3_server: S3Server) -> Iterator[tuple[LocalService, CutProxy]]:
    """A service whose way to the bucket goes through a `CutProxy` the test controls."""
    proxy = CutProxy(s3_server.ports["s3"])
    svc = LocalService(vault=f"s3://{s3_server.bucket}/proxied", s3_endpoint=proxy.endpoint,
                       env=s3_server.env, workers=1)
    with svc:
        yield svc, proxy
    proxy.close()


@pytest.mark.parametrize("mode", ["cut", "refuse"])
def test_an_unreachable_store_is_a_503_that_stores_nothing(
        s3_server: S3Server, proxied_service: tuple[LocalService, CutProxy], invoice_pdf: bytes,
        mode: str) -> None:
    svc, proxy = proxied_service
    api = Api(svc.base_url, svc.token)
    proxy.set_mode("pass")
    kept = api.upload(invoice_pdf, "kept.pdf").json()
    before = api.get("/vault/list").json()["documents"]
    objects_before = names(s3_server, "proxied/")
    proxy.set_mode(mode)
    data = invoice_pdf + f"\n% {mode}\n".encode()
    for resp in (api.upload(data, "lost.pdf"),
                 api.post("/extraction/trigger_sync", raw_trigger(data)),
                 api.post("/extraction/trigger_async", raw_trigger(data)),
                 api.get(f"/vault/get/{kept['document_id']}")):
        assert resp.status_code == 503, resp.text
        error = resp.json()["error"]
        assert error["code"] == "storage_unavailable" and "retry" in error["message"]
    # Neither half an object nor a record pointing at none.
    assert names(s3_server, "proxied/") == objects_before
    assert api.get("/vault/list").json()["documents"] == before
    proxy.set_mode("pass")
    assert api.get(f"/vault/get/{kept['document_id']}").content == invoice_pdf


# -- servicetools serve ---------------------------------------------------------------------
# (A vault URL that is no s3:// URL is refused by the same path: see the settings test.)
@pytest.mark.parametrize("problem", ["no bucket", "no server"])
def test_serve_refuses_a_vault_it_cannot_use(s3_server: S3Server, tmp_path: Path,
                                             problem: str) -> None:
    vault, endpoint = "s3://no-such-bucket/docs", s3_server.endpoint
    expected = "'no-such-bucket'"
    if problem == "no server":
        vault, endpoint = f"s3://{s3_server.bucket}/docs", f"http://127.0.0.1:{closed_port()}"
        expected = endpoint
    out = subprocess.run(
        [sys.executable, "-m", "servicetools", "serve", "--port", str(closed_port()),
         "--data-dir", str(tmp_path), "--vault", vault, "--s3-endpoint", endpoint],
        capture_output=True, text=True, timeout=120, env={**os.environ, **s3_server.env})
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("servicetools serve: ") and expected in out.stderr
    assert "Traceback" not in out.stderr
