"""An engine that does not run on a GPU's vendor is refused on every surface: TensorRT-LLM is built on CUDA and its
support matrix lists only NVIDIA architectures ("Supported Hardware", nvidia.github.io/TensorRT-LLM, read
2026-12-05). A fifth user trial (s197) had `plan` size it on MI300X and Gaudi 3, and a review recommend it."""

from __future__ import annotations

import math

import pytest
from cli_support import SCENARIO, one_line, run

import planner
from planner.errors import InvalidInputError

REFUSAL = (
    "TensorRT-LLM (engine 'tensorrt-llm') runs on NVIDIA GPUs only; MI300X is AMD's: use engine vllm or sglang there"
)


class TestAnNvidiaOnlyEngineOnAnotherVendor:
    def test_plan_refuses_it_in_one_line(self):
        result = run("plan", "--gpu", "MI300X", "--model", "llama3.1-70b", "--context", "8192", "--engine", "trtllm")
        assert REFUSAL in one_line(result, 2)

    def test_gaudi_is_refused_too(self):
        with pytest.raises(InvalidInputError, match="runs on NVIDIA GPUs only; Gaudi 3 is Intel's"):
            planner.max_batch("Gaudi 3", "llama3.1-8b", 8192, engine="tensorrt-llm")

    def test_a_sweep_marks_only_those_scenarios(self):
        """H100 keeps its batch (the same as alone); MI300X is NaN where errors are coerced."""
        got = planner.max_batch(["H100", "MI300X"], "llama3.1-8b", 8192, engine="tensorrt-llm", errors="coerce")
        assert got[0] == planner.max_batch("H100", "llama3.1-8b", 8192, engine="tensorrt-llm") and math.isnan(got[1])

    def test_export_refuses_the_option(self, tmp_path):
        path = tmp_path / "s.toml"
        path.write_text(SCENARIO.replace('gpu = "H100"', 'gpu = "MI300X"\nengine = "tensorrt-llm"'))
        result = run("export", str(path), "-o", str(tmp_path / "r.md"))
        assert REFUSAL in one_line(result, 2) and not (tmp_path / "r.md").exists()

    def test_vllm_and_sglang_still_plan_on_amd(self):
        for engine in ("vllm", "sglang"):
            assert planner.max_batch("MI300X", "llama3.1-70b", 8192, engine=engine) > 0
