"""The Levers sheet: the baseline and five lever scenarios side by side, each at its own max batch."""

from __future__ import annotations

from planner.workbook.calc import SCENARIOS, Calc, scenario_col
from planner.workbook.formats import GB, INT, MS
from planner.workbook.layout import LEVERS_SHEET
from planner.workbook.spec import Highlight, Probe, Sheet


def levers_sheet(c: Calc) -> tuple[Sheet, list[Probe]]:
    s = Sheet(LEVERS_SHEET, freeze="C4", tab_color="4472C4")
    s.widths.update(A=40, B=12)
    s.set("A1", "Levers: each changes one thing against the baseline", style="title")
    s.note(
        "A2",
        "Speed and cost at each scenario's max batch, on the baseline's GPU count (GPUs x2: twice it). "
        "The green cell buys the most batch per dollar.",
        "H",
    )
    s.set("A3", "", style="header")
    s.set("B3", "Unit", style="header")
    for key, header, _ in SCENARIOS:
        col = scenario_col(key)
        s.widths[col] = 20
        s.set(f"{col}3", header, style="header")
    probes: list[Probe] = []
    r = 4
    s.set(f"A{r}", "What changes", style="note")
    for key, _, what in SCENARIOS:
        s.set(f"{scenario_col(key)}{r}", what, style="note")
    s.set(f"B{r}", "", style="note")
    r += 1
    shown = [
        ("GPU", "gpu", None, ""),
        ("Model", "model", None, ""),
        ("Context", "context", INT, "tokens"),
        ("KV-cache precision", "kv", None, ""),
        ("Weight precision", "wp", None, ""),
        ("GPUs in the group", "n", INT, "GPUs"),
    ]
    results = [
        ("Max batch", "max_batch", INT, "sequences", ""),
        ("KV budget per GPU", "budget", GB, "GB", ""),
        ("KV per sequence", "kv_seq", GB, "GB", ""),
        ("TPOT at max batch", "m_step", MS, "ms", "*1000"),
        ("Throughput at max batch", "m_tput", INT, "tokens/s", ""),
        ("Cost at max batch", "m_cost", '"$"#,##0.000', "$/M tokens", ""),
        ("TTFT (whole context as prompt)", "p_ttft", MS, "ms", "*1000"),
    ]
    for label, key, fmt, unit in shown:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "" if (fmt or "").endswith('"') else unit, style="unit")
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={c.ref(key, col, absolute=True, sheet=True)}", fmt=fmt, style="calc")
        r += 1
    r += 1
    s.set(f"A{r}", "Results", style="subtitle")
    r += 1
    result_row = {}
    for label, key, fmt, unit, scale in results:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "" if fmt.endswith('"') else unit, style="unit")
        q = next(x for x in c.rows if x.key == key).quantity
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={c.ref(key, col, absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
            if q:
                probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, q, 1000.0 if scale else 1.0))
        result_row[key] = r
        r += 1
    per_dollar = r
    s.set(f"A{r}", "Max batch per dollar of GPU time", style="label")
    s.set(f"B{r}", "seq. per $/h", style="unit")
    first, last = scenario_col(SCENARIOS[0][0]), scenario_col(SCENARIOS[-1][0])
    for sk, _, _ in SCENARIOS:
        col = scenario_col(sk)
        s.set(
            f"{col}{r}",
            f"={c.ref('max_batch', col, True, True)}/({c.ref('n', col, True, True)}*{c.ref('price', col, True, True)})",
            fmt="#,##0.00",
            style="result",
        )
        probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, "batch_per_dollar"))
    r += 1
    rank = r
    s.set(f"A{r}", "(ranking helper: errors count as -1)", style="note")
    for sk, _, _ in SCENARIOS:
        col = scenario_col(sk)
        s.set(f"{col}{r}", f"=IFERROR({col}{per_dollar},-1)", fmt="#,##0.00", style="note")
    s.highlights.append(
        Highlight(
            f"{first}{per_dollar}:{last}{per_dollar}",
            f"AND({first}{rank}>0,{first}{rank}=MAX(${first}${rank}:${last}${rank}))",
        )
    )
    r += 1
    s.set(f"A{r}", "Most batch per dollar", style="label")
    s.set(
        f"{first}{r}",
        f"=IF(MAX({first}{rank}:{last}{rank})>0,INDEX({first}3:{last}3,"
        f'MATCH(MAX({first}{rank}:{last}{rank}),{first}{rank}:{last}{rank},0)),"none fits")',
        style="result",
    )
    r += 2
    s.set(f"A{r}", "Change from baseline", style="subtitle")
    r += 1
    for label, key in (
        ("Max batch", "max_batch"),
        ("Throughput at max batch", "m_tput"),
        ("Cost at max batch", "m_cost"),
        ("Max batch per dollar", None),
    ):
        src = result_row[key] if key else per_dollar
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "vs baseline", style="unit")
        for sk, _, _ in SCENARIOS:
            col = scenario_col(sk)
            s.set(f"{col}{r}", f"={col}{src}/${first}${src}-1", fmt="+0%;-0%;0%", style="calc")
        r += 1
    return s, probes
