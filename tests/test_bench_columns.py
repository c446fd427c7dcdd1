"""The column-names bench's two configurations and its count of cells, checked on one
generated invoice: only the header trees differ, and a table read whole counts every
truth cell."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import column_names as bench  # noqa: E402

from servicetools.datagen import generate  # noqa: E402
from servicetools.service.engine import load_document  # noqa: E402


def test_names_only_differs_from_the_shipped_line_items_by_the_header_trees_alone() -> None:
    trees, names = bench.line_items(False), bench.line_items(True)
    [shipped], [bare] = trees["extraction_targets"], names["extraction_targets"]
    assert all("header_matching_validation_tree" in c for c in shipped["header_schema"])
    assert not any("header_matching_validation_tree" in c for c in bare["header_schema"])
    for column in shipped["header_schema"]:
        column.pop("header_matching_validation_tree")
    assert shipped == bare


def test_cells_are_counted_against_the_truth_rows(tmp_path: Path) -> None:
    [path] = generate(tmp_path, 1, 31, kinds=["invoice"], formats=["pdf"])
    truth = json.loads(path.read_text())
    rows = [row for part in truth["tables"]["Line Items"] for row in part["rows"]]
    document = load_document((tmp_path / "documents" / truth["document"]).read_bytes(),
                             "application/pdf")
    assert bench.cells_right(document, bench.line_items(False), rows) == (
        sum(map(len, rows)), sum(map(len, rows)))
    # A truth row more than the document holds is counted, and missed.
    right, total = bench.cells_right(document, bench.line_items(False), [*rows, ["x", "1"]])
    assert (right, total) == (sum(map(len, rows)), sum(map(len, rows)) + 2)
