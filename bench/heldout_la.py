"""Run llm-analysis's inference estimate on queries from bench/heldout.py; run by the llm-analysis venv's Python.

    /work/venvs/la/bin/python bench/heldout_la.py QUERIES.json CACHE.json

Each query is ``{"key", "model", "gpu", "dtype", "tp", "batch", "input_len", "output_len"}``: ``model`` a
llm-analysis ``ModelConfig`` as a dict (written from the planner's catalog), ``gpu`` and ``dtype`` names of its
shipped configs. Its result (TTFT = ``prefill_latency``, TPOT = ``decode_latency``, both ms, and the static
batch's output tokens/s = batch x output / ``total_latency``, and llm-analysis's version, or the error it raised) is added to CACHE.json under
``key``. Efficiencies are llm-analysis's defaults (its ``infer`` entry point: flops and HBM efficiency 1). Not
part of the planner package: it imports llm-analysis only.
"""

from __future__ import annotations

import argparse
import logging

from estimator_cache import run_cached


def main(queries_path: str, cache_path: str) -> None:
    logging.disable(logging.CRITICAL)
    from importlib.metadata import version

    from llm_analysis.analysis import LLMAnalysis, ParallelismConfig
    from llm_analysis.config import ModelConfig, get_dtype_config_by_name, get_gpu_config_by_name

    def estimate(q: dict) -> dict:
        a = LLMAnalysis(
            ModelConfig(**q["model"]),
            get_gpu_config_by_name(q["gpu"]),
            get_dtype_config_by_name(q["dtype"]),
            ParallelismConfig(tp_size=q["tp"]),
        )
        r = a.inference(batch_size_per_gpu=q["batch"], seq_len=q["input_len"], num_tokens_to_generate=q["output_len"])
        return {
            "ttft_ms": 1e3 * float(r["prefill_latency"]),
            "tpot_ms": 1e3 * float(r["decode_latency"]),
            "throughput_tok_s": q["batch"] * q["output_len"] / float(r["total_latency"]),
            "version": version("llm-analysis"),
        }

    run_cached(queries_path, cache_path, estimate, "llm-analysis")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("queries", help="QUERIES.json (written by bench/heldout.py)")
    parser.add_argument("cache", help="CACHE.json, each result added under its query's key")
    args = parser.parse_args()
    main(args.queries, args.cache)
