"""`LocalService`: the embedded default, the reference service on a free loopback port.

It runs ``servicetools serve`` in a child process, so the service has its own
cores for the engine, and a test can stop it hard (`kill`) and start it again on
the same data folder and port (`start`).

>>> with LocalService() as svc:                      # doctest: +SKIP
...     svc.base_url, svc.token
('http://127.0.0.1:54321', '...')
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import requests

from ..extras import require
from ..wire.protocol import API_PREFIX, AUTH_HEADER

__all__ = ["LocalService", "LocalServiceError", "LocalWorkers", "START_TIMEOUT", "embedded_service"]

#: How long a start may take before it is given up (a cold start imports the engine).
START_TIMEOUT = 60.0


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


class LocalServiceError(RuntimeError):
    """The local service did not start; the message holds the end of its log."""


class LocalService:
    """Start the local service; use as a context manager or call `start`/`stop`.

    ``data_dir`` defaults to a temporary folder removed at `stop`; a given folder is
    kept, so a later `LocalService` on it sees the same documents and results.
    ``vault`` (``s3://BUCKET/PREFIX``) and ``s3_endpoint`` keep vault documents in
    S3-compatible storage instead (``servicetools serve --vault``); ``env`` adds
    environment variables for the service process, such as ``AWS_ACCESS_KEY_ID``.
    ``database`` (a ``postgresql://`` URL) keeps users, extractions and results there
    instead of in the data folder; with it, ``no_workers`` makes a pure API process
    whose jobs `LocalWorkers` run (``serve --no-workers``).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        configurations: str | os.PathLike[str] | None = None,
        classifiers: str | os.PathLike[str] | None = None,
        allow_private_hosts: bool = False,
        workers: int | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        token: str | None = None,
        vault: str | None = None,
        s3_endpoint: str | None = None,
        env: Mapping[str, str] | None = None,
        database: str | None = None,
        no_workers: bool = False,
    ) -> None:
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(
            tempfile.mkdtemp(prefix="servicetools-"))
        self.configurations = configurations
        self.classifiers = classifiers
        self.allow_private_hosts = allow_private_hosts
        self.workers = workers
        self.host = host
        self.port = port or _free_port(host)
        self.token = token or secrets.token_urlsafe(24)
        self.vault = vault
        self.s3_endpoint = s3_endpoint
        self.env = dict(env or {})
        #: A PostgreSQL URL (``serve --database``); None: SQLite in the data folder.
        self.database = database
        self.no_workers = no_workers
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "service.log"

    def _command(self) -> list[str]:
        cmd = [sys.executable, "-m", "servicetools", "serve", "--host", self.host,
               "--port", str(self.port), "--data-dir", str(self.data_dir)]
        if self.configurations:
            cmd += ["--configurations", str(self.configurations)]
        if self.classifiers:
            cmd += ["--classifiers", str(self.classifiers)]
        if self.allow_private_hosts:
            cmd.append("--allow-private-hosts")
        if self.workers:
            cmd += ["--workers", str(self.workers)]
        if self.vault:
            cmd += ["--vault", self.vault]
        if self.s3_endpoint:
            cmd += ["--s3-endpoint", self.s3_endpoint]
        if self.database:
            cmd += ["--database", self.database]
        if self.no_workers:
            cmd.append("--no-workers")
        return cmd

    def start(self, timeout: float = START_TIMEOUT) -> LocalService:
        """Start the service (again, after `kill` or `stop`) and wait until it answers."""
        if self.process is not None and self.process.poll() is None:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.env, "SERVICETOOLS_DEV_TOKEN": self.token}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self._command(), stdout=log, stderr=log, env=env,
                                            stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        url = f"{self.base_url}{API_PREFIX}/vault/list"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalServiceError(f"the local service exited with code "
                                        f"{self.process.returncode}:\n{self._log_tail()}")
            try:
                if requests.get(url, headers={AUTH_HEADER: self.token}, timeout=2).ok:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.kill()
        raise LocalServiceError(f"the local service did not answer within {timeout:.0f} s:\n"
                                f"{self._log_tail()}")

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """Stop the service process hard (SIGKILL), as a crash would; the data stays."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """Stop the service gracefully; remove the data folder if it was temporary."""
        _terminate(self.process, self.kill)
        self.process = None
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalService:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.process and self.process.poll() is None else "stopped"
        return f"<LocalService {self.base_url} {state} data_dir={str(self.data_dir)!r}>"


class LocalWorkers:
    """``servicetools worker`` in a child process (its own session, so `kill` takes its
    engine processes down with it, as a machine's crash would).

    ``data_dir`` is the service's, for a vault in a folder; ``args`` adds options such as
    ``["--lease-seconds", "2"]``; ``env`` adds environment variables.
    """

    def __init__(self, database: str, data_dir: str | os.PathLike[str], *, processes: int = 1,
                 args: list[str] | None = None, env: Mapping[str, str] | None = None) -> None:
        self.database = database
        self.data_dir = Path(data_dir)
        self.processes = processes
        self.args = list(args or [])
        self.env = dict(env or {})
        self.process: subprocess.Popen[bytes] | None = None
        # Its own name: `start` waits for a line of this log, which an older log of the
        # same name would already hold (an ``id()`` is reused once its object is gone).
        self.log_path = self.data_dir / f"worker-{secrets.token_hex(6)}.log"

    def start(self, timeout: float = START_TIMEOUT) -> LocalWorkers:
        """Start the workers (again, after `kill` or `stop`) and wait until they say they
        run; while they run, this does nothing (a second command would be orphaned)."""
        if self.process is not None and self.process.poll() is None:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "servicetools", "worker", "--database", self.database,
               "--data-dir", str(self.data_dir), "--processes", str(self.processes),
               *self.args]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                            env={**os.environ, **self.env},
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalServiceError(f"the workers exited with code "
                                        f"{self.process.returncode}:\n{self._log()}")
            if "worker process(es) on the queue" in self._log():
                return self
            time.sleep(0.05)
        self.kill()
        raise LocalServiceError(f"the workers did not start within {timeout:.0f} s")

    def _log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL to the command and its engine processes at once."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """Stop gracefully (a running job is taken over after its lease)."""
        _terminate(self.process, self.kill)
        self.process = None

    def __enter__(self) -> LocalWorkers:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# -- the embedded default ---------------------------------------------------------------
# One per configurations folder (None: the bundled ones), started on first use.
_embedded: dict[Path | None, LocalService] = {}
_embedded_lock = threading.Lock()
#: Modules the embedded service cannot start without (all in the ``service`` extra).
_SERVICE_MODULES = ("fastapi", "uvicorn", "pypdfium2")


def embedded_service(configurations: str | os.PathLike[str] | None = None) -> LocalService:
    """The process's embedded LocalService for a configurations folder (the bundled ones
    when None), started on first use, stopped at exit."""
    folder = None if configurations is None else Path(configurations).resolve()
    if folder is not None and not folder.is_dir():
        raise FileNotFoundError(f"no configurations folder at {configurations}")
    with _embedded_lock:
        service = _embedded.get(folder)
        if service is None:
            require("service", *_SERVICE_MODULES,
                    feature="SERVICE_BASE_URL and SERVICE_API_KEY are not set, and the "
                            "embedded service")
            service = LocalService(configurations=folder)
            service.start()
            atexit.register(service.stop)
            _embedded[folder] = service
        elif service.process is None or service.process.poll() is not None:
            service.start()  # it died (or was stopped): same port, token and data
        return service


def _terminate(process: subprocess.Popen[bytes] | None, kill: Callable[[], None]) -> None:
    """SIGTERM and wait for the process to end; ``kill`` it when it lingers."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            kill()
