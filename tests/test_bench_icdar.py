"""The ICDAR 2013 measure of bench/icdar.py on grids made here, and on a dev file."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import icdar  # noqa: E402


def test_relations_go_to_the_nearest_filled_cell_right_and_below() -> None:
    grid = {(0, 0): "A", (0, 2): "B", (1, 0): "C", (2, 2): "D"}
    assert icdar.relations(grid) == Counter({("A", "B", "right"): 1, ("A", "C", "down"): 1,
                                              ("B", "D", "down"): 1})


def test_texts_are_compared_without_whitespace_and_empty_cells_do_not_count() -> None:
    assert icdar.relations({(0, 0): "In the last\nmonth", (0, 1): "  ", (0, 2): "12 %"}) == (
        Counter({("Inthelastmonth", "12%", "right"): 1}))


def test_score_is_micro_averaged_over_tables() -> None:
    truth_a = {(0, 0): "a", (0, 1): "b", (1, 0): "c"}  # 2 relations
    truth_b = {(0, 0): "x", (0, 1): "y", (0, 2): "z"}  # 2 relations
    found_a = {(0, 0): "a", (0, 1): "b", (1, 1): "c"}  # a-b right, b-c down: 1 right
    score = icdar.score([(found_a, truth_a), (None, truth_b)])
    assert (score.right, score.found, score.truth) == (1, 2, 4)
    assert score.precision == 0.5 and score.recall == 0.25
    assert score.f1 == pytest.approx(1 / 3)


def _table(*cells: tuple[int, int, int, int, str]) -> icdar.Table:
    return icdar.Table("t/1", 1, tuple(icdar.Cell(*c) for c in cells))


def test_the_last_header_row_follows_spanning_headings() -> None:
    # "Country" spans two header rows; "Sales" spans two columns over "2023" and "2024".
    table = _table((0, 0, 1, 0, "Country"), (0, 1, 0, 2, "Sales"), (1, 1, 1, 1, "2023"),
                   (1, 2, 1, 2, "2024"), (2, 0, 2, 0, "France"), (2, 1, 2, 1, "5"),
                   (2, 2, 2, 2, "6"))
    assert icdar.header_row(table) == 1
    assert icdar.header_names(table) == ["Country", "2023", "2024"]
    plain = _table((0, 0, 0, 0, "Name"), (0, 1, 0, 1, "Age"), (1, 0, 1, 0, "Ann"),
                   (1, 1, 1, 1, "7"))
    assert icdar.header_row(plain) == 0


def test_a_library_table_becomes_a_grid() -> None:
    assert icdar.grid_of_rows([["a", None], ["", "b"]]) == {(0, 0): "a", (1, 1): "b"}


@pytest.mark.skipif(not icdar.ROOT.exists(), reason="the ICDAR 2013 dev set is not here")
def test_a_dev_document_reads_with_grids_from_zero() -> None:
    documents = {d.name: d for d in icdar.documents()}
    assert len(documents) == 41
    assert sum(len(d.tables) for d in documents.values()) == 87
    # eu-009b's tables are in eu-009a.pdf.
    assert documents["eu-009b"].pdf.name == "eu-009a.pdf"
    # us-021 counts rows and columns from 1 in its file: the grid starts at 0 all the same.
    table = documents["us-021"].tables[0]
    assert min(r for r, _ in table.grid) == 0 and min(c for _, c in table.grid) == 0
    eu011 = documents["eu-011"].tables[0]
    assert (eu011.page, icdar.header_names(eu011)[:2]) == (
        3, ["Differences with respect to Germany", "Portugal"])


def test_heading_rows_follow_the_camelot_sets_rule() -> None:
    rows = [["", "Total", "Male"], ["Offense", "years", "years"], ["Caste/tribe", "", ""],
            ["Violent crime", "1,234.5", "(35,8)"]]
    # The stub-only section label above the first body row belongs to the body.
    assert icdar.heading_rows(rows) == 2
    # Years and column numbers are headings; a labelled row with a figure is body.
    assert icdar.heading_rows([["State", "2011-12", "2013"], ["", "1", "2"],
                               ["Kerala", "5.9%", "n/a"]]) == 2
    assert icdar.heading_rows([["1", "Ghf", "1", "Hgf"], ["Vg", "Hj", "Hj", "Hj"]]) == 0
    assert icdar.heading_rows([["Name", "Town"], ["Ann", "Kiel"]]) == 1


def test_from_heading_names_each_column_by_the_nearest_heading_above() -> None:
    rows = [["", "Total", ""], ["Offense", "Under 18", "18 years"], ["", "years", "and over"],
            ["Theft", "12", "30"]]
    assert icdar.from_heading(rows) == {(0, 0): "Offense", (0, 1): "years", (0, 2): "and over",
                                        (1, 0): "Theft", (1, 1): "12", (1, 2): "30"}


def test_printed_headings_join_a_columns_lines_below_its_group_heading() -> None:
    headings = [["", "Total", "", ""], ["Offense charged", "Under 18", "18 years", "Preva-"],
                ["", "years", "and over", "lence"]]
    assert icdar.printed_headings(headings) == [
        "Offense charged", "Under 18 years", "18 years and over", "Prevalence"]


CAMELOT = icdar.ROOT.parent / "camelot-tests-dev"


@pytest.mark.skipif(not CAMELOT.exists(), reason="the camelot-tests-dev set is not here")
def test_the_camelot_set_reads_with_its_heading_rows() -> None:
    import json

    documents = {d.name: d for d in icdar.camelot_documents(CAMELOT)}
    assert (len(documents), sum(len(d.tables) for d in documents.values())) == (21, 24)
    # The README's rule gives every table's header_rows.
    for path in CAMELOT.glob("*.table*.json"):
        truth = json.loads(path.read_text())
        assert icdar.heading_rows(truth["rows"]) == truth["header_rows"], path.name
    table = documents["12s0324"].tables[0]
    assert icdar.header_names(table)[:3] == ["Offense charged", "Total", "years"]
    assert icdar.printed_headings(table.headings)[2] == "Under 18 years"
    assert documents["table_region"].tables[0].partial
    assert {d.half for d in documents.values()} == {"tuning", "check"}
    assert documents["health"].half == "tuning" and documents["m27"].half == "check"


def test_found_tables_are_cut_by_the_heading_rule_on_the_camelot_set() -> None:
    import tables

    truth_rows = [["", "Total", "Male"], ["Offense", "years", "years"], ["Theft", "12", "30"],
                  ["Fraud", "4", "7"]]
    grid = icdar.from_heading(truth_rows, 2)
    table = icdar.Table("d/1", 1, tuple(icdar.Cell(r, c, r, c, t) for (r, c), t in grid.items()),
                        0, tuple(tuple(r) for r in truth_rows[:2]))
    document = icdar.Document("d", Path("d.pdf"), (table,), cut=True)
    # A library's table with a caption row above the headings scores as the truth.
    found = icdar.grid_of_rows([["Table 1: arrests", "", ""], *truth_rows])
    outcome = tables.outcome([(1, found)], document)
    assert outcome.matched == [True]
    assert outcome.score.f1 == 1.0
    # A table elsewhere on the page counts against precision, but not on a partial table.
    stray = icdar.grid_of_rows([["a", "b"], ["c", "d"]])
    assert tables.outcome([(1, found), (1, stray)], document).score.precision < 1.0
    partial = icdar.Document("d", Path("d.pdf"), (icdar.Table(
        "d/1", 1, table.cells, 0, table.headings, partial=True),), cut=True)
    assert tables.outcome([(1, found), (1, stray)], partial).score.f1 == 1.0


def test_a_users_regex_of_a_heading_leaves_footnote_marks_out() -> None:
    import re

    import tables

    assert tables.user_regex("Others(1)") == "(?i)Others"
    assert re.fullmatch(tables.user_regex("No. of HHs"), "no. of hhs")


def test_cells_held_out_by_set_are_scored_by_a_model_fitted_on_the_others() -> None:
    import tables

    # Sets with right cells in another share each, which an input the old cell model
    # did not have tells: fitted on the other sets, the new inputs give each set its
    # share; the old ones cannot.
    shares = {"a": 0.9, "b": 0.1, "c": 0.5}
    cells = [tables.CellOutcome(f"{name}-{n}", 0.5, n < 400 * share,
                                {"good": float(n < 400 * share), "share": 1.0},
                                reading=reading, set=name, pdf=f"{name}-{n}")
             for name, share in shares.items() for reading in ("text", "ocr")
             for n in range(400)]
    lines = tables.held_out_cells(cells).splitlines()
    rows = {tuple(line.split()[:2]): line.split() for line in lines[3:] if line.strip()
            and not line.startswith("(")}
    assert set(rows) == {(s, r) for s in "abc" for r in ("text", "scans")} | {("every", "set,")}
    for name in "ab":
        _, old, after = map(float, rows[(name, "text")][4:7])
        assert after < 0.15 and old > 0.5
        # Beside it, the mean confidence the model fitted on the others gives the set.
        assert float(rows[(name, "text")][7].rstrip("%")) / 100 == pytest.approx(
            shares[name], abs=0.1)
    # Before: the old inputs fitted on the first set (its own figure 5-fold).
    assert float(rows[("a", "text")][4]) < 0.05 and float(rows[("b", "text")][4]) > 0.5


def test_an_input_for_right_cells_in_one_set_and_against_them_in_another_flips() -> None:
    import tables

    # "wide" goes with right cells in set a and with wrong ones in set b; "good" with
    # right cells in both.
    cells = [tables.CellOutcome(f"{name}-{n}", 0.5, right,
                                {"good": float(right), "wide": float(right == (name == "a"))},
                                set=name, pdf=f"{name}-{n}", half=half)
             for name in "ab" for n in range(300) for right in [n % 3 > 0]
             for half in ["tuning" if n < 200 else "check"]]
    rows = {line.split()[0]: line.split() for line in
            tables.cell_input_signs(cells).splitlines()[3:]}
    assert rows["wide"][-1] == "flips" and rows["good"][-1] != "flips"
    assert float(rows["wide"][1]) > 0 > float(rows["wide"][2])


def test_the_scoring_of_candidates_is_fitted_to_choose_the_better_at_each_place() -> None:
    import tables

    from servicetools.service.engine.candidates import FEATURES

    # At each place two candidates: the one whose columns hold one kind each is the
    # right one (F1 near 1), better headed or not; the other reads 0.3.
    weighed = []
    for n in range(60):
        for good in (True, False):
            features = dict.fromkeys(FEATURES, 0.0)
            features.update(consistent=1.0 if good else 0.6, share=0.8 if good else 1.0,
                            by_network=float(good), by_stream=float(not good))
            weighed.append(tables.Weighed(f"d{n}", f"pdf{n}", "tuning", "t-0", 0,
                                          "network" if good else "stream", features,
                                          0.95 if good else 0.3, False))
    scoring = tables.fit_scoring(weighed)
    assert scoring["weights"]["consistent"] > 0
    assert tables.chosen_f1(weighed, scoring["weights"]) == pytest.approx(0.95)
    assert tables.best_f1(weighed) == pytest.approx(0.95)
    # Weighed by the header alone, the worse is chosen.
    assert tables.chosen_f1(weighed, {"share": 1.0}) == pytest.approx(0.3)


def test_each_set_is_read_again_with_the_scoring_fitted_on_the_others(tmp_path: Path) -> None:
    import argparse

    import tables

    from tests.support.engine_documents import REGIONS, table_pdf

    def one_set(name: str) -> list[icdar.Document]:
        pdf = tmp_path / f"{name}.pdf"
        pdf.write_bytes(table_pdf((700, REGIONS)))
        cells = tuple(icdar.Cell(r, c, r, c, text) for r, row in enumerate(REGIONS)
                      for c, text in enumerate(row))
        return [icdar.Document(name, pdf, (icdar.Table(f"{name}/1", 1, cells),))]

    args = argparse.Namespace(engine_only=True)
    runs = [tables.run_set(name, one_set(name), args) for name in ("a", "b")]
    assert all(w.f1 > 0.9 for run in runs for w in run.candidates if w.chosen)
    printed = tables.leave_one_set_out(runs)
    assert printed.splitlines()[1].split()[0] == "a"
    for run in runs:
        assert run.methods() == ["engine", tables.LOSO]
        assert run.of(tables.LOSO).score.f1 == run.of("engine").score.f1 == 1.0
        report = tables.report(run)
        assert f"{tables.LOSO:<24}" in report and "where the engine, l-o-s-o finds" in report
