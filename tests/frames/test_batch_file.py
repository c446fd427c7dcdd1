"""A saved batch read by pyarrow (`frames.batch_file`) gives the frames the careful pass
gives, or is left to the careful pass.

- generated batches, with what the interface allows beside the usual (targets without a
  type, validation left out, confidences missing, empty ids, positions missing or
  negative, two configurations, failures, document names): the file's frames equal
  those of the loaded batch, and the fast read was taken;
- mutated batches (junk anywhere): the fast read either agrees with the careful pass or
  declines, and it never accepts a file the careful pass complains about;
- each oddity the fast read cannot vouch for sends the file the careful way, which
  raises or skips as before.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicetools import frames
from servicetools.analysis.frames import batch_file
from servicetools.analysis.frames.rows import value_frame
from servicetools.client.batch import Batch, Failure

from ..support.batches import mutate, results

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
Frames = tuple[pd.DataFrame, pd.DataFrame]


def careful(path: Path, **options: Any) -> Frames:
    batch = Batch.load(path)
    return frames.fields(batch, **options), frames.cells(batch, **options)


def fast(path: Path, documents: dict[str, str] | None = None) -> Frames | None:
    found = batch_file.read_values(path, ("field", "table"), documents)
    if found is None:
        return None
    return value_frame(*found["field"]), value_frame(*found["table"])


def assert_same(a: Frames, b: Frames) -> None:
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])


def vary(result: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """What the interface allows beyond the generated shapes, here and there."""
    for target in result["extracted_targets"]:
        if rng.random() < 0.2:
            del target["type"]  # a partial result: the configuration says
            if rng.random() < 0.2:  # an empty id names no target, even one with id ""
                result["used_extraction_configuration"]["extraction_targets"].append(
                    {"id": "", "type": "field", "name": "blank"})
                target["used_extraction_target_id"] = ""
        if rng.random() < 0.1:
            target["id"] = ""
        if rng.random() < 0.1:
            target["extracted_values"] = None if rng.random() < 0.5 else []
        for value in target["extracted_values"] or []:
            roll = rng.random()
            if roll < 0.1:
                del value["validation_passed"]
            elif roll < 0.2:
                value["validation_messages"] = None
            elif roll < 0.25:
                value["id"] = ""
            if "row" in value and rng.random() < 0.1:
                value["row"] = -1 if rng.random() < 0.5 else None
            if "column" in value and rng.random() < 0.1:
                del value["column"]
    if rng.random() < 0.3:  # another configuration: other names under the same ids
        config = result["used_extraction_configuration"]
        config["id"] = "cfg-2"
        for target in config["extraction_targets"]:
            if target.get("name"):
                target["name"] += " (2)"
            for column in target.get("header_schema", []):
                if rng.random() < 0.3:
                    column["name"] = ""  # named by its id
    if rng.random() < 0.2:
        del result["extraction_info"]
    if rng.random() < 0.2:
        result["extracted_document_storage_id"] = f"doc-{rng.randint(0, 3)}"
    return result


def save(folder: Path, data: list[Any], failures: int = 0, named: bool = False) -> Path:
    batch = Batch(results={f"k{i}": r for i, r in enumerate(data)},
                  documents={f"k{i}": f"named-{i}.pdf" for i in range(0, len(data), 2)}
                  if named else {},
                  failures=[Failure(f"f{i}.pdf", "trigger", "refused", "bad_request", 400)
                            for i in range(failures)],
                  configuration={"name": "generated", "id": "cfg"})
    return batch.save(folder / "batch.jsonl")


@SETTINGS
@given(st.lists(results(), max_size=4), st.randoms(use_true_random=False),
       st.integers(0, 2), st.booleans())
def test_generated_batches_read_the_same(tmp_path: Path, data: list[dict[str, Any]],
                                         rng: random.Random, failures: int, named: bool
                                         ) -> None:
    path = save(tmp_path, [vary(r, rng) for r in data], failures, named)
    documents = {"doc-1": "by document id.pdf", "e3": "by extraction id.pdf"}
    for mapping in (None, documents):
        found = fast(path, mapping)
        assert found is not None, "the fast read declined a well-formed batch"
        assert_same(found, careful(path, documents=mapping))
    assert_same(frames.fields_and_cells(path), careful(path))
    pd.testing.assert_frame_equal(frames.cells(path), careful(path)[1])


@SETTINGS
@given(st.lists(results(), min_size=1, max_size=3), st.integers(0, 2**32),
       st.floats(0.002, 0.05))
def test_mutated_batches_agree_or_go_the_careful_way(tmp_path: Path,
                                                     data: list[dict[str, Any]], seed: int,
                                                     rate: float) -> None:
    # A seeded Random, not hypothesis' own: its rolls lean to 0, which mutates nearly
    # every key, and the fast read would only ever see files it declines.
    rng = random.Random(seed)
    path = save(tmp_path, mutate(copy.deepcopy(data), rng, rate))
    found = fast(path)
    try:
        strict: Frames | None = careful(path, errors="raise")
    except frames.FramesError:
        strict = None
    if found is not None:
        assert strict is not None, "the fast read took a file the careful pass refuses"
        assert_same(found, strict)
    # Either way the public call gives the careful pass's frames.
    assert_same(frames.fields_and_cells(path, errors="ignore"),
                careful(path, errors="ignore"))


# -- what the fast read leaves to the careful pass -------------------------------------------
def _one() -> dict[str, Any]:
    return {
        "extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
        "creation_unix_timestamp": 1767225600.0,
        "used_extraction_configuration": {"id": "c", "name": "C", "extraction_targets": [
            {"id": "f", "type": "field", "name": "Total"},
            {"id": "t", "type": "table", "name": "Items", "header_schema": [
                {"id": "h0", "name": "Item", "position": 0},
                {"id": "h1", "name": "Amount", "position": 1}]}]},
        "extracted_targets": [
            {"id": "x1", "type": "field", "used_extraction_target_id": "f", "confidence": 0.9,
             "extracted_values": [{"id": "v1", "extracted_field": "12.00",
                                   "validation_passed": True, "validation_messages": [],
                                   "confidence": 0.9}]},
            {"id": "x2", "type": "table", "used_extraction_target_id": "t",
             "extracted_values": [
                 {"id": f"c{i}", "extracted_cell": f"cell {i}", "table_id": "tb", "row": i,
                  "column": i % 2, "validation_passed": i != 1,
                  "validation_messages": [] if i != 1 else [f"`cell {i}` is not an amount"],
                  "confidence": 0.5} for i in range(4)]}]}


def _values(data: dict[str, Any], target: int = 1) -> list[Any]:
    values: list[Any] = data["extracted_targets"][target]["extracted_values"]
    return values


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _drop_position(data: dict[str, Any]) -> None:
    del data["used_extraction_configuration"]["extraction_targets"][1]["header_schema"][0][
        "position"]


DATA_ODDITIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "a value that is not an object": lambda d: _values(d).append(None),
    "a target that is not an object": lambda d: d["extracted_targets"].append(None),
    "a message that is not text": _set(("extracted_targets", 1, "extracted_values", 1,
                                        "validation_messages"), ["ok", None]),
    "a row that is a float": _set(("extracted_targets", 1, "extracted_values", 0, "row"), 1.0),
    "a confidence that is text": _set(("extracted_targets", 0, "extracted_values", 0,
                                       "confidence"), "high"),
    "a value's text that is a number": _set(("extracted_targets", 0, "extracted_values", 0,
                                             "extracted_field"), 12),
    "a header position that is null": _set(
        ("used_extraction_configuration", "extraction_targets", 1, "header_schema", 0,
         "position"), None),
    "a header without a position": _drop_position,
    "extraction_info that is not an object": _set(("extraction_info",), "e1"),
    "a name holding a separator of the fast read's keys": _set(
        ("used_extraction_configuration", "extraction_targets", 0, "name"), "To\x1ftal"),
}


@pytest.mark.parametrize("oddity", list(DATA_ODDITIES))
def test_oddities_in_the_data_go_the_careful_way(tmp_path: Path, oddity: str) -> None:
    data = _one()
    DATA_ODDITIES[oddity](data)
    path = save(tmp_path, [data, _one()])
    assert fast(path) is None
    assert_same(frames.fields_and_cells(path, errors="ignore"),
                careful(path, errors="ignore"))
    try:
        expected: Frames | Exception = careful(path)
    except frames.FramesError as exc:
        expected = exc
    if isinstance(expected, Exception):
        with pytest.raises(frames.FramesError, match="data.results"):
            frames.fields_and_cells(path)
    else:
        assert_same(frames.fields_and_cells(path), expected)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_file_oddities_go_the_careful_way(tmp_path: Path) -> None:
    path = save(tmp_path, [_one(), _one()], failures=1)
    good = _lines(path)
    assert fast(path) is not None  # the file as saved: failures at the end are read

    # A three-part response inside the file: the careful pass unwraps it.
    record = json.loads(good[1])
    record["data"] = {"extracted_data": record["data"], "validation": {}}
    _write(path, [good[0], json.dumps(record), *good[2:]])
    assert fast(path) is None
    assert_same(frames.fields_and_cells(path), careful(path))

    # A key given twice (json.loads keeps the last; pyarrow refuses).
    _write(path, [good[0], good[1].replace('"extracted_field":"12.00"',
                                           '"extracted_field":"1","extracted_field":"2"'),
                  *good[2:]])
    assert fast(path) is None
    assert frames.fields(path)["value"].tolist() == ["2", "12.00"]

    # An extraction id twice: Batch.load keeps the last, in the first one's place.
    _write(path, [good[0].replace('"results":2', '"results":3'), good[1], good[2],
                  good[1].replace('"12.00"', '"13.00"'), good[3]])
    assert fast(path) is None
    assert frames.fields(path)["value"].tolist() == ["13.00", "12.00"]

    # A failure before the results: read the careful way, with the same frames.
    _write(path, [good[0], good[3], good[1], good[2]])
    assert fast(path) is None
    assert_same(frames.fields_and_cells(path), careful(path))

    # What Batch.load refuses is refused the same way.
    for lines, message in (
            (good[:-1], "truncated"),
            ([good[0], *good[1:3], good[3].replace('"stage"', '"stage_"')],
             "bad failure record"),
            ([good[0].replace('"version":1', '"version":2'), *good[1:]], "version 2")):
        _write(path, lines)
        assert fast(path) is None
        with pytest.raises(ValueError, match=message):
            frames.fields_and_cells(path)


def test_a_line_longer_than_a_block_is_read(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = save(tmp_path, [_one(), _one()])
    monkeypatch.setattr(batch_file, "_BLOCK", 256)  # pyarrow reads it again in one block
    found = fast(path)
    assert found is not None
    assert_same(found, careful(path))


def test_plain_jsonl_and_json_files_take_the_careful_pass(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(_one()) + "\n", encoding="utf-8")
    assert not batch_file.is_batch_file(plain)
    assert not batch_file.is_batch_file(tmp_path / "missing.jsonl")
    assert len(frames.fields_and_cells(plain)[1]) == 4
    with pytest.raises(ValueError, match="errors must be"):
        frames.fields_and_cells(plain, errors="coerce")  # type: ignore[arg-type]
