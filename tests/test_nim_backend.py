"""How a published NVIDIA NIM run is read (issue 21/22: NIM 1.8.0's Llama-3.3-70B rows): NIM serves an optimized
profile's prebuilt TensorRT engines where its manifest has one ("The optimized TensorRT-LLM profiles are preferred over
vLLM when available", docs.nvidia.com/nim/large-language-models/latest/optimization.html); the llama-3.3-70b-instruct
manifest of release 1.8.5 (cloudera/Model-Hub manifests/1.9.0/nim/meta/llama-3.3-70b-instruct.yaml, commit 9046f33a)
lists profile 7ee2258631ed: gpu h100, llm_engine tensorrt_llm, precision fp8, profile throughput, tp 2, shipping
trtllm_engine/rank0.engine and rank1.engine, TensorRT engines (TensorRT-LLM 0.x)."""

from __future__ import annotations

import pytest

from planner.accuracy.predict import row_scheduler
from planner.accuracy.published import _engine_name, load_decode_rows, reference_dir
from planner.engines.profiles import NIM_BACKEND, engine_for_version, engine_profile
from planner.serving.benchmark import scheduler_of
from planner.serving.simulate import Scheduler, StepTable, chunked_prefill_default, simulate


class TestNimBackend:
    def test_engine_cell_names_nim(self):
        """perf_public.csv's engine cell "NVIDIA NIM" is NIM, not an engine called "nvidia"."""
        assert _engine_name("NVIDIA NIM") == ("nim", "")
        assert _engine_name("TensorRT-LLM") == ("tensorrt-llm", "")

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


class TestTensorRtLlmUnchunkedContext:
    """TensorRT-LLM runs a prompt whole in one step by default (``planner.serving.simulate.UNCHUNKED_KINDS``:
    ``BaseLlmArgs.enable_chunked_prefill`` default False, tensorrt_llm/llmapi/llm_args.py, NVIDIA/TensorRT-LLM
    fcd3f316); vLLM V1 splits the next prompt at the step's token budget."""

    # decode steps 10 ms at any batch; a step of t prompt tokens t / 10,000 s (1 ms per 10 tokens); nothing shared
    TABLE = StepTable((0.01,) * 4, (0.01,) * 4, 100.0, 8200.0, (0.0, 10000.0), (0.0, 1.0), 0.0)

    def _ttfts(self, scheduler: Scheduler) -> list[float]:
        res = simulate(self.TABLE, scheduler, 0, 0, 2, lengths=[(100, 3), (8192, 2)])
        values, counts = res.samples.ttft
        return [round(float(v), 6) for v, n in zip(values, counts, strict=True) for _ in range(int(n))]

    def test_a_prompt_that_does_not_fit_the_budget_left_waits_whole(self):
        """A 100-token and an 8,192-token prompt at once, budget 8,192 tokens a step. TensorRT-LLM: step 1 prefills
        the short one (10 ms); while it decodes (one budget token each step) the long one never fits whole, so it
        waits until the short one's 3 tokens are out (steps 2, 3: 10 ms each) and then runs alone (819.2 ms): TTFTs
        10 ms and 849.2 ms. vLLM fills step 1 with 100 + 8,092 tokens (819.2 ms) and ends the long prompt's 100 with
        the short one's decode (20 ms): 819.2 ms and 839.2 ms."""
        assert self._ttfts(Scheduler(4, 8192, kind="tensorrt-llm")) == pytest.approx([0.01, 0.8492])
        assert self._ttfts(Scheduler(4, 8192, kind="vllm")) == pytest.approx([0.8192, 0.8392])

    def test_defaults_and_override(self):
        """TensorRT-LLM's default is unchunked, vLLM's and SGLang's chunked; ``chunked_prefill=True`` turns a
        TensorRT-LLM scheduler into vLLM's splitting (its admission reserve aside: here both reserve nothing)."""
        assert not chunked_prefill_default("tensorrt-llm") and chunked_prefill_default("vllm")
        assert chunked_prefill_default("sglang")
        chunked = Scheduler(4, 8192, kind="tensorrt-llm", chunked_prefill=True)
        assert chunked.chunks_prompts
        assert self._ttfts(chunked) == pytest.approx([0.8192, 0.8392])
