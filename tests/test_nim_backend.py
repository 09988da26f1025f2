"""How a published NVIDIA NIM run is read (issue 21/22: NIM 1.8.0's Llama-3.3-70B rows): NIM serves an optimized
profile's prebuilt TensorRT engines where its manifest has one ("The optimized TensorRT-LLM profiles are preferred over
vLLM when available", docs.nvidia.com/nim/large-language-models/latest/optimization.html); the llama-3.3-70b-instruct
manifest of release 1.8.5 (cloudera/Model-Hub manifests/1.9.0/nim/meta/llama-3.3-70b-instruct.yaml, commit 9046f33a)
lists profile 7ee2258631ed: gpu h100, llm_engine tensorrt_llm, precision fp8, profile throughput, tp 2, shipping
trtllm_engine/rank0.engine and rank1.engine, TensorRT engines (TensorRT-LLM 0.x)."""

from __future__ import annotations

from planner.accuracy.predict import row_scheduler
from planner.accuracy.published import _engine_name, load_decode_rows, reference_dir
from planner.engines.profiles import NIM_BACKEND, engine_for_version, engine_profile
from planner.serving.benchmark import scheduler_of


class TestNimBackend:
    def test_engine_cell_names_nim(self):
        """perf_public.csv's engine cell "NVIDIA NIM" is NIM, not an engine called "nvidia"."""
        assert _engine_name("NVIDIA NIM") == "nim"
        assert _engine_name("TensorRT-LLM") == "tensorrt-llm"

    def test_nim_release_maps_to_tensorrt_engines(self):
        """NIM's own version (1.8.0) is not TensorRT-LLM's: any NIM release maps to the 0.x TensorRT-engine profile,
        where a TensorRT-LLM 1.8 would map to the PyTorch backend."""
        profile, why = engine_for_version("nim", "1.8.0 (Llama-3.3-70b-Instruct container)")
        assert NIM_BACKEND == "tensorrt-llm-0" and profile.name == "tensorrt-llm-0"
        assert "TensorRT" in why
        assert engine_for_version("tensorrt-llm", "1.8.0")[0].name == "tensorrt-llm"
        assert engine_profile("NIM").name == "tensorrt-llm-0"

    def test_nim_rows_run_tensorrt_llm_scheduler(self):
        """The NIM18 rows are simulated with TensorRT-LLM's scheduler (GUARANTEED_NO_EVICT admission), not vLLM's;
        other engines' rows keep theirs."""
        rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "perf_public.csv")}
        nim = rows["NIM18-004"]
        assert nim.engine == "nim"
        assert row_scheduler(nim) == "tensorrt-llm"
        assert scheduler_of(engine_profile("tensorrt-llm-0")) == "tensorrt-llm"
        kinds = {r.engine: row_scheduler(r) for r in rows.values() if r.engine != "nim"}
        assert kinds.get("vllm") == "vllm" and kinds.get("sglang") == "sglang"
        assert kinds.get("lmdeploy") == "vllm"  # no simulation of its own: vLLM's, as before
