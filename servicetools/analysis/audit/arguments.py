"""Checks of the arguments analysts pass most often wrong, with messages that say how.

A threshold of 80 (meant as 80 %) or a target name with a typo used to give an empty
result or an empty plot, without a word.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = ["check_rate", "check_target"]


def check_rate(name: str, value: Any, kind: str = "confidence") -> None:
    """Refuse a rate or confidence outside [0, 1] (``None`` passes: "not given").

    >>> check_rate("threshold", 80)
    Traceback (most recent call last):
    ...
    ValueError: threshold is a confidence between 0 and 1, not 80 (for 80 %, write 0.8)
    """
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
        hint = (f" (for {value:g} %, write {value / 100:g})"
                if isinstance(value, int | float) and 1 < value <= 100 else "")
        raise ValueError(f"{name} is a {kind} between 0 and 1, not {value!r}{hint}")


def check_target(target: str, known: Iterable[Any], everything: str) -> None:
    """Refuse a target name the data does not hold, naming the close ones.

    >>> check_target("Totl", ["Total", "Tax", "Date"], "All")
    Traceback (most recent call last):
    ...
    ValueError: no target 'Totl' in the data. Did you mean 'Total'? Targets: Total, Tax, Date, All
    """
    names = [str(name) for name in known]
    if target == everything or target in names:
        return
    close = difflib.get_close_matches(target, names, n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise ValueError(f"no target {target!r} in the data.{hint} Targets: "
                     f"{', '.join([*names, everything])}")
