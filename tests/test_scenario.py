"""Scenario files (planner.export.scenario): the shipped example loads; every bad field is one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import default_catalog
from planner.export.scenario import ScenarioError, check_names, load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

WORKLOAD = {
    "peak_requests_per_s": 20,
    "average_requests_per_s": 8,
    "prompt_tokens_mean": 1000,
    "prompt_tokens_high": 3000,
    "output_tokens_mean": 300,
    "output_tokens_high": 1000,
    "ttft_target_s": 1.0,
    "tpot_target_s": 0.05,
}


def scenario(**changes) -> dict:
    data = {"workload": dict(WORKLOAD), "option": [{"gpu": "H100", "model": "Llama-3.1-70B"}]}
    data.update(changes)
    return data


def error_of(data: dict) -> str:
    with pytest.raises(ScenarioError) as exc:
        check_names(parse_scenario(data, "s.toml"), default_catalog(), "s.toml")
    return str(exc.value)


class TestExamples:
    @pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
    def test_every_shipped_example_loads_and_names_catalog_entries(self, path):
        """Each examples/*.toml validates and every name in it is in the shipped catalog."""
        sc = load_scenario(path)
        check_names(sc, default_catalog(), str(path))
        assert sc.option


class TestDefaults:
    def test_defaults_fill_options_and_options_override_them(self):
        """[defaults] pue applies to options that do not set it; an option's own value wins."""
        sc = parse_scenario(
            scenario(
                defaults={"pue": 1.5},
                option=[
                    {"gpu": "H100", "model": "Llama-3.1-70B"},
                    {"gpu": "H200", "model": "Llama-3.1-70B", "pue": 1.1},
                ],
            )
        )
        assert [o.pue for o in sc.option] == [1.5, 1.1]

    def test_unnamed_options_get_a_readable_name(self):
        """An option without a name is labelled 'GPU, model, pricing'."""
        assert parse_scenario(scenario()).option[0].name == "H100, Llama-3.1-70B, cloud"

    def test_bought_gpus_come_in_8_gpu_nodes_and_rented_ones_singly(self):
        """node_size defaults to 8 when bought, 1 when rented."""
        sc = parse_scenario(
            scenario(
                option=[
                    {"gpu": "H100", "model": "m", "pricing": "purchase"},
                    {"gpu": "H100", "model": "m", "pricing": "cloud"},
                ]
            )
        )
        assert [o.nodes_of for o in sc.option] == [8, 1]


class TestBadInput:
    def test_missing_workload_field_names_it(self):
        """A missing target says which one and what it is."""
        w = dict(WORKLOAD)
        del w["tpot_target_s"]
        msg = error_of(scenario(workload=w))
        assert msg.startswith("s.toml: workload.tpot_target_s: missing") and "seconds" in msg

    def test_unknown_field_lists_the_accepted_ones(self):
        """A misspelt option key is refused, with the nearest accepted key first, then all of them."""
        msg = error_of(scenario(option=[{"gpu": "H100", "model": "m", "pricing_model": "cloud"}]))
        assert "option #1.pricing_model: unknown field; did you mean pricing" in msg and "? accepted fields:" in msg

    def test_a_group_the_engine_refuses_names_the_option(self):
        """gpus_per_replica = 3 for Llama-3.1-70B (64 attention heads, 8 KV heads; its config.json): the refusal
        came as a bare line without the file or option; now it names both, with the valid groups."""
        msg = error_of(scenario(option=[{"gpu": "H100", "model": "Llama-3.1-70B", "gpus_per_replica": 3}]))
        assert msg.startswith("s.toml: option #1 (H100, Llama-3.1-70B, cloud).gpus_per_replica: Llama-3.1-70B cannot")
        assert "valid groups up to 64: 1, 2, 4, 8" in msg

    @pytest.mark.parametrize("where", ["option", "defaults"])
    def test_a_provider_no_quote_is_from_is_refused_not_priced_at_the_median(self, where):
        """price_basis = "Hyperstak": every option silently paid the median; the error names the provider meant."""
        option = {"gpu": "H100", "model": "Llama-3.1-70B"}
        data = (
            scenario(option=[{**option, "price_basis": "Hyperstak"}])
            if where == "option"
            else scenario(option=[option], defaults={"price_basis": "Hyperstak"})
        )
        msg = error_of(data)
        assert ".price_basis: no catalog quote is from 'Hyperstak'; did you mean Hyperstack?" in msg
        assert msg.startswith("s.toml: defaults.price_basis" if where == "defaults" else "s.toml: option #1")
        assert (
            check_names(parse_scenario(scenario(defaults={"price_basis": "hyperstack"}), "s.toml"), default_catalog())
            is None
        )

    def test_a_misspelt_workload_key_names_the_one_meant(self):
        """'peak_request_per_s' (one letter short): the error names peak_requests_per_s before the full list."""
        w = dict(WORKLOAD)
        w["peak_request_per_s"] = w.pop("peak_requests_per_s")
        msg = error_of(scenario(workload=w))
        assert msg.startswith("s.toml: workload.peak_request_per_s: unknown field; did you mean peak_requests_per_s")

    def test_wrong_type_shows_what_was_given(self):
        """A text where a number belongs: the field, the rule and the value."""
        msg = error_of(scenario(workload={**WORKLOAD, "ttft_target_s": "fast"}))
        assert "workload.ttft_target_s" in msg and "'fast'" in msg

    def test_out_of_range_value_in_defaults_names_defaults(self):
        """A PUE below 1 in [defaults] is reported there."""
        assert "defaults.pue" in error_of(scenario(defaults={"pue": 0.8}))

    def test_average_above_peak_is_refused(self):
        """The average load cannot exceed the peak."""
        assert "above peak_requests_per_s" in error_of(scenario(workload={**WORKLOAD, "average_requests_per_s": 30}))

    def test_rate_and_concurrency_together_are_refused(self):
        """The load is given one way, not both."""
        msg = error_of(scenario(workload={**WORKLOAD, "peak_concurrent_requests": 100}))
        assert "not both" in msg

    def test_unknown_gpu_suggests_close_names(self):
        """A GPU not in the catalog: the option, the field and the nearest names."""
        msg = error_of(scenario(option=[{"name": "new", "gpu": "H2000", "model": "Llama-3.1-70B"}]))
        assert msg.startswith("s.toml: option #1 (new).gpu: unknown GPU 'H2000'") and "H200" in msg

    def test_weight_only_format_is_refused_for_the_kv_cache(self):
        """mxfp4 holds weights, not KV: the accepted formats are listed."""
        msg = error_of(scenario(option=[{"gpu": "H100", "model": "Llama-3.1-70B", "kv_precision": "mxfp4"}]))
        assert "kv_precision" in msg and "fp8" in msg

    def test_purchase_without_any_price_says_what_to_add(self):
        """H200 has no purchase price in the catalog: give purchase_usd or rent it."""
        msg = error_of(scenario(option=[{"gpu": "H200", "model": "Llama-3.1-70B", "pricing": "purchase"}]))
        assert "purchase_usd" in msg and 'pricing = "cloud"' in msg

    def test_a_spot_purchase_names_the_contradictory_pair(self):
        """Trial 22 F12: pricing = "purchase" with price_kind = "spot" names both fields."""
        o = {"gpu": "H200", "model": "Llama-3.1-70B", "pricing": "purchase", "price_kind": "spot"}
        msg = error_of(scenario(option=[o]))
        assert 'pricing = "purchase" with price_kind = "spot" contradict' in msg

    def test_sglang_experts_that_do_not_divide_carry_the_options_prefix(self):
        """Trial 22 F12: SGLang's expert-divisibility refusal names the file's option and field."""
        o = {"name": "x", "gpu": "H200", "model": "DeepSeek-V3", "gpus_per_replica": 12}
        msg = error_of(scenario(option=[{**o, "parallelism": "dp-ep", "engine": "sglang"}]))
        assert "option #1 (x).gpus_per_replica: SGLang cannot spread" in msg

    def test_no_options_at_all(self):
        """A scenario without [[option]] tables."""
        assert "[[option]]" in error_of(scenario(option=[]))

    def test_duplicate_option_names(self):
        """Two options with the same name cannot be told apart in the review."""
        msg = error_of(
            scenario(option=[{"name": "a", "gpu": "H100", "model": "m"}, {"name": "a", "gpu": "H200", "model": "m"}])
        )
        assert "'a' is used twice" in msg

    def test_a_replica_that_would_straddle_a_node_boundary_is_refused(self):
        """A 4-GPU tensor-parallel replica neither fits in a 3-GPU instance nor spans whole ones; it was billed as
        if it did (trial s195: "billed in 3-GPU instances ... gpus_per_replica 4")."""
        msg = error_of(scenario(option=[{"gpu": "H100", "model": "m", "node_size": 3, "gpus_per_replica": 4}]))
        assert "a replica of 4 GPUs does not fit in a node of 3 nor span whole ones" in msg
        assert "give a node_size of at least 4" in msg
        for node, group in ((8, 4), (6, 4), (8, 16), (1, 8)):  # in one node, or whole nodes, or billed per GPU
            data = scenario(option=[{"gpu": "H100", "model": "m", "node_size": node, "gpus_per_replica": group}])
            assert parse_scenario(data).option[0].gpus_per_replica == group

    def test_baseline_must_be_an_option(self):
        """baseline names an option."""
        assert "baseline 'x' is not an option name" in error_of(scenario(baseline="x"))

    def test_invalid_toml_gives_the_line(self, tmp_path):
        """A syntax error names the file and where."""
        p = tmp_path / "bad.toml"
        p.write_text("[workload\npeak = 1\n")
        with pytest.raises(ScenarioError, match=r"bad\.toml: not valid TOML: .*line 1"):
            load_scenario(p)


class TestFractionalMeans:
    """Serving benchmarks and dataset statistics print mean lengths such as 800.5 tokens (``vllm bench serve``'s
    "Total input tokens" / requests); a mean keeps its fraction, a length that sizes memory stays whole."""

    def workload(self, **changes):
        return parse_scenario(scenario(workload={**WORKLOAD, **changes}), "s.toml").workload

    def test_a_mean_length_keeps_its_fraction_and_a_whole_one_stays_an_int(self):
        w = self.workload(prompt_tokens_mean=800.5, output_tokens_mean="0.3k")
        assert (w.prompt_tokens_mean, w.output_tokens_mean) == (800.5, 307.2)  # 0.3 x 1,024
        w = self.workload(prompt_tokens_mean=1000.0, output_tokens_mean="0.5k")
        assert (w.prompt_tokens_mean, w.output_tokens_mean) == (1000, 512)
        assert type(w.prompt_tokens_mean) is int and type(w.output_tokens_mean) is int

    def test_each_request_is_the_mean_rounded_as_validation_reads_a_printed_mean(self):
        """planner validate reads a row's input_len of 207.5 as 208 (``mean_length``); a scenario's mean is
        simulated and priced at the same whole tokens, half to even (800.5 -> 800, 801.5 -> 802)."""
        from planner.accuracy.published import mean_length

        assert mean_length("207.5", "input_len", "", 0) == 208
        assert self.workload(
            prompt_tokens_mean=207.5, prompt_tokens_high=800, output_tokens_mean=300
        ).request_tokens == (208, 300)
        assert self.workload(prompt_tokens_mean=800.5, output_tokens_mean=801.5).request_tokens == (800, 802)
        w = self.workload(prompt_tokens_mean=800.5)
        assert w.at_request_lengths().prompt_tokens_mean == 800
        assert w.inflight_context_tokens == self.workload(prompt_tokens_mean=800).inflight_context_tokens

    def test_a_fractional_high_length_is_refused_saying_only_a_mean_may_have_one(self):
        msg = error_of(scenario(workload={**WORKLOAD, "prompt_tokens_high": 3000.5}))
        assert "workload.prompt_tokens_high: 3000.5 is not a whole number (a *_tokens_high length is one" in msg
        assert "sizes the KV cache" in msg and "only the *_tokens_mean lengths, means, may have a fraction" in msg
        msg = error_of(scenario(workload={**WORKLOAD, "output_tokens_high": "1.3k"}))
        assert "'1.3k' is 1331.2 tokens, not a whole number (a *_tokens_high length" in msg

    def test_a_fractional_high_length_exits_2_from_export(self, tmp_path):
        from click.testing import CliRunner

        from planner.cli import main

        text = (EXAMPLES / "budget-review.toml").read_text()
        assert "prompt_tokens_high = 3000\n" in text
        p = tmp_path / "s.toml"
        p.write_text(text.replace("prompt_tokens_high = 3000\n", "prompt_tokens_high = 3000.5\n"))
        result = CliRunner().invoke(main, ["export", str(p), "-o", str(tmp_path / "r.md")])
        assert result.exit_code == 2, result.output
        assert "workload.prompt_tokens_high: 3000.5 is not a whole number" in result.output
        assert "only the *_tokens_mean lengths, means, may have a fraction" in result.output
        assert not (tmp_path / "r.md").exists()


class TestNodes:
    def test_the_group_search_skips_groups_that_straddle_the_nodes_and_says_so(self):
        """In 3-GPU instances Llama-3.1-70B (bf16, 141 GB) runs on replicas of 2 H100 (one GPU of each instance
        idle); 4 and 8 would straddle instances, so they are not tried, and the review says which."""
        from planner.export.evaluate import evaluate

        sc = parse_scenario(scenario(option=[{"gpu": "H100", "model": "Llama-3.1-70B", "node_size": 3}]))
        result = evaluate(sc.option[0], sc.workload, default_catalog(), sc.traffic_change)
        assert result.shortfall == "" and result.replica.gpus == 2
        gpus, replicas = float(result.fleet.gpus), float(result.fleet.replicas)
        assert gpus % 3 == 0 and gpus == 3 * replicas  # one 2-GPU replica per instance
        assert any(
            "replicas of 4, 8 GPUs were not tried: each would straddle the 3-GPU nodes" in w for w in result.warnings
        )


def test_a_per_gpu_rate_several_times_every_quote_is_a_warning_not_a_refusal():
    """Trial 22 F10: 41.18 for an H200 (an 8-GPU instance's rate typed per GPU) asks "per GPU, not per instance?"."""
    from planner.export.evaluate import _implausible_rate
    from planner.export.scenario import Option

    gpu = default_catalog().gpu("H200")
    typed = Option(name="x", gpu="H200", model="Llama-3.3-70B", cloud_usd_per_gpu_hour=41.18)
    assert "per GPU, not per 8-GPU instance?" in _implausible_rate(typed, gpu)
    assert _implausible_rate(typed.model_copy(update={"cloud_usd_per_gpu_hour": 6.5}), gpu) == ""
