"""A deployment's options are defined once (``planner.options``) and every surface reads them (issue 24)."""

from __future__ import annotations

import inspect
import typing

import pytest
from click.testing import CliRunner

import planner
from planner import api, report
from planner.accuracy import predict
from planner.cli import main
from planner.excel import support
from planner.options import (
    OPTION_NAMES,
    BatchOptions,
    BenchmarkOptions,
    CommonOptions,
    DecodeOptions,
    DeploymentOptions,
    GroupOptions,
    Options,
    ReplicaOptions,
    option_doc,
)
from planner.serving import benchmark, fleet

ALL = (CommonOptions, GroupOptions, BatchOptions, DeploymentOptions, DecodeOptions, ReplicaOptions, BenchmarkOptions)


class TestOneDefinition:
    def test_every_typed_key_is_an_option_of_the_same_type(self):
        """Each TypedDict key is a field of ``Options`` with the same annotation: one name, one type, one default."""
        types = typing.get_type_hints(Options)
        for td in ALL:
            for key, annotation in typing.get_type_hints(td).items():
                assert annotation == types[key], (td.__name__, key)

    def test_the_decode_options_are_all_of_them(self):
        """``DecodeOptions`` (decode_step, tpot ...) takes every option; nothing in ``Options`` is unreachable."""
        assert DecodeOptions.__optional_keys__ == set(OPTION_NAMES)
        assert not DecodeOptions.__required_keys__

    @pytest.mark.parametrize(
        ("function", "takes"),
        [
            (api.memory_plan, "DeploymentOptions"),
            (api.max_batch, "GroupOptions"),
            (api.min_gpus, "BatchOptions"),
            (api.decode_step, "DecodeOptions"),
            (api.tpot, "DecodeOptions"),
            (api.cost_per_mtok, "DecodeOptions"),
            (api.prefill, "StepOptions"),
            (api.ttft, "DeploymentOptions"),
            (report.plan, "GroupOptions"),
            (predict.tpot_range, "DecodeOptions"),
            (benchmark.predict_benchmark, "BenchmarkOptions"),
            (fleet.load_percentile, "ReplicaOptions"),
        ],
    )
    def test_signatures_are_plain_and_name_their_options(self, function, takes):
        """No replaced ``__signature__``: the signature is the code's own, ``**options: Unpack[<TypedDict>]``."""
        assert "__signature__" not in vars(function)
        options = inspect.signature(function).parameters["options"]
        assert options.kind is inspect.Parameter.VAR_KEYWORD and options.annotation == f"Unpack[{takes}]"
        assert (
            typing.get_type_hints(function, include_extras=True)["options"]
            == typing.Unpack[getattr(planner.options, takes)]
        )

    @pytest.mark.parametrize(
        ("call", "message"),
        [
            (
                lambda: benchmark.predict_benchmark("H100", "llama2-7b", 128, 128, kv_precison="fp8"),
                "predict_benchmark() got an unexpected keyword argument 'kv_precison' (did you mean 'kv_precision'?)",
            ),
            (
                lambda: fleet.load_percentile("H100", "llama2-7b", 1.0, 128, 128, memory_utilization=0.8),
                "load_percentile() got an unexpected keyword argument 'memory_utilization'; its keyword arguments: "
                "metric, percentile,",
            ),
            (  # trial 22 F14: its own keywords are offered too, and the error is planner's own
                lambda: fleet.replicas_needed("H200", "deepseek-v3", 30, 213, 212, tpot_target=0.05, gpus=8),
                "replicas_needed() got an unexpected keyword argument 'tpot_target' (did you mean 'tpot_target_s'?); "
                "its keyword arguments: ttft_target_s, tpot_target_s,",
            ),
        ],
    )
    def test_the_serving_functions_refuse_an_option_they_do_not_take(self, call, message):
        """``predict_benchmark`` and ``load_percentile`` read their options as the capacity functions do: one line
        naming the misspelled or untaken option (and, for an option they lack, the ones they take)."""
        with pytest.raises(planner.UnknownKeywordError) as info:
            call()
        assert str(info.value).startswith(message)

    def test_read_refuses_an_option_the_function_does_not_take_and_names_those_it_does(self):
        with pytest.raises(TypeError) as info:
            Options.read(GroupOptions, {"kv_precison": "fp16"}, api.max_batch)
        assert str(info.value) == (
            "max_batch() got an unexpected keyword argument 'kv_precison' (did you mean 'kv_precision'?); its options: "
            "kv_precision, gpus, weight_precision, memory_utilization, engine, reserve_bytes, catalog, errors, calibration, "
            "parallelism"
        )

    def test_defaults_are_the_documented_ones(self):
        """The defaults every function shares: batch 1, check_fit on, errors raise, the rest the catalog's rule."""
        o = Options()
        assert (o.batch, o.check_fit, o.errors) == (1, True, "raise")
        assert all(getattr(o, name) is None for name in OPTION_NAMES if name not in ("batch", "check_fit", "errors"))


class TestSurfacesReadIt:
    def test_mission_calls_keep_working(self):
        """README: Llama 2 70B at 8K, fp16 KV, on H100s: 3 sequences on the smallest group (2 x H100), Python and Excel."""
        assert planner.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16") == 3
        assert support.evaluate(support.SPECS["MAX_BATCH"], ("H100", "llama2-70b", 8192, "fp16")) == 3

    @pytest.mark.parametrize("name", ["batch", "kv_precision", "gpus", "weight_precision", "memory_utilization"])
    def test_excel_arguments_carry_the_options_help(self, name):
        """Every Excel function's optional argument of that name shows ``option_doc``'s text."""
        params = [p for spec in support.SPECS.values() for p in spec.params if p.name == name]
        assert params and {p.doc for p in params} == {option_doc(name)}

    def test_cli_plan_help_carries_the_options_help(self):
        out = CliRunner().invoke(main, ["plan", "--help"], terminal_width=400).output
        for name in ("gpus", "weight_precision", "kv_precision", "memory_utilization"):
            assert option_doc(name) in " ".join(out.split()), name

    def test_plan_refuses_coerce(self):
        """``plan`` evaluates one scenario: its error is raised, never a NaN report."""
        with pytest.raises(TypeError, match='errors="raise" only'):
            report.plan("H100", "llama2-70b", 8192, errors="coerce")
