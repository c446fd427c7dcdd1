"""Fields of real invoices the engine missed, retyped word by word (from invoices-dev and
real/), and pages photographed on their side or head down.

Each case failed before its rule: a French "Date de la facture" and "Facture TTC";
"Tatal" read for "Total"; a letterhead set over two lines; a sender line split by "|";
"From" in a slogan; a street glued to the name; a title line of number and date; a
currency after the total's label; two labels over two values split by "/";
"Bon-Nr.:1433" read as one word; a receipt lying on its side or head down.
"""

import io
from typing import Any

import pytest

from servicetools.service.engine import Document, Page, Word, load_document
from servicetools.service.engine.lines import document_text

from ..support.engine_documents import extract_all, field_values, line_document, read_document
from ..support.helpers import render_png


def test_a_french_invoice_date_with_its_article(invoices_config: dict[str, Any]) -> None:
    document = line_document("Global Goods Inc. · 789 Commerce Street · M1 1AA Manchester",
                             "Numéro de facture: INV-2023-EASY-001",
                             "Date de la facture: 1 octobre 2023",
                             "Période de facturation: 01/01/24 - 31/01/24",
                             "Montant total brut 160,65 €")
    assert field_values(extract_all(document, invoices_config))["t-invoice-date"] \
        == "1 octobre 2023"


def test_a_french_bill_totals_after_facture_ttc(invoices_config: dict[str, Any]) -> None:
    document = line_document("EDF", "Facture du 11/12/2022", "Electricite 54,87",
                             "TVA 7,99", "Facture TTC 62,86",
                             "Total Abonnement (dont acheminement 13,28) 17,04")
    assert field_values(extract_all(document, invoices_config))["t-total"] == "62,86"


@pytest.mark.parametrize(("printed", "quantity"), [("£4 355.86", "2 250.00"),
                                                 ("4 355,86 €", "2 250,00")])
def test_thousands_apart_by_a_space_with_a_currency_are_one_amount(
        invoices_config: dict[str, Any], printed: str, quantity: str) -> None:
    # From a real invoice's letter ("Total: £4 355.86"); a quantity before a price
    # without a currency stays two numbers.
    document = line_document("NEXGEN", "Invoice NG-INV-2025-00123", f"Pens {quantity}",
                             f"Total: {printed}")
    assert field_values(extract_all(document, invoices_config))["t-total"] == printed


def test_a_total_read_as_tatal_still_labels(receipts_config: dict[str, Any]) -> None:
    lines = ("Contoso", "123 Main Street", "Sub-Total $1098.99", "Tax $104.40",
             "Tatal $1203.39")
    values = field_values(extract_all(read_document(*lines), receipts_config))
    assert values["t-receipt-total"] == "$1203.39"


def test_a_letterhead_over_two_lines_is_one_name(invoices_config: dict[str, Any]) -> None:
    document = line_document("MVM Musterhafter", "Versicherungsverein Musterstadt a.G.",
                             "Herrn", "Max Mustermann", "Rechnung Nr. 00.123.456.7")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] \
        == "MVM Musterhafter Versicherungsverein Musterstadt a.G."
    # Read by OCR the line above is as often a brand: the legal name stands alone.
    read = read_document("MVM Musterhafter", "Versicherungsverein Musterstadt a.G.",
                         "Rechnung Nr. 00.123.456.7")
    assert field_values(extract_all(read, invoices_config))["t-vendor"] \
        == "Versicherungsverein Musterstadt a.G."


def test_a_sender_line_split_by_bars_names_the_vendor_above_the_customer(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("weclapp.com | Somestreet 42 | 08155 Some city",
                             "Beispiel AG", "Feldstraße 34", "54321 Hithausen",
                             "Rechnung RE1001", "Endsumme 963,12 €")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-vendor"] == "weclapp.com"
    assert values["t-customer"] == "Beispiel AG"
    assert values["t-total"] == "963,12 €"


def test_from_in_a_slogan_gives_no_vendor(invoices_config: dict[str, Any]) -> None:
    document = line_document("Invoice number: 12345", "26 rue Emile Decorps",
                             "From all around the world", "Total: 10.00")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] == ""


def test_a_street_glued_to_the_name_is_no_part_of_it(invoices_config: dict[str, Any]) -> None:
    document = line_document("OrangeDemoInc. 23MainStreet", "CentralCity",
                             "InvoiceNumber INV-0046", "TOTALUSD 273.13")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] == "OrangeDemoInc."


def test_a_title_line_with_number_and_date_dates_the_invoice(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document(
        "MVM Musterhafter a.G.", "Max Mustermann",
        "Beitragsrechnung zur Kraftfahrtversicherung Nr. 00.123.456.7 11. März 2014",
        "Fälligkeitstag: 01.04.2014")
    assert field_values(extract_all(document, invoices_config))["t-invoice-date"] \
        == "11. März 2014"


def test_a_currency_after_the_totals_label_is_no_part_of_it(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("Die Firma GmbH", "Belegnummer 90005178",
                             "TotalBeforeTax 32.838,00", "Total Tax 4.925,70",
                             "TotalAmount(DEM) 37.763,70")
    assert field_values(extract_all(document, invoices_config))["t-total"] == "37.763,70"


def test_two_labels_over_two_values_split_by_a_slash(invoices_config: dict[str, Any]) -> None:
    document = line_document("Rechnung (Original)", "Dachdecker-Einkauf Süd eG",
                             "Rechnungsnummer / Datum", "94165608 / 30.08.2018",
                             "Endbetrag 12,85 EUR")
    values = field_values(extract_all(document, invoices_config))
    assert values["t-invoice-number"] == "94165608"
    assert values["t-invoice-date"] == "30.08.2018"


def _receipt_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=(300, 420))
    page.setFont("Helvetica-Bold", 22)
    page.drawString(40, 370, "REWE Markt")
    page.setFont("Helvetica", 14)
    for number, text in enumerate(["Bilker Allee 57", "40219 Dusseldorf", "SUMME 0,99 EUR",
                                   "04.12.2014 11:26 Bon-Nr.:1433"]):
        page.drawString(40, 320 - 40 * number, text)
    page.showPage()
    page.save()
    return buffer.getvalue()


@pytest.mark.parametrize("turn", [90, 180, 270])
def test_a_receipt_on_its_side_or_head_down_is_read_upright(
    turn: int, receipts_config: dict[str, Any],
) -> None:
    from PIL import Image

    upright = Image.open(io.BytesIO(render_png(_receipt_pdf(), scale=2.0)))
    turned = io.BytesIO()
    upright.rotate(turn, expand=True).save(turned, format="PNG")
    document = load_document(turned.getvalue(), "image/png")
    lines = document_text(document).split("\n")
    assert lines[0].replace(" ", "") == "REWEMarkt"
    values = field_values(extract_all(document, receipts_config))
    assert values["t-receipt-total"].startswith("0,99")
    assert values["t-receipt-date"].startswith("04.12.2014")
    # "Bon-Nr.:1433" read as one piece is split after the label's colon.
    assert values["t-receipt-number"] == "1433"


def test_a_total_printed_large_under_a_small_label(invoices_config: dict[str, Any]) -> None:
    # As on WeasyPrint's sample invoice: "TOTAL DUE" in small capitals, the amount
    # twice as high under it, further below than three label heights.
    words = [Word("WeasyPrint", 0.14, 0.10, 0.30, 0.12),
             Word("TOTAL", 0.78, 0.746, 0.82, 0.758), Word("DUE", 0.83, 0.746, 0.86, 0.758),
             Word("€10,545.00", 0.69, 0.803, 0.86, 0.827)]
    document = Document("application/pdf", [Page(1, 595, 842, b"", words, "text")])
    assert field_values(extract_all(document, invoices_config))["t-total"] == "€10,545.00"


def test_a_number_over_the_buyers_name_is_passed_over(invoices_config: dict[str, Any]) -> None:
    # mustangproject's ZUGFeRD sample: the buyer's GLN stands between label and name.
    document = line_document("Musterlieferant GmbH", "Rechnung Nr. R87654321",
                             "Rechnungsempfänger", "GLN 4304171000002", "MUSTER-KUNDE GMBH",
                             "KUNDENWEG 88", "40235 DUESSELDORF")
    assert field_values(extract_all(document, invoices_config))["t-customer"] \
        == "MUSTER-KUNDE GMBH"


def test_a_customer_number_is_no_customer(invoices_config: dict[str, Any]) -> None:
    # A French sample: "N° de client" labels the buyer's reference, not the buyer.
    document = line_document("LE FOURNISSEUR", "FACTURE N° : F20180027",
                             "N° DE CLIENT : REFCLI0215", "Date : 31/12/2018")
    assert field_values(extract_all(document, invoices_config))["t-customer"] != "REFCLI0215"


def test_name_after_a_label_is_part_of_it(invoices_config: dict[str, Any]) -> None:
    # Azure's sample invoice: "CUSTOMER NAME:" before the customer, "BILL TO:" over a
    # department of it further down.
    document = line_document("CONTOSO LTD. INVOICE", "INVOICE: INV-100",
                             "CUSTOMER NAME: MICROSOFT CORPORATION", "CUSTOMER ID: CID-12345",
                             "BILL TO:", "Microsoft Finance", "123 Bill St,")
    assert field_values(extract_all(document, invoices_config))["t-customer"] \
        == "MICROSOFT CORPORATION"
