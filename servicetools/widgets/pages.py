"""The first page of a document as an image the browser can show; no ipywidgets here."""

from __future__ import annotations

import io

__all__ = ["PAGE_WIDTH", "first_page"]

#: Width in pixels a PDF page is rendered to: readable beside the form, small to send.
PAGE_WIDTH = 900


def first_page(document: bytes, *, width: int = PAGE_WIDTH) -> tuple[bytes, str]:
    """Page 1 as ``(image bytes, "png" | "jpeg")``.

    PNG and JPEG come back as they are; a PDF page is rendered to PNG with pypdfium2 and
    Pillow (the ``service`` extra): without them, ImportError says what to install.
    Anything else is a ValueError.
    """
    if document.startswith(b"\x89PNG\r\n\x1a\n"):
        return document, "png"
    if document.startswith(b"\xff\xd8\xff"):
        return document, "jpeg"
    if b"%PDF-" not in document[:1024]:
        raise ValueError("not a PDF, PNG or JPEG document")
    try:
        import pypdfium2 as pdfium
        from PIL import Image  # noqa: F401 - pypdfium2's to_pil needs it
    except ImportError as exc:
        raise ImportError("rendering PDF pages needs pypdfium2 and Pillow: "
                          "pip install 'servicetools[service]'") from exc
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
