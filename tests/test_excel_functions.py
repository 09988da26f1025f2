"""The Excel functions, called the way Excel calls them: floats for whole numbers, None for empty cells,
2-D lists for ranges, names with stray case and spaces. Results must equal ``planner.api``'s (the
functions hold no formula); failures must be Excel error values, never exceptions.

These run on the plain-Python path (xlwings' identity decorators on Linux). The Office.js call path
(xlwings Lite / Server) has its own opt-in tier: tests/test_excel_officejs.py.
"""

from __future__ import annotations

import inspect
import math
import tomllib
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import api
from planner.catalog import default_catalog, reload_catalog
from planner.excel import functions as xf
from planner.excel import support as xs
from planner.excel.support import BEFORE_MARGIN_NOTE

ERRORS = {"#N/A", "#NUM!", "#VALUE!"}


@pytest.fixture(autouse=True)
def _plain_runtime(monkeypatch):
    """Each test starts on the plain-Python runtime with the default catalog."""
    monkeypatch.setattr(xs, "RUNTIME", "python")
    yield
    xs._session_folders = None
    reload_catalog()


def cell(x):
    """A single cell as xlwings hands it with ndim=2."""
    return [[x]]


# -- results equal the model's -----------------------------------------------------------------------------

#: (Excel function, its arguments as Excel sends them, the same call on planner.api, Excel unit / API unit)
SCALAR_CASES = [
    ("RIDGE", ("H100", None), lambda: api.ridge("H100"), 1),
    ("RIDGE", ("h100 ", "fp8"), lambda: api.ridge("H100", precision="fp8"), 1),
    ("WEIGHT_BYTES", ("Llama2-70B", None), lambda: api.weight_bytes("llama2-70b"), 1),
    ("WEIGHT_BYTES", ("llama2-70b", " FP8"), lambda: api.weight_bytes("llama2-70b", precision="fp8"), 1),
    (
        "KV_BYTES",
        ("llama2-70b", 8192.0, "fp16", None),
        lambda: api.kv_bytes("llama2-70b", 8192, kv_precision="fp16"),
        1,
    ),
    (
        "KV_BYTES",
        ("Llama2-70B", 4096.0, None, 4.0),
        lambda: api.kv_bytes("llama2-70b", 4096, kv_precision=None, batch=4),
        1,
    ),
    (
        "MAX_BATCH",
        ("H100", "llama2-70b", 8192.0, "fp16", None, None, None),
        lambda: api.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16"),
        1,
    ),
    (
        "MAX_BATCH",
        (" h100", "LLAMA2-70B ", 4096.0, None, 4.0, "fp8", 0.8),
        lambda: api.max_batch(
            "H100", "llama2-70b", 4096, kv_precision=None, gpus=4, weight_precision="fp8", memory_utilization=0.8
        ),
        1,
    ),
    (
        "MIN_GPUS",
        ("H100", "llama2-70b", 8192.0, 16.0, None, None, None),
        lambda: api.min_gpus("H100", "llama2-70b", 8192, batch=16),
        1,
    ),
    ("TPOT", ("H100", "llama2-70b", 8192.0, None, None, None, None), lambda: api.tpot("H100", "llama2-70b", 8192), 1e3),
    (
        "TPOT",
        ("H100", "llama2-70b", 8192.0, 3.0, "fp8", 2.0, None),
        lambda: api.tpot("H100", "llama2-70b", 8192, batch=3, kv_precision="fp8", gpus=2),
        1e3,
    ),
    ("TTFT", ("H100", "llama2-70b", 2048.0, None, None, None), lambda: api.ttft("H100", "llama2-70b", 2048), 1e3),
    (
        "TTFT",
        ("H100", "llama2-70b", 2048.0, 4.0, "fp8", "fp8"),
        lambda: api.ttft("H100", "llama2-70b", 2048, gpus=4, weight_precision="fp8", kv_precision="fp8"),
        1e3,
    ),
    (
        "THROUGHPUT",
        ("H100", "llama2-70b", 8192.0, 2.0, None, None, None),
        lambda: api.throughput("H100", "llama2-70b", 8192, batch=2),
        1,
    ),
    (
        "COST_PER_MTOK",
        ("H100", "llama2-70b", 8192.0, 2.0, None, None, None, None),
        lambda: api.cost_per_mtok("H100", "llama2-70b", 8192, batch=2),
        1,
    ),
    (
        "COST_PER_MTOK",
        ("H100", "llama2-70b", 8192.0, 2.0, 1.5, None, None, None),
        lambda: api.cost_per_mtok("H100", "llama2-70b", 8192, batch=2, price_per_gpu_hour=1.5),
        1,
    ),
    ("MFU", ("H100", "llama2-70b", 8192.0, None, None, None, None), lambda: api.mfu("H100", "llama2-70b", 8192), 1),
    ("MBU", ("H100", "llama2-70b", 8192.0, None, None, None, None), lambda: api.mbu("H100", "llama2-70b", 8192), 1),
    (
        "DECODE_INTENSITY",
        ("H100", "llama2-70b", 8192.0, 8.0, None, None, None),
        lambda: api.decode_intensity("H100", "llama2-70b", 8192, batch=8),
        1,
    ),
]


#: s174: beside a number PLANNER_WHY flags what `planner plan` flags; Llama 2 70B's trained maximum is 4,096 tokens
#: (max_position_embeddings, https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json, catalogs/models.toml).
OK_PAST_4K = (
    "ok; warning: context 8,192 exceeds Llama-2-70B's trained maximum of 4,096 tokens; memory and time are extrapolated"
)
#: The same cell with gpus left empty: the function chose the group, the smallest holding the weights and one sequence
#: (2 x H100 for Llama 2 70B at 8,192 tokens, as =MIN_GPUS("H100","llama2-70b",8192) gives), and PLANNER_WHY says so.
OK_ON_2_PAST_4K = OK_PAST_4K.replace(
    "ok;",
    "ok: on 2 x H100 SXM 80GB, the smallest group that holds the weights and 1 sequence of 8,192 tokens (give gpus to "
    "fix it);",
    1,
)


class TestResultsEqualTheModel:
    @pytest.mark.parametrize(
        ("name", "args", "expected", "unit"), SCALAR_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SCALAR_CASES)]
    )
    def test_scalar_call_equals_api(self, name, args, expected, unit):
        """One cell per argument (floats, None, odd case and spaces) gives the API's number in Excel's unit."""
        got = getattr(xf, name)(*args)
        assert got == pytest.approx(expected() * unit, rel=1e-12)

    @pytest.mark.parametrize(
        ("name", "args", "expected", "unit"), SCALAR_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SCALAR_CASES)]
    )
    def test_one_cell_ranges_equal_scalars(self, name, args, expected, unit):
        """xlwings with ndim=2 hands each cell as [[x]]: the answer is the same single number."""
        got = getattr(xf, name)(*[cell(a) for a in args])
        assert got == pytest.approx(expected() * unit, rel=1e-12)

    def test_mission_example_answers_for_the_smallest_group(self):
        """=MAX_BATCH("H100","llama2-70b",8192,"fp16") is the max batch on MIN_GPUS GPUs, as the model defines it."""
        smallest = api.min_gpus("H100", "llama2-70b", 8192, batch=1, kv_precision="fp16")
        assert xf.MAX_BATCH("H100", "llama2-70b", 8192.0, "fp16") == api.max_batch(
            "H100", "llama2-70b", 8192, kv_precision="fp16", gpus=smallest
        )
        assert isinstance(xf.MAX_BATCH("H100", "llama2-70b", 8192.0, "fp16"), int)

    def test_published_numbers(self):
        """Pinned to sourced figures: Llama 2 70B config.json (80 layers, 8 KV heads, head dim 128), H100 datasheet."""
        assert xf.KV_BYTES("llama2-70b", 8192.0, "fp16") == 2 * 80 * 8 * 128 * 2 * 8192  # 2,684,354,560 B
        assert xf.WEIGHT_BYTES("llama2-70b", "fp16") == 68_976_648_192 * 2  # HF safetensors params x 2 B
        assert xf.RIDGE("H100", "bf16") == pytest.approx(989.4e12 / 3.35e12)  # dense bf16 peak / HBM3 bandwidth

    def test_column_of_contexts_spills_a_column(self):
        """A column range gives a same-shaped column, each cell equal to the scalar call."""
        contexts = [[1024.0], [4096.0], [8192.0], [32768.0]]
        got = xf.TPOT("H100", "llama2-70b", contexts, 4.0)
        assert [len(r) for r in got] == [1, 1, 1, 1]
        for (ctx,), (ms,) in zip(contexts, got, strict=True):
            assert ms == pytest.approx(api.tpot("H100", "llama2-70b", int(ctx), batch=4) * 1e3, rel=1e-9)

    def test_row_against_column_spills_a_table(self):
        """A row of GPUs against a column of contexts broadcasts like Excel's array arithmetic."""
        gpus = [["H100", "A100 SXM 80GB", "h200"]]
        contexts = [[2048.0], [8192.0]]
        got = xf.MAX_BATCH(gpus, "llama2-70b", contexts)
        assert len(got) == 2 and all(len(r) == 3 for r in got)
        for i, (ctx,) in enumerate(contexts):
            for j, g in enumerate(gpus[0]):
                assert got[i][j] == api.max_batch(g, "llama2-70b", int(ctx))

    def test_empty_optional_cells_in_a_range_take_the_default(self):
        """A gpus column with some empty cells: empty ones pick the smallest group, the others use their count."""
        got = xf.MAX_BATCH("H100", "llama2-70b", 8192.0, None, [[None], [4.0], [None], [8.0]])
        smallest = api.max_batch("H100", "llama2-70b", 8192)
        assert got == [
            [smallest],
            [api.max_batch("H100", "llama2-70b", 8192, kv_precision=None, gpus=4)],
            [smallest],
            [api.max_batch("H100", "llama2-70b", 8192, kv_precision=None, gpus=8)],
        ]

    def test_numbers_typed_as_text_count_as_numbers(self):
        """ "8192" in a text-formatted cell is 8192, as in Excel's own arithmetic."""
        assert xf.KV_BYTES("llama2-70b", " 8192 ", "fp16") == xf.KV_BYTES("llama2-70b", 8192.0, "fp16")

    def test_plain_list_is_a_column(self):
        """A 1-D list (Python callers) is read as a column."""
        expected = [[api.kv_bytes("llama2-70b", 1)], [api.kv_bytes("llama2-70b", 2)]]
        assert xf.KV_BYTES("llama2-70b", [1.0, 2.0]) == expected


# -- errors -------------------------------------------------------------------------------------------------


class TestTokenCountsAsPeopleWriteThem:
    """Issue 26 item 5: a context cell holding "8k" or "8,192" reads as `planner plan --context` reads it
    (planner.units.parse_token_count; k = 1,024 tokens, as model cards mean an 8K context)."""

    def test_kv_bytes_of_8k_is_that_of_8192(self):
        """Llama 2 70B (80 layers, 8 KV heads of 128, fp16; meta-llama/Llama-2-70b-hf config.json) at 8,192
        tokens: 80 x 8 x 128 x 2 (K and V) x 2 bytes x 8,192 = 2,684,354,560 bytes, however the count is written."""
        for written in ("8k", "8K", "8,192", " 8192 ", "8_192", 8192.0):
            assert xf.KV_BYTES(cell("llama2-70b"), cell(written)) == 2_684_354_560, written

    def test_context_prompt_and_output_lengths(self):
        """MAX_BATCH's context, TTFT's prompt and the under-load functions' lengths all read "2k" as 2,048."""
        assert xf.MAX_BATCH("H100", "llama2-70b", "4k", None, 4.0) == xf.MAX_BATCH(
            "H100", "llama2-70b", 4096.0, None, 4.0
        )
        assert xf.TTFT("H100", "llama2-70b", "2k") == xf.TTFT("H100", "llama2-70b", 2048.0)
        spec = xs.SPECS["KV_BYTES"]
        assert [p.name for p in spec.params if p.tokens] == ["tokens"]
        under_load = [s for s in xs.SPECS.values() if any(p.name == "output_tokens" for p in s.params)]
        assert under_load and all(p.tokens for s in under_load for p in s.params if p.name.endswith("tokens"))

    def test_a_range_of_written_counts(self):
        """Each cell of a range on its own: "8k" and "4k" give their batches, a bad one #VALUE! beside them."""
        got = xf.MAX_BATCH("H100", "llama2-70b", [["8k"], ["4k"], ["8,19"]], None, 4.0)
        assert got == [[xf.MAX_BATCH("H100", "llama2-70b", 8192.0, None, 4.0)], [117], ["#VALUE!"]]

    def test_what_is_not_a_count_says_what_is(self):
        """A comma that does not group three digits, or half a token: #VALUE! and the accepted forms."""
        assert xf.KV_BYTES("llama2-70b", "8,19") == "#VALUE!"
        reason = xf.PLANNER_WHY("KV_BYTES", "llama2-70b", "8,19")
        assert reason.startswith("tokens: '8,19'") and "8,192, 1e4 or 8k" in reason
        assert "not a whole number" in xf.PLANNER_WHY("KV_BYTES", "llama2-70b", "1.0001k")


class TestErrorValues:
    def test_unknown_gpu_is_na_with_closest_names(self):
        """An unknown GPU gives #N/A; PLANNER_WHY names the closest catalog names."""
        assert xf.MAX_BATCH("H10", "llama2-70b", 8192.0) == "#N/A"
        reason = xf.PLANNER_WHY("MAX_BATCH", "H10", "llama2-70b", 8192.0)
        assert "unknown GPU 'H10'" in reason and "H100" in reason

    def test_unknown_model_and_precision_are_na(self):
        """Unknown model or precision names give #N/A too."""
        assert xf.TPOT("H100", "llama9-70b", 8192.0) == "#N/A"
        assert xf.KV_BYTES("llama2-70b", 8192.0, "fp7") == "#N/A"

    def test_configuration_that_does_not_fit_is_num(self):
        """70B fp16 weights on one 80 GB GPU do not fit: #NUM!, and the reason names the smallest group."""
        assert xf.MAX_BATCH("H100", "llama2-70b", 8192.0, None, 1.0) == "#NUM!"
        assert "smallest group that works is 2" in xf.PLANNER_WHY("MAX_BATCH", "H100", "llama2-70b", 8192.0, None, 1.0)

    def test_number_out_of_range_is_num(self):
        """A number of the right kind but out of range (negative, fractional, beyond the maximum) gives #NUM!."""
        for bad in (-5.0, 0.0, 1.5, 2.0**40):
            assert xf.KV_BYTES("llama2-70b", bad) == "#NUM!"
        assert xf.MAX_BATCH("H100", "llama2-70b", 8192.0, None, None, None, 1.5) == "#NUM!"

    def test_kv_precision_that_cannot_hold_a_cache_is_num(self):
        """mxfp4 is a weight format, not a KV-cache format: a configuration that makes no sense."""
        assert xf.KV_BYTES("llama2-70b", 8192.0, "mxfp4") == "#NUM!"
        assert "not a KV-cache format" in xf.PLANNER_WHY("KV_BYTES", "llama2-70b", 8192.0, "mxfp4")

    def test_a_weight_only_kv_format_suggests_only_formats_the_engine_caches(self):
        """MAX_BATCH runs on the default engine (vLLM), which caches fp16, bf16, fp32 or fp8
        (``EngineProfile.kv_precisions``, from its docs): the refusal of mxfp4 suggests exactly those, so each format it
        names computes, where int8 and int4 (KV-cache formats vLLM does not cache) gave #NUM! in turn."""
        from planner.engines.profiles import engine_profile

        why = xf.PLANNER_WHY("MAX_BATCH", "H100", "llama2-70b", 8192.0, "mxfp4")
        suggested = why.split("use one of ", 1)[1].split(", ")
        assert sorted(suggested) == sorted(engine_profile(None).kv_precisions)
        for kv in suggested:
            assert isinstance(xf.MAX_BATCH("H100", "llama2-70b", 8192.0, kv, 4.0), int), kv

    def test_wrong_kind_is_value(self):
        """Text where a number belongs, a number or TRUE where a name belongs: #VALUE!."""
        assert xf.KV_BYTES("llama2-70b", "lots") == "#VALUE!"
        assert xf.KV_BYTES("llama2-70b", True) == "#VALUE!"
        assert xf.MAX_BATCH(4090.0, "llama2-70b", 8192.0) == "#VALUE!"
        assert "must be a GPU name" in xf.PLANNER_WHY("MAX_BATCH", 4090.0, "llama2-70b", 8192.0)

    def test_empty_required_cell_is_value(self):
        """A required argument left empty gives #VALUE! and says which one."""
        assert xf.TPOT("H100", None, 8192.0) == "#VALUE!"
        assert xf.PLANNER_WHY("TPOT", "H100", None, 8192.0).startswith("model is empty")

    def test_each_cell_of_a_range_gets_its_own_error(self):
        """One call over a column: good rows get numbers, bad rows their own error, blank rows stay blank."""
        contexts = [[8192.0], ["abc"], [-1.0], [None], [4096.0]]
        gpus = [["H100"], ["H100"], ["H100"], [None], ["H10"]]
        got = xf.MAX_BATCH(gpus, "llama2-70b", contexts)
        assert got[0] == [api.max_batch("H100", "llama2-70b", 8192)]
        assert got[1:] == [["#VALUE!"], ["#NUM!"], [None], ["#N/A"]]
        why = xf.PLANNER_WHY("MAX_BATCH", gpus, "llama2-70b", contexts)
        assert why[0] == [OK_ON_2_PAST_4K] and why[3] == [""] and "unknown GPU" in why[4][0]

    def test_ranges_that_do_not_line_up_are_one_value_error(self):
        """A 2x2 range against a 1x3 range cannot broadcast: one #VALUE! and a reason naming the shapes."""
        assert xf.MAX_BATCH([["H100", "H100"], ["H100", "H100"]], "llama2-70b", [[1.0, 2.0, 3.0]]) == "#VALUE!"
        assert "2x2 and 1x3" in xf.PLANNER_WHY(
            "MAX_BATCH", [["H100", "H100"], ["H100", "H100"]], "llama2-70b", [[1.0, 2.0, 3.0]]
        )

    def test_ragged_range_is_value(self):
        """Rows of different lengths are not a range Excel can send; still an error value, not an exception."""
        assert xf.KV_BYTES("llama2-70b", [[1.0, 2.0], [3.0]]) == "#VALUE!"

    def test_many_failing_scenarios_keep_the_right_codes(self):
        """Past RERUN_LIMIT distinct failures the codes come from name checks, still #N/A vs #NUM! correctly."""
        n = xs.RERUN_LIMIT + 20
        gpus = [["H10"] if i % 2 else ["H100"] for i in range(n)]
        got = xf.MAX_BATCH(gpus, "llama2-70b", [[float(1000 + i)] for i in range(n)], None, 1.0)
        assert [r[0] for r in got] == ["#N/A" if i % 2 else "#NUM!" for i in range(n)]

    def test_classic_runtime_shows_code_and_reason_as_text(self, monkeypatch):
        """Classic Windows UDFs cannot return real errors: the cell shows '#N/A: <reason>' text."""
        monkeypatch.setattr(xs, "RUNTIME", "classic")
        got = xf.MAX_BATCH("H10", "llama2-70b", 8192.0)
        assert got.startswith("#N/A: unknown GPU 'H10'")
        col = xf.MAX_BATCH([["H100"], ["H10"]], "llama2-70b", 8192.0, None, 1.0)
        assert col[0][0].startswith("#NUM: ".replace("NUM", "NUM!")) and col[1][0].startswith("#N/A: ")

    def test_officejs_runtime_returns_bare_error_strings(self, monkeypatch):
        """On Office.js xlwings turns a string starting with '#' into a real error value: return the bare code."""
        monkeypatch.setattr(xs, "RUNTIME", "officejs")
        assert xf.MAX_BATCH("H10", "llama2-70b", 8192.0) == "#N/A"

    def test_why_unknown_function_lists_known_ones(self):
        """PLANNER_WHY with a function it does not know says which it does."""
        assert "MAX_BATCH" in xf.PLANNER_WHY("MAXBATCH", "H100")
        assert xf.PLANNER_WHY("=max_batch(", "H100", "llama2-70b", 8192.0) == OK_ON_2_PAST_4K


class TestRuntimeDetection:
    @staticmethod
    def fake_xlwings(module_name):
        def func(f=None):
            return f

        func.__module__ = module_name
        return types.SimpleNamespace(func=func)

    @pytest.mark.parametrize(
        ("module", "platform", "runtime"),
        [
            ("xlwings.pro.udfs_officejs", "linux", "officejs"),  # XLWINGS_ON_SERVER=true
            ("xlwings.udfs", "win32", "classic"),  # Windows with pywin32
            ("xlwings", "linux", "python"),  # identity decorators
            ("xlwings", "emscripten", "officejs"),  # xlwings Lite under Pyodide
        ],
    )
    def test_runtime_follows_the_decorators_xlwings_bound(self, module, platform, runtime):
        """The runtime is read from where xlwings' func decorator comes from (and Pyodide's platform)."""
        assert xf.detect_runtime(self.fake_xlwings(module), platform) == runtime

    def test_this_process_is_plain_python(self):
        """The test process never sets XLWINGS_ON_SERVER, so the module sees plain Python."""
        assert xf.detect_runtime() == "python"


# -- catalog functions ----------------------------------------------------------------------------------------

USER_GPU = """
[[gpu]]
name = "Test GPU 200GB"
aliases = ["TG200"]
source = "a test fixture"
vendor = "other"
memory_bytes = 214748364800
hbm_bandwidth_bytes_per_s = 5.0e12
peak_flop_per_s = { fp16 = 1.0e15, bf16 = 1.0e15 }
tdp_w = 800
"""


class TestCatalogFunctions:
    def test_lists_spill_the_catalog_names(self):
        """PLANNER_GPUS/MODELS/PRECISIONS spill one name per row, in catalog order."""
        cat = default_catalog()
        assert xf.PLANNER_GPUS() == [[n] for n in cat.gpus.names()]
        assert xf.PLANNER_MODELS() == [[n] for n in cat.models.names()]
        assert xf.PLANNER_PRECISIONS() == [[n] for n in cat.precisions.names()]

    def test_info_gives_a_field_with_units_in_its_name(self):
        """PLANNER_INFO reads catalog fields (nested ones with dots) and the model's derived facts."""
        h100 = default_catalog().gpu("H100")
        assert xf.PLANNER_INFO(" h100", "memory_bytes") == h100.memory_bytes
        on_demand = h100.price("on-demand").usd_per_gpu_hour
        assert xf.PLANNER_INFO("H100", "price.on-demand.usd_per_gpu_hour") == on_demand
        assert xf.PLANNER_INFO("H100", "price.purchase.purchase_usd") == h100.price("purchase").purchase_usd
        assert xf.PLANNER_INFO("H100", "peak_flop_per_s.bf16") == h100.peak_flop_per_s["bf16"]
        assert xf.PLANNER_INFO("llama2-70b", "params_total") == 68_976_648_192  # learned params, HF config
        assert xf.PLANNER_INFO("H100", "name") == "H100 SXM 80GB"

    def test_info_without_field_spills_a_two_column_table(self):
        """No field: every field of the entry as (field, value) rows."""
        table = xf.PLANNER_INFO("fp8")
        assert all(len(r) == 2 for r in table) and ["name", "fp8"] in table

    def test_info_unknown_name_or_field_is_na(self):
        """Unknown names and fields give #N/A with close matches in PLANNER_WHY."""
        assert xf.PLANNER_INFO("H10", "memory_bytes") == "#N/A"
        assert xf.PLANNER_INFO("H100", "memry_bytes") == "#N/A"
        assert "memory_bytes" in xf.PLANNER_WHY("PLANNER_INFO", "H100", "memry_bytes")

    def test_info_broadcasts_names_against_fields(self):
        """A column of names against a row of fields gives a table."""
        got = xf.PLANNER_INFO([["H100"], ["A100 SXM 80GB"]], [["memory_bytes", "tdp_w"]])
        cat = default_catalog()
        assert got == [
            [cat.gpu("H100").memory_bytes, cat.gpu("H100").tdp_w],
            [cat.gpu("A100 SXM 80GB").memory_bytes, cat.gpu("A100 SXM 80GB").tdp_w],
        ]

    def test_reload_with_a_user_folder_adds_its_entries(self, tmp_path):
        """PLANNER_RELOAD(folder) reads the user's catalog folder; its GPUs work at once."""
        (tmp_path / "mine.toml").write_text(USER_GPU, encoding="utf-8")
        assert xf.MAX_BATCH("TG200", "llama2-70b", 8192.0) == "#N/A"
        message = xf.PLANNER_RELOAD(str(tmp_path))
        assert message.startswith("catalog reloaded: 18 GPUs") or "catalog reloaded" in message
        assert xf.MAX_BATCH("TG200", "llama2-70b", 8192.0) == api.max_batch(
            "TG200", "llama2-70b", 8192, catalog=default_catalog(str(tmp_path))
        )

    def test_reload_with_a_missing_folder_keeps_the_old_catalog(self, tmp_path):
        """A folder that is not there: a message saying so, and the functions keep working."""
        message = xf.PLANNER_RELOAD(str(tmp_path / "nope"))
        assert message.startswith("catalog not reloaded") and "not found" in message
        assert isinstance(xf.MAX_BATCH("H100", "llama2-70b", 8192.0), int)

    def test_user_folder_from_the_xlwings_config(self, tmp_path, monkeypatch):
        """ "PLANNER_CATALOG","<folder>" in xlwings.conf names the user's folder (how Excel is pointed at it)."""
        (tmp_path / "cat").mkdir()
        (tmp_path / "cat" / "mine.toml").write_text(USER_GPU, encoding="utf-8")
        conf = tmp_path / "xlwings.conf"
        conf.write_text(
            f'"UDF MODULES","planner.excel.functions"\n"PLANNER_CATALOG","{tmp_path / "cat"}"\n', encoding="utf-8"
        )
        monkeypatch.setattr(xs, "xlwings_config_path", lambda: str(conf))
        assert xs.config_folders() == (str(tmp_path / "cat"),)
        xs._session_folders = None
        assert isinstance(xf.MAX_BATCH("TG200", "llama2-70b", 8192.0), int)


# -- property: arbitrary cell values never raise ------------------------------------------------------------

NAMES = ["H100", " h100 ", "A100 SXM 80GB", "llama2-70b", "Llama2-70B", "qwen3-8b", "fp16", "fp8", "mxfp4", "H10", ""]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NAMES),
    st.text(max_size=8),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.sampled_from([1.0, 8.0, 1024.0, 8192.0, 0.5, -1.0, 1e308, "8192", "nan"]),
)
cells = st.one_of(
    scalars,
    st.lists(st.lists(scalars, min_size=1, max_size=3), min_size=1, max_size=3),  # ranges (maybe ragged)
    st.lists(scalars, max_size=3),  # 1-D lists
    st.lists(st.lists(st.lists(scalars, max_size=2), max_size=2), max_size=2),  # nested too deep
)

#: every function a cell can call, with how many arguments it takes (PLANNER_RELOAD has its own tests)
FUNCTIONS = {name: getattr(xf, name) for name in xf.__all__ if name not in ("PLANNER_RELOAD",)}


def _is_cell_value(v) -> bool:
    if v is None or isinstance(v, (str, bool)):  # bool: Excel's TRUE / FALSE (PLANNER_INFO's flags)
        return True
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_result(name, result):
    if isinstance(result, list):
        assert result and all(isinstance(r, list) and len(r) == len(result[0]) for r in result), (name, result)
        assert all(_is_cell_value(v) for r in result for v in r), (name, result)
    else:
        assert _is_cell_value(result), (name, result)
        assert result is not None, name
    if name in xs.SPECS and isinstance(result, str):
        assert result in ERRORS, (name, result)


class TestArbitraryCellValues:
    @pytest.mark.parametrize("name", sorted(FUNCTIONS))
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def test_never_raises_and_returns_a_cell_value(self, name, data):
        """Any mix of None, bools, text, NaN, infinities, negatives, huge numbers and (nested) lists gives a
        number, a spilled array or an Excel error value; the capacity functions' text is only #N/A, #NUM!, #VALUE!."""
        f = FUNCTIONS[name]
        params = inspect.signature(f).parameters.values()  # through the UDF wrapper's __wrapped__
        n = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in params) + 3 * any(p.kind == p.VAR_POSITIONAL for p in params)
        args = [data.draw(cells) for _ in range(n)]
        if name == "PLANNER_WHY" and data.draw(st.booleans()):
            args[0] = data.draw(st.sampled_from(sorted(xs.SPECS)))
        _check_result(name, f(*args))

    def test_ints_numpy_and_tuples_are_accepted(self):
        """Python callers may pass ints, numpy numbers and arrays; they mean the same as Excel's floats."""
        assert xf.KV_BYTES("llama2-70b", np.int64(8192)) == xf.KV_BYTES("llama2-70b", 8192)
        assert xf.KV_BYTES("llama2-70b", np.array([[8192.0]])) == xf.KV_BYTES("llama2-70b", 8192.0)


# -- planner addin ---------------------------------------------------------------------------------------------

import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from planner.cli import main as cli_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class TestStartUp:
    def test_the_functions_load_without_the_serving_simulation(self):
        """Importing the Excel functions (what Excel's Python does when a workbook opens) leaves planner.serving
        unimported (~20 ms of start-up, issue 24); the first percentile call imports it and returns a number."""
        code = (
            "import sys; import planner.excel.functions as xf; "
            "print(any(m.startswith('planner.serving') for m in sys.modules)); "
            "v = xf.TTFT_P50('H100', 'llama2-7b', 2.0, 256.0, 16.0, 1.0); "
            "print('planner.serving.load' in sys.modules, isinstance(v, float) and v > 0)"
        )
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.split() == ["False", "True", "True"]


class TestAddinInstall:
    def test_install_adds_the_module_and_keeps_other_settings(self, tmp_path):
        """ "UDF Modules" gains planner.excel.functions next to modules already there; other keys stay."""
        conf = tmp_path / "xlwings.conf"
        conf.write_text('"INTERPRETER_WIN","C:\\\\py\\\\python.exe"\n"UDF MODULES","mymod"\n', encoding="utf-8")
        res = CliRunner().invoke(cli_main, ["addin", "install", "--config", str(conf), "--catalog", str(tmp_path)])
        assert res.exit_code == 0, res.output
        text = conf.read_text(encoding="utf-8")
        assert '"UDF MODULES","mymod;planner.excel.functions"' in text
        assert '"INTERPRETER_WIN","C:\\\\py\\\\python.exe"' in text and f'"PLANNER_CATALOG","{tmp_path}"' in text
        assert "Import Functions" in res.output and "Trust access to the VBA project object model" in res.output
        again = CliRunner().invoke(cli_main, ["addin", "install", "--config", str(conf)])
        assert "already set up" in again.output and conf.read_text(encoding="utf-8") == text

    def test_uninstall_removes_only_planner(self, tmp_path):
        """Uninstall leaves the other modules and settings as they were."""
        conf = tmp_path / "xlwings.conf"
        conf.write_text(
            '"UDF MODULES","mymod;planner.excel.functions"\n"PLANNER_CATALOG","x"\n"A","b"\n', encoding="utf-8"
        )
        res = CliRunner().invoke(cli_main, ["addin", "uninstall", "--config", str(conf)])
        assert res.exit_code == 0, res.output
        assert conf.read_text(encoding="utf-8") == '"UDF MODULES","mymod"\n"A","b"\n'

    def test_install_creates_a_missing_config(self, tmp_path):
        """No config yet: one is written with the module."""
        conf = tmp_path / "new" / "xlwings.conf"
        assert CliRunner().invoke(cli_main, ["addin", "install", "--config", str(conf)]).exit_code == 0
        assert conf.read_text(encoding="utf-8") == '"UDF MODULES","planner.excel.functions"\n'

    def test_a_config_saved_as_utf16_is_read_and_a_binary_one_refused_in_one_line(self, tmp_path):
        """Notepad's "Unicode" saves UTF-16 with a BOM: install raised a UnicodeDecodeError traceback (trial s196)."""
        conf = tmp_path / "xlwings.conf"
        conf.write_text('"A","b"\n', encoding="utf-16")
        res = CliRunner().invoke(cli_main, ["addin", "install", "--config", str(conf)])
        assert res.exit_code == 0, res.output
        assert '"A","b"' in conf.read_text(encoding="utf-8") and "planner.excel.functions" in conf.read_text()
        conf.write_bytes(b"\x80\x81 not text")
        res = CliRunner().invoke(cli_main, ["addin", "install", "--config", str(conf)])
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert "an xlwings config file is not UTF-8 or UTF-16 text; save it as UTF-8" in res.output


class TestAddinLite:
    def test_refuses_to_overwrite_without_force(self, tmp_path):
        """Existing main.py: exit 1 with one line naming --force; nothing is changed."""
        (tmp_path / "main.py").write_text("mine", encoding="utf-8")
        res = CliRunner().invoke(cli_main, ["addin", "lite", str(tmp_path)])
        assert res.exit_code == 1 and "--force" in res.output and "Traceback" not in res.output
        assert (tmp_path / "main.py").read_text(encoding="utf-8") == "mine"

    def test_main_py_is_self_contained(self, tmp_path):
        """The written main.py runs in an isolated interpreter away from the repository, imports planner from
        its own embedded bundle (with a user catalog folder), and exposes the functions for Lite to register."""
        cat = tmp_path / "cat"
        cat.mkdir()
        (cat / "mine.toml").write_text(USER_GPU, encoding="utf-8")
        out = tmp_path / "lite"
        res = CliRunner().invoke(cli_main, ["addin", "lite", str(out), "--catalog", str(cat)])
        assert res.exit_code == 0, res.output
        listed = set((out / "requirements.txt").read_text().split())
        assert {"numpy", "pandas", "pydantic", "scipy"} <= listed
        # Lite installs only what requirements.txt lists: every other runtime dependency of the package is blocked
        # here (s192: scipy was missing, and every time cell read #VALUE! in Excel on Mac and the web)
        with (ROOT / "pyproject.toml").open("rb") as f:
            needed = tomllib.load(f)["project"]["dependencies"]
        unlisted = sorted(
            {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower().replace("-", "_") for d in needed}
            - listed
            - {"xlwings"}
        )
        assert "click" in unlisted  # the blocker has something to block
        block = (
            "import importlib.abc, sys\n"
            "class Unlisted(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            f"        if name.split('.')[0] in {unlisted!r}: raise ImportError('not in requirements.txt: ' + name)\n"
            "sys.meta_path.insert(0, Unlisted())\n"
        )
        code = block + (
            "import runpy; g = runpy.run_path('main.py', run_name='main'); import planner, sys; "
            "print(planner.__file__); print(g['MAX_BATCH']('TG200', 'llama2-70b', 8192.0)); "
            "print(g['TPOT']('MI300X', 'deepseek-v3', 8192.0, None, None, 8) > 0); "
            "print(sorted(k for k in g if k.isupper() and callable(g[k])) == sorted(g['__all__'] if '__all__' in g "
            "else __import__('planner.excel.functions').excel.functions.__all__)); "
            "print('click' in sys.modules or 'planner.cli' in sys.modules); "
            "print(g['LOADED_RANGE']('TTFT', 99.0, 'high'))"
        )
        proc = subprocess.run([sys.executable, "-I", "-c", code], cwd=out, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        planner_file, value, mi300x_tpot, all_exposed, cli_loaded, ttft_p99_high = proc.stdout.split()
        assert "planner-lite-" in planner_file and not planner_file.startswith(str(ROOT))
        # every data file the model reads is in the bundle: s80 found allreduce_published.csv (the MI300X all-reduce,
        # read by every GPU's lookup) missing, and every cell #VALUE!
        assert int(value) > 0 and mi300x_tpot == "True" and all_exposed == "True" and cli_loaded == "False"
        # LOADED_RANGE's held-out table travels too (without it every cell would be #N/A)
        from planner.accuracy.loaded_ranges import STEADY, load_loaded_ranges

        assert float(ttft_p99_high) == pytest.approx(load_loaded_ranges()[("ttft_p99", STEADY)].ratios()[1])

    def test_the_bundle_carries_the_loaded_ranges_table(self):
        """The embedded bundle holds catalogs/reference/loaded_residuals.csv byte for byte where the installed
        package's ``shipped_catalog_dir`` finds it (planner/_catalogs/reference/)."""
        import zipfile
        from io import BytesIO

        from planner.accuracy.loaded_ranges import loaded_residuals_file
        from planner.cli.addin import lite_bundle

        with zipfile.ZipFile(BytesIO(lite_bundle())) as z:
            data = z.read("planner/_catalogs/reference/loaded_residuals.csv")
        assert data == loaded_residuals_file().read_bytes()

    def test_wheel_url_mode_lists_the_wheel(self, tmp_path):
        """--wheel-url: requirements.txt names the wheel and main.py only imports the functions."""
        url = "https://example.org/planner-0.1.0-py3-none-any.whl"
        res = CliRunner().invoke(cli_main, ["addin", "lite", str(tmp_path), "--wheel-url", url])
        assert res.exit_code == 0, res.output
        assert url in (tmp_path / "requirements.txt").read_text()
        assert "from planner.excel.functions import *" in (tmp_path / "main.py").read_text()


class TestExampleWorkbook:
    @staticmethod
    def formulas(path):
        import openpyxl
        from openpyxl.worksheet.formula import ArrayFormula

        wb = openpyxl.load_workbook(path)
        out = {}
        for ws in wb:
            for row in ws.iter_rows():
                for c in row:
                    v = c.value.text if isinstance(c.value, ArrayFormula) else c.value
                    if c.data_type == "f" or isinstance(c.value, ArrayFormula):
                        out[(ws.title, c.coordinate)] = v
        return out

    def test_cells_call_only_planner_functions(self, tmp_path):
        """Every formula in the example calls functions the module defines (Excel would show #NAME? otherwise)."""
        path = tmp_path / "ex.xlsx"
        assert CliRunner().invoke(cli_main, ["addin", "example", str(path)]).exit_code == 0
        formulas = self.formulas(path)
        assert len(formulas) >= 20
        called = {name for f in formulas.values() for name in re.findall(r"([A-Z_]+)\(", f)}
        assert called <= set(xf.__all__) and {"MAX_BATCH", "TPOT", "PLANNER_WHY"} <= called
        assert formulas[("Functions", "D5")] == '=MAX_BATCH("H100","llama2-70b",8192,"fp16")'

    def test_shipped_workbook_holds_the_formulas_and_values_the_command_writes_now(self, tmp_path):
        """workbooks/functions-example.xlsx is what `planner addin example` writes today: every cell's formula or
        value (the "Python gave" column, the Scenarios check rows) and every formula's stored value, compared by
        ``workbook_support.workbook_differences`` (cells, not bytes: the file's timestamps and metadata do not count;
        numbers to 1e-9 relative). Only formulas were compared before, and the shipped file said REPLICAS(...,4,"fp8")
        gave 9 where the function and docs/excel.md give 7, CAPACITY_RPS 8.29 (10.51 then), LOADED_RANGE 15.4 (15.27)
        and TPOT at batch 8 20.42 ms (19.72), 18 of the Scenarios sheet's 20 stored results stale (after the per-layer
        overhead refit to 15.7 us and the output head counted once per prompt: 10.56, 15.66 and 19.74). Regenerate with
        `planner addin example workbooks/functions-example.xlsx --force`."""
        from workbook_support import workbook_differences

        path = tmp_path / "ex.xlsx"
        assert CliRunner().invoke(cli_main, ["addin", "example", str(path)]).exit_code == 0
        shipped = ROOT / "workbooks" / "functions-example.xlsx"
        differ = workbook_differences(shipped, path) + [
            f"stored value of {d}" for d in workbook_differences(shipped, path, data_only=True)
        ]
        assert not differ, "; ".join(differ) + "; run `planner addin example workbooks/functions-example.xlsx --force`"

    def test_prints_each_sheet_one_page_wide_with_its_numbers_formatted(self, tmp_path):
        """Printed, the example was 12 portrait pages: Functions' columns one or two to a page, "$ per 1M output
        tokens" cut in its 18-wide Unit column, the Read me's lines split across two pages, and "Python gave" in
        General format (295.34328358209, 137953296384). Each sheet now prints landscape one page wide, each column
        is as wide as its longest text, and each result has its unit's format (bytes 137,953,296,384)."""
        import openpyxl

        path = tmp_path / "ex.xlsx"
        assert CliRunner().invoke(cli_main, ["addin", "example", str(path)]).exit_code == 0
        wb = openpyxl.load_workbook(path)
        for ws in wb:
            assert ws.page_setup.orientation == "landscape", ws.title
            assert ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth == 1, ws.title
            assert ws.page_setup.fitToHeight == 0, ws.title
        functions = wb["Functions"]
        units = [c.value for (c,) in functions.iter_rows(min_row=2, min_col=2, max_col=2) if isinstance(c.value, str)]
        assert functions.column_dimensions["B"].width >= max(map(len, units)) == len("$ per 1M output tokens")
        readme = wb["Read me"]
        assert readme.column_dimensions["A"].width >= max(len(c.value or "") for (c,) in readme.iter_rows())
        assert functions["E3"].number_format == "#,##0" and functions["D3"].number_format == "#,##0"  # bytes
        assert functions["B16"].value == "text" and functions["D16"].alignment.wrap_text  # PLANNER_WHY's sentence
        for ws, first in ((functions, 2), (wb["Scenarios"], 2)):
            for row in ws.iter_rows(min_row=first, min_col=3):
                for c in row:
                    if isinstance(c.value, float):
                        assert c.number_format != "General" and "E+" not in c.number_format, (ws.title, c.coordinate)

    def test_a_wrapped_row_is_as_tall_as_its_text(self, tmp_path):
        """LibreOffice printed PLANNER_WHY's sentence (row 16, "unknown GPU 'H10'; did you mean H100, H100 NVL, H100
        SXM?" in the 16-wide Result column) over the next row: the row kept its one-line height. It renders in 4
        lines (soffice --convert-to pdf, s163), so the row is 4 x 15 pt; every row with a wrapped text is at least
        its lines high, and its cells sit at its top."""
        import openpyxl

        from planner.cli.addin_example import LINE_HEIGHT_PT
        from planner.export.xlsx_cells import wrapped_lines

        path = tmp_path / "ex.xlsx"
        assert CliRunner().invoke(cli_main, ["addin", "example", str(path)]).exit_code == 0
        functions = openpyxl.load_workbook(path)["Functions"]
        shown = openpyxl.load_workbook(path, data_only=True)["Functions"]  # a formula's stored value, as printed
        assert shown["D16"].value.startswith("unknown GPU 'H10'")
        assert functions.row_dimensions[16].height == 4 * LINE_HEIGHT_PT == 60
        assert functions["A16"].alignment.vertical == "top"
        for row in functions.iter_rows():
            for c in row:
                text = shown[c.coordinate].value
                if c.alignment.wrap_text and isinstance(text, str):
                    lines = wrapped_lines(text, functions.column_dimensions[c.column_letter].width)
                    assert (functions.row_dimensions[c.row].height or 15) >= lines * LINE_HEIGHT_PT, c.coordinate

    def test_refuses_to_overwrite_without_force(self, tmp_path):
        """An existing file is kept unless --force."""
        path = tmp_path / "ex.xlsx"
        path.write_bytes(b"x")
        res = CliRunner().invoke(cli_main, ["addin", "example", str(path)])
        assert res.exit_code == 1 and path.read_bytes() == b"x"
        assert CliRunner().invoke(cli_main, ["addin", "example", str(path), "--force"]).exit_code == 0


class TestFailingCellsInBulk:
    """Issue 11: the reason of each failing cell is noted in bulk (``planner.model.failures``), not found by re-running
    the cell alone; each reason is the one the same cell alone gives."""

    # (gpu, model, context, kv precision, gpus): every kind of failure, and cells that work
    ROWS = [
        ("H100", "llama2-70b", 8192.0, None, 2.0),  # ok
        ("H10", "llama2-70b", 8192.0, None, 2.0),  # unknown GPU
        ("H100", "lama2-70b", 8192.0, None, 2.0),  # unknown model
        ("H100", "llama2-70b", 8192.5, None, 2.0),  # context not a whole number
        ("H100", "llama2-70b", 2.0**25, None, 2.0),  # context too long
        ("H100", "llama2-70b", 8192.0, "mxfp4", 2.0),  # not a KV format
        ("H100", "Qwen2-7B", 8192.0, None, 8.0),  # vLLM refuses 8 GPUs for 28 heads
        ("H100", "llama2-70b", 8192.0, None, 1.0),  # weights do not fit on one GPU
        ("H100", "llama2-70b", 4_000_000.0, None, 8.0),  # one sequence does not fit (KV heads replicate past 8)
        ("H100", "llama2-70b", 4_000_000.0, None, None),  # no group of up to 64 holds it
        ("L4", "Qwen2-7B", 16_000_000.0, None, None),  # the largest group vLLM runs Qwen2-7B on is too small
        ("H10", "lama2-70b", 0.0, "mxfp4", 3.0),  # several failures: the first check's reason, as alone
        ("A100 SXM 80GB", "Qwen2-7B", 4096.0, "fp8", None),  # ok
    ]

    def _columns(self):
        return [[[row[k]] for row in self.ROWS] for k in range(5)]

    def test_each_reason_is_the_reason_of_the_cell_alone(self, monkeypatch):
        calls = []

        def counting(spec, kwargs, errors):
            calls.append(errors)
            return original(spec, kwargs, errors)

        original = xs._api_call
        bulk = xf.PLANNER_WHY("MAX_BATCH", *self._columns())
        monkeypatch.setattr(xs, "_api_call", counting)
        xf.PLANNER_WHY("MAX_BATCH", *self._columns())
        assert "raise" not in calls  # no cell was re-run alone
        monkeypatch.undo()
        alone = [xf.PLANNER_WHY("MAX_BATCH", *row) for row in self.ROWS]
        assert [r[0] for r in bulk] == alone
        assert alone[0] == OK_PAST_4K and "vLLM needs its 28 attention heads" in alone[6]
        assert alone[-1].startswith("ok: on 1 x A100 SXM 80GB, the smallest group")  # gpus empty: chosen
        assert "the smallest group that works is 2 x" in alone[7] and "no group of up to 64 works" in alone[8]
        assert "do not fit on up to 64 x" in alone[9] and "the largest group vLLM runs it on" in alone[10]

    def test_codes_and_classic_texts_are_those_of_the_cell_alone(self, monkeypatch):
        for runtime in ("python", "classic"):
            monkeypatch.setattr(xs, "RUNTIME", runtime)
            bulk = xf.MAX_BATCH(*self._columns())
            assert [r[0] for r in bulk] == [xf.MAX_BATCH(*row) for row in self.ROWS]

    def test_tpot_batch_that_does_not_fit_gives_its_reason_in_bulk(self):
        batches = [[1.0], [64.0], [1e6]]
        bulk = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, batches, None, 2.0)
        assert [r[0] for r in bulk] == [
            xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, b[0], None, 2.0) for b in batches
        ]
        assert bulk[0][0] == OK_PAST_4K and "1,000,000 sequences of 8,192 tokens" in bulk[2][0]


class TestPrefixHitArgument:
    """The under-load functions' last optional argument: the share of each prompt the prefix cache holds, as
    ``planner plan --prefix-hit-rate`` and a scenario's ``workload.prefix_hit_rate`` take it."""

    ARGS = ("H100", "llama3.1-8b", 10.0, 1000.0, 200.0, None, None, None, None, None, None)

    def test_the_cell_is_the_simulations_figure_and_a_cached_prompt_comes_sooner(self):
        from planner.serving.fleet import load_percentile

        cached = xf.TTFT_P50(*self.ARGS, 0.5)
        want = load_percentile(
            "H100", "llama3.1-8b", 10.0, 1000, 200, metric="ttft", percentile=50, prefix_hit_rate=0.5
        )
        assert cached == pytest.approx(want * 1e3, rel=1e-12)
        assert cached < xf.TTFT_P50(*self.ARGS) == xf.TTFT_P50(*self.ARGS, None)

    def test_a_share_outside_0_to_1_is_num_and_says_why(self):
        """A number out of range is #NUM! (docs/excel.md's table; it was #VALUE!, trial s195); text is #VALUE!."""
        assert xf.TTFT_P50(*self.ARGS, 1.5) == "#NUM!" and xf.TTFT_P50(*self.ARGS, 1.0) == "#NUM!"
        assert xf.TTFT_P50(*self.ARGS, "a quarter") == "#VALUE!"
        why = xf.PLANNER_WHY("TTFT_P50", *self.ARGS, 1.5)
        assert why == "prefix_hit_rate 1.5 is not a share of each prompt cached; use 0 or more and below 1, e.g. 0.25"


class TestFleetFunctions:
    """REPLICAS and CAPACITY_RPS: the fleet ``planner plan --rate`` sizes and the capacity every surface judges a rate
    by, in cells (planner.serving.fleet.replicas_needed / replica_capacity_per_s)."""

    ARGS = ("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, 4.0, "fp8")

    def test_replicas_is_the_fleet_plan_sizes_and_docs_excel_says_so(self):
        from cli_support import run
        from doc_support import stated

        got = xf.REPLICAS(*self.ARGS)
        plan = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8", "--gpus",
                   "4", "--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5",
                   "--tpot-target", "0.05")  # fmt: skip
        assert f"replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): {got} x 4 x H100 SXM 80GB" in plan.output
        said = stated("docs/excel.md", r'`=REPLICAS\("H100","llama3\.1-70b",60,800,400,1\.5,0\.05,,4,"fp8"\)` is (\d+)')
        assert said == (got,)

    def test_replicas_grow_with_the_rate_and_spill_a_row(self):
        row = xf.REPLICAS("H100", "llama3.1-70b", [[10.0, 20.0, 60.0]], 800.0, 400.0, 1.5, 0.05, None, 4.0, "fp8")
        assert len(row) == 1 and row[0] == sorted(row[0]) and row[0][0] < row[0][-1]

    def test_a_column_of_targets_gives_each_row_its_own_fleet(self):
        """Targets from a range, a row each (a scenario table's columns), are each row's: every row was #VALUE!
        ("ttft_target_s array([1.5]) is not a number ..."), the range handed to the simulation whole. A blank row
        is sized on capacity, a refused one says why in its own cell."""
        head = ("H100", "llama3.1-70b", 60.0, 800.0, 400.0)
        tail = (None, 4.0, "fp8")
        ttft, tpot = [[1.5], [None], [0.0]], [[0.05], [None], [0.05]]
        got = xf.REPLICAS(*head, ttft, tpot, *tail)
        assert got[:2] == [[xf.REPLICAS(*self.ARGS)], [xf.REPLICAS(*head, None, None, *tail)]]
        assert got[2] == ["#NUM!"]  # a number out of range
        why = xf.PLANNER_WHY("REPLICAS", *head, ttft, tpot, *tail)
        assert why[1][0].startswith("ok; no TTFT or TPOT target given, so sized on capacity")
        assert why[0] == [f"ok; {BEFORE_MARGIN_NOTE}"] and why[2] == [
            "ttft_target_s 0.0 is not a number of seconds above 0, e.g. 1.5; leave it blank for none"
        ]

    def test_capacity_is_the_simulations_and_bounds_the_rate_per_replica(self):
        from planner.serving.fleet import capacity_per_s
        from planner.serving.load import Replica

        got = xf.CAPACITY_RPS("H100", "llama3.1-70b", 800.0, 400.0, 4.0, "fp8")
        replica = Replica("H100", "llama3.1-70b", 4, weight_precision="fp8")
        assert got == pytest.approx(capacity_per_s(replica, 800.0, 400.0), rel=1e-12)
        assert 60.0 / xf.REPLICAS(*self.ARGS) < got  # a planned replica's share of the rate is below its capacity

    def test_refusals_say_why(self):
        bad = (*self.ARGS[:7], 97.0, *self.ARGS[8:])
        assert xf.REPLICAS(*bad) == "#NUM!"  # a number out of range, as LOADED_RANGE's percentile 96
        assert xf.PLANNER_WHY("REPLICAS", *bad) == "percentile 97.0 is not reported; use one of (50, 90, 95, 99)"
        hopeless = (*self.ARGS[:5], 0.001, *self.ARGS[6:])  # a 1 ms TTFT: out of reach, #NUM! as the README says
        assert xf.REPLICAS(*hopeless) == "#NUM!"
        assert xf.PLANNER_WHY("REPLICAS", *hopeless).startswith(  # trial 15 F6: the idle replica's miss first
            "p95 TTFT target 1 ms is below one request's own TTFT on an idle replica ("
        )


class TestReplicasWithoutTargets:
    """REPLICAS with both targets blank sizes the fleet on capacity: the fewest replicas each taking less than one
    replica's capacity, CAPACITY_RPS (docs/excel.md: the capacity "which REPLICAS never plans beyond";
    ``planner.serving.fleet.fewest_replicas``). It was 1 at any rate: one replica whose queue grows without bound,
    beside a TTFT_P95 of #NUM! at that rate."""

    ARGS = ("H100", "llama3.1-70b", 600.0, 800.0, 400.0)  # the report's cell: Llama 3.1 70B on 2 x H100 (bf16)

    def test_the_fleet_is_the_fewest_replicas_each_below_capacity(self):
        """CAPACITY_RPS of this replica is 0.722 requests/s (0.72194), so 600 requests/s take floor(600 / 0.72194) + 1
        = 832 replicas, each at 0.72115 (below it) where 831 would take 0.72202 each (at or past it)."""
        capacity = xf.CAPACITY_RPS("H100", "llama3.1-70b", 800.0, 400.0)
        got = xf.REPLICAS(*self.ARGS)
        assert got == math.floor(600.0 / capacity) + 1 == 832
        assert 600.0 / got < capacity <= 600.0 / (got - 1)
        assert xf.REPLICAS(*self.ARGS, None, "") == got  # blank cells, omitted or empty text, alike
        # a planned replica's share is one every surface computes: TTFT_P95 there is a figure, at the whole rate #NUM!
        assert isinstance(xf.TTFT_P95("H100", "llama3.1-70b", 600.0 / got, 800.0, 400.0), float)
        assert xf.TTFT_P95(*self.ARGS) == "#NUM!"

    def test_docs_excel_states_the_cells_figures(self):
        from doc_support import stated

        said = stated(
            "docs/excel.md",
            r'`=REPLICAS\("H100","llama3\.1-70b",600,800,400\)` is (\d+) beside a `CAPACITY_RPS` of ([\d.]+)',
        )
        assert said == (xf.REPLICAS(*self.ARGS), f"{xf.CAPACITY_RPS('H100', 'llama3.1-70b', 800.0, 400.0):.3f}")

    def test_planner_why_says_it_was_sized_on_capacity_because_no_targets_were_given(self):
        why = xf.PLANNER_WHY("REPLICAS", *self.ARGS)
        assert (
            why.startswith("ok: a replica on 2 x H100 SXM 80GB")
            and (
                "; no TTFT or TPOT target given, so sized on capacity: the fewest replicas each taking less than one "
                "replica's capacity (CAPACITY_RPS); 4 GPUs a replica need fewer GPUs in all"
            )
            in why
        )  # the chosen group first (gpus left empty), how the fleet was sized, then a group needing fewer GPUs
        targeted = xf.PLANNER_WHY("REPLICAS", *self.ARGS, 1.5)
        assert targeted.startswith("ok") and "so sized on capacity" not in targeted  # a target given: sized on it
        # a range: the note in every cell it holds for
        rows = xf.PLANNER_WHY("REPLICAS", "H100", "llama3.1-70b", [[600.0], [6.0]], 800.0, 400.0)
        assert rows[0] == [why]
        # at 6 requests/s: 9 x 2 GPUs against 1 x 4 (each row's own larger group)
        assert rows[1][0].split("; 4 GPUs a replica")[0] == why.split("; 4 GPUs a replica")[0]
        assert rows[1][0].endswith(f"{xf.REPLICAS('H100', 'llama3.1-70b', 6.0, 800.0, 400.0)} x 2 = 18 (give gpus 4; "
                                   f"planner plan --rate without --gpus chooses it); {BEFORE_MARGIN_NOTE}")  # fmt: skip

    def test_a_row_of_rates_grows_with_the_rate(self):
        capacity = xf.CAPACITY_RPS("H100", "llama3.1-70b", 800.0, 400.0)
        row = xf.REPLICAS("H100", "llama3.1-70b", [[0.5, 6.0, 600.0]], 800.0, 400.0)
        assert row == [[math.floor(r / capacity) + 1 for r in (0.5, 6.0, 600.0)]] == [[1, 9, 832]]

    def test_plan_sizes_the_same_fleet_and_says_it_sized_on_capacity(self):
        from cli_support import run

        # --gpus 2: REPLICAS' group (without it plan tries 2, 4 and 8: tests/test_fleet_group_choice.py)
        plan = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "--rate", "600",
                   "--prompt-tokens", "800", "--output-tokens", "400", "--gpus", "2")  # fmt: skip
        assert plan.exit_code == 0, plan.output
        assert (
            "replicas (no targets given: sized on capacity, each below one replica's 0.722 requests/s): "
            f"{xf.REPLICAS(*self.ARGS)} x 2 x H100 SXM 80GB" in plan.output
        )
        assert "give --ttft-target and --tpot-target to size on latency" in plan.output


class TestOneOutputToken:
    """Requests of one output token (a classifier's, a scorer's) have no TPOT: no token comes after the first (the
    simulation's TPOT is NaN). REPLICAS sizes such a fleet on TTFT (and capacity) alone and refuses a TPOT target,
    which has nothing to hold; TPOT_P* are #NUM! saying so. REPLICAS was #NUM! ("TPOT nan ms (no target)") and
    TPOT_P50 "has no finite value"."""

    LLAMA = ("H100", "llama3.1-70b")
    FP8 = (None, 4.0, "fp8")  # percentile (blank: 95), gpus, weight precision: 4 x H100, fp8 weights

    def test_replicas_is_sized_on_ttft_alone(self):
        """The report's cell: 2 requests/s of 800 / 1 tokens, p95 TTFT within 1.5 s: one replica (its TTFT_P95 at
        the whole rate is ~0.09 s)."""
        got = xf.REPLICAS(*self.LLAMA, 2.0, 800.0, 1.0, 1.5, None, None, 4.0)
        assert got == 1 and xf.TTFT_P95(*self.LLAMA, 2.0, 800.0, 1.0, 4.0) < 1500.0
        why = xf.PLANNER_WHY("REPLICAS", *self.LLAMA, 2.0, 800.0, 1.0, 1.5, None, None, 4.0)
        assert why == (
            "ok; sized on TTFT alone: one output token has no time per output token after the first; "
            + BEFORE_MARGIN_NOTE  # trial 30 F4: a fleet, not a budget
        )

    def test_the_fewest_replicas_meeting_the_ttft_target(self):
        """60 requests/s, p95 TTFT within 0.3 s on 4 x H100 fp8: TTFT_P95 is 268 ms at 60 / 6 requests/s each and
        352 ms at 60 / 5, so 6 replicas."""
        got = xf.REPLICAS(*self.LLAMA, 60.0, 800.0, 1.0, 0.3, None, *self.FP8)
        assert got == 6
        assert xf.TTFT_P95(*self.LLAMA, 60.0 / got, 800.0, 1.0, 4.0, "fp8") <= 300.0
        assert xf.TTFT_P95(*self.LLAMA, 60.0 / (got - 1), 800.0, 1.0, 4.0, "fp8") > 300.0

    def test_without_targets_it_is_sized_on_capacity(self):
        capacity = xf.CAPACITY_RPS(*self.LLAMA, 800.0, 1.0, 4.0, "fp8")
        assert xf.REPLICAS(*self.LLAMA, 60.0, 800.0, 1.0, None, None, *self.FP8) == math.floor(60.0 / capacity) + 1

    def test_in_a_range_the_note_is_on_the_one_token_rows(self):
        why = xf.PLANNER_WHY("REPLICAS", *self.LLAMA, 2.0, 800.0, [[1.0], [400.0]], 1.5, None, None, 4.0)
        assert why == [
            [
                f"ok; sized on TTFT alone: one output token has no time per output token after the first; {BEFORE_MARGIN_NOTE}"
            ],
            [f"ok; {BEFORE_MARGIN_NOTE}"],
        ]

    def test_a_tpot_target_is_refused_saying_why(self):
        args = (*self.LLAMA, 2.0, 800.0, 1.0, 1.5, 0.05, None, 4.0)
        assert xf.REPLICAS(*args) == "#NUM!"
        assert xf.PLANNER_WHY("REPLICAS", *args) == (
            "a TPOT target has nothing to hold: one output token has no time per output token after the first; "
            "leave the TPOT target out to size the fleet on TTFT alone, or give output_tokens of 2 or more"
        )

    @pytest.mark.parametrize("name", ["TPOT_P50", "TPOT_P95", "TPOT_P99"])
    @pytest.mark.parametrize("output", [1.0, 1.4])  # 1.4 is sent as 1 whole token (fixed_length_tokens)
    def test_tpot_percentiles_are_num_saying_why(self, name, output):
        assert getattr(xf, name)(*self.LLAMA, 2.0, 800.0, output) == "#NUM!"
        why = xf.PLANNER_WHY(name, *self.LLAMA, 2.0, 800.0, output)
        assert why == "one output token has no time per output token after the first; give output_tokens of 2 or more"
        assert isinstance(getattr(xf, name)(*self.LLAMA, 2.0, 800.0, 2.0), float)  # two: one token after the first

    def test_ttft_percentiles_still_have_a_figure(self):
        assert isinstance(xf.TTFT_P95(*self.LLAMA, 2.0, 800.0, 1.0), float)

    def test_a_range_refuses_only_the_one_token_rows(self):
        got = xf.TPOT_P50(*self.LLAMA, 2.0, 800.0, [[1.0], [400.0]], 4.0)
        assert got[0] == ["#NUM!"] and isinstance(got[1][0], float)
        why = xf.PLANNER_WHY("TPOT_P50", *self.LLAMA, 2.0, 800.0, [[1.0], [400.0]], 4.0)
        assert why[0] == [
            "one output token has no time per output token after the first; give output_tokens of 2 or more"
        ]


class TestParallelismArgument:
    """The last optional argument of every deployment function: how the group splits a MoE model (``"tp"``,
    ``"tp-ep"``, ``"dp-ep"``), as ``planner plan --parallelism`` takes it; the cell is the core's figure."""

    DP = dict(kv_precision=None, gpus=8, weight_precision=None, parallelism="dp-ep")

    def test_the_cells_are_the_cores_figures_for_each_layout(self):
        for layout in ("tp", "dp-ep"):
            args = dict(gpus=8, parallelism=layout)
            got = xf.MAX_BATCH(cell("H200"), cell("deepseek-v3"), cell(2500.0), None, 8.0, None, None, layout)
            assert got == int(api.max_batch("H200", "deepseek-v3", 2500, **args))  # one cell in: one value out
            got = xf.TPOT("H200", "deepseek-v3", 2500.0, 240.0, None, 8.0, None, layout)
            assert got == pytest.approx(api.tpot("H200", "deepseek-v3", 2500, batch=240, **args) * 1e3, rel=1e-12)
        # eight attention ranks each cache their own sequences once: five times the tensor-parallel batch
        assert xf.MAX_BATCH("H200", "deepseek-v3", 2500.0, None, 8.0, None, None, "dp-ep") > 5 * xf.MAX_BATCH(
            "H200", "deepseek-v3", 2500.0, None, 8.0
        )

    def test_under_load_a_dp_replica_is_simulated_as_its_ranks(self):
        """docs/excel.md's example: DeepSeek-V3 on 8 x H200 at 10 requests/s of 2,000 / 500 tokens."""
        from doc_support import stated

        from planner.serving.fleet import load_percentile

        dp = xf.TTFT_P99("H200", "deepseek-v3", 10.0, 2000.0, 500.0, 8.0, None, None, None, None, "dp-ep")
        want = load_percentile("H200", "deepseek-v3", 10.0, 2000, 500, metric="ttft", percentile=99, **self.DP)
        assert dp == pytest.approx(want * 1e3, rel=1e-12)
        assert (
            xf.TTFT_P99("H200", "deepseek-v3", 10.0, 2000.0, 500.0, 8.0) == "#NUM!"
        )  # past tensor parallel's capacity
        said = stated("docs/excel.md", r'`=TTFT_P99\("H200","deepseek-v3",10,2000,500,8,,,,,"dp-ep"\)` is ([\d,]+) ms')
        assert said == (round(dp),)

    def test_a_layout_not_known_or_not_possible_says_why(self):
        assert xf.TPOT("H200", "deepseek-v3", 2500.0, 256.0, None, 8.0, None, "xx") == "#NUM!"
        why = xf.PLANNER_WHY("TPOT", "H200", "deepseek-v3", 2500.0, 256.0, None, 8.0, None, "xx")
        assert "is not one of tp, tp-ep, dp-ep" in why
        assert xf.TPOT("H200", "llama2-70b", 2500.0, 16.0, None, 8.0, None, "dp-ep") == "#NUM!"
        why = xf.PLANNER_WHY("TPOT", "H200", "llama2-70b", 2500.0, 16.0, None, 8.0, None, "dp-ep")
        assert "Llama-2-70B has no experts to spread" in why


class TestChosenGroup:
    """A function whose ``gpus`` is left empty runs on the group it chooses: the smallest valid group of 1, 2, 4, 8 ...
    holding the weights and the batch (docs/excel.md; ``planner.deploy.choose_gpus``, the figure MIN_GPUS gives).
    TPOT("H100","llama2-70b",8192,batch) was 29.8, 30.3, 30.7 ms at batch 1-3, then 18.5 at 4 and 21.4 at 64: 2, 4, then
    8 GPUs chosen behind the scenes, and =PLANNER_WHY said only "ok". It now names the group it chose."""

    #: Each function that takes an optional gpus: its arguments (Llama 3.1 70B on H100s: 2 GPUs at one sequence, 4 at
    #: 8 of 4,096 tokens) and the position of gpus among them.
    CALLS = {
        "MAX_BATCH": (("H100", "llama3.1-70b", 4096.0, None, None), 4),
        **{
            name: (("H100", "llama3.1-70b", 4096.0, 8.0, None, None), 5)
            for name in ("TPOT", "THROUGHPUT", "MFU", "MBU", "DECODE_INTENSITY")
        },
        "TTFT": (("H100", "llama3.1-70b", 2048.0, None), 3),
        "COST_PER_MTOK": (("H100", "llama3.1-70b", 4096.0, 8.0, None, None, None), 6),
        **{
            f"{q}_P{p}": (("H100", "llama3.1-70b", 0.5, 800.0, 400.0, None), 5)
            for q in ("TTFT", "TPOT")
            for p in (50, 95, 99)
        },
        "REPLICAS": (("H100", "llama3.1-70b", 4.0, 800.0, 400.0, None, None, None, None), 8),
        "CAPACITY_RPS": (("H100", "llama3.1-70b", 800.0, 400.0, None), 4),
    }

    def test_every_function_with_an_optional_gpus_is_covered(self):
        assert set(self.CALLS) == {name for name, spec in xs.SPECS.items() if xs.chooses_group(spec)}

    def test_the_users_tpot_cells_name_the_group_each_ran_on(self):
        """Batch 4 reads as the issue asked; each batch's group is MIN_GPUS's for that batch (2, 2, 2, 4, 8), and
        giving it as gpus gives the same TPOT: the number is unchanged, only now explained."""
        said = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, 4.0)
        assert said.startswith(
            "ok: on 4 x H100 SXM 80GB, the smallest group that holds the weights and 4 sequences of 8,192 tokens "
            "(give gpus to fix it); warning: context 8,192 exceeds"
        ), said
        for batch, group in ((1.0, 2), (2.0, 2), (3.0, 2), (4.0, 4), (64.0, 8)):
            said = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, batch)
            assert said.startswith(f"ok: on {group} x H100 SXM 80GB,"), (batch, said)
            assert xf.MIN_GPUS("H100", "llama2-70b", 8192.0, batch) == group
            tpot = xf.TPOT("H100", "llama2-70b", 8192.0, batch)
            assert tpot == xf.TPOT("H100", "llama2-70b", 8192.0, batch, None, float(group))

    def test_docs_excel_shows_the_reason_and_the_groups_as_the_functions_give_them(self):
        """docs/excel.md's PLANNER_WHY row quotes the batch-4 reason and the batches each group takes."""
        from doc_support import stated

        (quoted,) = stated("docs/excel.md", r'`=PLANNER_WHY\("TPOT","H100","llama2-70b",8192,4\)` starts `([^`]+)`')
        assert xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, 4.0).startswith(quoted)
        pattern = (
            r"batch 1 to (\d+) run on (\d+) GPUs, (\d+) to (\d+) on (\d+), (\d+) and more on (\d+), so TPOT drops from "
            r"([\d.]+) ms at batch (\d+) to ([\d.]+) at (\d+)"
        )
        last2, g2, first4, last4, g4, first8, g8, before, b_before, after, b_after = stated("docs/excel.md", pattern)
        groups = {b: xf.MIN_GPUS("H100", "llama2-70b", 8192.0, float(b)) for b in (1, last2, first4, last4, first8)}
        assert groups == {1: g2, last2: g2, first4: g4, last4: g4, first8: g8} and (g2, g4, g8) == (2, 4, 8)
        assert first4 == last2 + 1 and first8 == last4 + 1
        assert f"{xf.TPOT('H100', 'llama2-70b', 8192.0, float(b_before)):.1f}" == before
        assert f"{xf.TPOT('H100', 'llama2-70b', 8192.0, float(b_after)):.1f}" == after

    @pytest.mark.parametrize("name", sorted(CALLS))
    def test_the_named_group_is_the_one_the_number_was_computed_on(self, name):
        """For every such function: the reason names a group, and the cell given that group as gpus has the same
        number. Under load the group is a replica's, holding one request of prompt + output tokens."""
        args, at = self.CALLS[name]
        said = xf.PLANNER_WHY(name, *args)
        m = re.fullmatch(
            r"ok: (a replica on|on) (\d+) x H100 SXM 80GB, the smallest group that holds the weights and "
            r"(\d+) sequences? of ([\d,]+|800 \+ 400) tokens \(give gpus to fix it\)(; .*)?",
            said,
        )
        assert m, said
        assert (m[1] == "a replica on") == (m[4] == "800 + 400")
        group = int(m[2])
        given = list(args)
        given[at] = float(group)
        fn = getattr(xf, name)
        assert fn(*given) == pytest.approx(fn(*args), rel=1e-12)
        # a given group is not named, nor a larger one needing fewer GPUs (REPLICAS); other notes stay
        rest = re.sub(r"; \d+ GPUs a replica need fewer GPUs in all: .*?without --gpus chooses it\)", "", m[5] or "")
        assert xf.PLANNER_WHY(name, *given) == "ok" + rest

    def test_a_range_names_each_rows_group_and_not_a_given_one(self):
        """One call over rows: each row's reason is the reason of the row alone (a chosen group named, a given one
        not), and the cells' numbers are unchanged."""
        batches = [[1.0], [4.0], [64.0], [4.0]]
        gpus = [[None], [None], [None], [8.0]]
        bulk = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, batches, None, gpus)
        alone = [
            xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, b[0], None, g[0])
            for b, g in zip(batches, gpus, strict=True)
        ]
        assert [r[0] for r in bulk] == alone
        assert [r.split(",")[0] for r in alone[:3]] == [f"ok: on {n} x H100 SXM 80GB" for n in (2, 4, 8)]
        assert alone[3] == OK_PAST_4K
        assert [r[0] for r in xf.TPOT("H100", "llama2-70b", 8192.0, batches, None, gpus)] == [
            xf.TPOT("H100", "llama2-70b", 8192.0, b[0], None, g[0]) for b, g in zip(batches, gpus, strict=True)
        ]


class TestOneErrorCodePerKindOfMistake:
    """docs/excel.md: #NUM! is "a number out of range", #VALUE! "the wrong kind of argument". A trial (s195) found
    the same kind of mistake under both: a percentile of 97 was #VALUE! in REPLICAS and 96 #NUM! in LOADED_RANGE;
    acceptance_length 5 with 3 draft tokens, a fractional speculative_tokens, a prefix share of 1 and a negative
    target were #VALUE! where a negative rate or a memory_utilization of 90 is #NUM!."""

    LOAD = ("H100", "llama3.1-8b", 1.0, 800.0, 400.0, None, None, None)

    @pytest.mark.parametrize(
        ("call", "args"),
        [
            ("REPLICAS", ("H100", "llama3.1-8b", 10.0, 800.0, 400.0, 1.5, 0.05, 97.0)),
            ("LOADED_RANGE", ("TTFT", 96.0, "high")),
            ("TTFT_P95", (*LOAD, 3.0, 5.0)),  # accepts at most 3 + 1 tokens a step
            ("TTFT_P95", (*LOAD, 2.5, 3.0)),  # draft tokens are whole
            ("TTFT_P95", (*LOAD, None, None, None, 1.0)),  # a prompt all cached
            ("REPLICAS", ("H100", "llama3.1-8b", 10.0, 800.0, 400.0, -1.0, None)),
            ("REPLICAS", ("H100", "llama3.1-8b", 10.0, 800.0, 400.0, None, -1.0)),
            ("REPLICAS", ("H100", "llama3.1-8b", -5.0, 800.0, 400.0, 1.5, 0.05)),
        ],
    )
    def test_a_number_out_of_range_is_num(self, call, args):
        assert getattr(xf, call)(*args) == "#NUM!", xf.PLANNER_WHY(call, *args)

    def test_text_where_a_number_belongs_is_value(self):
        # "p95" and "95%" are a percentile as a scenario's high_percentile reads them (trial 30 F16); words are not
        assert xf.REPLICAS("H100", "llama3.1-8b", 10.0, 800.0, 400.0, 1.5, 0.05, "ninety-five") == "#VALUE!"
        assert xf.TTFT_P95(*self.LOAD, None, None, None, "half") == "#VALUE!"


class TestReasonsReadRight:
    def test_ridge_says_which_math_it_is_where_not_the_precisions_own(self):
        """A T4 has no bf16 tensor cores (catalogs/gpus.toml: fp16 65 TFLOPS / 320 GB/s = 203.125 FLOP/B): RIDGE
        gives its fp16 ridge and says so; int4 is weight-only, its math 16-bit (295.3 on H100, bf16's)."""
        assert xf.RIDGE("T4", "bf16") == pytest.approx(203.125)
        assert xf.PLANNER_WHY("RIDGE", "T4", "bf16") == (
            "ok; T4 has no bf16 tensor cores: this is the ridge of its fp16 math"
        )
        assert xf.RIDGE("H100", "int4") == pytest.approx(xf.RIDGE("H100", "bf16"))
        assert "int4 is a weight-only format: the matrix math runs in fp16" in xf.PLANNER_WHY("RIDGE", "H100", "int4")
        assert xf.PLANNER_WHY("RIDGE", "H100", "bf16") == "ok"

    def test_one_token_is_singular(self):
        why = xf.PLANNER_WHY("TTFT", "H100", "llama2-70b", 1)
        assert "holds the weights and 1 sequence of 1 token (give gpus" in why

    @pytest.mark.parametrize("name", ["PLANNER_VERSION", "PLANNER_RELOAD", "PLANNER_WHY", "PLANNER_GPUS"])
    def test_why_of_a_function_without_error_values_is_not_unknown(self, name):
        assert xf.PLANNER_WHY(name) == f"{name} shows no error value; its cell says what it did"


class TestEngineArgument:
    """The last optional argument of every function whose figure depends on the engine: read as ``planner plan
    --engine`` reads it (``planner.engines.profiles.engine_profile``: a profile or a release, any case); blank is vLLM,
    the figures the functions gave before they took an engine. A bad engine, or one that does not run on the GPU, gives
    the error value and ``PLANNER_WHY`` the CLI's own reason."""

    #: The functions that take an engine (docs/excel.md, "Choosing the engine"); the others take none.
    TAKES_ENGINE = {
        "MAX_BATCH", "MIN_GPUS", "TPOT", "TTFT", "THROUGHPUT", "COST_PER_MTOK", "MFU", "MBU", "DECODE_INTENSITY",
        "TTFT_P50", "TTFT_P95", "TTFT_P99", "TPOT_P50", "TPOT_P95", "TPOT_P99", "REPLICAS", "FLEET_GPUS",
        "CAPACITY_RPS",
    }  # fmt: skip
    #: plan's deployment: Llama 3.1 8B on one H100 at 1,024 tokens, a batch of 64 (given, so plan times that batch)
    PLAN = ("--gpu", "H100", "--model", "llama3.1-8b", "--context", "1024", "--gpus", "1", "--batch", "64")

    @staticmethod
    def plan_json(*args: str) -> dict:
        import json

        from cli_support import run

        result = run("plan", *args, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def test_every_engine_dependent_function_takes_engine_last(self):
        """The argument comes after the existing optional ones, so formulas written before it keep working; xlwings
        registers it from the signature with the Spec's help (``_udf``). The percentile functions' speculative_method
        came after it, last in turn (tests/test_speculative_memory.py), the load functions' burstiness after that
        (tests/test_trial10_excel.py), and REPLICAS' and FLEET_GPUS' routing after burstiness
        (tests/test_routing_surfaces.py), the percentile functions' replicas and routing after burstiness
        (tests/test_trial24_excel_fleet_burstiness.py), and the lengths' spread after those
        (tests/test_excel_high_lengths.py)."""
        for name in xf.__all__:
            params = list(inspect.signature(getattr(xf, name)).parameters)
            assert ("engine" in params) == (name in self.TAKES_ENGINE), name
            if name in self.TAKES_ENGINE:
                later = (
                    "speculative_method",
                    "burstiness",
                    "replicas",
                    "routing",
                    "prompt_tokens_high",
                    "output_tokens_high",
                    "length_percentile",
                    "context",
                )
                later = [p for p in later if p in params[params.index("engine") :]]  # MAX_BATCH's context is first
                assert params[len(params) - 1 - len(later) :] == ["engine", *later], name
                assert [p.name for p in xs.SPECS[name].params][len(params) - 1 - len(later)] == "engine", name
                assert inspect.signature(getattr(xf, name)).parameters["engine"].default is None, name

    def test_sglang_cells_are_plans_figures_for_sglang(self):
        """TPOT, TTFT, MAX_BATCH, MIN_GPUS, THROUGHPUT, MFU, MBU and COST_PER_MTOK with engine "sglang" are what
        ``planner plan --engine sglang`` prints for the same deployment (its --json), and not vLLM's."""
        for engine in ("sglang", "vllm"):
            plan = self.plan_json(*self.PLAN, "--engine", engine)
            head, deploy = ("H100", "llama3.1-8b", 1024.0), (64.0, None, 1.0, None, None, engine)
            assert xf.TPOT(*head, *deploy) == pytest.approx(plan["tpot_s"] * 1e3, rel=1e-12)
            assert xf.TTFT(*head, 1.0, None, None, None, engine) == pytest.approx(plan["ttft_s"] * 1e3, rel=1e-12)
            assert xf.THROUGHPUT(*head, *deploy) == pytest.approx(plan["throughput_tokens_per_s"], rel=1e-12)
            assert xf.MFU(*head, *deploy) == pytest.approx(plan["mfu"], rel=1e-12)
            assert xf.MBU(*head, *deploy) == pytest.approx(plan["mbu"], rel=1e-12)
            cost = xf.COST_PER_MTOK(*head, 64.0, None, None, 1.0, None, None, engine)
            assert cost == pytest.approx(plan["cost_per_million_output_tokens_usd"], rel=1e-12)
            assert xf.MAX_BATCH(*head, None, 1.0, None, None, None, engine) == plan["memory_max_batch"]
        sglang = xf.TPOT("H100", "llama3.1-8b", 1024.0, 64.0, None, 1.0, None, None, "sglang")
        assert sglang != xf.TPOT("H100", "llama3.1-8b", 1024.0, 64.0, None, 1.0)  # the engine changes the figure
        assert xf.MAX_BATCH("H100", "llama3.1-8b", 1024.0, None, 1.0, None, None, None, "sglang") != xf.MAX_BATCH(
            "H100", "llama3.1-8b", 1024.0, None, 1.0
        )

    def test_min_gpus_follows_the_engines_memory_rules(self):
        """TensorRT-LLM's budget (a share of the memory left after the weights) holds 64 sequences of Llama 2 70B at
        8,192 tokens on 4 H100s where vLLM's needs 8: the cell is ``planner.api.min_gpus`` with the same engine."""
        for engine in ("vllm", "tensorrt-llm"):
            got = xf.MIN_GPUS("H100", "llama2-70b", 8192.0, 64.0, None, None, None, None, engine)
            assert got == api.min_gpus("H100", "llama2-70b", 8192, batch=64, engine=engine)
        assert xf.MIN_GPUS("H100", "llama2-70b", 8192.0, 64.0, None, None, None, None, "tensorrt-llm") < xf.MIN_GPUS(
            "H100", "llama2-70b", 8192.0, 64.0
        )

    def test_replicas_with_sglang_is_the_fleet_plan_sizes_with_sglang(self):
        """REPLICAS on SGLang is the fleet ``planner plan --rate --engine sglang`` sizes (TestFleetFunctions' vLLM
        example: 7 replicas of 4 x H100 there)."""
        from cli_support import run

        args = ("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, 4.0, "fp8", None, None, None)
        got = xf.REPLICAS(*args, "sglang")
        plan = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8", "--gpus",
                   "4", "--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5",
                   "--tpot-target", "0.05", "--engine", "sglang")  # fmt: skip
        assert f"replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): {got} x 4 x H100 SXM 80GB" in plan.output
        assert got != xf.REPLICAS(*args)  # SGLang's replica is not vLLM's

    def test_under_load_the_cells_are_the_simulations_on_the_engine(self):
        """TTFT_P95 and CAPACITY_RPS with an engine are ``planner.serving.fleet``'s with ``engine=``, the replica
        ``planner plan --rate --engine`` simulates."""
        from planner.serving.fleet import load_percentile, replica_capacity_per_s

        kw = dict(gpus=1, engine="sglang")
        got = xf.TTFT_P95("H100", "llama3.1-8b", 4.0, 800.0, 200.0, 1.0, None, None, None, None, None, None, "sglang")
        want = load_percentile("H100", "llama3.1-8b", 4.0, 800, 200, metric="ttft", percentile=95, **kw)
        assert got == pytest.approx(want * 1e3, rel=1e-12)
        cap = xf.CAPACITY_RPS("H100", "llama3.1-8b", 800.0, 200.0, 1.0, None, None, None, None, "sglang")
        assert cap == pytest.approx(replica_capacity_per_s("H100", "llama3.1-8b", 800, 200, **kw), rel=1e-12)

    @pytest.mark.parametrize(
        ("name", "args"),
        [
            ("TPOT", ("H100", "llama2-70b", 8192.0, 8.0, None, 4.0, None, None)),
            ("TTFT", ("H100", "llama2-70b", 2048.0, 4.0, None, None, None)),
            ("MAX_BATCH", ("H100", "llama2-70b", 8192.0, None, 4.0, None, None, None)),
            ("MIN_GPUS", ("H100", "llama2-70b", 8192.0, 16.0, None, None, None, None)),
            ("COST_PER_MTOK", ("H100", "llama2-70b", 8192.0, 8.0, None, None, None, None, None)),
            ("DECODE_INTENSITY", ("H100", "llama2-70b", 8192.0, 8.0, None, None, None, None)),
            ("CAPACITY_RPS", ("H100", "llama3.1-8b", 800.0, 200.0, 1.0, None, None, None, None)),
        ],
    )
    def test_engine_left_out_or_blank_is_vllm(self, name, args):
        """Omitted, an empty cell, "" and "vllm" in any case and spacing give the same figure, to the last digit."""
        f = getattr(xf, name)
        left_out = f(*args)
        assert isinstance(left_out, (int, float)), xf.PLANNER_WHY(name, *args)
        for engine in (None, "", "   ", "vllm", " VLLM ", cell("vLLM")):
            assert f(*args, engine) == left_out, engine

    def test_an_unknown_engine_is_na_with_the_clis_reason(self):
        from cli_support import run

        args = ("H100", "llama2-70b", 8192.0, 8.0, None, 4.0, None, None, "sglng")
        assert xf.TPOT(*args) == "#N/A"
        why = xf.PLANNER_WHY("TPOT", *args)
        assert why.startswith("unknown engine 'sglng'; did you mean sglang")
        plan = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--engine", "sglng")
        assert plan.exit_code == 2 and why in plan.output
        assert xf.REPLICAS("H100", "llama3.1-8b", 4.0, 800.0, 200.0, *[None] * 8, "sglng") == "#N/A"
        assert xf.TTFT_P95("H100", "llama3.1-8b", 4.0, 800.0, 200.0, *[None] * 7, "sglng") == "#N/A"

    def test_a_release_is_read_as_plan_reads_it(self):
        """ "vllm==0.11.0" is that release's profile (``engine_profile``); a release that is no version number is
        #VALUE! with plan's reason; a number where the engine's name belongs is #VALUE!."""
        from planner.engines.profiles import engine_profile

        args = ("H100", "llama2-70b", 8192.0, 8.0, None, 4.0, None, None)
        want = api.tpot("H100", "llama2-70b", 8192, batch=8, gpus=4, engine=engine_profile("vllm==0.11.0"))
        assert xf.TPOT(*args, "VLLM==0.11.0") == pytest.approx(want * 1e3, rel=1e-12)
        assert xf.TPOT(*args, "vllm==abc") == "#VALUE!"
        assert xf.PLANNER_WHY("TPOT", *args, "vllm==abc") == (
            "engine 'vllm==abc': 'abc' is not a version number (e.g. vllm==0.11.0)"
        )
        assert xf.TPOT(*args, 3.0) == "#VALUE!"
        assert "engine must be an engine name" in xf.PLANNER_WHY("TPOT", *args, 3.0)

    def test_tensorrt_llm_on_an_amd_gpu_is_refused_with_the_clis_reason(self):
        """TensorRT-LLM runs on NVIDIA GPUs only (``planner.catalog.resolve.engine_vendor_refused``): on an MI300X every
        function refuses it, as ``planner plan --engine tensorrt-llm`` does; vLLM there has its figure."""
        from cli_support import run

        reason = "TensorRT-LLM (engine 'tensorrt-llm') runs on NVIDIA GPUs only; MI300X is AMD's: use engine vllm or "
        reason += "sglang there"
        args = ("MI300X", "llama2-70b", 8192.0, 8.0, None, 8.0, None, None)
        assert xf.TPOT(*args, "tensorrt-llm") == "#VALUE!"
        assert xf.PLANNER_WHY("TPOT", *args, "tensorrt-llm") == reason
        assert isinstance(xf.TPOT(*args, "sglang"), float) and isinstance(xf.TPOT(*args), float)
        assert xf.MAX_BATCH("MI300X", "llama2-70b", 8192.0, None, None, None, None, None, "TensorRT-LLM") == "#VALUE!"
        load = ("MI300X", "llama3.1-8b", 800.0, 200.0, 1.0, None, None, None, None, "tensorrt-llm")
        assert xf.CAPACITY_RPS(*load) == "#VALUE!"
        assert xf.PLANNER_WHY("CAPACITY_RPS", *load) == reason
        plan = run("plan", "--gpu", "MI300X", "--model", "llama2-70b", "--context", "8192", "--engine", "tensorrt-llm")
        assert plan.exit_code != 0 and reason in plan.output

    def test_a_range_of_engines_gives_each_cell_its_own(self):
        """A column of engines: each cell the figure of its engine alone, a bad one its own error (the API reads one
        engine per call: the rows run as one call per engine)."""
        engines = [["vllm"], ["sglang"], [None], ["sglng"], ["tensorrt-llm"], ["SGLang"]]
        head = ("H100", "llama2-70b", 8192.0, 8.0, None, 4.0, None, None)
        got = xf.TPOT(*head, engines)
        assert got == [[xf.TPOT(*head, e[0])] for e in engines]
        assert got[3] == ["#N/A"] and got[0] == got[2] and got[1] == got[5] and got[0] != got[1]
        mi300x = xf.TPOT("MI300X", *head[1:], engines)
        assert [r[0] for r in mi300x][3:5] == ["#N/A", "#VALUE!"]
        why = xf.PLANNER_WHY("TPOT", *head, engines)
        assert why[3][0].startswith("unknown engine 'sglng'") and why[1][0].startswith("ok")

    def test_a_range_of_layouts_gives_each_cell_its_own(self):
        """The same for parallelism, the other argument the API reads one of per call (it was #NUM! in every cell)."""
        layouts = [["tp"], ["dp-ep"], [None]]
        got = xf.TPOT("H200", "deepseek-v3", 2500.0, 240.0, None, 8.0, None, layouts, "sglang")
        assert got == [
            [xf.TPOT("H200", "deepseek-v3", 2500.0, 240.0, None, 8.0, None, p[0], "sglang")] for p in layouts
        ]

    def test_planner_why_names_the_engines_limit_and_group(self):
        """Beside MAX_BATCH, the engine whose max_num_seqs binds (``planner.api.engine_sequence_limit`` of that engine);
        without gpus, the group the engine's rules chose (``MIN_GPUS`` with the same engine)."""
        from planner.engines.profiles import engine_profile

        limit = api.engine_sequence_limit(engine_profile("lmdeploy"), default_catalog().gpu("H100"))
        args = ("H100", "llama3.1-8b", 1024.0, None, 1.0, None, None, None, "lmdeploy")
        held = xf.MAX_BATCH(*args)
        assert held > limit
        assert f"but lmdeploy runs at most {limit:,} at once on H100 SXM 80GB (its max_num_seqs)" in xf.PLANNER_WHY(
            "MAX_BATCH", *args
        )
        why = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", 8192.0, 64.0, None, None, None, None, "tensorrt-llm")
        group = xf.MIN_GPUS("H100", "llama2-70b", 8192.0, 64.0, None, None, None, None, "tensorrt-llm")
        assert why.startswith(f"ok: on {group} x H100 SXM 80GB, the smallest group")

    def test_decode_intensity_on_a_given_group_is_the_same_on_every_engine(self):
        """docs/excel.md: the engine decides which groups hold the batch and run the model, not the intensity of a
        step on a given group."""
        for name, gpus in (("llama2-70b", 8.0), ("deepseek-v3", 8.0), ("gpt-oss-120b", 2.0)):
            args = ("H200", name, 4096.0, 64.0, None, gpus, None, None)
            got = {e: xf.DECODE_INTENSITY(*args, e) for e in ("vllm", "sglang", "tensorrt-llm", "lmdeploy")}
            assert len(set(got.values())) == 1, got

    def test_docs_excel_states_the_engine_example_as_the_functions_give_it(self):
        """docs/excel.md's DeepSeek-V3 on 8 x GB200 at batch 279 (SGLang's max batch there at 4,096 tokens; 282 before
        trial 31 F11 counted the fused q_a + kv_a projection every tensor-parallel GPU holds whole) and
        4,096 tokens: TPOT on vLLM and on SGLang, each as the functions return it."""
        from doc_support import stated

        vllm_ms, sglang_ms = stated(
            "docs/excel.md",
            r'`=TPOT\("GB200","deepseek-v3",4096,279,,8\)` is ([\d.]+) ms \(vLLM\) and\s+'
            r'`=TPOT\("GB200","deepseek-v3",4096,279,,8,,,"sglang"\)` is ([\d.]+) ms',
        )
        args = ("GB200", "deepseek-v3", 4096.0, 279.0, None, 8.0)
        assert f"{xf.TPOT(*args):.1f}" == vllm_ms
        assert f"{xf.TPOT(*args, None, None, 'sglang'):.1f}" == sglang_ms
        assert xf.MAX_BATCH("GB200", "deepseek-v3", 4096.0, None, 8.0, None, None, None, "sglang") == 279
