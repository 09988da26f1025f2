"""Trial 13's printing and appearance findings (/tmp/trial13/findings.md, F1-F3, F7-F10, F14, F15, F17): what the
written what-if workbook and the functions example hold (openpyxl: widths, wrapping, print titles, formats, chart
ranges) and, where LibreOffice is installed, what its printed pages say (``soffice --convert-to pdf``, then
``pdftotext -layout`` per page).

Widths are in characters of the default font (Calibri 11); a bold 11-pt heading is taken as 1.1 characters a letter
and the 14-pt title as 14 / 11 x 1.1 (writer.STYLES), the measure ``_fits`` applies.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from openpyxl.utils import get_column_letter
from workbook_support import page_body, require_libreoffice

from planner.io.libreoffice import convert
from planner.workbook.build import build_whatif
from planner.workbook.layout import LOAD_SHEET, WORKBOOK_FILE
from planner.workbook.load_sheet import ENGINE_ROW_LABEL, ENGINE_TABLE_TITLE
from planner.workbook.printing import column_pages, title_columns
from planner.workbook.writer import write_workbook

#: One worker builds this module's workbook and its PDF (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_trial13_print")

BOOL_FORMAT = '"TRUE";"TRUE";"FALSE"'


@pytest.fixture(scope="module")
def spec():
    return build_whatif()  # with the Load sheet (F1, F2): ~8 s of serving simulation


@pytest.fixture(scope="module")
def written(spec, tmp_path_factory) -> Path:
    return write_workbook(spec, tmp_path_factory.mktemp("trial13") / WORKBOOK_FILE)


@pytest.fixture(scope="module")
def wb(written):
    return openpyxl.load_workbook(written)


@pytest.fixture(scope="module")
def pages(written, tmp_path_factory) -> list[str]:
    """The printed pages' text, as LibreOffice prints the written workbook (pdftotext -layout, one page each)."""
    require_libreoffice()
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) not installed")
    (pdf,) = convert(written, "pdf", tmp_path_factory.mktemp("trial13-pdf"))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return [page_body(p) for p in text.split("\f")[:-1]]  # without the header and footer every page carries


def _row_of(ws, text: str, col: str = "A") -> int:
    return next(c.row for c in ws[col] if c.value == text)


class TestF1LoadEngineRowPrintsWhole:
    """Load!B22, "50 values, rows 130-179", right-aligned in the 14-wide Used column, printed as "ues, rows 130-179"."""

    def test_the_used_and_now_cells_wrap_on_a_two_line_row(self, wb):
        ws = wb[LOAD_SHEET]
        r = _row_of(ws, ENGINE_ROW_LABEL)
        for col in "BC":
            assert ws[f"{col}{r}"].alignment.wrap_text, col
        longest = max(len(w) for w in ws[f"B{r}"].value.split())  # "values," or "130-181": no word is cut
        assert longest < ws.column_dimensions["B"].width
        assert ws.row_dimensions[r].height >= 2 * 13.5

    def test_it_prints_whole(self, pages):
        line = next(p for p in pages if ENGINE_ROW_LABEL in p).split(ENGINE_ROW_LABEL)[1]
        assert re.match(r"\s+53 values, rows", line), line[
            :60
        ]  # 50 before h-trt's two attention-DP gate fields, 53 with fp8_ds_mla_cache


class TestF2LoadEngineTableHasAHeaderOnEveryPage:
    """The Load sheet's last 4 engine-parameter rows printed alone on a page, with no title and no column header."""

    def test_split_into_parts_of_a_page_each_under_the_subtitle_and_header(self, wb):
        from planner.workbook.load_sheet import ENGINE_ROWS_PER_PAGE

        ws = wb[LOAD_SHEET]
        starts = [c.row for c in ws["A"] if str(c.value).startswith(ENGINE_TABLE_TITLE)]
        assert len(starts) == 2  # 50 parameters, at most 30 a page: two parts of 25
        breaks = {b.id for b in ws.row_breaks.brk}
        ends = [s - 1 for s in starts]
        assert set(ends) <= breaks  # each part starts a page
        last = max(c.row for c in ws["D"] if c.value is not None)
        for start, end in zip(starts, [*ends[1:], last], strict=True):
            assert ws[f"B{start + 1}"].value == "Used" and ws[f"C{start + 1}"].value == "Assumptions now"
            assert end - (start + 1) <= ENGINE_ROWS_PER_PAGE

    def test_every_printed_page_of_the_table_has_its_header(self, pages):
        """LibreOffice's pages: each one listing engine parameters (sparse_mla_kernel, ...) names the columns."""
        rows = re.compile(r"^\s*(pipeline_seqs_per_micro_batch|sparse_mla_prefill_max_heads)\s+\S+\s+\S+\s+yes", re.M)
        last = [p for p in pages if rows.search(p)]  # the Load table's last rows (Assumptions' have no "yes")
        assert len(last) == 1 and ENGINE_TABLE_TITLE in last[0]
        table = [p for p in pages if ENGINE_TABLE_TITLE in p]
        assert len(table) == 2
        for p in table:
            assert "Assumptions now" in p and "Matches" in p


class TestF3SwitchesShowTrueFalse:
    """Six of Assumptions' eight TRUE/FALSE switches printed 1 / 0 in LibreOffice: a General-format boolean shows as
    1 / 0 where "TRUE" does not fit before a filled next cell (their Unit "TRUE/FALSE"), TRUE / FALSE where it may
    overflow into an empty one (kv_group_padding's and kv_heads_any_split's Unit was blank). Every boolean cell
    now has the format Precisions' KV-cache column had, which reads TRUE / FALSE either way."""

    def test_every_boolean_cell_has_the_true_false_format(self, wb):
        seen = set()
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for c in row:
                    if isinstance(c.value, bool):
                        assert c.number_format == BOOL_FORMAT, (ws.title, c.coordinate)
                        seen.add(ws.title)
        assert seen == {"Assumptions", "Load", "Precisions"}

    def test_the_load_sheets_now_column_has_it_too(self, wb):
        ws = wb[LOAD_SHEET]
        r = _row_of(ws, "kernel_curves")
        assert ws[f"B{r}"].value is True and ws[f"C{r}"].number_format == BOOL_FORMAT

    def test_every_switch_names_its_unit(self, wb):
        ws = wb["Assumptions"]
        # each engine's column holds the switch (folded at the right of the Value column, which reads the chosen one)
        units = {ws[f"C{c.row}"].value for col in ("E", "F", "G", "H") for c in ws[col] if isinstance(c.value, bool)}
        assert units == {"TRUE/FALSE"}

    def test_they_print_true_or_false(self, pages):
        assumptions = "".join(p for p in pages if p.lstrip().startswith("Assumptions: the vllm engine profile"))
        for name in ("use_engine_visible_memory", "kv_group_padding", "kernel_curves", "fp8_kv_at_16_bit_rate"):
            value = re.search(rf"^{name}\s+(\S+)", assumptions, re.M).group(1)
            assert value in ("TRUE", "FALSE"), (name, value)


def _shown_text_cells(ws, header: str):
    """The cells of the column headed ``header`` (row 1) that hold text, and that column's width."""
    col = next(c.column_letter for c in ws[1] if c.value == header)
    assert not ws.column_dimensions[col].hidden, header
    return [c for c in ws[col][1:] if isinstance(c.value, str)], ws.column_dimensions[col].width


class TestF10PriceQuotesPrintWhole:
    """The GPUs sheet printed "median of 2 quotes: Modal 2.50 (2026-05-07), Hyperstack 1." (A100 SXM 80GB): the Price
    provider column was 48 wide (catalog_sheets.MAX_TEXT_WIDTH) for a 75-character text, cut at the next column."""

    def test_each_quote_fits_its_column_or_wraps_on_a_row_tall_enough(self, wb):
        ws = wb["GPUs"]
        for header in ("Price provider", "Reserved quote (provider, date)", "Spot quote (provider, date)"):
            cells, width = _shown_text_cells(ws, header)
            assert cells, header
            for c in cells:
                if len(c.value) + 1 > width:
                    lines = math.ceil(len(c.value) * 1.1 / width)
                    assert c.alignment.wrap_text and ws.row_dimensions[c.row].height >= 13.5 * lines, c.coordinate

    def test_the_median_quotes_print_whole(self, pages):
        from planner.catalog import default_catalog

        quotes = [g.price("on-demand").provider for g in default_catalog().gpus if g.price("on-demand")]
        medians = [q for q in quotes if q.startswith("median of")]
        assert len(medians) >= 5  # A100 SXM 80GB, H100 SXM, H200, B200, RTX A6000, ...
        text = "".join(pages)
        words = set(text.split())
        for q in medians:
            # since trial 17 a median lists up to 4 quotes (H100: 170 characters), more than the 76 a catalog column
            # grows to, so it wraps (the catalog sheets' rule) and pdftotext -layout interleaves its lines with the
            # next columns': every word of it still prints, the last date included (nothing cut)
            assert all(w in words for w in q.split()), q

    def test_every_shown_catalog_text_fits_or_wraps(self, wb):
        """The rule on every catalog table (catalog_sheets._table_sheet): a shown text column grows to its longest
        text up to 76 characters; a longer text wraps on a row tall enough."""
        checked = 0
        for title in ("GPUs", "Models", "Precisions"):
            ws = wb[title]
            (table,) = ws.tables.values()  # its rows: the footnote below is a merged note (F7)
            for row in ws[table.ref][1:]:
                for c in row:
                    width = ws.column_dimensions[c.column_letter].width
                    if c.data_type != "s" or ws.column_dimensions[c.column_letter].hidden:
                        continue
                    checked += 1
                    if len(c.value) + 1 > width:
                        assert c.alignment.wrap_text, (title, c.coordinate)
                        assert ws.row_dimensions[c.row].height >= 13.5 * math.ceil(len(c.value) * 1.1 / width)
        assert checked > 300


#: The sheets printed over several pages wide (planner.workbook.printing.legible_print), their repeated columns.
SPLIT = {"Ranges": "$A:$B", "Calc": "$A:$B", "GPUs": "$A:$A", "Models": "$A:$A", "AllReduce": "$A:$C"}


def _chars(cell, per_letter: float = 1.0) -> float:
    """The printed width of a cell's text in characters of the default font: ``per_letter`` a letter (writer.WRAPPED
    counts 1.1 for the lines of a wrapped text), a bold one 1.1 times that, a 14-pt one 14/11 of that."""
    size = cell.font.sz or 11
    return len(cell.value) * (size / 11) * (1.1 if cell.font.b else 1.0) * per_letter


class TestF7ContinuationPagesShowNoBrokenText:
    """Continuation pages of the wide sheets printed "Ranges: how far off the baseli", "Calc: every step of the
    capacity model, one colu", an introduction from mid-word and the GPUs footnote cut at column A's edge: text in
    the repeated title columns ran on under the columns of the first page only, and merged notes across a column
    break printed half lines on each page. Ranges' factor table printed the note's words around a value ("on",
    "at TP", "-parameter models": ranges.WHERE) as two columns of cells."""

    def test_the_wide_sheets_and_their_repeated_columns(self, wb):
        split = {ws.title: ws.print_title_cols for ws in wb.worksheets if not ws.sheet_properties.pageSetUpPr.fitToPage}
        assert split == SPLIT

    def test_no_merged_cell_runs_across_a_page_or_out_of_the_title_columns(self, wb):
        for title in SPLIT:
            ws = wb[title]
            titles = set(title_columns(ws))
            page_of = {j: i for i, page in enumerate(column_pages(ws)) for j, _ in page if j not in titles}
            for rng in ws.merged_cells.ranges:
                cols = {j for j in range(rng.min_col, rng.max_col + 1) if j in titles or j in page_of}
                assert cols <= titles or not cols & titles, (title, str(rng))
                assert len({page_of[j] for j in cols - titles}) <= 1, (title, str(rng))

    def test_text_in_the_title_columns_stays_within_them(self, wb):
        """Every text in a repeated column fits the title columns from its cell on (the next ones empty), or wraps
        within them on a row tall enough: printed whole on every page across."""
        checked = 0
        for title in SPLIT:
            ws = wb[title]
            titles = title_columns(ws)
            merged = {(m.min_row, m.min_col): m for m in ws.merged_cells.ranges}
            for row in ws.iter_rows(max_col=titles[-1]):
                for c in row:
                    if c.data_type != "s" or not c.value:
                        continue
                    checked += 1
                    m = merged.get((c.row, c.column))
                    last = m.max_col if m else c.column
                    if not c.alignment.wrap_text:  # may run on into the empty title columns beside it
                        last = max(
                            [last] + [j for j in titles if j > last and all(ws.cell(c.row, k).value is None
                                                                           for k in range(c.column + 1, j + 1))]
                        )  # fmt: skip
                    width = sum(ws.column_dimensions[get_column_letter(j)].width for j in range(c.column, last + 1))
                    if c.alignment.wrap_text:
                        lines = math.ceil(_chars(c, 1.1) / width)
                        line = 13.5 * (c.font.sz or 11) / 11
                        assert lines == 1 or ws.row_dimensions[c.row].height >= line * lines, (title, c.coordinate)
                    else:
                        assert _chars(c) <= width, (title, c.coordinate, c.value)
        assert checked > 500

    def test_the_titles_and_introductions_print_whole(self, pages):
        titles = {
            "Ranges": "Ranges: how far off the baseline's time predictions",
            "Calc": "Calc: every step of the model",
            "AllReduce": "AllReduce: vLLM's measured",
        }
        for name, text in titles.items():
            on = [p for p in pages if p.lstrip().startswith(name + ":")]
            # two pages across; Calc repeats its title rows down, Ranges and AllReduce their headers only
            assert len(on) >= (4 if name == "Calc" else 2), name
            assert all(text in p.splitlines()[0] for p in on), name
        footnote = [p for p in pages if "Memory in GB (1 GB" in p]
        assert footnote and all("(1 GB = 1e9 B; cells hold exact bytes)" in p for p in footnote)

    def test_no_ranges_cell_holds_a_note_fragment(self, wb, spec):
        from planner.accuracy import ranges

        fragments = {x for pair in ranges.WHERE.values() for x in pair if x}
        cells = {c.value for row in wb["Ranges"].iter_rows() for c in row if c.data_type == "s"}
        assert fragments and not fragments & cells
        # the words are in the Not covered formulas instead: "no held-out figures at TP "&B12&""
        formulas = [
            c.value for ref, c in spec.sheet("Ranges").cells.items() if ref[0] == "F" and "held-out" in str(c.value)
        ]
        assert any('"at TP "' in f for f in formulas)


class TestF8LookupKeyHasItsRow:
    """Ranges!C11, "gpu|H100 SXM 80GB" in the 13-wide Lookup key column, wrapped onto C12's "tp|4"."""

    def test_the_key_fits_or_its_row_is_tall_enough_for_the_longest_gpu(self, wb):
        from planner.catalog import default_catalog

        ws = wb["Ranges"]
        r = next(c.row for c in ws["A"] if c.value == "gpu")  # the query's GPU row, above the factor table's
        longest = max((g.name for g in default_catalog().gpus), key=len)  # RTX PRO 6000 Blackwell Server Edition
        key_lines = math.ceil(len("gpu|" + longest) * 1.1 / ws.column_dimensions["C"].width)
        name_lines = math.ceil(len(longest) * 1.1 / ws.column_dimensions["B"].width)
        assert ws.row_dimensions[r].height >= 13.5 * max(key_lines, name_lines)
        assert len("gpu|H100 SXM 80GB") * 1.1 <= ws.column_dimensions["C"].width  # the baseline's on one line

    def test_the_baselines_key_prints_on_one_line(self, pages):
        assert any(re.search(r"H100 SXM 80GB\s+gpu\|H100 SXM 80GB\s+15", p) for p in pages)


class TestF9CoverageSourcesBesideTheirValue:
    """The Coverage table's second page repeated only column A (Dimension): "gpu / gpu / gpu" beside source lists."""

    def test_dimension_and_value_repeat(self, wb):
        assert wb["Ranges"].print_title_cols == "$A:$B"

    def test_the_sources_page_names_each_gpu(self, pages):
        sources = [p for p in pages if "Sources" in p and "Coverage: held-out figures per region" in p]
        assert sources
        assert any(re.search(r"^gpu\s+H100 SXM 80GB\s+\S*trtllm", p, re.M) for p in sources)


@pytest.fixture(scope="module")
def recalculated(spec, tmp_path_factory):
    """The workbook recalculated in LibreOffice as shipped, and with Compare with model blank (a GQA model's sibling:
    itself)."""
    from workbook_support import recalculate_many, with_inputs

    require_libreoffice()
    books = {"shipped": spec, "no_compare": with_inputs(spec, {"compare_model": None})}
    return recalculate_many(books, tmp_path_factory.mktemp("trial13-values"))


def _charts(wb) -> dict:
    return {c.title.tx.rich.p[0].r[0].t: c for c in wb["Charts"]._charts}


def _inputs_value(book, label: str):
    ws = book["Inputs"]
    return next(r[1].value for r in ws.iter_rows(max_col=2) if r[0].value == label)


class TestF17BatchChartsReachTheMaxBatch:
    """ "TPOT vs batch" and "Throughput vs batch" stopped at batch 64 (the Sweeps rows are powers of two; 128 does not
    fit) while the Inputs quote TPOT and throughput at max batch 117; the roofline legend said "batch 1 .. 1,024";
    with no compare model the context chart drew the model twice under one name."""

    def test_the_batch_charts_read_the_sweep_and_its_max_batch_row(self, wb, spec):
        from planner.workbook.sweeps import BATCH_SWEEP

        last = 4 + len(BATCH_SWEEP)  # rows 4 .. 14 the sweep, 15 the max batch
        sweeps = spec.sheet("Sweeps")
        assert sweeps.cells[f"A{last}"].value == "=Calc!$C$" + str(_calc_row(spec, "served_batch"))
        for title in ("TPOT vs batch", "Throughput vs batch"):
            chart = _charts(wb)[title]
            (series,) = chart.series
            assert series.xVal.numRef.f.replace("'", "") == f"Sweeps!$B$4:$B${last}", title
            assert re.fullmatch(rf"Sweeps!\$[A-Z]+\$4:\$[A-Z]+\${last}", series.yVal.numRef.f.replace("'", ""))
            assert chart.display_blanks == "span", title  # the line runs on over the #N/A rows to the max batch

    def test_the_charted_max_batch_is_the_inputs_operating_point(self, recalculated):
        book = recalculated["shipped"]
        ws = book["Sweeps"]
        header = {c.value: c for c in next(r for r in ws.iter_rows() if r[0].value == "Batch")}
        row = next(r for r in ws.iter_rows() if r[0].value == 117)  # the Inputs' max batch, served (vLLM's 1,024)
        assert _inputs_value(book, "Max batch memory holds") == 117
        tpot_col = list(header).index("TPOT (ms)")
        tput_col = list(header).index("Throughput (tokens/s)")
        assert row[1].value == 117  # charted: not a batch of the sweep
        # the Inputs' "TPOT at max batch" (ms) and "Throughput at max batch", the trial's 35.17 ms and 3,327 tokens/s
        assert row[tpot_col].value == pytest.approx(_inputs_value(book, "TPOT at max batch"), rel=1e-9)
        assert row[tput_col].value == pytest.approx(_inputs_value(book, "Throughput at max batch"), rel=1e-9)

    def test_the_roofline_legend_names_the_batches_plotted(self, wb, recalculated):
        chart = _charts(wb)["Roofline (log-log): decode and prefill"]
        ref = chart.series[1].tx.strRef.f.replace("'", "")
        assert ref.startswith("Sweeps!")
        assert recalculated["shipped"]["Sweeps"][ref.split("!")[1].replace("$", "")].value == (
            "Decode, batch 1 .. 117 (achieved)"
        )

    def test_no_compare_model_draws_one_line(self, wb, recalculated):
        chart = _charts(wb)["Max batch vs context: model and compare model"]
        title_ref = chart.series[1].tx.strRef.f.replace("'", "").split("!")[1].replace("$", "")
        values_ref = chart.series[1].val.numRef.f.replace("'", "").split("!")[1].replace("$", "")
        first, last = values_ref.split(":")
        col = "".join(ch for ch in first if ch.isalpha())
        rows = range(int(first[len(col) :]), int(last[len(col) :]) + 1)
        shipped, alone = recalculated["shipped"]["Sweeps"], recalculated["no_compare"]["Sweeps"]
        assert shipped[title_ref].value == "LLaMA-65B (fp16 KV)"  # the shipped compare model, drawn
        assert [shipped[f"{col}{r}"].value for r in rows][:3] == [61, 30, 15]
        assert alone[title_ref].value == "(no compare model: the compare model is the model)"
        assert all(alone[f"{col}{r}"].value == "#N/A" for r in rows)


def _calc_row(spec, key: str) -> int:
    """Calc's row of ``key`` (its label's row, as the Sweeps formulas refer to it)."""
    from planner.workbook.calc import calc_rows

    return calc_rows(lever_kv="fp8", lever_weights="fp8").row_of[key]


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """``planner addin example`` as a user runs it."""
    from click.testing import CliRunner

    from planner.cli import main

    path = tmp_path_factory.mktemp("trial13-example") / "functions-example.xlsx"
    result = CliRunner().invoke(main, ["addin", "example", str(path)])
    assert result.exit_code == 0, result.output
    return path


class TestF14EachScenarioRowIsOneDeployment:
    """The example's Scenarios called MAX_BATCH without gpus (the smallest group for one sequence, 2 x H100) beside
    TPOT, throughput and cost on MIN_GPUS's group (4): "Max batch 3" beside "Batch 8", and `planner plan` refused
    the row without --gpus. Every figure of a row is now on the one GPU count the row shows."""

    def test_every_function_gets_the_rows_gpu_count(self, example):
        wb = openpyxl.load_workbook(example)
        ws = wb["Scenarios"]
        header = [c.value for c in ws[1]]
        gpus = get_column_letter(header.index("GPUs (fewest for the batch)") + 1)
        formulas = {h: ws.cell(2, j + 1).value.text for j, h in enumerate(header) if j >= 4}
        assert formulas["GPUs (fewest for the batch)"].startswith("=MIN_GPUS(")
        for h, f in formulas.items():
            if h != "GPUs (fewest for the batch)":
                assert f.endswith(f",{gpus}2:{gpus}7)"), (h, f)  # MAX_BATCH's gpus too

    def test_the_rows_are_what_planner_plan_gives_for_that_count(self, example):
        """The stored results of each row against `planner plan --gpu G --model M --context C --batch B --gpus N
        --json`: max batch, TPOT, throughput and cost (the trial: H100 / llama2-70b / 8,192 / batch 8 on 4 GPUs,
        max batch 58, 19.7367 ms, 405.34 tokens/s, $8.48)."""
        import json

        from click.testing import CliRunner

        from planner.cli import main

        ws = openpyxl.load_workbook(example, data_only=True)["Scenarios"]
        rows = [r for r in ws.iter_rows(min_row=2, max_row=7, values_only=True)]
        assert len(rows) == 6
        for gpu, model, context, batch, n, max_batch, tpot_ms, tput, cost in rows:
            assert max_batch >= batch, (gpu, model)  # the row's batch fits the row's GPUs
            args = ["--gpu", gpu, "--model", model, "--context", f"{context:.0f}", "--batch", f"{batch:.0f}"]
            out = CliRunner().invoke(main, ["plan", *args, "--gpus", f"{n:.0f}", "--json"])
            assert out.exit_code == 0, out.output
            plan = json.loads(out.output)
            assert plan["gpus"] == n and plan["max_batch"] == max_batch, (gpu, model, plan["max_batch"])
            assert plan["tpot_s"] * 1e3 == pytest.approx(tpot_ms, rel=1e-9)
            assert plan["throughput_tokens_per_s"] == pytest.approx(tput, rel=1e-9)
            assert plan["cost_per_million_output_tokens_usd"] == pytest.approx(cost, rel=1e-9)
        h100 = rows[1]
        assert h100[:6] == ("H100", "llama2-70b", 8192, 8, 4, 58)


class TestF15ReadMeFirstSaysWhereTheFunctionsRun:
    """In LibreOffice the example showed stored values in some cells and #NAME? in others, and its Read me (the last
    sheet) named only the xlwings routes."""

    def test_read_me_is_the_first_sheet_and_opens(self, example):
        wb = openpyxl.load_workbook(example)
        assert wb.sheetnames[0] == "Read me" and wb.active.title == "Read me"

    def test_it_says_libreoffice_shows_name_and_where_to_read_the_values(self, example):
        text = " ".join(c.value for (c,) in openpyxl.load_workbook(example)["Read me"].iter_rows() if c.value)
        assert "only in Excel with planner's xlwings add-in" in text
        assert "LibreOffice cannot run these functions" in text and "#NAME?" in text
        assert "workbooks/capacity-what-if.xlsx" in text
        assert 'Column "Python gave"' in text and "values planner computed" in text
