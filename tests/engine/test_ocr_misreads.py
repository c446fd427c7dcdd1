"""Fields of real receipts and invoices: OCR misreads, the company behind a shop, letters.

Labels read with look-alike characters ("lotal" for "Total") still label; Malaysian
legal forms misread ("SDN EHD", "5dn Bhd", "C0. (M) BHO") are spelled right, in OCR'd
words only; a name introduced by "Owned By:" is the owner, not the issuer; a
registration number with a space after the name is dropped; a till number alone on the
first line does not push the name down; a labelled registration line under the name
does not end the address before it starts. On invoices, a totals line that names columns
is no table header, a title line of the title and a code gives the number, the addressee
under a letter's sender line is the customer, and "SHIP TO" is nobody's name. Documents
are built word by word here (the cases come from sroie-dev and invoices-dev, retyped).
"""

from typing import Any

import pytest

from servicetools.service.engine.lines import page_lines
from servicetools.service.engine.lookalikes import digits_read_as_letters, lookalike_ratio
from servicetools.service.engine.names import misread_legal_forms
from servicetools.service.engine.titles import title_number

from ..support.engine_documents import (
    extract_all,
    field_values,
    line_document,
    placed,
    read_document,
)


def test_lookalike_ratio_counts_confused_characters_as_near() -> None:
    assert lookalike_ratio("total", "total") == 1.0
    assert lookalike_ratio("total", "lotal") == pytest.approx(0.95)
    assert lookalike_ratio("total", "1olal") == pytest.approx(0.9)
    # An unrelated letter costs as much as in fuzz.ratio: "local" is no "total".
    assert lookalike_ratio("total", "local") == pytest.approx(0.75)
    assert lookalike_ratio("sdnbhd", "sdn8hd") == lookalike_ratio("sdn8hd", "sdnbhd")
    assert lookalike_ratio("", "") == 1.0
    assert lookalike_ratio("abc", "") == 0.0


@pytest.mark.parametrize(("read", "meant"), [
    ("o2/26/20-", "02/26/20-"), ("l0/12/2020", "10/12/2020"), ("|2/05/20", "12/05/20"),
    # Words, not numbers: other letters, too few digits, too many letters.
    ("Oct", "Oct"), ("2nd", "2nd"), ("Io", "Io"), ("O1", "O1"), ("1O.O5.2O2O", "1O.O5.2O2O")])
def test_digits_read_as_letters_are_put_back_in_numbers_only(read: str, meant: str) -> None:
    assert digits_read_as_letters(read) == meant


@pytest.mark.parametrize("label", ["lotal Sales (Incl. GST)", "1olal"])
def test_a_total_label_read_with_look_alike_characters_labels_the_total(
    label: str, receipts_config: dict[str, Any],
) -> None:
    lines = ("KEDAI MAJU SDN BHD", "Item A 6.00", "Item B 5.50", f"{label} 11.50", "Cash 20.00")
    read = extract_all(read_document(*lines), receipts_config)["t-receipt-total"].values[0]
    assert read.text == "11.50"
    assert read.evidence.get("labelled") == 1.0
    # In a text layer the characters are as printed: "1olal" is no label there.
    typed = extract_all(line_document(*lines), receipts_config)["t-receipt-total"].values[0]
    assert typed.evidence.get("labelled") != 1.0 or typed.text != "11.50"


@pytest.mark.parametrize(
    ("read", "meant"),
    [("DIGI TELECOMMUNICATIONS SDN EHD", "DIGI TELECOMMUNICATIONS SDN BHD"),
     ("SUPER SEVEN CASH & CARRY SDN 3HD", "SUPER SEVEN CASH & CARRY SDN BHD"),
     ("ONE ONE THREE SEAFOOD RESTAURANT SDN BH", "ONE ONE THREE SEAFOOD RESTAURANT SDN BHD"),
     ("Broadview Marketing 5dn Bhd", "Broadview Marketing Sdn Bhd"),
     ("AEON C0. (M) BHO", "AEON CO. (M) BHD"),
     ("99 SPEED MART 5/B", "99 SPEED MART S/B"),
     # Right already, or not a legal form: left alone.
     ("LIAN HING STATIONERY SDN BHD", "LIAN HING STATIONERY SDN BHD"),
     ("Sanjung Realiti Sdn. Bhd.", "Sanjung Realiti Sdn. Bhd."),
     ("SAM 8HD", "SAM 8HD"), ("GMBH EHD", "GMBH EHD")],
)
def test_misread_legal_forms_are_spelled_right(read: str, meant: str) -> None:
    assert misread_legal_forms(read) == meant


def test_the_issuer_read_by_ocr_gets_its_legal_form_spelled_right(
    receipts_config: dict[str, Any],
) -> None:
    lines = ("DIGI TELECOMMUNICATIONS SDN EHD", "LOT LG315, JALAN UTAMA", "47800 PETALING JAYA",
             "Total 15.00")
    read = field_values(extract_all(read_document(*lines), receipts_config))
    assert read["t-merchant"] == "DIGI TELECOMMUNICATIONS SDN BHD"
    # A text layer prints what the issuer typed: nothing to set right.
    typed = field_values(extract_all(line_document(*lines), receipts_config))
    assert typed["t-merchant"] == "DIGI TELECOMMUNICATIONS SDN EHD"


@pytest.mark.parametrize("owner", ["Owned By:", "formerly known as"])
def test_the_company_behind_the_shop_is_not_the_issuer(
    owner: str, receipts_config: dict[str, Any],
) -> None:
    shop = ("SANYU STATIONERY SHOP", "NO. 31G&33G, JALAN SETIA INDAH X", "40170 SETIA ALAM")
    later = ("Tel: +603-33624137", owner, "SANYU SUPPLY SDN BHD", "Total 12.00")
    values = field_values(extract_all(line_document(*shop, *later), receipts_config))
    assert values["t-merchant"] == "SANYU STATIONERY SHOP"
    assert values["t-address"] == "NO. 31G&33G, JALAN SETIA INDAH X 40170 SETIA ALAM"
    # Without the words that introduce it, the legal form makes that company the issuer.
    alone = field_values(extract_all(line_document(*shop, later[0], *later[2:]),
                                     receipts_config))
    assert alone["t-merchant"] == "SANYU SUPPLY SDN BHD"


def test_a_line_introducing_the_owner_is_no_part_of_the_address(
    receipts_config: dict[str, Any],
) -> None:
    document = line_document("MCDONALD'S", "formerly known as Golden Arches Restaurants Sdn Bhd",
                             "Level 6, Bangunan TH", "47400 Petaling Jaya", "Total 9.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-address"] == "Level 6, Bangunan TH 47400 Petaling Jaya"


def test_a_registration_number_with_a_space_is_dropped_and_does_not_count_against_the_name(
    receipts_config: dict[str, Any],
) -> None:
    # The customer's name further down has a legal form too; the registration number
    # read as a postcode used to cost the shop's name its place.
    document = line_document("GARDENIA BAKERIES (KL) SDN BHD (139386 X)", "LOT 3, JALAN PELABUR",
                             "40300 SHAH ALAM", "Date: 16/09/2017", "MAKASSAR FRESH MARKET SDN BHD",
                             "Total 3.21")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "GARDENIA BAKERIES (KL) SDN BHD"
    assert values["t-address"] == "LOT 3, JALAN PELABUR 40300 SHAH ALAM"


def test_a_number_alone_above_the_name_leaves_it_the_first_line(
    receipts_config: dict[str, Any],
) -> None:
    document = line_document("104113", "YHM Aeon Tebrau City", "1, Jalan Desa Tebrau",
                             "81100 Johor Bahru", "Total 81.80")
    assert field_values(extract_all(document, receipts_config))["t-merchant"] == (
        "YHM Aeon Tebrau City")


def test_a_labelled_registration_line_under_the_name_does_not_end_the_address(
    receipts_config: dict[str, Any],
) -> None:
    document = line_document("POPULAR BOOK CO. (M) SDN BHD", "(Company No. 113825-W)",
                             "(GST Reg No. 001492992000)", "No 8, Jalan 7/118B",
                             "56000 Kuala Lumpur", "Tel: 03-41424540", "Total 31.45")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-address"] == "No 8, Jalan 7/118B 56000 Kuala Lumpur"


# --- invoices: a totals line that names columns, a title with its number -------------------


def test_a_totals_line_naming_columns_is_no_table_header(invoices_config: dict[str, Any]) -> None:
    # "Total ... Price" match the line items' column names, but the line holds amounts:
    # it closes the table and its total is the invoice's.
    document = line_document(
        "NEXGEN", "Invoice Number: 3847193",
        "Item Code Item Desc. Unit Price Quantity Total",
        "MA197 STRETCHWRAP ROLL 16.62 5 83.10",
        "ST4086 BALLPOINT PEN 2.49 10 24.90",
        "Total Pcs.: 15 Total Price: 108.00")
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-total"] == "108.00"
    tables = {cell.table_index for cell in targets["t-line-items"].cells}
    assert tables == {0}


@pytest.mark.parametrize("title", ["Invoice 103767", "FACTURE F-2024-7"])
def test_a_title_line_of_the_title_and_a_code_gives_the_number(
    title: str, invoices_config: dict[str, Any],
) -> None:
    document = line_document(title, "February 17, 2026", "Adatum Corporation", "Total 5.00")
    assert field_values(extract_all(document, invoices_config))["t-invoice-number"] == (
        title.split()[1])
    # Prose that only mentions an invoice keeps its numbers to itself.
    prose = line_document("Thank you for the invoice 2024 payment", "Total 5.00")
    assert field_values(extract_all(prose, invoices_config))["t-invoice-number"] == ""


def test_a_title_word_in_parentheses_still_numbers_the_document(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document(
        "Gutschrift (Selbst ausgestellte Rechnung) (389) Nr. 47110818 vom 31.10.2018",
        "Global Supplies Ltd.", "Gesamtbetrag: 2.000,00 €")
    values = field_values(extract_all(document, invoices_config))
    assert (values["t-invoice-number"], values["t-invoice-date"]) == ("47110818", "31.10.2018")


@pytest.mark.parametrize("title", ["Avoir AV-2017-0005", "Gutschrift Nr. AV-2017-0005",
                                   "Credit Note # AV-2017-0005", "Creditnota AV-2017-0005"])
def test_a_credit_note_numbers_itself_in_its_title(invoices_config: dict[str, Any],
                                                   title: str) -> None:
    document = line_document(title, "Global Supplies Ltd.", "Montant TTC : -233,47 €")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-number"] == "AV-2017-0005"
    # "avoir" is a credit note only as a word of its own.
    verb = page_lines(line_document("Pouvoir AV-2017-0005").pages[0])
    assert title_number(verb) is None
    assert title_number(page_lines(line_document(title).pages[0])) is not None


def test_a_title_with_its_number_dates_the_invoice_on_the_line_under_it(
    invoices_config: dict[str, Any],
) -> None:
    # The stylesheet's header dates itself first; the title wraps its "vom" date.
    document = line_document("ZUGFeRD-Version : 2.1 vom 24.03.2020",
                             "Gutschrift (Selbst ausgestellte Rechnung) Nr. 47110818",
                             "vom 31.10.2018", "Global Supplies Ltd.",
                             "Gesamtbetrag: 2.000,00 €")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-date"] == "31.10.2018"
    # A line under a title without its number dates nothing.
    plain = line_document("Version 2.1 vom 24.03.2020", "Rechnung", "vom 31.10.2018",
                          "Gesamtbetrag: 2.000,00 €")
    assert field_values(extract_all(plain, invoices_config))["t-invoice-date"] != "31.10.2018"


def test_a_german_title_dates_the_invoice_with_von(invoices_config: dict[str, Any]) -> None:
    document = line_document("Bei Spiel GmbH", "Ecke 12", "Kundennummer: 2",
                             "Rechnung # RE-20170509/505 von 09.05.2017",
                             "Leistungsdatum 07.05.2017", "Gesamtbetrag: 571,04 €")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-date"] == "09.05.2017"


# --- the customer: under a letter's sender line, never a block's heading ----------------------


@pytest.mark.parametrize(
    "sender",
    ["Kraxi GmbH · Flugzeugallee 17 · 12345 Papierfeld",
     "Alphabet, Lilienthalallee 26, 80786 München"],
    ids=["dots", "commas"],
)
def test_the_addressee_under_the_sender_line_is_the_customer(
    sender: str, invoices_config: dict[str, Any],
) -> None:
    document = line_document("Kraxi GmbH", "Flugzeugallee 17", (sender, 0.05), "www.kraxi.com",
                             "Papierflieger-Vertriebs-GmbH", "Rabattstr. 25", "34567 Osterhausen",
                             "Rechnung Nr. 2015738820", "Gesamtbetrag: 80,00 €")
    customer = extract_all(document, invoices_config)["t-customer"].values[0]
    assert customer.text == "Papierflieger-Vertriebs-GmbH"
    assert customer.evidence["recipient"] == 1.0
    # Without the sender line nothing says which block is the customer's.
    plain = line_document("Kraxi GmbH", "Flugzeugallee 17", "Papierflieger-Vertriebs-GmbH",
                          "Rabattstr. 25", "Gesamtbetrag: 80,00 €")
    assert field_values(extract_all(plain, invoices_config))["t-customer"] == ""


def test_the_next_blocks_heading_is_no_customer(invoices_config: dict[str, Any]) -> None:
    document = placed(("BILL TO", 0.05, 0.10), ("SHIP TO", 0.45, 0.10),
                      ("John Smith", 0.05, 0.13), ("Jane Smith", 0.45, 0.13),
                      ("Total: 10.00", 0.05, 0.30))
    assert field_values(extract_all(document, invoices_config))["t-customer"] == "John Smith"
