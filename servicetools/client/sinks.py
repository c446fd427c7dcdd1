"""Where `extract_many(..., to=SINK)` sends results as they arrive: any `ResultSink`.

The client does not convert results (that is the analysis side's job, with pandas) and
imports nothing of the analysis side: it hands each result, as soon as it is fetched, to
whatever sink it is given, and returns what the sink's ``close`` returns. The analysis
side provides the Parquet dataset's sink, ``st.frames.DatasetWriter(path, batch_name)``
(whose ``close`` returns the `frames.Dataset`); anything with the same methods will do.

>>> class Count:
...     def __init__(self) -> None:
...         self.meta, self.n = {}, 0
...     def add(self, data, document=None) -> None:
...         self.n += 1
...     def add_failure(self, failure) -> None:
...         self.n += 1
...     def close(self) -> int:
...         return self.n
>>> from servicetools.client import Batch, Failure
>>> Batch(results={"e1": {}}, failures=[Failure("b.txt", "read", "gone")]).write_to(Count())
2
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from .batch import Failure

__all__ = ["ResultSink"]

#: What a sink's ``close`` returns (covariant: a sink of a subclass is a sink of its base).
T_co = TypeVar("T_co", covariant=True)


class ResultSink(Protocol[T_co]):
    """What results stream into: one `add` per result (the extracted data object as the
    service sent it, and the document it came from), one `add_failure` per document
    without one, then `close`, once, which returns what was written. Before `close`,
    ``meta`` gets the batch's ``configuration``, ``timings`` and ``meta``.

    `add` is called from several threads at once: a sink that keeps state guards it.
    """

    meta: dict[str, Any]

    def add(self, data: dict[str, Any], document: str | None = None) -> None: ...

    def add_failure(self, failure: Failure) -> None: ...

    def close(self) -> T_co: ...
