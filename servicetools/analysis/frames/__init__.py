"""Extracted data -> tidy DataFrames, one row per thing an analyst counts.

Every converter takes one extracted data object (2.3) or three-part schema-output
response (2.11), as the client's `Result` or as the plain dict; a list or a
``{extraction_id: result}`` mapping of those; a `Batch` (anything with a ``results``
mapping; its ``documents`` name the documents); or the path of a ``.json`` / ``.jsonl``
file holding them.

====================  =============================================================
`fields`              one row per field value (`FIELD_COLUMNS`)
`cells`               one row per table cell (`CELL_COLUMNS`)
`fields_and_cells`    both, reading a file once (a saved batch: by pyarrow)
`tables`              ``{table_id: wide DataFrame}``, header names as columns, row as index
`targets`             one row per extracted target (`TARGET_COLUMNS`)
`extractions`         one row per extraction (`EXTRACTION_COLUMNS`)
`statuses`            one row per status object, with stage durations (`STATUS_COLUMNS`)
`vault`               one row per vault document record (`VAULT_COLUMNS`)
`validation`          the schema-output ``validation`` flattened by path (`VALIDATION_COLUMNS`)
`save`, `load`        Parquet or CSV (with a ``.schema.json`` beside it) that round-trip dtypes
`dataset`             a folder of batches as partitioned Parquet, opened lazily (`Dataset`);
                      `write_dataset` and `DatasetWriter` write one, a part at a time
====================  =============================================================

Columns of `fields` and `cells`, in this order (`cells` adds the four table columns):

======================================  ==================================================
extraction_id, extraction_name          the extraction (``extraction_info``)
document_id, document_name              vault id of the document, and its name (below)
configuration_id, configuration_name    the configuration used
target_id, target_name                  the configuration's target and its name
extraction_group, extracted_target_id   group id; the extracted target's id (for updates)
table_id, row, column, header           cells only: table, position (nullable Int64) and
                                        the header name at that column position
value_index, value_id, value            place in the target's list, id, text
confidence, target_confidence           the value's confidence (below), the target's
validation_passed, validation_messages  nullable boolean; tuple of messages
condition                               the messages with the value made a placeholder
created                                 when the extraction finished (UTC)
======================================  ==================================================

Conventions (pandas' ``json_normalize`` vocabulary):

- Column order is fixed and documented by the ``*_COLUMNS`` tuples; empty input gives an
  empty frame with the same columns and dtypes.
- Ids of what a batch holds many of (`ID_COLUMNS`: ``extraction_id``, ``document_id``,
  ``extracted_target_id``, ``table_id``, ``value_id``, ``status_id``) are strings
  (`STRING`, shown as ``str``), like texts: a categorical would list every id of the
  batch in its dtype and keep them all after a filter. They cost memory (57 MiB per id
  column of 1.5 million cells, against 3.5 as a categorical; ``docs/frames.md`` has the
  figures of ``bench/frames.py``), not time that matters (12 ms to select one id).
- Names, and the ids of a configuration's parts (``configuration_id``, ``target_id``,
  ``extraction_group``) and of users, are categoricals in first-seen order (so targets
  keep the configuration's order); ``validation_passed`` is a nullable boolean;
  confidences are float64; unix timestamps become UTC datetimes.
- A value's ``confidence`` is its own (our service sends one per value and cell), else
  its extracted target's, else NaN: a missing confidence is never replaced by a default.
- ``condition`` is each validation message with its backtick-quoted value replaced by
  ```{value}```, several messages joined by ``"; "``, so failures group by condition.
- A table target without a ``name`` is named by its ``id`` (D9).
- ``document_name`` is the name a `Batch` (or the ``documents`` mapping, keyed by
  extraction id or document id) gives the document, else the ``extraction_name``.
- Filtering keeps a categorical's categories (pandas' rule): after ``f =
  fields[fields.confidence < 0.5]``, ``f.target_name.value_counts()`` lists every target,
  the ones filtered out with 0. Group with ``observed=True``, or drop them with
  ``f.target_name.cat.remove_unused_categories()``. What the toolkit returns (audits,
  grades, plots of a filtered frame) holds only the categories its rows use.
- ``errors="raise"`` raises `FramesError` (a ValueError naming the place) at the first
  malformed part; ``errors="ignore"`` skips malformed parts and leaves missing values NA.
  Missing optional keys are never an error. Unknown keys and target types are ignored.

The modules, in reading order (the names above are re-exported here):

==================  ==============================================================
`columns`           the ``*_COLUMNS`` tuples and the parts they are made of
`dtypes`            column builders: categoricals, `STRING`, nullable booleans ...
`conditions`        `condition` (and `conditions` of several messages), `PLACEHOLDER`
`read`              the inputs, `FramesError`, what a result says about itself
`rows`              the rows a value frame is built from, and the frame
`values`            `fields` and `cells`, the one pass over the values
`batch_file`        a saved batch file read by pyarrow straight into columns
`pivot`             `tables`
`records`           `targets` and `extractions`
`responses`         `statuses` and `vault`
`schema_output`     `validation`
`export`            `save` and `load`
`dataset`           the Parquet dataset: its `layout`, `writer` (`write_dataset`,
                    `DatasetWriter`) and `reader` (`dataset` and its `Dataset`)
==================  ==============================================================

>>> from servicetools import frames as sf
>>> value = {"id": "v1", "extracted_field": "INV-1", "validation_passed": True,
...          "validation_messages": [], "confidence": 0.9}
>>> data = {"extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
...         "extracted_targets": [{"id": "x1", "used_extraction_target_id": "t1",
...                                "type": "field", "confidence": 0.8,
...                                "extracted_values": [value]}],
...         "used_extraction_configuration": {"extraction_targets": [
...             {"id": "t1", "type": "field", "name": "Invoice Number"}]}}
>>> sf.fields(data)[["document_name", "target_name", "value", "confidence"]]
  document_name     target_name  value  confidence
0         a.pdf  Invoice Number  INV-1         0.9
"""

from __future__ import annotations

from .columns import (
    CELL_COLUMNS,
    EXTRACTION_COLUMNS,
    FIELD_COLUMNS,
    ID_COLUMNS,
    STATUS_COLUMNS,
    TARGET_COLUMNS,
    VALIDATION_COLUMNS,
    VAULT_COLUMNS,
)
from .conditions import PLACEHOLDER, condition
from .dataset import Dataset, DatasetError, DatasetWriter, dataset, write_dataset
from .dtypes import STRING
from .export import load, save
from .pivot import tables
from .read import FramesError
from .records import extractions, targets
from .responses import statuses, vault
from .schema_output import validation
from .values import cells, fields, fields_and_cells

__all__ = [
    "CELL_COLUMNS",
    "Dataset",
    "DatasetError",
    "DatasetWriter",
    "EXTRACTION_COLUMNS",
    "FIELD_COLUMNS",
    "FramesError",
    "ID_COLUMNS",
    "PLACEHOLDER",
    "STATUS_COLUMNS",
    "STRING",
    "TARGET_COLUMNS",
    "VALIDATION_COLUMNS",
    "VAULT_COLUMNS",
    "cells",
    "condition",
    "dataset",
    "extractions",
    "fields",
    "fields_and_cells",
    "load",
    "save",
    "statuses",
    "tables",
    "targets",
    "validation",
    "vault",
    "write_dataset",
]
