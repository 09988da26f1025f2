"""GPU prices: every quote has a kind, a provider, a date and a source; defaults use on-demand; old quotes are flagged."""

from __future__ import annotations

import datetime
import math

import pytest
import tomli_w
from click.testing import CliRunner

from planner import api
from planner.catalog import PRICE_STALE_AFTER_DAYS, Price, default_catalog, load_catalog, stale_price_warning
from planner.cli import main
from planner.errors import CatalogError

CAT = default_catalog()
QUOTE = {"provider": "us", "date": "2026-01-15", "source": "our contract"}


class TestPriceSchema:
    def test_an_hourly_kind_needs_a_rate_and_a_purchase_needs_a_price(self):
        assert Price(kind="spot", usd_per_gpu_hour=1.0, **QUOTE).amount == 1.0
        assert Price(kind="purchase", purchase_usd=30000, **QUOTE).amount == 30000
        with pytest.raises(ValueError, match="on-demand price gives usd_per_gpu_hour"):
            Price(kind="on-demand", purchase_usd=30000, **QUOTE)
        with pytest.raises(ValueError, match="purchase price gives purchase_usd"):
            Price(kind="purchase", usd_per_gpu_hour=2.0, **QUOTE)
        with pytest.raises(ValueError, match="kind"):
            Price(kind="committed-ish", usd_per_gpu_hour=2.0, **QUOTE)

    def test_a_date_must_be_on_the_calendar(self):
        with pytest.raises(ValueError, match="not a calendar date"):
            Price(kind="spot", usd_per_gpu_hour=1.0, provider="x", date="2026-02-30", source="abc")

    def test_age_counts_days_and_a_month_counts_from_its_first_day(self):
        """2026-01-15 to 2026-11-30 is 319 days; '2025-11' means 2025-11-01, 394 days before 2026-11-30."""
        today = datetime.date(2026, 11, 30)
        assert Price(kind="spot", usd_per_gpu_hour=1.0, **QUOTE).age_days(today) == 319
        month = Price(kind="spot", usd_per_gpu_hour=1.0, provider="x", date="2025-11", source="abc")
        assert month.age_days(today) == 394 and month.is_stale(today)
        assert PRICE_STALE_AFTER_DAYS == 365
        fresh = Price(kind="spot", usd_per_gpu_hour=1.0, provider="x", date="2025-11-30", source="abc")
        assert fresh.age_days(today) == 365 and not fresh.is_stale(today)  # a year to the day is not yet stale

    def test_the_stale_warning_names_the_gpu_kind_date_and_age(self):
        old = Price(kind="purchase", purchase_usd=4649, provider="launch", date="2020-10", source="abc")
        line = stale_price_warning(old, "RTX A6000", datetime.date(2026, 11, 30))
        assert line.startswith("RTX A6000: the purchase price ($4,649.00, launch) is dated 2020-10, 2251 days ago")
        assert (
            stale_price_warning(Price(kind="spot", usd_per_gpu_hour=1, **QUOTE), "X", datetime.date(2026, 2, 1)) is None
        )
        assert stale_price_warning(None, "X") is None


class TestGpuPrices:
    def test_the_default_is_the_on_demand_quote(self):
        """H200: Hyperstack $3.99/h on-demand (rate card 2026-08-26) and CoreWeave 'NVIDIA HGX H200 (on-demand) $50.44'
        for 8 GPUs = $6.305/GPU-h (2026-09-20): the default is the median of the on-demand quotes, (3.99 + 6.305) / 2 =
        $5.1475, on every surface (s192: plan, the Excel functions and the workbook took the first listed, the export
        the median). Trial 17 F1: the deploybase.ai RunPod rows ($6.35 'on-demand', $3.59 'spot') are gone; spot is
        CoreWeave's 'Spot Price: $20.93 / Hour' / 8 = $2.61625."""
        h200 = CAT.gpu("H200")
        assert h200.price().kind == "on-demand" and h200.price().usd_per_gpu_hour == pytest.approx(5.1475)
        assert h200.price().provider.startswith(
            "median of 2 quotes: Hyperstack 3.99 (2026-08-26), CoreWeave 6.30"
        )  # 6.305 printed to 2 places
        assert h200.price("spot").usd_per_gpu_hour == pytest.approx(20.93 / 8)
        assert h200.price("purchase") is None
        assert api.gpu_price_per_hour("H200") == pytest.approx(5.1475)

    def test_spot_quotes_are_no_longer_the_default(self):
        """B200: spot is CoreWeave's 'HGX B200 ... Spot Price: $34.11 / Hour (NA)' / 8 = $4.26375 (2026-09-20); the
        on-demand default is the median of Hyperstack $6.00, Lambda '8x NVIDIA B200 SXM6 $6.69' and CoreWeave
        $68.80 / 8 = $8.60: $6.69 (trial 17: the deploybase.ai RunPod $10.57 / $5.98 rows are gone). RTX 4090: RunPod
        Community Cloud $0.34 is an ordinary on-demand pod rate (carsonpo/gpus costs/runpod.md, 2025-07-13), not spot;
        the catalog has no RTX 4090 spot quote."""
        assert CAT.gpu("B200").price("spot").usd_per_gpu_hour == pytest.approx(34.11 / 8)
        assert api.gpu_price_per_hour("B200") == pytest.approx(6.69)
        assert CAT.gpu("RTX 4090").price("spot") is None
        assert api.gpu_price_per_hour("RTX 4090") == 0.34

    def test_every_rented_quote_of_the_shipped_catalog_is_dated_and_sourced(self):
        for g in CAT.gpus:
            for p in g.prices:
                assert p.provider and len(p.source) > 20 and p.quoted_on() <= datetime.date(2026, 12, 31), g.name

    def test_the_old_single_price_table_is_refused_with_the_new_form(self, tmp_path):
        h100 = CAT.gpu("H100").model_dump(mode="json", exclude_none=True, exclude={"prices"})
        h100["price"] = {"cloud_usd_per_gpu_hour": 1.0, "date": "2026-01", "source": "abc"}
        (tmp_path / "g.toml").write_text(tomli_w.dumps({"gpu": [h100]}))
        with pytest.raises(CatalogError, match=r"'price' is now 'prices'.*\[\[gpu.prices\]\]"):
            load_catalog(tmp_path, use_env=False)


class TestSurfaces:
    def test_catalog_list_shows_kind_and_date_and_flags_stale(self):
        out = CliRunner().invoke(main, ["catalog", "list", "gpus"]).output
        h200 = next(line for line in out.splitlines() if "H200 SXM 141GB" in line)
        assert (
            "$5.1475/h on-demand 2026-08-26 to 2026-09-20 (median of 2)" in h200
        )  # (3.99 + 6.305) / 2, oldest to newest
        gaudi = next(line for line in out.splitlines() if "Gaudi 3" in line)
        assert "$15,625 purchase 2024-06 STALE" in gaudi  # Intel's June 2024 list price: no on-demand quote

    def test_catalog_list_shows_bandwidth_as_the_datasheet_prints_it(self):
        """A100 SXM 40GB's datasheet: 1,555 GB/s; "1.55 TB/s" rounded it away (trial 25 F10)."""
        out = CliRunner().invoke(main, ["catalog", "list", "gpus"]).output
        a100 = next(line for line in out.splitlines() if "A100 SXM 40GB" in line)
        assert "1,555 GB/s" in a100

    def test_plan_warns_when_the_catalog_price_it_uses_is_stale(self, tmp_path):
        h100 = CAT.gpu("H100").model_dump(mode="json", exclude_none=True)
        h100["prices"] = [{"kind": "on-demand", "usd_per_gpu_hour": 2.0, **QUOTE, "date": "2020-01"}]
        (tmp_path / "g.toml").write_text(tomli_w.dumps({"gpu": [h100]}))
        args = ["plan", "--gpu", "H100", "--model", "llama2-7b", "--context", "4096", "--catalog", str(tmp_path)]
        out = CliRunner().invoke(main, args).output
        assert "warning: H100 SXM 80GB: the on-demand price ($2.00, us) is dated 2020-01" in out
        out = CliRunner().invoke(main, [*args, "--price", "3"]).output
        assert "is dated" not in out  # the user's own price: nothing to flag


class TestReviewFlagsStalePrices:
    SCENARIO = """
title = "stale"
[workload]
peak_concurrent_requests = 10
average_concurrent_requests = 5
prompt_tokens_mean = 100
prompt_tokens_high = 200
output_tokens_mean = 100
output_tokens_high = 200
ttft_target_s = 10
tpot_target_s = 0.5
[defaults]
model = "Llama-2-7B"
engine = "ideal"
max_gpus_per_replica = 1
[[option]]
name = "A6000 bought"
gpu = "RTX A6000"
pricing = "purchase"
[[option]]
name = "A6000 at our quote"
gpu = "RTX A6000"
pricing = "purchase"
purchase_usd = 4000
"""

    def test_a_catalog_price_older_than_a_year_is_flagged_on_the_option_that_uses_it(self, tmp_path):
        """RTX A6000's only catalog price is its October 2020 launch price: flagged; the user's own quote is not."""
        from planner.export import build_review
        from planner.export.scenario import load_scenario

        path = tmp_path / "s.toml"
        path.write_text(self.SCENARIO)
        review = build_review(load_scenario(path), CAT, source="s.toml", date="2026-11-30")
        flagged = [w for w in review.warnings if "is dated 2020-10" in w]
        assert len(flagged) == 1 and flagged[0].startswith("A6000 bought: RTX A6000: the purchase price ($4,649.00")


def test_a_reserved_quote_is_kept_apart_from_the_on_demand_default():
    """H100: Hyperstack's reserved 'price_per_hour_from: 2.72' (2026-08-26) next to the on-demand median. (Was L40S's
    AWS G6e reservation, dropped in trial 17 F4: stale, second-hand, not re-quotable.) H100 on-demand: Lambda $3.99,
    RunPod $2.69, Hyperstack $3.20, CoreWeave $6.155: median (3.20 + 3.99) / 2 = $3.595."""
    h100 = CAT.gpu("H100")
    assert h100.price("reserved").usd_per_gpu_hour == 2.72 and api.gpu_price_per_hour("H100") == pytest.approx(3.595)
    assert CAT.gpu("L40S").price("reserved") is None


class TestIssue12Quotes:
    """Quotes added for issue 12; each expected value is the rate card the entry's source field names."""

    def test_reserved_rates_of_the_main_data_centre_gpus(self):
        """Hyperstack's 'Reserved' tier (rate card transcribed 2026-08-26, api-evangelist/nexgen-cloud):
        H100 SXM from $2.72, H200 SXM from $2.79, B200 from $5.10, A100 SXM 80 GB from $1.36 per GPU-hour."""
        for name, rate in (("H100", 2.72), ("H200", 2.79), ("B200", 5.10), ("A100 SXM 80GB", 1.36)):
            gpu = CAT.gpu(name)
            reserved = gpu.price("reserved")
            assert reserved.usd_per_gpu_hour == rate and reserved.date == "2026-08-26", name
            assert "hyperstack.cloud/gpu-pricing" in reserved.source, name
            # a commitment buys a discount: below the catalog's on-demand default for the same part
            assert reserved.usd_per_gpu_hour < gpu.price("on-demand").usd_per_gpu_hour, name
            assert api.gpu_price_per_hour(name) == gpu.price("on-demand").usd_per_gpu_hour  # default stays on-demand

    def test_new_on_demand_quotes(self):
        """B300: RunPod Pods '$ 7.89 /hr' (2026-10-07) then Hyperstack $7.40 (2026-08-26); A10: Lambda
        '1x NVIDIA A10 $1.29' per GPU-hour (2026-09-20); B300 spot: CoreWeave '$35.84 / Hour' for 8 GPUs."""
        b300 = CAT.gpu("B300")
        assert [(p.provider, p.usd_per_gpu_hour) for p in b300.prices if p.kind == "on-demand"] == [
            ("RunPod", 7.89),
            ("Hyperstack", 7.4),
        ]
        assert api.gpu_price_per_hour("B300") == pytest.approx((7.89 + 7.4) / 2)
        assert math.isclose(b300.price("spot").usd_per_gpu_hour * 8, 35.84)
        assert api.gpu_price_per_hour("A10") == 1.29 and CAT.gpu("A10").price().provider == "Lambda"

    def test_a_gpu_without_an_on_demand_quote_says_why_in_its_notes(self):
        """GB300 (CoreWeave: 'Contact sales'), A40, MI355X, Gaudi 3 and others have no dated public on-demand rate."""
        missing = [g for g in CAT.gpus if g.price("on-demand") is None]
        assert {"GB300 NVL72", "A40", "MI355X", "Gaudi 3"} <= {g.name for g in missing}
        for g in missing:
            assert "no price is given" in g.notes or "no dated public" in g.notes.lower(), g.name
        assert "Contact sales" in CAT.gpu("GB300").notes

    def test_a_plan_without_an_on_demand_price_says_so_and_how_to_give_one(self):
        args = ["plan", "--gpu", "GB300", "--model", "llama3.3-70b", "--context", "8192"]
        out = CliRunner().invoke(main, args).output
        assert (
            "n/a per million output tokens, decode only, 100% busy; prompt processing not included (the catalog has no on-demand price for this GPU; give --price"
            in out
        )
        out = CliRunner().invoke(main, [*args, "--price", "9"]).output
        assert "($9.00/GPU-hour)" in out and "n/a per million" not in out

    def test_a_review_option_on_a_gpu_without_a_cloud_price_is_refused_with_the_fix(self, tmp_path):
        from planner.export.scenario import ScenarioError, check_names, load_scenario

        text = TestReviewFlagsStalePrices.SCENARIO.replace('"RTX A6000"', '"GB300"', 1)
        text = text.replace('pricing = "purchase"\n[[option]]', 'pricing = "cloud"\n[[option]]', 1)
        path = tmp_path / "s.toml"
        path.write_text(text)
        with pytest.raises(
            ScenarioError, match=r"no on-demand cloud price for GB300 NVL72; give cloud_usd_per_gpu_hour"
        ):
            check_names(load_scenario(path), CAT)

    def test_catalog_list_shows_the_new_defaults_with_kind_and_date(self):
        out = CliRunner().invoke(main, ["catalog", "list", "gpus"]).output
        line = {row[2:].split("  ")[0]: row for row in out.splitlines() if row.startswith("  ")}
        assert (
            "$7.645/h on-demand 2026-08-26 to 2026-10-07 (median of 2)" in line["B300 288GB"]
            and "STALE" not in line["B300 288GB"]
        )
        assert "$1.29/h on-demand 2026-09-20" in line["A10"]
        assert "no price" in line["GB300 NVL72"] and "no price" in line["A40"]


def test_the_workbook_gpu_sheet_shows_reserved_and_spot_quotes_beside_on_demand():
    """H100: Hyperstack reserved $2.72 (2026-08-26) and CoreWeave spot $19.71 / 8 = $2.46375 (2026-09-20); GB300 has none."""
    from openpyxl.utils import get_column_letter

    from planner.accuracy.calibration import resolve_calibration
    from planner.engines.profiles import engine_profile
    from planner.workbook.catalog_sheets import gpus_sheet

    sheet, _ = gpus_sheet(CAT, list(CAT.gpus), engine_profile("vllm"), resolve_calibration(None))
    last = max(int("".join(c for c in ref if c.isdigit())) for ref in sheet.cells)
    header = {sheet.cells[f"{get_column_letter(j)}1"].value: get_column_letter(j) for j in range(1, 60)
              if f"{get_column_letter(j)}1" in sheet.cells}  # fmt: skip
    rows = {sheet.cells[f"A{r}"].value: r for r in range(2, last + 1) if f"A{r}" in sheet.cells}

    def cell(gpu: str, column: str):
        c = sheet.cells.get(f"{header[column]}{rows[gpu]}")
        return c.value if c else None

    assert cell("H100 SXM 80GB", "Reserved price ($/GPU-hour)") == 2.72
    assert cell("H100 SXM 80GB", "Reserved quote (provider, date)") == "Hyperstack (reserved contract), 2026-08-26"
    assert cell("H100 SXM 80GB", "Spot price ($/GPU-hour)") == pytest.approx(19.71 / 8)
    assert cell("GB300 NVL72", "Reserved price ($/GPU-hour)") in (None, "")
    # the on-demand default is the one every surface takes: the median of Lambda $3.99, RunPod $2.69, Hyperstack $3.20
    # and CoreWeave $6.155 (trial 17), (3.20 + 3.99) / 2
    assert cell("H100 SXM 80GB", "On-demand price ($/GPU-hour)") == pytest.approx(3.595)


def test_every_surface_prices_a_gpu_with_several_quotes_alike():
    """H100's on-demand quotes, Lambda $3.99 (2026-09-20), RunPod $2.69 (Spheron, 2026-05-22), Hyperstack $3.20
    (2026-08-26) and CoreWeave $49.24 / 8 = $6.155 (2026-09-20): plan (its JSON), the Excel functions' API and the
    export's default basis all take their median, (3.20 + 3.99) / 2 = $3.595 (s192: a user found the what-if workbook
    pricing the H100 at one quote and the review made from it at the median; was $3.095 before trial 17)."""
    import json

    from planner.export.ownership import chosen_quote

    plan = json.loads(
        CliRunner()
        .invoke(main, ["plan", "--gpu", "H100", "--model", "llama2-7b", "--context", "4096", "--json"])
        .output
    )
    exported = chosen_quote(CAT.gpu("H100"), "on-demand").usd_per_gpu_hour
    assert plan["price_usd_per_gpu_hour"] == api.gpu_price_per_hour("H100") == exported == pytest.approx(3.595)
    assert plan["price_source"].startswith("on-demand, median of 4 quotes: Lambda 3.99 (2026-09-20), RunPod")
    assert chosen_quote(CAT.gpu("H100"), "on-demand", "Hyperstack").usd_per_gpu_hour == 3.20  # a named basis


class TestTrial27AmdRents:
    """Trial 27 F1: AMD rents follow the NVIDIA rule (the median of a kind's quotes), not one neocloud's figure."""

    def test_mi300x_on_demand_is_the_median_of_its_four_quotes(self):
        """TensorWave $1.50 and Vultr $1.85 (research note, cliffcenter.com, 2026-05-18: secondary), DigitalOcean
        'AMD MI300X | $1.99 per hour' (docs.digitalocean.com Droplet pricing, validated 2026-05-28) and Crusoe
        'AMD MI300X 192GB (on-demand)' '$3.45/GPU-hr' (crusoe.ai/cloud/pricing, transcribed 2026-09-20):
        median (1.85 + 1.99) / 2 = 1.92, no longer the single TensorWave quote (1.50)."""
        gpu = CAT.gpu("MI300X")
        quotes = [(p.provider, p.usd_per_gpu_hour) for p in gpu.prices if p.kind == "on-demand"]
        assert quotes == [
            ("TensorWave (research note)", 1.5),
            ("Vultr (research note)", 1.85),
            ("DigitalOcean", 1.99),
            ("Crusoe", 3.45),
        ]
        assert api.gpu_price_per_hour("MI300X") == pytest.approx((1.85 + 1.99) / 2)
        assert gpu.price().provider.startswith("median of 4 quotes:") and gpu.price().instance_gpus == 1
        assert gpu.quote("on-demand", "TensorWave").usd_per_gpu_hour == 1.5  # a provider's name still picks it

    def test_a_quote_from_the_research_note_says_it_is_secondary(self):
        """Every AMD quote taken from the cliffcenter.com note (no rate card of that provider was found) is marked
        in its provider name, which every surface prints, and in its source."""
        for name in ("MI300X", "MI325X"):
            for p in CAT.gpu(name).prices:
                if "cliffcenter.com" in p.source:
                    assert p.provider.endswith("(research note)") and p.source.startswith("SECONDARY"), (name, p)
                else:
                    assert "(research note)" not in p.provider, (name, p)
