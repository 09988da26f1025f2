"""The Calc sheet: every step of the capacity model, one column per scenario (baseline and five levers).

``calc_rows`` describes the rows (one formula template per quantity, ``planner.workbook.formulas``); other sheets
refer to Calc cells through ``Calc.ref``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openpyxl.utils import get_column_letter

from planner.accuracy.calibration import CALIBRATED_FIELDS
from planner.api import GPU_GROUPS
from planner.engines.kernel_curves import KERNEL_FIELDS
from planner.workbook import formulas as F
from planner.workbook.formats import GB, INT, NOT_RANKED_USD, USD
from planner.workbook.layout import (
    CALC_SHEET,
    LOAD_BLANK_PRECISION,
    LOAD_ENGINE_ROWS,
    LOAD_FIRST_INPUT_ROW,
    LOAD_INPUT_KEYS,
    LOAD_LENGTH_COLS,
    LOAD_LENGTH_ROWS,
    LOAD_LEVER_ROWS,
    LOAD_SHEET,
    LOAD_STATUS_ROW,
)
from planner.workbook.spec import Probe, Sheet

#: Calc columns: (key, header, what changes against the baseline).
SCENARIOS = (
    ("base", "Baseline", "your inputs"),
    (
        "more_gpus",
        "More GPUs per replica",
        "a larger tensor-parallel group per replica: the next one above the baseline's that vLLM accepts (1, 2, 4, 8, "
        "...); more replicas of the baseline's group is the Baseline's own fleet",
    ),
    ("context_half", "Prompt halved", "half the prompt, output kept: a shorter context per sequence"),
    ("compare", "Compare model", "the model chosen on Inputs (blank: the same-size GQA model)"),
    ("kv_fp8", "KV cache fp8", "KV cache in fp8 (1 byte per value)"),
    ("weights_fp8", "Weights fp8", "weights in fp8 (1 byte per value; embeddings and head stay 16-bit)"),
)
FIRST_SCENARIO_COL = 3  # C

#: The data-parallel attention + expert parallel lever (F7 of a user trial: for DeepSeek-V3 on 8 x H200 the workbook's
#: cheapest fleet was KV cache fp8, 136 GPUs, where ``planner plan --rate`` and ``planner export``'s fifth lever find
#: dp-ep at 12 x 8 = 96). A Calc column after ``SCENARIOS``: the workbook has no formulas for the layout, so its
#: figures are numbers planner computed when the file was written or refreshed (``load_figures.dp_ep_lever``, the same
#: ``fewest_replicas`` of a dp-ep replica as the export's lever), labelled so and valid while the Load sheet is
#: current; the budget rows over them (replicas, fleet GPUs, cost, ranking) are the other columns' formulas. A dense
#: baseline's column says the lever does not apply.
DP_EP = (
    "dp_ep",
    "DP attention + EP",
    "the same GPUs as data-parallel attention ranks with the experts spread (dp-ep), computed by planner",
)
#: Every Calc and Levers column: the scenarios, then the dp-ep lever.
COLUMNS = (*SCENARIOS, DP_EP)
#: Calc rows the dp-ep column takes from the baseline's column: the same deployment, only the layout differs.
DP_EP_SAME = (
    "gpu", "model", "context", "kv", "wp", "n", "E", "trained_note", "price", "rps", "out_tok", "tpot_t", "ttft_t",
    "budget_refused", "input_refused",
)  # fmt: skip
#: Calc rows of the dp-ep column that hold a number planner computed (``load_figures.dp_ep_cells``), not a formula.
DP_EP_STORED = (
    "max_batch", "served_batch", "budget", "kv_seq", "m_step", "m_tput", "p_ttft", "rate_factor", "rate_repl",
    "dp_ep_error", "edge",
)  # fmt: skip
#: Shared rows over a stored figure that is blank for a dense baseline: #N/A there (the row key: the figure's).
DP_EP_GUARDED = {"m_cost": "m_tput", "replicas": "rate_repl"}
#: Calc rows whose formula the dp-ep column shares with the scenarios (over its own column's cells).
DP_EP_SHARED = (
    "m_cost", "tpot_ok", "ttft_ok", "unknown", "rate_used", "edge_used", "stale", "stale_unknown", "sim_meets", "replicas",
    "fleet_gpus", "fleet_usd_month", "budget_rank", "green",
)  # fmt: skip

#: The levers that change the requests, not how they are served: each scenario key, what it changes. They stay on the
#: Levers sheet as what-ifs, labelled so, but are never ranked for the cheapest fleet (Calc's same_requests row): a
#: trial's "Cheapest fleet that meets the targets" named the context-halving lever, 86 GPUs where the baseline needed
#: 979, which serves shorter prompts. Prompt halved halves each prompt and keeps its output tokens (1,000-token prompts
#: become 500 beside 300 output tokens; the context per sequence falls from 1,300 to 800 with them,
#: ``levers.context_halved_words``: trial 22 F13, where halving the context left no prompt at all). The others (More
#: GPUs, KV cache fp8, Weights fp8) deploy the same model for the same requests. The compare model answers them with
#: another model: a choice of model, not of deployment.
WORKLOAD_LEVERS = {"context_half": "prompt halved, output kept", "compare": "another model"}

#: The prompt each request sends (Calc's prompt row, the Baseline's): the Inputs' prompt tokens, else what the context
#: leaves beside the output tokens (context - output, as the Load sheet and ``planner export`` have always sent it);
#: "" where neither is given (no output tokens), #VALUE! for text.
PROMPT_USED = (
    'IF(in_prompt_tokens="",IF(AND(ISNUMBER({out_tok}),ISNUMBER({context})),{context}-{out_tok},""),'
    "IF(ISNUMBER(in_prompt_tokens),in_prompt_tokens,BAD_INPUT))"
)
#: Prompt halved's prompt: half the Baseline's (whole tokens, at least 1); "" where the Baseline has none of 1 or more.
HALVED_PROMPT = 'IF(AND(ISNUMBER({C:prompt}),{C:prompt}>=1),MAX(1,INT({C:prompt}/2)),"")'
#: Prompt halved's context: the Baseline's less what the prompt drops (its output tokens and any room beside them
#: kept); with no prompt (no output tokens given, or none left beside them), half the context, as before trial 22.
HALVED_CONTEXT = "IF(AND(ISNUMBER({C:prompt}),{C:prompt}>=1),{C:context}-{C:prompt}+{prompt},MAX(1,INT({C:context}/2)))"


def _engine_refused() -> str:
    """1 where the engine chosen on Inputs runs on NVIDIA GPUs only (``planner.catalog.resolve.NVIDIA_ONLY_ENGINES``,
    a name prefix) and the GPU is another vendor's (``engine_vendor_refused``), else 0."""
    from planner.catalog.resolve import NVIDIA_ONLY_ENGINES

    only = ",".join(f'LEFT(eng_name,{len(p)})="{p}"' for p in NVIDIA_ONLY_ENGINES)
    return f'IF(AND(OR({only}),INDEX(gpu_vendor,{{gpu_row}})<>"NVIDIA"),1,0)'


ENGINE_REFUSED = _engine_refused()


def name_of(table: str, name: str) -> str:
    """The catalog name a typed name (``name``, a cell) names: an alias on the ``table``'s alias table
    (``{table}_aliases`` beside ``{table}_alias_names``: ``fp4``, ``H200``, ``llama2-70b``, any case, as MATCH compares)
    read as its entry's name (nvfp4, H200 SXM 141GB, Llama-2-70B), as the catalog, ``planner plan`` and the Excel
    functions read it; any other name as typed (its MATCH over the listed names then gives #N/A where it is not
    listed)."""
    return f"IFERROR(INDEX({table}_alias_names,MATCH({name},{table}_aliases,0)),{name})"


#: The precision a typed name names (``{name}``, a cell): ``name_of`` over the Precisions sheet's alias table (fp4:
#: nvfp4, as ``planner plan -w fp4`` reads it).
PRECISION_OF = name_of("prec", "{name}")


def typed_name_of(table: str, cell: str) -> str:
    """``name_of`` of an Inputs cell, "" where it is blank (an empty alias cell is never matched)."""
    return f'IF({cell}="","",{name_of(table, cell)})'


#: The GPU and the models the Inputs name, read through the GPUs and Models sheets' alias tables (trial 19 F10: a GPU
#: or model typed as an alias the CLI and the Excel functions take, H200 or llama2-70b, gave #N/A in every formula).
GPU_OF = typed_name_of("gpu", "in_gpu")
MODEL_OF = typed_name_of("model", "in_model")
COMPARE_MODEL_OF = name_of("model", "in_compare_model")


def scenario_col(key: str) -> str:
    """The Calc and Levers column of a scenario key (``COLUMNS``: the dp-ep lever's after the scenarios)."""
    return get_column_letter(FIRST_SCENARIO_COL + [s[0] for s in COLUMNS].index(key))


@dataclass
class Row:
    key: str
    label: str
    unit: str = ""
    fmt: str | None = None
    template: str | dict[str, str | float | None] = ""  # all columns, or per scenario ("*": the others); float: stored
    how: str = ""  # the model function it restates
    section: bool = False
    #: the planner function this row equals, for the parity tests and column "Checked against":
    #: ``function.field`` of ``planner.api`` (``memory_plan.max_batch``), ``@batch=max`` for decode at max batch
    quantity: str | None = None
    #: a text answer that can be longer than the scenario column: wrapped, the row ``wrap`` lines tall
    wrap: int = 0


@dataclass
class Calc:
    rows: list[Row] = field(default_factory=list)
    row_of: dict[str, int] = field(default_factory=dict)
    first_row: int = 4
    #: the dp-ep column's stored numbers, by row key (``calc_rows``' ``dp_ep``)
    dp_ep: dict[str, float | str | None] = field(default_factory=dict)
    #: the dp-ep column's own formulas, by row key (``budget_rows``: meets, its text, what changes)
    dp_ep_formulas: dict[str, str] = field(default_factory=dict)

    def dp_ep_template(self, row: Row) -> str | float | None:
        """What the dp-ep column holds in ``row``: the baseline's cell, a stored number, the scenarios' formula or
        its own; None (blank) for the rows a layout's figures do not fill (the model's workings)."""
        if row.key in self.dp_ep_formulas:
            return self.dp_ep_formulas[row.key]
        if row.key in DP_EP_SAME:
            return "{C:" + row.key + "}"
        if row.key in DP_EP_STORED:
            v = self.dp_ep.get(row.key)
            return v if v is None or isinstance(v, float) else None  # text is written by calc_sheet as it is
        if row.key in DP_EP_SHARED:
            t = row.template
            t = t.get("*") if isinstance(t, dict) else t
            guard = DP_EP_GUARDED.get(row.key)  # a blank stored figure: no value, not a division by zero
            return t if guard is None else f'IF({{{guard}}}="",NO_DATA,{t})'
        return None

    def add(self, *rows: Row) -> None:
        for r in rows:
            self.row_of[r.key] = self.first_row + len(self.rows)
            self.rows.append(r)

    def ref(self, key: str, col: str, absolute: bool = False, sheet: bool = False) -> str:
        row = self.row_of[key]
        a = f"${col}${row}" if absolute else f"{col}{row}"
        return f"{CALC_SHEET}!{a}" if sheet else a


def _raw(name: str) -> str:
    return f'IF({name}="","",{name})'


def calc_rows(
    *,
    lever_kv: str,
    lever_weights: str,
    rate_factors: dict[str, float | None] | None = None,
    floors: dict[str, str | None] | None = None,
    load: bool = False,
    edges: dict[str, str | None] | None = None,
    dp_ep: dict[str, float | str | None] | None = None,
    review: tuple[int | None, str] | None = None,
) -> Calc:
    """Every Calc row. ``rate_factors``: per scenario key, the queue term planner's simulation found for the fleet
    (``load_figures.LeverLoad.rate_factor``); absent or None: blank, 1, no queue (``budget_rows``). ``floors``: per
    scenario key, why its simulated fleet is no budget, kept nearly idle (``load_figures.LeverLoad.floor``: "does
    not meet: one prompt alone takes ..."); absent or None: blank, none. ``edges``: per scenario key, planner plan's
    warning that some arrival draws miss the targets at its fleet (``load_figures.LeverLoad.edge``); absent or None:
    blank, every draw meets. ``load``: the
    workbook has a Load sheet, whose Status says whether the simulation still holds. ``dp_ep``: the dp-ep column's
    numbers planner computed, by row key (``load_figures.dp_ep_cells``; absent: blank). ``review``: the fleet
    ``planner export`` of the workbook budgets, its GPUs (None: none) and words (``budget_fleet.BudgetFleet``; absent:
    blank, not computed). None moves a row."""
    c = Calc()
    c.dp_ep = dict(dp_ep or {})
    S = lambda key, label: Row(key, label, section=True)  # noqa: E731
    c.add(
        S("s_inputs", "What this column evaluates (blank: the default)"),
        Row("gpu", "GPU", "name", None, {"base": GPU_OF, "*": "{C:gpu}"}, "an alias (H200) read as its GPU"),
        Row(
            "model",
            "Model",
            "name",
            None,
            {
                "base": MODEL_OF,
                "compare": f'IF(in_compare_model="",INDEX(model_sibling,{{C:model_row}}),{COMPARE_MODEL_OF})',
                "*": "{C:model}",
            },
            "an alias (llama2-70b) read as its model",
        ),
        Row(
            "ctx_in",
            "Context",
            "tokens",
            INT,
            {"base": _raw("in_context"), "context_half": HALVED_CONTEXT, "*": "{C:ctx_in}"},
            "Prompt halved: the baseline's context less the half of the prompt it drops (no prompt: half the context)",
        ),
        Row(
            "kv_in",
            "KV-cache precision",
            "",
            None,
            {
                "base": _raw("in_kv_precision"),
                "kv_fp8": f'"{lever_kv}"',
                "*": "{C:kv_in}",
            },
        ),
        Row(
            "wp_in",
            "Weight precision",
            "",
            None,
            {"base": _raw("in_weight_precision"), "weights_fp8": f'"{lever_weights}"', "*": "{C:wp_in}"},
        ),
        Row(
            "gpus_in",
            "GPU count",
            "GPUs",
            INT,
            {"base": _raw("in_gpus"), "more_gpus": F.next_group("{C:n}"), "*": "{C:n}"},
        ),
        Row("util_in", "Memory utilization", "", "0.00", {"base": _raw("in_memory_utilization"), "*": "{C:util_in}"}),
        Row("price_in", "Price per GPU-hour", "US$", '"$"#,##0.00', {"base": _raw("in_price"), "*": "{C:price_in}"}),
        Row("batch_in", "Batch", "sequences", INT, {"base": _raw("in_batch"), "*": "{C:batch_in}"}),
        S("s_lookup", "Catalog lookups (INDEX/MATCH by name)"),
        Row("gpu_row", "GPU row", "", None, "MATCH({gpu},gpu_names,0)", "GPUs sheet"),
        Row("model_row", "Model row", "", None, "MATCH({model},model_names,0)", "Models sheet"),
        Row("native", "Native precision", "", None, "INDEX(model_native_precision,{model_row})"),
        Row(
            "wp",
            "Weight precision used",
            "",
            None,
            'IF({wp_in}="",{native},' + PRECISION_OF.format(name="{wp_in}") + ")",
            "an alias (fp4) read as its precision",
        ),
        Row("w_row", "Weight precision row", "", None, "MATCH({wp},prec_names,0)"),
        Row(
            "ep",
            "Expert precision used",
            "",
            None,
            'IF(AND({wp_in}="",INDEX(model_native_expert_precision,{model_row})<>""),'
            "INDEX(model_native_expert_precision,{model_row}),{wp})",
            "gpt-oss keeps experts in mxfp4",
        ),
        Row("e_row", "Expert precision row", "", None, "MATCH({ep},prec_names,0)"),
        Row(
            "kv",
            "KV precision used",
            "",
            None,
            'IF({kv_in}="",IF(OR({native}="fp16",{native}="bf16",{native}="fp32"),{native},"bf16"),'
            + PRECISION_OF.format(name="{kv_in}")
            + ")",
            "default: the activation dtype; an alias (float8) read as its precision",
        ),
        Row("kv_row", "KV precision row", "", None, "MATCH({kv},prec_names,0)"),
        Row("wbpp", "Bytes per weight", "B", "0.######", "INDEX(prec_bytes,{w_row})"),
        Row("ebpp", "Bytes per expert weight", "B", "0.######", "INDEX(prec_bytes,{e_row})"),
        Row(
            "kbpp",
            "Bytes per weight kept 16-bit",
            "B",
            "0.######",
            'IF(INDEX(prec_quantizes,{w_row})="all",{wbpp},2)',
            "quantized formats keep embeddings, head, norms, routers in 16-bit",
        ),
        Row(
            "kvbpe",
            "Bytes per KV value",
            "B",
            "0.######",
            'IF(ISERROR({gpu_row}),{gpu_row},IF(AND(INDEX(prec_kv_cache,{kv_row}),OR(SUMPRODUCT(--(eng_kv_precisions<>""))=0,'
            "ISNUMBER(MATCH(INDEX(prec_names,{kv_row}),eng_kv_precisions,0)))),INDEX(prec_bytes,{kv_row}),OUT_OF_RANGE))",
            "not a KV format, or one the engine does not cache (Assumptions: kv_precisions): #NUM!",
        ),
        Row("context", "Context used", "tokens", INT, F.CONTEXT, "whole number 1 .. 2^24"),
        Row("util", "Memory utilization used", "", "0.00", F.UTIL),
    )
    facts = [
        ("layers", "num_layers", "Layers"),
        ("hidden", "hidden_size", "Hidden size"),
        ("inter", "intermediate_size", "MLP width"),
        ("vocab", "vocab_size", "Vocabulary"),
        ("heads", "num_attention_heads", "Attention heads"),
        ("kvh", "num_kv_heads", "KV heads"),
        ("mlpw", "mlp_split_width", "Dense MLP width split by TP (gcd)"),
        ("expw", "expert_split_width", "Expert width split by TP"),
        ("ssmw", "ssm_split_width", "Mamba-2 heads and groups split by TP (gcd)"),
        ("kvel", "kv_elements_per_token_per_layer", "KV values per token per layer"),
        ("full", "full_attention_layers", "Full-attention layers"),
        ("swl", "sliding_window_layers", "Sliding-window layers"),
        ("window", "sliding_window", "Sliding window"),
        ("chunked", "local_attention_chunked", "Local layers chunked (1) or sliding (0)"),
        ("attnflop", "attention_flop_per_context_token_per_layer", "Attention FLOP per cached token per layer"),
        ("pattnflop", "prefill_attention_flop_per_token_pair_per_layer", "Attention FLOP per token pair (prefill)"),
        ("non_expert", "params_non_expert", "Params non-expert"),
        ("routed", "params_routed_experts", "Params routed experts"),
        ("read", "params_read_per_step", "Params read per step (dense)"),
        ("kept16", "params_kept_16bit", "Params kept 16-bit"),
        ("read16", "params_read_kept_16bit", "Params read per step kept 16-bit"),
        ("head", "params_output_head", "Output head params (vocabulary x hidden)"),
        ("ebias", "params_routed_expert_biases", "Routed experts' bias values (stored 16-bit)"),
        ("reptp", "params_replicated_tp", "Params every tensor-parallel GPU holds whole (MLA fused q_a + kv_a)"),
        ("notloaded", "params_not_loaded", "Params not loaded"),
        ("per_expert", "params_per_expert_layer", "Params per expert per layer"),
        ("moe_layers", "moe_layers", "MoE layers"),
        ("E", "num_experts", "Experts"),
        ("k", "experts_per_token", "Experts per token"),
        ("linl", "linear_attention_layers", "Linear-attention layers"),
        ("state", "state_bytes_per_sequence", "Linear-attention state per sequence (B)"),
        ("linflop", "linear_attention_flop_per_token", "Linear-attention FLOP per token"),
        ("topk", "attended_tokens_max", "Tokens a query attends to (DSA top-k; 0: all)"),
        ("idxb", "indexer_bytes_per_token_per_layer", "DSA indexer bytes per token per layer"),
        ("dsmla", "fp8_ds_mla_bytes_per_token_per_layer", "DSA latent as vLLM's fp8_ds_mla record, bytes"),
        ("idxflop", "indexer_flop_per_context_token_per_layer", "DSA indexer FLOP per cached token per layer"),
        ("mla", "mla_attention", "MLA attention (1: yes)"),
    ]
    c.add(S("s_facts", "Model facts (Models sheet)"))
    c.add(*[Row(k, label, "", INT, f"INDEX(model_{f},{{model_row}})") for k, f, label in facts])
    c.add(
        Row(
            "kvrec",
            "KV bytes per token per layer as cached (indexer apart)",
            "B",
            INT,
            F.cached_latent_bytes(),
            "memory.kv_latent_bytes_per_token_per_layer: values x bytes, a DSA model's fp8 cache under vLLM its "
            "fp8_ds_mla record",
        )
    )
    c.add(
        Row(
            "wblock",
            "Weight block (0: none)",
            "values",
            INT,
            "IF({wp}={native},INDEX(model_weight_block_size,{model_row}),0)",
            "the published checkpoint's quantization block; weights re-quantized online have none",
        )
    )
    c.add(
        S("s_gpu", "GPU facts and engine factors (GPUs sheet)"),
        Row("mem", "Physical memory", "B", GB, "INDEX(gpu_memory,{gpu_row})"),
        Row("evm", "Measured visible memory (0: none)", "B", GB, "INDEX(gpu_visible,{gpu_row})"),
        Row("bw", "HBM bandwidth", "B/s", '#,##0,,," GB/s"', "INDEX(gpu_bandwidth,{gpu_row})"),
        Row("ic", "Interconnect", "B/s", '#,##0,,," GB/s"', "INDEX(gpu_interconnect,{gpu_row})"),
        Row("domain", "Fabric domain (larger groups use PCIe)", "GPUs", INT, "INDEX(gpu_domain,{gpu_row})"),
        Row("pcie_bw", "PCIe", "B/s", '#,##0,,," GB/s"', "INDEX(gpu_pcie_bw,{gpu_row})"),
        Row("pcie_lat", "PCIe all-reduce latency", "s", "0.000E+00", "INDEX(gpu_pcie_latency,{gpu_row})"),
        *[Row(k, label, unit, fmt, tmpl) for k, label, unit, fmt, tmpl in F.ALLREDUCE_GROUP_ROWS],
        Row("ecc", "ECC reserved fraction", "", "0.0000", "INDEX(gpu_ecc,{gpu_row})"),
        Row("price_catalog", "Catalog price (0: none)", "US$/h", '"$"#,##0.00', "INDEX(gpu_price,{gpu_row})"),
        Row("tokens", "Profiling tokens", "tokens", INT, "INDEX(gpu_tokens,{gpu_row})"),
        Row("seqs", "Sampler sequences", "sequences", INT, "INDEX(gpu_seqs,{gpu_row})"),
    )
    c.add(*[Row(f"f_{f}", f, "", "0.000###", f"INDEX(gpu_{f},{{gpu_row}})") for f in CALIBRATED_FIELDS])
    c.add(*[Row(f"f_{f}", f, "", "0.000000###", f"INDEX(gpu_{f},{{gpu_row}})") for f in KERNEL_FIELDS])
    c.add(
        Row("math_key", "Math of the weight precision", "", None, "INDEX(prec_math,{w_row})"),
        Row("fb_key", "Math fallback", "", None, "INDEX(prec_fallback,{w_row})"),
        Row(
            "peak_math",
            "Peak at that math (or its bf16/fp16 twin)",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            F.peak_or("{math_key}", F.twin("{math_key}")),
        ),
        Row(
            "peak_fb",
            "Peak at the fallback",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            F.peak_or("{fb_key}", F.twin("{fb_key}")),
        ),
        Row(
            "peak",
            "Peak used",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            "IF({peak_math}>0,{peak_math},IF({peak_fb}>0,{peak_fb}," + F.peak_or('"fp16"', '"bf16"') + "))",
            "resolve.gpu_peak_flop_per_s",
        ),
        Row(
            "peak16",
            "Peak at 16-bit math (bf16, else fp16)",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            F.peak_or('"bf16"', '"fp16"'),
            "resolve.gpu_numbers bf16_peak_flop_per_s",
        ),
        Row("ridge", "Ridge point", "FLOP/B", "#,##0.0", "{peak}/{bw}", "peak / bandwidth", quantity="ridge"),
        S("s_memory", "Memory (model.memory_plan, vLLM-style budget)"),
        Row("block", "KV block", "tokens", INT, "MAX(INT(eng_block_size),1)"),
        Row(
            "visible_raw",
            "Memory the engine sees per GPU",
            "B",
            GB,
            "IF(eng_use_engine_visible_memory,IF({evm}>0,{evm},{mem}*(1-{ecc})*eng_visible_memory_fraction),{mem}*(1-{ecc}))",
            "model.visible_memory_bytes",
        ),
        Row(
            "weight_bytes",
            "Weights (whole model)",
            "B",
            GB,
            "({non_expert}-{kept16}-{notloaded})*{wbpp}+{kept16}*{kbpp}+({routed}*{ebpp}+{ebias}*(MAX({ebpp},{kbpp})-{ebpp}))",
            "model.weight_bytes (routed experts: model.routed_expert_bytes, their biases 16-bit)",
            quantity="weight_bytes",
        ),
        Row(
            "loaded_weights",
            "Weights as the engine loads them",
            "B",
            GB,
            '{weight_bytes}+IF(AND({ep}="mxfp4",eng_mxfp4_expert_hidden_alignment>0),({routed}*{ebpp}+{ebias}*(MAX({ebpp},{kbpp})-{ebpp}))*'
            "(CEILING({hidden}/eng_mxfp4_expert_hidden_alignment,1)*eng_mxfp4_expert_hidden_alignment/{hidden}-1),0)",
            "+ model.loaded_expert_padding_bytes (MXFP4 experts' hidden size padded)",
        ),
        Row(
            "kv_token",
            "KV per token (one copy)",
            "B",
            INT,
            "("
            + F.cached_latent_bytes("IF(INDEX(prec_kv_cache,{kv_row}),INDEX(prec_bytes,{kv_row}),OUT_OF_RANGE)")
            + "+{idxb})*"
            + F.layer_tokens("1"),
            "api.kv_bytes_per_token",
            quantity="kv_bytes_per_token",
        ),
        Row(
            "ctx_layer_tokens",
            "Cached tokens summed over layers",
            "tokens",
            INT,
            F.layer_tokens("{context}"),
            "model.cached_tokens_per_layer_sum",
        ),
        Row(
            "kv_group_size",
            "Layers per KV-cache group",
            "layers",
            INT,
            "IF(MIN({full},{swl})>0,IF(MAX({full},{swl})<1.5*MIN({full},{swl}),MAX({full},{swl}),MIN({full},{swl})),"
            "MAX({full},{swl}))",
            "model.kv_cache_groups",
        ),
        Row(
            "kv_layer_slots",
            "Layer-token slots per sequence, groups padded",
            "tokens",
            INT,
            F.padded_layer_tokens("{context}"),
            "model.padded_kv_layer_tokens",
        ),
        Row(
            "ctx_attended",
            "Attended tokens summed over layers",
            "tokens",
            INT,
            F.attended_tokens("{context}"),
            "model.attended_tokens_per_layer_sum (DSA: top-k)",
        ),
        Row(
            "kv_seq_base",
            "KV per sequence (blocks, one copy; vLLM: KV groups padded)",
            "B",
            INT,
            "({kvrec}+{idxb})*IF(eng_kv_group_padding,{kv_layer_slots},"
            + F.layer_tokens(F.seq_tokens("{context}"))
            + ")",
            "model.kv_bytes (vLLM: model.padded_kv_layer_tokens)",
        ),
    )
    c.add(
        *[
            Row(
                f"mb_{g}",
                f"Max batch on {g} GPU{'s' if g > 1 else ''}",
                "sequences",
                INT,
                F.max_batch_on(str(g)),
                "for the smallest group",
            )
            for g in GPU_GROUPS
        ]
    )
    c.add(
        Row(
            "mxfp4_refused",
            "Engine cannot load the MXFP4 experts on this GPU (1)",
            "",
            INT,
            'IF(AND({ep}="mxfp4",{routed}>0),INDEX(gpu_mxfp4_refused,{gpu_row}),0)',
            "model.mxfp4_experts_refused (TensorRT-LLM 1.x below SM 9.0): every deployment figure #NUM!",
        ),
        Row(
            "weights_refused",
            "GPU does not run these weights (1)",
            "",
            INT,
            'IF(INDEX(gpu_weight_formats,{gpu_row})="",0,IF(AND({wp_in}="",OR({wp}="bf16",{wp}="fp16")),'
            'IF(ISNUMBER(SEARCH(",fp16,",INDEX(gpu_weight_formats,{gpu_row})))'
            '+ISNUMBER(SEARCH(",bf16,",INDEX(gpu_weight_formats,{gpu_row})))>0,0,1),'
            'IF(ISNUMBER(SEARCH(","&INDEX(prec_names,{w_row})&",",INDEX(gpu_weight_formats,{gpu_row}))),0,1)))',
            "deploy.weights_refused (T4: no bf16 or fp8; a 16-bit model as published runs in either): every "
            "deployment figure #NUM!",
        ),
        Row(
            "kv_refused",
            "GPU does not have this KV cache's dtype (1)",
            "",
            INT,
            'IF(OR({kv_in}="",INDEX(gpu_weight_formats,{gpu_row})=""),0,'
            'IF(AND(OR({kv}="bf16",{kv}="fp16",{kv}="fp32",{kv}="fp8"),'
            'NOT(ISNUMBER(SEARCH(","&{kv}&",",INDEX(gpu_weight_formats,{gpu_row}))))),1,0))',
            "deploy.kv_refused (T4: no bf16 cache, and no fp8 one in vLLM 0.24; int8 and int4 are the engine's "
            "matter; a blank cache follows the weights): every deployment figure #NUM!",
        ),
        Row(
            "engine_refused",
            "Engine does not run on this GPU's vendor (1)",
            "",
            INT,
            ENGINE_REFUSED,
            "deploy.vendor_error (catalog.resolve.NVIDIA_ONLY_ENGINES: TensorRT-LLM on an AMD or Intel GPU): every "
            "deployment figure #VALUE!",
        ),
        Row(
            "n_raw",
            "GPU count asked (or smallest group)",
            "GPUs",
            INT,
            f"IF({{engine_refused}}>0,BAD_INPUT,IF(OR({{mxfp4_refused}}>0,{{weights_refused}}>0,{{kv_refused}}>0),"
            f"OUT_OF_RANGE,{F.choose_group()}))",
            "deploy.choose_gpus; deploy.vendor_error; deploy.release_error; deploy.weight_precision_error; "
            "deploy.kv_precision_error",
        ),
        Row("mb_raw", "Max batch on that count", "sequences", INT, F.max_batch_on("{n_raw}")),
        Row(
            "n",
            "GPUs in the group",
            "GPUs",
            INT,
            "IF({mb_raw}>=1,{n_raw},NOT_FIT)",
            "does not fit: #NUM!",
            quantity="memory_plan.gpus",
        ),
        Row(
            "visible",
            "Memory the engine sees per GPU",
            "B",
            GB,
            "IF(ISERROR({n}),{n},{visible_raw})",
            quantity="memory_plan.visible_bytes_per_gpu",
        ),
        Row(
            "reserve",
            "Reserve per GPU (activation peak + non-torch)",
            "B",
            GB,
            F.reserve("{n}"),
            "model.activation_peak_bytes + reserve_bytes_per_gpu",
            quantity="memory_plan.reserve_bytes_per_gpu",
        ),
        Row(
            "budget",
            "KV budget per GPU",
            "B",
            GB,
            F.budget("{n}", "{reserve}"),
            "model.kv_budget_bytes_per_gpu",
            quantity="memory_plan.kv_budget_bytes_per_gpu",
        ),
        Row("repl", "KV replication", "x", "0.00", F.replication("{n}"), "model.kv_replication"),
        Row(
            "kv_token_gpu",
            "KV per token per GPU",
            "B",
            INT,
            "({kvrec}+{idxb})*({full}+{swl})*{repl}/{n}",
            quantity="memory_plan.kv_bytes_per_token_per_gpu",
        ),
        Row(
            "kv_seq",
            "KV per sequence (group)",
            "B",
            GB,
            F.sequence_bytes("{n}"),
            quantity="memory_plan.kv_bytes_per_sequence",
        ),
        Row(
            "kv_tokens",
            "KV cache tokens (group)",
            "tokens",
            INT,
            "INT(MAX({budget},0)/({kv_token_gpu}*{block}))*{block}",
            "model.kv_cache_tokens",
            quantity="memory_plan.kv_cache_tokens",
        ),
        Row(
            "max_batch",
            "Max batch",
            "sequences",
            INT,
            "INT(MAX({budget}*{n},0)/{kv_seq})",
            "model.max_batch_from_budget",
            quantity="memory_plan.max_batch",
        ),
        Row(
            "served_batch",
            "Max batch the engine serves",
            "sequences",
            INT,
            "MIN({max_batch},{seqs})",
            "deploy.served_batch: what memory holds, at most the engine's max_num_seqs on this GPU (Sampler sequences)",
            quantity="served_batch",
        ),
        S("s_decode_shared", "Decode (model.decode_step)"),
        Row("ppt", "Params per token", "params", INT, "{read}+{moe_layers}*{k}*{per_expert}"),
        Row(
            "attn_decode",
            "Attention FLOP per token",
            "FLOP",
            "0.000E+00",
            "{attnflop}*{ctx_attended}+{idxflop}*{full}*{context}+{linflop}",
            "model.decode_attention_flop / batch",
        ),
        Row(
            "overhead",
            "Step overhead",
            "s",
            "0.000E+00",
            "{f_step_overhead_s}+{f_layer_overhead_s}*{layers}+{f_moe_layer_overhead_s}*{moe_layers}",
        ),
        Row("price", "Price per GPU-hour used", "US$", '"$"#,##0.00', F.PRICE),
        Row("batch", "Batch asked (blank: max batch)", "sequences", INT, F.BATCH_IN),
        Row(
            "d_batch",
            "Batch (if it fits)",
            "sequences",
            INT,
            "IF({batch}>{max_batch},NOT_FIT,{batch})",
            "more than max batch: #NUM!",
        ),
    )
    for prefix, batch_key, title, at in (
        ("d", "d_batch", "at the chosen batch", "chosen"),
        ("m", "served_batch", "at max batch (the engine's)", "max"),
    ):
        c.add(S(f"s_{prefix}", f"Decode step {title}"))
        for key, label, unit, fmt, tmpl in F.decode_block(batch_key):
            q = {
                "step": "step_s",
                "tput": "throughput_tokens_per_s",
                "mfu": "mfu",
                "mbu": "mbu",
                "intensity": "intensity_flop_per_byte",
                "bytes": "bytes_moved",
                "flop": "flop",
                "tmem": "memory_time_s",
                "tflop": "compute_time_s",
                "comm": "communication_s",
            }.get(key)
            function = "cost_per_mtok" if key == "cost" else f"decode_step.{q}" if q else None
            c.add(
                Row(
                    f"{prefix}_{key}",
                    label,
                    unit,
                    fmt,
                    F.local(tmpl, prefix),
                    quantity=f"{function}@batch={at}" if function else None,
                )
            )
    c.add(S("s_p", "Prefill of one prompt of the context (api.prefill)"))
    for key, label, unit, fmt, tmpl in F.prefill_block():
        q = {"ttft": "ttft_s", "flop": "flop", "bytes": "bytes_moved", "intensity": "intensity_flop_per_byte"}.get(key)
        c.add(Row(f"p_{key}", label, unit, fmt, F.local(tmpl, "p"), quantity=f"prefill.{q}" if q else None))
    c.add(S("s_floor", FLOOR_SECTION))
    for prefix, label in (
        ("d", "Datasheet floor of the decode step at the chosen batch"),
        ("m", "Datasheet floor of the decode step at max batch"),
        ("p", "Datasheet floor of the prefill (TTFT)"),
    ):
        c.add(Row(f"{prefix}_floor", label, "s", "0.000E+00", datasheet_floor(prefix), FLOOR_RULE))
    c.add(
        S("s_levers", "Comparing the scenarios (Levers sheet)"),
        Row(
            "trained_note",
            "Context within the model's trained maximum",
            "",
            None,
            'IF(ISERROR({context}),"",IF({context}>INDEX(model_max_context,{model_row}),'
            '"no: "&TEXT(INDEX(model_max_context,{model_row}),"#,##0")&" max","yes"))',
            "beyond it memory and time are extrapolated",
        ),
    )
    budget_rows(c, rate_factors or {}, load, floors or {}, edges or {})
    review_rows(c, review)
    return c


#: Calc's section of the datasheet roofline floors, and the rule each restates.
FLOOR_SECTION = "Datasheet roofline floors: no run is faster (the lower bound of the Results' ranges)"
FLOOR_RULE = (
    "max(bytes / (GPUs x HBM bandwidth), FLOPs / (GPUs x peak)): report.Plan.decode_floor_s (MBU or MFU 100%) and "
    "its ttft_floor_s, which planner plan's ranges never go below"
)


def datasheet_floor(prefix: str) -> str:
    """The datasheet roofline floor of a Calc block (``prefix`` d, m: a decode step; p: the prefill), as a template:
    max(bytes / (GPUs x bandwidth), FLOPs / (GPUs x peak)), the datasheet's bandwidth and peak at the weights' math
    without the engine's efficiency factors: the time at MBU or MFU 100% (``planner.report.Plan.decode_floor_s``:
    step x max(MBU, MFU); the prefill's ``ttft_floor_s``: its bytes and FLOPs at the decode step's bandwidth and
    peak, the same GPU and precision). ``planner plan`` clamps both ends of each time range to it: a range from
    another engine's residuals may not promise a run faster than the hardware allows (trial 13 F5: Gaudi 3's TPOT
    low end was 20.5 ms where the floor is 32.1)."""
    return f"MAX({{{prefix}_bytes}}/({{n}}*{{bw}}),{{{prefix}_flop}}/({{n}}*{{peak}}))"


def _number_or_blank(name: str, scale: str = "") -> str:
    """An optional numeric input: "" when blank, the number (times ``scale``), or #VALUE! for text."""
    return f'IF({name}="","",IF(ISNUMBER({name}),{name}{scale},BAD_INPUT))'


def budget_refusal() -> str:
    """A formula naming the first budget input (``BUDGET_FIELDS``, in their order) that ``planner export`` and
    ``refresh`` refuse, worded as ``planner.workbook.reader`` refuses it without the file's path ("Inputs!B14 (Peak
    traffic) must be above 0 requests/s; got -3"), "" where each is blank or accepted. The fleet cells showed #NUM!
    for a peak of -3 while the Error line was empty and "Meets the latency targets" said yes; a target typed in
    seconds (0.05 in the TPOT cell) read as 0.05 ms with no hint (``layout.SECONDS_SLIP``).

    Each check reads N(cell) (0 for text), so no test of a number errs on text: Excel's AND evaluates every argument."""
    from planner.api import MAX_CONTEXT_TOKENS
    from planner.units import count_accepted
    from planner.workbook.layout import (
        BUDGET_FIELDS,
        INPUTS_SHEET,
        MAX_BURSTINESS,
        SECONDS_SLIP,
        SHAPE_REFUSAL,
        input_row,
    )

    formula = '""'
    for f in reversed(BUDGET_FIELDS):
        x, num = f.name, f"N({f.name})"
        where = f'"{INPUTS_SHEET}!B{input_row(f.key)} ({f.label}) '
        quoted = f'"\'"&{x}&"\'"'  # text as shown_name quotes it: 'fast'
        checks = [(f'AND({x}<>"",NOT(ISNUMBER({x})))', f'{where}must be a number ({f.unit}); got "&{quoted}')]
        number = f"ISNUMBER({x})"
        if f.kind in ("rate", "ms"):
            checks.append((f"AND({number},{num}<=0)", f'{where}must be above 0 {f.unit}; got "&{x}'))
        elif f.kind == "count":
            bad = f"OR({num}<1,{num}>{MAX_CONTEXT_TOKENS},{num}<>INT({num}))"
            checks.append(
                (f"AND({number},{bad})", f'{where}must be {count_accepted(f.unit, MAX_CONTEXT_TOKENS)}; got "&{x}')
            )
        elif f.kind == "share":
            checks.append((f"AND({number},OR({num}<0,{num}>=1))", f'{where}must be 0 or more and below 1; got "&{x}'))
        elif f.kind == "percentile":  # reader._convert's words (planner.export.scenario.reported_percentile's)
            accepted = "accepted: 50, 90, 95 or 99"
            checks.append(
                (
                    f"AND({number},{num}>0,{num}<1)",
                    f'{where}"&{x}&" reads as a fraction; write the percentile as "&{x}*100&" (p"&{x}*100&" and "&'
                    f'{x}*100&"% read the same); {accepted}"',
                )
            )
            checks.append(
                (
                    f"AND({number},{num}<>50,{num}<>90,{num}<>95,{num}<>99)",
                    f'{where}"&{x}&": the simulation reports p50, p90, p95 and p99; give 50, 90, 95 or 99"',
                )
            )
        elif f.kind == "shape":  # reader._convert's words
            bad = f"OR({num}<=0,{num}>{MAX_BURSTINESS})"
            checks.append((f"AND({number},{bad})", f'{where}{SHAPE_REFUSAL}; got "&{x}'))
        if f.key == "prompt_tokens":  # reader.prompt_refusal's words: prompt + output must fit the context
            out, ctx = "in_output_tokens", "in_context"
            beside = f'IF(ISNUMBER({out})," plus "&TEXT({out},"#,##0")&" output tokens","")'
            checks.append(
                (
                    f"AND({number},ISNUMBER({ctx}),{num}+N({out})>N({ctx}))",
                    f'{where}"&TEXT({x},"#,##0")&{beside}&" is more than the context of "&TEXT({ctx},"#,##0")&'
                    f'" tokens each sequence holds: give at most "&TEXT(MAX(N({ctx})-N({out}),0),"#,##0")&'
                    '" prompt tokens, a longer context, or leave it blank (context - output)"',
                )
            )
        if f.slip_below_ms is not None:  # reader.slip_message's words
            checks.append(
                (
                    f"AND({number},{num}<{f.slip_below_ms:g})",
                    f'{where}"&{x}&" ms {SECONDS_SLIP}; write "&{x}*1000&" for "&{x}&" s (this cell takes milliseconds)"',
                )
            )
        for condition, reason in reversed(checks):
            formula = f"IF({condition},{reason},{formula})"
    return formula


#: What a lever that changes nothing (Calc's no_change row) reads in each Levers budget row (Calc's void row).
NO_CHANGE_WORDS = "no change"
#: ... and the Weights fp8 lever of a model whose experts ship smaller than fp8 (gpt-oss; ``EXPERTS_SMALLER``).
NO_SAVING_WORDS = "no saving"
#: ... and the DP attention + EP lever of a dense baseline, no experts to spread (its first row says why; the words fit
#: a Levers column on one line, where "does not apply (dense model)" printed as "t apply (dense model)").
DENSE_WORDS = "does not apply"

#: What a ranking row holds for a scenario that cannot be chosen (no cost, or it misses a target).
NOT_RANKED = "POWER(10,300)"


#: "Meets the latency targets" where a budget input is refused (Calc's budget_refused row; the Error line names it).
REFUSED_MEETS = "not known: a budget input is refused (Inputs: Error line)"
#: ... where another input is refused (Calc's input_refused row): every figure is an error, nothing is judged (trial 13
#: F16: context typed as the text '4096' left every figure #VALUE! beside "yes (simulated p95)").
INPUT_REFUSED_MEETS = "not known: an input is refused (Inputs: Error line)"
#: ... where the Load sheet is stale: its simulation, and the rate factor the fleet rests on, are for other Inputs
#: (trial 13 F11: context 4,096 -> 16,384 read "yes" and a green cheapest fleet about 10x too small).
STALE_MEETS = "not known: the Load sheet is stale; run planner workbook refresh"
#: ... where no fleet is asked for: a blank peak traffic or output tokens (a legitimate "unit costs only" choice, not
#: an error or a reason to refresh: trial 19 F11).
NO_FLEET_ASKED = {
    "rps": "no peak traffic given (Inputs): no fleet asked for",
    "out_tok": "no output tokens given (Inputs): no fleet asked for",
}
#: Each of those in the Levers' cheapest-fleet row, its one short cell: the words before the advice.
UNKNOWN_SHORT = {text: text.split(";")[0].split(" (")[0] for text in (INPUT_REFUSED_MEETS, REFUSED_MEETS, STALE_MEETS)}


#: How the Inputs' Error line begins where the batch is the input refused (``inputs.why_error``'s last check).
BATCH_REFUSED = "batch "


def input_refusal() -> str:
    """1 where the Inputs' Error line (``inputs.why_error``) names a refused input other than a budget input (those are
    Calc's budget_refused row) and the batch for the speed figures (``BATCH_REFUSED``: the fleet is sized at max batch,
    so it and its verdict stand: trial 19 F12), else 0. The line also says where a GPU has no catalog price and none
    is typed (``NO_CATALOG_PRICE``): nothing typed is refused there, and the targets are judged; nor by its warning
    (``WARNING_PREFIX``: a price typed per instance, ``inputs.price_warning``). An error in the line itself counts as
    a refusal."""
    from planner.workbook.layout import INPUTS_SHEET, NO_CATALOG_PRICE, WARNING_PREFIX, why_error_row

    line = f"{INPUTS_SHEET}!$D${why_error_row()}"
    batch, warning = f"Error: {BATCH_REFUSED}", WARNING_PREFIX
    kept = (
        f'OR({line}="",{line}="Error: {NO_CATALOG_PRICE}",{line}="Error: "&{{budget_refused}},'
        f'LEFT({line},{len(batch)})="{batch}",LEFT({line},{len(warning)})="{warning}")'
    )
    return f"IF(ISERROR({line}),1,IF({kept},0,1))"


def verdict_unknown() -> str:
    """Why a scenario's targets are not judged, as a formula ("" where they are): an input refused
    (``INPUT_REFUSED_MEETS``), a budget input refused (``REFUSED_MEETS``), no fleet asked for (``NO_FLEET_ASKED``: a
    blank peak traffic or output tokens), or its fleet resting on a simulation of
    other Inputs (Calc's stale row: ``STALE_MEETS``; the simulated p95 and the rate factor are for another scenario;
    the no-queue check at max batch is no verdict either: a queue adds to TTFT, and a fleet under load runs below its
    max batch). Every "Meets the latency targets" cell and the cheapest fleet read it first."""
    return (
        f'IF({{input_refused}}=1,"{INPUT_REFUSED_MEETS}",IF({{budget_refused}}<>"","{REFUSED_MEETS}",'
        f'IF({{rps}}="","{NO_FLEET_ASKED["rps"]}",IF({{out_tok}}="","{NO_FLEET_ASKED["out_tok"]}",'
        f'IF({{stale}}=1,"{STALE_MEETS}","")))))'
    )


def _load_cell(col: str, row: int) -> str:
    return f"{LOAD_SHEET}!${col}${row}"


def _length_cells() -> list[str]:
    """The Matches cells of the Load sheet's latency percentile and high lengths (``LOAD_LENGTH_ROWS``)."""
    return [_load_cell(LOAD_LENGTH_COLS[-1], r) for r in LOAD_LENGTH_ROWS]


def load_rest_same() -> str:
    """1 where every Input and engine parameter the Load sheet's figures depend on, but the ones a lever changes
    (model, context, precisions, GPU count) and the compare model, matches the one simulated (its Matches column reads
    "yes"), else 0."""
    varied = {"model", "context", "kv_precision", "weight_precision", "gpus", "compare_model"}
    rows = [LOAD_FIRST_INPUT_ROW + i for i, k in enumerate(LOAD_INPUT_KEYS) if k not in varied]
    cells = [_load_cell("D", r) for r in (*rows, *LOAD_ENGINE_ROWS)] + _length_cells()
    return "IF(AND(" + ",".join(f'{c}="yes"' for c in cells) + "),1,0)"


def load_only_peak_changed() -> str:
    """1 where every Input and engine parameter the Load sheet's figures depend on matches the one simulated (its
    Matches column reads "yes") but the peak traffic, else 0: each replica then serves the requests simulated at the
    rate simulated, so the old rate factor sizes the new peak up to the replicas' rounding (trial 23: 40 GPUs at 50
    requests/s, ~48 at 60). Any other change (context, precision, prompt, a target) changes the queue term itself:
    trial 24 F5 read ~148 GPUs on the default scenario's factor, 0.218, where the refreshed one (0.94) needs 34."""
    rows = [LOAD_FIRST_INPUT_ROW + i for i, k in enumerate(LOAD_INPUT_KEYS) if k != "peak_requests_per_s"]
    cells = [_load_cell("D", r) for r in (*rows, *LOAD_ENGINE_ROWS)] + _length_cells()
    return "IF(AND(" + ",".join(f'{c}="yes"' for c in cells) + "),1,0)"


def simulated_as(rate_factor_row: int) -> str:
    """The Levers scenario (1 to 6, ``SCENARIOS``' order) whose simulation on the Load sheet is the baseline's
    scenario now, else "": the Load sheet's other Inputs unchanged (``load_rest_same``), and the lever's model,
    context, KV-cache and weight precision (as typed, "default" / "as published" for blank), GPU group (the
    baseline's group now) and prompt tokens (Calc's prompt row: typed, or context - output) equal to the Inputs', and
    a fleet simulated for it (a rate factor). Typing the Weights fp8 lever on Inputs is that lever's scenario: its
    simulation sizes the baseline (trial 19 F3: 88 GPUs estimated beside the lever's simulated 76 for the same
    deployment)."""
    now = {"model": "in_model", "context": "in_context", "kv_precision": "in_kv_precision"}
    now["weight_precision"] = "in_weight_precision"
    conds = []
    for i, (key, _, _) in enumerate(SCENARIOS, 1):
        col = scenario_col(key)

        def used(k: str, col: str = col) -> str:
            return _load_cell(col, LOAD_LEVER_ROWS[k])

        terms = [f"ISNUMBER(${col}${rate_factor_row})"]
        terms.append(F.same_input(used("model"), now["model"], "text"))
        terms.append(F.same_input(used("context"), now["context"], "number"))
        for k in ("kv_precision", "weight_precision"):
            typed = f'IF({used(k)}="{LOAD_BLANK_PRECISION[k]}","",{used(k)})'
            terms.append(F.same_input(typed, now[k], "text"))
        terms.append(f"IFERROR({used('gpus')}={{n}},FALSE)")
        # the prompt the lever's run sent (Prompt halved: half the Baseline's) is the one the Inputs send now
        terms.append(f'IFERROR(""&{used("prompt_tokens")}=""&{{prompt}},FALSE)')
        conds.append((i, "AND(" + ",".join(terms) + ")"))
    formula = '""'
    for i, cond in reversed(conds):
        formula = f"IF({cond},{i},{formula})"
    return f'IF({{load_rest_same}}=1,{formula},"")'


#: Calc's label of the stored queue term; ``update.refresh_load`` finds the row by it.
RATE_FACTOR_LABEL = "Rate factor from planner's queue simulation (Load sheet; 1: none)"
#: Calc's label of the stored near-idle refusal (``load_figures.LeverLoad.floor``); ``update.refresh_load`` finds it.
FLOOR_LABEL = "Simulated fleet kept nearly idle: why it is no budget (Load sheet; blank: none)"
#: Calc's label of the stored edge warning (``load_figures.LeverLoad.edge``); ``update.refresh_load`` finds it.
EDGE_LABEL = "Simulated fleet at the targets' edge: arrival draws that miss (Load sheet; blank: every draw meets)"
#: What a scenario's fleet rows (requests/s per replica, replicas, GPUs, cost) read where its Calc floor row is
#: not blank: no figure to budget or sum (its "Meets the latency targets" row says why).
FLOOR_SHORT = "does not meet"


#: Calc's label of the budget fleet's GPUs, by which ``refresh`` finds the row it writes (``update._write_review``).
REVIEW_GPUS_LABEL = "Budget fleet as planner export of this file sizes it (+ latency margin and spare replicas)"
REVIEW_WORDS_LABEL = "Budget fleet: what it is, or why there is none (planner export's sizing)"


def _stored_text(words: str) -> str:
    """A text Calc stores as it is (``calc_sheet``: a template of one quoted string), its own quotes made single."""
    return '"' + words.replace('"', "'") + '"'


def review_rows(c: Calc, review: tuple[int | None, str] | None) -> None:
    """The fleet ``planner export`` of this workbook budgets (trial 26 F16), Baseline column only:

    review GPUs     a number planner computed when the Load sheet was (``planner.workbook.budget_fleet``: the
                    review's own ``sized_in_layouts`` on the scenario export reads from these Inputs: its latency
                    margin, spare replicas, whole nodes), stored, not a formula; text where it sizes none (why);
                    blank where nothing was computed
    review cost     review GPUs x price per GPU-hour x 730 h a month (``sizing.HOURS_PER_MONTH``), the review's
                    monthly cost of a rented fleet; the text where there are no GPUs
    """
    from planner.export.sizing import HOURS_PER_MONTH

    gpus, words = review if review is not None else (None, "")
    stored = float(gpus) if gpus is not None else (_stored_text(words) if words else None)
    how = "planner.workbook.budget_fleet (planner.export.review.sized_in_layouts): computed by planner, not a formula"
    c.add(
        Row("s_review", "The budget fleet planner export of this file gives", section=True),
        Row("review_gpus", REVIEW_GPUS_LABEL, "GPUs", INT, {"base": stored, "*": None}, how),
        Row(
            "review_words",
            REVIEW_WORDS_LABEL,
            "",
            None,
            {"base": _stored_text(words) if words else None, "*": None},
            how,
        ),
        Row(
            "review_usd_month",
            "Budget fleet cost per month (review GPUs x price per GPU-hour x 730 h)",
            "US$",
            USD,
            {
                "base": f"IF(ISNUMBER({{review_gpus}}),{{review_gpus}}*{{price}}*{HOURS_PER_MONTH:g},"
                f'IF({{review_gpus}}="","",{{review_gpus}}))',
                "*": None,
            },
            "planner.export.sizing.HOURS_PER_MONTH: a rented fleet's month",
        ),
    )


def budget_rows(
    c: Calc, rate_factors: dict[str, float | None], load: bool, floors: dict | None = None, edges: dict | None = None
) -> None:
    """The budget question per scenario, each at its own max batch: does it meet the latency targets, and what
    fleet serves the peak traffic at what monthly cost.

        meets TPOT      TPOT at max batch <= TPOT target (1, else 0; a blank target or an error is 0)
        meets TTFT      TTFT of a whole-context prompt <= TTFT target (same rule)
        rate factor     the queue term: a number planner's queue simulation computed (``rate_factors``, the Load
                        sheet's figures: the simulated fleet's requests/s per replica / the no-queue rate below),
                        stored, not a formula; blank (1, no queue) where nothing was simulated or no fleet met
        floor           why the simulated fleet is no budget (``floors``, stored words, blank where it is one): the
                        fewest replicas meeting the targets are kept nearly idle, the TTFT target close to one
                        prompt's own time (``planner.serving.fleet.near_ttft_floor``, the rule planner plan warns
                        with and planner export counts as not met); the scenario then does not meet the targets and
                        has no fleet: its fleet rows read ``FLOOR_SHORT`` (trial 29 F2: 5,712 GPUs, $15.0M a month
                        read "yes" for More GPUs per replica)
        edge            where some arrival draws of the peak traffic miss the targets at the simulated fleet, planner
                        plan --rate's warning (``edges``, stored words: ``serving.fleet.draws_edge``; blank where
                        every draw meets); "Meets the latency targets" then reads "yes, at the edge: ..." (trial 30
                        F4: "yes" where plan warned 4 of 5 draws miss at the same 8 GPUs)
        unknown         why nothing is judged ("" where it is): an input refused (the Inputs' Error line), a budget
                        input refused, or the Load sheet stale (``verdict_unknown``)
        meets           0 where unknown; 1 where the simulated fleet meets both targets at p95 (the Load sheet
                        current), else meets TPOT x meets TTFT
        requests/s per replica   rate factor / (output tokens / throughput at max batch + TTFT of a whole-context
                        prompt): with the simulation's factor, the simulated fleet's rate, so the replicas are the
                        fewest whose simulated p95 TTFT and TPOT meet the targets (``planner export``'s rule)
        replicas        max(1, ceil(peak requests/s / requests/s per replica))  (sizing.replicas_for_rate, no spare)
        fleet GPUs      replicas x GPUs in the group
        monthly cost    fleet GPUs x price per GPU-hour x 730 h  (sizing.cloud_usd_per_gpu_month)
        green           serves the same requests (not a ``WORKLOAD_LEVERS`` one), meets both targets, has a monthly
                        cost, and no other such scenario costs less

    Assumption: without a Load sheet the "meets" rows judge each replica at its max batch with a prompt's prefill
    holding it alone and no queue. With one, the verdicts are the simulation's while its Status is current and "not
    known" once it is stale (a no-queue "yes" at 89% of the TTFT target was read as final: trial 13 F11); the fleet
    rows keep the old rate factor, their unit cells marked STALE: an estimate where only the peak traffic changed
    (``load_only_peak_changed``), else one the Inputs and Levers do not show (Calc's stale_unknown: trial 24 F5).
    """
    from planner.export.sizing import HOURS_PER_MONTH

    first, last = scenario_col(SCENARIOS[0][0]), scenario_col(SCENARIOS[-1][0])
    c.add(
        Row(
            "s_budget", "Budget: the fleet for the peak traffic, each scenario at its max batch (Levers)", section=True
        ),
        Row(
            "rps",
            "Peak traffic",
            "requests/s",
            "#,##0.###",
            {"base": _number_or_blank("in_peak_requests"), "*": "{C:rps}"},
        ),
        Row(
            "out_tok",
            "Output tokens per request",
            "tokens",
            INT,
            {"base": _number_or_blank("in_output_tokens"), "*": "{C:out_tok}"},
        ),
        Row(
            "prompt",
            "Prompt tokens per request (blank: context - output)",
            "tokens",
            INT,
            {"base": PROMPT_USED, "context_half": HALVED_PROMPT, "*": "{C:prompt}"},
            "the Load sheet's requests (load_figures.lever_inputs): Prompt halved halves it, output kept",
        ),
        Row(
            "tpot_t",
            "TPOT target",
            "s",
            "0.000###",
            {"base": _number_or_blank("in_tpot_target_ms", "/1000"), "*": "{C:tpot_t}"},
        ),
        Row(
            "ttft_t",
            "TTFT target",
            "s",
            "0.000###",
            {"base": _number_or_blank("in_ttft_target_ms", "/1000"), "*": "{C:ttft_t}"},
        ),
        Row(
            "budget_refused",
            "Budget input refused (Inputs; blank: none)",
            "",
            None,
            {"base": budget_refusal(), "*": "{C:budget_refused}"},
            "planner.workbook.reader: what planner export refuses; the Inputs' Error line shows it",
        ),
        Row(
            "input_refused",
            "Another input refused (Inputs' Error line; 1 yes)",
            "",
            INT,
            {"base": input_refusal(), "*": "{C:input_refused}"},
            "the Error line names an input planner plan refuses (not a budget input, not a GPU without a catalog "
            "price: nothing typed is refused there)",
        ),
        Row(
            "unknown",
            "Why the targets are not judged (blank: they are)",
            "",
            None,
            verdict_unknown(),
            "an input refused, a budget input refused, or the fleet resting on a simulation of other Inputs (stale)",
            wrap=4,
        ),
        Row(
            "tpot_ok",
            "Meets the TPOT target at max batch (1 yes, 0 no)",
            "",
            INT,
            "IF(AND(ISNUMBER({m_step}),ISNUMBER({tpot_t})),IF({m_step}<={tpot_t},1,0),0)",
            "a blank target or an error counts as not met",
        ),
        Row(
            "ttft_ok",
            "Meets the TTFT target (1 yes, 0 no)",
            "",
            INT,
            "IF(AND(ISNUMBER({p_ttft}),ISNUMBER({ttft_t})),IF({p_ttft}<={ttft_t},1,0),0)",
            "a blank target or an error counts as not met",
        ),
        Row(
            "rate_factor",
            RATE_FACTOR_LABEL,
            "",
            "0.000",
            {key: rate_factors.get(key) for key, _, _ in SCENARIOS},
            "planner.workbook.load_figures (LeverLoad.rate_factor): a number computed by planner's queue "
            "simulation, not a formula; blank: not simulated (1, no queue)",
        ),
        Row(
            "floor",
            FLOOR_LABEL,
            "",
            None,
            {key: _stored_text(words) if (words := (floors or {}).get(key)) else None for key, _, _ in SCENARIOS},
            "planner.workbook.load_figures (LeverLoad.floor, serving.fleet.near_ttft_floor): words planner computed; "
            "blank: none",
            wrap=4,
        ),
        Row(
            "edge",
            EDGE_LABEL,
            "",
            None,
            {key: _stored_text(words) if (words := (edges or {}).get(key)) else None for key, _, _ in SCENARIOS},
            "planner.workbook.load_figures (LeverLoad.edge, serving.fleet.draws_edge): words planner computed, as "
            "planner plan --rate warns; blank: every draw meets",
            wrap=4,
        ),
    )
    current = f'LEFT({LOAD_SHEET}!$B${LOAD_STATUS_ROW},7)="current"'
    factors = f"${first}${c.row_of['rate_factor']}:${last}${c.row_of['rate_factor']}"
    edge_words = f"${first}${c.row_of['edge']}:${last}${c.row_of['edge']}"
    c.add(
        Row(
            "load_rest_same",
            "Load sheet: its other Inputs and engine as simulated (1 yes; all but model, context, precisions, GPUs)",
            "",
            INT,
            {"base": load_rest_same() if load else "0", "*": None},
            "the Load sheet's Matches column",
        ),
        Row(
            "sim_lever",
            "Load sheet: the scenario simulated as the baseline's now (1-6 in Levers order; blank: none)",
            "",
            INT,
            {"base": simulated_as(c.row_of["rate_factor"]) if load else '""', "*": None},
            "simulated_as: the lever whose model, context, precisions and group are the Inputs' now",
            wrap=2,
        ),
        Row(
            "rate_used",
            "Rate factor the fleet uses (Baseline: that scenario's)",
            "",
            "0.000",
            {
                "base": f"IF(ISNUMBER({{sim_lever}}),INDEX({factors},{{sim_lever}}),{{rate_factor}})",
                "*": "{rate_factor}",
            },
            "while the Load sheet is stale, the baseline takes the rate factor of the lever simulated as its scenario",
        ),
        Row(
            "edge_used",
            "Edge of the targets the fleet uses (Baseline: that scenario's; blank: every arrival draw meets)",
            "",
            None,
            {
                "base": f'IF(ISNUMBER({{sim_lever}}),INDEX({edge_words},{{sim_lever}})&"",{{edge}}&"")',
                "*": '{edge}&""',
            },
            "as rate_used: the edge words of the lever simulated as the baseline's scenario",
            wrap=4,
        ),
        Row(
            "stale",
            "Fleet rests on a simulation of other Inputs (1: stale, an estimate)",
            "",
            INT,
            {
                "base": f'IF(OR({current},ISNUMBER({{sim_lever}}),{{rps}}="",{{out_tok}}=""),0,1)',
                "*": f'IF(OR({current},{{rps}}="",{{out_tok}}=""),0,1)',
            }
            if load
            else "0",
            "the Load sheet's Status not current, unless (Baseline) a lever simulated the Inputs' scenario; never "
            "where no fleet is asked for (a blank peak traffic or output tokens)",
        ),
        Row(
            "stale_unknown",
            "Stale fleet not known: more than the peak changed (1 yes)",
            "",
            INT,
            f"IF(AND({{stale}}=1,{load_only_peak_changed()}=0),1,0)" if load else "0",
            "load_only_peak_changed: another scenario's rate factor is no estimate (trial 24 F5)",
        ),
        Row(
            "sim_meets",
            "Simulated p95 meets the targets with this fleet (1 yes, 0 no)",
            "",
            INT,
            "IF(AND(ISNUMBER({rate_used}),{stale}=0),1,0)" if load else "0",
            "a rate factor exists only where the simulation found a fleet meeting both targets; it holds while the "
            "fleet is not stale",
        ),
        Row(
            "meets",
            "Meets both targets (1 yes, 0 no)",
            "",
            INT,
            'IF({unknown}<>"",0,IF({floor}<>"",0,IF({sim_meets}=1,1,{tpot_ok}*{ttft_ok})))',
            "never with an input refused or the Load sheet stale; the simulation's answer while current, else (no "
            "Load sheet) both checks at max batch with no queue",
        ),
        Row(
            "meets_text",
            "Meets the latency targets",
            "",
            None,
            'IF({unknown}<>"",{unknown},IF({floor}<>"",{floor},'
            'IF({sim_meets}=1,IF({edge_used}<>"","yes, at the edge: "&{edge_used},"yes (simulated p"&IF(in_latency_percentile="",95,in_latency_percentile)&")"),IF({meets}=1,"yes","no: "&IF({tpot_ok}=0,"TPOT "&IFERROR(TEXT({m_step}*1000,"0.0")&" ms > "'
            '&TEXT(ROUND({tpot_t}*1000,9),"0.0##")&" ms","not known (blank target or error)"),"TPOT ok")'
            '&IF({ttft_ok}=0,", TTFT "&IFERROR(TEXT({p_ttft}*1000,"#,##0")&" ms > "&TEXT(ROUND({ttft_t}*1000,9),'
            'IF(ROUND({ttft_t}*1000,9)=INT(ROUND({ttft_t}*1000,9)),"#,##0","#,##0.0##"))'
            '&" ms","not known (blank target or error)"),"")))))',
            wrap=3,  # "no: TPOT 61.1 ms > 50.0 ms, TTFT 1,234 ms > 500 ms" in a 17-wide column
        ),
        Row(
            "rate_repl",
            "Requests/s one replica takes (rate factor x the no-queue rate)",
            "requests/s",
            "#,##0.00",
            'IF(ISERROR({m_tput}),{m_tput},IF(ISERROR({p_ttft}),{p_ttft},IF({out_tok}="",NO_DATA,IF(ISNUMBER({out_tok}),'
            'IF({out_tok}>=1,IF(AND({price_in}<>"",ISERROR({price})),{price},'
            f'IF({{floor}}<>"","{FLOOR_SHORT}",'
            "IF(ISNUMBER({rate_used}),{rate_used},1)/({out_tok}/{m_tput}+{p_ttft}))),OUT_OF_RANGE),"
            "BAD_INPUT))))",
            "rate factor / (output tokens / throughput at max batch + the prompt's prefill): each request's share of "
            "the decode steps plus its own prefill, which holds the replica alone, times the queue term; a price given "
            "but refused (0, text) refuses the fleet, as api.peak_fleet does",
            quantity="peak_fleet.rate_per_replica_s@batch=max",
        ),
        Row(
            "replicas",
            "Replicas for the peak",
            "replicas",
            INT,
            'IF(ISERROR({rate_repl}),{rate_repl},IF(ISTEXT({rate_repl}),{rate_repl},IF({rps}="",NO_DATA,IF({rps}>0,'
            "MAX(1,ROUNDUP({rps}/{rate_repl}-POWER(10,-9),0)),OUT_OF_RANGE))))",
            "sizing.replicas_for_rate (no spare)",
            quantity="peak_fleet.replicas@batch=max",
        ),
        Row(
            "fleet_gpus",
            "Fleet GPUs",
            "GPUs",
            INT,
            "IF(ISTEXT({replicas}),{replicas},{replicas}*{n})",
            "replicas x GPUs in the group (words where there is no fleet: the floor row's)",
            quantity="peak_fleet.gpus@batch=max",
        ),
        Row(
            "fleet_usd_month",
            "Fleet cost per month",
            "US$",
            USD,
            f"IF(ISTEXT({{fleet_gpus}}),{{fleet_gpus}},{{fleet_gpus}}*{{price}}*{HOURS_PER_MONTH:g})",
            f"GPUs x price x {HOURS_PER_MONTH:g} h (sizing.cloud_usd_per_gpu_month)",
            quantity="peak_fleet.monthly_usd@batch=max",
        ),
        Row(
            "same_requests",
            "Serves the same requests (1 yes; 0: changes them, not ranked)",
            "",
            INT,
            {**{key: 0.0 for key in WORKLOAD_LEVERS}, "*": 1.0},
            "calc.WORKLOAD_LEVERS: halving the context or another model changes what is served, not how",
        ),
        Row(
            "no_change",
            "Changes nothing against the baseline (1 yes: not ranked)",
            "",
            INT,
            {"base": 0.0, "weights_fp8": f"IF({EXPERTS_SMALLER},1,{NO_CHANGE})", "*": NO_CHANGE},
            "load_figures.lever_changes_nothing: the same model, context, precisions used and GPU group as the "
            "baseline (weights fp8 of an fp8 model, a compare model that is the model itself); weights fp8 of a "
            "model whose experts ship smaller (gpt-oss's mxfp4: resolve.weights_enlarge_experts), no saving",
        ),
        Row(
            "void",
            "Levers' fleet rows read (blank: this column's figures)",
            "",
            None,
            {
                "base": None,
                "weights_fp8": f'IF({{no_change}}=1,IF({EXPERTS_SMALLER},"{NO_SAVING_WORDS}","{NO_CHANGE_WORDS}"),"")',
                "*": f'IF({{no_change}}=1,"{NO_CHANGE_WORDS}","")',
            },
            "a lever that changes nothing (or does not apply) says so in every budget row, not a fleet or a verdict",
        ),
        Row(
            "what",
            "What changes (Levers)",
            "",
            None,
            {key: _what(key, what) for key, _, what in SCENARIOS},
            "a lever that changes nothing says so",
            wrap=4,
        ),
        Row(
            "dp_ep_error",
            "Why planner found no dp-ep fleet (dp-ep column; blank: none)",
            "",
            None,
            {},
            "load_figures.dp_ep_cells: a note planner computed, not a formula",
        ),
        Row(
            "budget_rank",
            "Monthly cost for ranking (misses a target, no cost, changes the requests or nothing: 10^300)",
            "US$",
            NOT_RANKED_USD,
            f"IF(AND({{meets}}=1,{{same_requests}}=1,{{no_change}}=0),IF(ISNUMBER({{fleet_usd_month}}),"
            f"{{fleet_usd_month}},{NOT_RANKED}),{NOT_RANKED})",
        ),
    )
    c.dp_ep_formulas.update(_dp_ep_formulas(load))
    last = scenario_col(DP_EP[0])  # the dp-ep lever is ranked with the scenarios
    rank = f"${first}${c.row_of['budget_rank']}:${last}${c.row_of['budget_rank']}"
    stale = f"${first}${c.row_of['stale']}:${last}${c.row_of['stale']}"
    c.add(
        Row(
            "green",
            "Green on Levers: cheapest that meets the targets (1 yes, 0 no)",
            "",
            INT,
            f"IF(AND({{budget_rank}}<{NOT_RANKED},{{budget_rank}}=MIN({rank}),MAX({stale})=0),1,0)",
            "never a scenario that misses a target, lacks a value or changes the requests; none while any column's "
            "fleet is stale (the cheapest is not known)",
        ),
        Row(
            "headline",
            "The Inputs' peak fleet, its cost and verdict: this column's (1) or More GPUs' (2)",
            "",
            INT,
            {"base": headline_pick(c), "*": None},
            "with the GPU count blank, the cheaper of the smallest group that fits and the next (trial 23 F1); "
            "else the baseline's",
            wrap=2,
        ),
    )


def headline_pick(c: Calc) -> str:
    """Which column the Inputs' headline (peak fleet, its monthly cost, cost per token and verdict) reads, as a
    Baseline template: 2, More GPUs', where the GPU count is blank and More GPUs' group serves the targets on fewer
    GPUs than the smallest group that fits, or on any number where that group does not; else 1, the Baseline's. A
    group serves the targets where it meets them, or, while the Load sheet is stale and nothing is judged, where its
    last simulation found a fleet that met them (a rate factor: the estimate compares the same way; not where Inputs
    other than the peak changed, whose fleets are not known: the Baseline's, ``stale_unknown``). Every column
    runs at the same price, so fewer GPUs cost less. Trial 23 F1: with the count blank the headline read 404 GPUs,
    $1,060,237 a month on 2 x H100 holding 5 sequences of 1,800 tokens, where 4 a replica need 40, $104,974."""
    more = scenario_col("more_gpus")

    def at(key: str, col: str | None) -> str:
        return f"${more}${c.row_of[key]}" if col else "{" + key + "}"

    def serves(col: str | None) -> str:
        return f'OR({at("meets", col)}=1,AND({at("unknown", col)}="{STALE_MEETS}",ISNUMBER({at("rate_used", col)})))'

    gpus, more_gpus = at("fleet_gpus", None), at("fleet_gpus", more)
    return (
        f'IFERROR(IF(AND(in_gpus="",{at("stale_unknown", None)}=0,{at("no_change", more)}=0,ISNUMBER({more_gpus}),'
        f"{serves(more)}),IF(OR(NOT({serves(None)}),NOT(ISNUMBER({gpus}))),2,IF({more_gpus}<{gpus},2,1)),1),1)"
    )


#: A lever that resolves to the baseline's deployment: the same model, context, precisions used and GPU group (1),
#: else 0 (an error in either column: 0, the error shows in the column).
NO_CHANGE = (
    "IFERROR(IF(AND({model}={C:model},{context}={C:context},{kv}={C:kv},{wp}={C:wp},{ep}={C:ep},{n}={C:n}),1,0),0)"
)

#: The Weights fp8 lever's column holds a model whose routed experts ship in fewer bytes per value than its weights
#: (gpt-oss: mxfp4, 0.53 B, against fp8's 1 B): fp8 would enlarge the model, so the lever is no saving and is not
#: ranked (``resolve.weights_enlarge_experts``, the rule the budget review's like-for-like grid follows; trial 26 F2).
_SHIPPED_EXPERTS = "INDEX(model_native_expert_precision,{model_row})"
EXPERTS_SMALLER = (
    f'IFERROR(AND({_SHIPPED_EXPERTS}<>"",INDEX(prec_bytes,MATCH({_SHIPPED_EXPERTS},prec_names,0))<{{wbpp}}),FALSE)'
)
#: ... its words, resolve.weights_enlarge_experts's: "no saving: the checkpoint's experts are already mxfp4, ...".
EXPERTS_SMALLER_WHY = f'"no saving: the checkpoint\'s experts are already "&{_SHIPPED_EXPERTS}&", smaller than "&{{wp}}'


def weights_words_formula(wp: str, ep: str) -> str:
    """The formula naming a column's weights as every surface names them (``resolve.weights_words``, restated):
    ``wp``'s name and " + <format> experts" where the experts' precision ``ep`` differs ("bf16 + mxfp4 experts",
    gpt-oss as published; trial 26 F2: the Results and Levers said "bf16"). ``wp``, ``ep``: cell references."""
    return f'{wp}&IF({ep}<>{wp}," + "&{ep}&" experts","")'


#: What "no change" says for each lever that resolves to the baseline (Calc's what row); others: the same inputs.
NO_CHANGE_WHY = {
    "weights_fp8": 'IF({C:wp_in}="",{C:model}&" ships "&{C:wp}&" weights","the weights are already "&{C:wp}&'
    '" (Inputs)")',
    "kv_fp8": '"the KV cache is already "&{C:kv}&" (Inputs)"',
    "compare": '"the compare model is "&{C:model}&" itself"&IF(in_compare_model="",'
    '" (blank: the same-size GQA model, which only an MHA model has; choose one on Inputs)","")',
}


def _what(key: str, what: str) -> str:
    """The Levers' "What changes" cell of a scenario: ``what``, or "no change: ..." where it changes nothing."""
    if key == "base":
        return f'"{what}"'
    why = NO_CHANGE_WHY.get(key, '"the same inputs as the baseline"')
    if key == "more_gpus":  # a larger group per replica, not more replicas (trial 29 F2: read as "buy more GPUs")
        groups = (
            'IFERROR("tensor-parallel group "&{C:n}&" -> "&{n}&" GPUs per replica (more replicas of "&{C:n}&": the '
            f'Baseline\'s own fleet)","{what}")'
        )
        return f'IF({{no_change}}=1,"no change: "&{why},{groups})'
    if key == "weights_fp8":
        return f'IF({{no_change}}=1,IF({EXPERTS_SMALLER},{EXPERTS_SMALLER_WHY},"no change: "&{why}),"{what}")'
    return f'IF({{no_change}}=1,"no change: "&{why},"{what}")'


def _dp_ep_formulas(load: bool) -> dict[str, str]:
    """The dp-ep column's own formulas: it meets the targets only where planner's simulation says so and the Load
    sheet is current (its figures are stored numbers, not formulas that follow the Inputs); a dense baseline's
    column says the lever does not apply; blank figures give no fleet rather than a division by zero."""
    current = f'LEFT({LOAD_SHEET}!$B${LOAD_STATUS_ROW},7)="current"' if load else "FALSE"
    stale = (
        "not known: planner computed this column for other Inputs (Load sheet STALE: refresh)"
        if load
        else "not known: nothing simulated (no Load sheet)"
    )
    dense = '"does not apply: "&{C:model}&" is dense, no experts to spread (a MoE model\'s layout)"'
    dense_model = "AND(ISNUMBER({C:E}),{C:E}=0)"
    return {
        "what": f'IF(ISERROR({{C:E}}),"{DP_EP[2]}",IF({{C:E}}=0,{dense},"{DP_EP[2]}"&IF({current},""," (STALE: '
        'refresh)")))',
        "meets": 'IF({unknown}<>"",0,{sim_meets})',
        "meets_text": f'IF({dense_model},"{DENSE_WORDS} (dense model)",IF({{unknown}}<>"",{{unknown}},IF({{sim_meets}}=1,'
        'IF({edge_used}<>"","yes, at the edge: "&{edge_used},"yes (simulated p"&IF(in_latency_percentile="",95,'
        'in_latency_percentile)&")"),IF(ISERROR({C:E}),{C:E},'
        f'IF(NOT({current}),"{stale}",IF({{dp_ep_error}}<>"","no: "&{{dp_ep_error}},'
        '"not known: not simulated (Load sheet)"))))))',
        "same_requests": "1",
        "no_change": "0",
        "void": f'IF({dense_model},"{DENSE_WORDS}","")',
    }


def calc_sheet(c: Calc) -> tuple[Sheet, list[Probe]]:
    s = Sheet(CALC_SHEET, freeze="C4", tab_color="595959")
    how, checked = (get_column_letter(FIRST_SCENARIO_COL + len(COLUMNS) + i) for i in (0, 1))
    s.widths.update({"A": 44, "B": 10, how: 34, checked: 40})
    # printed over two pages wide, Quantity and Stored in (A:B) on each: the title and the sections' headings wrap in
    # A:B, the introduction starts at the first scenario's column (its merge ends at the first page's last column:
    # writer), so no page shows a sentence cut at B's edge (trial 13 F7)
    s.heading("A1", "Calc: every step of the model", "B")
    s.note(
        "C2",
        "Each row restates a formula of planner.model / planner.api (last column: the function the parity tests "
        "check it against). #N/A: unknown name or no price; #VALUE!: input of the wrong kind; #NUM!: out of range "
        "or does not fit.",
        checked,
    )
    s.set("A3", "Quantity", style="header")
    s.set("B3", "Stored in", style="header")
    s.set(f"{how}3", "Model rule", style="header")
    s.set(f"{checked}3", "Checked against (planner.api)", style="header")
    probes = []
    for key, header, _ in COLUMNS:
        col = scenario_col(key)
        s.widths[col] = 17
        s.set(f"{col}3", header, style="header")
    # folded ("+" above the columns shows it): the Levers sheet shows its figures, and Calc keeps printing two pages
    # across (unfolded it took a third: 27 pages where 18 had been)
    s.folded.append(scenario_col(DP_EP[0]))
    for row in c.rows:
        r = c.row_of[row.key]
        if row.section:
            s.heading(f"A{r}", row.label, "B", style="subtitle")
            continue
        s.set(f"A{r}", row.label, style="label")
        s.set(f"B{r}", row.unit, style="unit")
        if row.how:
            s.set(f"{how}{r}", row.how, style="note")
        if row.quantity:
            s.set(f"{checked}{r}", row.quantity, style="note")
        for key, _, _ in COLUMNS:
            col = scenario_col(key)
            t = row.template
            if key == DP_EP[0] and row.key in DP_EP_STORED:  # a number or note planner computed: stored as it is
                s.set(f"{col}{r}", c.dp_ep.get(row.key), fmt=row.fmt, style="calc")
                continue
            if key == DP_EP[0]:
                t = c.dp_ep_template(row)
            elif isinstance(t, dict):
                t = t.get(key, t.get("*"))
            if t is None or isinstance(t, float):  # a number planner computed (rate_factor), or blank: stored
                s.set(f"{col}{r}", t, fmt=row.fmt, style="calc")
                continue
            if t.startswith('"') and t.endswith('"') and t.count('"') == 2:
                s.set(f"{col}{r}", t.strip('"'), style="calc")
                continue

            def resolve(k, col=col):
                if k.startswith("C:"):
                    return c.ref(k[2:], scenario_col("base"), absolute=True)
                return c.ref(k, col)

            s.set(f"{col}{r}", F.render(t, resolve), fmt=row.fmt, style="calc_text" if row.wrap else "calc")
            if row.wrap:
                s.heights[r] = 13.5 * row.wrap + 2
            if row.quantity and key != DP_EP[0]:  # the dp-ep column restates no api function: planner's numbers
                probes.append(Probe(CALC_SHEET, f"{col}{r}", key, row.quantity))
    return s, probes
