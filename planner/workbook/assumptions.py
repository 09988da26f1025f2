"""The Assumptions sheet: every engine parameter (``planner.engines.profiles.EngineProfile``) as a named input cell
``eng_<field>``, the constants, and the cells holding each exception's error value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

from openpyxl.utils import get_column_letter

from planner.accuracy.calibration import Calibration
from planner.api import PEAK_KEYS
from planner.engines.profiles import EngineProfile
from planner.workbook.formats import BOOL
from planner.workbook.layout import ASSUMPTIONS_SHEET, ENGINE_INDEX, ENGINE_NAME, ENGINE_NAMES
from planner.workbook.spec import Name, Sheet

#: What each EngineProfile field means (from planner/engines/profiles.py); a new field shows with its name only.
#: ``PUBLISHED_ROW_FIELDS``: EngineProfile fields set only where a published row is predicted, never on a profile a
#: user or the workbook plans with, so on no sheet: SGLang 0.4's eager decode fields (s123, set only on published
#: rows' profiles by ``with_sglang_eager_decode``; 0 on every profile a user or the workbook plans with), vLLM V0's
#: ``prefill_only_steps`` (s127, set only on published rows' profiles by ``with_v0_default_scheduler``; False on every
#: profile a user or the workbook plans with) and
#: ``experts_whole`` (s126, set only under ``EXPERT_PARALLEL_FROM_ROWS`` for published rows) and
#: ``max_prefill_tokens`` (s139, set only on published rows' profiles whose command sets ``--max-prefill-tokens``) and
#: ``prefill_chunk_divisor`` (s183, set only by ``with_prefill_chunk_divisor`` for SGLang rows under attention DP) and
#: ``scheduler_recv_interval`` and ``row_memory_utilization`` (s187, set only on published rows' profiles whose
#: command sets ``--scheduler-recv-interval`` or a memory share) and ``decode_moe_layer_overhead_s`` (h-moetab, set only
#: on published rows' profiles by ``planner.engines.profiles.with_moe_layer_costs``; 0 on every shipped profile) and
#: ``decode_graph_gap_above`` (h-p50, set only under ``TRTLLM_SERVE_EAGER_GRAPH_GAPS`` for published rows) and
#: ``dp_attention_kv_ranks`` (h-dsk042, set only by ``with_dp_attention_kv_pool`` for SGLang rows under attention DP) and
#: ``moe_flop_scale`` / ``moe_flop_ceiling`` (h-tpotcls, set only under ``kernel_paths.VLLM_HOPPER_MXFP4_MARLIN`` for
#: published rows) and ``sglang_piecewise_off`` (h-ttftp50, set only under ``SGLANG_PIECEWISE_COVERAGE`` for published
#: rows whose command turns SGLang's piecewise prefill graph off).
PUBLISHED_ROW_FIELDS = frozenset(
    {
        "decode_graph_max_batch",
        "eager_layer_s",
        "eager_moe_layer_s",
        "decode_moe_layer_overhead_s",
        "decode_graph_gap_above",
        "moe_flop_scale",
        "moe_flop_ceiling",
        "prefill_only_steps",
        "max_prefill_tokens",
        "experts_whole",
        "prefill_chunk_divisor",
        "dp_attention_kv_ranks",
        "scheduler_recv_interval",
        "row_memory_utilization",
        "sglang_piecewise_off",
    }
)
ENGINE_FIELD_HELP = {
    "name": ("", "engine whose memory budgeting the formulas follow"),
    "description": ("", "in words"),
    "budget_mode": (
        "total|free",
        '"total" (vLLM): visible x utilization - weights/GPU - reserve; '
        '"free" (TensorRT-LLM): utilization x (visible - weights/GPU - reserve)',
    ),
    "memory_utilization": ("fraction", "share of GPU memory the engine may use (vLLM gpu_memory_utilization)"),
    "use_engine_visible_memory": ("TRUE/FALSE", "use the memory torch sees (GPUs sheet) rather than physical memory"),
    "visible_memory_fraction": ("fraction", "visible / physical memory where the catalog has no measured total"),
    "non_torch_bytes": ("B", "CUDA context, cuBLAS workspaces, allocator slack outside torch, per GPU"),
    "non_torch_bytes_tensor_parallel": ("B", "extra non-torch memory per GPU when tensor-parallel (NCCL buffers)"),
    "activation_bytes_per_token_width": (
        "B",
        "activation peak of the profiling pass per batched token x (hidden + 2 x MLP width / GPUs)",
    ),
    "activation_bytes_per_seq_vocab": ("B", "sampler activation peak per sequence x vocabulary entry"),
    "moe_workspace_bytes_per_value": (
        "B",
        "fused-MoE workspace of the profiling pass per element: tokens x experts per token x "
        "(max(w, hidden) + max(2w, hidden)), w the expert width per GPU; 0: none",
    ),
    "max_num_batched_tokens": ("tokens", "tokens of the profiling pass; blank: the GPU-class default below"),
    "max_num_seqs": ("sequences", "sequences of the sampler run; blank: the GPU-class default below"),
    "large_gpu_min_memory_bytes": ("B", "a GPU with at least this much memory is 'large' (vLLM defaults)"),
    "large_gpu_excluded_names": (
        "text",
        'a device name holding one of these is never large, any case (vLLM 0.9+: "a100"; GPUs sheet, device name)',
    ),
    "large_gpu_required_names": ("text", "when not blank, only a device name holding one of these is large"),
    "max_num_batched_tokens_large_gpu": ("tokens", "profiling tokens on a large GPU"),
    "max_num_seqs_large_gpu": ("sequences", "sampler sequences on a large GPU"),
    "max_num_batched_tokens_small_gpu": ("tokens", "profiling tokens on other GPUs"),
    "max_num_seqs_small_gpu": ("sequences", "sampler sequences on other GPUs"),
    "xlarge_gpu_min_memory_bytes": (
        "B",
        "a GPU with at least this much memory gets the largest defaults, any name (vLLM 0.28+: 160 GiB); blank: none",
    ),
    "max_num_batched_tokens_xlarge_gpu": ("tokens", "profiling tokens on the largest GPUs"),
    "max_num_seqs_xlarge_gpu": ("sequences", "sampler sequences on the largest GPUs"),
    "block_size": ("tokens", "KV cache is allocated in blocks of this many tokens"),
    "kv_heads_any_split": (
        "TRUE/FALSE",
        "TRUE: KV heads need not divide the group (TensorRT-LLM: ceil(KV heads / GPUs) each)",
    ),
    "memory_fraction_rule": (
        "",
        "a rule that sets the default utilization per GPU and group (SGLang's mem_fraction_static); the workbook "
        "uses memory_utilization",
    ),
    "kv_group_padding": (
        "TRUE/FALSE",
        "TRUE: layers paged in equal-size groups padded with empty layers, a sliding group one block over its "
        "window (vLLM's hybrid KV cache manager)",
    ),
    "fp8_ds_mla_cache": (
        "TRUE/FALSE",
        "TRUE: a DSA model's fp8 KV cache is vLLM's fp8_ds_mla record (Models: fp8_ds_mla bytes, 656 B a token per "
        "layer for DeepSeek-V3.2's 576 values); FALSE: values x bytes",
    ),
    "mxfp4_expert_hidden_alignment": (
        "elements",
        "MXFP4 experts' hidden size padded to a multiple of this when loaded (vLLM, SGLang: 256; 0: as stored)",
    ),
    "kv_precisions": ("", "KV-cache precisions the engine caches in (blank: any KV format, a what-if)"),
    "kv_precisions_source": ("", "where the engine documents its KV-cache precisions"),
    "bandwidth_efficiency": (
        "factor",
        "factor on the bandwidth the kernel curves were measured at in a decode step (memory time / this; 1: as "
        "measured); on peak HBM bandwidth where kernel_curves is FALSE",
    ),
    "decode_flop_efficiency": (
        "factor",
        "factor on the measured kernels' FLOP/s in a compute-bound decode step (1: as measured); on peak FLOP/s "
        "where kernel_curves is FALSE",
    ),
    "prefill_flop_efficiency": (
        "factor",
        "factor on the measured kernels' FLOP/s in prefill (1: as measured); on peak FLOP/s where kernel_curves is "
        "FALSE",
    ),
    "step_overhead_s": ("s", "fixed time per step (scheduling, sampling, launch gaps)"),
    "layer_overhead_s": ("s", "time per layer per step (launch gaps CUDA graphs do not hide)"),
    "moe_layer_overhead_s": ("s", "time per MoE layer per step (the fused-MoE kernel chain's floor)"),
    "sequence_overhead_s": ("s", "time per sequence per decode step (per-request CPU work: sampling, detokenizing)"),
    "host_overlap": (
        "fraction",
        "share of the per-sequence host time hidden behind the device step: 1 where the host loop schedules the next "
        "step while the device runs (vLLM 0.14+), so a decode step takes max(device, per-sequence time x batch); 0: "
        "the two add",
    ),
    "prefill_latency_s": ("s", "fixed latency of a prefill beyond its roofline (runs outside the CUDA graphs)"),
    "allreduce_latency_s": ("s", "latency of one all-reduce (two a layer if TP); blank: the GPUs sheet's latency"),
    "interconnect_efficiency": ("fraction", "achieved share of interconnect bandwidth in an all-reduce"),
    "roofline_overlap": ("fraction", "overlap of memory and compute time: step = max + (1 - overlap) x min"),
    "kernel_curves": ("TRUE/FALSE", "TRUE: operators timed by the GPU's measured kernel curves; FALSE: the roofline"),
    "decode_kv_reads_per_query_head": (
        "TRUE/FALSE",
        "TRUE: decode reads each KV head once per query head (TensorRT-LLM before XQA)",
    ),
    "allreduce_table": (
        "TRUE/FALSE",
        "TRUE: all-reduce time from the AllReduce sheet; FALSE: latency + bytes / bandwidth",
    ),
    "moe_exchange": (
        "",
        "data-parallel attention's MoE: gather (all-gather + reduce-scatter, bf16), gather-quantized (TensorRT-LLM), "
        "alltoall; this tensor-parallel workbook does not use it",
    ),
    "pipeline_seqs_per_micro_batch": (
        "TRUE/FALSE",
        "pipelines: TRUE, each micro-batch up to max_num_seqs (TensorRT-LLM); FALSE, all of them together; "
        "this tensor-parallel workbook does not use it",
    ),
    "attention_dp_gate_iters": (
        "steps",
        "TensorRT-LLM attention-DP balancing: new prompts enter every this many steps (timeout_iters) or when a rank "
        "idles; 0 (every shipped engine): off, as its default; a published run's own setting only",
    ),
    "attention_dp_gate_quorum": (
        "prompts",
        "TensorRT-LLM attention-DP balancing: waiting prompts that open the gate early (every rank holding one); 0: "
        "off; this tensor-parallel workbook does not use it",
    ),
    "sparse_mla_kernel": (
        "",
        "DSA models: the engine family whose measured sparse MLA kernel times each token (GPUs sheet "
        "sparse_mla_token_s); blank: not modelled apart",
    ),
    "fp8_kv_at_16_bit_rate": (
        "TRUE/FALSE",
        "TRUE: decode attention reads an 8-bit KV cache at the 16-bit cache's bytes/s (TensorRT-LLM's XQA); FALSE: "
        "at its own measured rate (GPUs sheet attention_fp8_bandwidth_efficiency; vLLM's FlashAttention-3 on Hopper: "
        "about half)",
    ),
    "sparse_mla_prefill_max_heads": (
        "heads",
        "DSA models: prompt tokens run the sparse MLA kernel too below this many query heads per GPU (vLLM: 32; "
        "TensorRT-LLM: every count); 0: decode tokens only",
    ),
}


def number_format(field: str, unit: str) -> str | None:
    """One format per unit: bytes and counts as whole numbers with separators, per-unit byte coefficients and
    seconds with fixed decimals (no scientific notation), fractions with two to four decimals, switches TRUE / FALSE
    (``formats.BOOL``: LibreOffice showed six of the eight as 1 / 0)."""
    if unit == "TRUE/FALSE":
        return BOOL
    if unit == "B":
        return "0.000" if "_bytes_per_" in field else "#,##0"
    if unit in ("tokens", "sequences", "heads", "elements", "steps", "prompts"):
        return "#,##0"
    if unit == "s":
        return "0.000000"
    if unit in ("fraction", "factor"):
        return "0.00##"
    return None


def engine_value(engine: EngineProfile, field: str) -> Any:
    v = getattr(engine, field)
    return None if v is None else v


#: Characters of the Value column (B): a text value longer than this is shown in the Meaning column instead.
VALUE_WIDTH = 16
#: Fields on the sheet that are not parameters of a run: the engine's name (the Load sheet's "Engine" row) and prose.
NOT_PARAMETERS = frozenset({"name", "description"})


def simulated_parameters(engine: EngineProfile) -> tuple[tuple[str, int | None, Any], ...]:
    """The engine parameters planner's simulation (the Load sheet) runs with, as the Assumptions sheet holds them in
    its Value column: (field, item number from 1 of a list's cells or None for one cell, value), in the sheet's
    order. Leaves out the name, the description and texts too long for the column (sources, shown in Meaning)."""
    out: list[tuple[str, int | None, Any]] = []
    for f in fields(EngineProfile):
        if f.name in PUBLISHED_ROW_FIELDS or f.name in NOT_PARAMETERS:
            continue
        value = engine_value(engine, f.name)
        if isinstance(value, tuple):
            out.extend((f.name, j, item) for j, item in enumerate(list(value) or [None], start=1))
        elif not (isinstance(value, str) and len(value) > VALUE_WIDTH):
            out.append((f.name, None, value))
    return tuple(out)


def _typed(field, value: Any, where: str) -> Any:
    """An Assumptions cell's value as the EngineProfile field's annotation takes it (a float field read back as
    268435456 is 268435456.0, so an unedited sheet gives the profile it was written from; a switch TRUE / FALSE, or 1 /
    0 as the workbook's formulas read TRUE and FALSE and as a spreadsheet saves a TRUE formula's result); a
    WorkbookError naming the cell otherwise."""
    from planner.errors import shown_name
    from planner.workbook.reader import WorkbookError

    kind = str(field.type)
    if value is None or value == "":
        if "None" in kind or kind == "str" or "tuple" in kind:
            return "" if kind == "str" else None
        raise WorkbookError(f"{where} ({field.name}) is empty; the engine needs a value ({kind})")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):  # a spreadsheet's TRUE is 1: a TRUE formula's result
            return bool(value)
        raise WorkbookError(f"{where} ({field.name}) must be TRUE or FALSE; got {shown_name(value)}")
    if kind.startswith(("int", "float")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise WorkbookError(f"{where} ({field.name}) must be a number; got {shown_name(value)}")
        if kind.startswith("int"):
            if value != int(value):
                raise WorkbookError(f"{where} ({field.name}) must be a whole number; got {shown_name(value)}")
            return int(value)
        return float(value)
    return str(value).strip()


def read_engine(wb, path: Any, engine: EngineProfile) -> EngineProfile:
    """``engine`` with the parameters a workbook's Assumptions sheet holds now (``simulated_parameters``' cells, by
    their ``eng_<field>`` names, read by ``reader.SavedValues``: LibreOffice's ``=TRUE()`` is TRUE, another formula
    its saved value), so that ``planner workbook refresh`` simulates the engine the workbook's formulas use: memory
    utilization 0.5 typed there is 0.5 in the Load sheet's runs. A Value cell holding the formula planner wrote
    (``reads_engine_column``) is read from ``engine``'s own column (``engine_column``: edits there count, and no saved
    value is needed). A name the file lacks keeps the profile's value. A WorkbookError (one line, naming the cell) for
    a value of the wrong kind or one the profile refuses."""
    from planner.errors import PlannerError
    from planner.workbook.reader import SavedValues, WorkbookError, engine_column

    kinds = {f.name: f for f in fields(EngineProfile)}
    saved = SavedValues(path)
    own = engine_column(wb, engine.name)
    changes: dict[str, Any] = {}

    def read(cell) -> tuple[Any, str]:
        value = cell.value
        if type(value).__name__ == "CellRichText":
            value = str(value)
        if own is not None and reads_engine_column(value):
            cell = wb[own[0]].cell(cell.row, own[1])
        return saved(cell), f"{path}: {cell.parent.title}!{cell.coordinate}"

    for name in dict.fromkeys(field for field, _, _ in simulated_parameters(engine)):
        dn = wb.defined_names.get(f"eng_{name}")
        dests = list(dn.destinations) if dn is not None else []
        if len(dests) != 1 or dests[0][0] not in wb.sheetnames:
            continue
        sheet, ref = dests[0]
        cells = wb[sheet][ref.replace("$", "")]
        cells = [row[0] for row in cells] if isinstance(cells, tuple) else [cells]
        values = [read(cell) for cell in cells]
        if isinstance(getattr(engine, name), tuple) or len(cells) > 1:
            items = tuple(str(v).strip() for v, _ in values if v is not None and str(v).strip())
            value = items if items or getattr(engine, name) is not None else None
        else:
            value = _typed(kinds[name], *values[0])
        if value != getattr(engine, name):  # equal (75161927680 read back as a float): the profile's own, unchanged
            changes[name] = value
    try:
        return replace(engine, **changes)
    except (PlannerError, ValueError, TypeError) as exc:
        raise WorkbookError(f"{path}: the Assumptions sheet's engine parameters are refused: {exc}") from None


#: The Assumptions sheet's first engine column (E): one column per engine offered on Inputs (``ENGINE_NAMES``, the
#: headers), each holding that engine's profile; the Value column (B) reads the chosen engine's (``ENGINE_INDEX``).
FIRST_ENGINE_COL = 5
#: Characters of an engine column (folded: "+" above the columns shows them).
ENGINE_COL_WIDTH = 14
#: The row of the engine-column headers (the sheet's header row) and of ``ENGINE_INDEX``.
HEADER_ROW, INDEX_ROW = 3, 4


def engine_columns(engines: Sequence[EngineProfile]) -> tuple[str, str]:
    """The first and last engine column letters of the Assumptions sheet for ``engines``."""
    return get_column_letter(FIRST_ENGINE_COL), get_column_letter(FIRST_ENGINE_COL + len(engines) - 1)


def value_formula(row: int, engines: Sequence[EngineProfile]) -> str:
    """The Value cell of an engine parameter on ``row``: the chosen engine's column of that row (``ENGINE_INDEX``), ""
    where it is blank (a blank optional parameter: the formulas read "" as none given, never 0)."""
    first, last = engine_columns(engines)
    cell = f"INDEX(${first}${row}:${last}${row},{ENGINE_INDEX})"
    return f'=IF({cell}="","",{cell})'


def reads_engine_column(value: Any) -> bool:
    """Whether an Assumptions cell holds the formula planner wrote (``value_formula``): it reads the chosen engine's
    column, so its value is that column's cell (``read_engine``), whatever the file saved with it."""
    return isinstance(value, str) and value.startswith("=") and ENGINE_INDEX in value.lower()


def assumptions_sheet(
    engine: EngineProfile | Sequence[EngineProfile], calibration: Calibration
) -> tuple[Sheet, list[Name]]:
    """The Assumptions sheet for ``engine`` (a sequence: the engines offered on Inputs, the default first): one column
    of parameters per engine (folded, at the right), and the Value column, named ``eng_<field>``, reading the column
    of the engine chosen on Inputs. A Value typed over holds for every engine; an engine's column is that engine's
    own."""
    engines = [engine] if isinstance(engine, EngineProfile) else list(engine)
    first_col, last_col = engine_columns(engines)
    s = Sheet(ASSUMPTIONS_SHEET, freeze="A4", tab_color="C00000")
    s.widths.update(A=38, B=VALUE_WIDTH, C=13, D=90)
    s.set(
        "A1",
        f'="Assumptions: the "&{ENGINE_NAME}&" engine profile (planner.engines.profiles) and constants"',
        style="title",
    )
    s.note(
        "A2",
        "Every engine parameter the formulas use is a named cell here (defined name eng_ + parameter): the Value "
        "column reads the column of the engine chosen on Inputs (folded at the right, one per engine: + above the "
        "columns shows them). Type over a Value to tune it for every engine, or edit an engine's column to tune that "
        "engine. Per-GPU efficiency factors (GPUs sheet) refer to these unless a calibration file set them.",
    )
    for col, h in zip("ABCD", ("Parameter (defined name eng_...)", "Value", "Unit", "Meaning"), strict=True):
        s.set(f"{col}{HEADER_ROW}", h, style="header")
    for j, e in enumerate(engines):
        col = get_column_letter(FIRST_ENGINE_COL + j)
        s.set(f"{col}{HEADER_ROW}", e.name, style="header", text=True)
        s.widths[col] = ENGINE_COL_WIDTH
        s.folded.append(col)
    names: list[Name] = [
        Name(ENGINE_NAMES, f"{ASSUMPTIONS_SHEET}!${first_col}${HEADER_ROW}:${last_col}${HEADER_ROW}"),
        Name(ENGINE_INDEX, f"{ASSUMPTIONS_SHEET}!$B${INDEX_ROW}"),
    ]
    s.set(f"A{INDEX_ROW}", "Engine column used (Inputs: Engine)", style="label")
    s.set(
        f"B{INDEX_ROW}",
        f'=MATCH(IF(in_engine="",${first_col}${HEADER_ROW},TRIM(in_engine)),{ENGINE_NAMES},0)',
        fmt="0",
        style="calc",
    )
    s.set(f"C{INDEX_ROW}", "column", style="unit")
    s.set(
        f"D{INDEX_ROW}",
        f"1: the first engine column ({engines[0].name}); the engine chosen on Inputs (blank: the first); #N/A: a "
        "name the columns do not hold",
        style="note",
    )
    from planner.workbook.writer import text_height

    r = INDEX_ROW + 1
    for f in fields(EngineProfile):
        if f.name in PUBLISHED_ROW_FIELDS:  # not read by any formula, 0 on every shipped profile
            continue
        values = [engine_value(e, f.name) for e in engines]
        unit, meaning = ENGINE_FIELD_HELP.get(f.name, ("", ""))
        s.set(f"A{r}", f.name, style="label")
        s.set(f"C{r}", unit, style="unit")
        s.set(f"D{r}", meaning, style="note")
        if f.name == "name":  # the chosen engine, from Inputs
            s.set(f"B{r}", f"=INDEX({ENGINE_NAMES},{ENGINE_INDEX})", style="calc")
            s.set(f"D{r}", "the engine chosen on Inputs (Engine): " + meaning, style="note")
            names.append(Name(f"eng_{f.name}", f"{ASSUMPTIONS_SHEET}!$B${r}"))
            for j, v in enumerate(values):
                s.set(f"{get_column_letter(FIRST_ENGINE_COL + j)}{r}", v, text=True)
            r += 1
            continue
        if any(isinstance(v, tuple) for v in values) or f.name == "kv_precisions":  # one cell per item, downwards
            items = [list(v or ()) for v in values]
            rows = max([1, *map(len, items)])
            for i in range(rows):
                s.set(f"B{r + i}", value_formula(r + i, engines), style="input")
                for j, vs in enumerate(items):
                    item = vs[i] if i < len(vs) else None
                    s.set(f"{get_column_letter(FIRST_ENGINE_COL + j)}{r + i}", item, style="input", text=True)
            names.append(Name(f"eng_{f.name}", f"{ASSUMPTIONS_SHEET}!$B${r}:$B${r + rows - 1}"))
            r += rows
            continue
        longest = max((len(v) for v in values if isinstance(v, str)), default=0)
        for j, v in enumerate(values):  # each engine's own value, in its column
            style = None if isinstance(v, str) and len(v) > VALUE_WIDTH else "input"
            s.set(
                f"{get_column_letter(FIRST_ENGINE_COL + j)}{r}",
                v,
                fmt=number_format(f.name, unit),
                style=style,
                text=isinstance(v, str),
            )
        if longest > VALUE_WIDTH:  # a source or other long text: in Meaning (its height: the longest engine's)
            s.set(f"B{r}", "(see right)", style="unit")
            s.set(f"D{r}", value_formula(r, engines), style="note")
            longest_text = max((v for v in values if isinstance(v, str)), key=len)
            s.heights[r] = text_height(longest_text, "note", s.widths["D"]) or 15
            if f.name != "description":  # prose is no parameter: no name
                names.append(Name(f"eng_{f.name}", f"{ASSUMPTIONS_SHEET}!$D${r}"))
            r += 1
            continue
        fmt = number_format(f.name, unit)
        s.set(f"B{r}", value_formula(r, engines), fmt=fmt, style="input")
        names.append(Name(f"eng_{f.name}", f"{ASSUMPTIONS_SHEET}!$B${r}"))
        r += 1
    r += 1
    s.set(f"A{r}", "Constants", style="subtitle")
    r += 1
    s.set(f"A{r}", "Peak keys", style="label")
    s.set(f"D{r}", "the order of the GPUs sheet's peak columns (FLOP/s by math precision)", style="note")
    for j, k in enumerate(PEAK_KEYS):
        s.set(f"B{r + j}", k)
    names.append(Name("peak_keys", f"{ASSUMPTIONS_SHEET}!$B${r}:$B${r + len(PEAK_KEYS) - 1}"))
    r += len(PEAK_KEYS)
    # Cells holding the error value of each exception, so a formula shows what the model would raise.
    error_cells = (
        (
            "Does not fit",
            "NOT_FIT",
            "=ASIN(2)",
            "#NUM!: the weights plus the sequences asked for do not fit (DoesNotFitError).",
        ),
        (
            "Invalid input",
            "BAD_INPUT",
            '="x"+0',
            "#VALUE!: an input of the wrong kind, e.g. text for a number (InvalidInputError). An unknown GPU, model "
            "or precision name shows #N/A.",
        ),
        (
            "Out of range",
            "OUT_OF_RANGE",
            "=ASIN(2)",
            "#NUM!: a number outside what makes sense: a context of 0, a utilization above 1, a weight-only format as "
            "KV cache (OutOfRangeError).",
        ),
        (
            "No data",
            "NO_DATA",
            "=NA()",
            "#N/A: the catalog lacks a number the result needs, e.g. a price (MissingDataError).",
        ),
    )
    for label, name, formula, note in error_cells:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", formula)
        s.set(f"D{r}", f"A cell that is {note}", style="note")
        names.append(Name(name, f"{ASSUMPTIONS_SHEET}!$B${r}"))
        r += 1
    r -= 1
    r += 2
    s.set(f"A{r}", "Calibration", style="subtitle")
    s.set(f"B{r}", str(calibration.path) if calibration.path else "none (engine defaults for every GPU)", text=True)
    return s, names
