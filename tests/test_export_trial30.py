"""Trial 30 (/work/trial30-findings.md): a finance analyst's 3-year budget for a 70B chat service, bought against rented
H100s. Known values are the review's own figures (its Total cost of ownership and Ownership tables) and the trial's
hand checks; the catalog figures are test_export_money.py's (H100 on-demand median $3.595/GPU-h, reserved $2.72,
purchase $30,000 + ($32,010 + $15,060) / 8 = $35,883.75 all-in; opex $379.8735 a GPU-month)."""

from __future__ import annotations

import math
import tomllib

import pytest
from click.testing import CliRunner
from trial30_scenarios import CHAT70B, CHAT70B_QUOTE

from planner.catalog import default_catalog
from planner.cli import main
from planner.export import breakeven, build_review, render
from planner.export.scenario import parse_scenario

pytestmark = pytest.mark.xdist_group("test_export_trial30")

DATE = "2026-12-07"
HOURS = 730.0
CAPEX_GPU = 30000 + (32010 + 15060) / 8  # $35,883.75 (test_export_money.H100_CAPEX)
OPEX_GPU = 1.275 * 1.3 * 0.12 * HOURS + 1.275 * 184.06  # $379.8735 (test_export_money.H100_OPEX_MONTH)


def _review(text: str, name: str):
    return build_review(parse_scenario(tomllib.loads(text), name), default_catalog(), source=name, date=DATE)


@pytest.fixture(scope="module")
def chat():
    return _review(CHAT70B, "chat70b.toml")


@pytest.fixture(scope="module")
def quote():
    return _review(CHAT70B_QUOTE, "chat70b-quote.toml")


def _by(review, name):
    return next(r for r in review.results if r.option.name == name)


def test_break_even_month_rule():
    """Cumulative cash 861,210 + 9,117 m (bought) against 52,487 m (rented): 861,210 / (52,487 - 9,117) = 19.9, so
    month 19 still has buying the dearer (1,034,433 > 997,253) and month 20 the cheaper (1,043,550 < 1,049,740)."""
    import numpy as np

    bought = np.full(36, 9117.0)
    bought[0] += 861210.0
    assert breakeven.break_even_month(bought, np.full(36, 52487.0)) == 20
    # a rent below the opex never catches up; the horizon's end is the last month looked at
    assert breakeven.break_even_month(bought, np.full(36, 9000.0)) is None
    assert breakeven.break_even_month(bought[:19], np.full(19, 52487.0)) is None


def test_buying_breaks_even_against_on_demand_in_month_20(chat):
    """The trial's hand check on the review's own figures: capex 24 x $35,883.75 = $861,210, opex 24 x $379.87 =
    $9,117 a month, rent 20 x $3.595 x 730 = $52,487 a month: 861,210 / (52,487 - 9,117) = 19.9 months, month 20.
    Against the reserved 20 x $2.72 x 730 = $39,712: 861,210 / (39,712 - 9,117) = 28.1, month 29."""
    bought, rented, reserved = _by(chat, "H100, bought"), _by(chat, "H100, rented"), _by(chat, "H100, reserved")
    assert (bought.gpus, rented.gpus, reserved.gpus) == (24, 20, 20)  # the fleets differ
    assert bought.money.capex_usd_per_gpu * 24 == pytest.approx(861210, abs=1)
    assert bought.money.opex_usd_per_gpu_month * 24 == pytest.approx(9117, abs=1)
    assert rented.monthly_usd == pytest.approx(52487, abs=1)
    assert reserved.monthly_usd == pytest.approx(39712, abs=1)
    months = {b.rented: b.month for b in breakeven.break_evens(chat)}
    assert months["H100, rented"] == math.ceil(861210 / (52487 - 9117)) == 20
    assert months["H100, reserved"] == math.ceil(861210 / (39712 - 9117)) == 29
    (line,) = breakeven.buy_rent_lines(chat)
    assert "against H100, rented (on-demand) in month 20" in line
    md = render(chat, "md").decode()
    assert f"| Buy or rent | {line} |" in md.replace("\\_", "_")  # the Summary's decision box
    # Ownership: the cumulative cash at month 12 is the year-1 cash (trial: $970,614 = 861,210 + 12 x 9,117)
    table = breakeven.cumulative_table(chat)
    row = next(r for r in table.rows if r[0] == "H100, bought")
    assert table.columns[5].header == "By month 12"
    assert row[5] == pytest.approx(970614, abs=1)


def test_capex_break_even_and_the_quote_that_flips_it(chat, quote):
    """Buying (24 GPUs) costs as much a month as the cheapest rented option (reserved, $39,712) where
    24 x (level payment of N over 36 months at 8% + $379.8735 opex) = 39,712: with j = 1.08^(1/12) - 1 and
    a = j / (1 - (1 + j)^-36) = 0.0312076, N = (39,712 / 24 - 379.8735) / a = $40,849 per GPU all-in. The trial's quote,
    $40,000 a GPU + ($80,000 + $15,060) / 8 = $51,882.50 all-in, is above it, and there the reserved option is
    recommended (the trial: "Recommended: H100, reserved ... $39,712/month; 2. H100, bought 24 GPUs $47,976")."""
    j = 1.08 ** (1 / 12) - 1
    a = j / (1 - (1 + j) ** -36)
    hand = (39712 / 24 - OPEX_GPU) / a
    assert hand == pytest.approx(40849, abs=1)
    (c,) = breakeven.capex_break_evens(chat)
    assert (c.rented, c.recommended) == ("H100, reserved", True)
    assert c.now_usd == pytest.approx(CAPEX_GPU)
    assert c.break_even_usd == pytest.approx(hand, abs=0.01)
    (line,) = breakeven.buy_rent_lines(chat)
    assert "Buying stays cheapest up to $40,849 per GPU all-in (now $35,884;" in line
    # the quote: same fleet and opex, so the same break-even; the capex is above it and renting wins
    assert quote.recommended.option.name == "H100, reserved"
    assert _by(quote, "H100, bought").monthly_usd == pytest.approx(47976, abs=1)
    (q,) = breakeven.capex_break_evens(quote)
    assert q.now_usd == pytest.approx(40000 + (80000 + 15060) / 8)
    assert q.break_even_usd == pytest.approx(hand, abs=0.01)
    assert q.break_even_usd < q.now_usd
    (qline,) = breakeven.buy_rent_lines(quote)
    assert "Buying would be cheapest below $40,849 per GPU all-in (now $51,882;" in qline
    assert "against H100, reserved (reserved): not within the 36-month horizon" in qline


def test_warnings_go_to_stderr_after_the_ranked_list(tmp_path, chat):
    """F9: amortization_months = 3 was said only in the md's Warnings (line 143 of 306); the run now prints every
    Warnings line on standard error after the ranked list."""
    path = tmp_path / "amort3.toml"
    path.write_text(CHAT70B.replace("amortization_months = 36", "amortization_months = 3"), encoding="utf-8")
    result = CliRunner().invoke(main, ["export", str(path), "-o", str(tmp_path / "r.md")])
    assert result.exit_code == 0, result.output
    said = (
        "warning: H100, bought: amortization_months = 3 writes the purchase off in 3 months; 3 looks like years: "
        "write 36 for 3 years"
    )
    assert said in result.stderr
    assert "  1. " in result.stdout and said not in result.stdout
