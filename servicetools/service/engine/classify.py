"""Document classes (D13): keyword and pattern scoring over the document's text."""

from __future__ import annotations

import re
from typing import Any

from .lines import document_text
from .page_model import Document

__all__ = ["class_scores", "classify"]


def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    # Whole words, case-insensitive; spaces optional because OCR drops them ("BillTo").
    parts = [re.escape(part) for part in keyword.split()]
    return re.compile(r"(?<!\w)" + r"\s*".join(parts) + r"(?!\w)", re.IGNORECASE)


def class_scores(text: str, classifier: dict[str, Any]) -> dict[str, int]:
    """Per class, how many of its keywords and patterns occur at least once."""
    scores: dict[str, int] = {}
    for entry in classifier.get("classes", []):
        name = str(entry.get("name", ""))
        hits = sum(
            1
            for keyword in entry.get("keywords", [])
            if _keyword_pattern(str(keyword)).search(text)
        )
        for pattern in entry.get("patterns", []):
            try:
                hits += re.search(str(pattern), text) is not None
            except re.error:
                continue  # a bad pattern is reported when the classifier is loaded
        scores[name] = scores.get(name, 0) + hits
    return scores


def classify(document: Document, classifier: dict[str, Any]) -> tuple[str, float]:
    """The best class and a score in 0..1; ("", 0.0) when no class has any hit.

    The score is the best class's share of all hits, shrunk towards 0 when there are
    few hits: one keyword alone is weak evidence, five agreeing ones are strong.
    """
    scores = class_scores(document_text(document), classifier)
    if not scores or max(scores.values()) == 0:
        return "", 0.0
    # max() keeps the first of equal scores: the classifier's order breaks ties.
    best = max(scores, key=lambda name: scores[name])
    hits = scores[best]
    share = hits / sum(scores.values())
    strength = hits / (hits + 1)
    return best, round(share * strength, 4)
