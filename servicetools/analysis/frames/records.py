"""`targets` and `extractions`: one row per extracted target or extraction, with counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .columns import EXTRACTION_COLUMNS, ID_COLUMNS, KEYS, TARGET_COLUMNS
from .dtypes import booleans, categorical, datetimes, ordered_frame, strings
from .read import Complain, Errors, as_number, as_seconds, as_text, kind_of, read_results

__all__ = ["extractions", "targets"]


def targets(data: Any, *, errors: Errors = "raise",
            documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per extracted target, columns `TARGET_COLUMNS` (also targets with no value).

    ``n_values`` counts values or cells, ``n_filled`` those not blank, ``n_failed`` those
    that failed validation, ``n_tables`` the distinct table ids (0 for fields).
    """
    complain = Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in TARGET_COLUMNS}
    multiple: list[int] = []
    for _data, where, meta in read_results(data, errors, documents):
        for j, target in enumerate(meta.targets):
            if type(target) is not dict:
                complain(f"{where}.extracted_targets[{j}]", "not an object")
                continue
            target_id = as_text(target.get("used_extraction_target_id"))
            values = target.get("extracted_values")
            if type(values) is not list:
                if values is not None:
                    complain(f"{where}.extracted_targets[{j}].extracted_values", "not an array")
                values = []
            kind = kind_of(target, meta.config)
            key = "extracted_cell" if kind == "table" else "extracted_field"
            good = [v for v in values if type(v) is dict]
            for name in KEYS:
                rows[name].append(getattr(meta, name))
            rows["target_id"].append(target_id)
            rows["target_name"].append(meta.config.name(target_id))
            rows["target_type"].append(as_text(kind))
            rows["extraction_group"].append(as_text(target.get("used_extraction_group_id")))
            rows["extracted_target_id"].append(as_text(target.get("id")))
            flag = meta.config.target(target_id).get("is_multiple")
            multiple.append(1 if flag is True else 0 if flag is False else 2)
            rows["confidence"].append(as_number(target.get("confidence")))
            rows["n_values"].append(len(good))
            rows["n_filled"].append(sum(1 for v in good if type(v.get(key)) is str
                                        and v[key].strip()))
            rows["n_failed"].append(sum(1 for v in good if v.get("validation_passed") is False))
            rows["n_tables"].append(len({as_text(v.get("table_id")) for v in good})
                                    if kind == "table" else 0)
            rows["created"].append(meta.created)
    cols: dict[str, Any] = {name: _texts(name, rows[name]) for name in
                            KEYS + ("target_id", "target_name", "target_type",
                                    "extraction_group", "extracted_target_id")}
    cols["is_multiple"] = booleans(multiple)
    cols["confidence"] = np.asarray(rows["confidence"], dtype=np.float64)
    for name in ("n_values", "n_filled", "n_failed", "n_tables"):
        cols[name] = np.asarray(rows[name], dtype=np.int64)
    cols["created"] = datetimes(rows["created"])
    return ordered_frame(cols, TARGET_COLUMNS)


def extractions(data: Any, *, errors: Errors = "raise",
                documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per extraction, columns `EXTRACTION_COLUMNS`.

    ``duration`` is ``created - triggered`` (a timedelta); ``n_values`` counts field
    values, ``n_cells`` table cells, ``n_failed`` both that failed validation.
    """
    complain = Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in EXTRACTION_COLUMNS}
    saved: list[int] = []
    for _data, where, meta in read_results(data, errors, documents):
        info = meta.info
        for name in KEYS:
            rows[name].append(getattr(meta, name))
        for name in ("trigger_type", "input_type", "trigger_user_id"):
            rows[name].append(as_text(info.get(name)))
        flag = info.get("extracted_data_saved")
        saved.append(1 if flag is True else 0 if flag is False else 2)
        rows["triggered"].append(as_seconds(info.get("trigger_unix_timestamp")))
        rows["created"].append(meta.created)
        n_targets = n_values = n_cells = n_failed = 0
        for j, target in enumerate(meta.targets):
            if type(target) is not dict:
                complain(f"{where}.extracted_targets[{j}]", "not an object")
                continue
            n_targets += 1
            values = target.get("extracted_values")
            if type(values) is not list:
                continue
            good = [v for v in values if type(v) is dict]
            if kind_of(target, meta.config) == "table":
                n_cells += len(good)
            else:
                n_values += len(good)
            n_failed += sum(1 for v in good if v.get("validation_passed") is False)
        rows["n_targets"].append(n_targets)
        rows["n_values"].append(n_values)
        rows["n_cells"].append(n_cells)
        rows["n_failed"].append(n_failed)
    cols: dict[str, Any] = {name: _texts(name, rows[name]) for name in
                            KEYS + ("trigger_type", "input_type", "trigger_user_id")}
    cols["extracted_data_saved"] = booleans(saved)
    cols["triggered"] = datetimes(rows["triggered"])
    cols["created"] = datetimes(rows["created"])
    cols["duration"] = pd.TimedeltaIndex(cols["created"] - cols["triggered"])
    for name in ("n_targets", "n_values", "n_cells", "n_failed"):
        cols[name] = np.asarray(rows[name], dtype=np.int64)
    return ordered_frame(cols, EXTRACTION_COLUMNS)


def _texts(name: str, values: list[Any]) -> Any:
    """An id column as strings, any other text column as a categorical."""
    return strings(values) if name in ID_COLUMNS else categorical(values)
