"""A document's currency as an ISO 4217 code, from babel's currency data.

A currency target is answered by what its label prints ("Währung: EUR", "Devise :
euro") or, without one, by the codes and signs printed beside the document's amounts
("1.500,00 EUR", "€ 12,40"): the most frequent code, else the sign's code. Codes and
signs come from babel's CLDR data (the codes it lists; the sign each major currency has
in English and the languages the engine reads), not from a hand-made list.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

from .lines import Line
from .results import EngineValue

__all__ = ["LOCALES", "currency_code", "currency_codes", "printed_currency",
           "signed_currencies"]

# Currencies whose sign is read as theirs; "$" is the US dollar's as CLDR's English has it.
_SIGNED = ("EUR", "USD", "GBP", "JPY", "CHF", "INR", "CNY", "KRW", "RUB", "TRY", "PLN",
           "SEK", "NOK", "DKK", "CZK", "HUF", "BRL", "ILS", "THB", "PHP", "UAH", "NGN",
           "MYR")
# The languages the engine reads, as babel locales.
LOCALES = ("en", "de", "fr", "nl", "es", "it")
_WORD = re.compile(r"[A-Za-z]{3}")
# Three capitals standing alone: "EUR", "(EUR)", "1.500,00EUR"; not "SAR" of "SARL" nor
# "ESA" of a VAT number "ESA12345674".
_CODE = re.compile(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z0-9])")
_AMOUNT = re.compile(r"\d[\d.,' ]*\d|\d")
# ISO 4217's codes for no currency and for tests: a bank's BIC ends in "XXX" (its head
# office), "FIDCFR21XXX", and no invoice bills in either.
_NO_CURRENCY = frozenset({"XXX", "XTS"})
_CODE_CONFIDENCE = 0.6
_SIGN_CONFIDENCE = 0.45


@cache
def _codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies()) - _NO_CURRENCY


def currency_codes(current: bool = False) -> frozenset[str]:
    """ISO 4217's codes of currencies (babel's list), without those for no currency;
    `current`: only those some territory tenders today (not "BOL", Bolivia's old peso)."""
    return _current_codes() if current else _codes()


@cache
def _current_codes() -> frozenset[str]:
    from datetime import date

    from babel import Locale
    from babel.numbers import get_territory_currencies

    found: set[str] = set()
    for territory in Locale("en").territories:
        found.update(get_territory_currencies(str(territory), start_date=date.today(),
                                              tender=True))
    return frozenset(found) - _NO_CURRENCY


def signed_currencies() -> tuple[str, ...]:
    """The currencies whose signs are read as theirs ("$" the US dollar's)."""
    return _SIGNED


@cache
def _names() -> dict[str, str]:
    """Currency names and signs, lower case, to their codes ("euro", "€", "us dollar")."""
    from babel import Locale
    from babel.numbers import get_currency_symbol

    found: dict[str, str] = {}
    for code in _SIGNED:
        for locale in LOCALES:
            found.setdefault(get_currency_symbol(code, locale=locale).lower(), code)
            name = Locale.parse(locale).currencies.get(code)
            if name:
                found.setdefault(name.lower(), code)
    return {k: v for k, v in found.items() if k.upper() != k or not _WORD.fullmatch(k)}


def currency_code(text: str) -> str:
    """The ISO code a printed currency names ("EUR", "€", "Euro", "US Dollar"); "" if none."""
    stripped = text.strip().strip(":()[].,")
    if stripped.upper() in _codes() and len(stripped) == 3:
        return stripped.upper()
    lowered = stripped.lower()
    if lowered in _names():
        return _names()[lowered]
    for word in _CODE.findall(text):
        if word in _codes():
            return word
    return ""


def _identifier(word: str, code: str) -> bool:
    """Whether `code` ends an identifier of letters and digits ("FIDCFR21EUR", a BIC or a
    reference), not an amount ("1.500,00EUR")."""
    return bool(re.search(r"[A-Za-z]", word.replace(code, "")))


def printed_currency(lines: list[Line]) -> EngineValue | None:
    """The currency printed beside the document's amounts: its most frequent code, else
    its most frequent sign's code."""
    codes: Counter[str] = Counter()
    signs: Counter[str] = Counter()
    for line in lines:
        words = line.words
        for index, word in enumerate(words):
            beside = [w.text for w in words[max(0, index - 1): index + 2] if w is not word]
            if not any(_AMOUNT.search(text) for text in beside) and not _AMOUNT.search(
                    word.text):
                continue
            for token in re.findall(rf"{_CODE.pattern}|[^\w\s.,'\-/%:()]+", word.text):
                if len(token) == 3 and token in _codes() and not _identifier(word.text, token):
                    codes[token] += 1
                elif (code := _names().get(token.lower())):
                    signs[code] += 1
    if codes:
        code, _ = codes.most_common(1)[0]
        return EngineValue(code, _CODE_CONFIDENCE, evidence={"currency_code": 1.0})
    if signs:
        code, _ = signs.most_common(1)[0]
        return EngineValue(code, _SIGN_CONFIDENCE, evidence={"currency_sign": 1.0})
    return None
