"""Converters on hand-written fixtures and on recorded real output of the local service.

The ``recorded_*.json`` fixtures are real answers of the local service for dev-set
documents (``extraction_name`` is the document's path under data/documents): four
synchronous extractions with ``show_schema_output=True``, a result before and after an
update, a status list with a pipeline error, status histories and a vault list.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from servicetools import frames
from servicetools.client.batch import Batch, Failure

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def hand() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = fixture("handwritten.json")["results"]
    return results


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    responses: list[dict[str, Any]] = fixture("recorded_responses.json")
    return responses


# -- fields ----------------------------------------------------------------------------------
def test_fields_columns_dtypes_and_values(hand: list[dict[str, Any]]) -> None:
    f = frames.fields(hand)
    assert tuple(f.columns) == frames.FIELD_COLUMNS
    assert len(f) == 8  # e-a: 1 + 2 + 1 + 1 values, e-b: none, e-c: 1 + 1 + 1
    for name in ("document_name", "target_name", "condition", "target_id",
                 "configuration_name", "extraction_group"):
        assert isinstance(f[name].dtype, pd.CategoricalDtype), name
    for name in ("extraction_id", "document_id", "extracted_target_id", "value_id"):
        assert f[name].dtype == frames.STRING, name  # ids: many, so never categories
    assert f["validation_passed"].dtype == "boolean"
    assert f["confidence"].dtype == np.float64
    assert str(f["created"].dtype) == "datetime64[ns, UTC]"
    assert f["value_index"].dtype == np.int64
    # Categories keep the configuration's order, not the alphabet.
    assert list(f["target_name"].cat.categories) == ["Invoice Number", "Tags", "Note", "Ref"]
    a = f[f["extraction_id"] == "e-a"].reset_index(drop=True)
    assert a["value"].tolist() == ["INV-1", "red", "blu`e", "Net 30", ""]
    assert a["value_index"].tolist() == [0, 0, 1, 0, 0]
    assert a["target_name"].tolist() == ["Invoice Number", "Tags", "Tags", "Note", "Ref"]
    assert a["document_name"].tolist() == ["invoices/a.pdf"] * 5
    # The empty value of a target not found is not "found": the least sure values that
    # were read are one call, without blanks.
    assert a["found"].tolist() == [True, True, True, True, False]
    assert f["found"].dtype == bool
    assert "" not in f[f.found].nsmallest(3, "confidence")["value"].tolist()
    assert a["document_id"].tolist() == ["d-a"] * 5
    assert a["created"].iloc[0] == pd.Timestamp(1767225602.5, unit="s", tz="UTC")


def test_confidence_falls_back_to_the_target_then_nan(hand: list[dict[str, Any]]) -> None:
    f = frames.fields(hand).set_index("value_id")
    assert f.loc["v-a1", "confidence"] == 0.95  # its own
    assert f.loc["v-a1", "target_confidence"] == 0.9
    assert f.loc["v-a4", "confidence"] == 0.6  # none of its own: the target's
    assert math.isnan(f.loc["v-a5", "confidence"])  # none at all: missing, not a default
    assert math.isnan(f.loc["v-a5", "target_confidence"])


def test_condition_replaces_the_quoted_value(hand: list[dict[str, Any]]) -> None:
    f = frames.fields(hand).set_index("value_id")
    # The value itself holds a backtick: the known value is replaced, not the first pair.
    assert f.loc["v-a3", "condition"] == "`{value}` is not one of: red, blue"
    assert f.loc["v-a3", "validation_messages"] == ("`blu`e` is not one of: red, blue",)
    assert f.loc["v-a5", "condition"] == "`{value}` is empty"
    assert f.loc["v-c2", "condition"] == "`{value}` does not match the pattern Net \\d+"
    assert pd.isna(f.loc["v-a1", "condition"])
    assert f.loc["v-a1", "validation_messages"] == ()


def test_condition_function() -> None:
    assert frames.condition("`x` is empty", "x") == "`{value}` is empty"
    assert frames.condition("Value `12` is too big") == "Value `{value}` is too big"
    assert frames.condition("no quotes here") == "no quotes here"
    two = {"validation_messages": ["`` is empty", "`` is not an amount"],
           "extracted_field": "", "validation_passed": False, "id": "v"}
    data = {"extracted_targets": [{"type": "field", "extracted_values": [two]}]}
    assert frames.fields(data)["condition"].tolist() == [
        "`{value}` is empty; `{value}` is not an amount"]


def test_corrected_result(hand: list[dict[str, Any]]) -> None:
    f = frames.fields(hand)
    c = f[f["extraction_id"] == "e-c"]
    assert (c["confidence"] == 1.0).all() and (c["target_confidence"] == 1.0).all()
    assert c["validation_passed"].tolist() == [True, False, True]


def test_empty_input_gives_empty_frames_with_the_same_columns(hand: list[dict[str, Any]]
                                                              ) -> None:
    for convert, columns in ((frames.fields, frames.FIELD_COLUMNS),
                             (frames.cells, frames.CELL_COLUMNS),
                             (frames.targets, frames.TARGET_COLUMNS),
                             (frames.extractions, frames.EXTRACTION_COLUMNS),
                             (frames.validation, frames.VALIDATION_COLUMNS)):
        full = convert(hand)
        for empty_input in ([], None, [hand[1]] if convert in (frames.fields, frames.cells)
                            else []):
            empty = convert(empty_input)
            assert tuple(empty.columns) == columns
            assert len(empty) == 0
            if convert is not frames.validation:
                assert empty.dtypes.astype(str).tolist() == full.dtypes.astype(str).tolist()
    assert tuple(frames.statuses([]).columns) == frames.STATUS_COLUMNS
    assert tuple(frames.vault([]).columns) == frames.VAULT_COLUMNS
    assert frames.tables([]) == {}


# -- cells and tables ------------------------------------------------------------------------
def test_cells_of_two_tables_in_one_unnamed_target(hand: list[dict[str, Any]]) -> None:
    c = frames.cells(hand)
    assert tuple(c.columns) == frames.CELL_COLUMNS
    assert len(c) == 8
    assert c["row"].dtype == "Int64" and c["column"].dtype == "Int64"
    a = c[c["extraction_id"] == "e-a"]
    assert a["table_id"].tolist() == ["tbl-1"] * 4 + ["tbl-2"] * 2
    # D9: a table target without a name goes by its id.
    assert set(a["target_name"]) == {"t-items"}
    assert a["header"].tolist() == ["Description", "Amount"] * 3
    assert a["value"].iloc[0] == "Widget\nA"  # multi-line cells kept as they are
    assert a.set_index("value_id").loc["c-a4", "condition"] == "`{value}` is not an amount"


def test_tables_pivot_by_row_and_header(hand: list[dict[str, Any]]) -> None:
    t = frames.tables(hand)
    assert list(t) == ["tbl-1", "tbl-2", "tbl-3"]
    one = t["tbl-1"]
    assert list(one.columns) == ["Description", "Amount"]
    assert one.index.name == "row"
    assert one.to_dict("list") == {"Description": ["Widget\nA", "Gadget"],
                                   "Amount": ["10.00", "abc"]}
    two = t["tbl-2"]
    assert pd.isna(two.loc[0, "Amount"]) and pd.isna(two.loc[1, "Description"])
    assert two.loc[1, "Amount"] == "5,00"
    assert two.attrs == {"extraction_id": "e-a", "document_name": "invoices/a.pdf",
                         "target_id": "t-items", "target_name": "t-items", "table_index": 1}
    assert list(frames.tables(hand, columns="position")["tbl-1"].columns) == [0, 1]
    # From a cells frame, the same.
    again = frames.tables(frames.cells(hand))
    assert list(again) == list(t)
    pd.testing.assert_frame_equal(again["tbl-2"], two)


def test_tables_name_unknown_and_duplicate_columns() -> None:
    config = {"extraction_targets": [{"id": "t", "type": "table", "header_schema": [
        {"id": "h1", "name": "Amount", "position": 0}, {"id": "h2", "name": "Amount",
                                                        "position": 1}]}]}
    values = [{"id": str(i), "extracted_cell": str(i), "table_id": "x", "row": 0, "column": i,
               "validation_passed": True, "validation_messages": []} for i in range(3)]
    data = {"extracted_targets": [{"type": "table", "used_extraction_target_id": "t",
                                   "extracted_values": values}],
            "used_extraction_configuration": config}
    assert list(frames.tables(data)["x"].columns) == ["Amount (0)", "Amount (1)",
                                                      "column 2 (2)"]


def test_tables_of_a_cells_frame_made_by_hand() -> None:
    # A cells frame of its own making (or read back from a CSV of some columns): the
    # columns a table needs, and nothing else (it asked for document_name and header).
    hand_cells = pd.DataFrame({"table_id": ["x"] * 4, "row": [0, 0, 1, 1],
                               "column": [0, 1, 0, 1], "value": ["a", "1", "b", "2"]})
    wide = frames.tables(hand_cells)["x"]
    assert wide.to_dict("list") == {"column 0": ["a", "b"], "column 1": ["1", "2"]}
    assert wide.attrs["document_name"] is None and wide.attrs["table_index"] == 0
    with pytest.raises(ValueError, match="missing: row, column"):
        frames.tables(hand_cells.drop(columns=["row", "column"]))


def _table_result(config: dict[str, Any], columns: list[Any], n: int) -> dict[str, Any]:
    values = [{"id": f"v{n}-{i}", "extracted_cell": "x", "table_id": f"x{n}", "row": 0,
               "column": c, "validation_passed": True, "validation_messages": []}
              for i, c in enumerate(columns)]
    return {"extraction_info": {"extraction_id": f"e{n}"},
            "extracted_targets": [{"type": "table", "used_extraction_target_id": "t",
                                   "extracted_values": values}],
            "used_extraction_configuration": config}


def test_headers_follow_each_results_own_configuration() -> None:
    # Two versions of one configuration (same id, a header renamed), each used by two
    # results, whose copies are equal but separate objects; a header at a negative
    # position is never a column's; cells without a position get no header.
    def config(amount: str) -> dict[str, Any]:
        return {"id": "c", "extraction_targets": [{"id": "t", "type": "table", "header_schema": [
            {"id": "h0", "name": "Item", "position": 0},
            {"id": "h1", "name": amount, "position": 1},
            {"id": "h9", "name": "Nowhere", "position": -3}]}]}

    data = [_table_result(config("Amount"), [1, 0, 5], 0),
            _table_result(config("Total"), [1, None, 0], 1),
            _table_result(config("Amount"), [0, 1], 2),
            _table_result(json.loads(json.dumps(config("Total"))), [1], 3)]
    c = frames.cells(data)
    headers = [h if isinstance(h, str) else None for h in c["header"]]
    assert headers == ["Amount", "Item", None, "Total", None, "Item", "Item", "Amount", "Total"]
    # Categories in first-seen order, and only those used.
    assert list(c["header"].cat.categories) == ["Amount", "Item", "Total"]
    assert c["column"].tolist() == [1, 0, 5, 1, pd.NA, 0, 0, 1, 1]


# -- targets, extractions, statuses, vault ---------------------------------------------------
def test_targets_include_empty_ones(hand: list[dict[str, Any]]) -> None:
    t = frames.targets(hand)
    assert tuple(t.columns) == frames.TARGET_COLUMNS
    assert len(t) == 15
    b = t[t["extraction_id"] == "e-b"]
    assert b["n_values"].tolist() == [0] * 5
    a = t[t["extraction_id"] == "e-a"].set_index("target_id")
    assert a.loc["t-tags", "n_values"] == 2 and a.loc["t-tags", "n_failed"] == 1
    assert bool(a.loc["t-tags", "is_multiple"]) is True
    assert pd.isna(a.loc["t-items", "is_multiple"])  # tables have no is_multiple
    assert a.loc["t-items", "n_tables"] == 2 and a.loc["t-items", "target_type"] == "table"
    assert a.loc["t-ref", "n_filled"] == 0 and math.isnan(a.loc["t-ref", "confidence"])


def test_extractions(hand: list[dict[str, Any]]) -> None:
    e = frames.extractions(hand)
    assert tuple(e.columns) == frames.EXTRACTION_COLUMNS
    assert e["extraction_id"].tolist() == ["e-a", "e-b", "e-c"]
    assert e["duration"].tolist() == [pd.Timedelta(seconds=2.5), pd.Timedelta(seconds=1),
                                      pd.Timedelta(seconds=1)]
    assert e["n_values"].tolist() == [5, 0, 3] and e["n_cells"].tolist() == [6, 0, 2]
    assert e["n_failed"].tolist() == [3, 0, 1]
    assert e["extracted_data_saved"].dtype == "boolean"


def test_statuses_with_history_have_stage_durations() -> None:
    history = fixture("recorded_status_history.json")
    s = frames.statuses(history)
    assert tuple(s.columns) == frames.STATUS_COLUMNS
    assert s["status_type"].cat.ordered
    ended = s[s["extraction_id"] == next(iter(history))]
    assert ended["status_type"].tolist() == [
        "not_started", "started", "doc_converted_to_png", "target_groups_formed",
        "extraction_started", "extraction_ended", "usage_statistics_aggregated", "ended"]
    raw = sorted(h["creation_unix_timestamp"] for h in history[next(iter(history))])
    assert ended["duration"].iloc[0] == pd.to_datetime(raw[1], unit="s") - pd.to_datetime(
        raw[0], unit="s")
    assert pd.isna(ended["duration"].iloc[-1])
    assert ended["elapsed"].iloc[-1] == ended["created"].iloc[-1] - ended["created"].iloc[0]
    assert ended["is_final"].tolist() == [False] * 7 + [True]
    failed = s[s["status_type"] == "error"]
    assert len(failed) == 1 and "classified as 'invoice'" in failed["message"].iloc[0]


def test_statuses_from_a_status_list_and_a_batch() -> None:
    listed = fixture("recorded_status_list.json")
    s = frames.statuses(listed)
    assert len(s) == len(listed["status_map"])
    assert s["duration"].isna().all() and s["elapsed"].isna().all()
    assert sorted(s["status_type"].astype(str).unique()) == ["ended", "error"]
    error = next(v for v in listed["status_map"].values() if v["status_type"] == "error")
    batch = Batch(failures=[Failure("invoices/inv-0002.pdf", "extraction", error["message"],
                                    extraction_id=error["extraction_id"],
                                    details={"status": error}),
                            Failure("bad.txt", "read", "unreadable")])
    from_batch = frames.statuses(batch)
    assert from_batch["extraction_id"].tolist() == [error["extraction_id"]]
    # An unknown status type from a remote service is kept, after the known ones.
    odd = frames.statuses([{"extraction_id": "x", "status_type": "queued",
                            "creation_unix_timestamp": 1.0}])
    assert odd["status_type"].tolist() == ["queued"]
    assert list(odd["status_type"].cat.categories)[-1] == "queued"


def test_vault() -> None:
    listed = frames.vault(fixture("recorded_vault_list.json"))
    assert tuple(listed.columns) == frames.VAULT_COLUMNS
    assert listed["num_pages"].isna().all()  # list entries carry no page count
    assert str(listed["uploaded"].dtype) == "datetime64[ns, UTC]"
    one = frames.vault(fixture("recorded_vault_info.json"))
    assert one["num_pages"].tolist() == [1]


# -- recorded real output --------------------------------------------------------------------
def test_recorded_results_rows_equal_values(recorded: list[dict[str, Any]]) -> None:
    f, c = frames.fields(recorded), frames.cells(recorded)
    data = [r["extracted_data"] for r in recorded]
    n_fields = sum(len(t["extracted_values"]) for d in data for t in d["extracted_targets"]
                   if t["type"] == "field")
    n_cells = sum(len(t["extracted_values"]) for d in data for t in d["extracted_targets"]
                  if t["type"] == "table")
    assert (len(f), len(c)) == (n_fields, n_cells)
    assert f["document_name"].cat.categories.tolist() == [
        "invoices/inv-0001.pdf", "invoices/inv-0009.png", "receipts/rcp-0003.pdf",
        "receipts/rcp-0001.jpeg"]
    assert set(c["target_name"].astype(str)) == {"Line Items", "Items"}
    assert set(c["header"].dropna().astype(str)) == {"Description", "Quantity", "Unit Price",
                                                     "Amount"}
    # Our service sends a confidence per value: no value falls back to its target's.
    values = [v["confidence"] for d in data for t in d["extracted_targets"]
              for v in t["extracted_values"] if t["type"] == "field"]
    assert f["confidence"].tolist() == values
    failed = f[f["validation_passed"] == False]  # noqa: E712
    assert failed["condition"].notna().all()
    assert all("`{value}`" in str(x) for x in failed["condition"])


def test_recorded_tables_match_the_cells(recorded: list[dict[str, Any]]) -> None:
    first = recorded[0]["extracted_data"]
    items = next(t for t in first["extracted_targets"] if t["type"] == "table")
    table_id = items["extracted_values"][0]["table_id"]
    wide = frames.tables(first)[table_id]
    for cell in items["extracted_values"]:
        assert wide.iloc[cell["row"], cell["column"]] == cell["extracted_cell"]
    assert list(wide.columns) == ["Description", "Quantity", "Unit Price", "Amount"]
    # The output schema of the invoices configuration renders the same rows (D11).
    assert wide.fillna("").to_numpy().tolist() == recorded[0]["schema_output"]["line_items"]


def test_recorded_validation_frame(recorded: list[dict[str, Any]]) -> None:
    v = frames.validation(recorded)
    assert tuple(v.columns) == frames.VALIDATION_COLUMNS
    first = v[v["extraction_id"] == recorded[0]["extracted_data"]["extraction_info"][
        "extraction_id"]].set_index("path")
    assert first.loc["invoice.number", "value"] == recorded[0]["schema_output"]["invoice"][
        "number"]
    assert first.loc["line_items[0][1]", "key"] == "line_items[*][*]"
    leaf = recorded[0]["validation"]["line_items"][0][1]
    assert first.loc["line_items[0][1]", "validation_passed"] == leaf["validation_passed"]
    assert first.loc["line_items[0][1]", "confidence"] == leaf["confidence"]
    # An unmatched selection renders [] and gives no row.
    assert "amounts.tax" not in first.index or recorded[0]["validation"]["amounts"]["tax"]
    receipts = v[v["configuration_name"] == "receipts"]
    assert any(p.endswith('."Unit Price"') for p in receipts["path"])


def test_recorded_update_is_a_corrected_result() -> None:
    update = fixture("recorded_update.json")
    before, after = frames.fields(update["before"]), frames.fields(update["after"])
    tax_before = before[before["target_id"] == "t-tax"].iloc[0]
    tax_after = after[after["target_id"] == "t-tax"].iloc[0]
    assert tax_after["value"] == "1.815,49 EUR" and tax_after["confidence"] == 1.0
    assert tax_after["value_id"] == tax_before["value_id"]  # the update kept the id
    assert tax_after["target_confidence"] == 1.0 and tax_before["target_confidence"] < 1.0
    assert bool(tax_after["validation_passed"])
    cells_after = frames.cells(update["after"])
    assert (cells_after["confidence"] == 1.0).all()
    assert cells_after["value"].iloc[1] == "1"


# -- input shapes ----------------------------------------------------------------------------
def test_accepts_a_batch_a_mapping_and_files(hand: list[dict[str, Any]], tmp_path: Path
                                             ) -> None:
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in hand},
                  documents={"e-a": "data/documents/invoices/a.pdf"},
                  failures=[Failure("x.pdf", "trigger", "refused")])
    f = frames.fields(batch)
    assert f[f["extraction_id"] == "e-a"]["document_name"].iloc[0] == (
        "data/documents/invoices/a.pdf")
    assert f[f["extraction_id"] == "e-c"]["document_name"].iloc[0] == "invoices/c.pdf"
    pd.testing.assert_frame_equal(frames.fields(batch.results), frames.fields(hand))
    # A Batch saved and loaded converts the same, without the service.
    path = batch.save(tmp_path / "run.jsonl")
    pd.testing.assert_frame_equal(frames.fields(Batch.load(path)), f)
    pd.testing.assert_frame_equal(frames.fields(path), f)
    (tmp_path / "one.json").write_text(json.dumps(hand[0]))
    assert len(frames.fields(tmp_path / "one.json")) == 5
    # documents= names by extraction id or document id.
    named = frames.fields(hand, documents={"e-a": "A", "d-c": "C"})
    assert named["document_name"].cat.categories.tolist() == ["A", "C"]


def test_targets_list_response_and_a_three_part_response(recorded: list[dict[str, Any]]
                                                         ) -> None:
    data = recorded[0]["extracted_data"]
    listed = {"extracted_targets": data["extracted_targets"]}
    f = frames.fields({"ext-1": listed})  # no metadata: the key is the extraction id
    assert set(f["extraction_id"]) == {"ext-1"}
    ids = [t["used_extraction_target_id"] for t in data["extracted_targets"]
           if t["type"] == "field"]
    assert f["target_id"].tolist() == ids
    assert f["target_name"].tolist() == ids  # no configuration: names fall back to ids
    pd.testing.assert_frame_equal(frames.fields(recorded[0]), frames.fields(data))


def test_errors_raise_names_the_place_and_ignore_skips() -> None:
    bad = {"extraction_info": {"extraction_id": "e"}, "extracted_targets": [
        {"type": "field", "used_extraction_target_id": "t", "extracted_values": [
            {"id": "1", "extracted_field": "ok", "validation_passed": True,
             "validation_messages": []},
            "not a value",
            {"id": "3", "extracted_field": 12, "validation_passed": "yes",
             "validation_messages": "nope", "confidence": "high"}]}]}
    with pytest.raises(frames.FramesError, match=r"extracted_values\[1\]: not an object"):
        frames.fields(bad)
    f = frames.fields(bad, errors="ignore")
    assert f["value_id"].tolist() == ["1", "3"]
    assert f["value_index"].tolist() == [0, 2]  # places in the list, the bad one counted
    assert pd.isna(f["value"].iloc[1]) and pd.isna(f["validation_passed"].iloc[1])
    assert math.isnan(f["confidence"].iloc[1]) and f["validation_messages"].iloc[1] is None
    with pytest.raises(ValueError, match="errors must be"):
        frames.fields(bad, errors="coerce")  # type: ignore[arg-type]
    with pytest.raises(frames.FramesError):
        frames.fields(42)
    assert frames.fields(42, errors="ignore").empty


def test_the_fast_and_the_careful_path_agree(recorded: list[dict[str, Any]]) -> None:
    """Well-typed value lists are read in one C-level pass; any oddity takes the loop."""
    import copy

    careful = copy.deepcopy(recorded)
    fast = copy.deepcopy(recorded)
    for slow_one, fast_one in zip(careful, fast, strict=True):
        for a, b in zip(slow_one["extracted_data"]["extracted_targets"],
                        fast_one["extracted_data"]["extracted_targets"], strict=True):
            if a["extracted_values"]:
                a["extracted_values"][0]["confidence"] = 1  # an int: not the usual float
                b["extracted_values"][0]["confidence"] = 1.0
    for convert in (frames.fields, frames.cells):
        pd.testing.assert_frame_equal(convert(careful), convert(fast))
