"""Issue 26 items 2 and 3: hostile-input classes tried against the real ``planner`` command, tried / held each.

    python bench/hostile_io.py [--kills 48] [--races 8] [--seed 26]

A case holds when planner does what the issue asks: concurrency, one writer wins and the others refuse in one
line; kills, the target is the old or a whole new file and the next run leaves no temporary; sinks, the
written xlsx opens in openpyxl and pandas with headers of at most 255 characters, the terminal shows no raw
control character, no CSV cell starts a formula with any separator; bounds, a one-line refusal within 20 s.
Runs in a temporary folder; prints one row per class and exits 1 if any case did not hold.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openpyxl
import pandas as pd
import tomli_w

ROOT = Path(__file__).resolve().parents[1]
WORKBOOK = ROOT / "workbooks" / "capacity-what-if.xlsx"
WORKLOAD = dict(
    peak_requests_per_s=40,
    average_requests_per_s=16,
    prompt_tokens_mean=800,
    prompt_tokens_high=3000,
    output_tokens_mean=400,
    output_tokens_high=1200,
    ttft_target_s=1.5,
    tpot_target_s=0.05,
    growth_over_horizon=0.5,
)
#: Names from the issue: ESC/OSC, BEL, NUL, vertical tab, U+FFFE; a ';' formula; a '=' formula; a long one.
NAMES = (
    "H100 \x1b]0;pwned\x07 \x1b[31mred",
    "nul\x00 vt\x0b fffe\ufffe",
    "x;=1+1;",
    "=HYPERLINK(1)|@SUM(1)",
    "long " * 80,
)
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def scenario(folder: Path, names, title="T") -> Path:
    options = [{"name": n, "gpu": "H100", "model": "Llama-3.1-70B", "pricing": "cloud"} for n in names]
    path = folder / f"s{abs(hash((tuple(names), title)))}.toml"
    path.write_text(tomli_w.dumps({"title": title, "workload": WORKLOAD, "option": options}), encoding="utf-8")
    return path


def start(*args: str, env=None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "planner", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )


def finish(p: subprocess.Popen, timeout_s: float = 300) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout_s)
    return p.returncode, out, err


def one_error_line(err: str) -> bool:
    return "Traceback" not in err and len([x for x in err.splitlines() if x.startswith("planner: error:")]) == 1


def parts(folder: Path) -> int:
    return sum(1 for p in folder.iterdir() if p.name.endswith(".part"))


def races(tmp: Path, n: int) -> tuple[int, int]:
    """n trials of 6 concurrent refresh -o / export -o of one new file: one success, five one-line refusals."""
    held = 0
    s = scenario(tmp, ["H100, rented"])
    for trial in range(n):
        out = tmp / f"race-{trial}.xlsx"
        args = (
            ["workbook", "refresh", str(WORKBOOK), "-o", str(out)]
            if trial % 2 == 0
            else ["export", str(s), "-o", str(out)]
        )
        results = [finish(p) for p in [start(*args) for _ in range(6)]]
        codes = sorted(r[0] for r in results)
        refusals_ok = all(one_error_line(err) and "already exists" in err for code, _, err in results if code)
        held += codes == [0, 1, 1, 1, 1, 1] and refusals_ok and parts(tmp) == 0
    return n, held


def kills(tmp: Path, n: int, rng: random.Random) -> tuple[tuple[int, int], tuple[int, int], int]:
    """n SIGKILLs of export --force at random points: (whole-file tried/held), (cleanup tried/held), parts left."""
    folder = tmp / "kills"
    folder.mkdir()
    s = scenario(tmp, ["H100, rented"])
    out = folder / "review.xlsx"
    args = ("export", str(s), "-o", str(out), "--force")
    began = time.monotonic()
    finish(start(*args))
    length_s = time.monotonic() - began
    whole = left_after_kill = 0
    cleaned_tried = cleaned_held = 0
    for k in range(n):
        p = start(*args)
        time.sleep(rng.uniform(0.2, 1.1) * length_s)
        os.killpg(p.pid, signal.SIGKILL)
        finish(p, 60)
        try:
            openpyxl.load_workbook(out)
            whole += 1
        except Exception:  # noqa: BLE001 - any failure to open is a corrupt file
            pass
        left_after_kill += parts(folder)
        if k % 4 == 3:  # a complete run cleans up what the killed ones left
            cleaned_tried += 1
            code, _, _ = finish(start(*args))
            cleaned_held += code == 0 and parts(folder) == 0
    return (n, whole), (cleaned_tried, cleaned_held), left_after_kill


def pdf_kills(tmp: Path, n: int) -> tuple[int, int]:
    """n PDF exports killed while LibreOffice converts; the next export leaves no planner folder in TMPDIR."""
    from planner.io.libreoffice import find_soffice

    if find_soffice() is None:
        return 0, 0
    s = scenario(tmp, ["H100, rented"])
    held = 0
    for k in range(n):
        temp = tmp / f"pdf-tmp-{k}"
        temp.mkdir()
        env = {**os.environ, "TMPDIR": str(temp)}
        p = start("export", str(s), "-o", str(tmp / f"a{k}.pdf"), env=env)
        deadline = time.monotonic() + 120
        while not any(temp.glob("planner-lo-*")) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGKILL)
        finish(p, 60)
        code, _, _ = finish(start("export", str(s), "-o", str(tmp / f"b{k}.pdf"), env=env))
        held += code == 0 and not any(x.name.startswith("planner-") for x in temp.iterdir())
    return n, held


def sinks(tmp: Path) -> dict[str, tuple[int, int]]:
    """Each hostile name alone and all together, through xlsx, terminal and CSV."""
    cases = [[n] for n in NAMES] + [list(NAMES)]
    xlsx = term = csvs = 0
    for k, names in enumerate(cases):
        s = scenario(tmp, names, title="Budget & plan " * 25)
        x, c = tmp / f"sink{k}.xlsx", tmp / f"sink{k}.csv"
        code, out, err = finish(start("export", str(s), "-o", str(x)))
        ok = code == 0
        if ok:
            try:
                pd.read_excel(x, sheet_name=None)
                book = openpyxl.load_workbook(x)
                ok = all(len(str(ws.oddHeader)) <= 255 and len(str(ws.oddFooter)) <= 255 for ws in book)
            except Exception:  # noqa: BLE001
                ok = False
        xlsx += ok
        term += code == 0 and not RAW_CONTROL.search(out + err)
        code, _, _ = finish(start("export", str(s), "-o", str(c)))
        text = c.read_text(encoding="utf-8") if code == 0 else ""
        safe = code == 0
        for sep in (",", ";", "\t", "|"):
            cells = [cell.strip(" ") for row in csv.reader(io.StringIO(text), delimiter=sep) for cell in row]
            safe &= not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
        csvs += safe
    n = len(cases)
    return {
        "xlsx (XML-illegal, headers)": (n, xlsx),
        "terminal (control chars)": (n, term),
        "csv (any separator)": (n, csvs),
    }


def bounds(tmp: Path) -> tuple[int, int]:
    """Each bound the issue names: a one-line refusal (or answer) within 20 s."""
    option = '[[option]]\nname = "H100, rented"\ngpu = "H100"\nmodel = "Llama-3.1-70B"\n'
    base = tomli_w.dumps({"title": "T", "workload": WORKLOAD}) + option
    files = {
        "key": base + "a" + ".a" * 100_000 + " = 1\n",
        "options": base + option * 600,
        "size": base + "# pad\n" * 400_000,
    }
    cases = []
    for name, text in files.items():
        f = tmp / f"bound-{name}.toml"
        f.write_text(text, encoding="utf-8")
        cases.append(("export", str(f), "-o", str(tmp / f"bound-{name}.md")))
    rows = tmp / "rows.csv"
    rows.write_text("gpu,model,batch,input_len,output_len,tpot_ms\n" + "H100,llama2-7b,8,1000,200,12\n" * 100_000)
    cases.append(("calibrate", str(rows), "-o", str(tmp / "cal.toml")))
    serve = tmp / "serve.csv"
    serve.write_text(
        "record_id,gpu,model,batch,input_len,output_len,tpot_ms,kind,num_prompts,request_rate\n"
        "r1,H100,llama2-7b,,1000,200,12,serving_rate,1000000000,10\n"
    )
    cases.append(("validate", "--decode", str(serve)))
    from planner.catalog import default_catalog

    entry = default_catalog().model("Mixtral-8x7B").model_dump(mode="json", exclude_none=True)
    entry.update(name="Huge", aliases=[], num_layers=10**12)
    cat = tmp / "huge"
    cat.mkdir()
    (cat / "m.toml").write_text(tomli_w.dumps({"model": [entry]}), encoding="utf-8")
    cases.append(("plan", "--gpu", "H100", "--model", "Huge", "--context", "8192", "--catalog", str(cat)))
    cases.append(("catalog", "show", "Huge", "--catalog", str(cat)))
    held = 0
    for args in cases:
        began = time.monotonic()
        p = start(*args)
        try:
            code, out, err = finish(p, 20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            finish(p, 20)
            continue
        answered = code == 0 or one_error_line(err)
        held += answered and time.monotonic() - began < 20
    return len(cases), held


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=48)
    ap.add_argument("--races", type=int, default=8)
    ap.add_argument("--pdf-kills", type=int, default=2)
    ap.add_argument("--seed", type=int, default=26)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    table: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        table["races: 6 writers of one new file"] = races(tmp, a.races)
        whole, cleaned, left = kills(tmp, a.kills, rng)
        table["SIGKILL: target old or whole"] = whole
        table["SIGKILL: next run leaves no .part"] = cleaned
        table["SIGKILL of a PDF export: no temp folder after"] = pdf_kills(tmp, a.pdf_kills)
        table.update(sinks(tmp))
        table["bounds: answered in one line within 20 s"] = bounds(tmp)
    width = max(map(len, table))
    print(f"{'class':<{width}}  tried  held")
    for name, (tried, held) in table.items():
        print(f"{name:<{width}}  {tried:>5}  {held:>4}")
    print(f"(.part files found right after a kill, before the next run removed them: {left})")
    return 0 if all(t == h for t, h in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
