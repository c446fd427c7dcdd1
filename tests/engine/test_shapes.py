"""Shapes of field examples: what counts as a date, an amount, a number or a code."""

import pytest

from servicetools.service.engine.shapes import AMOUNT, shape_of


@pytest.mark.parametrize("text", [
    "1,250.00", "250.00", "$1,500.00", "1.234,50 EUR", "€ 12,00",
    # Whole amounts, when a currency or thousands grouping says it is money.
    "$4,500", "$450", "€ 12", "12 EUR", "4,500", "1.000.000",
])
def test_amounts(text: str) -> None:
    assert AMOUNT.fullmatch(text)


@pytest.mark.parametrize("text", ["2024", "3", "4,500.5", "12.5", "INV-100", "6/18/2017"])
def test_not_amounts(text: str) -> None:
    assert not AMOUNT.fullmatch(text)


def test_shape_kinds() -> None:
    assert shape_of("1,250.00").kind == "amount"
    assert shape_of("2024-03-15").kind == "date"
    assert shape_of("12").kind == "number"
    assert shape_of("INV-2024-0012").kind == "code"
    assert shape_of("Acme Supplies Ltd").kind == "text"
    assert shape_of("INV-2024-0012").fits("SI-2023-7")
    assert not shape_of("INV-2024-0012").fits("INV-100")
