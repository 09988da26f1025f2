"""The Explain sheet: every formula in plain words with the seeds' worked numbers."""

from __future__ import annotations

from planner import __version__, api
from planner.catalog import Catalog
from planner.engines.profiles import EngineProfile
from planner.errors import UnknownNameError
from planner.units import MAX_RENT_USD_PER_GPU_HOUR
from planner.workbook.layout import EXPLAIN_SHEET
from planner.workbook.spec import Sheet

#: How many input scenarios the LibreOffice parity test recalculates (tests/test_workbook_libreoffice.py's
#: SCENARIO_INPUTS; tests/test_trial10_excel.py checks this, README and docs/workbooks.md against it).
PARITY_SCENARIOS = 83


def kv_refused(catalog: Catalog, engine: EngineProfile) -> str:
    """The KV-cache precisions that give #NUM!, in words: a weight-only format, and the KV-cache formats the engine
    does not cache (``EngineProfile.accepts_kv``; vLLM: int8, int4)."""
    uncached = [p.name for p in catalog.precisions if p.kv_cache and not engine.accepts_kv(p.name)]
    words = "a weight-only format such as mxfp4"
    return words + (f", or {' or '.join(uncached)} on {engine.name}" if uncached else "")


#: The worked example of the time rows: the workbook's opening scenario at batch 1 (``inputs.OPENING``).
EXAMPLE = dict(gpu="H100 SXM 80GB", model="Llama-2-70B", context=4096, gpus=4)


def _operators(engine: EngineProfile) -> str:
    """How one operator (a GEMM, the experts' GEMMs, attention) is timed, in words, as ``formulas.operator_rows``
    states it: its own bytes and FLOPs on the roofline at the GPU's measured kernel rates, plus the kernel floor; an
    engine without kernel curves (``EngineProfile.kernel_curves`` False: ideal) at the datasheet's."""
    roofline = (
        f"max(memory, compute) + (1 - roofline overlap) x min(memory, compute), where the overlap is "
        f"{engine.roofline_overlap:g} (this profile's; a calibration file may set another per GPU): 1 takes the longer "
        "of the two, 0 adds them"
    )
    if not engine.kernel_curves:
        return (
            f"each operator's bytes / (GPUs x bandwidth) and FLOPs / (GPUs x peak) at the datasheet's rates "
            f"(this profile times no kernel curves, no kernel floor): {roofline}"
        )
    return (
        "each operator's own bytes and FLOPs at the GPU's measured kernel rates (Assumptions: kernel_curves TRUE; GPUs "
        "sheet: the gemm_, attention_ and moe_ fractions of the datasheet's bandwidth and peak, from vLLM's measured "
        f"kernels): {roofline}; plus each kernel's floor (dense GEMMs: (4 x layers + 1) x gemm_floor_s; attention: "
        "layers x attention_floor_s)"
    )


def decode_words(catalog: Catalog, engine: EngineProfile) -> str:
    """The Explain row of a decode step: what the Calc decode block evaluates (``formulas.decode_block``,
    ``planner.model.decode``), with the opening scenario's figures at batch 1 from ``planner.api.decode_step``: the
    operators, all-reduces and overheads that sum to TPOT, and the whole-step roofline times that do not (trial 13
    F4: the row's max(memory, compute) + all-reduces + overheads gave 12.9 ms by hand where the workbook's TPOT is
    17.6; it also called the overlap 1 "the fitted 0")."""
    try:
        d = api.decode_step(
            EXAMPLE["gpu"], EXAMPLE["model"], EXAMPLE["context"], gpus=EXAMPLE["gpus"], batch=1, engine=engine,
            catalog=catalog,
        )  # fmt: skip
        ms = lambda x: f"{float(x) * 1e3:,.2f} ms"  # noqa: E731
        example = (
            f" Llama 2 70B on 4 x H100 at 4,096 tokens, batch 1: operators {ms(d.kernels_s)} + all-reduces "
            f"{ms(d.communication_s)} + overheads {ms(d.overhead_s)} = TPOT {ms(d.step_s)}, where the whole step's "
            f"bytes / (GPUs x bandwidth x efficiency) alone are {ms(d.memory_time_s)} and its FLOPs / (GPUs x peak x "
            f"efficiency) {ms(d.compute_time_s)}."
        )
    except UnknownNameError:  # a catalog without the seed entries
        example = ""
    return (
        "bytes = weights read (all but the input embedding, a row lookup; MoE: the experts the batch touches, E x "
        "(1 - (1 - k/E)^batch)) + batch x KV per sequence; FLOPs = batch x (2 x params per token + attention). TPOT "
        "is not one roofline over those totals: the Calc sheet's decode rows time the dense GEMMs, the MoE experts' "
        f"GEMMs and attention one by one, {_operators(engine)}. TPOT = their sum + 2 all-reduces per layer (the "
        "measured all-reduce table where the engine reads one: AllReduce sheet) + overheads (per step + per layer x "
        "layers + per MoE layer, and the fused-MoE floor) + the host's per-sequence time x batch (hidden behind the GPUs where the engine's loop "
        "is asynchronous: eng_host_overlap)." + example + " Those two whole-step times (Calc's and Sweeps' "
        '"Roofline memory time" and "Roofline compute time") are the roofline\'s terms, shown for reference: they '
        "bound MBU and MFU and are not parts of TPOT."
    )


def prefill_words(catalog: Catalog, engine: EngineProfile) -> str:
    """The Explain row of a prefill (``formulas.prefill_block``, ``planner.api.prefill``), with the opening scenario's
    TTFT."""
    try:
        p = api.prefill(
            EXAMPLE["gpu"], EXAMPLE["model"], EXAMPLE["context"], gpus=EXAMPLE["gpus"], engine=engine, catalog=catalog
        )
        example = f" Llama 2 70B on 4 x H100, a 4,096-token prompt: TTFT {float(p.ttft_s) * 1e3:,.0f} ms."
    except UnknownNameError:
        example = ""
    return (
        "one prompt of the context: FLOPs 2 x params per token x tokens + causal attention, the output head "
        "(vocabulary x hidden) on the last token only (the engine computes logits where it samples); its operators "
        "timed as a decode step's are, at the prefill's kernel rates and floors, + all-reduces + overheads + the "
        "engine's prefill latency. Its intensity is about the prompt length: compute-bound." + example
    )


def explain_sheet(catalog: Catalog, engine: EngineProfile) -> Sheet:
    s = Sheet(EXPLAIN_SHEET, tab_color="7030A0")
    s.widths.update(A=34, B=110)
    s.set("A1", "How the numbers are computed, in plain words", style="title")
    s.note(
        "A2",
        f"Generated by planner {__version__} from its catalog and the '{engine.name}' engine profile. "
        "Worked numbers below are the seeds' examples, computed by planner when the workbook was made.",
        "B",
    )

    def worked(fn, name, **kw):
        try:
            return fn(name, catalog=catalog, **kw)
        except UnknownNameError:  # a catalog without the seed entries
            return float("nan")

    kv70 = worked(api.kv_bytes_per_token, "Llama-2-70B", kv_precision="fp16")
    kv65 = worked(api.kv_bytes_per_token, "LLaMA-65B", kv_precision="fp16")
    r_a100 = worked(api.ridge, "A100 SXM 80GB", precision="bf16")
    r_h100 = worked(api.ridge, "H100 SXM 80GB", precision="bf16")
    w70 = worked(api.weight_bytes, "Llama-2-70B", precision="fp16")
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
            "layers hold at most the window. Llama 2 70B at 8,192 tokens, fp16: 2.68 GB; LLaMA 65B: 21.5 GB. "
            "Under vLLM a model with sliding-window layers takes more: its KV groups pad the layers to equal groups "
            "and each sliding group holds one more block (Gemma 3 27B at 8,192 tokens: 1.18 GB, +6.8% over the "
            "1.11 GB KV_BYTES gives for the layers alone); max batch counts the padded figure, KV cache tokens the "
            "layers alone.",
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
            "so the group holds more bytes per sequence (KV replication). The engine runs at most its max_num_seqs "
            "at once (GPUs sheet: Sampler sequences; vLLM 1,024 on an H100, 256 on an A100): the figures at max "
            "batch are at the smaller of the two, the batch it serves.",
        ),
        (
            "GPU count",
            "as entered, else the smallest of 1, 2, 4, 8, 16, 32, 64 GPUs that vLLM accepts for the model (attention "
            "heads divisible by it, KV heads divisible by it or it by them) whose max batch is at least 1.",
        ),
        ("Decode step (TPOT)", decode_words(catalog, engine)),
        (
            "Throughput, MFU, MBU",
            "throughput = batch / TPOT. MFU = FLOPs / (TPOT x GPUs x peak); MBU = bytes / "
            "(TPOT x GPUs x bandwidth). At batch 1 a 70B model on H100s runs at well under 1% MFU.",
        ),
        ("Prefill (TTFT)", prefill_words(catalog, engine)),
        (
            "Cost",
            "GPUs x price per GPU-hour / 3,600 / throughput x 1,000,000 = US$ per million output tokens: decode "
            "only, 100% busy; prompt processing not included (planner plan --prompt-tokens --output-tokens adds it).",
        ),
        (
            "Levers",
            "More GPUs per replica (the next tensor-parallel group vLLM accepts: its heads must divide evenly) adds KV "
            "budget; halving the "
            "prompt shortens the context and so the KV per sequence; a GQA model stores KV heads / attention heads of "
            "the cache; fp8 KV halves it (vLLM caches fp16/bf16 or fp8, not int4); fp8 weights free memory for KV and "
            "read half the bytes per step. Cost per million output tokens at max batch compares them. Prompt halved "
            "and the compare model change the requests (each prompt halved with the output tokens kept: 1,000 -> 500 "
            "tokens beside 300 output, a context of 1,300 -> 800; another model), so they are never ranked for the "
            'cheapest fleet; nor is a lever that changes nothing ("no change": weights fp8 of a model that ships fp8 '
            "weights, a compare model that is the model itself). DP attention + EP runs a MoE baseline's GPUs as "
            "data-parallel attention ranks with the experts spread: no formula restates that layout, so its "
            "figures are numbers planner computed (as planner plan --parallelism dp-ep), current while the Load "
            "sheet is; a dense model's column says it does not apply.",
        ),
        (
            "Errors",
            "#N/A: a GPU, model or precision name not in the catalog (names as in the lists, or an alias the GPUs, "
            "Models and Precisions sheets list: H200, fp4), or no price for a GPU "
            "the catalog has no price for. #VALUE!: an input of the wrong kind (text where a number belongs). #NUM!: "
            "a number the model does not accept (a context of 0 or a fraction, a utilization above 1, a price of 0 "
            f"or less or above {MAX_RENT_USD_PER_GPU_HOUR:,.0f} US$ per GPU-hour), a KV-cache precision the engine "
            f"does not cache ({kv_refused(catalog, engine)}), the weights plus the sequences asked for that do not "
            "fit, a GPU count the engine refuses, or an engine that cannot load the model on that GPU (TensorRT-LLM "
            "1.x cannot load gpt-oss's MXFP4 experts below Hopper).",
        ),
        (
            "Assumptions and limits",
            f"{engine.description}. Efficiencies and overheads are the engine's defaults unless a "
            "calibration file set them per GPU (GPUs sheet). Tensor parallelism only; beyond 8 GPUs it crosses nodes and "
            "is slower than modelled. MoE routing is assumed uniform. No queueing in the Results: TTFT is one prefill "
            "alone. The Levers fleet's queue term (Calc's rate factor) and the Load sheet are numbers planner's queue "
            "simulation computed (within the targets at the Inputs' latency percentile, blank p95, with the Inputs' "
            "high lengths drawn as planner plan --rate draws them), not formulas: refresh them after changing Inputs (until "
            'then the Load sheet reads STALE, the fleet rows say so and, like "Meets the latency targets" and the cheapest '
            'fleet, read "not known", an estimate only where the peak alone changed). Their '
            "requests arrive as the Inputs' burstiness says (the gamma shape of the gaps; 1: Poisson).",
        ),
        (
            "Python parity",
            "Every formula restates planner.model / planner.api; the test suite recalculates this workbook "
            f"in LibreOffice over {PARITY_SCENARIOS} scenarios and checks every result against the Python model to "
            "1e-9 relative.",
        ),
    ]
    for i, (topic, text) in enumerate(rows):
        s.set(f"A{4 + i}", topic, style="label")
        s.set(f"B{4 + i}", text, style="note")
    return s
