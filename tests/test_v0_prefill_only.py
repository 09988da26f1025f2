"""vLLM V0's default scheduler (no chunked prefill): a step that admits prompts prefills only (s127,
``planner.engines.profiles.with_v0_default_scheduler`` on published rows' profiles; docs/history.md, s127).

V0's ``Scheduler._schedule`` runs ``_schedule_default`` unless ``chunked_prefill_enabled`` (vllm/core/scheduler.py
v0.6.3 l.1174-1179, v0.7.3 l.1440-1445); it schedules whole waiting prompts first (``_schedule_prefills(...,
enable_chunking=False)``, v0.6.3 l.1014, v0.7.3 l.1232) and the running decodes only ``if len(prefills.seq_groups)
== 0`` ("Don't schedule decodes if prefills are scheduled", v0.6.3 l.1022-1027, v0.7.3 l.1240-1245).
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.accuracy import predict as acc
from planner.engines.profiles import (
    engine_profile,
    vllm_mla_prompt_limit,
    vllm_v0_chunks_by_default,
    with_v0_default_scheduler,
)
from planner.serving.benchmark import engine_behaviour
from planner.serving.simulate import DEFAULT_BEHAVIOUR, RunBehaviour, Scheduler, StepTable, simulate

#: A decode step of 10 ms at any batch and context; a prefill of n tokens n x 0.5 ms; 9 ms shared by a mixed step.
DECODE_S, PREFILL_S_PER_TOKEN, SHARED_S = 0.010, 0.5e-3, 0.009
TABLE = StepTable((DECODE_S,) * 4, (DECODE_S,) * 4, 100.0, 200.0, (0.0, 1000.0), (0.0, 0.5), SHARED_S)


def _two_decoding_one_arriving(prefill_only: bool):
    """Two 100-token prompts at 0 (10 output tokens each) and a third 100-token prompt arriving at 125 ms, while
    the two decode (vLLM's synchronous loop: it joins the step after the decode step running then, at 130 ms)."""
    trace: list = []
    run = simulate(
        TABLE, Scheduler(8, 4096, kind="vllm", chunked_prefill=False), 100, 10, 3,
        arrivals_s=np.array([0.0, 0.0, 0.125]), lengths=[(100, 10), (100, 10), (100, 2)],
        behaviour=RunBehaviour(prefill_only_steps=prefill_only), trace=trace,
    )  # fmt: skip
    return run, trace


def _runs(tmp_path, head: str, *lines: str) -> list:
    """The rows of a user's runs file with ``head`` and ``lines``, as ``planner validate --decode`` reads it."""
    p = tmp_path / "runs.csv"
    p.write_text("\n".join((head, *lines)) + "\n", encoding="utf-8")
    return acc.load_decode_rows(p)


def test_the_decodes_gap_is_the_prefill_step_and_their_own():
    """By hand: the first step prefills both prompts (200 x 0.5 ms = 100 ms), three decode steps end at 130 ms, the
    arrival's prefill-only step takes 100 x 0.5 ms = 50 ms with no decode in it, then a decode step of 10 ms: the two
    decoding requests' gap is 50 + 10 = 60 ms. Their tokens: 110, 120, 130, 190, 200, ..., 240 ms, so TPOT =
    (240 - 100) / 9 ms. A V1-style mixed step would instead run the decode and the prefill together in
    max(10, 50, 10 + 50 - 9) = 51 ms."""
    run, trace = _two_decoding_one_arriving(prefill_only=True)
    prefill_step = 100 * PREFILL_S_PER_TOKEN
    alone = [s for s in trace if s.prefill_tokens == 100]
    assert len(alone) == 1 and alone[0].batch == 0 and alone[0].steps == 0  # no decode in the prefill step
    assert alone[0].start_s == pytest.approx(0.130) and alone[0].dt_s == pytest.approx(prefill_step)
    gaps, counts = run.samples.itl
    assert gaps.max() == pytest.approx(prefill_step + DECODE_S)  # 60 ms
    assert counts[np.argmax(gaps)] == 2  # both decoding requests wait it out, the arrival does not (below)
    tpot, n = run.samples.tpot
    assert sorted(tpot)[-1] == pytest.approx((0.240 - 0.100) / 9)


def test_the_arrivals_first_gap_starts_at_its_first_token():
    """By hand (s129): the arrival's first token comes at the end of its prefill-only step (180 ms, TTFT 55 ms), its
    second at the end of the next decode step (190 ms): its one gap, and its TPOT, are 10 ms, not the 60 ms the two
    decoding requests waited. Every gap of the run: 10 ms x 2 (110 ms), x 2 x 2 (120, 130 ms), 60 ms x 2 and 10 ms x 1
    (190 ms), then 10 ms x 2 x 5 (200..240 ms): 19 gaps, 9 per old request and 1 for the arrival."""
    run, _ = _two_decoding_one_arriving(prefill_only=True)
    gaps, counts = run.samples.itl
    by_gap = {round(float(g), 6): 0 for g in gaps}
    for g, c in zip(gaps, counts, strict=True):
        by_gap[round(float(g), 6)] += int(c)
    assert by_gap == {DECODE_S: 17, round(100 * PREFILL_S_PER_TOKEN + DECODE_S, 6): 2}
    tpot, n = run.samples.tpot
    assert min(tpot) == pytest.approx(DECODE_S) and n[np.argmin(tpot)] == 1


def test_one_prefill_only_step_after_another():
    """Two arrivals, one prefilled in each of two prefill-only steps in a row (the second arrives while the first's
    step runs): the old requests wait out both (50 + 50 ms), the first arrival the second's step only (50 ms), the
    second arrival neither; each then one decode step of 10 ms."""
    run = simulate(
        TABLE, Scheduler(8, 4096, kind="vllm", chunked_prefill=False), 100, 10, 4,
        arrivals_s=np.array([0.0, 0.0, 0.125, 0.150]), lengths=[(100, 10), (100, 10), (100, 3), (100, 2)],
        behaviour=RunBehaviour(prefill_only_steps=True),
    )  # fmt: skip
    gaps, counts = run.samples.itl
    first = {round(float(g), 6): int(c) for g, c in zip(gaps, counts, strict=True) if g > 0.011}
    assert first == {0.11: 2, 0.06: 1}  # the old two: 100 + 10 ms; the first arrival: 50 + 10 ms


def test_without_the_rule_the_prefill_shares_the_decode_step():
    run, trace = _two_decoding_one_arriving(prefill_only=False)
    mixed = [s for s in trace if s.prefill_tokens == 100]
    assert mixed[0].batch == 2
    assert mixed[0].dt_s == pytest.approx(DECODE_S + 100 * PREFILL_S_PER_TOKEN - SHARED_S)  # 51 ms
    assert run.samples.itl[0].max() == pytest.approx(0.051)


@pytest.mark.parametrize(
    ("version", "context", "rocm", "chunks"),
    [
        ("0.4.3", 131072, False, False),  # no rule before 0.5.3 (0.4.3, 0.5.0-0.5.2 arg_utils.py have none)
        ("0.5.3", 131072, False, True),  # 0.5.3 l.747: max_model_len > 32768
        ("0.6.0", 131072, True, True),  # device_type "cuda" on ROCm too (v0.6.0 config.py l.1062-1068)
        ("0.6.3", 32768, False, False),  # not above 32,768
        ("0.6.4.post1", 131072, True, True),
        ("0.6.5", 131072, True, False),  # l.1084: not current_platform.is_rocm()
        ("0.7.3", 131072, True, False),  # l.1185
        ("0.7.3", 131072, False, True),
        ("0.8.3", 40960, True, False),  # _set_default_args_v0: current_platform.is_cuda() (l.1560)
        ("rocm/vllm-dev:nightly_main_20250423 (V0 engine: VLLM_USE_V1=0)", 131072, True, False),
    ],
)
def test_v0_chunks_by_itself_by_release(version, context, rocm, chunks):
    assert vllm_v0_chunks_by_default(version, context, rocm=rocm) is chunks


def test_sliding_window_prefix_cache_and_mla_keep_it_off():
    assert not vllm_v0_chunks_by_default("0.6.3", 131072, rocm=False, sliding_window=True)
    assert not vllm_v0_chunks_by_default("0.6.0", 131072, rocm=False, prefix_caching=True)  # 0.6.0 l.859
    assert vllm_v0_chunks_by_default("0.6.1", 131072, rocm=False, prefix_caching=True)  # gone in 0.6.1
    assert not vllm_v0_chunks_by_default("0.8.3", 163840, rocm=False, mla=True)


def test_an_mla_model_runs_unchunked_from_0_7_1():
    """vLLM 0.7.1 forced chunked prefill off for MLA (vllm/config.py v0.7.3 l.3327-3335, "MLA is enabled; forcing
    chunked prefill and prefix caching to be disabled", PR 12642); before it no model ran as MLA, and chunking
    followed the long-context rule."""
    assert not vllm_v0_chunks_by_default("0.7.4.dev181+gf35f8e22", 163840, rocm=False, mla=True)
    assert not vllm_v0_chunks_by_default("0.7.1", 163840, rocm=False, mla=True)
    assert vllm_v0_chunks_by_default("0.7.0", 163840, rocm=False, mla=True)
    assert vllm_v0_chunks_by_default("0.7.4.dev181+gf35f8e22", 163840, rocm=False)  # not MLA: the long-context rule


def test_the_unchunked_budget_is_max_model_len_at_least_2048():
    """V0 without chunked prefill budgets ``max(max_model_len, 2048)`` tokens a step where the server sets none
    (vllm/config.py v0.7.3 ``SchedulerConfig.__post_init__`` l.1536; for MLA again by PR 13620); a chunking run keeps
    the profile's own budget."""
    base = engine_profile("vllm-0.10")
    kw = dict(chunked_prefill=None, scheduler_steps=None, rocm=False, mla=True)
    assert with_v0_default_scheduler(base, "vLLM", "0.7.4", max_model_len=163840, **kw).max_num_batched_tokens == 163840
    assert with_v0_default_scheduler(base, "vLLM", "0.6.0", max_model_len=1024, **kw).max_num_batched_tokens == 2048
    chunking = with_v0_default_scheduler(base, "vLLM", "0.6.3", max_model_len=131072, **{**kw, "mla": False})
    assert chunking is base


def test_0_7_1_to_0_7_3_kept_2048_tokens_for_an_mla_model_and_refused_longer_prompts():
    """vLLM 0.7.1-0.7.3 forced an MLA model's chunked prefill off after the long-context rule (on CUDA above 32,768
    tokens) had set the chunked default's 2,048-token budget, and kept it (the 0.7.3 wheel's vllm/config.py
    l.3327-3335 sets no budget): "Input prompt (32889 tokens) is too long and exceeds limit of 2048" (vLLM issue 13209,
    0.7.2); PR 13620 set ``max(max_model_len, 2048)`` after 0.7.3."""
    kw = dict(rocm=False, mla=True, chunked_prefill=None, max_num_batched_tokens=None)
    assert vllm_mla_prompt_limit("0.7.3", 163840, **kw) == 2048
    assert vllm_mla_prompt_limit("0.7.1", 163840, **kw) == 2048
    assert vllm_mla_prompt_limit("0.7.4.dev181+gf35f8e22", 163840, **kw) is None  # after PR 13620
    assert vllm_mla_prompt_limit("0.7.0", 163840, **kw) is None  # before PR 12642
    assert vllm_mla_prompt_limit("0.7.3", 163840, **{**kw, "rocm": True}) is None  # ROCm: no chunked default
    assert vllm_mla_prompt_limit("0.7.3", 32768, **kw) is None  # not long context: max(32,768, 2,048)
    assert vllm_mla_prompt_limit("0.7.3", 163840, **{**kw, "max_num_batched_tokens": 16384}) is None
    assert vllm_mla_prompt_limit("0.7.3", 163840, **{**kw, "mla": False}) is None  # chunks, as asked
    base = engine_profile("vllm-0.10")
    v073 = with_v0_default_scheduler(
        base, "vLLM", "0.7.3", chunked_prefill=None, scheduler_steps=None, max_model_len=163840, rocm=False, mla=True
    )
    assert v073.prefill_only_steps and v073.max_num_batched_tokens == 2048


def test_validate_refuses_such_a_run_and_says_why(tmp_path):
    """A DeepSeek-R1 run on vLLM 0.7.3 with 3,200-token prompts is refused with the reason; with 1,000-token prompts,
    or with the server's own --max-num-batched-tokens, it is predicted."""
    head = "gpu,model,batch,input_len,output_len,tpot_ms,engine,engine_version,batching,num_prompts,kind,tensor_parallel_size"
    cmd = "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8"
    long, short, budgeted = _runs(
        tmp_path,
        head,
        f"H200,deepseek-r1,8,3200,800,40,vLLM,0.7.3,{cmd},80,serving_concurrency,8",
        f"H200,deepseek-r1,8,1000,800,40,vLLM,0.7.3,{cmd},80,serving_concurrency,8",
        f"H200,deepseek-r1,8,3200,800,40,vLLM,0.7.3,{cmd} --max-num-batched-tokens 16384,80,serving_concurrency,8",
    )
    why = acc.why_not_predicted(long)
    assert "refused prompts over 2,048 tokens" in why and "issue 13209" in why and "--max-num-batched-tokens" in why
    assert acc.why_not_predicted(short) == "" and acc.why_not_predicted(budgeted) == ""
    assert np.isnan(acc.predict_decode(long).tpot_s) and acc.predict_decode(short).tpot_s > 0


def test_a_rows_max_model_len_is_read_from_its_command():
    """dstack's vLLM 0.7.3 MI300X server ran ``vllm serve ... --max-model-len 32768`` (DSTK-001's batching cell); its
    H200 server set none (DSTK-019)."""
    rows = {r.record_id: r for r in acc.load_decode_rows()}
    assert rows["DSTK-001"].max_model_len == 32768
    assert rows["DSTK-019"].max_model_len is None
    assert acc._profile_for(rows["DSTK-001"], None).max_num_batched_tokens == 32768
    assert acc._profile_for(rows["DSTK-019"], None).max_num_batched_tokens == 163840  # DeepSeek-R1's context


def test_a_closed_loops_wave_is_prefilled_in_one_step():
    """dstack's DeepSeek-R1 closed loops on 8 x H200, vLLM 0.7.4.dev181 (MLA, so unchunked; fixed 3,200 / 800 token
    requests): every request of a wave gets its first token at once (TTFT std 11 ms of 976 at 4 in flight), and the
    mean TTFT grows with the wave, 976 ms at 4 in flight to 14,164 ms at 64, 14.5x (Deepseek-R1/raw_data/
    online_results.csv lines 20-25, dstackai/benchmarks 7f37e66; DSTK-020, DSTK-024). Chunked at 8,192 tokens the
    simulation staggered the waves and grew 3.2x; whole waves grow it more than 10x."""
    rows = {r.record_id: r for r in acc.load_decode_rows()}
    at_4, at_64 = (acc.predict_decode(rows[i]).ttft_s for i in ("DSTK-024", "DSTK-020"))
    assert 10.0 < at_64 / at_4 < 16.0


def test_it_reaches_only_v0_rows_without_chunked_prefill():
    base = engine_profile("vllm")
    assert not base.prefill_only_steps  # the profile users and the workbook plan with
    kw = dict(chunked_prefill=None, scheduler_steps=None, max_model_len=32768, rocm=True)
    assert with_v0_default_scheduler(base, "vLLM", "0.6.0", **kw).prefill_only_steps
    assert not with_v0_default_scheduler(base, "vLLM", "0.9.2", **kw).prefill_only_steps  # V1
    assert not with_v0_default_scheduler(base, "vLLM", "0.6.0", **{**kw, "scheduler_steps": 10}).prefill_only_steps
    assert not with_v0_default_scheduler(base, "vLLM", "0.6.0", **{**kw, "chunked_prefill": True}).prefill_only_steps
    assert not with_v0_default_scheduler(base, "vLLM", "0.6.0", **{**kw, "max_model_len": 131072}).prefill_only_steps
    assert not with_v0_default_scheduler(engine_profile("sglang"), "SGLang", "0.4.3", **kw).prefill_only_steps
    flagged = with_v0_default_scheduler(base, "vLLM", "0.6.0", **kw)
    assert engine_behaviour(flagged, "vllm", DEFAULT_BEHAVIOUR).prefill_only_steps
    assert not engine_behaviour(base, "vllm", DEFAULT_BEHAVIOUR).prefill_only_steps


def test_the_reference_rows_it_touches():
    """The published rows whose profile carries the rule: vLLM V0 serving runs without chunked prefill or multi-step
    (all held out; of load_public.csv only s168's vLLM 0.4.1 runs on an RTX 3090, LD098-LD103, whose server log
    prints enable_chunked_prefill=False: its other V0 runs, LD015-LD021, are multi-step; nor XWQ72-001..006, whose
    version cell gives --num-scheduler-steps 10, read since s129); and s169's dstack DeepSeek-R1 runs with vLLM 0.7.3
    on MI300X (DSTK-001..006, 037, 038, 041) and 0.7.4.dev181 on H200 (DSTK-019..024, 031..033; MLA, unchunked from
    0.7.1, s184), V0 releases."""
    touched = set()
    for path in (None, acc.reference_dir() / "load_public.csv"):
        for row in acc.load_decode_rows() if path is None else acc.load_decode_rows(path):
            if acc._profile_for(row, None).prefill_only_steps:
                touched.add(row.record_id)
    dstack_mi300x_v0 = {f"DSTK-{i:03d}" for i in (1, 2, 3, 4, 5, 6, 37, 38, 41)}  # vLLM 0.7.3 (V0) on MI300X, s169
    dstack_h200_mla = {f"DSTK-{i:03d}" for i in (19, 20, 21, 22, 23, 24, 31, 32, 33)}  # vLLM 0.7.4.dev181, s184
    assert touched == {
        "XWQ235-001", "MLPF41-001", "MLPF41-002", *(f"LD{i:03d}" for i in range(98, 104))
    } | dstack_mi300x_v0 | dstack_h200_mla  # fmt: skip


def test_a_command_with_prefix_caching_keeps_0_6_0_from_chunking(tmp_path):
    """vLLM 0.5.3-0.6.0 turn long-context chunking off when prefix caching is on (arg_utils.py 0.5.3 l.760, 0.6.0
    l.859), whatever the prompts' warmth: a V0 serving run of Llama-3.1-8B (131,072 context) on an H100 whose command
    says ``--enable-prefix-caching`` runs prefill-only steps, and without the flag it chunks."""
    head = "gpu,model,batch,input_len,output_len,tpot_ms,engine,engine_version,batching,num_prompts,request_rate"
    cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
    flagged, plain, refused = _runs(
        tmp_path,
        head,
        f"H100,llama3.1-8b,,1000,200,20,vLLM,0.6.0,{cmd} --enable-prefix-caching,200,4",
        f"H100,llama3.1-8b,,1000,200,20,vLLM,0.6.0,{cmd},200,4",
        f"H100,llama3.1-8b,,1000,200,20,vLLM,0.6.0,{cmd} --no-enable-prefix-caching,200,4",
    )
    assert flagged.prefix_caching and not plain.prefix_caching and not refused.prefix_caching
    assert acc._profile_for(flagged, None).prefill_only_steps
    assert not acc._profile_for(plain, None).prefill_only_steps
    assert not acc._profile_for(refused, None).prefill_only_steps
