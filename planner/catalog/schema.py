"""Catalog entries: frozen pydantic models that forbid unknown keys.

Units are in the field names and are base units: bytes, bytes per second, FLOP per second, watts,
US dollars. "80 GB" cards carry ``memory_bytes = 80 * 2**30`` (the HBM stacks are binary-sized);
display code converts to SI (1 GB = 1e9 B) at the edges.

Every entry has a ``source`` for its numbers; a number with a different source names it in an extra
``*_source`` field beside it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import re
import statistics
from collections.abc import Iterable
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

#: Keys of ``Gpu.peak_flop_per_s``: dense (not 2:4-sparse) tensor-core peaks, except fp32 (CUDA cores).
PeakKey = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp6", "fp4", "int4"]


#: Every catalog class: unknown keys refused; numbers of the right type (``true`` is not 1, ``"80"`` not 80)
#: and finite (no inf or nan). TOML arrays arrive as lists, so tuple fields say ``strict=False``.
ENTRY_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def normalize_name(name: str) -> str:
    """Matching key for catalog names: case, spaces, hyphens and underscores do not count.

    Dots do: "qwen2.5-7b" and "qwen2-57b" must stay apart.
    """
    return _normalized(str(name))


@functools.lru_cache(maxsize=1 << 16)
def _normalized(text: str) -> str:
    """``normalize_name`` of text, remembered (catalog lookups normalize the same few names again and again)."""
    return _SEPARATORS.sub("", text).lower()


_SEPARATORS = re.compile(r"[\s\-_]+")

#: ``source`` texts that say nothing of where numbers come from, as written in a draft (compared without case,
#: spaces or punctuation: "N/A", "n.a.", "TBD?" are all refused).
PLACEHOLDER_SOURCES = frozenset(
    {"", "tbd", "tba", "tbc", "todo", "fixme", "na", "none", "null", "nil", "unknown", "source", "sources", "xxx", "x",
     "placeholder", "wip", "later", "test", "dummy", "seebelow", "seeabove", "idk"}
)  # fmt: skip

#: What a source must be, said wherever one is refused.
SOURCE_RULE = (
    "a source says where the numbers come from: a URL, or a document with its number or date "
    "(e.g. 'Contract C-7781 with OurCloud, 2026-10-01')"
)


def check_source(text: str, field: str = "source") -> str:
    """``text`` as a ``source``: at least 3 characters and not a placeholder ("TBD", "todo", "n/a", "?")."""
    key = re.sub(r"[\W_]+", "", text.lower())
    if key in PLACEHOLDER_SOURCES or len(text.strip()) < 3:
        raise ValueError(f"{field} {text!r} is a placeholder; {SOURCE_RULE}")
    return text


class _Entry(BaseModel):
    model_config = ENTRY_CONFIG

    name: str = Field(min_length=1, description="canonical display name")
    aliases: tuple[str, ...] = Field(default=(), strict=False)
    source: str = Field(description="where the entry's numbers come from (URL or document); no placeholder")
    notes: str = ""

    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return check_source(value)


InterconnectKind = Literal["nvlink", "nvlink-bridge", "pcie", "infinity-fabric", "other"]
PriceKind = Literal["on-demand", "spot", "reserved", "purchase"]

#: A price quoted more than this many days before today is flagged as stale (plans, reviews, catalog list).
PRICE_STALE_AFTER_DAYS = 365


#: How ``Gpu.price`` names the provider of a median of several quotes ("median of 4 quotes: Lambda 3.99 ...").
MEDIAN_PROVIDER_PREFIX = "median of "
#: The ``price_basis`` that takes the median of a kind's quotes (the default), not one provider's quote.
MEDIAN_BASIS = "median"


def names_provider(basis: str | None) -> bool:
    """Whether a price basis names a provider (``Gpu.quote``), not the median (None, "", "median")."""
    return bool(basis and basis.strip() and basis.strip().lower() != MEDIAN_BASIS)


class Price(BaseModel):
    """One dated, sourced price quote of a kind: a rate per GPU-hour (on-demand, spot, reserved) or a purchase.

    ``reserved`` covers committed-use and reserved-instance rates; ``purchase`` is the price of one GPU.
    """

    model_config = ENTRY_CONFIG

    kind: PriceKind
    usd_per_gpu_hour: PositiveFloat | None = Field(default=None, description="rate per GPU-hour (not for purchase)")
    purchase_usd: PositiveFloat | None = Field(default=None, description="price of one GPU (purchase only)")
    provider: str = Field(min_length=1, description="who quotes it: a cloud, a reseller, the vendor's list price")
    date: str = Field(
        pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        description="YYYY-MM or YYYY-MM-DD, not after today (a TOML date, date = 2026-11-15, is read as that text)",
    )
    source: str = Field(description="the quote's evidence: a URL, or a document with its number or date")
    instance_gpus: PositiveInt = Field(
        default=1, description="GPUs in the smallest unit the provider bills (8: only whole 8-GPU instances)"
    )
    caveat: str = Field(
        default="",
        max_length=80,
        description="how weak the quote is as evidence, in a few words every price line carries, where the entry's "
        'own comment states it ("one secondary quote, low-side (no median)"); "" for a rate card read',
    )

    @field_validator("date", mode="before")
    @classmethod
    def _toml_date(cls, value: object) -> object:
        """A TOML local date (``date = 2026-11-15``, no quotes) is the same date as its text."""
        if isinstance(value, datetime.datetime):
            raise ValueError(f"a date and a time ({value.isoformat()}); give the date only, e.g. {value.date()}")
        if isinstance(value, datetime.date):
            return value.isoformat()
        return value

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return check_source(value)

    @model_validator(mode="after")
    def _check(self) -> Price:
        if self.kind == "purchase":
            if self.purchase_usd is None or self.usd_per_gpu_hour is not None:
                raise ValueError("a purchase price gives purchase_usd (US$ per GPU) and no usd_per_gpu_hour")
        elif self.usd_per_gpu_hour is None or self.purchase_usd is not None:
            raise ValueError(f"a {self.kind} price gives usd_per_gpu_hour and no purchase_usd")
        today = datetime.date.today()
        if self.quoted_on() > today:  # (also a real calendar date)
            raise ValueError(f"date {self.date} is after today, {today}: a quote is dated the day it was given")
        return self

    def quoted_on(self) -> datetime.date:
        """The quote's date; a month-only date counts from the month's first day (the oldest it can be)."""
        parts = [int(x) for x in self.date.split("-")]
        try:
            return datetime.date(parts[0], parts[1], parts[2] if len(parts) > 2 else 1)
        except ValueError as exc:
            raise ValueError(f"date {self.date!r} is not a calendar date ({exc})") from None

    def age_days(self, today: datetime.date | None = None) -> int:
        """Days from the quote's date to ``today`` (default: the system date)."""
        return ((today or datetime.date.today()) - self.quoted_on()).days

    def is_stale(self, today: datetime.date | None = None) -> bool:
        """Quoted more than ``PRICE_STALE_AFTER_DAYS`` days ago."""
        return self.age_days(today) > PRICE_STALE_AFTER_DAYS

    @property
    def amount(self) -> float:
        """The number itself: US$ per GPU-hour, or US$ per GPU for a purchase."""
        return self.purchase_usd if self.kind == "purchase" else self.usd_per_gpu_hour

    @property
    def is_median(self) -> bool:
        """Whether this is ``Gpu.price``'s median of several quotes, not one provider's."""
        return self.provider.startswith(MEDIAN_PROVIDER_PREFIX)

    def label(self, today: datetime.date | None = None) -> str:
        """One line for people: '$6.35/GPU-h on-demand, RunPod, 2026-03-10', with '(stale: 400 days old)'."""
        amount = f"${self.purchase_usd:,.0f}/GPU" if self.kind == "purchase" else f"${self.usd_per_gpu_hour:,.2f}/GPU-h"
        text = f"{amount} {self.kind}, {self.provider}, {self.date}"
        return text + (f" (stale: {self.age_days(today)} days old)" if self.is_stale(today) else "")


def no_rental_price(g: Gpu) -> str:
    """The words every surface gives a GPU whose only quotes are purchases (``plan``, the Python error,
    ``catalog list``, ``catalog_records``): "no rental price; a purchase quote of $31,500/GPU exists (2026-11-15):
    planner export amortizes it"; "" where the GPU has a rate per GPU-hour or no purchase quote."""
    if any(p.kind != "purchase" for p in g.prices):
        return ""
    bought = g.price("purchase")
    if bought is None:
        return ""
    return (
        f"no rental price; a purchase quote of ${bought.purchase_usd:,.0f}/GPU exists ({bought.date}): "
        "planner export amortizes it"
    )


def stale_price_warning(price: Price | None, gpu_name: str, today: datetime.date | None = None) -> str | None:
    """The one warning line plans and reviews show for a price older than ``PRICE_STALE_AFTER_DAYS``, else None."""
    if price is None or not price.is_stale(today):
        return None
    return (
        f"{gpu_name}: the {price.kind} price (${price.amount:,.2f}, {price.provider}) is dated {price.date}, "
        f"{price.age_days(today)} days ago (older than {PRICE_STALE_AFTER_DAYS} days); check a current quote"
    )


#: Weight formats only NVIDIA GPUs run (``Gpu.takes_weights``): NVFP4 is NVIDIA's format (ModelOpt: E2M1 values with
#: an FP8 E4M3 scale per 16; nvidia/DeepSeek-R1-FP4's model card: "Supported Hardware Microarchitecture
#: Compatibility: NVIDIA Blackwell", runtime TensorRT-LLM). AMD's FP4 tensor cores (CDNA 4) take MXFP4 (an E8M0 scale
#: per 32, the catalog's mxfp4); ROCm has no NVFP4 kernel of its own: vLLM loads NVFP4 there only through its
#: emulation backend, dequantized into bf16 math (vllm-project/vllm pull requests 35733 and 35737, 2026-03), which
#: planner does not time. Refused on AMD and Intel GPUs, on every surface (``deploy.weights_refused``).
NVIDIA_ONLY_WEIGHTS = ("nvfp4",)


@dataclasses.dataclass(frozen=True)
class Bound:
    """Where a GPU's number can lie (``low`` to ``high``, in the field's base unit, ``unit``): a value outside is a
    unit typo ("4.8" for 4.8 TB/s), refused with the value it most likely meant. ``readings``: (label, factor) of the
    units people write the number in; ``typical``: the middle of today's GPUs, which picks between two readings."""

    low: float
    high: float
    unit: str
    readings: tuple[tuple[str, float], ...]
    typical: float

    def problem(self, field: str, value: float) -> str | None:
        """The refusal of ``value`` in ``field`` ("hbm_bandwidth_bytes_per_s = 4.8 is bytes per second ...; did you
        mean 4.8e12 (4.8 TB/s)?"), None when it lies within the bounds."""
        if self.low <= value <= self.high:
            return None
        side = (
            f"at least {_bound_text(self.low, self.readings)}"
            if value < self.low
            else (f"at most {_bound_text(self.high, self.readings)}")
        )
        shown = f"{value}" if isinstance(value, int) else f"{value:g}"
        text = f"{field} = {shown} is {self.unit}, {side} for a GPU"
        if value > 0:
            fits = [(abs(math.log10(value * f / self.typical)), label, f) for label, f in self.readings
                    if self.low <= value * f <= self.high]  # fmt: skip
            if fits:
                _, label, factor = min(fits)
                text += f"; did you mean {_scaled(value, factor)} ({value:g} {label})?"
        return text


def _scaled(value: float, factor: float) -> str:
    """``value`` x ``factor`` as TOML text a maintainer would write: 4.8e12 (not 4.8e+12), 835.5e12, 10e-6,
    151397597184 (141 GiB: a whole number of bytes)."""
    product = value * factor
    if factor > 1 and math.log2(factor) == round(math.log2(factor)) and product == round(product):
        return f"{round(product)}"
    return _engineering(product)


def _engineering(x: float) -> str:
    """``x`` with an exponent that is a multiple of 3: 4.8e12, 835.5e12, 10e-6, 700."""
    exponent = math.floor(math.log10(x) / 3) * 3
    mantissa = f"{x / 10**exponent:.6g}"
    return mantissa if exponent == 0 else f"{mantissa}e{exponent}"


def _bound_text(bound: float, readings: tuple[tuple[str, float], ...]) -> str:
    """A bound with the unit people say it in: '10e9 (10 GB/s)', '1073741824 (1 GiB)', '100e-9 (0.1 us)'."""
    label, factor = max(((lb, f) for lb, f in readings if f <= bound), key=lambda r: r[1], default=readings[-1])
    binary = readings[0][1] > 1 and math.log2(readings[0][1]) == round(math.log2(readings[0][1]))
    number = f"{round(bound)}" if binary else _engineering(bound)
    return number if factor == 1 else f"{number} ({bound / factor:g} {label})"


_BYTES = Bound(2**30, 2**46, "bytes", (("GiB", 2**30), ("MiB", 2**20), ("TiB", 2**40)), 2**37)
_LINK = Bound(1e9, 1e14, "bytes per second, one direction", (("GB/s", 1e9), ("TB/s", 1e12)), 1e11)
_LATENCY = Bound(1e-7, 1e-2, "seconds", (("ms", 1e-3), ("us", 1e-6)), 2e-5)

#: Plausibility bounds of a GPU's physical numbers: orders of magnitude around every shipped GPU (RTX 3090 and T4 to
#: GB300: 16 to 288 GiB, 0.3 to 8 TB/s, 8.1 TFLOP/s fp32 to 15 PFLOP/s fp4, 70 to 1,400 W) and the next generations.
#: A value outside is a unit typo: 141 for 141 GiB, 4.8 for 4.8 TB/s, 835.5 for 835.5 TFLOP/s. Catalog files are
#: checked; ``Gpu.model_validate(data, context={"plausible": False})`` skips it (a CPU timed by ``calibrate --measure``).
GPU_BOUNDS: dict[str, Bound] = {
    "memory_bytes": _BYTES,
    "engine_visible_memory_bytes": _BYTES,
    "hbm_bandwidth_bytes_per_s": Bound(1e10, 1e15, "bytes per second", (("TB/s", 1e12), ("GB/s", 1e9)), 2e12),
    "peak_flop_per_s": Bound(
        1e12, 1e18, "FLOP per second (dense)", (("TFLOP/s", 1e12), ("PFLOP/s", 1e15), ("GFLOP/s", 1e9)), 5e14
    ),
    "interconnect_bytes_per_s": _LINK,
    "pcie_bytes_per_s": _LINK,
    "mesh_link_bytes_per_s": _LINK,
    "interconnect_latency_s": _LATENCY,
    "pcie_latency_s": _LATENCY,
    "tdp_w": Bound(10, 20_000, "watts", (("W", 1), ("kW", 1e3)), 500),
}

#: Dense tensor-core peaks in a fixed ratio on every shipped GPU of these vendors: (higher key, lower key, ratio,
#: vendors). A datasheet's "with sparsity" figure (2x dense) in one key and a dense one in the other shows as a ratio
#: of half or twice it (H200 NVL: bf16 1,671e12 sparse beside fp8 1,670.5e12 dense).
PEAK_RATIOS = (
    ("fp8", "bf16", 2.0, ("NVIDIA", "AMD")),
    ("fp8", "fp16", 2.0, ("NVIDIA", "AMD")),
    ("bf16", "tf32", 2.0, ("NVIDIA", "AMD", "Intel", "Google", "other")),
    ("fp16", "tf32", 2.0, ("NVIDIA", "AMD", "Intel", "Google", "other")),
)


class Gpu(_Entry):
    """One accelerator SKU."""

    vendor: Literal["NVIDIA", "AMD", "Intel", "Google", "other"]
    architecture: str = ""
    memory_bytes: PositiveInt = Field(description="physical device memory, exact bytes (80 GiB for an '80 GB' card)")
    memory_type: str = ""
    engine_visible_memory_bytes: PositiveInt | None = Field(
        default=None,
        description="total that torch.cuda.mem_get_info / vLLM reports; smaller than nvidia-smi's total",
    )
    engine_visible_memory_source: str = ""
    device_name: str = Field(
        default="",
        description="the name the driver reports (NVML's nvmlDeviceGetName: nvidia-smi's Name column, "
        "torch.cuda.get_device_name, vLLM's current_platform.get_device_name()), e.g. 'NVIDIA A800-SXM4-80GB'; "
        "engines that pick defaults by name read it; '': not found in a source (engine_device_name: the catalog name)",
    )
    device_name_source: str = ""
    hbm_bandwidth_bytes_per_s: PositiveFloat = Field(description="peak DRAM bandwidth, SI (3.35e12 for 3.35 TB/s)")
    peak_flop_per_s: dict[PeakKey, PositiveFloat] = Field(
        description="DENSE peak per math precision (FLOP/s, or OP/s for integer formats): a datasheet's 'with "
        "sparsity' (*) figure halved; 989.4e12 for 989.4 TFLOP/s"
    )
    interconnect: str = ""
    interconnect_bytes_per_s: PositiveFloat | None = Field(
        default=None, description="GPU-to-GPU bandwidth per GPU, one direction (NVLink, Infinity Fabric or PCIe)"
    )
    interconnect_kind: InterconnectKind | None = Field(
        default=None, description="the GPU-to-GPU fabric; None: not stated (the model keeps its generic assumption)"
    )
    interconnect_domain_gpus: PositiveInt | None = Field(
        default=None,
        description="GPUs sharing the full-bandwidth fabric: 8 on HGX, 2 for bridged pairs, 72 for NVL72, 1 when none",
    )
    interconnect_latency_s: PositiveFloat | None = Field(
        default=None, description="small-message all-reduce latency within the domain, seconds"
    )
    pcie_bytes_per_s: PositiveFloat | None = Field(
        default=None, description="host link bandwidth, one direction (what a group larger than the domain gets)"
    )
    pcie_latency_s: PositiveFloat | None = Field(
        default=None, description="small-message all-reduce latency over PCIe (beyond the domain), seconds"
    )
    interconnect_source: str = Field(default="", description="source of the interconnect kind, domain and latencies")
    mesh_links_per_gpu: PositiveInt | None = Field(
        default=None,
        description="links of a fully connected mesh (no switch; AMD Infinity Fabric: 7): one to each peer, so a group"
        " of g GPUs in the domain uses g - 1 of them; None on a switched fabric (NVSwitch), where any group gets it all",
    )
    mesh_link_bytes_per_s: PositiveFloat | None = Field(
        default=None, description="one mesh link's bandwidth, one direction (MI300X: 64e9); with mesh_links_per_gpu"
    )
    mesh_source: str = Field(default="", description="source of the mesh's link count and per-link bandwidth")
    kernel_rates_from: str = Field(
        default="",
        description="the catalog GPU of the same vendor whose kernel rates, as fractions of the datasheet, this GPU "
        "takes where it has no published figure of its own (planner.engines.kernel_curves.sibling_of): the nearest "
        "part with published rates ('MI300X' for MI325X, the same compute die); '': its architecture's measured GPU",
    )
    kernel_rates_source: str = Field(default="", description="why kernel_rates_from names that GPU, with its source")
    ecc_reserved_fraction: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="share of physical memory ECC takes when it is on by default (1/16 on GDDR cards; 0 on HBM)",
    )
    ecc_source: str = ""
    tdp_w: PositiveFloat
    prices: tuple[Price, ...] = Field(
        default=(), strict=False, description="dated quotes; the first of a kind is the default"
    )
    form_factor: str = ""
    weight_precisions: tuple[str, ...] | None = Field(
        default=None,
        strict=False,
        description="the weight formats (catalog precision names) an engine runs on this GPU, where it lacks some "
        "(T4, Turing: no bf16 or fp8 tensor cores); a format not listed is refused; None: any format",
    )
    weight_precisions_source: str = Field(default="", description="where weight_precisions comes from")

    def takes_weights(self, precision: str) -> bool:
        """Whether an engine runs weights in ``precision`` (a catalog name) on this GPU (``weight_precisions``; an
        NVIDIA-only format, ``NVIDIA_ONLY_WEIGHTS``, on no other vendor's GPU)."""
        if precision in NVIDIA_ONLY_WEIGHTS and self.vendor != "NVIDIA":
            return False
        return self.weight_precisions is None or precision in self.weight_precisions

    def weight_formats_among(self, names: Iterable[str]) -> tuple[str, ...] | None:
        """The formats of ``names`` (catalog precision names) an engine runs on this GPU (``takes_weights``); None:
        any (an NVIDIA GPU without ``weight_precisions``)."""
        if self.weight_precisions is None and self.vendor == "NVIDIA":
            return None
        return tuple(n for n in names if self.takes_weights(n))

    @field_validator(*(k for k in GPU_BOUNDS if k != "peak_flop_per_s"))
    @classmethod
    def _plausible(cls, value: float | None, info: ValidationInfo) -> float | None:
        """A number within ``GPU_BOUNDS``: a unit typo (141 for 141 GiB) is refused with what it likely meant."""
        if value is None or (info.context or {}).get("plausible", True) is False:
            return value
        problem = GPU_BOUNDS[info.field_name].problem(info.field_name, value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("peak_flop_per_s")
    @classmethod
    def _plausible_peaks(cls, value: dict, info: ValidationInfo) -> dict:
        if (info.context or {}).get("plausible", True) is False:
            return value
        bound = GPU_BOUNDS["peak_flop_per_s"]
        problems = [bound.problem(f"peak_flop_per_s.{key}", v) for key, v in value.items()]
        if any(problems):
            raise ValueError("; ".join(p for p in problems if p))
        return value

    def _sparse_mix(self) -> str | None:
        """Why two peaks look like a dense and a 'with sparsity' figure side by side (``PEAK_RATIOS``), or None."""
        peaks = self.peak_flop_per_s
        for high, low, ratio, vendors in PEAK_RATIOS:
            if self.vendor not in vendors or high not in peaks or low not in peaks:
                continue
            seen = peaks[high] / peaks[low]
            if abs(seen / ratio - 0.5) <= 0.06:
                sparse, dense = low, high
            elif abs(seen / ratio - 2) <= 0.25:
                sparse, dense = high, low
            else:
                continue
            return (
                f"peak_flop_per_s: {high} = {_engineering(peaks[high])} is {seen:.1f}x {low} = "
                f"{_engineering(peaks[low])}, where dense {high} is {ratio:g}x {low} on {self.vendor} tensor cores: "
                f"{sparse} looks like a datasheet 'with sparsity' figure beside a dense {dense}; peaks are dense "
                f"(the starred figures halved): {sparse} = {_engineering(peaks[sparse] / 2)}?"
            )
        return None

    @model_validator(mode="before")
    @classmethod
    def _old_price(cls, data: object) -> object:
        if isinstance(data, dict) and "price" in data:
            raise ValueError(
                "'price' is now 'prices', a list of quotes: [[gpu.prices]] with kind = "
                '"on-demand" | "spot" | "reserved" | "purchase", usd_per_gpu_hour or purchase_usd, provider, date, source'
            )
        return data

    @property
    def engine_device_name(self) -> str:
        """The name an engine reads from the device: ``device_name``, else the catalog name (the same verdict on
        every name rule an engine profile holds: tests/test_vllm_batching_releases.py)."""
        return self.device_name or self.name

    def price(self, kind: PriceKind = "on-demand") -> Price | None:
        """The catalog's price of this kind, the one every surface defaults to (``planner plan``, the Excel
        functions, the what-if workbook, ``planner export``): its only quote, or one made of the median of all of
        them (provider 'median of N quotes: ...', the oldest date, billed in ``median_billing_unit``); None when it
        has none. The first listed quote is no better a default than the others."""
        quotes = [p for p in self.prices if p.kind == kind]
        if len(quotes) <= 1:
            return quotes[0] if quotes else None
        amount = statistics.median(p.amount for p in quotes)
        from planner.units import fmt_usd_per_gpu_hour  # each quote as used: the one price formatter (no "$")

        listed = ", ".join(f"{p.provider} {fmt_usd_per_gpu_hour(p.amount)[1:]} ({p.date})" for p in quotes)
        value = {"purchase_usd": amount} if kind == "purchase" else {"usd_per_gpu_hour": amount}
        return Price(
            kind=kind,
            provider=f"{MEDIAN_PROVIDER_PREFIX}{len(quotes)} quotes: {listed}",
            date=min(quotes, key=lambda p: p.quoted_on()).date,
            source=" | ".join(p.source for p in quotes),
            instance_gpus=self.median_billing_unit(kind, amount),
            **value,
        )

    def quotes_at_or_below(self, kind: PriceKind, amount: float) -> list[Price]:
        """The quotes of ``kind`` at or below ``amount`` (a median): those that rent their unit at that price or
        less."""
        return [p for p in self.prices if p.kind == kind and p.amount <= amount * (1 + 1e-12)]

    def median_billing_unit(self, kind: PriceKind, amount: float) -> int:
        """GPUs a median price of ``kind`` (``amount``) is billed in: the smallest unit that a quote at or below the
        median bills in (``Price.instance_gpus``), the one rule of every surface (``price``).

        A median of an even count of quotes is no provider's rate, so it has no unit of its own. The largest unit of
        all the quotes (the rule before trial 23, F4) billed H100's $3.595, the median of RunPod's $2.69 and
        Hyperstack's $3.20 per GPU and Lambda's $3.99 and CoreWeave's $6.155 in 8-GPU instances, in 8-GPU lots: a
        unit no provider rents at that rate, and a fleet that grew 8 GPUs at a time. A quote at or below the median
        rents its unit at the median's rate or less, so the fleet billed in that unit can be had for the median's
        money: H100's and H200's medians ($3.595, $5.1475: Hyperstack's $3.99 per GPU) bill per GPU. Where every
        such quote bills in 8s, so does the median."""
        return min(p.instance_gpus for p in self.quotes_at_or_below(kind, amount))

    def quote(self, kind: PriceKind = "on-demand", basis: str | None = None) -> Price | None:
        """The catalog quote of ``kind`` a cost is at under ``basis`` (a review's option ``price_basis``, ``planner
        plan --price-basis``): with None or "median", ``price`` (the only quote, or the median billed in
        ``median_billing_unit``); with a provider's name, that provider's first quote of the kind (names compared
        case-insensitively from the start: "Hyperstack" takes "Hyperstack (reserved contract)"), None where it has
        none (each surface says what then: ``planner plan`` refuses, a review pays the median)."""
        if not names_provider(basis):
            return self.price(kind)
        wanted = basis.strip().lower()
        return next((p for p in self.prices if p.kind == kind and p.provider.lower().startswith(wanted)), None)

    def highest_rental_quote(self) -> Price | None:
        """The dearest of the GPU's rental quotes per GPU-hour (on-demand, reserved or spot; not a purchase), the bound
        a typed rent is checked against (``planner.units.RENT_IMPLAUSIBLE_FACTOR`` times it: an instance's price
        typed per GPU); None when it has no rental quote."""
        quotes = [p for p in self.prices if p.kind != "purchase"]
        return max(quotes, key=lambda p: p.usd_per_gpu_hour) if quotes else None

    @model_validator(mode="after")
    def _check(self) -> Gpu:
        if self.ecc_reserved_fraction > 0 and not self.ecc_source:
            raise ValueError("ecc_reserved_fraction needs ecc_source")
        if self.device_name and not self.device_name_source:
            raise ValueError("device_name needs device_name_source (where the driver's name for the part is printed)")
        if self.interconnect_kind == "pcie" and self.interconnect_domain_gpus not in (None, 1):
            raise ValueError("interconnect_kind 'pcie' has interconnect_domain_gpus = 1 (no GPU-to-GPU fabric)")
        if (self.mesh_links_per_gpu is None) != (self.mesh_link_bytes_per_s is None):
            raise ValueError("mesh_links_per_gpu and mesh_link_bytes_per_s go together (a mesh's links and their rate)")
        if self.mesh_links_per_gpu is not None:
            if not self.mesh_source:
                raise ValueError("mesh_links_per_gpu needs mesh_source")
            total = self.mesh_links_per_gpu * self.mesh_link_bytes_per_s
            if self.interconnect_bytes_per_s is None or abs(total / self.interconnect_bytes_per_s - 1) > 0.01:
                raise ValueError(
                    f"mesh_links_per_gpu x mesh_link_bytes_per_s = {total:g} B/s should equal interconnect_bytes_per_s "
                    f"({self.interconnect_bytes_per_s}): a mesh's aggregate is its links'"
                )
        if "fp16" not in self.peak_flop_per_s and "bf16" not in self.peak_flop_per_s:
            raise ValueError("peak_flop_per_s needs an fp16 or bf16 entry")
        sparse = self._sparse_mix()
        if sparse:
            raise ValueError(sparse)
        if self.weight_precisions is not None and not self.weight_precisions_source:
            raise ValueError("weight_precisions needs weight_precisions_source (datasheet, engine kernels' minimum SM)")
        if self.weight_precisions is not None and not self.weight_precisions:
            raise ValueError("weight_precisions lists at least one format (leave it out for any format)")
        if self.engine_visible_memory_bytes is not None:
            if self.engine_visible_memory_bytes > self.memory_bytes:
                raise ValueError("engine_visible_memory_bytes exceeds memory_bytes")
            if not self.engine_visible_memory_source:
                raise ValueError("engine_visible_memory_bytes needs engine_visible_memory_source")
        return self


class Moe(BaseModel):
    """Mixture-of-experts shape of the MLP blocks."""

    model_config = ENTRY_CONFIG

    num_experts: PositiveInt
    experts_per_token: PositiveInt
    expert_intermediate_size: PositiveInt
    num_shared_experts: int = Field(default=0, ge=0)
    shared_expert_intermediate_size: int = Field(default=0, ge=0, description="per shared expert")
    dense_layers: int = Field(
        default=0, ge=0, description="leading layers with a dense MLP (DeepSeek first_k_dense_replace)"
    )
    layer_step: PositiveInt = Field(
        default=1,
        description="after the leading dense layers, layer i (from 0) is MoE when (i + 1) % layer_step == 0 and dense "
        "otherwise (Llama 4 interleave_moe_layer_step, Qwen decoder_sparse_step); 1: every layer",
    )
    expert_bias: bool = Field(default=False, description="expert projections carry biases (gpt-oss)")
    router_bias: bool = False
    shared_expert_gate: bool = Field(
        default=False, description="a hidden -> 1 sigmoid gate on the shared expert (Qwen2-MoE, Qwen3-Next, Qwen3.5)"
    )

    @model_validator(mode="after")
    def _check(self) -> Moe:
        if self.experts_per_token > self.num_experts:
            raise ValueError("experts_per_token exceeds num_experts")
        return self


class BlockFp8Checkpoint(BaseModel):
    """A block-FP8 checkpoint of a 16-bit model published by its own makers (Qwen's "-FP8" repositories): its weights
    are FP8 with one scale per ``weight_block_size`` x ``weight_block_size`` block (config.json
    ``quantization_config.weight_block_size``), so engines need whole blocks of every split width on each GPU
    (``planner.model.memory.tp_blocks_ok``). Planning the model with fp8 weights plans per-tensor FP8 (the 16-bit
    checkpoint quantized online); ``planner.deploy.block_checkpoint_note`` says so where this checkpoint could not
    be split the same way."""

    model_config = ENTRY_CONFIG

    hf_id: str = Field(min_length=3, description="the checkpoint's hub name (Qwen/Qwen3-235B-A22B-FP8)")
    weight_block_size: PositiveInt = Field(description="config.json quantization_config.weight_block_size [b, b] -> b")
    source: str = Field(description="where the checkpoint and its block size are stated; no placeholder")

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return check_source(value, "block_fp8_checkpoint.source")


class Mla(BaseModel):
    """Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds a compressed latent per layer."""

    model_config = ENTRY_CONFIG

    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: int | None = Field(default=None, ge=1)


class LinearAttention(BaseModel):
    """Linear-attention layers (Gated DeltaNet: Qwen3-Next, Qwen3.5): a fixed-size state per sequence, no per-token KV.

    Each such layer keeps, per sequence, a recurrent state of value heads x key dim x value dim and a causal-conv
    state of (conv kernel - 1) x (2 x key heads x key dim + value heads x value dim), whatever the context
    (vLLM ``MambaStateShapeCalculator.gated_delta_net_state_shape``). The other layers use full attention.
    """

    model_config = ENTRY_CONFIG

    layers: PositiveInt = Field(description="how many layers are linear (config layer_types 'linear_attention')")
    pattern: str = Field(default="", description="which layers, in words (full_attention_interval)")
    num_key_heads: PositiveInt = Field(description="linear_num_key_heads")
    num_value_heads: PositiveInt = Field(description="linear_num_value_heads")
    key_head_dim: PositiveInt = Field(description="linear_key_head_dim")
    value_head_dim: PositiveInt = Field(description="linear_value_head_dim")
    conv_kernel: PositiveInt = Field(description="linear_conv_kernel_dim")
    state_bytes_per_element: PositiveInt = Field(
        default=2,
        description="bytes of one recurrent-state value: 4 where config.json sets mamba_ssm_dtype float32 "
        "(Qwen3.5), else the model's 16-bit dtype (vLLM mamba_ssm_cache_dtype 'auto')",
    )
    conv_state_bytes_per_element: PositiveInt = Field(default=2, description="conv state: the model's dtype")

    @property
    def key_dim(self) -> int:
        return self.num_key_heads * self.key_head_dim

    @property
    def value_dim(self) -> int:
        return self.num_value_heads * self.value_head_dim

    @property
    def recurrent_state_elements(self) -> int:
        """Per layer and sequence: value heads x key head dim x value head dim."""
        return self.num_value_heads * self.key_head_dim * self.value_head_dim

    @property
    def conv_state_elements(self) -> int:
        """Per layer and sequence: (kernel - 1) x conv channels (q, k and v: 2 x key dim + value dim)."""
        return (self.conv_kernel - 1) * (2 * self.key_dim + self.value_dim)

    @property
    def state_bytes_per_layer(self) -> int:
        """Bytes one linear layer holds per sequence: recurrent x its bytes + conv x its bytes."""
        return (
            self.recurrent_state_elements * self.state_bytes_per_element
            + self.conv_state_elements * self.conv_state_bytes_per_element
        )


#: The letters of a Mamba-2 hybrid's ``hybrid_override_pattern`` and the block each stands for.
PATTERN_BLOCKS = {"M": "Mamba-2", "*": "attention", "-": "MLP", "E": "MoE"}
_PATTERN_LETTERS = ", ".join(f"{letter} ({block})" for letter, block in PATTERN_BLOCKS.items())


def _blocks(letter: str) -> property:
    """A ``Mamba2`` property: how many blocks of one kind the pattern holds (the count of its letter)."""

    def count(self: Mamba2) -> int:
        return self.pattern.count(letter)

    count.__doc__ = f"{PATTERN_BLOCKS[letter]} blocks: {letter!r} in the pattern."
    return property(count)


class Mamba2(BaseModel):
    """Mamba-2 hybrid layout (NVIDIA Nemotron-H, Nemotron Nano 2, Nemotron 3 Nano): one mixer or MLP per block.

    ``pattern`` is config.json's ``hybrid_override_pattern``, one character per block (``num_layers`` blocks): ``M`` a
    Mamba-2 mixer, ``*`` self-attention (GQA, no MLP), ``-`` a dense MLP, ``E`` a MoE block. A Mamba-2 layer keeps, per
    sequence, a conv state of (conv kernel - 1) x (heads x head dim + 2 x groups x state size) and an SSM state of
    heads x head dim x state size, whatever the context (vLLM 0.33.0 ``MambaStateShapeCalculator.mamba2_state_shape``,
    vllm/model_executor/layers/mamba/mamba_utils.py lines 186-211); only the ``*`` blocks cache tokens.
    """

    model_config = ENTRY_CONFIG

    pattern: str = Field(min_length=1, description=f"hybrid_override_pattern: {_PATTERN_LETTERS}")
    num_heads: PositiveInt = Field(description="mamba_num_heads")
    head_dim: PositiveInt = Field(description="mamba_head_dim")
    state_size: PositiveInt = Field(description="ssm_state_size (d_state)")
    n_groups: PositiveInt = Field(description="n_groups: B and C are shared by heads in a group")
    conv_kernel: PositiveInt = Field(default=4, description="conv_kernel (d_conv)")
    conv_bias: bool = Field(default=True, description="use_conv_bias")
    ssm_state_bytes_per_element: PositiveInt = Field(
        default=2,
        description="bytes of one SSM-state value: the model's 16-bit dtype under vLLM's mamba_ssm_cache_dtype "
        "'auto'; 4 where the model card serves it with --mamba-ssm-cache-dtype float32 or config.json's "
        "mamba_ssm_cache_dtype is 'float32' (vLLM's NemotronHForCausalLMConfig copies that key into the cache config)",
    )
    conv_state_bytes_per_element: PositiveInt = Field(default=2, description="conv state: the model's dtype")
    quantized_kept_16bit_blocks: tuple[int, ...] = Field(
        default=(),
        strict=False,
        description="blocks (0-based, config.json's backbone.layers.N) whose mixer (a Mamba-2 mixer's projections, an "
        "attention layer's q/k/v/o) the model's published quantized checkpoints leave in bf16 (their hf_quant_config "
        "exclude_modules); with any, every Mamba-2 layer's conv1d is bf16 too (ModelOpt never quantizes it). Empty: "
        "every mixer is quantized with the rest",
    )

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        bad = sorted(set(v) - PATTERN_BLOCKS.keys())
        if bad:
            raise ValueError(f"pattern has {bad!r}; use {_PATTERN_LETTERS} only")
        if "*" not in v:
            raise ValueError("pattern needs at least one attention block '*' (a pure Mamba model is not supported)")
        return v

    @model_validator(mode="after")
    def _kept_blocks_are_mixers(self) -> Mamba2:
        bad = [
            i for i in self.quantized_kept_16bit_blocks if not (0 <= i < len(self.pattern) and self.pattern[i] in "M*")
        ]
        if bad:
            raise ValueError(
                f"quantized_kept_16bit_blocks {bad} are not Mamba-2 ('M') or attention ('*') blocks of the pattern "
                f"(0-based, {len(self.pattern)} blocks)"
            )
        return self

    mamba_layers = _blocks("M")
    attention_layers = _blocks("*")
    mlp_blocks = _blocks("-")
    moe_blocks = _blocks("E")

    @property
    def inner_size(self) -> int:
        """d_inner = heads x head dim (the x and z streams)."""
        return self.num_heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        """conv_dim = d_inner + 2 x groups x state size (x, B and C go through the causal conv)."""
        return self.inner_size + 2 * self.n_groups * self.state_size

    @property
    def state_bytes_per_layer(self) -> int:
        """Bytes one Mamba-2 layer holds per sequence: (kernel - 1) x conv_dim x its bytes + heads x head dim x
        state size x its bytes."""
        return (self.conv_kernel - 1) * self.conv_channels * self.conv_state_bytes_per_element + (
            self.num_heads * self.head_dim * self.state_size * self.ssm_state_bytes_per_element
        )


class SparseAttention(BaseModel):
    """DeepSeek Sparse Attention (DSA: DeepSeek-V3.2, GLM-5): a lightning indexer picks ``top_k`` cached tokens.

    Every full-attention layer still caches every token (the MLA latent, plus the indexer's own key), but a query
    attends to at most ``top_k`` of them; the indexer scores all cached tokens with ``index_n_heads`` heads of
    ``index_head_dim`` (DeepSeek-V3.2-Exp paper, section 2.1).
    """

    model_config = ENTRY_CONFIG

    top_k: PositiveInt = Field(description="index_topk: tokens each query attends to")
    index_n_heads: PositiveInt
    index_head_dim: PositiveInt
    indexer_cache_bytes_per_token: PositiveInt = Field(
        default=132,
        description="bytes of one token's indexer key per layer: fp8 key (index_head_dim B) + one fp32 scale per "
        "128 values (vLLM's indexer cache: head_dim + head_dim // 128 x 4 = 132 B)",
    )


class NasBlocks(BaseModel):
    """Per-layer shapes of a NAS-pruned transformer (DeciLM, vLLM ``DeciLMForCausalLM`` / ``NemotronNAS``: NVIDIA
    Llama-3.3-Nemotron-Super-49B-v1), from config.json's ``block_configs``, one entry per layer.

    A layer's attention is GQA with all ``num_attention_heads`` query heads and ``num_attention_heads //
    n_heads_in_group`` KV heads, a ``no_op`` (skipped: no weights, no norm, no KV cache) or ``replace_with_linear``
    (one hidden x hidden linear); its FFN is a SwiGLU MLP of width ``int(2 x ffn_mult x hidden / 3)`` rounded up to a
    multiple of 256 (``_ffn_mult_to_intermediate_size``), a ``no_op`` or a hidden x hidden linear. A present attention
    or FFN has its own RMSNorm (vLLM ``DeciLMDecoderLayer``, vllm/model_executor/models/nemotron_nas.py, commit
    00bd1493; NVIDIA-NeMo/Automodel nemo_automodel/components/models/decilm/layers.py ``Block``, commit 973123ec).
    """

    model_config = ENTRY_CONFIG

    kv_heads: tuple[int, ...] = Field(
        strict=False,
        description="per layer: KV heads (num_attention_heads // n_heads_in_group); 0: attention no_op or linear",
    )
    ffn_intermediate: tuple[int, ...] = Field(
        strict=False, description="per layer: the SwiGLU MLP's width from ffn_mult; 0: FFN no_op or linear"
    )
    attention_linear: tuple[int, ...] = Field(
        default=(), strict=False, description="layers (0-based) whose attention is replace_with_linear (kv_heads 0)"
    )
    ffn_linear: tuple[int, ...] = Field(
        default=(), strict=False, description="layers (0-based) whose FFN is replace_with_linear (ffn_intermediate 0)"
    )

    @model_validator(mode="after")
    def _check(self) -> NasBlocks:
        for name, values in (("kv_heads", self.kv_heads), ("ffn_intermediate", self.ffn_intermediate)):
            bad = [i for i, v in enumerate(values) if v < 0]
            if bad:
                raise ValueError(f"nas.{name} has negative values at layers {bad} (0 means no_op or linear)")
        if len(self.kv_heads) != len(self.ffn_intermediate):
            raise ValueError(
                f"nas.kv_heads has {len(self.kv_heads)} layers but nas.ffn_intermediate has "
                f"{len(self.ffn_intermediate)}: one entry per layer in each"
            )
        for name, layers, widths, what in (
            ("attention_linear", self.attention_linear, self.kv_heads, "kv_heads"),
            ("ffn_linear", self.ffn_linear, self.ffn_intermediate, "ffn_intermediate"),
        ):
            if len(set(layers)) != len(layers):
                raise ValueError(f"nas.{name} lists a layer twice: {sorted(layers)}")
            bad = [i for i in layers if not (0 <= i < len(widths)) or widths[i] != 0]
            if bad:
                raise ValueError(
                    f"nas.{name} {bad}: not layers (0-based, {len(widths)} layers) whose nas.{what} is 0 "
                    "(a linear-replaced block has no heads or MLP width of its own)"
                )
        if not any(self.kv_heads):
            raise ValueError("nas.kv_heads needs at least one attention layer (a non-zero entry)")
        return self

    @property
    def attention_layers(self) -> int:
        """Layers with GQA attention (a KV cache): non-zero ``kv_heads``."""
        return sum(1 for k in self.kv_heads if k)

    @property
    def mlp_layers(self) -> int:
        """Layers with a SwiGLU MLP: non-zero ``ffn_intermediate``."""
        return sum(1 for w in self.ffn_intermediate if w)

    @property
    def attention_blocks(self) -> int:
        """Layers whose attention runs (GQA or its linear replacement), each with an input RMSNorm."""
        return self.attention_layers + len(self.attention_linear)

    @property
    def ffn_blocks(self) -> int:
        """Layers whose FFN runs (SwiGLU MLP or its linear replacement), each with a post-attention RMSNorm."""
        return self.mlp_layers + len(self.ffn_linear)


class Model(_Entry):
    """A decoder-only transformer, as its published config.json describes it."""

    hf_id: str = ""
    family: str = ""
    num_layers: PositiveInt
    hidden_size: PositiveInt
    num_attention_heads: PositiveInt
    num_kv_heads: PositiveInt
    head_dim: PositiveInt = Field(description="from config.json; not always hidden_size / heads")
    intermediate_size: PositiveInt = Field(description="dense MLP width")
    vocab_size: PositiveInt
    tie_word_embeddings: bool
    max_context: PositiveInt
    native_precision: str = Field(description="precision the published weights are stored in")
    native_expert_precision: str | None = Field(
        default=None, description="MoE expert weights stored in another format (gpt-oss: mxfp4)"
    )
    weight_block_size: PositiveInt | None = Field(
        default=None,
        description="config.json quantization_config.weight_block_size of the published checkpoint (block-FP8: "
        "[128, 128] -> 128); engines need every tensor-parallel shard to hold whole blocks",
    )
    block_fp8_checkpoint: BlockFp8Checkpoint | None = Field(
        default=None,
        description="the block-FP8 checkpoint its makers publish of a 16-bit model ([model.block_fp8_checkpoint]); "
        "fp8 weights planned on the model's own name are per-tensor FP8, not this checkpoint",
    )
    gated_mlp: bool = Field(default=True, description="SwiGLU/GeGLU (3 matrices) rather than 2")
    attention_bias: bool = Field(default=False, description="q, k, v projections carry biases (Qwen2)")
    attention_output_bias: bool = False
    qk_norm: bool = Field(default=False, description="per-head RMSNorm on q and k (Qwen3)")
    attention_sinks: bool = Field(default=False, description="one learned sink logit per head (gpt-oss)")
    norms_per_layer: PositiveInt = Field(default=2, description="RMSNorm/LayerNorm vectors per layer (Gemma 2: 4)")
    moe: Moe | None = None
    mla: Mla | None = None
    linear_attention: LinearAttention | None = None
    sparse_attention: SparseAttention | None = None
    mamba: Mamba2 | None = Field(
        default=None, description="Mamba-2 hybrid (Nemotron-H): num_layers counts the pattern's blocks"
    )
    nas: NasBlocks | None = Field(
        default=None,
        description="NAS-pruned layers (DeciLM: Llama-3.3-Nemotron-Super-49B-v1): per-layer KV heads and MLP widths; "
        "num_kv_heads is then their gcd and intermediate_size the widest",
    )
    attention_output_gate: bool = Field(
        default=False,
        description="gated attention (Qwen3-Next, Qwen3.5 attn_output_gate): q_proj also emits a per-head sigmoid "
        "gate, doubling its width",
    )
    sliding_window: PositiveInt | None = Field(default=None, description="tokens a sliding-window layer attends to")
    sliding_window_layers: int = Field(default=0, ge=0, description="how many layers use the window")
    sliding_window_pattern: str = Field(default="", description="which layers, in words (e.g. 'every other layer')")
    attention_chunk_size: PositiveInt | None = Field(
        default=None,
        description="tokens per chunk of a chunked-attention layer (Llama 4): a token attends only to earlier "
        "tokens of its own chunk, so such a layer caches at most one chunk",
    )
    chunked_attention_layers: int = Field(default=0, ge=0, description="how many layers use chunked attention")
    chunked_attention_pattern: str = Field(default="", description="which layers, in words")
    extra_params: int = Field(default=0, ge=0, description="parameters outside the decoder (vision encoder, MTP)")
    extra_params_note: str = ""
    extra_params_loaded: bool = Field(
        default=True,
        description="engines load the extra parameters with the model (a vision tower: yes; DeepSeek-V3's MTP "
        "module: only for speculative decoding)",
    )
    mtp_layers: int = Field(
        default=0,
        ge=0,
        description="multi-token-prediction layers the checkpoint ships (config num_nextn_predict_layers, "
        "mtp_num_hidden_layers): the draft of MTP speculative decoding (planner.serving.speculative); 0: none",
    )
    mtp_params: int = Field(
        default=0,
        ge=0,
        description="parameters of those layers, the part of extra_params that MTP speculative decoding loads "
        "(DeepSeek-V3: all 13,463,426,304; Qwen3.5: the MTP layer, not the vision tower)",
    )
    mtp_shared_params: int = Field(
        default=0,
        ge=0,
        description="parameters of mtp_params that are the checkpoint's stored copies of the input embedding and "
        "output head (vocab x hidden each: DeepSeek-V3's model.layers.61.embed_tokens and shared_head.head, "
        "2 x 129280 x 7168 = 1,853,358,080), which the engines replace by the target's own tensors "
        "(planner.engines.architecture.mtp_held_params): a run speculating with MTP holds mtp_params less these; "
        "0 where the checkpoint stores none (GLM-4.6, Qwen3.5)",
    )
    mtp_loaded: bool = Field(
        default=False,
        description="not a catalog field: set on the variant a run speculating with MTP serves "
        "(planner.serving.speculative.with_mtp_loaded), whose weights then hold mtp_params - mtp_shared_params more",
    )
    draft_weight_bytes: float = Field(
        default=0.0,
        ge=0,
        description="not a catalog field: set on the variant a run speculating with a separate draft (an EAGLE-3 "
        "head) serves (planner.serving.speculative.with_draft_held): the draft's weights held in GPU memory beside "
        "the model's, bytes at the draft's own precision, split over the group as the model's are",
    )
    draft_kv_elements_per_token: float = Field(
        default=0.0,
        ge=0,
        description="not a catalog field: KV values per token that separate draft caches at the KV precision (an "
        "EAGLE-3 head's one decoder layer: 2 x KV heads x head dim); MTP layers' KV follows from mtp_loaded",
    )
    draft_kv_heads: int = Field(
        default=0,
        ge=0,
        description="not a catalog field: the KV heads of that draft's attention, split or replicated over the group "
        "as vLLM does a model's (0: as the model's own)",
    )
    published_params_total: PositiveInt
    published_params_active: PositiveInt | None = None
    published_params_source: str = Field(description="where published_params_total comes from; no placeholder")
    published_active_excludes_embedding: bool = Field(
        default=False, description="the published active count leaves out the input embedding (gpt-oss)"
    )
    published_total_includes_tied_copy: bool = Field(
        default=False,
        description="the published (safetensors) total also counts a stored copy of the tied output head "
        "(vocab x hidden) that tie_word_embeddings makes redundant (Qwen3-0.6B, Qwen3-1.7B)",
    )

    @field_validator("published_params_source")
    @classmethod
    def _params_source(cls, value: str) -> str:
        return check_source(value, "published_params_source")

    @model_validator(mode="after")
    def _check(self) -> Model:
        if self.num_attention_heads % self.num_kv_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) is not a multiple of num_kv_heads ({self.num_kv_heads})"
            )
        if self.sliding_window_layers > self.num_layers:
            raise ValueError("sliding_window_layers exceeds num_layers")
        if self.sliding_window_layers and self.sliding_window is None:
            raise ValueError("sliding_window_layers needs sliding_window")
        if self.moe is not None and self.moe.dense_layers > self.num_layers:
            raise ValueError("moe.dense_layers exceeds num_layers")
        if self.moe is not None and self.moe_layers == 0:
            raise ValueError(
                f"no layer is MoE (moe.dense_layers {self.moe.dense_layers}, moe.layer_step {self.moe.layer_step}, "
                f"{self.num_layers} layers); remove the [moe] table for a dense model"
            )
        if self.chunked_attention_layers and self.attention_chunk_size is None:
            raise ValueError("chunked_attention_layers needs attention_chunk_size")
        if self.chunked_attention_layers and self.sliding_window_layers:
            raise ValueError(
                "a model with both sliding-window and chunked-attention layers is not supported "
                "(the capacity model has one local span per model)"
            )
        if self.chunked_attention_layers > self.num_layers:
            raise ValueError("chunked_attention_layers exceeds num_layers")
        if self.linear_attention is not None:
            if self.linear_attention.layers >= self.num_layers:
                raise ValueError("linear_attention.layers must leave at least one full-attention layer")
            if self.sliding_window_layers or self.chunked_attention_layers:
                raise ValueError(
                    "a model with both linear-attention and sliding-window or chunked layers is not supported"
                )
        if self.mamba is not None:
            if len(self.mamba.pattern) != self.num_layers:
                raise ValueError(
                    f"mamba.pattern has {len(self.mamba.pattern)} blocks but num_layers is {self.num_layers}"
                )
            if self.linear_attention is not None or self.sliding_window_layers or self.chunked_attention_layers:
                raise ValueError(
                    "a Mamba-2 hybrid with linear-attention, sliding-window or chunked layers is not supported"
                )
            if (self.moe is None) != (self.mamba.moe_blocks == 0):
                raise ValueError("mamba.pattern has MoE blocks 'E' exactly when the model has a [moe] table")
        if self.nas is not None:
            self._check_nas(self.nas)
        if self.sparse_attention is not None and self.mla is None:
            raise ValueError("sparse_attention (DSA) is modelled on MLA models only (DeepSeek-V3.2, GLM-5)")
        if self.block_fp8_checkpoint is not None and (self.weight_block_size or self.native_precision == "fp8"):
            raise ValueError(
                "block_fp8_checkpoint names the block-FP8 checkpoint of a 16-bit model; this model's own weights are "
                "FP8 (native_precision / weight_block_size)"
            )
        if (self.mtp_layers > 0) != (self.mtp_params > 0):
            raise ValueError("mtp_layers and mtp_params are given together: the MTP layers and their parameters")
        if self.mtp_params > self.extra_params:
            raise ValueError(
                f"mtp_params ({self.mtp_params:,}) exceeds extra_params ({self.extra_params:,}), which counts them"
            )
        if self.mtp_shared_params > self.mtp_params:
            raise ValueError(
                f"mtp_shared_params ({self.mtp_shared_params:,}) exceeds mtp_params ({self.mtp_params:,}), which "
                "counts them"
            )
        if self.mtp_shared_params % (self.vocab_size * self.hidden_size):
            raise ValueError(
                f"mtp_shared_params ({self.mtp_shared_params:,}) counts stored copies of the embedding and output "
                f"head, each vocab_size x hidden_size = {self.vocab_size * self.hidden_size:,}: a whole number of them"
            )
        return self

    def _check_nas(self, nas: NasBlocks) -> None:
        """A NAS table describes every layer of a plain GQA transformer: one entry per layer, KV heads that divide the
        query heads, num_kv_heads their gcd, intermediate_size the widest MLP."""
        if len(nas.kv_heads) != self.num_layers:
            raise ValueError(
                f"nas.kv_heads and nas.ffn_intermediate have {len(nas.kv_heads)} entries but num_layers is "
                f"{self.num_layers}: one entry per layer (config.json block_configs)"
            )
        other = [
            name
            for name, on in (
                ("moe", self.moe is not None),
                ("mla", self.mla is not None),
                ("linear_attention", self.linear_attention is not None),
                ("mamba", self.mamba is not None),
                ("sliding_window_layers", bool(self.sliding_window_layers)),
                ("chunked_attention_layers", bool(self.chunked_attention_layers)),
            )
            if on
        ]
        if other:
            raise ValueError(f"a nas table with {', '.join(other)} is not supported (NAS layers are dense GQA)")
        if not self.gated_mlp:
            raise ValueError("a nas table describes SwiGLU MLPs (gated_mlp = true)")
        bad = [i for i, k in enumerate(nas.kv_heads) if k and self.num_attention_heads % k]
        if bad:
            raise ValueError(
                f"nas.kv_heads at layers {bad} do not divide num_attention_heads ({self.num_attention_heads})"
            )
        gcd = math.gcd(*nas.kv_heads)
        if self.num_kv_heads != gcd:
            raise ValueError(
                f"num_kv_heads is {self.num_kv_heads}; with a nas table it is the gcd of nas.kv_heads ({gcd})"
            )
        widest = max(nas.ffn_intermediate)
        if widest and self.intermediate_size != widest:
            raise ValueError(
                f"intermediate_size is {self.intermediate_size}; with a nas table it is the widest of "
                f"nas.ffn_intermediate ({widest})"
            )

    @property
    def published_params_verified(self) -> bool:
        """False where published_params_source starts "unverified" (project standard: a number no followable source
        was found for says so); catalog show, the workbook and the parameter audit print such a total as unverified."""
        return not self.published_params_source.lstrip().lower().startswith("unverified")

    @property
    def moe_layers(self) -> int:
        """Layers with a MoE block: after ``moe.dense_layers``, every ``moe.layer_step``-th layer (0 if dense).

        Layer i (0-based) is MoE when i >= dense_layers and (i + 1) is a multiple of the step: the multiples of
        step in [dense_layers + 1, num_layers], i.e. num_layers // step - dense_layers // step (no loop, so a
        huge ``num_layers`` costs nothing).
        """
        if self.moe is None:
            return 0
        if self.mamba is not None:
            return self.mamba.moe_blocks
        step = self.moe.layer_step
        return self.num_layers // step - self.moe.dense_layers // step

    @property
    def attention_kind(self) -> Literal["MHA", "GQA", "MQA", "MLA"]:
        """The full-attention layers' kind (a DSA or hybrid linear model names its attention layers')."""
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == self.num_attention_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"


class Precision(_Entry):
    """A number format for weights or KV cache, with its block-scale overhead folded into bytes per element."""

    bits_per_element: PositiveFloat = Field(description="payload bits of one value")
    scale_bits: float = Field(default=0, ge=0, description="bits of one block scale (0 when none)")
    scale_block: PositiveInt | None = Field(default=None, description="values sharing one scale")
    math: PeakKey = Field(description="which peak of the GPU matrix math runs at (weight-only formats: fp16)")
    math_fallback: PeakKey = Field(default="fp16", description="peak used where the GPU lacks `math`")
    kv_cache: bool = Field(default=True, description="usable for the KV cache")
    quantizes: Literal["all", "linear-layers"] = Field(
        default="all",
        description="which weights a checkpoint in this format stores in it: 'linear-layers' (AWQ, GPTQ, "
        "llm-compressor, ModelOpt) leaves embeddings, output head, norms and MoE routers in 16-bit",
    )
    quantizes_source: str = ""

    @model_validator(mode="after")
    def _check(self) -> Precision:
        if (self.scale_bits > 0) != (self.scale_block is not None):
            raise ValueError("scale_bits and scale_block go together")
        return self

    @property
    def bytes_per_element(self) -> float:
        """(payload bits + scale bits / block) / 8, e.g. int4 with a 16-bit scale per 128: 0.515625 B."""
        per_block = self.scale_bits / self.scale_block if self.scale_block else 0.0
        return (self.bits_per_element + per_block) / 8.0


class GpuPrice(Price):
    """A price-only catalog entry (``[[price]]`` in a user folder): one quote added to a GPU the catalog already has,
    shipped or from an earlier folder, without copying the GPU's entry (trial 18 F4: a copy froze every shipped field
    and hid later corrections). ``gpu`` is the GPU's name or an alias ("H100"); the other fields are a
    ``[[gpu.prices]]`` quote's."""

    gpu: str = Field(min_length=1, description="the GPU the quote is for: its catalog name or an alias")

    def quote(self) -> Price:
        """The quote itself, as the GPU's ``prices`` hold it."""
        return Price(**self.model_dump(exclude={"gpu"}))
