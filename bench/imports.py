"""Bench: what starting a process of ours costs, in fresh interpreters.

The package imports its public names on first use (PEP 562), so a process that needs one
part pays for that part only. Each line is the best of ``--repeat`` fresh interpreters
(``python -c "import ..."``; CPU time of the child, which a busy machine disturbs less than
wall time), beside two baselines from the same run:

- ``python -c pass``: the interpreter alone, the floor;
- everything: ``import servicetools``, every public name touched and the wire's schemas,
  which is what any import of the package cost while ``servicetools/__init__.py`` (and
  the wire's) imported them eagerly.

    .venv/bin/python bench/imports.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EVERYTHING = ("import servicetools as st; [getattr(st, n) for n in st.__all__]; "
              "st.wire.objects")
#: (what it is, the code a fresh interpreter runs)
STARTS = (
    ("interpreter alone (floor)", "pass"),
    ("import servicetools", "import servicetools"),
    ("the client (Client, Batch, errors)", "from servicetools import Client, Batch, errors"),
    ("an engine worker (service.engine)", "import servicetools.service.engine"),
    ("the service's app", "import servicetools.service.app"),
    ("frames (pandas, pyarrow)", "from servicetools import frames"),
    ("the wire's schemas (jsonschema)", "from servicetools.wire import validate"),
    ("everything (the eager import before)", EVERYTHING),
)


def cpu_seconds(code: str) -> float:
    """User + system CPU time of a fresh interpreter running ``code``."""
    before = os.times()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    best = dict.fromkeys((code for _, code in STARTS), float("inf"))
    for _ in range(args.repeat):  # the starts take turns, so a busy moment spreads out
        for _, code in STARTS:
            best[code] = min(best[code], cpu_seconds(code))
    everything = best[EVERYTHING]
    print(f"CPU time of a fresh interpreter, best of {args.repeat}; ratio to everything:")
    for name, code in STARTS:
        print(f"  {name:40}{best[code]:7.2f} s   {best[code] / everything:5.2f}x")


if __name__ == "__main__":
    main()
