"""Surface review, round 2 (task s170): each defect a hostile or careless user met, as that user meets it.

The CLI cases check the exit code and the one-line message together (cli_support.one_line); the Excel cases call the
functions as the add-in does (floats, None for a blank, text names); the workbook cases edit the shipped what-if
workbook's input cells the way a user does, and read it back.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import openpyxl
import pytest
from cli_support import one_line, run

from planner.errors import UnknownNameError
from planner.excel import functions as xf
from planner.workbook import read_inputs
from planner.workbook.reader import WorkbookError, read_all_inputs

ROOT = Path(__file__).resolve().parents[1]
WORKBOOK = ROOT / "workbooks" / "capacity-what-if.xlsx"
DECODE_HEADER = "gpu,model,batch,input_len,output_len,tpot_ms\n"
PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096")


class TestValidateDropsNoRow:
    """A row of a user's benchmark file is compared or named as not predicted: never dropped while the table passes."""

    @pytest.mark.parametrize("figure", ["inf", "-inf", "nan", ""])
    def test_a_row_whose_only_figure_is_not_a_number_is_named(self, tmp_path, figure):
        """tpot_ms "inf" (or "nan", or blank) was read as no figure: the row left the table and validate printed PASS
        (exit 0 with --check) for a file none of whose rows was compared."""
        f = tmp_path / "d.csv"
        f.write_text(DECODE_HEADER + f"H100,llama2-7b,1,128,128,{figure}\n")
        r = run("validate", "--decode", str(f), "--check")
        assert r.exit_code == 1, r.output
        assert "Traceback" not in r.output
        assert "row1: " in r.stdout.split("Not predicted:")[1]
        assert "PASS" not in r.stdout

    def test_json_names_it_too_and_stays_valid_json(self, tmp_path):
        """The --json object lists the row with its reason, and is JSON a strict parser reads (no bare NaN)."""
        f = tmp_path / "d.csv"
        f.write_text(DECODE_HEADER + "H100,llama2-7b,1,128,128,inf\nH100,llama2-7b,1,128,128,\n")
        r = run("validate", "--decode", str(f), "--json")
        assert r.exit_code == 0, r.output

        def no_constants(name):
            raise AssertionError(f"not JSON: {name}")

        rows = json.loads(r.stdout, parse_constant=no_constants)["rows"]
        assert [row["record_id"] for row in rows] == ["row1", "row2"]
        assert all(row["predicted"] is None and row["reason"] for row in rows)
        assert "published inf is not a positive figure" in rows[0]["reason"]

    def test_memory_row_without_a_figure_is_named(self, tmp_path):
        f = tmp_path / "m.csv"
        f.write_text("gpu,model,available_kv_cache_memory_gib\nH100,llama2-7b,inf\n")
        r = run("validate", "--memory", str(f), "--check")
        assert r.exit_code == 1, r.output
        assert "row1: " in r.stdout.split("Not predicted:")[1]


class TestPlanLoadOptionsNeedARate:
    """--burstiness and --percentile shape the fleet under load: without --rate they were ignored without a word."""

    @pytest.mark.parametrize("option", [("--burstiness", "0.5"), ("--percentile", "99")])
    def test_refused_without_rate(self, option):
        line = one_line(run(*PLAN, *option), 2)
        assert option[0] in line and "give --rate" in line

    @pytest.mark.parametrize("option", ["--burstiness", "--price", "--memory-utilization", "--acceptance-length"])
    def test_nan_is_not_a_number(self, option):
        """click's FloatRange lets NaN through (every comparison with it is False): --burstiness nan was taken."""
        r = run(*PLAN, option, "nan")  # a usage error: click's usage lines, then the one error line
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert f"Error: Invalid value for '{option}': 'nan' is not a number; give " in r.stderr


class TestCalibrationFile:
    @pytest.mark.parametrize("text", ["", "# nothing yet\n", "calibration = []\n"])
    def test_an_empty_calibration_file_is_refused(self, tmp_path, text):
        """An empty (or cut) --calibration file was taken as a calibration with no entry: every figure stayed
        uncalibrated while the user believed it calibrated."""
        f = tmp_path / "cal.toml"
        f.write_text(text)
        line = one_line(run(*PLAN, "--calibration", str(f)), 2)
        assert f"{f}: no [[calibration]] table" in line


class TestLongNames:
    def test_an_unknown_name_is_not_echoed_whole(self):
        """A 5,000-character GPU name made a 5,000-character error line (and Excel reason); it is cut, its length
        said."""
        name = "é" * 5000
        message = str(UnknownNameError("GPU", name, ["H100"]))
        assert len(message) < 300 and "5,000 characters" in message
        line = one_line(run("plan", "--gpu", name, "--model", "llama2-70b", "--context", "8k"), 2)
        assert len(line) < 300 and line.startswith("planner: error: unknown GPU 'ééé")

    def test_a_short_name_is_kept_as_typed(self):
        assert str(UnknownNameError("GPU", "H10", ["H100"])) == "unknown GPU 'H10'; did you mean H100?"


class TestExcel:
    def test_planner_why_suggests_the_function_meant(self):
        """=PLANNER_WHY("MAX_BATH", ...) listed every function (LOADED_RANGE twice) instead of the one meant."""
        text = xf.PLANNER_WHY("MAX_BATH", "H100", "llama2-70b", 8192.0)
        assert text.startswith("unknown function 'MAX_BATH'; did you mean MAX_BATCH")
        listed = xf.PLANNER_WHY("ZZZ").split("known: ")[1].split(", ")
        assert len(listed) == len(set(listed)) and "LOADED_RANGE" in listed

    @pytest.mark.parametrize(
        ("args", "code", "said"),
        [
            (("#N/A: unknown GPU 'H10'", "llama2-70b", 8192.0), "#N/A", "gpu holds the error #N/A"),
            (("H100", "llama2-70b", "#NUM!"), "#NUM!", "context holds the error #NUM!"),
            (("H100", "#DIV/0!", 8192.0), "#VALUE!", "model holds the error #DIV/0!"),
        ],
    )
    def test_an_error_from_another_cell_is_passed_on(self, args, code, said):
        """=MAX_BATCH(A1, ...) with A1 showing a planner error (classic UDFs return it as text "#N/A: ...") said
        "unknown GPU '#N/A: unknown GPU ...'; known: 3090, ..." as if the user had typed a GPU name."""
        assert xf.MAX_BATCH(*args) == code
        assert xf.PLANNER_WHY("MAX_BATCH", *args).startswith(said)

    def test_ttft_names_prompt_tokens(self):
        """TTFT's third argument is prompt_tokens; a 0 there was blamed on "context", an argument TTFT does not have."""
        assert xf.TTFT("H100", "llama2-70b", 0.0) == "#NUM!"
        why = xf.PLANNER_WHY("TTFT", "H100", "llama2-70b", 0.0)
        assert why.startswith("prompt_tokens must be a whole number of tokens from 1"), why


def edited(tmp_path: Path, **cells) -> Path:
    """A copy of the shipped what-if workbook with the input cells named by ``cells`` (defined names) set."""
    wb = openpyxl.load_workbook(WORKBOOK)
    for name, value in cells.items():
        sheet, ref = next(iter(wb.defined_names[name].destinations))
        wb[sheet][ref.replace("$", "")].value = value
    path = tmp_path / "edited.xlsx"
    wb.save(path)
    return path


class TestWorkbookInputs:
    """The what-if workbook's inputs as users leave them: numbers in text-formatted cells, dates, huge numbers."""

    @pytest.mark.parametrize(
        ("name", "text", "said"),
        [
            ("in_context", "8k", "Inputs!B6 (Context per sequence) is text '8k', which the workbook's formulas cannot "
             "read (#VALUE!); type 8192 as a number"),
            ("in_context", " 8,192 ", "(Context per sequence) is text '8,192', which"),
            ("in_memory_utilization", "0.85", "(Memory utilization) is text '0.85', which"),
            ("in_price", "2.5", "(Price per GPU-hour) is text '2.5', which"),
        ],
    )  # fmt: skip
    def test_a_number_typed_as_text_is_refused_with_the_number_to_type(self, tmp_path, name, text, said):
        """A cell formatted as text holding "8k" or "8192": the workbook's formulas refuse it (their ISNUMBER checks,
        #VALUE! in every result: trial 6 F4, "8k" recalculated in LibreOffice), so the reader refuses it too, naming
        the cell and the number to type, where it used to read 8,192 and export a review of a workbook showing no
        number."""
        with pytest.raises(WorkbookError) as exc:
            read_inputs(edited(tmp_path, **{name: text}))
        assert said in str(exc.value)

    def test_a_number_typed_as_text_in_a_budget_input_is_refused(self, tmp_path):
        """The Error line refuses it as "must be a number (requests/s); got '40'" (``calc.budget_refusal``)."""
        with pytest.raises(WorkbookError, match=r"Inputs!B15 \(Peak traffic\) is text '40', which .*; type 40 as"):
            read_all_inputs(edited(tmp_path, in_peak_requests="40"))

    def test_export_of_a_context_typed_8k_is_refused_naming_the_cell(self, tmp_path):
        """Trial 6 F4: `planner export` of a workbook whose context is "8k" wrote a review for 8,192 tokens while
        every result cell of the workbook showed #VALUE!; now it refuses in one line (exit 2) and writes nothing."""
        path = edited(tmp_path, in_context="8k")
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.md")), 2)
        assert "Inputs!B6 (Context per sequence) is text '8k'" in line and "type 8192" in line
        assert not (tmp_path / "r.md").exists()

    @pytest.mark.parametrize(
        ("name", "value", "said"),
        [
            ("in_context", "lots", "Inputs!B6 (Context per sequence) must be a number (tokens); got 'lots'"),
            ("in_context", "9" * 400, "Inputs!B6 (Context per sequence) is text '999"),
            ("in_context", 1e308, "Inputs!B6 (Context per sequence) must be a whole number of tokens from 1 to"),
            ("in_context", datetime.datetime(2024, 1, 1), "must be a number (tokens); got a date (2024-01-01"),
            ("in_context", "#DIV/0!", "holds the error #DIV/0!; enter a number (tokens)"),
            ("in_peak_requests", 0, "Inputs!B15 (Peak traffic) must be above 0 requests/s; got 0"),
            ("in_tpot_target_ms", -50, "(TPOT target (time per output token)) must be above 0 ms; got -50"),
        ],
    )
    def test_refused_naming_the_cell(self, tmp_path, name, value, said):
        """1e308 tokens was passed on and refused as "workload.prompt_tokens_mean" with a 300-digit number, a field
        the user never typed (a peak of 0 or a TPOT target of -50 ms likewise, as workload.* in seconds); a date
        showed as datetime.datetime(...); an error value asked for "a tokens"."""
        path = edited(tmp_path, **{name: value})
        with pytest.raises(WorkbookError) as exc:
            read_all_inputs(path)
        assert said in str(exc.value) and len(str(exc.value)) < 400, str(exc.value)

    def test_export_of_a_huge_context_names_the_input_cell(self, tmp_path):
        path = edited(tmp_path, in_context=1e308)
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.md")), 2)
        assert "Inputs!B6 (Context per sequence)" in line and "prompt_tokens_mean" not in line
        assert not (tmp_path / "r.md").exists()
