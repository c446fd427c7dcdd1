"""The tests' own house: what they share lives in ``tests/support/`` (helpers) and the
conftests (fixtures); no test module or conftest imports another test module or a
conftest, so a test module can be read, run and moved alone."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support.helpers import ROOT

TESTS = ROOT / "tests"


def imported_modules(path: Path, source: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name relative to ``tests``) of every relative import of ``source``,
    its imported names included (``from . import test_x`` names the module)."""
    package = list(path.relative_to(TESTS).parent.parts)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            origin = [*base, *(node.module.split(".") if node.module else [])]
            yield node.lineno, ".".join(origin)
            for alias in node.names:
                yield node.lineno, ".".join([*origin, alias.name])


def shared_test_code(path: Path, source: str) -> list[str]:
    """Imports of a test module or a conftest: ``"file:line imports name"``."""
    found = []
    for line, name in imported_modules(path, source):
        last = name.rpartition(".")[2]
        if last.startswith("test_") or last == "conftest":
            found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return sorted(set(found))


def test_no_test_module_or_conftest_is_imported() -> None:
    found = [v for path in sorted(TESTS.rglob("*.py"))
             for v in shared_test_code(path, path.read_text(encoding="utf-8"))]
    assert found == [], "move what they share into tests/support/ (helpers) or a conftest"


@pytest.mark.parametrize("source", [
    "from .test_fields import extract_all\n",
    "from ..conftest import S3_PREFIX\n",
    "from . import test_tables\n",
    "def f():\n    from .conftest import Lab\n",
])
def test_a_shared_test_import_is_caught(source: str) -> None:
    found = shared_test_code(TESTS / "engine" / "test_x.py", source)
    assert len(found) == 1, found


def test_support_holds_no_tests_and_no_fixtures() -> None:
    # Helpers only: a test here would run under a name nobody looks for, a fixture
    # would need importing into test modules (what the conftests are for).
    for path in sorted((TESTS / "support").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                assert not node.name.startswith("test_"), f"{path.name}: {node.name}"
                decorators = [ast.unparse(d) for d in node.decorator_list]
                assert not any("fixture" in d for d in decorators), f"{path.name}: {node.name}"
