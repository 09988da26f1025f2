"""Opt-in tier: the Excel functions through xlwings' own Office.js call path (xlwings Lite / Server).

``custom_functions_meta`` is what Excel registers (names, argument help, optional flags);
``custom_functions_call`` with a request body as Excel sends it is what a cell gets back. That code lives
under ``xlwings/pro`` (PolyForm Noncommercial or a paid licence), so this tier runs only when the user sets
``XLWINGS_LICENSE_KEY`` (e.g. ``XLWINGS_LICENSE_KEY=noncommercial pytest -m officejs`` for non-commercial
use) and is skipped otherwise; CI does not set it.

xlwings reads ``XLWINGS_ON_SERVER`` once, at import, so the calls run in a child Python process with that
variable set; this process never sees it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.officejs,
    pytest.mark.skipif(
        not os.environ.get("XLWINGS_LICENSE_KEY"),
        reason="set XLWINGS_LICENSE_KEY to drive xlwings' Office.js call path (licensed code)",
    ),
]

ROOT = Path(__file__).resolve().parents[1]

#: Runs in the child: registers the module as Excel would, then answers each request body.
DRIVER = r"""
import asyncio, json, os, sys
import xlwings as xw
from xlwings.server import custom_functions_call, custom_functions_meta
import planner.excel.functions as m
from planner.excel import support as excel_support

bodies = json.loads(sys.stdin.read())
out = {"runtime": excel_support.RUNTIME, "meta": custom_functions_meta(m), "results": []}
for body in bodies:
    body = {"caller_address": "Sheet1!B2", "content_language": "en-US", "version": xw.__version__,
            "runtime": "1.4", "client": "Office.js", **body}
    try:
        out["results"].append({"value": asyncio.run(custom_functions_call(body, m))})
    except Exception as exc:
        out["results"].append({"exception": f"{type(exc).__name__}: {exc}"})
print(json.dumps(out))
"""


def run_officejs(bodies: list[dict]) -> dict:
    env = {**os.environ, "XLWINGS_ON_SERVER": "true", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input=json.dumps(bodies),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cell(x):
    return [[x]]


NA = {"type": "Error", "errorType": "NotAvailable"}
NUM = {"type": "Error", "errorType": "Num"}
VALUE = {"type": "Error", "errorType": "Value"}

BODIES = [
    # 0: the mission's example, omitted optional arguments arrive as empty cells
    {
        "func_name": "MAX_BATCH",
        "args": [cell("H100"), cell("llama2-70b"), cell(8192), cell("fp16"), cell(None), cell(None), cell(None)],
    },
    # 1: a column of contexts (Excel sends ranges as 2-D matrices; empty cells as null)
    {"func_name": "TPOT", "args": [cell(" h100 "), cell("Llama2-70B"), [[1024], [8192], [None], ["abc"]], cell(4)]},
    # 2: a row of GPUs against a column of contexts
    {"func_name": "MAX_BATCH", "args": [[["H100", "H10"]], cell("llama2-70b"), [[2048], [8192]]]},
    # 3: does not fit
    {"func_name": "MAX_BATCH", "args": [cell("H100"), cell("llama2-70b"), cell(8192), cell(None), cell(1)]},
    # 4: the reason
    {"func_name": "PLANNER_WHY", "args": [cell("MAX_BATCH"), [cell("H10"), cell("llama2-70b"), cell(8192)]]},
    # 5: catalog list
    {"func_name": "PLANNER_GPUS", "args": []},
    # 6: the same, with fewer arguments than parameters (Excel may leave trailing optional ones out)
    {"func_name": "KV_BYTES", "args": [cell("llama2-70b"), cell(8192)]},
]


@pytest.fixture(scope="module")
def officejs():
    return run_officejs(BODIES)


def scalar(result: dict):
    value = result["value"]
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


class TestOfficeJsPath:
    def test_module_sees_the_officejs_runtime(self, officejs):
        """With XLWINGS_ON_SERVER=true the functions detect Office.js and return bare error codes."""
        assert officejs["runtime"] == "officejs"

    def test_metadata_names_docs_and_optional_flags(self, officejs):
        """Excel registers every function, with the docstring, argument help (units) and optional flags."""
        import planner.excel.functions as xf

        funcs = {f["name"]: f for f in officejs["meta"]["functions"]}
        assert set(funcs) == set(xf.__all__)
        mb = funcs["MAX_BATCH"]
        assert "smallest group" in mb["description"]
        params = {p["name"]: p for p in mb["parameters"]}
        assert list(params) == [
            "gpu",
            "model",
            "context",
            "kv_precision",
            "gpus",
            "weight_precision",
            "memory_utilization",
            "parallelism",
            "engine",
        ]
        assert [bool(p.get("optional")) for p in params.values()] == [False] * 3 + [True] * 6
        assert "tokens" in params["context"]["description"] and "H100" in params["gpu"]["description"]
        assert all(p["dimensionality"] == "matrix" for p in params.values())  # any argument may be a range
        assert "milliseconds" in funcs["TPOT"]["description"]
        tail = [p["name"] for p in funcs["TTFT_P99"]["parameters"]][-3:]  # the draft after the engine, optional
        assert tail == ["engine", "speculative_method", "burstiness"]  # the traffic's shape last
        assert funcs["TTFT_P99"]["parameters"][-1].get("optional")
        assert [p["name"] for p in funcs["REPLICAS"]["parameters"]][-3:] == ["engine", "burstiness", "routing"]
        assert funcs["PLANNER_WHY"]["parameters"][-1].get("repeating") is True

    def test_results_for_request_bodies_as_excel_sends_them(self, officejs):
        """Numbers equal the model's; errors come back as real Excel error values; nothing raises."""
        from planner import api
        from planner.catalog import default_catalog

        r = officejs["results"]
        assert all("value" in x for x in r), r
        assert scalar(r[0]) == api.max_batch("H100", "llama2-70b", 8192, kv_precision="fp16")
        col = r[1]["value"]
        assert col[0][0] == pytest.approx(api.tpot("H100", "llama2-70b", 1024, batch=4) * 1e3)
        assert col[1][0] == pytest.approx(api.tpot("H100", "llama2-70b", 8192, batch=4) * 1e3)
        assert col[2][0] in ("", None) and col[3][0] == VALUE
        table = r[2]["value"]
        assert table[0][0] == api.max_batch("H100", "llama2-70b", 2048) and table[0][1] == NA and table[1][1] == NA
        assert scalar(r[3]) == NUM
        assert "unknown GPU 'H10'" in scalar(r[4])
        assert [row[0] for row in r[5]["value"]] == default_catalog().gpus.names()
        assert scalar(r[6]) == api.kv_bytes("llama2-70b", 8192)
