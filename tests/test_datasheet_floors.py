"""Published rows against their GPUs' datasheet (``planner.accuracy.bounds``): no run beats one read of its active
weights a decode step, nor the prefills its prompts need at peak FLOP/s. A row under a floor is read wrong."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.bounds import (
    below_floor,
    datasheet_floors,
    decode_floor_s,
    prefill_floor_s,
    prefills_per_request,
    queued_prompt_tokens,
)
from planner.accuracy.published import DecodeRow, reference_dir
from planner.catalog import default_catalog
from planner.errors import PlannerError

CAT = default_catalog()
#: Llama 2 70B (meta-llama/Llama-2-70b-hf config.json: vocab 32,000, hidden 8,192, untied head): 68,976,648,192 active
#: parameters, of which the input embedding (a row lookup) and the output head are 32,000 x 8,192 = 262,144,000 each.
LLAMA2_70B_BODY = 68_976_648_192 - 2 * 262_144_000
LLAMA2_70B_HEAD = 262_144_000
#: What a decode step of it reads: every active weight but the embedding table (one row of it).
LLAMA2_70B_READ = LLAMA2_70B_BODY + LLAMA2_70B_HEAD
#: The benchmark rows and the loaded runs (their mean figures, where they print them).
ROWS = acc.load_decode_rows() + acc.load_decode_rows(reference_dir() / "load_public.csv")


def _row(**kw) -> DecodeRow:
    base = dict(record_id="T", gpu="H100", model="llama2-70b", gpus=4, batch=1, input_len=1024, output_len=128,
                weight_precision="fp16", kind="serving", num_prompts=1)  # fmt: skip
    return DecodeRow(**{**base, **kw})


class TestFloors:
    def test_a_decode_step_reads_every_active_weight_once(self):
        """Llama 2 70B at fp16 on 4 x H100: 68,714,504,192 params (its active less the embedding table, of which a
        step reads one row) x 2 B / (4 x 3.35 TB/s, the H100 SXM datasheet) = 10.26 ms."""
        assert LLAMA2_70B_READ == 68_714_504_192
        assert decode_floor_s(CAT, _row()) == pytest.approx(LLAMA2_70B_READ * 2 / (4 * 3.35e12))
        assert decode_floor_s(CAT, _row(weight_precision="fp8")) == pytest.approx(LLAMA2_70B_READ / (4 * 3.35e12))

    def test_a_tied_head_is_read_once_and_counted_once(self):
        """Llama 3.2 1B ties its head to the embedding (config.json tie_word_embeddings: true; vocab 128,256 x hidden
        2,048 = 262,668,288): a step reads the table once, as the head; a prompt computes it once."""
        from planner.accuracy.bounds import floor_params
        from planner.engines.architecture import param_counts

        m = CAT.model("llama3.2-1b")
        body, head = floor_params(m)
        assert head == 128_256 * 2048 and body + head == param_counts(m)[1]

    def test_a_prefill_runs_at_the_weights_math_peak(self):
        """2 x (68,452,360,192 x 1,024 + 262,144,000) FLOP (the output head once a prompt: vLLM computes logits at
        the sampled position only, gpu_model_runner.py's logits_indices) at 4 x 989.4 TFLOP/s (fp16) or 4 x 1,978.9
        (fp8, H100 SXM dense)."""
        flop = 2 * (LLAMA2_70B_BODY * 1024 + LLAMA2_70B_HEAD)
        assert prefill_floor_s(CAT, _row(), 1024) == pytest.approx(flop / (4 * 989.4e12))
        assert prefill_floor_s(CAT, _row(weight_precision="fp8"), 1024) == pytest.approx(flop / (4 * 1978.9e12))

    def test_no_prefill_floor_where_the_gpu_lists_no_peak_for_the_weights_math(self):
        """NVFP4 weights compute in fp4, else bf16; the T4's datasheet lists neither (fp16, int8, int4 only)."""
        assert math.isnan(prefill_floor_s(CAT, _row(gpu="T4", weight_precision="nvfp4"), 1024))
        assert below_floor(CAT, _row(gpu="T4", weight_precision="nvfp4", ttft_s=1e-6)) == []

    @pytest.mark.parametrize(
        "kw, prefills",
        [
            (dict(num_prompts=1, batch=1), 0.0),  # the client's test request computed it
            (dict(num_prompts=50, batch=0), 49 * 50 / 2 / 50),  # 50 at once, the first free: 1 + ... + 49
            (dict(num_prompts=50, batch=8), (7 * 8 / 2 + 42) / 50),  # a wave of 8, then 42 one at a time
            (dict(num_prompts=100, batch=0, request_rate=4.0), 0.99),
        ],
    )
    def test_prompts_sent_together_wait_for_each_other(self, kw, prefills):
        assert prefills_per_request(_row(**kw)) == pytest.approx(prefills)

    def test_lengths_that_vary_unseen_are_floored_by_the_weight_read_alone(self):
        """50 prompts of unknown lengths: each but the free first waits at least for one read of the weights
        (10.26 ms: Llama 2 70B fp16 on 4 x H100); equal 1,024-token prompts wait for their prefills, 24.5 of 35.4 ms."""
        read = LLAMA2_70B_READ * 2 / (4 * 3.35e12)
        for kw in (dict(length_range_ratio=0.5), dict(dataset="custom dialog prompts (variable lengths)"),
                   dict(dataset="OpenOrca")):  # fmt: skip
            floors = datasheet_floors(CAT, _row(num_prompts=50, batch=0, **kw))
            assert floors.ttft_s == pytest.approx(read * 49 / 50) and floors.ttft_percentile_s == pytest.approx(read)
        fixed = datasheet_floors(CAT, _row(dataset="random, fixed lengths", num_prompts=50, batch=0))
        assert fixed.ttft_s == pytest.approx(24.5 * prefill_floor_s(CAT, _row(), 1024))

    def test_a_short_prompt_is_floored_by_the_weight_read_not_its_flop(self):
        """128 tokens of Llama 2 70B on 4 x H100: 4.4 ms of FLOP at peak, but its step reads 137 GB: 10.26 ms."""
        assert prefill_floor_s(CAT, _row(), 128) < 0.005
        assert datasheet_floors(CAT, _row(input_len=128)).ttft_percentile_s == pytest.approx(
            LLAMA2_70B_READ * 2 / (4 * 3.35e12)
        )

    def test_no_ttft_floor_for_a_static_batch(self):
        assert math.isnan(datasheet_floors(CAT, _row(kind="static", num_prompts=None, batch=8)).ttft_s)

    def test_a_run_of_more_prompts_than_a_simulation_takes_has_no_ttft_floor(self):
        """A billion prompts at 10 a second (a run `planner validate` refuses): no floor, at once (it was a list of a
        billion prefills)."""
        from planner.serving.benchmark import MAX_PROMPTS

        floors = datasheet_floors(CAT, _row(num_prompts=MAX_PROMPTS + 1, batch=0, request_rate=10.0))
        assert math.isnan(floors.ttft_s) and floors.tpot_s > 0

    def test_prompts_of_several_lengths_are_served_shortest_first(self):
        """Prompts of 1, 2 and 3 units at once: the longest is the free one, then 1 and 1 + 2 before the two others'
        first tokens: (1 + 3) / 3; at a rate each waits for its own only, the longest free: (1 + 2) / 3."""
        assert queued_prompt_tokens([3.0, 1.0, 2.0], 3, False) == pytest.approx(4 / 3)
        assert queued_prompt_tokens([3.0, 1.0, 2.0], 3, True) == pytest.approx(1.0)
        assert queued_prompt_tokens([3.0, 1.0, 2.0, 5.0], 2, False) == pytest.approx((1 + 2 + 5) / 4)

    def test_a_published_samples_prompts_floor_its_burst(self):
        """GPUSTACK-Q001 (1,000 of vLLM's seed-0 ShareGPT prompts at once on one A100, Qwen3-8B): the floor is those
        prompts served shortest first at the A100's 312 TFLOP/s, under the published 3,413 ms."""
        from planner.accuracy.datasets import run_requests

        q001 = next(r for r in ROWS if r.record_id == "GPUSTACK-Q001")
        prompts = [float(p) for p, _ in run_requests(q001)]
        per_token, head = prefill_floor_s(CAT, q001, 1.0, 0.0), prefill_floor_s(CAT, q001, 0.0, 1.0)
        floor = datasheet_floors(CAT, q001).ttft_s
        heads = queued_prompt_tokens([1.0] * len(prompts), 1000, False)  # 999 / 2 prefills before a first token
        assert heads == pytest.approx(999 / 2)
        assert floor == pytest.approx(per_token * queued_prompt_tokens(prompts, 1000, False) + head * heads)
        assert 0.5 < floor < q001.ttft_s

    def test_a_warm_prompt_computes_only_its_last_block(self):
        """VUL-014 (50 x 2,048 tokens at once on one B200): cold, its floor is 24.5 prefills of 43.5 ms; read warm
        (s185), each prompt computes 16 of its 2,048 tokens and the published 205 ms is far above the floor."""
        vul = next(r for r in ROWS if r.record_id == "VUL-014")
        cold = datasheet_floors(CAT, replace(vul, prompts_cached=False)).ttft_s
        # Llama-3.3-Nemotron-Super-49B-v1: 49,867,145,216 active, of which 2 x 1,050,673,152 embedding and head
        assert cold == pytest.approx(24.5 * 2 * ((49_867_145_216 - 2 * 1_050_673_152) * 2048 + 1_050_673_152) / 4.5e15)
        assert below_floor(CAT, replace(vul, prompts_cached=False))[0][0] == "TTFT"
        assert below_floor(CAT, vul) == []


#: Rows whose TTFT is under its floor for a reason found (docs/history.md, s185): dennislee22's sweeps send vLLM's
#: random prompts of fixed lengths, and its sampler draws nothing for a length range of one value, so prompt i is the
#: same in every run whatever the number of prompts; each test's runs went to one server that caches prefixes (vLLM
#: 0.10.1.1's V1 default), so a run re-sent the prompts of the runs before it. In-sample rows whose TTFT no factor is
#: fitted to (``VLLM_PREFILL_LATENCY_S`` comes from vLLM's CI rows).
KNOWN_WARM_SOURCES = {"dennislee22-vllm-benchmarking"}


def test_every_published_row_is_at_or_above_its_datasheet_floors():
    under = []
    for row in ROWS:
        try:
            found = below_floor(CAT, row)
        except PlannerError:  # a model or GPU the catalog does not hold
            continue
        under += [(row.record_id, q) for q, _, _ in found if row.source_group not in KNOWN_WARM_SOURCES]
    assert under == []


def test_the_known_exceptions_are_still_under_their_floors():
    """The exemption names a source whose rows are under their floors; it goes when they are read otherwise."""
    under = {r.source_group for r in ROWS if r.source_group in KNOWN_WARM_SOURCES and below_floor(CAT, r)}
    assert under == KNOWN_WARM_SOURCES


def test_validate_names_a_row_under_its_floor_and_what_to_check():
    """A user's row of Vultr's VUL-014 without its warm reading: `planner validate` still predicts it, and says the
    published 205 ms is under the 1,065 ms its 50 prompts need at the B200's FP8 peak (24.5 prefills of 43.5 ms)."""
    from planner.accuracy.validation import validate_time

    cold = replace(next(r for r in ROWS if r.record_id == "VUL-014"), prompts_cached=False, record_id="MY-1")
    ttft = next(c for c in validate_time([cold]).checks if c.quantity == "ttft_ms")
    assert "published TTFT 205.0 ms is below the 1,065.2 ms" in ttft.note and "prefix_cache warm" in ttft.note
    warm = next(c for c in validate_time([replace(cold, prompts_cached=True)]).checks if c.quantity == "ttft_ms")
    assert warm.note == ""


def test_a_loaded_runs_percentiles_meet_one_prefill_and_one_weight_read():
    """A loaded run's median and p99 TTFT are floored by one prompt's own prefill, its TPOT percentiles by one read of
    the weights: Llama 2 70B fp16 on 4 x H100, 1,024-token prompts."""
    row = _row(num_prompts=100, batch=0, request_rate=2.0, ttft_median_s=0.01, tpot_p99_s=0.005)
    names = [name for name, _, _ in below_floor(CAT, row)]
    assert names == ["TTFT median", "TPOT p99"]
    floors = datasheet_floors(CAT, row)
    assert floors.ttft_percentile_s == pytest.approx(prefill_floor_s(CAT, row, 1024))


def test_the_bench_script_lists_the_rows_under_a_floor(capsys, monkeypatch):
    """``bench/datasheet_floors.py`` prints how many figures it checked and each one under its floor: dennislee22's
    in-sample TTFTs, DL22-059 first (284.3 ms against its 973.0 ms floor, x0.29). Until s200 the floor counted the
    embedding and the output head on every prompt token and 11 were under it; DL22-038 and DL22-019 (x0.98, x0.99)
    were under a floor no run has."""
    from bench_support import bench_module

    monkeypatch.setattr("sys.argv", ["datasheet_floors.py"])
    bench_module("datasheet_floors").main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("9 under a floor")
    assert lines[1].split()[:2] == ["DL22-059", "TTFT"] and "floor     973.0 ms (x0.29)" in lines[1]
    assert all("dennislee22-vllm-benchmarking" in line for line in lines[1:])


def test_validate_names_a_loaded_run_under_its_floor():
    """A loaded run of Llama 2 70B fp16 on 4 x H100 with 1,024-token prompts at 2 requests/s whose median TTFT is
    10 ms: under the 35.4 ms of one prompt's prefill at 4 x 989.4 TFLOP/s, named as the table's caveat."""
    from planner.accuracy.validation import validate_load

    row = _row(num_prompts=100, batch=0, request_rate=2.0, ttft_median_s=0.010, tpot_median_s=0.025)
    checks = validate_load([row]).checks
    assert {c.quantity for c in checks} == {"ttft_median_ms", "tpot_median_ms"}
    assert all("published TTFT median 10.0 ms is below the 35.4 ms" in c.note for c in checks)


class TestOutputRateCeiling:
    READ_S = LLAMA2_70B_READ * 2 / (4 * 3.35e12)  # Llama 2 70B fp16 on 4 x H100: one weight read, 10.26 ms

    def test_a_static_batch_decodes_its_batch_a_weight_read(self):
        """8 sequences decode at most 8 tokens a weight read: 780.0 tok/s; its FLOP (2 x 68.7e9 a token at 4 x 989.4
        TFLOP/s, the prompts counted as cached: 34.7 us) allow far more."""
        row = _row(kind="static", batch=8, num_prompts=None)
        assert datasheet_floors(CAT, row).output_token_s == pytest.approx(self.READ_S / 8)

    def test_a_burst_of_long_prompts_is_bound_by_its_flop(self):
        """50 requests of 1,024 / 128 at once: each output token carries 9 tokens of FLOP and its head (0.311 ms at
        peak), more than a weight read over 50 sequences (0.205 ms)."""
        row = _row(num_prompts=50, batch=0)
        assert datasheet_floors(CAT, row).output_token_s == pytest.approx(prefill_floor_s(CAT, row, 9.0))
        assert prefill_floor_s(CAT, row, 9.0) > self.READ_S / 50

    def test_validate_names_a_rate_above_its_ceiling(self):
        """2,000 tok/s from 8 sequences of Llama 2 70B on 4 x H100 (at most 780): likely per GPU or input counted."""
        from planner.accuracy.validation import validate_time

        row = _row(kind="static", batch=8, num_prompts=None, throughput_tokens_per_s=2000.0, record_id="MY-3")
        rate = next(c for c in validate_time([row]).checks if c.quantity == "throughput_tok_s")
        assert rate.note.startswith("published output rate 2,000 tok/s is above the 780 tok/s its GPUs compute")
        assert "is it output tokens of the whole server" in rate.note
