"""h-b200moe (shipped s211; ablation ``sglang-v3-eager-launch:off``; docs/hypotheses/sglang-v3-eager-launch.md): in SGLang's eager prompt
step a DeepSeek-V3-architecture MoE layer (MLA with a q-LoRA) launches in 1.472 ms, from sgl-project/sglang pull
request 14918's eager DeepSeek-R1 TTFT, not DeepSeek-Coder-V2-Lite's 0.946 ms (pull request 1401)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import planner.serving.benchmark as B
from planner.catalog import default_catalog
from planner.engines.profiles import SGLANG_055, SGLANG_HOST_LAYER_S, SGLANG_HOST_MOE_LAYER_S


def test_the_constant_is_pull_request_14918s_ttft_less_the_planners_rest():
    """(108.471 ms published - 22.20 ms of the planner's TTFT outside the launch floor - 3 dense layers x 0.29 ms)
    / 58 MoE layers = 1.4724 ms (by hand; ``bench/sglang_v3_launch.py`` gives the 22.20 ms)."""
    assert B.SGLANG_V3_HOST_MOE_LAYER_S == pytest.approx((108.471 - 22.20 - 3 * 0.29) / 58 * 1e-3, rel=1e-3)
    assert B.SGLANG_V3_HOST_MOE_LAYER_S == pytest.approx(1.4724e-3, abs=1e-7)
    assert B.SGLANG_MLA_HOST_MOE_LAYER_S is None  # h-mla's experiment hook: off
    assert B.SGLANG_V3_EAGER_LAUNCH is True  # shipped s211


def test_applies_to_mla_with_a_q_lora_only():
    cat = default_catalog()
    assert B.mla_host_moe_layer_applies(cat.model("DeepSeek-R1"))
    assert B.mla_host_moe_layer_applies(cat.model("Kimi-K2"))
    assert not B.mla_host_moe_layer_applies(cat.model("Qwen3-235B-A22B"))
    # DeepSeek-Coder-V2-Lite's MLA has no q-LoRA (its config.json: q_lora_rank null): it keeps its own 0.946 ms
    lite = SimpleNamespace(mla=SimpleNamespace(q_lora_rank=None))
    assert not B.mla_host_moe_layer_applies(lite)


def _host_s(model: str) -> float:
    """The eager launch floor of one SGLang 0.5.5-0.5.9 run on 8 x B200 (the cookbook's SGC016 shape: 610 / 421
    tokens, one request at a time), from the serving simulation's step table."""
    return _floor_s("B200", model, 610.0, 421.0, 10, SGLANG_055)


def _floor_s(gpu: str, model: str, prompt: float, output: float, requests: int, engine) -> float:
    """``prefill_host_s`` of the step table of ``requests`` prompts one at a time on 8 x ``gpu`` under ``engine``."""
    _, setups, _ = B.serving_setups(
        gpu, model, prompt, output, 1, requests, None, None, "sglang", None, 8,
        dict(weight_precision=None, kv_precision=None),
        dict(engine=engine, catalog=None, calibration=None, errors="raise"),
    )  # fmt: skip
    return setups[0].table.prefill_host_s


def test_the_rule_moves_deepseek_r1s_floor_and_nothing_else(monkeypatch):
    """DeepSeek-R1 (3 dense + 58 MoE layers): on (main) 3 x 0.29 + 58 x 1.4724 = 86.27 ms; off (the ablation)
    3 x 0.29 + 58 x 0.9458 = 55.72 ms (both by hand). Qwen3-235B-A22B (94 MoE layers, GQA): 94 x 0.9458 = 88.90 ms
    either way."""
    assert _host_s("DeepSeek-R1") == pytest.approx(86.27e-3, abs=0.01e-3)
    qwen = _host_s("Qwen3-235B-A22B")
    assert qwen == pytest.approx(94 * SGLANG_HOST_MOE_LAYER_S)
    monkeypatch.setattr(B, "SGLANG_V3_EAGER_LAUNCH", False)
    off = 3 * SGLANG_HOST_LAYER_S + 58 * SGLANG_HOST_MOE_LAYER_S
    assert off == pytest.approx(55.72e-3, abs=0.01e-3)
    assert _host_s("DeepSeek-R1") == pytest.approx(off)
    assert _host_s("Qwen3-235B-A22B") == pytest.approx(qwen)


def _host_s_on(model: str, engine) -> float:
    """Like ``_host_s`` for one SGLang release profile (8 x H200, PR 13466's 1,024 / 16 tokens, one at a time)."""
    return _floor_s("H200", model, 1024.0, 16.0, 16, engine)


def test_a_graphed_release_keeps_no_floor_with_the_switch_on(monkeypatch):
    """Corroboration (docs/hypotheses/sglang-v3-eager-launch.md): sgl-project/sglang PR 13466's "After" run
    (Kimi-K2-Instruct-0905, piecewise CUDA graph on, 1,024 / 16 tokens, C = 1: median TTFT 92.937 ms) is a graphed
    prompt step, which the planner prices with SGLang 0.5.10's profile: no eager launch floor, switch on or off (the
    planner's TTFT 99.08 ms either way, +6.6%: ``bench/sglang_v3_launch.py --source pr13466-graphed``)."""
    from planner.engines.profiles import SGLANG_0510

    assert _host_s_on("Kimi-K2", SGLANG_0510) == 0.0
    monkeypatch.setattr(B, "SGLANG_V3_EAGER_LAUNCH", False)
    assert _host_s_on("Kimi-K2", SGLANG_0510) == 0.0
    monkeypatch.setattr(B, "SGLANG_V3_EAGER_LAUNCH", True)
    # the same run under an eager release: Kimi-K2 (1 dense + 60 MoE layers) launches 0.29 + 60 x 1.4724 = 88.63 ms
    assert _host_s_on("Kimi-K2", SGLANG_055) == pytest.approx(SGLANG_HOST_LAYER_S + 60 * 1.4724e-3, abs=0.01e-3)


def test_the_bench_scripts_solve_gives_the_constant():
    """``bench/sglang_v3_launch.py``'s arithmetic on the planner's two TTFTs of PR 14918's run recorded in the
    hypothesis doc (110.07 ms at 1.5 ms a MoE layer, 139.07 ms at 2.0 ms): 58 MoE layers on the host-bound slope,
    22.20 ms outside the floor, 1.4724 ms a MoE layer (each by hand: 29.00 / 0.5; 110.07 - 87 - 0.87; (108.471 -
    22.20 - 0.87) / 58)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import sglang_v3_launch as S

    slope, rest, solved = S.solve({1.5e-3: 110.07, 2.0e-3: 139.07}, S.SOURCES["pr14918"])
    assert slope == pytest.approx(58.0, abs=1e-9)
    assert rest == pytest.approx(22.20, abs=0.005)
    assert solved == pytest.approx(1.4724, abs=1e-4)
    assert solved * 1e-3 == pytest.approx(B.SGLANG_V3_HOST_MOE_LAYER_S, rel=1e-4)
