"""Validation trees (decision D10): checking a tree and validating values with it.

A tree holds rule groups; a value passes when every group passes, and a group
passes when any of its rules passes (groups AND, rules OR). Each failed group
adds one message ``"`<value>` <condition>"``, so replacing the backticked part
with a placeholder groups failures by condition.

Example::

    >>> tree = {"name": "invoice date", "rule_groups": [
    ...     {"name": "format", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}]}
    >>> check_tree(tree)
    []
    >>> validate_value("2024-02-29", tree)
    (True, [])
    >>> validate_value("31.02.2024", tree)
    (False, ['`31.02.2024` is not a date in format %Y-%m-%d'])

Numbers, amounts and dates are read by `servicetools.wire.values`, the same parsers the
analysis side grades with. Only the standard library is used: this runs once per value
per extraction, and the engine asks `rule_passes` about every candidate word.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeGuard

from .values import parse_amount, parse_date, parse_numeral

__all__ = [
    "RULE_TYPES",
    "check_tree",
    "compiled_pattern",
    "rule_passes",
    "type_name",
    "validate_value",
]

RULE_TYPES: tuple[str, ...] = (
    "regex",
    "date",
    "number",
    "amount",
    "length",
    "one_of",
    "not_empty",
)

# Parameters each rule type understands; `name` and `description` are allowed
# everywhere because people like to label their rules.
_RULE_PARAMS: dict[str, frozenset[str]] = {
    "regex": frozenset({"pattern"}),
    "date": frozenset({"formats"}),
    "number": frozenset({"min", "max", "decimals"}),
    "amount": frozenset({"min", "max"}),
    "length": frozenset({"min", "max"}),
    "one_of": frozenset({"values", "case_sensitive"}),
    "not_empty": frozenset(),
}
_LABEL_KEYS = frozenset({"type", "name", "description"})


# ---------------------------------------------------------------------------
# rules


@functools.lru_cache(maxsize=2048)
def compiled_pattern(pattern: str) -> re.Pattern[str] | None:
    """The compiled regex of a ``regex`` rule (cached), or None when it does not compile."""
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def _is_number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _fmt(x: object) -> str:
    """Show a bound the way a person wrote it: 0 not 0.0, 1000000 not 1e+06."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return str(x)


def _bounds_ok(value: float | Decimal, rule: Mapping[str, Any]) -> bool:
    lo, hi = rule.get("min"), rule.get("max")
    if _is_number(lo) and value < lo:
        return False
    if _is_number(hi) and value > hi:
        return False
    return True


def _range_text(rule: Mapping[str, Any], unit: str = "") -> str:
    lo = rule.get("min") if _is_number(rule.get("min")) else None
    hi = rule.get("max") if _is_number(rule.get("max")) else None
    if lo is not None and hi is not None:
        return f" between {_fmt(lo)} and {_fmt(hi)}{unit}"
    if lo is not None:
        return f" of at least {_fmt(lo)}{unit}"
    if hi is not None:
        return f" of at most {_fmt(hi)}{unit}"
    return ""


def _check_regex(value: str, rule: Mapping[str, Any]) -> bool:
    pattern = rule.get("pattern")
    compiled = compiled_pattern(pattern) if isinstance(pattern, str) else None
    return compiled is not None and compiled.fullmatch(value) is not None


def _check_date(value: str, rule: Mapping[str, Any]) -> bool:
    return parse_date(value, _str_list(rule.get("formats"))) is not None


def _check_number(value: str, rule: Mapping[str, Any]) -> bool:
    parts = parse_numeral(value)
    if parts is None:
        return False
    number, decimals = parts
    max_decimals = rule.get("decimals")
    if isinstance(max_decimals, int) and not isinstance(max_decimals, bool):
        if decimals > max_decimals:
            return False
    return _bounds_ok(number, rule)


def _check_amount(value: str, rule: Mapping[str, Any]) -> bool:
    amount = parse_amount(value)
    return amount is not None and _bounds_ok(amount, rule)


def _check_length(value: str, rule: Mapping[str, Any]) -> bool:
    return _bounds_ok(len(value.strip()), rule)


def _check_one_of(value: str, rule: Mapping[str, Any]) -> bool:
    s = value.strip()
    allowed = [v.strip() for v in _str_list(rule.get("values"))]
    if rule.get("case_sensitive", True) is False:
        s = s.casefold()
        return any(s == v.casefold() for v in allowed)
    return s in allowed


def _check_not_empty(value: str, rule: Mapping[str, Any]) -> bool:
    return value.strip() != ""


_CHECKS: dict[str, Callable[[str, Mapping[str, Any]], bool]] = {
    "regex": _check_regex,
    "date": _check_date,
    "number": _check_number,
    "amount": _check_amount,
    "length": _check_length,
    "one_of": _check_one_of,
    "not_empty": _check_not_empty,
}


def _str_list(x: object) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, list | tuple):
        return [v for v in x if isinstance(v, str)]
    return []


def _condition(rule: Mapping[str, Any]) -> str:
    """The failed condition, worded to follow "`<value>` "."""
    kind = rule.get("type")
    if kind == "regex":
        return f"does not match the pattern {rule.get('pattern')}"
    if kind == "date":
        return "is not a date in format " + " or ".join(_str_list(rule.get("formats")))
    if kind == "number":
        text = "is not a number" + _range_text(rule)
        decimals = rule.get("decimals")
        if isinstance(decimals, int) and not isinstance(decimals, bool):
            text += f" with at most {decimals} decimal{'' if decimals == 1 else 's'}"
        return text
    if kind == "amount":
        return "is not an amount" + _range_text(rule)
    if kind == "length":
        lo = rule.get("min") if _is_number(rule.get("min")) else None
        hi = rule.get("max") if _is_number(rule.get("max")) else None
        if lo is not None and hi is not None:
            return f"is not between {_fmt(lo)} and {_fmt(hi)} characters long"
        if hi is not None:
            return f"is not at most {_fmt(hi)} characters long"
        lo = 1 if lo is None else lo
        return f"is not at least {_fmt(lo)} character{'' if lo == 1 else 's'} long"
    if kind == "one_of":
        return "is not one of: " + ", ".join(_str_list(rule.get("values")))
    if kind == "not_empty":
        return "is empty"
    return f"does not satisfy the unknown rule type {kind}"


def rule_passes(value: str, rule: object) -> bool:
    """Whether ``value`` passes one rule; a malformed or unknown rule fails."""
    if not isinstance(rule, Mapping):
        return False
    kind = rule.get("type")
    check = _CHECKS.get(kind) if isinstance(kind, str) else None
    if check is None:
        return False
    if rule.get("type") != "not_empty" and value.strip() == "":
        return False
    return check(value, rule)


def validate_value(value: str, tree: Mapping[str, Any] | None) -> tuple[bool, list[str]]:
    """Validate one extracted value; return ``(passed, messages)``.

    One message per failed rule group, ``"`<value>` <condition>"``, where the
    condition names every rule of the group joined with " or ". A tree that is
    None or has no rule groups accepts everything. Trees are expected to have
    passed :func:`check_tree`; malformed parts make their rule fail instead of
    raising.
    """
    if value is None:
        value = ""
    elif not isinstance(value, str):
        value = str(value)
    if not isinstance(tree, Mapping):
        return True, []
    groups = tree.get("rule_groups")
    if not isinstance(groups, list):
        return True, []
    messages: list[str] = []
    for group in groups:
        rules = group.get("rules") if isinstance(group, Mapping) else None
        if not isinstance(rules, list) or not rules:
            # An empty group constrains nothing; check_tree reports it.
            continue
        if any(rule_passes(value, rule) for rule in rules):
            continue
        conditions = [_condition(r) if isinstance(r, Mapping) else "is invalid" for r in rules]
        messages.append(f"`{value}` " + " or ".join(conditions))
    return not messages, messages


# ---------------------------------------------------------------------------
# tree checking


def type_name(x: object) -> str:
    """How an error message names the kind of a JSON value: ``a string``, ``null`` ..."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "a boolean"
    if isinstance(x, int | float):
        return "a number"
    if isinstance(x, str):
        return "a string"
    if isinstance(x, list | tuple):
        return "an array"
    if isinstance(x, Mapping):
        return "an object"
    return type(x).__name__


def _date_format_problem(fmt: str) -> str | None:
    try:
        # Any text will do: a bad directive is reported before matching starts.
        datetime.strptime("", fmt)
    except ValueError as exc:
        message = str(exc)
        if "directive" in message or "stray %" in message:
            return message
    return None


def _check_rule(rule: object, path: str) -> list[str]:
    if not isinstance(rule, Mapping):
        return [f"{path} is {type_name(rule)}, not an object"]
    kind = rule.get("type")
    if "type" not in rule:
        return [f"{path} has no `type`"]
    if not isinstance(kind, str) or kind not in _RULE_PARAMS:
        return [f"{path} has an unknown type `{kind}` (expected one of: {', '.join(RULE_TYPES)})"]
    problems: list[str] = []
    for key in rule:
        if key not in _RULE_PARAMS[kind] and key not in _LABEL_KEYS:
            problems.append(f"{path} has an unknown parameter `{key}` for a {kind} rule")
    for key in ("name", "description"):
        if key in rule and not isinstance(rule[key], str):
            problems.append(f"{path}.{key} is {type_name(rule[key])}, not a string")

    if kind == "regex":
        pattern = rule.get("pattern")
        if "pattern" not in rule:
            problems.append(f"{path} has no `pattern`")
        elif not isinstance(pattern, str):
            problems.append(f"{path}.pattern is {type_name(pattern)}, not a string")
        else:
            try:
                re.compile(pattern)
            except (re.error, RecursionError, OverflowError) as exc:
                problems.append(f"{path}.pattern `{pattern}` does not compile: {exc}")
    elif kind == "date":
        formats = rule.get("formats")
        if "formats" not in rule:
            problems.append(f"{path} has no `formats`")
        elif not isinstance(formats, list) or not formats:
            problems.append(f"{path}.formats is not a non-empty array of strings")
        else:
            for i, fmt in enumerate(formats):
                if not isinstance(fmt, str) or not fmt.strip():
                    problems.append(f"{path}.formats[{i}] is not a non-empty string")
                elif (problem := _date_format_problem(fmt)) is not None:
                    problems.append(f"{path}.formats[{i}] `{fmt}` is not a date format: {problem}")
    elif kind in ("number", "amount", "length"):
        for key in ("min", "max"):
            if key in rule and not _is_number(rule[key]):
                problems.append(f"{path}.{key} is {type_name(rule[key])}, not a number")
            elif kind == "length" and key in rule and (rule[key] < 0 or rule[key] % 1):
                problems.append(f"{path}.{key} is not a whole number of at least 0")
        lo, hi = rule.get("min"), rule.get("max")
        if _is_number(lo) and _is_number(hi) and lo > hi:
            problems.append(f"{path} has min {_fmt(lo)} greater than max {_fmt(hi)}")
        if kind == "number" and "decimals" in rule:
            decimals = rule["decimals"]
            if not isinstance(decimals, int) or isinstance(decimals, bool) or decimals < 0:
                problems.append(f"{path}.decimals is not a whole number of at least 0")
    elif kind == "one_of":
        values = rule.get("values")
        if "values" not in rule:
            problems.append(f"{path} has no `values`")
        elif not isinstance(values, list) or not values:
            problems.append(f"{path}.values is not a non-empty array of strings")
        else:
            for i, v in enumerate(values):
                if not isinstance(v, str):
                    problems.append(f"{path}.values[{i}] is {type_name(v)}, not a string")
        if "case_sensitive" in rule and not isinstance(rule["case_sensitive"], bool):
            problems.append(
                f"{path}.case_sensitive is {type_name(rule['case_sensitive'])}, not a boolean"
            )
    return problems


def check_tree(tree: object) -> list[str]:
    """List the problems of a validation tree, one readable sentence each; [] when fine.

    Paths look like ``rule_groups[1].rules[0].pattern``. A None tree means no
    validation and is fine.
    """
    if tree is None:
        return []
    if not isinstance(tree, Mapping):
        return [f"the validation tree is {type_name(tree)}, not an object"]
    problems: list[str] = []
    if "name" not in tree:
        problems.append("the validation tree has no `name`")
    elif not isinstance(tree["name"], str):
        problems.append(f"name is {type_name(tree['name'])}, not a string")
    if "rule_groups" not in tree:
        problems.append("the validation tree has no `rule_groups`")
        return problems
    groups = tree["rule_groups"]
    if not isinstance(groups, list):
        problems.append(f"rule_groups is {type_name(groups)}, not an array")
        return problems
    for g, group in enumerate(groups):
        gpath = f"rule_groups[{g}]"
        if not isinstance(group, Mapping):
            problems.append(f"{gpath} is {type_name(group)}, not an object")
            continue
        if "name" in group and not isinstance(group["name"], str):
            problems.append(f"{gpath}.name is {type_name(group['name'])}, not a string")
        for key in group:
            if key not in ("name", "rules", "description"):
                problems.append(f"{gpath} has an unknown key `{key}`")
        if "rules" not in group:
            problems.append(f"{gpath} has no `rules`")
            continue
        rules = group["rules"]
        if not isinstance(rules, list):
            problems.append(f"{gpath}.rules is {type_name(rules)}, not an array")
            continue
        if not rules:
            problems.append(f"{gpath}.rules is empty")
        for r, rule in enumerate(rules):
            problems.extend(_check_rule(rule, f"{gpath}.rules[{r}]"))
    return problems
