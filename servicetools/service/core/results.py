"""Extracted data objects (section 2.3): built from engine output, changed by updates (D8).

Besides the fields of the interface, each value and cell carries its own
``confidence`` (an extra field the interface allows): the target's confidence
alone is too coarse to audit calibration value by value.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from ...wire.rules import validate_value
from ..errors import bad_request
from .records import new_id


def _column_trees(target: dict[str, Any]) -> dict[int, dict[str, Any] | None]:
    return {
        int(col["position"]): col.get("extracted_value_validation_tree")
        for col in target.get("header_schema", [])
    }


def field_value(text: str, tree: dict[str, Any] | None, confidence: float,
                id_: str | None = None) -> dict[str, Any]:
    passed, messages = validate_value(text, tree)
    return {"id": id_ or new_id(), "extracted_field": text, "validation_passed": passed,
            "validation_messages": messages, "confidence": round(confidence, 4)}


def table_cell(text: str, table_id: str, row: int, column: int, tree: dict[str, Any] | None,
               confidence: float, id_: str | None = None) -> dict[str, Any]:
    passed, messages = validate_value(text, tree)
    return {"id": id_ or new_id(), "extracted_cell": text, "table_id": table_id, "row": row,
            "column": column, "validation_passed": passed, "validation_messages": messages,
            "confidence": round(confidence, 4)}


def sort_cells(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """D7: by table (in order of first appearance), then row, then column."""
    order: dict[str, int] = {}
    for cell in cells:
        order.setdefault(cell["table_id"], len(order))
    return sorted(cells, key=lambda c: (order[c["table_id"]], c["row"], c["column"]))


def build(
    info: dict[str, Any],
    configuration: dict[str, Any],
    engine_targets: list[Any],
    document_storage_id: str,
) -> dict[str, Any]:
    """The extracted data object: one extracted target per configuration target, in order."""
    by_id = {t.target_id: t for t in engine_targets}
    extracted = []
    for target in configuration["extraction_targets"]:
        found = by_id.get(target["id"])
        item: dict[str, Any] = {
            "id": new_id(),
            "used_extraction_group_id": target.get("extraction_group_id", ""),
            "used_extraction_target_id": target["id"],
            "type": target["type"],
            "confidence": round(float(found.confidence), 4) if found else 0.0,
        }
        if target["type"] == "field":
            values = found.values if found else []
            tree = target.get("validation_tree")
            item["extracted_values"] = [field_value(v.text, tree, v.confidence) for v in values]
        else:
            trees = _column_trees(target)
            table_ids: dict[int, str] = {}
            cells = []
            for c in found.cells if found else []:
                table_id = table_ids.setdefault(c.table_index, new_id())
                cells.append(table_cell(c.text, table_id, c.row, c.column,
                                        trees.get(c.column), c.confidence))
            item["extracted_values"] = sort_cells(cells)
        extracted.append(item)
    return {
        "id": new_id(),
        "user_id": info["trigger_user_id"],
        "extraction_info": info,
        "extracted_targets": extracted,
        "creation_unix_timestamp": time.time(),
        "extracted_document_storage_id": document_storage_id,
        "used_extraction_configuration": copy.deepcopy(configuration),
    }


def apply_updates(data: dict[str, Any], updates: list[dict[str, Any]]) -> None:
    """D8: replace the value lists of the named targets, re-validated, confidence 1.0.

    Checks every update before changing anything, so a bad one leaves ``data`` as it was.
    """
    targets = {t["id"]: t for t in data["extracted_targets"]}
    config_targets = {t["id"]: t for t in data["used_extraction_configuration"]
                      ["extraction_targets"]}
    seen: set[str] = set()
    for i, upd in enumerate(updates):
        tid = upd["extracted_target_id"]
        target = targets.get(tid)
        if target is None:
            raise bad_request(f"updates[{i}]: no extracted target with id {tid!r} in this "
                              "extraction.", extracted_target_id=tid)
        if upd["type"] != target["type"]:
            raise bad_request(f"updates[{i}]: type is {upd['type']!r} but extracted target "
                              f"{tid!r} is a {target['type']}.", extracted_target_id=tid)
        if tid in seen:
            raise bad_request(f"updates[{i}]: extracted target {tid!r} is updated twice in "
                              "one request.", extracted_target_id=tid)
        seen.add(tid)
        key = "extracted_field" if upd["type"] == "field" else "extracted_cell"
        for j, value in enumerate(upd["new_extracted_values"]):
            if key not in value:
                raise bad_request(f"updates[{i}].new_extracted_values[{j}]: {key} is missing.")
        if upd["type"] == "table":
            places = [(v["table_id"], v["row"], v["column"]) for v in upd["new_extracted_values"]]
            if len(set(places)) != len(places):
                raise bad_request(f"updates[{i}]: two cells share the same table_id, row and "
                                  "column.", extracted_target_id=tid)
    for upd in updates:
        target = targets[upd["extracted_target_id"]]
        parent = config_targets.get(target["used_extraction_target_id"], {})
        if upd["type"] == "field":
            tree = parent.get("validation_tree")
            target["extracted_values"] = [
                field_value(v["extracted_field"], tree, 1.0, v.get("id"))
                for v in upd["new_extracted_values"]
            ]
        else:
            trees = _column_trees(parent)
            target["extracted_values"] = sort_cells([
                table_cell(v["extracted_cell"], v["table_id"], v["row"], v["column"],
                           trees.get(v["column"]), 1.0, v.get("id"))
                for v in upd["new_extracted_values"]
            ])
        target["confidence"] = 1.0
