"""What a document is, judged by its bytes, and whether it is within the D12 limits.

Every path in (raw upload, vault upload, hosted download) goes through
`inspect_document`, so a bad document gets the same answer wherever it arrives.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Any

from ...wire.content import PDF, sniff_content_type
from ...wire.protocol import ErrorCode
from ..errors import ApiError
from ..settings import Settings

# FPDF_ERR_PASSWORD: pdfium's code for a document that needs a password to open.
_PDFIUM_PASSWORD_ERROR = 4


@dataclass(frozen=True)
class DocumentInfo:
    content_type: str
    num_pages: int


def inspect_document(
    data: bytes, settings: Settings, declared_type: str | None = None
) -> DocumentInfo:
    """Judge ``data`` and check the limits; raise `ApiError` with the D3 status if bad."""
    if not data:
        raise ApiError(400, ErrorCode.EMPTY_DOCUMENT, "The document is empty (0 bytes).")
    if len(data) > settings.max_document_bytes:
        raise ApiError(
            413,
            ErrorCode.DOCUMENT_TOO_LARGE,
            f"The document has {len(data):,} bytes; the limit is "
            f"{settings.max_document_bytes:,} bytes.",
            {"size": len(data), "limit": settings.max_document_bytes},
        )
    content_type = sniff_content_type(data)
    if content_type is None:
        raise ApiError(
            415,
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            "The document is not a PDF, PNG or JPEG file (judged by its bytes).",
        )
    if declared_type is not None and declared_type != content_type:
        raise ApiError(
            400,
            ErrorCode.CONTENT_TYPE_MISMATCH,
            f"content_type is {declared_type!r} but the document's bytes are {content_type!r}.",
            {"declared": declared_type, "detected": content_type},
        )
    pages = _pdf_pages(data, settings) if content_type == PDF else _image_pages(data, settings)
    if pages > settings.max_pages:
        raise ApiError(
            413,
            ErrorCode.TOO_MANY_PAGES,
            f"The document has {pages} pages; the limit is {settings.max_pages}.",
            {"pages": pages, "limit": settings.max_pages},
        )
    return DocumentInfo(content_type, pages)


def _pdf_pages(data: bytes, settings: Settings) -> int:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _PDFIUM_PASSWORD_ERROR:
            raise ApiError(
                400, ErrorCode.ENCRYPTED_DOCUMENT,
                "The PDF is encrypted and needs a password to open.",
            ) from exc
        raise ApiError(
            400, ErrorCode.INVALID_DOCUMENT, f"The PDF cannot be read (truncated or damaged): {exc}"
        ) from exc
    try:
        pages = len(pdf)
        if pages == 0:
            raise ApiError(400, ErrorCode.INVALID_DOCUMENT, "The PDF has no pages.")
        if pages <= settings.max_pages:
            _check_page_sizes(pdf, settings)
    finally:
        pdf.close()
    return pages


def _check_page_sizes(pdf: Any, settings: Settings) -> None:
    """The D12 pixel limit for PDFs: each page as the engine will draw it, and in all.

    A PDF's cost is in its pages' size, not its bytes: a 523-byte file can hold a
    7,200 x 7,200 pt page that draws to 225 megapixels (seconds and gigabytes).
    """
    scale = settings.render_dpi / 72
    total = 0.0
    for index in range(len(pdf)):
        width, height = pdf.get_page_size(index)  # points; reads no content
        megapixels = (width * scale) * (height * scale) / 1e6
        total += megapixels
        if megapixels > settings.max_megapixels:
            raise ApiError(
                413, ErrorCode.DOCUMENT_TOO_LARGE,
                f"Page {index + 1} is {width:,.0f} x {height:,.0f} pt: drawn at "
                f"{settings.render_dpi} dpi it has {megapixels:,.1f} megapixels; the limit is "
                f"{settings.max_megapixels:g} per page.",
                {"page": index + 1, "width_pt": round(width, 1), "height_pt": round(height, 1),
                 "megapixels": round(megapixels, 1), "limit": settings.max_megapixels},
            )
    if total > settings.max_document_megapixels:
        raise ApiError(
            413, ErrorCode.DOCUMENT_TOO_LARGE,
            f"The pages drawn at {settings.render_dpi} dpi have {total:,.1f} megapixels in "
            f"all; the limit is {settings.max_document_megapixels:g} per document.",
            {"megapixels": round(total, 1), "limit": settings.max_document_megapixels},
        )


def _image_pages(data: bytes, settings: Settings) -> int:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # We apply our own pixel limit below; Pillow's bomb warning would be noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                megapixels = img.width * img.height / 1e6
                if megapixels > settings.max_megapixels:
                    raise ApiError(
                        413,
                        ErrorCode.DOCUMENT_TOO_LARGE,
                        f"The image has {megapixels:.1f} megapixels; the limit is "
                        f"{settings.max_megapixels:g}.",
                        {"megapixels": round(megapixels, 1), "limit": settings.max_megapixels},
                    )
                img.load()  # decodes everything, so a truncated image is caught here
    except ApiError:
        raise
    except Image.DecompressionBombError as exc:
        raise ApiError(413, ErrorCode.DOCUMENT_TOO_LARGE, f"The image is too large: {exc}") from exc
    except UnidentifiedImageError as exc:
        # Pillow's own words name its buffer object ("<_io.BytesIO object at 0x...>").
        raise ApiError(
            400, ErrorCode.INVALID_DOCUMENT,
            "The image cannot be read (truncated or damaged): its header is not one of a "
            "PNG or JPEG image.",
        ) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ApiError(
            400, ErrorCode.INVALID_DOCUMENT,
            f"The image cannot be read (truncated or damaged): {exc}",
        ) from exc
    return 1
