"""What the forms show, read from an extracted data object; no ipywidgets here."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Confidence at or above this is high (green); below `CONFIDENCE_LOW` it is low (red).
CONFIDENCE_HIGH = 0.8
CONFIDENCE_LOW = 0.5

# Colours: text/bar colour, and the light tint a cell gets, by confidence band.
GREEN, AMBER, RED, GREY = "#2e7d32", "#f9a825", "#c62828", "#9e9e9e"
TINTS = {GREEN: "#e8f5e9", AMBER: "#fff8e1", RED: "#ffebee", GREY: "#f5f5f5"}
FAILED_TINT = "#ffcdd2"
EDITED_TINT = "#e3f2fd"


def extracted_data(result: Mapping[str, Any]) -> dict[str, Any]:
    """The extracted data object of a result or of a three-part schema-output response."""
    if not isinstance(result, Mapping):
        raise TypeError(f"expected an extracted data object (a dict), not "
                        f"{type(result).__name__}")
    inner = result.get("extracted_data")
    if isinstance(inner, Mapping) and "extracted_targets" not in result:
        return dict(inner)
    return dict(result)


def number(x: Any) -> float | None:
    """A finite float, or None: confidences from a remote service may be missing or odd."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def colour(confidence: float | None) -> str:
    if confidence is None:
        return GREY
    if confidence >= CONFIDENCE_HIGH:
        return GREEN
    return AMBER if confidence >= CONFIDENCE_LOW else RED


@dataclass
class Target:
    """One extracted target with what the configuration says about it."""

    target_id: str  # the configuration's id (used_extraction_target_id)
    extracted_id: str  # the extracted target's own id, what an update names
    type: str
    name: str
    is_multiple: bool
    confidence: float | None
    values: list[dict[str, Any]]
    headers: dict[int, str] = field(default_factory=dict)

    def confidence_of(self, value: Mapping[str, Any]) -> float | None:
        """A value's own confidence (our service sends one), else its target's."""
        own = number(value.get("confidence"))
        return own if own is not None else self.confidence

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Cells by table id, tables in order of first appearance."""
        out: dict[str, list[dict[str, Any]]] = {}
        for cell in self.values:
            out.setdefault(str(cell.get("table_id", "")), []).append(cell)
        return out


def targets(data: Mapping[str, Any]) -> list[Target]:
    """The extracted targets in the order the service sent them (D7: configuration order)."""
    config = data.get("used_extraction_configuration") or {}
    by_id = {t.get("id"): t for t in config.get("extraction_targets") or []
             if isinstance(t, Mapping)}
    out = []
    for item in data.get("extracted_targets") or []:
        if not isinstance(item, Mapping):
            continue
        target_id = str(item.get("used_extraction_target_id") or item.get("id") or "")
        parent = by_id.get(target_id) or {}
        kind = str(item.get("type") or parent.get("type") or "field")
        headers = {}
        for head in parent.get("header_schema") or []:
            position = head.get("position") if isinstance(head, Mapping) else None
            if isinstance(position, int):
                headers[position] = str(head.get("name") or head.get("id") or position)
        values = [dict(v) for v in item.get("extracted_values") or [] if isinstance(v, Mapping)]
        out.append(Target(
            target_id=target_id, extracted_id=str(item.get("id") or ""), type=kind,
            name=str(parent.get("name") or target_id),  # D9: a table without name: its id
            is_multiple=parent.get("is_multiple") is True,
            confidence=number(item.get("confidence")), values=values, headers=headers))
    return out


def text_of(value: Mapping[str, Any]) -> str:
    text = value.get("extracted_field", value.get("extracted_cell"))
    return "" if text is None else str(text)


def failed(value: Mapping[str, Any]) -> bool:
    return value.get("validation_passed") is False


def summary(data: Mapping[str, Any]) -> dict[str, Any]:
    """Values, failing values and the lowest confidence of an extraction (for ordering)."""
    n = n_failed = 0
    lowest: float | None = None
    for target in targets(data):
        for value in target.values:
            n += 1
            n_failed += failed(value)
            confidence = target.confidence_of(value)
            if confidence is not None and (lowest is None or confidence < lowest):
                lowest = confidence
        if not target.values and target.confidence is not None:
            # An empty target is a miss the reviewer should see; its confidence counts.
            lowest = target.confidence if lowest is None else min(lowest, target.confidence)
    return {"n_values": n, "n_failed": n_failed, "min_confidence": lowest}
