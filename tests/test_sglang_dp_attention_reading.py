"""SGLang's ``--enable-dp-attention`` as each release reads it (``planner.accuracy.published.sglang_attention_dp``;
s183, measured and not shipped: docs/history.md).

Sources, the wheels on PyPI, ``sglang/srt/server_args.py``:
- 0.4.3.post2 l.253-262 and 0.4.4 l.264-273: ``if self.enable_dp_attention: self.dp_size = self.tp_size`` and
  ``self.chunked_prefill_size = self.chunked_prefill_size // 2``;
- 0.4.4.post1 l.264-273: ``assert self.dp_size > 1, "Please set a dp-size > 1 ..."`` and
  ``chunked_prefill_size // self.dp_size``;
- 0.5.3 l.949-960 and 0.5.6.post2 l.1563-1574 (``_handle_data_parallelism``): ``if self.dp_size == 1:
  self.enable_dp_attention = False``, else the chunk divided by ``dp_size``.
The rows are the shipped ones that give the flag (dstack's 0.4.3.post2 runs, GPUStack's 0.5.3 and 0.5.6.post2 runs).
"""

from __future__ import annotations

import pytest

from planner.accuracy import published
from planner.accuracy.published import parallelism_of, read_csv_rows, reference_dir, sglang_attention_dp

#: The shipped rows' cells, by record_id.
CELLS = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}


def _row(record_id: str) -> dict[str, str]:
    return dict(CELLS[record_id])


def test_up_to_0_4_4_the_flag_alone_makes_every_gpu_a_rank_and_halves_the_chunk():
    row = _row("DSTK-010")  # SGLang 0.4.3.post2, --tp 8 --enable-dp-attention, no --dp
    assert "--enable-dp-attention" in row["batching"] and "--dp" not in row["batching"].replace("--dp-attention", "")
    assert sglang_attention_dp(row) == (8, 2)
    assert sglang_attention_dp({**row, "engine_version": "0.4.4"}) == (8, 2)


def test_later_releases_take_the_ranks_from_dp_and_divide_the_chunk_by_them():
    assert sglang_attention_dp(_row("GPUSTACK-027")) == (8, 8)  # 0.5.6.post2: --tp-size 8 --enable-dp-attention --dp 8
    assert sglang_attention_dp(_row("GPUSTACK-024")) == (8, 8)  # --dp-size 8
    refused_there = {**_row("DSTK-010"), "engine_version": "0.4.4.post1"}  # no --dp: that release refuses it
    assert sglang_attention_dp(refused_there) == (1, 1)


def test_a_0_5_release_without_dp_runs_tensor_parallel():
    row = _row("GPUSTACK-004")  # 0.5.3: --tp-size 8 --enable-dp-attention, dp_size 1 turns it off
    assert sglang_attention_dp(row) == (1, 1)


def test_only_sglang_rows_with_the_flag_are_read():
    assert sglang_attention_dp({**_row("DSTK-010"), "engine": "vLLM"}) == (1, 1)
    assert sglang_attention_dp({**_row("DSTK-013")}) == (1, 1)  # SGLang 0.4.2.post4 on MI300X, no flag


def test_the_reading_is_off_on_main_and_reads_dp_ep_when_on(monkeypatch):
    row = _row("DSTK-010")
    assert parallelism_of(row) == "tp"
    monkeypatch.setattr(published, "SGLANG_DP_ATTENTION", True)
    assert parallelism_of(row) == "dp-ep"
    assert parallelism_of(_row("GPUSTACK-004")) == "tp"
    fewer = {k: v.replace("--dp 8", "--dp 4") if isinstance(v, str) else v for k, v in _row("GPUSTACK-027").items()}
    with pytest.raises(ValueError, match="over 4 ranks of a 8-GPU group is not modelled"):
        parallelism_of(fewer)
