"""Validation messages -> conditions: the quoted value made a placeholder, to group by."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["NO_MESSAGE", "PLACEHOLDER", "condition", "conditions", "failed_messages"]

#: The placeholder that stands for the quoted value in ``condition``.
PLACEHOLDER = "`{value}`"
#: The condition of a value that failed validation without saying why.
NO_MESSAGE = "(failed, no message)"

_QUOTED = re.compile(r"`[^`]*`")


def condition(message: str, value: str | None = None) -> str:
    """The failed condition of a validation message: its quoted value made a placeholder.

    >>> condition("`31.02.2024` is not a date in format %Y-%m-%d", "31.02.2024")
    '`{value}` is not a date in format %Y-%m-%d'
    >>> condition("`` is empty")
    '`{value}` is empty'
    """
    if value is not None:
        quoted = f"`{value}`"
        at = message.find(quoted)
        if at >= 0:  # the known value first: it may itself hold backticks
            return message[:at] + PLACEHOLDER + message[at + len(quoted):]
    m = _QUOTED.search(message)
    if m is None:
        return message
    return message[:m.start()] + PLACEHOLDER + message[m.end():]


def conditions(messages: tuple[str, ...], value: str | None) -> str:
    """The ``condition`` of each message, joined by ``"; "``.

    >>> conditions(("`` is empty", "`` is not an amount"), "")
    '`{value}` is empty; `{value}` is not an amount'
    """
    if len(messages) == 1:
        return condition(messages[0], value)
    return "; ".join(condition(m, value) for m in messages)


def failed_messages(failed: Any, messages: Any, values: Any, own: Any = None
                    ) -> tuple[list[int], list[str], list[str]]:
    """The failed validations of values, one per distinct message of a value that failed:
    each one's row (position), message and `condition`. ``failed`` is a flag per value;
    ``messages``, ``values`` and ``own`` (the frame's own ``condition`` column, if any)
    are sequences (or Series) as long.

    A value failing two rule groups fails under both; a message given twice is one. A
    value that failed without a list of messages (a frame read back from a CSV holds
    them as text; one made by hand may have none) fails once, message "", under its own
    condition, else `NO_MESSAGE`: before, it was not counted at all.

    >>> failed_messages([True, False], [("`x` is odd", "`x` is odd"), ()], ["x", "y"])
    ([0], ['`x` is odd'], ['`{value}` is odd'])
    >>> failed_messages([True], ["('`x` is odd',)"], ["x"], ["`{value}` is odd"])
    ([0], [''], ['`{value}` is odd'])
    """
    at = np.flatnonzero(np.asarray(failed, dtype=bool)).tolist()  # a few of many values
    owns = _take(own, at) if own is not None else [None] * len(at)
    rows, found, conditions_ = [], [], []
    for row, listed, value, mine in zip(at, _take(messages, at), _take(values, at), owns,
                                        strict=True):
        text = value if isinstance(value, str) else None
        said = ([m for m in dict.fromkeys(listed) if isinstance(m, str)]
                if isinstance(listed, Iterable) and not isinstance(listed, str) else [])
        for message in said:
            rows.append(row)
            found.append(message)
            conditions_.append(condition(message, text))
        if not said:
            rows.append(row)
            found.append("")
            conditions_.append(mine if isinstance(mine, str) and mine else NO_MESSAGE)
    return rows, found, conditions_


def _take(items: Any, at: list[int]) -> list[Any]:
    return items.iloc[at].tolist() if hasattr(items, "iloc") else [items[i] for i in at]
