"""Trial 26 (an FP&A analyst, buy vs rent): the money-presentation findings F6, F13, F14 and F17.

Expected values are hand computations on test_export.py's HAND scenario (its comment: 16 H100 bought in 8-GPU nodes,
capex $35,883.75 and opex $379.8735 a GPU-month, from catalogs/costs/ownership.toml), each worked in its docstring.
The fleet is sized by Little's law (HAND's ``sizing = "littles-law"``): the money, not the sizing, is under test.
"""

from __future__ import annotations

import csv
import io
import tomllib

import openpyxl
import pytest
from test_export import DATE, HAND

from planner.catalog import default_catalog
from planner.export import build_review, render
from planner.export import money_tables as money
from planner.export.csvout import render_csv
from planner.export.scenario import parse_scenario

GPUS = 16  # HAND's bought fleet (test_export.py's comment)
H100_CAPEX = 30000 + (32010 + 15060) / 8  # $35,883.75: GPU + its share of an 8-GPU node's host and network
H100_OPEX_MONTH = 1.275 * 1.3 * 0.12 * 730 + 1.275 * 184.06  # $379.8735: power + colocation of 1,275 W
#: j = 1.08^(1/12) - 1 = 0.0064340, (1 + j)^-36 = 1.08^-3 = 0.793832
J = 1.08 ** (1 / 12) - 1
V36 = 1.08**-3

BOUGHT_ONLY = HAND.replace("{bought}", "H100 bought").split('[[option]]\nname = "H100 rented"')[0]
FINANCE = "\n[finance]\ncost_of_capital = 0.08\nresidual_value_share = 0.2\n"


def review_of_text(text: str):
    return build_review(parse_scenario(tomllib.loads(text)), default_catalog(), source="t26.toml", date=DATE)


def summary_figures(book) -> dict:
    """Summary's label -> value pairs of columns A and B (the key figures)."""
    ws = book["Summary"]
    return {ws.cell(row=r, column=1).value: ws.cell(row=r, column=2).value for r in range(1, ws.max_row + 1)}


@pytest.fixture(scope="module")
def financed(tmp_path_factory):
    """HAND's bought option alone, at an 8% cost of capital and a 20% residual value (amortization = horizon = 36)."""
    review = review_of_text(BOUGHT_ONLY + FINANCE)
    path = tmp_path_factory.mktemp("t26") / "f.xlsx"
    path.write_bytes(render(review, "xlsx"))
    return review, openpyxl.load_workbook(path)


class TestF6ThePnLIsStraightLine:
    """F6: "Total per year (P&L, capex amortized)" was the level payment at the cost of capital x 12: an 8% financing
    charge inside a "P&L" figure, so 3 x it missed the Ownership sheet's 3-year total by $179k in the trial."""

    def test_the_pnl_row_is_straight_line_depreciation_plus_opex(self, financed):
        """By hand: depreciation ($35,883.75 - 20%) / 36 = $797.4167 a GPU-month + opex $379.8735 = $1,177.2902;
        x 16 GPUs x 12 = $226,039.72 a year."""
        _, book = financed
        figures = summary_figures(book)
        pnl = figures["Total per year (P&L: straight-line depreciation + opex)"]
        assert pnl == pytest.approx(GPUS * 12 * (H100_CAPEX * 0.8 / 36 + H100_OPEX_MONTH))
        assert round(pnl) == 226_040
        assert "Total per year (P&L, capex amortized)" not in figures

    def test_the_capital_charge_is_the_rest_of_the_monthly_total(self, financed):
        """By hand: the level payment ($35,883.75 x (1 - 0.2 x 0.793832)) x j / (1 - 0.793832) = $942.06 a
        GPU-month, less the $797.42 of depreciation: $144.64, x 16 x 12 = $27,771 a year; P&L + capital charge =
        the total per month x 12."""
        review, book = financed
        figures = summary_figures(book)
        level = H100_CAPEX * (1 - 0.2 * V36) * J / (1 - V36)
        assert level == pytest.approx(942.06, abs=0.01)
        charge = figures["Capital charge per year (an 8.0% cost of capital: total per month x 12 less the P&L)"]
        assert charge == pytest.approx(GPUS * 12 * (level - H100_CAPEX * 0.8 / 36))
        pnl = figures["Total per year (P&L: straight-line depreciation + opex)"]
        assert pnl + charge == pytest.approx(review.recommended.monthly_usd * 12)

    def test_three_years_of_pnl_are_the_ownership_sheets_full_fleet_total(self, financed):
        """The relation the trial could not explain: with amortization = horizon, 3 x the P&L per year = capex less
        the residual + 36 months of opex = the Ownership sheet's full-fleet 3-year total (16 x $35,883.75 x 0.8 +
        36 x 16 x $379.8735 = $678,119)."""
        review, book = financed
        pnl = summary_figures(book)["Total per year (P&L: straight-line depreciation + opex)"]
        full = review.outlook.of(review.recommended.option.name).ownership.total_full_usd
        assert 3 * pnl == pytest.approx(full)
        assert round(full) == 678_119

    def test_the_budget_request_names_both_bases(self, financed):
        _, book = financed
        line = next(k for k in summary_figures(book) if str(k).startswith("Budget request: "))
        assert (
            "for the P&L, the total per year (depreciation straight-line over 36 months, less a 20% residual " in line
        )
        assert "capex as a level payment at the cost of capital), the basis options rank on" in line


AMORT60 = HAND.replace("{bought}", "H100 bought").replace(
    "purchase_usd = 30000", "purchase_usd = 30000\namortization_months = 60"
)


@pytest.fixture(scope="module")
def amort60():
    """HAND with its bought option written off over 60 months, the ownership horizon left at 36, no residual given."""
    return review_of_text(AMORT60)


class TestF13AmortizationPastTheHorizon:
    """F13: amortization 60 > horizon 36 ranked buying first ($8,821 against $10,497 a month) while the same review
    said renting cost $48,078 less in present value: the horizon counted the whole capex with no residual, though
    24 of the 60 months were still to be charged."""

    def test_the_hardware_is_worth_its_book_value_at_the_horizons_end(self, amort60):
        """By hand, no cost of capital: 24 of 60 months undepreciated, 40% of 16 x $35,883.75 = $229,656; the
        3-year total = 16 x $35,883.75 x 0.6 + 36 x 16 x $379.8735 = $563,291 = 36 x the monthly cost (16 x
        ($35,883.75 / 60 + $379.8735) = $15,647): the horizon counts what its months of the monthly cost do."""
        bought = amort60.outlook.of("H100 bought").ownership
        assert bought.residual_usd == pytest.approx(0.4 * GPUS * H100_CAPEX)
        assert bought.total_full_usd == pytest.approx(GPUS * (0.6 * H100_CAPEX + 36 * H100_OPEX_MONTH))
        monthly = next(r for r in amort60.results if r.option.name == "H100 bought").monthly_usd
        assert monthly == pytest.approx(GPUS * (H100_CAPEX / 60 + H100_OPEX_MONTH))
        assert bought.total_full_usd == pytest.approx(36 * monthly) and round(bought.total_full_usd) == 563_291

    def test_ranking_and_present_values_agree(self, amort60):
        """Bought $15,647 a month ranks before rented 12 x $2.00 x 730 h = $17,520; over 36 months bought totals
        $563,291 against rent's 36 x $17,520 = $630,720, so no sentence says renting is cheaper over the horizon (it
        did: the whole $574,140 of capex against no residual made buying $792,947)."""
        assert amort60.recommended.option.name == "H100 bought"
        rented = amort60.outlook.of("H100 rented").ownership
        assert rented.total_usd == pytest.approx(36 * 12 * 2.0 * 730)
        assert amort60.outlook.of("H100 bought").ownership.total_usd < rented.total_usd
        assert money.present_value_line(amort60) == ""

    def test_a_warning_says_the_basis(self, amort60):
        said = [w for w in amort60.warnings if "runs past the 36-month horizon" in w]
        assert said and said[0].startswith("H100 bought: amortization_months = 60")
        assert "book value at the horizon's end, 40% of capex (straight line)" in said[0]

    def test_with_a_cost_of_capital_the_present_value_is_that_of_the_monthly_costs(self):
        """At 8%: the level payment's balance after 36 of 60 months, (1 - (1 + j)^-24) / (1 - (1 + j)^-60), is the
        book value, and the present value of the 36 months (no growth: the fleet from month 1) is the monthly cost x
        the annuity factor (1 - 1.08^-3) / j = 32.044."""
        review = review_of_text(AMORT60 + "\n[finance]\ncost_of_capital = 0.08\n")
        bought = review.outlook.of("H100 bought").ownership
        share = (1 - (1 + J) ** -24) / (1 - (1 + J) ** -60)
        assert bought.residual_usd == pytest.approx(share * GPUS * H100_CAPEX)
        monthly = next(r for r in review.results if r.option.name == "H100 bought").monthly_usd
        assert bought.present_value_usd == pytest.approx(monthly * (1 - V36) / J, rel=1e-9)

    def test_a_residual_the_scenario_gives_is_kept(self):
        """residual_value_share = 0 written out: the hardware written off at the horizon, as before (no book value)."""
        review = review_of_text(AMORT60 + "\n[finance]\nresidual_value_share = 0\n")
        assert review.outlook.of("H100 bought").ownership.residual_usd == 0.0
        assert not [w for w in review.warnings if "runs past the" in w]


class TestF14ReservedCommitment:
    """F14: a reserved option's Ownership "Commitment" read "committed: a reserved contract; ... not committed for a
    term" in one cell."""

    def test_the_commitment_says_one_thing(self):
        text = HAND.replace("{bought}", "H100 bought").replace(
            "cloud_usd_per_gpu_hour = 2.0", 'cloud_usd_per_gpu_hour = 2.0\nprice_kind = "reserved"'
        )
        commit = review_of_text(text).outlook.of("H100 rented").ownership.commitment
        assert commit.startswith("committed per contract: ")
        assert commit.endswith("the term's commitment is not modelled") and "not committed" not in commit


@pytest.fixture(scope="module")
def rows(financed):
    """The financed review and its CSV's rows."""
    review, _ = financed
    return review, list(csv.DictReader(io.StringIO(render_csv(review))))


class TestF17TheCsvCarriesTheMoney:
    """F17: the CSV lacked year-1 cash, the horizon's total, present value and "$ per M tokens (all)", and its
    ``gpus_high`` / ``monthly_usd_high`` were the +20% sensitivity while the review's Demand cases call x2 "high"."""

    def test_the_cases_are_named_by_their_traffic(self, rows):
        """HAND's traffic_change is 0.2 (the default) and stress_multiplier 2: the names say +20% and x2."""
        _, (row,) = rows
        assert "gpus_high" not in row and "monthly_usd_high" not in row
        assert {"gpus_traffic_minus_20pct", "gpus_traffic_plus_20pct", "monthly_usd_traffic_plus_20pct"} <= set(row)
        assert {"gpus_stress_x2", "monthly_usd_stress_x2", "total_usd_36_months_stress_x2"} <= set(row)
        assert list(row)[-1] == "note"

    def test_the_ownership_figures_are_the_hand_computed_ones(self, rows):
        """By hand (F6 above; no growth, so the fleet is whole from month 1): year-1 cash = 16 x $35,883.75 + 12 x 16
        x $379.8735 = $647,075.71; the 36 months less the 20% residual = $678,119.14; P&L per year $226,039.71;
        $ per M tokens (all) = the monthly cost over every token at the average (the fleet's own figure)."""
        review, (row,) = rows
        assert float(row["year1_cash_usd"]) == pytest.approx(GPUS * (H100_CAPEX + 12 * H100_OPEX_MONTH), abs=0.01)
        assert float(row["total_usd_36_months"]) == pytest.approx(
            GPUS * (0.8 * H100_CAPEX + 36 * H100_OPEX_MONTH), abs=0.01
        )
        assert float(row["pnl_usd_per_year"]) == pytest.approx(226_039.71, abs=0.01)
        own = review.outlook.of("H100 bought").ownership
        assert float(row["present_value_usd_at_8pct"]) == pytest.approx(own.present_value_usd, abs=0.01)
        assert float(row["residual_usd"]) == pytest.approx(0.2 * GPUS * H100_CAPEX, abs=0.01)
        assert row["commitment"].startswith("committed: $574,140 of hardware (16 GPUs)")
        rate = float(review.recommended.fleet.usd_per_million_tokens)
        assert float(row["usd_per_million_tokens"]) == pytest.approx(rate, abs=1e-4)
        stress = review.outlook.of("H100 bought").cases[-1]
        assert stress.multiplier == 2.0 and int(row["gpus_stress_x2"]) == stress.gpus


class TestF1TokenRatesAtTheAverageTraffic:
    """F1 (and trial 25 F8): the $ per M input / output tokens split the bill at the replica's memory-limited batch,
    not at the traffic the tokens are counted at. The unit rule is tested by hand in test_sizing.py
    (``test_the_token_rates_split_the_bill_at_the_average_traffic``); here, that the review's fleets use it."""

    def test_the_reviews_split_is_at_the_average_batch_not_the_full_one(self, amort60):
        from planner.export import sizing

        r = next(x for x in amort60.results if x.option.name == "H100 rented")
        rep, f, w = r.replica, r.fleet, amort60.scenario.workload
        assert len(rep.tpot_by_batch_s) >= rep.batch  # the candidate's TPOT-by-batch curve reached the fleet
        x = r.average_rate_per_s / float(f.replicas)  # the average over the deployed replicas
        b, tpot = sizing.average_batch(x, rep.ttft_mean_s, w.output_tokens_mean, rep.tpot_by_batch_s, rep.tpot_s,
                                       rep.batch)  # fmt: skip
        assert 1.0 <= float(b) < rep.batch  # the average runs fewer sequences than memory holds
        share = float(sizing.prefill_share(rep.ttft_mean_s, w.output_tokens_mean, tpot, float(b)))
        tokens_in = float(sizing.tokens_per_month(r.average_rate_per_s, w.prompt_tokens_mean)) / 1e6
        assert float(f.usd_per_million_input) == pytest.approx(r.monthly_usd * share / tokens_in)
        at_full = float(sizing.prefill_share(rep.ttft_mean_s, w.output_tokens_mean, rep.tpot_s, rep.batch))
        assert share < at_full  # the full batch shares each decode step more widely: prompts took more of the bill
