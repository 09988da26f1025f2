"""A bought GPU's node figures are its own node's where its maker publishes them (trial 22 F11).

catalogs/costs/ownership.toml: the default node is a DGX H100 (host power 10.2 kW max - 8 x 700 W = 4,600 W); a DGX
B200 draws 14.3 kW max (NVIDIA DGX B200 User Guide, Power Specifications), less 8 x 1,000 W (the catalog's B200 TDP,
the HGX B200 datasheet's 1,000 W column) = 6,300 W. No DGX B200 bill of materials is sourced, so its host server and
network prices stay the DGX H100's, and the review says so.
"""

from __future__ import annotations

import pytest
from test_export import review_of, write_scenario

from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.export.ownership import NODE_FIELDS, option_money, ownership_defaults
from planner.export.scenario import Option

CAT = default_catalog()


def bought(gpu: str, **fields) -> Option:
    return Option(name=f"{gpu} buy", gpu=gpu, model="Llama-3.3-70B", pricing="purchase", purchase_usd=30000, **fields)


class TestNodeFigures:
    def test_every_node_is_a_catalog_gpu_by_its_full_name(self):
        for name in ownership_defaults().nodes:
            assert CAT.gpu(name).name == name

    def test_a_dgx_b200_draws_its_own_host_power(self):
        assert CAT.gpu("B200").tdp_w == 1000
        money = option_money(bought("B200"), CAT.gpu("B200"))
        assert money.host_power_w.value == 14_300 - 8 * 1000
        assert money.it_power_w_per_gpu == pytest.approx(1000 + 6300 / 8)  # 1,787.5 W a GPU
        assert "DGX B200 14.3 kW max" in money.host_power_w.label

    def test_a_figure_the_node_lacks_is_the_dgx_h100s(self):
        d = ownership_defaults()
        money = option_money(bought("B200"), CAT.gpu("B200"))
        assert money.host_server_usd.value == d.host_server_usd.value == 32_010
        assert money.networking_usd.value == d.networking_usd.value == 15_060
        assert d.borrowed_fields("B200 180GB") == ("host_server_usd", "networking_usd")
        assert d.borrowed_fields("H100 SXM 80GB") == NODE_FIELDS

    def test_an_mi355x_node_draws_amds_planned_host_power(self):
        """AMD Instinct MI3XX Reference Design, Power requirements, MI355X: "256 MI355X DLC - 2K GPUs", "Average Power
        per system | ≈ 14kW" (an estimate, AMD's note says), less 8 x 1,400 W (the catalog's MI355X board power)
        = 2,800 W (https://github.com/ROCm/gpu-cluster-networking/blob/0ca25a77f2b44393ea32b0110c32beddc9eaf4ce/
        reference-architecture/MI3XX/index.rst, read 2026-12-07)."""
        d = ownership_defaults()
        own = d.nodes["MI355X"].host_power_w
        assert CAT.gpu("MI355X").tdp_w == 1400
        assert own.value == 14_000 - 8 * CAT.gpu("MI355X").tdp_w == 2800
        assert "ROCm/gpu-cluster-networking" in own.url and "Average Power per system | ≈ 14kW" in own.source
        assert "estimates only" in own.source and "not a datasheet maximum" in own.source
        money = option_money(bought("MI355X"), CAT.gpu("MI355X"))
        assert money.host_power_w.value == 2800
        assert money.it_power_w_per_gpu == pytest.approx(1400 + 2800 / 8)  # 1,750 W a GPU
        assert money.host_server_usd.value == d.host_server_usd.value and money.networking_usd.value == 15_060
        assert d.borrowed_fields("MI355X") == ("host_server_usd", "networking_usd")

    @pytest.mark.parametrize("gpu", ["MI300X", "MI325X", "MI350X"])
    def test_amd_nodes_without_a_sourced_figure_keep_the_dgx_h100s(self, gpu):
        """No AMD 8-GPU node power or price was found for these (ownership.toml's MI355X source says so)."""
        assert ownership_defaults().borrowed_fields(gpu) == NODE_FIELDS
        assert option_money(bought(gpu), CAT.gpu(gpu)).host_power_w.value == 10_200 - 8 * 700

    def test_the_h100_node_is_unchanged(self):
        money = option_money(bought("H100"), CAT.gpu("H100"))
        assert money.host_power_w.value == 10_200 - 8 * 700
        assert money.it_power_w_per_gpu == pytest.approx(700 + 4600 / 8)

    def test_the_scenarios_own_figure_wins(self):
        money = option_money(bought("B200", host_power_w=8000), CAT.gpu("B200"))
        assert money.host_power_w.value == 8000
        assert money.host_power_w.label == "scenario file (host_power_w)"


class TestTheReviewSaysWhichAreBorrowed:
    SCENARIO = """
title = "B200 bought"
[workload]
peak_concurrent_requests = 50
average_concurrent_requests = 20
prompt_tokens_mean = 100
prompt_tokens_high = 200
output_tokens_mean = 100
output_tokens_high = 200
ttft_target_s = 10
tpot_target_s = 0.2
sizing = "littles-law"
[defaults]
model = "Llama-2-7B"
engine = "ideal"
max_gpus_per_replica = 1
[[option]]
name = "B200 bought"
gpu = "B200"
pricing = "purchase"
purchase_usd = 40000
{extra}
"""

    def host_row(self, tmp_path, extra: str = "") -> list[str]:
        review = review_of(write_scenario(tmp_path, self.SCENARIO.replace("{extra}", extra)))
        return [a.label for a in review.assumptions if a.what == "B200 bought: host figures"]

    def test_the_host_server_and_network_are_named_as_the_dgx_h100s(self, tmp_path):
        assert self.host_row(tmp_path) == [
            "host server and network are DGX H100's; no B200 180GB node figure for them in "
            "catalogs/costs/ownership.toml: give host_server_usd and networking_usd for this node"
        ]

    def test_a_figure_the_scenario_gives_is_not_named(self, tmp_path):
        assert self.host_row(tmp_path, "host_server_usd = 50000") == [
            "network is DGX H100's; no B200 180GB node figure for it in "
            "catalogs/costs/ownership.toml: give networking_usd for this node"
        ]

    def test_none_when_the_scenario_gives_them_all(self, tmp_path):
        assert self.host_row(tmp_path, "host_server_usd = 50000\nnetworking_usd = 20000") == []

    def test_the_warnings_say_it_too(self, tmp_path):
        """Trial 27 F7: the committee reads Warnings and the command's output, not Assumptions; $40,000 + 47,070 / 8 =
        $45,883.75, of which 12.8% is the DGX H100's host server and network."""
        review = review_of(write_scenario(tmp_path, self.SCENARIO.replace("{extra}", "")))
        printed = [x.removeprefix("  warning: ") for x in summary_lines(review) if x.startswith("  warning: Host")]
        assert (
            printed
            == [w for w in review.warnings if w.startswith("Host figures")]
            == [
                "Host figures reused from another platform: B200 bought: host server and network (13% of its capex) are "
                "a DGX H100's (catalogs/costs/ownership.toml; host server: SemiAnalysis DGX H100 BOM (via Epoch AI), "
                "2023-05, a component cost without the server maker's margin); give host_server_usd and networking_usd "
                "from a quote for these nodes. B200 180GB (1,000 W, SXM (HGX B200 baseboard)) draws 1,000 W or more a "
                "GPU: the reused figures are priced for a DGX H100 node of 8 x 700 W GPUs."
            ]
        )
