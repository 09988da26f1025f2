"""A scenario field an option gives but cannot use is said, not dropped in silence.

A user trial (s195): ``purchase_usd = 25000`` on an option without ``pricing`` (a cloud option, the default) gave a
review identical to one without it, and no word. The review now warns that the price is not used and how to use it.
"""

from __future__ import annotations

from planner.catalog import default_catalog
from planner.export.evaluate import evaluate
from planner.export.scenario import load_scenario

SCENARIO = """title = "x"
[workload]
peak_requests_per_s = 10
average_requests_per_s = 4
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 400
output_tokens_high = 1200
ttft_target_s = 1.5
tpot_target_s = 0.05
sizing = "littles-law"
[[option]]
name = "a"
gpu = "H100"
model = "llama3.1-70b"
purchase_usd = 25000
"""


def test_a_purchase_price_on_a_rented_option_is_warned_and_changes_nothing(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(SCENARIO)
    s = load_scenario(path)
    given = evaluate(s.option[0], s.workload, default_catalog(), s.traffic_change)
    without = evaluate(s.option[0].model_copy(update={"purchase_usd": None}), s.workload, default_catalog(), 0.2)
    assert given.monthly_usd == without.monthly_usd and given.money.pricing == "cloud"
    assert any("purchase_usd $25,000 is not used: the option rents" in w for w in given.warnings)
    assert not any("purchase_usd" in w for w in without.warnings)
