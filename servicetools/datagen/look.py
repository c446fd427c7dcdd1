"""Typographic choices shared by the layouts: fonts, label punctuation, table rules."""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal

from servicetools.datagen.sheet import FONT_FAMILIES, Font, Sheet
from servicetools.datagen.table import Rules, TableStyle


@dataclass(frozen=True)
class Look:
    family: str
    size: float
    colon: str  # printed after inline labels: ":" or nothing
    rules: Rules
    shade_header: bool

    def font(self, size: float | None = None, *, bold: bool = False) -> Font:
        regular, heavy = FONT_FAMILIES[self.family]
        return Font(heavy if bold else regular, size or self.size)

    def label(self, text: str) -> str:
        return f"{text}{self.colon}"

    def table(self, size: float | None = None) -> TableStyle:
        return TableStyle(
            font=self.font(size),
            bold=self.font(size, bold=True),
            rules=self.rules,
            shade_header=self.shade_header,
        )


def pick_look(
    rng: random.Random,
    *,
    families: tuple[str, ...] = tuple(FONT_FAMILIES),
    rules: tuple[Rules, ...] = ("grid", "rows", "header", "none"),
    sizes: tuple[float, ...] = (9.0, 9.5, 10.0),
) -> Look:
    return Look(
        family=rng.choice(families),
        size=rng.choice(sizes),
        colon=rng.choice((":", ":", "")),
        rules=rng.choice(rules),
        shade_header=rng.random() < 0.4,
    )


def tax_label(rng: random.Random, label: str, rate: Decimal) -> str:
    """The tax label, sometimes with its rate, as real documents print it."""
    percent = f"{(rate * 100).normalize():f}%"
    return rng.choice((label, label, f"{label} {percent}", f"{label} ({percent})"))


def number_pages(sheet: Sheet, font: Font, margin: float, *, always: bool) -> None:
    """Add "Page i of n" footers once the page count is known."""
    count = len(sheet.pages)
    if count == 1 and not always:
        return
    for i, page in enumerate(sheet.pages, start=1):
        page.text(page.width / 2, page.height - margin / 2, f"Page {i} of {count}", font, "center")
