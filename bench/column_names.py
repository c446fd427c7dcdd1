"""Table columns named alone: line items read with names only beside the header trees.

Usage: ``make bench-columns`` (part of ``make bench``) or ``.venv/bin/python
bench/column_names.py [--count N] [--seed S]``.

A user often names a table's columns ("Description", "Quantity", "Unit Price",
"Amount") without writing a header tree of the headings a document may print. The
generated invoices (``servicetools.datagen``, text PDFs) print those columns under
varied headings ("Item", "Qty", "Hrs", "Rate", "Each", "Line Total", ...). The engine
reads each document in-process twice with the bundled invoices configuration's line
items: once as shipped (a header tree per column) and once with the trees removed,
names only. It prints the share of truth cells read, each way, and their ratio.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servicetools import bundled  # noqa: E402
from servicetools.datagen import generate  # noqa: E402
from servicetools.service.engine import extract_group, group_targets, load_document  # noqa: E402


def line_items(names_only: bool) -> dict[str, Any]:
    """The bundled invoices configuration's line-items target alone, with or without its
    header trees (its value rules kept either way: only the headings differ)."""
    configuration = json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text())
    target = copy.deepcopy(next(t for t in configuration["extraction_targets"]
                                if t["type"] == "table"))
    for column in target["header_schema"] if names_only else []:
        column.pop("header_matching_validation_tree", None)
    return {"id": "line-items", "name": "line items", "extraction_targets": [target]}


def cells_right(document: Any, configuration: dict[str, Any], rows: list[list[str]]
                ) -> tuple[int, int]:
    """Truth cells read exactly (spaces aside), in reading order over the tables found."""
    read: dict[tuple[int, int], dict[int, str]] = {}
    for group in group_targets(configuration):
        for target in extract_group(document, group, configuration):
            for cell in target.cells:
                read.setdefault((cell.table_index, cell.row), {})[cell.column] = cell.text
    found = [read[key] for key in sorted(read)]
    right = sum(" ".join(want.split()) == " ".join(
        (found[i].get(j, "") if i < len(found) else "").split())
        for i, row in enumerate(rows) for j, want in enumerate(row))
    return right, sum(len(row) for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=80, help="generated invoices")
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    ways = {"header trees": line_items(False), "names only": line_items(True)}
    scores = {way: [0, 0] for way in ways}
    with tempfile.TemporaryDirectory() as folder:
        for path in generate(folder, args.count, args.seed, kinds=["invoice"], formats=["pdf"]):
            truth = json.loads(path.read_text())
            rows = [row for part in truth["tables"]["Line Items"] for row in part["rows"]]
            data = (Path(folder) / "documents" / truth["document"]).read_bytes()
            document = load_document(data, "application/pdf")
            for way, configuration in ways.items():
                right, total = cells_right(document, configuration, rows)
                scores[way][0] += right
                scores[way][1] += total
    print(f"Line items of {args.count} generated invoices (seed {args.seed}, text PDFs), "
          "the bundled configuration's columns:")
    for way, (right, total) in scores.items():
        print(f"  {way:14s} {right:5d} of {total} truth cells read ({right / total:.1%})")
    trees, names = (scores[w][0] / scores[w][1] for w in ways)
    print(f"  names only / header trees: {names / trees:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
