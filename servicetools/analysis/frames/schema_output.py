"""`validation`: the ``validation`` tree of three-part responses, one row per leaf."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .columns import VALIDATION_COLUMNS
from .conditions import conditions
from .dtypes import booleans, categorical, objects, ordered_frame, strings
from .read import Complain, Errors, ResultMeta, as_number, result_items

__all__ = ["validation"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def validation(data: Any, *, errors: Errors = "raise",
               documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The ``validation`` of three-part responses flattened, columns `VALIDATION_COLUMNS`.

    One row per leaf: ``path`` is where it sits (``line_items[0][2]``,
    ``items[1]."Unit Price"``), ``key`` the same path with every index made ``[*]``
    (to group rows of a table), ``value`` the string at that path of ``schema_output``.
    Unmatched selections render as ``[]`` (D11) and give no row.
    """
    complain = Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in VALIDATION_COLUMNS}
    passed: list[int] = []
    for item, where, document, key in result_items(data, complain):
        if not isinstance(item, Mapping):
            complain(where, "not a schema-output response")
            continue
        tree = item.get("validation")
        if tree is None:
            continue  # extracted data without schema output: nothing to flatten
        inner = item.get("extracted_data")
        meta = ResultMeta(inner if type(inner) is dict else {}, where, document, key,
                          documents or {}, complain)
        leaves: list[tuple[Any, ...]] = []
        _walk(tree, item.get("schema_output"), "", "", leaves, complain)
        for path, generic, output, leaf in leaves:
            rows["extraction_id"].append(meta.extraction_id)
            rows["extraction_name"].append(meta.extraction_name)
            rows["document_name"].append(meta.document_name)
            rows["configuration_name"].append(meta.configuration_name)
            rows["path"].append(path)
            rows["key"].append(generic)
            value = output if type(output) is str else None
            rows["value"].append(value)
            rows["confidence"].append(as_number(leaf.get("confidence")))
            flag = leaf.get("validation_passed")
            passed.append(1 if flag is True else 0 if flag is False else 2)
            msgs = leaf.get("validation_messages")
            if type(msgs) is list and all(type(m) is str for m in msgs):
                msgs = tuple(msgs)
            else:
                if msgs is not None:
                    complain(f"{where}.validation.{path}.validation_messages",
                             "not an array of strings")
                msgs = None
            rows["validation_messages"].append(msgs)
            rows["condition"].append(conditions(msgs, value) if msgs else None)
    cols: dict[str, Any] = {name: categorical(rows[name]) for name in
                            ("extraction_name", "document_name", "configuration_name", "key",
                             "condition")}
    cols["extraction_id"] = strings(rows["extraction_id"])
    cols["path"] = strings(rows["path"])
    cols["value"] = strings(rows["value"])
    cols["confidence"] = np.asarray(rows["confidence"], dtype=np.float64)
    cols["validation_passed"] = booleans(passed)
    cols["validation_messages"] = objects(rows["validation_messages"])
    return ordered_frame(cols, VALIDATION_COLUMNS)


def _step(key: str) -> str:
    # JMESPath spelling (D11): names with spaces or symbols are quoted identifiers.
    return key if _IDENTIFIER.fullmatch(key) else json.dumps(key)


def _walk(node: Any, output: Any, path: str, key: str, out: list[tuple[Any, ...]],
          complain: Complain) -> None:
    """(path, key, schema output, leaf) of each leaf under ``node``, appended to ``out``."""
    if isinstance(node, Mapping):
        if "validation_passed" in node:
            out.append((path, key, output, node))
            return
        for name, child in node.items():
            step = _step(str(name))
            sub = output.get(name) if isinstance(output, Mapping) else None
            joined = f"{path}.{step}" if path else step
            _walk(child, sub, joined, f"{key}.{step}" if key else step, out, complain)
    elif isinstance(node, list):
        for i, child in enumerate(node):
            sub = output[i] if isinstance(output, list) and i < len(output) else None
            _walk(child, sub, f"{path}[{i}]", f"{key}[*]", out, complain)
    else:
        complain(path or "validation", "neither a leaf, an object nor an array")
