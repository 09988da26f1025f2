"""Serving runs under load: predicted / published - 1 of median and p99 TTFT and TPOT (and ITL), per engine and GPU.

    python bench/load_validation.py [runs.csv]
    python bench/load_validation.py --worst 15   # and the 15 worst figures, one line each
    python bench/load_validation.py --timeline LD074 LD068   # each run's simulated requests and token gaps beside
                                                     # what its published p99s imply (``timeline_lines``)
    python bench/load_validation.py --serial-front-end   # one front-end process preparing requests in turn (s112)
    python bench/load_validation.py --bootstrap [N]  # each 'all' median / worst with its 90% interval over N (1,000)
                                                     # resamples of whole sources (planner.accuracy.bootstrap)
    python bench/load_validation.py --classes   # the median TTFT's signed errors classed by regime (class_lines)
    python bench/load_validation.py --write-loaded-residuals   # catalogs/reference/loaded_residuals.csv (~20 s):
                                                     # the stated range under load (planner.accuracy.loaded_ranges)

Rows: ``catalogs/reference/load_public.csv`` (or a file in the same columns). Each run is simulated as it went
(``planner.accuracy.under_load``); the step times come from the operator model, and the one term fitted on these rows,
the per-request front-end time (``planner.accuracy.frontend``), predicts each source with the value fitted on the
other sources only. One line per engine and GPU: runs, sources, then for each figure the median and worst
|error| over its runs, the share of figures predicted, and the reasons for the rows not predicted. The issue's
limits: medians within 15% median / 40% worst, p99s within 20% / 50%, at least 90% of the figures predicted. Runs
served with speculative decoding are predicted at their draft's public acceptance length
(``catalogs/reference/speculative_acceptance.csv``, never fitted to these runs): the table compares the middle of a
published range, and a last section lists each such run's TPOT and ITL medians at the range's two ends.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import NamedTuple

import numpy as np

from planner.accuracy.published import load_decode_rows, reference_dir, resolve_model_name
from planner.accuracy.validation import validate_load
from planner.errors import PlannerError
from planner.serving.simulate import weighted_percentile

#: The figures in the table, in order: (quantity, column heading).
COLUMNS = (
    ("ttft_median_ms", "TTFT p50"),
    ("ttft_p99_ms", "TTFT p99"),
    ("tpot_median_ms", "TPOT p50"),
    ("tpot_p99_ms", "TPOT p99"),
    ("itl_median_ms", "ITL p50"),
    ("itl_p99_ms", "ITL p99"),
)


def _cell(errors: list[float]) -> str:
    return f"{statistics.median(errors):4.0%} /{max(errors):5.0%}" if errors else "     n/a    "


def summarise(rows, checks) -> list[str]:
    """The table's lines: one per (engine, GPU), then an all-rows line, then the reasons for refusals."""
    by_id = {r.record_id: r for r in rows}
    groups: dict[tuple[str, str], dict] = {}
    for c in checks:
        r = by_id[c.record_id]
        key = (r.engine, r.gpu.split("(")[0].strip())
        g = groups.setdefault(key, {"runs": set(), "sources": set(), "errors": {}, "n": 0, "missing": 0})
        g["runs"].add(r.record_id)
        g["sources"].add(r.source_group)
        g["n"] += 1
        if math.isnan(c.error):
            g["missing"] += 1
        else:
            g["errors"].setdefault(c.quantity, []).append(abs(c.error))
    head = f"{'engine':<13}{'GPU':<16}{'runs':>5}{'src':>4}" + "".join(f"{h:>13}" for _, h in COLUMNS) + "  predicted"
    lines = [head, " " * 38 + "   (median / worst |predicted / published - 1|)"]
    total = {"runs": set(), "sources": set(), "errors": {}, "n": 0, "missing": 0}
    for (engine, gpu), g in sorted(groups.items()):
        for k in ("runs", "sources"):
            total[k] |= g[k]
        total["n"] += g["n"]
        total["missing"] += g["missing"]
        for q, e in g["errors"].items():
            total["errors"].setdefault(q, []).extend(e)
        lines.append(_line(engine, gpu, g))
    lines.append(_line("all", "", total))
    refused = {c.record_id: c.reason for c in checks if math.isnan(c.error)}
    if refused:
        lines += ["", "Not predicted:"] + [f"  {rid}: {why}" for rid, why in refused.items()]
    spec = [c for c in checks if " spec accept " in c.label and c.quantity in ("tpot_median_ms", "itl_median_ms")]
    if spec:
        lines += ["", "Speculative decoding (acceptance from public sources; predicted at its low-high, published):"]
        for c in spec:
            draft = by_id[c.record_id].speculation
            ends = c.label.split(" spec accept ")[1]
            lines.append(
                f"  {c.record_id} {draft.draft_model:<26} {c.quantity:<15} accept {ends}, {c.published:.3g} ms"
            )
    return lines


def arrival_kind(row) -> str:
    """How the run's requests arrived: "rate" (Poisson at a request rate), "closed" (a client keeping C in flight) or
    "burst" (every prompt at once)."""
    if row.request_rate is not None and math.isfinite(row.request_rate):
        return "rate"
    return "closed" if 0 < row.batch < (row.num_prompts or 0) else "burst"


def signed_lines(rows, checks) -> list[str]:
    """Median signed error (predicted / published - 1) and figures, per engine and arrival kind (``arrival_kind``):
    which way each group is off, where the table above gives only how far."""
    by_id = {r.record_id: r for r in rows}
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}
    for c in checks:
        if not math.isnan(c.error):
            r = by_id[c.record_id]
            groups.setdefault((r.engine, arrival_kind(r)), {}).setdefault(c.quantity, []).append(c.error)
    head = f"{'engine':<13}{'arrival':<16}" + "".join(f"{h:>13}" for _, h in COLUMNS)
    lines = ["Signed (median predicted / published - 1, figures), by engine and arrival:", head]
    for (engine, kind), g in sorted(groups.items()):
        cells = "".join(
            f"{f'{statistics.median(g[q]):+4.0%} ({len(g[q])})' if q in g else 'n/a':>13}" for q, _ in COLUMNS
        )
        lines.append(f"{engine:<13}{kind:<16}{cells}")
    return lines


#: ``class_lines``' bands: (upper bound, label), the last unbounded.
LOAD_BANDS = ((1.3, "no queue (< 1.3x)"), (2.0, "1.3-2x"), (5.0, "2-5x"), (math.inf, "deep queue (>= 5x)"))
PROMPT_BANDS = ((300, "<= 300"), (1000, "301-1,000"), (4000, "1,001-4,000"), (math.inf, "> 4,000"))


def _band(x: float, bands) -> str:
    return "?" if math.isnan(x) else next(label for top, label in bands if x < top)


def run_regimes(row) -> dict[str, str]:
    """The regimes ``class_lines`` classes a run's figures by that need the simulation: its load relative to capacity
    (the simulated median TTFT without a front end over the same run's at one request in flight, ten requests
    of its lengths: 1 where nothing queues) and how its prompt steps launch ("eager": the step table carries a host
    launch floor, ``planner.serving.simulate.StepTable.prefill_host_s``; else "graphed")."""
    from dataclasses import replace

    from planner.accuracy.under_load import predict_percentiles
    from planner.serving.load import RunTrace

    trace = RunTrace()
    try:
        loaded = predict_percentiles(row, frontend_s=0.0, trace=trace)["ttft_median_ms"]
        one = replace(row, batch=1, request_rate=None, num_prompts=10, kind="serving")
        alone = predict_percentiles(one, frontend_s=0.0)["ttft_median_ms"]
        ratio = loaded / alone if alone > 0 else math.nan
    except PlannerError:
        ratio = math.nan
    launch = "eager" if trace.table is not None and trace.table.prefill_host_s > 0 else "graphed"
    return {"load": _band(ratio, LOAD_BANDS), "launch": launch}


def class_lines(rows, checks, quantity: str = "ttft_median_ms") -> list[str]:
    """``quantity``'s signed errors classed by regime, one block per dimension (engine and arrival, GPU, source,
    load relative to capacity, prompt length, dataset or drawn lengths, how prompt steps launch, MLA or not, the
    engine x launch x MLA cross, and MLA or not by GPU and by engine and GPU): figures, median signed and |error|, how many beyond -15% / +15%, and the
    median of published - predicted, milliseconds. Where the headline median comes from (issue 22's house method)."""
    from planner.catalog import default_catalog

    cat = default_catalog()
    by_id = {r.record_id: r for r in rows}
    figs = [c for c in checks if c.quantity == quantity and not math.isnan(c.error)]
    regimes = {rid: run_regimes(by_id[rid]) for rid in {c.record_id for c in figs}}

    def mla(r) -> str:
        try:
            return "MLA" if cat.model(resolve_model_name(r.model, cat)).mla is not None else "not MLA"
        except PlannerError:
            return "?"

    def lengths(r) -> str:
        if r.dataset.lower().startswith("sharegpt"):
            return "ShareGPT"
        return "drawn (range ratio)" if r.length_range_ratio not in (None, 1.0) else "fixed or as published"

    dims = {
        "engine x arrival": lambda r: f"{r.engine} {arrival_kind(r)}",
        "GPU": lambda r: r.gpu.split("(")[0].strip(),
        "source": lambda r: r.source_group,
        "load (simulated TTFT / the same run at 1 in flight)": lambda r: regimes[r.record_id]["load"],
        "prompt tokens": lambda r: _band(float(r.input_len), PROMPT_BANDS),
        "lengths": lengths,
        "prompt steps launch": lambda r: regimes[r.record_id]["launch"],
        "attention": mla,
        "engine x launch x attention": lambda r: f"{r.engine} {regimes[r.record_id]['launch']} {mla(r)}",
        # h-mla (docs/hypotheses/mla-prefill-mechanisms.md): is "MLA" the model or the hosts its runs were served on?
        "GPU x attention": lambda r: f"{r.gpu.split('(')[0].strip()} {mla(r)}",
        "engine x GPU x attention": lambda r: f"{r.engine} {r.gpu.split('(')[0].strip()} {mla(r)}",
    }
    errs = [c.error for c in figs]
    lines = [
        f"{quantity} classed by regime ({len(figs)} figures; all: median signed {statistics.median(errs):+.0%}, "
        f"|error| {statistics.median(abs(e) for e in errs):.0%}, {sum(e < 0 for e in errs)} too fast)",
        f"  {'class':<50}{'figures':>8}{'signed':>8}{'|error|':>8}{'< -15%':>8}{'> +15%':>8}{'gap ms':>9}",
    ]
    for name, key in dims.items():
        lines.append(f"{name}:")
        groups: dict[str, list] = {}
        for c in figs:
            groups.setdefault(key(by_id[c.record_id]), []).append(c)
        for label, cs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            e = [c.error for c in cs]
            gap = statistics.median(c.published - c.published * (1 + c.error) for c in cs)
            lines.append(
                f"  {label[:50]:<50}{len(cs):>8}{statistics.median(e):>+8.0%}{statistics.median(map(abs, e)):>8.0%}"
                f"{sum(x < -0.15 for x in e):>8}{sum(x > 0.15 for x in e):>8}{gap:>+9.1f}"
            )
    return lines


def _line(engine: str, gpu: str, g: dict) -> str:
    share = (g["n"] - g["missing"]) / max(g["n"], 1)
    cells = "".join(f"{_cell(g['errors'].get(q, [])):>13}" for q, _ in COLUMNS)
    return f"{engine:<13}{gpu:<16}{len(g['runs']):>5}{len(g['sources']):>4}{cells}  {share:6.0%} of {g['n']}"


def bootstrap_lines(rows, checks, resamples: int) -> list[str]:
    """Per figure of the table, the 'all' line's median and worst |error| with each one's 90% interval over
    ``resamples`` resamples of whole sources (``planner.accuracy.holdout.fold_of``; ``heldout.bootstrap_line``)."""
    from heldout import bootstrap_line

    from planner.accuracy.holdout import fold_of

    by_id = {r.record_id: r for r in rows}
    lines = ["All rows, by source resample:"]
    for q, heading in COLUMNS:
        qc = [c for c in checks if c.quantity == q]
        errors, sources = [c.error for c in qc], [fold_of(by_id[c.record_id]) for c in qc]
        lines.append(bootstrap_line(errors, sources, resamples, indent=f"  {heading:<9}"))
    return lines


def worst_lines(rows, checks, n: int) -> list[str]:
    """The ``n`` figures furthest off (|predicted / published - 1|), one line each: run, engine and release, GPU and
    group, model, lengths, how its requests arrived, the figure, predicted and published milliseconds, the error."""
    by_id = {r.record_id: r for r in rows}
    done = sorted((c for c in checks if not math.isnan(c.error)), key=lambda c: -abs(c.error))[:n]
    lines = [f"The {len(done)} figures furthest off (predicted / published - 1):"]
    for c in done:
        r = by_id[c.record_id]
        where = f"{r.gpu.split('(')[0].strip()} x{r.gpus}"
        run = f"{arrival_kind(r)} C={r.batch} N={r.num_prompts}" + (
            f" rate={r.request_rate:g}" if r.request_rate else ""
        )
        lines.append(
            f"  {c.record_id:<7} {r.engine:<12} {r.engine_version[:10]:<10} {where:<17} {r.model.split('/')[-1][:24]:<24} "
            f"{r.input_len:>5}/{r.output_len:<5} {run:<24} {c.quantity:<15} {c.published * (1 + c.error):9.1f} "
            f"{c.published:9.1f}  {c.error:+6.0%}"
        )
    return lines


#: ``validate_load``'s quantities by their name in ``planner.accuracy.loaded_ranges``.
LOADED_QUANTITY = {
    "ttft_median_ms": "ttft_p50",
    "ttft_p99_ms": "ttft_p99",
    "tpot_median_ms": "tpot_p50",
    "tpot_p99_ms": "tpot_p99",
    "itl_median_ms": "itl_p50",
    "itl_p99_ms": "itl_p99",
}
#: ``heldout.time_checks``' serving quantities by their name there.
HELDOUT_QUANTITY = {"TTFT": "ttft_mean", "TPOT": "tpot_mean"}


def loaded_figures(load_rows, load_checks, heldout_checks) -> list:
    """The held-out figures under load as ``planner.accuracy.loaded_ranges.LoadedFigure``: each predicted figure of
    ``validate_load`` on ``load_rows`` (``load_checks``) and each predicted serving-run TTFT and TPOT of
    ``heldout.time_checks`` (``heldout_checks``; static batches left out), with measured / predicted - 1, the row's
    arrival (``arrival_of``) and source (``planner.accuracy.holdout.fold_of``). Both checks' errors are predicted /
    published - 1 = e, so measured / predicted - 1 = 1 / (1 + e) - 1."""
    return [f for f, _ in loaded_figure_rows(load_rows, load_checks, heldout_checks)]


def loaded_figure_rows(load_rows, load_checks, heldout_checks) -> list[tuple]:
    """``loaded_figures``, each with its row (``bench/range_coverage.py`` groups them by engine)."""
    from planner.accuracy.holdout import fold_of
    from planner.accuracy.loaded_ranges import LoadedFigure, arrival_of

    by_id = {r.record_id: r for r in load_rows}
    out = []
    for c in load_checks:
        if c.quantity in LOADED_QUANTITY and math.isfinite(c.error):
            r = by_id[c.record_id]
            arrival = arrival_of(r.request_rate, r.batch, r.num_prompts)
            out.append((LoadedFigure(LOADED_QUANTITY[c.quantity], arrival, fold_of(r), 1 / (1 + c.error) - 1), r))
    for c in heldout_checks:
        r = c["row"]
        if c["q"] in HELDOUT_QUANTITY and r.kind != "static" and math.isfinite(c["planner"]) and c["planner"] > -1:
            arrival = arrival_of(r.request_rate, r.batch, r.num_prompts)
            out.append((LoadedFigure(HELDOUT_QUANTITY[c["q"]], arrival, fold_of(r), 1 / (1 + c["planner"]) - 1), r))
    return out


def shipped_loaded_figures() -> list:
    """``loaded_figures`` of the shipped rows: ``load_public.csv`` and ``bench/heldout.py``'s held-out rows."""
    from heldout import held_out_rows, time_checks

    from planner.accuracy import predict as acc

    load_rows = load_decode_rows(reference_dir() / "load_public.csv")
    return loaded_figures(
        load_rows, validate_load(load_rows).checks, time_checks(held_out_rows(acc.load_decode_rows()))
    )


def write_loaded_residuals(figures) -> str:
    """``catalogs/reference/loaded_residuals.csv`` from ``figures`` (``loaded_residual_table``); its path."""
    import csv

    from planner.accuracy.loaded_ranges import loaded_residual_table, loaded_residuals_file

    table = loaded_residual_table(figures)
    path = loaded_residuals_file()
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    return str(path)


def traced_run(row, front_s: float):
    """The row's run simulated as ``validate_load`` simulates it (front end ``front_s``, seconds; a speculating row at
    the middle of its draft's range), traced: a ``planner.serving.load.RunTrace`` (its steps, step table and
    ``RunResult``)."""
    from planner.accuracy.under_load import predict_percentiles
    from planner.serving.load import RunTrace

    trace = RunTrace()
    predict_percentiles(row, frontend_s=front_s, trace=trace)
    return trace


class TimedRequest(NamedTuple):
    """One simulated request of a traced run (``request_timeline``), milliseconds from the run's start: when it reached
    the engine (``at_engine_ms``: the client's send plus the front end), when the step that made its first token
    started and ended, its TTFT as predicted (front end included), its prompt tokens computed, and that step's
    decoding requests (0: a prefill-only step, SGLang's) and prompt tokens."""

    at_engine_ms: float
    step_start_ms: float
    first_token_ms: float
    ttft_ms: float
    prompt_tokens: int
    step_decoding: int
    step_prompt_tokens: int


def request_timeline(trace: list, front_s: float) -> list[TimedRequest]:
    """Every request of a traced run (``traced_run``'s steps: each ``TracedStep``'s ``firsts``, a cohort of n as n
    requests) in the order they reached the engine; TTFT = first token - arrival at the engine + ``front_s`` (what the simulation
    reports: ``planner.serving.simulate`` shifts every TTFT by the front end)."""
    out = []
    for step in trace:
        end_s = step.start_s + step.dt_s
        for sent_s, n, need in step.firsts:
            out += [
                TimedRequest(
                    sent_s * 1e3, step.start_s * 1e3, end_s * 1e3, (end_s - sent_s + front_s) * 1e3, need, step.batch,
                    step.prefill_tokens,
                )
            ] * n  # fmt: skip
    return sorted(out)


def timeline_lines(row, front_s: float, limit: int = 40) -> list[str]:
    """One run's simulated requests and token gaps beside what its published p99s imply (a diagnosis: nothing fitted).

    Requests (``request_timeline``, the first ``limit`` in the order they reached the engine): when it reached the
    engine, its step's start and its first token (ms from the run's start), its TTFT (front end included, as
    predicted), its prompt tokens, and the step that made its first token (requests decoding in it, prompt tokens in
    it; decoding 0 on SGLang's prefill-only step). Then the slowest requests, and the TTFT p99: with N requests,
    numpy's p99 lies between the two largest (position 0.99 x (N - 1) = 98.01 of 0..99 at N = 100), so the published
    p99 says the second slowest request took nearly that long and the slowest at least that long; how many simulated
    requests reach it. Then the token gaps (ITL): the largest gap values with their counts, and how many gaps of the
    simulated run reach the published p99 against the 1% of all gaps that must. Where the simulated gaps longer than 1.5
    x its median (a prefill beside or before the decodes: one per arrival and stream in a closed loop) outnumber that
    1%, the published p99 is the (1 - 1% / their share)-th percentile of them, so the line gives the simulated gap there
    and how far the published p99 lies from it: what each such gap would need beyond the simulation's.
    """
    traced = traced_run(row, front_s)
    trace, result = traced.steps, traced.run
    timeline = request_timeline(trace, front_s)
    pub = {q: getattr(row, f) * 1e3 for q, f in (("ttft", "ttft_p99_s"), ("itl", "itl_p99_s"))}
    pub50 = {q: getattr(row, f) * 1e3 for q, f in (("ttft", "ttft_median_s"), ("itl", "itl_median_s"))}
    lines = [
        f"{row.record_id} {row.engine} {row.engine_version[:12]} {row.gpu.split('(')[0].strip()} x{row.gpus} "
        f"{row.model.split('/')[-1]} {arrival_kind(row)} C={row.batch} N={row.num_prompts}: {len(timeline)} requests, "
        f"{len(trace)} steps, front end {front_s * 1e3:.1f} ms",
        f"  {'req':>4} {'engine':>9} {'step':>9} {'first':>9} {'TTFT':>8} {'prompt':>7}  its step: decoding, prompt tokens",
    ]
    for i, q in enumerate(timeline[:limit]):
        lines.append(
            f"  {i:>4} {q.at_engine_ms:9.1f} {q.step_start_ms:9.1f} {q.first_token_ms:9.1f} {q.ttft_ms:8.1f} "
            f"{q.prompt_tokens:>7}  {q.step_decoding}, {q.step_prompt_tokens}"
        )
    ttfts = sorted(((q.ttft_ms, i) for i, q in enumerate(timeline)), reverse=True)
    if len(timeline) > limit:
        lines.append(f"  ... {len(timeline) - limit} more")
    lines.append("  slowest: " + ", ".join(f"req {i} {t:.1f} ms" for t, i in ttfts[:5]))
    n = len(ttfts)
    if n and not math.isnan(pub["ttft"]):
        reach = sum(1 for t, _ in ttfts if t >= pub["ttft"])
        sim99 = float(np.percentile([t for t, _ in ttfts], 99))
        lines.append(
            f"  TTFT p99: published {pub['ttft']:.1f} ms (median {pub50['ttft']:.1f}): of {n} requests the two slowest "
            f"took about that or more; simulated p99 {sim99:.1f} ms, {reach} request(s) reach {pub['ttft']:.1f}, "
            f"the two slowest {ttfts[0][0]:.1f} and {ttfts[min(1, n - 1)][0]:.1f} ms"
        )
    samples = result.samples
    if samples is not None and len(samples.itl[0]):
        values, counts = samples.itl
        total = int(counts.sum())
        order = np.argsort(-values)
        top = ", ".join(f"{values[k] * 1e3:.1f} ms x{int(counts[k])}" for k in order[:8])
        lines.append(f"  token gaps (ITL), {total} in all, largest first: {top}")
        median = float(weighted_percentile(samples.itl, 50.0))
        long = values > 1.5 * median  # a step and more: a prefill beside or before the decodes
        if counts[long].sum():
            mid = float(weighted_percentile((values[long], counts[long]), 50.0))
            lines.append(
                f"  gaps over 1.5 x the simulated median ({median * 1e3:.1f} ms): {int(counts[long].sum())} "
                f"({counts[long].sum() / total:.1%}), their median {mid * 1e3:.1f} ms"
            )
        if not math.isnan(pub["itl"]):
            reach = int(counts[values * 1e3 >= pub["itl"]].sum())
            need = math.ceil(0.01 * total)
            line = (
                f"  ITL p99: published {pub['itl']:.1f} ms (median {pub50['itl']:.1f}): about {need} gaps (1%) at or "
                f"above it; simulated {reach} reach it"
            )
            stalled = int(counts[long].sum())
            if stalled >= need:  # the top 1% lies among the long gaps: which of them the published p99 is
                q = 100.0 * (1.0 - need / stalled)
                at = float(weighted_percentile((values[long], counts[long]), q)) * 1e3
                line += (
                    f"; it is percentile {q:.0f} of the long gaps, simulated {at:.1f} ms ({pub['itl'] - at:+.1f} ms)"
                )
            lines.append(line)
    return lines


def print_timelines(rows, run_ids: list[str]) -> int:
    """``timeline_lines`` of each of ``run_ids`` (record ids of ``rows``), each with the front end ``validate_load``
    gives it (fitted on the other sources); 2 and a line naming the unknown ids and the accepted ones when any is
    not a row with percentiles; 1 and a line with the reason for each run the simulation cannot predict (the reason
    ``validate_load`` lists it under "Not predicted" with), the others printed."""
    from planner.accuracy.frontend import frontend_for_rows
    from planner.accuracy.under_load import has_percentiles, speculation_handled
    from planner.errors import PlannerError

    known = {r.record_id: r for r in rows if has_percentiles(r)}
    unknown = [i for i in run_ids if i not in known]
    if unknown:
        print(
            f"error: no run with percentiles named {', '.join(unknown)}; runs are the record ids of the file, "
            f"{min(known)} to {max(known)}"
            if known
            else "error: the file has no run with percentiles",
            file=sys.stderr,
        )
        return 2
    wanted = [known[i] for i in run_ids]
    fronts = frontend_for_rows(rows)
    failed, printed = 0, 0
    for r in wanted:
        reason = "" if speculation_handled(r) else r.problem  # what ``validate_load`` leaves unpredicted, and why
        if not reason:
            try:
                lines = timeline_lines(r, fronts[r.record_id])
            except PlannerError as exc:
                reason = str(exc)
        if reason:
            print(f"error: {r.record_id} is not simulated: {reason}", file=sys.stderr)
            failed = 1
            continue
        print(("\n" if printed else "") + "\n".join(lines))
        printed += 1
    return failed


def main(argv: list[str]) -> int:
    from heldout import add_bootstrap_option, add_serial_front_end_option, use_serial_front_end  # (bench/)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", help="runs CSV [default: catalogs/reference/load_public.csv]")
    parser.add_argument("--worst", type=int, default=0, metavar="N", help="also list the N figures furthest off")
    parser.add_argument(
        "--timeline",
        nargs="+",
        metavar="RUN",
        help="print each named run's simulated requests and token gaps beside what its published p99s imply, and stop "
        "(a runs CSV goes before --timeline)",
    )
    add_serial_front_end_option(parser)
    add_bootstrap_option(parser)
    parser.add_argument(
        "--classes",
        action="store_true",
        help="also class the median TTFT's signed errors by regime (class_lines: engine, GPU, source, load, prompt, "
        "launch, attention); simulates each run twice more",
    )
    parser.add_argument(
        "--write-loaded-residuals",
        action="store_true",
        help="write catalogs/reference/loaded_residuals.csv (planner.accuracy.loaded_ranges) and stop",
    )
    args = parser.parse_args(argv[1:])
    if args.write_loaded_residuals:
        print(f"wrote {write_loaded_residuals(shipped_loaded_figures())}")
        return 0
    use_serial_front_end(args.serial_front_end)
    worst, resamples = args.worst, args.bootstrap
    path = args.runs or reference_dir() / "load_public.csv"
    rows = load_decode_rows(path)
    if args.timeline:
        return print_timelines(rows, args.timeline)
    table = validate_load(rows)
    lines = summarise(rows, table.checks) + [""] + signed_lines(rows, table.checks)
    if resamples:
        lines += [""] + bootstrap_lines(rows, table.checks, resamples)
    if args.classes:
        lines += [""] + class_lines(rows, table.checks)
    print("\n".join(lines + ([""] + worst_lines(rows, table.checks, worst) if worst else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
