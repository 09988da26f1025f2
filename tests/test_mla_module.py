"""The measured MLA attention modules fitted per GPU (catalogs/reference/mla_module_aic.csv,
``planner.engines.kernel_floor.mla_module_time_s``; issue 21, step 1).

Measured values: aiconfigurator 0.12.0's ``systems/data/h200_sxm/mla/vllm/0.24.0/mla_generation_module_perf.parquet``
(DeepSeek-V3, 16 heads per GPU, fp8_block GEMMs): FLASHMLA fp8 cache at batch 1,024 / context 128: 0.4015 ms, at batch
8 / context 2,048: 0.1296 ms; FLASH_ATTN_MLA bf16 cache at batch 1,024 / context 2,048: 0.7954 ms. Its context module,
bf16 cache, 64 prompts of 128 tokens: 1.2750 ms (``mla_context_module_perf.parquet``).
"""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

import pytest

from planner.engines.kernel_floor import mla_module_time_s, read_mla_rows

ROOT = Path(__file__).resolve().parents[1]
AIC_PYTHON = Path("/work/venvs/aic/bin/python")
AIC_DATA = Path("/work/venvs/aic/lib/python3.11/site-packages/aiconfigurator_core/systems/data")
needs_aic = pytest.mark.skipif(not AIC_DATA.is_dir(), reason="aiconfigurator 0.12.0's venv is not on this machine")
H200 = "H200 SXM 141GB"


@pytest.mark.parametrize(
    "op, kv, batch, context, measured_ms",
    [
        ("generation", "fp8", 1024, 128, 0.4015),
        ("generation", "fp8", 8, 2048, 0.1296),
        ("generation", "bfloat16", 1024, 2048, 0.7954),
        ("context", "bfloat16", 64, 128, 1.2750),
    ],
)
def test_fit_within_ten_percent_of_the_measured_module(op, kv, batch, context, measured_ms):
    got_ms = mla_module_time_s(H200, op, kv, 16, batch, context) * 1e3
    assert got_ms == pytest.approx(measured_ms, rel=0.10)


def test_deepseek_r1_decode_step_matches_aiconfigurators_own_module_step():
    """aiconfigurator's ``decode_step_per_op`` for DeepSeek-R1 on 8 x H200 (vLLM, fp8 cache, isl 127): its MLA module
    takes 7.16 / 24.03 ms a step at 8 / 1,000 sequences (``bench/aic_step_operators.py``; docs/accuracy.md, "The
    all-reduce reading, re-checked by operator"); 61 layers of the fit at 16 heads and 129 tokens agree within 5%."""
    for batch, aic_ms in ((8, 7.16), (1000, 24.03)):
        got_ms = 61 * mla_module_time_s(H200, "generation", "fp8", 16, batch, 129) * 1e3
        assert got_ms == pytest.approx(aic_ms, rel=0.05)


def test_heads_pick_the_nearest_measured_count():
    """8 heads (Kimi-K2 at TP 8) read the 16-head fit; 48 heads read 64 (log scale: |log2 48 - 6| < |log2 48 - 5|)."""
    t = lambda h: mla_module_time_s(H200, "generation", "bfloat16", h, 256, 1024)  # noqa: E731
    assert t(8) == t(16) and t(48) == t(64) and t(64) < t(128)


def test_ships_as_kilobytes_with_its_fit_errors():
    rows = read_mla_rows()
    assert (ROOT / "catalogs" / "reference" / "mla_module_aic.csv").stat().st_size < 8_000
    assert {r["gpu"] for r in rows} == {"H100 SXM 80GB", H200, "B200 180GB"}
    assert all(float(r["median_error"]) < 0.10 for r in rows)


def test_an_unmeasured_gpu_is_a_clear_error():
    with pytest.raises(ValueError, match="no measured MLA generation module for 'MI300X'"):
        mla_module_time_s("MI300X", "generation", "bfloat16", 16, 8, 128)


@needs_aic
def test_extract_rederives_the_shipped_file(tmp_path):
    out = tmp_path / "mla.csv"
    subprocess.run([str(AIC_PYTHON), str(ROOT / "bench" / "mla_kernel_extract.py"), str(out)], check=True)
    assert filecmp.cmp(out, ROOT / "catalogs" / "reference" / "mla_module_aic.csv", shallow=False)


class TestMlaDecodeAttentionRate:
    """MLA's absorbed decode attention runs at the FLOP rate the measured modules reach (s180), not at the decode
    attention curve's (fitted on GQA/MHA kernels, where FLOPs hardly bind: H200 16%, B200 10% of the bf16 peak)."""

    def test_the_rate_is_the_modules_at_128_heads(self):
        """H200, bf16 cache, 128 heads: 0.381 ns a row-token a layer (the table's fit) for 128 x (2 x (512 + 64) +
        2 x 512) = 278,528 FLOP: 7.31e14 FLOP/s, 0.74 of the 989 TFLOP/s bf16 peak; H100 0.69, B200 0.63. GB200 has no
        modules of its own and takes its architecture's (B200's); A100 has none."""
        from planner.engines.kernel_curves import mla_attention_flop_efficiency

        row = next(
            r for r in read_mla_rows()
            if (r["gpu"], r["op"], r["kv_cache_dtype"], r["num_heads"]) == (H200, "generation", "bfloat16", "128")
        )  # fmt: skip
        assert float(row["per_row_token_ns"]) == pytest.approx(0.381, abs=0.001)
        assert mla_attention_flop_efficiency(H200) == pytest.approx(278528 / 0.381e-9 / 989e12, rel=0.005)
        assert mla_attention_flop_efficiency("H100 SXM 80GB") == pytest.approx(0.69, abs=0.005)
        assert mla_attention_flop_efficiency("B200 180GB") == pytest.approx(0.63, abs=0.005)
        assert mla_attention_flop_efficiency("GB200 NVL72") == mla_attention_flop_efficiency("B200 180GB")
        assert mla_attention_flop_efficiency("A100 SXM 80GB") == 0.0
        from doc_support import stated  # docs/model.md's operator table states the three

        said = stated(
            "docs/model.md", r"MLA modules' rate \(H100 ([\d.]+), H200 ([\d.]+), B200 ([\d.]+) of the bf16 peak"
        )
        gpus = ("H100 SXM 80GB", H200, "B200 180GB")
        assert said == tuple(f"{mla_attention_flop_efficiency(g):.2f}" for g in gpus)

    @staticmethod
    def _attention_kernels(model: str, mla_rate: bool) -> float:
        """One rank's decode kernels of 64 sequences at 4,096 tokens on 8 x H200 (DP attention + EP: every head on the
        GPU), with the MLA rate or with the decode-attention curve's (the field zeroed)."""
        from dataclasses import replace

        from planner import model as m
        from planner.deploy import deploy
        from planner.options import Options

        d = deploy(H200, model, 4096, Options(batch=512, gpus=8, parallelism="dp-ep", check_fit=False))
        f = d.facts
        limits = f.limits if mla_rate else replace(f.limits, mla_attention_flop_efficiency=0.0)
        step = m.decode_step(f.gpu, f.model, f.precision, limits, d.context, d.batch, d.gpus_safe)
        return float(m.dp_decode_step(step, f.gpu, f.model, f.precision, limits, d.context).step_s)

    def test_an_mla_rank_decodes_faster_and_other_models_alike(self):
        assert self._attention_kernels("DeepSeek-R1", True) < 0.8 * self._attention_kernels("DeepSeek-R1", False)
        qwen = self._attention_kernels("Qwen3-235B-A22B", True)
        assert qwen == self._attention_kernels("Qwen3-235B-A22B", False)  # GQA: the curve's rate, unchanged
