import io

import pytest
from PIL import Image

from servicetools.service.engine import Document, Page, UnreadableDocument, Word, load_document
from servicetools.service.engine.lines import document_text, group_lines
from servicetools.service.engine.ocr import _segment_words

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_text_pdf_pages_have_png_and_text_layer_words(invoice_pdf: bytes) -> None:
    document = load_document(invoice_pdf, "application/pdf")
    assert document.content_type == "application/pdf"
    [page] = document.pages
    assert (page.number, page.source) == (1, "text")
    assert (page.width, page.height) == (612.0, 792.0)
    assert page.png.startswith(PNG_SIGNATURE)
    with Image.open(io.BytesIO(page.png)) as image:
        image.load()  # the hand-written grayscale PNG decodes (CRCs, zlib stream)
        width, height = image.size
        # A text page is drawn in grayscale, ink dark on white paper.
        assert image.mode == "L" and image.getextrema() == (0, 255)
    assert (width, height // 10) == (1275, 165)  # 150 dpi; PDFium rounds the height up
    assert all(0 <= w.x0 < w.x1 <= 1 and 0 <= w.y0 < w.y1 <= 1 for w in page.words)
    assert {w.confidence for w in page.words} == {1.0}


def test_text_page_png_holds_exactly_the_rendered_pixels(invoice_pdf: bytes) -> None:
    import numpy as np
    import pypdfium2 as pdfium

    [page] = load_document(invoice_pdf, "application/pdf", dpi=100).pages
    pdf = pdfium.PdfDocument(invoice_pdf)
    try:
        drawn = np.asarray(pdf[0].render(scale=100 / 72, grayscale=True).to_pil())
    finally:
        pdf.close()
    with Image.open(io.BytesIO(page.png)) as image:
        assert np.array_equal(np.asarray(image), drawn)


def test_document_text_is_in_reading_order(invoice_pdf: bytes) -> None:
    lines = document_text(load_document(invoice_pdf, "application/pdf")).splitlines()
    assert lines[:3] == [
        "INVOICE",
        "From: Acme Supplies Ltd Invoice No: INV-2024-0012",
        "12 Harbour Road, Springfield Date: 2024-03-15",
    ]
    assert "Consulting services, 10 50.00 500.00" in lines


def test_a_space_drawn_over_a_digit_splits_no_word() -> None:
    # Some generators set a space and a digit at one place: the page shows
    # "Nr. 181301674", the text stream "Nr. 1 81301674". The engine reads the page,
    # whichever of the two the stream draws first.
    from ..support.drawn_pages import letter_canvas

    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    c.setFont("Courier", 12)
    digit = c.stringWidth("1", "Courier", 12)
    for y, space_first in ((700, True), (680, False)):
        at = 50 + c.stringWidth("Invoice Nr. ", "Courier", 12)
        c.drawString(50, y, "Invoice Nr.")
        for text, x in ([(" ", at + 0.01), ("1", at)] if space_first
                        else [("1", at), (" ", at + 0.01)]):
            c.drawString(x, y, text)
        c.drawString(at + digit, y, "81301674")
    c.drawString(50, 660, "Due in 30 days")  # a space between words stays one
    c.save()
    lines = document_text(load_document(buffer.getvalue(), "application/pdf")).splitlines()
    assert lines == ["Invoice Nr. 181301674", "Invoice Nr. 181301674", "Due in 30 days"]


def test_text_drawn_twice_over_itself_reads_once() -> None:
    # Forms fake a bold face by drawing a run twice, a little apart ("($27.00)" again
    # 1.3 pt right and 0.8 pt up): pdfplumber's words read "($$2277..0000)". A heading
    # set twice at one place reads "HHIIGGHHLLIIGGHHTTSS". A reader sees each once.
    # Two like letters set tight ("11" in a condensed face) stay two.
    from ..support.drawn_pages import letter_canvas

    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    c.setFont("Helvetica", 10)
    c.drawString(50, 700, "Gross Amount")
    for dx, dy in ((0.0, 0.0), (1.3, 0.8)):
        c.drawString(150 + dx, 700 + dy, "($27.00)")
    for _ in range(2):
        c.drawString(50, 680, "HIGHLIGHTS")
    c.drawString(50, 660, "Spots")
    one = c.stringWidth("1", "Helvetica", 10)
    c.drawString(100, 660, "1")
    c.drawString(100 + 0.6 * one, 660, "1")  # tighter than a shadow's reach: still "11"
    c.save()
    lines = document_text(load_document(buffer.getvalue(), "application/pdf")).splitlines()
    assert lines == ["Gross Amount ($27.00)", "HIGHLIGHTS", "Spots 11"]


def test_every_page_is_rendered(two_page_pdf: bytes) -> None:
    document = load_document(two_page_pdf, "application/pdf", dpi=72)
    assert [p.number for p in document.pages] == [1, 2]
    assert all(Image.open(io.BytesIO(p.png)).width == 612 for p in document.pages)


def test_pdf_without_text_layer_goes_through_ocr(receipt_scan_pdf: bytes) -> None:
    [page] = load_document(receipt_scan_pdf, "application/pdf").pages
    assert page.source == "ocr"
    texts = [w.text for w in page.words]
    assert "R-004512" in texts
    assert all(0 < w.confidence <= 1 for w in page.words)


def test_image_is_reencoded_as_png_with_exif_orientation_applied() -> None:
    image = Image.new("RGB", (40, 20), "white")
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: the viewer turns it 90 degrees clockwise
    data = io.BytesIO()
    image.save(data, format="JPEG", exif=exif)
    [page] = load_document(data.getvalue(), "image/jpeg").pages
    assert (page.width, page.height, page.source) == (20.0, 40.0, "ocr")
    assert page.png.startswith(PNG_SIGNATURE)
    assert page.words == []


@pytest.mark.parametrize(
    ("data", "content_type", "code"),
    [
        (b"%PDF-1.4 broken", "application/pdf", "invalid_document"),
        (b"not an image", "image/png", "invalid_document"),
        (b"GIF89a", "image/gif", "unsupported_media_type"),
    ],
)
def test_unreadable_documents_raise_document_error(
    data: bytes, content_type: str, code: str
) -> None:
    with pytest.raises(UnreadableDocument) as raised:
        load_document(data, content_type)
    assert raised.value.code == code
    assert raised.value.message


def test_encrypted_pdf_is_reported_as_such() -> None:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, encrypt="secret")
    c.drawString(100, 700, "Invoice")
    c.save()
    with pytest.raises(UnreadableDocument) as raised:
        load_document(out.getvalue(), "application/pdf")
    assert raised.value.code == "encrypted_document"


def _ocr_item(text: str, gaps: dict[int, float]) -> list[object]:
    """A RapidOCR result line with character boxes 10 px wide, extra gaps before some chars."""
    boxes, x = [], 100.0
    for i, _ in enumerate(text):
        x += gaps.get(i, 0.0)
        boxes.append([[x, 50], [x + 10, 50], [x + 10, 70], [x, 70]])
        x += 10
    outline = [[100, 50], [x, 50], [x, 70], [100, 70]]
    return [outline, text, 0.9, boxes, list(text), [0.9] * len(text)]


@pytest.mark.parametrize(
    ("text", "gaps", "words"),
    [
        ("Date:2024-03-15", {}, ["Date:", "2024-03-15"]),
        ("GlobexCorporation", {}, ["Globex", "Corporation"]),
        ("742Evergreen", {3: 8.0}, ["742", "Evergreen"]),
        ("A4", {}, ["A4"]),
        ("12:30 Due Date", {}, ["12:30", "Due", "Date"]),
        ("KeystoneGmbH", {}, ["Keystone", "GmbH"]),
        ("WidgetA", {}, ["Widget", "A"]),
        ("Qty.Description", {}, ["Qty.", "Description"]),
        ("Acme S.A.", {}, ["Acme", "S.A."]),
        ("Date12Aug", {}, ["Date", "12Aug"]),
        ("INV023867", {}, ["INV023867"]),
    ],
)
def test_ocr_segments_are_split_into_words(
    text: str, gaps: dict[int, float], words: list[str]
) -> None:
    found = _segment_words(_ocr_item(text, gaps), 1000.0, 1000.0)
    assert [w.text for w in found] == words
    assert all(a.x1 <= b.x0 for a, b in zip(found, found[1:], strict=False))
    assert found[0].x0 == pytest.approx(0.1)


def test_words_group_into_lines_despite_different_heights() -> None:
    words = [
        Word("Total:", 0.1, 0.50, 0.2, 0.52),
        Word("1,500.00", 0.5, 0.495, 0.6, 0.525),
        Word("next", 0.1, 0.55, 0.2, 0.57),
    ]
    assert [line.text for line in group_lines(reversed(words))] == ["Total: 1,500.00", "next"]
    assert document_text(Document("image/png", [Page(1, 10, 10, b"", words, "ocr")])) == (
        "Total: 1,500.00\nnext"
    )


def test_a_word_between_two_rows_does_not_run_the_rows_into_one_line() -> None:
    # Rows 0.012 apart, 0.010 high; a word set between the first two (a superscript, a
    # slanted word of a stained scan) overlaps each by half its height or more.
    rows = [[Word(f"r{row}c{col}", 0.1 + 0.2 * col, 0.30 + 0.012 * row, 0.25 + 0.2 * col,
                  0.31 + 0.012 * row) for col in range(3)] for row in range(4)]
    between = Word("mid", 0.8, 0.304, 0.85, 0.318)
    words = [w for row in rows for w in row] + [between]
    assert [line.text for line in group_lines(words)] == [
        "r0c0 r0c1 r0c2 mid", "r1c0 r1c1 r1c2", "r2c0 r2c1 r2c2", "r3c0 r3c1 r3c2"]


def test_a_word_joins_the_line_it_stands_on_once_every_line_is_known() -> None:
    # An address window beside a taller column of labels: "GmbH" is printed a little
    # above "Muster", so its centre comes first and it met the column's line alone.
    words = [Word("Rechnungsnummer:", 0.555, 0.2160, 0.70, 0.2279),
             Word("2015738820", 0.736, 0.2160, 0.82, 0.2279),
             Word("GmbH", 0.180, 0.2214, 0.22, 0.2321),
             Word("Muster", 0.129, 0.2227, 0.17, 0.2334),
             Word("z.Hd.", 0.129, 0.2335, 0.16, 0.2442)]
    assert [line.text for line in group_lines(words)] == [
        "Rechnungsnummer: 2015738820", "Muster GmbH", "z.Hd."]


def test_a_word_printed_sideways_stays_out_of_the_rows_beside_it() -> None:
    # A margin note set vertically ("Copyright ...") is as tall as many rows.
    rows = [Word(f"row{n}", 0.2, 0.3 + 0.02 * n, 0.3, 0.312 + 0.02 * n) for n in range(6)]
    sideways = Word("Copyright", 0.02, 0.29, 0.035, 0.43)
    lines = [line.text for line in group_lines([*rows, sideways])]
    assert [f"row{n}" for n in range(6)] == [t for t in lines if t != "Copyright"]


def test_skewed_ocr_boxes_are_levelled_before_line_grouping() -> None:
    import math

    from servicetools.service.engine.ocr import _level, skew

    # Two lines of a scan turned by 1.5 degrees: the right end of the first line sits
    # as low as the left end of the second.
    slope = math.tan(math.radians(1.5))

    def box(x0: float, x1: float, y: float) -> list[list[float]]:
        return [[x0, y + x0 * slope], [x1, y + x1 * slope], [x1, y + x1 * slope + 12],
                [x0, y + x0 * slope + 12]]

    items = [[box(50, 450, 100), "Seller: Granite", 0.9], [box(650, 950, 100), "INV-1", 0.9],
             [box(50, 450, 120), "Customer: Sofia", 0.9], [box(650, 950, 120), "Due", 0.9]]
    assert math.degrees(skew(items)) == pytest.approx(1.5)
    words = [w for item in _level(items, 1000.0, 1000.0) for w in
             _segment_words(item, 1000.0, 1000.0)]
    assert [line.text for line in group_lines(words)] == [
        "Seller: Granite INV-1",
        "Customer: Sofia Due",
    ]


def _turned_pdf(angle: int) -> bytes:
    """A portrait page whose two lines of text are drawn turned by `angle` degrees (a
    landscape table set sideways), with a margin note drawn upright."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(612, 792))
    pdf.drawString(40, 20, "page 7")
    pdf.saveState()
    if angle == 180:  # head down, running leftwards from the right of the page
        pdf.translate(500, 100)
    elif angle > 0:  # reading upwards from the foot of the page
        pdf.translate(100, 100)
    else:  # reading downwards from the head of the page
        pdf.translate(500, 700)
    pdf.rotate(angle)
    pdf.drawString(0, 0, "STATE WISE COVERAGE BY PERIOD OF SURVEY")
    pdf.drawString(0, -20, "Kerala 5738 6633 8864")
    pdf.restoreState()
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


@pytest.mark.parametrize("angle", [90, -90, 180])
def test_a_page_drawn_turned_is_read_turned_back(angle: int) -> None:
    text = document_text(load_document(_turned_pdf(angle), "application/pdf"))
    lines = text.split("\n")
    # Whole words in reading order, each line across ("SURVEY", not "YEVRUS").
    assert "STATE WISE COVERAGE BY PERIOD OF SURVEY" in lines
    assert lines.index("STATE WISE COVERAGE BY PERIOD OF SURVEY") < lines.index(
        "Kerala 5738 6633 8864")


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_page_its_rotate_entry_shows_turned_is_read_as_shown_turned_back(rotate: int
                                                                          ) -> None:
    # Upright text on a page whose /Rotate turns it on the screen: head down at 180 was
    # read backwards ("ECIOVNI", ":latoT") before the engine turned such pages back.
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(595, 842))
    pdf.setPageRotation(rotate)
    for number, line in enumerate(["INVOICE", "Invoice No: INV-0042", "Total: 1,234.50 EUR"]):
        pdf.drawString(50, 540 - 20 * number, line)
    pdf.showPage()
    pdf.save()
    lines = document_text(load_document(buffer.getvalue(), "application/pdf")).split("\n")
    assert lines == ["INVOICE", "Invoice No: INV-0042", "Total: 1,234.50 EUR"]


@pytest.mark.parametrize("angle", [90, -90])
def test_a_few_words_drawn_turned_on_an_upright_page_read_as_they_run(angle: int) -> None:
    # Headings set up (or down) the columns of a wide table, on a page of upright text.
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(612, 792))
    for number in range(12):
        pdf.drawString(40, 600 - 16 * number, f"Precinct {number} 1200 340 55 17")
    for x, name in ((200, "Brian Calley"), (260, "Patrick Colbeck")):
        pdf.saveState()
        pdf.translate(x, 640 if angle > 0 else 720)
        pdf.rotate(angle)
        pdf.drawString(0, 0, name)
        pdf.restoreState()
    pdf.showPage()
    pdf.save()
    words = {w.text for w in load_document(buffer.getvalue(), "application/pdf").pages[0].words}
    assert {"Brian", "Calley", "Patrick", "Colbeck", "Precinct"} <= words
    assert not words & {"nairB", "yellaC"}


@pytest.mark.parametrize(("source", "texts", "folded"), [
    ("ocr", ["GERBANG", "ALAF", "Restäurants", "SDN", "BHD"], True),
    ("ocr", ["Künstlerische", "zuzüglich", "überweisen", "Summe"], False),
    ("text", ["Düsseldorf", "Summe"], False),
], ids=["one-accent-read-by-ocr", "a-language-with-diacritics", "a-text-layer"])
def test_a_lone_diacritic_of_a_scan_is_dropped(source: str, texts: list[str],
                                                folded: bool) -> None:
    from servicetools.service.engine.ocr import fold_lone_accents

    words = [Word(text, 0.1, 0.05 * n, 0.3, 0.05 * n + 0.02) for n, text in enumerate(texts)]
    pages = [Page(1, 10, 10, b"", words, source)]
    fold_lone_accents(pages)
    read = [w.text for w in pages[0].words]
    assert read == ([t.replace("ä", "a") for t in texts] if folded else texts)
    assert [(w.x0, w.y0) for w in pages[0].words] == [(w.x0, w.y0) for w in words]


def test_an_rgb_page_is_read_without_copying_its_pixels() -> None:
    # A 50-megapixel page is 143 MiB in RGB: a conversion that has nothing to do would
    # copy it (bench/page_memory.py); other modes are converted.
    from servicetools.service.engine.ocr import _rgb
    from servicetools.service.engine.pages import _to_rgb

    rgb = Image.new("RGB", (40, 30), "white")
    assert _to_rgb(rgb) is rgb and _rgb(rgb) is rgb
    gray = Image.new("L", (40, 30), 255)
    assert _to_rgb(gray).mode == "RGB" and _rgb(gray).mode == "RGB"


def _seen_by_the_ocr(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes of the pixel arrays the OCR engine is given (read or only detected),
    the OCR itself left out: a blank page reads nothing."""
    from servicetools.service.engine import ocr

    seen: list[tuple[int, ...]] = []

    def read(pixels: object) -> list[object]:
        seen.append(getattr(pixels, "shape", ()))
        return []

    monkeypatch.setattr(ocr, "_read", read)
    monkeypatch.setattr(ocr, "_boxes", read)
    return seen


def _image_bytes(size: tuple[int, int], fmt: str, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "white").save(out, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize(("fmt", "mode"), [("PNG", "RGB"), ("JPEG", "RGB"), ("JPEG", "L"),
                                           ("PNG", "RGBA"), ("PNG", "P")])
def test_a_large_image_reaches_the_ocr_and_the_page_image_at_the_ocrs_size(
        monkeypatch: pytest.MonkeyPatch, fmt: str, mode: str) -> None:
    # RapidOCR reads at most 2000 px a side: a 50-megapixel page made smaller by the OCR
    # was held at full size three times over (bench/page_memory.py). Now no array of the
    # full page is made, and the page's image is the one the OCR reads.
    from servicetools.service.engine.ocr import READING_SIDE, reading_size

    seen = _seen_by_the_ocr(monkeypatch)
    [page] = load_document(_image_bytes((4961, 3508), fmt, mode), f"image/{fmt.lower()}").pages
    assert seen and all(max(shape[:2]) <= READING_SIDE for shape in seen)
    assert seen[0][:2] == reading_size(4961, 3508)[::-1] == (1408, 1984)
    assert (page.width, page.height) == (4961.0, 3508.0)  # word boxes are fractions of it
    with Image.open(io.BytesIO(page.png)) as image:
        assert image.size == (1984, 1408) and image.getextrema() == ((255, 255),) * 3


def test_a_small_png_is_kept_as_it_came_and_read_at_its_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _seen_by_the_ocr(monkeypatch)
    data = _image_bytes((1240, 1754), "PNG")
    [page] = load_document(data, "image/png").pages
    assert page.png == data and seen[0] == (1754, 1240, 3)


def test_a_large_scanned_pdf_page_is_drawn_at_the_ocrs_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from reportlab.pdfgen import canvas

    from servicetools.service.engine.ocr import READING_SIDE

    seen = _seen_by_the_ocr(monkeypatch)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(2000, 1500))  # 4167 x 3125 px at 150 dpi
    pdf.rect(100, 100, 300, 200, fill=1)  # no text: a scan
    pdf.showPage()
    pdf.save()
    [page] = load_document(buffer.getvalue(), "application/pdf").pages
    assert page.source == "ocr" and (page.width, page.height) == (2000.0, 1500.0)
    assert seen and all(max(shape[:2]) <= READING_SIDE for shape in seen)
    with Image.open(io.BytesIO(page.png)) as image:
        assert image.size == (1984, 1504)  # reading_size(4167, 3125)


def test_the_ocrs_image_is_sampled_as_rapidocr_would_shrink_it() -> None:
    # The same pixels as OpenCV's resize in RapidOCR (within 1 of 255), so the same
    # words: PIL's resize averages and reads otherwise (a value fewer on sroie-dev).
    import cv2
    import numpy as np

    from servicetools.service.engine.ocr import reduced

    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, (2300, 3100, 3), dtype=np.uint8)
    pixels[::40] = 0  # lines of ink, some thin enough for sampling to show
    ours = np.asarray(reduced(Image.fromarray(pixels)), dtype=np.int16)
    theirs = cv2.resize(pixels, (1984, 1472)).astype(np.int16)
    assert ours.shape == theirs.shape and np.abs(ours - theirs).max() <= 1


def test_a_transparent_image_is_read_on_white_paper() -> None:
    from servicetools.service.engine.pages import _to_rgb

    image = Image.new("RGBA", (4, 1), (0, 0, 0, 0))
    image.putpixel((1, 0), (0, 0, 0, 255))
    image.putpixel((2, 0), (0, 0, 0, 128))
    opaque = _to_rgb(image)
    assert [opaque.getpixel((x, 0)) for x in range(4)] == [
        (255, 255, 255), (0, 0, 0), (127, 127, 127), (255, 255, 255)]


def _cut_down(data: bytes, box: tuple[float, float, float, float]) -> bytes:
    """The PDF with every page's crop box set to `box` (points, from the page's foot)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    for page in document:
        page.set_cropbox(*box)
    out = io.BytesIO()
    document.save(out)
    document.close()
    return out.getvalue()


def test_a_page_cut_down_by_its_crop_box_is_read_as_a_viewer_shows_it() -> None:
    # PDFium draws the crop box; pdfplumber's words were fractions of the media box:
    # each word stood in the image away from its ink, and text the crop box hides (a
    # print file's slug line) was read.
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(595, 842))
    pdf.setFont("Helvetica", 14)
    pdf.drawString(120, 650, "INVOICE")
    pdf.drawString(120, 620, "Total: 1,234.50 EUR")
    pdf.drawString(20, 815, "SLUG-LINE-HIDDEN")
    pdf.showPage()
    pdf.save()
    [page] = load_document(_cut_down(buffer.getvalue(), (100, 200, 500, 700)),
                           "application/pdf").pages
    assert (page.width, page.height) == pytest.approx((400, 500))
    assert [w.text for w in page.words] == ["INVOICE", "Total:", "1,234.50", "EUR"]
    image = Image.open(io.BytesIO(page.png)).convert("L")
    assert image.width / image.height == pytest.approx(0.8, abs=0.01)
    for word in page.words:
        box = image.crop((int(word.x0 * image.width), int(word.y0 * image.height),
                          int(word.x1 * image.width) + 1, int(word.y1 * image.height) + 1))
        assert box.getextrema()[0] < 100, f"no ink under {word.text}"
    assert page.words[0].x0 == pytest.approx(20 / 400, abs=0.01)


@pytest.mark.parametrize("ruled", [False, True], ids=["unruled", "ruled"])
def test_a_table_on_a_page_cut_down_by_its_crop_box_reads_as_on_the_whole_page(
        ruled: bool) -> None:
    from servicetools.service.engine.candidates import found_tables

    from ..support.engine_documents import REGIONS, grid, table_pdf, tables_of, target

    whole = table_pdf((700, REGIONS), ruled=ruled)
    cut = load_document(_cut_down(whole, (30, 560, 580, 830)), "application/pdf")
    assert found_tables(cut), "camelot found no table on the cut-down page"
    cells = tables_of(cut, target("Region", "Sales", "Staff", "Stores"))["t-table"]
    assert grid(cells) == {0: [list(row) for row in REGIONS[1:]]}
