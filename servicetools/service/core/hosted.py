"""D14: download a hosted document, refusing private addresses unless allowed.

Every hop of a redirect is checked, because a public URL may redirect to loopback.
Each host is checked twice: its name is resolved before any connection, for a clear
early answer, and the address a socket actually connected to is checked before a
single byte is sent, so a name that resolves to a public address for the first check
and to a private one for the connection (DNS rebinding) gets nowhere either.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.utils import requote_uri
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ..settings import Settings


class DownloadError(Exception):
    """The document could not be fetched; the message is the pipeline's error message."""


def check_url(url: str) -> None:
    """The rules that do not need the network: a well-formed http(s) URL with a host.

    Whitespace and control characters are refused outright: no URL holds them, and the
    libraries on the way quote, drop or choke on them, so what would be fetched is not
    what was checked (and a line break in a request line is header injection).
    """
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise DownloadError(f"the URL {url[:80]!r} holds whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port  # checks the port's range, so it is read here, once
    except ValueError as exc:  # a bad IPv6 literal or port: urlsplit's own complaints
        raise DownloadError(f"the URL {url[:80]!r} is malformed: {exc}") from exc
    if parts.scheme not in ("http", "https"):
        raise DownloadError(f"only http and https URLs can be fetched, not {parts.scheme or url!r}")
    if not parts.hostname:
        raise DownloadError(f"the URL {url!r} has no host")
    if port == 0:
        raise DownloadError(f"the URL {url[:80]!r} names port 0, which nothing listens on")


def _refused_address(host: str, port: int) -> str | None:
    """The first non-public address ``host`` resolves to, or None if all are public."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise DownloadError(f"cannot resolve host {host!r}: {exc}") from exc
    for info in infos:
        refused = _non_public(str(info[4][0]))
        if refused:
            return refused
    return None


def _refused_peer(address: str, port: int) -> str | None:
    """The check of the address a socket connected to: `_non_public`.

    A name of its own, apart from `_refused_address`, so a test can fake the name
    resolution without faking this check (which is how rebinding is tested).
    """
    return _non_public(address)


#: Not globally reachable by the IANA special-purpose registries, though the
#: `ipaddress` of Pythons without the fix of gh-113171 (3.11.7 here) calls them
#: global: IETF protocol assignments (its two anycast addresses serve no documents),
#: local-use NAT64, documentation, SRv6 segment ids, and the deprecated IPv4-compatible
#: IPv6 addresses (::a.b.c.d).
_NOT_GLOBAL = tuple(ipaddress.ip_network(n) for n in (
    "192.0.0.0/24", "64:ff9b:1::/48", "3fff::/20", "5f00::/16", "::/96"))
#: The well-known NAT64 prefix: its addresses reach the IPv4 address in their last 32 bits.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _non_public(address: str) -> str | None:
    """``address`` (an IP) if it is not a public one, else None.

    Public is what the IANA special-purpose registries call globally reachable
    (`ipaddress`'s ``is_global``, with `_NOT_GLOBAL` for older Pythons), not the
    absence of a few private kinds: the shared address space 100.64.0.0/10, where cloud
    providers put internal services, is neither private nor public, and is refused like
    the rest. Multicast addresses can be "global" too, and are refused all the same.
    """
    addr = _reached(ipaddress.ip_address(address.split("%")[0]))
    if not addr.is_global or addr.is_multicast or any(addr in n for n in _NOT_GLOBAL):
        return str(addr)
    return None


def _reached(addr: ipaddress.IPv4Address | ipaddress.IPv6Address
             ) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 host an IPv6 address stands for, if it stands for one; else itself."""
    if isinstance(addr, ipaddress.IPv4Address):
        return addr
    # ::ffff:127.0.0.1, 2002:7f00:1:: (6to4) and 64:ff9b::7f00:1 (NAT64) reach IPv4 hosts.
    if addr in _NAT64:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return addr.ipv4_mapped or addr.sixtofour or addr


class _Deadline:
    """The whole download's time limit: when it is up, every socket the download opened
    is shut down, which ends a read blocked on a server that sends a byte now and then.

    requests' timeout bounds each wait for the socket, and a chunk read waits for its
    64 KiB: a server trickling a byte each half second held a worker for minutes.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _current.deadline = None

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in another thread; close does not
    except OSError:
        pass  # already closed


# The deadline of the download running in this thread (a worker runs one at a time).
_current = threading.local()


class _Watched:
    """Mixed into urllib3's connections: each new socket is put under the deadline."""

    def _new_conn(self) -> socket.socket:
        sock: socket.socket = super()._new_conn()  # type: ignore[misc]
        deadline: _Deadline | None = getattr(_current, "deadline", None)
        if deadline is not None:
            deadline.watch(sock)
        return sock


class _PeerChecked(_Watched):
    """Mixed into urllib3's connections: the connected socket's peer must be public."""

    host: str
    port: int

    def _new_conn(self) -> socket.socket:
        sock: socket.socket = super()._new_conn()
        peer, port = sock.getpeername()[:2]
        refused = _refused_peer(str(peer), int(port))
        if refused:
            sock.close()  # nothing was sent: urllib3 sends the request after this
            raise DownloadError(
                f"refused to fetch from {self.host!r}: the connection went to the "
                f"non-public address {refused} (the name resolved differently when checked)"
            )
        return sock


class _CheckedHTTPConnection(_PeerChecked, HTTPConnection):
    pass


class _CheckedHTTPSConnection(_PeerChecked, HTTPSConnection):
    pass


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


def _pool(base: type[HTTPConnectionPool], connection: type[HTTPConnection]
          ) -> type[HTTPConnectionPool]:
    return type(f"{connection.__name__}Pool", (base,), {"ConnectionCls": connection})


class _GuardedAdapter(HTTPAdapter):
    """requests' adapter whose connections are under the deadline and, unless private
    hosts are allowed, checked for a public peer."""

    def __init__(self, public_only: bool) -> None:
        self.public_only = public_only
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        plain: type[HTTPConnection]
        secure: type[HTTPSConnection]
        if self.public_only:
            plain, secure = _CheckedHTTPConnection, _CheckedHTTPSConnection
        else:
            plain, secure = _WatchedHTTPConnection, _WatchedHTTPSConnection
        self.poolmanager.pool_classes_by_scheme = {
            "http": _pool(HTTPConnectionPool, plain), "https": _pool(HTTPSConnectionPool, secure)}


def _session(settings: Settings) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # a proxy from the environment would bypass the address guard
    adapter = _GuardedAdapter(public_only=not settings.allow_private_hosts)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def download(url: str, settings: Settings) -> tuple[bytes, str]:
    """Fetch ``url`` within `settings.hosted_timeout` seconds in all (connecting, every
    redirect, headers and body); return the bytes and a file name from the final URL."""
    with _Deadline(settings.hosted_timeout) as deadline:
        try:
            return _download(url, settings, deadline)
        except DownloadError:
            if deadline.expired:
                raise DownloadError(f"downloading {url!r} took longer than "
                                    f"{settings.hosted_timeout:g} s") from None
            raise


def _download(url: str, settings: Settings, limit: _Deadline) -> tuple[bytes, str]:
    session = _session(settings)
    current = url
    deadline = time.monotonic() + limit.seconds
    for _hop in range(settings.hosted_max_redirects + 1):
        check_url(current)
        parts = urlsplit(current)
        if not settings.allow_private_hosts:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            refused = _refused_address(parts.hostname or "", port)
            if refused:
                raise DownloadError(
                    f"refused to fetch {current!r}: its host resolves to the non-public "
                    f"address {refused}"
                )
        try:
            resp = session.get(current, timeout=settings.hosted_timeout, stream=True,
                               allow_redirects=False)
        except requests.RequestException as exc:
            raise DownloadError(f"could not download {current!r}: {exc}") from exc
        except ValueError as exc:
            # Even without following it, requests reads a redirect's Location (for
            # ``resp.next``) and lets urlsplit's ValueError for a bad one through.
            raise DownloadError(f"{current!r} redirected to a malformed URL: {exc}") from exc
        with resp:
            if resp.is_redirect:
                current = _redirect_target(current, resp.headers.get("location", ""))
                continue
            if resp.status_code != 200:
                raise DownloadError(f"downloading {current!r} answered HTTP {resp.status_code}")
            chunks, size = [], 0
            try:
                for chunk in resp.iter_content(65536):
                    if time.monotonic() > deadline:
                        raise DownloadError(f"downloading {current!r} took longer than "
                                            f"{settings.hosted_timeout:g} s")
                    size += len(chunk)
                    if size > settings.max_document_bytes:
                        raise DownloadError(
                            f"the document at {current!r} is over the limit of "
                            f"{settings.max_document_bytes:,} bytes"
                        )
                    chunks.append(chunk)
            except requests.RequestException as exc:
                raise DownloadError(f"could not download {current!r}: {exc}") from exc
            name = urlsplit(current).path.rsplit("/", 1)[-1] or "document"
            return b"".join(chunks), name
    raise DownloadError(f"too many redirects (more than {settings.hosted_max_redirects})")


def _redirect_target(current: str, location: str) -> str:
    """Where a redirect leads; the next hop's `check_url` judges it like the first URL.

    Quoted as requests quotes the redirects it follows itself: servers send spaces and
    other raw characters in Location, which a URL given at trigger may not hold.
    """
    try:
        return requote_uri(urljoin(current, location))
    except ValueError as exc:  # a Location urlsplit cannot read (a bad IPv6 literal)
        raise DownloadError(f"{current!r} redirected to a malformed URL: {exc}") from exc
