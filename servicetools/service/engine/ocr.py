"""Words from page images with RapidOCR (models ship inside the wheel: nothing is downloaded).

RapidOCR returns one text box per line segment and its recogniser often drops the
spaces between words ("GlobexCorporation", "Date:2024-03-15"). The character boxes
it can return are CTC frames, too irregular to find word gaps by distance alone, so
segments are split at recognised spaces and at text transitions that rarely occur
inside a word (after a label colon, lower to upper case, letters to digits with a
visible gap). Label matching is space-insensitive as well (see fields.py), so a
missed split costs little.
"""

from __future__ import annotations

import statistics
import threading
import unicodedata
from typing import TYPE_CHECKING, Any

from .pages import Word

if TYPE_CHECKING:
    from PIL.Image import Image

_lock = threading.Lock()
_engine: Any = None


def _ocr() -> Any:
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR

        _engine = RapidOCR()
    return _engine


def ocr_words(image: Image) -> list[Word]:
    """Words of an RGB image with boxes as page fractions and the recogniser's scores."""
    import numpy as np

    pixels = np.asarray(image.convert("RGB"))
    # One engine per process; its __call__ mutates shared settings, so calls take turns.
    with _lock:
        result, _ = _ocr()(pixels, return_word_box=True)
    if not result:
        return []
    width, height = float(image.width), float(image.height)
    words: list[Word] = []
    for item in result:
        words.extend(_segment_words(item, width, height))
    return words


def _segment_words(item: Any, width: float, height: float) -> list[Word]:
    box, text, score = item[0], str(item[1]), float(item[2])
    # The recogniser is trained on Chinese too: it may return "，" or "：" for "," or ":".
    text = unicodedata.normalize("NFKC", text)
    ys = [float(p[1]) for p in box]
    # Detection boxes are padded and may reach past the image's edges.
    y0, y1 = max(0.0, min(ys) / height), min(1.0, max(ys) / height)
    chars = [unicodedata.normalize("NFKC", c) for c in item[4]] if len(item) > 4 and item[4] else []
    char_boxes = item[3] if len(item) > 3 and item[3] else []
    char_scores = list(item[5]) if len(item) > 5 and item[5] else []
    if len(chars) != len(char_boxes) or "".join(chars) != text or not chars:
        xs = [float(p[0]) for p in box]
        x0, x1 = max(0.0, min(xs) / width), min(1.0, max(xs) / width)
        return _proportional_words(text, x0, x1, y0, y1, score)
    spans = [(min(float(p[0]) for p in b), max(float(p[0]) for p in b)) for b in char_boxes]
    median_width = statistics.median(max(1.0, b - a) for a, b in spans)
    groups: list[list[int]] = [[]]
    for i, ch in enumerate(chars):
        if ch.isspace():
            groups.append([])
            continue
        if groups[-1] and _starts_word(chars, spans, i, median_width):
            groups.append([])
        groups[-1].append(i)
    words = []
    for group in groups:
        if not group:
            continue
        piece = "".join(chars[i] for i in group)
        scores = [float(char_scores[i]) for i in group] if char_scores else [score]
        words.append(
            Word(
                text=piece,
                x0=max(0.0, min(spans[i][0] for i in group) / width),
                y0=y0,
                x1=min(1.0, max(spans[i][1] for i in group) / width),
                y1=y1,
                confidence=min(score, statistics.fmean(scores)),
            )
        )
    return words


def _starts_word(
    chars: list[str], spans: list[tuple[float, float]], i: int, median_width: float
) -> bool:
    before, here = chars[i - 1], chars[i]
    if before == ":" and i >= 2 and chars[i - 2].isalpha():
        return True  # "Date:2024-03-15", but not "12:30"
    if before.islower() and here.isupper():
        return True  # "GlobexCorporation"
    letter_digit = (before.isalpha() and here.isdigit()) or (before.isdigit() and here.isalpha())
    gap = spans[i][0] - spans[i - 1][1]
    return letter_digit and gap >= 0.5 * median_width  # "742Evergreen", not "A4"


def _proportional_words(
    text: str, x0: float, x1: float, y0: float, y1: float, score: float
) -> list[Word]:
    """Split at spaces, placing words by their share of the characters (no character boxes)."""
    words = []
    per_char = (x1 - x0) / max(1, len(text))
    position = 0
    for piece in text.split(" "):
        if piece:
            start = x0 + position * per_char
            words.append(Word(piece, start, y0, start + len(piece) * per_char, y1, score))
        position += len(piece) + 1
    return words
