"""The README and the package docstrings describe the tree that is there (docs vs code)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from .support.helpers import ROOT

PACKAGE = ROOT / "servicetools"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def module_table() -> dict[str, str]:
    """Backticked ``servicetools/...`` paths of the README's module table -> their row."""
    rows: dict[str, str] = {}
    for line in README.splitlines():
        if line.startswith("| `servicetools/"):
            first = line.split(" | ")[0]
            for path in re.findall(r"`(servicetools/[^`]*)`", first):
                rows[path] = line
    return rows


def test_the_extras_table_lists_each_extra_once() -> None:
    # Each extra of pyproject.toml in one row (the table once listed `scale` twice, with
    # two different accounts of what it adds).
    listed = re.findall(r"^\| `([a-z]+)` \|", README, flags=re.MULTILINE)
    with open(ROOT / "pyproject.toml", "rb") as f:
        extras = set(tomllib.load(f)["project"]["optional-dependencies"]) - {"dev"}
    assert sorted(listed) == sorted(set(listed)), listed
    assert set(listed) == extras


def test_every_path_in_the_module_table_exists() -> None:
    rows = module_table()
    assert rows, "the README has no module table"
    missing = [path for path in rows if not (ROOT / path).exists()]
    assert missing == []


def test_every_package_and_top_level_module_is_in_the_module_table() -> None:
    rows = module_table()
    expected = {f"servicetools/{p.name}/" for p in PACKAGE.iterdir()
                if (p / "__init__.py").is_file()}
    expected |= {f"servicetools/{p.name}" for p in PACKAGE.glob("*.py")
                 if p.stem not in ("__init__", "__main__", "_version")}
    expected |= {f"servicetools/service/{p.name}/" for p in (PACKAGE / "service").iterdir()
                 if (p / "__init__.py").is_file() and p.name == "engine"}
    unlisted = sorted(expected - set(rows))
    assert unlisted == []


def _submodules(package: Path) -> list[str]:
    names = [p.stem for p in package.glob("*.py") if not p.stem.startswith("_")]
    names += [p.name for p in package.iterdir()
              if (p / "__init__.py").is_file() and not p.name.startswith("_")]
    return sorted(names)


@pytest.mark.parametrize("package", ["wire", "client", "analysis", "service"])
def test_each_layer_names_its_modules_in_its_docstring(package: str) -> None:
    folder = PACKAGE / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    assert doc, package
    unnamed = [name for name in _submodules(folder) if f"`{name}`" not in doc]
    assert unnamed == [], f"servicetools.{package}'s docstring does not name {unnamed}"


def test_the_session_in_the_readme_is_python() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for block in blocks:
        ast.parse(block)
