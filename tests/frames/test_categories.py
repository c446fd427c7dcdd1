"""Issue 14: categories of what the toolkit returns, ids as strings, statuses of a batch.

- A subset returned by the toolkit keeps only the categories its rows use, so
  ``value_counts()`` lists no zero rows for what was filtered out.
- Ids of what a batch holds many of (`frames.ID_COLUMNS`) are strings in every frame:
  a dtype never lists the batch's ids, and whatever the input's size the dtypes are the same.
- ``frames.statuses(batch)`` gives what the batch knows of each extraction, and says what
  to pass when the input holds no statuses.
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
from servicetools.client.batch import Batch, Failure

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
    assert frames.statuses(hand)["extraction_id"].dtype == frames.STRING
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


# -- statuses of a batch ---------------------------------------------------------------------
def test_a_batch_of_ended_results_gives_their_statuses(hand: list[dict[str, Any]]) -> None:
    # Before, a batch without failures gave an empty frame without a word.
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in hand},
                  documents={"e-a": "a.pdf"})
    s = frames.statuses(batch)
    assert tuple(s.columns) == frames.STATUS_COLUMNS
    assert s["extraction_id"].tolist() == ["e-a", "e-b", "e-c"]
    assert s["status_type"].tolist() == ["ended"] * 3
    assert s["is_final"].tolist() == [True] * 3
    assert s["created"].tolist() == [pd.Timestamp(r["creation_unix_timestamp"], unit="s",
                                                  tz="UTC") for r in hand]
    assert s["trigger_user_id"].tolist() == ["u-1"] * 3
    assert s["status_id"].isna().all() and s["message"].isna().all()  # not known
    # The results themselves stand for the same statuses.
    pd.testing.assert_frame_equal(frames.statuses(hand), s)


def test_a_batch_gives_its_failures_with_their_stage_and_reason(
        hand: list[dict[str, Any]]) -> None:
    error = {"id": "s-x", "extraction_id": "e-x", "status_type": "error",
             "message": "not an invoice", "creation_unix_timestamp": 1767225700.0,
             "trigger_user_id": "u-1"}
    waiting = {"id": "s-y", "extraction_id": "e-y", "status_type": "extraction_started",
               "message": "", "creation_unix_timestamp": 1767225710.0,
               "trigger_user_id": "u-1"}
    batch = Batch(results={"e-a": hand[0]}, failures=[
        Failure("x.pdf", "extraction", "not an invoice", extraction_id="e-x",
                details={"status": error}),
        Failure("y.pdf", "wait", "not finished within 5 s (last status: extraction_started)",
                extraction_id="e-y", details={"status": waiting}),
        Failure("z.pdf", "fetch", "the service did not answer", extraction_id="e-z"),
        Failure("bad.txt", "read", "unreadable"),  # no extraction: only in batch.failures
    ])
    s = frames.statuses(batch).set_index("extraction_id")
    assert s.index.tolist() == ["e-a", "e-x", "e-y", "e-z"]
    assert s["status_type"].astype(object).where(s["status_type"].notna(), None).tolist() == [
        "ended", "error", "extraction_started", None]
    assert s.loc["e-x", "message"] == "not an invoice"
    assert s.loc["e-z", "message"] == "fetch: the service did not answer"
    assert s["is_final"].tolist() == [True, True, False, pd.NA]


def test_statuses_say_what_to_pass_when_the_input_holds_none(hand: list[dict[str, Any]]
                                                             ) -> None:
    fields = frames.fields(hand)
    with pytest.raises(frames.FramesError, match=r"a DataFrame holds no status objects: "
                                                 r"pass a Batch, client.get_statuses\(ids\)"):
        frames.statuses(fields)
    with pytest.raises(frames.FramesError, match=r"data\[0\]: an extraction id, not a status "
                                                 r"object: pass client.get_statuses\(ids\)"):
        frames.statuses(fields["extraction_id"].unique())
    assert frames.statuses(fields, errors="ignore").empty
