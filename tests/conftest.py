"""Shared fixtures: the real local service over loopback, its users, sample documents."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from servicetools import LocalService

from .helpers import Api, create_key, make_invoice_pdf, render_png, to_jpeg
from .postgres import PostgresServer, PostgresUnavailable
from .s3server import S3Server, S3Unavailable

#: The vault backends the vault tests run against (`backend_api`): the embedded folder,
#: and S3 (SeaweedFS on loopback, `s3_server`).
BACKENDS = ["folder", "s3"]
#: Where the S3-backed service keeps its documents in the bucket.
S3_PREFIX = "service/vault"


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
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3 server (``weed mini``) on loopback ports, with an empty bucket; killed at
    the end. Tests that use it skip, saying why, where it cannot start."""
    if importlib.util.find_spec("boto3") is None:
        pytest.skip("boto3 is not installed: pip install 'servicetools[scale]'")
    server = S3Server(tmp_path_factory.mktemp("s3"))
    try:
        server.start()
    except S3Unavailable as exc:
        pytest.skip(f"no S3 server for the tests: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_service(s3_server: S3Server) -> Iterator[LocalService]:
    """The local service with its vault in `s3_server` (one engine worker: it extracts
    little, and the machine's cores are the folder-backed service's)."""
    with LocalService(vault=f"s3://{s3_server.bucket}/{S3_PREFIX}",
                      s3_endpoint=s3_server.endpoint, env=s3_server.env, workers=1) as svc:
        yield svc


@pytest.fixture(scope="session")
def s3_api(s3_service: LocalService) -> Api:
    return Api(s3_service.base_url, s3_service.token)


@pytest.fixture(scope="session")
def s3_other_api(s3_service: LocalService) -> Api:
    return Api(s3_service.base_url, create_key(s3_service.data_dir, "other"))


@pytest.fixture
def backend_api(request: pytest.FixtureRequest, service: LocalService, api: Api) -> Api:
    """The `api` of the service whose vault is the backend given by indirect
    parametrisation (one of `BACKENDS`).

    ``service`` and ``api`` are asked for by name, not looked up, because a module may
    run them on both stores (tests/service/backends.py): the folder case then runs on
    each, the S3 case once, on the S3 service (its rows in SQLite).
    """
    backend = request.param
    assert backend in BACKENDS, backend
    if backend == "folder":
        return api
    if service.database:
        pytest.skip("the S3 vault runs once per session, with the S3 service's SQLite rows")
    found: Api = request.getfixturevalue("s3_api")
    return found


@pytest.fixture(scope="session")
def invoice_pdf() -> bytes:
    return make_invoice_pdf()


@pytest.fixture(scope="session")
def invoice_png(invoice_pdf: bytes) -> bytes:
    return render_png(invoice_pdf)


@pytest.fixture(scope="session")
def invoice_jpeg(invoice_png: bytes) -> bytes:
    return to_jpeg(invoice_png)
