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
from planner.export.ownership import NODE_FIELDS, host_basis, is_pcie_card, option_money, ownership_defaults
from planner.export.scenario import Option

CAT = default_catalog()


def bought(gpu: str, **fields) -> Option:
    fields = {"purchase_usd": 30000, **fields}
    return Option(name=f"{gpu} buy", gpu=gpu, model="Llama-3.3-70B", pricing="purchase", **fields)


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
        assert d.borrowed_fields(CAT.gpu("B200 180GB")) == ("host_server_usd", "networking_usd")
        assert d.borrowed_fields(CAT.gpu("H100 SXM 80GB")) == NODE_FIELDS

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
        assert d.borrowed_fields(CAT.gpu("MI355X")) == ("host_server_usd", "networking_usd")

    @pytest.mark.parametrize("gpu", ["MI300X", "MI325X", "MI350X"])
    def test_amd_nodes_without_a_sourced_figure_keep_the_dgx_h100s(self, gpu):
        """No AMD 8-GPU node power or price was found for these (ownership.toml's MI355X source says so)."""
        assert ownership_defaults().borrowed_fields(CAT.gpu(gpu)) == NODE_FIELDS
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


class TestAPcieCardGetsAPcieServersHost:
    """Trial 32 F10: two bought L40S were charged a DGX H100's host server and InfiniBand share (41-43% of capex).
    A PCIe card's node is catalogs/costs/ownership.toml [pcie_node]: host server $10,424 (SemiAnalysis, 'AI Server
    Cost Analysis - Memory Is The Biggest Loser', May 2023: a standard dual-socket server 'around $10,424 for a large
    volume buyer'), no InfiniBand share ($0: its Ethernet NIC is in the server), host power 5,000 W - 8 x 350 W =
    2,200 W (ServeTheHome on Supermicro SYS-521GE-TNRT with 8 x L40S: 'typically using power in the 4.3-5kW
    range')."""

    @pytest.mark.parametrize("gpu", ["L40S", "L4", "A10", "RTX 4090", "RTX PRO 6000 Blackwell Server Edition"])
    def test_pcie_cards_take_the_pcie_node(self, gpu):
        d = ownership_defaults()
        assert is_pcie_card(CAT.gpu(gpu))
        assert d.borrowed_fields(CAT.gpu(gpu)) == ()
        assert d.node_figure(CAT.gpu(gpu), "host_server_usd").value == 10_424

    @pytest.mark.parametrize("gpu", ["H100 SXM 80GB", "B200", "MI300X", "GH200", "Gaudi 3"])
    def test_sxm_oam_and_superchips_keep_the_dgx_host(self, gpu):
        assert not is_pcie_card(CAT.gpu(gpu))
        assert ownership_defaults().node_figure(CAT.gpu(gpu), "host_server_usd").value == 32_010

    def test_the_l40s_month_by_hand(self):
        """$7,500 a GPU, nodes of 8, 36 months straight-line, PUE 1.3, $0.12/kWh, $184.06/kW-month (ownership.toml):
        capex 7,500 + (10,424 + 0) / 8 = $8,803, / 36 = $244.53; IT power 350 + 2,200 / 8 = 625 W: power 0.625 x
        1.3 x 0.12 x 730 = $71.18, colocation 0.625 x 184.06 = $115.04; $430.74 a month (a DGX H100's host gave
        7,500 + 47,070 / 8 = $13,383.75 capex and $647.37 a month)."""
        assert CAT.gpu("L40S").tdp_w == 350
        money = option_money(bought("L40S", purchase_usd=7500), CAT.gpu("L40S"))
        assert money.capex_usd_per_gpu == pytest.approx(8803)
        assert money.it_power_w_per_gpu == pytest.approx(625)
        assert money.usd_per_gpu_month == pytest.approx(8803 / 36 + 71.175 + 115.0375)
        assert money.usd_per_gpu_month == pytest.approx(430.74, abs=0.01)
        assert host_basis(money, CAT.gpu("L40S")) == "host and network $1,303/GPU, a PCIe server's"

    def test_a_two_card_server_pays_the_same_share(self):
        """nodes_of = 2 scales the 8-card node by 2 / 8: $2,606 of host for two cards, $1,303 each."""
        money = option_money(bought("L40S", purchase_usd=7500, node_size=2), CAT.gpu("L40S"))
        assert money.host_server_usd.value == pytest.approx(10_424 / 4)
        assert money.capex_usd_per_gpu == pytest.approx(8803)

    def test_the_scenarios_host_still_wins(self):
        money = option_money(bought("L40S", host_server_usd=20_000), CAT.gpu("L40S"))
        assert money.host_server_usd.value == 20_000
        assert host_basis(money, CAT.gpu("L40S")) == "host and network $2,500/GPU, the scenario's host"

    def test_an_sxm_part_says_its_host_is_a_dgx_h100s(self):
        money = option_money(bought("B200"), CAT.gpu("B200"))
        assert host_basis(money, CAT.gpu("B200")) == "host and network $5,884/GPU, a DGX H100's"  # 47,070 / 8
