"""Synthetic invoices and receipts with exact ground truth, deterministic by seed.

A dev set for the extraction engine: text PDFs drawn with reportlab in several
layouts and fonts, and scanned-looking PNG, JPEG and image-only PDF versions,
each with a truth JSON (format in ``data/README.md``). Needs the ``dev`` extra
(reportlab) and the ``service`` extra (pypdfium2, Pillow).

    python -m servicetools.datagen --out data --count 40 --seed 2026

>>> from servicetools.datagen import plan
>>> plan(5, seed=1, formats=["pdf"])[0]
('invoice', 1, 'pdf')
"""

from servicetools.datagen.generator import FORMATS, KINDS, generate, make_document, plan

__all__ = ["FORMATS", "KINDS", "generate", "make_document", "plan"]
