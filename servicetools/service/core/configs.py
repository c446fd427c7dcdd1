"""Configurations (D9) and classifiers (D13) loaded from folders of JSON files.

A bad file stops the start with a message naming the file and the problem;
`check_configuration` runs the same checks offline (``servicetools config check``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import wire
from ...wire import rules as validation
from . import outputschema


class ConfigError(ValueError):
    """A configuration or classifier file that cannot be used."""


def target_name(target: dict[str, Any]) -> str:
    """D9: a target is referred to by its name; a table target without one by its id."""
    return str(target.get("name") or target["id"])


def check_configuration(config: Any) -> list[str]:
    """Every problem of a configuration object, each a readable line naming its place."""
    if not isinstance(config, dict):
        return wire.errors(config, "configuration")
    # The output schema is judged by its own checker, which speaks D11's three error
    # kinds and also takes the JSON or XML text form.
    problems = wire.errors({k: v for k, v in config.items() if k != "output_schema"},
                           "configuration")
    if problems:
        return problems
    areas = config.get("search_areas") or {}
    for name, area in areas.items():
        x0, y0, x1, y1 = area["box"]
        if not (x0 < x1 and y0 < y1):  # a box with no area holds no word
            problems.append(f"search_areas[{name!r}]: the box {area['box']} is empty: it is "
                            "[x0, y0, x1, y1], with x0 < x1 and y0 < y1")
    seen_ids: set[str] = set()
    seen_names: set[str] = set()
    for i, target in enumerate(config["extraction_targets"]):
        where = f"extraction_targets[{i}]"
        if target["id"] in seen_ids:
            problems.append(f"{where}: duplicate target id {target['id']!r}")
        seen_ids.add(target["id"])
        name = target_name(target)
        if name in seen_names:
            problems.append(f"{where}: duplicate target name {name!r}")
        seen_names.add(name)
        area = target.get("search_area", "all")
        if target.get("search_area_type") == "box" and area not in areas:
            problems.append(f"{where}: search_area {area!r} is not in search_areas")
        if target["type"] == "field":
            problems += [f"{where}.validation_tree: {p}"
                         for p in validation.check_tree(target.get("validation_tree"))]
        else:
            # A cell is the column's at its position: of two columns at one position,
            # one would never be read.
            positions = [col.get("position") for col in target.get("header_schema", [])]
            shared = sorted({p for p in positions if positions.count(p) > 1})
            if shared:
                problems.append(f"{where}.header_schema: more than one column at position "
                                + ", ".join(map(str, shared)))
            for j, col in enumerate(target.get("header_schema", [])):
                for key in ("header_matching_validation_tree", "extracted_value_validation_tree"):
                    problems += [f"{where}.header_schema[{j}].{key}: {p}"
                                 for p in validation.check_tree(col.get(key))]
    if "output_schema" in config:
        problems += [f"output_schema: {p}"
                     for p in outputschema.check(config["output_schema"], config)]
    return problems


def check_file(path: Path) -> list[str]:
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [f"cannot read the file: {exc}"]
    except json.JSONDecodeError as exc:
        return [f"not valid JSON: {exc}"]
    return check_configuration(config)


@dataclass
class Catalog:
    """The configurations and classifiers the service answers with, by id and by name."""

    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)
    classifiers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def configuration(self, *, id_: str | None = None, name: str | None = None
                      ) -> dict[str, Any] | None:
        if id_ is not None:
            return self.configurations.get(id_)
        return next((c for c in self.configurations.values() if c["name"] == name), None)

    @classmethod
    def load(cls, configurations_dir: Path, classifiers_dir: Path | None) -> Catalog:
        catalog = cls()
        for path, config in _read_folder(configurations_dir):
            problems = check_configuration(config)
            if problems:
                raise ConfigError(f"{path}: " + "; ".join(problems))
            if "output_schema" in config:
                # Stored as the object form, whatever form the file used (D11).
                config["output_schema"] = outputschema.load_output_schema(config["output_schema"])
            if config["id"] in catalog.configurations or catalog.configuration(
                name=config["name"]
            ):
                raise ConfigError(f"{path}: configuration id or name used twice")
            catalog.configurations[config["id"]] = config
        if classifiers_dir is not None and classifiers_dir.exists():
            for path, clf in _read_folder(classifiers_dir):
                problems = wire.errors(clf, "classifier")
                if problems:
                    raise ConfigError(f"{path}: " + "; ".join(problems))
                catalog.classifiers[clf["id"]] = clf
        return catalog


def _read_folder(folder: Path) -> list[tuple[Path, Any]]:
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder")
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{path}: not valid JSON: {exc}") from exc
    return out
