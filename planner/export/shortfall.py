"""Why an option misses its targets, in one line: the best pessimistic TPOT and TTFT any of its groups reaches.

Each tensor-parallel group carries its own margin (``planner.export.records.Candidate``): the line quotes the
group with the best pessimistic figure, and says when that group's range was widened (``planner.accuracy.ranges``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.catalog import Gpu, Model
from planner.export.scenario import Workload
from planner.export.sizing import MIN_PROMPT_TIME_SHARE, leaves_prompt_time
from planner.units import counted

if TYPE_CHECKING:
    from planner.export.records import Candidate


def pessimistic(value_s: float, margin: float, unit: str) -> str:
    """ "33.8 ms (+58% margin: 53.4 ms)": a time and, when there is a margin, its pessimistic end."""
    scale, fmt = (1e3, "{:.1f} ms") if unit == "ms" else (1.0, "{:.2f} s")
    text = fmt.format(value_s * scale)
    return text if not margin else f"{text} (+{margin:.0%} margin: {fmt.format(value_s * (1 + margin) * scale)})"


def quoted_group(cands: tuple[Candidate, ...]) -> Candidate:
    """The group a shortfall quotes: the fitting one with the best pessimistic batch-1 TPOT (the first if none fits)."""
    fitting = [c for c in cands if c.fits]
    return min(fitting, key=lambda c: c.tpot_batch1_s * (1 + c.margin)) if fitting else cands[0]


def shortfall_text(cands: tuple[Candidate, ...], workload: Workload, gpu: Gpu, model: Model) -> str:
    fitting = [c for c in cands if c.fits]
    if not fitting:
        return (
            f"{model.name} does not fit on up to {cands[-1].gpus_per_replica} x {gpu.name} with a "
            f"{workload.sizing_context_tokens:,}-token sequence"
        )
    tp = quoted_group(cands)
    ttft = min(fitting, key=lambda c: c.ttft_high_s * (1 + c.margin))
    parts = []
    if tp.tpot_batch1_s * (1 + tp.margin) > workload.tpot_target_s:
        parts.append(
            f"best TPOT {pessimistic(tp.tpot_batch1_s, tp.margin, 'ms')} > target {workload.tpot_target_s * 1e3:.1f} ms"
            + widened_text(tp)
        )
    elif not leaves_prompt_time(tp.tpot_batch1_s * (1 + tp.margin), workload.tpot_target_s):
        share = 1.0 - tp.tpot_batch1_s * (1 + tp.margin) / workload.tpot_target_s
        needed_ms = tp.tpot_batch1_s * (1 + tp.margin) / (1.0 - MIN_PROMPT_TIME_SHARE) * 1e3
        parts.append(
            f"best TPOT {pessimistic(tp.tpot_batch1_s, tp.margin, 'ms')} leaves {share:.1%} of the "
            f"{workload.tpot_target_s * 1e3:.1f} ms target for prompts (at least {MIN_PROMPT_TIME_SHARE:.0%} needed: replicas "
            f"grow as 1 / that share); a TPOT target of {needed_ms:.1f} ms or more, or a smaller "
            "latency_margin, sizes it" + widened_text(tp)
        )
    if ttft.ttft_high_s * (1 + ttft.margin) > workload.ttft_target_s:
        parts.append(
            f"best TTFT {pessimistic(ttft.ttft_high_s, ttft.margin, 's')} > target {workload.ttft_target_s:.2f} s"
            + widened_text(ttft)
        )
    if not parts:  # each target met by some group, not both by one
        parts.append("no single group size meets both the TTFT and TPOT targets")
    return "; ".join(parts)


def widened_text(c: Candidate) -> str:
    """ " (N GPUs per replica; range widened ...)" when that group's range was widened, else ""."""
    return (
        f" ({counted(c.gpus_per_replica, 'GPU', ',.0f')} per replica; range widened {c.time_range.widened})"
        if c.time_range.widened
        else ""
    )
