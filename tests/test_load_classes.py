"""bench/load_validation.py --classes: the median TTFT's signed errors classed by regime (issue 22's house method; a
diagnostic, nothing in the model moves). docs/hypotheses/trtllm-eager-context.md holds main's table."""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from load_validation import LOAD_BANDS, PROMPT_BANDS, _band, class_lines, run_regimes  # noqa: E402

from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402
from planner.accuracy.validation import validate_load  # noqa: E402

BY_ID = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}


def test_bands():
    assert _band(1.0, LOAD_BANDS) == "no queue (< 1.3x)"
    assert _band(7.0, LOAD_BANDS) == "deep queue (>= 5x)"
    assert _band(922.0, PROMPT_BANDS) == "301-1,000"
    assert _band(math.nan, LOAD_BANDS) == "?"


def test_regimes_of_a_light_run_and_an_eager_one():
    """LD001 (vLLM 0.8.3 at 1 request/s on 8 x A100): a light queue, graphed; SGC016 (SGLang 0.5.6.post1, DeepSeek-R1
    on 8 x B200, one in flight): no queue, its extend steps launched eagerly (0.5.6 runs no piecewise graph)."""
    assert run_regimes(BY_ID["LD001"]) == {"load": "1.3-2x", "launch": "graphed"}
    assert run_regimes(BY_ID["SGC016"]) == {"load": "no queue (< 1.3x)", "launch": "eager"}


def test_class_lines_count_every_predicted_figure_once_per_dimension():
    rows = [BY_ID[r] for r in ("LD001", "LD002", "SGC016")]
    lines = class_lines(rows, validate_load(rows).checks)
    assert lines[0].startswith("ttft_median_ms classed by regime (3 figures;")
    attention = lines[lines.index("attention:") + 1 : lines.index("engine x launch x attention:")]
    assert sorted(int(line[52:60]) for line in attention) == [1, 2]  # SGC016 MLA; the two Llama runs not
