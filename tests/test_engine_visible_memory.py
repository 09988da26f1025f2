"""The memory the engine sees on AMD's 256 and 288 GiB parts is AMD's own overhead, not H100's ratio (trial 27 F8).

Before: MI325X 253.39 GiB and MI355X 285.06 GiB, 0.9898 of the part's memory (H100's 79.18 of 80 GiB). Sources
(catalogs/gpus.toml, engine_visible_memory_source): MI300X "GPU 0 has a total capacity of 191.98 GiB" (vLLM issue
#7951); MI325X "AMD MI325X x 8 (255.98 GiB HBM each)", "GPU 0 has a total capacity of 255.98 GiB" (vLLM issue
#41962); MI355X: no public log names it, so the same-vendor rule: 288 GiB less MI300X's and MI325X's 0.02 GiB.
"""

from __future__ import annotations

import re

import pytest
from cli_support import run

from planner.catalog import default_catalog

CAT = default_catalog()
GIB = 2**30


def engine_sees(gpu: str) -> str:
    """``planner plan``'s "memory the engine sees" line for Llama-3.3-70B at 4,096 tokens."""
    out = run("plan", "--gpu", gpu, "--model", "llama3.3-70b", "--context", "4096")
    assert out.exit_code == 0, out.output
    return re.search(r"^\s*memory the engine sees\s+(.+)$", out.stdout, re.M)[1].strip()


class TestAmdPartsLoseWhatAmdsLogsSay:
    @pytest.mark.parametrize(
        ("gpu", "line"),
        [
            ("MI300X", "206.14 GB (191.98 GiB of 206.16 GB = 192 GiB)"),  # unchanged: the rule's source
            ("MI325X", "274.86 GB (255.98 GiB of 274.88 GB = 256 GiB)"),  # was 272.07 GB (253.39 GiB)
            ("MI355X", "309.22 GB (287.98 GiB of 309.24 GB = 288 GiB)"),  # was 306.08 GB (285.06 GiB)
        ],
    )
    def test_the_plan_line(self, gpu, line):
        assert engine_sees(gpu) == line

    @pytest.mark.parametrize(("gpu", "gib"), [("MI300X", 192), ("MI325X", 256), ("MI355X", 288)])
    def test_each_loses_0_02_gib_not_about_1_percent(self, gpu, gib):
        g = CAT.gpu(gpu)
        assert g.memory_bytes == gib * GIB
        assert g.memory_bytes - g.engine_visible_memory_bytes == pytest.approx(0.02 * GIB, abs=5 * 2**20)

    def test_mi325x_cites_the_log_that_names_the_card(self):
        src = CAT.gpu("MI325X").engine_visible_memory_source
        assert "https://github.com/vllm-project/vllm/issues/41962" in src and "MI325X x 8 (255.98 GiB" in src

    def test_mi355x_says_it_is_the_same_vendor_rule(self):
        assert CAT.gpu("MI355X").engine_visible_memory_source.startswith("Same-vendor rule, not measured")


class TestH200:
    def test_the_plan_line(self):
        """139.80 GiB: torch's OOM message on 8x H200 (prime-rl's benchmark results, catalogs/gpus.toml); was the
        98.98% fallback, 149.85 GB (139.56 GiB)."""
        assert engine_sees("H200") == "150.11 GB (139.80 GiB of 151.40 GB = 141 GiB)"
