"""Main against one off-by-default switch, paired over resamples of whole sources: how likely the switch makes each
headline median (and worst) worse.

    PYTHONPATH=. python bench/switch_bootstrap.py first-token-decode-step
    PYTHONPATH=. python bench/switch_bootstrap.py serial-front-end --bootstrap 2000
    PYTHONPATH=. python bench/switch_bootstrap.py release-batching --keep /tmp/switch-figures   # reuse main's figures

Switches (each off on main; docs/history.md says what each does and why it was not shipped):

- ``first-token-decode-step``: LMDeploy before 0.1.0a2 samples the first token in a decode step
  (``planner.accuracy.predict.FIRST_TOKEN_FROM_DECODE_STEP``, s106). The shipped factors are not refitted here (s106's
  held-out figures were, with the rule on; ``--refit`` moves them by what the rule moves the fit on all rows);
  leave-one-source-out refits every fold, so its figures are the rule's either way.
- ``serial-front-end``: one front-end process preparing requests in turn (``planner.serving.benchmark.
  SERIAL_FRONT_END_S`` at ``FRONTEND_SERIAL_S``, s112; the front-end votes re-solved with it, as ``--serial-front-end``).
- ``release-batching``: each vLLM row's release batching defaults (``planner.engines.profiles.with_release_batching``,
  s107; as ``bench/vllm_batching_releases.py``).
- ``published-host-cost``: each row's per-sequence host cost is its engine loop's published one
  (``planner.engines.profiles.PUBLISHED_HOST_COST``, ``with_published_host_cost``, s118): vLLM V1 21.5 us summed
  (0.8-0.13) or hidden, max(device, host) (0.14+ or --async-scheduling, SGLang 0.4+, TensorRT-LLM 1.x).
- ``expert-parallel``: a row whose own server command spreads the experts (``--ep_size``, ``--ep-size``,
  ``--enable-expert-parallel``) is priced with whole experts on each GPU (``planner.engines.profiles.
  EXPERT_PARALLEL_FROM_ROWS``, ``with_expert_parallel``, s126); ``expert-parallel:trtllm`` (ablation): on TensorRT-LLM
  1.x's rows only (measured as ``trtllm-moe-layout:trtllm`` before TensorRT-LLM's own grouped-GEMM halves shipped).
- ``prefill-attention-rising``: prefill attention timed at a rate that rises with the prompt (``bench/
  kernel_extract.py``'s rising fit, ``planner.engines.kernel_curves.PREFILL_ATTENTION_RISING``, s182), not one rate.
- ``sglang-dp-attention``: an SGLang row whose server command turns on ``--enable-dp-attention`` runs as data-parallel
  attention ("dp-ep"), its ranks and prefill chunk as its release sets them (``planner.accuracy.published.
  SGLANG_DP_ATTENTION``, ``sglang_attention_dp``, s183); it was read as tensor parallel.
- ``sglang-dp-attention-kv``: an SGLang row whose release runs attention data parallelism, predicted as tensor
  parallel, keeps its ranks' own KV pools and request slots (``planner.accuracy.predict.SGLANG_DP_ATTENTION_KV_POOL``,
  ``planner.serving.benchmark._dp_attention_pools``; docs/hypotheses/sglang-dp-attention-kv-pool.md, h-dsk042).
- ``trtllm-serve-eager``: a TensorRT-LLM 1.x row served by a plain ``trtllm-serve`` runs decode batches above 128
  (its default graphs' largest) eagerly, at SGLang's eager cost per layer (``planner.engines.profiles.
  TRTLLM_SERVE_EAGER_ABOVE_GRAPHS``, ``with_trtllm_serve_eager_decode``, s183).
- ``trtllm-graph-gaps``: as ``trtllm-serve-eager``, and the decode batches between its default graphs (33-63,
  65-127: no graph without ``enable_padding``) run eagerly too (``planner.engines.profiles.
  TRTLLM_SERVE_EAGER_GRAPH_GAPS``; docs/hypotheses/trtllm-graph-gaps.md, h-p50).
- ``trtllm-own-attention``: TensorRT-LLM's profiles read decode attention at the byte rates of TensorRT-LLM's own
  measured tables (``planner.engines.kernel_curves.TENSORRT_LLM_OWN_ATTENTION``, s186), not vLLM's 16-bit rate.
- ``moe-read-rate``: experts whose weights compute at 8-bit-or-narrower math read their touched bytes at the rate
  SGLang 0.5.12's block-FP8 fused-MoE kernel reached on our own H200 at 64-256 tokens, as a fraction of the H200 GEMM
  curve's byte rate (``bench/h200_moe_kernels.block_fp8_read_fraction``, 0.79), on every GPU (s188; the dense GEMMs'
  rate before, which the measured bf16 layers read at 0.93-1.06 of). ``moe-read-rate:all`` (ablation): every MoE
  model's experts at DeepSeek-R1's measured fraction (0.76), bf16 too.
- ``dsa-bf16-decode``: vLLM's DeepSeek Sparse Attention decode over a 16-bit KV cache at the same tables' bf16 module
  (``planner.engines.kernel_curves.DSA_BF16_DECODE``, h-r4; docs/hypotheses/dsa-bf16-decode.md), a + b x min(context,
  top-k) per token, not the fp8_ds_mla kernel's 1.08 us.
- ``unmeasured-sparse-attention``: a DeepSeek Sparse Attention model (DeepSeek-V3.2, GLM-5) on an engine and GPU
  without a measured sparse-attention kernel (SGLang's, any GPU off Hopper) gets no prediction, and a user's range
  for it is widened (``planner.accuracy.basis.UNMEASURED_SPARSE_ATTENTION``; docs/hypotheses/worst-rows.md, h-worst).
- ``sglang-dated-main``: an SGLang row whose version cell names a build of main by its date ("main at 2025-03-30",
  sglang-pr-4918's LD095-097) is read as the last release uploaded to PyPI on or before that date (0.4.4.post3: eager
  prompt steps, decode graphs to 160), not as the newest rule (``planner.accuracy.predict.SGLANG_DATED_MAIN``,
  ``dated_main_release``; docs/hypotheses/sglang-dated-main-build.md, h-loadres).
- ``trtllm-eager-context``: TensorRT-LLM's PyTorch backend runs steps that carry a context request outside CUDA
  graphs, so they take at least the host's launch, SGLang's published per-layer time borrowed
  (``planner.serving.benchmark.TRTLLM_EAGER_CONTEXT``, ``planner.serving.benchmark.eager_context_host_s``;
  docs/hypotheses/trtllm-eager-context.md, h-load).
- ``sglang-piecewise-coverage``: SGLang 0.5.10+ on NVIDIA launches a prompt step eagerly (the shipped launch floor)
  where the row's own command turns the piecewise prefill graph off (``--enable-symm-mem``, ``--enable-dp-attention``,
  ...) or the step has more than 2,048 tokens of an MLA model (``planner.serving.benchmark.SGLANG_PIECEWISE_COVERAGE``;
  docs/hypotheses/sglang-piecewise-coverage.md, h-ttftp50).
- ``mla-prefill-module-bound``: an upper bound, never to ship: each prompt step of an MLA model without DSA on H100 /
  H200 / B200 takes the layers of the measured MLA context module on top of the planner's step
  (``planner.serving.benchmark.MLA_PREFILL_MODULE_BOUND``; docs/hypotheses/mla-prefill-mechanisms.md, h-mla).
- ``mla-prefill-module``: the same module in place of the planner's prefill attention and MLA-projection share, in the
  serving simulation's prompt steps (``planner.serving.benchmark.MLA_PREFILL_MODULE``; same file, Test 3).
- ``blackwell-moe-floors``: B200, B300, GB200 and GB300 take the fused-MoE floor of the kernels vLLM 0.24.0 runs there
  by default (FlashInfer's TensorRT-LLM-gen, measured by aiconfigurator 0.12.0; ``planner.engines.kernel_curves.
  MOE_FLOORS_TRTLLM_GEN``, s191), not Hopper's Triton floor.
- ``a100-moe-floor``: A100 (and the Ampere GPUs that take its curves) takes the fused-MoE floor of SGLang 0.5.10's
  Triton kernel measured there by aiconfigurator 0.12.0 (``planner.engines.kernel_curves.MOE_FLOORS_AMPERE``, s191),
  not the Hopper mean.
- ``chat-template-tokens``: a chat-endpoint row's server prefills its model's chat template around each prompt,
  tokens ``vllm bench serve`` does not count (``planner.accuracy.datasets.CHAT_TEMPLATE_ON``,
  ``chat_template_tokens``; docs/hypotheses/chat-template-tokens.md, h-r2).
- ``sglang-v3-eager-launch:off`` (shipped s211; the ablation turns it off): in an SGLang prompt step run eagerly (before 0.5.10 on NVIDIA, every release on AMD),
  each MoE layer of an MLA model with a q-LoRA (the DeepSeek-V3 architecture) launches in 1.472 ms, from sglang pull
  request 14918's eager DeepSeek-R1 TTFT, not DeepSeek-Coder-V2-Lite's 0.946 ms (``planner.serving.benchmark.
  SGLANG_V3_HOST_MOE_LAYER_S``; docs/hypotheses/sglang-v3-eager-launch.md, h-b200moe).
- ``sglang-admission-latch``: SGLang starts no prefill batch after its ``PrefillAdder`` answers ``NO_TOKEN`` (or every
  slot is taken) until a request leaves the running batch (``batch_is_full``; ``planner.serving.simulate.
  SGLANG_ADMISSION_LATCH``; docs/hypotheses/burst-tpot-skew.md, h-r3), not again at every decode step.
- ``rocm-triton-moe:off`` (ablation; ``rocm-triton-moe`` shipped, s208): a row on an AMD GPU served by a release
  before AITER's fused MoE (SGLang before 0.4.4, vLLM before 0.8) without the Triton fused-MoE call's 0.468 ms per
  MoE layer per step (``planner.engines.profiles.MOE_LAYER_COSTS``' "rocm-triton-moe", ``with_moe_layer_costs``;
  docs/hypotheses/rocm-triton-moe-floor.md, h-band); ``rocm-triton-moe:sglang`` (ablation): SGLang's releases alone.
- ``sglang-early-hopper-moe``: a row on an NVIDIA GPU served by SGLang 0.4.1 to before 0.4.4 pays 0.442 ms more per MoE
  layer per step, sized from sgl-project/sglang pull request 2643's batch-1 DeepSeek-V3 figure
  (``planner.engines.profiles.MOE_LAYER_COSTS``' "sglang-early-hopper-moe", ``with_moe_layer_costs``;
  docs/hypotheses/sglang-early-hopper-deepseek-step.md, h-h200dsk). Failed the ship rule: held-out TTFT worst
  464.85% -> 548.00% (DSTK-042), though the nine rows' TPOT went from -44..-76% to -9..-23%. Since h-moetab the
  entry's time is paid by decode steps alone (docs/hypotheses/sglang-early-hopper-decode-only.md);
  ``sglang-early-hopper-moe:both`` (ablation) is h-h200dsk's form, prompt steps paying it too.
- ``vllm-v0-long-context-eager``: a row served by vLLM before 0.8 (V0) whose sequences pass
  ``max_seq_len_to_capture`` (8,192, vLLM 0.7.3's ``EngineArgs``) decodes eagerly on the share of its steps past it,
  at SGLang's eager launch surplus per layer (``planner.engines.v0_capture``; docs/hypotheses/mi300x-large-batch.md,
  h-mi300b); ``vllm-v0-long-context-eager:spread`` (ablation): the switch with the requests spread over their
  progress, 1 - (1 - share) ** batch of the steps.
- ``vllm-hopper-mxfp4-marlin``: a row of vLLM 0.10.0-0.11.0 with MXFP4 routed experts (gpt-oss) on SM 9.0 runs
  them on Marlin, its grouped GEMMs at Marlin's measured A100 FLOP fraction (``planner.engines.kernel_paths.
  VLLM_HOPPER_MXFP4_MARLIN``; docs/hypotheses/vllm-hopper-mxfp4-marlin.md, h-tpotcls);
  ``vllm-hopper-mxfp4-marlin:ceiling``: the fraction as a ceiling on the grouped GEMM's, not a factor.
- ``moe-gather-scatter:off`` (ablation; ``moe-gather-scatter`` shipped, s180): every data-parallel MoE timed as an
  all-to-all of each token's k copies, not NCCL's measured all-gather and reduce-scatter
  (``planner.engines.allreduce_table.GATHER_SCATTER``).
- ``h100-compute:all``: every H100 SXM row's prefill and decode FLOP factors at 756 / 989 (the H100 PCIe's over the
  SXM's dense bf16 peak, NVIDIA's datasheet) of the profile's: the reading that the model's H100 compute is too fast
  (``planner.accuracy.predict.H100_COMPUTE_SCALE``; docs/hypotheses/h100-tpot-split.md, h-h100tpot);
  ``h100-compute:gpustack`` (diagnostic, never to ship): gpustack's H100 rows only, that source's machine.
- ``rocm-pre-aiter-prefill``: a MoE model's prompt steps on an AMD GPU under SGLang before 0.4.4 or vLLM before 0.8
  (before AITER: Triton's block-FP8 GEMM, fused MoE and extend attention) at 0.3232 of the profile's prefill FLOP
  factor, sized on sgl-project/sglang pull request 3237's DeepSeek-V3 prefill on 8 x MI300X (``planner.accuracy.
  predict.ROCM_PRE_AITER_PREFILL``, ``planner.engines.profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR``;
  docs/hypotheses/amd-ttft.md, h-amdttft; shipped s212, ``rocm-pre-aiter-prefill:off`` turns it off);
  ``rocm-pre-aiter-prefill:sglang`` (ablation): SGLang's releases alone.
- ``sglang-host-overlap``: an SGLang >= 0.4 row's per-sequence host cost is SGLang's own published one (38.3 us a
  sequence a step, the time its overlap scheduler hides in sgl-project/sglang pull request 5608), hidden behind the
  device (step = max(device, host)) unless the row's command turns the overlap scheduler off (``--disable-overlap-
  schedule``, ``--pp-size`` above 1, speculative decoding without SGLANG_ENABLE_SPEC_V2: then summed), not vLLM V0's
  fitted 59 us summed (``planner.engines.profiles.SGLANG_HOST_OVERLAP``, ``with_sglang_host_overlap``;
  docs/hypotheses/sglang-host-overlap.md, h-sglhost; failed the ship rule). Ablations: ``sglang-host-overlap:cost``
  (38.3 us summed, no overlap), ``sglang-host-overlap:overlap`` (the borrowed 59 us, hidden on SGLang alone).
- ``dp-gather-as-engine:off`` (ablation; ``dp-gather-as-engine`` shipped, h-dpgather): data-parallel attention's MoE
  all-gather and reduce-scatter at g x the busiest rank's tokens for every engine, as before; shipped, they carry the
  tokens the engine gathers (SGLang 0.5.3+: a step with a prefill all-reduces the ranks' summed tokens twice; vLLM from
  PR #34102: a prompt step's per-rank sizes; ``planner.model.parallel.DP_GATHER_AS_ENGINE``, ``dp_gather_tokens``;
  docs/hypotheses/dp-attention-gather-tokens.md).
- ``weight-only-gemm:all`` (ablation; ``weight-only-gemm`` shipped, s140): weight-only dense GEMMs at Marlin's measured
  A100 FLOP fraction on every GPU, not only those whose curves are A100's (``planner.engines.kernel_curves.
  WEIGHT_ONLY_GEMM_GPUS``).

Each side runs in a process of its own (the switches are module settings read once per process): the held-out figures
of ``bench/heldout.py`` (TPOT, TTFT, static-batch and serving throughput), ``bench/load_validation.py``'s six loaded
figures and ``bench/loso.py``'s held-out batch-1 TTFT and static-batch throughput, every figure with its row and
source (``planner.accuracy.holdout.fold_of``). Then per quantity: main's and the switch's median and worst |error|,
the switch minus main on the rows as published, its 90% interval over the same N resamples of whole sources for both
sides (``planner.accuracy.bootstrap.paired_difference``), and the share of resamples where the switch is worse /
better. A median is left out of a resample with none of its figures. Two switches joined by "+" (``moe-read-rate+
published-host-cost:overlap``) are measured together.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from planner.accuracy import bootstrap as bs  # noqa: E402

SWITCHES = (
    "first-token-decode-step",
    "serial-front-end",
    "release-batching",
    "published-host-cost",
    "expert-parallel",
    "prefill-attention-rising",
    "sglang-dp-attention",
    "trtllm-serve-eager",
    "trtllm-graph-gaps",
    "trtllm-own-attention",
    "moe-read-rate",
    "blackwell-moe-floors",
    "a100-moe-floor",
    "chat-template-tokens",
    "sglang-admission-latch",
    "dsa-bf16-decode",
    "unmeasured-sparse-attention",
    "trtllm-eager-context",
    "sglang-dated-main",
    "mla-prefill-module-bound",
    "mla-prefill-module",
    "sglang-early-hopper-moe",
    "vllm-v0-long-context-eager",
    "sglang-dp-attention-kv",
    "vllm-hopper-mxfp4-marlin",
    "h100-compute:all",
    "sglang-piecewise-coverage",
    "rocm-pre-aiter-prefill",
    "sglang-host-overlap",
)
#: The switches that turn an entry of ``planner.engines.profiles.MOE_LAYER_COSTS`` (its key, the fields it changes).
MOE_LAYER_COST_SWITCHES = {
    # without a pre-AITER ROCm release's Triton fused-MoE call, 0.468 ms a MoE layer (h-band; shipped s208)
    "rocm-triton-moe:off": ("rocm-triton-moe", {"on": False}),
    # h-band's ablation: SGLang's ROCm releases alone, the engine the constant was measured on
    "rocm-triton-moe:sglang": ("rocm-triton-moe", {"on": True, "engines": frozenset({"sglang"})}),
    # SGLang 0.4.1-0.4.3 on NVIDIA: 0.442 ms more a MoE layer, from sglang PR 2643's batch-1 step (h-h200dsk)
    "sglang-early-hopper-moe": ("sglang-early-hopper-moe", {"on": True}),
    # h-h200dsk's form: the same on prompt steps too (failed its ship rule, held-out TTFT worst)
    "sglang-early-hopper-moe:both": ("sglang-early-hopper-moe", {"on": True, "steps": "both"}),
}
#: A switch's readings one at a time (``turn_on``).
ABLATIONS = (
    "published-host-cost:cost",
    "published-host-cost:overlap",
    "expert-parallel:trtllm",
    "weight-only-gemm:all",
    "moe-gather-scatter:off",
    "dp-gather-as-engine:off",
    "sglang-v3-eager-launch:off",
    "moe-read-rate:all",
    "moe-read-rate+published-host-cost:overlap",  # the slower MoE with the overlapped host cost hidden (s188)
    "moe-read-rate+published-host-cost",  # ... with each loop's published cost too (s188)
    "chat-template-tokens+chat-template-tokens:counted",  # only the families counted from special tokens (h-r2)
    "serial-front-end:1ns",  # diagnostic (h-tok): the one-request-at-a-time path at 1 ns a request, no time of its own
    "rocm-triton-moe:off",
    "rocm-triton-moe:sglang",  # only SGLang's ROCm releases, the engine the constant was measured on (h-band)
    "sglang-early-hopper-moe:both",  # h-h200dsk's form, decode and prompt steps alike (h-moetab's ablation)
    "vllm-v0-long-context-eager:spread",  # the switch with the requests spread over their progress (h-mi300b)
    "vllm-hopper-mxfp4-marlin:ceiling",  # Marlin's fraction as a ceiling, not a factor (h-tpotcls, after the first run)
    "h100-compute:gpustack",  # diagnostic (h-h100tpot): gpustack's H100 rows only, never to ship
    "rocm-pre-aiter-prefill:sglang",  # only SGLang's pre-AITER ROCm releases, the engine it was measured on (h-amdttft)
    "rocm-pre-aiter-prefill:off",  # shipped s212; the ablation turns it off
    "sglang-host-overlap:cost",  # SGLang's 38.3 us summed, no overlap (h-sglhost, after the switch was measured)
    "sglang-host-overlap:overlap",  # the borrowed 59 us hidden on SGLang >= 0.4 alone (h-sglhost; s187 took TRT-LLM too)
)
#: The figure sets in the order printed, and the quantities of each (as the scripts name them).
SETS = {
    "held-out": ("TPOT", "TTFT", "static-batch throughput", "serving throughput"),
    "load": ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms"),
    "LOSO": ("TTFT", "static-batch throughput"),
}


def refit_factors() -> None:
    """Move the shipped time factors by what the switch moves the fit on all rows (``planner.accuracy.holdout.
    fit_reference_defaults`` with the switch on minus off): the per-layer cost on every profile carrying the shipped
    one, each fitted engine's per-step and prefill costs on that engine's profiles whose values are the shipped ones
    (as s106 did by hand), floored at 0. Applied where rows get their profile (``predict._profile_for`` and
    ``under_load``'s copy) when no profile is given, so leave-one-source-out's own fits are untouched."""
    from planner.accuracy import holdout as ho
    from planner.accuracy import predict, under_load
    from planner.engines import profiles as pr

    rows = predict.load_decode_rows()
    on = ho.fit_reference_defaults(rows)
    predict.FIRST_TOKEN_FROM_DECODE_STEP = False
    off = ho.fit_reference_defaults(rows)
    predict.FIRST_TOKEN_FROM_DECODE_STEP = True
    shipped = {
        "vllm": {"step_overhead_s": pr.VLLM_STEP_OVERHEAD_S, "prefill_latency_s": pr.VLLM_PREFILL_LATENCY_S},
        "lmdeploy": {
            "step_overhead_s": pr.LMDEPLOY_STEP_OVERHEAD_S,
            "prefill_latency_s": pr.LMDEPLOY_PREFILL_LATENCY_S,
        },
        "tensorrt-llm": {
            "step_overhead_s": pr.TENSORRT_LLM_STEP_OVERHEAD_S,
            "prefill_latency_s": pr.TENSORRT_LLM_PREFILL_LATENCY_S,
        },
    }
    layer = pr.KERNEL_FACTORS["layer_overhead_s"]
    d_layer = on.shared["layer_overhead_s"] - off.shared["layer_overhead_s"]
    base = predict._profile_for

    def moved(row, engine):
        p = base(row, engine)
        if engine is not None:
            return p
        change = {}
        if p.layer_overhead_s == layer:
            change["layer_overhead_s"] = max(layer + d_layer, 0.0)
        family = next((e for e in shipped if p.name.startswith(e)), None)
        for field, value in shipped.get(family, {}).items():
            if getattr(p, field) == value:
                delta = on.engines.get(family, {}).get(field, 0.0) - off.engines.get(family, {}).get(field, 0.0)
                change[field] = max(value + delta, 0.0)
        return p.with_(**change) if change else p

    predict._profile_for = under_load._profile_for = moved
    print(f"refit: {off.shared} {off.engines} -> {on.shared} {on.engines}", file=sys.stderr)


#: The switches that set one module attribute: switch -> (module, attribute, value); when each was measured.
MODULE_FLAGS = {
    # SGLang's eager prompt step at Coder-V2-Lite's 0.946 ms a MoE layer for every MLA model (h-b200moe shipped s211)
    "sglang-v3-eager-launch:off": ("planner.serving.benchmark", "SGLANG_V3_EAGER_LAUNCH", False),
    # data-parallel MoE as an all-to-all on every engine (ablation, s180)
    "moe-gather-scatter:off": ("planner.engines.allreduce_table", "GATHER_SCATTER", False),
    # prefill attention's rate rising with the prompt (s182)
    "prefill-attention-rising": ("planner.engines.kernel_curves", "PREFILL_ATTENTION_RISING", True),
    # SGLang's --enable-dp-attention read as the release runs it (s183)
    "sglang-dp-attention": ("planner.accuracy.published", "SGLANG_DP_ATTENTION", True),
    # SGLang's attention-DP ranks each keep their own KV pool, steps as tensor parallel (h-dsk042)
    "sglang-dp-attention-kv": ("planner.accuracy.predict", "SGLANG_DP_ATTENTION_KV_POOL", True),
    # TensorRT-LLM 1.x decode above its default graphs, eager (s183)
    "trtllm-serve-eager": ("planner.engines.profiles", "TRTLLM_SERVE_EAGER_ABOVE_GRAPHS", True),
    # TensorRT-LLM 1.x decode between and above its default graphs (33-63, 65-127, 129+), eager (h-p50)
    "trtllm-graph-gaps": ("planner.engines.profiles", "TRTLLM_SERVE_EAGER_GRAPH_GAPS", True),
    # TensorRT-LLM at its own measured attention byte rates (s186)
    "trtllm-own-attention": ("planner.engines.kernel_curves", "TENSORRT_LLM_OWN_ATTENTION", True),
    # Blackwell GPUs' MoE floors from their own measured kernels (s191)
    "blackwell-moe-floors": ("planner.engines.kernel_curves", "BLACKWELL_MOE_FLOORS", True),
    # a DSA model on an engine and GPU without a measured sparse-attention kernel: refused (h-worst)
    "unmeasured-sparse-attention": ("planner.accuracy.basis", "UNMEASURED_SPARSE_ATTENTION", True),
    # A100's MoE floor from SGLang 0.5.10's measured Triton kernel (s191)
    "a100-moe-floor": ("planner.engines.kernel_curves", "AMPERE_MOE_FLOOR", True),
    # a chat endpoint's template tokens on each prompt, beyond the client's count (h-r2)
    "chat-template-tokens": ("planner.accuracy.datasets", "CHAT_TEMPLATE_ON", True),
    # SGLang admits nothing after a NO_TOKEN until a request leaves (h-r3)
    "sglang-admission-latch": ("planner.serving.simulate", "SGLANG_ADMISSION_LATCH", True),
    # a dated SGLang build of main read as the release it ran (h-loadres)
    "sglang-dated-main": ("planner.accuracy.predict", "SGLANG_DATED_MAIN", True),
    # TensorRT-LLM's PyTorch context steps launched eagerly: SGLang's host floor (h-load)
    "trtllm-eager-context": ("planner.serving.benchmark", "TRTLLM_EAGER_CONTEXT", True),
    # an upper bound on MLA's prefill module: layers x the measured module on top of each prompt step (h-mla)
    "mla-prefill-module-bound": ("planner.serving.benchmark", "MLA_PREFILL_MODULE_BOUND", True),
    # MLA's measured prefill module in place of the planner's attention and MLA-projection share (h-mla, Test 3)
    "mla-prefill-module": ("planner.serving.benchmark", "MLA_PREFILL_MODULE", True),
    # vLLM's DSA decode over a 16-bit cache at its own measured bf16 module (h-r4)
    "dsa-bf16-decode": ("planner.engines.kernel_curves", "DSA_BF16_DECODE", True),
    # diagnostic (h-tok): requests through the serial front end's path at 1 ns each, what the path does by itself
    "serial-front-end:1ns": ("planner.serving.benchmark", "SERIAL_FRONT_END_S", 1e-9),
    # vLLM V0 (before 0.8) decodes eagerly once a sequence passes 8,192 tokens: its share of the steps (h-mi300b)
    "vllm-v0-long-context-eager": ("planner.engines.v0_capture", "VLLM_V0_LONG_CONTEXT_EAGER", True),
    # vLLM 0.10-0.11.0's MXFP4 experts on Marlin on Hopper: Marlin's A100 FLOP fraction of the grouped GEMM (h-tpotcls)
    "vllm-hopper-mxfp4-marlin": ("planner.engines.kernel_paths", "VLLM_HOPPER_MXFP4_MARLIN", True),
    # ... Marlin's fraction as a ceiling on the grouped GEMM's (its rate flattens from 64 rows per expert on)
    "vllm-hopper-mxfp4-marlin:ceiling": ("planner.engines.kernel_paths", "VLLM_HOPPER_MXFP4_MARLIN", "ceiling"),
    # SGLang 0.5.10+'s piecewise prefill graph off by the row's flags (symmetric memory, ...) or above 2,048 MLA tokens
    "sglang-piecewise-coverage": ("planner.serving.benchmark", "SGLANG_PIECEWISE_COVERAGE", True),
    # data-parallel attention's MoE gather at g x the busiest rank's tokens for every engine (h-dpgather shipped)
    "dp-gather-as-engine:off": ("planner.model.parallel", "DP_GATHER_AS_ENGINE", False),
    # every GPU, not only those whose curves are A100's (ablation)
    "weight-only-gemm:all": ("planner.engines.kernel_curves", "WEIGHT_ONLY_GEMM_GPUS", None),
    # every H100 SXM row's FLOP factors at the H100 PCIe's share of the SXM's dense peak, 756 / 989 (h-h100tpot)
    "h100-compute:all": ("planner.accuracy.predict", "H100_COMPUTE_SCALE", "all"),
    # ... gpustack's H100 rows only: a diagnostic of that source's machine (h-h100tpot), never to ship
    "h100-compute:gpustack": ("planner.accuracy.predict", "H100_COMPUTE_SCALE", "gpustack"),
    # a pre-AITER ROCm release's MoE prompt steps at 0.3232 of the prefill FLOP factor, sglang PR 3237 (h-amdttft)
    "rocm-pre-aiter-prefill": ("planner.accuracy.predict", "ROCM_PRE_AITER_PREFILL", "all"),
    # ... SGLang's releases alone (ablation)
    "rocm-pre-aiter-prefill:sglang": ("planner.accuracy.predict", "ROCM_PRE_AITER_PREFILL", "sglang"),
    # ... off: the rule before s212 shipped it
    "rocm-pre-aiter-prefill:off": ("planner.accuracy.predict", "ROCM_PRE_AITER_PREFILL", None),
    # SGLang 0.4+'s own host cost (sglang PR 5608's 38.3 us a sequence), hidden by its overlap scheduler (h-sglhost)
    "sglang-host-overlap": ("planner.engines.profiles", "SGLANG_HOST_OVERLAP", True),
    # ... its two parts alone (ablations, after the switch was measured): 38.3 us summed; the borrowed 59 us hidden
    "sglang-host-overlap:cost": ("planner.engines.profiles", "SGLANG_HOST_OVERLAP", "cost"),
    "sglang-host-overlap:overlap": ("planner.engines.profiles", "SGLANG_HOST_OVERLAP", "overlap"),
}


def turn_on(switch: str) -> None:
    """Set ``switch`` for this process (call before any prediction); "+refit" also moves the shipped time factors by
    what the switch moves their fit (``refit_factors``); "a+b" (any other "+") sets a and b together."""
    from planner.accuracy import predict

    if "+" in switch and not switch.endswith("+refit"):
        for part in switch.split("+"):
            turn_on(part)
    elif switch in ("first-token-decode-step", "first-token-decode-step+refit"):
        predict.FIRST_TOKEN_FROM_DECODE_STEP = True
        if switch.endswith("+refit"):
            refit_factors()
    elif switch == "serial-front-end":
        from heldout import use_serial_front_end

        use_serial_front_end(True)
    elif switch == "release-batching":
        from vllm_batching_releases import use_release_batching

        use_release_batching()
    elif switch.split(":")[0] == "published-host-cost":  # ":cost" / ":overlap": one reading alone (ablation)
        from planner.engines import profiles

        profiles.PUBLISHED_HOST_COST = True
        if ":" in switch:
            profiles.PUBLISHED_HOST_COST_READINGS = frozenset({switch.split(":")[1]})
    elif switch in ("expert-parallel", "expert-parallel:trtllm"):
        from planner.engines import profiles

        profiles.EXPERT_PARALLEL_FROM_ROWS = True
        if switch.endswith(":trtllm"):  # the reading on TensorRT-LLM 1.x's rows alone
            profiles.EXPERT_PARALLEL_PROFILES = frozenset({"tensorrt-llm"})
    elif switch in ("moe-read-rate", "moe-read-rate:all"):  # expert bytes at the kernel's measured read rate (s188)
        from h200_moe_kernels import block_fp8_read_fraction, read_fraction

        from planner.model import operators, ops

        expert_layers = operators.expert_layers_time_s
        every = switch.endswith(":all")
        fraction = read_fraction() if every else block_fp8_read_fraction()

        def slower_reads(gpu, limits, expert_bytes, *rest, **named):
            slower = fraction if every else ops.where(operators.eight_bit_math(gpu), fraction, 1.0)
            return expert_layers(gpu, limits, expert_bytes / slower, *rest, **named)

        operators.expert_layers_time_s = slower_reads
    elif switch == "chat-template-tokens:counted":  # the families counted from special tokens, not gpt-oss (h-r2)
        from planner.accuracy import datasets

        datasets.CHAT_TEMPLATE_TOKENS = tuple(f for f in datasets.CHAT_TEMPLATE_TOKENS if f[0] != "gpt-oss")
    elif switch == "vllm-v0-long-context-eager:spread":  # h-mi300b's ablation: the requests spread over their progress
        from planner.engines import v0_capture

        v0_capture.VLLM_V0_LONG_CONTEXT_EAGER = True
        v0_capture.VLLM_V0_EAGER_SPREAD = True
    elif switch in MOE_LAYER_COST_SWITCHES:  # an entry of ``planner.engines.profiles.MOE_LAYER_COSTS``
        from planner.engines import profiles

        key, changes = MOE_LAYER_COST_SWITCHES[switch]
        profiles.set_moe_layer_cost(key, **changes)
    elif switch in MODULE_FLAGS:
        module, name, value = MODULE_FLAGS[switch]
        setattr(importlib.import_module(module), name, value)
    elif switch != "main":
        raise SystemExit(f"unknown switch {switch!r}; one of: main, {', '.join(SWITCHES)}")


def figures() -> list[list]:
    """Every compared figure as [set, quantity, record id, source, signed error] (NaN: not predicted), in a fixed
    order: the three scripts' checks."""
    import heldout
    import loso

    from planner.accuracy import holdout as ho
    from planner.accuracy import predict as acc
    from planner.accuracy.fit import held_out_rows
    from planner.accuracy.validation import validate_load

    rows = acc.load_decode_rows()
    held = held_out_rows(rows)
    out = [
        ["held-out", c["q"], c["row"].record_id, ho.fold_of(c["row"]), c["planner"]] for c in heldout.time_checks(held)
    ]
    load_rows = acc.load_decode_rows(acc.reference_dir() / "load_public.csv")
    by_id = {r.record_id: r for r in load_rows}
    out += [
        ["load", c.quantity, c.record_id, ho.fold_of(by_id[c.record_id]), c.error]
        for c in validate_load(load_rows).checks
    ]
    result = ho.leave_one_source_out(rows)
    out += [["LOSO", c["q"], c["row"].record_id, c["source"], c["planner"]] for c in loso.checks(result)]
    return [[*f[:4], None if math.isnan(f[4]) else float(f[4])] for f in out]


def side(switch: str, keep: Path | None) -> list[list]:
    """One side's figures: from ``keep``'s file when there, else computed in a fresh process (and kept)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = keep / f"{switch}.json" if keep else Path(tmp) / f"{switch}.json"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--dump", switch, str(path)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(path.read_text())


def pct(x: float) -> str:
    return f"{x:.2%}" if not math.isnan(x) else "-"


def points(x: float) -> str:
    return f"{x * 100:+.2f}" if not math.isnan(x) else "-"


def compare(main: list[list], switched: list[list], switch: str, resamples: int) -> list[str]:
    """The table: per set and quantity, median and worst of main and the switch, the difference (points of |error|)
    with its 90% interval over paired source resamples, and P(switch worse) / P(better)."""
    if [f[:4] for f in main] != [f[:4] for f in switched]:
        raise SystemExit("the two sides' figures are not the same rows in the same order")
    lines = [
        f"main -> {switch}: |error| median / worst; switch - main in points, 90% interval over {resamples:,} paired "
        f"resamples of whole sources (seed {bs.DEFAULT_SEED}); P: share of resamples where the switch is worse / better",
        f"{'set':<9}{'quantity':<24}{'stat':<7}{'main':>9}{'switch':>9}{'diff':>8}{'90% interval':>18}"
        f"{'P(worse)':>10}{'P(better)':>10}{'figures':>9}{'sources':>8}",
    ]
    nan = float("nan")
    for name, quantities in SETS.items():
        for q in quantities:
            idx = [i for i, f in enumerate(main) if f[0] == name and f[1] == q]
            if not idx:
                continue
            a = [nan if main[i][4] is None else main[i][4] for i in idx]
            b = [nan if switched[i][4] is None else switched[i][4] for i in idx]
            sources = [main[i][3] for i in idx]
            n = sum(not math.isnan(x) for x in a)
            drawn = {s for s, x, y in zip(sources, a, b, strict=True) if not (math.isnan(x) and math.isnan(y))}
            for stat in ("median", "worst"):
                d = bs.paired_difference(a, b, sources, stat, resamples=resamples)
                lines.append(
                    f"{name:<9}{q:<24}{stat:<7}{pct(d.a):>9}{pct(d.b):>9}{points(d.observed):>8}"
                    f"{'[' + points(d.low) + ', ' + points(d.high) + ']':>18}{d.p_worse:>10.2f}{d.p_better:>10.2f}"
                    f"{n:>9}{len(drawn):>8}"
                )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "switch", nargs="?", choices=[*SWITCHES, *ABLATIONS], help="the off-by-default switch to compare with main"
    )

    from heldout import add_bootstrap_option

    add_bootstrap_option(parser)
    parser.add_argument(
        "--refit",
        action="store_true",
        help="first-token-decode-step: also move the shipped time factors by what the rule moves their fit (s106)",
    )
    parser.add_argument("--keep", type=Path, help="folder keeping each side's figures (main's reused across switches)")
    parser.add_argument("--dump", nargs=2, metavar=("SIDE", "PATH"), help=argparse.SUPPRESS)  # a side's own process
    args = parser.parse_args(argv)
    if args.dump:
        turn_on(args.dump[0])
        Path(args.dump[1]).write_text(json.dumps(figures()))
        return 0
    if not args.switch:
        parser.error(f"name a switch: {', '.join(SWITCHES)}")
    name = args.switch + ("+refit" if args.refit else "")
    if args.refit and args.switch != "first-token-decode-step":
        parser.error("--refit applies to first-token-decode-step only (the others move no fitted row)")
    main_figures, switched = side("main", args.keep), side(name, args.keep)
    print("\n".join(compare(main_figures, switched, name, args.bootstrap or bs.DEFAULT_RESAMPLES)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
