"""Vault documents: records in the store, bytes in an object store, addressed by owner and
content; and the choice of that object store from the settings (`open_objects`).

Records (owner, name, type, pages) live in the store; the bytes live in the object store
``Settings.vault_url`` names (a folder, vault_folder.py, or S3, vault_s3.py; both are
`Objects <.vault_objects.Objects>`) under a key that is the SHA-256 of the
owner and the bytes (`object_key`): the same document uploaded twice by one user is
stored once, but never shared between users (see `object_key` for why). Files stored
before that, under the content's SHA-256 alone, are still read: the store keeps each
record's key.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

from ..settings import Settings
from .documents import inspect_document
from .records import new_id
from .store import Storage
from .vault_folder import FolderObjects
from .vault_objects import Objects, StorageError

__all__ = ["MAX_NAME", "Vault", "clean_name", "object_key", "open_objects", "parse_vault_url"]


class Vault:
    """Documents by owner: `add` stores one, `read` gives back its record and bytes."""

    def __init__(self, settings: Settings, store: Storage) -> None:
        self.settings = settings
        self.store = store
        self.objects: Objects = open_objects(settings)

    def add(
        self,
        owner_id: str,
        data: bytes,
        name: str,
        document_type: str,
        *,
        content_type: str | None = None,
        num_pages: int | None = None,
    ) -> dict[str, Any]:
        """Store a document for ``owner_id`` and return its record (with ``num_pages``)."""
        if content_type is None or num_pages is None:
            info = inspect_document(data, self.settings)
            content_type, num_pages = info.content_type, info.num_pages
        key = object_key(owner_id, data)
        # The bytes first: a record never points at bytes that are not stored whole.
        self.objects.put(key, data)
        record = {
            "document_id": new_id(),
            "document_name": clean_name(name),
            "document_type": document_type,
            "content_type": content_type,
            "owner_id": owner_id,
            "upload_unix_timestamp": time.time(),
            "num_pages": num_pages,
        }
        self.store.add_document(record, size=len(data), key=key)
        return record

    def read(self, owner_id: str, document_id: str) -> tuple[dict[str, Any], bytes] | None:
        found = self.store.document_file(owner_id, document_id)
        if found is None:
            return None
        record, key = found
        return record, self.objects.get(key)


def object_key(owner_id: str, data: bytes) -> str:
    """The name of ``owner_id``'s file of ``data``: the SHA-256 of the owner, NUL, the bytes.

    Per owner, because content addressing across users is an existence oracle: an
    upload of bytes anybody had stored skipped the write and the fsync and answered
    measurably faster, telling any user whether someone else holds a given document.
    Now an upload is only ever "found" among the uploader's own files. (Owner ids are
    hex, so the NUL leaves no doubt where the owner ends.)
    """
    digest = hashlib.sha256(owner_id.encode())
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


#: The longest document name kept (and doctype accepted): names come back in headers.
MAX_NAME = 255


def clean_name(name: str) -> str:
    """D12: the file name stripped of any path (POSIX or Windows separators), of control
    characters, and shortened to `MAX_NAME` characters, its extension kept.

    Uploads over the limit are refused before this; the names the service makes itself
    (an extraction's name plus an extension, the end of a hosted URL after redirects)
    are shortened here, so no stored name is longer.
    """
    base = PureWindowsPath(PurePosixPath(name or "").name).name
    # Control characters would break the Content-Disposition header on download.
    base = "".join(ch for ch in base if ch.isprintable()) or "document"
    if len(base) <= MAX_NAME:
        return base
    suffix = PurePosixPath(base).suffix
    suffix = suffix if len(suffix) <= 16 else ""
    return base[: MAX_NAME - len(suffix)] + suffix


def parse_vault_url(url: str) -> tuple[str, str]:
    """``s3://BUCKET/PREFIX`` as (bucket, prefix); the prefix ends with ``/`` unless empty.

    >>> parse_vault_url("s3://documents/service/vault/")
    ('documents', 'service/vault/')
    >>> parse_vault_url("s3://documents")
    ('documents', '')
    """
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise StorageError(f"the vault URL {url!r} is not of the form s3://BUCKET/PREFIX")
    prefix = parts.path.strip("/")
    return parts.netloc, f"{prefix}/" if prefix else ""


def open_objects(settings: Settings) -> Objects:
    """The backend ``settings`` name; `StorageError` for a vault URL it cannot use."""
    if settings.vault_url is None:
        return FolderObjects(settings.vault_dir)
    bucket, prefix = parse_vault_url(settings.vault_url)
    # Only here: boto3 is the `scale` extra's, and the embedded default must not need it.
    from .vault_s3 import S3Objects

    return S3Objects(bucket, prefix, endpoint=settings.s3_endpoint)
