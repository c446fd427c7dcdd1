"""Field values: found right of or below their labels, else by what stands unlabelled.

Labels are the target's `name`, the labels its `description` names, and what those are
called in other languages (vocabulary.py). They are compared with the words of a line
ignoring case, spaces and punctuation (OCR often drops spaces), fuzzily for longer
labels. Labels of all field targets compete for the words of a line and the most
specific wins, so "Due Date" is not also read as "Date" and "Subtotal" is not read as
"Total". A date or amount target only takes a value of its shape.

Between amounts labelled alike, the words around the label qualify them ("Total Excl.
GST" is a lesser total than "Total Incl. GST") and a rounding adjustment gives the
amount paid (amounts.py); where subtotal, tax and total are all configured, subtotal +
tax = total decides.

Without a label: the issuer and its address at the top (names.py), a letter's or a
title's date and number (titles.py), and a value of the example's shape.

The raw score multiplies what speaks for a value: how well the label matched, where
the value sat, whether it has the example's shape and passes validation, what OCR
thought of its words, and how many rival values there were. The confidence given out
is that score calibrated by how the value was found (calibration.py).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process

from ...wire.values import parse_amount
from .amounts import ROUNDED, after_rounding, qualified, rounded
from .calibration import UNGROUNDED_CEILING, calibrated, grounded
from .currency import LOCALES as _LOCALES
from .currency import currency_code, printed_currency
from .lines import Line
from .lookalikes import digits_read_as_letters, lookalike_ratio
from .names import (
    address_below,
    addressee_block,
    footer_name,
    issuer_name,
    line_phrases,
    only_legal_form,
    recipient_name,
    street_line,
    title_words_only,
)
from .page_model import Word
from .results import NOT_FOUND_CONFIDENCE, EngineValue
from .roles import (
    ADDRESS,
    CURRENCY,
    CUSTOMER,
    DOCUMENT_NUMBER,
    ISSUE_DATE,
    ISSUER,
    SUBTOTAL,
    TAX,
    TOTAL,
    field_words_only,
    other_field_labels,
    recipient_address_labels,
    understand,
)
from .sentences import PARTIES, stated_values
from .shapes import AMOUNT, DATE, Shape, validates
from .titles import TITLED, letter_date, title_date, title_noun, title_number
from .vocabulary import block_headings, described_aliases, translations

_LABEL_CHARS = re.compile(r"[^0-9a-zäöüßéèêàâçôûîïëœáíóúñìòù°º#]+")
_RATE = re.compile(r"\(?\d+(?:[.,]\d+)?\s?%\)?:?")
# Short labels ("Tax", "Due", "VAT") fuzzily match too many ordinary words.
_EXACT_BELOW = 5
_FUZZY_THRESHOLD = 0.9
# Below this plain similarity even look-alike characters cannot make a label of a phrase
# (two of five letters misread, "1olal" for "Total", is 0.6).
_LOOKALIKE_FLOOR = 0.6
_MAX_CONFIDENCE = 0.97
# Kinds whose values have a shape that decides: a label's neighbour of another shape is
# not its value.
_STRICT = frozenset({"date", "amount", "percent"})
# Words a form's label uses to say what its box holds: "name, address, and ZIP code".
_FIELD_WORDS = frozenset({"name", "address", "number", "date", "code", "zip", "postcode", "id"})
_BOX_MARK = re.compile(r"[a-z]|\d{1,2}")  # a form's box: "c", "12"
# A currency named in parentheses after a label: "(DEM)", "(EUR)", "(€)".
_CURRENCY_NOTE = re.compile(r"\((?:[A-Z]{3}|[$€£¥])\):?$")
# Three or more words, all in lower case: a phrase of prose, not a company's name.
# "Name" after a label completes it, in the languages of the vocabulary.
_NAME_WORD = re.compile(r"(?i)(?:name[n]?|nom|naam|nombre|nome)\s*:?")
_PROSE = re.compile(r"[a-zäöüéèàç'-]+(?:\s+[a-zäöüéèàç'-]+){2,}")
# A clause of running text: "and Agency, jointly and severally, ...", "references to
# Agency apply to Advertiser". A name opens with a capital or a particle ("van", "de").
_CLAUSE = re.compile(r"(?!(?:de|da|di|du|la|le|van|von|der|den|ter|al|el)\b)[a-z]{2,}\b"
                     r"(?:\W+\w+){3,}")
_SHAPE_ONLY = 0.4
_AMOUNT_SHAPE = Shape("amount", AMOUNT)
_SHAPE_INVALID = 0.6
_BELOW = 0.9
_BELOW_BARE = 0.7
# How far below its label a value may stand, in heights of the label or of the value's
# line, whichever is larger.
_BELOW_REACH = 1.5
_BELOW_REACH_SHAPED = 3.0
# Gaps in units of the line's mean character width.
_MAX_LABEL_GAP = 50.0
_MAX_AMOUNT_GAP = 90.0
_MAX_WORD_GAP = 3.0
_PHRASE_GAP = 1.5
# A label that ends a longer phrase ("Alt Order #:", "Customer PO #:") is more often that
# longer label's: its value counts less than one under the label itself.
_INSIDE = 0.8
# A label of the role that names what the target's description rules out.
_AVOIDED = 0.5


@dataclass(frozen=True)
class Label:
    target_id: str
    key: str
    line: int
    start: int
    end: int
    score: float
    translated: bool = False  # a label from the vocabulary, not the configuration
    inside: bool = False  # words before it in the same phrase ("Alt Order #:")
    # A party's label of the target's role, not of its words (_worded_aliases).
    by_role: bool = False


@dataclass
class Candidate:
    target_id: str
    text: str
    words: list[Word]
    line: int
    label_score: float
    placement: float
    specificity: int
    shape_fit: bool
    valid: bool | None
    translated: bool = False
    label_line: int = -1
    label_key: str = ""
    by_role: bool = False
    goes_on: bool = False  # its label runs on into a longer one before the colon
    run_on: bool = False  # words alone, going on the label's own phrase (`_runs_on`)
    avoided: bool = False  # under a label naming what the target's words say it is not
    other_words: bool = False  # under the role's label qualified by words neither knows

    @property
    def quality(self) -> float:
        shape = 1.0 if self.shape_fit else 0.75
        valid = {True: 1.0, None: 0.9, False: 0.45}[self.valid]
        return self.label_score * self.placement * shape * valid

    @property
    def ocr(self) -> float:
        return statistics.fmean(word.confidence for word in self.words)

    @property
    def order(self) -> tuple[int, float]:
        return (self.line, self.words[0].x0)


# Cached: every word and phrase of every line is keyed once per target group, and the
# same texts ("Total", "Date:") recur on every page.
@lru_cache(maxsize=1 << 16)
def label_key(text: str) -> str:
    """Case, spaces and punctuation dropped: "Invoice No:" -> "invoiceno"."""
    return _LABEL_CHARS.sub("", text.lower())


def own_aliases(target: dict[str, Any]) -> list[str]:
    """The target's name and the labels its description names (no translations)."""
    return [str(target.get("name") or ""), *described_aliases(str(target.get("description") or ""))]


def label_aliases(target: dict[str, Any]) -> list[str]:
    """The target's name, the labels its description names, their translations, and the
    printed labels of the target's role (roles.py): "Issuer" finds "Vendor:" and
    "Lieferant:".

    Without duplicates; the configuration's own phrases first.
    """
    return list(_aliases_by_key(target, _worded_aliases(target)).values())


def _aliases_by_key(target: dict[str, Any], worded: dict[str, str]) -> dict[str, str]:
    """`worded` (the target's own labels by key) and its role's printed labels."""
    aliases = dict(worded)
    for printed in understand(target).labels:
        aliases.setdefault(label_key(printed), printed)
    return aliases


def _worded_aliases(target: dict[str, Any]) -> dict[str, str]:
    """The labels of the user's own words, by key: the name, the description's labels,
    the other ways a number's label is printed, and their translations. Not the labels
    of the broader role the engine read from those words ("Advertiser" is a customer,
    but "Buyer" does not translate it)."""
    phrases = own_aliases(target)
    aliases: dict[str, str] = {}
    for phrase in phrases:
        key = label_key(phrase)
        if key and key not in aliases:
            aliases[key] = phrase
    for key in list(aliases):
        for printed in translations(key):
            aliases.setdefault(label_key(printed), printed)
    # The name and the label phrases the description's prose names, with the other ways
    # a number's label is printed and their translations.
    for phrase in (*phrases[:1], *understand(target).described):
        for printed in (phrase, *_number_siblings(phrase), *_name_siblings(phrase),
                        *translations(label_key(phrase))):
            aliases.setdefault(label_key(printed), printed)
    return aliases


# The ways one number's label is printed: "Contract Number", "Contract No.", "Contract #",
# "Contract Nr", "Contract ID", and "Contract" alone before its number.
_NUMBER_SUFFIX = re.compile(r"^(.*?\w)\s*(?:number|no\.?|#|nr\.?|id|num\.?)$", re.IGNORECASE)


# "Employee Name" is printed "Employee: Jane Doe", as "Patient", "Tenant" or "Company"
# before theirs; "First Name" is no "First".
_NAME_SUFFIX = re.compile(r"^(.*?\w)\s+name$", re.IGNORECASE)
_NAME_QUALIFIERS = frozenset({"first", "last", "full", "given", "family", "middle", "legal",
                              "trade", "trading", "display", "short", "sur", "nick", "user"})


def _name_siblings(phrase: str) -> list[str]:
    found = _NAME_SUFFIX.match(phrase.strip())
    if not found or found.group(1).split()[-1].lower() in _NAME_QUALIFIERS:
        return []
    stem = found.group(1)
    return [] if label_key(stem) in _TITLES else [stem]


def _avoided_keys(target: dict[str, Any]) -> frozenset[str]:
    return frozenset(label_key(label) for label in understand(target).avoided)


def _number_siblings(phrase: str) -> list[str]:
    found = _NUMBER_SUFFIX.match(phrase.strip())
    if not found:
        return []
    stem = found.group(1)
    siblings = [f"{stem} {suffix}" for suffix in ("Number", "No", "No.", "#", "Nr", "ID")]
    # A title ("Invoice", "Receipt") labels nothing by itself.
    return siblings if label_key(stem) in _TITLES else [stem, *siblings]


# A word the text layer glued from two: the first ends in a capital, digit or sign, the
# second is a capitalised word ("KECI+KCFWAdvertiser"); never "McDonald" or "PayPal".
_GLUED = re.compile(r"^(.*[A-Z0-9+)\]/.,:;-])([A-Z][a-z][^A-Z]*)$")
# The shortest label key read at the end of such a word: no "No", "Date" or "Total".
_GLUED_KEY = 6
# The target id of labels of fields no target asks for (roles.other_field_labels).
_OTHER_FIELD = "\0other field"
# How near a phrase comes to such a label to take its words: one letter more or less
# ("Account Executives"), not a fuzzy neighbour ("Customer Name" near "Customer No").
_OTHER_FIELD_SCORE = 0.95


def find_labels(lines: list[Line], targets: list[dict[str, Any]]) -> list[Label]:
    """Label matches of all targets; on each line overlapping matches keep the most specific."""
    worded_of = [(t, _worded_aliases(t)) for t in targets]
    worded = {(str(t.get("id", "")), key) for t, keys in worded_of for key in keys}
    aliases = [
        (str(t.get("id", "")), label_key(alias), len(alias.split()))
        for t, keys in worded_of
        for alias in _aliases_by_key(t, keys).values()
    ]
    if not aliases:
        return []
    # Labels of fields no target asks for ("Account Executive", "Tax ID"): found like the
    # targets' own, they take their words from a target's shorter label inside them.
    asked = {key for _, key, _ in aliases}
    others = list(other_field_labels())
    # The address the document is delivered or billed to is the customer's: without a
    # target asking for it, "Delivery Address: 186 South St" is no label of the shop's.
    if not any((u := understand(t)).role == ADDRESS and u.owner == CUSTOMER for t in targets):
        others += recipient_address_labels()
    aliases += [(_OTHER_FIELD, key, len(phrase.split())) for phrase in others
                if (key := label_key(phrase)) not in asked]
    own = {(str(t.get("id", "")), label_key(p)) for t in targets for p in own_aliases(t)}
    # A party's name under a label of its role alone ("Buyer" for an "Advertiser": on an
    # ad order the agency's buyer) is less sure than under the user's own words.
    parties = {str(t.get("id", "")) for t in targets if understand(t).role in (ISSUER, CUSTOMER)}
    longest = max(len(key) for _, key, _ in aliases)
    widest = max(size for _, _, size in aliases)
    # Aliases by the length of their key: a phrase is compared only with keys it can match
    # (itself, or within a quarter of the key's length: see _label_score), not with all.
    by_length: dict[int, list[tuple[int, str, str, int]]] = {}
    # And by the key itself, for a label read at the end of a glued word.
    exact: dict[str, list[tuple[int, str, str, int]]] = {}
    for order, (target_id, key, size) in enumerate(aliases):
        by_length.setdefault(len(key), []).append((order, target_id, key, size))
        if len(key) >= _GLUED_KEY:
            exact.setdefault(key, []).append((order, target_id, key, size))
    reach: dict[int, tuple[list[tuple[int, str, str, int]], list[str]]] = {}

    def within(length: int) -> tuple[list[tuple[int, str, str, int]], list[str]]:
        """The aliases a phrase of this length can match, and their keys."""
        if length not in reach:
            near = [alias for size in range(math.ceil(length / 1.25), int(length / 0.75) + 1)
                    for alias in by_length.get(size, ())]
            reach[length] = (near, [key for _, _, key, _ in near])
        return reach[length]

    labels: list[Label] = []
    for index, line in enumerate(lines):
        # "TotalAmount(DEM)", "Total (EUR)": the currency does not change the label.
        keys = [label_key(_CURRENCY_NOTE.sub("", word.text)) for word in line.words]
        starts = _phrase_starts(line)
        read = any(word.confidence < 1.0 for word in line.words)  # text-layer words are 1.0
        found: list[tuple[Label, int]] = []
        for start in range(len(keys)):
            if not keys[start]:
                continue
            phrase = ""
            # One word more or less than the alias: OCR merges and splits words.
            for end in range(start + 1, min(len(keys), start + widest + 1) + 1):
                if end - 1 > start and end - 1 in starts:
                    break  # a label does not reach across a column gap
                phrase += keys[end - 1]
                if len(phrase) > 1.25 * longest + 1:
                    break  # longer windows only drift further from every label
                if not (start in starts or line.words[end - 1].text[-1] in ":#"):
                    continue  # inside running text
                near, keys_near = within(len(phrase))
                # rapidfuzz compares the phrase with every key in one call; only keys
                # near enough to score come back to be weighed here.
                floor = _LOOKALIKE_FLOOR if read else _FUZZY_THRESHOLD
                for _, _, at in process.extract(phrase, keys_near, scorer=fuzz.ratio,
                                                score_cutoff=100 * floor - 1e-6, limit=None):
                    order, target_id, key, size = near[at]
                    if end - start > size + 1 or len(phrase) > 1.25 * len(key) + 1:
                        continue
                    # "INVOICE: INV-100": with a colon even a title labels a value.
                    colon = line.words[end - 1].text.endswith(":")
                    score = _label_score(key, phrase, titles=not colon, read=read)
                    if target_id == _OTHER_FIELD and score < _OTHER_FIELD_SCORE:
                        continue  # another field's label as printed, or in the plural
                    if score:
                        translated = (target_id, key) not in own
                        found.append((Label(target_id, key, index, start, end, score,
                                            translated, start not in starts,
                                            target_id in parties
                                            and (target_id, key) not in worded), order))
        for at, word in enumerate(line.words):
            # "KECI+KCFWAdvertiser": the text layer glued a label to the word before it
            # (a code or a name's capitals, not a word that qualifies the label).
            glued = _GLUED.match(word.text)
            tail = exact.get(label_key(glued.group(2)), []) if glued else []
            for order, target_id, key, _ in tail:
                if target_id != _OTHER_FIELD:
                    found.append((Label(target_id, key, index, at, at + 1, 1.0,
                                        (target_id, key) not in own, False,
                                        target_id in parties
                                        and (target_id, key) not in worded), order))
        found.sort(key=lambda h: (-round(h[0].score, 1), -len(h[0].key), -h[0].score,
                                  h[0].start, h[1]))
        taken: set[int] = set()
        kept: set[tuple[int, int, str]] = set()
        for label, _ in found:
            span = set(range(label.start, label.end))
            # One printed label may serve several targets ("Flight Dates" for the start
            # and the end of a flight): the same words under the same label key.
            if not span & taken or (label.start, label.end, label.key) in kept:
                taken |= span
                kept.add((label.start, label.end, label.key))
                if label.target_id != _OTHER_FIELD:
                    labels.append(label)
    return labels


def _phrase_starts(line: Line) -> set[int]:
    """Words that open a phrase: a label inside running text ("Acme Supplier Ltd") is none."""
    char = _char_width(line)
    starts = {
        i
        for i, word in enumerate(line.words)
        if i == 0 or word.x0 - line.words[i - 1].x1 > _PHRASE_GAP * char
        # "Rechnungsnummer / Datum": two labels over "94165608 / 30.08.2018".
        or (i >= 2 and line.words[i - 1].text == "/")
        # "zzgl. 19% MwSt.", "plus 20 % VAT": the tax's label after the rate opening the
        # line (not a table row's "10,00 19 % UST (S) -1,00").
        or (1 <= i <= 3 and line.words[i - 1].text.endswith("%"))
    }
    # A form's box letter or number before its label ("c  Employer's name", "2  Federal
    # income tax withheld"): the label opens its phrase all the same.
    return starts | {i + 1 for i in starts if i + 1 < len(line.words)
                     and _BOX_MARK.fullmatch(line.words[i].text)
                     and line.words[i + 1].text[:1].isupper()}


def _label_score(key: str, phrase: str, titles: bool = True, read: bool = False) -> float:
    """1.0 for the label itself, else how close (at least _FUZZY_THRESHOLD) or 0; `read`
    says the phrase was OCR'd, where look-alike characters ("lotal") count as near."""
    if phrase == key:
        return 1.0
    if titles and phrase in _TITLES:
        return 0.0  # the title "INVOICE" is close to "Invoice #" but labels nothing
    if len(key) < _EXACT_BELOW or abs(len(key) - len(phrase)) > 0.25 * len(key):
        return 0.0
    score = fuzz.ratio(key, phrase) / 100
    if read and _LOOKALIKE_FLOOR <= score < _FUZZY_THRESHOLD:
        score = lookalike_ratio(key, phrase)
    return score if score >= _FUZZY_THRESHOLD else 0.0


def extract_fields(
    lines: list[Line],
    targets: list[dict[str, Any]],
    all_fields: list[dict[str, Any]],
    table_headers: frozenset[int] = frozenset(),
    at_top: bool = False,
) -> dict[str, list[EngineValue]]:
    """Values of each target (always at least one, an empty one when nothing was found).

    `table_headers` are indexes of lines that belong to tables (header rows and rows): a
    column called "Amount" there labels a column, not the receipt's total, and "customer's
    premises" in an item's description is no "Customer" label. `at_top` says the lines are
    those of a box at the top of the first page, where a letterhead may stand unlabelled.
    """
    known = {str(t.get("id", "")) for t in all_fields}
    competing = all_fields + [t for t in targets if str(t.get("id", "")) not in known]
    labels = [label for label in find_labels(lines, competing) if label.line not in table_headers]
    covered = {(label.line, i) for label in labels for i in range(label.start, label.end)}
    by_target: dict[str, list[Candidate]] = {}
    specs = {str(t.get("id", "")): t for t in competing}
    for label in labels:
        target = specs[label.target_id]
        candidate = _candidate(lines, label, covered, target)
        if candidate is not None:
            by_target.setdefault(label.target_id, []).append(candidate)
    # Compared without spaces: a label's value "05 Nov 2024" was respaced from "05Nov 2024".
    claimed = {_spaceless(c.text) for candidates in by_target.values() for c in candidates}
    # Two unlabelled fields of one shape (invoice date, due date) cannot tell whose a
    # lone date is: neither takes it.
    unlabelled = Counter(_shape(t).kind for t in targets if not by_target.get(str(t.get("id", ""))))
    result: dict[str, list[EngineValue]] = {}
    # Calibration differs for words read by OCR and words of a text layer (always 1.0).
    read = "ocr" if any(w.confidence < 1.0 for line in lines for w in line.words) else "text"
    labelled = {label.line for label in labels}
    issuer = issuer_name(lines, labelled, frozenset(covered)) if at_top else None
    headings = _repeated(labels, lines)
    # A registered name over the company's bank and registration details in the footer is
    # the legal issuer where the top shows none with a legal form (a brand, a logo's
    # words). A company at the top keeps it: a footer may also name a marketplace or a
    # payment provider with its own registration.
    if at_top and (issuer is None or not issuer.value.evidence.get("issuer_legal")) and (
            footer := footer_name(lines)) is not None:
        issuer = footer
    for target in targets:
        target_id = str(target.get("id", ""))
        candidates = by_target.get(target_id, [])
        understood = understand(target)
        stated = understood.stated
        period = None
        if candidates and understood.end and _shape(target).kind == "date":
            # "Start Date  End Date" over every week of a schedule: a heading printed
            # again and again labels each row's dates. A label printed once wins; with
            # none, the period the document states once ("09/29/20 - 10/05/20").
            once = [c for c in candidates if (c.label_line, c.label_key) not in headings]
            # Printed once over a row of a wide table ("Start Date  End Date  Weekdays
            # Spots/Week  Rate" over one week), it still labels that row's dates: a label
            # of the document's period, if any, says more.
            outside = [c for c in once if c.line == c.label_line
                       or not _table_row(lines[c.label_line], lines[c.line])]
            if once:
                candidates = outside or once
            else:
                period = _range_end(lines, _shape(target), understood.end,
                                    understood.subject)
        if stated and (values := stated_values(lines, target, stated)):
            # "Governing Law. This Agreement shall be governed by ...": the heading labels
            # a sentence; the value is read from the sentence the target's words point to.
            result[target_id] = values if target.get("is_multiple") else values[:1]
        elif understand(target).role == CURRENCY:
            result[target_id] = [_currency(lines, candidates)]
        elif period is not None:
            result[target_id] = [period]
        elif candidates:
            result[target_id] = _choose(candidates, bool(target.get("is_multiple")))
            if _shape(target).kind == "amount" and not target.get("is_multiple"):
                chosen = result[target_id][0]
                line = next((c.line for c in candidates if c.text == chosen.text), None)
                if line is not None:
                    rounded(lines, line, chosen)
        elif at_top and _wants_address(target) and understand(target).owner != CUSTOMER:
            block = address_below(lines, issuer, labelled)
            result[target_id] = [block or EngineValue("", NOT_FOUND_CONFIDENCE)]
        elif at_top and _wants_top(target) and issuer is not None:
            result[target_id] = [EngineValue(issuer.value.text, issuer.value.confidence,
                                             evidence=dict(issuer.value.evidence))]
        elif at_top and _wants_recipient(target) and (
                recipient := recipient_name(lines) or addressee_block(
                    lines, issuer, frozenset(covered))) and not field_words_only(recipient.text):
            result[target_id] = [recipient]
        elif _issue_date(target) and (dated := letter_date(lines) or title_date(lines)):
            result[target_id] = [dated]
        elif (dated := _self_dated(lines, target, covered)) is not None:
            result[target_id] = [dated]
        elif _document_number(target) and (
                number := title_number(lines) or _self_numbered(lines, target, covered)):
            result[target_id] = [number]
        elif understand(target).end and _shape(target).kind == "date" and (
                ranged := _range_end(lines, _shape(target), understand(target).end,
                                     understand(target).subject)):
            result[target_id] = [ranged]
        elif _role(target) == TOTAL and (summed := _column_total(lines)):
            result[target_id] = [summed]
        elif unlabelled[_shape(target).kind] == 1:
            result[target_id] = [_by_shape(lines, target, claimed)]
        else:
            result[target_id] = [EngineValue("", NOT_FOUND_CONFIDENCE)]
    _check_sum(lines, targets, by_target, result)
    # The recogniser's least sure word of a value: one misread letter shows there.
    certainty: dict[str, float] = {}
    for printed in lines:
        for word in printed.words:
            certainty[word.text] = min(word.confidence, certainty.get(word.text, 1.0))
    for target in targets:
        kind = field_kind(target)
        for value in result[str(target.get("id", ""))]:
            if value.text:
                value.raw = value.confidence
                value.evidence.update({f"kind_{kind}": 1.0, "ocr": float(read == "ocr")})
                if kind == "amount" and parse_amount(value.text) is None:
                    # "1.800.36" for "1,88  0,36": of an amount's shape, but no number a
                    # reader could take it for (calibration._DOUBTS).
                    value.evidence["unread"] = 1.0
                read_words = [certainty[t] for t in value.text.split() if t in certainty]
                if read == "ocr" and read_words:
                    # Times ten: most values doubt under 0.17 (the 95th percentile),
                    # and the other inputs are 0..1. Chosen by the 5-fold Brier score
                    # over x1..x20 (bench/realsets.py's pooled sets; x10 best).
                    value.evidence["ocr_doubt"] = round(min(1.0, 10 * (1.0 - min(read_words))), 3)
                if kind in ("name", "text"):
                    # A name with digits in it ("REFCLI0215", "GLN 4304171000002") is
                    # more often a reference or a code taken for the name.
                    value.evidence["digits"] = min(1.0, sum(c.isdigit() for c in value.text) / 4)
                # Values no label grounds stay under 0.9 (calibration.UNGROUNDED_CEILING).
                value.confidence = calibrated(f"{kind}:{read}", value.confidence,
                                              evidence=value.evidence)
        found = [v for v in result[str(target.get("id", ""))] if v.text]
        if len(found) == 1 and target.get("is_multiple") and understand(target).stated == PARTIES:
            # An agreement has two parties at least: one alone is a list read short.
            found[0].confidence = min(found[0].confidence, UNGROUNDED_CEILING)
    return result


def _currency(lines: list[Line], candidates: list[Candidate]) -> EngineValue:
    """The ISO code of what a currency label prints, else of the codes or signs printed
    beside the amounts (currency.py)."""
    for candidate in sorted(candidates, key=lambda c: -c.quality):
        code = currency_code(candidate.text)
        if code:
            return EngineValue(code, _confidence(candidate, []), evidence=_evidence(candidate, 0))
    return printed_currency(lines) or EngineValue("", NOT_FOUND_CONFIDENCE)


def _role(target: dict[str, Any]) -> str:
    """"subtotal", "tax" or "total" when the target is one of them (roles.py); else ""."""
    if _shape(target).kind != "amount" or target.get("is_multiple"):
        return ""
    role = understand(target).role
    return role if role in (SUBTOTAL, TAX, TOTAL) else ""


def _check_sum(lines: list[Line], targets: list[dict[str, Any]],
               by_target: dict[str, list[Candidate]],
               result: dict[str, list[EngineValue]]) -> None:
    """Subtotal + tax = total where all three are printed: the total that adds up wins.

    A total label can stand beside several amounts ("Total" of a tax summary, an
    amount still due); the one equal to the subtotal plus the tax is the invoice's.
    When no total label holds it, the sum printed on the page is the total under a label
    the engine does not know ("Due payable: 571.04 €" under "Net total: 496.00 €",
    "VAT total: 75.04 €"), kept below auto-accept as a value no label grounds.
    Whether the chosen total adds up is kept as evidence for the calibration; when it
    does not, the three values say so (one of them at least is wrong, and nothing says
    which: none is auto-accepted, calibration.calibrated), or only those no label
    grounds, where some are.
    """
    roles = {role: str(t.get("id", "")) for t in targets if (role := _role(t))}
    if set(roles) != {"subtotal", "tax", "total"}:
        return
    subtotal = parse_amount(result[roles["subtotal"]][0].text)
    tax = parse_amount(result[roles["tax"]][0].text)
    chosen = result[roles["total"]][0]
    if subtotal is None or tax is None or not chosen.text:
        return
    expected = subtotal + tax
    if parse_amount(chosen.text) == expected:
        chosen.evidence["sums"] = 1.0
        return
    for candidate in by_target.get(roles["total"], []):
        if parse_amount(candidate.text) == expected:
            value = EngineValue(candidate.text, _confidence(candidate, []),
                                evidence={**_evidence(candidate, 0), "sums": 1.0})
            result[roles["total"]] = [value]
            return
    printed = _printed_amount(lines, expected)
    if printed is not None:
        result[roles["total"]] = [printed]
        return
    three = [v for role in ("subtotal", "tax", "total") for v in result[roles[role]] if v.text]
    # A value no label grounds (a tax by its shape alone) is the likelier wrong one.
    guessed = [v for v in three if not grounded(v.evidence)]
    for value in guessed or three:
        value.evidence["sums_not"] = 1.0


def _printed_amount(lines: list[Line], amount: Decimal) -> EngineValue | None:
    """The last printed amount equal to `amount`, as a value found by arithmetic alone."""
    for line in reversed(lines):
        for text in reversed(_AMOUNT_SHAPE.find(line.text)):
            if parse_amount(text) == amount:
                return _unlabelled(line, text, {"shape": 1.0, "sums": 1.0})
    return None


def _unlabelled(line: Line, text: str, evidence: dict[str, float]) -> EngineValue:
    """A value of the line no label grounds, as sure as its words were read."""
    words = _words_of(line, text)
    ocr = statistics.fmean(w.confidence for w in words) if words else 1.0
    return EngineValue(text, round(_SHAPE_ONLY * ocr, 4), evidence=evidence)


def field_kind(target: dict[str, Any]) -> str:
    """The kind of a field target: address, name, or its example's shape (date, amount...)."""
    if _wants_address(target):
        return "address"
    if _wants_top(target):
        return "name"
    return _shape(target).kind


def _shape(target: dict[str, Any]) -> Shape:
    return understand(target).shape


def _candidate(
    lines: list[Line], label: Label, covered: set[tuple[int, int]], target: dict[str, Any]
) -> Candidate | None:
    shape = _shape(target)
    if shape.kind == "amount" and _rate_label(lines[label.line], label):
        return None  # "MwSt.-% 19,0", "VAT %": the label of a rate, not of an amount
    line = label.line
    placement = 1.0
    words = _pick(_right_of(lines[label.line], label, covered, shape.kind == "amount"), shape)
    if words and label_key(" ".join(w.text for w in words)) in block_headings():
        words = []  # "BILL TO   SHIP TO": the next block's heading, the name is below
    said = " ".join(w.text for w in words)
    if words and shape.pattern is None and (_wants_top(target) or _wants_recipient(target)) and (
            title_words_only(said) or field_words_only(said)):
        words = []  # "Billing Address   Delivery Address": the next heading's first word
    if words and shape.pattern is None and not _colon_after(lines[label.line], label) and (
            _PROSE.fullmatch(said) or _CLAUSE.match(said)) and (
            lines[label.line].words[label.end - 1].text.endswith(",")
            or any(w.text.strip(",.").lower() in _FIELD_WORDS for w in words)):
        # "Employer's name, address, and ZIP code" over the name: the label's own words
        # go on in lower case, saying what the box holds; the value is below, if anything
        # is ("From  all around the world" says no such thing).
        below, below_line = _below(lines, label, covered, _BELOW_REACH)
        if below:
            words, line, placement = below, below_line, _BELOW_BARE
    if words and shape.pattern is None and _column_heading(words):
        # "Advertiser   Original Date / Revision" over "... POL/Law for Wisconsin PAC
        # 03/12/20": a row of column headings, the value is below its own.
        words = []
    if not words or not _has_shape(words, shape):
        # Nothing right of the label, or nothing of the value's shape ("Due Date Payment
        # Terms" over "March 3, 2026 ..."): a row of headings over their values.
        # A value of a known shape may stand further down (a row of headings over a
        # row of values, set apart); free text only right under its label.
        reach = _BELOW_REACH if shape.pattern is None else _BELOW_REACH_SHAPED
        below, below_line = _below(lines, label, covered, reach)
        if below and (not words or _has_shape(below, shape)):
            words, line = below, below_line
            # A label without a colon above a value is as often a table's column header.
            colon = _colon_after(lines[label.line], label)
            placement = _BELOW if colon else _BELOW_BARE
            if shape.kind == "amount":
                words, line = _column_sum(lines, label, covered, words, line, shape)
    if shape.pattern is None and (_wants_top(target) or _wants_recipient(target)) and (
            not words or (line != label.line and _opens_with_label(
                _phrase_from(lines[line], words[0])))):
        # "Verkäufer" heading a block of "Nummer: 549910", "Globale ID: 123", "Name:
        # ELEKTRON GmbH": the name is the block's line labelled as one, not the first.
        words, line = _named_below(lines, label)
        placement = _BELOW
    if not words:
        return None
    if label.inside:
        placement *= _INSIDE  # "Alt Order #: WOC1249": a longer label than the one sought
    avoided = label.translated and label.key in _avoided_keys(target)
    if avoided:
        # "Net Total" for a gross total described as "not the smaller net amount": any
        # other label says more; with none, where no commission is taken, it is the one.
        placement *= _AVOIDED
    # "DATE DE FACTURE ASSOCIÉE : 30/11/2018" for "Date de facture": a longer label too,
    # which loses a tie to the label itself. It weighs in no confidence: as a placement
    # factor it left the real sets' leave-one-set-out calibration as it was.
    goes_on = shape.kind != "amount" and line == label.line and _label_goes_on(
        lines[line], label, words[-1])
    other_words = False
    if shape.kind == "amount" and line == label.line:
        found = qualified(lines[line], (label.start, label.end), words[0],
                          own_aliases(target), _role(target) == TAX)
        placement *= found.factor
        # "Total Charges 275.00" for a "Balance Due": the role's label, said of something
        # the target's words do not name.
        other_words = found.unknown and label.translated
        if after_rounding(lines, line):
            placement *= ROUNDED
    # "Invoice #:SI-72004": OCR glued the label's end to the value.
    text = _without_label_end(" ".join(w.text for w in words))
    if label.key.endswith("#") and text.startswith("#") and line == label.line and not any(
            "#" in w.text for w in lines[line].words[label.start:label.end]):
        text = text[1:]  # "Check #1234" for "Check #": the label's "#" glued to the value
    if shape.kind == "date":
        # "o2/26/20- 03/03/20": a range whose first date OCR misread would give its end
        # as the start.
        text = _repaired_dates(text)
    text = _trim_to_shape(text, shape)
    if not text:
        return None
    if shape.kind in _STRICT and not shape.fits(text) and not shape.fits(_respace(text)):
        return None  # a date is never "Corporation", an amount never "Cust. Sig."
    if shape.pattern is None and label_key(text) in block_headings():
        return None  # "Warenempfänger" under "Kunde": a heading, not the customer
    if shape.pattern is None and only_legal_form(text):
        return None  # "Kunde AG": the label took the name, "AG" alone is no value
    wants_name = shape.pattern is None and (_wants_top(target) or _wants_recipient(target))
    if wants_name and (_PROSE.fullmatch(text) or _CLAUSE.match(text)):
        return None  # "From all around the world": a phrase in lower case is no name
    if wants_name and (title_words_only(text) or field_words_only(text)):
        return None  # "FROM   INVOICE # US-001": the next label's title, not the name
    if wants_name and street_line(text):
        return None  # "35 rue d'ici" under "Vendeur": the address, the name is elsewhere
    if wants_name:
        # "AB PAC (33483)", "SANYU SUPPLY SDN BHD (1135772-K)": the account or
        # registration number in parentheses after a name is no part of it.
        text = _CODE_NOTE.sub("", text).strip() or text
    if wants_name and _identifier(text):
        # "GLN 4304171000002" over the buyer's name, "Prepared for:   Quote # Q-5531": a
        # number is no name. Under the label, the name may follow on the next line.
        words, line = _below(lines, label, covered, _BELOW_REACH,
                             skip=max(0, line - label.line))
        text = " ".join(w.text for w in words)
        if not text or _identifier(text) or label_key(text) in block_headings():
            return None
    if shape.kind == "date" and understand(target).end == "start" and _after_joint(
            lines[line], words[0]):
        return None  # "02/26/20 -" left of the value's words: "03/03/20" ends the range
    if shape.kind == "date" and understand(target).end == "end":
        # "Flight Dates 01/28/20 - 02/03/20" for a target asking for the end: the last date.
        ends = _range(" ".join(w.text for w in words), shape)
        if ends is None:
            # Its end set further apart than a phrase's words ("Wednesday, February 12,
            # 2020 to   Monday, February 17, 2020"): the range the value opens.
            at = _index_of(lines[line], words[0])
            ends = _range(" ".join(w.text for w in lines[line].words[at:]), shape)
            if ends and not text.startswith(ends[0]):
                ends = None
        if ends:
            text = ends[1]
    if shape.kind == "code" and " / " in text:
        text = text.split(" / ")[0]  # "94165608 / 30.08.2018" under "Number / Date"
    if shape.kind == "code" and not _code_like(text):
        return None  # a word is no number ("CentralCity", "/ Datum"); "INV-NAMED" is
    tree = target.get("validation_tree")
    valid = validates(text, tree)
    if valid is False and shape.kind != "code":
        # Spaces OCR dropped in a date or an amount; a code has none to put back
        # ("#INV03051" is not "#INV 03051").
        respaced = _respace(text)
        respaced = _trim_to_shape(respaced, shape)
        if respaced != text and validates(respaced, tree):
            text, valid = respaced, True
    return Candidate(
        target_id=label.target_id,
        text=text,
        words=words,
        line=line,
        label_score=label.score,
        translated=label.translated,
        by_role=label.by_role,
        label_line=label.line,
        label_key=label.key,
        placement=placement,
        specificity=len(label.key),
        shape_fit=shape.fits(text),
        valid=valid,
        goes_on=goes_on,
        avoided=avoided,
        run_on=line == label.line and _runs_on(lines[line], label, words, text),
        other_words=other_words,
    )


def _identifier(text: str) -> bool:
    """A number or code standing where a name is expected: most of its characters are
    in words with a digit ("GLN 4304171000002", "REFCLI0215"); "99 SPEED MART" is a
    name."""
    # "Bernie 2020 Inc (33287)": a name with its account code in parentheses is a name.
    text = _CODE_NOTE.sub("", text).strip() or text
    numbered = sum(len(t) for t in text.split() if any(c.isdigit() for c in t))
    return numbered > 0 and 2 * numbered >= len(text.replace(" ", ""))


_CODE_NOTE = re.compile(r"\s*\([^()]*\d[^()]*\)\s*$")
_CAPITAL_CODE = re.compile(r"#?[A-Z]{2,}(?:[-_/.][A-Z0-9]+)+")


def _code_like(text: str) -> bool:
    """A number or code: it has a digit, or is capitals joined by dashes ("INV-NAMED");
    a percentage ("100%") is a rate, never a code."""
    if text.strip().endswith("%"):
        return False
    return any(c.isdigit() for c in text) or bool(_CAPITAL_CODE.fullmatch(text.strip()))


def _without_label_end(text: str) -> str:
    """A label's colon or "#:" glued to the value dropped ("#:SI-72004" -> "SI-72004"); a
    "#" printed as part of the value ("#INV03051") stays."""
    text = text.lstrip(":. ")
    if text.startswith("#") and (len(text) == 1 or not text[1].isalnum()):
        text = text[1:].lstrip(":. ")
    return text


def _respace(text: str) -> str:
    """Spaces OCR dropped inside dates and amounts: "August27,2023" -> "August 27, 2023"."""
    text = re.sub(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ", text)
    return re.sub(r",(?=\d{4}\b)", ", ", text)


def _has_shape(words: list[Word], shape: Shape) -> bool:
    """Whether the words hold a value of the shape (always, for free text).

    A code's example shows one issuer's pattern ("INV-2024-0012"); other issuers number
    differently ("94165608", "R0005532486"), so any word with a digit is a code.
    """
    if shape.kind == "code":
        return any(_code_like(w.text) for w in words)
    return shape.pattern is None or bool(shape.find(" ".join(w.text for w in words)))


def _pick(phrases: list[list[Word]], shape: Shape) -> list[Word]:
    """The first phrase of the field's shape ("Total ..... 1,500.00"), else the first one."""
    if shape.pattern is not None:
        for phrase in phrases:
            if shape.find(" ".join(w.text for w in phrase)):
                return phrase
    return phrases[0] if phrases else []


def _char_width(line: Line) -> float:
    chars = sum(len(w.text) for w in line.words)
    return sum(w.x1 - w.x0 for w in line.words) / max(1, chars)


def _run(words: list[Word], start_x: float, char: float, first_gap: float) -> int:
    """How many words from the start form one phrase (no gap wider than a few characters)."""
    count = 0
    previous = start_x
    for word in words:
        gap = word.x0 - previous
        if gap > (first_gap if count == 0 else _MAX_WORD_GAP * char):
            break
        count += 1
        previous = word.x1
    return count


def _right_of(
    line: Line, label: Label, covered: set[tuple[int, int]], amount: bool = False
) -> list[list[Word]]:
    """Phrases right of the label, up to the next label or a long way off."""
    char = _char_width(line)
    start = previous = line.words[label.end - 1].x1
    phrases: list[list[Word]] = []
    slashed = False  # "Order / Rev: 1996189": a second label joined by a slash
    # An amount's label with its own colon is answered by what follows it; a second
    # "Name:" after that answer starts another field ("TVA : FR11999999998 - SIRET :
    # 9999... - SARL au capital de 120 000,00 €": the capital is not the tax).
    answered = amount and _colon_after(line, label)
    skip_to = -1
    for offset, word in enumerate(line.words[label.end :]):
        if offset <= skip_to:
            previous = word.x1
            continue
        if not phrases and (note := _label_note(line.words[label.end + offset:])):
            skip_to = offset + note - 1  # "SHIPPER (NAME AND ADDRESS)": the label's note
            previous = word.x1
            continue
        if answered and phrases and (_label_like(word) or word.text in _COLONS):
            if word.text in _COLONS and phrases[-1]:
                phrases[-1].pop()  # "SIRET :": the colon set apart from its label
            break
        if not phrases and _RATE.fullmatch(word.text):
            continue  # "Sales Tax 20%: 1.815,49 EUR", "GST (25%): $80.00"
        if amount and phrases and label_key(word.text) == label.key:
            # "TVA 5,5%  HT 9,25  TVA 0,51": the label again, with its own amount; what
            # stood between belongs to another ("HT 9,25").
            phrases.clear()
            previous = word.x1
            continue
        if not phrases and (word.text == "/" or (slashed and _label_like(word))):
            slashed = word.text == "/"
            previous = word.x1
            continue
        if not phrases and slashed and any(
                _label_like(w) for w in line.words[label.end + offset + 1: label.end + offset + 3]):
            # "Invoice date / Delivery date: 14 March 2024": a second label's words up to
            # its colon; one value answers both.
            previous = word.x1
            continue
        if not phrases and word.text in _COLONS:
            previous = word.x1  # "PAYABLE TO :": OCR set the label's colon apart
            continue
        if not phrases and _NAME_WORD.fullmatch(word.text):
            previous = word.x1  # "CUSTOMER NAME: MICROSOFT CORPORATION": part of the label
            continue
        if (label.line, label.end + offset) in covered:
            if amount and not any(AMOUNT.search(w.text) for p in phrases for w in p):
                # "Rechnungssumme Brutto (inkl. USt.) 215,14", "Total Sales (Excluding
                # GST): 255.00": other labels before the amount qualify it (see
                # _qualified), they do not end the search.
                phrases.clear()
                previous = word.x1
                continue
            break
        if _label_like(word) and amount and not any(
            AMOUNT.search(w.text) for phrase in phrases for w in phrase
        ):
            # "Total Amt Payable: 159.00", "Total Sales (Incl. of GST): 270.30": before
            # its amount, a colon ends the label's qualifying words, not the search.
            phrases.clear()
            previous = word.x1
            continue
        if _label_like(word):
            # "BILL TO:      SHIP TO:": a phrase in a column of its own that ends in a
            # colon is the next heading, not this label's value ("Vendor: Initech Date:"
            # keeps "Initech": it follows its label closely).
            if (len(phrases) == 1 and word.x0 - previous <= _MAX_WORD_GAP * char
                    and phrases[0][0].x0 - start > _MAX_WORD_GAP * char):
                phrases.pop()
            break
        # Amounts stand in a column at the right edge, however short their label.
        if word.x0 - start > (_MAX_AMOUNT_GAP if amount else _MAX_LABEL_GAP) * char:
            break
        if not phrases or word.x0 - previous > _MAX_WORD_GAP * char:
            phrases.append([])
        phrases[-1].append(word)
        previous = word.x1
    return phrases


_COLONS = (":", "：")


def _label_note(words: list[Word]) -> int:
    """How many words open with a note in parentheses that goes with the label before
    them ("(NAME AND ADDRESS)", "(if any)"): words without digits; 0 for none ("(12.00)"
    is a negative amount)."""
    if not words or not words[0].text.startswith("("):
        return 0
    for count, word in enumerate(words[:6], start=1):
        if any(c.isdigit() for c in word.text):
            return 0
        if word.text.rstrip(":.,").endswith(")"):
            return count
    return 0


def _rate_label(line: Line, label: Label) -> bool:
    """The label ends in a percent sign, glued or set apart ("MwSt.-%", "VAT %"): it heads
    a rate."""
    after = line.words[label.end].text if label.end < len(line.words) else ""
    return line.words[label.end - 1].text.rstrip(":").endswith("%") or after in ("%", "%:")


# How many rows a column under its heading may hold before its sum.
_COLUMN_ROWS = 8


def _column_sum(
    lines: list[Line], label: Label, covered: set[tuple[int, int]], words: list[Word],
    line: int, shape: Shape,
) -> tuple[list[Word], int]:
    """Under an amount's column heading, the amount that sums the ones above it
    ("Nettobetrag" over "321,40" at 19 %, "127,59" at 7 % and "448,99"): a tax summary's
    rows are one rate each, its last row the invoice's. Else the first amount below."""
    rows: list[tuple[list[Word], int]] = [(words, line)]
    amounts: list[Decimal] = []
    while len(rows) <= _COLUMN_ROWS:
        here, at = rows[-1]
        amount = parse_amount(_trim_to_shape(" ".join(w.text for w in here), shape))
        if amount is None:
            break
        amounts.append(amount)
        if len(amounts) >= 3 and sum(amounts[:-1]) == amounts[-1]:
            return here, at
        more, below = _below(lines, label, covered, _BELOW_REACH_SHAPED, skip=at - label.line)
        if not more:
            break
        rows.append((more, below))
    return words, line


def _runs_on(line: Line, label: Label, words: list[Word], text: str) -> bool:
    """A value of words alone (no digit) that goes on the label's own phrase, with no
    colon and no column gap between: as likely the rest of a longer label ("Account
    Types" read as the label "Account" and its value "Types") as a value. A number or a
    code set so close ("Invoice No 15293") is the value all the same."""
    if not words or _colon_after(line, label) or any(ch.isdigit() for ch in text):
        return False
    return words[0].x0 - line.words[label.end - 1].x1 <= _PHRASE_GAP * _char_width(line)


def _colon_after(line: Line, label: Label) -> bool:
    """The label ends in a colon, glued to it or set apart ("PAYABLE TO :")."""
    after = line.words[label.end].text if label.end < len(line.words) else ""
    return line.words[label.end - 1].text.endswith(":") or after in _COLONS


def _below(
    lines: list[Line], label: Label, covered: set[tuple[int, int]], reach: float,
    skip: int = 0,
) -> tuple[list[Word], int]:
    """The phrase under the label on the next line (or `skip` lines further down), if
    that line is within ``reach`` heights of the line above it."""
    here = lines[label.line]
    x0, x1 = here.words[label.start].x0, here.words[label.end - 1].x1
    below = label.line + 1 + skip
    if below >= len(lines):
        return [], below
    line, above = lines[below], lines[below - 1]
    # In heights of the larger of the two: a total printed large under a small label.
    if line.page != here.page or line.y0 - above.y1 > reach * max(above.height, line.height):
        return [], below
    char = _char_width(line)
    # A value under its label starts near the label's left edge, or (a column under its
    # header) overlaps it.
    starts = [
        i for i, w in enumerate(line.words)
        if x0 - 2 * char <= w.x0 <= max(x1, x0 + 4 * char)
        or (w.x0 < x0 and w.x1 > x0 + char and x0 - w.x0 < 8 * char)
    ]
    if not starts:
        return [], below
    first = starts[0]
    count = _run(line.words[first:], line.words[first].x0, char, 0.0)
    words: list[Word] = []
    for offset, word in enumerate(line.words[first : first + count]):
        if not words and offset == 0 and _NAME_WORD.fullmatch(word.text):
            continue  # "Verkäufer" over "Name: ELEKTRON GmbH": the name's own label
        if (below, first + offset) in covered or _label_like(word):
            break
        words.append(word)
    return words, below


_BLOCK_LINES = 4
# Words a column heading ends in ("Original Date / Revision", "Advertiser Code", "Agency
# Ref"): a phrase of capitalised words ending in one heads a column.
_HEADING_ENDS = frozenset({"date", "dates", "revision", "code", "ref", "reference", "number",
                           "no", "#", "id", "type", "name", "amount", "total", "period"})


def _column_heading(words: list[Word]) -> bool:
    """Whether a phrase is a column's heading rather than a value."""
    texts = [w.text.strip(":") for w in words if w.text.strip(":/")]
    return bool(texts) and texts[-1].lower() in _HEADING_ENDS and all(
        t[0].isupper() or t in ("#", "/", "&") for t in texts)


def _phrase_from(line: Line, first: Word) -> list[Word]:
    """The words of the line's phrase that holds `first`, from `first` on, with a colon
    set apart after it ("Nummer   : 549910")."""
    phrases = line_phrases(line)
    for at, phrase in enumerate(phrases):
        if any(w is first for w in phrase):
            words = phrase[next(i for i, w in enumerate(phrase) if w is first):]
            if at + 1 < len(phrases) and phrases[at + 1][0].text.startswith(":"):
                words = words + phrases[at + 1]
            return words
    return [first]


def _opens_with_label(words: list[Word]) -> bool:
    """A phrase of "Label: value" ("Nummer: 549910", "Globale ID : 0088"): a word ending
    in a colon, or a lone colon, among its first three words. Only the value's own phrase
    counts: "Fecha:" in the column before, or "Date:" in the one after, label other values."""
    return any(w.text.endswith(":") or w.text.startswith(":") for w in words[:3])


def _named_below(lines: list[Line], label: Label) -> tuple[list[Word], int]:
    """The value of a "Name:" line in the block a heading label opens (the label alone
    on its line, the block's lines close under it)."""
    heading = lines[label.line]
    if label.start != 0 or label.end != len(heading.words):
        return [], label.line
    for index in range(label.line + 1, min(len(lines), label.line + 1 + _BLOCK_LINES)):
        line, above = lines[index], lines[index - 1]
        if line.page != heading.page or line.y0 - above.y1 > _BELOW_REACH * line.height:
            break
        first = line.words[0]
        if _NAME_WORD.fullmatch(first.text) and first.text.endswith(":") and len(line.words) > 1:
            return line.words[1:], index
        if not _opens_with_label(line.words) and not any(":" == w.text for w in line.words):
            return line.words, index  # the block's first line that is not a "Label: value"
    return [], label.line


def _label_goes_on(line: Line, label: Label, last: Word) -> bool:
    """Words of the label's phrase follow it up to a colon before the value: "Date de
    facture associée :" for "Date de facture", "Date de fin de prestation :" for "Date".
    A slash starts a second label ("Rechnungsdatum / Invoice Date:"), a name word is part
    of this one ("Customer Name:")."""
    if line.words[label.end - 1].text.endswith(_COLONS):
        return False  # "Date: ...": the label's own colon, its value follows
    at = next((i for i, w in enumerate(line.words) if w is last), label.end)
    between = line.words[label.end: at]
    colon = next((i for i, w in enumerate(between) if w.text.endswith(_COLONS)), None)
    if colon is None:
        return False
    extra = between[:colon] if between[colon].text in _COLONS else between[: colon + 1]
    # Digits are the value's, not a label's ("Date 12/03 Zeit: 10:00").
    return bool(extra) and not any(w.text == "/" or _NAME_WORD.fullmatch(w.text)
                                   or any(c.isdigit() for c in w.text) for w in extra)


# Phrases a row of headings and the row under it hold at least to be a table's.
_TABLE_COLUMNS = 4


def _table_row(heading: Line, row: Line) -> bool:
    """A row of column headings without colons over a row of as many values ("Start Date
    End Date Weekdays Spots/Week Rate" over "Week: 03/02/20 03/08/20 M------ 1 $75.00"):
    each value under a heading is one row's of a table, not the document's own."""
    return (len(_phrase_starts(heading)) >= _TABLE_COLUMNS
            and len(_phrase_starts(row)) >= _TABLE_COLUMNS
            and not any(w.text.endswith(_COLONS) for w in heading.words))


def _label_like(word: Word) -> bool:
    return len(word.text) > 1 and word.text.endswith(":")


# An IBAN as printed, in groups of four: country, check digits, then the account.
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")


def _trim_to_shape(text: str, shape: Shape) -> str:
    """Keep the shaped part when a line holds more ("2024-03-15 (Friday)" -> the date)."""
    text = text.strip()
    if shape.pattern is None or shape.fits(text):
        return text
    if shape.kind == "code":
        # One issuer's number is not cut to another's pattern ("INV-42X" for an example
        # "INV-2024-0012"); of several words, one of the example's pattern, else the
        # first with the look of a code ("Contract 4263696 Rev 2").
        words = text.split()
        if len(words) == 1:
            return text
        if iban := _IBAN.search(text):
            return iban.group()  # "DE89 3705 0198 0001 2345 67": one code in groups of four
        found = shape.find(text)
        return found[0] if found else next((w for w in words if _code_like(w)), text)
    found = shape.find(text) or shape.find(_respace(text))
    return found[0] if found else text


def _choose(candidates: list[Candidate], multiple: bool) -> list[EngineValue]:
    # On a tie a label beats a longer one it begins, the configuration's own labels beat
    # translations ("Total" over "Amount Due" for a target that names only "Total"),
    # then the most specific label wins.
    best = max(candidates, key=lambda c: (c.quality, not c.goes_on, not c.translated,
                                          c.specificity, -c.order[0]))
    if multiple:
        kept = [c for c in candidates if c.quality >= 0.5 * best.quality]
        kept.sort(key=lambda c: c.order)
        return [EngineValue(c.text, _confidence(c, []), evidence=_evidence(c, 0))
                for c in kept]
    rivals = [c for c in candidates if c.text != best.text]
    return [EngineValue(best.text, _confidence(best, rivals),
                        evidence=_evidence(best, len({r.text for r in rivals})))]


def _repeated(labels: list[Label], lines: list[Line]) -> set[tuple[int, str]]:
    """(line, key) of labels printed on several lines of their page: column headings
    repeated over a schedule's rows, not labels of the document's own values (which a
    page header may repeat once a page)."""
    places = {(label.line, label.key) for label in labels}
    count = Counter((lines[line].page, key) for line, key in places)
    return {(line, key) for line, key in places if count[lines[line].page, key] >= 2}


def _evidence(candidate: Candidate, rivals: int) -> dict[str, float]:
    """How a labelled value was found, for the calibration (calibration.py)."""
    return {"labelled": 1.0, "translated": float(candidate.translated),
            "below": float(candidate.line != candidate.label_line),
            "qualified": float(candidate.placement < 1.0),
            "rivals": float(min(rivals, 3)), "invalid": float(candidate.valid is False),
            "fuzzy_label": float(candidate.label_score < 1.0),
            "party_by_role": float(candidate.by_role), "avoided": float(candidate.avoided),
            "run_on": float(candidate.run_on), "other_words": float(candidate.other_words)}


def _confidence(candidate: Candidate, rivals: list[Candidate]) -> float:
    # Each distinct rival value weighs by how close it came; weak ones barely count.
    strongest: dict[str, float] = {}
    for rival in rivals:
        ratio = min(1.0, rival.quality / max(candidate.quality, 1e-9))
        strongest[rival.text] = max(strongest.get(rival.text, 0.0), ratio)
    doubt = 0.6 * sum(ratio**2 for ratio in strongest.values())
    value = candidate.quality * candidate.ocr / (1 + doubt)
    return round(min(_MAX_CONFIDENCE, value), 4)


def _by_shape(lines: list[Line], target: dict[str, Any], claimed: set[str]) -> EngineValue:
    """A value of the example's shape when the area holds exactly one that no label claimed."""
    shape = _shape(target)
    if shape.pattern is None:
        return EngineValue("", NOT_FOUND_CONFIDENCE)
    tree = target.get("validation_tree")
    found: dict[str, list[Word]] = {}
    shaped: dict[str, list[Word]] = {}  # of the shape, but failing the target's rules
    for line in lines:
        # "(608) 781-0025": a telephone number holds no code of the document's own.
        printed = _PHONE.sub(" ", line.text) if shape.kind == "code" else line.text
        if shape.kind == "amount":
            printed = DATE.sub(" ", printed)  # "01.02.2024" holds no amount "01.02"
        for text in shape.find(printed):
            if _spaceless(text) not in claimed:
                into = shaped if validates(text, tree) is False else found
                into.setdefault(text, _words_of(line, text))
    # A receipt prints its one date without a label; of several dates the first is most
    # often the document's own, but with less certainty for each rival. A date in a
    # format the rules do not list is still the date (validation will say so).
    doubt = 1.0
    if shape.kind == "date" and not found:
        found, doubt = shaped, _SHAPE_INVALID
    if not found or (len(found) > 1 and shape.kind != "date"):
        return EngineValue("", NOT_FOUND_CONFIDENCE)
    text, words = next(iter(found.items()))
    ocr = statistics.fmean(w.confidence for w in words) if words else 1.0
    return EngineValue(text, round(_SHAPE_ONLY * doubt * ocr / len(found), 4),
                       evidence={"shape": 1.0, "rivals": float(min(len(found) - 1, 3))})


_PHONE = re.compile(r"(?:\+\d{1,3}[\s.-]?)?\(?\b\d{2,4}\)?[\s.-]?\d{3}[\s.-]\d{4}\b")
def _column_total(lines: list[Line]) -> EngineValue | None:
    """An unlabelled total: the last amount of a line that is the sum of the last amounts
    of the two or more lines right above it ("292.00", "58.50", "$ 350,50"); the lowest
    such line."""
    last: list[tuple[Decimal, str] | None] = []
    for line in lines:
        found = _AMOUNT_SHAPE.find(line.text)
        value = parse_amount(found[-1]) if found else None
        last.append((value, found[-1]) if value is not None and found else None)
    best: EngineValue | None = None
    for index, entry in enumerate(last):
        if entry is None or entry[0] <= 0:
            continue
        total, run = Decimal(0), 0
        for above in reversed(last[:index]):
            if above is None:
                break
            total, run = total + above[0], run + 1
            if run >= 2 and total == entry[0]:
                best = _unlabelled(lines[index], entry[1], {"shape": 1.0, "sum": 1.0})
                break
    return best


# What joins the two ends of a printed range: "01/28/20 - 02/03/20", "12 March to 3 May",
# "bis", "au", "tot", "al".
_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|to|through|thru|until|till|bis|au|tot|al|a)\s*",
                         re.IGNORECASE)


def _range_end(lines: list[Line], shape: Shape, end: str,
               subject: tuple[str, ...] = ()) -> EngineValue | None:
    """The start or the end of a printed date range ("Period 3/2/2020 - 3/8/2020", a
    flight's dates alone on a line) for a target asking for one end: the first range
    whose words just before it name what the target's range is of (`subject`: "Order
    Flight 04/21/20 - 04/27/20" for "Flight Start", not the "Invoice Period" printed
    above it), else the first range that is not the bill's own period (unless the
    target's name asks for that), else the bill's period."""
    first: EngineValue | None = None
    billed: EngineValue | None = None
    for line in lines:
        ends = _range(line.text, shape)
        if not ends:
            continue
        value = ends[0] if end == "start" else ends[1]
        words = _words_of(line, value)
        ocr = statistics.fmean(w.confidence for w in words) if words else 1.0
        found = EngineValue(value, round(_SHAPE_ONLY * ocr, 4),
                            evidence={"shape": 1.0, "range": 1.0})
        named = _words_before_range(line, ends[0])
        if named & set(subject):
            found.evidence["range_named"] = 1.0
            return found
        if named & _BILLING and not _BILLING & set(subject):
            billed = billed or found
        else:
            first = first or found
    return first or billed


# Words naming the period a bill covers ("Invoice Period", "Billing Cycle"): the
# document's own, not the period of what it bills (a flight, a service, a lease) that a
# target's words ask for.
_BILLING = frozenset({"invoice", "invoiced", "billing", "billed", "bill", "statement",
                      "rechnung", "rechnungszeitraum", "abrechnungszeitraum", "facturation",
                      "factuur"})


# How many words before a range may name it: "Order Flight", "Contract Term Dates:".
_RANGE_NAME_WORDS = 3


def _words_before_range(line: Line, start: str) -> set[str]:
    """The few words before the range that opens at `start`, lower case: what may name
    it ("Order Flight", "Invoice Period")."""
    text = _repaired_dates(line.text)
    return {word.strip(":.#") for word in
            text[: text.find(start)].lower().split()[-_RANGE_NAME_WORDS:]}


# A range's dash glued to the date before it ("02/26/20- 03/03/20").
_GLUED_JOINT = re.compile(r"(\d)([-–—])(?=\s|$)")


def _repaired_dates(text: str) -> str:
    """Dates as printed, not as misread: digits OCR took for letters put back, a range's
    dash glued to a date set apart ("o2/26/20- 03/03/20" -> "02/26/20 - 03/03/20")."""
    return _GLUED_JOINT.sub(r"\1 \2", " ".join(digits_read_as_letters(t) for t in text.split()))


def _index_of(line: Line, word: Word) -> int:
    """Where the word stands in its line (0 if it is not the line's)."""
    return next((i for i, w in enumerate(line.words) if w is word), 0)


def _after_joint(line: Line, first: Word) -> bool:
    """The value's first word follows a range's joint ("... - 03/03/20", "02/26/20-")."""
    at = _index_of(line, first)
    if at == 0:
        return False
    before = line.words[at - 1].text
    return before.endswith(("-", "–", "—")) or bool(_RANGE_JOIN.fullmatch(before))


def _range(text: str, shape: Shape) -> tuple[str, str] | None:
    """The two ends of the first printed range of the text ("01/28/20 - 02/03/20"), if
    any: two values of the shape with only a range's joint between them."""
    text = _repaired_dates(text)
    values = shape.find(text)
    for first, second in zip(values, values[1:], strict=False):
        at = text.find(first)
        gap = text[at + len(first): text.find(second, at + 1)]
        # "February 12, 2020 to Monday, February 17, 2020": the second end's weekday.
        if _RANGE_JOIN.fullmatch(_weekdays().sub(" ", gap)):
            return first, second
    return None


@lru_cache(maxsize=1)
def _weekdays() -> re.Pattern[str]:
    """Weekday names, wide and abbreviated, in the languages the engine reads (babel's
    CLDR data), with the comma or full stop after them."""
    from babel.dates import get_day_names

    names = {name.lower() for locale in _LOCALES for width in ("wide", "abbreviated")
             for name in get_day_names(width, locale=locale).values()}
    alternatives = "|".join(re.escape(n.rstrip(".")) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b\.?,?", re.IGNORECASE)


def _issue_date(target: dict[str, Any]) -> bool:
    """A date target that is the document's date (its issue date, not a due date)."""
    return _shape(target).kind == "date" and understand(target).role == ISSUE_DATE


def _document_number(target: dict[str, Any]) -> bool:
    """A code target that is the document's own number (not an order's or a receipt's
    transaction number)."""
    return _shape(target).kind == "code" and understand(target).role == DOCUMENT_NUMBER


def _self_numbered(lines: list[Line], target: dict[str, Any],
                   covered: set[tuple[int, int]]) -> EngineValue | None:
    """The number a document titled "ORDER" prints under its own noun ("Order / Rev:
    1996189", "Order #"): a document's own number, whatever the target is called."""
    noun = title_noun(lines)
    if not noun:
        return None
    own = {label_key(p) for p in (noun, *_number_siblings(f"{noun} Number"))}
    stand_in = {**target, "name": f"{noun.title()} Number", "description": ""}
    candidates = [c for label in find_labels(lines, [stand_in]) if label.key in own
                  and (c := _candidate(lines, label, covered, target)) is not None]
    if not candidates:
        return None
    best = max(candidates, key=lambda c: (c.quality, c.specificity, -c.line))
    # Read under a label the target's words did not name: as sure as a title's number.
    return EngineValue(best.text, round(TITLED * best.ocr, 4), evidence={"titled": 1.0})


_DATE_OF = re.compile(r"^(.*?)\s*date$", re.IGNORECASE)


def _self_dated(lines: list[Line], target: dict[str, Any],
                covered: set[tuple[int, int]]) -> EngineValue | None:
    """The date a document titled "PURCHASE ORDER" prints under "Date:" for an "Order
    Date" target: a date named for the document itself is its date, which an invoice's
    "Order Date" (another event's) is not."""
    named = _DATE_OF.match(str(target.get("name") or "").strip())
    if not named or not named.group(1) or _shape(target).kind != "date" or understand(
            target).role:
        return None
    noun = title_noun(lines)
    if not noun or named.group(1).lower().split()[-1] != noun:
        return None
    stand_in = {**target, "name": "Date", "description": ""}
    candidates = [c for label in find_labels(lines, [stand_in])
                  if (c := _candidate(lines, label, covered, target)) is not None]
    if not candidates:
        return None
    best = max(candidates, key=lambda c: (c.quality, c.specificity, -c.line))
    # Read under a label the target's words did not name: as sure as a title's date.
    return EngineValue(best.text, round(TITLED * best.ocr, 4), evidence={"titled": 1.0})


def _spaceless(text: str) -> str:
    return "".join(text.split())


def _words_of(line: Line, text: str) -> list[Word]:
    parts = set(text.split())
    return [w for w in line.words if w.text in parts or text in w.text]


# Document titles: "INVOICE" is close to the label "Invoice #" but labels nothing.
_TITLES = {"invoice", "taxinvoice", "receipt", "salesreceipt", "bill", "statement",
           "creditnote", "quote", "quotation", "proforma", "proformainvoice", "facture",
           "rechnung", "duplicate", "copy", "original"}


def _wants_address(target: dict[str, Any]) -> bool:
    """Free text that is an address."""
    return _shape(target).pattern is None and understand(target).role == ADDRESS


def _wants_recipient(target: dict[str, Any]) -> bool:
    """Free text that is the customer (the addressee of a letter's window)."""
    return _shape(target).pattern is None and understand(target).role == CUSTOMER


def _wants_top(target: dict[str, Any]) -> bool:
    """Free text that is the issuer, or that the description places at the top (a
    letterhead)."""
    understood = understand(target)
    return _shape(target).pattern is None and (understood.role == ISSUER or understood.at_top)
