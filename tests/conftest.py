"""Shared fixtures: the real local service over loopback, its users, sample documents;
and the line between fast tests and integration tests.

A test is ``integration`` when it starts processes: the local service, PostgreSQL, S3,
workers, a browser, a notebook's kernel. The fixtures that start the shared ones mark
their users (`STARTS_PROCESSES`), modules that start their own say so with
``pytestmark = pytest.mark.integration``, and notebooks are marked by their path. So that
the line holds, an audit hook counts the processes started (``subprocess.Popen`` and
its kin): a test not marked ``integration`` that starts one fails, saying so. ``pytest -m
"not integration"`` runs the rest, in under a minute.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Generator, Iterator

import pytest

from servicetools import LocalService

from .support.helpers import Api, create_key, make_invoice_pdf, render_png, to_jpeg
from .support.postgres import PostgresServer, PostgresUnavailable
from .support.s3server import S3Server, S3Unavailable
from .support.stores import S3_PREFIX, VAULTS

#: Fixtures that start processes: a test using one (directly or through another fixture)
#: is an integration test. ``service`` and ``backend_api`` are here too because a module
#: may choose their server at run time (tests/service/conftest.py), which no static
#: list of a test's fixtures shows.
STARTS_PROCESSES = {"sqlite_service", "postgresql_service", "postgres", "s3_server", "lab",
                    "service", "backend_api"}
#: Audit events of a new process. (multiprocessing's spawn starts its children through
#: _posixsubprocess without an event; no fast test runs an engine pool.)
_PROCESS_EVENTS = {"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.system", "os.fork",
                   "os.forkpty", "os.exec", "pty.spawn"}
_started = [0]


def _count_processes(event: str, args: tuple[object, ...]) -> None:
    if event in _PROCESS_EVENTS:
        _started[0] += 1


sys.addaudithook(_count_processes)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: starts processes (the local service, "
                            "PostgreSQL, S3, workers, a browser, a kernel); pytest -m "
                            "'not integration' runs the fast tests")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if (STARTS_PROCESSES & set(getattr(item, "fixturenames", ()))
                or item.path.suffix == ".ipynb" or item.get_closest_marker("e2e")):
            item.add_marker(pytest.mark.integration)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    # Counted over the test's set-up and its body (`pytest_runtest_setup` records the
    # count before), not its tear-down: the session's last test may tear down the
    # shared servers (pg_ctl stop) whatever it is.
    result = yield
    started = _started[0] - item.stash.get(_STARTED_BEFORE, _started[0])
    if started and not item.get_closest_marker("integration"):
        raise AssertionError(
            f"{item.nodeid} started {started} process(es) but is not marked integration: "
            "mark its module (pytestmark = pytest.mark.integration) or use a fixture of "
            "conftest.STARTS_PROCESSES")
    return result


_STARTED_BEFORE = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_STARTED_BEFORE] = _started[0]


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
    """The service most tests talk to (tests/service/conftest.py can run a module on both
    stores)."""
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
    parametrisation (one of `VAULTS`).

    ``service`` and ``api`` are asked for by name, not looked up, because a module may
    run them on both stores (``both_stores``, tests/service/conftest.py): the folder case
    then runs on each, the S3 case once, on the S3 service (its rows in SQLite).
    """
    backend = request.param
    assert backend in VAULTS, backend
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
