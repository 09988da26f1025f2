"""``--random-range-ratio`` as each client reads it (issue 22, item 1): ``vllm bench serve`` draws each length in
[floor(L (1 - r)), ceil(L (1 + r))] around L (vLLM pull request 16126, "Fix range_ratio Bug in RandomDataset",
merged 2025-04-08, in 0.8.4), ``sglang.bench_serving`` in [max(int(L r), 1), L] (0.5.6 ``bench_serving.py``
``sample_random_requests``). A published run is simulated with its client's window."""

from __future__ import annotations

import pytest

from planner.accuracy.published import load_decode_rows, range_ratio_of
from planner.serving.benchmark import range_ratio_bounds, request_lengths
from planner.serving.load import range_ratio_lengths

VLLM = {"batching": "closed loop: vllm bench serve --max-concurrency 8"}
SGLANG = {"batching": "python3 -m sglang.bench_serving --max-concurrency 8"}


class TestTheReading:
    def test_vllm_bench_serve_reads_the_ratio_around_the_length(self):
        """r = 0.15 around L is SGLang's window [r' top, top] with top = 1.15 L and r' = 0.85 / 1.15."""
        assert range_ratio_of(VLLM | {"dataset": "random, --random-range-ratio 0.15"}) == pytest.approx(0.85 / 1.15)

    def test_sglang_and_the_benchmark_serving_forks_read_it_below_the_length(self):
        assert range_ratio_of(SGLANG | {"dataset": "random, --random-range-ratio 0.15"}) == 0.15
        inferencex = {
            "batching": "InferenceX benchmark_serving.py, max concurrency 4",
            "dataset": "random, --random-range-ratio 0.8",
        }
        assert range_ratio_of(inferencex) == 0.8

    def test_no_ratio_is_the_means(self):
        assert range_ratio_of(VLLM | {"dataset": "random"}) is None

    def test_a_window_reaching_zero_is_a_row_problem(self, tmp_path):
        with pytest.raises(ValueError, match="0 to below 1"):
            range_ratio_of(VLLM | {"dataset": "random, --random-range-ratio 1"})
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,batching,dataset,batch_size_or_concurrency,"
            "num_prompts,input_len,output_len,ttft_median_ms,source\n"
            'r1,serving_concurrency,vLLM,H100,1,llama3.1-8b,vllm bench serve,"random, --random-range-ratio 1.0",8,80,'
            "1024,128,50,x\n"
        )
        (row,) = load_decode_rows(path)
        assert row.problem == "--random-range-ratio 1 under vllm bench serve: use 0 to below 1"


class TestTheDraws:
    def test_the_window_is_vllms(self):
        """A mean of 20,000 tokens at r 0.15: every prompt 17,000-23,000, as ``range_ratio_lengths`` (the plan's
        reader of vLLM's flag) draws them."""
        ratio = range_ratio_of(VLLM | {"dataset": "random, --random-range-ratio 0.15"})
        prompts = [p for p, _ in request_lengths(20000, 2000, 400, ratio)]
        assert 17000 <= min(prompts) < 17100 and 22900 < max(prompts) <= 23000
        assert sum(prompts) / len(prompts) == pytest.approx(20000, rel=0.01)
        theirs = [p for p, _ in range_ratio_lengths(20000, 2000, 400, 0.15, reader="vllm")]
        assert (min(theirs), max(theirs)) == pytest.approx((min(prompts), max(prompts)), abs=100)


class TestOneWindowForEveryCaller:
    """The plan's draw (``range_ratio_lengths``, a client's L) and validation's (``request_lengths``, a run's mean)
    take their window from one function, ``range_ratio_bounds``."""

    @pytest.mark.parametrize(
        ("length", "ratio", "reader", "window"),
        [
            (1024, 0.5, "vllm", (512, 1536)),  # vLLM RandomDataset: [floor(L (1 - r)), ceil(L (1 + r))]
            (1024, 0.5, "sglang", (512, 1024)),  # sglang.bench_serving: [max(int(L r), 1), L]
            (1024, 0.0, "sglang", (1, 1024)),  # SGLang's default ratio 0: from one token
            (1, 0.5, "vllm", (1, 2)),
            (3, 0.2, "sglang", (1, 3)),
        ],
    )
    def test_the_window_of_each_reader(self, length, ratio, reader, window):
        assert range_ratio_bounds(length, ratio, reader) == window

    def test_validations_draw_is_sglangs_window_at_the_top_its_mean_gives(self):
        """Mean 922 at r 0.8 (InferenceX's ISL 1,024 reads 921.5): top round(2 x 922 / 1.8) = 1,024, window
        [819, 1,024]; every request inside it, both ends reached over 640 draws."""
        prompts = [p for p, _ in request_lengths(922, 922, 640, 0.8)]
        assert (min(prompts), max(prompts)) == range_ratio_bounds(1024, 0.8, "sglang") == (819, 1024)
