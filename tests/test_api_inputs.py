"""Bad input: each error says what was wrong and what is accepted."""

from __future__ import annotations

import math

import numpy as np
import pytest

import planner
from planner.errors import DoesNotFitError, InvalidInputError, UnknownNameError


class TestNames:
    def test_unknown_gpu_names_the_closest_gpus(self):
        with pytest.raises(UnknownNameError, match=r"unknown GPU 'H10'; did you mean H100"):
            planner.max_batch("H10", "llama2-70b", 8192)

    def test_unknown_model_names_the_closest_models(self):
        with pytest.raises(UnknownNameError, match=r"unknown model 'lama2-70b'; did you mean .*llama2-70b"):
            planner.tpot("H100", "lama2-70b", 8192)

    def test_unknown_precision_names_the_closest_precisions(self):
        with pytest.raises(UnknownNameError, match=r"unknown precision 'fp9'; did you mean"):
            planner.kv_bytes("llama2-70b", 8192, kv_precision="fp9")

    def test_a_weight_only_format_is_refused_for_the_kv_cache(self):
        with pytest.raises(InvalidInputError, match="'mxfp4' is not a KV-cache format; use one of"):
            planner.kv_bytes("llama2-70b", 8192, kv_precision="mxfp4")

    def test_names_are_matched_without_case_spaces_or_hyphens(self):
        assert planner.max_batch(" h100 ", "Llama2-70B", 8192.0, kv_precision="FP16") == planner.max_batch(
            "H100", "llama2-70b", 8192, kv_precision="fp16"
        )


class TestCounts:
    @pytest.mark.parametrize("bad", [0, -1, 8192.5, float("nan"), float("inf"), 2**25, True, None, "32768k"])
    def test_context_must_be_a_whole_number_of_tokens_in_range(self, bad):
        with pytest.raises(
            InvalidInputError, match=r"context must be a whole number of tokens from 1 to 16,777,216; got"
        ):
            planner.max_batch("H100", "llama2-70b", bad)

    @pytest.mark.parametrize("bad", [0, 1.5, -4, 2**21])
    def test_batch_must_be_a_whole_number_of_sequences(self, bad):
        with pytest.raises(InvalidInputError, match="batch must be a whole number of sequences from 1 to"):
            planner.tpot("H100", "llama3.1-8b", 4096, batch=bad)

    @pytest.mark.parametrize("bad", [0, 2.5, -2, 10_000])
    def test_gpu_count_must_be_a_whole_number_of_gpus(self, bad):
        with pytest.raises(InvalidInputError, match="gpus must be a whole number of GPUs from 1 to 4,096"):
            planner.max_batch("H100", "llama3.1-8b", 4096, gpus=bad)

    @pytest.mark.parametrize("bad", [0, -0.5, 1.2, float("nan")])
    def test_memory_utilization_is_a_fraction(self, bad):
        with pytest.raises(InvalidInputError, match="memory_utilization must be a number above 0 and at most 1"):
            planner.max_batch("H100", "llama3.1-8b", 4096, memory_utilization=bad)

    @pytest.mark.parametrize("bad", [1e308, float("inf"), -1, 10_000.5])
    def test_price_is_a_rent_from_0_to_the_scenario_bound(self, bad):
        """A price past MAX_RENT_USD_PER_GPU_HOUR ($10,000, a scenario's bound too) is refused: 1e308 overflowed
        cost_per_mtok to inf with a RuntimeWarning (s80); Excel shows #NUM! with the same reason."""
        from planner.excel import functions as F

        accepted = "price_per_gpu_hour must be a number above 0 and at most 10,000 US\\$ per GPU-hour; got"  # s174
        with pytest.raises(InvalidInputError, match=accepted):
            planner.cost_per_mtok("H100", "llama2-70b", 8192, price_per_gpu_hour=bad)
        with pytest.raises(InvalidInputError, match=accepted):
            planner.plan("H100", "llama2-70b", 8192, price_per_gpu_hour=bad)
        assert F.COST_PER_MTOK("H100", "llama2-70b", 8192, None, bad) == "#NUM!"

    def test_a_huge_number_is_shown_short(self):
        """'got 1e+30', not the 31 digits of int(1e30) (nor 309 for 1e308): the message stays one short line."""
        with pytest.raises(InvalidInputError) as e:
            planner.tpot("H100", "llama2-70b", 8192, batch=1e30)
        assert str(e.value).endswith("; got 1e+30")
        with pytest.raises(InvalidInputError, match=r"; got 4,097$"):
            planner.max_batch(
                "H100", "llama2-70b", 8192, gpus=4097
            )  # a count in range of int stays whole, grouped as planner prints counts

    def test_floats_that_are_whole_numbers_are_accepted(self):
        """Excel hands 8192 as 8192.0."""
        assert planner.max_batch("H100", "llama3.1-8b", 8192.0, gpus=1.0) == planner.max_batch(
            "H100", "llama3.1-8b", 8192, gpus=1
        )


class TestFit:
    def test_a_given_gpu_count_too_small_names_the_shortfall_and_the_smallest_group(self):
        with pytest.raises(
            DoesNotFitError,
            match=r"Llama-2-70B weights \(137\.95 GB\) do not fit on 1 x H100 SXM 80GB: "
            r"vLLM's gpu_memory_utilization 0\.9 leaves 76\.52 GB of the 85\.02 GB the engine sees on it, short by "
            r"[\d.]+ GB for the weights, activations and one sequence's KV cache; the smallest group that works is "
            r"2 x H100 SXM 80GB",
        ):
            planner.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16", gpus=1)

    def test_a_batch_beside_weights_that_do_not_fit_says_whose_shortfall_it_is(self):
        """Llama-2-70B's weights (137.95 GB: 68.98e9 parameters x 2 B, config.json) do not fit one H100 (80 GiB) alone;
        with 5,000 sequences of 8,192 tokens (0.34 MB a token, 2.68 GB a sequence) the shortfall is the batch's,
        thousands of GB, and the message says so instead of charging it to the weights."""
        with pytest.raises(DoesNotFitError) as caught:
            planner.tpot("H100", "llama2-70b", 8192, kv_precision="fp16", batch=5000, gpus=1)
        message = str(caught.value)
        assert "weights (137.95 GB) plus 5,000 sequences of 8,192 tokens do not fit on 1 x H100 SXM 80GB" in message
        assert "(the weights alone do not)" in message
        assert caught.value.shortfall_bytes > 5000 * 2.6e9

    def test_a_batch_that_does_not_fit_is_an_error_for_time_functions(self):
        with pytest.raises(DoesNotFitError, match="weights plus 500 sequences of 8,192 tokens do not fit on 2 x"):
            planner.tpot("H100", "llama2-70b", 8192, batch=500, gpus=2)

    def test_a_model_too_big_for_any_group_says_so(self):
        with pytest.raises(DoesNotFitError, match="do not fit on up to 64 x L4"):
            planner.max_batch("L4", "deepseek-v3", 163840, kv_precision="fp32", weight_precision="fp32")

    def test_context_beyond_the_trained_maximum_is_computed_and_flagged_in_plans(self):
        """Llama 2 was trained to 4,096 tokens; the mission's own example asks for 8,192."""
        assert planner.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16") >= 1
        p = planner.plan("H100", "llama2-70b", 8192, kv_precision="fp16")
        assert any("exceeds Llama-2-70B's trained maximum of 4,096 tokens" in w for w in p.warnings)

    def test_missing_price_is_an_error_naming_the_fix(self):
        with pytest.raises(
            InvalidInputError, match="no price per GPU-hour in the catalog for 'H20'; pass price_per_gpu_hour"
        ):
            planner.cost_per_mtok("H20", "llama3.1-8b", 4096)
        assert math.isfinite(planner.cost_per_mtok("H20", "llama3.1-8b", 4096, price_per_gpu_hour=1.0))


class TestMissionExample:
    def test_max_batch_of_the_mission_example_answers_for_two_h100s(self):
        """=MAX_BATCH("H100","llama2-70b",8192,"fp16"): weights need 2 x H100; vLLM budget holds 4 sequences."""
        p = planner.memory_plan("H100", "llama2-70b", 8192, kv_precision="fp16")
        assert int(p.gpus) == 2
        # (2 x (79.18 GiB x 0.9 - reserve) - 137.95 GB) / 2.68 GB: a few with vLLM's reserve, 12 in the seed form
        budget = 2 * float(p.kv_budget_bytes_per_gpu)
        assert budget == pytest.approx(
            2 * (79.18 * 2**30 * 0.9 - float(p.reserve_bytes_per_gpu)) - 137_953_296_384, rel=1e-4
        )
        assert (
            planner.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16")
            == int(p.max_batch)
            == int(budget // 2_684_354_560)
        )
        assert (
            1
            <= int(p.max_batch)
            < planner.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16", engine="ideal", memory_utilization=1)
            == 12
        )


class TestErrorKinds:
    def test_a_number_out_of_range_is_an_out_of_range_error_shown_as_num(self):
        from planner.errors import OutOfRangeError

        with pytest.raises(OutOfRangeError) as info:
            planner.max_batch("H100", "llama3.1-8b", -5)
        assert info.value.excel_error == "#NUM!"

    def test_a_value_of_the_wrong_kind_is_shown_as_value(self):
        with pytest.raises(InvalidInputError) as info:
            planner.max_batch("H100", "llama3.1-8b", "long")
        assert info.value.excel_error == "#VALUE!"

    def test_a_missing_price_is_missing_data_shown_as_na(self):
        from planner.errors import MissingDataError

        with pytest.raises(MissingDataError) as info:
            planner.cost_per_mtok("H20", "llama3.1-8b", 4096)
        assert info.value.excel_error == "#N/A"

    def test_coerce_marks_only_the_bad_numbers_of_an_array(self):
        """One bad context in a column does not blank the whole column."""
        out = planner.max_batch("H100", "llama3.1-8b", [4096, 0, 8192.5, "x", 8192], errors="coerce")
        assert out[0] == planner.max_batch("H100", "llama3.1-8b", 4096)
        assert np.isnan(out[1:4]).all()
        assert out[4] == planner.max_batch("H100", "llama3.1-8b", 8192)


class TestSignatures:
    """Issue 24: every function reads its options from one definition (``planner.options``), plainly typed."""

    @pytest.mark.parametrize("name", ["tpot", "throughput", "batch_token_time", "mfu", "mbu", "decode_intensity"])
    def test_decode_quantities_take_decode_steps_options_and_nothing_else(self, name):
        """A decode quantity's signature is the three required arguments and ``**options: Unpack[DecodeOptions]``;
        a misspelled option or a 4th positional argument is a TypeError naming it."""
        import inspect

        fn = getattr(planner.api, name)
        params = inspect.signature(fn).parameters
        assert list(params) == ["gpu", "model", "context", "options"]
        assert params["options"].annotation == "Unpack[DecodeOptions]"
        with pytest.raises(TypeError, match="3 positional arguments"):
            fn("H100", "llama2-70b", 2048, 8)  # the 4th positional argument used to mean different things
        with pytest.raises(
            TypeError, match=rf"{name}\(\) got an unexpected keyword argument 'bacth' \(did you mean 'batch'"
        ):
            fn("H100", "llama2-70b", 2048, bacth=8)

    def test_ttft_takes_prompt_tokens_and_no_check_fit(self):
        import inspect

        params = inspect.signature(planner.api.ttft).parameters
        assert list(params)[:3] == ["gpu", "model", "prompt_tokens"]
        with pytest.raises(TypeError, match="unexpected keyword argument 'check_fit'"):
            planner.api.ttft("H100", "llama2-70b", 2048, check_fit=False)

    def test_max_batch_refuses_a_batch(self):
        """max_batch counts sequences: a batch is not one of its options (min_gpus takes one)."""
        with pytest.raises(TypeError, match="max_batch\\(\\) got an unexpected keyword argument 'batch'"):
            planner.max_batch("H100", "llama2-70b", 8192, batch=3)


class TestCategoricalNames:
    """Issue 11: a sweep may pass its names as pandas Categoricals (codes computed once, reused by every call)."""

    def test_categorical_names_give_the_same_numbers_as_text(self):
        import pandas as pd

        gpus = np.array(["H100", "A100 SXM 80GB", "H100", "L4"], dtype=object)
        models = np.array(["llama2-70b", "llama3.1-8b", "llama3.1-8b", "llama3.1-8b"], dtype=object)
        ctx = np.array([2048, 4096, 8192, 1024])
        text = planner.tpot(gpus, models, ctx, batch=4, gpus=8, errors="coerce")
        cats = planner.tpot(pd.Categorical(gpus), pd.Categorical(models), ctx, batch=4, gpus=8, errors="coerce")
        np.testing.assert_array_equal(np.asarray(cats), np.asarray(text))

    def test_a_category_no_element_uses_is_not_looked_up(self):
        import pandas as pd

        gpus = pd.Categorical(["H100", "H100"], categories=["H100", "not-a-gpu"])
        assert (
            list(planner.max_batch(gpus, "llama3.1-8b", 8192)) == [planner.max_batch("H100", "llama3.1-8b", 8192)] * 2
        )

    def test_a_missing_categorical_name_is_an_unknown_name(self):
        import pandas as pd

        gpus = pd.Categorical(["H100", None])
        out = planner.max_batch(gpus, "llama3.1-8b", 8192, errors="coerce")
        assert out[0] == planner.max_batch("H100", "llama3.1-8b", 8192) and math.isnan(out[1])
        with pytest.raises(UnknownNameError):
            planner.max_batch(gpus, "llama3.1-8b", 8192)


class TestNamesCodedOnce:
    """Issue 11: a sweep that passes the same arrays of names to several functions groups them by identity once."""

    def test_the_same_array_is_hashed_once_and_an_array_changed_in_place_again(self, monkeypatch):
        """Expected values: each scenario through the scalar API (checked against the seeds in test_seed_cases)."""
        import pandas as pd

        hashed = []
        factorize = pd.factorize
        monkeypatch.setattr(pd, "factorize", lambda *a, **k: hashed.append(1) or factorize(*a, **k))
        gpus = np.array(["H100", "A100 SXM 80GB", "L4", "H100"] * 25 + ["".join("L40S")], dtype=object)
        ctx = np.arange(1, 102) * 64

        def expected():
            return [planner.max_batch(g, "llama3.1-8b", c, gpus=1) for g, c in zip(gpus, ctx, strict=True)]

        first = planner.max_batch(gpus, "llama3.1-8b", ctx, gpus=1)
        assert list(first) == expected() and len(hashed) == 1
        second = planner.max_batch(gpus, "llama3.1-8b", ctx, gpus=1)
        np.testing.assert_array_equal(second, first)
        assert len(hashed) == 1  # grouped as before: every reference is the same
        gpus[2] = "H200 SXM 141GB"
        third = planner.max_batch(gpus, "llama3.1-8b", ctx, gpus=1)
        assert list(third) == expected() and third[2] != first[2] and len(hashed) == 2

    def test_a_coerced_sweep_with_a_refused_group_builds_no_error_keys(self, monkeypatch):
        """A coerced sweep marks refused scenarios NaN and nobody reads their errors, so the names an error would quote
        are not copied into object arrays (a copy per call cost a sweep of text arrays 2.2x, bench/bench_model.py).
        Expected values: Llama-3.1-8B has 8 KV heads, so vLLM refuses a group of 3 (tests/test_parallel.py) and
        accepts 1; under failures.collect() the same refusal is noted, so the keys are built then."""
        from planner import deploy
        from planner.model import failures

        built = []
        names = deploy._names
        monkeypatch.setattr(deploy, "_names", lambda x: built.append(1) or names(x))
        models = np.array(["llama3.1-8b"] * 4)
        out = planner.max_batch("H100", models, 8192, gpus=np.array([1, 3, 1, 3]), errors="coerce")
        assert out[0] == planner.max_batch("H100", "llama3.1-8b", 8192, gpus=1) and math.isnan(out[1])
        assert built == []
        with failures.collect():
            planner.max_batch("H100", models, 8192, gpus=np.array([1, 3, 1, 3]), errors="coerce")
        assert built

    def test_equal_text_in_several_objects_is_one_code_kept_for_the_next_call(self):
        """pandas' read_csv shares a string object among some cells, not all: the text's code is kept with the
        references, so the next call over the same array reads the same codes (and finds its pairs again)."""
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        a, b, c = "H100", "".join("H100"), "L4"
        assert a == b and a is not b
        names = np.array([a, c, b] * 100, dtype=object)
        codes, values, _ = lookup._codes(names)
        assert values == ["H100", "L4"] and codes[:6].tolist() == [0, 1, 0, 0, 1, 0]
        assert lookup._codes(names)[0] is codes and not codes.flags.writeable

    def test_a_new_array_of_the_same_names_gives_the_same_numbers(self):
        gpus = np.array(["H100", "L4"] * 50, dtype=object)
        again = np.array(["".join(g) for g in gpus], dtype=object)  # equal text, other string objects
        ctx = np.full(100, 4096)
        np.testing.assert_array_equal(
            planner.tpot(gpus, "llama3.1-8b", ctx, batch=4, gpus=1),
            planner.tpot(again, "llama3.1-8b", ctx, batch=4, gpus=1),
        )


class TestEveryFormOfNames:
    """Issue 24: names as a numpy text array, an object array of distinct strings (as read from a file), a pandas
    Series or a Categorical give the same numbers; text arrays are grouped without a Python string per element."""

    @staticmethod
    def read_back(tmp_path, n=2000):
        """A sweep's columns (``n`` scenarios) written to a CSV file and read back the four ways users read them."""
        import csv

        import pandas as pd

        rng = np.random.default_rng(24)
        names = {"gpu": ["H100", "A100 SXM 80GB", "L4", "not-a-gpu"], "model": ["llama3.1-8b", "llama2-70b"]}
        frame = pd.DataFrame({k: rng.choice(v, n) for k, v in names.items()} | {"context": rng.choice([512, 8192], n)})
        path = tmp_path / "sweep.csv"
        frame.to_csv(path, index=False)
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        read = pd.read_csv(path)
        cats = pd.read_csv(path, dtype={"gpu": "category", "model": "category"})
        return {
            "numpy text": [np.loadtxt(path, dtype=str, delimiter=",", skiprows=1, usecols=i) for i in (0, 1)],
            "distinct objects": [np.array([r[k] for r in rows], dtype=object) for k in ("gpu", "model")],
            "Series": [read.gpu, read.model],
            "Categorical": [cats.gpu, cats.model],
        }, read.context.to_numpy()

    def test_the_four_forms_give_each_scenarios_own_numbers(self, tmp_path):
        """Expected: each scenario through the scalar API (names as Python str), NaN for the unknown GPU."""
        forms, ctx = self.read_back(tmp_path)
        assert forms["numpy text"][0].dtype.kind == "U"
        assert len({id(x) for x in forms["distinct objects"][0][:100]}) == 100  # a new string object per cell
        gpus, models = forms["distinct objects"]
        expected = [
            planner.tpot(g, m, c, batch=2, gpus=1, errors="coerce")
            for g, m, c in zip(gpus[:40], models[:40], ctx[:40], strict=True)
        ]
        for name, (g, m) in forms.items():
            out = np.asarray(planner.tpot(g, m, ctx, batch=2, gpus=1, errors="coerce"))
            np.testing.assert_array_equal(out[:40], expected, err_msg=name)
            np.testing.assert_array_equal(
                out, np.asarray(planner.tpot(gpus, models, ctx, batch=2, gpus=1, errors="coerce"))
            )

    def test_the_four_forms_give_equal_arrays_and_the_seed_trailer_of_twelve(self, tmp_path):
        """A sweep of 20,000 scenarios (enough to pair names with contexts, as the bench's) read back from one CSV
        file the four ways gives bit-for-bit equal arrays, and Llama 2 70B on 2 x H100 at 8,192 tokens (fp16, all
        of memory, nothing reserved, ideal engine) holds 12 sequences in every form: the seed case
        "trailer-seed-form", catalogs/reference/seed_cases.toml (000_*.txt section 2, free HBM / KV per sequence)."""
        import csv
        import tomllib
        from pathlib import Path

        import pandas as pd

        from planner.catalog import lookup

        seeds = tomllib.loads((Path(__file__).parents[1] / "catalogs/reference/seed_cases.toml").read_text())
        seed = next(c for c in seeds["case"] if c["id"] == "trailer-seed-form")
        i = seed["inputs"]
        rng = np.random.default_rng(24)
        n = 20_000
        frame = pd.DataFrame(
            {
                "gpu": rng.choice([i["gpu"], "A100 SXM 80GB", "L40S", "H200 SXM 141GB"], n),
                "model": rng.choice([i["model"], "llama3.1-8b", "mixtral-8x7b"], n),
                "context": rng.choice([i["context"], 1024, 32768], n),
            }
        )
        path = tmp_path / "sweep.csv"
        frame.to_csv(path, index=False)
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))[1:]
        read, cats = pd.read_csv(path), pd.read_csv(path, dtype={"gpu": "category", "model": "category"})
        forms = {
            "numpy text": [np.loadtxt(path, dtype=str, delimiter=",", skiprows=1, usecols=k) for k in (0, 1)],
            "distinct objects": [np.array([r[k] for r in rows], dtype=object) for k in (0, 1)],
            "Series": [read.gpu, read.model],
            "Categorical": [cats.gpu, cats.model],
        }
        options = dict(
            gpus=i["gpus"],
            kv_precision=i["kv_dtype"],
            weight_precision=i["weight_dtype"],
            memory_utilization=i["memory_utilization"],
            reserve_bytes=i["reserve_bytes"],
            engine="ideal",
            errors="coerce",
        )
        ctx = read.context.to_numpy()
        seed_rows = (read.gpu == i["gpu"]).to_numpy() & (read.model == i["model"]).to_numpy() & (ctx == i["context"])
        results = {}
        for name, (g, m) in forms.items():
            lookup._BY_IDENTITY.clear()  # each form groups its own names
            results[name] = np.asarray(planner.max_batch(g, m, ctx, **options), dtype=float)
        first = results["numpy text"]
        assert seed_rows.sum() > 100 and (first[seed_rows] == seed["expected"]).all()
        for name, out in results.items():
            np.testing.assert_array_equal(out.view(np.uint64), first.view(np.uint64), err_msg=name)

    def test_a_sweeps_three_calls_give_equal_arrays_in_every_form_when_groupings_are_reused(self, tmp_path):
        """The bench's sweep (max_batch, tpot, ttft on 8 GPUs, coerced) over 20,000 scenarios read back the four ways,
        run twice per form (the second run reuses every kept grouping and pairing): every array bit-for-bit equal to
        the Categoricals' first run, and each scenario's own numbers (checked on 30 rows through the scalar API)."""
        from planner.catalog import lookup
        from planner.catalog.resolve import _resolve

        forms, ctx = self.read_back(tmp_path, 20_000)
        gpus, models = forms["distinct objects"]
        paired = _resolve(planner.default_catalog(), "coerce", gpu=gpus, model=models, numbers=ctx)
        assert paired.numbers is not None  # names and contexts paired, as in the bench's sweep
        rng = np.random.default_rng(5)

        def sweep(g, m):
            return [
                np.asarray(planner.max_batch(g, m, ctx, gpus=8, errors="coerce"), dtype=float),
                np.asarray(planner.tpot(g, m, ctx, batch=8, check_fit=False, gpus=8, errors="coerce"), dtype=float),
                np.asarray(planner.ttft(g, m, ctx, gpus=8, errors="coerce"), dtype=float),
            ]

        lookup._BY_IDENTITY.clear()
        reference = sweep(*forms["Categorical"])
        rows = rng.choice(len(ctx), 30, replace=False)
        scalar = [
            planner.tpot(gpus[i], models[i], int(ctx[i]), batch=8, check_fit=False, gpus=8, errors="coerce")
            for i in rows
        ]
        np.testing.assert_array_equal(reference[1][rows], scalar)
        for name, (g, m) in forms.items():
            lookup._BY_IDENTITY.clear()
            for run in range(2):
                for call, out, expected in zip(("max_batch", "tpot", "ttft"), sweep(g, m), reference, strict=True):
                    np.testing.assert_array_equal(out.view(np.uint64), expected.view(np.uint64), f"{name} {call} {run}")

    def test_a_text_array_is_grouped_without_python_strings_and_exactly(self):
        from planner.catalog import lookup

        names = np.array(["H100", "L4", "H100", "L40S", "L4", "H1000"])
        codes, values = lookup._codes_of_text(names)
        assert values == ["H100", "L4", "L40S", "H1000"] and codes.tolist() == [0, 1, 0, 2, 1, 3]
        assert all(type(v) is str for v in values)

    def test_long_and_non_latin1_names_are_grouped_exactly(self):
        """Names past 8 characters span several words; a name beyond Latin-1 leaves the text to the object path."""
        from planner.catalog import lookup

        names = np.array(["llama3.1-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-70c"])
        codes, values = lookup._codes_of_text(names)
        assert values == ["llama3.1-70b", "llama3.1-8b", "llama3.1-70c"] and codes.tolist() == [0, 1, 0, 2]
        odd = np.array(["H100", "H100\u2713", "H100"])
        assert lookup._codes_of_text(odd) is None
        codes, values, _ = lookup._codes(odd)
        assert values == ["H100", "H100\u2713"] and codes.tolist() == [0, 1, 0]

    @pytest.mark.parametrize(
        "cells",
        [["H100", None, "H100"], ["H100", float("nan")], ["H100", 8], ["H100", np.str_("L4")], ["a\x00b", "a\x00c"]],
    )
    def test_strings_read_by_the_string_table_only_when_every_cell_is_a_str(self, cells):
        """A missing cell, a number or a str subclass leaves the string table (``_codes`` keys it by its repr);
        strings that differ after a NUL character stay apart."""
        from planner.catalog import lookup

        flat = np.array(cells, dtype=object)
        found = lookup._factorize_strings(flat)
        if all(type(x) is str for x in cells):
            assert found[1] == cells and found[0].tolist() == list(range(len(cells)))
        else:
            assert found is None

    def test_a_hash_collision_falls_back_to_grouping_objects(self, monkeypatch):
        """With every hash 0 all names hash alike: the exact comparison refuses, and the object path groups."""
        from planner.catalog import lookup

        monkeypatch.setattr(lookup, "_text_hash", lambda words: np.zeros(len(words), dtype=np.uint64))
        names = np.array(["H100", "L4", "H100"])
        assert lookup._codes_of_text(names) is None
        codes, values, shape = lookup._codes(names)
        assert values == ["H100", "L4"] and codes.tolist() == [0, 1, 0] and shape == (3,)

    def test_distinct_objects_are_grouped_by_value_once_per_array(self, monkeypatch):
        """Three calls over the same array of distinct string objects hash their values once (then by reference)."""
        from planner.catalog import lookup

        gpus = np.array(["".join(g) for g in ["H100", "L4"] * 600], dtype=object)
        assert lookup._mostly_copies(gpus)
        lookup._BY_IDENTITY.clear()
        hashed = []
        factorize = lookup._factorize_strings
        monkeypatch.setattr(lookup, "_factorize_strings", lambda *a, **k: hashed.append(1) or factorize(*a, **k))
        results = [planner.max_batch(gpus, "llama3.1-8b", 4096, gpus=1) for _ in range(3)]
        assert len(hashed) == 1
        assert list(results[2][:2]) == [planner.max_batch(g, "llama3.1-8b", 4096, gpus=1) for g in ("H100", "L4")]

    @staticmethod
    def forms_of(gpus: list[str], models: list[str]) -> dict[str, list]:
        """The four forms of names built from Python lists (a new string object per cell for the distinct form)."""
        import pandas as pd

        return {
            "numpy text": [np.array(gpus), np.array(models)],
            "distinct objects": [np.array(["".join(x) for x in v], dtype=object) for v in (gpus, models)],
            "Series": [pd.Series(gpus), pd.Series(models)],
            "Categorical": [pd.Series(gpus, dtype="category"), pd.Series(models, dtype="category")],
        }

    def test_every_form_gives_the_scalar_paths_numbers_bit_for_bit(self):
        """Issue 21 (the name paths made cheaper): a 20,000-scenario sweep (paired with its contexts, as the bench's)
        over GPUs that refuse some weights and KV dtypes (T4: no bf16), an unknown GPU and an unknown model, in each
        form of names and with every grouping kept or not: max_batch, tpot and ttft (coerced) equal bit for bit to
        the scalar API's numbers of each scenario checked (NaN where the scalar call fails), every form equal."""
        from planner.catalog import lookup

        rng = np.random.default_rng(21)
        n = 20_000
        gpu_names = ["H100", "T4", "L4", "A100 SXM 80GB", "H10", "MI300X"]
        model_names = ["llama2-70b", "llama3.1-8b", "mixtral-8x7b", "lama2-70b", "qwen2.5-7b"]
        gpus = rng.choice(gpu_names, n).tolist()
        models = rng.choice(model_names, n).tolist()
        ctx = rng.choice([1024, 4096, 32768], n)
        calls = {
            "max_batch": lambda g, m, c: planner.max_batch(g, m, c, gpus=2, errors="coerce"),
            "tpot": lambda g, m, c: planner.tpot(g, m, c, batch=4, check_fit=False, gpus=2, errors="coerce"),
            "ttft": lambda g, m, c: planner.ttft(g, m, c, gpus=2, errors="coerce"),
        }
        rows = np.unique(
            np.concatenate(
                [rng.choice(n, 40, replace=False)]
                + [np.flatnonzero(np.array(gpus) == g)[:3] for g in gpu_names]
                + [np.flatnonzero(np.array(models) == m)[:3] for m in model_names]
            )
        )
        scalar = {
            name: np.array([float(call(gpus[i], models[i], int(ctx[i]))) for i in rows]) for name, call in calls.items()
        }
        assert np.isnan(scalar["ttft"]).any() and not np.isnan(scalar["ttft"]).all()
        reference = None
        for form, (g, m) in self.forms_of(gpus, models).items():
            for kept in (False, True):  # grouped afresh, then with the groupings of the run before kept
                if not kept:
                    lookup._BY_IDENTITY.clear()
                for name, call in calls.items():
                    out = np.asarray(call(g, m, ctx), dtype=float)
                    np.testing.assert_array_equal(out[rows].view(np.uint64), scalar[name].view(np.uint64), form)
                    if reference is None:
                        reference = {}
                    expected = reference.setdefault(name, out)
                    np.testing.assert_array_equal(out.view(np.uint64), expected.view(np.uint64), f"{form} {name}")

    @pytest.mark.parametrize(
        "gpu, model, says",
        [
            ("H10", "llama2-70b", r"unknown GPU 'H10'; did you mean H100"),
            ("H100", "lama2-70b", r"unknown model 'lama2-70b'; did you mean .*llama2-70b"),
        ],
    )
    def test_an_unknown_name_raises_the_scalar_paths_error_in_every_form(self, gpu, model, says):
        """An unknown name among known ones raises the same UnknownNameError, "did you mean" and all, in every form of
        names (grouped afresh and with the grouping kept) as one scenario through the scalar API does."""
        from planner.catalog import lookup

        with pytest.raises(UnknownNameError, match=says) as one:
            planner.max_batch(gpu, model, 4096, gpus=2)
        gpus = ["H100", "L4"] * 3000 + [gpu] + ["L4"] * 100
        models = ["llama3.1-8b"] * 6000 + [model] + ["llama2-70b"] * 100
        for form, (g, m) in self.forms_of(gpus, models).items():
            lookup._BY_IDENTITY.clear()
            for _ in range(2):
                for call in (planner.max_batch, planner.ttft):
                    with pytest.raises(UnknownNameError) as many:
                        call(g, m, 4096, gpus=2)
                    assert str(many.value) == str(one.value), form


class TestContextsPaired:
    """Issue 24: a sweep whose contexts repeat runs its formulas once per distinct (names, context) pair
    (``planner.catalog.resolve._pair``); the numbers are those of computing every scenario."""

    @staticmethod
    def sweep(n=20_000, seed=24):
        rng = np.random.default_rng(seed)
        gpus = rng.choice(np.array(["H100", "A100 SXM 80GB", "L4", "not-a-gpu", "H200 SXM 141GB"], dtype=object), n)
        models = rng.choice(np.array(["llama3.1-8b", "llama2-70b", "mixtral-8x7b"], dtype=object), n)
        return gpus, models, rng.choice([512, 2048, 8192, 32768, 0], n)  # 0: not a context (NaN when coerced)

    def test_pairs_give_the_numbers_of_every_scenario(self):
        """Expected: the same sweep in chunks of 1,000 (too small to pair: every scenario computed on its own)."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import _resolve

        gpus, models, ctx = self.sweep()
        paired = _resolve(default_catalog(), "coerce", gpu=gpus, model=models, numbers=ctx.astype(float))
        assert paired.numbers is not None and paired.numbers.values.size < 100  # 5 x 3 x 5 pairs at most
        calls = {
            "max_batch": lambda g, m, c: planner.max_batch(g, m, c, gpus=8, errors="coerce"),
            "tpot": lambda g, m, c: planner.tpot(g, m, c, batch=8, gpus=8, check_fit=False, errors="coerce"),
            "ttft": lambda g, m, c: planner.ttft(g, m, c, errors="coerce"),
        }
        for name, call in calls.items():
            whole = np.asarray(call(gpus, models, ctx), dtype=float)
            chunks = [
                np.asarray(call(*(a[i : i + 1000] for a in (gpus, models, ctx))), dtype=float)
                for i in range(0, len(ctx), 1000)
            ]
            np.testing.assert_array_equal(whole, np.concatenate(chunks), err_msg=name)
            assert np.isnan(whole[ctx == 0]).all() and np.isfinite(whole[(ctx == 512) & (gpus == "H100")]).all()

    def test_a_models_own_facts_run_once_per_model(self):
        """A fact of the model alone is a Rows over the model rows (3 models), gathered to the pairs only when it
        meets a per-pair term; the tensor-parallel check (model facts and a group of 8) stays per model, and every
        scenario reads its own model's answer: Llama 2 70B's 64 heads and 8 KV heads split over 8 GPUs
        (config.json of meta-llama/Llama-2-70b-hf: num_attention_heads 64, num_key_value_heads 8)."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import _resolve
        from planner.model.memory import tensor_parallel_ok
        from planner.model.rows import Rows, row_values

        gpus, models, ctx = self.sweep()
        r = _resolve(default_catalog(), "coerce", gpu=gpus, model=models, numbers=ctx.astype(float))
        heads = r.model.num_attention_heads
        assert isinstance(heads, Rows) and isinstance(heads.values, Rows) and row_values(heads).size == 3
        ok = tensor_parallel_ok(r.model, 8)
        assert isinstance(ok.values, Rows) and row_values(ok).size == 3
        per_scenario = np.asarray(ok)
        assert per_scenario.shape == ctx.shape and per_scenario[models == "llama2-70b"].all()
        assert np.asarray(heads)[models == "llama2-70b"].tolist() == [64.0] * int((models == "llama2-70b").sum())

    def test_a_term_of_gpu_and_model_runs_once_per_combination(self):
        """Facts of paired scenarios sit on three levels: catalog rows, (GPU, model) combinations, (combination,
        context) pairs. A term of a GPU fact and a model fact (bytes of HBM per layer) is computed over the sweep's
        combinations (5 GPU names x 3 models: 15 at most), never over its pairs or scenarios, and every scenario
        reads its own: H100 SXM's 80 GiB (catalogs/gpus.toml: NVIDIA's "80 GB" of HBM3 is 81,920 MiB, as nvidia-smi
        shows it) over Llama 2 70B's 80 layers (config.json of meta-llama/Llama-2-70b-hf: num_hidden_layers 80)."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import _resolve
        from planner.model.rows import Rows

        gpus, models, ctx = self.sweep()
        r = _resolve(default_catalog(), "coerce", gpu=gpus, model=models, numbers=ctx)
        per_layer = r.gpu.memory_bytes / r.model.num_layers
        assert isinstance(per_layer, Rows) and per_layer.codes is r.numbers.codes  # per pair ...
        combos = per_layer.values
        assert isinstance(combos, Rows) and isinstance(combos.values, np.ndarray) and combos.values.size <= 15
        assert r.numbers.values.size > combos.values.size  # ... computed per combination
        memory = np.asarray(r.gpu.memory_bytes)
        both = (gpus == "H100") & (models == "llama2-70b")
        assert np.asarray(per_layer)[both].tolist() == [memory[both][0] / 80] * int(both.sum())
        assert memory[both][0] == 80 * 2**30

    def test_integer_contexts_are_checked_without_a_float_copy(self):
        """Valid integer contexts come back as they are when the caller casts them itself (``integers=True``); one
        out of range is masked (coerce) and the array comes back as floats, as before."""
        from planner.checks import _count_or_mask

        ctx = np.array([512, 2048, 8192], dtype=np.int64)
        same, bad = _count_or_mask(ctx, "context", 2**24, " of tokens", "coerce", integers=True)
        assert same is ctx and bad is False
        floats, bad = _count_or_mask(ctx, "context", 2**24, " of tokens", "coerce")
        assert floats.dtype == np.float64 and floats.tolist() == [512.0, 2048.0, 8192.0] and bad is False
        masked, bad = _count_or_mask(np.array([0, 2048]), "context", 2**24, " of tokens", "coerce", integers=True)
        assert masked.dtype == np.float64 and bad.tolist() == [True, False]

    def test_groups_a_model_refuses_are_nan_per_pair_as_per_scenario(self):
        """6 GPUs split no model of the sweep (32 / 64 heads, vLLM's heads % tp = 0): the refusal is per model
        and the result NaN for every scenario, per pair as in chunks too small to pair; 2 GPUs split them all."""
        gpus, models, ctx = self.sweep()
        for n in (6, 2):
            whole = np.asarray(planner.max_batch(gpus, models, ctx, gpus=n, errors="coerce"), dtype=float)
            chunks = np.concatenate(
                [
                    np.asarray(
                        planner.max_batch(
                            gpus[i : i + 1000], models[i : i + 1000], ctx[i : i + 1000], gpus=n, errors="coerce"
                        ),
                        dtype=float,
                    )
                    for i in range(0, len(ctx), 1000)
                ]
            )
            np.testing.assert_array_equal(whole, chunks)
            assert np.isnan(whole).all() == (n == 6)

    def test_contexts_that_hardly_repeat_are_not_paired(self):
        from planner.catalog import default_catalog
        from planner.catalog.resolve import _resolve

        gpus, models, _ = self.sweep()
        ctx = np.arange(1, len(gpus) + 1, dtype=float)
        assert _resolve(default_catalog(), "coerce", gpu=gpus, model=models, numbers=ctx).numbers is None

    def test_a_context_changed_in_place_is_paired_again(self):
        """The pairs kept for the next call are found again only for the same names and the same contexts."""
        gpus, models, ctx = self.sweep()
        first = np.asarray(planner.max_batch(gpus, models, ctx, gpus=8, errors="coerce"))
        ctx[ctx == 512] = 32768
        second = np.asarray(planner.max_batch(gpus, models, ctx, gpus=8, errors="coerce"))
        i = int(np.flatnonzero((gpus == "H100") & (models == "llama2-70b") & (ctx == 32768))[0])
        assert second[i] == planner.max_batch("H100", "llama2-70b", 32768, gpus=8) and not np.array_equal(first, second)


class TestTextKeptForTheNextCall:
    """Issue 24: a text array's grouping is kept for the next call (with its packed rows, a byte per character),
    found again only for the same text."""

    def test_the_same_text_reuses_its_grouping_and_changed_text_does_not(self):
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        names = np.array(["H100", "L4", "H100", "RTX PRO 6000 Blackwell Server Edition"] * 50)
        first = lookup._codes_of_text(names)
        again = lookup._codes_of_text(names)
        assert again[0] is first[0] and again[1] == ["H100", "L4", "RTX PRO 6000 Blackwell Server Edition"]
        names[1] = "H200"  # changed in place: same array, other text
        changed = lookup._codes_of_text(names)
        assert changed[1] == ["H100", "H200", "RTX PRO 6000 Blackwell Server Edition", "L4"]
        assert changed[0][:5].tolist() == [0, 1, 0, 2, 0]

    @pytest.mark.parametrize("width", [3, 8, 9, 16, 17, 37])
    def test_names_that_differ_only_in_their_last_character_are_told_apart(self, width):
        """Rows are hashed as 8-byte words read in place, the last word overlapping when the width is not a
        multiple of 8: a difference in the last byte changes the group whatever the width."""
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        a, b = "x" * (width - 1) + "a", "x" * (width - 1) + "b"
        codes, values = lookup._codes_of_text(np.array([a, b, a, b, b]))
        assert values == [a, b] and codes.tolist() == [0, 1, 0, 1, 1]

    def test_text_read_in_blocks_is_checked_in_every_block(self, monkeypatch):
        """With blocks of 3 rows (``_TEXT_BLOCK_BYTES``), a change in the last block alone is seen, and a character
        past Latin-1 in a later block leaves the packed path as in the first."""
        from planner.catalog import lookup

        monkeypatch.setattr(lookup, "_TEXT_BLOCK_BYTES", 3 * 4 * 9)  # three rows of 9 characters
        lookup._BY_IDENTITY.clear()
        names = np.array(["llama2-7b", "H100", "L4", "H100", "llama2-7b", "L4", "H100", "L40S"])
        codes, values = lookup._codes_of_text(names)
        assert values == ["llama2-7b", "H100", "L4", "L40S"] and codes.tolist() == [0, 1, 2, 1, 0, 2, 1, 3]
        names[-1] = "L4"  # the last block only
        codes, values = lookup._codes_of_text(names)
        assert values == ["llama2-7b", "H100", "L4"] and codes.tolist()[-1] == 2
        names[-2] = "H10\u0141"
        assert lookup._codes_of_text(names) is None

    def test_a_character_past_latin1_written_in_place_is_not_read_as_its_low_byte(self):
        """'Ł' is U+0141: its low byte is 'A' (0x41), so packing it a byte per character would read "H10A"; the
        changed array leaves the packed path and is grouped as objects, exactly."""
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        names = np.array(["H10A", "L4", "H10A"])
        assert lookup._codes_of_text(names)[1] == ["H10A", "L4"]
        names[2] = "H10\u0141"
        assert lookup._codes_of_text(names) is None
        codes, values, _ = lookup._codes(names)
        assert values == ["H10A", "L4", "H10\u0141"] and codes.tolist() == [0, 1, 2]


class TestObjectsKeptForTheNextCall:
    """Issue 24: an object array's grouping is kept with its references and found again only for the same strings."""

    def test_a_string_freed_and_its_address_reused_is_not_read_as_the_old_one(self):
        """CPython gives a freed object's memory to the next object of its size at once: an element replaced by a
        new string of the same length can sit at the old element's address. The kept copy of the array holds the
        old element, so the new string cannot take its address, and the grouping is made again (before it was
        kept, the next call read "T4" as the "L4" once there)."""
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        names = np.array(["".join(g) for g in ["H100", "L4"] * 600], dtype=object)
        assert lookup._codes(names)[1] == ["H100", "L4"]
        old = id(names[3])
        names[3] = None  # the array's reference goes; only the kept copy holds the "L4" that was there
        t = "T"
        names[3] = t + "4"  # a new two-character string, the size of the freed one
        assert id(names[3]) != old
        codes, values, _ = lookup._codes(names)
        assert values == ["H100", "L4", "T4"] and codes[:5].tolist() == [0, 1, 0, 2, 0]

    def test_a_string_freed_and_its_address_reused_gives_the_new_names_numbers(self):
        """The same through the public API: the changed element gets its own GPU's answer (the scalar call's)."""
        gpus = np.array(["".join(g) for g in ["H100", "L4"] * 600], dtype=object)
        first = planner.max_batch(gpus, "llama3.1-8b", 4096, gpus=1)
        gpus[2] = None
        h = "H"
        gpus[2] = h + "200"  # four characters, as the "H100" freed there
        out = planner.max_batch(gpus, "llama3.1-8b", 4096, gpus=1)
        assert out[2] == planner.max_batch("H200", "llama3.1-8b", 4096, gpus=1) != first[2]
        assert out[0] == first[0] and out[1] == first[1]

    def test_arrays_of_other_objects_are_grouped_afresh(self):
        """A cell holding a list (keyed by its repr) can change in place: such arrays are not kept."""
        from planner.catalog import lookup

        lookup._BY_IDENTITY.clear()
        cell = ["H100"]
        names = np.empty(40, dtype=object)
        names[:] = [cell, "L4"] * 20
        lookup._codes(names)
        assert not [k for k in lookup._BY_IDENTITY if k[0] == "objects"]


class TestSmallSweepsUsePlainArrays:
    """Up to ``SMALL_SCENARIOS`` scenarios the facts are plain arrays, above it ``Rows`` per combination: the same
    floating-point operations on the same numbers, so the answers are equal to the last bit either way."""

    def test_a_small_sweep_gives_what_the_per_combination_path_gives(self, monkeypatch):
        from planner.catalog import resolve

        gpus = np.array(["H100", "A100 SXM 80GB", "L4", "H200 SXM 141GB"] * 10, dtype=object)
        models = np.array(["llama3.1-8b", "mixtral-8x7b", "qwen2-7b", "llama3.1-8b", "gpt-oss-20b"] * 8, dtype=object)
        ctx, batch = np.arange(1, 41) * 300, np.arange(1, 41) % 7 + 1

        def answers():
            return [
                planner.tpot(gpus, models, ctx, batch=batch, errors="coerce"),
                planner.ttft(gpus, models, ctx, errors="coerce"),
                planner.max_batch(gpus, models, ctx, errors="coerce"),
            ]

        assert len(gpus) <= resolve.SMALL_SCENARIOS
        plain = answers()
        monkeypatch.setattr(resolve, "SMALL_SCENARIOS", 0)  # every sweep through Rows
        for got, want in zip(answers(), plain, strict=True):
            np.testing.assert_array_equal(got, want)
        assert np.isfinite(plain[0]).sum() >= 30  # most scenarios answer: the comparison is not NaN against NaN


def test_unknown_name_lists_names_differing_in_case_in_one_order():
    """Names equal but for case ('CodeLlama-7B', 'codellama-7b': both catalog aliases) listed in the same order
    whatever order they came in (sorted by lower case alone, `validate --json` differed between two runs)."""
    from planner.errors import UnknownNameError

    names = ["codellama-7b", "CodeLlama-7B", "c4ai-command-r-v01"]
    messages = {str(UnknownNameError("model", "tiiuae/falcon-180B", order)) for order in (names, names[::-1])}
    assert messages == {"unknown model 'tiiuae/falcon-180B'; known: c4ai-command-r-v01, CodeLlama-7B, codellama-7b"}


class TestTokenCountsAsText:
    """The API reads a token count written as text as `planner plan --context` and the Excel cells read it (one
    parser, ``planner.units.parse_token_count``; the last round's note: the API refused "8k" where both accepted it)."""

    @pytest.mark.parametrize("written", ["8k", "8K", "8,192", "8_192", " 8192 "])
    def test_kv_bytes_of_8k_is_that_of_8192(self, written):
        """Llama 2 70B at fp16, 8,192 tokens: 2 x 80 layers x 8 KV heads x 128 x 2 B x 8,192 = 2,684,354,560 B
        (its config.json; the README's example)."""
        assert planner.kv_bytes("llama2-70b", written, kv_precision="fp16") == 2_684_354_560

    def test_every_token_argument_reads_text(self):
        """context, prompt_tokens, input_len / output_len (predict_benchmark) and load_percentile's lengths."""
        from planner.serving.benchmark import predict_benchmark
        from planner.serving.fleet import load_percentile

        assert planner.max_batch("H100", "llama2-70b", "8k") == planner.max_batch("H100", "llama2-70b", 8192)
        assert planner.plan("H100", "llama2-70b", "8k") == planner.plan("H100", "llama2-70b", 8192)
        assert planner.ttft("H100", "llama3.1-8b", "2k") == planner.ttft("H100", "llama3.1-8b", 2048)
        assert predict_benchmark("H100", "llama3.1-8b", "1k", "128", 8) == predict_benchmark(
            "H100", "llama3.1-8b", 1024, 128, 8
        )
        args = ("H100", "llama3.1-8b", 2.0)
        assert load_percentile(*args, "1k", "256", metric="ttft", percentile=95, gpus=1) == load_percentile(
            *args, 1024, 256, metric="ttft", percentile=95, gpus=1
        )

    def test_arrays_and_series_of_text(self):
        pd = pytest.importorskip("pandas")
        expect = planner.max_batch("H100", "llama2-70b", [8192, 4096, 16384]).tolist()
        assert planner.max_batch("H100", "llama2-70b", ["8k", "4k", 16384]).tolist() == expect
        assert planner.max_batch("H100", "llama2-70b", pd.Series(["8k", "4,096", "16k"])).tolist() == expect

    @pytest.mark.parametrize(
        "written, says",
        [
            ("8,19", "'8,19': a comma must separate groups of three digits"),
            ("1.3k", "'1.3k' is 1331.2 tokens, not a whole number"),
            ("8kb", "'8kb' is not a whole number of tokens"),
        ],
    )
    def test_bad_text_says_what_is_accepted(self, written, says):
        with pytest.raises(InvalidInputError) as exc:
            planner.tpot("H100", "llama3.1-8b", written)
        assert str(exc.value).startswith(f"context: {says}") and "8k (k = 1,024 tokens)" in str(exc.value)

    def test_coerce_gives_nan_and_the_reason_per_cell(self):
        import numpy as np

        from planner.model import failures

        with failures.collect() as notes:
            got = planner.max_batch("H100", "llama2-70b", np.array(["8k", "x"]), errors="coerce")
        assert got[0] == planner.max_batch("H100", "llama2-70b", 8192) and np.isnan(got[1])
        assert str(notes.reasons((2,))[1]).startswith("context: 'x' is not a whole number of tokens")
