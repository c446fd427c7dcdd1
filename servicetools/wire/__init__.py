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
===============  ======================================================================

Only the standard library and ``jsonschema`` (with its ``referencing``) are used, so
the thin client imports this without any extra.

>>> from servicetools import wire
>>> wire.validate({"extraction_id_list": ["e1"]}, "status_list_request")
>>> wire.validate_value("12,50 zł", {"name": "total", "rule_groups": [
...     {"name": "money", "rules": [{"type": "amount"}]}]})
(True, [])
>>> wire.parse_amount("12,50 zł")
Decimal('12.50')
"""

from . import content, objects, protocol, rules, values
from .content import sniff_content_type
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
    "schema",
    "sniff_content_type",
    "validate",
    "validate_value",
    "validator",
    "values",
]
