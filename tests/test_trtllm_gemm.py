"""TensorRT-LLM's dense GEMMs at its own measured bf16 and per-tensor fp8 FLOP rates (s144; switch ``trtllm-gemm``).

Known values: aiconfigurator 0.12.0's TensorRT-LLM GEMM tables (1.3.0rc20 on H100 / H200 / B200 / L40S, 1.0.0 on
A100), as ``bench/trtllm_gemm_extract.py`` keeps them (catalogs/reference/gemm_trtllm_aic.csv).
"""

from __future__ import annotations

import csv

import pytest

from planner import api
from planner.catalog import default_catalog, lookup, resolve
from planner.catalog.loader import shipped_catalog_dir
from planner.catalog.resolve import gpu_numbers
from planner.engines import kernel_curves, kernel_floor, profiles
from planner.model import operators

REFERENCE = shipped_catalog_dir() / "reference"
TRT_PROFILES = ("tensorrt-llm", "tensorrt-llm-0")


@pytest.fixture
def trtllm_gemm(monkeypatch):
    """The TensorRT-LLM profiles take the multipliers (the switch's setting, whether or not it ships), with the
    catalog numbers' memo emptied so no earlier resolution stands."""
    monkeypatch.setattr(kernel_curves, "TENSORRT_LLM_GEMM_PROFILES", TRT_PROFILES)
    monkeypatch.setattr(lookup, "_MEMO", {})
    monkeypatch.setattr(lookup, "_BY_IDENTITY", {})
    monkeypatch.setattr(resolve, "_ONE", {})


class TestTheFit:
    @pytest.mark.parametrize(
        ("gpu", "dtype", "index"),
        [(g, d, i) for g in sorted(kernel_curves.TENSORRT_LLM_GEMM_FLOP_SCALES) for i, d in enumerate(("bfloat16", "fp8"))
         if not (g == "A100 SXM 80GB" and d == "fp8")],
    )  # fmt: skip
    def test_shipped_multiplier_is_the_fit(self, gpu, dtype, index):
        """TENSORRT_LLM_GEMM_FLOP_SCALES re-derived from the shipped calls (1,710 a GPU and dtype; A100 1,596, bf16
        only): per-tensor fp8 H100 1.17, H200 1.13; bf16 within 0.93-1.00."""
        scale, before, after, calls = kernel_floor.dense_gemm_flop_scale(gpu, dtype)
        assert scale == pytest.approx(kernel_curves.TENSORRT_LLM_GEMM_FLOP_SCALES[gpu][index], abs=0.005)
        assert calls == (1596 if gpu == "A100 SXM 80GB" else 1710)
        assert after <= before + 0.005  # the fit does not price the calls worse than the curve

    def test_hopper_fp8_is_faster_than_the_curve_and_bf16_is_not(self):
        """The finding the multipliers carry: TensorRT-LLM's per-tensor fp8 GEMM above vLLM's curve on Hopper, its
        bf16 at it (within 2%)."""
        for gpu in ("H100 SXM 80GB", "H200 SXM 141GB"):
            bf16, fp8 = kernel_curves.TENSORRT_LLM_GEMM_FLOP_SCALES[gpu]
            assert fp8 >= 1.10 and abs(bf16 - 1.0) <= 0.02 + 1e-9

    def test_a_quoted_call(self):
        """H100, per-tensor fp8, 8,192 x 8,192 x 8,192: 0.885 ms measured (1,243 TFLOP/s); the curve's 909 TFLOP/s
        says 1.21 ms, its rate x 1.17 1.04 ms."""
        with (REFERENCE / kernel_floor.TENSORRT_LLM_GEMM_FILE_NAME).open(newline="") as fh:
            got = [float(r["latency_ms"]) for r in csv.DictReader(fh)
                   if (r["gpu"], r["dtype"], r["m"], r["n"], r["k"]) == ("H100 SXM 80GB", "fp8", "8192", "8192", "8192")]  # fmt: skip
        assert len(got) == 1
        assert got[0] == pytest.approx(0.885, abs=0.001)
        assert 2 * 8192**3 / (got[0] * 1e-3) == pytest.approx(1.243e15, rel=0.002)


class TestWhoTakesIt:
    def test_off_by_default_profiles_and_gpus(self, trtllm_gemm):
        """With the switch's setting: both TensorRT-LLM profiles on H100 and on GH200 (H100's curves) take (0.98,
        1.17); vLLM keeps 1; MI300X (another vendor's borrowed curves) keeps 1."""
        cat = default_catalog()
        keys = ("dense_gemm_bf16_flop_scale", "dense_gemm_fp8_flop_scale")
        for engine in TRT_PROFILES:
            for gpu in ("H100 SXM 80GB", "GH200 120GB"):
                got = gpu_numbers(cat.gpu(gpu), profiles.engine_profile(engine))
                assert tuple(got[k] for k in keys) == (0.98, 1.17)
        got = gpu_numbers(cat.gpu("H100 SXM 80GB"), profiles.engine_profile("vllm"))
        assert tuple(got[k] for k in keys) == (1.0, 1.0)
        got = gpu_numbers(cat.gpu("MI300X"), profiles.engine_profile("tensorrt-llm"))
        assert tuple(got[k] for k in keys) == (1.0, 1.0)


class TestTheDenseTime:
    def test_prefill_gets_faster_by_the_fp8_rate(self, trtllm_gemm):
        """Llama-3.1-8B fp8 on one H200, 8,192 prompt tokens, TensorRT-LLM 0.x: the prefill is compute-bound dense
        GEMMs in the main, so its time falls by most of 1 - 1 / 1.13 (11.5%): 8.3%; vLLM's does not move."""
        on = api.prefill("H200 SXM 141GB", "Llama-3.1-8B", 8192, weight_precision="fp8", engine="tensorrt-llm-0")
        vllm = api.prefill("H200 SXM 141GB", "Llama-3.1-8B", 8192, weight_precision="fp8", engine="vllm")
        kernel_curves.TENSORRT_LLM_GEMM_PROFILES = ()
        lookup._MEMO.clear()
        lookup._BY_IDENTITY.clear()
        resolve._ONE.clear()
        off = api.prefill("H200 SXM 141GB", "Llama-3.1-8B", 8192, weight_precision="fp8", engine="tensorrt-llm-0")
        vllm_off = api.prefill("H200 SXM 141GB", "Llama-3.1-8B", 8192, weight_precision="fp8", engine="vllm")
        assert 0.88 < float(on.ttft_s) / float(off.ttft_s) < 0.95
        assert float(vllm.ttft_s) == pytest.approx(float(vllm_off.ttft_s), rel=1e-12)

    def test_which_math_takes_which_multiplier(self):
        """16-bit math takes the bf16 multiplier, 8-bit math (fp8 peak 2 x bf16) the fp8 one, fp4 math (4 x) none."""
        from planner.model.facts import EngineFacts, GpuFacts

        limits = EngineFacts.__new__(EngineFacts)
        object.__setattr__(limits, "dense_gemm_bf16_flop_scale", 0.95)
        object.__setattr__(limits, "dense_gemm_fp8_flop_scale", 1.17)
        for peak, want in ((1.0e15, 0.95), (2.0e15, 1.17), (4.0e15, 1.0)):
            gpu = GpuFacts.__new__(GpuFacts)
            object.__setattr__(gpu, "peak_flop_per_s", peak)
            object.__setattr__(gpu, "bf16_peak_flop_per_s", 1.0e15)
            assert operators.dense_gemm_flop_scale(gpu, limits) == want


@pytest.mark.libreoffice
def test_workbook_computes_it_with_parity(tmp_path, monkeypatch, trtllm_gemm):
    """A TensorRT-LLM 0.x what-if workbook (Llama-3.1-8B fp8, 1 x H200, batch 64) recalculated by LibreOffice: every
    probed cell equals the model under "tensorrt-llm-0" with the dense multipliers (the dense GEMM formula reads the
    GPU sheet's dense_gemm_fp8_flop_scale)."""
    import workbook_support as ws

    from planner.workbook.build import build_whatif
    from planner.workbook.calc import SCENARIOS

    ws.require_libreoffice()
    engine = "tensorrt-llm-0"
    plain = ws._options
    monkeypatch.setattr(ws, "_options", lambda s, n=None: {**plain(s, n), "engine": engine})
    monkeypatch.setitem(
        ws.MODEL,
        "prefill",
        lambda s, n, a: api.prefill(
            s["gpu"],
            s["model"],
            s["context"],
            gpus=n,
            weight_precision=s.get("weight_precision"),
            kv_precision=s.get("kv_precision"),
            memory_utilization=s.get("memory_utilization"),
            engine=engine,
        ),  # fmt: skip
    )
    inputs = dict(gpu="H200 SXM 141GB", model="Llama-3.1-8B", context=4096, kv_precision=None, weight_precision="fp8")
    inputs |= dict(gpus=1, memory_utilization=None, price_per_gpu_hour=None, batch=64, compare_model=None)
    spec = build_whatif(engine=engine)
    wb = ws.recalculate_inputs(spec, {"trt": inputs}, tmp_path)["trt"]
    factors = ws.stored_rate_factors(spec)
    per = {key: {**ws.scenario_inputs(inputs, key), "rate_factor": factors[key]} for key, _, _ in SCENARIOS}
    wrong = [
        f"{p.sheet}!{p.ref} {p.scenario} {p.quantity}: sheet {wb[p.sheet][p.ref].value!r}"
        for p in spec.probes
        if not ws.agrees(wb[p.sheet][p.ref].value, ws.expected(per[p.scenario], p.quantity), p.scale)
    ]
    assert not wrong, "\n".join(wrong[:20])
