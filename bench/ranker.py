"""What a learned candidate ranker could gain over the rules, on the real sets.

The engine chooses a field's value among the candidates its labels found by rules
(fields._choose: label match, placement, shape, validation). A learned ranker would
choose among the same candidates, so it can only win where the rules chose wrong and a
right candidate was there. Per set this prints the fields decided among labelled
candidates, how many the rules got right, and how many had a right candidate at all:
the difference bounds the gain of any ranker. Fields without a labelled candidate (a
letterhead, a recipient's window, a date found by its shape) are decided elsewhere
and counted apart.

Run: ``.venv/bin/python bench/ranker.py [--root DIR] [--cache DIR]`` (a minute with the
OCR cache of bench/accuracy.py). The candidates are recorded by wrapping
``fields._choose``, which still decides: nothing the engine does is changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402  (the bench folder is not a package)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED)
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench")
    args = parser.parse_args(argv)

    from servicetools import bundled
    from servicetools.service.engine import extract_group, fields, group_targets

    configurations = {p.stem: json.loads(p.read_text())
                      for p in bundled.CONFIGURATIONS.glob("*.json")}
    offered: dict[str, list[str]] = {}
    choose = fields._choose

    def recording(candidates: list[Any], multiple: bool) -> Any:
        offered[candidates[0].target_id] = [c.text for c in candidates]
        return choose(candidates, multiple)

    fields._choose = recording  # type: ignore[assignment]
    counts: Counter[tuple[str, str]] = Counter()
    misses = []
    for name in realsets.SETS:
        if not (args.root / name).exists():
            print(f"skipping {name}: {args.root / name} not found", file=sys.stderr)
            continue
        for case in realsets.cases(name, args.root):
            configuration = configurations[case.configuration]
            document = realsets.load(case.path, case.content_type, args.cache,
                                     realsets.reader_version())
            offered.clear()
            chosen = {t.target_id: (t.values[0].text if t.values else "")
                      for group in group_targets(configuration)
                      for t in extract_group(document, group, configuration)}
            for target in configuration["extraction_targets"]:
                truth = case.truth.get(target.get("name"))
                if truth is None or target["id"] not in chosen:
                    continue
                right = realsets.right(chosen[target["id"]], truth)
                if target["id"] not in offered:
                    counts[(name, "other")] += 1
                    counts[(name, "other right")] += right
                    continue
                # Right after the choice (a sum's check may correct it), or offered.
                present = right or any(realsets.right(t, truth) for t in offered[target["id"]])
                counts[(name, "labelled")] += 1
                counts[(name, "rules right")] += right
                counts[(name, "right offered")] += present
                if present and not right:
                    misses.append(f"  {name} {case.name} {target.get('name')}: chose "
                                  f"{chosen[target['id']]!r}, truth {truth.value!r}")
    fields._choose = choose
    print("Fields decided among labelled candidates: the rules' choice beside the best any "
          "ranker could do (a right candidate offered)\n")
    print(f"{'set':14} {'fields':>7} {'rules right':>12} {'right offered':>14} "
          f"{'ranker gain at most':>20}   {'other fields':>12} {'right':>7}")
    for name in realsets.SETS:
        n, rules, best = (counts[(name, k)] for k in ("labelled", "rules right",
                                                      "right offered"))
        if not n:
            continue
        print(f"{name:14} {n:7d} {rules:7d} {rules / n:4.0%} {best:9d} {best / n:4.0%} "
              f"{best - rules:11d} ({(best - rules) / n:.1%})   "
              f"{counts[(name, 'other')]:12d} {counts[(name, 'other right')]:7d}")
    if misses:
        print("\nWhere a ranker could win:")
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
