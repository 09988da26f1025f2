"""A ninth user trial's findings (2026 MoE deployments: Qwen3 FP8 checkpoints, NVFP4 on AMD, validate's layout
label, gpt-oss's per-token KV line); each test cites where its expected value comes from."""

from __future__ import annotations

import pytest

import planner
from planner.catalog import default_catalog
from planner.catalog.names import checkpoint_block_size
from planner.errors import OutOfRangeError
from planner.excel import functions as xf
from tests.cli_support import one_line, run

CAT = default_catalog()


class TestQwenFp8CheckpointsKeepTheirBlocks:
    """Qwen's "-FP8" checkpoints are block-quantized: the Qwen/Qwen3-235B-A22B-FP8 model card's "Note on FP8": "The
    quantization method is fine-grained fp8 quantization with block size of 128" (config.json quantization_config
    weight_block_size [128, 128]). Their config.json moe_intermediate_size: 1,536 (235B-A22B), 768 (30B-A3B); 64 / 32
    attention heads, 4 KV heads. vLLM then needs whole 128-blocks of each expert per GPU: vLLM issue #17569,
    "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128" (1,536 / 8
    and 768 / 4 are both 192); QwenLM/Qwen3#1485 (neither model runs at TP 8 nor TP 4 respectively)."""

    def test_the_name_states_the_block(self):
        assert checkpoint_block_size("Qwen/Qwen3-235B-A22B-FP8") == 128
        assert checkpoint_block_size("Qwen3-30B-A3B-FP8") == 128  # Qwen's name, written without its organization
        # llm-compressor's FP8_DYNAMIC repackagings are per channel: no blocks
        assert checkpoint_block_size("RedHatAI/Qwen3-30B-A3B-FP8-dynamic") is None
        assert checkpoint_block_size("6block/Qwen3-30B-A3B-FP8") is None
        assert checkpoint_block_size("Qwen/Qwen3-235B-A22B") is None

    def test_valid_groups_hold_whole_blocks(self):
        """1,536 / 128 = 12 blocks: groups 1, 2, 4 (3, 6, 12 split no 64 heads); 768 / 128 = 6: groups 1, 2."""
        assert planner.valid_tp_sizes("Qwen/Qwen3-235B-A22B-FP8") == (1, 2, 4)
        assert planner.valid_tp_sizes("Qwen/Qwen3-30B-A3B-FP8") == (1, 2)
        # experts spread whole (tp-ep / dp-ep) keep every block: Qwen3 MoE has no dense MLP layer (mlp_only_layers [])
        assert planner.valid_tp_sizes("Qwen/Qwen3-235B-A22B-FP8", parallelism="tp-ep")[-1] == 64

    @pytest.mark.parametrize(
        ("model", "gpus", "split", "valid"),
        [("Qwen/Qwen3-235B-A22B-FP8", "8", "1,536 / 8 = 192", "1, 2, 4"), ("Qwen/Qwen3-30B-A3B-FP8", "4", "768 / 4 = 192", "1, 2")],
    )  # fmt: skip
    def test_plan_refuses_a_group_that_splits_a_block(self, model, gpus, split, valid):
        line = one_line(run("plan", "--gpu", "H100", "--model", model, "--context", "8192", "--gpus", gpus), 2)
        assert f"blocks of 128 and vLLM needs whole blocks on each GPU: {split}" in line
        assert "parallelism='tp-ep' or 'dp-ep'" in line and line.endswith(f"valid groups up to 64: {valid}")

    def test_expert_parallel_layouts_run_it(self):
        for layout in ("tp-ep", "dp-ep"):
            result = run("plan", "--gpu", "H100", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--context", "8192",
                         "--gpus", "8", "--parallelism", layout)  # fmt: skip
            assert result.exit_code == 0, result.output

    def test_excel_refuses_it_too(self):
        assert xf.MAX_BATCH("H100", "Qwen/Qwen3-235B-A22B-FP8", 8192, None, 8) == "#NUM!"
        assert "1,536 / 8 = 192" in xf.PLANNER_WHY("MAX_BATCH", "H100", "Qwen/Qwen3-235B-A22B-FP8", 8192, None, 8)
        assert xf.MIN_GPUS("H100", "Qwen/Qwen3-235B-A22B-FP8", 8192) == 4

    def test_the_bf16_model_is_unchanged(self):
        """Qwen/Qwen3-235B-A22B in bf16 has no quantization blocks: the heads' rule alone (64 heads, 4 KV heads)."""
        assert planner.valid_tp_sizes("Qwen/Qwen3-235B-A22B") == (1, 2, 4, 8, 16, 32, 64)
        assert CAT.model("Qwen/Qwen3-235B-A22B").weight_block_size is None
        assert planner.max_batch("H100", "Qwen/Qwen3-235B-A22B", 8192, gpus=8) > 0
        # the bf16 model re-quantized online (-w fp8: per tensor) has no blocks either
        assert planner.max_batch("H100", "Qwen3-235B-A22B", 8192, gpus=8, weight_precision="fp8") > 0

    def test_the_checkpoint_is_not_planned_as_the_catalog_entry(self):
        with pytest.raises(OutOfRangeError, match=r"1,536 / 8 = 192"):
            planner.max_batch("H100", "Qwen/Qwen3-235B-A22B-FP8", 8192, gpus=8)

    def test_a_checkpoint_name_that_is_a_catalog_alias_keeps_its_blocks_too(self):
        """Qwen3.5's and Qwen3.6's -FP8 checkpoints are aliases of the bf16 entries (catalogs/models.toml) and were
        planned at TP 8 without the rule: vLLM pull request #52915 ("Serving Qwen/Qwen3.6-35B-A3B-FP8 on one H100 node
        with tensor parallelism 8 fails ... a rank-local shared-expert width of 64, while the checkpoint uses
        128-element FP8 quantization blocks") reports the refusal: 512 / 8 = 64. Qwen3.5-397B-A17B-FP8 (experts of
        1,024: 128 each at TP 8) runs at TP 8, as vllm-project/recipes Qwen/Qwen3.5.md serves it."""
        for name in ("Qwen/Qwen3.6-35B-A3B-FP8", "Qwen/Qwen3.5-35B-A3B-FP8"):
            assert planner.valid_tp_sizes(name) == (1, 2, 4)
            with pytest.raises(OutOfRangeError, match=r"512 / 8 = 64"):
                planner.max_batch("H100", name, 8192, gpus=8)
        assert planner.max_batch("H100", "Qwen/Qwen3.5-397B-A17B-FP8", 8192, gpus=8) > 0
        assert planner.max_batch("H100", "Qwen3.5-35B-A3B", 8192, gpus=8) > 0  # the bf16 entry: no blocks


class TestNvfp4IsRefusedOffNvidia:
    """NVFP4 (ModelOpt: E2M1 values, an FP8 E4M3 scale per 16; catalogs/precisions.toml, NVIDIA's "Introducing
    NVFP4" blog) is NVIDIA's format: nvidia/DeepSeek-R1-FP4's model card lists "Supported Hardware
    Microarchitecture Compatibility: NVIDIA Blackwell". AMD's FP4 tensor cores (MI355X, CDNA 4: "MXFP6/MXFP4 10.1 PF",
    AMD's spec page) take MXFP4, an E8M0 scale per 32; ROCm runs NVFP4 only through vLLM's emulation backend, in bf16
    math (vllm-project/vllm pull requests 35733, 35737), which planner does not time. "fp4" is nvfp4's alias
    (catalogs/precisions.toml: "'fp4' means this format")."""

    @pytest.mark.parametrize("gpu", ["MI300X", "MI355X"])
    @pytest.mark.parametrize("typed", ["fp4", "nvfp4"])
    def test_plan_refuses_it_on_amd_naming_mxfp4(self, gpu, typed):
        line = one_line(run("plan", "--gpu", gpu, "--model", "deepseek-r1", "--context", "8192", "-w", typed), 2)
        assert line.startswith(f"planner: error: {gpu} (AMD CDNA ")
        assert ("'fp4' (read as nvfp4)" if typed == "fp4" else "in 'nvfp4':") in line
        assert "is NVIDIA's format" in line and "give mxfp4 as the weight precision" in line and "Marlin" not in line
        assert line.endswith("weight precisions it takes: fp32, bf16, fp16, fp8, int8, int4, w8a16, mxfp4")

    def test_intel_refuses_it_too(self):
        line = one_line(run("plan", "--gpu", "Gaudi 3", "--model", "deepseek-r1", "--context", "8192", "-w", "fp4"), 2)
        assert "is NVIDIA's format" in line and "mxfp4 (an E8M0" not in line

    def test_mxfp4_runs_on_amd(self):
        result = run("plan", "--gpu", "MI355X", "--model", "deepseek-r1", "--context", "8192", "-w", "mxfp4")
        assert result.exit_code == 0, result.output

    def test_b200_takes_fp4_as_nvfp4(self):
        result = run("plan", "--gpu", "B200", "--model", "deepseek-r1", "--context", "8192", "-w", "fp4")
        assert result.exit_code == 0, result.output
        assert "(weights nvfp4," in result.output.splitlines()[0]
        assert CAT.precision("fp4").name == "nvfp4"
        assert planner.max_batch("B200", "deepseek-r1", 8192, gpus=8, weight_precision="fp4") > 0

    def test_every_surface_refuses_it(self):
        with pytest.raises(OutOfRangeError, match=r"MI355X \(AMD CDNA 4\) cannot run .* is NVIDIA's format"):
            planner.max_batch("MI355X", "deepseek-r1", 8192, gpus=8, weight_precision="fp4")
        assert xf.MAX_BATCH("MI300X", "deepseek-r1", 8192, None, 8, "fp4") == "#NUM!"
        assert "give mxfp4 as the weight precision" in xf.PLANNER_WHY(
            "MAX_BATCH", "MI300X", "deepseek-r1", 8192, None, 8, "fp4"
        )
        assert xf.MAX_BATCH("B200", "deepseek-r1", 8192, None, 8, "fp4") > 0

    def test_the_workbooks_gpu_formats_leave_nvfp4_out_on_amd(self):
        from planner.workbook.catalog_sheets import _weight_formats_cell

        assert _weight_formats_cell(CAT.gpu("MI355X"), CAT) == ",fp32,bf16,fp16,fp8,int8,int4,w8a16,mxfp4,"
        assert _weight_formats_cell(CAT.gpu("B200"), CAT) == ""  # any
        assert "nvfp4" not in _weight_formats_cell(CAT.gpu("Gaudi 3"), CAT)


class TestPerTokenKvSaysWhatTheWindowLeavesOut:
    """gpt-oss-120b config.json: 36 layers, num_key_value_heads 8, head_dim 64, sliding_window 128, layer_types
    alternating "sliding_attention" / "full_attention" (18 of each). One token's K and V over every layer in bf16:
    2 x 36 x 8 x 64 x 2 B = 73,728 B; at 8,192 tokens the 18 full layers hold 8,192 tokens and the 18 windowed ones
    128: 18 x 2 x 8 x 64 x 2 B x (8,192 + 128) = 306,708,480 B, 0.31 GB (vLLM pads each to whole 16-token blocks,
    ``kv_bytes_per_sequence`` 307,298,304)."""

    def test_the_per_token_line_says_18_of_36_layers_keep_a_128_token_window(self):
        from tests.test_plan_wording import _row

        assert 2 * 36 * 8 * 64 * 2 == 73_728
        assert 18 * 2 * 8 * 64 * 2 * (8192 + 128) == 306_708_480
        text = run("plan", "--gpu", "H100", "--model", "gptoss-120b", "--context", "8192").stdout
        assert _row(text, "KV cache per token") == (
            "73.7 kB (GQA, 8 KV heads; 18 of 36 layers keep only a 128-token window, so past 128 tokens a sequence "
            "holds less than this x its tokens)"
        )
        assert _row(text, "KV cache per sequence") == "0.31 GB"
        assert xf.KV_BYTES("gptoss-120b", 1) == 73_728  # one token: every layer holds it

    def test_a_model_whose_layers_keep_every_token_is_unchanged(self):
        """Llama-3.1-70B: 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 327,680 B; no window (README's example)."""
        from tests.test_plan_wording import _row

        text = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "8192", "--gpus", "8").stdout
        assert _row(text, "KV cache per token") == "328 kB (GQA, 8 KV heads)"


#: Two rows of DeepSeek-R1 on 8 B200s (TensorRT-LLM) that differ only in their notes cell: the first quotes
#: TensorRT-LLM's attention-DP setting (``enable_attention_dp: true`` in --extra_llm_api_options, its "DEP8" layout
#: in the "Best perf practice on DeepSeek-R1" page, whose "over 30,000 tokens per second" for eight Blackwell GPUs
#: is NVIDIA's GTC 2025 figure; the batch of 3,072 is the trial's assumption).
DEP_ROWS = """\
record_id,gpu,model,tensor_parallel_size,expert_parallel_size,batch,input_len,output_len,kind,engine,output_throughput_tok_s,notes
NV-B200-DEP8,B200,deepseek-ai/DeepSeek-R1,8,8,3072,1024,1024,serving_concurrency,tensorrt-llm,30000,enable_attention_dp: true
NV-B200-TP8,B200,deepseek-ai/DeepSeek-R1,8,8,3072,1024,1024,serving_concurrency,tensorrt-llm,30000,
"""  # fmt: skip


class TestValidateShowsTheLayoutRead:
    def test_the_attention_dp_row_is_labelled_dep8(self, tmp_path):
        from planner.accuracy.published import load_decode_rows
        from planner.accuracy.validation import validate_time

        path = tmp_path / "runs.csv"
        path.write_text(DEP_ROWS)
        rows = load_decode_rows(path)
        assert [r.parallelism for r in rows] == ["dp-ep", "tp"]
        labels = {c.record_id: c.label for c in validate_time(rows, every_row=True).checks}
        assert labels == {
            "NV-B200-DEP8": "DeepSeek-R1 B200 DEP8 B=3072 1024/1024 serving",
            "NV-B200-TP8": "DeepSeek-R1 B200 TP8 B=3072 1024/1024 serving",
        }

    def test_layout_labels_name_groups_as_benchmark_tables_do(self):
        from planner.model.layouts import layout_label

        assert [layout_label(p, 8) for p in ("tp", "tp-ep", "dp-ep", "pp", "pp2")] == [
            "TP8", "TEP8", "DEP8", "PP8", "TP4xPP2",
        ]  # fmt: skip

    def test_the_help_documents_the_layout_columns_and_markers(self):
        text = " ".join(run("validate", "--help").output.split())
        for words in ("kind", "expert_parallel_size", "pipeline_parallel_size", '"enable_attention_dp: true"',
                      "--enable-dp-attention", "DEP8", "max_throughput goes in the kind cell"):  # fmt: skip
            assert words in text, words
