"""The levers against a baseline: more GPUs per replica, a shorter context, a GQA model, KV quantization, a prefix
cache, and for a MoE model data-parallel attention with the experts spread (the layout 2026 engines run such models
in). Each lever is sized on the baseline's own requests and arrival draws (common random numbers: the lengths and
arrivals are seeded alike), so only the change differs; a difference the draws of the same traffic do not agree on is
not booked (``_within_draws``)."""

from __future__ import annotations

import math
import re
from dataclasses import replace as dc_replace

from planner.api import next_tp_size, spans_nodes_warning
from planner.catalog import Catalog
from planner.errors import PlannerError
from planner.export.evaluate import evaluate, replicas_over_draws, run_at_replicas
from planner.export.not_sized import not_sized
from planner.export.reason import usd as _usd
from planner.export.records import Lever, Result
from planner.export.scenario import Finance, Scenario, Workload
from planner.serving.load import LongTailError
from planner.units import counted


def _lever(name: str, change: str, base: Result, res: Result | None, note: str = "") -> Lever:
    if res is None:
        return Lever(name, change, None, math.nan, note)
    if not base.meets:  # a named baseline that misses the targets (trial 31 F8): the lever's fleet, no saving
        return Lever(name, change, res, math.nan, _against_no_fleet(base, res, note))
    unlike = _sized_unlike(base, res)
    if unlike:
        return Lever(name, change, res, math.nan, unlike)
    saving = base.monthly_usd - res.monthly_usd if res.meets else math.nan
    if res.meets and not note:
        dt = (float(res.fleet.tpot_peak_s) - float(base.fleet.tpot_peak_s)) * 1e3
        note = (
            f"batch of {counted(res.batch_per_replica, 'sequence', ',.0f')} in flight per replica of "
            f"{counted(int(res.replica.gpus), 'GPU', ',.0f')} (baseline {base.batch_per_replica}); TPOT {float(res.fleet.tpot_peak_s) * 1e3:.1f} ms ({dt:+.1f} ms)"
        )
        note += _slower_because(base, res) if dt > 0 else ""
        if res.gpus == base.gpus:
            note += (
                f"; same GPU count: {_whole_units(res)}{counted(int(res.fleet.replicas), 'replica', ',.0f')} of "
                f"{int(res.replica.gpus)} (baseline {int(base.fleet.replicas)} of {int(base.replica.gpus)})"
            )
            if bool(res.fleet.prompt_bound) and res.under_load is None:  # Little's law's reason, not the simulation's
                note += "; prompt processing (rate x TTFT), not batch room, sets the replica count"
    elif not res.meets:
        note = f"does not meet the targets: {res.shortfall}"
    return Lever(name, change, res, saving, note)


def _against_no_fleet(base: Result, res: Result, note: str = "") -> str:
    """A lever's Effect where the baseline meets no target (trial 31 F8: the review had stopped there): whether the
    one change makes the option meet them, and the fleet it then takes; no saving is booked, the baseline having no
    fleet to set it against."""
    said = (
        f"meets the targets where the baseline does not: {counted(int(res.fleet.replicas), 'replica')} of "
        f"{counted(int(res.replica.gpus), 'GPU')}, {counted(res.gpus, 'GPU', ',.0f')}, {_usd(res.monthly_usd)} a month "
        "(no saving: the baseline has no fleet)"
        if res.meets
        else f"does not meet the targets either: {res.shortfall}"
    )
    return f"{note}; {said}" if note else said


def baseline_group(base: Result) -> int:
    """The GPUs per replica the levers start from: the baseline's kept group; where it meets no target, the group it
    is held to (``gpus_per_replica``), else its largest group that holds the model, else its largest group tried."""
    if base.replica is not None:
        return int(base.replica.gpus)
    if base.option.gpus_per_replica:
        return int(base.option.gpus_per_replica)
    fitting = [c.gpus_per_replica for c in base.candidates if c.fits]
    return max(fitting or [c.gpus_per_replica for c in base.candidates] or [1])


def _slower_because(base: Result, res: Result) -> str:
    """Why a lever's TPOT at peak is longer than the baseline's, both sized on simulated percentiles (a trial: "Shorter
    context" and "KV cache bf16 -> fp8" showed +7.2 ms and +5.1 ms with no reason): the simulation spent the room the
    lever made on fewer serving replicas, each taking more of the peak, and on more sequences in each decode step,
    which takes longer (``Sizing.replicas``, ``rate_per_replica_s``, the simulated run's ``peak_running``). "" where
    neither was sized on simulated percentiles or neither happened."""
    b, r = base.under_load, res.under_load
    if b is None or r is None or b.is_burst or r.is_burst:
        return ""
    why = []
    if r.replicas < b.replicas:
        why.append(
            f"{r.replicas} serving replicas (baseline {b.replicas}) each take {r.rate_per_replica_s:.3g} requests/s "
            f"({b.rate_per_replica_s:.3g})"
        )
    if r.result.peak_running > b.result.peak_running:
        why.append(f"run up to {r.result.peak_running:,} sequences at once ({b.result.peak_running:,})")
    if not why:
        return ""
    return f": the targets still met, {' and '.join(why)}, so each decode step carries more sequences and takes longer"


def _whole_units(res: Result) -> str:
    """Why a lever that needs fewer replicas keeps the GPU count: its replicas and spares, rounded up to whole nodes
    (bought) or instances (rented) of ``Money.node_size`` GPUs (``sizing.gpus_to_buy``), hold as many GPUs as the
    baseline's; "" where no rounding adds GPUs."""
    need, group, node = int(res.fleet.replicas_needed), int(res.replica.gpus), int(res.money.node_size)
    if need * group >= res.gpus:
        return ""
    unit = "nodes" if res.money.pricing == "purchase" else "instances"
    spares = res.option.spare_replicas
    serving = f"{need - spares} serving + {spares} spare = " if spares else ""
    return (
        f"{serving}{counted(need, 'replica', ',.0f')} of {group} GPUs ({need * group:,} GPUs) rounded up to whole "
        f"{node}-GPU {unit}: {int(res.gpus):,} GPUs, "
    )


def _sized_unlike(base: Result, res: Result) -> str:
    """Why a lever's fleet cannot be set against the baseline's ("" where it can): the baseline sized on simulated
    percentiles and the lever by Little's law, because its simulation failed (``Result.under_load_refused``)."""
    if not res.meets or base.under_load is None or res.under_load is not None:
        return ""
    why = res.under_load_refused
    return "no saving shown: sized by Little's law, the baseline on simulated percentiles" + (
        f" (the simulation could not run it: {why})" if why else ""
    )


def levers(scenario: Scenario, base: Result, catalog: Catalog) -> tuple[Lever, ...]:
    """More GPUs per replica, a shorter context, a GQA model, KV quantization: each against the baseline."""
    w, o, lv, x = scenario.workload, base.option, scenario.levers, scenario.traffic_change
    out = []
    tp_now = baseline_group(base)
    try:  # default: the next group the engine runs the model on (twice the baseline's where that is one), as the
        # what-if workbook's lever; DeepSeek-V3 at 16 has none (its fp8 blocks), and 32 had stopped the whole review
        tp_new = lv.gpus_per_replica or next_tp_size(base.model, tp_now, catalog=catalog, engine=o.engine)
    except PlannerError as exc:
        tp_new, no_group = 0, str(exc)
    if tp_new == 0:
        out.append(
            Lever(
                "More GPUs per replica",
                f"tensor-parallel group {tp_now} -> none larger",
                None,
                math.nan,
                f"not evaluated: {no_group}",
            )
        )
    elif tp_new <= tp_now:
        out.append(
            Lever(
                "More GPUs per replica",
                f"{tp_now} -> {tp_new} GPUs per replica",
                None,
                math.nan,
                f"not evaluated: levers.gpus_per_replica ({tp_new}) is not above the baseline's {tp_now}",
            )
        )
    else:
        change = f"tensor-parallel group {tp_now} -> {tp_new} GPUs"
        try:
            res = evaluate(
                o.model_copy(update={"gpus_per_replica": tp_new}),
                w,
                catalog,
                x,
                model=base.model,
                finance=scenario.finance,
            )
        except PlannerError as exc:  # levers.gpus_per_replica the engine refuses for this model: this lever's note
            res, refused = None, f"not evaluated: levers.gpus_per_replica: {exc}"
        lever = _lever("More GPUs per replica", change, base, res, refused if res is None else "")
        # plan's words for a group across nodes (planner.deploy.spans_nodes_warning), in the layout the lever kept
        spans = spans_nodes_warning(res.gpu, tp_new, res.option.parallelism or "tp") if res is not None else ""
        if spans:
            lever = Lever(lever.name, lever.change, lever.result, lever.saving_usd_per_month, lever.note + f"; {spans}")
        out.append(lever)

    cap = lv.prompt_tokens_high or max(1, w.prompt_tokens_high // 2)
    short = w.model_copy(update={"prompt_tokens_high": cap, "prompt_tokens_mean": min(w.prompt_tokens_mean, cap)})
    try:
        if (
            w.lengths_file is not None
        ):  # the simulated requests are the file's rows: capping the slot alone says nothing
            res, refused = (
                None,
                (
                    f"not evaluated: the requests are lengths_file {w.lengths_file}'s rows; cap its prompts there and "
                    "export again"
                ),
            )
        else:
            res, refused = evaluate(o, short, catalog, x, model=base.model, finance=scenario.finance), ""
    except LongTailError as exc:  # the shorter slot holds no fit of the lengths (trial 27 F12): this lever's note
        res, refused = None, f"not evaluated: the slot shrinks to {short.sizing_context_tokens:,} tokens, and the {exc}"
    out.append(_lever("Shorter context", shorter_context_change(w, short), base, res, refused))

    m = base.model
    if lv.gqa_model:
        alt = catalog.model(lv.gqa_model)
        res = evaluate(o.model_copy(update={"model": alt.name}), w, catalog, x, model=alt, finance=scenario.finance)
        out.append(
            _lever(
                "GQA model",
                f"{m.name} ({m.attention_kind}, {m.num_kv_heads} KV heads) -> {alt.name} "
                f"({alt.attention_kind}, {alt.num_kv_heads} KV heads)",
                base,
                res,
            )
        )
    elif m.attention_kind in ("GQA", "MQA"):
        mha = m.model_copy(update={"num_kv_heads": m.num_attention_heads, "name": f"{m.name} without GQA"})
        res = evaluate(o, w, catalog, x, model=mha, finance=scenario.finance)
        lever = _lever(
            "GQA model",
            f"{m.name} already uses {m.attention_kind} ({m.num_kv_heads} KV heads for "
            f"{m.num_attention_heads} query heads); shown: the same model without it (hypothetical)",
            base,
            res,
        )
        saving = -lever.saving_usd_per_month if res.meets else math.nan
        note = (
            lever.note
            if _sized_unlike(base, res) or not base.meets
            else f"GQA already saves {_usd(saving)} a month against full multi-head attention"
            if res.meets and saving >= 0
            else f"here full multi-head attention would cost {_usd(-saving)} a month less than GQA"
            if res.meets
            else f"without GQA no deployment meets the targets ({res.shortfall})"
        )
        out.append(Lever(lever.name, lever.change, res, lever.saving_usd_per_month, note))
    elif m.attention_kind == "MHA":
        gqa = m.model_copy(update={"num_kv_heads": max(1, m.num_attention_heads // 8), "name": f"{m.name} with GQA-8"})
        res = evaluate(o, w, catalog, x, model=gqa, finance=scenario.finance)
        out.append(
            _lever(
                "GQA model",
                f"{m.name} (MHA) -> a hypothetical GQA variant with {gqa.num_kv_heads} KV heads; "
                "name a real one in levers.gqa_model",
                base,
                res,
            )
        )
    else:
        out.append(
            Lever(
                "GQA model",
                f"{m.name} uses {m.attention_kind}",
                None,
                math.nan,
                "not applicable: its KV cache is already compressed",
            )
        )

    kv_now = base.kv_precision
    kv_new = catalog.precision(lv.kv_precision).name
    if kv_new == kv_now:
        out.append(
            Lever(
                "KV-cache quantization",
                f"KV cache already {kv_now}",
                None,
                math.nan,
                "not evaluated: set levers.kv_precision to another format",
            )
        )
    else:
        res = evaluate(
            o.model_copy(update={"kv_precision": kv_new}), w, catalog, x, model=base.model, finance=scenario.finance
        )
        out.append(_lever("KV-cache quantization", f"KV cache {kv_now} -> {kv_new}", base, res))
    cached = _prefix_workload(w, lv.prefix_hit_rate)
    out.append(_prefix_lever(scenario, base, catalog, cached))
    other = _other_layout(base)
    if other is not None:
        out.append(other)
    elif base.model.moe is not None and (o.parallelism or "tp") != "dp-ep":
        out.append(_data_parallel_attention(o, w, catalog, x, base, scenario.finance))
    workloads = {"Shorter context": short, PREFIX_LEVER: cached}
    judged = (_judged(lever, base, scenario, catalog, workloads.get(lever.name, w)) for lever in out)
    return tuple(_within_draws(lever, base, scenario, catalog, workloads.get(lever.name, w)) for lever in judged)


def shorter_context_change(w: Workload, short: Workload) -> str:
    """The "Shorter context" lever's words: exactly the lengths it sizes (trial 29 F7: "prompts capped at 15,000
    tokens" read as a cap, while the mean stayed at 12,000 and only the tail narrowed). The lever sets the high
    percentile's prompt to the cap and keeps the mean (lowered to the cap only where it was above it): the
    draws around them (``Workload.simulated_lengths``) are a narrower tail at the same average prompt, so the
    saving is what trimming the longest retrievals buys, not a cut of every prompt's length."""
    q = f"p{w.high_percentile:g}"
    m0, m1 = w.prompt_tokens_mean, short.prompt_tokens_mean
    mean = f"mean kept at {m1:,.0f}" if m1 == m0 else f"mean {m0:,.0f} -> {m1:,.0f}"
    return f"{q} prompt {w.prompt_tokens_high:,} -> {short.prompt_tokens_high:,} tokens, {mean}"


def _other_layout(base: Result) -> Lever | None:
    """Where the review chose the baseline's layout (``Result.layouts``: a MoE option that sets no ``parallelism``,
    sized in tensor parallelism and in data-parallel attention, the cheaper kept; trial 24, F15), the layout it did
    not keep, as sized there (not sized again): "Data-parallel attention" (tp -> dp-ep) where it kept tensor
    parallelism, "Tensor parallelism" (dp-ep -> tp) where it kept dp-ep, so the lever never offers the layout the
    baseline already runs. None where the option set its own layout (the data-parallel attention lever then applies
    as before)."""
    kept = base.option.parallelism or "tp"
    others = [s for s in base.layouts if s.parallelism != kept]
    if len(base.layouts) < 2 or not others:
        return None
    s = others[0]
    name = "Data-parallel attention" if s.parallelism == "dp-ep" else "Tensor parallelism"
    words = {"dp-ep": "data-parallel attention, experts spread", "tp": "tensor parallel"}.get(s.parallelism, "")
    change = f"layout {kept} -> {s.parallelism}" + (f" ({words})" if words else "")
    if s.result is None:
        return Lever(name, change, None, math.nan, f"not evaluated: {s.refused}")
    lever = _lever(name, change, base, s.result)
    chosen = (
        f"the review sized the option in both layouts and kept {kept}, the cheaper (parallelism in the option fixes it)"
    )
    return dc_replace(lever, note=f"{lever.note}; {chosen}" if lever.note else chosen)


def _judged(lever: Lever, base: Result, scenario: Scenario, catalog: Catalog, w: Workload) -> Lever:
    """The lever as the review judges an option: a fleet its margin sets, 10 times or more the fleet as predicted, is
    not sized (``not_sized``; trial 22, F1: the data-parallel attention lever at 2,880 GPUs, -$10,461,367). A layout
    the review already sized and judged for the baseline (``Result.layouts``) is not judged again."""
    res = lever.result
    if res is None or not res.meets or any(s.result is res for s in base.layouts):
        return lever
    judged = not_sized(res, scenario.model_copy(update={"workload": w}), catalog)
    return lever if judged is res else _lever(lever.name, lever.change, base, judged)


def _data_parallel_attention(o, w, catalog: Catalog, x: float, base: Result, finance: Finance) -> Lever:
    """A MoE baseline run as data-parallel attention ranks with the experts spread ("dp-ep"): each rank caches its
    own sequences once, so the group holds more of them (``planner.model.parallel``); the same groups are tried."""
    name = "Data-parallel attention"
    change = f"layout {o.parallelism or 'tp'} -> dp-ep (data-parallel attention, experts spread)"
    try:
        res = evaluate(o.model_copy(update={"parallelism": "dp-ep"}), w, catalog, x, model=base.model, finance=finance)
    except PlannerError as exc:  # the engine or release runs no such layout for this model: the lever's note
        return Lever(name, change, None, math.nan, f"not evaluated: {exc}")
    return _lever(name, change, base, res)


PREFIX_LEVER = "Prefix cache"


def prefix_memory_note(share: float) -> str:
    """What a prefix cache's share ``share`` does and does not buy in the model (docs/model.md: each prompt computes
    (1 - h) of its tokens and holds all of them): said wherever a workload or lever sets one (trial 29 F9)."""
    return (
        f"prefix cache hit {share:.0%}: prefill computes {1 - share:.0%} of each prompt; the memory shared prefix "
        "blocks save is not modelled (each sequence holds its whole prompt's KV cache), so the fleet is conservative "
        "on memory (batch room)"
    )


def _prefix_workload(w: Workload, share: float | None) -> Workload | None:
    """The workload with ``[levers] prefix_hit_rate`` in place of its own; None where the lever is not set."""
    return None if share is None else w.model_copy(update={"prefix_hit_rate": float(share)})


def _prefix_lever(scenario: Scenario, base: Result, catalog: Catalog, cached: Workload | None) -> Lever:
    """The baseline with a prefix cache holding ``[levers] prefix_hit_rate`` of each prompt: sized by the same code
    as the workload's own ``prefix_hit_rate`` (``evaluate`` of the workload with it set), so the lever's fleet is the
    review of that scenario's. Not evaluated where the lever is not set (no share is assumed), is not above the
    workload's own share, or the workload is sized by Little's law (which charges every prompt its whole prefill)."""
    w = scenario.workload
    if cached is None:
        said = (
            f"not evaluated: the workload's prefix_hit_rate {w.prefix_hit_rate:g} is in every option's fleet already; "
            "set [levers] prefix_hit_rate above it to size a larger share"
            if w.prefix_hit_rate > 0
            else "not evaluated: set [levers] prefix_hit_rate to the share of each prompt your prefix cache holds (a "
            "system prompt or retrieved preamble every request shares, over the mean prompt: 0.3 for 3,600 of 12,000 "
            "tokens)"
        )
        return Lever(PREFIX_LEVER, "prefix cache: levers.prefix_hit_rate not set", None, math.nan, said)
    share = cached.prefix_hit_rate
    change = f"prefix cache hit {w.prefix_hit_rate:.0%} -> {share:.0%} of each prompt"
    if share <= w.prefix_hit_rate:
        return Lever(
            PREFIX_LEVER,
            change,
            None,
            math.nan,
            f"not evaluated: levers.prefix_hit_rate ({share:g}) is not above the workload's {w.prefix_hit_rate:g}",
        )
    if w.sizing != "simulated":
        return Lever(
            PREFIX_LEVER,
            change,
            None,
            math.nan,
            'not evaluated: a prefix cache needs sizing = "simulated" (Little\'s law charges every prompt its whole '
            "prefill)",
        )
    res = evaluate(base.option, cached, catalog, scenario.traffic_change, model=base.model, finance=scenario.finance)
    lever = _lever(PREFIX_LEVER, change, base, res)
    said = prefix_memory_note(share)
    return dc_replace(lever, note=f"{lever.note}; {said}" if lever.note else said)


def _within_draws(lever: Lever, base: Result, scenario: Scenario, catalog: Catalog, w: Workload) -> Lever:
    """The lever with its fleet's difference from the baseline's set against the draws of the same traffic (trial
    29 F3: KV fp8 read +8 GPUs, -$20,995 a month, on a fleet whose p95 TTFT sits on a flat stretch at the target,
    where 4 of 5 arrival draws disagree on the replica count). Both are sized on the same requests and the same
    arrival draws (common random numbers), and each again in every draw of ``replicas_over_draws``; where fewer than
    half the draws agree with the sized draw on the difference's direction, the difference is the sampling's, not
    the lever's: the Effect says "same fleet within the sizing's draw-to-draw spread" with the replica ranges, and
    no saving or cost is booked (NaN). Where a lever is dearer and the draws agree, the Effect names the binding
    target at the baseline's replica count and why (``_dearer_because``). Levers not sized on simulated percentiles
    at a rate, or whose GPU count is the baseline's, are as they were."""
    res = lever.result
    if res is None or not res.meets or not math.isfinite(lever.saving_usd_per_month) or res.gpus == base.gpus:
        return lever
    if base.under_load is None or res.under_load is None or any(s.result is res for s in base.layouts):
        return lever  # a layout the review sized for the baseline and chose between on the shown draw: as chosen
    b_draws = replicas_over_draws(base, scenario.workload, catalog)
    l_draws = replicas_over_draws(res, w, catalog)
    if not b_draws or len(b_draws) != len(l_draws):
        return lever
    gb, gl = int(base.replica.gpus), int(res.replica.gpus)
    diffs = [lr * gl - br * gb for br, lr in zip(b_draws, l_draws, strict=True)]
    d0 = diffs[0]
    if d0 == 0:  # the same serving GPUs in the sized draw: the spares and whole nodes or instances differ
        serving, node = int(res.under_load.replicas) * gl, int(res.money.node_size)
        units = (
            f" and whole {node}-GPU {'nodes' if res.money.pricing == 'purchase' else 'instances'}" if node > 1 else ""
        )
        said = (
            f"the same {serving:,} serving GPUs as the baseline; the fleets differ by their spare replicas "
            f"({res.option.spare_replicas} of {gl} GPUs, baseline {base.option.spare_replicas} of {gb}){units}: "
            f"{int(res.gpus):,} GPUs against {int(base.gpus):,}"
        )
        return dc_replace(lever, note=f"{lever.note}; {said}" if lever.note else said)
    agree = sum((d > 0) == (d0 > 0) and d != 0 for d in diffs)
    n = len(diffs)
    if 2 * agree > n:
        why = "" if d0 < 0 else _dearer_because(base, res, w, catalog)
        return dc_replace(lever, note=f"{lever.note}; {why}") if why else lever
    unit, b_span, l_span = (
        ("replicas", b_draws, l_draws) if gb == gl else ("GPUs", [b * gb for b in b_draws], [x * gl for x in l_draws])
    )
    more = "more" if d0 > 0 else "fewer"
    words = "cost" if d0 > 0 else "saving"
    spread = (
        f"same fleet within the sizing's draw-to-draw spread: {min(l_span):,}-{max(l_span):,} serving {unit} over {n} "
        f"arrival draws of this traffic (baseline {min(b_span):,}-{max(b_span):,}; the same requests and draws); "
        f"{agree} of the {n} draws need{'s' if agree == 1 else ''} {more} than the baseline's, so the sized "
        f"draw's {l_span[0]:,} against {b_span[0]:,} is no {words}: none booked"
    )
    why = _dearer_because(base, res, w, catalog) if d0 > 0 else ""  # what the shown draw's extra replica met
    said = f"{spread}; {why}" if why else spread
    # the GQA lever's "GQA already saves $X" books the difference the draws do not agree on: left out
    rest = re.sub(r"^(GQA already saves|here full multi-head attention would cost) [^;]*(; )?", "", lever.note)
    return Lever(lever.name, lever.change, res, math.nan, f"{said}; {rest}" if rest else said)


def _dearer_because(base: Result, res: Result, w: Workload, catalog: Catalog) -> str:
    """Why a lever needs more serving GPUs than the baseline (the draws agreeing): the target it misses on the
    baseline's serving GPUs (its replicas, or for another group the most of the lever's replicas they hold:
    ``run_at_replicas``, the sized draw), its figure against the goal and the baseline's, and where the lever fits
    fewer sequences in a replica, or runs more at once, that they make prompts wait or each decode step longer."""
    b = base.under_load
    gb, gl = int(base.replica.gpus), int(res.replica.gpus)
    k = int(b.replicas) * gb // gl
    if k < 1:
        return ""
    where = (
        f"the baseline's {counted(k, 'replica')}"
        if gl == gb
        else f"{counted(k, 'replica')} of {gl} GPUs (the baseline's {int(b.replicas) * gb:,} serving GPUs)"
    )
    run = run_at_replicas(res, w, catalog, k)
    q = b.percentile
    ttft, tpot = float(run.ttft_s.at(q)), float(run.tpot_s.at(q))
    goal_ttft, goal_tpot = float(res.under_load.ttft_target_s), float(res.under_load.tpot_target_s)
    bt, bp = float(b.result.ttft_s.at(q)), float(b.result.tpot_s.at(q))
    ttft_miss = ttft > goal_ttft
    if not ttft_miss and not tpot > goal_tpot:  # met there after all (a replica count the search stepped over)
        return ""
    name, got, goal, had, fmt = (
        ("TTFT", ttft, goal_ttft, bt, "{:.3f} s" if ttft < 10 else "{:,.1f} s")
        if ttft_miss or not tpot > goal_tpot
        else ("TPOT", tpot * 1e3, goal_tpot * 1e3, bp * 1e3, "{:.1f} ms")
    )
    said = (
        f"binding p{q:g} {name}: on {where} it reads {fmt.format(got)} against the "
        f"{fmt.format(goal)} goal (baseline {fmt.format(had)})"
    )
    running, was = run.peak_running, b.result.peak_running
    fits, fit_was = int(res.candidate.slots), int(base.candidate.slots)
    if fits < fit_was and running >= fits:
        said += f": only {counted(fits, 'sequence')} fit a replica (baseline {fit_was:,}), " + (
            "so prompts wait for a slot" if name == "TTFT" else "so requests queue for a slot"
        )
    elif running > was:
        said += f": up to {running:,} sequences run at once per replica (baseline {was:,}), " + (
            "so more prompts wait and the prompt queue lengthens"
            if name == "TTFT"
            else "so each decode step carries more and takes longer"
        )
    return said
