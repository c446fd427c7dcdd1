"""The corrections ledger: rows, dtypes, Parquet round trip, and read by audit as truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import audit
from servicetools.analysis.ledger import COLUMNS, Ledger


def rows() -> list[dict[str, Any]]:
    return [
        {"extraction_id": "e1", "target_id": "t-total", "target_name": "Total",
         "value_id": "v1", "old_value": "1OO.00", "new_value": "100.00",
         "old_confidence": 0.4},
        {"extraction_id": "e1", "target_id": "t-number", "target_name": "Invoice Number",
         "value_id": "v2", "old_value": "INV-1", "new_value": "INV-1", "old_confidence": 0.9},
        {"extraction_id": "e1", "target_id": "t-items", "target_name": "t-items",
         "value_id": "c9", "table_id": "tb", "row": 2, "column": 0, "old_value": None,
         "new_value": "Freight"},
        {"extraction_id": "e1", "target_id": "t-items", "target_name": "t-items",
         "value_id": "c1", "table_id": "tb", "row": 0, "column": 3, "old_value": "x",
         "new_value": "", "old_confidence": 0.7, "change": "remove"},
    ]


def test_rows_get_a_time_and_a_change_kind() -> None:
    ledger = Ledger()
    added = ledger.append(rows())
    assert list(added.columns) == list(COLUMNS) and len(ledger) == 4
    assert ledger.frame["change"].tolist() == ["edit", "confirm", "add", "remove"]
    assert str(ledger.frame["time"].dtype) == "datetime64[ns, UTC]"
    assert ledger.frame["row"].tolist()[2:] == [2, 0] and pd.isna(ledger.frame["row"][0])
    frame = ledger.frame
    frame.loc[0, "new_value"] = "changed"  # a copy
    assert ledger.frame.loc[0, "new_value"] == "100.00"
    assert ledger.value_ids("e1") == {"v1", "v2", "c9", "c1"} and ledger.value_ids("e2") == set()
    with pytest.raises(ValueError, match="unknown ledger columns: colour"):
        ledger.append(colour="red")
    with pytest.raises(ValueError, match="change must be one of"):
        ledger.append(value_id="v", change="rewrite")
    with pytest.raises(TypeError):
        ledger.append(rows(), value_id="v")
    assert len(ledger) == 4


def test_parquet_round_trip_and_autosave(tmp_path: Path) -> None:
    ledger = Ledger()
    assert list(ledger.frame.columns) == list(COLUMNS)
    ledger.append(rows())
    path = ledger.save(tmp_path / "runs" / "ledger.parquet")
    loaded = Ledger.load(path)
    pd.testing.assert_frame_equal(loaded.frame, ledger.frame)
    empty = Ledger.load(Ledger().save(tmp_path / "empty.parquet"))
    pd.testing.assert_frame_equal(empty.frame, Ledger().frame)

    kept = Ledger(path=tmp_path / "kept.parquet")
    kept.append(rows()[:1])
    again = Ledger(path=tmp_path / "kept.parquet")
    assert again.frame["value_id"].tolist() == ["v1"]
    again.append(rows()[1:2])
    assert len(Ledger.load(tmp_path / "kept.parquet")) == 2
    with pytest.raises(TypeError):
        Ledger().save()


def test_audit_reads_the_ledger_as_ground_truth() -> None:
    ledger = Ledger()
    ledger.append(rows())
    truth = audit.truth(ledger.frame)
    assert set(truth["source"]) == {"ledger"}
    assert dict(zip(truth["value_id"], truth["value"], strict=True)) == {
        "v1": "100.00", "v2": "INV-1", "c9": "Freight", "c1": ""}


def test_docstring_example() -> None:
    import doctest

    from servicetools.analysis import ledger

    assert doctest.testmod(ledger).failed == 0
