"""How dates, amounts and quantities are printed on a generated document.

Month names come from our own tables rather than ``strftime`` so the output does
not depend on the machine's locale.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

# The formats the configurations' date validation trees accept.
DATE_FORMATS = (
    "%Y-%m-%d",
    "%d.%m.%Y",
    "%d/%m/%Y",
    "%m/%d/%Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%B %d, %Y",
    "%d %B %Y",
)

CENT = Decimal("0.01")


def format_date(day: dt.date, fmt: str) -> str:
    """Print ``day`` in one of `DATE_FORMATS`, in English whatever the locale.

    >>> format_date(dt.date(2024, 3, 5), "%b %d, %Y")
    'Mar 05, 2024'
    """
    month = MONTHS[day.month - 1]
    return (
        fmt.replace("%Y", f"{day.year:04d}")
        .replace("%m", f"{day.month:02d}")
        .replace("%d", f"{day.day:02d}")
        .replace("%B", month)
        .replace("%b", month[:3])
    )


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class MoneyStyle:
    """One document's way of printing amounts.

    ``decimal`` and ``thousands`` are the separators; ``prefix``/``suffix`` hold a
    currency mark such as ``"$"`` or ``" EUR"``. Table cells often drop the
    currency mark while the totals keep it, hence ``in_table``.
    """

    name: str
    decimal: str = "."
    thousands: str = ","
    prefix: str = ""
    suffix: str = ""
    in_table: bool = False

    def amount(self, value: Decimal, *, mark: bool = True) -> str:
        """Print ``value``; ``mark=False`` leaves out the currency mark.

        >>> MoneyStyle("eur", ",", ".", suffix=" EUR").amount(Decimal("1234.5"))
        '1.234,50 EUR'
        """
        text = f"{cents(value):,.2f}"
        text = text.replace(",", "\0").replace(".", self.decimal).replace("\0", self.thousands)
        return f"{self.prefix}{text}{self.suffix}" if mark else text

    def cell(self, value: Decimal) -> str:
        return self.amount(value, mark=self.in_table)

    def quantity(self, value: Decimal) -> str:
        """Print a quantity: whole numbers bare, fractions with the document's decimal mark."""
        if value == value.to_integral_value():
            return str(int(value))
        return format(value.normalize(), "f").replace(".", self.decimal)


MONEY_STYLES = (
    MoneyStyle("plain"),
    MoneyStyle("dollar", prefix="$"),
    MoneyStyle("dollar-cells", prefix="$", in_table=True),
    MoneyStyle("usd", prefix="USD "),
    MoneyStyle("eur", decimal=",", thousands=".", suffix=" EUR"),
    MoneyStyle("eur-cells", decimal=",", thousands=".", suffix=" EUR", in_table=True),
    MoneyStyle("gbp", prefix="GBP "),
)
