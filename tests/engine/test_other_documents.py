"""A user's own configuration on documents no development set holds (pay slips, bank
statements, orders, delivery notes): a line of two labels each with its amount, a
person's name under the noun of the target's name, an issuer the description calls "the
bank that issues the statement", the two ends of a period printed on lines of their own,
an order's date, table columns named alone whose headings print other words, a bank
statement's balances, holder and account in the words banks print, an employer, and a
stay's arrival and departure. Each
document is built here word by word or drawn with reportlab."""

from __future__ import annotations

from typing import Any

from servicetools.service.engine import load_document
from servicetools.service.engine.roles import ISSUER, understand

from ..support.engine_documents import (
    extract_all,
    field_target,
    first_values,
    placed,
    table_pdf,
    tables_of,
    target,
)

PAYSLIP = placed(
    ("Northwind Traders Ltd", 0.05, 0.03), ("PAYSLIP", 0.70, 0.03),
    ("Employee: Jane Q. Doe", 0.05, 0.10), ("Payment Date: 28 June 2024", 0.50, 0.10),
    ("Basic Salary", 0.05, 0.20), ("2,916.67", 0.35, 0.20),
    ("PAYE Tax", 0.50, 0.20), ("373.40", 0.80, 0.20),
    ("Total Gross Pay", 0.05, 0.30), ("2,916.67", 0.35, 0.30),
    ("Total Deductions", 0.50, 0.30), ("611.20", 0.80, 0.30),
    ("Net Pay", 0.50, 0.36), ("2,305.47", 0.80, 0.36),
)


def test_two_labels_with_their_amounts_on_one_line_are_no_summary_row() -> None:
    # "Total Deductions 611.20" after the gross pay's amount is the next label's value;
    # the gross pay's amount is not one of a row of totals ("Total: 16.98 1.02"), and the
    # total of the deductions is not the gross pay.
    values = first_values(PAYSLIP, field_target("gross", "Gross Pay", "Total earnings before "
                                     "deductions for this period.", "3250.00"),
                     field_target("net", "Net Pay", "What the employee receives after tax and "
                            "deductions.", "2471.33"))
    assert values == {"gross": "2,916.67", "net": "2,305.47"}


def test_a_name_target_is_labelled_by_the_noun_of_its_name() -> None:
    values = first_values(PAYSLIP, field_target("who", "Employee Name",
                                     "The name of the employee who is paid.", "Jane Doe"))
    assert values == {"who": "Jane Q. Doe"}
    # "First Name" asks for a first name, which no "First" labels: nothing here is one.
    document = placed(("First: 28 June 2024", 0.05, 0.03), ("Payslip", 0.05, 0.10))
    first = field_target("first", "First Name", "Given name.")
    assert first_values(document, first) == {"first": ""}


def test_the_company_that_issues_a_document_is_its_issuer() -> None:
    for tense in ("issues", "issued"):
        bank = field_target("bank", "Bank", f"The bank that {tense} the statement.")
        assert understand(bank).role == ISSUER
    statement = placed(("First National Bank", 0.05, 0.03), ("Statement of Account", 0.65, 0.03),
                       ("Account Number: 1234567890", 0.05, 0.12))
    assert first_values(statement, field_target("bank", "Bank",
                                                "The bank that issues the statement.")
                   ) == {"bank": "First National Bank"}


def test_the_ends_of_a_period_printed_on_lines_of_their_own() -> None:
    statement = placed(("Albion Savings", 0.05, 0.03),
                       ("From", 0.55, 0.10), ("1 March 2024", 0.65, 0.10),
                       ("To", 0.55, 0.13), ("31 March 2024", 0.65, 0.13),
                       ("Balance brought forward", 0.05, 0.20), ("1,204.88", 0.80, 0.20))
    values = first_values(statement,
                     field_target("start", "Statement Start", "First day covered by the statement.",
                            "2024-05-01"),
                     field_target("end", "Statement End", "Last day covered by the statement.",
                            "2024-05-31"))
    assert values == {"start": "1 March 2024", "end": "31 March 2024"}


def test_a_date_named_for_the_document_is_its_date_under_a_title_beside_the_letterhead() -> None:
    # The title shares its line with the letterhead ("Globex Corporation   PURCHASE
    # ORDER"); an order's "Order Date" is the date it prints, as its "PO Number" is its
    # number. On an invoice, an "Order Date" is another event's: "Date:" does not
    # label it, and the lone date is its only by shape, under 0.9.
    order = placed(("Globex Corporation", 0.05, 0.03), ("PURCHASE ORDER", 0.65, 0.03),
                   ("PO #: 4500012345", 0.65, 0.06), ("Date: March 1, 2024", 0.65, 0.09),
                   ("Total 1,295.00", 0.65, 0.30))
    asked = field_target("date", "Order Date", "When the order was placed.", "2024-03-01")
    configuration = {"id": "c", "name": "mine", "extraction_targets": [asked]}
    (found,) = extract_all(order, configuration)["date"].values
    assert (found.text, found.evidence.get("titled")) == ("March 1, 2024", 1.0)
    invoice = placed(("Globex Corporation", 0.05, 0.03), ("INVOICE", 0.65, 0.03),
                     ("Date: March 1, 2024", 0.65, 0.09), ("Total 1,295.00", 0.65, 0.30))
    (found,) = extract_all(invoice, configuration)["date"].values
    assert not found.evidence.get("titled") and found.confidence < 0.9


ITEMS = [("Item", "Description", "Qty", "Unit Price", "Amount"),
         ("1", "Steel brackets", "500", "1.50", "750.00"),
         ("2", "Hex bolts", "1000", "0.50", "500.00")]


def _grid(cells: list[Any]) -> list[list[str]]:
    rows: dict[int, dict[int, str]] = {}
    for cell in cells:
        rows.setdefault(cell.row, {})[cell.column] = cell.text
    return [[row.get(c, "") for c in range(max(row) + 1)] for _, row in sorted(rows.items())]


def test_a_column_named_alone_finds_its_heading_in_other_words_and_languages() -> None:
    # "Quantity" over "Qty", "Line Total" over "Amount", "Menge" and "Artikel" on a
    # German page; a column printed under its own name ("Description") keeps it over a
    # heading of the same meaning beside it ("Item").
    document = load_document(table_pdf((700, ITEMS), columns=(60, 100, 300, 360, 460)),
                             "application/pdf")
    cells = tables_of(document, target("Description", "Quantity", "Unit Price",
                                       "Line Total"))["t-table"]
    assert _grid(cells) == [["Steel brackets", "500", "1.50", "750.00"],
                            ["Hex bolts", "1000", "0.50", "500.00"]]
    german = [("Artikel", "Menge", "Preis"), ("Schraube M8", "1000", "0,50"),
              ("Mutter M8", "1000", "0,10")]
    document = load_document(table_pdf((700, german)), "application/pdf")
    cells = tables_of(document, target("Description", "Quantity", "Price"))["t-table"]
    assert _grid(cells) == [["Schraube M8", "1000", "0,50"], ["Mutter M8", "1000", "0,10"]]


def test_synonyms_leave_a_header_tree_and_the_schemas_other_names_alone() -> None:
    # Asked for both "Amount" and "Total", each keeps its own heading.
    both = [("Description", "Amount", "Total"), ("Bolts", "500.00", "595.00"),
            ("Nuts", "100.00", "119.00")]
    document = load_document(table_pdf((700, both)), "application/pdf")
    cells = tables_of(document, target("Description", "Total", "Amount"))["t-table"]
    assert _grid(cells) == [["Bolts", "595.00", "500.00"], ["Nuts", "119.00", "100.00"]]
    # A column with a header tree matches what its tree says, not the vocabulary's words.
    treed = target("Description", "Quantity")
    treed["header_schema"][1]["header_matching_validation_tree"] = {
        "name": "quantity", "rule_groups": [{"name": "h", "rules": [
            {"type": "regex", "pattern": "(?i)^pieces$"}]}]}
    document = load_document(table_pdf((700, [row[1:3] for row in ITEMS])), "application/pdf")
    assert not tables_of(document, treed)["t-table"]


def test_a_delivery_note_numbers_and_dates_itself_and_names_the_customers_order() -> None:
    note = placed(("Schrauben Meyer KG", 0.05, 0.03), ("Lieferschein", 0.65, 0.03),
                  ("Lieferschein-Nr.: DN-2024-0042", 0.65, 0.06),
                  ("Ihre Bestellung: PO-7781", 0.65, 0.08), ("Datum: 02.05.2024", 0.65, 0.10),
                  ("Initech GmbH", 0.05, 0.12), ("Hafenweg 9, 20457 Hamburg", 0.05, 0.14))
    values = first_values(note,
                     field_target("note", "Delivery Note Number",
                                  "The number of the delivery note.",
                            "DN-2024-0042"),
                     field_target("order", "Order Number",
                                  "The customer's order number it delivers.",
                            "PO-7781"),
                     field_target("date", "Delivery Date", "When the goods were delivered.",
                            "2024-05-02"))
    assert values == {"note": "DN-2024-0042", "order": "PO-7781", "date": "02.05.2024"}


def test_a_hotels_guest_is_its_customer() -> None:
    folio = placed(("Hôtel Beau Rivage", 0.05, 0.03), ("FACTURE", 0.65, 0.03),
                   ("Client : M. John Smith", 0.05, 0.10), ("Total CHF 612,40", 0.55, 0.30))
    (guest,) = extract_all(folio, {"id": "c", "name": "mine", "extraction_targets": [
        field_target("guest", "Guest", "The name of the hotel guest.")]})["guest"].values
    # Under a label of the customer's role, not of the user's words: below 0.9.
    assert (guest.text, guest.confidence < 0.9) == ("M. John Smith", True)


def test_an_amount_under_the_roles_label_said_of_something_else_stays_under_0_9() -> None:
    # "Total Charges" is a total, but of the charges: for a "Balance Due" (printed here
    # as "Patient Balance Due", a label no target names) it is a guess, not a reading.
    bill = placed(("Riverside Family Clinic", 0.05, 0.03),
                  ("Total Charges", 0.50, 0.20), ("275.00", 0.80, 0.20),
                  ("Patient Balance Due", 0.50, 0.25), ("$85.00", 0.80, 0.25))
    configuration = {"id": "c", "name": "mine", "extraction_targets": [
        field_target("due", "Balance Due", "What the patient still owes.", "85.00")]}
    (value,) = extract_all(bill, configuration)["due"].values
    assert value.evidence.get("other_words") == 1.0 and value.confidence < 0.9
    # Under its own words the amount is read surely.
    bill = placed(("Riverside Family Clinic", 0.05, 0.03), ("Balance Due", 0.50, 0.25),
                  ("$85.00", 0.80, 0.25))
    (value,) = extract_all(bill, configuration)["due"].values
    assert value.text == "$85.00" and value.confidence >= 0.9


def test_a_bank_statements_balances_holder_and_account_in_the_words_banks_print() -> None:
    targets = (field_target("open", "Opening Balance", "The balance at the start of the statement "
                      "period.", "5210.44"),
               field_target("close", "Closing Balance", "The balance at the end of the statement "
                      "period.", "4987.12"),
               field_target("holder", "Account Holder", "The customer who owns the account.",
                      "Maria Garcia"),
               field_target("account", "Account Number", "The number of the account.",
                            "1234567890"),
               field_target("bank", "Bank", "The bank that issues the statement."))
    uk = placed(("Albion Building Society", 0.05, 0.03),
                ("Current Account Statement", 0.65, 0.03),
                ("Account name", 0.05, 0.10), ("Ms Priya Patel", 0.25, 0.10),
                ("Account no", 0.05, 0.12), ("83920145", 0.25, 0.12),
                ("Balance brought forward", 0.05, 0.20), ("1,204.88", 0.80, 0.20),
                ("Balance carried forward", 0.05, 0.26), ("3,106.68", 0.80, 0.26))
    assert first_values(uk, *targets) == {
        "open": "1,204.88", "close": "3,106.68", "holder": "Ms Priya Patel",
        "account": "83920145", "bank": "Albion Building Society"}
    # A German statement's IBAN is the account's number, read whole in its groups.
    de = placed(("Sparkasse Rheinland", 0.05, 0.03), ("Kontoauszug Nr. 5/2024", 0.65, 0.03),
                ("Kontoinhaber: Anna Schmidt", 0.05, 0.10),
                ("IBAN: DE89 3705 0198 0001 2345 67", 0.05, 0.12),
                ("Alter Kontostand", 0.05, 0.20), ("3.450,12", 0.80, 0.20),
                ("Neuer Kontostand", 0.05, 0.26), ("5.230,12", 0.80, 0.26))
    assert first_values(de, *targets) == {
        "open": "3.450,12", "close": "5.230,12", "holder": "Anna Schmidt",
        "account": "DE89 3705 0198 0001 2345 67", "bank": "Sparkasse Rheinland"}


def test_an_employer_issues_the_pay_slip_and_a_stays_dates_are_its_arrival_and_departure() -> None:
    employer = field_target("employer", "Employer", "The company that pays the employee.",
                            "Acme Ltd")
    assert understand(employer).role == ISSUER
    assert first_values(PAYSLIP, employer) == {"employer": "Northwind Traders Ltd"}
    bill = placed(("Hôtel Beau Rivage", 0.05, 0.03), ("FACTURE", 0.65, 0.03),
                  ("Arrivée : 02.04.2024", 0.05, 0.12), ("Départ : 05.04.2024", 0.40, 0.12))
    stay = (field_target("in", "Check-in", "Arrival date.", "2024-04-02"),
            field_target("out", "Check-out", "Departure date.", "2024-04-05"))
    assert first_values(bill, *stay) == {"in": "02.04.2024", "out": "05.04.2024"}
