"""``planner plan --explain`` and ``step_breakdown_s``: the decode step in parts summing to the TPOT (trial 33 F5),
and the vs-vLLM line of another engine (trial 33 F11)."""

from __future__ import annotations

import json
import math
import re

import pytest
from cli_support import run

from planner.engines.profiles import engine_profile
from planner.model.breakdown import LABELS, STEP_PARTS

#: Trial 33 F5 and F11's deployment: Llama-3.3-70B fp8 on 8 x MI325X at 2,560 tokens.
MI325X = ("--gpu", "MI325X", "--model", "llama3.3-70b", "-w", "fp8", "--context", "2560", "--gpus", "8")
#: A MoE model: Mixtral-8x7B on 2 x H100 (every expert touched at its max batch, two at batch 1).
MIXTRAL = ("--gpu", "H100", "--model", "mixtral-8x7b", "--context", "4096", "--gpus", "2")
#: A pipeline: Llama-3.1-70B on 4 x H100 as 4 stages of one GPU (--parallelism pp: one stage a GPU).
PIPELINE = ("--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "--gpus", "4", "--parallelism", "pp")
#: Data-parallel attention + expert parallelism: DeepSeek-R1 on 8 x H200 at 8k (--parallelism dp-ep).
DPEP = ("--gpu", "H200", "--model", "deepseek-r1", "--context", "8k", "--gpus", "8", "--parallelism", "dp-ep")


def _plan(*args: str) -> tuple[str, dict]:
    """The text of ``plan ARGS --explain`` and the object of ``plan ARGS --json``."""
    text = run("plan", *args, "--explain")
    assert text.exit_code == 0, text.output
    js = run("plan", *args, "--json")
    assert js.exit_code == 0, js.output
    return text.stdout, json.loads(js.stdout)


@pytest.fixture(scope="module")
def sglang() -> tuple[str, dict]:
    return _plan(*MI325X, "--engine", "sglang")


@pytest.fixture(scope="module")
def vllm() -> tuple[str, dict]:
    return _plan(*MI325X)


@pytest.fixture(scope="module")
def mixtral() -> tuple[str, dict]:
    return _plan(*MIXTRAL, "--engine", "sglang")


@pytest.fixture(scope="module")
def pipeline() -> tuple[str, dict]:
    return _plan(*PIPELINE)


@pytest.fixture(scope="module")
def dpep() -> tuple[str, dict]:
    return _plan(*DPEP)


def _block(text: str, batch: int) -> list[str]:
    """The lines of the "Decode step at batch N" block."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(f"Decode step at batch {batch:,} "))
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("= TPOT"))
    return lines[start : end + 1]


@pytest.mark.parametrize("which", ["sglang", "vllm", "mixtral", "pipeline", "dpep"])
def test_the_parts_sum_to_the_printed_tpot(which, request):
    """Each batch's parts (``step_breakdown_s``) plus the residual are the TPOT --json gives and the text prints
    ("TPOT (per sequence)"), for the dense model on two engines, a MoE model, a pipeline and dp-ep."""
    text, d = request.getfixturevalue(which)
    breakdowns = d["step_breakdown_s"]
    assert set(breakdowns) == {str(d["batch"]), "1"}
    for key, tpot in ((str(d["batch"]), d["tpot_s"]), ("1", d["tpot_s_batch_1"])):
        b = breakdowns[key]
        assert b["tpot_s"] == tpot  # the plan's own TPOT, not a second model of it
        assert math.fsum(b["parts_s"].values()) + b["residual_s"] == pytest.approx(tpot, rel=1e-15)
        assert abs(b["residual_s"]) < 1e-12 * tpot  # rounding only
        # the text: the printed parts (ms, 3 decimals) add up to the "= TPOT" line, which is the plan's TPOT
        block = _block(text, int(key))
        total = float(block[-1].split()[2])
        assert total == pytest.approx(tpot * 1e3, abs=5e-4)
        ms = [float(m.group(1)) for line in block[2:-1] if (m := re.search(r"\s(-?\d+\.\d{3})\s+-?[\d.]+%", line))]
        assert math.fsum(ms) == pytest.approx(total, abs=5e-4 * len(ms))


def test_the_json_parts_are_every_part_with_a_number_and_a_bound(sglang):
    """``step_breakdown_s`` carries every part of ``STEP_PARTS`` (0 where one does not apply), numeric, each with its
    bound in words."""
    _, d = sglang
    for b in d["step_breakdown_s"].values():
        assert list(b["parts_s"]) == [k for k, _ in STEP_PARTS]
        assert all(isinstance(v, float) and math.isfinite(v) for v in b["parts_s"].values())
        assert set(b["bound"]) == set(b["parts_s"]) and all(isinstance(v, str) and v for v in b["bound"].values())
        assert b["parts_s"]["expert_gemms"] == 0.0 and b["parts_s"]["moe_layer_floor"] == 0.0  # a dense model
    assert d["vs_vllm"]["engine"] == "vllm"


def test_batch_one_against_the_trials_hand_roofline(vllm):
    """Trial 33 F5's hand roofline of batch 1 on 8 x MI325X: 160 all-reduces x ~8.7 us (the measured MI300X table
    that stands in on MI325X), 9.08 GB of weights a GPU (plan's "- weights" line) of which the GEMMs stream all but
    the input embedding (a row lookup: 128,256 x 8,192 x 2 B / 8 = 0.263 GB, config.json of Llama-3.3-70B); planner
    prints 8.15 ms (the trial's figure)."""
    text, d = vllm
    one = d["step_breakdown_s"]["1"]
    assert d["tpot_s_batch_1"] * 1e3 == pytest.approx(8.15, abs=0.005)
    assert one["parts_s"]["all_reduce"] == pytest.approx(160 * 8.7e-6, rel=0.01)
    assert "measured all-reduce table: 160 all-reduces" in one["bound"]["all_reduce"]
    assert one["bound"]["dense_gemms"].startswith("memory: 8.82 GB a GPU")  # 9.08 - 0.263
    assert "9.08 GB" in text
    # what the hand roofline leaves out is named: the kernel floors and the engine's costs (vLLM's 15.7 us a layer: planner.engines.profiles)
    for key in ("gemm_floors", "attention_floors", "layer_overhead", "step_fixed"):
        assert one["parts_s"][key] > 0
    assert one["bound"]["layer_overhead"] == "engine profile's per-layer cost: 15.70 us x 80 layers"


def test_the_vllm_line_names_the_part_with_the_largest_difference(sglang, vllm):
    """Trial 33 F11: SGLang 133 ms against vLLM's 72.8 ms at batch 1,024 (the trial's figures). The difference is
    SGLang's host cost, 59 us a sequence a step exposed (its profile's ``sequence_overhead_s``), where vLLM's
    asynchronous loop hides its own 21.5 us x 1,024 = 22 ms behind the device; the parts' differences sum to the
    two TPOTs' difference, and the vLLM figure is vLLM's own plan's TPOT."""
    text, d = sglang
    _, v = vllm
    diff = d["vs_vllm"]
    assert diff["batch"] == d["batch"] == 1024
    assert diff["tpot_s"] == d["tpot_s"] and diff["vllm_tpot_s"] == v["tpot_s"]
    assert (d["tpot_s"] * 1e3, v["tpot_s"] * 1e3) == (pytest.approx(133, abs=0.5), pytest.approx(72.8, abs=0.05))
    parts = diff["parts_difference_s"]
    assert math.fsum(parts.values()) == pytest.approx(d["tpot_s"] - v["tpot_s"], rel=1e-12)
    assert diff["difference_s"] == pytest.approx(d["tpot_s"] - v["tpot_s"], rel=1e-15)
    largest = max(parts, key=lambda k: abs(parts[k]))
    assert largest == diff["largest_part"] == "host_sequences"
    assert parts["host_sequences"] == pytest.approx(1024 * engine_profile("sglang").sequence_overhead_s, rel=1e-12)
    line = next(x for x in text.splitlines() if x.startswith("vs vLLM on the same deployment:"))
    assert line == (
        "vs vLLM on the same deployment: TPOT 133 ms vs 72.8 ms at batch 1,024; the difference is mostly "
        f"{LABELS[largest]} (+60.4 ms)"
    )


def test_a_moe_step_lists_its_experts(mixtral):
    """Mixtral-8x7B's step has expert GEMMs and the fused-MoE floor x 32 MoE layers (config.json: 32 layers, all
    MoE); at batch 1 the experts read are 2 of 8 (top-2), a quarter of those at the max batch, where all 8 are
    touched (E x (1 - (1 - k/E)^B), docs/model.md)."""
    _, d = mixtral
    at_max, one = d["step_breakdown_s"][str(d["batch"])], d["step_breakdown_s"]["1"]
    for b in (at_max, one):
        assert b["parts_s"]["expert_gemms"] > 0 and b["parts_s"]["moe_layer_floor"] > 0
        assert "x 32 MoE layers" in b["bound"]["moe_layer_floor"]
    gb = [float(re.match(r"memory: ([\d.]+) GB a GPU", b["bound"]["expert_gemms"]).group(1)) for b in (at_max, one)]
    assert gb[1] / gb[0] == pytest.approx(2 / 8, rel=0.01)


def test_default_output_is_unchanged():
    """Without --explain no breakdown is printed, and on vLLM (the default) no vs-vLLM line (README's transcripts)."""
    r = run("plan", *MI325X)
    assert r.exit_code == 0, r.output
    assert "Decode step at batch" not in r.stdout and "vs vLLM" not in r.stdout


def test_vllm_that_cannot_run_the_deployment_is_said():
    """LMDeploy's int8 KV cache: vLLM caches fp16, bf16, fp32 or fp8 only (planner.engines.profiles), so the line
    says vLLM cannot run it instead of a figure."""
    r = run(
        "plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--engine", "lmdeploy", "-k", "int8"
    )
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("vs vLLM"))
    assert line.startswith("vs vLLM on the same deployment: vLLM cannot run it (the 'vllm' engine cannot cache KV")


def test_a_pipeline_step_lists_its_stage_sends(pipeline):
    """A pipeline of 4 stages of one GPU (``planner.model.pipeline.pp_decode_step``): one stream's step on a stage
    (no all-reduces: one GPU a stage) + its 3 sends between stages (S - 1), each a stream's tokens x hidden state and
    residual (``pipeline.SENT_BYTES_PER_HIDDEN``, 4 B a value; Llama-3.1-70B's hidden size 8,192, config.json); the
    text names the stream and the stages, and exits 0."""
    text, d = pipeline
    one = d["step_breakdown_s"]["1"]
    assert one["parts_s"]["stage_sends"] > 0 and one["parts_s"]["all_reduce"] == 0.0
    assert one["parts_s"]["expert_exchange"] == 0.0  # a dense model, no expert parallelism
    assert one["bound"]["stage_sends"].startswith(f"3 sends of {8192 * 4 / 1e3:.1f} kB (a stream's 1 token")
    assert d["step_breakdown_s"][str(d["batch"])]["parts_s"]["stage_sends"] > one["parts_s"]["stage_sends"]
    head = next(x for x in text.splitlines() if x.startswith("Decode step at batch 1 "))
    assert head.endswith("(one stream of 1 sequence through 4 stages of 1 GPU in turn, 1 stream in flight)")
    assert any(x.lstrip().startswith("pipeline stage sends") for x in _block(text, 1))


def test_a_dpep_step_lists_its_expert_exchange(dpep):
    """dp-ep (``planner.model.parallel.dp_decode_step``): no all-reduces (attention is not split), the MoE layers'
    exchange in their place, here vLLM's measured all-gather + reduce-scatter of the group's tokens over DeepSeek-R1's
    58 MoE layers (61 layers, the first 3 dense: config.json ``first_k_dense_replace``); the text names each GPU's
    sequences (B / 8) and exits 0, and nothing is refused."""
    text, d = dpep
    assert d["step_breakdown_refused"] is None
    at = d["step_breakdown_s"][str(d["batch"])]
    assert at["parts_s"]["all_reduce"] == 0.0 and at["parts_s"]["stage_sends"] == 0.0
    assert at["parts_s"]["expert_exchange"] > 0 and at["parts_s"]["expert_gemms"] > 0
    assert at["bound"]["expert_exchange"].startswith("measured all-gather + reduce-scatter table: 58 MoE layers x ")
    assert at["bound"]["expert_exchange"].endswith(f"{d['batch']:,} tokens gathered")
    head = next(x for x in text.splitlines() if x.startswith(f"Decode step at batch {d['batch']:,} "))
    per_gpu = f"{d['batch'] / 8:,.4g}"
    assert head.endswith(f"(each of 8 GPUs: attention over its own {per_gpu} sequences, 1/8 of the experts)")
    assert any(x.lstrip().startswith("MoE expert exchange") for x in _block(text, d["batch"]))


@pytest.mark.parametrize(
    "gpu, engine, words",
    [
        # vLLM on H200: the measured NCCL all-gather + reduce-scatter table (parallel.moe_gather_scatter_time_s)
        ("H200", "vllm", "measured all-gather + reduce-scatter table: 58 MoE layers x "),
        # MI300X: no gather table, the all-to-all (parallel.expert_alltoall_time_s); each GPU sends 8 sequences x
        # top-8 experts x 7,168 hidden x 2 B x 7/8 off the GPU = 803 kB (DeepSeek-R1's config.json)
        ("MI300X", "vllm", "all-to-all (dispatch + combine): 58 MoE layers x "),
    ],
)
def test_the_dpep_breakdown_is_the_dpep_tpot(gpu, engine, words):
    """``planner.model.dp_decode_step_breakdown`` (through ``timing._decode_breakdown``) of DeepSeek-R1 on 8 GPUs
    at batch 64 sums to ``planner.tpot`` of that dp-ep step, and its expert exchange is the step record's
    ``communication_s`` (``dp_decode_step``'s ``ep_communication_s``), on both of its forms."""
    from planner import decode_step, timing, tpot
    from planner.options import DecodeOptions, Options

    given = dict(batch=64, gpus=8, parallelism="dp-ep", engine=engine, check_fit=False)
    b = timing._decode_breakdown(gpu, "deepseek-r1", 4096, Options.read(DecodeOptions, given, tpot))
    assert b.step_s == tpot(gpu, "deepseek-r1", 4096, **given)
    assert math.fsum(b.seconds().values()) + b.residual_s == pytest.approx(b.step_s, rel=1e-15)
    assert abs(b.residual_s) < 1e-12 * b.step_s
    assert b.part("expert_exchange").seconds == float(decode_step(gpu, "deepseek-r1", 4096, **given).communication_s)
    assert b.part("expert_exchange").bound.startswith(words)
    if "all-to-all" in words:
        assert b.part("expert_exchange").bound.endswith(f"{8 * 8 * 7168 * 2 * 7 / 8 / 1e3:.0f} kB a GPU sends each way")
    assert b.part("all_reduce").seconds == 0.0


@pytest.mark.parametrize(
    "gpu, model, context, batch, gpus, engine, part, expected_s",
    [
        # SGLang 0.4 above its largest decode graph (160, profiles.SGLANG_04_GRAPH_MAX_BATCH, s123): Llama-3.1-8B's
        # 32 layers x profiles.SGLANG_EAGER_LAYER_S (69.4 us) of eager launch
        ("H100", "llama3.1-8b", 1024, 168, 1, "sglang-0.4-eager", "eager_launch", 32 * 69.375e-6),
        # the ideal engine: the datasheet, no kernel floors and no engine costs (profiles.IDEAL)
        ("H100", "llama3.1-8b", 1024, 8, 1, "ideal", "gemm_floors", 0.0),
        # DeepSeek-V3.2 with an fp8 cache on vLLM: its latents through the sparse MLA kernel (a measured time per
        # token, operators.sparse_mla_time_s), 61 layers (config.json) at batch 1 and 128 heads / 8 GPUs = one tile
        ("H200", "deepseek-v3.2", 4096, 1, 8, "vllm", "sparse_mla", None),
    ],
)
def test_the_core_breakdown_is_the_tpot(gpu, model, context, batch, gpus, engine, part, expected_s):
    """``planner.model.decode_step_breakdown`` (through ``planner.timing._decode_breakdown``, as plan calls it) sums
    to ``planner.tpot`` of the same scenario, for terms plan's shipped deployments above do not reach."""
    from planner import timing, tpot
    from planner.engines.profiles import with_sglang_eager_decode
    from planner.options import DecodeOptions, Options

    eng = with_sglang_eager_decode(engine_profile("sglang"), "sglang", "0.4.0") if engine.endswith("eager") else engine
    given = dict(batch=batch, gpus=gpus, engine=eng, check_fit=False) | (
        {"kv_precision": "fp8"} if "v3.2" in model else {}
    )
    b = timing._decode_breakdown(gpu, model, context, Options.read(DecodeOptions, given, tpot))
    assert b.step_s == tpot(gpu, model, context, **given)
    assert math.fsum(b.seconds().values()) + b.residual_s == pytest.approx(b.step_s, rel=1e-15)
    if expected_s is None:
        assert b.part(part).seconds > 0 and b.part(part).bound == "measured kernel time per token"
    else:
        assert b.part(part).seconds == pytest.approx(expected_s, rel=1e-12, abs=0.0)


def test_the_pipeline_breakdown_is_the_pipelines_tpot():
    """``planner.model.pp_decode_step_breakdown`` (through ``timing._decode_breakdown``) of Llama-3.1-70B as 2 stages
    of 2 GPUs at batch 8 sums to ``planner.tpot`` of that pipeline; its stage sends are what the pipeline's TPOT adds
    to one stream's (8 / min(2, 8) = 4 sequences) tensor-parallel step on a stage's 2 GPUs
    (``planner.model.pipeline.pp_decode_step``), and the stage's all-reduces are there (2 GPUs a stage)."""
    from planner import timing, tpot
    from planner.options import DecodeOptions, Options

    given = dict(batch=8, gpus=4, parallelism="pp2", check_fit=False)
    b = timing._decode_breakdown("H100", "llama3.1-70b", 4096, Options.read(DecodeOptions, given, tpot))
    assert b.step_s == tpot("H100", "llama3.1-70b", 4096, **given)
    assert (b.batch, b.gpus) == (8.0, 4.0)
    assert math.fsum(b.seconds().values()) + b.residual_s == pytest.approx(b.step_s, rel=1e-15)
    assert abs(b.residual_s) < 1e-12 * b.step_s
    stage = tpot("H100", "llama3.1-70b", 4096, batch=4, gpus=2, check_fit=False)
    assert b.part("stage_sends").seconds == pytest.approx(b.step_s - stage, rel=1e-9)
    assert b.part("stage_sends").bound.startswith("1 send of")
    assert b.part("all_reduce").seconds > 0 and b.part("expert_exchange").seconds == 0.0


def test_plan_computes_the_parts_and_the_vllm_step_only_when_read(monkeypatch):
    """``planner.report.plan`` keeps the deployment and breaks the step down when ``step_breakdowns`` or ``vs_vllm``
    is first read (``report.StepParts``): none of the breakdowns for a plan nobody reads them of (the what-if
    workbook's dp-ep lever), three when read (this engine's at the batch and at 1, vLLM's at the batch: the
    EngineDifference's parts), and no more on a second read or on a copy (``dataclasses.replace``, as plan's CLI
    copies a plan to set its price source)."""
    import dataclasses

    from planner import report

    made: list[int] = []
    real = report._decode_breakdown

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(report, "_decode_breakdown", counted)
    p = report.plan("MI325X", "llama3.3-70b", 2560, gpus=8, weight_precision="fp8", engine="sglang")
    assert made == []
    d = p.to_dict()
    assert len(made) == 3 and d["vs_vllm"]["largest_part"] == p.vs_vllm.largest
    copy = dataclasses.replace(p, price_source="owned")
    assert copy.vs_vllm is p.vs_vllm and copy.step_breakdowns is p.step_breakdowns and len(made) == 3
