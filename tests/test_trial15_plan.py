"""Trial 15 (a capacity planner using `planner plan --rate/--trace/--replicas`; findings F3, F4, F6-F10 of its
findings.md), one class per finding.

The trial's cases: DeepSeek-R1 dp-ep on 8 x H200 at 10 requests/s of 1,000 / 500 tokens (p95 TTFT 2 s, TPOT 50 ms)
for F3; Llama-3.1-8B on 1 x H100 at 1,000 / 300 tokens for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import one_line, run

from planner.units import counted

#: Llama-3.1-8B on one H100 with a 4k context: the trial's small case (F6, F7, F8, F9, F10).
SMALL = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4k", "--gpus", "1")
LENGTHS = ("--prompt-tokens", "1000", "--output-tokens", "300")


def plan_text(*args: str) -> str:
    """``planner plan ARGS`` run to success: its stdout."""
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r.stdout


class TestF10WordingAndFormat:
    """F10: "1 replicas", a context of 104857600 without separators, negative and zero lengths refused in two
    different ways, and the exit codes' convention (stated nowhere a user reads)."""

    def test_one_replica_lost_of_two_reads_1_replica(self):
        """The trial's `--rate 60 ... --replicas 2` printed "one replica lost: 1 replicas"; ``counted`` gives the
        singular (its own docstring: (1, "GPU") -> '1 GPU')."""
        text = plan_text(*SMALL, "--rate", "20", *LENGTHS, "--replicas", "2", "--ttft-target", "1")
        (line,) = [x for x in text.splitlines() if "one replica lost:" in x]
        assert "one replica lost: 1 replica at 20 requests/s" in line
        assert "1 replicas" not in text
        assert counted(1, "replica") == "1 replica"

    def test_a_context_past_the_limit_is_shown_with_thousands_separators(self):
        """`--context 100M` is 100 x 2^20 = 104,857,600 tokens (``planner.units.TOKEN_SUFFIXES``: M = 1,048,576);
        the limit 16,777,216 was already grouped, the value was not."""
        line = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "100M"), 2)
        assert line.endswith("from 1 to 16,777,216; got 104,857,600"), line

    @pytest.mark.parametrize("option", ["--prompt-tokens", "--output-tokens"])
    @pytest.mark.parametrize("typed", ["-3", "0", "-0.5", "0.5"])
    def test_a_length_below_one_token_gets_one_message_whatever_its_sign(self, option, typed):
        """The trial: `--output-tokens -3` read "'-3' is not a number of tokens", `--prompt-tokens 0` "0 tokens; give
        at least 1". Now one message for any length below 1 token, quoting what was typed and what is accepted."""
        lengths = {"--prompt-tokens": "1000", "--output-tokens": "300"} | {option: typed}
        r = run(*SMALL, "--rate", "1", *(x for kv in lengths.items() for x in kv))
        assert r.exit_code == 2
        assert (
            f"'{typed}' is less than 1 token; give a number of tokens of 1 or more, such as 207.5, 8,192, 1e4 or 8k"
            in r.output
        ), r.output

    def test_a_negative_context_reads_as_zero_does(self):
        """--context is whole tokens: the same message with "a whole number of tokens"."""
        for typed in ("-4k", "0"):
            r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", typed)
            assert r.exit_code == 2
            assert f"'{typed}' is less than 1 token; give a whole number of tokens of 1 or more" in r.output

    def test_the_exit_codes_are_stated_in_help_and_readme_as_the_errors_set_them(self):
        """planner/cli/__init__.py's docstring and planner/errors.py: 2 bad usage, 1 failure (kept; the trial saw
        "does not fit" exit 1 and an unknown name 2). Now `planner --help` and the README say so, and the codes are
        those said: an unknown name 2, weights that do not fit 1."""
        help_text = " ".join(run("--help").stdout.split())
        assert "Exit codes: 0 done; 2 bad input" in help_text and "1 a failure" in help_text
        readme = (Path(__file__).parents[1] / "README.md").read_text()
        assert "**Exit codes**" in readme
        assert run("plan", "--gpu", "H10", "--model", "llama3.1-8b", "--context", "4k").exit_code == 2
        assert run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--gpus", "1").exit_code == 1


def _trace(path, rows: list[tuple[float, int, int]]):
    """A planner trace CSV at ``path`` (arrival_s, prompt_tokens, output_tokens), its rows as given."""
    path.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{t},{p},{o}\n" for t, p, o in rows))
    return path


class TestF9OutOfOrderTrace:
    """F9: a trace's rows out of time order were sorted without a word (rev20.csv, shuf20.csv, unsorted.csv)."""

    ROWS = [(0.5, 1000, 300), (0.1, 1000, 300), (0.3, 1000, 300), (1.0, 1000, 300)]  # the trial's unsorted.csv

    def test_the_note_counts_the_rows_and_names_the_first_line(self, tmp_path):
        """unsorted.csv: 0.5, 0.1, 0.3, 1.0 s. Only 0.1 (file line 3: the header is line 1) is earlier than the row
        above it: 1 row, line 3. The run is the sorted one's: 4 requests over 1.0 - 0.1 = 900 ms, as the trial saw."""
        path = _trace(tmp_path / "unsorted.csv", self.ROWS)
        text = plan_text(*SMALL, "--trace", str(path), "--ttft-target", "0.5")
        assert (
            f"  note: arrivals were not in time order in {path} (1 row earlier than the row above it, the first on "
            "line 3): sorted by arrival; a merge of several logs?" in text.splitlines()
        )
        assert "4 requests over 900 ms" in text
        sorted_text = plan_text(*SMALL, "--trace", str(_trace(tmp_path / "s.csv", sorted(self.ROWS))),
                                "--ttft-target", "0.5")  # fmt: skip
        assert "not in time order" not in sorted_text
        figures = [x for x in text.splitlines() if x.startswith("  TTFT p50")]
        assert figures == [x for x in sorted_text.splitlines() if x.startswith("  TTFT p50")]

    def test_json_carries_the_count_and_the_note(self, tmp_path):
        """--json's under_load.trace: out_of_order_rows 1 and the same note; 0 and null for a sorted file."""
        import json

        path = _trace(tmp_path / "unsorted.csv", self.ROWS)
        trace = json.loads(plan_text(*SMALL, "--trace", str(path), "--ttft-target", "0.5", "--json"))["under_load"]
        assert trace["trace"]["out_of_order_rows"] == 1
        assert trace["trace"]["note"].startswith(f"arrivals were not in time order in {path}")
        path = _trace(tmp_path / "sorted.csv", sorted(self.ROWS))
        trace = json.loads(plan_text(*SMALL, "--trace", str(path), "--ttft-target", "0.5", "--json"))["under_load"]
        assert trace["trace"]["out_of_order_rows"] == 0 and trace["trace"]["note"] is None


class TestF7OutputPerReplicaIsTheWholeRuns:
    """F7: "output per replica 5,613 tokens/s" against an offered 20 x 300 = 6,000 read as "cannot keep up"; it is
    the whole simulated run's output over its duration, ramp-up and drain included."""

    def test_the_line_says_whose_rate_it_is_and_prints_the_offered_rate_beside_it(self):
        """Llama-3.1-8B on 1 x H100 at 20 requests/s of 1,000 / 300 (the trial's command): 1 replica (capacity 24.6
        requests/s, the trial's figure), offered 20 x 300 = 6,000 tokens/s. The printed figure is 1,000 requests x
        300 tokens / the run's duration (the duration printed beside it), so below 6,000 by the ramp and drain."""
        text = plan_text(*SMALL, "--rate", "20", *LENGTHS)
        (line,) = [x for x in text.splitlines() if x.startswith("  output per replica")]
        assert "tokens/s over the whole simulated run (" in line and "its ramp-up and drain included)" in line
        assert line.endswith("offered 6,000 tokens/s (20 requests/s x 300 tokens), below the replica's capacity")
        rate = float(line.split()[3].replace(",", ""))
        duration_s = float(line.split("simulated run (")[1].split(" s,")[0])
        assert rate == pytest.approx(1000 * 300 / duration_s, rel=2e-3)  # printed to 4 and 4 significant digits
        assert rate < 6000

    def test_json_gives_the_offered_rate_and_the_runs_duration(self):
        """--json: offered_output_tokens_per_s_per_replica = 20 x 300; output_tokens_per_s_per_replica x
        run_duration_s = the run's 1,000 x 300 output tokens."""
        import json

        u = json.loads(plan_text(*SMALL, "--rate", "20", *LENGTHS, "--json"))["under_load"]
        assert u["offered_output_tokens_per_s_per_replica"] == pytest.approx(6000)
        assert u["output_tokens_per_s_per_replica"] * u["run_duration_s"] == pytest.approx(300_000)


class TestF4HeldOutRangesArePooled:
    """F4: the under-load held-out multipliers are one table (``planner.accuracy.loaded_ranges``: by quantity and
    arrival kind, no GPU, engine or model column), the same for every deployment; the text did not say so, nor which
    line is the deployment's own."""

    POOLED = (
        "is pooled over every GPU, engine and model class of those runs: the same multiples for every deployment, "
        "not specific to this one"
    )

    @staticmethod
    def _block(text: str) -> str:
        """The held-out block's heading, its lines joined (it is wrapped), up to its first range line."""
        lines = text.split("  held-out range (measured")[1].split("\n    p50 TTFT")[0]
        return " ".join(x.strip() for x in lines.splitlines())

    def test_the_table_has_no_deployment_in_it(self):
        """What the sentence states: every shipped range is keyed by (quantity, arrival) alone."""
        from planner.accuracy.loaded_ranges import ARRIVALS, QUANTITIES, load_loaded_ranges

        assert all(q in QUANTITIES and a in ARRIVALS for q, a in load_loaded_ranges())

    def test_the_heading_says_pooled_and_names_the_margin_line_as_the_deployments(self):
        """Llama-3.1-8B on 1 x H100 (vLLM) prints a Budget review's margin line (-8% / -1%, from 7 dense runs on H100
        + vLLM: README's figure), so that is the line named as this deployment's own; the same words in --json."""
        import json

        text = plan_text(*SMALL, "--rate", "10", *LENGTHS)
        assert "Budget review's margin" in text
        heading = self._block(text)
        assert self.POOLED in heading
        assert "this deployment's own is the Budget review's margin line above (this GPU, engine and model class):" in (
            heading
        )
        u = json.loads(plan_text(*SMALL, "--rate", "10", *LENGTHS, "--json"))["under_load"]
        assert u["held_out_ranges_scope"].startswith(f"the held-out ranges {self.POOLED}; this deployment's own is")

    def test_without_a_margin_line_the_tpot_range_is_named(self):
        """Where the margin equals the plan's own TPOT range (``render_plan`` prints no margin line), the heading
        names that range instead: stubbed here by a plan whose margin is its time range."""
        from dataclasses import replace

        from planner.cli.plan import deployment_range_words
        from planner.report import plan

        p = plan("H100", "llama3.1-8b", 4096)
        same = replace(p, serving_margin=p.time_residuals, serving_margin_note=p.time_range_note)
        assert deployment_range_words(same).startswith("this deployment's own is the TPOT range above")
        assert deployment_range_words(p).startswith("this deployment's own is the Budget review's margin line")


class TestF6TargetsNoFleetMeets:
    """F6: "no group of GPUs meets them: 1 per replica: no fleet of up to 262,144 replicas meets the targets: at
    3.81e-05 requests/s each, p95 TTFT 0.0425 s (target 0.001 s), TPOT 7.47 ms (target 30 ms)": a "them" without
    antecedent, "no group" of one group, a rate in scientific notation, seconds and milliseconds mixed, and a search's
    end where an idle replica already misses."""

    TARGETS = ("--rate", "10", *LENGTHS, "--ttft-target", "1ms", "--tpot-target", "30ms")

    @staticmethod
    def idle_ttft_ms(gpus: int) -> float:
        """One request alone on an idle replica of ``gpus`` x H100 (``idle_misses``' run: a closed loop of one); the
        trial's 0.0425 s at 262,144 replicas (10 / 262,144 requests/s each: idle) for 1 GPU."""
        from planner.report import plan, replica_of
        from planner.serving.load import latency_under_load

        replica = replica_of(plan("H100", "llama3.1-8b", 4096, gpus=gpus))
        return latency_under_load(replica, 1000, 300, concurrency=1, num_requests=1).ttft_s.p95 * 1e3

    def test_one_group_says_the_idle_replica_misses_first_in_ms(self):
        """The trial's command with --gpus 1: the whole refusal is the idle miss, 42.5 ms (the trial's 0.0425 s);
        the TPOT target an idle replica meets (7.47 ms against 30) is not in it."""
        line = one_line(run(*SMALL, *self.TARGETS), 2)
        idle = self.idle_ttft_ms(1)
        assert idle == pytest.approx(42.5, abs=0.05)
        assert line == (
            "planner: error: p95 TTFT target 1 ms is below one request's own TTFT on an idle replica (42.5 ms on 1 x "
            "H100 SXM 80GB): no number of replicas meets it"
        )

    def test_several_groups_list_each_groups_idle_figure_and_the_lowest(self):
        """Without --gpus the groups 1, 2, 4 and 8 are tried (``groups_to_try``): each one's idle TTFT, in ms, and
        the lowest of them as the best reachable; one line of well under the trial's ~700 characters."""
        args = [a for a in SMALL if a not in ("--gpus", "1")]
        line = one_line(run(*args, *self.TARGETS), 2)
        idle = {n: self.idle_ttft_ms(n) for n in (1, 2, 4, 8)}
        values = ", ".join(f"{idle[n]:.3g}" for n in (1, 2, 4)) + f" and {idle[8]:.3g}"
        assert line == (
            "planner: error: p95 TTFT target 1 ms is below one request's own TTFT on an idle replica of every group "
            f"tried (1, 2, 4 and 8 x H100 SXM 80GB: {values} ms): no number of replicas meets it; the lowest "
            f"reachable is {min(idle.values()):.3g} ms, on 8 x H100 SXM 80GB a replica"
        )
        assert min(idle.values()) == idle[8] and len(line) < 300
        for slip in ("them", "e-0", "262,144", " s ("):
            assert slip not in line

    def test_the_search_end_refusal_gives_ms_and_a_plain_rate(self):
        """Where an idle replica meets the targets but the search's end does not (here a search capped at 2
        replicas, 40 requests/s: 20 each, below the 24.6 capacity), the figures at the end are in ms with their
        targets in ms, the rate without scientific notation, and a target not given is "no target"."""
        from planner.errors import NoFleetMeetsError
        from planner.serving.fleet import fewest_replicas
        from planner.serving.load import Replica

        with pytest.raises(NoFleetMeetsError) as err:
            fewest_replicas(Replica("H100", "llama3.1-8b", 1), 1000, 300, 40.0, ttft_target_s=0.06, max_replicas=2)
        text = str(err.value)
        assert text.startswith("no fleet of up to 2 replicas meets the targets: at 20 requests/s each, p95 TTFT ")
        assert " ms (target 60 ms), TPOT " in text and text.endswith(" ms (no target)")
        assert err.value.idle_misses == ()

    def test_rates_and_times_are_never_in_scientific_notation(self):
        """The trial's 3.81e-05 requests/s is 10 / 262,144: one request every 1 / 3.81e-05 s = 26,214 s = 7.28
        hours; 1e6 requests/s is written in full; ms to 3 significant figures, grouped from 100 ms."""
        from planner.units import ms_words, rate_words

        assert rate_words(10 / 262_144) == "one request every 7.28 hours"
        assert rate_words(1 / 120) == "one request every 2 minutes"
        assert rate_words(1e6) == "1,000,000 requests/s" and rate_words(3.8147) == "3.81 requests/s"
        assert ms_words(0.0425) == "42.5 ms" and ms_words(0.001) == "1 ms" and ms_words(12.345) == "12,345 ms"

    def test_a_burst_below_an_idle_replica_is_refused_the_same_way(self, tmp_path):
        """A burst trace (every request at 0) with a 1 ms TTFT target: one request a replica is an idle replica's
        TTFT, so the same sentence as at a rate (it was "no fleet of up to N replicas ... for a burst")."""
        path = _trace(tmp_path / "burst.csv", [(0.0, 1000, 300)] * 20)
        line = one_line(run(*SMALL, "--trace", str(path), "--ttft-target", "1ms"), 2)
        assert "p95 TTFT target 1 ms is below one request's own TTFT on an idle replica (42.5 ms on 1 x H100" in line


#: The trial's DeepSeek-R1 case (F3): plan's command, and its work/ds.toml for `planner export`, the same traffic.
DS = ("plan", "--gpu", "H200", "--model", "deepseek-r1", "--context", "8k", "--gpus", "8", "--parallelism", "dp-ep")
DS_LOAD = ("--rate", "10", "--prompt-tokens", "1000", "--output-tokens", "500", "--ttft-target", "2",
           "--tpot-target", "50ms")  # fmt: skip
DS_SCENARIO = """title = "DeepSeek-R1 on 8 x H200 dp-ep"
[workload]
peak_requests_per_s = 10
average_requests_per_s = 10
prompt_tokens_mean = 1000
prompt_tokens_high = 1000
output_tokens_mean = 500
output_tokens_high = 500
high_percentile = 95
ttft_target_s = 2
tpot_target_s = 0.05
growth_over_horizon = 0
horizon_months = 12
[defaults]
model = "DeepSeek-R1"
gpu = "H200"
spare_replicas = 0
[[option]]
name = "H200 dp-ep 8"
parallelism = "dp-ep"
gpus_per_replica = 8
pricing = "cloud"
"""


@pytest.fixture(scope="module")
def ds():
    """F3's command: text and --json (a module fixture: the newest pytest refuses a class one on an instance)."""
    import json

    return plan_text(*DS, *DS_LOAD), json.loads(plan_text(*DS, *DS_LOAD, "--json"))


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """F8's trace: 1,200 requests at 40 requests/s: on 2 x (1 x H100) replicas 20 each, below one replica's 24.6
    (F7)."""
    return _poisson_trace(tmp_path_factory.mktemp("f8") / "t40.csv", 40.0, 1200)


class TestF3PlanSaysItsFleetIsSizedWithoutTheMargin:
    """F3: `plan --rate` sized DeepSeek-R1 dp-ep on 8 x H200 at 1 replica, "meets" p95 TPOT 50 ms (44.3 ms), while its
    own Budget review's margin line said such runs are +40% / +149% slower and `planner export` sized 336 GPUs."""

    def test_the_margin_line_sits_under_the_replicas_with_the_figures_at_both_ends(self, ds):
        """The margin is the plan's own (``Plan.serving_margin``: +40% / +179%, README's figures for this
        deployment; +149% before s202 widened its 2 sources' runs); each end's p95 TPOT is the simulated p95 x
        (1 + margin): 44.3 ms x 1.11 = 49.1 ms, x 2.49 = 110 ms, past 50 ms at the high end (+11% / +149% since s208's
        pre-AITER ROCm MoE narrowed the MLA runs' range; +2% / +149%, 45.1 ms, since s212's pre-AITER ROCm prefill);
        TTFT x 2.49 stays within 2 s."""
        from planner.units import fmt_seconds

        text, out = ds
        u = out["under_load"]
        assert (out["serving_margin"]["low"], out["serving_margin"]["high"]) == pytest.approx((0.02, 1.49))
        lines = text.splitlines()
        at = next(i for i, x in enumerate(lines) if x.startswith("  replicas (p95 TTFT <= 2.00 s, TPOT <= 50 ms)"))
        assert lines[at].split(": ")[1].startswith("1 x 8 x H200 SXM 141GB = 8 GPUs")
        margin = lines[at + 1]
        assert margin.startswith("  margin: sized on the prediction, with no margin; at the Budget review's margin "
                                 "(TPOT +2% / +149%, its line above")  # fmt: skip
        tpot, ttft = u["tpot_s"]["p95"], u["ttft_s"]["p95"]
        assert fmt_seconds(tpot) == "44.3 ms"
        lo, hi = fmt_seconds(tpot * 1.02), fmt_seconds(tpot * 2.49)
        assert (lo, hi) == ("45.1 ms", "110 ms")
        assert f"TPOT would be {lo} / {hi} against the 50 ms target: past it at the +149% end" in margin
        assert f"TTFT would be {fmt_seconds(ttft * 1.02)} / {fmt_seconds(ttft * 2.49)} against the 2.00 s target: " \
               "within it at both ends" in margin  # fmt: skip

    def test_the_slow_end_is_sized_as_planner_export_sizes_it(self, ds):
        """At the +149% end: 42 x 8 = 336 GPUs (296 x 8 at +179% from s202 to s208); recomputed here by export's own ``evaluate`` on that scenario (its ``under_load`` sizing), not
        copied. 296 times the plan's 1 replica: plan says "low confidence: measure one replica first" (trial 20, F1)
        and does not offer it as a fleet."""
        import tomllib

        from planner.catalog import default_catalog
        from planner.export.evaluate import evaluate
        from planner.export.scenario import parse_scenario

        text, out = ds
        scenario = parse_scenario(tomllib.loads(DS_SCENARIO))
        exported = evaluate(scenario.option[0], scenario.workload, default_catalog(), 0.2)
        assert exported.margin == pytest.approx(1.49) and exported.under_load.replicas == 42
        line = next(x for x in text.splitlines() if x.startswith("  low confidence: "))
        assert line.startswith("  low confidence: measure one replica first. At the +149% margin's end planner export "
                               "sizes 42 x 8 = 336 GPUs (x42 the 1 here; each target / 2.49)")  # fmt: skip
        assert "so it is not a budget figure" in line and "  at the +149% margin's end" not in text
        high = out["under_load"]["margin"]["at_high_end"]
        assert high["replicas"] == 42 and high["gpus"] == 336 and high["reason"] is None
        assert high["tpot_goal_s"] == pytest.approx(0.05 / 2.49) and high["ttft_goal_s"] == pytest.approx(2 / 2.49)
        assert out["under_load"]["margin"]["sized_on"] == "the prediction, no margin"
        assert "42 x 8 =\n  336" in (Path(__file__).parents[1] / "docs" / "model.md").read_text()

    def test_a_margin_within_the_targets_says_export_needs_no_more(self):
        """Llama-3.1-8B on 1 x H100 under vLLM: margin -12% / +25% (7 runs from 2 sources, widened), within 1 s and 30 ms at both ends, so
        export (margin max(0, -1%) = 0: ``range_margin``) sizes the same; no extra search, no slow-end fleet."""
        import json

        targets = ("--rate", "10", *LENGTHS, "--ttft-target", "1", "--tpot-target", "30ms")
        (line,) = [x for x in plan_text(*SMALL, *targets).splitlines() if x.startswith("  margin: ")]
        assert "(TPOT -12% / +25%" in line and line.endswith(
            "within it at both ends; so planner export's margin needs no more replicas on this group"
        )
        m = json.loads(plan_text(*SMALL, *targets, "--json"))["under_load"]["margin"]
        assert m["at_high_end"] is None and m["high"]["past_targets"] == []

    def test_without_targets_there_is_no_margin_line(self):
        """Sized on capacity (no target): the margin is a latency's, so nothing is said and --json's margin is null."""
        import json

        assert "  margin: " not in plan_text(*SMALL, "--rate", "10", *LENGTHS)
        assert json.loads(plan_text(*SMALL, "--rate", "10", *LENGTHS, "--json"))["under_load"]["margin"] is None

    def test_a_given_fleet_is_judged_likewise(self):
        """--replicas 2 of the DeepSeek case: "judged on the prediction", and the slow end's 42 replicas set against
        the 2 given, low confidence. Its targets hold past 2x the rate (``LOAD_CURVE``'s end), which read "within the targets: over
        inf requests/s each"; now 2 x its 5 requests/s each."""
        text = plan_text(*DS, *DS_LOAD, "--replicas", "2")
        assert "within the targets: over 10 requests/s each (the targets hold at 2x the rate)" in text
        assert "inf requests/s" not in text
        assert "  margin: judged on the prediction, with no margin;" in text
        assert "  low confidence: measure one replica first. At the +149% margin's end planner export sizes 42 x 8 = " \
               "336 GPUs (x21 the 2 here;" in text  # fmt: skip


def _poisson_trace(path, rate_per_s: float, n: int, seed: int = 15):
    """A planner trace of ``n`` requests of 1,000 / 300 tokens at Poisson arrivals of ``rate_per_s`` (gaps drawn
    exponential with ``seed``): the trial's trace20/60.csv kind, smaller."""
    import numpy as np

    gaps = np.random.default_rng(seed).exponential(1 / rate_per_s, n)
    return _trace(path, [(round(float(t), 6), 1000, 300) for t in np.cumsum(gaps) - gaps[0]])


class TestF8ReplicasOnATrace:
    """F8: `--replicas N` with `--trace` was refused ("a trace is sized, not run on a given fleet"); replaying the
    recorded peak against the fleet one runs is the natural check. Now the trace is dealt over the N replicas as
    ``--routing`` deals it when sizing (``replica_run``), with the `--rate --replicas` verdict lines."""

    TARGETS = ("--ttft-target", "0.5", "--tpot-target", "30ms")

    def test_the_verdict_lines_are_printed_as_for_a_rate(self, trace):
        """fleet given, against the targets, capacity per replica and one replica lost, each with the trace's own
        mean rate ((N - 1) / span: ``TraceLoad.rate_per_s``) and "1 replica" (F10) for the one lost."""
        from planner.accuracy.published import read_csv_rows
        from planner.serving.load import MAX_PROMPTS, trace_load

        t = trace_load(read_csv_rows(trace, MAX_PROMPTS, "a trace file"), str(trace))
        text = plan_text(*SMALL, "--trace", str(trace), *self.TARGETS, "--replicas", "2")
        assert f"  fleet given: 2 x 1 x H100 SXM 80GB = 2 GPUs at the trace's {t.rate_per_s:.3g} requests/s, " in text
        assert "  against the targets (p95 TTFT <= 500 ms, TPOT <= 30 ms): meets (p95 TTFT " in text
        assert "a multiple of a trace's rate is the trace replayed that much faster (its arrival times / it)" in text
        assert f"  one replica lost: 1 replica at the trace's {t.rate_per_s:.3g} requests/s, " in text
        assert "routed to one of 2 replicas at random (--routing random)" in text

    def test_the_given_count_equal_to_the_sized_one_shows_the_sizings_figures(self, trace):
        """The same trace sized (no --replicas) and given the count it was sized at: the same simulated run, so the
        same TTFT and TPOT lines (both deal the trace by ``replica_share``)."""
        sized = plan_text(*SMALL, "--trace", str(trace), *self.TARGETS)
        (count,) = [x for x in sized.splitlines() if x.startswith("  replicas (p95")]
        k = count.split(": ")[1].split(" x ")[0]
        given = plan_text(*SMALL, "--trace", str(trace), *self.TARGETS, "--replicas", k)

        def figures(text: str) -> list[str]:
            return [x for x in text.splitlines() if x.startswith(("  TTFT p50", "  TPOT p50"))]

        assert figures(given) == figures(sized) and len(figures(sized)) == 2

    def test_the_headroom_is_the_trace_replayed_faster(self, trace):
        """The rule (``check_fleet``'s docstring): the headroom h is the most traffic, as m - 1, at which the trace
        replayed m times as fast (arrival times / m) still meets, to ``HEADROOM_STEP``. Checked against runs made
        here with ``replica_run`` on the sped-up arrivals: 1 + h meets and 1 + h + step misses (below the curve's
        2x end)."""
        from planner.accuracy.published import read_csv_rows
        from planner.serving.fleet import HEADROOM_STEP, check_fleet, past_capacity, replica_run, within_targets
        from planner.serving.load import MAX_PROMPTS, Replica, trace_load

        t = trace_load(read_csv_rows(trace, MAX_PROMPTS, "a trace file"), str(trace))
        replica = Replica("H100", "llama3.1-8b", 1)
        c = check_fleet(replica, 1000, 300, t.rate_per_s, 2, ttft_target_s=0.5, tpot_target_s=0.03,
                        lengths=t.lengths, arrivals_s=t.arrivals_s)  # fmt: skip
        assert c.replayed and c.meets and 0 < c.headroom < 1.0
        assert c.one_lost is not None and c.one_lost.replicas == 1 and c.one_lost.replayed

        def meets(m: float) -> bool:
            if past_capacity(replica, 1000, 300, [t.rate_per_s * m / 2])[0]:
                return False
            arrivals = [a / m for a in t.arrivals_s]
            r = replica_run(replica, 1000, 300, t.rate_per_s * m, 2, lengths=t.lengths, arrivals_s=arrivals)
            return within_targets(r, 95, 0.5, 0.03)

        assert meets(1 + c.headroom) and not meets(1 + c.headroom + HEADROOM_STEP)

    def test_json_says_the_headroom_is_the_trace_replayed_faster(self, trace):
        """--json: under_load.fleet_check as for a rate, with headroom_by naming what the multiples scale."""
        import json

        u = json.loads(plan_text(*SMALL, "--trace", str(trace), *self.TARGETS, "--replicas", "2", "--json"))
        c = u["under_load"]["fleet_check"]
        assert u["under_load"]["sized_on"] == "given (--replicas)" and c["meets"] is True
        assert c["headroom_by"] == "the trace replayed faster" and c["one_lost"]["replicas"] == 1

    def test_a_burst_trace_with_replicas_is_refused_saying_why(self, tmp_path):
        """A burst has no rate: no capacity or headroom to judge a given fleet by; sizing it is the way (F8 asked for a
        refusal where headroom is not sound)."""
        path = _trace(tmp_path / "burst.csv", [(0.0, 1000, 300)] * 20)
        line = one_line(run(*SMALL, "--trace", str(path), "--ttft-target", "1", "--replicas", "2"), 2)
        assert "is a burst (its 20 requests all arrive at the same time), which has no rate" in line
        assert line.endswith("leave out --replicas to size the fleet on the burst")
