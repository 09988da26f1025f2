"""The review's PDF is legible: no near-empty page, no table below 8 pt, the option tables turned to fit the page.

Measured with poppler's ``pdftotext -bbox`` (each word's box on the page). A page's fill is the height from its first
to its last body word (inside the 0.7 in top and bottom margins, so without the running header and footer) over
the body's height. A word's box is the font's ascent + descent: 1.164 em for DejaVu Sans, LibreOffice's substitute
for Calibri (0.928 + 0.236, the font's hhea metrics), so 8-pt text gives 9.31-pt boxes.

Before this layout (main at 47c2921) the README example printed 19 pages, five of them under 27% full (Costs 16%
and 16%, Fleet by quarter 10%), and Like for like and Levers at 7.0 pt (main's Latency sheet, added since, at 5.9 pt).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from openpyxl import Workbook
from test_export import HAND, review_of, write_scenario
from workbook_support import require_libreoffice

from planner.export import render
from planner.export.print_layout import (
    MAX_TURNED_OPTIONS,
    MIN_LAST_PAGE,
    PAGE_BODY_PT,
    SHEET,
    TURNED,
    break_pages,
    print_scale,
)
from planner.export.tables import options_table, sensitivity_table
from planner.export.xlsx import LIVE_WIDTH, render_print_xlsx
from planner.export.xlsx_cells import INDENT_CHARS, LINE_PT, wrapped_lines
from planner.io.libreoffice import convert

#: One worker reviews and prints the example once (pyproject: --dist loadgroup); without a group each worker that
#: ran one of its tests built the module's fixtures again.
pytestmark = pytest.mark.xdist_group("test_export_review")  # the group of test_export_review: one README review

#: DejaVu Sans ascent + descent, em (hhea: ascender 1901, descender -483, units per em 2048).
BOX_PER_PT = (1901 + 483) / 2048
#: Least share of a page's body a page fills: the README example's review (its shortest page is a whole 8-row table,
#: Latency data, at 27%), and any review (the hand scenario's two options leave short tables, Like for like 4 rows
#: at 22%); a lone row or two prints at 3-6%.
MIN_FILL = {"example": 0.25, "hand": 0.20, "long": 0.20}
MARGIN_PT = 0.7 * 72

#: The hand scenario's two options under names of 45-46 characters, as reviews name them ("Llama-3.3-70B, H200
#: rented (today)", 34, in a trial): no hyphen, so that each prints as its words.
LONG_NAMES = ("H100 SXM rented on demand from the usual cloud", "H100 SXM bought and colocated in our own rack")


#: Word boxes (ascent + descent, ``BOX_PER_PT``) are taller than LibreOffice's line spacing: consecutive lines of a
#: paragraph overlap by 11% of a box on the README example's Summary; text printed over other text by far more.
MAX_LINE_OVERLAP = 0.25


def long_names_review(tmp_path: Path):
    """test_export.HAND with ``LONG_NAMES``: the rented option (the first) is recommended and cheapest throughout."""
    text = HAND.replace('"H100 rented"', f'"{LONG_NAMES[0]}"')
    return review_of(write_scenario(tmp_path, text, bought=LONG_NAMES[1], name="long.toml"))


def words(pdf: Path) -> list[tuple[float, list[tuple[float, float, float, float, str]]]]:
    """Each page's height and all its words as (left, top, right, bottom, text), from pdftotext -bbox."""
    if shutil.which("pdftotext") is None:
        pytest.skip("poppler-utils (pdftotext) not installed")
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    box = r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
    return [
        (
            float(re.search(r'height="([\d.]+)"', page).group(1)),
            [(float(a), float(b), float(c), float(d), w) for a, b, c, d, w in re.findall(box, page)],
        )
        for page in html.split("<page ")[1:]
    ]


def pages(pdf: bytes, tmp_path) -> list[tuple[float, list[tuple[float, float, str]]]]:
    """Each page's height and its body words (inside the top and bottom margins) as (top, bottom, text)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "r.pdf"
    path.write_bytes(pdf)
    return [
        (height, [(t, b, w) for _, t, _, b, w in page if t > MARGIN_PT and b < height - MARGIN_PT])
        for height, page in words(path)
    ]


def summary_pages(pdf: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """The words of the pages the Summary sheet prints (its running header: "Summary (a snapshot; ...")."""
    heads = [(page, {w for *_, bottom, w in page if bottom < MARGIN_PT}) for _, page in words(pdf)]
    return [page for page, head in heads if {"Summary", "snapshot;"} <= head]


@pytest.fixture(scope="module")
def example(readme_example_review):
    """The README's scenario, reviewed once (conftest.readme_example_review, shared with the other module of the group)."""
    return readme_example_review


@pytest.fixture(scope="module")
def printed_pdfs(example, tmp_path_factory) -> dict[str, Path]:
    """The README example's PDF and a small hand scenario's (test_export.HAND, two options), as render(review, "pdf")
    makes them (planner.export.pdf.render_pdf: the print xlsx converted by LibreOffice), both in one soffice call
    (~1.5 s CPU of LibreOffice's start saved on the second)."""
    require_libreoffice()
    tmp = tmp_path_factory.mktemp("print")
    reviews = {"example": example, "hand": review_of(write_scenario(tmp)), "long": long_names_review(tmp)}
    sources = []
    for name, review in reviews.items():
        sources.append(tmp / f"{name}.xlsx")
        sources[-1].write_bytes(render_print_xlsx(review))
    return dict(zip(reviews, convert(sources, "pdf", tmp / "pdf"), strict=True))


@pytest.fixture(scope="module")
def printed(printed_pdfs, tmp_path_factory):
    """The PDFs as pages (``pages``)."""
    tmp = tmp_path_factory.mktemp("pages")
    return {name: pages(pdf.read_bytes(), tmp / name) for name, pdf in printed_pdfs.items()}


@pytest.mark.libreoffice
class TestPrintedPages:
    @pytest.mark.parametrize("name", ["example", "hand"])
    def test_no_page_is_near_empty(self, printed, name):
        """Every page's body runs over 25% of its height (README example: 27% at least, 10% before), 20% for the hand
        scenario (22% at least)."""
        for i, (height, body) in enumerate(printed[name], 1):
            assert body, f"{name} page {i} is blank"
            fill = (max(b for _, b, _ in body) - min(t for t, _, _ in body)) / (height - 2 * MARGIN_PT)
            assert fill >= MIN_FILL[name], f"{name} page {i}: {fill:.0%} of the page"

    def test_every_page_is_titled_numbered_and_landscape(self, printed_pdfs):
        """The PDF of the README's review: each page carries the title and 'page N of M', all landscape, and no
        number is too wide for its column (a spreadsheet prints ### then: the Options sheet's annual cost did)."""
        if shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None:
            pytest.skip("poppler-utils (pdftotext, pdfinfo) not installed")
        pdf = printed_pdfs["example"]
        info = subprocess.run(["pdfinfo", "-l", "100", str(pdf)], capture_output=True, text=True).stdout
        sizes = [line.split(":", 1)[1] for line in info.splitlines() if line.startswith("Page") and "size" in line]
        pages = len(sizes)
        assert pages >= 6 and all("841.89 x 595.3" in s for s in sizes)  # A4 landscape
        for i in range(1, pages + 1):
            text = subprocess.run(
                ["pdftotext", "-f", str(i), "-l", str(i), str(pdf), "-"], capture_output=True, text=True
            ).stdout
            assert "Chat assistant: FY2027 inference budget" in text and f"page {i} of {pages}" in text, i
            assert "###" not in text, f"page {i}: a number wider than its column"

    @pytest.mark.parametrize("name", ["example", "hand"])
    def test_no_text_prints_below_8_pt(self, printed, name):
        """Every body word's box is at least 8 pt x 1.164 (README example: 8.2 pt smallest; 7.0 pt before)."""
        for i, (_, body) in enumerate(printed[name], 1):
            smallest = min(b - t for t, b, _ in body)
            assert smallest / BOX_PER_PT >= 8.0 * 0.99, f"{name} page {i}: {smallest / BOX_PER_PT:.1f} pt"


class TestLongOptionNames:
    """Option names of 35-50 characters wrap within their rows on the Summary (trial 22 F8: "Llama-3.3-70B, H200
    rented (today)" printed as "-3.3-70B, H200 rented (today)" in the LIVE box, and its second line in the
    Sensitivity table over the next row's text)."""

    def test_the_summary_rows_grow_to_hold_a_long_name_wrapped(self, tmp_path):
        """The LIVE box's cheapest option (column E, 24 characters: "H100 SXM rented on demand" / "from the usual
        cloud") wraps in a row of two lines, 29 pt; each Sensitivity row's "Cheapest option there" (24 less the
        indent: "H100 SXM rented on" / "demand from the usual" / "cloud") in three, 42 pt. Before: no wrap in the
        LIVE box, and rows without a height (one line, 14.5 pt, in LibreOffice)."""
        review = long_names_review(tmp_path)
        assert review.recommended.option.name == LONG_NAMES[0]
        path = tmp_path / "long.xlsx"
        path.write_bytes(render_print_xlsx(review))
        ws = openpyxl.load_workbook(path)["Summary"]
        label = next(c for row in ws.iter_rows() for c in row if c.value == "Cheapest option at the prices on Options")
        live = ws.cell(row=label.row, column=label.column + 1)
        assert live.column_letter == "E" and ws.column_dimensions["E"].width == LIVE_WIDTH == 24
        assert live.alignment.wrap_text and live.alignment.horizontal == "right"
        assert wrapped_lines(LONG_NAMES[0], LIVE_WIDTH) == 2
        assert ws.row_dimensions[label.row].height == LINE_PT * 2 + 3 == 29
        cheapest = [row[4] for row in ws.iter_rows() if row[4].value == LONG_NAMES[0]]
        assert len(cheapest) == len(sensitivity_table(review).rows) == 3
        assert wrapped_lines(LONG_NAMES[0], LIVE_WIDTH - INDENT_CHARS) == 3
        for cell in cheapest:
            assert cell.alignment.wrap_text and ws.row_dimensions[cell.row].height == LINE_PT * 3 + 3 == 42

    @pytest.mark.libreoffice
    @pytest.mark.parametrize("name", ["example", "hand", "long"])
    def test_no_two_words_overlap_on_the_summary(self, printed_pdfs, name):
        """No word on the Summary's pages prints over another: two words side by side overlap by at most
        ``MAX_LINE_OVERLAP`` of the shorter box's height (the lines of a paragraph: 11%; a 34-character name's second
        line over the next Sensitivity row's first, in the trial: 84%)."""
        pages = summary_pages(printed_pdfs[name])
        assert len(pages) >= 2
        for i, page in enumerate(pages, 1):
            page = sorted(page, key=lambda w: w[1])
            for k, (left, top, right, bottom, text) in enumerate(page):
                for other in page[k + 1 :]:
                    if other[1] >= bottom:
                        break
                    if min(right, other[2]) - max(left, other[0]) > 1:  # side by side: over 1 pt in common
                        share = (min(bottom, other[3]) - other[1]) / min(bottom - top, other[3] - other[1])
                        assert share <= MAX_LINE_OVERLAP, f"{name} page {i}: {text!r} on {other[4]!r}, {share:.0%}"

    @pytest.mark.libreoffice
    def test_a_long_name_prints_whole_in_the_live_box(self, printed_pdfs):
        """The LIVE box's cheapest option prints as every word of its name, in order, right of its label and above
        "Its monthly cost" (before: cut off on the left, its first words missing)."""
        page = summary_pages(printed_pdfs["long"])[0]
        label = "Cheapest option at the prices on Options".split()
        texts = [w[4] for w in page]
        at = next(k for k in range(len(texts)) if texts[k : k + len(label)] == label)
        first, last = page[at], page[at + len(label) - 1]
        below = next(w for w in page if w[4] == "Its" and abs(w[0] - first[0]) < 1 and w[1] > first[1])
        value = sorted(
            (w for w in page if w[0] > last[2] and first[1] - 1 < w[1] < below[1]), key=lambda w: (w[1], w[0])
        )
        assert " ".join(w[4] for w in value) == LONG_NAMES[0]


class TestOptionsCompared:
    def test_the_option_tables_print_turned_and_the_screen_sheets_are_hidden(self, example, tmp_path):
        """The printed copy shows Options compared (a column per option, the monthly cost as on Options) and hides
        the five sheets it replaces; the screen xlsx keeps them visible."""
        path = tmp_path / "p.xlsx"
        path.write_bytes(render_print_xlsx(example))
        book = openpyxl.load_workbook(path)
        assert {n for n in TURNED if book[n].sheet_state == "hidden"} == set(TURNED)
        ws = book[SHEET]
        assert ws.sheet_state == "visible"
        table = options_table(example)
        names = [r[[c.key for c in table.columns].index("option")] for r in table.rows]
        assert [c.value for c in ws[2][1 : 1 + len(names)]] == names
        row = next(r for r in ws.iter_rows() if r[0].value == "Monthly cost")
        monthly = [r[[c.key for c in table.columns].index("monthly_usd")] for r in table.rows]
        for cell, m in zip(row[1 : 1 + len(names)], monthly, strict=True):
            assert cell.value == pytest.approx(m, rel=1e-12) if m is not None and m == m else cell.value is None
        screen = tmp_path / "s.xlsx"
        screen.write_bytes(render(example, "xlsx"))
        assert all(openpyxl.load_workbook(screen)[n].sheet_state == "visible" for n in TURNED)

    def test_more_than_eight_options_print_as_the_screen_tables(self):
        """Turned, nine options would run two pages wide: MAX_TURNED_OPTIONS is 8."""
        assert MAX_TURNED_OPTIONS == 8


class TestBreakPages:
    def test_a_short_last_page_shares_the_rows_of_the_one_before(self):
        """40 rows of 16 pt at 100% where a page holds 28: pages of 28 and 12 (43%), no change; 30 rows: 28 and 2
        (7%) become 15 and 15."""
        for rows, want in ((40, [28]), (30, [15])):
            ws = Workbook().active
            ws.sheet_properties.pageSetUpPr.fitToPage = False
            ws.page_setup.scale = 100
            for r in range(1, rows + 1):
                ws.cell(row=r, column=1, value=r)
                ws.row_dimensions[r].height = PAGE_BODY_PT / 28.5
            assert break_pages(ws) == 2
            assert [b.id for b in ws.row_breaks.brk] == want
            last = rows - want[0]
            assert last / 28.5 >= MIN_LAST_PAGE

    def test_a_sheet_just_over_a_page_prints_one_page_tall_when_that_keeps_8_pt(self):
        """31 rows where a page holds 28, fitted to width at 100%: one page tall (scale 28/31 = 90% > 73%)."""
        ws = Workbook().active
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.column_dimensions["A"].width = 20
        for r in range(1, 32):
            ws.cell(row=r, column=1, value=r)
            ws.row_dimensions[r].height = PAGE_BODY_PT / 28.5
        assert print_scale(ws) == 1.0
        assert break_pages(ws) == 1 and ws.page_setup.fitToHeight == 1 and not ws.row_breaks.brk
