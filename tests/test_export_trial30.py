"""Trial 30 (/work/trial30-findings.md): a finance analyst's 3-year budget for a 70B chat service, bought against rented
H100s. Known values are the review's own figures (its Total cost of ownership and Ownership tables) and the trial's
hand checks; the catalog figures are test_export_money.py's (H100 on-demand median $3.595/GPU-h, reserved $2.72,
purchase $30,000 + ($32,010 + $15,060) / 8 = $35,883.75 all-in; opex $379.8735 a GPU-month)."""

from __future__ import annotations

import io
import math
import tomllib

import pandas as pd
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
    # Break-even sheet: the cumulative cash at month 12 is the year-1 cash (trial: $970,614 = 861,210 + 12 x 9,117),
    # the bought row names each month; a data table from A1, read by pandas as it is
    xlsx = pd.read_excel(io.BytesIO(render(chat, "xlsx")), sheet_name="Break-even").set_index("Option")
    assert list(xlsx.index) == [r.option.name for r in chat.results if r.meets]
    assert xlsx.loc["H100, bought", "By month 12"] == pytest.approx(970614, abs=1)
    assert xlsx.loc["H100, rented", "By month 12"] == pytest.approx(12 * 52487, abs=12)
    assert xlsx.loc["H100, bought", "Breaks even against (month)"] == (
        "H100, reserved: 29; H100, rented: 20; H200, rented: 17"
    )
    assert "## Break-even" in md


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


# -- F11: the service's context in [workload] ---------------------------------------------------------------------


def _workload(extra: str):
    return parse_scenario(tomllib.loads(CHAT70B.replace("high_percentile = 95", f"high_percentile = 95\n{extra}")), "t")


def test_context_cuts_the_drawn_requests_as_plan_does():
    """F11: context = "16k" is 16,384 tokens (as plan --context 16K). The draws around 4,000 / p95 12,000 prompt and
    500 / p95 1,500 output tokens are cut by plan's own ``cut_to_context``: none longer than 16,384 afterwards, the
    rest unchanged; the slot memory is sized for stays the p95 prompt + p95 output, 13,500, below the context, and a
    context of 12,000 makes it 12,000."""
    from planner.serving.load import cut_to_context

    w = _workload('context = "16k"').workload
    uncut = _workload("").workload.simulated_lengths(131072)
    cut, count = cut_to_context(uncut, 16384)
    assert w.context == 16384
    assert w.simulated_lengths(131072) == cut
    assert w.context_cut_count(131072) == count == sum(p + o > 16384 for p, o in uncut) > 0
    assert max(p + o for p, o in cut) <= 16384
    assert w.sizing_context_tokens == 12000 + 1500
    assert _workload("context = 12000").workload.sizing_context_tokens == 12000
    with pytest.raises(Exception, match=r"context \(4,000\) is shorter than prompt_tokens_mean 4,000 \+ output"):
        _workload("context = 4000")


def test_summary_states_the_context():
    """F11: the Summary's decision box says "Context: 16,384 tokens" and how many simulated requests were cut."""
    review = build_review(_workload("context = 16384"), default_catalog(), source="ctx.toml", date=DATE)
    w = review.scenario.workload
    n = w.context_cut_count(review.recommended.model.max_context)
    md = render(review, "md").decode()
    assert (
        f"| Context | 16,384 tokens a request, prompt + output (the engine's longest, its --max-model-len); {n:,} of "
        "1,000 simulated requests were longer and were cut to it" in md
    )


# -- F2, F16: messages and shares ---------------------------------------------------------------------------------


def test_workload_field_in_an_option_says_one_workload_per_scenario():
    """F2 (/tmp/mina/both.toml): prompt_tokens_mean in an [[option]] was answered "did you mean speculative_tokens?"."""
    from planner.export.scenario import ScenarioError

    text = CHAT70B.replace('name = "H100, rented"', 'name = "H100, rented"\nprompt_tokens_mean = 4000')
    with pytest.raises(ScenarioError) as e:
        parse_scenario(tomllib.loads(text), "both.toml")
    said = str(e.value)
    assert (
        "prompt_tokens_mean is a [workload] field: one workload per scenario; for two services with different "
        "traffic, run one export each" in said
    )
    assert "speculative_tokens" not in said


@pytest.mark.parametrize(
    ("where", "field", "text", "read"),
    [
        ("top", "traffic_change", '"20%"', 0.2),
        ("workload", "prefix_hit_rate", '"30%"', 0.3),
        ("option", "memory_utilization", '"90%"', 0.9),
        ("workload", "growth_over_horizon", '"30%"', 0.3),  # the parser it always had
    ],
)
def test_share_fields_take_percent_text(where, field, text, read):
    """F16: growth_over_horizon = "30%" was accepted and traffic_change = "20%" refused in the same file; every share
    now takes "20%" as 0.2 (``read_share_text``, the text cost_of_capital takes); a number keeps its range check."""
    if where == "top":
        toml = CHAT70B.replace("traffic_change = 0.2", f"{field} = {text}")
    elif where == "workload":
        toml = CHAT70B.replace("growth_over_horizon = 0\n", "").replace("[workload]", f"[workload]\n{field} = {text}")
    else:
        toml = CHAT70B.replace('name = "H100, rented"', f'name = "H100, rented"\n{field} = {text}')
    sc = parse_scenario(tomllib.loads(toml), "t")
    owner = {"top": sc, "workload": sc.workload, "option": sc.option[1]}[where]
    assert getattr(owner, field) == pytest.approx(read)
