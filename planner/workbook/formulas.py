"""The capacity model restated as spreadsheet formula templates (English function names, commas).

Templates name other quantities as ``{key}``; a layout resolves each key to a cell (``C45``, ``Calc!$C$45``)
with ``render``. Engine parameters are defined names on the Assumptions sheet (``eng_...``); ``NOT_FIT``, ``BAD_INPUT``,
``OUT_OF_RANGE`` and ``NO_DATA`` are cells holding #NUM!, #VALUE!, #NUM! and #N/A (``PlannerError.excel_error``
of DoesNotFitError, InvalidInputError, OutOfRangeError, MissingDataError), so a formula that refers to them
shows that error as the model raises the exception. Unknown names fail MATCH: #N/A, as UnknownNameError.

Each template mirrors one function of ``planner.model`` / ``planner.api`` (named in its comment), in the same
order of operations, so the parity test holds to 1e-9 relative. Only the functions both Excel and LibreOffice
compute without a prefix are used: INDEX, MATCH, IF, AND, OR, ISNUMBER, ISERROR, INT, MIN, MAX, POWER, LN,
EXP, LOG, ROWS, COLUMNS, NA.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planner.api import GPU_GROUPS, MAX_BATCH_INPUT, MAX_CONTEXT_TOKENS, MAX_GPUS
from planner.units import MAX_RENT_USD_PER_GPU_HOUR

#: vLLM's largest captured CUDA-graph batch (planner.model.operators.CUDA_GRAPH_MAX_BATCH; the workbook does not
#: import the model: tests/test_workbook.py checks the two agree), as ``cuda_graph_batch`` spells it too
CUDA_GRAPH_MAX_BATCH = 512
_KEY = re.compile(r"\{([A-Za-z0-9_:.]+)\}")


def render(template: str, resolve: Callable[[str], str]) -> str:
    """The formula with every ``{key}`` replaced by ``resolve(key)``; a leading '=' is added."""
    body = _KEY.sub(lambda m: resolve(m.group(1)), template)
    return body if body.startswith("=") else "=" + body


def local(template: str, prefix: str) -> str:
    """``{.x}`` -> ``{prefix_x}``: keys of one block (decode at a batch, prefill)."""
    return template.replace("{.", "{" + prefix + "_")


def whole(x: str, maximum: int) -> str:
    """x if it is a whole number from 1 to maximum; #NUM! for another number, #VALUE! for text (checks._count)."""
    return (
        f"IF(ISERROR({x}),{x},IF(ISNUMBER({x}),IF(AND({x}>=1,{x}<={maximum},{x}=INT({x})),{x},OUT_OF_RANGE),BAD_INPUT))"
    )


def count_or_default(x: str, default: str, maximum: int) -> str:
    return f'IF({x}="",{default},{whole(x, maximum)})'


CONTEXT = whole("{ctx_in}", MAX_CONTEXT_TOKENS)
BATCH_IN = count_or_default("{batch_in}", "{served_batch}", MAX_BATCH_INPUT)
GPUS_IN = whole("{gpus_in}", MAX_GPUS)
UTIL = 'IF({util_in}="",eng_memory_utilization,IF(ISNUMBER({util_in}),IF(AND({util_in}>0,{util_in}<=1),{util_in},OUT_OF_RANGE),BAD_INPUT))'
#: A rent per GPU-hour as ``checks._price`` takes one: above 0 and at most ``MAX_RENT_USD_PER_GPU_HOUR``
#: (``planner.units.RENT_ACCEPTED``), #NUM! otherwise (a price of 0 priced every token at nothing), #VALUE! for text.
PRICE = (
    'IF({price_in}="",IF({price_catalog}>0,{price_catalog},NO_DATA),'
    f"IF(ISNUMBER({{price_in}}),IF(AND({{price_in}}>0,{{price_in}}<={MAX_RENT_USD_PER_GPU_HOUR:.0f}),{{price_in}},"
    "OUT_OF_RANGE),BAD_INPUT))"
)


def layer_tokens(x: str) -> str:
    """model.cached_tokens_per_layer_sum: full layers hold x tokens, sliding-window layers at most the window."""
    return f"({{full}}*{x}+{{swl}}*MIN({x},{{window}}))"


def attended_tokens(x: str) -> str:
    """model.attended_tokens_per_layer_sum: full layers attend to min(x, top-k) (top-k blank: all x), sliding-window
    layers at most the window."""
    return f"({{full}}*IF({{topk}}>0,MIN({x},{{topk}}),{x})+{{swl}}*MIN({x},{{window}}))"


def causal_pairs(x: str, sparse: str | None = None) -> str:
    """prefill.causal_attention_flop's attended pairs per query over layers: full layers min(t, k) averaged over the
    prompt, m^2 / (2x) + (x - m) m / x with m = min(x, k) (x / 2 without top-k), sliding-window layers min(x/2, w);
    ``sparse`` (a 0/1 cell): the full layers' pairs left to the fp8 sparse MLA kernel (``sparse_mla_time``)."""
    m = f"MIN({x},{{topk}})"
    mean = f"IF({{topk}}>0,{m}*{m}/(2*{x})+({x}-{m})*{m}/{x},{x}/2)"
    if sparse is not None:
        mean = f"{mean}*(1-{sparse})"
    return f"({{full}}*{mean}+{{swl}}*MIN({x}/2,{{window}}))"


def cached_latent_bytes(bytes_per_value: str = "{kvbpe}") -> str:
    """memory.kv_latent_bytes_per_token_per_layer: KV values per token per layer x ``bytes_per_value``, or a DSA model's
    fp8_ds_mla record (Models sheet) where the engine caches one (eng_fp8_ds_mla_cache) and the KV precision is fp8
    (``planner.catalog.resolve.kv_layout_extra_bytes``)."""
    vllm_record = 'AND(eng_fp8_ds_mla_cache,{dsmla}>0,INDEX(prec_names,{kv_row})="fp8")'
    return f"IF({vllm_record},{{dsmla}},{{kvel}}*{bytes_per_value})"


def sparse_mla_applies(prefill: bool) -> str:
    """operators.sparse_mla_applies: 1 where a DSA model (top-k > 0) runs on a GPU and engine with the fp8 sparse MLA
    kernel's time (its GPUs-sheet value > 0); a prefill only below the engine's head count per GPU."""
    cond = "{topk}>0,{f_sparse_mla_token_s}>0"
    if prefill:
        cond += ",{heads}/{n}<eng_sparse_mla_prefill_max_heads"
    return f"IF(AND({cond}),1,0)"


def sparse_mla_time(tokens: str) -> str:
    """operators.sparse_mla_time_s: applies x tokens x full layers x time per token and 64-head tile x tiles."""
    return f"{{.sparse}}*{tokens}*{{full}}*{{f_sparse_mla_token_s}}*ROUNDUP({{heads}}/{{n}}/64,0)"


def peak_of(key: str) -> str:
    """The GPU's peak for a math key (blank -> 0)."""
    return f"INDEX(gpu_peaks,{{gpu_row}},MATCH({key},peak_keys,0))"


def peak_or(key: str, other: str) -> str:
    """The GPU's peak for math ``key`` where it has one (> 0), else its peak for math ``other``."""
    return f"IF({peak_of(key)}>0,{peak_of(key)},{peak_of(other)})"


def twin(key: str) -> str:
    """resolve._PEAK_TWINS: bf16 <-> fp16; other keys have none (their own key again changes nothing)."""
    return f'IF({key}="bf16","fp16",IF({key}="fp16","bf16",{key}))'


def reserve(n: str) -> str:
    """model.activation_peak_bytes (with model.moe_workspace_bytes) + model.reserve_bytes_per_gpu."""
    return (
        f"(eng_activation_bytes_per_token_width*{{tokens}}*({{hidden}}+2*{{inter}}/{n})"
        f"+eng_activation_bytes_per_seq_vocab*{{seqs}}*{{vocab}}"
        f'+IF({{ep}}="mxfp4",0,eng_moe_workspace_bytes_per_value*{{tokens}}*{{k}}'
        f"*(MAX({{expw}}/{n},{{hidden}})+MAX(2*{{expw}}/{n},{{hidden}})))"
        f"+eng_non_torch_bytes+IF({n}>1,eng_non_torch_bytes_tensor_parallel,0))"
    )


def budget(n: str, reserve_expr: str) -> str:
    """model.kv_budget_bytes_per_gpu ("total": vLLM; "free": TensorRT-LLM), the weights per GPU those of
    model.memory_plan's tensor-parallel group: loaded / n + the tensors every GPU holds whole beyond their 1/n share
    (model.tp_replicated_bytes_per_gpu: replicated params x bytes per weight x (1 - 1/n))."""
    weights = f"({{loaded_weights}}/{n}+{{reptp}}*{{wbpp}}*(1-1/{n}))"
    return (
        f'IF(eng_budget_mode="free",{{util}}*({{visible_raw}}-{weights}-{reserve_expr}),'
        f"{{visible_raw}}*{{util}}-{weights}-{reserve_expr})"
    )


def replication(n: str) -> str:
    """model.kv_replication: n x max(1, ceil(KV heads / n)) / KV heads."""
    return f"({n}*MAX(1,-INT(-{{kvh}}/{n}))/{{kvh}})"


def padded_layer_tokens(ctx: str) -> str:
    """model.padded_kv_layer_tokens at one decoding token: layers per group x block x (full groups x ceil(ctx / b)
    + local groups x (ceil(min(window + chunked, ctx) / b) + 1 - chunked))."""
    return (
        f"{{kv_group_size}}*{{block}}*(IF({{full}}>0,-INT(-{{full}}/{{kv_group_size}}),0)*-INT(-{ctx}/{{block}})"
        f"+IF({{swl}}>0,-INT(-{{swl}}/{{kv_group_size}}),0)*(-INT(-MIN({{window}}+{{chunked}},{ctx})/{{block}})+1-{{chunked}}))"
    )


def held_layer_tokens(ctx: str) -> str:
    """The layer-tokens a sequence of ctx tokens holds in the engine's cache: vLLM's padded groups
    (eng_kv_group_padding) or the block-rounded layer-tokens (model.memory_plan)."""
    return f"IF(eng_kv_group_padding,{padded_layer_tokens(ctx)},{layer_tokens(seq_tokens(ctx))})"


def seq_tokens(ctx: str) -> str:
    """Context rounded up to whole KV blocks: ceil(ctx / block) x block."""
    return f"(-INT(-{ctx}/{{block}})*{{block}})"


def hybrid_sequence(n: str, ctx: str = "{context}") -> str:
    """model.hybrid_sequence_bytes on n GPUs: n x group size x block x token page x (attention groups x
    ceil(ctx / block) + state groups), the block from model.hybrid_state_block_tokens (vLLM's attention block enlarged
    until one page holds a layer's state)."""
    token_page = f"(({{kvrec}}+{{idxb}})*{replication(n)}/{n})"
    state_page = f"({{state}}/MAX({{linl}},1)/{n})"
    block = f"({{block}}*MAX(-INT(-{state_page}/({{block}}*{token_page})),1))"
    size = "MAX(IF(MAX({full},{linl})<1.5*MIN({full},{linl}),MAX({full},{linl}),MIN({full},{linl})),1)"
    groups = f"((-INT(-{{full}}/{size}))*(-INT(-{ctx}/{block}))+(-INT(-{{linl}}/{size})))"
    return f"({n}*{size}*({block}*{token_page})*{groups})"


def sequence_bytes(n: str, kv_seq_base: str = "{kv_seq_base}") -> str:
    """model.memory_plan's bytes of one sequence over n GPUs: KV blocks x replication + state, or with vLLM's paging
    (eng_kv_group_padding) and state layers, ``hybrid_sequence``."""
    return f"IF(AND(eng_kv_group_padding,{{linl}}>0),{hybrid_sequence(n)},{kv_seq_base}*{replication(n)}+{{state}})"


def max_batch_on(n: str, kv_seq_base: str = "{kv_seq_base}") -> str:
    """model.memory_plan's max batch on a group of n GPUs, in one formula (model.max_batch_from_budget)."""
    return f"INT(MAX({budget(n, reserve(n))}*{n},0)/({sequence_bytes(n, kv_seq_base)}))"


def tp_ok(n: str) -> str:
    """model.tensor_parallel_ok: heads % n = 0 and (KV heads % n = 0 or n % KV heads = 0, unless the engine splits KV
    heads any way: eng_kv_heads_any_split), dense MLP width % n = 0, expert width % n = 0, Mamba-2 heads and groups
    (ssm_split_width) % n = 0, and with a weight block b: n = 1 or (MLP width and expert width) % (n b) = 0."""
    heads = (
        f"INT({{heads}}/{n})={{heads}}/{n},"
        f"OR(eng_kv_heads_any_split,INT({{kvh}}/{n})={{kvh}}/{n},INT({n}/{{kvh}})={n}/{{kvh}})"
    )
    step = f"({n}*MAX({{wblock}},1))"
    blocks = f"OR({n}=1,{{wblock}}=0,AND(INT({{mlpw}}/{step})={{mlpw}}/{step},INT({{expw}}/{step})={{expw}}/{step}))"
    ssm = f"INT({{ssmw}}/{n})={{ssmw}}/{n}"
    return f"AND({heads},INT({{mlpw}}/{n})={{mlpw}}/{n},INT({{expw}}/{n})={{expw}}/{n},{ssm},{blocks})"


def choose_group() -> str:
    """deploy.choose_gpus: the given count (#NUM! where vLLM refuses it), or the smallest valid group in GPU_GROUPS
    that holds one sequence."""
    nested = "NOT_FIT"
    for g in reversed(GPU_GROUPS):
        nested = f"IF(AND({tp_ok(str(g))},{{mb_{g}}}>=1),{g},{nested})"
    return f'IF({{gpus_in}}="",{nested},IF(ISNUMBER({GPUS_IN}),IF({tp_ok(GPUS_IN)},{GPUS_IN},OUT_OF_RANGE),{GPUS_IN}))'


def next_group(base_n: str) -> str:
    """api.next_tp_size: the smallest group of GPU_GROUPS above base_n that tp_ok accepts; #NUM! when none."""
    nested = "OUT_OF_RANGE"
    for g in reversed(GPU_GROUPS):
        nested = f"IF(AND({g}>{base_n},{tp_ok(str(g))}),{g},{nested})"
    return f"IF(ISERROR({base_n}),{base_n},{nested})"


def experts_touched(tokens: str) -> str:
    """model.experts_touched: E x (1 - (1 - k/E)^tokens); 0 for dense models.

    (1 - k/E)^tokens below e^-700 is taken as 0: numpy's tiny power leaves 1 - x = 1 exactly, while spreadsheet
    engines report an underflowing POWER as #NUM!.
    """
    t = tokens
    return f"IF({{E}}>0,{{E}}*(1-IF({{k}}>={{E}},0,IF({t}*LN(1-{{k}}/{{E}})<-700,0,POWER(1-{{k}}/{{E}},{t})))),0)"


#: model.weights_read_bytes over the block's experts touched (``{.touched}``).
WEIGHTS_READ = "({read}-{read16})*{wbpp}+{read16}*{kbpp}+{moe_layers}*{.touched}*{per_expert}*{ebpp}"
#: model.operators.dense_weight_bytes and the experts' share of WEIGHTS_READ.
DENSE_WEIGHTS = "({read}-{read16})*{wbpp}+{read16}*{kbpp}"
EXPERT_WEIGHTS = "{moe_layers}*{.touched}*{per_expert}*{ebpp}"
#: model.operators.GEMMS_PER_LAYER x layers + the output head: the GEMM floors of a step.
GEMM_KERNELS = "(4*{layers}+1)"


def roofline(memory: str, compute: str) -> str:
    """model.roofline_time_s of two block rows (keys): max + (1 - overlap) x min."""
    m, c = "{." + memory + "}", "{." + compute + "}"
    return f"MAX({m},{c})+(1-{{f_roofline_overlap}})*MIN({m},{c})"


def cuda_graph_batch(batch: str) -> str:
    """model.operators.cuda_graph_batch: 1, 2, 4, then the next multiple of 8 up to 512; beyond: the batch."""
    return f"IF({batch}<=1,1,IF({batch}<=2,2,IF({batch}<=4,4,IF({batch}<=512,8*ROUNDUP({batch}/8,0),{batch}))))"


def operator_rows(
    rows: str,
    flop_eff: str,
    attention: str,
    kv: str = "{.kv}",
    attn: str = "{.attn}",
    head_rows: str | None = None,
) -> list[tuple[str, str, str, str, str]]:
    """model.operators: memory and compute time of the dense GEMMs, the MoE experts' GEMMs and attention over
    ``rows`` tokens; ``flop_eff``: the engine's FLOP factor (decode or prefill); ``attention``: the attention
    curve's FLOP fraction and floor (decode or prefill_attention); ``kv``, ``attn``: the bytes and FLOPs the
    attention curves time; ``head_rows``: the rows the output head runs on (a prefill: one per prompt,
    model.operators.prefill_head_skipped); None: every row."""
    # model.operators.prefill_head_skipped: the output-head params a row does not run, on average
    skip = "" if head_rows is None else f"-{{head}}*(1-{head_rows}/{rows})"
    read = "{read}" if head_rows is None else f"({{read}}{skip})"
    gemm_bw = "({n}*{bw}*{f_gemm_bandwidth_efficiency}*{f_bandwidth_efficiency})"
    # model.operators.eight_bit_math, and its complement: the weights' math peak above 1.5x the 16-bit peak
    eight_bit, sixteen_bit = "{peak}>1.5*{peak16}", "{peak}<=1.5*{peak16}"
    # model.operators.gemm_time_s: the fp8 GEMM curve where the math is 8-bit
    gemm_eff = f"IF({eight_bit},{{f_gemm_fp8_flop_efficiency}},{{f_gemm_flop_efficiency}})"
    # model.operators.weight_only_flop_scale: weight-only dense GEMMs (weights under 1.5 B, math at the 16-bit peak)
    # at the GPU's weight-only fraction f of the rate, the kept 16-bit params at the full rate; 1 elsewhere
    weight_only = (
        f"IF(AND({{f_weight_only_flop_fraction}}>0,{{wbpp}}<1.5,{sixteen_bit}),"
        f"{read}/(({{read}}-{{read16}})/{{f_weight_only_flop_fraction}}+{{read16}}{skip}),1)"
    )
    dense_peak = f"({{n}}*{{peak}}*{gemm_eff}*{flop_eff}*{{.wo}})"
    # model.operators.grouped_gemm_flop_fraction: w / (w + w0) x m / (m + m0), w = expert width per GPU, m = rows
    # per touched expert (rows x k / touched); 1 for dense models
    moe_fraction = (
        "IF(AND({expw}>0,{f_moe_gemm_half_width}>0),({expw}/{n})/({expw}/{n}+{f_moe_gemm_half_width}),1)"
        f"*IF(AND({{.touched}}>0,{{f_moe_gemm_half_rows}}>0),({rows}*{{k}}/{{.touched}})"
        f"/({rows}*{{k}}/{{.touched}}+{{f_moe_gemm_half_rows}}),1)"
    )
    # model.operators.expert_layers_time_s: the grouped GEMM's own 8-bit rate multiplier (1 but TensorRT-LLM 0.x's)
    moe_eff = f"IF({eight_bit},{{f_gemm_fp8_flop_efficiency}}*{{f_moe_fp8_flop_scale}},{{f_gemm_flop_efficiency}})"
    moe_peak = f"({{n}}*{{peak}}*{moe_eff}*{flop_eff}*{moe_fraction})"
    # model.operators.attention_time_s: an 8-bit cache (1 B or less per value) of a non-MLA model at its own byte rate
    att_frac = "IF(AND({kvbpe}<=1,{mla}=0),{f_attention_fp8_bandwidth_efficiency},{f_attention_bandwidth_efficiency})"
    att_bw = f"({{n}}*{{bw}}*{att_frac}*{{f_bandwidth_efficiency}})"
    # model.operators.attention_peak_flop_per_s: attention at the 16-bit peak whatever the weights' math; an MLA
    # model's decode attention at the measured MLA modules' rate where the GPU has one (forward_kernels_time_s)
    att_eff = f"{{f_{attention}_flop_efficiency}}"
    if attention == "attention":
        mla = "AND({mla}>0,{f_mla_attention_flop_efficiency}>0)"
        att_eff = f"IF({mla},{{f_mla_attention_flop_efficiency}},{att_eff})"
    att_peak = f"({{n}}*{{peak16}}*{att_eff}*{flop_eff})"
    s, e = "0.000E+00", "s"
    return [
        ("dense", "Dense weight bytes", "B", "#,##0", DENSE_WEIGHTS),
        ("experts", "Expert weight bytes", "B", "#,##0", EXPERT_WEIGHTS),
        ("gemm_m", "Dense GEMMs: memory time", e, s, "{.dense}/" + gemm_bw),
        ("wo", "Dense GEMMs: FLOP rate over the GEMM curve's (weight-only: Marlin's)", "", "0.000###", weight_only),
        ("gemm_c", "Dense GEMMs: compute time", e, s, f"2*{rows}*{read}/" + dense_peak),
        ("gemm", "Dense GEMMs", e, s, roofline("gemm_m", "gemm_c") + f"+{GEMM_KERNELS}*{{f_gemm_floor_s}}"),
        ("moe_m", "MoE expert GEMMs: memory time", e, s, "{.experts}/" + gemm_bw),
        ("moe_c", "MoE expert GEMMs: compute time", e, s, f"2*{rows}*{{moe_layers}}*{{k}}*{{per_expert}}/" + moe_peak),
        ("moe", "MoE expert GEMMs", e, s, roofline("moe_m", "moe_c")),
        ("att_m", "Attention: memory time", e, s, kv + "/" + att_bw),
        ("att_c", "Attention: compute time", e, s, attn + "/" + att_peak),
        ("att", "Attention", e, s, roofline("att_m", "att_c") + f"+{{layers}}*{{f_{attention}_floor_s}}"),
    ]


#: Calc rows of the measured all-reduce table that depend on the GPU and group only (key, label, unit, format,
#: template): planner.model.collectives.table_allreduce_time_s's row, group segment and weight. #N/A where the table
#: does not apply (no block, a group outside its sizes or beyond the fabric domain): the form stands.
ALLREDUCE_GROUP_ROWS = [
    ("ar_block", "All-reduce table block (0: none)", "", "0", "INDEX(gpu_ar_block,{gpu_row})"),
    ("ar_scale", "All-reduce message scale (borrowed table)", "", "0.000###", "INDEX(gpu_ar_scale,{gpu_row})"),
    (
        "mesh_share",
        "Share of the fabric a group has (mesh: g - 1 links of its own; switched: 1)",
        "",
        "0.000###",
        "IF(INDEX(gpu_mesh_link,{gpu_row})>0,MIN(1,MAX({n}-1,1)*INDEX(gpu_mesh_link,{gpu_row})/{ic}),1)",
    ),
    (
        "ar_src_share",
        "The same share on the all-reduce table's GPU",
        "",
        "0.000###",
        "IF(INDEX(gpu_ar_link_share,{gpu_row})>0,MIN(1,MAX({n}-1,1)*INDEX(gpu_ar_link_share,{gpu_row})),1)",
    ),
    (
        "ar_in",
        "Measured all-reduce applies",
        "",
        None,
        "AND({ar_block}>0,{n}>=MIN(ar_groups),{n}<=MAX(ar_groups),{n}<={domain})",
    ),
    ("ar_gj", "All-reduce table: group row", "", "0", "IF({ar_in},MIN(MATCH({n},ar_groups,1),ROWS(ar_groups)-1),NA())"),
    (
        "ar_gw",
        "All-reduce table: weight of the larger group",
        "",
        "0.000###",
        "IF({n}=INDEX(ar_groups,{ar_gj}),0,IF({n}=INDEX(ar_groups,{ar_gj}+1),1,"
        "(LOG({n},2)-LOG(INDEX(ar_groups,{ar_gj}),2))/(LOG(INDEX(ar_groups,{ar_gj}+1),2)-LOG(INDEX(ar_groups,{ar_gj}),2))))",
    ),
]


def _log_us(row: str, col: str) -> str:
    """log(seconds) of one table cell (a blank: an error, the form stands)."""
    return f"LN(INDEX(ar_us,{row},{col})/1000000)"


def _over_groups(col: str) -> str:
    """log time at size column ``col``, linear in log2(GPUs) between the block's two group rows."""
    left, right = _log_us("{.ar_row}", col), _log_us("{.ar_row}+1", col)
    return f"IF({{ar_gw}}=0,{left},IF({{ar_gw}}=1,{right},{left}+({right}-{left})*{{ar_gw}}))"


def allreduce_rows(tokens: str) -> list[tuple[str, str, str, str, str]]:
    """planner.model.collectives.table_allreduce_time_s for one all-reduce of a step of ``tokens`` tokens: the
    message (tokens x hidden x 2 B, x the borrowed table's scale x its GPU's mesh share / this one's) looked up on the AllReduce sheet, log time linear
    in log2(bytes) between measured sizes (the smallest size's time below them, the last segment's bytes per second
    beyond 512 MiB), in the CUDA-graph rows for a step of at most model.operators.CUDA_GRAPH_MAX_BATCH tokens."""
    top = "ar_top_bytes"
    return [
        (
            "ar_bytes",
            "All-reduce message looked up",
            "B",
            "#,##0",
            f"{tokens}*({{hidden}}*2)*{{ar_scale}}*{{ar_src_share}}/{{mesh_share}}",
        ),
        (
            "ar_x",
            "All-reduce table: log2(bytes) within it",
            "",
            "0.000###",
            "IF({ar_in},MIN(MAX(LOG(MAX({.ar_bytes},1),2),INDEX(ar_log2_bytes,1,1)),"
            "INDEX(ar_log2_bytes,1,COLUMNS(ar_log2_bytes))),NA())",
        ),
        (
            "ar_sj",
            "All-reduce table: size column",
            "",
            "0",
            "MIN(MATCH({.ar_x},ar_log2_bytes,1),COLUMNS(ar_log2_bytes)-1)",
        ),
        (
            "ar_sw",
            "All-reduce table: weight of the larger size",
            "",
            "0.000###",
            "({.ar_x}-INDEX(ar_log2_bytes,1,{.ar_sj}))/(INDEX(ar_log2_bytes,1,{.ar_sj}+1)-INDEX(ar_log2_bytes,1,{.ar_sj}))",
        ),
        (
            "ar_row",
            "All-reduce table: row (graph or eager)",
            "",
            "0",
            f"({{ar_block}}-1)*2*ROWS(ar_groups)+IF({tokens}<={CUDA_GRAPH_MAX_BATCH},0,ROWS(ar_groups))+{{ar_gj}}",
        ),
        ("ar_lo", "All-reduce table: log s at the smaller size", "", "0.000###", _over_groups("{.ar_sj}")),
        ("ar_hi", "All-reduce table: log s at the larger size", "", "0.000###", _over_groups("{.ar_sj}+1")),
        (
            "ar_t",
            "All-reduce, measured (#N/A: the form)",
            "s",
            "0.000E+00",
            f"IF({{.ar_bytes}}>{top},EXP({{.ar_hi}})+({{.ar_bytes}}-{top})*((EXP({{.ar_hi}})-EXP({{.ar_lo}}))"
            f"/({top}-ar_below_top_bytes)),"
            "EXP(IF({.ar_sw}=0,{.ar_lo},IF({.ar_sw}=1,{.ar_hi},{.ar_lo}+({.ar_hi}-{.ar_lo})*{.ar_sw}))))",
        ),
    ]


def tp_communication(tokens: str, single_gpu: str = "0") -> str:
    """model.tp_communication_s: two all-reduces per layer of tokens x hidden 16-bit values (allreduce_time_s: the
    measured table's time ``{.ar_t}`` where it has one, else latency + 2 (n-1)/n x bytes / link, in the fabric domain
    (the share ``{mesh_share}`` of it a group has on a mesh) or over PCIe); ``single_gpu`` on one GPU."""
    return (
        f"2*{{layers}}*IF({{n}}>1,IF(ISNUMBER({{.ar_t}}),{{.ar_t}},IF({{n}}<={{domain}},{{f_allreduce_latency_s}},{{pcie_lat}})"
        f"+2*({{n}}-1)/{{n}}*({tokens}*{{hidden}}*2)"
        f"/(IF({{n}}<={{domain}},{{ic}}*{{mesh_share}},{{pcie_bw}})*{{f_interconnect_efficiency}})),{single_gpu})"
    )


def moe_floor(tokens: str) -> str:
    """model.step_overhead_s's fused-MoE floor: MoE layers x (floor + per doubling x log2(min(max(tokens, 1), 8)))."""
    return f"{{moe_layers}}*({{f_moe_floor_s}}+{{f_moe_floor_per_doubling_s}}*LOG(MIN(MAX({tokens},1),8),2))"


#: The labels of a block's whole-step roofline rows: all its bytes / (GPUs x bandwidth x efficiency) and all its FLOPs /
#: (GPUs x peak x efficiency), as if the step were one kernel (``DecodeStep.memory_time_s``, ``compute_time_s``). They
#: are references beside MBU and MFU, not terms of TPOT or TTFT, which sum the operators timed one by one (the rows
#: above them) with the all-reduces and overheads: trial 13 F4 summed Sweeps' "Memory time" by hand to 12.9 ms where
#: the workbook's TPOT is 17.6.
ROOFLINE_MEMORY = "Roofline memory time (reference, not a term of the time)"
ROOFLINE_COMPUTE = "Roofline compute time (reference, not a term of the time)"


def decode_block(batch: str) -> list[tuple[str, str, str, str, str]]:
    """model.decode_step at ``batch`` (a key): rows (local key, label, unit, format, template with {.x} locals)."""
    b = "{" + batch + "}"
    return [
        ("touched", "MoE experts touched per layer", "experts", "#,##0.00", experts_touched(b)),
        ("weights", "Weight bytes read", "B", "#,##0", WEIGHTS_READ),
        (
            "kv",
            "KV bytes read",
            "B",
            "#,##0",
            f"({{kvrec}}*{{ctx_attended}}+{{idxb}}*{{ctx_layer_tokens}})*{b}*{{repl}}+2*{{state}}*{b}",
        ),
        ("attn", "Attention FLOPs", "FLOP", "0.000E+00", f"{b}*{{attn_decode}}"),
        ("flop", "FLOPs", "FLOP", "0.000E+00", f"{b}*(2*{{ppt}}+{{attn_decode}})"),
        ("bytes", "Bytes moved", "B", "#,##0", "{.weights}+{.kv}"),
        ("rows", "Batch the kernels run at (CUDA graph)", "sequences", "#,##0", cuda_graph_batch(b)),
        ("sparse", "DSA latents through the fp8 sparse MLA kernel (1: yes)", "", "0", sparse_mla_applies(False)),
        (
            "kv_att",
            "KV bytes the attention curves read",
            "B",
            "#,##0",
            f"({{kvrec}}*{{ctx_attended}}*(1-{{.sparse}})+{{idxb}}*{{ctx_layer_tokens}})*{b}*{{repl}}+2*{{state}}*{b}",
        ),
        (
            "attn_att",
            "Attention FLOPs on the attention curves",
            "FLOP",
            "0.000E+00",
            f"{b}*({{attnflop}}*{{ctx_attended}}*(1-{{.sparse}})+{{idxflop}}*{{full}}*{{context}}+{{linflop}})",
        ),
        *operator_rows("{.rows}", "{f_decode_flop_efficiency}", "attention", "{.kv_att}", "{.attn_att}"),
        ("sparse_t", "Sparse MLA kernel (fp8)", "s", "0.000E+00", sparse_mla_time("{.rows}")),
        ("tmem", ROOFLINE_MEMORY, "s", "0.000E+00", "{.bytes}/({n}*{bw}*{f_bandwidth_efficiency})"),
        ("tflop", ROOFLINE_COMPUTE, "s", "0.000E+00", "{.flop}/({n}*{peak}*{f_decode_flop_efficiency})"),
        *allreduce_rows(b),
        # 0 x batch: a batch that does not fit stays an error
        ("comm", "All-reduce time", "s", "0.000E+00", tp_communication(b, f"0*{b}")),
        (
            "device",
            "Device time and per-step costs",
            "s",
            "0.000E+00",
            f"{{.gemm}}+{{.moe}}+{{.att}}+{{.sparse_t}}+{{.comm}}+{{overhead}}+{moe_floor(b)}",
        ),
        ("host", "Host time (per sequence x batch)", "s", "0.000E+00", f"{{f_sequence_overhead_s}}*{b}"),
        # model.decode.step_costs_s: an asynchronous host loop (eng_host_overlap 1) hides the host time behind the device
        ("step", "TPOT (decode step)", "s", "0.000E+00", "{.device}+{.host}-eng_host_overlap*MIN({.host},{.device})"),
        ("tput", "Throughput", "tokens/s", "#,##0.0", f"{b}/{{.step}}"),
        ("mfu", "MFU", "", "0.00%", "{.flop}/({.step}*{n}*{peak})"),
        ("mbu", "MBU", "", "0.00%", "{.bytes}/({.step}*{n}*{bw})"),
        ("intensity", "Arithmetic intensity", "FLOP/B", "#,##0.0", "{.flop}/{.bytes}"),
        (
            "cost",
            "Cost per million output tokens",
            "US$",
            "#,##0.000",
            "IF(ISERROR({.tput}),{.tput},{price}*{n}/3600/{.tput}*1000000)",
        ),  # api.cost_per_mtok: the decode step's error comes before a missing price
    ]


def prefill_block() -> list[tuple[str, str, str, str, str]]:
    """api.prefill of one prompt of ``context`` tokens."""
    return [
        # gated on the GPU count: the model reports no prefill where the weights and one sequence do not fit
        (
            "touched",
            "MoE experts touched per layer",
            "experts",
            "#,##0.00",
            "IF(ISERROR({n}),{n}," + experts_touched("{context}") + ")",
        ),
        ("weights", "Weight bytes read", "B", "#,##0", WEIGHTS_READ),
        ("kv", "KV bytes written", "B", "#,##0", "({kvrec}+{idxb})*{ctx_layer_tokens}*{repl}+{state}"),
        (
            "attn",
            "Attention FLOPs (causal)",
            "FLOP",
            "0.000E+00",
            "IF(ISERROR({n}),{n},{context}*({pattnflop}*"
            + causal_pairs("{context}")
            + "+{idxflop}*{full}*{context}/2+{linflop}))",
        ),
        # model.prefill_step: the output head on the prompt's last token only (where the engine samples)
        ("flop", "FLOPs", "FLOP", "0.000E+00", "2*({ppt}*{context}-({context}-1)*{head})+{.attn}"),
        ("bytes", "Bytes moved", "B", "#,##0", "{.weights}+{.kv}"),
        ("tmem", ROOFLINE_MEMORY, "s", "0.000E+00", "{.bytes}/({n}*{bw}*{f_bandwidth_efficiency})"),
        ("tflop", ROOFLINE_COMPUTE, "s", "0.000E+00", "{.flop}/({n}*{peak}*{f_prefill_flop_efficiency})"),
        ("sparse", "DSA latents through the fp8 sparse MLA kernel (1: yes)", "", "0", sparse_mla_applies(True)),
        (
            "attn_att",
            "Attention FLOPs on the attention curves",
            "FLOP",
            "0.000E+00",
            "IF(ISERROR({n}),{n},{context}*({pattnflop}*"
            + causal_pairs("{context}", "{.sparse}")
            # model.operators.prefill_attention_timed_flop: s more pairs per new token on the attention layers
            + "+{pattnflop}*"
            + layer_tokens("{f_prefill_attention_pairs_per_token}")
            + "+{idxflop}*{full}*{context}/2+{linflop}))",
        ),
        *operator_rows("{context}", "{f_prefill_flop_efficiency}", "prefill_attention", "{.kv}", "{.attn_att}", "1"),
        ("sparse_t", "Sparse MLA kernel (fp8)", "s", "0.000E+00", sparse_mla_time("{context}")),
        ("t", "Operators' time", "s", "0.000E+00", "{.gemm}+{.moe}+{.att}+{.sparse_t}"),
        *allreduce_rows("{context}"),
        ("comm", "All-reduce time", "s", "0.000E+00", tp_communication("{context}")),
        (
            "ttft",
            "TTFT (prefill of the context)",
            "s",
            "0.000E+00",
            "{.t}+{.comm}+{f_step_overhead_s}+{f_layer_overhead_s}*{layers}+{f_moe_layer_overhead_s}*{moe_layers}"
            "+" + moe_floor("{context}") + "+{f_prefill_latency_s}",
        ),
        ("intensity", "Arithmetic intensity", "FLOP/B", "#,##0.0", "{.flop}/{.bytes}"),
    ]


def same_input(used: str, now: str, kind: str) -> str:
    """Whether an Input still matches the one the figures were computed from, as a condition over its "Used" and
    "Inputs now" cells: a name or other text in any case, as the lookups' MATCH compares names (trial 13 F12:
    "llama-2-70b" for "Llama-2-70B" computed every figure alike but marked the sheet STALE); a number only by a number
    of the same value (text "4096" in a number's cell is refused by the formulas, ``refresh`` and ``export``, so the
    figures do not hold for it: trial 13 F16). A blank is "" in both."""
    text = f'EXACT(UPPER(""&{used}),UPPER(""&{now}))'
    if kind == "text":
        return text
    return f"AND(ISNUMBER({used})=ISNUMBER({now}),{text})"
