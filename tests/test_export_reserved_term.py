"""F17 (a finance analyst's user trial): a reserved price commits a number of GPUs for a term, paid whether used or
not, so a growing fleet either signs its peak up front or signs a contract at each step up, each running its whole
term, possibly past the review's horizon. ``[finance] reserved_term_months`` sets the term; without it (and without a
term in the quote's source) the review keeps its cash phased as if billed monthly, word for word as before.

Expected values are derived here from the catalog's H200 reserved rate: catalogs/gpus.toml, H200 SXM 141GB
``[[gpu.prices]] kind = "reserved"``, usd_per_gpu_hour = 2.79, "Hyperstack 'Reserved' tier 'NVIDIA H200 SXM
price_per_hour_from: 2.79'" (2026-08-26), billed 730 hours a month (ownership.py's rented rule).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_trial14_money import example_data, review_from, with_option

from planner.catalog import default_catalog
from planner.export import finance
from planner.export import money_tables as money
from planner.export.ownership import RESERVED_PHASING, reserved_term, stated_term_months
from planner.export.scenario import ScenarioError, parse_scenario

pytestmark = pytest.mark.xdist_group("test_export_review")

HOURS = 730.0
H200_RESERVED_USD_PER_GPU_HOUR = 2.79  # catalogs/gpus.toml, H200 SXM 141GB, kind = "reserved" (Hyperstack)
RATE = H200_RESERVED_USD_PER_GPU_HOUR * HOURS  # $2,036.70 a GPU-month
#: 8 GPUs for the first 12 months, then 16 to the end of a 36-month horizon
FLEET = np.array([8.0] * 12 + [16.0] * 24)


def test_the_rate_is_the_catalogs():
    quote = default_catalog().gpu("H200").price("reserved")
    assert quote.usd_per_gpu_hour == H200_RESERVED_USD_PER_GPU_HOUR
    assert quote.provider == "Hyperstack (reserved contract)"


class TestContractsByHand:
    """``finance.reserved_cash``, the one function every surface's reserved figures come from."""

    def test_a_12_month_term_signs_at_each_step_and_renews(self):
        """Month 1: 8 GPUs for months 1-12; month 13: they end and 16 are needed: 16 for 13-24; month 25: 16 for
        25-36. Cash 8 x 12 + 16 x 24 = 480 GPU-months, none past month 36."""
        rc = finance.reserved_cash(FLEET, RATE, 12)
        assert rc.contracts == ((1, 8), (13, 16), (25, 16))
        assert rc.basis == finance.STEPPED
        assert rc.horizon_usd == pytest.approx(480 * RATE)
        assert rc.cash_by_month[0] == pytest.approx(8 * RATE) and rc.cash_by_month[12] == pytest.approx(16 * RATE)
        assert rc.beyond_horizon_usd == 0
        assert rc.monthly_usd == pytest.approx(480 * RATE / 36)  # $27,155.99: the horizon's cash / 36 months
        assert round(rc.monthly_usd, 2) == 27156.0

    def test_the_peak_up_front_alternative(self):
        """The peak (16) signed from month 1 and again at 13 and 25: 16 x 36 = 576 GPU-months, 96 more than the
        steps: the steps are taken."""
        rc = finance.reserved_cash(FLEET, RATE, 12)
        assert rc.peak_gpus == 16
        assert rc.peak_usd == pytest.approx(576 * RATE)
        assert rc.peak_beyond_usd == 0
        assert rc.stepped_usd == pytest.approx(480 * RATE)
        assert rc.stepped_usd < rc.peak_usd

    def test_a_36_month_term_runs_past_the_horizon(self):
        """Month 1: 8 GPUs for months 1-36; month 13: 8 more for 13-48. In the horizon 8 x 36 + 8 x 24 = 480
        GPU-months; the second contract's months 37-48, 8 x 12 = 96 GPU-months, fall due after it: reported, not
        dropped. The peak up front commits 16 x 36 = 576, the same in all: the steps are taken, their cash later."""
        rc = finance.reserved_cash(FLEET, RATE, 36)
        assert rc.contracts == ((1, 8), (13, 8))
        assert rc.horizon_usd == pytest.approx(480 * RATE)
        assert rc.beyond_horizon_usd == pytest.approx(96 * RATE)
        assert rc.committed_usd == pytest.approx(576 * RATE)
        assert rc.peak_usd == pytest.approx(576 * RATE)
        assert rc.basis == finance.STEPPED

    def test_a_24_month_term_renews_into_the_next_year(self):
        """(1, 8) runs 1-24, (13, 8) 13-36, (25, 8) renews the first for 25-48: 12 x 8 = 96 GPU-months past the
        horizon. The peak up front: 16 for 1-24 and 25-48 = 768 GPU-months, 192 of them past month 36."""
        rc = finance.reserved_cash(FLEET, RATE, 24)
        assert rc.contracts == ((1, 8), (13, 8), (25, 8))
        assert rc.beyond_horizon_usd == pytest.approx(96 * RATE)
        assert rc.peak_usd == pytest.approx(768 * RATE) and rc.peak_beyond_usd == pytest.approx(192 * RATE)


class TestScenarioInput:
    def _parse(self, value):
        data = example_data()
        data["finance"] = {**data.get("finance", {}), "reserved_term_months": value}
        return parse_scenario(data, "s.toml")

    def test_accepted(self):
        assert self._parse(36).finance.reserved_term_months == 36

    def test_an_invalid_term_names_the_accepted_ones(self):
        with pytest.raises(ScenarioError) as err:
            self._parse(18)
        assert (
            "s.toml: finance.reserved_term_months: 18 months is not a reserved term the review models; write one of "
            "6, 12, 24, 36, 48, 60"
        ) in str(err.value)

    def test_years_are_told_the_months(self):
        with pytest.raises(ScenarioError, match="3 looks like years: write 36"):
            self._parse(3)

    def test_text_is_refused(self):
        with pytest.raises(ScenarioError, match="'1 year' is not a term; write a whole number of months"):
            self._parse("1 year")

    def test_a_term_stated_in_a_quotes_source_is_the_default(self):
        """No shipped reserved quote states one (Hyperstack's: "the term is set per contract")."""
        assert stated_term_months("reserved, 1-year commitment, billed monthly") == 12
        assert stated_term_months("a 36-month term") == 36
        assert stated_term_months(default_catalog().gpu("H200").price("reserved").source) is None
        fin = parse_scenario(example_data(), "s.toml").finance
        assert reserved_term(fin, default_catalog().gpu("H200").price("reserved")) == (None, "")


@pytest.fixture(scope="module")
def plain():
    """The example with its H200 option paying reserved, no term (main's behaviour), sized by Little's law."""
    return review_from(with_option(example_data(), "H200, rented", price_kind="reserved"))


@pytest.fixture(scope="module")
def termed():
    """The same with [finance] reserved_term_months = 12."""
    data = with_option(example_data(), "H200, rented", price_kind="reserved")
    data["finance"] = {**data.get("finance", {}), "reserved_term_months": 12}
    return review_from(data)


class TestWithoutTheKey:
    """No term: the reserved figures are main's: each month's phased fleet x the rate
    (``finance.rented_cash_by_month``, the function main computes them with), and main's words."""

    def test_cash_is_mains(self, plain):
        r = next(x for x in plain.results if x.option.name == "H200, rented")
        ow = plain.outlook.of("H200, rented").ownership
        phased = finance.monthly_from_quarters(np.asarray(ow.gpus_by_quarter, dtype=float), 36)
        assert ow.cash_by_month == tuple(
            float(x) for x in finance.rented_cash_by_month(phased, r.money.usd_per_gpu_month)
        )
        assert ow.total_usd == finance.total_usd(finance.rented_cash_by_month(phased, r.money.usd_per_gpu_month))
        assert ow.reserved is None and ow.beyond_horizon_usd == 0
        assert ow.commitment == (
            "committed per contract: a reserved rate's term and volume are set in it (see the price source); "
            f"{RESERVED_PHASING}"
        )

    def test_grid_words_and_figures_are_mains(self, plain):
        rows = [g for g in plain.outlook.grid if g.price_kind == "reserved" and g.result is not None]
        assert rows and all(g.monthly_usd == g.result.monthly_usd for g in rows)
        notes = [row[-1] for row in money.grid_table(plain).rows if row[2] == "reserved" and row[0] is not None]
        assert all(
            "reserved: a 'from' rate, term set per contract; cash phased as if billed monthly; the term's commitment "
            "is not modelled" in n
            for n in notes
        )
        assert not any("contract term" in a.what for a in plain.assumptions)


class TestWithATerm:
    def test_the_options_cash_is_its_contracts(self, termed):
        """The H200 option's phased fleet, quarter by quarter, under 12-month contracts; horizon totals are the
        horizon's cash, what falls due past month 36 is in the commitment."""
        r = next(x for x in termed.results if x.option.name == "H200, rented")
        ow = termed.outlook.of("H200, rented").ownership
        assert r.money.usd_per_gpu_month == pytest.approx(RATE)  # the catalog's H200 reserved rate
        phased = finance.monthly_from_quarters(np.asarray(ow.gpus_by_quarter, dtype=float), 36)
        rc = ow.reserved
        assert rc is not None and rc.term_months == 12
        # by hand: every contract runs 12 months; the first year's contracts sign the quarters' steps (months 1, 4,
        # 7, 10), each signed again 12 months later while the fleet still needs it
        first_year = [(m, g) for m, g in rc.contracts if m <= 12]
        steps = np.diff(phased[:12], prepend=0.0)
        assert first_year == [(m + 1, int(s)) for m, s in enumerate(steps) if s > 0]
        held = sum(g * 12 for _, g in rc.contracts)  # GPU-months committed in all
        assert rc.committed_usd == pytest.approx(held * RATE)
        assert ow.total_usd == pytest.approx(rc.horizon_usd)
        assert ow.total_usd == pytest.approx(sum(ow.cash_by_month))
        assert rc.beyond_horizon_usd == pytest.approx(rc.committed_usd - rc.horizon_usd)
        assert rc.beyond_horizon_usd > 0
        assert f"of which ${rc.beyond_horizon_usd:,.0f} falls due after the 36-month horizon" in ow.commitment
        assert f"monthly cost shown: the horizon's reserved cash / 36 months = ${rc.monthly_usd:,.0f}" in ow.commitment

    def test_the_grid_shows_and_ranks_by_the_horizons_cash(self, termed):
        rows = [g for g in termed.outlook.grid if g.price_kind == "reserved" and g.ownership is not None]
        for g in rows:
            assert g.monthly_usd == pytest.approx(g.ownership.total_usd / 36)
        meeting = [g for g in termed.outlook.grid if g.result is not None and g.result.meets]
        assert [g.monthly_usd for g in meeting] == sorted(g.monthly_usd for g in meeting)
        table = money.grid_table(termed)
        shown = {(row[1], row[2], row[3]): row[7] for row in table.rows if row[0] is not None}
        g = rows[0]
        assert shown[(g.gpu, "reserved", g.weight_precision)] == g.monthly_usd

    def test_the_words_state_the_term(self, termed):
        notes = [row[-1] for row in money.grid_table(termed).rows if row[2] == "reserved" and row[0] is not None]
        assert notes and all("a 12-month term ([finance] reserved_term_months)" in n for n in notes)
        assert not any("term set per contract" in n or RESERVED_PHASING in n for n in notes)
        row = next(a for a in termed.assumptions if a.what.startswith("Reserved price: contract term"))
        assert (row.value, row.unit) == (12, "months")

    def test_the_options_table_states_the_options_monthly_under_contracts(self, termed):
        """The Options table's monthly cost stays the peak fleet x the rate (its formula, =GPUs x $ per GPU-month);
        its note states the horizon's reserved cash / 36 months beside it."""
        from planner.export.tables import options_table

        rc = termed.outlook.of("H200, rented").ownership.reserved
        table = options_table(termed)
        row = next(x for x in table.rows if x[1] == "H200, rented")
        assert (
            f"reserved in 12-month contracts ({finance.STEPPED}): ${rc.monthly_usd:,.0f} a month over the 36-month "
            "horizon (its reserved cash / 36 months; the monthly cost here is the peak fleet x the rate), "
            f"${rc.beyond_horizon_usd:,.0f} more due after it"
        ) in row[-1]
