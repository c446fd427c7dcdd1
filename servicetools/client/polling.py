"""Waiting for extractions: status rounds paced by how fast they finish (`poll`).

`Client.wait` runs this loop over its status endpoint; `extract_many` runs it with a
callback that fetches each result as soon as its extraction ends.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..wire.protocol import FINAL_STATUSES, MAX_STATUS_IDS
from .errors import InvalidResponse, ServerError, TransportError, WaitTimeout
from .result import ExtractionRef, extraction_ids_of

__all__ = [
    "DEFAULT_MAX_POLL",
    "DEFAULT_POLL",
    "DEFAULT_WAIT_TIMEOUT",
    "MIN_POLL",
    "POLL_BACKOFF",
    "chunks",
    "id_list",
    "pace",
    "poll",
]

#: First pause between status rounds of `Client.wait`, and the cap it backs off to.
DEFAULT_POLL = 0.25
DEFAULT_MAX_POLL = 3.0
POLL_BACKOFF = 1.5
#: The shortest pause between rounds, reached only near the end of a wait (see `pace`).
MIN_POLL = 0.02
DEFAULT_WAIT_TIMEOUT = 600.0

#: Asks the service for the statuses of up to `MAX_STATUS_IDS` ids within ``timeout``
#: seconds (None: no limit); returns the ``status_map``.
AskStatuses = Callable[[Sequence[str], float | None], dict[str, dict[str, Any]]]
OnFinal = Callable[[str, dict[str, Any]], None]


def chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def id_list(extraction_ids: ExtractionRef | Iterable[ExtractionRef]) -> list[str]:
    """The ids as a list without repeats (the service answers each id once anyway); a
    result stands for its id (`result.extraction_ids_of`)."""
    return extraction_ids_of(extraction_ids)


def poll(ask: AskStatuses, ids: Sequence[str], *, on_final: OnFinal, timeout: float | None,
         poll: float, max_poll: float, chunk_size: int) -> dict[str, dict[str, Any]]:
    """Ask in rounds until every id is final; ``on_final`` is called once per id as it ends.

    Returns the final status of each id. Connection errors, 5xx and malformed answers (a
    service restarting) are waited through; past ``timeout`` seconds, `WaitTimeout`.
    """
    if not 1 <= chunk_size <= MAX_STATUS_IDS:
        raise ValueError(f"chunk_size must be between 1 and {MAX_STATUS_IDS}")
    deadline = math.inf if timeout is None else time.monotonic() + timeout
    latest: dict[str, dict[str, Any]] = {}
    final: set[str] = set()
    pending = list(ids)
    delay = poll / POLL_BACKOFF  # the first pause is `poll`
    last_problem: Exception | None = None
    first_round: tuple[float, int] | None = None  # (when, how many were final then)
    while pending:
        round_start = time.monotonic()
        finished_before = len(final)
        for chunk in chunks(pending, chunk_size):
            remaining = deadline - time.monotonic()
            try:
                status_map = ask(chunk, None if math.isinf(remaining) else remaining)
            except (TransportError, ServerError, InvalidResponse) as exc:
                # Most likely a restart: the next round asks again after the pause.
                last_problem = exc
                break
            for extraction_id in chunk:
                status = status_map.get(extraction_id)
                if not isinstance(status, dict):
                    continue  # a remote service left it out: ask again next round
                latest[extraction_id] = status
                if status.get("status_type") in FINAL_STATUSES:
                    final.add(extraction_id)
                    on_final(extraction_id, status)
        pending = [i for i in pending if i not in final]
        if not pending:
            break
        if first_round is None:
            first_round = (round_start, len(final))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            problem = f"; last problem: {last_problem}" if last_problem else ""
            raise WaitTimeout(f"{len(pending)} of {len(ids)} extraction(s) not finished "
                              f"within {timeout:g} s{problem}", latest, pending)
        # Quick while extractions keep finishing, backing off while none do; and never
        # polling more than a third of the time, so thousands of ids cost the service
        # little (a round of 1,000 ids is ~0.1 s of its time).
        if len(final) > finished_before:
            since, done_then = first_round
            delay = pace(len(pending), len(final) - done_then, round_start - since, poll)
        else:
            delay = min(delay * POLL_BACKOFF, max_poll)
        took = time.monotonic() - round_start
        time.sleep(min(max(delay, 2 * took), remaining))
    return {i: latest[i] for i in ids}


def pace(pending: int, finished: int, elapsed: float, poll: float) -> float:
    """The pause before the next round while extractions are finishing.

    At the rate seen since the first round (``finished`` in ``elapsed`` seconds), the
    next round comes when about a quarter of the ``pending`` ones should be done, so
    the last of a batch is seen within tens of milliseconds of its end, in a number of
    rounds that grows with the log of the batch; never sooner than `MIN_POLL`, never
    later than ``poll``. A flat ``poll`` would leave up to ``poll`` seconds idle at the
    end of every batch, a quarter of the whole on a batch that takes a second.
    """
    if finished <= 0 or elapsed <= 0:
        return poll
    return min(max(pending / (finished / elapsed) / 4, MIN_POLL), poll)
