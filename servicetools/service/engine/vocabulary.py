"""What a configuration's labels are called in other languages, and aliases in plain prose.

A user writes "Invoice Number" once; the document may print "Rechnungsnummer",
"N° de facture", "Factuurnr.", "Número de factura" or "Numero fattura". Labels are
compared as keys (lower case, no spaces or punctuation, see `fields.label_key`), so
each entry maps the key of a common English label to the printed labels of the same
meaning in German, French, Dutch, Spanish and Italian. Only labels of the built-in
kinds are here (numbers, dates, amounts, names, addresses); a label that is not
known simply has no translations.

Descriptions may name a target's labels with or without quotes: ``printed after
"Total"``, ``after 'Total'``, ``after “Total”`` and ``labelled Total, Amount Due or
Balance`` all name them.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["block_headings", "column_key", "column_synonyms", "described_aliases", "role_labels",
           "translations"]

_INVOICE_NUMBER = (
    "Rechnungsnummer", "Rechnungs-Nr", "Rechnung Nr", "Rechnungsnr", "Belegnummer",
    "Beleg-Nr", "Numéro de facture", "N° de facture", "No de facture", "Facture N°",
    "Facture n°", "Facture No", "Factuurnummer", "Factuurnr", "Factuur nr",
    "Número de factura", "Nº de factura", "Factura nº", "Factura N°", "Numero fattura",
    "Fattura n", "N. fattura", "Numero documento", "Invoice Number", "Invoice No",
    "Invoice #", "Invoice Nr", "Inv No", "Bill No", "Document No",
)
_DATE = ("Datum", "Date", "Fecha", "Data")
_INVOICE_DATE = (
    "Rechnungsdatum", "Belegdatum", "Ausstellungsdatum", "Datum der Rechnung",
    "Rechnung vom", "Date de facture", "Date de la facture", "Facture du",
    "Date de facturation", "Date d'émission", "Date facture", "Factuurdatum",
    "Fecha de factura", "Fecha de la factura", "Fecha de emisión", "Fecha factura",
    "Data fattura", "Data della fattura",
    "Data documento", "Data di emissione", "Invoice Date", "Date of Issue", "Issue Date",
    "Billing Date", "Issued on", "Issued at", "Date issued", *_DATE,
)
_DUE_DATE = (
    "Fälligkeitsdatum", "Fällig am", "Zahlbar bis", "Date d'échéance", "Échéance",
    "Vervaldatum", "Fecha de vencimiento", "Vencimiento", "Data di scadenza", "Scadenza",
    "Scadenza pagamento", "Data scadenza",
)
_TOTAL = (
    "Gesamtbetrag", "Gesamtsumme", "Rechnungsbetrag", "Endbetrag", "Bruttobetrag",
    "Zahlbetrag", "Zu zahlen", "Endsumme", "Bruttosumme", "Brutto", "Rechnungssumme",
    "Summe brutto", "Gesamt", "Summe", "Total TTC", "Montant TTC", "Total facture TTC",
    "Facture TTC", "Net à payer", "Total à payer", "Montant total", "Totaal", "Totaalbedrag",
    "Te betalen", "Rekeningsbedrag", "Factuurbedrag", "Totaal te betalen", "Montant à payer",
    "Importe total", "Total a pagar", "Totale", "Totale documento",
    "Importo totale", "Totale da pagare", "Total", "Grand Total", "Total Due",
    "Total Amount", "Amount Payable", "Nett Total", "Amount Due", "Balance Due",
    "Net Total", "Total Payable", "Total Incl", "Rounded Total", "Total Rounded",
    "Gross Total", "Gross Amount", "Total Gross", "Amount Paid", "Total Paid", "Payé",
    "Invoice Total", "Invoice Amount", "Total Invoice Amount",
    "Montant payé", "Bezahlt", "Gezahlt", "Betaald", "Pagado", "Pagato",
)
# What is still to pay after deposits and earlier balances.
_AMOUNT_DUE = ("Amount Due", "Balance Due", "Offener Betrag", "Restbetrag", "Solde dû",
               "Reste à payer", "Openstaand bedrag", "Saldo pendiente", "Saldo da pagare")
_SUBTOTAL = (
    "Zwischensumme", "Nettobetrag", "Netto", "Summe netto", "Warenwert", "Sous-total", "Total HT",
    "Montant HT", "Subtotaal", "Base imponible", "Subtotale", "Imponibile",
    "Nettosumme", "Gesamt netto", "Summe ohne USt", "Summe ohne MwSt",
    "Rechnungssumme ohne USt", "Rechnungsbetrag netto", "Gesamtbetrag netto",
    "Total excl. VAT", "Total excluding VAT", "Total net", "Total HT", "Total hors taxes",
    "Totaal excl. BTW", "Total sin IVA", "Totale imponibile",
)
_TAX = (
    "MwSt", "USt", "Mehrwertsteuer", "Umsatzsteuer", "TVA", "Montant TVA", "BTW", "IVA",
    "Steuerbetrag", "MwSt-Betrag", "USt-Betrag", "Summe USt", "Total TVA", "BTW-bedrag",
    "Importe IVA", "Totale IVA", "VAT amount", "Total VAT", "Total tax", "Total taxes", "Taxes",
    # The tax column of a receipt's VAT summary: "Steuer %  Netto  Steuer  Brutto",
    # "IVA  Base imponible  Cuota".
    "Steuer", "Cuota", "Cuota IVA",
)
_VENDOR = (
    "Verkäufer", "Absender", "Rechnungssteller", "Fournisseur", "Vendeur",
    "Émetteur", "Leverancier", "Proveedor", "Vendedor", "Emisor", "Fornitore", "Venditore",
)
_CUSTOMER = (
    "Kunde", "Rechnungsempfänger", "Empfänger", "Client", "Facturé à", "Destinataire",
    "Klant", "Cliente", "Facturar a", "Destinatario", "Spett.le", "Spettabile", "Aan",
)
# Headings of the address blocks beside the buyer's and seller's: never a name's value.
_BLOCK_HEADINGS = (
    "Ship To", "Shipped To", "Deliver To", "Delivery Address", "Remit To", "Sold To",
    "Bill To", "Billed To", "Invoice To", "Lieferadresse", "Lieferanschrift", "Warenempfänger",
    "Rechnungsadresse", "Rechnungsempfänger", "Adresse de livraison", "Livré à", "Facturé à",
    "Afleveradres", "Factuuradres", "Dirección de envío", "Indirizzo di spedizione",
    # Who a quote or an Italian letter is made out to: "Prepared for", "Spett.le".
    "Prepared For", "Spett.le", "Spettabile",
)
_ADDRESS = ("Adresse", "Anschrift", "Adres", "Dirección", "Indirizzo")
# The delivery's date: a field of its own (roles.OTHER), never the invoice's date.
_DELIVERY_DATE = ("Delivery Date", "Date of delivery", "Delivered on", "Lieferdatum",
                  "Leistungsdatum", "Liefer- und Leistungsdatum", "Date de livraison",
                  "Leverdatum", "Leveringsdatum", "Fecha de entrega", "Data di consegna",
                  "Data consegna")
_RECEIPT_NUMBER = ("Bon-Nr", "Bonnummer", "Beleg-Nr", "Ticket n°", "N° de ticket",
                   "Bonnr", "Ticket nº", "Scontrino n",
                   # A restaurant's check, a ride's trip, a Spanish simplified invoice.
                   "Ticket #", "Ticket No", "Check #", "Check No", "Trip #", "Trip No",
                   "Factura simplificada")

# A bank statement's balances, holder and account; a stay's dates; a service's date.
_OPENING_BALANCE = ("Opening Balance", "Beginning Balance", "Previous Balance", "Starting Balance",
                    "Balance brought forward", "Brought forward", "Alter Kontostand",
                    "Anfangssaldo", "Alter Saldo", "Solde précédent", "Ancien solde",
                    "Solde initial", "Saldo inicial", "Saldo anterior", "Saldo iniziale",
                    "Beginsaldo", "Vorig saldo")
_CLOSING_BALANCE = ("Closing Balance", "Ending Balance", "New Balance", "Final Balance",
                    "Balance carried forward", "Carried forward", "Neuer Kontostand",
                    "Endsaldo", "Neuer Saldo", "Nouveau solde", "Solde final", "Saldo final",
                    "Saldo finale", "Eindsaldo", "Nieuw saldo")
_ACCOUNT_HOLDER = ("Account Holder", "Account Name", "Name of Account Holder", "Kontoinhaber",
                   "Titulaire du compte", "Titular de la cuenta", "Titolare del conto",
                   "Intestatario", "Rekeninghouder", "Tenaamstelling")
_ACCOUNT_NUMBER = ("Account Number", "Account No", "Account #", "Acct No", "IBAN",
                   "Kontonummer", "Konto-Nr", "Numéro de compte", "N° de compte",
                   "Número de cuenta", "Numero di conto", "Numero conto", "Rekeningnummer")
_CHECK_IN = ("Check-in", "Check in", "Arrival", "Arrival Date", "Arrivée", "Date d'arrivée",
             "Anreise", "Ankunft", "Llegada", "Entrada", "Arrivo", "Aankomst")
_CHECK_OUT = ("Check-out", "Check out", "Departure", "Departure Date", "Départ",
              "Date de départ", "Abreise", "Abfahrt", "Salida", "Partenza", "Vertrek")
_SERVICE_DATE = ("Service Date", "Date of Service", "Leistungsdatum", "Date de prestation",
                 "Fecha de servicio", "Data del servizio", "Datum van dienst")

# Keys of English labels -> printed labels of the same meaning.
_TABLE: dict[str, tuple[str, ...]] = {
    "invoicenumber": _INVOICE_NUMBER, "invoiceno": _INVOICE_NUMBER,
    "invoice#": _INVOICE_NUMBER, "invno": _INVOICE_NUMBER,
    "date": _DATE, "invoicedate": _INVOICE_DATE, "dateofissue": _INVOICE_DATE,
    "issuedate": _INVOICE_DATE, "duedate": _DUE_DATE, "paymentdue": _DUE_DATE,
    "total": _TOTAL, "totaldue": _TOTAL, "grandtotal": _TOTAL, "amountdue": _AMOUNT_DUE,
    "balancedue": _AMOUNT_DUE,
    "subtotal": _SUBTOTAL, "netamount": _SUBTOTAL,
    "tax": _TAX, "vat": _TAX, "salestax": _TAX,
    "vendor": _VENDOR, "supplier": _VENDOR, "seller": _VENDOR,
    "customer": _CUSTOMER, "billto": _CUSTOMER,
    "address": _ADDRESS,
    "deliverydate": _DELIVERY_DATE, "dateofdelivery": _DELIVERY_DATE,
    "receiptnumber": _RECEIPT_NUMBER, "receiptno": _RECEIPT_NUMBER,
    "openingbalance": _OPENING_BALANCE, "beginningbalance": _OPENING_BALANCE,
    "previousbalance": _OPENING_BALANCE, "startingbalance": _OPENING_BALANCE,
    "closingbalance": _CLOSING_BALANCE, "endingbalance": _CLOSING_BALANCE,
    "newbalance": _CLOSING_BALANCE, "finalbalance": _CLOSING_BALANCE,
    "accountholder": _ACCOUNT_HOLDER, "accountname": _ACCOUNT_HOLDER,
    "accountnumber": _ACCOUNT_NUMBER, "accountno": _ACCOUNT_NUMBER,
    "checkin": _CHECK_IN, "arrival": _CHECK_IN, "arrivaldate": _CHECK_IN,
    "checkout": _CHECK_OUT, "departure": _CHECK_OUT, "departuredate": _CHECK_OUT,
    "servicedate": _SERVICE_DATE, "dateofservice": _SERVICE_DATE,
}
# Printed labels of each role a target may have (roles.py), English first: what a
# configuration's target of that role finds whatever the user called it.
_ROLES: dict[str, tuple[str, ...]] = {
    # Who is paid is who issued the bill: "Payable To", "Remit To", "Pay To".
    "issuer": ("Vendor", "Supplier", "Seller", "From", "Sold By", "Issued By", "Merchant",
               "Store", "Payable To", "Remit To", "Pay To", "Payee", *_VENDOR),
    # Media orders and invoices name their customer the advertiser.
    "customer": ("Customer", "Bill To", "Billed To", "Sold To", "Invoice To", "Buyer",
                 "Client", "Advertiser", "Prepared For", "Billing Address", "Invoice Address",
                 # An insurance policy's customer.
                 "Policyholder", "Policy Holder", "Named Insured", "Insured", *_CUSTOMER),
    # A document's own number follows its title: an invoice's, a contract's, a statement's.
    "document_number": (*_INVOICE_NUMBER, "Contract Number", "Contract No", "Contract #",
                        "Statement No", "Statement #",
                        "Quote No", "Quote #", "Quotation No", "Credit Note No",
                        "Vertragsnummer", "Numéro de contrat", "Contractnummer",
                        "Número de contrato", "Numero contratto"),
    "transaction_number": ("Receipt No", "Receipt #", "Receipt Number", "Trans",
                           "Transaction", *_RECEIPT_NUMBER),
    # The customer's own reference for the order, on what answers it: "Your Order".
    "order_number": ("PO Number", "PO No", "PO #", "P.O. Number", "Purchase Order",
                     "Order No", "Order Number", "Bestellnummer", "Bestell-Nr",
                     "N° de commande", "Bestelnummer", "Número de pedido", "Numero ordine",
                     "Your Order", "Your Order No", "Ihre Bestellung", "Votre commande",
                     "Uw bestelling", "Su pedido", "Vostro ordine"),
    "issue_date": (*_INVOICE_DATE, "Purchase Date", "Transaction Date"),
    "due_date": ("Due Date", "Payment Due", "Due", "Pay By", *_DUE_DATE),
    "total": _TOTAL,
    # "Net total" before "VAT total" on a European invoice; a receipt's "Nett Total" is
    # what was paid, and stays the total's.
    "subtotal": ("Subtotal", "Sub-total", "Sub Total", "Net Amount", "Net Total", *_SUBTOTAL),
    "tax": ("Tax", "VAT", "GST", "Sales Tax", "Tax Amount", "Tax Total", "VAT Total", *_TAX),
    "address": ("Address", *_ADDRESS),
    # A period's printed labels, over a range "03/09/20 - 04/12/20" or "1 May to 3 June".
    "period": ("Period", "Dates", "Date Range", "Term", "Billing Period", "Service Period",
               "Flight Dates", "Schedule Dates", "Contract Dates", "Run Dates", "Zeitraum",
               "Leistungszeitraum", "Abrechnungszeitraum", "Période", "Periode", "Periodo"),
    "currency": ("Currency", "Währung", "Rechnungswährung", "Devise", "Valuta", "Moneda",
                 "Divisa", "Munteenheid"),
}


# A table's common columns, each as printed in English, German, French, Spanish, Italian
# and Dutch: a user who names a column "Quantity" finds "Qty", "Menge" or "Qté" over it.
_COLUMNS = (
    ("Description", "Item", "Items", "Details", "Article", "Product", "Service", "Services",
     "Designation",
     "Artikel", "Bezeichnung", "Beschreibung", "Leistung", "Désignation", "Libellé",
     "Descripción", "Concepto", "Descrizione", "Omschrijving"),
    # A service invoice counts its hours where goods are counted.
    ("Quantity", "Qty", "Quantities", "Units", "Pcs", "Hours", "Hrs", "Menge", "Anzahl",
     "Stunden", "Quantité", "Qté",
     "Cantidad", "Cant", "Quantità", "Qtà", "Aantal"),
    ("Unit Price", "Price", "Rate", "Unit Cost", "Price per Unit", "Each", "Einzelpreis",
     "Preis",
     "Prix unitaire", "Prix", "Precio unitario", "Precio", "Prezzo unitario", "Prezzo",
     "Prijs", "Stukprijs"),
    ("Amount", "Total", "Line Total", "Sum", "Betrag", "Gesamtpreis", "Gesamt", "Montant",
     "Importe", "Importo", "Bedrag", "Totaal"),
    ("Date", "Datum", "Fecha", "Data"),
    ("Unit", "UoM", "Einheit", "Unité", "Unidad", "Unità", "Eenheid"),
    ("Tax", "VAT", "Tax Rate", "VAT Rate", "MwSt", "USt", "TVA", "IVA", "BTW"),
    ("Balance", "Saldo", "Solde", "Kontostand"),
    ("Discount", "Rabatt", "Remise", "Descuento", "Sconto", "Korting"),
    ("Code", "SKU", "Item Code", "Article Number", "Part Number", "Artikelnummer", "Art.-Nr",
     "Référence", "Código", "Codice"),
)


def column_key(text: str) -> str:
    """A heading or a column's name compared: lower case, letters and digits only."""
    return re.sub(r"[\W_]+", "", text.lower())


@lru_cache(maxsize=1)
def _column_groups() -> dict[str, frozenset[str]]:
    groups: dict[str, frozenset[str]] = {}
    for group in _COLUMNS:
        keys = frozenset(column_key(name) for name in group)
        for key in keys:
            groups[key] = groups.get(key, frozenset()) | keys
    return groups


def column_synonyms(name: str) -> frozenset[str]:
    """The keys (`column_key`) of the headings that print a column of this name in the
    languages the engine reads; empty for a name the vocabulary does not hold."""
    return _column_groups().get(column_key(name), frozenset())


def role_labels(role: str) -> tuple[str, ...]:
    """Printed labels that introduce a value of the role; () for no role."""
    return _ROLES.get(role, ())


@lru_cache(maxsize=1)
def block_headings() -> frozenset[str]:
    """The address-block headings, lower case without spaces or punctuation."""
    return frozenset(re.sub(r"[\W_]+", "", h.lower()) for h in _BLOCK_HEADINGS)


def translations(key: str) -> tuple[str, ...]:
    """Printed labels meaning the same as the label with this key; () when none are known."""
    return _TABLE.get(key, ())


# Quotes of every kind: "x", 'x', “x”, ‘x’, „x“, «x».
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|„([^“”]+)[“”]|«\s*([^»]+?)\s*»|‘([^’]+)’"
                     r"|(?<![A-Za-z])'([^']+)'(?![A-Za-z])")
# Words that introduce a list of labels in prose.
_INTRO = re.compile(r"\b(?:labell?ed|printed (?:after|as|next to|beside|below|under)|after|"
                    r"next to|titled|called)\b\s*:?\s*", re.IGNORECASE)
_SEPARATORS = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b)\s*", re.IGNORECASE)
_LIST_END = re.compile(r"[.;(\n]|\s(?:at|on|in|which|that|where|when|as)\s", re.IGNORECASE)
_MAX_WORDS = 4


def described_aliases(description: str) -> list[str]:
    """Labels a description names: quoted phrases, or an unquoted list after "labelled"."""
    return list(_described(description))


# Every field of every group asks for its aliases, on every document: parse each
# description once.
@lru_cache(maxsize=1024)
def _described(description: str) -> tuple[str, ...]:
    found = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(description)]
    unquoted = _QUOTED.sub(" ", description)
    for intro in _INTRO.finditer(unquoted):
        rest = unquoted[intro.end():]
        end = _LIST_END.search(rest)
        items = _SEPARATORS.split(rest[: end.start()] if end else rest)
        for item in items:
            item = item.strip(" .:")
            # A list of labels holds short capitalised phrases, not prose.
            if item and len(item.split()) <= _MAX_WORDS and (item[0].isupper() or
                                                              item[0] in "#№"):
                found.append(item)
    return tuple(found)
