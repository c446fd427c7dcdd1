"""The first page of a document as an image the browser can show; no ipywidgets here."""

from __future__ import annotations

import io

from ...extras import require
from ...wire.content import JPEG, PDF, PNG, sniff_content_type

__all__ = ["PAGE_WIDTH", "first_page"]

#: Width in pixels a PDF page is rendered to: readable beside the form, small to send.
PAGE_WIDTH = 900


def first_page(document: bytes, *, width: int = PAGE_WIDTH) -> tuple[bytes, str]:
    """Page 1 as ``(image bytes, "png" | "jpeg")``.

    PNG and JPEG come back as they are; a PDF page is rendered to PNG with pypdfium2 and
    Pillow (the ``widgets`` extra): without them, `MissingExtra` says what to install.
    Anything else is a ValueError.
    """
    kind = sniff_content_type(document)
    if kind == PNG:
        return document, "png"
    if kind == JPEG:
        return document, "jpeg"
    if kind != PDF:
        raise ValueError("not a PDF, PNG or JPEG document")
    require("widgets", "pypdfium2", "PIL", feature="rendering PDF pages")
    import pypdfium2 as pdfium
    try:
        pdf = pdfium.PdfDocument(document)
    except pdfium.PdfiumError as exc:
        raise ValueError(f"cannot open the PDF: {exc}") from exc
    try:
        if len(pdf) == 0:
            raise ValueError("the PDF has no pages")
        page = pdf[0]
        bitmap = page.render(scale=width / max(page.get_width(), 1.0))
        out = io.BytesIO()
        bitmap.to_pil().save(out, format="PNG", optimize=True)
        return out.getvalue(), "png"
    finally:
        pdf.close()
