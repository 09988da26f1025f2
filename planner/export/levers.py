"""The levers against a baseline: more GPUs per replica, a shorter context, a GQA model, KV quantization, and for a
MoE model data-parallel attention with the experts spread (the layout 2026 engines run such models in)."""

from __future__ import annotations

import math
from dataclasses import replace as dc_replace

from planner.api import next_tp_size, scale_up_gpus
from planner.catalog import Catalog
from planner.errors import PlannerError
from planner.export.evaluate import evaluate
from planner.export.not_sized import not_sized
from planner.export.reason import usd as _usd
from planner.export.records import Lever, Result
from planner.export.scenario import Finance, Scenario
from planner.serving.load import LongTailError
from planner.units import counted


def _lever(name: str, change: str, base: Result, res: Result | None, note: str = "") -> Lever:
    if res is None:
        return Lever(name, change, None, math.nan, note)
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
    tp_now = int(base.replica.gpus)
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
        if tp_new > scale_up_gpus(base.gpu) and res is not None:
            lever = Lever(
                lever.name,
                lever.change,
                lever.result,
                lever.saving_usd_per_month,
                lever.note + f"; {tp_new} GPUs per replica span several nodes: slower than modelled",
            )
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
    out.append(
        _lever(
            "Shorter context",
            f"prompts capped at {cap:,} tokens (was {w.prompt_tokens_high:,} at p{w.high_percentile:g})",
            base,
            res,
            refused,
        )
    )

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
            if _sized_unlike(base, res)
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
    other = _other_layout(base)
    if other is not None:
        out.append(other)
    elif base.model.moe is not None and (o.parallelism or "tp") != "dp-ep":
        out.append(_data_parallel_attention(o, w, catalog, x, base, scenario.finance))
    return tuple(_judged(lever, base, scenario, catalog, short) for lever in out)


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


def _judged(lever: Lever, base: Result, scenario: Scenario, catalog: Catalog, short) -> Lever:
    """The lever as the review judges an option: a fleet its margin sets, 10 times or more the fleet as predicted, is
    not sized (``not_sized``; trial 22, F1: the data-parallel attention lever at 2,880 GPUs, -$10,461,367). A layout
    the review already sized and judged for the baseline (``Result.layouts``) is not judged again."""
    res = lever.result
    if res is None or not res.meets or any(s.result is res for s in base.layouts):
        return lever
    w = short if lever.name == "Shorter context" else scenario.workload
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
