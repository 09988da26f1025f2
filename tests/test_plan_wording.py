"""What ``planner plan`` and ``planner catalog list`` say, checked against figures from the sources they cite
(a user trial's wording and validation defects: T4 + gpt-oss, KV-head replication, vLLM's concurrency line, the
engine's memory fraction, KV formats per engine, singular counts, column layout, thousands separators)."""

from __future__ import annotations

import pytest
from cli_support import one_line, run

from planner import api
from planner.catalog import default_catalog
from planner.cli.plan import group_line
from planner.engines.profiles import ENGINES
from planner.errors import OutOfRangeError
from planner.report import plan
from planner.serving.fleet import GroupChoice, GroupTried

CAT = default_catalog()


def _row(text: str, label: str) -> str:
    """The value of the first ``label`` row of a plan's text."""
    line = next(line for line in text.splitlines() if line.startswith(label))
    return line[len(label) :].strip()


class TestT4GptOss:
    def test_vllm_refuses_gpt_oss_as_published_on_a_t4_and_says_how_it_could_run(self):
        """vLLM's ``Mxfp4Config.get_min_capability`` returns 80 (vllm/model_executor/layers/quantization/mxfp4.py;
        SGLang's likewise), checked by ``VllmConfig._get_quantization_config`` before any kernel is chosen; a T4 run
        of gpt-oss-120b printed "ValueError: The quantization method mxfp4 is not supported for the current GPU.
        Minimum capability: 80. Current capability: 75." plan planned it (in fp16, or kept MXFP4 in the API); now
        every surface refuses it with vLLM's words and the ways out."""
        out = run("plan", "--gpu", "T4", "--model", "gpt-oss-120b", "--context", "8192")
        line = one_line(out, 2)
        assert "Minimum capability: 80. Current capability: 75." in line and "-w fp16" in line, line
        assert "vLLM (engine 'vllm')" in line
        with pytest.raises(OutOfRangeError, match="Minimum capability: 80"):
            api.max_batch("T4", "gpt-oss-120b", 8192)
        with pytest.raises(OutOfRangeError, match="Minimum capability: 80"):
            plan("T4", "gpt-oss-20b", 8192, engine="sglang")

    def test_fp16_weights_given_upcast_the_experts_and_cost_their_bytes(self):
        """-w fp16 plans a checkpoint whose experts were converted: 116.83e9 parameters (gpt-oss-120b model card,
        arXiv:2508.10925) x 2 B = 233.66 GB of weights, 3.6x the MXFP4 checkpoint's 65.19 GB."""
        p = plan("T4", "gpt-oss-120b", 8192, weight_precision="fp16")
        assert float(p.memory.weight_bytes) == pytest.approx(116.83e9 * 2, rel=1e-3)

    def test_an_engine_that_loads_mxfp4_keeps_the_experts_as_published_as_the_api_does(self):
        """The 'ideal' engine (no loader of its own) keeps the MXFP4 experts; only the bf16 layers run in fp16
        (the same bytes). plan's max batch is then the API's for the same arguments (it held 110 against the API's
        247 on 4 x T4 at 8,192 tokens, upcasting the experts where the API did not)."""
        p = plan("T4", "gpt-oss-20b", 8192, engine="ideal", gpus=4)
        note = next(w for w in p.warnings if w.startswith("T4 has no bf16"))
        assert "bf16 layers and KV cache run in fp16, the same bytes" in note
        assert "MXFP4 routed experts stay as published (engine 'ideal' loads them" in note
        assert p.memory.max_batch == api.max_batch("T4", "gpt-oss-20b", 8192, engine="ideal", gpus=4)

    def test_a_dense_bf16_model_keeps_the_same_bytes_wording(self):
        """Llama-3.1-8B (bf16, no experts) on a T4: fp16 holds the same 2 B a weight (vLLM's --dtype auto picks
        fp16 below SM 8.0, ``CudaPlatformBase.supported_dtypes``), so "the same bytes" stays true there."""
        p = plan("T4", "llama3.1-8b", 8192)
        note = next(w for w in p.warnings if w.startswith("T4 has no bf16"))
        assert "run in fp16, the same bytes" in note and "experts" not in note

    def test_tensorrt_llm_refuses_gpt_oss_on_t4_as_on_a100_and_l40s(self):
        """TensorRT-LLM 1.x's ``WFP4A16FusedMoEMethod.create_weights`` (tensorrt_llm/_torch/modules/fused_moe/
        quantization.py) accepts sm_version 90 only and raises "WFP4A16 MoE is unsupported on SM{sm}"; gpustack's
        run on an A100 printed "NotImplementedError: WFP4A16 MoE is unsupported on SM80." (gpustack/gpustack
        docs/performance-lab/gpt-oss-20b/a100.md, 47277d7). A T4 is SM 7.5: refused the same way (it was planned,
        because the fp16 plan for a GPU without bf16 hid the MXFP4 experts from the check)."""
        for gpu, sm in (("T4", "SM75"), ("A100", "SM80"), ("L40S", "SM89")):
            line = one_line(
                run("plan", "--gpu", gpu, "--model", "gpt-oss-20b", "--engine", "tensorrt-llm", "--context", "8192"), 2
            )
            assert f"WFP4A16 MoE is unsupported on {sm}" in line, line
        assert "Minimum capability: 80" in one_line(
            run("plan", "--gpu", "T4", "--model", "gpt-oss-20b", "--context", "8192"), 2
        )


class TestKvHeadReplication:
    def test_qwen3_235b_on_8_gpus_says_its_4_kv_heads_are_replicated(self):
        """Qwen3-235B-A22B (Qwen/Qwen3-235B-A22B config.json: 94 layers, num_key_value_heads 4, head_dim 128):
        K and V of one token in bf16 = 2 x 94 x 4 x 128 x 2 B = 192,512 B (193 kB). On 8 GPUs vLLM gives each GPU
        one KV head, tp / KV heads = 2 copies (``QKVParallelLinear.num_kv_head_replicas``,
        vllm/model_executor/layers/linear.py): 385 kB for the group, which the line now explains."""
        text = run("plan", "--gpu", "H100", "--model", "qwen3-235b-a22b", "--context", "8192", "--gpus", "8").stdout
        assert 2 * 94 * 4 * 128 * 2 == 192_512
        assert _row(text, "KV cache per token") == (
            "385 kB (GQA, 4 KV heads replicated to 8 GPUs, one each; 193 kB unreplicated)"
        )

    def test_llama_3_1_70b_replicated_at_16_not_at_8(self):
        """Llama-3.1-70B (meta-llama config.json: 80 layers, 8 KV heads, head_dim 128): 2 x 80 x 8 x 128 x 2 B =
        327,680 B (328 kB) a token; 8 GPUs split the 8 heads (no copy), 16 hold each twice (655 kB)."""
        at = {
            g: _row(run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "8192", "--gpus", g).stdout,
                    "KV cache per token")
            for g in ("8", "16")
        }  # fmt: skip
        assert at["8"] == "328 kB (GQA, 8 KV heads)"
        assert at["16"] == "655 kB (GQA, 8 KV heads replicated to 16 GPUs, one each; 328 kB unreplicated)"


class TestConcurrencyLine:
    def test_gpt_oss_120b_says_why_the_log_line_is_below_max_batch(self):
        """gpt-oss-120b (openai/gpt-oss-120b config.json: sliding_window 128 on 18 of its 36 layers): vLLM's
        "Maximum concurrency" divides the pool by what a request may hold with a whole prefill chunk in flight, a
        sliding layer min(window - 1 + max_num_batched_tokens, max_model_len) tokens (``SlidingWindowSpec.
        max_memory_usage_bytes``, vllm/v1/kv_cache_interface.py): min(127 + 8,192, 8,192) = 8,192 on an H100
        (max_num_batched_tokens 8,192), where a decoding sequence keeps 128; so 6.16x beside a max batch of 12."""
        text = run("plan", "--gpu", "H100", "--model", "gpt-oss-120b", "--context", "8192").stdout
        assert _row(text, "Max batch").startswith("12 sequences")
        line = _row(text, "Max concurrency (vLLM's log line)")
        assert line.startswith("6.16x at 8,192 tokens per request; lower than max batch")
        assert "each of the 18 sliding-window layers at 8,192 tokens a request" in line
        assert f"at {min(128 - 1 + 8192, 8192):,} tokens" in line and "the 128 a decoding sequence keeps" in line

    def test_gemma_3_27b_counts_window_plus_the_chunk(self):
        """Gemma-3-27B (google/gemma-3-27b-it config: sliding_window 1,024 on 52 of 62 layers) at 32,768 tokens:
        1,024 - 1 + 8,192 = 9,215 tokens a sliding layer in the log line (2.38x), max batch 5."""
        text = run("plan", "--gpu", "H100", "--model", "gemma-3-27b", "--context", "32768").stdout
        line = _row(text, "Max concurrency (vLLM's log line)")
        assert line.startswith("2.38x") and "52 sliding-window layers at 9,215 tokens" in line

    def test_a_model_without_local_layers_has_no_such_note(self):
        """Llama-3.1-8B: every layer full attention, so the log line and max batch count the same blocks."""
        text = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192").stdout
        assert _row(text, "Max concurrency (vLLM's log line)").endswith("tokens per request")


class TestOtherEngines:
    @pytest.mark.parametrize("engine", ["sglang", "tensorrt-llm"])
    def test_no_vllm_log_lines_under_another_engine(self, engine):
        """vLLM logs "Available KV cache memory: X GiB" and "Maximum concurrency for N tokens per request: Yx"
        (vllm/v1/worker/gpu_worker.py, vllm/v1/core/kv_cache_utils.py); SGLang logs "KV Cache is allocated.
        #tokens: N" (python/sglang/srt/mem_cache/memory_pool.py) and TensorRT-LLM its own lines, neither the
        concurrency figure. Under them the budget keeps its GiB (bytes / 2^30) without vLLM's name, and the
        concurrency row is left out."""
        text = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--engine", engine).stdout
        budget = _row(text, "  = KV cache budget")
        gb, gib = budget.split(" GB (")
        assert gib.endswith(" GiB)") and "vLLM" not in budget
        assert float(gib[: -len(" GiB)")]) == pytest.approx(float(gb) * 1e9 / 2**30, abs=0.01)
        assert "Max concurrency" not in text and "vLLM logs" not in text

    def test_vllm_keeps_them(self):
        text = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192").stdout
        assert _row(text, "  = KV cache budget").endswith("GiB, as vLLM logs it)")
        assert "Max concurrency (vLLM's log line)" in text


class TestMemoryFraction:
    def test_sglang_names_mem_fraction_static_and_what_it_leaves(self):
        """Llama-3.1-70B in bf16: 141.11 GB of weights; two H100s show the engine 2 x 79.18 GiB = 170.04 GB (the
        torch-visible total, README "Units"). SGLang takes mem_fraction_static of it (python/sglang/srt/
        server_args.py, the per-GPU default ``planner.engines.sglang`` reads: 0.827 on 2 x H100), 140.62 GB: the
        weights alone pass it, which "short by 7.6 GB" did not say."""
        visible = 2 * 79.18 * 2**30
        assert visible / 1e9 == pytest.approx(170.04, abs=0.01)
        line = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--gpus", "2", "--engine", "sglang",
                            "--context", "8192"), 1)  # fmt: skip
        assert "weights (141.11 GB) do not fit on 2 x H100 SXM 80GB: SGLang's mem_fraction_static 0.827 leaves " in line
        assert f"{visible * 0.827 / 1e9:,.2f} GB of the 170.04 GB the engine sees on them, short by 7.6 GB" in line

    def test_vllm_names_gpu_memory_utilization(self):
        """vLLM's gpu_memory_utilization defaults to 0.9 (vllm/config/cache.py): 0.9 x 79.18 GiB = 76.52 GB."""
        line = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--gpus", "1", "--context", "8192"), 1)
        assert f"vLLM's gpu_memory_utilization 0.9 leaves {0.9 * 79.18 * 2**30 / 1e9:.2f} GB of the 85.02 GB" in line


class TestCatalogList:
    def test_the_kv_column_names_the_engines_that_take_each_format(self):
        """vLLM's --kv-cache-dtype takes auto, fp8 and its fp8 variants (and fp16 / bf16 / fp32 by the model's
        dtype; vllm/config/cache.py ``CacheDType``): no int4. LMDeploy takes int4 (quant_policy 4,
        https://lmdeploy.readthedocs.io/en/latest/quantization/kv_quant.html). The column said "KV ok" for int4
        while ``plan -k int4`` is refused under vllm."""
        out = run("catalog", "list", "precisions").stdout
        rows = {line.split()[0]: line for line in out.splitlines()[1:] if line.startswith("  ")}
        assert rows["int4"].endswith("KV cache in lmdeploy, ideal")
        assert rows["fp8"].endswith("KV cache in vllm, sglang, tensorrt-llm, ideal")
        assert rows["mxfp4"].endswith("weights only")
        base = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "-k", "int4")
        assert run(*base).exit_code == 2 and run(*base, "--engine", "lmdeploy").exit_code == 0
        assert ENGINES["lmdeploy"].accepts_kv("int4") and not ENGINES["vllm"].accepts_kv("int4")

    def test_the_models_table_lines_up_with_its_longest_name(self):
        """Llama-3.3-Nemotron-Super-49B-v1 (31 characters, the catalog's longest model name) pushed its row's
        columns right of the others'; every column is now as wide as its widest cell."""
        out = run("catalog", "list", "models").stdout
        rows = [line for line in out.splitlines()[1:] if line.startswith("  ") and "ctx" in line]
        longest = max(len(m.name) for m in CAT.models)
        assert longest == len("Llama-3.3-Nemotron-Super-49B-v1") == 31
        assert len({line.index(" ctx") for line in rows}) == 1
        assert len({line.index(" layers") for line in rows}) == 1
        assert all(line[2 + longest : 4 + longest] == "  " for line in rows)


class TestCounts:
    def test_group_line_says_1_gpu_and_1_024_gpus(self):
        """``plan --rate`` names each group tried with its total: one replica of one GPU is "1 GPU" (it read
        "1 GPUs"), and 1,024 replicas of one GPU "1,024 GPUs" (the thousands separator every count takes)."""
        choice = GroupChoice(1, None, (GroupTried(1, 1), GroupTried(2, 0, "not tried: one replica is already 2")))
        assert "(1 -> 1 x 1 = 1 GPU; 2 -> not needed)" in group_line(choice)
        big = GroupChoice(1, None, (GroupTried(1, 1024), GroupTried(2, 600)))
        assert "1 -> 1,024 x 1 = 1,024 GPUs; 2 -> 600 x 2 = 1,200 GPUs" in group_line(big)

    def test_a_refused_group_of_1_024_gpus_is_written_with_a_separator(self):
        """--gpus 1024 for Llama-3.1-8B (32 heads, 8 KV heads: no group above 32 splits them)."""
        line = one_line(
            run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--gpus", "1024"), 2
        )
        assert "a tensor-parallel group of 1,024 GPUs" in line and "1024" not in line.replace("1,024", "")


def test_visible_memory_is_the_one_cited():
    """The 79.18 GiB the tests above take for an H100 (README "Units": vLLM sees 79.18 GiB) is the catalog's."""
    assert float(plan("H100", "llama3.1-8b", 8192).memory.visible_bytes_per_gpu) / 2**30 == pytest.approx(
        79.18, abs=0.005
    )


class TestTensorRTLLMBelowItsSupportMatrix:
    """TensorRT-LLM's support matrix lists Ampere (SM 8.0) and newer (planner.deploy.TRTLLM_MIN_SM, its source there);
    a dense model on a T4 under it was planned without a word (trial s195)."""

    def test_plan_on_a_t4_under_tensorrt_llm_says_it_is_untested_there(self):
        result = plan("T4", "llama3.1-8b", 2048, engine="tensorrt-llm")
        assert any(
            w.startswith("TensorRT-LLM's support matrix lists Ampere (SM 8.0) and newer; on T4 (Turing, SM 7.5)")
            for w in result.warnings
        )

    @pytest.mark.parametrize(("gpu", "engine"), [("A100", "tensorrt-llm"), ("T4", "vllm")])
    def test_no_such_warning_where_the_matrix_lists_the_gpu_or_another_engine_runs(self, gpu, engine):
        result = plan(gpu, "llama3.1-8b", 2048, engine=engine)
        assert not any("support matrix" in w for w in result.warnings)

    def test_the_review_carries_it_too(self):
        from planner.export.evaluate import evaluate
        from planner.export.scenario import parse_scenario

        workload = {"peak_requests_per_s": 1, "average_requests_per_s": 0.5, "prompt_tokens_mean": 500,
                    "prompt_tokens_high": 1000, "output_tokens_mean": 200, "output_tokens_high": 400,
                    "ttft_target_s": 5.0, "tpot_target_s": 0.2}  # fmt: skip
        sc = parse_scenario({"workload": workload, "option": [{"gpu": "T4", "model": "llama3.1-8b",
                                                               "engine": "tensorrt-llm"}]})  # fmt: skip
        result = evaluate(sc.option[0], sc.workload, default_catalog(), sc.traffic_change)
        assert any("NVIDIA neither develops nor tests it" in w for w in result.warnings)


@pytest.mark.parametrize("engine", ["lmdeploy", "tensorrt-llm", "vllm"])
def test_the_memory_ledger_adds_up_in_the_engines_order(engine):
    """TensorRT-LLM and LMDeploy take a fraction of the memory left free; plan printed vLLM's ledger above their
    budget, so 68.02 - 16.06 - 0.81 read as 54.52 GB (trial s196). Each line now follows from the ones above it."""
    import re

    out = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--engine", engine).output
    gb = {k.strip(): float(v) for k, v in re.findall(r"^  (\S.*?)\s{2,}([\d.]+) GB", out, re.M)}
    seen, weights, reserve = gb["memory the engine sees"], gb["- weights"], gb["- activations and runtime"]
    budget = gb["= KV cache budget"]
    if engine == "vllm":
        assert gb["x utilization 0.9"] - weights - reserve == pytest.approx(budget, abs=0.02)
    else:
        fraction = next(float(k.split()[-1]) for k in gb if k.startswith("x free fraction"))
        assert seen - weights - reserve == pytest.approx(gb["= free memory"], abs=0.02)
        assert gb["= free memory"] * fraction == pytest.approx(budget, abs=0.02)


def test_a_cap_set_by_the_runs_own_requests_is_not_blamed_on_the_engine():
    """At 100 / 50 tokens an H100 holds more than 1,000 Llama-3.1-8B sequences and vLLM runs 1,024: the "at most 1,000
    sequences" a plan printed was the simulated run's 1,000 requests, labelled as the engine's limit (trial s196)."""
    out = run(
        "plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--rate", "5",
        "--prompt-tokens", "100", "--output-tokens", "50",
    ).output  # fmt: skip
    assert "each able to run all 1,000 requests of the simulated run at once" in out


def test_counts_read_as_counts():
    assert "# computed: 46,702,792,704 parameters (46.7 billion)" in run("catalog", "show", "Mixtral-8x7B").output


def test_a_trace_in_milliseconds_is_flagged(tmp_path):
    """A trace whose arrival_s holds milliseconds was planned as 600 requests over 31.9 hours without a hint (trial
    s196); the same requests in seconds get none."""
    rows = "\n".join(f"{i * 191.1:.1f},800,200" for i in range(600))
    (tmp_path / "ms.csv").write_text("arrival_s,prompt_tokens,output_tokens\n" + rows + "\n")
    rows_s = "\n".join(f"{i * 0.1911:.4f},800,200" for i in range(600))
    (tmp_path / "s.csv").write_text("arrival_s,prompt_tokens,output_tokens\n" + rows_s + "\n")
    base = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--trace")
    flagged = run(*base, str(tmp_path / "ms.csv")).output
    assert "warning: 600 requests over 31.8 hours" in flagged and "if arrival_s holds milliseconds" in flagged
    assert "if arrival_s holds milliseconds" not in run(*base, str(tmp_path / "s.csv")).output
