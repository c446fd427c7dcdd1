"""Issue 14: categories of what the toolkit returns, ids as strings.

- A subset returned by the toolkit keeps only the categories its rows use, so
  ``value_counts()`` lists no zero rows for what was filtered out.
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
from servicetools.analysis.audit.work import work_frame
from servicetools.analysis.frames.dtypes import categorical, observed

FIXTURES = Path(__file__).parent / "fixtures"
FRAMES_WITH_IDS = (frames.fields, frames.cells, frames.targets, frames.extractions,
                   frames.validation)


@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return results


def unused(column: pd.Series | pd.Index) -> set[Any]:
    """The categories no row uses (a zero of ``value_counts()``)."""
    values = column if isinstance(column, pd.Index) else column.array
    return set(values.categories) - set(pd.Series(values).dropna())


def categoricals(frame: pd.DataFrame) -> list[str]:
    return [name for name, dtype in frame.dtypes.items()
            if isinstance(dtype, pd.CategoricalDtype)]


# -- unobserved categories -------------------------------------------------------------------
def test_observed_drops_unused_categories_of_columns_and_index() -> None:
    frame = pd.DataFrame({"name": categorical(["a", "b", "c", "b"]), "n": [1, 2, 3, 4]})
    part = frame[frame["name"] == "b"].set_index(pd.CategoricalIndex(["x", "x"],
                                                                     categories=["y", "x"]))
    assert unused(part["name"]) == {"a", "c"}
    clean = observed(part)
    assert list(clean["name"].cat.categories) == ["b"]
    assert list(clean.index.categories) == ["x"]
    assert clean["name"].value_counts().to_dict() == {"b": 2}
    assert unused(part["name"]) == {"a", "c"}  # the caller's frame is left as it was
    # Nothing unused: the frame itself, no copy.
    assert observed(frame) is frame
    # The order of the categories that stay is kept (targets in configuration order).
    ordered = observed(frame[frame["name"] != "b"])
    assert list(ordered["name"].cat.categories) == ["a", "c"]


def test_audits_of_a_filtered_frame_hold_only_its_targets(hand: list[dict[str, Any]]) -> None:
    fields, cells = frames.fields(hand), frames.cells(hand)
    tags = fields[fields["target_name"] == "Tags"]  # the user's filter: all categories stay
    assert unused(tags["target_name"])
    work = work_frame(tags)
    assert all(not unused(work[name]) for name in categoricals(work))
    card = audit.scorecard(tags)
    assert list(card.index) == ["Tags"] and not unused(card.index)
    assert all(not unused(card[name]) for name in categoricals(card))
    # Summaries that call each other pass the stacked frame along: cleaned there too.
    stacked = work_frame(fields, cells)
    some = stacked[stacked["target"] == "Note"]
    assert not unused(audit.scorecard(some).index)
    docs = audit.documents(tags)
    assert all(not unused(docs[name]) for name in categoricals(docs))


def test_grade_and_compare_return_only_what_they_hold(hand: list[dict[str, Any]]) -> None:
    truth = pd.DataFrame({"document": ["invoices/a.pdf"], "target_name": ["Tags"],
                          "value_index": [0], "value": ["red"]})
    graded = audit.grade(frames.fields(hand), truth)
    assert set(graded["target"]) == {"Tags"}
    assert all(not unused(graded[name]) for name in categoricals(graded)), {
        name: unused(graded[name]) for name in categoricals(graded)}
    # compare keeps, on each side, the documents found in the other: e-a alone here.
    one = [r for r in hand if r["extraction_info"]["extraction_id"] == "e-a"]
    both = audit.compare(hand, one)
    assert not isinstance(both.index, pd.CategoricalIndex) or not unused(both.index)


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
