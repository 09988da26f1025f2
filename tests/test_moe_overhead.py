"""The per-MoE-layer step time: the formula on a hand-worked case, and its value re-derived from the shipped
kernel latencies (``planner.engines.kernel_floor``)."""

from __future__ import annotations

import pytest

from planner import api
from planner.engines import kernel_floor
from planner.engines.profiles import engine_profile
from planner.model import step_overhead_s
from planner.model.facts import EngineFacts, ModelFacts, field_names


def _facts(cls, **values):
    return cls(**{name: values.get(name, 0.0) for name in field_names(cls)})


def test_step_overhead_by_hand():
    """61 layers of which 58 MoE (DeepSeek-V3's config.json: num_hidden_layers 61, first_k_dense_replace 3), an H100's
    fused-MoE floor (26.3 us + 3.0 us per doubling): one token 1.2 ms + 58 x 26.3 us = 2.7254 ms; 8 tokens and any
    more (measured up to 8) 58 x 35.3 us = 2.0474 ms more than the fixed 1.2 ms."""
    model = _facts(ModelFacts, num_layers=61.0, moe_layers=58.0)
    limits = _facts(EngineFacts, step_overhead_s=1.2e-3, moe_floor_s=26.3e-6, moe_floor_per_doubling_s=3.0e-6)
    assert step_overhead_s(model, limits) == pytest.approx(2.7254e-3, rel=1e-12)
    assert step_overhead_s(model, limits, 8.0) == pytest.approx(1.2e-3 + 58 * 35.3e-6, rel=1e-12)
    assert step_overhead_s(model, limits, 4096.0) == step_overhead_s(model, limits, 8.0)
    dense = _facts(ModelFacts, num_layers=61.0, moe_layers=0.0)
    assert step_overhead_s(dense, limits, 8.0) == pytest.approx(1.2e-3, rel=1e-12)


def test_the_floor_grows_with_the_batch_up_to_eight_tokens():
    """Mixtral-8x7B (32 MoE layers) on 2 x H100: a step of 8 sequences carries 32 x 3 x 3.0 us more MoE floor than a
    step of 1, besides 7 more sequences' 0.059 ms (vLLM 0.13's synchronous host loop, summed); Llama-3.1-8B (dense)
    only the sequences'."""
    for model, moe_s in (("Mixtral-8x7B", 32 * 3 * 3.0e-6), ("Llama-3.1-8B", 0.0)):
        one, eight = (
            api.decode_step("H100 SXM 80GB", model, 1024, gpus=2, batch=b, engine="vllm==0.13.0").overhead_s
            for b in (1, 8)
        )
        assert eight - one == pytest.approx(moe_s + 7 * 0.059e-3, abs=1e-12), model


def test_each_gpu_has_its_own_floor_and_others_borrow_the_measured_mean():
    """H100 26.3 us, H200 26.7 us at one token; MI300X borrows its curves' source (H100), L40S (no MoE kernels measured)
    the Hopper mean, 26.5 us, each with a note that says so; vLLM and SGLang run the measured kernel, TensorRT-LLM its
    own (noted)."""
    from planner.catalog import default_catalog
    from planner.catalog.resolve import gpu_numbers
    from planner.engines import kernel_curves

    cat = default_catalog()
    got = {g: gpu_numbers(cat.gpu(g))["moe_floor_s"] for g in ("H100", "H200", "L40S", "MI300X")}
    assert got == {"H100": 26.3e-6, "H200": 26.7e-6, "L40S": 26.5e-6, "MI300X": 26.3e-6}
    assert kernel_curves.moe_floor_note("H100 SXM 80GB", "vllm", 8) == ""
    assert kernel_curves.moe_floor_note("H100 SXM 80GB", "sglang", 4) == ""
    assert "not measured on L40S" in kernel_curves.moe_floor_note("L40S", "vllm", 1)
    assert "not measured on MI300X" in kernel_curves.moe_floor_note("MI300X", "vllm", 1)
    note = kernel_curves.moe_floor_note("H100 SXM 80GB", "tensorrt-llm", 64)
    assert "for tensorrt-llm's own MoE kernels or beyond 8 tokens per step" in note and "27-38 us" in note


class TestBlackwellFloors:
    """B200, B300, GB200 and GB300 run FlashInfer's TensorRT-LLM-gen fused MoE under vLLM (its MoE oracles list that
    backend first off Hopper), measured by aiconfigurator 0.12.0 at 11-12 us a layer at one token, under half of
    Hopper's Triton floor; the SM 12.0 Blackwells, which cannot run those kernels, keep the Hopper stand-in."""

    @pytest.fixture(autouse=True)
    def _on(self, monkeypatch):
        from planner.catalog import lookup, resolve
        from planner.engines import kernel_curves

        monkeypatch.setattr(kernel_curves, "BLACKWELL_MOE_FLOORS", True)
        monkeypatch.setattr(resolve, "_ONE", {})  # scenarios and GPUs resolved before the switch was set
        monkeypatch.setattr(lookup, "_MEMO", {})

    def test_their_own_floor_and_no_note(self):
        from planner.catalog import default_catalog
        from planner.catalog.resolve import gpu_numbers
        from planner.engines import kernel_curves

        cat = default_catalog()
        got = {g: gpu_numbers(cat.gpu(g))["moe_floor_s"] for g in ("B200", "B300", "GB200", "GB300")}
        assert got == {"B200": 10.1e-6, "B300": 9.0e-6, "GB200": 10.5e-6, "GB300": 9.9e-6}
        assert kernel_curves.moe_floor_note("B200 180GB", "sglang", 8) == ""

    def test_sm120_blackwells_borrow_hoppers_not_b200s(self):
        """An RTX PRO 6000 takes B200's kernel curves (its architecture's nearest measured GPU) but not B200's MoE
        floor: FlashInfer's TensorRT-LLM-gen MoE kernels are built for SM 10.x."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import gpu_numbers
        from planner.engines.kernel_curves import MOE_FLOOR_UNMEASURED, source_gpu

        cat = default_catalog()
        for name in ("RTX PRO 6000 Blackwell Server Edition", "RTX 5090"):
            gpu = cat.gpu(name)
            assert source_gpu(gpu.name, gpu.architecture) == "B200 180GB"
            assert gpu_numbers(gpu)["moe_floor_s"] == MOE_FLOOR_UNMEASURED[0]

    def test_tensorrt_llm_on_b200_says_whose_floor_stands_in(self):
        from planner.engines import kernel_curves

        note = kernel_curves.moe_floor_note("B200 180GB", "tensorrt-llm", 4)
        assert note == (
            "MoE kernel floor not measured for tensorrt-llm's own MoE kernels: FlashInfer's fused MoE as vLLM runs it "
            "on B200 180GB stands in (10-31 us per MoE layer over the measured GPUs, kernels and 1-8 tokens)"
        )

    def test_a_deepseek_decode_step_on_b200_carries_the_measured_floor(self, monkeypatch):
        """DeepSeek-V3's 58 MoE layers at one token: 58 x (26.5 - 10.1) us = 0.951 ms less per-step floor than with
        the Hopper stand-in."""
        from planner.catalog import lookup, resolve
        from planner.engines import kernel_curves

        on = api.decode_step("B200", "deepseek-v3", 4096, gpus=8, batch=1).overhead_s
        monkeypatch.setattr(kernel_curves, "BLACKWELL_MOE_FLOORS", False)
        monkeypatch.setattr(resolve, "_ONE", {})
        monkeypatch.setattr(lookup, "_MEMO", {})
        off = api.decode_step("B200", "deepseek-v3", 4096, gpus=8, batch=1).overhead_s
        assert off - on == pytest.approx(58 * (26.5e-6 - 10.1e-6), rel=1e-9)


class TestA100Floor:
    """A100 SXM under switch ``a100-moe-floor`` (off as shipped, s191): SGLang 0.5.10's Triton fused MoE measured there
    (27.6 us + 6.9 us per doubling); the Ampere GPUs that take A100's kernel curves (an RTX 3090) borrow it, as Hopper
    GPUs borrow H100's."""

    def test_a100_and_its_architecture_take_it(self, monkeypatch):
        from planner.catalog import default_catalog, lookup, resolve
        from planner.catalog.resolve import gpu_numbers
        from planner.engines import kernel_curves

        monkeypatch.setattr(kernel_curves, "AMPERE_MOE_FLOOR", True)
        monkeypatch.setattr(resolve, "_ONE", {})
        monkeypatch.setattr(lookup, "_MEMO", {})
        cat = default_catalog()
        got = {g: gpu_numbers(cat.gpu(g))["moe_floor_s"] for g in ("A100", "A100-40GB", "RTX 3090", "H100", "L40S")}
        assert got == {"A100": 27.6e-6, "A100-40GB": 27.6e-6, "RTX 3090": 27.6e-6, "H100": 26.3e-6, "L40S": 26.5e-6}
        assert kernel_curves.moe_floor_note("A100 SXM 80GB", "vllm", 4) == ""
        assert kernel_curves.moe_floor_note("RTX 3090", "vllm", 4, "Ampere") == (
            "MoE kernel floor not measured on RTX 3090: SGLang's Triton fused MoE on A100 SXM 80GB stands in (29-51 us "
            "per MoE layer over the measured GPUs, kernels and 1-8 tokens)"
        )

    def test_off_as_shipped(self):
        from planner.catalog import default_catalog
        from planner.catalog.resolve import gpu_numbers
        from planner.engines import kernel_curves

        assert gpu_numbers(default_catalog().gpu("A100"))["moe_floor_s"] == 26.5e-6
        assert "vLLM's Triton fused MoE on H100/H200 stands in" in kernel_curves.moe_floor_note(
            "RTX 3090", "vllm", 4, "Ampere"
        )


def test_kernel_bytes_by_hand():
    """gpt-oss-120b's MoE shape (config.json: hidden 2880, intermediate 2880, 4 of 128 experts per token), 4 tokens,
    mxfp4 (4 bits + an 8-bit scale per 32 values): 16 experts x 3 x 2880 x 2880 x 0.53125 B = 211,507,200 B."""
    row = dict(op="moe", tokens="4", topk="4", hidden_size="2880", inter_size="2880", tp_size="1", dtype="w4a16_mxfp4")
    assert kernel_floor.kernel_bytes(row) == 211_507_200
    assert kernel_floor.kernel_bytes(dict(op="gemm", n="4096", k="1024")) == 4096 * 1024 * 2


def test_floor_is_the_intercept_of_latency_against_bytes():
    """Latencies made as 40 us + bytes at the full H100 SXM bandwidth (3.35 TB/s, its datasheet) give back 40 us."""
    rows = [
        dict(op="gemm", gpu="H100 SXM 80GB", kernel_source="k", n=str(n), k="4096")
        | {"latency_ms": str((40e-6 + n * 4096 * 2 / 3.35e12) * 1e3)}
        for n in (1024, 4096, 16384)
    ]
    assert kernel_floor.floors_s(rows, "gemm")[("H100 SXM 80GB", "k")] == pytest.approx(40e-6, rel=1e-9)


def test_shipped_floors_are_the_kernel_derivation():
    """kernel_curves' Triton (Hopper) and TensorRT-LLM-gen (Blackwell) floors re-derived from aiconfigurator 0.12.0's
    measurements of vLLM 0.24.0 kernels in catalogs/reference/kernel_latency_aic.csv (``kernel_floor.moe_floor_line``),
    to the 0.1 us they are shipped at; the stand-in is the Hopper mean; each table's stated spread is its GPUs' median
    points at 1-8 tokens, rounded outwards; the single median floor of every Hopper GPU, kernel and token count (the
    old flat term) is 33.6 us."""
    import math

    from planner.engines.kernel_curves import (
        MOE_FLOOR_SPREADS_S,
        MOE_FLOOR_UNMEASURED,
        MOE_FLOORS_AMPERE,
        MOE_FLOORS_TRITON,
        MOE_FLOORS_TRTLLM_GEN,
    )

    for gpu, (at_one, per_doubling) in (MOE_FLOORS_TRITON | MOE_FLOORS_TRTLLM_GEN | MOE_FLOORS_AMPERE).items():
        derived = kernel_floor.moe_floor_line(gpu)
        assert derived == pytest.approx((at_one, per_doubling), abs=0.05e-6), gpu
    assert MOE_FLOOR_UNMEASURED == pytest.approx(
        tuple(sum(v) / 2 for v in zip(*MOE_FLOORS_TRITON.values(), strict=True)), abs=1e-12
    )
    tables = (("triton", MOE_FLOORS_TRITON), ("ampere", MOE_FLOORS_AMPERE), ("trtllm-gen", MOE_FLOORS_TRTLLM_GEN))
    for table, floors in tables:
        points = [p for gpu in floors for p in kernel_floor.moe_floor_points(gpu).values()]
        low, high = MOE_FLOOR_SPREADS_S[table]
        assert (round(low * 1e6), round(high * 1e6)) == (math.floor(min(points) * 1e6), math.ceil(max(points) * 1e6))
    assert kernel_floor.moe_layer_overhead_from_kernels() == pytest.approx(33.6e-6, abs=0.1e-6)
    assert engine_profile("vllm").moe_layer_overhead_s == 0.0  # the engine adds nothing beyond the GPU's floor
