"""Debian's Chromium for the browser tests, and the JupyterLab they drive.

The arguments keep the browser to loopback: without the background-networking ones it
keeps trying (and failing) to reach Google's hosts from this closed network.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "Lab"]

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


@dataclass
class Lab:
    """A running JupyterLab: its address, token, folder of notebooks and log."""

    url: str
    token: str
    root: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
