"""The ICDAR 2013 table competition's ground truth and its adjacency-relation measure.

The dev set (``../shared/data/icdar2013-dev``, see its README) holds, per document,
``NAME.pdf`` and ``NAME-str.xml`` (cells by start/end row and column, with their
text); a document with two ground-truth tables shares one PDF (``eu-009a.pdf`` for
``eu-009a-str.xml`` and ``eu-009b-str.xml``).

The measure: lay each table's cells on their grid (a spanning cell's text where it
starts); every non-empty cell relates to its nearest non-empty neighbour to the right
in the same row and to the one below in the same column; a relation is (text, text,
direction) with all whitespace removed. Precision and recall count relations, summed
over all tables of all documents (micro-average).
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cell", "Document", "Score", "Table", "camelot_documents", "documents",
           "from_heading", "grid_of_rows", "header_names", "header_row", "heading_rows",
           "printed_headings", "real_documents", "relations", "score"]

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "icdar2013-dev"
_SPACE = re.compile(r"\s+")

Grid = dict[tuple[int, int], str]
Relation = tuple[str, str, str]


@dataclass(frozen=True)
class Cell:
    row: int
    column: int
    end_row: int
    end_column: int
    text: str


@dataclass(frozen=True)
class Table:
    name: str  # "eu-009a/1"
    page: int  # 1-based, of the first region
    cells: tuple[Cell, ...]
    header: int | None = None  # the last header row, when the truth says (real/)
    # camelot-tests-dev: the heading rows as printed (the grid holds the header names
    # over the body, README's measure), and whether the rows are part of the page only.
    headings: tuple[tuple[str, ...], ...] = ()
    partial: bool = False

    @property
    def grid(self) -> Grid:
        """Each cell's text at the place where it starts."""
        return {(c.row, c.column): c.text for c in self.cells if c.text.strip()}

    @property
    def columns(self) -> int:
        return max((c.end_column for c in self.cells), default=-1) + 1


@dataclass(frozen=True)
class Document:
    name: str  # "eu-009a"
    pdf: Path
    tables: tuple[Table, ...]
    # Found tables are scored from their last heading row down, the header names over
    # the body (camelot-tests-dev's measure, `from_heading`); else their whole grid.
    cut: bool = False

    @property
    def half(self) -> str:
        """The data README's split, by the document's own file (eu-009b is in eu-009a.pdf)."""
        return "tuning" if hashlib.sha256(self.pdf.name.encode()).hexdigest()[0] in "01234567" \
            else "check"


def documents(root: Path = ROOT) -> list[Document]:
    """Every ground-truth file of the folder with the PDF it describes."""
    found = []
    for structure in sorted(root.glob("*-str.xml")):
        name = structure.name[: -len("-str.xml")]
        pdf = root / f"{name}.pdf"
        if not pdf.exists():  # "eu-009b" shares "eu-009a.pdf"
            pdf = root / f"{name[:-1]}a.pdf"
        found.append(Document(name, pdf, tuple(_tables(structure, name))))
    return found


def _tables(path: Path, name: str) -> Iterable[Table]:
    tree = ET.parse(path)  # noqa: S314  (the competition's own files, read from disk)
    for number, table in enumerate(tree.getroot().iter("table"), start=1):
        cells: list[Cell] = []
        pages = []
        for region in table.iter("region"):
            pages.append(int(region.get("page", "1")))
            # A table continued in a second region numbers its rows and columns on from
            # the increments the region gives.
            rows = int(region.get("row-increment", "0"))
            cols = int(region.get("col-increment", "0"))
            for cell in region.iter("cell"):
                start_row = int(cell.get("start-row", "0")) + rows
                start_col = int(cell.get("start-col", "0")) + cols
                cells.append(Cell(
                    start_row, start_col,
                    int(cell.get("end-row", cell.get("start-row", "0"))) + rows,
                    int(cell.get("end-col", cell.get("start-col", "0"))) + cols,
                    (cell.findtext("content") or "").strip()))
        # Some files count rows and columns from 1, others from 0: start every grid at 0.
        top = min((c.row for c in cells), default=0)
        left = min((c.column for c in cells), default=0)
        cells = [Cell(c.row - top, c.column - left, c.end_row - top, c.end_column - left, c.text)
                 for c in cells]
        yield Table(f"{name}/{number}", min(pages, default=1), tuple(cells))


def compact(text: str) -> str:
    return _SPACE.sub("", text)


def relations(grid: Grid) -> Counter[Relation]:
    """The adjacency relations of a grid: to the nearest non-empty cell right and below."""
    filled = {place: compact(text) for place, text in grid.items() if compact(text)}
    by_row: dict[int, list[int]] = {}
    by_column: dict[int, list[int]] = {}
    for row, column in filled:
        by_row.setdefault(row, []).append(column)
        by_column.setdefault(column, []).append(row)
    found: Counter[Relation] = Counter()
    for row, columns in by_row.items():
        columns.sort()
        for left, right in zip(columns, columns[1:], strict=False):
            found[(filled[(row, left)], filled[(row, right)], "right")] += 1
    for column, rows in by_column.items():
        rows.sort()
        for top, below in zip(rows, rows[1:], strict=False):
            found[(filled[(top, column)], filled[(below, column)], "down")] += 1
    return found


def grid_of_rows(rows: Sequence[Sequence[str | None]]) -> Grid:
    """A grid from rows of cell texts (a library's table: None for an empty cell)."""
    return {(r, c): text for r, row in enumerate(rows) for c, text in enumerate(row)
            if text and text.strip()}


def header_row(table: Table) -> int:
    """The last row of the table's header.

    Row 0 is a header row. A later row is one too while a header cell above spans down
    into it ("Country" over two header rows) or while the row above holds a cell that
    spans several columns (a group heading over the headings of its columns). The last
    header row's texts are what a user who knows the columns would name them by.
    """
    if table.header is not None:
        return table.header
    last = 0
    while True:
        above = [c for c in table.cells if c.row <= last]
        if any(c.end_row > last for c in above):
            last = max(c.end_row for c in above)
            continue
        if any(c.end_column > c.column for c in table.cells if c.row == last) and any(
                c.row == last + 1 for c in table.cells):
            last += 1
            continue
        return last


def header_names(table: Table) -> list[str]:
    """The name of each column: the header cell covering it in the last header row."""
    last = header_row(table)
    names = []
    for column in range(table.columns):
        covering = [c for c in table.cells
                    if c.row <= last <= c.end_row and c.column <= column <= c.end_column]
        # The cell that starts lowest is the most specific heading of the column; a
        # column whose last header cell is empty takes the nearest heading above it.
        filled = [c for c in covering if c.text.strip()] or [
            c for c in table.cells if c.column == column and c.row <= last and c.text.strip()]
        best = max(filled, key=lambda c: c.row, default=None)
        names.append(best.text if best is not None and best.column == column else "")
    return names


def real_documents(root: Path) -> list[Document]:
    """The table documents of ``../shared/data/real`` (``kind: table-doc``) as documents
    of this measure: each truth table's rows, its header rows ended by the first row
    that holds mostly numbers."""
    found = []
    for truth_path in sorted(root.glob("*/*.truth.json")):
        truth = json.loads(truth_path.read_text())
        if truth.get("kind") != "table-doc" or not truth.get("tables"):
            continue
        pdf = truth_path.with_name(truth["document"])
        if pdf.suffix.lower() != ".pdf":
            continue
        name = f"{truth_path.parent.name}/{pdf.stem}"
        tables = []
        for number, table in enumerate(truth["tables"], start=1):
            rows = table["rows"]
            cells = tuple(Cell(r, c, r, c, text) for r, row in enumerate(rows)
                          for c, text in enumerate(row) if text.strip())
            header = _numbers_start(rows) - 1 if table.get("has_header_row") else -1
            tables.append(Table(f"{name}/{number}", int(table.get("page", 1)), cells,
                                max(0, header)))
        found.append(Document(name, pdf, tuple(tables)))
    return found


def camelot_documents(root: Path) -> list[Document]:
    """The documents of ``../shared/data/camelot-tests-dev`` (see its README): each
    expected table scored from its last heading row down, the header names (the last
    heading row's texts, a column empty there named by the nearest heading above) over
    the body. The heading rows as printed are kept in `Table.headings`."""
    found = []
    for pdf in sorted(root.glob("*.pdf")):
        tables = []
        for path in sorted(root.glob(f"{pdf.stem}.table*.json"),
                           key=lambda p: int(p.name.rsplit(".table", 1)[1].split(".")[0])):
            truth = json.loads(path.read_text())
            rows = [[str(t or "") for t in row] for row in truth["rows"]]
            count = int(truth["header_rows"])
            grid = from_heading(rows, count)
            cells = tuple(Cell(r, c, r, c, text) for (r, c), text in sorted(grid.items()))
            tables.append(Table(f"{pdf.stem}/{len(tables) + 1}", int(truth.get("page", 1)),
                                cells, 0, tuple(tuple(r) for r in rows[:count]),
                                bool(truth.get("partial"))))
        if tables:
            found.append(Document(pdf.stem, pdf, tuple(tables), cut=True))
    return found


# camelot-tests-dev's heading rule (its README): figures, years and column numbers.
_FIGURE = re.compile(r"^(?:[-+(]?[$€£]?\d[\d,.]*%?\)?|[-–—])$")
_YEAR = re.compile(r"^(?:1[89]|20)\d\d(?:[-–/](?:\d\d|\d{4}))?$")


def heading_rows(rows: Sequence[Sequence[str]]) -> int:
    """How many leading rows of a table are headings, by camelot-tests-dev's rule: the
    rows before the first body row (a row of mostly figures, or a labelled data row:
    its stub cell filled and a figure in it; figures that are all years or column
    numbers make a heading row), less the stub-only rows just above it (section labels
    belong to the body). A table with no body row has one heading row, its first
    non-empty one."""
    width = max((len(r) for r in rows), default=0)
    stub = next((c for c in range(width)
                 if any(c < len(r) and compact(r[c]) for r in rows)), 0)
    first = next((i for i, row in enumerate(rows) if _is_body(row, stub)), None)
    if first is None:
        return next((i + 1 for i, row in enumerate(rows) if any(compact(t) for t in row)), 0)
    while first > 0 and _stub_only(rows[first - 1], stub):
        first -= 1
    return first


def _is_body(row: Sequence[str], stub: int) -> bool:
    filled = [compact(t) for t in row if compact(t)]
    figures = [t for t in filled if _FIGURE.match(t)]
    if not figures or _plain(figures):
        return False
    return 2 * len(figures) > len(filled) or (stub < len(row) and bool(compact(row[stub])))


def _plain(figures: list[str]) -> bool:
    """Years all (2007, 2011-12), or column numbers (1 2 3 ...)."""
    if all(_YEAR.match(t) for t in figures):
        return True
    numbers = [int(t) for t in figures if t.isdigit()]
    return len(numbers) == len(figures) and len(numbers) > 1 and all(
        b == a + 1 for a, b in zip(numbers, numbers[1:], strict=False))


def _stub_only(row: Sequence[str], stub: int) -> bool:
    filled = [c for c, t in enumerate(row) if compact(t)]
    return filled == [stub]


def from_heading(rows: Sequence[Sequence[str | None]], count: int | None = None) -> Grid:
    """A table as camelot-tests-dev scores it: its header names (the last heading row,
    a column empty there named by the nearest heading above) over the rows under the
    headings. `count` is the number of heading rows (`heading_rows` when None); the
    same rule cuts every method's tables."""
    clean = [[t or "" for t in row] for row in rows]
    count = heading_rows(clean) if count is None else count
    if count == 0:
        return grid_of_rows(clean)
    width = max(len(r) for r in clean)
    names = []
    for column in range(width):
        above = [r[column] for r in clean[:count] if column < len(r) and compact(r[column])]
        names.append(above[-1] if above else "")
    return grid_of_rows([names, *clean[count:]])


def printed_headings(headings: Sequence[Sequence[str]]) -> list[str]:
    """Each column's heading as printed, joined by spaces from the heading rows as a
    reader sees them: from the last heading text of the column upwards, past one empty
    cell at most, up to a group heading (a cell with an empty neighbour to its right
    that has a heading of its own under it, such as "Total" over "Under 18 years"). A
    word hyphenated at a line's end joins the next line's word ("Preva-" "lence")."""
    rows = [list(r) for r in headings]
    width = max((len(r) for r in rows), default=0)
    for row in rows:
        row += [""] * (width - len(row))
    printed = []
    for column in range(width):
        parts: list[str] = []
        empty = 0
        for r in range(len(rows) - 1, -1, -1):
            text = rows[r][column]
            if not compact(text):
                empty += bool(parts)
                if empty > 1:
                    break
                continue
            grouped = (column + 1 < width and not compact(rows[r][column + 1])
                       and any(compact(rows[b][column + 1]) for b in range(r + 1, len(rows))))
            if parts and grouped:
                break
            parts.insert(0, text)
            empty = 0
        lines = [line.strip() for part in parts for line in part.split("\n") if line.strip()]
        joined = ""
        for line in lines:
            if joined.endswith("-") and joined[-2:-1].isalpha() and line[:1].islower():
                joined = joined[:-1] + line
            else:
                joined = f"{joined} {line}" if joined else line
        printed.append(" ".join(joined.split()))
    return printed


_NUMBER = re.compile(r"^[-+(]?[$€£]?\d[\d.,%]*\)?$")


def _numbers_start(rows: list[list[str]]) -> int:
    """The first row most of whose filled cells are numbers (at least row 1)."""
    for index, row in enumerate(rows[1:], start=1):
        filled = [t for t in row if t.strip()]
        if filled and sum(bool(_NUMBER.match(compact(t))) for t in filled) * 2 >= len(filled):
            return index
    return 1


@dataclass
class Score:
    found: int = 0
    truth: int = 0
    right: int = 0

    def add(self, found: Counter[Relation], truth: Counter[Relation]) -> None:
        self.found += sum(found.values())
        self.truth += sum(truth.values())
        self.right += sum((found & truth).values())

    @property
    def precision(self) -> float:
        return self.right / self.found if self.found else 0.0

    @property
    def recall(self) -> float:
        return self.right / self.truth if self.truth else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(pairs: Iterable[tuple[Grid | None, Grid]]) -> Score:
    """Micro-averaged relations of (found grid or None, truth grid) pairs."""
    total = Score()
    for found, truth in pairs:
        total.add(relations(found or {}), relations(truth))
    return total
