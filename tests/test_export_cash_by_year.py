"""Cash by year (a finance analyst's trial, F5) and the Risk row's contingency in dollars a month (F6), on the README's
example (examples/budget-review.toml at test_export.DATE): [finance] horizon_months = 36, so Year 1..3 and a Total.

The review's figures the expected values come from (the README example's export, as docs/export.md quotes it):
- Summary: "H100, bought", 48 GPUs, "$2,369,724 total; year-1 cash $1,932,110", "$1,722,420 of hardware (48 GPUs)"
- Fleet by quarter: H100, bought owns 40 GPUs in Q1 and 48 from Q2 on (so both purchases fall in year 1)
- Costs: capex per GPU all-in $35,884 (= $1,722,420 / 48), amortized over 36 months ([defaults] amortization_months)
- Ownership: GPUs without margin 48 (H100, bought; 8-GPU nodes) and 44 (H100, rented); Options: $2,624.35 per
  GPU-month for H100 rented (the catalog's on-demand median $3.595/h x 730 h)
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from dataclasses import replace

import numpy as np
import openpyxl
import pytest

from planner.export import finance, write_review
from planner.export.cash_by_year import (
    LABELS,
    cash_by_year,
    cash_by_year_heading,
    compared,
    depreciation_by_month,
    option_cash_by_year,
    year_label,
    years_of,
)
from planner.export.decision import decision_rows, margin_contingency

#: One worker builds the README example's review once (conftest.readme_example_review).
pytestmark = pytest.mark.xdist_group("test_export_review")


@pytest.fixture(scope="module")
def review(readme_example_review):
    return readme_example_review


@pytest.fixture(scope="module")
def exported(review, tmp_path_factory):
    """The export run once: review.xlsx, review.md and review.csv as `planner export` writes them."""
    out = tmp_path_factory.mktemp("cash_by_year")
    return {fmt: write_review(review, out / f"review.{fmt}", fmt) for fmt in ("xlsx", "md", "csv")}


@pytest.fixture(scope="module")
def sheet(exported):
    return openpyxl.load_workbook(exported["xlsx"])["Cash by year"]


def _by_name(review, name):
    return next(r for r in review.results if r.option.name == name)


class TestTheView:
    def test_it_shows_the_recommended_the_cheapest_bought_and_the_cheapest_rented(self, review):
        """The example's recommendation is H100, bought (Summary), also the only bought option; the cheapest rented
        option that meets the targets is H100, rented, FP8 weights ($94,477 a month, Break-even's "the cheapest
        rented option")."""
        roles = {r.option.name: role for r, role in compared(review)}
        assert roles == {"H100, bought": "recommended, cheapest bought", "H100, rented, FP8 weights": "cheapest rented"}

    def test_the_years_and_the_total_are_the_ownership_sheets_figures(self, review):
        """Year 1's cash out is Ownership's year-1 cash, the cumulative cash at the end its total, exactly; the years'
        cash out sum to that total (no residual value in the example: residual_value_share 0)."""
        views = cash_by_year(review)
        assert [v.years for v in views] == [3, 3]
        for v in views:
            ow = review.outlook.of(v.option).ownership
            assert v.cash_out_usd[0] == ow.year1_cash_usd
            assert v.cumulative_usd[-1] == ow.total_usd == v.line_total("cumulative")
            assert sum(v.cash_out_usd) == pytest.approx(ow.total_usd, abs=0.005)
            assert v.line_total("cash_out") == pytest.approx(ow.total_usd, abs=0.005)
            for k in range(v.years):
                assert v.capex_usd[k] + v.opex_usd[k] == pytest.approx(v.cash_out_usd[k], abs=0.005)
        bought = views[0]
        assert round(bought.total_usd) == 2_369_724 and round(bought.cash_out_usd[0]) == 1_932_110  # Summary

    def test_capex_falls_in_the_year_the_gpus_are_bought(self, review):
        """H100, bought: 40 GPUs in Q1 and 8 more in Q2 (Fleet by quarter), both in year 1: the year's capex is the
        Summary's commitment, $1,722,420 of hardware (48 x $35,884 all-in), and years 2 and 3 buy nothing. Renting
        buys nothing."""
        rec = _by_name(review, "H100, bought")
        v = option_cash_by_year(review, rec)
        assert review.outlook.of("H100, bought").ownership.gpus_by_quarter[:2] == (40, 48)
        assert v.capex_usd == pytest.approx((48 * rec.money.capex_usd_per_gpu, 0.0, 0.0))
        assert round(v.capex_usd[0]) == 1_722_420
        rented = option_cash_by_year(review, _by_name(review, "H100, rented, FP8 weights"))
        assert rented.capex_usd == (0.0, 0.0, 0.0) and rented.depreciation_usd is None

    def test_depreciation_is_straight_line_from_the_month_bought(self, review):
        """Depreciation per GPU-month is capex / 36 (no residual): year 1 charges 40 GPUs x 12 months + 8 x 9 (bought
        in month 4) = 552 GPU-months, years 2 and 3 48 x 12 = 576 each; the 8 bought in month 4 are 3 months short of
        written off at month 36."""
        rec = _by_name(review, "H100, bought")
        per = rec.money.capex_usd_per_gpu / 36
        assert rec.money.depreciation_usd_per_gpu_month == pytest.approx(per)
        v = option_cash_by_year(review, rec)
        assert v.depreciation_usd == pytest.approx((552 * per, 576 * per, 576 * per))
        assert v.line_total("depreciation") == pytest.approx(48 * rec.money.capex_usd_per_gpu - 8 * 3 * per)

    def test_growth_in_year_2_buys_in_year_2_and_the_residual_comes_back_in_the_last(self, review):
        """The bought option's Ownership replaced by one whose fleet grows to 56 GPUs in Q5 (year 2) and that recovers
        a 20% residual (``outlook.ownership``'s rules, ``finance``'s functions): capex 48 x $35,884 in year 1, 8 x in
        year 2; the residual in year 3; the cumulative cash at the end is the Ownership total."""
        rec = _by_name(review, "H100, bought")
        m, h = rec.money, 36
        quarters = np.array([40, 48, 48, 48, 56, 56, 56, 56, 56, 56, 56, 56], dtype=float)
        cash = finance.owned_cash_by_month(finance.monthly_from_quarters(quarters, h), m.capex_usd_per_gpu,
                                           m.opex_usd_per_gpu_month)  # fmt: skip
        residual = finance.residual_usd(56, m.capex_usd_per_gpu, 0.2)
        oo = review.outlook.of(rec.option.name)
        ow = replace(oo.ownership, gpus_by_quarter=tuple(int(q) for q in quarters), cash_by_month=tuple(cash),
                     residual_usd=residual, total_usd=finance.total_usd(cash, residual))  # fmt: skip
        options = tuple(replace(o, ownership=ow) if o is oo else o for o in review.outlook.options)
        grown = replace(review, outlook=replace(review.outlook, options=options))
        v = option_cash_by_year(grown, rec)
        assert v.capex_usd == pytest.approx((48 * m.capex_usd_per_gpu, 8 * m.capex_usd_per_gpu, 0.0))
        assert v.residual_usd == (0.0, 0.0, residual)
        assert v.cumulative_usd[-1] == ow.total_usd
        assert sum(v.cash_out_usd) - residual == pytest.approx(ow.total_usd, abs=0.005)
        assert v.opex_usd[2] == pytest.approx(12 * 56 * m.opex_usd_per_gpu_month)

    def test_depreciation_rule(self):
        """8 GPUs bought in month 1 and 8 in month 4, a 3-month life: 8 in service in months 1-3 and 8 in months 4-6,
        none after."""
        got = depreciation_by_month(np.array([8, 0, 0, 8, 0, 0, 0], dtype=float), 10.0, 3)
        assert list(got) == [80, 80, 80, 80, 80, 80, 0]

    def test_years_and_labels(self):
        assert (years_of(36), years_of(30), years_of(7)) == (3, 3, 1)
        assert (year_label(1, 36), year_label(3, 30), year_label(1, 7)) == ("Year 1", "Year 3: months 25 to 30",
                                                                            "Year 1: months 1 to 7")  # fmt: skip


class TestTheSurfaces:
    def test_the_sheet_holds_numbers_in_dollar_formats_after_break_even(self, exported, sheet, review):
        names = openpyxl.load_workbook(exported["xlsx"]).sheetnames
        assert names.index("Cash by year") == names.index("Break-even") + 1
        head = [c.value for c in sheet[1]]
        assert head == ["Option", "Price kind", "Line", "Year 1", "Year 2", "Year 3", "Total"]
        rows = {(r[0], r[2]): r for r in sheet.iter_rows(min_row=2, values_only=True) if r[2] in LABELS.values()}
        total = review.outlook.of("H100, bought").ownership.total_usd
        cum = rows[("H100, bought (recommended, cheapest bought)", LABELS["cumulative"])]
        assert cum[6] == total and cum[5] == total
        out = rows[("H100, bought (recommended, cheapest bought)", LABELS["cash_out"])]
        assert sum(out[3:6]) == pytest.approx(out[6], abs=0.005)
        for row in sheet.iter_rows(min_row=2, max_row=len(rows) + 1, min_col=4, max_col=7):
            for c in row:
                assert isinstance(c.value, (int, float)) and c.number_format == '"$"#,##0', c.coordinate
        assert "straight-line over 36 months" in sheet.cell(sheet.max_row, 1).value  # the note names the life

    def test_the_markdown_and_csv_carry_the_same_figures(self, exported, review):
        md = exported["md"].read_text(encoding="utf-8")
        assert "## Cash by year" in md and "| Option | Price kind | Line | Year 1 | Year 2 | Year 3 | Total |" in md
        v = cash_by_year(review)[0]
        assert f"| ${v.depreciation_usd[0]:,.0f} |" in md
        rows = list(csv.DictReader(io.StringIO(exported["csv"].read_text(encoding="utf-8"))))
        row = next(r for r in rows if r["option"] == "H100, bought")
        for k in range(3):
            assert float(row[f"cash_out_usd_year_{k + 1}"]) == pytest.approx(v.cash_out_usd[k], abs=0.005)
            assert float(row[f"capex_usd_year_{k + 1}"]) == pytest.approx(v.capex_usd[k], abs=0.005)
        assert float(row["year1_cash_usd"]) == float(row["cash_out_usd_year_1"])
        unmet = next(r for r in rows if r["option"] == "L40S, rented")  # meets no target: blanks
        assert unmet["cash_out_usd_year_1"] == ""

    @pytest.mark.libreoffice
    def test_the_sheet_prints_on_one_page_at_8_pt_or_more(self, review, tmp_path):
        """The printed PDF (render "pdf": the print xlsx through LibreOffice) gives Cash by year one page, its heading
        whole, every figure there (no ###), as the other one-table sheets print (test_export_print's limits)."""
        from test_export_print import BOX_PER_PT, MARGIN_PT, words
        from workbook_support import require_libreoffice

        from planner.export import render

        require_libreoffice()
        if shutil.which("pdftotext") is None:
            pytest.skip("poppler-utils (pdftotext) not installed")
        pdf = tmp_path / "review.pdf"
        pdf.write_bytes(render(review, "pdf"))
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
        pages = [i for i, p in enumerate(text.split("\f")) if cash_by_year_heading(review) in p]
        assert len(pages) == 1
        assert "###" not in text.split("\f")[pages[0]]
        height, page = words(pdf)[pages[0]]
        body = [(t, b) for _, t, _, b, _ in page if t > MARGIN_PT and b < height - MARGIN_PT]
        assert min(b - t for t, b in body) / BOX_PER_PT >= 8.0 * 0.99
        fill = (max(b for _, b in body) - min(t for t, _ in body)) / (height - 2 * MARGIN_PT)
        assert fill >= 0.25


class TestRiskContingency:
    def test_the_risk_row_gives_the_margin_in_dollars_a_month(self, review, exported):
        """H100, bought (recommended): 48 GPUs with the +25% margin and 48 without it (Ownership; 8-GPU nodes round
        44 up), so 0 x $1,376.64 per GPU-month: contingency $0 a month, in the Risk row of the Summary box."""
        rec = review.recommended
        oo = review.outlook.of(rec.option.name)
        assert (rec.gpus, oo.gpus_without_margin, rec.margin) == (48, 48, 0.25)
        risk = dict(decision_rows(review))["Risk"]
        assert risk.endswith("The +25% latency margin adds no GPU (48 with or without it): contingency $0 a month.")
        box = openpyxl.load_workbook(exported["xlsx"])["Summary"]["A7"].value
        assert "contingency $0 a month" in box

    def test_the_dollars_are_the_extra_gpus_at_the_options_own_price(self, review, exported):
        """H100, rented: 48 GPUs with the margin, 44 without it (Ownership's "GPUs without margin"), $2,624.35 per
        GPU-month (Options' "$ per GPU-month": $3.595/h x 730 h): 4 x $2,624.35 = $10,497.40, "contingency $10,497"."""
        book = openpyxl.load_workbook(exported["xlsx"])
        own = {r[0]: r for r in book["Ownership"].iter_rows(min_row=2, values_only=True)}
        opts = book["Options"]
        head = [c.value for c in opts[1]]
        per = next(r for r in opts.iter_rows(min_row=2, values_only=True) if r[1] == "H100, rented")
        per_gpu_month = per[head.index("$ per GPU-month")]
        gpus, bare = own["H100, rented"][2], own["H100, rented"][4]
        assert (gpus, bare) == (48, 44) and per_gpu_month == pytest.approx(2624.35)
        r = _by_name(review, "H100, rented")
        assert review.outlook.of("H100, rented").margin_usd_per_month(r) == pytest.approx((gpus - bare) * per_gpu_month)
        assert margin_contingency(review, r) == (
            "The +25% latency margin adds 4 GPUs (48 against 44 without it): contingency $10,497 a month "
            "(4 x $2,624 per GPU-month, on-demand)."
        )


@pytest.fixture(scope="module")
def financed():
    """TestAResidualValue's review and its recommended option's cash by year."""
    from test_trial26_money import BOUGHT_ONLY, FINANCE, review_of_text

    review = review_of_text(BOUGHT_ONLY + FINANCE)
    return review, option_cash_by_year(review, review.recommended)


class TestAResidualValue:
    """test_trial26_money's financed review: HAND's bought option alone (16 H100, no growth: all bought in month 1),
    an 8% cost of capital and a 20% residual value, amortization = horizon = 36 months, so the monthly cost charges the
    residual (``ownership.charged_residual_share``) and the Ownership sheet recovers it at month 36."""

    def test_the_residual_comes_back_in_the_last_year_and_the_total_is_ownerships(self, financed):
        """By hand (test_trial26_money F17): capex 16 x $35,883.75 = $574,140 in year 1; residual 20% of it,
        $114,828, in year 3; cumulative cash at the end = 16 x (0.8 x $35,883.75 + 36 x $379.8735), the CSV's
        total_usd_36_months, exactly the Ownership sheet's total."""
        from test_trial26_money import GPUS, H100_CAPEX, H100_OPEX_MONTH

        review, v = financed
        ow = review.outlook.of(review.recommended.option.name).ownership
        assert v.capex_usd == pytest.approx((GPUS * H100_CAPEX, 0.0, 0.0), abs=0.01)
        assert v.residual_usd == pytest.approx((0.0, 0.0, 0.2 * GPUS * H100_CAPEX), abs=0.01)
        assert v.cumulative_usd[-1] == ow.total_usd
        assert ow.total_usd == pytest.approx(GPUS * (0.8 * H100_CAPEX + 36 * H100_OPEX_MONTH), abs=0.01)
        assert sum(v.cash_out_usd) - sum(v.residual_usd) == pytest.approx(ow.total_usd, abs=0.005)

    def test_depreciation_writes_off_capex_less_the_residual(self, financed):
        """($35,883.75 - 20%) / 36 = $797.4167 a GPU-month (test_trial26_money F6), x 16 x 12 = $153,104 a year; over
        the 36 months, 80% of the capex."""
        from test_trial26_money import GPUS, H100_CAPEX

        _, v = financed
        assert v.depreciation_usd == pytest.approx((GPUS * 12 * 0.8 * H100_CAPEX / 36,) * 3, abs=0.01)
        assert v.line_total("depreciation") == pytest.approx(0.8 * GPUS * H100_CAPEX, abs=0.01)
        assert "less a 20% residual value" in v.depreciation_terms
