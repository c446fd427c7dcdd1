"""What the engine extracts: values of field targets and cells of table targets."""

from __future__ import annotations

from dataclasses import dataclass, field

# Confidence of the empty value given for a field that was not found: it says
# "nothing here" without claiming that the document really lacks the field.
NOT_FOUND_CONFIDENCE = 0.05


@dataclass
class EngineValue:
    text: str
    confidence: float
    # The score before calibration and how the value was found (calibration.py); kept
    # for fitting the calibration again, never sent.
    raw: float | None = field(default=None, compare=False)
    evidence: dict[str, float] = field(default_factory=dict, compare=False)


@dataclass
class EngineCell:
    text: str
    table_index: int
    row: int
    column: int
    confidence: float
    # How a judged table's cell was read (calibration.py), kept for fitting; never sent.
    evidence: dict[str, float] = field(default_factory=dict, compare=False)


@dataclass
class EngineTarget:
    target_id: str
    type: str
    confidence: float
    values: list[EngineValue] = field(default_factory=list)
    cells: list[EngineCell] = field(default_factory=list)
