"""Run a test module against both storage backends: import these fixtures into it.

    from .backends import on_both_backends  # noqa: F401  (the fixtures below)

They replace conftest's session fixtures ``service``, ``api`` and ``other_api`` for that
module only (fixtures registered under another name than their function's, so the
module's test arguments do not shadow an import), with
``service`` parametrised over SQLite (the embedded default) and PostgreSQL; the two
services are started once per session and shared by every module that does this.
PostgreSQL's run is skipped, with the reason, where its server cannot start.
"""

from __future__ import annotations

import pytest

from servicetools import LocalService
from servicetools.service.core.backends import open_store
from servicetools.service.core.store import Storage
from servicetools.service.settings import Settings

from ..helpers import Api, create_key

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="module", params=BACKENDS, name="service")
def on_both_backends(request: pytest.FixtureRequest) -> LocalService:
    svc: LocalService = request.getfixturevalue(f"{request.param}_service")
    return svc


@pytest.fixture(scope="module", name="api")
def api_on_both_backends(service: LocalService) -> Api:
    return Api(service.base_url, service.token)


@pytest.fixture(scope="module", name="other_api")
def other_api_on_both_backends(service: LocalService) -> Api:
    return Api(service.base_url, create_key(service.data_dir, "other", service.database))


def store_of(service: LocalService) -> Storage:
    """A store on the service's own rows, wherever it keeps them."""
    return open_store(Settings(data_dir=service.data_dir, database_url=service.database),
                      migrate=False)
