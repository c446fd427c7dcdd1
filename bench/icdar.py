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

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cell", "Document", "Score", "Table", "documents", "grid_of_rows", "header_names",
           "header_row", "real_documents", "relations", "score"]

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
    import json

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
