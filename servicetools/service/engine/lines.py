"""Words grouped into text lines: a page's lines, a search area's, and a document's
text in reading order."""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .page_model import Document, Page, Word

__all__ = ["Line", "area_lines", "document_text", "group_lines", "page_lines"]

# How much taller or shorter than a line's typical word a word of it may be (group_lines).
_MAX_RATIO = 3.0


@dataclass
class Line:
    words: list[Word]
    page: int = 1

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)

    @property
    def x0(self) -> float:
        return min(word.x0 for word in self.words)

    @property
    def x1(self) -> float:
        return max(word.x1 for word in self.words)

    @property
    def y0(self) -> float:
        return min(word.y0 for word in self.words)

    @property
    def y1(self) -> float:
        return max(word.y1 for word in self.words)

    @property
    def height(self) -> float:
        return statistics.median(word.height for word in self.words)


def group_lines(words: Iterable[Word], page: int = 1) -> list[Line]:
    """Lines top to bottom, words left to right.

    A word joins a line when it overlaps the line's typical extent (the median top and
    bottom of its words) by half of the smaller height: robust to mixed font sizes on
    one baseline, not to skewed scans. The typical extent, not the union of the words'
    extents: a union grows with each word, so a word set a little between two rows (a
    superscript, a stained scan's slanted word) joins both and row after row runs into
    one line. A word more than `_MAX_RATIO` times taller or shorter than the line's
    typical word (one printed sideways, as tall as many rows) starts a line of its own.
    """
    lines: list[list[Word]] = []
    tops: list[list[float]] = []  # each line's tops and bottoms, sorted: their medians
    bottoms: list[list[float]] = []  # are the line's typical extent
    bands: list[tuple[float, float]] = []
    for word in sorted(words, key=lambda w: (w.center_y, w.x0)):
        for index in range(len(lines) - 1, max(-1, len(lines) - 4), -1):
            top, bottom = bands[index]
            typical = bottom - top
            if not typical / _MAX_RATIO <= word.height <= _MAX_RATIO * typical:
                continue
            if min(bottom, word.y1) - max(top, word.y0) >= 0.5 * min(typical, word.height):
                lines[index].append(word)
                bisect.insort(tops[index], word.y0)
                bisect.insort(bottoms[index], word.y1)
                bands[index] = (_median(tops[index]), _median(bottoms[index]))
                break
        else:
            lines.append([word])
            tops.append([word.y0])
            bottoms.append([word.y1])
            bands.append((word.y0, word.y1))
    _settle(lines, bands)
    result = [Line(sorted(line, key=lambda w: w.x0), page) for line in lines if line]
    result.sort(key=lambda line: (line.y0 + line.y1) / 2)
    return result


def _settle(lines: list[list[Word]], bands: list[tuple[float, float]]) -> None:
    """Moves each word to the neighbouring line that holds it more than its own does.

    Words join lines in the order of their centres, so a word printed a little above
    its neighbour on the left ("Muster" | "GmbH" in an address window, beside a taller
    "Rechnungsnummer:" column) may join the column's line before its own line exists.
    Once every line is known, a word overlapping another line's typical extent more
    than its own's, with no word of that line beside it, belongs there.
    """
    def overlap(band: tuple[float, float], word: Word) -> float:
        return min(band[1], word.y1) - max(band[0], word.y0)

    moves: list[tuple[int, Word, int]] = []
    for index, line in enumerate(lines):
        if len(line) < 2:
            continue  # a word alone already has its own line
        for word in line:
            own = overlap(bands[index], word)
            for other in (index - 1, index + 1, index - 2, index + 2):
                if not 0 <= other < len(lines) or other == index:
                    continue
                typical = bands[other][1] - bands[other][0]
                if not typical / _MAX_RATIO <= word.height <= _MAX_RATIO * typical:
                    continue
                if overlap(bands[other], word) > own + 0.1 * word.height and not any(
                        w.x0 < word.x1 and word.x0 < w.x1 for w in lines[other]):
                    moves.append((index, word, other))
                    break
    for index, word, other in moves:
        lines[index].remove(word)
        lines[other].append(word)


def _median(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def document_text(document: Document) -> str:
    """The words of all pages, line by line in reading order; pages apart by a blank line."""
    return "\n\n".join(
        "\n".join(line.text for line in group_lines(page.words)) for page in document.pages
    )


def page_lines(page: Page) -> list[Line]:
    """The page's lines, grouped once (page.cache): every group reading the whole page
    shares them."""
    if page.cache.lines is None:
        page.cache.lines = group_lines(page.words, page.number)
    return list(page.cache.lines)


def area_lines(document: Document, search_area: str, configuration: dict[str, Any]) -> list[Line]:
    """Lines of every page, or of the configured area's page and box (word centres inside)."""
    if search_area == "all":
        return [line for page in document.pages for line in page_lines(page)]
    area = (configuration.get("search_areas") or {}).get(search_area)
    if not isinstance(area, dict):
        # An unknown area id is a configuration error caught at load time; reading the
        # whole document is the forgiving answer if one slips through.
        return area_lines(document, "all", configuration)
    number = int(area.get("page", 1))
    x0, y0, x1, y1 = (float(v) for v in area.get("box", (0.0, 0.0, 1.0, 1.0)))
    lines: list[Line] = []
    for page in document.pages:
        if page.number != number:
            continue
        inside = [w for w in page.words if x0 <= w.center_x <= x1 and y0 <= w.center_y <= y1]
        lines.extend(group_lines(inside, page.number))
    return lines
