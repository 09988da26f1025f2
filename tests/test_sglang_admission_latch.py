"""SGLang's admission latch (h-r3, docs/hypotheses/burst-tpot-skew.md; off, not shipped): after the ``PrefillAdder``
answers ``NO_TOKEN`` SGLang sets ``running_batch.batch_is_full`` and starts no prefill batch until a request leaves
the running batch (0.5.5.post1 ``managers/scheduler.py`` l.1726-1729, l.1815-1825, l.1938-1943), where the shipped
simulation tries again at every decode step as ``new_token_ratio`` decays. planner.serving.simulate."""

from __future__ import annotations

import pytest

from planner.serving import simulate as sim

#: A flat table: a decode step 10 ms at any batch, a prefill step 20 ms at any size.
TABLE = sim.StepTable(
    decode_lo_s=(0.010,) * 8, decode_hi_s=(0.010,) * 8, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.020, 0.020), shared_s=0.005,
)  # fmt: skip
#: Two prompts of 100 tokens with 1,000-token outputs and a short third: the first two take 2 x 1,100 of a 2,300-token
#: cache at admission, so the third (100 + 10) does not fit in the first batch (NO_TOKEN); one decode step later
#: 0.7 x their remaining output leaves room for it.
LENGTHS = [(100, 1000), (100, 1000), (100, 10)]


def _last_first_token_s(latch: bool, monkeypatch: pytest.MonkeyPatch, kind: str = "sglang") -> float:
    monkeypatch.setattr(sim, "SGLANG_ADMISSION_LATCH", latch)
    scheduler = sim.Scheduler(max_num_seqs=3, max_num_batched_tokens=8192, kind=kind, kv_tokens=2300.0)
    result = sim.simulate(TABLE, scheduler, 100, 670, len(LENGTHS), lengths=LENGTHS)
    values, _ = result.samples.ttft
    return float(values.max())


def test_without_the_latch_the_third_enters_once_the_reservation_shrinks(monkeypatch):
    """The shipped reading: tried again at the first decode step, the third's first token comes within a few
    steps."""
    assert _last_first_token_s(False, monkeypatch) < 0.1


def test_with_the_latch_the_third_waits_for_a_request_to_leave(monkeypatch):
    """batch_is_full holds until the first two finish (their 999 decode steps of 10 ms), whatever the ratio's decay."""
    assert _last_first_token_s(True, monkeypatch) == pytest.approx(0.020 + 999 * 0.010 + 0.020, abs=0.02)


def test_the_latch_is_sglangs_alone(monkeypatch):
    """vLLM's scheduler keeps no reservation and no latch: the switch changes nothing there."""
    assert _last_first_token_s(True, monkeypatch, "vllm") == _last_first_token_s(False, monkeypatch, "vllm")
