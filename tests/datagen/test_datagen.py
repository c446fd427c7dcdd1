"""The dev-set generator: deterministic, truthful to what it prints, honours its options."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("reportlab")
pytest.importorskip("pypdfium2")
pdfplumber = pytest.importorskip("pdfplumber")

from PIL import Image  # noqa: E402

from servicetools import bundled  # noqa: E402
from servicetools.datagen import (  # noqa: E402
    FORMATS,
    content,
    generate,
    invoice_layouts,
    plan,
    receipt_layouts,
    truth,
)
from servicetools.datagen.__main__ import main  # noqa: E402
from servicetools.datagen.printed import DATE_FORMATS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAYMENT_VALUES = {"cash", "visa", "mastercard", "card", "debit", "credit", "amex"}
TRUTH_KEYS = {
    "document",
    "kind",
    "configuration",
    "format",
    "seed",
    "layout",
    "pages",
    "fields",
    "tables",
}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _load(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


@pytest.fixture(scope="module")
def devset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("devset")
    return out, generate(out, 12, seed=11)


def test_same_seed_gives_identical_files(devset: tuple[Path, list[Path]], tmp_path: Path) -> None:
    out, paths = devset
    again = generate(tmp_path, 12, seed=11)
    assert [p.name for p in again] == [p.name for p in paths]
    for first, second in zip(paths, again, strict=True):
        assert first.read_bytes() == second.read_bytes()
        document = json.loads(first.read_text())["document"]
        # reportlab's invariant mode and fixed seeds make even the binary files repeat.
        assert (out / "documents" / document).read_bytes() == (
            tmp_path / "documents" / document
        ).read_bytes()


def test_different_seeds_differ(devset: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = devset
    other = generate(tmp_path, 12, seed=12)
    assert [p.read_bytes() for p in other] != [p.read_bytes() for p in paths]
    fields = [t["fields"] for t in _load(other)]
    assert fields != [t["fields"] for t in _load(paths)]


def test_truth_has_the_documented_shape(devset: tuple[Path, list[Path]]) -> None:
    out, paths = devset
    for path, t in zip(paths, _load(paths), strict=True):
        assert set(t) - {"scan"} == TRUTH_KEYS
        assert path.stem == Path(t["document"]).stem
        assert (out / "documents" / t["document"]).is_file()
        assert list(t["fields"]) == list(truth.FIELDS[t["kind"]])
        assert t["configuration"] == truth.CONFIGURATION[t["kind"]]
        assert t["seed"] == 11
        (tables,) = t["tables"].values()
        assert list(t["tables"]) == [truth.TABLE[t["kind"]]]
        assert [entry["page"] for entry in tables] == sorted(entry["page"] for entry in tables)
        assert all(len(row) == 4 for entry in tables for row in entry["rows"])
        assert ("scan" in t) == (t["format"] != "pdf")


def test_target_names_are_the_configurations(devset: tuple[Path, list[Path]]) -> None:
    for kind, configuration in truth.CONFIGURATION.items():
        config = json.loads(
            (bundled.CONFIGURATIONS / f"{configuration}.json").read_text()
        )
        targets = config["extraction_targets"]
        # The receipts' Address target came after the generator; its truth does not grade it.
        fields = [t["name"] for t in targets if t["type"] == "field" and t["name"] != "Address"]
        assert fields == list(truth.FIELDS[kind])
        assert [t["name"] for t in targets if t["type"] == "table"] == [truth.TABLE[kind]]


def _check_against_text_layer(document: Path, t: dict[str, Any]) -> None:
    with pdfplumber.open(document) as pdf:
        pages = [_squash(page.extract_text() or "") for page in pdf.pages]
    assert len(pages) == t["pages"]
    for name, value in t["fields"].items():
        assert _squash(value) in "".join(pages), (document.name, name, value)
    for tables in t["tables"].values():
        for entry in tables:
            text = pages[entry["page"] - 1]
            for row in entry["rows"]:
                for cell in row:
                    # A wrapped cell's lines are separated by other columns' text.
                    for line in cell.split("\n"):
                        assert _squash(line) in text, (document.name, entry["page"], line)


def test_truth_occurs_in_the_text_layer(devset: tuple[Path, list[Path]]) -> None:
    out, paths = devset
    checked = 0
    for t in _load(paths):
        if t["format"] == "pdf":
            _check_against_text_layer(out / "documents" / t["document"], t)
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("layout", sorted(invoice_layouts.LAYOUTS))
def test_long_tables_continue_on_a_new_page_with_the_header(layout: str) -> None:
    rng = random.Random(f"long:{layout}")
    inv = content.invoice(rng, item_count=45)
    printed = invoice_layouts.LAYOUTS[layout](rng, inv)
    assert len(printed.sheet.pages) >= 2
    assert [t.page for t in printed.tables] == list(range(1, len(printed.tables) + 1))
    rows = [row for table in printed.tables for row in table.rows]
    assert [row[0].replace("\n", " ") for row in rows] == [i.description for i in inv.items]
    for page in printed.sheet.pages[: len(printed.tables)]:
        texts = [mark.text for mark in page.marks if hasattr(mark, "text")]
        assert inv.labels["description"] in texts  # the header is repeated on each page


def test_layouts_cover_the_label_and_format_variety() -> None:
    seen_labels: set[str] = set()
    wrapped = False
    for n in range(60):
        rng = random.Random(n)
        inv = content.invoice(rng, item_count=6)
        printed = invoice_layouts.LAYOUTS[sorted(invoice_layouts.LAYOUTS)[n % 3]](rng, inv)
        seen_labels.add(inv.labels["number"])
        for name in ("Invoice Date", "Due Date"):
            value = printed.fields[name]
            if value:
                assert any(_parses(value, fmt) for fmt in DATE_FORMATS), value
        wrapped |= any("\n" in row[0] for t in printed.tables for row in t.rows)
    assert seen_labels == set(content.INVOICE_NUMBER_LABELS)
    assert wrapped
    for n in range(20):
        rng = random.Random(n)
        printed = receipt_layouts.LAYOUTS[sorted(receipt_layouts.LAYOUTS)[n % 2]](
            rng, content.receipt(rng, item_count=5)
        )
        assert len(printed.sheet.pages) == 1
        assert printed.fields["Payment Method"].lower() in PAYMENT_VALUES


def _parses(value: str, fmt: str) -> bool:
    try:
        dt.datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


def test_scans_have_the_recorded_size_mode_and_one_page(devset: tuple[Path, list[Path]]) -> None:
    out, paths = devset
    formats = set()
    for t in _load(paths):
        if t["format"] not in ("png", "jpeg"):
            continue
        formats.add(t["format"])
        with Image.open(out / "documents" / t["document"]) as image:
            assert image.format == {"png": "PNG", "jpeg": "JPEG"}[t["format"]]
            assert image.mode == t["scan"]["mode"]
            assert list(image.size) == t["scan"]["size"]
        assert t["pages"] == 1
        dpi = t["scan"]["dpi"]
        assert 150 <= dpi <= 200
        assert abs(t["scan"]["rotation"]) <= 1.5
        width_pt = t["scan"]["size"][0] * 72 / dpi
        paper = (595.28, 612.0) if t["kind"] == "invoice" else receipt_layouts.PAPER_WIDTHS
        assert min(abs(width_pt - w) for w in paper) < 1.0
    assert formats == {"png", "jpeg"}


def test_scan_pdf_holds_images_only(devset: tuple[Path, list[Path]]) -> None:
    out, paths = devset
    scans = [t for t in _load(paths) if t["format"] == "scan-pdf"]
    assert scans
    for t in scans:
        with pdfplumber.open(out / "documents" / t["document"]) as pdf:
            assert len(pdf.pages) == t["pages"]
            assert all(not page.chars and page.images for page in pdf.pages)


def test_plan_mixes_kinds_and_formats() -> None:
    documents = plan(40, seed=2026)
    kinds = [kind for kind, _, _ in documents]
    assert kinds.count("invoice") == 24 and kinds.count("receipt") == 16
    assert {fmt for _, _, fmt in documents} == set(FORMATS)
    assert [fmt for *_, fmt in documents].count("pdf") > 20
    with pytest.raises(ValueError, match="unknown"):
        plan(3, seed=1, formats=["tiff"])


def test_kinds_formats_and_count_are_honoured(tmp_path: Path) -> None:
    paths = generate(tmp_path, 3, seed=5, kinds=["receipt"], formats=["jpeg"])
    assert [p.name for p in paths] == ["rcp-0001.json", "rcp-0002.json", "rcp-0003.json"]
    assert sorted(p.name for p in (tmp_path / "documents" / "receipts").iterdir()) == [
        "rcp-0001.jpeg",
        "rcp-0002.jpeg",
        "rcp-0003.jpeg",
    ]
    # A smaller run into the same folder leaves no files of the bigger one behind.
    generate(tmp_path, 1, seed=5, kinds=["receipt"], formats=["jpeg"])
    assert [p.name for p in (tmp_path / "truth").iterdir()] == ["rcp-0001.json"]
    assert len(list((tmp_path / "documents" / "receipts").iterdir())) == 1


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "--out",
                str(tmp_path),
                "--count",
                "2",
                "--seed",
                "3",
                "--formats",
                "pdf",
                "--kinds",
                "invoice",
                "-q",
            ]
        )
        == 0
    )
    assert "wrote 2 documents" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "documents" / "invoices").iterdir()) == [
        "inv-0001.pdf",
        "inv-0002.pdf",
    ]
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--formats", "tiff"])


def test_committed_sample_matches_its_files() -> None:
    truth_dir = bundled.TRUTH
    paths = sorted(truth_dir.glob("*.json")) if truth_dir.is_dir() else []
    generated = [t for t in _load(paths) if "seed" in t]
    if not generated:
        pytest.skip("no generated sample in data/")
    for t in generated:
        assert (bundled.DOCUMENTS / t["document"]).is_file(), t["document"]
