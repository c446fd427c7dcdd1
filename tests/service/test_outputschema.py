"""Output schemas (D11): loading, error kinds with path and column, views and rendering."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from servicetools import bundled
from servicetools.service.core.outputschema import (
    BINDING_ERROR,
    INVALID_SCHEMA,
    PARSING_ERROR,
    CompiledSchema,
    OutputSchemaError,
    build_validation_view,
    build_view,
    check,
    compile_output_schema,
    load_output_schema,
    render,
)

CONFIGURATIONS = bundled.CONFIGURATIONS


def load_configuration(name: str) -> dict[str, Any]:
    return json.loads((CONFIGURATIONS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def invoices() -> dict[str, Any]:
    return load_configuration("invoices")


def compile_error(schema: Any, configuration: dict[str, Any]) -> OutputSchemaError:
    with pytest.raises(OutputSchemaError) as info:
        compile_output_schema(schema, configuration)
    return info.value


# ---------------------------------------------------------------------------
# a small configuration and extracted data object


def _tree(name: str) -> dict[str, Any]:
    return {"name": name, "rule_groups": [{"name": "not empty", "rules": [{"type": "not_empty"}]}]}


CONFIGURATION: dict[str, Any] = {
    "id": "cfg-test",
    "name": "test",
    "extraction_targets": [
        {"id": "t-number", "type": "field", "name": "Number", "is_multiple": False,
         "validation_tree": _tree("number")},
        {"id": "t-emails", "type": "field", "name": "Emails", "is_multiple": True,
         "validation_tree": _tree("emails")},
        {"id": "t-note", "type": "field", "name": "Note", "is_multiple": False,
         "validation_tree": _tree("note")},
        {"id": "t-missing", "type": "field", "name": "Missing", "is_multiple": True,
         "validation_tree": _tree("missing")},
        {"id": "t-items", "type": "table", "name": "Line Items", "header_schema": [
            # Deliberately out of order: position, not list order, decides.
            {"id": "h-amount", "name": "Amount", "position": 1},
            {"id": "h-description", "name": "Description", "position": 0},
        ]},
        {"id": "t-unnamed", "type": "table", "header_schema": [
            {"id": "h-a", "name": "A", "position": 0},
        ]},
    ],
}  # fmt: skip


def _value(vid: str, text: str, messages: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": vid,
        "extracted_field": text,
        "validation_passed": not messages,
        "validation_messages": messages or [],
    }


def _cell(cid: str, table: str, row: int, column: int, text: str) -> dict[str, Any]:
    messages = [] if text.strip() else ["`` is empty"]
    return {
        "id": cid,
        "extracted_cell": text,
        "table_id": table,
        "row": row,
        "column": column,
        "validation_passed": not messages,
        "validation_messages": messages,
    }


EXTRACTED: dict[str, Any] = {
    "id": "data-1",
    "user_id": "u1",
    "extraction_info": {"extraction_id": "ex-1"},
    "creation_unix_timestamp": 1767225600.0,
    "extracted_document_storage_id": "doc-1",
    "extracted_targets": [
        {"id": "et-1", "used_extraction_group_id": "g", "used_extraction_target_id": "t-number",
         "type": "field", "confidence": 0.9,
         "extracted_values": [_value("v1", "INV-1"), _value("v1b", "INV-2")]},
        {"id": "et-2", "used_extraction_group_id": "g", "used_extraction_target_id": "t-emails",
         "type": "field", "confidence": 0.8,
         "extracted_values": [_value("v2", "a@x.org"), _value("v3", "bad", ["`bad` is wrong"])]},
        {"id": "et-3", "used_extraction_group_id": "g", "used_extraction_target_id": "t-note",
         "type": "field", "confidence": 0.1,
         "extracted_values": [_value("v4", "  ", ["`  ` is empty"])]},
        {"id": "et-4", "used_extraction_group_id": "g", "used_extraction_target_id": "t-missing",
         "type": "field", "confidence": 0.0, "extracted_values": []},
        {"id": "et-5", "used_extraction_group_id": "g", "used_extraction_target_id": "t-items",
         "type": "table", "confidence": 0.7,
         "extracted_values": [
             # Table "p2" appears first, so its rows come first; rows are sorted.
             _cell("c1", "p2", 1, 0, "Nut"),
             _cell("c2", "p2", 0, 0, "Bolt\nM8 x 40"),
             _cell("c3", "p2", 0, 1, "1.00"),
             _cell("c4", "p1", 0, 0, "Widget"),
             _cell("c5", "p1", 0, 1, "$5.00"),
             _cell("c6", "p1", 1, 2, "extra"),
         ]},
        {"id": "et-6", "used_extraction_group_id": "g", "used_extraction_target_id": "t-unnamed",
         "type": "table", "confidence": 1.0,
         "extracted_values": [_cell("c7", "t", 0, 0, "a0"), _cell("c8", "t", 1, 0, "")]},
    ],
    "used_extraction_configuration": CONFIGURATION,
}  # fmt: skip


# ---------------------------------------------------------------------------
# loading


def test_load_accepts_dict_json_text_and_bytes() -> None:
    schema = {"a": "fields.Number"}
    assert load_output_schema(schema) == schema
    assert load_output_schema(json.dumps(schema)) == schema
    assert load_output_schema(json.dumps(schema).encode("utf-8")) == schema
    assert load_output_schema(b"\xef\xbb\xbf" + json.dumps(schema).encode("utf-8")) == schema


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[1,2]", "the schema is an array, not a JSON object"),
        ('"fields.Number"', "the schema is a string, not a JSON object"),
        ("null", "the schema is null, not a JSON object"),
        ("{not json", "the schema is not valid JSON"),
        ("", "the schema is not valid JSON"),
        (b"\xff\x00", "the schema is not valid JSON"),
        (42, "the schema is a number, not a JSON object"),
        (["a"], "the schema is an array, not a JSON object"),
    ],
)
def test_load_rejects_what_is_not_an_object(raw: Any, message: str) -> None:
    with pytest.raises(OutputSchemaError) as info:
        load_output_schema(raw)
    error = info.value
    assert error.kind == INVALID_SCHEMA
    assert error.path == "$"
    assert error.column is None
    assert str(error).startswith(f"Invalid schema at $: {message}")
    assert isinstance(error, ValueError)


def test_whole_schema_array_is_invalid_in_compile_and_check(invoices: dict[str, Any]) -> None:
    error = compile_error("[1,2]", invoices)
    assert error.kind == INVALID_SCHEMA
    assert check("[1,2]", invoices) == [
        "Invalid schema at $: the schema is an array, not a JSON object"
    ]


def test_load_xml() -> None:
    xml = '<schema><number>fields."Invoice Number"</number></schema>'
    assert load_output_schema(xml) == {"number": 'fields."Invoice Number"'}
    assert load_output_schema(xml.encode("utf-8")) == {"number": 'fields."Invoice Number"'}


def test_load_xml_nesting_repetition_and_declaration() -> None:
    xml = """<?xml version="1.0" encoding="UTF-8"?>
    <schema>
      <invoice>
        <number> fields."Invoice Number" </number>
        <date>fields."Invoice Date"</date>
      </invoice>
      <total>fields.Total</total>
      <pick>fields.Vendor</pick>
      <pick>fields.Customer</pick>
      <pick><inner>fields.Tax</inner></pick>
    </schema>"""
    assert load_output_schema("\n  " + xml) == {
        "invoice": {"number": 'fields."Invoice Number"', "date": 'fields."Invoice Date"'},
        "total": "fields.Total",
        "pick": ["fields.Vendor", "fields.Customer", {"inner": "fields.Tax"}],
    }


def test_load_xml_utf16_bytes() -> None:
    xml = '<?xml version="1.0" encoding="UTF-16"?><s><v>fields.Vendor</v></s>'
    assert load_output_schema(xml.encode("utf-16")) == {"v": "fields.Vendor"}


def test_load_xml_empty_root_is_an_empty_schema() -> None:
    assert load_output_schema("<schema/>") == {}


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<schema><a>x</a>", "the schema is not valid XML"),
        ("<schema>fields.Vendor</schema>", "the XML root element holds text"),
        ("<schema>text<a>fields.Vendor</a></schema>", "an element holds both text"),
        (
            '<!DOCTYPE s [<!ENTITY e "fields.Vendor">]><s><a>&e;</a></s>',
            "DOCTYPE and ENTITY declarations are not allowed",
        ),
        (
            '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><s>&lol2;</s>',
            "DOCTYPE and ENTITY declarations are not allowed",
        ),
        ('<!DOCTYPE s SYSTEM "file:///etc/passwd"><s/>', "DOCTYPE and ENTITY"),
    ],
)
def test_load_xml_rejects(xml: str, message: str) -> None:
    for raw in (xml, xml.encode("utf-8")):
        with pytest.raises(OutputSchemaError) as info:
            load_output_schema(raw)
        assert info.value.kind == INVALID_SCHEMA
        assert message in str(info.value)


# ---------------------------------------------------------------------------
# compiling: the shipped configurations


@pytest.mark.parametrize("name", ["invoices", "receipts"])
def test_shipped_output_schemas_compile(name: str) -> None:
    configuration = load_configuration(name)
    compiled = compile_output_schema(configuration["output_schema"], configuration)
    assert isinstance(compiled, CompiledSchema)
    assert check(configuration["output_schema"], configuration) == []
    paths = [path for path, _ in compiled.expressions()]
    assert len(paths) == len(set(paths)) > 3


def test_expressions_lists_paths(invoices: dict[str, Any]) -> None:
    compiled = compile_output_schema(invoices["output_schema"], invoices)
    expressions = dict(compiled.expressions())
    assert expressions["$.invoice.number"] == 'fields."Invoice Number"'
    assert expressions["$.descriptions"] == 'records."Line Items"[*].Description'


def test_compile_accepts_json_and_xml_text(invoices: dict[str, Any]) -> None:
    compiled = compile_output_schema('{"v": "fields.Vendor"}', invoices)
    assert compiled.schema == {"v": "fields.Vendor"}
    compiled = compile_output_schema(
        '<schema><number>fields."Invoice Number"</number></schema>', invoices
    )
    assert compiled.schema == {"number": 'fields."Invoice Number"'}


# ---------------------------------------------------------------------------
# compiling: errors


def test_parsing_error_has_path_and_column(invoices: dict[str, Any]) -> None:
    error = compile_error({"a": "fields.[bad"}, invoices)
    assert error.kind == PARSING_ERROR
    assert error.path == "$.a"
    assert error.column == 12
    assert str(error).startswith("Parsing error at $.a, column 12: ")


@pytest.mark.parametrize(
    ("expression", "column"),
    [
        ('fields."Invoice Number', 8),  # unclosed quote at its opening
        ("fields..Vendor", 8),
        ("records.Items[?a==]", 19),
        ("`{bad", 1),
    ],
)
def test_parsing_error_columns(invoices: dict[str, Any], expression: str, column: int) -> None:
    error = compile_error({"x": {"y": [expression]}}, invoices)
    assert (error.kind, error.path, error.column) == (PARSING_ERROR, "$.x.y[0]", column)
    assert str(error).startswith(f"Parsing error at $.x.y[0], column {column}: ")
    assert "\n" not in str(error)


def test_empty_expression_is_a_parsing_error(invoices: dict[str, Any]) -> None:
    error = compile_error({"a": ""}, invoices)
    assert (error.kind, error.path, error.column) == (PARSING_ERROR, "$.a", None)
    assert str(error) == "Parsing error at $.a: the expression is empty"


@pytest.mark.parametrize(
    ("schema", "path", "message"),
    [
        ({"a": 5}, "$.a", "a leaf must be a string holding an expression, not a number"),
        (
            {"a": {"b": [None]}},
            "$.a.b[0]",
            "a leaf must be a string holding an expression, not null",
        ),
        ({"a": True}, "$.a", "a leaf must be a string holding an expression, not a boolean"),
    ],
)
def test_non_string_leaf_is_invalid(
    invoices: dict[str, Any], schema: dict[str, Any], path: str, message: str
) -> None:
    error = compile_error(schema, invoices)
    assert (error.kind, error.path) == (INVALID_SCHEMA, path)
    assert str(error) == f"Invalid schema at {path}: {message}"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("fields.Nope", "the configuration has no field named `Nope`"),
        ("fields.Vendr", "the configuration has no field named `Vendr`"),
        ('tables."Line Itemz"', "the configuration has no table named `Line Itemz`"),
        ("records.Items", "the configuration has no table named `Items`"),
        ('records."Line Items"[*].Colour', "the table `Line Items` has no column named `Colour`"),
        ('records."Line Items"[0].Colour', "the table `Line Items` has no column named `Colour`"),
        ('records."Line Items"[].Colour', "the table `Line Items` has no column named `Colour`"),
        ('records."Line Items"[-2:].Colour', "the table `Line Items` has no column named `Colour`"),
        (
            'records."Line Items" | [*].Colour',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'records."Line Items" | [0].Colour',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'records."Line Items"[?Colour == `"red"`].Description',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'records."Line Items"[*].{d: Description, c: Colour}',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'records."Line Items"[*].[Description, Colour]',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'sort_by(records."Line Items", &Colour)[*].Description',
            "the table `Line Items` has no column named `Colour`",
        ),
        (
            'max_by(records."Line Items", &Amount).Colour',
            "the table `Line Items` has no column named `Colour`",
        ),
        ("length(fields.Nope)", "the configuration has no field named `Nope`"),
        ("foo", "refers to `foo`, which is not fields, tables or records"),
        ("invoice.number", "refers to `invoice`, which is not fields, tables or records"),
        ("fields.Vendor || Vendor", "refers to `Vendor`, which is not fields, tables or records"),
    ],
)
def test_binding_errors(invoices: dict[str, Any], expression: str, message: str) -> None:
    error = compile_error({"parties": {"vendor": expression}}, invoices)
    assert (error.kind, error.path, error.column) == (BINDING_ERROR, "$.parties.vendor", None)
    assert str(error) == f"Binding error at $.parties.vendor: {message}"


@pytest.mark.parametrize(
    "expression",
    [
        "fields",
        "@",
        "records.*",
        "fields.Vendor || fields.Customer",
        'fields."Invoice Number" | [0]',
        'tables."Line Items"[0][1]',
        'tables."Line Items"[*][0]',
        'records."Line Items"[*].Description',
        'records."Line Items"[?Amount != `""`].{d: Description, q: Quantity}',
        'records."Line Items"[].[Description, "Unit Price"]',
        'sort_by(records."Line Items", &Description)[0].Amount',
        'length(records."Line Items")',
        'records."Line Items"[*].column_7',
        'join(`", "`, records."Line Items"[*].Description)',
        "`42`",
        "'literal'",
    ],
)
def test_valid_expressions_bind(invoices: dict[str, Any], expression: str) -> None:
    assert check({"x": expression}, invoices) == []


def test_table_without_name_is_bound_by_id() -> None:
    assert check({"a": 'tables."t-unnamed"', "b": 'records."t-unnamed"[*].A'}, CONFIGURATION) == []
    assert check({"a": 'records."t-items"'}, CONFIGURATION) == [
        "Binding error at $.a: the configuration has no table named `t-items`"
    ]


def test_check_lists_every_error_and_compile_raises_the_first(invoices: dict[str, Any]) -> None:
    schema = {
        "ok": "fields.Vendor",
        "parse": "fields.[",
        "nested": {"bind": ["fields.Nope", 7]},
        "two": 'records."Line Items"[*].[Colour, Size]',
        "odd key": "foo",
    }
    assert check(schema, invoices) == [
        "Parsing error at $.parse, column 9: the expression is incomplete",
        "Binding error at $.nested.bind[0]: the configuration has no field named `Nope`",
        "Invalid schema at $.nested.bind[1]: a leaf must be a string holding an expression, "
        "not a number",
        "Binding error at $.two: the table `Line Items` has no column named `Colour`",
        "Binding error at $.two: the table `Line Items` has no column named `Size`",
        'Binding error at $["odd key"]: refers to `foo`, which is not fields, tables or records',
    ]
    error = compile_error(schema, invoices)
    assert (error.kind, error.path) == (PARSING_ERROR, "$.parse")


def test_check_accepts_raw_text(invoices: dict[str, Any]) -> None:
    assert check('{"a": "fields.Nope"}', invoices) == [
        "Binding error at $.a: the configuration has no field named `Nope`"
    ]
    assert check("<s><a>fields.Vendor</a></s>", invoices) == []
    assert check("{", invoices)[0].startswith("Invalid schema at $: the schema is not valid JSON")


def test_error_survives_pickling() -> None:
    error = OutputSchemaError(PARSING_ERROR, "$.a", "boom", 3)
    copied = pickle.loads(pickle.dumps(error))
    assert (copied.kind, copied.path, copied.column, str(copied)) == (
        PARSING_ERROR,
        "$.a",
        3,
        "Parsing error at $.a, column 3: boom",
    )


# ---------------------------------------------------------------------------
# views


def test_build_view() -> None:
    view = build_view(EXTRACTED)
    assert view["fields"] == {
        "Number": "INV-1",
        "Emails": ["a@x.org", "bad"],
        "Note": None,
        "Missing": None,
    }
    rows = [
        ["Bolt\nM8 x 40", "1.00"],
        ["Nut", ""],
        ["Widget", "$5.00", ""],
        ["", "", "extra"],
    ]
    assert view["tables"]["Line Items"] == rows
    assert view["records"]["Line Items"] == [
        {"Description": "Bolt\nM8 x 40", "Amount": "1.00"},
        {"Description": "Nut", "Amount": ""},
        {"Description": "Widget", "Amount": "$5.00", "column_2": ""},
        {"Description": "", "Amount": "", "column_2": "extra"},
    ]
    assert view["tables"]["t-unnamed"] == [["a0"], [""]]
    assert view["records"]["t-unnamed"] == [{"A": "a0"}, {"A": ""}]


def test_build_validation_view_mirrors_values() -> None:
    view = build_validation_view(EXTRACTED)
    assert view["fields"]["Number"] == {
        "confidence": 0.9,
        "validation_messages": [],
        "validation_passed": True,
    }
    assert view["fields"]["Emails"][1] == {
        "confidence": 0.8,
        "validation_messages": ["`bad` is wrong"],
        "validation_passed": False,
    }
    assert view["fields"]["Note"] is None
    assert view["fields"]["Missing"] is None
    widget_row = view["records"]["Line Items"][2]
    assert widget_row["Description"]["confidence"] == 0.7
    # A cell the extraction did not produce has nothing to fail.
    assert widget_row["column_2"] == {
        "confidence": 0.7,
        "validation_messages": [],
        "validation_passed": True,
    }


def test_views_without_extracted_targets() -> None:
    data = {"used_extraction_configuration": CONFIGURATION, "extracted_targets": []}
    view = build_view(data)
    assert view["fields"]["Number"] is None
    assert view["tables"]["Line Items"] == []
    assert view["records"]["Line Items"] == []
    assert build_view({}) == {"fields": {}, "tables": {}, "records": {}}


def test_views_do_not_modify_their_input() -> None:
    before = copy.deepcopy(EXTRACTED)
    build_view(EXTRACTED)
    build_validation_view(EXTRACTED)
    assert EXTRACTED == before


# ---------------------------------------------------------------------------
# rendering

RENDER_SCHEMA: dict[str, Any] = {
    "number": "fields.Number",
    "emails": "fields.Emails",
    "first_email": "fields.Emails[0]",
    "note": "fields.Note",
    "missing": "fields.Missing",
    "items": {
        "rows": 'tables."Line Items"',
        "descriptions": 'records."Line Items"[*].Description',
        "first": 'records."Line Items"[0]',
        "none": 'records."Line Items"[?Description == `"Gear"`].Amount',
    },
    "pair": ["fields.Number", 'records."t-unnamed"[*].A'],
}


def test_render_schema_output() -> None:
    compiled = compile_output_schema(RENDER_SCHEMA, CONFIGURATION)
    schema_output, _ = render(compiled, EXTRACTED)
    assert schema_output == {
        "number": "INV-1",
        "emails": ["a@x.org", "bad"],
        "first_email": "a@x.org",
        "note": [],
        "missing": [],
        "items": {
            "rows": [
                ["Bolt\nM8 x 40", "1.00"],
                ["Nut", ""],
                ["Widget", "$5.00", ""],
                ["", "", "extra"],
            ],
            "descriptions": ["Bolt\nM8 x 40", "Nut", "Widget", ""],
            "first": {"Description": "Bolt\nM8 x 40", "Amount": "1.00"},
            "none": [],
        },
        "pair": ["INV-1", ["a0", ""]],
    }
    json.dumps(schema_output)


def _same_shape(output: Any, mirror: Any) -> None:
    """Every string of output sits where mirror has a validation entry."""
    if isinstance(output, str):
        assert set(mirror) == {"confidence", "validation_messages", "validation_passed"}
    elif isinstance(output, list):
        assert isinstance(mirror, list) and len(mirror) == len(output)
        for a, b in zip(output, mirror, strict=True):
            _same_shape(a, b)
    else:
        assert isinstance(output, dict) and isinstance(mirror, dict)
        assert output.keys() == mirror.keys()
        for key in output:
            _same_shape(output[key], mirror[key])


def test_render_validation_mirrors_schema_output() -> None:
    compiled = compile_output_schema(RENDER_SCHEMA, CONFIGURATION)
    schema_output, validation = render(compiled, EXTRACTED)
    _same_shape(schema_output, validation)
    assert validation["emails"][1]["validation_messages"] == ["`bad` is wrong"]
    assert validation["note"] == []
    assert validation["items"]["rows"][0][0] == {
        "confidence": 0.7,
        "validation_messages": [],
        "validation_passed": True,
    }
    assert validation["pair"][1][1] == {
        "confidence": 1.0,
        "validation_messages": ["`` is empty"],
        "validation_passed": False,
    }
    # The last row has no description cell at all: nothing to fail.
    assert validation["items"]["descriptions"][3] == {
        "confidence": 0.7,
        "validation_messages": [],
        "validation_passed": True,
    }
    json.dumps(validation)


def test_render_shipped_schema_on_empty_data(invoices: dict[str, Any]) -> None:
    compiled = compile_output_schema(invoices["output_schema"], invoices)
    data = {"used_extraction_configuration": invoices, "extracted_targets": []}
    schema_output, validation = render(compiled, data)
    assert schema_output == validation
    assert schema_output["invoice"] == {"number": [], "date": [], "due": []}
    assert schema_output["line_items"] == []
    assert schema_output["descriptions"] == []


def test_render_runtime_type_errors_select_nothing() -> None:
    compiled = compile_output_schema({"n": "abs(fields.Number)"}, CONFIGURATION)
    assert render(compiled, EXTRACTED) == ({"n": []}, {"n": []})
