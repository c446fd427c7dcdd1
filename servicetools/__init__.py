"""servicetools: audit document data extraction from Jupyter.

The package is a layered house that imports only downwards: the wire imports nothing of
ours, the client the wire, the analysis side the wire and the client, the service the
wire (its engine nothing else); tests/test_layers.py reads every import.

====================  ==============================================================
`wire`                what both halves share: schemas, protocol constants, content
                      sniffing, value parsers, the validation-rule language
`client`              the thin requests client, its errors, `Result`, `Batch`,
                      `LocalService`
`analysis`            pandas: `frames`, `audit`, `plots`, `widgets`, `ledger`
`report`              the report for people of any batch (``servicetools report``)
`service`             the local reference service and its engine (``service`` extra)
`datagen`             the dev-set generator (``datagen`` extra)
`bundled`             the configurations, classifier and demo sample that ship inside
====================  ==============================================================

The public names are re-exported here, so ``import servicetools as st`` and
``st.frames.fields(batch)`` are all a notebook needs. Importing this package never
imports the service.
"""

from . import bundled, report, wire
from ._version import __version__
from .analysis import audit, frames, ledger, plots, widgets
from .analysis.ledger import Ledger
from .client import (
    Batch,
    Client,
    Failure,
    LocalService,
    LocalServiceError,
    Result,
    VaultAPI,
    VaultDocument,
    errors,
    trigger_request,
)
from .client.errors import (
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

__all__ = [
    "APIError",
    "AuthenticationError",
    "Batch",
    "BatchFailures",
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
    "Result",
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
    "bundled",
    "errors",
    "frames",
    "ledger",
    "plots",
    "report",
    "trigger_request",
    "widgets",
    "wire",
]
