"""The thin client of the Document Data Extraction Service: one method per endpoint.

>>> client = Client.from_env()            # doctest: +SKIP
>>> data = client.trigger_sync("inv.pdf", configuration_name="invoices")  # doctest: +SKIP
>>> batch = client.extract_many("docs/*.pdf", configuration_name="invoices")  # doctest: +SKIP

Results are the service's JSON as plain dicts, unknown fields included. Errors are the
tree of :mod:`servicetools.errors`. Idempotent calls (the GETs and the status list) are
retried on connection errors and 502/503/504 with exponential backoff and jitter;
triggers, updates and uploads only when the connection could not be opened at all,
because then nothing reached the service.
"""

from __future__ import annotations

import atexit
import builtins
import functools
import importlib.util
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeAlias

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from .errors import (
    InvalidResponse,
    RequestTimeout,
    ServerError,
    ServiceUnreachable,
    TransportError,
    WaitTimeout,
    error_from_response,
)
from .wire import FINAL_STATUSES, MAX_STATUS_IDS

if TYPE_CHECKING:
    from .batch import Batch
    from .local import LocalService

__all__ = [
    "API_PREFIX",
    "DEFAULT_BATCH_TIMEOUT",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_POLL",
    "DEFAULT_POLL",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WAIT_TIMEOUT",
    "Client",
    "Document",
    "VaultAPI",
    "VaultDocument",
    "sniff_content_type",
    "trigger_request",
]

#: Seconds to open a connection, and to wait for an answer (a sync trigger can queue).
DEFAULT_TIMEOUT: tuple[float, float] = (10.0, 120.0)
#: Retries of an idempotent call (connection errors and 502/503/504).
DEFAULT_RETRIES = 3
#: Backoff of those retries: 0, 2, 4 ... times this, plus up to ``DEFAULT_JITTER`` s.
DEFAULT_BACKOFF = 0.25
DEFAULT_JITTER = 0.25
#: Triggers and result fetches in flight at once in `Client.extract_many`.
DEFAULT_CONCURRENCY = 8
#: First pause between status rounds of `Client.wait`, and the cap it backs off to.
DEFAULT_POLL = 0.25
DEFAULT_MAX_POLL = 3.0
POLL_BACKOFF = 1.5
#: The shortest pause between rounds, reached only near the end of a wait (see `_pace`).
MIN_POLL = 0.02
DEFAULT_WAIT_TIMEOUT = 600.0
DEFAULT_BATCH_TIMEOUT = 3600.0
API_PREFIX = "/service/api"
RETRY_STATUSES = frozenset({502, 503, 504})
# Connections kept per host: room for extract_many's threads without discarding any.
_POOL_SIZE = 32

# Calls that may be repeated without changing anything (section 4): the GETs and the
# status list, which is a POST only to carry its id list. Result queries of a
# delete_after_first_fetch extraction are the exception the retry cannot make worse:
# if the answer was lost, the data is gone either way.
_IDEMPOTENT_PATHS = (
    "/extraction/result/get/",
    "/extraction/result/list/",
    "/extraction/status/list",
    "/vault/list",
    "/vault/info/",
    "/vault/get/",
)
_SUFFIX_BY_TYPE = {"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg"}
_DOCUMENT_SUFFIXES = frozenset({".pdf", ".png", ".jpg", ".jpeg"})
_GLOB_CHARS = re.compile(r"[*?[]")
_UNSET: Any = object()


@dataclass(frozen=True)
class VaultDocument:
    """A document already in the vault, by id: ``VaultDocument("3f2a...")``.

    A bare string is a path or URL; this marks it as a vault id. Vault records (what
    `VaultAPI.upload` and `VaultAPI.list` return) are accepted as they are.
    """

    document_id: str
    name: str = ""


#: What the trigger helpers accept as a document: a path (or a ``http(s)://`` URL), bytes,
#: ``(name, bytes)``, an open binary file, a `VaultDocument` or a vault record.
Document: TypeAlias = (
    str | os.PathLike[str] | bytes | bytearray | memoryview | tuple[str, bytes] | IO[bytes]
    | VaultDocument | Mapping[str, Any]
)


def sniff_content_type(data: bytes) -> str | None:
    """The content type told by the leading bytes (as the service judges them), or None.

    >>> sniff_content_type(b"%PDF-1.7 ..."), sniff_content_type(b"GIF89a")
    ('application/pdf', None)
    """
    if b"%PDF-" in data[:1024]:
        return "application/pdf"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return None


@dataclass(frozen=True)
class _Source:
    """One document resolved to how it travels; bytes of a path are read only when sent."""

    name: str
    input_type: str  # raw | hosted | service
    path: Path | None = None
    data: bytes | None = None
    url: str | None = None
    document_id: str | None = None
    named: bool = True  # False for bare bytes: "document-3" is no name to give the service

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None
        return self.path.read_bytes()

    @property
    def file_name(self) -> str:
        """What the service may call the document: a file name, never a folder path."""
        return Path(self.name).name if self.input_type == "raw" else self.name


def _source(document: Any, *, index: int = 0) -> _Source:
    if isinstance(document, VaultDocument):
        return _Source(document.name or document.document_id, "service",
                       document_id=document.document_id)
    if isinstance(document, Mapping):
        if "document_id" not in document:
            raise TypeError("a mapping as document must be a vault record with document_id")
        return _Source(str(document.get("document_name") or document["document_id"]),
                       "service", document_id=str(document["document_id"]))
    if isinstance(document, (bytes, bytearray, memoryview)):
        return _Source(f"document-{index + 1}", "raw", data=bytes(document), named=False)
    if (isinstance(document, tuple) and len(document) == 2 and isinstance(document[0], str)
            and isinstance(document[1], (bytes, bytearray, memoryview))):
        return _Source(document[0], "raw", data=bytes(document[1]))
    if isinstance(document, str) and document.startswith(("http://", "https://")):
        return _Source(document, "hosted", url=document)
    if isinstance(document, (str, os.PathLike)):
        return _Source(os.fspath(document), "raw", path=Path(document))
    if hasattr(document, "read"):
        data = document.read()
        if not isinstance(data, bytes):
            raise TypeError("a file object as document must be opened in binary mode")
        name = os.path.basename(str(getattr(document, "name", "")))
        return _Source(name or f"document-{index + 1}", "raw", data=data, named=bool(name))
    raise TypeError(f"cannot use {type(document).__name__} as a document: give a path, a "
                    "URL, bytes, (name, bytes), a binary file, a VaultDocument or a vault record")


def _expand(documents: Any) -> list[_Source]:
    """Documents of `Client.extract_many`: globs and folders become their files, in order."""
    if isinstance(documents, (str, os.PathLike, bytes, bytearray, memoryview, VaultDocument,
                              Mapping)) or (isinstance(documents, tuple) and len(documents) == 2
                                            and isinstance(documents[0], str)
                                            and isinstance(documents[1], bytes)):
        documents = [documents]
    sources: list[_Source] = []
    for document in documents:
        if isinstance(document, (str, os.PathLike)) and not str(document).startswith(
                ("http://", "https://")):
            text = os.fspath(document)
            if _GLOB_CHARS.search(text) and not os.path.exists(text):
                import glob

                matches = sorted(glob.glob(text, recursive=True))
                if not matches:
                    # A typo in a notebook should be loud, not an empty batch.
                    raise FileNotFoundError(f"no file matches {text!r}")
                sources += [_source(match) for match in matches if os.path.isfile(match)]
                continue
            if os.path.isdir(text):
                files = sorted(p for p in Path(text).iterdir()
                               if p.is_file() and p.suffix.lower() in _DOCUMENT_SUFFIXES)
                sources += [_Source(str(p), "raw", path=p) for p in files]
                continue
        sources.append(_source(document, index=len(sources)))
    return sources


def trigger_request(
    document: Document,
    *,
    configuration_name: str | None = None,
    configuration_id: str | None = None,
    classifier_id: str | None = None,
    extraction_name: str | None = None,
    content_type: str | None = None,
    save_extraction: bool | None = None,
    delete_after_first_fetch: bool | None = None,
) -> dict[str, Any]:
    """Build the trigger request object (2.1) for a document; options left None are omitted.

    Bytes travel as base64 with the content type told by the bytes; the file name (of a
    path, a ``(name, bytes)`` pair or a named file object) becomes the extraction name.

    >>> body = trigger_request(b"%PDF-1.4 x", configuration_name="invoices")
    >>> body["input_type"], body["content_type"], body["document_raw_data"]
    ('raw', 'application/pdf', 'JVBERi0xLjQgeA==')
    >>> trigger_request(VaultDocument("d1"), configuration_id="c1")
    {'configuration_id': 'c1', 'input_type': 'service', 'document_storage_id': 'd1'}
    """
    return _build_request(_source(document), configuration_name=configuration_name,
                          configuration_id=configuration_id, classifier_id=classifier_id,
                          extraction_name=extraction_name, content_type=content_type,
                          save_extraction=save_extraction,
                          delete_after_first_fetch=delete_after_first_fetch)


def _build_request(source: _Source, *, configuration_name: str | None = None,
                   configuration_id: str | None = None, classifier_id: str | None = None,
                   extraction_name: str | None = None, content_type: str | None = None,
                   save_extraction: bool | None = None,
                   delete_after_first_fetch: bool | None = None) -> dict[str, Any]:
    if (configuration_name is None) == (configuration_id is None):
        raise TypeError("give exactly one of configuration_name and configuration_id")
    body: dict[str, Any] = (
        {"configuration_name": configuration_name} if configuration_name is not None
        else {"configuration_id": configuration_id})
    if classifier_id is not None:
        body["classifier_id"] = classifier_id
    if extraction_name is None and source.input_type == "raw" and source.named:
        extraction_name = source.file_name
    if extraction_name is not None:
        body["extraction_name"] = extraction_name
    for key, value in (("save_extraction", save_extraction),
                       ("delete_after_first_fetch", delete_after_first_fetch)):
        if value is not None:
            body[key] = value
    body["input_type"] = source.input_type
    if source.input_type == "raw":
        import base64

        data = source.read()
        content_type = content_type or sniff_content_type(data)
        if content_type is not None:
            body["content_type"] = content_type
        body["document_raw_data"] = base64.b64encode(data).decode("ascii")
    elif source.input_type == "hosted":
        if content_type is not None:
            body["content_type"] = content_type
        body["document_host_url"] = source.url
    else:
        if content_type is not None:
            body["content_type"] = content_type
        body["document_storage_id"] = source.document_id
    return body


def _retry(retries: int | Retry, idempotent: bool) -> Retry:
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


def _reason(exc: BaseException) -> str:
    """The root cause of a requests error, without urllib3's object reprs."""
    inner: Any = exc.args[0] if exc.args else exc
    if isinstance(inner, MaxRetryError) and inner.reason is not None:
        inner = inner.reason
    text = str(inner)
    return re.sub(r"<[^>]*object at 0x[0-9a-f]+>:\s*", "", text) or type(inner).__name__


def _chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _id_list(extraction_ids: str | Iterable[str]) -> list[str]:
    ids = [extraction_ids] if isinstance(extraction_ids, str) else list(extraction_ids)
    return list(dict.fromkeys(ids))  # the service answers each id once anyway


# -- the embedded default ---------------------------------------------------------------
_embedded: LocalService | None = None
_embedded_lock = threading.Lock()


def _embedded_service() -> LocalService:
    """The process's one embedded LocalService, started on first use, stopped at exit."""
    global _embedded
    from .local import LocalService, LocalServiceError

    with _embedded_lock:
        if _embedded is None:
            missing = [m for m in ("fastapi", "uvicorn", "pypdfium2")
                       if importlib.util.find_spec(m) is None]
            if missing:
                raise LocalServiceError(
                    "SERVICE_BASE_URL and SERVICE_API_KEY are not set, and the embedded "
                    f"service needs the 'service' extra (missing: {', '.join(missing)}): "
                    "pip install 'servicetools[service]'")
            service = LocalService()
            service.start()
            atexit.register(service.stop)
            _embedded = service
        elif _embedded.process is None or _embedded.process.poll() is not None:
            _embedded.start()  # it died (or was stopped): same port, token and data
        return _embedded


class Client:
    """A client of one service, for one API key, on one `requests.Session`.

    ``timeout`` is seconds (or ``(connect, read)``) per request; ``retries`` the retries of
    an idempotent call (or a urllib3 ``Retry`` for them). A given ``session`` is used as
    is, plus the client's retrying adapters mounted on the service's URL; the client
    closes only a session it made itself.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
        retries: int | Retry = DEFAULT_RETRIES,
        session: requests.Session | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._api_key = api_key
        self._api = self.base_url + API_PREFIX
        self._own_session = session is None
        self.session = session if session is not None else requests.Session()
        # requests picks the adapter with the longest matching prefix, so the idempotent
        # paths get the retrying one and everything else (triggers, updates, uploads)
        # the cautious one.
        self.session.mount(self._api + "/", HTTPAdapter(
            max_retries=_retry(retries, idempotent=False), pool_maxsize=_POOL_SIZE))
        idempotent = HTTPAdapter(max_retries=_retry(retries, idempotent=True),
                                 pool_maxsize=_POOL_SIZE)
        for path in _IDEMPOTENT_PATHS:
            self.session.mount(self._api + path, idempotent)
        self.vault = VaultAPI(self)
        #: The embedded service this client talks to (from `from_env`), kept alive by it.
        self.local_service: LocalService | None = None

    @classmethod
    def from_env(cls, **options: Any) -> Client:
        """``SERVICE_BASE_URL`` and ``SERVICE_API_KEY``; when both are unset, the embedded
        `LocalService` (started once per process, stopped at exit)."""
        base_url = os.environ.get("SERVICE_BASE_URL", "").strip()
        api_key = os.environ.get("SERVICE_API_KEY", "").strip()
        if base_url and api_key:
            return cls(base_url=base_url, api_key=api_key, **options)
        if base_url or api_key:
            missing = "SERVICE_API_KEY" if base_url else "SERVICE_BASE_URL"
            raise ValueError(f"{missing} is not set: set both SERVICE_BASE_URL and "
                             "SERVICE_API_KEY for a remote service, or neither for the "
                             "embedded one")
        service = _embedded_service()
        client = cls(base_url=service.base_url, api_key=service.token, **options)
        client.local_service = service
        return client

    def close(self) -> None:
        """Close the session if the client made it (the embedded service lives on)."""
        if self._own_session:
            self.session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        embedded = " (embedded)" if self.local_service is not None else ""
        return f"<Client {self.base_url}{embedded}>"

    # -- transport ---------------------------------------------------------------------
    def _send(self, method: str, path: str, *, json: Any = None,
              params: Mapping[str, str] | None = None, files: Any = None, data: Any = None,
              timeout: float | tuple[float, float] | None = None,
              accept: str = "application/json") -> requests.Response:
        url = self._api + path
        headers = {"X-Api": self._api_key, "User-Agent": _user_agent(), "Accept": accept}
        try:
            response = self.session.request(method, url, json=json, params=params,
                                            files=files, data=data, headers=headers,
                                            timeout=timeout or self.timeout)
        except requests.Timeout as exc:
            raise RequestTimeout(f"{method} {url} got no answer in time "
                                 f"({_reason(exc)})", method=method, url=url) from exc
        except requests.ConnectionError as exc:
            note = "" if path.startswith(_IDEMPOTENT_PATHS) else (
                "; not retried, as it may have reached the service")
            raise ServiceUnreachable(f"cannot reach the service for {method} {url}: "
                                     f"{_reason(exc)}{note}", method=method, url=url) from exc
        except requests.RequestException as exc:
            raise TransportError(f"{method} {url} failed: {_reason(exc)}", method=method,
                                 url=url) from exc
        if response.status_code >= 400:
            raise error_from_response(response)
        return response

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._send(method, path, **kwargs)
        try:
            body = response.json()
        except ValueError:
            body = _UNSET
        if not isinstance(body, dict):
            kind = response.headers.get("Content-Type", "no content type")
            snippet = " ".join(response.text.split())[:200]
            raise InvalidResponse(f"{method} {response.url} answered {response.status_code} "
                                  f"with {kind} instead of a JSON object: {snippet!r}",
                                  response)
        return body

    # -- section 4.1-4.6 ---------------------------------------------------------------
    def trigger_sync(
        self,
        document: Document,
        *,
        configuration_name: str | None = None,
        configuration_id: str | None = None,
        classifier_id: str | None = None,
        extraction_name: str | None = None,
        content_type: str | None = None,
        save_extraction: bool | None = None,
        delete_after_first_fetch: bool | None = None,
        show_schema_output: bool = False,
    ) -> dict[str, Any]:
        """Extract and wait for the extracted data object (4.1).

        With ``show_schema_output=True`` the answer is ``{"extracted_data",
        "schema_output", "validation"}``. A pipeline failure raises `ExtractionFailed`.
        ``document`` may also be a ready trigger request object (a mapping with
        ``input_type``), sent as it is.
        """
        body = self._trigger_body(document, configuration_name=configuration_name,
                                  configuration_id=configuration_id,
                                  classifier_id=classifier_id, extraction_name=extraction_name,
                                  content_type=content_type, save_extraction=save_extraction,
                                  delete_after_first_fetch=delete_after_first_fetch)
        return self._json("POST", "/extraction/trigger_sync", json=body,
                          params=_schema_param(show_schema_output))

    def trigger_async(
        self,
        document: Document,
        *,
        configuration_name: str | None = None,
        configuration_id: str | None = None,
        classifier_id: str | None = None,
        extraction_name: str | None = None,
        content_type: str | None = None,
        delete_after_first_fetch: bool | None = None,
    ) -> dict[str, Any]:
        """Start an extraction; the extraction info object (4.2), id at ``extraction_id``."""
        body = self._trigger_body(document, configuration_name=configuration_name,
                                  configuration_id=configuration_id,
                                  classifier_id=classifier_id, extraction_name=extraction_name,
                                  content_type=content_type,
                                  delete_after_first_fetch=delete_after_first_fetch)
        return self._json("POST", "/extraction/trigger_async", json=body)

    def _trigger_body(self, document: Document, **options: Any) -> dict[str, Any]:
        if isinstance(document, Mapping) and "input_type" in document:
            given = sorted(k for k, v in options.items() if v is not None)
            if given:
                raise TypeError(f"{', '.join(given)} cannot be combined with a ready trigger "
                                "request; put them in the request")
            return dict(document)
        return _build_request(_source(document), **options)

    def get_result(self, extraction_id: str, *, show_schema_output: bool = False
                   ) -> dict[str, Any]:
        """The extracted data object (4.3); `ExtractionRunning` before it ended."""
        return self._json("GET", f"/extraction/result/get/{_segment(extraction_id)}",
                          params=_schema_param(show_schema_output))

    def list_targets(self, extraction_id: str) -> dict[str, Any]:
        """``{"extracted_targets": [...]}`` of an extraction (4.4)."""
        return self._json("GET", f"/extraction/result/list/{_segment(extraction_id)}")

    def get_statuses(self, extraction_ids: str | Iterable[str]) -> dict[str, dict[str, Any]]:
        """The latest status object of each id (the ``status_map`` of 4.5).

        Any number of ids: they go in requests of at most 1,000 (D5).
        """
        statuses: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(_id_list(extraction_ids), MAX_STATUS_IDS):
            statuses.update(self._status_map(chunk))
        return statuses

    def _status_map(self, ids: Sequence[str], timeout: float | tuple[float, float] | None = None
                    ) -> dict[str, dict[str, Any]]:
        body = self._json("POST", "/extraction/status/list",
                          json={"extraction_id_list": list(ids)}, timeout=timeout)
        status_map = body.get("status_map")
        if not isinstance(status_map, dict):
            raise InvalidResponse("the status list answer has no status_map object")
        return status_map

    def update_results(self, extraction_id: str, updates: Iterable[Mapping[str, Any]], *,
                       show_schema_output: bool = False) -> dict[str, Any]:
        """Replace extracted values (4.6); the extracted data object after the updates.

        >>> client.update_results(eid, [{"extracted_target_id": tid, "type": "field",
        ...     "new_extracted_values": [{"extracted_field": "INV-1"}]}])  # doctest: +SKIP
        """
        body = {"extraction_id": extraction_id, "updates": [dict(u) for u in updates]}
        return self._json("POST", "/extraction/result/update", json=body,
                          params=_schema_param(show_schema_output))

    # -- waiting -----------------------------------------------------------------------
    def wait(
        self,
        extraction_ids: str | Iterable[str],
        *,
        timeout: float | None = DEFAULT_WAIT_TIMEOUT,
        poll: float = DEFAULT_POLL,
        max_poll: float = DEFAULT_MAX_POLL,
        chunk_size: int = MAX_STATUS_IDS,
        progress: bool = True,
    ) -> dict[str, dict[str, Any]]:
        """Poll until every extraction is ``ended`` or ``error``; the final status of each.

        Each round asks for the ids still running, in requests of at most ``chunk_size``
        ids (one per chunk). After a round in which some finished, the pause is at most
        ``poll`` seconds, shorter as the end nears at the rate they have been finishing
        (down to `MIN_POLL`); it grows 1.5x per idle round up to ``max_poll``; it is at
        least twice the last round's duration, so a huge wait does not hog the service.
        Connection errors and 5xx answers (a service restarting) are waited through until
        ``timeout`` (None: no limit), then `WaitTimeout`. ``progress`` shows a bar (a
        widget in Jupyter, text in a terminal) with ended and error counts.
        """
        ids = _id_list(extraction_ids)
        bar = _progress_bar(len(ids), "waiting", progress)
        counts = {"ended": 0, "error": 0}

        def on_final(extraction_id: str, status: dict[str, Any]) -> None:
            kind = "ended" if status.get("status_type") == "ended" else "error"
            counts[kind] += 1
            bar.set_postfix(counts, refresh=False)
            bar.update(1)

        try:
            return self._poll(ids, on_final=on_final, timeout=timeout, poll=poll,
                              max_poll=max_poll, chunk_size=chunk_size)
        finally:
            bar.close()

    def _poll(self, ids: Sequence[str], *, on_final: Callable[[str, dict[str, Any]], None],
              timeout: float | None, poll: float, max_poll: float, chunk_size: int,
              ) -> dict[str, dict[str, Any]]:
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
            for chunk in _chunks(pending, chunk_size):
                remaining = deadline - time.monotonic()
                try:
                    status_map = self._status_map(chunk, timeout=self._bounded(remaining))
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
                delay = _pace(len(pending), len(final) - done_then,
                              round_start - since, poll)
            else:
                delay = min(delay * POLL_BACKOFF, max_poll)
            took = time.monotonic() - round_start
            time.sleep(min(max(delay, 2 * took), remaining))
        return {i: latest[i] for i in ids}

    def _bounded(self, remaining: float) -> float | tuple[float, float]:
        """The request timeout, cut to what is left of a wait (at least 1 s)."""
        if math.isinf(remaining):
            return self.timeout
        connect, read = (self.timeout if isinstance(self.timeout, tuple)
                         else (self.timeout, self.timeout))
        cut = max(remaining, 1.0)
        return (min(connect, cut), min(read, cut))

    # -- many documents ----------------------------------------------------------------
    def extract_many(
        self,
        documents: Document | Iterable[Document],
        *,
        configuration_name: str | None = None,
        configuration_id: str | None = None,
        classifier_id: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        upload_first: bool = False,
        timeout: float | None = DEFAULT_BATCH_TIMEOUT,
        progress: bool = True,
        chunk_size: int = MAX_STATUS_IDS,
        poll: float = DEFAULT_POLL,
        max_poll: float = DEFAULT_MAX_POLL,
    ) -> Batch:
        """Run many documents through the service; a `Batch` of results and failures.

        ``documents``: paths, globs (``"docs/*.pdf"``), folders, URLs, bytes,
        ``(name, bytes)``, `VaultDocument` s or vault records. Triggers run
        asynchronously, ``concurrency`` at a time (after a vault upload each, with
        ``upload_first``), then one wait polls every extraction and results are
        fetched as they end. A document that fails (refused at trigger, ``error`` in
        the pipeline, not done within ``timeout``) goes to ``batch.failures`` with the
        reason; nothing aborts the batch.
        """
        from .batch import extract_many

        return extract_many(self, _expand(documents), configuration_name=configuration_name,
                            configuration_id=configuration_id, classifier_id=classifier_id,
                            concurrency=concurrency, upload_first=upload_first,
                            timeout=timeout, progress=progress, chunk_size=chunk_size,
                            poll=poll, max_poll=max_poll)


class VaultAPI:
    """The document vault (4.7-4.10), as ``client.vault``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def upload(self, document: Document, *, doctype: str = "document",
               name: str | None = None) -> dict[str, Any]:
        """Store a document; its vault record (2.9) with ``num_pages``.

        ``name`` defaults to the file name (or ``document.pdf`` etc. for bytes).
        """
        source = _source(document)
        if source.input_type != "raw":
            raise TypeError("upload takes a path, bytes or a binary file, "
                            f"not a {source.input_type} document")
        data = source.read()
        if name is None:
            bare = isinstance(document, (bytes, bytearray, memoryview))
            name = "document" if bare else source.file_name
            if source.path is None and not Path(name).suffix:
                name += _SUFFIX_BY_TYPE.get(sniff_content_type(data) or "", "")
        # Multipart, not base64: a third smaller, and not retried (not idempotent).
        return self._client._json("POST", "/vault/upload",
                                  files={"uploadFile": (name, data)},
                                  data={"doctype": doctype})

    def list(self) -> builtins.list[dict[str, Any]]:
        """The caller's vault records (4.8), oldest first; no ``num_pages`` in them."""
        body = self._client._json("GET", "/vault/list")
        documents = body.get("documents")
        if not isinstance(documents, builtins.list):
            raise InvalidResponse("the vault list answer has no documents array")
        return documents

    def info(self, document_id: str) -> dict[str, Any]:
        """The vault record of one document (4.9), with ``num_pages``."""
        return self._client._json("GET", f"/vault/info/{_segment(document_id)}")

    def download(self, document_id: str) -> bytes:
        """The stored bytes of a document (4.10)."""
        return self._client._send("GET", f"/vault/get/{_segment(document_id)}",
                                  accept="*/*").content


@functools.cache
def _user_agent() -> str:
    from . import __version__  # here, not at import: the package imports this module

    return f"servicetools/{__version__} requests/{requests.__version__}"


def _schema_param(show_schema_output: bool) -> dict[str, str] | None:
    return {"show_schema_output": "True"} if show_schema_output else None


def _pace(pending: int, finished: int, elapsed: float, poll: float) -> float:
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


def _segment(value: str) -> str:
    """A path segment: quoted, so an id with ``/`` or ``?`` cannot change the path."""
    from urllib.parse import quote

    if not isinstance(value, str) or not value:
        raise TypeError(f"an id must be a non-empty string, not {value!r}")
    return quote(value, safe="")


class _NoBar:
    def update(self, n: int = 1) -> None: ...
    def set_postfix(self, *args: Any, **kwargs: Any) -> None: ...
    def set_description(self, *args: Any, **kwargs: Any) -> None: ...
    def close(self) -> None: ...


def _progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm.auto bar (a widget in Jupyter, text in a terminal), or one that does nothing."""
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="doc", dynamic_ncols=True)

