"""The real document sets as benchmark cases: truth, scoring and the reading ceiling.

Folders of real documents with ground truth are read from paths (they are not part of
the product; see each folder's README for source and licence):

- ``sroie-dev``: scanned receipts; company, date, address and total;
- ``invoices-dev``: published invoices and receipts; issuer, number, date and total;
- ``real``: published invoices and receipts; fields keyed by their printed label;
- ``adforms-dev``: US TV political ad-buy forms; contract number, advertiser, gross
  amount, flight dates (configuration ``bench/configurations/adforms.json``);
- ``zugferd-dev``: European e-invoices, truth from their XML attachment, measured on
  the page; seller, number, date, currency and totals (``zugferd.json``);
- ``contracts-dev``: NDAs filed with the SEC; effective date, parties, governing law
  and term, stated in sentences (``contracts.json``).

The first three are scored by the sroie-dev README: names, addresses and codes are
equal with all whitespace removed and case ignored; dates when equal so or when both
read as the same calendar date; amounts when both read as the same number (within
0.01). The other three are scored by their own READMEs, through kinds of their own
(US_DATE, EU_DATE, LOOSE_NAME, PARTY, LAW, TERM; see `right`).

The *ceiling* of a value is whether it is present at all in the words the engine
sees (text layer or OCR), compared the same way: a miss under the ceiling is the
engine's choice, a miss above it is reading.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from dateutil import parser as dateparser

from servicetools.wire.values import parse_amount

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = ("sroie-dev", "invoices-dev", "real")
# Sets of other kinds of documents, each with its configuration in bench/configurations.
# Not in SETS, which the engine's calibration is fitted on (bench/train.py).
OTHER_SETS = ("adforms-dev", "zugferd-dev", "contracts-dev")
CONFIGURATIONS = Path(__file__).resolve().parent / "configurations"
# The bundled 40-document generated sample (datagen, seed 2026), read like a set.
SAMPLE = "sample"

# Kinds decide how a value is compared.
NAME, ADDRESS, CODE, DATE, AMOUNT = "name", "address", "code", "date", "amount"
# Kinds of the other sets' READMEs: a date whose numeric form is month first (US forms)
# or, written with slashes, either way and otherwise day first (European invoices); a
# name that may contain the truth or be contained in it (6 letters or digits at least);
# one party of several (suffixes ignored, containment either way); a governing state
# ("State of" ignored); a duration ("2 years" is "24 months").
US_DATE, EU_DATE, LOOSE_NAME = "us-date", "eu-date", "loose-name"
PARTY, LAW, TERM = "party", "law", "term"
# Kinds whose truth holds several values, one a line: one outcome per value, each found
# among all the values the engine gave.
SEVERAL = (PARTY,)

# Target names of the bundled configurations, per set field.
SROIE_FIELDS = {"company": ("Merchant", NAME), "date": ("Date", DATE),
                "address": ("Address", ADDRESS), "total": ("Total", AMOUNT)}
INVOICE_FIELDS = {"issuer": ("Vendor", NAME), "invoice_number": ("Invoice Number", CODE),
                  "date": ("Invoice Date", DATE), "total": ("Total", AMOUNT)}
RECEIPT_FIELDS = {"issuer": ("Merchant", NAME), "invoice_number": ("Receipt Number", CODE),
                  "date": ("Date", DATE), "total": ("Total", AMOUNT)}
# real/: printed labels (lower case) by target; the first label present wins.
REAL_LABELS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "invoices": {
        "Invoice Number": (("invoice number", "invoice #", "invoice no", "invoice"), CODE),
        "Invoice Date": (("invoice date", "date", "[invoice_date]", "[date]"), DATE),
        "Due Date": (("due date", "invoice due date", "due"), DATE),
        "Vendor": (("[vendor]", "from"), NAME),
        "Customer": (("[customer]", "customer name", "sold to", "bill to", "to"), NAME),
        "Subtotal": (("subtotal", "sub-total"), AMOUNT),
        "Tax": (("tax", "sales tax", "vat"), AMOUNT),
        "Total": (("total", "balance due", "total due", "amount due"), AMOUNT),
    },
    "receipts": {
        "Merchant": (("[vendor]",), NAME),
        "Address": (("[vendor_address]", "[address]"), ADDRESS),
        "Date": (("date", "[date]"), DATE),
        "Receipt Number": (("receipt #", "receipt no", "receipt number"), CODE),
        "Tax": (("tax", "sales tax", "vat"), AMOUNT),
        "Total": (("total", "total due"), AMOUNT),
    },
}
# The other sets' truth keys: (target name of their configuration, kind).
ADFORMS_FIELDS = {"contract_number": ("Contract Number", CODE),
                  "advertiser": ("Advertiser", LOOSE_NAME),
                  "gross_amount": ("Gross Amount", AMOUNT),
                  "flight_from": ("Flight Start", US_DATE), "flight_to": ("Flight End", US_DATE)}
ZUGFERD_FIELDS = {"seller": ("Seller", LOOSE_NAME), "invoice_number": ("Invoice Number", CODE),
                  "date": ("Invoice Date", EU_DATE), "currency": ("Currency", CODE),
                  "net_total": ("Net Total", AMOUNT), "tax_total": ("Tax Total", AMOUNT),
                  "total": ("Total", AMOUNT)}
CONTRACTS_FIELDS = {"effective_date": ("Effective Date", US_DATE), "parties": ("Parties", PARTY),
                    "jurisdiction": ("Governing Law", LAW), "term": ("Term", TERM)}
CONTENT_TYPES = {".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg",
                 ".jpeg": "image/jpeg"}


@dataclass(frozen=True)
class Truth:
    """One expected value: its kind, the value, and the printed form where the set has one."""

    kind: str
    value: str
    printed: str = ""


@dataclass
class Case:
    set: str
    path: Path
    configuration: str
    truth: dict[str, Truth]  # by target name
    # The distinct document a file shows, where a set draws one in several files
    # (zugferd-dev's invoice_key): it decides the half, and figures per distinct document.
    key: str = ""

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}"

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.path.suffix.lower()]

    @property
    def half(self) -> str:
        return half(self.path.name, self.key or None)


def half(file_name: str, invoice_key: str | None = None) -> str:
    """``../shared/data/README.md``'s split: "tuning" when the first hex digit of the
    SHA-256 of the file name (UTF-8, no folder) is 0-7, else "check"; zugferd-dev's
    files by their `invoice_key` instead, so that each invoice is in one half."""
    text = invoice_key if invoice_key is not None else file_name
    return "tuning" if hashlib.sha256(text.encode()).hexdigest()[0] in "01234567" else "check"


def cases(set_name: str, root: Path = SHARED) -> list[Case]:
    """The cases of one set, in file order."""
    if set_name == SAMPLE:
        return generated()
    loaders = {"sroie-dev": _sroie, "invoices-dev": _invoices, "real": _real,
               "adforms-dev": _adforms, "zugferd-dev": _zugferd, "contracts-dev": _contracts}
    if set_name not in loaders:
        raise ValueError(f"unknown set {set_name!r}; known: {', '.join(loaders)}")
    return list(loaders[set_name](root / set_name))


def _other(folder: Path, set_name: str, configuration: str,
           fields: dict[str, tuple[str, str]]) -> Iterator[Case]:
    """NAME.pdf beside NAME.json, the truth a key per field; null (or an empty list) is
    not scored."""
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        truth = {}
        for name, (target, kind) in fields.items():
            value = data.get(name)
            if isinstance(value, list):
                value = "\n".join(str(v) for v in value) if value else None
            if value is not None:
                truth[target] = Truth(kind, str(value), str(value))
        yield Case(set_name, path.with_suffix(".pdf"), configuration, truth,
                   str(data.get("invoice_key") or ""))


def _adforms(folder: Path) -> Iterator[Case]:
    return _other(folder, "adforms-dev", "adforms", ADFORMS_FIELDS)


def _zugferd(folder: Path) -> Iterator[Case]:
    # The truth is the XML attached to each PDF; the engine's loader (engine/pages.py)
    # reads the pages only (text layer, or OCR), never the attachments.
    return _other(folder, "zugferd-dev", "zugferd", ZUGFERD_FIELDS)


def _contracts(folder: Path) -> Iterator[Case]:
    return _other(folder, "contracts-dev", "contracts", CONTRACTS_FIELDS)


def _sroie(folder: Path) -> Iterator[Case]:
    for key in sorted((folder / "key").glob("*.json")):
        data = json.loads(key.read_text())
        truth = {target: Truth(kind, str(data[name]), str(data[name]))
                 for name, (target, kind) in SROIE_FIELDS.items() if data.get(name)}
        yield Case("sroie-dev", folder / "img" / f"{key.stem}.jpg", "receipts", truth)


def _invoices(folder: Path) -> Iterator[Case]:
    for path in sorted(folder.glob("*/*.truth.json")):
        data = json.loads(path.read_text())
        receipt = data["kind"] == "receipt"
        mapping = RECEIPT_FIELDS if receipt else INVOICE_FIELDS
        printed = data.get("printed", {})
        truth = {}
        for name, (target, kind) in mapping.items():
            value = data["fields"].get(name)
            if value is not None:
                truth[target] = Truth(kind, str(value), str(printed.get(name, value)))
        yield Case("invoices-dev", path.with_name(data["document"]),
                   "receipts" if receipt else "invoices", truth)


_SAMPLE_KINDS = {"Invoice Date": DATE, "Due Date": DATE, "Date": DATE, "Vendor": NAME,
                 "Merchant": NAME, "Customer": NAME, "Invoice Number": CODE,
                 "Receipt Number": CODE, "Payment Method": NAME}


def generated(folder: Path | None = None, name: str = SAMPLE) -> list[Case]:
    """Cases of a generated set (datagen layout: documents/ and truth/); the bundled sample
    by default."""
    from servicetools import bundled

    documents = folder / "documents" if folder else bundled.DOCUMENTS
    truths = folder / "truth" if folder else bundled.TRUTH
    found = []
    for path in sorted(truths.glob("*.json")):
        data = json.loads(path.read_text())
        truth = {target: Truth(_SAMPLE_KINDS.get(target, AMOUNT), str(value), str(value))
                 for target, value in data["fields"].items() if value}
        found.append(Case(name, documents / data["document"], data["configuration"], truth))
    return found


def _real(folder: Path) -> Iterator[Case]:
    for path in sorted(folder.glob("*/*.truth.json")):
        data = json.loads(path.read_text())
        if data.get("kind") not in ("invoice", "receipt"):
            continue
        configuration = "invoices" if data["kind"] == "invoice" else "receipts"
        labels = {k.lower().rstrip(":"): v for k, v in data.get("fields", {}).items()}
        truth = {}
        for target, (aliases, kind) in REAL_LABELS[configuration].items():
            for alias in aliases:
                if alias in labels:
                    value = str(labels[alias])
                    # Names count by their first line; addresses are whole blocks.
                    if kind != ADDRESS:
                        value = value.split("\n")[0]
                    truth[target] = Truth(kind, value, value)
                    break
        document = path.with_name(data["document"])
        if truth and document.exists():
            yield Case("real", document, configuration, truth)


# -- scoring --------------------------------------------------------------------------------
def compact(text: str) -> str:
    """All whitespace removed, case ignored."""
    return re.sub(r"\s+", "", str(text)).lower()


# Month names of the sets' languages, to English for dateutil.
_MONTHS = {"januar": "jan", "janvier": "jan", "januari": "jan", "februar": "feb",
           "février": "feb", "fevrier": "feb", "februari": "feb", "märz": "mar", "maerz": "mar",
           "mars": "mar", "maart": "mar", "avril": "apr", "mai": "may", "juni": "jun",
           "juin": "jun", "juli": "jul", "juillet": "jul", "août": "aug", "aout": "aug",
           "augustus": "aug", "septembre": "sep", "oktober": "oct", "octobre": "oct",
           "novembre": "nov", "dezember": "dec", "décembre": "dec", "decembre": "dec"}
_WORD = re.compile(r"[^\W\d_]+")


def as_date(text: str) -> set[date]:
    """The calendar dates a printed date may mean (day and month order both tried)."""
    text = _WORD.sub(lambda m: _MONTHS.get(m.group().lower(), m.group()), str(text))
    if not re.search(r"\d", text) or len(re.sub(r"\W", "", text)) < 5:
        return set()
    found = set()
    for day_first in (True, False):
        try:
            found.add(dateparser.parse(text, dayfirst=day_first).date())
        except (ValueError, OverflowError, TypeError):
            pass
    return found


def right(got: str, truth: Truth) -> bool:
    """Whether an extracted value equals the truth under the set's scoring."""
    if not got.strip():
        return False
    if truth.kind in _OTHER_KINDS:
        return _OTHER_KINDS[truth.kind](got, truth.value)
    if truth.kind == AMOUNT:
        number, expected = parse_amount(got), _number(truth.value)
        return (number is not None and not expected.is_nan()
                and abs(number - expected) <= Decimal("0.01"))
    if compact(got) in (compact(truth.value), compact(truth.printed)):
        return True
    if truth.kind == DATE:
        expected = as_date(truth.printed) | as_date(truth.value)
        return bool(as_date(got) & expected)
    return False


def _number(value: str) -> Decimal:
    parsed = parse_amount(value) or parse_amount(value.replace(" ", ""))
    return parsed if parsed is not None else Decimal("NaN")


_NUMBERISH = re.compile(r"[-$€£]?\d[\d.,' ]*\d|\d")
_DATEISH = re.compile(r"\d{1,4}[./ -][\w.]{1,9}[./ -,]\s?\d{2,4}|\w{3,9}\.? \d{1,2},? \d{4}")


def present(text_lines: list[str], truth: Truth) -> bool:
    """Whether the truth value occurs in the words the engine sees (the ceiling)."""
    if truth.kind in _OTHER_KINDS:
        return _present_other(text_lines, truth)
    whole = compact("".join(text_lines))
    if truth.kind != AMOUNT and (compact(truth.printed) in whole or compact(truth.value) in whole):
        return True
    if truth.kind == AMOUNT:
        expected = _number(truth.value)
        if expected.is_nan():
            return False
        for line in text_lines:
            for match in _NUMBERISH.finditer(line):
                number = parse_amount(match.group())
                if number is not None and abs(number - expected) <= Decimal("0.01"):
                    return True
        return False
    if truth.kind == DATE:
        expected = as_date(truth.printed) | as_date(truth.value)
        return any(as_date(m.group()) & expected for line in text_lines
                   for m in _DATEISH.finditer(line))
    return False


# -- the other sets' scoring (their READMEs) ------------------------------------------------
_ISO = re.compile(r"^\D{0,3}(\d{4})[-./](\d{1,2})[-./](\d{1,2})\D{0,3}$")
_NUMERIC = re.compile(r"^\D{0,3}(\d{1,2})([-./])(\d{1,2})\2(\d{2}|\d{4})\D{0,3}$")
_ORDINAL = re.compile(r"\b(\d{1,2})\s*(?:st|nd|rd|th)\b(?:\s+day\s+of\b)?", re.I)


def _year(text: str) -> int:
    year = int(text)
    return year if len(text) == 4 else year + (2000 if year < 70 else 1900)


def read_date(text: str, order: str) -> set[date]:
    """The calendar dates a printed date means under a set's rule.

    ``order`` is "mdy" (US forms: a numeric date is month first) or "eu" (a date written
    with slashes either way, other numeric dates day first). ISO dates are year first;
    dates with month names are read in their usual way ("24th day of August, 1999",
    "5. März 2018", "03-Feb-20").
    """
    text = " ".join(str(text).split())
    found: set[date] = set()
    iso = _ISO.match(text)
    numeric = _NUMERIC.match(text)
    if iso:
        orders = [(int(iso[1]), int(iso[2]), int(iso[3]))]
    elif numeric:
        first, separator, second, year = numeric[1], numeric[2], numeric[3], _year(numeric[4])
        md = (year, int(first), int(second))
        dm = (year, int(second), int(first))
        orders = [md] if order == "mdy" else [dm, md] if separator == "/" else [dm]
    else:
        words = _WORD.sub(lambda m: _MONTHS.get(m.group().lower(), m.group()),
                          _ORDINAL.sub(r"\1", text))
        if not re.search(r"\d", words) or not re.search(r"[^\W\d_]{3}", words):
            return found
        try:
            # A part left out (no day, no year) would be taken from the default: two
            # defaults that disagree show it, and such a text is no calendar date.
            parsed = {dateparser.parse(words, dayfirst=order != "mdy", default=default).date()
                      for default in (datetime(2001, 1, 1), datetime(2002, 2, 2))}
        except (ValueError, OverflowError, TypeError):
            return found
        return parsed if len(parsed) == 1 else found
    for y, m, d in orders:
        try:
            found.add(date(y, m, d))
        except ValueError:
            pass
    return found


def alnum(text: str) -> str:
    """Lower case, every character that is not a letter or digit removed."""
    return "".join(c for c in str(text).lower() if c.isalnum())


def _loose_name(got: str, truth: str) -> bool:
    """adforms-dev's advertiser and zugferd-dev's seller: equal after `alnum`, or one
    contains the other and the shorter has at least 6 characters."""
    a, b = alnum(got), alnum(truth)
    shorter, longer = sorted((a, b), key=len)
    return bool(a) and (a == b or (len(shorter) >= 6 and shorter in longer))


_SUFFIXES = {"inc", "incorporated", "llc", "llp", "lp", "ltd", "limited", "corp",
             "corporation", "co", "company", "plc", "nv", "sa", "ag", "gmbh"}


def party_name(text: str) -> str:
    """contracts-dev's party: case and punctuation ignored ("&" read as "and"), company
    suffixes such as Inc, LLC, Corp and Ltd at the end ignored."""
    words = _party_words(text)
    while words and words[-1] in _SUFFIXES:
        words.pop()
    return "".join(words)


def _party_words(text: str) -> list[str]:
    return re.sub(r"[^\w\s]|_", "", str(text).lower().replace("&", " and ")).split()


def _party(got: str, truth: str) -> bool:
    """A truth party is found when one of the extracted values (one a line) equals it as
    `party_name`s, contains it or is contained in it."""
    wanted = party_name(truth)
    for value in got.split("\n"):
        name = party_name(value)
        if name and wanted and (name == wanted or name in wanted or wanted in name):
            return True
    return False


def _state(text: str) -> str:
    return re.sub(r"^state of ", "", " ".join(re.sub(r"[^\w\s]|_", " ",
                                                      str(text).lower()).split()))


def _law(got: str, truth: str) -> bool:
    """contracts-dev's jurisdiction: case, punctuation and a leading "State of" ignored."""
    return bool(_state(got)) and _state(got) == _state(truth)


_NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "a": 1, "an": 1})
_DURATION = re.compile(
    r"\b(\d+|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:one|two|three|four|"
    r"five|six|seven|eight|nine)|[a-z]+)\s*(?:\((\d+)\))?[\s-]*(?:calendar\s+|full\s+)?"
    r"(day|week|month|year)s?\b", re.I)


def durations(text: str) -> list[tuple[str, int]]:
    """Every duration written in a text, as ("months", n) or ("days", n): "two (2) years"
    is ("months", 24), "18 months" ("months", 18), "90 days" ("days", 90)."""
    found = []
    for m in _DURATION.finditer(str(text)):
        word, digits, unit = m[1].lower(), m[2], m[3].lower()
        if digits:
            n = int(digits)
        elif word.isdigit():
            n = int(word)
        elif "-" in word:
            tens, ones = word.split("-")
            n = _NUMBER_WORDS[tens] + _NUMBER_WORDS[ones]
        elif word in _NUMBER_WORDS:
            n = _NUMBER_WORDS[word]
        else:
            continue
        found.append(("months", n * 12) if unit == "year" else ("months", n)
                     if unit == "month" else ("days", n * 7) if unit == "week"
                     else ("days", n))
    return found


def _term(got: str, truth: str) -> bool:
    """contracts-dev's term: the same duration ("2 years" equals "24 months"); the
    extracted text is read as the first duration it writes."""
    read, wanted = durations(got), durations(truth)
    return bool(read) and bool(wanted) and read[0] == wanted[0]


_OTHER_KINDS = {
    US_DATE: lambda got, truth: bool(read_date(got, "mdy") & read_date(truth, "mdy")),
    EU_DATE: lambda got, truth: bool(read_date(got, "eu") & read_date(truth, "eu")),
    LOOSE_NAME: _loose_name, PARTY: _party, LAW: _law, TERM: _term,
}

_MONTH = (r"(?:jan|feb|febr|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|"
          + "|".join(_MONTHS))
_DATE_TEXT = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\.?\s*(?:day\s+of\s+)?(?:{_MONTH})[\s,.-]*\d{{2,4}}\b"
    rf"|\b(?:{_MONTH})\s*\d{{1,2}}(?:st|nd|rd|th)?,?\s*\d{{4}}\b", re.I)


def _present_other(text_lines: list[str], truth: Truth) -> bool:
    """The ceiling under the other sets' kinds: the truth read in the words as the
    set's rule would read an extracted value there."""
    text = " ".join(text_lines)
    if truth.kind in (US_DATE, EU_DATE):
        order = "mdy" if truth.kind == US_DATE else "eu"
        expected = read_date(truth.value, order)
        return any(read_date(m.group(), order) & expected for m in _DATE_TEXT.finditer(text))
    if truth.kind == LOOSE_NAME:
        name = alnum(truth.value)
        return name in alnum(text) or any(
            len(alnum(line)) >= 6 and alnum(line) in name for line in text_lines)
    if truth.kind == PARTY:
        party = party_name(truth.value)
        return bool(party) and party in "".join(_party_words(text))
    if truth.kind == LAW:
        return f" {_state(truth.value)} " in f" {_state(text)} "
    if truth.kind == TERM:
        wanted = durations(truth.value)
        return bool(wanted) and wanted[0] in durations(text)
    return False


# -- reading documents ----------------------------------------------------------------------
def cache_key(data: bytes, reader: str) -> str:
    return hashlib.sha256(data).hexdigest()[:24] + "-" + reader


def load(path: Path, content_type: str, cache: Path | None, reader: str) -> Any:
    """The engine's Document of a file (words of every page), cached by content and reader."""
    return load_bytes(path.read_bytes(), content_type, cache, reader)


def load_bytes(data: bytes, content_type: str, cache: Path | None, reader: str = "") -> Any:
    """The engine's Document of some bytes, cached by content and reader."""
    from servicetools.service.engine import load_document

    reader = reader or reader_version()
    if cache is not None:
        stored = cache / f"{cache_key(data, reader)}.pickle"
        if stored.exists():
            return pickle.loads(stored.read_bytes())
    document = load_document(data, content_type)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        stored.write_bytes(pickle.dumps(document))
    return document


@dataclass
class Outcome:
    """One truth value against what the engine gave for it."""

    set: str
    document: str
    target: str
    kind: str
    truth: str
    got: str
    confidence: float
    right: bool
    present: bool
    raw: float = 0.0  # before calibration
    engine_kind: str = ""  # the kind whose calibration map applies
    evidence: dict[str, float] = field(default_factory=dict)  # how it was found
    half: str = ""  # "tuning" or "check" (../shared/data's rule)
    key: str = ""  # the distinct document the file shows (Case.key), where a set has one


@dataclass
class SetScore:
    outcomes: list[Outcome] = field(default_factory=list)
    pages: int = 0
    documents: int = 0


def reader_version() -> str:
    """A digest of the engine's reading code: cached words are stale when it changes."""
    from servicetools.service import engine

    folder = Path(engine.__file__).parent
    digest = hashlib.sha256()
    # The cache pickles the page model's objects: a change to their classes stales it too.
    for name in ("page_model.py", "pages.py", "ocr.py"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:12]


def run_case(case: Case, configuration: dict[str, Any], cache: Path | None = None,
             reader: str = "") -> tuple[list[Outcome], int]:
    """The engine over one case, exactly as the service's pipeline calls it."""
    from servicetools.service.engine import extract_group, group_targets
    from servicetools.service.engine.lines import document_text

    document = load(case.path, case.content_type, cache, reader or reader_version())
    text_lines = document_text(document).split("\n")
    from servicetools.service.engine.fields import field_kind

    by_name: dict[str, tuple[str, float, float, str, dict[str, float]]] = {}
    specs = {t["id"]: t for t in configuration["extraction_targets"]}
    for group in group_targets(configuration):
        for extracted in extract_group(document, group, configuration):
            if extracted.type == "field":
                spec = specs[extracted.target_id]
                first = extracted.values[0] if extracted.values else None
                raw = first.raw if first is not None and first.raw is not None else (
                    first.confidence if first else 0.0)
                # A target of several values gives them all, one a line.
                text = ("\n".join(v.text for v in extracted.values) if spec.get("is_multiple")
                        else first.text if first else "")
                by_name[spec.get("name") or spec["id"]] = (
                    text, first.confidence if first else 0.0, raw,
                    # How the engine read it, as it told the calibration.
                    f"{field_kind(spec)}:"
                    f"{'ocr' if first and first.evidence.get('ocr') else 'text'}",
                    dict(first.evidence) if first else {})
    outcomes = []
    for target, truth in case.truth.items():
        got, confidence, raw, kind, evidence = by_name.get(target, ("", 0.0, 0.0, "", {}))
        # A truth of several values counts each: found or not among all the values given.
        for one in ([Truth(truth.kind, v, v) for v in truth.value.split("\n")]
                    if truth.kind in SEVERAL else [truth]):
            outcomes.append(Outcome(case.set, case.name, target, one.kind, one.value, got,
                                    float(confidence), right(got, one),
                                    present(text_lines, one), float(raw), kind, evidence,
                                    case.half, case.key or case.name))
    return outcomes, len(document.pages)


# -- figures --------------------------------------------------------------------------------
def ece(pairs: list[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error: |accuracy - mean confidence| per bin, weighted by size."""
    if not pairs:
        return 0.0
    total = 0.0
    for b in range(bins):
        inside = [(c, r) for c, r in pairs
                  if (b / bins <= c < (b + 1) / bins) or (b == bins - 1 and c >= 1.0)]
        if inside:
            accuracy = sum(r for _, r in inside) / len(inside)
            confidence = sum(c for c, _ in inside) / len(inside)
            total += len(inside) * abs(accuracy - confidence)
    return total / len(pairs)


def ece_floor(confidences: list[float], runs: int = 200, seed: int = 0) -> float:
    """The ECE a perfectly calibrated engine would still show on this many values: the
    mean ECE when each value is right with exactly its stated confidence. On a hundred
    values the bins hold few values each, and sampling alone gives several hundredths."""
    import random

    draw = random.Random(seed)
    return sum(ece([(c, draw.random() < c) for c in confidences])
               for _ in range(runs)) / runs if confidences else 0.0


def brier(pairs: list[tuple[float, bool]]) -> float:
    return sum((c - r) ** 2 for c, r in pairs) / len(pairs) if pairs else 0.0


def figures(outcomes: list[Outcome]) -> dict[str, float]:
    """accuracy, fill, ceiling, ECE and Brier of some outcomes."""
    n = len(outcomes)
    pairs = [(o.confidence, o.right) for o in outcomes]
    return {
        "n": n,
        "accuracy": sum(o.right for o in outcomes) / n if n else 0.0,
        "fill": sum(bool(o.got.strip()) for o in outcomes) / n if n else 0.0,
        "ceiling": sum(o.present for o in outcomes) / n if n else 0.0,
        "ece": ece(pairs),
        "brier": brier(pairs),
    }


def table(title: str, outcomes: list[Outcome]) -> str:
    """Per target and overall: n, accuracy, fill, ceiling, ECE, Brier, misses by cause."""
    rows = [f"{title}",
            f"  {'field':<16}{'n':>5}{'accuracy':>10}{'fill':>8}{'ceiling':>9}{'ECE':>8}"
            f"{'Brier':>8}{'choose':>8}{'read':>6}"]
    targets = sorted({o.target for o in outcomes}, key=lambda t: [o.target for o in
                                                                   outcomes].index(t))
    for name in [*targets, "overall"]:
        some = outcomes if name == "overall" else [o for o in outcomes if o.target == name]
        f = figures(some)
        choose = sum(not o.right and o.present for o in some)
        read = sum(not o.right and not o.present for o in some)
        rows.append(f"  {name:<16}{f['n']:>5}{f['accuracy']:>10.1%}{f['fill']:>8.1%}"
                    f"{f['ceiling']:>9.1%}{f['ece']:>8.3f}{f['brier']:>8.3f}{choose:>8}{read:>6}")
    return "\n".join(rows)


def reliability(outcomes: list[Outcome], bins: int = 10) -> str:
    """Count, mean confidence and accuracy per confidence bin."""
    rows = [f"  {'confidence':<12}{'n':>5}{'mean conf':>11}{'accuracy':>10}"]
    for b in range(bins):
        inside = [o for o in outcomes if (b / bins <= o.confidence < (b + 1) / bins)
                  or (b == bins - 1 and o.confidence >= 1.0)]
        if inside:
            mean = sum(o.confidence for o in inside) / len(inside)
            accuracy = sum(o.right for o in inside) / len(inside)
            rows.append(f"  {b / bins:.1f}-{(b + 1) / bins:.1f}    {len(inside):>5}"
                        f"{mean:>11.3f}{accuracy:>10.1%}")
    return "\n".join(rows)


# -- calibration ----------------------------------------------------------------------------
MIN_PER_KIND = 30


def _platt(raws: list[float], rights: list[float]) -> tuple[list[float], list[float]]:
    """A logistic curve over the raw score's log-odds, sampled as knots."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    def logit(values: Any) -> Any:
        clipped = np.clip(np.asarray(values, dtype=float), 1e-3, 1 - 1e-3)
        return np.log(clipped / (1 - clipped)).reshape(-1, 1)

    model = LogisticRegression(C=1.0)
    model.fit(logit(raws), np.asarray(rights) > 0.5)
    xs = np.linspace(0.0, 1.0, 41)
    return [round(float(x), 4) for x in xs], [round(float(y), 4) for y in
                                                model.predict_proba(logit(xs))[:, 1]]


def fit_map(outcomes: list[Outcome], method: str = "isotonic") -> dict[str, Any]:
    """Maps from raw score to P(right), one per kind (small kinds pooled as "all").

    ``isotonic``: a monotone step map (sklearn's IsotonicRegression); ``platt``: a
    logistic curve over the raw score's log-odds, smoother on small samples.
    """
    from sklearn.isotonic import IsotonicRegression

    found = [o for o in outcomes if o.got.strip()]
    by_kind: dict[str, list[Outcome]] = {}
    for o in found:
        by_kind.setdefault(o.engine_kind, []).append(o)  # "date:ocr"
        by_kind.setdefault(o.engine_kind.split(":")[0], []).append(o)  # "date"
    kinds: dict[str, dict[str, list[float]]] = {}
    for kind, some in [("all", found), *by_kind.items()]:
        if len(some) < MIN_PER_KIND:
            continue
        raws, rights = [o.raw for o in some], [float(o.right) for o in some]
        if method == "platt" and 0 < sum(rights) < len(rights):
            xs, ys = _platt(raws, rights)
            kinds[kind] = {"x": xs, "y": ys}
            continue
        model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip", increasing=True)
        model.fit(raws, rights)
        kinds[kind] = {"x": [round(float(x), 4) for x in model.X_thresholds_],
                       "y": [round(float(y), 4) for y in model.y_thresholds_]}
    counts = {kind: len(some) for kind, some in sorted(by_kind.items()) if ":" in kind}
    table: dict[str, Any] = {"kinds": kinds, "method": method,
                             "fitted_on": {"values": len(found), "by_kind": counts}}
    if method == "logistic" and found:
        table["logistic"] = _logistic(found)
    return table


_C = 0.1


def _logistic(found: list[Outcome]) -> dict[str, Any]:
    """A logistic model of P(right) over the raw score's log-odds and the evidence."""
    from servicetools.service.engine.calibration import features

    return logistic_model([features(o.raw, o.evidence) for o in found], [o.right for o in found])


def logistic_model(rows: list[dict[str, float]], rights: list[bool]) -> dict[str, Any]:
    """{"intercept", "coef": {feature: weight}} of a logistic model of P(right), as the
    engine's calibration reads it (fields and table cells alike)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = DictVectorizer(sparse=False)
    x = vectorizer.fit_transform(rows)
    # Strong regularisation: a few hundred values and some thirty features. C was chosen
    # by the 5-fold Brier score of the fields over 0.01-3 (0.1 and 0.03 were best, within
    # 0.001); the cells use the same.
    model = LogisticRegression(C=_C, max_iter=3000)
    model.fit(x, rights)
    names = vectorizer.get_feature_names_out()
    return {"intercept": round(float(model.intercept_[0]), 5),
            "coef": {str(n): round(float(c), 5) for n, c in zip(names, model.coef_[0],
                                                                strict=True)}}


def fold_of(document: str, folds: int) -> int:
    """A document's fold, the same in every run (all values of a document share a fold)."""
    return int(hashlib.sha256(document.encode()).hexdigest(), 16) % folds


def cross_validated(outcomes: list[Outcome], folds: int = 5, method: str = "isotonic",
                    fit_on: set[str] | None = None) -> list[Outcome]:
    """Outcomes whose confidence comes from a map fitted without their own documents.

    `fit_on` names the sets the maps are fitted on (all when None); the others are
    only scored, as a set the shipped map never saw.
    """
    from dataclasses import replace

    from servicetools.service.engine.calibration import calibrated

    held = []
    for fold in range(folds):
        train = [o for o in outcomes if fold_of(o.set + o.document, folds) != fold
                 and (fit_on is None or o.set in fit_on)]
        table = fit_map(train, method)
        for o in outcomes:
            if fold_of(o.set + o.document, folds) == fold:
                confidence = calibrated(o.engine_kind, o.raw, table, o.evidence or None
                                        ) if o.got.strip() else o.confidence
                held.append(replace(o, confidence=confidence))
    return held


def rescored(outcomes: list[Outcome], table: dict[str, Any]) -> list[Outcome]:
    """The outcomes with the confidence `table` gives them, as the engine would."""
    from dataclasses import replace

    from servicetools.service.engine.calibration import calibrated

    return [replace(o, confidence=calibrated(o.engine_kind, o.raw, table, o.evidence or None))
            if o.got.strip() else o for o in outcomes]


def held_out_calibration(outcomes: list[Outcome], table: dict[str, Any],
                         method: str = "logistic") -> str:
    """Per set: the check half under `table` (fitted on tuning halves), and
    leave-one-set-out (a map fitted on every other set, both halves, scoring this one):
    ECE, and how often values given 0.9 or more are right."""
    def figures_of(some: list[Outcome], width: int) -> str:
        pairs = [(o.confidence, o.right) for o in some]
        high = [right for confidence, right in pairs if confidence >= 0.9]
        share = f"{100 * sum(high) / len(high):.0f}% of {len(high)}" if high else "none"
        return f"{ece(pairs):>{width}.3f}{share:>13}{len(pairs):>6}"

    lines = [f"  {'set':<14}{'check half: ECE':>17}{'>=0.9 right':>13}{'n':>6}"
             f"{'leave-one-set-out: ECE':>25}{'>=0.9 right':>13}{'n':>6}"]
    for name in dict.fromkeys(o.set for o in outcomes):
        if name == SAMPLE:
            continue
        check = rescored([o for o in outcomes if o.set == name and o.half == "check"], table)
        others = fit_map([o for o in outcomes if o.set != name], method)
        left_out = rescored([o for o in outcomes if o.set == name], others)
        lines.append(f"  {name:<14}{figures_of(check, 17)}{figures_of(left_out, 25)}")
    return "\n".join(lines)


def collect(sets: list[str], root: Path = SHARED, cache: Path | None = None,
            progress: bool = True, extra: list[Case] | None = None) -> list[Outcome]:
    """Outcomes of every case of the sets (and of `extra` cases), with the bundled
    configurations and the bench's own (`configurations`)."""
    from tqdm import tqdm

    known = configurations()
    reader = reader_version()
    every: list[Case] = []
    for name in sets:
        if name != SAMPLE and not (root / name).exists():
            print(f"skipping {name}: {root / name} not found", file=sys.stderr)
            continue
        every += cases(name, root)
    every += extra or []
    outcomes: list[Outcome] = []
    for case in tqdm(every, desc="engine over the sets", file=sys.stderr, disable=not progress):
        some, _ = run_case(case, known[case.configuration], cache, reader)
        outcomes += some
    return outcomes


def configurations() -> dict[str, dict[str, Any]]:
    """The configurations cases name, by file stem: the bundled ones and the bench's own
    (bench/configurations/*.json, for the other sets)."""
    from servicetools import bundled

    found: dict[str, dict[str, Any]] = {}
    for path in [*sorted(bundled.CONFIGURATIONS.glob("*.json")),
                 *sorted(CONFIGURATIONS.glob("*.json"))]:
        if path.stem in found:
            raise ValueError(f"{path}: a configuration named {path.stem!r} is already known")
        found[path.stem] = json.loads(path.read_text())
    return found


def _share(outcomes: list[Outcome], what: str = "right") -> str:
    """The share of outcomes whose `what` ("right", "present") holds."""
    if not outcomes:
        return "-"
    return f"{sum(bool(getattr(o, what)) for o in outcomes) / len(outcomes):.1%}"


def halves_table(outcomes: list[Outcome]) -> str:
    """Per set and target: accuracy on the tuning half and on the check half (with their
    numbers of values), fill and ceiling over both; where a set draws one document in
    several files, also the accuracy per distinct document (each weighs once)."""
    rows = [f"{'set / target':<32}{'n tun':>6}{'acc tun':>9}{'n chk':>6}{'acc chk':>9}"
            f"{'fill':>8}{'ceiling':>9}{'acc/doc':>9}"]
    for name in dict.fromkeys(o.set for o in outcomes):
        of_set = [o for o in outcomes if o.set == name]
        targets = list(dict.fromkeys(o.target for o in of_set))
        for target in [*targets, "all"]:
            some = of_set if target == "all" else [o for o in of_set if o.target == target]
            tuning = [o for o in some if o.half == "tuning"]
            check = [o for o in some if o.half == "check"]
            by_key: dict[str, list[Outcome]] = {}
            for o in some:
                by_key.setdefault(o.key, []).append(o)
            per_doc = "-"
            if len(by_key) < len({o.document for o in some}):
                mean = sum(sum(o.right for o in k) / len(k) for k in by_key.values())
                per_doc = f"{mean / len(by_key):.1%}"
            fill = f"{sum(bool(o.got.strip()) for o in some) / len(some):.1%}"
            rows.append(f"{name + ' / ' + target:<32}{len(tuning):>6}{_share(tuning):>9}"
                        f"{len(check):>6}{_share(check):>9}{fill:>8}"
                        f"{_share(some, 'present'):>9}{per_doc:>9}")
    return "\n".join(rows)

