"""Per-request front-end time (issue 22 gap (a)): fitted on published loaded runs, judged leaving whole sources out."""

from __future__ import annotations

import pytest

from planner.accuracy.frontend import (
    FRONTEND_S,
    Vote,
    fitted_frontend_s,
    frontend_for_rows,
    frontend_s_for,
    offered_load,
    votes,
)
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.under_load import predict_percentiles
from planner.accuracy.validation import validate_load


@pytest.fixture(scope="module")
def rows():
    return load_decode_rows(reference_dir() / "load_public.csv")


@pytest.fixture(scope="module")
def shipped_votes(rows):
    return votes(rows)


class TestFit:
    def test_a_source_is_predicted_without_its_own_vote(self):
        """Leave one source out: the median of the other sources' votes (0.010 and 0.030 s -> 0.020 s), whatever the
        left-out source's own residual (1 s)."""
        found = [
            Vote("vllm", "a", 0.010, ("r1",)),
            Vote("sglang", "b", 0.030, ("r2",)),
            Vote("vllm", "c", 1.0, ("r3",)),
        ]
        assert fitted_frontend_s(found, leave_out="c") == pytest.approx(0.020)
        assert fitted_frontend_s(found) == pytest.approx(0.030)

    def test_never_negative(self):
        """A source whose runs are faster than simulated does not give a negative time outside the engine."""
        assert fitted_frontend_s([Vote("vllm", "a", -0.002, ("r1",))]) == 0.0

    def test_the_shipped_value_is_the_fit_on_every_source(self, shipped_votes):
        """``FRONTEND_S`` (27.1 ms) is re-derived from catalogs/reference/load_public.csv by the module's rule."""
        assert len(shipped_votes) == 9
        assert fitted_frontend_s(shipped_votes) == pytest.approx(FRONTEND_S, abs=5e-5)

    def test_only_each_sweeps_lightest_load_votes(self, rows, shipped_votes):
        """surajssd's vLLM 0.8.3 sweep (LD001-LD004: 1, 4, 16 req/s and all at once) votes with its 1 req/s run only:
        published 56.37 ms median TTFT, 9.7 ms above the simulated prefill (python bench/frontend_fit.py)."""
        vote = next(v for v in shipped_votes if v.source_group == "surajssd-llm-k8s-azure-a100")
        assert vote.runs == ("LD001",)
        assert vote.residual_s == pytest.approx(0.0097, abs=0.002)
        burst = next(r for r in rows if r.record_id == "LD004")
        assert offered_load(burst) is None


class TestValidation:
    def test_each_row_is_judged_by_the_value_fitted_on_other_sources(self, rows, shipped_votes):
        """LD001 at 1 req/s (arrivals shifted, so TTFT moves by exactly the front end): validate_load's prediction is
        the simulation plus the left-out value (the other eight votes' median, 27.2 ms; python bench/frontend_fit.py),
        not the value fitted on every source (27.1 ms: close here, but gpustack's rows get 21.5 ms, its own four votes
        left out); within the issue's worst-case limit for medians (40%) of the published 56.37 ms (this source's own
        residual is 9.7 ms)."""
        row = next(r for r in rows if r.record_id == "LD001")
        left_out = frontend_s_for(row, shipped_votes)
        assert left_out == pytest.approx(0.0272, abs=5e-4)
        assert left_out == fitted_frontend_s(shipped_votes, leave_out=row.source_group)
        gpustack = next(r for r in rows if r.source_group == "gpustack-performance-lab")
        assert frontend_s_for(gpustack, shipped_votes) == pytest.approx(0.0215, abs=5e-4)
        assert frontend_s_for(gpustack, shipped_votes) != pytest.approx(fitted_frontend_s(shipped_votes), abs=5e-4)
        bare = predict_percentiles(row, frontend_s=0.0)["ttft_median_ms"]
        checks = validate_load(rows).checks
        check = next(c for c in checks if c.record_id == "LD001" and c.quantity == "ttft_median_ms")
        assert check.predicted == pytest.approx(bare + left_out * 1e3, rel=1e-6)
        assert check.predicted == pytest.approx(56.3722, rel=0.40)  # published (surajssd/llm-k8s, benchmark_results.md)

    def test_a_users_run_gets_the_value_fitted_on_every_shipped_source(self, tmp_path):
        """A run of a source not in load_public.csv was in no fit: it is predicted with ``FRONTEND_S`` itself (and
        the shipped runs are not simulated for it)."""
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,batch_size_or_concurrency,request_rate,num_prompts,"
            "input_len,output_len,ttft_median_ms,source\n"
            "u1,serving_rate,vLLM,H100,1,llama3.1-8b,,2,100,512,128,50,https://example.com/mine\n"
        )
        assert frontend_for_rows(load_decode_rows(path)) == {"u1": FRONTEND_S}
