"""The text of the recommendation: why this option, what it costs up front and a month, and how sure it is."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from planner.export import own_runs
from planner.export.ownership import ON_PREMISES_LEFT_OUT, RENT_HOURS, capital_terms, quote_text
from planner.units import counted

if TYPE_CHECKING:
    from planner.accuracy.ranges import NoDataFloor
    from planner.export.records import Result
    from planner.export.scenario import Scenario


def usd(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"${x:,.0f}"


def _ms(s: float) -> str:
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


#: What a review says of the TTFT margin beside a range's basis (trial 20, F2: it read "TTFT sized with the same
#: range"); ``loaded_ranges.ttft_borrowed_text`` gives TTFT's own held-out range beside it.
TTFT_BORROWED = "TTFT's margin borrowed from TPOT"


def range_basis(note: str, floor: NoDataFloor | None = None) -> str:
    """``_range_basis`` of ``note``, and where the margin was held to a measured GPU's end (``floor``, the range's
    ``TimeRange.floor``: ``serving_margin.no_data_floor``, trial 33 F10; None: not said), "; held at least as wide as
    H200 SXM 141GB's +202%, the widest GPU measured for SGLang MLA runs" after it."""
    return _range_basis(note) + floor_words(floor)


def floor_words(floor: NoDataFloor | None) -> str:
    """ "; held at least as wide as H200 SXM 141GB's +202%, the widest GPU measured for SGLang MLA runs" where a
    margin was held to a measured GPU's end (``floor``: ``ranges.NoDataFloor``); "" for None."""
    if floor is None:
        return ""
    return f"; held at least as wide as {floor.ends_words}, the widest GPU measured for {floor.runs} runs"


def _range_basis(note: str) -> str:
    """What a sizing range rests on, in a few words, from its note (``serving_margin.margin_range``'s "from 7
    dense-model runs on H100 SXM 80GB + vLLM (held-out TPOT at steady load; sources: a b): ..."): "7 dense-model runs
    on H100 SXM 80GB + vLLM (held-out TPOT at steady load, 2 sources; TTFT's margin borrowed from TPOT)"; a region
    from too few sources, widened (``serving_margin.THIN_WIDENED``): "7 dense-model runs on H100 SXM 80GB + vLLM
    (held-out TPOT at steady load, 2 sources: widened to vLLM dense on every GPU, 21 runs from 5 sources; TTFT's
    margin borrowed from TPOT)"; "its benchmark rows" for a note of another form (the Assumptions sheet gives it
    whole). A GPU's own held-out figures, widened by a pool: "10 published figures on H200 SXM 141GB (2 sources),
    widened to hold 21 dense-model runs on any GPU + vLLM (TTFT's margin borrowed from TPOT)"."""
    from planner.accuracy.serving_margin import DATA_GAP, SIBLING_MARGIN, THIN_WIDENED

    sibling = re.match(rf"(.+?){re.escape(SIBLING_MARGIN)}([\d.]+) either way for (.+?) \(", note)
    if sibling is not None and "'s margin: " in note:  # a sibling part's margin (trial 27 F13), then its own basis
        head = f"{sibling[1]}'s margin moved out x{sibling[2]} for {sibling[3]}, which has no runs of its own ("
        return head + f"{DATA_GAP} {sibling[3]}): " + range_basis(note.split("'s margin: ", 1)[1])
    hit = re.match(r"from (.+?) \((held-out TPOT at steady load); sources: ([^)]*)\)", note)
    if hit is not None:
        n = len(hit[3].split())
        thin = re.search(rf"fewer than \d+: {THIN_WIDENED} (.+?) \((\d+ runs? from \d+ sources?)", note)
        widened = f": {THIN_WIDENED} {thin[1]}, {thin[2]}" if thin else ""
        return f"{hit[1]} ({hit[2]}, {counted(n, 'source')}{widened}; {TTFT_BORROWED})"
    own = re.match(r"held-out residuals of (.+? published figures on [^(;]+?) \(sources: ([^)]*)\)", note)
    if own is None:
        return "its benchmark rows"
    text = f"{own[1]} ({counted(len(own[2].split()), 'source')})"
    pooled = re.search(r"widened to hold the errors of (.+?) \(", note)
    return text + (f", widened to hold {pooled[1]}" if pooled else "") + f" ({TTFT_BORROWED})"


def risk(scenario: Scenario, rec: Result) -> str:
    """How sure the recommendation is: the model's range, the margin used, and what the targets look like under it."""
    w, f = scenario.workload, rec.fleet
    low, high = rec.time_range
    slow = 1 + rec.pessimistic_high
    tp = float(f.tpot_peak_s)
    how = (
        "its pessimistic end"
        if w.latency_margin == "model-range"
        else ("no margin" if not rec.margin else f"a {rec.margin:.0%} margin (workload.latency_margin)")
    )
    held = held_out_coverage(scenario, rec)
    text = (
        f"Risk: measured times fall within {low:+.0%} / {high:+.0%} of the model's predictions on 80% of "
        # with a margin, the sentence after says the TTFT margin is borrowed, with TTFT's own range
        f"{range_basis(rec.time_range_note, rec.time_range_floor).replace(f'; {TTFT_BORROWED}', '' if rec.margin else f'; {TTFT_BORROWED}')}"
        + (f" (widened {rec.time_range_widened})" if rec.time_range_widened else "")
        + (f", the figures it is drawn from; {held}. Sized with {how}" if held else f"; sized with {how}")
        + (f" (+{rec.margin:.0%})" if w.latency_margin == "model-range" else "")
        + f", TPOT at peak is {tp * 1e3:.1f} ms predicted, {tp * slow * 1e3:.1f} ms at the pessimistic end, "
        f"and one high-percentile prompt's TTFT with nothing queued {rec.replica.ttft_s:.2f} s, "
        f"{rec.replica.ttft_s * slow:.2f} s"
        + (
            f"; under load at the peak, simulated p{u.percentile:g} TTFT {u.result.ttft_s.at(u.percentile):.2f} s."
            if (u := rec.under_load) is not None
            else "."
        )
    )
    if tp * slow > w.tpot_target_s * (1 + 1e-9) or rec.replica.ttft_s * slow > w.ttft_target_s:
        text += " At the pessimistic end the targets are missed: set workload.latency_margin to size for it."
    text += own_runs_beyond_margin(rec) + means_only(scenario, rec)
    if rec.margin:  # trial 20, F2: the TTFT goal is cut by TPOT's margin
        from planner.accuracy.loaded_ranges import ttft_borrowed_text

        q = rec.under_load.percentile if rec.under_load is not None else w.sizing_percentile
        text += f" {ttft_borrowed_text(q)}."
    return text


def means_only(scenario: Scenario, rec: Result) -> str:
    """A sentence where the fleet was sized under load with every request at the mean lengths (``sizing_lengths =
    "means"``) while the high lengths describe a spread: those percentiles are not the workload's (trial
    24 F1: 10 replicas met p95 TTFT at the means, 0.64 s, and missed on lognormal lengths of the same means, 2.37 s);
    "" otherwise."""
    w = scenario.workload
    if rec.under_load is None or w.sizing_lengths != "means" or w.simulated_lengths_kind != "means":
        return ""
    if w.prompt_tokens_high <= w.prompt_tokens_mean and w.output_tokens_high <= w.output_tokens_mean:
        return ""
    return (
        " The simulated percentiles are of requests all at the mean lengths: longer prompts, as the high lengths say "
        'there are, queue longer (sizing_lengths = "spread" sizes on lengths drawn around them).'
    )


def own_runs_beyond_margin(rec: Result) -> str:
    """A sentence where most TPOT (or TTFT) figures of the shipped published runs of the very deployment recommended
    (same GPU, model, engine, layout, group and precisions; ``planner.accuracy.same_deployment``) measured slower than
    the margin allows (published / predicted above 1 + margin), at least ``own_runs.OWN_RUNS_LEAST`` of them
    (``own_runs.beyond``); "" otherwise. The margin is drawn from many deployments' held-out runs; this says where the
    deployment's own disagree (trial 24 F13: gpt-oss-120b on 2 x H100, five of seven runs 1.68x-1.95x the prediction
    against a +47% margin), and what to budget says what fleet they call for (trial 26 F18)."""
    allowed = 1 + rec.margin
    parts = [
        f"{sum(x > allowed for x in xs)} of {len(xs)} {metric} figures measured "
        f"{min(x for x in xs if x > allowed):.2f}x to {max(xs):.2f}x the prediction"
        for metric, xs in own_runs.beyond(rec).items()
    ]
    if not parts:
        return ""
    return (
        f" This deployment's own published runs are slower than that margin allows: {' and '.join(parts)} (the "
        f"{'+' + format(rec.margin, '.0%') + ' margin' if rec.margin else 'plan, with no margin,'} allows "
        f"{allowed:.2f}x; Assumptions names the runs): test one replica at its planned load before committing."
    )


def listed(items: list[str], last: str = "and", parted: bool | None = None) -> str:
    """ "a", "a and b", "a, b and c"; where an item holds a comma (an option name) or ``parted``, items are parted by
    semicolons: "H100 buy, Llama; H100 rent, Llama; and H200 rent, Llama"."""
    if len(items) < 2:
        return "".join(items)
    semi = any("," in x for x in items) if parted is None else parted
    return f"{'; '.join(items[:-1])}; {last} {items[-1]}" if semi else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _shares(rows: list, side: str) -> str:
    """Each coverage row's share of figures on ``side`` ("inside", "below", "above"): "33%, 56% and 23%"."""
    return listed([f"{getattr(c, side) / c.figures:.0%}" for c in rows])


def held_out_coverage(scenario: Scenario, rec: Result) -> str:
    """How often ranges like the recommendation's held on published runs from sources they were not drawn from, and
    which way they missed (trial 23, F2: the Risk sentence gave the nominal 80% alone, the Assumptions sheet 59% and
    36%): the TPOT and TTFT prediction ranges' coverage (``ranges.stated_coverage``, the file the Assumptions row "How
    often those uncertainty ranges held" reads) and, where the export's serving margin sizes the fleet
    (``latency_margin = "model-range"`` and a margin above 0), that margin's left out (``ranges.margin_coverage``,
    the same file). "" for a calibration file's own range (the held-out coverage is not that range's) or without the
    file. A time's miss above its range is slower."""
    from planner.accuracy.ranges import margin_coverage, stated_coverage

    if rec.calibration is not None and rec.calibration.has_range:
        return ""
    rows = list(stated_coverage())
    if not rows:
        return ""
    said = listed([f"{c.inside / c.figures:.0%} of {c.figures:,} {c.quantity}" for c in rows]) + " figures"
    margin = margin_coverage() if scenario.workload.latency_margin == "model-range" and rec.margin > 0 else None
    if margin is not None:
        said += (
            f", and the margin that sizes this fleet {margin.inside / margin.figures:.0%} of {margin.figures:,} "
            "steady-load TPOT figures"
        )
        rows.append(margin)
    if all(c.above >= c.below for c in rows):
        miss = f"most misses were slower ({_shares(rows, 'above')} of the figures"
    elif all(c.below > c.above for c in rows):
        miss = f"most misses were faster ({_shares(rows, 'below')} of the figures"
    else:
        miss = f"misses slower / faster: {_shares(rows, 'above')} / {_shares(rows, 'below')} (of the figures"
    return (
        f"on sources it was not drawn from, such ranges held {said} (nominal 80%); {miss}; docs/accuracy.md, 'Do "
        "the ranges hold?')"
    )


def margin_sources(note: str) -> tuple[str, list[str]]:
    """What a sizing range (``Result.time_range_note``) rests on and the sources it names: ("7 dense-model runs on
    H100 SXM 80GB + vLLM", ["gpustack-performance-lab", "sglang-v0.3.0-vs-vllm-v0.6.0"]) for the README example's
    H100 note; ("", []) for a note of another form (a calibration file's)."""
    hit = re.match(r"from (.+?) \(held-out TPOT at steady load; sources: ([^)]*)\)", note or "")
    if hit is None:
        hit = re.match(r"held-out residuals of (.+? published figures on [^(;]+?) \(sources: ([^)]*)\)", note or "")
    return (hit[1], hit[2].split()) if hit else ("", [])


def before_commitment(r: Result) -> str:
    """When a test of one replica must come, in the verb of ``r``'s price kind (trial 26 F11: "before buying" on a
    rented recommendation, where nothing is bought): "before buying" hardware bought (``Money.pricing``
    "purchase"), "before committing" to a rented fleet (on-demand, reserved or spot)."""
    return "before buying" if r.money.pricing == "purchase" else "before committing"


def budget_sentence(scenario: Scenario, rec: Result) -> str:
    """One sentence of the recommendation that ties its risk wording to what the held-out ranges under load say (a
    trial: "+0% margin, -8% / -1%" stood beside a TPOT range past the target and a slow end of +80%, which only the
    end of Summary's second page reconciled): how few runs the margin rests on and from which sources, the simulated
    TPOT and TTFT at peak as published runs from sources planner never saw put them (``held_out.range_text``), the
    fleet at the slow end of those ranges (``Result.slow_end``), and what to budget: the plan's cost if one replica
    measured at its planned load meets the targets, otherwise up to the slow end's. "" without a slow end (an option
    not sized on simulated percentiles, or no ranges table). Where the deployment's own published runs call for
    another fleet (``Result.own_runs``), that sentence instead (``own_runs_budget``)."""
    from planner.accuracy.loaded_ranges import load_loaded_ranges
    from planner.export import held_out
    from planner.export.slow_end import unmet_words

    if own := own_runs_budget(rec):
        return own
    s, sim, w = rec.slow_end, rec.under_load, scenario.workload
    if s is None or sim is None:
        return ""
    runs, sources = margin_sources(rec.time_range_note)
    rests = (
        f"the +{rec.margin:.0%} margin rests on those {runs.split(' on ')[0]} ({', '.join(sources)}); "
        if w.latency_margin == "model-range" and runs
        else ""
    )
    ranges, q = load_loaded_ranges(), sim.percentile
    tpot_ms, ttft_s = float(rec.fleet.tpot_peak_s) * 1e3, sim.result.ttft_s.at(q)
    opened = held_out.open_end_of(rec)  # a replica across nodes: the slow end is a lower bound (planner.deploy)
    tpot = held_out.range_text(tpot_ms, held_out.range_for(ranges, "tpot", q), "ms", opened)
    ttft = held_out.range_text(ttft_s, held_out.range_for(ranges, "ttft", q), "s", opened)
    put = [
        f"{what} at {text} (target {target})"
        for what, text, target in (
            ("TPOT at peak", tpot, f"{w.tpot_target_s * 1e3:g} ms"),
            (f"p{q:g} TTFT", ttft, f"{w.ttft_target_s:.2f} s"),
        )
        if text
    ]
    ranged = f"published runs under load from sources planner never saw put {' and '.join(put)}, and " if put else ""
    missed = _sized_below_the_end(rec, w, tpot_ms, ttft_s, ranges, opened)
    if missed:  # the range's slow end past a target: not what the fleet is sized on (trial 33 F4)
        ranged = ranged.removesuffix(", and ") + f"; {missed}; and "
    plan = usd(rec.monthly_usd)
    test = (
        f"one replica tested at its planned load ({sim.rate_per_replica_s:.3g} requests/s)"
        if not sim.is_burst and math.isfinite(sim.rate_per_replica_s)
        else "one replica tested at its planned load"
    )
    if s.meets and usd(s.monthly_usd) == plan:  # trial 20, F8: no "otherwise up to" the same figure
        text = (
            f"{rests}{ranged}at the slow end {'sized on' if missed else 'of those ranges'} the fleet is the same "
            f"{counted(s.gpus, 'GPU', ',.0f')}: "
            f"budget the plan's {plan} a month, and test one replica at its planned load"
            f"{test.removeprefix('one replica tested at its planned load')} against the targets {before_commitment(rec)}"
        )
        return "What to budget: " + text + "."
    if s.meets:
        at_end = (
            f"at the slow end of those ranges the fleet is {counted(s.gpus, 'GPU', ',.0f')}, {usd(s.monthly_usd)} a "
            f"month ({s.monthly_usd / rec.monthly_usd - 1:+.0%})"
        )
        then = f"otherwise up to {usd(s.monthly_usd)} a month"
    else:
        at_end, then = unmet_words(rec)  # another group size met there named (trial 27 F3)
    if s.meets and s.monthly_usd < rec.monthly_usd:
        # the slow end below the plan (trial 16, F5): no "otherwise up to" a lower figure; as the options table says it
        # (tables._slow_end_below)
        text = (
            f"{rests}{ranged}{at_end}, below the plan: its +{rec.margin:.0%} latency margin is wider than the held-out "
            f"range it is checked against, so budget the plan's {plan} a month, and test one replica at its planned "
            f"load{test.removeprefix('one replica tested at its planned load')} against the targets {before_commitment(rec)}"
        )
        return "What to budget: " + text + "."
    text = f"{rests}{ranged}{at_end}: budget the plan's {plan} a month if {test} meets the targets, {then}."
    return "What to budget: " + text


def _sized_below_the_end(rec: Result, w: Any, tpot_ms: float, ttft_s: float, ranges: Any, opened: str) -> str:
    """Where a figure's held-out range (as ``budget_sentence`` states it) ends past its target, what the slow end the
    fleet is sized on is instead (``Result.slow_end``'s ratio: the range without its one farthest source, or the
    plan's margin): "p95 TTFT's full slow end (4.25 s) would miss the 2.00 s target: the pooled range is stated, not
    sized on; the slow end sized on is x6.41 (1.73 s)"; "" where every stated slow end meets its target (trial 33 F4:
    "at the slow end of those ranges the fleet is the same 40 GPUs" read as meeting 2 s at 4.25 s)."""
    from planner.export import held_out

    s, q = rec.slow_end, rec.under_load.percentile
    out = []
    for metric, what, value, ratio, target, unit, digits in (
        ("tpot", "TPOT at peak", tpot_ms, s.tpot_ratio, w.tpot_target_s * 1e3, "ms", 1),
        ("ttft", f"p{q:g} TTFT", ttft_s, s.ttft_ratio, w.ttft_target_s, "s", 2),
    ):
        b = held_out.bounds(value, held_out.range_for(ranges, metric, q))
        if b is None or b[1] <= target or not math.isfinite(ratio):
            continue
        out.append(
            f"{what}'s full slow end ({'more than ' if opened else ''}{b[1]:,.{digits}f} {unit}) would miss the "
            f"{target:,.{digits}f} {unit} target: that range is stated, not sized on; the slow end sized on is "
            f"x{ratio:.3g} ({value * ratio:,.{digits}f} {unit}; Sensitivity says which runs set it)"
        )
    return "; ".join(out)


def own_runs_budget(rec: Result) -> str:
    """What to budget where most of the recommended deployment's own published TPOT or TTFT figures exceed its margin
    (``planner.export.own_runs``; trial 26 F18: "budget the plan's $10,497" stood beside runs 1.68x-1.95x slower than
    predicted): the fleet and monthly cost sized at those figures' median ratio, to budget until one replica is
    measured at its planned load, then the plan's where it meets the targets. "" where the rule does not apply, or the
    fleet at that ratio costs the plan's (the plan's sentence holds)."""
    own, sim = rec.own_runs, rec.under_load
    plan = usd(rec.monthly_usd)
    if own is None or (own.meets and usd(own.monthly_usd) == plan):
        return ""
    at = (
        f" ({sim.rate_per_replica_s:.3g} requests/s)"
        if sim is not None and not sim.is_burst and math.isfinite(sim.rate_per_replica_s)
        else ""
    )
    runs = (
        f"{own.beyond} of {own.figures} of this deployment's own published {own.metric} figures exceed the "
        f"{'+' + format(rec.margin, '.0%') + ' margin' if rec.margin else 'plan, sized with no margin'} (their median "
        f"{own.ratio:.2f}x the prediction; Assumptions names the runs)"
    )
    if not own.meets:
        return (
            f"What to budget: {runs}, and at that ratio (workload.latency_margin = {own.ratio - 1:.2f}) no fleet of "
            f"this option meets the targets: do not budget the plan's {plan} a month until one replica measured at "
            f"its planned load{at} meets them."
        )
    return (
        f"What to budget: {runs}; sized at that ratio (workload.latency_margin = {own.ratio - 1:.2f}) the fleet is "
        f"{counted(own.gpus, 'GPU', ',.0f')}, {usd(own.monthly_usd)} a month "
        f"({own.monthly_usd / rec.monthly_usd - 1:+.0%} on the plan's {plan}): budget {usd(own.monthly_usd)} "
        f"({counted(own.gpus, 'GPU', ',.0f')}) until one replica is measured at its planned load{at}, and the "
        f"plan's {plan} once it meets the targets there."
    )


#: An option whose fleet at the held-out slow end is this many times its plan's, or that no fleet meets there, is named
#: in the recommendation paragraph (``wide_slow_ends``; trial 23, F3: Options showed the Llama options' 344 GPUs against
#: 48 planned, the Summary discussed only the recommended option, whose slow end adds nothing).
SLOW_END_FAR = 2.0


def _span(values: list[float], spec: str, unit: str = "") -> str:
    """ "2.45x to 3.04x" or "2.38 to 4.55 requests/s" (smallest to largest as formatted; ``unit`` "x" on each, another
    once), or one figure where they format alike."""
    lo, hi = (format(v, spec) for v in (min(values), max(values)))
    if lo == hi:
        return lo + unit
    return f"{lo}{unit} to {hi}{unit}" if unit == "x" else f"{lo} to {hi}{unit}"


def _shortfalls(r: Result, workload) -> list[tuple[float, str, float, float]]:
    """Where the slow end's factor on a simulated figure exceeds what the target allows it (target / simulated): (that
    excess, "p95 TTFT" or "TPOT", the factor, what the target allows), the larger excess first; what sets the option's
    slow-end fleet, read from the plan's simulation without another search."""
    s, sim = r.slow_end, r.under_load
    q = sim.percentile
    out = []
    for what, factor, target, got in (
        (f"p{q:g} TTFT", s.ttft_ratio, workload.ttft_target_s, sim.result.ttft_s.at(q)),
        ("TPOT", s.tpot_ratio, workload.tpot_target_s, sim.result.tpot_s.at(q)),
    ):
        allows = target / got if got > 0 else math.inf
        if factor > allows:
            out.append((factor / allows, what, factor, allows))
    return sorted(out, reverse=True)


def wide_slow_ends(scenario: Scenario, rec: Result, ranked: list[Result]) -> str:
    """The options other than the recommended one whose fleet at the held-out slow end (``Result.slow_end``) is
    ``SLOW_END_FAR`` times their plan's or more, or that no fleet meets there: named with the ratio and monthly cost,
    which factor drives it (``_shortfalls``: the slow end's TTFT or TPOT factor against what the target allows the
    plan's simulated figure) and the one step that narrows it, one replica tested at its planned load, as
    ``budget_sentence`` says for the recommended option. Options not sized (``not_sized``) have no slow end and are
    stated elsewhere. "" where none is."""
    from planner.export.slow_end import other_group_text

    w = scenario.workload
    far = [
        x
        for x in ranked
        if x is not rec
        and x.meets
        and x.slow_end is not None
        and x.under_load is not None
        and (not x.slow_end.meets or x.slow_end.gpus >= SLOW_END_FAR * x.gpus)
    ]
    if not far:
        return ""
    groups: dict[tuple[int, int], list[Result]] = {}
    for x in far:
        if x.slow_end.meets:
            groups.setdefault((x.gpus, x.slow_end.gpus), []).append(x)
    parts = [
        f"{listed([x.option.name for x in xs])} {'needs' if len(xs) == 1 else 'need'} "
        f"{counted(end, 'GPU', ',.0f')} against {plan:,} planned (x{end / plan:.1f}: "
        f"{listed([usd(x.slow_end.monthly_usd) for x in xs], parted=False)} a month)"
        for (plan, end), xs in groups.items()
    ]
    if unmet := [x.option.name for x in far if not x.slow_end.meets and not other_group_text(x)]:
        parts.append(f"no fleet of {listed(unmet, 'or')} meets the targets there")
    parts += [  # another group size of the option met there, named (trial 27 F3)
        f"no fleet of {x.option.name}'s {int(x.replica.gpus)}-GPU replicas meets the targets there, while "
        f"{other_group_text(x)}"
        for x in far
        if not x.slow_end.meets and other_group_text(x)
    ]
    text = f"Other options' held-out slow ends (shown, not applied; Options): {'; '.join(parts)}."
    drivers: dict[str, list[tuple[Result, list]]] = {}
    for x in far:
        if short := _shortfalls(x, w):
            drivers.setdefault(short[0][1], []).append((x, short))
    for what, xs in drivers.items():
        whom = f" for {listed([x.option.name for x, _ in xs])}" if len(drivers) > 1 else ""
        main = [sh[0] for _, sh in xs]
        second = [sh[1] for _, sh in xs if len(sh) > 1]
        text += (
            f" {'Mostly ' if second else ''}{what} drives it{whom}: the slow end puts it at {main[0][2]:.3g}x the simulated "
            f"figure where the {_target(w, what)} target allows {_span([m[3] for m in main], '.3g', 'x')}"
        )
        if second:
            text += (
                f" ({second[0][1]}: {second[0][2]:.3g}x where {_target(w, second[0][1])} allows "
                f"{_span([m[3] for m in second], '.3g', 'x')})"
            )
        text += "."
    rates = [x.under_load.rate_per_replica_s for x in far]
    steady = all(not x.under_load.is_burst and math.isfinite(x.under_load.rate_per_replica_s) for x in far)
    at = f" ({_span(rates, '.3g', ' requests/s')})" if steady else ""
    one = "it" if len(far) == 1 else "each"
    return (
        text
        + f" To narrow it, test one replica of {one} at its planned load{at} and budget its plan if it meets the targets."
    )


def _target(workload, what: str) -> str:
    """The target a shortfall's figure ("p95 TTFT", "TPOT") is held to: "1.50 s", "60 ms"."""
    return _ms(workload.ttft_target_s if "TTFT" in what else workload.tpot_target_s)


def buy_against_rent(scenario: Scenario, rec: Result, ranked: list[Result]) -> str:
    """Where a bought option is recommended over rented ones that meet the targets: what the comparison leaves out
    (``ON_PREMISES_LEFT_OUT``, and the cost of capital where [finance] leaves it at 0) and which way that leans (a
    trial: buying beat renting by $35k a month with maintenance and staff left out, unsaid). "" otherwise."""
    if rec.money.pricing != "purchase" or not any(x.meets and x.money.pricing != "purchase" for x in ranked):
        return ""
    capital = (
        ""
        if scenario.finance.cost_of_capital
        else ", and the capital is free (finance.cost_of_capital 0: set your treasury's rate)"
    )
    return (
        f"Buying is compared with renting on hardware, power and colocation alone: on-premises operating costs "
        f"({ON_PREMISES_LEFT_OUT}) are left out{capital}; they would add to buying alone (a rent includes the "
        "provider's), so they favour renting: price them before booking."
    )


def rent_at_peak_hours(rec: Result, ranked: list[Result]) -> str:
    """Where bought and rented options both meet the targets: that each rented option is costed as ``RENT_HOURS``,
    and the share of that bill an on-demand fleet scaled with the traffic could save at most, 1 - average / peak
    requests/s (the hours the peak fleet is not needed if replicas followed the traffic exactly; not sized: spares,
    whole replicas and start-up time keep a real saving lower). Trial 26 F10: a support chat at 3 of 8 requests/s on
    average was compared buy vs rent with rent's elasticity worth nothing, unsaid. "" otherwise."""
    meeting = [x for x in ranked if x.meets]
    if not (
        any(x.money.pricing == "purchase" for x in meeting) and any(x.money.pricing != "purchase" for x in meeting)
    ):
        return ""
    peak, average = float(rec.peak_rate_per_s), float(rec.average_rate_per_s)
    text = f"Buy against rent: each rented option is costed as {RENT_HOURS}"
    if not (peak > 0 and math.isfinite(average) and 0 <= average < peak):
        return text + "."
    return (
        f"{text}; the average traffic is {average / peak:.0%} of the peak ({average:,.3g} of {peak:,.3g} requests/s), so "
        f"a rented fleet that scaled with the traffic could save at most about {1 - average / peak:.0%} of its bill "
        "(not sized: spares, whole replicas and start-up time keep it lower)."
    )


def differences(a: Result, b: Result) -> list[str]:
    """Every way option ``a`` differs from option ``b`` that changes what is bought or what it answers: 'weights fp8
    (b: bf16)'. Compared: GPU, model, weight and KV precision, engine, price kind, price source and date, group
    size, billing unit, spare replicas and the latency margin."""

    def group(r: Result) -> str:
        return f"{counted(int(r.replica.gpus), 'GPU', ',.0f')} per replica" if r.replica is not None else "no group"

    def quote(r: Result) -> str:
        m = r.money
        return quote_text(m, with_gap=False) or "scenario file"

    pairs = (
        ("GPU", a.gpu.name, b.gpu.name),
        ("model", a.model.name, b.model.name),
        ("weights", a.weights_label, b.weights_label),
        ("KV cache", a.kv_precision, b.kv_precision),
        ("engine", a.engine.name, b.engine.name),
        ("price kind", a.money.price_kind, b.money.price_kind),
        ("price from", quote(a), quote(b)),
        ("tensor-parallel group", group(a), group(b)),
        ("billed in units of", counted(a.money.node_size, "GPU", ""), counted(b.money.node_size, "GPU", "")),
        ("spare replicas", str(a.option.spare_replicas), str(b.option.spare_replicas)),
        ("latency margin", f"+{a.margin:.0%}", f"+{b.margin:.0%}"),
    )
    return [f"{what} {x} (runner-up: {y})" for what, x, y in pairs if x != y]


def cost_tie_words(rec: Result, nxt: Result) -> str:
    """Where the next option ties the recommended one on cost (``slow_end.cost_tied``: the same monthly cost and GPUs),
    why the recommended one was chosen (``review.recommended_first``, the rule ties between groups go by, trial 27
    F3): "is tied on cost with it (24 GPUs, $46,704 a month each); chosen because it meets the targets at the slow
    end of the held-out ranges (48 GPUs, ...) and B200 TP2's fleet does not (not met at the slow end: ...)", or, both
    or neither met there, that scenario order chose; "" without a tie."""
    from planner.export.slow_end import NOT_MET, cost_tied, fleet_text, met_at_slow_end

    if not cost_tied(rec, nxt):
        return ""
    head = (
        f"is tied on cost with it ({counted(int(rec.gpus), 'GPU', ',.0f')}, {usd(rec.monthly_usd)} a month each); "
        "chosen because "
    )
    if rec.slow_end is None or nxt.slow_end is None:  # not known (no ranges table, Little's law): taken as met
        return f"{head}it comes first in the ranking (no slow end of the held-out ranges for both to compare)"
    if met_at_slow_end(rec) and not met_at_slow_end(nxt):
        return (
            f"{head}it meets the targets at the slow end of the held-out ranges ({fleet_text(rec.slow_end, rec)}) "
            f"and {nxt.option.name}'s fleet does not ({NOT_MET})"
        )
    both = "both meet the targets" if met_at_slow_end(nxt) else "neither meets the targets"
    return f"{head}it comes first in the scenario ({both} at the slow end of the held-out ranges)"


def reason(scenario: Scenario, rec: Result, ranked: list[Result]) -> str:
    w = scenario.workload
    f, r = rec.fleet, rec.replica
    load = (
        f"{rec.peak_rate_per_s:,.1f} requests/s"
        if w.by_rate
        else f"{w.peak_concurrent_requests * w.growth_factor:,.0f} concurrent requests"
    )
    growth = (
        f" (today's peak +{w.growth_over_horizon:.0%} growth over {w.horizon_months} months)"
        if w.growth_over_horizon
        else ""
    )
    spare = f", including {rec.option.spare_replicas} spare" if rec.option.spare_replicas else ""
    spare = f" ({rec.filling_text})" if rec.filling_text else spare  # trial 27 F10: replicas that only fill nodes
    kinds = sorted({x.money.price_kind for x in ranked if x.meets})
    across = f", ranked across price kinds ({', '.join(kinds)})" if len(kinds) > 1 else ""
    m = rec.money
    cost = f"{usd(float(f.monthly_usd))} a month"
    if m.pricing == "purchase":
        cost += (
            f" ({usd(m.capex_usd_per_gpu * float(f.gpus))} of GPUs, host servers and network up front, "
            f"amortized {capital_terms(rec.option, scenario.finance)}, plus "
            f"{usd(m.opex_usd_per_gpu_month * float(f.gpus))} a month of power and colocation)"
        )
    else:
        cost += f" at the {m.price_kind} rate"
    text = (
        f"{rec.option.name} is the cheapest option that meets the targets (TTFT at most {_ms(w.ttft_target_s)}, "
        f"TPOT at most {_ms(w.tpot_target_s)}) at the planned peak of {load}{growth}{across}: "
        f"{counted(int(f.gpus), rec.gpu.name + ' GPU', ',.0f')} as {counted(int(f.replicas), 'replica', ',.0f')} of {int(r.gpus)}{spare}, "
        f"a batch of up to {counted(rec.batch_per_replica, 'sequence', ',.0f')} in flight per replica, for {cost}. "
        f"{risk(scenario, rec)}"
    )
    if budget := budget_sentence(scenario, rec):
        text += f" {budget}"
    others = [x for x in ranked if x.meets and x is not rec]
    if others:
        nxt = others[0]
        tie = cost_tie_words(rec, nxt)
        text += (
            f" The next option, {nxt.option.name}, {tie}"
            if tie
            else f" The next option, {nxt.option.name}, costs {usd(nxt.monthly_usd - rec.monthly_usd)} a month more"
        )
        diff = differences(rec, nxt)
        text += f"; the two differ in {counted(len(diff), 'way')}: {'; '.join(diff)}." if diff else "."
    if left_out := buy_against_rent(scenario, rec, ranked):
        text += f" {left_out}"
    if hours := rent_at_peak_hours(rec, ranked):
        text += f" {hours}"
    failing = [x for x in ranked if not x.meets]
    if failing:
        text += f" {counted(len(failing), 'option')} cannot meet the targets."
    text += (
        f" At {'the average load after growth' if w.growth_factor != 1 else 'average load'} "
        f"({rec.average_rate_per_s:.3g} requests/s, the basis of the cost per token) it is "
        f"at {float(f.utilization_average):.0%} of its sized capacity; with traffic "
        f"{scenario.traffic_change:.0%} higher it needs {counted(int(rec.high.gpus), 'GPU', ',.0f')} ({usd(float(rec.high.monthly_usd))} a month)"
    )
    meeting = [x for x in ranked if x.meets]
    lo_best = min(meeting, key=lambda x: (float(x.low.monthly_usd), x.option.name))
    hi_best = min(meeting, key=lambda x: (float(x.high.monthly_usd), x.option.name))
    if lo_best is rec and hi_best is rec:
        text += f", and it stays the cheapest at -{scenario.traffic_change:.0%} and +{scenario.traffic_change:.0%}."
    elif lo_best is hi_best:  # trial 20, F8: one option cheaper at both ends, said once
        text += (
            f"; but at -{scenario.traffic_change:.0%} and +{scenario.traffic_change:.0%} traffic "
            f"{lo_best.option.name} is cheaper."
        )
    else:
        flips = [
            f"{name} traffic {best.option.name} is cheaper"
            for name, best in (
                (f"at -{scenario.traffic_change:.0%}", lo_best),
                (f"at +{scenario.traffic_change:.0%}", hi_best),
            )
            if best is not rec
        ]
        text += "; but " + " and ".join(flips) + "."
    if wide := wide_slow_ends(scenario, rec, ranked):  # a paragraph of its own in Summary's cell (Markdown: a space)
        text += f"\n{wide}"
    return text
