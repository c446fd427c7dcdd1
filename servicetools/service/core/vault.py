"""Document files on disk, content-addressed, written atomically.

Records (owner, name, type, pages) live in the store; the bytes live here under
``vault/<sha[:2]>/<sha>``, so the same document uploaded twice is stored once.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..settings import Settings
from .documents import inspect_document
from .store import Store, new_id


class Vault:
    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self.root = settings.vault_dir
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def _write(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        target = self._path(sha)
        if target.exists():
            return sha
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
        return sha

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
        sha = self._write(data)
        record = {
            "document_id": new_id(),
            "document_name": clean_name(name),
            "document_type": document_type,
            "content_type": content_type,
            "owner_id": owner_id,
            "upload_unix_timestamp": time.time(),
            "num_pages": num_pages,
        }
        self.store.add_document(record, size=len(data), sha256=sha)
        return record

    def read(self, owner_id: str, document_id: str) -> tuple[dict[str, Any], bytes] | None:
        found = self.store.document_file(owner_id, document_id)
        if found is None:
            return None
        record, sha = found
        return record, self._path(sha).read_bytes()


def clean_name(name: str) -> str:
    """D12: the file name stripped of any path (POSIX or Windows separators)."""
    base = PureWindowsPath(PurePosixPath(name or "").name).name
    # Control characters would break the Content-Disposition header on download.
    base = "".join(ch for ch in base if ch.isprintable())
    return base or "document"
