"""How far public sources disagree on one configuration (``bench/source_agreement.py``, issue 21): which runs it
groups, and the spread and floor it prints, pinned on the published figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_support import bench_module

from planner.accuracy.published import DecodeRow


@pytest.fixture(scope="module")
def sa():
    """The bench script as a module."""
    return bench_module("source_agreement")


@pytest.fixture(scope="module")
def shipped(sa):
    """Every shipped run, the groups across sources (any engine) and the repeats within one source."""
    runs, _, _ = sa.all_runs()
    return runs, sa.groups(runs, "any"), sa.groups(runs, "engine", across_sources=False)


def _group(groups, quantity: str, ids: set[str]):
    found = [g for g in groups if g.quantity == quantity and ids <= {i for r in g.runs for i in r.ids}]
    assert len(found) == 1, [g.runs for g in found]
    return found[0]


class TestAcrossSources:
    def test_llama2_70b_first_token_on_four_a100s(self, shipped):
        """Llama-2-70B fp16, TP 4 on A100 SXM 80GB, one 128-token prompt: TensorRT-LLM v0.5's "1st Token Latency"
        is 47 ms (TRT061-054: NVIDIA/TensorRT-LLM@138f96d docs/source/performance.md, Low Latency table 'A100 GPUs
        (FP16)', "| LLaMA 70B | 1 | 4 | 128 | 47 |"); LMDeploy v0.1.0a1's FTL(ave) is 0.074 s at outputs 128 and
        2,048 (LMD010-062, LMD010-063: InternLM/lmdeploy@ebe90bc docs/en/benchmark/a100_fp16.md, '### llama2-70b',
        "| 1 | 4 | 128 | 128 | 33.63 | 73.72 | 0.074 | ..." and "| 1 | 4 | 128 | 2048 | ... | 0.074 | ..."). Both are
        means (LMDeploy's cell names its TTFT column FTL(ave), though the row's statistic is its TPOT's median).
        Spread 74 / 47 - 1 = 57.4%; floor (74 - 47) / (74 + 47) = 22.3%: no one prediction is within 22% of both."""
        _, across, _ = shipped
        g = _group(across, "ttft", {"TRT061-054", "LMD010-062", "LMD010-063"})
        assert {i for r in g.runs for i in r.ids} == {"TRT061-054", "LMD010-062", "LMD010-063"}
        assert (g.statistic, g.engines) == ("mean", "lmdeploy/tensorrt-llm")
        assert sorted(g.values) == pytest.approx([0.047, 0.074])  # one figure per source
        assert g.spread == pytest.approx(74 / 47 - 1)
        assert g.floor == pytest.approx(27 / 121)
        assert not g.near

    def test_one_tpot_and_no_output_rate_is_measured_twice_across_sources(self, shipped):
        """The shipped rows hold one configuration whose TPOT two sources both published (lengths within 25%) and none
        whose output rate: InferenceX's DeepSeek-R1 on 8 x H200 under SGLang at 8 in flight, one launch script
        (``dsr1_fp8_h200.sh``) run by InferenceX's job in two months, SGLang 0.5.7 (issue 870's comment, IX870-001:
        mean 12.8 ms) and 0.5.12 (the app's API, IXA014: median 11.71 ms), 9.3% apart; their TTFTs, a mean with the
        run's first wave and a median, 277.6%. A source added later that repeats one should fail this test, so the
        docs' figures are redone."""
        _, across, _ = shipped
        assert sorted(g.quantity for g in across) == ["tpot", "ttft", "ttft", "ttft", "ttft", "ttft"]
        (tpot,) = [g for g in across if g.quantity == "tpot"]
        assert {i for r in tpot.runs for i in r.ids} == {"IX870-001", "IXA014"}
        assert tpot.spread == pytest.approx(12.8 / 11.71 - 1)


class TestRuns:
    def test_a_run_in_two_files_is_one_run(self, shipped):
        """GPUSTACK-247 (perf_public.csv: mean TPOT 5.65 ms) and LD072 (load_public.csv: median 5.58 ms) read one
        result block (gpustack/gpustack@47277d7 docs/performance-lab/qwen3-8b/h100-latency.md#L221): one run holding
        both statistics, never compared with itself."""
        runs, _, _ = shipped
        run = next(r for r in runs if "GPUSTACK-247" in r.ids)
        assert sorted(run.ids) == ["GPUSTACK-247", "LD072"]
        assert run.figures["tpot"] == pytest.approx({"mean": 5.65e-3, "median": 5.58e-3})

    def test_one_block_printed_twice_is_not_a_repeat(self, shipped):
        """GPUSTACK-243 (section '1. Choosing the Inference Engine', #L83) and GPUSTACK-262 ('Other Benchmark Cases',
        run 'BS=4', #L614) print the same figures (496.88 tok/s, 7.38 ms, 64.00 ms): one run shown twice, so it
        gives no run-to-run spread."""
        _, _, within = shipped
        assert not [g for g in within if {"GPUSTACK-243", "GPUSTACK-262"} <= {i for r in g.runs for i in r.ids}]

    def test_two_ci_builds_give_the_run_to_run_spread(self, shipped):
        """vLLM's CI builds 9513 and 9515 (one benchmark, one source) ran Llama-3.1-8B on one H200 at batch 8,
        32 / 128 tokens: 1,228 and 1,229 output tok/s (BK9513-001, BK9515-002)."""
        _, _, within = shipped
        g = _group(within, "rate", {"BK9513-001", "BK9515-002"})
        assert g.documents == 2
        assert g.spread < 0.002


def _row(record_id: str, group: str, model: str, input_len: int, output_len: int, tpot_s: float, **kw) -> DecodeRow:
    return DecodeRow(
        record_id=record_id, gpu="H100 SXM 80GB", model=model, gpus=1, batch=8, input_len=input_len,
        output_len=output_len, tpot_s=tpot_s, source=f"https://example.org/{group}", source_group=group, **kw,
    )  # fmt: skip


class TestMatching:
    def test_aliases_match_and_lengths_within_ten_percent_are_exact(self, sa):
        """ "meta-llama/Llama-3.1-8B-Instruct" and "Llama-3.1-8B" are one catalog model; 1,000 / 200 against 1,090 /
        200 tokens (9% apart) is one configuration; the spread is 11 / 10 - 1."""
        rows = [
            _row("a", "one", "meta-llama/Llama-3.1-8B-Instruct", 1000, 200, 0.010),
            _row("b", "two", "Llama-3.1-8B", 1090, 200, 0.011),
        ]
        runs, left = sa.runs_of(rows)
        (g,) = sa.groups(runs, "engine")
        assert (g.near, g.spread, sum(left.values())) == (False, pytest.approx(0.1), 0)

    def test_lengths_beyond_ten_percent_are_only_near(self, sa):
        """1,000 against 1,200 input tokens (20% apart) is a near match, not the same configuration; 1,300 (30%) is
        neither."""
        near = sa.groups(
            sa.runs_of([_row("a", "one", "Llama-3.1-8B", 1000, 200, 0.010), _row("b", "two", "Llama-3.1-8B", 1200, 200, 0.012)])[0]
        )  # fmt: skip
        apart = sa.groups(
            sa.runs_of([_row("a", "one", "Llama-3.1-8B", 1000, 200, 0.010), _row("b", "two", "Llama-3.1-8B", 1300, 200, 0.012)])[0]
        )  # fmt: skip
        assert [g.near for g in near] == [True]
        assert apart == []

    def test_engines_set_the_tier(self, sa):
        """vLLM 0.11 against SGLang 0.5 on one configuration: an engine-agnostic group only; vLLM 0.10.1 against
        0.11.0: the same engine, not the same release."""

        def pair(engine_b: str, version_b: str):
            rows = [
                _row("a", "one", "Llama-3.1-8B", 1000, 200, 0.010, engine="vllm", engine_version="v0.11.0"),
                _row("b", "two", "Llama-3.1-8B", 1000, 200, 0.012, engine=engine_b, engine_version=version_b),
            ]
            runs = sa.runs_of(rows)[0]
            return [len(sa.groups(runs, tier)) for tier in sa.TIERS]

        assert pair("sglang", "0.5.3") == [0, 0, 1]
        assert pair("vllm", "0.10.1.1 (V1)") == [0, 1, 1]

    def test_a_statistic_cell_naming_columns_gives_each_its_own(self, sa):
        """LMDeploy's cell: "tpot_ms: median per-token latency ...; ttft_ms: FTL(ave)": TPOT a median, TTFT a mean."""
        cell = "tpot_ms: median per-token latency (50% column, seconds, 1 ms resolution); ttft_ms: FTL(ave)"
        assert sa.column_statistics(cell) == {"tpot": "median", "ttft": "mean"}
        assert sa.column_statistics("median (ttft, itl, e2e)") == {}


class TestDocs:
    def test_docs_table_is_the_scripts(self, sa, shipped):
        """docs/accuracy.md's "How far sources disagree" table is what the script prints (``--brief --write-docs``
        rewrites it)."""
        runs, _, within = shipped
        by_tier = {tier: sa.groups(runs, tier) for tier in sa.TIERS}
        text = (Path(__file__).parents[1] / "docs" / "accuracy.md").read_text(encoding="utf-8")
        start, end = sa.DOC_BLOCK
        assert text.split(start, 1)[1].split(end, 1)[0] == sa.summary_markdown(by_tier, within, runs), (
            "rerun PYTHONPATH=. python bench/source_agreement.py --brief --write-docs"
        )
