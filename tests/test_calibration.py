"""Calibration by the user: fitting factors to measurements, the calibration file, and ``planner calibrate``."""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner import tpot
from planner.accuracy.calibration import Calibration, GpuCalibration, load_calibration, write_calibration
from planner.accuracy.fit import cross_validated_residuals, fit_time_factors
from planner.accuracy.predict import DecodeRow, predict_decode_rows, quantiles
from planner.cli import main
from planner.engines.profiles import VLLM
from planner.errors import OutputExistsError

TRUE = dict(bandwidth_efficiency=0.7, decode_flop_efficiency=0.45, prefill_flop_efficiency=0.5, step_overhead_s=0.002)


def synthetic_rows(factors=TRUE):
    """H100 / Llama-3.1-8B rows made by the planner itself with known factors: memory-bound (small batches),
    compute-bound (batch 512, short context) and static batches whose first-token latency shows the prefill."""
    grid = [(b, c, 0) for b in (1, 8, 64, 512) for c in (256, 4096)] + [(16, 1024, 256), (4, 2048, 128)]
    rows = [DecodeRow(f"s{i}", "H100", "llama3.1-8b", 1, b, c, o) for i, (b, c, o) in enumerate(grid)]
    p = predict_decode_rows(rows, engine=VLLM.with_(**factors), calibration=Calibration())
    return [
        DecodeRow(
            **{
                **r.__dict__,
                "tpot_s": float(p.tpot_s[i]),
                "throughput_tokens_per_s": float(p.throughput_tokens_per_s[i]),
                "ttft_s": float(p.ttft_s[i]) if r.output_len else float("nan"),
            }
        )
        for i, r in enumerate(rows)
    ]


class TestFit:
    def test_round_trip_recovers_known_factors_within_one_percent(self):
        """Measurements made from known factors are fitted back within 1% (overhead within 1% of its value)."""
        fit = fit_time_factors(synthetic_rows(), VLLM)
        for name, value in TRUE.items():
            assert fit.factors[name] == pytest.approx(value, rel=0.01), name
        assert fit.worst_abs_error() < 1e-3

    def test_fit_reduces_the_error(self):
        """Starting from the shipped defaults, the fit's median error after is below the one before."""
        fit = fit_time_factors(synthetic_rows(), VLLM)
        assert fit.median_abs_error(after=True) < fit.median_abs_error(after=False)

    def test_unknown_field_is_refused_with_the_fittable_ones(self):
        """Asking to fit something that is not a time factor names the ones that can be fitted."""
        with pytest.raises(Exception, match="fields that can be fitted: bandwidth_efficiency"):
            fit_time_factors(synthetic_rows(), VLLM, fields=("colour",))

    def test_a_profile_attribute_that_is_no_time_factor_is_refused(self):
        """``name`` is an EngineProfile attribute but no factor a calibration can hold: refused, not fitted (a
        check by ``hasattr`` let it through); the list names the new MoE term."""
        with pytest.raises(Exception, match="cannot fit name; .*moe_layer_overhead_s"):
            fit_time_factors(synthetic_rows(), VLLM, fields=("name",))

    def test_factors_resting_on_their_bound_do_not_stall_the_fit(self, tmp_path, monkeypatch):
        """Two H100 rows (Llama 2 7B at batch 8 and 16, 12.5 and 14 ms TPOT) leave the three efficiencies at their
        bound of 1 and fit the step overhead (4.05 ms): the fit stops within 100 evaluations of the model (the
        hand-written Gauss-Newton it replaced clipped its steps at the bound and crept to its cap: 587, ~5 s)."""
        from planner.accuracy import fit
        from planner.cli.accuracy import read_measurements

        path = tmp_path / "runs.csv"
        path.write_text("gpu,model,batch,context,tpot_ms\nH100,llama2-7b,8,1000,12.5\nH100,llama2-7b,16,1000,14\n")
        calls = []
        residuals = fit.residuals
        monkeypatch.setattr(fit, "residuals", lambda *a, **k: calls.append(1) or residuals(*a, **k))
        result = fit_time_factors(read_measurements(path, None, None, 1), VLLM)
        assert len(calls) <= 100
        assert result.factors["step_overhead_s"] == pytest.approx(4.05e-3, rel=0.01)
        for name in ("bandwidth_efficiency", "decode_flop_efficiency", "prefill_flop_efficiency"):
            assert result.factors[name] == pytest.approx(1.0, abs=1e-6), name
        assert result.worst_abs_error() < result.worst_abs_error(after=False)


class TestCalibrationFile:
    def test_written_file_reads_back(self, tmp_path):
        """A written calibration file loads to the same entries."""
        entry = GpuCalibration(
            gpu="H100 SXM 80GB",
            engine="vllm",
            bandwidth_efficiency=0.812,
            step_overhead_s=0.0021,
            residual_low=-0.05,
            residual_high=0.04,
            source='a "quoted" source',
        )
        path = write_calibration(tmp_path / "c.toml", [entry], header="test")
        assert load_calibration(path).entries == (entry,)

    def test_existing_file_is_not_overwritten_without_force(self, tmp_path):
        """Writing over an existing file raises OutputExistsError and leaves the file as it was."""
        path = tmp_path / "c.toml"
        path.write_text("keep")
        with pytest.raises(OutputExistsError, match="--force"):
            write_calibration(path, [GpuCalibration(gpu="H100", bandwidth_efficiency=0.5)])
        assert path.read_text() == "keep"

    def test_api_uses_the_calibration_for_its_gpu_only(self, tmp_path):
        """A calibration for the H100 stretches the memory-bound kernels' time by the bandwidth ratio (halving the
        factor adds the memory time once, halving it again adds it twice: the kernel floors and overheads stay) and
        leaves the A100 alone."""

        @functools.cache
        def at(efficiency):
            cal = GpuCalibration(
                gpu="H100",
                bandwidth_efficiency=efficiency,
                step_overhead_s=0.0,
                sequence_overhead_s=0.0,
                decode_flop_efficiency=0.6,
                roofline_overlap=1.0,
            )
            return write_calibration(tmp_path / f"c{efficiency}.toml", [cal])

        t = [tpot("H100", "llama3.1-8b", 1024, batch=1, calibration=at(e)) for e in (0.85, 0.425, 0.2125)]
        assert t[2] - t[1] == pytest.approx(2 * (t[1] - t[0]), rel=1e-9)
        assert t[1] - t[0] > 0.5 * t[0]  # batch 1 is memory-bound: the memory time is most of the step
        assert tpot("A100", "llama3.1-8b", 1024, batch=1, calibration=at(0.425)) == tpot(
            "A100", "llama3.1-8b", 1024, batch=1, calibration=Calibration()
        )

    def test_environment_variable_names_the_file(self, tmp_path, monkeypatch):
        """$PLANNER_CALIBRATION is used when no calibration is passed."""
        path = write_calibration(tmp_path / "env.toml", [GpuCalibration(gpu="H100", bandwidth_efficiency=0.2)])
        monkeypatch.setenv("PLANNER_CALIBRATION", str(path))
        assert tpot("H100", "llama3.1-8b", 1024) > tpot("H100", "llama3.1-8b", 1024, calibration=Calibration())


class TestCrossValidatedRange:
    """A calibration's range is what its factors do on rows they were not fitted to (each fold predicted by a fit of
    the others), not the fit's in-sample residuals, which the fit itself narrows."""

    @staticmethod
    @functools.cache
    def _left_out(folds=10):
        rows = TestCrossValidatedRange._with_outlier()
        return cross_validated_residuals(rows, VLLM, folds=folds)

    @staticmethod
    def _with_outlier(factor=1.3):
        rows = synthetic_rows()
        r = rows[3]  # batch 8 at 4,096: one run 30% slower than the rest say
        rows[3] = replace(r, tpot_s=r.tpot_s * factor, throughput_tokens_per_s=r.throughput_tokens_per_s / factor)
        return rows

    def test_a_row_left_out_is_predicted_by_the_others_alone(self):
        """Leave one out (as many folds as rows): the other nine rows are exact, so the fit without the slow row
        recover the true factors and predict it 30% fast: its residuals measured / predicted - 1 are +0.30 (TPOT)
        and 1 / 1.3 - 1 (throughput). Rows are dealt to folds in order, two figures each for the first eight."""
        cv = self._left_out()  # as many folds as rows: leave one out
        assert cv[6:8] == pytest.approx([0.30, 1 / 1.3 - 1], abs=0.005)

    def test_the_in_sample_residuals_are_narrower_than_the_left_out_ones(self):
        """The fit on all ten rows moves towards the slow one, so its in-sample residual there is under +0.30."""
        assert max(fit_time_factors(self._with_outlier(), VLLM).residuals_after) < 0.29
        assert max(self._left_out()) > 0.29

    def test_calibrate_records_the_cross_validated_range_and_says_so(self, tmp_path):
        src = TestCalibrateCommand()._csv(tmp_path / "runs.csv", self._with_outlier())
        out = tmp_path / "cal.toml"
        result = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(out)])
        assert result.exit_code == 0, result.output
        (entry,) = load_calibration(out).entries
        cv_low, cv_high = quantiles(self._left_out(folds=5))
        assert entry.residual_high >= cv_high and entry.residual_low <= cv_low
        assert "each row predicted by a fit of the others, 5 folds; in sample" in result.output


class TestCalibrateCommand:
    def _csv(self, path, rows):
        # engine_version: the release the rows were made with (a DecodeRow without one: the synchronous loop, as
        # 0.13.0's); a row of a user's file that states none is read as plan's release (trial 10, F1)
        lines = ["gpu,model,batch,input_len,output_len,tpot_ms,output_throughput_tok_s,engine_version"]
        lines += [
            f"{r.gpu},{r.model},{r.batch},{r.input_len},{r.output_len},{r.tpot_s * 1e3},{r.throughput_tokens_per_s},"
            f"{r.engine_version or '0.13.0'}"
            for r in rows
        ]
        path.write_text("\n".join(lines) + "\n")
        return path

    def test_writes_a_calibration_and_prints_before_and_after(self, tmp_path):
        """`planner calibrate runs.csv -o cal.toml` fits the H100, writes the file and reports the error change."""
        src = self._csv(tmp_path / "runs.csv", synthetic_rows())
        out = tmp_path / "cal.toml"
        result = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert "H100 SXM 80GB: 10 rows; median |error|" in result.output
        (entry,) = load_calibration(out).entries
        assert entry.bandwidth_efficiency == pytest.approx(0.7, rel=0.02)

    def test_refuses_to_overwrite(self, tmp_path):
        """An existing output file is an error (exit 1) without --force."""
        src = self._csv(tmp_path / "runs.csv", synthetic_rows())
        out = tmp_path / "cal.toml"
        out.write_text("")
        result = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(out)])
        assert result.exit_code == 1 and "exists; pass --force" in result.output

    def test_needs_a_file_or_measure(self, tmp_path):
        """Neither a file nor --measure is a usage error (exit 2) saying what to give."""
        result = CliRunner().invoke(main, ["calibrate", "-o", str(tmp_path / "c.toml")])
        assert result.exit_code == 2 and "give a measurements FILE or --measure" in result.output

    def test_reads_a_benchmark_serving_result(self, tmp_path):
        """A vLLM benchmark_serving JSON with --gpu is one row: concurrency, mean lengths, mean TPOT, throughput."""
        (row,) = synthetic_rows()[-2:-1]
        data = {
            "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "num_prompts": row.batch,
            "completed": row.batch,
            "max_concurrency": row.batch,
            "total_input_tokens": row.batch * row.input_len,
            "total_output_tokens": row.batch * row.output_len,
            "mean_tpot_ms": row.tpot_s * 1e3,
            "output_throughput": row.throughput_tokens_per_s,
        }
        src = tmp_path / "bench.json"
        src.write_text(json.dumps(data))
        result = CliRunner().invoke(main, ["calibrate", str(src), "--gpu", "H100", "-o", str(tmp_path / "c.toml")])
        assert result.exit_code == 0, result.output
        assert "H100 SXM 80GB: 1 row;" in result.output

    def test_gpus_applies_to_a_file_that_does_not_name_the_group(self, tmp_path):
        """``--gpus 2`` is the group of every row of a CSV without a tensor_parallel_size column (its help says so);
        a file with the column keeps its own. s80 found --gpus ignored: a TP 2 file was fitted as TP 1."""
        from planner.cli.accuracy import read_measurements

        plain = self._csv(tmp_path / "runs.csv", synthetic_rows()[:3])
        assert {r.gpus for r in read_measurements(plain, None, None, 2)} == {2}
        named = tmp_path / "named.csv"
        lines = plain.read_text().splitlines()
        named.write_text("\n".join([lines[0] + ",tensor_parallel_size"] + [x + ",4" for x in lines[1:]]) + "\n")
        assert {r.gpus for r in read_measurements(named, None, None, 2)} == {4}
        help_text = " ".join(CliRunner().invoke(main, ["calibrate", "--help"]).output.split())
        assert "output_throughput_tok_s" in help_text  # the column validate and calibrate read, not "throughput"

    def test_benchmark_result_without_gpu_is_refused(self, tmp_path):
        """benchmark_serving files do not name the GPU: --gpu is required and the message says so."""
        src = tmp_path / "bench.json"
        src.write_text("{}")
        result = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(tmp_path / "c.toml")])
        assert result.exit_code == 2 and "pass --gpu" in result.output

    def test_validate_with_a_calibration_predicts_the_time_rows_with_it(self, tmp_path):
        """A calibration halving the achieved bandwidth makes the memory-bound TPOT of DM041 (batch 1) longer."""
        from planner.accuracy.predict import load_decode_rows, predict_decode

        cal = tmp_path / "c.toml"
        write_calibration(cal, [GpuCalibration(gpu="A100 SXM 80GB", bandwidth_efficiency=0.435)])
        result = CliRunner().invoke(
            main, ["validate", "--decode", "catalogs/reference/decode_public.csv", "--calibration", str(cal), "--json"]
        )
        assert result.exit_code == 0, result.output
        rows = {(r["record_id"], r["quantity"]): r for r in json.loads(result.stdout)["rows"]}
        row = next(r for r in load_decode_rows("catalogs/reference/decode_public.csv") if r.record_id == "DM041")
        plain = predict_decode(row, calibration=Calibration()).tpot_s * 1e3
        assert rows[("DM041", "tpot_ms")]["predicted"] > 1.5 * plain


class TestCalibrateSuggestsACheckThatRuns:
    """A user trial: `planner calibrate ctx.csv` (the context form its help offers) warned of its few rows and
    suggested `planner validate --decode ctx.csv --calibration ...`, which refused the file (exit 2, "missing
    column(s) input_len or dataset"). The suggestion is now run as printed."""

    #: Two H100 / Llama 2 7B decode timings at a 1,000-token context (the rows of
    #: ``test_factors_resting_on_their_bound_do_not_stall_the_fit``: its fit is a 4.05 ms step overhead).
    CONTEXT_CSV = "gpu,model,batch,context,tpot_ms\nH100,llama2-7b,8,1000,12.5\nH100,llama2-7b,16,1000,14\n"

    @staticmethod
    def _suggested(stderr: str) -> list[str]:
        import re
        import shlex

        found = re.search(r"check it with: (planner validate .*)$", stderr, re.M)
        assert found, stderr
        words = shlex.split(found.group(1))
        assert words[0] == "planner"
        return words[1:]

    def test_the_check_it_suggests_for_a_context_csv_passes_on_that_file(self, tmp_path):
        """The suggested command exits 0 and compares both rows' TPOT, published 12.5 and 14 ms, at context 1,000
        and no output (how calibrate reads ``context``), predicted with the calibration (within 2% of the fit's
        rows: the two rows fix its two free terms)."""
        src = tmp_path / "ctx.csv"
        src.write_text(self.CONTEXT_CSV)
        out = tmp_path / "my gpus.toml"  # a name with a space: quoted in the suggestion
        fitted = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(out)])
        assert fitted.exit_code == 0, fitted.output
        assert load_calibration(out).entries[0].rows == 2  # the rows fitted, written into the file
        command = self._suggested(fitted.stderr)
        assert command == ["validate", "--decode", str(src), "--calibration", str(out)]
        checked = CliRunner().invoke(main, [*command, "--json"])
        assert checked.exit_code == 0, checked.output
        rows = json.loads(checked.stdout)["rows"]
        assert [(r["quantity"], r["published"]) for r in rows] == [("tpot_ms", 12.5), ("tpot_ms", 14.0)]
        assert all(abs(r["predicted"] / r["published"] - 1) < 0.02 for r in rows), rows
        text = CliRunner().invoke(main, command)
        assert text.exit_code == 0 and "PASS: Benchmarks" in text.stdout
        assert text.stdout.count("B=8 context 1000 static") == 1  # decode timed at that context

    def test_an_engine_given_to_calibrate_is_in_the_check(self, tmp_path):
        """An entry for one engine (--engine sglang) is checked with that engine: the suggestion carries it, and it
        runs (exit 0)."""
        src = tmp_path / "ctx.csv"
        src.write_text(self.CONTEXT_CSV)
        out = tmp_path / "cal.toml"
        fitted = CliRunner().invoke(main, ["calibrate", str(src), "-o", str(out), "--engine", "sglang"])
        assert fitted.exit_code == 0, fitted.output
        command = self._suggested(fitted.stderr)
        assert command[-2:] == ["--engine", "sglang"]
        assert CliRunner().invoke(main, command).exit_code == 0

    def test_no_check_is_suggested_that_validate_cannot_read(self, tmp_path):
        """A CSV whose GPU came from --gpu (a CSV's validate takes no --gpu) is not suggested to validate: the
        warning says which column to fill instead."""
        src = tmp_path / "ctx.csv"
        src.write_text("model,batch,context,tpot_ms\nllama2-7b,8,1000,12.5\nllama2-7b,16,1000,14\n")
        fitted = CliRunner().invoke(main, ["calibrate", str(src), "--gpu", "H100", "-o", str(tmp_path / "c.toml")])
        assert fitted.exit_code == 0, fitted.output
        assert "planner validate --decode" not in fitted.stderr
        assert "put the GPU in the file's gpu column" in fitted.stderr
        refused = CliRunner().invoke(main, ["validate", "--decode", str(src)])
        assert refused.exit_code == 2 and "no gpu column; the context form has gpu, model" in refused.stderr

    def test_a_result_file_gets_the_check_validate_runs_with_the_same_options(self, tmp_path):
        """A closed-loop result file (vllm bench serve --max-concurrency) is fitted at its concurrency, and the check
        calibrate suggests is validate reading the same file with the same --gpu and --gpus; it runs."""
        (row,) = synthetic_rows()[-2:-1]
        bench = tmp_path / "bench.json"
        bench.write_text(json.dumps(closed_loop_result(row)))
        out = tmp_path / "j.toml"
        fitted = CliRunner().invoke(main, ["calibrate", str(bench), "--gpu", "H100", "--gpus", "1", "-o", str(out)])
        assert fitted.exit_code == 0, fitted.output
        hint = fitted.stderr.split("and check it with: ", 1)[1].split()
        assert hint[:3] == ["planner", "validate", "--decode"]
        assert hint[3:] == [str(bench), "--calibration", str(out), "--gpu", "H100", "--gpus", "1"]
        assert CliRunner().invoke(main, hint[1:]).exit_code == 0

    def test_validate_refuses_a_file_of_neither_form_naming_both(self, tmp_path):
        """A CSV with neither input_len nor context is bad input (exit 2) in one line naming both forms' columns."""
        src = tmp_path / "odd.csv"
        src.write_text("gpu,model,batch,tpot_ms\nH100,llama2-7b,8,12.5\n")
        r = CliRunner().invoke(main, ["validate", "--decode", str(src)])
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert "input_len" in r.stderr


def closed_loop_result(row) -> dict:
    """``row`` as vllm bench serve --save-result writes a closed loop of ``row.batch`` (vllm/benchmarks/serve.py:
    request_rate "inf" with --max-concurrency; totals over the completed requests)."""
    return {
        "backend": "vllm",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": row.batch * 4,
        "request_rate": "inf",
        "max_concurrency": row.batch,
        "completed": row.batch * 4,
        "total_input_tokens": row.batch * 4 * row.input_len,
        "total_output_tokens": row.batch * 4 * row.output_len,
        "mean_tpot_ms": row.tpot_s * 1e3,
        "output_throughput": row.throughput_tokens_per_s,
    }


class TestCalibrateReadsResultFilesAsValidateDoes:
    """calibrate read a result file with a reader of its own that took every run for a static batch of its
    num_prompts (or --max-concurrency): a vLLM run at 1 request/s (tests/data/vllm_bench_serve_llama33_70b_tp8_qps1
    .json, surajssd/llm-k8s) became "batch 200", predicted 1,192% off, and a calibration with a prefill efficiency of
    0.02 was written. It now reads them as validate --decode does (planner.accuracy.serving_results)."""

    RATE_RUN = Path(__file__).parent / "data" / "vllm_bench_serve_llama33_70b_tp8_qps1.json"

    def test_a_run_at_a_request_rate_is_not_fitted_and_nothing_is_written(self, tmp_path):
        out = tmp_path / "c.toml"
        cmd = ["calibrate", str(self.RATE_RUN), "--gpu", "H100", "--gpus", "8", "-o", str(out)]
        result = CliRunner().invoke(main, cmd)
        assert result.exit_code == 2, result.output
        assert "a serving run at a rate (no batch: the server chose it) is not fitted" in result.stderr
        assert "planner validate --decode compares its percentiles" in result.stderr
        assert not out.exists()

    def test_the_rows_are_validates_rows(self):
        """The same file read by calibrate's reader and by validate's: the same row (rate 1/s, 200 prompts, each
        request's lengths as the file lists them)."""
        from planner.accuracy.serving_results import read_result_rows
        from planner.catalog import default_catalog
        from planner.cli.accuracy import read_measurements

        (mine,) = read_measurements(self.RATE_RUN, "H100", None, 8)
        (theirs,), _ = read_result_rows(self.RATE_RUN, default_catalog(), gpu="H100", gpus=8)
        from dataclasses import fields

        def same(a, b) -> bool:  # a figure the file does not print is NaN in both (NaN != NaN)
            return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))

        assert all(same(getattr(mine, f.name), getattr(theirs, f.name)) for f in fields(mine))
        assert (mine.request_rate, mine.num_prompts, mine.batch) == (1.0, 200, 0)

    def test_sglang_json_lines_are_read(self, tmp_path):
        """sglang.bench_serving --output-file appends one JSON object a line (python/sglang/bench_serving.py) and
        names no model: --model does; two closed loops are two rows at their concurrency."""
        (row,) = synthetic_rows()[-2:-1]
        lines = []
        for c in (row.batch, row.batch * 2):
            r = closed_loop_result(row) | {"max_concurrency": c, "dataset_name": "random"}
            del r["model_id"], r["num_prompts"]
            lines.append(json.dumps(r | {"backend": "sglang"}))
        src = tmp_path / "sglang.jsonl"
        src.write_text("\n".join(lines) + "\n")
        from planner.cli.accuracy import read_measurements

        rows = read_measurements(src, "H100", "llama3.1-8b", 1)
        assert [r.batch for r in rows] == [row.batch, row.batch * 2]
        assert {r.engine for r in rows} == {"sglang"}


#: A user trial's three H100 rows of Llama 3.1 8B (s195): decode timed at a context, TPOT in ms.
TRIAL_ROWS = (
    "gpu,model,batch,context,tpot_ms\n"
    "H100,llama3.1-8b,1,1024,7.5\nH100,llama3.1-8b,16,1024,9.0\nH100,llama3.1-8b,64,2048,14.0\n"
)


def trial_rows(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(TRIAL_ROWS)
    return path


class TestAFitWorseThanNone:
    def test_calibrate_warns_when_its_factors_predict_the_rows_worse_at_the_median(self, tmp_path):
        """A user trial (s195): three H100 rows of Llama 3.1 8B (TPOT 7.5 ms at batch 1 and 1,024 tokens, 9.0 at 16,
        14.0 at 64 and 2,048) fitted to factors whose median |error| on those rows rose from 1.3% to 5.4% (the fit
        lowers the worst one), and the file was written without a word. Where the median rises, calibrate now
        warns and names the way out; where it falls, it does not."""
        rows = trial_rows(tmp_path)
        out = CliRunner().invoke(main, ["calibrate", str(rows), "-o", str(tmp_path / "c.toml")])
        assert out.exit_code == 0, out.output
        before, after = (float(x) for x in re.search(r"median \|error\| ([\d.]+)% -> ([\d.]+)%", out.output).groups())
        worse = "predict these rows worse at the median than the model without them" in out.output
        assert worse == (after > before)
        assert after > before and "leave this GPU out of the file" in out.output

    def test_a_group_the_engine_cannot_run_is_named_not_blamed_on_missing_figures(self, tmp_path):
        """Rows on 3 and 5 GPUs (Llama 2 70B's 64 heads do not split so under vLLM) were dropped without a word and
        calibrate said "no measured TPOT, throughput or first-token latency to fit" (trial s195); the reason is
        validate's, per row."""
        rows = tmp_path / "tp3.csv"
        rows.write_text(
            "gpu,model,batch,input_len,output_len,tpot_ms,ttft_ms,tensor_parallel_size\n"
            "H100,llama2-70b,1,512,128,20,100,3\nH100,llama2-70b,1,512,128,20,100,5\n"
        )
        out = CliRunner().invoke(main, ["calibrate", str(rows), "-o", str(tmp_path / "c.toml")])
        assert out.exit_code == 2, out.output
        assert (
            "none of the 2 rows can be used; the first: line 2: Llama-2-70B cannot run on a tensor-parallel "
            "group of 3 GPUs" in out.output
        )
        assert "no measured TPOT" not in out.output and not (tmp_path / "c.toml").exists()

    def test_calibrate_states_each_error_as_validate_does(self, tmp_path):
        """One ratio on both surfaces: predicted / measured - 1. The trial (s195) read "worst 149.4%" from calibrate
        (measured / predicted - 1) and -59.9% from validate for one row. Before the fit calibrate's worst is the
        largest |error| validate prints for the same rows."""
        rows = trial_rows(tmp_path)
        cal = CliRunner().invoke(main, ["calibrate", str(rows), "-o", str(tmp_path / "c.toml")])
        val = CliRunner().invoke(main, ["validate", "--decode", str(rows)])
        worst_before = float(re.search(r"worst ([\d.]+)% ->", cal.output).group(1))
        printed = [abs(float(e)) for e in re.findall(r"\s([+-][\d.]+)%\s", val.output)]
        # 9.2%: the rows state no release, so both read them as plan's (vLLM 0.19.0's asynchronous loop; trial 10,
        # F1); 23.5% on both with the synchronous loop they were read with before
        assert worst_before == pytest.approx(max(printed), abs=0.05) and worst_before == pytest.approx(9.2, abs=0.1)

    def test_a_release_on_engine_reads_the_rows_as_validate_does(self, tmp_path):
        """--engine vllm==0.10.0 stands for the release of rows that state none, in calibrate as in validate: both
        read the trial's rows with the synchronous host loop (the 23.5% worst above) and the check calibrate suggests
        carries the release, so it reads them alike."""
        rows = trial_rows(tmp_path)
        out = tmp_path / "c.toml"
        cal = CliRunner().invoke(main, ["calibrate", str(rows), "--engine", "vllm==0.10.0", "-o", str(out)])
        val = CliRunner().invoke(main, ["validate", "--decode", str(rows), "--engine", "vllm==0.10.0"])
        worst_before = float(re.search(r"worst ([\d.]+)% ->", cal.output).group(1))
        printed = [abs(float(e)) for e in re.findall(r"\s([+-][\d.]+)%\s", val.stdout)]
        assert worst_before == pytest.approx(max(printed), abs=0.05) and worst_before == pytest.approx(23.5, abs=0.1)
        hint = cal.stderr.split("and check it with: ", 1)[1].split()
        assert hint[-2:] == ["--engine", "vllm==0.10.0"]
