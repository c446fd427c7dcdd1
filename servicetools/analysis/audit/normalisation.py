"""Values as `grade` compares them: `normalize`, and the date and amount parsers it uses."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd

from ...wire import values as _values

__all__ = [
    "DATE_FORMATS",
    "DEFAULT_NORMALIZE",
    "NORMALIZATIONS",
    "Normalize",
    "normalize",
    "normalize_series",
    "parse_amount",
    "parse_date",
]

#: The date formats of the D10 validation trees in data/configurations (strptime).
DATE_FORMATS: tuple[str, ...] = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%d %b %Y",
                                 "%b %d, %Y", "%B %d, %Y", "%d %B %Y")
#: What every one of `DATE_FORMATS` needs: three numbers joined by one of "-./", or a
#: word of three letters or more (a month) beside a number. strptime costs ~15 µs a try,
#: and a batch of 10,000 documents holds hundreds of thousands of distinct values.
_MAY_BE_DATE = re.compile(r"\d\s*[-./]\s*\d+\s*[-./]\s*\d|[^\W\d_]{3}")
#: What `normalize` can do; `grade` and friends take any subset, or "all".
NORMALIZATIONS: tuple[str, ...] = ("case", "whitespace", "dates", "amounts")
DEFAULT_NORMALIZE: tuple[str, ...] = ("whitespace",)

Normalize = str | Iterable[str] | None


def parse_date(text: str, formats: Sequence[str] = DATE_FORMATS) -> str | None:
    """The ISO date of ``text`` read with the first format that fits, else None.

    The date rule's parser (`servicetools.wire.values.parse_date`), giving ISO text.

    >>> parse_date("15.03.2025"), parse_date("Mar 05, 2024"), parse_date("INV-1")
    ('2025-03-15', '2024-03-05', None)
    """
    if not any(ch.isdigit() for ch in text):
        return None  # most texts are no dates: skip trying every format on them
    if formats is DATE_FORMATS and not _MAY_BE_DATE.search(text):
        return None  # amounts, ids, numbers: no need to try eight formats on each
    parsed = _values.parse_date(text, formats)
    return None if parsed is None else parsed.date().isoformat()


#: The amount rule's parser (`servicetools.wire.values.parse_amount`): what the service
#: accepts as an amount is the amount it is graded as.
parse_amount = _values.parse_amount


def normalize(text: Any, options: Normalize = DEFAULT_NORMALIZE) -> Any:
    """``text`` as compared by `grade`: ``options`` from `NORMALIZATIONS` (or ``"all"``).

    Dates become ISO dates, amounts plain decimals without trailing zeros; a value that
    does not parse as one stays as it is. NA stays NA.

    >>> normalize("  Net\\n30 ", ["whitespace", "case"])
    'net 30'
    >>> normalize("1.234,50 EUR", "all"), normalize("Mar 5, 2024", "all")
    ('1234.5', '2024-03-05')
    """
    if not isinstance(text, str):
        return text
    opts = _options(options)
    s = text
    if "whitespace" in opts:
        s = " ".join(s.split())
    if "dates" in opts:
        iso = parse_date(s)
        if iso is not None:
            return iso
    if "amounts" in opts:
        amount = parse_amount(s)
        if amount is not None:
            return _plain_decimal(amount)
    if "case" in opts:
        s = s.casefold()
    return s


def _plain_decimal(value: Decimal) -> str:
    out = format(value.normalize(), "f")
    return "0" if out in ("-0", "") else out


def _options(options: Normalize) -> frozenset[str]:
    if options is None:
        return frozenset()
    if isinstance(options, str):
        options = NORMALIZATIONS if options == "all" else (options,)
    chosen = frozenset(options)
    unknown = chosen - set(NORMALIZATIONS)
    if unknown:
        raise ValueError(f"unknown normalisation {sorted(unknown)}; choose from "
                         f"{', '.join(NORMALIZATIONS)} or 'all'")
    return chosen


def normalize_series(values: pd.Series, options: Normalize) -> pd.Series:
    """Normalise each distinct value once; NA and blank become ""."""
    opts = _options(options)
    text = values.astype(object).where(values.notna(), "")
    uniques = pd.unique(text.to_numpy(dtype=object))
    mapping = {u: normalize(u, opts) for u in uniques}
    return text.map(mapping)
