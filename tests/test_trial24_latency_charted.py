"""Trial 24 F7: the Latency sheet's curves were the cost charts' options (the cheapest five within 3x the
recommended cost), so a cheap option of another model (gpt-oss-120b at $20,995 a month) left every Llama-3.3-70B
option but one off the page the SRE reads for the model they would deploy. The latency charts take each model's
cheapest first, then the next cheapest within 3x its own model's cheapest, at most five.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.export import tables


@dataclass(eq=False)
class _Model:
    name: str


@dataclass(eq=False)
class _Result:
    name: str
    model: _Model
    monthly_usd: float
    meets: bool = True
    load_curve: object = "curve"


@dataclass
class _Review:
    results: list


def review(*rows: tuple[str, str, float]) -> _Review:
    return _Review([_Result(n, _Model(m), usd) for n, m, usd in rows])


def names(rs) -> list[str]:
    return [r.name for r in rs]


class TestLatencyCharted:
    # The trial's review (Options, monthly $): gpt-oss $20,995; Llama on MI300X $61,320, B200 $83,023, H100 vLLM
    # $115,471, H200 $120,246, H100 SGLang (dearer than H100 vLLM); Qwen3-235B on H200 $165,338.
    TRIAL = (
        ("gpt-oss H100", "gpt-oss-120b", 20_995),
        ("MI300X vLLM fp8", "Llama-3.3-70B", 61_320),
        ("B200 vLLM fp8", "Llama-3.3-70B", 83_023),
        ("H100 vLLM fp8", "Llama-3.3-70B", 115_471),
        ("H200 vLLM fp8", "Llama-3.3-70B", 120_246),
        ("H100 SGLang fp8", "Llama-3.3-70B", 130_000),
        ("H200 Qwen3-235B fp8", "Qwen3-235B-A22B", 165_338),
    )

    def test_each_models_cheapest_then_the_next_cheapest_five_in_all(self):
        shown = tables.latency_charted(review(*self.TRIAL))
        assert names(shown) == [
            "gpt-oss H100", "MI300X vLLM fp8", "B200 vLLM fp8", "H100 vLLM fp8", "H200 Qwen3-235B fp8",
        ]  # fmt: skip

    def test_the_cost_charts_keep_their_3x_limit(self):
        """The cost charts still leave out what costs over 3x the recommended (one line would flatten the others)."""
        r = review(*self.TRIAL)
        r.recommended = r.results[0]
        assert names(tables.charted(r)) == ["gpt-oss H100", "MI300X vLLM fp8"]  # 3 x $20,995 = $62,985

    def test_options_without_a_curve_or_missing_the_targets_are_not_charted(self):
        r = review(*self.TRIAL[:3])
        r.results[1].load_curve = None
        r.results[2].meets = False
        assert names(tables.latency_charted(r)) == ["gpt-oss H100"]

    def test_one_model_is_the_cheapest_five_in_the_reviews_order(self):
        r = review(("a", "m", 2.5), ("b", "m", 1), ("c", "m", 2), ("d", "m", 1.5), ("e", "m", 1.8), ("f", "m", 2.9))
        assert names(tables.latency_charted(r)) == ["a", "b", "c", "d", "e"]

    def test_with_one_model_it_is_the_cost_charts_choice(self):
        r = review(("a", "m", 10), ("b", "m", 25), ("c", "m", 31), ("d", "m", 30))
        r.recommended = r.results[0]
        assert names(tables.latency_charted(r)) == names(tables.charted(r)) == ["a", "b", "d"]

    def test_the_cost_limit_is_each_models_own(self):
        r = review(("cheap", "x", 10), ("l1", "m", 40), ("l2", "m", 119), ("l3", "m", 121))
        assert names(tables.latency_charted(r)) == ["cheap", "l1", "l2"]  # 121 > 3 x 40
