"""A bought option whose host server, network or host power are the DGX H100's is named under Warnings (trial 27 F7).

catalogs/costs/ownership.toml: the default node is a DGX H100: host server $32,010 (SemiAnalysis DGX H100 BOM via
Epoch AI, 2023-05, "the server maker's margin is not included"), network $15,060 per node, host power 10.2 kW - 8 x
700 W = 4,600 W; DGX B200's host power (6,300 W) and an 8 x MI355X node's (2,800 W: AMD Instinct MI3XX Reference
Design, "Average Power per system | ≈ 14kW" for "256 MI355X DLC", less 8 x 1,400 W;
https://github.com/ROCm/gpu-cluster-networking/blob/0ca25a77f2b44393ea32b0110c32beddc9eaf4ce/reference-architecture/MI3XX/index.rst)
are their own. Capex per GPU = GPU + (host server + network) / 8 (``sizing.owned_capex_usd_per_gpu``). Board powers
and form factors: catalogs/gpus.toml (MI355X 1,400 W "OAM, liquid-cooled": Tom's Hardware and The Register on AMD's
ISC 2025 figures; MI325X 1,000 W "OAM"; MI300X 750 W: AMD's data sheet).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from planner.catalog import default_catalog
from planner.export.assumptions import reused_host_warning
from planner.export.ownership import option_money
from planner.export.scenario import Option

CAT = default_catalog()


def bought(gpu: str, purchase_usd: float = 27_000, **fields) -> SimpleNamespace:
    """What ``reused_host_warning`` reads of a result: its option, GPU and money."""
    option = Option(
        name=f"{gpu}, bought", gpu=gpu, model="Llama-3.3-70B", pricing="purchase", purchase_usd=purchase_usd, **fields
    )
    return SimpleNamespace(option=option, gpu=CAT.gpu(gpu), money=option_money(option, CAT.gpu(gpu)))


class TestReusedHostWarning:
    def test_names_the_option_the_platform_the_share_of_capex_and_the_keys(self):
        # $27,000 a GPU + (32,010 + 15,060) / 8 = $32,883.75; 5,883.75 / 32,883.75 = 17.9%
        line = reused_host_warning([bought("MI300X")])
        assert line == (
            "Host figures reused from another platform: MI300X, bought: host server and network (18% of its capex) "
            "and host power are a DGX H100's (catalogs/costs/ownership.toml; host server: SemiAnalysis DGX H100 BOM "
            "(via Epoch AI), 2023-05, a component cost without the server maker's margin); give host_server_usd, "
            "networking_usd and host_power_w from a quote for these nodes."
        )

    def test_a_part_of_1000_w_or_more_is_named_with_its_catalog_power_and_form_factor(self):
        line = reused_host_warning([bought("MI325X")])
        assert line.endswith(
            "MI325X (1,000 W, OAM) draws 1,000 W or more a GPU: the reused figures are priced for a DGX H100 node of "
            "8 x 700 W GPUs, whose host power counts its fans."
        )

    def test_mi355xs_own_host_power_is_not_named(self):
        """AMD's ≈ 14 kW a DLC system less 8 x 1,400 W: only the host server and network are the DGX H100's, as for
        DGX B200, and the DGX H100's fans are not said of its host power."""
        assert bought("MI355X").money.host_power_w.value == 14_000 - 8 * 1400
        line = reused_host_warning([bought("MI355X")])
        assert line == (
            "Host figures reused from another platform: MI355X, bought: host server and network (18% of its capex) "
            "are a DGX H100's (catalogs/costs/ownership.toml; host server: SemiAnalysis DGX H100 BOM (via Epoch AI), "
            "2023-05, a component cost without the server maker's margin); give host_server_usd and networking_usd "
            "from a quote for these nodes. MI355X (1,400 W, OAM, liquid-cooled) draws 1,000 W or more a GPU: the "
            "reused figures are priced for a DGX H100 node of 8 x 700 W GPUs."
        )

    def test_the_fans_are_named_where_any_hot_part_reuses_the_host_power(self):
        line = reused_host_warning([bought("MI355X"), bought("MI325X")])
        assert "MI355X, bought: host server and network (18% of its capex); MI325X, bought: host server and " in line
        assert line.endswith(
            "MI355X (1,400 W, OAM, liquid-cooled) and MI325X (1,000 W, OAM) draw 1,000 W or more a GPU: the reused "
            "figures are priced for a DGX H100 node of 8 x 700 W GPUs, whose host power counts its fans."
        )

    def test_a_750_w_part_has_no_power_sentence(self):
        assert CAT.gpu("MI300X").tdp_w == 750
        assert "1,000 W or more" not in reused_host_warning([bought("MI300X")])

    def test_b200s_own_host_power_is_not_named(self):
        line = reused_host_warning([bought("B200")])
        assert "B200, bought: host server and network (18% of its capex) are a DGX H100's" in line
        assert "host_power_w" not in line

    def test_options_share_one_line(self):
        line = reused_host_warning([bought("MI325X"), bought("MI300X", purchase_usd=15_000)])
        # MI300X: 5,883.75 / 20,883.75 = 28.2%
        assert "MI325X, bought: host server and network (18% of its capex) and host power; MI300X, bought: " in line
        assert "MI300X, bought: host server and network (28% of its capex) and host power are" in line

    def test_a_figure_the_scenario_gives_is_left_out(self):
        line = reused_host_warning([bought("MI300X", host_server_usd=50_000)])
        # 15,060 / 8 / (27,000 + (50,000 + 15,060) / 8) = 1,882.5 / 35,132.5 = 5.4%
        assert "MI300X, bought: network (5% of its capex) and host power are a DGX H100's" in line
        assert "SemiAnalysis" not in line and "give networking_usd and host_power_w" in line

    @pytest.mark.parametrize("gpu", ["H100", "H200"])
    def test_none_for_the_dgx_h100s_own_generation(self, gpu):
        assert reused_host_warning([bought(gpu)]) == ""

    def test_none_when_the_scenario_gives_them_all(self):
        given = {"host_server_usd": 50_000, "networking_usd": 20_000, "host_power_w": 9_000}
        assert reused_host_warning([bought("MI355X", **given)]) == ""

    def test_none_for_a_rented_option(self):
        option = Option(name="MI300X, rented", gpu="MI300X", model="Llama-3.3-70B", pricing="cloud")
        rented = SimpleNamespace(option=option, gpu=CAT.gpu("MI300X"), money=option_money(option, CAT.gpu("MI300X")))
        assert reused_host_warning([rented]) == ""
