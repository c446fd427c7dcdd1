"""`servicetools doctor`: a configuration with planted defects, extracted by the real
local service, doctored from the saved batch: the page names the defects, the written
configuration passes ``servicetools config check`` and its trees pass more right values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from servicetools import Client, LocalService, audit, bundled, cli
from servicetools.report.doctor import build, take

pytestmark = pytest.mark.integration

TRUTH = bundled.TRUTH
#: The planted defects: a date rule that knows only ISO dates (the bundled invoices print
#: "25.04.2023", "Jan 23, 2023", "11/27/2025" and more), and an amount rule turned into a
#: plain-number regex that no printed total ("$31,282.61", "10.916,97 EUR") matches.
ISO_ONLY = {"name": "iso date only", "rules": [{"type": "date", "formats": ["%Y-%m-%d"]}]}
PLAIN_NUMBER = {"name": "plain number", "rules": [{"type": "regex", "pattern": r"\d+\.\d{2}"}]}
SMALL_NUMBER = {"name": "small number", "rules": [{"type": "number", "min": 0, "max": 10}]}
NAME = "invoices-planted"


def planted() -> dict[str, Any]:
    configuration = json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text())
    configuration["id"], configuration["name"] = "cfg-invoices-planted", NAME
    for target in configuration["extraction_targets"]:
        if target["name"] == "Invoice Date":
            target["validation_tree"]["rule_groups"] = [ISO_ONLY]
        elif target["name"] == "Total":
            target["validation_tree"]["rule_groups"][0] = PLAIN_NUMBER
    return configuration


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the saved batch, the configurations folder) of the bundled invoices' PDFs
    extracted with the planted configuration, on a service that knows it."""
    folder = tmp_path_factory.mktemp("configurations")
    (folder / "planted.json").write_text(json.dumps(planted(), indent=1), encoding="utf-8")
    # Names of their own, not the files' paths: the doctor splits documents into a mined
    # and a held-back half by name, the same wherever the repository lives.
    documents = [(f"invoices/{p.name}", p.read_bytes()) for p in
                 sorted((bundled.ROOT / "documents" / "invoices").glob("*.pdf"))]
    with LocalService(configurations=folder) as service:
        client = Client(base_url=service.base_url, api_key=service.token)
        batch = client.extract_many(documents, configuration_name=NAME, progress=False)
    saved = batch.save(tmp_path_factory.mktemp("runs") / "planted.jsonl")
    yield Path(saved), folder


def _findings_rows(page: str) -> list[list[str]]:
    """The cells of the page's findings table, row by row."""
    table = page.split("<h3>Findings</h3>", 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S) if "<td" in row]


def test_the_page_names_the_planted_groups_and_the_fix_passes_more(
        planted_run: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    batch, folder = planted_run
    out = tmp_path / "doctor"
    assert cli.main(["doctor", str(batch), "--truth", str(TRUTH), "--configurations",
                     str(folder), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "iso date only" in said and str(out / "index.html") in said
    page = (out / "index.html").read_text(encoding="utf-8")
    rows = _findings_rows(page)
    date_rows = [r for r in rows if r[0] == "Invoice Date"]
    assert ["rule rejects right values", "iso date only"] in [r[2:4] for r in date_rows]
    assert "plain number" in [r[3] for r in rows if r[0] == "Total"]
    assert "configuration: invoices-planted" in page and "<h3>Suggestions</h3>" in page
    assert "<h3>Rule groups as detectors</h3>" in page and "no truth" not in page
    assert not re.search(r"\b0\.\d{4,}", page)  # rates as percentages, no raw floats

    written = out / "configurations" / f"{NAME}.json"
    assert cli.main(["config", "check", str(written)]) == 0
    assert f"{written}: ok" in capsys.readouterr().out
    fixed = json.loads(written.read_text(encoding="utf-8"))
    before = {t["name"]: t for t in planted()["extraction_targets"]}
    after = {t["name"]: t for t in fixed["extraction_targets"]}
    changed = {name for name in before if before[name] != after[name]}
    assert "Total" in changed and changed <= {"Total", "Invoice Date"}
    assert PLAIN_NUMBER not in after["Total"]["validation_tree"]["rule_groups"]

    # The fixed trees pass more of the same values (no re-extraction: what-if).
    dr = audit.doctor(batch, TRUTH, configuration=folder / "planted.json")
    for target in changed:
        what = dr.what_if(target, after[target]["validation_tree"])
        assert what.pass_rate_after > what.pass_rate_before, target
    again = audit.doctor(batch, TRUTH, configuration=written)
    assert again.errors.loc["Total", "pass_rate"] > dr.errors.loc["Total", "pass_rate"]
    assert "plain number" not in set(again.findings["group"].dropna())


def test_without_truth_it_marks_the_suggestions_and_still_writes(
        planted_run: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    batch, folder = planted_run
    out = tmp_path / "doctor"
    assert cli.main(["doctor", str(batch), "--configurations", str(folder), "--out",
                     str(out), "--take-suggestions"]) == 0
    assert "no truth" in capsys.readouterr().out
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "No ground truth was given" in page
    assert "No truth: mined from confident values" in page
    written = sorted((out / "configurations").glob("*.json"))
    assert [p.name for p in written] == [f"{NAME}.json"]
    assert cli.main(["config", "check", *map(str, written)]) == 0


def test_truth_as_a_table_of_expected_values(planted_run: tuple[Path, Path],
                                            tmp_path: Path) -> None:
    batch, folder = planted_run
    expected = audit.truth(TRUTH)
    table = tmp_path / "truth.csv"
    expected.loc[expected["kind"] == "field", ["document", "target_name", "value"]].to_csv(
        table, index=False)
    made = build(batch, truth=table, configurations=folder, write=False)
    (checkup,) = made.checkups
    assert made.has_truth and checkup.doctor.labelled
    found = checkup.doctor.findings
    assert "iso date only" in set(found.loc[found["target"] == "Invoice Date", "group"])


def test_build_takes_every_best_suggestion_only_when_asked(
        planted_run: tuple[Path, Path]) -> None:
    batch, folder = planted_run
    some = build(batch, truth=TRUTH, configurations=folder, write=False)
    every = build(batch, truth=TRUTH, configurations=folder, take_suggestions=True,
                  write=False)
    (mine,), (all_of_them,) = some.checkups, every.checkups
    assert set(mine.changes) < set(all_of_them.changes)
    assert set(all_of_them.taken.loc[all_of_them.taken["action"] == "added", "target"]) == (
        set(all_of_them.changes) - set(mine.changes))


def test_a_missing_configuration_exits_2_saying_which(
        planted_run: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    batch, folder = planted_run
    # Without --configurations the bundled ones are looked in: they have no such one.
    assert cli.main(["doctor", str(batch), "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert f"no configuration {NAME!r}" in err and "'invoices', 'receipts'" in err
    assert not (tmp_path / "a").exists()

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "planted.json").write_text(json.dumps(planted()), encoding="utf-8")
    (broken / "half.json").write_text('{"name": "half", ', encoding="utf-8")
    assert cli.main(["doctor", str(batch), "--configurations", str(broken), "--out",
                     str(tmp_path / "b")]) == 2
    assert "half.json: cannot read the configuration" in capsys.readouterr().err

    assert cli.main(["doctor", str(tmp_path / "nope.jsonl"), "--configurations",
                     str(folder), "--out", str(tmp_path / "c")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err
    assert cli.main(["doctor", str(batch), "--configurations", str(tmp_path / "none"),
                     "--out", str(tmp_path / "d")]) == 2
    assert "no such folder of configurations" in capsys.readouterr().err


def test_an_invalid_configuration_is_refused_with_its_problems(
        planted_run: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    batch, _ = planted_run
    folder = tmp_path / "configurations"
    folder.mkdir()
    bad = planted()
    bad["extraction_targets"][0]["validation_tree"]["rule_groups"][0]["rules"] = [
        {"type": "regex", "pattern": "("}]
    (folder / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    assert cli.main(["doctor", str(batch), "--configurations", str(folder), "--out",
                     str(tmp_path / "out")]) == 2
    assert "bad.json: not a valid configuration" in capsys.readouterr().err


def test_take_replaces_a_rejecting_group_with_a_group_a_file_accepts() -> None:
    # No service: amounts that a number rule rejects; the doctor's fix of the same kind
    # is the mined "amount >= 0", which the configuration schema refuses (an amount rule
    # takes no bounds in a file): the bound is dropped.
    names = [f"d{i}.pdf" for i in range(40)]
    values = [f"{1000 + 37 * i:,}.50 EUR" for i in range(40)]
    fields = pd.DataFrame({"extraction_id": [f"e{i}" for i in range(40)],
                           "document_name": names, "target_name": "Total",
                           "value_id": [f"v{i}" for i in range(40)], "value_index": 0,
                           "value": values, "confidence": 0.95})
    truth = pd.DataFrame({"document": names, "target_name": "Total", "value": values})
    configuration = {"name": "c", "extraction_targets": [{
        "id": "t1", "type": "field", "name": "Total", "validation_tree": {
            "name": "total", "rule_groups": [{"name": "not empty", "rules": [
                {"type": "not_empty"}]}, SMALL_NUMBER]}}]}
    dr = audit.doctor(fields, truth, configuration=configuration)
    changes, taken = take(dr)
    groups = changes["Total"]["rule_groups"]
    assert groups[0]["name"] == "not empty" and SMALL_NUMBER not in groups
    assert {"type": "amount"} in [r for g in groups for r in g["rules"]]
    row = taken.set_index("target").loc["Total"]
    assert row["action"] == "replaced" and row["group"] == "small number"
    assert (row["pass_rate_before"], row["pass_rate_after"]) == (0.0, 1.0)
