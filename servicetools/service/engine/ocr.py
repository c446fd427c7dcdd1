"""Words from page images with RapidOCR 3 and its PP-OCRv6 small models (they ship inside
the wheel: nothing is downloaded).

PP-OCRv6 replaced rapidocr-onnxruntime 1.4's models because it reads more of what
matters at less cost: on sroie-dev's receipts the key values present in the lines read
rose from 76.6% to 87.3% (addresses 41% -> 68%, shop names 70% -> 83%) at 0.73 s a page
against 0.84 s (issue 29; the measure is bench/ocr_models.py).

RapidOCR returns one text box per line segment and its recogniser often drops the
spaces between words ("GlobexCorporation", "Date:2024-03-15"). The character boxes
it can return are CTC frames, too irregular to find word gaps by distance alone, so
segments are split at recognised spaces and at text transitions that rarely occur
inside a word (after a label colon, lower to upper case, letters to digits with a
visible gap). Label matching is space-insensitive as well (see fields.py), so a
missed split costs little.
"""

from __future__ import annotations

import math
import re
import statistics
import threading
import unicodedata
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .page_model import Page, Word

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["LARGE_DETECTOR_SIDE", "PLAIN_AREA", "READING_SIDE", "fold_lone_accents",
           "letters_and_digits", "ocr_words", "reading_size", "reduced", "skew"]

_lock = threading.Lock()
#: The OCR engines made so far: for pages of up to PLAIN_AREA pixels as read, and for
#: larger ones.
_engines: dict[bool, Any] = {}
#: Pages read (at READING_SIDE) on more pixels than a US letter page (2000 x 1545) are
#: rare and square-ish; their detector works at most LARGE_DETECTOR_SIDE px a side.
PLAIN_AREA = 3_200_000
LARGE_DETECTOR_SIDE = 1280


def _ocr(pixels: Any = None) -> Any:
    """The OCR engine for a page of these pixels (an array, height x width first)."""
    large = pixels is not None and pixels.shape[0] * pixels.shape[1] > PLAIN_AREA
    engine = _engines.get(large)
    if engine is None:
        from rapidocr import RapidOCR

        # The models of the package's own folder; its logger says only what went wrong.
        # A detection threshold of 0.4 (default 0.5) keeps the small boxes of lone digits
        # (a quantity "1" in a table column) at the same ceiling on sroie-dev (87.3%);
        # 0.3 read one value more in 252 (bench/ocr_models.py).
        params: dict[str, Any] = {"Global.log_level": "error", "Det.box_thresh": 0.4}
        if large:
            # The detector otherwise works on the whole 2000 x 2000 px of a square page:
            # through the service a 50 MP page peaked at 660-755 MiB against 310-337
            # for an A4 page. Limited to 1280 px a side on every page, it read one value
            # fewer on the real sets' tuning halves ("292.00" as "292.09"), so only the
            # large pages, which the real sets do not hold, are limited (issue 33).
            params.update({"Det.limit_type": "max",
                           "Det.limit_side_len": LARGE_DETECTOR_SIDE})
        engine = _engines[large] = RapidOCR(params=params)
    return engine


def _read(pixels: Any) -> list[list[Any]]:
    """The page's lines as [box, text, score, char boxes, chars, char scores].

    RapidOCR 3 gives each line's characters without the spaces between words; they are
    put back from the line's text (with the box of the character before), so a space
    still separates words.
    """
    # Every switch given: the engine keeps the last call's settings (_boxes turns
    # recognition off).
    out = _ocr(pixels)(pixels, use_det=True, use_cls=False, use_rec=True, return_word_box=True,
                 return_single_char_box=True)
    # Detection alone comes back when nothing was recognised.
    texts = list(getattr(out, "txts", None) or [])
    if not texts:
        return []
    glyphs = list(out.word_results or [])
    if len(glyphs) != len(texts):
        glyphs = [()] * len(texts)  # a line without character boxes dropped: none to trust
    items: list[list[Any]] = []
    for box, text, score, line in zip(out.boxes, texts, out.scores, glyphs, strict=True):
        chars: list[str] = []
        boxes: list[Any] = []
        scores: list[float] = []
        read = [(str(c), float(s), b) for c, s, b in line]
        if read and "".join(c for c, _, _ in read) == text.replace(" ", ""):
            it = iter(read)
            for ch in text:
                if ch == " ":
                    chars.append(" ")
                    boxes.append(boxes[-1] if boxes else box)
                    scores.append(1.0)
                    continue
                char, char_score, char_box = next(it)
                chars.append(char)
                boxes.append(char_box)
                scores.append(char_score)
        items.append([box.tolist(), text, float(score), boxes, chars, scores])
    return items


#: RapidOCR reads a page of at most this many pixels on its long side: a larger one it
#: shrinks first (its Global.max_side_len), so the OCR's work stops growing there.
READING_SIDE = 2000


def reading_size(width: int, height: int) -> tuple[int, int]:
    """The size RapidOCR brings a page to before reading it (its `reduce_max_side`): the
    page's own when its long side is at most READING_SIDE, else that long side with each
    side rounded to a multiple of 32 (never below 32, where RapidOCR would fail).

    >>> reading_size(4961, 7016), reading_size(1240, 1754)
    ((1408, 1984), (1240, 1754))
    """
    if max(width, height) <= READING_SIDE:
        return width, height
    ratio = READING_SIDE / max(width, height)
    return (max(32, round(int(width * ratio) / 32) * 32),
            max(32, round(int(height * ratio) / 32) * 32))


def reduced(image: Image) -> Image:
    """The image as RapidOCR reads it: brought to `reading_size` (itself when it is no
    larger), with no pixel array of the whole image made on the way.

    RapidOCR shrinks with OpenCV's bilinear resize, which samples the source at the
    points an affine transform with PIL's bilinear filter samples (the two differ by at
    most 1 in a pixel value); PIL's `resize` would average over all the source pixels
    and give another picture, and other words.
    """
    from PIL import Image as PILImage

    size = reading_size(image.width, image.height)
    if size == image.size:
        return image
    if image.mode not in ("RGB", "L"):  # a palette would be sampled by its indices
        image = image.convert("RGB")
    scale = (image.width / size[0], 0, 0, 0, image.height / size[1], 0)
    return image.transform(size, PILImage.Transform.AFFINE, scale,
                           resample=PILImage.Resampling.BILINEAR)


def ocr_words(image: Image) -> list[Word]:
    """Words of an image with boxes as page fractions and the recogniser's scores.

    The image is first brought to the size the OCR reads (`reduced`): a 50-megapixel
    page costs the OCR no more than one of 4 megapixels. A page photographed on its side
    or head down is read turned upright, and its boxes are fractions of the upright page.
    """
    import numpy as np

    image = _rgb(reduced(image))
    pixels = np.asarray(image)
    # One engine per process; its __call__ mutates shared settings, so calls take turns.
    with _lock:
        # Lines are read as they stand; the 180-degree classifier judges the page once,
        # from a few lines, rather than every line of every page.
        result = _read(pixels)
        # Nothing read well enough, lines running up the page, or lines head down ("660"
        # for "0.99"): find how the page is turned from its text boxes alone.
        if not result or _sideways(result) or _upside_down(pixels, result):
            turn = _turn(image)
            if turn:
                image = image.rotate(turn, expand=True)
                pixels = np.asarray(_rgb(image))
                result = _read(pixels)
    if not result:
        return []
    width, height = float(image.width), float(image.height)
    result = _level(result, width, height)
    words: list[Word] = []
    for item in result:
        words.extend(_segment_words(item, width, height))
    return words


def _rgb(image: Image) -> Image:
    """The image in RGB, itself when it is (a conversion would copy every pixel)."""
    return image if image.mode == "RGB" else image.convert("RGB")


# A document read by OCR with at most this many words carrying a diacritic is in a
# language that has none (tuning halves: English and Malay receipts show exactly one,
# French and German scans three or more).
_LONE_ACCENTS = 1


def fold_lone_accents(pages: list[Page]) -> None:
    """Drop the diacritics of a document's OCR words where they stand alone.

    The recogniser's alphabet holds accented letters, and on an English or Malay
    receipt it now and then reads one ("Restäurants", "SÉLANGOR", "Chéras"): a
    language written with diacritics shows them more than once a page.
    """
    scanned = [page for page in pages if page.source == "ocr"]
    accented = [w for page in scanned for w in page.words if _folded(w.text) != w.text]
    if not accented or len(accented) > _LONE_ACCENTS:
        return
    for page in scanned:
        page.words = [replace(w, text=_folded(w.text)) if w in accented else w
                      for w in page.words]


def _folded(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", "".join(
        c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)))


# Lines the orientation classifier looks at (the widest), and how sure it must be.
_ORIENTATION_LINES = 24
_TURNED = 0.9


def _turn(image: Image) -> int:
    """Degrees (counter-clockwise, as PIL turns) that set the page's text upright: 0,
    90, 180 or 270. Judged from text boxes found without reading them."""
    import numpy as np

    turn = 0
    boxes = _boxes(np.asarray(_rgb(image)))
    if boxes and _sideways([[box] for box in boxes]):
        turn = 90
        image = image.rotate(turn, expand=True)
    pixels = np.asarray(_rgb(image))
    boxes = _boxes(pixels)
    if boxes and _upside_down(pixels, [[box] for box in boxes]):
        turn += 180
    return turn % 360


def _boxes(pixels: Any) -> list[Any]:
    found = _ocr(pixels)(pixels, use_det=True, use_cls=False, use_rec=False).boxes
    return [] if found is None else [box.tolist() for box in found]


def _sideways(result: list[Any]) -> bool:
    """Whether most text boxes are much taller than wide (lines running up the page)."""
    import numpy as np

    tall = 0
    for item in result:
        box = np.asarray(item[0], dtype=np.float32)
        tall += float(np.ptp(box[:, 1])) > 1.5 * float(np.ptp(box[:, 0]))
    return tall > len(result) / 2


def _upside_down(pixels: Any, result: list[Any]) -> bool:
    """Whether most of the page's widest lines read as turned by 180 degrees."""
    import numpy as np

    boxes = sorted((np.asarray(item[0], dtype=np.float32) for item in result),
                   key=lambda box: -float(np.ptp(box[:, 0])))[:_ORIENTATION_LINES]
    if not boxes:
        return False
    from rapidocr.utils.process_img import get_rotate_crop_image

    crops = [get_rotate_crop_image(pixels, box) for box in boxes]
    # The line classifier (0 or 180 degrees) the package loads on first use.
    judged = _ocr()._load_cls_model()(crops).cls_res or []
    turned = sum(1 for label, score in judged if label == "180" and score >= _TURNED)
    return turned > len(judged) / 2


# Below this slope a scan counts as straight; above the cap it is not a skew to undo.
_MIN_SKEW = math.radians(0.1)
_MAX_SKEW = math.radians(10.0)


def skew(result: list[Any]) -> float:
    """The median slope (radians, clockwise positive) of the wide text boxes' top edges."""
    angles = []
    for item in result:
        (x0, y0), (x1, y1) = item[0][0], item[0][1]
        height = math.dist(item[0][1], item[0][2])
        if x1 - x0 > 3 * max(1.0, height):
            angles.append(math.atan2(float(y1) - float(y0), float(x1) - float(x0)))
    return statistics.median(angles) if angles else 0.0


def _level(result: list[Any], width: float, height: float) -> list[Any]:
    """Boxes turned about the page centre so a skewed scan's lines run level.

    Line grouping assumes level lines: on a scan turned by 1.5 degrees the two ends of a
    full-width line differ by two line heights, and neighbouring lines would merge.
    Turning the coordinates costs nothing next to turning the image and OCR-ing it again.
    """
    angle = skew(result)
    if not _MIN_SKEW <= abs(angle) <= _MAX_SKEW:
        return result
    cos, sin = math.cos(angle), math.sin(angle)
    cx, cy = width / 2, height / 2

    def turn(points: Any) -> list[list[float]]:
        return [
            [
                cx + (float(x) - cx) * cos + (float(y) - cy) * sin,
                cy - (float(x) - cx) * sin + (float(y) - cy) * cos,
            ]
            for x, y in points
        ]

    levelled = []
    for item in result:
        item = list(item)
        item[0] = turn(item[0])
        if len(item) > 3 and item[3]:
            item[3] = [turn(box) for box in item[3]]
        levelled.append(item)
    return levelled


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
        piece = letters_and_digits("".join(chars[i] for i in group))
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


# The recogniser confuses O and 0: "L0T 1851-A", "JALAN 4330O", "40300o".
_ZERO_IN_WORD = re.compile(r"(?<=[A-Za-z])0(?=[A-Za-z])")
_O_IN_NUMBER = re.compile(r"(?<![A-Za-z])\d[\dOo]*[Oo][\dOo]*(?![A-Za-z])")


def letters_and_digits(word: str) -> str:
    """O and 0 set right by their neighbours: a 0 between letters of a word without other
    digits is an O, an O among the digits of a number is a 0."""
    if "0" in word and sum(c.isdigit() for c in word) == word.count("0"):
        word = _ZERO_IN_WORD.sub("O", word)
    return _O_IN_NUMBER.sub(
        lambda m: m.group().replace("O", "0").replace("o", "0")
        if sum(c.isdigit() for c in m.group()) >= 2 else m.group(), word)


def _starts_word(
    chars: list[str], spans: list[tuple[float, float]], i: int, median_width: float
) -> bool:
    before, here = chars[i - 1], chars[i]
    if before == ":" and i >= 2 and (chars[i - 2].isalpha() or (
            chars[i - 2] == "." and i >= 3 and chars[i - 3].isalpha())):
        return True  # "Date:2024-03-15", "Bon-Nr.:1433", but not "12:30"
    if before.islower() and here.isupper():
        # "GlobexCorporation", "WidgetA"; but "GmbH", the legal form, is one word.
        return "".join(chars[max(0, i - 3) : i + 1]) != "GmbH"
    if before == "." and here.isupper() and i >= 3 and chars[i - 2].isalpha():
        # "Qty.Description": a space read as a full stop; "S.A." keeps together.
        return chars[i - 3].isalpha()
    if before.isalpha() and here.isdigit() and _label_before(chars, i):
        return True  # "Date12Aug": a word, then a number glued to it
    letter_digit = (before.isalpha() and here.isdigit()) or (before.isdigit() and here.isalpha())
    gap = spans[i][0] - spans[i - 1][1]
    return letter_digit and gap >= 0.5 * median_width  # "742Evergreen", not "A4"


def _label_before(chars: list[str], i: int) -> bool:
    """Whether a lower-case word of three letters or more ends at i ("Date", not "INV")."""
    start = i
    while start > 0 and chars[start - 1].isalpha():
        start -= 1
    run = chars[start:i]
    return len(run) >= 3 and any(c.islower() for c in run)


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
            words.append(Word(letters_and_digits(piece), start, y0, start + len(piece) * per_char,
                              y1, score))
        position += len(piece) + 1
    return words
