"""A throwaway PostgreSQL server for the tests: Debian's binaries, a temporary folder,
a unix socket only (no TCP port to collide with or expose), stopped at the end.

``initdb`` and ``postgres`` refuse to run as root, so as root (CI, the dev image) the
cluster belongs to the ``postgres`` system user that Debian's package creates and its
commands run through ``runuser``; as anyone else they run as that user. Authentication
is ``trust``, which is safe here only because the socket's folder is closed to every
other user (mode 0700; root passes any mode).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

#: Where Debian's packages put each major version's programs (not on PATH by default).
_DEBIAN_BINARIES = "/usr/lib/postgresql/*/bin"
#: A server that loses its data on a crash starts and writes faster; tests keep nothing.
_SETTINGS = {
    "listen_addresses": "''",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message says why (a test's skip reason)."""


def find_binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres`` (newest version first)."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(os.path.realpath(on_path)).parent
    found = sorted(glob.glob(_DEBIAN_BINARIES),
                   key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit()
                   else 0, reverse=True)
    for folder in found:
        if (Path(folder) / "initdb").exists():
            return Path(folder)
    raise PostgresUnavailable("PostgreSQL is not installed (no initdb on PATH or in "
                              f"{_DEBIAN_BINARIES}): apt-get install postgresql")


class PostgresServer:
    """One cluster in a temporary folder; `start`, `new_database`, `stop`."""

    def __init__(self, *, durable: bool = False) -> None:
        #: ``durable``: commits wait for their WAL write (synchronous_commit on), so a
        #: crash of the server loses no acknowledged commit; the session's server skips
        #: that wait, for speed, since nothing crashes it.
        self.durable = durable
        self.bin = find_binaries()
        self._as: list[str] = []
        self._owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                self._owner = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable(
                    "running as root, and there is no 'postgres' user to run the server "
                    "as (initdb refuses root)") from None
            runuser = shutil.which("runuser")
            if runuser is None:
                raise PostgresUnavailable("running as root without runuser to start the "
                                          "server as the 'postgres' user")
            self._as = [runuser, "-u", "postgres", "--"]
        self.root = Path(tempfile.mkdtemp(prefix="servicetools-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        self.user = self._owner.pw_name if self._owner else pwd.getpwuid(os.geteuid()).pw_name
        self.running = False

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True, cwd=self.root,
                              stdin=subprocess.DEVNULL, timeout=120)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PostgresUnavailable(f"{Path(args[0]).name} failed ({done.returncode}): "
                                      f"{done.stderr.strip() or done.stdout.strip()}\n{tail}")

    def start(self) -> PostgresServer:
        os.chmod(self.root, 0o700)
        if self._owner is not None:
            os.chown(self.root, self._owner.pw_uid, self._owner.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user,
                  "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            durable = {"synchronous_commit": "on"} if self.durable else {}
            for name, value in {**_SETTINGS, **durable,
                                "unix_socket_directories": f"'{self.socket_dir}'"}.items():
                conf.write(f"{name} = {value}\n")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.root / "server.log"), "-w", "-t", "60", "start")
        self.running = True
        return self

    def restart(self) -> None:
        """Crash the server (``-m immediate``: no shutdown checkpoint, clients cut off)
        and start it again; it recovers from its WAL, as after a power cut of the
        process (the OS keeps what it was given, so fsync=off loses nothing here)."""
        pg_ctl = str(self.bin / "pg_ctl")
        self._run(pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self._run(pg_ctl, "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "start")

    @property
    def socket_path(self) -> Path:
        """The server's unix socket (libpq names it by the port: ``.s.PGSQL.5432``)."""
        return self.socket_dir / ".s.PGSQL.5432"

    def url(self, database: str = "postgres") -> str:
        """The libpq URL of a database on this server, through its socket."""
        return f"postgresql:///{database}?host={self.socket_dir}&user={self.user}"

    def new_database(self, prefix: str = "servicetools") -> str:
        """Create an empty database; its URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.running:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                      "-w", "stop")
            self.running = False
        shutil.rmtree(self.root, ignore_errors=True)
