"""A sixth user trial's findings on `planner export` (s197, a finance analyst's): each behaviour checked against the
value it should have."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import default_catalog
from planner.export import build_review
from planner.export.evaluate import evaluate
from planner.export.glossary import OUTPUT_SHARE_LABEL
from planner.export.levers import _lever
from planner.export.scenario import parse_scenario
from planner.export.tables import options_table

SMALL = {
    "workload": {
        "peak_requests_per_s": 6,
        "average_requests_per_s": 3,
        "prompt_tokens_mean": 800,
        "prompt_tokens_high": 3000,
        "output_tokens_mean": 300,
        "output_tokens_high": 900,
        "ttft_target_s": 1.5,
        "tpot_target_s": 0.05,
    },
    "option": [{"name": "8B on H100", "gpu": "H100", "model": "Llama-3.1-8B", "pricing": "cloud"}],
}


@pytest.fixture(scope="module")
def small():
    """(scenario, catalog, baseline result, the baseline model without GQA sized the same way)."""
    scenario, catalog = parse_scenario(SMALL, "s.toml"), default_catalog()
    option, w = scenario.option[0], scenario.workload
    base = evaluate(option, w, catalog, scenario.traffic_change)
    m = base.model
    mha = m.model_copy(update={"num_kv_heads": m.num_attention_heads, "name": f"{m.name} without GQA"})
    return scenario, catalog, base, evaluate(option, w, catalog, scenario.traffic_change, model=mha)


class TestTheGqaLeverIsSizedAsItsBaseline:
    def test_the_hypothetical_model_is_simulated_not_looked_up_by_name(self, small):
        """The serving simulation was handed the model's name, "Llama-3.1-8B without GQA", which the catalog does not
        know, so the lever fell back to Little's law while the baseline was simulated (the trial's H200 review: 1,050
        GPUs without GQA against the baseline's 2,516, "GQA already saves $-2,675,450")."""
        _, _, base, mha = small
        assert base.under_load is not None and mha.under_load is not None
        assert not any("sized by Little's law" in w for w in mha.warnings)
        # 8 KV heads -> 32: four times the KV cache a sequence, so a replica holds fewer and the fleet is no smaller
        assert mha.replica.batch < base.replica.batch and mha.gpus >= base.gpus

    def test_a_lever_sized_on_another_basis_shows_no_saving_and_says_why(self, small):
        """Where a lever's simulation fails (Little's law) and the baseline's did not, the two fleets are not like
        for like: no saving, and the reason in the note."""
        _, _, base, mha = small
        fallen = dataclasses.replace(
            mha,
            under_load=None,
            under_load_refused="the reason it failed",
            warnings=("8B on H100: sized by Little's law; under load the reason it failed",),
        )
        lever = _lever("GQA model", "change", base, fallen)
        assert lever.saving_usd_per_month != lever.saving_usd_per_month  # NaN
        assert lever.note == (
            "no saving shown: sized by Little's law, the baseline on simulated percentiles (the simulation could not "
            "run it: the reason it failed)"
        )


class TestTheOptionsSayWhichTtft:
    def test_ttft_at_peak_is_the_simulated_percentile_beside_one_prompt_alone(self, small):
        """The Options column "TTFT (p95 prompt)" was one prompt on an idle replica (0.23 s in the README review)
        where the simulated p95 at the peak, the figure the fleet was sized on, is 1.10 s: the column now says
        "alone" and the simulated one stands beside it."""
        scenario, catalog, *_ = small
        review = build_review(scenario, catalog, source="s.toml", date="2026-12-05")
        table = options_table(review)
        keys = [c.key for c in table.columns]
        headers = {c.key: c.header for c in table.columns}
        assert headers["ttft_peak_s"] == "TTFT at peak (simulated p95)"
        assert headers["ttft_s"] == "TTFT, one p95 prompt alone"
        row = dict(zip(keys, table.rows[0], strict=True))
        r = review.results[0]
        assert row["ttft_peak_s"] == pytest.approx(float(r.under_load.result.ttft_s.at(95)))
        assert row["ttft_s"] == pytest.approx(r.replica.ttft_s) and row["ttft_s"] < row["ttft_peak_s"]


@pytest.mark.libreoffice
def test_the_cost_per_token_follows_an_edited_price_as_the_monthly_cost_does(tmp_path):
    """Options: a finance reader set a GPU-month price to $3,000 and the monthly cost and rank followed, but "$ per M
    output tokens" kept the old price's figure (a snapshot beside live cells). The tokens are fixed; the cost per
    token scales with the monthly cost: doubling the price doubles it."""
    import openpyxl
    from test_export import review_of, write_scenario
    from workbook_support import require_libreoffice

    from planner.export import render
    from planner.io import libreoffice

    require_libreoffice()
    review = review_of(write_scenario(tmp_path))
    path = tmp_path / "r.xlsx"
    path.write_bytes(render(review, "xlsx"))
    book = openpyxl.load_workbook(path)
    ws = book["Options"]
    header = [c.value for c in ws[1]]
    per, out = header.index("$ per GPU-month") + 1, header.index(OUTPUT_SHARE_LABEL) + 1  # trial 28 F11: its header
    before = review.results[0].fleet.usd_per_million_output
    ws.cell(row=2, column=per).value = 2 * ws.cell(row=2, column=per).value
    book.save(tmp_path / "edited.xlsx")
    values = openpyxl.load_workbook(libreoffice.recalculate(tmp_path / "edited.xlsx", tmp_path / "lo"), data_only=True)
    assert values["Options"].cell(row=2, column=out).value == pytest.approx(2 * float(before))


def test_a_recommendation_of_another_model_asks_for_a_quality_sign_off():
    """A review of Llama-3.1-70B options and one Qwen3-32B option recommended the Qwen3 one with no quality line,
    where fp8 weights of the same model get one (the trial's sc/multi.toml). One model throughout: no line."""
    from planner.export.quality import model_switch

    note = model_switch(["Qwen3-32B", "Llama-3.1-70B", "Llama-3.1-70B", "Qwen3-32B"], "the model owner")
    assert note is not None and note.text.startswith(
        "Quality: the recommendation serves Qwen3-32B where other options serve Llama-3.1-70B: another model answers "
        "differently"
    )
    assert model_switch(["Llama-3.1-70B", "Llama-3.1-70B"], "the model owner") is None


def test_the_like_for_like_grid_prices_each_kind_with_the_scenarios_own_quote():
    """H100 bought at the scenario's $25,000 and rented at its $1.80/GPU-hour: the grid priced one kind with the
    catalog (NVIDIA's $30,000: $58,743 a month beside the option's $52,251) yet labelled the row "= option H100
    bought", and which own quote it took flipped with the ranking (trial 7 F2). Each kind now takes the scenario's
    own quote of that kind on that GPU, and "= option" needs the same price."""
    from planner.export.money_tables import grid_table

    workload = {**SMALL["workload"], "sizing": "littles-law"}
    options = [
        {"name": "bought", "gpu": "H100", "model": "Llama-3.1-8B", "pricing": "purchase", "purchase_usd": 25000},
        {"name": "rented", "gpu": "H100", "model": "Llama-3.1-8B", "pricing": "cloud", "cloud_usd_per_gpu_hour": 1.8},
    ]
    for rate in (0.0, 0.3):  # either option first
        s = parse_scenario({"workload": workload, "option": options, "finance": {"cost_of_capital": rate}}, "s.toml")
        review = build_review(s, default_catalog(), source="s.toml", date="2026-12-05")
        monthly = {r.option.name: r.money.usd_per_gpu_month for r in review.results}
        rows = {(g.price_kind, g.weight_precision): g for g in review.outlook.grid if g.result is not None}
        assert rows[("purchase", "bf16")].result.money.usd_per_gpu_month == pytest.approx(monthly["bought"])
        assert rows[("on-demand", "bf16")].result.money.usd_per_gpu_month == pytest.approx(monthly["rented"])
        labels = {row[2]: row[-1] for row in grid_table(review).rows}
        assert labels["purchase"].endswith("= option bought") and labels["on-demand"].endswith("= option rented")


def test_a_horizon_longer_than_the_amortization_says_where_the_present_values_disagree():
    """Trial 7 F3: 48 months of ownership, capex over 36, 8% and a 20% residual: renting ranked first at $42,048 a
    month against buying's $42,998, while the Ownership sheet's present values made buying $388,036 cheaper. The
    review now says so and how to rank as the present values do; with the amortization at the horizon it needs not."""
    from planner.export.money_tables import present_value_line

    workload = {**SMALL["workload"], "sizing": "littles-law"}
    bought = {
        "name": "bought",
        "gpu": "H100",
        "model": "Llama-3.1-8B",
        "pricing": "purchase",
        "purchase_usd": 25000,
        "node_size": 1,
    }
    rented = {
        "name": "rented",
        "gpu": "H100",
        "model": "Llama-3.1-8B",
        "pricing": "cloud",
        "cloud_usd_per_gpu_hour": 1.8,
    }
    finance = {"cost_of_capital": 0.08, "residual_value_share": 0.2, "horizon_months": 48}
    lines = {}
    for months in (36, 48):
        options = [{**bought, "amortization_months": months}, rented]
        s = parse_scenario({"workload": workload, "option": options, "finance": finance}, "s.toml")
        review = build_review(s, default_catalog(), source="s.toml", date="2026-12-05")
        pv = {r.option.name: review.outlook.of(r.option.name).ownership.present_value_usd for r in review.results}
        lines[months] = (review.recommended.option.name, min(pv, key=pv.get), present_value_line(review))
    first, cheapest, line = lines[36]
    assert (first, cheapest) == ("rented", "bought")
    assert line.startswith("Over the 48-month horizon bought costs $") and "amortization_months = 48 ranks" in line
    assert lines[48][0] == lines[48][1] == "bought" and lines[48][2] == ""
