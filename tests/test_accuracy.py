"""Accuracy against published serving-engine measurements (catalogs/reference/), and time ranges.

The thresholds are the ones issue #6 sets: KV cache memory, KV cache tokens and maximum concurrency within 5%
of what vLLM printed on every row of vllm_startup_public.csv. Time factors and their held-out errors:
tests/test_holdout.py.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from planner import memory_plan, tpot, ttft
from planner.accuracy import predict as acc
from planner.accuracy.calibration import Calibration, GpuCalibration
from planner.accuracy.validation import MEMORY_TOLERANCE, validate_memory
from planner.engines.profiles import LMDEPLOY, VLLM, engine_profile

GiB = 2**30
PUBLIC = acc.reference_dir() / "vllm_startup_public.csv"
#: Eight benchmark rows of two sources (LMDeploy A100 static batches, vLLM serving); LMDeploy's five are among the
#: rows the shipped time factors are fitted to (planner.accuracy.holdout; bench/loso.py reports held-out errors).
DECODE = acc.reference_dir() / "decode_public.csv"
EXTRA = acc.reference_dir() / "vllm_startup_extra.csv"


def _checks(table):
    return [pytest.param(c, id=f"{c.record_id}-{c.what}") for c in table.checks]


class TestStartupMemory:
    @pytest.mark.parametrize("check", _checks(validate_memory(acc.load_startup_rows(PUBLIC))))
    def test_public_rows_within_five_percent(self, check):
        """Every vLLM start-up row of vllm_startup_public.csv: KV GiB, KV tokens, max concurrency within 5%."""
        assert abs(check.error) <= MEMORY_TOLERANCE, (check.predicted, check.published)

    @pytest.mark.parametrize("check", _checks(validate_memory(acc.load_startup_rows(EXTRA))))
    def test_extra_rows_within_five_percent_or_a_third_of_a_gib(self, check):
        """Extra sourced rows (llm-d, vLLM 0.19.0 sweep): 5%, or 0.3 GiB where the budget is only a few GiB."""
        if check.quantity == "kv_cache_gib":
            assert abs(check.error) <= 0.05 or abs(check.predicted - check.published) <= 0.3
        else:
            assert abs(check.error) <= 0.05

    def test_vllm_budget_is_total_times_utilization_less_weights_and_reserve(self):
        """KV013 (llm-d, H100): 79.18 x 0.9 - 14.99 - (4.76 + 0.13) = 51.38 GiB; with the logged reserve and our
        weights (14.96 GiB) the planner gives the same budget within the weights' 0.03 GiB difference."""
        plan = memory_plan("H100", "llama3.1-8b", 16000, gpus=1, reserve_bytes=(4.76 + 0.13) * GiB)
        assert plan.kv_budget_bytes_per_gpu / GiB == pytest.approx(51.38, abs=0.05)

    def test_max_concurrency_is_tokens_over_whole_blocks(self):
        """KV017 (llm-d): 184,832 tokens in blocks of 128 for 16,000-token requests: 1,444 / 125 = 11.55x."""
        assert acc.max_concurrency(184832, 16000, 128) == pytest.approx(11.552)

    def test_startup_rows_use_their_version_profile(self):
        """KV001 logged vLLM 0.10.1.1 and is predicted with the 'vllm-0.10' profile."""
        rows = {r.record_id: r for r in acc.load_startup_rows(PUBLIC)}
        assert rows["KV001"].profile == "vllm-0.10"
        assert engine_profile("vllm-0.10.1.1").name == "vllm-0.10"

    def test_unknown_model_is_reported_not_raised(self):
        """A row naming a model the catalog lacks gets no prediction (NaN) instead of stopping the table."""
        row = acc.load_startup_rows(PUBLIC)[0]
        table = validate_memory([acc.StartupRow(**{**row.__dict__, "model": "no-such-model"})])
        assert all(math.isnan(c.predicted) for c in table.checks)
        assert not table.passed()


class TestDecodeTime:
    def test_lmdeploy_rows_are_predicted_with_the_lmdeploy_profile(self):
        """Each engine's rows use its own fitted costs: LMDeploy's single-prompt latency (9.1 ms, fitted on its A100
        rows) is its own, vLLM's fit rows have no single-prompt TTFT (0)."""
        rows = acc.load_decode_rows(DECODE)
        assert {r.engine for r in rows} == {"lmdeploy", "vllm"}
        assert LMDEPLOY.prefill_latency_s > VLLM.prefill_latency_s

    def test_prompts_sent_together_interleave_prefills_with_decode(self):
        """DM043 (50 prompts of 1024 tokens at once, vLLM on an A100: 2048 tokens per step): the other prompts'
        prefill chunks run between a request's decode steps, so its TPOT is above the decode step alone and below
        it plus all 49 other prefills spread over its 1023 steps."""
        row = next(r for r in acc.load_decode_rows(DECODE) if r.record_id == "DM043")
        assert row.kind == "serving"
        static = dataclasses.replace(row, kind="static")
        extra = acc.predict_decode(row).tpot_s - acc.predict_decode(static).tpot_s
        one_prefill = ttft("A100", "qwen2-7b", 1024, gpus=1, engine="vllm")
        assert 0 < extra < 49 * one_prefill / 1023

    def test_tpot_is_predicted_at_the_mean_context(self):
        """A row with 1024 prompt and 1024 output tokens is predicted at context 1536 (a row that states no release
        runs vLLM's synchronous host loop, as vLLM 0.13 does)."""
        row = acc.DecodeRow("r", "A100", "qwen2-7b", 1, 1, 1024, 1024, tpot_s=0.01)
        plan = tpot("A100", "qwen2-7b", 1536, batch=1, gpus=1, engine="vllm==0.13.0")
        assert acc.predict_decode(row).tpot_s == pytest.approx(plan)

    def test_missing_columns_are_named(self, tmp_path):
        """A decode CSV without the needed columns is refused with the list of columns a decode file has."""
        p = tmp_path / "m.csv"
        p.write_text("gpu,model\nH100,llama3.1-8b\n")
        with pytest.raises(acc.InvalidInputError, match="missing column.*input_len"):
            acc.load_decode_rows(p)


class TestRanges:
    def test_tpot_range_brackets_the_prediction_with_shipped_residuals(self):
        """Without a calibration, TPOT x (1 + the GPU's held-out residual quantiles) (planner.accuracy.ranges)."""
        from planner.accuracy.ranges import region_residuals

        t = tpot("H100", "llama3.1-8b", 4096, batch=8, calibration=Calibration())
        r_low, r_high = region_residuals("H100 SXM 80GB", acc.DEFAULT_RESIDUALS)[:2]
        low, high = acc.tpot_range("H100", "llama3.1-8b", 4096, batch=8, calibration=Calibration())
        assert (low, high) == pytest.approx((t * (1 + r_low), t * (1 + r_high)))

    def test_calibration_residuals_replace_the_shipped_ones(self):
        """A calibration entry with residual quantiles sets the range for its GPU."""
        cal = Calibration((GpuCalibration(gpu="H100", residual_low=-0.05, residual_high=0.02),))
        t = tpot("H100", "llama3.1-8b", 4096, batch=8, calibration=cal)
        assert acc.tpot_range("H100", "llama3.1-8b", 4096, batch=8, calibration=cal) == pytest.approx(
            (t * 0.95, t * 1.02)
        )

    def test_throughput_range_is_the_inverse(self):
        """Throughput is batch / TPOT, so its low end comes from TPOT's high end."""
        low, high = acc.throughput_range("H100", "llama3.1-8b", 4096, batch=8, calibration=Calibration())
        low_t, high_t = acc.tpot_range("H100", "llama3.1-8b", 4096, batch=8, calibration=Calibration())
        assert (low, high) == pytest.approx((8 / high_t, 8 / low_t))

    def test_ranges_take_the_options_of_the_quantity_they_bracket(self):
        """The range functions take exactly api.tpot's / api.ttft's options (one ``TypedDict`` each, issue 24), so a
        misspelled option is a TypeError rather than a silently ignored keyword."""
        import inspect

        from planner import api

        assert inspect.signature(acc.tpot_range).parameters == inspect.signature(api.tpot).parameters
        assert inspect.signature(acc.ttft_range).parameters == inspect.signature(api.ttft).parameters
        with pytest.raises(TypeError, match="bacth"):
            acc.tpot_range("H100", "llama3.1-8b", 4096, bacth=8)


class TestValidateCommand:
    def test_memory_table_passes_and_informative_rows_name_their_misses(self):
        """The shipped start-up table passes (exit 0 under --check); the informative one has no row outside 5% but
        XL05 (gpt-oss-120b on one H100, 3.33 GiB of KV), whose tolerance is the table's other one: 5% or, where the
        budget is only a few GiB, 0.3 GiB (``test_extra_rows_within_five_percent_or_a_third_of_a_gib``; XN12's note).
        XL05 was inside 5% (3.21 GiB, -3.6%) from when its utilization was read as its row sums (0.95) and the experts
        as vLLM loads them (padded to a hidden size of 3,072) until s199 counted the experts' 39,813,120 biases at the
        checkpoint's bf16 (they had been packed at MXFP4's 0.53125 B): weights 64.50 -> 64.55 GiB against the logged
        64.38, KV 3.16 GiB, -5.2%, a 0.17 GiB miss. The biases are not what is over-counted: vLLM creates them bf16
        and on Hopper (``Mxfp4Backend.TRITON``) ``process_weights_after_loading`` makes them fp32 before 'Model
        loading took' is measured (vllm/model_executor/layers/quantization/mxfp4.py, commit 007d50058a06), 0.07 GiB
        more than counted, so the 0.17 GiB lies elsewhere in the as-loaded count (the padding rule pads every expert
        byte, scales and biases included, by 3,072 / 2,880, an approximation of the kernels' layouts)."""
        from click.testing import CliRunner

        from planner.cli import main

        r = CliRunner().invoke(main, ["validate", "--check", "--memory", str(PUBLIC)])
        assert r.exit_code == 0, r.output
        assert "PASS: vLLM start-up" in r.output
        info = validate_memory(acc.load_startup_rows(EXTRA))
        assert sorted({c.record_id for c in info.checks if abs(c.error) > 0.05}) == ["XL05"]
        xl05 = next(c for c in info.checks if c.record_id == "XL05")
        assert xl05.quantity == "kv_cache_gib" and -0.06 < xl05.error < -0.05
        assert abs(xl05.predicted - xl05.published) < 0.2  # GiB: inside the few-GiB budgets' 0.3

    def test_benchmark_table_fails_the_ttft_goal_and_says_so(self):
        """decode_public.csv misses the issue's TTFT goal (10% / 25%) and the verdict says so with the numbers:
        DM043's 694 ms for 50 prompts of 1024 tokens at once is below what the A100 allows: the mean request waits
        for ~25,600 prompt tokens, 2 x 7.6e9 x 25,600 = 3.9e14 FLOP, 1.25 s at the 312 TFLOP/s peak."""
        from click.testing import CliRunner

        from planner.cli import main

        r = CliRunner().invoke(main, ["validate", "--check", "--decode", str(DECODE)])
        assert r.exit_code == 1, r.output
        verdict = next(line for line in r.output.splitlines() if line.startswith("FAIL:"))
        # TPOT misses too (11.5% / 39%): LMDeploy's TPOTs are printed to 10 ms and no longer fitted (planner.accuracy.holdout)
        assert "TTFT ms: median" in verdict and "worst" in verdict.split("TTFT ms:")[-1]


class TestBenchmarkConventions:
    """How published serving rows are read (perf_public.csv's README: kind, num_prompts, statistic, units)."""

    def test_statistic_cells(self):
        assert (
            acc.statistic_of("median (ttft, itl, e2e); output_throughput = total output tokens / duration") == "median"
        )
        assert acc.statistic_of("mean (TTFT includes queueing when all prompts are sent at once)") == "mean"
        assert acc.statistic_of("average (evalscope), seconds stored as ms") == "mean"
        assert (
            acc.statistic_of("TTFT and TPOT as printed by vllm bench serve (the page does not say mean or median)")
            == ""
        )
        assert acc.statistic_of("") == "mean"

    def test_server_flags_set_the_scheduler_limits(self):
        """XWQ72-001's server ran with --max-num-batched-tokens 65536 (its readme's vllm serve command)."""
        rows = {r.record_id: r for r in acc.load_decode_rows(acc.reference_dir() / "perf_public.csv")}
        assert rows["XWQ72-001"].max_num_batched_tokens == 65536
        assert rows["XWQ72-001"].max_num_seqs is None

    def test_a_flag_in_the_version_cell_is_read(self):
        """XWQ72-001..006's engine_version cell: "rocm/vllm-dev:nightly_main_20250423 (V0 engine: VLLM_USE_V1=0,
        --num-scheduler-steps 10)" (s129); no other row gives a flag there."""
        rows = {r.record_id: r for r in acc.load_decode_rows(acc.reference_dir() / "perf_public.csv")}
        assert {rows[f"XWQ72-00{i}"].scheduler_steps for i in range(1, 7)} == {10}
        assert not rows["XWQ72-001"].chunked_prefill

    def test_fixed_concurrency_without_num_prompts_is_a_closed_loop(self):
        """NIM18-004 (AIPerf, 50 requests kept in flight, run length not stated): 10 prompts per slot."""
        rows = {r.record_id: r for r in acc.load_decode_rows(acc.reference_dir() / "perf_public.csv")}
        assert rows["NIM18-004"].num_prompts == acc.CLOSED_LOOP_PROMPTS_PER_SLOT * 50
        assert rows["NIM18-004"].kind == "serving"

    def test_unknown_run_length_is_not_guessed(self):
        """A max-throughput run without its number of prompts gets no prediction and says why."""
        rows = [r for r in acc.load_decode_rows(acc.reference_dir() / "perf_public.csv") if "num_prompts" in r.problem]
        assert rows and all("not stated" in r.problem for r in rows)
