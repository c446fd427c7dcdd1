"""The saved-batch file as the wire defines it: written and read back, refused loudly, and
its name spelt in one place only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servicetools.wire import saved_batch

FAILURE = {"document": "b.txt", "stage": "trigger", "reason": "not a PDF", "code": "x",
           "http_status": 415, "extraction_id": None, "details": {"k": [1]}}


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_written_and_read_back(tmp_path: Path) -> None:
    results = {"e2": {"extracted_targets": []}, "e1": {"extraction_info": {"x": "é"}}}
    path = saved_batch.write(tmp_path / "sub" / "b.jsonl", results, {"e1": "a.pdf"},
                             [FAILURE], configuration={"name": "invoices", "id": None},
                             timings={"total_s": 1.5}, meta={"service": "local"})
    lines = _lines(path)
    assert [line["record"] for line in lines] == [saved_batch.HEADER, saved_batch.RESULT,
                                                  saved_batch.RESULT, saved_batch.FAILURE]
    assert lines[0] == {"record": "header", "format": saved_batch.FORMAT,
                        "version": saved_batch.VERSION,
                        "configuration": {"name": "invoices", "id": None},
                        "timings": {"total_s": 1.5}, "meta": {"service": "local"},
                        "results": 2, "failures": 1}
    assert lines[1]["document"] is None and lines[2]["document"] == "a.pdf"
    saved = saved_batch.read(path)
    assert list(saved.results) == ["e2", "e1"] and saved.results == results
    assert saved.documents == {"e1": "a.pdf"}
    assert saved.failures == [FAILURE]
    assert (saved.configuration, saved.timings, saved.meta) == (
        {"name": "invoices", "id": None}, {"total_s": 1.5}, {"service": "local"})
    assert saved_batch.is_header_line(path.read_text(encoding="utf-8").splitlines()[0])
    assert not list(tmp_path.glob("sub/.*.tmp"))  # the temporary file was renamed


@pytest.mark.parametrize(("change", "message"), [
    (lambda ls: ls[:-1], "announces 1 results and 1 failures but the file holds 1 and 0"),
    (lambda ls: [ls[0].replace('"version":1', '"version":7'), *ls[1:]],
     r"servicetools.batch version 7; this reads 1"),
    (lambda ls: ['{"a": 1}', *ls[1:]], ":1: not a servicetools.batch file"),
    (lambda ls: [*ls[:2], ls[2].replace('"stage"', '"stage_"')],
     r":3: bad failure record: unknown field 'stage_', no 'stage'"),
    (lambda ls: [ls[0], ls[1].replace('"result"', '"other"'), ls[2]],
     ":2: unknown record 'other'"),
    (lambda ls: [ls[0], ls[1].replace('"data"', '"date"'), ls[2]],
     ":2: bad result record"),
    (lambda ls: [ls[0], "{", ls[2]], ":2: not JSON"),
    (lambda ls: [], "empty file, not a servicetools.batch file"),
])
def test_what_is_not_a_whole_saved_batch_is_refused(tmp_path: Path, change, message: str
                                                     ) -> None:
    path = saved_batch.write(tmp_path / "b.jsonl", {"e1": {}}, {}, [FAILURE])
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(f"{line}\n" for line in change(lines)), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        saved_batch.read(path)


def test_header_and_failure_checks() -> None:
    good = {"record": "header", "format": saved_batch.FORMAT, "version": saved_batch.VERSION}
    assert saved_batch.header_problem(good) is None
    assert saved_batch.header_problem([]) == "not a servicetools.batch file"
    assert saved_batch.header_problem({**good, "record": "result"}) is not None
    assert saved_batch.failure_fields({"record": "failure", "document": "a", "stage": "read",
                                       "reason": "r"}) == {"document": "a", "stage": "read",
                                                           "reason": "r"}
    with pytest.raises(ValueError, match="not an object"):
        saved_batch.failure_fields(["a"])
    assert set(saved_batch.REQUIRED_FAILURE_FIELDS) <= set(saved_batch.FAILURE_FIELDS)
    assert saved_batch.LINE_KINDS == ("header", "result", "failure")


def test_the_format_is_named_in_one_place() -> None:
    # Writer and reader agree because neither spells the name itself.
    # The package as imported: the checkout's, or the installed wheel's under test-wheel.
    package = Path(saved_batch.__file__).resolve().parents[1]
    spelt = sorted(str(p.relative_to(package.parent)) for p in package.rglob("*.py")
                   if saved_batch.FORMAT in p.read_text(encoding="utf-8"))
    assert spelt == ["servicetools/wire/saved_batch.py"]
