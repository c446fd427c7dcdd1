"""The public API: one sorted ``__all__`` whose names resolve, and a light import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import servicetools

from .support.helpers import ROOT


def test_all_is_sorted_and_unique() -> None:
    assert servicetools.__all__ == sorted(servicetools.__all__)
    assert len(set(servicetools.__all__)) == len(servicetools.__all__)


def test_every_name_resolves() -> None:
    missing = [name for name in servicetools.__all__ if not hasattr(servicetools, name)]
    assert missing == []
    namespace: dict[str, object] = {}
    exec("from servicetools import *", namespace)  # what users will type
    assert set(servicetools.__all__) <= set(namespace)


@pytest.mark.integration
def test_import_stays_light() -> None:
    # In a fresh interpreter: the test process has long imported everything.
    code = "import json, sys, servicetools; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    loaded = json.loads(out.stdout)
    heavy = ("servicetools.service", "fastapi", "matplotlib", "ipywidgets")
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)] == []
