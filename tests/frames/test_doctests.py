"""The examples in the docstrings of frames, audit and plots run as written."""

from __future__ import annotations

import doctest

import pytest

from servicetools import audit, frames, plots


@pytest.mark.parametrize("module", [frames, audit, plots], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0 and result.attempted > 0
