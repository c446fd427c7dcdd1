"""The text layer drawn from OCR words (engine/ocr_layer.py), read back by pdfplumber as
the table finders read it: every word where OCR put it, its own letters restored."""

from __future__ import annotations

import io

import pdfplumber
import pytest

from servicetools.service.engine import Page, Word
from servicetools.service.engine.ocr_layer import _token, ocr_layer, restore


def _page(number: int, words: list[Word]) -> Page:
    return Page(number, 595.0, 842.0, b"", words, "ocr")


# Two lines of a table as OCR boxes them: heights differ within a line (an umlaut, a
# descender), left edges of one column differ by a pixel or two.
WORDS = [
    Word("City", 0.100, 0.100, 0.140, 0.115), Word("Sales", 0.400, 0.101, 0.450, 0.114),
    Word("Zürich", 0.103, 0.118, 0.160, 0.136), Word("1.200,00", 0.400, 0.121, 0.470, 0.134),
    Word("東京", 0.600, 0.120, 0.630, 0.135),
]


def _read(pdf: bytes, number: int = 1) -> list[dict[str, object]]:
    with pdfplumber.open(io.BytesIO(pdf)) as opened:
        return opened.pages[number - 1].extract_words()


def test_each_word_is_drawn_in_its_box_and_read_back_as_itself() -> None:
    pdf, tokens = ocr_layer([_page(1, WORDS)], {1})
    read = _read(pdf)
    assert [tokens[1][str(w["text"])] for w in read] == ["City", "Sales", "Zürich", "1.200,00",
                                                         "東京"]
    for word, box in zip(WORDS, read, strict=True):
        # Left edges snapped to their column's (within 2.4 points), widths kept.
        assert float(box["x0"]) == pytest.approx(word.x0 * 595, abs=2.5)
        assert float(box["x1"]) == pytest.approx(word.x1 * 595, abs=2.5)
    # One baseline for a line's words, whatever their boxes' heights: one row.
    assert len({round(float(w["bottom"]), 1) for w in read[2:]}) == 1
    assert len({round(float(w["bottom"]), 1) for w in read[:2]}) == 1


def test_left_edges_a_pixel_apart_are_one_column_and_further_apart_two() -> None:
    pdf, _ = ocr_layer([_page(1, WORDS)], {1})
    city, _, zurich, _, _ = _read(pdf)
    assert city["x0"] == zurich["x0"]  # 0.100 and 0.103 of the page's width
    apart = [Word("a", 0.100, 0.1, 0.12, 0.11), Word("b", 0.120, 0.13, 0.14, 0.14)]
    first, second = _read(ocr_layer([_page(1, apart)], {1})[0])
    assert float(second["x0"]) - float(first["x0"]) == pytest.approx(0.02 * 595, abs=0.5)


def test_pages_not_asked_for_are_blank_and_every_page_keeps_its_number() -> None:
    pdf, tokens = ocr_layer([_page(1, WORDS), _page(2, WORDS)], {2})
    assert _read(pdf, 1) == []
    assert len(_read(pdf, 2)) == len(WORDS)
    assert tokens[1] == {} and len(tokens[2]) == len(WORDS)


def test_restore_maps_tokens_back_spacing_joined_ones_and_dropping_cut_pieces() -> None:
    words = {_token(0): "Race/Ethnicity", _token(1): "61,206", _token(2): "Genève"}
    assert restore(f"{_token(0)}{_token(1)}", words) == "Race/Ethnicity 61,206"
    assert restore(f"{_token(0)}\n {_token(2)}", words) == "Race/Ethnicity\nGenève"
    # A finder that cuts a token at a cell's edge leaves pieces that stand for nothing.
    assert restore(f"{_token(1)[:3]} {_token(2)}", words) == "Genève"
    assert restore("", words) == ""
