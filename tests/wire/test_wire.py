"""Tests of the wire schemas: hand-written examples of every object, valid and broken."""

from __future__ import annotations

import copy
import functools
import json
import pickle
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from servicetools import bundled, wire

REPO = Path(__file__).resolve().parents[2]


def leaf() -> dict[str, Any]:
    return {"confidence": 0.9, "validation_messages": [], "validation_passed": True}


def rule_tree(name: str = "invoice date") -> dict[str, Any]:
    return {
        "name": name,
        "rule_groups": [
            {"name": "format", "rules": [{"type": "date", "formats": ["%Y-%m-%d", "%d.%m.%Y"]}]},
            {"name": "not empty", "rules": [{"type": "not_empty"}]},
            {
                "name": "all rule types",
                "rules": [
                    {"type": "regex", "pattern": "(?i)inv-[0-9]+"},
                    {"type": "number", "min": 0, "max": 1e6, "decimals": 2},
                    {"type": "amount"},
                    {"type": "length", "min": 1, "max": 30},
                    {"type": "one_of", "values": ["cash", "card"], "case_sensitive": False},
                ],
            },
        ],
    }


def header_column() -> dict[str, Any]:
    return {
        "id": "h-amount",
        "name": "Amount",
        "position": 0,
        "header_matching_validation_tree": rule_tree("Amount header"),
        "extracted_value_validation_tree": rule_tree("amount"),
    }


def field_target() -> dict[str, Any]:
    return {
        "id": "t-date",
        "type": "field",
        "name": "Invoice Date",
        "description": "Date of issue.",
        "example": "2024-03-15",
        "validation_tree": rule_tree(),
        "is_multiple": False,
        "search_area": "header",
        "search_area_type": "box",
        "extraction_group_id": "g-header",
        "creation_unix_timestamp": 1767225600.0,
    }


def table_target() -> dict[str, Any]:
    return {
        "id": "t-items",
        "type": "table",
        "name": "Line Items",
        "search_area": "all",
        "search_area_type": "all",
        "extraction_group_id": "g-items",
        "creation_unix_timestamp": 1767225600,
        "header_schema": [header_column()],
    }


def field_value() -> dict[str, Any]:
    return {
        "id": "v1",
        "extracted_field": "2024-03-15",
        "validation_passed": True,
        "validation_messages": [],
    }


def table_cell() -> dict[str, Any]:
    return {
        "id": "c1",
        "extracted_cell": "Widget\nblue",
        "table_id": "tbl-1",
        "row": 0,
        "column": 2,
        "validation_passed": False,
        "validation_messages": ["`Widget` is not a number"],
    }


def extracted_field_target() -> dict[str, Any]:
    return {
        "id": "et-1",
        "used_extraction_group_id": "g-header",
        "used_extraction_target_id": "t-date",
        "type": "field",
        "extracted_values": [field_value()],
        "confidence": 0.75,
    }


def extracted_table_target() -> dict[str, Any]:
    return {
        "id": "et-2",
        "used_extraction_group_id": "g-items",
        "used_extraction_target_id": "t-items",
        "type": "table",
        "extracted_values": [table_cell()],
        "confidence": 1,
    }


def extraction_info() -> dict[str, Any]:
    return {
        "id": "info-1",
        "api_key_hash": "ab" * 32,
        "extraction_id": "ex-1",
        "extraction_name": "",
        "trigger_user_id": "dev",
        "trigger_unix_timestamp": 1767225600.25,
        "trigger_type": "sync",
        "input_type": "raw",
        "extracted_data_saved": False,
        "used_extraction_configuration_id": "cfg-1",
        "used_extraction_configuration_name": "invoices",
        "preview": False,
    }


def extracted_data() -> dict[str, Any]:
    return {
        "id": "data-1",
        "user_id": "dev",
        "extraction_info": extraction_info(),
        "extracted_targets": [extracted_field_target(), extracted_table_target()],
        "creation_unix_timestamp": 1767225601.5,
        "extracted_document_storage_id": "",
        "used_extraction_configuration": {
            "id": "cfg-1",
            "name": "invoices",
            "extraction_targets": [field_target(), table_target()],
        },
    }


def status() -> dict[str, Any]:
    return {
        "id": "st-1",
        "status_type": "extraction_started",
        "message": "",
        "creation_unix_timestamp": 1767225600.5,
        "extraction_id": "ex-1",
        "trigger_user_id": "dev",
    }


def vault_entry() -> dict[str, Any]:
    return {
        "document_id": "doc-1",
        "document_name": "invoice.pdf",
        "document_type": "invoice",
        "content_type": "application/pdf",
        "owner_id": "dev",
        "upload_unix_timestamp": 1767225600.0,
    }


def update_field() -> dict[str, Any]:
    return {
        "extracted_target_id": "et-1",
        "type": "field",
        "new_extracted_values": [
            {"extracted_field": "2024-03-16"},
            {"id": "v9", "extracted_field": ""},
        ],
    }


def update_table() -> dict[str, Any]:
    return {
        "extracted_target_id": "et-2",
        "type": "table",
        "new_extracted_values": [
            {"extracted_cell": "Gadget", "table_id": "tbl-1", "row": 0, "column": 0},
            {"id": "c7", "extracted_cell": "", "table_id": "tbl-1", "row": 3, "column": 1},
        ],
    }


def configuration() -> dict[str, Any]:
    return {
        "id": "cfg-1",
        "name": "invoices",
        "description": "Supplier invoices.",
        "document_class": "invoice",
        "search_areas": {"header": {"page": 1, "box": [0, 0, 1.0, 0.5]}},
        "extraction_targets": [field_target(), table_target()],
        "output_schema": {"invoice": {"date": 'fields."Invoice Date"'}, "items": "tables.t-items"},
    }


VALID: dict[str, list[Callable[[], Any]]] = {
    "trigger_request": [
        lambda: {
            "configuration_name": "invoices",
            "input_type": "raw",
            "document_raw_data": "JVBERi0xLjQK",
        },
        lambda: {
            "configuration_id": "cfg-1",
            "classifier_id": "clf-1",
            "extraction_name": "march batch",
            "content_type": "image/png",
            "save_extraction": False,
            "delete_after_first_fetch": True,
            "input_type": "hosted",
            "document_host_url": "https://example.org/a.png",
        },
        lambda: {
            "configuration_id": "cfg-1",
            "input_type": "service",
            "document_storage_id": "doc-1",
        },
    ],
    "extraction_info": [extraction_info],
    "extracted_data": [extracted_data],
    "extracted_target": [extracted_field_target, extracted_table_target],
    "field_value": [field_value],
    "table_cell": [table_cell],
    "extraction_target": [
        field_target,
        table_target,
        lambda: {k: v for k, v in table_target().items() if k != "name"},
    ],
    "validation_tree": [rule_tree, lambda: {"name": "none", "rule_groups": []}],
    "header_column": [header_column],
    "status": [status, lambda: {**status(), "status_type": "error", "message": "interrupted"}],
    "status_list_request": [
        lambda: {"extraction_id_list": ["ex-1"]},
        lambda: {"extraction_id_list": [f"ex-{i}" for i in range(wire.MAX_STATUS_IDS)]},
    ],
    "status_list_response": [
        lambda: {"status_map": {"ex-1": status()}, "query_unix_timestamp": 1767225700.0},
    ],
    "vault_document": [lambda: {**vault_entry(), "num_pages": 2}],
    "vault_list_entry": [vault_entry],
    "vault_list": [
        lambda: {"documents": [vault_entry(), vault_entry()]},
        lambda: {"documents": []},
    ],
    "update_object": [update_field, update_table],
    "update_request": [
        lambda: {"extraction_id": "ex-1", "updates": [update_field(), update_table()]}
    ],
    "targets_list": [lambda: {"extracted_targets": [extracted_field_target()]}],
    "schema_output_response": [
        lambda: {
            "extracted_data": extracted_data(),
            "schema_output": {"date": "2024-03-15", "items": [["a", "1"]], "empty": []},
            "validation": {
                "date": leaf(),
                "items": [[leaf(), leaf()]],
                "empty": [],
                "n": {"x": leaf()},
            },
        },
    ],
    "error": [
        lambda: {
            "error": {
                "code": "extraction_running",
                "message": "The extraction is still running.",
                "details": {"status": status()},
            }
        },
    ],
    "configuration": [
        configuration,
        lambda: {"id": "cfg-2", "name": "minimal", "extraction_targets": []},
    ],
    "classifier": [
        lambda: {
            "id": "clf-1",
            "name": "documents",
            "classes": [
                {"name": "invoice", "keywords": ["invoice"], "patterns": ["(?i)inv(oice)?\\s*no"]},
                {"name": "receipt", "keywords": ["receipt"]},
                {"name": "letter", "patterns": ["Dear"]},
            ],
        },
    ],
}


def _trigger() -> dict[str, Any]:
    return {"configuration_name": "invoices", "input_type": "raw", "document_raw_data": "AAAA"}


def _without(make: Callable[[], dict[str, Any]], key: str) -> Callable[[], dict[str, Any]]:
    return lambda: {k: v for k, v in make().items() if k != key}


def _with(make: Callable[[], dict[str, Any]], **changes: Any) -> Callable[[], dict[str, Any]]:
    return lambda: {**make(), **changes}


def _nested(make: Callable[[], Any], path: tuple[Any, ...], value: Any) -> Callable[[], Any]:
    def build() -> Any:
        obj = make()
        node = obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return obj

    return build


def _drop_nested(make: Callable[[], Any], path: tuple[Any, ...]) -> Callable[[], Any]:
    def build() -> Any:
        obj = make()
        node = obj
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return obj

    return build


# (schema name, broken object, JSON path of the best error, text the message must contain)
INVALID: list[tuple[str, Callable[[], Any], str, str]] = [
    ("trigger_request", _with(_trigger, configuration_id="cfg-1"), "$", "only one of"),
    ("trigger_request", _without(_trigger, "configuration_name"), "$", "one of"),
    ("trigger_request", _without(_trigger, "document_raw_data"), "$", "document_raw_data"),
    ("trigger_request", _without(_trigger, "input_type"), "$", "input_type"),
    (
        "trigger_request",
        _with(_trigger, document_host_url="https://example.org/a.pdf"),
        "$.document_host_url",
        "not allowed",
    ),
    (
        "trigger_request",
        _with(_trigger, input_type="hosted", document_host_url="https://example.org/a.pdf"),
        "$.document_raw_data",
        "input_type is 'hosted'",
    ),
    ("trigger_request", _with(_trigger, extra_field=1), "$", "extra_field"),
    ("trigger_request", _with(_trigger, input_type="ftp"), "$.input_type", "ftp"),
    ("trigger_request", _with(_trigger, content_type="image/gif"), "$.content_type", "image/gif"),
    ("trigger_request", _with(_trigger, save_extraction="yes"), "$.save_extraction", "boolean"),
    ("trigger_request", lambda: [], "$", "object"),
    (
        "status_list_request",
        lambda: {"extraction_id_list": [f"ex-{i}" for i in range(wire.MAX_STATUS_IDS + 1)]},
        "$.extraction_id_list",
        "at most 1000",
    ),
    ("status_list_request", lambda: {"extraction_id_list": []}, "$.extraction_id_list", "least"),
    ("status_list_request", lambda: {"extraction_id_list": [1]}, "$.extraction_id_list[0]", ""),
    ("status_list_request", lambda: {"ids": ["a"]}, "$", ""),
    (
        "update_object",
        _drop_nested(update_table, ("new_extracted_values", 1, "row")),
        "$.new_extracted_values[1]",
        "'row' is a required property (when type is 'table')",
    ),
    (
        "update_object",
        _nested(update_table, ("new_extracted_values", 0, "column"), -1),
        "$.new_extracted_values[0].column",
        "minimum",
    ),
    (
        "update_object",
        _nested(update_field, ("new_extracted_values", 0, "table_id"), "tbl-1"),
        "$.new_extracted_values[0]",
        "table_id",
    ),
    ("update_object", _with(update_field, confidence=1.0), "$", "confidence"),
    ("update_request", lambda: {"extraction_id": "ex-1"}, "$", "updates"),
    (
        "update_request",
        lambda: {"extraction_id": "ex-1", "updates": [_with(update_field, type="cell")()]},
        "$.updates[0].type",
        "cell",
    ),
    ("extracted_target", _with(extracted_field_target, confidence=1.5), "$.confidence", "1.5"),
    ("extracted_target", _with(extracted_field_target, type="list"), "$.type", "list"),
    (
        "extracted_target",
        _with(extracted_field_target, extracted_values=[table_cell()]),
        "$.extracted_values[0]",
        "extracted_field",
    ),
    (
        "extracted_data",
        _nested(extracted_data, ("extracted_targets", 1, "extracted_values", 0, "row"), 1.5),
        "$.extracted_targets[1].extracted_values[0].row",
        "integer",
    ),
    (
        "extracted_data",
        _nested(extracted_data, ("extraction_info", "trigger_type"), "later"),
        "$.extraction_info.trigger_type",
        "later",
    ),
    (
        "extracted_data",
        _drop_nested(extracted_data, ("used_extraction_configuration", "extraction_targets")),
        "$.used_extraction_configuration",
        "extraction_targets",
    ),
    (
        "extracted_data",
        _nested(extracted_data, ("extraction_info", "trigger_unix_timestamp"), "2024-01-01"),
        "$.extraction_info.trigger_unix_timestamp",
        "number",
    ),
    ("extraction_info", _without(extraction_info, "preview"), "$", "preview"),
    ("extraction_info", _with(extraction_info, extraction_id=17), "$.extraction_id", "string"),
    ("status", _with(status, status_type="bogus"), "$.status_type", "bogus"),
    (
        "status_list_response",
        _nested(
            lambda: {"status_map": {"ex-1": status()}, "query_unix_timestamp": 1.0},
            ("status_map", "ex-1", "status_type"),
            "bogus",
        ),
        "$.status_map['ex-1'].status_type",
        "bogus",
    ),
    ("table_cell", _without(table_cell, "table_id"), "$", "table_id"),
    ("field_value", _with(field_value, validation_messages="bad"), "$.validation_messages", ""),
    ("vault_document", vault_entry, "$", "num_pages"),
    (
        "vault_list",
        lambda: {"documents": [_without(vault_entry, "owner_id")()]},
        "$.documents[0]",
        "owner_id",
    ),
    ("extraction_target", _without(field_target, "validation_tree"), "$", "validation_tree"),
    ("extraction_target", _without(table_target, "header_schema"), "$", "header_schema"),
    ("extraction_target", _with(field_target, search_area_type="all"), "$.search_area", "all"),
    (
        "extraction_target",
        _nested(table_target, ("header_schema", 0, "position"), -1),
        "$.header_schema[0].position",
        "minimum",
    ),
    (
        "validation_tree",
        _nested(rule_tree, ("rule_groups", 0, "rules", 0), {"type": "date"}),
        "$.rule_groups[0].rules[0]",
        "'formats' is a required property (when type is 'date')",
    ),
    (
        "validation_tree",
        _nested(rule_tree, ("rule_groups", 0, "rules", 0), {"type": "regex", "patern": "x"}),
        "$.rule_groups[0].rules[0]",
        "'pattern' is a required property (when type is 'regex')",
    ),
    (
        "validation_tree",
        _nested(rule_tree, ("rule_groups", 0, "rules", 0), {"type": "regex", "pattern": "(x"}),
        "$.rule_groups[0].rules[0].pattern",
        "regex",
    ),
    (
        "validation_tree",
        _nested(rule_tree, ("rule_groups", 0, "rules", 0), {"type": "fuzzy"}),
        "$.rule_groups[0].rules[0].type",
        "fuzzy",
    ),
    (
        "validation_tree",
        _nested(rule_tree, ("rule_groups", 1, "rules"), []),
        "$.rule_groups[1].rules",
        "at least 1",
    ),
    (
        "schema_output_response",
        _nested(VALID["schema_output_response"][0], ("validation", "items", 0, 1, "confidence"), 2),
        "$.validation.items[0][1].confidence",
        "2 is greater than the maximum of 1",
    ),
    (
        "schema_output_response",
        _nested(VALID["schema_output_response"][0], ("validation", "date"), "x"),
        "$.validation.date",
        "",
    ),
    (
        "schema_output_response",
        _nested(
            VALID["schema_output_response"][0],
            ("validation", "n", "x"),
            {"validation_passed": False, "confidence": 0.2},
        ),
        "$.validation.n.x",
        "'validation_messages' is a required property",
    ),
    (
        "error",
        lambda: {"error": {"code": "Not Found", "message": "x", "details": {}}},
        "$.error.code",
        "does not match",
    ),
    ("error", lambda: {"error": {"code": "not_found", "message": "x"}}, "$.error", "details"),
    ("configuration", _with(configuration, search_area={}), "$", "search_area"),
    ("configuration", _without(configuration, "extraction_targets"), "$", "extraction_targets"),
    (
        "configuration",
        _nested(configuration, ("search_areas", "header", "page"), 0),
        "$.search_areas.header.page",
        "minimum",
    ),
    (
        "configuration",
        _nested(configuration, ("search_areas", "header", "box", 2), 1.2),
        "$.search_areas.header.box[2]",
        "maximum",
    ),
    (
        "configuration",
        _nested(configuration, ("search_areas", "header", "box"), [0, 0, 1]),
        "$.search_areas.header.box",
        "at least 4",
    ),
    (
        "configuration",
        _nested(configuration, ("search_areas", "all"), {"page": 1, "box": [0] * 4}),
        "$.search_areas",
        "all",
    ),
    (
        "classifier",
        lambda: {"id": "c", "name": "c", "classes": [{"name": "x"}]},
        "$.classes[0]",
        "one of 'keywords', 'patterns' is required",
    ),
    ("classifier", lambda: {"id": "c", "name": "c", "classes": []}, "$.classes", "at least 1"),
]


def _examples() -> Iterator[tuple[str, Callable[[], Any]]]:
    for name, makers in VALID.items():
        for make in makers:
            yield name, make


VALID_CASES = list(_examples())


def test_names_are_sorted_and_match_files() -> None:
    assert list(wire.SCHEMA_NAMES) == sorted(wire.SCHEMA_NAMES)
    folder = resources.files("servicetools.wire") / "schemas"
    files = sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))
    assert files == list(wire.SCHEMA_NAMES)
    assert set(VALID) == set(wire.SCHEMA_NAMES), "every schema needs a valid example"


@pytest.mark.parametrize("name", wire.SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12_with_local_refs(name: str) -> None:
    doc = wire.schema(name)
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"https://servicetools.local/wire/{name}.json"
    for ref in _refs(doc):
        target = ref.partition("#")[0]
        assert target == "" or target.removesuffix(".json") in wire.SCHEMA_NAMES, ref


def test_schema_returns_a_copy_and_validator_is_cached() -> None:
    doc = wire.schema("status")
    doc["properties"].clear()
    assert wire.schema("status")["properties"]
    assert wire.validator("status") is wire.validator("status")
    assert not wire.is_valid({}, "status")


def test_unknown_name() -> None:
    with pytest.raises(KeyError, match="nope"):
        wire.schema("nope")
    with pytest.raises(KeyError):
        wire.validate({}, "nope")


@pytest.mark.parametrize(("name", "make"), VALID_CASES)
def test_valid_examples_pass(name: str, make: Callable[[], Any]) -> None:
    obj = make()
    assert wire.errors(obj, name) == []
    wire.validate(obj, name)
    assert wire.is_valid(obj, name)


def test_a_read_only_mapping_is_checked_as_the_dict_it_shows() -> None:
    # As the client's Result is: a Mapping, not a dict, over the service's JSON.
    good, bad = VALID["extracted_data"][0](), VALID["extracted_data"][0]()
    del bad["extraction_info"]
    wire.validate(MappingProxyType(good), "extracted_data")
    assert wire.is_valid(MappingProxyType(good), "extracted_data")
    assert wire.errors(MappingProxyType(bad), "extracted_data") == wire.errors(
        bad, "extracted_data") != []


@pytest.mark.parametrize(("name", "make", "path", "text"), INVALID)
def test_invalid_examples_fail_at_path(
    name: str, make: Callable[[], Any], path: str, text: str
) -> None:
    obj = make()
    assert not wire.is_valid(obj, name)
    with pytest.raises(wire.WireError) as caught:
        wire.validate(obj, name)
    err = caught.value
    assert isinstance(err, ValueError)
    assert err.schema_name == name
    assert err.path == path, err.errors
    assert text in err.reason, err.reason
    assert str(err).startswith(f"invalid {name} at {path}: ")
    assert err.errors == wire.errors(obj, name)
    # best_match may descend into anyOf branches, deeper than the top-level errors.
    assert any(path.startswith(line.split(": ", 1)[0]) for line in err.errors)


def test_trigger_request_with_both_configs_and_huge_document_is_reported_briefly() -> None:
    obj = {
        "configuration_name": "a",
        "configuration_id": "b",
        "input_type": "raw",
        "document_raw_data": "A" * 1_000_000,
        "document_storage_id": "doc-1",
        "surprise": True,
    }
    problems = wire.errors(obj, "trigger_request")
    assert problems == [
        "$: Additional properties are not allowed ('surprise' was unexpected)",
        "$: only one of 'configuration_name', 'configuration_id' may be given",
        "$.document_storage_id: 'document_storage_id' is not allowed (when input_type is 'raw')",
    ]


def test_errors_are_sorted_by_numeric_path() -> None:
    updates = [update_field() for _ in range(12)]
    updates[10]["type"] = "bogus"
    updates[2]["type"] = "bogus"
    problems = wire.errors({"extraction_id": "ex", "updates": updates}, "update_request")
    assert [p.split(":")[0] for p in problems] == ["$.updates[2].type", "$.updates[10].type"]


def test_long_instances_are_abbreviated() -> None:
    (problem,) = wire.errors(
        {"status_map": {}, "query_unix_timestamp": ["1" * 10_000]}, "status_list_response"
    )
    assert problem.startswith("$.query_unix_timestamp: ['111")
    assert problem.endswith("is not of type 'number'")
    assert len(problem) < 200


@pytest.mark.parametrize(
    "name",
    [
        "extraction_info",
        "extracted_data",
        "extracted_target",
        "field_value",
        "table_cell",
        "extraction_target",
        "status",
        "status_list_response",
        "vault_document",
        "vault_list_entry",
        "vault_list",
        "targets_list",
        "schema_output_response",
        "error",
    ],
)
def test_responses_accept_unknown_extra_fields(name: str) -> None:
    obj = VALID[name][0]()
    obj["added_by_a_newer_service"] = {"anything": [1, 2]}
    assert wire.errors(obj, name) == []


def test_nested_response_objects_accept_unknown_extra_fields() -> None:
    obj = extracted_data()
    obj["extraction_info"]["region"] = "eu"
    obj["extracted_targets"][0]["extracted_values"][0]["bbox"] = [0, 0, 1, 1]
    obj["extracted_targets"][1]["extracted_values"][0]["page"] = 1
    obj["used_extraction_configuration"]["extraction_targets"][0]["language"] = "de"
    assert wire.errors(obj, "extracted_data") == []


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("trigger_request", _trigger),
        ("status_list_request", lambda: {"extraction_id_list": ["a"]}),
        ("update_request", lambda: {"extraction_id": "a", "updates": []}),
        ("update_object", update_field),
        ("configuration", configuration),
        ("classifier", VALID["classifier"][0]),
    ],
)
def test_requests_and_files_are_closed(name: str, make: Callable[[], Any]) -> None:
    obj = make()
    obj["unknown"] = 1
    assert wire.errors(obj, name) == [
        "$: Additional properties are not allowed ('unknown' was unexpected)"
    ]


def test_constants_agree_with_schemas() -> None:
    props = wire.schema("status")["properties"]
    assert tuple(props["status_type"]["enum"]) == wire.STATUS_TYPES
    assert wire.STATUS_TYPES[-2:] == ("ended", "error")
    assert wire.FINAL_STATUSES == frozenset({"ended", "error"})
    trigger = wire.schema("trigger_request")["properties"]
    assert tuple(trigger["content_type"]["enum"]) == wire.CONTENT_TYPES
    assert tuple(trigger["input_type"]["enum"]) == wire.INPUT_TYPES
    info = wire.schema("extraction_info")["properties"]
    assert tuple(info["trigger_type"]["enum"]) == wire.TRIGGER_TYPES
    assert tuple(info["input_type"]["enum"]) == wire.INPUT_TYPES
    for name in ("extracted_target", "extraction_target", "update_object"):
        assert tuple(wire.schema(name)["properties"]["type"]["enum"]) == wire.TARGET_TYPES
    rule = wire.schema("validation_tree")["properties"]["rule_groups"]["items"]
    assert tuple(rule["properties"]["rules"]["items"]["properties"]["type"]["enum"]) == (
        wire.RULE_TYPES
    )
    ids = wire.schema("status_list_request")["properties"]["extraction_id_list"]
    assert ids["maxItems"] == wire.MAX_STATUS_IDS == 1000


def test_all_is_sorted_and_complete() -> None:
    assert wire.__all__ == sorted(wire.__all__)
    # dir(): the names `objects` brings are imported on first use (PEP 562).
    public = {name for name in dir(wire) if not name.startswith("_")}
    assert set(wire.__all__) == public
    assert "objects" in wire.__all__ and "jsonschema" not in public
    for module in (wire.content, wire.objects, wire.protocol, wire.rules, wire.values):
        assert module.__all__ == sorted(module.__all__), module.__name__
    for name in wire.__all__:
        assert hasattr(wire, name)


def test_wire_error_carries_all_problems() -> None:
    obj = {"extraction_id_list": [], "x": 1}
    with pytest.raises(ValueError, match=r"^invalid status_list_request at \$") as caught:
        wire.validate(obj, "status_list_request")
    assert isinstance(caught.value, wire.WireError)
    assert len(caught.value.errors) == 2
    copied = pickle.loads(pickle.dumps(caught.value))
    assert str(copied) == str(caught.value)
    assert copied.errors == caught.value.errors


@pytest.mark.parametrize("name", wire.SCHEMA_NAMES)
def test_bundled_is_self_contained(name: str) -> None:
    doc = wire.bundled(name)
    Draft202012Validator.check_schema(doc)
    text = json.dumps(doc)
    assert "$id" not in text and "$schema" not in text
    assert all(ref.startswith("#/$defs/") for ref in _refs(doc))
    assert doc == wire.bundled(name), "bundling is deterministic"


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [(name, make, True) for name, make in VALID_CASES]
    + [(name, make, False) for name, make, _, _ in INVALID],
)
def test_bundled_validates_like_the_registry(
    name: str, make: Callable[[], Any], expected: bool
) -> None:
    assert _plain_validator(name).is_valid(make()) is expected


def test_bundled_can_be_embedded_in_openapi_components() -> None:
    name = "schema_output_response"
    root = f"#/components/schemas/{name}"
    embedded = wire.bundled(name, ref_root=root)
    assert all(ref.startswith(f"{root}/$defs/") for ref in _refs(embedded))
    document = {"$ref": root, "components": {"schemas": {name: embedded}}}
    check = Draft202012Validator(document)
    good = VALID[name][0]()
    assert check.is_valid(good)
    bad = copy.deepcopy(good)
    bad["validation"]["n"]["x"]["confidence"] = -1
    assert not check.is_valid(bad)


def test_bundled_inlines_nested_files() -> None:
    doc = wire.bundled("update_request")
    items = doc["properties"]["updates"]["items"]
    assert items["additionalProperties"] is False
    assert "new_extracted_values" in items["properties"]
    data = wire.bundled("extracted_data")
    assert data["properties"]["extraction_info"]["required"] == list(
        wire.schema("extraction_info")["required"]
    )


@pytest.mark.parametrize(
    "path",
    sorted((bundled.CONFIGURATIONS).glob("*.json"))
    + sorted((bundled.CLASSIFIERS).glob("*.json")),
    ids=lambda p: p.name,
)
def test_shipped_data_files_are_valid(path: Path) -> None:
    name = "configuration" if path.parent.name == "configurations" else "classifier"
    assert wire.errors(json.loads(path.read_text(encoding="utf-8")), name) == []


@functools.cache
def _plain_validator(name: str) -> Draft202012Validator:
    """A validator of the bundled schema, without the wire registry."""
    return Draft202012Validator(wire.bundled(name), format_checker=wire.FORMAT_CHECKER)


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            elif key not in ("const", "default", "enum", "examples"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)
