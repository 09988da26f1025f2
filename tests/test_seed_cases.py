"""Every number the two source articles derive (catalogs/reference/seed_cases.toml), as the model computes it.

The cases are the shipped copy of ../shared/reference/seed_cases.toml; each names its source in the article.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import planner
from planner import model as m
from planner.catalog import default_catalog
from planner.engines.architecture import param_counts
from planner.errors import DoesNotFitError

CASES = {
    c["id"]: c
    for c in tomllib.loads((Path(__file__).parents[1] / "catalogs" / "reference" / "seed_cases.toml").read_text())[
        "case"
    ]
}


def case(case_id: str) -> dict:
    return CASES[case_id]


def test_every_seed_case_has_a_test():
    """No case in the reference file goes untested: each id appears in this module."""
    source = Path(__file__).read_text()
    assert [cid for cid in CASES if f'"{cid}"' not in source] == []


@pytest.mark.parametrize(
    "case_id, gpu", [("ridge-a100-80gb-sxm", "A100 80GB SXM"), ("ridge-h100-sxm", "H100 SXM 80GB")]
)
def test_ridge_point_matches_the_article(case_id, gpu):
    """Ridge = dense bf16 peak / HBM bandwidth, from the catalog's datasheet numbers."""
    c = case(case_id)
    g = default_catalog().gpu(gpu)
    assert g.peak_flop_per_s["bf16"] == c["inputs"]["peak_flop_per_s"]
    assert g.hbm_bandwidth_bytes_per_s == c["inputs"]["bandwidth_bytes_per_s"]
    assert planner.ridge(gpu, precision="bf16") == pytest.approx(c["expected"], rel=c["rel_tol"])


def test_ridge_a100_40gb_lies_in_the_articles_range():
    """The note rounds A100 40GB bandwidth to 1.6 TB/s (knee ~195); the datasheet's 1,555 GB/s gives ~200.6."""
    c = case("ridge-a100-40gb")
    low, high = c["expected_range"]
    assert low <= planner.ridge("A100-40GB") <= high


@pytest.mark.parametrize(
    "case_id, model",
    [
        ("kv-per-token-llama2-70b-fp16", "Llama-2-70B"),
        ("kv-8k-llama2-70b-fp16", "Llama-2-70B"),
        ("kv-per-token-llama1-65b-fp16", "LLaMA-65B"),
        ("kv-8k-llama1-65b-fp16", "LLaMA-65B"),
    ],
)
def test_kv_cache_bytes_are_exact(case_id, model):
    """2 x layers x KV heads x head dim x 2 B per token, times tokens: exact integers."""
    c = case(case_id)
    assert planner.kv_bytes(model, c["inputs"]["tokens"], kv_precision=c["inputs"]["kv_dtype"]) == c["expected"]


def test_mha_model_holds_eight_times_the_kv_of_the_gqa_model():
    """LLaMA 1 65B (MHA, 64 KV heads) vs Llama 2 70B (GQA, 8 KV heads): 8x per token (000_*.txt section 3)."""
    ratio = planner.kv_bytes("llama-65b", 8192, kv_precision="fp16") / planner.kv_bytes(
        "llama2-70b", 8192, kv_precision="fp16"
    )
    assert ratio == case("kv-8k-llama1-65b-fp16")["expected"] / case("kv-8k-llama2-70b-fp16")["expected"] == 8


def test_llama2_70b_parameter_count_is_exact():
    """68,976,648,192 learned parameters from config.json (the HF total adds 5,120 rotary buffers)."""
    total, _ = param_counts(default_catalog().model("Llama-2-70B"))
    assert total == case("params-llama2-70b")["expected"]


def test_llama2_70b_fp16_weight_bytes_are_exact():
    assert planner.weight_bytes("Llama-2-70B", precision="fp16") == case("weights-llama2-70b-fp16")["expected"]


@pytest.mark.parametrize("case_id", ["decode-intensity-batch-1", "decode-intensity-batch-32", "prefill-intensity-2048"])
def test_linear_layer_intensity_equals_tokens_per_step(case_id):
    """2 x P x B x L FLOP over 2 x P bytes = B x L (004_*.txt section 3)."""
    c = case(case_id)
    tokens = c["inputs"]["batch"] * c["inputs"].get("prompt_tokens", 1)
    assert m.linear_intensity_flop_per_byte(tokens, c["inputs"]["weight_bytes_per_param"]) == pytest.approx(
        c["expected"], rel=c["rel_tol"]
    )


def test_whole_decode_step_intensity_is_near_one_at_batch_1():
    """With KV reads and embeddings accounted, a real decode step of Llama 2 70B stays at ~1 FLOP/B."""
    assert planner.decode_intensity("H100", "llama2-70b", 128, batch=1, gpus=2) == pytest.approx(1.0, rel=0.02)


def test_attention_intensity_is_heads_over_kv_heads():
    c = case("attention-intensity")
    for kind in ("mha", "gqa"):
        heads = c["inputs"][kind]
        assert m.attention_intensity_flop_per_byte(heads["heads"], heads["kv_heads"]) == c["expected"][kind]


def test_compute_efficiency_at_batch_1_on_h100_is_a_third_of_a_percent():
    """1 FLOP/B x 3,350 GB/s = 3.35 TFLOP/s = 0.34% of 989.4 TFLOP/s (ideal engine: full bandwidth, no overhead)."""
    c = case("compute-efficiency-h100-batch-1")
    got = planner.mfu("H100", "llama2-70b", 16, batch=1, gpus=2, engine="ideal")
    assert got == pytest.approx(c["expected"], rel=c["rel_tol"])


def test_trailer_of_two_h100s_holds_twelve_8k_sequences_in_the_seed_form():
    """free HBM / KV per sequence with nothing reserved: (2 x 80 GiB - 137.95 GB) / 2.68 GB = 12.6 -> 12."""
    c = case("trailer-seed-form")
    i = c["inputs"]
    got = planner.max_batch(
        i["gpu"],
        i["model"],
        i["context"],
        kv_precision=i["kv_dtype"],
        gpus=i["gpus"],
        weight_precision=i["weight_dtype"],
        memory_utilization=i["memory_utilization"],
        engine="ideal",
        reserve_bytes=i["reserve_bytes"],
    )
    assert got == c["expected"]


def test_llama2_70b_does_not_fit_on_one_h100():
    """138 GB of fp16 weights on one 80 GiB card: an error naming the shortfall and the group that works."""
    i = case("does-not-fit-one-h100")["inputs"]
    with pytest.raises(DoesNotFitError) as info:
        planner.max_batch(
            i["gpu"], i["model"], 4096, kv_precision="fp16", gpus=i["gpus"], weight_precision=i["weight_dtype"]
        )
    assert "do not fit on 1 x H100 SXM 80GB" in str(info.value)
    assert "short by" in str(info.value)
    assert info.value.smallest_gpus == 2
