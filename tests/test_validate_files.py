"""`planner validate` on a user's own files, written as logs and benchmark tables write them (issue 10 items 5, 6)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.accuracy import predict as acc
from planner.accuracy.validation import validate_memory
from planner.catalog import default_catalog
from planner.cli import main
from planner.engines.profiles import engine_for_version, engine_profile

DECODE = """record_id,gpu,model,tensor_parallel_size,weight_dtype,batch,input_len,output_len,tpot_ms,ttft_ms,batching
U1,NVIDIA H100 SXM 80GB,LLaMA 7B (Llama-2-7b),1,not stated,1,2048,1,,150,static
U2,NVIDIA H100 SXM 80GB,Qwen/Qwen2.5-72B-Instruct,4,auto,1,128,128,20,,static
U3,Quantum GPU 9000,Qwen/Qwen2-7B,1,bf16,8,512,256,12,,static
U4,H100,Llama-3.1-8B,1,bf16,abc,512,256,12,,static
"""
# Llama-3.1-8B on one H100 at utilization 0.9: KV013 of vllm_startup_public.csv (llm-d, 51.38 GiB printed)
MEMORY = """record_id,gpu,model,tensor_parallel_size,gpu_memory_utilization,max_model_len,available_kv_cache_memory_gib,max_concurrency_x,engine_version
M1,NVIDIA H100 80GB HBM3,meta-llama/Llama-3.1-8B-Instruct,1,0.9,,51.38,3.2,0.11.0
M2,NVIDIA H100 80GB HBM3,no/such-model,1,0.9,8192,51.38,,0.11.0
"""


@pytest.fixture
def files(tmp_path):
    d, m = tmp_path / "runs.csv", tmp_path / "startup.csv"
    d.write_text(DECODE)
    m.write_text(MEMORY)
    return d, m


class TestNames:
    @pytest.mark.parametrize(
        "published, catalog_name",
        [
            ("NVIDIA H100 SXM 80GB", "H100 SXM 80GB"),  # form factor spelled out, vendor prefix
            ("NVIDIA H100 80GB (79.18 GiB reported total)", "H100 SXM 80GB"),  # llm-d's wording (KV013)
            ("NVIDIA A100-80G", "A100 SXM 80GB"),  # LMDeploy's A100 benchmark page (DM028)
            ("AMD Instinct MI300X 192GB", "MI300X"),
            ("NVIDIA H100 PCIe 80GB", "H100 PCIe 80GB"),
        ],
    )
    def test_gpu_names_as_logs_write_them(self, published, catalog_name):
        assert acc.resolve_gpu_name(published, default_catalog()) == catalog_name

    @pytest.mark.parametrize(
        "published, catalog_name",
        [
            ("LLaMA 7B (Llama-2-7b)", "Llama-2-7B"),  # the name in parentheses is the Hugging Face one
            ("meta-llama/Llama-2-7b", "Llama-2-7B"),  # LMDeploy's rows (DM028): the repo id without "-hf"
            ("Qwen/Qwen2-7B", "Qwen2-7B"),
            ("Qwen/Qwen2.5-72B-Instruct", "Qwen2.5-72B"),
        ],
    )
    def test_model_names_as_logs_write_them(self, published, catalog_name):
        assert acc.resolve_model_name(published, default_catalog()) == catalog_name

    def test_a_gpu_the_catalog_lacks_is_still_refused(self):
        """A name that singles out no catalog GPU is refused with the catalog's suggestions."""
        with pytest.raises(acc.PlannerError, match="unknown GPU"):
            acc.resolve_gpu_name("Quantum GPU 9000", default_catalog())

    @pytest.mark.parametrize("cell", ["auto", "not stated", "", "Not stated (fp16 page)", "default"])
    def test_default_dtype_cells(self, cell):
        from planner.accuracy.published import precision_in

        assert precision_in(cell) is None


class TestEngineVersions:
    @pytest.mark.parametrize(
        "text, profile",
        [
            ("vllm==0.10.1.1", "vllm-0.10"),  # KV001-KV003 logged 0.10.1.1
            ("vllm==0.11.0", "vllm-fullsort"),  # the llm-d 0.11-era rows (KV013, XL01-XL06)
            ("vllm 0.19.0", "vllm"),  # the 0.19.0 sweep (XN01-XN12)
            ("vllm==0.25.1", "vllm"),  # newer than any log: the last profile
            ("vllm==0.9.2", "vllm-0.10"),  # older than any log: the nearest
        ],
    )
    def test_release_maps_to_its_profile(self, text, profile):
        assert engine_profile(text).name == profile

    def test_the_mapping_says_why(self):
        _, why = engine_for_version("vllm", "vllm/vllm-openai image (v0.11.0 per the replication section)")
        assert "KV013" in why and "KV017" in why

    def test_kv013_by_its_version_alone_within_five_percent(self):
        """KV013 (vLLM 0.11-era image, 51.38 GiB printed) predicted from its engine_version, no profile given."""
        row = next(r for r in acc.load_startup_rows() if r.record_id == "KV013")
        assert row.profile == "vllm-fullsort"
        assert acc.predict_startup(row).kv_cache_gib == pytest.approx(51.38, rel=0.05)

    def test_engine_option_takes_a_release(self, files):
        _, m = files
        r = CliRunner().invoke(main, ["validate", "--memory", str(m), "--engine", "vllm==0.19.0"])
        assert r.exit_code == 0, r.output
        assert "[vllm]" in r.output and "[vllm-fullsort]" not in r.output

    def test_unknown_engine_is_one_line(self):
        r = CliRunner().invoke(main, ["validate", "--engine", "mlc==0.4"])
        assert r.exit_code == 2
        assert r.output.strip().splitlines()[0].startswith("planner: error: unknown engine 'mlc==0.4'; known: ")
        assert "known: <engine>==<version>, ideal, lmdeploy, sglang" in r.output and "tensorrt-llm" in r.output


class TestUserFiles:
    def test_ttft_only_row_is_predicted_as_a_prefill(self, files):
        """U1: one 2048-token prompt and one output token: TTFT = the prefill of 2048 tokens."""
        from planner import ttft

        d, _ = files
        row = next(r for r in acc.load_decode_rows(d) if r.record_id == "U1")
        assert acc.predict_decode(row).ttft_s == pytest.approx(ttft("H100", "llama2-7b", 2048, gpus=1))

    def test_a_long_row_id_stays_apart_from_its_quantity(self, tmp_path):
        """An ID of 8 characters or more (dstack's "DSTK-025") ran into the quantity column ("DSTK-025TPOT ms")."""
        d = tmp_path / "runs.csv"
        d.write_text(DECODE.replace("U2,", "MY-RUN-000002,", 1))
        out = CliRunner().invoke(main, ["validate", "--decode", str(d)]).output
        line = next(x for x in out.splitlines() if x.startswith("MY-RUN-000002"))
        head = next(x for x in out.splitlines() if x.startswith("row "))
        assert line.startswith("MY-RUN-000002 TPOT ms")
        assert head.index("quantity") == line.index("TPOT ms")

    def test_unresolvable_rows_say_why_one_line_each(self, files):
        d, _ = files
        r = CliRunner().invoke(main, ["validate", "--decode", str(d)])
        assert r.exit_code == 0, r.output
        block = r.output.split("Not predicted:\n")[1].split("\n\n")[0].splitlines()
        assert [line.split(":")[0].strip() for line in block] == ["U3", "U4"]
        assert "unknown GPU 'Quantum GPU 9000'" in block[0] and "batch 'abc' is not a number" in block[1]
        assert "inf" not in r.output

    def test_memory_rows_without_max_model_len_are_compared(self, files):
        """M1: the budget is compared (KV013's 51.38 GiB); the concurrency needs max_model_len and says so."""
        _, m = files
        table = validate_memory(acc.load_startup_rows(m))
        checks = {(c.record_id, c.quantity): c for c in table.checks}
        assert abs(checks[("M1", "kv_cache_gib")].error) <= 0.05
        assert "max_model_len" in checks[("M1", "max_concurrency")].reason
        assert checks[("M2", "kv_cache_gib")].reason.startswith("unknown model 'no/such-model'")

    def test_json_has_rows_and_summary(self, files):
        d, m = files
        r = CliRunner().invoke(main, ["validate", "--decode", str(d), "--memory", str(m), "--json"])
        data = json.loads(r.stdout)
        # verdict and notes since trial 15 F5 (tests/test_trial15_validate.py), margin_hints since trial 28 F6
        # (tests/test_validate_trial28.py)
        assert set(data) == {"rows", "summary", "verdict", "margin_hints", "calibration", "notes"}
        assert data["calibration"] is None
        for row in data["rows"]:
            keys = {"record_id", "quantity", "predicted", "published", "error", "configuration"}
            assert set(row) == (keys | {"reason"} if row["predicted"] is None else keys)
        assert {row["quantity"] for row in data["rows"]} == {"tpot_ms", "ttft_ms", "kv_cache_gib", "max_concurrency"}
        assert set(data["summary"]["kv_cache_gib"]) == {"median_abs_error", "worst_abs_error", "limits"}
        limits = {"median": 0.05, "worst": 0.20}  # validation.LIMITS["max_concurrency"], the user file's table's
        assert data["summary"]["max_concurrency"] == {
            "median_abs_error": None,
            "worst_abs_error": None,
            "limits": limits,
        }
        u3 = next(row for row in data["rows"] if row["record_id"] == "U3")
        assert u3["predicted"] is None and "Quantum GPU 9000" in u3["reason"]

    def test_missing_columns_are_one_line(self, tmp_path):
        p = tmp_path / "m.csv"
        p.write_text("gpu,model\nH100,llama3.1-8b\n")
        r = CliRunner().invoke(main, ["validate", "--decode", str(p)])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
        assert (
            "missing column(s) batch_size_or_concurrency or batch or request_rate, input_len or dataset, output_len "
            "or dataset" in r.output
        )


class TestEngineCells:
    """A row's ``engine`` cell names a known engine, an alias or a name tools write; a misspelt one is not predicted
    (it was predicted as vLLM, a confident answer for an engine nobody named)."""

    ROWS = """record_id,gpu,model,tensor_parallel_size,batch,input_len,output_len,tpot_ms,engine
E1,H100,llama3.1-8b,1,1,1024,128,7,vlm
E2,H100,llama3.1-8b,1,1,1024,128,7,
E3,H100,llama3.1-8b,1,1,1024,128,7,LMDeploy (TurboMind)
E4,H100,llama3.1-8b,1,1,1024,128,7,TurboMind
E5,H100,llama3.1-8b,1,1,1024,128,7,mlc-llm
"""

    @pytest.fixture
    def rows(self, tmp_path):
        p = tmp_path / "engines.csv"
        p.write_text(self.ROWS)
        return {r.record_id: r for r in acc.load_decode_rows(p)}, p

    def test_a_misspelt_engine_is_not_predicted_and_says_the_name_meant(self, rows):
        by_id, p = rows
        assert by_id["E1"].problem == "unknown engine 'vlm'; did you mean vllm?"
        r = CliRunner().invoke(main, ["validate", "--decode", str(p)])
        assert r.exit_code == 0, r.output
        block = r.output.split("Not predicted:\n")[1].split("\n\n")[0].splitlines()
        assert [line.split(":")[0].strip() for line in block] == ["E1"]
        assert "unknown engine 'vlm'; did you mean vllm?" in block[0]

    def test_known_names_aliases_and_an_empty_cell_are_read(self, rows):
        """Empty: vLLM (docs/accuracy.md, "Benchmark CSV columns"); LMDeploy's own wording; its alias (turbomind);
        MLC-LLM has rows (perf_public.csv) but no profile: the default profile by name, as before."""
        by_id, _ = rows
        got = {k: (by_id[k].engine, acc._profile_for(by_id[k], None).name) for k in ("E2", "E3", "E4", "E5")}
        assert got == {
            "E2": ("vllm", "vllm"),
            "E3": ("lmdeploy", "lmdeploy"),
            "E4": ("lmdeploy", "lmdeploy"),
            "E5": ("mlc-llm", "vllm"),
        }
        assert not any(by_id[k].problem for k in got)

    def test_every_shipped_row_names_a_known_engine(self):
        """catalogs/reference: no shipped row relies on an unknown name being read as vLLM."""
        assert not [r.record_id for r in acc.load_decode_rows() if "unknown engine" in r.problem]


class TestMemory:
    """A static row whose run does not fit in memory (the last round's closing note: validate timed 70B on one H100)."""

    ROWS = """record_id,gpu,model,tensor_parallel_size,batch,input_len,output_len,tpot_ms,ttft_ms
F1,H100,llama3.1-70b,1,1,1024,128,20,100
F2,H100,llama3.1-8b,1,64,1024,128,20,
F3,H100,llama3.1-8b,1,4096,1024,128,20,
"""

    def run(self, tmp_path, *extra):
        p = tmp_path / "fit.csv"
        p.write_text(self.ROWS)
        return CliRunner().invoke(main, ["validate", "--decode", str(p), *extra])

    def test_weights_that_do_not_fit_leave_the_row_unpredicted(self, tmp_path):
        """F1: Llama-3.1-70B's 141.1 GB of bf16 weights (70.55e9 parameters x 2 B, its config.json) on one 80 GiB
        (85.9 GB) H100: no engine starts, so neither TPOT nor TTFT is predicted, and the reason says so."""
        rows = {(r["record_id"], r["quantity"]): r for r in json.loads(self.run(tmp_path, "--json").stdout)["rows"]}
        for q in ("tpot_ms", "ttft_ms"):
            assert rows[("F1", q)]["predicted"] is None
            assert "weights (141.11 GB) do not fit on 1 x H100" in rows[("F1", q)]["reason"]
            assert "smallest group that works is 2 x H100" in rows[("F1", q)]["reason"]
        out = self.run(tmp_path).output
        assert "  F1: Llama-3.1-70B weights (141.11 GB) do not fit on 1 x H100" in out.split("Not predicted:\n")[1]

    def test_a_batch_above_what_fits_is_predicted_with_a_note(self, tmp_path):
        """F3: 4,096 sequences of 1,152 tokens on one H100 hold far more KV than its budget (``max_batch``, the
        model's rule; KV013 of vllm_startup_public.csv: vLLM printed 51.38 GiB of KV cache, 365 such sequences at
        131,072 B a token): the TPOT is kept, with a note giving the most that fit; F2's 64 fit, and get none."""
        from planner import max_batch

        fits = max_batch("H100", "llama3.1-8b", 1024 + 128, gpus=1)
        assert 0.95 * 365 <= fits <= 1.10 * 365  # KV013's budget, 51.38 GiB / (1,152 x 131,072 B) = 365.4
        rows = {r["record_id"]: r for r in json.loads(self.run(tmp_path, "--json").stdout)["rows"]}
        assert rows["F3"]["predicted"] > 0 and "note" not in rows["F2"]
        assert rows["F3"]["note"].startswith(f"batch 4,096 is above the {fits:,} sequences of 1,152 tokens that fit")
        out = self.run(tmp_path).output
        assert f"  F3: batch 4,096 is above the {fits:,}" in out.split("Predicted with a caveat:\n")[1]
        assert "F2:" not in out.split("Predicted with a caveat:\n")[1]

    def test_the_api_refuses_a_static_run_whose_weights_do_not_fit(self):
        """``predict_benchmark`` (the one rule validate calls): a DoesNotFitError, or NaN with errors="coerce"."""
        import math

        from planner.errors import DoesNotFitError
        from planner.serving.benchmark import predict_benchmark

        with pytest.raises(DoesNotFitError, match="do not fit on 1 x H100"):
            predict_benchmark("H100", "llama3.1-70b", 1024, 128, 1, gpus=1)
        run = predict_benchmark("H100", "llama3.1-70b", 1024, 128, 1, gpus=[1, 4], errors="coerce")
        assert math.isnan(run.tpot_s[0]) and math.isnan(run.ttft_s[0]) and run.tpot_s[1] > 0
        assert math.isnan(run.max_batch[0]) and run.max_batch[1] >= 1

    def test_a_wide_error_keeps_a_space_before_it(self, tmp_path):
        """F3's error (thousands of percent) is not glued to the published figure."""
        line = next(ln for ln in self.run(tmp_path).output.splitlines() if ln.startswith("F3 "))
        assert " 20.00 +" in line


class TestCellsWithMultipliers:
    """A cell such as "1k" or "12.3k" was read as its first digits (batch 1, 12.3 tok/s): a length is now read as
    ``planner plan --context`` reads it (k = 1,024 tokens, ``planner.units.parse_token_count``); any other
    number with a multiplier leaves its row unpredicted, saying why."""

    ROWS = """record_id,gpu,model,tensor_parallel_size,batch,input_len,output_len,tpot_ms,output_throughput_tok_s
K1,H100,llama3.1-8b,1,8,1k,128,10,
K2,H100,llama3.1-8b,1,8,1.5k,0.125k,10,
K3,H100,llama3.1-8b,1,1k,1024,128,10,
K4,H100,llama3.1-8b,1,8,1024,128,,12.3k
"""

    def rows(self, tmp_path):
        p = tmp_path / "k.csv"
        p.write_text(self.ROWS)
        return {r.record_id: r for r in acc.load_decode_rows(p)}

    def test_lengths_read_k_as_1024_tokens(self, tmp_path):
        """1k = 1,024 and 1.5k = 1,536 (the CLI's reading, tests/test_newcomer.py); 0.125k = 128."""
        rows = self.rows(tmp_path)
        assert (rows["K1"].input_len, rows["K1"].output_len, rows["K1"].problem) == (1024, 128, "")
        assert (rows["K2"].input_len, rows["K2"].output_len) == (1536, 128)

    def test_a_batch_or_figure_with_a_multiplier_is_refused_with_its_reason(self, tmp_path):
        rows = self.rows(tmp_path)
        assert rows["K3"].problem.startswith("batch '1k': write the number in full")
        assert rows["K4"].problem.startswith("output_throughput_tok_s '12.3k': write the number in full")
        p = tmp_path / "k.csv"
        r = CliRunner().invoke(main, ["validate", "--decode", str(p), "--json"])
        got = {(row["record_id"], row["quantity"]): row for row in json.loads(r.stdout)["rows"]}
        assert got[("K4", "throughput_tok_s")]["predicted"] is None
        assert "12.3k" in got[("K4", "throughput_tok_s")]["reason"]
        assert got[("K1", "tpot_ms")]["predicted"] > 0

    def test_a_time_written_with_its_unit_is_converted_to_the_columns_ms(self, tmp_path):
        """tpot_ms "0.01 s" was read as 0.01 ms and "10 s" as 10 ms: a cell that states its unit is read in it
        (``planner.units.parse_seconds``, as the scenario targets read "50 ms"); a bare number stays ms."""
        p = tmp_path / "t.csv"
        p.write_text(
            "record_id,gpu,model,batch,input_len,output_len,tpot_ms,ttft_ms\n"
            "T1,H100,llama3.1-8b,8,1024,128,0.01 s,150 ms\nT2,H100,llama3.1-8b,8,1024,128,10,800us\n"
        )
        rows = {r.record_id: r for r in acc.load_decode_rows(p)}
        assert rows["T1"].tpot_s == pytest.approx(0.01) and rows["T1"].ttft_s == pytest.approx(0.15)
        assert rows["T2"].tpot_s == pytest.approx(0.01) and rows["T2"].ttft_s == pytest.approx(0.0008)

    def test_units_are_not_multipliers(self):
        """'5 ms', '14.2 GiB', '3 MB' and '5.73x' keep their number (first_number's published cells)."""
        from planner.accuracy.published import first_number

        assert [first_number(c) for c in ("5 ms", "14.2 GiB", "3 MB", "5.73x", "93,872")] == [5, 14.2, 3, 5.73, 93872]

    def test_startup_cells_with_multipliers(self, tmp_path):
        """max_model_len '32k' is 32,768 tokens (it was read as 32); gpu_kv_cache_tokens '1.2M' (read as 1.2 tokens)
        leaves the row unpredicted with that reason."""
        p = tmp_path / "s.csv"
        p.write_text(
            "record_id,gpu,model,tensor_parallel_size,max_model_len,gpu_kv_cache_tokens\n"
            "S1,H100,llama3.1-8b,1,32k,400000\nS2,H100,llama3.1-8b,1,8192,1.2M\n"
        )
        rows = {r.record_id: r for r in acc.load_startup_rows(p)}
        assert rows["S1"].max_model_len == 32768 and rows["S1"].problem == ""
        assert rows["S2"].problem.startswith("gpu_kv_cache_tokens '1.2M': write the number in full")


@pytest.mark.parametrize("option, text", [("--decode", "gpu,model,batch,input_len,output_len,tpot_ms\n"), ("--decode", ""),
    ("--memory", "gpu,model,available_kv_cache_memory_gib\n")])  # fmt: skip
def test_a_file_without_rows_is_an_error_not_an_empty_pass(tmp_path, option, text):
    """A header alone (or an empty file) printed an empty table and passed --check (exit 0): now exit 2, one line."""
    p = tmp_path / "none.csv"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", option, str(p), "--check"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "none.csv: no rows to compare (empty, or a header alone)" in r.output


@pytest.mark.parametrize(
    "text", ['{"completed": 10, "num_prompts": 10}', '{\n "completed": 10,\n "num_prompts": 10\n}']
)
def test_a_json_file_is_named_as_json(tmp_path, text):
    """A benchmark_serving result given to --memory (a start-up CSV) was read as a CSV header: "no rows" or "missing
    column(s) gpu, model". Now the error says what the file is and where it goes (--decode reads it)."""
    p = tmp_path / "result.json"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", "--memory", str(p)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "result.json: a JSON file, not a CSV;" in r.output and "planner validate --decode" in r.output


@pytest.mark.parametrize(
    "text", ['{"completed": 10, "num_prompts": 10}', '{\n "completed": 10,\n "num_prompts": 10\n}']
)
def test_a_json_decode_file_without_the_keys_of_a_result_says_what_is_read(tmp_path, text):
    """--decode reads a serving benchmark's result JSON (test_validate_result_files); one without its totals is
    refused in one line naming the keys it lacks and the files read."""
    p = tmp_path / "result.json"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", "--decode", str(p)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "result 1 is not a serving benchmark's result (no total_input_tokens, total_output_tokens)" in r.output


def test_a_miss_prints_above_its_limit_not_equal_to_it():
    """A median |error| of 10.04% against the 10% TPOT limit (``validation.LIMITS``) misses by 0.04 points: the
    phrase says "10.04% > 10%", not "10.0% > 10%"; a clear miss keeps one decimal."""
    from planner.accuracy.validation import Check, Table

    def table(*predicted: float) -> Table:
        return Table("t", tuple(Check(f"R{i}", "tpot_ms", "", p, 100.0) for i, p in enumerate(predicted)))

    assert table(110.04).failures() == ["TPOT ms: median 10.04% > 10%"]
    assert table(112.0, 140.0, 112.0).failures() == ["TPOT ms: median 12.0% > 10%, worst 40.0% > 30%"]


class TestARateOfInf:
    def test_inf_is_every_prompt_at_once_as_the_refusal_of_a_negative_rate_says(self, tmp_path):
        """`vllm bench serve`'s default --request-rate is inf, and validate's own refusal of -1 says "blank or inf:
        all prompts at once"; yet "inf" was read as no rate and the row refused as "no batch" (trial s196). It is
        simulated as a burst of its prompts, as a blank rate is."""
        from planner.cli import main

        head = "gpu,model,request_rate,num_prompts,dataset,ttft_median_ms\n"
        path = tmp_path / "inf.csv"
        path.write_text(head + "H100,llama3.1-8b,inf,500,random,25\n")
        r = CliRunner().invoke(main, ["validate", "--decode", str(path)])
        assert "Not predicted" not in r.output and "1024/128 all at once" in r.output, r.output
        path.write_text(head + "H100,llama3.1-8b,,500,random,25\n")  # neither a rate nor a concurrency
        r = CliRunner().invoke(main, ["validate", "--decode", str(path)])
        assert "row1: no batch (a serving run: give request_rate, inf for every prompt at once, or batch" in r.output


def test_a_column_named_twice_is_refused_naming_it(tmp_path):
    """csv.DictReader keeps the last of two cells under one name, so validate compared 31 ms where the first cell
    said 30 (trial s196); which figure is meant cannot be known."""
    from planner.cli import main

    path = tmp_path / "dup.csv"
    path.write_text(
        "gpu,model,request_rate,num_prompts,input_len,output_len,ttft_median_ms,ttft_median_ms\n"
        "H100,llama3.1-8b,4,500,1000,200,30,31\n"
    )
    r = CliRunner().invoke(main, ["validate", "--decode", str(path)])
    assert r.exit_code == 2
    assert f"{path}: column 'ttft_median_ms' is in the header twice; keep one" in r.output


def test_a_run_of_no_prompts_is_not_predicted(tmp_path):
    """num_prompts 0 was simulated as a run (trial s196: "+77%" against a run that sent nothing)."""
    from planner.cli import main

    path = tmp_path / "zero.csv"
    path.write_text("gpu,model,request_rate,num_prompts,dataset,ttft_median_ms\nH100,llama3.1-8b,4,0,random,25\n")
    r = CliRunner().invoke(main, ["validate", "--decode", str(path)])
    assert "row1: num_prompts 0: give the prompts the run sent, 1 or more (blank: not stated)" in r.output
