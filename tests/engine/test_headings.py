"""Headings matched as printed, and targets with the same headings, on pages made here.

A column's header tree is a regex a user writes for the heading's text joined by
spaces; the page prints it over two lines, hyphenated or with a footnote mark. The
tree must find the table wherever the column's name alone finds it. Targets with the
same header schema share the tables of the document out, one table each, in order.
"""

from __future__ import annotations

from typing import Any

import pytest

from servicetools.service.engine import load_document
from servicetools.service.engine.candidates import headed_pages, judged_cells
from servicetools.service.engine.lines import group_lines
from servicetools.service.engine.tables import extract_table, printed_forms

from ..support.engine_documents import Row, grid, stacked, table_pdf, tables_of, target

# The second column's heading is printed over two lines, the third's hyphenated over
# two, the fourth's and fifth's carry footnote marks.
HEADED: list[Row] = [("", "Unit", "Quan-", "", ""),
                     ("Region", "price", "tity", "Staff*", "Stores(1)"),
                     ("North", "1200", "15", "9", "4"), ("South", "950", "11", "7", "3"),
                     ("East", "430", "6", "5", "2")]
BODY = [list(row) for row in HEADED[2:]]
FIVE = (60, 150, 250, 350, 450)
NAMES = ("Region", "Unit price", "Quantity", "Staff", "Stores")


def with_trees(base: dict[str, Any], *patterns: str) -> dict[str, Any]:
    """The target with a header tree per column: a regex of the heading as a user writes it."""
    for column, pattern in zip(base["header_schema"], patterns, strict=True):
        column["header_matching_validation_tree"] = {"name": "header", "rule_groups": [
            {"name": "heading", "rules": [{"type": "regex", "pattern": pattern}]}]}
    return base


@pytest.mark.parametrize(("text", "form"), [
    ("Preva-\nlence", "Prevalence"),
    ("non-\nresident", "non-resident"),
    ("Persons \ndirectly \nreached\n(in lakh)", "Persons directly reached (in lakh)"),
    ("Others(1)", "Others"),
    ("Total*", "Total"),
    ("Debt1\n(Rs crore)", "Debt (Rs crore)"),
    ("Age/Sex/\nPhysiological  Group", "Age/Sex/Physiological Group"),
    ("Unit price", "Unit price"),
])
def test_a_heading_is_tried_in_its_printed_forms(text: str, form: str) -> None:
    assert form in printed_forms(text)
    assert printed_forms(text)[0] == text  # as read, first


@pytest.mark.parametrize("text", ["2011-12", "Q1", "Congress- 1st Dist", "18 years"])
def test_figures_and_codes_keep_their_digits_and_hyphens(text: str) -> None:
    assert printed_forms(text) == (text,)


@pytest.mark.parametrize("ruled", [False, True], ids=["unruled", "ruled"])
def test_header_trees_of_the_printed_headings_read_the_table_the_names_read(ruled: bool) -> None:
    document = load_document(table_pdf((700, HEADED), ruled=ruled, columns=FIVE),
                             "application/pdf")
    names = target(*NAMES)
    trees = with_trees(target(*NAMES, target_id="t-trees"), "(?i)Region", "(?i)Unit price",
                       "(?i)Quantity", "(?i)Staff", "(?i)Stores")
    by_names = grid(tables_of(document, names)["t-table"])
    assert by_names == {0: BODY}
    assert grid(tables_of(document, trees)["t-trees"]) == by_names


def test_a_header_tree_never_loses_the_table_its_names_find() -> None:
    # The trees match no heading on the page; the names do.
    document = load_document(table_pdf((700, HEADED), columns=FIVE), "application/pdf")
    strict = with_trees(target(*NAMES), "(?i)Area", "(?i)Cost", "(?i)Count", "(?i)People",
                        "(?i)Shops")
    assert grid(tables_of(document, strict)["t-table"]) == {0: BODY}


def test_the_own_reader_matches_trees_on_headings_with_footnote_marks() -> None:
    # No found table: a page of lines read by the engine's own header-band reader.
    document = stacked("Item Qty* Price(1)", "Apples 2 1.50", "Pears 3 2.25")
    lines = group_lines(document.pages[0].words)
    trees = with_trees(target("Item", "Quantity", "Price"), "Item", "Qty", "Price")
    cells = extract_table(lines, trees)
    assert grid(cells) == {0: [["Apples", "2", "1.50"], ["Pears", "3", "2.25"]]}


TWIN: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("North", "1200", "15", "4"),
                   ("South", "950", "11", "3")]
OTHER: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("West", "720", "9", "3"),
                    ("Centre", "610", "7", "2")]
THIRD: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("Coast", "300", "4", "1"),
                    ("Hills", "200", "3", "1")]


def body(rows: list[Row]) -> list[list[str]]:
    return [list(row) for row in rows[1:]]


def test_targets_with_the_same_headings_take_one_table_each_in_document_order() -> None:
    document = load_document(table_pdf((700, TWIN), (560, OTHER)), "application/pdf")
    first = target("Region", "Sales", "Staff", "Stores", target_id="t-first")
    second = target("Region", "Sales", "Staff", "Stores", target_id="t-second")
    found = tables_of(document, first, second)
    assert grid(found["t-first"]) == {0: body(TWIN)}
    assert grid(found["t-second"]) == {0: body(OTHER)}
    # Alone, one target reads both.
    alone = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(alone) == {0: body(TWIN), 1: body(OTHER)}


def test_the_last_of_the_targets_with_the_same_headings_takes_the_tables_left() -> None:
    document = load_document(table_pdf((760, TWIN), (620, OTHER), (480, THIRD)),
                             "application/pdf")
    first = target("Region", "Sales", "Staff", "Stores", target_id="t-first")
    # The same schema, named in other case and spacing.
    second = target("region", "SALES", "Staff ", "Stores", target_id="t-second")
    found = tables_of(document, first, second)
    assert grid(found["t-first"]) == {0: body(TWIN)}
    assert grid(found["t-second"]) == {0: body(OTHER), 1: body(THIRD)}


def test_columns_without_a_heading_do_not_keep_a_page_from_the_finders() -> None:
    # Two columns without a name (the row labels of a table, a column of grades): the
    # page is given to the finders by the three headings named, and the table read.
    rows: list[Row] = [("", "", "Accel/decel", "Speed", "Idle time"),
                       ("Savings", "Low", "5%", "8%", "0.5%"),
                       ("", "High", "15%", "15%", "2%")]
    document = load_document(table_pdf((700, rows), ruled=True,
                                       columns=(60, 160, 260, 360, 460)), "application/pdf")
    wanted = target("", "", "Accel/decel", "Speed", "Idle time")
    assert headed_pages(document, wanted) == [1]
    assert grid(tables_of(document, wanted)["t-table"]) == {0: [list(r) for r in rows[1:]]}


@pytest.mark.parametrize("trees", [False, True], ids=["names", "header-trees"])
def test_targets_whose_headings_differ_in_spaces_alone_take_one_table_each(trees: bool) -> None:
    # "(95% CI)" and "(95%CI)" are one heading to the judge of found tables, which
    # compares names without spaces: the two targets are one schema, dealt in order. So
    # are trees each user wrote for the heading as they read it ("\(95% CI\)" and
    # "\(95%\s*CI\)").
    rows: list[Row] = [("Region", "Sales", "(95% CI)"), ("North", "1200", "1.1-1.3"),
                       ("South", "950", "0.9-1.0")]
    other: list[Row] = [rows[0], ("West", "720", "0.7-0.8"), ("Centre", "610", "0.6-0.7")]
    document = load_document(table_pdf((700, rows), (560, other), columns=(60, 220, 330)),
                             "application/pdf")
    first = target("Region", "Sales", "(95% CI)", target_id="t-first")
    second = target("Region", "Sales", "(95%CI)", target_id="t-second")
    for wanted, pattern in ((first, r"\(95% CI\)"), (second, r"\(95%\s*CI\)")) if trees else ():
        wanted["header_schema"][2]["header_matching_validation_tree"] = {
            "name": "heading", "rule_groups": [{"name": "printed", "rules": [
                {"type": "regex", "pattern": pattern}]}]}
    found = tables_of(document, first, second)
    assert grid(found["t-first"]) == {0: body(rows)}
    assert grid(found["t-second"]) == {0: body(other)}


def test_a_table_goes_to_the_target_whose_names_are_printed_most_alike() -> None:
    # Both targets' names match the headings at 85 % or more: the table is the one
    # whose names are printed as its headings are.
    rows: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("North", "1200", "15", "4"),
                       ("South", "950", "11", "3")]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    alike = target("Region", "Sales", "Staff", "Stores", target_id="t-alike")
    near = target("Regions", "Sales", "Staffs", "Store", target_id="t-near")
    assert grid(tables_of(document, near, alike)["t-alike"]) == {0: body(rows)}
    assert grid(judged_cells(document, alike, [near])) == {0: body(rows)}
    assert judged_cells(document, near, [alike]) == []
