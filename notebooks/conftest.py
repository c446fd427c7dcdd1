"""The notebooks run as tests under nbval; each starts a kernel (and the local service),
so each is an ``integration`` test (tests/conftest.py draws that line for the rest)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: starts processes (tests/conftest.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.integration)
