"""Bench: audits at fleet scale, a Parquet dataset through DuckDB against frames in pandas.

A generated dataset of ``--values`` field values and three times as many table cells
(default 10 million and 30 million: 500,000 documents of 20 fields and a 12 x 5 table,
about 5% failing validation, in two batches a week apart whose confidence drifts a
little) is written in the dataset layout (`servicetools.frames.dataset`) straight from
numpy, a part at a time. Then, each in a fresh process (so peak memory is that
process's own: its high-water mark, VmHWM):

- ``dataset``: `frames.dataset(PATH)` and the audits given the dataset: DuckDB does the
  aggregation (`audit.scorecard`, `audit.calibration` against a truth of 2,000
  documents, `audit.drift` between the two batches);
- ``pandas``: today's path: the frames read into memory (`Dataset.fields`, `cells`),
  then the same audits over the frames.

Both run on the same data when ``--pandas-values`` equals ``--values``; by default the
pandas path runs on the first ``--pandas-values`` values (2 million) only, where it fits
in memory beside the rest of the machine's work, and both paths are also timed there so
the ratio is measured like for like. Goals (issue 16): the dataset path >= 5x faster and
<= 0.2x the peak memory of the pandas path, and the audits of 10 million values in under
a minute on 2 cores.

    .venv/bin/python bench/audit_scale.py [--values 10000000] [--pandas-values 2000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from servicetools.analysis.frames.dataset import SCHEMAS  # noqa: E402

FIELDS_PER_DOCUMENT = 20
ROWS, COLUMNS = 12, 5
HEADERS = ("Description", "Quantity", "Unit Price", "Tax Rate", "Amount")
DOCUMENTS_PER_PART = 25_000
TRUTH_DOCUMENTS = 2_000
BATCHES = ("2026-11-16", "2026-11-23")


# -- generating the dataset --------------------------------------------------------------------
def _text(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(pa.scalar(prefix), pc.cast(pa.array(numbers), pa.string()),
                                       "")


def _repeat(values: list[str], times: int, total: int) -> pa.Array:
    """``values`` each repeated ``times`` in turn, to ``total`` entries (dictionary
    encoded first: a handful of names over millions of rows)."""
    indices = np.tile(np.repeat(np.arange(len(values)), times), total // (times * len(values))
                      + 1)[:total]
    return pa.DictionaryArray.from_arrays(pa.array(indices.astype(np.int32)),
                                          pa.array(values)).cast(pa.string())


def _part(kind: str, first_doc: int, docs: int, seq0: int, drift: float,
          rng: np.random.Generator, batch: int) -> pa.Table:
    per_doc = FIELDS_PER_DOCUMENT if kind == "fields" else ROWS * COLUMNS
    n = docs * per_doc
    doc = np.repeat(np.arange(first_doc, first_doc + docs), per_doc)
    place = np.tile(np.arange(per_doc), docs)
    confidence = np.clip(rng.beta(6 + drift, 2, n), 0, 1).round(4)
    passed = rng.random(n) >= 0.05
    amount = rng.integers(1, 10_000_000, n)
    value = pc.binary_join_element_wise(_text("", amount // 100), _text("", amount % 100), ".")
    failed = np.flatnonzero(~passed)
    message = pc.binary_join_element_wise(pa.scalar("`"), value.take(pa.array(failed)),
                                          pa.scalar("` is not an amount"), "")
    offsets = np.zeros(n + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(~passed)
    messages = pa.ListArray.from_arrays(pa.array(offsets), message)
    condition = pa.array(np.where(passed, None, "`{value}` is not an amount"), type=pa.string())
    if kind == "fields":
        target = place
        names = [f"Field {i:02d}" for i in range(FIELDS_PER_DOCUMENT)]
    else:
        target = np.zeros(n, dtype=np.int64)
        names = ["Items"]
    columns = {
        "extraction_id": _text("e", doc), "extraction_name": _text("documents/doc-", doc),
        "document_id": _text("d", doc), "document_name": _text("doc-", doc),
        "configuration_id": pa.array(np.full(n, "cfg-1")),
        "configuration_name": pa.array(np.full(n, "invoices")),
        "target_id": _text("t-", target), "target_name": pa.array(np.array(names)[target]),
        "extraction_group": pa.array(np.full(n, "g")),
        "extracted_target_id": _text("x", doc * 100 + target),
        "value_index": pa.array(np.zeros(n, dtype=np.int64)),
        "value_id": _text(f"v{batch}-{kind[0]}", np.arange(seq0, seq0 + n)), "value": value,
        "found": pa.array(np.ones(n, dtype=bool)), "confidence": pa.array(confidence),
        "target_confidence": pa.array(confidence), "validation_passed": pa.array(passed),
        "validation_messages": messages, "condition": condition,
        "created": pa.array((1795000000 + doc).astype("datetime64[s]").astype(
            "datetime64[ns]")).cast(pa.timestamp("ns", tz="UTC")),
        "seq": pa.array(np.arange(seq0, seq0 + n, dtype=np.int64)),
    }
    if kind == "cells":
        columns.update({"table_id": _text("tb", doc), "row": pa.array(place // COLUMNS),
                        "column": pa.array(place % COLUMNS),
                        "header": pa.array(np.array(HEADERS)[place % COLUMNS])})
    schema = SCHEMAS[kind]
    return pa.Table.from_arrays([columns[name].cast(schema.field(name).type)
                                 if not isinstance(columns[name], pa.ChunkedArray)
                                 else columns[name] for name in schema.names], schema=schema)


def generate(root: Path, values: int) -> dict[str, int]:
    """The dataset of ``values`` field values in two batches; rows per table."""
    documents = values // FIELDS_PER_DOCUMENT
    rng = np.random.default_rng(16)
    counts = {"fields": 0, "cells": 0}
    per_batch = documents // len(BATCHES)
    for b, batch in enumerate(BATCHES):
        seqs = {"fields": 0, "cells": 0}
        for part, first in enumerate(range(0, per_batch, DOCUMENTS_PER_PART)):
            docs = min(DOCUMENTS_PER_PART, per_batch - first)
            for kind in ("fields", "cells"):
                table = _part(kind, b * per_batch + first, docs, seqs[kind], 0.4 * b, rng, b)
                folder = root / kind / f"batch={batch}"
                folder.mkdir(parents=True, exist_ok=True)
                pq.write_table(table, folder / f"part-{part:05d}.parquet", compression="zstd")
                seqs[kind] += len(table)
                counts[kind] += len(table)
        (root / "batches").mkdir(exist_ok=True)
        (root / "batches" / f"{batch}.json").write_text(json.dumps(
            {"batch": batch, "documents": per_batch, "failed": 0, "rows": dict(seqs)}))
    return counts


def truth_frame(documents: int) -> object:
    """Expected values of ``TRUTH_DOCUMENTS`` documents' fields: one in ten differs."""
    import pandas as pd

    rng = np.random.default_rng(7)
    picked = rng.choice(documents, size=min(TRUTH_DOCUMENTS, documents), replace=False)
    return pd.DataFrame({"document": [f"doc-{d}" for d in np.repeat(picked, 3)],
                         "target_name": [f"Field {i:02d}" for i in range(3)] * len(picked),
                         "value": "?"})


# -- writing: streamed against held ------------------------------------------------------------
def write(path: str, mode: str, results: int) -> dict[str, float]:
    """``results`` of bench/frames.py's kind (20 fields, a 30 x 5 table) into a dataset:
    ``stream`` adds each as it is made (as `extract_many(to=DatasetWriter(...))` does),
    ``batch`` holds them all in a `Batch` first and calls `frames.write_dataset`."""
    import random

    sys.path.insert(0, str(ROOT / "bench"))
    import frames as synthetic  # bench/frames.py

    from servicetools import Batch, frames

    rng = random.Random(5)
    config = synthetic.configuration()
    start = time.perf_counter()
    if mode == "stream":
        writer = frames.DatasetWriter(path, "b")
        for i in range(results):
            writer.add(synthetic.result(rng, i, config))
        writer.close()
    else:
        made = (synthetic.result(rng, i, config) for i in range(results))
        batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in made})
        frames.write_dataset(batch, path, "b")
    return {"total": time.perf_counter() - start,
            "peak_mib": peak_mib()}


# -- one run, in a child process ---------------------------------------------------------------
def run(path: str, mode: str, documents: int) -> dict[str, float]:
    from servicetools import audit, frames

    truth = truth_frame(documents)
    ds = frames.dataset(path)
    before, after = ds.select(BATCHES[0]), ds.select(BATCHES[1])
    times: dict[str, float] = {}
    start = time.perf_counter()
    if mode == "pandas":
        data_before = (before.fields(), before.cells())
        data_after = (after.fields(), after.cells())
        fields = pd_concat([data_before[0], data_after[0]])
        cells = pd_concat([data_before[1], data_after[1]])
        times["load"] = time.perf_counter() - start
        both: object = (fields, cells)
        first: object = data_before
        second: object = data_after
    else:
        both, first, second = ds, before, after
    mark = time.perf_counter()
    audit.scorecard(both)
    times["scorecard"] = time.perf_counter() - mark
    mark = time.perf_counter()
    audit.calibration(both, truth)
    times["calibration"] = time.perf_counter() - mark
    mark = time.perf_counter()
    audit.drift(first, second)
    times["drift"] = time.perf_counter() - mark
    times["total"] = time.perf_counter() - start
    times["peak_mib"] = peak_mib()
    return times


def peak_mib() -> float:
    """This process's peak resident memory. VmHWM, not ``ru_maxrss``: a child's
    ru_maxrss starts at its parent's size at fork, and the parent holds the generator's
    arrays; the high-water mark starts anew at exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pd_concat(parts: list[object]) -> object:
    import pandas as pd

    from servicetools.analysis.frames.dtypes import observed

    # Categoricals of the two batches unified, as one frame of both would hold them.
    return observed(pd.concat(parts, ignore_index=True))


def child(path: str, mode: str, documents: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", mode, path, str(documents)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def show(label: str, size: str, times: dict[str, float]) -> None:
    print(f"  {label:9}{size:>22}{times.get('load', 0.0):8.1f}s{times['scorecard']:9.1f}s"
          f"{times['calibration']:9.1f}s{times['drift']:8.1f}s{times['total']:9.1f}s"
          f"{times['peak_mib']:10.0f} MiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--values", type=int, default=10_000_000)
    parser.add_argument("--pandas-values", type=int, default=2_000_000)
    parser.add_argument("--write", type=int, default=10_000,
                        help="results written streamed and held, for the writer's memory")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--keep", help="write the datasets under this folder and keep them")
    args = parser.parse_args(argv)
    if args.child:
        mode, path, documents = args.child
        if mode in ("stream", "batch"):
            print(json.dumps(write(path, mode, int(documents))))
        else:
            print(json.dumps(run(path, mode, int(documents))))
        return

    root = Path(args.keep or tempfile.mkdtemp(prefix="audit-scale-"))
    try:
        sizes = sorted({args.pandas_values, args.values})
        print(f"audits of a generated dataset: scorecard, calibration (truth of "
              f"{TRUTH_DOCUMENTS:,} documents), drift between two batches; 2 cores: "
              f"{os.cpu_count()} here")
        print(f"  {'path':9}{'field values + cells':>22}{'load':>9}{'scorecard':>10}"
              f"{'calibrate':>10}{'drift':>9}{'total':>10}{'peak':>14}")
        results: dict[tuple[str, int], dict[str, float]] = {}
        for values in sizes:
            path = root / f"values-{values}"
            if not path.exists():
                start = time.perf_counter()
                counts = generate(path, values)
                written = sum(f.stat().st_size for f in path.rglob("*.parquet"))
                print(f"  (generated {counts['fields']:,} + {counts['cells']:,} rows, "
                      f"{written / 2**20:,.0f} MiB of Parquet, in "
                      f"{time.perf_counter() - start:.0f} s)")
            documents = values // FIELDS_PER_DOCUMENT
            size = f"{values / 1e6:g} M + {3 * values / 1e6:g} M"
            modes = ["dataset"] + (["pandas"] if values <= args.pandas_values else [])
            for mode in modes:
                results[(mode, values)] = child(str(path), mode, documents)
                show(mode, size, results[(mode, values)])
        small = args.pandas_values
        if ("pandas", small) in results:
            d, p = results[("dataset", small)], results[("pandas", small)]
            speed, memory = p["total"] / d["total"], d["peak_mib"] / p["peak_mib"]
            print(f"at {small / 1e6:g} M values: pandas / dataset time = {speed:5.1f}x "
                  f"(goal >= 5x) {'ok' if speed >= 5 else 'MISSED'};  dataset / pandas peak "
                  f"memory = {memory:4.2f}x (goal <= 0.2x) {'ok' if memory <= 0.2 else 'MISSED'}")
        print(f"writing {args.write:,} results (20 fields and a 30 x 5 table each) into a "
              "dataset:")
        for mode in ("stream", "batch"):
            figures = child(str(root / f"write-{mode}"), mode, args.write)
            label = ("streamed, as extract_many(to=...)" if mode == "stream"
                     else "held in a Batch, then write_dataset")
            print(f"  {label:36}{figures['total']:7.1f} s{figures['peak_mib']:9.0f} MiB peak")
        big = results[("dataset", args.values)]
        print(f"at {args.values / 1e6:g} M values: the dataset path's audits took "
              f"{big['total']:.1f} s (goal < 60 s) {'ok' if big['total'] < 60 else 'MISSED'}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
