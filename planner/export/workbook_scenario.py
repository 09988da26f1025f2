"""A what-if workbook's Inputs as a one-option scenario's data (``workbook_scenario_data``), apart from the reading
of the file (``planner.export.workbook_input``), so that the workbook's refresh can size the budget fleet ``planner
export`` of the file gives (``planner.workbook.budget_fleet``) without an import cycle. The mapping (blank inputs
and the average traffic take the stated defaults, printed on the review's Assumptions sheet, "workbook"):

    peak traffic P     -> peak P requests/s, average 0.4 x P (blank: 10 and 4)
    output tokens O    -> every request O output tokens and C - O prompt tokens (mean = p95)
                          (blank: p95 output = C // 4 (at least 1), p95 prompt = C - p95 output; means half of those)
    prompt tokens P    -> every request P prompt tokens (mean = p95) in the place of C - O; with O blank, the p95
                          output C // 4, at most C - P (at least 1), its mean half of it
    engine E           -> the option's engine (blank: the workbook's first, as its formulas read it)
    TPOT / TTFT target -> the same targets at the latency percentile L (blank: TPOT 100 ms, TTFT 2 s; L blank: 95)
    latency percentile -> workload.latency_percentile
    high lengths       -> workload.prompt_tokens_high / output_tokens_high (with the output tokens), at
                          workload.high_percentile = the length percentile (blank: L, else 95)
    prompt share cached -> workload.prefix_hit_rate (blank: 0)
    burstiness b       -> workload.burstiness (blank: 1, Poisson)
    gpus N             -> exactly N GPUs per replica (blank: 1, 2, 4 or 8, the cheapest)
    price per GPU-hour -> rented at that price (blank: the catalog's cloud price)
    batch              -> not used: the review picks the largest batch that meets the TPOT target
"""

from __future__ import annotations

from planner.export.scenario import ScenarioError

#: Traffic and targets a workbook does not hold.
WORKBOOK_WORKLOAD = {
    "peak_requests_per_s": 10.0,
    "average_requests_per_s": 4.0,
    "ttft_target_s": 2.0,
    "tpot_target_s": 0.1,
    "growth_over_horizon": 0.0,
}


#: The average traffic as a share of the peak, for a workbook that states a peak (it holds no average): the
#: default workload's 4 / 10.
WORKBOOK_AVERAGE_SHARE = WORKBOOK_WORKLOAD["average_requests_per_s"] / WORKBOOK_WORKLOAD["peak_requests_per_s"]

#: The review's Assumptions: where the workload of a workbook comes from.
WORKBOOK_ORIGIN = (
    "workbook: its Inputs' peak traffic, output and prompt tokens (blank prompt: context - output) and targets; blank "
    "ones and the average (0.4 x peak): workbook defaults (docs/export.md)"
)


def workbook_scenario_data(inputs: dict, name: str) -> dict:
    """The scenario (as TOML-shaped data) for ``read_all_inputs`` output (``read_inputs``'s keys alone: the defaults):
    the mapping in the module docstring."""
    context = int(inputs["context"])
    out_high = max(1, context // 4)
    prompt_high = max(1, context - out_high)
    output = inputs.get("output_tokens")
    option = {
        "gpu": inputs["gpu"],
        "model": inputs["model"],
        "pricing": "cloud",
        "engine": inputs.get("engine") or "vllm",
    }
    for key in ("weight_precision", "kv_precision", "memory_utilization"):
        if inputs.get(key) is not None:
            option[key] = inputs[key]
    if inputs.get("gpus") is not None:
        option["gpus_per_replica"] = int(inputs["gpus"])
    if inputs.get("price_per_gpu_hour") is not None:
        option["cloud_usd_per_gpu_hour"] = float(inputs["price_per_gpu_hour"])
    workload = {
        **WORKBOOK_WORKLOAD,
        "prompt_tokens_high": prompt_high,
        "output_tokens_high": out_high,
        "prompt_tokens_mean": max(1, prompt_high // 2),
        "output_tokens_mean": max(1, out_high // 2),
    }
    prompt = inputs.get("prompt_tokens")
    if output is not None:  # the Load sheet's requests: every one the same lengths, the prompt typed or what the
        output = int(output)  # context leaves
        prompt = int(prompt) if prompt is not None else context - output
        if prompt < 1:
            raise ScenarioError(
                f"{name}: a context of {context:,} tokens leaves no prompt beside the {output:,} output tokens on "
                "Inputs; give a longer context, fewer output tokens or the prompt tokens"
            )
        workload.update(
            prompt_tokens_high=prompt,
            prompt_tokens_mean=prompt,
            output_tokens_high=output,
            output_tokens_mean=output,
        )
    elif prompt is not None:  # the prompt typed, the output the default's share of what the context leaves
        out_high = max(1, min(context // 4, context - int(prompt)))
        workload.update(
            prompt_tokens_high=int(prompt),
            prompt_tokens_mean=int(prompt),
            output_tokens_high=out_high,
            output_tokens_mean=max(1, out_high // 2),
        )
    highs = {k: inputs.get(k) for k in ("prompt_tokens_high", "output_tokens_high")}
    if output is not None:  # the Load sheet's long tail: the high lengths at their percentile (trial 28 F8)
        workload.update({k: int(v) for k, v in highs.items() if v is not None})
    q = inputs.get("latency_percentile")
    if q is not None:
        workload["latency_percentile"] = float(q)
    if output is not None and any(v is not None for v in highs.values()):
        lq = inputs.get("length_percentile")
        workload["high_percentile"] = float(lq if lq is not None else q if q is not None else 95)
    if inputs.get("peak_requests_per_s") is not None:
        peak = float(inputs["peak_requests_per_s"])
        workload.update(peak_requests_per_s=peak, average_requests_per_s=peak * WORKBOOK_AVERAGE_SHARE)
    for key in ("ttft", "tpot"):
        if inputs.get(f"{key}_target_ms") is not None:
            workload[f"{key}_target_s"] = float(inputs[f"{key}_target_ms"]) / 1e3
    if inputs.get("prefix_hit_rate"):  # blank or 0: nothing cached
        workload["prefix_hit_rate"] = float(inputs["prefix_hit_rate"])
    if inputs.get("burstiness") is not None:
        workload["burstiness"] = float(inputs["burstiness"])
    return {"title": f"Budget review of what-if workbook {name}", "workload": workload, "option": [option]}
