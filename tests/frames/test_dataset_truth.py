"""The audits against the truth, and drift and compare, on a `frames.Dataset` (issue 16).

Each property writes generated batches as a dataset (two or three batches: several
targets, multi-valued fields, blanks, missing confidences, ties, failed validations,
tables with and without headers, documents named apart from their extractions), runs
the audit on the dataset (DuckDB) and on the frames of the same rows in memory, and
asserts the two frames are equal: same index, columns, dtypes, order and values.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicetools import audit, frames
from servicetools.analysis.audit.grouped_dataset import exact_sum
from servicetools.analysis.audit.shift import aligned
from servicetools.analysis.audit.significance import ks_counts, mann_whitney_counts

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ABSENT = object()
#: Few confidences, so ties are common; 0.1, 0.7 and 0.95 have no exact binary value.
CONFIDENCE = st.sampled_from([ABSENT, None, 0.1, 0.25, 0.5, 0.5, 0.7, 0.9, 0.95, 1.0])
TEXT = st.sampled_from(["INV-1", "inv-1", " INV-1 ", "", "  ", "10.00", "red", "blue"])
#: Document names: the same file in two folders (c.pdf), and one path a suffix of another.
NAMES = ["a.pdf", "inv/a.pdf", "b.pdf", "x/c.pdf", "y/c.pdf", "d.pdf"]
#: (target id, name, multiple); a target without a name goes by its id.
FIELDS = [("f-number", "Number", False), ("f-tags", "Tags", True), ("f-anon", None, False)]
#: (target id, name, headers); a cell at a position without a header is "column <n>".
TABLES = [("t-items", "Items", ["Description", "Amount"]), ("t-anon", None, ["H0"])]


def configuration(config_id: str) -> dict[str, Any]:
    targets: list[dict[str, Any]] = []
    for target_id, name, _ in FIELDS:
        targets.append({"id": target_id, "type": "field", **({"name": name} if name else {})})
    for target_id, name, headers in TABLES:
        targets.append({"id": target_id, "type": "table", **({"name": name} if name else {}),
                        "header_schema": [{"id": f"h{i}", "name": h, "position": i}
                                          for i, h in enumerate(headers)]})
    return {"id": config_id, "name": f"config {config_id}", "extraction_targets": targets}


@st.composite
def value(draw: st.DrawFn, value_id: str, key: str) -> dict[str, Any]:
    text = draw(TEXT)
    out: dict[str, Any] = {"id": value_id, key: text}
    verdict = draw(st.sampled_from([True, True, False, None]))
    if verdict is not None:
        out["validation_passed"] = verdict
        out["validation_messages"] = [] if verdict else draw(st.sampled_from([
            [f"`{text}` is not valid"], [f"`{text}` is not valid", "`{text}` is empty"]]))
    confidence = draw(CONFIDENCE)
    if confidence is not ABSENT:
        out["confidence"] = confidence
    return out


@st.composite
def result(draw: st.DrawFn, extraction_id: str) -> dict[str, Any]:
    targets: list[dict[str, Any]] = []
    for target_id, _, multiple in FIELDS:
        if draw(st.integers(0, 5)) == 0:
            continue  # a target the result lacks
        count = draw(st.integers(0, 3)) if multiple else 1
        targets.append({"id": f"{extraction_id}-x-{target_id}", "type": "field",
                        "used_extraction_target_id": target_id, "extracted_values": [
                            draw(value(f"{extraction_id}-{target_id}-{i}", "extracted_field"))
                            for i in range(count)]})
    for target_id, _, headers in TABLES:
        if draw(st.integers(0, 3)) == 0:
            continue
        cells = []
        for table in range(draw(st.integers(1, 2))):
            places = draw(st.sets(st.tuples(st.integers(0, 3), st.integers(0, len(headers))),
                                  max_size=6))
            for row, column in sorted(places):
                cell = draw(value(f"{extraction_id}-{target_id}-{table}-{row}-{column}",
                                  "extracted_cell"))
                cells.append({**cell, "table_id": f"{extraction_id}-{target_id}-{table}",
                              "row": row, "column": column})
        targets.append({"id": f"{extraction_id}-x-{target_id}", "type": "table",
                        "used_extraction_target_id": target_id, "extracted_values": cells})
    for target in targets:
        confidence = draw(CONFIDENCE)
        if confidence is not ABSENT:
            target["confidence"] = confidence
    out: dict[str, Any] = {
        "extraction_info": {"extraction_id": extraction_id,
                            "extraction_name": draw(st.sampled_from(NAMES))},
        "extracted_targets": targets, "creation_unix_timestamp": 1767225600.0}
    config_id = draw(st.sampled_from(["cfg-1", "cfg-1", "cfg-2", None]))
    if config_id is not None:
        out["used_extraction_configuration"] = configuration(config_id)
    return out


@st.composite
def batch(draw: st.DrawFn, name: str) -> SimpleNamespace:
    """A `Batch` as `frames` reads one: results by extraction id, and the names of their
    documents, which may differ from the extraction names."""
    results = {}
    documents = {}
    for n in range(draw(st.integers(0, 5))):
        extraction_id = f"{name}-e{n}"
        results[extraction_id] = draw(result(extraction_id))
        document = draw(st.sampled_from([None, None, *NAMES, "scans/b.pdf"]))
        if document is not None:
            documents[extraction_id] = document
    return SimpleNamespace(results=results, documents=documents)


BATCHES = st.lists(st.sampled_from(["monday", "tuesday", "wednesday"]), min_size=2,
                   max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*[st.tuples(st.just(n), batch(n)) for n in names]))


@contextmanager
def written(batches: tuple[tuple[str, SimpleNamespace], ...]) -> Iterator[frames.Dataset]:
    with tempfile.TemporaryDirectory() as folder:
        ds = None
        for name, data in batches:
            ds = frames.write_dataset(data, folder, batch=name)
        assert ds is not None
        yield ds


def in_memory(ds: frames.Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    return ds.fields(), ds.cells()


#: Means of confidences: pandas adds a group's values in row order (Kahan's sum), the
#: dataset path its distinct values times their counts, each within an ulp or two of the
#: exact sum (`grouped_dataset.exact_sum`); every other column is equal to the last bit.
MEANS = ("confidence_before", "confidence_after", "confidence_shift", "confidence_a",
         "confidence_b", "confidence_delta")


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    means = [c for c in MEANS if c in want.columns]
    pd.testing.assert_frame_equal(got.drop(columns=means), want.drop(columns=means),
                                  check_exact=True)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-13, atol=1e-15)


#: Truth documents: some match the batches' names (by path suffix), some match none, and
#: c.pdf matches both x/c.pdf and y/c.pdf (each has one truth, no tie the other way).
TRUTH_DOCUMENTS = ["a.pdf", "inv/a.pdf", "b.pdf", "c.pdf", "docs/d.pdf", "e.pdf"]


def document_names(batches: tuple[tuple[str, SimpleNamespace], ...]) -> list[str]:
    """The names the batches give their documents (where the truth finds them)."""
    return sorted({data.documents.get(key) or r["extraction_info"]["extraction_name"]
                   for _, data in batches for key, r in data.results.items()})


@st.composite
def truth_table(draw: st.DrawFn, names: list[str]) -> pd.DataFrame:
    """Expected values as a table (`audit.truth`'s shape) of some of ``names`` and other
    documents: fields by ``value_index``, cells by ``record`` or ``row`` and ``column``."""
    rows: list[dict[str, Any]] = []
    cells_by = draw(st.sampled_from(["record", "row"]))
    for document in draw(st.lists(st.sampled_from([*names, *names, *TRUTH_DOCUMENTS]),
                                  unique=True, min_size=1, max_size=4)):
        for name in draw(st.lists(st.sampled_from(["Number", "Tags", "f-anon", "f-number",
                                                   "Unknown"]),
                                  unique=True, min_size=1, max_size=3)):
            for i in range(draw(st.integers(1, 3)) if name == "Tags" else 1):
                rows.append({"document": document, "target_name": name, "value_index": i,
                             "value": draw(TEXT)})
        for name in draw(st.lists(st.sampled_from(["Items", "t-anon"]), unique=True,
                                  max_size=2)):
            for record, column in sorted(draw(st.sets(st.tuples(
                    st.integers(0, 4), st.integers(0, 2)), max_size=6))):
                rows.append({"document": document, "target_name": name, cells_by: record,
                             "column": column, "value": draw(TEXT)})
    return pd.DataFrame(rows, columns=["document", "target_name", "value_index", cells_by,
                                       "column", "value"])


def value_places(batches: tuple[tuple[str, SimpleNamespace], ...]
                 ) -> list[tuple[str, str, str, str]]:
    """(value id, extraction id, target id, extracted target id) of every value."""
    return [(v["id"], key, t["used_extraction_target_id"], t["id"])
            for _, data in batches for key, r in data.results.items()
            for t in r["extracted_targets"] for v in t["extracted_values"]]


@st.composite
def ledger(draw: st.DrawFn, places: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """A corrections ledger over the batches' values: entries by value id (with or
    without their extraction and target), by extraction and target alone, by target
    alone, for values the data lacks, and a value corrected twice (the latest counts)."""
    entries: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 6))):
        how = draw(st.sampled_from(["value", "value", "place", "target", "unknown"]))
        value_id, extraction_id, target_id, extracted = (
            draw(st.sampled_from(places)) if places else ("v-none", "e-none", "t-none", "x"))
        target = draw(st.sampled_from([target_id, extracted]))
        entry: dict[str, Any] = {
            "value_id": value_id, "extraction_id": draw(st.sampled_from([extraction_id, None])),
            "target_id": target, "old_value": draw(st.one_of(st.none(), TEXT)),
            "new_value": draw(TEXT), "old_confidence": draw(st.sampled_from([None, 0.2, 0.9])),
            "time": pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(
                minutes=draw(st.integers(0, 5)))}
        if how == "place":
            entry.update(value_id=None, extraction_id=extraction_id)
        elif how == "target":
            entry.update(value_id=None, extraction_id=None)
        elif how == "unknown":
            entry.update(value_id="v-unknown", extraction_id="e-unknown", target_id="t-unknown")
        entries.append(entry)
    frame = pd.DataFrame(entries)
    if draw(st.booleans()):
        frame["target_name"] = [draw(st.sampled_from(["Number", "Items", None]))
                                for _ in range(len(frame))]
    return frame


# -- drift -----------------------------------------------------------------------------------
@SETTINGS
@given(BATCHES, st.sampled_from(["mannwhitney", "ks"]),
       st.sampled_from(["target", ["kind", "target"], "target_name"]))
def test_drift_of_two_batches_is_the_in_memory_drift(
        batches: tuple[tuple[str, SimpleNamespace], ...], test: str, by: Any) -> None:
    with written(batches) as ds:
        before, after = ds.select(batches[0][0]), ds.select(batches[-1][0])
        got = audit.drift(before, after, test=test, by=by)  # type: ignore[arg-type]
        want = audit.drift(in_memory(before), in_memory(after), test=test,  # type: ignore[arg-type]
                           by=by)
        assert_same(got, want)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.1, 0.5, 0.7, 0.9, 1.0, math.nan, math.inf])),
       st.lists(st.sampled_from([0.1, 0.2, 0.5, 0.9, math.nan])))
def test_the_tests_from_counts_are_the_tests_of_the_samples(x: list[float],
                                                            y: list[float]) -> None:
    def counted(sample: list[float]) -> tuple[np.ndarray, np.ndarray]:
        values, counts = np.unique(np.asarray(sample, dtype=float), return_counts=True)
        keep = ~np.isnan(values)  # as the dataset counts: NULL and NaN left out
        return values[keep], counts[keep]

    both = aligned(counted(x), counted(y))
    for from_counts, from_samples in ((mann_whitney_counts, audit.mann_whitney),
                                      (ks_counts, audit.ks_2samp)):
        got, want = from_counts(*both), from_samples(x, y)
        assert all(g == w or (math.isnan(g) and math.isnan(w))
                   for g, w in zip(got, want, strict=True))


def test_a_sum_from_counts_is_the_sum_rounded_once() -> None:
    # 0.1 * 3 + 0.7 is 1.0 exactly in decimals; the doubles' exact sum rounds to 1.0.
    assert exact_sum(np.array([0.1, 0.7]), np.array([3, 1])) == 1.0
    assert exact_sum(np.zeros(0), np.zeros(0, dtype=np.int64)) == 0.0
    assert exact_sum(np.array([0.5, math.inf]), np.array([1, 1])) == math.inf


# -- grade, accuracy, calibration, thresholds ------------------------------------------------
def assert_grades_alike(ds: frames.Dataset, truth: pd.DataFrame, grid: int | None) -> None:
    """Every measure against ``truth`` on the dataset equals the one on its frames (the
    in-memory measures from the in-memory grade, which is what they compute)."""
    fields, cells = in_memory(ds)
    want = audit.grade(fields, truth, cells=cells)
    pd.testing.assert_frame_equal(audit.grade(ds, truth), want, check_exact=True)
    pd.testing.assert_frame_equal(audit.accuracy(ds, truth), audit.accuracy(want),
                                  check_exact=True)
    got, wanted = audit.calibration(ds, truth, bins=4), audit.calibration(want, bins=4)
    pd.testing.assert_frame_equal(got.table, wanted.table, check_exact=True)
    pd.testing.assert_frame_equal(got.summary, wanted.summary, check_exact=True)
    swept, expected = (audit.thresholds(ds, truth, error_budget=0.3, grid=grid),
                       audit.thresholds(want, error_budget=0.3, grid=grid))
    pd.testing.assert_frame_equal(swept.sweep, expected.sweep, check_exact=True)
    pd.testing.assert_frame_equal(swept.recommended, expected.recommended, check_exact=True)


#: A dataset's grade costs a DuckDB connection and a few queries: fewer examples. Each
#: run draws new ones; hundreds more ran outside the suite.
GRADING = settings(SETTINGS, max_examples=5)
GRID = st.sampled_from([None, 10])


@GRADING
@given(BATCHES, st.data(), GRID, st.booleans())
def test_grading_a_dataset_against_expected_values_is_grading_its_frames(
        batches: tuple[tuple[str, SimpleNamespace], ...], data: st.DataObject,
        grid: int | None, last: bool) -> None:
    truth = data.draw(truth_table(document_names(batches)))
    with written(batches) as ds:
        assert_grades_alike(ds.select(batches[-1][0]) if last else ds, truth, grid)


@GRADING
@given(BATCHES, st.data(), GRID)
def test_grading_a_dataset_against_a_ledger_is_grading_its_frames(
        batches: tuple[tuple[str, SimpleNamespace], ...], data: st.DataObject,
        grid: int | None) -> None:
    truth = data.draw(ledger(value_places(batches)))
    with written(batches) as ds:
        assert_grades_alike(ds, truth, grid)


# -- compare ---------------------------------------------------------------------------------
@GRADING
@given(BATCHES, st.data(), st.sampled_from([None, "table", "ledger"]),
       st.sampled_from(["target", ["kind", "target"], "target_name"]))
def test_compare_of_two_batches_is_the_in_memory_compare(
        batches: tuple[tuple[str, SimpleNamespace], ...], data: st.DataObject,
        kind: str | None, by: Any) -> None:
    truth = (None if kind is None else data.draw(truth_table(document_names(batches)))
             if kind == "table" else data.draw(ledger(value_places(batches))))
    with written(batches) as ds:
        a, b = ds.select(batches[0][0]), ds.select(batches[-1][0])
        assert_same(audit.compare(a, b, truth, by=by),
                    audit.compare(in_memory(a), in_memory(b), truth, by=by))


# -- empty, unmatched, refused ---------------------------------------------------------------
def hand_batch(name: str, document: str, confidence: float) -> SimpleNamespace:
    extraction_id = f"{name}-e1"
    data = {"extraction_info": {"extraction_id": extraction_id, "extraction_name": document},
            "extracted_targets": [{"id": "x1", "type": "field",
                                   "used_extraction_target_id": "f-number",
                                   "extracted_values": [{"id": f"{name}-v1",
                                                         "extracted_field": "INV-1",
                                                         "validation_passed": True,
                                                         "validation_messages": [],
                                                         "confidence": confidence}]}],
            "used_extraction_configuration": configuration("cfg-1")}
    return SimpleNamespace(results={extraction_id: data}, documents={})


def test_empty_batches_and_unmatched_documents_give_the_in_memory_frames(
        tmp_path: Path) -> None:
    ds = frames.write_dataset([], tmp_path, batch="empty")
    frames.write_dataset(hand_batch("monday", "a.pdf", 0.9), tmp_path, batch="monday")
    frames.write_dataset(hand_batch("tuesday", "b.pdf", 0.8), tmp_path, batch="tuesday")
    ds = frames.dataset(tmp_path)
    empty, monday, tuesday = (ds.select(n) for n in ("empty", "monday", "tuesday"))
    for before, after in ((empty, empty), (empty, monday), (monday, empty)):
        got = audit.drift(before, after)
        assert tuple(got.columns) == audit.DRIFT_COLUMNS
        assert_same(got, audit.drift(in_memory(before), in_memory(after)))
    assert audit.drift(empty, monday)["n_before"].tolist() == [0]
    # No shared document: an empty comparison, with or without a truth.
    truth = pd.DataFrame({"document": ["a.pdf"], "target_name": ["Number"],
                          "value": ["INV-1"]})
    for with_truth in (None, truth):
        got = audit.compare(monday, tuesday, with_truth)
        assert got.empty and tuple(got.columns) == audit.COMPARE_COLUMNS
        assert_same(got, audit.compare(in_memory(monday), in_memory(tuesday), with_truth))
    # A truth of documents the dataset lacks grades nothing, as in memory.
    elsewhere = truth.assign(document="z.pdf")
    for data in (ds, empty):
        fields, cells = in_memory(data)
        got = audit.grade(data, elsewhere)
        assert got.empty
        pd.testing.assert_frame_equal(got, audit.grade(fields, elsewhere, cells=cells))
        pd.testing.assert_frame_equal(audit.accuracy(data, elsewhere),
                                      audit.accuracy(fields, elsewhere, cells=cells))
        pd.testing.assert_frame_equal(audit.thresholds(data, elsewhere).recommended,
                                      audit.thresholds(fields, elsewhere,
                                                       cells=cells).recommended)
    assert audit.accuracy(ds, truth).loc["All", "accuracy"] == 1.0
    assert math.isnan(audit.calibration(ds, elsewhere).ece)


def test_a_dataset_audit_refuses_what_it_cannot_push_down(tmp_path: Path) -> None:
    ds = frames.write_dataset(hand_batch("monday", "a.pdf", 0.9), tmp_path, batch="monday")
    with pytest.raises(ValueError, match="on a dataset, drift groups by kind, target"):
        audit.drift(ds, ds, by="value_id")
    with pytest.raises(ValueError, match="for other keys, give it the frames"):
        audit.compare(ds, ds, by=["target", "row"])
    with pytest.raises(TypeError, match="a dataset holds its cells"):
        audit.grade(ds, pd.DataFrame({"document": ["a.pdf"], "target_name": ["Number"],
                                      "value": ["INV-1"]}), cells=ds.cells())


def test_one_dataset_against_frames_is_read_into_memory(tmp_path: Path) -> None:
    frames.write_dataset(hand_batch("monday", "a.pdf", 0.9), tmp_path, batch="monday")
    frames.write_dataset(hand_batch("tuesday", "a.pdf", 0.4), tmp_path, batch="tuesday")
    monday, tuesday = frames.dataset(tmp_path, "monday"), frames.dataset(tmp_path, "tuesday")
    want = audit.drift(in_memory(monday), in_memory(tuesday))
    assert_same(audit.drift(monday, in_memory(tuesday)), want)
    assert_same(audit.drift(monday, tuesday), want)
    assert want.loc["Number", "confidence_shift"] == pytest.approx(-0.5)
    assert_same(audit.compare(in_memory(monday), tuesday),
                audit.compare(monday, tuesday))


def test_groups_of_fields_and_cells_together_have_no_fill_rate(tmp_path: Path) -> None:
    # A group of a field and a cell has no one fill rate: NaN, the rest of the table there.
    data = hand_batch("monday", "a.pdf", 0.9)
    result = data.results["monday-e1"]
    result["extracted_targets"].append({
        "id": "x2", "type": "table", "used_extraction_target_id": "t-items",
        "extracted_values": [{"id": "c1", "extracted_cell": "Bolt", "table_id": "tb1", "row": 0,
                              "column": 0, "confidence": 0.5, "validation_passed": False,
                              "validation_messages": ["`Bolt` is not valid"]}]})
    ds = frames.write_dataset(data, tmp_path, batch="monday")
    out = audit.drift(ds, ds, by="document_name")
    assert out.loc["a.pdf", "n_before"] == 2 and out.loc["a.pdf", "statistic"] == 2.0
    assert out.loc["a.pdf", "failure_rate_after"] == 0.5
    assert math.isnan(out.loc["a.pdf", "fill_rate_before"])
    pd.testing.assert_frame_equal(out, audit.drift(in_memory(ds), in_memory(ds),
                                                   by="document_name"))
