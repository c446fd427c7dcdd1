import copy
from typing import Any

from servicetools.service.engine import (
    Document,
    Page,
    TargetGroup,
    Word,
    extract_group,
    load_document,
)

from ..support.drawn_pages import INVOICE_ROWS, long_rows
from ..support.engine_documents import grid, line_items


def test_invoice_line_items_with_a_multi_line_description(
    invoice_pdf: bytes, invoices_config: dict[str, Any]
) -> None:
    cells = line_items(load_document(invoice_pdf, "application/pdf"), invoices_config)
    assert grid(cells) == {0: [list(row) for row in INVOICE_ROWS]}
    assert grid(cells)[0][1][0] == "Consulting services,\nMarch 2024"
    # Ordered by table, row, column (D7), every cell confident on a text layer; the
    # description wrapped onto two lines less than the others (the cells model: in the
    # table sets, a cell of two lines is more often two cells joined or one cut).
    assert [(c.table_index, c.row, c.column) for c in cells] == sorted(
        (c.table_index, c.row, c.column) for c in cells
    )
    wrapped = next(c for c in cells if "\n" in c.text)
    assert all(0.9 <= c.confidence <= 1 for c in cells if c is not wrapped)
    assert 0.8 <= wrapped.confidence < min(c.confidence for c in cells if c is not wrapped)


def test_a_table_continued_on_the_next_page_is_a_new_table(
    two_page_pdf: bytes, invoices_config: dict[str, Any]
) -> None:
    cells = line_items(load_document(two_page_pdf, "application/pdf"), invoices_config)
    first, second = long_rows()
    assert grid(cells) == {0: [list(r) for r in first], 1: [list(r) for r in second]}


def test_no_header_no_table(letter_pdf: bytes, invoices_config: dict[str, Any]) -> None:
    target = next(t for t in invoices_config["extraction_targets"] if t["type"] == "table")
    document = load_document(letter_pdf, "application/pdf")
    [result] = extract_group(document, TargetGroup("all", "all", (target,)), invoices_config)
    assert (result.cells, result.confidence) == ([], 0.0)


def placed_document(*rows: tuple[tuple[str, float], ...]) -> Document:
    """One line per row; each cell text starts at the given x (page fraction)."""
    return pitched_document(*((0.05 + 0.03 * number, row) for number, row in enumerate(rows)))


def pitched_document(*rows: tuple[float, tuple[tuple[str, float], ...]]) -> Document:
    """`placed_document` with each row's top given (page fraction): lines set tight."""
    words = []
    for y, row in rows:
        for text, x in row:
            for token in text.split():
                width = 0.012 * len(token)
                words.append(Word(token, x, y, x + width, y + 0.015))
                x += width + 0.006
    return Document("application/pdf", [Page(1, 612, 792, b"", words, "text")])


def test_a_tight_line_that_would_have_fitted_on_the_line_above_is_a_row_of_its_own(
    invoices_config: dict[str, Any],
) -> None:
    # Text wraps only where the next word does not fit. "Office" would have fitted after
    # "Ink" (the column runs as wide as "Fountain pen refills"), so the line under it,
    # however tight, is a heading of the rows below; "March" after "Consulting services"
    # would not have, so "March 2024" is the rest of that description. A word hyphenated
    # at a line's end goes on below, whatever fits.
    at = (0.05, 0.4, 0.6, 0.8)
    document = pitched_document(
        (0.05, tuple(zip(("Product", "Qty", "Unit Price", "Amount"), at, strict=True))),
        (0.08, tuple(zip(("Fountain pen refills", "3", "4.00", "12.00"), at, strict=True))),
        (0.11, tuple(zip(("Ink", "1", "8.00", "8.00"), at, strict=True))),
        (0.127, (("Office supplies", 0.05),)),
        (0.16, tuple(zip(("Consulting services", "2", "3.00", "6.00"), at, strict=True))),
        (0.177, (("March 2024", 0.05),)),
        (0.21, tuple(zip(("Pre-", "1", "2.00", "2.00"), at, strict=True))),
        (0.227, (("paid card", 0.05),)),
    )
    assert grid(line_items(document, invoices_config)) == {0: [
        ["Fountain pen refills", "3", "4.00", "12.00"], ["Ink", "1", "8.00", "8.00"],
        ["Office supplies", "", "", ""], ["Consulting services\nMarch 2024", "2", "3.00", "6.00"],
        ["Pre-\npaid card", "1", "2.00", "2.00"]]}


def test_table_ends_at_totals_and_columns_follow_header_positions(
    invoices_config: dict[str, Any],
) -> None:
    # Columns printed in another order than the schema's positions, one unknown column
    # ("Ref") and one missing (Unit Price).
    at = (0.05, 0.25, 0.55, 0.75)
    document = placed_document(
        tuple(zip(("Amount", "Product", "Ref", "Qty"), at, strict=True)),
        tuple(zip(("12.00", "Pen", "X1", "3"), at, strict=True)),
        tuple(zip(("8.00", "Ink", "X2", "1"), at, strict=True)),
        (("Total", 0.05), ("20.00", 0.25)),
        (("Not a row", 0.25),),
    )
    cells = line_items(document, invoices_config)
    assert grid(cells) == {0: [["Pen", "3", "", "12.00"], ["Ink", "1", "", "8.00"]]}
    # Unit Price is absent from the header: its cells are empty and doubtful.
    assert all(c.confidence <= 0.3 for c in cells if c.column == 2)


def test_own_cells_carry_how_well_the_header_names_the_schema(
    invoices_config: dict[str, Any],
) -> None:
    # The share candidates.py gives a found table's cells (an F1 of the schema's named
    # columns and the header's phrases), so the cells model weighs both readers alike.
    at = (0.05, 0.25, 0.55, 0.75)
    whole = placed_document(
        tuple(zip(("Product", "Qty", "Unit Price", "Amount"), at, strict=True)),
        tuple(zip(("Pen", "3", "4.00", "12.00"), at, strict=True)))
    partial = placed_document(
        tuple(zip(("Amount", "Product", "Ref", "Qty"), at, strict=True)),
        tuple(zip(("12.00", "Pen", "X1", "3"), at, strict=True)))
    shares = [{c.evidence["share"] for c in line_items(document, invoices_config)}
              for document in (whole, partial)]
    # Three of the four columns named, and one heading the schema lacks: 2*3 / (4+4).
    assert shares == [{1.0}, {0.75}]


def test_header_by_column_name_without_header_trees(invoices_config: dict[str, Any]) -> None:
    configuration = copy.deepcopy(invoices_config)
    table = next(t for t in configuration["extraction_targets"] if t["type"] == "table")
    for column in table["header_schema"]:
        column.pop("header_matching_validation_tree")
    at = (0.05, 0.4, 0.6, 0.8)
    document = placed_document(
        tuple(zip(("Description", "Quantity", "Unit Price", "Amount"), at, strict=True)),
        tuple(zip(("Tea", "2", "1.50", "3.00"), at, strict=True)),
    )
    assert grid(line_items(document, configuration)) == {0: [["Tea", "2", "1.50", "3.00"]]}


def test_compact_header_with_punctuation_a_number_column_and_quantity_first(
    invoices_config: dict[str, Any],
) -> None:
    # "Qty." is "Qty": header trees match whole cells, so the dot must not hide the
    # column; "#" (row numbers) is a column the schema lacks.
    at = (0.05, 0.12, 0.2, 0.6, 0.8)
    document = placed_document(
        tuple(zip(("#", "Qty.", "Item", "Rate", "Amount"), at, strict=True)),
        tuple(zip(("1", "5", "Pens", "2.00", "10.00"), at, strict=True)),
        tuple(zip(("2", "12", "Paper", "0.50", "6.00"), at, strict=True)),
    )
    assert grid(line_items(document, invoices_config)) == {
        0: [["Pens", "5", "2.00", "10.00"], ["Paper", "12", "0.50", "6.00"]]
    }


def test_header_cells_matching_two_columns_get_the_best_one_to_one_assignment(
    invoices_config: dict[str, Any],
) -> None:
    # A quantity header tree that also matches "Unit Cost": the one column "Unit Cost"
    # can be besides quantity is unit price, so "Units" takes the quantity.
    configuration = copy.deepcopy(invoices_config)
    table = next(t for t in configuration["extraction_targets"] if t["type"] == "table")
    quantity = table["header_schema"][1]["header_matching_validation_tree"]
    quantity["rule_groups"][0]["rules"][0]["pattern"] = "(?i).*(qty|units?).*"
    at = (0.05, 0.4, 0.6, 0.8)
    document = placed_document(
        tuple(zip(("Description", "Unit Cost", "Units", "Amount"), at, strict=True)),
        tuple(zip(("Tea", "1.50", "2", "3.00"), at, strict=True)),
    )
    assert grid(line_items(document, configuration)) == {0: [["Tea", "2", "1.50", "3.00"]]}


def test_assignment_prefers_more_columns_then_the_more_specific_cells() -> None:
    from servicetools.service.engine.tables import assign

    # Three columns either way; then columns left to right in schema order.
    assert assign([[0, 1], [0], [1, 2], [2]]) == {1: 0, 2: 1, 3: 2}
    # The cell matching one column only is the surer header of it.
    assert assign([[0, 1], [1]]) == {0: 0, 1: 1}
    assert assign([[1, 2], [1], [0]]) == {0: 2, 1: 1, 2: 0}
    assert assign([[1], [1], [], [3]]) == {0: 1, 3: 3}
    assert assign([[], []]) == {}


def test_prepared_header_tests_agree_with_header_trees(invoices_config: dict[str, Any]) -> None:
    from servicetools.service.engine.shapes import header_matches, header_test

    table = next(t for t in invoices_config["extraction_targets"] if t["type"] == "table")
    trees = [c["header_matching_validation_tree"] for c in table["header_schema"]]
    regex = {"type": "regex", "pattern": "(?i)qty|units?"}
    trees += [
        {"rule_groups": [{"rules": [regex]}, {"rules": [{"type": "length", "max": 3}]}]},
        {"rule_groups": [{"rules": [{"type": "regex", "pattern": "("}, regex]}, {"rules": []}]},
        {"rule_groups": [{"rules": []}]},
        {"rule_groups": [{"rules": [{"type": "regex", "pattern": "(?i)qty"}]}, {"rules": [regex]}]},
    ]
    texts = ["", " ", "Qty", "qty", "Units", "Unit Price", "Unit", "Amount", "Line Total", "x"]
    for tree in trees:
        test = header_test(tree)
        for text in texts:
            assert test(text) is header_matches(text, tree), (text, tree)


def test_a_total_after_the_count_of_items_closes_them(receipts_config: dict[str, Any]) -> None:
    # "7 TOTAL 75.70" under "Qty Description Amount": seven items, then the receipt's
    # total; it is no eighth item, and the total is read from it, not from the
    # "Amount" column of the tax summary under it.
    from ..support.engine_documents import extract_all

    document = placed_document(
        (("Qty", 0.05), ("Description", 0.15), ("Amount", 0.6)),
        (("2", 0.05), ("SPICY CHICKEN FLOSS", 0.15), ("5.80", 0.6)),
        (("5", 0.05), ("DIRTY BREAD", 0.15), ("69.90", 0.6)),
        (("7", 0.05), ("TOTAL", 0.15), ("75.70", 0.6)),
        (("GST Summary", 0.05), ("Amount", 0.4), ("Tax", 0.6)),
        (("T: 6% GST", 0.05), ("71.42", 0.4), ("4.28", 0.6)),
    )
    found = extract_all(document, receipts_config)
    assert found["t-receipt-total"].values[0].text == "75.70"
    items = [c.text for c in found["t-receipt-items"].cells if c.column == 0]
    assert items == ["SPICY CHICKEN FLOSS", "DIRTY BREAD"]
