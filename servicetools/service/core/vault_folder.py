"""The vault's embedded object store: document bytes as files in the data folder.

Each file is written beside its place and renamed into it, so a reader never sees half a
document and a crash leaves at worst a stray temporary file (``.tmp-*``), never a
truncated one. One machine only: a vault several machines share is in S3 (vault_s3.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .vault_objects import StorageError

__all__ = ["FolderObjects"]


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
