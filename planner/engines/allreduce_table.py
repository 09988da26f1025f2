"""vLLM's measured all-reduce time per GPU, group size and message size (``catalogs/reference/allreduce_aic.csv``).

``bench/allreduce_extract.py`` writes the table from aiconfigurator 0.12.0's measured vLLM all-reduce database
(Apache-2.0; ``catalogs/reference/LICENSE-aiconfigurator.txt``): bf16, 128 B - 512 MiB, 2/4/8 GPUs (GB300 also 16,
GB200 2 and 4), inside a captured CUDA graph and outside one. The rows are vLLM's dispatch at each size, so above
its custom all-reduce's size limit they are NCCL's (``bench/allreduce_extract.py`` cites the limit and the check).

``read_allreduce_table`` reads it into a ``planner.model.collectives.AllReduceTable``; every engine profile with
kernel curves and ``allreduce_table`` set (all shipped ones) times each all-reduce in the fabric domain from it
(``planner.model.decode.allreduce_time_s``), and so do the Excel functions and the what-if workbook, whose AllReduce
sheet carries this table and whose formulas interpolate it the same way (tests/test_workbook_libreoffice.py).
``catalogs/reference/allreduce_published.csv`` (``bench/allreduce_published.py``) adds, in the same columns, published
times of GPUs aiconfigurator has not measured: MI300X at 8 GPUs, RCCL ``all_reduce_perf`` with and without HIP graphs
(AMD ROCm blog, 2025-03-02), and at 2 and 4 GPUs RCCL without graphs at 32 KiB - 64 MiB (QuickReduce's README,
2025-03-16); ``PUBLISHED_SOURCES`` names each row's source for a plan. A published row printed at fewer sizes is read
by the table's own rules beyond its ends (``_extend_ends``), and a group published without graphs only reads its
eager times inside a graph too (``_graph_from_eager``).

A GPU without a table of its own takes its nearest architecture's (``table_source``: a CDNA 3 part MI300X's, every
other the GPU its kernel curves borrow), with each message scaled by the two fabrics' bandwidths; ``borrowed_note``
says so in a plan.
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

import numpy as np

from planner.catalog.loader import shipped_catalog_dir
from planner.engines.kernel_curves import FALLBACK, NEAREST
from planner.model.collectives import AllReduceTable, mesh_group_share, table_allreduce_time_s

TABLE_FILE_NAME = "allreduce_aic.csv"  # in the shipped reference data (catalogs/reference)
PUBLISHED_FILE_NAME = "allreduce_published.csv"  # published rows of GPUs without aiconfigurator tables (same place)
#: What each published row's ``source`` is, as a plan states it.
PUBLISHED_SOURCES = {
    "rocm-blog-2025-03-02-mi300x-rccl-xgmi": (
        "RCCL all_reduce_perf on 8 x MI300X, with and without HIP graphs (AMD ROCm blog 'Understanding RCCL "
        "Bandwidth and xGMI Performance on AMD Instinct MI300X', 2025-03-02)"
    ),
    "quickreduce-readme-2025-03-16-rccl-mi300x": (
        "RCCL on 2 and 4 x MI300X without HIP graphs, 32 KiB - 64 MiB (QuickReduce's README, "
        "github.com/mk1-project/quickreduce, 2025-03-16), read inside graphs too: decode steps may run faster"
    ),
}
#: The table row a GPU without one of its own borrows, by catalog architecture, where it is not its kernel curves'
#: source GPU: MI325X has MI300X's Infinity Fabric (7 links of 64 GB/s a direction, 448 GB/s; catalogs/gpus.toml);
#: CDNA 4 (MI350X, MI355X: 7 links of 76.8 GB/s) has no table of its own and reads MI300X's RCCL rows at its fabric's
#: bandwidth (the same library on the same fully connected mesh; H100's NVSwitch rows read a pair 3.4x slower than
#: its link's peak).
NEAREST_TABLE = {"CDNA 3": "MI300X", "CDNA 4": "MI300X"}
MODES = ("graph", "eager")  # AllReduceTable's mode axis, in order


@functools.cache
def read_allreduce_table(path: str | None = None) -> AllReduceTable:
    """The shipped tables, aiconfigurator's and the published rows (or only the CSV at ``path``), as one
    ``AllReduceTable`` (log seconds; NaN where not measured)."""
    ref = shipped_catalog_dir() / "reference"
    log_s_table = _read_table([Path(path)] if path else [ref / TABLE_FILE_NAME, ref / PUBLISHED_FILE_NAME], MODES)
    _graph_from_eager(log_s_table.log_seconds)
    log_s_table.log_seconds.flags.writeable = False
    return log_s_table


#: Whether engines that gather a data-parallel MoE's tokens (``EngineProfile.moe_exchange``) time it from NCCL's
#: table (shipped s180); False (``bench/switch_bootstrap.py``'s ablation): every data-parallel MoE as an all-to-all.
GATHER_SCATTER = True
#: The gather / scatter table's operations (``AllReduceTable``'s mode axis, in order; ``bench/nccl_extract.py``).
GATHER_SCATTER_MODES = ("all_gather", "reduce_scatter")
GATHER_SCATTER_FILE_NAME = "gather_scatter_aic.csv"  # in the shipped reference data (catalogs/reference)


def read_gather_scatter_table(path: str | None = None) -> AllReduceTable:
    """NCCL's measured all-gather and reduce-scatter times (``catalogs/reference/gather_scatter_aic.csv``, or the CSV
    at ``path``) as an ``AllReduceTable`` whose modes are ``GATHER_SCATTER_MODES``: each row's log seconds, read as the
    all-reduce rows are (``_extend_ends``, ``_never_faster_when_larger``), groups inside an NVLink domain filled in
    (``_fill_nvlink_domains``)."""
    return _gather_scatter(path)[0]


@functools.cache
def _gather_scatter(path: str | None = None) -> tuple[AllReduceTable, dict[tuple[str, int], str]]:
    """The filled table (read-only) and how each filled group was derived, read and filled once per path."""
    table = _read_table(
        [Path(path or shipped_catalog_dir() / "reference" / GATHER_SCATTER_FILE_NAME)], GATHER_SCATTER_MODES
    )
    table, how = _fill_nvlink_domains(table)
    table.log_seconds.flags.writeable = False
    return table, how


#: Where a GPU's NVLink domain holds more GPUs than the largest group of its measured gather / scatter rows, the
#: groups it is derived at: each power of two above that group below the domain, and the domain itself (NVL72: 8,
#: 16, 32, 64, 72). Beyond the domain nothing is derived (the scale-out path's all-to-all stands).
def _domain_groups(measured_max: int, domain: int) -> list[int]:
    out, g = [], 2 * measured_max
    while g < domain:
        out.append(g)
        g *= 2
    return [*out, domain] if domain > measured_max else []


def gather_scatter_derived() -> dict[tuple[str, int], str]:
    """(table GPU, group size) -> how its all-gather / reduce-scatter times were derived, for each group
    ``read_gather_scatter_table`` fills in a GPU's NVLink domain (``_fill_nvlink_domains``); measured groups absent."""
    return _gather_scatter()[1]


def _fill_nvlink_domains(table: AllReduceTable) -> tuple[AllReduceTable, dict[tuple[str, int], str]]:
    """The table with each GPU's groups inside its NVLink domain (the catalog's ``interconnect_domain_gpus``) that
    aiconfigurator did not measure filled in, and how each was (GPU, group -> words for a plan's warning).

    aiconfigurator 0.12.0 measured GB200 NVL72 and GB300 NVL72 at 2 and 4 GPUs only, though each has 72 GPUs on one
    NVLink Switch; without a value the planner timed their MoE exchange at 8 and more GPUs by the all-to-all form,
    ~3x the gather B200 takes on the same fabric (trial 9 F4). Two rules, in this order, for a group g <= domain:

    1. The measured row at g of a GPU of the same architecture and fabric bytes/s (the same NVLink generation:
       B200 180GB for GB200 NVL72, B300 288GB for GB300 NVL72), as measured. Evidence: where both were measured
       (2 and 4 GPUs, 21 sizes 512 B - 512 MiB, both ops) GB200's times are B200's within 0.68-1.12x, median 1.03,
       and 1.00-1.02x from 1 MiB up; GB300's B300's within 0.78-1.27x, median 1.01. The group-size form differs
       by generation instead: at 16 MiB, 8 GPUs take 1.76-1.79x 4 GPUs' all-gather on B200 / B300, 1.04-1.05x on
       H100 / H200; at 8 MiB 0.87x and 0.99x; so no rule fitted on other GPUs' 4 -> 8 steps carries over, and
       GB200's own 2 -> 4 step (1.16x at 512 MiB, 1.24x at 512 B) is not B200's 4 -> 8 (1.07x, 1.44x) either.
    2. Else (no GPU measured g: 16 and more on NVL72) the row's last two groups extended, log(time) linear in
       log2(group) at each size, each doubling at least as slow as the last group (a factor >= 1). Evidence, the
       only 16-GPU rows aiconfigurator has (GB300 NVL72's all-reduce, ``allreduce_aic.csv``): from 4 MiB up, where
       NCCL runs, the 8 -> 16 step (graph 1.05-1.67x, eager 1.05-1.36x) is within 0.7-1.7x of the 4 -> 8 step
       (0.96-1.24x, 0.94-1.24x); at 512 MiB 1.13 against 1.14 and 1.12 against 1.12. Below that vLLM switches
       kernels at 16 GPUs (3.5x at 1 KiB inside a graph), which an NCCL gather does not: there the form's guess.

    Each filled row is made non-decreasing in size again (``_never_faster_when_larger``)."""
    from planner.catalog.loader import default_catalog

    catalog = default_catalog()
    gpus = {name: catalog.gpus.get(name) for name in table.gpus if name in catalog.gpus}
    log_s = table.log_seconds
    measured = {
        name: [g for k, g in enumerate(table.group_sizes) if np.isfinite(log_s[i, :, k]).any()]
        for i, name in enumerate(table.gpus)
    }
    extra = {
        name: _domain_groups(max(measured[name]), int(gpu.interconnect_domain_gpus or 1))
        for name, gpu in gpus.items()
        if measured[name]
    }
    groups = tuple(sorted({*table.group_sizes, *(g for gs in extra.values() for g in gs)}))
    out = np.full((len(table.gpus), log_s.shape[1], len(groups), log_s.shape[3]), math.nan)
    for k, g in enumerate(table.group_sizes):
        out[:, :, groups.index(g)] = log_s[:, :, k]
    how: dict[tuple[str, int], str] = {}
    for name, wanted in extra.items():
        i, gpu = table.gpus.index(name), gpus[name]
        for g in wanted:
            peer = next(
                (
                    p
                    for p, pg in gpus.items()
                    if p != name
                    and pg.architecture == gpu.architecture
                    and pg.interconnect_bytes_per_s == gpu.interconnect_bytes_per_s
                    and g in measured[p]
                ),
                None,
            )
            k = groups.index(g)
            if peer is not None:
                out[i, :, k] = out[table.gpus.index(peer), :, k]
                how[name, g] = (
                    f"{peer}'s measured {g}-GPU times stand in (the same NVLink generation, "
                    f"{gpu.interconnect_bytes_per_s / 1e9:,.0f} GB/s a direction)"
                )
                continue
            k1, k2 = [j for j in range(k) if np.isfinite(out[i, :, j]).any()][-2:]  # the row's two groups below
            lg = [math.log2(groups[j]) for j in (k1, k2, k)]
            per_doubling = np.maximum(out[i, :, k2] - out[i, :, k1], 0.0) / (lg[1] - lg[0])
            out[i, :, k] = out[i, :, k2] + per_doubling * (lg[2] - lg[1])
            how[name, g] = f"extended from its {groups[k1]}- and {groups[k2]}-GPU times (log time linear in log2 GPUs)"
        for m in range(out.shape[1]):
            for k in range(len(groups)):
                out[i, m, k] = _never_faster_when_larger(out[i, m, k])
    return AllReduceTable(table.gpus, groups, table.log2_bytes, out), how


def _read_table(paths: list[Path], modes: tuple[str, ...]) -> AllReduceTable:
    """The rows of the CSVs at ``paths`` (columns gpu, mode, num_gpus, us_<log2 bytes>) as one ``AllReduceTable``
    over ``modes``, each row filled beyond its printed ends and made non-decreasing in size; writable."""
    rows = []
    for p in paths:
        with p.open(newline="") as f:
            rows += list(csv.DictReader(f))
    size_cols = [c for c in rows[0] if c.startswith("us_")]
    gpus = tuple(dict.fromkeys(r["gpu"] for r in rows))
    groups = tuple(sorted({int(r["num_gpus"]) for r in rows}))
    log_s = np.full((len(gpus), len(modes), len(groups), len(size_cols)), math.nan)
    log2_bytes = tuple(float(c[3:]) for c in size_cols)
    for r in rows:
        us = np.array([float(r[c]) if r[c] else math.nan for c in size_cols])
        log_s[gpus.index(r["gpu"]), modes.index(r["mode"]), groups.index(int(r["num_gpus"]))] = (
            _never_faster_when_larger(_extend_ends(np.log(us * 1e-6), log2_bytes))
        )
    return AllReduceTable(gpus, groups, log2_bytes, log_s)


def _extend_ends(log_seconds: np.ndarray, log2_bytes: tuple[float, ...]) -> np.ndarray:
    """One row printed at fewer sizes than the table's columns, filled beyond its ends as
    ``planner.model.collectives.table_allreduce_time_s`` reads beyond the table's: below the smallest printed size
    its time (the latency floor), above the largest the last printed segment's seconds per byte, linear in bytes.
    A row blank inside its printed range, or with fewer than two printed sizes, is left as it is (every
    aiconfigurator row and the blog's 8-GPU rows are whole: unchanged)."""
    finite = np.flatnonzero(np.isfinite(log_seconds))
    if len(finite) < 2 or finite[-1] - finite[0] + 1 != len(finite):
        return log_seconds
    out = log_seconds.copy()
    first, last, before = finite[0], finite[-1], finite[-2]
    out[:first] = out[first]
    top, below = 2.0 ** log2_bytes[last], 2.0 ** log2_bytes[before]
    seconds_per_byte = (math.exp(out[last]) - math.exp(out[before])) / (top - below)
    for j in range(last + 1, len(out)):
        out[j] = math.log(math.exp(out[last]) + (2.0 ** log2_bytes[j] - top) * seconds_per_byte)
    return out


def _graph_from_eager(log_s: np.ndarray) -> None:
    """In place: a (GPU, group) with eager times and no graph row reads its eager times inside a graph too.

    An upper bound: QuickReduce's 2- and 4-GPU RCCL rows were run without HIP graphs; on 8 x MI300X, where the blog
    printed both, graphs take 4-16 us off each all-reduce below 2 MiB as printed (32 KiB: 9.05 against 13.31 us)
    and nothing from 4 MiB up. Without this the group would fall back to the latency + bandwidth form inside graphs,
    whose borrowed efficiency puts a pair's 1 MiB at 56 us against the 37 us measured without graphs."""
    graph, eager = MODES.index("graph"), MODES.index("eager")
    for gi in range(log_s.shape[0]):
        for ki in range(log_s.shape[2]):
            if np.isnan(log_s[gi, graph, ki]).all() and np.isfinite(log_s[gi, eager, ki]).any():
                log_s[gi, graph, ki] = log_s[gi, eager, ki]


def _never_faster_when_larger(log_seconds: np.ndarray) -> np.ndarray:
    """One row's log times made non-decreasing in message size by isotonic regression (pool-adjacent-violators,
    ``scipy.optimize.isotonic_regression``), NaN (not measured) left as it is.

    The measurements dip where vLLM's dispatch changes kernels and where one size's run was slow (e.g. B200's
    8-GPU graph row at 512 KiB - 1 MiB, 1.5x below 256 KiB): read as they are, a step of twice the batch would
    take less time than the smaller one (tests/test_model_laws.py). The least-squares non-decreasing fit keeps
    every monotone row as measured and spreads a dip over its neighbours instead of carrying one slow size forward.
    """
    from scipy.optimize import isotonic_regression  # here, not at import: scipy.optimize costs ~0.4 s at Excel's start

    finite = np.isfinite(log_seconds)
    out = log_seconds.copy()
    if finite.sum() > 1:
        out[finite] = isotonic_regression(log_seconds[finite], increasing=True).x
    return out


#: Whether the whole process uses the latency + bandwidth form instead of the table, whatever the profiles say
#: (False as shipped; ``bench/heldout.py --allreduce-fit`` and ``bench/loso.py --allreduce-fit`` set it to compare).
FIT_INSTEAD = False


def table_source(gpu, interconnect_bytes_per_s: float, catalog) -> tuple[str, float]:
    """(the table row's GPU, bytes scale) for a catalog GPU: its own row and 1, else the nearest architecture's row
    (``NEAREST_TABLE``, else ``planner.engines.kernel_curves.NEAREST``, else ``FALLBACK``: H100 SXM) and that GPU's fabric bytes/s over this
    one's (``interconnect_bytes_per_s``: the model's figure). The all-reduce of M bytes then takes the borrowed row's
    time at M x scale: the same latency floor, the bandwidth-bound part slower or faster as the fabric is.
    """
    table = read_allreduce_table()
    if gpu.name in table.gpus:
        return gpu.name, 1.0
    src = NEAREST_TABLE.get(gpu.architecture) or NEAREST.get(gpu.architecture, FALLBACK)
    src = src if src in table.gpus else FALLBACK
    return src, float(catalog.gpu(src).interconnect_bytes_per_s) / float(interconnect_bytes_per_s)


def published_source(gpu_name: str, gpus: int | None = None) -> str:
    """What the table row of ``gpu_name`` is (at ``gpus`` GPUs; None: every group it has): vLLM's measured
    all-reduce (aiconfigurator 0.12.0), or the published source of a row of ``PUBLISHED_FILE_NAME``
    (``PUBLISHED_SOURCES``)."""
    sources = _published_sources().get(gpu_name)
    if not sources:
        return "vLLM's measured all-reduce (aiconfigurator 0.12.0)"
    if gpus in sources:
        return sources[gpus]
    return "; ".join(dict.fromkeys(sources.values()))


@functools.cache
def _published_sources() -> dict[str, dict[int, str]]:
    """GPU -> group size -> the published source of its rows."""
    out: dict[str, dict[int, str]] = {}
    with (shipped_catalog_dir() / "reference" / PUBLISHED_FILE_NAME).open(newline="") as f:
        for r in csv.DictReader(f):
            out.setdefault(r["gpu"], {})[int(r["num_gpus"])] = PUBLISHED_SOURCES[r["source"]]
    return out


def measured_groups(gpu_name: str) -> tuple[int, ...]:
    """The group sizes the table row of ``gpu_name`` has inside a graph (every size a decode step reads)."""
    table = read_allreduce_table()
    row = table.log_seconds[table.gpus.index(gpu_name), MODES.index("graph")]
    return tuple(g for g, times in zip(table.group_sizes, row, strict=True) if np.isfinite(times).any())


def borrowed_note(gpu, interconnect_bytes_per_s: float, catalog, gpus: int | None = None) -> str:
    """ "" where ``gpu`` has its own table from vLLM's measured all-reduce; else what stands in: another GPU's table
    (which, how scaled), a published table that is not the engine's own all-reduce, or (``gpus`` outside the
    published group sizes) the latency + bandwidth form. On a fully connected mesh (``mesh_links_per_gpu``) the
    bandwidths named are those of the g - 1 links a group of ``gpus`` has (``planner.model.collectives.
    mesh_group_share``)."""
    src, scale = table_source(gpu, interconnect_bytes_per_s, catalog)
    what = published_source(src, gpus)
    links = gpu.mesh_links_per_gpu
    mesh = f" over {gpus - 1} of its {links} mesh links" if links and gpus and gpus - 1 < links else ""
    if gpus is not None and gpus not in measured_groups(src):
        sizes = ", ".join(str(g) for g in measured_groups(src))
        return (
            f"all-reduce not measured on {gpus} x {gpu.name} ({src}'s table, {what}, has {sizes} GPUs): the latency "
            f"+ bandwidth form with the catalog's fabric latency stands in{mesh}"
        )
    if src == gpu.name:
        published = src in _published_sources()
        return f"all-reduce on {gpu.name} from {what}; the engine's own all-reduce may differ" if published else ""
    own = interconnect_bytes_per_s / 1e9
    theirs = own * scale
    if gpus is not None and gpus > 1:
        own *= float(mesh_group_share(mesh_link_share(gpu), float(gpus)))
        theirs *= float(mesh_group_share(mesh_link_share(catalog.gpu(src)), float(gpus)))
    return (
        f"all-reduce not measured on {gpu.name}: {src}'s table ({what}) stands in, each message scaled by "
        f"the fabrics' bandwidths ({theirs:,.0f} / {own:,.0f} GB/s{mesh}); its latency floor is {src}'s"
    )


def mesh_link_share(gpu) -> float:
    """One mesh link over a catalog GPU's aggregate fabric bandwidth (MI300X: 64 / 448 = 1/7); 0 on a switched fabric
    (``planner.model.collectives.mesh_group_share``)."""
    if not gpu.mesh_link_bytes_per_s or not gpu.interconnect_bytes_per_s:
        return 0.0
    return gpu.mesh_link_bytes_per_s / gpu.interconnect_bytes_per_s


def gather_scatter_note(gpu, interconnect_bytes_per_s: float, catalog, gpus: int) -> str:
    """ "" where NCCL's all-gather and reduce-scatter were measured on ``gpus`` x ``gpu`` (``gather_scatter_aic.csv``);
    else what stands in for a data-parallel MoE's token exchange there, as ``borrowed_note`` words it for the
    all-reduce: another GPU's measured times at that group or the row extended in group size
    (``_fill_nvlink_domains``), another GPU's table scaled by the fabrics' bandwidths, or, where the table has no
    value (``planner.model.parallel.ep_communication_s``), the all-to-all latency + bandwidth form: beyond the NVLink
    domain at the scale-out link's bandwidth."""
    if gpus <= 1:
        return ""
    table = read_gather_scatter_table()
    src, scale = table_source(gpu, interconnect_bytes_per_s, catalog)
    what = f"MoE all-gather / reduce-scatter not measured on {gpus} x {gpu.name}"
    fabric = "NVLink domain" if gpu.interconnect_kind == "nvlink" else "fabric domain"
    if src not in table.gpus:
        return f"{what} (aiconfigurator's measured NCCL table has no row for it or its architecture): the all-to-all latency + bandwidth form stands in"
    derived = gather_scatter_derived()
    row = table.log_seconds[table.gpus.index(src)]
    measured = [g for k, g in enumerate(table.group_sizes) if np.isfinite(row[:, k]).any() and (src, g) not in derived]
    has = f"{src}'s measured table, aiconfigurator 0.12.0, has {', '.join(map(str, measured))} GPUs"
    if not math.isfinite(table_allreduce_time_s(table, table.row(src), 2.0**20, float(gpus), True)):
        domain = int(gpu.interconnect_domain_gpus or 1)
        if gpus > domain:
            link = (gpu.pcie_bytes_per_s or 0.0) / 1e9
            return (
                f"{what} ({has}): beyond the {domain}-GPU {fabric} the all-to-all latency + bandwidth form at "
                f"the scale-out link's {link:,.0f} GB/s stands in"
            )
        return f"{what} ({has}): the all-to-all latency + bandwidth form stands in"
    below = max(g for g in table.group_sizes if g <= gpus)  # the grid points the lookup reads (one where on it)
    ends = sorted({below, min(g for g in table.group_sizes if g >= gpus)})
    words = "; ".join(f"at {g} GPUs {derived[src, g]}" for g in ends if (src, g) in derived)
    if words and len(ends) > 1:
        words += f" (read between {ends[0]} and {ends[1]} GPUs)"
    borrowed = ""
    if src != gpu.name:
        borrowed = (
            f"{src}'s table stands in, each message scaled by the fabrics' bandwidths "
            f"({interconnect_bytes_per_s * scale / 1e9:,.0f} / {interconnect_bytes_per_s / 1e9:,.0f} GB/s)"
        )
    if not words and not borrowed:
        return ""
    return f"{what} ({has}): {'; '.join(x for x in (borrowed, words) if x)}"
