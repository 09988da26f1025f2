"""Columns that a reader does not read, beyond ``validate --decode`` (trial 15 F2, tests/test_trial15_validate.py):
``validate --memory``'s start-up CSVs and ``calibrate``'s measurements name theirs on standard error, as
``planner.accuracy.unread`` words it, and refuse a file whose figure would be left out; and the what-if workbook takes
a precision's alias (``fp4``) as the CLI does.

The start-up file is KV001 of catalogs/reference/vllm_startup_public.csv (Qwen2-7B-Instruct on one A100 at
utilization 0.25: 5.01 GiB, 93,872 tokens, 5.73x published), the measurements calibrate reads the context form of
tests/test_calibration.py (``CONTEXT_CSV``).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from planner.accuracy import predict, published
from planner.accuracy.predict import STARTUP_KEPT_COLUMNS, STARTUP_READ_COLUMNS
from planner.accuracy.published import read_csv_rows, reference_dir
from planner.accuracy.unread import unknown_startup_columns
from planner.cli.accuracy import _unread_in_measurements
from tests.cli_support import one_line, run

#: KV001 as a user's start-up CSV: its columns the reader reads; the {gib} cell its published 5.01 GiB.
STARTUP = (
    "record_id,gpu,model,tensor_parallel_size,weight_dtype,max_model_len,gpu_memory_utilization,"
    "available_kv_cache_memory_gib,gpu_kv_cache_tokens,max_concurrency_x\n"
    "KV001,NVIDIA A100 80GB,Qwen/Qwen2-7B-Instruct,1,bfloat16,16384,0.25,{gib},93872,5.73\n"
)
#: The shipped start-up files (``validate --memory`` reads any of them; tests/test_reference_data.py's STARTUP_FILES).
STARTUP_FILES = [*sorted(reference_dir().glob("vllm_startup_*.csv")), reference_dir() / "startup_memory_public.csv"]
#: tests/test_calibration.py's CONTEXT_CSV (decode timed at a context), two rows calibrate fits; {extra} a column
#: added after tpot_ms, {cells} its cells.
MEASUREMENTS = "gpu,model,batch,context,tpot_ms{extra}\nH100,llama2-7b,8,1000,12.5{a}\nH100,llama2-7b,16,1000,14{b}\n"

#: docs/accuracy.md, its lines joined.
DOCS = " ".join((Path(__file__).parents[1] / "docs" / "accuracy.md").read_text().split())


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def startup(tmp_path: Path, name: str, gib: str = "5.01", column: str | None = None) -> Path:
    """KV001's start-up CSV with ``gib`` published, its available_kv_cache_memory_gib column renamed ``column``."""
    text = STARTUP.format(gib=gib)
    if column is not None:
        text = text.replace("available_kv_cache_memory_gib", column, 1)
    return write(tmp_path, name, text)


def measurements(tmp_path: Path, name: str, column: str = "", a: str = "", b: str = "") -> Path:
    """The two context rows, with a column ``column`` whose cells are ``a`` and ``b`` (none where "")."""
    extra, a, b = (f",{column}", f",{a}", f",{b}") if column else ("", "", "")
    return write(tmp_path, name, MEASUREMENTS.format(extra=extra, a=a, b=b))


class TestMemoryColumns:
    """``validate --memory``: a start-up CSV's column it does not read is named; --check refuses a file without a
    figure it would have judged."""

    @pytest.mark.parametrize(
        ("column", "meant"),
        [
            ("available_kv_cache_memory_gibb", "available_kv_cache_memory_gib"),  # a letter too many
            ("kv_cache_gibb", "available_kv_cache_memory_gib"),  # vLLM's words, short: kv, cache, gib shared
        ],
    )
    def test_a_misspelt_figure_column_is_named_with_the_closest(self, tmp_path, column, meant):
        p = startup(tmp_path, "mem.csv", column=column)
        r = run("validate", "--memory", str(p))
        assert r.exit_code == 0, r.output
        assert f"warning: unknown column '{column}' in {p}, not read; did you mean {meant}?" in r.stderr.splitlines()

    def test_check_refuses_the_file_the_typo_would_have_passed(self, tmp_path):
        """9.5 GiB published where 4.81 is predicted: --check fails the file (exit 1); with that column misspelt it
        passed on the tokens and concurrency alone (exit 0 before), and is now refused in one line (exit 2)."""
        assert run("validate", "--memory", str(startup(tmp_path, "fail.csv", gib="9.5")), "--check").exit_code == 1
        typo = startup(tmp_path, "typo.csv", gib="9.5", column="kv_cache_gibb")
        line = one_line(run("validate", "--memory", str(typo), "--check"), 2)
        assert line.startswith(
            f"planner: error: {typo}: unknown column 'kv_cache_gibb' (did you mean available_kv_cache_memory_gib?)"
        )
        assert "--check would judge the file without it" in line

    def test_a_free_text_column_is_named_but_not_refused(self, tmp_path):
        """A column that is no figure and no misspelling (date) holds nothing the verdict judges: a warning, and
        --check decides on the figures (KV001 within 5%: exit 0)."""
        text = STARTUP.format(gib="5.01").replace("\n", ",date\n", 1).replace("5.73\n", "5.73,2026-01\n")
        p = write(tmp_path, "dated.csv", text)
        r = run("validate", "--memory", str(p), "--check")
        assert r.exit_code == 0, r.output
        assert r.stderr.splitlines() == [f"warning: unknown column 'date' in {p}, not read"]

    @pytest.mark.parametrize(
        ("column", "closest", "judged"),
        [
            ("gpu_memory_utilisation", "gpu_memory_utilization", True),  # a setting misspelt: 0.9 taken silently
            ("max_concurency", "max_concurrency_x", True),
            ("kv_tokens", "gpu_kv_cache_tokens", True),  # a figure by its words, named by the words it shares
            ("concurrency", "max_concurrency_x", True),
            ("kv_cache", "", True),  # kv and cache: both the GiB and the tokens column share them
            ("date", "", False),
            ("gpu_mem_util", "", False),  # 0.71 alike to gpu_memory_utilization: below MISSPELLING_RATIO
        ],
    )
    def test_which_columns_are_judged(self, column, closest, judged):
        (u,) = unknown_startup_columns(["gpu", "model", column])
        assert (u.name, u.closest, u.judged) == (column, closest, judged)

    @pytest.mark.parametrize("path", STARTUP_FILES, ids=lambda p: p.name)
    def test_the_shipped_files_draw_no_warning(self, path):
        """Every column of the shipped start-up files is read or kept on purpose (source, notes, quote, the log's
        other figures): validate --memory on each prints nothing on standard error, as before, and is not refused
        (startup_memory_public.csv's rows are informative elsewhere and may miss the limits: exit 1)."""
        assert unknown_startup_columns(read_csv_rows(path)[0]) == []
        r = run("validate", "--memory", str(path), "--check")
        assert r.exit_code in (0, 1), r.output
        assert r.stderr == ""

    def test_every_column_the_reader_reads_is_known(self):
        """Each literal column name the start-up reader reads from a row (``r.get("...")``, ``r["..."]`` in
        load_startup_rows and the helpers it calls on the row) is in STARTUP_READ_COLUMNS, the figures among them;
        and no column is both read and kept unread."""
        source = "".join(
            inspect.getsource(f)
            for f in (
                predict.load_startup_rows,
                predict._startup_profile,
                predict._weight_precision,
                published.pipeline_stages,
            )
        )
        named = set(re.findall(r"""\br(?:\.get\(|\[)"([a-z_0-9]+)"\]?""", source)) | set(predict.STARTUP_FIGURE_COLUMNS)
        assert named - {"record_id"} and named <= STARTUP_READ_COLUMNS, named - STARTUP_READ_COLUMNS
        assert not STARTUP_READ_COLUMNS & STARTUP_KEPT_COLUMNS

    def test_the_help_and_docs_say_check_refuses_a_memory_file(self):
        assert "a --decode or --memory file with a column" in " ".join(run("validate", "--help").output.split())
        assert "A `--memory` file's columns are named and refused alike" in DOCS


class TestCalibrateColumns:
    """``calibrate``: a column (or result key) it does not read is named; one whose figure the fit would go on
    without refuses the file (exit 2, as its other input errors)."""

    def test_a_misspelt_figure_column_refuses_a_file_it_would_fit(self, tmp_path):
        """tpot_ms alone fits both rows (exit 0 in tests/test_calibration.py); throughput_tok_sx beside it would have
        been left out of the fit without a word, and is refused in one line naming throughput_tok_s."""
        p = measurements(tmp_path, "runs.csv", "throughput_tok_sx", "640", "1140")
        out = tmp_path / "cal.toml"
        line = one_line(run("calibrate", str(p), "-o", str(out)), 2)
        assert line == (
            f"planner: error: {p}: unknown column 'throughput_tok_sx' (did you mean throughput_tok_s?): calibrate "
            "would fit the file without it; rename it to a column calibrate reads, or remove it"
        )
        assert not out.exists()

    def test_a_file_it_cannot_fit_names_the_column_before_its_refusal(self, tmp_path):
        """With tpot_ms misspelt no row has a figure: the refusal is calibrate's own ("none of the 2 rows can be
        used"), after the warning that says which column was meant."""
        p = measurements(tmp_path, "runs.csv").read_text().replace("tpot_ms", "tpot_msx")
        p = write(tmp_path, "runs.csv", p)
        r = run("calibrate", str(p), "-o", str(tmp_path / "cal.toml"))
        assert r.exit_code == 2, r.output
        warning, error = r.stderr.strip().splitlines()
        assert warning == f"warning: unknown column 'tpot_msx' in {p}, not read; did you mean tpot_ms?"
        assert error.startswith(f"planner: error: {p}: none of the 2 rows can be used")

    def test_a_free_text_column_is_named_and_the_fit_written(self, tmp_path):
        p = measurements(tmp_path, "runs.csv", "date", "2026-01", "2026-01")
        out = tmp_path / "cal.toml"
        r = run("calibrate", str(p), "-o", str(out))
        assert r.exit_code == 0, r.output
        assert f"warning: unknown column 'date' in {p}, not read" in r.stderr.splitlines()
        assert out.exists()

    def test_a_misspelt_result_key_refuses_a_result_file_it_would_fit(self, tmp_path):
        """tests/test_calibration.py's benchmark result (a closed loop of 8 at 12.5 ms TPOT), its median TTFT written
        as medain_ttft_ms: the fit would go on without that figure (the fit also takes first-token latency)."""
        result = {
            "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 8, "completed": 8, "max_concurrency": 8,
            "total_input_tokens": 8000, "total_output_tokens": 1024, "mean_tpot_ms": 12.5,
            "output_throughput": 640.0, "medain_ttft_ms": 60.0,
        }  # fmt: skip
        p = write(tmp_path, "bench.json", json.dumps(result))
        line = one_line(run("calibrate", str(p), "--gpu", "H100", "-o", str(tmp_path / "c.toml")), 2)
        assert f"{p}: unknown key 'medain_ttft_ms' (did you mean median_ttft_ms?): calibrate would fit" in line

    def test_the_shipped_files_draw_no_warning(self):
        """The decode, perf and load files calibrate (and validate) read have no column calibrate calls unknown."""
        ref = reference_dir()
        for path in sorted([*ref.glob("decode_*.csv"), *ref.glob("perf_*.csv"), ref / "load_public.csv"]):
            assert _unread_in_measurements(path) == ([], "column"), path.name

    def test_the_help_and_docs_say_so(self):
        help_text = " ".join(run("calibrate", "--help").output.split())
        assert "A column (or result key) it does not read is named on standard error" in help_text
        assert "refuses the file (exit 2): the fit would go on without it" in help_text
        assert 'refuses a file it would otherwise fit (exit 2: "calibrate would fit the file without it")' in DOCS


# -- the what-if workbook: a precision's alias ----------------------------------------------------------------------

#: Llama 3.1 8B on one B200 (which runs nvfp4 weights: GPUs sheet, weight formats), as trial 11 F7 typed it.
FP4 = {"gpu": "B200 180GB", "model": "Llama-3.1-8B", "context": 8192, "gpus": 1}
ALIAS_BOOKS = {
    "nvfp4": FP4 | {"weight_precision": "nvfp4"},
    "fp4": FP4 | {"weight_precision": "fp4"},
    "Fp4": FP4 | {"weight_precision": "Fp4"},  # MATCH ignores case, as the catalog's lookup does
    "fp8_kv": {"kv_precision": "fp8"},
    "float8_kv": {"kv_precision": "float8"},
    "fp3": {"weight_precision": "fp3"},  # no name and no alias
}


@pytest.fixture(scope="module")
def alias_books(tmp_path_factory):
    from workbook_support import recalculate_inputs, require_libreoffice

    from planner.workbook.build import build_whatif

    require_libreoffice()
    return recalculate_inputs(build_whatif(load=False), ALIAS_BOOKS, tmp_path_factory.mktemp("aliases"))


#: Calc's rows of the precisions as typed (calc.py's kv_in and wp_in): the one place the two books may differ.
TYPED_ROWS = ("KV-cache precision", "Weight precision")


def _figures(book) -> dict[tuple[str, int, int], object]:
    """Every cell of the Calc, Results and Levers sheets by (sheet, row, column), but Calc's ``TYPED_ROWS``."""
    return {
        (s, r, col): v
        for s in ("Calc", "Results", "Levers")
        for r, row in enumerate(book[s].iter_rows(values_only=True), 1)
        if not (s == "Calc" and row and row[0] in TYPED_ROWS)
        for col, v in enumerate(row, 1)
    }


@pytest.mark.libreoffice
class TestWorkbookPrecisionAlias:
    """The what-if workbook reads a precision's alias as the CLI does (``planner plan -w fp4``: nvfp4, catalogs/
    precisions.toml's aliases), in its own formulas (Calc's PRECISION_OF over the Precisions sheet's alias table),
    recalculated by LibreOffice."""

    @pytest.mark.parametrize(("alias", "name"), [("fp4", "nvfp4"), ("Fp4", "nvfp4"), ("float8_kv", "fp8_kv")])
    def test_an_alias_gives_its_precisions_figures(self, alias_books, alias, name):
        """Every cell of Calc, Results and Levers equal to the canonical name's book, but the input row that shows
        the name as typed."""
        typed = ALIAS_BOOKS[alias].get("weight_precision") or ALIAS_BOOKS[alias]["kv_precision"]
        rows = {row[0]: row[2] for row in alias_books[alias]["Calc"].iter_rows(max_col=3, values_only=True)}
        assert typed in (rows["Weight precision"], rows["KV-cache precision"])  # the alias book has the alias
        assert _figures(alias_books[alias]) == _figures(alias_books[name])

    def test_fp4_computes_as_nvfp4_does(self, alias_books):
        """No error and no #N/A: the Error line is blank and Calc's weight precision used is nvfp4, whose bytes per
        weight are (4 + 8 / 16) / 8 = 0.5625 (catalogs/precisions.toml: 4 bits, an 8-bit scale per 16 values)."""
        from planner.workbook.inputs import why_error_row

        book = alias_books["fp4"]
        assert book["Inputs"][f"D{why_error_row()}"].value in (None, "")
        baseline = {row[0]: row[2] for row in book["Calc"].iter_rows(max_col=3, values_only=True) if row[0]}
        assert baseline["Weight precision used"] == "nvfp4"
        assert baseline["Bytes per weight"] == pytest.approx(0.5625)

    def test_a_name_that_is_neither_says_so(self, alias_books):
        from planner.workbook.inputs import why_error_row

        assert alias_books["fp3"]["Inputs"][f"D{why_error_row()}"].value == (
            "Error: weight precision 'fp3' is neither a name nor an alias on the Precisions sheet: pick one from the "
            "list"
        )


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """The what-if workbook, as planner workbook writes it (no Load sheet), not recalculated."""
    from planner.workbook.build import build_whatif
    from planner.workbook.writer import write_workbook

    return write_workbook(build_whatif(load=False), tmp_path_factory.mktemp("book") / "book.xlsx")


class TestExportAndRefreshTakePrecisionAliases:
    """``planner export`` and ``workbook refresh`` refuse a name the workbook's formulas do not look up
    (``update.check_names``); a precision's alias they now do, in a workbook written with PRECISION_OF."""

    def _typed(self, written: Path, value: str, formulas_take_aliases: bool = True):
        import openpyxl

        from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, input_row

        wb = openpyxl.load_workbook(written)
        wb[INPUTS_SHEET][f"B{input_row('kv_precision')}"] = value
        if not formulas_take_aliases:  # a workbook written before: its Calc reads the typed name as it is
            for row in wb[CALC_SHEET].iter_rows():
                for cell in row:
                    if isinstance(cell.value, str) and "prec_aliases" in cell.value:
                        cell.value = "=C8"
        return wb

    def test_an_alias_passes_where_the_formulas_read_it(self, written):
        from planner.catalog import default_catalog
        from planner.workbook.update import check_listed_names, takes_precision_aliases

        wb = self._typed(written, "float8")
        assert takes_precision_aliases(wb)
        check_listed_names(wb, written, default_catalog())  # no WorkbookError

    def test_an_alias_is_refused_where_the_formulas_do_not_read_it(self, written):
        """A workbook written before PRECISION_OF (its Calc without prec_aliases) shows #N/A for float8: refused, as
        tests/test_workbook.py's refresh refusals word it."""
        from planner.catalog import default_catalog
        from planner.workbook.reader import WorkbookError
        from planner.workbook.update import check_listed_names, takes_precision_aliases

        wb = self._typed(written, "float8", formulas_take_aliases=False)
        assert not takes_precision_aliases(wb)
        with pytest.raises(WorkbookError, match="'float8' is not a name the workbook's formulas look up; type 'fp8'"):
            check_listed_names(wb, written, default_catalog())
