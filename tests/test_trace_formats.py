"""``planner plan --trace`` reads the published trace formats as they are, and a burst.

Formats (``planner.serving.load.TRACE_FORMATS``), each checked against its documented columns and units:

- Mooncake (kvcache-ai/Mooncake FAST25-release/README.md, traces/conversation_trace.jsonl): JSON Lines of
  ``timestamp``, ``input_length``, ``output_length``, ``hash_ids``; the timestamp is "the arrival time (in
  milliseconds) of the request since the first request" (NVIDIA Dynamo benchmarks/data_generator/README.md), each
  hash id one 512-token block (conversation_trace.jsonl's first line: input_length 6,758, 14 hash_ids).
- Azure LLM inference 2023 and 2024 (Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md / 2024.md, Schema:
  ``TIMESTAMP`` "Invocation time", ``ContextTokens``, ``GeneratedTokens``); data/AzureLLMInferenceTrace_code.csv's
  first rows are the ones written below.

A burst (every arrival at one time) is sized on the targets with no rate (``fewest_replicas_for_burst``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_support import one_line, run

from planner.errors import InvalidInputError
from planner.serving.fleet import fewest_replicas
from planner.serving.load import (
    MOONCAKE_BLOCK_TOKENS,
    Replica,
    latency_under_load,
    repeated_block_hit_rate,
    trace_load,
)

ONE = Replica("H100", "llama3.1-8b", 1)
PLAN = ["plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1"]

#: The first four rows of Azure/AzurePublicDataset data/AzureLLMInferenceTrace_code.csv (2023), as published.
AZURE_ROWS = (
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:17:03.9799600,4808,10\n"
    "2023-11-16 18:17:04.0319600,3180,8\n"
    "2023-11-16 18:17:04.0781490,110,27\n"
    "2023-11-16 18:17:04.1206440,7433,14\n"
)


def _mooncake(tmp_path, rows, name="mooncake.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _read(path):
    from planner.accuracy.published import looks_like_json_lines, read_csv_rows, read_json_lines_rows

    read = read_json_lines_rows if looks_like_json_lines(path) else read_csv_rows
    return trace_load(read(path, 1000, "a trace file"), str(path))


class TestMooncake:
    ROWS = [  # hash_ids: ceil(input_length / 512) blocks each, as in Mooncake's release
        {"timestamp": 0, "input_length": 1000, "output_length": 50, "hash_ids": [0, 1]},
        {"timestamp": 1000, "input_length": 1100, "output_length": 60, "hash_ids": [0, 1, 2]},
        {"timestamp": 2500, "input_length": 600, "output_length": 70, "hash_ids": [0, 3]},
    ]

    def test_timestamps_are_milliseconds_and_lengths_tokens(self, tmp_path):
        """timestamp 1000 ms -> 1.0 s, 2500 ms -> 2.5 s (milliseconds since the first request)."""
        t = _read(_mooncake(tmp_path, self.ROWS))
        assert t.format.name == "Mooncake"
        assert t.arrivals_s == (0.0, 1.0, 2.5)
        assert t.lengths == [(1000, 50), (1100, 60), (600, 70)]
        assert t.rate_per_s == pytest.approx(2 / 2.5)

    def test_repeated_leading_blocks_give_the_prefix_hit(self, tmp_path):
        """By hand, 512-token blocks: request 1 sees nothing before it (0); request 2's blocks 0 and 1 were seen
        (1,024 tokens); request 3's block 0 was, block 3 was not (512): 1,536 of 2,700 prompt tokens."""
        assert MOONCAKE_BLOCK_TOKENS == 512
        assert _read(_mooncake(tmp_path, self.ROWS)).block_hit_rate == pytest.approx(1536 / 2700)

    def test_a_prompt_seen_whole_recomputes_its_last_token(self):
        """The same 1,000-token prompt twice: the second holds 999 tokens, not 2 x 512 (vLLM recomputes the last
        token of a prompt found whole)."""
        assert repeated_block_hit_rate([1000, 1000], [[5, 6], [5, 6]], 512) == pytest.approx(999 / 2000)

    def test_the_order_is_by_arrival_not_by_line(self, tmp_path):
        """The same rows written last first: the blocks are counted as seen in arrival order, so the same hit."""
        t = _read(_mooncake(tmp_path, self.ROWS[::-1]))
        assert t.arrivals_s == (0.0, 1.0, 2.5) and t.block_hit_rate == pytest.approx(1536 / 2700)

    def test_plan_says_the_format_and_the_hit_it_does_not_apply(self, tmp_path):
        rows = [
            {"timestamp": 250 * i, "input_length": 1000, "output_length": 50, "hash_ids": [0, 100 + i]}
            for i in range(40)
        ]
        r = run(*PLAN, "--trace", str(_mooncake(tmp_path, rows)), "--ttft-target", "1")
        assert r.exit_code == 0, r.output
        assert "40 requests over 9.75 s (4 requests/s" in r.output  # 39 gaps of 250 ms: 39 / 9.75 s
        assert (
            "  read as Mooncake trace: timestamp, input_length, output_length (milliseconds, tokens, tokens), "
            "arrivals from the first request"
        ) in r.output
        # 39 of 40 requests find block 0 (512 tokens) of 1,000: 39 x 512 / 40,000 = 49.92%
        assert "prefix cache: the trace's hash_ids repeat 49.9% of prompt tokens" in r.output
        assert "not applied: give --prefix-hit-rate 0.499 to apply it" in r.output
        d = json.loads(run(*PLAN, "--trace", str(_mooncake(tmp_path, rows)), "--ttft-target", "1", "--json").output)
        assert d["under_load"]["trace"]["format"] == "Mooncake"
        assert d["under_load"]["trace"]["block_hit_rate"] == pytest.approx(39 * 512 / 40000)
        assert d["under_load"]["prefix_hit_rate"] == 0.0  # reported, not applied

    def test_bad_hash_ids_name_their_line(self, tmp_path):
        rows = [dict(self.ROWS[0]), dict(self.ROWS[1], hash_ids="x")]
        line = one_line(run(*PLAN, "--trace", str(_mooncake(tmp_path, rows))), 2)
        assert line.endswith("line 2: hash_ids 'x'; give a list of whole numbers, one a block of the prompt")


class TestAzure:
    def test_timestamps_are_dates_read_from_the_first(self, tmp_path):
        """04.0319600 - 03.9799600 = 0.052 s; 04.0781490 - 03.9799600 = 0.098189 s; 04.1206440 - 03.9799600 =
        0.140684 s (the seven fraction digits read to the microsecond)."""
        path = tmp_path / "AzureLLMInferenceTrace_code.csv"
        path.write_text(AZURE_ROWS, encoding="utf-8")
        t = _read(path)
        assert t.format.name.startswith("Azure LLM inference")
        assert t.arrivals_s == pytest.approx((0.0, 0.052, 0.098189, 0.140684), abs=1e-6)
        assert t.lengths == [(4808, 10), (3180, 8), (110, 27), (7433, 14)]

    def test_plan_says_the_format(self, tmp_path):
        path = tmp_path / "azure.csv"
        path.write_text(AZURE_ROWS.replace("4808", "1808").replace("7433", "2433"), encoding="utf-8")
        r = run(*PLAN, "--trace", str(path), "--ttft-target", "1")
        assert r.exit_code == 0, r.output
        assert "  read as Azure LLM inference (2023, 2024) trace: TIMESTAMP, ContextTokens, GeneratedTokens" in r.output

    def test_a_bad_timestamp_names_its_line(self, tmp_path):
        path = tmp_path / "azure.csv"
        path.write_text(AZURE_ROWS.replace("2023-11-16 18:17:04.0781490", "yesterday"), encoding="utf-8")
        line = one_line(run(*PLAN, "--trace", str(path)), 2)
        assert "line 4: TIMESTAMP 'yesterday', ContextTokens '110', GeneratedTokens '27'; give a date and time" in line


def test_unknown_columns_are_refused_listing_every_format(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"t": 0, "in": 100, "out": 10}\n', encoding="utf-8")
    line = one_line(run(*PLAN, "--trace", str(path)), 2)
    for columns in (
        "arrival_s, prompt_tokens, output_tokens (seconds, tokens, tokens)",
        "Mooncake's timestamp, input_length, output_length (milliseconds, tokens, tokens)",
        "Azure LLM inference's TIMESTAMP, ContextTokens, GeneratedTokens (a date and time, tokens, tokens)",
    ):
        assert columns in line
    assert line.endswith("the file's: t, in, out")


class TestBurst:
    N = 200

    def _burst(self):
        return trace_load([{"arrival_s": "5", "prompt_tokens": "800", "output_tokens": "200"}] * self.N, "b.csv")

    def test_a_burst_is_read_with_no_rate(self):
        t = self._burst()
        assert t.is_burst and t.arrivals_s == (0.0,) * self.N and t.rate_per_s == math.inf
        with pytest.raises(InvalidInputError, match="no rate to size on capacity"):
            fewest_replicas(ONE, 800, 200, t.rate_per_s, lengths=t.lengths, arrivals_s=t.arrivals_s)

    def test_the_burst_is_split_and_the_fewest_replicas_meet(self):
        """The sized k: its share (one request in k, all at 0) meets p95 TTFT 2 s; one replica fewer misses."""
        t = self._burst()
        s = fewest_replicas(ONE, 800, 200, t.rate_per_s, ttft_target_s=2.0, lengths=t.lengths, arrivals_s=t.arrivals_s)
        k = s.replicas
        assert k > 1 and s.is_burst and s.burst_requests_per_replica == -(-self.N // k)
        assert math.isnan(s.rate_per_replica_s)

        def p95(k: int) -> float:
            share = np.zeros(self.N)[::k]
            return latency_under_load(ONE, 800, 200, arrivals_s=share, lengths=t.lengths[::k]).ttft_s.at(95)

        assert p95(k) <= 2.0 < p95(k - 1)
        assert s.result.ttft_s.at(95) == p95(k)

    def test_plan_prints_a_burst_and_no_rate(self, tmp_path):
        path = tmp_path / "burst.csv"
        path.write_text("arrival_s,prompt_tokens,output_tokens\n" + "0,800,200\n" * self.N, encoding="utf-8")
        r = run(*PLAN, "--trace", str(path), "--ttft-target", "2")
        assert r.exit_code == 0, r.output
        under = r.output[r.output.index("Under load:") :]
        assert (
            f"Under load: the trace {path}, 200 requests all at once (a burst: every arrival at the same time, so no "
            "rate is implied; prompts of 800 and outputs of 200 tokens on average)"
        ) in under
        assert "requests/s" not in under and "inf" not in under
        assert " of the burst each at most" in under
        assert "held-out range: none for a burst" in under
        d = json.loads(run(*PLAN, "--trace", str(path), "--ttft-target", "2", "--json").output, parse_constant=float)
        u = d["under_load"]
        assert u["trace"]["burst"] is True and u["trace"]["rate_per_s"] is None
        assert u["rate_per_replica_per_s"] is None
        assert u["burst_requests_per_replica"] == -(-self.N // u["replicas"])

    def test_plan_refuses_a_burst_without_a_target(self, tmp_path):
        path = tmp_path / "one.csv"
        path.write_text("arrival_s,prompt_tokens,output_tokens\n3,800,200\n", encoding="utf-8")
        line = one_line(run(*PLAN, "--trace", str(path)), 2)
        assert line.endswith(
            "is a burst (its 1 request all arrive at the same time), which has no rate to size on capacity; give "
            "--ttft-target or --tpot-target"
        )
