"""Batches as Parquet datasets: written a part at a time, read back as the same frames,
opened lazily, fed by `extract_many(to=...)` from the real local service."""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import Batch, BatchFailures, Client, Failure, LocalService, audit, frames
from servicetools.analysis.audit.work import work_frame
from servicetools.client import ResultSink

from ..support.helpers import ROOT, make_invoice_pdf

FIXTURES = Path(__file__).parent / "fixtures"


def synthetic(n: int, seed: int = 3) -> list[dict[str, Any]]:
    """``n`` results of bench/frames.py's kind: 20 fields and a 30 x 5 table each."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_frames", ROOT / "bench" / "frames.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = random.Random(seed)
    config = module.configuration()
    return [module.result(rng, i, config) for i in range(n)]


@pytest.fixture(scope="module")
def results() -> list[dict[str, Any]]:
    return synthetic(23)


def test_read_back_gives_the_frames_of_the_results(results: list[dict[str, Any]],
                                                   tmp_path: Path) -> None:
    # Three results a part: eight parts, and the frames as if converted at once.
    writer = frames.DatasetWriter(tmp_path, "b1", results_per_part=3)
    for r in results:
        writer.add(r)
    ds = writer.close()
    assert len(list((tmp_path / "fields" / "batch=b1").glob("part-*.parquet"))) == 8
    pd.testing.assert_frame_equal(ds.fields().drop(columns="batch"), frames.fields(results))
    pd.testing.assert_frame_equal(ds.cells().drop(columns="batch"), frames.cells(results))
    assert ds.fields()["batch"].tolist() == ["b1"] * len(ds.fields())


def test_a_streaming_writer_leaves_a_malformed_piece_na_and_keeps_the_part(
        results: list[dict[str, Any]], tmp_path: Path) -> None:
    # What extract_many(to=DatasetWriter(...)) does with a broken result: its part (and
    # the run) go on, where errors="raise" loses them.
    broken = json.loads(json.dumps(results[:4]))
    broken[1]["extracted_targets"][0]["extracted_values"] = "not a list"
    writer = frames.DatasetWriter(tmp_path, "b", results_per_part=4)
    for r in broken:
        writer.add(r)
    ds = writer.close()
    pd.testing.assert_frame_equal(ds.fields().drop(columns="batch"),
                                  frames.fields(broken, errors="ignore"))
    with pytest.raises(frames.FramesError):
        strict = frames.DatasetWriter(tmp_path, "strict", results_per_part=4, errors="raise")
        for r in broken:
            strict.add(r)


def test_messy_results_round_trip(tmp_path: Path) -> None:
    handwritten = json.loads((FIXTURES / "handwritten.json").read_text(encoding="utf-8"))
    ds = frames.write_dataset(handwritten, tmp_path, "h", errors="ignore")
    expected_fields = frames.fields(handwritten, errors="ignore")
    expected_cells = frames.cells(handwritten, errors="ignore")
    pd.testing.assert_frame_equal(ds.fields().drop(columns="batch"), expected_fields)
    pd.testing.assert_frame_equal(ds.cells().drop(columns="batch"), expected_cells)


def test_batches_in_name_order_and_select(results: list[dict[str, Any]], tmp_path: Path
                                          ) -> None:
    frames.write_dataset(results[10:], tmp_path, "2026-11-24")
    frames.write_dataset(results[:10], tmp_path, "2026-11-23")
    ds = frames.dataset(tmp_path)
    assert ds.batches == ["2026-11-23", "2026-11-24"]
    pd.testing.assert_frame_equal(ds.fields().drop(columns="batch"), frames.fields(results))
    monday = ds.select("2026-11-23")
    assert monday.batches == ["2026-11-23"]
    pd.testing.assert_frame_equal(monday.cells().drop(columns="batch"),
                                  frames.cells(results[:10]))
    info = ds.info()
    assert info["documents"].tolist() == [10, 13]
    assert info["fields"].tolist() == [200, 260] and info["complete"].all()
    assert "2 batches" in repr(ds)


def test_the_work_view_labels_rows_as_the_work_frame(results: list[dict[str, Any]],
                                                     tmp_path: Path) -> None:
    ds = frames.write_dataset(results, tmp_path, "b")
    with ds.connect() as con:
        view = con.execute('SELECT kind, target, filled, confidence FROM work ORDER BY "order"'
                           ).df()
        settings = dict(con.execute("SELECT name, value FROM duckdb_settings() WHERE name "
                                    "LIKE 'auto%known_extensions'").fetchall())
    work = work_frame(ds.fields(), ds.cells())
    assert view["target"].tolist() == work["target"].astype(object).tolist()
    assert view["kind"].tolist() == work["kind"].astype(object).tolist()
    assert view["filled"].tolist() == work["filled"].tolist()
    # Never an extension from the network at run time.
    assert settings == {"autoinstall_known_extensions": "false",
                        "autoload_known_extensions": "false"}


def test_refusals_say_what_to_do(results: list[dict[str, Any]], tmp_path: Path) -> None:
    frames.write_dataset(results[:2], tmp_path, "b1")
    with pytest.raises(frames.DatasetError, match="already in .*overwrite=True"):
        frames.write_dataset(results[:3], tmp_path, "b1")
    assert len(frames.dataset(tmp_path).fields()) == 40  # the old batch is intact
    frames.write_dataset(results[:3], tmp_path, "b1", overwrite=True)
    assert len(frames.dataset(tmp_path).fields()) == 60
    with pytest.raises(frames.DatasetError, match="batch name '../x'"):
        frames.DatasetWriter(tmp_path, "../x")
    with pytest.raises(frames.DatasetError, match="no batch 'b9' in .* it holds b1"):
        frames.dataset(tmp_path, "b9")
    with pytest.raises(frames.DatasetError, match="no batches in"):
        frames.dataset(tmp_path / "fields" / "batch=b1")
    with pytest.raises(frames.DatasetError, match="not a folder"):
        frames.dataset(tmp_path / "nothing")
    writer = frames.DatasetWriter(tmp_path, "b2")
    writer.close()
    with pytest.raises(frames.DatasetError, match="closed"):
        writer.add(results[0])


def test_an_unfinished_batch_is_readable_and_marked(results: list[dict[str, Any]],
                                                    tmp_path: Path) -> None:
    writer = frames.DatasetWriter(tmp_path, "running", results_per_part=5)
    for r in results[:12]:
        writer.add(r)
    ds = frames.dataset(tmp_path)  # two parts written, two results pending
    assert ds.complete == {"running": False}
    assert len(ds.fields()) == 200
    writer.close()
    assert frames.dataset(tmp_path).complete == {"running": True}


def test_an_empty_batch_gives_empty_frames_and_views(tmp_path: Path) -> None:
    ds = frames.write_dataset([], tmp_path, "empty")
    assert ds.fields().empty and list(ds.fields().columns) == [*frames.FIELD_COLUMNS, "batch"]
    with ds.connect() as con:
        assert con.execute("SELECT count(*) FROM work").fetchone() == (0,)


def test_a_batch_written_keeps_failures_as_statuses(results: list[dict[str, Any]],
                                                    tmp_path: Path) -> None:
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in results[:4]},
                  documents={r["extraction_info"]["extraction_id"]: f"doc-{i}.pdf"
                             for i, r in enumerate(results[:4])},
                  failures=[Failure("broken.pdf", "trigger", "not a PDF", code="bad_document",
                                    http_status=422)],
                  configuration={"name": "bench", "id": "cfg-bench-1"})
    ds = frames.write_dataset(batch, tmp_path, "b")
    statuses = ds.statuses()
    assert statuses["status"].astype(object).tolist() == ["ended"] * 4 + ["failed"]
    assert statuses["document_name"].astype(object).tolist() == [
        "doc-0.pdf", "doc-1.pdf", "doc-2.pdf", "doc-3.pdf", "broken.pdf"]
    failed = statuses.iloc[-1]
    assert (failed["stage"], failed["code"], failed["http_status"]) == (
        "trigger", "bad_document", 422)
    assert ds.fields()["document_name"].astype(object).iloc[0] == "doc-0.pdf"
    assert ds.info().loc["b", "configuration"] == "bench"
    # The failed validation messages, one row each, with their condition.
    failures = ds.failures()
    assert len(failures) == int((~ds.fields()["validation_passed"]).sum()
                                + (~ds.cells()["validation_passed"]).sum())
    assert (failures["condition"].astype(str) == "`{value}` is not an amount").all()


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


def test_extract_many_streams_into_a_dataset(client: Client, tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"inv-{i}.pdf").write_bytes(make_invoice_pdf(number=f"INV-DS-{i:04d}"))
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf at all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchFailures)
        ds = client.extract_many(str(tmp_path / "*.pdf"), configuration_name="invoices",
                                 progress=False,
                                 to=frames.DatasetWriter(tmp_path / "runs", "monday"))
    assert isinstance(ds, frames.Dataset) and ds.batches == ["monday"]
    fields = ds.fields()
    numbers = fields.loc[fields["target_name"] == "Invoice Number", "value"]
    assert sorted(numbers) == [f"INV-DS-{i:04d}" for i in range(5)]
    assert set(fields["document_name"].astype(str)) == {
        str(tmp_path / f"inv-{i}.pdf") for i in range(5)}
    statuses = ds.statuses()
    assert statuses["status"].value_counts().to_dict() == {"ended": 5, "failed": 1}
    assert ds.info().loc["monday", "configuration"] == "invoices"
    # The audits take it as they take frames.
    card = audit.scorecard(ds.fields(), ds.cells())
    assert "Invoice Number" in card.index
    # The same name again is refused before anything runs: by the sink's constructor.
    with pytest.raises(frames.DatasetError, match="already in"):
        client.extract_many(str(tmp_path / "inv-0.pdf"), configuration_name="invoices",
                            progress=False,
                            to=frames.DatasetWriter(tmp_path / "runs", "monday"))
    assert frames.dataset(tmp_path / "runs").info().loc["monday", "documents"] == 6


def test_the_dataset_writer_is_the_clients_result_sink() -> None:
    # Explicitly, so that mypy checks the methods against the protocol.
    assert ResultSink in frames.DatasetWriter.__mro__


def test_the_old_ways_into_a_dataset_say_what_to_write(tmp_path: Path) -> None:
    # The client no longer imports the analysis side, so it cannot open a dataset itself.
    batch = Batch(results={"e1": {"extracted_targets": []}})
    with pytest.raises(TypeError) as gone:
        batch.to_dataset("runs/fleet", "2026-11-16")
    assert str(gone.value).endswith(
        'st.frames.write_dataset(batch, "runs/fleet", "2026-11-16")')
    with pytest.raises(TypeError, match=r'write_dataset\(batch, "x", overwrite=True\)'):
        batch.to_dataset(Path("x"), overwrite=True)
    # A service that is not there: the TypeError comes before anything is tried. (mypy
    # refuses these calls too: no overload of extract_many takes them.)
    with Client(base_url="http://127.0.0.1:9", api_key="k", retries=0) as nowhere:
        with pytest.raises(TypeError) as old:
            nowhere.extract_many(tmp_path, configuration_name="invoices", progress=False,
                                 to="runs/fleet", batch_name="2026-11-23")
        assert 'to=st.frames.DatasetWriter("runs/fleet", "2026-11-23")' in str(old.value)
        with pytest.raises(TypeError, match=r'DatasetWriter\("runs/x"\)'):
            nowhere.extract_many(tmp_path, configuration_name="invoices", progress=False,
                                 to=Path("runs/x"))
        with pytest.raises(TypeError, match=r'the sink names the batch, '
                           r'to=st.frames.DatasetWriter\(path, "monday"\)'):
            nowhere.extract_many(tmp_path, configuration_name="invoices", progress=False,
                                 batch_name="monday")
        with pytest.raises(TypeError, match="takes a result sink"):
            nowhere.extract_many(tmp_path, configuration_name="invoices", progress=False,
                                 to={"path": "runs"})
    assert not (tmp_path / "runs").exists() and not Path("runs/fleet").exists()
