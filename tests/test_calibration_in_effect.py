"""A calibration file in effect is said wherever it changes a figure (a user trial: `plan` and the budget review
changed under $PLANNER_CALIBRATION without a word, and the review's time-range note still said held-out rows).

``plan`` prints a Calibration line and ``--json`` a ``calibration`` field (null without one); the review says it
under the recommendation, in its Assumptions and in the time-range note: the file, its rows and what it changed,
whatever its row count (under ``FEW_ROWS``, 8, it records no range and the held-out one is used, as the note says).
"""

from __future__ import annotations

import json

import pytest
from cli_support import SCENARIO, run

from planner.accuracy.calibration import ENV_VAR, FEW_ROWS, GpuCalibration, write_calibration

PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096")
#: The one-H100 review of cli_support, sized by Little's law (about a second; the simulated sizing takes several).
QUICK_SCENARIO = SCENARIO.replace("[workload]\n", '[workload]\nsizing = "littles-law"\n', 1)


def few_rows_file(tmp_path, gpu: str = "H100"):
    """A calibration as `planner calibrate` writes it from 3 rows: factors, no range (3 < FEW_ROWS)."""
    entry = GpuCalibration(gpu=gpu, bandwidth_efficiency=0.5, rows=3, source="planner calibrate ctx.csv, 3 rows")
    return write_calibration(tmp_path / "few.toml", [entry])


def ranged_file(tmp_path):
    """A calibration from 10 rows, with its own range -2% / +1%."""
    entry = GpuCalibration(gpu="H100", bandwidth_efficiency=0.5, residual_low=-0.02, residual_high=0.01, rows=10)
    return write_calibration(tmp_path / "ranged.toml", [entry])


def plan_with(path, how: str, monkeypatch, *extra: str):
    args = PLAN + extra + (("--calibration", str(path)) if how == "option" else ())
    if how == "environment":
        monkeypatch.setenv(ENV_VAR, str(path))
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r.stdout


class TestPlanSaysTheCalibration:
    @pytest.mark.parametrize("how", ["option", "environment"])
    def test_a_few_rows_calibration_is_named_with_its_rows_and_the_range_it_could_not_give(
        self, tmp_path, monkeypatch, how
    ):
        """3 rows: the text and --json name the file and its 3 rows, the factor it set (bandwidth 0.5) and that the
        time ranges are the held-out ones; the JSON's time_range_note says so first (it said held-out rows alone)."""
        path = few_rows_file(tmp_path)
        (line,) = [x for x in plan_with(path, how, monkeypatch).splitlines() if x.startswith("Calibration")]
        assert f"your calibration file {path} (H100 entry, every engine, fitted on 3 rows" in line
        assert "bandwidth_efficiency 0.5" in line
        assert f"3 rows are too few for a range of its own (it takes {FEW_ROWS} or more)" in line
        assert "time ranges are the held-out ones" in line
        data = json.loads(plan_with(path, how, monkeypatch, "--json"))
        cal = data["calibration"]
        assert (cal["path"], cal["rows"], cal["range"], cal["ranges_from"]) == (str(path), 3, None, "held-out")
        assert cal["factors"] == {"bandwidth_efficiency": 0.5} and cal["note"] == line.split(None, 1)[1]
        assert data["time_range_note"].startswith(f"held-out (your calibration file {path} sets the predicted times")

    def test_a_calibration_with_its_own_range_says_the_ranges_are_its(self, tmp_path, monkeypatch):
        """10 rows with a range of -2% / +1%: the line says the ranges are its own, and --json's range is the one
        the TPOT range is made of."""
        path = ranged_file(tmp_path)
        text = plan_with(path, "option", monkeypatch)
        assert "fitted on 10 rows: bandwidth_efficiency 0.5); time ranges its own, -2% / +1%" in text
        data = json.loads(plan_with(path, "option", monkeypatch, "--json"))
        assert data["calibration"]["range"] == [-0.02, 0.01] and data["calibration"]["ranges_from"] == "calibration"
        assert data["tpot_range_s"] == pytest.approx([data["tpot_s"] * 0.98, data["tpot_s"] * 1.01])
        assert data["time_range_note"].startswith(f"your calibration file {path}, fitted on 10 rows")

    def test_a_calibration_without_an_entry_for_the_gpu_says_so(self, tmp_path, monkeypatch):
        """A file for the A100 is in effect but changes nothing on an H100: said, with its path."""
        path = few_rows_file(tmp_path, gpu="A100")
        text = plan_with(path, "environment", monkeypatch)
        assert f"{path} is in effect but has no entry for H100 SXM 80GB with vllm" in text
        data = json.loads(plan_with(path, "environment", monkeypatch, "--json"))
        assert data["calibration"]["entry"] is None and data["calibration"]["ranges_from"] == "held-out"

    def test_without_a_calibration_the_field_is_null_and_no_line_is_printed(self, monkeypatch):
        monkeypatch.delenv(ENV_VAR, raising=False)
        assert "Calibration" not in plan_with(None, "none", monkeypatch)
        assert json.loads(plan_with(None, "none", monkeypatch, "--json"))["calibration"] is None


def test_rows_of_a_file_written_before_the_rows_field_come_from_its_source():
    """`planner calibrate` wrote the count at the end of ``source`` only ("..., 24 rows"): read from there."""
    old = GpuCalibration(gpu="H100", source="planner calibrate my-runs.csv, 2026-11-30, 24 rows")
    assert old.fitted_rows() == 24
    assert GpuCalibration(gpu="H100", source="hand-made").fitted_rows() is None
    assert GpuCalibration(gpu="H100", rows=5, source="planner calibrate x.csv, 9 rows").fitted_rows() == 5


class TestReviewSaysTheCalibration:
    def test_the_review_names_a_few_rows_calibration_in_its_text_assumptions_and_range_note(self, tmp_path):
        """The one-H100 review under a 3-row calibration: the printed summary and the Markdown say which file set
        the predicted times and that its 3 rows gave no range; the Assumptions table has its row, and the
        uncertainty row's note says its range is held-out, not the file's."""
        path = few_rows_file(tmp_path)
        scenario = tmp_path / "review.toml"
        scenario.write_text(QUICK_SCENARIO)
        out = tmp_path / "r.md"
        r = run("export", str(scenario), "-o", str(out), "--calibration", str(path))
        assert r.exit_code == 0, r.output
        said = f"Calibration: predicted times from your calibration file {path} (H100 entry, every engine"
        assert said in r.stdout and "fitted on 3 rows" in r.stdout
        md = out.read_text(encoding="utf-8")
        assert "3 rows are too few for a range of its own" in md
        (assumption,) = [x for x in md.splitlines() if x.startswith("| H100 SXM 80GB, engine vllm: calibration |")]
        assert "fitted on 3 rows" in assumption
        (uncertainty,) = [x for x in md.splitlines() if "uncertainty of TPOT and TTFT" in x]
        assert "held-out (your calibration file" in uncertainty and "has 3 rows, too few for a range" in uncertainty

    def test_the_xlsx_assumptions_sheet_has_the_calibration_row(self, tmp_path):
        """The same row on the workbook's Assumptions sheet, with a 10-row file's own range."""
        from openpyxl import load_workbook

        path = ranged_file(tmp_path)
        scenario = tmp_path / "review.toml"
        scenario.write_text(QUICK_SCENARIO)
        out = tmp_path / "r.xlsx"
        r = run("export", str(scenario), "-o", str(out), "--calibration", str(path), "-q")
        assert r.exit_code == 0, r.output
        sheet = load_workbook(out)["Assumptions"]
        values = {row[0]: row[1] for row in sheet.iter_rows(values_only=True)}
        assert "time ranges its own, -2% / +1%" in values["H100 SXM 80GB, engine vllm: calibration"]

    def test_without_a_calibration_the_review_says_none(self, tmp_path, monkeypatch):
        monkeypatch.delenv(ENV_VAR, raising=False)
        scenario = tmp_path / "review.toml"
        scenario.write_text(QUICK_SCENARIO)
        r = run("export", str(scenario), "-o", str(tmp_path / "r.md"))
        assert r.exit_code == 0, r.output
        assert "Calibration" not in r.stdout and "calibration |" not in (tmp_path / "r.md").read_text()
