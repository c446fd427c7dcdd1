"""More fields as real documents print them: totals after a rounding adjustment or
qualified by the words around their label, amounts far right on their line, letters'
dates, codes with a label's end glued on, values under the middle of their column
header, the issuer in a sender line, OCR's O and 0, dates glued to a number before
them, and the logistic calibration over how a value was found.

Every document is built here word by word, so each expected value is exact.
Confidences are calibrated: only texts are asserted, raw scores where their order
means something, and the evidence keys that say how a value was found.
"""

import math
from typing import Any

import pytest

from servicetools.service.engine import Document, Word
from servicetools.service.engine.calibration import calibrated, features, load_map
from servicetools.service.engine.fields import _code_like, _without_label_end
from servicetools.service.engine.ocr import letters_and_digits
from servicetools.service.engine.shapes import shape_of

from ..support.engine_documents import (
    columns,
    extract_all,
    field_values,
    line_document,
    placed,
    stacked,
)


def _raw(document: Document, configuration: dict[str, Any], target_id: str) -> float:
    value = extract_all(document, configuration)[target_id].values[0]
    assert value.raw is not None, value
    return value.raw


# --- totals ------------------------------------------------------------------------------


@pytest.mark.parametrize("adjustment", ["-0.03", "-0.08"], ids=["adds-up", "misread"])
def test_the_total_after_a_rounding_adjustment_is_the_one_paid(
    adjustment: str, invoices_config: dict[str, Any], receipts_config: dict[str, Any],
) -> None:
    # Both lines say just "Total"; on a tie the first would win, but the one printed
    # after the rounding adjustment is what was paid, even when OCR misread the
    # adjustment and the arithmetic cannot confirm it.
    rows = (("Total", "15.93"), ("Rounding Adj", adjustment), ("Total", "15.90"))
    assert field_values(extract_all(columns(*rows), invoices_config))["t-total"] == "15.90"
    document = line_document(*(f"{words} {amount}" for words, amount in rows))
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "15.90"


@pytest.mark.parametrize(
    "rows",
    [(("Paid Amount:", "20.00"), ("Total:", "15.90")),
     (("Sub Total:", "15.00"), ("Total:", "15.90"))],
    ids=["paid-amount", "sub-total"],
)
def test_words_just_before_the_label_qualify_the_amount(
    rows: tuple[tuple[str, str], ...], receipts_config: dict[str, Any],
) -> None:
    # "Amount:" and "Total:" are both labels of the receipt's total; only the word in
    # front of the label says the first line holds a lesser amount.
    document = columns(*rows)
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "15.90"


def test_one_or_two_letters_between_label_and_amount_are_noise(
    invoices_config: dict[str, Any],
) -> None:
    plain = _raw(line_document("Total 31.45"), invoices_config, "t-total")
    noisy = extract_all(line_document("Total R 31.45"), invoices_config)["t-total"].values[0]
    assert noisy.text == "31.45"
    assert noisy.raw == plain
    assert noisy.evidence["qualified"] == 0.0
    # A real word there does leave doubt.
    assert _raw(line_document("Total Misc 31.45"), invoices_config, "t-total") < plain


@pytest.mark.parametrize("words", ["SALESTAX9.25%", "discounts"])
def test_lesser_words_glued_or_inflected_still_make_a_lesser_amount(
    words: str, invoices_config: dict[str, Any],
) -> None:
    lesser = extract_all(line_document(f"Total {words} 0.74"), invoices_config)["t-total"]
    assert lesser.values[0].text == "0.74"
    unknown = _raw(line_document("Total charges 0.74"), invoices_config, "t-total")
    assert (lesser.values[0].raw or 1.0) < unknown


@pytest.mark.parametrize("configuration", ["invoices_config", "receipts_config"])
def test_a_label_like_word_before_the_amount_does_not_end_the_search(
    configuration: str, request: pytest.FixtureRequest,
) -> None:
    config: dict[str, Any] = request.getfixturevalue(configuration)
    total = "t-total" if configuration == "invoices_config" else "t-receipt-total"
    document = line_document("Total Amt Payable: 159.00")
    assert field_values(extract_all(document, config))[total] == "159.00"


def test_another_fields_label_before_the_amount_does_not_end_the_search(
    invoices_config: dict[str, Any],
) -> None:
    # "Invoice Total" labels the total and "Due:" the due date: the due date's label
    # qualifies the amount (as a final one) instead of hiding it from the total.
    targets = extract_all(line_document("Invoice Total Due: 1,500.00"), invoices_config)
    values = field_values(targets)
    assert (values["t-total"], values["t-due-date"]) == ("1,500.00", "")
    assert targets["t-total"].values[0].evidence["qualified"] == 0.0


def test_a_label_after_qualifying_words_does_not_end_the_search(
    receipts_config: dict[str, Any],
) -> None:
    # "GST):" is the tax's label, after words that qualify the total: the search for
    # the total's amount goes on past it.
    document = line_document("Total Sales (Incl. of GST): 270.30")
    assert field_values(extract_all(document, receipts_config))["t-receipt-total"] == "270.30"


def test_an_amount_far_right_on_its_line_is_found_but_no_free_text(
    invoices_config: dict[str, Any],
) -> None:
    # Some 65 character widths from its label: too far for a name, not for an amount in
    # a column at the right edge.
    total = placed(("Total", 0.05, 0.05), ("15.90", 0.9, 0.05))
    assert field_values(extract_all(total, invoices_config))["t-total"] == "15.90"
    customer = placed(("Customer", 0.05, 0.05), ("Globex", 0.9, 0.05))
    assert field_values(extract_all(customer, invoices_config))["t-customer"] == ""


def test_the_configurations_own_label_wins_a_tie_over_a_translation(
    invoices_config: dict[str, Any],
) -> None:
    # "Amount Due" is only a translation for the total; it is longer than "Total", but
    # the configuration's own label decides.
    targets = extract_all(line_document("Amount Due: 50.00", "Total: 80.00"), invoices_config)
    assert targets["t-total"].values[0].text == "80.00"
    assert targets["t-total"].values[0].evidence["translated"] == 0.0
    alone = extract_all(line_document("Amount Due: 50.00"), invoices_config)["t-total"]
    assert alone.values[0].text == "50.00"
    assert alone.values[0].evidence["translated"] == 1.0


# --- dates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "date"),
    [("München, den 01.11.2024", "01.11.2024"), ("Paris, le 5 mars 2024", "5 mars 2024")],
    ids=["de", "fr"],
)
def test_a_letters_date_after_its_place_is_the_invoice_date(
    line: str, date: str, invoices_config: dict[str, Any],
) -> None:
    # Two unlabelled dates: by shape alone neither date field could take one.
    targets = extract_all(line_document(line, "Lieferung 28.10.2024"), invoices_config)
    values = field_values(targets)
    assert (values["t-invoice-date"], values["t-due-date"]) == (date, "")
    assert targets["t-invoice-date"].values[0].evidence["letter_date"] == 1.0


@pytest.mark.parametrize(
    ("line", "date"),
    [("Invoice Date: 05Nov 2024", "05 Nov 2024"), ("Date: August27,2023", "August 27, 2023")],
    ids=["day-month", "month-day"],
)
def test_a_respaced_labelled_date_is_not_taken_again_by_another_date(
    line: str, date: str, invoices_config: dict[str, Any],
) -> None:
    # The due date has no label and the page one date: the invoice date's, respaced.
    values = field_values(extract_all(line_document(line), invoices_config))
    assert (values["t-invoice-date"], values["t-due-date"]) == (date, "")


def test_a_date_glued_to_a_number_before_it_is_found(receipts_config: dict[str, Any]) -> None:
    date = shape_of("2024-03-15")
    assert date.find("REG#19-10/03/2018") == ["10/03/2018"]
    assert date.find("ABC10/03/2018") == []  # glued to a word: no date
    document = line_document("KEDAI ABC SDN BHD", "REG#19-10/03/2018", "Total 5.00")
    assert field_values(extract_all(document, receipts_config))["t-receipt-date"] == "10/03/2018"


@pytest.mark.xfail(
    strict=True,
    reason="Shape._spans never starts a date inside a number, so '17/04/2018' glued to "
    "'1000070' is not found: find('100007017/04/2018') returns [] although the comment "
    "in Shape.find names 'Order No.100007017/04/2018'.",
)
def test_a_date_glued_to_a_long_number_before_it_is_found() -> None:
    found = shape_of("2024-03-15").find("Order No.100007017/04/2018")
    assert len(found) == 1
    assert found[0].endswith("/04/2018") and "100007017/04/2018".endswith(found[0])


# --- codes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "number"),
    [("Invoice No: #INV03051", "#INV03051"), ("Invoice No #:SI-72004", "SI-72004"),
     ("Invoice No: INV-NAMED", "INV-NAMED"), ("Invoice No: CentralCity", "")],
    ids=["hash-kept", "label-end-dropped", "capitals-code", "word-no-code"],
)
def test_a_codes_hash_and_a_glued_label_end(
    line: str, number: str, invoices_config: dict[str, Any],
) -> None:
    assert field_values(extract_all(line_document(line), invoices_config))[
        "t-invoice-number"] == number


def test_code_like_and_without_label_end() -> None:
    assert _without_label_end("#INV03051") == "#INV03051"
    assert _without_label_end("#:SI-72004") == "SI-72004"
    assert _without_label_end(": 123") == "123"
    assert _code_like("INV-NAMED") and _code_like("#INV-A1") and _code_like("94165608")
    assert not _code_like("100%")  # a rate under "Commission", not a number
    assert not _code_like("CentralCity") and not _code_like("/ Datum")


# --- values under their column header ----------------------------------------------------


def test_a_value_starting_left_of_its_column_header_but_under_it_is_read(
    invoices_config: dict[str, Any],
) -> None:
    # The date starts four character widths left of "Invoice Date" and reaches under it.
    document = placed(("Invoice Date", 0.3, 0.05), ("15.03.2024", 0.25, 0.08))
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-invoice-date"] == "15.03.2024"
    assert targets["t-invoice-date"].values[0].evidence["below"] == 1.0
    # A value wholly left of the header belongs to another column.
    aside = placed(("Invoice Date", 0.3, 0.05), ("15.03.2024", 0.1, 0.08))
    assert field_values(extract_all(aside, invoices_config))["t-invoice-date"] == ""


# --- the issuer and its address ----------------------------------------------------------


def _words(text: str, x: float, y: float, height: float) -> list[Word]:
    words = []
    for token in text.split():
        width = 0.8 * height * len(token)
        words.append(Word(token, x, y, x + width, y + height))
        x += width + 0.4 * height
    return words


_SENDER = "Lieferant GmbH · Lieferantenstraße 20 · 80333 München"


@pytest.mark.parametrize("label", [False, True], ids=["alone", "with-a-label"])
def test_the_small_sender_line_names_the_issuer(
    label: bool, invoices_config: dict[str, Any],
) -> None:
    # The sender line is set smaller than the recipient's name under it, which has a
    # legal form too; only the address following the name on its line makes it the sender.
    document = stacked((_SENDER, 0.01), "Beispiel AG", "Musterweg 5", "10115 Berlin")
    if label:  # the invoice date's label and its value on the same line, right
        document.pages[0].words += _words("Datum: 01.11.2024", 0.65, 0.028, 0.015)
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-vendor"] == "Lieferant GmbH"
    assert targets["t-vendor"].values[0].evidence["issuer"] == 1.0
    if label:
        assert field_values(targets)["t-invoice-date"] == "01.11.2024"


def test_a_registration_number_after_the_name_is_dropped(receipts_config: dict[str, Any]) -> None:
    document = line_document("GARDENIA BAKERIES (KL) SDN BHD (139386X)",
                             "LOT 3, JALAN PELABUR 23/1", "40300 SHAH ALAM", "Total 5.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-merchant"] == "GARDENIA BAKERIES (KL) SDN BHD"
    assert values["t-address"] == "LOT 3, JALAN PELABUR 23/1 40300 SHAH ALAM"


@pytest.mark.parametrize("name", ["SINNATHAMBY HOLDINGSSDN. BHD.", "SINNATHAMBY HOLDINGSSDNBHD"])
def test_a_legal_form_glued_to_the_word_before_still_counts(
    name: str, receipts_config: dict[str, Any],
) -> None:
    # The greeting above is in the same font: only the legal form lifts the name over it.
    targets = extract_all(line_document("WELCOME", name, "Total: 8.70"), receipts_config)
    assert field_values(targets)["t-merchant"] == name
    assert targets["t-merchant"].values[0].evidence["issuer_legal"] == 1.0


def test_a_german_compound_street_name_is_an_address_not_a_name(
    receipts_config: dict[str, Any],
) -> None:
    top = extract_all(line_document("BAHNHOFSTRASSE 99", "80335 MÜNCHEN", "Total 5.00"),
                      receipts_config)
    assert field_values(top)["t-merchant"] == ""
    assert field_values(top)["t-address"] == "BAHNHOFSTRASSE 99 80335 MÜNCHEN"
    named = extract_all(line_document("KIOSK AM BAHNHOF", "BAHNHOFSTRASSE 99", "Total 5.00"),
                        receipts_config)
    assert field_values(named)["t-merchant"] == "KIOSK AM BAHNHOF"
    address = named["t-address"].values[0]
    # No postcode: only the street's name says it is an address.
    assert (address.text, address.evidence["address_words"]) == ("BAHNHOFSTRASSE 99", 1.0)


def test_a_postcode_and_town_run_together_stay_in_the_address(
    receipts_config: dict[str, Any],
) -> None:
    # Mostly letters: no registration number, though it is one word of capitals and digits.
    document = line_document("KEDAI PAPAN YEW CHUAN", "(0005583085-K)", "LOT 276 JALAN BANTING",
                             "43800DENGKILSELANGOR.", "Total 5.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-address"] == "LOT 276 JALAN BANTING 43800DENGKILSELANGOR."


def test_an_unlabelled_total_is_the_sum_of_the_amounts_above_it(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("Round trip airfare,. 292.00", "Miscellaneous cabfares. 58.50",
                             "$ 350,50", "Approved 2 packages")
    total = extract_all(document, invoices_config)["t-total"].values[0]
    assert (total.text, total.evidence["sum"]) == ("$ 350,50", 1.0)
    assert total.confidence < 0.9  # no label grounds it
    # Amounts that add up to nothing printed below them give no total.
    loose = line_document("Airfare 292.00", "Cabfares 58.50", "Tips 12.00")
    assert field_values(extract_all(loose, invoices_config))["t-total"] == ""


@pytest.mark.parametrize("paid", ["Payé 9,50€", "Bezahlt 9,50€", "Amount Paid 9.50"])
def test_what_was_paid_is_the_total(paid: str, invoices_config: dict[str, Any]) -> None:
    # One amount above: no sum to lean on, only the label.
    document = line_document("Entrée plein tarif 6,00€", paid)
    total = extract_all(document, invoices_config)["t-total"].values[0]
    assert total.text == paid.split()[-1] and total.evidence["labelled"] == 1.0


def test_a_date_ends_the_address_block(receipts_config: dict[str, Any]) -> None:
    document = line_document("SYARIKAT ABC SDN BHD", "LOT 5, JALAN BESAR", "43000 KAJANG",
                             "12/03/2018", "Total 12.00")
    values = field_values(extract_all(document, receipts_config))
    assert values["t-address"] == "LOT 5, JALAN BESAR 43000 KAJANG"
    assert values["t-receipt-date"] == "12/03/2018"


# --- OCR's O and 0 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "meant"),
    [("L0T", "LOT"), ("4330O", "43300"), ("40300o", "403000"), ("10oz", "10oz"),
     ("R0005532486", "R0005532486"), ("JALAN", "JALAN"), ("A0", "A0")],
)
def test_letters_and_digits_set_o_and_zero_right(read: str, meant: str) -> None:
    assert letters_and_digits(read) == meant


# --- evidence and calibration ------------------------------------------------------------


def test_evidence_says_how_each_value_was_found(invoices_config: dict[str, Any]) -> None:
    targets = extract_all(line_document("Acme Supplies Ltd", "Invoice No: A-31770"),
                          invoices_config)
    labelled = targets["t-invoice-number"].values[0]
    assert labelled.text == "A-31770"
    assert labelled.evidence["labelled"] == 1.0
    assert (labelled.evidence["kind_code"], labelled.evidence["ocr"]) == (1.0, 0.0)
    issuer = targets["t-vendor"].values[0]
    assert issuer.text == "Acme Supplies Ltd"
    assert issuer.evidence["issuer"] == 1.0 and "labelled" not in issuer.evidence
    shaped = extract_all(line_document("Ref INV-2024-0099"), invoices_config)
    value = shaped["t-invoice-number"].values[0]
    assert value.text == "INV-2024-0099"
    assert value.evidence["shape"] == 1.0 and "labelled" not in value.evidence
    # The calibrated confidence is the shipped model's over the raw score and evidence;
    # a value no label grounds stays under 0.9 (issue 29).
    for found in (labelled, issuer, value):
        assert found.raw is not None
        assert found.confidence == calibrated("", found.raw, evidence=found.evidence)
    assert issuer.confidence < 0.9 and value.confidence < 0.9


_LOGISTIC: dict[str, Any] = {
    "logistic": {"intercept": -1.0, "coef": {"logit_raw": 2.0, "labelled": 1.5}},
    "kinds": {"all": {"x": [0.0, 1.0], "y": [0.6, 0.6]}},
}


def _sigmoid(score: float) -> float:
    return 1 / (1 + math.exp(-score))


def test_the_logistic_model_applies_its_intercept_and_weights() -> None:
    # At a raw score of 0.5 the log-odds are 0: the intercept alone, then plus the weight.
    assert calibrated("amount", 0.5, _LOGISTIC, {}) == pytest.approx(_sigmoid(-1.0), abs=1e-4)
    assert calibrated("amount", 0.5, _LOGISTIC, {"labelled": 1.0}) == pytest.approx(
        _sigmoid(0.5), abs=1e-4)
    raw = 0.8
    expected = _sigmoid(-1.0 + 2.0 * math.log(raw / (1 - raw)) + 1.5)
    assert calibrated("date", raw, _LOGISTIC, {"labelled": 1.0}) == pytest.approx(
        expected, abs=1e-4)
    # Evidence the model has no weight for changes nothing.
    assert calibrated("amount", 0.5, _LOGISTIC, {"below": 1.0}) == calibrated(
        "amount", 0.5, _LOGISTIC, {})
    assert features(0.5, {"labelled": 1.0}) == {"logit_raw": 0.0, "labelled": 1.0}
    assert math.isfinite(features(1.0, {})["logit_raw"])


def test_the_logistic_model_is_monotone_and_clamped() -> None:
    raws = [i / 20 for i in range(1, 20)]
    for evidence in ({}, {"labelled": 1.0}):
        mapped = [calibrated("amount", raw, _LOGISTIC, evidence) for raw in raws]
        assert mapped == sorted(mapped) and mapped[0] < mapped[-1]
    assert calibrated("amount", 0.999, _LOGISTIC, {"labelled": 1.0}) == pytest.approx(0.98)
    assert calibrated("amount", 0.001, _LOGISTIC, {}) == pytest.approx(0.02)
    assert calibrated("amount", 1.0, _LOGISTIC, {"labelled": 1.0}) == pytest.approx(0.98)


def test_without_evidence_or_model_the_step_maps_apply() -> None:
    assert calibrated("amount", 0.9, _LOGISTIC) == pytest.approx(0.6)
    steps = {"kinds": _LOGISTIC["kinds"]}
    assert calibrated("amount", 0.9, steps, {"labelled": 1.0}) == pytest.approx(0.6)


def test_the_shipped_map_holds_a_logistic_model_over_the_raw_score() -> None:
    model = load_map()["logistic"]
    assert isinstance(model["intercept"], float)
    assert "logit_raw" in model["coef"]
    assert model["coef"]["logit_raw"] > 0  # a higher raw score never means less likely
    low = calibrated("amount", 0.3, evidence={"labelled": 1.0, "kind_amount": 1.0})
    high = calibrated("amount", 0.9, evidence={"labelled": 1.0, "kind_amount": 1.0})
    assert 0.02 <= low < high <= 0.98


def test_the_total_that_adds_up_to_subtotal_plus_tax_wins(
    invoices_config: dict[str, Any],
) -> None:
    # Both are labelled as the configuration says ("Total"); only arithmetic tells them
    # apart: 100.00 + 20.00 is the invoice's total, 620.00 adds an earlier balance.
    document = line_document("Subtotal: 100.00", "Tax: 20.00", "Total: 620.00",
                             "Total: 120.00")
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-total"] == "120.00"
    assert targets["t-total"].values[0].evidence.get("sums") == 1.0


def test_a_total_that_does_not_add_up_says_so_in_its_evidence(
    invoices_config: dict[str, Any],
) -> None:
    document = line_document("Subtotal: 100.00", "Tax: 20.00", "Total: 125.00")
    targets = extract_all(document, invoices_config)
    assert field_values(targets)["t-total"] == "125.00"  # printed, so still the total
    assert targets["t-total"].values[0].evidence.get("sums_not") == 1.0
