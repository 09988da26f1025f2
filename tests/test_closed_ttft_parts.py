"""bench/closed_ttft_parts.py and the simulation's trace: a closed loop's TTFT read part by part (issue 22)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from closed_ttft_parts import PARTS, band, closed_rows, request_parts, servers, sweeps_at_one  # noqa: E402

from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, TracedStep, simulate  # noqa: E402

#: Decode steps of 10 ms (one to eight sequences, any context), prefill 20 ms + 0.05 ms a token (10 ms shared).
TABLE = StepTable((0.010,) * 8, (0.010,) * 8, 0.0, 1000.0, (0.0, 4096.0), (0.020, 0.2248), 0.010)
VLLM = Scheduler(8, 4096, kind="vllm")


def _run(concurrency: int, front_s: float, lengths=None, prompts: int = 12):
    trace: list[TracedStep] = []
    r = simulate(
        TABLE, VLLM, 200, 20, prompts, client_concurrency=concurrency, lengths=lengths,
        behaviour=RunBehaviour(frontend_s=front_s), trace=trace,
    )  # fmt: skip
    return r, trace


class TestTrace:
    def test_a_trace_changes_nothing(self):
        """The same run with and without a trace: the same figures."""
        traced, _ = _run(3, 0.013)
        plain = simulate(TABLE, VLLM, 200, 20, 12, client_concurrency=3, behaviour=RunBehaviour(frontend_s=0.013))
        assert (traced.ttft_median_s, traced.tpot_median_s, traced.duration_s) == (
            plain.ttft_median_s,
            plain.tpot_median_s,
            plain.duration_s,
        )

    def test_one_in_flight_is_front_end_plus_its_own_prefill(self):
        """Concurrency 1: ``vllm bench serve``'s ``--max-concurrency`` semaphore (``limited_request_func``) lets the
        next request go only when the one before has finished, so it meets an idle engine: no step in flight, no
        other prompt, no decode in its step; TTFT = front end + its prefill alone (20 + 0.05 x 200 = 30 ms)."""
        r, trace = _run(1, 0.025)
        for ttft_s, n, parts in request_parts(trace, TABLE, 0.025):
            assert n == 1
            assert parts["in flight"] == parts["earlier"] == parts["others"] == 0.0
            assert parts["decodes"] == pytest.approx(0.0, abs=1e-12)
            assert parts["own"] == pytest.approx(0.030)
            assert ttft_s == pytest.approx(0.055)
        assert r.ttft_median_s == pytest.approx(0.055)

    def test_equal_lengths_keep_the_waves_together(self):
        """Issue 22 (a): with every request of one length, the C sent at once finish in one step and the client
        sends the next C together (one front end later), so each wave's prompts share one prefill step: 4 x 200
        prompt tokens, and each of its TTFTs holds the other three prompts' prefill (0.05 x 600 = 30 ms)."""
        _, trace = _run(4, 0.0)
        waves = [s for s in trace if s.firsts]
        assert len(waves) == 3
        assert all(s.prefill_tokens == 800 and sum(n for _, n, _ in s.firsts) == 4 for s in waves)
        for *_, parts in request_parts(trace, TABLE, 0.0):
            assert parts["others"] == pytest.approx(0.030)

    def test_the_parts_add_up_to_the_ttft(self):
        """Varied lengths at 3 in flight, a front end mid-step: every request's parts sum to its TTFT, and the band's
        parts to the band's mean."""
        lengths = [(100 + 37 * i % 300, 5 + 7 * i % 40) for i in range(30)]
        _, trace = _run(3, 0.0137, lengths=lengths, prompts=30)
        each = request_parts(trace, TABLE, 0.0137)
        assert sum(n for _, n, _ in each) == 30
        for ttft_s, _, parts in each:
            assert sum(parts.values()) == pytest.approx(ttft_s)
        mid = band(each)
        assert sum(mid[k] for k in PARTS) == pytest.approx(mid["band"])


def test_the_closed_runs_and_their_sweeps_at_one():
    """The 182 closed-loop runs of load_public.csv (vLLM PR 23151's LD013, gpustack's, InferenceX's IXA001-IXA091, the
    SGLang cookbook's SGC001-SGC026, SGA001-SGA033 and SGB025-SGB026, and the vLLM blog's VFK001-VFK004);
    the sweeps with a run at one in flight: vLLM 0.11 Qwen3-8B (LD085; LD068, LD086, LD087), SGLang EAGLE-3 (LD088; 13
    runs at 2-8) and InferenceX's SGLang on 8 x B200 and 8 x B300 (a sweep: one engine, source, model, GPU group and
    dataset name, whatever the release and lengths; its runs at one in flight, IXA001 / IXA004 and IXA007 / IXA012,
    and the FP4 checkpoint's, IXA062 / IXA064 and IXA073 / IXA078) and the cookbook's three pages (each page's runs at
    one, whatever their lengths, against its runs at 16 and more)."""
    rows = closed_rows(load_decode_rows(reference_dir() / "load_public.csv"))
    ids = [r.record_id for r in rows]
    assert ids == [
        "LD013",
        "LD036",
        *(f"LD0{i}" for i in (40, 41, 42, 44, 45)),
        *(f"LD0{i}" for i in range(68, 92)),
        *(f"IXA{i:03d}" for i in range(1, 92)),
        *(f"SGC{i:03d}" for i in range(1, 25)),
        *(f"VFK{i:03d}" for i in range(1, 5)),
        "SGC025",
        "SGC026",
        *(f"SGA{i:03d}" for i in (*range(1, 14), *range(17, 26), *range(28, 34))),
        "SGB025",
        "SGB026",
    ]
    sweeps = {one.record_id: sorted(r.record_id for r in others) for one, others in sweeps_at_one(rows)}
    assert sweeps == {
        "LD085": ["LD068", "LD086", "LD087"],
        "LD088": [f"LD0{i}" for i in (*range(75, 85), 89, 90, 91)],
        "IXA001": ["IXA002", "IXA005", "IXA006"],
        "IXA004": ["IXA002", "IXA005", "IXA006"],
        "IXA007": ["IXA008", "IXA009", "IXA010"],
        "IXA012": ["IXA008", "IXA009", "IXA010"],
        "IXA062": ["IXA063", "IXA065", "IXA067"],  # the FP4 runs: another model name, another sweep
        "IXA064": ["IXA063", "IXA065", "IXA067"],
        "IXA073": ["IXA074", "IXA075", "IXA079", "IXA080"],
        "IXA078": ["IXA074", "IXA075", "IXA079", "IXA080"],
        **{one: [f"SGC{i:03d}" for i in (2, 3, 5, 6)] for one in ("SGC001", "SGC004")},
        **{one: [f"SGC{i:03d}" for i in (8, 9, 11, 12, 14, 15)] for one in ("SGC007", "SGC010", "SGC013")},
        **{one: [f"SGC{i:03d}" for i in (17, 18, 20, 21, 23, 24)] for one in ("SGC016", "SGC019", "SGC022")},
        "SGC025": ["SGC026"],
        **{one: [] for one in ("SGA001", "SGA012")},  # speculative, and no other run of their model and dataset
        **{one: [f"SGA{i:03d}" for i in (4, 5, 7, 8, 10, 11)] for one in ("SGA003", "SGA006", "SGA009")},
        **{one: [f"SGA{i:03d}" for i in (18, 19, 21, 22, 24, 25)] for one in ("SGA017", "SGA020", "SGA023")},
        "SGA028": ["SGA029", "SGA030"],
        "SGA031": ["SGA032", "SGA033"],
        "SGB025": ["SGB026"],
    }


def test_one_anchor_per_server():
    """Runs of one server release on one host (engine, source, release, GPU, group size) share a front end; each group
    of several is anchored at its plainest run: vLLM 0.11 on 8 x H200 (DeepSeek-R1 LD036, GLM-4.6 LD040), on one A100
    (gpt-oss LD041, LD042) and on one H100 (Qwen3-8B at 1-8 in flight), SGLang 0.5.3 on one H100 (BF16 LD069 and the
    other 18: BF16 with a graph limit, FP8, EAGLE-3)."""
    rows = closed_rows(load_decode_rows(reference_dir() / "load_public.csv"))
    got = {anchor.record_id: sorted(r.record_id for r in others) for anchor, others in servers(rows)}
    assert {k: v for k, v in got.items() if k.startswith("LD")} == {
        "LD036": ["LD040"],
        "LD041": ["LD042"],
        "LD085": ["LD068", "LD086", "LD087"],
        "LD069": [f"LD0{i}" for i in (71, 72, 73, 74, *range(75, 85), 88, 89, 90, 91)],
    }
    # InferenceX: one anchor per image (release) and GPU group, e.g. SGLang 0.5.12 on 8 x H200 (IXA013 at 4 in flight)
    assert got["IXA013"] == ["IXA014", "IXA015", "IXA016"]
    # SGLang 0.5.12 on 8 x B200, FP8 and FP4 checkpoints alike (one server release on one host); IXA003 (4 x B200)
    # is another group
    assert got["IXA001"] == ["IXA002", "IXA004", "IXA062", "IXA063", "IXA064", "IXA065"]
    assert len([k for k in got if k.startswith("IXA")]) == 16
