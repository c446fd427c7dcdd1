"""Ground truth: what a layout printed, and the JSON file written per document.

Target names are those of ``data/configurations/invoices.json`` and
``receipts.json`` (a test keeps them in step).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servicetools.datagen.sheet import Sheet
from servicetools.datagen.table import PrintedTable

INVOICE_FIELDS = (
    "Invoice Number",
    "Invoice Date",
    "Due Date",
    "Vendor",
    "Customer",
    "Subtotal",
    "Tax",
    "Total",
)
INVOICE_TABLE = "Line Items"
RECEIPT_FIELDS = ("Merchant", "Date", "Receipt Number", "Tax", "Total", "Payment Method")
RECEIPT_TABLE = "Items"

CONFIGURATION = {"invoice": "invoices", "receipt": "receipts"}
FIELDS = {"invoice": INVOICE_FIELDS, "receipt": RECEIPT_FIELDS}
TABLE = {"invoice": INVOICE_TABLE, "receipt": RECEIPT_TABLE}


@dataclass
class Printed:
    """A drawn document and the values it printed, exactly as printed."""

    kind: str
    layout: str
    sheet: Sheet
    fields: dict[str, str]
    tables: list[PrintedTable] = field(default_factory=list)


def record(
    printed: Printed, *, document: str, fmt: str, seed: int, scan: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The truth object of one document (see data/README.md for the format)."""
    names = FIELDS[printed.kind]
    unknown = set(printed.fields) - set(names)
    if unknown:
        raise ValueError(f"fields outside the configuration: {sorted(unknown)}")
    truth: dict[str, Any] = {
        "document": document,
        "kind": printed.kind,
        "configuration": CONFIGURATION[printed.kind],
        "format": fmt,
        "seed": seed,
        "layout": printed.layout,
        "pages": len(printed.sheet.pages),
        "fields": {name: printed.fields.get(name, "") for name in names},
        "tables": {TABLE[printed.kind]: [t.as_truth() for t in printed.tables]},
    }
    if scan is not None:
        truth["scan"] = scan
    return truth


def write(path: Path, truth: dict[str, Any]) -> None:
    path.write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
