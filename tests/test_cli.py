"""The planner command: exit codes, one-line errors, help on every command."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from planner.catalog import default_catalog, load_catalog
from planner.cli import main
from planner.engines.architecture import param_counts


def run(*args: str):
    return CliRunner().invoke(main, list(args))


class TestPlan:
    def test_plan_prints_memory_speed_and_cost(self):
        import re

        import planner

        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192")
        assert r.exit_code == 0, r.output
        assert "Llama-2-70B on 2 x H100 SXM 80GB" in r.output
        batch = planner.max_batch("H100", "llama2-70b", 8192)
        for pattern in (
            r"KV cache per token\s+328 kB \(GQA, 8 KV heads\)",
            rf"Max batch\s+{batch} sequences of 8,192 tokens",
            r"TPOT \(per sequence\)\s+[\d.]+ ms \(range",
            r"per million output tokens",
        ):
            assert re.search(pattern, r.output), pattern

    def test_plan_json_has_the_same_numbers_as_the_api(self):
        import planner

        r = run("plan", "--gpu", "H200", "--model", "qwen3-32b", "--context", "16384", "--json")
        data = json.loads(r.output)
        assert data["max_batch"] == planner.max_batch("H200", "qwen3-32b", 16384)
        assert data["tpot_s"] == pytest.approx(planner.tpot("H200", "qwen3-32b", 16384, batch=data["max_batch"]))

    def test_unknown_gpu_is_one_line_and_exit_2(self):
        r = run("plan", "--gpu", "H10", "--model", "llama2-70b", "--context", "8192")
        assert r.exit_code == 2
        # three GPUs, one name each (trial 32 F4): before, H100 SXM (the H100 itself) filled the third place
        assert r.output.strip().splitlines() == [
            "planner: error: unknown GPU 'H10'; did you mean H100, H100 NVL, H100 PCIe?"
        ]

    def test_does_not_fit_is_one_line_and_exit_1(self):
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--gpus", "1")
        assert r.exit_code == 1
        assert len(r.output.strip().splitlines()) == 1
        assert "smallest group that works is 2 x H100 SXM 80GB" in r.output

    def test_bad_option_value_is_a_usage_error(self):
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "0")
        assert (
            r.exit_code == 2
            and "--context': '0' is less than 1 token; give a whole number of tokens of 1 or more" in r.output
        )


class TestCatalogCommands:
    def test_list_shows_every_kind(self):
        r = run("catalog", "list")
        assert r.exit_code == 0
        assert "H100 SXM 80GB" in r.output and "Llama-2-70B" in r.output and "nvfp4" in r.output

    def test_show_prints_an_entry_with_its_source(self):
        r = run("catalog", "show", "llama2-70b")
        assert r.exit_code == 0
        assert 'name = "Llama-2-70B"' in r.output and "source =" in r.output
        assert "computed: 68,976,648,192 parameters" in r.output

    def test_show_takes_a_kind_and_a_name_of_several_words(self):
        """``catalog show gpu H100 SXM 80GB`` as people type it: the kind narrows the search, the words are the name."""
        r = run("catalog", "show", "gpu", "H100", "SXM", "80GB")
        assert r.exit_code == 0, r.output
        assert r.output.startswith('[[gpu]]\nname = "H100 SXM 80GB"')
        r = run("catalog", "show", "models", "qwen3-8b")
        assert r.exit_code == 0 and 'name = "Qwen3-8B"' in r.output

    def test_show_within_a_kind_names_the_kind_the_name_is(self):
        """A name of another kind is named as that kind with the command that shows it (trial s195: "unknown model
        'H100'; known: c4ai-command-r-v01, CodeLlama-7B, ..."), not suggested as one of the kind asked for."""
        r = run("catalog", "show", "gpu", "llama2-70b")
        assert r.exit_code == 2
        assert "unknown gpu 'llama2-70b'; 'llama2-70b' is a model: planner catalog show model llama2-70b" in r.output
        r = run("catalog", "show", "model", "H100")
        assert "unknown model 'H100'; 'H100' is a GPU: planner catalog show gpu H100" in r.output

    def test_show_of_a_name_like_none_points_to_the_listing(self):
        """Nothing close: the listing command, not the alphabet's first dozen aliases ("known: 3090, 4090, ...")."""
        r = run("catalog", "show", "nonsense")
        assert r.exit_code == 2
        assert (
            r.output.strip()
            == "planner: error: unknown catalog entry 'nonsense'; `planner catalog list` lists every name"
        )
        assert "did you mean H100" in run("catalog", "show", "gpu", "H10").output

    def test_list_takes_a_kind_as_show_takes_it(self):
        """`catalog show gpu NAME` takes the singular; `catalog list gpu` was refused (only `gpus`)."""
        r = run("catalog", "list", "gpu")
        assert r.exit_code == 0 and r.output.startswith("GPUs (") and "Models (" not in r.output

    def test_list_shows_each_gpus_memory_in_gb_with_the_vendors_gib_beside_it(self):
        """Trial 33 F6: "206.2 GB" alone read as a wrong figure for AMD's "192 GB" MI300X. The catalog holds
        192 GiB = 206,158,430,208 B (AMD Instinct MI300X datasheet: 192 GB HBM3, a binary capacity); the list shows
        both, and peak FLOP/s with thousands separators (1,307.4 TFLOP/s bf16 dense, the same datasheet)."""
        r = run("catalog", "list", "gpus")
        row = next(line for line in r.output.splitlines() if line.strip().startswith("MI300X "))
        assert "206.2 GB (192 GiB)" in row and "1,307.4 TFLOP/s" in row
        assert "85.9 GB (80 GiB)" in next(line for line in r.output.splitlines() if "H100 SXM 80GB" in line)

    def test_import_hf_makes_an_entry_the_loader_reads(self, tmp_path):
        """A Llama-2-7B config.json (values of meta-llama/Llama-2-7b-hf) imports to the catalog's counts."""
        cfg = {
            "model_type": "llama",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "intermediate_size": 11008,
            "vocab_size": 32000,
            "max_position_embeddings": 4096,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
        }
        (tmp_path / "config.json").write_text(json.dumps(cfg))
        folder = tmp_path / "cat"
        r = run(
            "catalog",
            "import-hf",
            str(tmp_path / "config.json"),
            "--name",
            "Copy-7B",
            "--alias",
            "copy-7b",
            "--params",
            "6738415616",
            "--to",
            str(folder),
        )
        assert r.exit_code == 0, r.output
        assert "+0.00%" in r.output
        imported = load_catalog(folder, use_env=False).model("copy-7b")
        assert param_counts(imported) == param_counts(default_catalog().model("llama2-7b"))
        again = run("catalog", "import-hf", str(tmp_path / "config.json"), "--name", "Copy-7B", "--to", str(folder))
        assert again.exit_code == 1 and "exists; pass --force" in again.output

    def test_import_hf_refuses_a_file_that_is_not_a_model_config(self, tmp_path):
        (tmp_path / "c.json").write_text('{"foo": 1}')
        r = run("catalog", "import-hf", str(tmp_path / "c.json"), "--name", "X")
        assert r.exit_code == 2 and "config.json lacks num_hidden_layers" in r.output


def _commands(group: click.Group, ctx: click.Context, prefix=()):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, ctx, (*prefix, name))


def test_every_command_has_help_with_an_example():
    ctx = click.Context(main)
    found = list(_commands(main, ctx))
    assert len(found) >= 4
    for path, cmd in found:
        assert cmd.help and "Example:" in cmd.help, " ".join(path)
        r = run(*path, "--help")
        assert r.exit_code == 0, path


def test_help_examples_print_one_command_per_line():
    """Click rewraps paragraphs; an example of several lines must print as written (``\\b`` before it), else
    ``validate --help`` showed "planner validate     planner validate --decode ..." on one line."""
    for path, _ in _commands(main, click.Context(main)):
        example = run(*path, "--help").output.split("Example:")[1].split("Options:")[0]
        for line in example.splitlines():
            commands = line.count("planner ") + line.count("export PLANNER")
            assert commands <= 1, (path, line)


def test_help_examples_print_as_written():
    """Each example line is a whole command as a user would copy it: it starts with ``planner`` (or ``export``), or
    continues a line that ends in a backslash, and holds no run of spaces before its comment. Found by s80:
    ``catalog import-hf --help`` printed "...models--Qwen--" and "Qwen3-8B --name ..." on two lines (click rewrapped
    the paragraph), ``plan --help`` "--gpus 1             --rate 4" (a backslash-newline the docstring ate)."""
    for path, _ in _commands(main, click.Context(main)):
        example = run(*path, "--help").output.split("Example:")[1].split("Options:")[0]
        continued = False
        for line in filter(str.strip, example.splitlines()):
            text = line.split(" #")[0].strip()
            assert continued or text.startswith(("planner ", "export ")), (path, line)
            assert "  " not in text, (path, line)
            continued = text.endswith("\\")


def test_help_spells_out_the_terms_it_uses():
    """A finance reader meets TPOT and TTFT in every command's help: ``planner --help`` spells them out, and plan's
    --percentile says what it is (s80: its help was "Of the targets.", --engine's "Memory budgeting rule.", though
    the engine also sets the time per step)."""
    top = " ".join(run("--help").output.split())
    assert "TPOT, time per output token" in top and "TTFT, time to first token" in top
    plan_help = " ".join(run("plan", "--help").output.split())
    assert "--percentile [50|90|95|99] Percentile the TTFT and TPOT targets hold at" in plan_help
    assert "memory budget (KV cache) and per-step costs" in plan_help
    # an option that is off when left out says so (s80: the targets and calibrate --measure's model did not)
    neither = "Default: none (with neither target, the fleet is sized on capacity: the fewest replicas each below one "
    assert plan_help.count(neither + "replica's capacity)") == 2
    from planner.cli.accuracy import MEASURE_MODEL

    assert f"its shape [default: {MEASURE_MODEL}]" in " ".join(run("calibrate", "--help").output.split())


def test_help_states_the_default_of_each_argument():
    """click shows an option's default but not an argument's: a help that takes an optional argument with a default
    says it as click says an option's (s80: ``catalog list --help`` showed "[all|gpus|models|precisions]" and not that
    all is the default; ``addin example`` did not say where it writes)."""
    for path, cmd in _commands(main, click.Context(main)):
        helptext = " ".join(run(*path, "--help").output.split())
        for arg in cmd.params:
            if isinstance(arg, click.Argument) and not arg.required and isinstance(arg.default, (str, int, Path)):
                assert f"[default: {arg.default}]" in helptext, (path, arg.name)


def test_workbook_counts_read_as_english():
    """`planner workbook` and `refresh` say "(1 GPU, 1 model)", not "(1 GPUs, 1 models)" (s80; writing a workbook
    to see it costs ~7 s CPU, so the wording is checked where it is made)."""
    from planner.units import counted

    assert (counted(1, "GPU"), counted(1, "model"), counted(1234, "model")) == ("1 GPU", "1 model", "1,234 models")


def test_workbook_help_names_the_levers_the_sheet_has():
    """``planner workbook --help`` counts and names the Levers sheet's scenarios (planner.workbook.calc.SCENARIOS,
    what the sheet writes); s80 found "the four levers" beside a sheet of five."""
    from planner.workbook.calc import SCENARIOS

    helptext = " ".join(run("workbook", "--help").output.split())
    count, listed = re.search(r"the baseline and (\w+) levers side by side \(([^)]*)\)", helptext).groups()
    levers = [header for key, header, _ in SCENARIOS if key != "base"]
    assert count == ("one", "two", "three", "four", "five", "six", "seven")[len(levers) - 1]
    assert [n.lower() for n in re.split(r", (?:a )?", listed)] == [h.lower() for h in levers]


def test_plan_price_is_bounded_as_a_scenario_rent_is():
    """``--price 1e308`` overflowed the cost ("RuntimeWarning: overflow", "$inf per million output tokens") where a
    scenario's cloud_usd_per_gpu_hour stops at MAX_RENT_USD_PER_GPU_HOUR: the same bound, one usage line (exit 2),
    stated in --help (s80)."""
    from planner.units import MAX_RENT_USD_PER_GPU_HOUR

    r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--price", "1e308")
    assert r.exit_code == 2 and "'--price'" in r.output and "inf" not in r.output and "Warning" not in r.output
    at_bound = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--price", "10000")
    assert at_bound.exit_code == 0 and "($10,000.00/GPU-hour)" in at_bound.output
    helptext = " ".join(run("plan", "--help").output.split())
    assert f"Rent above 0 and at most {MAX_RENT_USD_PER_GPU_HOUR:,.0f} US$ per GPU" in helptext  # s174: RENT_ACCEPTED


def test_plan_rate_past_what_any_fleet_keeps_up_with_is_refused():
    """Without targets ``plan --rate`` sizes the fleet on capacity: the fewest replicas each below one replica's
    capacity (planner.serving.fleet.fewest_replicas; it ran one replica at the whole rate and printed p95 TTFT 31 s
    at 1e308 requests/s as if that were the answer, s80, then warned). At 1e6 requests/s even 262,144 replicas of
    Llama-2-70B on 2 x H100 (3.8 requests/s each; capacity under 1 request/s at 100 / 4,000 tokens) are each past it:
    one error line, not a
    fleet (a rate above a scenario's bound, MAX_REQUESTS_PER_S, overflowed planner.serving.approx: refused); at 1
    request/s one replica, within its capacity. The rate in full, not 1e+06 (trial 15, F6: no scientific notation)."""
    base = ("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--prompt-tokens", "100")
    over = run(*base, "--output-tokens", "4000", "--rate", "1e6")
    assert (
        over.exit_code == 2 and "no fleet of up to 262,144 replicas keeps up with 1,000,000 requests/s" in over.output
    )
    assert "past its capacity" in over.output and "Traceback" not in over.output
    huge = run(*base, "--output-tokens", "100", "--rate", "1e308")  # past a scenario's bound: one usage line
    assert (
        huge.exit_code == 2
        and "'--rate': '1e308' is out of range; give requests per second above 0 and up to 1,000,000" in huge.output
    )
    under = json.loads(run(*base, "--output-tokens", "100", "--rate", "1", "--json").output)["under_load"]
    assert under["past_capacity"] is False and under["replicas"] == 1 and under["sized_on"] == "capacity"


class TestRanges:
    def test_plan_shows_tpot_with_the_held_out_range(self):
        """Without a calibration, TPOT x (1 + low) .. (1 + high): the H100's 10th/90th percentiles of held-out
        residuals (catalogs/reference/heldout_residuals.csv, written by bench/loso.py --write-residuals; -25% / +44%
        today), read here from the file as text; the low end at least the step's datasheet roofline floor, TPOT x
        max(MBU, MFU) (``Plan.decode_floor_s``, since trial 11's ranges clamped at the floor): at batch 108 the floor,
        21.8 ms at 77.8% MBU, is above TPOT x 0.75 (21.0 ms), so the low end is the floor."""
        import csv

        import planner
        from planner.accuracy.ranges import residuals_file

        with open(residuals_file(), encoding="utf-8") as f:
            h100 = next(r for r in csv.DictReader(f) if (r["dimension"], r["value"]) == ("gpu", "H100 SXM 80GB"))
        low, high = float(h100["residual_low"]), float(h100["residual_high"])
        data = json.loads(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--json").output)
        t = planner.tpot("H100", "llama3.1-8b", 4096, batch=data["batch"])
        floor = t * max(data["mbu"], data["mfu"])
        assert floor > t * (1 + low)  # the clamp is what this query shows
        assert data["tpot_range_s"] == pytest.approx([max(t * (1 + low), floor), t * (1 + high)])

    def test_plan_widens_the_range_on_a_gpu_without_rows_and_says_so(self):
        """Llama-3.1-70B on 4 x B200: no held-out row on B200, so all GPUs' held-out range ("all", "*") is widened
        by the GPU factor (both from catalogs/reference/heldout_residuals.csv); the text names B200, the JSON
        carries the note. On H100, which has rows, nothing widens."""
        from planner.accuracy import ranges

        regions = ranges.load_regions()
        every, gpu = regions[("all", "*")], regions[("gpu", "*")]
        assert gpu.widen > 1  # the premise: holding a GPU out widened the residuals
        args = ("plan", "--model", "llama3.1-70b", "--context", "4096", "--gpus", "4")
        data = json.loads(run(*args, "--gpu", "B200", "--json").output)
        low = math.expm1(
            math.log1p(every.low) * gpu.widen
        )  # rounded outwards to whole percent by planner.accuracy.ranges
        high = math.expm1(math.log1p(every.high) * gpu.widen)
        t = data["tpot_s"]
        assert [x / t - 1 for x in data["tpot_range_s"]] == pytest.approx([low, high], abs=0.01)
        assert low < every.low and high > every.high
        assert "no held-out figures on B200" in data["time_range_widened"]
        text = run(*args, "--gpu", "B200").output
        assert "Time ranges widened" in text and "on B200" in text
        covered = run(*args, "--gpu", "H100")
        # the time range is not widened (the serving margin's line may say its own region was: trial 20 F1)
        assert covered.exit_code == 0 and "Time ranges widened" not in covered.output

    def test_a_calibration_file_narrows_the_range(self, tmp_path):
        cal = tmp_path / "cal.toml"
        cal.write_text('[[calibration]]\ngpu = "H100"\nresidual_low = -0.02\nresidual_high = 0.01\nsource = "test"\n')
        data = json.loads(
            run(
                "plan",
                "--gpu",
                "H100",
                "--model",
                "llama3.1-8b",
                "--context",
                "4096",
                "--json",
                "--calibration",
                str(cal),
            ).output
        )
        assert data["tpot_range_s"] == pytest.approx([data["tpot_s"] * 0.98, data["tpot_s"] * 1.01])


def test_export_and_workbook_take_a_calibration_file_for_one_command(tmp_path):
    """--calibration is $PLANNER_CALIBRATION for that command only: the review states the calibrated range. (The
    README example sized by Little's law: the range is the calibration's whatever sized the fleet, and its serving
    simulation with calibrated step times cost ~4 s CPU.)"""
    import os

    from planner.accuracy.calibration import ENV_VAR

    cal = tmp_path / "cal.toml"
    cal.write_text('[[calibration]]\ngpu = "H100"\nresidual_low = -0.02\nresidual_high = 0.01\nsource = "test"\n')
    example = Path(__file__).parents[1] / "examples" / "budget-review.toml"
    quick = tmp_path / "budget-review.toml"
    quick.write_text(
        example.read_text(encoding="utf-8").replace("[workload]\n", '[workload]\nsizing = "littles-law"\n', 1)
    )
    assert 'sizing = "littles-law"' in quick.read_text(encoding="utf-8")
    r = run("export", str(quick), "-o", str(tmp_path / "r.md"), "--calibration", str(cal), "-q")
    assert r.exit_code == 0, r.output
    md = (tmp_path / "r.md").read_text()
    assert re.search(
        r"\| H100 SXM 80GB, Llama-3.1-70B, \d GPUs per replica: uncertainty of TPOT and TTFT \| -2% / \+1% \|", md
    )
    assert ENV_VAR not in os.environ
    bad = run("workbook", "-o", str(tmp_path / "wb"), "--calibration", str(example))
    assert bad.exit_code == 2  # a calibration file that does not validate is bad input
    assert "a calibration file holds [[calibration]] tables" in bad.output
    assert not (tmp_path / "wb").exists()


def test_plan_at_batch_one_shows_the_decode_block_once_and_names_mixed_precision():
    """gpt-oss-120b at 64K on one H100 holds one sequence: one decode block, 'weights bf16 + mxfp4 experts'.

    At its full 128K context it does not fit one H100 under vLLM: the experts load padded (64.4-66 GiB of
    weights) and vLLM refuses to start ('Available KV cache memory: -2.14 GiB', vllm-project/vllm#23278; 1.71 GiB
    at utilization 0.95, still too little for 131,072 tokens, #27508)."""
    r = run("plan", "--gpu", "H100", "--model", "gpt-oss-120b", "--context", "65536", "--gpus", "1")
    assert r.exit_code == 0, r.output
    assert r.output.count("Decode at batch 1\n") == 1
    assert "1 sequence of 65,536 tokens" in r.output
    assert "(weights bf16 + mxfp4 experts, KV bf16" in r.output
    full = run("plan", "--gpu", "H100", "--model", "gpt-oss-120b", "--context", "131072", "--gpus", "1")
    assert full.exit_code != 0 and "do not fit on 1 x H100" in full.output


class TestEmptyValuesAreRefused:
    """An option given with nothing in it is a usage error (exit 2) that says what it takes, never a silent
    default: `--gpus ""` is not "all GPUs", `--engine ""` is not vllm, `--date ""` is not today, `-o ""` is not the
    current folder (`workbook -o ""` wrote capacity-what-if.xlsx there)."""

    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["workbook", "--gpus", "", "-o", "unused-folder"], "'' names no GPU; give names, comma-separated"),
            (["workbook", "--models", " , ", "-o", "unused-folder"], "' , ' names no model; give names"),
            (["workbook", "refresh", "README.md", "--gpus", ","], "',' names no GPU"),
            (
                ["plan", "--gpu", "H100", "--model", "llama-3.1-8b", "--context", "8k", "--engine", ""],
                "leave --engine out for vllm",
            ),
            (["validate", "--engine", " "], "'--engine': empty; give a profile (ideal"),
            (["export", "examples/budget-review.toml", "-o", "unused.md", "--date", ""], "give a date as YYYY-MM-DD"),
            (["export", "examples/budget-review.toml", "-o", ""], "'--output': empty; give the file to write"),
            (["workbook", "-o", " "], "'--output-dir': empty; give the folder to write into"),
        ],
    )
    def test_an_empty_value_is_a_usage_error_naming_what_is_accepted(self, args, said):
        res = run(*args)
        assert res.exit_code == 2, res.output
        assert said in " ".join(res.output.split())
        assert "Traceback" not in res.output

    def test_a_trailing_comma_is_not_an_empty_list(self):
        from planner.cli.workbook import _names

        assert _names(("H100,",)) == ["H100"] and _names(()) is None


def test_plan_counts_one_gpu_in_the_singular():
    """A rate one replica of one H100 serves: "= 1 GPU", not "= 1 GPUs" (s89)."""
    r = run("plan", "--gpu", "H100", "--model", "llama-3.1-8b", "--context", "8k", "--rate", "0.1",
            "--prompt-tokens", "100", "--output-tokens", "100")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "1 x 1 x H100 SXM 80GB = 1 GPU, 0.1 requests/s each" in r.output
