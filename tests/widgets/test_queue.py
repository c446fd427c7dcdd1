"""`ReviewQueue`: selection, order, navigation and the page image."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from servicetools import Batch, Client, LocalService, ServiceUnreachable, audit
from servicetools import frames as sf
from servicetools.analysis.widgets import (
    ResultEditor,
    ReviewQueue,
    order_extractions,
    select_extractions,
)

from ..support.helpers import make_invoice_pdf


# -- selection and order on hand-made results ------------------------------------------------
def made(extraction_id: str, confidences: list[float | None], failing: bool = False
         ) -> dict[str, Any]:
    vals = [{"id": f"{extraction_id}-{i}", "extracted_field": f"v{i}",
             "validation_passed": not (failing and i == 0), "validation_messages": [],
             **({"confidence": c} if c is not None else {})}
            for i, c in enumerate(confidences)]
    return {"extraction_info": {"extraction_id": extraction_id},
            "used_extraction_configuration": {"extraction_targets": [
                {"id": "t1", "type": "field", "name": "Total", "is_multiple": True}]},
            "extracted_targets": [{"id": f"x-{extraction_id}", "used_extraction_target_id": "t1",
                                   "type": "field", "confidence": 0.5,
                                   "extracted_values": vals}]}


RESULTS = {
    "sure": made("sure", [0.99, 0.95]),
    "unsure": made("unsure", [0.9, 0.2]),
    "failing": made("failing", [0.99], failing=True),
    "remote": made("remote", [None]),  # no value confidence: the target's 0.5
    "middling": made("middling", [0.6]),
}


def test_failing_first_then_lowest_confidence_first() -> None:
    order = order_extractions(RESULTS, RESULTS)
    assert order == ["failing", "unsure", "remote", "middling", "sure"]
    assert order_extractions(RESULTS, RESULTS, "batch") == list(RESULTS)
    by_name = order_extractions(RESULTS, RESULTS, lambda d: d["extraction_info"]["extraction_id"])
    assert by_name == sorted(RESULTS)
    with pytest.raises(ValueError):
        order_extractions(RESULTS, RESULTS, "alphabet")


def test_where_takes_a_mask_on_fields_a_frame_a_callable_or_ids() -> None:
    fields = sf.fields(RESULTS)
    assert select_extractions(RESULTS, fields.confidence < 0.55) == ["unsure", "remote"]
    picked = fields[fields.validation_passed == False]  # noqa: E712 - a nullable mask
    assert select_extractions(RESULTS, picked) == ["failing"]
    assert select_extractions(RESULTS, lambda d: len(d["extracted_targets"][0]
                                                     ["extracted_values"]) > 1) == [
        "sure", "unsure"]
    assert select_extractions(RESULTS, ["middling", "sure"]) == ["sure", "middling"]
    assert select_extractions(RESULTS, None) == list(RESULTS)
    with pytest.raises(ValueError, match="aligned"):
        select_extractions(RESULTS, pd.Series([True], index=[99]))


# -- the queue against the real service ------------------------------------------------------
@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


@pytest.fixture(scope="module")
def batch(client: Client) -> Batch:
    documents = [("good.pdf", make_invoice_pdf(number="INV-2024-0001")),
                 ("bad.pdf", make_invoice_pdf(number="#42 ?")),  # fails validation
                 ("good2.pdf", make_invoice_pdf(number="INV-2024-0002"))]
    return client.extract_many(documents, configuration_name="invoices", progress=False)


def names(queue: ReviewQueue, batch: Batch) -> list[str]:
    return [batch.documents[i] for i in queue.extraction_ids]


def test_navigation_saves_confirms_and_shows_the_page(client: Client, batch: Batch) -> None:
    queue = ReviewQueue(client, batch)
    assert names(queue, batch) == ["bad.pdf", "good.pdf", "good2.pdf"]
    assert queue.progress.value == "1 / 3" and "bad.pdf" in queue.title.value
    assert queue.previous_button.disabled
    assert isinstance(queue.editor, ResultEditor) and queue.editor.ledger is queue.ledger
    assert queue.editor.extraction_id == queue.current
    assert queue.image.format == "png" and bytes(queue.image.value).startswith(b"\x89PNG")
    assert queue.page_note.value == ""

    bad = queue.current
    assert bad is not None
    queue.editor.inputs["t-invoice-number"][0].value = "INV-42"
    queue.next_button.click()  # saves the edit, confirms the rest
    assert queue.progress.value == "2 / 3" and not queue.previous_button.disabled
    stored = client.get_result(bad)["extracted_targets"][0]["extracted_values"][0]
    assert stored["extracted_field"] == "INV-42" and stored["validation_passed"]
    frame = queue.ledger.frame
    assert frame.loc[frame["change"] == "edit", "new_value"].tolist() == ["INV-42"]
    assert (frame["change"] == "confirm").sum() == len(frame) - 1 > 0
    assert set(frame["extraction_id"]) == {bad}

    queue.skip_button.click()
    assert queue.progress.value == "3 / 3"
    queue.previous_button.click()
    assert queue.progress.value == "2 / 3" and queue.current in queue.skipped
    first_editor = queue.editor
    queue.next_button.click()
    queue.previous_button.click()
    assert queue.editor is first_editor  # an item keeps its editor
    queue.go(2)
    queue.next_button.click()
    assert queue.progress.value == "3 / 3"
    assert queue.status.value == "End of the queue: 3 reviewed, 0 skipped."
    assert queue.reviewed == set(batch.results) and not queue.skipped
    # Confirmations are recorded once per value, whatever the back and forth.
    assert queue.ledger.frame["value_id"].is_unique


def test_where_selects_from_the_fields_frame(client: Client, batch: Batch) -> None:
    fields = sf.fields(batch)
    queue = ReviewQueue(client, batch, where=fields.validation_passed == False)  # noqa: E712
    assert names(queue, batch) == ["bad.pdf"] and queue.progress.value == "1 / 1"
    queue = ReviewQueue(client, batch, where=lambda d: False)
    assert queue.progress.value == "0 / 0" and queue.current is None
    assert queue.status.value == "Nothing to review." and queue.next_button.disabled


def test_results_in_hand_make_a_queue(client: Client, batch: Batch) -> None:
    results = [client.get_result(i) for i in batch.results]
    assert select_extractions(results, [results[2], results[0]]) == [
        results[0].extraction_id, results[2].extraction_id]
    assert select_extractions(results, results[1]) == [results[1].extraction_id]
    queue = ReviewQueue(client, results, where=[results[0]], order="batch")
    assert queue.extraction_ids == [results[0].extraction_id]
    one = ReviewQueue(client, results[1])
    assert one.extraction_ids == [results[1].extraction_id] and one.progress.value == "1 / 1"
    assert one.editor is not None and one.editor.extraction_id == results[1].extraction_id


def test_a_failed_save_keeps_the_queue_in_place(client: Client, batch: Batch,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    queue = ReviewQueue(client, batch, order="batch", confirm=False)
    assert queue.editor is not None
    queue.editor.inputs["t-total"][0].value = "999.00"

    def refuse(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise ServiceUnreachable("cannot reach the service", method="POST", url="x")

    monkeypatch.setattr(client, "update_results", refuse)
    queue.next_button.click()
    assert queue.progress.value == "1 / 3" and "cannot reach the service" in queue.status.value
    assert len(queue.ledger) == 0
    queue.skip_button.click()
    assert queue.progress.value == "2 / 3" and len(queue.ledger) == 0


def test_images_are_shown_as_they_are_and_a_missing_renderer_is_explained(
        client: Client, batch: Batch, invoice_png: bytes,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client.vault, "download", lambda document_id: invoice_png)
    queue = ReviewQueue(client, batch)
    assert bytes(queue.image.value) == invoice_png and queue.image.format == "png"

    monkeypatch.setattr(client.vault, "download", lambda document_id: make_invoice_pdf())
    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    queue = ReviewQueue(client, batch)
    assert bytes(queue.image.value) == b"" and queue.image.layout.display == "none"
    assert "pip install 'servicetools[widgets]'" in queue.page_note.value.replace("&#x27;", "'")


def test_the_queue_ledger_grades_the_batch(client: Client) -> None:
    fresh = client.extract_many([("bad.pdf", make_invoice_pdf(number="#42 ?")),
                                 ("good.pdf", make_invoice_pdf())],
                                configuration_name="invoices", progress=False)
    fields = sf.fields(fresh)
    queue = ReviewQueue(client, fresh, where=fields.target_id == "t-invoice-number")
    assert queue.editor is not None and fresh.documents[queue.extraction_ids[0]] == "bad.pdf"
    queue.editor.inputs["t-invoice-number"][0].value = "INV-0042"
    queue.next()
    queue.next()
    graded = audit.grade(fields, queue.ledger.frame, cells=sf.cells(fresh))
    wrong = graded.loc[graded["correct"] == False]  # noqa: E712 - nullable
    # Graded against what the engine really read, whatever the engine's current reading.
    read = fields.loc[(fields.target_id == "t-invoice-number")
                      & (fields.extraction_id == queue.extraction_ids[0]), "value"].tolist()
    assert read != ["INV-0042"]
    assert wrong["value"].tolist() == read and wrong["expected"].tolist() == ["INV-0042"]
    assert len(graded) == len(fields) + len(sf.cells(fresh))
    assert graded["correct"].sum() == len(graded) - 1


def test_a_plan_orders_the_queue_and_its_audit_draws_are_marked_in_the_ledger(
    client: Client, batch: Batch,
) -> None:
    from servicetools import review

    fields = sf.fields(batch)
    planned = review.plan(fields, budget=1, audit=0.5, seed=3)
    reviewed = planned.loc[planned["review"]]
    drawn = planned.loc[planned["audit"]]
    assert len(reviewed) == 1 and len(drawn) >= 1
    queue = ReviewQueue(client, batch, order="plan", plan=planned)
    # The document of the riskiest value comes first; only planned documents are queued.
    assert queue.extraction_ids[0] == reviewed["extraction_id"].iloc[0]
    assert set(queue.extraction_ids) == set(planned.loc[planned["review"] | planned["audit"],
                                                        "extraction_id"])
    for _ in queue.extraction_ids:
        queue.next()
    ledger = queue.ledger.frame
    marked = set(ledger.loc[ledger["audit"] == True, "value_id"])  # noqa: E712 - nullable
    assert marked == set(drawn["value_id"]) and ledger["audit"].notna().all()
    with pytest.raises(ValueError, match="plan="):
        ReviewQueue(client, batch, order="plan")
