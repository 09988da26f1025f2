"""SGLang's memory defaults per release: ``mem_fraction_static`` from the GPU's memory and the group, as its source
computes it when the flag is not given. Pure functions of numbers or numpy arrays.

SGLang sizes its KV pool as ``mem_fraction_static`` x the memory free before the weights load, less what is
resident after it (``_profile_available_bytes``: "KV pool budget = currently-free GPU memory minus the non-static
runtime slack (pre_model_load_memory * (1 - mem_fraction_static))", 0.5.23
``sglang/srt/mem_cache/kv_cache_configurator.py`` line 2990): the planner's "total" budget with the fraction as
the utilization. The fraction itself is computed from ``gpu_mem``, the total memory nvidia-smi reports in MiB
(``get_device_memory_capacity``), and the tensor-parallel size. Each generation of that rule below names the
release files it was read from (wheels from PyPI, ``pip download sglang==<version> --no-deps``):

- 0.4.0 (0.4.0 ``sglang/srt/server_args.py`` lines 157-168; the same in 0.4.3, lines 195-205, and 0.4.5, lines
  232-243): 0.88 / 0.87 / 0.85 / 0.81 / 0.79 for TP 1 / 2 / 4 / 8 / 16 on every GPU, whatever its memory.
- 0.4 (0.4.6.post5 ``sglang/srt/server_args.py`` lines 247-268): that table for TP x PP on GPUs of 80 GiB or less,
  0.88 above; above 96 GiB raised to min(f + 48 GiB x (1 - f) / M, (M - 18 GiB) / M).
- 0.5.1 (``server_args.py`` lines 354-395): M - reserved, reserved by GPU class: (2.8 + p / 10) GiB under
  35 GiB, (9.5 + p / 2) GiB under 90, (12 + p / 2) GiB under 160, 32 GiB above (p = TP x PP; +4 GiB with
  DP attention).
- 0.5.3 (0.5.3 ``server_args.py`` lines 542-675, the same in 0.5.3.post3 and 0.5.4; 0.5.3rc0 still has 0.5.1's):
  0.5.5's form below, with 16 decode graphs (not 24) for the 20-35 GiB class at TP < 4 (0.5.3 line 584, 0.5.4 line 695;
  0.5.4.post2 has 24, line 703: 16 MiB, not modelled).
- 0.5.5 (``server_args.py`` lines 689-822): reserved = 512 MiB + max(chunked_prefill_size, 2048) x 1.5 MiB +
  cuda_graph_max_bs x 2 MiB + p / 8 GiB (+ DP attention: max_bs x dp x 3 MiB, x 1.5 more above 300), at least
  10 GiB on GPUs above 60 GiB; f = round((M - reserved) / M, 3). chunked_prefill_size and cuda_graph_max_bs by
  GPU class (``GPU_CLASSES``).
- 0.5.10 (0.5.10 ``server_args.py`` lines 1283-1314; the same in 0.5.15, lines 3625-3673): + the prefill CUDA
  graphs, on by default: 8 MiB per captured token count (1.5 GiB for MLA models) before the 10 GiB floor.
- 0.5.20 (0.5.20 and 0.5.23 ``sglang/srt/arg_groups/memory_hook.py``: ``handle_gpu_memory_settings`` lines
  47-345, ``reserve_for_graph_mb`` lines 357-399): the same, with the 20-35 GiB class (A10, RTX 4090 / 5090)
  raised to chunked_prefill_size 4,096 and cuda_graph_max_bs 48 (160 at TP >= 4).

A release between two read ones follows the older (``sglang_rule_for_version`` says so); a later one the newest.
"""

from __future__ import annotations

import re

import numpy as np

from planner.errors import UnknownNameError

MiB = 2**20
#: The rules by first release they were read in, newest last.
SGLANG_RULES: tuple[tuple[tuple[int, ...], str], ...] = (
    ((0, 4), "sglang-0.4.0"),
    ((0, 4, 6), "sglang-0.4"),
    ((0, 5, 1), "sglang-0.5.1"),
    ((0, 5, 3), "sglang-0.5.3"),
    ((0, 5, 5), "sglang-0.5.5"),
    ((0, 5, 10), "sglang-0.5.10"),
    ((0, 5, 20), "sglang-0.5.20"),
)
#: The releases each rule was read in.
READ_IN = {
    "sglang-0.4.0": "0.4.0, 0.4.3 and 0.4.5",
    "sglang-0.4": "0.4.6.post5",
    "sglang-0.5.1": "0.5.1 and 0.5.2",
    "sglang-0.5.3": "0.5.3 and 0.5.4",
    "sglang-0.5.5": "0.5.5",
    "sglang-0.5.10": "0.5.10 and 0.5.15",
    "sglang-0.5.20": "0.5.20 and 0.5.23",
}
#: The newest release read here (0.5.23, December 2026); a later one takes the newest rule.
NEWEST_READ_SGLANG = (0, 5, 23)

#: (GPU memory below, MiB; chunked_prefill_size; cuda_graph_max_bs at TP < 4; at TP >= 4), 0.5.5's table
#: (``server_args.py`` lines 690-770: "T4, 4080", "A10, 4090, 5090", "A100 (40GB), L40", "H100, A100",
#: "H20, H200", "B200, MI300").
GPU_CLASSES_055 = (
    (20 * 1024, 2048, 8, 8),
    (35 * 1024, 2048, 24, 80),
    (60 * 1024, 4096, 32, 160),
    (90 * 1024, 8192, 256, 512),
    (160 * 1024, 8192, 256, 512),
    (float("inf"), 16384, 512, 512),
)
#: 0.5.3-0.5.4's table: 16 decode graphs at 20-35 GiB under TP 4 (0.5.3 ``server_args.py`` lines 566-623, 0.5.4
#: line 695).
GPU_CLASSES_053 = (GPU_CLASSES_055[0], (35 * 1024, 2048, 16, 80), *GPU_CLASSES_055[2:])
#: 0.5.20's table (``memory_hook.py`` lines 89-170): the 20-35 GiB class takes 4,096 tokens and 48 / 160 graphs.
GPU_CLASSES_0520 = (GPU_CLASSES_055[0], (35 * 1024, 4096, 48, 160), *GPU_CLASSES_055[2:])


#: SGLang's default ``chunked_prefill_size`` by rule: (GPU memory below, MiB; tokens), smallest class first. It is the
#: token budget of a prefill batch: ``PrefillAdder`` takes each added request's tokens off ``rem_chunk_tokens`` and
#: cuts the request that overruns it (0.5.3 ``managers/schedule_policy.py`` l.431-432, 528-543), and
#: ``max_prefill_tokens`` is 16,384 in every release read, never below the default chunk (a command's larger
#: ``--chunked-prefill-size`` leaves it at 16,384 for whole prompts: ``planner.serving.simulate.
#: SGLANG_MAX_PREFILL_TOKENS``, s133). Read in the wheels:
#: - 0.4.0-0.4.x: 2,048 under 25,000 MiB, else 8,192 (0.4.0 ``server_args.py`` l.171-175, 0.4.3 l.209-212, 0.4.5
#:   l.247-250; 0.4.6.post5 l.271-277, 16,384 only for a disaggregated server).
#: - 0.5.1-0.5.3rc0 (the ``sglang-0.5.1`` rule): 2,048 under 35 GiB, 8,192 under 160 GiB, else 16,384 (0.5.1
#:   l.407-413, 0.5.2 l.510-516, 0.5.3rc0 l.542-548).
#: - 0.5.3-0.5.19: the GPU classes of ``GPU_CLASSES_055``, 4,096 for 35-60 GiB ("A100 (40GB), L40") (0.5.3
#:   ``_handle_gpu_memory_settings`` l.566-623, 0.5.3.post3 l.623-700, 0.5.4.post2 l.675-752, 0.5.5 l.690-767, 0.5.7
#:   l.827-884, 0.5.10 l.1166-1222, 0.5.15 l.3497-3550).
#: - 0.5.20 on: ``GPU_CLASSES_0520``, 4,096 for 20-35 GiB as well (0.5.20 ``arg_groups/memory_hook.py`` l.88-170,
#:   0.5.23 l.89-171).
CHUNK_CLASSES_04 = ((25_000, 2048), (float("inf"), 8192))
CHUNK_CLASSES: dict[str, tuple[tuple[float, int], ...]] = {
    "sglang-0.4.0": CHUNK_CLASSES_04,
    "sglang-0.4": CHUNK_CLASSES_04,
    "sglang-0.5.1": ((35 * 1024, 2048), (160 * 1024, 8192), (float("inf"), 16384)),
    "sglang-0.5.3": tuple((below, tokens) for below, tokens, _, _ in GPU_CLASSES_053),
    "sglang-0.5.5": tuple((below, tokens) for below, tokens, _, _ in GPU_CLASSES_055),
    "sglang-0.5.10": tuple((below, tokens) for below, tokens, _, _ in GPU_CLASSES_055),
    "sglang-0.5.20": tuple((below, tokens) for below, tokens, _, _ in GPU_CLASSES_0520),
}
#: The request slots an SGLang server keeps when --max-running-requests is not given: min(clip(KV tokens / context x
#: 512, 2,048, 4,096), KV tokens // 2), + 1 slot in the 0.4 releases (their ``ReqToTokenPool`` holds max_num_reqs + 1).
#: 0.4.0 ``model_executor/model_runner.py`` l.505-513 and 517, ``managers/tp_worker.py`` l.92-99; 0.4.6.post5
#: model_runner.py l.904; 0.5.3 model_runner.py l.1431-1439, tp_worker.py l.144-152; 0.5.7
#: ``model_runner_kv_cache_mixin.py`` l.278-286, model_runner.py l.524-532; 0.5.10 mixin l.844-851; 0.5.20
#: ``mem_cache/kv_cache_configurator.py`` l.2267-2276; 0.5.23 l.3123-3132.
REQUEST_POOL_EXTRA = {"sglang-0.4.0": 1, "sglang-0.4": 1}


def sglang_chunked_prefill_size(gpu_memory_mib: float, rule: str = "sglang-0.5.20") -> int:
    """SGLang's default ``chunked_prefill_size`` under ``rule`` on a GPU of ``gpu_memory_mib`` (nvidia-smi's total,
    MiB): the first class of ``CHUNK_CLASSES[rule]`` the memory is below. H100 (81,559 MiB) 8,192 under every rule;
    an L40S (46,068 MiB) 8,192 under 0.4 and 0.5.1, 4,096 from 0.5.3; a B200 8,192 under 0.4, 16,384 from 0.5.1."""
    if rule not in CHUNK_CLASSES:
        raise UnknownNameError("SGLang rule", rule, list(CHUNK_CLASSES))
    return next(tokens for below, tokens in CHUNK_CLASSES[rule] if gpu_memory_mib < below)


def sglang_max_running_requests(kv_tokens: float, context_len: int, rule: str = "sglang-0.5.20") -> int:
    """SGLang's default request slots with ``kv_tokens`` in its KV pool and a context length of ``context_len``:
    min(clip(kv_tokens / context_len x 512, 2,048, 4,096) (+ 1 under the 0.4 rules), kv_tokens // 2)
    (``REQUEST_POOL_EXTRA``'s comment cites each release). 200,000 tokens at 131,072: 2,048; 3,000 tokens: 1,500."""
    pool = min(max(int(kv_tokens / max(context_len, 1) * 512), 2048), 4096) + REQUEST_POOL_EXTRA.get(rule, 0)
    return int(min(pool, kv_tokens // 2))


def prefill_graph_sizes(max_tokens: int) -> int:
    """How many prefill CUDA graphs SGLang captures up to ``max_tokens`` (``generate_prefill_cuda_graph_batch_sizes``,
    0.5.23 ``sglang/srt/arg_groups/cuda_graph_hook.py`` lines 480-497): 4-32 by 4, 48-256 by 16, 288-512 by 32,
    576-1,024 by 64, 1,280-4,096 by 256, then by 512. 8,192 tokens: 58 graphs."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, int(max_tokens) + 1, 512),
    ]
    return sum(1 for s in sizes if s <= max_tokens)


def gpu_class_defaults(gpu_memory_mib, tp_size, rule: str = "sglang-0.5.20"):
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang picks for a GPU of ``gpu_memory_mib`` and a TP size."""
    table = {"sglang-0.5.20": GPU_CLASSES_0520, "sglang-0.5.3": GPU_CLASSES_053}.get(rule, GPU_CLASSES_055)
    mem = np.asarray(gpu_memory_mib, dtype=float)
    tp = np.asarray(tp_size, dtype=float)
    chunk = np.full(np.broadcast_shapes(mem.shape, tp.shape), np.nan)
    graphs = chunk.copy()
    for below, tokens, small, large in reversed(table):
        here = mem < below
        chunk = np.where(here, tokens, chunk)
        graphs = np.where(here, np.where(tp < 4, small, large), graphs)
    return chunk, graphs


def sglang_reserved_mib(gpu_memory_mib, tp_size, rule: str = "sglang-0.5.20", dp_attention_size=0, mla=False):
    """MiB SGLang keeps out of ``mem_fraction_static`` (0.5.1 and later; module docstring, rule by rule)."""
    mem = np.asarray(gpu_memory_mib, dtype=float)
    p = np.asarray(tp_size, dtype=float)
    dp = np.asarray(dp_attention_size, dtype=float)
    if rule == "sglang-0.5.1":
        gib = np.where(
            mem < 35 * 1024,
            2.8 + p / 10,
            np.where(mem < 90 * 1024, 9.5 + p / 2, np.where(mem < 160 * 1024, 12 + p / 2, 32)),
        )
        return gib * 1024 + np.where(dp > 1, 4 * 1024, 0.0)
    chunk, graphs = gpu_class_defaults(mem, p, rule)
    reserved = 512 + np.maximum(chunk, 2048) * 1.5 + graphs * 2 + p / 8 * 1024
    reserved = reserved + np.where(dp > 1, graphs * dp * 3 + np.where(graphs > 300, graphs * dp * 1.5, 0.0), 0.0)
    if rule in ("sglang-0.5.10", "sglang-0.5.20"):  # prefill CUDA graphs, on by default on CUDA
        max_tokens = np.minimum(chunk, 8192) if mla else chunk
        per_graph = np.vectorize(prefill_graph_sizes)(max_tokens) * 8.0
        reserved = reserved + (1.5 * 1024 if mla else per_graph)
    return np.where(mem > 60 * 1024, np.maximum(reserved, 10 * 1024), reserved)


def sglang_mem_fraction_static(gpu_memory_mib, tp_size, rule: str = "sglang-0.5.20", dp_attention_size=0, mla=False):
    """The default ``mem_fraction_static``: 0.4's table, else round((M - reserved) / M, 3) (``sglang_reserved_mib``).

    H100 (81,559 MiB per nvidia-smi) at TP 1 under 0.5.23: 512 + 8,192 x 1.5 + 256 x 2 + 128 + 58 x 8 = 13,904 MiB
    reserved, f = 0.830; at TP 8: 512 + 12,288 + 1,024 + 1,024 + 464 = 15,312 MiB, f = 0.812.
    """
    mem = np.asarray(gpu_memory_mib, dtype=float)
    p = np.asarray(tp_size, dtype=float)
    if rule in ("sglang-0.4.0", "sglang-0.4"):
        table = np.where(p >= 16, 0.79, np.where(p >= 8, 0.81, np.where(p >= 4, 0.85, np.where(p >= 2, 0.87, 0.88))))
        if rule == "sglang-0.4.0":  # no memory condition before 0.4.6
            return float(table) if table.ndim == 0 else np.broadcast_to(table, np.broadcast(mem, p).shape).copy()
        f = np.where(mem <= 81920, table, 0.88)
        raised = np.minimum(f + 48 * 1024 * (1 - f) / mem, (mem - 18 * 1024) / mem)
        out = np.where(mem > 96 * 1024, raised, f)
    else:
        out = np.round((mem - sglang_reserved_mib(mem, p, rule, dp_attention_size, mla)) / mem, 3)
    return float(out) if out.ndim == 0 else out


def sglang_rule_for_version(version: tuple[int, ...], release_candidate: bool = False) -> tuple[str, str]:
    """The rule of an SGLang release, and why: the newest rule read at or before it; a note when it is newer than
    every release read or falls between two. A ``release_candidate`` of a version ("0.5.3rc0") comes before that
    release, so it takes the rule in force before it (0.5.3rc0 ``server_args.py`` lines 498-548 still run 0.5.1's)."""
    if version < SGLANG_RULES[0][0]:
        raise UnknownNameError("SGLang version", ".".join(map(str, version)), ["0.4 or later"])
    rule = next(r for s, r in reversed(SGLANG_RULES) if version > s or (version == s and not release_candidate))
    text = ".".join(map(str, version))
    if version[:3] > NEWEST_READ_SGLANG:
        newest = ".".join(map(str, NEWEST_READ_SGLANG))
        return rule, (
            f"SGLang {text} is newer than the newest release read here ({newest}): mapped to the newest rule, {rule}; "
            "its defaults may have moved since"
        )
    read = READ_IN[rule]
    if text in re.split(r", | and ", read) and not release_candidate:
        return rule, f"SGLang {text} -> {rule} (read in {read})"
    if release_candidate:
        return rule, f"SGLang {text} release candidate -> {rule}: the rule in force before {text} (read in {read})"
    return rule, f"SGLang {text} -> {rule}: not read itself; the rule of the nearest older release read ({read})"


def default_memory_fraction(rule: str, gpu_memory_bytes, gpus, attention_ranks=1.0, mla=False):
    """The engine's default memory utilization on each scenario's GPU and group under ``rule`` (an
    ``EngineProfile.memory_fraction_rule``): SGLang's mem_fraction_static of ``gpu_memory_bytes`` (the memory the
    engine sees, taken for nvidia-smi's total: the two differ by under 1%, 0.001 in the fraction), TP size =
    ``gpus``, DP attention over ``attention_ranks``."""
    if not rule.startswith("sglang"):
        raise ValueError(f"unknown memory fraction rule {rule!r}")
    return sglang_mem_fraction_static(np.asarray(gpu_memory_bytes, dtype=float) / MiB, gpus, rule, attention_ranks, mla)


#: Catalog model families whose sliding-window layers SGLang keeps in one pool with the full-attention layers (every
#: layer holds every token, ``max_total_num_tokens`` as profiled), by rule; other models with both kinds of layer get
#: the split pools of ``planner.model.memory.sglang_full_pool_factor``. Read in the wheels:
#: - 0.5.1-0.5.9 (0.5.1 ``sglang/srt/server_args.py`` lines 2227-2274 and 2283-2295, 0.5.3 lines 734-781 and 793-804,
#:   0.5.4.post2 lines 915-970 and 994-1005, 0.5.5 lines 942-997 and 1017-1029): the ``GptOssForCausalLM`` branch of
#:   ``_handle_model_specific_adjustments`` ends in ``self.disable_hybrid_swa_memory = True`` whatever the backend, and
#:   Gemma2/Gemma3/Gemma3n ("Disable hybrid SWA memory for {model_arch} as it is not yet supported"); with the flag set
#:   ``ModelRunner`` never sets ``is_hybrid`` and so never calls ``set_num_token_hybrid`` (0.5.5
#:   ``model_executor/model_runner.py`` lines 400-408 and 1622-1624).
#: - 0.5.10-0.5.19 (0.5.10 ``configs/model_config.py`` lines 361-364 and 1438-1448): pools split only for the
#:   architectures of ``is_hybrid_swa_model`` (Llama 4, gpt-oss, MiMo-V2-Flash, Step-3.5), so gpt-oss splits and Gemma
#:   does not; the GptOss branch (``server_args.py`` from line 1697) no longer sets the flag.
#: Rules not read for this (0.4.x, 0.5.20 on) keep the split pools.
SGLANG_SINGLE_POOL_FAMILIES: dict[str, frozenset[str]] = {
    "sglang-0.5.1": frozenset({"gpt-oss", "Gemma 2", "Gemma 3"}),
    "sglang-0.5.3": frozenset({"gpt-oss", "Gemma 2", "Gemma 3"}),
    "sglang-0.5.5": frozenset({"gpt-oss", "Gemma 2", "Gemma 3"}),
    "sglang-0.5.10": frozenset({"Gemma 2", "Gemma 3"}),
}


def sglang_splits_sliding_pool(rule: str, family: str) -> bool:
    """Whether SGLang under ``rule`` (an ``EngineProfile.memory_fraction_rule``) gives a model of catalog ``family``
    with sliding-window and full layers a separate sliding pool (``SGLANG_SINGLE_POOL_FAMILIES`` names the releases
    where it does not)."""
    return str(family) not in SGLANG_SINGLE_POOL_FAMILIES.get(str(rule), frozenset())
