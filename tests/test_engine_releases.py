"""Engine releases and their loading rules (issue 23, items 2 and 3): every expected value is the engine source's own
rule, worked by hand from the release file and line each docstring names (SGLang wheels from PyPI, vLLM 0.33.0's
wheel, the stored NVIDIA/TensorRT-LLM sources)."""

from __future__ import annotations

import pytest

import planner
from planner import api
from planner.engines import sglang
from planner.engines.profiles import engine_for_version, engine_profile
from planner.errors import DoesNotFitError, InvalidInputError, OutOfRangeError, UnknownNameError

GiB = 2**30
MiB = 2**20
H100_SMI_MIB = 81_559  # nvidia-smi --query-gpu=memory.total on an H100 SXM 80GB
H200_SMI_MIB = 143_771
L4_SMI_MIB = 23_034


class TestSglangMemFractionStatic:
    """``--mem-fraction-static`` when not given, per release (``planner.engines.sglang``)."""

    def test_0523_h100(self):
        """0.5.23 ``arg_groups/memory_hook.py``: an H100 (80-90 GiB class, lines 132-145) takes chunked_prefill_size
        8,192 and cuda_graph_max_bs 256 at TP 1 (512 at TP >= 4); reserved (lines 309-315) = 512 + 8,192 x 1.5 +
        256 x 2 + 1/8 x 1,024 + 58 prefill graphs x 8 (``reserve_for_graph_mb`` line 386) = 13,904 MiB, above the
        10 GiB floor; f = round((81,559 - 13,904) / 81,559, 3) = 0.830. TP 8: 15,312 MiB, 0.812."""
        assert sglang.prefill_graph_sizes(8192) == 58
        assert float(sglang.sglang_reserved_mib(H100_SMI_MIB, 1)) == 13_904
        assert sglang.sglang_mem_fraction_static(H100_SMI_MIB, 1) == 0.830
        assert float(sglang.sglang_reserved_mib(H100_SMI_MIB, 8)) == 15_312
        assert sglang.sglang_mem_fraction_static(H100_SMI_MIB, 8) == 0.812

    def test_0523_mla_reserves_one_and_a_half_gib_for_prefill_graphs(self):
        """``reserve_for_graph_mb`` line 389: "MLA backend overhead is much higher than expected with fa3": 1.5 GiB in
        place of 8 MiB per graph. H200 at TP 8, DP attention off: 512 + 12,288 + 1,024 + 1,024 + 1,536 = 16,384."""
        assert float(sglang.sglang_reserved_mib(H200_SMI_MIB, 8, mla=True)) == 16_384
        assert sglang.sglang_mem_fraction_static(H200_SMI_MIB, 8, mla=True) == round(1 - 16_384 / H200_SMI_MIB, 3)

    def test_the_24_gib_class_moved_between_0515_and_0520(self):
        """L4 (22.5 GiB): 0.5.5 ``server_args.py`` lines 707-719: chunked 2,048, max_bs 24 -> 512 + 3,072 + 48 + 128
        = 3,760 MiB, f = 0.837; 0.5.20/0.5.23 ``memory_hook.py`` lines 101-117: 4,096 and 48, and 50 prefill graphs
        up to 4,096 tokens (400 MiB) -> 7,280 MiB, f = 0.684."""
        assert sglang.sglang_mem_fraction_static(L4_SMI_MIB, 1, "sglang-0.5.5") == 0.837
        assert sglang.prefill_graph_sizes(4096) == 50
        assert sglang.sglang_mem_fraction_static(L4_SMI_MIB, 1, "sglang-0.5.20") == 0.684

    def test_051_reserves_by_gpu_class(self):
        """0.5.1 ``server_args.py`` lines 374-376: H100 "(9.5 + parallel_size / 2) * 1024" -> TP 1: 10,240 MiB,
        f = round(71,319 / 81,559, 3) = 0.874; TP 8: 13,824 MiB, 0.831."""
        assert sglang.sglang_mem_fraction_static(H100_SMI_MIB, 1, "sglang-0.5.1") == 0.874
        assert sglang.sglang_mem_fraction_static(H100_SMI_MIB, 8, "sglang-0.5.1") == 0.831

    def test_053_reserves_as_055_with_16_graphs_on_24_gib(self):
        """0.5.3 ``server_args.py`` lines 637-675: 512 + max(chunk, 2,048) x 1.5 + graphs x 2 + TP / 8 GiB, at least
        10 GiB above 60 GiB: H100 TP 1 512 + 12,288 + 512 + 128 = 13,440 MiB, f = round(68,119 / 81,559, 3) = 0.835
        (0.5.1's rule: 0.874); an RTX 4090 (24,564 MiB) at TP 1: 16 graphs (line 584), 512 + 3,072 + 32 + 128 = 3,744
        MiB, f = 0.848 (0.5.5's 24 graphs: 3,760 MiB, 0.847)."""
        assert sglang.sglang_mem_fraction_static(H100_SMI_MIB, 1, "sglang-0.5.3") == 0.835
        assert sglang.sglang_mem_fraction_static(24_564, 1, "sglang-0.5.3") == 0.848
        assert sglang.sglang_mem_fraction_static(24_564, 1, "sglang-0.5.5") == 0.847

    def test_04_table_by_tensor_parallel_size(self):
        """0.4.6.post5 ``server_args.py`` lines 247-259: GPUs of 80 GiB or less: 0.88, 0.87, 0.85, 0.81, 0.79 for TP
        1, 2, 4, 8, 16; above 96 GiB (lines 262-267) min(f + 48 GiB x (1 - f) / M, (M - 18 GiB) / M): an H200 at TP 1
        min(0.88 + 49,152 x 0.12 / 143,771, 125,339 / 143,771) = 0.8718."""
        got = [sglang.sglang_mem_fraction_static(H100_SMI_MIB, tp, "sglang-0.4") for tp in (1, 2, 4, 8, 16)]
        assert got == [0.88, 0.87, 0.85, 0.81, 0.79]
        assert sglang.sglang_mem_fraction_static(H200_SMI_MIB, 1, "sglang-0.4") == pytest.approx(0.87180, abs=1e-5)

    def test_040_table_on_every_gpu(self):
        """0.4.0 ``server_args.py`` lines 157-168 (the same in 0.4.3 and 0.4.5; wheels from PyPI): the TP table with no
        memory condition, so an H200 at TP 8 keeps 0.81 (0.4.6.post5's rule raises it to 0.872, 45% more KV for
        Llama 3.1 405B's 8 x H200)."""
        got = [sglang.sglang_mem_fraction_static(H200_SMI_MIB, tp, "sglang-0.4.0") for tp in (1, 2, 4, 8, 16)]
        assert got == [0.88, 0.87, 0.85, 0.81, 0.79]
        assert sglang.sglang_mem_fraction_static(H200_SMI_MIB, 8, "sglang-0.4") == pytest.approx(0.87180, abs=1e-5)

    def test_the_kv_budget_follows_the_fraction_on_each_gpu_and_group(self):
        """The planner's budget for SGLang: visible x f - weights / g - non-torch, f from the visible memory (the
        H100's 81,081 MiB torch total: f = round((81,081 - 13,904) / 81,081, 3) = 0.829) and the group (TP 2:
        512 + 12,288 + 512 + 256 + 464 = 14,032 MiB, 0.827)."""
        p1 = api.memory_plan("H100", "llama-3.1-8b", 8192, gpus=1, engine="sglang")
        p2 = api.memory_plan("H100", "llama-3.1-8b", 8192, gpus=2, engine="sglang")
        visible = float(p1.visible_bytes_per_gpu)
        f1 = sglang.sglang_mem_fraction_static(visible / MiB, 1)
        f2 = sglang.sglang_mem_fraction_static(visible / MiB, 2)
        assert (f1, f2) == (0.829, 0.827)
        assert float(p1.kv_budget_bytes_per_gpu) == pytest.approx(visible * f1 - float(p1.weight_bytes) - 0.25 * GiB)
        w2 = float(p2.weight_bytes) / 2
        assert float(p2.kv_budget_bytes_per_gpu) == pytest.approx(visible * f2 - w2 - (0.25 + 1.83) * GiB)

    def test_a_given_utilization_replaces_the_rule(self):
        """--mem-fraction-static given: the planner's memory_utilization, as for vLLM's gpu_memory_utilization."""
        p = api.memory_plan("H100", "llama-3.1-8b", 8192, gpus=1, engine="sglang", memory_utilization=0.9)
        visible = float(p.visible_bytes_per_gpu)
        assert float(p.kv_budget_bytes_per_gpu) == pytest.approx(visible * 0.9 - float(p.weight_bytes) - 0.25 * GiB)


class TestReleasesMapToProfiles:
    """A release maps to the rule read at or before it; a newer one to the newest, with a note that says so."""

    @pytest.mark.parametrize(
        ("text", "profile"),
        [
            ("sglang==0.4.0", "sglang-0.4.0"),
            ("sglang==0.4.5", "sglang-0.4.0"),
            ("sglang==0.4.6.post5", "sglang-0.4"),
            ("sglang==0.5.1", "sglang-0.5.1"),
            ("sglang==0.5.2", "sglang-0.5.1"),
            ("sglang==0.5.3", "sglang-0.5.3"),
            ("sglang==0.5.4", "sglang-0.5.3"),
            ("sglang==0.5.15", "sglang-0.5.10"),
            ("sglang==0.5.23", "sglang"),
            ("tensorrt-llm==0.13.0", "tensorrt-llm-0"),
            ("trtllm==1.2.1", "tensorrt-llm"),
            ("vllm==0.33.0", "vllm"),
        ],
    )
    def test_release_profiles(self, text, profile):
        assert engine_profile(text).name == profile

    def test_newer_releases_say_they_were_not_read(self):
        assert "newer than the newest release read here (0.5.23)" in engine_for_version("sglang", "0.5.30")[1]
        assert "newer than the newest release read here (1.4)" in engine_for_version("tensorrt-llm", "1.6.0")[1]
        assert "not read itself" in engine_for_version("sglang", "0.5.7")[1]

    def test_a_release_candidate_takes_the_rule_before_its_release(self):
        """0.5.3rc0 ``server_args.py`` lines 498-548 still reserve by 0.5.1's GPU classes; 0.5.3 itself (lines 542-675)
        and its post releases run 0.5.3's rule (GPUSTACK-113's cell says "v0.5.3rc0")."""
        assert engine_for_version("sglang", "v0.5.3rc0 (the document's Engine Version list)")[0].name == "sglang-0.5.1"
        assert (
            engine_for_version("sglang", "v0.5.3.post3 (the document's Engine Version list)")[0].name == "sglang-0.5.3"
        )
        assert "release candidate" in engine_for_version("sglang", "0.5.3rc0")[1]
        assert engine_profile("sglang==0.5.3rc0").name == "sglang-0.5.1"

    def test_releases_before_the_first_rule_are_refused(self):
        with pytest.raises(UnknownNameError, match="SGLang version '0.3'"):
            engine_for_version("sglang", "0.3")

    @pytest.mark.parametrize(
        "engine, message",
        [
            ("vllm==abc", "engine 'vllm==abc': 'abc' is not a version number (e.g. vllm==0.11.0)"),
            ("sglang==", "engine 'sglang==': '' is not a version number (e.g. vllm==0.11.0)"),
            ("tensorrt-llm==0.x", "tensorrt-llm version '0.x' holds no version number (e.g. 0.11.0)"),
        ],
    )
    def test_a_known_engine_with_no_version_number_says_so(self, engine, message):
        """A known engine pinned to something that is no version: the release is what is wrong, not the engine (it
        used to answer "unknown engine 'vllm==abc'; did you mean vllm?")."""
        with pytest.raises(InvalidInputError) as got:
            engine_profile(engine)
        assert str(got.value) == message

    def test_the_cli_says_it_in_one_line(self):
        """``planner plan --engine vllm==abc``: exit 2, one line, no traceback."""
        from click.testing import CliRunner

        from planner.cli import main

        args = ["plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--engine", "vllm==abc"]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2
        assert r.output.strip().splitlines() == [
            "planner: error: engine 'vllm==abc': 'abc' is not a version number (e.g. vllm==0.11.0)"
        ]

    def test_kv_formats_per_release(self):
        """SGLang 0.5.23 ``arg_groups/fields/model.py`` lines 197-221 (fp8_e5m2, fp8_e4m3, bf16...; no int8);
        TensorRT-LLM 1.x PyTorch backend: FP8 (and NVFP4) KV; 0.x engines INT8 too."""
        with pytest.raises(OutOfRangeError, match="'sglang' engine cannot cache KV in 'int8'"):
            planner.max_batch("H100", "llama2-70b", 8192, gpus=4, kv_precision="int8", engine="sglang")
        assert planner.max_batch("H100", "llama2-70b", 8192, gpus=4, kv_precision="fp8", engine="sglang") > 0
        assert engine_profile("tensorrt-llm").kv_precisions == ("fp16", "bf16", "fp8")
        assert "int8" in engine_profile("tensorrt-llm==0.13").kv_precisions


class TestLoadingRulesPerEngine:
    """vLLM and SGLang (``QKVParallelLinear``, sglang 0.5.23 ``sglang/srt/layers/linear.py`` lines 1139-1145: KV heads
    divided by the group or the group by them) refuse groups TensorRT-LLM loads (``Attention.__init__``,
    ``tensorrt_llm/_torch/modules/attention.py`` lines 114-117 at NVIDIA/TensorRT-LLM commit c6d3bb2a:
    ``assert self.num_heads % tp_size == 0``, KV heads ``(self.num_key_value_heads + tp_size - 1) // tp_size``
    each)."""

    def test_phi4_on_4_gpus(self):
        """Phi-4 config.json: 40 heads, 10 KV heads, MLP 17,920. 4 GPUs: 40 % 4 = 0, but 10 % 4 and 4 % 10 != 0."""
        with pytest.raises(
            OutOfRangeError, match=r"needs its 10 KV heads.*valid groups up to 64: 1, 2, 5, 10, 20, 40$"
        ):
            planner.max_batch("H100", "phi-4", 4096, gpus=4)
        with pytest.raises(OutOfRangeError, match="SGLang needs its 10 KV heads"):
            planner.max_batch("H100", "phi-4", 4096, gpus=4, engine="sglang")
        assert planner.max_batch("H100", "phi-4", 4096, gpus=4, engine="tensorrt-llm") > 0
        assert planner.valid_tp_sizes("phi-4", engine="tensorrt-llm") == (1, 2, 4, 5, 8, 10, 20, 40)

    def test_tensorrt_llm_holds_ceil_kv_heads_per_gpu(self):
        """``self.num_key_value_heads = (self.num_key_value_heads + tp_size - 1) // tp_size`` (attention.py lines
        116-117, commit c6d3bb2a): Phi-4's 10 KV heads on 4 GPUs are 3 per GPU, so a token's KV per GPU is 3/10 of
        Phi-4's 204,800 B (40 layers x 2 x 10 x 128 x 2 B): 61,440 B, not the 51,200 B of an even split."""
        assert planner.kv_bytes_per_token("phi-4") == 40 * 2 * 10 * 128 * 2 == 204_800
        p = planner.memory_plan("H100", "phi-4", 4096, gpus=4, engine="tensorrt-llm")
        assert p.kv_bytes_per_token_per_gpu == 3 * 204_800 / 10 == 61_440

    def test_expert_width_divides_the_group(self):
        """vLLM 0.33.0 ``FusedMoEConfig.__post_init__`` (vllm/model_executor/layers/fused_moe/config.py line 1352):
        ``assert self.intermediate_size % tp_size == 0``. Mixtral-8x22B config.json: 48 heads, 8 KV heads, experts
        16,384 wide: 24 GPUs pass the heads (48 % 24, 24 % 8) but 16,384 / 24 leaves 16."""
        assert 16_384 % 24 == 16
        with pytest.raises(OutOfRangeError, match=r"expert's width of 16,384 evenly.*leaves 16.*1, 2, 4, 8, 16$"):
            planner.max_batch("H100", "mixtral-8x22b", 4096, gpus=24)

    def test_the_automatic_choice_follows_the_engine_asked(self):
        """Phi-4, 24 sequences of 32K (204,800 B of KV per token: 161 GB): beyond 2 x H100, which is as far as vLLM
        goes among 1, 2, 4, 8...; TensorRT-LLM takes 4."""
        with pytest.raises(DoesNotFitError, match=r"2 x H100 SXM 80GB, the largest group vLLM runs it on \(1, 2\)"):
            planner.min_gpus("H100", "phi-4", 32768, batch=24)
        assert planner.min_gpus("H100", "phi-4", 32768, batch=24, engine="tensorrt-llm") == 4

    def test_plans_next_group_follows_the_engine(self):
        """Phi-4 on 2 x L4 at 8K holds 7 sequences (below FEW_SEQUENCES), so the plan names the next group: 4 GPUs
        under TensorRT-LLM (ceil KV heads per GPU, as above), 5 under vLLM (10 KV heads divisible by it)."""
        from planner.report import plan

        assert plan("L4", "phi-4", 8192, gpus=2, engine="tensorrt-llm").larger_group[0] == 4
        assert plan("L4", "phi-4", 8192, gpus=2).larger_group[0] == 5

    def test_an_export_option_follows_its_engine(self, tmp_path):
        """An export option of Phi-4 (40 heads, 10 KV heads) under TensorRT-LLM: 4 GPUs a replica are sized, and
        the automatic choice tries 4 and 8 (``kv_heads_any_split``: ``Attention.__init__``,
        ``tensorrt_llm/_torch/modules/attention.py`` lines 114-117 at NVIDIA/TensorRT-LLM commit c6d3bb2a, gives
        each GPU ceil(10 / 4) = 3 KV heads); evaluate checked the group by vLLM's rule, refusing the first and
        trying 1 and 2 only for the second."""
        from planner.catalog import default_catalog
        from planner.export.evaluate import evaluate
        from planner.export.scenario import load_scenario

        scenario = tmp_path / "phi4.toml"
        scenario.write_text(
            "[workload]\npeak_requests_per_s = 2\naverage_requests_per_s = 1\nprompt_tokens_mean = 1000\n"
            "prompt_tokens_high = 3800\noutput_tokens_mean = 200\noutput_tokens_high = 800\nhigh_percentile = 95\n"
            "ttft_target_s = 2\ntpot_target_s = 0.1\n[defaults]\nmodel = 'phi-4'\nengine = 'tensorrt-llm'\n"
            "[[option]]\nname = 'four'\ngpu = 'H100'\ngpus_per_replica = 4\n[[option]]\nname = 'auto'\ngpu = 'L4'\n"
        )
        s = load_scenario(scenario)
        given, auto = (evaluate(o, s.workload, default_catalog(), s.traffic_change) for o in s.option)
        assert given.replica.gpus == 4
        assert [c.gpus_per_replica for c in auto.candidates] == [1, 2, 4, 8]
