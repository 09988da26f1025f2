"""The latency margin per GPU, engine and architecture class (planner.accuracy.serving_margin): held-out TPOT errors
of that engine's steady-load serving runs of dense or of MoE models on that GPU; with fewer than 5, the prediction
range made at least as wide as that engine and class's errors on every GPU and this GPU's few.

Figures from catalogs/reference/heldout_serving_residuals.csv (``PYTHONPATH=. python bench/heldout.py
--write-serving-residuals``, s171), the rows the tests read:

    gpu,engine,architecture,rows,residual_low,residual_median,residual_high,residual_smallest,residual_largest
    *,vllm,dense,17,-0.09,-0.03,0.35,-0.13,0.56
    A100 SXM 80GB,vllm,dense,2,-0.13,-0.11,-0.10,-0.13,-0.09
    H100 SXM 80GB,vllm,dense,7,-0.08,-0.06,-0.01,-0.08,0.03
    H200 SXM 141GB,vllm,MoE,11,0.26,0.87,1.46,0.20,1.61   (10 of them DeepSeek-R1 runs, 9 dstack's; s184)
    MI300X,vllm,dense,5,-0.04,0.24,0.54,-0.04,0.56

Until s171 the rows were per GPU and engine only, so H200 + vLLM's 11 figures (+20% / +135%) sized a dense
Llama-3.1-70B fleet on H200. The tests read the shipped rows and state the rule; the values above are checked once,
against the file, where a test depends on them.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from planner.accuracy import ranges
from planner.accuracy.calibration import residual_range
from planner.accuracy.ranges import TimeRange, moe_class
from planner.accuracy.serving_margin import (
    CLASSES,
    EVERY_GPU,
    KERNEL_LINES_ONLY,
    ServingRegion,
    load_serving,
    margin_pool,
    margin_range,
    of_kernel_line,
    serving_residual_table,
    serving_residuals_file,
    steady_load,
)
from planner.catalog import default_catalog

ROOT = Path(__file__).resolve().parents[1]


def shipped_row(gpu: str, engine: str, architecture: str) -> dict[str, str]:
    """One row of catalogs/reference/heldout_serving_residuals.csv, read as text (the rule's input)."""
    with open(ROOT / "catalogs" / "reference" / "heldout_serving_residuals.csv", encoding="utf-8") as f:
        return next(
            r for r in csv.DictReader(f) if (r["gpu"], r["engine"], r["architecture"]) == (gpu, engine, architecture)
        )


def quantiles(row: dict[str, str]) -> tuple[float, float]:
    return float(row["residual_low"]), float(row["residual_high"])


def llama_range(gpu: str, gpus: int = 4) -> TimeRange:
    """The prediction range of Llama-3.1-70B with vLLM (the README's budget review)."""
    return residual_range(gpu, "vllm", gpus=gpus, model="Llama-3.1-70B")


class TestClass:
    @pytest.mark.parametrize(
        "model,expected",
        [
            ("Llama-3.1-70B", "dense"),
            ("DeepSeek-R1", "MoE"),
            ("gpt-oss-120b", "MoE"),
            ("Nemotron-3-Nano-30B-A3B", "MoE"),
        ],
    )
    def test_a_model_with_routed_experts_is_moe(self, model, expected):
        """A catalog model with a [moe] table is MoE (Nemotron 3 Nano: a Mamba hybrid with MoE blocks), else dense."""
        assert moe_class(default_catalog().model(model)) == expected

    def test_an_unknown_class_is_refused_with_the_accepted_ones(self):
        """A class the margin does not keep ("MLA": no class of its own) is an error naming dense and MoE."""
        with pytest.raises(ValueError, match="'MLA' is not one of dense, MoE"):
            margin_range(llama_range("H100 SXM 80GB"), "H100 SXM 80GB", "vllm", "MLA")


class TestRule:
    def test_a_gpu_engine_and_class_with_enough_figures_take_their_own_percentiles(self):
        """H100 + vLLM, dense: 7 figures (-8% / -1%), not pooled with the 2 gpt-oss-120b MoE runs there; the note says
        which runs: "from 7 dense-model runs on H100 SXM 80GB + vLLM"."""
        row = shipped_row("H100 SXM 80GB", "vllm", "dense")
        assert (int(row["rows"]), quantiles(row)) == (7, (-0.08, -0.01))
        got = margin_range(llama_range("H100 SXM 80GB"), "H100 SXM 80GB", "vllm", "dense")
        assert got[:2] == quantiles(row)
        assert got.note.startswith("from 7 dense-model runs on H100 SXM 80GB + vLLM (held-out TPOT at steady load")

    def test_a_dense_model_is_not_sized_with_moe_runs_on_its_gpu(self):
        """H200 + vLLM has 11 MoE figures (+34% / +148%, 10 of them DeepSeek-R1) and no dense one: Llama-3.1-70B's
        range is H200's prediction range (-27% / +8%) widened to the 21 dense vLLM runs on every GPU (-12% / +25%; -13% /
        +25% before s189's asynchronous vLLM host loop), -27% / +25%; the MoE row's +148% appears nowhere. Until s171 it
        was +20% / +135%; until s181 (17 runs, before Vultr's four Nemotron-Super-49B runs) -37% / +35%; until s186 (a
        bf16 cache read at its own attention rate) -37% / +24%."""
        moe, pooled = shipped_row("H200 SXM 141GB", "vllm", "MoE"), shipped_row(EVERY_GPU, "vllm", "dense")
        assert quantiles(moe) == (0.34, 1.48) and (int(pooled["rows"]), quantiles(pooled)) == (21, (-0.12, 0.25))
        assert ("H200 SXM 141GB", "vllm", "dense") not in load_serving()
        prediction = llama_range("H200 SXM 141GB")
        got = margin_range(prediction, "H200 SXM 141GB", "vllm", "dense")
        assert got[:2] == (min(prediction.low, -0.13), max(prediction.high, 0.25)) == (-0.27, 0.25)
        assert "21 dense-model runs on any GPU + vLLM" in got.note and "none on H200 SXM 141GB" in got.note
        assert "+146%" not in got.note

    def test_a_moe_model_on_that_gpu_takes_the_moe_runs(self):
        """DeepSeek-R1 on H200 + vLLM: the 11 MoE figures' own 10th / 90th percentiles (+34% / +148%; +26% / +146% before
        s186's MLA latents at the 16-bit cache's attention rate; +20% / +135% before s184 read dstack's vLLM 0.7.4 runs as
        unchunked, their prompts no longer in the decodes' steps)."""
        row = shipped_row("H200 SXM 141GB", "vllm", "MoE")
        prediction = residual_range("H200 SXM 141GB", "vllm", gpus=8, model="DeepSeek-R1")
        got = margin_range(prediction, "H200 SXM 141GB", "vllm", "MoE")
        assert got[:2] == quantiles(row) == (0.34, 1.48)
        assert got.note.startswith("from 11 MoE-model runs on H200 SXM 141GB + vLLM")

    def test_few_figures_of_its_own_widen_the_range_as_the_pool_does(self):
        """A100 80GB + vLLM, dense: 2 figures (-13% to -9%), so A100's prediction range (-10% / +43%) is widened to the
        every-GPU dense row (-9% / +35%: high end kept) and to its own smallest, -13%."""
        own, pooled = shipped_row("A100 SXM 80GB", "vllm", "dense"), shipped_row(EVERY_GPU, "vllm", "dense")
        prediction = llama_range("A100 SXM 80GB", gpus=8)
        got = margin_range(prediction, "A100 SXM 80GB", "vllm", "dense")
        low = min(prediction.low, float(pooled["residual_low"]), float(own["residual_smallest"]))
        high = max(prediction.high, float(pooled["residual_high"]), float(own["residual_largest"]))
        assert got[:2] == (low, high) == (-0.13, prediction.high)
        assert "and of the 2 dense-model runs on A100 SXM 80GB + vLLM" in got.note
        assert margin_pool("A100 SXM 80GB", "vllm", "dense").kind == "every GPU and own few"

    def test_other_gpus_figures_never_narrow_the_prediction_range(self):
        """L40S (no serving figure): all GPUs' range widened, -24% / +39%, already wider than the dense vLLM runs on
        every GPU (-13% / +24%): it stands, and the note says it holds them."""
        prediction = llama_range("L40S", gpus=8)
        got = margin_range(prediction, "L40S", "vllm", "dense")
        assert got[:2] == prediction[:2] and got.widened == prediction.widened
        assert got.note.startswith(prediction.note) and "it already holds the errors of 21 dense-model runs" in got.note

    def test_few_figures_and_no_pool_keep_todays_rule(self):
        """Hand-made regions: 2 figures of its own (+20% to +87%) and 2 elsewhere (below 5 anywhere): the prediction
        range widened to its own two, the others unused."""
        prediction = TimeRange(-0.29, 0.44, "H100's held-out residuals")
        own = ServingRegion("H100 SXM 80GB", "vllm", "dense", 2, 0.27, 0.53, 0.80, 0.20, 0.87, "x")
        pooled = ServingRegion(EVERY_GPU, "vllm", "dense", 4, -0.5, 0.5, 2.0, -0.6, 3.0, "x y")
        regions = {("H100 SXM 80GB", "vllm", "dense"): own, (EVERY_GPU, "vllm", "dense"): pooled}
        assert margin_range(prediction, "H100 SXM 80GB", "vllm", "dense", regions)[:2] == (-0.29, 0.87)

    def test_another_classs_figures_never_set_a_margin(self):
        """Hand-made regions with MoE figures only (on this GPU and pooled): a dense query gets the prediction range."""
        prediction = TimeRange(-0.29, 0.44, "H100's held-out residuals")
        moe = ServingRegion("H100 SXM 80GB", "vllm", "MoE", 9, 0.5, 1.0, 2.0, 0.4, 3.0, "x")
        regions = {("H100 SXM 80GB", "vllm", "MoE"): moe, (EVERY_GPU, "vllm", "MoE"): moe}
        assert margin_range(prediction, "H100 SXM 80GB", "vllm", "dense", regions) is prediction

    @pytest.mark.parametrize("gpu,engine", [("L40S", "lmdeploy"), ("H100 SXM 80GB", "ideal")])
    def test_without_figures_of_the_engine_and_class_the_prediction_range_stands(self, gpu, engine):
        """No held-out serving figure of that engine and class on any GPU: the range is the prediction's, unchanged."""
        prediction = llama_range(gpu, gpus=8)
        assert margin_range(prediction, gpu, engine, "dense") is prediction

    def test_mi300x_is_sized_with_its_measured_error_not_all_gpus_range(self):
        """MI300X + vLLM, dense: 5 figures (Qwen2.5-72B, -3% / +55%) are the range, not the prediction's (all GPUs'
        range widened, then moved out x1.57 for H100's kernel curves standing in), and not its 10 MoE figures."""
        prediction = llama_range("MI300X", gpus=8)
        got = margin_range(prediction, "MI300X", "vllm-0.6", "dense")  # vLLM's profiles share its figures
        row = shipped_row("MI300X", "vllm", "dense")
        assert int(row["rows"]) == 5 and got[:2] == quantiles(row) == (-0.03, 0.55)
        assert "kernel curves of H100 SXM 80GB stand in on MI300X" in prediction.widened

    @pytest.mark.parametrize("engine", ["vllm", "sglang"])
    def test_mi300x_margin_says_its_curves_are_borrowed(self, engine):
        """MI300X's own MoE figures set its margin (14 SGLang, 10 vLLM runs), and its note says the kernel curves behind
        them are H100's (issue 21: a GPU without kernel tables says so); an NVIDIA GPU's note does not."""
        got = margin_range(residual_range("MI300X", engine, gpus=8), "MI300X", engine, "MoE")
        assert "kernel curves of H100 SXM 80GB stand in on MI300X (x1.57 either way" in got.note
        assert got.note.endswith("these runs' errors hold that miss, which is why the range is theirs")
        h100 = margin_range(llama_range("H100 SXM 80GB", gpus=8), "H100 SXM 80GB", "vllm", "dense")
        assert "kernel curves of" not in h100.note

    @pytest.mark.parametrize("profile", ["nim", "tensorrt-llm-0", "tensorrt-llm"])
    def test_a_release_profile_or_nim_finds_its_engines_figures(self, profile):
        """NIM serves prebuilt TensorRT-LLM engines (profiles.NIM_BACKEND = "tensorrt-llm-0"): its 9 H100 runs
        (nvidia-nim-benchmarking-llama3.3-70b) are TensorRT-LLM's dense figures, and a query by the NIM alias, the 0.x
        profile or the engine finds them (s153: the table's "nim" row was read by no query)."""
        from planner.engines.profiles import engine_profile

        eng = engine_profile(profile)
        prediction = residual_range("H100 SXM 80GB", eng, gpus=2, model="Llama-3.1-70B")
        row = shipped_row("H100 SXM 80GB", "tensorrt-llm", "dense")
        assert margin_range(prediction, "H100 SXM 80GB", eng.name, "dense")[:2] == quantiles(row)
        assert "nvidia-nim-benchmarking-llama3.3-70b" in row["sources"]

    def test_engine_families(self):
        """A release profile shares its engine's figures, an engine alias its engine's (the profiles' one alias
        table: NIM is its TensorRT-LLM backend); a name of no family stands as given."""
        from planner.accuracy.serving_margin import engine_name

        names = ("vllm-0.10", "sglang-0.5.3", "tensorrt-llm-0", "nim", "nvidia-nim", "trtllm", "turbomind", "ideal")
        assert [engine_name(n) for n in names] == [
            "vllm", "sglang", "tensorrt-llm", "tensorrt-llm", "tensorrt-llm", "tensorrt-llm", "lmdeploy", "ideal",
        ]  # fmt: skip

    def test_b200_takes_its_nemotron_serving_figures_by_class(self):
        """B200 + vLLM: 7 held-out MoE figures (Vultr's Nemotron 3 Nano runs, -13% / +16%; 6 at -41% / -7% before s189's
        asynchronous vLLM host loop, whose faster steps also make VUL-007's mean and median agree) size a MoE model there; a
        dense model on B200 has 4 of its own (Vultr's Nemotron-Super-49B runs at 1 to 32 in flight, fewer than 5) and
        takes the dense vLLM runs on every GPU widened to them."""
        moe = shipped_row("B200 180GB", "vllm", "MoE")
        got = margin_range(llama_range("B200 180GB", gpus=8), "B200 180GB", "vllm", "MoE")
        assert got[:2] == quantiles(moe) == (-0.13, 0.16)
        assert int(shipped_row("B200 180GB", "vllm", "dense")["rows"]) == 4
        assert margin_pool("B200 180GB", "vllm", "dense").kind == "every GPU and own few"

    def test_only_steady_load_runs_count(self):
        """A request rate, or clients keeping fewer requests in flight than they send; not every prompt at once,
        not a static batch."""
        assert steady_load("serving", 16, 500, None) and steady_load("serving", 0, 500, 4.0)
        assert not steady_load("serving", 500, 500, None) and not steady_load("static", 8, None, None)


def _row(tpot_s: float, source: str = "a", engine: str = "vllm", version: str = "0.11.0") -> SimpleNamespace:
    """A steady-load serving row (4 of 100 prompts in flight) predicted at 1 s a token."""
    return SimpleNamespace(
        tpot_s=tpot_s, kind="serving", batch=4, num_prompts=100, request_rate=None, engine=engine, source_group=source,
        engine_version=version,
    )  # fmt: skip


class TestTable:
    def test_rows_per_gpu_engine_and_class_and_per_engine_and_class_on_every_gpu(self):
        """Two dense figures on H100 (+10%, +20%), one on A100 (+30%), one MoE on H100 (+100%): four rows, the
        every-GPU dense row holding all three dense figures (median +20%), the MoE figure in no dense row."""
        rows = [_row(1.1), _row(1.2), _row(1.3, "b"), _row(2.0)]
        table = serving_residual_table(
            rows, [1.0] * 4, ["H100 SXM 80GB", "H100 SXM 80GB", "A100 SXM 80GB", "H100 SXM 80GB"],
            ["dense", "dense", "dense", "MoE"],
        )  # fmt: skip
        got = {(r["gpu"], r["architecture"]): (r["rows"], r["residual_median"], r["sources"]) for r in table}
        assert got == {
            (EVERY_GPU, "MoE"): ("1", "1.00", "a"),
            (EVERY_GPU, "dense"): ("3", "0.20", "a b"),
            ("A100 SXM 80GB", "dense"): ("1", "0.30", "b"),
            ("H100 SXM 80GB", "MoE"): ("1", "1.00", "a"),
            ("H100 SXM 80GB", "dense"): ("2", "0.15", "a"),
        }

    @pytest.mark.parametrize(
        "engine,version,line",
        [
            ("vllm", "0.7.4.dev181+gf35f8e22 (the README's vLLM)", False),  # V0, dstack's early-2025 runs
            ("vllm", "0.8.3", True),  # the first V1-by-default line
            ("sglang", "0.4.3.post2", False),
            ("sglang", "v0.5.7", True),
            ("tensorrt-llm", "0.17.post1.dev", False),
            ("tensorrt-llm", "v1.2.0rc1", True),
            ("NVIDIA NIM", "1.8.0", True),  # NIM's own version number, not its backend's
            ("sglang", "rocm/sgl-dev:upstream_20250312_v1", True),  # no version to read: not known to be older
        ],
    )
    def test_which_runs_are_of_the_kernel_tables_lines(self, engine, version, line):
        """``KERNEL_LINES``: the kernel tables measured SGLang 0.5, vLLM V1 and TensorRT-LLM 1.x releases
        (``bench/range_coverage.py`` splits the margin's coverage by it)."""
        assert of_kernel_line(engine, version) is line

    def test_every_release_counts_in_the_shipped_table(self):
        """s194's experiment (only today's lines) is off: dstack's vLLM 0.7.4 runs are in H200's MoE row."""
        rows = [_row(2.0, version="0.7.4")]
        assert serving_residual_table(rows, [1.0], ["H200 SXM 141GB"], ["MoE"]) and not KERNEL_LINES_ONLY
        assert "dstack-deepseek-r1-h200-mi300x" in shipped_row("H200 SXM 141GB", "vllm", "MoE")["sources"]

    def test_a_row_without_a_catalog_model_is_left_out_and_a_bad_class_refused(self):
        """A class of None (the catalog does not know the model) leaves the row out; any other name is an error."""
        assert serving_residual_table([_row(1.1)], [1.0], ["H100 SXM 80GB"], [None]) == []
        with pytest.raises(ValueError, match="'MLA' is not one of dense, MoE"):
            serving_residual_table([_row(1.1)], [1.0], ["H100 SXM 80GB"], ["MLA"])


class TestShippedFile:
    def test_every_region_names_a_catalog_gpu_a_class_and_its_sources(self):
        """Each row: a catalog GPU or every GPU, an engine, dense or MoE, 1 figure or more, low <= median <= high
        within smallest .. largest; each every-GPU row counts its GPUs' rows together."""
        cat = default_catalog()
        regions = load_serving()
        assert regions
        for (gpu, engine, arch), r in regions.items():
            assert (gpu == EVERY_GPU or cat.gpu(gpu).name == gpu) and engine and arch in CLASSES and r.sources
            assert r.rows >= 1 and r.smallest <= r.low <= r.median <= r.high <= r.largest
            if gpu == EVERY_GPU:
                per_gpu = [x.rows for (g, e, a), x in regions.items() if g != EVERY_GPU and (e, a) == (engine, arch)]
                assert r.rows == sum(per_gpu)

    def test_a_file_without_the_class_column_is_refused_by_name(self, tmp_path):
        """A file in the columns before s171 (no ``architecture``) is an error naming the missing column and the
        command that writes the file, not a KeyError."""
        old = tmp_path / "old.csv"
        old.write_text("gpu,engine,rows,residual_low,residual_median,residual_high,residual_smallest,residual_largest,"
                       "sources\nH100 SXM 80GB,vllm,9,-0.08,-0.06,0.04,-0.08,0.09,x\n")  # fmt: skip
        with pytest.raises(ValueError, match="no column architecture; the columns are gpu, engine, architecture"):
            load_serving(str(old))

    def test_the_columns_are_the_ones_the_writer_gives(self):
        """The shipped file's header is ``COLUMNS``."""
        from planner.accuracy.serving_margin import COLUMNS

        with open(serving_residuals_file(), encoding="utf-8") as f:
            assert tuple(next(csv.reader(f))) == COLUMNS

    def test_the_file_is_what_the_bench_script_writes(self, tmp_path, monkeypatch):
        """``bench/heldout.py --write-serving-residuals`` on the shipped held-out rows gives the shipped file."""
        sys.path.insert(0, str(ROOT / "bench"))
        import heldout

        from planner.accuracy import predict as acc
        from planner.accuracy import serving_margin
        from planner.accuracy.fit import FIT_SOURCE_GROUPS

        out = tmp_path / "serving.csv"
        monkeypatch.setattr(serving_margin, "serving_residuals_file", lambda: out)
        held = [r for r in acc.load_decode_rows() if r.source_group not in FIT_SOURCE_GROUPS]
        heldout.write_serving_residuals(held)
        with open(out, newline="") as a, open(serving_residuals_file(), newline="") as b:
            assert list(csv.DictReader(a)) == list(csv.DictReader(b))
        assert ranges.MIN_ROWS == 5 and not list(tmp_path.glob("*.part"))
