"""Data-parallel attention's MoE gather carries the tokens the engine gathers (h-dpgather, shipped;
docs/hypotheses/dp-attention-gather-tokens.md).

Sources: SGLang 0.5.20 ``sglang/srt/layers/dp_attention.py`` ``DpPaddingMode.get_dp_padding_mode`` (l.123-137: a
step with a prefill takes SUM_LEN, an all-reduce of a buffer of the ranks' summed tokens; otherwise MAX_LEN, g x the
busiest rank's rows, when ``sum_len * 2 >= max_len * dp_size``); vLLM ``vllm/v1/worker/dp_utils.py``
``_synchronize_dp_ranks`` (ranks padded to the busiest only for a graphed step, PR #34102) and
``device_communicators/all2all.py`` ``AgRsAll2AllManager.dispatch`` (``all_gatherv`` at the per-rank sizes).
Measured times: the shipped NCCL table (catalogs/reference/gather_scatter_aic.csv).
"""

from __future__ import annotations

import pytest

import planner
import planner.model.parallel as parallel
from planner.catalog import lookup, resolve
from planner.engines.allreduce_table import read_gather_scatter_table
from planner.model.collectives import table_allreduce_time_s
from planner.model.parallel import (
    DP_GATHER_PADDED,
    DP_GATHER_PER_RANK,
    DP_GATHER_SGLANG,
    DP_GATHER_SGLANG_CHEAPER,
    dp_gather_tokens,
)

H200 = "H200 SXM 141GB"
R1 = dict(kv_precision="fp8", parallelism="dp-ep", gpus=8, check_fit=False)
T = 32768.0
HIDDEN = 7168.0  # DeepSeek-R1's hidden_size (config.json)
MOE_LAYERS = 58  # 61 layers, the first 3 dense (first_k_dense_replace = 3)


def _fresh():
    """Forget the resolved engine facts (``planner.catalog.lookup``'s and ``resolve``'s memos): the rule is read when they are made."""
    lookup._MEMO.clear()
    lookup._BY_IDENTITY.clear()
    resolve._ONE.clear()


@pytest.fixture
def as_engine(monkeypatch):
    """The rule on (as shipped) for one test, the facts resolved afresh before and after (a test turns it off)."""
    monkeypatch.setattr(parallel, "DP_GATHER_AS_ENGINE", True)
    _fresh()
    yield
    monkeypatch.setattr(parallel, "DP_GATHER_AS_ENGINE", True)
    _fresh()


def test_a_lone_prompt_gathers_its_own_tokens_not_the_groups():
    """One 32,768-token prompt on one of 8 ranks, the others idle: sum = max = T. vLLM's all_gatherv moves T rows
    (T x 7,168 x 2 B = 469,762,048 B by hand), SGLang's SUM_LEN all-reduces a T-row buffer twice (the pair at 2 T);
    padded to the busiest, 8 T."""
    assert dp_gather_tokens(DP_GATHER_PER_RANK, T, T, 8.0, prefill=True) == T
    assert dp_gather_tokens(DP_GATHER_PER_RANK, T, T, 8.0, prefill=True) * HIDDEN * 2.0 == 469_762_048.0
    assert dp_gather_tokens(DP_GATHER_SGLANG, T, T, 8.0, prefill=True) == 2.0 * T
    assert dp_gather_tokens(DP_GATHER_SGLANG_CHEAPER, T, T, 8.0, prefill=True) == 2.0 * T  # 0.5.1: 2 T < 8 T
    assert dp_gather_tokens(DP_GATHER_PADDED, T, T, 8.0, prefill=True) == 8.0 * T


def test_a_balanced_decode_step_is_unchanged():
    """Every rank 64 sequences: sum = 8 x 64 = 512 = g x max, so MAX_LEN (sum x 2 >= max x g) under SGLang and the
    graphed, padded step under vLLM: g x max = 512 tokens, as before the rule."""
    for rule in (DP_GATHER_PADDED, DP_GATHER_SGLANG, DP_GATHER_SGLANG_CHEAPER, DP_GATHER_PER_RANK):
        assert dp_gather_tokens(rule, 512.0, 64.0, 8.0, prefill=False) == 512.0


def test_sglang_prefills_a_balanced_batch_as_two_all_reduces():
    """0.5.3+: a step with a prefill is SUM_LEN even when balanced (2 x 8 x 4,096); 0.5.1 took the cheaper MAX_LEN."""
    assert dp_gather_tokens(DP_GATHER_SGLANG, 8 * 4096.0, 4096.0, 8.0, prefill=True) == 2 * 8 * 4096.0
    assert dp_gather_tokens(DP_GATHER_SGLANG_CHEAPER, 8 * 4096.0, 4096.0, 8.0, prefill=True) == 8 * 4096.0


def test_the_rule_by_engine_profile(as_engine):
    rule = parallel.dp_gather_rule
    assert (rule("sglang"), rule("sglang-0.5.3"), rule("sglang-0.5.1")) == (1.0, 1.0, 2.0)
    assert (rule("vllm"), rule("vllm-0.10"), rule("tensorrt-llm"), rule("sglang-0.4")) == (3.0, 0.0, 0.0, 0.0)


def test_switched_off_every_engine_pads(monkeypatch):
    """The ablation ``dp-gather-as-engine:off`` (bench/switch_bootstrap.py): every engine as before, g x max."""
    monkeypatch.setattr(parallel, "DP_GATHER_AS_ENGINE", False)
    assert parallel.dp_gather_rule("sglang") == parallel.dp_gather_rule("vllm") == DP_GATHER_PADDED


def test_a_lone_prompts_ttft_drops_by_the_gather_it_no_longer_makes(as_engine):
    """vLLM, DeepSeek-R1 fp8 on 8 x H200, one 32,768-token prompt: TTFT falls by exactly 58 MoE layers x the
    measured (all-gather, reduce-scatter) pair at 8 T less the pair at T (bf16 both ways)."""
    t = read_gather_scatter_table()
    row = t.row(H200)

    def pair(tokens):
        b = tokens * HIDDEN * 2.0
        return table_allreduce_time_s(t, row, b, 8.0, True) + table_allreduce_time_s(t, row, b, 8.0, False)

    on = planner.prefill(H200, "DeepSeek-R1", int(T), engine="vllm", **R1).ttft_s
    parallel.DP_GATHER_AS_ENGINE = False
    _fresh()
    off = planner.prefill(H200, "DeepSeek-R1", int(T), engine="vllm", **R1).ttft_s
    assert off - on == pytest.approx(MOE_LAYERS * (pair(8 * T) - pair(T)), rel=1e-6)
    assert off - on > 0.5  # about 0.95 s of 8.92 s


def test_a_balanced_decode_step_keeps_its_time(as_engine):
    """SGLang, 8 ranks x 32 sequences at 4,096 tokens: the same step time with the rule on and off."""
    on = planner.decode_step(H200, "DeepSeek-R1", 4096, batch=256, engine="sglang", **R1).step_s
    parallel.DP_GATHER_AS_ENGINE = False
    _fresh()
    off = planner.decode_step(H200, "DeepSeek-R1", 4096, batch=256, engine="sglang", **R1).step_s
    assert on == pytest.approx(off, rel=1e-12)
