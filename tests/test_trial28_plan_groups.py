"""Trial 28: ``planner plan --rate`` without --gpus skips a group whose KV cache cannot hold the longest drawn request
(F1) instead of refusing the whole search; the binding line says capacity where neither target binds (F3); the
drawn requests longer than --context are counted in a note (F4); since trial 29 F1 they are cut to it."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from cli_support import run

from planner.errors import OutOfRangeError
from planner.export.assumptions import simulated_lengths_words
from planner.export.scenario import load_scenario
from planner.serving.fleet import BindingTarget, fewest_gpus, longer_than_every_cache, no_group_error
from planner.serving.load import (
    LONGER_THAN_CACHE_LEVERS,
    Replica,
    RequestLongerThanCacheError,
    cut_to_context,
    latency_under_load,
    sizing_requests,
    spread_lengths,
)

MODEL_70B = ("--gpu", "H100", "--model", "llama3.3-70b", "--context", "8k")
#: Trial 28 F1's shape at a tenth of its rate (4 requests/s) with prompts of 4,000 / p99 12,000 tokens: the draws are
#: truncated at the 13,200-token slot (p99 prompt + p99 output), past the 2-GPU group's 10,144-token cache and past
#: --context 8k (the trial's 1,500 / 6,000 now stay within their 7,200-token slot: docs/hypotheses/truncate-at-slot.md)
LONG_TAIL = (
    "--prompt-tokens", "4000", "--output-tokens", "300", "--prompt-tokens-high", "12000",
    "--output-tokens-high", "1200", "--percentile", "99", "--ttft-target", "2", "--tpot-target", "60ms",
)  # fmt: skip
#: Three short requests and one of 12,000 tokens (prompt + output)
SHORT_AND_LONG = [(1000, 200)] * 3 + [(6000, 6000)]


def _figure(text: str, pattern: str) -> int:
    """The whole number ``pattern``'s group matches in ``text`` (thousands separated by commas)."""
    found = re.search(pattern, text)
    assert found, (pattern, text[-3000:])
    return int(found.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def skipped_group_plan():
    """The F1 command (at 4 requests/s) without --gpus, and the 2-GPU plan (no rate) that states its KV cache."""
    return run("plan", *MODEL_70B, "--rate", "4", *LONG_TAIL), run("plan", *MODEL_70B, "--gpus", "2")


def test_plan_without_gpus_tries_the_2_gpu_group_once_the_draws_are_cut_to_the_context(skipped_group_plan):
    """Trial 28 F1 skipped the 2-GPU group, whose 10,144-token cache was shorter than the longest drawn request
    (13,200, past --context 8k). Since trial 29 F1 no drawn request is longer than --context (cut to it,
    ``cut_to_context``), and every group tried holds one whole context, so the group is tried: the skip stays for
    requests longer than a cache (``fewest_gpus`` below)."""
    result, two = skipped_group_plan
    assert result.exit_code == 0, result.output
    cache = _figure(two.stdout, r"KV cache tokens \(group\)\s+([\d,]+)")  # 10,144 (trial 28)
    longest = _figure(result.stdout, r"longest ([\d,]+) \(prompt \+ output\)")
    assert longest == 8192 < cache
    assert "skipped" not in result.stdout
    assert re.search(r"replicas \(p99 TTFT <= 2.00 s, TPOT <= 60 ms\): \d+ x \d+ x H100", result.stdout)


def test_plan_counts_the_drawn_requests_longer_than_the_context_and_cuts_them(skipped_group_plan):
    result, _ = skipped_group_plan
    drawn = spread_lengths(4000, 12000, 300, 1200, 99, sizing_requests(99), 131072)
    longer = sum(p + o > 8192 for p, o in drawn)
    cut, count = cut_to_context(drawn, 8192)
    assert count == longer > 0 and max(p + o for p, o in cut) == 8192
    assert (
        f"note: {longer:,} of {len(drawn):,} drawn requests are longer than --context 8,192 (prompt + output; the "
        f"longest {max(p + o for p, o in drawn):,}) and are sized cut to it" in result.stdout
    )
    assert "an engine started with --max-model-len 8192 rejects them whole" in result.stdout


def test_a_run_whose_request_is_longer_than_the_cache_is_refused_naming_both_and_the_levers():
    with pytest.raises(RequestLongerThanCacheError) as caught:
        latency_under_load(
            Replica("H100", "llama3.3-70b", 2), 1500, 300, rate_per_s=1.0, num_requests=4, lengths=SHORT_AND_LONG
        )
    exc = caught.value
    assert isinstance(exc, OutOfRangeError) and exc.exit_code == 2
    assert (exc.gpus, exc.longest_tokens, exc.cache_tokens) == (2, 12000, 10144)
    assert str(exc) == (
        "2 x H100 / llama3.3-70b: the run cannot finish: its KV cache holds 10,144 tokens and the longest request is "
        f"12,000 (prompt + output); give {LONGER_THAN_CACHE_LEVERS}"
    )
    assert "shorten the requests" not in str(exc)


def test_plan_on_a_group_whose_cache_holds_the_context_runs_the_cut_requests():
    """Trial 28 refused this (a drawn request of 13,200 tokens past the 2-GPU group's 10,144-token cache); the draws
    are cut to --context 8,192 since trial 29 F1, which the cache holds, so it runs. A request longer than a cache is
    still refused, naming both (``test_a_run_whose_request_is_longer_than_the_cache_is_refused_...`` below)."""
    result = run("plan", *MODEL_70B, "--gpus", "2", "--rate", "0.5", *LONG_TAIL)
    assert result.exit_code == 0, result.output
    assert "the run cannot finish" not in result.output and "longest 8,192 (prompt + output)" in result.stdout


def test_the_group_search_refuses_only_where_no_group_holds_the_longest_request():
    replicas = {1: Replica("H100", "llama3.3-70b", 1, weight_precision="fp8"), 2: Replica("H100", "llama3.3-70b", 2)}
    with pytest.raises(RequestLongerThanCacheError) as caught:
        fewest_gpus(replicas, 1500, 300, 1.0, ttft_target_s=30.0, lengths=SHORT_AND_LONG)
    message = str(caught.value)
    assert "no group of GPUs tried can run the requests: the longest is 12,000 tokens" in message
    assert "1 x H100: 4,592; 2 x H100: 10,144 tokens" in message
    assert message.endswith(LONGER_THAN_CACHE_LEVERS)


def test_one_rule_words_every_groups_cache_for_plan_and_export():
    def refusal(gpus: int, cache: int) -> RequestLongerThanCacheError:
        return RequestLongerThanCacheError(gpus=gpus, gpu="H100", model="M", longest_tokens=9000, cache_tokens=cache)

    both = [refusal(1, 4000), refusal(2, 8000)]
    assert str(no_group_error([(1, both[0]), (2, both[1])])) == str(longer_than_every_cache(both))
    assert longer_than_every_cache(both[:1]) is both[0]
    assert both[1].skip_note == (
        "2 x H100: skipped, its KV cache holds 8,000 tokens and the longest request is 9,000 (prompt + output)"
    )


@pytest.mark.parametrize(
    ("alone", "binding"),
    [
        ((3, 3, 3), "capacity"),  # trial 28 F3: capacity alone needs as many: neither target binds
        ((3, 2, 3), "capacity"),
        ((3, 3, 2), "both"),  # each target alone needs the fleet, capacity fewer
        ((5, 3, 3), "TTFT"),
        ((3, 7, 3), "TPOT"),
        ((1, 1, 1), "none"),  # one replica meets everything: nothing sets more
        ((3, 3, 0), "both"),  # capacity alone not known: the targets compared alone
    ],
)
def test_the_binding_target_is_capacity_where_capacity_alone_needs_as_many(alone, binding):
    assert BindingTarget(*alone).binding == binding


def test_plan_says_capacity_binds_where_neither_target_does():
    args = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k", "--gpus", "1", "--rate", "40")
    args += ("--prompt-tokens", "1500", "--output-tokens", "300", "--ttft-target", "2", "--tpot-target", "60ms")
    result = run(*args)
    assert result.exit_code == 0, result.output
    replicas = _figure(result.stdout, r"replicas \(p95 TTFT <= 2.00 s, TPOT <= 60 ms\): (\d+) x 1 x H100")
    ttft = re.search(r"TTFT p50 / p95 / p99 +\S+ \S+ / (\S+ \S+) /", result.stdout).group(1)
    tpot = re.search(r"TPOT p50 / p95 / p99 +\S+ \S+ / (\S+ \S+) /", result.stdout).group(1)
    assert (
        f"binding target: capacity (neither target binds: p95 TTFT {ttft} against 2.00 s, TPOT {tpot} against 60 ms;"
        f" capacity alone needs {replicas} replicas" in result.stdout
    )
    assert "both alike" not in result.stdout
    got = json.loads(run(*args, "--json").stdout)["under_load"]["binding_target"]
    assert got["binding"] == "capacity" and got["capacity_alone_replicas"] == replicas > 1
    assert max(got["ttft_alone_replicas"], got["tpot_alone_replicas"]) <= replicas


def test_the_reviews_drawn_requests_stay_within_its_slot_so_its_words_count_none():
    """The README example's lengths are drawn truncated at the p95 prompt + p95 output slot (docs/hypotheses/
    truncate-at-slot.md), so none is longer and the sizing-method words carry no count; a dataset's or a lengths
    file's requests can be, and get plan's note (``past_context_note``)."""
    w = load_scenario(Path(__file__).resolve().parents[1] / "examples" / "budget-review.toml").workload
    drawn = w.simulated_lengths()
    slot = w.prompt_tokens_high + w.output_tokens_high
    assert not math.isinf(slot) and max(p + o for p, o in drawn) <= slot
    assert "longer than the p95 prompt + p95 output slot" not in simulated_lengths_words(w)
