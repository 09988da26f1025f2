"""Where an option's batch cap sets its fleet: the review's max_num_seqs against the engine's own limit.

The review runs each replica with max_num_seqs set to what memory holds when every sequence may reach the
high-percentile prompt + output (``Candidate.slots``, Options' "Sequences in flight per replica, at most (max
batch)"): a guaranteed-no-preemption choice. An engine left at its default (vLLM: max_num_seqs 1,024 on an H100)
admits requests while its KV cache has room for their tokens and preempts when it fills, which ``planner plan --rate``
sizes. For a KV-poor model the two differ: trial 29 F16, Qwen3-235B-A22B on 8 x H100 at 6 requests/s of 12,000 / p95
30,000 prompt and 350 / p95 900 output tokens holds 8 sequences of 30,900 tokens, so the review sized 12 serving
replicas before its margin where ``planner plan`` sized 9 (72 GPUs) at the engine's 1,024, and the review did not
say why. ``evaluate.engine_limit_fleet`` sizes the option's kept replica at the engine's limit as ``plan`` does
(``evaluate.sized_at_engine_limit``: ``fewest_replicas``, the same requests, the targets as given), below the
review's own fleet without the margin only, and ``EngineLimitFleet.text`` is the Options note where that fleet is
smaller (the cap binds). Where it is not, or the cap is the engine's limit, there is no note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.units import counted

if TYPE_CHECKING:
    from planner.export.scenario import Workload


@dataclass(frozen=True)
class EngineLimitFleet:
    """An option whose batch cap sets its fleet: the cap and the length it holds, and the serving replicas before the
    margin (no spares) at that cap and at the engine's own limit (``planner plan``'s fleet)."""

    option: str
    cap: int  # the review's max_num_seqs (``Candidate.slots``)
    cap_words: str  # what memory holds there: "p95 prompt + p95 output (30,900 tokens)"
    engine: str  # "vLLM"
    limit: int  # the engine's own max_num_seqs on this GPU and group (1,024)
    gpus_per_replica: int
    replicas: int  # serving replicas at the engine's limit, no margin: planner plan's
    cap_replicas: int  # serving replicas at the cap, no margin: the review's own without its margin

    @property
    def gpus(self) -> int:
        return self.replicas * self.gpus_per_replica

    @property
    def cap_gpus(self) -> int:
        return self.cap_replicas * self.gpus_per_replica

    @property
    def text(self) -> str:
        """The Options note, short enough for its printed column (trial 14 F15's two pages): "max batch 8, no
        preemption; at vLLM's default 1,024: 72 GPUs before the margin, not 96 (planner plan)"; what the cap holds
        (``cap_words``) is on Assumptions' memory rows and in the Glossary."""
        return (
            f"max batch {self.cap:,}, no preemption; at {self.engine}'s default {self.limit:,}: "
            f"{counted(self.gpus, 'GPU', ',.0f')} before the margin, not {self.cap_gpus:,} (planner plan)"
        )


def cap_words(workload: Workload) -> str:
    """What the batch cap is what memory holds at (``Workload.batch_cap_context_tokens``): the high-percentile prompt +
    output, or the mean context in flight where that is the longer."""
    tokens = workload.batch_cap_context_tokens
    if tokens == workload.sizing_context_tokens:
        q = f"p{workload.high_percentile:g}"
        return f"{q} prompt + {q} output, {tokens:,} tokens"
    return f"the mean context in flight, {tokens:,} tokens"
