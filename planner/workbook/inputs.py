"""The Inputs sheet: the yellow input cells with dropdowns, the defaults the workbook opens on, and an
"at a glance" block."""

from __future__ import annotations

from planner.catalog import Catalog
from planner.workbook.calc import Calc
from planner.workbook.formats import INT, MS
from planner.workbook.layout import COMPARE_FIELD, INPUT_FIELDS, INPUTS_SHEET, input_row
from planner.workbook.spec import Name, Sheet, Validation


def default_inputs(catalog: Catalog, gpus: list, models: list) -> dict:
    gpu = next((g.name for g in gpus if g.name.startswith("H100 SXM")), gpus[0].name)
    mha = [m for m in models if m.attention_kind == "MHA"]
    model = next((m.name for m in mha if m.name == "LLaMA-65B"), (mha or models)[0].name)
    return {
        "gpu": gpu,
        "model": model,
        "context": 8192,
        "kv_precision": None,
        "weight_precision": None,
        "gpus": None,
        "memory_utilization": None,
        "price_per_gpu_hour": None,
        "batch": 1,
        "compare_model": None,
    }


def inputs_sheet(defaults: dict, c: Calc) -> tuple[Sheet, list[Name]]:
    s = Sheet(INPUTS_SHEET, freeze="A4", tab_color="FFC000")
    s.widths.update(A=30, B=24, C=14, D=80)
    s.set("A1", "LLM inference what-if: inputs", style="title")
    s.note(
        "A2",
        "Change the yellow cells; every other sheet recalculates. Blank optional cells take the default "
        "named in column D.",
    )
    for col, h in zip("ABCD", ("Input", "Value", "Unit", "What it means / default"), strict=True):
        s.set(f"{col}3", h, style="header")
    names = []
    sources = {
        "gpu": "gpu_names",
        "model": "model_names",
        "kv_precision": "kv_precision_names",
        "weight_precision": "prec_names",
        "compare_model": "model_names",
    }
    for f in (*INPUT_FIELDS, COMPARE_FIELD):
        r = input_row(f.key)
        s.set(f"A{r}", f.label + ("" if f.required else " (optional)"), style="label")
        fmt = {"count": INT, "fraction": "0.00", "money": '"$"#,##0.00'}.get(f.kind)
        s.set(f"B{r}", defaults.get(f.key), fmt=fmt, style="input")
        s.set(f"C{r}", f.unit, style="unit")
        s.set(f"D{r}", f.help, style="note")
        names.append(Name(f.name, f"{INPUTS_SHEET}!$B${r}"))
        if f.key in sources:
            s.validations.append(
                Validation(
                    f"B{r}",
                    "list",
                    source=sources[f.key],
                    prompt=f"Pick a name from the list ({f.unit}).",
                    error="Not in the catalog: pick from the list.",
                )
            )
        elif f.kind == "count":
            s.validations.append(
                Validation(
                    f"B{r}",
                    "whole",
                    minimum=1,
                    maximum=2**24,
                    prompt=f"A whole number of {f.unit}.",
                    error=f"A whole number of {f.unit} from 1.",
                )
            )
        elif f.kind == "fraction":
            s.validations.append(
                Validation(
                    f"B{r}",
                    "decimal",
                    minimum=0.01,
                    maximum=1,
                    prompt="A fraction above 0, at most 1.",
                    error="Above 0 and at most 1.",
                )
            )
        elif f.kind == "money":
            s.validations.append(
                Validation(
                    f"B{r}", "decimal", minimum=0, maximum=10**6, prompt="US$ per GPU-hour.", error="0 or more US$."
                )
            )
    r = input_row(COMPARE_FIELD.key) + 2
    s.set(f"A{r}", "At a glance (baseline)", style="subtitle")
    glance = [
        ("GPUs in the group", "n", INT, "GPUs"),
        ("Max batch", "max_batch", INT, "sequences"),
        ("TPOT at the chosen batch", "d_step", MS, "ms per token"),
        ("Throughput at max batch", "m_tput", INT, "tokens/s"),
        ("Cost at max batch", "m_cost", '"$"#,##0.000', "US$ per million output tokens"),
    ]
    for i, (label, key, fmt, unit) in enumerate(glance, 1):
        scale = "*1000" if key == "d_step" else ""
        s.set(f"A{r + i}", label, style="label")
        s.set(f"B{r + i}", f"={c.ref(key, 'C', absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
        s.set(f"C{r + i}", unit, style="unit")
    s.set(f"D{r + 1}", "Full results: Results sheet. The four levers side by side: Levers sheet.", style="note")
    s.set(
        f"D{r + 2}",
        "#N/A: a name not in the catalog (or no price). #VALUE!: text where a number belongs. #NUM!: a number out of "
        "range, or does not fit.",
        style="note",
    )
    s.set(
        f"D{r + 3}",
        f'=IF(ISERROR({c.ref("context", "C", True, True)}),"",IF({c.ref("context", "C", True, True)}>'
        f'INDEX(model_max_context,{c.ref("model_row", "C", True, True)}),"Warning: the context exceeds the trained '
        'maximum of the model; memory and time are extrapolated.",""))',
        style="warn",
    )
    return s, names
