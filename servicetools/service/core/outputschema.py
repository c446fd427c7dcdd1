"""Output schemas (decision D11): loading, compiling, binding checks and rendering.

An output schema is a JSON object whose leaves are JMESPath expressions. They
are evaluated on a view of the extracted data with three roots: ``fields``,
``tables`` (rows of cell strings) and ``records`` (rows keyed by header name).
The ``validation`` output evaluates the same expressions on a mirror view in
which every value string is replaced by its confidence and validation result.

Example::

    schema = load_output_schema('{"number": "fields.\\"Invoice Number\\"",'
                                ' "items": "records.\\"Line Items\\"[*].Description"}')
    compiled = compile_output_schema(schema, configuration)  # raises OutputSchemaError
    schema_output, validation = render(compiled, extracted_data)
    # schema_output == {"number": "INV-1", "items": ["Widget", "Bolt"]}
    # validation["number"] == {"confidence": 0.93, "validation_messages": [],
    #                          "validation_passed": True}

    check('{"a": "fields.Nope"}', configuration)
    # ['Binding error at $.a: the configuration has no field named `Nope`']
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import jmespath
from jmespath import exceptions as jmespath_exceptions
from jmespath.parser import ParsedResult

from ...wire.rules import type_name

__all__ = [
    "BINDING_ERROR",
    "CompiledSchema",
    "INVALID_SCHEMA",
    "OutputSchemaError",
    "PARSING_ERROR",
    "build_validation_view",
    "build_view",
    "check",
    "compile_output_schema",
    "load_output_schema",
    "render",
]

INVALID_SCHEMA = "Invalid schema"
PARSING_ERROR = "Parsing error"
BINDING_ERROR = "Binding error"

_ROOTS = ("fields", "tables", "records")


class OutputSchemaError(ValueError):
    """An output schema problem: ``kind`` is "Invalid schema", "Parsing error" or "Binding error".

    ``path`` locates the problem in the schema (``$.invoice.number``, ``$.items[2]``);
    ``column`` is the 1-based column of a parse error in the expression, else None.
    """

    def __init__(self, kind: str, path: str, message: str, column: int | None = None) -> None:
        self.kind = kind
        self.path = path
        self.column = column
        self.message = message
        where = f" at {path}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{kind}{where}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduce passes only str(self) back to __init__.
        return (type(self), (self.kind, self.path, self.message, self.column))


# ---------------------------------------------------------------------------
# loading


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _child_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _invalid(message: str, path: str = "$") -> OutputSchemaError:
    return OutputSchemaError(INVALID_SCHEMA, path, message)


def _refuse_declaration(*_args: object) -> None:
    raise _invalid("DOCTYPE and ENTITY declarations are not allowed in an XML schema")


def _scan_xml(data: str | bytes) -> None:
    """Refuse DTDs before ElementTree sees the text, so no entity is ever expanded."""
    scanner = xml.parsers.expat.ParserCreate()
    scanner.StartDoctypeDeclHandler = _refuse_declaration
    scanner.EntityDeclHandler = _refuse_declaration
    try:
        scanner.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        raise _invalid(f"the schema is not valid XML: {exc}") from None


def _local_name(tag: object) -> str:
    name = str(tag)
    return name.rsplit("}", 1)[-1] if name.startswith("{") else name


def _xml_element(element: ET.Element, path: str) -> Any:
    children = list(element)
    text = (element.text or "").strip()
    if not children:
        return text
    if text or any((child.tail or "").strip() for child in children):
        raise _invalid("an element holds both text and child elements", path)
    groups: dict[str, list[ET.Element]] = {}
    for child in children:
        groups.setdefault(_local_name(child.tag), []).append(child)
    result: dict[str, Any] = {}
    for name, elements in groups.items():
        child_path = _child_path(path, name)
        if len(elements) == 1:
            result[name] = _xml_element(elements[0], child_path)
        else:
            result[name] = [
                _xml_element(e, _child_path(child_path, i)) for i, e in enumerate(elements)
            ]
    return result


def _load_xml(data: str | bytes) -> dict[str, Any]:
    _scan_xml(data)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise _invalid(f"the schema is not valid XML: {exc}") from None
    if not list(root):
        if (root.text or "").strip():
            raise _invalid("the XML root element holds text, not an object of child elements")
        return {}
    result = _xml_element(root, "$")
    assert isinstance(result, dict)
    return result


def load_output_schema(raw: Mapping[str, Any] | str | bytes) -> dict[str, Any]:
    """Turn an uploaded or stored schema into its JSON object.

    Accepts a mapping, JSON text, or XML text (anything starting with ``<``): XML
    element names become keys, text content becomes an expression, nested elements
    nested objects, and repeated sibling elements of one name an array. Raises
    :class:`OutputSchemaError` of kind "Invalid schema" for anything else.
    """
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, bytes | bytearray):
        data: str | bytes = bytes(raw)
        head = bytes(raw).lstrip(b" \t\r\n\xef\xbb\xbf")
        is_xml = head.startswith(b"<") or head.startswith((b"\xff\xfe<", b"\xfe\xff\x00<"))
    elif isinstance(raw, str):
        data = raw
        is_xml = raw.lstrip(" \t\r\n\ufeff").startswith("<")
    else:
        raise _invalid(f"the schema is {type_name(raw)}, not a JSON object")
    if is_xml:
        # An XML declaration must be the very first thing; uploads often have a
        # leading newline, which is harmless for the schema itself.
        if isinstance(data, str):
            data = data.lstrip(" \t\r\n\ufeff")
        elif not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            data = data.lstrip(b" \t\r\n")
        return _load_xml(data)
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise _invalid(f"the schema is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _invalid(f"the schema is {type_name(value)}, not a JSON object")
    return value


# ---------------------------------------------------------------------------
# the names a configuration offers


@dataclass(frozen=True)
class _Bindings:
    fields: frozenset[str]
    # table name -> header names usable as record keys
    tables: Mapping[str, frozenset[str]]


def _header_key(header: Mapping[str, Any], position: int) -> str:
    name = header.get("name")
    if isinstance(name, str) and name:
        return name
    return f"column_{position}"


def _target_key(target: Mapping[str, Any]) -> str:
    # D9: a target without a name is referred to by its id.
    name = target.get("name")
    if isinstance(name, str) and name:
        return name
    return str(target.get("id", ""))


def _headers(target: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(position, key) of each header, by position."""
    headers = target.get("header_schema")
    result: list[tuple[int, str]] = []
    if not isinstance(headers, list):
        return result
    for index, header in enumerate(headers):
        if not isinstance(header, Mapping):
            continue
        position = header.get("position")
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            position = index
        result.append((position, _header_key(header, position)))
    result.sort(key=lambda item: item[0])
    return result


def _targets(configuration: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    targets = (
        configuration.get("extraction_targets") if isinstance(configuration, Mapping) else None
    )
    if not isinstance(targets, list):
        return []
    return [t for t in targets if isinstance(t, Mapping)]


def _bindings(configuration: Mapping[str, Any]) -> _Bindings:
    fields: set[str] = set()
    tables: dict[str, frozenset[str]] = {}
    for target in _targets(configuration):
        if target.get("type") == "table":
            tables[_target_key(target)] = frozenset(key for _, key in _headers(target))
        else:
            fields.add(_target_key(target))
    return _Bindings(frozenset(fields), tables)


# ---------------------------------------------------------------------------
# binding check: a small abstract interpretation of the expression over the
# shape of the view. Shapes are tuples; anything not understood is _UNKNOWN,
# and nothing is reported below an unknown shape.

_Shape = tuple[str, ...]
_UNKNOWN: _Shape = ("unknown",)
_ROOT: _Shape = ("root",)
_COLUMN_KEY = re.compile(r"column_[0-9]+")


def _element(shape: _Shape) -> _Shape:
    """Shape of the items when a projection runs over `shape`."""
    if shape[0] == "record_list":
        return ("record", shape[1])
    return _UNKNOWN


def _as_list(shape: _Shape) -> _Shape:
    """Shape of a projection's result whose items have `shape`."""
    if shape[0] == "record":
        return ("record_list", shape[1])
    return _UNKNOWN


class _Binder:
    def __init__(self, bindings: _Bindings) -> None:
        self.bindings = bindings
        self.problems: list[str] = []

    def field(self, name: str, shape: _Shape) -> _Shape:
        kind = shape[0]
        b = self.bindings
        if kind == "root":
            if name in _ROOTS:
                return (name,)
            self.problems.append(f"refers to `{name}`, which is not fields, tables or records")
        elif kind == "fields":
            if name not in b.fields:
                self.problems.append(f"the configuration has no field named `{name}`")
        elif kind in ("tables", "records"):
            if name not in b.tables:
                self.problems.append(f"the configuration has no table named `{name}`")
            elif kind == "records":
                return ("record_list", name)
        elif kind == "record":
            table = shape[1]
            if name not in b.tables.get(table, frozenset()) and not _COLUMN_KEY.fullmatch(name):
                self.problems.append(f"the table `{table}` has no column named `{name}`")
        return _UNKNOWN

    def visit(self, node: Any, shape: _Shape) -> _Shape:
        if not isinstance(node, dict):
            return _UNKNOWN
        kind = node.get("type")
        children = node.get("children") or []
        if kind == "field":
            return self.field(str(node.get("value")), shape)
        if kind in ("subexpression", "index_expression"):
            for child in children:
                shape = self.visit(child, shape)
            return shape
        if kind in ("identity", "current"):
            return shape
        if kind == "index":
            return _element(shape)
        if kind == "slice":
            return shape if shape[0] == "record_list" else _UNKNOWN
        if kind == "pipe":
            left = self.visit(children[0], shape)
            return self.visit(children[1], left)
        if kind == "projection":
            left = self.visit(children[0], shape)
            return _as_list(self.visit(children[1], _element(left)))
        if kind == "value_projection":
            # `*` over an object: the only objects whose values we know are rows.
            self.visit(children[0], shape)
            self.visit(children[1], _UNKNOWN)
            return _UNKNOWN
        if kind == "filter_projection":
            left = self.visit(children[0], shape)
            item = _element(left)
            self.visit(children[2], item)
            return _as_list(self.visit(children[1], item))
        if kind == "flatten":
            inner = self.visit(children[0], shape)
            # Flattening a list of rows leaves the rows alone.
            return inner if inner[0] == "record_list" else _UNKNOWN
        if kind == "multi_select_dict":
            for pair in children:
                for child in pair.get("children") or []:
                    self.visit(child, shape)
            return _UNKNOWN
        if kind == "function_expression":
            return self.function(str(node.get("value")), children, shape)
        if kind == "expref":
            # Only reachable outside a function call; what it applies to is unknown.
            for child in children:
                self.visit(child, _UNKNOWN)
            return _UNKNOWN
        # comparator, and/or/not, multi_select_list, key_val_pair, literal ...
        results = [self.visit(child, shape) for child in children]
        if kind in ("or_expression", "and_expression") and len(set(results)) == 1:
            return results[0]
        return _UNKNOWN

    def function(self, name: str, args: list[Any], shape: _Shape) -> _Shape:
        arg_shapes: list[_Shape | None] = []
        for arg in args:
            is_ref = isinstance(arg, dict) and arg.get("type") == "expref"
            arg_shapes.append(None if is_ref else self.visit(arg, shape))
        # Expression references apply to the items of the list argument
        # (sort_by, max_by, min_by, map, group-like functions).
        lists = [s for s in arg_shapes if s is not None]
        item = _element(lists[0]) if lists else _UNKNOWN
        for arg, arg_shape in zip(args, arg_shapes, strict=True):
            if arg_shape is None:
                for child in arg.get("children") or []:
                    self.visit(child, item)
        first = lists[0] if lists else _UNKNOWN
        if name in ("sort_by", "reverse", "sort"):
            return first
        if name in ("max_by", "min_by"):
            return _element(first)
        return _UNKNOWN


def _binding_problems(parsed: Any, bindings: _Bindings) -> list[str]:
    binder = _Binder(bindings)
    try:
        binder.visit(parsed, _ROOT)
    except (IndexError, KeyError, TypeError, AttributeError, RecursionError):
        # An AST shape this walker does not know: not an error of the schema.
        pass
    return binder.problems


# ---------------------------------------------------------------------------
# compiling


@dataclass(frozen=True)
class CompiledSchema:
    """A schema whose expressions compiled and bound to a configuration.

    ``tree`` has the schema's shape with each leaf a compiled expression.
    """

    schema: dict[str, Any]
    tree: Any = field(repr=False)

    def expressions(self) -> Iterator[tuple[str, str]]:
        """(path, expression text) of every leaf, in schema order."""
        yield from _leaves(self.schema, "$")


def _leaves(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _leaves(value, _child_path(path, key if isinstance(key, str) else str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, _child_path(path, index))
    else:
        yield path, node


def _parse_error(exc: Exception, path: str) -> OutputSchemaError:
    if isinstance(exc, jmespath_exceptions.EmptyExpressionError):
        return OutputSchemaError(PARSING_ERROR, path, "the expression is empty")
    if isinstance(exc, jmespath_exceptions.LexerError):
        message = str(exc.message)
    elif isinstance(exc, jmespath_exceptions.IncompleteExpressionError):
        message = "the expression is incomplete"
    elif isinstance(exc, jmespath_exceptions.ParseError):
        message = str(exc.msg)
        token = exc.token_value
        if token is not None and str(token) not in message:
            message += f' (at "{token}")'
    else:
        message = str(exc) or type(exc).__name__
    position = getattr(exc, "lex_position", None)
    column = position + 1 if isinstance(position, int) else None
    return OutputSchemaError(PARSING_ERROR, path, message, column)


def _compile_node(
    node: Any, path: str, bindings: _Bindings, errors: list[OutputSchemaError], first_only: bool
) -> Any:
    if first_only and errors:
        return None
    if isinstance(node, Mapping):
        result: dict[str, Any] = {}
        for key, value in node.items():
            if not isinstance(key, str):
                errors.append(_invalid(f"the key {key!r} is not a string", path))
                continue
            result[key] = _compile_node(value, _child_path(path, key), bindings, errors, first_only)
        return result
    if isinstance(node, list):
        return [
            _compile_node(value, _child_path(path, i), bindings, errors, first_only)
            for i, value in enumerate(node)
        ]
    if not isinstance(node, str):
        errors.append(
            _invalid(f"a leaf must be a string holding an expression, not {type_name(node)}", path)
        )
        return None
    try:
        compiled = jmespath.compile(node)
    except (jmespath_exceptions.JMESPathError, ValueError, TypeError, RecursionError) as exc:
        errors.append(_parse_error(exc, path))
        return None
    for problem in _binding_problems(compiled.parsed, bindings):
        errors.append(OutputSchemaError(BINDING_ERROR, path, problem))
    return compiled


def _compile(
    raw: Mapping[str, Any] | str | bytes, configuration: Mapping[str, Any], first_only: bool
) -> tuple[dict[str, Any], Any, list[OutputSchemaError]]:
    schema = load_output_schema(raw)
    errors: list[OutputSchemaError] = []
    tree = _compile_node(schema, "$", _bindings(configuration), errors, first_only)
    return schema, tree, errors


def compile_output_schema(
    schema: Mapping[str, Any] | str | bytes, configuration: Mapping[str, Any]
) -> CompiledSchema:
    """Compile every expression of `schema` and bind it to `configuration`.

    Raises the first :class:`OutputSchemaError` found (Invalid schema, Parsing
    error or Binding error), walking the schema in order.
    """
    loaded, tree, errors = _compile(schema, configuration, first_only=True)
    if errors:
        raise errors[0]
    return CompiledSchema(loaded, tree)


def check(
    schema_raw: Mapping[str, Any] | str | bytes, configuration: Mapping[str, Any]
) -> list[str]:
    """All problems of a schema against a configuration, as readable strings; [] when fine."""
    try:
        _, _, errors = _compile(schema_raw, configuration, first_only=False)
    except OutputSchemaError as exc:
        return [str(exc)]
    return [str(e) for e in errors]


# ---------------------------------------------------------------------------
# the views


def _is_empty(text: str) -> bool:
    return text.strip() == ""


def _text(value: object) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _confidence(extracted: Mapping[str, Any]) -> float:
    value = extracted.get("confidence")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return 0.0


def _mirror(item: Mapping[str, Any] | None, confidence: float) -> dict[str, Any]:
    if item is None:
        # A cell the extraction did not produce: nothing to fail.
        return {"confidence": confidence, "validation_messages": [], "validation_passed": True}
    messages = item.get("validation_messages")
    messages = [str(m) for m in messages] if isinstance(messages, list) else []
    passed = item.get("validation_passed")
    return {
        "confidence": confidence,
        "validation_messages": messages,
        "validation_passed": passed if isinstance(passed, bool) else not messages,
    }


def _field_entry(
    target: Mapping[str, Any], extracted: Mapping[str, Any] | None, mirror: bool
) -> Any:
    values = extracted.get("extracted_values") if extracted is not None else None
    items = [v for v in values if isinstance(v, Mapping)] if isinstance(values, list) else []
    items = [v for v in items if not _is_empty(_text(v.get("extracted_field")))]
    if not items:
        return None
    confidence = _confidence(extracted) if extracted is not None else 0.0

    def one(item: Mapping[str, Any]) -> Any:
        return _mirror(item, confidence) if mirror else _text(item.get("extracted_field"))

    if target.get("is_multiple") is True:
        return [one(item) for item in items]
    return one(items[0])


def _cell_position(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _table_rows(
    target: Mapping[str, Any], extracted: Mapping[str, Any] | None, mirror: bool
) -> list[list[Any]]:
    values = extracted.get("extracted_values") if extracted is not None else None
    cells = [v for v in values if isinstance(v, Mapping)] if isinstance(values, list) else []
    confidence = _confidence(extracted) if extracted is not None else 0.0
    header_width = max((position + 1 for position, _ in _headers(target)), default=0)

    # table_id -> row -> column -> cell, keeping the order of first appearance.
    tables: dict[str, dict[int, dict[int, Mapping[str, Any]]]] = {}
    for cell in cells:
        row_at, column_at = _cell_position(cell.get("row")), _cell_position(cell.get("column"))
        if row_at is None or column_at is None:
            continue
        table = tables.setdefault(_text(cell.get("table_id")), {})
        table.setdefault(row_at, {}).setdefault(column_at, cell)

    rows: list[list[Any]] = []
    for table in tables.values():
        width = max(
            [header_width] + [max(r) + 1 for r in table.values() if r],
        )
        for row_number in sorted(table):
            by_column = table[row_number]
            row: list[Any] = []
            for column in range(width):
                found = by_column.get(column)
                if mirror:
                    row.append(_mirror(found, confidence))
                else:
                    row.append(_text(found.get("extracted_cell")) if found is not None else "")
            rows.append(row)
    return rows


def _records(target: Mapping[str, Any], rows: list[list[Any]]) -> list[dict[str, Any]]:
    keys = dict(_headers(target))
    return [
        {keys.get(position, f"column_{position}"): value for position, value in enumerate(row)}
        for row in rows
    ]


def _build(extracted_data: Mapping[str, Any], mirror: bool) -> dict[str, Any]:
    configuration = extracted_data.get("used_extraction_configuration")
    targets = _targets(configuration) if isinstance(configuration, Mapping) else []
    raw_extracted = extracted_data.get("extracted_targets")
    extracted_by_target: dict[str, Mapping[str, Any]] = {}
    if isinstance(raw_extracted, list):
        for extracted in raw_extracted:
            if isinstance(extracted, Mapping):
                key = _text(extracted.get("used_extraction_target_id"))
                extracted_by_target.setdefault(key, extracted)

    view: dict[str, dict[str, Any]] = {"fields": {}, "tables": {}, "records": {}}
    for target in targets:
        extracted = extracted_by_target.get(_text(target.get("id")))
        name = _target_key(target)
        if target.get("type") == "table":
            rows = _table_rows(target, extracted, mirror)
            view["tables"][name] = rows
            view["records"][name] = _records(target, rows)
        else:
            view["fields"][name] = _field_entry(target, extracted, mirror)
    return view


def build_view(extracted_data: Mapping[str, Any]) -> dict[str, Any]:
    """The view output-schema expressions run on (D11): ``fields``, ``tables``, ``records``.

    Names come from ``used_extraction_configuration``; a field with no value or
    only empty values is None.
    """
    return _build(extracted_data, mirror=False)


def build_validation_view(extracted_data: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`build_view` with every value string replaced by
    ``{"confidence", "validation_messages", "validation_passed"}``.
    """
    return _build(extracted_data, mirror=True)


# ---------------------------------------------------------------------------
# rendering


def _evaluate(node: Any, view: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        return {key: _evaluate(value, view) for key, value in node.items()}
    if isinstance(node, list):
        return [_evaluate(value, view) for value in node]
    if not isinstance(node, ParsedResult):
        return []
    try:
        result = node.search(view)
    except (jmespath_exceptions.JMESPathError, ValueError, TypeError, RecursionError):
        # A runtime type error (e.g. sort_by over mixed values) selects nothing.
        return []
    return [] if result is None else result


def render(
    compiled: CompiledSchema, extracted_data: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Render ``(schema_output, validation)`` for one extracted data object.

    A null result renders as ``[]``. Plain selections give ``validation`` the
    shape of ``schema_output``; expressions that compute on the strings (filters,
    functions) may not mirror exactly.
    """
    schema_output = _evaluate(compiled.tree, build_view(extracted_data))
    validation = _evaluate(compiled.tree, build_validation_view(extracted_data))
    return schema_output, validation
