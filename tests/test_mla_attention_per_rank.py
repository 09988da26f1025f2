"""Trial 22 F6: an fp8 KV cache shortens DeepSeek-V3's decode step under TP8 but not under DP-attention + EP. Not two
rules: both layouts time a GPU's attention with the one function (``planner.model.operators.attention_time_s``:
a roofline of the GPU's latent bytes and its heads' absorbed-MLA FLOPs), fed what the GPU holds. Under TP g a GPU
reads every sequence's latent (replicated) for 128 / g query heads; a DP-EP rank reads its B / g sequences' latents
for all 128 heads. Same bytes per GPU at the same per-rank cache, 8x the FLOPs per byte on the DP rank: MLA with
128 heads is compute-bound on Hopper, so halving the bytes (fp8) moves a TP8 GPU's attention and not a DP rank's.

Source of the rule: vLLM's measured MLA generation modules on H200 (aiconfigurator's tables, fitted per query-head
count in ``catalogs/reference/mla_module_aic.csv``; the MLA FLOP rate ``mla_attention_flop_efficiency`` is the
128-head bf16 row's): per row-token, an fp8 cache runs 0.70x bf16's time at 16 heads (0.183 / 0.262 ns) and 0.93x at
128 heads (0.353 / 0.381 ns): the saving shrinks as the heads per GPU grow, as the roofline gives (0.5x and 1.0x).
"""

from __future__ import annotations

import pytest

import planner
from planner.accuracy.published import read_csv_rows, reference_dir
from planner.model import operators


def _attention(monkeypatch, parallelism: str, batch: int, kv: str) -> dict:
    """The attention_time_s call of one decode step: its per-GPU bytes and FLOPs and its time."""
    seen = []
    real = operators.attention_time_s

    def spy(gpu, model, limits, kv_bytes, flop, flop_efficiency, floor_s, gpus, kv_bytes_per_element=2.0):
        t = real(gpu, model, limits, kv_bytes, flop, flop_efficiency, floor_s, gpus, kv_bytes_per_element)
        seen.append({"bytes": kv_bytes / gpus, "flop": flop / gpus, "time": t, "per_element": kv_bytes_per_element})
        return t

    monkeypatch.setattr(operators, "attention_time_s", spy)
    planner.tpot("H200", "deepseek-v3", 16384, batch=batch, gpus=8, parallelism=parallelism, kv_precision=kv)
    return seen[-1]


@pytest.mark.parametrize("kv", ["bf16", "fp8"])
def test_one_rule_per_gpu_same_bytes_for_the_same_per_rank_cache(monkeypatch, kv):
    tp = _attention(monkeypatch, "tp", 8, kv)  # 8 sequences' latents on each GPU (replicated), 16 heads
    dp = _attention(monkeypatch, "dp-ep", 64, kv)  # 64 / 8 = 8 sequences on each rank, 128 heads
    assert dp["bytes"] == pytest.approx(tp["bytes"])  # the same per-rank cache, read the same way
    assert dp["per_element"] == tp["per_element"]
    assert dp["flop"] == pytest.approx(8 * tp["flop"])  # 128 heads against 128 / 8


def test_fp8_saves_where_bytes_bind_and_less_as_heads_per_gpu_grow(monkeypatch):
    ratio = {
        p: _attention(monkeypatch, p, b, "fp8")["time"] / _attention(monkeypatch, p, b, "bf16")["time"]
        for p, b in (("tp", 8), ("dp-ep", 64))
    }
    assert ratio["tp"] < 0.75  # TP8: 16 heads a GPU, the latent's bytes bind
    assert ratio["dp-ep"] > ratio["tp"]  # DP-EP: 128 heads a rank, the FLOPs bind
    # the measured modules agree in direction (H200, vLLM): fp8 over bf16 per row-token at 16 and 128 heads
    rows = read_csv_rows(reference_dir() / "mla_module_aic.csv")
    ns = {
        (int(r["num_heads"]), r["kv_cache_dtype"]): float(r["per_row_token_ns"])
        for r in rows
        if r["gpu"] == "H200 SXM 141GB" and r["op"] == "generation"
    }
    measured = {h: ns[h, "fp8"] / ns[h, "bfloat16"] for h in (16, 128)}
    assert measured[16] < measured[128] < 1.0
