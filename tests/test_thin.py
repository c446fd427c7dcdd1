"""The thin install: without an extra, whatever needs it says which extra to install.

Each case runs in a fresh interpreter with the extras' modules blocked (``sys.modules``
entries set to None, as Python does for a module it must not import), so `make test`
checks the messages with every extra installed. `make test-wheel` runs this file again
in a venv that has the wheel and no extras at all, where nothing needs blocking.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import servicetools
from servicetools import extras

#: Every module an extra provides that the core does not (pandas needs numpy).
BLOCKED = sorted({m for modules in extras.EXTRAS.values() for m in modules} - {"numpy"})
PRELUDE = "import sys\nfor _m in {blocked!r}:\n    sys.modules[_m] = None\n"


def run(code: str, cwd: Path, *, blocked: list[str] = BLOCKED) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SERVICE_BASE_URL", "SERVICE_API_KEY")}
    script = PRELUDE.format(blocked=blocked) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def missing_extra(code: str, cwd: Path) -> str:
    """What ``code`` raised, as ``"<extra>: <message>"``; it must raise MissingExtra."""
    result = run(f"""
        from servicetools.extras import MissingExtra
        try:
{textwrap.indent(textwrap.dedent(code), " " * 12)}
        except MissingExtra as exc:
            print(f"{{exc.extra}}: {{exc}}")
        else:
            print("no error")
        """, cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


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


@pytest.mark.parametrize(("extra", "code"), [
    ("service", "import servicetools.service"),
    ("service", "from servicetools.service.engine import load_document"),
    ("service", "from servicetools import Client\nClient.from_env()"),
    ("plots", "import servicetools as st\nst.plots.confidence_histograms(st.frames.fields([]))"),
    ("widgets", "import servicetools as st\nst.widgets.ResultView"),
    ("widgets", "from servicetools.analysis.widgets.pages import first_page\n"
                "first_page(b'%PDF-1.4 ...')"),
    ("datagen", "import servicetools.datagen"),
])
def test_a_missing_extra_names_what_to_install(extra: str, code: str, tmp_path: Path) -> None:
    said = missing_extra(code, tmp_path)
    assert said.startswith(f"{extra}: "), said
    assert f"pip install 'servicetools[{extra}]'" in said


@pytest.mark.parametrize(("argv", "extra"), [
    (["serve", "--data-dir", "var"], "service"),
    (["keys", "list", "--data-dir", "var"], "service"),
    (["config", "check", "x.json"], "service"),
    (["demo", "--out", "report"], "plots"),
])
def test_the_command_line_names_the_extra(argv: list[str], extra: str, tmp_path: Path) -> None:
    result = run(f"import sys\nfrom servicetools.cli import main\nsys.exit(main({argv!r}))",
                 tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert f"pip install 'servicetools[{extra}]'" in result.stderr
    assert result.stderr.startswith(f"servicetools {argv[0]}: ")


def test_the_demo_without_the_service_extra_says_so(tmp_path: Path) -> None:
    # With the plots extra present, the next thing the demo needs is the embedded service.
    blocked = [m for m in BLOCKED if m not in extras.EXTRAS["plots"]]
    result = run("import sys\nfrom servicetools.cli import main\n"
                 "sys.exit(main(['demo', '--out', 'report']))", tmp_path, blocked=blocked)
    assert result.returncode == 2, (result.stdout, result.stderr)
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
