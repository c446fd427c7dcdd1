"""The shape of a field's example (date, amount, code, number, text) and values of that shape."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from ...wire.rules import compiled_pattern, rule_passes

# Month names and abbreviations in English, German, French, Dutch, Spanish and Italian.
_MONTH = (
    r"(?:jan(?:uary|uar|vier|uari)?|feb(?:ruary|ruar|ruari)?|févr(?:ier)?|fevr(?:ier)?"
    r"|mar(?:ch|s|zo)?|märz|maerz|mrt|maart|apr(?:il|ile)?|avr(?:il)?|abr(?:il)?|may|mai|mei"
    r"|mayo|magg(?:io)?|jun(?:e|i|io)?|juin|giu(?:gno)?|jul(?:y|i|io)?|juil(?:let)?|lug(?:lio)?"
    r"|aug(?:ust|ustus)?|août|aout|ago(?:sto)?|sep(?:t|tember|tembre|tiembre)?|set(?:tembre)?"
    r"|oct(?:ober|obre|ubre)?|okt(?:ober)?|ott(?:obre)?|nov(?:ember|embre|iembre)?"
    r"|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?|dic(?:iembre|embre)?)\.?"
)
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MONTH_NUMBER = r"(?:0?[1-9]|1[0-2])"
_YEAR = r"(?:(?:19|20)\d{2}|\d{2})"
_DATE_PATTERNS = [
    r"(?:19|20)\d{2}[-./]\d{1,2}[-./]\d{1,2}",
    # The same separator twice: "2/4.00" is no date.
    *(rf"{_DAY}{re.escape(sep)}{_MONTH_NUMBER}{re.escape(sep)}{_YEAR}" for sep in "./-"),
    *(rf"{_MONTH_NUMBER}{re.escape(sep)}{_DAY}{re.escape(sep)}{_YEAR}" for sep in "./-"),
    rf"{_DAY}(?:\.|er|st|nd|rd|th)?[\s-]*(?:de\s+)?{_MONTH}[\s,-]*(?:de\s+)?(?:19|20)?\d{{2}}",
    rf"{_MONTH}\s*{_DAY}(?:st|nd|rd|th)?,?\s*(?:19|20)\d{{2}}",
]
DATE = re.compile("|".join(f"(?:{p})" for p in _DATE_PATTERNS), re.IGNORECASE)
# OCR glues a time to the date before it: "22/12/201714:03", "12 Mar 201818:19".
_GLUED_TIME = re.compile(r"((?:19|20)\d{2}|[./-]\d{2})(?=\d{1,2}:\d{2})")


def unglue_time(text: str) -> str:
    """A space between a date's year and a time OCR glued to it."""
    return _GLUED_TIME.sub(r"\1 ", text)


def _currency_pattern() -> str:
    """Currency signs and codes an amount may carry: the ones read before, every ISO 4217
    code of a currency in use (babel's territories; in capitals only: "ALL" is a code,
    "all" a word), and the signs
    CLDR gives the major currencies in their own languages ("kr", "zł", "Kč", "R$")."""
    from babel.numbers import get_currency_symbol

    from .currency import currency_codes, signed_currencies

    homes = ("en", "de", "fr", "sv", "nb", "da", "pl", "cs", "hu", "pt_BR", "tr", "ru", "uk",
             "he", "th", "ja", "ko", "hi", "ms", "fil")
    signs = {get_currency_symbol(code, locale=home) for code in signed_currencies()
             for home in homes}
    signs = {sign for sign in signs if sign.upper() not in currency_codes() and sign.strip()}
    words = sorted(signs, key=len, reverse=True)
    codes = sorted(currency_codes(current=True), key=len, reverse=True)
    # A code glued to a hyphen is a reference's prefix ("BOL-1001"), no currency.
    # Grouped by first letter, so a search tries a handful of codes at each position.
    by_letter: dict[str, list[str]] = {}
    for code in codes:
        by_letter.setdefault(code[0], []).append(code[1:])
    grouped = "|".join(f"{letter}(?:{'|'.join(rests)})" for letter, rests in by_letter.items())
    return (r"(?:[$€£¥₹]|usd|eur|gbp|chf|rm|myr|sgd|rs\.?|"
            + "|".join(re.escape(w) for w in words)
            + "|(?-i:(?:" + grouped + r"))(?![A-Za-z-]))")


_CURRENCY = _currency_pattern()
_GROUPED = r"\d{1,3}(?:[,.']\d{3})+"
# With cents; or whole, when a currency sign or thousands grouping says it is money
# ("$4,500", "$450", "4,500"): a bare "2024" or "3" stays a number.
# Thousands apart by a space ("£4 355.86", "1 234,56 €") only with a currency sign and
# cents: without them, "2 250.00" is as often a quantity beside a price.
_SPACED = r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+[.,]\d{2}"
AMOUNT = re.compile(
    rf"{_CURRENCY}\s?-?{_SPACED}|-?{_SPACED}\s?{_CURRENCY}"
    rf"|(?:{_CURRENCY}\s?)?-?(?:{_GROUPED}|\d+)[.,]\d{{2}}(?:\s?{_CURRENCY})?"
    rf"|{_CURRENCY}\s?-?(?:{_GROUPED}|\d+)(?:[.,]\d{{1,2}})?"
    rf"|-?(?:{_GROUPED}|\d+)\s?{_CURRENCY}"
    rf"|-?{_GROUPED}",
    re.IGNORECASE,
)
NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
# A rate: "20%", "5,5 %", "7.25%".
PERCENT = re.compile(r"-?\d{1,3}(?:[.,]\d{1,3})?\s?%")


@dataclass(frozen=True)
class Shape:
    """What a value looks like; `pattern` finds such values, `None` for free text."""

    kind: str  # "date" | "amount" | "code" | "number" | "text"
    pattern: re.Pattern[str] | None

    def fits(self, text: str) -> bool:
        if self.pattern is None:
            return True
        if self.kind == "date":
            text = unglue_time(text)
        return self.pattern.fullmatch(text.strip()) is not None

    def find(self, text: str) -> list[str]:
        """Values of this shape in a line of text, standing apart from their neighbours."""
        if self.pattern is None:
            return []
        if self.kind == "date":
            text = unglue_time(text)
        found: list[str] = []
        taken = 0  # end of the last value found: values do not overlap
        for start, end in self._spans(text):
            if start < taken:
                continue
            match_text = text[start:end]
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            # "REG#19-10/03/2018": OCR glues a date with a full year to the number before
            # it. (A date run into the digits of a number, "100007017/04/2018", is left:
            # where it starts is a guess.)
            glued = self.kind == "date" and not before.isalpha() and _FULL_YEAR.search(
                match_text)
            # "05/05/20-05/08/20": a dash between two dates joins a range, not one value.
            ranged_after = self.kind == "date" and after in "-\u2013" and bool(
                self.pattern.match(text, end + 1))
            ranged_before = self.kind == "date" and before in "-\u2013" and bool(found) \
                and start - 1 == taken
            if (glued or ranged_before or _separates(before)) and (
                    ranged_after or _separates(after)):
                found.append(match_text.strip())
                taken = end
        return found

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where values of the shape may stand; for dates also overlapping candidates
        ("REG#19-10/03/2018" holds "19-10/03" and "10/03/2018")."""
        assert self.pattern is not None
        if self.kind != "date":
            return [m.span() for m in self.pattern.finditer(text)]
        spans = []
        for start in range(len(text)):
            if start and text[start - 1].isdigit() and text[start].isdigit():
                continue  # a date starts at the start of a number
            match = self.pattern.match(text, start)
            if match:
                spans.append(match.span())
        return spans


_FULL_YEAR = re.compile(r"[./-](?:19|20)\d{2}$")


def _separates(ch: str) -> bool:
    return not ch.isalnum() and ch not in "-/"


def shape_of(example: str) -> Shape:
    text = example.strip()
    if not text:
        return Shape("text", None)
    if DATE.fullmatch(text):
        return Shape("date", DATE)
    if AMOUNT.fullmatch(text):
        return Shape("amount", AMOUNT)
    if NUMBER.fullmatch(text):
        return Shape("number", NUMBER)
    if any(c.isdigit() for c in text) and " " not in text:
        return Shape("code", _code_pattern(text))
    return Shape("text", None)


def code_shape(example: str) -> Shape:
    """A code's shape whatever the example looks like ("471102" as a document number)."""
    return Shape("code", _code_pattern(example.strip() or "A-1"))


def _code_pattern(example: str) -> re.Pattern[str]:
    """Runs of letters and of digits generalised, separators kept: INV-2024-0012 -> A+-9+-9+."""
    parts = []
    for run in re.finditer(r"[A-Za-z]+|\d+|[^A-Za-z\d]", example):
        token = run.group()
        if token.isalpha():
            parts.append(r"[A-Za-z]+")
        elif token.isdigit():
            parts.append(r"\d+")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts))


def validates(value: str, tree: dict[str, Any] | None) -> bool | None:
    """Whether the value passes the validation tree; None when there is no tree to ask."""
    if not tree or not tree.get("rule_groups"):
        return None
    return _passes(value, tree["rule_groups"])


def _passes(value: str, groups: Any) -> bool:
    """validate_value(value, tree)[0] without its messages.

    The engine asks thousands of times per page (every phrase against every header
    tree) and nearly always for a value that fails: writing the failure messages
    was most of the cost.
    """
    if not isinstance(groups, list):
        return True
    for group in groups:
        rules = group.get("rules") if isinstance(group, Mapping) else None
        if not isinstance(rules, list) or not rules:
            continue
        if not any(rule_passes(value, rule) for rule in rules):
            return False
    return True


def header_matches(text: str, tree: dict[str, Any] | None) -> bool:
    """A header cell matches a column when it passes the column's header tree."""
    return bool(validates(text, tree))


def header_test(tree: dict[str, Any] | None) -> Callable[[str], bool]:
    """header_matches(text, tree) as a function of the text, prepared for many texts.

    Header trees are nearly always regular expressions; those are compiled once.
    """
    groups = (tree or {}).get("rule_groups")
    if not isinstance(groups, list) or not groups:
        return partial(header_matches, tree=tree)
    patterns: list[list[re.Pattern[str]]] = []
    for group in groups:
        rules = group.get("rules") if isinstance(group, Mapping) else None
        if not isinstance(rules, list) or not rules:
            continue  # an empty group constrains nothing
        if not all(isinstance(r, Mapping) and r.get("type") == "regex" for r in rules):
            return partial(header_matches, tree=tree)
        # A pattern that does not compile fails its rule, as in validation.
        patterns.append([p for r in rules if (p := _regex(r.get("pattern"))) is not None])
    if not patterns:
        return partial(header_matches, tree=tree)

    def test(text: str) -> bool:
        return bool(text.strip()) and all(
            any(p.fullmatch(text) for p in group) for group in patterns
        )

    return test


def _regex(pattern: object) -> re.Pattern[str] | None:
    return compiled_pattern(pattern) if isinstance(pattern, str) else None
