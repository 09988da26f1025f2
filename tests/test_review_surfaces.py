"""A fresh review of the user surfaces (s155): each defect found as a user met it, with its message and exit code.

Each case states what the user typed and what planner did before the mend; the CLI cases check the exit code and
the one-line message together (cli_support.one_line).
"""

from __future__ import annotations

import json

import cli_support
import pytest
from cli_support import one_line, run

from planner.catalog import default_catalog
from planner.errors import UnknownNameError

DECODE_HEADER = "gpu,model,batch,input_len,output_len,tpot_ms\n"


class TestValidateFiles:
    def test_a_row_with_more_cells_than_the_header_is_refused(self, tmp_path):
        """A decimal comma ("8,0") makes one cell more than the header; the extra cell was dropped and the row
        compared as 8 ms (PASS), so a European CSV's 8.7 would be read as 8."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,1,128,128,8,7\n")
        line = one_line(run("validate", "--decode", str(f)), 2)
        assert "line 2 has 7 cells where the header has 6" in line
        assert "8.0, not 8,0" in line

    @pytest.mark.parametrize(
        ("command", "separator", "said"),
        [
            (("validate", "--decode"), ";", "separated by ';'"),
            (("calibrate",), ";", "separated by ';'"),
            (("validate", "--decode"), "\t", "separated by tabs"),
        ],
    )
    def test_a_file_saved_with_another_separator_is_named_as_such(self, tmp_path, command, separator, said):
        """A spreadsheet in a decimal-comma locale saves CSV with ';' between cells (s191): the one-column header was
        reported as every column missing ("missing column(s) gpu, model, ..."), which the file visibly has."""
        f = tmp_path / "runs.csv"
        f.write_text((DECODE_HEADER + "H100,llama3.1-8b,1,128,128,8.5\n").replace(",", separator))
        args = (*command, str(f)) + (("-o", str(tmp_path / "cal.toml")) if command == ("calibrate",) else ())
        line = one_line(run(*args), 2)
        assert said in line and "CSV UTF-8 (Comma delimited)" in line and "missing column" not in line

    def test_a_figure_cell_of_text_is_refused_not_dropped(self, tmp_path):
        """tpot_ms "eight" was read as a blank cell: the row left the table unseen and validate printed PASS."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,1,128,128,eight\nH100,llama3.1-8b,8,128,128,9\n")
        line = one_line(run("validate", "--decode", str(f)), 2)
        assert "line 2: tpot_ms 'eight' is not a number" in line
        assert "leave the cell blank" in line

    def test_calibrate_refuses_a_figure_cell_of_text(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,1,128,128,n/a\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "cal.toml")), 2)
        assert "tpot_ms 'n/a' is not a number" in line
        assert not (tmp_path / "cal.toml").exists()

    def test_a_memory_figure_of_text_is_refused(self, tmp_path):
        """available_kv_cache_memory_gib "fifty": the start-up table printed no row and PASS."""
        f = tmp_path / "startup.csv"
        f.write_text(
            "record_id,gpu,model,tensor_parallel_size,gpu_memory_utilization,max_model_len,"
            "available_kv_cache_memory_gib\nM1,H100,llama3.1-8b,1,0.9,8192,fifty\n"
        )
        line = one_line(run("validate", "--memory", str(f)), 2)
        assert "row M1: available_kv_cache_memory_gib 'fifty' is not a number" in line

    def test_blank_and_inf_cells_still_read(self, tmp_path):
        """A blank figure is no figure, and request_rate "inf" is all prompts at once: neither is refused."""
        f = tmp_path / "runs.csv"
        f.write_text(
            "gpu,model,batch,input_len,output_len,tpot_ms,ttft_ms,request_rate\nH100,llama3.1-8b,1,128,128,8,,inf\n"
        )
        r = run("validate", "--decode", str(f))
        assert r.exit_code == 0, r.output
        assert "TPOT ms" in r.output

    def test_a_negative_count_is_not_called_a_fraction(self, tmp_path):
        """batch "-1" was refused as "is not a whole number", which it is; the reason is that a batch is a count of
        sequences from 1, and 0 only a serving run's "the server chose it" (trial s195: "of 0 or more" read as if 0
        were a batch)."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,-1,128,128,8\n")
        assert (
            "row1: batch '-1' is not a whole number of sequences from 1 (0 or blank in a serving run: the server "
            "chose it)" in run("validate", "--decode", str(f)).output
        )


class TestGpuNames:
    @pytest.mark.parametrize("written", ["H100 PCI", "H100 ü", "H100 SXM 80GB extra"])
    def test_a_stray_word_is_no_gpu(self, written):
        """ "H100 PCI" (PCIe mistyped) was read as the H100 SXM from its family alone, and priced and sized as one."""
        with pytest.raises(UnknownNameError, match="did you mean"):
            default_catalog().gpu(written)

    def test_plan_refuses_a_mistyped_form_factor(self):
        line = one_line(run("plan", "--gpu", "H100 PCI", "--model", "llama3.1-8b", "--context", "4096"), 2)
        assert (
            line == "planner: error: unknown GPU 'H100 PCI'; did you mean H100, H100 PCIe, A100 PCIe?"
        )  # one name a GPU (s211)

    @pytest.mark.parametrize(
        "published, name",
        [  # remarks in brackets, nested or not, and vendor words are still read past (catalogs/reference rows)
            ('H200 SXM 141GB (script: "LLaMA 405B on 8 X H200 (bf16)"; form factor not stated)', "H200 SXM 141GB"),
            ("NVIDIA H100 80GB (79.18 GiB reported total)", "H100 SXM 80GB"),
            ("NVIDIA A40-48Q (vGPU)", "A40"),
            ("NVIDIA H100 80GB HBM3", "H100 SXM 80GB"),
            ("H100 80GB PCIe", "H100 PCIe 80GB"),
        ],
    )
    def test_published_names_still_read(self, published, name):
        assert default_catalog().gpu(published).name == name


class TestPlanJson:
    def test_json_carries_every_range_the_text_prints(self):
        """The text gives a range beside TTFT and beside TPOT at batch 1; --json had the batch's TPOT range only, so
        an engineer reading the JSON lost the TTFT range (696 ms to 1.41 s for Llama 2 70B at 8K on 2 x H100)."""
        args = ("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192")
        data = json.loads(run(*args, "--json").stdout)
        low, high = (x / data["tpot_s"] for x in data["tpot_range_s"])  # one GPU's residual range for every time
        assert data["ttft_range_s"] == pytest.approx([data["ttft_s"] * low, data["ttft_s"] * high])
        assert data["tpot_range_s_batch_1"] == pytest.approx(
            [data["tpot_s_batch_1"] * low, data["tpot_s_batch_1"] * high]
        )
        text = run(*args).stdout
        assert f"(range {data['ttft_range_s'][0] * 1e3:.0f} ms to {data['ttft_range_s'][1]:.2f} s)" in text
        assert data["intensity_flop_per_byte"] == pytest.approx(3.28, abs=0.01)  # the text's "3.3 FLOP/B"
        # the text's "33.6 tokens/s", to its digit
        assert data["throughput_tokens_per_s_batch_1"] == pytest.approx(33.6, abs=0.05)


class TestNumberOptions:
    PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096")

    @pytest.mark.parametrize(
        "option, value, said",
        [  # click said "'10k' is not a valid float range", "'90%' is not a valid float range": a type, not a reason
            ("--rate", "10k", "'10k' is not a number (a k or M multiplier is read in a token count only"),
            ("--rate", "1,000", "'1,000' is not a number (a thousands comma is read in a token count only)"),
            ("--memory-utilization", "90%", "'90%' is not a number (a percentage: write the fraction, 0.9)"),
            ("--memory-utilization", "90", "'90' is out of range; give a fraction above 0 and at most 1"),
            (  # s174: the rent's bound in planner.units.RENT_ACCEPTED's words
                "--price",
                "$3",
                "'$3' is not a number (write the number without the $ sign); give a rent above 0 and at most 10,000 US$",
            ),
            ("--gpus", "2.5", "'2.5' is not a whole number; give a GPU count of 1 or more, e.g. 4"),
            ("--batch", "8k", "'8k' is not a whole number (a k or M multiplier"),
        ],
    )
    def test_a_number_option_refused_says_what_it_takes(self, option, value, said):
        r = run(*self.PLAN, option, value)
        assert r.exit_code == 2, r.output
        assert said in r.output
        assert "valid float range" not in r.output and "valid integer range" not in r.output

    def test_calibrate_gpus_says_what_it_takes(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,1,128,128,8\n")
        r = run("calibrate", str(f), "--gpus", "two", "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 2 and "'two' is not a whole number; give a GPU count of 1 or more" in r.output


class TestScenario:
    def test_a_high_length_below_its_mean_names_both_values(self, tmp_path):
        """The refusal named the two fields but not their values, where the traffic check beside it names both."""
        f = tmp_path / "s.toml"
        f.write_text(cli_support.SCENARIO.replace("output_tokens_mean = 400", "output_tokens_mean = 1500"))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.md")), 2)
        assert "output_tokens_high (1,200) is below output_tokens_mean (1,500)" in line
        assert not (tmp_path / "r.md").exists()

    @pytest.mark.parametrize(
        "lines, said",
        [  # each was an IndexError traceback from the sizing (its coerced arrays collapsed to one NaN)
            (
                'gpu = "H100"\nkv_precision = "int4"',
                "option #1 (H100, Llama-3.1-70B, KV int4, cloud).kv_precision: the 'vllm' engine cannot cache KV in "
                "int4; it caches fp16, bf16, fp32, fp8",
            ),
            (
                'gpu = "H100"\nengine = "lmdeploy"',  # the KV lever's default, fp8, is no LMDeploy format
                "levers.kv_precision: the 'lmdeploy' engine of option #1 (H100, Llama-3.1-70B, cloud) cannot cache KV "
                'in fp8; it caches fp16, bf16, int8, int4 (the KV-cache lever: set [levers] kv_precision = "int8")',
            ),
        ],
    )
    def test_a_kv_format_the_engine_does_not_cache_is_refused(self, tmp_path, lines, said):
        f = tmp_path / "s.toml"
        f.write_text(cli_support.SCENARIO.replace('gpu = "H100"', lines))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.md")), 2)
        assert said in line
        assert not (tmp_path / "r.md").exists()

    def test_an_expert_layout_for_a_dense_model_names_the_option_and_line(self, tmp_path):
        """parallelism = "dp-ep" on Llama-3.1-70B was refused without the file, the option or the line (every other
        option refusal names all three): with several options the user could not tell which one."""
        f = tmp_path / "s.toml"
        f.write_text(cli_support.SCENARIO.replace('gpu = "H100"', 'gpu = "H100"\nparallelism = "dp-ep"'))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.md")), 2)
        assert line == (
            f"planner: error: {f}: option #1 (H100, Llama-3.1-70B, DP attention + EP, cloud).parallelism: "
            "Llama-3.1-70B has no experts to spread (parallelism='dp-ep'); parallelism='tp' splits a dense model "
            "(line 12)"
        )


class TestMoreGpusLever:
    QWEN = (
        cli_support.SCENARIO.replace('model = "Llama-3.1-70B"', 'model = "qwen2-7b"')
        .replace("peak_requests_per_s = 40", "peak_requests_per_s = 4")
        .replace("average_requests_per_s = 16", "average_requests_per_s = 2")
    )

    def review(self, tmp_path, scenario: str) -> str:
        f, out = tmp_path / "s.toml", tmp_path / "r.md"
        f.write_text(scenario)
        r = run("export", str(f), "-o", str(out), "--date", "2026-12-02")
        assert r.exit_code == 0, r.output
        return out.read_text()

    def test_no_larger_group_leaves_the_lever_unevaluated_not_the_review_refused(self, tmp_path):
        """Qwen2-7B runs on 1, 2 or 4 GPUs (its 18,944-wide MLP); a baseline of 4 doubled to 8, which the engine
        refuses, and the whole review stopped on 'cannot run on a tensor-parallel group of 8 GPUs' (DeepSeek-V3 at
        16 the same with 32)."""
        text = self.review(tmp_path, self.QWEN.replace('gpu = "H100"', 'gpu = "H100"\ngpus_per_replica = 4'))
        assert "- More GPUs per replica: not evaluated: Qwen2-7B has no tensor-parallel group above 4 GPUs" in text

    def test_a_lever_group_the_engine_refuses_is_that_levers_note(self, tmp_path):
        text = self.review(tmp_path, self.QWEN + "[levers]\ngpus_per_replica = 8\n")
        note = "- More GPUs per replica: not evaluated: levers.gpus\\_per\\_replica: Qwen2-7B cannot run on a "
        assert note + "tensor-parallel group of 8 GPUs" in text  # (Markdown escapes the underscores)

    def test_nothing_fits_names_the_largest_group_tried(self, tmp_path):
        """DeepSeek-V3 on H100: no group up to the default 8 holds it, and the refusal said only 'use more or larger
        GPUs' where max_gpus_per_replica = 16 (two nodes) holds it."""
        f = tmp_path / "s.toml"
        f.write_text(cli_support.SCENARIO.replace('"Llama-3.1-70B"', '"DeepSeek-V3"'))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.md")), 1)
        assert line.endswith(
            "the largest group tried was 8 GPUs (max_gpus_per_replica = 16 in [defaults] or an option tries two nodes)"
        )
