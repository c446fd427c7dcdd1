"""The pages in docs/ against the code they describe, so neither can drift silently.

In the spirit of sqlite-utils' docs tests: each check reads a table (or a list) out
of the Markdown and compares it with the code, in both directions where that makes
sense, so that an error code, status, route, wire field, limit or rule type cannot
be added, renamed or removed without the docs following, and the docs cannot describe
one that is gone.

The tables are found by the heading above them and by their header row; the pages
keep those stable on purpose. Cells name things in code spans (`like_this`).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import requests

import servicetools
from servicetools import wire
from servicetools.client import Client, LocalService, VaultAPI
from servicetools.client.errors import error_from_response
from servicetools.extras import MissingExtra
from servicetools.wire.protocol import (
    API_PREFIX,
    FINAL_STATUSES,
    MAX_STATUS_IDS,
    ErrorCode,
    StatusType,
)
from servicetools.wire.rules import RULE_TYPES, check_tree, validate_value
from servicetools.wire.values import parse_amount, parse_date, parse_number

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
INTERFACE = DOCS / "interface.md"
DECISIONS = DOCS / "decisions.md"
CONFIGURATIONS = DOCS / "configurations.md"
FRAMES = DOCS / "frames.md"
README = ROOT / "README.md"
#: How the pages write "not read" in example tables.
NOT_READ = "—"

_MIB = 1024 * 1024
_HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


# -- reading Markdown ----------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    heading: str  # the nearest heading above the table, as written (without the #s)
    header: list[str]  # header cells, lowercased
    rows: list[list[str]]  # body rows; cells stripped, "\|" unescaped

    def column(self, name: str) -> int:
        for i, cell in enumerate(self.header):
            if name in cell:
                return i
        raise AssertionError(f"table under {self.heading!r} has no column {name!r}: {self.header}")


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_DELIMITER_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def fenced_blocks(text: str, language: str) -> list[str]:
    """The contents of the fenced code blocks of ``language`` (```json, ```python ...)."""
    pattern = re.compile(rf"^```{language}[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
    return pattern.findall(text)


def code_spans(cell: str) -> list[str]:
    """The contents of the code spans in ``cell``, as GitHub renders them."""
    spans = []
    for match in _CODE_SPAN.finditer(cell):
        content = match.group(2).replace("\n", " ")
        # CommonMark strips one space from both ends when both ends have one, so that
        # `` `x` `` can hold backticks; a lone leading space is part of the content.
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        spans.append(content)
    return spans


def code(cell: str) -> str:
    spans = code_spans(cell)
    assert spans, f"expected a code span in the table cell {cell!r}"
    return spans[0]


def split_row(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    # GitHub splits cells at every unescaped pipe, code spans included; so do we.
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def tables(text: str) -> list[Table]:
    found: list[Table] = []
    heading = ""
    block: list[str] = []

    def close() -> None:
        if len(block) >= 2 and _DELIMITER_ROW.match(block[1]):
            header = [cell.lower() for cell in split_row(block[0])]
            found.append(Table(heading, header, [split_row(row) for row in block[2:]]))
        block.clear()

    for _, line in prose_lines(text):
        match = _HEADING.match(line)
        if match:
            close()
            heading = match.group(2)
        elif line.lstrip().startswith("|"):
            block.append(line)
        else:
            close()
    close()
    return found


def table(text: str, heading: str, first_column: str | None = None) -> Table:
    """The one table under ``heading`` (whose first header cell is ``first_column``)."""
    matches = [t for t in tables(text) if t.heading == heading
               and (first_column is None or t.header[0] == first_column)]
    assert len(matches) == 1, f"expected one table under the heading {heading!r}"
    return matches[0]


def headings(text: str) -> list[str]:
    return [m.group(2) for _, line in prose_lines(text) if (m := _HEADING.match(line))]


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes for the headings of a page."""
    seen: dict[str, int] = {}
    result = set()
    for title in headings(text):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def sections(text: str) -> list[str]:
    """The page cut at every heading of level 1 to 3 (each piece starts with its heading)."""
    pieces: list[list[str]] = [[]]
    for _, line in prose_lines(text):
        match = _HEADING.match(line)
        if match and len(match.group(1)) <= 3:
            pieces.append([])
        pieces[-1].append(line)
    return ["\n".join(piece) for piece in pieces]


def normal_path(path: str) -> str:
    # Path parameters may be named differently in the docs and the routes.
    return re.sub(r"\{[^}]*\}", "{}", path)


# -- the service, built without starting it ------------------------------------------------
@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        from servicetools.service.app import create_app
        from servicetools.service.settings import Settings
    except MissingExtra as exc:  # the thin install has no service to compare with
        pytest.skip(str(exc))
    built = create_app(Settings(data_dir=tmp_path_factory.mktemp("service"), workers=1))
    yield built
    # No worker was ever started (the lifespan did not run); close the pool all the same.
    built.state.parts.pipeline.shutdown()


def registered_routes(app: Any) -> set[tuple[str, str]]:
    """(METHOD, path) of every API route the app registers."""
    try:
        # FastAPI versions that keep included routers as objects of their own.
        from fastapi.routing import iter_route_contexts

        routes = [(rc.path, rc.methods) for rc in iter_route_contexts(app.routes)]
    except ImportError:
        routes = [(getattr(r, "path", None), getattr(r, "methods", None)) for r in app.routes]
    found = set()
    for path, methods in routes:
        if isinstance(path, str) and path.startswith(API_PREFIX + "/"):
            found |= {(m, path) for m in methods or () if m in _HTTP_METHODS}
    # However the routes were walked, the OpenAPI document must not know of more of them.
    documented = {(method.upper(), path) for path, ops in app.openapi()["paths"].items()
                  for method in ops if method.upper() in _HTTP_METHODS}
    assert documented <= found, f"routes not found by walking the app: {documented - found}"
    return found


# -- interface.md: errors ------------------------------------------------------------------
def error_rows() -> dict[str, tuple[set[int], list[str]]]:
    errors = table(_read(INTERFACE), "Error codes", "code")
    code_col, status_col = errors.column("code"), errors.column("status")
    rows: dict[str, tuple[set[int], list[str]]] = {}
    for row in errors.rows:
        name = code(row[code_col])
        assert name not in rows, f"{name} is listed twice"
        rows[name] = ({int(s) for s in re.findall(r"\b[1-5][0-9]{2}\b", row[status_col])}, row)
    return rows


def test_error_table_lists_every_code_with_its_status() -> None:
    rows = error_rows()
    codes = {c.value for c in ErrorCode}
    assert not codes - rows.keys(), f"error codes missing from the table: {codes - rows.keys()}"
    assert not rows.keys() - codes, f"the table lists unknown codes: {rows.keys() - codes}"
    for error in ErrorCode:
        statuses, _ = rows[error]
        # The one code with two statuses: 409 on result queries, 422 on a sync trigger.
        wanted = {409, error.status} if error is ErrorCode.EXTRACTION_FAILED else {error.status}
        assert statuses == wanted, f"{error}: the table says {statuses}, the code {wanted}"


def test_error_table_names_the_exception_the_client_raises() -> None:
    errors = table(_read(INTERFACE), "Error codes", "code")
    client_col = errors.column("client")
    for name, (statuses, row) in error_rows().items():
        for status in statuses:
            response = requests.Response()
            response.status_code = status
            response._content = json.dumps(
                {"error": {"code": name, "message": "m", "details": {}}}).encode()
            raised = type(error_from_response(response)).__name__
            assert raised == code(row[client_col]), f"{name} ({status}) raises {raised}"


# -- interface.md: statuses ----------------------------------------------------------------
def test_statuses_are_listed_in_pipeline_order() -> None:
    pipeline = table(_read(INTERFACE), "Status pipeline")
    status_col, final_col = pipeline.column("status"), pipeline.column("final")
    listed = [code(row[status_col]) for row in pipeline.rows]
    assert listed == [s.value for s in StatusType]
    final = {code(row[status_col]) for row in pipeline.rows if row[final_col].strip()}
    assert final == set(FINAL_STATUSES)


# -- interface.md: routes ------------------------------------------------------------------
def test_every_route_is_in_the_endpoint_table(app: Any) -> None:
    endpoints = table(_read(INTERFACE), "Endpoints", "method")
    method_col, path_col = endpoints.column("method"), endpoints.column("path")
    listed = [(row[method_col].strip().upper(), normal_path(code(row[path_col])))
              for row in endpoints.rows]
    assert len(listed) == len(set(listed)), "an endpoint is listed twice"
    routes = {(method, normal_path(path)) for method, path in registered_routes(app)}
    assert not routes - set(listed), f"routes missing from the docs: {routes - set(listed)}"
    gone = set(listed) - routes
    assert not gone, f"the docs list routes that do not exist: {gone}"


def endpoint_sections(text: str) -> dict[tuple[str, str], str]:
    """(METHOD, path) -> the section that describes it (its line "`POST /service/api/...`")."""
    found = {}
    for section in sections(text):
        for line in section.splitlines():
            spans = code_spans(line)
            if len(spans) == 1 and line.strip() == f"`{spans[0]}`":
                method, _, path = spans[0].partition(" ")
                if method in _HTTP_METHODS and path.startswith(API_PREFIX):
                    found[(method, normal_path(path))] = section
    return found


def test_every_route_has_a_section_naming_its_error_statuses(app: Any) -> None:
    described = endpoint_sections(_read(INTERFACE))
    for path, ops in app.openapi()["paths"].items():
        for method, op in ops.items():
            key = (method.upper(), normal_path(path))
            assert key in described, f"no section for {key}"
            for status in op["responses"]:
                if status[0] in "45":
                    assert re.search(rf"\b{status}\b", described[key]), (
                        f"the section of {key} does not name the status {status}")


# -- objects: the wire schemas -------------------------------------------------------------
def schema_properties(schema: dict[str, Any]) -> set[str]:
    props = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        # Fields of one kind only (a table target's header_schema) live in if/then parts.
        props |= set(part.get("then", {}).get("properties", {}))
    return props


def test_every_wire_object_lists_the_fields_of_its_schema() -> None:
    described: dict[str, Table] = {}
    for page in (INTERFACE, CONFIGURATIONS):
        for found in tables(_read(page)):
            named = re.search(r"\(`(\w+)`\)$", found.heading)
            if named and named.group(1) in wire.SCHEMA_NAMES:
                assert named.group(1) not in described, f"{named.group(1)} is described twice"
                described[named.group(1)] = found
    missing = set(wire.SCHEMA_NAMES) - described.keys()
    assert not missing, f"wire objects without a section: {missing}"
    for name, found in described.items():
        field_col = found.column("field")
        # "error.code" documents a part of "error"; only top-level names are compared.
        fields = {code(row[field_col]) for row in found.rows}
        top = {f for f in fields if "." not in f}
        schema = wire.schema(name)
        props = schema_properties(schema)
        assert props <= top, f"{name}: fields missing from the docs: {props - top}"
        if schema.get("additionalProperties") is False:
            # A closed object refuses anything else, so the docs may not offer more.
            assert top == props, f"{name}: the docs list fields it refuses: {top - props}"


# -- interface.md: limits ------------------------------------------------------------------
def parse_quantity(text: str) -> float:
    match = re.match(r"\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(MiB)?", text)
    assert match, f"no quantity in {text!r}"
    value = float(match.group(1).replace(",", ""))
    return value * _MIB if match.group(2) else value


def test_limits_are_the_defaults_of_the_settings(tmp_path: Path) -> None:
    try:
        from servicetools.service.settings import Settings
    except MissingExtra as exc:
        pytest.skip(str(exc))
    limits = table(_read(INTERFACE), "Limits")
    setting_col, default_col = limits.column("setting"), limits.column("default")
    settings = Settings(data_dir=tmp_path)
    listed = set()
    for row in limits.rows:
        name = code(row[setting_col])
        listed.add(name)
        actual = MAX_STATUS_IDS if name == "MAX_STATUS_IDS" else getattr(settings, name)
        assert parse_quantity(row[default_col]) == actual, f"{name}: the docs say {row}"
    # A new limit in the settings must reach the table.
    limit_fields = {f.name for f in dataclasses.fields(Settings)
                    if f.name.startswith(("max_", "hosted_"))}
    assert limit_fields <= listed, f"limits missing from the docs: {limit_fields - listed}"


# -- configurations.md: validation rules ---------------------------------------------------
#: A valid value for every parameter any rule type has had; used to probe what is accepted.
_PARAMETER_SAMPLES: dict[str, Any] = {
    "pattern": "[0-9]+", "formats": ["%Y"], "min": 0, "max": 10, "decimals": 2,
    "values": ["a"], "case_sensitive": True, "name": "label", "description": "label",
}


def _tree(*rules: Any) -> dict[str, Any]:
    return {"name": "tree", "rule_groups": [{"name": "group", "rules": list(rules)}]}


def _refusals(rule: dict[str, Any]) -> list[str]:
    """What a configuration file's checks say about ``rule``: the wire schema, then D10's."""
    tree = _tree(rule)
    return wire.errors(tree, "validation_tree") + check_tree(tree)


def test_every_rule_type_is_described_with_the_parameters_a_file_accepts() -> None:
    rules = table(_read(CONFIGURATIONS), "Rule types", "type")
    params_col = rules.column("parameters")
    listed = {code(row[0]): set(code_spans(row[params_col])) for row in rules.rows}
    assert len(listed) == len(rules.rows), "a rule type is listed twice"
    assert set(listed) == set(RULE_TYPES)
    for kind, params in listed.items():
        unknown = params - _PARAMETER_SAMPLES.keys()
        assert not unknown, f"{kind}: add a sample value for {unknown} to this test"
        rule = {"type": kind, **{p: _PARAMETER_SAMPLES[p] for p in params}}
        assert _refusals(rule) == [], f"{kind}: a documented parameter is refused"
        for extra in _PARAMETER_SAMPLES.keys() - params:
            assert _refusals({**rule, extra: _PARAMETER_SAMPLES[extra]}), (
                f"{kind} rules accept `{extra}`, which the docs do not list")


def test_validation_message_examples() -> None:
    examples = table(_read(CONFIGURATIONS), "Messages", "rule")
    rule_col, value_col, message_col = (
        examples.column("rule"), examples.column("value"), examples.column("message"))
    assert examples.rows
    for row in examples.rows:
        rule, value = json.loads(code(row[rule_col])), code(row[value_col])
        expected = [] if "passes" in row[message_col] else [code(row[message_col])]
        assert validate_value(value, _tree(rule)) == (not expected, expected), row


# -- configurations.md: reading values -----------------------------------------------------
def _shown(value: Any) -> str | None:
    return None if value is None else str(value)


def test_number_and_amount_examples() -> None:
    examples = table(_read(CONFIGURATIONS), "Amounts", "text")
    number_col, amount_col = examples.column("number"), examples.column("amount")
    assert examples.rows
    for row in examples.rows:
        text = code(row[0])
        for parse, col in ((parse_number, number_col), (parse_amount, amount_col)):
            expected = None if row[col] == NOT_READ else row[col]
            assert _shown(parse(text)) == expected, f"{parse.__name__}({text!r}): {row}"


def test_date_examples() -> None:
    examples = table(_read(CONFIGURATIONS), "Dates", "text")
    formats_col, date_col = examples.column("formats"), examples.column("date")
    assert examples.rows
    for row in examples.rows:
        read = parse_date(code(row[0]), code_spans(row[formats_col]))
        expected = None if row[date_col] == NOT_READ else date.fromisoformat(row[date_col])
        assert (read.date() if read else None) == expected, row


# -- configurations.md: examples and output schemas ----------------------------------------
def test_configuration_and_classifier_examples_pass_the_checks() -> None:
    try:
        from servicetools.service.core.configs import check_configuration
    except MissingExtra as exc:
        pytest.skip(str(exc))
    kinds = {"configuration": 0, "classifier": 0}
    for block in fenced_blocks(_read(CONFIGURATIONS), "json"):
        try:
            example = json.loads(block)
        except ValueError:
            continue  # a fragment, such as one key of a file
        if isinstance(example, dict) and "extraction_targets" in example:
            kinds["configuration"] += 1
            assert check_configuration(example) == [], block
        elif isinstance(example, dict) and "classes" in example:
            kinds["classifier"] += 1
            assert wire.errors(example, "classifier") == [], block
    assert all(kinds.values()), f"expected a complete example of each kind: {kinds}"


def test_output_schema_error_kinds() -> None:
    try:
        from servicetools.service.core import outputschema
    except MissingExtra as exc:
        pytest.skip(str(exc))
    kinds = {code(row[0]) for row in table(_read(CONFIGURATIONS), "Errors", "error").rows}
    assert kinds == {outputschema.INVALID_SCHEMA, outputschema.PARSING_ERROR,
                     outputschema.BINDING_ERROR}


# -- frames.md -----------------------------------------------------------------------------
def _frames_of(name: str) -> list[Any]:
    """The frame ``name`` of the converters, from empty input and from recorded results."""
    convert = getattr(servicetools.frames, name)
    fixtures = ROOT / "tests" / "frames" / "fixtures"
    source = {"vault": "recorded_vault_list.json", "statuses": "recorded_status_history.json",
              "validation": "recorded_responses.json"}.get(name, "recorded_responses.json")
    return [convert([]), convert(json.loads(_read(fixtures / source)))]


def test_the_frames_page_gives_every_column_its_dtype() -> None:
    listed = table(_read(FRAMES), "Columns and dtypes", "column")
    column_col, dtype_col, frames_col = (
        listed.column("column"), listed.column("dtype"), listed.column("frames"))
    documented: dict[str, dict[str, str]] = {}
    for row in listed.rows:
        for frame_name in code_spans(row[frames_col]):
            columns = documented.setdefault(frame_name, {})
            name = code(row[column_col])
            assert name not in columns, f"{frame_name}.{name} is listed twice"
            columns[name] = code(row[dtype_col])
    assert set(documented) == {"fields", "cells", "targets", "extractions", "statuses",
                               "vault", "validation"}
    for frame_name, columns in documented.items():
        for frame in _frames_of(frame_name):
            real = {str(c): str(d) for c, d in frame.dtypes.items()}
            assert real == columns, f"{frame_name}: the page and the frame differ"
    # The rules name the ids as the package does.
    assert all(f"`{name}`" in _read(FRAMES) for name in servicetools.frames.ID_COLUMNS)


# -- decisions.md --------------------------------------------------------------------------
def test_every_decision_the_code_cites_has_a_section() -> None:
    numbers = [int(m.group(1)) for title in headings(_read(DECISIONS))
               if (m := re.match(r"D([0-9]+) ", title))]
    assert numbers == list(range(1, len(numbers) + 1)), "decisions out of order or missing"
    cited = set()
    package = ROOT / "servicetools"
    for path in [*package.rglob("*.py"), *package.rglob("*.json")]:
        if "bundled" not in path.relative_to(package).parts:  # data, not code
            cited |= {int(n) for n in re.findall(r"\bD([1-9][0-9]?)\b", _read(path))}
    assert cited, "no D-number found in the code: has the citation style changed?"
    assert cited <= set(numbers), f"decisions cited by the code without a section: {cited}"


# -- links and examples --------------------------------------------------------------------
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")


def relative_links(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in prose_lines(_read(path)):
        text = re.sub(r"`[^`]*`", "", line)  # a link inside a code span is no link
        targets = [m.group(1) for m in _LINK.finditer(text)]
        targets += [m.group(1) for m in [_REFERENCE.match(text)] if m]
        for target in targets:
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                yield number, target


def test_the_readme_points_at_files_a_clone_has() -> None:
    # It once sent readers to ../shared/spec, which lives outside the repository.
    assert "../" not in _read(README)
    assert [target for _, target in relative_links(README) if target.startswith("docs/")]


def pages() -> list[Path]:
    return [*sorted(DOCS.glob("*.md")), README]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_into_the_repository(page: Path) -> None:
    for number, target in relative_links(page):
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        assert linked.is_relative_to(ROOT), f"{where} leaves the repository"
        assert linked.exists(), f"{where} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(_read(linked)), f"{where}: no such heading"


def test_the_index_links_every_page() -> None:
    index = DOCS / "README.md"
    linked = {Path(target.partition("#")[0]).name for _, target in relative_links(index)}
    assert {p.name for p in DOCS.glob("*.md")} - {"README.md"} <= linked


#: What the examples call their objects, beyond what they import.
_EXAMPLE_NAMES: dict[str, Any] = {"st": servicetools, "client": Client, "svc": LocalService}


def _resolve(node: ast.expr, names: dict[str, Any]) -> tuple[Any, str] | None:
    """The object a dotted name stands for, and the name, when its root is known."""
    if isinstance(node, ast.Name):
        return (names[node.id], node.id) if node.id in names else None
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, names)
        if base is None:
            return None
        obj, dotted = base
        dotted = f"{dotted}.{node.attr}"
        if obj is Client and node.attr == "vault":  # an instance attribute, set in __init__
            return VaultAPI, dotted
        assert hasattr(obj, node.attr), f"the docs use {dotted}, which does not exist"
        value = getattr(obj, node.attr)
        # Only modules and classes are followed: past a call the type is unknown.
        return (value, dotted) if inspect.ismodule(value) or inspect.isclass(value) else None
    return None


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_python_examples_use_names_that_exist(page: Path) -> None:
    names = dict(_EXAMPLE_NAMES)
    for block in fenced_blocks(_read(page), "python"):
        tree = ast.parse(block)  # also: every example is valid Python
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    module = importlib.import_module(alias.name)
                    if alias.asname:
                        names[alias.asname] = module
                    else:  # "import a.b" binds "a"
                        top = alias.name.partition(".")[0]
                        names[top] = importlib.import_module(top)
            elif isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{node.module} has no {alias.name}"
                    names[alias.asname or alias.name] = getattr(module, alias.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                _resolve(node, names)
