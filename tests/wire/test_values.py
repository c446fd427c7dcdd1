"""The ONE parser per kind of value (wire/values.py), shared by validation, engine and audit.

Before the wire held them, the audit and the service's validation had parsers of their
own that disagreed ("12,50 zł" parsed in one and not the other); these tests pin the one
behaviour, and that every consumer goes through it.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servicetools.analysis import audit
from servicetools.wire import rules, values
from servicetools.wire.values import parse_amount, parse_date, parse_number, parse_numeral

# ---------------------------------------------------------------------------
# parse_number / parse_amount


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12", 12.0),
        ("0", 0.0),
        ("-7", -7.0),
        ("+3.5", 3.5),
        ("\u22122", -2.0),
        ("1,234", 1234.0),
        ("1,234.50", 1234.5),
        ("1.234,50", 1234.5),
        ("1.234.567,89", 1234567.89),
        ("1,234,567", 1234567.0),
        ("1 234,50", 1234.5),
        ("1\u00a0234,50", 1234.5),
        ("1'234.50", 1234.5),
        ("12,5", 12.5),
        ("0,500", 0.5),
        ("1.234", 1.234),
        (".5", 0.5),
        ("1,23,456.00", 123456.0),
        ("  42  ", 42.0),
    ],
)
def test_parse_number_accepts(text: str, expected: float) -> None:
    number = parse_number(text)
    assert number is not None and float(number) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "-", "abc", "12a", "1,2,3", "1.2.3", "1,234.5.6", "5.", "1e5", "$5", "--5", "1 2"],
)
def test_parse_number_rejects(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.50", 1234.5),
        ("$1,234.50", 1234.5),
        ("$ 1,234.50", 1234.5),
        ("1.234,50 €", 1234.5),
        ("€1.234,50", 1234.5),
        ("1.234,50 EUR", 1234.5),
        ("EUR 1.234,50", 1234.5),
        ("EUR1.234,50", 1234.5),
        ("12.40USD", 12.4),
        ("£12", 12.0),
        ("¥1,000", 1000.0),
        ("₹1,23,456.00", 123456.0),
        ("US$ 5", 5.0),
        ("(1,234.00)", -1234.0),
        ("($1,234.00)", -1234.0),
        ("$(12.00)", -12.0),
        ("-$12.00", -12.0),
        ("$-12.00", -12.0),
        ("€ -5", -5.0),
        ("12.00-", -12.0),
        ("12,50 kr", 12.5),
    ],
)
def test_parse_amount_accepts(text: str, expected: float) -> None:
    amount = parse_amount(text)
    assert amount is not None and float(amount) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    ["", "$", "USD", "abc", "12 apples", "$$5", "(-5)", "EURO 5", "$5 EUR", "1,2,3 €", "()"],
)
def test_parse_amount_rejects(text: str) -> None:
    assert parse_amount(text) is None


def test_parsers_ignore_non_strings() -> None:
    assert parse_number(12) is None  # type: ignore[arg-type]
    assert parse_amount(None) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# one parser: every consumer agrees


@pytest.mark.parametrize(("text", "expected"), [
    ("12,50 zł", "12.50"), ("1 234,50 Kč", "1234.50"), ("₩12,000", "12000"),
    ("1.234,50 EUR", "1234.50"), ("$1,234.50", "1234.50"), ("Fr. 12.50", "12.50"),
    ("(12.00)", "-12.00"), ("0,21EUR", "0.21")])
def test_amounts_the_two_halves_used_to_disagree_on(text: str, expected: str) -> None:
    assert parse_amount(text) == Decimal(expected)
    # What the service validates as an amount is graded as that amount.
    tree = {"name": "t", "rule_groups": [{"name": "g", "rules": [{"type": "amount"}]}]}
    assert rules.validate_value(text, tree) == (True, [])
    assert audit.parse_amount(text) == Decimal(expected)
    assert audit.normalize(text, "amounts") == format(Decimal(expected).normalize(), "f")


@pytest.mark.parametrize("text", ["INV-1", "EUR-5", "15.03.2025", "12 apples", "USD"])
def test_a_code_glued_to_a_sign_is_no_currency(text: str) -> None:
    assert parse_amount(text) is None
    tree = {"name": "t", "rule_groups": [{"name": "g", "rules": [{"type": "amount"}]}]}
    assert rules.validate_value(text, tree)[0] is False


def test_the_audit_uses_the_wire_parsers() -> None:
    assert audit.parse_amount is values.parse_amount
    assert audit.parse_date("15.03.2025") == "2025-03-15"
    assert audit.parse_date("Net 30") is None


def test_numbers_keep_their_written_decimals() -> None:
    assert parse_numeral("1.234,50") == (Decimal("1234.50"), 2)
    assert parse_numeral("-7") == (Decimal("-7"), 0)
    assert str(parse_amount("$1,234.50")) == "1234.50"
    assert parse_number("9" * 400) is None  # no float holds it


def test_dates_read_with_the_first_format_that_fits() -> None:
    formats = ["%Y-%m-%d", "%d.%m.%Y"]
    assert parse_date(" 15.03.2025\n", formats) == datetime(2025, 3, 15)
    assert parse_date("Mar  5,\n2024", ["%b %d, %Y"]) == datetime(2024, 3, 5)
    assert parse_date("31.02.2024", formats) is None
    assert parse_date(None, formats) is None  # type: ignore[arg-type]


@given(st.decimals(min_value=-10**9, max_value=10**9, places=2),
       st.sampled_from([("{:,.2f}", ",", "."), ("{:,.2f}", ".", ","), ("{:.2f}", "", ".")]),
       st.sampled_from(["", "$", "€", "EUR ", " EUR", " zł", " Kč", "₩"]))
def test_written_amounts_read_back(value: Decimal, style: tuple[str, str, str],
                                   currency: str) -> None:
    pattern, group, point = style
    magnitude = pattern.format(abs(value)).replace(",", "\0").replace(".", point)
    magnitude = magnitude.replace("\0", group)
    written = magnitude + currency if currency.startswith(" ") else currency + magnitude
    text = ("-" if value < 0 else "") + written
    assert parse_amount(text) == value
