"""vLLM's batching defaults by release (``planner.engines.profiles.VLLM_BATCHING_RELEASES``), pinned on the values each
release's ``vllm/engine/arg_utils.py`` sets for ``vllm serve`` (the sdists on PyPI; line numbers in the table's comment)."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.engines.profiles import (
    H100_H200_NAMES,
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
    return engine_profile("vllm").with_(**fields).batching_limits(g.memory_bytes, g.engine_device_name)


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
        assert engine_profile("vllm").batching_limits(g.memory_bytes, g.engine_device_name) == (2048, 256)
        assert vllm_batching_release("v0.19.0") == ("V1 0.9.0-0.27", {})

    def test_0_27_1_has_no_class_above_the_large_one(self):
        """v0.27.1 l.2544: the 0.9.0 rule alone; a B200 gets 8,192 / 1,024 as on an H100."""
        assert vllm_batching_release("0.27.1") == ("V1 0.9.0-0.27", {})
        assert limits("0.27.1", "B200 180GB") == (8192, 1024)

    def test_0_28_gives_16384_tokens_to_a_gpu_of_160_gib_or_more(self):
        """v0.28.0 l.2582-2591 ``if device_memory >= 160 * GiB_bytes``: 16,384 / 1,024 for ``vllm serve`` whatever the
        name (a B200, an MI300X); H200's 141 GiB keeps 8,192 / 1,024, an A100 80GB 2,048 / 256."""
        assert limits("0.28.0", "B200 180GB") == (16384, 1024)
        assert limits("0.32.0", "MI300X") == (16384, 1024)
        assert limits("0.28.0", "H200 SXM 141GB") == (8192, 1024)
        assert limits("0.28.0", "A100 SXM 80GB") == (2048, 256)

    def test_0_33_keeps_the_160_gib_class(self):
        """v0.33.0 l.2973-2982: the same class (the GB10 exception, l.2983-2987, names no catalog GPU)."""
        assert vllm_batching_release("0.33.0")[0] == "V1 0.33.0 and later"
        assert limits("0.33.0", "GB200 NVL72") == (16384, 1024)
        assert limits("0.33.0", "H100 SXM 80GB") == (8192, 1024)

    def test_an_explicit_budget_beats_every_class(self):
        """``--max-num-batched-tokens`` / ``--max-num-seqs`` given: the class does not matter."""
        eng = engine_profile("vllm").with_(**vllm_batching_release("0.28.0")[1], max_num_batched_tokens=4096)
        g = default_catalog().gpu("B200 180GB")
        assert eng.batching_limits(g.memory_bytes, g.engine_device_name) == (4096, 1024)

    def test_rocm_before_0_9_2_runs_v0(self):
        """v0.8.3 l.1537: 'Non-CUDA is supported on V1, but off by default'; v0.9.2 l.1491: the platform's default."""
        assert vllm_batching_release("0.8.3 (rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410)")[0] == "V0"
        assert vllm_batching_release("v0.10.0 (ROCm build, rocm/vllm-dev:main image)")[0] == "V1 0.9.0-0.27"

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
        assert eng.batching_limits(g.memory_bytes, g.engine_device_name) == (8192, 256)
        assert engine_profile("vllm-0.10").batching_limits(g.memory_bytes, g.engine_device_name) == (8192, 1024)

    def test_other_engines_and_unversioned_cells_keep_their_profile(self):
        sglang = engine_profile("sglang")
        assert with_release_batching(sglang, "sglang", "0.3.0") is sglang
        vllm = engine_profile("vllm")
        assert with_release_batching(vllm, "vllm", "not stated (vLLM CI performance benchmark)") is vllm
        assert with_release_batching(vllm, "vllm", "v0.11.0") is vllm

    def test_predictions_do_not_apply_it(self):
        """Not shipped (docs/history.md, s107): SGL030-012 (vLLM 0.6.0 on H100) is predicted with today's
        8,192 / 1,024, not the 256 sequences its release would give it."""
        from planner.accuracy import predict

        vllm = engine_profile("vllm")
        assert with_release_kernels(vllm, "vllm", "0.6.0") is vllm
        (row,) = [r for r in predict.load_decode_rows() if r.record_id == "SGL030-012"]
        g = default_catalog().gpu("H100 SXM 80GB")
        used = predict._profile_for(row, None)
        assert used.batching_limits(g.memory_bytes, g.engine_device_name) == (8192, 1024)
        released = with_release_batching(used, row.engine, row.engine_version)
        assert released.batching_limits(g.memory_bytes, g.engine_device_name) == (8192, 256)


class TestTheShippedRuleIsVllmsByDeviceName:
    """vLLM 0.9.0 and later (the shipped profiles): 8,192 / 1,024 where ``device_memory >= 70 * GiB_bytes and "a100"
    not in device_name`` (vllm/engine/arg_utils.py v0.9.2 l.1629, v0.19.0 l.2053), else 2,048 / 256; the name is
    NVML's (``nvmlDeviceGetName``, vllm/platforms/cuda.py v0.11.0 l.605-607), what nvidia-smi prints."""

    @staticmethod
    def shipped(gpu: str) -> tuple[int, int]:
        g = default_catalog().gpu(gpu)
        return engine_profile("vllm").batching_limits(g.memory_bytes, g.engine_device_name)

    def test_an_a800_is_large(self):
        """'NVIDIA A800-SXM4-80GB' (nvidia-smi, dexmal/dexbotic #41), 81,920 MiB: no "a100" in it."""
        assert default_catalog().gpu("A800 SXM 80GB").engine_device_name == "NVIDIA A800-SXM4-80GB"
        assert self.shipped("A800 SXM 80GB") == (8192, 1024)

    def test_an_a100_80gb_is_small_by_name(self):
        """'NVIDIA A100-SXM4-80GB' (vLLM #2069) and 'NVIDIA A100 80GB PCIe' (driver 550.40.82's table) hold "a100"."""
        assert self.shipped("A100 SXM 80GB") == (2048, 256)
        assert self.shipped("A100 PCIe 80GB") == (2048, 256)

    def test_an_h100_is_large(self):
        """'NVIDIA H100 80GB HBM3', 81,559 MiB (gpu-burn #114)."""
        assert self.shipped("H100 SXM 80GB") == (8192, 1024)

    def test_memory_still_decides_without_a100_in_the_name(self):
        """RTX A6000 (48 GB) and L40S (48 GB) are under 70 GiB; MI300X (192 GB, no NVML name) is large."""
        assert self.shipped("RTX A6000") == (2048, 256)
        assert self.shipped("L40S") == (2048, 256)
        assert self.shipped("MI300X") == (8192, 1024)

    def test_the_name_test_ignores_case(self):
        """vLLM lowers the name before its test; so does the profile."""
        eng = engine_profile("vllm")
        assert not eng.large_gpu(80 * 2**30, "NVIDIA A100-SXM4-80GB")
        assert eng.large_gpu(80 * 2**30, "NVIDIA A800-SXM4-80GB")

    def test_tensorrt_llm_does_not_use_it(self):
        """TensorRT-LLM's profiles set 8,192 tokens and their sequences outright (BaseLlmArgs max_num_tokens 8192,
        max_batch_size 2048; 0.x engines built for 256): the same on an A100 and an A800."""
        for name in ("tensorrt-llm", "tensorrt-llm-0"):
            eng = engine_profile(name)
            limits = {
                gpu: eng.batching_limits(g.memory_bytes, g.engine_device_name)
                for gpu in ("A100 SXM 80GB", "A800 SXM 80GB", "H100 SXM 80GB")
                for g in [default_catalog().gpu(gpu)]
            }
            assert len(set(limits.values())) == 1, (name, limits)


def test_sglang_classes_go_by_memory_alone():
    """SGLang 0.5.20 memory_hook.py l.88-170: classes by ``gpu_mem`` only ("H100, A100" share one); no name test, so
    an A100 80GB and an A800 80GB get the same limits under the SGLang profile, and an A100 40GB the small ones."""
    eng = engine_profile("sglang")
    cat = default_catalog()
    got = {n: eng.batching_limits(cat.gpu(n).memory_bytes, cat.gpu(n).engine_device_name) for n in (
        "A100 SXM 80GB", "A800 SXM 80GB", "H100 SXM 80GB", "A100 SXM 40GB")}  # fmt: skip
    assert got["A100 SXM 80GB"] == got["A800 SXM 80GB"] == got["H100 SXM 80GB"] == (8192, 1024)
    assert got["A100 SXM 40GB"] == (2048, 256)


class TestDeviceNames:
    def test_each_device_name_reads_back_as_its_entry(self):
        """A name the driver prints finds the catalog entry that records it."""
        cat = default_catalog()
        named = [g for g in cat.gpus if g.device_name]
        assert len(named) >= 21
        for g in named:
            assert cat.gpu(g.device_name).name == g.name

    @pytest.mark.parametrize("gpu", sorted(g.name for g in default_catalog().gpus if g.device_name))
    def test_the_catalog_name_stands_in_with_the_same_verdict(self, gpu):
        """Where a GPU has a device name, its catalog name gives the same answer to every name rule vLLM has held
        ("a100" out; "h100" or "h200" in), so the catalog name is a fair stand-in where none is recorded. H20 and
        H800 are the parts 0.8.0-0.8.4 called small by name ('NVIDIA H20', 'NVIDIA H800')."""
        g = default_catalog().gpu(gpu)
        for names in (("a100",), H100_H200_NAMES):
            by_device = any(n in g.device_name.lower() for n in names)
            assert by_device == any(n in g.name.lower() for n in names), (g.name, names)


def test_0_8_x_named_h20_and_h800_small():
    """v0.8.3 l.1647-1669 and v0.8.4 l.1669-1682: 8,192 tokens only where "h100" or "h200" is in the name; the H20
    ('NVIDIA H20', nvtrust #128) and H800 ('NVIDIA H800', NVIDIA/DCGM #120) are not, GH200 ('NVIDIA GH200 120GB') is."""
    assert limits("0.8.4", "H20 96GB") == (2048, 256)
    assert limits("0.8.4", "H800 SXM 80GB") == (2048, 256)
    assert limits("0.8.4", "GH200 96GB") == (8192, 1024)
    assert limits("0.8.3", "H800 SXM 80GB") == (2048, 1024)


class TestNewerThanLogged:
    def test_a_release_after_0_27_gets_its_own_batching_with_the_newest_memory_profile(self):
        """``engine_for_version``: vLLM 0.30.0 is the 'vllm' profile's memory with 0.28's 160 GiB class, and says so;
        0.25.0 is the 'vllm' profile itself (its batching is 0.19.0's)."""
        from planner.engines.profiles import engine_for_version

        b200 = default_catalog().gpu("B200 180GB")
        eng, why = engine_for_version("vllm", "0.30.0")
        assert (
            eng.name == "vllm"
            and eng.activation_bytes_per_seq_vocab == engine_profile("vllm").activation_bytes_per_seq_vocab
        )
        assert eng.batching_limits(b200.memory_bytes, b200.engine_device_name) == (16384, 1024)
        assert "V1 0.28.0-0.32" in why
        assert engine_for_version("vllm", "0.25.0")[0] is engine_profile("vllm")

    def test_the_default_profile_stands_for_0_19(self):
        """The shipped 'vllm' profile is vLLM 0.11-0.19 (its memory terms fitted to 0.19.0 logs): a B200 keeps 0.19.0's
        8,192 / 1,024 (v0.19.0 l.2053)."""
        b200 = default_catalog().gpu("B200 180GB")
        assert engine_profile("vllm").batching_limits(b200.memory_bytes, b200.engine_device_name) == (8192, 1024)
        assert "0.19.0" in engine_profile("vllm").description
