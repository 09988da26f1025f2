"""The leave-one-source-out protocol (planner.accuracy.holdout, issue 10 item 3): which rows are fitted, what each fold
holds out, that the shipped factors are the fit, and the held-out errors the data supports.

The thresholds are the measured leave-one-source-out figures (python bench/loso.py, docs/accuracy.md: TTFT of a
single prompt 15% median / 44% worst over 25 figures, static-batch throughput 12% / 92% over 75) with a little
room; they are not the issue's goals (10% / 25% and 10% / 40%), which are not met.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import pytest

from planner.accuracy import holdout as ho
from planner.accuracy import predict as acc
from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.engines.profiles import DEFAULT_RESIDUALS, LMDEPLOY, TENSORRT_LLM, VLLM

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_holdout")


@pytest.fixture(scope="module")
def rows():
    return ho.fit_rows(acc.load_decode_rows())


def test_only_unambiguous_rows_are_fitted(rows):
    """Static batches and batch-1 latency of engines with a profile; serving benchmarks are not fitted."""
    assert rows and all(r.kind == "static" and r.engine in ho.FIT_ENGINES for r in rows)
    assert "dennislee22-vllm-benchmarking" not in {r.source_group for r in rows}  # serving rows only


def test_a_row_published_twice_counts_once(rows):
    """decode_public.csv repeats LMDeploy's Llama-2-7B batch-1 128/128 row (DM028) of perf_public.csv."""
    same = [
        r
        for r in rows
        if r.source_group == "lmdeploy-a100-fp16-v0.1.0a1"
        and (r.batch, r.input_len, r.output_len, r.gpus) == (1, 128, 128, 1)
        and "7b" in r.model.lower()
    ]
    assert len(same) == 1


def test_coarse_tpot_is_not_fitted(rows):
    """LMDeploy's page prints per-token latency as 0.01 s (5-15 ms): those TPOTs are dropped, throughput kept."""
    lmd = [r for r in rows if r.source_group == "lmdeploy-a100-fp16-v0.1.0a1"]
    assert lmd and all(math.isnan(r.tpot_s) for r in lmd if r.tpot_s < 0.1)
    assert all(not math.isnan(r.throughput_tokens_per_s) for r in lmd if r.output_len > 1)


def test_a_batch_that_does_not_fit_is_not_fitted():
    """Llama-2-13B, 64 x (2048 + 2048) tokens in fp16 KV on one A100 80GB (LMD010-040): 168 GB of KV cache."""
    all_rows = acc.load_decode_rows()
    row = next(r for r in all_rows if r.record_id == "LMD010-040")
    assert row.kind == "static" and row not in ho.fit_rows(all_rows)


def test_vllm_ci_pages_are_one_fold():
    """vLLM's CI publishes one benchmark on several pages (one per GPU build): they are held out together."""
    row = acc.DecodeRow("x", "H100", "llama-3.1-8b", 1, 8, 32, 128, source_group="vllm-buildkite-perf-9555")
    assert ho.fold_of(row) == ho.fold_of(dataclasses.replace(row, source_group="vllm-buildkite-perf-9513"))
    assert ho.fold_of(dataclasses.replace(row, source_group="trtllm-perf-v0.6.1")) == "trtllm-perf-v0.6.1"


def test_each_fold_is_predicted_by_a_fit_without_it(monkeypatch):
    """leave_one_source_out fits once on all rows and once per fold on the other folds' rows only."""
    seen = []
    real = ho.fit_joint

    def spy(fit_rows, **kw):
        seen.append({ho.fold_of(r) for r in fit_rows})
        return real(fit_rows, **kw)

    monkeypatch.setattr(ho, "fit_joint", spy)
    rows = [r for r in acc.load_decode_rows() if ho.fold_of(r) in ("vllm-buildkite-perf", "trtllm-blog-h200-launch")]
    result = ho.leave_one_source_out(rows, shared_fields=("bandwidth_efficiency",))
    assert seen[0] == {"vllm-buildkite-perf", "trtllm-blog-h200-launch"}
    assert sorted(map(sorted, seen[1:])) == [["trtllm-blog-h200-launch"], ["vllm-buildkite-perf"]]
    assert set(result.folds) == {"vllm-buildkite-perf", "trtllm-blog-h200-launch"}
    assert all(not math.isnan(result.held_out.throughput_tokens_per_s[i]) for i in range(len(result.rows)))


@pytest.fixture(scope="module")
def loso():
    return ho.leave_one_source_out(acc.load_decode_rows())


def test_shipped_factors_are_the_fit(loso):
    """planner.engines.profiles ships the fit on all rows (fit_reference_defaults), rounded: the per-layer cost shared by
    every engine, each engine's step overhead and prefill latency its own; the kernels' own curves are measured, not
    fitted (their engine multipliers stay 1)."""
    fit = loso.fit
    for profile in (VLLM, LMDEPLOY, TENSORRT_LLM):
        assert profile.layer_overhead_s == pytest.approx(fit.shared["layer_overhead_s"], abs=1e-7)
        for field in ("bandwidth_efficiency", "decode_flop_efficiency", "prefill_flop_efficiency"):
            assert getattr(profile, field) == 1.0, field
        assert profile.step_overhead_s == pytest.approx(fit.engines[profile.name]["step_overhead_s"], abs=1e-4)
        assert profile.prefill_latency_s == pytest.approx(fit.engines[profile.name]["prefill_latency_s"], abs=1e-4)


def test_fit_source_groups_are_the_fitted_sources(loso):
    """planner.accuracy.fit.FIT_SOURCE_GROUPS (what bench/heldout.py leaves out of its held-out table) lists every source
    with a fitted row, and only those: the protocol's, and the vLLM serving runs VLLM_SEQUENCE_OVERHEAD_S is from."""
    assert set(FIT_SOURCE_GROUPS) == {r.source_group for r in loso.rows} | {"dennislee22-vllm-benchmarking"}


def test_default_residuals_are_the_fits_quantiles(loso):
    """DEFAULT_RESIDUALS (the fallback without a residuals file) are the in-sample 10th / 90th percentiles."""
    assert acc.quantiles([e for _, e in loso.time_residuals("in_sample")]) == DEFAULT_RESIDUALS


@pytest.mark.parametrize(
    "quantity, median_limit, worst_limit, at_least",
    [("TTFT", 0.18, 0.60, 24), ("throughput", 0.15, 1.0, 70)],
)
def test_held_out_error(loso, quantity, median_limit, worst_limit, at_least):
    """Each source predicted by the fit on the others: median and worst |predicted / measured - 1|."""
    errors = [abs(loso.held_out_error(i, quantity)) for i in range(len(loso.rows))]
    errors = sorted(e for e in errors if not math.isnan(e))
    median = errors[len(errors) // 2]
    assert len(errors) >= at_least and median <= median_limit and errors[-1] <= worst_limit, (median, errors[-1])


def test_value_held_out_fits_see_neither_the_fold_nor_the_value(monkeypatch):
    """To predict a TP-2 row of a fold, the fit uses no row of that fold and no TP-2 row of any other."""
    rows = [r for r in acc.load_decode_rows() if ho.fold_of(r) in ("vllm-buildkite-perf", "trtllm-perf-v0.6.1")]
    result = ho.leave_one_source_out(rows, shared_fields=("bandwidth_efficiency",))
    seen = []
    real = ho.fit_joint

    def spy(fit_rows, **kw):
        seen.append({(ho.fold_of(r), r.gpus) for r in fit_rows})
        return real(fit_rows, **kw)

    monkeypatch.setattr(ho, "fit_joint", spy)
    held = ho.value_held_out(result, "tp")
    folds, tps = {ho.fold_of(r) for r in result.rows}, {r.gpus for r in result.rows}
    assert seen
    for s in seen:  # each fit leaves out a whole fold and a whole TP size
        assert folds - {f for f, _ in s} and tps - {t for _, t in s}
    assert any(not math.isnan(x) for x in held.held_out.tpot_s)


def test_the_shipped_residuals_file_is_the_protocols(loso):
    """catalogs/reference/heldout_residuals.csv (planner.accuracy.ranges reads it; bench/loso.py --write-residuals writes it)
    is residual_table of the leave-one-source-out result, widening factors included: re-derived here."""
    import csv

    from planner.accuracy import ranges

    with open(ranges.residuals_file(), newline="", encoding="utf-8") as f:
        shipped = list(csv.DictReader(f))
    assert ho.residual_table(loso) == shipped


def test_readme_states_the_leave_one_source_out_figures(loso):
    """README: 'judged leave-one-source-out ... single-prompt TTFT 14% median / 57% worst, static-batch throughput
    11% / 53%' and 'aiconfigurator is closer on the batch-1 TTFTs both predict (11% / 34% against 22% / 48% on its
    10 rows)' are what python bench/loso.py prints now (issue 26: every README figure checked by a test)."""
    import importlib.util
    import re
    from pathlib import Path

    root = Path(__file__).parents[1]
    mods = {}
    for name in ("heldout", "loso"):
        spec = importlib.util.spec_from_file_location(name, root / "bench" / f"{name}.py")
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
    cs = mods["loso"].checks(loso)
    mods["heldout"].attach(cs, "aic", run=False)

    def pct(errs):
        e = [abs(x) for x in errs if not math.isnan(x)]
        return [int(f"{statistics.median(e):.0%}"[:-1]), int(f"{max(e):.0%}"[:-1])]

    ttft = [c for c in cs if c["q"] == "TTFT"]
    static = [c for c in cs if c["q"] == "static-batch throughput"]
    aic_ttft = [c for c in ttft if not math.isnan(c.get("aic", math.nan))]
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"single-prompt TTFT (\d+)% median / (\d+)% worst, static-batch throughput (\d+)% / (\d+)%", readme)
    a = re.search(r"batch-1 TTFTs both predict \((\d+)% / (\d+)% against (\d+)% / (\d+)% on its (\d+) rows\)", readme)
    assert m and a, "README's leave-one-source-out sentences changed shape; update this test with them"
    assert [int(g) for g in m.groups()] == pct([c["planner"] for c in ttft]) + pct([c["planner"] for c in static])
    assert [int(g) for g in a.groups()] == [
        *pct([c["aic"] for c in aic_ttft]),
        *pct([c["planner"] for c in aic_ttft]),
        len(aic_ttft),
    ]
