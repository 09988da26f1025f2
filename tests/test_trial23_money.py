"""Trial 23 (an FP&A analyst budgeting inference for the CFO): the money findings F4, F6, F7 and F12.

Known values come from the catalog's sourced quotes (catalogs/gpus.toml): H100 SXM on demand Lambda $3.99 (8-GPU
instances, 2026-09-20), RunPod $2.69 (per GPU, 2026-05-22), Hyperstack $3.20 (per GPU, 2026-08-26) and CoreWeave
$49.24 / 8 = $6.155 (8-GPU HGX node, 2026-09-20), median (3.20 + 3.99) / 2 = $3.595; reserved Hyperstack $2.72 (per
GPU, the same 2026-08-26 rate card: api-evangelist/nexgen-cloud plans/nexgen-cloud-plans-pricing.yml). H200 SXM on
demand Hyperstack $3.99 (per GPU) and CoreWeave $50.44 / 8 = $6.305 (8-GPU node), median $5.1475; reserved
Hyperstack $2.79. Ownership figures and their dates: catalogs/costs/ownership.toml.
"""

from __future__ import annotations

import datetime

import pytest
from test_export import DATE, HAND, review_of, write_scenario

from planner.catalog import default_catalog
from planner.export.money_tables import ownership_table
from planner.export.ownership import (
    AMORTIZATION_MONTHS_LOW,
    US_COMMERCIAL_USD_PER_KWH,
    chosen_quote,
    money_warnings,
    option_money,
    ownership_defaults,
    quote_text,
    reserved_gap,
    stale_words,
)
from planner.export.scenario import Option, ScenarioError, parse_scenario

HOURS = 730.0
CAT = default_catalog()


def quote(gpu: str, kind: str, provider: str):
    return next(p for p in CAT.gpu(gpu).prices if p.kind == kind and p.provider.startswith(provider))


class TestMedianBillingUnit:
    """F4: a median of quotes billed in different units was billed in the largest (8), a unit no provider rents at
    the median's rate; it is now billed in the smallest unit a quote at or below the median bills in."""

    def test_the_catalog_quotes_are_as_the_docstring_says(self):
        assert [(p.provider.split(" ")[0], p.usd_per_gpu_hour, p.instance_gpus) for p in CAT.gpu("H100").prices
                if p.kind == "on-demand"] == [("Lambda", 3.99, 8), ("RunPod", 2.69, 1), ("Hyperstack", 3.20, 1),
                                              ("CoreWeave", 6.155, 8)]  # fmt: skip
        assert quote("H100", "reserved", "Hyperstack").usd_per_gpu_hour == 2.72

    @pytest.mark.parametrize(
        "gpu, median",
        [
            ("H100", (3.20 + 3.99) / 2),  # RunPod $2.69 and Hyperstack $3.20, both per GPU, are at or below $3.595
            ("H200", (3.99 + 6.305) / 2),  # Hyperstack $3.99 per GPU is below $5.1475
        ],
    )
    def test_h100_and_h200_medians_are_billed_per_gpu(self, gpu, median):
        q = chosen_quote(CAT.gpu(gpu), "on-demand")
        assert q.usd_per_gpu_hour == pytest.approx(median) and q.provider.startswith("median of ")
        assert q.instance_gpus == 1
        # the catalog's rule, every surface's: Gpu.price (plan, the Excel functions, the workbook) bills it the same
        assert CAT.gpu(gpu).price("on-demand") == q and CAT.gpu(gpu).quote("on-demand") == q

    @pytest.mark.parametrize("gpu", ["H100", "H200"])
    def test_the_excel_functions_and_plan_see_the_same_unit(self, gpu):
        """PLANNER_INFO's price.on-demand.instance_gpus (8 before: the largest unit of the quotes) and the quote plan
        costs at are the review's: 1 GPU, at the same median."""
        from planner.excel.catalog import facts
        from planner.report import _chosen_quote

        q = chosen_quote(CAT.gpu(gpu), "on-demand")
        info = facts(gpu)
        assert (info["price.on-demand.usd_per_gpu_hour"], info["price.on-demand.instance_gpus"]) == (q.amount, 1)
        assert _chosen_quote(CAT.gpu(gpu), "on-demand", None) == q
        assert _chosen_quote(CAT.gpu(gpu), "on-demand", " median ") == q
        assert _chosen_quote(CAT.gpu(gpu), "on-demand", "hyperstack").provider.startswith("Hyperstack")

    def test_where_only_a_dearer_quote_bills_per_gpu_the_median_keeps_the_8s(self):
        """Quotes $2 and $3 in 8-GPU instances and $10 per GPU: median $3; only the 8-GPU quotes rent at $3 or less."""
        h100 = CAT.gpu("H100")
        made = [
            h100.prices[0].model_copy(update={"usd_per_gpu_hour": rate, "instance_gpus": n, "provider": who})
            for rate, n, who in ((2.0, 8, "A"), (3.0, 8, "B"), (10.0, 1, "C"))
        ]
        gpu = h100.model_copy(update={"prices": tuple(made)})
        assert gpu.median_billing_unit("on-demand", 3.0) == 8 and gpu.price("on-demand").instance_gpus == 8

    def test_one_providers_quote_keeps_its_own_unit(self):
        """price_basis = "Lambda": Lambda's '8x NVIDIA H100 SXM' at $3.99 is billed in 8s, as before."""
        m = option_money(Option(gpu="H100", model="Llama-3.1-70B", price_basis="Lambda"), CAT.gpu("H100"))
        assert (m.cloud_usd_per_gpu_hour, m.node_size) == (3.99, 8)

    def test_a_rented_fleet_at_the_median_is_billed_per_gpu(self, tmp_path):
        """test_export.py's hand scenario needs 12 GPUs of 1 (11 replicas + 1 spare; 11 GPUs before s208's truncated
        output fit). Rented at the catalog's H100 median, $3.595, they were billed in 8-GPU lots (16 then, $41,989.60);
        now 12 x $3.595 x 730 h = $31,492.20."""
        text = HAND.replace("cloud_usd_per_gpu_hour = 2.0\n", "")
        r = next(x for x in review_of(write_scenario(tmp_path, text)).results if x.option.name == "H100 rented")
        assert (r.gpus, r.money.node_size) == (12, 1)
        assert r.monthly_usd == pytest.approx(12 * 3.595 * HOURS) and round(r.monthly_usd, 2) == 31_492.20


class TestReservedLikeForLike:
    """F4: Hyperstack's reserved $2.72 beside the four-provider median $3.595 read as a 24% saving; Hyperstack's own
    on-demand $3.20 makes it 15%."""

    def test_the_gap_names_the_providers_own_on_demand_rate_and_the_mixed_one(self):
        h100 = CAT.gpu("H100")
        text = reserved_gap(h100, quote("H100", "reserved", "Hyperstack"), chosen_quote(h100, "on-demand"))
        assert f"{1 - 2.72 / 3.20:.0%}" == "15%" and f"{1 - 2.72 / 3.595:.0%}" == "24%"
        assert text == (
            "like for like, Hyperstack's own on-demand rate is $3.20 (2026-08-26): reserved is 15% less; the 24% gap "
            "to the on-demand price rented options pay, $3.595 (the median of 4 quotes), mixes providers "
            '(price_basis = "Hyperstack" prices both at Hyperstack)'
        )

    def test_on_one_providers_basis_there_is_nothing_mixed(self):
        """price_basis = "Hyperstack": on demand is Hyperstack's own $3.20, so only the like-for-like gap is said."""
        opt = Option(gpu="H200", model="Llama-3.1-70B", price_kind="reserved", price_basis="Hyperstack")
        m = option_money(opt, CAT.gpu("H200"))
        assert (
            m.reserved_gap
            == "like for like, Hyperstack's own on-demand rate is $3.99 (2026-08-26): reserved is 30% less"
        )
        assert f"{1 - 2.79 / 3.99:.0%}" == "30%"

    def test_price_from_carries_the_gap_except_where_two_quotes_are_compared_by_provider(self):
        m = option_money(Option(gpu="H100", model="Llama-3.1-70B", price_kind="reserved"), CAT.gpu("H100"))
        assert quote_text(m).startswith("Hyperstack (reserved contract), 2026-08-26; like for like, Hyperstack's own")
        assert quote_text(m, with_gap=False) == "Hyperstack (reserved contract), 2026-08-26"
        on_demand = option_money(Option(gpu="H100", model="Llama-3.1-70B"), CAT.gpu("H100"))
        assert on_demand.reserved_gap == "" and "like for like" not in quote_text(on_demand)

    def test_the_ownership_sheet_says_the_reserved_rows_gap(self, tmp_path):
        """The hand scenario with a reserved H100 option: 12 GPUs x $2.72 x 730 h = $23,827.20 a month; its Ownership
        row's Price from says 15% like for like and that the 24% gap to the median mixes providers."""
        text = HAND + '[[option]]\nname = "H100 reserved"\ngpu = "H100"\nprice_kind = "reserved"\n'
        review = review_of(write_scenario(tmp_path, text))
        r = next(x for x in review.results if x.option.name == "H100 reserved")
        assert r.monthly_usd == pytest.approx(12 * 2.72 * HOURS) and round(r.monthly_usd, 2) == 23_827.20
        table = ownership_table(review)
        keys = [c.key for c in table.columns]
        row = next(x for x in table.rows if x[0] == "H100 reserved")
        said = row[keys.index("price_from")]
        assert "reserved is 15% less" in said and "the 24% gap" in said and "mixes providers" in said


class TestFinanceSlips:
    """F6: years typed as months and $/MWh typed as $/kWh passed without a word."""

    def bought(self, **fields) -> Option:
        return Option(name="H100 buy", gpu="H100", model="Llama-3.3-70B", pricing="purchase", **fields)

    def test_three_months_looks_like_years(self):
        (said,) = money_warnings(self.bought(amortization_months=3))
        assert said == (
            "H100 buy: amortization_months = 3 writes the purchase off in 3 months; 3 looks like years: write 36 for "
            "3 years (the field is in months; default 36)"
        )

    @pytest.mark.parametrize("months", [AMORTIZATION_MONTHS_LOW, 36, 60])
    def test_a_year_or_more_is_not_warned(self, months):
        assert money_warnings(self.bought(amortization_months=months)) == []

    def test_eighty_dollars_a_kwh_looks_like_a_mwh_figure(self):
        (said,) = money_warnings(self.bought(power_usd_per_kwh=80))
        assert said == (
            "H100 buy: power_usd_per_kwh = 80 looks like $/MWh (US commercial power is 0.10-0.23 $/kWh, EIA Table "
            "5.6.A as catalogs/costs/ownership.toml cites); write 0.08 for $80/MWh"
        )
        assert money_warnings(self.bought(power_usd_per_kwh=0.12)) == []  # the catalog's own figure

    def test_the_quoted_range_is_the_catalogs_source(self):
        """ownership.toml: 'US commercial-sector average prices, April 2025, by region: 9.74 (West North Central) to
        22.74 (New England) cents per kWh' (EIA Electric Power Monthly, Table 5.6.A)."""
        source = ownership_defaults().power_usd_per_kwh.source
        low, high = US_COMMERCIAL_USD_PER_KWH
        assert f"{low * 100:.2f} (West North Central) to {high * 100:.2f} (New England) cents per kWh" in source

    def test_a_rented_option_does_not_use_them(self):
        rented = Option(name="r", gpu="H100", model="Llama-3.3-70B", amortization_months=3, power_usd_per_kwh=80)
        assert money_warnings(rented) == []

    def test_the_review_carries_the_warnings(self, tmp_path):
        text = HAND.replace('purchase_usd = 30000\n', 'purchase_usd = 30000\namortization_months = 3\n'
                            'power_usd_per_kwh = 80\n')  # fmt: skip
        review = review_of(write_scenario(tmp_path, text))
        assert any("3 looks like years: write 36 for 3 years" in w for w in review.warnings)
        assert any("power_usd_per_kwh = 80 looks like $/MWh" in w for w in review.warnings)


class TestStaleOwnershipFigures:
    """F7: only GPU quotes were flagged stale; the host server (2023-05), network (2024-08), host power (2023), PUE
    (2024), colocation (2025-02-26) and electricity (2025-04) figures were not."""

    def test_the_rule_is_the_gpu_quotes(self):
        """More than 365 days before the review (PRICE_STALE_AFTER_DAYS); a month-only or year-only date counts from
        its first day, as Price.quoted_on does: 2023-05 is 2023-05-01, 1,315 days before 2026-12-06."""
        assert (datetime.date(2026, 12, 6) - datetime.date(2023, 5, 1)).days == 1315
        assert stale_words("2023-05", "2026-12-06") == (
            "stale: dated 2023-05, 1,315 days before the review; check a current figure"
        )
        assert stale_words("2025-12-06", "2026-12-06") == ""  # 365 days: not yet
        assert stale_words("2025-12-05", "2026-12-06").startswith("stale: dated 2025-12-05, 366 days")
        assert stale_words("", "2026-12-06") == ""  # the scenario's own figure has no date

    def test_the_assumptions_rows_say_which_are_stale(self, tmp_path):
        """The hand scenario's bought H100 on the review date 2026-06-01 (DATE): every ownership figure is over a year
        old (colocation 2025-02-26: 460 days), except where the scenario gives its own (purchase_usd: undated)."""
        review = review_of(write_scenario(tmp_path))
        rows = {a.what.split(" (")[0]: a.what for a in review.assumptions if a.what.startswith("H100 bought: ")}
        d = ownership_defaults()
        for what, fig in (("host server per node", d.host_server_usd), ("network per node", d.networking_usd),
                          ("host power per node", d.host_power_w), ("colocation", d.colocation_usd_per_kw_month),
                          ("electricity", d.power_usd_per_kwh), ("PUE", d.pue)):  # fmt: skip
            assert f"(stale: dated {fig.date}, " in rows[f"H100 bought: {what}"], what
        assert (datetime.date.fromisoformat(DATE) - datetime.date(2025, 2, 26)).days == 460
        assert "460 days before the review" in rows["H100 bought: colocation"]
        assert "stale" not in rows["H100 bought: GPU purchase price"]


class TestOnDemandSpelt:
    """F12: price_kind = "on demand" was refused."""

    BASE = {
        "workload": {"peak_requests_per_s": 5, "average_requests_per_s": 2, "prompt_tokens_mean": 100,
                     "prompt_tokens_high": 200, "output_tokens_mean": 50, "output_tokens_high": 100,
                     "ttft_target_s": 1.5, "tpot_target_s": 0.06},
    }  # fmt: skip

    def scenario(self, **option):
        return parse_scenario({**self.BASE, "option": [{"gpu": "H100", "model": "Llama-3.3-70B", **option}]})

    @pytest.mark.parametrize("said", ["on demand", "on-demand", "ondemand", "On-Demand", "ON DEMAND", "on_demand"])
    def test_the_ways_finance_writes_it_are_on_demand(self, said):
        assert self.scenario(price_kind=said).option[0].price_kind == "on-demand"

    def test_reserved_and_spot_in_any_case(self):
        assert self.scenario(price_kind="Reserved").option[0].price_kind == "reserved"
        assert self.scenario(price_kind=" SPOT ").option[0].price_kind == "spot"

    def test_the_grid_kinds_read_the_same(self):
        s = parse_scenario({**self.BASE, "option": [{"gpu": "H100", "model": "Llama-3.3-70B"}],
                            "finance": {"grid_price_kinds": ["Purchase", "on demand"]}})  # fmt: skip
        assert s.finance.grid_price_kinds == ("purchase", "on-demand")

    def test_another_word_is_still_refused_naming_the_kinds(self):
        with pytest.raises(ScenarioError, match=r"Input should be 'on-demand', 'spot' or 'reserved'.*got 'hourly'"):
            self.scenario(price_kind="hourly")

    def test_on_demand_as_pricing_names_the_way_out(self):
        with pytest.raises(ScenarioError, match='an on-demand rent is pricing = "cloud" with price_kind = "on-demand"'):
            self.scenario(pricing="on demand")
