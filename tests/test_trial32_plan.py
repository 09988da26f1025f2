"""Trial 32 (Lena: Qwen2.5-32B AWQ on L40S): plan's weights line split (F5), what "activations and runtime" holds
(F6), the precision alias said (F8)."""

import pytest

from planner.catalog import default_catalog
from planner.cli.plan import render_plan
from planner.engines.profiles import engine_profile
from planner.report import plan

GiB = 2**30


@pytest.fixture(scope="module")
def awq_plans():
    return {n: plan("L40S", "qwen2.5-32b", 8192, weight_precision="awq", gpus=n) for n in (1, 2)}


def test_int4_weights_split_into_parts_that_sum_to_the_whole(awq_plans):
    """F5: Qwen2.5-32B's catalog params (32,763,876,352, of them 1,557,795,840 kept 16-bit: 2 x 152,064 x 5,120
    embedding and output head + 660,480 norms) at int4's 4 bits + a 16-bit scale per 128 (catalogs/precisions.toml):
    31,206,080,512 x 0.5 = 15,603,040,256 B of values, x 16 / 128 / 8 = 487,595,008 B of scales, x 2 B kept."""
    p = awq_plans[1]
    values, scales, kept, experts = p.weight_parts
    assert values == pytest.approx(31_206_080_512 * 0.5)
    assert scales == pytest.approx(31_206_080_512 * 16 / 128 / 8)
    assert kept == pytest.approx(1_557_795_840 * 2)
    assert experts == 0
    assert sum(p.weight_parts) == pytest.approx(float(p.memory.weight_bytes), rel=1e-9)
    text = render_plan(p)
    assert "int4 layers 16.09 GB (15.60 GB values + 0.49 GB block scales)" in text
    assert "embeddings, output head and norms kept 16-bit 3.12 GB" in text


def test_sixteen_bit_model_has_no_split():
    p = plan("L40S", "qwen2.5-7b", 8192)
    assert p.weight_parts == ()
    assert "whole model's parts" not in render_plan(p)


def test_reserve_parts_name_the_all_reduce_buffers_at_tp2(awq_plans):
    """F6: vLLM's profile (planner/engines/profiles.py VLLM: 0.25 GiB non-torch, +1.83 GiB NCCL / custom all-reduce
    buffers when tensor-parallel, docs/accuracy.md's fit) makes the step from TP 1 to TP 2; the activation peak
    (sampler 15.56 B x 256 sequences x 152,064 vocabulary = 0.606 GB, plus 0.077 B x 2,048 tokens x width) shrinks."""
    eng = engine_profile("vllm")
    one, two = awq_plans[1].reserve_parts, awq_plans[2].reserve_parts
    assert one[1] == two[1] == pytest.approx(0.25 * GiB)
    assert one[2] == 0 and two[2] == pytest.approx(1.83 * GiB) == eng.non_torch_bytes_tensor_parallel
    sampler = 15.56 * 256 * 152_064
    assert one[0] == pytest.approx(sampler + 0.077 * 2048 * (5120 + 2 * 27648))
    assert two[0] == pytest.approx(sampler + 0.077 * 2048 * (5120 + 27648))
    for p in awq_plans.values():
        assert sum(p.reserve_parts) == pytest.approx(float(p.memory.reserve_bytes_per_gpu))
    text = render_plan(awq_plans[2])
    assert (
        "2.84 GB (profiling run's activation peak 0.61 GB + non-torch 0.27 GB + NCCL / custom all-reduce "
        "buffers 1.96 GB at TP 2, vllm's fit)" in text
    )
    assert "all-reduce" not in render_plan(awq_plans[1])


@pytest.mark.parametrize("typed", ["awq", "gptq", "w4a16"])
def test_int4_alias_said_once_in_the_header(typed):
    """F8: catalogs/precisions.toml's int4 (aliases w4a16, awq, gptq): 4 bits, one 16-bit scale per 128."""
    p = plan("L40S", "qwen2.5-32b", 8192, weight_precision=typed)
    line = f"{typed} read as int4 (4-bit weights, one 16-bit scale per group of 128: 0.515625 B a weight)"
    assert p.weight_alias == line
    assert render_plan(p).count(line) == 1


def test_no_alias_line_when_typed_as_catalog_names_it(awq_plans):
    p = plan("L40S", "qwen2.5-32b", 8192, weight_precision="int4")
    assert p.weight_alias == ""
    assert " read as " not in render_plan(p).splitlines()[2]
    assert default_catalog().precision("awq").name == "int4"
