"""Properties of the converters on generated extracted data (hypothesis).

- one row per value and per cell, in order, with the documented confidence fallback;
- ``condition`` is the message with the quoted value made a placeholder;
- pivoting cells into tables and melting them back gives the cells;
- partial, mutated or truncated results never crash a converter: ``errors="ignore"``
  always returns the documented columns, ``errors="raise"`` raises only FramesError;
- frames survive Parquet and CSV; amounts read back whatever their style.
"""

from __future__ import annotations

import copy
import json
import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicetools import audit, frames

from ..support.batches import JUNK, mutate, results

FIXTURES = Path(__file__).parent / "fixtures"
#: Results with distinct extraction ids (and so distinct table ids), as a batch holds them.
BATCHES = st.lists(st.deferred(lambda: results()), max_size=4,
                   unique_by=lambda r: r["extraction_info"]["extraction_id"])
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def expected_confidence(value: dict[str, Any], target: dict[str, Any]) -> float:
    own = value.get("confidence")
    if own is not None:
        return float(own)
    parent = target.get("confidence")
    return float(parent) if parent is not None else math.nan


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@SETTINGS
@given(BATCHES)
def test_rows_are_values_in_order(data: list[dict[str, Any]]) -> None:
    for kind, convert, key in (("field", frames.fields, "extracted_field"),
                               ("table", frames.cells, "extracted_cell")):
        frame = convert(data)
        expected = [(v, t) for d in data for t in d["extracted_targets"] if t["type"] == kind
                    for v in t["extracted_values"]]
        assert len(frame) == len(expected)
        assert frame["value"].tolist() == [v[key] for v, _ in expected]
        assert frame["value_id"].tolist() == [v["id"] for v, _ in expected]
        assert all(same(got, expected_confidence(v, t)) for got, (v, t) in
                   zip(frame["confidence"], expected, strict=True))
        assert frame["validation_passed"].tolist() == [v["validation_passed"]
                                                       for v, _ in expected]
        failed = frame["validation_passed"] == False  # noqa: E712
        assert (frame.loc[failed, "condition"] == "`{value}` is not valid").all()
        assert frame.loc[~failed, "condition"].isna().all()


@SETTINGS
@given(BATCHES)
def test_pivot_then_melt_gives_the_cells_back(data: list[dict[str, Any]]) -> None:
    cells = frames.cells(data)
    back = []
    for table_id, wide in frames.tables(data, columns="position").items():
        long = wide.reset_index().melt(id_vars="row", var_name="column", value_name="value")
        long = long.dropna(subset=["value"])
        back += [(table_id, int(r), int(c), v) for r, c, v in
                 zip(long["row"], long["column"], long["value"], strict=True)]
    given_cells = [(t, int(r), int(c), v) for t, r, c, v in
                   zip(cells["table_id"], cells["row"], cells["column"], cells["value"],
                       strict=True)]
    assert sorted(back) == sorted(given_cells)
    # With header names as columns, the same values under the same names.
    for table_id, wide in frames.tables(cells).items():
        mine = cells[cells["table_id"] == table_id]
        for r, header, v in zip(mine["row"], mine["header"], mine["value"], strict=True):
            label = header if isinstance(header, str) else None
            if label is not None and label in wide.columns:
                assert wide.loc[r, label] == v


CONVERTERS = (frames.fields, frames.cells, frames.targets, frames.extractions,
              frames.validation, frames.tables)


def no_crash(data: Any) -> None:
    for convert in CONVERTERS:
        out = convert(data, errors="ignore")
        if isinstance(out, pd.DataFrame):
            assert len(out.columns) > 0
        try:
            convert(data, errors="raise")
        except frames.FramesError:
            pass
    frames.statuses(data, errors="ignore")
    frames.vault(data, errors="ignore")


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        (FIXTURES / "recorded_responses.json").read_text(encoding="utf-8"))
    return data


@SETTINGS
@given(st.lists(results(), min_size=1, max_size=3), st.randoms(use_true_random=False),
       st.floats(0.01, 0.4))
def test_partial_generated_results_never_crash(data: list[dict[str, Any]],
                                               rng: random.Random, rate: float) -> None:
    no_crash(mutate(copy.deepcopy(data), rng, rate))


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False), st.floats(0.005, 0.2))
def test_partial_recorded_results_never_crash(recorded: list[dict[str, Any]],
                                              rng: random.Random, rate: float) -> None:
    no_crash(mutate(recorded[:2], rng, rate))


def close_json(prefix: str) -> Any:
    """Parse a cut-off JSON text the way a lenient reader would: close what is open."""
    for end in range(len(prefix), max(0, len(prefix) - 40), -1):
        text = prefix[:end]
        stack, in_string, escaped = [], False, False
        for ch in text:
            if in_string:
                escaped = not escaped and ch == "\\"
                if ch == '"' and not escaped:
                    in_string = False
                continue
            if ch == '"':
                in_string, escaped = True, False
            elif ch in "[{":
                stack.append("]" if ch == "[" else "}")
            elif ch in "]}":
                stack.pop()
        tail = '"' if in_string and not escaped else ""
        body = (text + tail).rstrip().rstrip(",")
        try:
            return json.loads(body + "".join(reversed(stack)))
        except ValueError:
            continue
    return None


def test_truncated_recorded_results_never_crash(recorded: list[dict[str, Any]]) -> None:
    text = json.dumps(recorded[2], ensure_ascii=False)  # a receipt: small, with a table
    step = max(1, len(text) // 80)
    cuts = 0
    for cut in range(1, len(text), step):
        data = close_json(text[:cut])
        if data is None:
            continue
        cuts += 1
        no_crash(data)
    assert cuts > 50


@settings(max_examples=20, deadline=None)
@given(BATCHES)
def test_frames_survive_parquet_and_csv(tmp_path_factory: pytest.TempPathFactory,
                                        data: list[dict[str, Any]]) -> None:
    folder = tmp_path_factory.mktemp("export")
    for name, frame in (("fields", frames.fields(data)), ("cells", frames.cells(data))):
        for suffix in (".parquet", ".csv"):
            path = frames.save(frame, folder / f"{name}{suffix}")
            pd.testing.assert_frame_equal(frames.load(path), frame)


@given(st.decimals(min_value=-10**7, max_value=10**7, places=2),
       st.sampled_from(["us", "eu", "plain"]), st.sampled_from(["", "$", "EUR ", " EUR"]))
def test_amounts_read_back_in_every_style(value: Decimal, style: str, currency: str) -> None:
    magnitude = f"{abs(value):,.2f}"
    if style == "eu":
        magnitude = magnitude.replace(",", " ").replace(".", ",").replace(" ", ".")
    elif style == "plain":
        magnitude = magnitude.replace(",", "")
    text = ("-" if value < 0 else "") + (
        f"{currency}{magnitude}" if not currency.startswith(" ") else magnitude + currency)
    assert audit.parse_amount(text) == value


@SETTINGS
@given(BATCHES, st.randoms(use_true_random=False))
def test_value_index_is_the_place_in_the_list(data: list[dict[str, Any]],
                                              rng: random.Random) -> None:
    data = copy.deepcopy(data)
    for result in data:  # slip malformed entries in: ignored, but they keep their place
        for target in result["extracted_targets"]:
            for _ in range(rng.randint(0, 2)):
                target["extracted_values"].insert(
                    rng.randint(0, len(target["extracted_values"])), rng.choice(JUNK[:5]))
    for kind, convert in (("field", frames.fields), ("table", frames.cells)):
        frame = convert(data, errors="ignore")
        expected = [(v["id"], i) for d in data for t in d["extracted_targets"]
                    if t["type"] == kind for i, v in enumerate(t["extracted_values"])
                    if isinstance(v, dict)]
        assert list(zip(frame["value_id"], frame["value_index"], strict=True)) == expected
