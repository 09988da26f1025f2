"""Trial 20 F3: plan and export gave p95 TTFT 140 ms against 0.62 s for the same 2 x (4 x H100) chat fleet, as the
review caps max_num_seqs at what memory holds at its high-percentile lengths and plan ran the engine's 1,024. One rule
(``sequences_memory_holds``) gives the review's number; plan names it with its effect, and --max-num-seqs runs it."""

from __future__ import annotations

from cli_support import run

from planner.serving.fleet import sequences_memory_holds
from planner.serving.load import Replica

CHAT = ("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "8k", "--gpus", "4", "--rate", "40")
CHAT += ("--ttft-target", "1.5s", "--tpot-target", "60ms", "--burstiness", "0.5", "--replicas", "2")


def test_the_rule_gives_the_reviews_sequences():
    """The README review's 107 sequences (3,000 + 1,200 tokens) and the trial's chat review's 225 (1,100 + 900)."""
    replica = Replica("H100", "llama3.1-70b", 4)
    assert sequences_memory_holds(replica, 3000 + 1200) == 107
    assert sequences_memory_holds(replica, 1100 + 900) == 225
    assert sequences_memory_holds(replica, 100) == 1024  # the engine's limit bounds it


def test_plan_with_the_reviews_limit_gives_the_reviews_figures():
    """The trial's review (sharegpt at the paper's 161 / 338, max_num_seqs 225): TTFT at peak 0.62 s, headroom +2%."""
    result = run(*CHAT, "--prompt-tokens", "161", "--output-tokens", "338", "--max-num-seqs", "225")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "each running at most 225 sequences at once" in out and "max_num_seqs: 225 (as given" in out
    assert "meets (p95 TTFT 616 ms" in out and "headroom over the rate: +2%" in out


def test_plan_names_the_limit_it_ran_and_the_reviews_effect():
    result = run(*CHAT, "--dataset", "sharegpt")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("  max_num_seqs:"))
    assert line.startswith("  max_num_seqs: the engine's 1,024")
    assert "planner export sets it to what memory holds at the p95 request" in line and "at that limit" in line
    assert "--max-num-seqs" in line
    refused = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--max-num-seqs", "8")
    assert refused.exit_code == 2 and "--max-num-seqs sets a replica's limit under load" in refused.stderr


def test_plan_at_the_reviews_limit_sizes_the_readme_reviews_fleet():
    """The README review (60 requests/s at its grown peak, 800 / 400 tokens, 107 sequences): 9 serving replicas,
    p95 TTFT 1.00 s and TPOT 37.6 ms; plan at the engine's 1,024 sizes 8."""
    args = ("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "8k", "--gpus", "4", "--rate", "60")
    args += ("--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5", "--tpot-target", "0.05")
    out = run(*args, "--max-num-seqs", str(sequences_memory_holds(Replica("H100", "llama3.1-70b", 4), 4200))).stdout
    assert "replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): 9 x 4 x H100 SXM 80GB = 36 GPUs" in out
    assert (
        "TTFT p50 / p95 / p99     189 ms / 1.00 s / 1.20 s" in out
        and "TPOT p50 / p95 / p99     36.3 ms / 37.6 ms" in out
    )
