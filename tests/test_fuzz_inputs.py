"""Fuzz (hypothesis): hostile scenarios, catalogs, calibration files and CLI arguments.

Whatever the input, a command either succeeds and writes its whole file, or refuses with one line and exit
1 or 2: no traceback, no file left behind (issue 13's "done means"). Examples are few per run (CI minutes);
hypothesis varies them from run to run.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import tomli_w
from click.testing import CliRunner
from fuzz_support import examples, tallied
from hypothesis import example, given
from hypothesis import strategies as st
from test_hostile import SCENARIO as HOSTILE_SCENARIO

from planner.catalog import default_catalog
from planner.cli import main

#: Examples per test: 25, x PLANNER_FUZZ_EXAMPLES / 10 when set (tests/fuzz_support.py, as every fuzz test).
FUZZ = examples(25)

SCENARIO = tomllib.loads(HOSTILE_SCENARIO)  # the hostile-input tests' scenario, as data

#: Values a hostile or careless user writes where a number or a name belongs.
HOSTILE = st.one_of(
    st.sampled_from([0, -1, True, False, math.inf, -math.inf, math.nan, 1e308, -1e308, 2**63, 2**64, 1e-320, ""]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(['=HYPERLINK("http://x","c")', "a\x00b", "\x1b[31m", "é" * 200, "../../etc/passwd"]),
    st.lists(st.integers(), max_size=3),
    st.recursive(st.integers(), lambda kids: st.lists(kids, max_size=2), max_leaves=6),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)


def clean_outcome(result, folder: Path, inputs: set[str], output: Path | None = None) -> None:
    """Exit 0 with the whole output, or 1/2 with one error line (after any "note:" lines about skipped input) and
    nothing written; never a traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    left = {p.name for p in folder.iterdir()} - inputs
    assert not [n for n in left if n.endswith((".part", ".tmp"))], left
    if result.exit_code == 0:
        if output is not None:
            assert output.exists() and output.stat().st_size > 0
        return
    assert result.exit_code in (1, 2), result.output
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("note: ")]
    if lines and lines[-1].startswith("Error: "):  # click's own usage error: usage, hint, blank, one "Error:" line
        assert lines[0].startswith("Usage:"), result.stderr
    else:
        assert len(lines) == 1 and lines[0].startswith("planner: error: "), result.stderr
    assert not left, left


def _write_toml(path: Path, data: dict) -> bool:
    """Write ``data`` as TOML; False when TOML cannot express it (e.g. a list of mixed tables and values)."""
    try:
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
    except (TypeError, ValueError):
        return False
    return True


WORKLOAD_FIELDS = sorted(SCENARIO["workload"])
OPTION_FIELDS = [
    "gpu",
    "model",
    "name",
    "weight_precision",
    "kv_precision",
    "engine",
    "memory_utilization",
    "pricing",
    "purchase_usd",
    "cloud_usd_per_gpu_hour",
    "node_size",
    "spare_replicas",
    "max_gpus_per_replica",
    "gpus_per_replica",
    "pue",
]


@FUZZ
@given(
    table=st.sampled_from(["workload", "option", "top"]),
    field=st.sampled_from(WORKLOAD_FIELDS + OPTION_FIELDS + ["title", "traffic_change", "extra"]),
    value=HOSTILE,
)
@tallied("scenario fields (issue 13)")
def test_fuzz_scenario(tmp_path_factory, table, field, value):
    folder = tmp_path_factory.mktemp("sc")
    data = {
        k: (dict(v) if isinstance(v, dict) else [dict(o) for o in v] if isinstance(v, list) else v)
        for k, v in SCENARIO.items()
    }
    target = {"workload": data["workload"], "option": data["option"][0], "top": data}[table]
    target[field] = value
    if not _write_toml(folder / "s.toml", data):
        return
    out = folder / "r.md"
    clean_outcome(CliRunner().invoke(main, ["export", str(folder / "s.toml"), "-o", str(out)]), folder, {"s.toml"}, out)


GPU = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
MODEL = default_catalog().model("llama2-7b").model_dump(mode="json", exclude_none=True)


@FUZZ
@given(kind=st.sampled_from(["gpu", "model"]), field=st.data(), value=HOSTILE)
@tallied("catalog entries (issue 13)")
def test_fuzz_catalog_entry(tmp_path_factory, kind, field, value):
    folder = tmp_path_factory.mktemp("cat")
    entry = dict(GPU if kind == "gpu" else MODEL, name="Fuzz", aliases=[])
    entry[field.draw(st.sampled_from(sorted(entry) + ["unknown_field"]))] = value
    if not _write_toml(folder / "f.toml", {kind: [entry]}):
        return
    gpu, model = ("Fuzz", "llama2-7b") if kind == "gpu" else ("H100", "Fuzz")
    r = CliRunner().invoke(
        main, ["plan", "--catalog", str(folder), "--gpu", gpu, "--model", model, "--context", "4096"]
    )
    clean_outcome(r, folder, {"f.toml"})


@FUZZ
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
@tallied("catalog files (issue 13)")
def test_fuzz_catalog_file(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("cat")
    (folder / "f.toml").write_text("[[gpu]]\n" + text, encoding="utf-8", errors="surrogatepass")
    r = CliRunner().invoke(
        main, ["plan", "--catalog", str(folder), "--gpu", "H100", "--model", "llama2-7b", "--context", "1"]
    )
    clean_outcome(r, folder, {"f.toml"})


CELL = st.one_of(
    st.sampled_from(["", "0", "-1", "inf", "-inf", "nan", "1e400", "1e-400", "true", "x", "\x00", "8", "1000", "12.5"]),
    st.integers(min_value=-(2**66), max_value=2**66).map(str),
    st.text(max_size=6),
)


@FUZZ
@given(
    rows=st.lists(st.lists(CELL, min_size=0, max_size=7), min_size=1, max_size=4),
    header=st.sampled_from(
        ["gpu,model,batch,input_len,output_len,tpot_ms", "gpu,model,batch,context,tpot_ms", "gpu,model", ""]
    ),
    raw=st.one_of(st.none(), st.binary(max_size=300)),
)
# CI's find (hypothesis 6.170): one row skipped with a note, then the error for the file
@example(rows=[[], ["8", "16777217", "1"]], header="gpu,model,batch,context,tpot_ms", raw=None)
@tallied("calibration files (issue 13)")
def test_fuzz_calibration_file(tmp_path_factory, rows, header, raw):
    folder = tmp_path_factory.mktemp("cal")
    f = folder / "runs.csv"
    if raw is not None:
        f.write_bytes(raw)
    else:
        lines = [header] + [
            ",".join(['"' + c.replace('"', '""') + '"' for c in ["H100", "llama2-7b", *row]]) for row in rows
        ]
        f.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    out = folder / "cal.toml"
    clean_outcome(CliRunner().invoke(main, ["calibrate", str(f), "-o", str(out)]), folder, {"runs.csv"}, out)


ARG = st.one_of(CELL, st.sampled_from(["H100", "llama2-70b", "fp8", "int4", "-", "--force", "9" * 40]))


@FUZZ
@given(
    option=st.sampled_from(["--context", "--gpus", "--batch", "--memory-utilization", "--price", "-k", "-w", "--gpu"]),
    value=ARG,
)
@tallied("plan arguments (issue 13)")
def test_fuzz_plan_arguments(tmp_path_factory, option, value):
    folder = tmp_path_factory.mktemp("cli")
    args = {"--gpu": "H100", "--model": "llama2-70b", "--context": "8192"}
    args[option] = value
    r = CliRunner().invoke(main, ["plan", *[x for kv in args.items() for x in kv]])
    clean_outcome(r, folder, set())


@FUZZ
@given(name=st.one_of(st.text(min_size=1, max_size=300), st.sampled_from(["x" * 300 + ".md", "a/b/c.md", ".", "-"])))
@tallied("output names (issue 13)")
def test_fuzz_output_names(tmp_path_factory, name):
    """Any output name: written whole, or one line; ``-`` is standard output. The scenario is the issue's one
    option sized by Little's law (0.2 s an export in this process; the name, not the sizing, is under test)."""
    folder = tmp_path_factory.mktemp("out")
    example = folder.parent / "littles-law.toml"
    if not example.exists():
        _write_toml(example, {**SCENARIO, "workload": {**SCENARIO["workload"], "sizing": "littles-law"}})
    if "\x00" in name:
        return  # no operating system accepts a NUL in a path; click never passes one
    r = CliRunner().invoke(main, ["export", str(example), "-o", str(folder / name), "--format", "md", "-q"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    assert not [p for p in folder.rglob("*") if p.name.endswith(".part") and p != folder / name]  # "x.part" asked
    if r.exit_code == 0 and name != "-":
        assert (folder / name).is_file() and (folder / name).read_text(encoding="utf-8").startswith("# "), name
    elif r.exit_code:  # one line (click's usage errors end in one "Error:" line)
        lines = r.stderr.strip().splitlines()
        assert lines == lines[-1:] and lines[0].startswith("planner: error: ") or lines[-1].startswith("Error: "), (
            r.stderr
        )
