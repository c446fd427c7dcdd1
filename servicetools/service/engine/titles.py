"""Dates and numbers a document states in prose rather than after a label.

A German or French letter dates itself after its place ("München, den 01.11.2024",
"Paris, le 5 mars 2024"); a title often names the document's number and date
("Handelsrechnung Nr. TX-471102 vom 30.10.2018", "Facture du 11/12/2022", "Invoice
#23413561D"). Only the first page is read, and the first such line wins.
"""

from __future__ import annotations

import re
import statistics

from .lines import Line
from .names import line_phrases
from .results import EngineValue
from .shapes import DATE

__all__ = ["TITLED", "letter_date", "letter_head", "title_date", "title_noun", "title_number"]

# A letter's date after its place: "München, den 01.11.2024", "Paris, le 5 mars 2024".
_PLACE_DATE = re.compile(rf"[^\W\d_][\w.-]+,\s*(?:den|le|il|el|de)?\s*({DATE.pattern})\s*$",
                         re.IGNORECASE)
_LETTER_DATE = 0.6
_DATE_LINE = re.compile(rf"^\s*({DATE.pattern})\s*$", re.IGNORECASE)
# A letter's salutation ends its head: "Dear Mr. Park:", "Ladies and Gentlemen:".
_SALUTATION = re.compile(r"^\s*(?:dear\b|ladies\s+and\s+gentlemen|gentlemen\b|to\s+whom\b)",
                         re.IGNORECASE)
_HEAD_LINES = 30


def letter_head(lines: list[Line]) -> list[Line]:
    """The lines above a letter's salutation (its sender, date and addressee); [] for a
    document without a salutation near its top, which is no letter."""
    for index, line in enumerate(lines[:_HEAD_LINES]):
        if _SALUTATION.match(line.text):
            return lines[:index]
    return []


# A title that names the document's number or date: "Handelsrechnung Nr. TX-471102 vom
# 30.10.2018", "Facture du 11/12/2022", "Invoice #23413561D", "Invoice dated 5 May 2024",
# "Rechnung Nr. 4711 11. März 2014", "Gutschrift (Selbst ausgestellte Rechnung) (389)
# Nr. 47110818" (the title word may close a parenthesis). A credit note numbers and dates
# itself alike: "Gutschrift", "Credit Note", "Avoir AV-2017-0005", "Creditnota", "Nota di
# credito", "Nota de crédito" ("avoir" only as a word: not "pouvoir"). So does an offer:
# "Angebot Nr. 2024-117", "Quotation No. Q-12", "Devis n° D-88", "Preventivo n. 5/2024".
_TITLE_WORD = (r"(?:\b\w*(?:rechnung|facture|invoice|factuur|fattura|factura|gutschrift"
               r"|angebot)\w*\b"
               r"|\b(?:credit\s?note|avoir|creditnota|nota\s+d[ie]\s+cr[eé]dito"
               r"|quote|quotation|estimate|devis|offerte|offerta|presupuesto|preventivo)\b)\)?")
_TITLE_DATE = re.compile(
    rf"{_TITLE_WORD}.*?\b(?:vom|von|du|dated|del|van|of|le|from)\s+({DATE.pattern})"
    # The title, its number, and the date ending the line: "Beitragsrechnung zur
    # Kraftfahrtversicherung Nr. 00.123.456.7 11. März 2014".
    rf"|{_TITLE_WORD}.*?(?:nr\.?|no\.?|n°|nº|#)\s*:?\s*\S*\d\S*\s+({DATE.pattern})\s*$",
    re.IGNORECASE)
_TITLE_NUMBER = re.compile(
    rf"{_TITLE_WORD}(?:\s+\S+){{0,3}}?\s*(?:nr\.?|no\.?|n°|nº|number|nummer|#)\s*:?\s*"
    r"(#?[A-Za-z0-9][\w./-]*\d[\w./-]*)"
    # A title line that is the title and a code alone: "Invoice 103767", "FACTURE F-2024-7".
    rf"|^\s*{_TITLE_WORD}\s+(#?[A-Za-z0-9][\w./-]*\d[\w./-]*)\s*$", re.IGNORECASE)
#: The raw score of a value a title names (calibration.py maps it).
TITLED = 0.5


def _titled(lines: list[Line], pattern: re.Pattern[str]) -> EngineValue | None:
    """The value a title line names, on the first page."""
    for line in lines:
        if line.page != lines[0].page:
            break
        match = pattern.search(line.text)
        if match:
            text = next(group for group in match.groups() if group).rstrip(".,;:")
            return EngineValue(text, TITLED, evidence={"titled": 1.0})
    return None


def letter_date(lines: list[Line]) -> EngineValue | None:
    """The date a letter prints after its place, on the first page, else on a line of its
    own above the salutation ("February 12, 2016")."""
    for line in lines:
        if line.page != lines[0].page:
            break
        match = _PLACE_DATE.search(line.text)
        if match:
            words = [w for w in line.words if w.text in match.group(1).split()]
            ocr = statistics.fmean(w.confidence for w in words) if words else 1.0
            return EngineValue(match.group(1), round(_LETTER_DATE * ocr, 4),
                               evidence={"letter_date": 1.0})
    for line in letter_head(lines):
        match = _DATE_LINE.match(line.text)
        if match:
            ocr = statistics.fmean(w.confidence for w in line.words) if line.words else 1.0
            return EngineValue(match.group(1), round(_LETTER_DATE * ocr, 4),
                               evidence={"letter_date": 1.0})
    return None


# The date a title wraps to the line under it: "Gutschrift ... Nr. 47110818" over
# "vom 31.10.2018" ("of" and "from" open too many other lines).
_WRAPPED_DATE = re.compile(rf"^\s*(?:vom|von|du|dated|del|van|le)\s+({DATE.pattern})",
                           re.IGNORECASE)


def title_date(lines: list[Line]) -> EngineValue | None:
    """The date a title line names ("Rechnung ... vom 30.10.2018"), else the date a title
    with its number wraps to the next line."""
    found = _titled(lines, _TITLE_DATE)
    if found is not None:
        return found
    for line, below in zip(lines, lines[1:], strict=False):
        if below.page != lines[0].page:
            break
        match = _WRAPPED_DATE.match(below.text)
        if match and _TITLE_NUMBER.search(line.text):
            return EngineValue(match.group(1).rstrip(".,;:"), TITLED,
                               evidence={"titled": 1.0})
    return None


def title_number(lines: list[Line]) -> EngineValue | None:
    """The number a title line names ("Invoice #23413561D")."""
    return _titled(lines, _TITLE_NUMBER)


# Documents that number themselves under their own noun: an "ORDER" under "Order #" or
# "Order / Rev:", a "CONTRACT" under "Contract No", a "STATEMENT" under "Statement #".
_NOUNS = frozenset({
    "invoice", "order", "contract", "statement", "quote", "quotation", "estimate",
    "receipt", "agreement", "confirmation", "proposal", "rechnung", "auftrag",
    "bestellung", "vertrag", "angebot", "facture", "commande", "contrat", "devis",
    "factuur", "bestelling", "offerte", "factura", "pedido", "contrato",
    "presupuesto", "fattura", "ordine", "contratto", "preventivo",
    # A delivery note's: "Delivery Note", "Lieferschein", "Bon de livraison", "Pakbon".
    "delivery", "lieferschein", "livraison", "albarán", "albaran", "pakbon", "bolla",
})
# Words that may stand before the noun in a title: "SALES ORDER", "Purchase Order",
# "Broadcast Contract", "Order Confirmation".
_TITLE_LINE = re.compile(r"^\s*(?:[^\W\d_]+\s+){0,2}?([^\W\d_]+)\s*$")
_TOP_LINES = 8


def title_noun(lines: list[Line]) -> str:
    """The noun of the document's title, a line of one to three words at the top of its
    first page ("ORDER", "Sales Contract"), lower case; "" when none is found."""
    for line in lines[:_TOP_LINES]:
        if line.page != lines[0].page:
            break
        # The title may share its line with the letterhead, set apart from it
        # ("Globex Corporation        PURCHASE ORDER").
        phrases = [" ".join(w.text for w in phrase) for phrase in line_phrases(line)]
        for text in (line.text, *phrases):
            if _TITLE_LINE.match(text):
                nouns = [w for w in re.findall(r"[^\W\d_]+", text.lower()) if w in _NOUNS]
                if nouns:
                    return nouns[0]  # "Order Confirmation" numbers the order
    return ""

