"""h-tok (docs/hypotheses/tokenizer-serial-per-token.md): one front-end thread tokenizing each prompt in turn, a time
per prompt token (vLLM's ``AsyncMicrobatchTokenizer``: ``ThreadPoolExecutor(max_workers=1)``); off by default."""

from __future__ import annotations

import math

import pytest

from planner.serving import benchmark
from planner.serving.benchmark import engine_behaviour
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate
from planner.serving.state import queued

TABLE = StepTable((0.010,) * 8, (0.010,) * 8, 0.0, 1000.0, (0.0, 4096.0), (0.020, 0.2248), 0.010)
VLLM = Scheduler(8, 4096, kind="vllm")


def test_off_by_default():
    assert benchmark.SERIAL_TOKENIZE_S_PER_TOKEN == 0.0
    assert engine_behaviour("vllm", "vllm", RunBehaviour(frontend_s=0.02)).frontend_serial_per_token_s == 0.0


def test_a_wave_queues_by_prompt_tokens():
    """Three 2,000-token prompts sent together at 1 us a token: at the engine 2 ms apart (0, 2, 4 ms)."""
    cohorts, _ = queued([(2000, 5)] * 3, [0.0] * 3, 0.0, -math.inf, 0.0, 1e-6, 0.02)
    assert [c.ready_s for c in cohorts] == pytest.approx([0.0, 0.002, 0.004])


def test_the_wait_is_at_most_the_front_end():
    """A request's serial part never exceeds its front-end time (``cap_s``)."""
    cohorts, _ = queued([(100_000, 5)] * 2, [0.0] * 2, 0.0, -math.inf, 0.0, 1e-6, 0.02)
    assert cohorts[1].ready_s == pytest.approx(0.02)


def test_constant_serial_unchanged_without_per_token():
    a, fa = queued([(100, 5)] * 3, [0.0] * 3, 0.010, -math.inf)
    b, fb = queued([(100, 5)] * 3, [0.0] * 3, 0.010, -math.inf, 0.0, 0.0, 0.02)
    assert [c.ready_s for c in a] == [c.ready_s for c in b] and fa == fb


def test_a_burst_waits_for_the_thread():
    """Eight 200-token prompts at once, 50 us a token: the same run as a fixed 10 ms a request in turn, and slower
    than without the thread."""
    plain = simulate(TABLE, VLLM, 200, 4, 8, behaviour=RunBehaviour(frontend_s=0.02))
    how = RunBehaviour(frontend_s=0.02, frontend_serial_per_token_s=5e-5)
    serial = simulate(TABLE, VLLM, 200, 4, 8, behaviour=how)
    fixed = simulate(TABLE, VLLM, 200, 4, 8, behaviour=RunBehaviour(frontend_s=0.02, frontend_serial_s=0.010))
    assert serial.ttft_mean_s == pytest.approx(fixed.ttft_mean_s)
    assert serial.ttft_mean_s > plain.ttft_mean_s


def test_switch_sets_the_behaviour(monkeypatch):
    monkeypatch.setattr(benchmark, "SERIAL_TOKENIZE_S_PER_TOKEN", 1.15e-6)
    how = engine_behaviour("vllm", "vllm", RunBehaviour(frontend_s=0.02))
    assert how.frontend_serial_per_token_s == pytest.approx(1.15e-6)


def test_micro_batches_share_one_ready_time():
    """h-tok test 2: 40 prompts of 1,000 tokens sent together at 1 us a token, batches of 32: the first 32 reach the
    engine together at the send time (their own front end covers them), the last 8 together 8 ms later."""
    cohorts, free = queued([(1000, 5)] * 40, [0.0] * 40, 0.0, -math.inf, 0.0, 1e-6, 0.02, 32)
    assert {c.ready_s for c in cohorts[:32]} == {0.0}
    assert [c.ready_s for c in cohorts[32:]] == pytest.approx([0.008] * 8)
    assert free == pytest.approx(0.008)


def test_micro_batch_window():
    """A prompt sent more than 2 ms after the batch's first is taken in the next batch."""
    cohorts, _ = queued([(1000, 5)] * 2, [0.0, 0.003], 0.0, -math.inf, 0.0, 1e-6, 0.02, 32)
    assert [c.ready_s for c in cohorts] == pytest.approx([0.0, 0.003])
