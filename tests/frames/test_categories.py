"""Issue 14: ids as strings.

- Ids of what a batch holds many of (`frames.ID_COLUMNS`) are strings in every frame:
  a dtype never lists the batch's ids, and whatever the input's size the dtypes are the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import audit, frames

FIXTURES = Path(__file__).parent / "fixtures"
FRAMES_WITH_IDS = (frames.fields, frames.cells, frames.targets, frames.extractions,
                   frames.validation)


@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return results


# -- ids as strings --------------------------------------------------------------------------
@pytest.mark.parametrize("convert", FRAMES_WITH_IDS, ids=lambda f: f.__name__)
def test_ids_are_strings_whatever_the_input_size(convert: Any, hand: list[dict[str, Any]]
                                                 ) -> None:
    full, empty = convert(hand), convert([])
    ids = [name for name in frames.ID_COLUMNS if name in full.columns]
    assert "extraction_id" in ids
    for name in ids:
        assert full[name].dtype == frames.STRING, name
    assert empty.dtypes.astype(str).tolist() == full.dtypes.astype(str).tolist()


def test_printing_dtypes_lists_no_id(hand: list[dict[str, Any]]) -> None:
    f, c = frames.fields(hand), frames.cells(hand)
    shown = repr(f.dtypes) + repr(c.dtypes) + "".join(repr(d) for d in f.dtypes) + "".join(
        repr(d) for d in c.dtypes)
    for value in ("e-a", "d-a", "tbl-1"):
        assert value not in shown
    # After a filter, counting by id lists the ids that are there, and no other.
    a = f[f["extraction_id"] == "e-a"]
    assert a["extraction_id"].value_counts().to_dict() == {"e-a": 5}


def test_statuses_and_grades_have_string_ids(hand: list[dict[str, Any]]) -> None:
    assert frames.statuses(fixture_statuses())["extraction_id"].dtype == frames.STRING
    assert frames.statuses([])["extraction_id"].dtype == frames.STRING
    truth = pd.DataFrame({"document": ["invoices/a.pdf"], "target_name": ["Tags"],
                          "value": ["red"]})
    assert audit.grade(frames.fields(hand), truth)["extraction_id"].dtype == frames.STRING


def test_string_ids_round_trip_parquet_and_csv(hand: list[dict[str, Any]], tmp_path: Path
                                               ) -> None:
    cells = frames.cells(hand)
    for name in ("cells.parquet", "cells.csv"):
        back = frames.load(frames.save(cells, tmp_path / name))
        assert isinstance(back, pd.DataFrame)
        pd.testing.assert_frame_equal(back, cells)
        assert back["table_id"].dtype == frames.STRING


def fixture_statuses() -> Any:
    return json.loads((FIXTURES / "recorded_status_list.json").read_text(encoding="utf-8"))
