"""How inference engines run a model: vLLM, SGLang and TensorRT-LLM, as facts the model reads.

- ``profiles``: one ``EngineProfile`` per engine and release (memory rules, defaults, fitted step costs).
- ``architecture``: parameter counts and per-layer facts from a catalog model (``model_facts``).
- ``kernel_floor``: per-kernel time floors derived from measured kernel tables.
- ``vllm_log``: what a vLLM start-up log says about the KV cache, to check the memory rules against.

May import ``planner.model``, ``planner.catalog``, ``planner.errors``, ``planner.units`` and ``planner.io``;
never a surface (CLI, Excel, workbook, export).
"""
