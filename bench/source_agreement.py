"""How far public sources disagree on the same configuration: the error floor no model of the hardware can beat.

    PYTHONPATH=. python bench/source_agreement.py           # the summary, then every group, one line per run
    PYTHONPATH=. python bench/source_agreement.py --brief   # the summary only
    PYTHONPATH=. python bench/source_agreement.py --brief --write-docs   # and docs/accuracy.md's table

Rows: every shipped benchmark row (``planner.accuracy.published.load_decode_rows``: ``perf_public.csv`` and
``decode_public.csv``) and the serving runs under load (``load_public.csv``, as ``bench/load_validation.py`` reads
them), names resolved through the catalog (``resolve_gpu_name``, ``resolve_model_name``: "meta-llama/Llama-3.1-8B-
Instruct" and "Llama 3.1 8B" are one model). A row whose figures cannot be taken as published is left out: a cell
refused by the reader (a multiplier, no lengths), pipeline parallelism or several nodes (the key below does not hold
them). Speculative runs stay, matched only with runs of the same draft settings.

**A run** is one result block: rows of one source group with the same source address and configuration are one run
published twice (its means in ``perf_public.csv``, its medians and p99s in ``load_public.csv``), so a run's mean and
median are never compared as two measurements. **A source** is a held-out fold (``planner.accuracy.holdout.fold_of``:
one document; vLLM's CI builds of one benchmark are one source).

**The same configuration** (``Config``): GPU, model, tensor-parallel size, weight and KV precision (fp16 and bf16 one
16-bit class, a blank cell the model's own), how requests arrived (a static batch of B; at once, B prompts; a client
keeping C in flight; Poisson at R requests/s; the engine's own batch), speculative settings, a warm prefix cache and
the server settings the rows keep (async scheduling, token budget, requests in flight, scheduler steps);
lengths within ``EXACT`` (10%) of each other, each of input and output. Tiers by engine: the same engine and
major.minor release, the same engine at another or unstated release, and any engine. Runs whose lengths are within
``NEAR`` (25%) but not 10% are listed apart as near matches. The TTFT of a run of one prompt at a time is that
prompt's prefill, so its output length is not compared (a TensorRT-LLM 128/1 run's TTFT and an LMDeploy 128/128
run's). "Loosest" lists the pairs left when precision, speculation, engine, checkpoint (one model shape) and the
kind of arrival (B sequences in flight alike) are all relaxed.

**Figures**, per quantity (TPOT, TTFT, output rate): for each group of runs from two or more sources, each source's
figure (the median of its runs in the group), their spread ``max / min - 1`` (the larger of the two readings of
|a / b - 1|) and floor ``(max - min) / (max + min)``: the least worst-case |predicted / published - 1| that any one
prediction can score on every source of the group (the prediction ``2 max min / (max + min)`` scores exactly that
on both ends). Each group uses the statistic its runs share (a mean, else a median); a group whose runs give only
different ones is compared each run's mean, else median, and marked "mean~median"; a ``statistic`` cell that names
one per column (LMDeploy's) is read per column. Within one source, one configuration published by two runs (not one
block printed twice): in two documents of one benchmark (vLLM's CI builds), the run-to-run spread; in one document,
variants whose server settings may differ where the rows do not say, with those at one sequence in flight (where
settings matter least) apart.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from planner.accuracy.holdout import fold_of
from planner.accuracy.published import (
    DecodeRow,
    load_decode_rows,
    read_csv_rows,
    reference_dir,
    resolve_gpu_name,
    resolve_model_name,
    statistic_of,
)
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import parse_version
from planner.errors import PlannerError

#: Lengths within this fraction of each other (each of input and output): the same configuration.
EXACT = 0.10
#: Lengths within this fraction but not ``EXACT``: a near match, listed apart.
NEAR = 0.25
#: The quantities compared: (name, heading, unit multiplier for display, unit).
QUANTITIES = (("tpot", "TPOT", 1e3, "ms"), ("ttft", "TTFT", 1e3, "ms"), ("rate", "output rate", 1.0, "tok/s"))
#: Reader problems that leave a row's published figures as published (the row is only not predicted).
KEPT_PROBLEMS = ("speculative decoding", "throughput left out", "num_prompts not stated")
#: Precisions one class apart in speed: 16-bit floats.
SIXTEEN_BIT = {"fp16", "bf16", "float16", "bfloat16", "half"}


def precision_class(name: str | None, default: str) -> str:
    """A precision for matching: ``default`` (the model's own) for a blank cell; fp16 and bf16 as "16-bit"."""
    text = (name or default or "").lower()
    return "16-bit" if text in SIXTEEN_BIT else text


def release(version: str) -> str:
    """The major.minor release of an ``engine_version`` cell ("v0.11.0 (the document's ...)" -> "0.11"); "" when the
    cell says it was not stated or logged, or has no number."""
    text = str(version or "").strip().lower()
    if text.startswith(("not ", "unknown")) or not text:
        return ""
    parsed = parse_version(text)
    return ".".join(map(str, parsed.release[:2])) if parsed else ""


def arrival(row: DecodeRow) -> tuple:
    """How a run's requests arrived, for matching: ("static", B), ("burst", B) (B prompts at once), ("closed", C)
    (a client keeping C in flight), ("rate", R) (Poisson at R requests/s), ("engine batch",) (the engine's own)."""
    if row.kind == "static":
        return ("static", row.batch)
    if row.request_rate is not None:
        return ("rate", round(row.request_rate, 3))
    if row.batch < 1:
        return ("engine batch",)
    return ("burst", row.batch) if (row.num_prompts or 0) <= row.batch else ("closed", row.batch)


def arrival_text(a: tuple) -> str:
    return {"static": "static B={}", "burst": "burst B={}", "closed": "closed C={}", "rate": "rate {}/s"}.get(
        a[0], a[0]
    ).format(*a[1:])


@dataclass(frozen=True)
class Config:
    """What two runs must share to be the same configuration, but their lengths and engine (matched by tier)."""

    gpu: str
    model: str
    tp: int
    weight: str
    kv: str
    arrival: tuple
    speculation: str
    warm_prefix: bool
    #: the server settings the rows keep where its command states them (``DecodeRow``): vLLM's async scheduling,
    #: the token budget of a step, the requests in flight, multi-step scheduling
    server: tuple = ()

    def text(self) -> str:
        spec = f" spec {self.speculation}" if self.speculation else ""
        warm = " warm prefix" if self.warm_prefix else ""
        names = ("async", "budget", "max seqs", "steps")
        server = "".join(f" {n} {v}" for n, v in zip(names, self.server, strict=False) if v)
        return (
            f"{self.gpu} x{self.tp} {self.model} w {self.weight} kv {self.kv} {arrival_text(self.arrival)}"
            f"{spec}{warm}{server}"
        )


@dataclass
class Run:
    """One result block: its rows' ids, source, engine and lengths, and its figures per quantity and statistic."""

    ids: list[str]
    source: str
    source_group: str
    address: str
    config: Config
    engine: str
    release: str
    input_len: int
    output_len: int
    num_prompts: int | None
    #: quantity -> statistic ("mean", "median", "" not said) -> value (seconds; tokens/s for "rate")
    figures: dict[str, dict[str, float]] = field(default_factory=dict)

    def label(self) -> str:
        return "+".join(self.ids)


def column_statistics(cell: str) -> dict[str, str]:
    """The statistic a ``statistic`` cell names per column, where it names columns ("tpot_ms: median per-token latency
    ...; ttft_ms: FTL(ave)" -> tpot "median", ttft "mean": LMDeploy's static benchmark prints the first-token latency's
    average and the per-token latency's percentiles), each read by ``statistic_of``; {} for a cell naming none (the
    row's one ``DecodeRow.statistic`` then holds for both)."""
    out = {}
    for part in str(cell or "").split(";"):
        hit = re.match(r"\s*(tpot|ttft)_ms\s*:\s*(.*)", part)
        if hit:
            out[hit.group(1)] = statistic_of(hit.group(2))
    return out


def shipped_column_statistics() -> dict[str, dict[str, str]]:
    """``column_statistics`` of every shipped row whose ``statistic`` cell names columns, by record id (the one cell
    ``DecodeRow`` reads as a single statistic for the row)."""
    out = {}
    for path in sorted(reference_dir().glob("*_public.csv")):
        for r in read_csv_rows(path):
            found = column_statistics(r.get("statistic", ""))
            if found and r.get("record_id"):
                out[r["record_id"]] = found
    return out


def _figures(row: DecodeRow, stats: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """A row's published figures: its mean-or-median TPOT and TTFT (``row.statistic``, or ``stats`` per quantity where
    the row's cell names one per column), the medians of the percentile columns, the output rate (a total over the
    run, no statistic)."""
    stats = stats or {}
    out: dict[str, dict[str, float]] = {}

    def put(q: str, stat: str, value: float) -> None:
        if value is not None and math.isfinite(value) and value > 0:
            out.setdefault(q, {})[stat] = value

    put("tpot", stats.get("tpot", row.statistic), row.tpot_s)
    put("ttft", stats.get("ttft", row.statistic), row.ttft_s)
    put("tpot", "median", row.tpot_median_s)
    put("ttft", "median", row.ttft_median_s)
    put("rate", "total", row.throughput_tokens_per_s)
    return out


def kept(row: DecodeRow) -> bool:
    """Whether a row's figures are taken as published (``KEPT_PROBLEMS``; see the module docstring)."""
    return not row.problem or row.problem.startswith(KEPT_PROBLEMS)


def runs_of(
    rows: Iterable[DecodeRow],
    catalog: Catalog | None = None,
    column_stats: dict[str, dict[str, str]] | None = None,
) -> tuple[list[Run], dict[str, int]]:
    """The rows as runs (one per result block: same source group, address and configuration, lengths equal; each
    figure under its statistic, ``column_stats`` by record id where a row's cell names one per column), and the
    rows left out, counted by why: "not as published" (``kept``), "not in the catalog" (GPU or model), "without TPOT, TTFT or output rate"."""
    cat = catalog or default_catalog()
    runs: dict[tuple, Run] = {}
    left = {"not as published": 0, "not in the catalog": 0, "without TPOT, TTFT or output rate": 0}
    for r in rows:
        if not kept(r):
            left["not as published"] += 1
            continue
        try:
            gpu, model = resolve_gpu_name(r.gpu, cat), resolve_model_name(r.model, cat)
        except PlannerError:
            left["not in the catalog"] += 1
            continue
        native = cat.model(model).native_precision
        weight = precision_class(r.weight_precision, native)
        kv = precision_class(r.kv_precision, native if weight in ("16-bit", "fp32") else "bf16")
        spec = r.speculation
        spec_text = f"{spec.algorithm}/{spec.num_steps}/{spec.topk}/{spec.num_draft_tokens}" if spec else ""
        server = (r.async_scheduling, r.max_num_batched_tokens, r.max_num_seqs, r.scheduler_steps)
        config = Config(gpu, model, r.gpus, weight, kv, arrival(r), spec_text, r.prompts_cached, server)
        figures = _figures(r, (column_stats or {}).get(r.record_id))
        if not figures:
            left["without TPOT, TTFT or output rate"] += 1
            continue
        key = (r.source_group, r.source, config, r.engine, release(r.engine_version), r.input_len, r.output_len)
        run = runs.get(key)
        if run is None:
            runs[key] = Run(
                [r.record_id], fold_of(r), r.source_group, r.source, config, r.engine, release(r.engine_version),
                r.input_len, r.output_len, r.num_prompts, figures,
            )  # fmt: skip
        else:
            run.ids.append(r.record_id)
            for q, by_stat in figures.items():
                run.figures.setdefault(q, {}).update(by_stat)
    return list(runs.values()), left


#: Arrivals of one prompt at a time: their TTFT is one prompt's prefill, whatever the output length.
SINGLE_PROMPT = (("static", 1), ("burst", 1), ("closed", 1))


def length_gap(a: Run, b: Run, quantity: str) -> float:
    """The larger relative gap of the two runs' lengths (max / min - 1 of input, and of output where it matters: not
    for the TTFT of a run of one prompt at a time, one prompt's prefill)."""
    pairs = [(a.input_len, b.input_len)]
    if not (quantity == "ttft" and a.config.arrival in SINGLE_PROMPT):
        pairs.append((a.output_len, b.output_len))
    gaps = [max(x, y) / min(x, y) - 1 if min(x, y) > 0 else (0.0 if x == y else math.inf) for x, y in pairs]
    return max(gaps)


def tier_of(a: Run, b: Run) -> str:
    """ "release" (same engine and major.minor, both stated), "engine" (same engine), or "any" (engines differ)."""
    if a.engine != b.engine:
        return "any"
    return "release" if a.release and a.release == b.release else "engine"


#: Tiers by engine, each looser than the one before: a pair of a tier belongs to every later one.
TIERS = ("release", "engine", "any")
TIER_TEXT = {
    "release": "same engine and major.minor release",
    "engine": "same engine, any release",
    "any": "any engine (engine-agnostic)",
}


@dataclass(frozen=True)
class Group:
    """Runs measuring one configuration, compared on one quantity: from two or more sources (``members`` are the
    sources, each the median of its runs' figures), or from one source (``members`` are the runs)."""

    quantity: str
    tier: str  # the tier its pairs were matched at ("release", "engine" or "any")
    near: bool  # some pair's lengths are beyond EXACT (within NEAR)
    statistic: str  # "mean", "median", "total" (a rate), "" (not said), or "mean~median" (mixed)
    runs: tuple[Run, ...]
    run_values: tuple[float, ...]  # each run's figure (seconds; tokens/s for a rate)
    values: tuple[float, ...]  # what is compared: one per source (across sources) or per run (within one)

    @property
    def spread(self) -> float:
        """max / min - 1 of the compared figures."""
        return max(self.values) / min(self.values) - 1

    @property
    def floor(self) -> float:
        """(max - min) / (max + min): the least worst-case |predicted / published - 1| one prediction scores on all."""
        hi, lo = max(self.values), min(self.values)
        return (hi - lo) / (hi + lo)

    @property
    def engines(self) -> str:
        return "/".join(sorted({r.engine for r in self.runs}))

    @property
    def documents(self) -> int:
        return len({r.source_group for r in self.runs})


def shared_statistic(runs: Sequence[Run], quantity: str) -> tuple[str, tuple[float, ...]] | None:
    """The statistic every run gives for the quantity, preferring a mean (then median, then not said); else, where
    each run gives some figure, "mean~median" with each run's own (its mean where it has one)."""
    have = [r.figures.get(quantity, {}) for r in runs]
    if not all(have):
        return None
    for stat in ("total", "mean", "median", ""):
        if all(stat in h for h in have):
            return stat, tuple(h[stat] for h in have)
    order = ("mean", "median", "")
    return "mean~median", tuple(next(h[s] for s in order if s in h) for h in have)


def printed_twice(a: Run, b: Run) -> bool:
    """Whether two runs of one source give the same figures on every quantity and statistic they share (to 0.05%):
    one result block printed twice in the document, not two runs."""
    shared = [(q, st) for q in a.figures for st in a.figures[q] if st in b.figures.get(q, {})]
    return bool(shared) and all(abs(a.figures[q][st] / b.figures[q][st] - 1) < 5e-4 for q, st in shared)


def groups(runs: Sequence[Run], tier: str = "any", *, across_sources: bool = True) -> list[Group]:
    """Groups of runs that measure the same configuration (``Config`` equal), per quantity: the connected sets of
    matching pairs, a pair being two runs of different sources (``across_sources=False``: two runs of one source, not
    one block printed twice), matched at ``tier`` or a tighter one (``tier_of``), lengths within ``EXACT`` (``near``
    False) or within ``NEAR`` with some pair beyond ``EXACT`` (``near`` True)."""
    out = []
    by_config: dict[Config, list[Run]] = {}
    for r in runs:
        by_config.setdefault(r.config, []).append(r)
    allowed = TIERS[: TIERS.index(tier) + 1]
    for quantity, *_ in QUANTITIES:
        for members in by_config.values():
            pairs = [
                (a, b, length_gap(a, b, quantity))
                for a, b in itertools.combinations([r for r in members if quantity in r.figures], 2)
                if (a.source != b.source) == across_sources
                and tier_of(a, b) in allowed
                and (across_sources or not printed_twice(a, b))
            ]
            for near in (False, True):
                edges = [(a, b) for a, b, gap in pairs if gap <= (NEAR if near else EXACT)]
                for component in _components(edges):
                    inside = [gap for a, b, gap in pairs if gap <= NEAR and any(a is x for x in component)]
                    if near and max(inside) <= EXACT:
                        continue  # every pair within EXACT: listed with the exact matches
                    stat = shared_statistic(component, quantity)
                    if stat is None:
                        continue
                    values = stat[1]
                    if across_sources:  # one figure per source: the median of its runs'
                        by_source: dict[str, list[float]] = {}
                        for run, v in zip(component, stat[1], strict=True):
                            by_source.setdefault(run.source, []).append(v)
                        values = tuple(statistics.median(v) for v in by_source.values())
                    out.append(Group(quantity, tier, near, stat[0], tuple(component), stat[1], values))
    return out


def _components(edges: list[tuple[Run, Run]]) -> list[list[Run]]:
    """Connected sets of runs joined by ``edges``, each in first-seen order."""
    seen: list[list[Run]] = []
    for a, b in edges:
        hit = [c for c in seen if any(x is a or x is b for x in c)]
        merged = [x for c in hit for x in c]
        for x in (a, b):
            if not any(y is x for y in merged):
                merged.append(x)
        seen = [c for c in seen if not any(c is h for h in hit)] + [merged]
    return seen


def summary_line(title: str, chosen: Sequence[Group]) -> str:
    """One line: groups, runs, median / worst spread and floor (and how many groups compare a mean with a median)."""
    if not chosen:
        return f"  {title:<66}{'none':>4}"
    spreads = [g.spread for g in chosen]
    floors = [g.floor for g in chosen]
    mixed = sum(1 for g in chosen if g.statistic == "mean~median")
    runs = {id(r) for g in chosen for r in g.runs}
    return (
        f"  {title:<66}{len(chosen):>4} ({len(runs):>3} runs) spread {statistics.median(spreads):6.1%} / "
        f"{max(spreads):6.1%}   floor {statistics.median(floors):5.1%} / {max(floors):5.1%}"
        + (f"   ({mixed} mean~median)" if mixed else "")
    )


#: Model fields that do not change a step's work: names, sources and notes, the longest context served.
NOT_SHAPE = {"name", "aliases", "source", "notes", "hf_id", "family", "max_context", "published_params_source"}


def shape_of(model: str, catalog: Catalog) -> tuple:
    """A catalog model's tensor shapes and precisions (every field but ``NOT_SHAPE``): Llama-3.1-70B and
    Llama-3.3-70B have one shape."""
    return tuple((k, repr(v)) for k, v in catalog.model(model).model_dump().items() if k not in NOT_SHAPE)


def in_flight(a: tuple) -> tuple:
    """An arrival by the sequences it keeps in flight: a static batch, a burst and a closed loop of B alike."""
    return ("in flight", a[1]) if a[0] in ("static", "burst", "closed") else a


def loosest_pairs(runs: Sequence[Run], catalog: Catalog | None = None) -> list[tuple[Run, Run, str]]:
    """Pairs of runs from different sources that share only GPU, tensor-parallel size, a model shape (``shape_of``),
    the sequences in flight (``in_flight``) and a figure, with lengths within ``NEAR``, whatever their precision,
    speculation and engine, and that no group of ``groups`` holds: the nearest the rows come to a same-configuration
    comparison beyond it. Each with the quantities it shares."""
    cat = catalog or default_catalog()
    shapes = {r.config.model: shape_of(r.config.model, cat) for r in runs}
    out = []
    for a, b in itertools.combinations(runs, 2):
        ca, cb = a.config, b.config
        if a.source == b.source or (ca.gpu, ca.tp, shapes[ca.model], in_flight(ca.arrival)) != (
            cb.gpu, cb.tp, shapes[cb.model], in_flight(cb.arrival)
        ):  # fmt: skip
            continue
        shared = [q for q, *_ in QUANTITIES if q in a.figures and q in b.figures and length_gap(a, b, q) <= NEAR]
        if shared and not (ca == cb and all(length_gap(a, b, q) <= NEAR for q in shared)):
            out.append((a, b, ",".join(shared)))
    return out


def loosest_lines(pairs: Sequence[tuple[Run, Run, str]]) -> list[str]:
    """Each loosest pair: both runs' configurations, engines and lengths, and the ratio of each shared figure."""
    lines = []
    for a, b, shared in pairs:
        ratios = []
        for q in shared.split(","):
            stat = shared_statistic([a, b], q)
            if stat is not None:
                ratios.append(f"{q} {stat[1][0] / stat[1][1]:.3f} ({stat[0]})")
        for run in (a, b):
            lines.append(
                f"    {run.label():<14} {run.source[:30]:<31}{run.engine:<13}{run.release or '?':<6}"
                f"{run.config.text()} {run.input_len}/{run.output_len}"
            )
        lines.append(f"      first / second: {', '.join(ratios)}")
    return lines


def summary(by_tier: dict[str, list[Group]], repeats: Sequence[Group]) -> list[str]:
    """Per quantity, reach (exact, near) and tier: groups, runs, median / worst spread (max / min - 1) and floor."""
    lines = [
        "Groups of runs from different sources on one configuration (median / worst over groups):",
        "  spread = max / min - 1 of the group's figures; floor = (max - min) / (max + min), the least worst-case",
        "  |predicted / published - 1| any one prediction scores on every run of the group.",
    ]
    for quantity, heading, *_ in QUANTITIES:
        lines.append(f"{heading}:")
        for near in (False, True):
            reach = f"near (within {NEAR:.0%}, not {EXACT:.0%})" if near else f"lengths within {EXACT:.0%}"
            for tier in TIERS:
                chosen = [g for g in by_tier[tier] if g.quantity == quantity and g.near == near]
                lines.append(summary_line(f"{reach}: {TIER_TEXT[tier]}", chosen))
    lines += [
        "",
        f"Within one source, one configuration (lengths within {EXACT:.0%}) published by two runs, same engine:",
        "  separate documents of one benchmark (vLLM's CI builds): run-to-run spread",
    ]
    for quantity, heading, *_ in QUANTITIES:
        chosen = [g for g in repeats if g.quantity == quantity and not g.near and g.documents > 1]
        lines.append(summary_line(f"  {heading}", chosen))
    lines.append(
        "  one document, every field read equal; its runs may differ in server settings the rows do not keep "
        "(memory share, attention backend, scheduler flags): variants, not repeats"
    )
    for quantity, heading, *_ in QUANTITIES:
        chosen = [g for g in repeats if g.quantity == quantity and not g.near and g.documents == 1]
        lines.append(summary_line(f"  {heading}", chosen))
        single = [g for g in chosen if g.runs[0].config.arrival in SINGLE_PROMPT]
        lines.append(summary_line("    of which one sequence in flight (settings matter least)", single))
    return lines


def group_lines(found: Sequence[Group]) -> list[str]:
    """Every group, one line per run: its ids, source, engine and release, lengths, prompts, the figure."""
    lines = []
    units = {q: (m, u) for q, _, m, u in QUANTITIES}
    for g in sorted(found, key=lambda g: (QUANTITIES.index(next(x for x in QUANTITIES if x[0] == g.quantity)),
                                          g.near, -g.spread)):  # fmt: skip
        m, unit = units[g.quantity]
        reach = "near" if g.near else "exact"
        lines.append(
            f"{g.quantity} [{reach}, {g.engines}, {g.statistic or 'not said'}] {g.runs[0].config.text()}: "
            f"spread {g.spread:.1%}, floor {g.floor:.1%}"
        )
        for run, value in zip(g.runs, g.run_values, strict=True):
            stat = next((s for s, v in run.figures[g.quantity].items() if v == value), "")
            lines.append(
                f"    {run.label():<26} {run.source[:34]:<35}{run.engine:<13}{run.release or '?':<6}"
                f"{run.input_len:>6}/{run.output_len:<6} N={run.num_prompts or '-':<6}{value * m:10.4g} {unit} "
                f"({stat or 'not said'})"
            )
    return lines


#: The block of docs/accuracy.md that ``--write-docs`` rewrites and tests/test_source_agreement.py checks.
DOC_BLOCK = ("<!-- agreement:summary -->\n", "<!-- /agreement:summary -->\n")


def _cell(chosen: Sequence[Group], attr: str) -> str:
    values = [getattr(g, attr) for g in chosen]
    return f"{statistics.median(values):.1%} / {max(values):.1%}" if values else "-"


def summary_markdown(by_tier: dict[str, list[Group]], repeats: Sequence[Group], runs: Sequence[Run]) -> str:
    """The figures as docs/accuracy.md states them: the runs and sources read, then per comparison, groups (runs),
    median / worst spread and floor."""
    lines = [
        f"{len(runs)} runs (result blocks) from {len({r.source for r in runs})} sources:",
        "",
        "| comparison | quantity | groups (runs) | spread: median / worst | floor: median / worst |",
        "| --- | --- | --- | --- | --- |",
    ]

    def row(label: str, heading: str, chosen: Sequence[Group], always: bool = False) -> None:
        runs = len({id(r) for g in chosen for r in g.runs})
        if chosen or always:
            lines.append(
                f"| {label} | {heading} | {len(chosen)} ({runs}) | {_cell(chosen, 'spread')} | "
                f"{_cell(chosen, 'floor')} |"
            )

    for near in (False, True):  # any engine always (it holds every tighter tier's groups); a tighter one if any
        reach = f"lengths within {NEAR:.0%}, not {EXACT:.0%}" if near else f"lengths within {EXACT:.0%}"
        for quantity, heading, *_ in QUANTITIES:
            for tier in reversed(TIERS):
                chosen = [g for g in by_tier[tier] if g.quantity == quantity and g.near == near]
                row(f"two sources, {reach}, {TIER_TEXT[tier]}", heading, chosen, always=tier == "any")
    for quantity, heading, *_ in QUANTITIES:  # within one source: the comparisons that have groups
        exact = [g for g in repeats if g.quantity == quantity and not g.near]
        row("one source, two documents (vLLM CI builds): run to run", heading, [g for g in exact if g.documents > 1])
        one = [g for g in exact if g.documents == 1]
        row("one document, one sequence in flight (settings matter least)", heading,
            [g for g in one if g.runs[0].config.arrival in SINGLE_PROMPT])  # fmt: skip
        row("one document, any load (server settings may differ: variants)", heading, one)
    return "\n".join(lines) + "\n"


def write_docs_summary(
    by_tier: dict[str, list[Group]],
    repeats: Sequence[Group],
    runs: Sequence[Run],
    doc: Path = Path(__file__).parents[1] / "docs" / "accuracy.md",
) -> Path:
    """Rewrite docs/accuracy.md's ``DOC_BLOCK`` with ``summary_markdown``."""
    text = doc.read_text(encoding="utf-8")
    start, end = DOC_BLOCK
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(head + start + summary_markdown(by_tier, repeats, runs) + end + tail, encoding="utf-8")
    return doc


def all_runs(catalog: Catalog | None = None) -> tuple[list[Run], int, dict[str, int]]:
    """Every shipped row (``load_decode_rows()`` and ``load_public.csv``) as runs; rows read; rows left out, by why."""
    rows = load_decode_rows() + load_decode_rows(reference_dir() / "load_public.csv")
    runs, left = runs_of(rows, catalog, shipped_column_statistics())
    return runs, len(rows), left


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brief", action="store_true", help="the summary only, not every group")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/accuracy.md's table")
    args = parser.parse_args(argv[1:])
    runs, read, left = all_runs()
    by_tier = {tier: groups(runs, tier) for tier in TIERS}
    found = by_tier["any"]
    repeats = groups(runs, "engine", across_sources=False)
    why = ", ".join(f"{n} {k}" for k, n in left.items())
    head = [
        f"{read} rows read, {sum(left.values())} left out ({why}); {len(runs)} runs (result blocks) from "
        f"{len({r.source for r in runs})} sources"
    ]
    loose = loosest_pairs(runs)
    lines = head + [""] + summary(by_tier, repeats)
    lines += [
        "",
        f"Loosest: {len(loose)} pair(s) of runs from different sources in no group above that share GPU, tensor-parallel "
        f"size, model shape (checkpoints alike) and sequences in flight (a static batch, burst or closed loop of B "
        f"alike), lengths within {NEAR:.0%}, whatever their precision, speculation and engine"
        + (":" if loose else "."),
    ] + loosest_lines(loose)
    if not args.brief:
        lines += ["", "Groups across sources:"] + group_lines(found)
        lines += ["", "Within one source:"] + group_lines(repeats)
    print("\n".join(lines))
    if args.write_docs:
        print(f"wrote {write_docs_summary(by_tier, repeats, runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
