"""Issue 26 item 4: each traceback and wrong answer the issue lists, as a user meets it.

A one-line error with the documented exit code (2: bad input) or a right answer; never a traceback.
"""

from __future__ import annotations

import json
import struct
import zipfile

import tomli_w
from cli_support import one_line, run
from test_hostile import WORKBOOK, copy_with

from planner.catalog import default_catalog
from planner.excel import functions as xf
from planner.io.safetext import MAX_CELL_CHARS

#: A 3-layer DeepSeek-V3-shaped config whose first_k_dense_replace (3) leaves no MoE layer (the issue's case).
TINY_DEEPSEEK = {
    "model_type": "deepseek_v3",
    "num_hidden_layers": 3,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 1000,
    "intermediate_size": 512,
    "moe_intermediate_size": 64,
    "n_routed_experts": 8,
    "num_experts_per_tok": 2,
    "first_k_dense_replace": 3,
    "n_shared_experts": 1,
    "kv_lora_rank": 64,
    "qk_rope_head_dim": 16,
    "qk_nope_head_dim": 32,
    "v_head_dim": 32,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
}


def model_folder(tmp_path, config: dict, header: bytes | None = None):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if header is not None:
        (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    return folder


class TestImportHf:
    def test_moe_config_without_a_moe_layer_is_imported_dense_and_plans(self, tmp_path):
        """0.1.0 wrote an MoE entry that made every later `plan` a ZeroDivisionError."""
        cat = tmp_path / "cat"
        r = run(
            "catalog", "import-hf", str(model_folder(tmp_path, TINY_DEEPSEEK)), "--name", "Tiny-DS", "--to", str(cat)
        )
        assert r.exit_code == 0, r.output
        assert "no layer is MoE (first_k_dense_replace 3, 3 layers): imported as a dense model" in r.stderr
        assert "[model.moe]" not in (cat / "Tiny-DS.toml").read_text()
        p = run("plan", "--catalog", str(cat), "--gpu", "H100", "--model", "Tiny-DS", "--context", "1000")
        assert p.exit_code == 0, p.output

    def test_a_catalog_moe_entry_without_a_moe_layer_is_one_line(self, tmp_path):
        entry = default_catalog().model("Mixtral-8x7B").model_dump(exclude_none=True)
        entry.update(name="Odd-MoE", aliases=[], hf_id="")
        entry["moe"]["dense_layers"] = entry["num_layers"]
        (tmp_path / "odd.toml").write_text(tomli_w.dumps({"model": [entry]}))
        line = one_line(
            run("plan", "--catalog", str(tmp_path), "--gpu", "H100", "--model", "Odd-MoE", "--context", "1k"), 2
        )
        assert "model 'Odd-MoE'" in line and "no layer is MoE" in line

    def test_empty_safetensors_header(self, tmp_path):
        """A header of {} lists no tensors: no stored count (0.1.0: a ValidationError traceback)."""
        # no experts at all: a shared expert beside no routed ones is a layout the importer refuses (trial 18 F2)
        config = {k: v for k, v in TINY_DEEPSEEK.items() if k not in ("n_routed_experts", "n_shared_experts")}
        r = run("catalog", "import-hf", str(model_folder(tmp_path, config, b"{}")), "--name", "Tiny")
        assert r.exit_code == 0, r.output
        assert "list no stored elements: no stored parameter count" in r.stderr

    def test_lone_surrogate_in_model_type(self, tmp_path):
        config = dict(TINY_DEEPSEEK, model_type="\ud800x")
        folder = model_folder(tmp_path, {})
        (folder / "config.json").write_text(json.dumps(config))  # json escapes it as \ud800
        line = one_line(run("catalog", "import-hf", str(folder), "--name", "Tiny", "--to", str(tmp_path / "c")), 2)
        assert "model_type is not valid Unicode text (a lone surrogate" in line
        assert not (tmp_path / "c").exists()


class TestUnknownNativePrecision:
    def test_export_and_plan_refuse_in_one_line(self, tmp_path):
        """0.1.0: export raised IndexError while plan answered in one line."""
        entry = default_catalog().model("Llama-3.1-8B").model_dump(exclude_none=True)
        entry.update(name="My-8B", aliases=[], hf_id="", native_precision="fp6")
        cat = tmp_path / "cat"
        cat.mkdir()
        (cat / "m.toml").write_text(tomli_w.dumps({"model": [entry]}))
        sc = tmp_path / "s.toml"
        sc.write_text(
            "[workload]\npeak_requests_per_s = 4\naverage_requests_per_s = 2\nprompt_tokens_mean = 800\n"
            "prompt_tokens_high = 3000\noutput_tokens_mean = 400\noutput_tokens_high = 1200\nttft_target_s = 1.5\n"
            'tpot_target_s = 0.05\n[[option]]\ngpu = "H100"\nmodel = "My-8B"\n'
        )
        for args in (
            ("export", str(sc), "-o", str(tmp_path / "r.xlsx")),
            ("plan", "--gpu", "H100", "--model", "My-8B", "--context", "8k"),
        ):
            line = one_line(run(*args, "--catalog", str(cat)), 2)
            assert "model 'My-8B': native_precision: unknown precision 'fp6'; did you mean fp16" in line
        assert not (tmp_path / "r.xlsx").exists()


class TestValidate:
    def test_a_published_denormal_is_not_plus_inf_percent(self, tmp_path):
        """tpot_ms = 5e-324: 0.1.0 printed "+inf%" and counted it in the worst error."""
        f = tmp_path / "d.csv"
        f.write_text("gpu,model,batch,input_len,output_len,tpot_ms\nH100,llama2-7b,1,128,128,5e-324\n")
        r = run("validate", "--decode", str(f))
        assert r.exit_code == 0, r.output
        assert "inf%" not in r.stdout
        assert "row1: published 0 is not a positive figure to compare with" in r.stdout
        j = json.loads(run("validate", "--decode", str(f), "--json").stdout)
        assert j["rows"][0]["predicted"] is None and "not a positive figure" in j["rows"][0]["reason"]

    def test_a_huge_published_figure_keeps_the_columns(self, tmp_path):
        """tpot_ms = 1e308 was printed as a 400-character number in the published column (found by s58)."""
        f = tmp_path / "d.csv"
        f.write_text("gpu,model,batch,input_len,output_len,tpot_ms\nH100,llama2-7b,1,128,128,1e308\n")
        r = run("validate", "--decode", str(f))
        assert r.exit_code == 0, r.output
        row = next(line for line in r.stdout.splitlines() if line.startswith("row1 "))
        assert "1e+308" in row and len(row) < 120, row


class TestWorkbookNames:
    def test_in_gpu_covering_a_range_is_one_line(self, tmp_path):
        """0.1.0: AttributeError ('tuple' object has no attribute 'value')."""
        name = b'<definedName name="in_gpu">Inputs!$B$4</definedName>'

        def edit(part, data):
            if part == "xl/workbook.xml":
                assert name in data
                return data.replace(name, b'<definedName name="in_gpu">Inputs!$B$4:$B$6</definedName>')
            return data

        wb = copy_with(WORKBOOK, tmp_path / "w.xlsx", edit)
        line = one_line(run("export", str(wb), "-o", str(tmp_path / "r.md")), 2)  # WorkbookError: bad input, exit 2
        assert "the defined name 'in_gpu' covers Inputs!$B$4:$B$6, not one cell" in line
        assert zipfile.is_zipfile(wb) and not (tmp_path / "r.md").exists()


class TestExcelText:
    def test_no_function_returns_more_than_a_cell_holds(self):
        """A 40,000-character name: PLANNER_WHY's reason quoted it whole (40,143 characters)."""
        huge = "x" * 40_000
        one = xf.PLANNER_WHY("MAX_BATCH", huge, "llama2-70b", 8192.0)
        # s170: the name is cut where the error is raised (planner.errors.shown_name), far below a cell's limit
        assert isinstance(one, str) and len(one) <= MAX_CELL_CHARS and "(40,000 characters)" in one
        spilled = xf.PLANNER_WHY("MAX_BATCH", [[huge], ["H100"]], "llama2-70b", 8192.0)
        assert [len(c) <= MAX_CELL_CHARS for row in spilled for c in row] == [True, True]
        assert spilled[1][0].startswith("ok: on 2 x H100")  # the group it chose (gpus empty)
        assert "; warning: context 8,192 exceeds" in spilled[1][0]  # s174: past Llama 2's 4,096 (flagged)
