"""Every frame saved to Parquet and CSV loads back equal: dtypes, index and all."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import audit, bundled, frames
from servicetools.client.batch import Batch
from servicetools.extras import MissingExtra

FIXTURES = Path(__file__).parent / "fixtures"
DATA = bundled.ROOT


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def data() -> list[dict[str, Any]]:
    hand: list[dict[str, Any]] = fixture("handwritten.json")["results"]
    return hand + fixture("recorded_responses.json")


def _ledger() -> pd.DataFrame:
    return pd.DataFrame({"extraction_id": ["e-a"], "target_id": ["t-tags"],
                         "value_id": ["v-a3"], "old_value": ["blu`e"], "new_value": ["blue"],
                         "old_confidence": [0.4],
                         "time": pd.to_datetime(["2026-01-01"], utc=True)})


BUILDERS: dict[str, Callable[[list[dict[str, Any]]], pd.DataFrame]] = {
    "fields": frames.fields,
    "cells": frames.cells,
    "targets": frames.targets,
    "extractions": frames.extractions,
    "validation": frames.validation,
    "statuses": lambda _: frames.statuses(fixture("recorded_status_history.json")),
    "vault": lambda _: frames.vault(fixture("recorded_vault_list.json")),
    "scorecard": lambda d: audit.scorecard(d, corrections=_ledger()),
    "failures": audit.failures,
    "documents": audit.documents,
    "drift": lambda d: audit.drift(d[:3], d[3:]),
    "compare": lambda d: audit.compare(d, d[:4], DATA / "truth"),
    "grade": lambda d: audit.grade(d, DATA / "truth"),
    "accuracy": lambda d: audit.accuracy(d, DATA / "truth"),
    "calibration_table": lambda d: audit.calibration(d, DATA / "truth").table,
    "calibration": lambda d: audit.calibration(d, DATA / "truth").summary,
    "sweep": lambda d: audit.thresholds(d, DATA / "truth").sweep,
    "recommended": lambda d: audit.thresholds(d, DATA / "truth").recommended,
    "truth": lambda _: audit.truth(DATA / "truth" / "inv-0007.json"),
    "ledger_truth": lambda _: audit.truth(_ledger()),
}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("name", list(BUILDERS))
def test_round_trip(data: list[dict[str, Any]], tmp_path: Path, name: str, suffix: str
                    ) -> None:
    frame = BUILDERS[name](data)
    assert len(frame) > 0
    path = frames.save(frame, tmp_path / f"{name}{suffix}")
    loaded = frames.load(path)
    assert isinstance(loaded, pd.DataFrame)
    pd.testing.assert_frame_equal(loaded, frame)
    if suffix == ".csv":
        assert (tmp_path / f"{name}.csv.schema.json").exists()


@pytest.mark.parametrize("suffix", ["", ".csv"])
def test_tables_round_trip_as_a_folder(data: list[dict[str, Any]], tmp_path: Path,
                                       suffix: str) -> None:
    tables = frames.tables(data)
    folder = frames.save(tables, tmp_path / f"tables{suffix}")
    loaded = frames.load(folder)
    assert isinstance(loaded, dict) and list(loaded) == list(tables)
    for key, wide in tables.items():
        pd.testing.assert_frame_equal(loaded[key], wide)
        assert loaded[key].attrs == wide.attrs


def test_a_saved_batch_and_its_frames_reload_without_the_service(
        data: list[dict[str, Any]], tmp_path: Path) -> None:
    results = [d.get("extracted_data", d) for d in data]
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in results},
                  documents={r["extraction_info"]["extraction_id"]:
                             r["extraction_info"]["extraction_name"] for r in results})
    fields = frames.fields(batch)
    frames.save(fields, tmp_path / "fields.parquet")
    again = Batch.load(batch.save(tmp_path / "batch.jsonl"))
    pd.testing.assert_frame_equal(frames.fields(again), fields)
    pd.testing.assert_frame_equal(frames.load(tmp_path / "fields.parquet"), fields)
    pd.testing.assert_frame_equal(audit.scorecard(again), audit.scorecard(batch))


def test_csv_keeps_empty_strings_apart_from_missing(tmp_path: Path) -> None:
    frame = pd.DataFrame({"value": pd.array(["", None, "\\N", "a\r\nb", '"q"'],
                                            dtype=frames.STRING)})
    loaded = frames.load(frames.save(frame, tmp_path / "v.csv"))
    pd.testing.assert_frame_equal(loaded, frame)


def test_save_refuses_an_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.parquet, \.csv or \.xlsx, not '\.xls'"):
        frames.save(pd.DataFrame({"a": [1]}), tmp_path / "a.xls")


_EXCEL = importlib.util.find_spec("openpyxl") is not None


@pytest.mark.skipif(_EXCEL, reason="the excel extra is installed (make test-wheel has none)")
def test_excel_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(MissingExtra, match=r"servicetools\[excel\]"):
        frames.save(pd.DataFrame({"a": [1]}), tmp_path / "a.xlsx")


@pytest.mark.skipif(not _EXCEL, reason="needs the excel extra (in make test's dev extra)")
def test_frames_saved_as_an_excel_workbook_one_sheet_each(data: list[dict[str, Any]],
                                                          tmp_path: Path) -> None:
    import openpyxl

    fields, cells = frames.fields(data), frames.cells(data)
    card = audit.scorecard(fields, cells)
    path = frames.save({"fields": fields, "cells": cells, "scorecard: all/targets": card},
                       tmp_path / "out" / "audit.xlsx")
    book = openpyxl.load_workbook(path, read_only=True)
    # Excel refuses ":" and "/" in a sheet's name.
    assert book.sheetnames == ["fields", "cells", "scorecard_ all_targets"]
    rows = list(book["fields"].iter_rows(values_only=True))
    assert list(rows[0]) == list(frames.FIELD_COLUMNS)  # a RangeIndex is not written
    assert len(rows) == len(fields) + 1
    assert [r[0] for r in book["scorecard_ all_targets"].iter_rows(values_only=True)][1:] \
        == list(card.index)  # a named index is
    # Times without their zone (UTC), validation messages one per line.
    created = rows[1][list(frames.FIELD_COLUMNS).index("created")]
    assert created == fields["created"].iloc[0].tz_convert("UTC").tz_localize(None)
    messages = list(frames.FIELD_COLUMNS).index("validation_messages")
    written = [r[messages] for r in rows[1:]]
    assert all(w is None or isinstance(w, str) for w in written)
    one = frames.save(fields, tmp_path / "fields.xlsx")
    assert openpyxl.load_workbook(one, read_only=True).sheetnames == ["data"]
