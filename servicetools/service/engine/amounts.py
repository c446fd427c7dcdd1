"""Which of several amounts labelled alike is meant: by the words around the label,
and by arithmetic.

A receipt prints "Total Excl. of GST 15.00", "Total Incl. of GST 15.90" and, in its tax
summary, "Total: 15.00 0.90": each line has the label "Total". The words between the
label and its amount qualify it (a lesser amount, or the final one), a row of several
amounts is a summary, and a rounding adjustment printed under a total gives the amount
paid on the line after it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from ...wire.values import parse_amount
from .lines import Line
from .page_model import Word
from .results import EngineValue
from .shapes import AMOUNT, Shape

__all__ = ["Qualified", "ROUNDED", "after_rounding", "qualified", "rounded"]

# Words between an amount's label and its value that make it a lesser amount than the
# label says ("Total Excl. of GST", "Total Qty", "Rechnungssumme ohne USt"), or the
# final one ("Total Incl. GST", "Total Amt Rounded").
_LESSER = re.compile(
    r"^(?:excl|excluding|exclusive|before|sub|qty|qry|quantity|items?|gst|tax|vat|discount|"
    r"savings?|net|netto|ohne|zzgl|exkl|hors|ht|change|tendered|cash|points?|deposit|paid|"
    r"der|des|de|of)$"
)
# The same inside words OCR or the layout glued ("SALESTAX9.25%", "taxes", "subtotal").
_LESSER_STEM = re.compile(r"tax|excl|exkl|sub|qty|discount|saving|tender|deposit")
_FINAL = re.compile(r"^(?:incl|inclusive|including|inkl|brutto|ttc|rounded|rounding|nett|"
                    r"grand|payable|due|amt|amount|after)$")
# A tax word beside both of these labels the total that includes the tax ("Summe inkl.
# USt: 571,04", "Total Incl. GST 15.90"), not the tax ("Zuzügl. USt: 75,04", "inkl. 19%
# MwSt 1,60").
_INCLUSIVE = re.compile(r"^(?:incl|inclusive|including|inkl|inklusive|inclus|ttc)$")
_TOTAL_WORD = re.compile(r"^(?:total|totaal|totale|summe|sum|gesamt|gesamtbetrag|betrag|"
                         r"amount|montant|importe|importo|grand)$")
_CURRENCY_WORD = re.compile(r"^(?:rm|eur|usd|gbp|chf|sgd|myr|inr|rs)$")
# A label followed by several amounts heads a summary row ("Total: 16.98 1.02").
_SUMMARY_FACTOR = 0.7
_LESSER_FACTOR = 0.6
_UNKNOWN_FACTOR = 0.85


_ROUNDING = re.compile(r"\b(?:round|rounding|rounded|adj|adjustment|adjusment)\b", re.I)
# A total printed after a rounding adjustment is the one paid.
ROUNDED = 1.05
_AMOUNT_SHAPE = Shape("amount", AMOUNT)


def _amounts(line: Line) -> list[tuple[Decimal, str]]:
    found = []
    for text in _AMOUNT_SHAPE.find(line.text):
        number = parse_amount(text)
        if number is not None:
            found.append((number, text))
    # "RM .02": an adjustment printed without its leading zero.
    for match in re.finditer(r"(?<![\d.])-?\.\d{2}\b", line.text):
        number = parse_amount(match.group())
        if number is not None:
            found.append((number, match.group()))
    return found


def rounded(lines: list[Line], line: int, value: EngineValue) -> None:
    """The total on `line` replaced by the amount after a rounding adjustment, when the
    arithmetic holds.

    "Total Sales RM 177.22" / "Rounding Adjustment RM -.02" / "Rounding RM 177.20": the
    amount paid is the total plus the adjustment, printed on the line after it.
    """
    total = parse_amount(value.text)
    if total is None:
        return
    for index in range(line + 1, min(len(lines) - 1, line + 3)):
        if not _ROUNDING.search(lines[index].text):
            continue
        for adjustment, _ in _amounts(lines[index]):
            if abs(adjustment) >= 1 or adjustment == 0:
                continue
            for number, text in _amounts(lines[index + 1]):
                # The sign of an adjustment is often lost ("RM .02"): either way round.
                if number in (total + adjustment, total - adjustment):
                    value.text = text
                    value.evidence["rounded"] = 1.0
                    return


def after_rounding(lines: list[Line], index: int) -> bool:
    """Whether one of the two lines above (not this one) holds a rounding adjustment."""
    here = lines[index]
    if _ROUNDING.search(here.text):
        return False
    above = [line for line in lines[max(0, index - 2) : index] if line.page == here.page]
    return any(_ROUNDING.search(line.text) for line in above)


class Qualified(NamedTuple):
    """How much the words around an amount's label leave the amount the target's
    (`factor`), and whether words neither the target's nor known qualify it (`unknown`:
    "Total Charges" for a target called "Balance Due")."""

    factor: float
    unknown: bool = False


def qualified(
    line: Line, label: tuple[int, int], first: Word, own: list[str], tax: bool = False
) -> Qualified:
    """How much the words around an amount's label leave the amount the target's.

    `label` is the label's span of word indexes on the line, `first` the value's first
    word, `own` the target's own label phrases, `tax` whether the target is a tax.
    """
    label_start, label_end = label
    # Words of the target's own labels (a Tax target's "GST") qualify nothing; the
    # translations are left out: they hold "Total Incl" and "Net Total" alike.
    owned = {w for phrase in own for w in _words(phrase)}
    # The label's own words may already say it ("Total Incl" of "Total Incl. of GST").
    named = [w for word in line.words[label_start:label_end] for w in _words(word.text)]
    between = []
    start = line.words.index(first)
    for word in line.words[label_end:]:
        # Up to the amount itself: "Total Excluding GST 15.00" is one phrase.
        if AMOUNT.fullmatch(word.text):
            break
        between += _words(word.text)
    before = [w for word in line.words[max(0, label_start - 2) : label_start]
              for w in _words(word.text)]
    around = named + between + before
    if tax and any(map(_INCLUSIVE.match, around)) and any(map(_TOTAL_WORD.match, around)):
        return Qualified(_LESSER_FACTOR)
    if any(_FINAL.match(w) for w in named):
        between = []

    def meaningful(words: list[str]) -> list[str]:
        # One or two letters are OCR noise or a currency ("Total R 31.45").
        return [w for w in words
                if w not in owned and not _CURRENCY_WORD.match(w) and len(w) > 2]

    inner = meaningful(between)
    # "Paid Amount", "Sub Total": the words just before the label qualify it too.
    between = meaningful(between + before)
    factor = _SUMMARY_FACTOR if _amounts_in_a_row(line.words[start:]) > 1 else 1.0
    if not between or any(_FINAL.match(w) for w in between):
        return Qualified(factor)
    if any(_LESSER.match(w) or _LESSER_STEM.search(w) for w in between):
        return Qualified(factor * _LESSER_FACTOR)
    # Unknown words between the label and its amount say what it is a total of ("Total
    # Charges 275.00"); before the label they may be another column's ("30 Days  Total").
    return Qualified(factor * _UNKNOWN_FACTOR, unknown=bool(inner))


def _amounts_in_a_row(words: list[Word]) -> int:
    """How many amounts stand in a row from the first of `words`: a summary row's ("Total:
    16.98 1.02"), not the next label's ("Total Gross Pay 2,916.67  Total Deductions 611.20"
    is two labels, each with its amount)."""
    count = 0
    for word in words:
        if AMOUNT.fullmatch(word.text):
            count += 1
        elif any(len(w) > 2 and not _CURRENCY_WORD.match(w) for w in _words(word.text)):
            break  # a word: the next label begins
    return count


def _words(text: str) -> list[str]:
    return re.findall(r"[a-zäöüé]+", text.lower())
