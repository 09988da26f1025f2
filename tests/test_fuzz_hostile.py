"""Fuzz every hostile class of issue 26: tried / held per class (``bench/fuzz_table.py`` prints the table).

Each test draws inputs of one class (hypothesis) and checks the law the issue states for it: the command
answers (exit 0, its whole file) or refuses in one line with exit 1 or 2; never a traceback, a corrupt or
half-written file, a raw control character on the terminal, a live formula in a CSV, two winners of a race,
a hang, or a wrong answer the issue names. Examples per class are few (the suite runs within a minute in CI);
``PLANNER_FUZZ_EXAMPLES=100`` runs ten times as many.
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import openpyxl
import tomli_w
from click.testing import CliRunner
from fuzz_support import examples, trial
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import SCENARIO, clean_outcome
from test_hostile import SPARKLINE_EXT, WORKBOOK, copy_with
from test_hostile_26 import TINY_DEEPSEEK
from test_refresh_keeps import THREADED, X14, XM, with_ext, with_parts

from planner.catalog import default_catalog
from planner.cli import main
from planner.errors import OutputExistsError
from planner.excel import functions as xf
from planner.export.scenario import ScenarioError, parse_scenario
from planner.io.files import write_file
from planner.io.safetext import MAX_CELL_CHARS, MAX_HEADER_CHARS
from planner.units import parse_token_count
from planner.workbook.update import package_features

ROOT = Path(__file__).resolve().parents[1]
#: Controls a terminal acts on: C0 (ESC, BEL, NUL, VT ...), DEL and C1 (CSI 0x9b, OSC 0x9d).
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["\x1b[31m", "\x1b]8;;http://x\x07", "\x07", "\x00", "\x0b", "\ufffe", "\x9b", "=", ";", "|"]),
        st.characters(codec="utf-8", exclude_categories=["Cs"]),
    ),
    min_size=1,
    max_size=12,
).map("".join)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def scenario_text(option: dict | None = None, workload: dict | None = None, **top) -> str:
    data = {**SCENARIO, **top}
    data["workload"] = {**SCENARIO["workload"], **(workload or {})}
    data["option"] = [{**SCENARIO["option"][0], **(option or {})}]
    return tomli_w.dumps(data)


# -- item 2: sinks (text from users in xlsx, on the terminal, in CSV) ---------------------------------------


@examples(4)
@given(name=HOSTILE_TEXT, title=st.text(min_size=1, max_size=600).filter(str.strip))
def test_xlsx_text_and_headers(tmp_path_factory, name, title):
    """Any option name and title: the review opens in openpyxl and no print header exceeds 255 characters."""
    folder = tmp_path_factory.mktemp("x")
    (folder / "s.toml").write_text(scenario_text({"name": name}, title=title), encoding="utf-8")
    out = folder / "r.xlsx"
    with trial("XML-illegal text in an xlsx", "print headers over 255 characters"):
        r = invoke("export", str(folder / "s.toml"), "-o", str(out))
        clean_outcome(r, folder, {"s.toml"}, out)
        if r.exit_code == 0:
            openpyxl.load_workbook(out).close()
            with zipfile.ZipFile(out) as z:
                for part in z.namelist():
                    if part.startswith("xl/worksheets/sheet"):
                        for h in re.findall(rb"<(?:odd|even|first)(?:Header|Footer)>(.*?)</", z.read(part)):
                            text = h.decode().replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                            assert len(text) <= MAX_HEADER_CHARS, (part, len(text))


@examples(6)
@given(name=HOSTILE_TEXT)
def test_terminal_output_escapes_controls(tmp_path_factory, name):
    """A name with ESC/OSC/BEL/CSI: plan's error and export's summary show it escaped, never raw."""
    folder = tmp_path_factory.mktemp("t")
    (folder / "s.toml").write_text(scenario_text({"name": name}), encoding="utf-8")
    with trial("control characters on the terminal"):
        for r in (
            invoke("plan", "--gpu", name, "--model", "llama2-7b", "--context", "4096"),
            invoke("export", str(folder / "s.toml"), "-o", str(folder / "r.md")),
        ):
            assert r.exit_code in (0, 1, 2) and "Traceback" not in r.output
            assert not RAW_CONTROL.search(r.stdout + r.stderr.replace("\n", "")), ascii(r.output)


NUMBER = re.compile(r"[+-]?[\d,]*\.?\d+(?:[eE][+-]?\d+)?%?")


@examples(5)
@given(name=st.text(alphabet="=+-@;,|\t\" 'ab1(", min_size=1, max_size=20).filter(str.strip))
def test_csv_cells_never_start_a_formula(tmp_path_factory, name):
    """Read with , ; tab or | as separator (regional settings), no cell starts a formula."""
    folder = tmp_path_factory.mktemp("c")
    (folder / "s.toml").write_text(scenario_text({"name": name}), encoding="utf-8")
    out = folder / "r.csv"
    with trial("CSV formula under any separator"):
        r = invoke("export", str(folder / "s.toml"), "-o", str(out))
        clean_outcome(r, folder, {"s.toml"}, out)
        if r.exit_code == 0:
            text = out.read_text(encoding="utf-8-sig")
            for sep in (",", ";", "\t", "|"):
                for row in csv.reader(io.StringIO(text), delimiter=sep):
                    for cell in row:
                        lead = cell.lstrip(" ")
                        assert not lead.startswith(("=", "+", "-", "@")) or NUMBER.fullmatch(lead), (sep, cell)


# -- item 3: races, kills, bounds ------------------------------------------------------------------------------


@examples(8)
@given(writers=st.integers(min_value=2, max_value=8), size=st.integers(min_value=0, max_value=200_000))
def test_concurrent_exclusive_writes_have_one_winner(tmp_path_factory, writers, size):
    """N writers of one new file at the same instant: one wins whole, the others get OutputExistsError."""
    folder = tmp_path_factory.mktemp("race")
    target = folder / "new.xlsx"
    start = threading.Barrier(writers)
    outcome: list = [None] * writers

    def write(i: int) -> None:
        start.wait()
        try:
            write_file(target, bytes([i]) * size + f"writer {i}".encode())
            outcome[i] = "won"
        except OutputExistsError:
            outcome[i] = "refused"
        except Exception as exc:  # noqa: BLE001 - any other outcome breaks the law
            outcome[i] = repr(exc)

    with trial("concurrent writes (one winner)"):
        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(outcome) == ["refused"] * (writers - 1) + ["won"], outcome
        winner = outcome.index("won")
        assert target.read_bytes() == bytes([winner]) * size + f"writer {winner}".encode()
        assert sorted(p.name for p in folder.iterdir()) == ["new.xlsx"]


@examples(2)
@given(delay_s=st.floats(min_value=0.3, max_value=3.0))
def test_killed_export_leaves_no_corrupt_file(tmp_path_factory, delay_s):
    """SIGKILL at a random moment: the review is absent or whole; the next run clears the dead writer's .part.
    The issue's one-option scenario (about 2 s a run, so 0.3-3 s lands anywhere from start-up to the write)."""
    folder = tmp_path_factory.mktemp("kill")
    out = folder / "review.xlsx"
    (folder / "s.toml").write_text(scenario_text(), encoding="utf-8")
    cmd = [sys.executable, "-m", "planner", "export", str(folder / "s.toml"), "-q"]
    with trial("kills during a write"):
        p = subprocess.Popen([*cmd, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay_s)
        p.send_signal(signal.SIGKILL)
        p.wait(60)
        if out.exists():
            openpyxl.load_workbook(out).close()
        # a hang guard, not a speed law: bench/fuzz_table.py runs niced on a shared machine, where a 2 s export
        # can take minutes (the likely cause of the first s58 table run's 4 failed trials - one example and its
        # replays - whose stored example passed when replayed on a quieter machine; 120 s before)
        subprocess.run([*cmd, "-o", str(out), "--force"], check=True, timeout=600)
        openpyxl.load_workbook(out).close()
        assert sorted(p.name for p in folder.iterdir()) == ["review.xlsx", "s.toml"]


@examples(6)
@given(
    layers=st.one_of(st.integers(1, 64), st.integers(1, 2**31 - 1)),
    dense=st.integers(0, 2**31 - 1),
    step=st.integers(1, 2**31 - 1),
)
def test_huge_moe_models_answer_quickly(tmp_path_factory, layers, dense, step):
    """A user MoE model with up to 2^31 - 1 layers: plan answers or refuses in one line, within seconds."""
    folder = tmp_path_factory.mktemp("moe")
    entry = default_catalog().model("Mixtral-8x7B").model_dump(mode="json", exclude_none=True)
    entry.update(name="Fuzz-MoE", aliases=[], hf_id="", num_layers=layers)
    entry["moe"].update(dense_layers=min(dense, layers), layer_step=step)
    (folder / "m.toml").write_text(tomli_w.dumps({"model": [entry]}))
    with trial("huge or deep inputs (bounded)"):
        began = time.process_time()  # CPU seconds: a busy machine does not inflate them
        r = invoke("plan", "--catalog", str(folder), "--gpu", "H100", "--model", "Fuzz-MoE", "--context", "1024")
        clean_outcome(r, folder, {"m.toml"})
        assert time.process_time() - began < 20


@examples(3)
@given(parts=st.integers(65, 100_000), options=st.integers(501, 2_000))
def test_oversized_scenarios_are_refused_quickly(tmp_path_factory, parts, options):
    """A dotted key of many parts or more options than planner sizes: one line, within seconds, bounded memory."""
    folder = tmp_path_factory.mktemp("big")
    (folder / "k.toml").write_text(scenario_text() + "\n" + ".".join(["a"] * parts) + " = 1\n")
    many = scenario_text() + "".join(
        f'[[option]]\nname = "o{i}"\ngpu = "H100"\nmodel = "llama2-7b"\n' for i in range(options)
    )
    (folder / "o.toml").write_text(many)
    with trial("huge or deep inputs (bounded)"):
        for name in ("k.toml", "o.toml"):
            began = time.process_time()  # CPU seconds: a busy machine does not inflate them
            r = invoke("export", str(folder / name), "-o", str(folder / "r.md"))
            assert r.exit_code == 2, r.output
            clean_outcome(r, folder, {"k.toml", "o.toml"})
            assert time.process_time() - began < 20


# -- item 4: tracebacks and wrong answers ----------------------------------------------------------------------


def import_hf(folder: Path, *extra: str):
    return invoke("catalog", "import-hf", str(folder), "--name", "Fuzz", "--to", str(folder / "cat"), *extra)


@examples(8)
@given(
    layers=st.integers(1, 8),
    dense=st.integers(0, 10),
    step=st.integers(1, 6),
    experts=st.integers(0, 16),
    per_token=st.integers(1, 4),
)
def test_import_hf_moe_shapes_plan_afterwards(tmp_path_factory, layers, dense, step, experts, per_token):
    """MoE configs whose dense layers or step leave no MoE layer: the entry plans, or import refuses in one line."""
    folder = tmp_path_factory.mktemp("hf")
    config = dict(
        TINY_DEEPSEEK,
        num_hidden_layers=layers,
        first_k_dense_replace=dense,
        decoder_sparse_step=step,
        n_routed_experts=experts,
        num_experts_per_tok=per_token,
    )
    (folder / "config.json").write_text(json.dumps(config))
    with trial("import-hf MoE without a MoE layer"):
        r = import_hf(folder)
        assert "Traceback" not in r.output and r.exit_code in (0, 1, 2), r.output
        if r.exit_code == 0:
            p = invoke("plan", "--catalog", str(folder / "cat"), "--gpu", "H100", "--model", "Fuzz", "--context", "1k")
            clean_outcome(p, folder, {"config.json", "cat"})


SAFETENSORS_HEADERS = st.one_of(
    st.sampled_from([b"", b"{}", b"[]", b"null", b'{"__metadata__": {}}', b'{"t": {"shape": []}}', b'{"t": {}}']),
    st.builds(
        lambda shape: json.dumps({"w": {"dtype": "BF16", "shape": shape, "data_offsets": [0, 0]}}).encode(),
        st.lists(st.integers(-2, 2**40), max_size=4),
    ),
    st.binary(max_size=64),
)


@examples(8)
@given(header=SAFETENSORS_HEADERS, declared=st.one_of(st.none(), st.integers(0, 2**64 - 1)))
def test_safetensors_headers(tmp_path_factory, header, declared):
    """Empty, odd or lying safetensors headers: an entry (with or without a stored count) or one line."""
    folder = tmp_path_factory.mktemp("st")
    (folder / "config.json").write_text(json.dumps({k: v for k, v in TINY_DEEPSEEK.items() if k != "n_routed_experts"}))
    length = len(header) if declared is None else declared
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", length) + header)
    with trial("empty or odd safetensors headers"):
        clean_outcome(import_hf(folder), folder, {"config.json", "model.safetensors", "cat"})


@examples(6)
@given(
    key=st.sampled_from(["model_type", "torch_dtype", "quantization_config"]),
    text=st.text(alphabet=st.one_of(st.characters(categories=["Cs"]), st.characters(codec="utf-8")), min_size=1),
)
def test_lone_surrogates_in_config_text(tmp_path_factory, key, text):
    """JSON's \\ud800 escapes decode to lone surrogates: refused in one line, never a UnicodeEncodeError."""
    folder = tmp_path_factory.mktemp("sur")
    value = {"quant_method": text} if key == "quantization_config" else text
    (folder / "config.json").write_text(json.dumps(dict(TINY_DEEPSEEK, **{key: value})))
    with trial("lone surrogates in config text"):
        r = import_hf(folder)
        clean_outcome(r, folder, {"config.json", "cat"})
        for f in (folder / "cat").glob("*.toml") if r.exit_code == 0 else ():
            f.read_text(encoding="utf-8")


@examples(5)
@given(precision=st.one_of(st.sampled_from(["fp6", "", "FP8", "bf16", "int3"]), st.text(max_size=8)))
def test_native_precision_plan_and_export_agree(tmp_path_factory, precision):
    """A user model's native_precision: plan and export both answer, or both refuse in one line."""
    folder = tmp_path_factory.mktemp("np")
    cat = folder / "cat"
    cat.mkdir()
    entry = default_catalog().model("Llama-3.1-8B").model_dump(mode="json", exclude_none=True)
    entry.update(name="Fuzz-8B", aliases=[], hf_id="", native_precision=precision)
    (cat / "m.toml").write_text(tomli_w.dumps({"model": [entry]}))
    (folder / "s.toml").write_text(scenario_text({"model": "Fuzz-8B", "gpu": "H100"}))
    with trial("unknown native_precision"):
        p = invoke("plan", "--catalog", str(cat), "--gpu", "H100", "--model", "Fuzz-8B", "--context", "4096")
        e = invoke("export", str(folder / "s.toml"), "-o", str(folder / "r.xlsx"), "--catalog", str(cat))
        clean_outcome(p, folder, {"cat", "s.toml", "r.xlsx"})
        clean_outcome(e, folder, {"cat", "s.toml"}, folder / "r.xlsx")
        assert (p.exit_code == 2) == (e.exit_code == 2), (p.output, e.output)


@examples(8)
@given(
    p=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([1e-323, 5, 50, 50.0001, 90, 97, 99, 99.99999, 100]),
    )
)
def test_high_percentile_is_validated(tmp_path_factory, p):
    """Other than 90, 95 or 99 (the simulation's percentiles above the median) refused in one line (at 5: 360 H100s
    instead of 44; 97 was sized at p99 without a word); those, a review."""
    folder = tmp_path_factory.mktemp("hp")
    (folder / "s.toml").write_text(scenario_text(workload={"high_percentile": p}))
    with trial("high_percentile changes the fleet"):
        r = invoke("export", str(folder / "s.toml"), "-o", str(folder / "r.md"))
        clean_outcome(r, folder, {"s.toml"}, folder / "r.md")
        assert (r.exit_code == 0) == (p in (90, 95, 99)), (p, r.output)


@examples(8)
@given(
    figure=st.one_of(
        st.floats(allow_nan=False, allow_infinity=True), st.sampled_from([5e-324, 2.2e-308, 0.0, -3.0, 1e308])
    )
)
def test_validate_never_prints_infinite_errors(tmp_path_factory, figure):
    """Any published TPOT: an error in percent or "n/a" with a reason; never +inf% or nan%."""
    folder = tmp_path_factory.mktemp("v")
    f = folder / "d.csv"
    f.write_text(f"gpu,model,batch,input_len,output_len,tpot_ms\nH100,llama2-7b,1,128,128,{figure!r}\n")
    with trial("validate printing +inf%"):
        r = invoke("validate", "--decode", str(f))
        assert r.exit_code == 0, r.output
        assert "inf%" not in r.stdout and "nan%" not in r.stdout, r.stdout


EXCEL_FUNCTIONS = sorted(n for n in dir(xf) if n.isupper() and n not in ("PLANNER_RELOAD",))


@examples(8)
@given(name=st.sampled_from(EXCEL_FUNCTIONS), size=st.integers(MAX_CELL_CHARS - 50, 120_000), spill=st.booleans())
def test_excel_texts_fit_a_cell(name, size, spill):
    """Huge text in any argument: every text a function returns fits the 32,767 characters of a cell."""
    f = getattr(xf, name)
    huge = "é" * size
    arg = [[huge], ["H100"]] if spill else huge
    n = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in inspect.signature(f).parameters.values())
    required = sum(
        p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in inspect.signature(f).parameters.values()
    )
    filled = [arg, "llama2-70b", 8192.0] + [1.0] * max(0, required - 3)  # a number for any further argument
    args = (
        ["MAX_BATCH", arg, "llama2-70b", 8192.0]
        if name == "PLANNER_WHY"
        else filled[: max(n if n <= 3 else 3, required)]
    )
    with trial("Excel texts over 32,767 characters"):
        out = f(*args)
        rows = out if isinstance(out, list) else [[out]]
        cells = [c for row in rows for c in (row if isinstance(row, list) else [row])]
        assert all(len(c) <= MAX_CELL_CHARS for c in cells if isinstance(c, str))


@examples(4)
@given(
    ref=st.one_of(
        st.sampled_from(["Inputs!$B$4:$B$6", "Inputs!$4:$4", "Inputs!$B:$B", "#REF!", "Nowhere!$A$1", "Inputs!$B$5"]),
        st.from_regex(r"Inputs!\$[A-Z]{1,2}\$[0-9]{1,4}(:\$[A-Z]\$[0-9]{1,3})?", fullmatch=True),
    )
)
def test_whatif_input_names(tmp_path_factory, ref):
    """in_gpu pointed anywhere: export from the what-if workbook answers or refuses in one line."""
    folder = tmp_path_factory.mktemp("wb")
    name = b'<definedName name="in_gpu">Inputs!$B$4</definedName>'

    def edit(part, data):
        return (
            data.replace(name, b'<definedName name="in_gpu">' + ref.encode() + b"</definedName>")
            if part == "xl/workbook.xml"
            else data
        )

    copy_with(WORKBOOK, folder / "w.xlsx", edit)
    with trial("what-if name covering a range"):
        r = invoke("export", str(folder / "w.xlsx"), "-o", str(folder / "r.md"))
        clean_outcome(r, folder, {"w.xlsx"}, folder / "r.md")


DATA_VALIDATION = (
    b'<ext uri="{CCE6A557-97BC-4b89-ADB6-D9C93CAAB3DF}" ' + X14 + b'><x14:dataValidations count="1" ' + XM + b">"
    b'<x14:dataValidation type="list"><x14:formula1><xm:f>Models!$A$2:$A$9</xm:f></x14:formula1>'
    b"<xm:sqref>H2</xm:sqref></x14:dataValidation></x14:dataValidations></ext>"
)
FEATURES = {
    "sparkline": ("ext", SPARKLINE_EXT.removeprefix(b"<extLst>").removesuffix(b"</extLst>")),
    "x14 data validation": ("ext", DATA_VALIDATION),
    "threaded comment": ("part", THREADED),
}


@examples(3)
@given(chosen=st.sets(st.sampled_from(sorted(FEATURES)), min_size=1))
def test_refresh_keeps_or_refuses(tmp_path_factory, chosen):
    """User work refresh cannot rewrite: refused in one line with the file untouched, or kept."""
    folder = tmp_path_factory.mktemp("rf")
    wb = folder / "b.xlsx"
    ext = b"".join(FEATURES[c][1] for c in sorted(chosen) if FEATURES[c][0] == "ext")
    src = copy_with(WORKBOOK, folder / "a.xlsx", with_ext(ext)) if ext else WORKBOOK
    if "threaded comment" in chosen:
        with_parts({"xl/threadedComments/threadedComment1.xml": THREADED})(src, wb)
    else:
        wb.write_bytes(src.read_bytes())
    before, features = wb.read_bytes(), package_features(wb)
    with trial("refresh keeps or refuses"):
        r = invoke("workbook", "refresh", str(wb))
        clean_outcome(r, folder, {"a.xlsx", "b.xlsx"})
        if r.exit_code == 0:
            after = package_features(wb)
            assert all(after[k] >= n for k, n in features.items()), (features, after)
        else:
            assert r.exit_code == 1 and "--force" in r.stderr and wb.read_bytes() == before


# -- item 5: a newcomer's input ----------------------------------------------------------------------------------


@st.composite
def written_counts(draw):
    """(text, tokens): a count written as people write it."""
    n = draw(st.integers(1, 2**24))
    form = draw(st.sampled_from(["plain", "commas", "underscores", "k", "exponent", "float"]))
    if form == "commas":
        return f"{n:,}", n
    if form == "underscores":
        return f"{n:_}", n
    if form == "k":
        k = draw(st.integers(1, 2**14))
        return f"{k}{draw(st.sampled_from('kK'))}", k * 1024
    if form == "exponent":
        m, e = draw(st.integers(1, 9)), draw(st.integers(0, 6))
        return f"{m}e{e}", m * 10**e
    if form == "float":
        return f"{n}.0", n
    return str(n), n


@examples(30)
@given(written=written_counts(), junk=st.text(max_size=12))
def test_token_counts_as_people_write_them(written, junk):
    """Every way of writing a count parses to it; anything else is a ValueError, never another exception."""
    text, tokens = written
    with trial("token counts as people write them"):
        assert parse_token_count(text) == tokens
        try:
            value = parse_token_count(junk)
        except ValueError:
            return
        assert isinstance(value, int) and value >= 0


@examples(20)
@given(
    seconds=st.floats(min_value=1e-4, max_value=3600, allow_nan=False),
    unit=st.sampled_from([None, "s", "ms", "us"]),
    field=st.sampled_from(["tpot_target_s", "ttft_target_s"]),
)
def test_time_targets_catch_unit_slips(seconds, unit, field):
    """A bare number above the field's plausible seconds is refused with the way out; a written unit is taken."""
    value = seconds if unit is None else f"{seconds:g} {unit}"
    sc = json.loads(json.dumps({**SCENARIO, "workload": {**SCENARIO["workload"], field: value}}))
    bare_max = 1.0 if field == "tpot_target_s" else 60.0
    with trial("time targets: ms typed as seconds"):
        try:
            parsed = parse_scenario(sc, "s.toml")
        except ScenarioError as exc:
            assert unit is None and seconds > bare_max, exc
            assert "looks like milliseconds typed as seconds" in str(exc)
            return
        got = getattr(parsed.workload, field)
        assert unit is not None or seconds <= bare_max
        scale = {None: 1, "s": 1, "ms": 1e-3, "us": 1e-6}[unit]
        assert math.isclose(got, float(f"{seconds:g}") * scale if unit else seconds, rel_tol=1e-9)


@examples(5)
@given(rows=st.lists(st.sampled_from(["good", "batch0", "unknown", "nofigure", "inf"]), min_size=1, max_size=12))
def test_calibrate_reads_what_validate_reads(tmp_path_factory, rows):
    """Unusable rows are skipped with a note; the fit runs on the rest (or one line when none is usable)."""
    folder = tmp_path_factory.mktemp("cal")
    cells = {
        "good": "H100,llama2-7b,{b},1000,200,{t}",
        "batch0": "H100,llama2-7b,0,1000,200,12",
        "unknown": "H100,no-such-model,8,1000,200,12",
        "nofigure": "H100,llama2-7b,8,1000,200,",
        "inf": "H100,llama2-7b,8,1000,200,1e400",
    }
    body = [cells[k].format(b=2**i, t=12 + i) for i, k in enumerate(rows)]
    f = folder / "runs.csv"
    f.write_text("gpu,model,batch,input_len,output_len,tpot_ms\n" + "\n".join(body) + "\n")
    out = folder / "c.toml"
    with trial("calibrate reads what validate reads"):
        assert invoke("validate", "--decode", str(f)).exit_code == 0
        r = invoke("calibrate", str(f), "-o", str(out))
        clean_outcome(r, folder, {"runs.csv"}, out)
        bad = sum(k != "good" for k in rows)
        assert (r.exit_code == 0) == (bad < len(rows)), r.output
        if r.exit_code == 0:  # a bad row repeated cell for cell counts once (validate and calibrate alike)
            distinct = len({line for k, line in zip(rows, body, strict=True) if k != "good"})
            assert r.stderr.count("row skipped") == min(distinct, 5)
