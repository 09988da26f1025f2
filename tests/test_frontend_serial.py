"""A front end that prepares one request at a time: a FIFO single server before the engine (issues 21 and 22)."""

from __future__ import annotations

import math

import pytest

from planner.serving import benchmark
from planner.serving.benchmark import FRONTEND_SERIAL_S, engine_behaviour
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate
from planner.serving.state import queued

#: Decode steps of 10 ms (one to eight sequences, any context), prefill 20 ms + 0.05 ms a token (10 ms shared).
TABLE = StepTable((0.010,) * 8, (0.010,) * 8, 0.0, 1000.0, (0.0, 4096.0), (0.020, 0.2248), 0.010)
VLLM = Scheduler(8, 4096, kind="vllm")


class TestQueued:
    def test_a_burst_reaches_the_engine_one_service_time_apart(self):
        """Three requests sent together at 0 with a 10 ms server: at the engine at 0, 10 and 20 ms; free at 30 ms."""
        cohorts, free = queued([(100, 5)] * 3, [0.0] * 3, 0.010, -math.inf)
        assert [c.ready_s for c in cohorts] == pytest.approx([0.0, 0.010, 0.020])
        assert [c.arrivals for c in cohorts] == [[(0.0, 1)]] * 3  # the send time stays the TTFT's origin
        assert free == pytest.approx(0.030)

    def test_an_idle_server_delays_nothing(self):
        """Requests 50 ms apart through a 10 ms server reach the engine when sent (d_i = max(sent_i, d_(i-1) + s))."""
        cohorts, free = queued([(100, 5)] * 3, [0.0, 0.05, 0.10], 0.010, -math.inf)
        assert [c.ready_s for c in cohorts] == pytest.approx([0.0, 0.05, 0.10])
        assert free == pytest.approx(0.11)


class TestSimulatedBurst:
    def test_one_prompt_alone_is_unchanged(self):
        """One request: the serial part is inside its front-end time, so its TTFT is the same with or without it."""
        plain = simulate(TABLE, VLLM, 200, 2, 1, behaviour=RunBehaviour(frontend_s=0.02))
        serial = simulate(TABLE, VLLM, 200, 2, 1, behaviour=RunBehaviour(frontend_s=0.02, frontend_serial_s=0.015))
        assert serial.ttft_mean_s == pytest.approx(plain.ttft_mean_s)

    def test_a_burst_waits_its_turn(self):
        """Four 200-token prompts sent together through a 100 ms server (longer than any step here): each is prefilled
        alone as it arrives, a 30 ms step (20 ms + 200 x 0.05 ms), so TTFT_i = 0.1 i + 0.03 + F: mean 0.15 + 0.03 + F."""
        how = RunBehaviour(frontend_s=0.2, frontend_serial_s=0.1)
        r = simulate(TABLE, VLLM, 200, 2, 4, behaviour=how)
        assert r.ttft_mean_s == pytest.approx(0.15 + 0.03 + 0.2)


class TestRule:
    def test_the_serial_part_is_clipped_to_the_front_end(self):
        """A request's front end is never shorter than its serial part: min(serial, frontend_s)."""
        assert RunBehaviour(frontend_s=0.005, frontend_serial_s=0.013).frontend_serial_s == 0.005
        assert RunBehaviour(frontend_serial_s=0.013).frontend_serial_s == 0.0

    def test_the_figure_is_one_api_server_ceiling(self):
        """vLLM PR 17546 'DP=2 before': 10,000 ShareGPT requests through one API server in 130.74 s."""
        assert FRONTEND_SERIAL_S == pytest.approx(0.013074)

    def test_off_unless_set(self, monkeypatch):
        """No run gets a serial part by default (the experiment failed its ship rule, docs/history.md s112);
        with ``SERIAL_FRONT_END_S`` set (``--serial-front-end``) every engine's run does."""
        for engine in ("vllm", "sglang", "tensorrt-llm"):
            assert engine_behaviour(None, engine, RunBehaviour(frontend_s=0.02)).frontend_serial_s == 0.0
        monkeypatch.setattr(benchmark, "SERIAL_FRONT_END_S", FRONTEND_SERIAL_S)
        for engine in ("vllm", "sglang", "tensorrt-llm"):
            how = engine_behaviour(None, engine, RunBehaviour(frontend_s=0.02))
            assert how.frontend_serial_s == pytest.approx(FRONTEND_SERIAL_S)
