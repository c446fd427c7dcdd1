"""What a target asks for, read from what the user wrote: its name, description, example
and validation rules.

A configuration is the user's, so its words are theirs: the invoice's issuer may be
called "Vendor", "Issuer", "Seller", "Supplier", "Sold by", "Company", "From", "Biller",
"Merchant" or "Store", and described in a sentence of their own. The engine reads two
things from those words:

- a **role**: which value of the document it is (the issuer, the customer, the
  document's own number, an order number, the issue date, the due date, the total,
  the subtotal, the tax, an address). The role brings the printed labels that
  introduce such a value in the languages the engine reads (vocabulary.py), and the
  ways to find it without a label (the issuer's letterhead, a letter's date, the
  number in a title);
- a **shape**: what the value looks like (date, amount, code, number or free text),
  from the example, else from the validation rules (a ``date`` or ``amount`` rule),
  else from the role (a total is an amount whatever the example says nothing about).

The name speaks first: "Due Date" is a due date whatever its description says. Only
when the name names no role is the description read, and there the role named first
wins, since a description opens with its subject ("The company that issued the
invoice to the customer" is the issuer). A few qualifiers turn one role into a
neighbour ("total before tax" is the subtotal, "the date payment is due" the due date).
Cues are whole words or phrases of the text, lower case; nothing here knows a
particular configuration's names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .sentences import DURATION, JURISDICTION, PARTIES
from .shapes import PERCENT, Shape, code_shape, shape_of
from .vocabulary import role_labels

__all__ = [
    "ADDRESS", "CURRENCY", "CUSTOMER", "DOCUMENT_NUMBER", "DUE_DATE", "ISSUER", "ISSUE_DATE",
    "ORDER_NUMBER", "OTHER", "PERIOD", "SUBTOTAL", "TAX", "TOTAL", "TRANSACTION_NUMBER",
    "Understood", "field_words_only", "other_field_labels", "recipient_address_labels",
    "understand",
]

ISSUER = "issuer"
CUSTOMER = "customer"
DOCUMENT_NUMBER = "document_number"
TRANSACTION_NUMBER = "transaction_number"
ORDER_NUMBER = "order_number"
ISSUE_DATE = "issue_date"
DUE_DATE = "due_date"
TOTAL = "total"
SUBTOTAL = "subtotal"
TAX = "tax"
ADDRESS = "address"
CURRENCY = "currency"
PERIOD = "period"  # one end of a printed period: "Start Date", "Valid Until", "Run End"
OTHER = "other"

# Cue phrases per role, in English and the languages the engine reads. Where two roles
# share words, the longer phrase decides ("sold to" is the customer, "sold by" the
# issuer; "invoice number" a number, "invoice date" a date).
_CUES: dict[str, tuple[str, ...]] = {
    ISSUER: (
        "issuer", "issued by", "issuing", "seller", "sold by", "supplier", "vendor", "biller",
        "billed by", "merchant", "store", "shop", "retailer", "restaurant", "company",
        "business", "trader", "provider", "from", "payee", "sender", "who issued",
        "that issued", "who issues", "that issues", "which issues", "lieferant", "verkäufer",
        "rechnungssteller", "händler", "firma", "contractor", "insurer", "insurance company",
        "employer", "beneficiary", "bought from", "purchased from", "ordered from", "who sent",
        "that sent", "sent us", "is from",
        "fournisseur", "vendeur", "émetteur", "leverancier", "verkoper", "proveedor",
        "vendedor", "emisor", "fornitore", "venditore", "emittente",
    ),
    CUSTOMER: (
        "customer", "buyer", "bill to", "billed to", "sold to", "invoice to", "invoiced to",
        "client", "recipient", "purchaser", "addressee", "consignee", "ship to", "payer",
        "buys", "bought by", "pays for", "paying for", "advertiser", "sponsor", "guest",
        "policyholder", "policy holder", "insured", "prepared for", "addressed to",
        "ordering party", "ordered by", "who ordered", "that ordered",
        "kunde", "käufer", "empfänger", "acheteur", "destinataire", "klant", "koper",
        "comprador", "cliente", "acquirente", "destinatario",
    ),
    ORDER_NUMBER: (
        "po", "p.o.", "purchase order", "order number", "order no", "order #", "order id",
        "order reference", "your reference", "your ref", "customer reference",
        "buyer reference", "client reference", "bestellnummer", "bestellung", "commande",
        "bestelnummer", "pedido", "ordine",
    ),
    TRANSACTION_NUMBER: (
        "receipt number", "receipt no", "receipt #", "receipt id", "transaction", "trans",
        "ticket", "bon", "beleg", "bonnummer", "scontrino",
    ),
    DOCUMENT_NUMBER: (
        "invoice number", "invoice no", "invoice #", "invoice id", "invoice nr", "inv no",
        "bill number", "bill no", "document number", "document no", "note number", "note no",
        "number", "no", "no.",
        "#", "nr", "id", "reference", "ref", "identifier", "rechnungsnummer", "numéro", "nummer",
        "número", "numero",
    ),
    DUE_DATE: (
        "due", "due date", "payment due", "pay by", "payable by", "deadline", "fällig",
        "fälligkeit", "fälligkeitsdatum", "zahlungsziel", "zahlbar bis", "échéance",
        "pay until", "pay before", "last day to pay", "latest payment",
        "vervaldatum", "vencimiento", "scadenza",
    ),
    ISSUE_DATE: (
        "date", "dated", "issued on", "issue date", "date of issue", "invoice date",
        "was issued", "was written", "was created", "was made out", "was dated",
        "purchase date", "transaction date", "billing date", "datum",
        "fecha", "data",
    ),
    SUBTOTAL: (
        "subtotal", "sub-total", "sub total", "net amount", "net", "netto", "before tax",
        "excluding tax", "excl. tax", "pre-tax", "zwischensumme", "nettobetrag",
        "sous-total", "hors taxe", "subtotaal", "base imponible", "imponibile",
    ),
    TAX: (
        "tax", "vat", "gst", "sales tax", "mwst", "ust", "mehrwertsteuer", "umsatzsteuer",
        "tva", "btw", "iva", "btw-bedrag", "mwst-betrag", "ust-betrag",
    ),
    TOTAL: (
        "total", "grand total", "amount due", "amount paid", "amount payable", "balance due",
        "gross", "sum", "amount", "to pay", "charged", "paid", "price", "betrag", "summe",
        "gesamt", "gesamtbetrag", "rechnungsbetrag", "endbetrag", "bruttobetrag", "montant",
        "totaal", "bedrag", "importe", "importo", "totale",
    ),
    ADDRESS: ("address", "adresse", "anschrift", "adres", "dirección", "indirizzo"),
    CURRENCY: ("currency", "währung", "rechnungswährung", "devise", "valuta", "moneda",
               "divisa", "money"),
    # Things the engine has no role for: a name holding one of these says what the
    # target is, and its description is not read for a role ("Payment Method: how the
    # customer paid" is no customer).
    OTHER: (
        "method", "terms", "phone", "telephone", "fax", "email", "e-mail",
        "website", "iban", "bic", "swift", "account", "account number", "vat id",
        "vat number", "vat no", "tax id", "tax number", "tax no", "registration",
        "customer id", "customer number", "customer no", "client id", "client number",
        "kundennummer", "unit price", "quantity", "qty", "description", "paid by", "tender",
        "law", "term", "period", "parties", "party", "signatory", "title", "note", "notes",
        "rate", "percentage", "discount", "cashier", "table", "time", "salesperson",
        "number of",
        "contact", "attn", "attention", "product", "account executive", "account manager",
        # Dates of other events than the issue: "Date of delivery 2020-11-10" under
        # "issued at 2020-11-21" is no label of the invoice's date.
        "date of birth", "birth date", "birthday", "dob",
        "delivery date", "date of delivery", "ship date", "shipping date", "order date",
        "date of order", "service date", "date of service", "date de livraison",
        "fecha de entrega", "data di consegna", "data consegna",
    ),
}
# Short or common words that name a role in a target's name but not in running prose
# ("the date from which", "no later than").
_NAME_ONLY = frozenset({"from", "no", "#", "id", "nr", "ref", "net", "data", "po", "trans",
                        "bon", "sum", "paid", "gross", "shop", "store", "amount", "price",
                        "number", "reference", "date", "company", "business", "time",
                        "table", "title", "term", "rate", "note", "notes"})
# Words that qualify a role into a neighbour, wherever they stand in name or description.
# A name in another language qualifies its noun after it: "Montant HT" (before tax) is
# the subtotal, "Date d'échéance", "Fecha de vencimiento", "Data di scadenza" the due date.
_QUALIFIERS: dict[str, tuple[tuple[str, ...], str]] = {
    TOTAL: (("before tax", "excluding tax", "excl. tax", "without tax", "pre-tax",
             "net of tax", "before vat", "excluding vat", "ht", "h.t", "hors taxe",
             "hors taxes", "netto", "ohne mwst", "ohne ust", "exkl", "excl. btw",
             "zonder btw", "sin iva", "senza iva", "imponibile", "base imponible"), SUBTOTAL),
    ISSUE_DATE: (("is due", "due date", "payment due", "pay by", "payable by", "deadline",
                  "échéance", "echeance", "fälligkeit", "fällig", "vencimiento", "scadenza",
                  "vervaldatum", "vervaldag", "limite"),
                 DUE_DATE),
    DOCUMENT_NUMBER: (("purchase order", "order number", "po number", "p.o."), ORDER_NUMBER),
}
# Words of a total's name that say the tax it names is left out ("Total excl. VAT") or
# in ("Total incl. VAT", "Totaal incl. BTW", "Gesamtbetrag inkl. MwSt.", "Total con IVA").
_EXCLUDING = frozenset({"excl", "excluding", "exclusive", "exkl", "exklusive", "ohne", "sans",
                        "sin", "senza", "zonder", "without", "hors", "before", "pre-tax"})
_INCLUDING = frozenset({"incl", "including", "inclusive", "inkl", "inklusive", "con", "inclusa",
                        "incluso", "incluido", "incluida", "inclus", "inclusief", "ttc",
                        "with", "plus", "gross"})
# Roles ranked by how much they say, for cues of two roles at one position.
_RANK = (OTHER, CURRENCY, ADDRESS, DUE_DATE, ORDER_NUMBER, TRANSACTION_NUMBER, SUBTOTAL, TAX,
         CUSTOMER, ISSUER, DOCUMENT_NUMBER, ISSUE_DATE, TOTAL)
# What each role's value looks like when neither example nor rules say.
_ROLE_EXAMPLES = {DOCUMENT_NUMBER: "INV-1", TRANSACTION_NUMBER: "R-1", ORDER_NUMBER: "PO-1",
                  ISSUE_DATE: "2024-03-15", DUE_DATE: "2024-03-15", PERIOD: "2024-03-15",
                  TOTAL: "1.00",
                  SUBTOTAL: "1.00", TAX: "1.00"}
_RULE_EXAMPLES = {"date": "2024-03-15", "amount": "1.00"}
_SPLIT = re.compile(r"[\s_/]+")
# A description saying where an unlabelled value stands: "printed at the top".
_AT_TOP = re.compile(r"\b(at the top|letterhead|top of the (page|document|receipt))\b", re.I)


@dataclass(frozen=True)
class Understood:
    """A target as the engine reads it."""

    role: str  # one of the roles above, or "" when its words name none
    shape: Shape
    labels: tuple[str, ...]  # printed labels of the role, in every language read
    owner: str = ""  # of an address: ISSUER or CUSTOMER when the words say whose
    at_top: bool = False  # the description places the value at the top
    end: str = ""  # "start" or "end": which end of a printed range ("Flight Start")
    described: tuple[str, ...] = ()  # label phrases the description's prose names
    stated: str = ""  # a value stated in a sentence: sentences.JURISDICTION, DURATION, PARTIES
    avoided: tuple[str, ...] = ()  # labels of the role naming what the description rules out
    subject: tuple[str, ...] = ()  # of a range's end: what the range is of ("flight")

    @property
    def kind(self) -> str:
        return self.shape.kind


def understand(target: dict[str, Any]) -> Understood:
    """The role, shape and labels of a field target, from its own words."""
    return _understand(str(target.get("name") or ""), str(target.get("description") or ""),
                       str(target.get("example") or ""),
                       _rule_types(target.get("validation_tree")))


def _rule_types(tree: Any) -> tuple[str, ...]:
    """The types of the tree's rules ("date", "amount", ...), as a key of the cache."""
    groups = tree.get("rule_groups") if isinstance(tree, dict) else None
    if not isinstance(groups, list):
        return ()
    return tuple(str(rule.get("type")) for group in groups if isinstance(group, dict)
                 for rule in (group.get("rules") or []) if isinstance(rule, dict))


# Every field of every group asks on every document: read each target's words once.
@lru_cache(maxsize=1024)
def _understand(name: str, description: str, example: str,
                rule_types: tuple[str, ...]) -> Understood:
    named = _roles(name)
    described = _roles(description, prose=True)
    if ADDRESS in named or (not named and described[:1] == [ADDRESS]):
        role = ADDRESS  # "Vendor Address" is an address, the vendor's
    else:
        role = named[0] if named else (described[0] if described else "")
    words = f" {_normal(name)} {_normal(description)} "
    qualified = _QUALIFIERS.get(role)
    if qualified and any(f" {cue} " in words for cue in qualified[0]):
        role = qualified[1]  # "Total Excluding VAT": a subtotal
    elif role == TOTAL and (parts := [r for r in named if r in (TAX, SUBTOTAL)]):
        said = set(_normal(name).split())
        if said & _EXCLUDING:
            role = SUBTOTAL  # "Total excl. VAT", "Bedrag excl. BTW": before the tax
        elif not said & _INCLUDING:
            # "Total Tax": the total of the tax, a tax ("Total incl. VAT" is the total).
            role = parts[0]
    role = _headed(name, role, named)
    owner = ""
    if role == ADDRESS:
        others = [r for r in (*named, *described) if r in (ISSUER, CUSTOMER)]
        owner = others[0] if others else ""
    shape = shape_of(example)
    if shape.pattern is None and example.strip() == "":
        fallback = next((_RULE_EXAMPLES[t] for t in rule_types if t in _RULE_EXAMPLES),
                        _ROLE_EXAMPLES.get(role, ""))
        shape = shape_of(fallback)
    if role == OTHER or (role in (ISSUER, CUSTOMER, ADDRESS) and shape.pattern is not None):
        role = ""  # "Company ID" with example "HRB 1234": a code, not the company
    end = _end(name)
    if end and role in ("", ISSUE_DATE) and shape.kind == "date":
        # "Start Date", "End Date", "From Date": one end of a period (a flight, a service,
        # a term), found by the period's labels and ranges, not the issue date.
        role = PERIOD
    if shape.pattern is None and not example.strip() and _asks_rate(name, named):
        shape = Shape("percent", PERCENT)  # "Tax Rate", "VAT %": a rate, not the tax
    if shape.kind == "number" and (role in _NUMBERS or _identifies(name)):
        # "471102": one issuer's number is all digits, another's "R-2018-7"; a document's
        # number, or any "... Number" ("Account Number" printed as an IBAN), is a code of
        # any form, not a quantity.
        shape = code_shape(example)
    stated = _stated(name, description, example) if not role and shape.pattern is None else ""
    labels = role_labels(role)
    if role == PERIOD:
        labels += _END_LABELS.get(end, ())  # "From 1 March 2024" over "To 31 March 2024"
    return Understood(role, shape, labels, owner, bool(_AT_TOP.search(description)), end,
                      _described(description), stated, _avoided(labels, description),
                      _subject(name) if end else ())


# The last word of a name that asks for an identifier, not a quantity: "Account Number".
_ID_HEADS = frozenset({"id", "number", "no", "nr", "#", "code", "ref", "reference"})
# The last word of an English name is its head: "Tax Rate" is a rate, "Supplier ID" an
# identifier, "Total Hours" hours. A name headed by a word its first role does not
# cover asks for that word's thing, not the role's value.
# Measures that are no money, after a total's or a tax's word.
_NOT_MONEY = frozenset({"rate", "%", "percent", "percentage", "quantity", "qty", "hours",
                        "weight", "words", "items", "count", "pages", "units", "points",
                        "days", "discount", "savings", "volume", "distance", "miles", "km",
                        "date", *_ID_HEADS})
# Money words heading a name whose first role is a date's or a number's: "Due Amount",
# "PO Total".
_MONEY_HEADS = frozenset({"amount", "total", "sum", "value", "balance", "price"})
# Heads under which a party's word still names the party: "Vendor Name", "Customer
# Details", "Buyer Organisation".
_PARTY_HEADS = frozenset({"name", "details", "info", "information", "organisation",
                          "organization", "entity", "party", "firm", "company", "business"})
# Things with identifiers of their own: "Employee ID" is no document's number.
_THINGS = frozenset({"employee", "staff", "member", "patient", "item", "product", "part",
                     "article", "serial", "tracking", "batch", "lot", "model", "sku",
                     "vehicle", "license", "licence", "passport", "routing", "card",
                     "terminal", "register", "merchant", "store", "shop", "reg",
                     "registration", "company", "account", "phone", "fax"})


def _asks_rate(name: str, named: list[str]) -> bool:
    """Whether the name asks for a percentage: "VAT %", "Discount Percent", "Tax Rate"
    (not "Hourly Rate", an amount)."""
    words = _normal(name).split()
    return "%" in name or (bool(words) and (words[-1] in ("percent", "percentage") or (
        words[-1] == "rate" and TAX in named)))


def _headed(name: str, role: str, named: list[str]) -> str:
    """The role as the name's head word leaves it (see _NOT_MONEY and the rest)."""
    if role in (TOTAL, SUBTOTAL, TAX) and "%" in name:
        return ""  # "VAT %": a rate
    words = _normal(name).split()
    if len(words) < 2:
        return role
    head = words[-1]
    if role == DOCUMENT_NUMBER and head in _ID_HEADS and words[-2] in _THINGS:
        return ""  # "Employee ID", "Serial Number", "Tracking Number"
    phrase = f" {' '.join(words)} "
    if any(phrase.endswith(f" {cue} ") for cue in _CUES.get(role, ())):
        return role  # the role's own words head the name: "Sold To", "Grand Total"
    if role in (TOTAL, SUBTOTAL, TAX) and head in _NOT_MONEY:
        return ""  # "Tax Rate", "Total Hours", "VAT Registration Number", "Paid Date"
    if role in (*_NUMBERS, ISSUE_DATE, DUE_DATE) and head in _MONEY_HEADS:
        return TOTAL  # "Due Amount", "PO Total": an amount
    if role in (ISSUER, CUSTOMER) and head not in _PARTY_HEADS:
        # "Customer PO" is an order's number; "Supplier ID", "Store Number", "Seller Tax
        # ID", "Supplier VAT" identify the party or its tax, no party's name.
        return ORDER_NUMBER if ORDER_NUMBER in named else ""
    return role


_JURISDICTION_WORDS = frozenset({"law", "laws", "jurisdiction", "governed", "governing",
                                 "venue", "forum"})
_DURATION_NAMES = frozenset({"term", "duration", "period", "length", "tenure"})
_PARTY_WORDS = frozenset({"party", "parties", "signatory", "signatories", "counterparty",
                          "counterparties", "contracting"})
_DURATION_EXAMPLE = re.compile(r"^\d+\s*(?:days?|weeks?|months?|years?)$", re.IGNORECASE)


def _stated(name: str, description: str, example: str) -> str:
    """Which kind of stated value a target without a role asks for, if any."""
    named, described = set(_normal(name).split()), set(_normal(description).split())
    if named & _PARTY_WORDS:
        return PARTIES
    if (named | described) & _JURISDICTION_WORDS:
        return JURISDICTION
    if named & _DURATION_NAMES or _DURATION_EXAMPLE.match(example.strip()) or (
            "how long" in _normal(description)):
        return DURATION
    return ""


_NUMBERS = (DOCUMENT_NUMBER, ORDER_NUMBER, TRANSACTION_NUMBER)
def _identifies(name: str) -> bool:
    """Whether the name asks for an identifier: "Account Number", "Customer ID"."""
    words = _normal(name).split()
    return bool(words) and words[-1] in _ID_HEADS
_START = frozenset({"start", "from", "begin", "beginning", "first", "begins", "starts"})
_END = frozenset({"end", "to", "until", "till", "through", "last", "ends", "expiry"})


# The labels of one end of a period printed apart from the other. Not "Start Date" or
# "End Date": a schedule heads its columns so, over every week's dates.
_END_LABELS = {"start": ("From", "Begin", "Valid From", "Von", "Effective", "Effective From",
                         "Commencement", "Commencement Date"),
               "end": ("To", "Until", "Through", "Valid Until", "Bis", "Expiry", "Expiry Date",
                       "Date of Expiry", "Expiration", "Expiration Date", "Expires")}


def _end(name: str) -> str:
    """Which end of a range a name asks for: "Flight Start" the first date, "Valid Until"
    the last."""
    words = set(_normal(name).split())
    if words & _START:
        return "start"
    if words & _END:
        return "end"
    return ""


# Words of a range's name that say nothing of what the range is of.
_PLAIN_RANGE_WORDS = _START | _END | {"date", "dates", "day", "time", "period", "range"}


def _subject(name: str) -> tuple[str, ...]:
    """What a range's end is of, from the target's name: "Flight Start" a flight's,
    "Contract End Date" a contract's; () for "Start Date"."""
    return tuple(w for w in _normal(name).split()
                 if w.isalpha() and w not in _PLAIN_RANGE_WORDS and w not in _STOP)


# Words a label ends in: a phrase of the description ending in one ("the flight dates",
# "the gross total", "the order number") names a label the document may print.
_HEADS = frozenset({"number", "no", "date", "dates", "amount", "total", "name", "period",
                    "reference", "id", "code", "law", "term", "address"})
_STOP = frozenset({"the", "a", "an", "of", "its", "this", "that", "which", "is", "in", "on",
                   "at", "for", "by", "to", "and", "or", "with", "as", "it", "be", "own",
                   "first", "last", "usually", "each", "one", "their", "his", "her", "any",
                   "some", "all", "may", "not", "from", "after", "before", "printed"})
# A clause naming what the value is not: "(the gross total, not the smaller net amount)".
_NEGATED = re.compile(r"\b(?:not|never|rather than|instead of|other than|excluding)\b[^.;,()]*",
                      re.IGNORECASE)


@lru_cache(maxsize=1024)
def _described(description: str) -> tuple[str, ...]:
    """Label phrases of two or three words the description's prose names, negated
    clauses left out."""
    found: list[str] = []
    # Within a clause: a list of labels ("Total", "Grand Total") runs no phrases together.
    for clause in _CLAUSES.split(_NEGATED.sub(" ", description)):
        words = _normal(clause).split()
        for index, word in enumerate(words):
            if word not in _HEADS:
                continue
            for size in (3, 2):
                phrase = words[max(0, index - size + 1): index + 1]
                if len(phrase) == size and not any(w in _STOP or w in _HEADS or not w.isalpha()
                                                   for w in phrase[:-1]):
                    found.append(" ".join(phrase).title())
    return tuple(dict.fromkeys(found))


# What the description says the value is not: "(the gross total, not the smaller net
# amount)", "rather than the due date". "Excluding" is left out: "the total excluding
# VAT" says what the value holds, not which printed value it is.
_NOT_THIS = re.compile(r"\b(?:not|never|rather than|instead of|other than)\b([^.;,()]*)",
                       re.IGNORECASE)


def _avoided(labels: tuple[str, ...], description: str) -> tuple[str, ...]:
    """The role's labels naming what the description says the value is not ("Net Total"
    for a total described as "not the smaller net amount")."""
    negated = {w for clause in _NOT_THIS.findall(description) for w in _normal(clause).split()
               if w not in _STOP and w not in _HEADS and w.isalpha() and len(w) > 2}
    # A word's spelling variants too: "Nett Total" is a net total. Three letters at
    # least: "not in US dollars" says nothing of "USt".
    return tuple(label for label in labels if any(
        word.startswith(n) for word in _normal(label).split() for n in negated))


_CLAUSES = re.compile(r"[,;:.()\"“”„«»]|(?<![A-Za-z])'|'(?![A-Za-z])|\bor\b|\band\b")


def _normal(text: str) -> str:
    """Lower case, words apart, possessives dropped: "The supplier's name" -> "the
    supplier name"."""
    text = re.sub(r"[’']s\b", "", text.lower())
    text = re.sub(r"[^\w#.&-]+", " ", text)
    return " ".join(t if t == "p.o." else t.strip(".") for t in _SPLIT.split(text))


def _roles(text: str, prose: bool = False) -> list[str]:
    """Roles whose cues the text holds, the first named first (ties by _RANK); in `prose`
    (a description) without the cues that only a name makes a role of."""
    words = f" {_normal(text)} "
    found: dict[str, tuple[int, int]] = {}
    for role, cues in _CUES.items():
        for cue in cues:
            if prose and cue in _NAME_ONLY:
                continue
            at = words.find(f" {cue} ")
            if at >= 0:
                # The longest cue at a position speaks ("sold to" over "sold").
                key = (at, -len(cue))
                found[role] = min(found.get(role, key), key)
    return sorted(found, key=lambda r: (*_covering(found[r], found), _RANK.index(r)))


def _covering(key: tuple[int, int], found: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """A cue inside a longer cue of another role ranks after it ("date" inside "due
    date", "number" inside "order number"): its position becomes the longer one's."""
    at, length = key[0], -key[1]
    for other_at, other_negative in found.values():
        other_length = -other_negative
        if other_length > length and other_at <= at and at + length <= other_at + other_length:
            return (other_at, 1)
    return (at, 0)



_WORDS = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=1)
def _cue_words() -> frozenset[str]:
    return frozenset(cue for cues in _CUES.values() for cue in cues if " " not in cue)


def other_field_labels() -> tuple[str, ...]:
    """The printed labels of fields the engine has no role for, of two words or more
    ("Tax ID", "Customer Number", "Account Executive"): on the page such a phrase is that
    field's label, and a target's shorter label inside it ("Tax", "Customer",
    "Account") is not the target's."""
    return tuple(cue for cue in _CUES[OTHER] if " " in cue)


# Labels of the address a document goes to, not of its issuer's: where the goods are
# delivered or the bill is sent.
_RECIPIENT_ADDRESS = (
    "delivery address", "shipping address", "ship to address", "billing address",
    "bill to address", "invoice address", "customer address", "lieferadresse",
    "lieferanschrift", "rechnungsadresse", "rechnungsanschrift", "adresse de livraison",
    "adresse de facturation", "afleveradres", "factuuradres", "dirección de entrega",
    "dirección de facturación", "indirizzo di consegna", "indirizzo di fatturazione",
)


def recipient_address_labels() -> tuple[str, ...]:
    """The printed labels of the address a document is delivered or billed to
    ("Delivery Address", "Lieferadresse"): with no target for that address in a
    configuration, such a phrase labels another field, and the issuer's "Address"
    inside it is not the issuer's."""
    return _RECIPIENT_ADDRESS


def field_words_only(text: str) -> bool:
    """A phrase made only of the words that name fields ("Phone/Fax", "Salesperson",
    "Customer"): a label standing where a name is expected, never the name."""
    words = _WORDS.findall(text.lower())
    return bool(words) and all(word in _cue_words() for word in words)
