"""The extraction engine: documents to words, words to field values and table cells.

The service's pipeline calls only what is exported here::

    document = load_document(data, "application/pdf")
    for group in group_targets(configuration):
        targets = extract_group(document, group, configuration)
"""

from .classify import classify
from .groups import TargetGroup, extract_group, group_targets
from .page_model import Document, Page, Word
from .pages import UnreadableDocument, load_document
from .results import EngineCell, EngineTarget, EngineValue

__all__ = [
    "Document",
    "EngineCell",
    "EngineTarget",
    "EngineValue",
    "Page",
    "TargetGroup",
    "UnreadableDocument",
    "Word",
    "classify",
    "extract_group",
    "group_targets",
    "load_document",
]
