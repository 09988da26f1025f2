"""Figures stated in README.md and docs/ that a test recomputes (issue 26: 66 models for 72, 59 scenarios for 63,
a 120 kB add-in bundle of 375 kB). Each stated figure is read from the text and compared with what the code and
data give today; a failure names the figure, what the text says and what it should say.

Transcripts (the ``<!-- transcript -->`` blocks) are checked by tests/test_readme.py; timings are not checked
here (they depend on the machine; docs/model.md states each one with its machine and command).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from test_workbook_libreoffice import SCENARIO_INPUTS

from planner.accuracy import predict
from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.accuracy.holdout import fit_rows
from planner.catalog import default_catalog
from planner.engines.architecture import param_breakdown

ROOT = Path(__file__).resolve().parents[1]
CAT = default_catalog()
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def stated(doc: str, pattern: str) -> tuple:
    """The groups of ``pattern`` in ``doc`` (exactly one match), numbers as ints ("four" -> 4, "1,205" -> 1205)."""
    hits = re.findall(pattern, (ROOT / doc).read_text(encoding="utf-8"))
    assert len(hits) == 1, f"{doc}: {pattern!r} matches {len(hits)} times"
    groups = hits[0] if isinstance(hits[0], tuple) else (hits[0],)
    return tuple(_number(g) for g in groups)


def _number(text: str) -> int | str:
    if text in WORDS:
        return WORDS[text]
    return int(text.replace(",", "")) if text.replace(",", "").isdigit() else text


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
        assert stated("docs/accuracy.md", r"The same (\d+) never-fitted rows") == (len(held),)

    def test_lite_bundle_size(self, tmp_path):
        """'It writes `main.py` (about N kB)': within 10% of what `planner addin lite` writes today (run as a
        command: the bundle takes the planner modules its process has imported)."""
        subprocess.run(
            [sys.executable, "-m", "planner", "addin", "lite", str(tmp_path / "lite")], check=True, capture_output=True
        )
        size_kb = (tmp_path / "lite" / "main.py").stat().st_size / 1e3
        (kb,) = stated("docs/excel.md", r"It writes `main.py` \(about (\d+) kB\)")
        assert abs(kb / size_kb - 1) <= 0.10, f"docs/excel.md says about {kb} kB; main.py is {size_kb:.0f} kB"


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
            e = [abs(c["planner"]) for c in checks if c["q"] == f"vLLM KV GiB / GPU [{name}]"]
            return int(f"{statistics.median(e):.0%}"[:-1]), int(f"{max(e):.0%}"[:-1]), len(e)

        m = re.search(
            r"median (\d+)%, worst (\d+)% on the (\d+) vLLM start-up logs the memory profiles were fitted to; "
            r"median (\d+)%, worst (\d+)% on (\d+) further logs of the same sources; (\d+)% off on the one log",
            self.README,
        )
        assert m, "README's start-up memory sentence changed shape; update this test with it"
        held = tier("held out")
        assert [int(g) for g in m.groups()] == [*tier("in-sample"), *tier("same source"), held[1]] and held[2] == 1

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
