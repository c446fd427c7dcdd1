from typing import Any

from servicetools.service.engine import Document, Page, Word, classify, load_document
from servicetools.service.engine.classify import class_scores


def test_invoice_and_receipt_are_told_apart(
    invoice_pdf: bytes, receipt_pdf: bytes, documents_classifier: dict[str, Any]
) -> None:
    invoice = classify(load_document(invoice_pdf, "application/pdf"), documents_classifier)
    receipt = classify(load_document(receipt_pdf, "application/pdf"), documents_classifier)
    assert invoice[0] == "invoice"
    assert receipt[0] == "receipt"
    assert 0.5 < invoice[1] <= 1 and 0.5 < receipt[1] <= 1


def test_no_hit_gives_no_class(letter_pdf: bytes, documents_classifier: dict[str, Any]) -> None:
    assert classify(load_document(letter_pdf, "application/pdf"), documents_classifier) == ("", 0.0)


def test_keywords_are_whole_words_and_tolerate_missing_spaces(
    documents_classifier: dict[str, Any],
) -> None:
    scores = class_scores("BILLTO: someone. Invoices are cashed in exchange.", documents_classifier)
    assert scores == {"invoice": 1, "receipt": 0}
    assert class_scores("Inv No 5, paid by VISA", documents_classifier) == {
        "invoice": 1,
        "receipt": 1,
    }


def test_score_grows_with_agreeing_evidence(documents_classifier: dict[str, Any]) -> None:
    def document(text: str) -> Document:
        words = [Word(t, 0.1 * i, 0.1, 0.1 * i + 0.05, 0.12) for i, t in enumerate(text.split())]
        return Document("image/png", [Page(1, 100, 100, b"", words, "ocr")])

    weak = classify(document("Receipt"), documents_classifier)
    strong = classify(document("Receipt Store Cash Change Card"), documents_classifier)
    mixed = classify(document("Receipt Store Cash Invoice"), documents_classifier)
    assert weak[0] == strong[0] == mixed[0] == "receipt"
    assert weak[1] < strong[1] and mixed[1] < strong[1]
