"""Describe the what-if workbook (``WorkbookSpec``) from the live catalog, engine profile and calibration.

Sheets, one module each: Inputs (opens here), Results, Levers, Load (latency against traffic per lever: numbers planner's
simulation computed, not formulas), Charts, Explain, Assumptions, Ranges, Calc (every step of the model, one column per
scenario), Sweeps (chart data), GPUs, Models, Precisions (catalog tables), AllReduce (vLLM's measured all-reduce table).
"""

from __future__ import annotations

from collections.abc import Sequence

from planner import __version__
from planner.accuracy.calibration import Calibration, resolve_calibration
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import EngineProfile, engine_profile
from planner.errors import InvalidInputError
from planner.workbook.allreduce_sheet import allreduce_sheet
from planner.workbook.assumptions import assumptions_sheet
from planner.workbook.by_engine import merged
from planner.workbook.calc import calc_rows, calc_sheet
from planner.workbook.catalog_sheets import gpus_sheet, gqa_sibling, models_sheet, precisions_sheet
from planner.workbook.charts import charts_sheet
from planner.workbook.explain import explain_sheet
from planner.workbook.inputs import default_inputs, inputs_sheet
from planner.workbook.layout import (
    BUDGET_FIELDS,
    COMPARE_FIELD,
    FORMAT_VERSION,
    INPUT_FIELDS,
    INPUTS_SHEET,
    MARKER_KIND,
    MARKER_NAME,
    VERSION_PROPERTY,
    WORKBOOK_ENGINES,
)
from planner.workbook.levers import levers_sheet
from planner.workbook.load_figures import (
    LOAD_KEY_PROPERTY,
    dp_ep_cells,
    edges,
    floors,
    load_figures,
    rate_factors,
    review_cells,
)
from planner.workbook.load_sheet import load_sheet
from planner.workbook.ranges_sheet import longest_answers, ranges_sheet
from planner.workbook.results import results_sheet
from planner.workbook.spec import Name, Sheet, WorkbookSpec
from planner.workbook.sweeps import sweeps_sheet


def _select(table, names: list[str] | None, kind: str) -> list:
    if not names:
        return list(table)
    out = []
    for n in names:
        e = table.get(n)  # UnknownNameError with suggestions
        if e not in out:
            out.append(e)
    if not out:
        raise InvalidInputError(f"no {kind} selected")
    return out


#: The Explain sheet's first folded column of a text whose words differ between engines (one column per engine: the
#: text shown reads the chosen engine's, ``by_engine.merged``).
EXPLAIN_VARIANT_COL = "D"

#: The custom document property that holds the ``--gpus`` / ``--models`` a workbook was made with (JSON; absent: the
#: whole catalog), so that ``refresh`` keeps the workbook's own selection (trial 10 F8: a 2-GPU, 2-model workbook
#: became a 33 / 88 one without a word).
SELECTION_PROPERTY = "planner_selection"


def selection_text(gpus: list[str] | None, models: list[str] | None) -> str:
    """``SELECTION_PROPERTY``'s value: the names given (None: all)."""
    import json

    return json.dumps({"gpus": gpus, "models": models})


def select_entries(catalog: Catalog, gpus: list[str] | None, models: list[str] | None) -> tuple[list, list]:
    """The GPUs and models a workbook lists (default: all), with the GQA sibling of every selected model."""
    gpu_list = _select(catalog.gpus, gpus, "GPU")
    model_list = _select(catalog.models, models, "model")
    for m in list(model_list):  # the levers compare each model with its GQA sibling: it must be listed
        sib = catalog.model(gqa_sibling(m, list(catalog.models)))
        if sib not in model_list:
            model_list.append(sib)
    return gpu_list, model_list


def offered_engines(engine: EngineProfile) -> list[EngineProfile]:
    """The engines a workbook written for ``engine`` offers on Inputs, ``engine`` first (the default: a blank Engine),
    then each of ``layout.WORKBOOK_ENGINES`` it is not (by name)."""
    return [engine, *(engine_profile(n) for n in WORKBOOK_ENGINES if n != engine.name)]


def build_catalog_sheets(
    catalog: Catalog,
    gpus: list,
    models: list,
    engine: EngineProfile | Sequence[EngineProfile],
    calibration: Calibration,
) -> tuple[list[Sheet], list[Name]]:
    """The catalog sheets (``layout.CATALOG_SHEETS``) for ``engine``, or for the engines a workbook offers (their
    engine-dependent cells follow the one chosen on Inputs: ``by_engine``)."""
    sheets, names = [], []
    for sheet, n in (
        gpus_sheet(catalog, gpus, engine, calibration),
        models_sheet(catalog, models, list(catalog.models)),
        precisions_sheet(list(catalog.precisions), engine),
        allreduce_sheet(),
    ):
        sheets.append(sheet)
        names += n
    return sheets, names


def opening_inputs(
    catalog: Catalog, gpus: list, models: list, engine: str, inputs: dict | None, names: dict[str, str] | None = None
) -> dict:
    """The Inputs a workbook opens on: ``default_inputs`` with ``inputs`` in their place (an unknown key refused), the
    prompt and output checked against the context (``reader.prompt_refusal``) and the latency percentile and high
    lengths as planner plan checks its options (``load_figures.tail_of``; ``names``: how its messages name them,
    the keys by default, ``PLAN_NAMES`` for ``planner workbook``'s options, which are plan's)."""
    from planner.workbook.reader import prompt_refusal
    from planner.workbook.tail import KEY_NAMES, tail_of

    opening = default_inputs(catalog, gpus, models, engine)
    if not inputs:
        return opening
    known = {f.key for f in (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS)}
    if unknown := sorted(set(inputs) - known):
        raise InvalidInputError(f"no Inputs cell {', '.join(unknown)}; the Inputs are {', '.join(sorted(known))}")
    opening.update(inputs)
    names = names or KEY_NAMES
    if opening.get("prompt_tokens") is not None and (
        why := prompt_refusal(opening["prompt_tokens"], opening.get("output_tokens"), opening["context"])
    ):
        raise InvalidInputError(f"{names['prompt_tokens']} {why}")
    tail_of(opening, names, catalog)
    return opening


def build_whatif(
    catalog: Catalog | None = None,
    gpus: list[str] | None = None,
    models: list[str] | None = None,
    engine: str | EngineProfile | None = None,
    calibration=None,
    *,
    load: bool = True,
    inputs: dict | None = None,
) -> WorkbookSpec:
    """The what-if workbook for ``gpus`` x ``models`` of the catalog (default: all), as a pure description.

    ``load``: with the Load sheet, whose serving simulations take a few seconds (about 10 s of CPU for the opening
    inputs); False leaves it out. ``inputs``: Inputs to open on in the place of the defaults (``default_inputs``'
    keys and the ``BUDGET_FIELDS``', e.g. ``{"latency_percentile": 99, "prompt_tokens_high": 6000}``; None: blank),
    an unknown key refused."""
    cat = catalog or default_catalog()
    eng = engine_profile(engine)
    engines = offered_engines(eng)
    cal = resolve_calibration(calibration)
    gpu_list, model_list = select_entries(cat, gpus, models)
    fp8 = cat.precision("fp8").name
    opening = opening_inputs(cat, gpu_list, model_list, eng.name, inputs)
    figures = load_figures(opening, cat, eng, cal) if load else None
    c = calc_rows(
        lever_kv=fp8,
        lever_weights=fp8,
        rate_factors=rate_factors(figures),
        floors=floors(figures),
        edges=edges(figures),
        load=figures is not None,
        dp_ep=dp_ep_cells(figures),
        review=review_cells(figures),
    )
    calc, probes = calc_sheet(c)
    inputs, names = inputs_sheet(opening, c, load=figures is not None)
    longest = longest_answers([g.name for g in gpu_list], [e.name for e in engines])
    results, p2 = results_sheet(c, longest)
    levers, p3 = levers_sheet(c, load=figures is not None)
    sweeps, p4, where = sweeps_sheet(c)
    charts = charts_sheet(where)
    assumptions, n2 = assumptions_sheet(engines, cal)
    built = [ranges_sheet(c, e, [g.name for g in gpu_list], [x.name for x in engines]) for e in engines]
    ranges, n4 = merged([sheet for sheet, _ in built]), built[0][1]
    explain = merged([explain_sheet(cat, e) for e in engines], variant_col=EXPLAIN_VARIANT_COL)
    catalog_sheets, n3 = build_catalog_sheets(cat, gpu_list, model_list, engines, cal)
    marker = f"{MARKER_KIND}/{FORMAT_VERSION}"
    names = names + n2 + n4 + n3 + [Name(MARKER_NAME, f'"{marker}"', hidden=True)]
    return WorkbookSpec(
        sheets=[
            inputs,
            results,
            levers,
            *([load_sheet(figures)] if figures is not None else []),
            charts,
            explain,
            assumptions,
            ranges,
            calc,
            sweeps,
            *catalog_sheets,
        ],
        names=names,
        properties={
            MARKER_NAME: marker,
            VERSION_PROPERTY: __version__,
            "planner_engine": eng.name,
            **({LOAD_KEY_PROPERTY: figures.key} if figures is not None and figures.key else {}),
            **({SELECTION_PROPERTY: selection_text(gpus, models)} if gpus or models else {}),
        },
        active=INPUTS_SHEET,
        probes=probes + p2 + p3 + p4,
    )
