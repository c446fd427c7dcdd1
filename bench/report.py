"""Bench: the report of a batch at 40, 2,000 and 10,000 documents, bounded plots against
the unbounded failure heatmap of before (issue 14).

Each run builds `servicetools.report.build` with truth for synthetic results (bench/
frames.py's: 20 fields and a 30 x 5 table each, about 5% failing validation; a truth
table where 1 field value in 20 differs) in a fresh process, and reports the wall time,
the peak resident memory of that process, the widest plot in pixels and the bytes of all
plots. ``unbounded`` is the same report with ``failure_heatmap(documents=None)``: one
column per document, as the demo's report drew it; at 10,000 documents its image would
pass Agg's 65,536 px limit, so it runs at 40 and 2,000 only.

    .venv/bin/python bench/report.py [--sizes 40 2000 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def one(size: int, bounded: bool) -> dict[str, float]:
    """Build the report in this process (a child of `main`); figures as a dict."""
    import matplotlib

    matplotlib.use("Agg")
    import frames as synthetic  # bench/frames.py
    import pandas as pd
    from PIL import Image

    from servicetools import Batch, report
    from servicetools.report import page

    if not bounded:
        page.HEATMAP_DOCUMENTS = None  # type: ignore[assignment]
    rng = random.Random(7)
    config = synthetic.configuration()
    results = [synthetic.result(rng, i, config) for i in range(size)]
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in results},
                  configuration={"name": config["name"], "id": config["id"]})
    rows = []
    for r in results:
        document = r["extraction_info"]["extraction_name"].rsplit("/", 1)[-1]
        for t in r["extracted_targets"]:
            if t["type"] == "field":
                value = t["extracted_values"][0]["extracted_field"]
                rows.append((document, f"Field {t['used_extraction_target_id'][-2:]}",
                             value if rng.random() > 0.05 else "wrong"))
    truth = pd.DataFrame(rows, columns=["document", "target_name", "value"])
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        made = report.build(batch, out, truth=truth)
        seconds = time.perf_counter() - start
        pngs = [p for p in made.files if p.suffix == ".png"]
        widest = max(Image.open(p).size[0] for p in pngs)
        weight = sum(p.stat().st_size for p in pngs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": seconds, "peak": peak, "widest": widest, "weight": weight}


def measure(size: int, bounded: bool) -> dict[str, float]:
    child = subprocess.run(
        [sys.executable, __file__, "--child", str(size), "bounded" if bounded else "unbounded"],
        capture_output=True, text=True, check=False)
    if child.returncode:
        return {"error": 1.0, "message": child.stderr.strip().splitlines()[-1]}  # type: ignore[dict-item]
    figures: dict[str, float] = json.loads(child.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[40, 2000, 10_000])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one(int(args.child[0]), args.child[1] == "bounded")))
        return
    print("report of a batch with truth: bounded plots (now) against the unbounded "
          "failure heatmap (before)\n")
    print(f"{'documents':>9}  {'plots':<9} {'seconds':>8} {'peak MiB':>9} {'widest px':>10} "
          f"{'plots KiB':>10}")
    for size in args.sizes:
        now = measure(size, True)
        before = measure(size, False) if size <= 2000 else None
        for label, m in (("bounded", now), ("unbounded", before)):
            if m is None:
                print(f"{size:>9,}  {label:<9} {'not run: one column per document passes '}"
                      "Agg's 65,536 px")
            elif "error" in m:
                print(f"{size:>9,}  {label:<9} failed: {m['message']}")
            else:
                print(f"{size:>9,}  {label:<9} {m['seconds']:>8.1f} {m['peak'] / 2**20:>9.0f} "
                      f"{int(m['widest']):>10,} {m['weight'] / 1024:>10,.0f}")
        if before and "error" not in before and "error" not in now:
            print(f"{'':>9}  bounded / unbounded: time {now['seconds'] / before['seconds']:.2f}x,"
                  f" peak memory {now['peak'] / before['peak']:.2f}x, widest plot "
                  f"{now['widest'] / before['widest']:.2f}x")


if __name__ == "__main__":
    main()
