"""The analysis side: extracted data as pandas frames, audits, plots, review widgets.

==============  ======================================================================
`frames`        extracted data -> tidy DataFrames (fields, cells, tables, statuses ...)
`audit`         summaries, ground truth, accuracy, calibration, thresholds, compare,
                drift, and accuracy estimated without truth
`review`        the review plan: which values to review first, and a random audit
`plots`         matplotlib figures, returned and never shown (the ``plots`` extra)
`widgets`       ipywidgets forms to look at and correct results (the ``widgets`` extra)
`ledger`        the corrections ledger: reviewed values, ground truth for `audit`
==============  ======================================================================

Imports the wire and the client (the widgets send corrections through a `Client`),
never the service.
"""

from . import audit, frames, ledger, plots, review, widgets
from .ledger import Ledger

__all__ = ["Ledger", "audit", "frames", "ledger", "plots", "review", "widgets"]
