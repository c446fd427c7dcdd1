"""Documents as the client takes them, and the trigger request objects (2.1) built from them.

A document may be a path (or a ``http(s)://`` URL), bytes, ``(name, bytes)``, an open
binary file, a `VaultDocument` or a vault record. `source_of` resolves one to a
`Source` (how it travels: ``raw``, ``hosted`` or ``service``), `expand` turns the
documents of a batch (globs and folders included) into sources, and `build_request`
makes the request body.

>>> body = trigger_request(b"%PDF-1.4 x", configuration_name="invoices")
>>> body["input_type"], body["content_type"], body["document_raw_data"]
('raw', 'application/pdf', 'JVBERi0xLjQgeA==')
"""

from __future__ import annotations

import base64
import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeAlias

from ..wire.content import sniff_content_type

__all__ = [
    "Document",
    "Source",
    "VaultDocument",
    "build_request",
    "expand",
    "source_of",
    "trigger_request",
]

_DOCUMENT_SUFFIXES = frozenset({".pdf", ".png", ".jpg", ".jpeg"})
_GLOB_CHARS = re.compile(r"[*?[]")


@dataclass(frozen=True)
class VaultDocument:
    """A document already in the vault, by id: ``VaultDocument("3f2a...")``.

    A bare string is a path or URL; this marks it as a vault id. Vault records (what
    `VaultAPI.upload` and `VaultAPI.list` return) are accepted as they are.
    """

    document_id: str
    name: str = ""


#: What the trigger helpers accept as a document: a path (or a ``http(s)://`` URL), bytes,
#: ``(name, bytes)``, an open binary file, a `VaultDocument` or a vault record.
Document: TypeAlias = (
    str | os.PathLike[str] | bytes | bytearray | memoryview | tuple[str, bytes] | IO[bytes]
    | VaultDocument | Mapping[str, Any]
)


@dataclass(frozen=True)
class Source:
    """One document resolved to how it travels (``input_type``); a path is read only when sent."""

    name: str
    input_type: str  # raw | hosted | service
    path: Path | None = None
    data: bytes | None = None
    url: str | None = None
    document_id: str | None = None
    named: bool = True  # False for bare bytes: "document-3" is no name to give the service

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None
        return self.path.read_bytes()

    @property
    def file_name(self) -> str:
        """What the service may call the document: a file name, never a folder path."""
        return Path(self.name).name if self.input_type == "raw" else self.name


def source_of(document: Any, *, index: int = 0) -> Source:
    if isinstance(document, VaultDocument):
        return Source(document.name or document.document_id, "service",
                       document_id=document.document_id)
    if isinstance(document, Mapping):
        if "document_id" not in document:
            raise TypeError("a mapping as document must be a vault record with document_id")
        return Source(str(document.get("document_name") or document["document_id"]),
                       "service", document_id=str(document["document_id"]))
    if isinstance(document, (bytes, bytearray, memoryview)):
        return Source(f"document-{index + 1}", "raw", data=bytes(document), named=False)
    if (isinstance(document, tuple) and len(document) == 2 and isinstance(document[0], str)
            and isinstance(document[1], (bytes, bytearray, memoryview))):
        return Source(document[0], "raw", data=bytes(document[1]))
    if isinstance(document, str) and document.startswith(("http://", "https://")):
        return Source(document, "hosted", url=document)
    if isinstance(document, (str, os.PathLike)):
        return Source(os.fspath(document), "raw", path=Path(document))
    if hasattr(document, "read"):
        data = document.read()
        if not isinstance(data, bytes):
            raise TypeError("a file object as document must be opened in binary mode")
        name = os.path.basename(str(getattr(document, "name", "")))
        return Source(name or f"document-{index + 1}", "raw", data=data, named=bool(name))
    raise TypeError(f"cannot use {type(document).__name__} as a document: give a path, a "
                    "URL, bytes, (name, bytes), a binary file, a VaultDocument or a vault record")


def expand(documents: Any) -> list[Source]:
    """Documents of `Client.extract_many`: globs and folders become their files, in order."""
    if isinstance(documents, (str, os.PathLike, bytes, bytearray, memoryview, VaultDocument,
                              Mapping)) or (isinstance(documents, tuple) and len(documents) == 2
                                            and isinstance(documents[0], str)
                                            and isinstance(documents[1], bytes)):
        documents = [documents]
    sources: list[Source] = []
    for document in documents:
        if isinstance(document, (str, os.PathLike)) and not str(document).startswith(
                ("http://", "https://")):
            text = os.fspath(document)
            if _GLOB_CHARS.search(text) and not os.path.exists(text):
                matches = sorted(glob.glob(text, recursive=True))
                if not matches:
                    # A typo in a notebook should be loud, not an empty batch.
                    raise FileNotFoundError(f"no file matches {text!r}")
                sources += [source_of(match) for match in matches if os.path.isfile(match)]
                continue
            if os.path.isdir(text):
                files = sorted(p for p in Path(text).iterdir()
                               if p.is_file() and p.suffix.lower() in _DOCUMENT_SUFFIXES)
                if not files:
                    # As loud as a glob that matches nothing: the wrong folder, or one
                    # whose documents are in folders under it.
                    raise FileNotFoundError(
                        f"no PDF, PNG or JPEG file in the folder {text!r} (folders under it "
                        f"are not read: give a glob such as '{text}/**/*.pdf' for them)")
                sources += [Source(str(p), "raw", path=p) for p in files]
                continue
        sources.append(source_of(document, index=len(sources)))
    return sources


def trigger_request(
    document: Document,
    *,
    configuration_name: str | None = None,
    configuration_id: str | None = None,
    classifier_id: str | None = None,
    extraction_name: str | None = None,
    content_type: str | None = None,
    save_extraction: bool | None = None,
    delete_after_first_fetch: bool | None = None,
) -> dict[str, Any]:
    """Build the trigger request object (2.1) for a document; options left None are omitted.

    Bytes travel as base64 with the content type told by the bytes; the file name (of a
    path, a ``(name, bytes)`` pair or a named file object) becomes the extraction name.

    >>> body = trigger_request(b"%PDF-1.4 x", configuration_name="invoices")
    >>> body["input_type"], body["content_type"], body["document_raw_data"]
    ('raw', 'application/pdf', 'JVBERi0xLjQgeA==')
    >>> trigger_request(VaultDocument("d1"), configuration_id="c1")
    {'configuration_id': 'c1', 'input_type': 'service', 'document_storage_id': 'd1'}
    """
    return build_request(source_of(document), configuration_name=configuration_name,
                          configuration_id=configuration_id, classifier_id=classifier_id,
                          extraction_name=extraction_name, content_type=content_type,
                          save_extraction=save_extraction,
                          delete_after_first_fetch=delete_after_first_fetch)


def build_request(source: Source, *, configuration_name: str | None = None,
                   configuration_id: str | None = None, classifier_id: str | None = None,
                   extraction_name: str | None = None, content_type: str | None = None,
                   save_extraction: bool | None = None,
                   delete_after_first_fetch: bool | None = None) -> dict[str, Any]:
    if (configuration_name is None) == (configuration_id is None):
        raise TypeError("give exactly one of configuration_name and configuration_id")
    body: dict[str, Any] = (
        {"configuration_name": configuration_name} if configuration_name is not None
        else {"configuration_id": configuration_id})
    if classifier_id is not None:
        body["classifier_id"] = classifier_id
    if extraction_name is None and source.input_type == "raw" and source.named:
        extraction_name = source.file_name
    if extraction_name is not None:
        body["extraction_name"] = extraction_name
    for key, value in (("save_extraction", save_extraction),
                       ("delete_after_first_fetch", delete_after_first_fetch)):
        if value is not None:
            body[key] = value
    body["input_type"] = source.input_type
    if source.input_type == "raw":
        data = source.read()
        content_type = content_type or sniff_content_type(data)
        if content_type is not None:
            body["content_type"] = content_type
        body["document_raw_data"] = base64.b64encode(data).decode("ascii")
    elif source.input_type == "hosted":
        if content_type is not None:
            body["content_type"] = content_type
        body["document_host_url"] = source.url
    else:
        if content_type is not None:
            body["content_type"] = content_type
        body["document_storage_id"] = source.document_id
    return body


