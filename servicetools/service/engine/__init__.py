"""The extraction engine: documents to words, words to field values and table cells.

The service's pipeline calls only what is exported here::

    document = load_document(data, "application/pdf")
    for group in group_targets(configuration):
        targets = extract_group(document, group, configuration)

Its modules, the model first and each importing only those listed before it (the
model's caches name later types for the type checker alone):

- `page_model`: Word, Page, Document, and the per-page and per-document caches;
- `ocr`: words read from page images; `pages`: the loader (PDF text layer, rendering,
  OCR dispatch), raising `UnreadableDocument`;
- `lines`: words grouped into lines, a search area's lines, a document's text;
- `results`, `shapes`, `calibration`, `lookalikes`, `vocabulary`: what is extracted,
  shapes of values, calibrated confidence, OCR lookalikes, labels in other languages;
- `titles`, `names`, `amounts`, `fields`: field values; `tables` (the header-band
  reader) and `candidates` (found tables judged by the header schema): table cells;
- `groups`: the targets of one search area extracted together; `classify`: classes.
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
