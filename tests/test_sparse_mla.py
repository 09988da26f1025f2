"""DeepSeek Sparse Attention through vLLM's fp8 sparse MLA kernel (``planner.model.operators.sparse_mla_time_s``).

Measured values: aiconfigurator 0.12.0's vLLM 0.24.0 ``dsa_generation_module`` tables on H100 SXM and H200 SXM
(Apache-2.0; one layer's whole DeepSeek-V3.2 attention module in a decode step), the rows kept in
catalogs/reference/dsa_decode_aic.csv by ``bench/dsa_kernel_extract.py``. Engine rules: vLLM's
vllm/v1/attention/backends/mla/flashmla_sparse.py (commit 008a0c31): the fp8 decode kernel pads heads to 64
("FP8 decode kernel only supports h_q = 64 or 128"), takes a fixed-width top-k list per token, and serves prompt
tokens too below ``MIN_HEADS_FOR_BF16_PREFILL`` = 32 heads per GPU.
"""

from __future__ import annotations

import csv

import pytest

from planner.catalog.loader import shipped_catalog_dir
from planner.deploy import deploy
from planner.engines import kernel_curves, kernel_floor
from planner.model import operators
from planner.model.memory import decode_attention_bytes, decode_attention_flop, kv_replication
from planner.model.prefill import prefill_step
from planner.options import DecodeOptions, Options
from planner.timing import decode_step

H200, H100 = "H200 SXM 141GB", "H100 SXM 80GB"


def _measured_ms(gpu: str, heads: int, batch: int, context: int, kv: str = "fp8", engine: str = "vllm") -> float:
    """One measured decode module (catalogs/reference/dsa_decode_aic.csv), ms."""
    with (shipped_catalog_dir() / "reference" / kernel_floor.DSA_FILE_NAME).open(newline="") as f:
        for r in csv.DictReader(f):
            key = (r["engine"], r["op"], r["gpu"], r["kv_cache_dtype"], int(r["num_heads"]), int(r["batch"]))
            if key + (int(r["context"]),) == (engine, "generation", gpu, kv, heads, batch, context):
                return float(r["latency_ms"])
    raise KeyError((engine, gpu, heads, batch, context, kv))


def _module_ms(gpu: str, batch: int, context: int, engine: str = "vllm", gpus: int = 8) -> float:
    """The planner's DeepSeek-V3.2 decode attention module per layer at ``gpus``-way TP: the attention curves' part,
    the sparse kernel and the module's projection GEMMs (as ``linear_layers_time_s`` times them), no floors."""
    options = dict(gpus=gpus, batch=batch, engine=engine, check_fit=False)
    f = deploy(gpu, "DeepSeek-V3.2", context, Options.read(DecodeOptions, options, decode_step)).facts
    m, lim, g = f.model, f.limits, float(gpus)
    sparse = operators.sparse_mla_applies(m, lim, g, prefill=False)
    kv = decode_attention_bytes(m, f.precision, context, batch, kv_replication(m, g), sparse)
    flop = decode_attention_flop(m, context, batch, sparse)
    attention = operators.attention_time_s(f.gpu, m, lim, kv, flop, lim.attention_flop_efficiency, 0.0, g)
    params = kernel_floor.dsa_module_gemm_params(heads=128 / gpus)
    gemms = operators.gemm_time_s(f.gpu, lim, params * 1.0, 2.0 * batch * params, 0.0, 1.0, 1.0)
    return ((attention + operators.sparse_mla_time_s(m, lim, batch, g, sparse)) / m.num_layers + gemms) * 1e3


ENGINES_GPUS = [(e, g) for e in ("vllm", "tensorrt-llm") for g in (H100, H200)]


class TestDerivation:
    @pytest.mark.parametrize(("engine", "gpu"), ENGINES_GPUS)
    def test_shipped_time_per_token_is_rederived(self, engine, gpu):
        """SPARSE_MLA_TOKEN_S is the median of the measured points, rounded to 0.01 us (vLLM H100 1.10, H200 1.08;
        TensorRT-LLM 1.54, 1.48)."""
        shipped = kernel_curves.SPARSE_MLA_TOKEN_S[engine][gpu]
        assert shipped == pytest.approx(kernel_floor.sparse_mla_token_s(gpu, engine=engine), abs=5e-9)

    @pytest.mark.parametrize(("engine", "gpu"), ENGINES_GPUS)
    def test_time_per_token_follows_neither_heads_nor_context(self, engine, gpu):
        """8 to 64 heads per GPU and 256 to 1,024 tokens of context: every point within 10% of the median (the
        kernel pads the heads to 64 and walks 2,048 top-k slots whatever the context; vLLM's within 4%)."""
        points = kernel_floor.sparse_mla_token_points(gpu, engine=engine)
        median = kernel_floor.sparse_mla_token_s(gpu, engine=engine)
        assert len(points) == 12
        assert all(abs(v / median - 1.0) < 0.10 for v in points.values())

    @pytest.mark.parametrize("gpu", [H100, H200])
    def test_a_tensorrt_llm_prompt_token_costs_what_a_decode_token_does(self, gpu):
        """TensorRT-LLM's measured prefill module at 16 heads per GPU (32 vs 8 prompts of 256 tokens): 1.48 us per
        token on H100, 1.44 on H200, within 10% of its decode kernel's time plus the projections' (~0.1 us): its
        prompt tokens run the same sparse kernel (``TENSORRT_LLM_SPARSE_PREFILL_HEADS``)."""
        decode = kernel_curves.SPARSE_MLA_TOKEN_S["tensorrt-llm"][gpu]
        assert kernel_floor.prefill_token_s(gpu) == pytest.approx(decode, rel=0.10)

    def test_projection_weights_by_hand(self):
        """DeepSeek-V3.2 at 16 heads: q_a 7,168 x 1,536, kv_a 7,168 x 576, q_b 1,536 x 16 x 192, absorbed up-projections
        16 x 512 x 256, o_proj 16 x 128 x 7,168, indexer 1,536 x 64 x 128 + 7,168 x 128 + 7,168 x 64."""
        by_hand = (
            7168 * 1536 + 7168 * 576 + 1536 * 16 * 192 + 16 * 512 * 256 + 16 * 128 * 7168
            + 1536 * 64 * 128 + 7168 * 128 + 7168 * 64
        )  # fmt: skip
        assert kernel_floor.dsa_module_gemm_params(heads=16) == by_hand == 50_593_792


class TestAgainstTheMeasuredModule:
    @pytest.mark.parametrize(
        ("gpu", "context", "within"), [(H200, 256, 0.10), (H200, 1024, 0.10), (H200, 4096, 0.15), (H100, 256, 0.10)]
    )
    def test_vllm_tp8_at_batch_1024_within_10_percent(self, gpu, context, within):
        """H200, 16 heads per GPU, batch 1,024: measured 1.338 ms (256 tokens), 1.376 (1,024), 1.561 (4,096); H100
        1.364 ms (256). The planner's module (floors aside) is within 10%, 15% at 4,096 tokens (-13%: from s186 the
        indexer's cached keys are read at the curves' 16-bit-cache rate, 3.78 TB/s on H200, which FlashAttention's
        bf16 caches reach; the module's fp8 indexer reads them slower, and the curve for both formats, 2.71, was -9%)."""
        measured = _measured_ms(gpu, 16, 1024, context)
        assert _module_ms(gpu, 1024, context) == pytest.approx(measured, rel=within)

    def test_without_the_kernel_the_attention_curves_miss_the_module_by_far(self):
        """What the engines without the kernel term get (SGLang's profile): 0.28 ms at 256 tokens, a fifth of vLLM's
        measured 1.338 ms; vLLM's own module was that far off before the term."""
        assert _module_ms(H200, 1024, 256, engine="sglang") < 0.25 * _measured_ms(H200, 16, 1024, 256)

    def test_the_bf16_cache_module_is_not_what_the_term_stands_for(self):
        """The bf16-cache module grows with the context (0.589 -> 1.153 ms from 256 to 2,048 tokens at batch 1,024)
        where the fp8 one stays (1.338 -> 1.423 ms): the term is vLLM's default fp8_ds_mla path only."""
        bf16 = _measured_ms(H200, 16, 1024, 2048, "bfloat16") / _measured_ms(H200, 16, 1024, 256, "bfloat16")
        # (vLLM's bf16 path: 1.153 / 0.589 ms)
        fp8 = _measured_ms(H200, 16, 1024, 2048) / _measured_ms(H200, 16, 1024, 256)
        assert bf16 > 1.9 and fp8 < 1.07


class TestEngineRule:
    def test_vllm_and_tensorrt_llm_run_it_sglang_does_not(self):
        """The per-token time reaches the model's facts under vLLM's and TensorRT-LLM's profiles (each its own);
        SGLang's sparse attention is not modelled apart, "ideal" has no kernel curves."""
        for engine, expected in (("vllm", 1.08e-6), ("sglang", 0.0), ("tensorrt-llm", 1.48e-6), ("ideal", 0.0)):
            options = dict(gpus=8, batch=1, engine=engine, check_fit=False)
            lim = deploy(H200, "DeepSeek-V3.2", 1024, Options.read(DecodeOptions, options, decode_step)).facts.limits
            assert lim.sparse_mla_token_s == pytest.approx(expected)

    def test_a_dense_attention_model_is_untouched(self):
        """Llama-3.1-70B has no top-k: no kernel term, the attention curves as before (0.0 exactly)."""
        options = dict(gpus=8, batch=64, check_fit=False)
        f = deploy(H200, "Llama-3.1-70B", 4096, Options.read(DecodeOptions, options, decode_step)).facts
        assert operators.sparse_mla_applies(f.model, f.limits, 8.0, prefill=False) == 0.0

    def test_prompt_tokens_pay_below_32_heads_per_gpu_only(self):
        """TP 8 (16 heads per GPU): a 2,048-token prompt runs the fp8 kernel, 61 layers x 2,048 tokens x 1.08 us
        = 135 ms more than the attention curves alone; TP 4 (32 heads, the weights not fitting aside): vLLM's bf16
        prefill kernel, no term."""
        at = {}
        for engine in ("vllm", "sglang"):
            for gpus in (8, 4):
                options = dict(gpus=gpus, batch=1, engine=engine, check_fit=False)
                f = deploy(H200, "DeepSeek-V3.2", 2048, Options.read(DecodeOptions, options, decode_step)).facts
                at[engine, gpus] = prefill_step(f.gpu, f.model, f.precision, f.limits, 2048.0, 1.0, float(gpus)).ttft_s
        assert at["vllm", 8] - at["sglang", 8] == pytest.approx(61 * 2048 * 1.08e-6, rel=0.05)
        assert at["vllm", 4] == pytest.approx(at["sglang", 4], rel=1e-9)

    def test_a_decode_step_pays_per_sequence_whatever_the_context(self):
        """vLLM at TP 8, batch 512: the step at 256 and at 1,024 tokens differ by the indexer's scan and the MoE, not
        by 2,048-slot attention: the kernel term is the same 61 x 512 x 1.08 us = 33.7 ms at both."""
        for context in (256, 1024):
            options = dict(gpus=8, batch=512, check_fit=False)
            f = deploy(H200, "DeepSeek-V3.2", context, Options.read(DecodeOptions, options, decode_step)).facts
            sparse = operators.sparse_mla_applies(f.model, f.limits, 8.0, prefill=False)
            assert operators.sparse_mla_time_s(f.model, f.limits, 512, 8.0, sparse) == pytest.approx(61 * 512 * 1.08e-6)


class TestOtherGpus:
    def test_a_borrowing_hopper_gpu_scales_by_its_compute(self):
        """The kernel is compute-bound: H20 (148 TFLOP/s bf16) takes H100's 1.10 us x 989.4 / 148 = 7.35 us; a GPU
        of another architecture (B200, MI300X) runs other kernels: no term."""
        from planner.catalog import default_catalog

        cat = default_catalog()
        h20 = cat.gpu("H20")
        expected = 1.10e-6 * 989.4e12 / h20.peak_flop_per_s["bf16"]
        assert kernel_curves.kernel_factors(h20, cat)["sparse_mla_token_s"] == pytest.approx(expected)
        for name in ("B200 180GB", "MI300X"):
            assert kernel_curves.kernel_factors(cat.gpu(name), cat)["sparse_mla_token_s"] == 0.0
        assert kernel_curves.sparse_mla_token_for(cat.gpu(H200), cat, None) == 0.0


class TestBf16CacheExperiment:
    """EXPERIMENT (h-r4, off): vLLM's decode over a 16-bit cache at its own measured bf16 module's line,
    a + b x min(context, top-k) (docs/hypotheses/dsa-bf16-decode.md)."""

    @pytest.mark.parametrize("gpu", [H100, H200])
    def test_shipped_line_is_rederived(self, gpu):
        a, b = kernel_curves.SPARSE_MLA_BF16_LINE[gpu]
        fa, fb = kernel_floor.sparse_mla_bf16_line(gpu)
        assert a == pytest.approx(fa, abs=1e-9) and b == pytest.approx(fb, abs=1e-12)

    @pytest.mark.parametrize("gpu", [H100, H200])
    def test_the_line_reaches_a_full_top_k_outside_its_fit(self, gpu):
        """From 512 to 2,048 tokens (past the 256-1,024 fit) the bf16 module's time per token rises by the line's
        b x 1,536 + the fp8 module's rise (the indexer's scan) within 15% at 8-64 heads (H200, 16 heads: 0.46 us
        measured, 0.48 predicted)."""
        _, b = kernel_curves.SPARSE_MLA_BF16_LINE[gpu]
        for heads in (8, 16, 32, 64):

            def per_token(context, kv, heads=heads):
                return (
                    _measured_ms(gpu, heads, 1024, context, kv) - _measured_ms(gpu, heads, 256, context, kv)
                ) / 768e3

            indexer = per_token(2048, "fp8") - per_token(512, "fp8")
            measured = per_token(2048, "bfloat16") - per_token(512, "bfloat16")
            assert b * 1536 + indexer == pytest.approx(measured, rel=0.15)

    def test_off_by_default_and_on_follows_the_cache(self, monkeypatch):
        """Off: a bf16 and an fp8 cache pay 1.08 us; on: bf16 at 8K context pays 0.292 + 0.270e-3 x 2,048 = 0.845 us,
        fp8 keeps 1.08."""
        from planner.catalog import lookup, resolve

        options = dict(gpus=8, batch=64, check_fit=False)
        f = deploy(H200, "DeepSeek-V3.2", 8192, Options.read(DecodeOptions, options, decode_step)).facts
        assert f.limits.sparse_mla_bf16_token_s == 0.0
        monkeypatch.setattr(kernel_curves, "DSA_BF16_DECODE", True)
        monkeypatch.setattr(resolve, "_ONE", {})
        monkeypatch.setattr(lookup, "_MEMO", {})
        f = deploy(H200, "DeepSeek-V3.2", 8192, Options.read(DecodeOptions, options, decode_step)).facts
        sparse = operators.sparse_mla_applies(f.model, f.limits, 8.0, prefill=False)
        bf16 = operators.sparse_mla_time_s(f.model, f.limits, 64, 8.0, sparse, 2.0, 8192.0)
        fp8 = operators.sparse_mla_time_s(f.model, f.limits, 64, 8.0, sparse, 1.0, 8192.0)
        assert bf16 == pytest.approx(61 * 64 * (0.292e-6 + 0.270e-9 * 2048))
        assert fp8 == pytest.approx(61 * 64 * 1.08e-6)
