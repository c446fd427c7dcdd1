"""The examples in the docstrings of frames (and its modules), audit and plots run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

from servicetools import audit, frames, plots


def _frames_modules() -> list[ModuleType]:
    """The frames package and each of its modules whose docstrings hold examples."""
    found = [importlib.import_module(f"{frames.__name__}.{info.name}")
             for info in pkgutil.iter_modules(frames.__path__)]
    finder = doctest.DocTestFinder()
    return [frames] + [m for m in found if any(t.examples for t in finder.find(m))]


def test_the_frames_modules_with_examples_are_found() -> None:
    names = {m.__name__.rpartition(".")[2] for m in _frames_modules()}
    assert {"frames", "conditions"} <= names


@pytest.mark.parametrize("module", [*_frames_modules(), audit, plots],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
