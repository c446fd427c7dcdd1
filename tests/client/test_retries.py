"""Retries: idempotent calls retry 502/503/504 and dropped connections; triggers never do."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from urllib3.util.retry import Retry

from servicetools import (
    Client,
    InvalidResponse,
    RequestTimeout,
    ServerError,
    ServiceUnreachable,
    VaultDocument,
)

from ..support.flaky_server import FlakyServer, StatusRequests


@pytest.fixture
def server() -> Iterator[FlakyServer]:
    srv = FlakyServer()
    yield srv
    srv.close()


def client_for(server: FlakyServer, **options: object) -> Client:
    return Client(base_url=server.base_url, api_key="k", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("failure", [503, 502, 504, "drop"])
def test_get_retries_then_succeeds(server: FlakyServer, failure: object) -> None:
    server.script = [failure, failure]
    assert client_for(server).vault.list() == []
    assert server.count("/vault/list") == 3


@pytest.mark.parametrize("failure", [503, "drop"])
def test_status_list_is_retried_though_a_post(server: FlakyServer, failure: object) -> None:
    server.script = [failure, failure]
    statuses = client_for(server).get_statuses(["a", "b"])
    assert set(statuses) == {"a", "b"}
    assert server.count("/extraction/status/list") == 3


def test_retries_are_bounded(server: FlakyServer) -> None:
    server.script = [503] * 10
    with pytest.raises(ServerError) as info:
        client_for(server, retries=2).vault.info("d1")
    assert server.count("/vault/info/d1") == 3  # the first try and two retries
    assert info.value.status == 503
    assert "Try again later." in str(info.value)


def test_no_retries_when_asked(server: FlakyServer) -> None:
    server.script = [503]
    with pytest.raises(ServerError):
        client_for(server, retries=0).get_result("e1")
    assert server.count("/extraction/result/get/e1") == 1


def test_dropped_get_gives_up_with_the_url(server: FlakyServer) -> None:
    server.script = ["drop"] * 10
    with pytest.raises(ServiceUnreachable) as info:
        client_for(server, retries=1).list_targets("e1")
    assert server.count("/extraction/result/list/e1") == 2
    assert info.value.url == f"{server.base_url}/service/api/extraction/result/list/e1"
    assert info.value.method == "GET"


@pytest.mark.parametrize("failure", [503, 502, "drop"])
def test_triggers_are_never_retried(server: FlakyServer, failure: object) -> None:
    client = client_for(server)
    for call in (
        lambda: client.trigger_async(b"%PDF-1.4 x", configuration_name="invoices"),
        lambda: client.trigger_sync(VaultDocument("d1"), configuration_name="invoices"),
    ):
        server.script = [failure] * 3
        before = len(server.seen)
        with pytest.raises((ServerError, ServiceUnreachable)) as info:
            call()
        assert len(server.seen) == before + 1
        if failure == "drop":
            assert "not retried" in str(info.value)


@pytest.mark.parametrize("failure", [503, "drop"])
def test_updates_and_uploads_are_never_retried(server: FlakyServer, failure: object) -> None:
    client = client_for(server)
    server.script = [failure] * 3
    with pytest.raises((ServerError, ServiceUnreachable)):
        client.update_results("e1", [])
    server.script = [failure] * 3
    with pytest.raises((ServerError, ServiceUnreachable)):
        client.vault.upload(b"%PDF-1.4 x")
    assert server.count("/extraction/result/update") == 1
    assert server.count("/vault/upload") == 1


def test_trigger_answer_keeps_unknown_fields(server: FlakyServer) -> None:
    info = client_for(server).trigger_async(b"%PDF-1.4 x", configuration_name="invoices")
    assert info == {"extraction_id": "e-1", "extra_field": "kept"}


def test_refused_connection_names_the_url() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = Client(base_url=f"http://127.0.0.1:{port}", api_key="k", retries=1)
    with pytest.raises(ServiceUnreachable) as info:
        client.vault.list()
    assert f"127.0.0.1:{port}/service/api/vault/list" in str(info.value)
    assert "refused" in str(info.value).lower()


def test_read_timeout(server: FlakyServer) -> None:
    server.slow_seconds = 0.6
    server.script = ["slow"]
    client = client_for(server, timeout=(2.0, 0.2), retries=0)
    with pytest.raises(RequestTimeout) as info:
        client.trigger_async(b"%PDF-1.4 x", configuration_name="invoices")
    assert info.value.url.endswith("/extraction/trigger_async")


def test_read_timeout_of_idempotent_call_is_retried(server: FlakyServer) -> None:
    server.slow_seconds = 0.6
    server.script = ["slow"]
    statuses = client_for(server, timeout=(2.0, 0.2)).get_statuses(["a"])
    assert statuses["a"]["status_type"] == "ended"
    assert server.count("/extraction/status/list") == 2


def test_html_answers_give_readable_errors(server: FlakyServer) -> None:
    server.script = ["html502"] * 2
    with pytest.raises(ServerError) as info:
        client_for(server, retries=1).vault.list()
    assert info.value.status == 502 and info.value.code is None
    assert "502 Bad Gateway" in str(info.value)
    server.script = ["html"]
    with pytest.raises(InvalidResponse, match="Welcome to the proxy"):
        client_for(server).vault.list()


def test_get_statuses_chunks_by_1000(server: FlakyServer) -> None:
    client = client_for(server)
    counter = StatusRequests(client.session)
    ids = [f"e{i}" for i in range(2500)]
    assert list(client.get_statuses(ids)) == ids
    assert [len(call) for call, _ in counter.calls] == [1000, 1000, 500]


def test_wait_chunks_against_loopback(server: FlakyServer) -> None:
    client = client_for(server)
    counter = StatusRequests(client.session)
    ids = [f"e{i}" for i in range(2500)]
    statuses = client.wait(ids, progress=False)
    assert list(statuses) == ids
    assert counter.rounds(ids, 1000) == [[ids[:1000], ids[1000:2000], ids[2000:]]]


def test_a_retry_policy_of_ones_own(server: FlakyServer) -> None:
    policy = Retry(total=4, status_forcelist=[500], allowed_methods=None,
                   raise_on_status=False)
    client = client_for(server, retries=policy)
    server.script = [500, 500]
    assert client.vault.list() == []
    assert server.count("/vault/list") == 3
    server.script = [500, 500]
    with pytest.raises(ServerError):
        client.trigger_async(b"%PDF-1.4 x", configuration_name="invoices")
    assert server.count("/extraction/trigger_async") == 1
