"""The examples in the client modules' docstrings run."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from servicetools.client import batch, client, documents, errors, result, sinks


@pytest.mark.parametrize("module", [errors, client, batch, documents, result, sinks],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
