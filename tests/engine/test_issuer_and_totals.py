"""Where invoices print their issuer besides a letterhead: after "Payable To" (its colon
set apart by OCR), as the registered name in a footer over the company's bank and
registration details, and heading the sender's address block when the top holds only
labels; and a European invoice's "Net total" and "VAT total", found whatever the user
called the subtotal and the tax. Each document is built here word by word."""

import copy
from typing import Any

import pytest

from servicetools.service.engine import Document

from ..support.engine_documents import extract_all, field_values, line_document, placed, stacked


def _whole_page(configuration: dict[str, Any]) -> dict[str, Any]:
    """The bundled invoices configuration with every field read from the whole document
    (it reads names from the top half of page 1)."""
    changed = copy.deepcopy(configuration)
    for target in changed["extraction_targets"]:
        if target["type"] == "field":
            target["search_area"] = "all"
    return changed


def _footer_invoice(details: bool) -> Document:
    phrases = [("Sftware Netz", 0.05, 0.03), ("Musterstrasse 99", 0.05, 0.10),
               ("12345 Musterstadt", 0.05, 0.12), ("Rechnung Nr. 4711", 0.05, 0.20),
               *((f"Position {n} Kassenbuch Box 49,90", 0.05, 0.25 + 0.03 * n)
                 for n in range(1, 10)),
               ("Gesamtbetrag: 155,50 EUR", 0.05, 0.60),
               ("Mustermann AG", 0.05, 0.85), ("Musterstrasse 272a", 0.05, 0.87),
               ("98765 Musterstadt", 0.05, 0.89)]
    if details:
        phrases += [("IBAN: DE12345678901234567890", 0.40, 0.85),
                     ("BIC: ABCDEFGHXXX", 0.40, 0.87)]
    return placed(*phrases)


def test_the_registered_name_in_the_footer_is_the_issuer(
    invoices_config: dict[str, Any],
) -> None:
    targets = extract_all(_footer_invoice(details=True), _whole_page(invoices_config))
    assert field_values(targets)["t-vendor"] == "Mustermann AG"
    assert targets["t-vendor"].values[0].evidence["issuer_footer"] == 1.0


def test_a_footer_name_without_company_details_is_not_taken(
    invoices_config: dict[str, Any],
) -> None:
    # A legal form low on the page alone may be anyone (a customer, a carrier): the
    # bank or registration details beside it make it the issuer's.
    targets = extract_all(_footer_invoice(details=False), _whole_page(invoices_config))
    assert field_values(targets)["t-vendor"] == "Sftware Netz"


def test_the_footer_is_not_read_outside_the_targets_search_area(
    invoices_config: dict[str, Any],
) -> None:
    # The bundled configuration reads the vendor in the top half of page 1.
    targets = extract_all(_footer_invoice(details=True), invoices_config)
    assert field_values(targets)["t-vendor"] == "Sftware Netz"


@pytest.mark.parametrize("colon", [" :", ":"], ids=["apart", "glued"])
def test_payable_to_names_the_issuer_even_with_its_colon_set_apart(
    colon: str, invoices_config: dict[str, Any],
) -> None:
    document = placed(("INVOICE", 0.05, 0.03), (f"PAYABLE TO{colon}", 0.05, 0.10),
                      ("INVOICE DATE 12/30/2013", 0.45, 0.10),
                      ("LG Electronics MobileComm", 0.05, 0.12), ("BILL TO", 0.05, 0.20),
                      ("GOOGLE INC.", 0.05, 0.22))
    values = field_values(extract_all(document, invoices_config))
    assert values["t-vendor"] == "LG Electronics MobileComm"
    assert values["t-customer"] == "GOOGLE INC."


def _blocks(above: str) -> Document:
    return placed(("Invoice number: 12345", 0.65, 0.10), (above, 0.14, 0.12),
                  ("WeasyPrint", 0.14, 0.23), ("Our awesome developers", 0.50, 0.23),
                  ("26 rue Emile Decorps", 0.14, 0.25), ("From all around the world", 0.50, 0.25),
                  ("69100 Villeurbanne", 0.14, 0.27), ("Earth", 0.50, 0.27),
                  ("France", 0.14, 0.29), ("TOTAL DUE €10,545.00", 0.14, 0.50))


def test_the_name_heading_the_first_address_block_is_the_issuer(
    invoices_config: dict[str, Any],
) -> None:
    # Labels come first and no name stands larger: the sender's block (a name over a
    # street and a postcode) is the issuer; the customer's block beside it has no address.
    targets = extract_all(_blocks("Invoice Date: March 31, 2018"), invoices_config)
    assert field_values(targets)["t-vendor"] == "WeasyPrint"
    assert targets["t-vendor"].values[0].evidence["issuer_block"] == 1.0


def test_a_block_right_under_a_heading_is_not_the_senders(
    invoices_config: dict[str, Any],
) -> None:
    document = placed(("Invoice number: 12345", 0.65, 0.10), ("Bill To:", 0.14, 0.21),
                      ("WeasyPrint", 0.14, 0.23), ("26 rue Emile Decorps", 0.14, 0.25),
                      ("69100 Villeurbanne", 0.14, 0.27))
    values = field_values(extract_all(document, invoices_config))
    assert values["t-vendor"] != "WeasyPrint"
    assert values["t-customer"] == "WeasyPrint"


def test_net_total_and_vat_total_label_the_subtotal_and_the_tax(
    invoices_config: dict[str, Any],
) -> None:
    # A European invoice's summary: the net total before the VAT total, then the total.
    document = placed(("Net total: 496.00 €", 0.55, 0.60), ("VAT total: 75.04 €", 0.55, 0.63),
                      ("Total: 571.04 €", 0.55, 0.66))
    values = field_values(extract_all(document, invoices_config))
    assert (values["t-subtotal"], values["t-tax"], values["t-total"]) == (
        "496.00 €", "75.04 €", "571.04 €")


def test_the_sum_printed_under_an_unknown_label_is_the_total_below_auto_accept(
    invoices_config: dict[str, Any],
) -> None:
    # "Due payable" labels no total the engine knows; "Net total" would answer "Total"
    # with the subtotal. The printed subtotal plus tax is the total, found by arithmetic.
    document = placed(("Net total: 496.00 €", 0.55, 0.60), ("VAT total: 75.04 €", 0.55, 0.63),
                      ("Due payable: 571.04 €", 0.55, 0.66))
    extracted = extract_all(document, invoices_config)
    assert field_values(extracted)["t-total"] == "571.04 €"
    assert extracted["t-total"].values[0].confidence < 0.9


def test_a_total_including_the_tax_is_not_the_tax(invoices_config: dict[str, Any]) -> None:
    # "Summe inkl. USt" holds the tax's word, but its amount is the total that includes it.
    document = placed(("Summe netto: 496,00 €", 0.55, 0.60),
                      ("Zuzügl. USt: 75,04 €", 0.55, 0.63),
                      ("Bitte überweisen Sie bis zum 24.07.2014:", 0.10, 0.66),
                      ("Summe inkl. USt: 571,04 €", 0.55, 0.69))
    values = field_values(extract_all(document, invoices_config))
    assert (values["t-tax"], values["t-total"]) == ("75,04 €", "571,04 €")


def test_an_amount_behind_another_label_is_not_the_first_labels(
    invoices_config: dict[str, Any],
) -> None:
    # A French footer: the VAT label answered by the VAT id, then other registrations and
    # the share capital, all on one line; the tax is elsewhere or not printed.
    document = placed(("TVA : FR11999999998 - SIRET : 99999999800010 - APE : 4778C - "
                       "SARL au capital de 120 000,00 €", 0.05, 0.10),
                      ("Total TTC 233,47 €", 0.55, 0.60))
    values = field_values(extract_all(document, invoices_config))
    assert values["t-tax"] != "120 000,00 €"
    assert values["t-total"] == "233,47 €"


def test_a_tax_summary_gives_its_sum_row_not_one_rates(
    invoices_config: dict[str, Any],
) -> None:
    # A German tax summary: one row per VAT rate, then the sums. A rate's label ("MwSt.-%")
    # heads no amount, the freight's line above it gives no tax.
    at = (0.30, 0.45, 0.60, 0.72)

    def row(y: float, *texts: str) -> list[tuple[str, float, float]]:
        return [(text, x, y) for text, x in zip(texts, at, strict=True) if text]

    document = placed(("Transportkosten : MwSt.-% 19,0, Frachtbetrag: 3,00", 0.05, 0.50),
                      *row(0.60, "Nettobetrag", "MwSt-Betrag", "MwSt-%", "Endbetrag"),
                      *row(0.63, "321,40", "61,07", "19,0", "382,47"),
                      *row(0.66, "127,59", "8,93", "7,0", "136,52"),
                      *row(0.69, "448,99", "70,00", "EUR", "518,99"))
    values = field_values(extract_all(document, invoices_config))
    assert (values["t-subtotal"], values["t-tax"], values["t-total"]) == (
        "448,99", "70,00", "518,99")


def test_amounts_that_do_not_add_up_are_not_auto_accepted(
    invoices_config: dict[str, Any],
) -> None:
    # One of the three is wrong, and nothing says which: none reaches 0.9.
    def confidences(total: str) -> dict[str, float]:
        document = line_document("Invoice No: 4711", "Subtotal: 100.00", "Tax: 19.00",
                                 f"Total: {total}")
        found = extract_all(document, invoices_config)
        return {t: found[t].values[0].confidence for t in ("t-subtotal", "t-tax", "t-total")}
    assert max(confidences("129.00").values()) < 0.9
    assert min(confidences("119.00").values()) >= 0.9


def _schedule_configuration() -> dict[str, Any]:
    def date(target_id: str, name: str, description: str) -> dict[str, Any]:
        return {"id": target_id, "type": "field", "name": name, "description": description,
                "example": "12/09/19", "is_multiple": False, "search_area": "all",
                "search_area_type": "all", "extraction_group_id": "g-dates",
                "validation_tree": {"name": "date", "rule_groups": [{"name": "date format",
                                    "rules": [{"type": "date", "formats": ["%m/%d/%y"]}]}]}}

    return {"id": "cfg-schedule", "name": "schedule", "document_class": "order",
            "description": "Orders of air time.", "search_areas": {},
            "extraction_targets": [date("t-start", "Start Date", "The first day the ads run."),
                                   date("t-end", "End Date", "The last day the ads run.")]}


@pytest.mark.parametrize("stated", [True, False], ids=["labelled-once", "range-only"])
def test_headings_repeated_over_a_schedule_do_not_label_the_period(stated: bool) -> None:
    # Each week of the schedule prints "Start Date  End Date" over its own dates; the
    # period the order states once is the one a "Start Date" target asks for.
    phrases = [("WYFF4.com", 0.05, 0.03),
               (("Contract Dates" if stated else "Schedule:") + " 09/29/20 - 10/05/20", 0.05, 0.08)]
    for week, y in enumerate((0.30, 0.40, 0.50)):
        phrases += [("Start Date", 0.10, y), ("End Date", 0.30, y), ("Spots", 0.50, y),
                    (f"10/0{week + 1}/20", 0.10, y + 0.025),
                    (f"10/0{week + 4}/20", 0.30, y + 0.025), ("2", 0.50, y + 0.025)]
    values = field_values(extract_all(placed(*phrases), _schedule_configuration()))
    assert (values["t-start"], values["t-end"]) == ("09/29/20", "10/05/20")


def test_headings_of_a_wide_table_printed_once_do_not_label_the_period() -> None:
    # One week under "Start Date  End Date  Weekdays  Spots/Week  Rate": a row of the
    # schedule, printed once. The period the order states under "Contract Dates" is the
    # one the targets ask for, though the headings are the targets' own names.
    phrases = [("Contract Dates", 0.05, 0.08), ("09/29/20 - 10/01/20", 0.05, 0.105)]
    for text, x in (("Start Date", 0.10), ("End Date", 0.25), ("Weekdays", 0.40),
                    ("Spots/Week", 0.55), ("Rate", 0.70)):
        phrases.append((text, x, 0.30))
    for text, x in (("Week: 09/28/20", 0.04), ("10/04/20", 0.25), ("MTW----", 0.40),
                    ("2", 0.55), ("$75.00", 0.70)):
        phrases.append((text, x, 0.325))
    values = field_values(extract_all(placed(*phrases), _schedule_configuration()))
    assert (values["t-start"], values["t-end"]) == ("09/29/20", "10/01/20")
    # Without a stated period, the row's dates are what the page has.
    alone = field_values(extract_all(placed(*phrases[2:]), _schedule_configuration()))
    assert alone["t-end"] == "10/04/20"


def test_the_owner_is_passed_over_when_ocr_sets_words_inside_owned_by(
    receipts_config: dict[str, Any],
) -> None:
    # "Owned ... By:" with the GST column's words read into it: the company under it
    # owns the shop, whose name heads the receipt.
    document = stacked(("SANYU STATIONERY SHOP", 0.027), "NO. 31G&33G, JALAN SETIA INDAH X,U13/X",
                       "40170 SETIA ALAM", "Tel: +603-3362 4137",
                       "Owned GST ID By: No: 001531760640 TAX INVOICE",
                       "SANYU SUPPLY SDN BHD (1135772-K)", "Total 14.90")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "SANYU STATIONERY SHOP"
    assert values["t-address"] == "NO. 31G&33G, JALAN SETIA INDAH X,U13/X 40170 SETIA ALAM"


def test_a_company_under_the_labels_is_not_the_issuer_when_one_heads_the_page(
    receipts_config: dict[str, Any],
) -> None:
    # The customer's block, set larger, under the invoice's labels: the company with a
    # legal form at the head of the page issued it.
    document = stacked("GARDENIA BAKERIES (KL) SDN BHD (139386 X)", "Lot 3, Jalan Pelabur 23/1,",
                       "40300 Shah Alam, Selangor.", "Tel: 03-55423228",
                       ("TAX INVOICE", 0.025), "Date: 16/09/2017",
                       ("MAKASSAR FRESH MARKET SDN BHD", 0.03), "GROUND FLOOR, NO. 4& 6,",
                       "47500 SUBANG JAYA, SELANGOR", "Total 5.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "GARDENIA BAKERIES (KL) SDN BHD"


def test_a_name_over_two_lines_ends_at_its_registration_number(
    receipts_config: dict[str, Any],
) -> None:
    document = stacked(("RESTAURANT JIAWEI", 0.03), ("JIAWEI HOUSE", 0.03), "002693074-K",
                       "13, JLN TASIK UTAMA 8", "MEDAN NIAGA DAMAI SG BESI", "57000 KL",
                       "Total 5.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "RESTAURANT JIAWEI JIAWEI HOUSE"
    assert values["t-address"] == "13, JLN TASIK UTAMA 8 MEDAN NIAGA DAMAI SG BESI 57000 KL"


def test_invoice_total_labels_the_total_under_any_name(invoices_config: dict[str, Any]) -> None:
    configuration = copy.deepcopy(invoices_config)
    total = next(t for t in configuration["extraction_targets"] if t["id"] == "t-total")
    total.update(name="Grand Total", description="What the customer has to pay.")
    document = placed(("LESS DISCOUNT", 0.50, 0.60), ("0.00", 0.85, 0.60),
                      ("FREIGHT", 0.50, 0.62), ("0.00", 0.85, 0.62),
                      ("INVOICE TOTAL", 0.50, 0.66), ("$2,978,666.00", 0.80, 0.66))
    assert field_values(extract_all(document, configuration))["t-total"] == "$2,978,666.00"


def test_a_company_at_the_top_keeps_the_issuer_against_a_footers_registered_name(
    invoices_config: dict[str, Any],
) -> None:
    # A marketplace or payment provider may print its own registered name and details in
    # the footer: the company heading the page issued the invoice.
    document = _footer_invoice(details=True)
    document.pages[0].words = [w for w in document.pages[0].words
                               if w.text not in ("Sftware", "Netz")]
    document.pages[0].words += placed(("Beispiel Handel GmbH", 0.05, 0.03)).pages[0].words
    targets = extract_all(document, _whole_page(invoices_config))
    assert field_values(targets)["t-vendor"] == "Beispiel Handel GmbH"


def _advertiser_configuration() -> dict[str, Any]:
    target = {"id": "t-advertiser", "type": "field", "name": "Advertiser",
              "description": "Who buys the air time, usually a campaign or committee.",
              "example": "Tom Steyer 2020", "is_multiple": False, "search_area": "all",
              "search_area_type": "all", "extraction_group_id": "g-order",
              "validation_tree": {"name": "advertiser", "rule_groups": []}}
    return {"id": "cfg-ads", "name": "ads", "document_class": "order",
            "description": "Orders of air time.", "search_areas": {},
            "extraction_targets": [target]}


@pytest.mark.parametrize(("label", "by_role"), [("Advertiser", 0.0), ("Buyer", 1.0)])
def test_a_party_under_a_label_of_its_role_alone_stays_below_auto_accept(
        label: str, by_role: float) -> None:
    # "Advertiser" names a customer; "Buyer" labels customers too, but does not say what
    # the user wrote, and on an ad order the buyer is the agency's.
    document = stacked(("WKOW Television Inc", 0.02), "Contract # 4364414",
                       f"{label}: Matt Rosendale For Congress", "Gross Amount $1,525.00")
    [value] = extract_all(document, _advertiser_configuration())["t-advertiser"].values
    assert value.text == "Matt Rosendale For Congress"
    assert value.evidence["party_by_role"] == by_role
    if by_role:
        assert value.confidence < 0.9


@pytest.mark.parametrize(("line", "runs_on"), [
    ("Account Types Local/Political", 1.0),  # the rest of a longer label
    ("Account: Friends of Jane Doe", 0.0),  # a colon ends the label
    ("Account 4471093", 0.0),  # a number so close is the value all the same
])
def test_words_going_on_a_colonless_labels_phrase_stay_below_auto_accept(
        line: str, runs_on: float) -> None:
    # Seen under a user's own name for the advertiser: "Account" over ad orders that
    # print "Account Types Local/Political Candidate Agency" gave "Types" at 0.98.
    configuration = _advertiser_configuration()
    configuration["extraction_targets"][0].update(
        name="Account", description="The account the order is for.", example="")
    document = stacked(("WKOW Television Inc", 0.02), "Contract # 4364414", line)
    [value] = extract_all(document, configuration)["t-advertiser"].values
    assert value.evidence.get("run_on", 0.0) == runs_on
    if runs_on:
        assert value.text.startswith("Types")
        assert value.confidence < 0.9
