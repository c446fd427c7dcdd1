"""What the vault needs of the place that keeps document bytes: the `Objects` protocol,
a key (`vault.object_key`) to the bytes it names, and `StorageError`, the error of a
place that cannot be used.

Two object stores satisfy it, and `vault.open_objects` picks one by ``Settings.vault_url``:

- `FolderObjects <.vault_folder.FolderObjects>`, the embedded default: files under
  ``<data_dir>/vault``; needs nothing.
- `S3Objects <.vault_s3.S3Objects>` for ``s3://BUCKET/PREFIX``: S3-compatible object
  storage, so several service processes on several machines share one vault (the
  ``scale`` extra).

A key names its bytes (it is a hash of them), so `put` of a key that is stored already
is a success that writes nothing: a retried upload never duplicates a document. This
module imports neither object store, so both import it without a cycle.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Objects", "StorageError"]


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
