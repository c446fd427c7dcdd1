"""Validation trees (D10): rule types, groups AND / rules OR, messages, tree checks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from servicetools import bundled
from servicetools.wire import rules as validation
from servicetools.wire.rules import RULE_TYPES, check_tree, validate_value

CONFIGURATIONS = bundled.CONFIGURATIONS


def tree(*groups: list[Any]) -> dict[str, Any]:
    """A tree with one group per argument, each a list of rules."""
    return {
        "name": "test",
        "rule_groups": [{"name": f"g{i}", "rules": rules} for i, rules in enumerate(groups)],
    }


def passes(value: str, *rules: dict[str, Any]) -> bool:
    return validate_value(value, tree(list(rules)))[0]


# ---------------------------------------------------------------------------
# rule types


def test_regex_is_a_full_match() -> None:
    rule = {"type": "regex", "pattern": "[0-9]+"}
    assert passes("123", rule)
    assert not passes("123a", rule)
    assert not passes("a123", rule)
    assert validate_value("12a", tree([rule])) == (
        False,
        ["`12a` does not match the pattern [0-9]+"],
    )


def test_regex_flags_inside_pattern() -> None:
    assert passes("INVOICE", {"type": "regex", "pattern": "(?i)invoice"})


def test_date_tries_every_format_and_strips() -> None:
    rule = {"type": "date", "formats": ["%Y-%m-%d", "%d.%m.%Y"]}
    assert passes("2024-02-29", rule)
    assert passes(" 29.02.2024 ", rule)
    assert not passes("31.02.2024", rule)
    assert not passes("2023-02-29", rule)


def test_date_message_quotes_spec_example() -> None:
    rule = {"type": "date", "formats": ["%Y-%m-%d"]}
    assert validate_value("31.02.2024", tree([rule])) == (
        False,
        ["`31.02.2024` is not a date in format %Y-%m-%d"],
    )


def test_date_message_names_all_formats() -> None:
    rule = {"type": "date", "formats": ["%Y-%m-%d", "%d.%m.%Y"]}
    assert validate_value("x", tree([rule]))[1] == [
        "`x` is not a date in format %Y-%m-%d or %d.%m.%Y"
    ]


def test_number_bounds_and_decimals() -> None:
    rule = {"type": "number", "min": 0, "max": 1000, "decimals": 2}
    assert passes("12.50", rule)
    assert passes("1.000,00", rule)
    assert passes("0", rule)
    assert not passes("-1", rule)
    assert not passes("1,000.01", rule)
    assert not passes("12.505", rule)
    assert not passes("twelve", rule)
    assert not passes("$12", rule)
    assert validate_value("-1", tree([rule]))[1] == [
        "`-1` is not a number between 0 and 1000 with at most 2 decimals"
    ]


def test_number_without_parameters() -> None:
    assert passes("-1,234,567.891", {"type": "number"})
    assert validate_value("x", tree([{"type": "number"}]))[1] == ["`x` is not a number"]
    assert validate_value("x", tree([{"type": "number", "min": 0}]))[1] == [
        "`x` is not a number of at least 0"
    ]
    assert validate_value("x", tree([{"type": "number", "max": 2.5, "decimals": 1}]))[1] == [
        "`x` is not a number of at most 2.5 with at most 1 decimal"
    ]


def test_number_zero_decimals() -> None:
    rule = {"type": "number", "decimals": 0}
    assert passes("1,234", rule)
    assert not passes("12.5", rule)


def test_amount() -> None:
    rule = {"type": "amount"}
    for value in ("$1,234.50", "1.234,50 EUR", "(1,234.00)", "12", "€ 3,99", "-5.00 GBP"):
        assert passes(value, rule), value
    for value in ("12 apples", "N/A", "$", "USD"):
        assert not passes(value, rule), value
    assert validate_value("N/A", tree([rule]))[1] == ["`N/A` is not an amount"]


def test_amount_bounds_see_the_sign() -> None:
    rule = {"type": "amount", "min": 0}
    assert passes("$0.00", rule)
    assert not passes("(1,234.00)", rule)
    assert validate_value("(5)", tree([rule]))[1] == ["`(5)` is not an amount of at least 0"]
    assert validate_value("x", tree([{"type": "amount", "min": 1, "max": 10.0}]))[1] == [
        "`x` is not an amount between 1 and 10"
    ]


def test_length_counts_the_stripped_value() -> None:
    rule = {"type": "length", "min": 2, "max": 4}
    assert passes("  ab  ", rule)
    assert passes("abcd", rule)
    assert not passes("a", rule)
    assert not passes("abcde", rule)
    assert validate_value("a", tree([rule]))[1] == ["`a` is not between 2 and 4 characters long"]
    assert validate_value("abc", tree([{"type": "length", "max": 2}]))[1] == [
        "`abc` is not at most 2 characters long"
    ]
    assert validate_value("a", tree([{"type": "length", "min": 3}]))[1] == [
        "`a` is not at least 3 characters long"
    ]


def test_one_of_case_sensitivity() -> None:
    sensitive = {"type": "one_of", "values": ["cash", "visa"]}
    insensitive = {"type": "one_of", "values": ["cash", "visa"], "case_sensitive": False}
    assert passes(" cash ", sensitive)
    assert not passes("VISA", sensitive)
    assert passes("VISA", insensitive)
    assert not passes("amex", insensitive)
    assert validate_value("amex", tree([insensitive]))[1] == ["`amex` is not one of: cash, visa"]


def test_not_empty() -> None:
    rule = {"type": "not_empty"}
    assert passes("x", rule)
    assert not passes("", rule)
    assert not passes(" \n\t", rule)
    assert validate_value("", tree([rule])) == (False, ["`` is empty"])


@pytest.mark.parametrize(
    "rule",
    [
        {"type": "regex", "pattern": ".*"},
        {"type": "regex", "pattern": "\\s*"},
        {"type": "date", "formats": ["%Y"]},
        {"type": "number"},
        {"type": "amount"},
        {"type": "length", "min": 0},
        {"type": "length"},
        {"type": "one_of", "values": ["", " "]},
    ],
)
def test_every_rule_but_not_empty_fails_on_empty(rule: dict[str, Any]) -> None:
    assert not passes("", rule)
    assert not passes("   ", rule)


def test_empty_value_in_date_group() -> None:
    rule = {"type": "date", "formats": ["%Y-%m-%d"]}
    assert validate_value("", tree([rule])) == (False, ["`` is not a date in format %Y-%m-%d"])


# ---------------------------------------------------------------------------
# groups and messages


def test_groups_and_rules_or() -> None:
    t = tree(
        [{"type": "regex", "pattern": "[0-9]+"}, {"type": "one_of", "values": ["cash", "visa"]}],
        [{"type": "length", "max": 3}],
    )
    assert validate_value("12", t) == (True, [])
    assert validate_value("visa", t) == (
        False,
        ["`visa` is not at most 3 characters long"],
    )
    assert validate_value("abc", t) == (
        False,
        ["`abc` does not match the pattern [0-9]+ or is not one of: cash, visa"],
    )
    assert validate_value("abcd", t) == (
        False,
        [
            "`abcd` does not match the pattern [0-9]+ or is not one of: cash, visa",
            "`abcd` is not at most 3 characters long",
        ],
    )


def test_one_message_per_failed_group_in_group_order() -> None:
    t = tree([{"type": "not_empty"}], [{"type": "date", "formats": ["%Y-%m-%d"]}])
    passed, messages = validate_value("", t)
    assert not passed
    assert messages == ["`` is empty", "`` is not a date in format %Y-%m-%d"]


def test_messages_group_by_condition() -> None:
    t = tree([{"type": "date", "formats": ["%Y-%m-%d", "%d.%m.%Y"]}])
    conditions = set()
    for value in ("31.02.2024", "", "soon", "with `backticks`", "two\nlines"):
        passed, (message,) = validate_value(value, t)
        assert not passed
        assert message.startswith(f"`{value}` ")
        conditions.add(message[len(value) + 2 :])
    assert conditions == {" is not a date in format %Y-%m-%d or %d.%m.%Y"}


def test_value_is_kept_verbatim() -> None:
    t = tree([{"type": "regex", "pattern": "x"}])
    assert validate_value("a`b`c ", t)[1] == ["`a`b`c ` does not match the pattern x"]


def test_no_tree_or_no_groups_accepts_everything() -> None:
    assert validate_value("anything", None) == (True, [])
    assert validate_value("", {"name": "none", "rule_groups": []}) == (True, [])


def test_malformed_rules_fail_instead_of_raising() -> None:
    t = tree([{"type": "regex", "pattern": "[unclosed"}], [{"type": "nonsense"}], ["not a rule"])
    passed, messages = validate_value("x", t)
    assert not passed
    assert len(messages) == 3


def test_shipped_configurations_validate_their_examples() -> None:
    for path in sorted(CONFIGURATIONS.glob("*.json")):
        configuration = json.loads(path.read_text(encoding="utf-8"))
        for target in configuration["extraction_targets"]:
            if target["type"] == "field":
                assert check_tree(target["validation_tree"]) == [], path.name
                assert validate_value(target["example"], target["validation_tree"]) == (True, [])
            for header in target.get("header_schema", []):
                matching = header["header_matching_validation_tree"]
                assert check_tree(matching) == []
                assert check_tree(header["extracted_value_validation_tree"]) == []
                assert validate_value(header["name"], matching)[0], header["name"]


def test_regex_compilation_is_cached() -> None:

    validation.compiled_pattern.cache_clear()
    t = tree([{"type": "regex", "pattern": "[a-z]+"}])
    for _ in range(50):
        validate_value("abc", t)
    info = validation.compiled_pattern.cache_info()
    assert info.misses == 1
    assert info.hits >= 49


# ---------------------------------------------------------------------------
# check_tree


def test_check_tree_accepts_good_trees() -> None:
    assert check_tree(None) == []
    good = tree(
        [{"type": "regex", "pattern": "[A-Z]+", "name": "code"}],
        [{"type": "date", "formats": ["%d %b %Y"]}],
        [{"type": "number", "min": 0, "max": 10.5, "decimals": 2}],
        [{"type": "amount", "min": -1}],
        [{"type": "length", "min": 0, "max": 3}],
        [{"type": "one_of", "values": ["a"], "case_sensitive": False}],
        [{"type": "not_empty"}],
    )
    assert check_tree(good) == []
    assert {rule["type"] for group in good["rule_groups"] for rule in group["rules"]} == set(
        RULE_TYPES
    )


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ([], "the validation tree is an array, not an object"),
        ({"rule_groups": []}, "the validation tree has no `name`"),
        ({"name": 3, "rule_groups": []}, "name is a number, not a string"),
        ({"name": "x"}, "the validation tree has no `rule_groups`"),
        ({"name": "x", "rule_groups": {}}, "rule_groups is an object, not an array"),
        ({"name": "x", "rule_groups": ["g"]}, "rule_groups[0] is a string, not an object"),
        ({"name": "x", "rule_groups": [{"name": "g"}]}, "rule_groups[0] has no `rules`"),
        ({"name": "x", "rule_groups": [{"rules": []}]}, "rule_groups[0].rules is empty"),
        (tree([], [{"kind": "regex"}]), "rule_groups[1].rules[0] has no `type`"),
        (
            tree([{"type": "regex", "pattern": "a"}], [{"type": "fuzzy"}]),
            "rule_groups[1].rules[0] has an unknown type `fuzzy`",
        ),
        (tree([{"type": "regex"}]), "rule_groups[0].rules[0] has no `pattern`"),
        (
            tree([{"type": "regex", "pattern": 5}]),
            "rule_groups[0].rules[0].pattern is a number, not a string",
        ),
        (
            tree([{"type": "regex", "pattern": "[a-"}]),
            "rule_groups[0].rules[0].pattern `[a-` does not compile",
        ),
        (tree([{"type": "date"}]), "rule_groups[0].rules[0] has no `formats`"),
        (
            tree([{"type": "date", "formats": []}]),
            "rule_groups[0].rules[0].formats is not a non-empty array of strings",
        ),
        (
            tree([{"type": "date", "formats": ["%Y", 1]}]),
            "rule_groups[0].rules[0].formats[1] is not a non-empty string",
        ),
        (
            tree([{"type": "date", "formats": ["%Q"]}]),
            "rule_groups[0].rules[0].formats[0] `%Q` is not a date format",
        ),
        (
            tree([{"type": "number", "min": "0"}]),
            "rule_groups[0].rules[0].min is a string, not a number",
        ),
        (
            tree([{"type": "number", "min": True}]),
            "rule_groups[0].rules[0].min is a boolean, not a number",
        ),
        (
            tree([{"type": "number", "min": 5, "max": 2}]),
            "rule_groups[0].rules[0] has min 5 greater than max 2",
        ),
        (
            tree([{"type": "amount", "min": 5.5, "max": 2}]),
            "rule_groups[0].rules[0] has min 5.5 greater than max 2",
        ),
        (
            tree([{"type": "length", "min": 4, "max": 1}]),
            "rule_groups[0].rules[0] has min 4 greater than max 1",
        ),
        (
            tree([{"type": "length", "min": -1}]),
            "rule_groups[0].rules[0].min is not a whole number of at least 0",
        ),
        (
            tree([{"type": "number", "decimals": 1.5}]),
            "rule_groups[0].rules[0].decimals is not a whole number of at least 0",
        ),
        (tree([{"type": "one_of"}]), "rule_groups[0].rules[0] has no `values`"),
        (
            tree([{"type": "one_of", "values": "cash"}]),
            "rule_groups[0].rules[0].values is not a non-empty array of strings",
        ),
        (
            tree([{"type": "one_of", "values": ["a", 2]}]),
            "rule_groups[0].rules[0].values[1] is a number, not a string",
        ),
        (
            tree([{"type": "one_of", "values": ["a"], "case_sensitive": "no"}]),
            "rule_groups[0].rules[0].case_sensitive is a string, not a boolean",
        ),
        (
            tree([{"type": "number", "decimal": 2}]),
            "rule_groups[0].rules[0] has an unknown parameter `decimal` for a number rule",
        ),
        (tree(["regex"]), "rule_groups[0].rules[0] is a string, not an object"),
    ],
)
def test_check_tree_reports(bad: Any, expected: str) -> None:
    problems = check_tree(bad)
    assert any(p.startswith(expected) for p in problems), problems


def test_check_tree_reports_every_problem() -> None:
    bad = tree(
        [{"type": "regex", "pattern": "("}, {"type": "length", "min": 3, "max": 1}],
        [{"type": "unknown"}],
    )
    problems = check_tree(bad)
    assert len(problems) == 3
    assert [re.match(r"\S+", p).group() for p in problems] == [  # type: ignore[union-attr]
        "rule_groups[0].rules[0].pattern",
        "rule_groups[0].rules[1]",
        "rule_groups[1].rules[0]",
    ]
