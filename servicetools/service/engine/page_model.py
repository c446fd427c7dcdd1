"""The page model: a document as pages of positioned words, as the loader (pages.py)
builds it and every reader of the engine takes it.

Nothing here reads a file: `Word`, `Page` and `Document` are plain data, and the rest of
the engine imports them from here (never from the loader), so no module needs to
import back from the one that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Document", "Page", "Word"]


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


@dataclass
class Document:
    content_type: str
    pages: list[Page]
    # The PDF itself, for the table finders that read it (candidates.py); b"" for images.
    source: bytes = field(default=b"", repr=False, compare=False)
