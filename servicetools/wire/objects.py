"""The interface's objects as JSON Schemas (draft 2020-12), and checking objects with them.

One schema file per object of the interface (``schemas/<name>.json``, ``$id``
``https://servicetools.local/wire/<name>.json``); files refer to each other by relative
``$ref`` (``"extracted_target.json"``), resolved through a :mod:`referencing` registry.
Both sides use them: the local service checks request bodies and its own responses, the
client checks what a (possibly remote) service answers.

Openness follows the decisions file:

- Request bodies (``trigger_request``, ``status_list_request``, ``update_request``,
  ``update_object``) are closed, because D4 makes an unknown field a 400.
- Response objects are open: a remote service may add fields and the client keeps them.
  Their specified fields are still required and typed exactly.
- The local service's own files (``configuration``, ``classifier``) are closed at the top
  level, so that a misspelt key stops the start instead of being ignored (D9).

API:

- :data:`SCHEMA_NAMES`, :func:`schema` (deep copy of one schema, with its ``$ref`` s),
  :func:`bundled` (the same schema with every reference to another wire schema inlined,
  for embedding into an OpenAPI document).
- :func:`validator` (cached :class:`jsonschema.Draft202012Validator` with the registry and
  format checking), :func:`validate` (raises :class:`WireError`), :func:`errors` (all
  problems as ``"path: message"``), :func:`is_valid`.

Only the standard library, ``jsonschema`` and ``referencing`` are used.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

__all__ = [
    "FORMAT_CHECKER",
    "MAX_PROBLEMS",
    "SCHEMA_NAMES",
    "WireError",
    "bundled",
    "errors",
    "is_valid",
    "schema",
    "validate",
    "validator",
]

SCHEMA_NAMES: tuple[str, ...] = (
    "classifier",
    "configuration",
    "error",
    "extracted_data",
    "extracted_target",
    "extraction_info",
    "extraction_target",
    "field_value",
    "header_column",
    "schema_output_response",
    "status",
    "status_list_request",
    "status_list_response",
    "table_cell",
    "targets_list",
    "trigger_request",
    "update_object",
    "update_request",
    "validation_tree",
    "vault_document",
    "vault_list",
    "vault_list_entry",
)


_BASE_URI = "https://servicetools.local/wire/"
# Keywords whose values are data, not subschemas: bundling must not rewrite a "$ref" key
# that happens to appear inside an example or an enum.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})

_short_repr = reprlib.Repr()
_short_repr.maxstring = 60
_short_repr.maxother = 60
_short_repr.maxlist = 4
_short_repr.maxdict = 4
_short_repr.maxlevel = 2


class WireError(ValueError):
    """An object does not match its wire schema.

    ``str(err)`` names the schema, the JSON path and the problem of the most relevant error;
    ``errors`` holds every problem as ``"path: message"``.
    """

    def __init__(self, schema_name: str, path: str, reason: str, errors: Sequence[str]) -> None:
        super().__init__(f"invalid {schema_name} at {path}: {reason}")
        self.schema_name = schema_name
        self.path = path
        self.reason = reason
        self.errors: list[str] = list(errors)

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduce would call __init__ with the formatted message only.
        return (type(self), (self.schema_name, self.path, self.reason, self.errors))


def _uri(name: str) -> str:
    return f"{_BASE_URI}{name}.json"


def _check_name(name: str) -> None:
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown wire schema {name!r}; known: {', '.join(SCHEMA_NAMES)}")


@functools.cache
def _contents() -> dict[str, dict[str, Any]]:
    # importlib.resources rather than a path next to __file__: works from a wheel or zip.
    folder = resources.files(__package__ or "servicetools.wire") / "schemas"
    loaded: dict[str, dict[str, Any]] = {}
    for name in SCHEMA_NAMES:
        doc = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("$id") != _uri(name):
            raise RuntimeError(f"wire schema file {name}.json must have $id {_uri(name)!r}")
        loaded[name] = doc
    return loaded


@functools.cache
def _registry() -> Registry[Any]:
    return Registry().with_resources(
        (_uri(name), DRAFT202012.create_resource(doc)) for name, doc in _contents().items()
    )


def schema(name: str) -> dict[str, Any]:
    """Return a deep copy of the schema ``name`` (with its relative ``$ref`` s)."""
    _check_name(name)
    return copy.deepcopy(_contents()[name])


#: JSON Schema's formats, and "python-regex": rule patterns are Python regular
#: expressions ("(?i)..."), which JSON Schema's "regex" (ECMA-262) would misjudge; a
#: checker that does not know the format ignores it, as the specification says.
FORMAT_CHECKER = copy.deepcopy(Draft202012Validator.FORMAT_CHECKER)


@FORMAT_CHECKER.checks("python-regex", raises=re.error)
def _python_regex(value: object) -> bool:
    if isinstance(value, str):
        re.compile(value)
    return True


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """Return the cached validator of ``name``; treat its ``schema`` as read-only."""
    _check_name(name)
    return Draft202012Validator(
        _contents()[name],
        registry=_registry(),
        format_checker=FORMAT_CHECKER,
    )


def _plain(obj: Any) -> Any:
    # JSON Schema's "object" is a dict to jsonschema; a read-only mapping over one (the
    # client's Result) is checked as the dict it shows.
    return dict(obj) if isinstance(obj, Mapping) and not isinstance(obj, dict) else obj


def is_valid(obj: Any, name: str) -> bool:
    """Whether ``obj`` matches the schema ``name``."""
    return validator(name).is_valid(_plain(obj))


#: At most this many problems are collected from one object: a body of a million bad
#: values would otherwise cost minutes and gigabytes to describe, and its answer would
#: be many times its size. The first ones say what is wrong.
MAX_PROBLEMS = 50


def _problems(obj: Any, name: str) -> list[ValidationError]:
    return sorted(itertools.islice(validator(name).iter_errors(_plain(obj)), MAX_PROBLEMS),
                  key=_sort_key)


def errors(obj: Any, name: str) -> list[str]:
    """The problems of ``obj`` against ``name`` as ``"path: message"``, sorted by path
    (the first `MAX_PROBLEMS` found)."""
    return [f"{error.json_path}: {_message(name, error)}" for error in _problems(obj, name)]


def validate(obj: Any, name: str) -> None:
    """Raise :class:`WireError` unless ``obj`` matches the schema ``name``."""
    found = _problems(obj, name)
    if not found:
        return
    best = best_match(found)
    assert best is not None  # found is not empty
    # best_match descends into "one of these fields is required" alternatives and would
    # name only the first field; the combined message of the parent is clearer.
    if best.parent is not None and _required_alternatives(best.parent) is not None:
        best = best.parent
    raise WireError(
        name,
        best.json_path,
        _message(name, best),
        [f"{error.json_path}: {_message(name, error)}" for error in found],
    )


def bundled(name: str, *, ref_root: str = "#") -> dict[str, Any]:
    """Return schema ``name`` with every reference to another wire schema inlined.

    The result has no ``$id``, no ``$schema`` and no external reference, so it can stand
    alone or be embedded elsewhere. Recursive parts (the ``validation`` tree of
    ``schema_output_response``) cannot be inlined; they are kept in the result's ``$defs``
    and referred to as ``{ref_root}/$defs/...``. When embedding the result at
    ``#/components/schemas/X`` of an OpenAPI document, pass
    ``ref_root="#/components/schemas/X"`` so those references still resolve.
    """
    _check_name(name)
    docs = _contents()
    defs: dict[str, Any] = {}

    def def_key(doc: str, def_name: str) -> str:
        return def_name if doc == name else f"{doc}.{def_name}"

    def resolve(doc: str, reference: str, stack: tuple[str, ...]) -> Any:
        target, _, fragment = reference.partition("#")
        if target:
            if not target.endswith(".json") or target[: -len(".json")] not in docs:
                raise ValueError(f"{doc}: cannot bundle reference {reference!r}")
            target = target[: -len(".json")]
        else:
            target = doc
        if not fragment:
            if target in stack:
                raise ValueError(f"{doc}: circular reference to {target}.json")
            return inline(target, docs[target], (*stack, target))
        parts = fragment.split("/")
        if (
            len(parts) != 3
            or parts[:2] != ["", "$defs"]
            or parts[2] not in docs[target].get("$defs", {})
        ):
            raise ValueError(f"{doc}: cannot bundle reference {reference!r}")
        key = def_key(target, parts[2])
        if key not in defs:
            defs[key] = None  # placeholder: a definition may refer to itself
            defs[key] = inline(target, docs[target]["$defs"][parts[2]], (target,))
        return {"$ref": f"{ref_root}/$defs/{key}"}

    def inline(doc: str, node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(doc, item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$id", "$schema", "$defs", "$ref"):
                continue  # $defs are hoisted on demand by resolve()
            out[key] = value if key in _DATA_KEYWORDS else inline(doc, value, stack)
        if "$ref" not in node:
            return out
        target = resolve(doc, node["$ref"], stack)
        if not out:
            return target
        out["allOf"] = [*out.get("allOf", []), target]
        return out

    result: dict[str, Any] = inline(name, docs[name], (name,))
    if defs:
        result["$defs"] = defs
    return result


def _sort_key(error: ValidationError) -> tuple[tuple[tuple[int, int | str], ...], str]:
    path = tuple((0, part) if isinstance(part, int) else (1, str(part)) for part in error.path)
    return path, error.message


def _required_alternatives(error: ValidationError) -> list[str] | None:
    """Fields of a oneOf/anyOf whose branches are each one plain ``required``."""
    if error.validator not in ("oneOf", "anyOf") or not isinstance(error.validator_value, list):
        return None
    fields: list[str] = []
    for branch in error.validator_value:
        if not isinstance(branch, dict) or set(branch) != {"required"}:
            return None
        if len(branch["required"]) != 1:
            return None
        fields.append(branch["required"][0])
    return fields


def _message(name: str, error: ValidationError) -> str:
    """A readable message: no megabyte reprs of documents, and the if/then conditions."""
    instance = error.instance
    value = error.validator_value
    alternatives = _required_alternatives(error)
    if alternatives is not None:
        listed = ", ".join(repr(field) for field in alternatives)
        given = [
            field for field in alternatives if isinstance(instance, dict) and field in instance
        ]
        if len(given) > 1 and error.validator == "oneOf":
            text = f"only one of {listed} may be given"
        else:
            text = f"one of {listed} is required"
    elif error.validator == "not" and value == {}:
        text = f"{error.path[-1]!r} is not allowed" if error.path else "not allowed"
    elif error.validator in ("minItems", "maxItems") and isinstance(instance, list):
        bound = "at least {} required" if error.validator == "minItems" else "at most {} allowed"
        text = f"has {len(instance)} items, {bound.format(value)}"
    elif error.validator in ("minLength", "maxLength") and isinstance(instance, str):
        # jsonschema quotes the whole string; the length and the limit say more.
        bound = "at least {} required" if error.validator == "minLength" else "at most {} allowed"
        text = f"has {len(instance):,} characters, {bound.format(f'{value:,}')}"
    else:
        text = error.message
        full = repr(instance)
        if len(full) > 80 and text.startswith(full):
            text = _short_repr.repr(instance) + text[len(full) :]
        if error.validator in ("oneOf", "anyOf") and error.context:
            # The branch that got deepest into the instance is the one the author meant;
            # best_match prefers shallow errors such as "is not of type 'array'".
            closest = max(_leaf_errors(error.context), key=lambda leaf: len(leaf.absolute_path))
            text += f"; closest: {closest.json_path}: {_message(name, closest)}"
    conditions = _conditions(name, error.absolute_schema_path)
    if conditions:
        text += f" (when {' and '.join(conditions)})"
    return text


def _leaf_errors(found: Iterable[ValidationError]) -> list[ValidationError]:
    leaves: list[ValidationError] = []
    for error in found:
        leaves.extend(_leaf_errors(error.context) if error.context else [error])
    return leaves


def _conditions(name: str, schema_path: Iterable[Any]) -> list[str]:
    """The ``if`` conditions of the ``then`` branches an error lies in, as text."""
    resolver = _registry().resolver(base_uri=_uri(name))
    node: Any = _contents()[name]
    found: list[str] = []
    for key in schema_path:
        # jsonschema leaves "$ref" out of schema paths, so follow references implicitly.
        while isinstance(node, dict) and key not in node and "$ref" in node:
            resolved = resolver.lookup(node["$ref"])
            node, resolver = resolved.contents, resolved.resolver
        if key == "then" and isinstance(node, dict):
            found.extend(_describe_if(node.get("if")))
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
    return found


def _describe_if(condition: Any) -> list[str]:
    if not isinstance(condition, dict) or not isinstance(condition.get("properties"), dict):
        return []
    return [
        f"{field} is {sub['const']!r}"
        for field, sub in condition["properties"].items()
        if isinstance(sub, dict) and "const" in sub
    ]
