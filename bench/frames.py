"""Bench: extracted data -> fields and cells frames, against json_normalize and json.loads.

10,000 synthetic results (20 fields and a 30-row, 5-column table each, values with their
own confidence, about 5% failing validation), saved as `Batch.save` writes them, go
through, in one run:

- ``frames (file)``: `servicetools.frames.fields_and_cells` of the saved batch file,
  parsing included (pyarrow's JSON reader straight into columns: `frames.batch_file`);
- ``frames (dicts)``: `servicetools.frames.fields` and `cells` of the parsed results (ids,
  names, headers, conditions, categoricals, nullable booleans), the careful pass;
- ``json_normalize``: what a user would write: one `pandas.json_normalize` over the
  values with target metadata, one over the extraction infos, a merge, and a split into
  field values and table cells (of the parsed results: its parse is not counted);
- ``json.loads``: parsing the saved batch's lines, the floor for any converter of dicts.

The two frames must be equal (checked first). Time is the best of ``--repeat`` rounds
(the runs take turns); peak memory is measured with tracemalloc in a separate run
(tracemalloc slows allocation, so it never times), and for the file read, whose memory
pyarrow allocates outside tracemalloc's sight, as the growth of a fresh process's
resident high-water mark. Goals (issue 16; issue 5 asked for 5x and 3x): frames >= 8x
faster than json_normalize, <= 0.25x the time of json.loads, peak memory <= 2x the
frames' own size.

Then the id columns of the cells (issue 14: strings, not categoricals): their memory and
the time of what analysts do with an id (a groupby, a filter on one id, ``isin`` of 100),
as the frames build them and cast to the other dtype, for the figures in the docs.

    .venv/bin/python bench/frames.py [--results 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servicetools import frames  # noqa: E402  (after the path fix for a plain checkout)
from servicetools.client.batch import Batch  # noqa: E402

N_FIELDS = 20
N_ROWS = 30
HEADERS = ("Description", "Quantity", "Unit Price", "Tax Rate", "Amount")


def _id(rng: random.Random) -> str:
    return uuid.UUID(int=rng.getrandbits(128)).hex


def configuration() -> dict[str, Any]:
    targets: list[dict[str, Any]] = [
        {"id": f"t-field-{i:02d}", "type": "field", "name": f"Field {i:02d}",
         "extraction_group_id": "g-header", "search_area": "all", "search_area_type": "all",
         "creation_unix_timestamp": 1767225600.0, "is_multiple": False,
         "validation_tree": {"name": f"field {i}", "rule_groups": []}}
        for i in range(N_FIELDS)]
    targets.append({
        "id": "t-items", "type": "table", "name": "Items", "extraction_group_id": "g-items",
        "search_area": "all", "search_area_type": "all",
        "creation_unix_timestamp": 1767225600.0,
        "header_schema": [{"id": f"h-{n}", "name": n, "position": p,
                           "header_matching_validation_tree": {"name": n, "rule_groups": []},
                           "extracted_value_validation_tree": {"name": n, "rule_groups": []}}
                          for p, n in enumerate(HEADERS)]})
    return {"id": "cfg-bench-1", "name": "bench", "extraction_targets": targets}


def _value(rng: random.Random, text: str) -> tuple[bool, list[str], float]:
    if rng.random() < 0.05:
        return False, [f"`{text}` is not an amount"], round(rng.uniform(0.05, 0.6), 4)
    return True, [], round(rng.uniform(0.6, 0.99), 4)


def result(rng: random.Random, n: int, config: dict[str, Any]) -> dict[str, Any]:
    extraction_id = _id(rng)
    targets: list[dict[str, Any]] = []
    for i in range(N_FIELDS):
        text = f"{rng.randint(1, 99999):,}.{rng.randint(0, 99):02d}"
        passed, messages, conf = _value(rng, text)
        targets.append({
            "id": _id(rng), "used_extraction_group_id": "g-header",
            "used_extraction_target_id": f"t-field-{i:02d}", "type": "field",
            "confidence": conf,
            "extracted_values": [{"id": _id(rng), "extracted_field": text,
                                  "validation_passed": passed, "validation_messages": messages,
                                  "confidence": conf}]})
    table_id = _id(rng)
    cells = []
    for row in range(N_ROWS):
        for column in range(len(HEADERS)):
            text = (f"Item {rng.randint(1, 500)}\nsecond line" if column == 0
                    else f"{rng.uniform(0, 999):.2f}")
            passed, messages, conf = _value(rng, text)
            cells.append({"id": _id(rng), "extracted_cell": text, "table_id": table_id,
                          "row": row, "column": column, "validation_passed": passed,
                          "validation_messages": messages, "confidence": conf})
    targets.append({"id": _id(rng), "used_extraction_group_id": "g-items",
                    "used_extraction_target_id": "t-items", "type": "table",
                    "confidence": 0.9, "extracted_values": cells})
    when = 1795000000.0 + n
    return {
        "id": _id(rng), "user_id": "u-bench",
        "extraction_info": {
            "id": _id(rng), "api_key_hash": "0" * 64, "extraction_id": extraction_id,
            "extraction_name": f"documents/doc-{n:05d}.pdf", "trigger_user_id": "u-bench",
            "trigger_unix_timestamp": when, "trigger_type": "async", "input_type": "raw",
            "extracted_data_saved": True, "used_extraction_configuration_id": config["id"],
            "used_extraction_configuration_name": config["name"], "preview": False},
        "extracted_targets": targets, "creation_unix_timestamp": when + 1.5,
        "extracted_document_storage_id": _id(rng), "used_extraction_configuration": config,
    }


def payload(n: int, seed: int = 5) -> str:
    rng = random.Random(seed)
    config = configuration()
    return json.dumps([result(rng, i, config) for i in range(n)])


# -- the three ways --------------------------------------------------------------------------
def with_frames(results: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    return frames.fields(results), frames.cells(results)


def with_json_normalize(results: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    values = pd.json_normalize(
        results, record_path=["extracted_targets", "extracted_values"],
        meta=["id", ["extracted_targets", "used_extraction_target_id"],
              ["extracted_targets", "type"], ["extracted_targets", "confidence"]],
        meta_prefix="result.", errors="ignore")
    infos = pd.json_normalize([r["extraction_info"] for r in results])
    infos["result.id"] = [r["id"] for r in results]
    merged = values.merge(infos, on="result.id", how="left")
    is_field = merged["result.extracted_targets.type"] == "field"
    field_frame = merged.loc[is_field].drop(columns=["extracted_cell", "table_id", "row",
                                                     "column"])
    cell_frame = merged.loc[~is_field].drop(columns=["extracted_field"])
    return field_frame, cell_frame


# -- measuring -------------------------------------------------------------------------------
def best_times(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best time of each run over ``repeat`` rounds, the runs taking turns in each round
    (so a busy moment of the machine does not fall on one of them only)."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            out = run()
            best[name] = min(best[name], time.perf_counter() - start)
            del out
    return best


def peak_memory(run: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        out = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return peak


def frame_size(pair: tuple[pd.DataFrame, pd.DataFrame]) -> int:
    return int(sum(f.memory_usage(deep=True).sum() for f in pair))


def mib(n: float) -> str:
    return f"{n / 2**20:8.1f} MiB"


def _id_uses(frame: pd.DataFrame, name: str, one: Any, some: list[Any]
             ) -> dict[str, Callable[[], Any]]:
    column = frame[name]
    return {"groupby": lambda: frame.groupby(name, observed=True, sort=False)[
                "confidence"].mean(),
            "eq": lambda: frame[column == one],
            "isin": lambda: frame[column.isin(some)]}


def id_columns(cells: pd.DataFrame, repeat: int) -> None:
    """Memory and speed of the cells' id columns as strings and as categoricals."""
    print(f"cells' id columns, {len(cells):,} rows: memory; best of {repeat}: groupby mean, "
          f"== one id, isin 100 ids")
    for name in ("extraction_id", "document_id", "extracted_target_id", "table_id"):
        column = cells[name]
        one, some = column.iloc[len(column) // 2], list(column.drop_duplicates()[:100])
        for dtype in (column.dtype, "category" if column.dtype != "category" else frames.STRING):
            frame = cells[["confidence"]].assign(**{name: column.astype(dtype)})
            times = best_times(_id_uses(frame, name, one, some), repeat)
            label = "category" if dtype == "category" else str(dtype)
            print(f"  {name:20}{label:>9}{mib(frame[name].memory_usage(deep=True))}"
                  + "".join(f"{times[k] * 1e3:8.1f} ms" for k in ("groupby", "eq", "isin")))


def save_batch(results: list[dict[str, Any]], folder: Path) -> Path:
    """The results as the file `Batch.save` writes (what `extract_many` leaves behind)."""
    batch = Batch(results={r["extraction_info"]["extraction_id"]: r for r in results},
                  configuration={"name": "bench", "id": "cfg-bench-1"})
    return batch.save(folder / "batch.jsonl")


def with_frames_from_file(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return frames.fields_and_cells(path)


def with_json_loads_lines(path: Path) -> list[Any]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def peak_rss_of_file_read(path: Path) -> int:
    """Peak resident memory that `with_frames_from_file` adds, in a fresh interpreter
    (pyarrow allocates outside tracemalloc's sight, so the process's own high-water
    mark is the measure)."""
    out = subprocess.run([sys.executable, __file__, "--peak-of", str(path)], check=True,
                         capture_output=True, text=True)
    return int(out.stdout.strip())


def _peak_of(path: str) -> None:
    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # Linux: the high-water mark starts again
    pair = with_frames_from_file(Path(path))
    peak = _status_kib("VmHWM")
    del pair
    print((peak - before) * 1024)


def _status_kib(key: str) -> int:
    """A size in KiB from /proc/self/status (VmRSS: resident now, VmHWM: its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status (Linux only)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    parser.add_argument("--peak-of", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peak_of:
        _peak_of(args.peak_of)
        return

    results = json.loads(payload(args.results))
    with tempfile.TemporaryDirectory() as folder:
        path = save_batch(results, Path(folder))
        run(args, results, path)


def run(args: argparse.Namespace, results: list[dict[str, Any]], path: Path) -> None:
    fields, cells = with_frames(results)
    print(f"{args.results:,} results, {path.stat().st_size / 2**20:.0f} MiB saved batch -> "
          f"{len(fields):,} field rows, {len(cells):,} cell rows")
    from_file = with_frames_from_file(path)
    pd.testing.assert_frame_equal(from_file[0], fields)  # the two readers agree
    pd.testing.assert_frame_equal(from_file[1], cells)
    del from_file

    runs = {"frames (file)": lambda: with_frames_from_file(path),
            "frames (dicts)": lambda: with_frames(results),
            "json_normalize": lambda: with_json_normalize(results),
            "json.loads": lambda: with_json_loads_lines(path)}
    times = best_times(runs, args.repeat)
    own = frame_size((fields, cells))
    del fields

    print(f"{'':16}{'time':>10}{'peak memory':>16}")
    peaks: dict[str, int] = {}
    if not args.no_memory:
        peaks["frames (file)"] = peak_rss_of_file_read(path)
        peaks["frames (dicts)"] = peak_memory(lambda: with_frames(results))
        peaks["json_normalize"] = peak_memory(lambda: with_json_normalize(results))
        peaks["json.loads"] = peak_memory(lambda: with_json_loads_lines(path))
    for name, seconds in times.items():
        peak = mib(peaks[name]) if name in peaks else "         -"
        print(f"{name:16}{seconds:9.2f}s{peak:>16}")
    print("  frames (file): `frames.fields_and_cells` of the saved batch, parsing included "
          "(peak: the process's resident high-water mark)")
    print("  frames (dicts): `frames.fields` and `cells` of the parsed results")
    print("  json.loads: of the saved batch's lines, the floor of any reader of dicts")
    print(f"frames' own size (memory_usage deep): {mib(own).strip()}")
    t_normalize, t_loads = times["json_normalize"], times["json.loads"]
    for name in ("frames (file)", "frames (dicts)"):
        goals = "" if name == "frames (file)" else "  (goals are the file's)"
        print(f"ratios, {name}:{goals}")
        speedup = t_normalize / times[name]
        vs_loads = times[name] / t_loads
        print(f"  json_normalize / frames time = {speedup:5.1f}x  (goal >= 8x)  "
              f"{'ok' if speedup >= 8 else 'MISSED'}")
        print(f"  frames / json.loads time     = {vs_loads:5.2f}x  (goal <= 0.25x)  "
              f"{'ok' if vs_loads <= 0.25 else 'MISSED'}")
        if name in peaks:
            mem = peaks[name] / own
            print(f"  frames peak / frames size    = {mem:5.2f}x  (goal <= 2x)  "
                  f"{'ok' if mem <= 2 else 'MISSED'}")
    if peaks:
        print(f"json_normalize peak / frames (dicts) peak = "
              f"{peaks['json_normalize'] / peaks['frames (dicts)']:5.1f}x")
    id_columns(cells, args.repeat)


if __name__ == "__main__":
    main()
