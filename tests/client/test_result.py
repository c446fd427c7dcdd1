"""`Result` on hand-made results: attributes, the mapping, display, the three-part
response, and finding an extraction id. Needs no extra (`make test-wheel` runs it)."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Mapping
from typing import Any

import pytest

from servicetools import Result, wire
from servicetools.client.result import extraction_id_of, extraction_ids_of


def extracted(extraction_id: str = "e1", name: str = "inv.pdf") -> dict[str, Any]:
    """An extracted data object (2.3) with a field, a multiple field and a two-part table."""
    return {
        "id": "d1", "user_id": "u1", "creation_unix_timestamp": 1.0,
        "extracted_document_storage_id": "doc-1",
        "extraction_info": {
            "id": "i1", "api_key_hash": "h", "extraction_id": extraction_id,
            "extraction_name": name, "trigger_user_id": "u1", "trigger_unix_timestamp": 1.0,
            "trigger_type": "sync", "input_type": "raw", "extracted_data_saved": True,
            "used_extraction_configuration_id": "cfg-1",
            "used_extraction_configuration_name": "invoices", "preview": False},
        "used_extraction_configuration": {"extraction_targets": [
            {"id": "t-total", "type": "field", "name": "Total"},
            {"id": "t-refs", "type": "field", "name": "Refs", "is_multiple": True},
            {"id": "t-empty", "type": "field", "name": "Empty"},
            {"id": "t-items", "type": "table", "header_schema": [
                {"id": "h0", "name": "Item", "position": 0},
                {"id": "h1", "name": "Price", "position": 1}]},
        ]},
        "extracted_targets": [
            {"id": "x1", "used_extraction_group_id": "g", "used_extraction_target_id": "t-total",
             "type": "field", "confidence": 0.9, "extracted_values": [
                 {"id": "v1", "extracted_field": "<b>12.50</b>", "validation_passed": False,
                  "validation_messages": ["`<b>12.50</b>` is not an amount"]}]},
            {"id": "x2", "used_extraction_group_id": "g", "used_extraction_target_id": "t-refs",
             "type": "field", "confidence": 0.8, "extracted_values": [
                 {"id": "v2", "extracted_field": "A", "validation_passed": True,
                  "validation_messages": []},
                 {"id": "v3", "extracted_field": " ", "validation_passed": True,
                  "validation_messages": []},
                 {"id": "v4", "extracted_field": "B", "validation_passed": True,
                  "validation_messages": []}]},
            {"id": "x3", "used_extraction_group_id": "g", "used_extraction_target_id": "t-empty",
             "type": "field", "confidence": 0.1, "extracted_values": []},
            {"id": "x4", "used_extraction_group_id": "g", "used_extraction_target_id": "t-items",
             "type": "table", "confidence": 0.7, "extracted_values": [
                 _cell("c1", "Tea", "a", 0, 0), _cell("c2", "3.00", "a", 0, 1),
                 _cell("c3", "Cake", "a", 1, 0),  # no price: an empty cell in the row
                 _cell("c4", "Jam", "b", 0, 0), _cell("c5", "9", "b", 0, 2)]},
        ],
    }


def _cell(cell_id: str, text: str, table: str, row: int, column: int) -> dict[str, Any]:
    return {"id": cell_id, "extracted_cell": text, "table_id": table, "row": row,
            "column": column, "validation_passed": True, "validation_messages": []}


def test_attributes_name_the_parts() -> None:
    raw = extracted()
    r = Result(raw)
    assert (r.extraction_id, r.extraction_name) == ("e1", "inv.pdf")
    assert (r.configuration_name, r.configuration_id) == ("invoices", "cfg-1")
    assert r.configuration is raw["used_extraction_configuration"]
    assert r.targets == raw["extracted_targets"]
    assert r.extracted_data is raw and r.raw is raw
    assert r.schema_output is None and r.validation is None
    # D11's view: the first non-empty value, a list for is_multiple, None for none.
    assert r.fields == {"Total": "<b>12.50</b>", "Refs": ["A", "B"], "Empty": None}
    # Rows keyed by header name, every table of the target in order; a table without a
    # name goes by its id (D9), a column without a header by its position.
    assert r.tables == {"t-items": [
        {"Item": "Tea", "Price": "3.00"}, {"Item": "Cake", "Price": ""},
        {"Item": "Jam", "Price": "", "column_2": "9"}]}


def test_a_read_only_mapping_over_the_raw_dict() -> None:
    raw = extracted()
    r = Result(raw)
    assert isinstance(r, Mapping) and not isinstance(r, dict)
    assert r["extraction_info"]["extraction_id"] == "e1"
    assert list(r) == list(raw) and len(r) == len(raw) and "extracted_targets" in r
    assert r == raw and dict(r) == raw and Result(r) == r
    assert wire.errors(r, "extracted_data") == wire.errors(raw, "extracted_data")
    assert json.loads(json.dumps(r.raw)) == json.loads(json.dumps(dict(r))) == raw
    with pytest.raises(TypeError):
        r["id"] = "other"  # type: ignore[index]
    with pytest.raises(AttributeError):
        r.extraction_id = "other"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(r)) == r and copy.deepcopy(r).raw == raw
    with pytest.raises(TypeError, match="mapping"):
        Result(["not", "a", "result"])  # type: ignore[arg-type]


def test_the_three_part_response() -> None:
    inner = extracted()
    raw = {"extracted_data": inner, "schema_output": {"total": "12.50"},
           "validation": {"total": {"confidence": 0.9, "validation_messages": [],
                                    "validation_passed": True}}}
    r = Result(raw)
    assert r.extracted_data is inner and r.extraction_id == "e1"
    assert r.schema_output == {"total": "12.50"}
    assert r.validation is raw["validation"]
    assert r.fields["Total"] == "<b>12.50</b>" and set(r) == set(raw)
    assert "with schema output" in repr(r) and "schema_output" in r._repr_html_()


def test_repr_is_short_and_the_html_escapes_everything() -> None:
    r = Result(extracted(name="<script>x</script>"))
    assert repr(r) == ("<Result e1 '<script>x</script>' (invoices): 4 targets, "
                       "1 value failing validation>")
    page = r._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>12.50</b>" not in page and "&lt;b&gt;12.50&lt;/b&gt;" in page
    assert "is not an amount" in page  # the failing value's message
    assert "table, 3 rows × 3 columns" in page and page.count("<tr>") == 5
    bare = Result({"extracted_targets": []})
    assert repr(bare) == "<Result (no extraction id): 0 targets>"
    assert "<table>" in bare._repr_html_()


def test_odd_parts_give_none_or_empty_not_errors() -> None:
    r = Result({"extraction_info": "?", "extracted_targets": [1, {"type": "field"}],
                "used_extraction_configuration": []})
    assert r.extraction_id is None and r.configuration == {}
    assert r.targets == [{"type": "field"}] and r.fields == {"": None} and r.tables == {}
    r._repr_html_()
    repr(r)


def test_an_extraction_id_from_an_id_or_anything_answered_about_it() -> None:
    raw = extracted("e1")
    three = {"extracted_data": extracted("e2"), "schema_output": {}, "validation": {}}
    started = {"extraction_id": "e3", "trigger_type": "async"}  # trigger_async's answer
    assert [extraction_id_of(x) for x in ("e0", Result(raw), raw, three, started)] == [
        "e0", "e1", "e1", "e2", "e3"]
    with pytest.raises(ValueError, match="no extraction id"):
        extraction_id_of({"extracted_targets": []})
    with pytest.raises(TypeError):
        extraction_id_of(42)  # type: ignore[arg-type]
    # One or many; a mapping that is not one extraction's answer gives its keys.
    assert extraction_ids_of(Result(raw)) == ["e1"]
    assert extraction_ids_of(["e0", Result(raw), raw, "e0"]) == ["e0", "e1"]
    assert extraction_ids_of({"e5": raw, "e6": three}) == ["e5", "e6"]
