"""Connections a client keeps open to its service, and for how long when idle.

A server closes a keep-alive connection that stayed idle for its own time (uvicorn, which
runs the embedded service: 5 s). A request sent on such a connection just as the server
closes it fails with "connection aborted" before the server read it; urllib3 finds a
connection the server closed only once the close has arrived. Idempotent calls are
retried, but a trigger, an update or an upload is not (it may have reached the service),
so a notebook that triggers again after a pause of about the server's time gets an error
for nothing. As httpx does (its ``keepalive_expiry``), the client drops a connection left
idle for `KEEPALIVE_EXPIRY` seconds, less than most servers keep one, and opens a new one.
"""

from __future__ import annotations

import time
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["ExpiringAdapter", "KEEPALIVE_EXPIRY"]

#: Seconds a connection may stay idle and still be used again.
KEEPALIVE_EXPIRY = 4.0


class _Expiring:
    """Stamps a connection as it goes back to the pool; one idle for longer than
    ``expiry`` seconds is closed as it comes out, and a new one made in its place."""

    expiry = KEEPALIVE_EXPIRY

    def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            conn.servicetools_idle_since = time.monotonic()
        super()._put_conn(conn)  # type: ignore[misc]

    def _get_conn(self, timeout: float | None = None) -> Any:
        conn = super()._get_conn(timeout)  # type: ignore[misc]
        since = getattr(conn, "servicetools_idle_since", None)
        if since is not None and time.monotonic() - since > self.expiry:
            conn.close()
            return self._new_conn()  # type: ignore[attr-defined]
        return conn


class _ExpiringHTTPPool(_Expiring, HTTPConnectionPool):
    pass


class _ExpiringHTTPSPool(_Expiring, HTTPSConnectionPool):
    pass


class ExpiringAdapter(HTTPAdapter):
    """requests' adapter whose pools drop connections idle for ``expiry`` seconds."""

    def __init__(self, *args: Any, expiry: float = KEEPALIVE_EXPIRY, **kwargs: Any) -> None:
        self.expiry = expiry  # before HTTPAdapter's __init__ makes the pools
        super().__init__(*args, **kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        # An adapter restored from a pickle has no expiry of its own (requests pickles
        # only its own attributes): the default then.
        expiry = getattr(self, "expiry", KEEPALIVE_EXPIRY)
        self.poolmanager.pool_classes_by_scheme = {
            scheme: type(pool.__name__, (pool,), {"expiry": expiry})
            for scheme, pool in (("http", _ExpiringHTTPPool), ("https", _ExpiringHTTPSPool))}
