"""The client's own session: the environment's proxies, CA bundle and .netrc, read once
for the service's URL as requests would read them on each request."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from servicetools import Client


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
