"""The quick check before strptime never turns away a date one of the formats reads."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from servicetools.analysis.audit import normalisation
from servicetools.wire import values


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)),
       st.sampled_from(normalisation.DATE_FORMATS))
def test_every_printed_date_passes_the_check(when: datetime, fmt: str) -> None:
    text = when.strftime(fmt)
    assert normalisation.parse_date(text) == when.date().isoformat() or (
        # An earlier format may read it first (3/4/2024 as the 3rd of April).
        values.parse_date(text, normalisation.DATE_FORMATS) is not None)
    assert normalisation._MAY_BE_DATE.search(text)


@given(st.text(alphabet="0123456789-./ ,:abcMARJunSeptOct", max_size=14))
def test_the_check_changes_no_answer(text: str) -> None:
    parsed = values.parse_date(text, normalisation.DATE_FORMATS)
    expected = None if parsed is None else parsed.date().isoformat()
    assert normalisation.parse_date(text) == expected
