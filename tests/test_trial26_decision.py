"""Trial 26 (an FP&A analyst reading the review): the Summary opens with a decision box (F11), names the capex figures
to confirm (F20) and gives each other model's own answer (F3).

The scenario TWO_MODELS is test_export.py's HAND (500 concurrent requests, sized by Little's law: the money, not the
sizing, is under test) with two models, each bought and rented on H100: Llama-2-7B bought at the catalog's price in
8-GPU nodes (16 GPUs, test_trial26_money.py's H100_CAPEX and H100_OPEX_MONTH a GPU) or rented at $3.00 a GPU-hour (12
GPUs: test_trial26_money.py's 12 rented GPUs at HAND's load), Qwen3-8B bought likewise (8 GPUs) or rented at $1.00 a
GPU-hour (7 GPUs). Rented Qwen3-8B is the cheapest; for Llama-2-7B, buying is.
"""

from __future__ import annotations

import io
import tomllib

import openpyxl
import pytest
from test_export import DATE, HAND
from test_trial26_money import H100_CAPEX, H100_OPEX_MONTH

from planner.catalog import default_catalog
from planner.export import build_review, render
from planner.export.decision import DETAIL_HEADING, capex_line, decision_rows, decision_text, model_lines
from planner.export.scenario import parse_scenario
from planner.io.safetext import md_text

HOURS = 730  # a month of rent (ownership.RENT_HOURS)

TWO_MODELS = (
    HAND.replace("{bought}", "H100 bought")
    .replace("purchase_usd = 30000\n", "node_size = 8\n")  # the catalog's price: an estimate (catalogs/gpus.toml)
    .replace("cloud_usd_per_gpu_hour = 2.0", "cloud_usd_per_gpu_hour = 3.0")
    + """
[[option]]
name = "Qwen bought"
model = "Qwen3-8B"
gpu = "H100"
pricing = "purchase"
node_size = 8
[[option]]
name = "Qwen rented"
model = "Qwen3-8B"
gpu = "H100"
pricing = "cloud"
cloud_usd_per_gpu_hour = 1.0
"""
)
#: the scenario's own quotes for every capex part, in [defaults]: nothing left to confirm
QUOTED = TWO_MODELS.replace(
    "[defaults]\n", "[defaults]\npurchase_usd = 30000\nhost_server_usd = 32010\nnetworking_usd = 15060\n"
)


def review_of_text(text: str):
    return build_review(parse_scenario(tomllib.loads(text)), default_catalog(), source="two.toml", date=DATE)


@pytest.fixture(scope="module")
def two():
    """The two-model review, its xlsx Summary sheet and its Markdown, rendered once."""
    review = review_of_text(TWO_MODELS)
    book = openpyxl.load_workbook(io.BytesIO(render(review, "xlsx")))
    return review, book["Summary"], render(review, "md").decode()


def by_name(review, name: str):
    return next(r for r in review.results if r.option.name == name)


class TestF11DecisionBox:
    """F11: the recommendation was one 514-word paragraph; the box says option, monthly cost, horizon total,
    commitment, the risk and the test first, a line each."""

    def test_the_box_is_the_first_text_under_the_recommendation(self, two):
        review, ws, _ = two
        labels = [line.split(":", 1)[0] for line in ws["A7"].value.split("\n")]
        assert labels[:6] == ["Option", "Monthly cost", "Over 3 years", "Commitment", "Risk", "Test before committing"]
        assert ws["A7"].value == decision_text(review)

    def test_the_box_carries_the_recommendations_figures(self, two):
        """Rented Qwen3-8B: 7 GPUs x $1.00 x 730 h = $5,110 a month, billed by the hour (outlook.commitment)."""
        review, _, _ = two
        rows = dict(decision_rows(review))
        assert review.recommended.option.name == "Qwen rented"
        assert rows["Option"] == "Qwen rented (Qwen3-8B on H100 SXM 80GB, on-demand)"
        assert rows["Monthly cost"] == f"${7 * 1.0 * HOURS:,.0f} a month, 7 GPUs"
        ow = review.outlook.of("Qwen rented").ownership
        assert rows["Over 3 years"].startswith(f"${ow.total_usd:,.0f} total")
        assert rows["Commitment"] == "not committed: billed by the hour"
        # nothing is bought on a rented recommendation (the trial: "before buying")
        assert rows["Test before committing"].startswith("Before committing, run one replica (1 GPU)")

    def test_a_bought_recommendation_states_its_capex_and_term(self):
        """Llama-2-7B alone: bought, 16 x $35,883.75 = $574,140 committed, amortized over 36 months (HAND)."""
        review = review_of_text(TWO_MODELS.split('[[option]]\nname = "H100 rented"')[0])
        rows = dict(decision_rows(review))
        assert rows["Commitment"] == (
            f"${16 * H100_CAPEX:,.0f} of hardware (16 GPUs) paid when bought, not refundable; amortized over 36 months"
        )
        assert rows["Monthly cost"] == f"${16 * (H100_CAPEX / 36 + H100_OPEX_MONTH):,.0f} a month, 16 GPUs"
        assert rows["Test before committing"].startswith("Before buying, run one replica (1 GPU)")

    def test_the_detail_paragraph_follows_under_its_heading(self, two):
        """No information lost: the whole recommendation paragraph is the first note below the box."""
        review, ws, md = two
        cells = [ws.cell(row=r, column=1).value for r in range(8, ws.max_row + 1)]
        heading = cells.index(DETAIL_HEADING)
        assert cells[heading + 1 : heading + 1 + len(review.reason.split("\n"))] == review.reason.split("\n")
        assert cells.index("Sensitivity (snapshot)") < heading < cells.index("How to read the other sheets")
        # Markdown: the box (a table) first, then the heading and the paragraph
        box, detail = md.index("| Decision | |"), md.index(f"### {md_text(DETAIL_HEADING, line_start=False)}")
        assert md.index("**Recommendation: ") < box < detail < md.index("## Options")
        assert "| Risk | " in md[box:detail] and "| Test before committing | " in md[box:detail]

    def test_the_readme_examples_box_is_short_and_free_of_internals(self, readme_example_review):
        """The README example's recommendation paragraph runs to several hundred words of held-out ranges and
        sources; the box stays a few lines, in money and actions."""
        text = decision_text(readme_example_review)
        assert len(text.split()) < 0.5 * len(readme_example_review.reason.split())
        assert len(text.split("\n")) <= 8
        for internal in ("held-out p", "sizing_lengths", "sources:", "pooled", "sglang", "latency_margin ="):
            assert internal not in text


class TestF20CapexToConfirm:
    """F20: a purchase rested on a web estimate for the GPU and 2023/2024 host and network figures, flagged on the
    Assumptions sheet alone."""

    def test_the_cheapest_bought_options_catalog_figures_are_named_with_their_keys(self, two):
        """Qwen bought is the cheapest bought option (8 GPUs against Llama's 16). Its GPU price is the catalog's
        "Hugging Face hardware page (estimate)" quote (catalogs/gpus.toml); host server $32,010 (2023-05) and
        network $15,060 (2024-08) per node, catalogs/costs/ownership.toml, are over a year before DATE (2026-06-01)."""
        review, _, _ = two
        line = capex_line(review)
        assert line.startswith("Capex to confirm: the cheapest bought option's (Qwen bought) capex rests on catalog")
        assert "GPU price $30,000 (Hugging Face hardware page (estimate), 2026-05-18: an estimate, not a quote)" in line
        assert "host server $32,010 per node (dated 2023-05, stale)" in line
        assert "network $15,060 per node (dated 2024-08, stale)" in line
        assert "(purchase_usd, host_server_usd, networking_usd in its [[option]] or [defaults])" in line
        row = dict(decision_rows(review))["Capex to confirm"]
        assert row.startswith("The cheapest bought option's (Qwen bought) capex") and line.endswith(row[1:])

    def test_the_assumptions_sheet_flags_the_same_figures(self, two):
        """The same rule (``ownership.stale_words``) as the Assumptions rows: each figure named here is flagged there."""
        review, _, _ = two
        stale = [a.what for a in review.assumptions if a.what.startswith("Qwen bought") and "stale:" in a.what]
        assert any("host server" in w for w in stale) and any("network" in w for w in stale)

    def test_quotes_the_scenario_gives_leave_nothing_to_confirm(self):
        assert capex_line(review_of_text(QUOTED)) == ""


class TestF3OtherModels:
    """F3: with Qwen3-235B and gpt-oss-120b in one scenario, the review picked the model on cost and never said "if
    Qwen3, buy"."""

    def test_each_other_model_gets_its_cheapest_option_and_buy_or_rent(self, two):
        """Llama-2-7B: bought 16 x ($35,883.75 / 36 + $379.87) = $22,026 a month against rented 12 x $3.00 x 730 h =
        $26,280: buying costs $4,254 a month less; over 3 years, the Ownership sheet's totals' difference."""
        review, ws, md = two
        bought = 16 * (H100_CAPEX / 36 + H100_OPEX_MONTH)
        rented = 12 * 3.0 * HOURS
        assert by_name(review, "H100 bought").monthly_usd == pytest.approx(bought)
        assert by_name(review, "H100 rented").monthly_usd == pytest.approx(rented)
        totals = {n: review.outlook.of(n).ownership.total_usd for n in ("H100 bought", "H100 rented")}
        assert model_lines(review) == [
            f"If Llama-2-7B is chosen: H100 bought, ${bought:,.0f} a month (16 GPUs, purchase); buy: H100 bought costs "
            f"${rented - bought:,.0f} a month less than H100 rented, "
            f"${totals['H100 rented'] - totals['H100 bought']:,.0f} over 3 years."
        ]
        assert model_lines(review)[0] in ws["A7"].value and md_text(model_lines(review)[0], line_start=False) in md

    def test_at_a_cost_of_capital_the_horizon_is_in_present_value(self):
        """The trial's question ("if Qwen3: buy, saves ~$2.3M PV"): with [finance] cost_of_capital set, the saving over
        the horizon is the Ownership sheet's present values' difference."""
        review = review_of_text(TWO_MODELS + "\n[finance]\ncost_of_capital = 0.08\n")
        pv = {n: review.outlook.of(n).ownership.present_value_usd for n in ("H100 bought", "H100 rented")}
        assert model_lines(review)[0].endswith(
            f"less than H100 rented, ${pv['H100 rented'] - pv['H100 bought']:,.0f} in present value over 3 years."
        )

    def test_one_model_has_no_such_line(self):
        review = review_of_text(TWO_MODELS.split('[[option]]\nname = "Qwen bought"')[0])
        assert model_lines(review) == [] and "Other model" not in dict(decision_rows(review))


class TestF11TheOneRisk:
    """The box's risk is one sentence in money, chosen in order (``decision.risk_line``): the deployment's own runs,
    then the held-out slow end, then the prediction range. Fakes carry the figures each rule reads."""

    @staticmethod
    def review_with(own=None, slow=None):
        from types import SimpleNamespace

        rec = SimpleNamespace(
            monthly_usd=10_497.0, margin=0.47, time_range=(-0.25, 0.47), own_runs=own, slow_end=slow, under_load=None
        )
        return SimpleNamespace(recommended=rec)

    def test_own_runs_slower_than_the_margin_set_the_budget(self):
        """The trial's F18 figures: median 1.81x, 6 GPUs, $15,746 a month against the plan's $10,497 (+50%)."""
        from planner.export.decision import risk_line
        from planner.export.records import OwnRunsBudget

        own = OwnRunsBudget("TPOT", 1.811, 7, 5, 6, 15_746.0)
        assert risk_line(self.review_with(own=own)) == (
            "This deployment's own published runs measured 1.81x the predicted TPOT (median): at that speed it needs "
            "6 GPUs, $15,746 a month (+50%); budget that until the test passes."
        )

    def test_a_slow_end_above_the_plan_is_priced(self):
        from planner.export.decision import risk_line
        from planner.export.records import SlowEnd

        slow = SlowEnd(95, 2.0, 1.5, "", "", 5, 10, 26_242.5)
        assert risk_line(self.review_with(slow=slow)).endswith(
            "it needs 10 GPUs, $26,242 a month (+150%): budget the plan's $10,497 once the test passes."
        )

    def test_otherwise_the_range_and_the_margin(self):
        from planner.export.decision import risk_line

        assert risk_line(self.review_with()) == (
            "Measured times fall within -25% / +47% of the predictions on 80% of published runs; the fleet is sized "
            "with a +47% margin."
        )
