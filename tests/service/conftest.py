"""Fixtures of the service tests: a module marked ``both_stores`` runs on both stores.

    pytestmark = pytest.mark.both_stores

parametrises, for that module, the ``service`` its tests get (and ``api``, ``other_api``
on it) over SQLite (the embedded default) and PostgreSQL; both services are started once
per session and shared by every module marked so. PostgreSQL's run is skipped, saying
why, where its server cannot start. Unmarked modules get the SQLite service, as
everywhere else.
"""

from __future__ import annotations

import pytest

from servicetools import LocalService

from ..support.helpers import Api, create_key
from ..support.stores import STORES


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "both_stores: run the module's service tests on "
                            "SQLite and on PostgreSQL (tests/service/conftest.py)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if (metafunc.definition.get_closest_marker("both_stores")
            and {"service", "api", "other_api"} & set(metafunc.fixturenames)):
        metafunc.parametrize("store_kind", STORES, indirect=True, scope="module")


@pytest.fixture(scope="module")
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store the module's service keeps its rows in (``sqlite`` unless marked)."""
    kind: str = getattr(request, "param", "sqlite")
    return kind


@pytest.fixture(scope="module")
def service(request: pytest.FixtureRequest, store_kind: str) -> LocalService:
    svc: LocalService = request.getfixturevalue(f"{store_kind}_service")
    return svc


@pytest.fixture(scope="module")
def api(service: LocalService) -> Api:
    return Api(service.base_url, service.token)


@pytest.fixture(scope="module")
def other_api(service: LocalService) -> Api:
    return Api(service.base_url, create_key(service.data_dir, "other", service.database))
