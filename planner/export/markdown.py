"""The review as Markdown, to paste into a document or a ticket (GitHub-flavoured tables)."""

from __future__ import annotations

from planner.export.review import Review
from planner.export.tables import Table, fmt, levers_table, options_table, sensitivity_table
from planner.safetext import md_text

#: Options-table columns the Markdown shows (the csv and xlsx have them all).
MD_OPTION_KEYS = (
    "rank",
    "option",
    "meets_targets",
    "gpus",
    "gpus_per_replica",
    "replicas",
    "tpot_ms",
    "ttft_s",
    "monthly_usd",
    "usd_per_million_output_tokens",
    "utilization_average",
    "monthly_usd_high",
    "note",
)


def _cell(text: str) -> str:
    """A table cell: names from users and catalogs render as text (planner.safetext.md_text)."""
    return md_text(text, line_start=False)


def _source(path: str) -> str:
    """The scenario's path as code, unless it holds what a code span cannot (then escaped text)."""
    return f"`{path}`" if path.isprintable() and "`" not in path else md_text(path, line_start=False)


def md_table(table: Table, keys: tuple[str, ...] | None = None) -> str:
    idx = [i for i, c in enumerate(table.columns) if keys is None or c.key in keys]
    cols = [table.columns[i] for i in idx]
    right = {"int", "usd", "usd2", "pct", "ms", "s", "x"}
    lines = [
        "| " + " | ".join(_cell(c.header) for c in cols) + " |",
        "|" + "|".join("---:" if c.kind in right else "---" for c in cols) + "|",
    ]
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(fmt(row[i], table.columns[i].kind)) for i in idx) + " |")
    return "\n".join(lines)


def render_markdown(review: Review) -> str:
    s, w = review.scenario, review.scenario.workload
    rec = review.recommended
    out = [
        f"# {md_text(s.title, line_start=False)}",
        "",
        f"Budget review made by planner {review.version} on {review.date} from {_source(review.source)}.",
        "",
        f"**Recommendation: {md_text(rec.option.name, line_start=False)}** — {fmt(rec.monthly_usd, 'usd')} a month "
        f"({fmt(rec.monthly_usd * 12, 'usd')} a year), {rec.gpus} GPUs.",
        "",
        md_text(review.reason),
        "",
        "## Options",
        "",
        "Ranked by monthly cost among the options that meet the targets "
        f"(TTFT ≤ {w.ttft_target_s:g} s for a p{w.high_percentile:g} prompt, TPOT ≤ {w.tpot_target_s * 1e3:g} ms).",
        "",
        md_table(options_table(review), MD_OPTION_KEYS),
        "",
        "## Levers",
        "",
        f"Each lever changes one thing in the baseline ({md_text(review.baseline.option.name, line_start=False)}); saving = baseline minus lever "
        "(negative: it costs more).",
        "",
        md_table(levers_table(review)),
        "",
        "## Sensitivity",
        "",
        md_table(sensitivity_table(review)),
        "",
    ]
    if review.warnings:
        out += ["## Warnings", "", *[f"- {md_text(x, line_start=False)}" for x in review.warnings], ""]
    out += ["## Assumptions", "", "| What | Value | Unit | Source |", "|---|---|---|---|"]
    out += [f"| {_cell(a)} | {_cell(b)} | {_cell(c)} | {_cell(d)} |" for a, b, c, d in review.assumptions]
    return "\n".join(out) + "\n"
