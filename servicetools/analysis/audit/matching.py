"""Documents matched to their truth (or to each other) by path suffix."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["base_name", "document_matcher", "truth_documents"]


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))


def base_name(name: str) -> str | None:
    """A name's last path part, which every name it matches shares (None without one).

    >>> base_name("data\\\\invoices/./inv-1.pdf/"), base_name("./")
    ('inv-1.pdf', None)
    """
    parts = _parts(name)
    return parts[-1] if parts else None


def document_matcher(candidates: Iterable[str]) -> Callable[[Any], str | None]:
    """Match a document name to the candidate sharing the longest path suffix with it.

    ``data/documents/invoices/inv-0001.pdf``, ``invoices/inv-0001.pdf`` and
    ``inv-0001.pdf`` all find the truth of ``invoices/inv-0001.pdf``; a tie between
    candidates (same file name in two folders, name without folder) matches none.
    """
    by_base: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for c in dict.fromkeys(candidates):
        parts = _parts(c)
        if parts:
            by_base.setdefault(parts[-1], []).append((c, parts))
    cache: dict[str, str | None] = {}

    def match(name: Any) -> str | None:
        if not isinstance(name, str):
            return None
        if name in cache:
            return cache[name]
        parts = _parts(name)
        best: list[str] = []
        best_len = 0
        for candidate, cparts in by_base.get(parts[-1] if parts else "", []):
            common = 0
            while (common < min(len(parts), len(cparts))
                   and parts[-1 - common] == cparts[-1 - common]):
                common += 1
            if common > best_len:
                best, best_len = [candidate], common
            elif common == best_len:
                best.append(candidate)
        cache[name] = best[0] if len(best) == 1 else None
        return cache[name]

    return match


def truth_documents(match: Callable[[Any], str | None], document_names: Iterable[Any],
                    extraction_names: Iterable[Any]) -> list[str | None]:
    """The truth document (``match``, a `document_matcher`) of each pair of a document
    name and an extraction name: the document name's match, else the extraction name's
    (a `Batch` may name a document apart from its extraction)."""
    return [match(document) or match(extraction)
            for document, extraction in zip(document_names, extraction_names, strict=True)]
