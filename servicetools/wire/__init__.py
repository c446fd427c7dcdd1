"""The wire: what both halves of servicetools share, and nothing else of ours.

The client, the analysis side and the reference service each import this package and
never each other (a test reads the imports), so whatever the two halves must agree on
lives here, once:

===============  ======================================================================
`objects`        JSON Schemas of every object and response; `validate`, `errors` ...
`protocol`       the API prefix, the auth header, status types, error codes, limits
`content`        what a document is, told by its bytes (`sniff_content_type`)
`values`         ONE parser per kind of value: `parse_number`, `parse_amount`,
                 `parse_date`
`rules`          the validation-rule language of D10: `validate_value`, `check_tree`
`saved_batch`    the saved-batch file (JSON lines): its name, version and line kinds;
                 `write` (behind `Batch.save`) and `read` (the client's and the frames')
===============  ======================================================================

Only the standard library and ``jsonschema`` (with its ``referencing``) are used, so
the thin client imports this without any extra. `objects` (and with it ``jsonschema``,
whose import parses a grammar for a second when ``rfc3987-syntax`` is installed, as
Jupyter installs it) is imported on first use: the engine's workers never need it.

>>> from servicetools import wire
>>> wire.validate({"extraction_id_list": ["e1"]}, "status_list_request")
>>> wire.validate_value("12,50 zł", {"name": "total", "rule_groups": [
...     {"name": "money", "rules": [{"type": "amount"}]}]})
(True, [])
>>> wire.parse_amount("12,50 zł")
Decimal('12.50')
"""

import typing as _typing
from importlib import import_module as _import_module

from . import content, protocol, rules, saved_batch, values
from .content import sniff_content_type

if _typing.TYPE_CHECKING:  # imported on first use, below
    from . import objects
    from .objects import (
        FORMAT_CHECKER,
        MAX_PROBLEMS,
        SCHEMA_NAMES,
        WireError,
        bundled,
        errors,
        is_valid,
        schema,
        validate,
        validator,
    )
from .protocol import (
    API_PREFIX,
    AUTH_HEADER,
    CONTENT_TYPES,
    FINAL_STATUSES,
    INPUT_TYPES,
    MAX_STATUS_IDS,
    STATUS_TYPES,
    TARGET_TYPES,
    TRIGGER_TYPES,
    ErrorCode,
    StatusType,
)
from .rules import RULE_TYPES, check_tree, validate_value
from .values import parse_amount, parse_date, parse_number

_OBJECTS = frozenset({"FORMAT_CHECKER", "MAX_PROBLEMS", "SCHEMA_NAMES", "WireError", "bundled",
                      "errors", "is_valid", "schema", "validate", "validator"})


def __getattr__(name: str) -> _typing.Any:
    """`objects` and its names, imported on first use and kept (PEP 562)."""
    if name != "objects" and name not in _OBJECTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    objects = _import_module(".objects", __name__)
    value = objects if name == "objects" else getattr(objects, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

__all__ = [
    "API_PREFIX",
    "AUTH_HEADER",
    "CONTENT_TYPES",
    "ErrorCode",
    "FINAL_STATUSES",
    "FORMAT_CHECKER",
    "INPUT_TYPES",
    "MAX_PROBLEMS",
    "MAX_STATUS_IDS",
    "RULE_TYPES",
    "SCHEMA_NAMES",
    "STATUS_TYPES",
    "StatusType",
    "TARGET_TYPES",
    "TRIGGER_TYPES",
    "WireError",
    "bundled",
    "check_tree",
    "content",
    "errors",
    "is_valid",
    "objects",
    "parse_amount",
    "parse_date",
    "parse_number",
    "protocol",
    "rules",
    "saved_batch",
    "schema",
    "sniff_content_type",
    "validate",
    "validate_value",
    "validator",
    "values",
]
