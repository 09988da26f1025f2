"""The words a budget review uses, defined once for readers outside engineering (Markdown, xlsx and PDF print it)."""

from __future__ import annotations

#: The average load's name on Options and Summary (the field ``utilization_average``): the average traffic against
#: the capacity the fleet was sized to, which a reader took for GPU busy time when it read "Utilization (average)"
#: (trial 22 F15: 40% on a 2,880-GPU fleet 180 times the one sized on the prediction).
LOAD_LABEL = "Load vs sized capacity (average)"
#: The output-token rate's name on Options, Costs and Summary (``usd_per_million_output``): the decode share of the
#: bill, the prompts' share billed per input token, so a finance reader does not price an output-token product on it
#: alone (trial 28 F11: 15% under the monthly cost / output tokens); beside it, that all-in rate.
OUTPUT_SHARE_LABEL = "$ per M output tokens (decode share; prompts in $ per M input)"
OUTPUT_ALL_IN_LABEL = "$ per M output tokens, all-in (monthly cost / output tokens)"

#: (term, definition), in reading order.
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "TTFT",
        "Time to first token: from a request's arrival to the first word of its answer (the prompt is read first).",
    ),
    (
        "TPOT",
        "Time per output token: the gap between two words of one answer once it is streaming; 50 ms is 20 tokens a second.",
    ),
    ("p95", "95th percentile: 95 requests in 100 are at or below this length or time; the targets hold for them."),
    (
        "Replica",
        "One running copy of the model on a group of GPUs; the fleet is several replicas behind a load balancer.",
    ),
    (
        "Sequences in flight per replica, at most (max batch)",
        "The most requests one replica works on at once, each holding its share of memory: the engine's cap "
        "(max_num_seqs as the review sets it, what memory holds at the high-percentile lengths within the engine's "
        "own limit, so no sequence is ever preempted; Assumptions' memory rows give the chain), not a count of the "
        "sequences that run (at the traffic fewer run); not requests per second. Where it sets the fleet, the "
        "option's note gives the fleet at the engine's default limit, as planner plan sizes it.",
    ),
    (
        "TPOT at peak",
        "TPOT at the planned peak's traffic as the fleet was sized (the simulated high percentile, p95 by default), "
        "at the sized lengths (the means, or their spread), prompts sharing the GPU with answers: what a user sees.",
    ),
    (
        "$ per M input / output tokens",
        "The monthly cost split between reading prompts and writing answers by the GPU time each takes at the "
        "average traffic (a prompt holds its replica for its TTFT; a decode step is shared by the sequences in "
        "flight at the average, by Little's law on each deployed replica, spares included, not by the most "
        "memory holds), each part "
        "over its million tokens at the average traffic: priced like an API's input and output rates, the two "
        "together are the bill. The output rate is the decode share alone, so not the monthly cost over the "
        "output tokens: a price per output token that must recover the whole bill is the next entry's rate. "
        "`planner plan`'s cost per million output tokens is another basis: decode only, at "
        "full batch, 100% busy, prompt processing not included (lower); its line with prompt processing adds each "
        "request's prefill, still 100% busy (lower than these rates where the average utilization is below 100%).",
    ),
    (
        OUTPUT_ALL_IN_LABEL,
        "The monthly cost over the output tokens alone at the average traffic, prompts' share included: what one "
        "price per output token must be to recover the bill (the input and output rates each over their own tokens "
        "add up to the bill; this one alone does).",
    ),
    (
        "$ per M tokens (all)",
        "The monthly cost over every token, prompts and answers together, at the average traffic: one rate for the "
        "whole bill (it lies between the input and output rates).",
    ),
    (
        LOAD_LABEL,
        "Average traffic as a share of the traffic the deployed replicas (spares included) carry within the "
        "targets (sized on simulated percentiles; by Little's law: the share of batch slots in use). It measures "
        "the fleet against its own sizing, not how busy its GPUs are: where a wide latency margin keeps each "
        "replica to a few sequences, what the replicas carry is small, and a fleet many times what the traffic "
        "needs on the prediction can still read 40%.",
    ),
    (
        "Headroom (peak)",
        "The share of that capacity left at the planned peak, 1 - planned peak / what the deployed replicas carry: "
        "the spare replicas and the rounding up to whole nodes (by Little's law: the share of batch slots free). "
        "Another figure than the Latency sheet's headroom over the planned peak, the extra traffic the serving "
        "replicas alone (spares not used) take before a simulated p95 misses its target; either can be the "
        "larger.",
    ),
    (
        "TPOT, decode step alone",
        "TPOT of one decode step at the full batch with every sequence at the high-percentile length and no prompt "
        "in the step: memory's worst case, on another basis than TPOT at peak, so it can read lower.",
    ),
    (
        "Tensor-parallel",
        "One replica's model split across several GPUs that work on every token together (4 GPUs per replica: TP 4).",
    ),
    (
        "KV cache",
        "Memory each request in flight holds for the text so far; it sets how many requests a replica serves at once.",
    ),
    (
        "GQA",
        "Grouped-query attention: several attention heads share one key/value head, so the KV cache is several times smaller.",
    ),
    (
        "Weights precision",
        "How many bits store each model weight: bf16 as published (16 bits), fp8 half that; fewer bits, fewer GPUs, a quality check.",
    ),
    (
        "Latency margin",
        "Headroom the fleet is sized with so that the model's pessimistic prediction, not its central one, meets the targets.",
    ),
    (
        "Price kind",
        "purchase (bought, paid up front), reserved (a contract term), on-demand (by the hour, no commitment), spot (cheaper, can be reclaimed).",
    ),
    ("Year-1 cash", "Money out in the first 12 months: purchases when made plus running costs, or rent."),
    ("Present value", "Future cash discounted at the cost of capital: what it is worth today."),
)

#: The term a review with a [[mix]] adds (``terms``): only there, so a review without one reads as before.
MIXED_FLEET = (
    "Mixed fleet",
    "Several options serving one traffic at once (say two models behind one gateway), each a share of the requests: "
    "each part is sized alone at its share and the mix's GPUs and costs are the sums of its parts; no spare, node or "
    "GPU is shared between parts. A budget line beside the ranked options, not one of them.",
)


def terms(has_mixes: bool) -> tuple[tuple[str, str], ...]:
    """The glossary of a review: ``GLOSSARY``, and ``MIXED_FLEET`` where the review has a mixed fleet."""
    return GLOSSARY + ((MIXED_FLEET,) if has_mixes else ())
