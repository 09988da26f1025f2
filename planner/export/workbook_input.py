"""A what-if workbook made by ``planner workbook``, read back as a one-option scenario.

The workbook describes one deployment (GPU, model, context, precisions, GPU count, memory utilization, price,
engine) and no traffic, so the review uses the stated workload below; every default is printed on the
review's Assumptions sheet ("workbook default"). Reading is done by ``planner.workbook.read_inputs``
(defusedxml, marker check): a file it did not make is refused with one line.

    context C tokens   -> p95 output = C // 4 (at least 1), p95 prompt = C - p95 output; means = half of those
    gpus N             -> exactly N GPUs per replica (blank: 1, 2, 4 or 8, the cheapest)
    price per GPU-hour -> rented at that price (blank: the catalog's cloud price)
    batch              -> not used: the review picks the largest batch that meets the TPOT target
"""

from __future__ import annotations

from pathlib import Path

from planner.export.scenario import Scenario, parse_scenario

#: Traffic and targets a workbook does not hold.
WORKBOOK_WORKLOAD = {
    "peak_requests_per_s": 10.0,
    "average_requests_per_s": 4.0,
    "ttft_target_s": 2.0,
    "tpot_target_s": 0.1,
    "growth_over_horizon": 0.0,
}


def workbook_scenario_data(inputs: dict, name: str) -> dict:
    """The scenario (as TOML-shaped data) for ``read_inputs`` output: the mapping in the module docstring."""
    context = int(inputs["context"])
    out_high = max(1, context // 4)
    prompt_high = max(1, context - out_high)
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
    return {"title": f"Budget review of what-if workbook {name}", "workload": workload, "option": [option]}


def scenario_from_workbook(path: Path) -> Scenario:
    """Read the workbook's inputs (refusing files ``planner workbook`` did not make) and map them to a Scenario."""
    try:
        from planner.workbook import read_inputs
    except ImportError:  # pragma: no cover - the workbook package ships with planner
        from planner.export.scenario import ScenarioError

        raise ScenarioError(
            f"{path}: reading what-if workbooks needs planner.workbook, which is not installed"
        ) from None
    return parse_scenario(workbook_scenario_data(read_inputs(path), Path(path).name), str(path))
