"""A recorded traffic replayed as it came (issue 22: "arrivals ... a trace file"): ``planner.serving.load.trace_load``
reads it, ``fewest_replicas(arrivals_s=...)`` sizes a fleet on it (each of k replicas taking one request in k) and
``planner plan --trace FILE`` prints it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_support import one_line, run

from planner.errors import InvalidInputError
from planner.serving.benchmark import arrival_times_s
from planner.serving.fleet import fewest_replicas
from planner.serving.load import Replica, latency_under_load, trace_load

ONE = Replica("H100", "llama3.1-8b", 1)
PLAN = ["plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1"]


def _rows(times, prompt=500, output=100) -> list[dict[str, str]]:
    return [{"arrival_s": f"{t:.6f}", "prompt_tokens": str(prompt), "output_tokens": str(output)} for t in times]


def _write(tmp_path, times, prompt=500, output=100):
    path = tmp_path / "trace.csv"
    lines = ["arrival_s,prompt_tokens,output_tokens"] + [f"{t:.6f},{prompt},{output}" for t in times]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class TestReading:
    def test_arrivals_start_at_zero_in_order_with_their_lengths(self):
        t = trace_load(
            [
                {"arrival_s": "105.5", "prompt_tokens": "300", "output_tokens": "20"},
                {"arrival_s": "100", "prompt_tokens": "1,000", "output_tokens": "50"},
                {"arrival_s": "102", "prompt_tokens": "700", "output_tokens": "30"},
            ],
            "t.csv",
        )
        assert t.arrivals_s == (0.0, 2.0, 5.5)
        assert t.lengths == [(1000, 50), (700, 30), (300, 20)]
        assert (t.span_s, t.rate_per_s, t.longest_tokens) == (5.5, 2 / 5.5, 1050)
        assert t.prompt_mean_tokens == pytest.approx(2000 / 3)

    @pytest.mark.parametrize(
        ("rows", "message"),
        [
            ([], "t.csv: no requests; give a header arrival_s,prompt_tokens,output_tokens"),
            ([{"arrival_s": "1", "prompt_tokens": "2"}], "t.csv: no column output_tokens"),
            (
                [{"arrival_s": "0", "prompt_tokens": "2", "output_tokens": "3"},
                 {"arrival_s": "1", "prompt_tokens": "2.5", "output_tokens": "3"}],
                "t.csv line 3: arrival_s '1', prompt_tokens '2.5', output_tokens '3'; give seconds, and whole tokens",
            ),
            (
                [{"arrival_s": "nan", "prompt_tokens": "2", "output_tokens": "3"}],
                "t.csv line 2: arrival_s 'nan'",
            ),
        ],
    )  # fmt: skip
    def test_a_bad_trace_names_its_line_and_what_is_accepted(self, rows, message):
        with pytest.raises(InvalidInputError) as exc:
            trace_load(rows, "t.csv")
        assert message in str(exc.value)


class TestReplay:
    def test_a_trace_of_the_simulations_own_arrivals_is_that_run(self):
        """vllm bench serve's Poisson arrivals at 8 requests/s (``arrival_times_s``, 400 requests) written as a trace
        and replayed: the same percentiles as the run at that rate, to the last digit."""
        times = arrival_times_s(400, 8.0)
        t = trace_load(_rows(times), "t.csv")
        replayed = latency_under_load(ONE, 500, 100, arrivals_s=np.asarray(times), lengths=t.lengths)
        at_rate = latency_under_load(ONE, 500, 100, rate_per_s=8.0, num_requests=400)
        for q in (50, 95, 99):
            assert replayed.ttft_s.at(q) == at_rate.ttft_s.at(q)
            assert replayed.tpot_s.at(q) == at_rate.tpot_s.at(q)

    def test_bursts_need_at_least_the_replicas_of_the_same_traffic_spread_evenly(self):
        """600 requests over 60 s: evenly (every 0.1 s) and as 6 bursts of 100 at once. Queueing only grows with
        burstiness, so the bursts' fleet for a p95 TTFT of 0.5 s is at least the even one's, and here larger."""
        even = np.arange(600) * 0.1
        bursts = np.repeat(np.arange(6) * 10.0, 100)

        def replicas(times) -> int:
            t = trace_load(_rows(times), "t.csv")
            return fewest_replicas(ONE, 500, 100, t.rate_per_s, ttft_target_s=0.5, lengths=t.lengths,
                                   arrivals_s=t.arrivals_s).replicas  # fmt: skip

        assert replicas(bursts) > replicas(even) >= 1


class TestPlanCommand:
    def test_plan_replays_a_trace_and_says_how(self, tmp_path):
        path = _write(tmp_path, np.arange(600) * 0.1 + 1000.0)
        r = run(*PLAN, "--trace", str(path), "--ttft-target", "0.5", "--tpot-target", "0.05")
        assert r.exit_code == 0, r.output
        assert (
            f"Under load: the trace {path}, 600 requests over 59.90 s (10 requests/s, prompts of 500 and outputs of "
            "100 tokens on average), computed by planner's serving simulation (replayed as they came"
        ) in r.output
        d = json.loads(run(*PLAN, "--trace", str(path), "--json").output)["under_load"]["trace"]
        assert (d["requests"], d["span_s"], d["prompt_mean_tokens"]) == (600, pytest.approx(59.9), 500.0)

    def test_a_json_lines_trace_replays_as_its_csv_does(self, tmp_path):
        """The same 600 requests written one JSON object a line (a trial's trace.jsonl was refused with "no column
        arrival_s, prompt_tokens, output_tokens", naming the keys its lines held): the same fleet and figures."""
        arrivals = np.arange(600) * 0.1 + 1000.0
        csv_path = _write(tmp_path, arrivals)
        lines = [json.dumps({"arrival_s": t, "prompt_tokens": 500, "output_tokens": 100}) for t in arrivals]
        jsonl = tmp_path / "t.jsonl"
        jsonl.write_text("\n".join(lines) + "\n")
        args = ("--ttft-target", "0.5", "--tpot-target", "0.05", "--json")
        a, b = (json.loads(run(*PLAN, "--trace", str(p), *args).output)["under_load"] for p in (csv_path, jsonl))
        assert a["replicas"] == b["replicas"] and a["ttft_s"] == b["ttft_s"]
        bad = tmp_path / "bad.jsonl"
        bad.write_text(lines[0] + "\n[1, 2]\n")
        assert one_line(run(*PLAN, "--trace", str(bad)), 2).endswith(
            "line 2 is not a JSON object ('[1, 2]'); give one a line"
        )
        array = tmp_path / "a.json"  # a JSON array read as a CSV said "column ... is in the header twice" (trial 7)
        array.write_text("[" + ",".join(lines[:2]) + "]")
        assert one_line(run(*PLAN, "--trace", str(array)), 2).endswith(
            "a JSON array (or document); give JSON Lines (one object a line, no enclosing [ ]) or a CSV"
        )

    def test_a_trace_of_a_few_requests_says_its_percentiles_rest_on_them(self, tmp_path):
        """3 requests: the p95 and p99 printed are the slowest of three (a trial read them as percentiles); 600 spread
        over one replica: no such warning."""
        few = run(*PLAN, "--trace", str(_write(tmp_path, [0.0, 0.5, 1.0])), "--ttft-target", "1")
        assert "warning: the trace has 3 requests: its p95 and p99 are its slowest" in (few.stdout)
        many = run(*PLAN, "--trace", str(_write(tmp_path, np.arange(600) * 0.1)), "--ttft-target", "1")
        assert "the trace has 600" not in many.stdout and "percentiles to plan on" not in many.stdout

    def test_plan_refuses_a_trace_beside_a_rate_or_lengths(self, tmp_path):
        path = _write(tmp_path, [0.0, 1.0])
        line = one_line(run(*PLAN, "--trace", str(path), "--rate", "3"), 2)
        assert line.endswith("--trace gives the arrivals and lengths; leave out --rate")
        long = _write(tmp_path, [0.0, 1.0], prompt=4000, output=200)
        line = one_line(run(*PLAN, "--trace", str(long)), 2)
        assert "more than --context 4,096; give --context 4,200 or more (recorded requests are" in line
