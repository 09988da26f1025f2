"""`planner export` sizes each thing once (user trial 22, F4: 56 s for a 9-option MoE scenario's xlsx, 99 s for its
pdf): each option's fleet without its margin is sized once, for the not-sized check and the outlook alike; the
review is built once whatever the format, and rendering sizes nothing.
"""

from __future__ import annotations

import io
import json

import openpyxl
import pytest
from test_export import DATE, EXAMPLE, littles_law, run, write_scenario

import planner.export.outlook as outlook
import planner.export.pdf as pdf
import planner.export.review as review_module
from planner.catalog import default_catalog
from planner.export import render
from planner.export.review import build_review
from planner.export.scenario import load_scenario

#: with test_export_review and test_export_print: one worker builds the README example's review
pytestmark = pytest.mark.xdist_group("test_export_review")


def _fake_convert(src, fmt, out):
    """LibreOffice's conversion, faked: the "PDF" is the print xlsx it was given, so a test can open it."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{src.stem}.{fmt}"
    path.write_bytes(src.read_bytes())
    return [path]


def test_no_option_is_sized_without_its_margin_twice(monkeypatch):
    """The README example (by Little's law: its money, not its simulation): every sizing with no margin is of a
    different option, workload or model, and every meeting option has one; before, not_sized and the outlook each
    sized every meeting option so. The outlook's figures are those sizings' (the margin's price: fewer GPUs without
    it where the margin costs any)."""
    seen: list[tuple[str, str, str]] = []
    real = outlook.evaluate

    def spy(option, workload, catalog, *args, **kwargs):
        if workload.latency_margin == 0:
            model = kwargs.get("model")
            seen.append((option.model_dump_json(), workload.model_dump_json(), model.name if model else option.model))
        return real(option, workload, catalog, *args, **kwargs)

    monkeypatch.setattr(outlook, "evaluate", spy)
    scenario = littles_law(load_scenario(EXAMPLE))
    review = build_review(scenario, default_catalog(), source="budget-review.toml", date=DATE)
    assert len(seen) == len(set(seen)), [json.loads(o)["name"] for o, _, _ in seen]
    meeting = [r for r in review.results if r.meets]
    assert {r.option.name for r in meeting} <= {json.loads(o)["name"] for o, _, _ in seen}
    assert meeting and all(0 < review.outlook.of(r.option.name).gpus_without_margin <= r.gpus for r in meeting)
    assert any(review.outlook.of(r.option.name).gpus_without_margin < r.gpus for r in meeting)


@pytest.fixture
def no_sizing(monkeypatch):
    """Every way the review sizes, refused: rendering must lay out the review it is given, not size again."""

    def refused(*args, **kwargs):
        raise AssertionError("sized while rendering")

    import planner.export.evaluate as evaluate
    import planner.export.levers as levers

    for module in (evaluate, review_module, outlook, levers):
        monkeypatch.setattr(module, "evaluate", refused)
    monkeypatch.setattr(evaluate, "fewest_replicas", refused)
    monkeypatch.setattr(review_module, "build_review", refused)
    monkeypatch.setattr(pdf, "convert", _fake_convert)


def test_rendering_any_format_sizes_nothing(readme_example_review, no_sizing):
    """xlsx, csv, md and pdf (its print xlsx, the conversion faked) from the README example's review, with every
    sizing refused: the pdf is the review's print form, built from the same review, not a second one."""
    for fmt in ("xlsx", "csv", "md"):
        assert render(readme_example_review, fmt)
    printed = render(readme_example_review, "pdf")
    sheets = openpyxl.load_workbook(io.BytesIO(printed), read_only=True).sheetnames
    assert sheets[0] == "Summary" and "Options compared" in sheets


@pytest.mark.parametrize("fmt", ["xlsx", "pdf"])
def test_the_cli_builds_the_review_once_for_every_format(tmp_path, monkeypatch, fmt):
    """`planner export s.toml -o r.pdf` builds one review, as `-o r.xlsx` does (trial 22, F4 read the pdf's 99 s
    against the xlsx's 56 s as the sizing run again; the difference is LibreOffice's)."""
    import planner.export as export

    built = []
    real = export.build_review

    def counted(*args, **kwargs):
        built.append(fmt)
        return real(*args, **kwargs)

    monkeypatch.setattr(export, "build_review", counted)
    monkeypatch.setattr(pdf, "convert", _fake_convert)
    out = tmp_path / f"r.{fmt}"
    result = run(str(write_scenario(tmp_path)), "-o", str(out), "--date", DATE, "-q")
    assert result.exit_code == 0, result.output
    assert built == [fmt] and out.stat().st_size > 0
