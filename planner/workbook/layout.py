"""Where things live in a what-if workbook: sheet names, input cells and the marker. Shared by the builder,
the reader and ``refresh``; changing a name here changes the file format (bump ``FORMAT_VERSION``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.workbook.formats import INT, MS, USD

#: The marker: a hidden defined name (and a custom document property) holding this text + the format version.
MARKER_NAME = "planner_workbook"
MARKER_KIND = "capacity-what-if"
FORMAT_VERSION = 1
VERSION_PROPERTY = "planner_version"

WORKBOOK_FILE = "capacity-what-if.xlsx"

INPUTS_SHEET = "Inputs"
RESULTS_SHEET = "Results"
LEVERS_SHEET = "Levers"
#: Latency against traffic per lever: numbers planner's simulation computed, rewritten by ``refresh`` (not formulas).
LOAD_SHEET = "Load"
#: The Load sheet's Status row (cell B of it: "current: ..." or "STALE: ..."), read by Calc and Levers.
LOAD_STATUS_ROW = 3
#: The Inputs the Load sheet's figures depend on, listed in its "Computed from" block in this order (``load_figures``).
LOAD_INPUT_KEYS = (
    "gpu",
    "model",
    "context",
    "kv_precision",
    "weight_precision",
    "gpus",
    "memory_utilization",
    "compare_model",
    "peak_requests_per_s",
    "output_tokens",
    "tpot_target_ms",
    "ttft_target_ms",
    "prefix_hit_rate",
    "burstiness",
    "prompt_tokens",
)
#: The Load sheet's first "Computed from" row; each of ``LOAD_INPUT_KEYS`` a row from it, then the engine's name and
#: the engine parameters' summary (a simulated sheet), each with "yes" or "changed" in column D.
LOAD_FIRST_INPUT_ROW = 7
LOAD_ENGINE_ROWS = (LOAD_FIRST_INPUT_ROW + len(LOAD_INPUT_KEYS), LOAD_FIRST_INPUT_ROW + len(LOAD_INPUT_KEYS) + 1)
#: The Load sheet's "Computed from" block of the latency percentile and the high lengths (``LENGTH_KEYS``): beside the
#: first one, in columns F to I from ``LOAD_FIRST_INPUT_ROW`` (its header a row above), so that no row of the sheet that
#: Calc reads moves (a workbook refreshed by this planner keeps its Calc sheet); Matches in column I.
LOAD_LENGTH_COLS = ("F", "G", "H", "I")
LOAD_LENGTH_ROWS = tuple(LOAD_FIRST_INPUT_ROW + i for i in range(4))
#: The rows of the Load sheet's lever table that say which scenario each column simulated (a simulated sheet: a blank
#: row, the table's subtitle and header after the engine rows), read by Calc's sim_lever row.
LOAD_LEVER_ROWS = {
    key: LOAD_ENGINE_ROWS[1] + 4 + i
    for i, key in enumerate(("model", "context", "kv_precision", "weight_precision", "gpus", "prompt_tokens"))
}
#: What the lever table writes for a blank KV-cache and weight precision.
LOAD_BLANK_PRECISION = {"kv_precision": "default", "weight_precision": "as published"}
#: The Inputs' Error line where the GPU has no catalog price and none is typed: no input is refused, the cost and the
#: fleet's money have no value (``inputs.why_error``; Calc's input_refused row tells it from a refusal).
NO_CATALOG_PRICE = "the catalog has no rental price (per GPU-hour) for this GPU: give a price per GPU-hour"
#: How the Inputs' Error line begins where no input is refused but a warning stands (``inputs.price_warning``: a price
#: typed per instance, not per GPU): Calc's input_refused row reads it as no refusal.
WARNING_PREFIX = "Warning: "
CHARTS_SHEET = "Charts"
CALC_SHEET = "Calc"
SWEEPS_SHEET = "Sweeps"
EXPLAIN_SHEET = "Explain"
ASSUMPTIONS_SHEET = "Assumptions"
RANGES_SHEET = "Ranges"
GPUS_SHEET = "GPUs"
MODELS_SHEET = "Models"
PRECISIONS_SHEET = "Precisions"
#: vLLM's measured all-reduce table, which Calc's all-reduce formulas interpolate (``planner.workbook.allreduce_sheet``)
ALLREDUCE_SHEET = "AllReduce"
#: Sheets ``refresh`` rewrites from the catalog; everything else in a user's copy is kept.
CATALOG_SHEETS = (GPUS_SHEET, MODELS_SHEET, PRECISIONS_SHEET, ALLREDUCE_SHEET)

INPUT_COLUMN = "B"
FIRST_INPUT_ROW = 4


@dataclass(frozen=True)
class InputField:
    key: str  # read_inputs() key
    name: str  # defined name of the cell
    label: str
    unit: str
    kind: Literal["text", "count", "fraction", "share", "shape", "money", "rate", "ms", "percentile"]
    required: bool
    help: str
    #: a "ms" input below this many milliseconds is refused as seconds typed as milliseconds (``SECONDS_SLIP``)
    slip_below_ms: float | None = None


#: The price input's note: the workbook rents (trial 26 F7: a finance user found no purchase price, amortization or
#: cost of capital, and an export of the workbook prices a rental too: ``workbook_scenario.workbook_scenario_data``).
#: One line in column D (87 characters): the Inputs page, fit to one, is as tall as its rows.
BUY_OR_RENT_NOTE = "Blank: the catalog's rent (GPUs sheet). Buy vs rent: planner export of a scenario TOML."

INPUT_FIELDS: tuple[InputField, ...] = (
    InputField("gpu", "in_gpu", "GPU", "catalog name", "text", True, "Choose from the list (GPUs sheet)."),
    InputField("model", "in_model", "Model", "catalog name", "text", True, "Choose from the list (Models sheet)."),
    InputField(
        "context",
        "in_context",
        "Context per sequence",
        "tokens",
        "count",
        True,
        "Prompt + output tokens each sequence holds in the KV cache.",
    ),
    InputField(
        "kv_precision",
        "in_kv_precision",
        "KV-cache precision",
        "format",
        "text",
        False,
        "Blank: the model's activation dtype (bf16/fp16). fp8 halves the cache. The list: the formats the engine "
        "caches (Assumptions: kv_precisions).",
    ),
    InputField(
        "weight_precision",
        "in_weight_precision",
        "Weight precision",
        "format",
        "text",
        False,
        "Blank: as published (the Models sheet's native precision).",
    ),
    InputField(
        "gpus",
        "in_gpus",
        "GPU count (tensor parallel)",
        "GPUs",
        "count",
        False,
        "Blank: the smallest group (1, 2, 4 ... 64) vLLM accepts holding weights + a sequence.",
    ),
    InputField(
        "engine",
        "in_engine",
        "Engine",
        "profile",
        "text",
        False,
        "Assumptions' engine columns; every formula follows it. SGLang: its memory_utilization there, not its "
        "per-GPU rule. Blank: the first.",
    ),
    InputField(
        "memory_utilization",
        "in_memory_utilization",
        "Memory utilization",
        "fraction of 1",
        "fraction",
        False,
        "Blank: the engine default (Assumptions). vLLM's gpu_memory_utilization.",
    ),
    InputField(
        "price_per_gpu_hour",
        "in_price",
        "Price per GPU-hour",
        "US$",
        "money",
        False,
        BUY_OR_RENT_NOTE,
    ),
    InputField(
        "batch",
        "in_batch",
        "Batch for the speed figures",
        "sequences",
        "count",
        False,
        "Sequences decoded together. Blank: the max batch the engine serves.",
    ),
)
#: Not part of ``read_inputs``: the model the GQA lever compares with.
COMPARE_FIELD = InputField(
    "compare_model",
    "in_compare_model",
    "Compare with model",
    "catalog name",
    "text",
    False,
    "Blank: the same-size GQA sibling (Models sheet); or choose any model.",
)
ENGINE_NAME = "eng_name"
#: The engine profiles a workbook offers on Inputs (``in_engine``'s dropdown, the defined name ``ENGINE_NAMES``: the
#: Assumptions sheet's engine columns' headers), after the one it is written for: each engine family's current
#: profile as ``planner.engines.profiles.ENGINES`` names it (older releases are for published rows).
WORKBOOK_ENGINES = ("vllm", "sglang", "tensorrt-llm", "lmdeploy")
ENGINE_NAMES = "engine_names"
#: The Assumptions cell holding the column of the engine chosen on Inputs (1: the first of ``ENGINE_NAMES``), which
#: every engine-dependent cell reads (the Assumptions' Value column, the GPUs sheet's engine columns: ``CHOOSE``).
ENGINE_INDEX = "eng_index"
#: Inputs a workbook written before them does not have (no defined name): read as blank, the old behaviour (the
#: prompt: context - output tokens; the engine: the Assumptions sheet's ``eng_name``).
LATER_INPUTS = frozenset(
    {"engine", "prompt_tokens", "latency_percentile", "prompt_tokens_high", "output_tokens_high", "length_percentile"}
)

#: The percentile the targets hold at where the Inputs' cell is blank: ``planner plan``'s ``--percentile`` default and
#: ``planner export``'s (a scenario's high_percentile), so that a review of the workbook sizes the same fleet.
DEFAULT_PERCENTILE = 95
#: The Inputs' latency percentile as a formula's term (blank: ``DEFAULT_PERCENTILE``): the targets' notes and the
#: "Meets the latency targets" words name it (trial 28 F8: they said p95 where the SLO was p99).
PERCENTILE_TERM = f'IF(in_latency_percentile="",{DEFAULT_PERCENTILE},in_latency_percentile)'
#: The TPOT and TTFT targets' notes, "{q}" the percentile: as text (``InputField.help``, p95) and, on the sheet, a
#: formula reading the Inputs' latency percentile (``target_help_formula``).
TARGET_HELPS = {
    "tpot_target_ms": "The slowest p{q} TPOT users accept (50 ms = 20 tokens/s each), simulated at the Inputs' "
    "lengths (high lengths: drawn as plan --rate draws them). Blank: no lever meets it (none is green).",
    "ttft_target_ms": "The slowest p{q} first token at the peak, simulated as the TPOT. Blank: none meets.",
}


def target_help_formula(key: str) -> str:
    """A target's note as a formula naming the Inputs' latency percentile ("The slowest p99 TPOT users accept")."""
    before, after = TARGET_HELPS[key].split("{q}")
    return f'="{before}"&{PERCENTILE_TERM}&"{after}"'


#: The budget question's inputs, below the compare model (not part of ``read_inputs``: the capacity model does not
#: take them). Defaults: examples/budget-review.toml's peak (40 requests/s of 400 output tokens) and targets.
BUDGET_FIELDS: tuple[InputField, ...] = (
    InputField(
        "peak_requests_per_s",
        "in_peak_requests",
        "Peak traffic",
        "requests/s",
        "rate",
        False,
        "Requests per second at the busiest time; sizes the fleet on Levers. Blank: no fleet.",
    ),
    InputField(
        "output_tokens",
        "in_output_tokens",
        "Output tokens per request",
        "tokens",
        "count",
        False,
        "Mean answer tokens (each request unless a high length is given). Blank: no fleet.",
    ),
    InputField(
        "prompt_tokens",
        "in_prompt_tokens",
        "Prompt tokens per request",
        "tokens",
        "count",
        False,
        "Mean, at most context - output (all alike unless a high length is given). Blank: that.",
    ),
    InputField(
        "tpot_target_ms",
        "in_tpot_target_ms",
        "TPOT target (time per output token)",
        "ms",
        "ms",
        False,
        TARGET_HELPS["tpot_target_ms"].format(q=DEFAULT_PERCENTILE),
        slip_below_ms=1.0,
    ),
    InputField(
        "ttft_target_ms",
        "in_ttft_target_ms",
        "TTFT target (time to first token)",
        "ms",
        "ms",
        False,
        TARGET_HELPS["ttft_target_ms"].format(q=DEFAULT_PERCENTILE),
        slip_below_ms=10.0,
    ),
    InputField(
        "prefix_hit_rate",
        "in_prefix_hit_rate",
        "Prompt share in the prefix cache",
        "share",
        "share",
        False,
        "Share of each prompt a prefix cache holds (0.25: a 200-token system prompt of 800): the Load sheet's "
        "simulation and fleet, not one prompt's TTFT. Blank: 0.",
    ),
    InputField(
        "burstiness",
        "in_burstiness",
        "Traffic burstiness",
        "gamma shape",
        "shape",
        False,
        "Gamma shape of the peak's arrival gaps before the load balancer (plan --burstiness): 1 Poisson, below 1 "
        "burstier. The Load sheet's runs and fleet use it. Blank: 1.",
    ),
    # trial 28 F8: the percentile and the high lengths, as planner plan --rate takes them (--percentile,
    # --prompt-tokens-high, --output-tokens-high, --length-percentile) and planner export's scenario
    InputField(
        "latency_percentile",
        "in_latency_percentile",
        "Latency percentile",
        "percentile",
        "percentile",
        False,
        f"Targets' percentile: 50, 90, 95 or 99 (plan --percentile); sizes the fleet. Blank: {DEFAULT_PERCENTILE}.",
    ),
    InputField(
        "prompt_tokens_high",
        "in_prompt_tokens_high",
        "High prompt tokens",
        "tokens",
        "count",
        False,
        "A long tail (plan --prompt-tokens-high), drawn as plan --rate does. Blank: the mean.",
    ),
    InputField(
        "output_tokens_high",
        "in_output_tokens_high",
        "High output tokens",
        "tokens",
        "count",
        False,
        "As the prompt's (plan --output-tokens-high). Blank: every answer at the mean.",
    ),
    InputField(
        "length_percentile",
        "in_length_percentile",
        "Length percentile",
        "percentile",
        "percentile",
        False,
        "90, 95 or 99 (plan --length-percentile). Blank: the targets' percentile.",
    ),
)
#: The high lengths and their percentile (not part of the Calc sheet's formulas: memory is sized at the context, as
#: planner plan sizes it; only the Load sheet's simulation draws them).
LENGTH_KEYS = ("latency_percentile", "prompt_tokens_high", "output_tokens_high", "length_percentile")
#: The highest burstiness a cell takes: a scenario's bound (``planner.export.scenario.Workload.burstiness``, le=100).
MAX_BURSTINESS = 100
#: How ``planner export`` (``reader``) and the Error line (``calc.budget_refusal``) word a burstiness out of range.
SHAPE_REFUSAL = f"must be above 0 and at most {MAX_BURSTINESS} (a gamma shape: 1 Poisson, below 1 burstier)"
#: Why the targets have a floor (``InputField.slip_below_ms``): planner's other surfaces take targets in seconds
#: (``plan --tpot-target 0.05``, ``REPLICAS``, a scenario's ``tpot_target_s``), so a target copied from them into these
#: millisecond cells reads 1,000x too tight. The CLI refuses the reverse slip above ``planner.units.BARE_TPOT_MAX_S``
#: (1 s) and ``BARE_TTFT_MAX_S`` (60 s); here the floors are where milliseconds stop being plausible: a TPOT under 1 ms
#: is over 1,000 tokens/s for each user, faster than any GPU's decode step, and a TTFT under 10 ms is less than one
#: prefill and its scheduling. So a TPOT in seconds below 1 s and a TTFT in seconds below 10 s are caught; a TTFT of
#: 10 to 60 s typed as 10 to 60 ms is plausible either way and passes.
SECONDS_SLIP = "looks like seconds typed as milliseconds"

#: What the budget inputs open on (examples/budget-review.toml's [workload]).
BUDGET_DEFAULTS = {
    "peak_requests_per_s": 40, "output_tokens": 400, "tpot_target_ms": 50, "ttft_target_ms": 1500, "burstiness": 1
}  # fmt: skip


def input_row(key: str) -> int:
    keys = [f.key for f in INPUT_FIELDS] + [COMPARE_FIELD.key] + [f.key for f in BUDGET_FIELDS]
    return FIRST_INPUT_ROW + keys.index(key)


#: The Inputs' label of the cost per token at max batch: decode alone, every slot busy, in ``planner plan``'s words
#: ("per million output tokens, decode only, 100% busy"), and not what the budget review charges per token.
COST_AT_MAX_BATCH_LABEL = "Cost at max batch: decode only, at full batch, 100% busy (not a budget rate)"
#: The Inputs' label of the budget fleet: ``planner export`` of the workbook's fleet (``budget_fleet``), with its
#: latency margin and spare replicas; one line in column A (38 characters), as its cost's label.
REVIEW_FLEET_LABEL = "Budget (planner export: margin, spare)"
#: The "At a glance" rows whose figures are the budget review's (Calc's review rows), not the peak fleet's.
REVIEW_KEYS = ("review_gpus", "review_usd_month")

#: The "At a glance" rows: (label, the Calc key, number format, unit).
GLANCE = (
    ("GPUs in the group", "n", INT, "GPUs"),
    ("Max batch memory holds", "max_batch", INT, "sequences"),
    ("Max batch the engine serves", "served_batch", INT, "sequences"),
    ("TPOT at the chosen batch", "d_step", MS, "ms per token"),
    ("TPOT at max batch", "m_step", MS, "ms per token"),
    ("Throughput at max batch", "m_tput", INT, "tokens/s"),
    # short units: column D beside the two costs says the price they are at (``inputs.price_at``, trial 19 F4), and a
    # unit longer than its column is cut there
    # trial 26 F8: said on the cell, as ``planner plan`` words its cost, so it is not read as the review's cost per
    # token (a tenth of it there: prompts, idle time, margin and spares)
    (COST_AT_MAX_BATCH_LABEL, "m_cost", USD, "US$/M out tok"),
    # "GPUs", not "GPUs (replicas x group)": column D beside it says what the count is (``fleet_group_note``), and a
    # formula there stops a unit overflowing into it
    ("Peak fleet, before spares, whole nodes and latency margin", "fleet_gpus", INT, "GPUs"),
    ("Fleet cost per month", "fleet_usd_month", USD, "US$ a month"),
    # trial 26 F16: the fleet planner export of this file budgets (Calc's review rows, computed when the Load sheet is)
    (REVIEW_FLEET_LABEL, "review_gpus", INT, "GPUs"),
    ("Budget cost per month (planner export)", "review_usd_month", USD, "US$ a month"),
    # the unit: a formula naming the Inputs' percentile (``meets_unit_formula``); this text where none is read
    ("Meets the latency targets", "meets_text", None, "p95 under load (Load), else at max batch"),
)


def meets_unit_formula() -> str:
    """The "Meets the latency targets" unit, naming the Inputs' latency percentile ("p99 under load ...")."""
    return f'="p"&{PERCENTILE_TERM}&" under load (Load), else at max batch"'


def glance_row() -> int:
    """The first row of the "At a glance" block: two rows below the last input."""
    return input_row(BUDGET_FIELDS[-1].key) + 2


def why_error_row() -> int:
    """The row of the baseline's Error line (``why_error``): the one below the "At a glance" block, so no unit
    beside a result is cut short by it (a formula showing "" still stops a long unit overflowing into column D)."""
    return glance_row() + len(GLANCE) + 1
