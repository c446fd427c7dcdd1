"""`scorecard`, `failures` and `documents` of a `frames.Dataset` (pushed down to DuckDB)
give the frame the in-memory path gives on the dataset's own frames.

The generated batches hold what makes the two paths part ways if one of them is off:
several configurations (one without an id or a name), fields without a name (they go by
their id), multi-valued fields, blank and missing values, missing confidences, failed validations
with messages quoting the value (or something else, or nothing, or twice), tables whose
configuration names only some columns, and several batches written in several parts.
Values come from a small alphabet so that examples and conditions tie.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicetools import audit, frames
from servicetools.analysis.audit.work import work_frame

pytest.importorskip("duckdb")

ABSENT = object()
#: Few texts, so that values repeat (examples and conditions tie); blanks and backticks.
TEXTS = st.sampled_from(["", " ", "A", "B", "12.5", "a`b", "`x`", "Ünï", None])
CONFIDENCE = st.one_of(st.just(ABSENT), st.none(), st.floats(0, 1), st.sampled_from(
    [0.25, 0.5, 0.75]))
#: Message templates: the value quoted, another quoted text, none, the same message twice.
MESSAGES = st.lists(st.sampled_from(["`{}` is not valid", "`{}` is empty", "`other` is odd",
                                     "no quote at all", "`{}` is not valid"]),
                    max_size=2)
#: (id, name) of the configurations; the last has neither.
CONFIGURATIONS = [("c0", "alpha"), ("c1", "beta"), ("c2", "alpha"), (None, None)]
FIXTURES = Path(__file__).parent / "fixtures"
SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def value(draw: st.DrawFn, key: str, vid: str) -> dict[str, Any]:
    text = draw(TEXTS)
    out: dict[str, Any] = {"id": vid, key: text}
    passed = draw(st.sampled_from([True, True, False, False, None]))
    messages = [m.format(text) for m in draw(MESSAGES)] if passed is not True else []
    if passed is not None:
        out["validation_passed"] = passed
    out["validation_messages"] = messages
    confidence = draw(CONFIDENCE)
    if confidence is not ABSENT:
        out["confidence"] = confidence
    return out


@st.composite
def result(draw: st.DrawFn, n: int) -> dict[str, Any]:
    config_id, config_name = draw(st.sampled_from(CONFIGURATIONS))
    targets: list[dict[str, Any]] = []
    extracted: list[dict[str, Any]] = []
    for j in draw(st.lists(st.integers(0, 3), unique=True, max_size=4)):
        target: dict[str, Any] = {"id": f"f{j}", "type": "field"}
        if j != 3:  # f3 has no name: it goes by its id
            target["name"] = f"Field {j}"
        targets.append(target)
        values = [draw(value("extracted_field", f"v{n}-f{j}-{i}"))
                  for i in range(draw(st.integers(0, 3)))]
        extracted.append({"id": f"x{n}-f{j}", "type": "field",
                          "used_extraction_target_id": f"f{j}", "extracted_values": values})
    for j in draw(st.lists(st.integers(0, 1), unique=True, max_size=2)):
        # t0 names its first column only; t1 has no name and names none of its columns
        headers = [{"id": f"h{j}0", "name": "Amount", "position": 0}] if j == 0 else []
        targets.append({"id": f"t{j}", "type": "table", "header_schema": headers,
                        **({"name": "Items"} if j == 0 else {})})
        places = sorted(draw(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                                     max_size=5)))
        cells = []
        for i, (row, column) in enumerate(places):
            cell = draw(value("extracted_cell", f"v{n}-t{j}-{i}"))
            cells.append({**cell, "table_id": f"tbl{n}-{j}", "row": row, "column": column})
        extracted.append({"id": f"x{n}-t{j}", "type": "table",
                          "used_extraction_target_id": f"t{j}", "extracted_values": cells})
    for target in extracted:
        confidence = draw(CONFIDENCE)
        if confidence is not ABSENT:
            target["confidence"] = confidence
    info: dict[str, Any] = {"extraction_id": f"e{n}",
                            "extraction_name": f"doc-{draw(st.integers(0, 3))}.pdf"}
    config: dict[str, Any] = {"extraction_targets": targets}
    if config_id is not None:
        info["used_extraction_configuration_id"] = config_id
        config["id"] = config_id
    if config_name is not None:
        info["used_extraction_configuration_name"] = config_name
        config["name"] = config_name
    return {"extraction_info": info, "extracted_targets": extracted,
            "creation_unix_timestamp": 1767225600.0 + n,
            "used_extraction_configuration": config}


@st.composite
def batches(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """One to three batches of up to four results, extraction ids unique across them."""
    out = []
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        size = draw(st.integers(0, 4))
        out.append([draw(result(n + i)) for i in range(size)])
        n += size
    return out


def written(data: list[list[dict[str, Any]]], folder: str) -> frames.Dataset:
    """The batches as a dataset, two results a part (so a batch has several parts)."""
    for i, results in enumerate(data):
        frames.write_dataset(results, Path(folder) / "ds", batch=f"b{i}", results_per_part=2)
    return frames.dataset(Path(folder) / "ds")


def same(got: pd.DataFrame, data: frames.Dataset, audit_name: str, **kwargs: Any) -> None:
    """The audit of the dataset is the audit of its frames, to the last bit but for means
    (pandas adds a group's values in row order, the dataset its distinct confidences
    exactly, rounded once: within an ulp or two)."""
    want = getattr(audit, audit_name)(data.fields(), data.cells(), **kwargs)
    means = [c for c in want.columns if c == "confidence_mean"]
    pd.testing.assert_frame_equal(got.drop(columns=means), want.drop(columns=means),
                                  check_exact=True)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-13, atol=1e-15)


# -- generated batches -----------------------------------------------------------------------
@SETTINGS
@given(batches(), st.sampled_from(["target", ("configuration_name", "target"),
                                   "configuration_name", ("kind", "extraction_id")]),
       st.floats(0, 1))
def test_scorecard_of_a_dataset_is_the_scorecard_of_its_frames(
        data: list[list[dict[str, Any]]], by: Any, threshold: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ds = written(data, folder)
        same(audit.scorecard(ds), ds, "scorecard")
        same(audit.scorecard(ds, by=by, threshold=threshold), ds, "scorecard", by=by,
             threshold=threshold)


@SETTINGS
@given(batches(), st.data())
def test_scorecard_with_corrections_and_targets(data: list[list[dict[str, Any]]],
                                                draw: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ds = written(data, folder)
        ids = sorted(set(ds.fields()["value_id"].dropna()) | set(ds.cells()["value_id"].dropna()))
        # Entries changing a value, confirming it (same text), of no value in the data, of none.
        entries = draw.draw(st.lists(st.tuples(st.sampled_from([*ids, "elsewhere", None]),
                                               st.sampled_from(["A", "B"])), max_size=6))
        ledger = pd.DataFrame([{"value_id": v, "old_value": "A", "new_value": new}
                               for v, new in entries],
                              columns=["value_id", "old_value", "new_value"])
        targets = frames.targets([r for results in data for r in results])
        by = draw.draw(st.sampled_from(["target", ("configuration_id", "target")]))
        kwargs = {"corrections": ledger, "targets": targets, "by": by}
        same(audit.scorecard(ds, **kwargs), ds, "scorecard", **kwargs)


@SETTINGS
@given(batches(), st.integers(0, 4), st.sampled_from(
    ["target", ("configuration_name", "target"), ("kind", "target"), "extraction_name",
     ("target", "value")]))
def test_failures_of_a_dataset_are_the_failures_of_its_frames(
        data: list[list[dict[str, Any]]], examples: int, by: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ds = written(data, folder)
        same(audit.failures(ds), ds, "failures")
        same(audit.failures(ds, examples=examples, by=by), ds, "failures", examples=examples,
             by=by)


@SETTINGS
@given(batches())
def test_documents_of_a_dataset_are_the_documents_of_its_frames(
        data: list[list[dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ds = written(data, folder)
        same(audit.documents(ds), ds, "documents")


@SETTINGS
@given(batches())
def test_the_work_view_labels_targets_as_the_work_frame_does(
        data: list[list[dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ds = written(data, folder)
        with ds.connect() as con:
            labels = [t for (t,) in con.execute(
                'SELECT target FROM work ORDER BY "order"').fetchall()]
        want = work_frame(ds.fields(), ds.cells())["target"].astype(object)
        assert labels == [None if pd.isna(t) else t for t in want]


# -- by hand ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(
        (FIXTURES / "handwritten.json").read_text(encoding="utf-8"))["results"]
    return results


def test_a_dataset_of_several_batches_and_a_selection(hand: list[dict[str, Any]],
                                                      tmp_path: Path) -> None:
    frames.write_dataset(hand[:2], tmp_path, batch="monday")
    frames.write_dataset(hand[2:], tmp_path, batch="tuesday")
    ds = frames.dataset(tmp_path)  # opened again from its folder
    assert ds.batches == ["monday", "tuesday"]
    # The whole dataset: as the frames of the results themselves (the hand-worked figures
    # of test_audit.py), not only as the dataset's own frames.
    f, c = frames.fields(hand), frames.cells(hand)
    pd.testing.assert_frame_equal(audit.scorecard(ds), audit.scorecard(f, c))
    pd.testing.assert_frame_equal(audit.failures(ds), audit.failures(f, c))
    pd.testing.assert_frame_equal(audit.documents(ds), audit.documents(f, c))
    assert audit.documents(ds).index.tolist() == ["e-a", "e-c"]
    for batch in ("monday", "tuesday"):
        part = ds.select(batch)
        same(audit.scorecard(part), part, "scorecard")
        same(audit.failures(part), part, "failures")
        same(audit.documents(part), part, "documents")
    assert audit.documents(ds.select("tuesday")).index.tolist() == ["e-c"]


def test_empty_datasets_give_the_empty_frames(hand: list[dict[str, Any]],
                                              tmp_path: Path) -> None:
    frames.write_dataset([], tmp_path, batch="nothing")
    ds = frames.dataset(tmp_path)
    for by in ("target", ("configuration_name", "target")):
        same(audit.scorecard(ds, by=by), ds, "scorecard", by=by)
        same(audit.failures(ds, by=by), ds, "failures", by=by)
    same(audit.documents(ds), ds, "documents")
    assert tuple(audit.scorecard(ds).columns) == audit.SCORECARD_COLUMNS
    # Values but no failure, and groups whose key no value has.
    passing = json.loads(json.dumps(hand[:1]).replace('"validation_passed": false',
                                                      '"validation_passed": true'))
    frames.write_dataset(passing, tmp_path, batch="passing")
    ds = frames.dataset(tmp_path, "passing")
    assert audit.failures(ds).empty
    same(audit.failures(ds), ds, "failures")
    same(audit.scorecard(ds, by="header"), ds, "scorecard", by="header")
    same(audit.failures(ds, by=("target", "header")), ds, "failures", by=("target", "header"))


def test_what_a_dataset_cannot_be_audited_by(hand: list[dict[str, Any]],
                                             tmp_path: Path) -> None:
    ds = frames.write_dataset(hand, tmp_path, batch="one")
    with pytest.raises(TypeError, match="a dataset holds its cells"):
        audit.scorecard(ds, ds.cells())
    with pytest.raises(ValueError, match=r"for 'row', audit its frames: "
                                         r"audit.failures\(ds.fields\(\), ds.cells\(\)"):
        audit.failures(ds, by=("target", "row"))
    with pytest.raises(ValueError, match="counts conditions per group"):
        audit.scorecard(ds, by="condition")
    with pytest.raises(ValueError, match="threshold is a confidence between 0 and 1"):
        audit.scorecard(ds, threshold=80)
    with pytest.raises(ValueError, match="examples is a number of examples, 0 or more"):
        audit.failures(ds, examples=-1)


def test_targets_that_share_a_label_are_one_group(hand: list[dict[str, Any]],
                                                  tmp_path: Path) -> None:
    # A field without a name goes by its id (D9), and another field may have that text as
    # its name: both are one target, whose fill rate counts each extraction once.
    results = json.loads(json.dumps(hand))
    config = results[0]["used_extraction_configuration"]["extraction_targets"]
    named = next(t for t in config if t["type"] == "field")
    config.append({"id": named["name"], "type": "field"})
    results[0]["extracted_targets"].append({
        "id": "x-twin", "type": "field", "used_extraction_target_id": named["name"],
        "extracted_values": [{"id": "v-twin", "extracted_field": "again",
                              "confidence": 0.5}]})
    ds = frames.write_dataset(results, tmp_path, batch="one")
    card = audit.scorecard(ds)
    same(card, ds, "scorecard")
    twin = card.loc[named["name"]]
    assert (twin["n_values"], twin["n_documents"], twin["fill_rate"]) == (3, 2, 1.0)


def test_a_negative_number_of_examples_is_refused_on_both_paths(
        hand: list[dict[str, Any]], tmp_path: Path) -> None:
    ds = frames.write_dataset(hand, tmp_path, batch="one")
    for data in (ds, (ds.fields(), ds.cells())):
        with pytest.raises(ValueError, match="examples is a number of examples, 0 or more"):
            audit.failures(data, examples=-1)
