"""Tables: a header row found from the header schema, column bands, rows until the table ends.

Unruled and ruled tables are read the same way, from word positions alone: the
header's phrases give the columns, the midpoints between neighbouring header phrases
give the column bands. Every header found starts a new table, so a table continued
under a repeated header on the next page is a new table of the same target.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from rapidfuzz import fuzz

from ...wire.values import parse_number
from .lines import Line
from .page_model import Word
from .results import EngineCell
from .shapes import header_test, validates
from .vocabulary import column_key, column_synonyms

# A line that starts like this closes the line items: the totals follow. A total may
# follow the count of items ("7 TOTAL 75.70" under "Qty Description Amount").
_TOTALS = re.compile(
    r"^\s*(sub[\s-]?total|total|grand\s*total|tax|vat|gst|balance|amount\s*due|net\s*amount"
    r"|\d{1,3}\s+(sub[\s-]?total|total|grand\s*total))\b",
    re.IGNORECASE,
)
# An amount with decimals ("293.52", "1.234,50"): a line holding one is no header row.
_AMOUNT_IN_LINE = re.compile(r"\d[.,]\d{2}(?!\d)")
# Gaps in units of the line's mean character width / of the row height.
_PHRASE_GAP = 1.5
_END_GAP = 2.5
_CONTINUATION_GAP = 0.4
_EMPTY_CELL = 0.5
_MISSED_CELL = 0.3
# How far (page fraction) row words may start left of the first header phrase.
_MARGIN = 0.05
_INVALID_CELL = 0.7
# Stripped from both ends of a header cell before it is matched.
_HEADER_PUNCTUATION = " .:;,*#()[]"
# The longest run of words one header cell of a longer phrase can be.
_HEADER_WORDS = 4
# Header rows worth an exhaustive column assignment (product of choices per cell).
_MAX_ASSIGNMENTS = 4096


@dataclass
class Band:
    x0: float
    x1: float
    column: int | None  # header_schema position, None for a column the schema lacks


@dataclass
class Header:
    line: int
    bands: list[Band]
    height: float


@dataclass(frozen=True)
class OwnTable:
    """Where the engine's own reader read one of its tables, for the choice among the
    candidates (candidates.py): its index among the reader's tables, its page, its box
    (page fractions, y downwards: header row to last row) and its header's bands."""

    index: int
    page: int
    box: tuple[float, float, float, float]
    bands: tuple[Band, ...]


def closes_items(text: str) -> bool:
    """Whether a line (or a row's first cell) starting so closes the line items."""
    return bool(_TOTALS.match(text))


def phrases(line: Line) -> list[list[Word]]:
    """The line's words split at gaps wider than a character or two."""
    chars = sum(len(w.text) for w in line.words)
    char = sum(w.x1 - w.x0 for w in line.words) / max(1, chars)
    groups: list[list[Word]] = []
    for word in line.words:
        if groups and word.x0 - groups[-1][-1].x1 <= _PHRASE_GAP * char:
            groups[-1].append(word)
        else:
            groups.append([word])
    return groups


_Columns = list[tuple[int, Callable[[str], bool]]]  # schema position, header test


def header_tests(schema: list[dict[str, Any]]) -> _Columns:
    """Each column's test of a header cell: its header tree on the heading as printed, or
    a fuzzy match of its name or a heading of the same meaning (`heading_test`,
    `schema_synonyms`)."""
    columns: _Columns = []
    synonyms = schema_synonyms(schema)
    for index, column in enumerate(schema):
        name = str(column.get("name", "")).lower()
        # A header tree says which headings the user means; the synonyms stand in for
        # one where the user gave a name alone.
        tree = heading_test(column, partial(_fuzzy_name, name=name))
        columns.append((int(column.get("position", 0)),
                        tree or partial(_fuzzy_name, name=name, synonyms=synonyms[index])))
    return columns


def untreed_names(schema: list[dict[str, Any]], key: Callable[[str], str]) -> dict[int, str]:
    """The names (as `key` gives them) of the schema's columns without a header tree, by
    position: those whose synonyms count, and give way to a heading of the name itself
    (`own_names_first`)."""
    return {int(c.get("position", 0)): key(str(c.get("name", ""))) for c in schema
            if not ((tree := c.get("header_matching_validation_tree")) and tree.get("rule_groups"))}


def schema_synonyms(schema: list[dict[str, Any]]) -> list[frozenset[str]]:
    """Per column of the schema, the headings that print its name in other words ("Qty",
    "Menge" for "Quantity": `vocabulary.column_synonyms`), less the names of the schema's
    other columns: with both "Amount" and "Total" asked for, each keeps its own."""
    names = [column_key(str(column.get("name", ""))) for column in schema]
    return [column_synonyms(name) - {n for n in names if n != name} for name in names]


def heading_test(column: dict[str, Any], by_name: Callable[[str], bool] | None
                 ) -> Callable[[str], bool] | None:
    """A column's test of a heading cell when it has a header tree (None without one):
    the tree passes one of the heading's printed forms (`printed_forms`: a regex written
    for the heading's text joined by spaces matches it printed over two lines,
    hyphenated or with a footnote mark), or else `by_name` (the column's name) passes
    the cell, so that a tree never loses a heading the name alone would find."""
    tree = column.get("header_matching_validation_tree")
    if not (tree and tree.get("rule_groups")):
        return None
    by_tree = header_test(tree)
    memo: dict[str, bool] = {}  # the same heading texts are asked again and again

    def test(text: str) -> bool:
        found = memo.get(text)
        if found is None:
            found = any(by_tree(form) for form in printed_forms(text)) or (
                by_name is not None and by_name(text))
            memo[text] = found
        return found

    return test


# A footnote mark at the end of a heading's line: "(1)", "(a)", "*", "†", superscript
# digits, or a digit or two set against a word ("Debt1").
_FOOTNOTE = re.compile(
    r"(?:\s*(?:\(\d{1,2}\)|\([a-z]\)|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+)|(?<=[^\W\d_]{3})\d{1,2})$")
# A word broken at a line's end by a hyphen ("Preva-" / "lence"); the line break may
# already be a space, where the lines of a stacked heading were joined.
_BROKEN = re.compile(r"(?<=[^\W\d_])-\s+(?=[^\W\d_]*[^\W\d_A-Z])")
# A line ending in a slash runs on into the next ("Age/Sex/" / "Physiological Group").
_SLASHED = re.compile(r"/\s+")


# Cached: each column's test asks for the forms of the same heading texts.
@lru_cache(maxsize=1 << 14)
def printed_forms(text: str) -> tuple[str, ...]:
    """The forms a heading's text may be matched in, as read first: its lines (or the
    rows of a stacked heading) joined by single spaces; a word hyphenated at a line's end
    joined without the hyphen ("Prevalence") and with it ("non-resident"); a line ending
    in a slash joined to the next without a space; each of these also without footnote
    marks at the ends of lines ("Others(1)" is "Others")."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    bare = [_FOOTNOTE.sub("", line).strip() for line in lines]
    forms = [text]
    for parts in (lines, bare):
        spaced = _FOOTNOTE.sub("", " ".join(parts)).strip() if parts is bare else " ".join(parts)
        forms += [spaced, _BROKEN.sub("", spaced), _BROKEN.sub("-", spaced),
                  _SLASHED.sub("/", spaced)]
    return tuple(dict.fromkeys(f for f in forms if f))


def header_share(named: int, matched: int, headings: int) -> float:
    """How well a header row names a schema of `named` columns: an F1 of the `matched`
    columns over the schema and over the row's `headings` (headings the schema does not
    name speak against the table)."""
    return 2 * matched / (named + max(headings, matched))


def _fuzzy_name(text: str, name: str, synonyms: frozenset[str] = frozenset()) -> bool:
    return fuzz.ratio(text.lower(), name) >= 85 or (
        bool(synonyms) and column_key(text) in synonyms)


def own_names_first(options: list[list[int]], headings: Sequence[Sequence[str]],
                    names: dict[int, str], named: Callable[[str, str], bool]
                    ) -> list[list[int]]:
    """`options` (the schema positions each heading passes) with a column of `names`
    printed under its own name ("Item  Description  Qty" for "Description") kept to that
    heading, not to another its synonyms also pass ("Item"). `headings` gives each
    heading's texts (a heading stacked over rows, in each of its forms); `named(text,
    name)` says whether a text prints a name."""
    def names_it(column: int, position: int) -> bool:
        return column < len(headings) and any(named(text, names[position])
                                              for text in headings[column] if text)

    own = {p for column, found in enumerate(options) for p in found
           if p in names and names_it(column, p)}
    return [[p for p in found if p not in own or names_it(column, p)]
            for column, found in enumerate(options)]


def _matching_columns(text: str, columns: _Columns, memo: dict[str, list[int]]) -> list[int]:
    # Header candidates repeat a lot (every run of every phrase of every line): remember.
    found = memo.get(text)
    if found is None:
        # "Qty." and "Amount:" are "Qty" and "Amount": header trees match whole cells.
        bare = text.strip(_HEADER_PUNCTUATION)
        found = [
            position
            for position, test in columns
            if test(text) or (bare != text and bool(bare) and test(bare))
        ]
        memo[text] = found
    return found


def _segments(
    group: list[Word], columns: _Columns, memo: dict[str, list[int]]
) -> list[tuple[list[Word], list[int]]]:
    """A phrase as header cells: whole if it matches a column, else its longest matching runs.

    Monospaced headers ("Qty Unit Price Amount") put one space between columns. Runs
    are at most _HEADER_WORDS long: a long phrase of a row is no header worth every run.
    """
    found = _matching_columns(" ".join(w.text for w in group), columns, memo)
    if found or len(group) == 1:
        return [(group, found)]
    segments: list[tuple[list[Word], list[int]]] = []
    start = 0
    while start < len(group):
        for end in range(min(len(group), start + _HEADER_WORDS), start, -1):
            run = group[start:end]
            found = _matching_columns(" ".join(w.text for w in run), columns, memo)
            if found or end == start + 1:
                segments.append((run, found))
                start = end
                break
    return segments


def find_header(
    line: Line,
    schema: list[dict[str, Any]],
    memo: dict[str, list[int]] | None = None,
    columns: _Columns | None = None,
) -> list[Band] | None:
    """Column bands when at least two columns (or the only one) match phrases of the line.

    `columns` is header_tests(schema), when the caller has it already.
    """
    if len(line.words) < min(2, len(schema)):
        return None
    if _AMOUNT_IN_LINE.search(line.text):
        # "Total Pcs.: 27 Total Price: 293.52" names columns but holds values: a header
        # row prints names only.
        return None
    memo = {} if memo is None else memo
    columns = header_tests(schema) if columns is None else columns
    segments = [
        segment for group in phrases(line) for segment in _segments(group, columns, memo)
    ]
    groups = [words for words, _ in segments]
    names = untreed_names(schema, str.lower)
    options = own_names_first([found for _, found in segments],
                              [[" ".join(w.text for w in words)] for words in groups], names,
                              _fuzzy_name)
    assigned = assign(options)
    if len(assigned) < min(2, len(schema)):
        return None
    bands = []
    for index, group in enumerate(groups):
        left = groups[index - 1][-1].x1 if index else None
        right = groups[index + 1][0].x0 if index + 1 < len(groups) else None
        x0 = (left + group[0].x0) / 2 if left is not None else max(0.0, group[0].x0 - _MARGIN)
        x1 = (group[-1].x1 + right) / 2 if right is not None else 1.0
        bands.append(Band(x0, x1, assigned.get(index)))
    return bands


def assign(options: list[list[int]]) -> dict[int, int]:
    """The best one-to-one assignment of header cells (by index) to schema columns.

    Best is, in turn: the most columns assigned; the most specific cells (a cell that
    matches one column only is surer than one that matches two, as "Unit" could be a
    quantity or the start of "Unit Price"); columns in schema order left to right; the
    leftmost cells.
    """
    candidates = [(index, found) for index, found in enumerate(options) if found]
    if not candidates:
        return {}
    best: tuple[tuple[int, int, int, int], dict[int, int]] | None = None
    states = 1
    for _, found in candidates:
        states *= len(found) + 1
    if states > _MAX_ASSIGNMENTS:
        # A line full of header words is no header row worth a search: first come, first served.
        taken: dict[int, int] = {}
        for index, found in candidates:
            free = [c for c in found if c not in taken.values()]
            if free:
                taken[index] = free[0]
        return taken

    def search(at: int, chosen: dict[int, int]) -> None:
        nonlocal best
        if at == len(candidates):
            columns = [chosen[i] for i in sorted(chosen)]
            key = (
                len(chosen),
                -sum(len(options[i]) for i in chosen),
                sum(a < b for a, b in zip(columns, columns[1:], strict=False)),
                -sum(chosen),
            )
            if best is None or key > best[0]:
                best = (key, dict(chosen))
            return
        index, found = candidates[at]
        for column in found:
            if column not in chosen.values():
                chosen[index] = column
                search(at + 1, chosen)
                del chosen[index]
        search(at + 1, chosen)

    search(0, {})
    return best[1] if best is not None else {}


def header_bands(
    lines: list[Line], target: dict[str, Any], memo: dict[str, list[int]] | None = None
) -> list[list[Band] | None]:
    """For each line, its column bands if it is a header row of the table target.

    `memo` remembers the columns each text matches; the caller may keep one per target
    to share it between the groups of a document.
    """
    schema = list(target.get("header_schema") or [])
    memo = {} if memo is None else memo
    columns = header_tests(schema)
    return [find_header(line, schema, memo, columns) if schema else None for line in lines]


def extract_table(
    lines: list[Line],
    target: dict[str, Any],
    headers: list[list[Band] | None] | None = None,
    spans: set[int] | None = None,
    places: list[OwnTable] | None = None,
) -> list[EngineCell]:
    """Cells of every table of the target, by table, row and column.

    `headers` is header_bands(lines, target) when the caller has it already; `spans`,
    when given, receives the indexes of the lines the tables cover (header and rows);
    `places`, where each table was read (`OwnTable`).
    """
    schema = list(target.get("header_schema") or [])
    if not schema:
        return []
    if headers is None:
        headers = header_bands(lines, target)
    trees = {int(c.get("position", 0)): c.get("extracted_value_validation_tree") for c in schema}
    cells: list[EngineCell] = []
    table = 0
    index = 0
    while index < len(lines):
        bands = headers[index]
        if bands is None:
            index += 1
            continue
        start = index
        rows, index = _rows(lines, Header(index, bands, lines[index].height), headers)
        if spans is not None:
            spans.update(range(start, index))
        if not rows:
            continue
        if places is not None:
            covered = lines[start:index]
            places.append(OwnTable(table, covered[0].page, (
                min(line.x0 for line in covered), min(line.y0 for line in covered),
                max(line.x1 for line in covered), max(line.y1 for line in covered)),
                tuple(bands)))
        # How well the header row names the schema's columns, as candidates.py measures
        # a found table's: both readers' cells weigh it alike in their calibrated
        # confidence.
        named = sum(1 for column in schema if str(column.get("name", "")).strip())
        share = header_share(named, sum(band.column is not None for band in bands),
                             len(bands)) if named else 0.0
        for row_number, row in enumerate(rows):
            # Every schema column gets a cell, so rows line up by position even when
            # the header lacked a column (its cells are empty and doubtful).
            for column in sorted(trees):
                cells.append(_cell(row.get(column), table, row_number, column, trees, share))
        table += 1
    return cells


_Row = dict[int, list[tuple[Word, float, int]]]  # column -> (word, band fit, line)

# Dot leaders: a run of four or more dots (spaced or not, or "…") leading the eye from a
# row's label to its values ("0.99 ..........  800"). Typography, not the cell's text; an
# ellipsis of three dots stays.
_LEADERS = re.compile(r"[ \t]*(?:[.…·][ \t]?){4,}[ \t]*")


def without_leaders(text: str) -> str:
    """The cell's text without dot leaders: "0.99 ........" -> "0.99"."""
    if not any(mark in text for mark in ("....", "…", ". . .", "··")):
        return text  # most cells: no regex pass
    return _LEADERS.sub(" ", text).strip()


def _rows(
    lines: list[Line], header: Header, headers: list[list[Band] | None]
) -> tuple[list[_Row], int]:
    """Rows under the header, and the index of the first line after the table."""
    # First the lines the table holds, each by column, and whether it is set tight under
    # the line before; then the rows, once every line says how wide each column runs.
    placed_lines: list[tuple[_Row, bool]] = []
    top = lines[header.line]
    previous = top
    index = header.line + 1
    while index < len(lines):
        line = lines[index]
        if line.page != top.page or _TOTALS.match(line.text):
            break
        if not any(ch.isalnum() for ch in line.text):
            if placed_lines:
                break  # a rule of dashes under the items
            index += 1
            continue
        height = max(header.height, line.height)
        gap = line.y0 - previous.y1
        if gap > _END_GAP * height or headers[index] is not None:
            break
        placed = _place(line, header.bands, index)
        if placed is None:
            break
        if placed:
            placed_lines.append((placed, gap <= _CONTINUATION_GAP * height))
        previous = line
        index += 1
    extents = _column_extents(placed_lines)
    rows: list[_Row] = []
    for placed, tight in placed_lines:
        if rows and tight and _continues(rows[-1], placed, extents):
            for column, words in placed.items():
                rows[-1].setdefault(column, []).extend(words)
        else:
            rows.append(placed)
    return rows, index


def _column_extents(placed_lines: list[tuple[_Row, bool]]) -> dict[int, float]:
    """How far right each column's text runs on the lines that fill more than one column
    (where the next column confines it: a heading alone on its line may run on)."""
    extents: dict[int, float] = {}
    for placed, _ in placed_lines:
        if len(placed) < 2:
            continue
        for column, words in placed.items():
            extents[column] = max(extents.get(column, 0.0), max(w.x1 for w, _, _ in words))
    return extents


def _place(line: Line, bands: list[Band], index: int) -> _Row | None:
    """Words by column; None when the line does not sit under the table (left of it)."""
    if line.words[0].center_x < bands[0].x0:
        return None
    chars = sum(len(w.text) for w in line.words)
    char = sum(w.x1 - w.x0 for w in line.words) / max(1, chars)
    placed: _Row = {}
    previous: tuple[Word, Band] | None = None
    for word in line.words:
        band = next((b for b in bands if b.x0 <= word.center_x < b.x1), None)
        if previous is not None and _same_text(previous[0], word, char):
            band = previous[1]  # a long description runs on past its column's band
        if band is None:
            continue
        previous = (word, band)
        if band.column is not None:
            width = max(1e-9, word.x1 - word.x0)
            inside = max(0.0, min(word.x1, band.x1) - max(word.x0, band.x0))
            placed.setdefault(band.column, []).append((word, inside / width, index))
    return placed


def _same_text(before: Word, word: Word, char: float) -> bool:
    """Words of running text: close together and neither of them a number."""
    return (
        word.x0 - before.x1 <= _PHRASE_GAP * char
        and parse_number(before.text) is None
        and parse_number(word.text) is None
    )


def _continues(row: _Row, placed: _Row, extents: dict[int, float]) -> bool:
    """A line filling only one column that holds text in the row above, whose first word
    would not have fitted on the row's last line there: text wraps only where the next
    word does not fit. "Other" over "Wealth index" under a column whose text runs wider
    elsewhere is a row of its own (a heading of the rows under it), however tight."""
    if len(placed) != 1:
        return False
    (column,) = placed
    above = row.get(column)
    if not above:
        return False
    if parse_number(" ".join(w.text for w, _, _ in above)) is not None:
        return False
    extent = extents.get(column)
    if extent is None:
        return True
    last = max(line for _, _, line in above)
    ending = max((w for w, _, line in above if line == last), key=lambda w: w.x1)
    if ending.text.endswith(("-", "\u00ad")):
        return True  # a word hyphenated at the line's end goes on below
    right = ending.x1
    first = placed[column][0][0]
    char = (first.x1 - first.x0) / max(1, len(first.text))
    # The room on that line ends at the column's width, or at the line's next word where
    # the text ran on into the next column's band (an OCR layer parts words so).
    room = min([extent] + [w.x0 - char for entries in row.values() for w, _, line in entries
                           if line == last and w.x0 >= right])
    return right + char + (first.x1 - first.x0) > room


def _cell(
    entries: list[tuple[Word, float, int]] | None,
    table: int,
    row: int,
    column: int,
    trees: dict[int, Any],
    share: float,
) -> EngineCell:
    if not entries:
        # An empty cell where the column's values must not be empty was probably missed.
        missed = validates("", trees.get(column)) is False
        raw = _MISSED_CELL if missed else _EMPTY_CELL
        return EngineCell("", table, row, column, raw, {
            "own": 1.0, "invalid": float(missed), "raw": raw, "share": round(share, 4)})
    lines: dict[int, list[str]] = {}
    for word, _, line in entries:
        lines.setdefault(line, []).append(word.text)
    text = without_leaders("\n".join(" ".join(words) for _, words in sorted(lines.items())))
    ocr = statistics.fmean(word.confidence for word, _, _ in entries)
    fit = statistics.fmean(f for _, f, _ in entries)
    valid = validates(text, trees.get(column))
    confidence = ocr * (0.5 + 0.5 * fit) * (_INVALID_CELL if valid is False else 1.0)
    confidence = round(min(0.97, confidence), 4)
    # How the cell was read, for its calibrated confidence (groups.py adds the rest):
    # the words' OCR certainty and how squarely they sit in their column's band.
    evidence = {"own": 1.0, "word_doubt": round(min(1.0, 10 * (1.0 - min(
                    word.confidence for word, _, _ in entries))), 4),
                "off_band": round(1.0 - fit, 4), "invalid": float(valid is False),
                "valid": float(valid is True), "share": round(share, 4),
                "raw": confidence}
    return EngineCell(text, table, row, column, confidence, evidence)
