"""The main job (`make demo`): the bundled sample batch through the service, audited.

It extracts every document of the bundled sample (`servicetools.bundled`: ``documents/``)
with its configuration (the embedded local service unless
``SERVICE_BASE_URL``/``SERVICE_API_KEY`` are set), then builds the report of the two
batches against the sample's ``truth/`` with `servicetools.report` (the page any saved
batch gets from ``servicetools report``): ``report/index.html`` with its plots, every
frame as Parquet, and the summary printed in the terminal.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import bundled, report
from .client import Batch, Client
from .extras import require_all

DATA = bundled.ROOT
#: configuration name -> the sample documents it reads (folders under data/documents)
SAMPLES = {"invoices": "invoices", "receipts": "receipts"}
ERROR_BUDGET = report.ERROR_BUDGET


def run(out_dir: str | Path = "report", *, data_dir: Path = DATA, client: Client | None = None,
        error_budget: float = ERROR_BUDGET, progress: bool = True) -> report.Report:
    """Extract, audit and report; returns the `report.Report` (files already written)."""
    # Before minutes of extraction, not after: the report's plots need matplotlib, and
    # without a remote service (or a client given) the embedded one needs its extra.
    remote = bool(os.environ.get("SERVICE_BASE_URL") and os.environ.get("SERVICE_API_KEY"))
    require_all(["plots"] if client is not None or remote else ["service", "plots"],
                feature="the demo")
    client = client or Client.from_env()
    batches: dict[str, Batch] = {}
    for configuration, folder in SAMPLES.items():
        documents = sorted(p for p in (data_dir / "documents" / folder).iterdir()
                           if p.suffix.lower() in (".pdf", ".png", ".jpg", ".jpeg"))
        batches[configuration] = client.extract_many(
            documents, configuration_name=configuration, progress=progress)
        batches[configuration].save(Path(out_dir) / "batches" / f"{configuration}.jsonl")
    return report.build(batches, out_dir, truth=data_dir / "truth", error_budget=error_budget,
                        title="servicetools demo: the sample batch, audited")


def main(out_dir: str = "report") -> int:
    print(run(out_dir).summary)
    return 0
