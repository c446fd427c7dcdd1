"""The corrections ledger: what reviewers changed or confirmed, one row per value.

The review widgets (`servicetools.widgets`) append to it; `servicetools.audit` reads it
as ground truth: the latest ``new_value`` of each ``value_id`` is that value's truth, and
``old_value`` / ``old_confidence`` are what the engine said. Columns (`COLUMNS`):

================  ======================================================================
extraction_id     the extraction
target_id         the configuration's extraction target (``used_extraction_target_id``)
target_name       its name (a table target without one: its id)
value_id          the field value's or table cell's id (for an added value: its new id)
table_id          table cells only; NA for field values
row, column       table cells only: the cell's position (Int64, NA for field values)
old_value         the value before the review; NA for a value the reviewer added
new_value         the value after it; ``""`` for a value the reviewer removed
old_confidence    the engine's confidence of the old value (float, NaN when unknown)
time              when it was recorded (UTC)
change            ``edit``, ``add``, ``remove`` or ``confirm`` (unchanged, checked)
audit             True for a value the review plan drew at random from the values it
                  would accept unread (`servicetools.review.plan`): these rows, and only
                  these, estimate the error left after auto-accept without bias; False
                  for a value reviewed for its risk; NA when not said (older ledgers)
================  ======================================================================

>>> ledger = Ledger()
>>> _ = ledger.append(extraction_id="e1", target_id="t1", target_name="Total", value_id="v1",
...               old_value="1OO.00", new_value="100.00", old_confidence=0.41)
>>> ledger.frame[["value_id", "old_value", "new_value", "change"]]
  value_id old_value new_value change
0       v1    1OO.00    100.00   edit
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..client.result import ExtractionRef, extraction_id_of

__all__ = ["CHANGES", "COLUMNS", "Ledger"]

COLUMNS: tuple[str, ...] = (
    "extraction_id", "target_id", "target_name", "value_id", "table_id", "row", "column",
    "old_value", "new_value", "old_confidence", "time", "change", "audit")
#: What a ledger row records.
CHANGES: tuple[str, ...] = ("edit", "add", "remove", "confirm")

_TEXT = ("extraction_id", "target_id", "target_name", "value_id", "table_id", "old_value",
         "new_value")
_INTS = ("row", "column")

try:  # pandas >= 2.3: the string dtype pandas 3 infers, with NaN as its missing value
    _STRING: Any = pd.StringDtype(na_value=np.nan)
except TypeError:  # pragma: no cover - older pandas
    _STRING = pd.StringDtype()


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """`COLUMNS` in order with their dtypes; missing columns become NA."""
    n = len(frame)
    out: dict[str, Any] = {}
    for name in COLUMNS:
        col = (frame[name].reset_index(drop=True) if name in frame.columns
               else pd.Series([None] * n, dtype=object))
        if name in _TEXT:
            out[name] = col.astype(object).where(col.notna(), None).astype(_STRING)
        elif name in _INTS:
            out[name] = pd.to_numeric(col, errors="coerce").astype("Int64")
        elif name == "old_confidence":
            out[name] = pd.to_numeric(col, errors="coerce").astype(float)
        elif name == "audit":
            out[name] = pd.array(col.astype(object).where(col.notna(), None).to_numpy(),
                                 dtype="boolean")
        elif name == "time":
            out[name] = pd.to_datetime(col, utc=True, errors="coerce").astype(
                "datetime64[ns, UTC]")
        else:
            out[name] = pd.Categorical(col.astype(object), categories=list(CHANGES))
    return pd.DataFrame(out, columns=list(COLUMNS))


def _change(row: Mapping[str, Any]) -> str:
    """The kind of a row that does not say: told by which of old and new value it has."""
    old, new = row.get("old_value"), row.get("new_value")
    if old is None or (isinstance(old, float) and np.isnan(old)):
        return "add"
    return "confirm" if old == new else "edit"


class Ledger:
    """Corrections as a DataFrame (`frame`, columns `COLUMNS`); Parquet on disk.

    With ``path``, an existing file there is loaded and every `append` saves the whole
    ledger to it again, so corrections outlive the kernel.
    """

    def __init__(self, frame: pd.DataFrame | None = None, *,
                 path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if frame is None and self.path is not None and self.path.exists():
            frame = pd.read_parquet(self.path)
        self._frame = _typed(frame if frame is not None else pd.DataFrame())

    @property
    def frame(self) -> pd.DataFrame:
        """The rows so far, oldest first (a copy: changing it leaves the ledger as it is)."""
        return self._frame.copy()

    def __len__(self) -> int:
        return len(self._frame)

    def __repr__(self) -> str:
        where = f" {str(self.path)!r}" if self.path is not None else ""
        return f"<Ledger: {len(self)} rows{where}>"

    def _repr_html_(self) -> str:
        html: str = self._frame.to_html(max_rows=20)
        return html

    def append(self, rows: pd.DataFrame | Iterable[Mapping[str, Any]] | None = None,
               **row: Any) -> pd.DataFrame:
        """Add rows (a frame, mappings, or one row as keywords); the rows as added.

        ``time`` defaults to now and ``change`` to what the old and new values tell
        (``add`` without an old value, ``confirm`` when equal, else ``edit``).
        """
        if rows is None:
            records: list[dict[str, Any]] = [row] if row else []
        elif row:
            raise TypeError("give rows or one row as keywords, not both")
        elif isinstance(rows, pd.DataFrame):
            records = [dict(r) for r in rows.to_dict("records")]
        else:
            records = [dict(r) for r in rows]
        unknown = sorted({k for r in records for k in r} - set(COLUMNS))
        if unknown:
            raise ValueError(f"unknown ledger columns: {', '.join(unknown)}")
        now = pd.Timestamp.now(tz="UTC")
        for record in records:
            if record.get("time") is None:
                record["time"] = now
            if record.get("change") is None:
                record["change"] = _change(record)
            elif record["change"] not in CHANGES:
                raise ValueError(f"change must be one of {', '.join(CHANGES)}, "
                                 f"not {record['change']!r}")
        added = _typed(pd.DataFrame(records))
        if len(added):
            self._frame = (added if self._frame.empty
                           else pd.concat([self._frame, added], ignore_index=True))
            if self.path is not None:
                self.save(self.path)
        return added

    @property
    def audit_sample(self) -> pd.DataFrame:
        """The rows of the values a review plan drew at random (``audit`` True), as a
        ledger frame: the sample to give `servicetools.audit.estimate` (``sample=``). The
        rest were reviewed for their risk, and would bias an estimate of the batch."""
        marked = self._frame["audit"].fillna(False).to_numpy(dtype=bool)
        return self._frame.loc[marked].reset_index(drop=True)

    def value_ids(self, extraction_id: ExtractionRef | None = None) -> set[str]:
        """The value ids already recorded (for one extraction, an id or a `Result`, when
        given)."""
        frame = self._frame
        if extraction_id is not None:
            frame = frame.loc[frame["extraction_id"] == extraction_id_of(extraction_id)]
        return {str(v) for v in frame["value_id"].dropna()}

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write Parquet (atomically: a crash leaves the old file); the path written."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise TypeError("give a path: this ledger was made without one")
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        self._frame.to_parquet(temporary, index=False)
        os.replace(temporary, target)
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Ledger:
        """A ledger read from Parquet (not saving back: give ``path=`` to the constructor
        for that)."""
        return cls(pd.read_parquet(path))
