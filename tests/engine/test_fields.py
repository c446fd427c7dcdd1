import copy
from typing import Any

import pytest

from servicetools.service.engine import (
    Document,
    Page,
    TargetGroup,
    Word,
    extract_group,
    group_targets,
    load_document,
)
from servicetools.service.engine.fields import label_aliases

from ..support.engine_documents import (
    EXPECTED_INVOICE,
    extract_all,
    field_values,
    line_document,
    placed,
)


def test_group_targets_by_search_area_in_first_appearance_order(
    invoices_config: dict[str, Any],
) -> None:
    groups = group_targets(invoices_config)
    assert [(g.id, g.search_area) for g in groups] == [("header", "header"), ("all", "all")]
    assert [t["id"] for t in groups[0].targets] == [
        "t-invoice-number",
        "t-invoice-date",
        "t-due-date",
        "t-vendor",
        "t-customer",
    ]
    assert [t["id"] for t in groups[1].targets] == [
        "t-subtotal",
        "t-tax",
        "t-total",
        "t-line-items",
    ]


def test_aliases_are_the_name_and_the_quoted_phrases(invoices_config: dict[str, Any]) -> None:
    target = invoices_config["extraction_targets"][0]
    aliases = label_aliases(target)
    # The configuration's own phrases first, then what they are called in other languages.
    assert aliases[:4] == ["Invoice Number", "Invoice No", "Invoice #", "Inv. No"]
    assert {"Rechnungsnummer", "N° de facture", "Factuurnummer", "Numero fattura"} <= set(aliases)


def test_invoice_fields_from_the_text_layer(
    invoice_pdf: bytes, invoices_config: dict[str, Any]
) -> None:
    targets = extract_all(load_document(invoice_pdf, "application/pdf"), invoices_config)
    assert field_values(targets) == EXPECTED_INVOICE
    assert all(len(t.values) == 1 for t in targets.values() if t.type == "field")
    assert all(t.confidence >= 0.85 for t in targets.values())
    # Right of its label beats below it ("Bill To:" has its value on the next line).
    assert targets["t-customer"].confidence < targets["t-vendor"].confidence


def test_fields_on_the_second_page_are_found(
    two_page_pdf: bytes, invoices_config: dict[str, Any]
) -> None:
    values = field_values(
        extract_all(load_document(two_page_pdf, "application/pdf"), invoices_config)
    )
    assert values["t-total"] == values["t-subtotal"] == "4,650.00"
    assert values["t-tax"] == "0.00"
    assert values["t-invoice-number"] == "INV-2024-0012"


def test_a_document_without_labels_gives_empty_low_confidence_values(
    letter_pdf: bytes, invoices_config: dict[str, Any]
) -> None:
    targets = extract_all(load_document(letter_pdf, "application/pdf"), invoices_config)
    for target in targets.values():
        if target.type == "field":
            assert [v.text for v in target.values] == [""]
            assert target.values[0].confidence <= 0.1
            assert target.confidence <= 0.1
        else:
            assert (target.cells, target.confidence) == ([], 0.0)


def test_search_area_restricts_the_words(invoices_config: dict[str, Any]) -> None:
    # The header area is the top half of page 1: a label below it does not count.
    document = line_document(*["filler"] * 20, "Invoice No: INV-9")
    [target, *_] = extract_group(document, group_targets(invoices_config)[0], invoices_config)
    assert (target.target_id, target.values[0].text) == ("t-invoice-number", "")
    whole = TargetGroup("all", "all", group_targets(invoices_config)[0].targets)
    [target, *_] = extract_group(document, whole, invoices_config)
    assert target.values[0].text == "INV-9"


def test_most_specific_label_wins(invoices_config: dict[str, Any]) -> None:
    document = line_document("Total Due: 99.00", "Sub-total 80.00", "Date 01.02.2024")
    targets = extract_all(document, invoices_config)
    values = field_values(targets)
    assert values["t-total"] == "99.00"
    assert values["t-subtotal"] == "80.00"
    assert values["t-invoice-date"] == "01.02.2024"
    assert values["t-due-date"] == ""  # the "Due" of "Total Due" is not its label
    assert targets["t-total"].confidence > 0.9


def test_a_date_holds_no_unlabelled_amount(invoices_config: dict[str, Any]) -> None:
    # The one amount-shaped text no label claims is part of a date: no tax by its shape.
    document = line_document("Total Due: 99.00", "Sub-total 80.00", "Date 01.02.2024")
    assert field_values(extract_all(document, invoices_config))["t-tax"] == ""


def test_a_label_that_goes_on_before_its_colon_is_a_longer_label(
    invoices_config: dict[str, Any],
) -> None:
    # "Date de facture associée" (a credit note's earlier invoice) and "Date de début de
    # prestation" begin with labels of the invoice date; the date under "Date :" is it.
    changed = copy.deepcopy(invoices_config)
    for target in changed["extraction_targets"]:
        if target["id"] == "t-invoice-date":
            target["name"], target["description"] = "Issue Date", "When the invoice was issued."
    document = line_document("Facture N° : F2018", "Date de facture associée : 30/11/2018",
                             "Date de début de prestation : 01/12/2018", "Date : 31/12/2018")
    targets = extract_all(document, changed)
    assert field_values(targets)["t-invoice-date"] == "31/12/2018"
    # Under a label that goes on, the value is still found when it is the only one.
    alone = extract_all(line_document("Date de facture associée : 30/11/2018"), changed)
    assert field_values(alone)["t-invoice-date"] == "30/11/2018"


def test_an_account_number_in_parentheses_is_no_part_of_a_name(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("Bill To: AB PAC (33483)", "Total: 10.00")
    assert field_values(extract_all(document, invoices_config))["t-customer"] == "AB PAC"


def test_a_street_after_a_name_label_is_no_name(invoices_config: dict[str, Any]) -> None:
    # A house number and a street are the address under the seller's heading.
    document = line_document("Vendor: 35 rue d'ici", "Total: 10.00")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] != "35 rue d'ici"
    named = line_document("Vendor: 99 SPEED MART S/B", "Total: 10.00")
    assert field_values(extract_all(named, invoices_config))["t-vendor"] == "99 SPEED MART S/B"


def test_value_stops_at_the_next_label_and_at_a_wide_gap(invoices_config: dict[str, Any]) -> None:
    document = line_document(
        "Vendor: Initech Date: 2024-05-06", "Customer: Umbrella Corp", ("Page 1", 0.8)
    )
    values = field_values(extract_all(document, invoices_config))
    assert values["t-vendor"] == "Initech"
    assert values["t-invoice-date"] == "2024-05-06"
    assert values["t-customer"] == "Umbrella Corp"


def test_a_heading_in_the_next_column_is_no_value(invoices_config: dict[str, Any]) -> None:
    # Headings side by side: right of "BILL TO:" stands the next heading, not the name.
    document = placed(("BILL TO:", 0.05, 0.05), ("SHIP TO:", 0.4, 0.05),
                      ("Microsoft Finance", 0.05, 0.08), ("Microsoft Delivery", 0.4, 0.08))
    values = field_values(extract_all(document, invoices_config))
    assert values["t-customer"] == "Microsoft Finance"


def test_a_row_of_headings_over_a_row_of_values(invoices_config: dict[str, Any]) -> None:
    # The values stand two line heights below their headings; right of "Invoice Date"
    # is the next heading, which has no date's shape, so the value below is read.
    document = placed(("Invoice Number", 0.05, 0.05), ("Invoice Date", 0.25, 0.05),
                      ("Invoice Due Date", 0.45, 0.05), ("34278587", 0.05, 0.1),
                      ("6/18/2017", 0.25, 0.1), ("6/24/2017", 0.45, 0.1))
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-number"] == "34278587"
    assert values["t-invoice-date"] == "6/18/2017"
    assert values["t-due-date"] == "6/24/2017"  # the one date left, by its shape


def test_free_text_is_read_only_right_under_its_label(invoices_config: dict[str, Any]) -> None:
    near = placed(("Bill To", 0.05, 0.05), ("Globex Corporation", 0.05, 0.075))
    far = placed(("Bill To", 0.05, 0.05), ("Globex Corporation", 0.05, 0.1))
    assert field_values(extract_all(near, invoices_config))["t-customer"] == "Globex Corporation"
    assert field_values(extract_all(far, invoices_config))["t-customer"] == ""


def test_a_title_with_a_colon_labels_the_number(invoices_config: dict[str, Any]) -> None:
    document = line_document("CONTOSO LTD. INVOICE", "INVOICE: INV-100", "DATE: 11/15/2019")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-number"] == "INV-100"


def test_fuzzy_labels_and_space_insensitive_matching(invoices_config: dict[str, Any]) -> None:
    document = line_document("InvoiceNumbr: A-17", "BillTo: Wayne Enterprises")
    targets = extract_all(document, invoices_config)
    assert targets["t-invoice-number"].values[0].text == "A-17"
    assert targets["t-customer"].values[0].text == "Wayne Enterprises"
    # The misspelt label lowers the score (before calibration, which is per kind of field).
    assert (targets["t-invoice-number"].values[0].raw or 1.0) < (
        targets["t-customer"].values[0].raw or 0.0)


def test_values_of_the_shape_are_preferred(invoices_config: dict[str, Any]) -> None:
    document = line_document("Total: see attachment", "Grand Total: 12.00")
    target = extract_all(document, invoices_config)["t-total"]
    # "see attachment" is no amount: not even a weak rival, so nothing lowers the score.
    assert [v.text for v in target.values] == ["12.00"]


def test_shape_fallback_only_when_unambiguous(invoices_config: dict[str, Any]) -> None:
    configuration = copy.deepcopy(invoices_config)
    configuration["extraction_targets"] = [
        t for t in configuration["extraction_targets"] if t["id"] in ("t-invoice-number", "t-total")
    ]
    for target in configuration["extraction_targets"]:
        target["search_area"], target["search_area_type"] = "all", "all"
    one = field_values(extract_all(line_document("Ref INV-2024-0099", "Pay 7.50"), configuration))
    assert one == {"t-invoice-number": "INV-2024-0099", "t-total": "7.50"}
    targets = extract_all(line_document("Ref INV-2024-0099", "Pay 7.50"), configuration)
    assert all((t.values[0].raw or 1.0) <= 0.4 for t in targets.values())
    two = field_values(extract_all(line_document("Pay 7.50 or 8.00"), configuration))
    assert two["t-total"] == ""
    # Two unlabelled date fields cannot share out one lone date.
    dates = field_values(extract_all(line_document("Issued 2024-03-15"), invoices_config))
    assert dates["t-invoice-date"] == dates["t-due-date"] == ""


def test_multiple_values_in_reading_order(invoices_config: dict[str, Any]) -> None:
    configuration = copy.deepcopy(invoices_config)
    target = next(t for t in configuration["extraction_targets"] if t["id"] == "t-due-date")
    target["is_multiple"] = True
    document = line_document("Due Date: 2024-04-14", "notes", "Due Date: 2024-05-14")
    values = extract_all(document, configuration)["t-due-date"].values
    assert [v.text for v in values] == ["2024-04-14", "2024-05-14"]
    assert all(v.confidence > 0.9 for v in values)


@pytest.mark.parametrize("text", ["Total: 1,500.00", "TOTAL 1,500.00", "Total:   $1,500.00"])
def test_total_variants(text: str, invoices_config: dict[str, Any]) -> None:
    values = field_values(extract_all(line_document("Subtotal: 1,250.00", text), invoices_config))
    assert values["t-subtotal"] == "1,250.00"
    assert values["t-total"].endswith("1,500.00")


def test_rates_after_labels_and_spaces_ocr_dropped(invoices_config: dict[str, Any]) -> None:
    document = line_document(
        "Date: August27,2023", "Sales Tax 20%: 1.815,49 EUR", ("Net Amount", 0.05)
    )
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-date"] == "August 27, 2023"
    assert values["t-tax"] == "1.815,49 EUR"


def test_unlabelled_letterhead_is_the_vendor_when_the_description_says_at_the_top(
    invoices_config: dict[str, Any],
) -> None:
    words = [Word("Brightpath", 0.05, 0.05, 0.2, 0.075), Word("LLC", 0.21, 0.05, 0.26, 0.075),
             Word("INVOICE", 0.7, 0.05, 0.9, 0.078)]
    document = line_document("", "", "139 Canal Street", "Invoice No: A-31770",
                             "Bill To: Globex Corporation")
    document.pages[0].words = words + document.pages[0].words
    values = field_values(extract_all(document, invoices_config))
    assert values["t-vendor"] == "Brightpath LLC"
    assert values["t-customer"] == "Globex Corporation"
    assert values["t-invoice-number"] == "A-31770"  # the title "INVOICE" labels nothing


def test_no_letterhead_when_the_top_line_is_body_text(invoices_config: dict[str, Any]) -> None:
    document = line_document("Thank you for your order", "Invoice No: A-31770")
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-vendor"] == ""
    assert targets["t-vendor"].confidence <= 0.1


def test_words_inside_table_rows_are_no_labels(invoices_config: dict[str, Any]) -> None:
    def line(y: float, *cells: tuple[float, str]) -> list[Word]:
        words = []
        for x, text in cells:
            for token in text.split():
                words.append(Word(token, x, y, x + 0.012 * len(token), y + 0.015))
                x += 0.012 * len(token) + 0.006
        return words

    words = line(0.30, (0.05, "Description"), (0.5, "Qty"), (0.6, "Unit Price"),
                 (0.8, "Amount"))
    words += line(0.33, (0.05, "Setup at the customer's premises"), (0.5, "1"),
                  (0.6, "50.00"), (0.8, "50.00"))
    document = Document("application/pdf", [Page(1, 612, 792, b"", words, "text")])
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-customer"] == ""  # not "premises"
    assert [c.text for c in targets["t-line-items"].cells] == [
        "Setup at the customer's premises", "1", "50.00", "50.00"
    ]


def test_validates_agrees_with_validate_value(invoices_config: dict[str, Any]) -> None:
    from servicetools.service.engine.shapes import validates
    from servicetools.wire.rules import validate_value

    trees = [
        tree
        for target in invoices_config["extraction_targets"]
        for column in [target, *target.get("header_schema", [])]
        for tree in (
            column.get("validation_tree"),
            column.get("header_matching_validation_tree"),
            column.get("extracted_value_validation_tree"),
        )
        if tree
    ]
    trees.append({"rule_groups": [{"rules": []}, {"rules": [{"type": "not_empty"}]}]})
    assert len(trees) > 5
    values = ["", " ", "Qty", "Unit Price", "12.50", "2024-03-15", "INV-0001", "-3", "abc"]
    for tree in trees:
        for value in values:
            assert validates(value, tree) is validate_value(value, tree)[0], (value, tree)
