"""ipywidgets forms to look at extracted data and correct it; each is a widget.

==================  ================================================================
`ResultView`        one result: values, confidence bars, validation, tables as grids
`ResultEditor`      the same, editable; Save sends the update (D8), writes the ledger
`ReviewQueue`       a batch one extraction at a time, worst first, beside page 1
`Ledger`            the corrections (`servicetools.ledger`), ground truth for audit
==================  ================================================================

Nothing is displayed as a side effect: Jupyter shows the widget a cell returns.
ipywidgets (the ``widgets`` extra) is imported when a form is first used, so importing
this package costs nothing without it.

>>> queue = ReviewQueue(client, batch, where=fields.confidence < 0.6)  # doctest: +SKIP
>>> queue                                   # the form  # doctest: +SKIP
>>> queue.ledger.frame                      # what was corrected or confirmed  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..ledger import Ledger

if TYPE_CHECKING:
    from .editor import ResultEditor
    from .queue import ReviewQueue, order_extractions, select_extractions
    from .view import ResultView

__all__ = ["Ledger", "ResultEditor", "ResultView", "ReviewQueue", "order_extractions",
           "select_extractions"]

_HOMES = {"ResultView": "view", "ResultEditor": "editor", "ReviewQueue": "queue",
          "order_extractions": "queue", "select_extractions": "queue"}


def __getattr__(name: str) -> Any:
    # Lazy, so `import servicetools` never imports ipywidgets (or fails without it).
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
