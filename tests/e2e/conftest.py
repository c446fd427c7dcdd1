"""JupyterLab on loopback, for the browser tests: a copy of the review notebook, its kernel
pointed at the test's local service through SERVICE_BASE_URL / SERVICE_API_KEY."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
import requests

from servicetools import LocalService

from ..support.browser import Lab

ROOT = Path(__file__).resolve().parents[2]
REVIEW_NOTEBOOK = ROOT / "notebooks" / "04-review-and-correct.ipynb"
#: How long JupyterLab may take to answer (a cold start imports a lot).
LAB_START_TIMEOUT = 60.0

# User settings of the throwaway JupyterLab: no news or update checks (they would reach
# the internet), no extension manager (PyPI), and every cell rendered, so the test can
# find a cell's output without scrolling it into view first.
_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/extensionmanager-extension/plugin.jupyterlab-settings": {"enabled": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: drives JupyterLab in Chromium (make e2e)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _write_settings(folder: Path) -> None:
    for name, values in _SETTINGS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's session (it shuts its kernels down), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def lab(tmp_path: Path, service: LocalService) -> Iterator[Lab]:
    """JupyterLab serving a folder with a copy of the review notebook."""
    root = tmp_path / "lab"
    root.mkdir()
    # Without its stored outputs, so only this run's can match what the test looks for.
    notebook = nbformat.read(REVIEW_NOTEBOOK, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(notebook, root / REVIEW_NOTEBOOK.name)
    home = tmp_path / "jupyter"
    _write_settings(home / "settings")
    token, port = secrets.token_hex(16), _free_port()
    env = {
        **os.environ,
        "SERVICE_BASE_URL": service.base_url,
        "SERVICE_API_KEY": service.token,
        # Nothing of the user's Jupyter or IPython set-up leaks in, nothing is left behind.
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
    }
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        f"--IdentityProvider.token={token}", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={home / 'settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # no PyPI look-ups
    ]
    if os.geteuid() == 0:  # containers and CI runners often run as root
        command.append("--allow-root")
    log = tmp_path / "jupyterlab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    running = Lab(url=url, token=token, root=root, log=log)
    try:
        deadline = time.monotonic() + LAB_START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n"
                            f"{running.log_tail()}")
            try:
                if requests.get(f"{url}/api/status", params={"token": token}, timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within {LAB_START_TIMEOUT:.0f} s:\n"
                            f"{running.log_tail()}")
            time.sleep(0.2)
        yield running
    finally:
        _stop(process)
