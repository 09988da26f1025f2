"""Under load, a model's published MXFP4 experts stay MXFP4 (the user trial of s194).

``replica_of`` passed the plan's resolved weight name, "bf16" for gpt-oss as published, so the serving replica
quantized the routed experts to bf16 too: 233.66 GB of weights for gpt-oss-120b against 69.25 GB as loaded, and
`plan --gpu B200 --model gpt-oss-120b --gpus 1 --rate 20 ...` refused "weights do not fit" where `plan` without
--rate planned it. `planner export` fell back to Little's law for such options (its replica likewise). Weights as
published now go to the replica as None, as REPLICAS sends them; an explicit -w bf16 still upcasts the experts.
"""

from __future__ import annotations

import json

from cli_support import run

from planner.catalog import default_catalog
from planner.excel import functions as xf
from planner.export.evaluate import evaluate
from planner.export.scenario import Option, Workload
from planner.report import plan, replica_of

B200 = ("--gpu", "B200", "--model", "gpt-oss-120b", "--context", "7000", "--gpus", "1")
LOAD = ("--rate", "20", "--prompt-tokens", "1500", "--output-tokens", "300")


def test_plan_rate_sizes_gpt_oss_on_the_gpu_that_holds_it():
    out = run("plan", *B200, *LOAD, "--json")
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    # the replica REPLICAS sizes (weights as published), on the group plan was given
    assert got["under_load"]["replicas"] == xf.REPLICAS(
        "B200", "gpt-oss-120b", 20.0, 1500.0, 300.0, None, None, None, 1
    )
    assert got["weight_bytes"] < 80e9  # 69.25 GB with MXFP4 experts (plan without --rate)


def test_the_replica_keeps_published_weights_and_an_explicit_bf16_upcasts():
    assert replica_of(plan("B200", "gpt-oss-120b", 7000, gpus=1)).weight_precision is None
    upcast = plan("B200", "gpt-oss-120b", 7000, gpus=2, weight_precision="bf16")
    assert upcast.expert_precision == "bf16" and replica_of(upcast).weight_precision == "bf16"


def test_export_sizes_gpt_oss_on_simulated_percentiles():
    """The trial's s4.toml: gpt-oss-120b on H100 at 20 requests/s; its option was sized by Little's law."""
    workload = Workload(
        peak_requests_per_s=20, average_requests_per_s=8, prompt_tokens_mean=1000, prompt_tokens_high=3000,
        output_tokens_mean=300, output_tokens_high=1000, ttft_target_s=2, tpot_target_s=0.05, latency_margin=0,
    )  # fmt: skip
    result = evaluate(Option(gpu="H100", model="gpt-oss-120b", pricing="cloud"), workload, default_catalog(), 0.2)
    assert result.meets and result.under_load is not None


def test_one_rule_says_which_weights_go_on_as_published():
    """``catalog.resolve.weights_to_pass``, the rule plan's and the review's replicas share: gpt-oss-120b as
    published (bf16 layers, MXFP4 experts: its config.json quantization_config) goes as None; asked bf16 experts go
    as "bf16"; a dense model's native bf16 as None and fp8 as "fp8" (Llama 3.1's published weights are bf16)."""
    from planner.catalog.resolve import weights_to_pass

    cat = default_catalog()
    oss, llama = cat.model("gpt-oss-120b"), cat.model("llama3.1-8b")
    assert (oss.native_precision, oss.native_expert_precision) == ("bf16", "mxfp4")
    assert weights_to_pass(cat, oss, "bf16", "mxfp4") is None
    assert weights_to_pass(cat, oss, "bf16") is None
    assert weights_to_pass(cat, oss, "bf16", "bf16") == "bf16"
    assert weights_to_pass(cat, llama, "bf16") is None
    assert weights_to_pass(cat, llama, "fp8") == "fp8"
