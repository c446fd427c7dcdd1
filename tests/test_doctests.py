"""The examples in the docstrings of the wire, the extras, the bundled data, the service and
the generator run (the client's and the analysis side's run in their own test folders)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from .helpers import ROOT

#: Covered by tests/client/test_doctests.py and tests/frames/test_doctests.py.
ELSEWHERE = ("servicetools.client", "servicetools.analysis")


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted((ROOT / "servicetools").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if ">>> " in path.read_text(encoding="utf-8") and not name.startswith(ELSEWHERE):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
