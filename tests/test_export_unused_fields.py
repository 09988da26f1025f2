"""A scenario field an option gives but cannot use is said, not dropped in silence.

A user trial (s195): ``purchase_usd = 25000`` on an option without ``pricing`` (a cloud option, the default) gave a
review identical to one without it, and no word. The review now warns that the price is not used and how to use it.
"""

from __future__ import annotations

from cli_support import SCENARIO

from planner.catalog import default_catalog
from planner.export.evaluate import evaluate
from planner.export.scenario import load_scenario

#: The newcomer's one-option scenario, counted by Little's law (the price is the point, not the queue), with a
#: purchase price on its rented option.
PRICED = SCENARIO.replace("[[option]]", 'sizing = "littles-law"\n[[option]]') + "purchase_usd = 25000\n"


def test_a_purchase_price_on_a_rented_option_is_warned_and_changes_nothing(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(PRICED)
    s = load_scenario(path)
    given = evaluate(s.option[0], s.workload, default_catalog(), s.traffic_change)
    without = evaluate(s.option[0].model_copy(update={"purchase_usd": None}), s.workload, default_catalog(), 0.2)
    assert given.monthly_usd == without.monthly_usd and given.money.pricing == "cloud"
    assert any("purchase_usd $25,000 is not used: the option rents" in w for w in given.warnings)
    assert not any("purchase_usd" in w for w in without.warnings)
