"""Synthetic invoices and receipts with exact ground truth, deterministic by seed.

A dev set for the extraction engine: text PDFs drawn with reportlab in several
layouts and fonts, and scanned-looking PNG, JPEG and image-only PDF versions,
each with a truth JSON (format in ``servicetools/bundled/README.md``). Needs the
``datagen`` extra (reportlab, pypdfium2, Pillow, numpy): without it, importing this
package raises `servicetools.extras.MissingExtra` saying so.

    python -m servicetools.datagen --out DIR --count 40 --seed 2026

>>> from servicetools.datagen import plan
>>> plan(5, seed=1, formats=["pdf"])[0]
('invoice', 1, 'pdf')
"""

from servicetools.extras import require

require("datagen", feature="servicetools.datagen (the dev-set generator)")

from servicetools.datagen.generator import (  # noqa: E402  (after the extra is checked)
    FORMATS,
    KINDS,
    generate,
    make_document,
    plan,
)

__all__ = ["FORMATS", "KINDS", "generate", "make_document", "plan"]
