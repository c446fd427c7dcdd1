"""The records every store shares: ids, the caller, the hashed key, and the wire objects
made from the stores' rows.

Both stores (SQLite, the embedded default, and PostgreSQL) keep the same rows and hand
out the same objects; the routes, the vault and the result builder make ids and know
the caller. All of them import these from here, so nobody imports one backend to get a
record type, and the PostgreSQL store does not depend on the SQLite one.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["User", "document_record", "key_hash", "new_id", "status_object"]


def new_id() -> str:
    """A new id for any row or object: 32 lowercase hex digits (a random UUID)."""
    return uuid.uuid4().hex


def key_hash(token: str) -> str:
    """D2: the lowercase hex SHA-256 of the token; only this is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class User:
    """The caller, as found by the hash of their key."""

    id: str
    name: str
    key_hash: str


def status_object(row: Any) -> dict[str, Any]:
    """A status (2.8) from a row of ``statuses`` joined with its extraction's owner."""
    return {
        "id": row["id"],
        "status_type": row["status_type"],
        "message": row["message"],
        "creation_unix_timestamp": row["ts"],
        "extraction_id": row["extraction_id"],
        "trigger_user_id": row["owner_id"],
    }


def document_record(row: Any) -> dict[str, Any]:
    """A vault record (2.9) from a row of ``documents``."""
    return {
        "document_id": row["document_id"],
        "document_name": row["document_name"],
        "document_type": row["document_type"],
        "content_type": row["content_type"],
        "owner_id": row["owner_id"],
        "upload_unix_timestamp": row["upload_ts"],
        "num_pages": row["num_pages"],
    }
