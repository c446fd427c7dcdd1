"""Which calls the client retries, and how: urllib3 ``Retry`` policies per kind of call.

Idempotent calls (the GETs and the status list) are retried on connection errors and
502/503/504 with exponential backoff and jitter; triggers, updates and uploads only when
the connection could not be opened at all, because then nothing reached the service.
"""

from __future__ import annotations

from typing import Any

from urllib3.util.retry import Retry

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_JITTER",
    "DEFAULT_RETRIES",
    "IDEMPOTENT_PATHS",
    "RETRY_STATUSES",
    "retry_policy",
]

#: Retries of an idempotent call (connection errors and 502/503/504).
DEFAULT_RETRIES = 3
#: Backoff of those retries: 0, 2, 4 ... times this, plus up to ``DEFAULT_JITTER`` s.
DEFAULT_BACKOFF = 0.25
DEFAULT_JITTER = 0.25
RETRY_STATUSES = frozenset({502, 503, 504})

#: Calls that may be repeated without changing anything (section 4): the GETs and the
#: status list, which is a POST only to carry its id list. Result queries of a
#: delete_after_first_fetch extraction are the exception the retry cannot make worse:
#: if the answer was lost, the data is gone either way.
IDEMPOTENT_PATHS = (
    "/extraction/result/get/",
    "/extraction/result/list/",
    "/extraction/status/list",
    "/vault/list",
    "/vault/info/",
    "/vault/get/",
)


def retry_policy(retries: int | Retry, idempotent: bool) -> Retry:
    """The policy for one kind of call; ``retries`` is a count or the caller's own ``Retry``."""
    if isinstance(retries, Retry):
        # The caller's policy for idempotent calls; the others keep only its connect part.
        return retries if idempotent else retries.new(
            read=0, status=0, other=0, redirect=0, status_forcelist=frozenset(),
            raise_on_status=False)
    if not idempotent:
        # A refused connection means nothing was sent, so even a trigger may try again;
        # an error after sending may hide a trigger that happened.
        return Retry(total=retries, connect=retries, read=0, status=0, other=0, redirect=0,
                     backoff_factor=DEFAULT_BACKOFF, raise_on_status=False)
    options: dict[str, Any] = {
        "total": retries, "connect": retries, "read": retries, "status": retries,
        "other": 0, "redirect": 0, "allowed_methods": frozenset({"GET", "POST"}),
        "status_forcelist": RETRY_STATUSES, "backoff_factor": DEFAULT_BACKOFF,
        "raise_on_status": False, "respect_retry_after_header": True,
    }
    try:
        return Retry(**options, backoff_jitter=DEFAULT_JITTER, backoff_max=10.0)
    except TypeError:  # urllib3 1.26 has no jitter
        return Retry(**options)
