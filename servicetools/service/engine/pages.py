"""The loader: a PDF or an image read into the page model (page_model.py).

Every page is rendered to PNG (pypdfium2) and its words are taken from the PDF's text
layer (pdfplumber) or, on a scan or an image, read by OCR (ocr.py). A file that cannot
be read raises `UnreadableDocument` with the service's error code.
"""

from __future__ import annotations

import io
import re
import statistics
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from .ocr import READING_SIDE, fold_lone_accents, ocr_words, reading_size, reduced
from .page_model import Document, Page, Word

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["PAGE_DPI", "UnreadableDocument", "load_document"]

PDF = "application/pdf"
IMAGE_TYPES = ("image/png", "image/jpeg")

# PDFium's FPDF_ERR_PASSWORD: the document is encrypted and no (right) password was given.
_PDFIUM_PASSWORD_ERROR = 4
_EXIF_ORIENTATION = 0x0112
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class UnreadableDocument(Exception):
    """The bytes cannot be read as a document of the given type; `code` is the service's
    error code for it (unsupported_media_type, encrypted_document, invalid_document)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


#: The resolution a page is drawn at (its image, and camelot's ruling-line finder).
PAGE_DPI = 150


def load_document(data: bytes, content_type: str, *, dpi: int = PAGE_DPI) -> Document:
    """Render every page to PNG and find its words (text layer, else OCR)."""
    if content_type == PDF:
        parsed: dict[int, Any] = {}
        pages, data = _load_pdf(data, dpi, parsed)
        fold_lone_accents(pages)
        document = Document(content_type, pages, data)
        document.cache.parsed_pages = parsed
        return document
    if content_type in IMAGE_TYPES:
        pages = [_load_image(data)]
        fold_lone_accents(pages)
        return Document(content_type, pages)
    raise UnreadableDocument(
        "unsupported_media_type", f"Content type {content_type!r} is not supported."
    )


# The pdfplumber pages of a document of at most this many pages are kept as parsed, for
# the table finders (page_model.DocumentCache.parsed_pages); a longer one is parsed again
# where a finder reads it, so that memory does not grow with the document.
_KEEP_PARSED = 30


# A crop box this far (points) inside the media box is a page cut down for showing.
_CROPPED = 0.5


def _cut_down(plumber_page: Any) -> bool:
    """Whether a page's crop box is smaller than its media box (pdfplumber reads both
    from the page's dictionary, so asking costs nothing)."""
    media, crop = plumber_page.mediabox, plumber_page.cropbox
    return any(abs(float(a) - float(b)) > _CROPPED for a, b in zip(media, crop, strict=True))


def _visible(data: bytes) -> bytes:
    """The PDF with each page cut down to what a viewer shows of it, its crop box.

    PDFium draws a page's crop box, while pdfplumber's and camelot's coordinates are
    the media box's: on a page whose crop box is smaller (a print file's bleed, a page
    cut down in an editor), the words stood in the image where they were not drawn and
    text a viewer hides was read. Such a page's content is moved so that the crop box's
    corner is the origin and clipped to it, and both boxes become the crop box: every
    reader then sees the page a person sees. Where PDFium cannot rewrite the file, it is
    read as it came.
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    document = pdfium.PdfDocument(data)
    changed = False
    try:
        for index in range(len(document)):
            page = document[index]
            try:
                media, crop = page.get_mediabox(), page.get_cropbox()
                box = (max(media[0], crop[0]), max(media[1], crop[1]),
                       min(media[2], crop[2]), min(media[3], crop[3]))
                if box[2] - box[0] < 1 or box[3] - box[1] < 1 or all(
                        abs(a - b) <= _CROPPED for a, b in zip(box, media, strict=True)):
                    continue
                width, height = box[2] - box[0], box[3] - box[1]
                matrix = raw.FS_MATRIX(1, 0, 0, 1, -box[0], -box[1])
                if raw.FPDFPage_TransFormWithClip(page.raw, matrix,
                                                  raw.FS_RECTF(0, height, width, 0)):
                    page.set_mediabox(0, 0, width, height)
                    page.set_cropbox(0, 0, width, height)
                    changed = True
            finally:
                page.close()
        if not changed:  # a crop box larger than its page: nothing to cut, nothing to write
            return data
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()
    except pdfium.PdfiumError:
        return data
    finally:
        document.close()


def _load_pdf(data: bytes, dpi: int, parsed: dict[int, Any] | None = None
              ) -> tuple[list[Page], bytes]:
    """The pages of a PDF, and the PDF as its pages were read (`_visible`: the same
    bytes unless a page's crop box cuts it down)."""
    import pdfplumber
    import pypdfium2 as pdfium

    try:
        rendered = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        if getattr(error, "err_code", None) == _PDFIUM_PASSWORD_ERROR:
            raise UnreadableDocument(
                "encrypted_document", "The PDF is encrypted and cannot be opened."
            ) from error
        raise UnreadableDocument("invalid_document", f"The PDF cannot be read: {error}.") from error
    pages: list[Page] = []
    plumber = None
    # A text page is drawn in grayscale: its image is only looked at, and a gray bitmap
    # is a third of the pixels to fill and compress; with the PNG written by
    # `_gray_png` the page costs about 1 ms, against 13 ms for RGB through Pillow and
    # 13 ms for pdfplumber's words. A page without a text layer is a scan: it is drawn
    # in colour, for the OCR and as its image.
    #
    # Drawing happens in this thread. A helper thread drawing beside pdfplumber was
    # tried and measured slower, alone and in a batch (engine CPU 26-28 against 23-25 ms
    # per one-page invoice; a batch 18.5 against 15.5 ms per document): PDFium holds the
    # GIL while it draws, so the two threads mostly took turns.
    try:
        plumber = pdfplumber.open(io.BytesIO(data))
        if len(plumber.pages) != len(rendered):
            raise UnreadableDocument("invalid_document", "The PDF's page tree is inconsistent.")
        if any(_cut_down(page) for page in plumber.pages) and (
                visible := _visible(data)) is not data:
            data = visible
            plumber.close()
            rendered.close()
            rendered = pdfium.PdfDocument(data)
            plumber = pdfplumber.open(io.BytesIO(data))
        for index, plumber_page in enumerate(plumber.pages):
            words = _text_layer_words(plumber_page)
            source = "text"
            if words:
                png = _text_page_png(rendered, index, dpi)
            else:
                image, png = _scan_page(rendered, index, dpi)
                words = ocr_words(image)
                source = "ocr"
            pages.append(
                Page(
                    number=index + 1,
                    width=float(plumber_page.width),
                    height=float(plumber_page.height),
                    png=png,
                    words=words,
                    source=source,
                    ruled=source == "text" and _has_rules(plumber_page),
                )
            )
            if parsed is not None and source == "text" and len(rendered) <= _KEEP_PARSED:
                parsed[index + 1] = plumber_page
    except UnreadableDocument:
        raise
    except Exception as error:  # pdfminer raises many unrelated types on damaged files
        raise UnreadableDocument("invalid_document", f"The PDF cannot be read: {error}.") from error
    finally:
        rendered.close()
        if plumber is not None and not parsed:
            plumber.close()  # kept open (in memory) while the finders may read its pages
    return pages, data


def _bitmap(document: Any, index: int, dpi: int, gray: bool) -> Any:
    page = document[index]
    try:
        return page.render(scale=dpi / 72, grayscale=gray)
    finally:
        page.close()


def _text_page_png(document: Any, index: int, dpi: int) -> bytes:
    """A text page as a grayscale PNG (only looked at, so no colour and no PIL image)."""
    bitmap = _bitmap(document, index, dpi, True)
    if bitmap.mode == "L":
        return _gray_png(bitmap.buffer, bitmap.width, bitmap.height, bitmap.stride)
    return _png_bytes(bitmap.to_pil())


# A scanned page is drawn at most this many pixels on its long side, then brought to the
# OCR's reading size as RapidOCR would (ocr.reduced). Drawn right at the reading size,
# PDFium's own smoothing read a value fewer on sroie-dev's receipts as large scanned
# pages (bench/scan_words.py --as-pdf); with this margin, the same values.
_SCAN_DRAW_SIDE = 2 * READING_SIDE


def _scan_page(document: Any, index: int, dpi: int) -> tuple[Image, bytes]:
    """A page without a text layer, in colour: the image for the OCR, and its PNG.

    Drawn at `dpi`, or smaller where that would be larger than _SCAN_DRAW_SIDE, and
    brought to the OCR's reading size: a page of 50 megapixels at 150 dpi is held at 16
    (46 MiB) for a moment, not at 50 (143 MiB) while the OCR reads it.
    """
    page = document[index]
    try:
        longest = max(page.get_size())
        # PDFium's bitmap is the page's size times the scale, rounded up.
        scale = min(dpi / 72, _SCAN_DRAW_SIDE / longest * (1 - 1e-9))
        image = reduced(page.render(scale=scale, grayscale=False).to_pil())
    finally:
        page.close()
    return image, _png_bytes(image)


# Rows of a gray PNG filtered and compressed at a time: a band of an A4 page at 150 dpi
# is 0.3 MiB, where the whole page's rows of a 50-megapixel page would be 48 MiB twice.
_PNG_BAND = 256


def _gray_png(buffer: Any, width: int, height: int, stride: int) -> bytes:
    """An 8-bit grayscale PNG of the rows of a bitmap buffer, written directly.

    Under 1 ms for an A4 page at 150 dpi, against 9 ms for Pillow's writer at
    compress_level=1 (measured): the rows get their filter byte in one numpy copy per
    band, and ISA-L's deflate (isal) is ten times zlib's level 1, with smaller output. No
    row filter: a page of text on white compresses as well without.
    """
    import numpy as np
    from isal import isal_zlib

    rows = np.frombuffer(buffer, dtype=np.uint8, count=height * stride).reshape(height, stride)
    band = np.zeros((min(_PNG_BAND, height), width + 1), dtype=np.uint8)  # column 0: filter 0
    deflate = isal_zlib.compressobj(1)
    parts = []
    for top in range(0, height, _PNG_BAND):
        piece = rows[top:top + _PNG_BAND, :width]
        band[: len(piece), 1:] = piece
        parts.append(deflate.compress(band[: len(piece)]))
    parts.append(deflate.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8 bits, grayscale
    return b"".join(
        (_PNG_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", b"".join(parts)),
         _chunk(b"IEND", b""))
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _has_rules(page: Any) -> bool:
    """Two or more lines or boxes drawn on the page (parsed with its words already)."""
    return len(page.lines) + len(page.rects) >= 2


def _turn(page: Any) -> int:
    """How the text of a page is drawn: 0 upright, 90 turned anticlockwise (reading
    upwards), -90 turned clockwise (reading downwards), 180 head down (a page shown
    turned by its /Rotate, as a scan can be), by most of its characters."""
    chars = page.chars
    turned = [c for c in chars if not c.get("upright", True)]
    if not chars:
        return 0
    if 2 * len(turned) <= len(chars):
        # The text matrix's a: negative where the baseline runs leftwards.
        leftwards = sum(float(c["matrix"][0]) < 0 for c in chars if c.get("upright", True))
        return 180 if 2 * leftwards > len(chars) else 0
    # The text matrix's b: positive where the baseline runs up the page.
    return 90 if statistics.median(float(c["matrix"][1]) for c in turned) > 0 else -90


def _sideways(page: Any) -> dict[str, str]:
    """How to read the few words an upright page draws turned (headings set up the
    columns of a wide table, a label up the margin): in the direction they run, so that
    "Brian Calley" printed upwards reads so and not "yellaC nairB"."""
    turned = [c for c in page.chars if not c.get("upright", True)]
    if not turned:
        return {}
    upwards = statistics.median(float(c["matrix"][1]) for c in turned) > 0
    return {"char_dir_rotated": "btt" if upwards else "ttb"}


def _text_layer_words(page: Any) -> list[Word]:
    """The words of a page's text layer, in reading position (0..1 of the page as read):
    a page whose text is drawn turned (a landscape table set on a portrait page) is read
    as turned back, its words whole ("SURVEY", not "YEVRUS") and its lines across."""
    width, height = float(page.width), float(page.height)
    # The page box may not start at 0: pdfplumber's coordinates are relative to it.
    x_origin, y_origin = float(page.bbox[0]), float(page.bbox[1])
    turn = _turn(page)
    directions = (_sideways(page) if turn == 0 else
                  {"line_dir": "btt", "char_dir": "rtl"} if turn == 180 else
                  {"line_dir_rotated": "ltr", "char_dir_rotated": "btt"} if turn > 0 else
                  {"line_dir_rotated": "rtl", "char_dir_rotated": "ttb"})
    chars = page.chars
    hidden = _hidden_spaces(chars) | _shadows(chars)
    if hidden:
        page = page.filter(lambda obj: id(obj) not in hidden)
    words = []
    for item in page.extract_words(keep_blank_chars=False, use_text_flow=False, **directions):
        text = str(item["text"]).strip()
        if not text:
            continue
        left, right = float(item["x0"]) - x_origin, float(item["x1"]) - x_origin
        top, bottom = float(item["top"]) - y_origin, float(item["bottom"]) - y_origin
        if right <= 0 or left >= width or bottom <= 0 or top >= height:
            continue  # drawn off the page (or off its crop box): no viewer shows it
        if turn == 180:  # head down: across is leftwards, down is up the page
            left, right, top, bottom = width - right, width - left, height - bottom, height - top
        elif turn > 0:  # reading upwards: across is up the page, down is rightwards
            left, right, top, bottom = height - bottom, height - top, left, right
        elif turn < 0:  # reading downwards: across is down the page, down is leftwards
            left, right, top, bottom = top, bottom, width - right, width - left
        across, down = (height, width) if turn in (90, -90) else (width, height)
        x0, x1 = left / across, right / across
        y0, y1 = _clip(top / down), _clip(bottom / down)
        for piece, start, end in _unglued(text):
            share = (x1 - x0) / len(text)
            words.append(Word(piece, _clip(x0 + start * share), y0, _clip(x0 + end * share), y1))
    return words


def _hidden_spaces(chars: list[dict[str, Any]]) -> set[int]:
    """The ids of space characters a glyph beside them in the text stream is drawn over:
    some generators (ZUGFeRD's visualisation stylesheet) set a space and a digit at one
    place, so the page shows "181301674" where the text stream says "1 81301674". A
    reader sees no gap there, and neither does the engine."""
    hidden: set[int] = set()
    for index, char in enumerate(chars):
        if char.get("text") != " " or not char.get("upright", True):
            continue
        half = (char["x1"] - char["x0"]) / 2
        for other in chars[max(0, index - 1): index + 2]:
            if (other is not char and str(other.get("text", "")).strip()
                    and abs(other["top"] - char["top"]) < 1
                    and min(other["x1"], char["x1"]) - max(other["x0"], char["x0"]) > half):
                hidden.add(id(char))
                break
    return hidden


# A shadow is a copy of a glyph drawn over it, less than this share of its width away
# (and half its size up or down): sharper than a letter's own neighbour ever stands.
_SHADOW_REACH = 0.75
# Offsets of shadows that recur on a page: a run drawn twice ("$27.00" again 1.3 pt
# right and 0.8 pt up, for a bold face the font lacks) repeats its offset for every
# glyph; two like letters set tight ("11" in a condensed face) show one offset once.
_SHADOW_RUN = 3


def _shadows(chars: list[dict[str, Any]]) -> set[int]:
    """The ids of glyphs drawn again over themselves, which a reader sees once: a
    heading set twice at one place ("HHIIGGHHLLIIGGHHTTSS" for "HIGHLIGHTS") or a run
    drawn twice a little apart to look bold ("($$2277..0000)" for "($27.00)"). Of each
    pair the copy later in the text stream goes; a lone pair at an offset no other pair
    shares is two letters, and stays."""
    alike: dict[tuple[str, Any, float], list[tuple[int, dict[str, Any]]]] = {}
    for index, char in enumerate(chars):
        if str(char.get("text", "")).strip() and char.get("upright", True):
            key = (char["text"], char.get("fontname"), round(float(char["size"]), 1))
            alike.setdefault(key, []).append((index, char))
    pairs: dict[tuple[float, float], list[int]] = {}
    for group in alike.values():
        group.sort(key=lambda item: (item[1]["x0"], item[1]["top"]))
        for (i, a), (j, b) in pairwise(group):
            width, size = a["x1"] - a["x0"], float(a["size"])
            if (abs(b["x0"] - a["x0"]) < _SHADOW_REACH * width
                    and abs(b["top"] - a["top"]) < size / 2):
                one, other = (a, b) if i < j else (b, a)
                offset = (round(other["x0"] - one["x0"], 1), round(other["top"] - one["top"], 1))
                pairs.setdefault(offset, []).append(id(other))
    return {copy for offset, copies in pairs.items()
            if offset == (0.0, 0.0) or len(copies) >= _SHADOW_RUN for copy in copies}


# "number:12345", "Date:March": a label's colon with its value set right after it.
_GLUED_LABEL = re.compile(r"(?<=[^\W\d_]{2}:)(?=[^\s/])")


def _unglued(text: str) -> list[tuple[str, int, int]]:
    """A word's pieces with their character spans, split after a label's colon."""
    cuts = [m.start() for m in _GLUED_LABEL.finditer(text)]
    if not cuts or text.startswith("http"):
        return [(text, 0, len(text))]
    bounds = [0, *cuts, len(text)]
    return [(text[a:b], a, b) for a, b in pairwise(bounds) if text[a:b]]


# EXIF orientations that turn the image by 90 degrees (width and height change places).
_SIDEWAYS = (5, 6, 7, 8)


def _load_image(data: bytes) -> Page:
    from PIL import Image, ImageOps, UnidentifiedImageError

    # The page's image is the one the OCR reads: at most READING_SIDE pixels on its long
    # side (ocr.reduced). A larger image is held at full size only while it is made
    # smaller (a 50-megapixel page is 143 MiB in RGB), never beside the OCR's own work,
    # which is larger (bench/page_memory.py). A JPEG decoded at 1/2 or 1/4 of its size
    # (Image.draft) lowered no peak, and read other words on sroie-dev's large scans.
    try:
        image: Image.Image = Image.open(io.BytesIO(data))  # in memory: nothing to close
        size = image.size
        image.load()
        orientation = image.getexif().get(_EXIF_ORIENTATION, 1)
        # A plain PNG the right way up, small enough, is stored as it came.
        as_is = (
            image.format == "PNG"
            and image.mode in ("RGB", "L")
            and "transparency" not in image.info
            and orientation == 1
            and reading_size(*size) == size
        )
        if orientation != 1:
            image = ImageOps.exif_transpose(image)
        image = _to_rgb(reduced(_opaque(image)))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise UnreadableDocument(
            "invalid_document", f"The image cannot be read: {error}."
        ) from error
    if as_is:
        png = data
        words = ocr_words(image)
    else:
        # zlib releases the GIL: the PNG is encoded while the OCR runs.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="encode") as encoder:
            encoded = encoder.submit(_png_bytes, image)
            words = ocr_words(image)
            png = encoded.result()
    # The page's size is the image's own, whatever the size of its page image: word
    # boxes are fractions of the page.
    width, height = size[::-1] if orientation in _SIDEWAYS else size
    return Page(
        number=1,
        width=float(width),
        height=float(height),
        png=png,
        words=words,
        source="ocr",
    )


def _opaque(image: Image) -> Image:
    """The image without transparency, on white paper (transparent pixels would turn
    black; documents are dark ink on white paper), in a mode `reduced` samples by its
    pixel values (RGB or L); itself when it is already."""
    from PIL import Image as PILImage

    if image.mode == "P" and "transparency" in image.info or image.mode == "PA":
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA"):
        # One RGB copy: pasted through its own alpha onto white.
        paper = PILImage.new("RGB", image.size, "white")
        paper.paste(image, (0, 0), image)
        return paper
    return image if image.mode in ("RGB", "L") else image.convert("RGB")


def _to_rgb(image: Image) -> Image:
    return image if image.mode == "RGB" else _opaque(image).convert("RGB")


def _png_bytes(image: Image) -> bytes:
    out = io.BytesIO()
    # Fast compression: a tenth larger than the default, a third quicker per page.
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))
