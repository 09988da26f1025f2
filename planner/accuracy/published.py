"""Reading published tables and logs as they are written: GPU and model names, dtype cells, numbers in cells.

"NVIDIA H100 SXM 80GB" is the catalog's H100 SXM 80GB, "LLaMA 7B (Llama-2-7b)" its Llama-2-7B, "Qwen/Qwen2-7B"
its Qwen2-7B; "auto" or "not stated" as a dtype is the model's default; "14.2488 GiB" is 14.2488.

Benchmark rows (``decode_*.csv``, ``perf_*.csv``) are read here into ``DecodeRow``s with the conventions of
``catalogs/reference/README.md``: the ``kind`` of run, per-GPU throughputs times the tensor-parallel size (an
ambiguous unit gets no throughput), ``num_prompts`` against the concurrency (equal: all at once; more: the client
kept that many in flight; not stated: ``CLOSED_LOOP_PROMPTS_PER_SLOT`` per slot, or no prediction for a run at a
rate or at full throughput), the ``statistic`` (mean, median, or not said), and the server's own limits where its
command is quoted (``server_flag``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.catalog import Catalog
from planner.catalog.loader import shipped_catalog_dir
from planner.catalog.names import (  # noqa: F401  (re-exported: the validation rows' rules, named here before)
    GPU_NAMES,
    GPU_NOISE,
    MODEL_SUFFIXES,
    QUANT_SUFFIXES,
    _gpu_by_parts,
    _gpu_candidates,
    _model_candidates,
    checkpoint_precision,
    gpu_name,
    model_name,
)
from planner.engines.profiles import (
    DEFAULT_ENGINE,
    ENGINE_ALIASES,
    ENGINE_CELL_NAMES,
    ENGINES,
    ENGINES_WITHOUT_PROFILE,
    parse_version,
)
from planner.errors import InvalidInputError, MissingDataError, UnknownNameError
from planner.io.limits import MAX_MEASUREMENT_ROWS, MAX_MEASUREMENTS_BYTES, check_count, read_text_bounded
from planner.serving.benchmark import MAX_BATCHED_TOKENS, MAX_PROMPTS, benchmark_kind, mean_context
from planner.serving.load import CLIENT_COMMANDS, dataset_in, dataset_sample, dataset_statistics, fixed_length_tokens
from planner.units import parse_seconds, parse_token_count

#: Published models the planner does not model, with why (matched on the name after the organisation's "/"): a
#: row naming one gets this reason instead of a list of similar names.
UNMODELLED_MODELS = {
    "granite-vision": "a vision-language model (SigLIP vision tower + Granite 2B language model): the vision tower's "
    "weights and image tokens are not in the catalog",
    "kimi-vl": "a vision-language model (MoonViT vision tower + DeepSeek-V3-style MLA MoE language model): the vision "
    "tower's weights and image tokens are not in the catalog",
}
#: Quantization cells that name a method or kernel, not a precision: the checkpoint's name says which.
QUANT_METHODS = {"compressed-tensors", "gptq_marlin", "gptq", "awq_marlin", "modelopt", "quark"}
#: dtype cells that mean "the model's default".
DEFAULT_DTYPES = {"", "auto", "default", "none", "n/a", "na", "-", "unknown", "not stated"}


# -- name resolution ---------------------------------------------------------------------------------------


def resolve_gpu_name(name: str, catalog: Catalog) -> str:
    """A catalog GPU name for a published one ("NVIDIA H100 SXM 80GB", "NVIDIA A100 80GB (79.18 GiB reported)"):
    ``Catalog.gpu``, which reads such names (``planner.catalog.names``) or raises UnknownNameError with suggestions."""
    return catalog.gpu(str(name).strip()).name


def resolve_model_name(name: str, catalog: Catalog) -> str:
    """A catalog model name for a published one ("meta-llama/Llama-2-7b", "LLaMA 7B (Llama-2-7b)", "Qwen/Qwen2-7B")."""
    text = str(name).strip()
    found = model_name(text, catalog)
    if found is not None:
        return found
    short = text.split("/")[-1].lower()
    for prefix, why in UNMODELLED_MODELS.items():
        if short.startswith(prefix):
            raise MissingDataError(f"model {text!r}: {why}")
    return catalog.model(text).name


def precision_in(value: Any) -> str | None:
    """A precision name from a dtype cell ("FP16 (fp16 page)" -> "fp16"); None for "auto", "not stated", blank."""
    text = re.sub(r"\s*\(.*$", "", str(value or "")).strip().lower()
    if text in DEFAULT_DTYPES or text.startswith(("not ", "unknown", "default")):
        return None
    return text.split(" ")[0]


#: A weight cell that names only the MoE experts' format of the checkpoint as published ("mxfp4 experts (checkpoint)"):
#: the run loaded the checkpoint as it ships, its other layers in their own precision.
CHECKPOINT_EXPERTS = re.compile(r"^\s*\S+\s+experts\s*\(checkpoint\b", re.I)


def weight_precision_of(cell: Any, model: str) -> str | None:
    """The weight precision a row's ``weight_dtype`` cell states, for ``planner.catalog`` (None: the checkpoint's own).

    A cell naming only the experts' format of a checkpoint as published ("mxfp4 experts (checkpoint)", gpt-oss) is the
    checkpoint: None, so the catalog model's ``native_precision`` (bf16 attention, embeddings, head) and
    ``native_expert_precision`` (MXFP4 experts) apply. Read as "mxfp4", every linear layer would be taken at
    0.53125 B per weight, but vLLM quantizes only the MoE experts of an MXFP4 checkpoint: ``Mxfp4Config.get_quant_method``
    gives every ``LinearBase`` layer ``UnquantizedLinearMethod`` and only ``FusedMoE`` an ``Mxfp4MoEMethod``
    (``vllm/model_executor/layers/quantization/mxfp4.py``, vLLM commit 007d50058a06, the class as gpt-oss support
    added it in 0.10.1). gpt-oss-120b's weights are then 65.19 GB, the checkpoint's safetensors total (60.71 GiB),
    not 63.79 GB. Any other cell: ``precision_in``, else the precision the checkpoint's name states.
    """
    if CHECKPOINT_EXPERTS.search(str(cell or "")):
        return None
    return precision_in(cell) or checkpoint_precision(model)


def stated(value: Any) -> str:
    """The cell, or "" where it says the value was left at its default ("model default (not set ...)", "auto")."""
    text = str(value or "").strip()
    return "" if precision_in(text) is None or re.search(r"\bdefault\b|not set|not stated", text, re.I) else text


def auto_kv_precision(weight_precision: str | None) -> str | None:
    """vLLM's ``--kv-cache-dtype auto``: the model's dtype, so a float32 or float16 run caches in it; quantized
    weights (fp8, int4 ...) keep the activation dtype, the catalog model's default (None)."""
    return weight_precision if weight_precision in ("fp32", "float32", "fp16", "float16") else None


def pipeline_stages(r: dict[str, str]) -> int:
    """The run's pipeline-parallel size (1 when blank)."""
    return whole_number(r.get("pipeline_parallel_size"), "pipeline_parallel_size", 1) or 1


def command_cells(r: dict[str, str]) -> str:
    """The row's ``batching`` and ``notes`` cells, where a run's server and client commands are quoted."""
    return " ".join(str(r.get(c, "")) for c in ("batching", "notes"))


#: A run's own setting of TensorRT-LLM's attention data parallelism (``enable_attention_dp: true`` in its
#: ``--extra_llm_api_options`` / ``--config`` YAML), as a row's ``batching`` or ``notes`` cell quotes it.
ATTENTION_DP_SETTING = re.compile(r"enable_attention_dp:\s*true", re.I)


#: SGLang's own switch for attention data parallelism, as a row's server command (``batching`` / ``notes``) gives it.
SGLANG_DP_ATTENTION_FLAG = re.compile(r"--enable[-_]dp[-_]attention\b")
#: The last SGLang release whose ``--enable-dp-attention`` sets ``dp_size = tp_size`` itself and halves
#: ``chunked_prefill_size`` (``server_args.py`` 0.4.3.post2 l.253-262, 0.4.4 l.264-273). 0.4.4.post1 to 0.4.10 assert
#: a ``--dp`` above 1 and divide the chunk by it (0.4.4.post1 l.264-273); 0.5 turns DP attention off at ``dp_size``
#: 1, its default (``_handle_data_parallelism``: 0.5.3 l.949-960, 0.5.6.post2 l.1563-1574).
SGLANG_DP_EQUALS_TP_LAST = parse_version("0.4.4")
#: EXPERIMENT switch (issue 21, s183), read at call time; off on main. On: an SGLang row that turned attention data
#: parallelism on (``sglang_attention_dp``) is predicted as "dp-ep", its prefill chunk divided as its release does.
SGLANG_DP_ATTENTION = False


def sglang_attention_dp(r: dict[str, str]) -> tuple[int, int]:
    """(attention DP ranks, what SGLang divides ``chunked_prefill_size`` by) of an SGLang row whose server command
    holds ``--enable-dp-attention``; (1, 1) where it does not, or where the release turns it off. Up to 0.4.4 the
    flag alone makes every GPU of the group a rank and halves the chunk; later releases take the ranks from ``--dp``
    / ``--dp-size`` (1 by default: off in 0.5, refused by 0.4.4.post1-0.4.10) and divide the chunk by them
    (``SGLANG_DP_EQUALS_TP_LAST``). A release that does not parse reads as the later form."""
    if _engine_name(str(r.get("engine", "")))[0] != "sglang":
        return 1, 1
    if not SGLANG_DP_ATTENTION_FLAG.search(command_cells(r)):
        return 1, 1
    gpus = whole_number(r.get("tensor_parallel_size"), "tensor_parallel_size", 1) or 1
    version = parse_version(str(r.get("engine_version", "")))
    if version is not None and version.key <= SGLANG_DP_EQUALS_TP_LAST.key:
        return (gpus, 2) if gpus > 1 else (1, 1)
    ranks = server_flag(r, ("dp-size", "dp")) or 1
    return (ranks, ranks) if ranks > 1 else (1, 1)


#: vLLM's data parallelism in a row's server command (``vllm serve -dp N`` / ``--data-parallel-size N``) and its
#: expert parallelism switch (``--enable-expert-parallel``): with tensor parallelism 1, N attention ranks of one GPU
#: each and the experts spread over the N GPUs (vLLM's "data parallel deployment" of a MoE model: DP attention + EP).
VLLM_DATA_PARALLEL_FLAG = re.compile(r"(?<![\w-])(?:--data[-_]parallel[-_]size|-dp)[ =]+(\d+)")
VLLM_EXPERT_PARALLEL_FLAG = re.compile(r"--enable[-_]expert[-_]parallel\b")


def data_parallel_size(r: dict[str, str]) -> int:
    """The run's data-parallel size (1 when not given): the ``data_parallel_size`` cell, else a vLLM row's server
    command's ``-dp N`` / ``--data-parallel-size N`` (``command_cells``). A cell above 1 on a row of another engine is
    a ValueError (SGLang's attention ranks are read from ``--enable-dp-attention --dp N``, TensorRT-LLM's from
    ``enable_attention_dp: true``)."""
    vllm = _engine_name(str(r.get("engine", "")))[0] == "vllm"
    cell = str(r.get("data_parallel_size") or "").strip()
    if cell:
        dp = whole_number(cell, "data_parallel_size", 1) or 1
        if dp > 1 and not vllm:
            raise ValueError(
                f"data_parallel_size {dp} is read for vLLM rows only (SGLang: --enable-dp-attention --dp N in the "
                "batching or notes cell; TensorRT-LLM: enable_attention_dp: true)"
            )
        return dp
    hit = VLLM_DATA_PARALLEL_FLAG.search(command_cells(r)) if vllm else None
    return int(hit.group(1)) if hit else 1


def _vllm_dp_ep(r: dict[str, str], dp: int) -> str:
    """ "dp-ep" for a vLLM row of ``dp`` > 1 data-parallel ranks of one GPU each with its experts spread over them
    (``--enable-expert-parallel`` in its command, or an ``expert_parallel_size`` cell equal to ``dp``); a ValueError
    for any other data-parallel form (attention tensor-parallel inside each rank, experts not spread)."""
    tp = whole_number(r.get("tensor_parallel_size"), "tensor_parallel_size", 1) or 1
    if tp != 1 or pipeline_stages(r) != 1:
        raise ValueError(
            f"vLLM data parallelism {dp} with tensor_parallel_size {tp} (attention tensor-parallel inside each rank) "
            "or a pipeline is not modelled: only -tp 1 -dp N --enable-expert-parallel (DP attention + EP)"
        )
    cell = str(r.get("expert_parallel_size") or "").strip()
    ep = whole_number(cell, "expert_parallel_size") if cell else None
    if ep is not None and ep not in (1, dp):
        raise ValueError(f"vLLM data parallelism {dp} with experts over {ep} GPUs is not modelled (EP = DP)")
    if ep == dp or (ep is None and VLLM_EXPERT_PARALLEL_FLAG.search(command_cells(r))):
        return "dp-ep"
    raise ValueError(
        f"vLLM data parallelism {dp} without expert parallelism (--enable-expert-parallel, or expert_parallel_size "
        f"{dp}) is not modelled: its experts run tensor-parallel over the {dp} GPUs"
    )


def parallelism_of(r: dict[str, str]) -> str:
    """How the run split the model over its group (``planner.model.parallel.PARALLELISMS``): "pp" for a pipeline
    of one GPU per stage (``pipeline_parallel_size`` > 1, tensor-parallel size 1); "dp-ep" where the run
    turned on attention data parallelism over more than one GPU (each GPU runs attention for its own requests, the
    experts spread over the group: TensorRT-LLM's "DEP", ``--tp g --ep g`` with ``enable_attention_dp: true``; with
    ``SGLANG_DP_ATTENTION``, SGLang's ``--enable-dp-attention`` as ``sglang_attention_dp`` reads it, whose experts,
    split by tensor parallelism unless ``--ep-size`` says otherwise, are read as spread: the same weight bytes per
    GPU), else "tp" (on one GPU attention DP changes nothing). A ValueError for attention DP whose experts spread
    over another number of GPUs than the group (only ``ep`` = ``tp`` is modelled; the ``expert_parallel_size`` cell,
    else the row's own command's ``--ep_size``), or whose ranks are fewer than the group (attention tensor-parallel
    inside each rank)."""
    if (dp := data_parallel_size(r)) > 1:  # vLLM -tp 1 -dp N --enable-expert-parallel
        return _vllm_dp_ep(r, dp)
    group = (whole_number(r.get("tensor_parallel_size"), "tensor_parallel_size", 1) or 1) * pipeline_stages(r)
    stated_ep = str(r.get("expert_parallel_size") or "").strip()
    if stated_ep and (ep := whole_number(stated_ep, "expert_parallel_size") or 1) > group:  # not dropped unseen
        raise ValueError(
            f"expert_parallel_size {ep} is more than the row's group of {group} GPU(s) (tensor_parallel_size x "
            "pipeline_parallel_size); a vLLM -tp 1 -dp N --enable-expert-parallel run: give data_parallel_size N"
        )
    if (pp := pipeline_stages(r)) > 1:  # one GPU a stage: "pp"; stages of TP t: "ppN", the group t x N
        return "pp" if (whole_number(r.get("tensor_parallel_size"), "tensor_parallel_size", 1) or 1) == 1 else f"pp{pp}"
    gpus = whole_number(r.get("tensor_parallel_size"), "tensor_parallel_size", 1) or 1
    if SGLANG_DP_ATTENTION and (ranks := sglang_attention_dp(r)[0]) > 1:
        if ranks != gpus:
            raise ValueError(
                f"SGLang attention data parallelism over {ranks} ranks of a {gpus}-GPU group is not modelled "
                "(one rank per GPU only)"
            )
        return "dp-ep"
    if not ATTENTION_DP_SETTING.search(command_cells(r)):
        return "tp"
    if gpus == 1:
        return "tp"
    cell = str(r.get("expert_parallel_size") or "").strip()
    sizes = [int(n) for n in EXPERT_PARALLEL_SIZE_FLAG.findall(own_server_command(r))]
    if not cell and not sizes:
        raise ValueError(
            f"attention data parallelism over {gpus} GPUs with no expert_parallel_size (how the experts split)"
        )
    ep = whole_number(cell, "expert_parallel_size") if cell else max(sizes)  # the cell, else the command's --ep_size
    if ep != gpus:
        raise ValueError(
            f"attention data parallelism over {gpus} GPUs with experts over {ep} is not modelled (EP = TP)"
        )
    return "dp-ep"


#: A row whose own source calls its figure provisional (TensorRT-LLM's 1.2 perf overview: "performance data should
#: not be considered finalized" for its beta GPUs); the row's ``notes`` cell says so with this phrase.
PROVISIONAL_NOTE = "provisional per its source"


def provisional_problem(r: dict[str, str]) -> str:
    """Why a figure its source marks provisional is kept but not predicted ("" for any other row)."""
    note = str(r.get("notes", ""))
    return (
        "its source marks the figure provisional (not finalized): kept, not compared"
        if PROVISIONAL_NOTE in note
        else ""
    )


#: Server flags that turn on speculative decoding (SGLang ``--speculative-algorithm``, vLLM ``--speculative-config``,
#: older vLLM ``--speculative-model``, TensorRT-LLM ``--speculative_config``).
SPECULATIVE_FLAG = re.compile(r"--speculative[-_](algorithm|config|model)\b")


@dataclass(frozen=True)
class Speculation:
    """A run's speculative decoding as its server command states it: SGLang's ``--speculative-algorithm``,
    ``--speculative-draft-model-path``, ``--speculative-num-steps``, ``--speculative-eagle-topk`` and
    ``--speculative-num-draft-tokens`` (None: not given, the engine's default; ``planner.serving.speculative
    .sglang_speculation``)."""

    algorithm: str
    draft_model: str
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None


def speculative_problem(r: dict[str, str]) -> str:
    """Why a row served with speculative decoding cannot be predicted by the one-token-a-step paths ("" when it was not
    served so): their step emits one token per sequence, while a draft model or MTP head accepting several per step
    changes TPOT by the acceptance length, which no row states (read from the server command quoted in ``batching`` or
    ``notes``). Only the loaded-run simulation (``planner.accuracy.under_load``, ``DecodeRow.speculation``) models it."""
    text = command_cells(r)
    hit = SPECULATIVE_FLAG.search(text)
    return f"speculative decoding ({hit.group(0)} in the server command) is not modelled" if hit else ""


def speculative_command(r: dict[str, str]) -> str:
    """The text holding the run's own server flags: the ``dataset`` cell's result-block label ("block: ...") when it
    names a speculative algorithm (a document that runs several configurations under one generic serving script),
    else the ``batching`` and ``notes`` cells."""
    block = re.search(r"block:([^;]*)", str(r.get("dataset", "")))
    if block and SPECULATIVE_FLAG.search(block.group(1)):
        return block.group(1)
    return command_cells(r)


def speculation_of(r: dict[str, str]) -> Speculation | None:
    """The run's ``Speculation`` from its server flags (``speculative_command``): SGLang's ``--speculative-*`` flags, or
    vLLM's ``--speculative-config`` JSON (``method``, ``num_speculative_tokens``, ``model``: a chain, k + 1 tokens
    verified); None without speculation. ValueError for another form (TensorRT-LLM's YAML, vLLM 0.6's
    ``--speculative-model``)."""
    text = speculative_command(r)
    hit = SPECULATIVE_FLAG.search(text)
    if not hit:
        return None
    config = re.search(r"--speculative[-_]config[ =]+'?(\{[^}]*\})", text)
    if config:  # vLLM: a JSON object; a chain of num_speculative_tokens drafts, k + 1 verified
        try:
            spec = json.loads(config.group(1))
            k = int(spec["num_speculative_tokens"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"speculative decoding: {config.group(1)!r} is not vLLM's --speculative-config") from None
        method = str(spec.get("method") or "draft_model").lower()
        return Speculation(method, str(spec.get("model") or ""), k, 1, k + 1)
    algo = re.search(r"--speculative-algorithm[ =]+([A-Za-z0-9_]+)", text)
    if not algo:
        raise ValueError(
            f"speculative decoding ({hit.group(0)} in the server command) is read in SGLang's and vLLM's forms only"
        )

    def flag(name: str) -> int | None:
        m = re.search(rf"--speculative-{name}[ =]+(\d+)", text)
        return int(m.group(1)) if m else None

    draft = re.search(r"--speculative-draft-model-path[ =]+(\S+)", text)
    return Speculation(
        algorithm=algo.group(1).lower(),
        draft_model=draft.group(1) if draft else "",
        num_steps=flag("num-steps"),
        topk=flag("eagle-topk"),
        num_draft_tokens=flag("num-draft-tokens"),
    )


#: After a number, a bare multiplier ("12.3k", "1.5 M"), not a unit ("5 ms", "14 GiB", "3 MB", "5.73x").
_MULTIPLIER = re.compile(r"\s*[kKM](?![A-Za-z])")


#: A byte unit other than GiB after a number in a GiB column ("61200 MiB"): it was read as that many GiB.
_OTHER_BYTES = re.compile(r"\s*(MiB|MB|GB|KiB|kB|KB|TiB|TB|B|bytes)\b")
_BYTES_IN = {"MiB": 2**20, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "kB": 1e3, "KB": 1e3, "TiB": 2**40, "TB": 1e12,
             "B": 1, "bytes": 1}  # fmt: skip


def first_number(value: Any, what: str = "", strict: bool = True) -> float:
    """The first number in a published cell ("14.2488 GiB", "93,872", "5.73x"); NaN when there is none.

    ValueError (naming ``what``, the column) for a number written with a multiplier ("12.3k", "1.5M tok/s"): its
    digits alone are not the figure, and k is 1,000 in a rate but 1,024 in a context, so such a cell is refused
    rather than read as 12.3 (token lengths read "8k" as ``planner.units.parse_token_count`` does: ``mean_length``).
    ``strict=False``: the digits alone (12.3), for a table that shows the cell beside the reason it is refused."""
    text = str(value or "")
    hit = re.search(r"-?\d[\d,]*\.?\d*(?:[eE]-?\d+)?", text)
    if hit is None:
        return math.nan
    unit = _OTHER_BYTES.match(text, hit.end()) if strict and what.endswith("_gib") else None
    if unit is not None:  # "61200 MiB" is not 61,200 GiB
        number = float(hit.group(0).replace(",", ""))
        gib = number * _BYTES_IN[unit.group(1)] / 2**30
        raise ValueError(
            f"{what} {text.strip()[:40]!r}: the column is GiB; write the figure in GiB ({number:g} {unit.group(1)} is "
            f"{gib:.4g} GiB)"
        )
    if strict and _MULTIPLIER.match(text, hit.end()):
        raise ValueError(
            f"{what + ' ' if what else ''}{text.strip()[:40]!r}: write the number in full; a k or M multiplier is read "
            "only in a token length (k = 1,024 tokens)"
        )
    return float(hit.group(0).replace(",", ""))


def published_figure(value: Any, what: str = "", strict: bool = True) -> float:
    """A published figure's cell: ``first_number``, except that "inf" and "-inf" (as Python reads them) are infinite,
    not blank: such a figure is then named as not comparable (``planner.accuracy.validation.Check``) instead of its
    row dropping out of validation as one that states nothing."""
    text = str(value or "").strip()
    with contextlib.suppress(ValueError):
        if math.isinf(float(text)):
            return float(text)
    return first_number(value, what, strict)


def refuse_text_figure(value: Any, column: str, where: str) -> None:
    """InvalidInputError when a figure cell holds text but no number ("eight", "n/a"); blank, "inf" and "nan" pass.

    Such a cell would be read as blank, and a row whose only figure it is would drop out of validation unseen (the
    table passing on the rows left), so the file is refused, naming ``where`` (file and row) and the column."""
    text = str(value or "").strip()
    with contextlib.suppress(ValueError):  # "inf", "-inf", "nan": numbers to Python, read as before (no figure)
        float(text)
        return
    if text and math.isnan(first_number(text, column, strict=False)):
        raise InvalidInputError(
            f"{where}: {column} {text[:40]!r} is not a number; write the figure, or leave the cell blank where there "
            "is none"
        )


def whole_number(
    value: Any,
    what: str,
    default: int | None = None,
    tokens: bool = False,
    accepted: str = "a whole number of 0 or more",
) -> int | None:
    """A whole number from a cell; ``default`` when blank; ValueError naming ``what`` and what is ``accepted``
    otherwise. ``tokens``: a token count, which may be written as ``planner.units.parse_token_count`` reads it
    ("32k" = 32,768)."""
    if tokens and isinstance(value, str) and value.strip():
        try:
            return parse_token_count(value)
        except ValueError:
            pass  # a cell with words around the number ("32768 (default)"): read as any other cell
    x = first_number(value, what)
    if math.isnan(x):
        if default is not None or not str(value or "").strip():
            return default
        raise ValueError(f"{what} {value!r} is not a number")
    if x < 0 or not math.isfinite(x) or x != int(x):
        raise ValueError(f"{what} {value!r} is not {accepted}")  # "-1" is whole, but not a count
    return int(x)


class CsvRow(dict):
    """One CSV row as {column: text}, with ``line``: the file's line it ends on (the header is line 1), so a message
    names the row as an editor shows it."""

    line: int | None = None


def row_place(r: dict, i: int) -> str:
    """A data row as the user finds it in the file: "line 3", and its record_id where the row has one ("line 3
    (r17)"); ``i`` (1 for the first row under the header) where the line is not known."""
    line = getattr(r, "line", None)
    place = f"line {line}" if line is not None else f"row {i}"
    rid = str(r.get("record_id") or "").strip()
    return f"{place} ({rid[:40]})" if rid else place


def is_comment_line(line: str) -> bool:
    """Whether a line of a table file is a comment: its first character other than spaces is "#". Read with
    ``comments=True`` (a trace: ``planner plan --trace``), such lines are skipped as blank lines are."""
    return line.lstrip().startswith("#")


def _without_comments(text: str) -> tuple[str, int]:
    """``text`` with each comment line (``is_comment_line``) blanked, so every other line keeps its number, and the
    blank or comment lines before the header dropped; with how many were dropped (added to each row's line)."""
    lines = ["\n" if is_comment_line(x) else x for x in text.splitlines(keepends=True)]
    lead = next((i for i, x in enumerate(lines) if x.strip()), len(lines))
    return "".join(lines[lead:]), lead


def read_csv_rows(
    path: Path, max_rows: int = MAX_MEASUREMENT_ROWS, what: str = "a measurements file", comments: bool = False
) -> list[dict[str, str]]:
    """The rows of a measurements CSV (``what``) as {column: text} (``CsvRow``s, each with its line); blank lines
    skipped, and with ``comments`` lines whose first character is "#" too (``is_comment_line``: a trace's notes);
    over MAX_MEASUREMENTS_BYTES or ``max_rows`` rows, a row with more cells than the header, or unreadable:
    InvalidInputError in one line."""
    try:
        text = read_text_bounded(path, MAX_MEASUREMENTS_BYTES, what, encoding="utf-8-sig")
        skipped = 0
        if comments:
            text, skipped = _without_comments(text)
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        separator = next((c for c in ";\t|" if len(header) == 1 and c in header[0]), None)
        if separator is not None:  # a spreadsheet's CSV in a locale whose decimal mark is the comma
            shown = {"\t": "tabs"}.get(separator, f"'{separator}'")
            raise InvalidInputError(
                f"{path}: its header is one column of names separated by {shown} ({header[0][:40]!r}); save it "
                "with commas between cells and a point in decimals (8.0, not 8,0): in Excel, CSV UTF-8 (Comma "
                "delimited)"
            )
        named = [h.strip() for h in header if h is not None and h.strip()]
        twice = sorted({h for h in named if named.count(h) > 1})
        if twice:  # DictReader keeps the last cell of a name given twice: which figure is meant?
            raise InvalidInputError(
                f"{path}: column {twice[0]!r} is in the header twice; keep one (each figure has its own column)"
            )
        rows = []
        for r in itertools.islice(reader, max_rows + 1):
            if None in r:  # more cells than the header: a decimal comma ("8,0") would shift or drop a figure
                raise InvalidInputError(
                    f"{path}: line {reader.line_num + skipped} has {len(reader.fieldnames or ()) + len(r[None])} "
                    "cells where "
                    f"the header has {len(reader.fieldnames or ())}; write decimals with a point (8.0, not 8,0) "
                    'and quote a cell that holds a comma ("93,872")'
                )
            row = CsvRow({k.strip(): (v or "") for k, v in r.items()})
            row.line = reader.line_num + skipped
            rows.append(row)
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path}: not UTF-8 text; save it as a UTF-8 CSV") from None
    except (OSError, csv.Error) as exc:
        raise InvalidInputError(f"{path}: cannot read as CSV ({getattr(exc, 'strerror', None) or exc})") from None
    check_count(len(rows), max_rows, "rows or more", str(path))
    return rows


def read_measurement_text(path: Path, what: str, accepted: str = "") -> str:
    """A measurements file's text (``what``, at most MAX_MEASUREMENTS_BYTES, a BOM dropped); InvalidInputError in one
    line where it is not UTF-8 or cannot be read, ending with ``accepted`` (what is read instead) where given."""
    try:
        return read_text_bounded(path, MAX_MEASUREMENTS_BYTES, what, encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path}: not UTF-8 text" + (f"; {accepted}" if accepted else "")) from None
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read ({exc.strerror or exc})") from None


#: What ``json_lines`` gives for a line that is not JSON.
NOT_JSON = object()


def json_lines(text: str, comments: bool = False):
    """(line number, the line, its JSON value or ``NOT_JSON``) for each non-blank line of ``text`` (with
    ``comments``, each line that is no comment either: ``is_comment_line``)."""
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or (comments and is_comment_line(raw)):
            continue
        try:
            yield line, raw, json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            yield line, raw, NOT_JSON


def read_json_lines_rows(path: Path, max_rows: int, what: str, comments: bool = False) -> list[dict[str, str]]:
    """The rows of a JSON Lines file (``what``: one JSON object a line, blank lines skipped, and with ``comments``
    lines whose first character is "#" too) as {key: text} (``CsvRow``s with their lines), as ``read_csv_rows``
    gives a CSV's; InvalidInputError in one line for a line that is no JSON object, over ``max_rows`` rows or
    MAX_MEASUREMENTS_BYTES, or unreadable."""
    rows = []
    for line, raw, obj in json_lines(read_measurement_text(path, what), comments):
        if not isinstance(obj, dict):
            raise InvalidInputError(f"{path}: line {line} is not a JSON object ({raw.strip()[:60]!r}); give one a line")
        row = CsvRow({str(k).strip(): "" if v is None else str(v) for k, v in obj.items()})
        row.line = line
        rows.append(row)
        if len(rows) > max_rows:
            break
    check_count(len(rows), max_rows, "rows or more", str(path))
    return rows


def looks_like_json_lines(path: Path) -> bool:
    """Whether a table file is JSON Lines: its name ends .jsonl or .ndjson, or its first non-blank character outside
    comment lines (``is_comment_line``) is "{".
    A JSON array ("[" first, or a .json name) is refused (InvalidInputError) with the forms that are read."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            head = "".join(x for x in f.read(4096).splitlines(keepends=True) if not is_comment_line(x)).lstrip()
    except OSError:
        return False
    if head.startswith("[") or (path.suffix.lower() == ".json" and not head.startswith("{")):
        raise InvalidInputError(
            f"{path}: a JSON array (or document); give JSON Lines (one object a line, no enclosing [ ]) or a CSV"
        )
    return head.startswith("{")


def require_columns(path: Path, raw: list[dict[str, str]], needed: Iterable[str], accepted: str) -> None:
    if not raw:
        return
    missing = [c for c in needed if not any(alt in raw[0] for alt in c.split("|"))]
    if missing:
        names = ", ".join(c.replace("|", " or ") for c in missing)
        raise InvalidInputError(f"{path}: missing column(s) {names}; {accepted}")


def reference_dir() -> Path:
    """The shipped reference data: ``catalogs/reference`` (``planner/_catalogs/reference`` when installed)."""
    return shipped_catalog_dir() / "reference"


# -- benchmark rows ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodeRow:
    """One benchmark measurement: ``batch`` sequences, ``input_len`` prompt and ``output_len`` output tokens each.

    ``kind``: "static" (a batch that starts together) or "serving" (a continuous-batching server given
    ``num_prompts`` requests, ``batch`` at a time, all at once or at ``request_rate`` requests/s).
    ``output_len = 0``: a steady-state decode step at context ``input_len`` (``planner calibrate --measure``).
    ``batch = 0``: the engine chose its own batch (a max-throughput run): the most sequences of
    ``input_len + output_len`` tokens that fit, at most the engine's ``max_num_seqs`` and ``num_prompts``.
    """

    record_id: str
    gpu: str
    model: str
    gpus: int
    batch: int
    input_len: int
    output_len: int
    weight_precision: str | None = None
    kv_precision: str | None = None
    engine: str = "vllm"
    engine_version: str = ""
    tpot_s: float = math.nan
    throughput_tokens_per_s: float = math.nan
    ttft_s: float = math.nan
    kind: str = "static"
    num_prompts: int | None = None
    request_rate: float | None = None
    source: str = ""
    source_group: str = ""  # one label per source document: what a held-out split holds out together
    statistic: str = "mean"  # of TTFT and TPOT over requests: "mean", "median", or "" (the source does not say)
    max_num_batched_tokens: int | None = None  # the server's token budget per step, where its command sets it
    max_num_seqs: int | None = None  # the server's limit of requests in flight, where its command sets it
    #: whether the server split prompts across steps, where its command says so (TensorRT-LLM's
    #: ``--enable_chunked_prefill``: ``chunked_prefill_of``); None: the engine's default
    chunked_prefill: bool | None = None
    length_range_ratio: float | None = None  # the benchmark's --random-range-ratio, where its lengths vary by it
    problem: str = ""  # why the row cannot be predicted as written (a bad cell), else ""
    #: a serving run's percentiles over requests (TTFT, TPOT) and output tokens (ITL), seconds (NaN: not printed)
    ttft_median_s: float = math.nan
    ttft_p99_s: float = math.nan
    tpot_median_s: float = math.nan
    tpot_p99_s: float = math.nan
    itl_median_s: float = math.nan
    itl_p99_s: float = math.nan
    #: the same run's p90 and p95 where its client printed them (``--metric-percentiles 90,95,99``; trial 24 F11: the
    #: percentile planner sizes on, p95, was the one never compared)
    ttft_p90_s: float = math.nan
    ttft_p95_s: float = math.nan
    tpot_p90_s: float = math.nan
    tpot_p95_s: float = math.nan
    itl_p90_s: float = math.nan
    itl_p95_s: float = math.nan
    dataset: str = ""  # the dataset cell (a named dataset's published lengths stand in for blank lengths)
    #: whether the run's prompts were already in the server's prefix cache (``prefix_cache`` "warm": a sweep that
    #: re-sends the same prompts to one server with prefix caching on; "cold" or blank: computed)
    prompts_cached: bool = False
    #: how many of the run's first prompts were already in the server's prefix cache where only those were
    #: (``prefix_cache`` "warm: the first N prompts": an earlier run of the sweep sent the same fixed-seed sample's
    #: first N to the same server); 0: as ``prompts_cached`` says
    prompts_cached_first: int = 0
    #: whether the server had prefix caching on: its command says ``--enable-prefix-caching`` (``prefix_caching_of``)
    #: or its prompts were served warm from the cache (``prompts_cached``); False: the engine's default, unread
    prefix_caching: bool = False
    #: whether the server scheduled each step while the one before ran (vLLM ``--async-scheduling``, said in the
    #: row's ``batching`` or ``notes`` cell): a request arriving at a busy server waits one step more
    async_scheduling: bool = False
    #: vLLM's ``--num-scheduler-steps`` where the row's server command sets it (multi-step scheduling, vLLM 0.5-0.7)
    scheduler_steps: int | None = None
    #: SGLang's ``--max-prefill-tokens`` where the row's server command sets it (``PREFILL_INPUT_FLAGS``): the prompt
    #: tokens of whole requests one prefill batch takes (``planner.serving.simulate.SGLANG_MAX_PREFILL_TOKENS``)
    max_prefill_tokens: int | None = None
    scheduler_recv_interval: int | None = None  # SGLang's --scheduler-recv-interval, where the row's command sets it
    #: the flag of the row's SGLang command that turns the piecewise prefill graph off (``sglang_piecewise_off_flag``,
    #: EXPERIMENT h-ttftp50); None where none is set
    sglang_piecewise_off: str | None = None
    #: what in the row's SGLang command turns the overlap scheduler off (``sglang_overlap_off_of``; EXPERIMENT
    #: h-sglhost); None where nothing does
    sglang_overlap_off: str | None = None
    #: TensorRT-LLM's attention-DP balancing gate (``attention_dp_gate_of``): ``timeout_iters`` where the row's
    #: options turn on ``enable_attention_dp`` and ``attention_dp_config.enable_balance``; None: no gate
    attention_dp_gate: int | None = None
    #: the stream interval the row's options set (``stream_interval_of``): TensorRT-LLM's ``stream_interval``, SGLang's
    #: ``--stream-interval``; each builds a streamed request's output once every that many steps
    stream_interval: int | None = None
    server_memory_share: float | None = None  # the engine's memory share, where the row's command sets it
    #: the benchmark client whose sampler drew the prompts (``benchmark_client_of``): "vllm", "sglang" or "" (not said)
    client: str = ""
    #: where the row names no client and leaves a length blank, the client whose defaults for its named dataset gave
    #: that length (``dataset_client_of``: "sglang" for an SGLang server, else "vllm"); "" where none was assumed
    assumed_client: str = ""
    #: whether the run is ``trtllm-bench throughput`` without ``--streaming`` (``offline_benchmark_of``): each request's
    #: result is built once, when it finishes, and its tokens are not detokenized
    offline_benchmark: bool = False
    #: the run's speculative decoding as its server command states it (``speculation_of``); None: one token per step
    speculation: Speculation | None = None
    #: whether the run's own server command spreads the routed experts over the group (``expert_parallel_of``)
    expert_parallel: bool = False
    #: a refused row's batch, lengths and rate as the file wrote them ("B=8.5 1024/512"): ``batch`` and the lengths
    #: may hold placeholders where a cell could not be read; "" for a row predicted
    as_written: str = ""
    #: what SGLang divides the run's prefill chunk by under attention data parallelism (``sglang_attention_dp``,
    #: with ``SGLANG_DP_ATTENTION``); 1: not divided
    prefill_chunk_divisor: int = 1
    #: SGLang's attention-DP ranks of a row read as tensor parallel (``sglang_attention_dp``, where ``parallelism``
    #: is not "dp-ep"): each keeps its own KV pool (h-dsk042, ``planner.accuracy.predict.SGLANG_DP_ATTENTION_KV_POOL``);
    #: 1: none
    dp_attention_ranks: int = 1
    #: whether the run served with ``trtllm-serve --backend pytorch`` (``pytorch_backend_of``)
    pytorch_backend: bool = False
    #: whether the run is a ``trtllm-serve`` on its release's default CUDA graphs (``trtllm_serve_default_graphs``)
    trtllm_default_graphs: bool = False
    #: how the run split the model over its group (``parallelism_of``): "tp", "dp-ep" (attention data parallel) or
    #: a pipeline ("pp" one GPU per stage, "ppN" N stages of TP t: ``planner.model.layouts``)
    parallelism: str = "tp"
    #: vLLM's ``--max-model-len`` where the row's server command sets it (V0's chunking rule and token budget read it)
    max_model_len: int | None = None
    #: each request's (prompt, output) tokens where the run's result lists them (``vllm bench serve --save-detailed``,
    #: ``sglang.bench_serving --output-details``: ``planner.accuracy.serving_results``); None: from the means
    request_lengths: tuple[tuple[int, int], ...] | None = None
    #: the gamma shape of a run's arrival gaps at ``request_rate`` (``vllm bench serve --burstiness``: 1 Poisson,
    #: below 1 burstier, ``planner.serving.benchmark.arrival_times_s``); a run without a rate does not read it
    burstiness: float = 1.0

    @property
    def context(self) -> int:
        """The mean context over the generation, at which the row's TPOT is predicted (whole tokens)."""
        return mean_context(self.input_len, self.output_len)


#: Requests that the serving runs of one measurements file may ask to simulate in all (about 50 us each; the
#: shipped files: 2.2 million over 711 runs).
MAX_SIMULATED_PROMPTS = 3_000_000

DECODE_COLUMNS = (
    "gpu, model, batch, input_len, output_len, and tpot_ms, ttft_ms and/or output_throughput_tok_s "
    "(optional: record_id, kind, tensor_parallel_size, expert_parallel_size, data_parallel_size, pipeline_parallel_size, "
    "weight_dtype, "
    "kv_cache_dtype, engine, engine_version, batching, notes, num_prompts, request_rate, burstiness); a serving run at a rate: gpu, model, request_rate, num_prompts, "
    "input_len and output_len or a dataset, and ttft_median_ms ... itl_p99_ms"
)


#: Every column of a decode CSV that its reader reads (``_decode_row`` and the helpers it calls on the row's cells:
#: ``command_cells``, ``server_flag``, ``benchmark_client_of``, ``itl_is_tpot`` ...), the context form's ``context``
#: (``planner.cli.accuracy.read_decode_csv``) among them. A column outside it and ``DECODE_KEPT_COLUMNS`` is not read:
#: ``planner.accuracy.unread`` names it (trial 15 F2: a misspelt ``ttft_p99ms`` was dropped without a word).
DECODE_READ_COLUMNS = frozenset({
    "record_id", "source", "source_group", "gpu", "model", "engine", "engine_version", "kind", "batching", "notes",
    "statistic", "tensor_parallel_size", "gpus", "pipeline_parallel_size", "expert_parallel_size", "weight_dtype",
    "data_parallel_size",
    "kv_cache_dtype", "batch_size_or_concurrency", "batch", "num_prompts", "request_rate", "burstiness", "dataset",
    "prefix_cache", "input_len", "output_len", "context", "tpot_ms", "ttft_ms", "itl_ms", "e2e_latency_ms",
    "output_throughput_tok_s", "throughput_tok_s", "throughput_unit",
    "ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms",
    "ttft_p90_ms", "ttft_p95_ms", "tpot_p90_ms", "tpot_p95_ms", "itl_p90_ms", "itl_p95_ms",
})  # fmt: skip
#: The benchmark clients' figure keys (``vllm bench serve --save-result``, ``sglang.bench_serving --output-file``:
#: milliseconds, tok/s) and the decode CSV column each is read as. One table for both readers: a result file's keys
#: (``planner.accuracy.serving_results.FIGURE_KEYS`` is this table) and a decode CSV's columns named as the client
#: names them (``mean_ttft_ms``, ``median_tpot_ms``, ``output_throughput``: trial 29 F8, a CSV typed from vLLM's
#: output had its means dropped as unknown columns).
CLIENT_FIGURE_KEYS = {
    "median_ttft_ms": "ttft_median_ms",
    "p99_ttft_ms": "ttft_p99_ms",
    "median_tpot_ms": "tpot_median_ms",
    "p99_tpot_ms": "tpot_p99_ms",
    "median_itl_ms": "itl_median_ms",
    "p99_itl_ms": "itl_p99_ms",
    **{f"{p}_{m}_ms": f"{m}_{p}_ms" for m in ("ttft", "tpot", "itl") for p in ("p90", "p95")},  # --metric-percentiles
    "mean_ttft_ms": "ttft_ms",
    "mean_tpot_ms": "tpot_ms",
    "output_throughput": "output_throughput_tok_s",
}
#: Other names a decode CSV's column may have, each read as the column it names: the clients' keys
#: (``CLIENT_FIGURE_KEYS``) and the mean quantities as ``validate --json`` names them (``ttft_mean_ms``,
#: ``tpot_mean_ms``: the mean TTFT and TPOT, ``ttft_ms`` and ``tpot_ms``). A file that names one figure twice
#: (``mean_ttft_ms`` beside ``ttft_ms``) is refused (``canonical_columns``).
DECODE_COLUMN_ALIASES = {**CLIENT_FIGURE_KEYS, "ttft_mean_ms": "ttft_ms", "tpot_mean_ms": "tpot_ms"}
#: How messages say what ``DECODE_COLUMN_ALIASES`` accepts.
DECODE_COLUMNS_NOTE = "vllm bench serve's key names, mean_ttft_ms ..., and ttft_mean_ms / tpot_mean_ms are read"
#: Columns of the shipped decode files (``catalogs/reference/README.md``) that the reader leaves unread on purpose:
#: the source's own words (``quote``), a GPU count the tensor-parallel and pipeline sizes restate (``num_gpus``) and
#: figures not compared (total and request throughput). Not read, and not unknown.
DECODE_KEPT_COLUMNS = frozenset({"quote", "num_gpus", "total_throughput_tok_s", "request_throughput_req_s"})
#: A benchmark client's other statistic of a compared latency (``vllm bench serve --metric-percentiles 95``:
#: ttft_p95_ms; itl_mean_ms, e2el_median_ms): a known column, not compared (``planner validate`` names it in a note).
OTHER_STATISTIC_COLUMN = re.compile(r"(ttft|tpot|itl|e2el)_(p\d+(?:\.\d+)?|mean|median|std)_ms")

#: The shipped rows read so far in this process, keyed by each file's path, size and modification time (the
#: validation, the held-out and load benches and the Excel functions read them many times; ~0.35 s a read).
_SHIPPED_ROWS: dict[tuple, tuple[DecodeRow, ...]] = {}


def load_decode_rows(path: str | Path | None = None) -> list[DecodeRow]:
    """Rows of a benchmark CSV (default: every shipped ``decode_*.csv`` and ``perf_*.csv``, read once per process
    while the files are unchanged). See ``DECODE_COLUMNS``."""
    ref = reference_dir()
    if path is None:
        paths = sorted([*ref.glob("decode_*.csv"), *ref.glob("perf_*.csv")])
        key = tuple((str(p), st.st_size, st.st_mtime_ns) for p in paths for st in [p.stat()])
        if key not in _SHIPPED_ROWS:
            _SHIPPED_ROWS.clear()
            _SHIPPED_ROWS[key] = tuple(_read_decode_rows(paths, None))
        return list(_SHIPPED_ROWS[key])
    return _read_decode_rows([Path(path)], path)


def _read_decode_rows(paths: list[Path], path: str | Path | None) -> list[DecodeRow]:
    rows = []
    for p in paths:
        raw = read_csv_rows(p)
        # a serving run at a rate needs no batch (the server chose it), a named dataset no lengths (its means)
        needed = (
            "gpu",
            "model",
            "batch_size_or_concurrency|batch|request_rate",
            "input_len|dataset",
            "output_len|dataset",
        )
        raw = canonical_columns(p, raw)  # vllm bench serve's key names (mean_ttft_ms): the columns they name
        require_columns(p, raw, needed, f"a decode file has {DECODE_COLUMNS}")
        rows += decode_rows_of_cells(p, raw, check_size=False)
    if path:
        _check_simulated(path, rows)
    return rows


def canonical_columns(path: Path, raw: list[dict[str, str]]) -> list[dict[str, str]]:
    """``raw`` with each column named by another name (``DECODE_COLUMN_ALIASES``: vLLM's ``mean_ttft_ms``,
    ``median_tpot_ms``; ``ttft_mean_ms``) renamed to the column it names (``ttft_ms``, ``tpot_median_ms``), each row
    keeping its ``line``. A header that names one figure twice (``mean_ttft_ms`` and ``ttft_ms``) is refused in one
    line: which of the two is the run's?"""
    header = list(raw[0]) if raw else []
    renamed = {c: DECODE_COLUMN_ALIASES[c] for c in header if c in DECODE_COLUMN_ALIASES}
    if not renamed:
        return raw
    named: dict[str, list[str]] = {}
    for c in header:
        named.setdefault(renamed.get(c, c), []).append(c)
    twice = next((cs for cs in named.values() if len(cs) > 1), None)
    if twice:
        shown = " and ".join(repr(c) for c in twice)
        target = renamed.get(twice[-1], twice[-1])
        raise InvalidInputError(
            f"{path}: columns {shown} both give {target} ({DECODE_COLUMNS_NOTE} as the columns they name); keep one"
        )
    out = []
    for r in raw:
        row = CsvRow({renamed.get(k, k): v for k, v in r.items()})
        row.line = getattr(r, "line", None)
        out.append(row)
    return out


def decode_rows_of_cells(path: Path, raw: list[dict[str, str]], check_size: bool = True) -> list[DecodeRow]:
    """``DecodeRow``s of rows given as {column: text}, each read as the same row of a decode CSV would be (``path``
    names them in messages): what ``planner.accuracy.serving_results`` turns a benchmark client's result file into.
    ``check_size``: refuse serving runs that add up to more than ``MAX_SIMULATED_PROMPTS`` requests."""
    rows = [_decode_row(path, i, r) for i, r in enumerate(raw, 1)]
    if check_size:
        _check_simulated(path, rows)
    return rows


def _check_simulated(path: str | Path, rows: list[DecodeRow]) -> None:
    simulated = sum(r.num_prompts or 0 for r in rows if r.kind == "serving" and not r.problem)
    if simulated > MAX_SIMULATED_PROMPTS:
        raise InvalidInputError(
            f"{path}: its serving runs add up to {simulated:,} requests to simulate; at most {MAX_SIMULATED_PROMPTS:,} "
            "are (split the file)"
        )


#: The ``kind`` column of ``perf_public.csv``: (kind of run, prompts all at once, batch chosen by the engine).
KIND_COLUMN = {
    "latency_batch1": ("static", False, False),
    "static_batch": ("static", False, False),
    "serving_concurrency": ("serving", True, False),
    "serving_rate": ("serving", False, False),
    "max_throughput": ("serving", True, True),
}


#: A fixed-concurrency run whose number of prompts is not stated (NIM/AIPerf, vllm bench serve pages): the
#: client kept ``batch`` requests in flight; taken as this many prompts per slot, so the ramp and tail are ~1/10
#: of the run (TTFT and TPOT of a closed loop hardly depend on it; the run's output rate does, by up to ~10%).
CLOSED_LOOP_PROMPTS_PER_SLOT = 10


def throughput_scope(unit: str) -> str:
    """'group' (the whole tensor-parallel group), 'gpu' (per GPU) or 'unknown', from a throughput-unit cell."""
    text = str(unit or "").lower()
    if any(w in text for w in ("not stated", "does not say", "whether", "presumably")):
        return "unknown"
    return "gpu" if "per gpu" in text else "group"


#: A time cell whose unit is none ``parse_seconds`` reads (``planner.units.TIME_UNITS``: "2 min", "1 h", "9.5 S"): it
#: was read as its number in the column's ms (a trial: "9.5 seconds" as 9.5 ms, now read as seconds), so it is refused.
_OTHER_TIME_UNIT = re.compile(
    r"\s*[0-9]*\.?[0-9]+\s*(sec|secs|second|seconds|min|mins|minute|minutes|h|hr|hrs|hour|hours|S|MS|Ms|msec|msecs)\b"
)
#: A number with a decimal comma ("9,5", "12,75"): one or two digits after a comma, not a thousands group.
_DECIMAL_COMMA = re.compile(r"^\s*[0-9]+,[0-9]{1,2}\s*$")


#: Why a serving run whose number of prompts is not stated gets no prediction: the simulation would send one request
#: (the batch of a run whose server chose it), the same at every rate (trial 15 F1: TTFT p99 = median, silently).
#: (Its start is what ``bench/source_agreement.py`` matches to keep such a row's figures as published.)
NO_NUM_PROMPTS = (
    "num_prompts not stated: a serving run is simulated with the requests it sent, whose number sets its ramp, tail "
    "and queue; add a num_prompts column with the run's count (the benchmark's --num-prompts)"
)


def unsized_serving_run(kind: str, batch: int | None, rate: float) -> bool:
    """Whether a serving run (``kind`` "serving") with no ``num_prompts`` says nothing of how many requests it sent:
    one at a request rate (``rate`` a finite number above 0), or one whose server chose its batch (``batch`` 0 or
    blank: every prompt at once, or at ``inf``). A closed loop of ``batch`` in flight, or prompts sent ``batch`` at
    once, is sized by its batch (``CLOSED_LOOP_PROMPTS_PER_SLOT``, or ``batch`` prompts)."""
    at_a_rate = 0.0 < rate < math.inf  # (NaN, a blank cell: not a rate)
    return kind == "serving" and (at_a_rate or not batch)


def _as_written(r: dict[str, str]) -> str:
    """A refused row's batch, lengths and rate as its cells say them (blank: "?"; a dataset for blank lengths; a length
    that reads as a number: as read, 1000.44 as 1000 tokens), since its batch and lengths hold placeholders where a
    cell could not be read. Laid out as a predicted row's configuration (``planner.accuracy.validation``): a run at a
    rate "1000/300 10 req/s" (" C=8" where a batch cell caps it, " burstiness 0.5" where not Poisson; "all at once"
    at inf), else "B=8.5 1024/512" (trial 15 F10: "B=? ?/? rate 10" stood beside "1000/300 10 req/s")."""

    def cell(*columns: str) -> str:
        text = next((str(r.get(c)).strip() for c in columns if str(r.get(c) or "").strip()), "")
        return text[:20] if text else "?"

    def length(column: str) -> str:  # as the reader reads it where it can ("1000.44": 1000), else as written
        with contextlib.suppress(ValueError):
            tokens = mean_length(r.get(column), column, "", 0)
            if tokens is not None:
                return str(tokens)
        return cell(column)

    lengths = f"{length('input_len')}/{length('output_len')}"
    if lengths == "?/?" and str(r.get("dataset") or "").strip():
        lengths = str(r["dataset"]).strip()[:20]
    rate = str(r.get("request_rate") or "").strip()[:20]
    batch = cell("batch_size_or_concurrency", "batch")
    if not rate:
        return f"B={batch} {lengths}"
    if rate.lower() in ("inf", "infinity", "+inf"):  # vllm bench serve's default: every prompt at once
        sent = "all at once"
    else:
        burstiness = str(r.get("burstiness") or "").strip()[:20]
        sent = f"{rate} req/s" + (f" burstiness {burstiness}" if burstiness not in ("", "1", "1.0") else "")
    return f"{lengths} {sent}" + (f" C={batch}" if batch != "?" else "")


def _decode_row(p: Path, i: int, r: dict[str, str]) -> DecodeRow:
    refused: list[str] = []  # a figure written with a multiplier ("12.3k"): the row's problem

    def figure(column: str) -> float:
        cell = r.get(column)
        if column.endswith("_ms") and isinstance(cell, str):  # a time written with its unit: "0.05 s" is 50 ms
            with contextlib.suppress(ValueError):  # a bare number (the column's ms) or other text: as below
                return float(f"{parse_seconds(cell, math.inf, column) * 1e3:.12g}")  # "9.5 us": 0.0095, not 0.00949..
            if _OTHER_TIME_UNIT.match(cell):  # "9.5 seconds", "9.5 min": not a unit read, never the column's ms
                raise InvalidInputError(
                    f"{p}: {row_place(r, i)}: {column} {cell.strip()[:40]!r}: a time is written in ms (the column's "
                    'unit) or with s, ms or us ("0.05 s", "50 msec")'
                )
        if isinstance(cell, str) and _DECIMAL_COMMA.search(cell):  # "9,5": 95 by the thousands reading
            raise InvalidInputError(
                f"{p}: {row_place(r, i)}: {column} {cell.strip()[:40]!r}: write decimals with a point (9.5, not 9,5)"
            )
        read = first_number if column == "request_rate" else published_figure  # a rate of inf: all at once
        if column == "request_rate" and str(cell or "").strip().lower() in ("inf", "infinity", "+inf"):
            return math.inf  # vllm bench serve's default --request-rate: every prompt at once
        try:
            x = read(cell, column)
        except ValueError as exc:  # kept as its digits, so the table shows the row beside the reason
            refused.append(str(exc))
            return read(r.get(column), column, strict=False)
        if math.isnan(x):
            refuse_text_figure(cell, column, f"{p}: {row_place(r, i)}")
        return x

    tpot = figure("tpot_ms") / 1e3
    if math.isnan(tpot) and itl_is_tpot(r):  # AIPerf's / GenAI-Perf's "ITL" is vllm bench serve's TPOT
        tpot = figure("itl_ms") / 1e3
    tput = figure("output_throughput_tok_s" if r.get("output_throughput_tok_s") else "throughput_tok_s")
    ttft = figure("ttft_ms") / 1e3
    kind, _ = benchmark_kind(r.get("batching", ""))
    kind, _, engine_batch = KIND_COLUMN.get(str(r.get("kind", "")).strip(), (kind, False, False))
    rate = figure("request_rate")
    if kind == "static" and rate > 0 and not any(str(r.get(c) or "").strip() for c in ("kind", "batching")):
        kind = "serving"  # a request rate and nothing saying otherwise: a server given requests at that rate
    engine_cell = str(r.get("engine", "")).strip()
    version = str(r.get("engine_version", "")).strip() or release_in_engine_cell(engine_cell)
    left_out = ""
    scope = throughput_scope(r.get("throughput_unit", ""))
    if scope == "unknown" and not math.isnan(tput):
        tput, left_out = math.nan, "throughput left out: the source does not say per GPU or per group"
    problem, batch, inp, out, tp, prompts, parallelism = "", 1, 1, 1, 1, None, "tp"
    assumed_client = ""  # the client whose dataset defaults a blank length took, the row naming none
    speculation = None
    try:
        if (given := str(r.get("kind", "")).strip()) and given not in KIND_COLUMN:  # read as the batching cell before
            raise ValueError(f"{UnknownNameError('kind', given, KIND_COLUMN)} (blank: the batching cell says)")
        tp = whole_number(r.get("tensor_parallel_size") or r.get("gpus"), "tensor_parallel_size", 1) or 1
        tp *= pipeline_stages(r)  # the group: a pipeline of TP 1 stages has one GPU per stage
        tp *= data_parallel_size(r)  # vLLM's -dp N: N ranks of tensor_parallel_size GPUs each
        if scope == "gpu":
            tput *= tp
        batch = whole_number(
            r.get("batch_size_or_concurrency") or r.get("batch"),
            "batch",
            accepted="a whole number of sequences from 1 (0 or blank in a serving run: the server chose it)",
        )
        client, client_assumed = dataset_client_of(r)
        prompts = whole_number(r.get("num_prompts"), "num_prompts")
        inp = mean_length(r.get("input_len"), "input_len", r.get("dataset", ""), 0, client, prompts)
        out = mean_length(r.get("output_len"), "output_len", r.get("dataset", ""), 1, client, prompts)
        if client_assumed and inp is not None and out is not None:
            blank = any(not str(r.get(c) or "").strip() for c in ("input_len", "output_len"))
            assumed_client = client if blank else ""
        if rate <= 0:  # not NaN: a number written, and not a rate (blank or inf: all prompts at once)
            raise ValueError(
                f"request_rate {str(r.get('request_rate')).strip()[:20]}: give requests per second above 0 "
                "(blank or inf: all prompts at once)"
            )
        if prompts == 0:
            raise ValueError("num_prompts 0: give the prompts the run sent, 1 or more (blank: not stated)")
        if prompts is not None and prompts > MAX_PROMPTS:
            raise ValueError(f"num_prompts {prompts:,} is above {MAX_PROMPTS:,}, the most a run is simulated with")
        if (server_flag(r, TOKEN_BUDGET_FLAGS) or 0) > MAX_BATCHED_TOKENS:
            raise ValueError(f"max_num_batched_tokens above {MAX_BATCHED_TOKENS:,}, the most accepted")
        problem = provisional_problem(r) or speculative_problem(r)
        parallelism = parallelism_of(r)
        try:
            speculation = speculation_of(r)
        except ValueError:  # a form not read here (vLLM's JSON): refused by speculative_problem's reason
            speculation = None
        if batch is None and (engine_batch or kind == "serving"):
            batch = 0  # the engine's own choice, worked out when the row is predicted
        if batch is None or inp is None or out is None:
            blank = [c for c, v in (("batch", batch), ("input_len", inp), ("output_len", out)) if v is None]
            hint = ""
            named = dataset_in(str(r.get("dataset") or "")) if (inp is None or out is None) else None
            if named is not None:  # a dataset whose lengths are not published (openorca's prompts, cnn_dailymail)
                gone = [c for c in ("input_len", "output_len") if c in blank]
                hint = (
                    f" (the dataset {named} publishes no mean {' or '.join(c.split('_')[0] for c in gone)} length "
                    "here: give the run's own in input_len and output_len)"
                )
            elif batch is None and prompts is not None:  # a serving run that says neither how it sent its prompts
                hint = (
                    " (a serving run: give request_rate, inf for every prompt at once, or batch, the requests a "
                    "closed-loop client kept in flight)"
                )
            raise ValueError(f"no {', '.join(blank)}{hint}")
        if batch < 1 and not (engine_batch or kind == "serving"):
            cell = str(r.get("batch_size_or_concurrency") or r.get("batch")).strip()[:20]
            raise ValueError(f"batch {cell!r} is below 1; give the sequences decoded together, a whole number from 1")
        kind_cell = str(r.get("kind", "")).strip()
        if prompts is None and kind_cell == "serving_concurrency" and batch >= 1:
            prompts = (
                CLOSED_LOOP_PROMPTS_PER_SLOT * batch
            )  # a client kept `batch` in flight for a run of unstated length
        elif prompts is None and (
            kind_cell in ("max_throughput", "serving_rate") or unsized_serving_run(kind, batch, rate)
        ):
            raise ValueError(NO_NUM_PROMPTS)
    except ValueError as exc:
        problem = str(exc)
    where = " ".join(str(r.get(c, "")) for c in ("gpu", "batching", "notes")).lower()
    if not problem and re.search(r"across (two )?nodes|different nodes|diff-nodes|two nodes|multi-node", where):
        problem = "tensor or pipeline parallelism across nodes is not modelled (one node's interconnect only)"
    e2e = figure("e2e_latency_ms") / 1e3
    if kind == "static" and math.isnan(tput) and not math.isnan(e2e) and not problem and out:
        tput = batch * out / e2e  # a latency benchmark's whole batch over its end-to-end time
    percentiles = {c: figure(c) / 1e3 for c in (*PERCENTILE_COLUMNS, *TAIL_PERCENTILE_COLUMNS)}
    problem = problem or (refused[0] if refused else "")
    ratio = None
    try:
        ratio = range_ratio_of(r)
    except ValueError as exc:
        problem = problem or str(exc)
    engine, unknown_engine = _engine_name(engine_cell)
    problem = unknown_engine or problem  # first: a speculating row's reason would let it be predicted
    burstiness = 1.0
    try:
        burstiness = burstiness_of(r.get("burstiness"))
    except ValueError as exc:
        problem = problem or str(exc)
    cached, cached_first = False, 0
    try:
        cached = prefix_cache_of(r.get("prefix_cache", ""))
        cached_first = warm_prompts_of(r.get("prefix_cache", ""))
    except ValueError as exc:
        problem = problem or str(exc)
    if not problem and all(math.isnan(x) for x in (tpot, tput, ttft, *percentiles.values())):
        problem = left_out or "no tpot_ms, ttft_ms, output_throughput_tok_s or a percentile column (ttft_p99_ms ...)"
        figures = {"tpot_ms", "itl_ms", "ttft_ms", "output_throughput_tok_s", "throughput_tok_s", *PERCENTILE_COLUMNS}
        figures |= set(TAIL_PERCENTILE_COLUMNS)
        if not left_out and not figures & set(r):  # a misspelt column ("tpot"): show the ones the file has
            given = ", ".join(str(c) for c in r if c)
            problem += f" (the file's columns: {given[:160]}{'...' if len(given) > 160 else ''})"
    as_written = _as_written(r) if problem else ""
    return DecodeRow(
        record_id=r.get("record_id") or f"row{i}",
        as_written=as_written,
        gpu=r["gpu"],
        model=r["model"],
        gpus=tp,
        batch=batch if batch is not None else 1,
        input_len=inp or 0,
        output_len=out or 0,
        weight_precision=weight_precision_of(r.get("weight_dtype", ""), r["model"]),
        kv_precision=precision_in(r.get("kv_cache_dtype", "")),
        engine=engine,
        engine_version=version,
        tpot_s=tpot,
        throughput_tokens_per_s=tput,
        ttft_s=ttft,
        kind=kind,
        num_prompts=prompts or None,
        request_rate=None if math.isnan(rate) or rate <= 0 or math.isinf(rate) else rate,  # inf: all at once
        source=r.get("source", "") or str(p),
        source_group=r.get("source_group", "") or source_group_of(r.get("source", "") or str(p)),
        statistic=statistic_of(r.get("statistic", "")),
        max_num_batched_tokens=server_flag(r, TOKEN_BUDGET_FLAGS),
        max_num_seqs=server_flag(r, SEQUENCE_LIMIT_FLAGS),
        chunked_prefill=chunked_prefill_of(r),
        length_range_ratio=ratio,
        problem=problem,
        dataset=str(r.get("dataset", "")).strip(),
        prompts_cached=cached,
        prompts_cached_first=cached_first,
        prefix_caching=cached or cached_first > 0 or prefix_caching_of(r),
        async_scheduling=async_scheduling_of(r),
        scheduler_steps=server_flag(r, ("num-scheduler-steps",)),
        max_prefill_tokens=server_flag(r, PREFILL_INPUT_FLAGS),
        scheduler_recv_interval=server_flag(r, ("scheduler-recv-interval",)),
        sglang_piecewise_off=sglang_piecewise_off_flag(r),
        sglang_overlap_off=sglang_overlap_off_of(r, speculation),
        attention_dp_gate=attention_dp_gate_of(r),
        stream_interval=stream_interval_of(r),
        server_memory_share=server_memory_share(r),
        client=benchmark_client_of(r),
        assumed_client=assumed_client,
        offline_benchmark=offline_benchmark_of(r),
        speculation=speculation,
        expert_parallel=expert_parallel_of(r),
        parallelism=parallelism,
        prefill_chunk_divisor=sglang_attention_dp(r)[1] if parallelism == "dp-ep" else 1,
        dp_attention_ranks=sglang_attention_dp(r)[0] if parallelism != "dp-ep" else 1,
        pytorch_backend=pytorch_backend_of(r),
        trtllm_default_graphs=trtllm_serve_default_graphs(r),
        max_model_len=server_flag(r, ("max-model-len", "max_model_len")),
        burstiness=burstiness,
        **{c.replace("_ms", "_s"): v for c, v in percentiles.items()},
    )


def release_in_engine_cell(cell: str) -> str:
    """The release an ``engine`` cell states beside the engine's name ("vllm==0.15.0", "vLLM 0.15.0": "0.15.0", as
    ``planner.engines.profiles.parse_version`` reads it), for a row whose ``engine_version`` is blank; "" when it
    states none ("vllm")."""
    v = parse_version(str(cell or ""))
    if v is None:
        return ""
    text = ".".join(map(str, v.release))
    if v.pre is not None:
        text += f"{v.pre[0]}{v.pre[1]}"
    return text + (f".post{v.post}" if v.post is not None else "")


def burstiness_of(cell: Any) -> float:
    """A ``burstiness`` cell: the gamma shape factor of the run's arrival gaps at its rate, as ``vllm bench serve
    --burstiness`` takes it (1, or blank: Poisson; below 1 burstier; inf: evenly spaced). ValueError naming the cell for
    anything that is not a number above 0."""
    text = str(cell if cell is not None else "").strip()
    if not text:
        return 1.0
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not x > 0:  # NaN, 0 and negatives
        raise ValueError(
            f"burstiness {text[:20]!r}: give the gamma shape of the arrival gaps above 0 (1 or blank: Poisson, below "
            "1 burstier, as vllm bench serve --burstiness)"
        )
    return x


#: A serving run's percentile columns, milliseconds, as ``vllm bench serve`` and ``sglang.bench_serving`` print them.
PERCENTILE_COLUMNS = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms")
#: The p90 and p95 columns a user's file may add (``vllm bench serve --metric-percentiles 90,95,99``), compared as the
#: others are (trial 24 F11); the shipped files publish none.
TAIL_PERCENTILE_COLUMNS = ("ttft_p90_ms", "ttft_p95_ms", "tpot_p90_ms", "tpot_p95_ms", "itl_p90_ms", "itl_p95_ms")


def mean_length(
    value: Any, what: str, dataset: str, which: int, client: str = "vllm", num_prompts: int | None = None
) -> int | None:
    """A length cell as serving benchmarks print it: a run's mean (207.5 tokens: rounded to whole tokens, at least 1,
    ``planner.serving.load.fixed_length_tokens``),
    or, blank, the named dataset's published mean as ``client``'s defaults draw it
    (``planner.serving.load.dataset_statistics``; ``which``: 0 prompt, 1 output); where the client is vLLM's and the
    dataset ships its sample (ShareGPT: what ``vllm bench serve --dataset-name sharegpt`` sends, as ``planner plan
    --dataset sharegpt`` replays it), the mean of the sample's first ``num_prompts`` requests (all of it when not
    stated), so the run replays the sample unscaled (trial 24 F3: the paper's OPT means, 161 / 338, scaled it);
    None when blank with no dataset named or none published; ValueError naming ``what`` for text, a negative number
    or a dataset not accepted."""
    x = _token_length(value, what)
    if math.isnan(x):
        if str(value or "").strip():
            raise ValueError(f"{what} {value!r} is not a number")
        named = dataset_in(dataset) or (str(dataset).split() or [""])[0].strip(",;()")
        if not named:
            return None
        try:  # a name not accepted: the closest and every accepted one (a ValueError: the row's problem)
            d = dataset_statistics(named, client)
        except ValueError as exc:
            raise ValueError(f"{what} blank and {exc}") from None
        x = d.prompt_mean_tokens if which == 0 else d.output_mean_tokens
        if d.sample_file and client == "vllm":
            x = _sample_mean(d.sample_file, which, num_prompts)
        if x is None:
            return None  # not published (OpenOrca's prompts): the row must state it
    if x < 0 or not math.isfinite(x):
        raise ValueError(f"{what} {value!r} is not a number of tokens of 0 or more")
    return 0 if x == 0 else fixed_length_tokens(x)


def _sample_mean(sample_file: str, which: int, num_prompts: int | None) -> float:
    """The mean prompt (``which`` 0) or output (1) tokens of a shipped sample's first ``num_prompts`` requests, cycled
    past its end as a run of more sends it again (``planner.serving.load.dataset_lengths``); the whole sample's when
    ``num_prompts`` is not stated."""
    sample = dataset_sample(sample_file)
    n = num_prompts or len(sample)
    return sum(sample[i % len(sample)][which] for i in range(n)) / n


def _token_length(value: Any, what: str) -> float:
    """A length cell: "8k" (8,192), "1.3k" or "207.5" as ``planner.units.parse_token_count`` reads a mean length,
    else the cell's first number (``first_number``: "207.5 tokens"); NaN when blank or without a number."""
    if isinstance(value, str) and value.strip():
        try:
            return float(parse_token_count(value, whole=False))
        except ValueError:
            pass
    return first_number(value, what)


def async_scheduling_of(r: dict[str, str]) -> bool:
    """Whether the row's server command or description (its ``batching`` and ``notes`` cells) turns on async scheduling:
    the flag ``--async-scheduling``, or the words "async scheduling" not preceded by "no" or "without"."""
    text = command_cells(r).lower()
    if "--async-scheduling" in text:
        return True
    return any(
        not re.search(r"\b(no|without|disabled?)\s*$", text[: m.start()])
        for m in re.finditer(r"async(hronous)?[ -]scheduling", text)
    )


#: A ``prefix_cache`` cell saying only the run's first N prompts were warm ("warm: the first 80 prompts", then
#: anything: the reading's reasons)
WARM_FIRST = re.compile(r"warm:\s*(?:the\s+)?first\s+(\d[\d,]*)\s+prompts?\b")


def prefix_cache_of(cell: Any) -> bool:
    """Whether a ``prefix_cache`` cell says the run's prompts were served from the prefix cache.

    "warm": every prompt had been sent to the same server before, with prefix caching on (a sweep of rates that
    re-sends one fixed-seed sample: ``vllm bench serve`` and vLLM's CI suite draw the same prompts at each rate, and
    vLLM V1 caches prefixes by default); "cold", "none" or blank: each prompt computed; "warm: the first N prompts
    ..." (``warm_prompts_of``): False here, those N warm. Other text: ValueError.
    """
    text = str(cell or "").strip().lower()
    if text in ("", "cold", "none", "off"):
        return False
    if text == "warm":
        return True
    if warm_prompts_of(cell):
        return False
    raise ValueError(f"prefix_cache {cell!r} is not 'warm', 'cold' or 'warm: the first N prompts'")


def warm_prompts_of(cell: Any) -> int:
    """N where a ``prefix_cache`` cell says only the run's first N prompts were in the prefix cache ("warm: the first
    80 prompts (an earlier run of the sweep sent them)": a fixed-seed sampler draws the same first prompts for every
    run of the same input length, so a sweep on one server finds the earlier runs' prompts cached); else 0."""
    hit = WARM_FIRST.match(str(cell or "").strip().lower())
    if hit is None:
        return 0
    n = int(hit.group(1).replace(",", ""))
    if n < 1:
        raise ValueError(f"prefix_cache {cell!r}: the first N prompts warm needs N of 1 or more")
    return n


#: Server flags that set the token budget of a step (vLLM, SGLang, TensorRT-LLM) and the requests in flight.
#: SGLang's input budget per prefill batch (``ServerArgs.max_prefill_tokens``, ``--max-prefill-tokens``; s139)
PREFILL_INPUT_FLAGS = ("max-prefill-tokens", "max_prefill_tokens")
TOKEN_BUDGET_FLAGS = ("max-num-batched-tokens", "chunked-prefill-size", "max_num_tokens", "max-num-tokens")
SEQUENCE_LIMIT_FLAGS = ("max-num-seqs", "max-running-requests", "max_batch_size", "max-batch-size")


#: Server flags that spread a MoE model's routed experts over the group, each with its group size where it takes one:
#: TensorRT-LLM ``trtllm-serve --ep_size N`` (without it ``MappingBase`` sets moe_tp = TP, moe_ep = 1: every expert
#: split), SGLang ``--ep-size N`` / ``--ep N`` / ``--expert-parallel-size N`` (default 1), vLLM
#: ``--enable-expert-parallel`` (the whole TP x DP group; off by default).
EXPERT_PARALLEL_SIZE_FLAG = re.compile(r"--(?:ep[-_]size|ep|expert[-_]parallel[-_]size)[ =]+(\d+)")
EXPERT_PARALLEL_SWITCH_FLAG = re.compile(r"--enable[-_]expert[-_]parallel\b")


def own_server_command(r: dict[str, str]) -> str:
    """The run's own server command: the ``notes`` cell's "serving script at line N: ..." segments (up to the next
    ";"), where it quotes one, else the ``batching`` and ``notes`` cells whole (a note may quote another section's
    command, e.g. gpustack's GLM-4.5-Air TP 2 row names the page's TP4 + EP4 conclusion)."""
    text = command_cells(r)
    own = re.findall(r"serving script at line \d+:\s*([^;]*)", text)
    return " ".join(own) if own else text


#: ``trtllm-serve`` told to serve with the PyTorch backend (the 0.x line's ``--backend pytorch``; 1.0 made it the
#: default), in a row's server command.
PYTORCH_BACKEND_FLAG = re.compile(r"trtllm-serve\b[^;]*?--backend[ =]pytorch\b")


def trtllm_serve_default_graphs(r: dict[str, str]) -> bool:
    """Whether the row's server command (``batching`` / ``notes``) is a ``trtllm-serve`` that sets no CUDA graphs of
    its own (no ``cuda_graph_config`` and no ``--extra_llm_api_options`` file that could): its release's default
    graphs."""
    text = command_cells(r)
    return "trtllm-serve" in text and not re.search(r"cuda_graph|extra_llm_api_options|--config\b", text)


def pytorch_backend_of(r: dict[str, str]) -> bool:
    """Whether the row's server command (``batching`` / ``notes``) runs ``trtllm-serve --backend pytorch``."""
    return bool(PYTORCH_BACKEND_FLAG.search(command_cells(r)))


def expert_parallel_of(r: dict[str, str]) -> bool:
    """Whether the run spread its routed experts over more than one GPU: an ``expert_parallel_size`` cell above 1, or
    the row's own server command (``own_server_command``) with an expert-parallel size above 1 or vLLM's
    ``--enable-expert-parallel``. A command without them ran every expert split over the tensor-parallel group."""
    try:
        if (whole_number(r.get("expert_parallel_size"), "expert_parallel_size", 1) or 1) > 1:
            return True
    except ValueError:
        pass
    command = own_server_command(r)
    if EXPERT_PARALLEL_SWITCH_FLAG.search(command):
        return True
    return any(int(n) > 1 for n in EXPERT_PARALLEL_SIZE_FLAG.findall(command))


#: A server command's memory share for the engine: vLLM ``--gpu-memory-utilization``, SGLang ``--mem-fraction-static``,
#: TensorRT-LLM ``--kv_cache_free_gpu_memory_fraction`` or its YAML's ``free_gpu_memory_fraction:``.
MEMORY_SHARE = re.compile(
    r"(?:--gpu[-_]memory[-_]utilization|--mem[-_]fraction[-_]static|--kv[-_]cache[-_]free[-_]gpu[-_]memory[-_]fraction)"
    r"[ =]([0-9]*\.?[0-9]+)|free_gpu_memory_fraction:\s*([0-9]*\.?[0-9]+)"
)


def server_memory_share(r: dict[str, str]) -> float | None:
    """The memory share the row's own server command (``own_server_command``) gives its engine (``MEMORY_SHARE``), a
    fraction above 0 and at most 1; None when not set (the engine's default)."""
    hit = MEMORY_SHARE.search(own_server_command(r))
    share = float(hit.group(1) or hit.group(2)) if hit else None
    return share if share is not None and 0.0 < share <= 1.0 else None


def server_flag(r: dict[str, str], flags: tuple[str, ...]) -> int | None:
    """The value of the first of ``flags`` in the row's server command (its ``batching``, ``notes`` or
    ``engine_version`` cell: XWQ72-001..006 give "--num-scheduler-steps 10" in the last, s129), if set."""
    text = " ".join(str(r.get(c, "")) for c in ("batching", "notes", "engine_version"))
    for flag in flags:
        hit = re.search(rf"--{re.escape(flag)}[ =](\d+)", text)
        if hit:
            return int(hit.group(1))
    return None


#: The SGLang server flags after which ``ServerArgs._handle_piecewise_cuda_graph`` turns the piecewise prefill graph off
#: (sglang 0.5.12 ``srt/server_args.py`` l.1301-1368: DP attention l.1312, torch compile l.1315, pipeline parallelism
#: l.1318, an all-to-all MoE backend l.1330, symmetric memory l.1357-1359; the flag itself l.737), as a command quotes
#: them, not where a note says a run went without one ("no --enable-dp-attention") (EXPERIMENT h-ttftp50).
SGLANG_PIECEWISE_OFF_FLAGS = re.compile(
    r"(?<!no )(?<!without )--(enable-symm-mem|enable-dp-attention|enable-torch-compile|disable-piecewise-cuda-graph)"
    r"(?![\w-])|--(moe-a2a-backend)[ =](?!none\b)\w+|--(pp-size|pipeline-parallel-size)[ =]0*[2-9]"
)


def sglang_piecewise_off_flag(r: dict[str, str]) -> str | None:
    """The first flag of the row's quoted server command (``command_cells``) that turns SGLang's piecewise prefill graph
    off (``SGLANG_PIECEWISE_OFF_FLAGS``), without its dashes; None where the row is not SGLang or sets none."""
    if str(r.get("engine", "")).strip().lower() != "sglang":
        return None
    hit = SGLANG_PIECEWISE_OFF_FLAGS.search(command_cells(r))
    return next(g for g in hit.groups() if g) if hit else None


#: The SGLang server flags after which its overlap scheduler is off: the flag itself, and pipeline parallelism above 1
#: (``ServerArgs._handle_pipeline_parallelism``: "Pipeline parallelism is incompatible with overlap schedule"), as a
#: row's command quotes them (EXPERIMENT h-sglhost).
SGLANG_OVERLAP_OFF_FLAGS = re.compile(
    r"(?<!no )(?<!without )--(disable-overlap-schedule)(?![\w-])|--(pp-size|pipeline-parallel-size)[ =]0*[2-9]"
)


def sglang_overlap_off_of(r: dict[str, str], speculation: Any = None) -> str | None:
    """What in an SGLang row's quoted server command (``command_cells``) turns its overlap scheduler off
    (``SGLANG_OVERLAP_OFF_FLAGS``, the flag's name without dashes), or "speculative" where the run decodes
    speculatively (``speculation``, or a speculative flag quoted) and does not set SGLANG_ENABLE_SPEC_V2: SGLang 0.4-0.5
    sets ``disable_overlap_schedule`` for EAGLE / EAGLE3 / STANDALONE ("Overlap scheduler is disabled because of using
    eagle speculative decoding", ``server_args.py``) unless that variable turns on the spec-v2 overlap path. None for
    another engine or where nothing does."""
    if str(r.get("engine", "")).strip().lower() != "sglang":
        return None
    text = command_cells(r)
    hit = SGLANG_OVERLAP_OFF_FLAGS.search(text)
    if hit:
        return next(g for g in hit.groups() if g)
    if (speculation is not None or SPECULATIVE_FLAG.search(text)) and "SGLANG_ENABLE_SPEC_V2=1" not in text:
        return "speculative"
    return None


def stream_interval_of(r: dict[str, str]) -> int | None:
    """The stream interval the row's server command or options set (``command_cells``): TensorRT-LLM's
    ``stream_interval: N`` in its extra LLM API options (the YAML InferenceX's notes quote, ``dsr1-fp8.yml``) or
    ``--stream_interval N``, SGLang's ``--stream-interval N``; None where none is given."""
    hit = re.search(r"(?<![\w-])(?:stream_interval:\s*|--stream[-_]interval[ =])(\d+)", command_cells(r))
    return int(hit.group(1)) if hit else None


#: TensorRT-LLM's ``AttentionDpConfig.timeout_iters`` default (tensorrt_llm/llmapi/llm_args.py: enable_balance
#: False, timeout_iters 50, batching_wait_iters 10), where a row turns balancing on without giving it.
ATTENTION_DP_TIMEOUT_ITERS_DEFAULT = 50


def attention_dp_gate_of(r: dict[str, str]) -> int | None:
    """``timeout_iters`` of a TensorRT-LLM row whose options (``command_cells``: the YAML InferenceX's notes quote)
    turn on both ``enable_attention_dp: true`` and ``attention_dp_config: {enable_balance: true, ...}``
    (``ATTENTION_DP_TIMEOUT_ITERS_DEFAULT`` where it is not given); None otherwise. ``batching_wait_iters`` (the
    wait once every rank has a context request) is not read: that every rank has one is not simulated."""
    if _engine_name(str(r.get("engine", "")))[0] != "tensorrt-llm":
        return None
    text = command_cells(r)
    config = re.search(r"attention_dp_config:\s*\{([^}]*)\}", text)
    if not ATTENTION_DP_SETTING.search(text) or not config:
        return None
    if not re.search(r"enable_balance:\s*true", config.group(1), re.I):
        return None
    hit = re.search(r"timeout_iters:\s*(\d+)", config.group(1))
    return int(hit.group(1)) if hit else ATTENTION_DP_TIMEOUT_ITERS_DEFAULT


def prefix_caching_of(r: dict[str, str]) -> bool:
    """Whether the row's server command (its ``batching``, ``notes`` or ``engine_version`` cell, as ``server_flag``
    reads it) turns prefix caching on (``--enable-prefix-caching``, ``--enable_prefix_caching``;
    ``--no-enable-prefix-caching`` is off)."""
    text = " ".join(str(r.get(c, "")) for c in ("batching", "notes", "engine_version"))
    return bool(re.search(r"(?<![\w-])--enable[-_]prefix[-_]caching\b(?![-_=])", text))


def chunked_prefill_of(r: dict[str, str]) -> bool | None:
    """True where the row's server command (its ``batching`` or ``notes`` cell) turns chunked prefill on
    (``--enable_chunked_prefill``, ``--enable-chunked-prefill``: TensorRT-LLM's ``trtllm-serve`` flag, off by default,
    ``get_llm_args(enable_chunked_prefill=False)`` in tensorrt_llm/commands/serve.py), else None: the engine's default
    (``planner.serving.simulate.chunked_prefill_default``)."""
    text = command_cells(r)
    return True if re.search(r"--enable[-_]chunked[-_]prefill\b(?![-_=])", text) else None


def benchmark_client_of(r: dict[str, str]) -> str:
    """The benchmark client named in the row's ``batching``, ``dataset`` or ``notes`` cell: "sglang" for
    ``sglang.bench_serving`` (whatever its ``--backend``: its own ShareGPT sampler, seed 1), "vllm" for ``vllm bench
    serve`` or vLLM's ``benchmark_serving.py`` (sampler seed 0 unless ``--seed`` says otherwise), else ""."""
    text = " ".join(str(r.get(c, "")) for c in ("batching", "dataset", "notes")).lower()
    if "sglang.bench_serving" in text or "sglang/bench_serving" in text:
        return "sglang"
    if re.search(r"--seed[ =]\d", text):
        return ""  # another sample than the default one
    return "vllm" if "vllm bench serve" in text or "benchmark_serving.py" in text else ""


#: The client an SGLang server's run is read with where the row names none: SGLang's own. Of the shipped rows of an
#: SGLang server that name their client (``catalogs/reference`` load_public.csv and perf_public.csv, 2026-12), six
#: source groups ran ``sglang.bench_serving`` (123 rows: the SGLang project's own, its cookbook, dstack, DataCrunch,
#: kvcached, a blog), one ``vllm bench serve`` (GPUStack's lab, 110 rows) and two InferenceX's ``benchmark_serving.py``
#: fork (83 rows, each stating its lengths); every other engine's, vLLM's.
SGLANG_DEFAULT_CLIENT = "sglang"


def dataset_client_of(r: dict[str, str]) -> tuple[str, bool]:
    """The client whose defaults a blank length of the row's named dataset is read with, and whether it was assumed
    (True: the row names none). Named: ``benchmark_client_of``'s, or vLLM's where the row names ``vllm bench serve`` or
    ``benchmark_serving.py`` with its own ``--seed`` (the sample differs, the defaults do not). Not named:
    ``SGLANG_DEFAULT_CLIENT`` for an SGLang server, else vLLM's (``planner.serving.load.DATASETS``)."""
    named = benchmark_client_of(r)
    text = " ".join(str(r.get(c, "")) for c in ("batching", "dataset", "notes")).lower()
    if not named and ("vllm bench serve" in text or "benchmark_serving.py" in text):
        named = "vllm"
    if named:
        return named, False
    engine, _ = _engine_name(str(r.get("engine", "")))
    return (SGLANG_DEFAULT_CLIENT if engine == "sglang" else "vllm"), True


def assumed_client_notes(where: str, rows: Sequence[DecodeRow]) -> list[str]:
    """One line per dataset and client for the rows of ``where`` whose blank lengths took a client's dataset defaults
    without naming the client (``DecodeRow.assumed_client``): which rows, the lengths read, and how to name the other
    client (trial 24 F10: an SGLang run of random read as vLLM's 1,024 / 128, 512 / 512 under SGLang's own)."""
    groups: dict[tuple[str, str], list[DecodeRow]] = {}
    for r in rows:
        if r.assumed_client:
            groups.setdefault((dataset_in(r.dataset) or r.dataset, r.assumed_client), []).append(r)
    lines = []
    for (dataset, client), group in groups.items():
        ids = [r.record_id for r in group]
        shown = ", ".join(ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
        other = "vllm" if client == "sglang" else "sglang"
        why = " (the client an SGLang server's published runs name most)" if client == "sglang" else ""
        first = group[0]
        lines.append(
            f"{where}: {len(ids)} run{'s' if len(ids) != 1 else ''} ({shown}) name{'' if len(ids) != 1 else 's'} no "
            f"benchmark client: dataset {dataset} read with {CLIENT_COMMANDS[client]}'s defaults{why} "
            f"({first.input_len:,} / {first.output_len:,} tokens); name {CLIENT_COMMANDS[other]} in batching or "
            f"notes for {'vLLM' if other == 'vllm' else 'SGLang'}'s, or give input_len and output_len"
        )
    return lines


def offline_benchmark_of(r: dict[str, str]) -> bool:
    """Whether the row's ``batching`` or ``notes`` cell says the run is ``trtllm-bench throughput`` without
    ``--streaming``: the flag is off by default (``tensorrt_llm/bench/benchmark/throughput.py``: ``@click.option(
    "--streaming", is_flag=True, default=False, ...)``) and the run sets ``post_proc_params = None  # No
    detokenization``, so no request's result is built before it finishes (``LlmRequest::createResult``)."""
    text = command_cells(r).lower()
    return "trtllm-bench throughput" in text and "--streaming" not in text


#: Benchmark clients whose "inter-token latency" is a request's (latency - TTFT) / (output tokens - 1), averaged over
#: requests: ``vllm bench serve``'s TPOT, not a gap between streamed chunks. AIPerf: ``InterTokenLatencyMetric``
#: ("Inter Token Latency = (Request Latency - Time to First Token) / (Output Sequence Length - 1)",
#: aiperf/metrics/types/inter_token_latency_metric.py, ai-dynamo/aiperf @db4f639, 2025-10-10); GenAI-Perf, which
#: AIPerf replaces: ``inter_token_latency = (req_latency_ns - ttft) / (total_output_token - 1)`` per request
#: (``LLMProfileDataParser._parse_requests``, genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py,
#: triton-inference-server/perf_analyzer @f7f17bf). NVIDIA's NIM benchmarking pages print AIPerf's averages as "ITL".
ITL_AS_TPOT_CLIENTS = ("aiperf", "genai-perf")


def itl_is_tpot(r: dict[str, str]) -> bool:
    """Whether the row's ``itl_ms`` is a TPOT: its ``batching``, ``statistic`` or ``notes`` cell names a client of
    ``ITL_AS_TPOT_CLIENTS`` (``sglang.bench_serving``'s and ``vllm bench serve``'s ITL are gaps between chunks)."""
    text = " ".join(str(r.get(c, "")) for c in ("batching", "statistic", "notes")).lower()
    return any(name in text for name in ITL_AS_TPOT_CLIENTS)


def range_ratio_of(r: dict[str, str]) -> float | None:
    """The ``--random-range-ratio`` of a random-dataset run in SGLang's reading (each length uniform in [r top, top]):
    the one its ``dataset`` cell states, else, where the cell names a dataset its client (``dataset_client_of``: named,
    else assumed from the engine) draws uniformly by default (``planner.serving.load.CLIENT_DATASETS``:
    ``sglang.bench_serving``'s random, ``--random-range-ratio 0.0``, each length 1 to its maximum), that default; else
    None (lengths at the run's means).

    ``vllm bench serve`` reads the flag around the length L instead, uniform in [L (1 - r), L (1 + r)] (vLLM pull
    request 16126, 2025-04, in 0.8.4 and the ``vllm bench serve`` command since; ``symmetric_range_ratio``): the same
    window in SGLang's reading is r' = (1 - r) / (1 + r) of a top L (1 + r), which is what is returned; r of 1 or
    more there is a ValueError (a window reaching 0, which vLLM refuses)."""
    cell = str(r.get("dataset", ""))
    hit = re.search(r"--random-range-ratio[ =]([0-9.]+)", cell)
    if hit:
        ratio = float(hit.group(1))
        if not symmetric_range_ratio(r):
            return ratio
        if not 0.0 <= ratio < 1.0:
            raise ValueError(f"--random-range-ratio {ratio:g} under vllm bench serve: use 0 to below 1")
        return (1.0 - ratio) / (1.0 + ratio)
    named = dataset_in(cell)
    client = dataset_client_of(r)[0]
    if named is None:
        return None
    d = dataset_statistics(named, client)
    return d.range_ratio if d.kind == "uniform" else None


def symmetric_range_ratio(r: dict[str, str]) -> bool:
    """Whether the row's lengths were drawn by ``vllm bench serve`` (named in its ``batching`` or ``notes`` cell),
    whose ``--random-range-ratio`` r draws each length uniform in [floor(L (1 - r)), ceil(L (1 + r))]
    (``vllm/benchmarks/datasets.py`` ``RandomDataset``, symmetric since pull request 16126), not in SGLang's
    [max(int(L r), 1), L] (``sglang.bench_serving``, and the ``benchmark_serving.py`` forks InferenceX and vLLM
    before 0.8.4 ran)."""
    return "vllm bench serve" in command_cells(r).lower()


def statistic_of(cell: str) -> str:
    """ "mean", "median" or "" (not said) from a ``statistic`` cell: its first word that names one.

    "median (ttft, itl, e2e)" is a median; "mean", "average" and AIPerf's averages are means; a cell saying the
    source does not say which is "". A blank cell is a mean (a static batch: every request alike).
    """
    text = str(cell or "").lower()
    if "does not say" in text or "not say mean" in text:
        return ""
    hit = re.search(r"\b(mean|median|average|averages|ave)\b", text)
    if hit is None:
        return "mean"
    return "median" if hit.group(1) == "median" else "mean"


#: Source groups (``perf_public.csv``'s labels) of documents whose rows sit in files without that column.
SOURCE_GROUPS = {
    "InternLM/lmdeploy/blob/3e391df4673326f79363eebe030876861a9b7090/docs/en/benchmark/a100_fp16.md": (
        "lmdeploy-a100-fp16-v0.1.0a1"
    ),
    "dennislee22/vLLM-benchmarking": "dennislee22-vllm-benchmarking",
}


def source_group_of(source: str) -> str:
    """The source group of a row from its address: one label per source document, so a fit can hold it out."""
    return next((group for part, group in SOURCE_GROUPS.items() if part in source), source)


def _engine_name(cell: str) -> tuple[str, str]:
    """The engine a row's ``engine`` cell names, and why the row is refused ("" when it is read):

    - empty: ``DEFAULT_ENGINE`` (vllm), the engine of a file without the column;
    - a cell that contains vllm, lmdeploy, tensorrt (or trt), sglang or the word nim, as tools write them
      ("LMDeploy (TurboMind)", "TensorRT-LLM", "NVIDIA NIM"): that engine;
    - a profile or an alias ``engine_profile`` takes ("turbomind", "seed": the name it stands for), or an engine
      with rows but no profile (``ENGINES_WITHOUT_PROFILE``: "mlc-llm", "llm-awq", predicted with the default
      profile): that name;
    - anything else is not predicted: "unknown engine 'vlm'; did you mean vllm?" (it was read as vLLM before).
    """
    text = cell.strip().lower()
    if not text:
        return DEFAULT_ENGINE, ""
    if re.search(r"\bnim\b", text):
        return "nim", ""  # NVIDIA NIM: its backend is chosen per profile (planner.engines.profiles.NIM_BACKEND)
    name = next((k for k in ("vllm", "lmdeploy", "tensorrt", "trt", "sglang") if k in text), None)
    if name is not None:
        return {"tensorrt": "tensorrt-llm", "trt": "tensorrt-llm"}.get(name, name), ""
    word = text.split(" ")[0].replace("_", "-")
    if word in ENGINES or word in ENGINE_ALIASES or word in ENGINES_WITHOUT_PROFILE:
        return ENGINE_ALIASES.get(word, word), ""  # "turbomind" -> "lmdeploy", as the fits and schedulers name it
    return word, str(UnknownNameError("engine", cell.strip(), ENGINE_CELL_NAMES))
