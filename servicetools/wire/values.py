"""Reading values as the validation rules (D10) read them: ONE parser per kind.

The service validates with these (``number``, ``amount`` and ``date`` rules), the engine
asks them whether a word is a number, and the analysis side compares extracted values
with ground truth through them, so a value the service accepts as an amount is the same
amount when it is graded.

>>> parse_number("1.234,50"), parse_number("1,234"), parse_number("12 apples")
(Decimal('1234.50'), Decimal('1234'), None)
>>> parse_amount("(1.234,50 EUR)"), parse_amount("12,50 zł"), parse_amount("INV-1")
(Decimal('-1234.50'), Decimal('12.50'), None)
>>> parse_date("15.03.2025", ["%Y-%m-%d", "%d.%m.%Y"])
datetime.datetime(2025, 3, 15, 0, 0)

Numbers come back as `decimal.Decimal`, exactly as written (``1234.50`` keeps its
cents), and compare with ints and floats as numbers do. Only the standard library is
used: this runs for every value of every extraction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

__all__ = ["CURRENCY_SYMBOLS", "parse_amount", "parse_date", "parse_number", "parse_numeral"]

# Unicode spaces that appear as thousands separators (French, Swiss, PDF text).
_SPACE_CHARS = "\u00a0\u202f\u2009\u2007"
_SPACE_TRANS = str.maketrans({c: " " for c in _SPACE_CHARS})
_MINUS_SIGNS = "-\u2212\u2013"

_DIGITS = re.compile(r"[0-9]+")
_GROUPED = {
    sep: re.compile(rf"[0-9]{{1,3}}(?:{re.escape(sep)}[0-9]{{3}})+") for sep in (",", ".", " ", "'")
}
# Indian grouping (1,23,45,678.00) shows up with rupee amounts.
_INDIAN_GROUPED = re.compile(r"[0-9]{1,2}(?:,[0-9]{2})+,[0-9]{3}")
_SINGLE_COMMA_THOUSANDS = re.compile(r"[1-9][0-9]{0,2},[0-9]{3}")

#: Currency signs an amount may carry before or after its number.
CURRENCY_SYMBOLS = "$€£¥₹₽₩₺₪₫₱₴₦฿₡₲₵₸₼₾¢"
# A currency written as letters: US$ and friends, ISO 4217 codes, and local abbreviations.
_SIGN = rf"[A-Z]{{1,3}}\$|Rs\.?|RM|kr\.?|zł|Kč|Fr\.|[{re.escape(CURRENCY_SYMBOLS)}]"
# A bare three-letter code before the number needs a space or a digit right after it, so
# "INV-1" is an invoice number, not minus one INV.
_CURRENCY_PREFIX = re.compile(rf"^(?:(?:{_SIGN})\s*|[A-Z]{{3}}(?:\s+|(?=[0-9.,(])))")
_CURRENCY_SUFFIX = re.compile(rf"(?<![A-Za-z])\s*(?:{_SIGN}|[A-Z]{{3}})$")


def _unsigned(text: str) -> tuple[Decimal, int] | None:
    """Digits with optional separators -> (value, number of decimals)."""
    s = text.translate(_SPACE_TRANS)
    if not s or s != s.strip():
        return None
    last_dot, last_comma = s.rfind("."), s.rfind(",")
    decimal_sep: str | None
    if last_dot >= 0 and last_comma >= 0:
        decimal_sep = "." if last_dot > last_comma else ","
    elif last_dot >= 0 or last_comma >= 0:
        sep = "." if last_dot >= 0 else ","
        if s.count(sep) > 1:
            decimal_sep = None
        elif sep == "," and _SINGLE_COMMA_THOUSANDS.fullmatch(s):
            # "1,234" is read the English way; "12,50" and "0,500" stay decimal commas.
            decimal_sep = None
        else:
            # A single dot is a decimal point: "1.234" is 1.234, not 1234.
            decimal_sep = sep
    else:
        decimal_sep = None

    if decimal_sep is not None:
        int_part, frac = s.rsplit(decimal_sep, 1)
        if not _DIGITS.fullmatch(frac):
            return None
    else:
        int_part, frac = s, ""

    if int_part == "":
        if not frac:
            return None
    elif not _DIGITS.fullmatch(int_part):
        ok = any(
            sep != decimal_sep and pattern.fullmatch(int_part) for sep, pattern in _GROUPED.items()
        )
        if not ok and decimal_sep != "," and _INDIAN_GROUPED.fullmatch(int_part):
            ok = True
        if not ok:
            return None
    digits = re.sub(r"[^0-9]", "", int_part) or "0"
    value = Decimal(f"{digits}.{frac}" if frac else digits)
    if not math.isfinite(float(value)):
        return None  # beyond what any consumer of the number can hold
    return value, len(frac)


def parse_numeral(text: str) -> tuple[Decimal, int] | None:
    """A plain number and how many decimals it was written with; None if not a number.

    What the ``number`` rule reads (its ``decimals`` bound counts the second part).

    >>> parse_numeral("-1,234.50")
    (Decimal('-1234.50'), 2)
    """
    if not isinstance(text, str):
        return None
    s = text.strip()
    negative = False
    if s and s[0] in _MINUS_SIGNS + "+":
        negative = s[0] != "+"
        s = s[1:].lstrip()
        if not s:
            return None
    parts = _unsigned(s)
    if parts is None:
        return None
    value, decimals = parts
    return (-value if negative else value), decimals


def parse_number(text: str) -> Decimal | None:
    """A plain number such as ``-1,234.50``, ``1.234,50`` or ``12``; None if not one.

    Thousands separators (``,`` ``.`` space or ``'``) must group by three (or the Indian
    way: ``1,23,456``). When a single separator is ambiguous, ``1,234`` is 1234 and
    ``1.234`` is 1.234; ``12,50`` and ``0,500`` have a decimal comma.
    """
    parts = parse_numeral(text)
    return None if parts is None else parts[0]


def parse_amount(text: str) -> Decimal | None:
    """A money amount such as ``$1,234.50``, ``1.234,50 EUR`` or ``(12.00)``; None if not one.

    The number is read as `parse_number` reads it. A currency sign, abbreviation or
    three-letter code may stand before or after it, with or without a space. A negative
    amount has a minus sign (before or after the currency, or trailing as in ``12.00-``)
    or parentheses.
    """
    if not isinstance(text, str):
        return None
    s = text.strip().translate(_SPACE_TRANS).strip()
    negative = False
    has_currency = False
    has_sign = False
    # Peel wrappers from the outside in; each kind may occur once.
    changed = True
    while changed and s:
        changed = False
        if not has_sign and s.startswith("(") and s.endswith(")"):
            s, negative, has_sign, changed = s[1:-1].strip(), True, True, True
            continue
        if not has_sign and s[0] in _MINUS_SIGNS + "+":
            s, negative, has_sign, changed = s[1:].lstrip(), s[0] != "+", True, True
            continue
        if not has_sign and s[-1] in _MINUS_SIGNS and len(s) > 1:
            s, negative, has_sign, changed = s[:-1].rstrip(), True, True, True
            continue
        if not has_currency:
            m = _CURRENCY_PREFIX.match(s)
            if m is not None and m.end() < len(s):
                s, has_currency, changed = s[m.end() :], True, True
                continue
            m = _CURRENCY_SUFFIX.search(s)
            if m is not None and m.start() > 0:
                s, has_currency, changed = s[: m.start()], True, True
                continue
    parts = _unsigned(s)
    if parts is None:
        return None
    return -parts[0] if negative else parts[0]


def parse_date(text: str, formats: Iterable[str]) -> datetime | None:
    """``text`` read with the first of the strptime ``formats`` that fits; else None.

    Runs of whitespace count as one space, and surrounding whitespace is ignored.
    """
    if not isinstance(text, str):
        return None
    s = " ".join(text.split())
    for fmt in formats:
        try:
            return datetime.strptime(s, fmt)
        except ValueError:
            continue
    return None
