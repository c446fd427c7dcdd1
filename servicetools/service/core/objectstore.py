"""Where the vault keeps document bytes: a key (`vault.object_key`) to the bytes it names.

Two backends, chosen by ``Settings.vault_url`` (`open_objects`):

- `FolderObjects`, the embedded default: files under ``<data_dir>/vault``; needs nothing.
- `S3Objects <.s3.S3Objects>` for ``s3://BUCKET/PREFIX``: S3-compatible object storage,
  so several service processes on several machines share one vault (the ``scale`` extra).

A key names its bytes (it is a hash of them), so `put` of a key that is stored already
is a success that writes nothing: a retried upload never duplicates a document.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from ..settings import Settings

__all__ = ["FolderObjects", "Objects", "StorageError", "open_objects", "parse_vault_url"]


class StorageError(RuntimeError):
    """The vault's storage cannot be used (bucket unreachable, refused, misnamed)."""


class Objects(Protocol):
    """What `Vault <.vault.Vault>` needs of a backend."""

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, all or nothing; a stored key is left as it is."""

    def get(self, key: str) -> bytes:
        """The bytes stored under ``key`` (`StorageError` if there are none)."""

    def exists(self, key: str) -> bool:
        """Whether ``key`` is stored, whole."""

    def check(self) -> None:
        """Raise `StorageError`, with a readable reason, unless the storage can be used."""


class FolderObjects:
    """Files at ``root/<key[:2]>/<key>``, written beside the target and renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def put(self, key: str, data: bytes) -> None:
        target = self.path(key)
        if target.exists():
            return  # stored before: the key names these bytes
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename: a reader never sees half a file, and a
        # crash leaves at worst a stray temporary file, never a truncated document.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except FileNotFoundError as exc:
            raise StorageError(f"the vault has no file {key}") from exc

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def check(self) -> None:
        if not os.access(self.root, os.W_OK):
            raise StorageError(f"the vault folder {self.root} is not writable")


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
    from .s3 import S3Objects

    return S3Objects(bucket, prefix, endpoint=settings.s3_endpoint)
