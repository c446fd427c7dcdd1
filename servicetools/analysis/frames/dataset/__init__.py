"""Batches as a Parquet dataset on disk: written as results arrive, read lazily.

A batch of a million documents does not fit in a notebook's memory as JSON, nor as
frames; as Parquet it is a few hundred megabytes on disk, and DuckDB aggregates it
without loading it (the audits take a `Dataset` where they take frames).

==========  ===================================================================
`layout`    the folders and part files, the tables' schemas, `DatasetError`
`writer`    `DatasetWriter` (a part file every few hundred results), `write_dataset`
`reader`    `dataset` and its `Dataset`: tables read into frames, a DuckDB connection
==========  ===================================================================

>>> import tempfile
>>> from servicetools import frames as sf
>>> value = {"id": "v1", "extracted_field": "INV-1", "validation_passed": True,
...          "validation_messages": [], "confidence": 0.9}
>>> data = {"extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
...         "extracted_targets": [{"id": "x1", "used_extraction_target_id": "t1",
...                                "type": "field", "extracted_values": [value]}]}
>>> with tempfile.TemporaryDirectory() as folder:
...     ds = sf.write_dataset([data], folder, batch="monday")
...     print(ds.batches, len(ds.fields()))
['monday'] 1
"""

from __future__ import annotations

from .layout import FAILURE_COLUMNS, SCHEMAS, STATUS_COLUMNS, TABLES, DatasetError
from .reader import Dataset, dataset, table_frame
from .writer import DEFAULT_RESULTS_PER_PART, DatasetWriter, write_dataset

__all__ = [
    "DEFAULT_RESULTS_PER_PART",
    "Dataset",
    "DatasetError",
    "DatasetWriter",
    "FAILURE_COLUMNS",
    "SCHEMAS",
    "STATUS_COLUMNS",
    "TABLES",
    "dataset",
    "table_frame",
    "write_dataset",
]
