"""TensorRT-LLM's attention-DP balancing (h-trt; shipped as a reading of published rows' options): with
``enable_attention_dp`` and ``attention_dp_config: {enable_balance: true, timeout_iters: T}``,
``PyExecutor._balance_adp_requests`` (tensorrt_llm/_torch/pyexecutor/py_executor.py, from ``_schedule``) drops a
rank's new context requests from each iteration unless every rank has one, counting the iteration, and lets them in
when the count reaches T (then 0) or when a rank has no generation request. planner.serving.simulate.RunBehaviour
``context_gate`` / ``context_gate_quorum``."""

from __future__ import annotations

import pytest

from planner.accuracy.published import load_decode_rows, reference_dir
from planner.engines.profiles import engine_profile, with_row_attention_dp_gate
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate

#: A flat table: a decode step 10 ms at any batch, a prefill step 20 ms at any size.
TABLE = StepTable(
    decode_lo_s=(0.010,) * 300, decode_hi_s=(0.010,) * 300, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.020, 0.020), shared_s=0.005,
)  # fmt: skip
TRTLLM = Scheduler(max_num_seqs=64, max_num_batched_tokens=8192, kind="tensorrt-llm", block_tokens=32)


def _ttfts_s(arrivals: list[float], gate: int, quorum: int = 0) -> list[float]:
    """One long request decoding from t = 0 and short ones arriving at ``arrivals``: their TTFTs, seconds."""
    lengths = [(100, 200)] + [(100, 2)] * len(arrivals)
    out = simulate(
        TABLE, TRTLLM, 0, 0, len(lengths), arrivals_s=[0.0, *arrivals], lengths=lengths,
        behaviour=RunBehaviour(context_gate=gate, context_gate_quorum=quorum),
    )  # fmt: skip
    return sorted(out.samples.ttft[0].tolist())[1:]


def test_an_arrival_waits_for_the_gate():
    """T = 10: the first request's prefill (the rank decodes nothing: let in at once, the count 0) ends at 20 ms;
    decode steps follow at 20-30, 30-40, ... ms counting 1, 2, ...; the 10th count, the step starting at 20 + 9 x 10
    = 110 ms, lets prompts in. An arrival at 55 ms joins that step instead of the one at 60 ms: 50 ms later."""
    free, gated = _ttfts_s([0.055], 0)[0], _ttfts_s([0.055], 10)[0]
    assert gated - free == pytest.approx(0.110 - 0.060, abs=1e-9)


def test_the_gate_runs_whether_or_not_anything_waits():
    """The count runs every iteration: the next gates after 110 ms start at 210 and 310 ms. An arrival at 125 ms
    joins at 210 instead of 130: 80 ms later."""
    free, gated = _ttfts_s([0.125], 0)[0], _ttfts_s([0.125], 10)[0]
    assert gated - free == pytest.approx(0.210 - 0.130, abs=1e-9)


def test_a_quorum_of_waiting_prompts_opens_it():
    """Three arrivals at 55, 56 and 57 ms: with the quorum 3 (every rank read as holding one) they join the step at
    60 ms as without a gate; with none they wait for 110 ms."""
    arrivals = [0.055, 0.056, 0.057]
    assert _ttfts_s(arrivals, 10, 3) == pytest.approx(_ttfts_s(arrivals, 0), abs=1e-9)
    late = [a - b for a, b in zip(_ttfts_s(arrivals, 10), _ttfts_s(arrivals, 0), strict=True)]
    assert late == pytest.approx([0.050] * 3, abs=1e-9)


def test_the_quorum_is_ceil_h_r():
    """R = 8 ranks: H_8 = 2.718, so 3 waiting a rank; R = 4: H_4 = 2.083, 3; R = 2: 1.5, 2; one rank: no gate."""
    base = engine_profile("tensorrt-llm")
    assert [with_row_attention_dp_gate(base, 60, r).attention_dp_gate_quorum for r in (8, 4, 2)] == [3, 3, 2]
    assert with_row_attention_dp_gate(base, 60, 1).attention_dp_gate_iters == 0


def test_a_rows_own_options_set_it():
    """InferenceX's two attention-DP runs (``dsr1_fp4_b200_trt.sh``) set ``timeout_iters: 60``; its other
    TensorRT-LLM runs turn attention DP off and get no gate."""
    rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    assert (rows["IXA069"].attention_dp_gate, rows["IXA072"].attention_dp_gate) == (60, 60)
    assert rows["IXA022"].attention_dp_gate is None and rows["IXA061"].attention_dp_gate is None
