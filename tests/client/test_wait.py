"""`Client.wait`: one status request per chunk per round (counted), and a restart survived."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from servicetools import Client, LocalService

from ..support.flaky_server import StatusRequests


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Client]:
    with Client(base_url=service.base_url, api_key=service.token) as c:
        yield c


def trigger_many(client: Client, count: int, document: dict[str, Any]) -> list[str]:
    """Async triggers of one vault document (uploaded once), a few at a time."""
    with ThreadPoolExecutor(8) as pool:
        infos = pool.map(lambda _: client.trigger_async(document, configuration_name="invoices"),
                         range(count))
        return [info["extraction_id"] for info in infos]


def test_wait_200_one_request_per_chunk_per_round(client: Client, invoice_pdf: bytes) -> None:
    document = client.vault.upload(invoice_pdf, name="tiny.pdf")
    ids = trigger_many(client, 200, document)
    counter = StatusRequests(client.session)
    try:
        statuses = client.wait(ids, chunk_size=50, poll=0.2, max_poll=1.0, progress=False)
    finally:
        client.session.hooks["response"].remove(counter._hook)
    assert list(statuses) == ids
    assert {s["status_type"] for s in statuses.values()} == {"ended"}
    rounds = counter.rounds(ids, 50)  # asserts: each round = the chunks of what was pending
    assert len(rounds) >= 2, "the extractions should still be running at the first round"
    assert [len(chunk) for chunk in rounds[0]] == [50, 50, 50, 50]
    assert all(len(chunk) <= 50 for r in rounds for chunk in r)
    assert len(counter.calls) == sum(len(r) for r in rounds)

    # The default chunk (1,000): each round is a single request, whatever is pending.
    more = trigger_many(client, 40, document)
    counter = StatusRequests(client.session)
    try:
        client.wait(ids + more, poll=0.1, max_poll=0.5, progress=False)
    finally:
        client.session.hooks["response"].remove(counter._hook)
    rounds = counter.rounds(ids + more, 1000)
    assert all(len(r) == 1 for r in rounds)
    assert len(rounds[0][0]) == 240


@pytest.mark.integration
def test_wait_survives_a_restart(invoice_pdf: bytes) -> None:
    with LocalService(workers=1) as svc:
        client = Client(base_url=svc.base_url, api_key=svc.token)
        document = client.vault.upload(invoice_pdf)
        # Enough work that one worker is still busy when the service is killed: a
        # one-page invoice takes the engine some 30-40 ms, and 12 of them were all done
        # before the kill once the engine got quicker.
        ids = trigger_many(client, 48, document)
        outcome: dict[str, Any] = {}

        def waiting() -> None:
            try:
                outcome["statuses"] = client.wait(ids, timeout=90, poll=0.1, max_poll=0.5,
                                                  progress=False)
            except Exception as exc:  # noqa: BLE001  reported by the assert below
                outcome["error"] = exc

        thread = threading.Thread(target=waiting)
        thread.start()
        time.sleep(0.3)
        killed = time.time()
        svc.kill()  # as a crash would
        time.sleep(1.0)  # the wait polls a dead port meanwhile
        svc.start()
        thread.join(120)
        assert "error" not in outcome, outcome.get("error")
        statuses = outcome["statuses"]
        assert set(statuses) == set(ids)
        # D5: whatever was running is finished or marked interrupted; none hangs.
        assert {s["status_type"] for s in statuses.values()} <= {"ended", "error"}
        # ... and some reached it only after the restart, so the wait carried through it.
        assert any(s["creation_unix_timestamp"] > killed for s in statuses.values())


def test_wait_with_progress_bar(client: Client, invoice_pdf: bytes,
                                capsys: pytest.CaptureFixture[str]) -> None:
    eid = client.trigger_async(invoice_pdf, configuration_name="invoices")["extraction_id"]
    client.wait([eid], progress=True)
    err = capsys.readouterr().err
    assert "waiting" in err and "ended=1" in err
    client.wait([eid], progress=False)
    assert capsys.readouterr().err == ""


def test_pace_quickens_as_a_wait_nears_its_end() -> None:
    from servicetools.client.polling import MIN_POLL
    from servicetools.client.polling import pace as _pace

    # 40 finished in the 2 s since the first round: 20 a second.
    assert _pace(1000, 40, 2.0, poll=0.25) == 0.25  # far from the end: the full pause
    assert _pace(10, 40, 2.0, poll=0.25) == pytest.approx(10 / 20 / 4)  # a quarter done
    assert _pace(1, 40, 2.0, poll=0.25) == MIN_POLL  # never sooner than MIN_POLL
    assert _pace(10, 0, 2.0, poll=0.25) == 0.25  # no rate seen yet
    assert _pace(10, 5, 0.0, poll=0.25) == 0.25
    assert _pace(10, 40, 2.0, poll=0.1) == 0.1  # never later than poll
