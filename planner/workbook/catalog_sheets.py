"""The catalog sheets (GPUs, Models, Precisions): described from the live catalog,
engine profile and calibration. ``planner workbook refresh`` rewrites the catalog sheets with these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from openpyxl.utils import get_column_letter

from planner.accuracy.calibration import CALIBRATED_FIELDS, Calibration, calibrated_range, residual_quantiles
from planner.accuracy.ranges import query_values
from planner.api import PEAK_KEYS, default_kv_precision, gpu_numbers, scale_up_gpus
from planner.catalog import Catalog, Gpu, Model, Precision
from planner.catalog.resolve import (
    fabric_numbers,
    gpu_kernel_factors,
    kv_formats,
    weights_enlarge_experts,
    weights_words,
)
from planner.engines.allreduce_table import read_allreduce_table
from planner.engines.architecture import CATALOG_FACT_FIELDS, model_facts
from planner.engines.kernel_curves import KERNEL_FIELDS, curves_miss
from planner.engines.profiles import EngineProfile
from planner.io.safetext import xlsx_text
from planner.units import USD_PER_GPU_HOUR_FORMAT
from planner.workbook.by_engine import choose, merged
from planner.workbook.formats import BILLIONS, BOOL, GB_NUM, GBS_NUM, INT, TFLOPS_NUM, shown_unit
from planner.workbook.layout import GPUS_SHEET, MODELS_SHEET, PRECISIONS_SHEET
from planner.workbook.spec import Name, Sheet, Table


def _blank(x: Any) -> Any:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return None
    return x


def text(get: Callable[[Any, int], Any]) -> Callable[[Any, int], Any]:
    """A column of catalog or user text: never a formula in the cell (planner.io.safetext.xlsx_text)."""
    return lambda entry, r: None if (v := get(entry, r)) is None else xlsx_text(v)


@dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[Any, int], Any]  # (entry, row) -> value or formula
    fmt: str | None = None
    width: float = 12
    name: str | None = None  # defined name of the column's data range
    formula: bool = False  # the values are spreadsheet formulas; otherwise catalog data, text kept as text
    detail: bool | None = None  # folded away (outline, "+" to show): default for formulas and long text
    max_width: float | None = None  # the widest a shown text column grows to (None: ``MAX_TEXT_WIDTH``); longer wraps

    @property
    def folded(self) -> bool:
        return self.detail if self.detail is not None else (self.formula or self.width >= 30)


def large_gpu_formula(memory: str, device_name: str) -> str:
    """``EngineProfile.large_gpu`` as a formula over a memory cell and a device-name cell: memory at least
    eng_large_gpu_min_memory_bytes, no eng_large_gpu_excluded_names item within the name and, where
    eng_large_gpu_required_names has one, one of those (SEARCH: case-insensitive, as vLLM's ``.lower()``; a blank
    item of a list counts for nothing)."""

    def holds(names: str) -> str:
        return f'SUMPRODUCT(ISNUMBER(SEARCH({names},{device_name}))*({names}<>""))'

    required = "eng_large_gpu_required_names"
    return (
        f"=AND({memory}>=eng_large_gpu_min_memory_bytes,{holds('eng_large_gpu_excluded_names')}=0,"
        f'OR(SUMPRODUCT(--({required}<>""))=0,{holds(required)}>0))'
    )


def _on_demand(g: Gpu, field: str, kind: str = "on-demand") -> Any:
    """A field of the GPU's on-demand price (the one the model defaults to), or of its ``kind`` quote; None if none."""
    price = g.price(kind)
    return getattr(price, field) if price else None


def _quote_label(g: Gpu, kind: str) -> str | None:
    """'provider, date' of the GPU's ``kind`` quote (reserved, spot), or None when it has none."""
    price = g.price(kind)
    return f"{price.provider}, {price.date}" if price else None


def _largest_instance(g: Gpu) -> int | None:
    """The largest instance (GPUs) among the GPU's on-demand quotes (any rental quote's where it has none), the
    "per 8-GPU instance?" of planner export's check; None without a rental quote."""
    quotes = [p for p in g.prices if p.kind != "purchase"]
    same = [p for p in quotes if p.kind == "on-demand"] or quotes
    return max(p.instance_gpus for p in same) if same else None


#: The widest a shown (not folded) catalog text column grows to fit its longest text, in characters; a longer text
#: (a reserved quote's 75-character provider, two quotes and their dates) wraps in it (trial 13 F10: "Hyperstack 1."
#: printed, the rest of the median's second quote cut at the next column).
MAX_TEXT_WIDTH = 76.0


def _table_sheet(
    title: str, table_name: str, entries: list, columns: list[Column], note: str
) -> tuple[Sheet, list[Name]]:
    """A sheet holding one Excel table (header in row 1) and the defined names of its named columns.

    The table prints one page wide in landscape: long sources and notes and the engine formula columns are
    folded (an outline group, "+" above the columns shows them), which keeps the printed text readable."""
    sheet = Sheet(title, freeze="B2", catalog=True, tab_color="7F7F7F")
    first, last = 2, 1 + max(len(entries), 1)
    names = []
    for j, col in enumerate(columns, 1):
        letter = get_column_letter(j)
        sheet.set(f"{letter}1", col.header, style="header")
        sheet.widths[letter] = col.width
        for i, entry in enumerate(entries):
            r = first + i
            value = _blank(col.value(entry, r))
            text = isinstance(value, str) and not col.formula  # a name or source starting with '=' stays text
            sheet.set(f"{letter}{r}", value, fmt=col.fmt, text=text)
            if text and not col.folded:  # a shown name is not cut by the next column ("RTX PRO 6000 Blackwell Se")
                widest = col.max_width or MAX_TEXT_WIDTH
                sheet.widths[letter] = max(sheet.widths[letter], min(len(value) + 1.0, widest))
        if not col.folded:  # a shown text longer than the column wraps, its row as tall as it takes (writer)
            for r in range(first, first + len(entries)):
                cell = sheet.cells[f"{letter}{r}"]
                if cell.text and len(cell.value) + 1.0 > sheet.widths[letter]:
                    cell.style = "text"
        if col.folded:  # sources, notes and engine formulas: one click away, so the page prints readably
            sheet.folded.append(letter)
        if col.name:
            names.append(Name(col.name, f"{title}!${letter}${first}:${letter}${last}"))
    end = get_column_letter(len(columns))
    sheet.tables.append(Table(table_name, f"A1:{end}{last}"))
    # from column B: printed over several pages wide, column A repeats on each and a note from A printed its first
    # words cut at A's edge on every page after the first (trial 13 F7)
    sheet.note(f"B{last + 2}", note, "H")
    return sheet, names


def name_aliases(entries: list) -> dict[str, str]:
    """Each alias the catalog lists for one of ``entries``, and the entry's name (``H200``: H200 SXM 141GB), in catalog
    order; an alias that is also a listed name (any case, as MATCH compares) is left out: the name finds its own row."""
    names = {e.name.lower() for e in entries}
    out: dict[str, str] = {}
    for e in entries:
        for a in e.aliases:
            if a.lower() not in names and a.lower() not in {k.lower() for k in out}:
                out[a] = e.name
    return out


def alias_table(sheet: Sheet, column: int, prefix: str, what: str, aliases: dict[str, str]) -> list[Name]:
    """The alias table the Calc sheet reads a typed GPU or model name through (``calc.name_of``): aliases in column
    ``column`` (after a blank one beside the catalog table) and the names they stand for beside, from row 2, named
    ``{prefix}_aliases`` and ``{prefix}_alias_names``. Folded with the blank column ("+" shows them): a reference the
    formulas read, not a column to print (the table's pages stay as they were)."""
    gap, alias, name = (get_column_letter(column + i) for i in (-1, 0, 1))
    sheet.set(f"{alias}1", "Alias (typed on Inputs; any case)", style="header")
    sheet.set(f"{name}1", f"{what} it names", style="header")
    sheet.widths[alias] = max([14.0] + [min(len(a) + 1.0, MAX_TEXT_WIDTH) for a in aliases])
    sheet.widths[name] = max([14.0] + [min(len(n) + 1.0, MAX_TEXT_WIDTH) for n in aliases.values()])
    for i, (a, n) in enumerate(aliases.items()):
        sheet.set(f"{alias}{2 + i}", xlsx_text(a), text=True)
        sheet.set(f"{name}{2 + i}", xlsx_text(n), text=True)
    sheet.folded.extend((gap, alias, name))
    last = 1 + max(len(aliases), 1)
    title = sheet.name
    return [
        Name(f"{prefix}_aliases", f"{title}!${alias}$2:${alias}${last}"),
        Name(f"{prefix}_alias_names", f"{title}!${name}$2:${name}${last}"),
    ]


def _weight_formats_cell(g: Gpu, catalog: Catalog) -> str:
    """ ",fp16,bf16,...," of the weight formats an engine runs on ``g`` (``Gpu.weight_formats_among``: NVFP4 on no
    AMD or Intel GPU), the text the calculation's SEARCH reads; "" where it runs any."""
    formats = g.weight_formats_among(p.name for p in catalog.precisions)
    return "" if formats is None else "," + ",".join(formats) + ","


def _engines(engine: EngineProfile | Sequence[EngineProfile]) -> list[EngineProfile]:
    """One engine, or the engines a workbook offers (the Assumptions sheet's engine columns, in order)."""
    return [engine] if isinstance(engine, EngineProfile) else list(engine)


def gpus_sheet(
    catalog: Catalog, gpus: list[Gpu], engine: EngineProfile | Sequence[EngineProfile], calibration: Calibration
) -> tuple[Sheet, list[Name]]:
    """The GPUs table for ``engine``, or for the engines a workbook offers: its engine-dependent numbers (kernel
    factors TensorRT-LLM reads at its own rates, the MXFP4 refusal, ...) follow the engine chosen on Inputs
    (``by_engine.merged``)."""
    built = [_gpus_sheet(catalog, gpus, e, calibration) for e in _engines(engine)]
    return merged([sheet for sheet, _ in built]), built[0][1]


def _gpus_sheet(
    catalog: Catalog, gpus: list[Gpu], engine: EngineProfile, calibration: Calibration
) -> tuple[Sheet, list[Name]]:
    by_gpu: dict[str, dict[str, float]] = {}

    def numbers(g: Gpu) -> dict[str, float]:
        """``gpu_numbers`` of ``g`` under the sheet's engine and calibration: computed once per GPU, read by every
        column that shows one of them (it was called once per column and GPU)."""
        if g.name not in by_gpu:
            by_gpu[g.name] = gpu_numbers(g, engine, calibration)
        return by_gpu[g.name]

    def peak(k):
        return lambda g, r: g.peak_flop_per_s.get(k)

    def calibrated(field, catalog_key: str | None = None):
        def value(g: Gpu, r: int):
            entry = calibration.for_gpu(g.all_names(), engine.name)
            if entry is not None and field in entry.factors():
                return float(entry.factors()[field])
            if field == "allreduce_latency_s":  # blank on the Assumptions sheet: measured, else the catalog's
                seconds = numbers(g)[catalog_key or field]
                seconds = np.format_float_positional(seconds, trim="-")
                return f"=IF(ISNUMBER(eng_{field}),eng_{field},{seconds})"
            if field == "interconnect_efficiency" and engine.kernel_curves:
                # the share the GPU's measured all-reduce achieves (planner.engines.kernel_curves.allreduce_factors),
                # as gpu_numbers applies it: a number where measured or borrowed, else the engine's cell
                share = gpu_kernel_factors(g)["measured_interconnect_efficiency"]
                if not math.isnan(share):
                    return share
            return f"=eng_{field}"

        return value

    def curves_of(g: Gpu) -> tuple[float, str]:
        """planner.engines.kernel_curves.curves_miss, as planner.accuracy.calibration.residual_range applies it."""
        return curves_miss(g, catalog) if engine.kernel_curves else (1.0, "")

    def allreduce_block(g: Gpu) -> int:
        """1 + the row of the measured all-reduce table the model reads for ``g`` (0: none, the form)."""
        row = numbers(g)["allreduce_table_row"]
        return 0 if math.isnan(row) else int(row) + 1

    def allreduce_source(g: Gpu) -> str | None:
        block = allreduce_block(g)
        return read_allreduce_table().gpus[block - 1] if block else None

    def domain(g: Gpu, r: int):
        return min(fabric_numbers(g)["interconnect_domain_gpus"], 4096.0)  # unlimited: more than any group

    def interconnect_default(g: Gpu, r: int):
        # what the model assumes where the catalog states no interconnect (api.gpu_numbers)
        return gpu_numbers(g.model_copy(update={"interconnect_bytes_per_s": None}), engine, calibration)[
            "interconnect_bytes_per_s"
        ]

    cols = [
        # at most 24 characters: printed, column A repeats on each of the pages across; the two RTX PRO 6000 names
        # (37 and 42 characters) wrap to two lines rather than widen it on every page (seven pages across at 43, six
        # at 24: planner.workbook.printing.legible_print)
        Column("GPU", text(lambda g, r: g.name), width=18, name="gpu_names", max_width=24),
        Column("Vendor", lambda g, r: g.vendor, width=8, name="gpu_vendor"),
        Column("Architecture", text(lambda g, r: g.architecture), width=12),
        Column(f"Memory, physical ({shown_unit('GB')})", lambda g, r: g.memory_bytes, GB_NUM, 10, "gpu_memory"),
        Column(
            f"Memory the engine sees, measured ({shown_unit('GB')})",
            lambda g, r: g.engine_visible_memory_bytes,
            GB_NUM,
            12,
            "gpu_visible",
        ),
        Column(
            f"HBM bandwidth ({shown_unit('GB/s')})",
            lambda g, r: g.hbm_bandwidth_bytes_per_s,
            GBS_NUM,
            10,
            "gpu_bandwidth",
        ),
    ]
    cols += [Column(f"Peak {k} ({shown_unit('TFLOP/s')})", peak(k), TFLOPS_NUM, 10) for k in PEAK_KEYS]
    ic_cat = get_column_letter(len(cols) + 1)
    cols += [
        Column(f"Interconnect, catalog ({shown_unit('GB/s')})", lambda g, r: g.interconnect_bytes_per_s, GBS_NUM, 11),
        Column(
            f"Interconnect, model ({shown_unit('GB/s')})",
            lambda g, r: f"=IF({ic_cat}{r}>0,{ic_cat}{r},{interconnect_default(g, r)})",
            GBS_NUM,
            11,
            "gpu_interconnect",
            formula=True,
        ),
        Column("Fabric domain (GPUs)", domain, INT, 10, "gpu_domain"),
        Column(  # planner plan's node warning reads the same (planner.deploy.spans_nodes_warning)
            "Scale-up domain, node warning (GPUs: catalog interconnect_domain_gpus, at least one 8-GPU node)",
            lambda g, r: scale_up_gpus(g),
            INT,
            16,
            "gpu_scale_up",
        ),
        Column(
            f"Mesh link, one of the fully connected fabric's ({shown_unit('GB/s')}; 0: switched, any group gets it all)",
            lambda g, r: g.mesh_link_bytes_per_s or 0.0,
            GBS_NUM,
            16,
            "gpu_mesh_link",
        ),
        Column(
            f"PCIe, model ({shown_unit('GB/s')})",
            lambda g, r: fabric_numbers(g)["pcie_bytes_per_s"],
            GBS_NUM,
            12,
            "gpu_pcie_bw",
        ),
        Column(
            "PCIe all-reduce latency (model)",
            calibrated("allreduce_latency_s", "pcie_latency_s"),
            "0.000###",
            11,
            "gpu_pcie_latency",
            formula=True,
        ),
        Column(
            "All-reduce table block (AllReduce sheet; 0: the form)",
            lambda g, r: allreduce_block(g),
            INT,
            10,
            "gpu_ar_block",
        ),
        Column("All-reduce table of", text(lambda g, r: allreduce_source(g)), width=14),
        Column(
            "All-reduce message scale (that fabric / this one)",
            lambda g, r: numbers(g)["allreduce_table_bytes_scale"],
            "0.000###",
            10,
            "gpu_ar_scale",
        ),
        Column(
            "All-reduce table's GPU: mesh link / its fabric (0: switched)",
            lambda g, r: numbers(g)["allreduce_table_link_share"],
            "0.000###",
            12,
            "gpu_ar_link_share",
        ),
        Column(
            "Kernel curves of another vendor: range miss (x; 1: its own vendor's)",
            lambda g, r: curves_of(g)[0],
            "0.00",
            14,
            "gpu_curve_miss",
        ),
        Column("Kernel curves of", text(lambda g, r: curves_of(g)[1]), width=14, name="gpu_curve_source"),
        Column("ECC reserved fraction", lambda g, r: g.ecc_reserved_fraction, "0.0000", 9, "gpu_ecc"),
        Column(
            "On-demand price ($/GPU-hour)",
            lambda g, r: _on_demand(g, "usd_per_gpu_hour"),
            USD_PER_GPU_HOUR_FORMAT,  # $3.595, the median of two quotes, not $3.60 (trial 19 F4)
            12,
            "gpu_price",
        ),
        Column("Price provider", text(lambda g, r: _on_demand(g, "provider")), width=12, name="gpu_price_provider"),
        Column("Price date", lambda g, r: _on_demand(g, "date"), width=10),
        Column("Price source", text(lambda g, r: _on_demand(g, "source")), width=40),
        Column(
            "Reserved price ($/GPU-hour)",
            lambda g, r: _on_demand(g, "usd_per_gpu_hour", "reserved"),
            USD_PER_GPU_HOUR_FORMAT,
            12,
        ),
        Column("Reserved quote (provider, date)", text(lambda g, r: _quote_label(g, "reserved")), width=18),
        Column(
            "Spot price ($/GPU-hour)",
            lambda g, r: _on_demand(g, "usd_per_gpu_hour", "spot"),
            USD_PER_GPU_HOUR_FORMAT,
            12,
        ),
        Column("Spot quote (provider, date)", text(lambda g, r: _quote_label(g, "spot")), width=18),
        # the highest rental quote and its instance size: the Inputs' check of a typed price (an 8-GPU instance's
        # rate typed per GPU: ``planner.units.RENT_IMPLAUSIBLE_FACTOR``), planner export's rule
        # (``planner.export.evaluate._implausible_rate``)
        Column(
            "Highest rental quote ($/GPU-hour)",
            lambda g, r: q.usd_per_gpu_hour if (q := g.highest_rental_quote()) else None,
            USD_PER_GPU_HOUR_FORMAT,
            12,
            "gpu_top_quote",
        ),
        Column(
            "Highest quote (provider, kind, date)",
            text(lambda g, r: f"{q.provider}, {q.kind}, {q.date}" if (q := g.highest_rental_quote()) else None),
            width=18,
        ),
        Column(
            "Largest on-demand instance (GPUs)",
            lambda g, r: _largest_instance(g),
            INT,
            10,
            "gpu_quote_instance",
        ),
        Column("TDP (W)", lambda g, r: g.tdp_w, INT, 8),
        Column(
            "Device name (the driver's, as engines read it)",
            text(lambda g, r: g.engine_device_name),
            width=18,
            name="gpu_device_name",
            detail=True,
        ),
    ]
    device = get_column_letter(len(cols))
    cols += [
        Column(
            "Large GPU class (engine)", lambda g, r: large_gpu_formula(f"D{r}", f"{device}{r}"), width=10, formula=True
        ),
    ]
    large = get_column_letter(len(cols))
    # the largest class first (``EngineProfile.xlarge_gpu``: vLLM 0.28.0+, memory alone; a blank minimum: none)
    xlarge = "AND(ISNUMBER(eng_xlarge_gpu_min_memory_bytes),D{r}>=eng_xlarge_gpu_min_memory_bytes)"
    cols += [
        Column(
            "Profiling tokens (engine)",
            lambda g, r: (
                f"=IF(N(eng_max_num_batched_tokens)>0,eng_max_num_batched_tokens,"
                f"IF({xlarge.format(r=r)},eng_max_num_batched_tokens_xlarge_gpu,"
                f"IF({large}{r},eng_max_num_batched_tokens_large_gpu,eng_max_num_batched_tokens_small_gpu)))"
            ),
            INT,
            10,
            "gpu_tokens",
            formula=True,
        ),
        Column(
            "Sampler sequences (engine)",
            lambda g, r: (
                f"=IF(N(eng_max_num_seqs)>0,eng_max_num_seqs,IF({xlarge.format(r=r)},eng_max_num_seqs_xlarge_gpu,"
                f"IF({large}{r},eng_max_num_seqs_large_gpu,eng_max_num_seqs_small_gpu)))"
            ),
            INT,
            10,
            "gpu_seqs",
            formula=True,
        ),
    ]
    cols += [
        Column(f"{f} (engine or calibrated)", calibrated(f), "0.000###", 11, f"gpu_{f}", formula=True)
        for f in CALIBRATED_FIELDS
    ]

    def kernel(
        field,
    ):  # the GPU's measured kernel curves (or its nearest architecture's): planner.engines.kernel_curves
        return lambda g, r: numbers(g)[field]

    cols += [
        Column(f"{f} (kernel curves)", kernel(f), "0.000000###", 11, f"gpu_{f}", detail=True) for f in KERNEL_FIELDS
    ]
    cols.append(  # model.mxfp4_experts_refused's engine side (planner.engines.kernel_paths, per GPU architecture)
        Column(
            "MXFP4 experts refused by the engine (1: TensorRT-LLM 1.x below SM 9.0)",
            lambda g, r: numbers(g)["mxfp4_experts_refused"],
            INT,
            10,
            "gpu_mxfp4_refused",
            detail=True,
        )
    )

    cols.append(  # deploy.weights_refused's GPU side: the weight formats it runs (Gpu.weight_precisions)
        Column(
            "Weight formats it runs (blank: any; catalog weight_precisions; nvfp4 on NVIDIA only)",
            text(lambda g, r: _weight_formats_cell(g, catalog)),
            width=14,
            name="gpu_weight_formats",
            detail=True,
        )
    )

    def residual(which: int):
        return lambda g, r: residual_quantiles(g.name, engine, calibration, catalog)[which]

    def own(which: int):  # the calibration entry's range, blank without one (the Ranges sheet widens the rest)
        return lambda g, r: None if (c := calibrated_range(g, engine, calibration)) is None else c[which]

    cols += [
        Column("Time range, GPU alone, low (fraction)", residual(0), "+0%;-0%", 10, "gpu_residual_low"),
        Column("Time range, GPU alone, high (fraction)", residual(1), "+0%;-0%", 10, "gpu_residual_high"),
        Column("Calibrated time range, low (fraction)", own(0), "+0%;-0%", 11, "gpu_cal_residual_low"),
        Column("Calibrated time range, high (fraction)", own(1), "+0%;-0%", 11, "gpu_cal_residual_high"),
        Column("Calibrated time range, note", text(own(2)), width=20, name="gpu_cal_range_note", detail=True),
    ]
    cols += [
        Column(
            "Calibration source",
            text(lambda g, r: _calibration_source(calibration, g, engine)),
            width=20,
            detail=True,
        ),
        Column("Source", text(lambda g, r: g.source), width=50),
        Column("Visible-memory source", text(lambda g, r: g.engine_visible_memory_source or None), width=50),
        Column("Notes", text(lambda g, r: g.notes or None), width=50),
    ]
    sheet, names = _table_sheet(
        GPUS_SHEET,
        "tbl_gpus",
        gpus,
        cols,
        "Memory in GB (1 GB = 1e9 B; cells hold exact bytes). Sources, notes and engine columns are folded: "
        "+ above the columns shows them. Peaks are dense. Engine columns "
        "are formulas over the Assumptions sheet, or calibrated values where a calibration "
        "file names the GPU. The aliases the Inputs take (H200) are folded at the right.",
    )
    peak_first = get_column_letter(7)
    peak_last = get_column_letter(6 + len(PEAK_KEYS))
    last = 1 + max(len(gpus), 1)
    names.append(Name("gpu_peaks", f"{GPUS_SHEET}!${peak_first}$2:${peak_last}${last}"))
    names += alias_table(sheet, len(cols) + 2, "gpu", "GPU", name_aliases(gpus))
    return sheet, names


def _calibration_source(calibration: Calibration, g: Gpu, engine: EngineProfile) -> str:
    entry = calibration.for_gpu(g.all_names(), engine.name)
    return (entry.source or "calibration file") if entry is not None else "engine defaults (Assumptions)"


def _range_class(key: str) -> Callable[[Model, int], str]:
    """A model's value of a dimension the time ranges judge ("moe": MoE or dense; "size": its size class)."""
    return lambda m, r: query_values(m.name, model=m)[key]


def gqa_sibling(model: Model, models: list[Model]) -> str:
    """The dense GQA model closest in size to an MHA model (the model itself otherwise)."""
    if model.attention_kind != "MHA":
        return model.name
    size = model_facts(model).params_total
    candidates = [m for m in models if m.attention_kind == "GQA" and m.moe is None]
    if not candidates:
        return model.name
    return min(candidates, key=lambda m: abs(math.log(model_facts(m).params_total / size))).name


#: The Models sheet's header of each catalog fact (``CATALOG_FACT_FIELDS``): every fact has one, in words.
FACT_HEADERS = {
    "num_layers": "Layers",
    "hidden_size": "Hidden size",
    "intermediate_size": "MLP width",
    "vocab_size": "Vocabulary",
    "num_attention_heads": "Attention heads",
    "num_kv_heads": "KV heads (MLA: 1)",
    "kv_elements_per_token_per_layer": "KV values per token per layer",
    "full_attention_layers": "Full-attention layers",
    "sliding_window_layers": "Sliding-window layers",
    "sliding_window": "Sliding window (tokens)",
    "local_attention_chunked": "Local layers chunked (1) or sliding (0)",
    "mla_attention": "MLA attention (1: yes)",
    "attention_flop_per_context_token_per_layer": "Attention FLOP per cached token per layer (decode)",
    "prefill_attention_flop_per_token_pair_per_layer": "Attention FLOP per token pair per layer (prefill)",
    "params_total": f"Params total ({shown_unit('billions')})",
    "params_non_expert": "Params non-expert",
    "params_routed_experts": "Params routed experts",
    "params_read_per_step": "Params read per decode step (dense part)",
    "params_kept_16bit": "Params kept 16-bit in quantized checkpoints",
    "params_read_kept_16bit": "Of those, read per decode step",
    "params_not_loaded": "Params not loaded (MTP)",
    "params_per_expert_layer": "Params per expert per layer",
    "moe_layers": "MoE layers",
    "num_experts": "Experts",
    "experts_per_token": "Experts per token",
    "params_active": f"Params active ({shown_unit('billions')})",
    "params_output_head": "Params of the output head (vocabulary x hidden)",
    "params_routed_expert_biases": "Routed experts' bias values (stored 16-bit)",
    "params_replicated_tp": "Params every tensor-parallel GPU holds whole (MLA's fused q_a + kv_a projection)",
    "mlp_split_width": "MLP width tensor parallelism splits (gcd; 0: none)",
    "expert_split_width": "Expert width tensor parallelism splits (0: dense)",
    "ssm_split_width": "Mamba-2 heads and groups tensor parallelism splits (gcd; 0: none)",
    "weight_block_size": "Checkpoint's weight quantization block (values; 0: none)",
    "linear_attention_layers": "Linear-attention layers",
    "state_bytes_per_sequence": "Linear-attention state per sequence (B)",
    "linear_attention_flop_per_token": "Linear-attention FLOP per token (all layers)",
    "attended_tokens_max": "Tokens a query attends to (DSA top-k; blank: all)",
    "indexer_bytes_per_token_per_layer": "DSA indexer key bytes per token per layer",
    "fp8_ds_mla_bytes_per_token_per_layer": "DSA latent bytes per token per layer in vLLM's fp8 cache (fp8_ds_mla)",
    "indexer_flop_per_context_token_per_layer": "DSA indexer FLOP per cached token per layer",
}


#: Model facts the formulas look up but a reader rarely needs: folded on the Models sheet.
LOOKUP_FACTS = {
    "kv_elements_per_token_per_layer",
    "full_attention_layers",
    "sliding_window_layers",
    "local_attention_chunked",
    "mla_attention",
    "attention_flop_per_context_token_per_layer",
    "params_non_expert",
    "params_routed_experts",
    "params_read_per_step",
    "params_per_expert_layer",
    "moe_layers",
    "params_output_head",
    "params_routed_expert_biases",
    "mlp_split_width",  # the tensor-parallel split rule's inputs (formulas.tp_ok)
    "expert_split_width",
    "ssm_split_width",
    "weight_block_size",
    "fp8_ds_mla_bytes_per_token_per_layer",  # Calc's "KV bytes per token per layer as cached"
}


def _digits_width(values) -> float:
    """A column width that shows every value with thousands separators (1,050,673,152 needs 15), at least 11:
    a narrower column prints ### in Excel and LibreOffice."""
    return max([11.0, *(len(f"{v:,.0f}") + 2.0 for v in values if v == v)])


def fp8_quality(catalog: Catalog, model: Model) -> str:
    """The budget review's quality line for the Levers' Weights fp8 lever of ``model`` (``planner.export.quality``:
    its published evaluation delta and who signs off), its weights named as every surface names them
    (``resolve.weights_words``: gpt-oss "published as bf16 + mxfp4 experts"); "" for a model published in fp8 (the
    lever changes nothing); the reason it saves nothing where fp8 would enlarge the checkpoint's experts
    (``resolve.weights_enlarge_experts``, gpt-oss's MXFP4: the lever is not offered; trial 26 F2)."""
    from planner.export.quality import lever_quality_text
    from planner.workbook.calc import SCENARIOS

    fp8 = catalog.precision("fp8").name
    no_saving = weights_enlarge_experts(catalog, model, fp8)
    if no_saving:
        return f"Weights fp8: {no_saving}"
    lever = next(header for key, header, _ in SCENARIOS if key == "weights_fp8")
    return lever_quality_text(lever, model.name, weights_words(catalog, model, fp8), weights_words(catalog, model))


def models_sheet(catalog: Catalog, models: list[Model], all_models: list[Model]) -> tuple[Sheet, list[Name]]:
    facts = {m.name: model_facts(m) for m in models}
    cols = [
        Column("Model", text(lambda m, r: m.name), width=20, name="model_names"),
        Column("Family", text(lambda m, r: m.family), width=12),
        Column("Attention", lambda m, r: m.attention_kind, width=9),
        Column("Native precision", text(lambda m, r: m.native_precision), width=9, name="model_native_precision"),
        Column(
            "Native expert precision",
            text(lambda m, r: m.native_expert_precision),
            width=9,
            name="model_native_expert_precision",
        ),
        Column("Default KV precision", lambda m, r: default_kv_precision(m), width=9),
        Column("Trained context", lambda m, r: m.max_context, INT, 10, "model_max_context"),
        Column("GQA sibling", text(lambda m, r: gqa_sibling(m, all_models)), width=16, name="model_sibling"),
    ]
    for f in CATALOG_FACT_FIELDS:
        fmt = INT if f != "params_per_expert_layer" else "#,##0.0"
        if f in ("params_total", "params_active"):
            fmt = BILLIONS
        cols.append(
            Column(
                FACT_HEADERS[f],
                (lambda field: lambda m, r: getattr(facts[m.name], field))(f),
                fmt,
                _digits_width(float(getattr(x, f)) for x in facts.values()),
                f"model_{f}",
                detail=f in LOOKUP_FACTS,
            )
        )
    cols += [
        Column(
            f"Time-range class: {label}",
            _range_class(key),
            width=10,
            name=f"model_range_{key}",
            detail=True,
        )
        for key, label in (("moe", "MoE or dense"), ("size", "size (total params)"))
    ]
    cols += [
        Column(f"Published params ({shown_unit('billions')})", lambda m, r: m.published_params_total, BILLIONS, 11),
        Column("Params source", text(lambda m, r: m.published_params_source), width=40),
        Column(
            "Weights fp8 lever: quality (catalogs/quality, as the budget review says it)",
            text(lambda m, r: fp8_quality(catalog, m) or None),
            width=60,
            name="model_fp8_quality",
        ),
        Column("Hugging Face id", text(lambda m, r: m.hf_id or None), width=34, detail=False),
        Column("Source", text(lambda m, r: m.source), width=30),
        Column("Notes", text(lambda m, r: m.notes or None), width=50),
    ]
    sheet, names = _table_sheet(
        MODELS_SHEET,
        "tbl_models",
        models,
        cols,
        "Counts derived from each config.json by planner.engines.architecture.model_facts (exact). "
        "Sliding window blank: none. MLA models cache one latent (KV heads 1). GQA sibling: the "
        "dense GQA model closest in size to an MHA model, else the model itself. The aliases the Inputs take "
        "(llama2-70b) are folded at the right.",
    )
    names += alias_table(sheet, len(cols) + 2, "model", "Model", name_aliases(models))
    return sheet, names


def _aliases_width(precisions: list[Precision]) -> float:
    """The Aliases column as wide as its longest list (26 to 48 characters), so no list is cut off by the next column."""
    return min(48.0, max([26.0] + [len(", ".join(p.aliases)) + 2.0 for p in precisions]))


def precisions_sheet(
    precisions: list[Precision], engine: EngineProfile | Sequence[EngineProfile]
) -> tuple[Sheet, list[Name]]:
    """The Precisions table, and beside it the KV-precision dropdown's list (``kv_precision_names``): the KV-cache
    formats ``engine`` caches (``EngineProfile.accepts_kv``; vLLM: fp16, bf16, fp32, fp8), so that no format the list
    offers gives #NUM! (Calc's "Bytes per KV value" refuses one the engine does not cache). For the engines a
    workbook offers, each row of the list is the chosen engine's (``by_engine.choose``: blank past its last)."""
    engines = _engines(engine)
    cols = [
        Column("Precision", text(lambda p, r: p.name), width=10, name="prec_names"),
        Column(
            "Aliases", text(lambda p, r: ", ".join(p.aliases) or None), width=_aliases_width(precisions), detail=False
        ),
        Column("Bits per value", lambda p, r: p.bits_per_element, "0.##", 8),
        Column("Scale bits", lambda p, r: p.scale_bits, "0.##", 8),
        Column("Values per scale", lambda p, r: p.scale_block, INT, 8),
        Column(
            "Bytes per value",
            lambda p, r: f"=(C{r}+IF(E{r}>0,D{r}/E{r},0))/8",
            "0.######",
            9,
            "prec_bytes",
            formula=True,
            detail=False,
        ),
        Column("Math runs at", lambda p, r: p.math, width=8, name="prec_math"),
        Column("Math fallback", lambda p, r: p.math_fallback, width=8, name="prec_fallback"),
        # a boolean column: LibreOffice shows some booleans of a General column as 1 / 0 (formats.BOOL)
        Column("KV-cache format", lambda p, r: p.kv_cache, BOOL, width=8, name="prec_kv_cache"),
        Column("Quantizes", lambda p, r: p.quantizes, width=12, name="prec_quantizes"),
        Column("Notes", text(lambda p, r: p.notes or None), width=40),
        Column("Source", text(lambda p, r: p.source), width=40),
    ]
    sheet, names = _table_sheet(
        PRECISIONS_SHEET,
        "tbl_precisions",
        precisions,
        cols,
        "Bytes per value = (bits + scale bits / values per scale) / 8.",
    )
    lists = [kv_formats(precisions, [e]) for e in engines]
    kv = max(lists, key=len)
    sheet.set("M1", "KV-cache formats the engine caches (list)", style="header")
    sheet.widths["M"] = 14
    for i in range(len(kv)):
        value = choose([xlsx_text(each[i]) if i < len(each) else None for each in lists])
        sheet.set(f"M{2 + i}", value, text=not str(value).startswith("=CHOOSE("))
    names.append(Name("kv_precision_names", f"{PRECISIONS_SHEET}!$M$2:$M${1 + max(len(kv), 1)}"))
    # under the KV-format list, not in columns of their own: two more columns would make the sheet too wide to print
    # one page wide, and rows under the table would read as catalog rows to ``workbook refresh``
    aliases = precision_aliases(precisions)
    top = len(kv) + 3
    sheet.set(f"M{top}", "Alias (typed)", style="header")
    sheet.set(f"N{top}", "Precision it names", style="header")
    sheet.widths["M"] = max([sheet.widths["M"]] + [len(a) + 1.0 for a in aliases])
    sheet.widths["N"] = max([12.0] + [len(n) + 1.0 for n in aliases.values()])
    for i, (alias, name) in enumerate(aliases.items()):
        sheet.set(f"M{top + 1 + i}", xlsx_text(alias), text=True)
        sheet.set(f"N{top + 1 + i}", xlsx_text(name), text=True)
    last = top + max(len(aliases), 1)
    names.append(Name("prec_aliases", f"{PRECISIONS_SHEET}!$M${top + 1}:$M${last}"))
    names.append(Name("prec_alias_names", f"{PRECISIONS_SHEET}!$N${top + 1}:$N${last}"))
    return sheet, names


def precision_aliases(precisions: list[Precision]) -> dict[str, str]:
    """Each alias the catalog takes for a precision, and the precision's name (``fp4``: nvfp4), in catalog order: the
    Precisions sheet's alias table, which Calc's "Weight precision used" and "KV precision used" look a typed name up
    in (``calc.PRECISION_OF``), as ``planner plan -w fp4`` does."""
    return {a: p.name for p in precisions for a in p.aliases}
