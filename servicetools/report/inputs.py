"""What the pages read: saved batches (or `Batch` objects) by label, and truth given as
anything `audit.truth` reads or as a saved corrections ledger (``.parquet``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..analysis.ledger import Ledger
from ..client import Batch

__all__ = ["add_inputs", "batches_of", "truth_source"]


def batches_of(source: Batch | str | os.PathLike[str] | Iterable[Any] | Mapping[str, Batch]
             ) -> dict[str, Batch]:
    """``{label: Batch}`` from batches, saved batch files, or a mapping of them."""
    if isinstance(source, Mapping):
        return {str(k): v if isinstance(v, Batch) else Batch.load(v) for k, v in source.items()}
    items = [source] if isinstance(source, Batch | str | os.PathLike) else list(source)
    out: dict[str, Batch] = {}
    for i, item in enumerate(items):
        if isinstance(item, Batch):
            label = str(item.configuration.get("name") or item.configuration.get("id")
                        or f"batch {i + 1}")
        else:
            label, item = Path(item).name, Batch.load(item)
        while label in out:  # two batches of one configuration: both kept
            label += "'"
        out[label] = item
    if not out:
        raise ValueError("no batch given: pass Batch objects or saved .jsonl files")
    return out


def truth_source(source: Any) -> Any:
    """A saved corrections ledger (``.parquet``) as its frame; anything else as given
    (what `audit.truth` reads)."""
    if isinstance(source, str | os.PathLike) and Path(source).suffix == ".parquet":
        return Ledger.load(source).frame
    return source


def add_inputs(parser: argparse.ArgumentParser) -> None:
    """The arguments every page's command reads: the saved batches and ``--truth``."""
    parser.add_argument("batches", nargs="+", metavar="BATCH.jsonl",
                        help="batch files written by `servicetools extract` or Batch.save")
    parser.add_argument("--truth", metavar="DIR",
                        help="ground truth (a folder of truth files, a CSV/JSON table, or a "
                             "corrections ledger .parquet)")
