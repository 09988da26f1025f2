"""h-b200moe (``sglang-v3-eager-launch``, off; docs/hypotheses/sglang-v3-eager-launch.md): in SGLang's eager prompt
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
    assert B.SGLANG_MLA_HOST_MOE_LAYER_S is None  # off on main


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
    _, setups, _ = B.serving_setups(
        "B200", model, 610.0, 421.0, 1, 10, None, None, "sglang", None, 8,
        dict(weight_precision=None, kv_precision=None),
        dict(engine=SGLANG_055, catalog=None, calibration=None, errors="raise"),
    )  # fmt: skip
    return setups[0].table.prefill_host_s


def test_the_switch_moves_deepseek_r1s_floor_and_nothing_else(monkeypatch):
    """DeepSeek-R1 (3 dense + 58 MoE layers): off 3 x 0.29 + 58 x 0.9458 = 55.72 ms; on 3 x 0.29 + 58 x 1.4724 =
    86.27 ms (both by hand). Qwen3-235B-A22B (94 MoE layers, GQA): 94 x 0.9458 = 88.90 ms either way."""
    off = 3 * SGLANG_HOST_LAYER_S + 58 * SGLANG_HOST_MOE_LAYER_S
    assert off == pytest.approx(55.72e-3, abs=0.01e-3)
    assert _host_s("DeepSeek-R1") == pytest.approx(off)
    qwen = _host_s("Qwen3-235B-A22B")
    assert qwen == pytest.approx(94 * SGLANG_HOST_MOE_LAYER_S)
    monkeypatch.setattr(B, "SGLANG_MLA_HOST_MOE_LAYER_S", B.SGLANG_V3_HOST_MOE_LAYER_S)
    assert _host_s("DeepSeek-R1") == pytest.approx(86.27e-3, abs=0.01e-3)
    assert _host_s("Qwen3-235B-A22B") == pytest.approx(qwen)
