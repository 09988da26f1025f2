"""bench/rate_ttft_parts.py: vLLM's rated runs with one part of the run changed at a time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from rate_ttft_parts import SHARED_NEED, rated_vllm_rows, vllm_cached_need  # noqa: E402

import planner.serving.state as state  # noqa: E402


class TestVllmWarmPrompt:
    """vLLM V1 ``KVCacheManager.get_computed_blocks`` (v0.14.1 ``vllm/v1/core/kv_cache_manager.py`` l.184-189): at
    most P - 1 tokens hit, in whole 16-token blocks, so a served-before prompt computes P - floor((P - 1) / 16) x 16."""

    @pytest.mark.parametrize(("prompt", "computed"), [(207, 15), (16, 16), (17, 1), (1, 1), (1000, 8)])
    def test_computes_its_last_partial_block(self, prompt, computed):
        """207 tokens: 12 blocks (192) hit, 15 computed; 16 tokens: the one block holds the last token, all 16
        computed; 17: one block hit, one computed."""
        assert vllm_cached_need(prompt, 0.97) == computed

    def test_a_cold_prompt_computes_all_of_it(self):
        """No share cached: the whole prompt, as the simulation's own rule gives."""
        assert vllm_cached_need(207, 0.0) == 207 == SHARED_NEED(207, 0.0)

    def test_the_script_leaves_the_simulations_rule_in_place(self):
        """Importing the script swaps nothing: the state module keeps its own rule."""
        assert state.cached_need is SHARED_NEED


def test_the_rated_vllm_runs():
    """The 21 rated vLLM figures of load_public.csv: surajssd's 0.8.3 (LD001-LD003), the H200 report's 0.14.1
    (LD005-LD012), the sglang v0.3.0 blog's 0.6.0 (LD015, LD017, LD019, LD021) and s168's RTX 3090 0.4.1
    (LD098-LD103)."""
    ids = [r.record_id for r in rated_vllm_rows()]
    assert ids == [f"LD{i:03d}" for i in (1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 15, 17, 19, 21, *range(98, 104))]
