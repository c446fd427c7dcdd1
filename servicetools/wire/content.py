"""What a document is, told by its leading bytes: the one sniffer both halves use.

The service judges every document this way (D12, D4: a declared ``content_type`` must
agree with the bytes); the client uses it to fill in ``content_type`` and to name files,
and the review widgets to decide how to show page 1. One function, so the three can
never disagree.

>>> sniff_content_type(b"%PDF-1.7 ..."), sniff_content_type(b"GIF89a")
('application/pdf', None)
>>> SUFFIXES[sniff_content_type(b"\\xff\\xd8\\xff\\xe0")]
'.jpg'
"""

from __future__ import annotations

__all__ = ["JPEG", "PDF", "PNG", "SUFFIXES", "sniff_content_type"]

PDF, PNG, JPEG = "application/pdf", "image/png", "image/jpeg"
#: The file suffix a document of each type is given when it has no name of its own.
SUFFIXES: dict[str, str] = {PDF: ".pdf", PNG: ".png", JPEG: ".jpg"}

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_SIGNATURE = b"\xff\xd8\xff"


def sniff_content_type(data: bytes) -> str | None:
    """``application/pdf``, ``image/png`` or ``image/jpeg`` by the leading bytes; else None."""
    # PDF readers accept the header anywhere in the first KiB; so do we.
    if b"%PDF-" in data[:1024]:
        return PDF
    if data.startswith(_PNG_SIGNATURE):
        return PNG
    if data.startswith(_JPEG_SIGNATURE):
        return JPEG
    return None
