"""Where `extract_many(..., to=PATH)` and `Batch.to_dataset` send results: a dataset.

The client side does not convert results (that is the analysis side's job, with
pandas); to stream a batch into a Parquet dataset it hands each result, as it arrives,
to the analysis side's `frames.DatasetWriter`. That writer is imported here, inside the
function, when a dataset is asked for: the one import from the client up to the
analysis side, allowed by name in ``tests/test_layers.py`` (it needs no extra: pandas
and pyarrow are core dependencies).
"""

from __future__ import annotations

import os
from typing import Any, Protocol

__all__ = ["ResultSink", "dataset_writer"]


class ResultSink(Protocol):
    """What results stream into: one `add` per result, one `add_failure` per document
    without one, then `close`, which returns what was written; ``meta`` (the batch's
    configuration, timings ...) is kept with them."""

    meta: dict[str, Any]

    def add(self, data: Any, document: str | None = None) -> None: ...

    def add_failure(self, failure: Any) -> None: ...

    def close(self) -> Any: ...


def dataset_writer(path: str | os.PathLike[str], batch: str | None = None, *,
                   overwrite: bool = False, meta: dict[str, Any] | None = None,
                   errors: str = "raise") -> ResultSink:
    """A `frames.DatasetWriter` for one batch of the dataset at ``path``; ``errors`` as
    the frames take it."""
    from ..analysis.frames.dataset import DatasetWriter

    return DatasetWriter(path, batch, overwrite=overwrite, meta=meta,
                         errors="ignore" if errors == "ignore" else "raise")
