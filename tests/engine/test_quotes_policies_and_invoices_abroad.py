"""A user's own configuration, in English, on invoices printed in other languages and on
quotes, insurance policies and credit notes: a label in the column beside another label,
a line of labels taken for a sender's address, the customer's block under "Spett.le",
the tax's label after its rate, an offer or a credit note numbered in its title, the
parties and dates of a policy, and a till receipt's items, tax and number. Each document
is built here word by word."""

from __future__ import annotations

from servicetools.service.engine.lines import Line
from servicetools.service.engine.names import line_phrases
from servicetools.service.engine.page_model import Document, Page, Word
from servicetools.service.engine.roles import (
    CUSTOMER,
    DOCUMENT_NUMBER,
    ISSUER,
    understand,
)

from ..support.engine_documents import (
    extract_all,
    field_target,
    first_values,
    placed,
    read_document,
)

BILL_TO = field_target("to", "Bill To", "The customer the invoice is addressed to.", "Globex Corp")
SUPPLIER = field_target("from", "Supplier", "The business that sent us the invoice.",
                  "Acme Supplies Ltd")


def test_a_label_over_a_name_in_its_own_column_beside_other_labels() -> None:
    # "Cliente:" ends a line of labels; under it the customer's name shares its line with
    # the next label of the column before ("Fecha:"), which labels another value.
    invoice = placed(("FACTURA", 0.05, 0.03), ("Talleres Martínez S.L.", 0.60, 0.03),
                     ("Nº Factura:", 0.05, 0.12), ("A-2024/0057", 0.20, 0.12),
                     ("Cliente:", 0.55, 0.12),
                     ("Fecha:", 0.05, 0.14), ("05/06/2024", 0.20, 0.14),
                     ("Construcciones Ruiz S.A.", 0.55, 0.14))
    assert first_values(invoice, BILL_TO) == {"to": "Construcciones Ruiz S.A."}


def test_a_line_of_labels_or_a_customers_address_is_no_sender_line() -> None:
    # "Factuur  Factuurnummer  2024-0311" holds no postcode (a code's digits are none),
    # so the line under it is no addressee in a window: the customer is under "Aan:".
    invoice = placed(("Bakkerij de Vries B.V.", 0.60, 0.03),
                     ("Aan:", 0.05, 0.10), ("Café Het Hoekje", 0.05, 0.12),
                     ("Factuur", 0.05, 0.20), ("Factuurnummer", 0.50, 0.20),
                     ("2024-0311", 0.70, 0.20),
                     ("Factuurdatum", 0.50, 0.22), ("3 april 2024", 0.70, 0.22))
    assert first_values(invoice, BILL_TO) == {"to": "Café Het Hoekje"}
    # "Lee Dental, 45 Pine St, Boulder" beside "Valid until: 2024-07-31": an addressee's
    # line (no postcode in its own phrase), and the quote names its customer "Prepared for".
    quote = placed(("Summit Roofing Co.", 0.05, 0.03), ("QUOTATION", 0.70, 0.03),
                   ("Prepared for:", 0.05, 0.10), ("Quote # Q-5531", 0.60, 0.10),
                   ("Dana Lee", 0.05, 0.12), ("Date: 2024-07-01", 0.60, 0.12),
                   ("Lee Dental, 45 Pine St, Boulder", 0.05, 0.14),
                   ("Valid until: 2024-07-31", 0.60, 0.14),
                   ("Item", 0.05, 0.16), ("Qty", 0.40, 0.16), ("Total", 0.70, 0.16))
    customer = field_target("who", "Customer", "Who the quote is made out to.", "Jane Doe")
    assert first_values(quote, customer) == {"who": "Dana Lee"}


def test_the_name_under_the_customers_block_heading_is_not_the_issuer() -> None:
    # "Spett.le" (Italian "Messrs") heads the customer's block: the company with a legal
    # form under it is the customer, the letterhead without one the issuer.
    invoice = placed(("Studio Bianchi", 0.05, 0.03),
                     ("Via Roma 5, 20121 Milano", 0.05, 0.05),
                     ("Spett.le", 0.55, 0.10), ("Rossi Costruzioni S.r.l.", 0.55, 0.12),
                     ("Via Verdi 8, 10121 Torino", 0.55, 0.14),
                     ("Fattura n. 34/2024 del 18/09/2024", 0.05, 0.22),
                     ("Scadenza pagamento: 18/10/2024", 0.05, 0.40))
    due = field_target("due", "Payment Due", "The date by which payment must be made.",
                 "2024-03-31")
    assert first_values(invoice, SUPPLIER, BILL_TO, due) == {
        "from": "Studio Bianchi", "to": "Rossi Costruzioni S.r.l.", "due": "18/10/2024"}


def test_the_tax_labelled_after_its_rate() -> None:
    invoice = placed(("Nettobetrag", 0.50, 0.50), ("325,50 €", 0.80, 0.50),
                     ("zzgl. 19% MwSt.", 0.50, 0.52), ("61,85 €", 0.80, 0.52),
                     ("Rechnungsbetrag", 0.50, 0.54), ("387,35 €", 0.80, 0.54))
    vat = field_target("vat", "VAT Amount", "The VAT charged.", "20.00")
    assert first_values(invoice, vat) == {"vat": "61,85 €"}


def test_an_offer_and_a_credit_note_number_themselves_in_their_title() -> None:
    offer = placed(("Schreinerei Holzmann GmbH", 0.05, 0.03), ("Familie Weber", 0.05, 0.12),
                   ("Angebot Nr. 2024-117", 0.05, 0.25), ("Datum: 15.08.2024", 0.60, 0.14))
    number = field_target("no", "Quote Number", "The number of the quotation.", "Q-100")
    assert first_values(offer, number) == {"no": "2024-117"}
    # "Note" names no field of its own in "Credit Note Number": the document's number.
    credit = field_target("no", "Credit Note Number", "The number of the credit note.", "CN-1")
    assert understand(credit).role == DOCUMENT_NUMBER
    note = placed(("Elektro Braun KG", 0.05, 0.03), ("Gutschrift Nr. GS-2024-014", 0.05, 0.12),
                  ("Datum: 20.09.2024", 0.60, 0.12))
    assert first_values(note, credit) == {"no": "GS-2024-014"}


def test_an_insurance_policys_insurer_policyholder_and_expiry() -> None:
    insurer = field_target("insurer", "Insurer", "The insurance company.", "Acme Insurance")
    holder = field_target("holder", "Policyholder", "The person or persons insured.", "Jane Doe")
    end = field_target("end", "Cover End", "The day the insurance ends.", "2024-12-31")
    assert (understand(insurer).role, understand(holder).role) == (ISSUER, CUSTOMER)
    policy = placed(("Lakeside Mutual Insurance Company", 0.05, 0.03),
                    ("HOMEOWNERS POLICY DECLARATIONS", 0.05, 0.08),
                    ("Named Insured:", 0.05, 0.14), ("Robert and Linda Chen", 0.30, 0.14),
                    ("Date of expiry of insurance", 0.05, 0.18), ("9 January 2025", 0.50, 0.18))
    assert first_values(policy, insurer, holder, end) == {
        "insurer": "Lakeside Mutual Insurance Company", "holder": "Robert and Linda Chen",
        "end": "9 January 2025"}


def test_ocr_separators_split_a_sender_line_into_its_phrases() -> None:
    # OCR reads "Vogel GmbH · Ringstraße 4 · 50667 Köln" with the dot glued to a word or
    # as a full stop: both still end a phrase.
    x = 0.05
    words = []
    for token in ("Vogel", "GmbH·", "Ringstraße", "4", ".", "50667", "Köln"):
        words.append(Word(token, x, 0.03, x + 0.012 * len(token), 0.045, 0.9))
        x += 0.012 * len(token) + 0.006
    phrases = [" ".join(w.text for w in p) for p in line_phrases(Line(words, 1))]
    assert phrases == ["Vogel GmbH·", "Ringstraße 4", "50667 Köln"]


RECEIPT = [field_target("shop", "Shop", "The shop or business that gave the receipt.",
                        "Corner Store"),
           field_target("tax", "Tax", "The tax included in the total.", "1.10"),
           field_target("no", "Receipt Number", "The receipt or ticket number.", "1234")]


def test_a_till_receipts_items_tax_line_and_numbers() -> None:
    # "KG" ends an item priced on its line, no legal form of a name; the tax line
    # repeats its label before its own amount ("HT 9,25" is the net's).
    receipt = placed(("CARREFOUR MARKET", 0.30, 0.03), ("75019 PARIS", 0.35, 0.05),
                     ("12/03/24 14:32", 0.05, 0.09), ("TICKET N° 0042", 0.60, 0.09),
                     ("BAGUETTE", 0.05, 0.12), ("1,10", 0.85, 0.12),
                     ("POMMES GOLDEN KG", 0.05, 0.14), ("3,42", 0.85, 0.14),
                     ("TOTAL A PAYER", 0.05, 0.18), ("4,52 EUR", 0.80, 0.18),
                     ("TVA 5,5% HT 4,28 TVA 0,24", 0.05, 0.22))
    assert first_values(receipt, *RECEIPT) == {"shop": "CARREFOUR MARKET", "tax": "0,24",
                                          "no": "0042"}
    # A restaurant's check and a ride's trip number a receipt; the "#" is the label's.
    check = placed(("Joe's Diner", 0.30, 0.03), ("Server: Amy", 0.05, 0.09),
                   ("Check #1234", 0.60, 0.09))
    assert first_values(check, RECEIPT[2]) == {"no": "1234"}
    trip = placed(("Yellow Cab Co.", 0.30, 0.03), ("Trip #: 88213", 0.05, 0.09))
    assert first_values(trip, RECEIPT[2]) == {"no": "88213"}


def test_the_tax_column_of_a_receipts_vat_summary() -> None:
    receipt = placed(("REWE Markt GmbH", 0.30, 0.03),
                     ("SUMME", 0.05, 0.10), ("EUR 6,02", 0.75, 0.10),
                     ("Steuer %", 0.05, 0.14), ("Netto", 0.30, 0.14), ("Steuer", 0.50, 0.14),
                     ("Brutto", 0.70, 0.14),
                     ("A= 19,0%", 0.05, 0.16), ("1,88", 0.30, 0.16), ("0,36", 0.50, 0.16),
                     ("2,24", 0.70, 0.16),
                     ("B= 7,0%", 0.05, 0.18), ("3,53", 0.30, 0.18), ("0,25", 0.50, 0.18),
                     ("3,78", 0.70, 0.18),
                     ("Gesamtbetrag", 0.05, 0.20), ("5,41", 0.30, 0.20), ("0,61", 0.50, 0.20),
                     ("6,02", 0.70, 0.20))
    assert first_values(receipt, RECEIPT[1]) == {"tax": "0,61"}


def test_one_date_after_two_labels_and_a_name_under_the_billing_address() -> None:
    invoice = placed(("Invoice", 0.05, 0.03), ("Sold by: TechGear Outlet LLC", 0.05, 0.08),
                     ("Invoice date / Delivery date: 14 March 2024", 0.50, 0.08),
                     ("Billing Address", 0.05, 0.14), ("Delivery Address", 0.50, 0.14),
                     ("Oliver Bennett", 0.05, 0.16), ("Oliver Bennett", 0.50, 0.16))
    date = field_target("date", "Invoice Date", "When the invoice was issued.", "2024-03-01")
    assert first_values(invoice, date, BILL_TO) == {"date": "14 March 2024",
                                               "to": "Oliver Bennett"}


def test_the_addressee_block_under_the_letterhead_without_a_sender_line() -> None:
    customer = field_target("who", "Customer", "Who the quote is made out to.", "Jane Doe")
    offer = placed(("Schreinerei Holzmann GmbH", 0.05, 0.03),
                   ("Waldweg 1 · 79098 Freiburg", 0.05, 0.05),
                   ("Familie Weber", 0.05, 0.12), ("Datum: 15.08.2024", 0.60, 0.12),
                   ("Bergstraße 21", 0.05, 0.14), ("79100 Freiburg", 0.05, 0.16),
                   ("Angebot Nr. 2024-117", 0.05, 0.25))
    values = extract_all(offer, {"id": "c", "name": "mine", "extraction_targets": [customer]})
    found = values["who"].values[0]
    assert found.text == "Familie Weber"
    assert found.confidence < 0.9  # no label grounds it
    # The issuer's block going on under its name is not another party's.
    letterhead = placed(("Holzmann GmbH", 0.05, 0.03), ("Abteilung Vertrieb", 0.05, 0.05),
                        ("Waldweg 1", 0.05, 0.07), ("79098 Freiburg", 0.05, 0.09),
                        ("Angebot Nr. 2024-117", 0.05, 0.25))
    assert first_values(letterhead, customer) == {"who": ""}


def test_an_amount_no_number_can_be_read_from_stays_under_0_9() -> None:
    # OCR ran two amounts together ("1,88  0,36" read "1.800.36"): of an amount's shape,
    # but no number; the same line read right keeps its confidence.
    total = field_target("total", "Total Paid", "The total the customer paid.", "12.50")
    misread = extract_all(read_document("Joe's Diner", "TOTAL 1.800.36"),
                          {"id": "c", "name": "mine", "extraction_targets": [total]})
    read = extract_all(read_document("Joe's Diner", "TOTAL 1,800.36"),
                       {"id": "c", "name": "mine", "extraction_targets": [total]})
    assert misread["total"].values[0].text == "1.800.36"
    assert misread["total"].values[0].confidence < 0.9
    assert read["total"].values[0].confidence >= 0.9


def test_a_headings_first_word_beside_a_name_label_is_no_name() -> None:
    # As OCR read a scanned invoice: beside "Billing Address" the next block's heading
    # "Delivery" is no customer; the name is under the label.
    words = [
        ("Total", 0.5363, 0.1562, 0.5748, 0.1724), ("payable:", 0.5802, 0.1562, 0.6437, 0.1724),
        ("£68.39", 0.6484, 0.1562, 0.6944, 0.1724),
        ("Billing", 0.0963, 0.1951, 0.1424, 0.214), ("Address", 0.1493, 0.1951, 0.2106, 0.214),
        ("Delivery", 0.5385, 0.195, 0.5992, 0.2131), ("Address", 0.6067, 0.195, 0.6673, 0.2131),
        ("Oliver", 0.0968, 0.2134, 0.1386, 0.2299), ("Bennett", 0.1446, 0.2134, 0.1993, 0.2299),
        ("Oliver", 0.5384, 0.2123, 0.5779, 0.2291), ("Bennett", 0.5845, 0.2123, 0.6407, 0.2291)]
    invoice = Document("image/jpeg", [Page(1, 1275, 1650, b"", [
        Word(text, *box, 0.99) for text, *box in words], "ocr")])
    assert first_values(invoice, BILL_TO) == {"to": "Oliver Bennett"}


def test_a_french_configuration_on_a_french_invoice() -> None:
    invoice = placed(("Boulangerie Dupont SARL", 0.05, 0.03), ("FACTURE", 0.70, 0.03),
                     ("Facture n° F2024-118", 0.55, 0.10), ("Date : 12/03/2024", 0.55, 0.12),
                     ("Échéance : 11/04/2024", 0.55, 0.14),
                     ("Total HT", 0.55, 0.40), ("400,00 €", 0.85, 0.40),
                     ("TVA 5,5 %", 0.55, 0.42), ("22,00 €", 0.85, 0.42),
                     ("Total TTC", 0.55, 0.44), ("422,00 €", 0.85, 0.44))
    targets = (field_target("due", "Date d'échéance", "La date limite de paiement.", "31/03/2024"),
               field_target("net", "Montant HT", "Le total hors taxes.", "100,00"),
               field_target("gross", "Montant TTC", "Le total toutes taxes comprises.", "120,00"))
    assert first_values(invoice, *targets) == {"due": "11/04/2024", "net": "400,00 €",
                                          "gross": "422,00 €"}


def test_a_rate_is_no_tax_amount_and_an_employees_id_no_invoice_number() -> None:
    invoice = placed(("Bright Sparks Electrical LLC", 0.05, 0.03), ("INVOICE", 0.70, 0.03),
                     ("Invoice # 10482", 0.60, 0.10), ("Bill To: Greenleaf Apartments", 0.05, 0.10),
                     ("VAT 20%", 0.55, 0.40), ("218.00", 0.85, 0.40),
                     ("Total", 0.55, 0.44), ("$1,308.00", 0.85, 0.44))
    targets = (field_target("rate", "VAT %", ""), field_target("hours", "Total Hours", ""),
               field_target("employee", "Employee ID", ""), field_target("po", "Customer PO", ""),
               field_target("vat", "Supplier VAT Number", ""))
    assert first_values(invoice, *targets) == {"rate": "20%", "hours": "", "employee": "",
                                          "po": "", "vat": ""}
