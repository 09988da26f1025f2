"""Acceptance lengths of speculative drafts, from public sources, for the loaded runs served with speculative decoding.

A serving benchmark client (``vllm bench serve``) prints no acceptance length, and the runs in ``load_public.csv``
state none, so each draft's acceptance comes from ``catalogs/reference/speculative_acceptance.csv``, one row per
draft with its source, never from the runs compared:

- ``basis`` "published acceptance": the source states the mean accepted tokens per step (the bonus token
  included, the EAGLE papers' tau) under conditions of its own; the row keeps the lowest and highest that fit a
  run's kind of prompts, and a run is predicted at both (``acceptance_range``).
- ``basis`` "published speedup": the source states only decode rates without and with the draft at one request.
  The acceptance length is then speedup x (speculative step / plain step) (``acceptance_from_speedup``): a
  speculative step emits the acceptance length's tokens in the time of one speculative step, a plain step one
  token in its own; both steps from planner's model for the source's GPU, precision and configuration. The
  speedup alone is its lower bound, whatever the step times.

Either way the acceptance a run gets is at most its ``--speculative-num-steps`` + 1 (a step accepts at most one
token per draft pass, plus the bonus).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from planner import api
from planner.accuracy.published import DecodeRow, Speculation, read_csv_rows, reference_dir
from planner.engines.profiles import engine_profile, with_vllm_host_loop
from planner.errors import InvalidInputError
from planner.serving.load import DATASETS, Replica
from planner.serving.speculative import METHODS, SpeculativeDecoding, sglang_speculation, step_s

#: One row per draft model: its acceptance length or a published speedup it is read from, and its source.
ACCEPTANCE_FILE = "speculative_acceptance.csv"
BASES = ("published acceptance", "published speedup")


@dataclass(frozen=True)
class DraftAcceptance:
    """One draft's published acceptance (``low``..``high``) or speedup (tokens/s without and with it, on ``gpu`` at
    ``weight_precision``, ``batch`` requests, SGLang's ``num_steps`` / ``topk`` / ``num_draft_tokens``), its
    parameter count (``draft_params``) and ``source``."""

    draft_model: str
    target_model: str
    method: str
    basis: str
    draft_params: float
    source: str
    low: float = math.nan
    high: float = math.nan
    baseline_tokens_per_s: float = math.nan
    speculative_tokens_per_s: float = math.nan
    gpu: str = ""
    weight_precision: str = ""
    batch: int = 1
    num_steps: int = 0
    topk: int = 0
    num_draft_tokens: int = 0


def _number(cell: str) -> float:
    return float(cell) if str(cell).strip() else math.nan


@cache
def draft_acceptances() -> dict[str, DraftAcceptance]:
    """``ACCEPTANCE_FILE``'s rows by draft model (lower case)."""
    out = {}
    for r in read_csv_rows(reference_dir() / ACCEPTANCE_FILE):
        if r["basis"] not in BASES:
            raise InvalidInputError(f"{ACCEPTANCE_FILE}: basis {r['basis']!r} is not one of {', '.join(BASES)}")
        out[r["draft_model"].lower()] = DraftAcceptance(
            draft_model=r["draft_model"],
            target_model=r["target_model"],
            method=r["method"],
            basis=r["basis"],
            draft_params=float(r["draft_params"]),
            source=r["source"],
            low=_number(r["acceptance_length_low"]),
            high=_number(r["acceptance_length_high"]),
            baseline_tokens_per_s=_number(r["baseline_tokens_per_s"]),
            speculative_tokens_per_s=_number(r["speculative_tokens_per_s"]),
            gpu=r["gpu"],
            weight_precision=r["weight_precision"],
            batch=int(r["batch"] or 1),
            num_steps=int(r["num_steps"] or 0),
            topk=int(r["topk"] or 0),
            num_draft_tokens=int(r["num_draft_tokens"] or 0),
        )
    return out


#: The profile ``acceptance_from_speedup`` times both steps with: the default profile's time factors with the
#: synchronous host loop (the per-sequence cost summed, as every step of it was read before vLLM's asynchronous loop
#: became the default profile's, s189), so a draft's acceptance does not move with vLLM's loop.
SPEEDUP_ENGINE = with_vllm_host_loop(engine_profile(None), "vllm", None)


def acceptance_from_speedup(d: DraftAcceptance, catalog=None) -> float:
    """The acceptance length a published speedup implies: (speculative / baseline tokens/s) x (speculative step /
    plain step), both steps of ``d.batch`` sequences at ShareGPT's mean context (``DATASETS``), from planner's model
    of ``d.target_model`` on ``d.gpu`` at ``d.weight_precision`` under SGLang; at most num_steps + 1."""
    sharegpt = DATASETS["sharegpt"]
    prompt, output = round(sharegpt.prompt_mean_tokens), round(sharegpt.output_mean_tokens)
    replica = Replica(
        d.gpu, d.target_model, 1, scheduler="sglang", weight_precision=d.weight_precision, catalog=catalog,
        engine=SPEEDUP_ENGINE,
    )  # fmt: skip
    table = replica.setup(prompt, output).table
    ratio = (
        d.draft_params * 2.0 / float(api.weight_bytes(d.target_model, precision=d.weight_precision, catalog=catalog))
    )
    steps, topk, tokens = sglang_speculation(d.num_steps or None, d.topk or None, d.num_draft_tokens or None)
    spec = SpeculativeDecoding(d.method, steps, 1.0, topk=topk, verify_tokens=tokens, draft_params=d.draft_params)
    context = prompt + output // 2
    plain = table.decode_s(d.batch, context)
    speculative = step_s(table, spec, ratio, d.batch, context)
    return min(d.speculative_tokens_per_s / d.baseline_tokens_per_s * speculative / plain, steps + 1.0)


def acceptance_range(speculation: Speculation, catalog=None) -> tuple[float, float, DraftAcceptance]:
    """(lowest, highest) acceptance length for a run's draft (equal for a speedup's reading), each at most the run's
    num_steps + 1, and the draft's row; ``InvalidInputError`` naming the draft when nothing is published for it."""
    d = draft_acceptances().get(speculation.draft_model.lower())
    if d is None:
        raise InvalidInputError(
            f"speculative decoding with draft {speculation.draft_model or '(none named)'}: no acceptance length or "
            f"speedup is published for it ({ACCEPTANCE_FILE})"
        )
    steps, _, _ = sglang_speculation(speculation.num_steps, speculation.topk, speculation.num_draft_tokens)
    if d.basis == "published acceptance":
        low, high = d.low, d.high
    else:
        low = high = acceptance_from_speedup(d, catalog)
    return min(low, steps + 1.0), min(high, steps + 1.0), d


def speculative_problem_text(row: DecodeRow) -> str:
    """The refusal ``planner.accuracy.published`` gives a speculating row (the one-token-a-step reading's)."""
    return row.problem if row.problem.startswith("speculative decoding (") else ""


def speculation_handled(row: DecodeRow) -> bool:
    """Whether the row's only reason for no prediction is speculative decoding, which the serving simulation reads
    (``planner.serving.speculative``) at its draft's published acceptance (``acceptance_range``)."""
    return row.speculation is not None and row.problem == speculative_problem_text(row)


def middle_speculation(row: DecodeRow, catalog=None) -> SpeculativeDecoding:
    """A speculating row's decoding at the middle of its draft's published acceptance range (``acceptance_range``;
    ``InvalidInputError`` when nothing is published for its draft)."""
    low, high, d = acceptance_range(row.speculation, catalog)
    return speculative_decoding(row.speculation, (low + high) / 2.0, d)


def speculative_decoding(speculation: Speculation, acceptance_length: float, d: DraftAcceptance) -> SpeculativeDecoding:
    """The run's speculation as the simulation takes it: SGLang's steps, topk and draft tokens as it runs them
    (``sglang_speculation``), the draft's parameters, at ``acceptance_length``."""
    steps, topk, tokens = sglang_speculation(speculation.num_steps, speculation.topk, speculation.num_draft_tokens)
    return SpeculativeDecoding(
        speculation.algorithm if speculation.algorithm in METHODS else "eagle3",
        steps,
        float(acceptance_length),
        topk=topk,
        verify_tokens=tokens,
        draft_params=d.draft_params,
        source=d.source,
    )
