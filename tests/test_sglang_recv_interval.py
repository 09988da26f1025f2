"""SGLang's ``--scheduler-recv-interval N`` (s187; shipped as a reading of published rows' commands): the scheduler
reads newly arrived requests only when ``SchedulerRecvSkipper``'s counter reaches N; a decode step adds 1, a prefill
(extend) step ``SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_DEFAULT`` = 1000 and an idle loop 1 (sglang 0.5.9 / 0.5.12 wheels,
``managers/scheduler_recv_skipper.py``, ``environ.py``). planner.serving.simulate.RunBehaviour.recv_interval."""

from __future__ import annotations

import pytest

from planner.serving.simulate import RECV_WEIGHT_EXTEND, RunBehaviour, Scheduler, StepTable, simulate

#: A flat table: a decode step 10 ms at any batch, a prefill step 20 ms at any size.
TABLE = StepTable(
    decode_lo_s=(0.010,) * 300, decode_hi_s=(0.010,) * 300, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.020, 0.020), shared_s=0.005,
)  # fmt: skip
SGLANG = Scheduler(max_num_seqs=64, max_num_batched_tokens=8192, kind="sglang")


def _ttft_s(interval: int, arrival_s: float) -> float:
    """One long request decoding from t = 0 and a second arriving at ``arrival_s``: the second's TTFT, seconds."""
    lengths = [(100, 200), (100, 2)]
    out = simulate(
        TABLE, SGLANG, 0, 0, 2, arrivals_s=[0.0, arrival_s], lengths=lengths,
        behaviour=RunBehaviour(recv_interval=interval),
    )  # fmt: skip
    ttfts = sorted(out.samples.ttft[0].tolist())
    return ttfts[-1] if len(ttfts) > 1 else ttfts[0]


def test_a_prefill_step_weighs_1000():
    """``SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_DEFAULT = EnvInt(1000)`` (0.5.12 environ.py l.229)."""
    assert RECV_WEIGHT_EXTEND == 1000


def test_an_interval_of_one_reads_every_loop():
    """The default: an arrival mid-decode joins at the next step boundary, one 20 ms prefill later its first token.
    The first request's prefill ends at 20 ms and its decode steps at 30, 40, ... ms; an arrival at 55 ms joins at 60."""
    assert _ttft_s(1, 0.055) == pytest.approx(0.060 - 0.055 + 0.020, abs=1e-9)


def test_an_arrival_waits_for_the_next_read():
    """Interval 10: after the first prefill (weight 1000) the loop at 20 ms reads; the next reads come after 10 decode
    steps each, at 120 and 220 ms. An arrival at 55 ms is read at 120 ms and prefilled by 140: TTFT 85 ms, not 25."""
    assert _ttft_s(10, 0.055) == pytest.approx(0.140 - 0.055, abs=1e-9)
    assert _ttft_s(10, 0.125) == pytest.approx(0.240 - 0.125, abs=1e-9)


def test_an_idle_server_reads_at_once():
    """An idle loop takes microseconds and weighs 1: a request that finds the server idle is prefilled at once,
    whatever the interval."""
    lengths = [(100, 2), (100, 2)]
    out = simulate(
        TABLE, SGLANG, 0, 0, 2, arrivals_s=[0.0, 1.0], lengths=lengths, behaviour=RunBehaviour(recv_interval=30)
    )
    assert sorted(out.samples.ttft[0].tolist()) == pytest.approx([0.020, 0.020])


def test_a_wider_interval_never_shortens_a_wait():
    """At 30 a second request waits at least as long as at 10, and at 10 at least as long as at 1, wherever it lands
    between reads."""
    for arrival in (0.021, 0.055, 0.099, 0.131, 0.205):
        assert _ttft_s(1, arrival) <= _ttft_s(10, arrival) <= _ttft_s(30, arrival) + 1e-12


def test_a_rows_own_command_sets_it():
    """``--scheduler-recv-interval 30`` in a row's command reaches the row (``DecodeRow.scheduler_recv_interval``),
    its engine profile and the simulation's behaviour; a row without it reads every loop."""
    from planner.accuracy.predict import _profile_for
    from planner.accuracy.published import load_decode_rows, reference_dir
    from planner.serving.benchmark import engine_behaviour

    rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    ixa002, ixa001, ld036 = rows["IXA002"], rows["IXA001"], rows["LD036"]
    assert (ixa002.scheduler_recv_interval, ixa001.scheduler_recv_interval, ld036.scheduler_recv_interval) == (
        30, 10, None,
    )  # fmt: skip
    profile = _profile_for(ixa002, None)
    assert profile.scheduler_recv_interval == 30
    assert engine_behaviour(profile, SGLANG, RunBehaviour()).recv_interval == 30
    assert engine_behaviour(_profile_for(ld036, None), SGLANG, RunBehaviour()).recv_interval == 1
