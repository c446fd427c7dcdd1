"""`ReviewQueue`: step through a batch's extractions, worst first, beside the page."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from ...client.errors import ServiceError
from ...client.result import extraction_id_of
from ..frames.read import is_result
from ..ledger import Ledger
from . import _data
from ._parts import widgets
from .editor import ResultEditor
from .pages import first_page

if TYPE_CHECKING:
    from ...client import Client
    from ...client.batch import Batch

__all__ = ["ReviewQueue", "order_extractions", "select_extractions"]

#: What `select_extractions` takes as ``where``.
Where: TypeAlias = (pd.Series | pd.DataFrame | Callable[[dict[str, Any]], bool]
                    | Iterable[str | Mapping[str, Any]] | str | None)
Order: TypeAlias = str | Callable[[dict[str, Any]], Any] | None


def _results(batch: Any) -> dict[str, dict[str, Any]]:
    """Results by extraction id from a Batch, a mapping of them, a list of results, or
    one result (a `Result` or its dict)."""
    results = getattr(batch, "results", batch)
    if isinstance(results, Mapping) and is_result(results):
        results = [results]
    if isinstance(results, Mapping):
        return {str(k): _data.extracted_data(v) for k, v in results.items()}
    out = {}
    for item in results:
        data = _data.extracted_data(item)
        out[str((data.get("extraction_info") or {}).get("extraction_id", ""))] = data
    return out


def _mask_frame(batch: Any, mask: pd.Series) -> pd.DataFrame:
    """The value frame a boolean mask was made on: fields (or cells) of the batch."""
    from .. import frames

    fields = frames.fields(batch)
    if mask.index.equals(fields.index):
        return fields
    cells = frames.cells(batch)
    if mask.index.equals(cells.index):
        return cells
    if mask.index.isin(fields.index).all():  # a mask made on a slice of the fields
        return fields.loc[mask.index]
    raise ValueError("where= as a boolean Series must be aligned to "
                     "servicetools.frames.fields(batch) (or .cells(batch))")


def select_extractions(batch: Batch | Mapping[str, Any] | Iterable[Mapping[str, Any]],
                       where: Where = None) -> list[str]:
    """Extraction ids of the batch that ``where`` selects, in batch order.

    ``where``: a boolean Series aligned to ``frames.fields(batch)`` (an extraction is
    selected when any of its rows is); a frame with an ``extraction_id`` column; a
    callable taking the extracted data and returning a bool; extraction ids (or results);
    or None (all).
    """
    results = _results(batch)
    ids = list(results)
    if where is None:
        return ids
    if isinstance(where, pd.DataFrame):
        if "extraction_id" not in where.columns:
            raise ValueError("where= as a DataFrame needs an extraction_id column")
        chosen = set(where["extraction_id"].dropna().astype(str))
    elif isinstance(where, pd.Series) and (pd.api.types.is_bool_dtype(where.dtype)
                                           or where.dtype == object and where.map(
                                               lambda x: isinstance(x, bool)).all()):
        frame = _mask_frame(batch, where)
        picked = where.reindex(frame.index).fillna(False).astype(bool)
        chosen = set(frame.loc[picked.to_numpy(), "extraction_id"].dropna().astype(str))
    elif callable(where):
        return [i for i in ids if where(results[i])]
    elif isinstance(where, str) or isinstance(where, Mapping) and is_result(where):
        chosen = {extraction_id_of(where)}
    else:
        chosen = {extraction_id_of(i) if isinstance(i, Mapping) else str(i) for i in where}
    return [i for i in ids if i in chosen]


def order_extractions(results: Mapping[str, Mapping[str, Any]], ids: Iterable[str],
                      order: Order = "confidence", plan: pd.DataFrame | None = None
                      ) -> list[str]:
    """``ids`` in review order: ``"confidence"`` puts extractions with a failing value
    first, then the lowest value confidence first; ``"batch"`` (or None) keeps the
    order; ``"plan"`` follows ``plan`` (`servicetools.review.plan`): the extractions of
    its planned values (reviews and audit draws) by their first planned value, the others
    left out; a callable gives a sort key from the extracted data. Ties keep batch order."""
    ids = list(ids)
    if order is None or order == "batch":
        return ids
    if callable(order):
        return sorted(ids, key=lambda i: order(dict(results[i])))
    if order == "plan":
        if plan is None:
            raise ValueError("order='plan' needs plan=servicetools.review.plan(...)")
        planned = plan.loc[plan["review"] | plan["audit"]]
        first = planned.groupby("extraction_id", sort=False)["rank"].min()
        chosen = [i for i in ids if i in first.index]
        return sorted(chosen, key=lambda i: int(first[i]))
    if order != "confidence":
        raise ValueError("order must be 'confidence', 'batch', 'plan' or a callable, "
                         f"not {order!r}")

    def key(extraction_id: str) -> tuple[bool, float]:
        facts = _data.summary(results[extraction_id])
        lowest = facts["min_confidence"]
        return facts["n_failed"] == 0, math.inf if lowest is None else lowest

    return sorted(ids, key=key)


class ReviewQueue(widgets.VBox):
    """The batch's extractions one at a time: a `ResultEditor` beside page 1 of the
    document. Selected by ``where`` (see `select_extractions`), ordered by ``order`` (see
    `order_extractions`: failing and least confident first; ``"plan"`` with ``plan=``
    a `servicetools.review.plan`, whose audit draws the ledger then marks).

    - Next ✓: saves pending edits (stays on an error), records the values left as they
      were as confirmed (``confirm=True``, see `ResultEditor.confirm`), moves on;
    - Skip: moves on, recording nothing (edits stay in that item's editor);
    - Previous: goes back.

    Driveable parts: ``next_button``, ``skip_button``, ``previous_button``, ``go(i)``,
    ``position`` (from 0), ``extraction_ids`` (in review order), ``current``,
    ``editor`` (the current `ResultEditor`, None when its result could not be fetched),
    ``image`` (ipywidgets.Image of page 1), ``page_note`` (why there is no image),
    ``progress`` (Label ``"3 / 12"``), ``status``, ``reviewed`` and ``skipped`` (ids).
    ``ledger`` is the corrections `Ledger` every editor of the queue appends to.
    """

    def __init__(self, client: Client, batch: Batch | Mapping[str, Any], where: Where = None,
                 order: Order = "confidence", *, ledger: Ledger | None = None,
                 confirm: bool = True, plan: pd.DataFrame | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.batch = batch
        self._results = _results(batch)
        self.documents: dict[str, str] = dict(getattr(batch, "documents", None) or {})
        self.extraction_ids = order_extractions(
            self._results, select_extractions(batch, where), order, plan)
        # The plan's random audit draws: the ledger marks their rows (``audit``).
        self.audit_ids = frozenset() if plan is None else frozenset(
            plan.loc[plan["audit"], "value_id"].dropna().astype(str))
        self.ledger = ledger if ledger is not None else Ledger()
        self.confirm = confirm
        self.reviewed: set[str] = set()
        self.skipped: set[str] = set()
        self.position = 0
        self.editor: ResultEditor | None = None
        self._editors: dict[str, ResultEditor] = {}
        self._pages: dict[str, tuple[bytes, str] | str] = {}
        self.previous_button = widgets.Button(description="Previous", icon="arrow-left")
        self.skip_button = widgets.Button(description="Skip", icon="forward",
                                          tooltip="move on without recording anything")
        self.next_button = widgets.Button(description="Next", icon="check",
                                          button_style="success",
                                          tooltip="save, confirm the rest, move on")
        self.previous_button.on_click(lambda _: self.previous())
        self.skip_button.on_click(lambda _: self.skip())
        self.next_button.on_click(lambda _: self.next())
        self.progress = widgets.Label()
        self.title = widgets.HTML()
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout={"width": "100%"})
        self.page_note = widgets.HTML()
        self._form = widgets.Box(layout={"width": "58%"})
        self.children = [
            widgets.HBox([self.previous_button, self.skip_button, self.next_button,
                          self.progress, self.title], layout={"align_items": "center"}),
            self.status,
            widgets.HBox([widgets.VBox([self.image, self.page_note],
                                       layout={"width": "42%"}), self._form]),
        ]
        self.go(0)

    @property
    def current(self) -> str | None:
        """The extraction id shown (None when the queue is empty)."""
        return self.extraction_ids[self.position] if self.extraction_ids else None

    def go(self, position: int) -> None:
        """Show the item at ``position`` (from 0)."""
        n = len(self.extraction_ids)
        if not n:
            self.progress.value = "0 / 0"
            self.status.value = "Nothing to review."
            self.editor = None
            for button in (self.previous_button, self.skip_button, self.next_button):
                button.disabled = True
            return
        self.position = min(max(position, 0), n - 1)
        extraction_id = self.extraction_ids[self.position]
        self.progress.value = f"{self.position + 1} / {n}"
        self.previous_button.disabled = self.position == 0
        self.status.value = ""
        self.editor = self._editor(extraction_id)
        data = self.editor.data if self.editor is not None else self._results[extraction_id]
        name = self.documents.get(extraction_id) or (data.get("extraction_info") or {}).get(
            "extraction_name") or extraction_id
        self.title.value = f"<b>{html.escape(str(name))}</b>"
        self._show_page(str(data.get("extracted_document_storage_id") or ""))

    def _editor(self, extraction_id: str) -> ResultEditor | None:
        if extraction_id not in self._editors:
            try:
                self._editors[extraction_id] = ResultEditor(self.client, extraction_id,
                                                            self.ledger,
                                                            audit_ids=self.audit_ids)
            except ServiceError as exc:
                self._form.children = [widgets.HTML(
                    f'<span style="color:{_data.RED}">Cannot load this result: '
                    f"{html.escape(str(exc))}</span>")]
                return None
        editor = self._editors[extraction_id]
        self._form.children = [editor]
        return editor

    def _show_page(self, document_id: str) -> None:
        if document_id not in self._pages:
            self._pages[document_id] = self._page(document_id)
        page = self._pages[document_id]
        if isinstance(page, str):
            self.image.value, self.image.layout.display = b"", "none"
            self.page_note.value = f"<i style='color:#888'>{html.escape(page)}</i>"
        else:
            self.image.format, self.image.value = page[1], page[0]
            self.image.layout.display = ""
            self.page_note.value = ""

    def _page(self, document_id: str) -> tuple[bytes, str] | str:
        """Page 1 as image bytes and format, or the reason there is none."""
        if not document_id:
            return "The document was not kept by the service, so no page to show."
        try:
            return first_page(self.client.vault.download(document_id))
        except ServiceError as exc:
            return f"Cannot download the document: {exc}"
        except ImportError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a broken file must not stop the review
            return f"Cannot show page 1: {exc}"

    def _advance(self) -> None:
        if self.position < len(self.extraction_ids) - 1:
            self.go(self.position + 1)
        else:
            self.status.value = (f"End of the queue: {len(self.reviewed)} reviewed, "
                                 f"{len(self.skipped - self.reviewed)} skipped.")

    def next(self) -> None:
        """Save, confirm the rest, move on (stays, with the error shown, if Save fails)."""
        extraction_id = self.current
        if extraction_id is None:
            return
        editor = self.editor
        if editor is not None:
            if editor.updates():
                editor.save()
                if editor.error is not None:
                    self.status.value = editor.status.value
                    return
            if self.confirm:
                editor.confirm()
            self.reviewed.add(extraction_id)
            self.skipped.discard(extraction_id)
        else:
            self.skipped.add(extraction_id)
        self._advance()

    def skip(self) -> None:
        """Move on without saving or recording anything."""
        if self.current is None:
            return
        if self.current not in self.reviewed:
            self.skipped.add(self.current)
        self._advance()

    def previous(self) -> None:
        if self.position > 0:
            self.go(self.position - 1)
