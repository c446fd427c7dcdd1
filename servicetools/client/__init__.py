"""The client side: talk to the service (remote, or the embedded local one) with requests.

==================  ================================================================
`client`            `Client`: one method per endpoint, `wait`, `extract_many`
`documents`         what a document may be; `trigger_request` bodies (2.1)
`errors`            the error tree under `ServiceError` (D3 codes -> classes)
`result`            `Result`: one extraction's result, its parts by name
`batch`             `Batch` and `Failure`: many results, saved as JSON lines
`many`              `ExtractMany`: one run of `extract_many`, step by step
`sinks`             `ResultSink`: what `extract_many(..., to=SINK)` streams results into
`polling`           status rounds paced by how fast extractions finish
`retries`           which calls are retried, and how
`connections`       connections left idle a few seconds are not used again
`progress`          tqdm.auto progress bars
`local`             `LocalService`, the embedded default of `Client.from_env`
==================  ================================================================

Needs only the core dependencies (requests, and the wire's jsonschema); never imports
the service, nor the analysis side (whose `frames.DatasetWriter` is a `ResultSink`).
"""

from . import errors
from .batch import Batch, Failure
from .client import Client, VaultAPI
from .documents import Document, VaultDocument, trigger_request
from .errors import (
    APIError,
    AuthenticationError,
    BatchFailures,
    Conflict,
    DataDeleted,
    DocumentError,
    DocumentTooLarge,
    ExtractionFailed,
    ExtractionNotSaved,
    ExtractionRunning,
    InvalidDocument,
    InvalidRequest,
    InvalidResponse,
    NotFound,
    RequestTimeout,
    ServerError,
    ServiceError,
    ServiceUnreachable,
    TransportError,
    UnsupportedMediaType,
    WaitTimeout,
)
from .local import LocalService, LocalServiceError
from .result import Result
from .sinks import ResultSink

__all__ = [
    "APIError",
    "AuthenticationError",
    "Batch",
    "BatchFailures",
    "Client",
    "Conflict",
    "DataDeleted",
    "Document",
    "DocumentError",
    "DocumentTooLarge",
    "ExtractionFailed",
    "ExtractionNotSaved",
    "ExtractionRunning",
    "Failure",
    "InvalidDocument",
    "InvalidRequest",
    "InvalidResponse",
    "LocalService",
    "LocalServiceError",
    "NotFound",
    "RequestTimeout",
    "Result",
    "ResultSink",
    "ServerError",
    "ServiceError",
    "ServiceUnreachable",
    "TransportError",
    "UnsupportedMediaType",
    "VaultAPI",
    "VaultDocument",
    "WaitTimeout",
    "errors",
    "trigger_request",
]
