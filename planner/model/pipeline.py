"""Pipeline parallelism: a group of g GPUs as S stages of g / S GPUs each (one GPU each: S = g). Pure formulas.

vLLM ``--pipeline-parallel-size S``, SGLang ``--pp-size S`` and TensorRT-LLM ``--pp_size S`` give each stage a
contiguous run of about L / S layers (the first the embedding, the last the output head), tensor-parallel over its
g / S GPUs, and keep S micro-batches in flight: while stage 2 runs one batch's layers, stage 1 runs the next batch's.
A stage sends each token's hidden state (and residual) to the next over the interconnect.

With B sequences the engine runs min(S, B) micro-batches of B / min(S, B) sequences ("streams"). A stream's token
passes every stage in turn, and each stage serves the S streams one after another, so one stream's step, its TPOT,
is the whole model's time on one stage's tensor-parallel group at the stream's batch plus S - 1 sends; the group
emits B tokens per such step. Memory is the busiest stage's (``planner.model.memory.pipeline_stage_facts``).

Assumptions: stages of equal time (the busiest stage's extra layer and the head not timed apart); the streams alike
(the serving simulation runs one of them, ``planner.serving.benchmark.ServingSetup.ranks``); the engine's per-step
host cost paid once per stream step, overlapped with the other streams' stages.
"""

from __future__ import annotations

from dataclasses import replace

from planner.model import ops
from planner.model.decode import DecodeStep, collective_link, decode_step
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.prefill import PrefillStep, prefill_step

#: Values per token a stage sends the next: the hidden state and the residual (vLLM's ``IntermediateTensors``
#: {"hidden_states", "residual"}), 2 B each.
SENT_BYTES_PER_HIDDEN = 2 * 2.0


def streams(batch: ArrayLike, stages: ArrayLike) -> ArrayLike:
    """Micro-batches in flight: min(S, B), at least 1."""
    return ops.maximum(ops.minimum(stages, batch), 1.0)


def stage_sends_s(
    gpu: GpuFacts, limits: EngineFacts, model: ModelFacts, tokens: ArrayLike, stages: ArrayLike, gpus: ArrayLike
) -> ArrayLike:
    """A stream's S - 1 sends between stages: (S - 1) x (latency + tokens x hidden x 4 B / link); 0 for one stage.
    Each GPU of a stage holds the whole hidden state after its all-reduce and sends it to its peer of the next stage.

    Within the fabric domain a send takes one GPU's fabric bandwidth to one peer (a mesh: one link,
    ``decode.collective_link`` of 2 GPUs) at the engine's collective latency; a group beyond the domain sends at
    PCIe's."""
    within, _, latency, _ = collective_link(gpu, limits, gpus)
    _, peer, _, _ = collective_link(gpu, limits, 2.0)
    link = ops.where(within, peer, gpu.pcie_bytes_per_s * limits.interconnect_efficiency)
    one = latency + tokens * model.hidden_size * SENT_BYTES_PER_HIDDEN / link
    return ops.maximum(stages - 1.0, 0.0) * one


def pp_decode_step(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
    stages: ArrayLike,
) -> DecodeStep:
    """TPOT of B sequences on S stages of g / S GPUs: ``decode_step`` of one stream (B / min(S, B) sequences) on a
    stage's g / S GPUs + its sends. The group's bytes and FLOPs are every stream's; throughput B / TPOT."""
    n = streams(batch, stages)
    one = decode_step(gpu, model, precision, limits, context_tokens, batch / n, gpus / stages)
    sends = stage_sends_s(gpu, limits, model, batch / n, stages, gpus)
    return replace(
        one,
        gpus=gpus,
        batch=batch,
        step_s=one.step_s + sends,
        bytes_moved=one.bytes_moved * n,
        flop=one.flop * n,
        communication_s=one.communication_s + sends,
    )


def pp_prefill_step(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    prompt_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
    stages: ArrayLike,
) -> PrefillStep:
    """TTFT of ``batch`` prompts on S stages of g / S GPUs: ``prefill_step`` of the busiest stream's
    ceil(B / min(S, B)) prompts on a stage's GPUs + its sends; bytes and FLOPs are every stream's."""
    n = streams(batch, stages)
    mine = ops.ceil(batch / n)
    one = prefill_step(gpu, model, precision, limits, prompt_tokens, mine, gpus / stages)
    sends = stage_sends_s(gpu, limits, model, prompt_tokens * mine, stages, gpus)
    return replace(
        one, gpus=gpus, ttft_s=one.ttft_s + sends, bytes_moved=one.bytes_moved * n, flop=one.flop * batch / mine
    )
