"""The client's own session: the environment's proxies, CA bundle and .netrc, read once
for the service's URL as requests would read them on each request; connections left
idle too long are not used again (a real service over loopback)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from servicetools import Client, LocalService
from servicetools.client.connections import KEEPALIVE_EXPIRY, ExpiringAdapter
from servicetools.wire.protocol import AUTH_HEADER


def test_proxies_and_ca_bundle_of_the_environment_are_kept(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/bundle.pem")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = Client(base_url="http://service.example:8000", api_key="k")
    url = client.base_url + "/service/api/vault/list"
    assert client.session.trust_env is False  # not read again on every request
    assert requests.utils.select_proxy(url, client.session.proxies) == (
        "http://proxy.example:3128")
    assert client.session.verify == "/etc/ssl/certs/bundle.pem"


def test_no_proxy_for_the_service_s_host_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "service.example")
    client = Client(base_url="http://service.example:8000", api_key="k")
    url = client.base_url + "/service/api/vault/list"
    assert requests.utils.select_proxy(url, client.session.proxies) is None


def test_netrc_credentials_for_the_service_s_host_are_kept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine service.example login me password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert Client(base_url="http://service.example:8000", api_key="k").session.auth == (
        "me", "secret")
    assert Client(base_url="http://other.example", api_key="k").session.auth is None


def test_a_given_session_is_used_as_it_is() -> None:
    session = requests.Session()
    assert Client(base_url="http://service.example", api_key="k",
                  session=session).session.trust_env is True


def test_a_connection_idle_too_long_is_not_used_again(service: LocalService) -> None:
    # A server closes an idle keep-alive connection after its own time (uvicorn: 5 s);
    # a trigger sent on it as it closes would fail without reaching the service and is
    # not retried. The client's pools hand out a new connection instead.
    client = Client(base_url=service.base_url, api_key=service.token)
    url = client.base_url + "/service/api/vault/list"
    assert isinstance(client.session.get_adapter(url), ExpiringAdapter)
    session = requests.Session()
    adapter = ExpiringAdapter(expiry=0.3)
    session.mount(service.base_url, adapter)
    headers = {AUTH_HEADER: service.token}
    pools = adapter.poolmanager.pools
    opened = []
    for pause in (0.0, 0.0, 0.6, 0.0):
        time.sleep(pause)
        assert session.get(url, headers=headers, timeout=10).status_code == 200
        opened.append(sum(pools[key].num_connections for key in pools.keys()))
    # One connection, used again at once; after the pause, a new one, then used again.
    assert opened == [1, 1, 2, 2]
    assert KEEPALIVE_EXPIRY < 5.0  # under uvicorn's keep-alive, which runs the service
