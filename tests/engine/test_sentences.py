"""Values a user's own configuration asks for where no bundled one looks: stated in
sentences (engine/sentences.py), one end of a printed range, a number labelled in any of
its printed forms, labels named in a description's prose."""

from __future__ import annotations

from typing import Any

from servicetools.service.engine.roles import understand

from ..support.engine_documents import extract_all, placed, stacked


def _field(target_id: str, name: str, description: str, example: str = "",
           multiple: bool = False) -> dict[str, Any]:
    return {"id": target_id, "type": "field", "name": name, "description": description,
            "example": example, "validation_tree": None, "is_multiple": multiple,
            "search_area": "all", "search_area_type": "all", "extraction_group_id": "g",
            "creation_unix_timestamp": 0.0}


def _configuration(*targets: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "name": "mine", "extraction_targets": list(targets)}


def _values(document: Any, configuration: dict[str, Any]) -> dict[str, list[str]]:
    return {key: [v.text for v in target.values]
            for key, target in extract_all(document, configuration).items()}


CONTRACT = stacked(
    "MUTUAL NONDISCLOSURE AGREEMENT",
    "This Agreement is entered into as of March 24, 2007 by and between Acme Widgets,",
    "Inc., a Delaware corporation (the \"Company\"), and Globex LLC (\"Recipient\").",
    "1. Term. The obligations of this Agreement shall last for a period of two (2)",
    "years from the date of disclosure. Notices shall be sent within 30 days.",
    "2. Governing Law. This Agreement shall be governed by and construed in accordance",
    "with the laws of the State of New York, without regard to conflicts of law.",
    "Acme Widgets is a Delaware corporation with offices in Texas.",
)
CONTRACTS = _configuration(
    _field("law", "Governing Law", "The US state whose laws govern the agreement."),
    _field("term", "Term", "How long the agreement or its obligations last.", "2 years"),
    _field("parties", "Parties", "The companies and people who make the agreement.",
           multiple=True),
)


def test_values_stated_in_sentences_are_read_by_their_kind() -> None:
    values = _values(CONTRACT, CONTRACTS)
    # The governing-law clause decides, not the "Delaware corporation" beside a name.
    assert values["law"] == ["New York"]
    # The duration in the sentence the target's words point to, not the notice period.
    assert values["term"] == ["two (2) years"]
    assert values["parties"] == ["Acme Widgets, Inc.", "Globex LLC"]


def test_a_duration_under_its_sections_heading_wins_over_one_the_words_touch_more() -> None:
    # A standstill's period says "agree", "period" and "agreement"; the section headed
    # "Term." says how long the agreement lasts, its number glued to the sentence before.
    contract = stacked(
        "8. You agree that for a period of 18 months, while the obligations of this",
        "Agreement remain in effect, you will not acquire securities of the Company. This",
        "letter may be signed in counterparts, each an original. 13. Term. Except for",
        "Sections 6 and 14(i) (Governing Law; Forum), this letter shall end on the date",
        "that is two years after the date hereof.")
    assert _values(contract, CONTRACTS)["term"] == ["two years"]
    # Without the heading, the sentence the target's words touch most.
    unheaded = stacked(
        "8. You agree that for a period of 18 months after the date of this Agreement you",
        "will not acquire any securities of the Company. Nothing here expires in two years.")
    assert _values(unheaded, CONTRACTS)["term"] == ["18 months"]


def test_stated_values_stay_under_the_auto_accept_line() -> None:
    for target in extract_all(CONTRACT, CONTRACTS).values():
        assert all(0 < value.confidence < 0.9 for value in target.values)


def test_a_document_without_such_a_sentence_leaves_them_empty() -> None:
    letter = stacked("Dear Mr. Park,", "Thank you for your order of 12 chairs.")
    values = _values(letter, CONTRACTS)
    assert values["law"] == [""] and values["term"] == [""] and values["parties"] == [""]


LETTER_AGREEMENT = stacked(
    "Buckeye Technologies Inc.", "1001 Tillman Street", "Memphis, TN 38112",
    "January 30, 2013",
    "Georgia-Pacific LLC", "133 Peachtree Street, N.E.", "Atlanta, GA 30303",
    "Attention: David G. Park",
    "Dear Mr. Park:",
    "Georgia-Pacific LLC has requested certain non-public information regarding the",
    "Company. This letter agreement shall be governed by the laws of the State of Delaware.",
)


def test_a_letter_agreement_names_its_parties_over_their_addresses() -> None:
    dated = _configuration(*CONTRACTS["extraction_targets"],
                           _field("date", "Effective Date", "When the agreement starts.",
                                  "2013-01-30"))
    values = _values(LETTER_AGREEMENT, dated)
    assert values["parties"] == ["Buckeye Technologies Inc.", "Georgia-Pacific LLC"]
    assert values["date"] == ["January 30, 2013"]  # the letter's date, on a line alone
    # Without a salutation the same lines are no letter: no parties are guessed.
    unsigned = stacked("Buckeye Technologies Inc.", "1001 Tillman Street",
                       "Georgia-Pacific LLC", "133 Peachtree Street, N.E.")
    assert _values(unsigned, CONTRACTS)["parties"] == [""]


def test_the_parties_listed_under_their_heading() -> None:
    listed = stacked(
        "COVENANT NOT TO COMPETE AND NON-DISCLOSURE AGREEMENT", "PARTIES:",
        "Charles D. Denson (EMPLOYEE)", "and",
        "NIKE, Inc., and its parent, divisions, subsidiaries and affiliates. (NIKE):",
        "RECITALS:", "A. This Agreement is executed upon the EMPLOYEE's advancement.")
    found = extract_all(listed, CONTRACTS)["parties"]
    assert [v.text for v in found.values] == ["Charles D. Denson", "NIKE, Inc."]
    assert all(v.confidence < 0.9 for v in found.values)


def test_the_parties_an_opening_introduces_by_the_names_they_go_by() -> None:
    # No "between": each party is named before the name it goes by, a description after
    # a comma left out; things given a defined name ("the Transaction") are no parties.
    opening = stacked(
        "CONFIDENTIALITY AGREEMENT",
        "This Agreement (this \"Agreement\") is entered into as of August 24, 2004 by Mark A.",
        "Sirgo (\"Employee\") in favor of BioDelivery Sciences International, Inc., a Delaware",
        "corporation (the \"Company\"), regarding a possible combination (the \"Transaction\")",
        "under the Employment Agreement between Employee and the Company (the \"Plan\").",
        "The Regents of The University of Michigan, a constitutional corporation of the State",
        "of Michigan (hereinafter referred to as \"MICHIGAN\") shall receive the Information.")
    found = extract_all(opening, CONTRACTS)["parties"]
    assert [v.text for v in found.values] == [
        "Mark A. Sirgo", "BioDelivery Sciences International, Inc.",
        "Regents of The University of Michigan"]
    assert all(v.confidence < 0.9 for v in found.values)


def test_one_party_alone_is_a_list_read_short() -> None:
    # A labelled name may be sure, but an agreement has two parties at least: one
    # alone never reaches the auto-accept line.
    labelled = stacked("Parties: Charles D. Denson", "Recitals follow.")
    [value] = extract_all(labelled, CONTRACTS)["parties"].values
    assert value.text == "Charles D. Denson" and value.confidence < 0.9


def test_one_end_of_a_printed_range_for_a_target_asking_for_it() -> None:
    form = stacked("KPTH Invoice # 1336165-2", "Flight Dates 01/28/20 - 02/03/20",
                   "Gross Total $5,625.00")
    configuration = _configuration(
        _field("start", "Flight Start", "The first air date, the start of the flight dates.",
               "12/09/19"),
        _field("end", "Flight End", "The last air date, the end of the flight dates.",
               "12/15/19"),
        _field("gross", "Gross Amount", "The gross total, not the smaller net amount.",
               "$2,970.00"),
        _field("number", "Contract Number", "The contract or invoice number.", "1422136-1"),
    )
    values = _values(form, configuration)
    assert values == {"start": ["01/28/20"], "end": ["02/03/20"], "gross": ["$5,625.00"],
                      "number": ["1336165-2"]}


def test_a_document_number_keeps_its_printed_form() -> None:
    # An all-digit example is a code's, not a quantity's; a number of another form than
    # the example's is not cut to it.
    assert understand({"name": "Invoice Number", "example": "471102"}).kind == "code"
    invoice = stacked("Invoice No: INV-42X", "Total: 12.00")
    configuration = _configuration(
        _field("a", "Invoice Number", "The invoice's own number.", "INV-2024-0012"))
    assert _values(invoice, configuration)["a"] == ["INV-42X"]
    digits = _configuration(_field("a", "Invoice Number", "The invoice's own number.", "471102"))
    assert _values(stacked("Rechnungsnummer 181301674"), digits)["a"] == ["181301674"]


def test_labels_named_in_prose_and_the_forms_of_a_numbers_label() -> None:
    understood = understand({"name": "Gross Amount", "description":
                             "The total cost (the gross total, not the smaller net amount)."})
    assert understood.described == ("Gross Total",)  # the negated clause names nothing
    document = stacked("Contract # 566898", "Date Entered 02/18/20")
    configuration = _configuration(_field("n", "Contract Number", "The contract's number.",
                                          "1422136-1"))
    assert _values(document, configuration)["n"] == ["566898"]


def test_a_currency_is_its_iso_code_from_its_label_or_beside_the_amounts() -> None:
    configuration = _configuration(_field("c", "Currency", "The invoice's currency.", "EUR"))
    assert _values(stacked("Währung: Euro", "Total 12,00"), configuration)["c"] == ["EUR"]
    assert _values(stacked("Total 1.500,00 EUR"), configuration)["c"] == ["EUR"]
    assert _values(stacked("Summe € 12,40"), configuration)["c"] == ["EUR"]
    # Capitals glued to a number are a VAT number's, not a currency.
    vat = stacked("Customer VAT Number ESA12345674", "Total 12,00 £")
    assert _values(vat, configuration)["c"] == ["GBP"]
    # A BIC's head-office code "XXX" (ISO's "no currency") ends an identifier.
    bank = stacked("Total 2,076.76 €", "IBAN : FR20 1242 1242 124 - BIC : FIDCFR21XXX")
    assert _values(bank, configuration)["c"] == ["EUR"]
    assert _values(stacked("Thank you"), configuration)["c"] == [""]


def test_the_seller_under_a_block_heading_of_labelled_lines() -> None:
    configuration = _configuration(_field("s", "Seller", "The company that issues the invoice."))
    numbered = stacked("Rechnung 471102", "Verkäufer:", "Nummer: 549910",
                       "Name: ELEKTRON Industrieservice GmbH", "Erfurter Strasse 13")
    assert _values(numbered, configuration)["s"] == ["ELEKTRON Industrieservice GmbH"]
    plain = stacked("Rechnung 471102", "Verkäufer:", "Globale Nummer: 4000001123452 (GTIN)",
                    "Lieferant GmbH", "Lieferantenstraße 20")
    assert _values(plain, configuration)["s"] == ["Lieferant GmbH"]


def test_a_whole_page_area_holds_the_letterhead() -> None:
    # A user's area covering the first page is where the issuer's letterhead stands.
    target = _field("s", "Seller", "The company that issues the invoice.")
    target.update(search_area="first page", search_area_type="box")
    configuration = {"id": "c", "name": "mine", "extraction_targets": [target],
                     "search_areas": {"first page": {"page": 1, "box": [0.0, 0.0, 1.0, 1.0]}}}
    letter = stacked(("Northwind Traders GmbH", 0.025), "Hauptstrasse 5, 10115 Berlin",
                     "Invoice 4711", "Total: 12.00")
    assert _values(letter, configuration)["s"] == ["Northwind Traders GmbH"]


def test_a_row_of_column_headings_is_no_value() -> None:
    # "Advertiser  Original Date / Revision" heads two columns; the advertiser is below.
    form = placed(("Advertiser", 0.05, 0.10), ("Original Date / Revision", 0.45, 0.10),
                  ("POL/Friends of Bill Conway", 0.05, 0.13), ("02/28/20 / 03/19/20", 0.45, 0.13))
    configuration = _configuration(_field("a", "Advertiser", "Who buys the air time."))
    assert _values(form, configuration)["a"] == ["POL/Friends of Bill Conway"]
