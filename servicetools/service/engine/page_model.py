"""The page model: a document as pages of positioned words, as the loader (pages.py)
builds it and every reader of the engine takes it.

Nothing here reads a file: `Word`, `Page` and `Document` are plain data, and the rest of
the engine imports them from here (never from the loader), so no module needs to
import back from the one that imports it. `PageCache` and `DocumentCache` hold what the
readers work out from a page or a document once and ask for again: the pipeline calls
the engine once per target group with the same document, so a second group finds the
work of the first. Each is a typed field of its page or document, one attribute per
cached thing, and lives and dies with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .candidates import Found, Judged
    from .lines import Line

__all__ = ["Document", "DocumentCache", "Page", "PageCache", "Word"]


@dataclass(frozen=True)
class Word:
    """One word; coordinates are fractions of the page (0..1), y grows downwards."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float = 1.0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def center_x(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def center_y(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class PageCache:
    """What the readers work out from one page's words.

    Valid for the page's life: its words are not changed after loading.
    """

    # The page's words grouped into lines (lines.page_lines): every group that reads the
    # whole page asks for them, and grouping sorts and scans all of the page's words.
    lines: list[Line] | None = None


@dataclass
class DocumentCache:
    """What the readers work out from a whole document.

    Valid for the document's life: its words and its PDF are not changed after loading,
    and every entry is keyed by all else it depends on (a header schema, pages), never by
    a configuration, so extractions with other configurations may share it too.
    """

    # Per header schema (as JSON), the columns each text of a line matches
    # (tables.header_bands): every group reads the header rows of every table target.
    header_matches: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    # Per page number, the tables the finders found on it (candidates.found_tables): the
    # finders cost a third of a second a page, and each table target asks for its pages.
    found_tables: dict[int, list[Found]] = field(default_factory=dict)
    # Per header schema and pages (as JSON), that schema's judgement of each table found
    # on those pages (candidates.judged_cells): rival targets judge the same tables.
    judgements: dict[str, list[Judged | None]] = field(default_factory=dict)
    # Per page number, pdfplumber's page of a text page as the loader parsed it (pages.py,
    # short documents only): pdfplumber's table finders read it without parsing the page
    # again, which costs more than their finding (candidates.py).
    parsed_pages: dict[int, Any] = field(default_factory=dict)

    def __getstate__(self) -> dict[str, Any]:
        # pdfplumber's pages do not pickle (a document cached by the benches, or sent
        # to another process): without them a finder parses its page again.
        return {**self.__dict__, "parsed_pages": {}}


@dataclass
class Page:
    number: int
    width: float
    height: float
    png: bytes
    words: list[Word] = field(default_factory=list)
    source: str = "text"
    # Whether the text layer's page draws ruling lines (lines or boxes), where a finder
    # of ruled tables may find one.
    ruled: bool = False
    # Not an argument: a page built anew (dataclasses.replace too) starts with none.
    cache: PageCache = field(default_factory=PageCache, init=False, repr=False, compare=False)


@dataclass
class Document:
    content_type: str
    pages: list[Page]
    # The PDF itself, for the table finders that read it (candidates.py); b"" for images.
    source: bytes = field(default=b"", repr=False, compare=False)
    # Not an argument: a document built anew (dataclasses.replace too) starts with none.
    cache: DocumentCache = field(
        default_factory=DocumentCache, init=False, repr=False, compare=False
    )
