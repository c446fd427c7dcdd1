"""Updates of every shape against a real saved extraction, over loopback.

The schemathesis pass (test_fuzz.py) knows no extraction id, so its updates end at 404.
Here hypothesis builds update bodies around the targets, values and tables of a saved
extraction: the right ids and types mostly, with wrong ones, odd texts, huge or negative
rows and columns, and values of the other kind mixed in. Every answer must be one the
interface documents for the endpoint, and an update the service refuses must leave the
stored data exactly as it was (D3: bad input loses nothing).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..support.helpers import Api, raw_trigger

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration

SYNC, UPDATE = "/extraction/trigger_sync", "/extraction/result/update"
# The endpoint's documented answers (docs/interface.md, the OpenAPI document).
DOCUMENTED = {200, 400, 404, 409, 410, 413}

_TEXT = (st.text(max_size=12) | st.text(st.characters(codec="utf-8"), max_size=30)
         | st.sampled_from(["", " ", "12.50", "2024-01-01", "\x00", "x" * 300]))
_INDEX = (st.integers(0, 6) | st.integers(0, 2**70) | st.integers(-3, -1)
          | st.sampled_from([1.5, "1", None]))


@pytest.fixture(scope="module")
def saved(api: Api, invoice_pdf: bytes) -> dict[str, Any]:
    answer = api.post(SYNC, raw_trigger(invoice_pdf))
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    assert {t["type"] for t in data["extracted_targets"]} == {"field", "table"}
    return {"extraction_id": data["extraction_info"]["extraction_id"],
            "extracted_targets": data["extracted_targets"]}


def _values(target: dict[str, Any]) -> st.SearchStrategy[list[Any]]:
    values = [v for v in target.get("extracted_values") or [] if isinstance(v, dict)]
    ids = st.sampled_from([v["id"] for v in values]) if values else _TEXT
    tables = st.sampled_from(sorted({v.get("table_id", "") for v in values} or {"t"}))
    field = st.fixed_dictionaries({"extracted_field": _TEXT}, optional={"id": ids | _TEXT})
    cell = st.fixed_dictionaries(
        {"extracted_cell": _TEXT, "table_id": tables | _TEXT, "row": _INDEX, "column": _INDEX},
        optional={"id": ids | _TEXT})
    own = field if target["type"] == "field" else cell
    other = st.one_of(field, cell, st.dictionaries(_TEXT, _TEXT, max_size=2), st.integers(),
                      st.none())
    return st.lists(st.one_of(own, own, own, other), max_size=4)


@st.composite
def _bodies(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    targets = data["extracted_targets"]
    updates = []
    for _ in range(draw(st.integers(0, 3))):
        target = draw(st.sampled_from(targets))
        updates.append({
            "extracted_target_id": draw(st.sampled_from([target["id"]] * 6) | _TEXT),
            "type": draw(st.sampled_from([target["type"]] * 6 + ["field", "table", "other"])),
            "new_extracted_values": draw(_values(target))})
    return {"extraction_id": draw(st.sampled_from([data["extraction_id"]] * 8) | _TEXT),
            "updates": updates}


def test_an_update_of_any_shape_gets_a_documented_answer_and_a_refusal_changes_nothing(
        api: Api, saved: dict[str, Any]) -> None:
    result = f"/extraction/result/get/{saved['extraction_id']}"
    seen: set[int] = set()

    @settings(max_examples=80, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(_bodies(saved))
    def update(body: dict[str, Any]) -> None:
        before = api.get(result).text
        answer = api.post_raw(UPDATE, json.dumps(body).encode())
        assert answer.status_code in DOCUMENTED, (answer.status_code, answer.text[:300])
        seen.add(answer.status_code)
        if answer.status_code == 200:
            assert api.get(result).status_code == 200
        else:
            assert answer.json()["error"]["message"]
            assert api.get(result).text == before, body

    update()
    # The bodies reach the update itself, not only the checks in front of it.
    assert {200, 400, 404} <= seen
