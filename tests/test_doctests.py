"""Every example in a docstring of the package runs: here, or (the client's and the frames,
audit and plots modules') in tests/client/test_doctests.py and tests/frames/test_doctests.py,
which run without the service extra in make test-wheel."""

from __future__ import annotations

import doctest
import importlib

import pytest

from .support.helpers import ROOT

#: Covered by tests/client/test_doctests.py and tests/frames/test_doctests.py.
ELSEWHERE = ("servicetools.client.batch", "servicetools.client.client",
             "servicetools.client.documents", "servicetools.client.errors",
             "servicetools.client.result", "servicetools.client.sinks",
             "servicetools.analysis.audit", "servicetools.analysis.frames",
             "servicetools.analysis.plots")


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted((ROOT / "servicetools").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if ">>> " in path.read_text(encoding="utf-8") and not (
                name in ELSEWHERE or name.startswith(tuple(f"{e}." for e in ELSEWHERE))):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
