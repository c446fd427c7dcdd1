"""What an audit reads: frames in memory, or a `frames.Dataset` on disk.

`source` opens either as a `Source`: the same questions (`grouped`'s per-group
statistics, the document names, the rows a grade reads), answered by pandas over the
work frame (`grouped_frames`) or by DuckDB over the dataset's files (`grouped_dataset`,
`graded_rows`). A source is a context manager: a dataset's holds one DuckDB connection
for the audit, closed at the end.

A dataset's audits group by the ``work`` view's columns only (`grouped_dataset.KEYS`;
`drift` and `compare` by its names, `grouped_dataset.CATEGORIES`); other keys raise a
ValueError that says to pass the frames instead.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from ..frames.dataset import Dataset
from . import graded_rows, grouped_dataset, grouped_frames
from .grouped import ExtractionGroups, FailureGroups, ValueGroups
from .work import By, group_keys, holds_cells, known_keys, work_frame
from .workview import VALUES

if TYPE_CHECKING:
    import duckdb

__all__ = ["DatasetSource", "FrameSource", "Source", "is_dataset", "source"]


def is_dataset(obj: Any) -> bool:
    """Whether an audit was given a `frames.Dataset`."""
    return isinstance(obj, Dataset)


class Source(ABC):
    """The questions every audit asks its data; `FrameSource` and `DatasetSource`
    answer them."""

    #: Whether the source holds no value at all.
    empty: bool

    def keys(self, by: By, audit: str, *, names_only: bool = False) -> list[str]:
        """``by`` as a list of keys this source can group by."""
        return group_keys(by)

    @abstractmethod
    def values(self, keys: Sequence[str], *, corrected: Collection[Any] | None = None,
               pairs: pd.DataFrame | None = None, conditions: bool = True) -> ValueGroups:
        ...

    @abstractmethod
    def failures(self, keys: Sequence[str], examples: int) -> FailureGroups:
        ...

    @abstractmethod
    def extractions(self) -> ExtractionGroups:
        ...

    @abstractmethod
    def document_names(self) -> list[str]:
        """The distinct names of the documents (of the values kept)."""

    @abstractmethod
    def shared(self, names: Collection[str]) -> Source:
        """This source with only the values of the documents ``names``."""

    @abstractmethod
    def graded_work(self, expected: pd.DataFrame) -> pd.DataFrame:
        """A work frame of (at least) the values a grade against ``expected`` reads."""

    #: Whether the values include the tables' cells (a dataset holds them; frames only
    #: where a cells frame was given, or data the frames were made from).
    holds_cells: bool = True

    def close(self) -> None:
        """Let go of what the source holds."""
        return None  # frames hold nothing to let go; a dataset's connection does

    def __enter__(self) -> Source:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class FrameSource(Source):
    """Frames in memory, as one work frame (`work.work_frame`). ``holds_cells``: False
    where the caller gave field frames alone (a grade then leaves the truth's tables
    out)."""

    def __init__(self, work: pd.DataFrame, holds_cells: bool = True) -> None:
        self.work = work
        self.empty = bool(work.empty)
        self.holds_cells = holds_cells

    def values(self, keys: Sequence[str], *, corrected: Collection[Any] | None = None,
               pairs: pd.DataFrame | None = None, conditions: bool = True) -> ValueGroups:
        return grouped_frames.value_groups(self.work, keys, corrected=corrected, pairs=pairs,
                                           conditions=conditions)

    def failures(self, keys: Sequence[str], examples: int) -> FailureGroups:
        return grouped_frames.failure_groups(self.work, keys, examples)

    def extractions(self) -> ExtractionGroups:
        return grouped_frames.extraction_groups(self.work)

    def document_names(self) -> list[str]:
        return list(dict.fromkeys(self.work["document_name"].dropna().astype(str)))

    def shared(self, names: Collection[str]) -> FrameSource:
        kept = set(names)
        return FrameSource(work_frame(self.work.loc[
            self.work["document_name"].astype(object).isin(kept).to_numpy(bool)]),
            self.holds_cells)

    def graded_work(self, expected: pd.DataFrame) -> pd.DataFrame:
        return self.work

    def keys(self, by: By, audit: str, *, names_only: bool = False) -> list[str]:
        return known_keys(self.work, by, audit)


class DatasetSource(Source):
    """A `frames.Dataset`: a DuckDB connection with its ``work`` view (`workview`), and
    the SQL condition (``scope``) of the values kept."""

    def __init__(self, data: Dataset, con: duckdb.DuckDBPyConnection | None = None,
                 scope: str = "TRUE", names: Iterator[int] | None = None) -> None:
        self.data = data
        self.owner = con is None  # closes the connection it opened
        self.con = data.connect() if con is None else con
        self.scope = scope
        self._names = names if names is not None else itertools.count()
        self.empty = grouped_dataset.is_empty(self.con) if scope == "TRUE" else not (
            self.con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {VALUES} "
                             f"WHERE {scope} LIMIT 1)").fetchall()[0][0])

    def keys(self, by: By, audit: str, *, names_only: bool = False) -> list[str]:
        keys = group_keys(by)
        if names_only:
            unknown = [k for k in keys if k not in grouped_dataset.CATEGORIES]
            if unknown or not keys:
                raise ValueError(f"by={by!r}: on a dataset, {audit} groups by "
                                 f"{', '.join(grouped_dataset.CATEGORIES)}; for other keys, "
                                 "give it the frames (ds.fields(), ds.cells())")
            return keys
        if "condition" in keys:  # what scorecard and failures count per group
            raise ValueError(f"by={by!r}: {audit} counts conditions per group; group by "
                             "something else")
        unknown = [k for k in keys if k not in grouped_dataset.KEYS]
        if unknown:
            raise ValueError(
                f"by={by!r}: a dataset's {audit} groups by {', '.join(grouped_dataset.KEYS)}; "
                f"for {', '.join(map(repr, unknown))}, audit its frames: "
                f"audit.{audit}(ds.fields(), ds.cells(), by=...)")
        return keys

    def values(self, keys: Sequence[str], *, corrected: Collection[Any] | None = None,
               pairs: pd.DataFrame | None = None, conditions: bool = True) -> ValueGroups:
        return grouped_dataset.value_groups(self.con, keys, corrected=corrected, pairs=pairs,
                                            conditions=conditions, scope=self.scope)

    def failures(self, keys: Sequence[str], examples: int) -> FailureGroups:
        return grouped_dataset.failure_groups(self.con, keys, examples)

    def extractions(self) -> ExtractionGroups:
        return grouped_dataset.extraction_groups(self.con)

    def document_names(self) -> list[str]:
        return [name for (name,) in self.con.execute(
            f"SELECT DISTINCT document_name FROM {VALUES} "
            f"WHERE ({self.scope}) AND document_name IS NOT NULL").fetchall()]

    def shared(self, names: Collection[str]) -> DatasetSource:
        table = f"_shared_{next(self._names)}"
        self.con.register(table, pa.table({"document_name": pa.array(sorted(names),
                                                                     type=pa.string())}))
        return DatasetSource(self.data, self.con, f"({self.scope}) AND document_name IN "
                             f"(SELECT document_name FROM {table})", self._names)

    def graded_work(self, expected: pd.DataFrame) -> pd.DataFrame:
        return graded_rows.truth_work(self.con, expected, self.scope)

    def close(self) -> None:
        if self.owner:
            self.con.close()


def source(data: Any, cells: pd.DataFrame | None, audit: str) -> Source:
    """``data`` (and ``cells``) as a `Source` for ``audit``: a `DatasetSource` of a
    dataset (which holds its cells: ``cells`` must be None), else a `FrameSource` of the
    frames (or of anything `frames.fields` takes)."""
    if is_dataset(data):
        if cells is not None:
            raise TypeError(f"audit.{audit}(dataset, cells): a dataset holds its cells; "
                            "give the dataset alone")
        return DatasetSource(data)
    return FrameSource(work_frame(data, cells), holds_cells(data, cells))
