"""Documents of the committed dev set through the local service, checked against data/truth.

One or two documents of each kind (text PDF, PNG, JPEG, image-only PDF) that the engine
reads right; every field value and table cell is asserted exactly, as printed. The few
values the engine is known to miss on scans are named in `KNOWN_MISSES` and left out
of the comparison, so any other miss fails the test.
"""

import json
from typing import Any

import pytest

from servicetools import bundled

from ..support.helpers import Api, raw_trigger

DATA = bundled.ROOT
KNOWN_MISSES: dict[str, set[str]] = {
    # OCR drops the tax line's amount and the space after a comma in one description.
    "inv-0011": {"Tax", "Line Items/0/4/0"},
    # OCR reads "0,21 EUR" as "0,21EUR" (same amount, but not as printed).
    "rcp-0001": {"Tax"},
}

UNGRADED = {"Address"}


def _extract(api: Api, truth: dict[str, Any]) -> dict[str, Any]:
    data = (DATA / "documents" / truth["document"]).read_bytes()
    resp = api.post("/extraction/trigger_sync",
                    raw_trigger(data, configuration_name=truth["configuration"]))
    assert resp.status_code == 200, resp.text
    result: dict[str, Any] = resp.json()
    return result


def _flatten(truth: dict[str, Any]) -> dict[str, str]:
    values = dict(truth["fields"])
    for name, tables in truth["tables"].items():
        for t, table in enumerate(tables):
            for r, row in enumerate(table["rows"]):
                for c, cell in enumerate(row):
                    values[f"{name}/{t}/{r}/{c}"] = cell
    return values


def _extracted(result: dict[str, Any]) -> dict[str, str]:
    targets = {t["id"]: t for t in result["used_extraction_configuration"]["extraction_targets"]}
    values: dict[str, str] = {}
    for item in result["extracted_targets"]:
        target = targets[item["used_extraction_target_id"]]
        name = target.get("name") or target["id"]
        if item["type"] == "field":
            [value] = item["extracted_values"]
            values[name] = value["extracted_field"]
            continue
        table_ids: dict[str, int] = {}
        for cell in item["extracted_values"]:
            t = table_ids.setdefault(cell["table_id"], len(table_ids))
            values[f"{name}/{t}/{cell['row']}/{cell['column']}"] = cell["extracted_cell"]
    return values


@pytest.mark.parametrize(
    "stem",
    ["inv-0002", "rcp-0003", "inv-0011", "rcp-0001", "rcp-0014"],
    ids=["text-pdf-invoice", "text-pdf-receipt", "png-invoice", "jpeg-receipt",
         "scan-pdf-receipt"],
)
def test_document_through_the_service(api: Api, stem: str) -> None:
    truth = json.loads((DATA / "truth" / f"{stem}.json").read_text())
    expected = _flatten(truth)
    got = _extracted(_extract(api, truth))
    misses = KNOWN_MISSES.get(stem, set())
    assert {k: got.get(k) for k in expected if k not in misses} == {
        k: v for k, v in expected.items() if k not in misses
    }
    # Nothing extracted beyond the truth: no invented rows or tables. The sample's truth
    # predates the receipts' Address target; the shop's address printed under its name
    # is what it reads there.
    assert set(got) - UNGRADED <= set(expected)
    if "Address" in got:
        assert got["Address"] == "" or any(c.isdigit() for c in got["Address"])
