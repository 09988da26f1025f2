"""The engine's sequence limit (vLLM's max_num_seqs) bounds the batch ``planner plan`` serves, times and costs, as it
bounds the export's: memory may hold more sequences than the engine runs at once.

vLLM's defaults (``EngineArgs.get_batch_defaults``, vllm/engine/arg_utils.py v0.19.0 l.2053, quoted at
``planner.engines.profiles.VLLM_BATCHING_RELEASES``): max_num_seqs 1,024 on a device of 70 GiB or more whose name holds
no "a100" (H100), else 256 (A100). Llama 3.1 8B in bf16 at 256 tokens leaves an H100 room for far more than 1,024
sequences of KV cache (16 GB of weights, 32 kB of KV a token: about 1,700 sequences).
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import planner
from planner import api
from planner.catalog import default_catalog
from planner.cli import main
from planner.engines.profiles import engine_profile
from planner.excel import support
from planner.export.evaluate import _candidates
from planner.report import plan

VLLM_H100_MAX_NUM_SEQS = 1024  # vllm/engine/arg_utils.py get_batch_defaults: >= 70 GiB, not "a100"
VLLM_A100_MAX_NUM_SEQS = 256  # the same rule: an "a100" device name is never large


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_engine_limit_is_vllms_default_per_gpu_class():
    cat, vllm = default_catalog(), engine_profile("vllm")
    assert api.engine_sequence_limit(vllm, cat.gpu("H100")) == VLLM_H100_MAX_NUM_SEQS
    assert api.engine_sequence_limit(vllm, cat.gpu("A100")) == VLLM_A100_MAX_NUM_SEQS


def test_data_parallel_attention_gives_each_rank_its_own_limit():
    # vLLM's data-parallel ranks each run an engine core with its own scheduler and max_num_seqs
    vllm, h100 = engine_profile("vllm"), default_catalog().gpu("H100")
    assert api.engine_sequence_limit(vllm, h100, "dp-ep", 8) == 8 * VLLM_H100_MAX_NUM_SEQS
    assert api.engine_sequence_limit(vllm, h100, "tp", 8) == VLLM_H100_MAX_NUM_SEQS


def test_served_batch_is_memory_capped_at_the_limit_and_says_when_the_limit_binds():
    vllm, h100 = engine_profile("vllm"), default_catalog().gpu("H100")
    assert api.served_batch(1732, vllm, h100) == (VLLM_H100_MAX_NUM_SEQS, True)
    assert api.served_batch(433, vllm, h100) == (433, False)
    assert api.served_batch(VLLM_H100_MAX_NUM_SEQS, vllm, h100) == (VLLM_H100_MAX_NUM_SEQS, False)


class TestPlan:
    def test_plan_serves_times_and_costs_the_capped_batch_where_memory_holds_more(self):
        held = int(planner.max_batch("H100", "llama3.1-8b", 256, gpus=1))
        assert held > VLLM_H100_MAX_NUM_SEQS  # the case this test is about
        p = plan("H100", "llama3.1-8b", 256, gpus=1)
        assert (p.max_batch, p.batch, p.batch_capped) == (VLLM_H100_MAX_NUM_SEQS, VLLM_H100_MAX_NUM_SEQS, True)
        assert int(p.memory.max_batch) == held
        tpot = float(planner.tpot("H100", "llama3.1-8b", 256, batch=VLLM_H100_MAX_NUM_SEQS, gpus=1))
        assert float(p.at_batch.step_s) == pytest.approx(tpot)
        cost = float(planner.cost_per_mtok("H100", "llama3.1-8b", 256, batch=VLLM_H100_MAX_NUM_SEQS, gpus=1))
        assert p.cost_per_mtok_usd == pytest.approx(cost)

    def test_plan_text_says_the_engine_limit_binds_and_what_memory_holds(self):
        held = int(planner.max_batch("H100", "llama3.1-8b", 256, gpus=1))
        r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "256")
        assert r.exit_code == 0, r.output
        assert re.search(
            rf"Max batch\s+1,024 sequences of 256 tokens \(vllm's max_num_seqs; memory holds {held:,}\)", r.output
        )
        assert re.search(r"Decode at batch 1024\n", r.output)
        assert re.search(r"Cost at batch 1024 ", r.output)

    def test_plan_json_gives_the_capped_batch_beside_what_memory_holds(self):
        r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "256", "--json")
        data = json.loads(r.output)
        assert data["max_batch"] == data["batch"] == VLLM_H100_MAX_NUM_SEQS
        assert data["engine_max_num_seqs"] == VLLM_H100_MAX_NUM_SEQS
        assert data["memory_max_batch"] == int(planner.max_batch("H100", "llama3.1-8b", 256, gpus=1))
        assert data["max_batch_capped_by_engine"] is True
        expected = float(planner.tpot("H100", "llama3.1-8b", 256, batch=VLLM_H100_MAX_NUM_SEQS, gpus=1))
        assert data["tpot_s"] == pytest.approx(expected)

    def test_a100_is_capped_at_256(self):
        r = run("plan", "--gpu", "A100", "--model", "llama3.1-8b", "--context", "1024", "--json")
        data = json.loads(r.output)
        assert data["memory_max_batch"] > VLLM_A100_MAX_NUM_SEQS
        assert data["max_batch"] == data["batch"] == VLLM_A100_MAX_NUM_SEQS

    def test_where_memory_binds_the_plan_reads_as_before(self):
        r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192")
        data = json.loads(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--json").output)
        assert data["max_batch"] == data["memory_max_batch"] < VLLM_H100_MAX_NUM_SEQS
        assert data["max_batch_capped_by_engine"] is False
        assert re.search(rf"Max batch\s+{data['max_batch']} sequences of 8,192 tokens\n", r.output)

    def test_a_batch_given_past_the_limit_is_timed_with_a_warning(self):
        r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "256", "--batch", "1500")
        assert r.exit_code == 0, r.output
        assert "Decode at batch 1500" in r.output
        assert (
            "warning: batch 1,500 is more than vllm runs at once on 1 x H100 SXM 80GB: 1,024 sequences "
            "(vllm's max_num_seqs)" in r.output
        )


def test_export_candidates_never_pick_a_batch_past_the_limit():
    # the export sizes on the same core limit (planner.api.engine_sequence_limit) as plan
    from planner.accuracy.ranges import TimeRange
    from planner.export.scenario import Option, Workload

    cat = default_catalog()
    gpu, model, vllm = cat.gpu("H100"), cat.model("llama3.1-8b"), engine_profile("vllm")
    workload = Workload(
        peak_requests_per_s=10,
        average_requests_per_s=5,
        prompt_tokens_mean=128,
        prompt_tokens_high=128,
        output_tokens_mean=64,
        output_tokens_high=64,
        tpot_target_s="5 s",  # a loose target: the largest batch that fits meets it
        ttft_target_s="10 s",
    )
    option = Option(gpu="H100", model="llama3.1-8b")
    wide = TimeRange(0.0, 0.0, "")
    (c,) = _candidates(option, workload, cat, gpu, model, "bf16", "bf16", vllm, (1,), (wide,))
    assert int(planner.max_batch("H100", "llama3.1-8b", 192, gpus=1)) > VLLM_H100_MAX_NUM_SEQS
    assert c.batch == VLLM_H100_MAX_NUM_SEQS
    assert len(c.tpot_by_batch_s) == VLLM_H100_MAX_NUM_SEQS


def test_planner_why_says_where_max_batch_is_past_the_engine_limit():
    held = int(planner.max_batch("H100", "llama3.1-8b", 256, gpus=1))
    assert support.evaluate(support.SPECS["MAX_BATCH"], ["H100", "llama3.1-8b", 256, None, 1]) == held
    why = support.why("MAX_BATCH", ["H100", "llama3.1-8b", 256, None, 1])
    assert why == (
        f"ok; memory holds {held:,} sequences, but vllm runs at most 1,024 at once on H100 SXM 80GB (its "
        "max_num_seqs): planner plan serves and times 1,024"
    )
    assert support.why("MAX_BATCH", ["H100", "llama3.1-8b", 8192, None, 1]) == "ok"
