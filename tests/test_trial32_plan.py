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


# -- F3: a bought GPU's owned cost per GPU-hour, the export's money ------------------------------------------------

L40S_PURCHASE = """[[price]]
gpu = "L40S"
kind = "purchase"
purchase_usd = 7800
provider = "Reseller"
date = "2026-11-20"
source = "reseller quote Nov 2026"
"""


@pytest.fixture(scope="module")
def purchase_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lena-cat")
    (folder / "prices.toml").write_text(L40S_PURCHASE, encoding="utf-8")
    return folder


def test_owned_cost_per_gpu_hour_is_the_exports(purchase_folder):
    """Hand-computed from trial 32's quote (L40S purchase $7,800, /tmp/lena-cat/prices.toml) and the export's
    defaults for a PCIe card (catalogs/costs/ownership.toml [pcie_node], trial 32 F10: host server $10,424 and no
    network per 8-GPU node, host power 2,200 W per node; colocation $184.06/kW-month, $0.12/kWh, PUE 1.3; L40S TDP
    350 W, catalogs/gpus.toml): capex 7,800 + 10,424 / 8 = 9,103, / 36 months = 252.861; IT load 350 + 275 = 625 W:
    power 0.625 x 1.3 x 0.12 x 730 = 71.175, colocation 0.625 x 184.06 = 115.038; 439.074 a month / 730 h =
    $0.6015/GPU-hour (a DGX H100's node gave $0.8982)."""
    from cli_support import run

    from planner.cli.options import load
    from planner.cli.plan import owned_usd_per_gpu_hour

    capex = 7800 + (10424 + 0) / 8
    month = capex / 36 + 0.625 * 1.3 * 0.12 * 730 + 0.625 * 184.06
    hourly, words = owned_usd_per_gpu_hour(load((purchase_folder,)).gpu("L40S"), "qwen2.5-32b", 36, None)
    assert hourly == pytest.approx(month / 730)
    assert hourly == pytest.approx(0.60147, abs=1e-5)
    args = ("plan", "--gpu", "L40S", "--model", "qwen2.5-32b", "--context", "8k", "-w", "awq", "-k", "fp8")
    out = run(*args, "--catalog", str(purchase_folder), "--price-kind", "purchase")
    assert out.exit_code == 0, out.output
    assert (
        "($0.6015/GPU-hour: bought, over 36 months amortization incl. power and colocation (the export's "
        "defaults: $7,800 GPU (Reseller, 2026-11-20)" in out.output
    )
    assert "n/a" not in [line for line in out.output.splitlines() if line.startswith("Cost at batch")][0]
    # 24 months: the capital charge alone changes, 9,103 / 24
    out = run(*args, "--catalog", str(purchase_folder), "--price-kind", "purchase", "--amortization-months", "24")
    two_years = (capex / 24 + 0.625 * 1.3 * 0.12 * 730 + 0.625 * 184.06) / 730
    assert f"(${two_years:.4f}/GPU-hour: bought, over 24 months" in out.output


def test_purchase_kind_without_a_purchase_quote_is_refused():
    from cli_support import run

    out = run("plan", "--gpu", "L40S", "--model", "qwen2.5-32b", "--context", "8k", "-w", "awq", "--price-kind",
              "purchase")  # fmt: skip
    assert out.exit_code != 0
    assert "the catalog has no purchase quote for L40S" in out.output


# -- F2: plan --concurrency, the export's Little's law ------------------------------------------------------------

IN_FLIGHT = """
title = "one option, like plan --concurrency"
[workload]
peak_concurrent_requests = 20
average_concurrent_requests = 10
prompt_tokens_mean = 500
prompt_tokens_high = 500
output_tokens_mean = 200
output_tokens_high = 200
context = 4096
ttft_target_s = 1
tpot_target_s = "50 ms"
latency_margin = 0
[defaults]
model = "llama3.1-8b"
spare_replicas = 0
[[option]]
name = "H100"
gpu = "H100"
pricing = "cloud"
gpus_per_replica = 1
"""


def test_plan_concurrency_converts_as_the_export_does():
    """The same workload (20 in flight, 500 / 200 tokens, every request at the means, no margin, 1 x H100) given to
    the export as peak_concurrent_requests and to plan as --concurrency: both by planner.serving.fleet.
    in_flight_rate (R = N / simulated mean latency on the fleet sized for R, settled within 1%), so the rates agree
    within the fixed point's tolerance from each one's first rate (2 x 1%, and 1% more for plan's engine-default
    max_num_seqs against the export's memory-held one, which this light load never reaches)."""
    import re
    import tomllib

    from cli_support import run

    from planner.export import evaluate as export_evaluate
    from planner.export.scenario import parse_scenario
    from planner.serving import fleet

    assert export_evaluate._in_flight_rate is fleet.in_flight_rate  # one conversion, not two
    scenario = parse_scenario(tomllib.loads(IN_FLIGHT))
    r = export_evaluate.evaluate(scenario.option[0], scenario.workload, default_catalog(), 0.0)
    out = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1",
              "--concurrency", "20", "--prompt-tokens", "500", "--output-tokens", "200", "--ttft-target", "1",
              "--tpot-target", "0.05")  # fmt: skip
    assert out.exit_code == 0, out.output
    line = re.search(r"^Concurrency: 20 requests in flight -> ([\d.]+) requests/s by Little's law", out.output, re.M)
    assert line, out.output
    assert float(line[1]) == pytest.approx(r.peak_rate_per_s, rel=0.03)
    check = re.search(r"check: [\d.]+ x [\d.]+ (m?s) = ([\d.]+) in flight", out.output)
    assert float(check[2]) == pytest.approx(20, rel=0.02)


def test_concurrency_and_rate_are_one_or_the_other():
    from cli_support import run

    out = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--rate", "5",
              "--concurrency", "20", "--prompt-tokens", "500", "--output-tokens", "200")  # fmt: skip
    assert out.exit_code != 0
    assert "give --rate (requests per second) or --concurrency (requests in flight), not both" in out.output
