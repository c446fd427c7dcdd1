"""Pieces the forms share: the ipywidgets import, confidence bars, badges, headers."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ...extras import load
from . import _data

widgets: Any = load("ipywidgets", "widgets", feature="servicetools.widgets")

__all__ = ["widgets"]

NAME_WIDTH = "170px"
VALUE_WIDTH = "280px"


def confidence_bar(confidence: float | None) -> Any:
    """A FloatProgress coloured by band; ``value`` is the confidence (0 when unknown)."""
    colour = _data.colour(confidence)
    return widgets.FloatProgress(
        value=confidence or 0.0, min=0.0, max=1.0,
        tooltip="confidence unknown" if confidence is None else f"confidence {confidence:.2f}",
        style={"bar_color": colour}, layout={"width": "110px"})


def confidence_label(confidence: float | None) -> Any:
    text = "n/a" if confidence is None else f"{confidence:.2f}"
    return widgets.HTML(f'<span style="color:{_data.colour(confidence)};'
                        f'font-family:monospace">{text}</span>', layout={"width": "40px"})


def badge_html(value: Mapping[str, Any]) -> str:
    """✓ when validation passed, ✗ and the messages when it failed, - when not said."""
    passed = value.get("validation_passed")
    if passed is True:
        return f'<span style="color:{_data.GREEN}" title="validation passed">✓</span>'
    if passed is False:
        messages = [str(m) for m in value.get("validation_messages") or []]
        text = html.escape("; ".join(messages) or "validation failed")
        return (f'<span style="color:{_data.RED}" class="st-failed">✗ '
                f'<small>{text}</small></span>')
    return f'<span style="color:{_data.GREY}" title="no validation state">–</span>'


def badge(value: Mapping[str, Any]) -> Any:
    return widgets.HTML(badge_html(value))


def name_label(target: _data.Target) -> Any:
    extra = " <small>(several)</small>" if target.is_multiple else ""
    return widgets.HTML(f"<b>{html.escape(target.name)}</b>{extra}",
                        layout={"width": NAME_WIDTH})


def title(target: _data.Target) -> Any:
    confidence = ("n/a" if target.confidence is None else f"{target.confidence:.2f}")
    return widgets.HTML(f"<b>{html.escape(target.name)}</b> "
                        f"<small>(table, confidence {confidence})</small>")


def header_html(data: Mapping[str, Any]) -> str:
    info = data.get("extraction_info") or {}
    config = data.get("used_extraction_configuration") or {}
    name = info.get("extraction_name") or info.get("extraction_id") or "extraction"
    facts = _data.summary(data)
    lowest = facts["min_confidence"]
    low = "n/a" if lowest is None else f"{lowest:.2f}"
    colour = _data.RED if facts["n_failed"] else _data.GREEN
    config_name = (info.get("used_extraction_configuration_name") or config.get("name")
                   or "")
    return (f"<b>{html.escape(str(name))}</b> "
            f"<small>{html.escape(str(config_name))} · "
            f"{html.escape(str(info.get('extraction_id', '')))}</small><br>"
            f"{facts['n_values']} values, "
            f"<span style=\"color:{colour}\">{facts['n_failed']} failing</span>, "
            f"lowest confidence {low}")


def columns_of(target: _data.Target, cells: list[dict[str, Any]]) -> list[int]:
    """Column positions to show: the header schema's and any the cells have."""
    found = {c["column"] for c in cells if isinstance(c.get("column"), int)}
    return sorted(set(target.headers) | found)


def column_name(target: _data.Target, position: int) -> str:
    return target.headers.get(position, f"column {position}")
