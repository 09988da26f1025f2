"""SGLang 0.5.10+'s piecewise prefill graph does not cover every prompt step (h-ttftp50, switch
``planner.serving.benchmark.SGLANG_PIECEWISE_COVERAGE``, off; docs/hypotheses/sglang-piecewise-coverage.md).

Read in the sglang 0.5.12 wheel: ``ServerArgs._handle_piecewise_cuda_graph`` (``srt/server_args.py`` l.1301-1368)
turns the graph off for ``--enable-symm-mem`` (l.1357-1359), DP attention, torch compile, pipeline parallelism and an
all-to-all MoE backend; ``PiecewiseCudaGraphRunner.can_run`` (``piecewise_cuda_graph_runner.py`` l.483) replays it only
for a step of at most ``piecewise_cuda_graph_max_tokens`` tokens, 2,048 for an MLA backend (``server_args.py``
l.1514-1521). Such steps launch eagerly and take the shipped launch floor (sgl-project/sglang PR 1401's per-layer
times)."""

from __future__ import annotations

import csv

import pytest

from planner.accuracy.published import reference_dir, sglang_piecewise_off_flag
from planner.catalog import default_catalog
from planner.engines.profiles import (
    SGLANG_HOST_LAYER_S,
    SGLANG_HOST_MOE_LAYER_S,
    engine_profile,
    sglang_piecewise_host_s,
    sglang_piecewise_refused,
    with_row_sglang_piecewise_off,
)
from planner.serving import benchmark
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate


@pytest.fixture(scope="module")
def published_rows() -> dict[str, dict[str, str]]:
    with open(reference_dir() / "load_public.csv", newline="") as f:
        return {r["record_id"]: r for r in csv.DictReader(f)}


def test_switch_is_off_on_main():
    assert benchmark.SGLANG_PIECEWISE_COVERAGE is False


def test_flags_read_from_the_rows_commands(published_rows):
    """InferenceX's FP4 B200 script passes --enable-symm-mem (IXA062's notes quote it); its FP8 script does not
    (IXA001); the cookbook's DeepSeek-R1 note says the server ran "no --enable-dp-attention", which is not the flag."""
    assert sglang_piecewise_off_flag(published_rows["IXA062"]) == "enable-symm-mem"
    assert sglang_piecewise_off_flag(published_rows["IXA001"]) is None
    assert sglang_piecewise_off_flag(published_rows["SGC016"]) is None
    assert sglang_piecewise_off_flag({"engine": "SGLang", "batching": "--moe-a2a-backend deepep --tp 8"}) == (
        "moe-a2a-backend"
    )
    assert sglang_piecewise_off_flag({"engine": "SGLang", "batching": "--moe-a2a-backend none"}) is None
    assert sglang_piecewise_off_flag({"engine": "vLLM", "batching": "--enable-symm-mem"}) is None


def test_host_time_and_token_cap_by_release_and_flags():
    """DeepSeek-R1 (3 dense + 58 MoE layers): 3 x 0.290 + 58 x 0.946 = 55.7 ms; graphed to 2,048 tokens on 0.5.12
    (profile sglang-0.5.10), eager at every size with --enable-symm-mem; 0.5.6 (already eager by the shipped rule) and
    AMD (likewise) get nothing from this rule, nor does a non-SGLang profile."""
    r1 = default_catalog().model("deepseek-ai/DeepSeek-R1-0528")
    host = SGLANG_HOST_LAYER_S * 3 + SGLANG_HOST_MOE_LAYER_S * 58
    assert host == pytest.approx(0.0557, abs=1e-4)
    s0512 = engine_profile("sglang==0.5.12")
    args = (r1.num_layers, r1.moe_layers, True)
    assert sglang_piecewise_host_s(s0512, "NVIDIA", *args) == pytest.approx((host, 2048.0))
    off = with_row_sglang_piecewise_off(s0512, "enable-symm-mem")
    assert sglang_piecewise_host_s(off, "NVIDIA", *args) == pytest.approx((host, 0.0))
    # a model without MLA: graphed up to the chunk, which no extend batch exceeds; eager with the graph turned off
    assert sglang_piecewise_host_s(s0512, "NVIDIA", 36, 0, False) == (0.0, 0.0)
    assert sglang_piecewise_host_s(off, "NVIDIA", 36, 0, False) == pytest.approx((36 * SGLANG_HOST_LAYER_S, 0.0))
    assert sglang_piecewise_host_s(engine_profile("sglang==0.5.6"), "NVIDIA", *args) == (0.0, 0.0)
    assert sglang_piecewise_host_s(s0512, "AMD", *args) == (0.0, 0.0)
    assert sglang_piecewise_host_s(engine_profile("vllm"), "NVIDIA", *args) == (0.0, 0.0)


def _first_ttft(above_tokens: float, prompt: int) -> float:
    """One request on an idle engine: its prompt step (10 ms of device time at any size, launched in 30 ms) is its
    TTFT; the floor applies only above ``above_tokens`` prompt tokens."""
    table = StepTable(
        decode_lo_s=(0.005,) * 8, decode_hi_s=(0.005,) * 8, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
        prefill_tokens=(1.0, 2e5), prefill_s=(0.010, 0.010), shared_s=0.005, prefill_host_s=0.030,
        prefill_host_above_tokens=above_tokens,
    )  # fmt: skip
    out = simulate(
        table, Scheduler(max_num_seqs=8, max_num_batched_tokens=16384, kind="sglang"), prompt, 4, 1,
        behaviour=RunBehaviour(async_scheduling=True),
    )  # fmt: skip
    return float(out.samples.ttft[0][0])


def test_a_covered_step_keeps_its_device_time_and_a_larger_one_pays_the_launch():
    """2,048 tokens or fewer: the graph (10 ms); 2,049 or more: launched eagerly on an idle engine (the whole 30 ms);
    a cap of 0 (the graph turned off) makes every prompt step eager."""
    assert _first_ttft(2048.0, 2048) == pytest.approx(0.010)
    assert _first_ttft(2048.0, 2049) == pytest.approx(0.030)
    assert _first_ttft(0.0, 100) == pytest.approx(0.030)


def test_architectures_the_graph_refuses():
    """model_config.py l.1558-1566 and the multimodal list: Qwen3-Next, DeepSeek-V3.2 (DSA), Llama 4 refused;
    DeepSeek-R1, Qwen3-235B and Llama-3.3-70B keep the graph; a refused model is eager at any size."""
    cat = default_catalog()
    refused = {m: sglang_piecewise_refused(cat.model(m)) for m in (
        "Qwen/Qwen3-Next-80B-A3B-Instruct", "deepseek-ai/DeepSeek-V3.2-Exp", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "deepseek-ai/DeepSeek-R1-0528", "Qwen/Qwen3-235B-A22B-Instruct-2507", "meta-llama/Llama-3.3-70B-Instruct",
    )}  # fmt: skip
    assert [m for m, r in refused.items() if r] == [
        "Qwen/Qwen3-Next-80B-A3B-Instruct", "deepseek-ai/DeepSeek-V3.2-Exp", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    ]  # fmt: skip
    assert sglang_piecewise_host_s(engine_profile("sglang==0.5.12"), "NVIDIA", 48, 48, False, True) == pytest.approx(
        (48 * SGLANG_HOST_MOE_LAYER_S, 0.0)
    )
