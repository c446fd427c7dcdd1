"""bench/realsets.py's other sets (adforms-dev, zugferd-dev, contracts-dev): the halves
rule, the bench's own configurations, the sets' scoring rules and their loaders. The
loaders are checked only where ../shared/data holds the sets (CI has no data)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import realsets  # noqa: E402
import rename  # noqa: E402

from servicetools.service.core.configs import check_file  # noqa: E402

OWN = sorted(realsets.CONFIGURATIONS.glob("*.json"))
Truth = realsets.Truth


# -- the halves ------------------------------------------------------------------------------
def test_half_is_the_first_hex_digit_of_the_names_sha256() -> None:
    # sha256 of the name starts with: 005.jpg e9, 001.jpg 6a, eu-002.pdf 90, eu-001.pdf 79.
    assert realsets.half("005.jpg") == "check"
    assert realsets.half("001.jpg") == "tuning"
    assert realsets.half("eu-002.pdf") == "check"
    assert realsets.half("eu-001.pdf") == "tuning"
    assert {realsets.half(f"{n:03d}.jpg") for n in range(40)} == {"tuning", "check"}


def test_an_invoice_key_decides_instead_of_the_name() -> None:
    # fx-EN16931_Elektron.pdf hashes to 3c (tuning); its key 9a68dba1cb80 to 9b (check).
    name = "fx-EN16931_Elektron.pdf"
    assert realsets.half(name) == "tuning"
    assert realsets.half(name, "9a68dba1cb80") == "check"
    assert realsets.half("005.jpg", "cf825985d834") == "tuning"  # cf82... hashes to 2d
    case = realsets.Case("zugferd-dev", Path(f"x/{name}"), "zugferd", {}, "9a68dba1cb80")
    assert case.half == "check"
    assert realsets.Case("x", Path(f"x/{name}"), "x", {}).half == "tuning"


def test_the_rename_bench_splits_by_the_same_rule() -> None:
    assert rename.half is realsets.half


# -- the configurations ----------------------------------------------------------------------
def test_the_bench_has_a_configuration_per_other_set_and_each_passes_the_check() -> None:
    assert [p.stem for p in OWN] == ["adforms", "contracts", "zugferd"]
    for path in OWN:
        assert check_file(path) == [], path


def test_configurations_have_the_bundled_structure() -> None:
    from servicetools import bundled

    bundled_keys = set(json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text()))
    field_keys = {k for t in json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text()
                                        )["extraction_targets"] if t["type"] == "field"
                  for k in t}
    for path in OWN:
        configuration = json.loads(path.read_text())
        assert set(configuration) == bundled_keys, path
        for target in configuration["extraction_targets"]:
            assert set(target) == field_keys, (path, target["id"])


def test_collect_knows_the_bundled_and_the_bench_configurations() -> None:
    known = realsets.configurations()
    assert {"invoices", "receipts", "adforms", "zugferd", "contracts"} <= set(known)
    parties = [t for t in known["contracts"]["extraction_targets"] if t["name"] == "Parties"]
    assert parties[0]["is_multiple"] is True


def test_truth_keys_are_target_names_of_the_configurations() -> None:
    known = realsets.configurations()
    for name, fields in (("adforms", realsets.ADFORMS_FIELDS),
                         ("zugferd", realsets.ZUGFERD_FIELDS),
                         ("contracts", realsets.CONTRACTS_FIELDS)):
        targets = {t["name"] for t in known[name]["extraction_targets"]}
        assert {target for target, _ in fields.values()} <= targets, name


# -- the scoring rules of the sets' READMEs -------------------------------------------------
def test_us_dates_are_month_first() -> None:
    truth = Truth(realsets.US_DATE, "2020-02-03")
    for got in ("02/03/20", "2/3/2020", "2020-02-03", "Feb 3, 2020", "03-Feb-20",
                "3rd day of February, 2020"):
        assert realsets.right(got, truth), got
    assert not realsets.right("03/02/20", truth)
    assert not realsets.right("February 2020", truth)  # no day: no calendar date
    assert realsets.right("3.26.01", Truth(realsets.US_DATE, "2001-03-26"))


def test_european_dates_with_slashes_read_either_way_others_day_first() -> None:
    truth = Truth(realsets.EU_DATE, "2017-11-03")
    assert realsets.right("11/03/2017", truth) and realsets.right("03/11/2017", truth)
    assert realsets.right("03.11.2017", truth) and not realsets.right("11.03.2017", truth)
    assert realsets.right("3. November 2017", truth)
    assert realsets.right("5. März 2018", Truth(realsets.EU_DATE, "2018-03-05"))
    assert realsets.right("2018-04-05", Truth(realsets.EU_DATE, "2018-04-05"))


def test_loose_names_may_contain_each_other_from_six_characters() -> None:
    truth = Truth(realsets.LOOSE_NAME, "Cox for Governor-R")
    assert realsets.right("COX FOR GOVERNOR", truth)
    assert realsets.right("cox for governor - r", truth)
    assert not realsets.right("Cox", truth)  # "cox" is shorter than 6
    assert realsets.right("Lieferant GmbH, Lieferantenstraße 20", Truth(realsets.LOOSE_NAME,
                                                                          "Lieferant GmbH"))


def test_a_party_is_found_among_several_values_suffixes_ignored() -> None:
    truth = Truth(realsets.PARTY, "Nike Inc.")
    assert realsets.right("Acme Corp\nNIKE, Inc.", truth)
    assert realsets.right("Nike", truth)
    assert realsets.right("Raymond James & Associates, Inc.",
                          Truth(realsets.PARTY, "Raymond James and Associates Inc."))
    assert realsets.right("Providence Equity Partners L.L.C.",
                          Truth(realsets.PARTY, "Providence Equity Partners LLC"))
    assert not realsets.right("Acme Corp\nInc.", truth)


def test_governing_law_ignores_case_punctuation_and_state_of() -> None:
    truth = Truth(realsets.LAW, "New York")
    assert realsets.right("State of New York", truth) and realsets.right("NEW YORK.", truth)
    assert not realsets.right("New Jersey", truth)


def test_a_term_is_the_same_duration() -> None:
    truth = Truth(realsets.TERM, "2 years")
    for got in ("2 years", "two (2) years", "24 months", "twenty-four months", "a 2-year term"):
        assert realsets.right(got, truth), got
    assert not realsets.right("18 months", truth)
    assert realsets.durations("ninety (90) days") == [("days", 90)]


def test_the_ceiling_reads_values_in_sentences() -> None:
    lines = ["This Agreement is entered into this 24th day of", "August, 1999 by NIKE, Inc.",
             "and shall be governed by the laws of the State of Oregon for two (2)", "years."]
    assert realsets.present(lines, Truth(realsets.US_DATE, "1999-08-24"))
    assert realsets.present(lines, Truth(realsets.PARTY, "Nike Inc."))
    assert realsets.present(lines, Truth(realsets.LAW, "Oregon"))
    assert realsets.present(lines, Truth(realsets.TERM, "24 months"))
    assert not realsets.present(lines, Truth(realsets.LAW, "Ohio"))


def test_halves_table_gives_accuracy_per_half() -> None:
    def outcome(target: str, right: bool, half: str, key: str) -> realsets.Outcome:
        return realsets.Outcome("s", f"s/{key}-{half}", target, realsets.CODE, "1",
                                "1" if right else "", 1.0, right, True, half=half, key=key)

    table = realsets.halves_table([outcome("A", True, "tuning", "k"),
                                   outcome("A", False, "check", "k")])
    assert "s / A" in table and "100.0%" in table and "0.0%" in table


# -- the loaders (where the data is) ---------------------------------------------------------
# README counts: documents, and values with truth per target (a null is not scored; the
# parties count the documents that name any).
EXPECTED = {
    "adforms-dev": (120, {"Contract Number": 120, "Advertiser": 120, "Gross Amount": 120,
                          "Flight Start": 120, "Flight End": 119}),
    "zugferd-dev": (47, {name: 47 for name in ("Seller", "Invoice Number", "Invoice Date",
                                               "Currency", "Net Total", "Tax Total",
                                               "Total")}),
    "contracts-dev": (40, {"Effective Date": 23, "Parties": 39, "Governing Law": 40,
                           "Term": 11}),
}


@pytest.mark.parametrize("set_name", sorted(EXPECTED))
def test_a_loader_yields_the_readmes_documents_with_truth(set_name: str) -> None:
    folder = realsets.SHARED / set_name
    if not folder.exists():
        pytest.skip(f"{folder} is not here (the development sets are outside the repo)")
    documents, values = EXPECTED[set_name]
    found = realsets.cases(set_name)
    assert len(found) == documents
    assert all(case.path.exists() and case.content_type == "application/pdf" for case in found)
    counts = {target: sum(target in case.truth for case in found) for target in values}
    assert counts == values
    for case in found:
        for truth in case.truth.values():
            assert truth.value.strip()


def test_the_halves_of_the_sets_are_as_their_readmes_say() -> None:
    if not (realsets.SHARED / "zugferd-dev").exists():
        pytest.skip("zugferd-dev is not here (the development sets are outside the repo)")
    invoices = {case.key: case.half for case in realsets.cases("zugferd-dev")}
    assert len(invoices) == 19  # each invoice in one half
    if (realsets.SHARED / "contracts-dev").exists():
        halves = [case.half for case in realsets.cases("contracts-dev")]
        assert (halves.count("tuning"), halves.count("check")) == (17, 23)


def test_contracts_count_71_parties() -> None:
    if not (realsets.SHARED / "contracts-dev").exists():
        pytest.skip("contracts-dev is not here (the development sets are outside the repo)")
    parties = [p for case in realsets.cases("contracts-dev") if "Parties" in case.truth
               for p in case.truth["Parties"].value.split("\n")]
    assert len(parties) == 71


def test_the_engine_reads_a_zugferd_page_not_its_xml_attachment() -> None:
    path = realsets.SHARED / "zugferd-dev" / "fx-EN16931_Elektron.pdf"
    if not path.exists():
        pytest.skip("zugferd-dev is not here (the development sets are outside the repo)")
    import pypdfium2 as pdfium

    from servicetools.service.engine import load_document
    from servicetools.service.engine.lines import document_text

    data = path.read_bytes()
    name = json.loads(path.with_suffix(".json").read_text())["attachment"]  # factur-x.xml
    pdf = pdfium.PdfDocument(data)
    try:
        attached = {pdf.get_attachment(i).get_name(): pdf.get_attachment(i)
                    for i in range(pdf.count_attachments())}
        xml = bytes(attached[name].get_data()).decode("utf-8")
    finally:
        pdf.close()
    assert "CrossIndustryInvoice" in xml and "181301674" in xml
    text = document_text(load_document(data, "application/pdf"))
    assert "181301674" in text  # the number as the page prints it
    assert "CrossIndustryInvoice" not in text and "<rsm:" not in text
