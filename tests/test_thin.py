"""The thin install: without an extra, whatever needs it says which extra to install.

Each case runs in a fresh interpreter with the extras' modules blocked (``sys.modules``
entries set to None, as Python does for a module it must not import), so `make test`
checks the messages with every extra installed. `make test-wheel` runs this file again
in a venv that has the wheel and no extras at all, where nothing needs blocking.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import servicetools
from servicetools import extras

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration

#: Every module an extra provides that the core does not (pandas needs numpy).
BLOCKED = sorted({m for modules in extras.EXTRAS.values() for m in modules} - {"numpy"})
PRELUDE = "import sys\nfor _m in {blocked!r}:\n    sys.modules[_m] = None\n"


def run(code: str, cwd: Path, *, blocked: list[str] = BLOCKED) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SERVICE_BASE_URL", "SERVICE_API_KEY")}
    script = PRELUDE.format(blocked=blocked) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def test_the_core_imports_and_reads_results_without_any_extra(tmp_path: Path) -> None:
    result = run("""
        import json, sys
        import servicetools as st
        from servicetools import bundled
        fields = st.frames.fields({"extraction_info": {"extraction_id": "e1"},
                                   "extracted_targets": []})
        card = st.audit.scorecard(fields)
        truth = st.audit.truth(bundled.TRUTH)
        print(json.dumps([len(fields), len(truth) > 0,
                          sorted(m for m, module in sys.modules.items()
                                 if module is not None and m.split(".")[0] in
                                 ("fastapi", "matplotlib", "ipywidgets", "pypdfium2"))]))
        """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0, true, []]"


#: Python code that needs an extra, and the extra its error must name.
CODE_CASES = {
    "service package": ("service", "import servicetools.service"),
    "engine": ("service", "from servicetools.service.engine import load_document"),
    "embedded service": ("service", "from servicetools import Client\nClient.from_env()"),
    "plots": ("plots", "import servicetools as st\n"
                       "st.plots.confidence_histograms(st.frames.fields([]))"),
    "widgets": ("widgets", "import servicetools as st\nst.widgets.ResultView"),
    "page preview": ("widgets", "from servicetools.analysis.widgets.pages import first_page\n"
                                "first_page(b'%PDF-1.4 ...')"),
    "datagen": ("datagen", "import servicetools.datagen"),
    "several": ("service,plots,datagen", "from servicetools.extras import require_all\n"
                "require_all(['service', 'plots', 'datagen'], feature='all of it')"),
}
#: Command lines that need an extra, and the extras their message must name.
CLI_CASES = {
    "serve": (["serve", "--data-dir", "var"], "service"),
    "keys": (["keys", "list", "--data-dir", "var"], "service"),
    "config check": (["config", "check", "x.json"], "service"),
    "demo": (["demo", "--out", "report"], "service,plots"),
}
# One interpreter runs every case: a fresh one per case would cost a second each.
CASES_SCRIPT = """
import contextlib, io, json
from servicetools.extras import MissingExtra
from servicetools.cli import main
out = {}
for name, code in CODE:
    try:
        exec(code, {})
        out[name] = "no error"
    except MissingExtra as exc:
        out[name] = f"{exc.extra}: {exc}"
for name, argv in CLI:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(argv)
    out[name] = [status, err.getvalue()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    code = [(name, code) for name, (_, code) in CODE_CASES.items()]
    cli = [(name, argv) for name, (argv, _) in CLI_CASES.items()]
    result = run(f"CODE = {code!r}\nCLI = {cli!r}\n" + CASES_SCRIPT,
                 tmp_path_factory.mktemp("thin"))
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("case", CODE_CASES)
def test_a_missing_extra_names_what_to_install(case: str, outcomes: dict[str, Any]) -> None:
    extra, _ = CODE_CASES[case]
    said = outcomes[case]
    assert said.startswith(f"{extra}: "), said
    assert said.endswith(f"pip install 'servicetools[{extra}]'"), said


@pytest.mark.parametrize("case", CLI_CASES)
def test_the_command_line_names_the_extra(case: str, outcomes: dict[str, Any]) -> None:
    argv, extra = CLI_CASES[case]
    status, stderr = outcomes[case]
    assert status == 2, stderr
    assert stderr.startswith(f"servicetools {argv[0]}: "), stderr
    assert f"pip install 'servicetools[{extra}]'" in stderr


def test_several_extras_are_named_together(outcomes: dict[str, Any]) -> None:
    assert "all of it needs the extras 'service' and 'plots' and 'datagen'" in outcomes["several"]


@pytest.mark.skipif(not extras._installed("matplotlib"), reason="needs the plots extra")
def test_the_demo_without_only_the_service_extra_names_only_that(tmp_path: Path) -> None:
    blocked = [m for m in BLOCKED if m not in extras.EXTRAS["plots"]]
    result = run("import sys\nfrom servicetools.cli import main\n"
                 "sys.exit(main(['demo', '--out', 'report']))", tmp_path, blocked=blocked)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "needs the 'service' extra" in result.stderr
    assert "pip install 'servicetools[service]'" in result.stderr


def test_blocking_is_real() -> None:
    # The cases above would pass vacuously if blocking did not stop an import.
    result = run("import matplotlib", Path.cwd(), blocked=["matplotlib"])
    assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr


@pytest.mark.skipif(not os.environ.get("SERVICETOOLS_WHEEL_CHECK"),
                    reason="only in make test-wheel, which sets SERVICETOOLS_WHEEL_CHECK")
def test_this_run_uses_the_installed_wheel_without_extras() -> None:
    # The wheel job must test the wheel, not a checkout on sys.path, and truly no extras.
    assert "site-packages" in Path(servicetools.__file__).parts, servicetools.__file__
    for module in BLOCKED:
        with pytest.raises(ImportError):
            __import__(module)


@pytest.mark.skipif(importlib.util.find_spec("fastapi") is None,
                    reason="needs the service extra (without it, that is what keys names)")
def test_a_postgresql_database_without_the_scale_extra_names_it(tmp_path: Path) -> None:
    # The service itself runs without it (SQLite); only --database needs it.
    result = run("import sys\nfrom servicetools.cli import main\n"
                 "sys.exit(main(['keys', 'list', '--database', 'postgresql:///db']))",
                 tmp_path, blocked=list(extras.EXTRAS["scale"]))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "needs the 'scale' extra" in result.stderr
    assert "pip install 'servicetools[scale]'" in result.stderr
