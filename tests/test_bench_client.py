"""The client bench's pieces that compare `extract_many` with the engine in-process, checked
without a service or a pool: the engine call, the documents, the pool's size, the ratio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import client as bench  # noqa: E402

from servicetools import bundled  # noqa: E402
from servicetools.service.settings import Settings  # noqa: E402


def test_the_engine_runs_every_target_of_the_configuration_on_one_document() -> None:
    configuration = bundled.CONFIGURATIONS / "invoices.json"
    targets = json.loads(configuration.read_text())["extraction_targets"]
    assert bench.engine_extract(bench.invoice_pdf("INV-1"), "invoices") == len(targets)


def test_the_engine_refuses_what_the_service_would_refuse() -> None:
    with pytest.raises(LookupError, match="no-such"):
        bench.engine_extract(bench.invoice_pdf("INV-1"), "no-such")
    with pytest.raises(ValueError, match="not a document"):
        bench.engine_extract(b"plain text", "invoices")


def test_the_pool_is_the_size_of_the_service_s_default() -> None:
    assert bench.service_workers() == Settings(data_dir=Path()).workers >= 1


def test_documents_are_read_as_extract_many_reads_them(tmp_path: Path) -> None:
    scans = bench.bundled_scans()
    assert scans and all(p.suffix.lower() in {".png", ".jpg", ".jpeg"} for p in scans)
    assert all(p.is_relative_to(bundled.DOCUMENTS) for p in scans)  # read, not copied
    path = tmp_path / "a.png"
    path.write_bytes(b"png bytes")
    assert bench.read_documents([("b.pdf", b"pdf bytes"), path, str(path)]) == [
        b"pdf bytes", b"png bytes", b"png bytes"]


def test_the_ratio_is_extract_many_s_throughput_over_the_pool_s() -> None:
    # The same documents: extract_many took 2 s and 4 s where the pool took 1 s and 3 s.
    pairs, medians = bench.ratio_summary([2.0, 4.0], [1.0, 3.0])
    assert pairs == pytest.approx((0.5 + 0.75) / 2)
    assert medians == pytest.approx(2.0 / 3.0)
    assert bench.docs_per_second(10, [2.0, 0.5]) == [5.0, 20.0]
    with pytest.raises(ValueError):
        bench.ratio_summary([1.0], [])


def test_cpu_time_counts_this_process_and_grows_with_work() -> None:
    before = bench.tree_cpu_seconds()
    sum(i * i for i in range(2_000_000))
    assert bench.tree_cpu_seconds() > before > 0
