"""D14: download a hosted document, refusing private addresses unless allowed.

Every hop of a redirect is checked, because a public URL may redirect to loopback.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urljoin, urlsplit

import requests

from .settings import Settings


class DownloadError(Exception):
    """The document could not be fetched; the message is the pipeline's error message."""


def check_url(url: str) -> None:
    """The rules that do not need the network: scheme and host present."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise DownloadError(f"only http and https URLs can be fetched, not {parts.scheme or url!r}")
    if not parts.hostname:
        raise DownloadError(f"the URL {url!r} has no host")


def _refused_address(host: str, port: int) -> str | None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise DownloadError(f"cannot resolve host {host!r}: {exc}") from exc
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
            addr = addr.ipv4_mapped
        if (addr.is_loopback or addr.is_private or addr.is_link_local or addr.is_multicast
                or addr.is_reserved or addr.is_unspecified):
            return str(addr)
    return None


def download(url: str, settings: Settings) -> tuple[bytes, str]:
    """Fetch ``url``; return the bytes and a file name taken from the final URL's path."""
    session = requests.Session()
    session.trust_env = False  # a proxy from the environment would bypass the address guard
    current = url
    # requests' timeout bounds each socket wait, not the whole download (D14: 15 s in all).
    deadline = time.monotonic() + settings.hosted_timeout
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
        with resp:
            if resp.is_redirect:
                current = urljoin(current, resp.headers.get("location", ""))
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
