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
``st.frames.fields(batch)`` are all a notebook needs. They are imported on first use
(PEP 562): ``import servicetools`` alone loads nothing heavy, and a process that needs
one part (the service and each of its engine workers, the command line) does not pay
for pandas, pyarrow and the report. Importing this package never imports the service.
"""

import typing as _typing
from importlib import import_module as _import_module

from ._version import __version__

if _typing.TYPE_CHECKING:  # the names as type checkers and editors see them
    from . import bundled, report, wire
    from .analysis import audit, frames, ledger, plots, review, widgets
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

# Where each public name lives: the modules by their own path (_MODULES), the other
# names by the module that holds them (_NAMES; the rest of __all__: the client's errors).
_MODULES = {"audit": ".analysis.audit", "bundled": ".bundled", "errors": ".client.errors",
            "frames": ".analysis.frames", "ledger": ".analysis.ledger",
            "plots": ".analysis.plots", "report": ".report", "review": ".analysis.review",
            "widgets": ".analysis.widgets",
            "wire": ".wire"}
_NAMES = {"Ledger": ".analysis.ledger",
          **dict.fromkeys(("Batch", "Client", "Failure", "LocalService", "LocalServiceError",
                           "Result", "VaultAPI", "VaultDocument", "trigger_request"),
                          ".client")}


def __getattr__(name: str) -> _typing.Any:
    """A public name, imported on first use and kept (PEP 562)."""
    if name in _MODULES:
        value: _typing.Any = _import_module(_MODULES[name], __name__)
    elif name in _NAMES:
        value = getattr(_import_module(_NAMES[name], __name__), name)
    elif name in __all__:  # the client's errors
        value = getattr(_import_module(".client.errors", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "review",
    "trigger_request",
    "widgets",
    "wire",
]
