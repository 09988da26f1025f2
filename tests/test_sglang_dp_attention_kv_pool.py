"""SGLang's attention-DP ranks each keep their own KV pool and request slots (h-dsk042, off:
``planner.accuracy.predict.SGLANG_DP_ATTENTION_KV_POOL``; docs/hypotheses/sglang-dp-attention-kv-pool.md).

Sources, the sglang 0.4.3.post2 wheel on PyPI (``pip download sglang==0.4.3.post2 --no-deps``), ``sglang/srt/``:
- ``server_args.py`` l.253-262: ``if self.enable_dp_attention: self.dp_size = self.tp_size`` (every GPU a rank);
- ``managers/data_parallel_controller.py`` l.160-187: one scheduler process per GPU under DP attention, each with its
  own ``dp_rank`` and ports; l.197-199: requests dealt round-robin (``load_balance_method`` "round_robin",
  ``server_args.py`` l.100);
- ``managers/tp_worker.py`` l.99-109: each worker's ``max_total_num_tokens`` from its own ``ModelRunner`` and
  ``max_running_requests = min(max_total_num_tokens // 2, req_to_token_pool.size)`` unless given;
- ``model_executor/model_runner.py`` l.548-573 (``profile_max_num_token``: the MLA cell (kv_lora_rank +
  qk_rope_head_dim) x layers x element size, for that rank's requests) and l.598-606 (``max_num_reqs`` clipped to
  2,048-4,096);
- ``models/deepseek_v2.py`` l.363-420 (``use_dp``: the attention projections ``ReplicatedLinear``), l.811, l.854-855
  (embedding and lm_head replicated): a rank's pool is smaller than a tensor-parallel GPU's.
The row is dstack's DSTK-042 (``catalogs/reference/perf_public.csv``).
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.accuracy import predict, published
from planner.accuracy.published import load_decode_rows
from planner.engines.profiles import ENGINES, with_dp_attention_kv_pool
from planner.engines.sglang import sglang_max_running_requests
from planner.serving import benchmark
from planner.workbook.assumptions import PUBLISHED_ROW_FIELDS

ROWS = {r.record_id: r for r in load_decode_rows()}


def test_the_row_keeps_its_release_ranks_when_read_as_tensor_parallel():
    row = ROWS["DSTK-042"]  # SGLang 0.4.3.post2, --tp 8 --enable-dp-attention: 8 ranks (server_args.py l.253-262)
    assert row.parallelism == "tp" and row.dp_attention_ranks == 8
    assert ROWS["GPUSTACK-004"].dp_attention_ranks == 1  # 0.5.3 without --dp: tensor parallel, no ranks
    assert ROWS["DSTK-013"].dp_attention_ranks == 1  # no flag


def test_off_on_main_and_the_profile_field_set_only_when_on(monkeypatch):
    row = ROWS["DSTK-042"]
    assert predict.SGLANG_DP_ATTENTION_KV_POOL is False
    assert predict._profile_for(row, None).dp_attention_kv_ranks == 0
    monkeypatch.setattr(predict, "SGLANG_DP_ATTENTION_KV_POOL", True)
    assert predict._profile_for(row, None).dp_attention_kv_ranks == 8
    assert predict._profile_for(ROWS["DSTK-013"], None).dp_attention_kv_ranks == 0


def test_no_shipped_profile_sets_it_and_the_workbook_leaves_it_out():
    assert "dp_attention_kv_ranks" in PUBLISHED_ROW_FIELDS
    assert all(p.dp_attention_kv_ranks == 0 for p in ENGINES.values())
    assert with_dp_attention_kv_pool(ENGINES["sglang"], 1) is ENGINES["sglang"]


def _setup(engine, prompts=500, conc=128, inp=3200, out=6400):
    opts = dict(engine=engine, catalog=None, calibration=None, errors="coerce", parallelism="tp")
    prec = dict(weight_precision="fp8", kv_precision="bf16")
    lengths = np.empty(1, dtype=object)
    lengths[0] = [(inp, out)] * prompts
    _, setups, _ = benchmark.serving_setups(
        ["H200 SXM 141GB"], ["DeepSeek-R1"], [inp], [out], [conc], [prompts], [None], [None], ["sglang"], lengths,
        [8], prec, opts,
    )  # fmt: skip
    return setups[0]


def test_the_pool_is_the_ranks_pools_and_the_slots_each_ranks_default(monkeypatch):
    row = ROWS["DSTK-042"]
    tp = _setup(predict._profile_for(row, None))
    monkeypatch.setattr(predict, "SGLANG_DP_ATTENTION_KV_POOL", True)
    eng = predict._profile_for(row, None)
    dp = _setup(eng)
    # main: one tensor-parallel GPU's pool (every GPU holds every request's latent): 52 whole 9,600-token requests
    assert tp.scheduler.kv_tokens < 128 * 9600 < dp.scheduler.kv_tokens
    # on: the "dp-ep" memory plan's pools summed over the 8 ranks (attention weights replicated on each GPU)
    plan = predict.api.memory_plan(
        "H200 SXM 141GB", "DeepSeek-R1", 9600, gpus=8, engine=eng, parallelism="dp-ep",
        weight_precision="fp8", kv_precision="bf16",
    )  # fmt: skip
    assert dp.scheduler.kv_tokens == pytest.approx(float(plan.kv_cache_tokens))
    assert dp.scheduler.kv_tokens / 8 < tp.scheduler.kv_tokens  # a rank's pool is smaller than a TP GPU's
    # slots: each rank's own default (>= 2,048, tp_worker.py l.101-109), capped by the client's 128
    per_rank = sglang_max_running_requests(dp.scheduler.kv_tokens / 8, 163840, eng.memory_fraction_rule)
    assert per_rank >= 2048 and dp.scheduler.max_num_seqs == 128
    # steps as tensor parallel: the same step table, the same chunk
    assert dp.scheduler.max_num_batched_tokens == tp.scheduler.max_num_batched_tokens
    assert dp.table.decode_s(48, 6400) == pytest.approx(tp.table.decode_s(48, 6400))
    assert dp.table.prefill_alone_s(8192) == pytest.approx(tp.table.prefill_alone_s(8192))


def test_the_switch_leaves_a_full_dp_reading_alone(monkeypatch):
    monkeypatch.setattr(published, "SGLANG_DP_ATTENTION", True)
    rows = load_decode_rows(published.reference_dir() / "perf_public.csv")  # read again, not the cached rows
    row = next(r for r in rows if r.record_id == "DSTK-042")
    assert row.parallelism == "dp-ep" and row.dp_attention_ranks == 1
