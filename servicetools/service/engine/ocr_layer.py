"""A text layer for pages read by OCR, so that the table finders of text PDFs read scans.

camelot's and pdfplumber's finders read a PDF's text layer; a scan has none. The
layer written here draws each OCR word, in its box, as a token of plain ASCII letters
("Qabdeg"): a word's own text may hold letters the PDF's standard fonts cannot encode,
and a token, scaled to the word's width, takes the same place on the page whatever
its letters. The finders' cells are the tokens mapped back to the words (`restore`).

Read as scans, icdar2013-dev's table us-024 lost a column and shifted every row in
the engine's own header-band reader (OCR boxes are looser than glyph boxes); camelot's
network finder over this layer read it as it reads the text PDF.
"""

from __future__ import annotations

import io
import re
import statistics
from collections.abc import Sequence

from .lines import page_lines
from .page_model import Page

__all__ = ["ocr_layer", "restore"]

# Letters of one width in Helvetica (556/1000 em), so a token's width is its length's.
_LETTERS = "abdeghnopqu"
_LENGTH = 5  # 11**5 = 161,051 words a page
_TOKEN_EM = (778 + _LENGTH * 556) / 1000  # "Q" and the letters, in ems
# Helvetica's descent: a glyph's box reaches this share of the size below its baseline.
_DESCENT = 0.207
# Word edges this close (page fraction; 2.4 points on A4) are one alignment (`_snapped`).
_SNAP = 0.004
_TOKEN = re.compile(rf"Q[{_LETTERS}]{{{_LENGTH}}}")
# Two tokens with no space between them: words closer than a finder's tolerance.
_JOINED = re.compile(rf"(?<=Q[{_LETTERS}]{{{_LENGTH}}})(?=Q)")
_SPLIT = re.compile(f"({_TOKEN.pattern})")
# Anything else but space is a piece of a token a finder cut at a cell's edge.
_PIECE = re.compile(r"\S+")

Words = dict[str, str]  # token -> the OCR word's text


def _token(index: int) -> str:
    letters = []
    for _ in range(_LENGTH):
        index, digit = divmod(index, len(_LETTERS))
        letters.append(_LETTERS[digit])
    return "Q" + "".join(reversed(letters))


def _snapped(edges: list[float]) -> dict[float, float]:
    """Each edge (page fraction) moved to the median of the edges within `_SNAP` of the
    first of its run: OCR boxes of words printed flush with each other differ by a few
    pixels, where camelot's network finder takes only edges within half a point as
    aligned."""
    moved: dict[float, float] = {}
    ordered = sorted(set(edges))
    start = 0
    for end in range(1, len(ordered) + 1):
        if end == len(ordered) or ordered[end] - ordered[start] > _SNAP:
            run = ordered[start:end]
            middle = statistics.median(run)
            moved.update((edge, middle) for edge in run)
            start = end
    return moved


def ocr_layer(pages: Sequence[Page], numbers: set[int]) -> tuple[bytes, dict[int, Words]]:
    """A PDF with the document's pages (same sizes, same numbers) whose text layer is the
    OCR words of the pages in `numbers` drawn as tokens; the other pages are blank. With
    it, each page's tokens and the words they stand for."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    kids: list[int] = []
    tokens: dict[int, Words] = {}
    number = 4
    for page in pages:
        words: Words = {}
        drawn = ["BT"]
        lines = page_lines(page) if page.number in numbers else []
        lefts = _snapped([w.x0 for line in lines for w in line.words])
        rights = _snapped([w.x1 for line in lines for w in line.words])
        for line in lines:
            # One size and baseline for a line's words: OCR boxes of one line differ in
            # height ("Zürich" over "1200"), and a finder would read them as two rows.
            size = max(1.0, statistics.median(w.y1 - w.y0 for w in line.words) * page.height)
            bottom = statistics.median(w.y1 for w in line.words)
            y = (1 - bottom) * page.height + _DESCENT * size
            for word in line.words:
                if len(words) == len(_LETTERS) ** _LENGTH:
                    break
                token = _token(len(words))
                words[token] = word.text
                x0, x1 = lefts[word.x0], max(rights[word.x1], lefts[word.x0] + 1e-4)
                # Tz scales the token to the word's width; the glyph box is `size` high
                # from the descent below the baseline, as pdfminer measures it.
                scale = 100 * (x1 - x0) * page.width / (_TOKEN_EM * size)
                drawn.append(f"/F1 {size:.2f} Tf {scale:.2f} Tz 1 0 0 1 {x0 * page.width:.2f}"
                             f" {y:.2f} Tm ({token}) Tj")
        drawn.append("ET")
        tokens[page.number] = words
        content = "\n".join(drawn).encode()
        objects[number] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page.width:.2f} {page.height:.2f}]"
            f" /Resources << /Font << /F1 3 0 R >> >> /Contents {number + 1} 0 R >>").encode()
        objects[number + 1] = (b"<< /Length %d >>\nstream\n" % len(content) + content
                               + b"\nendstream")
        kids.append(number)
        number += 2
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        " ".join(f"{kid} 0 R" for kid in kids).encode(), len(kids))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = {}
    for key in sorted(objects):
        offsets[key] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (key, objects[key]))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % number)
    out.write(b"".join(b"%010d 00000 n \n" % offsets[key] for key in range(1, number)))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (number, xref))
    return out.getvalue(), tokens


def restore(text: str, words: Words) -> str:
    """A finder's cell text with its tokens mapped back to the words, lines kept as the
    finder gave them; a piece of a token cut at a cell's edge is dropped."""
    parts = _SPLIT.split(_JOINED.sub(" ", text))
    # Odd parts are tokens; between them only spaces, line breaks and cut pieces.
    restored = "".join(words.get(part, "") if index % 2 else _PIECE.sub("", part)
                       for index, part in enumerate(parts))
    return "\n".join(" ".join(line.split()) for line in restored.splitlines()
                     if line.strip())
