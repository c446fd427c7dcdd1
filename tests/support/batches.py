"""Extracted data generated for property tests (hypothesis): results with fields and
tables in every shape the interface allows, and their mutation into broken ones."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

__all__ = ["ABSENT", "CONFIDENCE", "JUNK", "TEXT", "mutate", "results", "values"]

#: A key left out of the generated object (None is a value of its own).
ABSENT = object()
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)
CONFIDENCE = st.one_of(st.just(ABSENT), st.none(), st.floats(0, 1))


@st.composite
def values(draw: st.DrawFn, prefix: str, key: str, places: list[tuple[str, int, int]] | None
           ) -> list[dict[str, Any]]:
    count = len(places) if places is not None else draw(st.integers(0, 3))
    out = []
    for i in range(count):
        text = draw(TEXT)
        failed = draw(st.booleans())
        value: dict[str, Any] = {"id": f"{prefix}-{i}", key: text,
                                 "validation_passed": not failed,
                                 "validation_messages": [f"`{text}` is not valid"] if failed
                                 else []}
        if places is not None:
            value["table_id"], value["row"], value["column"] = places[i]
        confidence = draw(CONFIDENCE)
        if confidence is not ABSENT:
            value["confidence"] = confidence
        out.append(value)
    return out


@st.composite
def results(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 9999))
    config_targets: list[dict[str, Any]] = []
    extracted: list[dict[str, Any]] = []
    for j in range(draw(st.integers(0, 4))):
        config_targets.append({"id": f"f{j}", "type": "field", "name": f"Field {j}"})
        extracted.append({"id": f"x{n}-f{j}", "type": "field", "used_extraction_target_id":
                          f"f{j}", "extracted_values": draw(values(f"{n}-f{j}",
                                                                  "extracted_field", None))})
    for j in range(draw(st.integers(0, 2))):
        headers = draw(st.integers(1, 3))
        target: dict[str, Any] = {"id": f"t{j}", "type": "table", "header_schema": [
            {"id": f"h{k}", "name": f"H{k}", "position": k} for k in range(headers)]}
        if draw(st.booleans()):
            target["name"] = f"Table {j}"
        config_targets.append(target)
        places = []
        for t in range(draw(st.integers(1, 2))):
            cells = draw(st.sets(st.tuples(st.integers(0, 4), st.integers(0, headers)),
                                 max_size=8))
            places += [(f"tbl{n}-{j}-{t}", r, c) for r, c in sorted(cells)]
        extracted.append({"id": f"x{n}-t{j}", "type": "table", "used_extraction_target_id":
                          f"t{j}", "extracted_values": draw(values(f"{n}-t{j}",
                                                                  "extracted_cell", places))})
    for target in extracted:
        confidence = draw(CONFIDENCE)
        if confidence is not ABSENT:
            target["confidence"] = confidence
    return {"extraction_info": {"extraction_id": f"e{n}", "extraction_name": f"doc-{n}.pdf"},
            "extracted_targets": extracted, "creation_unix_timestamp": 1767225600.0 + n,
            "used_extraction_configuration": {"id": "cfg", "name": "generated",
                                              "extraction_targets": config_targets}}


#: What `mutate` puts where a value was.
JUNK = (None, 0, -1, 1.5, "x", "", [], {}, [None], {"a": 1}, True)


def mutate(node: Any, rng: random.Random, rate: float) -> Any:
    """Drop keys, swap values for junk and cut lists short, everywhere in a result."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            roll = rng.random()
            if roll < rate:
                continue
            if roll < 2 * rate:
                out[key] = rng.choice(JUNK)
                continue
            out[key] = mutate(value, rng, rate)
        return out
    if isinstance(node, list):
        kept = node[:rng.randint(0, len(node))] if rng.random() < rate else node
        return [rng.choice(JUNK) if rng.random() < rate else mutate(x, rng, rate) for x in kept]
    return node
