"""InferenceX's single-node DeepSeek-R1 concurrency sweeps in catalogs/reference/load_public.csv (issue 22: published
loaded runs the project was never given, judged only; s187).

- inferencex-app-dsr1-single-node (IXA001-IXA091): the runs InferenceX's results API returned to its app's end-to-end
  tests (SemiAnalysisAI/InferenceX-app @528c414, packages/app/cypress/fixtures/api/benchmarks.json), one node, no
  speculation: FP8 weights under SGLang 0.5.9 / 0.5.12 on H200, B200, B300, MI300X, MI325X and MI355X and under
  TensorRT-LLM 1.3.0rc14 on H200 and B200; FP4 checkpoints (NVIDIA's NVFP4, AMD's MXFP4) under SGLang on B200, B300
  and MI355X and TensorRT-LLM on B200, each with the server command its launch script ran (``bench/inferencex_rows.py``). Median and p99
  TTFT and TPOT are compared, and ITL where the server streams every token.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from load_public_support import group_fixtures

from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.accuracy.frontend import JUDGED_ONLY_SOURCE_GROUPS, frontend_s_of_rows, shipped_votes
from planner.accuracy.under_load import predict_percentiles
from planner.errors import PlannerError
from planner.serving.benchmark import request_lengths
from planner.serving.load import FRONTEND_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import inferencex_rows as ix  # noqa: E402

GROUP = ix.GROUP


raw, rows = group_fixtures(GROUP)


def _run(r: dict[str, str]) -> dict:
    """The API entry a row quotes (its ``quote`` cell is the entry's JSON, metrics in seconds)."""
    return json.loads(r["quote"])


class TestTranscription:
    def test_ninety_one_runs_of_one_held_out_source(self, raw):
        """IXA001-IXA091 (IXA057-IXA061, FP8 TensorRT-LLM on B200, and IXA062-IXA091, FP4, read after the first 56 were
        numbered), in no time-model fit, cold (every launch script passes --disable-radix-cache or
        enable_block_reuse: false), closed loops of 10 prompts a slot."""
        assert [r["record_id"] for r in raw] == [f"IXA{i:03d}" for i in range(1, 92)]
        assert GROUP not in FIT_SOURCE_GROUPS
        assert {r["prefix_cache"] for r in raw} == {"cold"}
        assert all(int(r["num_prompts"]) == 10 * int(r["batch_size_or_concurrency"]) for r in raw)
        assert {r["gpu"] for r in raw} == set(ix.GPUS.values())

    def test_each_row_is_what_the_script_makes_of_its_quoted_run(self, raw):
        """Every cell re-derived from the row's own quoted API entry (``inferencex_rows.row_of``): the figures are the
        entry's seconds in milliseconds, the server command its script's for that TP, ISL / OSL and concurrency."""
        for r in raw:
            assert ix.row_of(_run(r), r["record_id"]) == {c: r[c] for c in ix.COLUMNS}, r["record_id"]

    def test_a_figure_is_its_metric_in_milliseconds(self, raw):
        """IXA001 (B200, SGLang 0.5.12, 1 in flight): median TTFT 0.15738 s -> 157.38 ms, median TPOT 7.18 ms."""
        first = raw[0]
        assert _run(first)["metrics"]["median_ttft"] == pytest.approx(0.15738, abs=1e-5)
        assert (float(first["ttft_median_ms"]), float(first["tpot_median_ms"])) == (157.38, 7.18)

    def test_itl_is_compared_only_where_every_token_is_streamed(self, raw):
        """The NVIDIA launch scripts stream chunks (SGLang --stream-interval 10 or 30, TensorRT-LLM stream_interval: 10):
        their ITL cells are blank. IXA001's quoted median ITL, 215.6 ms, is 30 x its 7.18 ms TPOT. The AMD scripts
        set no interval (SGLang's default 1): their ITLs are kept."""
        for r in raw:
            chunked = r["gpu"] in ("H200 SXM 141GB", "B200 180GB", "B300 288GB")
            assert (r["itl_median_ms"] == "") == chunked, r["record_id"]
        first = _run(raw[0])["metrics"]
        assert first["median_itl"] / first["median_tpot"] == pytest.approx(30, rel=0.01)

    def test_lengths_are_the_means_of_the_clients_draw(self, raw):
        """benchmark_serving.py's ``sample_uniform`` draws integers from int(L x 0.8) to L: means 921.5 (L = 1,024) and
        7,372.5 (L = 8,192); the simulation's draw for those means tops out at L again."""
        means = {(float(r["input_len"]), float(r["output_len"])) for r in raw}
        assert means <= {(921.5, 921.5), (921.5, 7372.5), (7372.5, 921.5)}
        for mean, top in ((921.5, 1024), (7372.5, 8192)):
            drawn = request_lengths(mean, mean, 2000, 0.8)
            assert max(p for p, _ in drawn) == top
            assert min(p for p, _ in drawn) >= int(top * 0.8)


class TestReading:
    def test_the_server_limits_are_read_from_the_command(self, rows):
        """SGLang on B200 / B300 at TP 8: --max-running-requests 128, --max-prefill-tokens 32768; H200 at 1,024 / 1,024:
        512; TensorRT-LLM: --ep_size 8 spreads the experts (H200; B200 FP4 with attention data parallelism: "dp-ep"),
        --ep_size 1 splits them."""
        by_id = {r.record_id: r for r in rows}
        assert (by_id["IXA001"].max_num_seqs, by_id["IXA001"].max_prefill_tokens) == (128, 32768)
        h200_1k = [r for r in rows if r.gpu.startswith("H200") and r.engine == "sglang" and r.input_len < 1000]
        assert {r.max_num_seqs for r in h200_1k if r.output_len < 1000} == {512}
        trt = {
            (r.gpu, r.weight_precision, r.expert_parallel, r.parallelism) for r in rows if r.engine == "tensorrt-llm"
        }
        assert trt == {
            ("H200 SXM 141GB", "fp8", True, "tp"),
            ("B200 180GB", "fp8", False, "tp"),
            ("B200 180GB", "nvfp4", False, "tp"),
            ("B200 180GB", "nvfp4", True, "dp-ep"),
        }

    def test_every_figure_is_predicted(self, rows):
        """Each run's TTFT and TPOT percentiles are simulated, none refused."""
        fronts = frontend_s_of_rows(rows)
        for r, front in zip(rows, fronts, strict=True):
            got = predict_percentiles(r, frontend_s=front)
            for q in ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms"):
                assert math.isfinite(got[q]) and got[q] > 0, (r.record_id, q)

    def test_a_run_is_sized_with_its_own_memory_share(self, rows):
        """IXA003 (DeepSeek-R1 on 4 x B200, SGLang 0.5.12): its script's TP 4 branch raises --mem-fraction-static to
        0.95, read as the run's memory share; at SGLang's default fraction for the group the 673 GB of weights do not
        fit and the run would be refused (s187 before the reading)."""
        from planner.accuracy.predict import _profile_for

        ixa003 = next(r for r in rows if r.record_id == "IXA003")
        assert ixa003.server_memory_share == 0.95
        assert _profile_for(ixa003, None).row_memory_utilization == 0.95
        plain = replace(ixa003, server_memory_share=None)
        with pytest.raises(PlannerError, match="do not fit on 4 x B200"):
            predict_percentiles(plain, frontend_s=FRONTEND_S)

    def test_one_sequence_decodes_at_its_weight_read(self, rows):
        """IXA001: one sequence on 8 x B200 (SGLang 0.5.12, FP8): the simulated median TPOT is the published 7.18 ms
        to within 15% (37B active parameters at one byte over 8 x 8 TB/s is 0.6 ms; the rest is the step's kernels
        and collectives). A bound, not a tuned value: bench/load_validation.py prints -3%."""
        ixa001 = next(r for r in rows if r.record_id == "IXA001")
        got = predict_percentiles(ixa001, frontend_s=FRONTEND_S)["tpot_median_ms"]
        assert got == pytest.approx(7.18, rel=0.15)


class TestHeldOutOfTheFrontEndFit:
    def test_the_source_casts_no_vote(self):
        """In ``JUDGED_ONLY_SOURCE_GROUPS``: the shipped votes stay the 11 behind ``FRONTEND_S``."""
        assert GROUP in JUDGED_ONLY_SOURCE_GROUPS
        votes = shipped_votes()
        assert GROUP not in {v.source_group for v in votes}
        assert len(votes) == 11


class TestTheCommandsExpertSize:
    def test_attention_data_parallelism_takes_the_commands_ep_size(self, raw):
        """TensorRT-LLM's "DEP" needs the experts' group: a row without an ``expert_parallel_size`` cell (load_public.csv
        has none) takes its command's ``--ep_size``: IXA069 (``--tp_size=8 --ep_size=8``, ``enable_attention_dp: true``)
        is "dp-ep"; with ``--ep_size=4`` it would be refused (only EP = TP is modelled), and with none too."""
        from planner.accuracy.published import parallelism_of

        ixa069 = next(r for r in raw if r["record_id"] == "IXA069")
        assert parallelism_of(ixa069) == "dp-ep"
        with pytest.raises(ValueError, match="experts over 4"):
            parallelism_of({**ixa069, "notes": ixa069["notes"].replace("--ep_size=8", "--ep_size=4")})
        with pytest.raises(ValueError, match="no expert_parallel_size"):
            parallelism_of({**ixa069, "notes": ixa069["notes"].replace("--ep_size=8", "")})
