"""Where an option's latency margin rests mostly on runs of engine releases older than the line the option's engine
plans (trial 27 F6: every DeepSeek-R1 fleet of the trial's review was sized on +179% / +246% from 19 vLLM runs, 18 of
them 0.7.3/0.7.4 dev builds of early 2025, applied to a prediction of today's vLLM, and the review never said so).

**When** (``older_split``): the margin rests on held-out serving runs (its note names them:
``serving_margin.runs_named``; not a calibration file's range nor a scenario's number), some run reaches it (the runs'
largest at or past the margin; else the prediction range set it), and more than half of the runs its note names
(``serving_margin.release_split``: the GPU's own where they stand alone, else the engine and class on every GPU) are
of releases before the line the option's engine plans (``serving_margin.KERNEL_LINES``: vLLM 0.8, SGLang 0.5,
TensorRT-LLM 1.0; the table's "current" rows, where a release whose version does not parse, an image tag, counts as
current).

**What is said**: how many of the runs, which releases, and what the same scope's current-line runs read: their 10th
/ 90th percentile where they are ``MIN_ROWS`` (5) or more, smallest to largest where fewer. The margin is not
changed: every release counts alike (docs/export.md, "Margin"; ``serving_margin.CURRENT_LINE_FIRST`` was measured and
not shipped), and no rule weighing releases was written down and measured for this.
"""

from __future__ import annotations

from planner.accuracy.ranges import MIN_ROWS
from planner.accuracy.serving_margin import (
    ENGINE_LABELS,
    EVERY_GPU,
    LINE_LABELS,
    OLDER_LINE_LABELS,
    ReleaseSplit,
    counted_labels,
    margin_class,
    release_split,
    runs_named,
)
from planner.units import counted


def older_split(r) -> ReleaseSplit | None:
    """The split of the runs ``r``'s margin rests on, where the module's rule says so; None otherwise (an option
    that does not meet the targets, a margin of 0 or not from serving runs, one no run reaches, runs mostly of the
    current line)."""
    return older_split_of(r) if r.meets else None


def older_split_of(r) -> ReleaseSplit | None:
    """``older_split`` whether or not ``r`` meets the targets: an option its margin keeps from meeting them is
    as much the older releases' (trial 31 F4: H200 SGLang at +202%, from SGLang 0.4.3 runs, "does not meet the
    targets")."""
    if not runs_named(r.time_range_note) or not r.margin > 0:
        return None
    split = release_split(r.gpu.name, r.engine, margin_class(r.model))
    if split is None or not split.mostly_older or round(split.region.largest, 2) < round(r.margin, 2):
        return None
    return split


def scope_words(split: ReleaseSplit) -> str:
    """ "vLLM MLA on every GPU", "SGLang MLA on H200 SXM 141GB": the runs' engine, class and GPU."""
    region = split.region
    label = ENGINE_LABELS.get(region.engine, region.engine)
    return f"{label} {region.architecture} on " + ("every GPU" if region.gpu == EVERY_GPU else region.gpu)


def older_words(split: ReleaseSplit, whose: str) -> str:
    """ "of vLLM 0.7 and earlier: 0.7.3.dev138 (9), 0.7.4.dev181 (9), older than the line this option's engine plans
    (vLLM 0.8 and later)" (``whose``: "this option's")."""
    engine = split.region.engine
    older = ", ".join(f"{v} ({n})" for v, n in split.older_versions())
    return f"of {OLDER_LINE_LABELS[engine]}: {older}, older than the line {whose} engine plans ({LINE_LABELS[engine]})"


def current_words(split: ReleaseSplit) -> str:
    """What the same scope's current-line runs read: "the 1 run of vLLM 0.8 and later there (0.11.0; 1 source) reads
    +86%", "the 9 runs of SGLang 0.5 and later there (...; 2 sources) read -9% / +4% (10th / 90th percentile)", or
    "no run of ... there"."""
    current, line = split.current, LINE_LABELS[split.region.engine]
    if current is None:
        return f"no run of {line} there"
    named = ", ".join(v for v, _ in counted_labels(current.versions))
    runs = f"{counted(current.rows, 'run')} of {line} there ({named}; {counted(current.source_count, 'source')})"
    if current.rows >= MIN_ROWS:
        return f"the {runs} read {current.low:+.0%} / {current.high:+.0%} (10th / 90th percentile)"
    if current.rows > 1:
        return f"the {runs} read {current.smallest:+.0%} to {current.largest:+.0%}"
    return f"the {runs} reads {current.largest:+.0%}"


def margin_releases_text(r) -> str:
    """The statement on the option's "margin used" row of Assumptions (the module's rule); "" where it does not
    apply. "18 of the 19 runs this +246% margin rests on (vLLM MLA on every GPU) are of vLLM 0.7 and earlier:
    0.7.3.dev138 (9), 0.7.4.dev181 (9), older than the line this option's engine plans (vLLM 0.8 and later); its 1
    run of vLLM 0.8 and later there (0.11.0; 1 source) reads +86%; every release counts alike in the margin
    (docs/export.md, 'Margin')"."""
    split = older_split(r)
    if split is None:
        return ""
    older = older_words(split, "this option's")
    return (
        f"{split.older_runs} of the {split.region.rows} runs this +{r.margin:.0%} margin rests on ({scope_words(split)}) "
        f"are {older}; {current_words(split)}; every release counts alike in the margin (docs/export.md, 'Margin')"
    )


def row_words(r, latency_margin: object) -> str:
    """What a ranking row says where its margin rests mostly on older engine releases (``older_split_of``): "margin
    +202% mostly from SGLang 0.4 runs", short, so the ranking is not read as the hardware's (trial 31 F4: the review's
    DeepSeek-R1 ranking was set by which year-old releases had public runs). "" where the rule does not apply or the
    scenario sets its own ``latency_margin`` (``latency_margin``: the workload's; a number is no run's margin)."""
    if latency_margin != "model-range":
        return ""
    split = older_split_of(r)
    if split is None:
        return ""
    lines = dict.fromkeys(".".join(v.split(".")[:2]) for v, _ in split.older_versions())
    label = ENGINE_LABELS.get(split.region.engine, split.region.engine)
    return f"margin +{r.margin:.0%} mostly from {label} {'/'.join(lines)} runs"
