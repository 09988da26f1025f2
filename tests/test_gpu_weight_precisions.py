"""A GPU runs only the weight formats it has the math (or an engine's kernels) for: the catalog lists them where it
lacks some (``Gpu.weight_precisions``), and every surface refuses the others in one line naming those it takes.

Sources: NVIDIA T4 datasheet (t4-tensor-core-datasheet-951643.pdf): Turing tensor cores run FP16, INT8 and INT4; no
BF16 or FP8. vLLM: ``CudaPlatformBase.supported_dtypes`` is [float16, float32] below SM 8.0 (vllm/platforms/cuda.py,
commit 002db495); ``Fp8Config.get_min_capability`` 80 and, below SM 8.9, FP8 weights run weight-only on the Marlin
kernel (vllm/model_executor/layers/quantization/fp8.py, commit 0071b24b); ``AWQConfig.get_min_capability`` 75
(awq.py, commit 000796ac). NVIDIA A100 datasheet: tensor cores run TF32, BF16, FP16, INT8 and INT4, no FP8.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import planner
from planner.catalog import default_catalog
from planner.catalog.schema import Gpu
from planner.cli import main
from planner.errors import PlannerError
from planner.excel import functions as xf
from planner.report import plan

T4_ACCEPTED = "fp32, fp16, int8, int4, w8a16"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_t4_lists_the_formats_turing_runs_and_not_bf16_or_fp8():
    t4 = default_catalog().gpu("T4")
    assert t4.weight_precisions == ("fp32", "fp16", "int8", "int4", "w8a16")  # datasheet + vLLM's minimum SM
    assert not t4.takes_weights("bf16") and not t4.takes_weights("fp8") and not t4.takes_weights("mxfp4")
    assert "bf16" not in t4.peak_flop_per_s and "fp8" not in t4.peak_flop_per_s  # its datasheet peaks


def test_no_other_catalog_gpu_is_pre_ampere():
    # the catalog's only Turing or older part is the T4 (no V100): every other GPU has bf16 tensor cores
    others = [g.name for g in default_catalog().gpus if g.name != "T4" and g.vendor == "NVIDIA"]
    assert all("bf16" in default_catalog().gpu(n).peak_flop_per_s for n in others)
    assert all(default_catalog().gpu(n).weight_precisions is None for n in others)


@pytest.mark.parametrize("weights", ["fp8", "bf16"])
def test_plan_refuses_weights_t4_has_no_tensor_cores_for_in_one_line(weights):
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "1024", "-w", weights)
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"planner: error: T4 (Turing, SM 7.5) cannot run Llama-3.1-8B's weights in {weights}: it has no {weights} "
        f"tensor cores; weight precisions it takes: {T4_ACCEPTED} (catalogs/gpus.toml weight_precisions_source)"
    ]


def test_plan_takes_awq_int4_on_t4():
    # vLLM's AWQ kernel runs from SM 7.5 (AWQConfig.get_min_capability 75)
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "1024", "-w", "int4")
    assert r.exit_code == 0, r.output
    assert "weights int4" in r.output


def test_a_bf16_model_as_published_plans_as_fp16_on_t4_and_says_so():
    r = run("plan", "--gpu", "T4", "--model", "qwen3-0.6b", "--context", "1024", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert (data["weight_precision"], data["kv_precision"]) == ("fp16", "fp16")  # vLLM --dtype auto below SM 8.0
    assert data["warnings"][0].startswith("T4 has no bf16: Qwen3-0.6B's bf16 weights and KV cache run in fp16")
    # the same bytes: fp16 and bf16 hold as many sequences
    assert data["memory_max_batch"] == int(planner.max_batch("T4", "qwen3-0.6b", 1024, weight_precision="fp16"))


def test_the_api_gives_nan_for_the_refused_scenario_alone():
    batch = planner.max_batch(["T4", "L4"], "llama3.1-8b", 1024, weight_precision="fp8", errors="coerce")
    assert batch[0] != batch[0] and batch[1] > 0  # L4 (Ada) has fp8 tensor cores


def test_excel_functions_give_num_and_planner_why_the_reason():
    assert xf.MAX_BATCH("T4", "llama3.1-8b", 1024, None, None, "fp8") == "#NUM!"
    why = xf.PLANNER_WHY("MAX_BATCH", "T4", "llama3.1-8b", 1024, None, None, "fp8")
    assert why.startswith("T4 (Turing, SM 7.5) cannot run Llama-3.1-8B's weights in fp8")
    assert T4_ACCEPTED in why


def test_fp8_weights_on_a100_are_said_to_run_weight_only():
    assert "fp8" not in default_catalog().gpu("A100").peak_flop_per_s  # A100 datasheet: no FP8 tensor cores
    p = plan("A100", "llama3.1-8b", 1024, weight_precision="fp8")
    assert (
        "fp8 weights on A100 SXM 80GB: it has no fp8 tensor cores (Ampere), so vllm runs them weight-only, "
        "dequantized into 16-bit math (W8A16, Marlin kernels)" in " ".join(p.warnings)
    )
    h100 = plan("H100", "llama3.1-8b", 1024, weight_precision="fp8")  # Hopper: fp8 tensor cores
    assert not any("weight-only" in w for w in h100.warnings)


def _workload():
    """A workload an 8B model on one T4 could serve, so that only the refused precision decides the option."""
    from planner.export.scenario import Workload

    return Workload(
        peak_requests_per_s=10,
        average_requests_per_s=5,
        prompt_tokens_mean=512,
        prompt_tokens_high=1024,
        output_tokens_mean=128,
        output_tokens_high=256,
        tpot_target_s="50 ms",
        ttft_target_s="2 s",
    )


def test_export_refuses_an_option_of_weights_the_gpu_does_not_run():
    from planner.export.evaluate import evaluate
    from planner.export.scenario import Option

    workload = _workload()
    option = Option(gpu="T4", model="llama3.1-8b", weight_precision="fp8", kv_precision="fp16")
    with pytest.raises(PlannerError, match=f"cannot run Llama-3.1-8B's weights in fp8: .*takes: {T4_ACCEPTED}"):
        evaluate(option, workload, default_catalog(), 1.0)


def test_a_weight_list_needs_its_source():
    t4 = default_catalog().gpu("T4").model_dump()
    t4["weight_precisions_source"] = ""
    with pytest.raises(ValueError, match="weight_precisions needs weight_precisions_source"):
        Gpu.model_validate(t4)


# A bf16 KV cache on a GPU without bf16: vLLM's CudaPlatformBase.supported_dtypes is [float16, float32] below SM 8.0
# (vllm/platforms/cuda.py, commit 002db495; the T4 datasheet: no BF16), and the cache's "auto" dtype is the model's.
# An fp8 KV cache on SM 7.5: vLLM 0.24.0 refuses it ("FP8 KV cache is not supported by the Triton attention backend
# on Quadro RTX 8000 (compute capability 7.5); native FP8 (fp8e4nv) requires SM89+", vllm-project/vllm issue 47549,
# 2026-09: FlashInfer, which kept one there in 0.23.0, now needs SM 8.0), so T4 takes fp32 and fp16 only.
T4_KV = "fp32, fp16"
T4_BF16_KV = (
    "T4 (Turing, SM 7.5) cannot cache Llama-3.1-8B's KV in bf16: it has no bf16; KV precisions it takes: "
    f"{T4_KV} (catalogs/gpus.toml weight_precisions_source)"
)
T4_FP8_KV = (
    "T4 (Turing, SM 7.5) cannot cache Llama-3.1-8B's KV in fp8: vLLM 0.24's attention backends keep no fp8 cache below "
    f"SM 8.0 (vllm-project/vllm issue 47549); KV precisions it takes: {T4_KV} (docs/model.md)"
)


def test_plan_refuses_a_bf16_kv_cache_on_t4_in_one_line():
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "2048", "-k", "bf16")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"planner: error: {T4_BF16_KV}"]


def test_plan_refuses_an_fp8_kv_cache_on_t4_in_one_line_and_ampere_takes_it():
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "2048", "-k", "fp8")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"planner: error: {T4_FP8_KV}"]
    assert xf.MAX_BATCH("T4", "llama3.1-8b", 1024, "fp8") == "#NUM!"
    assert xf.PLANNER_WHY("MAX_BATCH", "T4", "llama3.1-8b", 1024, "fp8") == T4_FP8_KV.replace("2048", "1024")
    # SM 8.0 and up keep one (FlashInfer from SM 8.0; Hopper and Ada natively)
    assert all(planner.max_batch(g, "llama3.1-8b", 1024, kv_precision="fp8") > 0 for g in ("A100", "L4", "H100"))


@pytest.mark.parametrize("kv", ["fp16", "fp32"])
def test_plan_takes_the_kv_precisions_t4_has(kv):
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "2048", "-k", kv)
    assert r.exit_code == 0, r.output
    assert f"KV {kv}" in r.output


def test_a_bf16_model_at_other_weights_caches_kv_in_fp16_on_t4():
    # no KV precision given: the cache is kept in the model's dtype, fp16 where there is no bf16
    r = run("plan", "--gpu", "T4", "--model", "llama3.1-8b", "--context", "2048", "-w", "int4")
    assert r.exit_code == 0, r.output
    assert "weights int4, KV fp16" in r.output
    assert planner.max_batch("T4", "llama3.1-8b", 2048, weight_precision="int4") > 0


def test_the_api_gives_nan_for_a_bf16_kv_cache_on_t4_alone():
    batch = planner.max_batch(["T4", "L4"], "llama3.1-8b", 1024, kv_precision="bf16", errors="coerce")
    assert batch[0] != batch[0] and batch[1] > 0  # L4 (Ada) has bf16
    with pytest.raises(PlannerError, match="cannot cache Llama-3.1-8B's KV in bf16"):
        planner.max_batch("T4", "llama3.1-8b", 1024, kv_precision="bf16")


def test_excel_functions_give_num_for_a_bf16_kv_cache_on_t4():
    assert xf.MAX_BATCH("T4", "llama3.1-8b", 1024, "bf16") == "#NUM!"
    assert xf.MAX_BATCH("T4", "llama3.1-8b", 1024, "fp16") > 0
    assert xf.PLANNER_WHY("MAX_BATCH", "T4", "llama3.1-8b", 1024, "bf16") == T4_BF16_KV


def test_export_refuses_an_option_with_a_bf16_kv_cache_on_t4():
    from planner.export.evaluate import evaluate
    from planner.export.scenario import Option

    workload = _workload()
    option = Option(gpu="T4", model="llama3.1-8b", kv_precision="bf16")
    with pytest.raises(PlannerError, match=f"cannot cache Llama-3.1-8B's KV in bf16: .*takes: {T4_KV}"):
        evaluate(option, workload, default_catalog(), 1.0)
