"""Trial 15 (an engineer checking planner against their own benchmarks with ``planner validate``): F1, F2, F5 and
F10 of its findings (/tmp/trial15/findings.md; its input files rebuilt here with the same header and cells).

- F1 (wrong number): a serving row at a request rate with no ``num_prompts`` column, or a blank cell, was simulated
  as one request (TTFT p99 = median, the same at every rate), silently. docs/accuracy.md says ``max_throughput`` and
  ``serving_rate`` rows without ``num_prompts`` get no prediction; now every serving run that does not say how many
  requests it sent is listed under "Not predicted" asking for the benchmark's --num-prompts.
- F2 (misleading): a misspelt figure column (``ttft_p99ms``, ``ttft_medain_ms``, ``tpot_p99``) or result key
  (``medain_ttft_ms``) was dropped without a word, and ``--check`` passed a file that failed with it. Now it is named
  with the closest read name, and ``--check`` refuses the file (exit 2, one line).
- F5: ``validate --json`` had no verdict, no limits and no notes. Now ``verdict``, ``summary[q]["limits"]`` and
  ``notes``.
- F10 (two of its slips, in ``validate``): a not-predicted row read "B=? ?/? rate 10" beside a predicted "TP1
  1000/300 10 req/s", and the serving table said "means included" of a file without means.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.accuracy import published
from planner.accuracy.published import (
    DECODE_KEPT_COLUMNS,
    DECODE_READ_COLUMNS,
    NO_NUM_PROMPTS,
    load_decode_rows,
    read_csv_rows,
    reference_dir,
    unsized_serving_run,
)
from planner.accuracy.releases import PLAN_VLLM_RELEASE
from planner.accuracy.unread import looks_like_figure, unknown_columns, unknown_result_keys
from planner.accuracy.validation import LIMITS, LOAD_TITLE_JUDGED, LOAD_TITLE_WITH_MEANS, Check, Table, to_json
from tests.cli_support import one_line, run

#: The trial's runs.csv header (the serving run of vllm bench serve written by hand from its printed summary).
HEAD = (
    "record_id,gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,input_len,output_len,"
    "ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms,itl_median_ms,itl_p99_ms"
)
#: runs.csv's A1 and A2 (10 and 20 requests/s), their num_prompts cell a field to fill (the trial's 1,000; 200 here
#: where a run is simulated, to keep the test short; "" for blanknp.csv).
A1 = "A1,H100,meta-llama/Llama-3.1-8B-Instruct,1,vllm,0.11.0,10,{n},1000.44,299.81,47.9,118.6,11.9,15.3,10.9,36.2"
A2 = "A2,H100,meta-llama/Llama-3.1-8B-Instruct,1,vllm,0.11.0,20,{n},1000.44,299.81,71.0,190.0,17.5,21.0,13.8,52.0"
#: the trial's one.csv: one run whose TTFT p99 (300 ms published) the planner misses by far (-68.7% in the trial)
ONE = (
    "record_id,gpu,model,tensor_parallel_size,request_rate,num_prompts,input_len,output_len,ttft_median_ms,"
    "ttft_p99_ms,tpot_median_ms,tpot_p99_ms\n"
    "A1,H100,meta-llama/Llama-3.1-8B-Instruct,1,10,200,1000,300,55,300,10.5,11.8\n"
)
#: The trial's vllm-10qps-Llama-3.1-8B-Instruct.json, as vllm bench serve --save-result writes it (200 prompts here).
RESULT = {
    "date": "20260110-101500", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 200, "request_rate": 10.0, "burstiness": 1.0,
    "max_concurrency": None, "duration": 20.4, "completed": 200, "failed": 0, "total_input_tokens": 200087,
    "total_output_tokens": 59962, "request_throughput": 9.82, "request_goodput": None, "output_throughput": 2944.2,
    "total_token_throughput": 12768.6, "max_output_tokens_per_s": 3350.0, "max_concurrent_requests": 61,
    "mean_ttft_ms": 52.3, "median_ttft_ms": 47.9, "std_ttft_ms": 18.4, "p99_ttft_ms": 118.6, "mean_tpot_ms": 12.1,
    "median_tpot_ms": 11.9, "std_tpot_ms": 1.2, "p99_tpot_ms": 15.3, "mean_itl_ms": 11.8, "median_itl_ms": 10.9,
    "std_itl_ms": 6.1, "p99_itl_ms": 36.2, "mean_e2el_ms": 3660.0, "median_e2el_ms": 3620.0, "std_e2el_ms": 380.0,
    "p99_e2el_ms": 4580.0,
}  # fmt: skip


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def runs(tmp_path: Path, prompts: str, head: str = HEAD, name: str = "runs.csv") -> Path:
    """runs.csv's A1 and A2 with ``prompts`` in their num_prompts cell; without the column where ``prompts`` is None
    (the trial's nonum.csv)."""
    rows = [A1.format(n=prompts or ""), A2.format(n=prompts or "")]
    if prompts is None:
        head = head.replace(",num_prompts", "")
        rows = [r.replace(",10,,", ",10,").replace(",20,,", ",20,") for r in rows]
    return write(tmp_path, name, "\n".join([head, *rows]) + "\n")


def json_rows(*args: str) -> list[dict]:
    r = run("validate", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["rows"]


class TestF1NoNumPrompts:
    """F1: a serving run that does not say how many requests it sent is not predicted, and says what to add."""

    @pytest.mark.parametrize("prompts", [None, ""], ids=["no num_prompts column (nonum.csv)", "blank (blanknp.csv)"])
    def test_a_rate_row_without_num_prompts_is_not_predicted(self, tmp_path, prompts):
        """Every figure of A1 and A2 is null with the reason (docs/accuracy.md: such rows "get no prediction")."""
        rows = json_rows("--decode", str(runs(tmp_path, prompts)))
        assert {r["record_id"] for r in rows} == {"A1", "A2"} and len(rows) == 12  # six figures each
        assert all(r["predicted"] is None and r["reason"] == NO_NUM_PROMPTS for r in rows)

    def test_the_reason_says_what_to_add_under_not_predicted(self, tmp_path):
        out = run("validate", "--decode", str(runs(tmp_path, None))).stdout
        block = out.split("Not predicted:\n")[1].split("\n\n")[0].splitlines()
        assert block == [f"  A1: {NO_NUM_PROMPTS}", f"  A2: {NO_NUM_PROMPTS}"]
        assert "add a num_prompts column" in NO_NUM_PROMPTS and "--num-prompts" in NO_NUM_PROMPTS

    def test_with_num_prompts_the_run_is_simulated_under_its_load(self, tmp_path):
        """The same rows with num_prompts 200 are predicted, and no longer as one request: the p99 TTFT is above the
        median and the run at 20 requests/s waits longer than at 10 (the trial: 91 ms and 3,464 ms at 1,000)."""
        got = {
            (r["record_id"], r["quantity"]): r["predicted"] for r in json_rows("--decode", str(runs(tmp_path, "200")))
        }
        assert None not in got.values()
        assert got[("A1", "ttft_p99_ms")] > got[("A1", "ttft_median_ms")]
        assert got[("A2", "ttft_p99_ms")] > got[("A1", "ttft_p99_ms")]

    @pytest.mark.parametrize(
        ("kind", "batch", "rate", "unsized"),
        [
            ("serving", 0, 10.0, True),  # at a rate, the server choosing its batch: A1 without num_prompts
            ("serving", 8, 10.0, True),  # at a rate with a concurrency cap: still no count of requests
            ("serving", 0, float("inf"), True),  # every prompt at once, how many not said
            ("serving", 0, float("nan"), True),  # the server chose the batch, no rate cell
            ("serving", 8, float("nan"), False),  # 8 prompts sent at once (DM041-DM043: num_prompts is the batch)
            ("static", 8, float("nan"), False),  # a static batch of 8
        ],
    )
    def test_which_serving_runs_are_unsized(self, kind, batch, rate, unsized):
        """``unsized_serving_run``: a run at a rate, or whose server chose the batch, needs num_prompts; a batch sent
        at once is its own count (catalogs/reference/README.md: "all prompts sent at once")."""
        assert unsized_serving_run(kind, batch, rate) is unsized

    def test_no_shipped_row_is_newly_refused(self):
        """Every shipped row refused for its num_prompts has a kind cell that refused it before trial 15
        (max_throughput or serving_rate: the ROCM405-00Nb rows), so no shipped prediction changes."""
        ref = reference_dir()
        for path in sorted([*ref.glob("decode_*.csv"), *ref.glob("perf_*.csv"), ref / "load_public.csv"]):
            kinds = {c.get("record_id"): str(c.get("kind", "")).strip() for c in read_csv_rows(path)}
            refused = [r.record_id for r in load_decode_rows(path) if r.problem == NO_NUM_PROMPTS]
            assert all(kinds[rid] in ("max_throughput", "serving_rate") for rid in refused), (path.name, refused)


class TestF2UnknownColumns:
    """F2: a column or result key that is not read is named, and --check does not pass a file without it."""

    @pytest.mark.parametrize(
        ("typo", "meant"),
        [("ttft_p99ms", "ttft_p99_ms"), ("ttft_medain_ms", "ttft_median_ms"), ("tpot_p99", "tpot_p99_ms")],
    )
    def test_a_misspelt_figure_column_is_named_with_the_closest(self, tmp_path, typo, meant):
        """The trial's one_typo.csv, typo.csv and typo3.csv: a warning line naming the column and the one meant."""
        p = write(tmp_path, "one_typo.csv", ONE.replace(meant, typo, 1))
        r = run("validate", "--decode", str(p))
        assert r.exit_code == 0, r.output
        assert f"warning: unknown column '{typo}' in {p}, not read; did you mean {meant}?" in r.stderr.splitlines()

    def test_check_refuses_the_file_the_typo_would_have_passed(self, tmp_path):
        """one.csv fails --check (exit 1: TTFT p99 300 ms published, ~90 ms predicted); its copy with ttft_p99ms
        passed in the trial (exit 0), and is now refused in one line (exit 2)."""
        assert run("validate", "--decode", str(write(tmp_path, "one.csv", ONE)), "--check").exit_code == 1
        typo = write(tmp_path, "one_typo.csv", ONE.replace("ttft_p99_ms", "ttft_p99ms"))
        line = one_line(run("validate", "--decode", str(typo), "--check"), 2)
        assert line.startswith(f"planner: error: {typo}: unknown column 'ttft_p99ms' (did you mean ttft_p99_ms?)")
        assert "--check would judge the file without it" in line

    def test_a_misspelt_result_key_is_named_and_refused_under_check(self, tmp_path):
        """The trial's j_typo.json: its median TTFT written as medain_ttft_ms."""
        result = {k if k != "median_ttft_ms" else "medain_ttft_ms": v for k, v in RESULT.items()}
        p = write(tmp_path, "j_typo.json", json.dumps(result))
        line = one_line(run("validate", "--decode", str(p), "--gpu", "H100", "--gpus", "1", "--check"), 2)
        assert f"{p}: unknown key 'medain_ttft_ms' (did you mean median_ttft_ms?)" in line
        assert [u.name for u in unknown_result_keys([result])] == ["medain_ttft_ms"]

    def test_a_free_text_column_is_named_but_not_refused(self, tmp_path):
        """A column no figure and no misspelling (date, comment) holds nothing the verdict judges: a warning only,
        and --check decides on the figures (a static batch-1 row: exit 0 or 1, never 2)."""
        p = write(
            tmp_path,
            "static.csv",
            "gpu,model,batch,input_len,output_len,tpot_ms,date\nH100,llama3.1-8b,1,1024,128,7,2026-01\n",
        )
        r = run("validate", "--decode", str(p), "--check")
        assert r.exit_code in (0, 1), r.output
        assert f"warning: unknown column 'date' in {p}, not read" in r.stderr.splitlines()

    @pytest.mark.parametrize(
        ("column", "closest", "judged"),
        [
            ("num_promts", "num_prompts", True),  # a setting misspelt: the run's size silently lost
            ("kv_cache_dtpye", "kv_cache_dtype", True),
            ("TTFT_P99_MS", "ttft_p99_ms", True),  # the reader's names are lower case
            ("first_token_latency", "", True),  # a figure by its words
            ("date", "", False),  # 0.73 alike to dataset: below MISSPELLING_RATIO
            ("comment", "", False),
        ],
    )
    def test_which_columns_are_judged(self, column, closest, judged):
        (u,) = unknown_columns(["gpu", "model", column])
        assert (u.name, u.closest, u.judged) == (column, closest, judged)

    def test_the_shipped_files_columns_are_known(self):
        """A user file laid out as a shipped one draws no warning: every column of the decode, perf and load files
        is read or kept on purpose (catalogs/reference/README.md), and ttft_p95_ms has its own note."""
        ref = reference_dir()
        for path in sorted([*ref.glob("decode_*.csv"), *ref.glob("perf_*.csv"), ref / "load_public.csv"]):
            assert unknown_columns(read_csv_rows(path)[0]) == [], path.name
        assert unknown_columns(["ttft_p95_ms", "e2el_median_ms", "itl_mean_ms"]) == []

    def test_every_column_the_reader_reads_is_known(self):
        """Each literal column name published.py reads from a row's cells (``r.get("...")``, ``r["..."]``,
        ``figure("...")``, ``cell("...")``) is in DECODE_READ_COLUMNS, so a column the reader gains is never called
        unknown; and no known column is both read and kept unread."""
        source = Path(published.__file__).read_text()
        literals = set(re.findall(r"""\br(?:\.get\(|\[)"([a-z_0-9]+)"|(?:figure|cell)\("([a-z_0-9]+)"\)""", source))
        named = {a or b for a, b in literals}
        assert named and named <= DECODE_READ_COLUMNS, named - DECODE_READ_COLUMNS
        assert not DECODE_READ_COLUMNS & DECODE_KEPT_COLUMNS

    def test_the_clients_known_keys_are_not_named(self):
        """vllm bench serve's keys (the shipped test file, vllm/benchmarks/serve.py) and sglang.bench_serving's
        (python/sglang/bench_serving.py ``benchmark``'s result dict and result_details) draw no warning."""
        vllm = json.loads((Path(__file__).parent / "data" / "vllm_bench_serve_llama33_70b_tp8_qps1.json").read_text())
        sglang_keys = (
            "backend dataset_name request_rate max_concurrency sharegpt_output_len random_input_len random_output_len "
            "random_range_ratio duration completed total_input_tokens total_output_tokens "
            "total_output_tokens_retokenized request_throughput input_throughput output_throughput "
            "mean_e2e_latency_ms median_e2e_latency_ms std_e2e_latency_ms p99_e2e_latency_ms mean_ttft_ms "
            "median_ttft_ms std_ttft_ms p99_ttft_ms mean_tpot_ms median_tpot_ms std_tpot_ms p99_tpot_ms mean_itl_ms "
            "median_itl_ms std_itl_ms p95_itl_ms p99_itl_ms concurrency accept_length input_lens output_lens ttfts "
            "itls generated_texts errors"
        ).split()
        assert unknown_result_keys([vllm, RESULT, dict.fromkeys(sglang_keys, 1)]) == []
        assert not looks_like_figure("title") and looks_like_figure("medain_ttft_ms") and looks_like_figure("ttfts")


class TestF5JsonVerdict:
    """F5: --json carries the verdict, each quantity's limits and the notes standard error printed."""

    def test_the_json_has_the_texts_verdict_limits_and_notes(self, tmp_path):
        """The trial's vllm-10qps file: the text's PASS / FAIL line and its limits (validation.LIMITS, the serving
        table's) and the release note ("states no release ... predicted as vLLM 0.19.0") are in the object; the
        keys it had before are kept."""
        p = write(tmp_path, "vllm-10qps-Llama-3.1-8B-Instruct.json", json.dumps(RESULT))
        options = ("validate", "--decode", str(p), "--gpu", "H100", "--gpus", "1")
        text, data = run(*options), json.loads(run(*options, "--json").stdout)
        (verdict,) = [line.split(":")[0] for line in text.stdout.splitlines() if line.startswith(("PASS:", "FAIL:"))]
        assert data["verdict"] == verdict
        assert run(*options, "--check").exit_code == (1 if verdict == "FAIL" else 0)
        assert {"rows", "summary", "calibration"} <= set(data) and data["calibration"] is None
        for q, s in data["summary"].items():
            assert {"median_abs_error", "worst_abs_error"} <= set(s)
            assert s["limits"] == {"median": LIMITS[q][0], "worst": LIMITS[q][1]}, q
        (note,) = data["notes"]
        assert note in text.stderr and "states no release" in note and f"predicted as vLLM {PLAN_VLLM_RELEASE}" in note

    def test_verdict_and_limits_follow_the_held_tables(self):
        """A table held to its limits decides the verdict (TPOT within 10% / 30%: PASS; +50%: FAIL); an informative
        one (INFO in the text) gives no verdict and no limits."""
        within = Table("t", (Check("a", "tpot_ms", "x", 10.5, 10.0),))
        beyond = Table("t", (Check("b", "tpot_ms", "x", 15.0, 10.0),))
        assert to_json([within])["verdict"] == "PASS" and to_json([beyond])["verdict"] == "FAIL"
        assert to_json([within])["summary"]["tpot_ms"]["limits"] == {"median": 0.10, "worst": 0.30}
        informative = to_json([beyond], held=[False])
        assert informative["verdict"] is None and informative["summary"]["tpot_ms"]["limits"] is None
        assert to_json([within, beyond], held=[True, False])["verdict"] == "PASS"

    def test_the_new_keys_are_documented(self):
        docs = " ".join((Path(__file__).parents[1] / "docs" / "accuracy.md").read_text().split())
        assert '`verdict` is `"PASS"` or `"FAIL"`' in docs and '`limits`, `{"median", "worst"}`' in docs
        assert "`notes` lists the lines standard error carried" in docs
        assert '"verdict"' in " ".join(run("validate", "--help").output.split())


class TestF10Labels:
    """F10: a row not predicted is labelled as a predicted one; "means included" only where there are means."""

    def test_a_not_predicted_rate_row_reads_as_a_predicted_one(self, tmp_path):
        """A1 without num_prompts, and runs.csv's S1 with blank lengths, end as A1 predicted does: lengths as read
        (1000.44 / 299.81 tokens: 1000/300), then "10 req/s"; no "B=?" or "rate 10"."""
        with_prompts = {r["record_id"]: r["configuration"] for r in json_rows("--decode", str(runs(tmp_path, "200")))}
        without = {
            r["record_id"]: r["configuration"] for r in json_rows("--decode", str(runs(tmp_path, "", name="b.csv")))
        }
        assert with_prompts["A1"] == without["A1"] == "Llama-3.1-8B-Instruct H100 TP1 1000/300 10 req/s"
        s1 = "S1,H100,meta-llama/Llama-3.1-8B-Instruct,1,vllm,0.11.0,10,1000,,,40,100,11,14,10,30"
        (row, *_) = json_rows("--decode", str(write(tmp_path, "s1.csv", f"{HEAD}\n{s1}\n")))
        assert row["configuration"] == "Llama-3.1-8B-Instruct H100 TP1 ?/? 10 req/s" and row["predicted"] is None

    def test_means_included_only_where_a_run_states_one(self, tmp_path):
        """runs.csv has no ttft_ms, tpot_ms or output_throughput_tok_s: its table judges the runs, no "means
        included"; with a ttft_ms column it does include them."""
        plain = run("validate", "--decode", str(runs(tmp_path, ""))).stdout.splitlines()[0]
        assert plain == LOAD_TITLE_JUDGED and "means included" not in plain
        head, rows = HEAD + ",ttft_ms", [A1.format(n="") + ",52.3"]
        means = run("validate", "--decode", str(write(tmp_path, "m.csv", "\n".join([head, *rows]) + "\n")))
        assert means.stdout.splitlines()[0] == LOAD_TITLE_WITH_MEANS
