"""Describe the what-if workbook (``WorkbookSpec``) from the live catalog, engine profile and calibration.

Sheets: Inputs (opens here), Results, Levers, Charts, Explain, Assumptions, Calc (every step of the model,
one column per scenario), Sweeps (chart data), GPUs, Models, Precisions (catalog tables).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openpyxl.utils import get_column_letter

from planner import __version__, api
from planner.api import GPU_GROUPS
from planner.calibration import CALIBRATED_FIELDS, Calibration, resolve_calibration
from planner.catalog import Catalog, default_catalog
from planner.engines import EngineProfile, engine_profile
from planner.errors import InvalidInputError
from planner.workbook import formulas as F
from planner.workbook.catalog_sheets import (
    assumptions_sheet,
    gpus_sheet,
    gqa_sibling,
    models_sheet,
    precisions_sheet,
)
from planner.workbook.layout import (
    CALC_SHEET,
    CHARTS_SHEET,
    COMPARE_FIELD,
    EXPLAIN_SHEET,
    FORMAT_VERSION,
    INPUT_FIELDS,
    INPUTS_SHEET,
    LEVERS_SHEET,
    MARKER_KIND,
    MARKER_NAME,
    RESULTS_SHEET,
    SWEEPS_SHEET,
    VERSION_PROPERTY,
    input_row,
)
from planner.workbook.spec import Chart, Highlight, Name, Probe, Series, Sheet, Validation, WorkbookSpec

#: Calc columns: (key, header, what changes against the baseline).
SCENARIOS = (
    ("base", "Baseline", "your inputs"),
    ("gpus_x2", "GPUs x2", "twice the baseline's GPU count"),
    ("context_half", "Context halved", "half the context per sequence"),
    ("compare", "GQA sibling", "the same-size GQA model (or the model you chose to compare)"),
    ("kv_fp8", "KV cache fp8", "KV cache in fp8 (1 byte per value)"),
    ("kv_int4", "KV cache int4", "KV cache in int4 (about half a byte per value)"),
)
FIRST_SCENARIO_COL = 3  # C
BATCH_SWEEP = tuple(2**i for i in range(11))  # 1 .. 1024
CONTEXT_SWEEP = tuple(2**i for i in range(10, 18))  # 1,024 .. 131,072
ROOF_INTENSITIES = (0.25, None, 20000.0)  # None: the ridge point

GB = '#,##0.00,,," GB"'
INT = "#,##0"
MS = '#,##0.00" ms"'


def scenario_col(key: str) -> str:
    return get_column_letter(FIRST_SCENARIO_COL + [s[0] for s in SCENARIOS].index(key))


@dataclass
class Row:
    key: str
    label: str
    unit: str = ""
    fmt: str | None = None
    template: str | dict[str, str] = ""  # one template for all columns, or per scenario ("*" = the others)
    how: str = ""  # the model function it restates
    section: bool = False
    quantity: str | None = None  # model quantity for the parity probes


@dataclass
class Calc:
    rows: list[Row] = field(default_factory=list)
    row_of: dict[str, int] = field(default_factory=dict)
    first_row: int = 4

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


def _calc_rows(lever_kv: tuple[str, str]) -> Calc:
    c = Calc()
    S = lambda key, label: Row(key, label, section=True)  # noqa: E731
    c.add(
        S("s_inputs", "What this column evaluates (blank: the default)"),
        Row("gpu", "GPU", "name", None, {"base": _raw("in_gpu"), "*": "{C:gpu}"}),
        Row(
            "model",
            "Model",
            "name",
            None,
            {
                "base": _raw("in_model"),
                "compare": 'IF(in_compare_model="",INDEX(model_sibling,{C:model_row}),in_compare_model)',
                "*": "{C:model}",
            },
        ),
        Row(
            "ctx_in",
            "Context",
            "tokens",
            INT,
            {"base": _raw("in_context"), "context_half": "MAX(1,INT({C:context}/2))", "*": "{C:ctx_in}"},
        ),
        Row(
            "kv_in",
            "KV-cache precision",
            "",
            None,
            {
                "base": _raw("in_kv_precision"),
                "kv_fp8": f'"{lever_kv[0]}"',
                "kv_int4": f'"{lever_kv[1]}"',
                "*": "{C:kv_in}",
            },
        ),
        Row("wp_in", "Weight precision", "", None, {"base": _raw("in_weight_precision"), "*": "{C:wp_in}"}),
        Row("gpus_in", "GPU count", "GPUs", INT, {"base": _raw("in_gpus"), "gpus_x2": "2*{C:n}", "*": "{C:n}"}),
        Row("util_in", "Memory utilization", "", "0.00", {"base": _raw("in_memory_utilization"), "*": "{C:util_in}"}),
        Row("price_in", "Price per GPU-hour", "US$", '"$"#,##0.00', {"base": _raw("in_price"), "*": "{C:price_in}"}),
        Row("batch_in", "Batch", "sequences", INT, {"base": _raw("in_batch"), "*": "{C:batch_in}"}),
        S("s_lookup", "Catalog lookups (INDEX/MATCH by name)"),
        Row("gpu_row", "GPU row", "", None, "MATCH({gpu},gpu_names,0)", "GPUs sheet"),
        Row("model_row", "Model row", "", None, "MATCH({model},model_names,0)", "Models sheet"),
        Row("native", "Native precision", "", None, "INDEX(model_native_precision,{model_row})"),
        Row("wp", "Weight precision used", "", None, 'IF({wp_in}="",{native},{wp_in})'),
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
            'IF({kv_in}="",IF(OR({native}="fp16",{native}="bf16",{native}="fp32"),{native},"bf16"),{kv_in})',
            "default: the activation dtype",
        ),
        Row("kv_row", "KV precision row", "", None, "MATCH({kv},prec_names,0)"),
        Row("wbpp", "Bytes per weight", "B", "0.######", "INDEX(prec_bytes,{w_row})"),
        Row("ebpp", "Bytes per expert weight", "B", "0.######", "INDEX(prec_bytes,{e_row})"),
        Row(
            "kvbpe",
            "Bytes per KV value",
            "B",
            "0.######",
            "IF(INDEX(prec_kv_cache,{kv_row}),INDEX(prec_bytes,{kv_row}),OUT_OF_RANGE)",
            "not a KV format: #NUM!",
        ),
        Row("context", "Context used", "tokens", INT, F.CONTEXT, "whole number 1 .. 2^24"),
        Row("util", "Memory utilization used", "", "0.00", F.UTIL),
    )
    facts = [
        ("layers", "num_layers", "Layers"),
        ("hidden", "hidden_size", "Hidden size"),
        ("inter", "intermediate_size", "MLP width"),
        ("vocab", "vocab_size", "Vocabulary"),
        ("kvh", "num_kv_heads", "KV heads"),
        ("kvel", "kv_elements_per_token_per_layer", "KV values per token per layer"),
        ("full", "full_attention_layers", "Full-attention layers"),
        ("swl", "sliding_window_layers", "Sliding-window layers"),
        ("window", "sliding_window", "Sliding window"),
        ("attnflop", "attention_flop_per_context_token_per_layer", "Attention FLOP per cached token per layer"),
        ("non_expert", "params_non_expert", "Params non-expert"),
        ("routed", "params_routed_experts", "Params routed experts"),
        ("read", "params_read_per_step", "Params read per step (dense)"),
        ("per_expert", "params_per_expert_layer", "Params per expert per layer"),
        ("moe_layers", "moe_layers", "MoE layers"),
        ("E", "num_experts", "Experts"),
        ("k", "experts_per_token", "Experts per token"),
    ]
    c.add(S("s_facts", "Model facts (Models sheet)"))
    c.add(*[Row(k, label, "", INT, f"INDEX(model_{f},{{model_row}})") for k, f, label in facts])
    c.add(
        S("s_gpu", "GPU facts and engine factors (GPUs sheet)"),
        Row("mem", "Physical memory", "B", GB, "INDEX(gpu_memory,{gpu_row})"),
        Row("evm", "Measured visible memory (0: none)", "B", GB, "INDEX(gpu_visible,{gpu_row})"),
        Row("bw", "HBM bandwidth", "B/s", '#,##0,,," GB/s"', "INDEX(gpu_bandwidth,{gpu_row})"),
        Row("ic", "Interconnect", "B/s", '#,##0,,," GB/s"', "INDEX(gpu_interconnect,{gpu_row})"),
        Row("price_catalog", "Catalog price (0: none)", "US$/h", '"$"#,##0.00', "INDEX(gpu_price,{gpu_row})"),
        Row("tokens", "Profiling tokens", "tokens", INT, "INDEX(gpu_tokens,{gpu_row})"),
        Row("seqs", "Sampler sequences", "sequences", INT, "INDEX(gpu_seqs,{gpu_row})"),
    )
    c.add(*[Row(f"f_{f}", f, "", "0.000###", f"INDEX(gpu_{f},{{gpu_row}})") for f in CALIBRATED_FIELDS])
    c.add(
        Row("math_key", "Math of the weight precision", "", None, "INDEX(prec_math,{w_row})"),
        Row("fb_key", "Math fallback", "", None, "INDEX(prec_fallback,{w_row})"),
        Row(
            "peak_math",
            "Peak at that math (or its bf16/fp16 twin)",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            f"IF({F.peak_of('{math_key}')}>0,{F.peak_of('{math_key}')},{F.peak_of(F.twin('{math_key}'))})",
        ),
        Row(
            "peak_fb",
            "Peak at the fallback",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            f"IF({F.peak_of('{fb_key}')}>0,{F.peak_of('{fb_key}')},{F.peak_of(F.twin('{fb_key}'))})",
        ),
        Row(
            "peak",
            "Peak used",
            "FLOP/s",
            '#,##0.0,,,," TFLOP/s"',
            f"IF({{peak_math}}>0,{{peak_math}},IF({{peak_fb}}>0,{{peak_fb}},"
            f"IF({F.peak_of(chr(34) + 'fp16' + chr(34))}>0,{F.peak_of(chr(34) + 'fp16' + chr(34))},"
            f"{F.peak_of(chr(34) + 'bf16' + chr(34))})))",
            "api._peak_for_weights",
        ),
        Row("ridge", "Ridge point", "FLOP/B", "#,##0.0", "{peak}/{bw}", "peak / bandwidth", quantity="ridge"),
        S("s_memory", "Memory (api._memory, vLLM-style budget)"),
        Row("block", "KV block", "tokens", INT, "MAX(INT(eng_block_size),1)"),
        Row(
            "visible_raw",
            "Memory the engine sees per GPU",
            "B",
            GB,
            "IF(eng_use_engine_visible_memory,IF({evm}>0,{evm},{mem}*eng_visible_memory_fraction),{mem})",
            "model.visible_memory_bytes",
        ),
        Row(
            "weight_bytes",
            "Weights (whole model)",
            "B",
            GB,
            "{non_expert}*{wbpp}+{routed}*{ebpp}",
            "model.weight_bytes",
            quantity="weight_bytes",
        ),
        Row(
            "kv_token",
            "KV per token (one copy)",
            "B",
            INT,
            "{kvel}*{kvbpe}*" + F.layer_tokens("1"),
            "api.kv_bytes_per_token",
            quantity="kv_token",
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
            "kv_seq_base",
            "KV per sequence (blocks, one copy)",
            "B",
            INT,
            "{kvel}*{kvbpe}*" + F.layer_tokens(F.seq_tokens("{context}")),
            "model.kv_bytes",
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
        Row("n_raw", "GPU count asked (or smallest group)", "GPUs", INT, F.choose_group(), "api._choose_gpus"),
        Row("mb_raw", "Max batch on that count", "sequences", INT, F.max_batch_on("{n_raw}")),
        Row(
            "n",
            "GPUs in the group",
            "GPUs",
            INT,
            "IF({mb_raw}>=1,{n_raw},NOT_FIT)",
            "does not fit: #NUM!",
            quantity="memory.gpus",
        ),
        Row(
            "visible",
            "Memory the engine sees per GPU",
            "B",
            GB,
            "IF(ISERROR({n}),{n},{visible_raw})",
            quantity="memory.visible_bytes_per_gpu",
        ),
        Row(
            "reserve",
            "Reserve per GPU (activation peak + non-torch)",
            "B",
            GB,
            F.reserve("{n}"),
            "model.activation_peak_bytes + reserve_bytes_per_gpu",
            quantity="memory.reserve_bytes_per_gpu",
        ),
        Row(
            "budget",
            "KV budget per GPU",
            "B",
            GB,
            F.budget("{n}", "{reserve}"),
            "model.kv_budget_bytes_per_gpu",
            quantity="memory.kv_budget_bytes_per_gpu",
        ),
        Row("repl", "KV replication", "x", "0.00", F.replication("{n}"), "model.kv_replication"),
        Row(
            "kv_token_gpu",
            "KV per token per GPU",
            "B",
            INT,
            "{kvel}*{kvbpe}*{layers}*{repl}/{n}",
            quantity="memory.kv_bytes_per_token_per_gpu",
        ),
        Row(
            "kv_seq",
            "KV per sequence (group)",
            "B",
            GB,
            "{kv_seq_base}*{repl}",
            quantity="memory.kv_bytes_per_sequence",
        ),
        Row(
            "kv_tokens",
            "KV cache tokens (group)",
            "tokens",
            INT,
            "INT(MAX({budget},0)/({kv_token_gpu}*{block}))*{block}",
            "model.kv_cache_tokens",
            quantity="memory.kv_cache_tokens",
        ),
        Row(
            "max_batch",
            "Max batch",
            "sequences",
            INT,
            "INT(MAX({budget}*{n},0)/{kv_seq})",
            "model.max_batch_from_budget",
            quantity="memory.max_batch",
        ),
        S("s_decode_shared", "Decode (api._decode)"),
        Row("ppt", "Params per token", "params", INT, "{read}+{moe_layers}*{k}*{per_expert}"),
        Row("attn_decode", "Attention FLOP per token", "FLOP", "0.000E+00", "{attnflop}*{ctx_layer_tokens}"),
        Row("overhead", "Step overhead", "s", "0.000E+00", "{f_step_overhead_s}+{f_layer_overhead_s}*{layers}"),
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
    for prefix, batch_key, title, quantity in (
        ("d", "d_batch", "at the chosen batch", "decode"),
        ("m", "max_batch", "at max batch", "decode_max"),
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
                "cost": "cost",
            }.get(key)
            c.add(
                Row(
                    f"{prefix}_{key}",
                    label,
                    unit,
                    fmt,
                    F.local(tmpl, prefix),
                    quantity=f"{quantity}.{q}" if q else None,
                )
            )
    c.add(S("s_p", "Prefill of one prompt of the context (api.prefill)"))
    for key, label, unit, fmt, tmpl in F.prefill_block():
        q = {"ttft": "ttft_s", "flop": "flop", "bytes": "bytes_moved", "intensity": "intensity_flop_per_byte"}.get(key)
        c.add(Row(f"p_{key}", label, unit, fmt, F.local(tmpl, "p"), quantity=f"prefill.{q}" if q else None))
    return c


def _calc_sheet(c: Calc) -> tuple[Sheet, list[Probe]]:
    s = Sheet(CALC_SHEET, freeze="C4", tab_color="595959")
    s.widths.update(A=44, B=10, I=34)
    s.set("A1", "Calc: every step of the capacity model, one column per scenario", style="title")
    s.note(
        "A2",
        "Each row restates one formula of planner.model / planner.api (column I). Errors: #N/A unknown name or no "
        "price, #VALUE! input of the wrong kind, #NUM! number out of range or does not fit. Column B: the unit of the "
        "stored value.",
        "I",
    )
    s.set("A3", "Quantity", style="header")
    s.set("B3", "Stored in", style="header")
    s.set("I3", "Model function", style="header")
    probes = []
    for key, header, _ in SCENARIOS:
        col = scenario_col(key)
        s.widths[col] = 17
        s.set(f"{col}3", header, style="header")
    for row in c.rows:
        r = c.row_of[row.key]
        s.set(f"A{r}", row.label, style="subtitle" if row.section else "label")
        if row.section:
            continue
        s.set(f"B{r}", row.unit, style="unit")
        if row.how:
            s.set(f"I{r}", row.how, style="note")
        for key, _, _ in SCENARIOS:
            col = scenario_col(key)
            t = row.template
            if isinstance(t, dict):
                t = t.get(key, t.get("*"))
            if t.startswith('"') and t.endswith('"') and t.count('"') == 2:
                s.set(f"{col}{r}", t.strip('"'), style="calc")
                continue

            def resolve(k, col=col):
                if k.startswith("C:"):
                    return c.ref(k[2:], scenario_col("base"), absolute=True)
                return c.ref(k, col)

            s.set(f"{col}{r}", F.render(t, resolve), fmt=row.fmt, style="calc")
            if row.quantity:
                probes.append(Probe(CALC_SHEET, f"{col}{r}", key, row.quantity))
    return s, probes


def _inputs_sheet(defaults: dict, c: Calc) -> tuple[Sheet, list[Name]]:
    s = Sheet(INPUTS_SHEET, freeze="A4", tab_color="FFC000")
    s.widths.update(A=30, B=24, C=14, D=80)
    s.set("A1", "LLM inference what-if: inputs", style="title")
    s.note(
        "A2",
        "Change the yellow cells; every other sheet recalculates. Blank optional cells take the default "
        "named in column D.",
    )
    for col, h in zip("ABCD", ("Input", "Value", "Unit", "What it means / default"), strict=True):
        s.set(f"{col}3", h, style="header")
    names = []
    sources = {
        "gpu": "gpu_names",
        "model": "model_names",
        "kv_precision": "kv_precision_names",
        "weight_precision": "prec_names",
        "compare_model": "model_names",
    }
    for f in (*INPUT_FIELDS, COMPARE_FIELD):
        r = input_row(f.key)
        s.set(f"A{r}", f.label + ("" if f.required else " (optional)"), style="label")
        fmt = {"count": INT, "fraction": "0.00", "money": '"$"#,##0.00'}.get(f.kind)
        s.set(f"B{r}", defaults.get(f.key), fmt=fmt, style="input")
        s.set(f"C{r}", f.unit, style="unit")
        s.set(f"D{r}", f.help, style="note")
        names.append(Name(f.name, f"{INPUTS_SHEET}!$B${r}"))
        if f.key in sources:
            s.validations.append(
                Validation(
                    f"B{r}",
                    "list",
                    source=sources[f.key],
                    prompt=f"Pick a name from the list ({f.unit}).",
                    error="Not in the catalog: pick from the list.",
                )
            )
        elif f.kind == "count":
            s.validations.append(
                Validation(
                    f"B{r}",
                    "whole",
                    minimum=1,
                    maximum=2**24,
                    prompt=f"A whole number of {f.unit}.",
                    error=f"A whole number of {f.unit} from 1.",
                )
            )
        elif f.kind == "fraction":
            s.validations.append(
                Validation(
                    f"B{r}",
                    "decimal",
                    minimum=0.01,
                    maximum=1,
                    prompt="A fraction above 0, at most 1.",
                    error="Above 0 and at most 1.",
                )
            )
        elif f.kind == "money":
            s.validations.append(
                Validation(
                    f"B{r}", "decimal", minimum=0, maximum=10**6, prompt="US$ per GPU-hour.", error="0 or more US$."
                )
            )
    r = input_row(COMPARE_FIELD.key) + 2
    s.set(f"A{r}", "At a glance (baseline)", style="subtitle")
    glance = [
        ("GPUs in the group", "n", INT, "GPUs"),
        ("Max batch", "max_batch", INT, "sequences"),
        ("TPOT at the chosen batch", "d_step", MS, "ms per token"),
        ("Throughput at max batch", "m_tput", INT, "tokens/s"),
        ("Cost at max batch", "m_cost", '"$"#,##0.000', "US$ per million output tokens"),
    ]
    for i, (label, key, fmt, unit) in enumerate(glance, 1):
        scale = "*1000" if key == "d_step" else ""
        s.set(f"A{r + i}", label, style="label")
        s.set(f"B{r + i}", f"={c.ref(key, 'C', absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
        s.set(f"C{r + i}", unit, style="unit")
    s.set(f"D{r + 1}", "Full results: Results sheet. The four levers side by side: Levers sheet.", style="note")
    s.set(
        f"D{r + 2}",
        "#N/A: a name not in the catalog (or no price). #VALUE!: text where a number belongs. #NUM!: a number out of "
        "range, or does not fit.",
        style="note",
    )
    s.set(
        f"D{r + 3}",
        f'=IF(ISERROR({c.ref("context", "C", True, True)}),"",IF({c.ref("context", "C", True, True)}>'
        f'INDEX(model_max_context,{c.ref("model_row", "C", True, True)}),"Warning: the context exceeds the trained '
        'maximum of the model; memory and time are extrapolated.",""))',
        style="warn",
    )
    return s, names


def _results_sheet(c: Calc) -> tuple[Sheet, list[Probe]]:
    s = Sheet(RESULTS_SHEET, freeze="A4", tab_color="70AD47")
    s.widths.update(A=40, B=18, C=10, D=90)
    s.set("A1", "Results for the baseline inputs", style="title")
    s.set(
        "A2",
        '=""&Calc!$C$'
        + str(c.row_of["model"])
        + '&" on "&Calc!$C$'
        + str(c.row_of["n"])
        + '&" x "&Calc!$C$'
        + str(c.row_of["gpu"])
        + '&", "&TEXT(Calc!$C$'
        + str(c.row_of["context"])
        + ',"#,##0")&" tokens, weights "&Calc!$C$'
        + str(c.row_of["wp"])
        + '&", KV "&Calc!$C$'
        + str(c.row_of["kv"]),
        style="subtitle",
    )
    for col, h in zip("ABCD", ("Result", "Value", "Unit", "How it is computed"), strict=True):
        s.set(f"{col}3", h, style="header")
    probes = []
    MSF = "*1000"
    rows = [
        ("Memory", None),
        (
            "GPUs in the group",
            ("n", INT, "GPUs", "", "given, or the smallest of 1, 2, 4, 8, ... that holds the weights and one sequence"),
        ),
        (
            "Memory the engine sees per GPU",
            ("visible", GB, "GB", "", "measured torch-visible total, else physical x fraction (Assumptions)"),
        ),
        (
            "Weights (whole model)",
            ("weight_bytes", GB, "GB", "", "non-expert params x bytes/weight + routed-expert params x their bytes"),
        ),
        (
            "Reserve per GPU",
            ("reserve", GB, "GB", "", "engine activation peak + non-torch memory (+ NCCL when tensor-parallel)"),
        ),
        ("KV budget per GPU", ("budget", GB, "GB", "", "visible x utilization - weights / GPUs - reserve")),
        (
            "KV per token (one copy)",
            ("kv_token", '#,##0.000,," MB"', "MB", "", "2 x layers x KV heads x head dim x bytes (MLA: latent + rope)"),
        ),
        (
            "KV per token per GPU",
            ("kv_token_gpu", '#,##0.0," kB"', "kB", "", "with KV heads replicated when GPUs > KV heads"),
        ),
        (
            "KV per sequence (group)",
            ("kv_seq", GB, "GB", "", "context rounded up to KV blocks; sliding-window layers hold at most the window"),
        ),
        ("KV cache tokens (group)", ("kv_tokens", INT, "tokens", "", "vLLM's 'GPU KV cache size'")),
        ("Max batch", ("max_batch", INT, "sequences", "", "floor(KV budget x GPUs / KV per sequence)")),
        ("Roofline", None),
        (
            "Peak at the weight precision",
            ("peak", '#,##0.0,,,," TFLOP/s"', "TFLOP/s", "", "dense peak of the GPU for the weights' math"),
        ),
        ("HBM bandwidth", ("bw", '#,##0,,," GB/s"', "GB/s", "", "")),
        ("Ridge point", ("ridge", "#,##0.0", "FLOP/B", "", "peak / bandwidth: below it a step is memory-bound")),
        ("Decode at the chosen batch", None),
        ("Batch", ("d_batch", INT, "sequences", "", "Inputs: batch (blank: max batch)")),
        (
            "TPOT",
            (
                "d_step",
                MS,
                "ms",
                MSF,
                "max(bytes / achieved bandwidth, FLOPs / achieved peak) + all-reduces + overhead",
            ),
        ),
        ("Throughput", ("d_tput", INT, "tokens/s", "", "batch / TPOT")),
        ("MFU", ("d_mfu", "0.00%", "", "", "FLOPs / (TPOT x GPUs x peak)")),
        ("MBU", ("d_mbu", "0.00%", "", "", "bytes / (TPOT x GPUs x bandwidth)")),
        (
            "Arithmetic intensity",
            ("d_intensity", "#,##0.0", "FLOP/B", "", "FLOPs / bytes moved; about the batch at 16-bit"),
        ),
        (
            "Cost per million output tokens",
            ("d_cost", '"$"#,##0.000', "US$", "", "GPUs x price / 3600 / throughput x 1e6"),
        ),
        ("Decode at max batch", None),
        ("Batch", ("max_batch", INT, "sequences", "", "")),
        ("TPOT", ("m_step", MS, "ms", MSF, "")),
        ("Throughput", ("m_tput", INT, "tokens/s", "", "")),
        ("MFU", ("m_mfu", "0.00%", "", "", "")),
        ("MBU", ("m_mbu", "0.00%", "", "", "")),
        ("Arithmetic intensity", ("m_intensity", "#,##0.0", "FLOP/B", "", "")),
        ("Cost per million output tokens", ("m_cost", '"$"#,##0.000', "US$", "", "")),
        ("Prefill", None),
        (
            "TTFT (prompt of the whole context)",
            ("p_ttft", MS, "ms", MSF, "compute-bound roofline of 2 x params x tokens + causal attention"),
        ),
        (
            "Prefill arithmetic intensity",
            ("p_intensity", "#,##0", "FLOP/B", "", "about the prompt length at 16-bit: far right of the ridge"),
        ),
    ]
    r = 4
    row_of = {}
    for label, spec in rows:
        if spec is None:
            s.set(f"A{r}", label, style="subtitle")
            r += 1
            continue
        key, fmt, unit, scale, how = spec
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", f"={c.ref(key, 'C', absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
        s.set(f"C{r}", "" if fmt.endswith('"') else unit, style="unit")
        s.set(f"D{r}", how, style="note")
        row = next(x for x in c.rows if x.key == key)
        if row.quantity:
            probes.append(Probe(RESULTS_SHEET, f"B{r}", "base", row.quantity, 1000.0 if scale else 1.0))
        row_of[key] = r
        r += 1
    r += 1
    s.set(f"A{r}", "Range of the time predictions", style="subtitle")
    gpu_match = "MATCH(in_gpu,gpu_names,0)"
    for label, key in (("TPOT at the chosen batch", "d_step"), ("TPOT at max batch", "m_step"), ("TTFT", "p_ttft")):
        r += 1
        s.set(f"A{r}", f"{label}: low / high", style="label")
        s.set(f"B{r}", f"=B{row_of[key]}*(1+INDEX(gpu_residual_low,{gpu_match}))", fmt=MS, style="result")
        s.set(f"C{r}", f"=B{row_of[key]}*(1+INDEX(gpu_residual_high,{gpu_match}))", fmt=MS, style="result")
        s.set(
            f"D{r}",
            "measured / predicted - 1 lay within the GPU's range (GPUs sheet) in 80% of the fitted rows: "
            "the public benchmarks' fit, or your calibration file",
            style="note",
        )
    r += 2
    s.set(f"A{r}", 'Why "GPU-Util 80%" says nothing about these', style="subtitle")
    util = [
        "nvidia-smi's GPU-Util is the share of time in which any kernel runs. A decode step keeps a kernel running "
        "nearly all the time, so GPU-Util reads 80-100% whatever the batch.",
        f'="At batch "&TEXT(B{row_of["d_batch"]},"#,##0")&" this GPU does "&TEXT(B{row_of["d_mfu"]},"0.0%")&" of its '
        f'peak FLOPs (MFU) and moves "&TEXT(B{row_of["d_mbu"]},"0%")&" of its peak bandwidth (MBU)."',
        f'="At max batch ("&TEXT(B{row_of["max_batch"]},"#,##0")&") MFU is "&TEXT(B{row_of["m_mfu"]},"0.0%")&'
        f'" and throughput "&TEXT(B{row_of["m_tput"]},"#,##0")&" tokens/s: same GPU-Util, "&'
        f'TEXT(B{row_of["m_tput"]}/B{row_of["d_tput"]},"0.0")&"x the tokens."',
        "Decode is memory-bound while its arithmetic intensity (about the batch) is below the ridge point: "
        "judge capacity by max batch, MBU and tokens per dollar, not by GPU-Util.",
    ]
    for i, text in enumerate(util, 1):
        s.note(f"A{r + i}", text)
    return s, probes


def _levers_sheet(c: Calc) -> tuple[Sheet, list[Probe]]:
    s = Sheet(LEVERS_SHEET, freeze="C4", tab_color="4472C4")
    s.widths.update(A=40, B=12)
    s.set("A1", "Levers: each changes one thing against the baseline", style="title")
    s.note(
        "A2",
        "Speed and cost at each scenario's max batch, on the baseline's GPU count (GPUs x2: twice it). "
        "The green cell buys the most batch per dollar.",
        "H",
    )
    s.set("A3", "", style="header")
    s.set("B3", "Unit", style="header")
    for key, header, _ in SCENARIOS:
        col = scenario_col(key)
        s.widths[col] = 20
        s.set(f"{col}3", header, style="header")
    probes: list[Probe] = []
    r = 4
    s.set(f"A{r}", "What changes", style="note")
    for key, _, what in SCENARIOS:
        s.set(f"{scenario_col(key)}{r}", what, style="note")
    s.set(f"B{r}", "", style="note")
    r += 1
    shown = [
        ("GPU", "gpu", None, ""),
        ("Model", "model", None, ""),
        ("Context", "context", INT, "tokens"),
        ("KV-cache precision", "kv", None, ""),
        ("Weight precision", "wp", None, ""),
        ("GPUs in the group", "n", INT, "GPUs"),
    ]
    results = [
        ("Max batch", "max_batch", INT, "sequences", ""),
        ("KV budget per GPU", "budget", GB, "GB", ""),
        ("KV per sequence", "kv_seq", GB, "GB", ""),
        ("TPOT at max batch", "m_step", MS, "ms", "*1000"),
        ("Throughput at max batch", "m_tput", INT, "tokens/s", ""),
        ("Cost at max batch", "m_cost", '"$"#,##0.000', "$/M tokens", ""),
        ("TTFT (whole context as prompt)", "p_ttft", MS, "ms", "*1000"),
    ]
    for label, key, fmt, unit in shown:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "" if (fmt or "").endswith('"') else unit, style="unit")
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={c.ref(key, col, absolute=True, sheet=True)}", fmt=fmt, style="calc")
        r += 1
    r += 1
    s.set(f"A{r}", "Results", style="subtitle")
    r += 1
    result_row = {}
    for label, key, fmt, unit, scale in results:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "" if fmt.endswith('"') else unit, style="unit")
        q = next(x for x in c.rows if x.key == key).quantity
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={c.ref(key, col, absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
            if q:
                probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, q, 1000.0 if scale else 1.0))
        result_row[key] = r
        r += 1
    per_dollar = r
    s.set(f"A{r}", "Max batch per dollar of GPU time", style="label")
    s.set(f"B{r}", "seq. per $/h", style="unit")
    first, last = scenario_col(SCENARIOS[0][0]), scenario_col(SCENARIOS[-1][0])
    for sk, _, _ in SCENARIOS:
        col = scenario_col(sk)
        s.set(
            f"{col}{r}",
            f"={c.ref('max_batch', col, True, True)}/({c.ref('n', col, True, True)}*{c.ref('price', col, True, True)})",
            fmt="#,##0.00",
            style="result",
        )
        probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, "batch_per_dollar"))
    r += 1
    rank = r
    s.set(f"A{r}", "(ranking helper: errors count as -1)", style="note")
    for sk, _, _ in SCENARIOS:
        col = scenario_col(sk)
        s.set(f"{col}{r}", f"=IFERROR({col}{per_dollar},-1)", fmt="#,##0.00", style="note")
    s.highlights.append(
        Highlight(
            f"{first}{per_dollar}:{last}{per_dollar}",
            f"AND({first}{rank}>0,{first}{rank}=MAX(${first}${rank}:${last}${rank}))",
        )
    )
    r += 1
    s.set(f"A{r}", "Most batch per dollar", style="label")
    s.set(
        f"{first}{r}",
        f"=IF(MAX({first}{rank}:{last}{rank})>0,INDEX({first}3:{last}3,"
        f'MATCH(MAX({first}{rank}:{last}{rank}),{first}{rank}:{last}{rank},0)),"none fits")',
        style="result",
    )
    r += 2
    s.set(f"A{r}", "Change from baseline", style="subtitle")
    r += 1
    for label, key in (
        ("Max batch", "max_batch"),
        ("Throughput at max batch", "m_tput"),
        ("Cost at max batch", "m_cost"),
        ("Max batch per dollar", None),
    ):
        src = result_row[key] if key else per_dollar
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "vs baseline", style="unit")
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={col}{src}/${first}${src}-1", fmt="+0%;-0%;0%", style="calc")
        r += 1
    return s, probes


def _sweeps_sheet(c: Calc) -> tuple[Sheet, list[Probe], dict]:
    """Chart data: decode of the baseline over batch sizes; max batch over contexts; the roofline."""
    s = Sheet(SWEEPS_SHEET, freeze="A4", tab_color="A5A5A5")
    s.set("A1", "Sweeps: chart data for the baseline (#N/A: does not fit, charts skip it)", style="title")
    probes: list[Probe] = []
    base = scenario_col("base")
    block = F.decode_block("sb")
    keys = [k for k, *_ in block]
    s.set("A3", "Batch", style="header")
    s.set("B3", "Batch (if it fits)", style="header")
    col_of = {"sb": "B"}
    for j, (key, label, unit, _fmt, _) in enumerate(block):
        col_of[f"s_{key}"] = get_column_letter(3 + j)
        s.set(f"{col_of[f's_{key}']}3", f"{label}{f' ({unit})' if unit else ''}", style="header")
    tpot_col = get_column_letter(3 + len(block))
    ach_col = get_column_letter(4 + len(block))
    s.set(f"{tpot_col}3", "TPOT (ms)", style="header")
    s.set(f"{ach_col}3", "Achieved TFLOP/s per GPU", style="header")
    for j in range(1, 5 + len(block)):
        s.widths[get_column_letter(j)] = 14
    first = 4
    for i, b in enumerate(BATCH_SWEEP):
        r = first + i
        s.set(f"A{r}", b, fmt=INT)
        s.set(f"B{r}", f"=IF(A{r}>{c.ref('max_batch', base, True, True)},NA(),A{r})", fmt=INT)

        def resolve(k, r=r):
            if k in col_of:
                return f"{col_of[k]}{r}"
            return c.ref(k, base, absolute=True, sheet=True)

        for key, _label, _unit, fmt, tmpl in block:
            s.set(f"{col_of['s_' + key]}{r}", F.render(F.local(tmpl, "s"), resolve), fmt=fmt)
        s.set(f"{tpot_col}{r}", f"={col_of['s_step']}{r}*1000", fmt="#,##0.00")
        s.set(
            f"{ach_col}{r}",
            f"={col_of['s_flop']}{r}/({col_of['s_step']}{r}*{c.ref('n', base, True, True)})/1000000000000",
            fmt="#,##0.0",
        )
        for key, q in (
            ("step", "step_s"),
            ("tput", "throughput_tokens_per_s"),
            ("intensity", "intensity_flop_per_byte"),
        ):
            probes.append(Probe(SWEEPS_SHEET, f"{col_of['s_' + key]}{r}", "base", f"sweep_batch:{b}:{q}"))
    batch_rows = (first, first + len(BATCH_SWEEP) - 1)
    del keys
    # max batch against context, baseline model and the compare model, each on the baseline's GPU count
    r0 = batch_rows[1] + 3
    s.set(f"A{r0 - 1}", "Max batch against context (on the baseline's GPU count)", style="subtitle")
    s.set(f"A{r0}", "Context (tokens)", style="header")
    comp = scenario_col("compare")
    s.set(f"B{r0}", f'={c.ref("model", base, True, True)}&" ("&{c.ref("kv", base, True, True)}&" KV)"', style="header")
    s.set(f"C{r0}", f'={c.ref("model", comp, True, True)}&" ("&{c.ref("kv", comp, True, True)}&" KV)"', style="header")
    for i, ctx in enumerate(CONTEXT_SWEEP):
        r = r0 + 1 + i
        s.set(f"A{r}", ctx, fmt=INT)
        for col, sc in (("B", base), ("C", comp)):

            def resolve(k, sc=sc, r=r):
                return c.ref(k, sc, absolute=True, sheet=True)

            seq = "{kvel}*{kvbpe}*" + F.layer_tokens(F.seq_tokens(f"$A{r}"))
            mb = F.render(f"INT(MAX({{budget}}*{{n}},0)/(({seq})*{{repl}}))", resolve)[1:]
            s.set(f"{col}{r}", f"=IF({mb}<1,NA(),{mb})", fmt=INT)
            probes.append(Probe(SWEEPS_SHEET, f"{col}{r}", "base" if sc == base else "compare", f"sweep_context:{ctx}"))
    ctx_rows = (r0 + 1, r0 + len(CONTEXT_SWEEP))
    # roofline of the chosen GPU at the weight precision
    r1 = ctx_rows[1] + 3
    s.set(f"A{r1 - 1}", "Roofline of the chosen GPU (peak at the weight precision)", style="subtitle")
    s.set(f"A{r1}", "Intensity (FLOP/B)", style="header")
    s.set(f"B{r1}", "Attainable TFLOP/s", style="header")
    for i, x in enumerate(ROOF_INTENSITIES):
        r = r1 + 1 + i
        s.set(f"A{r}", x if x is not None else f"={c.ref('ridge', base, True, True)}", fmt="#,##0.00")
        s.set(
            f"B{r}",
            f"=MIN({c.ref('peak', base, True, True)},{c.ref('bw', base, True, True)}*A{r})/1000000000000",
            fmt="#,##0.0",
        )
    roof_rows = (r1 + 1, r1 + len(ROOF_INTENSITIES))
    rp = roof_rows[1] + 2
    s.set(f"A{rp - 1}", "Prefill intensity (FLOP/B)", style="header")
    s.set(f"B{rp - 1}", "Prefill achieved TFLOP/s per GPU", style="header")
    s.set(f"A{rp}", f"={c.ref('p_intensity', base, True, True)}", fmt="#,##0")
    s.set(
        f"B{rp}",
        f"={c.ref('p_flop', base, True, True)}/({c.ref('p_ttft', base, True, True)}*"
        f"{c.ref('n', base, True, True)})/1000000000000",
        fmt="#,##0.0",
    )
    where = dict(
        batch=batch_rows,
        ctx=(r0, *ctx_rows),
        roof=roof_rows,
        prefill=rp,
        tpot=tpot_col,
        ach=ach_col,
        intensity=col_of["s_intensity"],
        tput=col_of["s_tput"],
    )
    return s, probes, where


def _charts_sheet(w: dict) -> Sheet:
    s = Sheet(CHARTS_SHEET, tab_color="ED7D31")
    s.set("A1", "Charts for the baseline (Inputs sheet); data on the Sweeps sheet", style="title")
    S = SWEEPS_SHEET
    b0, b1 = w["batch"]
    c0, c1a, c1b = w["ctx"]
    r0, r1 = w["roof"]
    rp = w["prefill"]
    s.charts.append(
        Chart(
            "Roofline (log-log): decode and prefill",
            "A3",
            "Arithmetic intensity (FLOP/B, log)",
            "TFLOP/s per GPU (log)",
            (
                Series("Roof: min(peak, bandwidth x intensity)", f"{S}!$A${r0}:$A${r1}", f"{S}!$B${r0}:$B${r1}"),
                Series(
                    "Decode, batch 1 .. 1,024 (achieved)",
                    f"{S}!${w['intensity']}${b0}:${w['intensity']}${b1}",
                    f"{S}!${w['ach']}${b0}:${w['ach']}${b1}",
                ),
                Series("Prefill of the context (achieved)", f"{S}!$A${rp}:$A${rp}", f"{S}!$B${rp}:$B${rp}", line=False),
            ),
            x_log=True,
            y_log=True,
        )
    )
    s.charts.append(
        Chart(
            "Max batch vs context: model and GQA sibling",
            "K3",
            "Context (tokens, log)",
            "Max batch (sequences)",
            (
                Series(f"={S}!$B${c0}", f"{S}!$A${c1a}:$A${c1b}", f"{S}!$B${c1a}:$B${c1b}"),
                Series(f"={S}!$C${c0}", f"{S}!$A${c1a}:$A${c1b}", f"{S}!$C${c1a}:$C${c1b}"),
            ),
            x_log=True,
        )
    )
    s.charts.append(
        Chart(
            "TPOT vs batch",
            "A22",
            "Batch (sequences, log)",
            "TPOT (ms)",
            (Series("TPOT", f"{S}!$A${b0}:$A${b1}", f"{S}!${w['tpot']}${b0}:${w['tpot']}${b1}"),),
            x_log=True,
        )
    )
    s.charts.append(
        Chart(
            "Throughput vs batch",
            "K22",
            "Batch (sequences, log)",
            "Throughput (tokens/s)",
            (Series("Throughput", f"{S}!$A${b0}:$A${b1}", f"{S}!${w['tput']}${b0}:${w['tput']}${b1}"),),
            x_log=True,
        )
    )
    s.widths.update({col: 9 for col in "ABCDEFGHIJKLMNOPQRS"})
    s.note(
        "A41",
        "Batches above max batch do not fit and are left out. The roof uses the dense peak at the weight "
        "precision; achieved points include the engine efficiencies and overheads (Assumptions).",
        "S",
    )
    return s


def _explain_sheet(catalog: Catalog, engine: EngineProfile) -> Sheet:
    s = Sheet(EXPLAIN_SHEET, tab_color="7030A0")
    s.widths.update(A=34, B=110)
    s.set("A1", "How the numbers are computed, in plain words", style="title")
    s.note(
        "A2",
        f"Generated by planner {__version__} from its catalog and the '{engine.name}' engine profile. "
        "Worked numbers below are the seeds' examples, computed by planner when the workbook was made.",
        "B",
    )

    def worked(fn, *args, **kw):
        try:
            return fn(*args, catalog=catalog, **kw)
        except Exception:  # a catalog without the seed entries
            return float("nan")

    kv70 = worked(api.kv_bytes_per_token, "Llama-2-70B", "fp16")
    kv65 = worked(api.kv_bytes_per_token, "LLaMA-65B", "fp16")
    r_a100 = worked(api.ridge, "A100 SXM 80GB", "bf16")
    r_h100 = worked(api.ridge, "H100 SXM 80GB", "bf16")
    w70 = worked(api.weight_bytes, "Llama-2-70B", "fp16")
    rows = [
        (
            "Ridge point",
            f"peak FLOP/s / HBM bandwidth. A100 80GB: 312e12 / 2,039e9 = {r_a100:,.1f} FLOP/B; "
            f"H100 SXM: 989.4e12 / 3.35e12 = {r_h100:,.1f}. A step whose FLOPs per byte moved are below it waits on memory.",
        ),
        ("Weights", f"parameters x bytes per weight. Llama 2 70B at fp16: 68,976,648,192 x 2 B = {w70 / 1e9:,.1f} GB."),
        (
            "KV cache per token",
            f"2 (K and V) x layers x KV heads x head dim x bytes. Llama 2 70B (GQA, 8 KV heads) at fp16: "
            f"2 x 80 x 8 x 128 x 2 B = {kv70:,.0f} B (0.33 MB); LLaMA 65B (MHA, 64 heads): {kv65:,.0f} B (2.6 MB), "
            "8x more. MLA (DeepSeek-V3) caches one latent of (kv_lora_rank + rope dim) values per layer.",
        ),
        (
            "KV per sequence",
            "KV per token x context, with the context rounded up to whole KV blocks; sliding-window "
            "layers hold at most the window. Llama 2 70B at 8,192 tokens, fp16: 2.68 GB; LLaMA 65B: 21.5 GB.",
        ),
        (
            "Memory the engine sees",
            "the measured torch-visible total where the catalog has one, else physical memory "
            "x visible_memory_fraction (Assumptions).",
        ),
        (
            "KV budget per GPU",
            "visible x memory utilization - weights / GPUs - reserve, where the reserve is the engine's "
            "activation peak (a x batched tokens x (hidden + 2 x MLP width / GPUs) + b x sequences x vocabulary) plus "
            "non-torch memory (+ NCCL buffers when tensor-parallel).",
        ),
        (
            "Max batch",
            "floor(KV budget x GPUs / KV per sequence). When GPUs outnumber KV heads each GPU keeps a copy, "
            "so the group holds more bytes per sequence (KV replication).",
        ),
        ("GPU count", "as entered, else the smallest of 1, 2, 4, 8, 16, 32, 64 GPUs whose max batch is at least 1."),
        (
            "Decode step (TPOT)",
            "bytes = weights read (MoE: the experts the batch touches, E x (1 - (1 - k/E)^batch)) + "
            "batch x KV per sequence; FLOPs = batch x (2 x params per token + attention). TPOT = max(bytes / (GPUs x "
            "bandwidth x efficiency), FLOPs / (GPUs x peak x efficiency)) + 2 all-reduces per layer + overheads.",
        ),
        (
            "Throughput, MFU, MBU",
            "throughput = batch / TPOT. MFU = FLOPs / (TPOT x GPUs x peak); MBU = bytes / "
            "(TPOT x GPUs x bandwidth). At batch 1 a 70B model on H100s runs at well under 1% MFU.",
        ),
        (
            "Prefill (TTFT)",
            "one prompt of the context: 2 x params per token x tokens + causal attention FLOPs, on the "
            "same roofline with the prefill efficiency. Its intensity is about the prompt length: compute-bound.",
        ),
        ("Cost", "GPUs x price per GPU-hour / 3,600 / throughput x 1,000,000 = US$ per million output tokens."),
        (
            "Levers",
            "GPUs x2 adds KV budget; halving the context halves KV per sequence; a GQA model stores KV heads / "
            "attention heads of the cache; fp8 KV halves it and int4 quarters it. Max batch per dollar compares them.",
        ),
        (
            "Errors",
            "#N/A: a GPU, model or precision name not in the catalog. #VALUE!: an input outside what is accepted "
            "(a context of 0, a utilization above 1, a weight-only format such as mxfp4 for the KV cache). #NUM!: the "
            "weights plus the sequences asked for do not fit.",
        ),
        (
            "Assumptions and limits",
            f"{engine.description}. Efficiencies and overheads are the engine's defaults unless a "
            "calibration file set them per GPU (GPUs sheet). Tensor parallelism only; beyond 8 GPUs it crosses nodes and "
            "is slower than modelled. MoE routing is assumed uniform. No queueing: TTFT is one prefill alone.",
        ),
        (
            "Python parity",
            "Every formula restates planner.model / planner.api; the test suite recalculates this workbook "
            "in LibreOffice over 50+ scenarios and checks every result against the Python model to 1e-9 relative.",
        ),
    ]
    for i, (topic, text) in enumerate(rows):
        s.set(f"A{4 + i}", topic, style="label")
        s.set(f"B{4 + i}", text, style="note")
    return s


def _defaults(catalog: Catalog, gpus: list, models: list) -> dict:
    gpu = next((g.name for g in gpus if g.name.startswith("H100 SXM")), gpus[0].name)
    mha = [m for m in models if m.attention_kind == "MHA"]
    model = next((m.name for m in mha if m.name == "LLaMA-65B"), (mha or models)[0].name)
    return {
        "gpu": gpu,
        "model": model,
        "context": 8192,
        "kv_precision": None,
        "weight_precision": None,
        "gpus": None,
        "memory_utilization": None,
        "price_per_gpu_hour": None,
        "batch": 1,
        "compare_model": None,
    }


def _select(table, names: list[str] | None, kind: str) -> list:
    if not names:
        return list(table)
    out = []
    for n in names:
        e = table.get(n)  # UnknownNameError with suggestions
        if e not in out:
            out.append(e)
    if not out:
        raise InvalidInputError(f"no {kind} selected")
    return out


def select_entries(catalog: Catalog, gpus: list[str] | None, models: list[str] | None) -> tuple[list, list]:
    """The GPUs and models a workbook lists (default: all), with the GQA sibling of every selected model."""
    gpu_list = _select(catalog.gpus, gpus, "GPU")
    model_list = _select(catalog.models, models, "model")
    for m in list(model_list):  # the levers compare each model with its GQA sibling: it must be listed
        sib = catalog.model(gqa_sibling(m, list(catalog.models)))
        if sib not in model_list:
            model_list.append(sib)
    return gpu_list, model_list


def build_catalog_sheets(
    catalog: Catalog, gpus: list, models: list, engine: EngineProfile, calibration: Calibration
) -> tuple[list[Sheet], list[Name]]:
    sheets, names = [], []
    for sheet, n in (
        gpus_sheet(catalog, gpus, engine, calibration),
        models_sheet(catalog, models, list(catalog.models)),
        precisions_sheet(list(catalog.precisions)),
    ):
        sheets.append(sheet)
        names += n
    return sheets, names


def build_whatif(
    catalog: Catalog | None = None,
    gpus: list[str] | None = None,
    models: list[str] | None = None,
    engine: str | EngineProfile | None = None,
    calibration=None,
) -> WorkbookSpec:
    """The what-if workbook for ``gpus`` x ``models`` of the catalog (default: all), as a pure description."""
    cat = catalog or default_catalog()
    eng = engine_profile(engine)
    cal = resolve_calibration(calibration)
    gpu_list, model_list = select_entries(cat, gpus, models)
    lever_kv = tuple(cat.precision(p).name for p in ("fp8", "int4"))
    c = _calc_rows(lever_kv)
    calc, probes = _calc_sheet(c)
    inputs, names = _inputs_sheet(_defaults(cat, gpu_list, model_list), c)
    results, p2 = _results_sheet(c)
    levers, p3 = _levers_sheet(c)
    sweeps, p4, where = _sweeps_sheet(c)
    charts = _charts_sheet(where)
    assumptions, n2 = assumptions_sheet(eng, cal)
    catalog_sheets, n3 = build_catalog_sheets(cat, gpu_list, model_list, eng, cal)
    marker = f"{MARKER_KIND}/{FORMAT_VERSION}"
    names = names + n2 + n3 + [Name(MARKER_NAME, f'"{marker}"', hidden=True)]
    return WorkbookSpec(
        sheets=[inputs, results, levers, charts, _explain_sheet(cat, eng), assumptions, calc, sweeps, *catalog_sheets],
        names=names,
        properties={MARKER_NAME: marker, VERSION_PROPERTY: __version__, "planner_engine": eng.name},
        active=INPUTS_SHEET,
        probes=probes + p2 + p3 + p4,
    )
