"""`Client.from_env` (remote, or the embedded service) and ``servicetools extract``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servicetools import Batch, Client, LocalService, ServiceUnreachable
from servicetools.extract_cli import add_parser

from ..support.helpers import ROOT, make_invoice_pdf

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration


def test_from_env_remote(service: LocalService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_BASE_URL", service.base_url + "/")
    monkeypatch.setenv("SERVICE_API_KEY", service.token)
    with Client.from_env(retries=1) as client:
        assert client.base_url == service.base_url and client.local_service is None
        assert isinstance(client.vault.list(), list)
        assert service.token not in repr(client)


def test_from_env_needs_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_BASE_URL", "http://example.invalid")
    monkeypatch.delenv("SERVICE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="SERVICE_API_KEY"):
        Client.from_env()


def test_from_env_embedded_lives_for_the_process() -> None:
    # In a child process: the embedded service is started once, shared, and stopped at exit.
    code = """
import json
from servicetools import Client
a = Client.from_env()
a.close()  # closing a client leaves the shared service running
b = Client.from_env()
assert b.local_service is a.local_service and b.base_url == a.base_url
print(json.dumps({"docs": b.vault.list(), "dir": str(b.local_service.data_dir),
                  "pid": b.local_service.process.pid}))
"""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SERVICE_BASE_URL", "SERVICE_API_KEY")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["docs"] == []
    with pytest.raises(ProcessLookupError):  # stopped at exit ...
        os.kill(report["pid"], 0)
    assert not Path(report["dir"]).exists()  # ... and its temporary folder removed


def extract(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="servicetools")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["extract", *argv])
    result: int = args.func(args)
    return result


def test_extract_command(service: LocalService, monkeypatch: pytest.MonkeyPatch,
                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVICE_BASE_URL", service.base_url)
    monkeypatch.setenv("SERVICE_API_KEY", service.token)
    for i in range(3):
        (tmp_path / f"inv-{i}.pdf").write_bytes(make_invoice_pdf(number=f"INV-{i}"))
    out = tmp_path / "out" / "batch.jsonl"
    assert extract(["--configuration", "invoices", "--out", str(out),
                    str(tmp_path / "inv-*.pdf")]) == 0
    batch = Batch.load(out)
    assert len(batch.results) == 3 and not batch.failures
    captured = capsys.readouterr()
    assert "3 ended, 0 failed" in captured.out and str(out) in captured.out
    assert "extracting" in captured.err  # the progress bar

    (tmp_path / "bad.pdf").write_bytes(b"no")
    monkeypatch.chdir(tmp_path)
    assert extract(["--configuration-id", "cfg-invoices-1", "--no-progress",
                    "inv-0.pdf", "bad.pdf"]) == 1
    captured = capsys.readouterr()
    assert "failed (trigger): bad.pdf" in captured.err
    written = list((tmp_path / "runs").glob("cfg-invoices-1-*.jsonl"))
    assert len(written) == 1 and len(Batch.load(written[0])) == 2


def test_extract_command_without_service(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SERVICE_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SERVICE_API_KEY", "k")
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    # No service: nothing can be extracted, so the command fails as it does for bad usage.
    assert extract(["--configuration", "invoices", "--no-progress", "a.pdf"]) == 2
    assert "cannot reach the service" in capsys.readouterr().err
    assert extract(["--configuration", "invoices", "--no-progress", "*.png"]) == 2
    assert "no file matches '*.png'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        extract(["--configuration", "a", "--configuration-id", "b", "x.pdf"])
    capsys.readouterr()


def test_dead_service_stops_the_batch_at_once(tmp_path: Path) -> None:
    client = Client(base_url="http://127.0.0.1:9", api_key="k", retries=0)
    with pytest.raises(ServiceUnreachable, match="cannot reach") as raised:
        client.extract_many([b"%PDF-1.4"] * 30, configuration_name="invoices",
                            concurrency=2, progress=False)
    assert "none of the 30 was extracted" in str(raised.value.__notes__)


def test_your_own_configurations_on_the_embedded_service(tmp_path: Path) -> None:
    # A copy of the bundled invoice configuration under a name of one's own.
    from servicetools import bundled

    mine = json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text(encoding="utf-8"))
    mine.update(id="cfg-my-invoices", name="my-invoices")
    folder = tmp_path / "configurations"
    folder.mkdir()
    (folder / "my-invoices.json").write_text(json.dumps(mine), encoding="utf-8")
    (tmp_path / "inv.pdf").write_bytes(make_invoice_pdf(number="INV-MINE"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("SERVICE_BASE_URL", "SERVICE_API_KEY")}
    run = subprocess.run(
        [sys.executable, "-m", "servicetools", "extract", "--configurations", str(folder),
         "--configuration", "my-invoices", "--no-progress", "--out", "b.jsonl", "inv.pdf"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stderr
    batch = Batch.load(tmp_path / "b.jsonl")
    assert batch.configuration["name"] == "my-invoices" and len(batch.results) == 1
    # That service knows only the folder's configurations, and says so.
    refused = subprocess.run(
        [sys.executable, "-m", "servicetools", "extract", "--configurations", str(folder),
         "--configuration", "invoices", "--no-progress", "inv.pdf"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180)
    assert refused.returncode == 2
    assert "Known: my-invoices" in refused.stderr


def test_own_configurations_are_for_the_embedded_service(
        service: LocalService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SERVICE_BASE_URL", service.base_url)
    monkeypatch.setenv("SERVICE_API_KEY", service.token)
    with pytest.raises(ValueError, match="configurations= is for the embedded service"):
        Client.from_env(configurations=tmp_path)
