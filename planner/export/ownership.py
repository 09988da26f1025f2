"""Total cost of ownership: what one GPU costs up front and a month, bought or rented, and where each number is from.

Defaults for what surrounds a bought GPU (host server, network, host power, colocation, electricity, PUE) come
from ``catalogs/costs/ownership.toml``, each with a short label, a link, the full source and a date; a scenario
overrides any of them per option. The rules are ``planner.export.sizing``'s (docs/export.md, "Total cost of ownership"):

    capex per GPU       GPU price + (host server + network per node) / node size
    IT power per GPU    TDP + host power per node / node size
    per GPU-month       capex / amortization months + IT kW x PUE x $/kWh x 730 h + IT kW x colocation $/kW-month
    rented              $/GPU-hour x 730 h (host, network, power and building are in the hourly rate), billed in
                        whole instances of the quote's instance_gpus (or the option's node_size)
    several quotes      the median of the kind's dated quotes, or one provider's (``price_basis``); a median is billed
                        in the smallest unit a quote at or below it bills in (``Gpu.median_billing_unit``, the
                        catalog's rule: every surface's)
    reserved            one provider's rate, set beside that provider's own on-demand rate (``reserved_gap``), since
                        the on-demand price other options pay may be a median of other providers' quotes
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog import Gpu, Price
from planner.catalog.loader import shipped_catalog_dir
from planner.catalog.schema import PRICE_STALE_AFTER_DAYS
from planner.export import sizing
from planner.export.scenario import BUILTIN_DEFAULTS, RESERVED_TERMS_MONTHS, Finance, Option
from planner.units import counted, fmt_usd_per_gpu_hour

OWNERSHIP_FILE = Path("costs") / "ownership.toml"
#: The running costs of bought GPUs that no figure of the review includes (a trial: buy vs rent left them out without
#: saying so). A rent includes the provider's own, so each would add to buying's cost alone: they favour renting.
ON_PREMISES_LEFT_OUT = "maintenance and support contracts, operations staff, spares, insurance, installation"
#: How a rented option's month is billed, as the review states it (trial 26 F10: the peak fleet x 730 h, unsaid).
RENT_HOURS = "the fleet sized for the peak, billed 24 x 7 (730 h a month; no autoscaling or off-peak scale-down)"


class Figure(BaseModel):
    """One sourced default: value, unit, date, a short label with a link (for the review), the full source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(ge=0)
    unit: str
    date: str = Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")
    label: str = Field(min_length=3)
    url: str = Field(pattern=r"^https://")
    source: str = Field(min_length=10)


class NodeFigures(BaseModel):
    """A node of one GPU whose maker publishes its own figures (``[nodes."<catalog GPU name>"]``); a figure left out
    is the default node's (DGX H100's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host_server_usd: Figure | None = None
    networking_usd: Figure | None = None
    host_power_w: Figure | None = None


#: The per-node figures a GPU's own node may replace.
NODE_FIELDS = ("host_server_usd", "networking_usd", "host_power_w")


class OwnershipDefaults(BaseModel):
    """``catalogs/costs/ownership.toml``: per-node figures for an HGX/DGX-class server of ``node_gpus`` GPUs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_gpus: int = Field(gt=0)
    host_server_usd: Figure
    networking_usd: Figure
    host_power_w: Figure
    colocation_usd_per_kw_month: Figure
    power_usd_per_kwh: Figure
    pue: Figure
    #: the node of a PCIe card (``is_pcie_card``): a PCIe GPU server's host, not a DGX's (trial 32 F10)
    pcie_node: NodeFigures = NodeFigures()
    nodes: dict[str, NodeFigures] = {}

    def _own(self, gpu: Gpu) -> tuple[NodeFigures | None, ...]:
        """The node figures ``gpu`` has before the default node's: its own node's, then a PCIe card's."""
        return (self.nodes.get(gpu.name), self.pcie_node if is_pcie_card(gpu) else None)

    def node_figure(self, gpu: Gpu, field: str) -> Figure:
        """``field`` (one of ``NODE_FIELDS``) of ``gpu``'s own node where the catalog has it, else the PCIe server's
        for a PCIe card (``is_pcie_card``), else the default node's (DGX H100's)."""
        for own in self._own(gpu):
            if getattr(own, field, None) is not None:
                return getattr(own, field)
        return getattr(self, field)

    def borrowed_fields(self, gpu: Gpu) -> tuple[str, ...]:
        """The ``NODE_FIELDS`` a ``gpu`` node takes from the default node (DGX H100) for want of its own or a PCIe
        server's."""
        return tuple(f for f in NODE_FIELDS if all(getattr(o, f, None) is None for o in self._own(gpu)))


def is_pcie_card(gpu: Gpu) -> bool:
    """Whether ``gpu`` is a PCIe add-in card (L40S, L4, RTX PRO 6000, A10, RTX 4090, H100 PCIe, H100 NVL...), bought
    into a PCIe GPU server rather than an HGX/DGX baseboard: the catalog's form factor names PCIe. SXM, OAM and
    superchip parts keep the DGX H100's host (``catalogs/costs/ownership.toml``)."""
    return gpu.form_factor.startswith("PCIe")


@functools.cache
def ownership_defaults() -> OwnershipDefaults:
    """The shipped defaults (read once)."""
    path = shipped_catalog_dir() / OWNERSHIP_FILE
    return OwnershipDefaults.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Sourced:
    """A number the review used, and where it came from (a short label, a link when there is one)."""

    value: float
    label: str
    url: str = ""
    source: str = ""  # the full text, when longer than the label
    date: str = ""  # the catalog figure's date (YYYY, YYYY-MM or YYYY-MM-DD); "" for the scenario's own


@dataclass(frozen=True)
class Money:
    """What one GPU costs under the option's pricing: up front, a month, and each part's source."""

    pricing: str  # "purchase" or "cloud"
    price_kind: str  # "purchase", "on-demand", "spot" or "reserved"
    usd_per_gpu_month: float  # everything: amortized capex + opex (owned), or the rent (cloud)
    capex_usd_per_gpu: float  # GPU + host and network share, paid up front (0 when rented)
    capital_usd_per_gpu_month: float  # capex / amortization months (0 when rented)
    power_usd_per_gpu_month: float  # IT power x PUE x $/kWh x 730 h (0 when rented: in the rate)
    colocation_usd_per_gpu_month: float  # IT kW x $/kW-month (0 when rented)
    purchase_usd: float  # the GPU alone; NaN when rented
    cloud_usd_per_gpu_hour: float  # NaN when bought
    price_source: str
    price_date: str = ""
    gpu_usd: Sourced | None = None  # the parts of an owned GPU's cost (None when rented)
    host_server_usd: Sourced | None = None  # per node
    networking_usd: Sourced | None = None  # per node
    host_power_w: Sourced | None = None  # per node
    colocation_usd_per_kw_month: Sourced | None = None
    power_usd_per_kwh: Sourced | None = None
    pue: Sourced | None = None
    node_size: int = 1
    it_power_w_per_gpu: float = math.nan
    price_provider: str = ""  # who quotes the price ("scenario file" for the scenario's own quote)
    quote: Price | None = None  # the catalog quote paid (None: the scenario's own price)
    reserved_gap: str = ""  # a reserved quote set beside its provider's own on-demand rate (``reserved_gap``)
    #: straight-line depreciation a month, (capex - residual charged) / amortization months: the P&L's expense (0 when
    #: rented); ``capital_usd_per_gpu_month`` is the level payment at the cost of capital (trial 26 F6)
    depreciation_usd_per_gpu_month: float = 0.0
    #: a reserved price's contract term, months (``reserved_term``; None: not known, cash phased as if billed
    #: monthly) and where it is from
    reserved_term_months: int | None = None
    reserved_term_source: str = ""

    @property
    def financing_usd_per_gpu_month(self) -> float:
        """The cost of capital's charge in the monthly cost: level payment - straight-line depreciation (0 without a
        cost of capital, or rented). 8%, $287,070 over 36 months, no residual: $8,958.81 - $7,974.17 = $984.64."""
        return self.capital_usd_per_gpu_month - self.depreciation_usd_per_gpu_month

    @property
    def pnl_usd_per_gpu_month(self) -> float:
        """What the P&L books a month: straight-line depreciation + opex (owned); the rent (cloud)."""
        return self.depreciation_usd_per_gpu_month + self.opex_usd_per_gpu_month

    @property
    def opex_usd_per_gpu_month(self) -> float:
        """Running cost a month: power + colocation (owned) or the whole rent (cloud)."""
        if self.pricing == "cloud":
            return self.usd_per_gpu_month
        return self.power_usd_per_gpu_month + self.colocation_usd_per_gpu_month


def _pick(option: Option, field: str, default: Figure, scale: float = 1.0) -> Sourced:
    given = getattr(option, field)
    if given is not None:
        return Sourced(float(given), f"scenario file ({field})")
    note = f" x {scale:g} (node of {option.nodes_of})" if scale != 1.0 else ""
    return Sourced(
        default.value * scale, f"{default.label}, {default.date}{note}", default.url, default.source, default.date
    )


def host_basis(money: Money, gpu: Gpu) -> str:
    """Whose host server and network a bought option's capex adds, per GPU, for its price note (trial 32 F10: a
    DGX H100's host on two L40S was said only in a warning after the ranking): "host and network $1,303/GPU, a PCIe
    server's" ($10,424 + $0 over 8 GPUs, ``catalogs/costs/ownership.toml`` [pcie_node]), "... a DGX H100's",
    "... the scenario's" where it gives both; "" when rented."""
    if money.pricing != "purchase" or money.host_server_usd is None or money.networking_usd is None:
        return ""
    share = (money.host_server_usd.value + money.networking_usd.value) / money.node_size
    given = [x.label.startswith("scenario file") for x in (money.host_server_usd, money.networking_usd)]
    borrowed = ownership_defaults().borrowed_fields(gpu)
    if all(given):
        whose = "the scenario's"
    elif "host_server_usd" in borrowed and not given[0]:
        whose = "a DGX H100's"
    elif is_pcie_card(gpu) and not given[0]:
        whose = "a PCIe server's"
    else:
        whose = f"{gpu.name} node's" if not given[0] else "the scenario's host"
    return f"host and network ${share:,.0f}/GPU, {whose}"


def dated_on(date: str) -> dt.date:
    """A catalog date as a day: YYYY-MM-DD itself; YYYY-MM and YYYY count from the first day (the oldest it can be,
    as ``Price.quoted_on`` counts a month-only quote's date)."""
    parts = [int(x) for x in date.split("-")]
    return dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)


def stale_words(date: str, review_date: str) -> str:
    """ "stale: dated 2023-05, 1,315 days before the review; check a current figure" for a figure dated more than
    ``PRICE_STALE_AFTER_DAYS`` before the review's date, the rule GPU quotes are flagged by
    (``planner.export.outlook.stale_text``; trial 23 F7: the host server's 2023-05 figure was never flagged); "" for
    a newer one or an undated one (the scenario's own)."""
    if not date:
        return ""
    age = (dt.date.fromisoformat(review_date) - dated_on(date)).days
    if age <= PRICE_STALE_AFTER_DAYS:
        return ""
    return f"stale: dated {date}, {age:,} days before the review; check a current figure"


def charged_residual_share(option: Option, finance: Finance | None) -> float:
    """The residual share a bought option's monthly capital charge subtracts: [finance]'s residual_value_share, which
    is valued at the horizon's end, so only where the horizon is the amortization (36 months each by default);
    0 otherwise (``residual_left_out`` says so)."""
    if finance is None or option.amortization_months != finance.horizon_months:
        return 0.0
    return finance.residual_value_share


def horizon_residual_share(option: Option, finance: Finance) -> float:
    """The share of a bought option's capex the Ownership sheet recovers at the horizon's end: [finance]'s
    residual_value_share where the scenario gives it or the amortization ends within the horizon; where the scenario
    gives none and amortization_months runs past the horizon, the hardware's book value then, the capex the monthly
    cost has still to charge (``sizing.level_payment_balance_share``: 60 months, a 36-month horizon, no cost of
    capital: 40%), so the horizon's total and present value count what its months of the monthly cost do and rank
    as it does (trial 26 F13: amortization 60 > horizon 36 ranked buying first while the present values said renting
    was $48,078 cheaper). 0 when rented."""
    if option.pricing != "purchase":
        return 0.0
    if "residual_value_share" in finance.model_fields_set or option.amortization_months <= finance.horizon_months:
        return finance.residual_value_share
    months, h, rate = option.amortization_months, finance.horizon_months, finance.cost_of_capital
    return float(sizing.level_payment_balance_share(months, h, rate))


def book_value_note(option: Option, finance: Finance) -> str:
    """The warning that a bought option amortized past the horizon is valued at its book value at the horizon's end
    (``horizon_residual_share``); "" where it is not."""
    if option.pricing != "purchase" or option.amortization_months <= finance.horizon_months:
        return ""
    if "residual_value_share" in finance.model_fields_set:
        return ""
    share = horizon_residual_share(option, finance)
    basis = "the level payment's balance at the cost of capital" if finance.cost_of_capital else "straight line"
    return (
        f"{option.name}: amortization_months = {option.amortization_months} runs past the "
        f"{finance.horizon_months}-month horizon, so the Ownership sheet values its hardware at its book value at the "
        f"horizon's end, {share:.0%} of capex ({basis}), as its monthly cost leaves that much to charge: the horizon's "
        "total and present value then rank as the monthly costs do. Set [finance] residual_value_share to value it "
        "otherwise"
    )


def cost_of_capital_words(rate: float) -> str:
    """ "an 8.0% cost of capital", "a 5.0% cost of capital" (the article as the figure is read aloud)."""
    text = f"{rate:.1%}"
    return f"{'an' if text.startswith(('8', '11', '18')) else 'a'} {text} cost of capital"


def capital_terms(option: Option, finance: Finance) -> str:
    """How a bought option's capital is charged a month, in words: "over 36 months" (straight line), "over 36 months
    at an 8.0% cost of capital, less a 20% residual value"."""
    text = f"over {option.amortization_months} months"
    if finance.cost_of_capital:
        text += f" at {cost_of_capital_words(finance.cost_of_capital)}"
    share = charged_residual_share(option, finance)
    return text + (f", less a {share:.0%} residual value" if share else "")


def depreciation_terms(option: Option, finance: Finance) -> str:
    """The P&L's charge for a bought option's capex, in words: "straight-line over 36 months", "straight-line over
    36 months, less a 20% residual value" (the residual the monthly cost charges, ``charged_residual_share``)."""
    share = charged_residual_share(option, finance)
    text = f"straight-line over {option.amortization_months} months"
    return text + (f", less a {share:.0%} residual value" if share else "")


def amortization_rule(finance: Finance) -> str:
    """How capex becomes a monthly cost, in words, for the review's sheets: straight line without a cost of capital
    or residual value, else the level payment of ``sizing.amortized_usd_per_gpu_month``."""
    if not finance.cost_of_capital and not finance.residual_value_share:
        return "amortized straight-line (capex / amortization months)"
    return (
        "charged as the level monthly payment whose present value at the cost of capital equals the capex less the "
        "residual value's (where the horizon is the amortization), so that buying and renting compare as the "
        "Ownership sheet's present values do"
    )


def residual_left_out(option: Option, finance: Finance) -> str:
    """Why a bought option's monthly cost leaves the scenario's residual value out ("" where it does not)."""
    if option.pricing != "purchase" or not finance.residual_value_share or charged_residual_share(option, finance):
        return ""
    return (
        f"{option.name}: the residual value ({finance.residual_value_share:.0%} of capex) is valued at the horizon's "
        f"end ({finance.horizon_months} months), not when the {option.amortization_months}-month amortization ends, "
        "so the monthly cost and the ranking leave it out; the Ownership sheet counts it"
    )


#: The write-off a bought option gets when the scenario gives none, months (``scenario.BUILTIN_DEFAULTS``).
BUILTIN_MONTHS = BUILTIN_DEFAULTS["amortization_months"]
#: A bought option written off in fewer months than this most likely has years typed as months (trial 23 F6:
#: amortization_months = 3 charged a 36-month write-off in 3, 8.2x the monthly cost, without a word).
AMORTIZATION_MONTHS_LOW = 12
#: Above this many US$ per kWh, an electricity price is most likely a $/MWh figure (trial 23 F6: 80 for $80/MWh
#: gave $4.7M a month). US commercial power ran 9.74 (West North Central) to 22.74 (New England) cents per kWh in
#: April 2025 (EIA Electric Power Monthly, Table 5.6.A, released 2025-06-25,
#: https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=table_5_06_a; catalogs/costs/ownership.toml's
#: power_usd_per_kwh cites it): a dollar a kWh is over 4 times the dearest region's.
POWER_USD_PER_KWH_HIGH = 1.0
#: The range the warning quotes, US$ per kWh: EIA Table 5.6.A, April 2025, as above.
US_COMMERCIAL_USD_PER_KWH = (0.0974, 0.2274)


def money_warnings(option: Option) -> list[str]:
    """Slips of a finance input that pass its bounds, each a warning naming the value and what to write (trial 23
    F6), as ``cost_of_capital = 8`` is told it looks like a percentage: ``amortization_months`` under
    ``AMORTIZATION_MONTHS_LOW`` (years typed as months) and ``power_usd_per_kwh`` above ``POWER_USD_PER_KWH_HIGH``
    (a $/MWh figure), on a bought option, the one that uses them. Warnings, not refusals: a 6-month write-off or
    dear power may be meant."""
    if option.pricing != "purchase":
        return []
    out = []
    months = option.amortization_months
    if months < AMORTIZATION_MONTHS_LOW:
        out.append(
            f"{option.name}: amortization_months = {months} writes the purchase off in {counted(months, 'month')}; "
            f"{months} looks like years: write {months * 12} for {counted(months, 'year')} (the field is in months; "
            f"default {BUILTIN_MONTHS})"
        )
    kwh = option.power_usd_per_kwh
    if kwh is not None and kwh > POWER_USD_PER_KWH_HIGH:
        low, high = US_COMMERCIAL_USD_PER_KWH
        out.append(
            f"{option.name}: power_usd_per_kwh = {kwh:g} looks like $/MWh (US commercial power is {low:.2f}-"
            f"{high:.2f} $/kWh, EIA Table 5.6.A as catalogs/costs/ownership.toml cites); write {kwh / 1000:g} for "
            f"${kwh:g}/MWh"
        )
    return out


def quote_text(money: Money, with_gap: bool = True) -> str:
    """Who quotes the price and when, for a "Price from" cell: "Lambda, 2026-05-18"; a median's quotes each carry
    their date ("median of 2 quotes: Lambda 2.99 (2026-05-18), Hyperstack 3.20 (2026-08-26)"), so no bare date
    follows them (a trial: the oldest quote's date stood after the list, unlabelled); the provider alone where the
    price has no date (the scenario's own). A reserved quote is followed by its gap to the same provider's on-demand
    rate (``reserved_gap``), so the Ownership and Like for like sheets say what reserving saves like for like;
    ``with_gap`` False leaves it out (a sentence that compares two quotes by who gives them)."""
    dated = money.price_date and not money.price_provider.startswith("median of ")
    text = f"{money.price_provider}, {money.price_date}" if dated else money.price_provider
    if money.quote is not None and money.quote.caveat:  # "one secondary quote, low-side (no median)" (trial 33 F1)
        text = f"{text}; {money.quote.caveat}"
    return f"{text}; {money.reserved_gap}" if money.reserved_gap and with_gap else text


#: How the review's other traffic levels are sized, in words, where they are shown: the demand cases, the -/+
#: sensitivity and the charts at those levels afresh (``evaluate.sized_again``); the quarters scaled
#: (``evaluate.fleet_at``), the charts between those levels scaled from the nearest below (``evaluate.charted_fleets``).
SIZED_AFRESH = "sized afresh at that traffic (every group tried, the replicas searched again, as the plan is)"


#: What the review's cash of a reserved price assumes (trial 14 F9): the term is not known, so it is not modelled
#: (trial 26 F14: "not committed for a term" after "committed: a reserved contract" read as a contradiction).
RESERVED_PHASING = "cash phased as if billed monthly; the term's commitment is not modelled"


#: A term a quote's source states: "12-month term", "3-year commitment", "36 month contract".
_STATED_TERM = re.compile(r"\b(\d{1,2})[- ](month|year)s?[- ](?:term|commitment|contract)\b", re.IGNORECASE)


def stated_term_months(source: str) -> int | None:
    """The contract term a reserved quote's source states, months ("a 3-year commitment": 36), where it is one the
    review models (``scenario.RESERVED_TERMS_MONTHS``); None where it states none (Hyperstack's 'from' rates, whose
    term "is set per contract": catalogs/gpus.toml)."""
    found = _STATED_TERM.search(source)
    if found is None:
        return None
    months = int(found.group(1)) * (12 if found.group(2).lower() == "year" else 1)
    return months if months in RESERVED_TERMS_MONTHS else None


def reserved_term(finance: Finance | None, quote: Price | None) -> tuple[int | None, str]:
    """A reserved price's contract term, months, and where it is from: [finance] reserved_term_months where the
    scenario sets it, else the term the catalog quote's source states (``stated_term_months``), else (None, ""):
    not known, the cash phased as if billed monthly (``RESERVED_PHASING``)."""
    if finance is not None and finance.reserved_term_months is not None:
        return finance.reserved_term_months, "[finance] reserved_term_months"
    stated = stated_term_months(quote.source) if quote is not None else None
    return (stated, "the quote's source") if stated else (None, "")


def reserved_terms(result: Any) -> str:
    """What a reserved price is, in words, for the grid and the Assumptions sheet: "a 'from' rate, term set per
    contract" where its quote says so (Hyperstack's rate card: catalogs/gpus.toml), else "term as its quote states";
    with a term (``reserved_term``), "a 'from' rate; a 12-month term ([finance] reserved_term_months)"; "" for
    another kind or the scenario's own price without a term."""
    m = result.money
    q = m.quote
    if m.price_kind != "reserved":
        return ""
    if m.reserved_term_months:
        term = f"a {m.reserved_term_months}-month term ({m.reserved_term_source})"
        return f"a 'from' rate; {term}" if q is not None and "'from' rate" in q.source else term
    if q is None:
        return ""
    if "'from' rate" in q.source:
        return "a 'from' rate, term set per contract"
    return "term as its quote states"


def reserved_phasing(money: Money) -> str:
    """What the review's cash of a reserved price assumes: ``RESERVED_PHASING`` without a term; with one, the
    contracts (``finance.reserved_cash``)."""
    if not money.reserved_term_months:
        return RESERVED_PHASING
    return (
        f"each step up of the fleet signs a {money.reserved_term_months}-month contract for the GPUs added, paid "
        "monthly for its whole term (or the peak signed from month 1, where that commits less); the monthly cost "
        "shown is the horizon's reserved cash / its months"
    )


def price_kind(option: Option) -> str:
    """The kind of price an option pays: "purchase" when bought; else its price_kind (default on-demand)."""
    return "purchase" if option.pricing == "purchase" else (option.price_kind or "on-demand")


def chosen_quote(gpu: Gpu, kind: str, basis: str | None = None) -> Price | None:
    """The catalog quote of ``kind`` an option pays under ``basis``; None when the catalog has none: the catalog's
    rule (``Gpu.quote``: "median", the default, is ``Gpu.price``, the only quote or the median of all of them billed
    in ``Gpu.median_billing_unit``; a provider's name, its first quote of the kind), and where that provider has no
    quote of the kind for this GPU, the median (the scenario has checked that some GPU's quote is from it)."""
    return gpu.quote(kind, basis) or gpu.price(kind)


def billing_unit_words(money: Money, gpu: Gpu, node_size: int | None = None) -> str:
    """Where a rented option's billing unit comes from, for the Assumptions sheet: "scenario (node_size)", the
    scenario's own price's, the quote's own ("the quote's instance: Lambda bills 8 GPUs at a time"), or a median's
    rule with the quotes it rests on ("the median's: the smallest unit that a quote at or below $3.595 bills in
    (RunPod ...: 1 GPU, Hyperstack: 1 GPU): ...; Lambda, CoreWeave bill 8 at a time")."""
    if node_size:
        return "scenario (node_size)"
    q = money.quote
    if q is None:
        return "1 for your own price (node_size sets whole instances)"
    if not q.is_median:
        return f"the quote's instance: {q.provider} bills {counted(q.instance_gpus, 'GPU')} at a time"
    low = gpu.quotes_at_or_below(q.kind, q.amount)
    text = (
        f"the median's: the smallest unit that a quote at or below {fmt_usd_per_gpu_hour(q.amount)} bills in ("
        + ", ".join(f"{p.provider}: {counted(p.instance_gpus, 'GPU')}" for p in low)
        + "): the fleet is to be rented in that unit for the median's rate or less"
    )
    big = [p for p in gpu.prices if p.kind == q.kind and p.instance_gpus > q.instance_gpus]
    if big:
        most = max(p.instance_gpus for p in big)
        who = [p.provider for p in big if p.instance_gpus == most]
        text += f"; {', '.join(who)} bill{'s' * (len(who) == 1)} {most} at a time"
    return text


def provider_name(provider: str) -> str:
    """A provider without its note: "Hyperstack (reserved contract)" -> "Hyperstack"."""
    return re.sub(r"\s*\(.*\)\s*$", "", provider).strip()


def _whose(price: Price) -> str:
    """ "the median of 4 quotes" or "Lambda's": whose an on-demand price is, in a sentence."""
    if price.is_median:
        return "the median of " + price.provider.split(":")[0].removeprefix("median of ")
    return f"{provider_name(price.provider)}'s"


def reserved_gap(gpu: Gpu, reserved: Price, on_demand: Price | None) -> str:
    """A reserved quote beside its own provider's on-demand rate, then beside the on-demand price rented options pay
    (``on_demand``: the median, or the basis's provider) where that is not the same quote. Trial 23 F4: Hyperstack's
    reserved $2.72 against the median of four providers' on-demand quotes, $3.595, read as a 24% saving; Hyperstack's
    own on-demand rate, $3.20, makes it 15%. "" for a median of reserved quotes (no one provider's)."""
    if reserved.is_median:
        return ""
    who = provider_name(reserved.provider)
    own = next(
        (p for p in gpu.prices if p.kind == "on-demand" and provider_name(p.provider).lower() == who.lower()), None
    )
    mixed = ""
    if on_demand is not None and (own is None or on_demand.provider != own.provider):
        mixed = (
            f"the {1 - reserved.amount / on_demand.amount:.0%} gap to the on-demand price rented options pay, "
            f"{fmt_usd_per_gpu_hour(on_demand.amount)} ({_whose(on_demand)}), mixes providers"
        )
    if own is None:
        return f"no {who} on-demand quote in the catalog to compare like for like" + (f"; {mixed}" if mixed else "")
    text = (
        f"like for like, {who}'s own on-demand rate is {fmt_usd_per_gpu_hour(own.amount)} ({own.date}): "
        f"reserved is {1 - reserved.amount / own.amount:.0%} less"
    )
    return text + (f'; {mixed} (price_basis = "{who}" prices both at {who})' if mixed else "")


def option_money(option: Option, gpu: Gpu, finance: Finance | None = None) -> Money:
    """Cost of one GPU for this option (check_names has made sure a price exists). A bought GPU's capital charge
    a month is at ``finance``'s cost of capital, less its residual value where that is valued when the amortization
    ends (``charged_residual_share``; ``sizing.amortized_usd_per_gpu_month``); None: straight line, no residual."""
    kind = price_kind(option)
    price = chosen_quote(gpu, kind, option.price_basis)
    cat_src = f"catalog {gpu.name} {kind} price, {price.provider}, {price.date}: {price.source}" if price else ""
    date = price.date if price else ""
    if option.pricing == "cloud":
        hourly = option.cloud_usd_per_gpu_hour or price.usd_per_gpu_hour
        src = "scenario file (cloud_usd_per_gpu_hour)" if option.cloud_usd_per_gpu_hour else cat_src
        monthly = float(sizing.cloud_usd_per_gpu_month(hourly))
        gap, term, term_from = "", None, ""
        if kind == "reserved" and not option.cloud_usd_per_gpu_hour:
            gap = reserved_gap(gpu, price, chosen_quote(gpu, "on-demand", option.price_basis))
        if kind == "reserved":
            term, term_from = reserved_term(finance, None if option.cloud_usd_per_gpu_hour else price)
        return Money(
            "cloud", kind, monthly, 0.0, 0.0, 0.0, 0.0, math.nan, float(hourly), src,
            "" if option.cloud_usd_per_gpu_hour else date,
            price_provider="scenario file" if option.cloud_usd_per_gpu_hour else price.provider,
            quote=None if option.cloud_usd_per_gpu_hour else price,
            node_size=option.node_size or (1 if option.cloud_usd_per_gpu_hour else price.instance_gpus),
            reserved_gap=gap,
            reserved_term_months=term,
            reserved_term_source=term_from,
        )  # fmt: skip
    d = ownership_defaults()
    node = option.nodes_of
    scale = node / d.node_gpus
    purchase = float(option.purchase_usd or price.purchase_usd)
    gpu_src = "scenario file (purchase_usd)" if option.purchase_usd else cat_src
    host = _pick(option, "host_server_usd", d.node_figure(gpu, "host_server_usd"), scale)
    net = _pick(option, "networking_usd", d.node_figure(gpu, "networking_usd"), scale)
    host_w = _pick(option, "host_power_w", d.node_figure(gpu, "host_power_w"), scale)
    colo = _pick(option, "colocation_usd_per_kw_month", d.colocation_usd_per_kw_month)
    kwh = _pick(option, "power_usd_per_kwh", d.power_usd_per_kwh)
    pue = _pick(option, "pue", d.pue)
    capex = float(sizing.owned_capex_usd_per_gpu(purchase, host.value, net.value, node))
    rate = finance.cost_of_capital if finance is not None else 0.0
    residual = charged_residual_share(option, finance)
    capital = float(sizing.amortized_usd_per_gpu_month(capex, option.amortization_months, rate, residual))
    depreciation = float(sizing.amortized_usd_per_gpu_month(capex, option.amortization_months, 0.0, residual))
    it_w = float(sizing.it_power_w_per_gpu(gpu.tdp_w, host_w.value, node))
    power = float(sizing.power_usd_per_gpu_month(it_w, pue.value, kwh.value))
    colocation = float(sizing.colocation_usd_per_gpu_month(it_w, colo.value))
    return Money(
        "purchase",
        kind,
        capital + power + colocation,
        capex,
        capital,
        power,
        colocation,
        purchase,
        math.nan,
        gpu_src,
        "" if option.purchase_usd else date,
        Sourced(purchase, gpu_src),
        host,
        net,
        host_w,
        colo,
        kwh,
        pue,
        node,
        it_w,
        price_provider="scenario file" if option.purchase_usd else price.provider,
        quote=None if option.purchase_usd else price,
        depreciation_usd_per_gpu_month=depreciation,
    )
