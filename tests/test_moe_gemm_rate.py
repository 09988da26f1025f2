"""The MoE grouped GEMM's FLOP rate: narrow experts compute slower than a dense GEMM (``planner.model.operators.
grouped_gemm_flop_fraction``), the half width re-derived from vLLM's measured fused-MoE calls.

Measured values: aiconfigurator 0.12.0's vLLM 0.24.0 kernel database (Apache-2.0), the rows kept in
catalogs/reference/moe_large_tokens_aic.csv by ``bench/moe_large_tokens.py --write``.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.catalog import default_catalog
from planner.deploy import deploy
from planner.engines import kernel_curves, kernel_floor
from planner.model import operators
from planner.model.decode import experts_touched, step_overhead_s
from planner.model.facts import EngineFacts, field_names
from planner.options import DecodeOptions, Options


def _limits(**values) -> EngineFacts:
    return EngineFacts(**{name: values.get(name, 0.0) for name in field_names(EngineFacts)})


def _one_moe_layer_s(gpu: str, model: str, precision: str, gpus: int, tokens: float, engine: str = "vllm") -> float:
    """One MoE layer of ``model`` over ``tokens`` tokens on ``gpus`` GPUs as a step times it: the grouped GEMMs
    (``expert_layers_time_s`` over the MoE layers, / their number) + the per-MoE-layer floor of ``step_overhead_s``."""
    options = dict(batch=1, gpus=gpus, weight_precision=precision, check_fit=False, engine=engine)
    f = deploy(gpu, model, 1024, Options.read(DecodeOptions, options, "decode_step")).facts
    m, p, lim = f.model, f.precision, f.limits
    experts = operators.expert_weight_bytes(m, p, experts_touched(m, tokens))
    gemms = operators.expert_layers_time_s(f.gpu, lim, experts, m, tokens, 1.0, float(gpus)) / m.moe_layers
    floor = (step_overhead_s(m, lim, tokens) - step_overhead_s(m, _limits(**{**lim.__dict__, "moe_floor_s": 0.0,
             "moe_floor_per_doubling_s": 0.0, "moe_layer_overhead_s": 0.0}), tokens)) / m.moe_layers  # fmt: skip
    return gemms + floor


class TestGroupedGemmFraction:
    def test_by_hand(self):
        """w / (w + w0): Qwen3-235B's experts at TP 4 (1,536 / 4 = 384 wide) with w0 = 656 -> 384 / 1,040."""
        assert operators.grouped_gemm_flop_fraction(_limits(moe_gemm_half_width=656.0), 384.0) == pytest.approx(
            384.0 / 1040.0, rel=1e-12
        )

    def test_dense_models_and_the_ideal_engine_keep_the_dense_rate(self):
        """A dense model (width 0) or an engine without kernel curves (w0 = 0): 1, scalar and array alike."""
        assert operators.grouped_gemm_flop_fraction(_limits(moe_gemm_half_width=656.0), 0.0) == 1.0
        assert operators.grouped_gemm_flop_fraction(_limits(), 384.0) == 1.0
        got = operators.grouped_gemm_flop_fraction(_limits(moe_gemm_half_width=656.0), np.array([0.0, 384.0, 7168.0]))
        assert got == pytest.approx([1.0, 384.0 / 1040.0, 7168.0 / 7824.0], rel=1e-12)


class TestMeasuredCalls:
    @pytest.mark.parametrize(
        "model, precision, gpus, tokens, measured_s",
        [
            # H100 SXM, vllm_fp8moe_triton_tritonexperts, hidden 4096, width 1536, 8 of 128 experts, TP 4
            ("Qwen3-235B-A22B-2507", "fp8", 4, 16384.0, 3.45219e-3),
            # H100 SXM, vllm_unquantizedfusedmoe_triton_tritonexperts, hidden 4096, width 14336, 2 of 8 experts, TP 2
            ("Mixtral-8x7B", "bf16", 2, 4096.0, 2.16295e-3),
        ],
    )
    def test_a_step_times_one_moe_layer_as_measured(self, model, precision, gpus, tokens, measured_s):
        """One MoE layer at thousands of tokens within 20% of vLLM's measured fused-MoE call (Qwen3-235B at TP 4
        was 55% too fast at the dense GEMM rate: 384-wide experts compute at 37% of it)."""
        got = _one_moe_layer_s("H100 SXM 80GB", model, precision, gpus, tokens)
        assert got == pytest.approx(measured_s, rel=0.20)


class TestShippedHalfWidths:
    @pytest.mark.parametrize("gpu", sorted(kernel_curves.MOE_GEMM_HALF_WIDTHS))
    def test_shipped_half_width_is_the_fit(self, gpu):
        """MOE_GEMM_HALF_WIDTHS re-derived from the shipped calls (``kernel_floor.moe_gemm_half_width``), to the
        1 they are shipped at; the fit halves the calls' median error (42% -> 20% on H100, 43% -> 21% on H200)."""
        w0, before, after = kernel_floor.moe_gemm_half_width(gpu)
        assert round(w0) == kernel_curves.MOE_GEMM_HALF_WIDTHS[gpu]
        assert before > 0.35 and after < 0.22

    def test_unmeasured_gpus_take_the_measured_mean(self):
        """B200 and A100 have no large-token MoE measurements: the mean of H100's and H200's half widths."""
        from planner.catalog.resolve import gpu_numbers

        mean = sum(kernel_curves.MOE_GEMM_HALF_WIDTHS.values()) / len(kernel_curves.MOE_GEMM_HALF_WIDTHS)
        assert kernel_curves.MOE_GEMM_HALF_WIDTH_UNMEASURED == pytest.approx(mean, abs=0.5)
        cat = default_catalog()
        assert gpu_numbers(cat.gpu("B200"))["moe_gemm_half_width"] == kernel_curves.MOE_GEMM_HALF_WIDTH_UNMEASURED
        assert gpu_numbers(cat.gpu("H100"))["moe_gemm_half_width"] == 683.0

    def test_a_gpu_without_measurements_is_refused_by_the_fit(self):
        """The fit names the GPU it has no calls for."""
        with pytest.raises(ValueError, match="no large-token fused-MoE measurements for B200 180GB"):
            kernel_floor.moe_gemm_half_width("B200 180GB")
