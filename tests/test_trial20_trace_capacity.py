"""Trial 20 F5: a trace's capacity is judged at its mean rate with outlier gaps shortened (at its busiest window's
rate until trial 24 F2), not its mean over the whole span, so one late row no longer cuts the fleet; a far gap and a
trace too short for a steady state are named."""

from __future__ import annotations

import numpy as np
import pytest

from planner.serving.fleet import check_fleet, fewest_replicas
from planner.serving.load import Replica, busiest_rate_per_s, trace_load


def _rows(n=240, rate=46.5, seed=0):
    gaps = np.random.default_rng(seed).exponential(1 / rate, n)
    return [{"arrival_s": f"{t:.4f}", "prompt_tokens": "229", "output_tokens": "318"} for t in np.cumsum(gaps)]


def test_busiest_rate_ignores_a_late_row_and_a_row_at_1e12_s():
    t = np.cumsum(np.random.default_rng(1).exponential(1 / 40, 400))
    base = busiest_rate_per_s(t)
    assert base == pytest.approx((len(t) - 1) / np.ptp(t))  # shorter than the window: its rate over its span
    for late in (t[-1] + 9.0, 1e12):
        assert busiest_rate_per_s(np.append(t, late)) == pytest.approx(base, rel=0.01)
    long = np.cumsum(np.r_[np.full(3000, 1 / 30), np.full(2400, 1 / 80), np.full(3000, 1 / 30)])  # a 30-s surge
    assert busiest_rate_per_s(long) == pytest.approx((30 * 30 + 2400) / 60, rel=0.02)  # the busiest minute


def test_one_late_row_sizes_the_same_fleet():
    """The trial's 240 requests over 5 s sized 3 x 4 H100; one more row 9 s later sized 1 x 4 (mean rate 17.2
    requests/s, where the first 240 still came at 46.5 to one replica)."""
    rows = _rows()
    late = rows + [
        {"arrival_s": f"{float(rows[-1]['arrival_s']) + 9:.4f}", "prompt_tokens": "100", "output_tokens": "50"}
    ]
    replica = Replica("H100", "llama3.1-70b", 4)
    sized = []
    for r in (rows, late):
        t = trace_load(r, "t.csv")
        s = fewest_replicas(replica, round(t.prompt_mean_tokens), round(t.output_mean_tokens), t.rate_per_s, ttft_target_s=1.5,
                            tpot_target_s=0.06, lengths=t.lengths, arrivals_s=t.arrivals_s)  # fmt: skip
        sized.append(s.replicas)
    assert sized[0] == sized[1] >= 2
    t = trace_load(late, "t.csv")
    assert "a late or mistyped row?" in t.gap_note() and not trace_load(rows, "t.csv").gap_note()
    assert "too short to reach a steady state" in t.short_note(5.0)
    given = check_fleet(replica, round(t.prompt_mean_tokens), round(t.output_mean_tokens), t.rate_per_s, 1, ttft_target_s=1.5,
                        tpot_target_s=0.06, lengths=t.lengths, arrivals_s=t.arrivals_s, lose_one=False)  # fmt: skip
    assert (
        given.result is None and given.judged_rate_per_replica_s > 40
    )  # past capacity at its mean rate, the late gap shortened


def test_plan_states_the_rate_it_judges_capacity_at(tmp_path):
    import json

    from cli_support import run

    rows = _rows(120)
    text = "arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{r['arrival_s']},229,318\n" for r in rows)
    path = tmp_path / "late.csv"
    path.write_text(text + f"{float(rows[-1]['arrival_s']) + 9:.4f},100,50\n")
    args = ("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "8k", "--gpus", "4", "--trace", str(path))
    result = run(*args, "--ttft-target", "1.5s")
    assert result.exit_code == 0, result.output
    # judged at its mean with the late row's gap shortened (trial 24 F2: one notion with --rate), not diluted by it
    assert (
        "capacity judged at the trace's mean rate, " in result.stdout and "its busiest 60-s window: " in result.stdout
    )
    assert "a late or mistyped row?" in result.stdout and "too short to reach a steady state" in result.stdout
    got = json.loads(run(*args, "--ttft-target", "1.5s", "--json").stdout)["under_load"]["trace"]
    assert got["capacity_judged_at_rate_per_s"] > 2 * got["rate_per_s"] and "late or mistyped" in got["gap_note"]
