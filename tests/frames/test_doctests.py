"""The examples in the docstrings of frames and audit (and their modules) and plots run as
written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

from servicetools import audit, frames, plots


def _modules_with_examples(package: ModuleType) -> list[ModuleType]:
    """The package and each of its modules whose docstrings hold examples."""
    found = [importlib.import_module(f"{package.__name__}.{info.name}")
             for info in pkgutil.iter_modules(package.__path__)]
    finder = doctest.DocTestFinder()
    return [package] + [m for m in found if any(t.examples for t in finder.find(m))]


def test_the_modules_with_examples_are_found() -> None:
    names = {m.__name__.rpartition(".")[2] for m in _modules_with_examples(frames)}
    assert {"frames", "conditions"} <= names
    names = {m.__name__.rpartition(".")[2] for m in _modules_with_examples(audit)}
    assert {"audit", "normalisation", "significance"} <= names


@pytest.mark.parametrize("module", [*_modules_with_examples(frames),
                                    *_modules_with_examples(audit), plots],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
