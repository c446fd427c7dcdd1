"""The target label: what the audits count a value under, from the parts it is made of.

A field goes by its configuration's name for it, else its id (D9); a table cell by
``"<table> / <header>"``, or ``"<table> / column <n>"`` where the configuration names no
header at that position (``?`` for a part that is missing). Every audit groups by this
label, over frames (`work.work_frame` labels the distinct parts of a frame) and over a
dataset (`workview` labels the distinct parts of its files): this function is the one
place the rule is written.

It imports nothing of ours, so the dataset reader can call `workview` (which uses it)
without importing the audits back.
"""

from __future__ import annotations

__all__ = ["target_label"]


def target_label(kind: str, name: str | None, target_id: str | None, header: str | None,
                 column: int | None) -> str | None:
    """The label of a value of ``kind`` (``"field"`` or ``"cell"``) from its parts.

    >>> target_label("field", None, "t-7", None, None)
    't-7'
    >>> target_label("cell", "Items", "t-2", None, 3)
    'Items / column 3'
    """
    named = name if name is not None else target_id
    if kind == "field":
        return named  # None when both are missing: the value belongs to no target
    table = named if named is not None else "?"
    if header is not None:
        return f"{table} / {header}"
    return f"{table} / column {column if column is not None else '?'}"
