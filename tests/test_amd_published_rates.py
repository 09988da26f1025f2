"""AMD GPUs without kernel tables (issue 21, Build 2): GEMM rates from published matmul benchmarks, checked against the
figures they come from.

Source of every figure below: Stas Bekman, "Maximum Achievable Matmul FLOPS comparison table" (BF16, v2 of
``mamf-finder.py``), https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (commit
b9e2972, read 2026-12-02): NVIDIA H100 SXM 794.5 TFLOP/s (torch 2.7.0+cu126), AMD MI300X 668.4 (torch
2.5.1+ROCm 6.3.42131, TunableOp), AMD MI325X 784.9 (torch 2.6.0+ROCm 6.2.4, 1000 W, TunableOp); theory 1,300 for
both AMD parts (51.4% and 60.4%).
"""

from __future__ import annotations

import pytest

from planner import tpot, ttft
from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_numbers
from planner.engines import kernel_curves
from planner.report import plan

MAMF_TFLOPS = {"H100 SXM 80GB": 794.5, "MI300X": 668.4, "MI325X": 784.9}


def _rate_tflops(name: str, precision: str = "bf16") -> float:
    """The GEMM FLOP rate the model runs a compute-bound GEMM at on ``name`` (fraction x the GPU's own peak)."""
    g = default_catalog().gpu(name)
    field = "gemm_flop_efficiency" if precision == "bf16" else "gemm_fp8_flop_efficiency"
    return gpu_numbers(g)[field] * g.peak_flop_per_s[precision] / 1e12


class TestPublishedMatmulRates:
    def test_the_table_quotes_the_source(self):
        assert kernel_curves.PUBLISHED_MATMUL_TFLOPS == MAMF_TFLOPS

    @pytest.mark.parametrize("name", ["MI300X", "MI325X"])
    def test_derived_rate_is_the_published_figure_within_the_h100_fits_offset(self, name):
        """The derived bf16 rate over the published one equals H100's fitted rate (aiconfigurator's layer-sized
        GEMMs, 806.6 TFLOP/s) over H100's published one (794.5): 1.015, for MI300X 678.6 against 668.4."""
        h100_offset = _rate_tflops("H100 SXM 80GB") / MAMF_TFLOPS["H100 SXM 80GB"]
        assert h100_offset == pytest.approx(806.6 / 794.5, rel=1e-3)
        assert _rate_tflops(name) / MAMF_TFLOPS[name] == pytest.approx(h100_offset, rel=1e-9)
        assert abs(_rate_tflops(name) / MAMF_TFLOPS[name] - 1) < 0.02

    def test_mi300x_against_the_borrowed_fraction(self):
        """Before: H100's fraction of its datasheet (806.6 / 989.4) x MI300X's 1,307.4 = 1,066 TFLOP/s, 1.59x the
        published 668.4; now 678.6 (51.9% of the datasheet; the source: 51.4% of 1,300)."""
        assert _rate_tflops("MI300X") == pytest.approx(806.6 * 668.4 / 794.5, rel=1e-3)
        assert _rate_tflops("MI300X") / 1307.4 == pytest.approx(0.519, abs=0.001)

    def test_fp8_keeps_h100s_fp8_over_bf16_speedup(self):
        """No MAMF fp8 figure for MI300X: H100's fitted fp8 / bf16 (908.8 / 806.6 = 1.127) carries over: 764.6."""
        assert _rate_tflops("MI300X", "fp8") / _rate_tflops("MI300X") == pytest.approx(908.8 / 806.6, rel=1e-3)

    def test_gpus_without_a_published_figure_borrow_as_before(self):
        """H100 PCIe (Hopper, no figure) keeps H100 SXM's fractions; MI355X (CDNA 4, no figure) takes MI300X's, its
        catalog kernel_rates_from (trial 27 F2: the nearest AMD part with published rates, not H100's fraction)."""
        h100 = gpu_numbers(default_catalog().gpu("H100 SXM 80GB"))
        mi300x = gpu_numbers(default_catalog().gpu("MI300X"))
        for name, expected in (("H100 PCIe 80GB", h100), ("MI355X", mi300x)):
            n = gpu_numbers(default_catalog().gpu(name))
            assert n["gemm_flop_efficiency"] == expected["gemm_flop_efficiency"]
            assert n["gemm_fp8_flop_efficiency"] == expected["gemm_fp8_flop_efficiency"]
        assert _rate_tflops("H100 SXM 80GB") == pytest.approx(806.6, rel=1e-3)

    def test_memory_bound_steps_are_unchanged_and_compute_bound_ones_slower(self, monkeypatch):
        """Llama-3.1-70B on 8 x MI300X: a batch-1 decode step (weights read, memory-bound) is unchanged to within
        0.5% by the GEMM rate; a 4,096-token prefill (compute-bound) takes longer than with H100's borrowed fraction,
        by less than the rates' ratio 1,066 / 678.6 (attention and all-reduce are not scaled)."""
        from planner.catalog import lookup, resolve

        def times():
            lookup._MEMO.clear()
            resolve._ONE.clear()
            return ttft("MI300X", "llama3.1-70b", 4096, gpus=8), tpot("MI300X", "llama3.1-70b", 1024, batch=1, gpus=8)

        ttft_s, tpot_s = times()
        monkeypatch.setattr(kernel_curves, "PUBLISHED_MATMUL_TFLOPS", {})
        borrowed_ttft_s, borrowed_tpot_s = times()
        monkeypatch.undo()
        lookup._MEMO.clear()
        resolve._ONE.clear()
        assert tpot_s == pytest.approx(borrowed_tpot_s, rel=0.005)
        assert 1.1 < ttft_s / borrowed_ttft_s < 1066 / 678.6

    def test_a_plan_says_the_curves_are_not_measured(self):
        warnings = plan("MI300X", "llama3.1-70b", 4096, gpus=8).warnings
        assert any("kernel curves not measured on MI300X" in w and "668.4 / 794.5" in w for w in warnings)
        mi355 = plan("MI355X", "llama3.1-70b", 4096, gpus=8).warnings
        assert any("kernel curves not measured on MI355X" in w and "H100 SXM 80GB's fractions" in w for w in mi355)
        assert not any("kernel curves not measured" in w for w in plan("H100", "llama3.1-70b", 4096, gpus=8).warnings)


class TestRangeOfAnotherVendorsCurves:
    def test_the_miss_is_the_borrowed_gemm_rate_over_the_published_one(self):
        """H100's fitted fraction of its datasheet on MI300X's peak (806.6 / 989.4 x 1,307.4 = 1,066 TFLOP/s) over
        the published-derived rate (806.6 x 668.4 / 794.5 = 678.6): 1,307.4 x 794.5 / (989.4 x 668.4) = 1.571,
        larger than MI325X's (1,066 / 796.9 = 1.338)."""
        miss = kernel_curves.borrowed_rate_miss(default_catalog())
        assert miss == pytest.approx(1307.4 * 794.5 / (989.4 * 668.4), rel=2e-3)

    @pytest.mark.parametrize("name", ["MI300X", "MI355X"])
    def test_amd_ranges_move_out_by_the_miss_and_say_so(self, name):
        """The range is the held-out region's (widened as before), low -> (1 + low) / 1.571 - 1 and high ->
        (1 + high) x 1.571 - 1, rounded outwards to whole percent; the note and 'widened' name it."""
        from planner.accuracy import ranges
        from planner.accuracy.calibration import residual_range
        from planner.engines.profiles import DEFAULT_RESIDUALS

        miss = kernel_curves.borrowed_rate_miss(default_catalog())
        before = ranges.region_residuals(name, DEFAULT_RESIDUALS, gpus=8, engine="vllm")
        after = residual_range(name, "vllm", gpus=8)
        assert after.low == pytest.approx(ranges._shift(before.low, 1 / miss))
        assert after.high == pytest.approx(ranges._shift(before.high, miss))
        assert after.low < before.low and after.high > before.high
        assert (1 + after.high) / (1 + before.high) == pytest.approx(miss, abs=0.01)
        text = f"kernel curves of H100 SXM 80GB stand in on {name} (x1.57 either way"
        assert text in after.widened and text in after.note

    def test_nvidia_borrowers_and_the_ideal_engine_are_not_moved(self):
        """H100 PCIe borrows H100 SXM's curves (its own vendor's): no curves widening; engine 'ideal' has no curves."""
        from planner.accuracy.calibration import residual_range

        assert "kernel curves" not in residual_range("H100 PCIe 80GB", "vllm", gpus=2).note
        assert "kernel curves" not in residual_range("MI300X", "ideal", gpus=8).note
        assert kernel_curves.curves_miss(default_catalog().gpu("H100 SXM 80GB"), default_catalog()) == (1.0, "")


#: BabelStream Triad, TB/s, Azure's AI benchmarking guide results files (ND MI300X v5 at commit bf209ab, 2025-03-27;
#: ND H100 v5, ND H200 v5, ND A100 v4), https://github.com/samuel-bohman/AI-benchmarking-guide/tree/2b25b69/Azure_Results.
STREAM_TRIAD_TBPS = {"A100 SXM 80GB": 1.70, "H100 SXM 80GB": 2.97, "H200 SXM 141GB": 4.18, "MI300X": 4.10}


def _byte_rate_tbps(name: str, field: str) -> float:
    """The byte rate (TB/s) the model reads memory at on ``name``: fraction x the GPU's own datasheet bandwidth."""
    g = default_catalog().gpu(name)
    return gpu_numbers(g)[field] * g.hbm_bandwidth_bytes_per_s / 1e12


class TestPublishedStreamBandwidth:
    def test_the_table_quotes_the_source(self):
        assert kernel_curves.PUBLISHED_STREAM_TBPS == STREAM_TRIAD_TBPS

    def test_mi300x_reads_memory_at_h100s_measured_rates_times_the_triad_ratio(self):
        """H100's fitted GEMM and decode-attention byte rates (2.886 and, for a 16-bit cache, 2.815 TB/s;
        aiconfigurator's kernels) x 4.10 / 2.97: 3.984 and 3.886 TB/s, where H100's fractions of its datasheet gave
        0.8615 x 5.3 = 4.566 and 4.454; an 8-bit cache 1.826 x 4.10 / 2.97 = 2.521. Measured STREAM on MI300X is
        4.0-4.28 TB/s over its five kernels, under the borrowed 4.566."""
        assert _byte_rate_tbps("MI300X", "gemm_bandwidth_efficiency") == pytest.approx(2.886 * 4.10 / 2.97, rel=1e-9)
        assert _byte_rate_tbps("MI300X", "attention_bandwidth_efficiency") == pytest.approx(2.815 * 4.10 / 2.97,
                                                                                             rel=1e-9)  # fmt: skip
        assert _byte_rate_tbps("MI300X", "attention_fp8_bandwidth_efficiency") == pytest.approx(
            1.826 * 4.10 / 2.97, rel=1e-9
        )
        assert _byte_rate_tbps("MI300X", "gemm_bandwidth_efficiency") < 4.28 < 2.886 / 3.35 * 5.3

    @pytest.mark.parametrize("name, within", [("H200 SXM 141GB", 0.03), ("A100 SXM 80GB", 0.13)])
    def test_the_method_checked_where_both_gpus_have_kernel_tables(self, name, within):
        """H100's GEMM byte rate x (Triad of ``name`` / H100's) against ``name``'s own fitted rate: H200 4.06 against
        3.98 TB/s (+2%), A100 1.65 against 1.47 (+12%); in both closer than H100's fraction of the datasheet times
        ``name``'s datasheet (+4%, +19%)."""
        measured = _byte_rate_tbps(name, "gemm_bandwidth_efficiency")
        scaled = 2.886 * STREAM_TRIAD_TBPS[name] / STREAM_TRIAD_TBPS["H100 SXM 80GB"]
        datasheet = 2.886 / 3.35 * default_catalog().gpu(name).hbm_bandwidth_bytes_per_s / 1e12
        assert abs(scaled / measured - 1) < within
        assert abs(scaled / measured - 1) < abs(datasheet / measured - 1)

    def test_gpus_without_a_figure_take_mi300xs_fractions(self):
        """MI325X and MI355X (no Triad figure found) take MI300X's STREAM-scaled fractions of the datasheet, their
        catalog kernel_rates_from (trial 27 F2), not H100 SXM's: 2.886 x 4.10 / 2.97 / 5.3 = 0.752 for GEMM weights."""
        mi300x = gpu_numbers(default_catalog().gpu("MI300X"))
        assert mi300x["gemm_bandwidth_efficiency"] == pytest.approx(0.752, abs=0.001)
        for name in ("MI325X", "MI355X"):
            n = gpu_numbers(default_catalog().gpu(name))
            assert n["gemm_bandwidth_efficiency"] == mi300x["gemm_bandwidth_efficiency"]
            assert n["attention_bandwidth_efficiency"] == mi300x["attention_bandwidth_efficiency"]

    def test_a_plan_names_the_stream_figures(self):
        warnings = plan("MI300X", "llama3.1-70b", 4096, gpus=8).warnings
        assert any("memory byte rates H100 SXM 80GB's x 4.1 / 2.97 (published STREAM Triad" in w for w in warnings)
        mi325 = plan("MI325X", "llama3.1-70b", 4096, gpus=8).warnings
        assert any("its memory byte rates MI300X's fractions of the datasheet" in w for w in mi325)


AITER_TABLE = "gemm_fp8_block_mi300x_aiter.csv"


def _aiter_rows():
    import csv

    from planner.catalog.loader import shipped_catalog_dir

    with (shipped_catalog_dir() / "reference" / AITER_TABLE).open(newline="") as f:
        return list(csv.DictReader(f))


class TestMi300xOwnGemmTable:
    """MI300X's own measured GEMMs (issue 21, Build 2): AMD aiter's CK block-scale FP8 GEMMs as its tuner timed them
    on "AMD MI300X (gfx942, 304 CUs)", AITER 0.1.13.post1 (https://github.com/ROCm/aiter/pull/3324, merged
    2026-05-26; tables ``aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_{qwen3_vl_235b,qwen3_vl_32b,
    qwen36_27b}.csv`` at commit d6486abc8d), copied by ``bench/aiter_extract.py``."""

    def test_the_table_holds_aiters_measured_times(self):
        """5,704 GEMMs of 16-16,384 rows; M 16, N 5,120, K 5,120 (Qwen3.6-27B's o_proj at TP 1) took 17.9804 us in
        the Qwen3-VL-32B and Qwen3.6-27B tables (stored to 4 significant figures)."""
        rows = _aiter_rows()
        assert len(rows) == 5704
        assert {int(r["m"]) for r in rows} >= {16, 16384} and max(int(r["m"]) for r in rows) == 16384
        (row,) = [r for r in rows if (r["m"], r["n"], r["k"]) == ("16", "5120", "5120")]
        assert float(row["us"]) == 17.98

    def test_the_fit_re_derives_the_documented_figures(self):
        """``kernel_extract``'s GEMM fit with the byte rate held at H100's measured 2.886 TB/s x 4.10 / 2.97 (the
        published STREAM ratio): floor 15.9 us, fp8 813.9 TFLOP/s, median |error| 3.8% over the table."""
        from planner.engines.kernel_floor import own_gemm_fit

        h100 = float(kernel_curves.read_curves()["H100 SXM 80GB"]["gemm_bytes_per_s"])
        ratio = kernel_curves.published_stream_ratio("MI300X", "H100 SXM 80GB")
        floor_s, fp8_flop_per_s, median, _ = own_gemm_fit(h100 * ratio)
        assert (floor_s, fp8_flop_per_s) == pytest.approx(kernel_curves.AITER_GEMM_MI300X, rel=5e-3)
        assert median == pytest.approx(0.038, abs=0.002)

    def test_the_borrowed_gemm_curve_is_fast_at_a_decode_steps_rows(self):
        """The GEMM curve MI300X runs (H100's floor, STREAM-scaled byte rate, MAMF-scaled fp8 rate) against the table:
        median error -37% at 65-512 rows (a decode step's batch), within 10% at 4,097-16,384 (a prefill's)."""
        import numpy as np

        g = default_catalog().gpu("MI300X")
        f = gpu_numbers(g)
        rows = _aiter_rows()
        m, n, k, us = (np.array([float(r[c]) for r in rows]) for c in ("m", "n", "k", "us"))
        byte_rate = g.hbm_bandwidth_bytes_per_s * f["gemm_bandwidth_efficiency"]
        flop_rate = g.peak_flop_per_s["fp8"] * f["gemm_fp8_flop_efficiency"]
        model_s = f["gemm_floor_s"] + np.maximum((n * k + m * (k + n) * 2) / byte_rate, 2 * m * n * k / flop_rate)
        error = model_s / (us * 1e-6) - 1
        decode, prefill = (m >= 65) & (m <= 512), m > 4096
        assert np.median(error[decode]) == pytest.approx(-0.367, abs=0.01)
        assert abs(np.median(error[prefill])) < 0.10
