"""A review sized on simulated percentiles keeps the group whose simulated fleet costs least, not Little's law's.

A user trial (s195): Llama 3.1 70B with fp8 weights and KV cache on H200 at 40 requests/s of 7,792 / 400 tokens
(p95 TTFT <= 1.5 s, TPOT <= 50 ms), no group given: ``export`` kept 2 GPUs a replica, the cheapest group by Little's
law, and then simulated it: 412 x 2 = 824 H200 ($3,109,858 a month), where the same option with 4 or 8 GPUs a replica
given needs 248 or 224, and its own Levers table offered the saving. Little's law charges each prompt its prefill
and misses the queue long prompts form, so its cheapest group is not the cheapest under load. Each group that meets
the targets by Little's law is now simulated and the cheapest simulated fleet kept (as ``plan --rate`` keeps the
fewest GPUs over its groups).
"""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.export.evaluate import evaluate
from planner.export.scenario import load_scenario

SCENARIO = """title = "H200 long prompts"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 7792
prompt_tokens_high = 7792
output_tokens_mean = 400
output_tokens_high = 400
ttft_target_s = 1.5
tpot_target_s = 0.05
[[option]]
name = "H200 fp8"
gpu = "H200"
model = "llama3.1-70b"
weight_precision = "fp8"
kv_precision = "fp8"
pricing = "cloud"
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    path = tmp_path_factory.mktemp("group") / "a.toml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def test_the_group_chosen_costs_no_more_than_any_group_given(scenario):
    """The option without gpus_per_replica is sized on simulated percentiles, and its monthly cost is the least of
    the same option with each group that meets the targets given (1, 2, 4, 8 H200 a replica)."""
    option, w, cat = scenario.option[0], scenario.workload, default_catalog()
    chosen = evaluate(option, w, cat, scenario.traffic_change)
    assert chosen.meets and chosen.under_load is not None
    given = {}
    for n in (1, 2, 4, 8):
        r = evaluate(option.model_copy(update={"gpus_per_replica": n}), w, cat, scenario.traffic_change)
        if r.meets and r.under_load is not None:
            given[n] = r.monthly_usd
    assert len(given) >= 2 and given[2] > min(given.values())  # Little's law's group is not the cheapest here
    assert chosen.monthly_usd == pytest.approx(min(given.values()))
    assert int(chosen.replica.gpus) == min(given, key=lambda n: (given[n], n))
