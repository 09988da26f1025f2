"""SGLang's two budgets per prefill batch (s133; shipped): ``max_prefill_tokens``
(16,384) for whole prompts beside ``chunked_prefill_size`` for chunks (0.4.4 ``managers/schedule_policy.py``
``PrefillAdder``: ``rem_input_tokens`` l.287, the refusal at l.464, ``budget_state`` l.333-337;
``server_args.py`` l.69). planner.serving.simulate."""

from __future__ import annotations

from planner.serving.simulate import SGLANG_MAX_PREFILL_TOKENS, Scheduler, StepTable, simulate

#: A flat table: a decode step 10 ms at any batch, a prefill step 20 ms at any size; each figure is a count of steps.
TABLE = StepTable(
    decode_lo_s=(0.010,) * 300, decode_hi_s=(0.010,) * 300, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.020, 0.020), shared_s=0.005,
)  # fmt: skip


def _prefill_steps(lengths, chunk_tokens: int = 131072, concurrency: int = 300) -> list[int]:
    trace: list = []
    scheduler = Scheduler(max_num_seqs=concurrency, max_num_batched_tokens=chunk_tokens, kind="sglang")
    simulate(TABLE, scheduler, 0, 0, len(lengths), client_concurrency=concurrency, lengths=lengths, trace=trace)
    return [s.prefill_tokens for s in trace if s.prefill_tokens]


def test_the_default_is_16384_tokens():
    """``ServerArgs.max_prefill_tokens: int = 16384`` (0.4.4 ``server_args.py`` l.69, 0.4.3.post4 l.70)."""
    assert SGLANG_MAX_PREFILL_TOKENS == 16384


def test_chunked_prefill_size_131072_still_takes_33_prompts_of_485_a_batch():
    """xinyuwei's DeepSeek-R1 launch (``--chunked-prefill-size 131072``, XWDS-003): 300 prompts of 485 tokens sent
    at once are prefilled 33 a batch (33 x 485 = 16,005 <= 16,384; the 34th would make 16,490), ten batches, not
    270 in one 130,950-token step."""
    steps = _prefill_steps([(485, 2)] * 300)
    assert steps[:10] == [16005] * 9 + [3 * 485]


def test_the_first_prompt_of_a_batch_enters_whatever_its_length():
    """A prompt longer than 16,384 tokens goes whole when it is the batch's first (the refusal needs a non-empty
    ``can_run_list``) and the chunk budget holds it; the next one waits for the next batch."""
    assert _prefill_steps([(20000, 2), (100, 2)], concurrency=2)[:2] == [20000, 100]


def test_a_prompt_past_what_is_left_waits_rather_than_being_chunked():
    """Chunk budget 8,192 (0.4's default above 25,000 MiB): 8,000 tokens enter, then a 9,000-token prompt exceeds
    the 8,384 left of the input budget and is refused (``AddReqResult.OTHER``), where the chunk budget alone would
    have cut 192 tokens of it into this batch."""
    assert _prefill_steps([(8000, 2), (9000, 2)], chunk_tokens=8192, concurrency=2)[:3] == [8000, 8192, 808]


# s139 (shipped): a row's own ``--max-prefill-tokens N`` (planner.engines.profiles.with_row_max_prefill_tokens)

#: InferenceX's SGLang launch for the IX870 rows (benchmarks/dsr1_fp8_h200.sh at 1fc5d73, ISL = OSL = 1024)
IX870_LAUNCH = (
    "serving script at line 27: python3 -m sglang.launch_server --tensor-parallel-size=8 --disable-radix-cache "
    "--max-running-requests 512 --chunked-prefill-size 32768 --max-prefill-tokens 32768 --mem-fraction-static 0.82"
)


def test_a_rows_own_command_reads_32768():
    """``server_flag`` reads ``--max-prefill-tokens 32768`` from InferenceX's launch line, and either spelling."""
    from planner.accuracy.published import PREFILL_INPUT_FLAGS, server_flag

    assert server_flag({"notes": IX870_LAUNCH}, PREFILL_INPUT_FLAGS) == 32768
    assert server_flag({"batching": "--max_prefill_tokens=20000"}, PREFILL_INPUT_FLAGS) == 20000
    assert server_flag({"notes": "--chunked-prefill-size 8192"}, PREFILL_INPUT_FLAGS) is None


def test_the_ix870_rows_read_their_launch_lines_budgets():
    """The IX870 rows quote their launch line (InferenceX benchmarks/dsr1_fp8_h200.sh at 1fc5d73, lines 28-35, the
    ISL = OSL = 1024 branch): ``--chunked-prefill-size 32768 --max-prefill-tokens 32768 --max-running-requests 512``,
    read as the row's prefill budgets and request slots."""
    from planner.accuracy.predict import load_decode_rows

    ix = [r for r in load_decode_rows() if r.source.endswith("InferenceX/issues/870")]
    assert len(ix) == 4
    assert {r.max_prefill_tokens for r in ix} == {32768}
    assert {r.max_num_batched_tokens for r in ix} == {32768}


def test_a_batch_takes_whole_prompts_up_to_the_rows_budget():
    """Budget 32,768 (chunk budget 131,072): 300 prompts of 485 tokens sent at once are prefilled 67 a batch
    (67 x 485 = 32,495 <= 32,768; the 68th would make 32,980), four batches of 67 and one of 32, where the default
    16,384 takes 33 a batch."""
    from planner.serving.simulate import RunBehaviour

    trace: list = []
    scheduler = Scheduler(max_num_seqs=300, max_num_batched_tokens=131072, kind="sglang")
    how = RunBehaviour(max_prefill_tokens=32768)
    lengths = [(485, 2)] * 300
    simulate(TABLE, scheduler, 0, 0, 300, client_concurrency=300, lengths=lengths, trace=trace, behaviour=how)
    steps = [s.prefill_tokens for s in trace if s.prefill_tokens]
    assert steps[:5] == [32495] * 4 + [32 * 485]


def test_the_budget_rides_on_a_published_rows_profile_only():
    """``engine_behaviour`` carries a profile's ``max_prefill_tokens`` (set by ``with_row_max_prefill_tokens`` on a
    published row whose command sets it); a plan's profile carries 0, SGLang's default."""
    from planner.engines import profiles
    from planner.serving.benchmark import engine_behaviour
    from planner.serving.simulate import RunBehaviour

    base = profiles.engine_profile("sglang")
    assert engine_behaviour(base, None, RunBehaviour()).max_prefill_tokens == 0
    assert profiles.with_row_max_prefill_tokens(base, None) is base  # a command without the flag
    row = profiles.with_row_max_prefill_tokens(base, 32768)
    assert engine_behaviour(row, None, RunBehaviour()).max_prefill_tokens == 32768
