"""TensorRT-LLM 0.x's MoE (s142): its engines take TensorRT-LLM's own grouped-GEMM halves and, for fp8 experts
(per tensor in 0.x), TensorRT-LLM's measured per-tensor fp8 grouped-GEMM rate.

Known values: aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 CUTLASS fused-MoE calls
(catalogs/reference/moe_trtllm_fp8_aic.csv, ``bench/trtllm_moe_extract.py --fp8``).
"""

from __future__ import annotations

import csv

import pytest

from planner.catalog import default_catalog
from planner.catalog.loader import shipped_catalog_dir
from planner.catalog.resolve import gpu_numbers
from planner.deploy import deploy
from planner.engines import kernel_curves, kernel_floor, profiles
from planner.model import operators
from planner.model.decode import experts_touched, step_overhead_s
from planner.options import DecodeOptions, Options

REFERENCE = shipped_catalog_dir() / "reference"


class TestPerTensorFp8Rate:
    @pytest.mark.parametrize("gpu", sorted(kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES))
    def test_shipped_multiplier_is_the_fit(self, gpu):
        """TENSORRT_LLM_MOE_FP8_FLOP_SCALES re-derived from the shipped per-tensor fp8 calls (H100 1.60, H200 1.57);
        the fit more than halves the calls' median |log error| (0.23 -> 0.09, 0.26 -> 0.07)."""
        scale, before, after = kernel_floor.moe_fp8_flop_scale(
            gpu, REFERENCE / kernel_floor.TENSORRT_LLM_MOE_FP8_FILE_NAME
        )
        assert scale == pytest.approx(kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES[gpu], abs=0.005)
        assert before > 0.2 and after < 0.1

    def test_mixtral_fp8_call_is_the_one_quoted(self):
        """Mixtral-8x7B's shape (4,096 x 14,336, top 2 of 8) on H100 at moe_tp 4, 4,096 tokens, per-tensor fp8:
        0.620 ms measured (the s142 History paragraph)."""
        with (REFERENCE / kernel_floor.TENSORRT_LLM_MOE_FP8_FILE_NAME).open(newline="") as fh:
            got = [
                float(r["latency_ms"])
                for r in csv.DictReader(fh)
                if r["gpu"] == "H100 SXM 80GB" and r["tokens"] == "4096" and (r["tp_size"], r["ep_size"]) == ("4", "1")
                and (r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"]) == ("4096", "14336", "2", "8")
            ]  # fmt: skip
        assert got == [pytest.approx(0.620, abs=0.001)]


def _one_moe_layer_s(engine: str, tokens: float) -> float:
    """One MoE layer of Mixtral-8x7B fp8 on 4 x H100 over ``tokens`` tokens as a step times it (grouped GEMMs over
    the MoE layers + the per-MoE-layer floor), under ``engine``."""
    options = dict(batch=1, gpus=4, weight_precision="fp8", check_fit=False, engine=engine)
    f = deploy("H100 SXM 80GB", "Mixtral-8x7B", 1024, Options.read(DecodeOptions, options, "decode_step")).facts
    m, p, lim = f.model, f.precision, f.limits
    touched = experts_touched(m, tokens)
    experts = operators.expert_weight_bytes(m, p, touched)
    gemms = operators.expert_layers_time_s(f.gpu, lim, experts, m, tokens, 1.0, 4.0, None, touched) / m.moe_layers
    no_floor = lim.__class__(**{**lim.__dict__, "moe_floor_s": 0.0, "moe_floor_per_doubling_s": 0.0,
                                "moe_layer_overhead_s": 0.0})  # fmt: skip
    return gemms + (step_overhead_s(m, lim, tokens) - step_overhead_s(m, no_floor, tokens)) / m.moe_layers


class TestTensorRtLlm0Takes:
    def test_its_engines_take_the_halves_and_the_fp8_rate(self):
        """ "tensorrt-llm-0" on H100 (and GH200, which takes H100's curves): TensorRT-LLM's halves (644.6, 81.6) and
        the per-tensor fp8 multiplier 1.60; 1.x takes the halves only; vLLM neither; on A100 (no TensorRT-LLM
        table of balanced calls) 0.x keeps the unmeasured halves and 1."""
        cat = default_catalog()
        zero = profiles.engine_profile("tensorrt-llm-0")
        keys = ("moe_gemm_half_width", "moe_gemm_half_rows", "moe_fp8_flop_scale")
        for gpu in ("H100 SXM 80GB", "GH200 120GB"):
            got = gpu_numbers(cat.gpu(gpu), zero)
            assert tuple(got[k] for k in keys) == (644.6, 81.6, 1.60)
        got = gpu_numbers(cat.gpu("H100 SXM 80GB"), profiles.engine_profile("tensorrt-llm"))
        assert tuple(got[k] for k in keys) == (644.6, 81.6, 1.0)
        got = gpu_numbers(cat.gpu("H100 SXM 80GB"), profiles.engine_profile("vllm"))
        assert tuple(got[k] for k in keys) == (454.0, 50.5, 1.0)
        got = gpu_numbers(cat.gpu("A100 SXM4 80GB"), zero)
        assert tuple(got[k] for k in keys) == (
            kernel_curves.MOE_GEMM_HALF_WIDTH_UNMEASURED,
            kernel_curves.MOE_GEMM_HALF_ROWS_UNMEASURED,
            1.0,
        )

    def test_mixtral_fp8_layer_is_near_the_measured_call(self):
        """Mixtral-8x7B fp8 on 4 x H100, 4,096 tokens: TensorRT-LLM 0.x's MoE layer within 10% of the measured
        per-tensor fp8 call (0.620 ms; 1.3.0rc20's table), where vLLM's fp8 rate and halves put it ~57% over."""
        measured_s = 0.620e-3
        assert _one_moe_layer_s("tensorrt-llm-0", 4096) == pytest.approx(measured_s, rel=0.10)
        assert _one_moe_layer_s("vllm", 4096) > 1.4 * measured_s

    def test_bf16_experts_are_not_scaled(self):
        """The multiplier is 8-bit math's only: Mixtral in bf16 under 0.x times its experts as 1.x does."""
        options = dict(batch=1, gpus=4, weight_precision="bf16", check_fit=False)
        a = deploy("H100 SXM 80GB", "Mixtral-8x7B", 1024, Options.read(DecodeOptions, {**options, "engine": "tensorrt-llm-0"}, "decode_step")).facts  # fmt: skip
        b = deploy("H100 SXM 80GB", "Mixtral-8x7B", 1024, Options.read(DecodeOptions, {**options, "engine": "tensorrt-llm"}, "decode_step")).facts  # fmt: skip
        t = 4096.0
        touched = experts_touched(a.model, t)
        ea = operators.expert_layers_time_s(a.gpu, a.limits, operators.expert_weight_bytes(a.model, a.precision, touched), a.model, t, 1.0, 4.0, None, touched)  # fmt: skip
        eb = operators.expert_layers_time_s(b.gpu, b.limits, operators.expert_weight_bytes(b.model, b.precision, touched), b.model, t, 1.0, 4.0, None, touched)  # fmt: skip
        assert ea == pytest.approx(eb, rel=1e-12)


@pytest.mark.libreoffice
def test_workbook_computes_it_with_parity(tmp_path, monkeypatch):
    """A TensorRT-LLM 0.x what-if workbook (Mixtral-8x7B fp8, 4 x H100, batch 64) recalculated by LibreOffice:
    every probed cell equals the model under "tensorrt-llm-0" (the MoE formula reads the GPU sheet's
    moe_fp8_flop_scale), and its prefill is the multiplier's (56.7 ms; 66.7 ms at vLLM's fp8 rate and halves when
    written; 56.9 ms before a prefill counted the output head once per prompt, not once per prompt token)."""
    import workbook_support as ws

    from planner import api
    from planner.workbook.build import build_whatif
    from planner.workbook.calc import SCENARIOS

    ws.require_libreoffice()
    engine = "tensorrt-llm-0"
    plain = ws._options
    monkeypatch.setattr(ws, "_options", lambda s, n=None: {**plain(s, n), "engine": engine})
    inputs = dict(gpu="H100 SXM 80GB", model="Mixtral-8x7B", context=4096, kv_precision=None, weight_precision="fp8")
    inputs |= dict(gpus=4, memory_utilization=None, price_per_gpu_hour=None, batch=64, compare_model=None)
    spec = build_whatif(engine=engine)
    wb = ws.recalculate_inputs(spec, {"trt0": inputs}, tmp_path)["trt0"]
    factors = ws.stored_rate_factors(spec)
    per = {key: {**ws.scenario_inputs(inputs, key), "rate_factor": factors[key]} for key, _, _ in SCENARIOS}
    wrong = [
        f"{p.sheet}!{p.ref} {p.scenario} {p.quantity}: sheet {wb[p.sheet][p.ref].value!r}"
        for p in spec.probes
        if not ws.agrees(wb[p.sheet][p.ref].value, ws.expected_probe(inputs, p, per), p.scale)
    ]
    assert not wrong, "\n".join(wrong[:20])
    ttft = api.prefill("H100 SXM 80GB", "Mixtral-8x7B", 4096, gpus=4, weight_precision="fp8", engine=engine).ttft_s
    assert ttft == pytest.approx(0.0567, abs=0.0001)


def test_model_doc_states_the_0x_moe_rule():
    """docs/model.md's "MoE expert GEMMs" bullet named TensorRT-LLM 1.x alone as taking the CUTLASS halves; 0.x takes
    them too since s142, and its per-tensor fp8 multiplier (s150's review)."""
    from doc_support import stated

    h100, h200 = stated(
        "docs/model.md", r"unmeasured\) compute at ([\d.]+) \(H100\) and ([\d.]+) \(H200\) x the fp8 GEMM rate"
    )
    assert (float(h100), float(h200)) == (
        kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES["H100 SXM 80GB"],
        kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES["H200 SXM 141GB"],
    )
    assert stated("docs/model.md", r"TensorRT-LLM 1\.x and 0\.x \(`(tensorrt-llm)` and `(tensorrt-llm-0)`")
    assert set(kernel_curves.TENSORRT_LLM_MOE_PROFILES) == {"tensorrt-llm", "tensorrt-llm-0"}
