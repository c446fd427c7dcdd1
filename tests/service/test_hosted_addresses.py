"""D14: which addresses a hosted URL may be fetched from, decided by ``is_global``.

No network here: the address check is a function of the address alone. Only globally
reachable addresses pass; the shared address space 100.64.0.0/10 (carrier-grade NAT,
cloud-internal services) used to pass as "not private".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from servicetools.service.core.hosted import DownloadError, download
from servicetools.service.settings import Settings

REFUSED = ["100.64.0.1", "100.127.255.254", "10.0.0.1", "127.0.0.1", "169.254.169.254",
           "198.18.0.1", "0.0.0.0", "224.0.0.1", "::1", "fd00::1", "::ffff:127.0.0.1",
           "2002:7f00:1::1", "fe80::1",
           # Not global by the IANA registries, though Python 3.11.7's is_global says
           # they are; the NAT64 ones (64:ff9b::/96) reach the IPv4 address in their
           # last 32 bits.
           "192.0.0.8", "64:ff9b:1::1", "3fff::1", "5f00::1", "::7f00:1",
           "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"]


@pytest.mark.parametrize("address", REFUSED)
def test_a_url_at_a_non_global_address_is_refused_before_connecting(
    address: str, tmp_path: Path,
) -> None:
    host = f"[{address}]" if ":" in address else address
    settings = Settings(data_dir=tmp_path)
    with pytest.raises(DownloadError, match="non-public address"):
        download(f"http://{host}:9/doc.pdf", settings)
