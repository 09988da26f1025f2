"""Error messages quote what the user gave (a user trial of the CLI): the name as typed, not the catalog name an
alias resolves to; a CSV row by its line in the file, its column and its cell as written; and what is accepted.

Each case checks the exit code (2, bad input) and the one-line message together (cli_support.one_line).
"""

from __future__ import annotations

from cli_support import SCENARIO, one_line, run

DECODE_HEADER = "gpu,model,batch,input_len,output_len,tpot_ms\n"
PLAN = ("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192")


class TestPlanQuotesTheNameAsTyped:
    def test_a_kv_alias_that_is_no_kv_format_is_quoted_as_typed(self):
        """-k fp4 said "precision 'nvfp4' is not a KV-cache format": a name the user never typed."""
        line = one_line(run(*PLAN, "-k", "fp4"), 2)
        assert line == (
            "planner: error: precision 'fp4' (read as nvfp4) is not a KV-cache format; use one of fp32, bf16, fp16, fp8"
        )

    def test_the_canonical_name_is_quoted_alone(self):
        line = one_line(run(*PLAN, "-k", "nvfp4"), 2)
        assert "precision 'nvfp4' is not a KV-cache format; use one of fp32, bf16, fp16, fp8" in line
        assert "read as" not in line

    def test_a_kv_format_the_engine_does_not_cache_is_quoted_as_typed(self):
        line = one_line(run(*PLAN, "-k", "int8"), 2)
        assert "the 'vllm' engine cannot cache KV in 'int8'; it caches fp16, bf16, fp32, fp8" in line
        assert "(the 'ideal' engine computes any KV format as a what-if)" in line


class TestCalibrateNamesTheRowAsTheFileHasIt:
    def test_a_negative_tpot_names_the_line_the_column_and_the_cell(self, tmp_path):
        """tpot_ms -8 was reported as "row row1: tpot_s must be a finite number above 0; got -0.008"."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,16,512,256,-8\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert line.endswith(
            "none of the 1 rows can be used; the first: line 2: tpot_ms is '-8', not a positive number of "
            "milliseconds, e.g. 12.5"
        )
        assert "tpot_s" not in line and "0.008" not in line
        assert not (tmp_path / "c.toml").exists()

    def test_a_skipped_row_is_named_by_its_line(self, tmp_path):
        """The bad row is the file's third line (the header is the first)."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,8,512,256,12\nH100,llama3.1-8b,16,512,256,-8\n")
        r = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 0, r.output
        assert (
            f"note: {f}: line 3: tpot_ms is '-8', not a positive number of milliseconds, e.g. 12.5: row skipped"
            in r.stderr
        )

    def test_a_record_id_is_named_beside_the_line(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text("record_id," + DECODE_HEADER + "run-a,H100,llama3.1-8b,16,512,256,0\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "the first: line 2 (run-a): tpot_ms is '0', not a positive number of milliseconds" in line

    def test_a_zero_throughput_names_its_column(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text("gpu,model,batch,input_len,output_len,output_throughput_tok_s\nH100,llama3.1-8b,16,512,256,0\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "line 2: output_throughput_tok_s is '0', not a positive number of output tokens per second" in line

    def test_a_negative_context_names_the_context_column(self, tmp_path):
        """A file of gpu, model, batch, context, tpot_ms: the context cell is the prompt length read."""
        f = tmp_path / "runs.csv"
        f.write_text("gpu,model,batch,context,tpot_ms\nH100,llama3.1-8b,16,-5,8\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "line 2: context is '-5', not a whole number of tokens from 1" in line

    def test_a_batch_of_zero_is_echoed(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,0,512,256,12\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "line 2: batch '0' is below 1; give the sequences decoded together, a whole number from 1" in line

    def test_a_misspelt_figure_column_lists_the_files_columns(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text("gpu,model,batch,input_len,output_len,tpot\nH100,llama3.1-8b,16,512,256,12\n")
        result = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert result.exit_code == 2 and "Traceback" not in result.output
        # the unread column is named first (planner.accuracy.unread, s201), then the refusal lists the columns
        warning, line = result.stderr.strip().splitlines()
        assert warning.startswith("warning: unknown column 'tpot'") and "did you mean tpot_ms?" in warning
        assert "line 2: no tpot_ms, ttft_ms, output_throughput_tok_s or a percentile column" in line
        assert "(the file's columns: gpu, model, batch, input_len, output_len, tpot)" in line


class TestATtftExampleIsARealisticTtft:
    """A TTFT target that is no duration was answered with a TPOT's example: "write ttft_target_s = 0.05 (seconds)"
    (a first token within 50 ms); the example is now a TTFT's, 1.5 s."""

    def test_plan_ttft_target_not_a_duration(self):
        r = run(*PLAN, "--rate", "10", "--prompt-tokens", "800", "--output-tokens", "200", "--ttft-target", "abc")
        assert r.exit_code == 2 and "Traceback" not in r.output
        line = r.stderr.strip().splitlines()[-1]  # click's usage error: the Usage lines, then the message
        assert line.endswith(
            "Invalid value for '--ttft-target': 'abc' is not a duration; give seconds (1.5) or the unit (\"1500ms\")"
        )

    def test_plan_tpot_target_keeps_a_tpot_example(self):
        r = run(*PLAN, "--rate", "10", "--prompt-tokens", "800", "--output-tokens", "200", "--tpot-target", "5x")
        assert r.exit_code == 2 and "Traceback" not in r.output
        line = r.stderr.strip().splitlines()[-1]
        assert line.endswith("'5x' is not a duration; give seconds (0.05) or the unit (\"50ms\")")

    def test_export_ttft_target_s_not_a_duration(self, tmp_path):
        f = tmp_path / "s.toml"
        f.write_text(SCENARIO.replace("ttft_target_s = 1.5", 'ttft_target_s = "fast"'))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.xlsx")), 2)
        assert (
            "workload.ttft_target_s: 'fast' is not a duration; write ttft_target_s = 1.5 (seconds) or \"1500 ms\""
            in line
        )
        assert "0.05" not in line


class TestSweepEchoes:
    """Found trying each command with bad input: each message now quotes the input and says what is accepted."""

    def test_a_number_out_of_range_is_quoted_as_typed(self):
        """click said "-2.0 is not in the range 0<x<=10000.0": the number as read, in range notation."""
        r = run(*PLAN, "--price", "-2")
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert (
            r.stderr.strip()
            .splitlines()[-1]
            .endswith(
                "Invalid value for '--price': '-2' is out of range; give a rent above 0 and at most 10,000 US$ per "
                "GPU-hour, e.g. 2.99"
            )
        )

    def test_a_zero_gpu_count_is_quoted_as_typed(self):
        r = run(*PLAN, "--gpus", "0")
        assert r.exit_code == 2
        assert "'--gpus': '0' is out of range; give a GPU count of 1 or more, e.g. 4" in r.stderr

    def test_a_trace_without_its_columns_lists_the_files_columns(self, tmp_path):
        f = tmp_path / "trace.csv"
        f.write_text("time,prompt,output\n0,100,10\n1,100,10\n")
        line = one_line(run(*PLAN, "--trace", str(f)), 2)
        assert line.endswith(
            "no column arrival_s, prompt_tokens, output_tokens; a trace has the columns arrival_s, prompt_tokens, "
            "output_tokens (seconds, tokens, tokens), or Mooncake's timestamp, input_length, output_length "
            "(milliseconds, tokens, tokens), or Azure LLM inference's TIMESTAMP, ContextTokens, GeneratedTokens (a "
            "date and time, tokens, tokens); the file's: time, prompt, output"
        )

    def test_a_bad_trace_row_is_named_by_its_line_past_a_blank_line(self, tmp_path):
        f = tmp_path / "trace.csv"
        f.write_text("arrival_s,prompt_tokens,output_tokens\n0,100,10\n\n1,-100,10\n")
        line = one_line(run(*PLAN, "--trace", str(f)), 2)
        assert "trace.csv line 4: arrival_s '1', prompt_tokens '-100', output_tokens '10'" in line

    def test_export_kv_alias_that_is_no_kv_format_is_quoted_as_typed(self, tmp_path):
        f = tmp_path / "s.toml"
        f.write_text(SCENARIO + 'kv_precision = "fp4"\n')
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.xlsx")), 2)
        assert ".kv_precision: 'fp4' (read as nvfp4) is not a KV-cache format; accepted: fp32, bf16" in line

    def test_a_measurements_csv_given_as_calibration_says_what_a_calibration_file_is(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,16,512,256,12\n")
        line = one_line(run(*PLAN, "--calibration", str(f)), 2)
        assert "runs.csv: not valid TOML" in line
        assert line.endswith(
            f"a calibration file is the TOML `planner calibrate` writes (measurements? fit them first: planner "
            f"calibrate {f})"
        )


class TestCalibrateNamesABenchmarkServingResultsKey:
    def test_a_negative_mean_tpot_names_the_result_and_its_key(self, tmp_path):
        """It said "row b#1: tpot_s ...; got -0.008" of a result whose mean_tpot_ms is -8 (a closed loop at 100:
        a run at a rate is refused before its figures, as no batch is fitted)."""
        f = tmp_path / "b.json"
        f.write_text(
            '{"model_id": "meta-llama/Llama-3.1-8B", "num_prompts": 100, "max_concurrency": 100, "completed": 100, "total_input_tokens": '
            '51200, "total_output_tokens": 25600, "mean_tpot_ms": -8, "output_throughput": 1000}'
        )
        line = one_line(run("calibrate", str(f), "--gpu", "H100", "-o", str(tmp_path / "c.toml")), 2)
        assert line.endswith(
            "the first: result 1: mean_tpot_ms is '-8', not a positive number of milliseconds, e.g. 12.5"
        )
