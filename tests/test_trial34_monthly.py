"""Trial 34 F1 (docs/trials/trial-34.md): a product manager knows the month's requests, not a rate per second.

``[workload] average_requests_per_month`` N is read as ``average_requests_per_s`` = N / 2,628,000 s (730 h x 3,600 s,
``planner.export.sizing.SECONDS_PER_MONTH``); giving both is refused naming both; 0, a negative count and "2M" text
are refused naming the field (the text with the number to write).
"""

from __future__ import annotations

import pytest

from planner.export import render
from tests.cli_support import one_line, run
from tests.test_export import HAND, review_of, write_scenario

#: 8,000,000 requests a month / 2,628,000 s = 3.0441400304414... requests/s (by hand; the example's comment says 3.0).
MONTH = 8_000_000
PER_S = MONTH / (730 * 3600)
#: The Assumptions row's statement of the conversion, 3.0441 to 3 significant figures.
NOTE = "average 3.04 requests/s (8,000,000 a month / 2,628,000 s)"

#: test_export's hand-computed scenario, its load given as rates: a peak of 10 requests/s and the average {average}.
RATES = HAND.replace(
    "peak_concurrent_requests = 500\naverage_concurrent_requests = 200", "peak_requests_per_s = 10\n{average}"
)


def scenario(tmp_path, average: str, name: str = "s.toml"):
    return write_scenario(tmp_path, RATES.replace("{average}", average), name=name)


@pytest.fixture(scope="module")
def reviews(tmp_path_factory):
    """The same scenario with the average as a month's count and as its rate per second (repr: the same float)."""
    tmp = tmp_path_factory.mktemp("monthly")
    monthly = review_of(scenario(tmp, "average_requests_per_month = 8_000_000", "month.toml"))
    per_s = review_of(scenario(tmp, f"average_requests_per_s = {PER_S!r}", "per_s.toml"))
    return monthly, per_s


def test_month_count_is_read_as_the_count_over_730_hours_of_seconds(reviews):
    monthly, per_s = reviews
    assert monthly.scenario.workload.average_requests_per_s == PER_S
    assert per_s.scenario.workload.average_requests_per_s == PER_S


def test_month_count_gives_the_same_review_as_its_rate_per_second(reviews):
    """Same fleets and money; the md differs only by the conversion stated on the Assumptions row."""
    monthly, per_s = reviews
    assert [(r.option.name, r.gpus, r.monthly_usd) for r in monthly.results] == [
        (r.option.name, r.gpus, r.monthly_usd) for r in per_s.results
    ]
    md_month, md_s = render(monthly, "md").decode(), render(per_s, "md").decode()
    assert NOTE in md_month and NOTE not in md_s
    without_note = md_month.replace(f"; {NOTE} (average\\_requests\\_per\\_month)", "")  # md escapes _
    assert without_note.replace("month.toml", "per_s.toml") == md_s


def test_month_count_beside_the_rate_per_second_is_refused_naming_both(tmp_path):
    both = scenario(tmp_path, f"average_requests_per_month = {MONTH}\naverage_requests_per_s = 3")
    line = one_line(run("export", str(both), "-o", str(tmp_path / "r.md")), 2)
    assert "average_requests_per_month and average_requests_per_s" in line, line
    assert "give one of them, not both" in line and "(line 5)" in line, line  # the month's, the first of the two


@pytest.mark.parametrize("count", ["0", "-8_000_000"])
def test_zero_or_negative_month_count_is_refused_with_the_range(tmp_path, count):
    bad = scenario(tmp_path, f"average_requests_per_month = {count}")
    line = one_line(run("export", str(bad), "-o", str(tmp_path / "r.md")), 2)
    assert "workload.average_requests_per_month: must be above 0 and at most 2,628,000,000,000" in line, line
    assert "(line 5)" in line, line  # HAND opens with a blank line: title 2, [workload] 3, peak 4, average 5


def test_month_count_as_2m_text_is_refused_with_the_number_to_write(tmp_path):
    """A token count's "1M" is 1,048,576 (planner.units.TOKEN_SUFFIXES): no reader of request counts; refused."""
    bad = scenario(tmp_path, 'average_requests_per_month = "2M"')
    line = one_line(run("export", str(bad), "-o", str(tmp_path / "r.md")), 2)
    assert "workload.average_requests_per_month: '2M' is text; write the count as a number: 2000000" in line, line


def test_a_monthly_workload_validates_again_from_its_own_dump():
    """A review re-validates a workload from its own fields (``model_dump()``, e.g. test_export's fractional-mean
    review): the month's count and the rate it set are one figure there, not both given by a user."""
    from planner.export.scenario import Workload

    w = Workload.model_validate(
        {"peak_requests_per_s": 10, "average_requests_per_month": MONTH, "prompt_tokens_mean": 100,
         "output_tokens_mean": 10, "ttft_target_s": 1.0, "tpot_target_s": 0.05}
    )  # fmt: skip
    again = Workload.model_validate(w.model_dump())
    assert again.average_requests_per_s == w.average_requests_per_s == MONTH / 2_628_000
