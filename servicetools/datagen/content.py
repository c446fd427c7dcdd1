"""Random but plausible content of invoices and receipts: parties, items, totals.

Everything here is drawn from the ``random.Random`` passed in, so one seed gives
one document. The label synonyms are the aliases quoted in the descriptions of
``data/configurations/invoices.json`` and ``receipts.json``.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from decimal import Decimal

from servicetools.datagen.printed import DATE_FORMATS, MONEY_STYLES, MoneyStyle, cents

# Label aliases, as quoted in the configurations' descriptions.
INVOICE_NUMBER_LABELS = ("Invoice No", "Invoice #", "Invoice Number", "Inv. No")
INVOICE_DATE_LABELS = ("Invoice Date", "Date of Issue", "Issue Date", "Date")
DUE_DATE_LABELS = ("Due Date", "Payment Due", "Due")
VENDOR_LABELS = ("From", "Vendor", "Supplier", "Seller")
CUSTOMER_LABELS = ("Bill To", "Billed To", "Customer", "Sold To")
SUBTOTAL_LABELS = ("Subtotal", "Sub-total", "Net Amount")
TAX_LABELS = ("Tax", "VAT", "Sales Tax", "GST")
INVOICE_TOTAL_LABELS = ("Total", "Total Due", "Amount Due", "Grand Total", "Balance Due")

RECEIPT_DATE_LABELS = ("Date", "Purchase Date")
RECEIPT_NUMBER_LABELS = ("Receipt No", "Receipt #", "Trans", "Transaction")
RECEIPT_TOTAL_LABELS = ("Total", "Total Due", "Amount", "Grand Total")
PAYMENT_LABELS = ("Paid By", "Payment", "Tender")
PAYMENT_METHODS = ("VISA", "Visa", "MASTERCARD", "Mastercard", "CASH", "Cash", "DEBIT", "AMEX")

# Column headers matching the header regexes of the ``Line Items``/``Items`` schema.
DESCRIPTION_HEADERS = ("Description", "Item", "Product", "Service", "Details", "Article")
QUANTITY_HEADERS = ("Qty", "Quantity", "Units", "Qty.")
HOURS_HEADERS = ("Hrs", "Hours")
PRICE_HEADERS = ("Unit Price", "Price", "Rate", "Unit Cost", "Each")
AMOUNT_HEADERS = ("Amount", "Total", "Line Total", "Sum")

_COMPANY_FIRST = (
    "Acme", "Northwind", "Bluebird", "Harbor", "Summit", "Crescent", "Ironwood", "Juniper",
    "Keystone", "Lakeside", "Meridian", "Oakridge", "Pinnacle", "Quarry", "Redwood",
    "Silverline", "Tidewater", "Umbra", "Vantage", "Westfield", "Brightpath", "Copperleaf",
    "Evergreen", "Foxglove", "Granite", "Hollis", "Kestrel", "Larkspur", "Norland", "Orchard",
)  # fmt: skip
_COMPANY_SECOND = (
    "Supplies", "Consulting", "Logistics", "Office Solutions", "Engineering", "Print Works",
    "Software", "Electrical", "Facilities", "Catering", "Design Studio", "Hardware",
    "Analytics", "Packaging", "Media", "Labs", "Systems", "Trading",
)  # fmt: skip
_COMPANY_SUFFIX = ("Ltd", "LLC", "Inc.", "GmbH", "& Co.", "Corp.", "B.V.", "S.A.", "")
_PEOPLE_FIRST = ("Jane", "Omar", "Priya", "Lukas", "Maria", "Chen", "Amara", "Tom", "Sofia")
_PEOPLE_LAST = ("Doe", "Haddad", "Sharma", "Becker", "Rossi", "Wei", "Okafor", "Baker", "Lind")
_STREETS = (
    "Market Street", "Station Road", "Elm Avenue", "Harbour Way", "Mill Lane", "King Street",
    "Park Road", "Bahnhofstrasse", "Rue de la Paix", "Canal Street", "High Street", "Oak Drive",
)  # fmt: skip
_CITIES = (
    ("Springfield", "62704"), ("Bristol", "BS1 4DJ"), ("Hamburg", "20095"), ("Lyon", "69002"),
    ("Austin", "78701"), ("Leeds", "LS1 5AB"), ("Utrecht", "3511 AB"), ("Denver", "80202"),
    ("Munich", "80331"), ("Portland", "97205"), ("Dublin", "D02 X285"), ("Toronto", "M5V 2T6"),
)  # fmt: skip
_GOODS = (
    "USB-C cable 2m", "A4 copy paper, 500 sheets", "Toner cartridge black", "Desk lamp LED",
    "Ergonomic office chair", "Wireless mouse", "Mechanical keyboard", "27in monitor",
    "Shipping boxes, medium", "Packing tape 50m", "Whiteboard markers (4)", "Stapler heavy duty",
    "Label printer rolls", "Safety gloves, size L", "Hi-vis vest", "Cable ties 200mm",
    "Laptop stand aluminium", "Network switch 8-port", "HDMI adapter", "Printer paper A3",
    "Coffee beans 1kg", "Filter papers", "Hand sanitiser 500ml", "Microfibre cloths",
    "LED panel 60x60", "Extension lead 4-way", "Drill bits set", "Wood screws 4x40",
)  # fmt: skip
_SERVICES = (
    "Consulting", "System design workshop", "On-site support", "Software development",
    "Project management", "Data migration", "Network installation", "Training session",
    "Code review", "Photography", "Copywriting", "Translation", "Cleaning service",
    "Equipment rental", "Maintenance visit", "Delivery and installation",
)  # fmt: skip
# Tails that lengthen a description until it wraps in its cell.
_DETAILS = (
    "including travel and setup on the customer's premises",
    "as agreed in the statement of work dated last month",
    "for the warehouse extension, second floor east wing",
    "with extended three year warranty and on-site swap",
    "covering the period from the first to the last day of the month",
    "per the framework agreement, priority handling",
)  # fmt: skip
_SHOP_FIRST = (
    "Corner", "Sunrise", "Green Leaf", "Daily", "Main Street", "Happy", "Urban", "Old Town",
    "Riverside", "Blue Door", "Maple", "Hilltop",
)  # fmt: skip
_SHOP_SECOND = (
    "Grocery", "Bakery", "Pharmacy", "Hardware", "Market", "Cafe", "Deli", "Books",
    "Convenience", "Coffee House", "Bistro", "Garden Centre",
)  # fmt: skip
_SHOP_ITEMS = (
    "Milk 1L", "Bread", "Bananas", "Eggs (6)", "Coffee", "Croissant", "Apples 1kg", "Cheddar",
    "Orange juice", "Pasta 500g", "Tomatoes", "Paracetamol", "Toothpaste", "Batteries AA",
    "Light bulb", "Notebook", "Pen blue", "Sandwich", "Tea", "Muffin", "Water 500ml",
    "Chocolate bar", "Rice 1kg", "Olive oil", "Yoghurt", "Newspaper", "Screws (20)",
    "Potting soil", "Cappuccino", "Latte", "Bagel", "Salad bowl",
)  # fmt: skip
_TAX_RATES = ("0.05", "0.07", "0.08", "0.10", "0.19", "0.20", "0.21", "0.25")


@dataclass
class LineItem:
    """One table row as printed: description lines, quantity, unit price, amount."""

    description: str
    quantity: Decimal
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        return cents(self.quantity * self.unit_price)


@dataclass
class Party:
    name: str
    address: list[str]


@dataclass
class Totals:
    subtotal: Decimal
    tax_rate: Decimal
    tax: Decimal
    shipping: Decimal
    total: Decimal


@dataclass
class InvoiceContent:
    number: str
    issued: dt.date
    due: dt.date | None
    vendor: Party
    customer: Party
    items: list[LineItem]
    totals: Totals
    money: MoneyStyle
    date_format: str
    hourly: bool
    show_tax: bool
    show_subtotal: bool
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class ReceiptContent:
    merchant: Party
    phone: str
    number: str
    bought: dt.datetime
    items: list[LineItem]
    totals: Totals
    money: MoneyStyle
    date_format: str
    payment: str
    show_tax: bool
    labels: dict[str, str] = field(default_factory=dict)


def _address(rng: random.Random) -> list[str]:
    city, postcode = rng.choice(_CITIES)
    lines = [f"{rng.randint(1, 240)} {rng.choice(_STREETS)}", f"{postcode} {city}"]
    if rng.random() < 0.3:
        lines.insert(1, f"Suite {rng.randint(100, 999)}")
    return lines


def company(rng: random.Random) -> str:
    suffix = rng.choice(_COMPANY_SUFFIX)
    name = f"{rng.choice(_COMPANY_FIRST)} {rng.choice(_COMPANY_SECOND)}"
    return f"{name} {suffix}" if suffix else name


def _customer_name(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return f"{rng.choice(_PEOPLE_FIRST)} {rng.choice(_PEOPLE_LAST)}"
    return company(rng)


def _invoice_number(rng: random.Random, year: int) -> str:
    n = rng.randint(1, 99999)
    pattern = rng.randrange(6)
    if pattern == 0:
        return f"INV-{year}-{n % 10000:04d}"
    if pattern == 1:
        return f"{year}/{n % 1000:04d}"
    if pattern == 2:
        return f"A-{n:05d}"
    if pattern == 3:
        return f"INV{n:06d}"
    if pattern == 4:
        return f"F{year}.{n % 1000}"
    return f"SI-{n}"


def _date(rng: random.Random) -> dt.date:
    return dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(3 * 365))


def _totals(rng: random.Random, items: list[LineItem], *, taxed: bool, shipping: bool) -> Totals:
    subtotal = sum((item.amount for item in items), Decimal(0))
    rate = Decimal(rng.choice(_TAX_RATES)) if taxed else Decimal(0)
    tax = cents(subtotal * rate)
    ship = cents(Decimal(rng.randint(500, 4500)) / 100) if shipping else Decimal(0)
    return Totals(subtotal, rate, tax, ship, subtotal + tax + ship)


def invoice_items(
    rng: random.Random, count: int, *, hourly: bool, long_share: float
) -> list[LineItem]:
    items = []
    for _ in range(count):
        if hourly:
            text = rng.choice(_SERVICES)
            quantity = Decimal(rng.randint(1, 40)) / (4 if rng.random() < 0.3 else 1)
            price = Decimal(rng.choice((45, 60, 75, 85, 95, 110, 120, 135, 150, 180)))
        else:
            text = rng.choice(_GOODS)
            quantity = Decimal(rng.choice((1, 1, 2, 3, 4, 5, 6, 10, 12, 20, 25, 50)))
            # Log-uniform: many cheap goods, a few dear ones.
            price = cents(Decimal(10 ** rng.uniform(0, 2.8)))
        if rng.random() < long_share:
            text = f"{text}, {rng.choice(_DETAILS)}"
        items.append(LineItem(text, quantity, price))
    return items


def invoice(rng: random.Random, *, item_count: int) -> InvoiceContent:
    """A random invoice with ``item_count`` line items."""
    issued = _date(rng)
    hourly = rng.random() < 0.3
    items = invoice_items(rng, item_count, hourly=hourly, long_share=rng.choice((0, 0.15, 0.3)))
    show_tax = rng.random() < 0.9
    totals = _totals(rng, items, taxed=show_tax, shipping=rng.random() < 0.2)
    has_due = rng.random() < 0.85
    return InvoiceContent(
        number=_invoice_number(rng, issued.year),
        issued=issued,
        due=issued + dt.timedelta(days=rng.choice((14, 15, 30, 45, 60))) if has_due else None,
        vendor=Party(company(rng), _address(rng)),
        customer=Party(_customer_name(rng), _address(rng)),
        items=items,
        totals=totals,
        money=rng.choice(MONEY_STYLES),
        date_format=rng.choice(DATE_FORMATS),
        hourly=hourly,
        show_tax=show_tax,
        # Without tax or shipping the subtotal would only repeat the total.
        show_subtotal=show_tax or totals.shipping > 0 or rng.random() < 0.5,
        labels={
            "number": rng.choice(INVOICE_NUMBER_LABELS),
            "date": rng.choice(INVOICE_DATE_LABELS),
            "due": rng.choice(DUE_DATE_LABELS),
            "vendor": rng.choice(VENDOR_LABELS),
            "customer": rng.choice(CUSTOMER_LABELS),
            "subtotal": rng.choice(SUBTOTAL_LABELS),
            "tax": rng.choice(TAX_LABELS),
            "total": rng.choice(INVOICE_TOTAL_LABELS),
            "description": rng.choice(DESCRIPTION_HEADERS),
            "quantity": rng.choice(HOURS_HEADERS if hourly else QUANTITY_HEADERS),
            "price": rng.choice(PRICE_HEADERS),
            "amount": rng.choice(AMOUNT_HEADERS),
        },
    )


def receipt(rng: random.Random, *, item_count: int) -> ReceiptContent:
    """A random till receipt with ``item_count`` items."""
    items = []
    for _ in range(item_count):
        quantity = Decimal(rng.choice((1, 1, 1, 1, 2, 2, 3, 4, 6)))
        items.append(
            LineItem(rng.choice(_SHOP_ITEMS), quantity, Decimal(rng.randint(25, 2499)) / 100)
        )
    show_tax = rng.random() < 0.85
    money = rng.choice([m for m in MONEY_STYLES if m.name in ("plain", "dollar", "eur", "gbp")])
    bought = dt.datetime.combine(_date(rng), dt.time(rng.randint(7, 21), rng.randint(0, 59)))
    name = f"{rng.choice(_SHOP_FIRST)} {rng.choice(_SHOP_SECOND)}"
    number_style = rng.randrange(3)
    number = (
        f"R-{rng.randint(1, 999999):06d}",
        f"{rng.randint(1000, 9999)}-{rng.randint(10, 99)}",
        f"{rng.randint(100000, 99999999)}",
    )[number_style]
    return ReceiptContent(
        merchant=Party(name, _address(rng)),
        phone=f"Tel. {rng.randint(200, 989)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
        number=number,
        bought=bought,
        items=items,
        totals=_totals(rng, items, taxed=show_tax, shipping=False),
        money=money,
        date_format=rng.choice(DATE_FORMATS),
        payment=rng.choice(PAYMENT_METHODS),
        show_tax=show_tax,
        labels={
            "date": rng.choice(RECEIPT_DATE_LABELS),
            "number": rng.choice(RECEIPT_NUMBER_LABELS),
            "tax": rng.choice(TAX_LABELS),
            "total": rng.choice(RECEIPT_TOTAL_LABELS),
            "payment": rng.choice(PAYMENT_LABELS),
            "description": rng.choice(("Item", "Description", "Article", "Product")),
            "quantity": rng.choice(("Qty", "Qty.", "Units")),
            "price": rng.choice(("Price", "Each", "Unit Price")),
            "amount": rng.choice(("Total", "Amount", "Sum")),
        },
    )
