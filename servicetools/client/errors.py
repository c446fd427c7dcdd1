"""Errors raised by the client: one root, `ServiceError`.

::

    ServiceError
    ├── TransportError              no HTTP answer at all (.method, .url)
    │   ├── ServiceUnreachable      refused, dropped or reset connection; unknown host
    │   └── RequestTimeout          connected, but no answer within the timeout
    ├── InvalidResponse             a 2xx answer that is not what the interface says
    ├── WaitTimeout                 `Client.wait` ran out of time (also a TimeoutError)
    └── APIError                    an HTTP error answer (.status, .code, .message,
        │                           .details, .response)
        ├── InvalidRequest          400  invalid_request, invalid_json, invalid_base64,
        │                                content_type_mismatch, too_many_ids,
        │                                invalid_multipart
        ├── AuthenticationError     401  unauthorized (also 403)
        ├── NotFound                404  not_found
        │   └── ExtractionNotSaved  404  extraction_not_saved
        ├── Conflict                409  update_conflict
        │   └── ExtractionRunning   409  extraction_running
        ├── ExtractionFailed        409 (result queries) or 422 (trigger_sync)
        │                                extraction_failed; .pipeline_message
        ├── DataDeleted             410  extraction_data_deleted
        ├── DocumentError           the document itself was refused
        │   ├── InvalidDocument     400  empty_document, invalid_document,
        │   │                            encrypted_document
        │   ├── DocumentTooLarge    413  document_too_large, too_many_pages
        │   └── UnsupportedMediaType 415 unsupported_media_type
        └── ServerError             5xx

A batch (`Client.extract_many`) that ends with some documents failed warns with
`BatchFailures`, a `UserWarning`: the failures are in ``batch.failures``.

The class is chosen by the D3 ``code`` first and the HTTP status second, so a remote
service with codes of its own still gets the right branch; a body that is not the D3
shape (a proxy's HTML page, FastAPI's ``{"detail": ...}``) still gives a readable message.

>>> import requests
>>> r = requests.Response()
>>> r.status_code, r._content = 404, b'{"error": {"code": "not_found", "message": "No x."}}'
>>> err = error_from_response(r)
>>> type(err).__name__, err.status, err.code, str(err)
('NotFound', 404, 'not_found', 'No x. [404 not_found]')
"""

from __future__ import annotations

import json
from typing import Any

import requests

from ..wire.protocol import ErrorCode

__all__ = [
    "APIError",
    "AuthenticationError",
    "BatchFailures",
    "Conflict",
    "DataDeleted",
    "DocumentError",
    "DocumentTooLarge",
    "ExtractionFailed",
    "ExtractionNotSaved",
    "ExtractionRunning",
    "InvalidDocument",
    "InvalidRequest",
    "InvalidResponse",
    "NotFound",
    "RequestTimeout",
    "ServerError",
    "ServiceError",
    "ServiceUnreachable",
    "TransportError",
    "UnsupportedMediaType",
    "WaitTimeout",
    "error_from_response",
]

#: How much of a body that is not the D3 shape goes into the message.
_SNIPPET = 200


class ServiceError(Exception):
    """Root of every error the client raises about the service."""


class TransportError(ServiceError):
    """The request got no HTTP answer; ``method`` and ``url`` say which request."""

    def __init__(self, message: str, *, method: str, url: str) -> None:
        super().__init__(message)
        self.method = method
        self.url = url

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), (str(self),), {"method": self.method, "url": self.url}))


class ServiceUnreachable(TransportError):
    """No connection, or the connection dropped before an answer came."""


class RequestTimeout(TransportError):
    """The service did not answer within the client's timeout."""


class InvalidResponse(ServiceError):
    """A successful HTTP answer whose body cannot be what the interface says."""

    def __init__(self, message: str, response: requests.Response | None = None) -> None:
        super().__init__(message)
        self.response = response

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), (str(self),), {}))


class BatchFailures(UserWarning):
    """Some documents of a batch gave no result (``batch.failures`` says which and why)."""


class WaitTimeout(ServiceError, TimeoutError):
    """`Client.wait` ran out of time.

    ``statuses`` holds the latest known status object of every id (final or not),
    ``pending`` the ids that had not reached ``ended`` or ``error``.
    """

    def __init__(self, message: str, statuses: dict[str, dict[str, Any]],
                 pending: list[str]) -> None:
        super().__init__(message)
        self.statuses = statuses
        self.pending = pending

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.statuses, self.pending))


class APIError(ServiceError):
    """An HTTP error answer of the service.

    ``status`` is the HTTP status; ``code``, ``message`` and ``details`` come from the
    D3 body (``code`` is None when the body is not of that shape); ``response`` is the
    `requests.Response`.
    """

    def __init__(self, message: str, *, status: int, code: str | None = None,
                 details: dict[str, Any] | None = None,
                 response: requests.Response | None = None) -> None:
        label = f"{status} {code}" if code else f"HTTP {status}"
        super().__init__(f"{message} [{label}]")
        self.message = message
        self.status = status
        self.code = code
        self.details: dict[str, Any] = details if details is not None else {}
        self.response = response

    def __reduce__(self) -> tuple[Any, ...]:
        # The response holds a socket-bound raw stream; a pickled error leaves it behind.
        return (_rebuild, (type(self), (self.message,),
                           {"status": self.status, "code": self.code, "details": self.details}))


class InvalidRequest(APIError):
    """400: the request breaks a rule of the interface (the message names the field)."""


class AuthenticationError(APIError):
    """401 (or 403): the API key is missing, unknown or revoked."""


class NotFound(APIError):
    """404: unknown id, or one that belongs to another user (D2 does not tell them apart)."""


class ExtractionNotSaved(NotFound):
    """404: the extraction ran with ``save_extraction: false``; only its status is kept."""


class Conflict(APIError):
    """409: the resource is not in a state that allows the request."""


class ExtractionRunning(Conflict):
    """409: the results were asked for before the pipeline ended; `Client.wait` first."""


class ExtractionFailed(APIError):
    """The extraction ended in ``error`` (409 on result queries, 422 on `trigger_sync`).

    ``pipeline_message`` is the message of the ``error`` status, ``extraction_status``
    the status object itself (when the service sent it).
    """

    @property
    def extraction_status(self) -> dict[str, Any] | None:
        status = self.details.get("status")
        return status if isinstance(status, dict) else None

    @property
    def pipeline_message(self) -> str:
        status = self.extraction_status
        if status and isinstance(status.get("message"), str):
            return str(status["message"])
        return self.message


class DataDeleted(APIError):
    """410: the data was deleted after its first fetch (``delete_after_first_fetch``)."""


class DocumentError(APIError):
    """The document itself was refused; the request around it was fine."""


class InvalidDocument(DocumentError):
    """400: the document is empty, damaged or encrypted."""


class DocumentTooLarge(DocumentError):
    """413: the document is over the size or page limit (``details`` has the limit)."""


class UnsupportedMediaType(DocumentError):
    """415: the document is not a PDF, PNG or JPEG, judged by its bytes."""


class ServerError(APIError):
    """5xx: the service failed (after the client's retries, for idempotent calls)."""


_BY_CODE: dict[str, type[APIError]] = {
    ErrorCode.INVALID_REQUEST: InvalidRequest,
    ErrorCode.INVALID_JSON: InvalidRequest,
    ErrorCode.INVALID_BASE64: InvalidRequest,
    ErrorCode.CONTENT_TYPE_MISMATCH: InvalidRequest,
    ErrorCode.TOO_MANY_IDS: InvalidRequest,
    ErrorCode.INVALID_MULTIPART: InvalidRequest,
    ErrorCode.EMPTY_DOCUMENT: InvalidDocument,
    ErrorCode.INVALID_DOCUMENT: InvalidDocument,
    ErrorCode.ENCRYPTED_DOCUMENT: InvalidDocument,
    ErrorCode.UNAUTHORIZED: AuthenticationError,
    ErrorCode.NOT_FOUND: NotFound,
    ErrorCode.EXTRACTION_NOT_SAVED: ExtractionNotSaved,
    ErrorCode.EXTRACTION_RUNNING: ExtractionRunning,
    ErrorCode.UPDATE_CONFLICT: Conflict,
    ErrorCode.EXTRACTION_FAILED: ExtractionFailed,
    ErrorCode.EXTRACTION_DATA_DELETED: DataDeleted,
    ErrorCode.DOCUMENT_TOO_LARGE: DocumentTooLarge,
    ErrorCode.TOO_MANY_PAGES: DocumentTooLarge,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaType,
}

_BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFound,
    409: Conflict,
    410: DataDeleted,
    413: DocumentTooLarge,
    415: UnsupportedMediaType,
    422: InvalidRequest,
}


def error_from_response(response: requests.Response) -> APIError:
    """The `APIError` subclass for an HTTP error answer, with a readable message."""
    status = response.status_code
    code, message, details = _parse_body(response)
    cls = _BY_CODE.get(code or "") or _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else APIError
    if not message:
        message = _fallback_message(response)
    return cls(message, status=status, code=code, details=details, response=response)


def _parse_body(response: requests.Response) -> tuple[str | None, str, dict[str, Any]]:
    """(code, message, details) of a D3 body; (None, readable text or "", {}) otherwise."""
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return None, "", {}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        code = err.get("code") if isinstance(err.get("code"), str) else None
        message = err.get("message") if isinstance(err.get("message"), str) else ""
        details = err.get("details") if isinstance(err.get("details"), dict) else {}
        return code, message or "", details or {}
    if isinstance(body, dict) and "detail" in body:
        # FastAPI's own shape, e.g. from a service built on it that kept the default.
        detail = body["detail"]
        text = detail if isinstance(detail, str) else json.dumps(detail)[:_SNIPPET]
        return None, text, {"detail": detail}
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return None, body["message"], {}
    return None, "", {}


def _fallback_message(response: requests.Response) -> str:
    request = response.request
    where = f" from {request.method} {request.url}" if request is not None else ""
    reason = f" {response.reason}" if response.reason else ""
    text = " ".join((response.text or "").split())[:_SNIPPET]
    return f"HTTP {response.status_code}{reason}{where}" + (f": {text}" if text else "")


def _rebuild(cls: type[Exception], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
    return cls(*args, **kwargs)
