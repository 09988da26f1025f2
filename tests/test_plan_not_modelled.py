"""A plan that warns its figure is slower than modelled says so in its ranges, and a dp-ep plan names what it leaves
out (trial 31 F7); a GPU's memory is shown with its GiB beside the SI GB (trial 30 F13).

Trial 31 F7's commands (/work/trial31-findings.md): ``planner plan --gpu H200 --model DeepSeek-V3 --gpus 16 --context
32k`` and ``planner plan --gpu H200 --model DeepSeek-R1 --engine sglang --parallelism dp-ep --gpus 16 --context 32k -k
fp8`` printed "warning: 16 GPUs is more than one 8-GPU node: ... slower than modelled" beside a closed range ("TTFT
18.87 s to 28.56 s" for the dp-ep one), and never named the large-scale MoE recipe planner does not model (README
"Not modelled: ... DeepEP's low-latency kernels, two-batch overlap, and prefill/decode disaggregation").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import run

from planner.catalog import default_catalog
from planner.deploy import (
    LARGE_SCALE_MOE_NOT_MODELLED,
    SLOW_END_OPEN_WORDS,
    listed_words,
    not_modelled_words,
    slow_end_open,
)

ROOT = Path(__file__).resolve().parents[1]
TP16 = ("plan", "--gpu", "H200", "--model", "DeepSeek-V3", "--gpus", "16", "--context", "32k")
DPEP16 = (
    "plan", "--gpu", "H200", "--model", "DeepSeek-R1", "--engine", "sglang", "--parallelism", "dp-ep", "--gpus", "16",
    "--context", "32k", "-k", "fp8",
)  # fmt: skip
OPEN = "across nodes, slower than modelled; no held-out run across nodes"


def flat(text: str) -> str:
    """Whitespace folded to single spaces (README's and the docs' lines wrap anywhere)."""
    return re.sub(r"\s+", " ", text)


def line(out: str, label: str) -> str:
    """The value of a plan's text row ``label``."""
    found = re.search(rf"^{re.escape(label)}\s+(.+)$", out, re.M)
    assert found, out
    return found[1].strip()


@pytest.fixture(scope="module")
def tp16():
    out = run(*TP16)
    assert out.exit_code == 0, out.output
    return out.stdout


@pytest.fixture(scope="module")
def dpep16():
    out = run(*DPEP16)
    assert out.exit_code == 0, out.output
    return out.stdout


@pytest.fixture(scope="module")
def dpep16_json():
    out = run(*DPEP16, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


class TestSlowEndOpenAcrossNodes:
    def test_dp_ep_ttft_range_open(self, dpep16):
        """Trial 31 F7: "TTFT 18.87 s to 28.56 s" beside the warning that the exchange crosses nodes; the same
        figures, the slow end now a lower bound with its reason."""
        assert "crosses nodes, slower than modelled" in dpep16
        assert line(dpep16, "TTFT (32,768-token prompt)") == (f"26.20 s (range 18.87 s to more than 28.56 s: {OPEN})")

    def test_tp_ranges_open(self, tp16):
        """The tensor-parallel 16-GPU plan (trial 31 F7's first command): TTFT 5.70 s (4.11 s to 6.22 s before) and
        every TPOT range open."""
        assert "tensor parallelism across nodes is slower than modelled" in tp16
        assert line(tp16, "TTFT (32,768-token prompt)") == f"5.70 s (range 4.11 s to more than 6.22 s: {OPEN})"
        tpots = re.findall(r"^\s+TPOT \(per sequence\)\s+(.+)$", tp16, re.M)
        assert len(tpots) == 2 and all("to more than " in t and t.endswith(f": {OPEN})") for t in tpots)

    def test_json_says_the_slow_end_is_open(self, dpep16_json):
        d = dpep16_json
        assert d["slow_end_open"] is True and d["slow_end_open_reason"] == OPEN
        assert [round(x, 2) for x in d["ttft_range_s"]] == [18.87, 28.56]  # the figures, not widened

    def test_one_node_stays_closed(self):
        """8 x H200 is one node: no warning, the range closed (DeepSeek-V3 at 32k: 5.70 s ... no "more than")."""
        out = run("plan", "--gpu", "H200", "--model", "DeepSeek-V3", "--gpus", "8", "--context", "32k", "--json")
        assert out.exit_code == 0, out.output
        d = json.loads(out.stdout)
        assert d["slow_end_open"] is False and d["slow_end_open_reason"] is None
        assert not any("slower than modelled" in w for w in d["warnings"])

    def test_every_spans_nodes_warning_opens_the_range(self):
        """The rule is the warning's: open exactly where ``spans_nodes_warning`` warns, except a pipeline (its sends
        between nodes are timed at PCIe's, no warning is printed for it). H200's domain is 8 GPUs
        (``scale_up_gpus``); GB200 NVL72's 72."""
        cat = default_catalog()
        h200 = cat.gpu("H200")
        assert slow_end_open(h200, 8, "tp") == "" and slow_end_open(h200, 16, "tp") == SLOW_END_OPEN_WORDS
        assert slow_end_open(h200, 16, "dp-ep") == SLOW_END_OPEN_WORDS
        assert slow_end_open(h200, 16, "pp") == ""
        nvl = cat.gpu("GB200")
        assert slow_end_open(nvl, 64, "tp") == ""

    def test_rate_held_out_ranges_open(self):
        """Under --rate the held-out ranges of a 16-GPU replica are open too (text and --json's ``high_open``)."""
        args = (*TP16, "--rate", "2", "--prompt-tokens", "2000", "--output-tokens", "500")
        out = run(*args)
        assert out.exit_code == 0, out.output
        assert re.search(r"^\s+p95 TTFT .* to more than ", out.stdout, re.M), out.stdout
        assert f'slow ends open ("more than"): {OPEN}' in out.stdout
        d = json.loads(run(*args, "--json").stdout)
        assert d["under_load"]["held_out_ranges"]["ttft_s"]["p95"]["high_open"] is True


class TestNotModelledLine:
    def test_dp_ep_plan_names_the_recipe(self, dpep16, dpep16_json):
        """README "Not modelled": "... EPLB's redundant experts, DeepEP's low-latency kernels, two-batch overlap, and
        prefill/decode disaggregation"."""
        words = line(dpep16, "Not modelled")
        assert words == listed_words(LARGE_SCALE_MOE_NOT_MODELLED)
        assert words.endswith("DeepEP's low-latency kernels, two-batch overlap, and prefill/decode disaggregation")
        assert dpep16_json["not_modelled"] == words

    def test_dp_ep_on_one_node_too(self):
        """The recipe is left out whatever the group (8 x H200, trial 31 F9's command)."""
        cmd = ("plan", "--gpu", "H200", "--model", "DeepSeek-R1", "--engine", "sglang", "--parallelism", "dp-ep")
        out = run(*cmd, "--gpus", "8", "--context", "32k")
        assert out.exit_code == 0, out.output
        assert "DeepEP's low-latency kernels" in line(out.stdout, "Not modelled")

    def test_tp_across_nodes_names_the_scale_out_network(self, tp16):
        assert line(tp16, "Not modelled").startswith("the scale-out network between nodes")

    def test_one_node_tp_prints_none(self):
        assert not_modelled_words(default_catalog().gpu("H200"), 8, "tp") == ""

    def test_readme_and_docs_name_the_same_list(self):
        """README's "Not modelled" bullet and docs/model.md's dp-ep paragraph name the constant's items, in order."""
        for doc in ("README.md", "docs/model.md"):
            text = flat((ROOT / doc).read_text())
            at = 0
            for item in LARGE_SCALE_MOE_NOT_MODELLED:
                found = text.find(item, at)
                assert found >= 0, f"{doc}: {item!r} missing or out of order"
                at = found + len(item)


class TestGpuMemoryInGiB:
    @pytest.mark.parametrize(
        ("gpu", "words"),
        # trial 30 F13: an "80GB" H100 shows 85.90 GB (80 x 2**30 bytes); the "141GB" H200 151.40 GB (141 GiB)
        [("H100", "(79.18 GiB of 85.90 GB = 80 GiB)"), ("H200", "(139.80 GiB of 151.40 GB = 141 GiB)")],
    )
    def test_plan_memory_line(self, gpu, words):
        out = run("plan", "--gpu", gpu, "--model", "llama3.1-8b", "--context", "8k")
        assert out.exit_code == 0, out.output
        assert line(out.stdout, "  memory the engine sees").endswith(words)

    def test_unknown_gpu_still_one_line_exit_2(self):
        out = run("plan", "--gpu", "H999", "--model", "llama3.1-8b", "--context", "8k")
        assert out.exit_code == 2 and "Traceback" not in out.output
