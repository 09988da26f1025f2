"""vLLM V0's decode graphs stop at ``max_seq_len_to_capture`` tokens of context (h-mi300b, issue 21; EXPERIMENT, off).

docs/hypotheses/mi300x-large-batch.md. In the ``vllm==0.7.3`` wheel: ``EngineArgs.max_seq_len_to_capture = 8192``
(``vllm/engine/arg_utils.py`` l.137, what ``vllm serve`` passes to ``ModelConfig``, which keeps
``min(it, max_model_len)``, ``vllm/config.py`` l.634-637), and V0's ``ModelInputForGPUBuilder._use_captured_graph``
(``vllm/worker/model_runner.py`` l.762-770) replays a graph only when ``max_decode_seq_len <=
max_seq_len_to_capture``: one sequence past 8,192 tokens makes the whole decode step eager. V0 is the default engine
before vLLM 0.8.0.

A fixed-length closed-loop run's requests start together and stay in step, so the share of decode steps that run
eagerly is the share of a request's decode steps past the limit, ``eager_share`` (the ``:spread`` ablation: requests
spread evenly over their progress, a step of ``batch`` sequences holding one past the limit with probability
1 - (1 - share) ** batch). The eager step pays the planner's SGLang launch surplus per layer (s123,
``planner.engines.profiles.SGLANG_EAGER_LAYER_S`` / ``SGLANG_EAGER_MOE_LAYER_S``; as ``PYTORCH_EAGER_COSTS`` borrows
it where an engine's own is not published), applied as an every-step eager profile at the share x that surplus.
"""

from __future__ import annotations

from planner.engines.profiles import (
    NO_DECODE_GRAPH_BATCH,
    SGLANG_EAGER_LAYER_S,
    SGLANG_EAGER_MOE_LAYER_S,
    EngineProfile,
    _copy_with,
    _engine_name,
    parse_version,
)

#: EXPERIMENT (h-mi300b), off: read at call time (``bench/switch_bootstrap.py vllm-v0-long-context-eager``). On: a
#: published row served by vLLM before 0.8.0 whose sequences pass ``VLLM_V0_MAX_SEQ_LEN_TO_CAPTURE`` pays the eager
#: surplus on its expected share of decode steps (``with_vllm_v0_long_context_eager``).
VLLM_V0_LONG_CONTEXT_EAGER = False
#: The ablation ``vllm-v0-long-context-eager:spread``: the share of steps holding one sequence past the limit when the
#: requests are spread evenly over their progress, 1 - (1 - share) ** batch, in place of the in-step share.
VLLM_V0_EAGER_SPREAD = False
#: ``EngineArgs.max_seq_len_to_capture`` of vLLM 0.7.3 (``vllm/engine/arg_utils.py`` l.137).
VLLM_V0_MAX_SEQ_LEN_TO_CAPTURE = 8192
#: V1 is vLLM's default engine from 0.8.0; releases below it decode in V0.
VLLM_V0_BEFORE = (0, 8, 0)


def eager_share(input_len: int, output_len: int, limit: int = VLLM_V0_MAX_SEQ_LEN_TO_CAPTURE) -> float:
    """The share of a request's decode steps whose sequence is longer than ``limit`` tokens: the decode step of the
    j-th token after the first (j = 1 .. output - 1) runs at input + j tokens, eager past ``limit``; 0 for a request
    that never passes it."""
    steps = output_len - 1
    if steps <= 0:
        return 0.0
    return min(1.0, max(0, input_len + steps - limit) / steps)


def with_vllm_v0_long_context_eager(
    profile: EngineProfile, engine: str, version: str, input_len: int, output_len: int, batch: int
) -> EngineProfile:
    """``profile`` whose every decode step pays ``eager_share`` x the eager launch surplus per layer (an every-step
    eager profile, ``decode_graph_max_batch`` below one sequence), under ``VLLM_V0_LONG_CONTEXT_EAGER``, for a vLLM
    release below ``VLLM_V0_BEFORE`` whose requests pass ``VLLM_V0_MAX_SEQ_LEN_TO_CAPTURE``. With
    ``VLLM_V0_EAGER_SPREAD`` the share is 1 - (1 - share) ** batch. Other rows, versions that do not parse, and a
    profile that already models eager steps keep the profile."""
    if not VLLM_V0_LONG_CONTEXT_EAGER or _engine_name(engine) != "vllm" or profile.decode_graph_max_batch:
        return profile
    v = parse_version(version)
    if v is None or (tuple(v.release) + (0, 0))[:3] >= VLLM_V0_BEFORE:
        return profile
    share = eager_share(int(input_len), int(output_len))
    if share <= 0.0:
        return profile
    if VLLM_V0_EAGER_SPREAD:
        share = 1.0 - (1.0 - share) ** max(1, int(batch))
    return _copy_with(
        profile,
        decode_graph_max_batch=NO_DECODE_GRAPH_BATCH,
        eager_layer_s=share * SGLANG_EAGER_LAYER_S,
        eager_moe_layer_s=share * SGLANG_EAGER_MOE_LAYER_S,
    )
