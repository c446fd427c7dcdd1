"""Tables found by camelot and judged by the header schema, on pages made here.

Each page is drawn with reportlab: unruled and ruled tables, a heading over two rows,
a group heading spanning columns, headings wrapped under the header, a description
wrapped onto a second line, totals under the items, two tables on one page for two
targets, a table continued on the next page, and no table at all. Four real pages of
data/real/ (licences in its README) are read against their truth; cell confidence
and which pages the finders are given are tested too.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from servicetools.service.engine import (
    TargetGroup,
    extract_group,
    load_document,
)
from servicetools.service.engine.candidates import (
    FEATURES,
    Candidate,
    Found,
    _judge,
    _rereads,
    _tests,
    choose,
    found_tables,
    headed_pages,
    judged_cells,
    load_scoring,
    recording,
    scoring,
)

from ..support.drawn_pages import image_only_pdf
from ..support.engine_documents import REGIONS, Row, grid, table_pdf, tables_of, target
from ..support.helpers import render_png


@pytest.mark.parametrize("ruled", [False, True], ids=["unruled", "ruled"])
def test_a_table_named_by_its_headings_is_read_from_the_found_table(ruled: bool) -> None:
    document = load_document(table_pdf((700, REGIONS), ruled=ruled), "application/pdf")
    assert found_tables(document), "camelot found no table"
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}


def test_headings_over_two_rows_and_a_group_heading_are_the_header() -> None:
    rows: list[Row] = [("", "Sales", "", ""), ("Region", "2023", "2024", "Change"),
                       ("North", "1200", "1300", "+8%"), ("South", "950", "900", "-5%")]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    cells = tables_of(document, target("Region", "2023", "2024", "Change"))["t-table"]
    assert grid(cells) == {0: [["North", "1200", "1300", "+8%"], ["South", "950", "900", "-5%"]]}


def test_headings_wrapped_onto_the_row_under_the_header_are_no_row_of_the_table() -> None:
    # As in camelot's "health" sample: "Public" over "Health", the schema naming the
    # upper line; the lower line is header too, and the first row is a state's.
    rows: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("", "(EUR)", "(people)", ""),
                       *REGIONS[1:]]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}


def test_empty_rows_between_a_header_and_its_wrapped_line_are_passed_over() -> None:
    # pdfplumber's text strategy over a page read by OCR leaves an empty row between
    # lines: "Public" / "" / "Health" is still one heading, and the first row a state's.
    blank = ("", "", "", "")
    rows = (("Region", "Sales", "Staff", "Stores"), blank, ("", "(EUR)", "(people)", ""),
            blank, ("North", "1200", "15", "4"), blank, ("South", "950", "11", "3"))
    found = Found(1, rows, (60, 500, 560, 700), "text", read="ocr")
    judged = _judge(found, *_tests(target("Region", "Sales", "Staff", "Stores")
                                   ["header_schema"]), [0, 1, 2, 3])
    assert judged is not None and judged.header == 2


def test_a_wrapped_description_joins_its_row_and_totals_end_the_items() -> None:
    rows: list[Row] = [("Description", "Qty", "Price", "Amount"),
                       ("Consulting services,", "10", "50.00", "500.00"), ("March 2024",),
                       ("Support plan", "1", "250.00", "250.00"),
                       ("Total Due:", "", "", "750.00")]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    with_rules = target("Description", "Qty", "Price", "Amount", rules=True)
    assert grid(judged_cells(document, with_rules)) == {0: [
        ["Consulting services,\nMarch 2024", "10", "50.00", "500.00"],
        ["Support plan", "1", "250.00", "250.00"]]}


def _pitched_pdf(lines: list[tuple[float, Row]]) -> bytes:
    """A one-page PDF of table rows, each drawn the given points under the one above."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    page.setFont("Helvetica", 10)
    y = 720.0
    for below, row in lines:
        y -= below
        for x, text in zip((60, 220, 330, 440), row, strict=False):
            page.drawString(x + 4, y, text)
    page.save()
    return buffer.getvalue()


def test_a_line_wrapped_closer_than_rows_are_joins_the_row_above() -> None:
    # "American Indian/Alaska" wraps onto "Native", set closer than rows are; the
    # heading of the rows under it stands a row's height below, as the rows do.
    rows: list[tuple[float, Row]] = [
        (0, ("Group", "Cases", "Rate", "Ratio")), (16, ("White", "78,744", "4.0", "1.0")),
        (16, ("Hispanic", "12,609", "7.7", "1.9")),
        (16, ("American Indian/Alaska", "707", "7.2", "1.8")), (11, ("Native",)),
        (16, ("By sex",)), (16, ("Male", "45,116", "3.6", "1.0")),
        (16, ("Female", "33,628", "4.6", "1.3")), (16, ("Other", "1,010", "2.2", "0.9"))]
    document = load_document(_pitched_pdf(rows), "application/pdf")
    cells = judged_cells(document, target("Group", "Cases", "Rate", "Ratio"))
    assert grid(cells)[0][2:5] == [["American Indian/Alaska\nNative", "707", "7.2", "1.8"],
                                   ["By sex", "", "", ""], ["Male", "45,116", "3.6", "1.0"]]


def test_a_heading_over_an_empty_column_names_the_values_beside_it() -> None:
    # A finder set the heading "Name" a column right of its values: nothing stands
    # under it, and the column of names beside it has no heading of its own.
    rows = (("Code", "", "Name", "Count"), ("01", "Aguascalientes", "", "12"),
            ("02", "Baja California", "", "7"), ("03", "Campeche", "", "3"))
    found = Found(1, rows, (60, 500, 560, 700), "network")
    judged = _judge(found, *_tests(target("Code", "Name", "Count")["header_schema"]),
                    [0, 1, 2])
    assert judged is not None and judged.columns == {0: 0, 1: 1, 2: 3}
    # A column with values under its own heading is not taken.
    headed = Found(1, (("Code", "Region", "Name", "Count"), *rows[1:]), found.box, "network")
    judged = _judge(headed, *_tests(target("Code", "Name", "Count")["header_schema"]),
                    [0, 1, 2])
    assert judged is not None and judged.columns[1] == 2


def test_dot_leaders_are_no_part_of_a_cell() -> None:
    rows: list[Row] = [("Region", "Sales", "Staff", "Stores"),
                       ("North ..............", "1200", "15", "4"),
                       ("South . . . . . . .", "950", "11", "3"), ("East...", "430", "6", "2")]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    # An ellipsis of three dots is text, four or more lead the eye to the values.
    assert [row[0] for row in grid(cells)[0]] == ["North", "South", "East..."]


def test_two_tables_on_a_page_go_each_to_the_target_named_like_it() -> None:
    staff: list[Row] = [("Team", "Staff", "Open roles", "Budget"), ("Sales", "12", "2", "400"),
                        ("Support", "8", "1", "250")]
    document = load_document(table_pdf((700, REGIONS), (560, staff)), "application/pdf")
    regions = target("Region", "Sales", "Staff", "Stores", target_id="t-regions")
    teams = target("Team", "Staff", "Open roles", "Budget", target_id="t-teams")
    found = tables_of(document, regions, teams)
    assert grid(found["t-regions"]) == {0: [list(row) for row in REGIONS[1:]]}
    assert grid(found["t-teams"]) == {0: [list(row) for row in staff[1:]]}


def test_a_table_continued_under_its_repeated_header_is_a_second_table() -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    more: list[Row] = [("West", "720", "9", "3"), ("Centre", "610", "7", "2")]
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    for rows in (REGIONS, [REGIONS[0], *more]):
        for number, row in enumerate(rows):
            for x, text in zip((64, 224, 334, 444), row, strict=True):
                page.drawString(x, 700 - 16 * number, text)
        page.showPage()
    page.save()
    document = load_document(buffer.getvalue(), "application/pdf")
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]], 1: [list(r) for r in more]}


def test_a_schema_no_found_table_matches_leaves_the_engines_own_reader() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    assert judged_cells(document, target("Product", "Colour", "Weight")) == []
    assert tables_of(document, target("Product", "Colour", "Weight"))["t-table"] == []


@pytest.mark.parametrize("kind", ["image/png", "application/pdf"], ids=["image", "scan"])
def test_a_table_without_rules_on_a_page_read_by_ocr_is_found_over_its_words(kind: str) -> None:
    # The text finders read a layer drawn from the OCR words (ocr_layer.py): the cells
    # are the words again, letters the layer's font could not draw ("Zürich") included.
    rows: list[Row] = [("City", "Sales", "Staff", "Stores"), ("Zürich", "1200", "15", "4"),
                       ("Genève", "950", "11", "3"), ("Basel", "430", "6", "2")]
    png = render_png(table_pdf((700, rows)))
    document = load_document(png if kind == "image/png" else image_only_pdf(png), kind)
    assert document.pages[0].source == "ocr"
    found = found_tables(document)
    assert {f.flavor for f in found} >= {"network", "stream"}
    assert {f.read for f in found} == {"ocr"}
    network = next(f for f in found if f.flavor == "network")
    assert [row for row in network.rows if any(row)][-4:] == rows
    cells = tables_of(document, target("City", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in rows[1:]]}


@pytest.mark.parametrize("kind", ["image/png", "application/pdf"], ids=["image", "scan"])
def test_a_ruled_table_on_a_page_read_by_ocr_is_found_by_its_rules(kind: str) -> None:
    # Unruled, a reader of header bands reads it too; ruled, the grid says which word
    # is in which cell even where columns crowd.
    rows: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("North", "1200", "15", "4"),
                       ("South", "950", "11", "3"), ("East", "430", "6", "2")]
    png = render_png(table_pdf((700, rows), ruled=True))
    data = png if kind == "image/png" else image_only_pdf(png)
    document = load_document(data, kind)
    assert document.pages[0].source == "ocr"
    found = found_tables(document)
    [lattice] = [f for f in found if f.flavor == "lattice"]
    assert lattice.rows == tuple(rows)
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in rows[1:]]}


def test_a_search_area_is_read_by_the_engines_own_reader() -> None:
    # A found table is a whole page's: it answers only a target that searches them all.
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    wanted = target("Region", "Sales", "Staff", "Stores")
    wanted["search_area"] = "top"
    configuration = {"search_areas": {"top": {"page": 1, "box": [0.0, 0.0, 1.0, 0.5]}},
                     "extraction_targets": [wanted]}
    [result] = extract_group(document, TargetGroup("top", "top", (wanted,)), configuration)
    assert grid(result.cells) == {0: [list(row) for row in REGIONS[1:]]}


# -- cell confidence (the shipped cells model, fitted on the table sets by make train) ---
def test_cells_under_a_row_of_one_cell_carry_it_as_evidence() -> None:
    # A name wrapped onto a line of its own ("Alaska" / "Native") may be a row of the
    # found table: every row under it may then be off by one. The cells model weighs
    # it (how much is fitted by make train, so no direction is pinned here).
    rows: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("North", "1200", "15", "4"),
                       ("South", "950", "11", "3"), ("Far East and", "430", "6", "2"),
                       ("Pacific",), ("West", "720", "9", "3"), ("Centre", "610", "7", "2")]
    document = load_document(table_pdf((700, rows)), "application/pdf")
    cells = judged_cells(document, target("Region", "Sales", "Staff", "Stores"))
    by_row = {c.row: c.evidence for c in cells if c.column == 1}
    assert by_row[1]["lone_above"] == 0.0
    assert by_row[max(by_row)]["lone_above"] > 0.0


def test_a_found_table_with_columns_the_schema_lacks_carries_it_as_evidence() -> None:
    named_all = judged_cells(load_document(table_pdf((700, REGIONS)), "application/pdf"),
                             target("Region", "Sales", "Staff", "Stores"))
    wider: list[Row] = [(*row, extra) for row, extra in
                        zip(REGIONS, ("Notes", "new", "old", "new"), strict=True)]
    document = load_document(table_pdf((700, wider), columns=(60, 180, 280, 380, 480)),
                             "application/pdf")
    fewer_named = judged_cells(document, target("Region", "Sales", "Staff", "Stores"))
    assert grid(fewer_named) == {0: [list(row) for row in REGIONS[1:]]}
    assert {c.evidence["extra_columns"] for c in fewer_named} == {1.0}
    assert {c.evidence["extra_columns"] for c in named_all} == {0.0}
    assert max(c.evidence["share"] for c in fewer_named) < min(
        c.evidence["share"] for c in named_all)


def test_cell_confidence_is_the_raw_score_without_a_cells_model() -> None:
    from servicetools.service.engine.calibration import cell_confidence

    assert cell_confidence({"share": 1.0}, 0.9, {"kinds": {}}) == 0.9
    model = {"cells": {"intercept": 0.0, "coef": {"share": 2.0}}}
    assert cell_confidence({"share": 1.0}, 0.9, model) == pytest.approx(0.8808, abs=1e-4)


def test_a_refused_cell_is_no_surer_than_its_readers_score() -> None:
    # The table sets the model is fitted on have no column rules: a refusal counts
    # through the reader's score, and the reader's score is no input of the model.
    from servicetools.service.engine.calibration import cell_confidence

    model = {"cells": {"intercept": 5.0, "coef": {"raw": -10.0}}}
    assert cell_confidence({"invalid": 1.0, "raw": 0.3}, 0.3, model) == 0.3
    assert cell_confidence({"invalid": 0.0, "raw": 0.3}, 0.3, model) == 0.98


def test_the_engines_own_readers_cells_have_the_cells_models_confidence() -> None:
    from servicetools.service.engine.calibration import cell_confidence

    # A search area is read by the engine's own reader alone.
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    wanted = target("Region", "Sales", "Staff", "Stores")
    wanted["search_area"] = "top"
    configuration = {"search_areas": {"top": {"page": 1, "box": [0.0, 0.0, 1.0, 0.5]}},
                     "extraction_targets": [wanted]}
    [result] = extract_group(document, TargetGroup("top", "top", (wanted,)), configuration)
    assert result.cells
    for cell in result.cells:
        assert (cell.evidence["own"], cell.evidence["alone"], cell.evidence["ocr"]) == (1, 1, 0)
        assert cell.confidence == cell_confidence(cell.evidence, cell.evidence["raw"])


def test_cells_both_readers_read_alike_agree() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}
    assert all(c.evidence["agree"] == 1 and c.evidence["alone"] == 0 for c in cells)
    assert all(c.evidence["table_agree"] == 1 for c in cells)
    assert not any(c.evidence.get("own") for c in cells)  # the found table's cells


# -- what the finders are given --------------------------------------------------------
PROSE = ("The year went well: we thank every customer for their trust.",
         "The figures follow on the next page.")


def test_a_page_without_the_schemas_headings_is_not_given_to_the_finders() -> None:
    document = load_document(table_pdf((700, REGIONS), prose=PROSE), "application/pdf")
    wanted = target("Region", "Sales", "Staff", "Stores")
    assert headed_pages(document, wanted) == [2]
    cells = tables_of(document, wanted)["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}
    assert sorted(document.cache.found_tables) == [2]  # page 1 never read


@pytest.mark.parametrize("ruled", [False, True], ids=["unruled", "ruled"])
def test_the_ruled_table_finder_reads_only_pages_that_draw_rules(ruled: bool) -> None:
    document = load_document(table_pdf((700, REGIONS), ruled=ruled), "application/pdf")
    assert document.pages[0].ruled is ruled
    flavors = {f.flavor for f in found_tables(document)}
    # camelot's lattice and pdfplumber's "lines" strategy both follow the rules.
    assert ("lattice" in flavors) is ruled
    assert ("lines" in flavors) is ruled
    assert "network" in flavors


def test_pdfplumber_tables_are_kept_in_camelots_place_or_ruled_where_it_found_none() -> None:
    camelot = Found(1, (("Region", "Sales"),), (60, 500, 560, 700), "network")
    again = Found(1, (("Region", "Sales"),), (61, 502, 559, 700), "text")
    around = Found(1, (("Annual", "report"),), (40, 40, 570, 800), "text")
    alone = Found(2, (("Region", "Sales"),), (60, 500, 560, 700), "text")
    ruled = Found(2, (("Region", "Sales"),), (60, 500, 560, 700), "lines")
    elsewhere = Found(1, (("Team", "Staff"),), (60, 100, 560, 300), "lines")
    # A text-strategy table is camelot's read again or the page's text run together.
    kept = [f for f in (again, around, alone, ruled, elsewhere)
            if _rereads(f.page, f.box, f.flavor, [camelot])]
    assert kept == [again, ruled, elsewhere]


def test_a_found_table_ends_where_another_targets_header_starts() -> None:
    # Two tables one under the other in the same columns: a finder may read them as one.
    staff: list[Row] = [("Team", "Staff", "Open roles", "Budget"), ("Sales", "12", "2", "400"),
                        ("Support", "8", "1", "250")]
    document = load_document(table_pdf((700, [*REGIONS, *staff])), "application/pdf")
    regions = target("Region", "Sales", "Staff", "Stores", target_id="t-regions")
    teams = target("Team", "Staff", "Open roles", "Budget", target_id="t-teams")
    assert grid(judged_cells(document, regions, [teams])) == {
        0: [list(row) for row in REGIONS[1:]]}
    assert grid(judged_cells(document, teams, [regions])) == {0: [list(row) for row in staff[1:]]}


# -- real pages (data/real/, with their licences in its README) --------------------------
REAL = Path(__file__).resolve().parents[2] / "data" / "real"


@pytest.mark.parametrize(("name", "table", "rule_last"), [
    ("azure-form-recognizer-samples/Invoice_1", 0, False),  # ruled, five columns
    ("azure-form-recognizer-samples/sample-invoice", 0, False),  # two ruled tables
    ("indico-toolkit/inv_sample2", 0, False),  # a column without a heading
    # Totals under the items: the last column's rule ("not empty") ends the items.
    ("gcp-documentai-toolbox/toolbox_invoice_test", 0, True),
])
def test_tables_of_real_pages_named_by_their_headings(name: str, table: int,
                                                      rule_last: bool) -> None:
    truth = json.loads((REAL / f"{name}.truth.json").read_text(encoding="utf-8"))
    targets = []
    for number, rows in enumerate(t["rows"] for t in truth["tables"]):
        wanted = target(*rows[0], target_id=f"t-{number}")
        if rule_last:
            wanted["header_schema"][-1]["extracted_value_validation_tree"] = {
                "name": "amount", "rule_groups": [{"name": "v", "rules": [{"type": "not_empty"}]}]}
        targets.append(wanted)
    document = load_document((REAL / f"{name}.pdf").read_bytes(), "application/pdf")
    cells = tables_of(document, *targets)[f"t-{table}"]
    assert grid(cells)[0] == truth["tables"][table]["rows"][1:]


# -- candidates chosen by evidence (candidates.choose, scored by candidates.json) ---------
def _candidate(source: str, grid: list[list[str]], share: float = 1.0,
               box: tuple[float, float, float, float] = (60, 600, 560, 720)) -> Candidate:
    return Candidate(source, 1, box, share, grid)


def test_every_reader_proposes_at_the_tables_place() -> None:
    # camelot's flavours, pdfplumber's strategies and the engine's own reader all propose
    # the one table; one of them is chosen.
    document = load_document(table_pdf((700, REGIONS), ruled=True), "application/pdf")
    with recording() as proposals:
        cells = tables_of(document, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}
    assert {p.source for p in proposals} >= {"lattice", "network", "stream", "lines", "own"}
    assert {p.place for p in proposals} == {0}
    assert sum(p.chosen for p in proposals) == 1
    assert all(set(p.features) == set(FEATURES) for p in proposals)


def test_overlapping_candidates_are_one_place_and_the_best_scored_is_chosen() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    wanted = target("Region", "Sales", "Staff", "Stores")
    body = [list(row) for row in REGIONS[1:]]
    # A finder that ran two columns together: its kinds are mixed down the column.
    merged = [[f"{a} {b}", "", c, d] for a, b, c, d in body]
    right, wrong = _candidate("network", body, share=0.9), _candidate("stream", merged)
    with scoring({"weights": {"consistent": 1.0, "fill": 1.0}}):
        assert choose(document, wanted, [wrong, right]) == [right]
    # Weighed by the header alone, the better headed one wins.
    with scoring({"weights": {"share": 1.0}}):
        assert choose(document, wanted, [wrong, right]) == [wrong]


def test_places_apart_are_each_a_table_in_reading_order() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    body = [list(row) for row in REGIONS[1:]]
    lower = _candidate("network", body, box=(60, 100, 560, 200))
    upper = _candidate("stream", body, box=(60, 600, 560, 720))
    chosen = choose(document, target("Region", "Sales", "Staff", "Stores"), [lower, upper])
    assert chosen == [upper, lower]


def test_a_place_the_own_reader_alone_read_counts_only_without_a_finders_table() -> None:
    document = load_document(table_pdf((700, REGIONS)), "application/pdf")
    wanted = target("Region", "Sales", "Staff", "Stores")
    body = [list(row) for row in REGIONS[1:]]
    found = _candidate("network", body, box=(60, 600, 560, 720))
    own = _candidate("own", body, box=(60, 100, 560, 200))
    assert choose(document, wanted, [found, own]) == [found]
    assert choose(document, wanted, [own]) == [own]


def test_the_shipped_scoring_weighs_every_piece_of_evidence() -> None:
    shipped = load_scoring()
    assert set(shipped["weights"]) == set(FEATURES)
    assert shipped["fitted_on"]["halves"] == "tuning"


def test_pdfplumbers_finders_read_the_pages_the_loader_parsed() -> None:
    document = load_document(table_pdf((700, REGIONS), ruled=True), "application/pdf")
    assert set(document.cache.parsed_pages) == {1}
    assert "lines" in {f.flavor for f in found_tables(document)}
    # Read once: the parsed page is let go.
    assert document.cache.parsed_pages == {}


def test_a_document_with_parsed_pages_pickles_without_them() -> None:
    import pickle

    document = load_document(table_pdf((700, REGIONS), ruled=True), "application/pdf")
    again = pickle.loads(pickle.dumps(document))
    assert again.cache.parsed_pages == {} and again.pages == document.pages
    assert "lines" in {f.flavor for f in found_tables(again)}
