"""A published serving run's percentiles predicted as the run went: its traffic, lengths and engine simulated
(``planner.serving.load``), for ``planner validate``'s table of loaded figures.

A row (``planner.accuracy.published.DecodeRow``) with any of ``ttft_median_ms``, ``ttft_p99_ms``, ``tpot_median_ms``,
``tpot_p99_ms``, ``itl_median_ms``, ``itl_p99_ms`` (or their p90 and p95, ``ttft_p95_ms`` ...): ``num_prompts`` requests at ``request_rate`` (gamma gaps of
the row's ``burstiness``, Poisson at 1, as ``vllm bench serve`` sends them: ``get_request`` in
``vllm/benchmarks/serve.py``, ``theta = 1.0 / (request_rate * burstiness)``, ``np.random.gamma(shape=burstiness,
scale=theta)``), or kept ``batch`` at a time (a closed loop), or all at once; each of
``input_len`` / ``output_len`` tokens (a run's means, rounded; a named dataset's published means when blank),
varied by ``--random-range-ratio`` where the row states it; the row's engine, its scheduler and limits. A row whose
``prefix_cache`` is "warm" (its prompts sent to the same server before, prefix caching on) computes only each prompt's
last partial block (``planner.serving.load.warm_prompt_fraction``). A ShareGPT run that is vLLM's seed-0 sample
(``sharegpt_prompts``) sends that sample's prompts, each its own length, and its requests' outputs, each its own length
scaled to the row's mean (``planner.accuracy.datasets.sharegpt_requests``: the published sample's generated lengths,
cycled past its 200; equal outputs kept a closed loop in lockstep, no prompt ever sharing a step with decodes). A run
of vLLM's sampler that is not that sample (more prompts than the trace, or another tokenizer beyond its match) sends
the sample's requests cycled and scaled to the row's means (``planner.accuracy.datasets.sample_lengths``): at equal
lengths a burst of 1,000 moved in waves, a whole wave's prompts in one step (gpustack's TensorRT-LLM runs: p99 ITL
+579%). A server that
schedules asynchronously (``DecodeRow.async_scheduling``) admits an arrival one step later. A vLLM V0 server with
multi-step scheduling (``DecodeRow.scheduler_steps``, ``--num-scheduler-steps``) runs prefill-only steps and decodes
in windows of that many steps, streaming each window's tokens at its end (``planner.serving.simulate.simulate``). A
run served with speculative decoding (``DecodeRow.speculation``) drafts and verifies each step and emits its draft's
acceptance length per sequence (``planner.serving.speculative``), that length from a public source, never from the
runs compared (``planner.accuracy.acceptance``): a published range is predicted at its ends and its middle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from planner.accuracy.acceptance import (  # noqa: F401  (speculation_handled, speculative_problem_text re-exported)
    acceptance_range,
    speculation_handled,
    speculative_decoding,
    speculative_problem_text,
)
from planner.accuracy.datasets import (  # noqa: F401  (the ShareGPT trace's readers re-exported)
    SHAREGPT_TOKENIZER_MATCH,
    SHAREGPT_TRACE_FILE,
    SHAREGPT_TRACE_MATCH,
    chat_template_tokens,
    prefix_hit,
    run_requests,
    sharegpt_prompts,
    sharegpt_seed0_prompts,
)
from planner.accuracy.loaded_ranges import tabled_percentile
from planner.accuracy.predict import _profile_for, row_scheduler
from planner.accuracy.published import DecodeRow, resolve_gpu_name, resolve_model_name
from planner.catalog import Catalog, default_catalog
from planner.errors import InvalidInputError
from planner.serving.benchmark import request_lengths
from planner.serving.load import FRONTEND_S, Replica, RunTrace, fixed_lengths, latency_under_load

#: A serving run's mean figures, compared beside its percentiles where ``validate_load`` is asked for them (a user's
#: file: one table judges the run): (DecodeRow field, in milliseconds or tok/s x ``scale``).
MEAN_FIGURES = {"ttft_mean_ms": ("ttft_s", 1e3), "tpot_mean_ms": ("tpot_s", 1e3),
                "throughput_tok_s": ("throughput_tokens_per_s", 1.0)}  # fmt: skip

#: Each compared figure: (DecodeRow field, simulated latency, percentile).
FIGURES = {
    f"{metric}_{name}_ms": (f"{metric}_{name}_s", f"{metric}_s", pct)
    for metric in ("ttft", "tpot", "itl")
    for name, pct in (("median", 50), ("p90", 90), ("p95", 95), ("p99", 99))
}
#: The percentiles above the median that the held-out loaded ranges (``planner.accuracy.loaded_ranges``) hold no
#: figures of: each takes p99's range there (``loaded_ranges.tabled_percentile``; too few sources published them).
BORROWED_RANGE = {
    q: f"{q.split('_')[0]}_{tabled_percentile(pct)}" for q, (_, _, pct) in FIGURES.items() if 50 < pct < 99
}


def borrowed_range_note(quantities: Iterable[str]) -> str:
    """One line for ``planner validate``: the p90 / p95 ``quantities`` compared come from the same simulated run as the
    median and p99 and are held to p99's limits, and the held-out loaded range each would take is p99's
    (``BORROWED_RANGE``), none being published for them."""
    shown = ", ".join(f"{q} takes {BORROWED_RANGE[q]}'s" for q in quantities)
    return (
        "p90 and p95 are predicted from the same simulated run as the median and p99 and held to p99's limits; the "
        f"held-out loaded ranges (planner.accuracy.loaded_ranges) hold no p90 or p95 figures: {shown}"
    )


def has_percentiles(row: DecodeRow) -> bool:
    """Whether the row states any of the percentile figures (``FIGURES``)."""
    return any(not math.isnan(getattr(row, field)) for field, _, _ in FIGURES.values())


#: How far a lower percentile of a row may print above a higher one before the row contradicts itself: the
#: rounding of printed figures (a source's "21 ms" median beside its "20.8 ms" p90 is 1% apart), not a run's spread.
ORDER_SLACK = 0.01
#: How many times its p99 a row's mean TTFT or TPOT may be before the row contradicts itself. Over requests,
#: mean <= 0.99 x p99 + 0.01 x max (at most 1% lie above the p99), so a mean of twice the p99 needs the slowest 1% of
#: requests to average over 101 times the p99 (a 2.6 s TPOT in a run whose p99 is 26 ms): a stalled or timed-out
#: request, not one a benchmark client averages in. A unit slip (26,000 typed for 26.0, seconds for milliseconds) is
#: 1,000 times; a decimal point dropped (260 for 26.0) ten.
MEAN_OVER_P99 = 2.0
#: Each quantity's columns, as a CSV names them: its mean (the row's ``statistic``) and its percentiles.
_MEAN_COLUMNS = {"ttft": "ttft_ms", "tpot": "tpot_ms"}


def row_contradiction(row: DecodeRow) -> str:
    """Why the row's own figures cannot come from one run ("ttft_p99_ms 171.9 < ttft_median_ms 489.2: columns
    swapped?"); "" where they can. Checked before a row is scored (``validation.validate_load`` and
    ``validate_time`` list such a row as not scored, out of every error and verdict: trial 28 F15).

    The rule, for each of TTFT, TPOT and ITL over the figures the row states (positive ones; ``ORDER_SLACK`` of
    rounding allowed):

    - its percentiles never fall: median (p50) <= p90 <= p95 <= p99. A lower percentile above a higher one is
      impossible in any distribution: two columns swapped, or one typed into the other's cell;
    - its mean (``ttft_ms``, ``tpot_ms``; ITL has none) is at least (1 - q) x its q-th percentile: at least that
      share of requests lie at or above it and none below 0, so a mean under half the median is impossible (seconds
      typed in a millisecond column);
    - its mean is at most ``MEAN_OVER_P99`` times its p99: not impossible in principle (the slowest 1% of requests
      may be any size), but it takes them averaging over 101 times the p99, which no serving run a client averages
      shows; what it does show is a unit slip or a typo (26,000 for 26.0).

    The mean is compared whichever statistic the row says it is (a median passes every bound a mean must), and not
    where that quantity's percentiles are already out of order (the swap is the cause to name).
    """
    found = []
    for metric in ("ttft", "tpot", "itl"):
        stated = [
            (f"{metric}_{name}_ms", pct, getattr(row, f"{metric}_{name}_s") * 1e3)
            for name, pct in (("median", 50), ("p90", 90), ("p95", 95), ("p99", 99))
        ]
        stated = [(col, pct, v) for col, pct, v in stated if math.isfinite(v) and v > 0]
        for i, (low_col, _, low) in enumerate(stated):
            above = [(col, v) for col, _, v in stated[i + 1 :] if low > v * (1 + ORDER_SLACK)]
            if above:  # the first higher percentile it exceeds; each pair named once
                col, v = above[0]
                found.append(f"{col} {_figure(v)} < {low_col} {_figure(low)}: columns swapped?")
        mean_col = _MEAN_COLUMNS.get(metric)
        mean = getattr(row, f"{metric}_s") * 1e3 if mean_col else math.nan
        if not (math.isfinite(mean) and mean > 0) or any(c.startswith(f"{metric}_") for c in found):
            continue  # no mean, or its percentiles already out of order (a mean against swapped columns says no more)
        for col, pct, v in stated:
            share = 1 - pct / 100
            if mean < share * v * (1 - ORDER_SLACK):
                found.append(
                    f"{mean_col} {_figure(mean)} is below {share:.0%} of {col} {_figure(v)} (at least {share:.0%} of "
                    "requests are at or above it): a unit slip (seconds in a millisecond column)?"
                )
                break
        p99 = next((v for col, pct, v in stated if pct == 99), math.nan)
        if mean > MEAN_OVER_P99 * p99:
            found.append(
                f"{mean_col} {_figure(mean)} is {mean / p99:,.0f}x {metric}_p99_ms {_figure(p99)} (a mean over "
                f"{MEAN_OVER_P99:g}x the p99 needs the slowest 1% to average over 101x it): a unit slip or a typo?"
            )
    return "; ".join(found)


def _figure(ms: float) -> str:
    """A figure as the message names it: its digits as typed, thousands with commas (26,000; 489.2; 0.026)."""
    return f"{ms:,.6g}"


def _replica(row: DecodeRow, engine: Any, calibration: Any, catalog: Catalog | None) -> Replica:
    cat = catalog or default_catalog()
    return Replica(
        resolve_gpu_name(row.gpu, cat),
        resolve_model_name(row.model, cat),
        gpus=row.gpus,
        scheduler=row_scheduler(row),
        max_num_seqs=row.max_num_seqs,
        max_num_batched_tokens=row.max_num_batched_tokens,
        chunked_prefill=row.chunked_prefill,
        weight_precision=row.weight_precision,
        kv_precision=row.kv_precision,
        engine=_profile_for(row, engine),
        calibration=calibration,
        catalog=cat,
        parallelism=row.parallelism,
    )


def predict_percentiles(
    row: DecodeRow,
    *,
    engine: Any = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
    frontend_s: float | None = None,
    acceptance_length: float | None = None,
    trace: RunTrace | None = None,
    with_means: bool = False,
) -> dict[str, float]:
    """Each ``FIGURES`` quantity of the row's run, milliseconds, simulated as the run went (module docstring).
    ``frontend_s``: each request's time outside the engine, seconds (None: the fitted value,
    ``planner.accuracy.frontend.FRONTEND_S``). Raises a ``PlannerError`` (its message the reason) when the row
    cannot be predicted. ``acceptance_length``: a speculating row's (None: the middle of its draft's published range,
    ``planner.accuracy.acceptance.acceptance_range``). ``trace``: a ``planner.serving.load.RunTrace`` the run fills
    (its steps, step table and samples, for reading it request by request); None: nothing kept. ``with_means``: also
    the run's mean TTFT and TPOT (``ttft_mean_ms``, ``tpot_mean_ms``) and output rate (``throughput_tok_s``, tok/s),
    the figures ``MEAN_FIGURES`` compares. A run at a rate arrives as its client sent it: gamma gaps of shape
    ``row.burstiness`` (``planner.serving.benchmark.arrival_times_s``, as ``vllm bench serve`` draws them)."""
    if row.kind != "serving":  # a static batch, or a row that does not say how its prompts were sent
        raise InvalidInputError(
            "not a serving run: the kind cell (serving_concurrency, serving_rate or max_throughput) or the batching "
            "cell ('max concurrency 16', 'request rate 8', 'all at once') must say how the client sent its prompts"
        )
    replica = _replica(row, engine, calibration, catalog)
    if row.speculation is not None:
        low, high, draft = acceptance_range(row.speculation, catalog)
        a = (low + high) / 2.0 if acceptance_length is None else acceptance_length
        replica = replace(replica, speculative=speculative_decoding(row.speculation, a, draft))
    front = FRONTEND_S if frontend_s is None else frontend_s
    n = row.num_prompts or max(row.batch, 1)
    inp, out = max(row.input_len, 1) + chat_template_tokens(row), max(row.output_len, 1)
    ratio = row.length_range_ratio
    lengths = run_requests(row)  # a dataset's requests: the same list the row's mean figures are simulated with
    if lengths is None:
        lengths = request_lengths(inp, out, n, ratio) if ratio is not None else fixed_lengths(inp, out, n)
    rate = row.request_rate if row.request_rate is not None and math.isfinite(row.request_rate) else None
    closed = rate is None and row.kind == "serving" and 0 < row.batch < n
    hit = prefix_hit(row)  # a warm run's prompts, or a dataset's shared prefix
    r = latency_under_load(
        replica,
        inp,
        out,
        rate_per_s=rate,
        burstiness=row.burstiness if rate is not None else 1.0,  # the client's gamma shape (1: Poisson)
        concurrency=row.batch if closed else None,
        num_requests=len(lengths),  # every request the run sent (the default is vllm bench serve's 1,000)
        lengths=lengths,
        prefix_hit_rate=hit,
        async_scheduling=row.async_scheduling,
        scheduler_steps=row.scheduler_steps or 1,
        frontend_s=front,
        warm_prompts=row.prompts_cached_first,  # (0 for a row read all warm: ``prefix_hit`` gives its share)
        trace=trace,
    )
    out = {q: getattr(r, latency).at(pct) * 1e3 for q, (_, latency, pct) in FIGURES.items()}
    if with_means:  # the same run's means and output rate (``MEAN_FIGURES``)
        out |= {"ttft_mean_ms": r.ttft_s.mean * 1e3, "tpot_mean_ms": r.tpot_s.mean * 1e3}
        out["throughput_tok_s"] = r.output_tokens_per_s
    return out
