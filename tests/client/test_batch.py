"""`extract_many` with bad documents mixed in, and `Batch` files that round-trip."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from servicetools import (
    AuthenticationError,
    Batch,
    BatchFailures,
    Client,
    Failure,
    LocalService,
    NotFound,
    ServiceUnreachable,
    VaultDocument,
)
from servicetools.wire import saved_batch

from ..support.cutproxy import CutProxy
from ..support.helpers import make_invoice_pdf

REFUSED_URL = "http://127.0.0.1:9/invoice.pdf"


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    for i in range(6):
        (root / f"inv-{i}.pdf").write_bytes(make_invoice_pdf(number=f"INV-2024-{i:04d}"))
    (root / "notes.txt").write_text("not a document, and not picked from the folder")
    return root


@pytest.fixture(scope="module")
def mixed(client: Client, folder: Path, tmp_path_factory: pytest.TempPathFactory
          ) -> Batch:
    bad = tmp_path_factory.mktemp("bad")
    (bad / "text.pdf").write_bytes(b"just text with a .pdf name")
    (bad / "empty.pdf").write_bytes(b"")
    documents: list[Any] = [
        str(folder / "inv-*.pdf"),
        bad / "text.pdf",
        bad / "missing.pdf",
        ("named.pdf", make_invoice_pdf(number="INV-NAMED")),
        bad / "empty.pdf",
        REFUSED_URL,
        VaultDocument("no-such-document"),
    ]
    # A batch that ends with failures says so: how many, and the commonest reason.
    with pytest.warns(BatchFailures, match=r"5 of 12 documents failed; the commonest failure "
                                           r"\(\d\) at "):
        return client.extract_many(documents, configuration_name="invoices", concurrency=4,
                                   progress=False)


def invoice_number(data: dict[str, Any]) -> str:
    target = next(t for t in data["extracted_targets"]
                  if t["used_extraction_target_id"] == "t-invoice-number")
    return str(target["extracted_values"][0]["extracted_field"])


def test_good_documents_succeed_and_bad_ones_are_listed(mixed: Batch, folder: Path) -> None:
    names = list(mixed.documents.values())
    assert names == [str(folder / f"inv-{i}.pdf") for i in range(6)] + ["named.pdf"]
    numbers = [invoice_number(mixed.results[eid]) for eid in mixed.documents]
    assert numbers == [f"INV-2024-{i:04d}" for i in range(6)] + ["INV-NAMED"]
    failures = {Path(f.document).name: f for f in mixed.failures}
    assert list(failures) == ["text.pdf", "missing.pdf", "empty.pdf", "invoice.pdf",
                              "no-such-document"]  # input order
    assert (failures["text.pdf"].stage, failures["text.pdf"].code,
            failures["text.pdf"].http_status) == ("trigger", "unsupported_media_type", 415)
    assert failures["missing.pdf"].stage == "read"
    assert "No such file" in failures["missing.pdf"].reason
    assert failures["empty.pdf"].code == "empty_document"
    refused = failures["invoice.pdf"]
    assert refused.stage == "extraction" and refused.extraction_id
    assert "127.0.0.1" in refused.reason
    assert refused.details["status"]["status_type"] == "error"
    assert failures["no-such-document"].code == "not_found"
    assert mixed.counts() == {"ended": 7, "read": 1, "trigger": 3, "extraction": 1}
    assert len(mixed) == 12
    assert mixed.configuration == {"name": "invoices", "id": "cfg-invoices-1"}
    assert 0 < mixed.timings["trigger_s"] <= mixed.timings["total_s"]


def test_save_load_round_trip_is_lossless(mixed: Batch, tmp_path: Path) -> None:
    path = mixed.save(tmp_path / "runs" / "mixed.jsonl")
    loaded = Batch.load(path)
    assert loaded == mixed
    assert list(loaded.results) == list(mixed.results)
    assert loaded.failures == mixed.failures
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(mixed)
    header = json.loads(lines[0])
    assert header["record"] == "header" and header["format"] == "servicetools.batch"
    assert loaded.save(tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


def test_a_failure_line_holds_the_failure_field_for_field() -> None:
    # The wire defines the failure line without importing the client: the two must agree.
    assert tuple(f.name for f in dataclasses.fields(Failure)) == saved_batch.FAILURE_FIELDS
    required = tuple(f.name for f in dataclasses.fields(Failure)
                     if f.default is dataclasses.MISSING
                     and f.default_factory is dataclasses.MISSING)
    assert required == saved_batch.REQUIRED_FAILURE_FIELDS


def test_load_refuses_truncated_and_foreign_files(mixed: Batch, tmp_path: Path) -> None:
    path = mixed.save(tmp_path / "b.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:-2]), encoding="utf-8")
    with pytest.raises(ValueError, match="truncated"):
        Batch.load(tmp_path / "cut.jsonl")
    (tmp_path / "other.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="not a servicetools.batch file"):
        Batch.load(tmp_path / "other.jsonl")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        Batch.load(tmp_path / "empty.jsonl")


def test_html_repr_is_short(mixed: Batch) -> None:
    page = mixed._repr_html_()
    assert "<code>invoices</code>" in page
    assert "refused at trigger" in page and "error in the pipeline" in page
    assert page.count("<li>") == 5 and "more in" not in page
    assert repr(mixed).startswith("<Batch invoices: 12 documents, 7 ended, 5 failed")
    longer = Batch(failures=mixed.failures * 2)
    assert longer._repr_html_().count("<li>") == 6
    assert "and 5 more in <code>batch.failures</code>" in longer._repr_html_()
    assert "&lt;b&gt;" in Batch(failures=[Failure("<b>", "read", "x")])._repr_html_()


def test_vault_records_and_upload_first(client: Client, folder: Path) -> None:
    records = [client.vault.upload(p) for p in sorted(folder.glob("inv-[01].pdf"))]
    batch = client.extract_many(records, configuration_name="invoices", progress=False)
    assert list(batch.documents.values()) == ["inv-0.pdf", "inv-1.pdf"]
    uploaded = client.extract_many(folder, configuration_id="cfg-invoices-1",
                                   upload_first=True, progress=False)
    assert len(uploaded.results) == 6 and not uploaded.failures
    info = next(iter(uploaded.results.values()))["extraction_info"]
    assert info["input_type"] == "service" and info["extraction_name"] == "inv-0.pdf"


def test_empty_glob_is_loud(client: Client, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no file matches"):
        client.extract_many(str(tmp_path / "*.pdf"), configuration_name="invoices",
                            progress=False)


def test_a_folder_without_documents_is_loud(client: Client, tmp_path: Path) -> None:
    # Before, an empty batch came back without a word: the wrong folder, or the documents
    # one folder down.
    (tmp_path / "notes.txt").write_text("not a document")
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "inv-1.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(FileNotFoundError, match=r"no PDF, PNG or JPEG file in the folder.*\*\*"):
        client.extract_many(tmp_path, configuration_name="invoices", progress=False)


def test_an_error_about_every_document_stops_the_batch_and_is_raised(
    client: Client, service: LocalService, folder: Path,
) -> None:
    # Before, each of these came back as a batch of failures, without a word.
    with Client(base_url=service.base_url, api_key="wrong") as wrong:
        with pytest.raises(AuthenticationError) as refused:
            wrong.extract_many(folder, configuration_name="invoices", progress=False)
    assert "none of the 6 was extracted" in str(refused.value.__notes__)
    with pytest.raises(NotFound, match="Did you mean 'receipts'") as misspelt:
        client.extract_many(folder, configuration_name="reciepts", progress=False)
    assert misspelt.value.details["close_matches"] == ["receipts"]
    assert {"invoices", "receipts"} <= set(misspelt.value.details["known"])
    with pytest.raises(NotFound, match="No classifier with id 'nope'"):
        client.extract_many(folder, configuration_name="invoices", classifier_id="nope",
                            progress=False)
    with Client(base_url="http://127.0.0.1:9", api_key="k", retries=0) as nowhere:
        with pytest.raises(ServiceUnreachable):
            nowhere.extract_many(folder, configuration_name="invoices", progress=False)


def test_batch_timeout_fails_what_is_left(client: Client, folder: Path) -> None:
    # With no time to wait, the one status request after the triggers finds some
    # documents ended (the engine is quick on a quiet machine) and the rest not: those
    # fail at "wait". The last one triggered is still queued then (an extraction takes
    # far longer than one status request), so at least one fails.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", BatchFailures)
        batch = client.extract_many(folder, configuration_name="invoices", timeout=0,
                                    progress=False)
    assert len(batch) == 6 and len(batch.results) + len(batch.failures) == 6
    failed = len(batch.failures)
    assert failed >= 1 and {f.stage for f in batch.failures} == {"wait"}
    assert all(f.extraction_id and "not finished" in f.reason for f in batch.failures)
    (warning,) = [w for w in seen if issubclass(w.category, BatchFailures)]
    assert str(warning.message).startswith(
        f"{failed} of 6 documents failed; the commonest failure ({failed}) at wait, "
        "such as 'not finished")


def test_a_service_gone_mid_batch_leaves_the_rest_untried(service: LocalService,
                                                           tmp_path: Path) -> None:
    # The first trigger gets through; then the service is gone (a proxy that refuses
    # every connection, switched by the first trigger's answer). Eight triggers in a row
    # find no service; the rest are not tried, and the one triggered is not waited for
    # past the batch's time.
    documents = []
    for i in range(11):
        documents.append(tmp_path / f"inv-{i:02d}.pdf")
        documents[-1].write_bytes(make_invoice_pdf(number=f"INV-GONE-{i}"))
    proxy = CutProxy(urlsplit(service.base_url).port or 80)
    session = requests.Session()

    def gone_after_a_trigger(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if response.request.url and response.request.url.endswith("/trigger_async"):
            # The answer read first: switching closes every open connection, and a body
            # still in flight would fail the first trigger too (a race under load).
            assert response.content
            proxy.set_mode("refuse")

    session.hooks["response"].append(gone_after_a_trigger)
    try:
        with Client(base_url=proxy.endpoint, api_key=service.token, retries=0,
                    session=session) as c, warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", BatchFailures)
            batch = c.extract_many(documents, configuration_name="invoices", concurrency=1,
                                   timeout=0, progress=False)
    finally:
        proxy.close()
        session.close()
    (warning,) = [w for w in seen if issubclass(w.category, BatchFailures)]
    assert warning.filename == __file__  # the caller's line, not ours
    assert not batch.results and len(batch.failures) == 11
    assert batch.failures[0].stage == "wait" and batch.failures[0].extraction_id
    tried = batch.failures[1:9]
    assert {f.stage for f in tried} == {"trigger"}
    assert not any(f.reason.startswith("not tried") for f in tried)
    untried = batch.failures[9:]
    assert [Path(f.document).name for f in untried] == ["inv-09.pdf", "inv-10.pdf"]
    assert all(f.stage == "trigger" and f.reason.startswith("not tried: ") for f in untried)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None)
@given(results=st.dictionaries(st.text(min_size=1), st.dictionaries(st.text(), json_values,
                                                                        max_size=4),
                               max_size=4),
       failures=st.lists(st.builds(Failure, st.text(), st.sampled_from(["read", "trigger"]),
                                   st.text(), st.none() | st.text(),
                                   st.none() | st.integers(400, 599),
                                   st.none() | st.text(),
                                   st.dictionaries(st.text(), json_values, max_size=2)),
                         max_size=3),
       timings=st.dictionaries(st.text(), st.floats(allow_nan=False, allow_infinity=False)))
def test_round_trip_of_any_json(tmp_path_factory: pytest.TempPathFactory,
                                results: dict[str, dict[str, Any]], failures: list[Failure],
                                timings: dict[str, float]) -> None:
    batch = Batch(results=results, documents={k: f"doc {k}" for k in results},
                  failures=failures, configuration={"name": "x", "id": None},
                  timings=timings, meta={"service": "http://example"})
    path = batch.save(tmp_path_factory.mktemp("rt") / "b.jsonl")
    assert Batch.load(path) == batch
