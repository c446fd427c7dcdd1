"""The service's stores and vaults as the tests name them, and a store opened on a running
service's own rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from servicetools import LocalService

if TYPE_CHECKING:
    from servicetools.service.core.store import Storage

__all__ = ["S3_PREFIX", "STORES", "VAULTS", "store_of"]

#: Where a service keeps its rows: SQLite files (the embedded default) or PostgreSQL.
STORES = ["sqlite", "postgresql"]
#: Where a service keeps its documents (`backend_api`): the embedded folder, and S3
#: (SeaweedFS on loopback, `s3_server`).
VAULTS = ["folder", "s3"]
#: Where the S3-backed service keeps its documents in the bucket.
S3_PREFIX = "service/vault"


def store_of(service: LocalService) -> Storage:
    """A store on the service's own rows, wherever it keeps them."""
    # Here, not at the top: the root conftest imports this module in the thin install too,
    # which has no service extra.
    from servicetools.service.core.backends import open_store
    from servicetools.service.settings import Settings

    return open_store(Settings(data_dir=service.data_dir, database_url=service.database),
                      migrate=False)
