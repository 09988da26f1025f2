"""Figures stated in README.md and docs/ that a test recomputes (issue 26: 66 models for 72, 59 scenarios for 63,
a 120 kB add-in bundle of 375 kB). Each stated figure is read from the text and compared with what the code and
data give today; a failure names the figure, what the text says and what it should say.

Transcripts (the ``<!-- transcript -->`` blocks) are checked by tests/test_readme.py; timings are not checked
here (they depend on the machine; docs/model.md states each one with its machine and command).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
from doc_support import ROOT, stated
from test_workbook_libreoffice import SCENARIO_INPUTS

from planner.accuracy import predict
from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.accuracy.holdout import fit_rows
from planner.catalog import default_catalog
from planner.engines.architecture import param_breakdown

CAT = default_catalog()


def parameter_fits() -> dict[str, float]:
    """|computed / published - 1| per catalog model, a stored tied output head taken out (tests/test_catalog.py)."""
    out = {}
    for m in CAT.models:
        b = param_breakdown(m)
        published = m.published_params_total - (b.embedding if m.published_total_includes_tied_copy else 0)
        out[m.name] = abs(b.total / published - 1)
    return out


class TestReadme:
    def test_parameter_count_figures(self):
        """'all N within 1%, M within 0.01% (K to the parameter); the other four are published rounded (...)'."""
        fits = parameter_fits()
        exact = sum(
            param_breakdown(m).total
            == m.published_params_total - (param_breakdown(m).embedding if m.published_total_includes_tied_copy else 0)
            for m in CAT.models
        )
        rounded = sorted(n for n, e in fits.items() if e >= 1e-4)
        within_1, within_001, to_the_parameter, others, names = stated(
            "README.md",
            r"all (\d+) within 1%,\s+(\d+) within 0\.01% \((\d+) to the parameter\); the other (\w+) are published "
            r"rounded \(([^)]*)\)",
        )
        assert (within_1, within_001, to_the_parameter, others) == (
            sum(e < 0.01 for e in fits.values()),
            sum(e < 1e-4 for e in fits.values()),
            exact,
            len(rounded),
        )
        assert within_1 == len(CAT.models)  # "all": every model of the catalog
        assert sorted(re.split(r",\s*", names)) == rounded

    def test_libreoffice_parity_scenarios(self):
        assert stated("README.md", r"in LibreOffice over (\d+) scenarios") == (len(SCENARIO_INPUTS),)

    def test_fitted_rows(self):
        """'(85 static-batch and batch-1 rows of vLLM, LMDeploy and TensorRT-LLM': what the fit uses."""
        assert stated("README.md", r"\((\d+) static-batch and batch-1 rows") == (
            len(fit_rows(predict.load_decode_rows())),
        )


class TestDocs:
    def test_workbook_parity_scenarios_and_gpus(self):
        gpus = {CAT.gpu(s["gpu"]).name for s in SCENARIO_INPUTS.values() if s.get("gpu") in CAT.gpus}
        assert stated("docs/workbooks.md", r"headless for (\d+) scenarios \((\d+) GPUs") == (
            len(SCENARIO_INPUTS),
            len(gpus),
        )

    def test_held_out_rows_and_sources(self):
        """docs/accuracy.md's protocol: every row of a source the fit did not use is held out, whole."""
        held = [r for r in predict.load_decode_rows() if r.source_group not in FIT_SOURCE_GROUPS]
        rows, sources = stated("docs/accuracy.md", r"held out, whole \((\d+) rows, (\d+) sources")
        assert (rows, sources) == (len(held), len({r.source_group for r in held}))
        # docs/history.md's "The same N never-fitted rows" is that paragraph's day (964), not today's count.

    def test_lite_bundle_size(self, tmp_path):
        """'It writes `main.py` (about N kB)': within 5% of what `planner addin lite` writes today (run as a
        command: the bundle takes the planner modules its process has imported)."""
        subprocess.run(
            [sys.executable, "-m", "planner", "addin", "lite", str(tmp_path / "lite")], check=True, capture_output=True
        )
        size_kb = (tmp_path / "lite" / "main.py").stat().st_size / 1e3
        (kb,) = stated("docs/excel.md", r"It writes `main.py` \(about (\d+) kB\)")
        assert abs(kb / size_kb - 1) <= 0.05, f"docs/excel.md says about {kb} kB; main.py is {size_kb:.0f} kB"

    def test_excel_front_end_time(self):
        """docs/excel.md's "each request's N ms front-end time (`FRONTEND_S`)" under load is the constant the
        simulation adds (``planner.serving.load.FRONTEND_S``, 22.2 ms since s186; the page said 22.0)."""
        from planner.serving.load import FRONTEND_S

        (ms,) = stated("docs/excel.md", r"each request's ([\d.]+) ms front-end time \(`FRONTEND_S`\)")
        assert ms == f"{FRONTEND_S * 1e3:.1f}", f"docs/excel.md says {ms} ms; FRONTEND_S is {FRONTEND_S * 1e3:.1f} ms"

    def test_excel_units_example(self):
        """docs/excel.md's units sentence: `=TPOT("H100","llama2-70b",8192,3)` is TPOT in ms, rounded as every surface
        shows it, and `tpot(...)` the same in seconds (trial 25 F7: the page said 30.7 where plan shows 30.8)."""
        import planner

        ms, ms_exact, s_rounded, s_exact = stated(
            "docs/excel.md",
            r'`=TPOT\("H100","llama2-70b",8192,3\)` is ([\d.]+) \(([\d.]+) rounded\) where .*? is ([\d.]+) \(([\d.]+)\)',
        )
        t = planner.tpot("H100", "llama2-70b", 8192, batch=3)
        assert (ms, ms_exact) == (f"{t * 1e3:.1f}", f"{t * 1e3:.2f}")
        assert (s_rounded, s_exact) == (f"{t:.4f}", f"{t:.5f}")


class TestReadmeAccuracy:
    """The README's accuracy paragraph: start-up memory errors and the range's residuals (issue 26)."""

    README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())

    def test_kv_memory_figures(self):
        import importlib.util
        import statistics

        spec = importlib.util.spec_from_file_location("heldout", ROOT / "bench" / "heldout.py")
        heldout = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(heldout)
        checks = heldout.memory_checks()

        def tier(name):
            # logs without a prediction (a model not in the catalog, pipeline parallelism) are not counted
            e = [
                abs(c["planner"])
                for c in checks
                if c["q"] == f"vLLM KV GiB / GPU [{name}]" and c["planner"] == c["planner"]
            ]
            return int(f"{statistics.median(e):.0%}"[:-1]), int(f"{max(e):.0%}"[:-1]), len(e)

        m = re.search(
            r"median (\d+)%, worst (\d+)% on the (\d+) vLLM start-up logs the memory profiles were fitted to; "
            r"median (\d+)%, worst (\d+)% on (\d+) further logs of the same sources; (\d+)% off on the one log",
            self.README,
        )
        assert m, "README's start-up memory sentence changed shape; update this test with it"
        held = tier("held out")
        assert [int(g) for g in m.groups()] == [*tier("in-sample"), *tier("same source"), held[1]] and held[2] == 1
        (log,) = [c for c in checks if c["q"] == "vLLM KV GiB / GPU [held out]"]
        where = re.search(r"\(vLLM issue (\d+): ([\w.-]+) on (\d+) x H100 with an LMCache connector\)", self.README)
        assert where, "README's held-out log sentence changed shape; update this test with it"
        assert (log["record"].startswith(f"GH{where[1]}-"), log["GPU"], log["TP"]) == (
            True,
            "H100 SXM 80GB",
            f"TP{where[3]}",
        )

    def test_range_residuals(self):
        import csv

        with open(ROOT / "catalogs" / "reference" / "heldout_residuals.csv", encoding="utf-8") as f:
            table = {(r["dimension"], r["value"]): r for r in csv.DictReader(f)}
        h100 = table[("gpu", "H100 SXM 80GB")]
        m = re.search(
            r"\(H100: (-\d+)% / \+(\d+)%\), widened where the (\d+) held-out figures do not reach.*?"
            r"a GPU with fewer than \d+ figures x([\d.]+)",
            self.README,
        )
        assert m, "README's range sentence changed shape; update this test with it"
        assert (int(m[1]), int(m[2]), int(m[3]), m[4]) == (
            round(float(h100["residual_low"]) * 100),
            round(float(h100["residual_high"]) * 100),
            int(table[("all", "*")]["rows"]),
            table[("gpu", "*")]["widen"],
        )


def _pct(x: float) -> int:
    """A residual as the docs print it: -0.26 -> -26."""
    return round(x * 100)


class TestExportDoc:
    """docs/export.md: each figure of "How an option is sized" and "Total cost of ownership" from the code that
    computes it (planner.export.sizing, planner.accuracy.ranges / serving_margin, catalogs/costs/ownership.toml)."""

    DOC = "docs/export.md"

    def test_two_contexts_example(self):
        """'800 + 400 x exp(0.9319^2) / 2 = 800 + 476.6 = 1,277 tokens': sizing.inflight_context_tokens of the
        README scenario's lengths (examples/budget-review.toml: 800 / 3,000 prompt, 400 / 1,200 output, p95)."""
        import tomllib

        from planner.export import sizing

        w = tomllib.loads((ROOT / "examples" / "budget-review.toml").read_text(encoding="utf-8"))["workload"]
        prompt, out, s, half, total, equal_half, equal_total, high = stated(
            self.DOC,
            r"Example: (\d+) \+ (\d+) x exp\((0\.\d+)\^2\) / 2 = \d+ \+ ([\d.]+) = \*\*([\d,]+) tokens\*\* \(equal "
            r"output lengths would give \d+ \+ (\d+) = ([\d,]+); 0\.1\.0 took ([\d,]+) for every sequence\)",
        )
        assert (prompt, out) == (w["prompt_tokens_mean"], w["output_tokens_mean"])
        spread = sizing.output_length_spread(out, w["output_tokens_high"], w["high_percentile"])
        assert s == f"{spread:.4f}"
        assert half == f"{out * math.exp(spread**2) / 2:.1f}"
        assert total == round(sizing.inflight_context_tokens(prompt, out, w["output_tokens_high"], 95))
        assert (equal_half, equal_total) == (out // 2, prompt + out // 2)
        assert high == w["prompt_tokens_high"] + w["output_tokens_high"]
        assert stated(self.DOC, r"p95 prompt \+ p95 output; ([\d,]+) tokens in the example") == (high,)
        # the same outputs truncated at the README scenario's slot, as the review takes them (s208)
        slot, s_slot, p_slot, half_slot, total_slot = stated(
            self.DOC,
            r"outputs in its ([\d,]+)-token slot: s = ([\d.]+), (\d+) \+ ([\d.]+) = \*\*([\d,]+) tokens\*\*",
        )
        assert (slot, p_slot) == (high, prompt)
        assert s_slot == f"{sizing.output_length_spread(out, w['output_tokens_high'], 95, slot):.4f}"
        exact = sizing.inflight_context_tokens(prompt, out, w["output_tokens_high"], 95, slot)
        assert (half_slot, total_slot) == (f"{exact - prompt:.1f}", round(exact))

    @pytest.mark.xdist_group("test_export_review")  # the README review, built once by that group's worker
    def test_held_out_tpot_range_example(self, readme_example_review):
        """'for the README's example the TPOT range, 31.7 - 60.4 ms at 38.7 ms simulated': the recommended option's
        simulated p95 TPOT at peak and its held-out range (planner.export.held_out), as Summary shows them (a trial:
        the docs said 30.9 - 58.8 ms at 37.7 ms)."""
        from planner.accuracy.loaded_ranges import load_loaded_ranges
        from planner.export import held_out

        low, high, simulated = stated(
            self.DOC, r"for the README's example the TPOT range, ([\d.]+) - ([\d.]+) ms at ([\d.]+) ms simulated"
        )
        rec = readme_example_review.recommended
        tpot_ms = float(rec.fleet.tpot_peak_s) * 1e3
        shown = held_out.range_text(tpot_ms, held_out.range_for(load_loaded_ranges(), "tpot", 95), "ms")
        assert (f"{low} - {high} ms", simulated) == (shown, f"{tpot_ms:.1f}")

    def test_held_out_ratios_and_coverage(self):
        """'TTFT 0.79x to 15.66x against p50's 0.76x to 3.37x; TPOT 0.82x to 1.56x against 0.79x to 1.33x', p99's
        15.66x for =LOADED_RANGE and 'p99 TTFT 90%, p99 TPOT 79%': catalogs/reference/loaded_residuals.csv's steady
        rows (1 + low, 1 + high, inside_left_out), read with the csv module."""
        import csv

        with open(ROOT / "catalogs" / "reference" / "loaded_residuals.csv", newline="", encoding="utf-8") as f:
            rows = {r["quantity"]: r for r in csv.DictReader(f) if r["arrival"] == "steady"}
        said = stated(
            self.DOC,
            r"wider at the slow end \(TTFT ([\d.]+)x to ([\d.]+)x against p50's ([\d.]+)x to ([\d.]+)x; TPOT "
            r"([\d.]+)x to ([\d.]+)x against ([\d.]+)x to ([\d.]+)x\)",
        )
        table = [
            f"{1 + float(rows[q][end]):.2f}"
            for q in ("ttft_p99", "ttft_p50", "tpot_p99", "tpot_p50")
            for end in ("low", "high")
        ]
        assert list(said) == table
        assert stated(self.DOC, r'`=LOADED_RANGE\("TTFT",95,"high"\)` \(p99\'s ([\d.]+)x\)') == (table[1],)
        assert stated(self.DOC, r"p99 TTFT (\d+)%, p99 TPOT (\d+)%\)") == tuple(
            round(100 * float(rows[q]["inside_left_out"])) for q in ("ttft_p99", "tpot_p99")
        )

    def test_normal_quantile_and_lognormal_bound(self):
        """'1.645 at p95' and 'h / m > exp(z^2 / 2) = 3.87 at p95': beyond it no lognormal has both, and the spread
        is no longer capped at z (trial 27 F12): without a slot to truncate at, refused."""
        from statistics import NormalDist

        from planner.export import sizing
        from planner.serving.load import LongTailError

        z = NormalDist().inv_cdf(0.95)
        (quantile,) = stated(self.DOC, r"z the normal quantile, ([\d.]+) at p95")
        (cap,) = stated(self.DOC, r"h / m > exp\(z\^2 / 2\) = ([\d.]+) at p95")
        assert (quantile, cap) == (f"{z:.3f}", f"{math.exp(z * z / 2):.2f}")
        with pytest.raises(LongTailError, match="has no lognormal fit"):
            sizing.output_length_spread(100, 100 * float(cap) * 1.01, 95)

    def test_truncated_fit_example(self):
        """Step 1's long tail: 'Trial 27's 1,000 / p95 4,000 prompts and 3,000 / p95 12,000 outputs in 16,000 tokens:
        s = 2.5906, 1,000 + 3,921 = 4,921 tokens' (sizing.inflight_context_tokens with the slot), the bound
        '(4.96 at 12,000 in 16,000; 2.60 at 20,000 in 22,000)' ((h / T) (a + 1) / a, a = ln(1 / 0.95) / ln(T / h),
        written out here: the code's ``truncated_ratio_bound`` stops at s = 10, just under it), the old rule's jump at
        3.87 ('21,516 tokens in flight, against 4,747 just past')."""
        from planner.export import sizing

        prompt, prompt_high, out, high, slot, s, half, total = stated(
            self.DOC,
            r"Trial 27's ([\d,]+) / p95 ([\d,]+) prompts and ([\d,]+) / p95 ([\d,]+) outputs in ([\d,]+) tokens: "
            r"s = ([\d.]+), [\d,]+ \+ ([\d,]+) = \*\*([\d,]+) tokens\*\*",
        )
        assert slot == prompt_high + high
        assert s == f"{sizing.output_length_spread(out, high, 95, slot):.4f}"
        exact = sizing.inflight_context_tokens(prompt, out, high, 95, slot)
        assert (half, total) == (round(exact - prompt), round(exact))

        def bound(h: float, t: float) -> str:
            a = math.log(1 / 0.95) / math.log(t / h)
            return f"{h / t * (a + 1) / a:.2f}"

        said = stated(self.DOC, r"\(([\d.]+) at ([\d,]+) in ([\d,]+); ([\d.]+) at ([\d,]+) in ([\d,]+)\)")
        assert said[0] == bound(said[1], said[2]) and said[3] == bound(said[4], said[5])
        p, p_high, o, o_high, within, past = stated(
            self.DOC,
            r"\(([\d,]+) / p95 ([\d,]+) prompts with ([\d,]+) / p95 ([\d,]+) outputs: ([\d,]+) tokens in flight, "
            r"against ([\d,]+) just past\)",
        )
        past_high = o_high + 5  # "just past": the bound at 11,605 (test_long_tail's case)
        assert within == round(sizing.inflight_context_tokens(p, o, o_high))  # untruncated, as until s208
        assert past == round(sizing.inflight_context_tokens(p, o, past_high, 95, p_high + past_high))
        assert o_high / o < math.exp(1.6448536**2 / 2) < past_high / o  # either side of the bound

    def test_margin_example(self):
        """'a +50% margin: 50 ms -> 33.3 ms, 1.5 s -> 1.0 s': sizing.margin_target."""
        from planner.export import sizing

        margin, tpot_ms, tpot_to, ttft_s, ttft_to = stated(
            self.DOC, r"a \+(\d+)% margin: (\d+) ms -> ([\d.]+) ms, ([\d.]+) s -> ([\d.]+) s\)"
        )
        assert tpot_to == f"{float(sizing.margin_target(tpot_ms / 1e3, margin / 100)) * 1e3:.1f}"
        assert ttft_to == f"{float(sizing.margin_target(float(ttft_s), margin / 100)):.1f}"

    def test_widening_factors(self):
        """'today GPU x1.11, TP x1.00, engine x1.00, MoE x1.00, size x1.00': the ``widen`` column of
        heldout_residuals.csv (issue 26: the text said TP x1.12, GPU x1.01, MoE x1.58, size x1.18)."""
        from planner.accuracy import ranges

        regions = ranges.load_regions()
        factors = stated(
            self.DOC,
            r"today GPU x([\d.]+), TP x([\d.]+), engine x([\d.]+), MoE x([\d.]+), size x([\d.]+);",
        )
        assert factors == tuple(f"{regions[(d, '*')].widen:.2f}" for d in ("gpu", "tp", "engine", "moe", "size"))
        (moe_rows,) = stated(self.DOC, r"a MoE model \((\d+) figures\), a model over (?:\d+)B parameters")
        assert moe_rows == regions[("moe", "MoE")].rows
        (big,) = stated(self.DOC, r"a MoE model \(\d+ figures\), a model over (\d+)B parameters")
        assert big * 1e9 == ranges.SIZE_CLASSES[-1][0]
        (few,) = stated(self.DOC, r"all GPUs together for a GPU with fewer than (\d+) held-out figures")
        assert few == ranges.MIN_ROWS

    def test_ranges_per_group(self):
        """'(H100 at 4 GPUs per replica: -29% / +44%; at 8: -29% / +44%, TP 8's factor x1.00, so not widened; L40S at 8:
        -24% / +39%, all GPUs' range widened x1.05)': calibration.residual_range for Llama-3.1-70B with vLLM (issue 26: the
        text said +59% and +69%)."""
        from planner.accuracy.calibration import residual_range

        h4_low, h4_high, h8_low, h8_high, tp_widen, l_low, l_high, l_widen = stated(
            self.DOC,
            r"\(H100 at 4 GPUs per replica: (-\d+)% / \+(\d+)%; at 8: (-\d+)% / \+(\d+)%, TP 8's factor x([\d.]+), so not widened; "
            r"L40S at 8: (-\d+)% / \+(\d+)%, all GPUs' range widened x([\d.]+)\)",
        )
        r4 = residual_range("H100 SXM 80GB", "vllm", gpus=4, model="Llama-3.1-70B")
        assert (_pct(r4.low), _pct(r4.high)) == (int(h4_low), h4_high) and not r4.widened
        r8 = residual_range("H100 SXM 80GB", "vllm", gpus=8, model="Llama-3.1-70B")
        assert (_pct(r8.low), _pct(r8.high)) == (
            int(h8_low),
            h8_high,
        ) and not r8.widened  # a x1.00 factor is not applied
        from planner.accuracy import ranges

        assert f"{ranges.load_regions()[('tp', '*')].widen:.2f}" == tp_widen
        r = residual_range("L40S", "vllm", gpus=8, model="Llama-3.1-70B")
        assert (_pct(r.low), _pct(r.high)) == (int(l_low), l_high) and r.widened.startswith(f"x{l_widen}:")

    def test_serving_margins(self):
        """'(H100 with vLLM, dense: 7 figures, -8% / -1%)', '(A100 80GB with vLLM, dense: 2 figures, -13% to -9%, and 17
        dense vLLM runs on every GPU, -9% / +35%, so -13% / +43%)', 'with none of the engine and class anywhere it
        stands (LMDeploy)', 'H200 with vLLM has 11 figures, all MoE (10 DeepSeek-R1 runs, 9 of them dstack's;
        +26% / +146%), so Llama-3.1-70B on H200 is sized with the dense runs on every GPU, -37% / +24%':
        heldout_serving_residuals.csv and serving_margin.margin_range (s171: per class; until then H200 + vLLM's 11
        figures sized the dense Llama at +135%)."""
        from planner.accuracy.calibration import residual_range
        from planner.accuracy.serving_margin import EVERY_GPU, load_serving, margin_range, steady_load

        serving = load_serving()
        rows, sources, low, high = stated(
            self.DOC, r"H100 with vLLM, dense, has (\d+) figures from (\d+) sources \((-\d+)% / ([-+]\d+)%\)"
        )
        h100 = serving[("H100 SXM 80GB", "vllm", "dense", "all")]
        assert (rows, sources, int(low), int(high)) == (h100.rows, h100.source_count, _pct(h100.low), _pct(h100.high))
        # fewer than MIN_SOURCES: widened by the dense vLLM runs on every GPU (s202, trial 20 F1)
        w_low, w_high = stated(
            self.DOC, r"widened to vLLM dense on every GPU \(21 runs from 5 sources ...\)\", (-\d+)% / \+(\d+)%"
        )
        got = margin_range(
            residual_range("H100 SXM 80GB", "vllm", gpus=4, model="Llama-3.1-70B"), "H100 SXM 80GB", "vllm", "dense"
        )
        assert (int(w_low), int(w_high)) == (_pct(got.low), _pct(got.high))
        a_rows, smallest, largest, p_rows, p_low, p_high, m_low, m_high = stated(
            self.DOC,
            r"\(A100 80GB with vLLM, dense: (\d+) figures, (-\d+)% to (-\d+)%, and (\d+) dense vLLM runs on every GPU, "
            r"(-\d+)% / \+(\d+)%, so (-\d+)% / \+(\d+)%\)",
        )
        a100, pooled = serving[("A100 SXM 80GB", "vllm", "dense", "all")], serving[(EVERY_GPU, "vllm", "dense", "all")]
        assert 1 <= a100.rows < 5 and (a_rows, int(smallest), int(largest)) == (
            a100.rows,
            _pct(a100.smallest),
            _pct(a100.largest),
        )
        assert (p_rows, int(p_low), p_high) == (pooled.rows, _pct(pooled.low), _pct(pooled.high))
        prediction = residual_range("A100 SXM 80GB", "vllm", gpus=8, model="Llama-3.1-70B")
        got = margin_range(prediction, "A100 SXM 80GB", "vllm", "dense")
        assert (int(m_low), m_high) == (_pct(got.low), _pct(got.high))
        assert stated(self.DOC, r"with none of the engine and class anywhere it stands \((\w+)\)") == ("LMDeploy",)
        assert not any(engine == "lmdeploy" for _, engine, _, _ in serving)
        rows, dstack, low, high, d_low, d_high = stated(
            self.DOC,
            r"H200 with vLLM has (\d+) figures, none dense \(\d+ MLA: DeepSeek-R1 runs, (\d+) of them dstack's;\s+"
            r"\+(\d+)% / \+(\d+)%\), so Llama-3.1-70B on H200 is sized with the dense runs on every GPU, (-\d+)% / \+(\d+)%",
        )
        h200 = serving[("H200 SXM 141GB", "vllm", "MLA", "all")]
        assert ("H200 SXM 141GB", "vllm", "dense", "all") not in serving
        other = serving[("H200 SXM 141GB", "vllm", "MoE", "all")].rows  # GLM-4.6
        assert (rows, low, high) == (h200.rows + other, _pct(h200.low), _pct(h200.high))
        ours = [
            r
            for r in predict.load_decode_rows()
            if r.source_group == "dstack-deepseek-r1-h200-mi300x" and r.engine == "vllm" and "H200" in r.gpu
        ]
        assert dstack == sum(steady_load(r.kind, r.batch, r.num_prompts, r.request_rate) for r in ours)
        prediction = residual_range("H200 SXM 141GB", "vllm", gpus=4, model="Llama-3.1-70B")
        got = margin_range(prediction, "H200 SXM 141GB", "vllm", "dense")
        assert (int(d_low), d_high) == (_pct(got.low), _pct(got.high))

    def test_ownership_example(self):
        """'H100 ($30,000, 700 W) in 8-GPU nodes: capex $35,883.75; $996.77 + $145.20 + $234.68 = $1,376.64 a
        month' and the per-node defaults quoted beside the formula: planner.export.sizing over the catalog's H100
        purchase quote and catalogs/costs/ownership.toml."""
        from planner.export import sizing
        from planner.export.ownership import ownership_defaults
        from planner.model.fleet import HOURS_PER_MONTH

        d = ownership_defaults()
        host, net, power_w, pue, kwh, colo = stated(
            self.DOC,
            r"\(host server \$([\d,]+) \+ network \$([\d,]+)\) / n .*?host power ([\d,]+) W / n\) / 1000 x PUE "
            r"([\d.]+) x \$([\d.]+)/kWh x 730 h .*?\$([\d.]+) per kW-month",
        )
        assert (host, net, power_w) == (d.host_server_usd.value, d.networking_usd.value, d.host_power_w.value)
        assert (pue, kwh, colo) == (
            f"{d.pue.value:g}",
            f"{d.power_usd_per_kwh.value:g}",
            f"{d.colocation_usd_per_kw_month.value:g}",
        )
        assert stated(
            self.DOC, r"`pue` \| per kW of IT load, electricity, PUE \(the same file: ([\d.]+), ([\d.]+), ([\d.]+)\)"
        ) == (colo, kwh, pue)

        h100 = CAT.gpu("H100")
        (purchase,) = [p.purchase_usd for p in h100.prices if p.kind == "purchase"]
        price, tdp, nodes, capex, amort, power, coloc, month = stated(
            self.DOC,
            r"H100 \(\$([\d,]+), (\d+) W\) in (\d+)-GPU nodes: capex \$([\d,.]+); \$([\d,.]+) \+ \$([\d,.]+) \+ "
            r"\$([\d,.]+) = \$([\d,.]+) a month",
        )
        assert (price, tdp, nodes) == (purchase, h100.tdp_w, d.node_gpus)
        per_gpu = float(sizing.owned_capex_usd_per_gpu(price, host, net, nodes))
        watts = float(sizing.it_power_w_per_gpu(tdp, power_w, nodes))
        parts = (
            per_gpu / 36,
            float(sizing.power_usd_per_gpu_month(watts, d.pue.value, d.power_usd_per_kwh.value)),
            float(sizing.colocation_usd_per_gpu_month(watts, d.colocation_usd_per_kw_month.value)),
        )
        assert (capex, amort, power, coloc) == (f"{per_gpu:,.2f}", *(f"{x:,.2f}" for x in parts))
        assert month == f"{sum(parts):,.2f}" and HOURS_PER_MONTH == 730

    def test_instance_billing_example(self):
        """'a quote for an 8-GPU instance (e.g. Lambda's H100) bills 44 GPUs needed as 48'."""
        from planner.export import sizing

        size, needed, billed = stated(
            self.DOC,
            r"a quote for an (\d+)-GPU instance \(`instance_gpus = \d+` in catalogs/gpus.toml, e.g. Lambda's "
            r"H100\) bills (\d+) GPUs needed as (\d+)",
        )
        (lambda_h100,) = [p for p in CAT.gpu("H100").prices if p.provider == "Lambda"]
        assert lambda_h100.instance_gpus == size
        assert float(sizing.gpus_to_buy(needed, 1, size)) == billed

    def test_workbook_input_defaults(self):
        """'context C -> p95 output C // 4 ...; 10 requests/s at peak, 4 on average, ...; TTFT target 2 s, TPOT
        target 100 ms': planner.export.workbook_input's stated workload."""
        from planner.export import workbook_input

        peak, avg, ttft_s, tpot_ms = stated(
            self.DOC,
            r"(\d+) requests/s at peak, (\d+) on average, no growth; TTFT target (\d+) s, TPOT target (\d+) ms",
        )
        w = workbook_input.WORKBOOK_WORKLOAD
        assert (peak, avg, ttft_s, tpot_ms / 1e3) == (
            w["peak_requests_per_s"],
            w["average_requests_per_s"],
            w["ttft_target_s"],
            w["tpot_target_s"],
        )
        assert w["growth_over_horizon"] == 0
        (share,) = stated(self.DOC, r"the average traffic ([\d.]+) x the peak \(the workbook holds none\)")
        assert float(share) == workbook_input.WORKBOOK_AVERAGE_SHARE

    def test_unit_checks_and_token_counts(self):
        """'A bare number above 1 (TPOT) or 60 (TTFT) is refused' and '`1e4` (10,000), `"8k"` (8,192 ...)'."""
        from planner.export import scenario
        from planner.units import parse_token_count

        assert stated(self.DOC, r"A bare number above (\d+) \(TPOT\) or (\d+) \(TTFT\) is refused") == (
            scenario.BARE_TPOT_MAX_S,
            scenario.BARE_TTFT_MAX_S,
        )
        e4, k8 = stated(self.DOC, r'`1e4` \(([\d,]+)\), `"8k"` \(([\d,]+):')
        assert (e4, k8) == (parse_token_count("1e4"), parse_token_count("8k"))

    def test_print_scale_and_charts(self):
        """'11-pt text at 8 pt or more prints at 73%'; 'The charts (0.25x to 3x the planned peak, the cheapest five
        options within 3x the recommended cost)'; Latency 'from 0.25x to 2x ... bisected to 2%', '3x the target'."""
        from planner.export import evaluate, tables, xlsx

        base, smallest, scale = stated(self.DOC, r"with its (\d+)-pt text at (\d+) pt or more prints at (\d+)%")
        assert (base, smallest, scale) == (xlsx.BASE_FONT_PT, xlsx.MIN_PRINT_PT, math.ceil(smallest / base * 100))
        low, high, five, cost = stated(
            self.DOC, r"The charts \(([\d.]+)x to (\d+)x the planned peak, the cheapest (\w+) options within (\d+)x"
        )
        assert (float(low), high) == (evaluate.SWEEP[0], evaluate.SWEEP[-1])
        assert (five, cost) == (tables.CHART_MAX_OPTIONS, tables.CHART_COST_LIMIT)
        lat_low, lat_high, cap, step = stated(
            self.DOC,
            r"from ([\d.]+)x to (\d+)x the planned peak; .*?figures above (\d+)x the target left off; .*?bisected to (\d+)%",
        )
        assert (float(lat_low), lat_high) == (evaluate.LOAD_CURVE[0], evaluate.LOAD_CURVE[-1])
        assert (cap, step / 100) == (tables.LATENCY_CHART_CAP, evaluate.HEADROOM_STEP)

    def test_scenario_defaults(self):
        """The field tables' defaults in brackets are the scenario schema's (planner.export.scenario)."""
        from planner.export import scenario

        def default(model, field):
            return model.model_fields[field].default

        assert stated(self.DOC, r"lengths are: 90, 95 or 99 \(default (\d+)\)") == (
            default(scenario.Workload, "high_percentile"),
        )
        assert stated(
            self.DOC,
            r"traffic growth by the end of the horizon \(0\.5 = \+50%; default (\d+)\), months \(default (\d+);",
        ) == (
            default(scenario.Workload, "growth_over_horizon"),
            default(scenario.Workload, "horizon_months"),
        )
        assert stated(self.DOC, r"months a purchase is written off over, straight line \((\d+)\)") == (
            default(scenario.Option, "amortization_months"),
        )
        assert stated(self.DOC, r"replicas beyond the peak need; N\+1 is 1 \((\d+)\)") == (
            default(scenario.Option, "spare_replicas"),
        )
        assert stated(self.DOC, r"largest tensor-parallel group tried \((\d+)\)") == (
            default(scenario.Option, "max_gpus_per_replica"),
        )
        (change,) = stated(self.DOC, r"`traffic_change` \(sensitivity, default ([\d.]+) =")
        assert float(change) == default(scenario.Scenario, "traffic_change")
        assert stated(self.DOC, r"months the cost of ownership covers \((\d+)\)") == (
            default(scenario.Finance, "horizon_months"),
        )
        assert stated(self.DOC, r"the high demand case: planned peak x this \((\d+)\)") == (
            default(scenario.Finance, "stress_multiplier"),
        )
        assert stated(
            self.DOC, r"\| `kv_precision` \| KV-cache quantization \| the KV cache's precision \((\w+)\) \|"
        ) == (default(scenario.Levers, "kv_precision"),)

    def test_groups_hours_nodes_and_percentile_bounds(self):
        """'Qwen2-7B with 28 heads: 1, 2, 4, never 8'; '$/GPU-hour x 730 h a month (8,760 h / 12)'; 'node size n (8
        by default)'; 'high_percentile ... lengths are: 90, 95 or 99' (the simulation's percentiles above the median)."""
        from planner import valid_tp_sizes
        from planner.export import scenario
        from planner.export.ownership import ownership_defaults
        from planner.model.fleet import HOURS_PER_MONTH

        heads, sizes, never = stated(self.DOC, r"Qwen2-7B with (\d+) heads: ([\d, ]+), never (\d+)\)")
        assert heads == CAT.model("qwen2-7b").num_attention_heads
        assert sizes == ", ".join(map(str, valid_tp_sizes("qwen2-7b"))) and never not in valid_tp_sizes("qwen2-7b")
        hours, year = stated(self.DOC, r"Rented: \$/GPU-hour x (\d+) h a month \(([\d,]+) h / 12\)")
        assert hours == HOURS_PER_MONTH == year / 12 == 365 * 24 / 12
        assert stated(self.DOC, r"with node size n \((\d+) by default\)") == (ownership_defaults().node_gpus,)
        (accepted,) = stated(self.DOC, r"which percentile the `\*_high` lengths are: ([\d, or]+) \(default")
        assert accepted == scenario.choices_text(scenario.HIGH_PERCENTILES) == "90, 95 or 99"

    def test_more_defaults_and_bounds(self):
        """'page headers are cut to Excel's 255 characters'; 'burstiness ... (1, the default: Poisson ...)';
        'cost_of_capital ... (0: undiscounted ...)', 'residual_value_share ... (0: written off)'; 'have 5 TPOT
        figures or more'; the workbook input's 'context C -> p95 output C // 4, p95 prompt C - C // 4; means half'."""
        from planner.accuracy import ranges
        from planner.export import scenario
        from planner.export.workbook_input import workbook_scenario_data
        from planner.io.safetext import MAX_HEADER_CHARS

        assert stated(self.DOC, r"page headers\s+are cut to Excel's (\d+) characters") == (MAX_HEADER_CHARS,)
        assert stated(
            self.DOC,
            r"gamma shape of the incoming traffic's gaps, before the load balancer \((\d+), the default: Poisson",
        ) == (scenario.Workload.model_fields["burstiness"].default,)
        assert stated(self.DOC, r"discounted at \((\d+): undiscounted") == (
            scenario.Finance.model_fields["cost_of_capital"].default,
        )
        assert stated(self.DOC, r"worth at the horizon's end \((\d+): written off\)") == (
            scenario.Finance.model_fields["residual_value_share"].default,
        )
        assert stated(self.DOC, r"have (\d+) TPOT figures or\s+more") == (ranges.MIN_ROWS,)
        (div,) = stated(self.DOC, r"context C -> p95 output C // (\d+), p95 prompt C - C // \d+; means half of those")
        w = workbook_scenario_data({"context": 4096, "gpu": "H100", "model": "llama2-70b"}, "x")["workload"]
        assert (w["output_tokens_high"], w["prompt_tokens_high"]) == (4096 // div, 4096 - 4096 // div)
        assert (w["output_tokens_mean"], w["prompt_tokens_mean"]) == (4096 // div // 2, (4096 - 4096 // div) // 2)


class TestWorkbooksDoc:
    """docs/workbooks.md: the opening scenario, the sweeps, the parity and range tests' sizes, the bounds."""

    DOC = "docs/workbooks.md"

    def test_opening_scenario(self):
        """'on Llama 2 70B at its trained 4,096 tokens on 4 x H100 compared with LLaMA-65B (MHA): the seeds' 8x KV
        per token, 117 against 15 sequences': planner.workbook.inputs.OPENING and api.max_batch."""
        from planner import kv_bytes, max_batch
        from planner.workbook.inputs import OPENING

        context, gpus, compare, ratio, batch, compare_batch = stated(
            self.DOC,
            r"on Llama 2 70B at its trained ([\d,]+) tokens on (\d+) x H100 compared with ([\w-]+) \(MHA\): the seeds' "
            r"(\d+)x KV per token, (\d+) against (\d+) sequences",
        )
        model = CAT.model("llama2-70b")
        assert (OPENING["model"], OPENING["context"], OPENING["gpus"], OPENING["compare_model"]) == (
            model.name,
            context,
            gpus,
            compare,
        )
        assert context == model.max_context and CAT.gpu(OPENING["gpu"]).name == CAT.gpu("H100").name
        assert kv_bytes(compare, 1) / kv_bytes(model.name, 1) == ratio
        assert (max_batch("H100", model.name, context, gpus=gpus), max_batch("H100", compare, context, gpus=gpus)) == (
            batch,
            compare_batch,
        )

    def test_sheet_table_names_every_sheet(self):
        """The "Sheet | What it holds" table names the shipped workbook's sheets in its order (s80: AllReduce was
        missing)."""
        import openpyxl

        table = (ROOT / self.DOC).read_text(encoding="utf-8").split("| Sheet | What it holds |")[1].split("\n\n")[0]
        named = [n for row in table.splitlines()[2:] for n in row.split("|")[1].strip().split(", ")]
        book = openpyxl.load_workbook(ROOT / "workbooks" / "capacity-what-if.xlsx", read_only=True)
        assert named == book.sheetnames

    def test_sweeps(self):
        """'decode at batch 1 to 1,024', 'contexts 1,024 .. 131,072': the Sweeps sheet's axes."""
        from planner.workbook.sweeps import BATCH_SWEEP, CONTEXT_SWEEP

        assert stated(self.DOC, r"decode at batch (\d+) to ([\d,]+) and the prefill point") == (
            BATCH_SWEEP[0],
            BATCH_SWEEP[-1],
        )
        assert stated(self.DOC, r"\(contexts ([\d,]+) \.\. ([\d,]+) evenly spaced") == (
            CONTEXT_SWEEP[0],
            CONTEXT_SWEEP[-1],
        )

    def test_ranges_sheet(self):
        """'A GPU with at least 5 held-out figures gets its own ...' and the note quoted: what residual_range gives
        for L40S (issue 26: the doc quoted 'widened x1.12: no held-out figures at TP 8', a factor now 1.00)."""
        from planner.accuracy import ranges
        from planner.accuracy.calibration import residual_range

        assert stated(self.DOC, r"A GPU with at least (\d+) held-out figures gets its own") == (ranges.MIN_ROWS,)
        (note,) = stated(self.DOC, r'the note says so \("(widened [^"]+)"')
        r = residual_range("L40S", "vllm", gpus=1, model="Llama-3.1-8B")
        assert note == f"widened {r.widened}"

    def test_parity_contexts_probes_and_range_scenarios(self):
        """'contexts from 512 to 131,072', 'each of the 387 probed cells per scenario', 'recalculates 8 scenarios':
        the parity test's inputs, the workbook's probes (issue 26: the text said 339) and the ranges test's cases."""
        from test_workbook_ranges import SCENARIOS as RANGE_SCENARIOS

        from planner.workbook.build import build_whatif

        contexts = [
            s["context"] for s in SCENARIO_INPUTS.values() if isinstance(s.get("context"), int) and s["context"] > 0
        ]
        assert stated(self.DOC, r"contexts from ([\d,]+) to ([\d,]+); every precision") == (
            min(contexts),
            max(contexts),
        )
        assert stated(self.DOC, r"compares each of the (\d+) probed cells per scenario") == (
            len(build_whatif(load=False).probes),
        )
        assert stated(self.DOC, r"`tests/test_workbook_ranges\.py` recalculates (\d+) scenarios") == (
            len(RANGE_SCENARIOS),
        )

    def test_load_sheet(self):
        """'On the opening inputs (40 requests/s of 400 output tokens, 1.5 s / 50 ms) the baseline needs 25 replicas
        of 4 x H100 (batch limit 37: its 3,696-token prompts ...) where a fleet with no queue would count 18', '1,000
        requests per point arriving as' the burstiness says, 'from a quarter to twice the Inputs' peak': the Load sheet's figures
        (planner.workbook.load_figures); 'the README example (4 x H100 SXM 80GB) is 9 replicas here at batch 1024 against
        the review's 11 serving replicas at batch 107, the most that hold 3,000 + 1,200-token sequences': the workbook's rule
        and planner export's sizing of examples/budget-review.toml's baseline."""
        from planner.accuracy.calibration import resolve_calibration
        from planner.engines.profiles import engine_profile
        from planner.export.evaluate import evaluate
        from planner.export.scenario import load_scenario
        from planner.serving.load import DEFAULT_REQUESTS
        from planner.workbook.build import select_entries
        from planner.workbook.inputs import default_inputs
        from planner.workbook.load_figures import LOAD_MULTIPLES, load_figures

        inputs = default_inputs(CAT, *select_entries(CAT, None, None))
        f = load_figures(inputs, CAT, engine_profile(None), resolve_calibration(None))
        base = f.levers[0]
        peak, output, ttft_s, tpot_ms, needed, gpus, limit, prompt, levers = stated(
            self.DOC,
            r"On the opening inputs \((\d+) requests/s of (\d+) output tokens, ([\d.]+) s / (\d+) ms\) the baseline needs "
            r"(\d+) replicas of (\d+) x H100 \(at most (\d+) sequences at once: as many ([\d,]+)-token prompts .*?\) "
            r"where a fleet with no "
            r"queue would count (\d+)",
        )
        assert (peak, output, float(ttft_s), tpot_ms) == (
            inputs["peak_requests_per_s"],
            inputs["output_tokens"],
            inputs["ttft_target_ms"] / 1e3,
            inputs["tpot_target_ms"],
        )
        assert (needed, gpus, limit, prompt, levers) == (
            base.needed_replicas,
            base.inputs["gpus"],
            base.at_once,  # the KV cache's admission under the engine's max_num_seqs, as plan (trial 28 F7)
            base.prompt_tokens,
            base.replicas,
        )
        # "arriving as the Inputs' Traffic burstiness says" (Poisson at its default 1) since the burstiness input
        assert stated(self.DOC, r"([\d,]+) requests per point arriving as") == (DEFAULT_REQUESTS,)
        assert stated(self.DOC, r"from a (quarter) to (twice) the Inputs' peak traffic") == ("quarter", "twice")
        assert (LOAD_MULTIPLES[0], LOAD_MULTIPLES[-1]) == (0.25, 2.0)
        scenario = load_scenario(ROOT / "examples" / "budget-review.toml")
        option = next(o for o in scenario.option if o.name == scenario.baseline)
        review = evaluate(option, scenario.workload, CAT, scenario.traffic_change)
        w = scenario.workload
        wb_inputs = dict(
            inputs, gpu=review.gpu.name, model=review.model.name, gpus=int(review.replica.gpus), compare_model=None,
            context=int(w.prompt_tokens_mean + w.output_tokens_mean), output_tokens=int(w.output_tokens_mean),
            peak_requests_per_s=review.peak_rate_per_s, ttft_target_ms=review.ttft_goal_s * 1e3,
            tpot_target_ms=review.tpot_goal_s * 1e3, kv_precision=None, weight_precision=None, memory_utilization=None,
        )  # fmt: skip
        wb = next(v for v in load_figures(wb_inputs, CAT, engine_profile(None), None).levers if v.key == "base")
        assert stated(
            self.DOC,
            r"the README example \((\d+) x (H100 SXM 80GB)\) is (\d+) replicas here at batch (\d+) against the "
            r"review's (\d+) serving replicas at batch (\d+), the most that hold ([\d,]+) \+ ([\d,]+)-token",
        ) == (
            int(review.replica.gpus),
            review.gpu.name,
            wb.needed_replicas,
            wb.batch_limit,
            int(review.fleet.replicas_needed) - option.spare_replicas,
            review.batch_per_replica,  # the most that hold the high lengths (its closed-form batch is the goal's: 94)
            int(w.prompt_tokens_high),
            int(w.output_tokens_high),
        )

    def test_groups_and_bounds(self):
        """'1, 2, 4, 8, 16, 32 or 64 GPUs' (deploy.GPU_GROUPS), '#NUM! when none is, e.g. Qwen2-7B above 4'
        (valid_tp_sizes), 'files over 50 MB' (the reader's bound)."""
        from planner import valid_tp_sizes
        from planner.deploy import GPU_GROUPS
        from planner.workbook.reader import MAX_FILE_BYTES

        (groups,) = stated(self.DOC, r"the smallest group of\s+([\d, ]+ or \d+) GPUs holding the weights")
        assert tuple(int(g) for g in re.split(r", | or ", groups)) == GPU_GROUPS
        assert stated(self.DOC, r"e\.g\. Qwen2-7B above (\d+)\)") == (max(valid_tp_sizes("qwen2-7b")),)
        assert stated(self.DOC, r"files over (\d+) MB") == (MAX_FILE_BYTES / 1e6,)

    def test_parity_tolerance_and_underflow(self):
        """'equal within 1e-9 relative' (workbook_support.agrees' default) and '(1 - k/E)^tokens underflows (below
        e^-700)' (the experts-touched formula's cut-off in planner.workbook.formulas)."""
        import inspect

        from workbook_support import agrees

        from planner.workbook import formulas

        (rel,) = stated(self.DOC, r"with the model: equal within (1e-\d+) relative")
        assert float(rel) == inspect.signature(agrees).parameters["rel"].default
        (cut,) = stated(self.DOC, r"underflows\s+\(below e\^(-\d+)\)")
        assert f"<{cut}," in inspect.getsource(formulas)

    def test_read_inputs_example(self):
        """The "Reading a workbook from Python" example's output is read_inputs of the shipped workbook."""
        from planner.workbook import read_inputs

        gpu, model, context, kv, engine = stated(
            self.DOC,
            r"# \{'gpu': '([^']+)', 'model': '([^']+)', 'context': (\d+), 'kv_precision': (\w+), \.\.\., 'engine': '(\w+)'\}",
        )
        got = read_inputs(ROOT / "workbooks" / "capacity-what-if.xlsx")
        assert (got["gpu"], got["model"], got["context"], str(got["kv_precision"]), got["engine"]) == (
            gpu,
            model,
            context,
            kv,
            engine,
        )


class TestExcelDoc:
    """docs/excel.md: the figures of the function table, the ranges example and the example workbook."""

    DOC = "docs/excel.md"

    def test_function_table_signatures_are_the_functions(self):
        """Each signature in docs/excel.md's table is the function's (bracketed: optional), and the table and the
        README's list name every function of planner.excel.functions (s80: TTFT_P*'s lacked speculative_tokens and
        acceptance_length; the README left out TTFT_P*, TPOT_P* and PLANNER_VERSION)."""
        import inspect

        from planner.excel import functions as xf

        named = set()
        table = (ROOT / self.DOC).read_text(encoding="utf-8").split("| Function | Result |")[1].split("\n\n")[0]
        for row in table.splitlines()[2:]:
            calls = re.findall(r"`([A-Z_0-9]+)(?:\(([^`]*)\))?`", row.split("|")[1])
            named |= {n for n, _ in calls}
            args = calls[-1][1]
            if "…" in args or not args:
                continue
            for name, _ in calls:
                params = inspect.signature(getattr(xf, name)).parameters.values()
                code = [p.name if p.default is inspect.Parameter.empty else f"[{p.name}]" for p in params]
                assert [a.strip() for a in args.split(",")] == code, name
        assert named == set(xf.__all__)
        readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
        listed = readme.split("## Excel functions")[1].split("- Any argument")[0]
        for name in xf.__all__:  # families written once: TTFT_P50/P95/P99, PLANNER_GPUS/MODELS/PRECISIONS
            family = re.sub(r"^(TTFT|TPOT)_P\d+$", r"\1_P50/P95/P99", name)
            family = re.sub(r"^PLANNER_(GPUS|MODELS|PRECISIONS)$", "PLANNER_GPUS/MODELS/PRECISIONS", family)
            assert re.search(rf"\b{re.escape(family)}\b", listed), name

    def test_ridge_example(self):
        """'ridge point, FLOP per byte (H100 at bf16: 295)': api.ridge."""
        from planner import ridge

        assert stated(self.DOC, r"\(H100 at bf16: (\d+)\)") == (round(ridge("H100", precision="bf16")),)

    def test_groups_and_simulated_requests(self):
        """'the smallest group of 1, 2, 4, 8 … 64' (deploy.GPU_GROUPS) and the percentile functions' '1,000
        requests' (planner.serving.load.DEFAULT_REQUESTS, which the Excel family uses)."""
        from planner.deploy import GPU_GROUPS
        from planner.serving.load import DEFAULT_REQUESTS

        assert stated(self.DOC, r"on the smallest group of ([\d, ]+?) … (\d+) that fits") == (
            ", ".join(map(str, GPU_GROUPS[:4])),
            GPU_GROUPS[-1],
        )
        assert stated(self.DOC, r"queue simulation\*\* \(([\d,]+) requests, `planner\.serving\.load`\)") == (
            DEFAULT_REQUESTS,
        )

    def test_range_example_rows(self):
        """'`=MAX_BATCH(A2:A500,B2:B500,C2:C500)` computes 499 scenarios'."""
        first, last, n = stated(self.DOC, r"`=MAX_BATCH\(A(\d+):A(\d+),B\d+:B\d+,C\d+:C\d+\)` computes (\d+) scenarios")
        assert n == last - first + 1

    def test_example_workbook_sheets(self):
        """'It has four sheets': Read me first, Functions, Scenarios, Catalog (the shipped workbooks/functions-example.xlsx)."""
        import openpyxl

        (n,) = stated(self.DOC, r"--force`\. It has (\w+) sheets:")
        wb = openpyxl.load_workbook(ROOT / "workbooks" / "functions-example.xlsx", read_only=True)
        assert n == len(wb.sheetnames) and wb.sheetnames == ["Read me", "Functions", "Scenarios", "Catalog"]
        wb.close()

    def test_error_example_and_bench_rows(self):
        """'`#N/A: unknown GPU 'H10'; did you mean H100, H100 NVL, H100 PCIe?`' is what planner says for 'H10';
        'one 10,000-row range call against 10,000 scalar calls' is bench/bench_excel.py's default."""
        from planner import max_batch
        from planner.errors import PlannerError

        (message,) = stated(self.DOC, r"for example `#N/A: (unknown GPU 'H10'; did you mean [^`]+)`")
        with pytest.raises(PlannerError) as e:
            max_batch("H10", "llama2-70b", 8192)
        assert str(e.value) == message
        rows, scalars = stated(self.DOC, r"one\s+([\d,]+)-row range call against ([\d,]+) scalar calls")
        bench = (ROOT / "bench" / "bench_excel.py").read_text(encoding="utf-8")
        default = re.search(r"def range_vs_scalars\(rows: int = ([\d_]+)\)", bench)
        assert rows == scalars == int(default[1].replace("_", ""))


class TestModelDoc:
    """docs/model.md: the worked numbers of "Units", "Roofline", "Memory", "Time", "Data-parallel attention" and
    "Engine releases", each from the function that computes it (the Speed section's timings are dated runs)."""

    DOC = "docs/model.md"

    def test_units(self):
        """'an "80 GB" H100 has 80 GiB = 85,899,345,920 B; nvidia-smi shows 81,559 MiB ... and vLLM sees 79.18 GiB'."""
        total, smi, seen = stated(
            self.DOC, r"H100 has 80 GiB = ([\d,]+) B; nvidia-smi shows ([\d,]+) MiB .*? and vLLM sees ([\d.]+) GiB"
        )
        h100 = CAT.gpu("H100")
        assert total == h100.memory_bytes == 80 * 2**30
        assert f"H100 {smi} MiB with ECC on" in h100.ecc_source
        assert seen == f"{h100.engine_visible_memory_bytes / 2**30:.2f}"

    def test_ridge_points_and_intensities(self):
        """'A100 80GB: 312e12 / 2,039e9 = 153 FLOP/B; H100 SXM: 989.4e12 / 3,350e9 = 295.3 FLOP/B', '0.34% of its
        peak' at batch 1 (mfu, engine="ideal")."""
        from planner import mfu, ridge

        a_peak, a_bw, a_ridge, h_peak, h_bw, h_ridge = stated(
            self.DOC,
            r"A100 80GB: ([\d.]+)e12 / ([\d,]+)e9 = \*\*(\d+) FLOP/B\*\*; H100 SXM: ([\d.]+)e12 / ([\d,]+)e9 = "
            r"\*\*([\d.]+) FLOP/B\*\*",
        )
        for name, peak, bw, value, digits in (
            ("A100 SXM 80GB", a_peak, a_bw, a_ridge, 0),
            ("H100", h_peak, h_bw, h_ridge, 1),
        ):
            g = CAT.gpu(name)
            assert (float(peak) * 1e12, bw * 1e9) == (g.peak_flop_per_s["bf16"], g.hbm_bandwidth_bytes_per_s)
            assert str(value) == f"{ridge(name):.{digits}f}"
        (share,) = stated(self.DOC, r"= \*\*([\d.]+)%\*\* of its peak")
        assert share == f"{mfu('H100', 'llama2-70b', 1, batch=1, engine='ideal') * 100:.2f}"

    def test_weights(self):
        """'Llama 2 70B: 68,976,648,192 parameters x 2 B = 137.95 GB'; 'Llama-3.1-8B int4: 6,979,321,856 x 0.515625
        + 1,050,939,392 x 2 = 5.70 GB (fp8: 9.08 GB), not 4.14 GB'; 'multi-token-prediction module (13.46 B params)'."""
        from planner import weight_bytes

        params, gb = stated(self.DOC, r"Llama 2 70B:\s+([\d,]+) parameters x 2 B = \*\*([\d.]+) GB\*\*")
        assert (
            params == param_breakdown(CAT.model("llama2-70b")).total and gb == f"{weight_bytes('llama2-70b') / 1e9:.2f}"
        )
        linear, int4, kept, total, fp8, naive = stated(
            self.DOC,
            r"Llama-3\.1-8B int4: ([\d,]+) x ([\d.]+) \+ ([\d,]+) x 2 = \*\*([\d.]+) GB\*\* \(fp8: ([\d.]+) GB\), not "
            r"([\d.]+) GB",
        )
        b = param_breakdown(CAT.model("llama-3.1-8b"))
        assert (linear, kept) == (b.attention + b.dense_mlp, b.embedding + b.lm_head + b.norms)
        q = CAT.precision("int4")
        assert float(int4) == (q.bits_per_element + q.scale_bits / q.scale_block) / 8
        assert total == f"{weight_bytes('llama-3.1-8b', precision='int4') / 1e9:.2f}"
        assert fp8 == f"{weight_bytes('llama-3.1-8b', precision='fp8') / 1e9:.2f}"
        assert naive == f"{b.total * float(int4) / 1e9:.2f}"
        (mtp,) = stated(self.DOC, r"multi-token-prediction module \(([\d.]+) B params\)")
        assert mtp == f"{param_breakdown(CAT.model('deepseek-v3')).extra / 1e9:.2f}"

    def test_kv_cache(self):
        """'2 x 80 x 1,024 x 2 B = 327,680 B; LLaMA 1 65B ... 2,621,440 B, 8x more. An 8K sequence: 2.68 GB vs
        21.5 GB'; the seeds' trailer '(2 x 80 GiB - 137.95 GB) / 2.68 GB = 12.6, so 12 sequences'."""
        from planner import kv_bytes, kv_bytes_per_token, max_batch, weight_bytes

        gqa, mha, ratio, seq_gqa, seq_mha = stated(
            self.DOC,
            r"= \*\*([\d,]+) B\*\*; LLaMA 1 65B \(MHA, 64 x 128\): \*\*([\d,]+) B\*\*, (\d+)x more\. An 8K sequence: "
            r"([\d.]+) GB vs ([\d.]+) GB",
        )
        assert (gqa, mha) == (kv_bytes_per_token("llama2-70b"), kv_bytes_per_token("llama-65b")) and mha == ratio * gqa
        assert (seq_gqa, seq_mha) == (
            f"{kv_bytes('llama2-70b', 8192) / 1e9:.2f}",
            f"{kv_bytes('llama-65b', 8192) / 1e9:.1f}",
        )
        fraction, whole = stated(
            self.DOC, r"\(2 x 80 GiB - 137\.95 GB\) / 2\.68 GB = ([\d.]+), so \*\*(\d+) sequences\*\*"
        )
        assert fraction == f"{(2 * 80 * 2**30 - weight_bytes('llama2-70b')) / kv_bytes('llama2-70b', 8192):.1f}"
        assert whole == max_batch("H100", "llama2-70b", 8192, engine="ideal", memory_utilization=1, gpus=2)

    def test_hybrid_and_sparse_attention(self):
        """Qwen3-Next 'only ... 12 of 48, 24,576 B per token'; '39.5 MB per Qwen3-Next sequence, 154 MB per
        Qwen3.6-27B sequence'; DSA '132 B', 'top 2,048', '2,048 x 1,152 + 65,536 x 132 B ..., 15% of DeepSeek-V3's
        latents' (issue 26: the text said 1/6; it is 0.146)."""
        from planner import kv_bytes_per_token
        from planner.engines.architecture import model_facts, state_bytes_per_sequence

        full, layers, per_token = stated(self.DOC, r"Qwen3-Next-80B-A3B: (\d+) of (\d+), ([\d,]+) B per token in bf16")
        nxt = CAT.model("Qwen3-Next-80B-A3B")
        assert (full, layers) == (nxt.num_layers - nxt.linear_attention.layers, nxt.num_layers)
        assert per_token == kv_bytes_per_token(nxt.name)
        next_mb, q36_mb = stated(
            self.DOC, r"([\d.]+) MB per Qwen3-Next sequence,\s+([\d.]+) MB per Qwen3\.6-27B sequence"
        )
        assert next_mb == f"{state_bytes_per_sequence(nxt) / 1e6:.1f}"
        assert q36_mb == round(state_bytes_per_sequence(CAT.model("Qwen3.6-27B")) / 1e6)

        dsa = CAT.model("DeepSeek-V3.2").sparse_attention
        assert stated(self.DOC, r"the lightning indexer's fp8 key and scale, (\d+) B\)") == (
            dsa.indexer_cache_bytes_per_token,
        )
        top, latent, ctx, key, share = stated(
            self.DOC,
            r"reads\s+([\d,]+) x ([\d,]+) \+ ([\d,]+) x (\d+) B per layer and sequence, (\d+)% of DeepSeek-V3's",
        )
        v32, v3 = model_facts(CAT.model("DeepSeek-V3.2")), model_facts(CAT.model("DeepSeek-V3"))
        latent_b = kv_bytes_per_token("DeepSeek-V3") / CAT.model("DeepSeek-V3").num_layers
        assert (top, key) == (dsa.top_k, v32.indexer_bytes_per_token_per_layer) and latent == latent_b
        assert (
            share == round((top * latent + ctx * key) / (ctx * latent_b) * 100) and v3.attended_tokens_max == math.inf
        )

    def test_tensor_parallel_groups(self):
        """'Qwen2-7B's 18,944 % 28 = 16'; 'DeepSeek-V3's 2,048-wide experts allow groups up to 16 (2,048 / 32 = 64)';
        'Llama 2 70B (64 heads, 8 KV heads): 1, 2, 4, 8, 16, 32, 64; Qwen2-7B (28, 4): 1, 2, 4'."""
        from planner import valid_tp_sizes

        width, heads, rest = stated(self.DOC, r"Qwen2-7B's ([\d,]+) % (\d+) = (\d+)")
        qwen = CAT.model("qwen2-7b")
        assert (width, heads, rest) == (qwen.intermediate_size, qwen.num_attention_heads, width % heads)
        expert, up_to, bad_g, per_gpu = stated(
            self.DOC, r"DeepSeek-V3's ([\d,]+)-wide experts allow groups up to (\d+) \([\d,]+ / (\d+) = (\d+)\)"
        )
        ds = CAT.model("deepseek-v3")
        assert expert == ds.moe.expert_intermediate_size and max(valid_tp_sizes("deepseek-v3")) == up_to
        assert bad_g == 2 * up_to and expert // bad_g == per_gpu and per_gpu % ds.weight_block_size != 0
        llama, q = stated(
            self.DOC, r"Llama 2 70B \(64 heads, 8 KV heads\): ([\d, ]+);\s+Qwen2-7B \(28, 4\): ([\d, ]+)\. When"
        )
        assert (llama, q) == (
            ", ".join(map(str, valid_tp_sizes("llama2-70b"))),
            ", ".join(map(str, valid_tp_sizes("qwen2-7b"))),
        )

    def test_ecc(self):
        """'ECC on GDDR cards (L4, A10G, L40S, T4, A10, A40, L20) ... 1/16'; 'A10's 24 GiB x 15/16 x 0.9898 = 22.27
        GiB'; 'the L4, whose torch total is published (22.03 GiB ...)'."""
        from planner import memory_plan
        from planner.engines.profiles import engine_profile

        (names,) = stated(self.DOC, r"\*\*ECC\*\* on GDDR cards \(([^)]+)\)")
        assert set(names.split(", ")) == {g.name for g in CAT.gpus if g.ecc_reserved_fraction}
        gib, frac, a10 = stated(self.DOC, r"an A10's (\d+) GiB x 15/16 x ([\d.]+) = ([\d.]+) GiB")
        assert gib * 2**30 == CAT.gpu("A10").memory_bytes and CAT.gpu("A10").ecc_reserved_fraction == 1 / 16
        assert float(frac) == engine_profile("vllm").visible_memory_fraction
        seen = {g: memory_plan(g, "llama-3.1-8b", 1024, gpus=1).visible_bytes_per_gpu / 2**30 for g in ("A10", "L4")}
        assert a10 == f"{seen['A10']:.2f}"
        assert stated(self.DOC, r"\(([\d.]+) GiB in public\s+out-of-memory messages\)") == (f"{seen['L4']:.2f}",)

    def test_kernel_curves_h100(self):
        """'on H100 SXM a GEMM streams at 2.89 TB/s (86% of 3.35), computes at 807 TFLOP/s in bf16 (82% of 989) and
        909 TFLOP/s in fp8 (46% of 1,979 ...), floor 6.0 us; decode attention reads KV at 2.40 TB/s with a 13.8 us
        floor; a small all-reduce takes 4.7 us': catalogs/reference/kernel_curves_aic.csv and the H100's datasheet."""
        from planner.engines.kernel_curves import read_curves

        row = {k: float(v) for k, v in read_curves()["H100 SXM 80GB"].items() if v and k.endswith(("_s", "per_s"))}
        g = CAT.gpu("H100")
        got = stated(
            self.DOC,
            r"a GEMM streams at ([\d.]+) TB/s \((\d+)% of ([\d.]+)\), computes at (\d+) TFLOP/s in bf16 \((\d+)% of "
            r"(\d+)\) and\s+(\d+) TFLOP/s in fp8 \((\d+)% of ([\d,]+):.*?floor ([\d.]+) us; decode attention reads KV "
            r"at ([\d.]+) TB/s with a ([\d.]+) us floor; a small all-reduce takes\s+([\d.]+) us",
        )
        bw, bf16, fp8 = g.hbm_bandwidth_bytes_per_s, g.peak_flop_per_s["bf16"], g.peak_flop_per_s["fp8"]
        assert got == (
            f"{row['gemm_bytes_per_s'] / 1e12:.2f}",
            round(row["gemm_bytes_per_s"] / bw * 100),
            f"{bw / 1e12:.2f}",
            round(row["gemm_bf16_flop_per_s"] / 1e12),
            round(row["gemm_bf16_flop_per_s"] / bf16 * 100),
            round(bf16 / 1e12),
            round(row["gemm_fp8_flop_per_s"] / 1e12),
            round(row["gemm_fp8_flop_per_s"] / fp8 * 100),
            round(fp8 / 1e12),
            f"{row['gemm_floor_s'] * 1e6:.1f}",
            f"{row['attention_bytes_per_s'] / 1e12:.2f}",
            f"{row['attention_floor_s'] * 1e6:.1f}",
            f"{row['allreduce_latency_s'] * 1e6:.1f}",
        )

    def test_moe_floor_cuda_graphs_and_fabric(self):
        """'(H100: 26.3 us + 3.0 us per doubling up to 8 tokens ...)'; 'vLLM pads a decode batch to 1, 2, 4, then
        the next multiple of 8 up to 512'; '(8 on HGX NVLink, 2 on H100 NVL's bridged pairs, 1 on PCIe cards)'."""
        import numpy as np

        from planner.engines.kernel_curves import MOE_FLOOR_MEASURED_TOKENS, MOE_FLOORS_TRITON
        from planner.model.operators import cuda_graph_batch

        floor, step, tokens = stated(self.DOC, r"\(H100: ([\d.]+) us \+ ([\d.]+) us per doubling up to (\d+) tokens")
        assert (float(floor) * 1e-6, float(step) * 1e-6) == pytest.approx(MOE_FLOORS_TRITON["H100 SXM 80GB"])
        assert tokens == MOE_FLOOR_MEASURED_TOKENS
        multiple, cap = stated(
            self.DOC, r"vLLM pads a decode batch to 1, 2, 4,\s+then the next multiple of (\d+) up to (\d+)\)"
        )
        b = np.arange(1, cap + 2)
        want = np.where(b <= 4, 2 ** np.ceil(np.log2(b)), np.where(b <= cap, np.ceil(b / multiple) * multiple, b))
        assert (cuda_graph_batch(b) == want).all()
        hgx, nvl, pcie = stated(
            self.DOC, r"\((\d+) on HGX NVLink, (\d+) on H100 NVL's bridged pairs, (\d+) on PCIe cards\)"
        )
        assert (hgx, nvl, pcie) == tuple(CAT.gpu(n).interconnect_domain_gpus for n in ("H100", "H100 NVL 94GB", "L40S"))

    def test_mla_attention_flops(self):
        """'2 x 128 x 192 + 2 x 128 x 128 = 81,920 FLOP per pair for DeepSeek-V3; decode uses the absorbed form
        ..., 2 x 128 x 576 + 2 x 128 x 512 = 278,528'."""
        from planner.engines.architecture import model_facts

        prefill, decode = stated(self.DOC, r"= \*\*([\d,]+)\*\* FLOP per pair for\s+DeepSeek-V3; .*? = ([\d,]+)\.")
        f = model_facts(CAT.model("deepseek-v3"))
        assert (prefill, decode) == (
            f.prefill_attention_flop_per_token_pair_per_layer,
            f.attention_flop_per_context_token_per_layer,
        )

    def test_dp_attention(self):
        """'DeepSeek-V3 at 8K on 8 x H200: 77 sequences tensor-parallel, 416 as 8 ranks (8 x floor(29.96 GB /
        575,668,224 B)); decode throughput ... 1,525 -> 8,292 tokens/s (TPOT 50.5 -> 49.2 ms)'; 'a 32K-token prompt
        takes 9.2 s where tensor parallelism takes 1.5 s' (issue 26: the text said 1,635 -> 6,825, 48.9 -> 59.8 ms,
        5.9 s and 1.1 s)."""
        from planner import max_batch, memory_plan, throughput, tpot, ttft

        tp_b, dp_b, ranks, budget, seq, tp_rate, dp_rate, tp_ms, dp_ms = stated(
            self.DOC,
            r"(\d+) sequences tensor-parallel, \*\*(\d+)\*\* as (\d+) ranks \(8 x floor\(([\d.]+) GB / ([\d,]+) B\)\); "
            r"decode throughput at the batch that fits ([\d,]+) -> ([\d,]+) tokens/s \(TPOT ([\d.]+) -> ([\d.]+) ms\)",
        )
        kw = dict(gpus=8)
        plan = memory_plan("H200", "deepseek-v3", 8192, parallelism="dp-ep", **kw)
        assert (budget, seq) == (f"{plan.kv_budget_bytes_per_gpu / 1e9:.2f}", plan.kv_bytes_per_sequence)
        got = []
        for par, b in (("tp", tp_b), ("dp-ep", dp_b)):
            assert max_batch("H200", "deepseek-v3", 8192, parallelism=par, **kw) == b
            got.append(
                (
                    round(throughput("H200", "deepseek-v3", 8192, batch=b, parallelism=par, **kw)),
                    f"{tpot('H200', 'deepseek-v3', 8192, batch=b, parallelism=par, **kw) * 1e3:.1f}",
                )
            )
        assert dp_b == ranks * (plan.kv_budget_bytes_per_gpu // seq)
        assert got == [(tp_rate, tp_ms), (dp_rate, dp_ms)]
        dp_s, tp_s = stated(self.DOC, r"a 32K-token prompt takes ([\d.]+) s where tensor parallelism takes ([\d.]+) s")
        assert (dp_s, tp_s) == tuple(
            f"{ttft('H200', 'deepseek-v3', 32768, parallelism=p, **kw):.1f}" for p in ("dp-ep", "tp")
        )

    def test_engine_releases(self):
        """'an H100 at TP 1 under 0.5.23 keeps 0.830'; TensorRT-LLM '(2,048 sequences, blocks of 32, fp8 KV)', 0.x
        '(256 sequences, int8 KV too); both `free_gpu_memory_fraction` 0.9'."""
        from planner.engines.profiles import engine_profile
        from planner.engines.sglang import sglang_mem_fraction_static, sglang_rule_for_version

        (kept,) = stated(self.DOC, r"an H100 at TP 1 under 0\.5\.23\s+keeps ([\d.]+)\.")
        smi_mib = (
            81559  # nvidia-smi's H100 total (catalogs/gpus.toml ecc_source), as sglang_mem_fraction_static reads it
        )
        assert kept == f"{sglang_mem_fraction_static(smi_mib, 1, sglang_rule_for_version((0, 5, 23))[0]):.3f}"
        seqs, block, seqs0, frac = stated(
            self.DOC,
            r"`tensorrt-llm` is 1\.x's PyTorch backend \(([\d,]+) sequences, blocks of (\d+), fp8 KV\),\s+"
            r"`tensorrt-llm-0` the 0\.x TensorRT engines \((\d+) sequences, int8 KV too\); both "
            r"`free_gpu_memory_fraction` ([\d.]+)\.",
        )
        one, zero = engine_profile("tensorrt-llm"), engine_profile("tensorrt-llm-0")
        assert (seqs, block, seqs0) == (one.max_num_seqs, one.block_size, zero.max_num_seqs)
        assert float(frac) == one.memory_utilization == zero.memory_utilization
        assert "int8" in zero.kv_precisions and "int8" not in one.kv_precisions

    def test_bandwidth_unit_and_alltoall_link_fraction(self):
        """'Bandwidth and FLOP/s are SI (3.35e12 B/s)' (the H100's) and 'the all-reduce's measured share of the link
        it also uses, 0.35 on H200' (the H200's interconnect_efficiency from its measured all-reduce)."""
        from planner.catalog.resolve import gpu_numbers

        assert stated(self.DOC, r"Bandwidth and FLOP/s are SI \(([\d.]+)e12 B/s\)") == (
            f"{CAT.gpu('H100').hbm_bandwidth_bytes_per_s / 1e12:g}",
        )
        (fraction,) = stated(self.DOC, r"the all-reduce's measured share of the link it also uses, ([\d.]+) on H200")
        assert fraction == f"{gpu_numbers(CAT.gpu('H200'))['interconnect_efficiency']:.2f}"

    def test_intensities(self):
        """'Decode at batch B with 16-bit weights: B FLOP/B (1 at batch 1, 32 at batch 32 ...). Prefill of a
        2,048-token prompt: 2,048 FLOP/B'; 'heads / KV heads at 16-bit: MHA 1, GQA 8:1 gives 8': planner.model.roofline."""
        from planner.model import roofline

        one, b32, tokens, prefill = stated(
            self.DOC,
            r"\*\*B FLOP/B\*\* \((\d+) at batch 1, (\d+) at\s+batch 32: far under 295\)\. Prefill of a ([\d,]+)-token "
            r"prompt: \*\*([\d,]+) FLOP/B\*\*",
        )
        assert (one, b32, prefill) == tuple(roofline.linear_intensity_flop_per_byte(t, 2.0) for t in (1, 32, tokens))
        mha, ratio, gqa = stated(self.DOC, r"heads / KV heads at 16-bit: MHA (\d+), GQA (\d+):1 gives (\d+)\.")
        assert (mha, gqa) == (
            roofline.attention_intensity_flop_per_byte(64, 64),
            roofline.attention_intensity_flop_per_byte(8 * ratio, 8),
        )

    def test_state_flops_and_engine_defaults(self):
        """'spends 7 FLOPs per state value' (architecture.linear_attention_flop_per_token less its conv term); 'not
        23.76 GiB' (an A10 without ECC); vLLM's 'utilization (0.9)', 'blocks of 16 tokens', 'moe_layer_overhead_s
        (0)', the efficiencies '1 as shipped'."""
        from planner.engines.architecture import linear_attention_flop_per_token
        from planner.engines.profiles import engine_profile

        (per_value,) = stated(self.DOC, r"spends (\d+) FLOPs per state value")
        la = CAT.model("Qwen3-Next-80B-A3B").linear_attention
        conv = 2 * la.conv_kernel * (2 * la.num_key_heads * la.key_head_dim + la.num_value_heads * la.value_head_dim)
        values = la.num_value_heads * la.key_head_dim * la.value_head_dim
        assert linear_attention_flop_per_token(CAT.model("Qwen3-Next-80B-A3B")) == la.layers * (
            per_value * values + conv
        )
        vllm = engine_profile("vllm")
        (no_ecc,) = stated(self.DOC, r"= 22\.27 GiB,\s+not ([\d.]+) GiB")
        assert no_ecc == f"{CAT.gpu('A10').memory_bytes * vllm.visible_memory_fraction / 2**30:.2f}"
        util, block = stated(
            self.DOC,
            r"engine `vllm` \(default\): visible memory x utilization \(([\d.]+)\).*?KV is allocated in blocks of (\d+) tokens",
        )
        assert (float(util), block) == (vllm.memory_utilization, vllm.block_size)
        assert stated(self.DOC, r"the engine's `moe_layer_overhead_s` \((\d+)\)") == (vllm.moe_layer_overhead_s,)
        assert stated(self.DOC, r"multiply the\s+measured fractions \((\d+) as shipped;") == (
            vllm.bandwidth_efficiency,
        )
        assert vllm.decode_flop_efficiency == vllm.prefill_flop_efficiency == vllm.bandwidth_efficiency

    def test_bench_sweep_pairs(self):
        """'the bench's 200,000 scenarios draw the catalog's GPUs, models and 6 contexts, so they hold at most one pair
        per combination: under 10% of the scenarios' (bench/bench_model.py's sweep_file; the catalog's size)."""
        n, contexts, share = stated(
            self.DOC,
            r"the bench's ([\d,]+) scenarios draw the\s+catalog's GPUs, models and (\d+) contexts, .*?: under (\d+)% of "
            r"the scenarios",
        )
        bench = (ROOT / "bench" / "bench_model.py").read_text(encoding="utf-8")
        drawn = re.search(r'"context": rng\.choice\(\[([\d, ]+)\], n\)', bench)[1].split(",")
        default = re.search(r'"--sweep", type=int, default=([\d_]+)', bench)[1]
        assert len(drawn) == contexts and int(default.replace("_", "")) == n
        assert len(CAT.gpus) * len(CAT.models) * contexts < share / 100 * n


class TestReadmeFigures:
    """The README outside its transcripts and its accuracy paragraph: the "Assumptions and limits" figures, the MoE
    kernel floor, the heap thresholds (its speed figures are timings with their machine; docs/model.md dates them)."""

    DOC = "README.md"

    def test_units(self):
        """'an "80 GB" H100 has 80 GiB (85,899,345,920 B); nvidia-smi shows 81,559 MiB and vLLM sees 79.18 GiB'."""
        total, smi, seen = stated(
            self.DOC, r"H100 has 80 GiB\s+\(([\d,]+) B\); nvidia-smi shows ([\d,]+) MiB and vLLM sees ([\d.]+) GiB"
        )
        h100 = CAT.gpu("H100")
        assert total == h100.memory_bytes and f"H100 {smi} MiB with ECC on" in h100.ecc_source
        assert seen == f"{h100.engine_visible_memory_bytes / 2**30:.2f}"

    def test_memory_budget(self):
        """'`memory_utilization` (0.9)', 'KV in blocks of 16 tokens', '(12 sequences of 8K on 2 x H100 for Llama 2
        70B)' with engine="ideal" at utilization 1."""
        from planner import max_batch
        from planner.engines.profiles import engine_profile

        util, block = stated(self.DOC, r"`memory_utilization` \(([\d.]+)\) .*?KV in blocks of (\d+)\s+tokens")
        vllm = engine_profile("vllm")
        assert (float(util), block) == (vllm.memory_utilization, vllm.block_size)
        (n,) = stated(self.DOC, r"\((\d+) sequences of 8K on\s+2 x H100 for Llama 2 70B\)")
        assert n == max_batch("H100", "llama2-70b", 8192, engine="ideal", memory_utilization=1, gpus=2)

    def test_vllm_profile_releases(self):
        """'`engine="vllm"` (default, vLLM 0.11-0.19)': the releases the default profile's description names."""
        from planner.engines.profiles import engine_profile

        low, high = stated(self.DOC, r'`engine="vllm"` \(default, vLLM (\d+\.\d+)-(\d+\.\d+)\)')
        assert f"as of {low}.0-{high}.0:" in engine_profile("vllm").description

    def test_gpu_count(self):
        """'(`valid_tp_sizes("qwen2-7b")` = 1, 2, 4: its 18,944-wide MLP refuses 28; DeepSeek-V3: up to 16)'; 'the
        smallest valid group of 1, 2, 4, 8 (16, 32, 64: several nodes, flagged)'; 'DeepSeek-V3 at 8K on 8 x H200 holds
        416 sequences instead of 77'."""
        from planner import max_batch, valid_tp_sizes
        from planner.deploy import GPU_GROUPS

        sizes, width, refused, up_to = stated(
            self.DOC,
            r'`valid_tp_sizes\("qwen2-7b"\)` = ([\d, ]+): its ([\d,]+)-wide MLP refuses (\d+); DeepSeek-V3: up to (\d+)\)',
        )
        qwen = CAT.model("qwen2-7b")
        assert sizes == ", ".join(map(str, valid_tp_sizes("qwen2-7b"))) and width == qwen.intermediate_size
        assert qwen.num_attention_heads % refused == 0 and width % refused != 0  # heads allow 28; the MLP does not
        assert up_to == max(valid_tp_sizes("deepseek-v3"))
        one_node, more = stated(
            self.DOC, r"the smallest valid group of ([\d, ]+) \(([\d, ]+): several nodes, flagged\)"
        )
        assert f"{one_node}, {more}" == ", ".join(map(str, GPU_GROUPS))
        dp, tp = stated(self.DOC, r"DeepSeek-V3\s+at 8K on 8 x H200 holds (\d+) sequences instead of (\d+)\)")
        assert (dp, tp) == tuple(max_batch("H200", "deepseek-v3", 8192, gpus=8, parallelism=p) for p in ("dp-ep", "tp"))

    def test_precisions(self):
        """'int4 (16-bit scale per 128 weights: 0.515625 B), mxfp4 (E8M0 scale per 32: 0.53125 B), nvfp4 (= "fp4",
        FP8 scale per 16: 0.5625 B)': the catalog's precisions."""
        got = stated(
            self.DOC,
            r"int4 \((\d+)-bit scale per (\d+) weights: ([\d.]+) B\), mxfp4\s+\(E8M0 scale per (\d+): ([\d.]+) B\), "
            r'nvfp4 \(= "fp4", FP8 scale per (\d+): ([\d.]+) B\)',
        )
        q4, mx, nv = (CAT.precision(n) for n in ("int4", "mxfp4", "fp4"))

        def size(q):
            return str((q.bits_per_element + q.scale_bits / q.scale_block) / 8)

        assert nv.name == "nvfp4" and mx.scale_bits == nv.scale_bits == 8
        assert got == (q4.scale_bits, q4.scale_block, size(q4), mx.scale_block, size(mx), nv.scale_block, size(nv))

    def test_moe_kernel_floor_range(self):
        """'a MoE layer's fused-MoE kernel floor per GPU and step size, 26-38 us': the floors of 1 to 8 tokens over
        planner.engines.kernel_curves' measured GPUs and the unmeasured default, rounded outwards."""
        from planner.engines.kernel_curves import MOE_FLOOR_MEASURED_TOKENS, MOE_FLOOR_UNMEASURED, moe_floors

        low, high = stated(self.DOC, r"kernel floor per GPU and step size, (\d+)-(\d+) us")
        doublings = math.log2(MOE_FLOOR_MEASURED_TOKENS)
        lines = [*moe_floors().values(), MOE_FLOOR_UNMEASURED]
        assert low == math.floor(min(a for a, _ in lines) * 1e6)
        assert high == math.ceil(max(a + b * doublings for a, b in lines) * 1e6)

    def test_heap_thresholds(self):
        """'(mmap above 32 MiB, trim above 64 MiB)' (README) and docs/model.md's 'arrays of at least 16,384 values
        (128 KiB of float64)': planner.io.heap."""
        from planner.io import heap

        assert stated(self.DOC, r"\(mmap above (\d+) MiB,\s+trim above (\d+) MiB\)") == (
            heap.MMAP_THRESHOLD_BYTES / 2**20,
            heap.TRIM_THRESHOLD_BYTES / 2**20,
        )
        values, kib = stated("docs/model.md", r"arrays of at least ([\d,]+) values \((\d+) KiB of float64\)")
        assert values == heap.SWEEP_VALUES and kib * 1024 == values * 8

    def test_catalog_attention_layouts(self):
        """'(decode reads the top 2,048 tokens)', 'Gemma 3's 5:1 local/global layers', 'Llama 4's chunked layers (at
        most one 8,192-token chunk each)': the catalog's DeepSeek-V3.2, Gemma 3 and Llama 4 entries."""
        top, local, glob, chunk = stated(
            self.DOC,
            r"decode reads\s+the top ([\d,]+) tokens\).*?Gemma 3's (\d+):(\d+) local/global layers, Llama 4's chunked "
            r"layers \(at most one ([\d,]+)-token\s+chunk each\)",
        )
        assert top == CAT.model("DeepSeek-V3.2").sparse_attention.top_k
        gemma = [m for m in CAT.models if m.name.startswith("Gemma-3-")]
        assert gemma and all(m.sliding_window_pattern.startswith(f"{local} local : {glob} global") for m in gemma)
        llama4 = [m for m in CAT.models if m.name.startswith("Llama-4-")]
        assert llama4 and {m.attention_chunk_size for m in llama4} == {chunk}

    def test_rent_hours_and_workbook_opening(self):
        """'rented = $/GPU-hour x 730 h' and the what-if workbook 'opens on Llama 2 70B against the MHA LLaMA-65B'."""
        from planner.model.fleet import HOURS_PER_MONTH
        from planner.workbook.inputs import OPENING

        assert stated(self.DOC, r"rented = \$/GPU-hour x (\d+) h\.") == (HOURS_PER_MONTH,)
        model, compare = stated(self.DOC, r"\(it opens on (Llama 2 70B)\s+against the MHA ([\w-]+)\)")
        assert (CAT.model(model.replace("Llama 2 ", "llama2-").lower()).name, compare) == (
            OPENING["model"],
            OPENING["compare_model"],
        )

    def test_speed_figures_are_docs_model_latest_runs(self):
        """The README's 'latest runs' speed figures are docs/model.md's first "Speed" table, medians and ranges (timings are not
        recomputed here: they depend on the machine; this keeps the README from quoting an older run as today's)."""
        model = " ".join((ROOT / "docs" / "model.md").read_text(encoding="utf-8").split())
        speed = model[model.index("## Speed") :]
        when, load = re.search(
            r"(?:Three|Five) runs on (2026-\d\d-\d\d at [\d:-]+ UTC) .*?load average ([\d.-]+) ", speed
        ).groups()
        table = speed[: speed.index("| distinct strings in a fresh process")]  # the rows the README quotes
        ratios = [
            f"{median} ({spread}x)"
            for median, spread in re.findall(r"\| [\d.]+ (?:ms|us) \([\d.-]+\) \| ([\d,.]+x) \(([\d,.-]+)\) \|", table)
        ]
        ratio = r"([\d,.]+x \([\d,.-]+x\))"
        got = stated(
            self.DOC,
            r"Its latest runs \((2026-\d\d-\d\d), ([\d:-]+ UTC), the shared 2-core machine at load ([\d.-]+), .*?\), "
            rf"medians of (?:three|five) by the wall clock: one scenario {ratio} faster than one llm-analysis call, and a "
            rf"200,000-scenario sweep faster per scenario by {ratio} as numpy text, {ratio} as distinct strings, "
            rf"{ratio} as Series and {ratio} as Categoricals",
        )
        assert (f"{got[0]} at {got[1]}", got[2]) == (when, load)
        assert list(got[3:]) == ratios


def ranges_markdown() -> str:
    """docs/accuracy.md's Ranges table: catalogs/reference/heldout_residuals.csv as a reader sees it."""
    import csv

    with open(ROOT / "catalogs" / "reference" / "heldout_residuals.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    lines = [
        "| dimension | value | figures | 10th / 90th percentile | widening factor |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        value = "(value held out)" if r["value"] == "*" and r["dimension"] != "all" else r["value"]
        low, high = float(r["residual_low"]), float(r["residual_high"])
        widen = f"x{r['widen']}" if r["widen"] else ""
        lines.append(f"| {r['dimension']} | {value} | {r['rows']} | {low:+.0%} / {high:+.0%} | {widen} |")
    return "\n".join(lines) + "\n"


def test_accuracy_ranges_table_is_the_residuals_file():
    """docs/accuracy.md's Ranges table is the shipped residual file (rewrite: python tests/test_doc_figures.py)."""
    text = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    table = text.split("<!-- ranges:table -->\n", 1)[1].split("<!-- /ranges:table -->", 1)[0]
    assert table == ranges_markdown(), "run: python tests/test_doc_figures.py"


if __name__ == "__main__":  # python tests/test_doc_figures.py: rewrite docs/accuracy.md's Ranges table
    doc = ROOT / "docs" / "accuracy.md"
    text = doc.read_text(encoding="utf-8")
    head, rest = text.split("<!-- ranges:table -->\n", 1)
    tail = rest.split("<!-- /ranges:table -->", 1)[1]
    doc.write_text(
        head + "<!-- ranges:table -->\n" + ranges_markdown() + "<!-- /ranges:table -->" + tail, encoding="utf-8"
    )
    print(f"wrote {doc}")


class TestPrefixHitRatePosition:
    """Trial 29 F11: README and docs/model.md called ``prefix_hit_rate`` "the last argument" of the Excel load
    functions; put there it is ``#VALUE!`` (routing or engine refuses 0.3). The position each states is read back from
    the functions' own signatures (``planner.excel.functions``), 1 for the first argument."""

    #: The sentence's wording in each doc, the positions captured in this order.
    FUNCTIONS = ("TTFT_P95", "REPLICAS", "FLEET_GPUS", "CAPACITY_RPS")
    ORDINALS = (
        r"the argument after `parallelism`:? \(?the (\d+)th of TTFT_P\* and TPOT_P\*, the (\d+)th of REPLICAS, "
        r"the (\d+)th of FLEET_GPUS,? the (\d+)th of CAPACITY_RPS"
    )

    @staticmethod
    def position(name: str, param: str) -> int:
        import inspect

        import planner.excel.functions as xf

        return list(inspect.signature(getattr(xf, name)).parameters).index(param) + 1

    @pytest.mark.parametrize("doc", ["README.md", "docs/model.md"])
    def test_the_stated_position_is_the_signatures(self, doc):
        expected = tuple(self.position(n, "prefix_hit_rate") for n in self.FUNCTIONS)
        assert stated(doc, self.ORDINALS) == expected  # (12, 13, 12, 9) today
        for n in ("TTFT_P50", "TTFT_P99", "TPOT_P50", "TPOT_P95", "TPOT_P99"):  # "TTFT_P* and TPOT_P*": one position
            assert self.position(n, "prefix_hit_rate") == expected[0], n
        for n in self.FUNCTIONS:  # "the argument after parallelism"
            assert self.position(n, "prefix_hit_rate") == self.position(n, "parallelism") + 1, n

    def test_no_doc_calls_it_the_last_argument(self):
        for doc in ("README.md", "docs/model.md", "docs/excel.md"):
            text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
            assert "percentile functions' last argument" not in text, doc
            assert "prefix_hit_rate`, the last argument" not in text, doc
