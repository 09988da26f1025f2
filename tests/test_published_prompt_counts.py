"""Published serving runs read with the number of prompts their sources sent: a run cannot hold more requests in
flight than it sends, so a concurrency above its prompt count is not the batch the engine decoded.

Vultr's B200 cookbook (catalogs/reference/perf_public.csv, VUL-001..018) leaves the prompt count out of its
results table; its methodology page (https://docs.vultr.com/inference-cookbook/cuda/benchmarks/methodology,
updated 11 March 2026) states it: "Prompts per run 50 (c=1), 400 (c>1)", "The 50/400 split was used for Nemotron
Nano", "Nemotron Super 49B used ~50 prompts at all concurrency levels".
"""

from __future__ import annotations

import math

import pytest

from planner.accuracy import predict as acc
from planner.catalog import default_catalog

ROWS = {r.record_id: r for r in acc.load_decode_rows() if r.record_id.startswith("VUL-")}


class TestVultrPromptCounts:
    @pytest.mark.parametrize("record_id, prompts", [("VUL-001", 50), ("VUL-002", 400), ("VUL-009", 400)])
    def test_nemotron_nano_runs_sent_50_then_400_prompts(self, record_id, prompts):
        """Nemotron Nano: 50 prompts at concurrency 1, 400 above (the methodology page's 50/400 split)."""
        assert ROWS[record_id].num_prompts == prompts

    @pytest.mark.parametrize("record_id", [f"VUL-{i:03d}" for i in range(10, 19)])
    def test_nemotron_super_runs_sent_50_prompts(self, record_id):
        """Nemotron Super 49B: ~50 prompts at every concurrency."""
        assert ROWS[record_id].num_prompts == 50

    def test_concurrency_above_the_prompts_decodes_the_same_batch(self):
        """400 prompts at concurrency 512 and 1024 are one run: the source prints TPOT 15.46 ms for both, and the
        prediction is the same for both (it grew with the concurrency when each run was read as 10 x c prompts)."""
        rows = [ROWS["VUL-008"], ROWS["VUL-009"]]
        assert rows[0].tpot_s == rows[1].tpot_s == pytest.approx(15.46e-3)
        pred = acc.predict_decode_rows(rows, catalog=default_catalog())
        assert not math.isnan(pred.tpot_s[0]) and pred.tpot_s[0] == pytest.approx(pred.tpot_s[1], rel=1e-9)


class TestWarmPrefixCache:
    """surajssd/llm-k8s's A100 runs (K8S-001..004): its script (benchmark/vllm_upstream/run_vllm_upstream_benchmark.sh
    at 8b48c65e) sends the same 200 ShareGPT prompts at qps 01, 04, 16 and inf to one vLLM 0.8.3 server, whose V1
    engine caches prefixes by default: the first run computes every prompt, the later three find them cached. The
    qps-inf run's mean TTFT, 360 ms for 200 prompts sent at once, is below what 8 A100s take to prefill them (200 x
    213 tokens x 2 x 70e9 FLOPs over 8 x 312 TFLOP/s is at least 1.2 s of bf16 math)."""

    def test_only_the_first_rate_computes_its_prompts(self):
        """K8S-001 cold, K8S-002..004 warm."""
        assert [ROWS_ALL[f"K8S-00{i}"].prompts_cached for i in range(1, 5)] == [False, True, True, True]

    def test_the_published_ttft_is_below_any_prefill_of_the_prompts(self):
        """The arithmetic of the class docstring, from the row's own numbers."""
        r = ROWS_ALL["K8S-004"]
        prefill_s = r.num_prompts * r.input_len * 2 * 70e9 / (8 * 312e12)
        assert r.ttft_s == pytest.approx(0.360361) and prefill_s > 3 * r.ttft_s


ROWS_ALL = {r.record_id: r for r in acc.load_decode_rows() if r.record_id.startswith("K8S-")}


class TestVultrSuperSweepIsWarm:
    """Nemotron Super 49B's sweep re-sent the same 50 prompts to a server that caches prefixes (s185).

    ``vllm bench serve --dataset-name random`` draws its prompts from ``--seed`` (default 0: vLLM 0.16.0
    ``benchmarks/datasets.py``, ``RandomDataset`` lengths then offsets from ``np.random.default_rng(seed)``), so every
    run of 50 prompts sends the same 50; vLLM 0.16.0 caches prefixes by default for a decoder-only model and not for a
    hybrid one (``config/model.py`` ``is_prefix_caching_supported``). So the Super sweep (DeciLM, attention only) is
    warm from its second run (c=8) on, and the Nano sweep (Mamba-2 hybrid) stays cold."""

    SUPER_WARM = [f"VUL-{i:03d}" for i in range(11, 19)]

    @pytest.mark.parametrize("record_id", SUPER_WARM)
    def test_the_super_runs_after_the_first_are_warm(self, record_id):
        assert ROWS[record_id].prompts_cached

    @pytest.mark.parametrize("record_id", ["VUL-010"] + [f"VUL-{i:03d}" for i in range(1, 10)])
    def test_the_first_super_run_and_every_hybrid_nano_run_are_cold(self, record_id):
        assert not ROWS[record_id].prompts_cached

    @pytest.mark.parametrize("record_id", ["VUL-014", "VUL-015", "VUL-017"])
    def test_the_one_wave_runs_published_a_ttft_no_cold_prefill_reaches(self, record_id):
        """At 64, 128 and 512 in flight the 50 prompts arrive at once. Cold, each 2,048-token prompt is 2 x 49.9e9 x
        2,048 FLOP (the catalog's parameter count: 49,867,145,216, the model card's 49.9B); at the B200's dense FP8
        peak (4.5e15 FLOP/s, NVIDIA's HGX B200 datasheet) one after another, their mean TTFT is 25.5 such prefills,
        1.16 s. The page publishes 205-271 ms: the prompts were in the cache."""
        from planner.engines.architecture import param_counts

        row, cat = ROWS[record_id], default_catalog()
        params = param_counts(cat.model(row.model))[0]
        one_prompt_s = 2 * params * row.input_len / cat.gpu("B200").peak_flop_per_s["fp8"]
        cold_mean_floor_s = one_prompt_s * (row.num_prompts + 1) / 2
        assert cold_mean_floor_s == pytest.approx(1.16, abs=0.01)
        assert row.ttft_s < 0.25 * cold_mean_floor_s

    def test_read_warm_a_one_wave_run_is_not_a_prefill_queue(self):
        """VUL-014 (205 ms, TPOT 12.70 ms published): read warm, its predicted TTFT is under a tenth of the cold
        reading's (which queued 100k prompt tokens) and its TPOT falls by the prefills no longer interleaved."""
        from dataclasses import replace

        warm = ROWS["VUL-014"]
        pred = acc.predict_decode_rows([warm, replace(warm, prompts_cached=False)], catalog=default_catalog())
        assert pred.ttft_s[0] < 0.1 * pred.ttft_s[1]
        assert pred.tpot_s[0] < 0.85 * pred.tpot_s[1]
