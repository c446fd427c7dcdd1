"""Tables found by camelot and pdfplumber, judged by the target's header schema.

camelot's "network" finder reads tables from a PDF's text layer, ruled or not, and on
the ICDAR 2013 tables it finds the cells far better than a reader of header bands
(bench/tables.py). pdfplumber's finder reads some of the same tables again with their
columns or rows split better, and ruled tables camelot's lattice misses. No finder
knows which table the configuration means, nor which of a table's rows are headings:
the configuration judges. A found table is the target's
when a row near its top names the schema's columns (its header tree, else its name,
compared without spaces or case); the columns are mapped one-to-one by those names
(and in order between them for columns without a name); the rows under the header
row are the table's. Every found table that is judged the target's is one of its
tables, so a table continued on the next page under its repeated header is two.

On pages read by OCR there is no text layer: camelot's network and stream finders and
pdfplumber's text strategy read one drawn from the OCR words (ocr_layer.py), and
camelot's finder of ruling lines reads the page image, the OCR words placed in the grid
of each table drawn with rules.

camelot is an optional part of the service: without it, or on a page it cannot read,
pdfplumber's ruled tables and the engine's own header-band reader (tables.py) are left.
"""

from __future__ import annotations

import bisect
import io
import itertools
import json
import logging
import math
import re
import statistics
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache, partial
from importlib import resources
from typing import Any

from rapidfuzz import fuzz

from ...wire.values import parse_number
from .calibration import cell_confidence
from .lines import group_lines, page_lines
from .ocr_layer import ocr_layer, restore
from .page_model import Document, Page, Word
from .pages import PAGE_DPI
from .results import EngineCell
from .shapes import validates
from .tables import (
    OwnTable,
    assign,
    closes_items,
    header_share,
    heading_test,
    own_names_first,
    schema_synonyms,
    untreed_names,
    without_leaders,
)
from .vocabulary import column_key

__all__ = ["Candidate", "FEATURES", "Found", "Judged", "Proposal", "choose", "found_candidates",
           "found_tables", "headed_pages", "judged_cells", "load_scoring", "own_candidates",
           "recording", "scoring", "table_cells"]

log = logging.getLogger("servicetools.service")

# The header row is among the first rows of a found table (a title, a group heading or
# an invoice's address blocks may stand above it), and a heading spans a few rows.
_HEADER_ROWS = 12
_STACKED = 5
_NAME_MATCH = 85
# Of the schema's named columns, at least this share must be found in the header row.
_MIN_SHARE = 0.5
# Ruling-line crossings this close (a share of the page's width or height) are one
# column or row edge: a rule drawn two pixels wide, or a little askew on a scan.
_EDGE = 0.006
# A page is given to the finders when a few of its lines hold at least this share of
# the schema's named columns (each by half its words or more): less strict than the
# judgement, which needs half in one header row of a found table.
_PAGE_SHARE = 0.4
# Found tables headed nearly as well as the best one are the target's too (a table
# continued on the next page); the others are tables that share some headings.
_SHARE_MARGIN = 0.1
_SPACE = re.compile(r"\s+")
# The finders, in the order their tables are preferred when two find one table equally
# well and no scoring says otherwise: camelot's "lattice" and pdfplumber's "lines" follow
# ruling lines (exact where they are drawn), camelot's "network" and "stream" and
# pdfplumber's "text" strategy the text; the engine's own reader ("own") last.
_FLAVORS = ("lattice", "network", "stream", "lines", "text")
_SOURCES = (*_FLAVORS, "own")
# camelot's flavours run on a page's text layer, lattice only where it draws rules.
# (Its "hybrid" was tried as well: on the table sets' pages it never read a table better
# than the others did, bench/tables.py's candidates, so its time is not spent.)
_CAMELOT: dict[str, dict[str, Any]] = {"lattice": {}, "network": {}, "stream": {}}
_ON_RULED_PAGES = ("lattice", "lines")
# Those that follow ruling lines run only on pages that draw some (Page.ruled).
_RULED = ("lattice", "lines")
# A pdfplumber table is in the place of a camelot one when their boxes overlap this much
# (intersection over union).
_SAME_PLACE = 0.9
_PLUMBER_TEXT = {"vertical_strategy": "text", "horizontal_strategy": "text"}
# Confidence of a cell of a judged table: the share of the schema's names found in the
# header, times this, times 0.7 for a value its column's rules refuse.
_JUDGED = 0.9
_INVALID = 0.7


@dataclass(frozen=True)
class Found:
    """A table as a finder read it: its page, rows of cell texts, box and finder."""

    page: int
    rows: tuple[tuple[str, ...], ...]
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # PDF points
    flavor: str = "network"
    read: str = "text"  # how its words were read: "text" (layer) or "ocr"
    # Each row's (bottom, top) in PDF points, y upwards, where the finder says.
    spans: tuple[tuple[float, float], ...] = ()


def found_tables(document: Document, pages: Sequence[int] | None = None) -> list[Found]:
    """Tables found on the given pages (all when None). On text-layer pages of a PDF,
    camelot's (lattice where the page draws ruling lines, network everywhere) and
    pdfplumber's (lines and text strategies, as `_rereads` keeps them). On pages
    read by OCR (scans, images), camelot's network and stream and pdfplumber's text
    strategy over a layer drawn from the OCR words (`_scanned`), and the tables drawn
    with rules: camelot's line finder over the page image, the OCR words placed in its
    grid. Each page is read once per document, whatever the targets that ask."""
    done = document.cache.found_tables
    readable = {p.number: p for p in document.pages if p.words}
    wanted = [n for n in (readable if pages is None else pages) if n in readable]
    missing = [readable[n] for n in wanted if n not in done]
    text = [p for p in missing if p.source == "text"]
    found = _camelot(document.source, text) if text and document.source else []
    if text and document.source:
        # pdfplumber's text strategy only reads camelot's tables again (_rereads): it is
        # not run on pages where camelot found none.
        found += _plumber(document.source, text, found, document.cache.parsed_pages)
    scans = [p for p in missing if p.source != "text"]
    if scans:
        found += _scanned(document.pages, scans)
    for page in missing:
        done[page.number] = [f for f in found if f.page == page.number] + (
            _ruled_scan(page) if page.source != "text" else [])
    return [f for n in sorted(wanted) for f in done.get(n, [])]


def _scanned(pages: Sequence[Page], scans: list[Page]) -> list[Found]:
    """The tables the text finders find on pages read by OCR, over a text layer drawn
    from their words (ocr_layer.py), their cells the words again."""
    layer, tokens = ocr_layer(pages, {p.number for p in scans})
    found = _camelot(layer, scans)
    found += _plumber(layer, scans, found, {})
    return [replace(f, read="ocr", rows=tuple(tuple(restore(text, tokens[f.page]) for text in row)
                                               for row in f.rows))
            for f in found]


def _camelot(source: bytes, pages: list[Page]) -> list[Found]:
    try:
        import camelot  # noqa: F401  (its handler below)
    except ImportError:
        return []
    found: list[Found] = []
    with tempfile.NamedTemporaryFile(suffix=".pdf") as file:
        file.write(source)
        file.flush()
        handler = _handler(file.name, [p.number for p in pages])
        drawing = _GrayDrawing()
        try:
            for flavor, options in _CAMELOT.items():
                if flavor == "lattice":
                    options = {**options, "backend": drawing, "use_fallback": False}
                # lattice draws the page to find its rules: a third of a second spent for
                # nothing on a page without any.
                numbers = [p.number for p in pages if flavor not in _ON_RULED_PAGES or p.ruled]
                if not numbers:
                    continue
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # "No tables found on page-2", and such
                        tables = handler(flavor, numbers, options)
                except Exception:  # noqa: BLE001  the engine's own reader is left
                    log.warning("camelot (%s) could not read the document", flavor, exc_info=True)
                    continue
                found += [Found(int(t.page),
                                tuple(tuple(str(v) for v in row) for row in t.df.values.tolist()),
                                _box(t), flavor, spans=_spans(t))
                          for t in tables]
        finally:
            drawing.close()
    return found


class _GrayDrawing:
    """camelot lattice's page image: drawn by PDFium in gray at the engine's own
    resolution (pages.PAGE_DPI, 150). camelot's default, 300 dpi in colour, cost 70 ms
    a page, about as much as its table finding; the rules it finds on the real sets
    were the same."""

    dpi = PAGE_DPI

    def __init__(self) -> None:
        self.documents: dict[str, Any] = {}

    def _drawn(self, pdf_path: str, page: int) -> Any:
        import pypdfium2 as pdfium

        if pdf_path not in self.documents:
            self.documents[pdf_path] = pdfium.PdfDocument(pdf_path)
        return self.documents[pdf_path][page - 1].render(scale=self.dpi / 72, grayscale=True)

    def to_array(self, pdf_path: str, page: int = 1) -> Any:
        import numpy as np

        gray = self._drawn(pdf_path, page).to_numpy()
        gray = gray.reshape(gray.shape[0], gray.shape[1], -1)[:, :, :1]
        return np.ascontiguousarray(np.repeat(gray, 3, axis=2))  # BGR, as OpenCV reads

    def convert(self, pdf_path: str, png_path: str, page: int = 1) -> None:
        self._drawn(pdf_path, page).to_pil().save(png_path)

    def close(self) -> None:
        for document in self.documents.values():
            document.close()
        self.documents.clear()


def _spans(table: Any) -> tuple[tuple[float, float], ...]:
    """Each row's (bottom, top) of a camelot table, in PDF points; none where unknown."""
    rows = getattr(table, "rows", None) or []
    if len(rows) != len(table.df.index):
        return ()
    return tuple((float(min(r)), float(max(r))) for r in rows)


def _handler(path: str, numbers: list[int]
             ) -> Callable[[str, list[int], dict[str, Any]], Any]:
    """camelot's tables of a flavour on some pages, each page's layout analysed once for
    every flavour (a tenth of the finders' time); camelot.read_pdf where its handler is
    not as this camelot version has it."""
    import camelot
    from camelot.handlers import PDFHandler

    class Handler(PDFHandler):
        layouts: dict[int, Any]

        def _get_layout(self, page: Any, **layout_kwargs: Any) -> Any:
            key = page.page_idx
            if key not in self.layouts:
                self.layouts[key] = super()._get_layout(page, **layout_kwargs)
            return self.layouts[key]

    if not callable(getattr(PDFHandler, "_get_layout", None)):
        return lambda flavor, pages, options: camelot.read_pdf(
            path, pages=",".join(map(str, pages)), flavor=flavor, **options)
    handler = Handler(path, pages=",".join(map(str, numbers)))
    handler.layouts = {}
    return lambda flavor, pages, options: handler.parse(flavor=flavor, pages=pages, **options)


def _plumber(source: bytes, pages: list[Page], camelots: list[Found],
             parsed: dict[int, Any]) -> list[Found]:
    """pdfplumber's table finder on the pages: its "lines" strategy where the page draws
    ruling lines, its "text" strategy on the pages where camelot found tables. Its
    tables are judged beside camelot's: where camelot's finders split or merge a table's
    columns, it may not. Only the tables `_rereads` keeps are read cell by cell (the
    most of its time). A page the loader kept parsed (DocumentCache.parsed_pages) is not
    parsed again."""
    import pdfplumber

    tabled = {f.page for f in camelots}

    found: list[Found] = []
    plumber = None
    try:
        if any(page.number not in parsed for page in pages):
            plumber = pdfplumber.open(io.BytesIO(source))
        for page in pages:
            opened = parsed.get(page.number) or plumber.pages[page.number - 1]  # type: ignore[union-attr]
            for flavor, settings in (("lines", {}), ("text", _PLUMBER_TEXT)):
                if not (page.ruled if flavor in _RULED else page.number in tabled):
                    continue
                for table in opened.find_tables(settings):
                    x0, top, x1, bottom = (float(v) for v in table.bbox)
                    # In points with y upwards from the page's foot, as camelot's.
                    box = (x0, page.height - bottom, x1, page.height - top)
                    if not _rereads(page.number, box, flavor, camelots):
                        continue
                    rows = tuple(tuple((text or "").strip() for text in row)
                                 for row in table.extract())
                    spans = tuple((page.height - float(r.bbox[3]), page.height - float(r.bbox[1]))
                                  for r in table.rows)
                    found.append(Found(page.number, rows, box, flavor,
                                       spans=spans if len(spans) == len(rows) else ()))
    except Exception:  # noqa: BLE001  camelot's tables and the engine's reader are left
        log.warning("pdfplumber could not find the document's tables", exc_info=True)
    finally:
        if plumber is not None:
            plumber.close()
        for page in pages:
            # Read once: its parsed objects are let go.
            kept = parsed.pop(page.number, None)
            if kept is not None:
                kept.close()
    return found


def _rereads(page: int, box: tuple[float, float, float, float], flavor: str,
             camelots: list[Found]) -> bool:
    """Whether pdfplumber's table is kept: in the place of one of camelot's (read again,
    its columns or rows perhaps split better), or drawn with rules where camelot found
    none. Its text strategy also runs a page's text together into one table, around the
    real ones or over a page of prose: alone, or where it matches none of camelot's
    tables, such a table is left out."""
    near = [_iou(f.box, box) for f in camelots if f.page == page]
    return any(share >= _SAME_PLACE for share in near) or (flavor in _RULED and not any(near))


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two boxes (x0, y0, x1, y1)."""
    both = _intersection(a, b)
    union = _area(a) + _area(b) - both
    return both / union if both > 0 and union > 0 else 0.0


def _intersection(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The area two boxes (x0, y0, x1, y1) share; 0 when they do not meet."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _area(box: tuple[float, ...]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _ruled_scan(page: Page) -> list[Found]:
    """The tables drawn with rules on a page read by OCR: camelot's finder of ruling
    lines over the page image (what its lattice flavour does on a PDF page), the OCR
    words of each cell of the grid their crossings make joined line by line."""
    if not page.png:
        return []
    try:
        import cv2
        import numpy as np
        from camelot.image_processing import (
            adaptive_threshold,
            find_contours,
            find_joints,
            find_lines,
        )
        from PIL import Image
    except ImportError:
        return []
    with Image.open(io.BytesIO(page.png)) as opened:
        image = opened.convert("RGB")
    width, height = image.size
    _, threshold = adaptive_threshold(cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR))
    vertical, _ = find_lines(threshold, direction="vertical")
    horizontal, _ = find_lines(threshold, direction="horizontal")
    tables = find_joints(find_contours(vertical, horizontal), vertical, horizontal)
    found = []
    for (left, bottom, right, top), joints in tables.items():
        # Crossings of one rule differ by a pixel or two: one column or row edge each.
        xs = _edges(sorted(x for x, _ in joints), _EDGE * width)
        ys = _edges(sorted(y for _, y in joints), _EDGE * height)
        if len(xs) < 3 or len(ys) < 3:
            continue
        cells: dict[tuple[int, int], list[Word]] = {}
        for word in page.words:
            x, y = word.center_x * width, word.center_y * height
            if xs[0] <= x <= xs[-1] and ys[0] <= y <= ys[-1]:
                place = (min(bisect.bisect(ys, y), len(ys) - 1) - 1,
                         min(bisect.bisect(xs, x), len(xs) - 1) - 1)
                cells.setdefault(place, []).append(word)
        rows = tuple(tuple("\n".join(line.text for line in group_lines(cells.get((r, c), [])))
                           for c in range(len(xs) - 1)) for r in range(len(ys) - 1))
        # In the page's points with y upwards, as camelot gives a text page's tables.
        box = (left / width * page.width, (height - bottom) / height * page.height,
               right / width * page.width, (height - top) / height * page.height)
        found.append(Found(page.number, rows, box, "lattice", "ocr"))
    return found


def _edges(values: list[int], tolerance: float) -> list[float]:
    """Coordinates closer than `tolerance` merged into their mean."""
    groups: list[list[int]] = []
    for value in values:
        if groups and value - groups[-1][-1] <= tolerance:
            groups[-1].append(value)
        else:
            groups.append([value])
    return [sum(g) / len(g) for g in groups]


def headed_pages(document: Document, target: dict[str, Any]) -> list[int]:
    """The pages where a few lines together name enough of the target's columns
    for a found table there to be judged its own (its header row, its headings stacked
    over up to five lines): the other pages are not given to the finders."""
    schema = list(target.get("header_schema") or [])
    if not schema:
        return []
    _, named = _tests(schema)
    treed = [bool((c.get("header_matching_validation_tree") or {}).get("rule_groups"))
             for c in schema]
    # Columns without a name or a tree cannot be found (nor are they counted in `named`).
    names = [[compact(t) for t in str(c.get("name", "")).split()]
             for c, tree in zip(schema, treed, strict=True)
             if not tree and compact(str(c.get("name", "")))]
    # Columns found by their header tree cannot be looked for by words: counted as there.
    by_tree = sum(treed)
    need = max(min(2, named), math.ceil(_PAGE_SHARE * named))
    pages = []
    for page in document.pages:
        if not page.words:
            continue
        # The page's lines grouped once for every target (page.cache), not per target.
        lines = [compact(line.text) for line in page_lines(page)]
        for top in range(len(lines)):
            text = "".join(lines[top: top + _STACKED])
            present = by_tree + sum(
                1 for tokens in names
                if tokens and 2 * sum(t in text for t in tokens if t) >= len(tokens))
            if present >= need:
                pages.append(page.number)
                break
    return pages


def _box(table: Any) -> tuple[float, float, float, float]:
    """A camelot table's box in PDF points (x0, y0, x1, y1); none known is all zeros."""
    x0, y0, x1, y1 = (float(v) for v in getattr(table, "_bbox", (0, 0, 0, 0)))
    return x0, y0, x1, y1


def compact(text: str) -> str:
    return _SPACE.sub("", text).lower()


_Tests = list[tuple[int, Callable[[str], bool]]]


def _tests(schema: list[dict[str, Any]]) -> tuple[_Tests, int]:
    """Each column's test of a header cell, and how many columns can be found by one."""
    tests: _Tests = []
    synonyms = schema_synonyms(schema)
    for index, column in enumerate(schema):
        name = compact(str(column.get("name", "")))
        by_name = partial(_named, name=name) if name else None
        # With a header tree: the tree on the heading as printed, else the name or a
        # heading of the same meaning (a tree says which headings the user means).
        test = heading_test(column, by_name) or (
            partial(_named, name=name, synonyms=synonyms[index]) if name else None)
        if test is not None:
            tests.append((int(column.get("position", 0)), test))
    return tests, len(tests)


@lru_cache(maxsize=1 << 16)
def _named(text: str, name: str, synonyms: frozenset[str] = frozenset()) -> bool:
    # Asked of every cell of every row against every column, the same texts again and
    # again (a row that may head a table, for each target): remembered.
    return fuzz.ratio(compact(text), name) >= _NAME_MATCH or (
        bool(synonyms) and column_key(text) in synonyms)


@dataclass(frozen=True)
class Judged:
    """A found table as a target's header schema reads it."""

    found: Found
    header: int  # index of the last header row
    columns: dict[int, int]  # schema position -> found column
    share: float  # how well the header row and the schema's names agree (an F1, 0..1)
    # How alike the matched headings are printed to the schema's names (0..1, spaces and
    # case aside): between targets whose names all match one table, "(95%CI)" is the
    # target that prints it so, not the one with "(95% CI)".
    closeness: float = 1.0


def _judge(found: Found, tests: _Tests, named: int, positions: list[int],
           names: dict[int, str] | None = None, untreed: dict[int, str] | None = None
           ) -> Judged | None:
    """The found table as the target's, if a row near its top names enough columns."""
    best: Judged | None = None
    for header in range(min(_HEADER_ROWS, len(found.rows) - 1)):
        options, texts = [], []
        for column in range(len(found.rows[header])):
            # A heading printed over several rows of a found table ("Accel/decel" /
            # "reduction and" / "smoothing"): its parts stacked, from any row above.
            stacks = {" ".join(found.rows[r][column] for r in range(top, header + 1)).strip()
                      for top in range(max(0, header + 1 - _STACKED), header + 1)}
            options.append([p for p, test in tests if any(test(t) for t in stacks if t)])
            texts.append(sorted(stacks))
        options = own_names_first(options, texts, untreed or {}, _named)
        chosen = assign(options)  # found column -> schema position
        share = len(chosen) / named if named else 0.0
        if len(chosen) < min(2, named) or share < _MIN_SHARE:
            continue
        # Headings the schema does not name speak against the table: "no. Rate (95% CI)"
        # three times over is another table than the same headings twice.
        headings = sum(1 for text in found.rows[header] if text.strip())
        share = header_share(named, len(chosen), headings)
        if best is None or share > best.share:
            columns = {position: column for column, position in chosen.items()}
            last = _wrapped_heading(found.rows, header)
            best = Judged(found, last, _beside_values(
                _fill(columns, positions, len(found.rows[header])), found.rows, last),
                share, _closeness(found.rows, header, chosen, names or {}))
    return best


def _beside_values(columns: dict[int, int], rows: tuple[tuple[str, ...], ...],
                   header: int) -> dict[int, int]:
    """The columns with a heading over an empty column moved to the column of values
    beside it that no heading names: a finder set "Nombre Municipio" a column right of
    its names ("Aguascalientes" under no heading, nothing under the heading)."""
    body = rows[header + 1:]
    if not body:
        return columns

    def filled(column: int) -> int:
        return sum(1 for row in body if column < len(row) and row[column].strip())

    def headed(column: int) -> bool:
        return any(column < len(row) and row[column].strip() for row in rows[:header + 1])

    taken = set(columns.values())
    moved = dict(columns)
    for position, column in columns.items():
        if filled(column):
            continue
        for beside in (column - 1, column + 1):
            if (0 <= beside < len(rows[header]) and beside not in taken and not headed(beside)
                    and filled(beside) * 2 >= len(body)):
                moved[position] = beside
                taken.add(beside)
                break
    return moved


def _closeness(rows: tuple[tuple[str, ...], ...], header: int, chosen: dict[int, int],
               names: dict[int, str]) -> float:
    """The mean likeness (rapidfuzz's ratio, 0..1) of each matched heading, its rows
    stacked as `_judge` stacks them, to its column's name without spaces or case; a
    column without a name counts as alike."""
    likeness = []
    for column, position in chosen.items():
        name = names.get(position, "")
        if not name:
            likeness.append(1.0)
            continue
        likeness.append(max(fuzz.ratio(compact(" ".join(
            rows[r][column] for r in range(top, header + 1))), name)
            for top in range(max(0, header + 1 - _STACKED), header + 1)) / 100)
    return sum(likeness) / len(likeness) if likeness else 0.0


def _wrapped_heading(rows: tuple[tuple[str, ...], ...], header: int) -> int:
    """The last row of a header whose headings wrap onto the rows under it ("Public" over
    "Health"): rows with no digit (a value such as "PO-3333" is a row), nothing in the
    first column (where a group of rows is named, "Sex") and text only under headings.
    Empty rows between are passed over: pdfplumber's text strategy over a page read by
    OCR gives one between lines ("Public" / "" / "Health")."""
    while True:
        below = header + 1
        while below < len(rows) and not any(text.strip() for text in rows[below]):
            below += 1
        if below == len(rows):
            break
        heading = rows[header]
        filled = [i for i, text in enumerate(rows[below]) if text.strip()]
        if rows[below][0].strip() or any(
                i >= len(heading) or not heading[i].strip()
                or any(c.isdigit() for c in rows[below][i]) for i in filled):
            break
        header = below
    return header


def _fill(columns: dict[int, int], positions: list[int], width: int) -> dict[int, int]:
    """Columns without a name (or not found) placed in order between the found ones."""
    filled = dict(columns)
    anchors = sorted(filled.items())
    bounds = [(-1, -1), *anchors, (max(positions) + 1, width)]
    for (p0, c0), (p1, c1) in zip(bounds, bounds[1:], strict=False):
        missing = [p for p in positions if p0 < p < p1 and p not in filled]
        free = list(range(c0 + 1, c1))
        if missing and len(missing) == len(free):
            filled.update(zip(missing, free, strict=True))
    return filled


def _body(table: Judged, trees: dict[int, Any], others: Sequence[tuple[_Tests, int]] = ()
          ) -> tuple[list[tuple[str, ...]], int]:
    """The rows under the header, up to the totals: a row opening with "Subtotal" or
    "Total" ends the items (as in tables.py), and so does a row whose cells most of the
    columns' rules refuse ("Total Due:", "", "", "$399.99" under Qty and Price). A row
    that heads a table of the target or of another table target (`others`: the tests and
    named columns of each) ends it too: a finder read two tables one under the other as
    one. Also the index of the found table's first row left out."""
    body: list[tuple[str, ...]] = []
    ruled = [p for p, tree in trees.items() if tree and tree.get("rule_groups")]
    end = len(table.found.rows)
    tight = _tight_rows(table)
    for index, row in enumerate(table.found.rows[table.header + 1:], table.header + 1):
        if not any(text.strip() for text in row):
            continue
        if any(_heads(row, tests, named) for tests, named in others):
            end = index
            break
        wrapped = index in tight and index + 1 not in tight
        if (ruled or wrapped) and body and _continues(row, body[-1]):
            # "Consulting services," / "March 2024": a description wrapped onto a row
            # of its own in the found table is one cell of the row above. Where the
            # columns' rules say which hold numbers, or where the row stands closer to
            # the one above than rows do (and the next does not: "Defendants" over a
            # row of numbers over "Sentenced" is one label centred on its row): in a
            # table of names alone, a row with one cell is as often a heading of the rows
            # under it, set at a row's distance.
            body[-1] = tuple(f"{above}\n{text}" if text.strip() else above
                             for above, text in zip(body[-1], row, strict=False))
            continue
        first = next(text for text in row if text.strip())
        if ruled and body and (closes_items(first) or _refused(row, table, trees, ruled)):
            end = index
            break
        body.append(row)
    return body, end


# A row whose height is under this share of the table's typical row height is a line
# wrapped from the row above: "American Indian/Alaska" over "Native" (9.2 points against
# rows of 11.8), where a heading of the rows under it is set at a row's height or more.
_TIGHT = 0.85


def _tight_rows(table: Judged) -> set[int]:
    """Indexes of the found table's rows set closer than its rows are (its finder's
    row spans; none where it gives none)."""
    spans = table.found.spans
    if len(spans) != len(table.found.rows) or len(spans) < table.header + 4:
        return set()
    heights = [top - bottom for bottom, top in spans]
    typical = statistics.median(heights[table.header + 1:])
    # The last row's span ends at the table's edge, whatever its line's height: a
    # footnote under the table ("Source: ...") is not a wrapped line of the total.
    return {i for i, height in enumerate(heights[:-1]) if height < _TIGHT * typical}


def _heads(row: tuple[str, ...], tests: _Tests, named: int) -> bool:
    """Whether the row names enough of a schema's columns to be its header row."""
    chosen = assign([[p for p, test in tests if text.strip() and test(text)] for text in row])
    return len(chosen) >= max(2, math.ceil(_MIN_SHARE * named))


def _continues(row: tuple[str, ...], above: tuple[str, ...]) -> bool:
    """A row with one cell of text, under a row whose cell there is text too, and which
    has numbers elsewhere: the rest of a wrapped description."""
    filled = [i for i, text in enumerate(row) if text.strip()]
    if len(filled) != 1 or filled[0] >= len(above):
        return False
    column = filled[0]
    numbers = [i for i, text in enumerate(above) if i != column and parse_number(text) is not None]
    return bool(numbers) and bool(above[column].strip()) and parse_number(above[column]) is None \
        and parse_number(row[column]) is None


def _refused(row: tuple[str, ...], table: Judged, trees: dict[int, Any],
             ruled: list[int]) -> bool:
    refused = 0
    for position in ruled:
        column = table.columns.get(position)
        text = row[column].strip() if column is not None and column < len(row) else ""
        refused += validates(text, trees[position]) is False
    return refused > len(ruled) / 2


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two boxes (x0, y0, x1, y1) share more than half of the smaller one."""
    both = _intersection(a, b)
    if both <= 0:
        return False
    smaller = min(_area(a), _area(b))
    return both > 0.5 * smaller if smaller > 0 else True


def _judged(document: Document, target: dict[str, Any], pages: list[int]
            ) -> list[Judged | None]:
    """The target's judgement of each table found on the pages, remembered per document,
    schema and pages."""
    schema = list(target.get("header_schema") or [])
    memo = document.cache.judgements
    key = json.dumps([schema, pages], sort_keys=True, default=str)
    if key not in memo:
        tests, named = _tests(schema)
        positions = sorted(int(c.get("position", 0)) for c in schema)
        names = {int(c.get("position", 0)): compact(str(c.get("name", ""))) for c in schema}
        memo[key] = [_judge(f, tests, named, positions, names, untreed_names(schema, compact))
                     if schema else None
                     for f in found_tables(document, pages)]
    return memo[key]


@dataclass
class Candidate:
    """A table one reader proposes for a target: a finder's table the target's header
    schema recognises (`judged`), or one the engine's own reader read (`own`, its index
    among that reader's tables). `grid` is its body, a list of each column's text in the
    schema's order; `features` the evidence it is chosen by (`_features`)."""

    source: str  # the finder's flavour, or "own"
    page: int
    box: tuple[float, float, float, float]  # PDF points, y upwards
    share: float
    grid: list[list[str]]
    judged: Judged | None = None
    own: int | None = None
    extra_columns: float = 0.0  # the share of the header's cells the schema does not name
    header: int = 0  # the header's last row in the finder's table
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0


@dataclass(frozen=True)
class Proposal:
    """What `choose` saw of one candidate (`recording`): its target, its place among the
    overlapping candidates, its evidence and body, whether it was chosen."""

    target: str
    place: int  # candidates at one place (same page, overlapping boxes) share it
    source: str
    page: int
    features: dict[str, float]
    grid: list[list[str]]
    chosen: bool


_RECORDING: ContextVar[list[Proposal] | None] = ContextVar("proposals", default=None)
_SCORING: ContextVar[dict[str, Any] | None] = ContextVar("scoring", default=None)
_SCORING_FILE = "candidates.json"


@contextmanager
def recording() -> Iterator[list[Proposal]]:
    """Every candidate `choose` weighs while the block runs, in a list (for fitting the
    scoring: bench/tables.py)."""
    proposals: list[Proposal] = []
    token = _RECORDING.set(proposals)
    try:
        yield proposals
    finally:
        _RECORDING.reset(token)


@contextmanager
def scoring(model: dict[str, Any] | None) -> Iterator[None]:
    """Candidates chosen by `model` (as `load_scoring` gives it) while the block runs:
    a scoring fitted without some documents, measured on them."""
    token = _SCORING.set(model)
    try:
        yield
    finally:
        _SCORING.reset(token)


@cache
def load_scoring() -> dict[str, Any]:
    """The shipped scoring of candidates (candidates.json, fitted by `make train`):
    {"weights": {feature: weight}, "fitted_on": ...}; {} when there is none."""
    path = resources.files(__package__).joinpath(_SCORING_FILE)
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def found_candidates(document: Document, target: dict[str, Any],
                     rivals: Sequence[dict[str, Any]] = ()
                     ) -> tuple[list[Candidate], dict[int, float]]:
    """The found tables the target's header schema recognises, each a candidate with its
    body read (`_body`); and, by id of a candidate's judgement, the best share a rival
    target's schema has of the same table. A table a rival's schema fits better is the
    rival's, not a candidate."""
    schema = list(target.get("header_schema") or [])
    if not schema:
        return [], {}
    # The pages any of the targets may find its table on: rivals judge the same tables.
    pages = sorted({n for t in (target, *rivals) for n in headed_pages(document, t)})
    mine = _judged(document, target, pages)
    others = [_judged(document, rival, pages) for rival in rivals]
    positions = sorted(int(c.get("position", 0)) for c in schema)
    trees = {int(c.get("position", 0)): c.get("extracted_value_validation_tree") for c in schema}
    # A row heading the target's own table again starts another table.
    others_tests = [_tests(schema), *(_tests(list(r.get("header_schema") or []))
                                      for r in rivals if r.get("header_schema"))]
    found: list[Candidate] = []
    contested: dict[int, float] = {}
    for index, judgement in enumerate(mine):
        rival = [(theirs.share, theirs.closeness) for other in others
                 if (theirs := other[index]) is not None]
        if judgement is None or (judgement.share, judgement.closeness) < max(
                rival, default=(0.0, 0.0)):
            continue
        contested[id(judgement)] = max(rival, default=(0.0, 0.0))[0]
        rows, end = _body(judgement, trees, others_tests)
        grid = [[without_leaders(row[c].strip())
                 if (c := judgement.columns.get(p)) is not None and c < len(row)
                 else "" for p in positions] for row in rows]
        width = len(judgement.found.rows[judgement.header])
        box = judgement.found.box
        spans = judgement.found.spans[:end]
        if spans and end < len(judgement.found.rows):
            # The rows read, where the finder's table runs on into another.
            box = (box[0], min(b for b, _ in spans), box[2], max(t for _, t in spans))
        found.append(Candidate(judgement.found.flavor, judgement.found.page, box,
                               judgement.share, grid, judged=judgement,
                               extra_columns=max(0, width - len(positions)) / max(1, width),
                               header=judgement.header))
    return found, contested


def own_candidates(document: Document, target: dict[str, Any], cells: Sequence[EngineCell],
                   places: Sequence[OwnTable], rivals: Sequence[dict[str, Any]] = ()
                   ) -> list[Candidate]:
    """The engine's own reader's tables (its `cells`, read at `places`) as candidates;
    as a found table's body (`_body`), each ends at a row that heads a rival's table."""
    schema = list(target.get("header_schema") or [])
    others = [_tests(list(r.get("header_schema") or [])) for r in rivals
              if r.get("header_schema")]
    positions = sorted(int(c.get("position", 0)) for c in schema)
    _, named = _tests(schema)
    pages = {p.number: p for p in document.pages}
    found = []
    for place in places:
        page = pages.get(place.page)
        if page is None:
            continue
        mine = [c for c in cells if c.table_index == place.index]
        rows = max((c.row for c in mine), default=-1) + 1
        grid = [["" for _ in positions] for _ in range(rows)]
        at = {p: i for i, p in enumerate(positions)}
        for c in mine:
            if c.column in at:
                grid[c.row][at[c.column]] = c.text.strip()
        ends = [r for r, row in enumerate(grid)
                if any(_heads(tuple(row), tests, count) for tests, count in others)]
        grid = grid[:ends[0]] if ends else grid
        if not grid:
            continue
        assigned = sum(b.column is not None for b in place.bands)
        share = 2 * assigned / (named + max(len(place.bands), assigned)) if named else 0.0
        x0, y0, x1, y1 = place.box
        box = (x0 * page.width, (1 - y1) * page.height, x1 * page.width, (1 - y0) * page.height)
        found.append(Candidate("own", place.page, box, share, grid, own=place.index,
                               extra_columns=(len(place.bands) - assigned)
                               / max(1, len(place.bands))))
    return found


def choose(document: Document, target: dict[str, Any], candidates: list[Candidate],
           record: bool = True) -> list[Candidate]:
    """The target's tables among the candidates, in reading order.

    Candidates whose boxes overlap on a page are one place, one table: of them the one
    the scoring rates best (a weighted sum of its evidence, `_features`; the weights
    fitted on the table sets' tuning halves by `make train`, candidates.json); without a
    scoring, the best headed, the finders in _FLAVORS' order on a tie. A place is the
    target's when its best header fits nearly as well as the best place's (a table
    continued on the next page; not the tables that share some of its headings). Places
    the engine's own reader alone read count only where no finder's table is the
    target's: a finder's box is the table's, the reader's a guess. `record`: whether a
    `recording` block gets the candidates."""
    if not candidates:
        return []
    places = _places(candidates)
    pages = {p.number: p for p in document.pages}
    model = _SCORING.get()
    if model is None:
        model = load_scoring()
    weights = model.get("weights") or {}
    for place in places:
        for candidate in place:
            candidate.features = _features(candidate, place, pages.get(candidate.page))
            candidate.score = (sum(weights.get(k, 0.0) * v for k, v in candidate.features.items())
                               if weights else candidate.share)
    found = [p for p in places if any(c.source != "own" for c in p)]
    kept = found or places
    best = max(max(c.share for c in p) for p in kept)
    kept = [p for p in kept if max(c.share for c in p) >= best - _SHARE_MARGIN]
    chosen = [max(p, key=lambda c: (c.score, c.share, -_SOURCES.index(c.source)))
              for p in kept]
    recorded = _RECORDING.get()
    if recorded is not None and record:
        name = str(target.get("id", ""))
        for number, place in enumerate(places):
            recorded += [Proposal(name, number, c.source, c.page, dict(c.features), c.grid,
                                  any(c is k for k in chosen)) for c in place]
    # In reading order: page, then top to bottom (PDF y grows upwards).
    return sorted(chosen, key=lambda c: (c.page, -c.box[3]))


def _places(candidates: list[Candidate]) -> list[list[Candidate]]:
    """Candidates grouped by place: on one page, boxes overlapping (`_overlap`), directly
    or through another candidate."""
    parent = list(range(len(candidates)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(len(candidates)), 2):
        a, b = candidates[i], candidates[j]
        if a.page == b.page and _overlap(a.box, b.box):
            parent[root(i)] = root(j)
    groups: dict[int, list[Candidate]] = {}
    for i, candidate in enumerate(candidates):
        groups.setdefault(root(i), []).append(candidate)
    return list(groups.values())


#: The evidence a candidate is scored by (`_features`), each 0..1 or about.
FEATURES = ("share", "extra_columns", "consistent", "regular", "lone", "fill", "empty_columns",
            "multiline", "agree", "agree_column", "covered", "rows", "header_below",
            "ruled", *(f"by_{s}" for s in _SOURCES))


def _features(candidate: Candidate, place: list[Candidate], page: Page | None
              ) -> dict[str, float]:
    """Measurable evidence of a candidate, beside the others at its place: how well its
    header names the schema's columns (and how many headings it has the schema lacks);
    how consistent each column's kind is down its rows (numbers or words); how regular
    its rows are (as filled as most, one cell alone); how many of its cells another
    finder reads alike (at the same row and column, or anywhere in the same column); how
    much of the text in the place's box its cells hold; its rows beside the most any
    candidate there reads; which finder proposed it and whether it follows rules."""
    grid = candidate.grid
    width = max(1, len(grid[0]) if grid else 1)
    fills = [sum(bool(t) for t in row) for row in grid]
    columns = [[row[i] for row in grid if row[i]] for i in range(width)] if grid else []
    kinds = [max(share := sum(parse_number(t) is not None for t in texts) / len(texts),
                 1 - share) for texts in columns if len(texts) >= 2]
    modal = max(set(fills), key=fills.count) if fills else 0
    cells = {(r, i): compact(t) for r, row in enumerate(grid) for i, t in enumerate(row) if t}
    by_column = {(i, t) for (_, i), t in cells.items()}
    others = [c for c in place if c.source != candidate.source]
    agree = agree_column = 0.0
    if cells and others:
        for other in others:
            theirs = {(r, i): compact(t) for r, row in enumerate(other.grid)
                      for i, t in enumerate(row) if t}
            agree = max(agree, sum(theirs.get(k) == v for k, v in cells.items()) / len(cells))
            column_texts = {(i, t) for (_, i), t in theirs.items()}
            agree_column = max(agree_column, len(by_column & column_texts) / max(1, len(by_column)))
    covered = 0.0
    if page is not None and grid:
        x0 = min(c.box[0] for c in place) / page.width
        x1 = max(c.box[2] for c in place) / page.width
        top = 1 - max(c.box[3] for c in place) / page.height
        bottom = 1 - min(c.box[1] for c in place) / page.height
        inside = sum(1 for w in page.words
                     if x0 <= w.center_x <= x1 and top <= w.center_y <= bottom)
        tokens = sum(len(t.split()) for row in grid for t in row)
        covered = min(1.5, tokens / inside) if inside else 0.0
    most = max(len(c.grid) for c in place)
    rows = len(grid) / most if most else 0.0
    # Two finders that read the same part of a table agree on that part only: agreement
    # counts by the share of the place's rows the candidate holds (cross-validated over
    # the tuning halves' documents, chosen F1 0.864 -> 0.867).
    agree, agree_column = agree * rows, agree_column * rows
    features = {
        "share": candidate.share,
        "extra_columns": candidate.extra_columns,
        "consistent": statistics.fmean(kinds) if kinds else 0.5,
        "regular": sum(f == modal for f in fills) / len(fills) if fills else 0.0,
        "lone": sum(f == 1 for f in fills) / len(fills) if fills else 0.0,
        "fill": sum(fills) / (len(fills) * width) if fills else 0.0,
        "empty_columns": sum(not texts for texts in columns) / width if columns else 1.0,
        "multiline": sum("\n" in t for row in grid for t in row) / max(1, len(cells)),
        "agree": agree,
        "agree_column": agree_column,
        "covered": covered,
        "rows": rows,
        "header_below": float(candidate.header > 0),
        "ruled": float(candidate.source in _RULED),
    }
    features.update({f"by_{s}": float(candidate.source == s) for s in _SOURCES})
    return features


def judged_cells(document: Document, target: dict[str, Any],
                 rivals: Sequence[dict[str, Any]] = ()) -> list[EngineCell]:
    """Cells of the found tables the target's header schema recognises, by table, chosen
    among overlapping ones by `choose`; [] when none does (the engine's own reader then
    decides).

    `rivals` are the configuration's other table targets: a found table is the
    target's only if no rival's schema fits it better (tables under similar headings
    go each to the target named most like it).
    """
    found, contested = found_candidates(document, target, rivals)
    return table_cells(target, choose(document, target, found), contested)


def table_cells(target: dict[str, Any], chosen: Sequence[Candidate],
                contested: dict[int, float] | None = None,
                own: Sequence[EngineCell] = ()) -> list[EngineCell]:
    """The cells of the chosen candidates, table after table: a found table's with their
    evidence and calibrated confidence (`_evidence`), the engine's own reader's as it
    read them (`own`)."""
    schema = list(target.get("header_schema") or [])
    positions = sorted(int(c.get("position", 0)) for c in schema)
    trees = {int(c.get("position", 0)): c.get("extracted_value_validation_tree") for c in schema}
    cells: list[EngineCell] = []
    for index, candidate in enumerate(chosen):
        if candidate.judged is None:
            cells += [replace(c, table_index=index) for c in own
                      if c.table_index == candidate.own and c.row < len(candidate.grid)]
            continue
        table, grid = candidate.judged, candidate.grid
        numeric = [_numeric_share([line[i] for line in grid]) for i in range(len(positions))]
        # Once a wrapped line is taken for a row of its own, every row under it is off by
        # one: one-cell rows above a cell speak against its place.
        lone_above = list(itertools.accumulate(
            (sum(bool(t) for t in line) == 1 for line in grid), initial=0))
        for number, line in enumerate(grid):
            for i, (position, text) in enumerate(zip(positions, line, strict=True)):
                valid = validates(text, trees.get(position))
                evidence = _evidence(table, grid, number, i, numeric[i], valid,
                                     lone_above[number])
                evidence["contested"] = (contested or {}).get(id(table), 0.0)
                evidence["raw"] = _JUDGED * table.share * (_INVALID if valid is False else 1.0)
                confidence = cell_confidence(evidence, evidence["raw"])
                cells.append(EngineCell(text, index, number, position, confidence, evidence))
    return cells


def _numeric_share(texts: list[str]) -> float:
    filled = [t for t in texts if t]
    return sum(parse_number(t) is not None for t in filled) / len(filled) if filled else 0.0


def _evidence(table: Judged, grid: list[list[str]], row: int, column: int,
              numeric: float, valid: bool | None, lone_above: int) -> dict[str, float]:
    """How a cell of a judged table was read, for its calibrated confidence: what makes
    a found table's cell land off its place (a row split in two, a heading taken for a
    row, a number in a column of words) shows in its table, row and column."""
    text = grid[row][column]
    filled = sum(bool(t) for t in grid[row])
    is_number = parse_number(text) is not None if text else False
    return {
        "share": table.share,
        "lattice": float(table.found.flavor in _RULED),
        "ocr": float(table.found.read == "ocr"),
        "above_header": float(table.header > 0),
        "extra_columns": float(len(table.found.rows[table.header]) > len(grid[row])),
        "width": len(table.found.rows[table.header]) / len(grid[row]),
        "few_rows": float(len(grid) < 3),
        "empty": float(not text),
        "number": float(is_number),
        "column_numeric": numeric,
        "odd_kind": float(bool(text) and is_number != (numeric > 0.5)),
        "row_fill": filled / len(grid[row]),
        "lone": float(filled == 1),
        "lines": float(min(text.count("\n"), 3)),
        "first_row": float(row == 0),
        "lone_above": math.log1p(lone_above),
        "depth": row / len(grid),
        "last_row": float(row == len(grid) - 1),
        "invalid": float(valid is False),
        # The column has rules and the cell passes them (its kind is the column's).
        "valid": float(valid is True),
    }
