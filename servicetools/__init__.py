"""servicetools: audit document data extraction from Jupyter.

The client side (this package's top level) never imports the reference service;
``servicetools.service`` needs the ``service`` extra.
"""

from . import audit, errors, frames, ledger, plots, widgets
from .batch import Batch, Failure
from .client import Client, VaultAPI, VaultDocument, trigger_request
from .errors import (
    APIError,
    AuthenticationError,
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
from .ledger import Ledger
from .local import LocalService, LocalServiceError

__version__ = "0.1.0"

__all__ = [
    "APIError",
    "AuthenticationError",
    "Batch",
    "Client",
    "Conflict",
    "DataDeleted",
    "DocumentError",
    "DocumentTooLarge",
    "ExtractionFailed",
    "ExtractionNotSaved",
    "ExtractionRunning",
    "Failure",
    "InvalidDocument",
    "InvalidRequest",
    "InvalidResponse",
    "Ledger",
    "LocalService",
    "LocalServiceError",
    "NotFound",
    "RequestTimeout",
    "ServerError",
    "ServiceError",
    "ServiceUnreachable",
    "TransportError",
    "UnsupportedMediaType",
    "VaultAPI",
    "VaultDocument",
    "WaitTimeout",
    "__version__",
    "audit",
    "errors",
    "frames",
    "ledger",
    "plots",
    "trigger_request",
    "widgets",
]
