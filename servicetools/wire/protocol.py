"""The protocol's vocabulary: paths, the auth header, enumerations, limits and error codes.

Both halves spell these the same way because both import them from here: the client
builds its URLs and classifies error answers with them, the service routes and answers
with them. Enumerations are `enum.StrEnum`, so a member *is* its string
(``StatusType.ENDED == "ended"``) and goes into JSON unchanged.

>>> API_PREFIX + "/extraction/status/list"
'/service/api/extraction/status/list'
>>> StatusType.ENDED in FINAL_STATUSES, ErrorCode.NOT_FOUND.status
(True, 404)
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "API_PREFIX",
    "AUTH_HEADER",
    "CONTENT_TYPES",
    "ErrorCode",
    "FINAL_STATUSES",
    "INPUT_TYPES",
    "MAX_STATUS_IDS",
    "STATUS_TYPES",
    "StatusType",
    "TARGET_TYPES",
    "TRIGGER_TYPES",
]

#: Every path of the interface starts with this (D1); there is no version segment.
API_PREFIX = "/service/api"
#: The request header that carries the API token (D2).
AUTH_HEADER = "X-Api"
#: Ids one status-list request may carry (D5); more is a 400 ``too_many_ids``.
MAX_STATUS_IDS = 1000


class StatusType(StrEnum):
    """The pipeline stages of section 3, in the order of D5, then ``error``."""

    NOT_STARTED = "not_started"
    STARTED = "started"
    DOC_CONVERTED_TO_PNG = "doc_converted_to_png"
    TARGET_GROUPS_FORMED = "target_groups_formed"
    EXTRACTION_STARTED = "extraction_started"
    EXTRACTION_ENDED = "extraction_ended"
    USAGE_STATISTICS_AGGREGATED = "usage_statistics_aggregated"
    ENDED = "ended"
    #: Reachable from any status that is not final; the reason is in ``message``.
    ERROR = "error"


#: Pipeline order of D5, then ``error`` (reachable from any non-final status).
STATUS_TYPES: tuple[str, ...] = tuple(StatusType)
#: ``ended`` (results can be queried) and ``error``: nothing follows either.
FINAL_STATUSES: frozenset[str] = frozenset({StatusType.ENDED, StatusType.ERROR})
CONTENT_TYPES: tuple[str, ...] = ("application/pdf", "image/png", "image/jpeg")
INPUT_TYPES: tuple[str, ...] = ("raw", "hosted", "service")
TRIGGER_TYPES: tuple[str, ...] = ("sync", "async")
TARGET_TYPES: tuple[str, ...] = ("field", "table")


class ErrorCode(StrEnum):
    """The ``code`` of a D3 error body; `status` is the HTTP status it comes with.

    ``extraction_failed`` is 409 on a result query and 422 on a synchronous trigger;
    `status` gives the trigger's. A remote service may send codes of its own: the
    client then goes by the HTTP status.
    """

    INVALID_REQUEST = "invalid_request"
    INVALID_JSON = "invalid_json"
    INVALID_BASE64 = "invalid_base64"
    INVALID_MULTIPART = "invalid_multipart"
    CONTENT_TYPE_MISMATCH = "content_type_mismatch"
    TOO_MANY_IDS = "too_many_ids"
    EMPTY_DOCUMENT = "empty_document"
    INVALID_DOCUMENT = "invalid_document"
    ENCRYPTED_DOCUMENT = "encrypted_document"
    UNAUTHORIZED = "unauthorized"
    NOT_FOUND = "not_found"
    EXTRACTION_NOT_SAVED = "extraction_not_saved"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    EXTRACTION_RUNNING = "extraction_running"
    #: Others changed the result each time an update was about to be stored.
    UPDATE_CONFLICT = "update_conflict"
    EXTRACTION_FAILED = "extraction_failed"
    EXTRACTION_DATA_DELETED = "extraction_data_deleted"
    DOCUMENT_TOO_LARGE = "document_too_large"
    TOO_MANY_PAGES = "too_many_pages"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    #: The vault's storage (a folder, or S3) could not be reached or refused the request.
    STORAGE_UNAVAILABLE = "storage_unavailable"
    #: Never meant to be sent: a 500 is a bug (D3), still answered in the D3 shape.
    INTERNAL_ERROR = "internal_error"

    @property
    def status(self) -> int:
        """The HTTP status this code is answered with."""
        return _STATUS_OF[self]


_STATUS_OF: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_JSON: 400,
    ErrorCode.INVALID_BASE64: 400,
    ErrorCode.INVALID_MULTIPART: 400,
    ErrorCode.CONTENT_TYPE_MISMATCH: 400,
    ErrorCode.TOO_MANY_IDS: 400,
    ErrorCode.EMPTY_DOCUMENT: 400,
    ErrorCode.INVALID_DOCUMENT: 400,
    ErrorCode.ENCRYPTED_DOCUMENT: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.EXTRACTION_NOT_SAVED: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.EXTRACTION_RUNNING: 409,
    ErrorCode.UPDATE_CONFLICT: 409,
    ErrorCode.EXTRACTION_DATA_DELETED: 410,
    ErrorCode.DOCUMENT_TOO_LARGE: 413,
    ErrorCode.TOO_MANY_PAGES: 413,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.EXTRACTION_FAILED: 422,
    ErrorCode.STORAGE_UNAVAILABLE: 503,
    ErrorCode.INTERNAL_ERROR: 500,
}
