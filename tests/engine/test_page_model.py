"""The page model's caches: filled once per page or document, given back unchanged."""

import dataclasses
from typing import Any

from servicetools.service.engine import Page, Word, load_document
from servicetools.service.engine.lines import page_lines

from ..support.engine_documents import REGIONS, extract_all, table_pdf, tables_of, target


def test_a_pages_lines_are_grouped_once_and_handed_out_as_copies() -> None:
    words = [Word("Total:", 0.1, 0.5, 0.2, 0.52), Word("next", 0.1, 0.6, 0.2, 0.62)]
    page = Page(1, 10, 10, b"", words)
    assert page.cache.lines is None
    first = page_lines(page)
    assert page.cache.lines == first
    first.pop()  # a reader's own list: the cached one stays whole
    again = page_lines(page)
    assert [line.text for line in again] == ["Total:", "next"]
    assert all(a is b for a, b in zip(again, page.cache.lines, strict=True))


def test_a_page_built_anew_starts_without_the_old_pages_cache() -> None:
    page = Page(1, 10, 10, b"", [Word("old", 0.1, 0.5, 0.2, 0.52)])
    page_lines(page)
    moved = dataclasses.replace(page, words=[Word("new", 0.1, 0.5, 0.2, 0.52)])
    assert moved.cache.lines is None
    assert [line.text for line in page_lines(moved)] == ["new"]


def test_a_second_extraction_reads_the_caches_and_gives_the_same_targets(
    invoice_pdf: bytes, invoices_config: dict[str, Any], receipts_config: dict[str, Any]
) -> None:
    document = load_document(invoice_pdf, "application/pdf")
    first = extract_all(document, invoices_config)
    # One entry per table schema, whatever the number of groups that asked.
    assert len(document.cache.header_matches) == 1
    assert extract_all(document, invoices_config) == first
    # The entries are keyed by schema, not by configuration: the receipts' table has the
    # invoices' header schema and reads the same entry.
    extract_all(document, receipts_config)
    assert len(document.cache.header_matches) == 1
    assert extract_all(document, invoices_config) == first
    assert extract_all(load_document(invoice_pdf, "application/pdf"), invoices_config) == first


def test_found_tables_are_read_once_and_judged_once_per_schema() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    regions = target("Region", "Sales", "Staff", "Stores")
    rival = target("Region", "Sales", target_id="t-rival")
    first = tables_of(document, regions, rival)
    assert sorted(document.cache.found_tables) == [1]
    # Each target judges the page's tables once, as itself and as the other's rival.
    assert len(document.cache.judgements) == 2
    assert tables_of(document, regions, rival) == first
    fresh = load_document(table_pdf((700, REGIONS)), "application/pdf")
    assert tables_of(fresh, regions, rival) == first
