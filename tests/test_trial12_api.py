"""Trial 12 (a data scientist using planner as a notebook library): sweeps over every numeric option, errors that are
planner's own and name the argument, Series paired safely, one-scenario functions that say so, and the docs' figures.

Every expected value cites its source: the scalar call for the same point, the CLI's output, or a derivation."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner
from planner.errors import (
    DoesNotFitError,
    InvalidInputError,
    MissingDataError,
    PlannerError,
)

M = "llama3.1-70b"


class TestMemoryOptionsSweep:
    """F1: memory_utilization and reserve_bytes broadcast like batch and gpus."""

    def test_a_utilization_array_equals_the_scalar_calls(self):
        """Each element is the scalar call at that utilization (each on its own smallest group)."""
        utils = [0.8, 0.9, 0.95]
        got = planner.max_batch("H100", M, 8192, memory_utilization=np.array(utils))
        assert got.tolist() == [planner.max_batch("H100", M, 8192, memory_utilization=u) for u in utils]
        assert got.dtype == np.int64

    def test_a_reserve_array_equals_the_scalar_calls(self):
        """More bytes kept back: fewer sequences, each as its scalar call says."""
        reserves = [0.0, 2e9, 4e9]
        got = planner.max_batch("H100", M, 8192, gpus=4, reserve_bytes=np.array(reserves))
        want = [planner.max_batch("H100", M, 8192, gpus=4, reserve_bytes=r) for r in reserves]
        assert got.tolist() == want
        assert want[0] > want[1] > want[2]

    def test_a_utilization_series_under_coerce_is_a_series_of_the_scalar_calls(self):
        """A Series in gives a Series out, on its index; each value is the scalar call's."""
        s = pd.Series([0.8, 0.9], index=["a", "b"])
        got = planner.tpot("H100", M, 8192, memory_utilization=s, errors="coerce")
        assert isinstance(got, pd.Series) and list(got.index) == ["a", "b"]
        assert got.tolist() == [planner.tpot("H100", M, 8192, memory_utilization=u) for u in s]

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        utils=st.lists(st.sampled_from([0.6, 0.75, 0.85, 0.9, 0.95, 1.0]), min_size=1, max_size=4),
        ctx=st.sampled_from([1024, 8192, 32768]),
    )
    def test_law_array_call_is_the_scalar_calls_elementwise(self, utils, ctx):
        """max_batch and tpot over a utilization array equal the scalar calls point by point (coerce: NaN where the
        scalar call raises)."""

        def scalar(f, u):
            try:
                return f("H200", M, ctx, memory_utilization=u)
            except PlannerError:
                return math.nan

        for f in (planner.max_batch, planner.tpot):
            got = np.asarray(f("H200", M, ctx, memory_utilization=np.array(utils), errors="coerce"), dtype=float)
            want = np.array([scalar(f, u) for u in utils], dtype=float)
            np.testing.assert_array_equal(got, want)

    def test_check_fit_takes_one_value(self):
        with pytest.raises(InvalidInputError, match="check_fit takes one value per call"):
            planner.tpot("H100", M, 8192, check_fit=np.array([True, False]))


class TestErrorsOption:
    """F2: errors= takes "raise" or "coerce" and nothing else."""

    @pytest.mark.parametrize("bad", ["coerse", "ignore", None, "RAISE", 1])
    def test_any_other_value_is_refused_naming_the_two(self, bad):
        with pytest.raises(InvalidInputError, match=r'errors must be "raise" .* or "coerce"'):
            planner.max_batch("H100", M, 8192, gpus=1, errors=bad)

    @pytest.mark.parametrize("f", [planner.ridge, planner.weight_bytes])
    def test_the_catalog_quantities_check_it_too(self, f):
        with pytest.raises(InvalidInputError, match="errors must be"):
            f("H100" if f is planner.ridge else M, errors="ignore")

    def test_coerce_still_gives_nan_where_raise_raises(self):
        """1 x H100 does not hold Llama 3.1 70B (the raise call's DoesNotFitError)."""
        with pytest.raises(DoesNotFitError):
            planner.max_batch("H100", M, 8192, gpus=1)
        assert math.isnan(planner.max_batch("H100", M, 8192, gpus=1, errors="coerce"))


class TestSeriesPairing:
    """F3: Series are paired by position; Series whose indexes differ are refused, not paired by the wrong rows."""

    def test_series_with_different_indexes_are_refused_naming_both(self):
        a = pd.Series(["H100", "H200", "B200"], index=[10, 11, 12])
        c = pd.Series([8192, 32768, 1024], index=[12, 11, 10])
        with pytest.raises(InvalidInputError, match=r"pandas Series gpu .* and context .* have different indexes"):
            planner.max_batch(a, M, c)

    def test_aligned_series_give_the_scalar_calls_on_their_index(self):
        """Columns of one DataFrame (one index): each row is the scalar call for that row."""
        df = pd.DataFrame({"gpu": ["H100", "H200", "B200"], "ctx": [8192, 32768, 1024]}, index=[10, 11, 12])
        got = planner.max_batch(df.gpu, M, df.ctx)
        assert list(got.index) == [10, 11, 12]
        assert got.tolist() == [planner.max_batch(g, M, c) for g, c in zip(df.gpu, df.ctx, strict=True)]

    def test_reindexing_first_pairs_by_label(self):
        """The error's way out: c.reindex(a.index) gives what label alignment means."""
        a = pd.Series(["H100", "H200", "B200"], index=[10, 11, 12])
        c = pd.Series([8192, 32768, 1024], index=[12, 11, 10])
        got = planner.max_batch(a, M, c.reindex(a.index))
        assert got.tolist() == [planner.max_batch(a[i], M, c[i]) for i in a.index]


class TestOneNamePerCall:
    """F4: engine and parallelism take one name per call; an array says so."""

    @pytest.mark.parametrize(
        "engine", [np.array(["vllm", "sglang"]), pd.Series(["vllm", "sglang"]), ["vllm", "sglang"]]
    )
    def test_an_engine_array_is_refused_saying_to_loop(self, engine):
        with pytest.raises(InvalidInputError, match="engine takes one value per call.*loop over engines"):
            planner.max_batch("H100", M, 8192, engine=engine, errors="coerce")

    def test_a_parallelism_array_is_refused_saying_to_loop(self):
        with pytest.raises(InvalidInputError, match="parallelism takes one value per call.*loop over layouts"):
            planner.max_batch("H100", "mixtral-8x7b", 8192, gpus=2, parallelism=np.array(["tp", "dp-ep"]))

    def test_a_zero_d_engine_array_is_its_name(self):
        """np.array("sglang") is one name: the scalar call with "sglang"."""
        got = planner.max_batch("H100", M, 8192, engine=np.array("sglang"))
        assert got == planner.max_batch("H100", M, 8192, engine="sglang")


class TestShapes:
    """F5: shapes that do not broadcast are a planner error naming the arguments as the caller named them."""

    def test_gpu_and_context_are_named_with_their_shapes(self):
        with pytest.raises(
            InvalidInputError, match=r"gpu \(shape \(3,\)\) and context \(shape \(2,\)\) do not broadcast"
        ):
            planner.max_batch(np.array(["H100", "H200", "B200"]), M, np.array([1024, 2048]))

    def test_ttft_names_prompt_tokens(self):
        with pytest.raises(InvalidInputError, match=r"batch \(shape \(3,\)\) and prompt_tokens|prompt_tokens \(shape"):
            planner.ttft("H100", M, np.array([1024, 2048]), batch=np.array([1, 2, 4]))

    def test_kv_bytes_names_model_and_tokens(self):
        with pytest.raises(InvalidInputError, match=r"model \(shape \(3,\)\) and tokens \(shape \(2,\)\)"):
            planner.kv_bytes(np.array(["llama3.1-70b", "qwen2-7b", "llama2-70b"]), np.array([1, 2]))

    def test_a_column_against_a_row_is_a_grid(self):
        """(3, 1) x (2,) broadcasts to 3 x 2: each cell the scalar call."""
        gpus = np.array([["H100"], ["H200"], ["B200"]])
        ctx = np.array([4096, 8192])
        got = planner.max_batch(gpus, M, ctx)
        assert got.shape == (3, 2)
        assert got[2, 1] == planner.max_batch("B200", M, 8192)


class TestCatalogFolder:
    """F6: catalog= takes a folder, as --catalog DIR does."""

    def test_a_folder_reads_as_load_catalog_does(self, tmp_path):
        folder = tmp_path / "cat"
        folder.mkdir()
        from planner.cli.catalog import entry_to_toml

        h100 = planner.default_catalog().gpu("H100")
        entry = h100.model_copy(update={"name": "Team-H100", "aliases": ()})
        (folder / "gpus.toml").write_text(entry_to_toml("gpu", entry), encoding="utf-8")
        # the same GPU under another name: the scalar call on "H100"
        assert planner.max_batch("Team-H100", M, 8192, catalog=str(folder)) == planner.max_batch("H100", M, 8192)
        assert planner.max_batch("Team-H100", M, 8192, catalog=folder) == planner.max_batch(
            "Team-H100", M, 8192, catalog=planner.load_catalog(folder)
        )

    def test_a_missing_folder_is_a_catalog_error(self, tmp_path):
        with pytest.raises(PlannerError, match="catalog folder not found"):
            planner.max_batch("H100", M, 8192, catalog=str(tmp_path / "nope"))

    def test_another_value_says_what_is_accepted(self):
        with pytest.raises(
            InvalidInputError, match=r"catalog must be a Catalog \(load_catalog\(folder\)\) or a folder"
        ):
            planner.max_batch("H100", M, 8192, catalog=42)


class TestDocstrings:
    """F7, F8, F14: what the docstrings state is what the code computes."""

    @pytest.mark.parametrize(
        "gpu,model,batch", [("H100", "llama2-70b", 3), ("H100", "llama3.1-8b", 64), ("H200", "mixtral-8x7b", 32)]
    )
    def test_the_parts_of_a_step_add_up(self, gpu, model, batch):
        """tpot's docstring: kernels_s + communication_s + overhead_s = step_s (the trial's 20-33% gap was the
        roofline references taken for parts)."""
        s = planner.decode_step(gpu, model, 8192, batch=batch)
        assert s.kernels_s + s.communication_s + s.overhead_s == pytest.approx(s.step_s, rel=1e-12)
        assert "kernels_s" in planner.tpot.__doc__ and "roofline_overlap" not in planner.tpot.__doc__

    def test_ttft_and_tpot_say_seconds_and_excel_milliseconds(self):
        for f in (planner.tpot, planner.ttft):
            assert "seconds" in f.__doc__ and "milliseconds" in f.__doc__
        assert "batch=B" in planner.ttft.__doc__

    def test_tpot_at_batch_2_runs_on_its_own_group_as_documented(self):
        """The trial's non-monotone curve: min_gpus gives each element's group, and tpot on that group given is the
        same number (gpus given: one group for the sweep)."""
        b = np.array([1, 2, 4])
        groups = planner.min_gpus("H100", M, 8192, batch=b)
        assert groups.tolist() == [planner.min_gpus("H100", M, 8192, batch=int(x)) for x in b] == [2, 4, 4]
        got = planner.tpot("H100", M, 8192, batch=b)
        assert got.tolist() == [
            planner.tpot("H100", M, 8192, batch=int(x), gpus=int(g)) for x, g in zip(b, groups, strict=True)
        ]
        assert "own" in planner.max_batch.__doc__ and "min_gpus" in planner.max_batch.__doc__


class TestOneScenario:
    """F9: one-scenario functions given an array say they take one scenario; Plan.to_dict()."""

    @pytest.mark.parametrize(
        "call,arg",
        [
            (lambda: planner.plan(np.array(["H100", "H200"]), M, 8192), "gpu"),
            (lambda: planner.plan("H100", M, np.array([8192, 4096])), "context"),
            (lambda: planner.valid_tp_sizes(np.array(["llama3.1-70b", "qwen2-7b"])), "model"),
            (
                lambda: planner.api.peak_fleet(
                    np.array(["H100", "H200"]), M, 8192, peak_requests_per_s=10, output_tokens=500
                ),
                "gpu",
            ),
        ],
    )
    def test_an_array_is_refused_naming_the_argument(self, call, arg):
        with pytest.raises(InvalidInputError, match=rf"takes one scenario: {arg} must be one value"):
            call()

    def test_to_dict_is_plan_json(self):
        """Plan.to_dict() is the object `planner plan --json` prints (the CLI's output, read back)."""
        from cli_support import run

        out = run("plan", "--gpu", "H100", "--model", M, "--context", "8192", "--json")
        assert out.exit_code == 0, out.output
        d = planner.plan("H100", M, 8192).to_dict()
        assert json.loads(json.dumps(d)) == json.loads(out.output)
        assert d["max_batch"] == planner.max_batch("H100", M, 8192)


class TestPrices:
    """F10: coerce coerces a bad price; the missing-price message names the GPU."""

    def test_a_nan_price_is_a_nan_row_under_coerce(self):
        got = planner.cost_per_mtok("H100", M, 8192, price_per_gpu_hour=np.array([2.0, np.nan]), errors="coerce")
        assert got[0] == planner.cost_per_mtok("H100", M, 8192, price_per_gpu_hour=2.0)
        assert math.isnan(got[1])

    def test_raise_still_refuses_a_nan_price(self):
        with pytest.raises(InvalidInputError, match="price_per_gpu_hour must be a number"):
            planner.cost_per_mtok("H100", M, 8192, price_per_gpu_hour=np.array([2.0, np.nan]))

    def test_the_missing_price_names_the_gpu_not_the_array(self):
        """H20 has no on-demand price in the shipped catalog (catalogs/gpus.toml)."""
        assert math.isnan(planner.api.gpu_price_per_hour("H20"))
        with pytest.raises(MissingDataError, match=r"no price per GPU-hour in the catalog for 'H20'; pass") as e:
            planner.cost_per_mtok(np.array(["H100", "H20"]), M, 8192, batch=8)
        assert "array" not in str(e.value)


class TestDtypes:
    """F13: counts are integers wherever nothing failed."""

    def test_max_batch_under_coerce_is_int_where_nothing_failed(self):
        got = planner.max_batch(["H100", "H200"], M, 8192, errors="coerce")
        assert got.dtype == np.int64
        assert got.tolist() == [planner.max_batch(g, M, 8192) for g in ("H100", "H200")]

    def test_max_batch_under_coerce_is_float_with_nan_where_one_failed(self):
        got = planner.max_batch(["H100", "H200"], M, 8192, gpus=1, errors="coerce")
        assert got.dtype == np.float64 and math.isnan(got[0])

    def test_group_sizes_of_a_record_are_ints(self):
        """The groups of decode_step are min_gpus' (same arguments)."""
        g = planner.decode_step("H100", M, 8192, batch=np.array([1, 2, 4])).gpus
        assert g.dtype == np.int64 and g.tolist() == [2, 4, 4]

    def test_bytes_names_say_to_decode(self):
        with pytest.raises(planner.UnknownNameError, match="names must be text"):
            planner.max_batch(np.array([b"H100", b"H200"]), M, 8192)


class TestCatalogListing:
    """F12: the catalog as records, catalog list --json, every error class at the top."""

    def test_records_are_the_catalog_list_table(self):
        rows = planner.catalog_records("gpus")
        h100 = next(r for r in rows if r["name"] == "H100 SXM 80GB")
        g = planner.default_catalog().gpu("H100")
        assert h100["memory_bytes"] == g.memory_bytes == 85_899_345_920  # 80 GiB (README, "Units")
        assert h100["hbm_bandwidth_bytes_per_s"] == g.hbm_bandwidth_bytes_per_s
        assert len(pd.DataFrame(planner.catalog_records("models"))) == len(planner.default_catalog().models)

    def test_catalog_list_json_prints_the_records(self):
        from cli_support import run

        out = run("catalog", "list", "gpus", "--json")
        assert out.exit_code == 0, out.output
        assert json.loads(out.output) == {"gpus": json.loads(json.dumps(planner.catalog_records("gpus")))}

    def test_every_error_class_is_exported(self):
        import planner.errors as e

        for name in dir(e):
            cls = getattr(e, name)
            if isinstance(cls, type) and issubclass(cls, e.PlannerError):
                assert getattr(planner, name) is cls and name in planner.__all__
