"""A target read from what the user wrote (engine/roles.py): its role and shape from its
name and description, and the engine finding the same value whatever it is called."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from servicetools.service.engine.roles import (
    ADDRESS,
    CURRENCY,
    CUSTOMER,
    DOCUMENT_NUMBER,
    DUE_DATE,
    ISSUE_DATE,
    ISSUER,
    ORDER_NUMBER,
    PERIOD,
    SUBTOTAL,
    TAX,
    TOTAL,
    TRANSACTION_NUMBER,
    field_words_only,
    understand,
)

from ..support.engine_documents import extract_all, placed, stacked


def _role(name: str, description: str = "", example: str = "") -> str:
    return understand({"name": name, "description": description, "example": example}).role


@pytest.mark.parametrize(("name", "role"), [
    ("Issuer", ISSUER), ("Seller", ISSUER), ("Supplier", ISSUER), ("Sold by", ISSUER),
    ("Company", ISSUER), ("From", ISSUER), ("Biller", ISSUER), ("Merchant", ISSUER),
    ("Store", ISSUER), ("Lieferant", ISSUER),
    ("Buyer", CUSTOMER), ("Sold To", CUSTOMER), ("Bill To", CUSTOMER), ("Client", CUSTOMER),
    ("Invoice ID", DOCUMENT_NUMBER), ("Document No.", DOCUMENT_NUMBER),
    ("Rechnungsnummer", DOCUMENT_NUMBER), ("PO Number", ORDER_NUMBER),
    ("Purchase Order", ORDER_NUMBER), ("Receipt Number", TRANSACTION_NUMBER),
    ("Due Date", DUE_DATE), ("Pay By", DUE_DATE), ("Invoice Date", ISSUE_DATE),
    ("Issue Date", ISSUE_DATE), ("Amount Due", TOTAL), ("Gross Amount", TOTAL),
    ("Net Amount", SUBTOTAL), ("Amount before tax", SUBTOTAL), ("Tax Amount", TAX),
    ("VAT", TAX), ("Total Tax", TAX), ("Total Excluding VAT", SUBTOTAL),
    ("Vendor Address", ADDRESS), ("Money", CURRENCY),
    # A name in another language qualifies its noun after it.
    ("Date d'échéance", DUE_DATE), ("Fecha de vencimiento", DUE_DATE),
    ("Data di scadenza", DUE_DATE), ("Fälligkeitsdatum", DUE_DATE),
    ("Montant HT", SUBTOTAL), ("Montant TTC", TOTAL), ("Montant TVA", TAX),
    # A total's name that says the tax is in is the total, out the subtotal; one that
    # names only the tax is the tax.
    ("Total incl. VAT", TOTAL), ("Totaal incl. BTW", TOTAL), ("Gesamtbetrag inkl. MwSt.", TOTAL),
    ("Total con IVA", TOTAL), ("Total excl. VAT", SUBTOTAL), ("Bedrag excl. BTW", SUBTOTAL),
    ("Total sin IVA", SUBTOTAL), ("Total Tax", TAX), ("BTW-bedrag", TAX),
    # The last word of a name is its head: what the name asks for.
    ("Tax Rate", ""), ("Total Hours", ""), ("Net Weight", ""), ("Total Discount", ""),
    ("Amount in Words", ""), ("Number of Items", ""), ("Supplier ID", ""),
    ("Store Number", ""), ("Supplier VAT Number", ""), ("Employee ID", ""),
    ("Tracking Number", ""), ("Customer PO", ORDER_NUMBER), ("VAT Registration Number", ""),
    ("Reg No", ""), ("Paid Date", ""), ("Due Amount", TOTAL), ("PO Total", TOTAL),
    # Not the document's: a person's birth date, the customer's own reference.
    ("Date of Birth", ""), ("Your Reference", ORDER_NUMBER),
    ("Customer Reference", ORDER_NUMBER),
    # Heads the role's own words make, or a party's name.
    ("Sold By", ISSUER), ("Vendor Name", ISSUER), ("Grand Total", TOTAL),
    ("Amount Paid", TOTAL),
    ("Invoice Number", DOCUMENT_NUMBER), ("Deal Number", DOCUMENT_NUMBER),
])
def test_the_name_says_the_role(name: str, role: str) -> None:
    assert _role(name) == role


def test_the_description_speaks_when_the_name_names_no_role() -> None:
    # The description's subject comes first; words only a name makes a role of
    # ("company", "date", "amount") do not count in prose.
    assert _role("Who", "The company that issued the invoice (the seller).") == ISSUER
    assert _role("Party", "The seller of the goods.") == ""  # "party" names its own thing
    assert _role("Campaign", "The political campaign running the ads.") == ""
    # Who buys or pays is the customer, whatever the document calls it.
    assert _role("Sponsor", "The committee paying for the ads.") == CUSTOMER
    assert _role("Who", "Who buys the advertising.") == CUSTOMER
    assert _role("Location", "The address of the place of purchase.") == ADDRESS


def test_a_name_of_something_else_is_not_read_into_a_role() -> None:
    # "How the customer paid" describes a payment method, not the customer.
    assert _role("Payment Method", "How the customer paid, printed after \"Paid By\".") == ""
    assert _role("Customer ID") == "" and _role("VAT ID") == ""
    # A name-like role with a code's example is a code (a "Company" example "HRB-12345").
    assert _role("Company", example="HRB-12345") == ""


def test_the_shape_comes_from_example_then_rules_then_role() -> None:
    assert understand({"name": "Total", "example": "1,500.00"}).kind == "amount"
    dated = {"name": "When", "validation_tree": {"name": "d", "rule_groups": [
        {"name": "g", "rules": [{"type": "date", "formats": ["%d.%m.%Y"]}]}]}}
    assert understand(dated).kind == "date"
    assert understand({"name": "Due Date"}).kind == "date"
    assert understand({"name": "Invoice ID"}).kind == "code"
    assert understand({"name": "Issuer"}).kind == "text"


def test_an_address_knows_whose_it_is() -> None:
    assert understand({"name": "Billing Address", "description": "The customer's address."}
                      ).owner == CUSTOMER
    assert understand({"name": "Vendor Address"}).owner == ISSUER


INVOICE = stacked(("Northwind Traders GmbH", 0.025), "Hauptstrasse 5, 10115 Berlin",
                  "INVOICE", "Invoice No: INV-42X", "Invoice Date: 12.03.2024",
                  "Bill To: Globex Corporation", "Total: 1,500.00")


def _renamed(configuration: dict[str, Any], names: dict[str, tuple[str, str]]
             ) -> tuple[dict[str, Any], dict[str, str]]:
    changed = copy.deepcopy(configuration)
    ids = {}
    for target in changed["extraction_targets"]:
        if target["name"] in names:
            ids[target["name"]] = target["id"]
            target["name"], target["description"] = names[target["name"]]
    return changed, ids


@pytest.mark.parametrize("issuer", ["Issuer", "Seller", "Supplier", "Sold by", "Biller",
                                    "Company", "From"])
def test_the_issuer_is_found_whatever_the_user_calls_it(
    invoices_config: dict[str, Any], issuer: str,
) -> None:
    configuration, ids = _renamed(invoices_config, {
        "Vendor": (issuer, "The company that issued the invoice (the seller)."),
        "Customer": ("Buyer", "Who the invoice is addressed to."),
        "Invoice Number": ("Invoice ID", "The identifier of this invoice."),
        "Total": ("Amount Due", "What has to be paid."),
    })
    found = extract_all(INVOICE, configuration)
    values = {name: found[i].values[0].text for name, i in ids.items()}
    assert values == {"Vendor": "Northwind Traders GmbH", "Customer": "Globex Corporation",
                      "Invoice Number": "INV-42X", "Total": "1,500.00"}


def test_a_target_the_document_does_not_have_stays_empty(invoices_config: dict[str, Any]
                                                         ) -> None:
    # An order number is not the invoice's own number, even where a title prints one.
    configuration, ids = _renamed(invoices_config, {
        "Due Date": ("PO Number", "The customer's purchase order number.")})
    for target in configuration["extraction_targets"]:
        if target["id"] == ids["Due Date"]:
            target["example"], target["validation_tree"] = "PO-7781", None
    titled = stacked(("Northwind Traders GmbH", 0.025), "Invoice INV-42X",
                     "Invoice Date: 12.03.2024", "Total: 1,500.00")
    found = extract_all(titled, configuration)
    assert found[ids["Due Date"]].values[0].text == ""
    assert found["t-invoice-number"].values[0].text == "INV-42X"


def test_a_heading_is_never_the_issuer(invoices_config: dict[str, Any]) -> None:
    for heading in ("PAYMENT RECEIPT", "Retail Invoices/Bill", "Sales Order Confirmation"):
        # The heading set larger than the name, which has no legal form to speak for it.
        document = stacked((heading, 0.03), ("Northwind Traders", 0.022),
                           "Hauptstrasse 5, 10115 Berlin", "Invoice No: INV-1")
        vendor = extract_all(document, invoices_config)["t-vendor"].values[0]
        assert vendor.text == "Northwind Traders", heading


def test_an_ungrounded_value_never_reaches_the_auto_accept_line(
    invoices_config: dict[str, Any],
) -> None:
    found = extract_all(INVOICE, invoices_config)
    vendor = found["t-vendor"].values[0]  # from the letterhead: no label says so
    assert vendor.text == "Northwind Traders GmbH" and vendor.confidence < 0.9
    assert found["t-total"].values[0].confidence >= 0.9  # labelled "Total:"


def test_one_end_of_a_period_is_not_the_issue_date() -> None:
    for name, end in (("Start Date", "start"), ("End Date", "end"), ("From Date", "start"),
                      ("Last Air Date", "end"), ("Begins", "start")):
        understood = understand({"name": name, "example": "12/09/19"})
        assert (understood.role, understood.end) == (PERIOD, end), name
    assert _role("Invoice Date", example="12/09/19") == ISSUE_DATE


@pytest.mark.parametrize(("name", "value"), [("Start Date", "05/05/20"),
                                             ("End Date", "05/08/20")])
def test_a_period_end_is_read_from_the_period_label(name: str, value: str) -> None:
    configuration = {"extraction_targets": [{
        "id": "t-end", "type": "field", "name": name, "description": "When the ads run.",
        "example": "12/09/19", "is_multiple": False}]}
    # A range printed without spaces, after a label the target's name does not hold.
    document = stacked("Contract # 566898 Date Entered 02/18/20",
                       "Schedule Dates 05/05/20-05/08/20 Last Modified 02/18/20")
    assert extract_all(document, configuration)["t-end"].values[0].text == value


def test_a_field_label_is_never_a_name() -> None:
    assert field_words_only("Phone/Fax") and field_words_only("Salesperson")
    assert not field_words_only("Acme Trading") and not field_words_only("")


def test_a_contract_prints_its_own_number_after_its_title() -> None:
    configuration = {"extraction_targets": [{
        "id": "t-deal", "type": "field", "name": "Deal Number",
        "description": "The station's number for this deal.", "example": "1422136-1",
        "is_multiple": False}]}
    document = stacked("ph: (608) 781-0025", "Contract # 4259092 Date Entered 02/25/20")
    assert extract_all(document, configuration)["t-deal"].values[0].text == "4259092"
    # Without a label, a telephone number is not taken for the document's number.
    unlabelled = stacked("ph: (608) 781-0025", "Schedule Dates 02/26/20-03/03/20")
    assert extract_all(unlabelled, configuration)["t-deal"].values[0].text == ""


def test_a_range_with_weekday_names_and_a_clause_is_no_name() -> None:
    configuration = {"extraction_targets": [{
        "id": "t-end", "type": "field", "name": "Run End", "description": "When the ads end.",
        "example": "February 12, 2020", "is_multiple": False}, {
        "id": "t-client", "type": "field", "name": "Client", "description": "Who buys.",
        "example": "", "is_multiple": False}]}
    document = stacked("Flight Dates: Wednesday, February 12, 2020 to Monday, February 17, 2020",
                       "Client references to Agency apply to Advertiser")
    found = extract_all(document, configuration)
    assert found["t-end"].values[0].text == "February 17, 2020"
    assert found["t-client"].values[0].text == ""  # a clause of the terms, not a name


def _flight_configuration() -> dict[str, Any]:
    def date(target_id: str, name: str) -> dict[str, Any]:
        return {"id": target_id, "type": "field", "name": name, "example": "02/26/20",
                "description": "One end of the flight.", "is_multiple": False}
    return {"extraction_targets": [date("t-start", "Flight Start"), date("t-end", "Flight End")]}


def test_a_range_whose_end_stands_apart_from_its_start() -> None:
    # The end set further from the start than a phrase's words: still the range's end.
    document = placed(("Flight Dates: Wednesday, February 12, 2020 to", 0.05, 0.1),
                      ("Monday, February 17, 2020", 0.62, 0.1))
    found = extract_all(document, _flight_configuration())
    assert found["t-end"].values[0].text == "February 17, 2020"
    assert found["t-start"].values[0].text == "February 12, 2020"


def test_a_range_misread_by_ocr_gives_each_end() -> None:
    # "0" read as "o" and the dash glued to the first date: the start is the first date,
    # not the one date of the shape left.
    document = placed(("Contract Dates", 0.5, 0.1), ("o2/26/20- 03/03/20", 0.5, 0.125))
    found = extract_all(document, _flight_configuration())
    assert (found["t-start"].values[0].text, found["t-end"].values[0].text) == (
        "02/26/20", "03/03/20")


def test_a_date_after_a_range_joint_is_no_start() -> None:
    # The range's start stands left of where the label's value is read ("to 03/03/20"):
    # the date under the label ends a range, it does not start one.
    document = placed(("Contract Dates", 0.5, 0.1), ("02/26/20 -", 0.3, 0.125),
                      ("03/03/20", 0.5, 0.125))
    found = extract_all(document, _flight_configuration())
    assert found["t-start"].values[0].text == "02/26/20"  # the page's range, unlabelled
    assert found["t-end"].values[0].text == "03/03/20"


def test_a_range_named_by_the_targets_own_word_wins_over_the_first_range() -> None:
    # An invoice prints its billing period first and the order's flight below: a
    # "Flight Start" is the flight's, named by the word before its range.
    document = stacked("Estimate Number 1284 Invoice Period 03/30/20 - 04/26/20",
                       "Sales Region National Order Flight 04/21/20 - 04/27/20")
    found = extract_all(document, _flight_configuration())
    assert (found["t-start"].values[0].text, found["t-end"].values[0].text) == (
        "04/21/20", "04/27/20")
    assert found["t-start"].values[0].evidence.get("range_named") == 1.0


def _start(name: str) -> dict[str, Any]:
    return {"extraction_targets": [{
        "id": "t-start", "type": "field", "name": name, "example": "02/26/20",
        "description": "The first day.", "is_multiple": False}]}


def test_the_period_a_bill_covers_is_no_other_periods_start() -> None:
    # "Start Date" names nothing: the first range that is not the bill's own period.
    document = stacked("Estimate Number 1284 Invoice Period 03/30/20 - 04/26/20",
                       "Sales Region National Order Flight 04/21/20 - 04/27/20")
    assert extract_all(document, _start("Start Date"))["t-start"].values[0].text == "04/21/20"
    # A target asking for the bill's period has it; alone, the bill's period is read.
    assert extract_all(document, _start("Billing Start"))["t-start"].values[0].text == (
        "03/30/20")
    alone = stacked("Invoice Period 03/30/20 - 04/26/20")
    assert extract_all(alone, _start("Start Date"))["t-start"].values[0].text == "03/30/20"


@pytest.mark.parametrize(("name", "subject"), [
    ("Flight Start", ("flight",)), ("Contract End Date", ("contract",)), ("Start Date", ()),
    ("Valid Until", ("valid",)), ("Invoice Date", ())])
def test_what_a_ranges_end_is_of_comes_from_the_name(name: str, subject: tuple[str, ...]
                                                       ) -> None:
    assert understand({"name": name, "example": "02/26/20"}).subject == subject


def test_a_label_the_description_rules_out_gives_way_to_any_other() -> None:
    configuration = {"extraction_targets": [{
        "id": "t-gross", "type": "field", "name": "Order Cost", "example": "1,200.00",
        "description": "What the order costs (the gross total, not the smaller net amount).",
        "is_multiple": False}]}
    both = extract_all(stacked("Total: 100.00", "Net Total: 85.00"), configuration)
    assert both["t-gross"].values[0].text == "100.00"
    # Alone (no commission taken, net is gross), it is still read, less surely.
    alone = extract_all(stacked("Net Total: 85.00"), configuration)["t-gross"].values[0]
    assert alone.text == "85.00"
    assert alone.confidence < both["t-gross"].values[0].confidence


def test_a_value_after_two_labels_joined_by_a_slash() -> None:
    configuration = {"extraction_targets": [{
        "id": "t-order", "type": "field", "name": "Order Number",
        "description": "The number of the order.", "example": "1422136", "is_multiple": False}]}
    document = placed(("ORDER", 0.1, 0.05), ("Orders", 0.05, 0.1),
                      ("Order / Rev: 1996189", 0.3, 0.1), ("Alt Order #: WOC12499614", 0.3, 0.13))
    # "Order / Rev:" labels the order's number; the alternative number is another's.
    assert extract_all(document, configuration)["t-order"].values[0].text == "1996189"


def test_a_document_numbers_itself_under_the_noun_of_its_title() -> None:
    configuration = {"extraction_targets": [{
        "id": "t-contract", "type": "field", "name": "Contract ID",
        "description": "The identifier of the contract.", "example": "1422136-1",
        "is_multiple": False}]}
    # An order titled "ORDER" numbers itself under "Order / Rev:": its own number,
    # whatever the target is called; the alternative order number is another's.
    document = placed(("ORDER", 0.1, 0.05), ("Orders", 0.05, 0.1),
                      ("Order / Rev: 1996189", 0.3, 0.1), ("Alt Order #: WOC12499614", 0.3, 0.13))
    value = extract_all(document, configuration)["t-contract"].values[0]
    assert value.text == "1996189"
    assert value.evidence.get("titled") == 1.0  # grounded by the title, as calibrated
    # Without the title, "Order" is some order's number, not the contract's.
    untitled = placed(("Orders", 0.05, 0.1), ("Order / Rev: 1996189", 0.3, 0.1))
    assert extract_all(untitled, configuration)["t-contract"].values[0].text == ""


def _one(name: str, description: str, example: str = "") -> dict[str, Any]:
    return {"extraction_targets": [{
        "id": "t-one", "type": "field", "name": name, "description": description,
        "example": example, "is_multiple": False}]}


def test_a_label_inside_another_fields_label_is_not_the_targets() -> None:
    # "Account Executive" is the sales rep's label: an "Account" target finds no
    # "Executive" there, and nothing at all where the page prints no account of its own.
    rep = stacked("Account Executive Robert Martinez", "Account Executives",
                  "Advertiser Code 1288")
    assert extract_all(rep, _one("Account", "The account the order is for."))[
        "t-one"].values[0].text == ""
    # A tax target passes over the seller's "Tax ID" to the tax itself.
    taxed = stacked("Northwind Traders GmbH", "Tax ID DE811907980", "Subtotal 100.00",
                    "Tax 19.00", "Total 119.00")
    assert extract_all(taxed, _one("Tax", "The tax charged.", "1.00"))[
        "t-one"].values[0].text == "19.00"
    # The same words as the user's own label stay the target's.
    assert extract_all(taxed, _one("Tax ID", "The seller's tax number.", "DE123456789"))[
        "t-one"].values[0].text == "DE811907980"


def test_the_date_of_another_event_is_not_the_invoices_date() -> None:
    # "Date of delivery" labels the delivery's date: an "Invoice Date" target takes no
    # "Date" from it, and finds the issue date printed elsewhere.
    issued = _one("Invoice Date", "The date the invoice was issued.", "2020-01-31")
    document = stacked("Northwind Traders GmbH", "2020-11-21",
                       "Invoice # RE-20201121/508 issued at 2020-11-21",
                       "Date of delivery 2020-11-10", "Total 119.00")
    assert extract_all(document, issued)["t-one"].values[0].text == "2020-11-21"
    # A target that asks for the delivery's date by that name finds it.
    delivered = _one("Delivery Date", "When the goods were delivered.", "2020-01-31")
    assert extract_all(document, delivered)["t-one"].values[0].text == "2020-11-10"


def test_a_label_the_text_layer_glued_to_the_word_before_it_is_read() -> None:
    # One station's forms print the station's code and "Advertiser" as one word.
    advertiser = _one("Advertiser", "Who buys the air time.")
    document = stacked("KECI+KCFW Combo KECI+KCFWAdvertiser Matt Rosendale For Congress-R",
                       "Agency American Media Group Buyer Name MediaAssistant")
    assert extract_all(document, advertiser)["t-one"].values[0].text == (
        "Matt Rosendale For Congress-R")
    # A name's own capitals ("McAdvertiser", "PayPal") glue no label to anything.
    plain = stacked("Agency McAdvertiser Holdings", "Buyer Name MediaAssistant")
    assert extract_all(plain, advertiser)["t-one"].values[0].text != "Holdings"


def test_the_address_a_document_is_delivered_to_is_not_the_shops() -> None:
    # "Delivery Address" labels where the goods go: the shop's "Address" target takes no
    # "Address" from it, and reads the shop's address under its name.
    shop = _one("Address", "The shop's address, printed under its name at the top of the "
                "receipt.")
    document = stacked("Green Grocer Ltd", "12 Market Street", "Springfield 01234",
                       "To: Jane Doe", "Delivery Address: 186 South St, Boston, MA 02111",
                       "Fruit Box 1.00 ea $32.00", "Total $32.00")
    assert extract_all(document, shop)["t-one"].values[0].text == (
        "12 Market Street Springfield 01234")
    # A target that asks for that address finds it.
    delivered = _one("Delivery Address", "Where the goods are delivered.")
    assert extract_all(document, delivered)["t-one"].values[0].text == (
        "186 South St, Boston, MA 02111")
    # Under a name with no address of its own, an item's priced line is no address.
    unaddressed = stacked("Green Grocer Ltd", "Jane@example.com",
                          "Delivery Address: 186 South St, Boston, MA 02111",
                          "Fruit Box 1.00 ea $32.00", "Delivery Fee 1.00 $5.00")
    assert extract_all(unaddressed, shop)["t-one"].values[0].text == ""


def test_a_value_under_a_label_the_description_rules_out_stays_under_0_9() -> None:
    # "not the smaller net amount": a gross target takes "Net Total" only where nothing
    # else is labelled, and then it may well be the net, so it is never auto-accepted.
    gross = _one("Gross Amount", "The total cost of the order before the agency's "
                 "commission (the gross total, not the smaller net amount).", "1.00")
    netted = stacked("KXLT Rochester", "Advertiser DSCC-IE", "NetTotal $11,390.00")
    [value] = extract_all(netted, gross)["t-one"].values
    assert value.text == "$11,390.00" and value.confidence < 0.9
    # A label of its own wins over it.
    both = stacked("KXLT Rochester", "Gross Total $13,400.00", "Net Total $11,390.00")
    assert extract_all(both, gross)["t-one"].values[0].text == "$13,400.00"


@pytest.mark.parametrize(("name", "description", "role"), [
    # Names no label prints, read by what their description says.
    ("Beneficiary", "The company to be paid.", ISSUER),
    ("Counterparty", "Who we bought from.", ISSUER),
    ("Origin", "Who sent the invoice.", ISSUER),
    ("Outlet", "The store the receipt is from.", ISSUER),
    ("Recipient Company", "Who the invoice is addressed to.", CUSTOMER),
    ("Ordering Party", "The company that ordered.", CUSTOMER),
    ("Pay Until", "The last day to pay.", DUE_DATE),
    ("When", "The date the invoice was written.", ISSUE_DATE),
    ("Identifier", "The invoice identifier.", DOCUMENT_NUMBER),
])
def test_a_description_in_plain_words_names_the_role(name: str, description: str,
                                                     role: str) -> None:
    assert _role(name, description) == role
