"""Fields as real invoices and receipts print them: other languages, prose aliases, an
unlabelled issuer and its address, dates with month names or a time glued on, qualified
totals, calibrated confidence and labels glued to their values in a text layer.

Every document is built here, word by word (or drawn with reportlab where the text layer
itself is under test), so each expected value is exact. Confidences are calibrated:
only texts are asserted, and raw scores only where their order means something.
"""

import copy
import io
from typing import Any

import pytest

from servicetools.service.engine import Document, Page, Word, load_document
from servicetools.service.engine.calibration import KINDS, calibrated, features, load_map
from servicetools.service.engine.fields import field_kind, label_aliases
from servicetools.service.engine.pages import _unglued
from servicetools.service.engine.shapes import DATE, unglue_time
from servicetools.service.engine.vocabulary import described_aliases

from ..support.drawn_pages import letter_canvas
from ..support.engine_documents import columns, extract_all, field_values, line_document, stacked


def _target(configuration: dict[str, Any], target_id: str) -> dict[str, Any]:
    return next(t for t in configuration["extraction_targets"] if t["id"] == target_id)


# --- labels in other languages ----------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "number", "date", "total"),
    [
        (("Rechnungsnummer: R-1001", "Rechnungsdatum: 05.11.2017", "Gesamtbetrag 104,00 €"),
         "R-1001", "05.11.2017", "104,00 €"),
        (("N° de facture: F-2023-7", "Date de facture: 05/11/2017", "Total TTC 1.234,56 €"),
         "F-2023-7", "05/11/2017", "1.234,56 €"),
        (("Factuurnr.: 98559514", "Factuurdatum: 12-03-2019", "Totaal 45,60"),
         "98559514", "12-03-2019", "45,60"),
        (("Número de factura: A-77", "Fecha de factura: 01/02/2020", "Importe total 99,90"),
         "A-77", "01/02/2020", "99,90"),
        (("Numero fattura: 2021/15", "Data fattura: 03/04/2021", "Totale 12,50"),
         "2021/15", "03/04/2021", "12,50"),
    ],
    ids=["de", "fr", "nl", "es", "it"],
)
def test_labels_in_other_languages_find_the_invoice_fields(
    lines: tuple[str, ...], number: str, date: str, total: str,
    invoices_config: dict[str, Any],
) -> None:
    # None of these values has the example's shape ("INV-2024-0012") and the invoice has
    # two date fields and three amounts: only the translated labels can find them.
    values = field_values(extract_all(line_document(*lines), invoices_config))
    assert (values["t-invoice-number"], values["t-invoice-date"], values["t-total"]) == (
        number, date, total,
    )


def test_german_subtotal_and_tax_are_not_the_total(invoices_config: dict[str, Any]) -> None:
    document = line_document("Zwischensumme 90,00", "MwSt 14,00", "Gesamtbetrag 104,00 €")
    values = field_values(extract_all(document, invoices_config))
    assert (values["t-subtotal"], values["t-tax"], values["t-total"]) == (
        "90,00", "14,00", "104,00 €",
    )


# --- aliases named in a description -----------------------------------------------------


@pytest.mark.parametrize(
    ("description", "aliases"),
    [
        ('printed after "Total" or "Amount Due"', ["Total", "Amount Due"]),
        ("printed after 'Grand Total'", ["Grand Total"]),
        ("printed after “Balance Due”", ["Balance Due"]),
        ("gedruckt nach „Gesamtbetrag“", ["Gesamtbetrag"]),
        ("imprimé après « Total TTC »", ["Total TTC"]),
        # An apostrophe is no quote.
        ("The customer's name, printed after 'Bill To'", ["Bill To"]),
    ],
    ids=["double", "single", "curly", "german", "guillemets", "apostrophe"],
)
def test_described_aliases_in_every_kind_of_quotes(description: str, aliases: list[str]) -> None:
    assert described_aliases(description) == aliases


def test_described_aliases_as_an_unquoted_list() -> None:
    assert described_aliases("The invoice's number, labelled Invoice No, Invoice # or Bill No.") \
        == ["Invoice No", "Invoice #", "Bill No"]
    # Prose is no list of labels.
    assert described_aliases("The shop's name, printed at the top of the receipt.") == []


def test_a_configuration_with_an_unquoted_alias_list_finds_the_value_by_an_alias(
    invoices_config: dict[str, Any],
) -> None:
    configuration = copy.deepcopy(invoices_config)
    target = _target(configuration, "t-invoice-number")
    target["description"] = "The invoice's number, labelled Docket No or Voucher Ref."
    assert {"Docket No", "Voucher Ref"} <= set(label_aliases(target))
    # "D-552" is not of the example's shape: only the alias finds it.
    document = line_document("Voucher Ref: D-552", "Date: 2024-03-15")
    assert field_values(extract_all(document, configuration))["t-invoice-number"] == "D-552"
    original = field_values(extract_all(document, invoices_config))
    assert original["t-invoice-number"] == ""


# --- the issuer's name and address at the top -------------------------------------------


def test_a_legal_form_at_the_top_is_the_vendor_even_in_a_plain_font(
    invoices_config: dict[str, Any], receipts_config: dict[str, Any],
) -> None:
    invoice = line_document("Acme Supplies Ltd", "Invoice No: A-31770")
    assert field_values(extract_all(invoice, invoices_config))["t-vendor"] == "Acme Supplies Ltd"
    receipt = line_document("UNIHAKKA INTERNATIONAL SDN BHD", "(867388-U)",
                            "12, Jalan Tampoi 7/4, Kawasan Perindustrian",
                            "81200 Johor Bahru, Johor", "TEL: 07-5566 123", "Total: 8.70")
    values = field_values(extract_all(receipt, receipts_config))
    assert values["t-merchant"] == "UNIHAKKA INTERNATIONAL SDN BHD"
    # The legal form outranks a line above it in the same font.
    greeting = line_document("WELCOME", "KEDAI ABC SDN BHD", "Total: 8.70")
    assert field_values(extract_all(greeting, receipts_config))["t-merchant"] \
        == "KEDAI ABC SDN BHD"


def test_plain_body_text_at_the_top_is_no_name(invoices_config: dict[str, Any]) -> None:
    document = line_document("Please find our invoice below", "Invoice No: A-31770")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] == ""


def test_a_capitalised_first_line_is_the_name_even_in_the_body_font(
    invoices_config: dict[str, Any],
) -> None:
    # A receipt's shop name is often its first line, set in the same size as the rest.
    document = line_document("Brightpath Consulting", "Invoice No: A-31770")
    assert field_values(extract_all(document, invoices_config))["t-vendor"] == (
        "Brightpath Consulting")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("HOME MASTER HARDWARE &", "ELECTRICAL"),
        ("KEDAI BUKU LIM", "SDN BHD"),
        ("Müller & Söhne", "GmbH"),
        ("POPULAR BOOK", "CO. (M) SDN BHD"),
    ],
    ids=["ampersand", "legal-form-alone", "gmbh", "co-m-sdn-bhd"],
)
def test_a_name_split_over_two_lines_is_joined(
    first: str, second: str, receipts_config: dict[str, Any]
) -> None:
    document = line_document(first, second, "(81109-A)", "NO. 2, JALAN SERI",
                             "81300 SKUDAI JOHOR", "TEL: 07-555 1234", "Total 12.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == f"{first} {second}"


@pytest.mark.parametrize("title", ["TAX INVOICE", "OFFICIAL RECEIPT", "INVOICE", "RECHNUNG"])
def test_a_document_title_is_never_the_name(
    title: str, invoices_config: dict[str, Any], receipts_config: dict[str, Any],
) -> None:
    # The title is set far larger than the name: only being a title rules it out.
    receipt = stacked((title, 0.045), "SYARIKAT ABC TRADING", "12 Jalan Besar",
                      "43000 Kajang", "Total 12.00")
    values = field_values(extract_all(receipt, receipts_config))
    assert (values["t-merchant"], values["t-address"]) == (
        "SYARIKAT ABC TRADING", "12 Jalan Besar 43000 Kajang",
    )
    invoice = stacked((title, 0.045), "Acme Supplies Ltd", "Invoice No: A-1")
    assert field_values(extract_all(invoice, invoices_config))["t-vendor"] == "Acme Supplies Ltd"
    alone = stacked((title, 0.045), "Invoice No: A-1")
    assert field_values(extract_all(alone, invoices_config))["t-vendor"] == ""


def test_the_address_under_the_name_skips_the_registration_and_stops_at_the_telephone(
    receipts_config: dict[str, Any],
) -> None:
    document = line_document("HOME MASTER HARDWARE &", "ELECTRICAL", "(81109-A)",
                             "NO. 2, JALAN SERI", "81300 SKUDAI JOHOR", "TEL: 07-555 1234",
                             "JOHOR BAHRU 81200", "Total 12.00")
    targets = extract_all(document, receipts_config)
    assert targets["t-address"].values[0].text == "NO. 2, JALAN SERI 81300 SKUDAI JOHOR"


def test_the_address_stops_at_a_gst_line(receipts_config: dict[str, Any]) -> None:
    document = line_document("SYARIKAT ABC SDN BHD", "LOT 5, JALAN BESAR", "43000 KAJANG",
                             "GST REG NO: 001492992000", "SELANGOR 43000", "Total 12.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "SYARIKAT ABC SDN BHD"
    assert values["t-address"] == "LOT 5, JALAN BESAR 43000 KAJANG"


# --- dates ------------------------------------------------------------------------------


def test_a_date_target_never_returns_a_word(
    invoices_config: dict[str, Any], receipts_config: dict[str, Any],
) -> None:
    alone = field_values(extract_all(line_document("Invoice No: A-1", "Date: Tuesday"),
                                     invoices_config))
    assert alone["t-invoice-date"] == ""
    # The label's neighbour is no date; the receipt's one real date is found elsewhere.
    document = line_document("Date: Cashier", "Thank you", "12/03/2018 10:22")
    assert field_values(extract_all(document, receipts_config))["t-receipt-date"] == "12/03/2018"


@pytest.mark.parametrize(
    ("line", "date"),
    [("Date: 12 Mar 201818:19", "12 Mar 2018"), ("Date: 22/12/201714:03", "22/12/2017"),
     ("12 Mar 201818:19 Cashier: Ali", "12 Mar 2018")],
    ids=["month-name", "numeric", "unlabelled"],
)
def test_a_time_glued_to_the_year_is_cut_off(
    line: str, date: str, receipts_config: dict[str, Any]
) -> None:
    assert unglue_time("22/12/201714:03") == "22/12/2017 14:03"
    values = field_values(extract_all(line_document(line), receipts_config))
    assert values["t-receipt-date"] == date


@pytest.mark.parametrize(
    ("line", "date"),
    [("Rechnungsdatum: 11. März 2014", "11. März 2014"),
     ("Date de facture: 1 octobre 2023", "1 octobre 2023"),
     ("Factuurdatum: 12 mei 2021", "12 mei 2021"),
     ("Fecha de factura: 5 de mayo de 2022", "5 de mayo de 2022"),
     ("Data fattura: 3 dicembre 2020", "3 dicembre 2020")],
    ids=["de", "fr", "nl", "es", "it"],
)
def test_dates_with_month_names_in_other_languages(
    line: str, date: str, invoices_config: dict[str, Any]
) -> None:
    assert DATE.fullmatch(date)
    values = field_values(extract_all(line_document("Invoice No: A-1", line), invoices_config))
    assert values["t-invoice-date"] == date


def test_two_digit_years_are_dates() -> None:
    assert DATE.fullmatch("05.11.17")
    assert DATE.fullmatch("12/03/18")


def test_an_unlabelled_receipt_date_is_found_and_the_first_of_several_is_taken(
    receipts_config: dict[str, Any],
) -> None:
    one = extract_all(line_document("KEDAI ABC SDN BHD", "Cashier: Ali", "12/03/2018 10:22",
                                    "Total 5.00"), receipts_config)
    assert one["t-receipt-date"].values[0].text == "12/03/2018"
    several = extract_all(line_document("KEDAI ABC SDN BHD", "Cashier: Ali",
                                        "12/03/2018 10:22", "Total 5.00",
                                        "Printed 14/03/2018"), receipts_config)
    assert several["t-receipt-date"].values[0].text == "12/03/2018"
    # A rival date makes the first less certain, before calibration.
    first, only = several["t-receipt-date"].values[0].raw, one["t-receipt-date"].values[0].raw
    assert first is not None and only is not None and first < only


# --- qualified totals -------------------------------------------------------------------


_GST_RECEIPT = (("Total Excl. of GST", "15.00"), ("Total Incl. of GST", "15.90"),
                ("GST Summary", "Amount Tax"), ("Total:", "15.00 0.90"))


def test_the_total_including_gst_beats_excluding_and_the_summary_row(
    receipts_config: dict[str, Any],
) -> None:
    document = line_document(*(f"{words} {amounts}" for words, amounts in _GST_RECEIPT))
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "15.90"


def test_the_total_including_gst_wins_with_the_amounts_in_a_column(
    receipts_config: dict[str, Any],
) -> None:
    document = columns(*_GST_RECEIPT)
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "15.90"


@pytest.mark.parametrize(
    "rows",
    [(("Total Excluding GST", "15.00"), ("Total Including GST", "15.90")),
     (("Total Including GST", "15.90"), ("Total Excluding GST", "15.00")),
     (("Total Savings", "2.00"), ("Total", "15.90")),
     (("Total Excl. of GST", "15.00"), ("Total", "15.90"))],
    ids=["excluding-first", "including-first", "savings", "excl-of-gst"],
)
def test_a_lesser_total_loses_in_either_order(
    rows: tuple[tuple[str, str], ...], invoices_config: dict[str, Any],
    receipts_config: dict[str, Any],
) -> None:
    # Every line is labelled just "Total": only the words before the amount tell them apart.
    document = columns(*rows)
    assert field_values(extract_all(document, invoices_config))["t-total"] == "15.90"
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "15.90"


def test_a_lesser_total_loses_when_its_words_run_into_the_amount(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("Total Excluding GST 15.00", "Total Including GST 15.90")
    assert field_values(extract_all(document, invoices_config))["t-total"] == "15.90"


@pytest.mark.parametrize("order", ["summary-first", "summary-last"])
def test_a_summary_row_with_several_amounts_is_not_the_total(
    order: str, invoices_config: dict[str, Any]
) -> None:
    rows = [("Total:", "15.00 0.90"), ("Total", "15.90")]
    document = columns(*(rows if order == "summary-first" else rows[::-1]))
    assert field_values(extract_all(document, invoices_config))["t-total"] == "15.90"


# --- calibration ------------------------------------------------------------------------

_TABLE: dict[str, Any] = {
    "kinds": {
        "date": {"x": [0.2, 0.6, 0.9], "y": [0.1, 0.5, 0.7]},
        "date:ocr": {"x": [0.0, 1.0], "y": [0.3, 0.4]},
        "all": {"x": [0.0, 1.0], "y": [0.6, 0.6]},
    }
}


def test_calibration_interpolates_monotonically_between_knots() -> None:
    assert calibrated("date", 0.4, _TABLE) == pytest.approx(0.3)
    assert calibrated("date", 0.75, _TABLE) == pytest.approx(0.6)
    assert calibrated("date", 0.6, _TABLE) == pytest.approx(0.5)
    raws = [i / 20 for i in range(21)]
    mapped = [calibrated("date", raw, _TABLE) for raw in raws]
    assert mapped == sorted(mapped)


def test_calibration_falls_back_from_the_reading_to_the_kind_to_all() -> None:
    assert calibrated("date:ocr", 0.5, _TABLE) == pytest.approx(0.35)  # its own map
    assert calibrated("date:text", 0.4, _TABLE) == pytest.approx(0.3)  # the kind's map
    assert calibrated("name:ocr", 0.1, _TABLE) == pytest.approx(0.6)  # the pooled map
    assert calibrated("name", 0.1, _TABLE) == pytest.approx(0.6)
    assert calibrated("name", 0.37, {"kinds": {}}) == 0.37  # no map at all: the raw score


def test_calibration_is_clamped_away_from_zero_and_one() -> None:
    table = {"kinds": {"amount": {"x": [0.1, 0.9], "y": [0.0, 1.0]}}}
    assert calibrated("amount", 0.0, table) == pytest.approx(0.02)
    assert calibrated("amount", 0.1, table) == pytest.approx(0.02)
    assert calibrated("amount", 0.95, table) == pytest.approx(0.98)
    assert calibrated("amount", 1.0, table) == pytest.approx(0.98)
    assert calibrated("amount", 0.5, table) == pytest.approx(0.5)


def test_evidence_of_ocr_words_is_an_input_of_its_own() -> None:
    found = {"labelled": 1.0, "below": 1.0, "rivals": 0.0}
    assert set(features(0.5, found)) == {"logit_raw", "labelled", "below", "rivals"}
    assert features(0.5, {**found, "ocr": 1.0}) == {
        "logit_raw": 0.0, "labelled": 1.0, "below": 1.0, "rivals": 0.0, "ocr": 1.0,
        "labelled*ocr": 1.0, "below*ocr": 1.0}
    # The shipped model has weights for them, fitted by make train.
    assert any(name.endswith("*ocr") for name in load_map()["logistic"]["coef"])


def test_a_word_the_recogniser_doubts_makes_its_value_less_sure(
    invoices_config: dict[str, Any],
) -> None:
    def read(total_certainty: float) -> tuple[float, dict[str, float]]:
        document = line_document("Invoice Number: INV-7", "Total: 1,250.00")
        page = document.pages[0]
        words = [Word(w.text, w.x0, w.y0, w.x1, w.y1,
                      total_certainty if w.text == "1,250.00" else 0.98) for w in page.words]
        document = Document("image/png", [Page(1, page.width, page.height, b"", words, "ocr")])
        total = extract_all(document, invoices_config)["t-total"].values[0]
        assert total.text == "1,250.00"
        return total.confidence, total.evidence

    sure, sure_evidence = read(0.98)
    doubted, doubted_evidence = read(0.80)
    assert sure_evidence["ocr_doubt"] == pytest.approx(0.2)
    assert doubted_evidence["ocr_doubt"] == pytest.approx(1.0)  # ten times 0.2, at most 1
    assert doubted < sure


def test_the_shipped_map_covers_the_main_kinds() -> None:
    kinds = load_map()["kinds"]
    assert {"date", "amount", "name"} <= set(kinds)
    for knots in kinds.values():
        assert len(knots["x"]) == len(knots["y"]) >= 2
        assert knots["x"] == sorted(knots["x"])
        assert knots["y"] == sorted(knots["y"])  # isotonic: never down
        assert all(0.0 <= y <= 1.0 for y in knots["y"])
    for kind in ("date", "amount", "name"):
        assert 0.02 <= calibrated(kind, 0.1) <= calibrated(kind, 0.9) <= 0.98


def test_field_kinds_of_the_bundled_configurations(
    invoices_config: dict[str, Any], receipts_config: dict[str, Any],
) -> None:
    kinds = {
        t["id"]: field_kind(t)
        for configuration in (invoices_config, receipts_config)
        for t in configuration["extraction_targets"]
        if t["type"] == "field"
    }
    assert {k: kinds[k] for k in ("t-invoice-number", "t-invoice-date", "t-total", "t-vendor",
                                  "t-merchant", "t-address", "t-receipt-date")} == {
        "t-invoice-number": "code", "t-invoice-date": "date", "t-total": "amount",
        "t-vendor": "name", "t-merchant": "name", "t-address": "address",
        "t-receipt-date": "date",
    }
    assert set(kinds.values()) <= set(KINDS)


# --- labels glued to their values in a text layer ---------------------------------------


@pytest.mark.parametrize(
    ("text", "pieces"),
    [("number:12345", ["number:", "12345"]), ("Date:March", ["Date:", "March"]),
     ("Time:12:30", ["Time:", "12:30"]), ("12:30", ["12:30"]), ("https://x", ["https://x"]),
     ("http:example", ["http:example"]), ("Total:", ["Total:"])],
)
def test_unglued_splits_after_a_labels_colon_only(text: str, pieces: list[str]) -> None:
    parts = _unglued(text)
    assert [p for p, _, _ in parts] == pieces
    assert "".join(text[a:b] for _, a, b in parts) == text


def test_a_value_glued_to_its_label_in_the_text_layer_is_found(
    invoices_config: dict[str, Any],
) -> None:
    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    c.setFont("Helvetica", 10)
    c.drawString(50, 740, "Invoice number:12345")
    c.drawString(50, 720, "Meeting at 12:30, see https://example.com/a")
    c.save()
    document = load_document(buffer.getvalue(), "application/pdf")
    texts = [w.text for w in document.pages[0].words]
    assert texts[:3] == ["Invoice", "number:", "12345"]
    assert {"12:30,", "https://example.com/a"} <= set(texts)
    # "12345" is not of the example's shape: only the split label finds it.
    assert field_values(extract_all(document, invoices_config))["t-invoice-number"] == "12345"
