"""Pipeline parallelism, one GPU per stage (``parallelism="pp"``; ``planner.model.pipeline``, docs/model.md
"Pipeline parallelism"): the busiest stage's memory, a micro-batch stream's step, the engines' limits per stream."""

from __future__ import annotations

import pytest
from cli_support import one_line, run

from planner import api, timing
from planner.catalog import default_catalog
from planner.engines.architecture import model_facts
from planner.errors import OutOfRangeError
from planner.model import pipeline_stage_facts, weight_bytes
from planner.model.facts import PrecisionFacts
from planner.serving.load import Replica

GiB = 2**30
BF16 = PrecisionFacts(weight_bytes_per_param=2.0, expert_bytes_per_param=2.0, kept_bytes_per_param=2.0,
                      kv_bytes_per_element=2.0)  # fmt: skip


@pytest.mark.parametrize("model", ["Llama-3.1-8B", "Qwen3-30B-A3B", "gpt-oss-20b", "DeepSeek-V2-Lite"])
def test_a_pipeline_of_one_stage_is_one_gpu(model):
    """g = 1: the stage is the whole model, its stream the whole batch, no sends."""
    for pp, tp in ((dict(parallelism="pp"), {}),):
        assert api.max_batch("H100", model, 8192, gpus=1, **pp) == api.max_batch("H100", model, 8192, gpus=1, **tp)
        assert timing.tpot("H100", model, 4096, gpus=1, batch=8, **pp) == timing.tpot(
            "H100", model, 4096, gpus=1, batch=8, **tp
        )
        assert timing.ttft("H100", model, 2000, gpus=1, **pp) == timing.ttft("H100", model, 2000, gpus=1, **tp)


def test_a_stage_holds_its_layers_and_one_vocabulary_matrix():
    """Llama-3.1-8B (config.json: 32 layers, hidden 4,096, vocabulary 128,256, untied head; 8,030,261,248 parameters)
    on 2 stages: (8,030,261,248 - 2 x 525,336,576) / 2 + 525,336,576 = 4,015,130,624 parameters, 8,030,261,248 B at
    bf16; vLLM 0.19.0 logged 'Model loading took 7.51 GiB' on each of the two H100s (LP19-022,
    catalogs/reference/startup_memory_public.csv). Four stages: a middle stage holds 8 layers and no vocabulary
    matrix (the log's 3.28 GiB), the first and last one each (the planner's busiest stage: 8 layers + one)."""
    facts = model_facts(default_catalog().model("Llama-3.1-8B"))
    two = weight_bytes(pipeline_stage_facts(facts, 2.0), BF16)
    assert two == 2 * 4_015_130_624
    assert two / GiB == pytest.approx(7.51, rel=0.01)
    four = weight_bytes(pipeline_stage_facts(facts, 4.0), BF16)
    assert four == 2 * ((8_030_261_248 - 2 * 525_336_576) / 4 + 525_336_576)
    assert (four - 2 * 525_336_576) / GiB == pytest.approx(3.28, rel=0.01)


def test_a_streams_step_is_the_whole_model_on_one_gpu_plus_a_send_per_stage_boundary():
    """B = g x b sequences run as g streams of b: TPOT = one GPU's step at b + (g - 1) sends of b tokens' hidden
    states, so 4 stages pay three times the 2-stage pipeline's one send."""
    b, ctx = 4, 2048
    one = timing.tpot("H100", "Llama-3.1-8B", ctx, gpus=1, batch=b)
    two = timing.tpot("H100", "Llama-3.1-8B", ctx, gpus=2, batch=2 * b, parallelism="pp") - one
    four = timing.tpot("H100", "Llama-3.1-8B", ctx, gpus=4, batch=4 * b, parallelism="pp") - one
    assert 0 < two < 1e-4
    assert four == pytest.approx(3 * two)
    step = api.decode_step("H100", "Llama-3.1-8B", ctx, gpus=4, batch=4 * b, parallelism="pp")
    assert step.throughput_tokens_per_s == pytest.approx(4 * b / step.step_s)  # every stream's tokens


def test_a_dense_model_may_be_pipelined_but_each_stage_needs_a_layer():
    """Pipelines split layers, not experts: a dense model is accepted; Llama-3.2-1B has 16 layers."""
    assert api.max_batch("H100", "Llama-3.1-70B", 8192, gpus=2, parallelism="pp") > 0
    with pytest.raises(OutOfRangeError, match="it has 16 layers, one at least for each stage"):
        api.max_batch("H100", "Llama-3.2-1B", 8192, gpus=32, parallelism="pp")


def test_each_engine_counts_its_sequence_limit_as_it_schedules_micro_batches():
    """vLLM V1's one scheduler caps all running requests (a stream gets 1/g of max_num_seqs); TensorRT-LLM admits
    pp_size x max_batch_size (``PyTorchModelEngine.get_max_num_sequences``), each micro-batch up to its limit."""
    vllm = Replica("H100", "Llama-3.1-70B", gpus=4, parallelism="pp", max_num_seqs=64).setup(1000, 200)
    assert (vllm.ranks, vllm.scheduler.max_num_seqs) == (4, 16)
    trt = Replica(
        "H100", "Llama-3.1-70B", gpus=4, parallelism="pp", max_num_seqs=64, scheduler="tensorrt-llm",
        engine="tensorrt-llm",
    ).setup(1000, 200)  # fmt: skip
    assert (trt.ranks, trt.scheduler.max_num_seqs) == (4, 64)


def test_plan_names_the_pipeline_and_its_streams_under_load():
    result = run(
        "plan", "--gpu", "H100", "--model", "Llama-3.1-70B", "--context", "8192", "--gpus", "4",
        "--parallelism", "pp", "--rate", "2", "--prompt-tokens", "2000", "--output-tokens", "500",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "pipeline parallel: one GPU per stage" in result.output
    assert "its 20 of 80 layers" in result.output
    # the whole line, said once (s182: a pipeline's line had lost its start to a misplaced conditional)
    assert (
        "Under load: 2 requests/s of 2,000-token prompts and 500-token outputs, computed by planner's serving "
        "simulation (1,000 requests on each of its pipeline's 4 micro-batch streams, each taking one request in 4; "
        "the traffic's arrivals routed at random over the replicas (--routing random), each replica taking its share "
        "of the rate (a --burstiness b is the incoming traffic's: each of k replicas sees gaps of gamma shape "
        "k b / (1 + (k - 1) b)))\n"
    ) in result.output  # the routing's words (planner.cli.plan.routing_words; s200: --routing, a trace alike)
    assert "TensorRT-LLM 1.2's 32 pipeline runs" in result.output


def test_plan_refuses_more_stages_than_layers_in_one_line():
    line = one_line(
        run(
            "plan",
            "--gpu",
            "H100",
            "--model",
            "Llama-3.2-1B",
            "--context",
            "8192",
            "--gpus",
            "32",
            "--parallelism",
            "pp",
        ),
        2,
    )
    assert "cannot run as a pipeline of 32 stages: it has 16 layers" in line


def test_the_docs_state_what_a_pipeline_costs_in_speed():
    """docs/model.md: Llama-3.1-70B at 8K on 4 x H100, as a pipeline and tensor-parallel, at the batch each holds
    (one prompt's TTFT 1.62 s against 0.62 s since s199 ran the output head on its last token only; 1.64 / 0.63)."""
    from doc_support import stated

    figures = []
    for layout in ("pp", "tp"):
        top = int(api.max_batch("H100", "Llama-3.1-70B", 8192, gpus=4, parallelism=layout))
        tpot = timing.tpot("H100", "Llama-3.1-70B", 8192, gpus=4, batch=top, parallelism=layout)
        ttft = timing.ttft("H100", "Llama-3.1-70B", 8192, gpus=4, parallelism=layout)
        figures.append((top, f"{tpot * 1e3:.1f}", ttft))
    (pp_top, pp_tpot, pp_ttft), (tp_top, tp_tpot, tp_ttft) = figures
    doc = stated(
        "docs/model.md",
        r"4 x H100: (\d+) sequences as a pipeline \((\d+) tensor-parallel\), TPOT ([\d.]+) ms against ([\d.]+) ms, one "
        r"prompt's TTFT ([\d.]+) s against ([\d.]+) s",
    )
    assert doc == (pp_top, tp_top, pp_tpot, tp_tpot, f"{pp_ttft:.2f}", f"{tp_ttft:.2f}")


def test_excel_functions_take_the_pipeline_as_their_last_argument():
    """=MAX_BATCH("H100","Llama-3.1-70B",8192,,4,,,"pp") is the core's; a pipeline longer than the model is #NUM!."""
    from planner.excel import functions as xl

    assert xl.MAX_BATCH("H100", "Llama-3.1-70B", 8192, None, 4, None, None, "pp") == api.max_batch(
        "H100", "Llama-3.1-70B", 8192, gpus=4, parallelism="pp"
    )
    assert xl.MAX_BATCH("H100", "Llama-3.2-1B", 8192, None, 32, None, None, "pp") == "#NUM!"


def test_stages_of_several_gpus_are_tensor_parallel_groups():
    """Layout "pp2" on 8 GPUs: 2 stages of TP 4. Its stream's step is TP 4's at half the batch plus one send; its stages
    must be valid tensor-parallel groups; 3 stages do not divide 8 GPUs."""
    b, ctx = 16, 4096
    tp4 = timing.tpot("H100", "Llama-3.1-70B", ctx, gpus=4, batch=b, check_fit=False)
    pp2 = timing.tpot("H100", "Llama-3.1-70B", ctx, gpus=8, batch=2 * b, parallelism="pp2")
    assert 0 < pp2 - tp4 < 1e-4
    assert api.max_batch("H100", "Llama-3.1-8B", 4096, gpus=2, parallelism="pp2") == api.max_batch(
        "H100", "Llama-3.1-8B", 4096, gpus=2, parallelism="pp"
    )
    with pytest.raises(OutOfRangeError, match="8 GPUs do not split into 3 stages of whole GPUs"):
        api.max_batch("H100", "Llama-3.1-70B", 4096, gpus=8, parallelism="pp3")
    with pytest.raises(OutOfRangeError, match="tensor-parallel group"):
        api.max_batch("H100", "Qwen2-7B", 4096, gpus=16, parallelism="pp2")  # 28 heads: no TP 8


def test_an_export_option_may_be_a_pipeline_and_a_bad_layout_is_one_line(tmp_path):
    """An option with parallelism = "pp2" is sized as 2 stages (replicas of an even number of GPUs) and named so;
    "pp0" is refused in one line naming the layouts."""
    from cli_support import SCENARIO

    from planner.catalog import default_catalog
    from planner.export.review import build_review
    from planner.export.scenario import load_scenario

    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + 'parallelism = "pp2"\n', encoding="utf-8")
    review = build_review(load_scenario(path), default_catalog(), source="s.toml", date="2026-12-01")
    (result,) = review.results
    assert "PP2" in result.option.name and result.gpus % 2 == 0 and result.candidate.gpus_per_replica % 2 == 0
    path.write_text(SCENARIO + 'parallelism = "pp0"\n', encoding="utf-8")
    line = one_line(run("export", str(path), "-o", str(tmp_path / "r.csv")), 2)
    assert "parallelism 'pp0' is not one of tp, tp-ep, dp-ep, pp" in line


def test_plan_offers_a_pipeline_beside_tensor_parallelism_beyond_the_fabric():
    """On PCIe cards (L40S: no fabric between GPUs) a plan of 4 shows the same GPUs as a pipeline; a pipeline plan
    shows tensor parallelism; a dense tensor-parallel plan inside an NVLink domain shows no other layout."""
    import planner

    (alt,) = planner.plan("L40S", "Llama-3.1-70B", 8192, gpus=4, weight_precision="fp8").alternatives
    direct = api.decode_step("L40S", "Llama-3.1-70B", 8192, gpus=4, weight_precision="fp8", parallelism="pp",
                             batch=alt.max_batch)  # fmt: skip
    assert (alt.parallelism, alt.gpus, alt.tpot_s) == ("pp", 4, direct.step_s)
    (back,) = planner.plan("H100", "Llama-3.1-70B", 8192, gpus=4, parallelism="pp").alternatives
    assert back.parallelism == "tp"
    assert planner.plan("H100", "Llama-3.1-70B", 8192, gpus=4).alternatives == ()
