"""Shared fixtures: the real local service over loopback, its users, sample documents."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servicetools import LocalService

from .helpers import Api, create_key, make_invoice_pdf, render_png, to_jpeg
from .postgres import PostgresServer, PostgresUnavailable


@pytest.fixture(scope="session")
def sqlite_service() -> Iterator[LocalService]:
    """The embedded default: rows in SQLite files in the service's data folder."""
    with LocalService() as svc:
        yield svc


@pytest.fixture(scope="session")
def postgresql_service(postgres: PostgresServer) -> Iterator[LocalService]:
    """The same service keeping its rows in a database of the test PostgreSQL server."""
    with LocalService(database=postgres.new_database("service")) as svc:
        yield svc


@pytest.fixture(scope="session")
def service(sqlite_service: LocalService) -> LocalService:
    """The service most tests talk to; tests/service/backends.py runs a module on both."""
    return sqlite_service


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of our own for the session (skips, saying why, where none can
    start); each user of it makes a fresh database with `new_database`."""
    try:
        import psycopg  # noqa: F401  (the 'scale' extra)
    except ImportError:
        pytest.skip("psycopg is not installed: pip install 'servicetools[scale]'")
    try:
        server = PostgresServer().start()
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL cannot start here: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def api(service: LocalService) -> Api:
    return Api(service.base_url, service.token)


@pytest.fixture(scope="session")
def other_api(service: LocalService) -> Api:
    return Api(service.base_url, create_key(service.data_dir, "other", service.database))


@pytest.fixture(scope="session")
def invoice_pdf() -> bytes:
    return make_invoice_pdf()


@pytest.fixture(scope="session")
def invoice_png(invoice_pdf: bytes) -> bytes:
    return render_png(invoice_pdf)


@pytest.fixture(scope="session")
def invoice_jpeg(invoice_png: bytes) -> bytes:
    return to_jpeg(invoice_png)
