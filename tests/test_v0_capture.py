"""vLLM V0's eager decode steps past ``max_seq_len_to_capture`` (issue 21, h-mi300b; EXPERIMENT, off;
docs/hypotheses/mi300x-large-batch.md). Values' sources: ``EngineArgs.max_seq_len_to_capture = 8192``
(``vllm/engine/arg_utils.py`` l.137 of the ``vllm==0.7.3`` wheel) and ``_use_captured_graph`` (``vllm/worker/
model_runner.py`` l.762-770: a graph only while ``max_decode_seq_len <= max_seq_len_to_capture``); the eager surplus
per layer is the planner's SGLang one (sgl-project/sglang pull request 1401, s123)."""

from __future__ import annotations

import pytest

from planner.engines import profiles, v0_capture
from planner.engines.profiles import engine_profile

#: vLLM 0.7.3's ``EngineArgs.max_seq_len_to_capture`` (``vllm/engine/arg_utils.py`` l.137).
VLLM_073_MAX_SEQ_LEN_TO_CAPTURE = 8192


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(v0_capture, "VLLM_V0_LONG_CONTEXT_EAGER", True)


def test_the_limit_is_vllm_073s_engine_args_default():
    assert v0_capture.VLLM_V0_MAX_SEQ_LEN_TO_CAPTURE == VLLM_073_MAX_SEQ_LEN_TO_CAPTURE
    assert v0_capture.VLLM_V0_BEFORE == (0, 8, 0)  # V1 the default engine from vLLM 0.8.0


def test_eager_share_counts_the_decode_steps_past_the_limit():
    """3,200 in / 6,400 out (dstack's DSTK-041's lengths): decode steps j = 1..6,399 run at 3,200 + j tokens, eager
    for j > 4,992: 1,407 of 6,399."""
    assert v0_capture.eager_share(3200, 6400) == pytest.approx(1407 / 6399)
    assert v0_capture.eager_share(3200, 3200) == 0.0  # 6,399 tokens at most: always graphed
    assert v0_capture.eager_share(8192, 2) == pytest.approx(1.0)
    assert v0_capture.eager_share(100, 1) == 0.0


def test_off_by_default_and_off_keeps_the_profile():
    assert v0_capture.VLLM_V0_LONG_CONTEXT_EAGER is False
    prof = engine_profile("vllm")
    assert v0_capture.with_vllm_v0_long_context_eager(prof, "vLLM", "0.7.3", 3200, 6400, 128) is prof


def test_on_a_v0_release_past_the_limit_pays_the_share_of_sglangs_eager_surplus(switch_on):
    prof = engine_profile("vllm")
    got = v0_capture.with_vllm_v0_long_context_eager(prof, "vLLM", "0.7.3.dev138+g21f6ca217", 3200, 6400, 128)
    share = 1407 / 6399
    assert 0 < got.decode_graph_max_batch < 1  # every decode step priced as eager, at the share
    assert got.eager_layer_s == pytest.approx(share * profiles.SGLANG_EAGER_LAYER_S)
    assert got.eager_moe_layer_s == pytest.approx(share * profiles.SGLANG_EAGER_MOE_LAYER_S)
    # DeepSeek-R1 (3 dense + 58 MoE layers): 41.7 ms a fully eager step, 9.2 ms at the share
    full = 3 * profiles.SGLANG_EAGER_LAYER_S + 58 * profiles.SGLANG_EAGER_MOE_LAYER_S
    assert full == pytest.approx(41.68e-3, rel=1e-3)
    assert 3 * got.eager_layer_s + 58 * got.eager_moe_layer_s == pytest.approx(9.16e-3, rel=2e-3)


@pytest.mark.parametrize(
    ("engine", "version", "inp", "out"),
    [
        ("vLLM", "0.8.0", 3200, 6400),  # V1 by default
        ("vLLM", "0.11.0", 3200, 6400),
        ("vLLM", "0.7.3", 3200, 3200),  # never past 8,192
        ("SGLang", "0.4.2.post4", 3200, 6400),  # not vLLM
        ("vLLM", "nightly", 3200, 6400),  # does not parse
    ],
)
def test_other_rows_keep_the_profile(switch_on, engine, version, inp, out):
    prof = engine_profile("vllm")
    assert v0_capture.with_vllm_v0_long_context_eager(prof, engine, version, inp, out, 128) is prof


def test_spread_ablation_takes_the_chance_that_one_of_the_batch_is_past_the_limit(switch_on, monkeypatch):
    monkeypatch.setattr(v0_capture, "VLLM_V0_EAGER_SPREAD", True)
    prof = engine_profile("vllm")
    got = v0_capture.with_vllm_v0_long_context_eager(prof, "vLLM", "0.7.3", 3200, 6400, 4)
    share = 1 - (1 - 1407 / 6399) ** 4
    assert got.eager_moe_layer_s == pytest.approx(share * profiles.SGLANG_EAGER_MOE_LAYER_S)
