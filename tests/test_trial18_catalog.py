"""Trial 18: a data maintainer keeps the catalog (/tmp/trial18/findings.md): one class per finding mended.

The entry every case starts from is the trial's own H200 NVL file (/tmp/trial18/my/catalog/h200nvl.toml), whose
numbers come from NVIDIA's H200 product page, H200 NVL column (https://www.nvidia.com/en-us/data-center/h200/):
141 GB HBM3e, 4.8 TB/s, BF16 1,671 TFLOPS and FP8 3,341 TFLOPS "with sparsity" (so 835.5e12 and 1670.5e12 dense),
up to 600 W. The trial's purchase quote (Q-2026-1142, $31,500 per GPU) is dated three weeks before today here, so the
cases hold on any day the suite runs.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from cli_support import one_line, run

import planner
from planner.catalog import Gpu, default_catalog, load_catalog
from planner.catalog.schema import GPU_BOUNDS, SOURCE_RULE
from planner.errors import CatalogError, MissingDataError

TODAY = datetime.date.today()
QUOTED = (TODAY - datetime.timedelta(days=21)).isoformat()
GiB = 2**30

#: /tmp/trial18/my/catalog/h200nvl.toml, comments dropped, the quote dated three weeks ago.
NVL = f"""\
[[gpu]]
name = "H200 NVL 141GB"
aliases = ["H200 NVL", "H200-NVL", "NVIDIA H200 NVL"]
vendor = "NVIDIA"
architecture = "Hopper"
memory_bytes = 151397597184
memory_type = "HBM3e"
hbm_bandwidth_bytes_per_s = 4.8e12
peak_flop_per_s = {{ fp32 = 60e12, tf32 = 417.5e12, fp16 = 835.5e12, bf16 = 835.5e12, fp8 = 1670.5e12, int8 = 1670.5e12 }}
interconnect_bytes_per_s = 450e9
interconnect_kind = "nvlink-bridge"
interconnect_domain_gpus = 4
interconnect_latency_s = 7.8e-06
pcie_bytes_per_s = 64e9
pcie_latency_s = 4.214e-05
tdp_w = 600
source = "NVIDIA H200 product page https://www.nvidia.com/en-us/data-center/h200/ (H200 NVL column)"

[[gpu.prices]]
kind = "purchase"
purchase_usd = 31500
provider = "Our reseller (PO quote Q-2026-1142)"
date = "{QUOTED}"
source = "Internal purchase quote Q-2026-1142 from our reseller, per GPU, 4-GPU NVL servers"
"""


def folder(tmp_path: Path, text: str = NVL, name: str = "h200nvl.toml", sub: str = "cat", **edits: str) -> Path:
    """A catalog folder holding ``text`` with each ``old=new`` line edit (keys: the old line's start)."""
    lines = text.splitlines()
    for start, new in edits.items():
        (i,) = [i for i, line in enumerate(lines) if line.startswith(start.replace("__", "."))]
        lines[i] = new
    path = tmp_path / sub
    path.mkdir(exist_ok=True)
    (path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def refused(path: Path) -> str:
    """The one error line `planner catalog list gpus --catalog PATH` gives (exit 2)."""
    return one_line(run("catalog", "list", "gpus", "--catalog", str(path)), 2)


def line_of(text: str, start: str, nth: int = 1) -> int:
    """The 1-based line of the ``nth`` line of ``text`` that starts with ``start``."""
    return [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith(start)][nth - 1]


class TestF1UnitTyposAreRefusedWithTheValueMeant:
    @pytest.mark.parametrize(
        ("line", "said"),
        [
            # the finding's four folders: bad-bwtb, bad-bwgb, bad-tflops, bad-memgb
            ("hbm_bandwidth_bytes_per_s = 4.8", "hbm_bandwidth_bytes_per_s = 4.8 is bytes per second, at least 10e9 "
             "(10 GB/s) for a GPU; did you mean 4.8e12 (4.8 TB/s)?"),
            ("hbm_bandwidth_bytes_per_s = 4800", "did you mean 4.8e12 (4800 GB/s)?"),
            ("memory_bytes = 141", "memory_bytes = 141 is bytes, at least 1073741824 (1 GiB) for a GPU; did you mean "
             "151397597184 (141 GiB)?"),  # 141 x 2**30, the trial's own memory_bytes
            ("tdp_w = 0.6", "tdp_w = 0.6 is watts, at least 10 for a GPU; did you mean 600 (0.6 kW)?"),
            ("interconnect_latency_s = 7.8", "did you mean 7.8e-6 (7.8 us)?"),
        ],
    )  # fmt: skip
    def test_a_number_off_by_a_unit_is_refused_naming_field_value_unit_and_intent(self, tmp_path, line, said):
        key = line.split(" =")[0]
        got = refused(folder(tmp_path, **{key: line}))
        assert "h200nvl.toml: gpu 'H200 NVL 141GB': " in got and said in got
        assert f"(line {line_of(NVL, key)})" in got

    def test_peaks_in_tflops_are_refused_each_with_the_flop_per_s_meant(self, tmp_path):
        got = refused(folder(tmp_path, peak_flop_per_s="peak_flop_per_s = { fp16 = 835.5, bf16 = 835.5 }"))
        for key in ("fp16", "bf16"):
            assert f"peak_flop_per_s.{key} = 835.5 is FLOP per second (dense), at least 1e12" in got
        assert got.count("did you mean 835.5e12 (835.5 TFLOP/s)?") == 2

    def test_every_shipped_gpu_lies_within_the_bounds(self):
        """From the RTX 3090 and T4 (catalogs/gpus.toml) to the GB300: each bounded number is inside its bound."""
        gpus = load_catalog(use_env=False).gpus
        assert {"RTX 3090", "T4", "GB300 NVL72"} <= {g.name for g in gpus}
        for g in gpus:
            for key, bound in GPU_BOUNDS.items():
                values = g.peak_flop_per_s.values() if key == "peak_flop_per_s" else [getattr(g, key)]
                for v in values:
                    assert v is None or bound.low <= v <= bound.high, (g.name, key, v)

    def test_a_future_gpu_far_past_todays_is_accepted(self):
        """Generous on purpose: 1 TiB of HBM, 32 TB/s, 50 PFLOP/s dense fp4 and 3.6 kW load (hypothetical figures
        past every shipped GPU: GB300 has 279 GiB, 8 TB/s, 15e15 fp4, 1,400 W)."""
        entry = default_catalog().gpu("GB300").model_dump()
        entry.update(memory_bytes=1024 * GiB, hbm_bandwidth_bytes_per_s=32e12, tdp_w=3600.0)
        entry["peak_flop_per_s"] = {**entry["peak_flop_per_s"], "fp4": 50e15}
        entry["engine_visible_memory_bytes"] = None
        assert Gpu(**entry).memory_bytes == 1024 * GiB

    def test_a_cpu_measured_by_calibrate_skips_the_bounds_when_asked(self):
        """planner calibrate --measure times a CPU (planner/accuracy/measure.py): 20 GFLOP/s is no GPU's."""
        data = {"name": "CPU (measured)", "vendor": "other", "memory_bytes": 2**36, "hbm_bandwidth_bytes_per_s": 5e9,
                "peak_flop_per_s": {"fp16": 2e10}, "tdp_w": 100, "source": "measured by planner calibrate --measure"}  # fmt: skip
        with pytest.raises(ValueError, match="at least 10e9"):
            Gpu(**data)
        assert Gpu.model_validate(data, context={"plausible": False}).hbm_bandwidth_bytes_per_s == 5e9


class TestF6TwinsInOneFolderAreRefusedAndUserEntriesAreMarked:
    def test_two_files_of_one_gpu_in_a_folder_are_refused_naming_both(self, tmp_path):
        """my/bad-dup: a.toml and b.toml, the same entry; the later file won silently."""
        path = folder(tmp_path, name="a.toml")
        folder(tmp_path, name="b.toml", hbm_bandwidth_bytes_per_s="hbm_bandwidth_bytes_per_s = 2.4e12")
        got = refused(path)
        assert f"two gpu entries named 'H200 NVL 141GB', in {path / 'a.toml'} and {path / 'b.toml'}; keep one" in got

    def test_names_that_differ_only_in_spaces_are_one_name(self, tmp_path):
        """my/bad-dup2: "H200 NVL 141 GB" beside "H200 NVL 141GB" (names compare without spaces: README)."""
        path = folder(tmp_path, name="a.toml")
        (path / "b.toml").write_text(NVL.replace('"H200 NVL 141GB"', '"H200 NVL 141 GB"'), encoding="utf-8")
        assert "two gpu entries named 'H200 NVL 141 GB' and 'H200 NVL 141GB'" in refused(path)

    def test_an_alias_of_two_entries_in_a_folder_is_refused(self, tmp_path):
        path = folder(tmp_path, name="a.toml")
        other = NVL.replace('"H200 NVL 141GB"', '"H200 NVL Other"').replace('"H200-NVL", ', "")
        (path / "b.toml").write_text(other, encoding="utf-8")
        got = refused(path)
        assert "gpu 'H200 NVL Other': name or alias 'H200 NVL' already belongs to 'H200 NVL 141GB'" in got
        assert str(path / "a.toml") in got and str(path / "b.toml") in got

    @pytest.mark.parametrize("file", ["Seed-Z.toml", "A-Seed-Z.toml"])
    def test_an_alias_that_is_another_entrys_name_in_the_folder_is_said_as_across_folders(self, tmp_path, file):
        """Trial 18 F3's folder: Seed-Z with alias 'seed-oss-36b' beside Seed-OSS-36B; either file may be read first
        (sorted by name), the message names the aliasing entry and both files."""
        path = folder(tmp_path, name="Seed-OSS-36B.toml")
        (path / "Seed-OSS-36B.toml").write_text(NVL.replace("H200 NVL 141GB", "Seed-OSS-36B"), encoding="utf-8")
        (path / file).write_text(
            NVL.replace('"H200 NVL 141GB"', '"Seed-Z"').replace('"H200 NVL", ', '"seed-oss-36b", '), encoding="utf-8"
        )
        assert refused(path) == (
            f"planner: error: {path / file}: gpu 'Seed-Z': alias 'seed-oss-36b' is the name of the catalog's "
            f"'Seed-OSS-36B' ({path / 'Seed-OSS-36B.toml'}), which it would replace; name the entry 'Seed-OSS-36B' to "
            "replace that gpu, or give it another alias"
        )

    def test_a_later_folder_replaces_an_earlier_ones_entry_and_plan_names_both_files(self, tmp_path):
        """The loader's rule (planner/catalog/loader.py docstring): folders in order, a later entry of a name
        replaces the earlier; no shipped H200 NVL exists, so no "not the shipped one" (the finding's wrong warning)."""
        a = folder(tmp_path, sub="a")
        b = folder(tmp_path, sub="b", hbm_bandwidth_bytes_per_s="hbm_bandwidth_bytes_per_s = 2.4e12")
        cat = load_catalog(a, b, use_env=False)
        g = cat.gpu("H200 NVL")
        assert g.hbm_bandwidth_bytes_per_s == 2.4e12
        note = cat.replaced_note(g)
        assert note == f"H200 NVL 141GB is {b}'s entry ({b / 'h200nvl.toml'}), replacing {a / 'h200nvl.toml'}'s"
        assert "shipped" not in note

    def test_list_and_show_mark_an_entry_that_replaces_a_shipped_one(self, tmp_path):
        """my/bad-name2: "h200_sxm_141gb" replaces the shipped H200 SXM 141GB (names compare without case and
        separators); catalog list and show said nothing of it."""
        path = folder(tmp_path, name="a.toml")
        (path / "a.toml").write_text(
            NVL.replace('"H200 NVL 141GB"', '"h200_sxm_141gb"').replace(
                'aliases = ["H200 NVL", "H200-NVL", "NVIDIA H200 NVL"]', "aliases = []"
            ),
            encoding="utf-8",
        )
        listed = run("catalog", "list", "gpus", "--catalog", str(path))
        assert listed.exit_code == 0, listed.output
        (row,) = [r for r in listed.output.splitlines() if "h200_sxm_141gb" in r]
        assert row.endswith(f"(from {path / 'a.toml'}, replaces the shipped one ('H200 SXM 141GB'))")
        assert not [r for r in listed.output.splitlines() if r.strip().startswith("H100 SXM 80GB") and "from" in r]
        shown = run("catalog", "show", "gpu", "h200_sxm_141gb", "--catalog", str(path))
        assert f"# from {path / 'a.toml'}, replaces the shipped one ('H200 SXM 141GB')" in shown.output
        plan = run("plan", "--gpu", "h200_sxm_141gb", "--model", "llama3.1-8b", "--context", "8192", "--catalog",
                   str(path))  # fmt: skip
        assert (
            f"warning: h200_sxm_141gb is {path}'s entry, not the shipped one ('H200 SXM 141GB') ({path / 'a.toml'})"
            in plan.output
        )

    def test_an_added_gpu_is_marked_with_its_file_only(self, tmp_path):
        path = folder(tmp_path)
        listed = run("catalog", "list", "gpus", "--catalog", str(path)).output
        (row,) = [r for r in listed.splitlines() if r.strip().startswith("H200 NVL 141GB")]
        assert row.endswith(f"(from {path / 'h200nvl.toml'})")


class TestF7ErrorsGiveTheLineAndEveryProblemInPlannersWords:
    def test_the_second_quote_is_price_2_with_its_line(self, tmp_path):
        """my/bad-idx: the date left out of the second [[gpu.prices]]: 'prices.1.date' pointed at the wrong one."""
        text = (
            NVL
            + '\n[[gpu.prices]]\nkind = "spot"\nusd_per_gpu_hour = 2.0\nprovider = "Y"\nsource = "https://y.example"\n'
        )
        path = folder(tmp_path, text=text)
        got = refused(path)
        assert (
            f"price 2 ([[gpu.prices]] at line {line_of(text, '[[gpu.prices]]', 2)}): missing field 'date' (required)"
            in got
        )
        assert "prices.1" not in got and "Field required" not in got and "got a table" not in got

    def test_every_missing_field_is_named_at_once(self, tmp_path):
        """my/bad-multi: a model with name and num_layers only said '(and 10 more)'."""
        path = tmp_path / "cat"
        path.mkdir()
        (path / "m.toml").write_text('[[model]]\nname = "Broken-7B"\nnum_layers = 32\nhidden_size = 4096\n')
        got = refused(path)
        for key in ("source", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size", "vocab_size",
                    "tie_word_embeddings", "max_context", "native_precision", "published_params_total",
                    "published_params_source"):  # fmt: skip
            assert repr(key) in got, key
        assert "(the [[model]] table at line 1)" in got and "more" not in got

    def test_every_broken_entry_of_a_folder_is_named_in_one_refusal(self, tmp_path):
        path = folder(tmp_path, name="a.toml", tdp_w='tdp_w = "600"')
        folder(tmp_path, name="b.toml", vendor='vendor = "Nvidia"')
        (path / "b.toml").write_text((path / "b.toml").read_text().replace("H200 NVL 141GB", "Other NVL"))
        got = refused(path)
        assert f"{path / 'a.toml'}: gpu 'H200 NVL 141GB': field 'tdp_w' (line {line_of(NVL, 'tdp_w')}): expected a " \
               "valid number; got '600' (text: write the number without quotes)" in got  # fmt: skip
        assert f"{path / 'b.toml'}: gpu 'Other NVL': field 'vendor' (line {line_of(NVL, 'vendor')}): expected " \
               "'NVIDIA', 'AMD', 'Intel', 'Google' or 'other'; got 'Nvidia'" in got  # fmt: skip

    def test_a_toml_date_without_quotes_is_the_same_date(self, tmp_path):
        """my/bad-datetoml: `date = 2026-11-15` (a TOML local date) said `got datetime.date(2026, 11, 15)`."""
        path = folder(tmp_path, date=f"date = {QUOTED}")
        (price,) = load_catalog(path, use_env=False).gpu("H200 NVL").prices
        assert price.date == QUOTED

    def test_single_brackets_for_a_quote_say_to_double_them(self, tmp_path):
        """my/bad-h1: [gpu.prices] said 'Input should be a valid tuple; got a table'."""
        got = refused(folder(tmp_path, **{"[[gpu__prices]]": "[gpu.prices]"}))
        assert "field 'prices': expected an array of tables: write [[gpu.prices]] (doubled brackets)" in got
        assert "tuple" not in got

    def test_a_date_in_another_format_says_the_format(self, tmp_path):
        got = refused(folder(tmp_path, date='date = "15/11/2026"'))
        assert 'expected a date, "YYYY-MM-DD" or "YYYY-MM" (date = 2026-11-15); got \'15/11/2026\'' in got


class TestF8FutureDatesAndPlaceholderSourcesAreRefused:
    def test_a_quote_dated_after_today_is_refused(self, tmp_path):
        """Today is read when the test runs, not when the module was imported (a full suite run across midnight
        compared the loader's new day with the import's)."""
        today = datetime.date.today()
        later = (today + datetime.timedelta(days=35)).isoformat()
        got = refused(folder(tmp_path, date=f'date = "{later}"'))
        assert f"price 1 ([[gpu.prices]] at line {line_of(NVL, '[[gpu.prices]]')}): date {later} is after today, " \
               f"{datetime.date.today().isoformat()}" in got  # fmt: skip

    @pytest.mark.parametrize("text", ["TBD", "todo", "", "?", "source", "n/a", "N/A ", "tbd."])
    def test_a_placeholder_source_is_refused_saying_what_a_source_is(self, tmp_path, text):
        """my/bad-tbd: source = "TBD" loaded (the only rule was 3 characters)."""
        got = refused(folder(tmp_path, **{'source = "NVIDIA': f'source = "{text}"'}))
        assert f"source {text!r} is a placeholder; {SOURCE_RULE}" in got

    def test_a_quotes_placeholder_source_is_refused_too(self, tmp_path):
        text = NVL.replace('source = "Internal purchase quote', 'source = "todo" # "Internal purchase quote')
        got = refused(folder(tmp_path, text=text))
        assert "price 1 ([[gpu.prices]]" in got and "source 'todo' is a placeholder" in got

    def test_a_document_number_is_a_source(self, tmp_path):
        path = folder(tmp_path, **{'source = "NVIDIA': 'source = "Contract C-7781 with OurCloud, 2026-10-01"'})
        assert load_catalog(path, use_env=False).gpu("H200 NVL").source.startswith("Contract C-7781")


class TestF9APeakWithSparsityBesideADenseOneIsRefused:
    def test_the_sparse_bf16_beside_a_dense_fp8_is_refused_with_its_half(self, tmp_path):
        """my/bad-sparse: bf16 = 1671e12 (the datasheet's starred figure) beside fp8 = 1670.5e12 dense; dense fp8 is
        2x dense bf16 on every shipped NVIDIA and AMD GPU (catalogs/gpus.toml: H100 1978.9 / 989.4)."""
        line = ("peak_flop_per_s = { fp32 = 60e12, tf32 = 417.5e12, fp16 = 1671e12, bf16 = 1671e12, fp8 = 1670.5e12, "
                "int8 = 1670.5e12 }")  # fmt: skip
        got = refused(folder(tmp_path, peak_flop_per_s=line))
        assert "looks like a datasheet 'with sparsity' figure beside a dense fp8; peaks are dense" in got
        assert "= 835.5e12?" in got and "(the [[gpu]] table at line 1)" in got

    def test_a_sparse_fp8_beside_a_dense_bf16_is_refused(self, tmp_path):
        line = "peak_flop_per_s = { fp16 = 835.5e12, bf16 = 835.5e12, fp8 = 3341e12 }"
        assert "fp8 looks like a datasheet 'with sparsity' figure beside a dense bf16" in refused(
            folder(tmp_path, peak_flop_per_s=line)
        )

    def test_gaudi_3s_equal_fp8_and_bf16_still_load(self):
        """Intel Gaudi 3: 1,835 TFLOP/s in both (catalogs/gpus.toml); the fp8 rule is NVIDIA's and AMD's."""
        g = load_catalog(use_env=False).gpu("Gaudi 3")
        assert g.peak_flop_per_s["fp8"] == g.peak_flop_per_s["bf16"] == 1835e12

    def test_the_field_says_peaks_are_dense(self):
        assert "DENSE" in Gpu.model_fields["peak_flop_per_s"].description
        assert "sparsity" in Gpu.model_fields["peak_flop_per_s"].description


class TestF15APurchaseOnlyGpuSaysNoRentalPriceEverywhere:
    WORDS = f"no rental price; a purchase quote of $31,500/GPU exists ({QUOTED}): planner export amortizes it"

    def test_plan_python_records_and_list_say_it_alike(self, tmp_path):
        path = folder(tmp_path)
        plan = run("plan", "--gpu", "H200 NVL", "--model", "llama3.1-8b", "--context", "8192", "--catalog", str(path))
        assert plan.exit_code == 0, plan.output
        # trial 32 F3: plan now prices the purchase quote owned, as the export does, where no rent exists
        assert (
            "/GPU-hour: bought, over 36 months amortization incl. power and colocation (the export's defaults: "
            "$31,500 GPU" in plan.output
        )
        with pytest.raises(MissingDataError, match="no rental price; a purchase quote of") as e:
            planner.cost_per_mtok("H200 NVL", "llama3.1-8b", 8192, batch=8, catalog=str(path))
        assert self.WORDS in str(e.value)
        (record,) = [r for r in planner.catalog_records("gpus", str(path)) if r["name"] == "H200 NVL 141GB"]
        assert record["price_usd_per_gpu_hour"] is None and record["price_note"] == self.WORDS
        listed = run("catalog", "list", "gpus", "--catalog", str(path)).output
        assert f"no rental price; $31,500 purchase {QUOTED}" in listed
        assert json.loads(run("catalog", "list", "gpus", "--json", "--catalog", str(path)).output)

    def test_a_gpu_with_a_rate_has_no_note(self):
        (h100,) = [r for r in planner.catalog_records("gpus") if r["name"] == "H100 SXM 80GB"]
        assert h100["price_note"] is None


class TestF14WindowsEditorFilesAreReadOrRefusedByLine:
    def test_a_utf8_file_with_a_byte_order_mark_loads(self, tmp_path):
        """my/bad-h4: Notepad's BOM said 'Invalid statement (at line 1, column 1)'."""
        path = tmp_path / "cat"
        path.mkdir()
        (path / "a.toml").write_bytes(b"\xef\xbb\xbf" + NVL.encode())
        assert load_catalog(path, use_env=False).gpu("H200 NVL").tdp_w == 600

    def test_a_windows_1252_dash_is_refused_with_its_file_and_line(self, tmp_path):
        path = tmp_path / "cat"
        path.mkdir()
        text = NVL.replace("(H200 NVL column)", "(H200 NVL column \u2013 2026)")
        (path / "a.toml").write_bytes(text.encode("cp1252"))
        with pytest.raises(CatalogError) as e:
            load_catalog(path, use_env=False)
        assert str(e.value) == (
            f"{path / 'a.toml'}: line {line_of(NVL, 'source')}: byte 0x96 is not UTF-8 (a Windows-1252 character "
            "such as a curly quote or a dash?); save the file as UTF-8"
        )
