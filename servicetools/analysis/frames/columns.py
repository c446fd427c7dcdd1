"""The columns of every frame, in their fixed order: the ``*_COLUMNS`` tuples.

`KEYS`, `TARGET_KEYS` and `VALUE_COLUMNS` are the parts the value frames (`fields`,
`cells`) are made of; the other frames start with `KEYS` too where they describe
extractions.
"""

from __future__ import annotations

__all__ = [
    "CELL_COLUMNS",
    "EXTRACTION_COLUMNS",
    "FIELD_COLUMNS",
    "ID_COLUMNS",
    "KEYS",
    "STATUS_COLUMNS",
    "TARGET_COLUMNS",
    "TARGET_KEYS",
    "VALIDATION_COLUMNS",
    "VALUE_COLUMNS",
    "VAULT_COLUMNS",
]

#: Ids of what a batch holds many of (one per extraction or finer): `STRING`, not
#: categoricals, in every frame. A categorical's dtype would list every id of the batch,
#: and every filter would keep them all as empty categories; the ids of a configuration's
#: parts (``configuration_id``, ``target_id``, ``extraction_group``) and of users stay
#: categoricals, like names: a few values, each repeated on many rows.
ID_COLUMNS: tuple[str, ...] = ("extraction_id", "document_id", "extracted_target_id",
                               "table_id", "value_id", "status_id")
#: Columns every value frame starts with: which extraction, document and configuration.
KEYS: tuple[str, ...] = ("extraction_id", "extraction_name", "document_id", "document_name",
                         "configuration_id", "configuration_name")
TARGET_KEYS: tuple[str, ...] = ("target_id", "target_name", "extraction_group",
                                "extracted_target_id")
#: ``found`` is False for the empty value the service gives a target it did not find
#: (its confidence says "nothing here"): ``fields[fields.found].nsmallest(8,
#: "confidence")`` are the least sure values that were read.
VALUE_COLUMNS: tuple[str, ...] = (
    "value_index", "value_id", "value", "found", "confidence", "target_confidence",
    "validation_passed", "validation_messages", "condition", "created")

FIELD_COLUMNS: tuple[str, ...] = KEYS + TARGET_KEYS + VALUE_COLUMNS
CELL_COLUMNS: tuple[str, ...] = (KEYS + TARGET_KEYS + ("table_id", "row", "column", "header")
                                 + VALUE_COLUMNS)
TARGET_COLUMNS: tuple[str, ...] = KEYS + (
    "target_id", "target_name", "target_type", "extraction_group", "extracted_target_id",
    "is_multiple", "confidence", "n_values", "n_filled", "n_failed", "n_tables", "created")
EXTRACTION_COLUMNS: tuple[str, ...] = KEYS + (
    "trigger_type", "input_type", "trigger_user_id", "extracted_data_saved", "triggered",
    "created", "duration", "n_targets", "n_values", "n_cells", "n_failed")
STATUS_COLUMNS: tuple[str, ...] = (
    "extraction_id", "status_id", "status_type", "message", "trigger_user_id", "created",
    "is_final", "duration", "elapsed")
VAULT_COLUMNS: tuple[str, ...] = (
    "document_id", "document_name", "document_type", "content_type", "owner_id", "uploaded",
    "num_pages")
VALIDATION_COLUMNS: tuple[str, ...] = (
    "extraction_id", "extraction_name", "document_name", "configuration_name", "path", "key",
    "value", "confidence", "validation_passed", "validation_messages", "condition")
