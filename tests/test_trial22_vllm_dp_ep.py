"""Trial 22 F3: ``planner validate`` reads a vLLM DP-attention + EP run (``vllm serve -tp 1 -dp N
--enable-expert-parallel``, or a ``data_parallel_size`` column) as the "dp-ep" layout ``plan --parallelism dp-ep``
uses, and never drops a stated ``expert_parallel_size`` unseen (``planner.accuracy.published.parallelism_of``).

The row: gpustack's performance lab, DeepSeek-V3.2 on 8 x H200 with vLLM 0.13.0 and 1,000 ShareGPT prompts
(https://github.com/gpustack/gpustack/blob/main/docs/performance-lab/deepseek-v3.2/h200.md), the DP8 + EP run, as
the trial's user entered it (my/dsv32_h200.csv).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.accuracy.published import _decode_row, data_parallel_size, parallelism_of
from tests.cli_support import run

HEADER = (
    "record_id,gpu,model,tensor_parallel_size,expert_parallel_size,engine,engine_version,batching,kind,dataset,"
    "num_prompts,request_rate,input_len,output_len,ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms,"
    "itl_median_ms,itl_p99_ms,output_throughput_tok_s,notes"
)
ROW = (
    "GS-VLLM-DP8EP,H200,deepseek-v3.2,1,8,vllm,0.13.0,all prompts at once,max_throughput,sharegpt,1000,inf,219.1,"
    "197.1,10233.68,14920.03,115.72,2048.82,74.61,1239.62,3003.90,"
    "vllm serve -tp 1 -dp 8 --enable-expert-parallel --max-model-len 81920"
)
CELLS = dict(zip(HEADER.split(","), ROW.split(","), strict=True))


def test_the_trial_row_is_validated_as_dp_ep_on_8_gpus(tmp_path: Path):
    p = tmp_path / "dsv32_h200.csv"
    p.write_text(HEADER + "\n" + ROW + "\n")
    r = run("validate", "--decode", str(p))
    assert r.exit_code == 0, r.output
    assert "GS-VLLM-DP8EP TPOT median ms" in r.output
    assert "deepseek-v3.2 H200 DEP8" in r.output
    assert "do not fit" not in r.output and "TP1" not in r.output


def test_the_row_reads_the_group_and_layout_plan_uses():
    row = _decode_row(Path("trial22.csv"), 0, CELLS)
    assert (row.problem, row.parallelism, row.gpus) == ("", "dp-ep", 8)


def test_a_data_parallel_size_column_says_the_same():
    cells = {**CELLS, "notes": "", "data_parallel_size": "8"}  # no command quoted: the column and the EP cell
    assert data_parallel_size(cells) == 8
    assert parallelism_of(cells) == "dp-ep"
    flag_only = {**cells, "expert_parallel_size": "", "notes": "--enable-expert-parallel"}
    assert parallelism_of(flag_only) == "dp-ep"


def test_other_data_parallel_forms_are_refused_with_a_reason():
    no_ep = {**CELLS, "expert_parallel_size": "", "notes": "vllm serve -tp 1 -dp 8"}
    with pytest.raises(ValueError, match="without expert parallelism"):
        parallelism_of(no_ep)
    with pytest.raises(ValueError, match="attention tensor-parallel inside each rank"):
        parallelism_of({**CELLS, "tensor_parallel_size": "2", "notes": "-tp 2 -dp 4 --enable-expert-parallel"})
    with pytest.raises(ValueError, match="experts over 4 GPUs is not modelled"):
        parallelism_of({**CELLS, "expert_parallel_size": "4"})
    with pytest.raises(ValueError, match="read for vLLM rows only"):
        data_parallel_size({**CELLS, "engine": "sglang", "data_parallel_size": "8"})


def test_an_expert_parallel_size_above_the_group_is_not_dropped_unseen(tmp_path: Path):
    cells = {**CELLS, "notes": "gpustack DP8 + EP"}  # tp 1, ep 8, no data parallelism stated
    with pytest.raises(ValueError, match="expert_parallel_size 8 is more than the row's group of 1 GPU"):
        parallelism_of(cells)
    p = tmp_path / "ep-only.csv"
    p.write_text(HEADER + "\n" + ROW.replace("vllm serve -tp 1 -dp 8 --enable-expert-parallel --max-model-len 81920",
                                             "gpustack DP8 + EP") + "\n")  # fmt: skip
    r = run("validate", "--decode", str(p))
    assert "give data_parallel_size" in r.output
    assert "do not fit" not in r.output


def test_sglang_and_trtllm_rows_keep_their_own_markers():
    sglang = {**CELLS, "engine": "sglang", "tensor_parallel_size": "8", "notes": "--tp 8 -dp 8"}
    assert data_parallel_size(sglang) == 1  # vLLM's -dp is read on vLLM rows only
