"""Trial 29 (RAG assistant: prompts 12,000 / p95 30,000, outputs 350 / p95 900 tokens, Llama-3.3-70B fp16 on
H100): ``planner plan --rate`` drew requests past ``--context`` and simulated them as served, so capping the context
at 16K changed nothing (F1) and prompts reached 84,598 tokens in a 32K context (F5). Drawn requests longer than
--context are now cut to it (``planner.serving.load.cut_to_context``: the prompt cut to the context less the
output), counted in a note; the replicas line states what the KV cache holds at the mean and high lengths (F6); a
given fleet that misses names the fleet the sizing gives (F14). At 1 request/s on 8-GPU replicas, to stay small."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from cli_support import run

from planner.serving.fleet import fewest_replicas, sequences_memory_holds
from planner.serving.load import Replica, cut_to_context, sizing_requests, spread_lengths

MODEL = ("plan", "--gpu", "H100", "--model", "llama3.3-70b", "-w", "fp16", "-k", "fp16", "--gpus", "8")
TARGETS = ("--ttft-target", "3", "--tpot-target", "50ms")
RAG = (
    "--rate", "1", "--prompt-tokens", "12000", "--output-tokens", "350", "--prompt-tokens-high", "30000",
    "--output-tokens-high", "900", *TARGETS,
)  # fmt: skip
#: The trial's draws (seeded, as plan draws them: 1,000 requests at p95, within the model's 131,072-token context)
DRAWN = spread_lengths(12000, 30000, 350, 900, 95, sizing_requests(95), 131072)


def _figure(text: str, pattern: str) -> int:
    found = re.search(pattern, text)
    assert found, (pattern, text[-3000:])
    return int(found.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def plans():
    """The trial's workload at --context 16384 and 32768 (text), and 1 replica given at 32768."""
    runs = {c: run(*MODEL, "--context", str(c), *RAG) for c in (16384, 32768)}
    runs["given"] = run(*MODEL, "--context", "32768", "--replicas", "1", *RAG)
    for r in runs.values():
        assert r.exit_code == 0, r.output
    return {k: r.stdout for k, r in runs.items()}


def test_the_cut_keeps_outputs_and_cuts_prompts_to_the_context():
    cut, count = cut_to_context(DRAWN, 16384)
    longer = [i for i, (p, o) in enumerate(DRAWN) if p + o > 16384]
    assert count == len(longer) == 219  # trial 29 F1: "219 of 1,000 requests are longer than --context"
    assert max(p + o for p, o in DRAWN) == 84598  # trial 29 F5: the longest drawn, past a 32K context
    assert max(p + o for p, o in cut) == 16384
    assert all(cut[i] == (16384 - DRAWN[i][1], DRAWN[i][1]) for i in longer)  # output kept, prompt cut
    assert all(cut[i] == DRAWN[i] for i in set(range(len(DRAWN))) - set(longer))
    assert cut_to_context([(10, 5000), (100, 100)], 4096) == ([(1, 4095), (100, 100)], 1)  # the output alone
    assert cut_to_context(DRAWN, 131072) == (DRAWN, 0)  # none longer: the same list


def test_a_16k_context_cuts_the_drawn_prompts_and_sizes_on_them(plans):
    cut, count = cut_to_context(DRAWN, 16384)
    means = np.asarray(cut, dtype=float).mean(axis=0)
    before = np.asarray(DRAWN, dtype=float).mean(axis=0)
    assert (
        f"note: {count:,} of 1,000 drawn requests are longer than --context 16,384 (prompt + output; the longest "
        f"84,598) and are sized cut to it (prompt truncated, as an application capping its context does; an engine "
        f"started with --max-model-len 16384 rejects them whole): drawn means {before[0]:,.0f} / {before[1]:,.0f} "
        f"before the cut, {means[0]:,.0f} / {means[1]:,.0f} after (the lengths above); to serve them whole give "
        "--context 84,598 or more" in plans[16384]
    )
    assert "the stated p95 prompt + p95 output (30,900 tokens) is itself longer than --context 16,384" in plans[16384]
    assert "longest 16,384 (prompt + output)" in plans[16384] and "simulated as served" not in plans[16384]
    short, whole = (_figure(plans[c], r"replicas \(p95[^)]*\): (\d+) x 8") for c in (16384, 32768))
    assert short <= whole
    # the same fleet as the sizing's own search on the cut lengths (one capacity model)
    replica = Replica("H100", "llama3.3-70b", 8, weight_precision="fp16", kv_precision="fp16")
    sized = fewest_replicas(replica, 12000, 350, 1.0, percentile=95, ttft_target_s=3.0, tpot_target_s=0.05, lengths=cut)
    assert sized.replicas == short


def test_max_num_seqs_slot_is_within_the_context(plans):
    """Trial 29 F1: the advice used a 30,900-token slot at --context 16,384; memory holds 81 of 16,384 tokens (the
    plan's "Max batch 81 sequences of 16,384 tokens", the trial's figure)."""
    held = sequences_memory_holds(
        Replica("H100", "llama3.3-70b", 8, weight_precision="fp16", kv_precision="fp16"), 16384
    )
    assert held == 81 == _figure(plans[16384], r"Max batch\s+(\d+) sequences of 16,384 tokens")
    assert f"p95 prompt + p95 output (30,900) cut to --context (16,384 tokens here: {held}," in plans[16384]


def test_at_once_states_what_the_cache_holds_at_the_mean_and_high_lengths(plans):
    """Trial 29 F6: "able to run all 1,000 requests at once" was the cache at the shortest drawn request; the cache's
    tokens over the mean request (11,393 + 355 after the cut at 32K) and the p95 one (29,497 + 896) instead."""
    text = plans[32768]
    kv = _figure(text, r"KV cache tokens \(group\)\s+([\d,]+)")
    assert kv == 1332800  # the trial's figure
    cut, _ = cut_to_context(DRAWN, 32768)
    drawn = np.asarray(cut, dtype=float)
    mean = [round(v) for v in drawn.mean(axis=0)]
    high = [round(v) for v in np.percentile(drawn, 95, axis=0)]
    at_mean, at_high = kv // sum(mean), kv // sum(high)
    assert at_high == 43  # the trial's "43 at the p95 slot"
    assert (
        f"its KV cache's {kv:,} tokens hold about {at_mean:,} requests at the mean lengths ({mean[0]:,} + {mean[1]:,} "
        f"tokens) and {at_high:,} at the p95 lengths ({high[0]:,} + {high[1]:,})" in text
    )
    assert "able to run all 1,000 requests" not in text


def test_a_given_fleet_that_misses_names_the_fleet_the_sizing_gives(plans):
    """Trial 29 F14: the verdict and no way forward; now the rate it serves and the sizing's own fleet."""
    sized = _figure(plans[32768], r"replicas \(p95[^)]*\): (\d+) x 8")
    line = next(x for x in plans["given"].splitlines() if x.startswith("  way forward: "))
    assert "this fleet serves" in line
    assert line.endswith(
        f"1 requests/s within the targets needs {sized} x 8 x H100 SXM 80GB = {sized * 8} GPUs (drop --replicas: "
        "planner plan sizes it, the same search)"
    )


def test_the_ordinary_case_has_no_cut_and_sizes_as_the_api():
    """Lengths whose draws stay within --context (2,000 / p95 4,000 and 200 / p95 400 tokens: truncated at the
    4,400-token slot, within 32,768): no note, nothing cut, the fleet the sizing gives on the drawn lengths."""
    args = ("--rate", "1", "--prompt-tokens", "2000", "--output-tokens", "200", "--prompt-tokens-high", "4000")
    result = run(*MODEL, "--context", "32768", *args, "--output-tokens-high", "400", *TARGETS)
    assert result.exit_code == 0, result.output
    drawn = spread_lengths(2000, 4000, 200, 400, 95, sizing_requests(95), 131072)
    assert cut_to_context(drawn, 32768) == (drawn, 0) and max(p + o for p, o in drawn) <= 4400
    assert "cut to it" not in result.stdout and "drawn requests are longer" not in result.stdout
    replica = Replica("H100", "llama3.3-70b", 8, weight_precision="fp16", kv_precision="fp16")
    sized = fewest_replicas(
        replica, 2000, 200, 1.0, percentile=95, ttft_target_s=3.0, tpot_target_s=0.05, lengths=drawn
    )
    assert _figure(result.stdout, r"replicas \(p95[^)]*\): (\d+) x 8") == sized.replicas
    assert not math.isnan(sized.rate_per_replica_s)
