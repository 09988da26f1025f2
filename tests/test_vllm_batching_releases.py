"""vLLM's batching defaults by release (``planner.engines.profiles.VLLM_BATCHING_RELEASES``), pinned on the values each
release's ``vllm/engine/arg_utils.py`` sets for ``vllm serve`` (the sdists on PyPI; line numbers in the table's comment)."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.engines.profiles import (
    NOT_H100_H200_ARCHITECTURES,
    VLLM_BATCHING_RELEASES,
    engine_profile,
    vllm_batching_release,
    with_release_batching,
    with_release_kernels,
)


def limits(version: str, gpu: str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) of the 'vllm' profile with ``version``'s defaults on ``gpu``."""
    _, fields = vllm_batching_release(version)
    g = default_catalog().gpu(gpu)
    return engine_profile("vllm").with_(**fields).batching_limits(g.memory_bytes, g.architecture)


class TestReleases:
    def test_v0_runs_256_sequences_on_every_gpu(self):
        """v0.6.0 arg_utils.py l.90 ``max_num_seqs: int = 256`` (V0): an H100 too."""
        assert limits("0.6.0", "H100 SXM 80GB")[1] == 256
        assert limits("0.4.3+rocm614", "MI300X")[1] == 256

    def test_0_8_3_gives_1024_sequences_to_every_gpu(self):
        """v0.8.3 l.1647-1669: 8,192 tokens only on an 'h100'/'h200' name, ``default_max_num_seqs = 1024`` always."""
        assert limits("0.8.3", "A100 SXM 40GB") == (2048, 1024)
        assert limits("0.8.3", "H100 SXM 80GB") == (8192, 1024)
        assert limits("0.8.3", "H200 SXM 141GB") == (8192, 1024)

    def test_0_8_4_gives_256_sequences_to_a_gpu_not_named_h100_or_h200(self):
        """v0.8.4 l.1669-1682: an MI300X of 192 GB is small by name."""
        assert limits("0.8.4", "MI300X") == (2048, 256)
        assert limits("0.8.4", "H100 SXM 80GB") == (8192, 1024)

    def test_0_8_5_counts_an_a100_80gb_as_large(self):
        """v0.8.5 l.1596-1609: ``device_memory >= 70 * GiB_bytes``, no name test."""
        assert limits("0.8.5", "A100 SXM 80GB") == (8192, 1024)
        assert limits("0.8.5", "A100 SXM 40GB") == (2048, 256)

    def test_0_9_2_excludes_the_a100_as_the_shipped_profile_does(self):
        """v0.9.2 l.1629 ``and "a100" not in device_name``: gpustack's Qwen3-8B A100 rows ran 2,048 / 256."""
        assert limits("v0.9.2", "A100 SXM 80GB") == (2048, 256)
        g = default_catalog().gpu("A100 SXM 80GB")
        assert engine_profile("vllm").batching_limits(g.memory_bytes, g.architecture) == (2048, 256)
        assert vllm_batching_release("v0.19.0") == ("V1 0.9.0 and later", {})

    def test_rocm_before_0_9_2_runs_v0(self):
        """v0.8.3 l.1537: 'Non-CUDA is supported on V1, but off by default'; v0.9.2 l.1491: the platform's default."""
        assert vllm_batching_release("0.8.3 (rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410)")[0] == "V0"
        assert vllm_batching_release("v0.10.0 (ROCm build, rocm/vllm-dev:main image)")[0] == "V1 0.9.0 and later"

    def test_a_cell_that_says_v0_is_v0_without_a_version(self):
        assert vllm_batching_release("rocm/vllm-dev:nightly_main_20250423 (V0 engine: VLLM_USE_V1=0)")[0] == "V0"
        assert vllm_batching_release("not stated (vLLM CI performance benchmark)") == ("", {})

    def test_rules_are_in_release_order(self):
        firsts = [first for first, _, _ in VLLM_BATCHING_RELEASES]
        assert firsts == sorted(firsts)


class TestApplying:
    def test_a_vllm_row_takes_its_release_defaults(self):
        """SGL030-012's vLLM 0.6.0 on H100: V0's 256 sequences, where the shipped profile has 1,024."""
        g = default_catalog().gpu("H100 SXM 80GB")
        eng = with_release_batching(engine_profile("vllm-0.10"), "vllm", "0.6.0")
        assert eng.name == "vllm-0.10"
        assert eng.batching_limits(g.memory_bytes, g.architecture) == (8192, 256)
        assert engine_profile("vllm-0.10").batching_limits(g.memory_bytes, g.architecture) == (8192, 1024)

    def test_other_engines_and_unversioned_cells_keep_their_profile(self):
        sglang = engine_profile("sglang")
        assert with_release_batching(sglang, "sglang", "0.3.0") is sglang
        vllm = engine_profile("vllm")
        assert with_release_batching(vllm, "vllm", "not stated (vLLM CI performance benchmark)") is vllm
        assert with_release_batching(vllm, "vllm", "v0.11.0") is vllm

    def test_predictions_do_not_apply_it(self):
        """Not shipped (docs/accuracy.md History, s107): a row's profile keeps today's batching defaults."""
        vllm = engine_profile("vllm")
        assert with_release_kernels(vllm, "vllm", "0.6.0") is vllm


@pytest.mark.parametrize("gpu", sorted(g.name for g in default_catalog().gpus))
def test_h100_h200_name_rule_on_the_catalog(gpu):
    """0.8.0-0.8.4 named a device large by 'h100' or 'h200' in its name; the architecture list gives the same on
    every catalog GPU except the two Hopper parts named otherwise (H20, H800: large here, small in those releases)."""
    g = default_catalog().gpu(gpu)
    by_name = "h100" in g.name.lower() or "h200" in g.name.lower()
    by_architecture = g.architecture not in NOT_H100_H200_ARCHITECTURES
    assert by_architecture == (by_name or g.name in ("H20 96GB", "H800 SXM 80GB"))
