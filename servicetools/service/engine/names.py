"""Unlabelled names and addresses at the top of a document: the issuer and its address.

Invoices and receipts rarely label their issuer: its name stands at the top, set
larger than the text under it (a letterhead), or in the small sender line above the
recipient's address ("Lieferant GmbH · Lieferantenstraße 20 · 80333 München"), and
its address follows the name. Every phrase of the first lines is a candidate name,
scored by what speaks for a name (a larger font, a legal form such as GmbH, Ltd or
Sdn Bhd, standing high on the page) and against it (a document title, a label, an
address, a telephone or registration number, mostly digits). A name that OCR or the
layout split over two lines ("HOME MASTER HARDWARE &" / "ELECTRICAL") is joined.

The address is the block of lines under the name, up to a line that is no longer an
address (telephone, registration or tax numbers, e-mail, dates, document titles).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from functools import cache

from .lines import Line
from .page_model import Word
from .results import EngineValue
from .shapes import AMOUNT
from .vocabulary import block_headings

__all__ = [
    "Name", "address_below", "addressee_block", "footer_name", "issuer_name", "line_phrases",
    "misread_legal_forms", "only_legal_form", "recipient_name", "street_line",
    "title_words_only",
]

# Legal forms of companies, as printed (compared without case).
_LEGAL_FORM = re.compile(
    r"(?<![A-Za-z])(?:gmbh|ag|a\.\s?g\.?|eg|kg|ohg|gbr|e\.\s?k|ug|sarl|s\.?a\.?r\.?l|sas|s\.a\.s|s\.?a\.?"
    r"|b\.?v\.?|n\.?v\.?|inc\.?|llc|l\.l\.c|ltd\.?|limited|plc|corp\.?|corporation|co\.?"
    r"|company|pty|oü|sdn\.?\s?bhd\.?|bhd\.?|s/b|enterprise|trading|s\.?r\.?l\.?|s\.?p\.?a\.?"
    r"|s\.?l\.?|gesellschaft|associates|group|holdings?)(?![A-Za-z])",
    re.IGNORECASE,
)
# Legal forms OCR glues to the word before: "SINNATHAMBY HOLDINGSSDN. BHD.".
_GLUED_LEGAL_FORM = re.compile(r"sdn\.?\s?bhd|gmbh", re.IGNORECASE)
# Malaysian legal forms as OCR misreads them: "SDN EHD", "5dn Bhd", "SDN 3HD", "SDN BH",
# "C0. (M) BHO", "5/B"; only characters the recogniser confuses are accepted in each place.
_MISREAD_FORMS = (
    (re.compile(r"(?<![A-Za-z])[S5$][DdO0][NnMm](?=\.?\s?[BE83][HhNn][DdO0]?(?![A-Za-z]))"),
     "SDN"),
    (re.compile(r"(?<=SDN)(?P<gap>\.?\s?)[BE83][HN][DO0]?(?![A-Za-z])", re.IGNORECASE), "BHD"),
    (re.compile(r"(?<![A-Za-z])C0(?=\.\s?\(M\))"), "CO"),
    (re.compile(r"(?<=\(M\) )[BE83]H[DO0](?![A-Za-z])"), "BHD"),
    (re.compile(r"(?<![A-Za-z0-9])[5$]/B(?![A-Za-z])"), "S/B"),
)
# Words that introduce the company behind the shop ("Owned By:", "formerly known as",
# "Licensee of"): the name that follows is not the issuer, nor part of its address.
_OWNER = re.compile(
    # OCR may set a word of the column beside between them: "Owned GST ID By:".
    r"(?:owned|operated|managed|issued)(?:\s+\S+){0,3}?\s*by\b|formerly\s*known\s*as"
    r"|(?:licensee|franchisee)\s*of"
    r"|a\s*(?:member|division|subsidiary|brand)\s*of",
    re.IGNORECASE,
)
_TITLES = re.compile(
    r"^(?:(?:tax|simplified|sales|cash|official|original|duplicate|copy)\s*)*"
    r"(?:invoice|receipt|bill|statement|credit\s*note|quote|quotation|pro\s*forma|facture"
    r"|rechnung|factuur|factura|fattura|ricevuta|quittung|beleg|kassenbon|bon|ticket|avoir"
    r"|gutschrift|note)(?:\s*\(.*\))?$",
    re.IGNORECASE,
)
# Words of a document's title: a phrase of nothing else ("PAYMENT RECEIPT", "Retail
# Invoices/Bill", "Sales Order Confirmation", "Facture de vente") names the document,
# not who issued it. Plurals count as their word.
_TITLE_WORDS = frozenset({
    "tax", "simplified", "sales", "sale", "cash", "official", "original", "duplicate", "copy",
    "invoice", "receipt", "bill", "statement", "credit", "debit", "note", "quote",
    "quotation", "pro", "forma", "proforma", "payment", "retail", "commercial", "customer",
    "order", "purchase", "delivery", "confirmation", "acknowledgement", "advice",
    "remittance", "packing", "slip", "estimate", "summary", "account", "transaction",
    "details", "of", "for", "the", "and", "no", "number", "nr", "page", "facture",
    "rechnung", "gutschrift", "lieferschein", "quittung", "kassenbon", "beleg", "factuur",
    "kassabon", "factura", "recibo", "fattura", "ricevuta", "scontrino", "ticket", "bon",
    "avoir", "devis", "reçu", "de", "vente", "livraison", "commande", "van", "der", "die",
    # A page's section headings: "Contact us", "Nous contacter", "Service client".
    "contact", "contacter", "contactez", "us", "nous", "kontakt", "contacto", "contatti",
    "information", "informations", "service", "client", "kundenservice",
    # A bank's: "Current Account Statement", "Savings Account Summary".
    "current", "savings", "checking",
})
_TITLE_SPLIT = re.compile(r"[\s/&|,.:()#-]+")


def title_words_only(text: str) -> bool:
    """A phrase made only of a document title's words."""
    words = [w for w in _TITLE_SPLIT.split(text.lower()) if w]
    return bool(words) and all(w in _TITLE_WORDS or (w.endswith("s") and w[:-1] in _TITLE_WORDS)
                               for w in words)


def _holds_block_heading(text: str) -> bool:
    """A phrase holding an address block's heading ("Factuuradres Afleveradres Strategic
    Corp", "BILL TO Globex"): the heading and what follows belong to a block, not to the
    letterhead."""
    keys = [_KEY.sub("", w.lower()) for w in text.split()]
    headings = block_headings()
    return any(k in headings or (k + n) in headings for k, n in zip(keys, [*keys[1:], ""],
                                                                     strict=True))


_KEY = re.compile(r"[\W_]+")
# The one block heading over the issuer's own name: who is paid.
_ISSUER_BLOCKS = frozenset({"remitto"})


def _party_headings(phrases: list[list[Word]]) -> list[list[Word]]:
    """The phrases (of a line) that head another party's address block ("Bill To", "Ship
    To", "Spett.le")."""
    headings = _party_blocks()
    return [phrase for phrase in phrases
            if _KEY.sub("", " ".join(w.text for w in phrase).lower()) in headings]


@cache
def _party_blocks() -> frozenset[str]:
    return block_headings() - _ISSUER_BLOCKS


def _under(headings: list[list[Word]], phrase: list[Word]) -> bool:
    """Whether the phrase stands under one of the headings (their words overlap across)."""
    return any(heading[0].x0 < phrase[-1].x1 and phrase[0].x0 < heading[-1].x1
               for heading in headings)

# Words of an address line (street kinds, boxes, units) in the supported languages.
_ADDRESS_WORDS = re.compile(
    r"(?<![A-Za-z])(?:street|st\.|road|rd\.?|avenue|ave\.?|boulevard|blvd|lane|drive|dr\.|"
    r"suite|floor|building(?!\s+society)|p\.?\s?o\.?\s?box|box|jalan|jln|taman|lorong|lot|no\.|"
    r"stra(?:ss|ß)e|str\.|weg|platz|gasse|allee|postfach|postbus|rue|avenue|bd|chemin|"
    r"place|straat|laan|plein|calle|avenida|via|piazza|corso|industriestr|bandar|kawasan)"
    r"(?![A-Za-z])"
    # German compounds: "Bahnhofstrasse", "Lieferantenstraße", "Hauptweg".
    r"|[a-zäöü]{3,}(?:stra(?:ss|ß)e|str\.|weg|platz|allee|gasse)(?![A-Za-z])",
    re.IGNORECASE,
)
# Not a part of a date or a code: "2024-0311", "05/06/2024", "31.05.2024" hold no postcode
# ("D-80333" does).
_POSTCODE = re.compile(r"(?<!\d)(?<!\d[-/.])(?:\d{4,6}|[A-Z]{1,2}\d{1,2}[A-Z]?\s\d[A-Z]{2})"
                       r"(?!\d)(?![-/.]\d)")
# Lines that end an address block: contact and registration details, titles, dates.
_NOT_ADDRESS = re.compile(
    r"(?<![A-Za-z])(?:tel|telephone|phone|fax|telefax|hp|mobile|e-?mail|www|http|gst|vat|"
    r"reg|registration|company\s*no|co\.?\s*no|ust|steuer|tax|invoice|receipt|cashier|date|"
    r"time|table|order|kundennummer|siret|siren|tva|btw|kvk|iban|bic|hrs|hours|open|outlet)"
    r"(?![A-Za-z])|@|\d{1,2}:\d{2}|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b|\b0\d{1,3}-\d{6,8}\b"
    r"|\b[A-Za-z][\w#.]*:\s*[A-Za-z0-9]"
    r"|\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b"
    # A price ("Fruit Box 1.00 ea $32.00"): an item's line, never an address's.
    r"|[$€£¥]\s?\d",
    re.IGNORECASE,
)
# A company registration number on its own line, under the name: "(81109-A)".
_REGISTRATION = re.compile(r"^\(?\s*(?:co\.?\s*)?[A-Z0-9]{3,}[- ]?[A-Z]?\s*\)?\.?$", re.IGNORECASE)
# A registration number printed after the name: "GARDENIA BAKERIES (KL) SDN BHD (139386X)".
_TRAILING_NUMBER = re.compile(r"\s*\(\s*[\w-]*\d[\w -]*\)\s*$")  # "(81109-A)", "(139386 X)"
_SEPARATORS = re.compile(r"\s+[•·|–—-]\s+|\s*[•·|]\s*")
_GLUED_SEPARATORS = "•·|"
_TOP_LINES = 12
_RECIPIENT = 0.6
_RECIPIENT_REACH = 3  # lines under the sender line where the addressee's name may start
# Contact details of the column beside the address window.
_CONTACT = re.compile(r"@|www\.|https?:|\b(?:tel|fax|phone|fon)\b", re.IGNORECASE)
# Every word capitalised ("Maple Hardware", "Blue Door Cafe & Bar"): a name, not a sentence.
_TITLE_CASE = re.compile(r"(?:[A-ZÄÖÜ0-9][\w'.-]*|&|and|of|de|du|la|le|van|von|der)"
                         r"(?:\s+(?:[A-ZÄÖÜ0-9][\w'.-]*|&|and|of|de|du|la|le|van|von|der))*")
_SENDER = 1.0
_MAX_NAME_WORDS = 8
_LARGER = 1.15
_MAX_ADDRESS_LINES = 6
_LETTERHEAD_CONFIDENCE = 0.85


@dataclass(frozen=True)
class Name:
    """The issuer's name and the indexes of the lines it stands on."""

    value: EngineValue
    lines: tuple[int, ...]


def line_phrases(line: Line) -> list[list[Word]]:
    """A line's phrases (split at wide gaps and at separators such as "•" and " - "; also
    at a lone "." between words and after a word a "·" is glued to, as OCR reads a sender
    line's middle dots: "Vogel GmbH· Ringstraße 4 . 50667 Köln")."""
    char = sum(w.x1 - w.x0 for w in line.words) / max(1, sum(len(w.text) for w in line.words))
    phrases: list[list[Word]] = [[]]
    for index, word in enumerate(line.words):
        gap = word.x0 - line.words[index - 1].x1 if index else 0.0
        separator = _SEPARATORS.fullmatch(" " + word.text + " ") or (
            word.text == "." and 0 < index < len(line.words) - 1)
        if phrases[-1] and (gap > 4 * char or separator):
            phrases.append([])
        if not separator:
            phrases[-1].append(word)
            if len(word.text) > 1 and word.text[-1] in _GLUED_SEPARATORS:
                phrases.append([])  # OCR glued the separator to the word: "GmbH·"
    return [p for p in phrases if p]


def _score(text: str, height: float, body: float, index: int, sender: bool = False) -> float:
    """How much a phrase looks like the issuer's name (higher is better; <= 0: not a name).

    `sender`: the phrase opens a sender line (its street and postcode follow it), which
    names the issuer however it is set ("weclapp.com | Somestreet 42 | 08155 Some city").
    """
    text = _TRAILING_NUMBER.sub("", text)
    letters = sum(c.isalpha() for c in text)
    digits = sum(c.isdigit() for c in text)
    if letters < 2 or _TITLES.match(text.strip(" :.")) or ":" in text:
        return 0.0  # a title, or a label and its value ("Lieferadresse: Beispiel AG")
    if title_words_only(text) or _holds_block_heading(text):
        return 0.0
    if "@" in text or "www" in text.lower() or "http" in text.lower():
        return 0.0
    if digits > 0.25 * (letters + digits):
        return 0.0
    legal = bool(_LEGAL_FORM.search(text) or _GLUED_LEGAL_FORM.search(text))
    words = text.split()
    if len(words) > _MAX_NAME_WORDS or (not legal and text.rstrip().endswith((".", "!", "?"))
                                        and len(words) > 3):
        return 0.0  # a sentence, not a name
    if not legal and not sender and height < _LARGER * body and not text.isupper() and not (
            index == 0 and _TITLE_CASE.fullmatch(text)):
        # Body text: a name without a legal form is set larger or in capitals, or is the
        # page's first line (a receipt's shop name, centred and bold).
        return 0.0
    score = min(3.0, height / body) - 0.08 * index
    if _ONLY_LEGAL_FORM.match(text.strip()):
        score -= 0.5  # "GmbH" or "SDN BHD" alone ends a name begun on the line before
    if legal:
        score += 1.2
    if _ADDRESS_WORDS.search(text) or _POSTCODE.search(text):
        score -= 0.9
    if _NOT_ADDRESS.search(text):
        score -= 0.9
    if digits:
        score -= 0.3
    return score


def issuer_name(
    lines: list[Line], skip: set[int], covered: frozenset[tuple[int, int]] = frozenset()
) -> Name | None:
    """The most name-like phrase of the first lines of the first page, with its line indexes.

    `skip` are lines that hold labels, `covered` the (line, word) places of the labels:
    no name is joined across a labelled line, and no label is part of a name.
    """
    first = [i for i, line in enumerate(lines[:_TOP_LINES]) if line.page == lines[0].page]
    if not first:
        return None
    body = statistics.median(line.height for line in lines) or 1e-9
    # Below the first label the page holds labelled blocks and tables: a name there
    # needs a legal form ("Absatz eG") to count.
    first_label = min(skip, default=len(lines))
    phrases_of = {i: line_phrases(lines[i]) for i in first}
    addressee = {i + k for i in first if _is_sender_line(lines[i], phrases_of[i])
                 for k in range(1, _RECIPIENT_REACH + 1)}
    best: tuple[float, int, list[Word]] | None = None
    legal_above = False
    for index in first:
        line = lines[index]
        segments = phrases_of[index]
        headings_above = _party_headings(
            phrases_of.get(index - 1) or line_phrases(lines[index - 1])) if index > 0 else []
        for number, phrase in enumerate(segments):
            if any((index, line.words.index(w)) in covered for w in phrase):
                continue
            text = " ".join(w.text for w in phrase)
            height = statistics.median(w.height for w in phrase)
            # A number alone above the name (a till or receipt number) does not make the
            # name the second line.
            lettered = sum(any(c.isalpha() for c in lines[i].text) for i in first if i < index)
            # A labelled line is no sender line ("Doc No  CS00013251 Date: 12/02/2018").
            sender = index not in skip and _sender_line(segments[number + 1 :])
            score = _score(text, height, body, lettered, sender)
            legal = bool(_LEGAL_FORM.search(text) or _GLUED_LEGAL_FORM.search(text))
            if index > first_label and (not legal or legal_above):
                # Under the labels, a company with an address is as often the customer:
                # it counts only when none with a legal form heads the page above them.
                continue
            if _OWNER.search(text) or (index > 0 and _OWNER.search(lines[index - 1].text)):
                continue  # "Owned By:" / "SANYU SUPPLY SDN BHD": the owner, not the shop
            if index in addressee:
                continue  # the addressee in the window under the sender line
            if _under(headings_above, phrase):
                continue  # "Spett.le" over "Rossi Costruzioni S.r.l.": the customer's block
            if any(AMOUNT.fullmatch(" ".join(w.text for w in later))
                   for later in segments[number + 1:]):
                continue  # "POMMES GOLDEN KG   3,42": an item and its price, no name
            if score > 0 and sender:
                # "Lieferant GmbH · Lieferantenstraße 20 · 80333 München": the sender
                # line above the recipient's address names the issuer first.
                score += _SENDER
            if score > 0 and legal and index < first_label:
                legal_above = True
            if score > 0 and (best is None or score > best[0]):
                best = (score, index, phrase)
    if best is None:
        return _heading_an_address(lines, first, skip, covered, body)
    score, index, phrase = best
    used = [index]
    words = _before_street(list(phrase))
    following = index + 1
    if following < len(lines) and following not in skip and _continues(lines, index, phrase):
        words += lines[following].words
        used.append(following)
    elif index > 0 and index - 1 not in skip and _continues_from(lines, index, phrase):
        # "POPULAR BOOK" / "CO. (M) SDN BHD": the best line only ends the name.
        words = lines[index - 1].words + words
        used.insert(0, index - 1)
    text = _TRAILING_NUMBER.sub("", " ".join(w.text for w in words)).strip(
        " " + _GLUED_SEPARATORS)
    ocr = statistics.fmean(w.confidence for w in words)
    if ocr < 1.0:  # text-layer words are 1.0 and spelled as printed
        text = misread_legal_forms(text)
    # A legal form or a clearly larger font make the name likely; a plain first line less.
    certainty = _LETTERHEAD_CONFIDENCE if score >= 1.5 else 0.6
    evidence = {"issuer": 1.0, "issuer_score": round(min(score, 4.0), 3),
                "issuer_legal": float(bool(_LEGAL_FORM.search(text)
                                           or _GLUED_LEGAL_FORM.search(text))),
                "issuer_joined": float(len(used) > 1),
                "issuer_line": float(min(index, 6))}
    return Name(EngineValue(text, round(certainty * ocr, 4), evidence=evidence), tuple(used))


# Words of the company details a footer gives beside the issuer's registered name: bank,
# registration and tax numbers, management ("Mustermann AG  IBAN: DE12...", "Sound and
# Vision OÜ  Phone: ...  Bank name: ...  Reg. No.: ...").
_COMPANY_DETAILS = re.compile(
    r"(?<![A-Za-z])(?:iban|bic|swift|bank|konto|kontonummer|blz|account|acct|vat|ust|"
    r"ust-?idnr|steuer-?nr|steuernummer|tax|reg|registration|registered|handelsregister|"
    r"amtsgericht|hrb|hra|registergericht|geschäftsführer|geschäftsführung|vorstand|"
    r"director|kvk|siret|siren|rcs|tva|btw|nif|cif|p\.?\s?iva|codice\s*fiscale|"
    r"company\s*(?:no|number)|abn|gst)(?![A-Za-z])",
    re.IGNORECASE,
)
_FOOTER = 0.6  # a footer stands in the lower part of a page (page heights from its top)
_DETAILS_REACH = 4  # lines of the name's block, from its own, that may hold the details
_FOOTER_CONFIDENCE = 0.75


def footer_name(lines: list[Line]) -> Name | None:
    """The issuer's registered name in a footer: a phrase with a legal form low on the
    first or last page whose block (its line and the few under it) gives the company's
    bank, registration or tax details. Invoices print the issuer's name so where the top
    holds only a logo, a brand, or the customer's address."""
    if not lines:
        return None
    pages = {lines[0].page, lines[-1].page}
    body = statistics.median(line.height for line in lines) or 1e-9
    for index, line in enumerate(lines):
        if line.page not in pages or min(w.y0 for w in line.words) < _FOOTER:
            continue
        block = [lines[i] for i in range(index, min(index + _DETAILS_REACH, len(lines)))
                 if lines[i].page == line.page]
        if not _COMPANY_DETAILS.search(" ".join(b.text for b in block)):
            continue
        for phrase in line_phrases(line):
            text = _TRAILING_NUMBER.sub("", " ".join(w.text for w in phrase)).strip(" ,;")
            if not (_LEGAL_FORM.search(text) or _GLUED_LEGAL_FORM.search(text)):
                continue
            if _COMPANY_DETAILS.search(text) or _OWNER.search(text) or only_legal_form(text):
                continue  # "Bank: Sparkasse AG", "a member of X Group", "GmbH" alone
            height = statistics.median(w.height for w in phrase)
            if _score(text, height, body, 0, sender=True) <= 0:
                continue
            ocr = statistics.fmean(w.confidence for w in phrase)
            if ocr < 1.0:
                text = misread_legal_forms(text)
            evidence = {"issuer": 1.0, "issuer_footer": 1.0, "issuer_legal": 1.0}
            return Name(EngineValue(text, round(_FOOTER_CONFIDENCE * ocr, 4),
                                    evidence=evidence), (index,))
    return None


_BLOCK_CONFIDENCE = 0.5
_COLUMN = 0.02  # page widths: lines of one block start at the same place


def _heading_an_address(lines: list[Line], first: list[int], skip: set[int],
                        covered: frozenset[tuple[int, int]], body: float) -> Name | None:
    """Without a letterhead: the first phrase of the first lines that heads an address
    block (a street or postcode in the lines under it, starting where it starts), on an
    unlabelled line under no heading ("WeasyPrint" over "26 rue Emile Decorps" / "69100
    Villeurbanne", beside the customer's block). The sender's block comes first."""
    for index in first:
        if index in skip or (index - 1 in skip and index - 1 >= 0
                             and lines[index - 1].y1 >= lines[index].y0 - 1.5 * body):
            continue  # a labelled line, or right under one ("Bill To:" over the customer)
        line = lines[index]
        for phrase in line_phrases(line):
            if any((index, line.words.index(w)) in covered for w in phrase):
                continue
            text = " ".join(w.text for w in phrase)
            height = statistics.median(w.height for w in phrase)
            if (_score(text, height, body, 0, sender=True) <= 0 or _OWNER.search(text)
                    or _ADDRESS_WORDS.search(text) or _POSTCODE.search(text)):
                continue
            # Two lines under it start where it starts; one of them may hold a label of
            # the block beside ("26 rue Emile Decorps   From all around the world"),
            # not both.
            under = [w for i in range(index + 1, min(index + 3, len(lines)))
                     if lines[i].page == line.page and i not in skip
                     for w in lines[i].words if abs(w.x0 - phrase[0].x0) <= _COLUMN]
            starts = [i for i in range(index + 1, min(index + 3, len(lines)))
                      if any(abs(w.x0 - phrase[0].x0) <= _COLUMN for w in lines[i].words)]
            if not under or len(starts) < 2:
                continue
            block = " ".join(" ".join(w.text for w in line_phrases(lines[i])[0])
                             for i in starts)
            if not (_ADDRESS_WORDS.search(block) or _POSTCODE.search(block)):
                continue
            ocr = statistics.fmean(w.confidence for w in phrase)
            evidence = {"issuer": 1.0, "issuer_block": 1.0,
                        "issuer_legal": float(bool(_LEGAL_FORM.search(text)))}
            return Name(EngineValue(text, round(_BLOCK_CONFIDENCE * ocr, 4),
                                    evidence=evidence), (index,))
    return None


# A house number and a street glued or set close after the name, in one phrase:
# "OrangeDemoInc. 23MainStreet", "Acme Ltd 12 High Street".
_HOUSE_NUMBER = re.compile(r"^\d{1,5}[A-Za-z]?(?:[A-Z][a-z]|$)")
_STREET_KIND = re.compile(r"street|road|avenue|lane|drive|str(?:\.|asse|aße)|weg|rue|laan|"
                          r"straat|calle|via\b", re.IGNORECASE)


def street_line(text: str) -> bool:
    """A house number and a street ("35 rue d'ici", "12 High Street"): an address's line,
    not a name ("99 SPEED MART", "7-Eleven")."""
    words = text.split()
    rest = " ".join(words[1:4])
    return len(words) > 1 and bool(_HOUSE_NUMBER.match(words[0])) and bool(
        _STREET_KIND.search(rest) or _ADDRESS_WORDS.search(rest))


def _before_street(words: list[Word]) -> list[Word]:
    """The name's words without the street address the phrase goes on with."""
    for index in range(1, len(words)):
        rest = " ".join(w.text for w in words[index:])
        if _HOUSE_NUMBER.match(words[index].text) and _STREET_KIND.search(rest):
            return words[:index]
    return words


_JOINERS = re.compile(r"(?:&|\band|-|,)$", re.IGNORECASE)
_ONLY_LEGAL_FORM = re.compile(rf"^(?:\(?m\)\s*|{_LEGAL_FORM.pattern}[\s.,()]*)+$",
                              re.IGNORECASE)


# Words a window envelope's address may start with before the name ("Firma", "Herrn").
_SALUTATION = re.compile(r"^(?:firma|herrn?|frau|monsieur|madame|m\.|mme|mr\.?|mrs\.?|ms\.?)\s+",
                         re.IGNORECASE)


def recipient_name(lines: list[Line]) -> EngineValue | None:
    """The addressee under a letter's sender line (the window of a German or French
    invoice: "Lieferant GmbH · Weg 5 · 80333 München" or "Alphabet, Weg 5, 80333 München"
    over "Kunde AG", its street...).

    A line opening with a label is passed over, as are the web and mail lines of the
    column beside the window.
    """
    top = [i for i, line in enumerate(lines[:_TOP_LINES + 4]) if line.page == lines[0].page]
    for index in top[:-1]:
        if not _is_sender_line(lines[index]):
            continue
        for following in range(index + 1, min(index + 1 + _RECIPIENT_REACH, len(lines))):
            phrase = line_phrases(lines[following])[0]
            text = _SALUTATION.sub("", " ".join(w.text for w in phrase)).strip()
            if ":" in text or _CONTACT.search(text):
                continue  # "Debitorennummer: 63/..." or "www.kraxi.com" beside the window
            letters = sum(c.isalpha() for c in text)
            # "l~f~N~l~ ~~~~": a line OCR could not read is no name.
            if letters < max(2, len(text.replace(" ", "")) / 2) or _ADDRESS_WORDS.search(
                    text) or _POSTCODE.search(text):
                return None
            ocr = statistics.fmean(w.confidence for w in phrase)
            return EngineValue(text, round(_RECIPIENT * ocr, 4), evidence={"recipient": 1.0})
        return None
    return None


_ADDRESSEE = 0.5


def addressee_block(lines: list[Line], issuer: Name | None,
                    covered: frozenset[tuple[int, int]] = frozenset()) -> EngineValue | None:
    """Without a sender line over it: the name heading the first unlabelled address block
    below the issuer's, set apart from the line above ("Familie Weber" over "Bergstraße
    21" and "79100 Freiburg" under "Schreinerei Holzmann GmbH" and its address). The
    issuer's own block comes first, so a page without a found issuer gives none."""
    if issuer is None or not lines:
        return None
    body = statistics.median(line.height for line in lines) or 1e-9
    first = [i for i, line in enumerate(lines[:_TOP_LINES]) if line.page == lines[0].page]
    for index in first:
        if index <= max(issuer.lines) or lines[index].y0 - lines[index - 1].y1 < body:
            continue  # the issuer's block, or a line that goes on from the one above
        line = lines[index]
        phrase = line_phrases(line)[0]
        text = _SALUTATION.sub("", " ".join(w.text for w in phrase)).strip()
        if (any((index, line.words.index(w)) in covered for w in phrase) or ":" in text
                or _score(text, body, body, 0, sender=True) <= 0 or _ADDRESS_WORDS.search(text)
                or _POSTCODE.search(text) or _CONTACT.search(text)):
            continue
        under: list[int] = []
        for i in range(index + 1, min(index + 3, len(lines))):
            if (lines[i].page != line.page or lines[i].y0 - lines[i - 1].y1 >= body
                    or abs(line_phrases(lines[i])[0][0].x0 - phrase[0].x0) > _COLUMN):
                break
            under.append(i)
        block = " ".join(" ".join(w.text for w in line_phrases(lines[i])[0]) for i in under)
        # Its street and postcode: "Hafenstraße 3, 28217 Bremen", or two lines of them.
        if not _POSTCODE.search(block) or not (_ADDRESS_WORDS.search(block) or len(under) == 2):
            continue
        ocr = statistics.fmean(w.confidence for w in phrase)
        return EngineValue(text, round(_ADDRESSEE * ocr, 4), evidence={"addressee": 1.0})
    return None


def _is_sender_line(line: Line, phrases: list[list[Word]] | None = None) -> bool:
    """A name, then its street and postcode, on one small line above the window
    (`phrases`: the line's, if already split)."""
    segments = phrases if phrases is not None else line_phrases(line)
    if not segments or any(":" in w.text for w in segments[0]):
        return False  # "Flight Dates: Wednesday, February 12, 2020": a labelled line
    if len(segments) >= 2 and _LEGAL_FORM.search(" ".join(w.text for w in segments[0])):
        return _sender_line(segments[1:])
    if len(segments) >= 3 and not any(c.isdigit() for w in segments[0] for c in w.text):
        # "weclapp.com | Somestreet 42 | 08155 Some city": name, street, town apart
        return _sender_line(segments[1:])
    # The first phrase alone: "Lee Dental, 45 Pine St, Boulder" beside "Valid until:
    # 2024-07-31" is an addressee's line, no sender's.
    parts = [p.strip() for p in " ".join(w.text for w in segments[0]).split(",")]
    return len(parts) >= 3 and bool(_POSTCODE.search(parts[-1])) and not any(
        c.isdigit() for c in parts[0])


def _sender_line(rest: list[list[Word]]) -> bool:
    """Whether the segments after a name on its line are its address."""
    text = " ".join(w.text for phrase in rest[:2] for w in phrase)
    return bool(rest) and bool(_ADDRESS_WORDS.search(text) or _POSTCODE.search(text))


def misread_legal_forms(text: str) -> str:
    """OCR'd legal forms spelled right ("SDN EHD" -> "SDN BHD"), capitalised as printed."""
    for pattern, spelling in _MISREAD_FORMS:

        def spell(match: re.Match[str], spelling: str = spelling) -> str:
            gap = match.groupdict().get("gap") or ""
            printed = match.group()[len(gap):]
            # "5dn Bhd" is set in title case, "SDN EHD" in capitals.
            word = spelling.title() if any(c.islower() for c in printed) else spelling
            return gap + word

        text = pattern.sub(spell, text)
    return text


def only_legal_form(text: str) -> bool:
    """Whether the text is a legal form and nothing else ("AG", "SDN BHD", "GmbH")."""
    return bool(_ONLY_LEGAL_FORM.match(text.strip()))


def _continues(lines: list[Line], index: int, phrase: list[Word]) -> bool:
    """Whether the next line carries on the name: after "&", or a legal form alone."""
    here, after = lines[index], lines[index + 1]
    if after.page != here.page or after.y0 - here.y1 > 1.2 * here.height:
        return False
    text = " ".join(w.text for w in phrase).strip()
    following = after.text.strip()
    if any(c.isdigit() for c in following) or _NOT_ADDRESS.search(following):
        return False
    if _ONLY_LEGAL_FORM.match(following):
        return True
    similar = abs(after.height - here.height) <= 0.25 * here.height
    if not similar or _ADDRESS_WORDS.search(following):
        return False
    # "RESTAURANT JIAWEI" / "JIAWEI HOUSE" / "002693074-K": the company's registration
    # number closes its name, however many lines the name takes.
    closing = lines[index + 2].text.strip() if index + 2 < len(lines) else ""
    registered = bool(_REGISTRATION.match(closing)) and any(c.isdigit() for c in closing)
    return bool(_JOINERS.search(text)) or registered


def _continues_from(lines: list[Line], index: int, phrase: list[Word]) -> bool:
    """Whether the line before starts the name: this one is a legal form alone, or the one
    before ends in "&"."""
    here, before = lines[index], lines[index - 1]
    if before.page != here.page or here.y0 - before.y1 > 1.2 * here.height:
        return False
    previous = before.text.strip()
    if (any(c.isdigit() for c in previous) or _NOT_ADDRESS.search(previous)
            or _TITLES.match(previous.strip(" :.")) or sum(c.isalpha() for c in previous) < 2):
        return False
    text = " ".join(w.text for w in phrase).strip()
    if _ONLY_LEGAL_FORM.match(text) or _JOINERS.search(previous):
        return True
    # A letterhead set over two lines: "MVM Musterhafter" / "Versicherungsverein
    # Musterstadt a.G." (a word alone above, "WELCOME", is a greeting). Only in a text
    # layer, where the two lines' sizes can be trusted: on a scanned receipt the line
    # above a company's legal name is as often its brand.
    same_size = abs(before.height - here.height) <= 0.1 * here.height
    printed = all(w.confidence >= 1.0 for w in [*before.words, *phrase])
    return (same_size and printed and bool(_LEGAL_FORM.search(text))
            and not _LEGAL_FORM.search(previous) and 2 <= len(previous.split()) <= 4
            and bool(_TITLE_CASE.fullmatch(previous)))


def _compact(text: str) -> str:
    return "".join(text.split()).lower()


def address_below(lines: list[Line], name: Name | None, skip: set[int]) -> EngineValue | None:
    """The block of address lines under the issuer's name (or at the very top without one)."""
    start = (max(name.lines) + 1) if name else 0
    block: list[Line] = []
    for index in range(start, min(len(lines), start + _MAX_ADDRESS_LINES + 2)):
        line = lines[index]
        text = line.text.strip()
        if line.page != lines[start].page:
            break
        if index in skip:
            if block:
                break
            continue  # "(GST Reg No. 0014...)" under the name: labelled, and no address
        if block and line.y0 - block[-1].y1 > 1.5 * block[-1].height:
            break  # a gap: the block has ended
        if not block and name is not None and _compact(text) == _compact(name.value.text):
            continue  # the name printed twice (logo and text)
        # A registration number is mostly digits; "43800DENGKILSELANGOR." is a postcode
        # and town OCR ran together.
        digits = sum(c.isdigit() for c in text)
        if (_REGISTRATION.match(text) and digits and digits >= sum(c.isalpha() for c in text)
                and not _ADDRESS_WORDS.search(text)):
            continue  # "(81109-A)" under the name, before or inside the address
        if _NOT_ADDRESS.search(text) or _OWNER.search(text) or _TITLES.match(text.strip(" :.")):
            if block:
                break
            continue
        block.append(line)
        if len(block) == _MAX_ADDRESS_LINES:
            break
    joined = " ".join(line.text for line in block)
    # An address has a number somewhere (house, postcode) and a word that is no number.
    if not block or not any(c.isdigit() for c in joined) or sum(c.isalpha() for c in joined) < 4:
        return None
    evidence = bool(_ADDRESS_WORDS.search(joined) or _POSTCODE.search(joined))
    ocr = statistics.fmean(w.confidence for line in block for w in line.words)
    return EngineValue(joined, round((0.7 if evidence else 0.45) * ocr, 4),
                       evidence={"address": 1.0, "address_words": float(evidence),
                                 "address_lines": float(len(block)),
                                 "address_after_name": float(name is not None)})
