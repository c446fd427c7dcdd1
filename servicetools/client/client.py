"""`Client`: the thin client of the Document Data Extraction Service, one method per endpoint.

>>> Client(base_url="http://127.0.0.1:8000/", api_key="token")
<Client http://127.0.0.1:8000>
>>> client = Client.from_env()            # doctest: +SKIP
>>> r = client.trigger_sync("inv.pdf", configuration_name="invoices")  # doctest: +SKIP
>>> r.fields["Invoice Number"], client.get_statuses(r)  # doctest: +SKIP
>>> batch = client.extract_many("docs/*.pdf", configuration_name="invoices")  # doctest: +SKIP

A single result (`trigger_sync`, `get_result`, `update_results`) is a `Result`: the
service's JSON, unknown fields included, as a read-only mapping with its parts by name;
every method that takes an extraction id takes a `Result` too. Other answers are plain
dicts. Errors are the tree of :mod:`servicetools.client.errors`. Which calls are
retried, and how, is :mod:`servicetools.client.retries`; documents and request bodies are
:mod:`servicetools.client.documents`; waiting is :mod:`servicetools.client.polling`.
"""

from __future__ import annotations

import builtins
import functools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

import requests
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from .._version import __version__
from ..wire.content import SUFFIXES, sniff_content_type
from ..wire.protocol import API_PREFIX, AUTH_HEADER, MAX_STATUS_IDS, StatusType
from . import many, polling
from .batch import Batch
from .connections import ExpiringAdapter
from .documents import Document, build_request, expand, source_of
from .errors import (
    InvalidResponse,
    RequestTimeout,
    ServiceUnreachable,
    TransportError,
    error_from_response,
)
from .local import embedded_service
from .many import DEFAULT_BATCH_TIMEOUT, DEFAULT_CONCURRENCY
from .polling import DEFAULT_MAX_POLL, DEFAULT_POLL, DEFAULT_WAIT_TIMEOUT, OnFinal
from .progress import progress_bar
from .result import ExtractionRef, Result, extraction_id_of
from .retries import DEFAULT_RETRIES, IDEMPOTENT_PATHS, retry_policy

if TYPE_CHECKING:
    from .local import LocalService
    from .sinks import ResultSink

__all__ = ["Client", "DEFAULT_TIMEOUT", "VaultAPI"]

#: Seconds to open a connection, and to wait for an answer (a sync trigger can queue).
DEFAULT_TIMEOUT: tuple[float, float] = (10.0, 120.0)
# Connections kept per host: room for extract_many's threads without discarding any.
_POOL_SIZE = 32
_UNSET: Any = object()
T = TypeVar("T")  # what the result sink of extract_many(to=...) returns


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
        self.session = session if session is not None else _session_for(self._api + "/")
        # requests picks the adapter with the longest matching prefix, so the idempotent
        # paths get the retrying one and everything else (triggers, updates, uploads)
        # the cautious one.
        # Connections idle for a few seconds are not used again (client.connections).
        self.session.mount(self._api + "/", ExpiringAdapter(
            max_retries=retry_policy(retries, idempotent=False), pool_maxsize=_POOL_SIZE))
        idempotent = ExpiringAdapter(max_retries=retry_policy(retries, idempotent=True),
                                     pool_maxsize=_POOL_SIZE)
        for path in IDEMPOTENT_PATHS:
            self.session.mount(self._api + path, idempotent)
        self.vault = VaultAPI(self)
        #: The embedded service this client talks to (from `from_env`), kept alive by it.
        self.local_service: LocalService | None = None

    @classmethod
    def from_env(cls, *, configurations: str | os.PathLike[str] | None = None,
                 **options: Any) -> Client:
        """``SERVICE_BASE_URL`` and ``SERVICE_API_KEY``; when both are unset, the embedded
        `LocalService` (started once per process, stopped at exit).

        ``configurations``: a folder of your own configuration files for the embedded
        service (one embedded service per folder; the bundled ones when None). A remote
        service has the configurations it was given: with one, this is refused.
        """
        base_url = os.environ.get("SERVICE_BASE_URL", "").strip()
        api_key = os.environ.get("SERVICE_API_KEY", "").strip()
        if base_url and api_key:
            if configurations is not None:
                raise ValueError("configurations= is for the embedded service: a remote "
                                 "service (SERVICE_BASE_URL) has its own configurations")
            return cls(base_url=base_url, api_key=api_key, **options)
        if base_url or api_key:
            missing = "SERVICE_API_KEY" if base_url else "SERVICE_BASE_URL"
            raise ValueError(f"{missing} is not set: set both SERVICE_BASE_URL and "
                             "SERVICE_API_KEY for a remote service, or neither for the "
                             "embedded one")
        service = embedded_service(configurations)
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
        headers = {AUTH_HEADER: self._api_key, "User-Agent": _user_agent(), "Accept": accept}
        try:
            response = self.session.request(method, url, json=json, params=params,
                                            files=files, data=data, headers=headers,
                                            timeout=timeout or self.timeout)
        except requests.Timeout as exc:
            raise RequestTimeout(f"{method} {url} got no answer in time "
                                 f"({_reason(exc)})", method=method, url=url) from exc
        except requests.ConnectionError as exc:
            note = "" if path.startswith(IDEMPOTENT_PATHS) else (
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
    ) -> Result:
        """Extract and wait for the extracted data object (4.1), as a `Result`.

        With ``show_schema_output=True`` the answer is ``{"extracted_data",
        "schema_output", "validation"}`` (``r.schema_output``, ``r.validation``). A
        pipeline failure raises `ExtractionFailed`.
        ``document`` may also be a ready trigger request object (a mapping with
        ``input_type``), sent as it is.
        """
        body = self._trigger_body(document, configuration_name=configuration_name,
                                  configuration_id=configuration_id,
                                  classifier_id=classifier_id, extraction_name=extraction_name,
                                  content_type=content_type, save_extraction=save_extraction,
                                  delete_after_first_fetch=delete_after_first_fetch)
        return Result(self._json("POST", "/extraction/trigger_sync", json=body,
                                 params=_schema_param(show_schema_output)))

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
        return build_request(source_of(document), **options)

    def get_result(self, extraction_id: ExtractionRef, *, show_schema_output: bool = False
                   ) -> Result:
        """The extracted data object (4.3) as a `Result`; `ExtractionRunning` before it
        ended. ``extraction_id``: an id, or a result of the extraction (`Result`)."""
        return Result(self._json("GET", f"/extraction/result/get/{_segment(extraction_id)}",
                                 params=_schema_param(show_schema_output)))

    def list_targets(self, extraction_id: ExtractionRef) -> dict[str, Any]:
        """``{"extracted_targets": [...]}`` of an extraction (4.4)."""
        return self._json("GET", f"/extraction/result/list/{_segment(extraction_id)}")

    def get_statuses(self, extraction_ids: ExtractionRef | Iterable[ExtractionRef]
                     ) -> dict[str, dict[str, Any]]:
        """The latest status object of each id (the ``status_map`` of 4.5).

        Any number of ids (or results): they go in requests of at most 1,000 (D5).
        """
        statuses: dict[str, dict[str, Any]] = {}
        for chunk in polling.chunks(polling.id_list(extraction_ids), MAX_STATUS_IDS):
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

    def update_results(self, extraction_id: ExtractionRef,
                       updates: Iterable[Mapping[str, Any]], *,
                       show_schema_output: bool = False) -> Result:
        """Replace extracted values (4.6); the extracted data object after the updates,
        as a `Result`. ``extraction_id``: an id, or a result of the extraction.

        >>> client.update_results(eid, [{"extracted_target_id": tid, "type": "field",
        ...     "new_extracted_values": [{"extracted_field": "INV-1"}]}])  # doctest: +SKIP
        """
        body = {"extraction_id": extraction_id_of(extraction_id),
                "updates": [dict(u) for u in updates]}
        return Result(self._json("POST", "/extraction/result/update", json=body,
                                 params=_schema_param(show_schema_output)))

    # -- waiting -----------------------------------------------------------------------
    def wait(
        self,
        extraction_ids: ExtractionRef | Iterable[ExtractionRef],
        *,
        timeout: float | None = DEFAULT_WAIT_TIMEOUT,
        poll: float = DEFAULT_POLL,
        max_poll: float = DEFAULT_MAX_POLL,
        chunk_size: int = MAX_STATUS_IDS,
        progress: bool = True,
        on_final: OnFinal | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Poll until every extraction is ``ended`` or ``error``; the final status of each.

        ``extraction_ids``: one id or many; a `Result` or the `trigger_async` answer
        stands for its id.

        Each round asks for the ids still running, in requests of at most ``chunk_size``
        ids (one per chunk). After a round in which some finished, the pause is at most
        ``poll`` seconds, shorter as the end nears at the rate they have been finishing
        (down to `polling.MIN_POLL`); it grows 1.5x per idle round up to ``max_poll``; it
        is at least twice the last round's duration, so a huge wait does not hog the
        service. Connection errors and 5xx answers (a service restarting) are waited
        through until ``timeout`` (None: no limit), then `WaitTimeout`. ``progress`` shows
        a bar (a widget in Jupyter, text in a terminal) with ended and error counts.
        ``on_final(extraction_id, status)`` is called as each one ends, from this thread,
        so work can start on it before the others are done.
        """
        ids = polling.id_list(extraction_ids)
        bar = progress_bar(len(ids), "waiting", progress)
        counts = {"ended": 0, "error": 0}

        def count(extraction_id: str, status: dict[str, Any]) -> None:
            kind = "ended" if status.get("status_type") == StatusType.ENDED else "error"
            counts[kind] += 1
            bar.set_postfix(counts, refresh=False)
            bar.update(1)
            if on_final is not None:
                on_final(extraction_id, status)

        try:
            return polling.poll(self._ask_statuses, ids, on_final=count, timeout=timeout,
                                poll=poll, max_poll=max_poll, chunk_size=chunk_size)
        finally:
            bar.close()

    def _ask_statuses(self, ids: Sequence[str], remaining: float | None
                      ) -> dict[str, dict[str, Any]]:
        return self._status_map(ids, timeout=self._bounded(remaining))

    def _bounded(self, remaining: float | None) -> float | tuple[float, float]:
        """The request timeout, cut to what is left of a wait (at least 1 s)."""
        if remaining is None or math.isinf(remaining):
            return self.timeout
        connect, read = (self.timeout if isinstance(self.timeout, tuple)
                         else (self.timeout, self.timeout))
        cut = max(remaining, 1.0)
        return (min(connect, cut), min(read, cut))

    # -- many documents ----------------------------------------------------------------
    @overload
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
        to: None = None,
    ) -> Batch: ...

    @overload
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
        to: ResultSink[T],
    ) -> T: ...

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
        to: ResultSink[T] | str | os.PathLike[str] | None = None,
        batch_name: str | None = None,
    ) -> Batch | T:
        """Run many documents through the service; a `Batch` of results and failures.

        ``documents``: paths, globs (``"docs/*.pdf"``), folders (their PDF, PNG and
        JPEG files, not those of folders under them), URLs, bytes, ``(name, bytes)``,
        `VaultDocument` s or vault records; a glob that matches nothing or a folder
        without a document raises FileNotFoundError. Triggers run
        asynchronously, ``concurrency`` at a time (after a vault upload each, with
        ``upload_first``), then one wait polls every extraction and results are
        fetched as they end. A document that fails (refused at trigger, ``error`` in
        the pipeline, not done within ``timeout``) goes to ``batch.failures`` with the
        reason; nothing aborts the batch.

        With ``to=SINK`` (a `ResultSink`: ``st.frames.DatasetWriter(path, batch_name)``
        streams into a Parquet dataset), each result goes to the sink as soon as it is
        fetched and is not kept, the failures and the batch's configuration and timings
        follow at the end, and what the sink's ``close`` returns (the `frames.Dataset`)
        is returned instead of a `Batch`. ``to=PATH`` and ``batch_name=`` were the old
        way to name a dataset: they raise TypeError, saying what to write instead.
        """
        sink = _result_sink(to, batch_name)
        batch = many.ExtractMany(self, expand(documents), configuration_name=configuration_name,
                                 configuration_id=configuration_id,
                                 classifier_id=classifier_id, concurrency=concurrency,
                                 upload_first=upload_first, timeout=timeout,
                                 progress=progress, chunk_size=chunk_size, poll=poll,
                                 max_poll=max_poll, sink=sink).run()
        return batch if sink is None else batch.write_to(sink)


class VaultAPI:
    """The document vault (4.7-4.10), as ``client.vault``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def upload(self, document: Document, *, doctype: str = "document",
               name: str | None = None) -> dict[str, Any]:
        """Store a document; its vault record (2.9) with ``num_pages``.

        ``name`` defaults to the file name (or ``document.pdf`` etc. for bytes).
        """
        source = source_of(document)
        if source.input_type != "raw":
            raise TypeError("upload takes a path, bytes or a binary file, "
                            f"not a {source.input_type} document")
        data = source.read()
        if name is None:
            bare = isinstance(document, (bytes, bytearray, memoryview))
            name = "document" if bare else source.file_name
            if source.path is None and not Path(name).suffix:
                name += SUFFIXES.get(sniff_content_type(data) or "", "")
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


def _session_for(url: str) -> requests.Session:
    """A session with the environment's settings for ``url`` read now, once.

    requests reads proxies (``HTTP(S)_PROXY``, ``NO_PROXY``), the CA bundle
    (``REQUESTS_CA_BUNDLE``) and ``~/.netrc`` again on every request, scanning the whole
    environment twice (about 80 us a request, measured), while all of a client's requests
    go to one service: so they are read here, as requests would read them for ``url``.
    """
    session = requests.Session()
    found = session.merge_environment_settings(url, {}, None, None, None)
    session.proxies.update(found["proxies"])
    session.verify = found["verify"]
    session.auth = requests.utils.get_netrc_auth(url)
    session.trust_env = False
    return session


@functools.cache
def _user_agent() -> str:
    return f"servicetools/{__version__} requests/{requests.__version__}"


def _schema_param(show_schema_output: bool) -> dict[str, str] | None:
    return {"show_schema_output": "True"} if show_schema_output else None


def _segment(value: ExtractionRef) -> str:
    """A path segment: quoted, so an id with ``/`` or ``?`` cannot change the path.
    A result stands for its extraction id."""
    from urllib.parse import quote

    if isinstance(value, Mapping):
        value = extraction_id_of(value)
    if not isinstance(value, str) or not value:
        raise TypeError(f"an id must be a non-empty string, not {value!r}")
    return quote(value, safe="")


def _reason(exc: BaseException) -> str:
    """The root cause of a requests error, without urllib3's object reprs."""
    inner: Any = exc.args[0] if exc.args else exc
    if isinstance(inner, MaxRetryError) and inner.reason is not None:
        inner = inner.reason
    text = str(inner)
    return re.sub(r"<[^>]*object at 0x[0-9a-f]+>:\s*", "", text) or type(inner).__name__


def _result_sink(to: ResultSink[T] | str | os.PathLike[str] | None, batch_name: str | None
                 ) -> ResultSink[T] | None:
    """The sink `Client.extract_many` was given. The old forms, a path and a
    ``batch_name`` (they needed the client to reach up to the analysis side's dataset
    writer), are refused before anything runs, with what to write instead."""
    # json.dumps: a Python string literal in double quotes, as the docs write them.
    name = [] if batch_name is None else [json.dumps(batch_name, ensure_ascii=False)]
    if isinstance(to, str | os.PathLike):
        writer = ", ".join([json.dumps(os.fspath(to), ensure_ascii=False), *name])
        raise TypeError(f"extract_many(to=PATH{', batch_name=NAME' if name else ''}) is gone:"
                        f" pass the dataset's sink, to=st.frames.DatasetWriter({writer})")
    if name:
        raise TypeError("extract_many(batch_name=NAME) is gone: the sink names the batch, "
                        f"to=st.frames.DatasetWriter(path, {name[0]})")
    if to is not None and not all(callable(getattr(to, method, None))
                                  for method in ("add", "add_failure", "close")):
        raise TypeError("to= takes a result sink (add, add_failure, close), such as "
                        f"st.frames.DatasetWriter(path, batch_name), not a {type(to).__name__}")
    return to
