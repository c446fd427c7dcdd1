"""A tiny page model measured from the top, turned into a PDF by reportlab at the end.

Layouts place text top-down and only learn a receipt's height once everything is
placed, while PDF coordinates start at the bottom; collecting the drawing first
and rendering afterwards settles both.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Literal

from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

Align = Literal["left", "right", "center"]

# reportlab's standard 14 fonts: regular and bold of each family.
FONT_FAMILIES = {
    "Helvetica": ("Helvetica", "Helvetica-Bold"),
    "Times": ("Times-Roman", "Times-Bold"),
    "Courier": ("Courier", "Courier-Bold"),
}


@dataclass(frozen=True)
class Font:
    name: str
    size: float

    def width(self, text: str) -> float:
        return float(stringWidth(text, self.name, self.size))


@dataclass
class Text:
    x: float
    y: float  # baseline, from the top of the page
    text: str
    font: Font
    align: Align = "left"


@dataclass
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float = 0.6


@dataclass
class Shade:
    x: float
    y: float  # top edge
    w: float
    h: float
    gray: float = 0.9


@dataclass
class Page:
    width: float
    height: float
    marks: list[Text | Rule | Shade] = field(default_factory=list)

    def text(self, x: float, y: float, text: str, font: Font, align: Align = "left") -> None:
        self.marks.append(Text(x, y, text, font, align))

    def rule(self, x1: float, y1: float, x2: float, y2: float, width: float = 0.6) -> None:
        self.marks.append(Rule(x1, y1, x2, y2, width))

    def shade(self, x: float, y: float, w: float, h: float, gray: float = 0.9) -> None:
        self.marks.append(Shade(x, y, w, h, gray))


@dataclass
class Sheet:
    """The pages of one document; ``page`` is the one being drawn on."""

    width: float
    height: float
    pages: list[Page] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.pages:
            self.new_page()

    @property
    def page(self) -> Page:
        return self.pages[-1]

    @property
    def page_number(self) -> int:
        return len(self.pages)

    def new_page(self) -> Page:
        self.pages.append(Page(self.width, self.height))
        return self.page


def wrap(text: str, font: Font, width: float) -> list[str]:
    """Break ``text`` at spaces into lines no wider than ``width`` (a long word stays whole)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and font.width(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines or [""]


def render_pdf(sheet: Sheet, *, title: str) -> bytes:
    """The sheet as PDF bytes; ``invariant`` drops timestamps and random ids so a seed
    always gives the same bytes."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(sheet.width, sheet.height), invariant=1)
    canvas.setTitle(title)
    canvas.setCreator("servicetools.datagen")
    for page in sheet.pages:
        canvas.setPageSize((page.width, page.height))
        for mark in page.marks:
            if isinstance(mark, Shade):
                canvas.setFillGray(mark.gray)
                canvas.rect(mark.x, page.height - mark.y - mark.h, mark.w, mark.h, 0, 1)
                canvas.setFillGray(0)
            elif isinstance(mark, Rule):
                canvas.setLineWidth(mark.width)
                canvas.line(mark.x1, page.height - mark.y1, mark.x2, page.height - mark.y2)
            else:
                canvas.setFont(mark.font.name, mark.font.size)
                y = page.height - mark.y
                if mark.align == "right":
                    canvas.drawRightString(mark.x, y, mark.text)
                elif mark.align == "center":
                    canvas.drawCentredString(mark.x, y, mark.text)
                else:
                    canvas.drawString(mark.x, y, mark.text)
        canvas.showPage()
    canvas.save()
    return out.getvalue()
