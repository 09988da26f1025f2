"""Mixed fleets in the budget review (trial 28 F14): a [[mix]] of options each serving a share of the traffic, one
budget line whose figures are the sums of its parts, each part its option sized alone at its share.

The reference for each part is an independent export: a scenario file written with that option alone and the
traffic (peak and average) scaled by the share, reviewed as any scenario is. Sized by Little's law to keep the
exports to seconds."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from cli_support import one_line, run

from planner.catalog import default_catalog
from planner.export import build_review
from planner.export.money_tables import MIX_TOTAL
from planner.export.scenario import ScenarioError, load_scenario, parse_scenario
from planner.io.toml_text import loads_toml

#: the module's tests share its exports (module-scoped fixtures): one worker runs them all
pytestmark = pytest.mark.xdist_group("test_export_mix")

WORKLOAD = """\
[workload]
peak_requests_per_s = {peak!r}
average_requests_per_s = {average!r}
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 300
output_tokens_high = 1000
ttft_target_s = 2
tpot_target_s = 0.06
growth_over_horizon = 0.5
sizing = "littles-law"

[defaults]
gpu = "H100"
pricing = "cloud"
"""
OPTIONS = {
    "8B on H100, rented": '[[option]]\nname = "8B on H100, rented"\nmodel = "Llama-3.1-8B"\n',
    "70B on H100, rented": '[[option]]\nname = "70B on H100, rented"\nmodel = "Llama-3.3-70B"\n',
    "70B on H100, bought": (
        '[[option]]\nname = "70B on H100, bought"\nmodel = "Llama-3.3-70B"\npricing = "purchase"\nnode_size = 8\n'
    ),
}
PEAK, AVERAGE = 20.0, 8.0
TWO = ["8B on H100, rented", "70B on H100, bought"]  # the mixed scenario's options
SHARES = {"8B on H100, rented": 0.7, "70B on H100, bought": 0.3}
MIX = """
[[mix]]
name = "Gateway"
parts = [{option = "8B on H100, rented", share = 0.7}, {option = "70B on H100, bought", share = "30%"}]
"""
DATE = "2026-12-07"


def scenario_text(peak: float, average: float, options: list[str], mix: str = "") -> str:
    return (
        'title = "Two models behind one gateway"\n'
        + WORKLOAD.format(peak=peak, average=average)
        + "\n".join(OPTIONS[o] for o in options)
        + mix
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mix")


@pytest.fixture(scope="module")
def mixed(folder):
    """The mix's review, through the CLI (its printed lines and the xlsx it wrote) and as a Review."""
    path = folder / "mixed.toml"
    path.write_text(scenario_text(PEAK, AVERAGE, TWO, MIX))
    out = folder / "mixed.xlsx"
    result = run("export", str(path), "-o", str(out), "--date", DATE)
    assert result.exit_code == 0, result.output
    review = build_review(load_scenario(path), default_catalog(), source=str(path), date=DATE)
    return review, result.stdout, openpyxl.load_workbook(out)


@pytest.fixture(scope="module")
def alone(folder):
    """Each option exported alone at its share of the traffic: the independent reference."""
    out = {}
    for name, share in SHARES.items():
        path = folder / f"alone-{share}.toml"
        path.write_text(scenario_text(PEAK * share, AVERAGE * share, [name]))
        out[name] = build_review(load_scenario(path), default_catalog(), source=str(path), date=DATE)
    return out


def test_each_part_is_its_option_exported_alone_at_its_share(mixed, alone):
    (mix,) = mixed[0].mixes
    assert [p.option for p in mix.parts] == list(SHARES)
    for part in mix.parts:
        ref = alone[part.option]
        rec, ownership = ref.recommended, ref.outlook.of(part.option).ownership
        assert part.share == SHARES[part.option]
        assert part.result.gpus == rec.gpus > 0
        assert part.result.monthly_usd == pytest.approx(rec.monthly_usd, rel=1e-12)
        assert part.result.peak_rate_per_s == pytest.approx(rec.peak_rate_per_s, rel=1e-12)
        assert part.ownership.year1_cash_usd == pytest.approx(ownership.year1_cash_usd, rel=1e-12)
        assert part.ownership.total_usd == pytest.approx(ownership.total_usd, rel=1e-12)
        ref_cases = ref.outlook.of(part.option).cases
        assert [(c.gpus, round(c.monthly_usd, 6)) for c in part.cases] == [
            (c.gpus, round(c.monthly_usd, 6)) for c in ref_cases
        ]


def test_the_mix_total_is_the_sum_of_the_parts_exported_alone(mixed, alone):
    (mix,) = mixed[0].mixes
    refs = [alone[name] for name in SHARES]
    assert mix.meets
    assert mix.gpus == sum(r.recommended.gpus for r in refs)
    assert mix.monthly_usd == pytest.approx(sum(r.recommended.monthly_usd for r in refs), rel=1e-12)
    owned = [r.outlook.of(r.recommended.option.name).ownership for r in refs]
    assert mix.year1_cash_usd == pytest.approx(sum(o.year1_cash_usd for o in owned), rel=1e-12)
    assert mix.total_usd == pytest.approx(sum(o.total_usd for o in owned), rel=1e-12)
    # a part's share of the traffic is not the option's whole-traffic fleet: the 70B at 30% needs fewer GPUs
    whole = {r.option.name: r for r in mixed[0].results}
    assert mix.parts[1].result.gpus < whole["70B on H100, bought"].gpus


def test_the_ranking_is_the_options_alone(mixed, folder):
    """A mix is a budget line: the ranked options and the recommendation are those of the scenario without it."""
    review = mixed[0]
    path = folder / "no-mix.toml"
    path.write_text(scenario_text(PEAK, AVERAGE, TWO))
    plain = build_review(load_scenario(path), default_catalog(), source=str(path), date=DATE)
    assert plain.mixes == ()
    assert [(r.option.name, r.gpus, r.monthly_usd) for r in review.results] == [
        (r.option.name, r.gpus, r.monthly_usd) for r in plain.results
    ]
    assert review.recommended.option.name == plain.recommended.option.name


def test_the_terminal_prints_the_mix(mixed):
    review, stdout, _ = mixed
    (mix,) = review.mixes
    line = next(x for x in stdout.splitlines() if x.startswith("Mixed fleet Gateway:"))
    assert f"{mix.gpus} GPUs, ${mix.monthly_usd:,.0f} a month" in line
    assert "8B on H100, rented (70% of the traffic)" in line
    assert "70B on H100, bought (30% of the traffic)" in line


def test_the_xlsx_has_the_mixes_sheet_with_the_numbers(mixed):
    review, _, book = mixed
    (mix,) = review.mixes
    ws = book["Mixes"]
    rows = list(ws.iter_rows(values_only=True))
    head = rows[0]
    col = {h: i for i, h in enumerate(head)}
    parts = [r for r in rows[1:] if r[col["Part"]] != MIX_TOTAL]
    (total,) = [r for r in rows[1:] if r[col["Part"]] == MIX_TOTAL]
    assert [r[col["Part"]] for r in parts] == list(SHARES)
    assert [r[col["Share of traffic"]] for r in parts] == list(SHARES.values())
    for row, part in zip(parts, mix.parts, strict=True):
        assert row[col["GPUs"]] == part.result.gpus
        assert row[col["Monthly cost"]] == pytest.approx(part.result.monthly_usd)
    assert total[col["GPUs"]] == mix.gpus == sum(r[col["GPUs"]] for r in parts)
    assert total[col["Monthly cost"]] == pytest.approx(sum(r[col["Monthly cost"]] for r in parts))
    assert total[col["Year-1 cash, phased"]] == pytest.approx(mix.year1_cash_usd)
    assert total[col["Total, 3 years, phased"]] == pytest.approx(mix.total_usd)
    assert "snapshot" in ws.oddHeader.right.text  # a money sheet the yellow prices do not change
    summary = [str(c) for row in book["Summary"].iter_rows(values_only=True) for c in row if c]
    assert "Mixed fleets" in summary
    assert any(c.startswith("Mixed fleet Gateway:") for c in summary)


def test_the_markdown_has_the_mixed_fleets_section(mixed):
    from planner.export import render

    review = mixed[0]
    (mix,) = review.mixes
    text = render(review, "md").decode()
    section = text.split("## Mixed fleets\n", 1)[1].split("\n## ", 1)[0]
    assert "A mixed fleet serves the scenario's traffic with several options at once" in section
    assert f"Mixed fleet Gateway: {mix.gpus} GPUs, ${mix.monthly_usd:,.0f} a month" in section
    total = next(x for x in section.splitlines() if "| Total (sum of the parts) |" in x)
    assert f"| {mix.gpus} | ${mix.monthly_usd:,.0f} | ${mix.year1_cash_usd:,.0f} | ${mix.total_usd:,.0f} |" in total
    assert text.index("## Options") < text.index("## Mixed fleets") < text.index("## Total cost of ownership")


def test_the_glossary_defines_a_mixed_fleet_where_the_review_has_one(mixed):
    """The term is added only to a review with a [[mix]] (planner.export.glossary.terms), in both the xlsx and md."""
    from planner.export import render

    review, _, book = mixed
    assert "Mixed fleet" in [r[0] for r in book["Glossary"].iter_rows(min_row=2, values_only=True)]
    glossary = render(review, "md").decode().split("## Glossary\n", 1)[1].split("\n## ", 1)[0]
    assert "- **Mixed fleet**: Several options serving one traffic at once" in glossary


def test_no_mix_no_sheet(folder):
    """A scenario without a [[mix]] writes no Mixes sheet and no Mixed fleets section (its surfaces unchanged)."""
    from planner.export import render

    path = folder / "one.toml"
    path.write_text(scenario_text(4.0, 2.0, ["8B on H100, rented"]))
    review = build_review(load_scenario(path), default_catalog(), source=str(path), date=DATE)
    text = render(review, "md").decode()
    assert "Mixed fleets" not in text
    assert "**Mixed fleet**" not in text  # nor the glossary's term
    book_path = folder / "one.xlsx"
    book_path.write_bytes(render(review, "xlsx"))
    assert "Mixes" not in openpyxl.load_workbook(book_path).sheetnames


# -- refused mixes ---------------------------------------------------------------------------------------------


def _refused(mix: str) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(loads_toml(scenario_text(PEAK, AVERAGE, TWO, mix)), "s.toml")
    return str(info.value)


def test_shares_not_summing_to_one_are_refused_with_the_sum():
    text = _refused(
        '[[mix]]\nname = "G"\nparts = [{option = "8B on H100, rented", share = 0.7}, '
        '{option = "70B on H100, bought", share = 0.2}]\n'
    )
    assert text.startswith("s.toml: mix #1 (G).parts: the shares sum to 0.9 (0.7 + 0.2), not 1")


def test_shares_summing_to_one_within_float_rounding_are_taken():
    """0.7 + 0.2 + 0.1 is 0.9999999999999999 in floats: taken."""
    mix = (
        '[[mix]]\nname = "G"\nparts = [{option = "8B on H100, rented", share = 0.7}, '
        '{option = "70B on H100, bought", share = 0.2}, {option = "70B on H100, rented", share = 0.1}]\n'
    )
    scenario = parse_scenario(loads_toml(scenario_text(PEAK, AVERAGE, [*TWO, "70B on H100, rented"], mix)))
    assert [p.share for p in scenario.mix[0].parts] == [0.7, 0.2, 0.1]
    assert sum(p.share for p in scenario.mix[0].parts) != 1  # the float sum, within SHARE_SUM_TOLERANCE


def test_an_option_twice_in_a_mix_is_refused():
    text = _refused(
        '[[mix]]\nname = "G"\nparts = [{option = "8B on H100, rented", share = 0.3}, '
        '{option = "8B on H100, rented", share = 0.7}]\n'
    )
    assert "mix #1 (G).parts #2.option: '8B on H100, rented' is in this mix twice" in text


def test_an_unknown_option_is_refused_with_a_suggestion():
    text = _refused(
        '[[mix]]\nname = "G"\nparts = [{option = "8B on H100 rented", share = 0.7}, '
        '{option = "70B on H100, bought", share = 0.3}]\n'
    )
    assert "mix #1 (G).parts #1.option: '8B on H100 rented' is not an option name" in text
    assert "did you mean '8B on H100, rented'" in text
    assert "options: '8B on H100, rented', '70B on H100, bought'" in text


def test_a_share_as_a_percentage_number_is_refused_with_the_way_out():
    text = _refused('[[mix]]\nname = "G"\nparts = [{option = "8B on H100, rented", share = 100}]\n')
    assert "mix #1.parts #1.share: 100 looks like a percentage" in text


def test_the_cli_refuses_a_bad_mix_in_one_line_and_writes_nothing(folder):
    path = folder / "bad.toml"
    path.write_text(
        scenario_text(
            PEAK,
            AVERAGE,
            TWO,
            '\n[[mix]]\nname = "G"\nparts = [{option = "8B on H100, rented", share = 0.7}, '
            '{option = "70B on H100, bought", share = 0.4}]\n',
        )
    )
    out = folder / "bad.xlsx"
    line = one_line(run("export", str(path), "-o", str(out)), 2)
    assert "mix #1 (G).parts: the shares sum to 1.1 (0.7 + 0.4), not 1" in line
    assert line.endswith(f"(line {path.read_text().splitlines().index(line_of_parts(path)) + 1})")
    assert not out.exists()


def line_of_parts(path: Path) -> str:
    return next(x for x in path.read_text().splitlines() if x.startswith("parts ="))


def test_mixes_hold_at_most_as_many_parts_as_a_scenario_holds_options():
    parts = ", ".join(f'{{option = "8B on H100, rented", share = {1 / 501!r}}}' for _ in range(501))
    text = _refused(f'[[mix]]\nname = "G"\nparts = [{parts}]\n')
    assert text == "s.toml: mix #1.parts: 501 parts; a scenario holds at most 500 (split it into several reviews)"
    assert _refused('[[mix]]\nname = "G"\nparts = []\n').startswith("s.toml: mix #1.parts: no part; give at least one")


def test_export_doc_names_the_mixes_sheet_in_its_place(mixed):
    """docs/export.md's ``.xlsx`` row names every sheet of a review with a mix in bold, in the book's order."""
    import re

    book = mixed[2]
    row = next(
        x
        for x in (Path(__file__).parents[1] / "docs" / "export.md").read_text(encoding="utf-8").splitlines()
        if x.startswith("| `.xlsx`")
    )
    named = re.findall(r"\*\*([A-Z][\w -]+?)\*\*", row)  # "Break-even" has a hyphen
    assert "Mixes" in book.sheetnames
    assert [n for n in named if n in book.sheetnames] == book.sheetnames
