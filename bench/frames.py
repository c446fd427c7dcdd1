"""Bench: extracted data -> fields and cells frames, against json_normalize and json.loads.

10,000 synthetic results (20 fields and a 30-row, 5-column table each, values with their
own confidence, about 5% failing validation) go through, in one run:

- ``frames``: `servicetools.frames.fields` and `cells` (ids, names, headers, conditions,
  categoricals, nullable booleans);
- ``json_normalize``: what a user would write: one `pandas.json_normalize` over the
  values with target metadata, one over the extraction infos, a merge, and a split into
  field values and table cells;
- ``json.loads``: parsing the serialised payload, the floor for any Python converter.

Time is the best of ``--repeat`` rounds (the three take turns); peak memory is
measured with tracemalloc in a separate run (tracemalloc slows allocation, so it never
times). Goals (issue 16; issue 5 asked for 5x and 3x): frames >= 8x faster than
json_normalize, <= 0.25x the time of json.loads, peak memory <= 2x the frames' own size.

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
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servicetools import frames  # noqa: E402  (after the path fix for a plain checkout)

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


def with_json_loads(text: str) -> Any:
    return json.loads(text)


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    args = parser.parse_args(argv)

    text = payload(args.results)
    results = json.loads(text)
    fields, cells = with_frames(results)
    print(f"{args.results:,} results, {len(text) / 2**20:.0f} MiB of JSON -> "
          f"{len(fields):,} field rows, {len(cells):,} cell rows")

    times = best_times({"frames": lambda: with_frames(results),
                        "json_normalize": lambda: with_json_normalize(results),
                        "json.loads": lambda: with_json_loads(text)}, args.repeat)
    t_frames, t_normalize, t_loads = times["frames"], times["json_normalize"], times[
        "json.loads"]
    own = frame_size((fields, cells))
    del fields

    print(f"{'':16}{'time':>10}{'peak memory':>16}")
    peaks: dict[str, int] = {}
    if not args.no_memory:
        peaks["frames"] = peak_memory(lambda: with_frames(results))
        peaks["json_normalize"] = peak_memory(lambda: with_json_normalize(results))
        peaks["json.loads"] = peak_memory(lambda: with_json_loads(text))
    for name, seconds in (("frames", t_frames), ("json_normalize", t_normalize),
                          ("json.loads", t_loads)):
        peak = mib(peaks[name]) if name in peaks else "         -"
        print(f"{name:16}{seconds:9.2f}s{peak:>16}")
    print(f"frames' own size (memory_usage deep): {mib(own).strip()}")
    print("ratios:")
    speedup = t_normalize / t_frames
    vs_loads = t_frames / t_loads
    print(f"  json_normalize / frames time = {speedup:5.1f}x  (goal >= 8x)  "
          f"{'ok' if speedup >= 8 else 'MISSED'}")
    print(f"  frames / json.loads time     = {vs_loads:5.2f}x  (goal <= 0.25x)  "
          f"{'ok' if vs_loads <= 0.25 else 'MISSED'}")
    if peaks:
        mem = peaks["frames"] / own
        print(f"  frames peak / frames size    = {mem:5.2f}x  (goal <= 2x)  "
              f"{'ok' if mem <= 2 else 'MISSED'}")
        print(f"  json_normalize peak / frames peak = "
              f"{peaks['json_normalize'] / peaks['frames']:5.1f}x")
    id_columns(cells, args.repeat)


if __name__ == "__main__":
    main()
