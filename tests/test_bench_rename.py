"""The rename bench's inputs (bench/renames.json) and its renaming, checked without the
real sets: every field target has five other names, written as users write them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import rename  # noqa: E402

from servicetools import bundled  # noqa: E402

RENAMES = {k: v for k, v in json.loads(rename.RENAMES.read_text()).items()
           if not k.startswith("_")}
# The bundled configurations and those written for the other sets (bench/configurations).
CONFIGURATIONS = {p.stem: json.loads(p.read_text())
                  for p in [*bundled.CONFIGURATIONS.glob("*.json"),
                            *rename.realsets.CONFIGURATIONS.glob("*.json")]}


def test_every_field_target_has_five_other_names_with_plain_descriptions() -> None:
    assert set(RENAMES) == set(CONFIGURATIONS)
    for name, configuration in CONFIGURATIONS.items():
        fields = [t["name"] for t in configuration["extraction_targets"] if t["type"] == "field"]
        assert sorted(RENAMES[name]) == sorted(fields)
        for target, others in RENAMES[name].items():
            names = [other for other, _ in others]
            assert len(set(names)) == rename.VARIANTS and target not in names
            for _, description in others:
                # Plain words: no quoted label for the engine to pick up.
                assert not re.search(r"[\"“”„«»]", description), description


def test_a_renaming_changes_names_and_descriptions_only() -> None:
    configuration = CONFIGURATIONS["invoices"]
    changed, back = rename.renamed(configuration, RENAMES["invoices"], 0)
    assert back["Issuer"] == "Vendor"
    for old, new in zip(configuration["extraction_targets"], changed["extraction_targets"],
                        strict=True):
        assert {k: v for k, v in old.items() if k not in ("name", "description")} == {
            k: v for k, v in new.items() if k not in ("name", "description")}
    assert configuration["extraction_targets"][3]["name"] == "Vendor"  # not changed in place


def test_halves_follow_the_data_folders_rule() -> None:
    # ../shared/data/README.md: the first hex digit of the file name's SHA-256, 0-7 tuning.
    assert rename.half("005.jpg") in ("tuning", "check")
    halves = {rename.half(f"{n:03d}.jpg") for n in range(40)}
    assert halves == {"tuning", "check"}


def _outcome(document: str, target: str, right: bool) -> rename.realsets.Outcome:
    return rename.realsets.Outcome("x", document, target, "text", "A", "A" if right else "",
                                   0.9, right, True)


def test_the_goal_is_judged_again_without_names_printed_for_another_field() -> None:
    # 005.jpg is in the check half. "Order Number" reads nothing, "Contract No" reads it.
    names = {"c": {"Contract Number": [["Order Number", "."], ["Contract No", "."]]}}
    rename._CONFIGURATION_OF["r/005.jpg"] = "c"
    base = [_outcome("r/005.jpg", "Contract Number", True)]
    others = [[_outcome("r/005.jpg", "Contract Number", False)],
              [_outcome("r/005.jpg", "Contract Number", True)]]
    another = {"c": {"Contract Number": {"Order Number": "the forms print an order's own"}}}
    page = rename.report(base, others, names, False, another)
    assert "Below it: c/Contract Number (0.00)" in page
    assert "c / Contract Number as 'Order Number': the forms print an order's own" in page
    assert page.endswith("The goal without those names. Below it: none")
    assert rename.report(base, others, names, False).endswith(
        "Below it: c/Contract Number (0.00)")


def test_names_printed_for_another_field_are_names_of_the_bench() -> None:
    another = json.loads(rename.RENAMES.read_text())["_another_field"]
    for configuration, by_target in another.items():
        for target, by_name in by_target.items():
            assert set(by_name) <= {n for n, _ in RENAMES[configuration][target]}
            assert all(reason.strip() for reason in by_name.values())
