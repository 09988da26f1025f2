"""The budget review's records: a tensor-parallel group tried (``Candidate``), an option sized (``Result``), a
lever applied (``Lever``) and the whole review (``Review``). Data only: ``planner.export.evaluate`` fills them,
``planner.export.review`` assembles the review, the writers lay it out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner.accuracy.calibration import CalibrationUse
from planner.accuracy.ranges import NoDataFloor, TimeRange
from planner.catalog import Gpu, Model
from planner.catalog.resolve import experts_words
from planner.engines.profiles import EngineProfile
from planner.export import sizing
from planner.export.assumptions import Assumption
from planner.export.batch_cap import EngineLimitFleet
from planner.export.finance import ReservedCash
from planner.export.memory_chain import MemoryChain
from planner.export.ownership import Money
from planner.export.quality import ModelSwitch, QualityNote, SixteenBitSwap
from planner.export.scenario import Option, Scenario
from planner.serving.fleet import Sizing


@dataclass(frozen=True)
class LoadCurve:
    """An option's planned fleet (``replicas``, fixed) under traffic from ``multipliers`` x the planned peak: each
    replica's p50 and ``percentile`` TTFT and TPOT, seconds (infinite past its simulated capacity), from the
    serving simulation (``planner.serving.fleet.sweep_within_capacity``), and the headroom:
    how much more than the planned peak the fleet takes before a ``percentile`` figure passes its goal (a
    fraction: 0.3 is 30% more traffic; ``math.inf`` when it does not pass within the curve's range)."""

    multipliers: tuple[float, ...]
    peak_requests_per_s: float  # the planned peak, the whole fleet's
    replicas: int
    percentile: float
    ttft_p50_s: tuple[float, ...]
    ttft_high_s: tuple[float, ...]
    tpot_p50_s: tuple[float, ...]
    tpot_high_s: tuple[float, ...]
    ttft_goal_s: float
    tpot_goal_s: float
    headroom: float


@dataclass(frozen=True)
class SlowEnd:
    """An option's fleet if real latency sat at the slow end of the held-out ranges under load (a sensitivity: shown,
    not applied; ``planner.export.slow_end``): the fewest replicas of the kept group and batch whose simulated
    ``percentile`` TTFT x ``ttft_ratio`` and TPOT x ``tpot_ratio`` meet the scenario's targets, with spares, whole
    nodes and the option's price. ``gpus`` 0, ``monthly_usd`` NaN and ``shortfall`` saying why where no replica count
    the search allows meets them."""

    percentile: float  # the simulated percentile the ratios multiply (the review's sizing percentile)
    ttft_ratio: float  # 1 + the slow end taken for TTFT (measured / simulated)
    tpot_ratio: float
    ttft_left_out: str  # the one source whose end was left out for TTFT ("" where the full range's end is taken)
    tpot_left_out: str
    replicas: int  # serving + spare replicas (0: not met)
    gpus: int  # GPUs, rounded as the option's (0: not met)
    monthly_usd: float  # NaN: not met
    shortfall: str = ""  # why no fleet meets the targets at the slow end ("" when one does)
    #: what set each ratio (``planner.export.slow_end.floored_ratio``): the held-out range's end ("held-out range"),
    #: the plan's own margin where it is wider ("plan's margin"), or the median of this deployment's own published
    #: figures where they are slower still ("own runs")
    ttft_basis: str = "held-out range"
    tpot_basis: str = "held-out range"
    ttft_range_ratio: float = math.nan  # 1 + the held-out range's slow end, before the floors (NaN: the ratio itself)
    tpot_range_ratio: float = math.nan
    ttft_own_figures: int = 0  # the deployment's own published figures whose median is the floor (0: none read)
    tpot_own_figures: int = 0

    @property
    def meets(self) -> bool:
        return not self.shortfall


@dataclass(frozen=True)
class OwnRunsBudget:
    """The fleet to budget where most of the option's deployment's own published ``metric`` figures ("TPOT" or
    "TTFT") exceed its margin: the option sized again on its kept group with ``latency_margin`` = ``ratio`` - 1, the
    figures' median published / predicted (``planner.export.own_runs``). ``gpus`` 0 and ``monthly_usd`` NaN where
    no fleet meets the targets at that ratio."""

    metric: str
    ratio: float  # median published / predicted of the metric's figures
    figures: int  # the metric's figures read
    beyond: int  # of which above 1 + the margin
    gpus: int
    monthly_usd: float

    @property
    def meets(self) -> bool:
        return self.gpus > 0


@dataclass(frozen=True)
class Candidate:
    """One tensor-parallel group size tried for an option."""

    gpus_per_replica: int
    batch: int  # largest batch meeting the TPOT target whose KV fits (0: none)
    tpot_s: float  # at that batch (at batch 1 when none meets)
    tpot_batch1_s: float  # NaN when the weights do not fit
    ttft_high_s: float
    ttft_mean_s: float
    tpot_by_batch_s: tuple[float, ...] = field(default=(), repr=False, compare=False)  # batch 1, 2, ...; NaN: no fit
    #: TPOT at each batch if every sequence were at the high-percentile length (what 0.1.0 sized for); for display
    tpot_long_by_batch_s: tuple[float, ...] = field(default=(), repr=False, compare=False)
    #: the time model's range for this GPU and group (``planner.accuracy.calibration.residual_range``) and the margin it gives
    time_range: TimeRange = TimeRange(0.0, 0.0, "")
    margin: float = 0.0

    def goal_s(self, target_s: float) -> float:
        """What the central prediction must meet: target / (1 + margin)."""
        return float(sizing.margin_target(target_s, self.margin))

    @property
    def fits(self) -> bool:
        return math.isfinite(self.tpot_batch1_s)

    @property
    def slots(self) -> int:
        """The most sequences a replica runs at once when each may reach the high-percentile length: what memory
        holds at that length, within the engine's max_num_seqs (the batches ``tpot_by_batch_s`` has a TPOT for); at
        least 1. ``tpot_by_batch_s`` is taken at the mean context in flight, so where that is the longer (an output's
        lognormal tail past the slot) the cap is what memory holds at it: ``Workload.batch_cap_context_tokens``, as
        the Assumptions row says. The serving simulation runs the replica with max_num_seqs set to it, and its percentiles, not the
        closed form's TPOT-best ``batch``, decide how many the traffic keeps in flight."""
        return max(sum(1 for t in self.tpot_by_batch_s if math.isfinite(t)), 1)


@dataclass(frozen=True)
class LayoutSized:
    """One layout an option was sized in where its scenario sets no ``parallelism`` and the review chose it (trial 24,
    F15: ``planner.api.layouts_to_size``, ``layout_kept``): the option so sized and judged (``review.sized``), or None
    with ``refused`` saying why the engine or model cannot run it."""

    parallelism: str
    result: Result | None
    refused: str = ""

    @property
    def words(self) -> str:
        """ "dp-ep 20 GPUs, $75,154/month", "tp: does not meet the targets (...)" or "dp-ep: not run (...)"."""
        r = self.result
        if r is None:
            return f"{self.parallelism}: not run ({self.refused})"
        if not r.meets:
            return f"{self.parallelism}: does not meet the targets ({r.shortfall})"
        return f"{self.parallelism} {r.gpus:,} GPUs, ${r.monthly_usd:,.0f}/month"


@dataclass(frozen=True)
class Result:
    """One option, sized: the chosen replica and its fleet at peak, at +-traffic_change, and over the sweep."""

    option: Option
    gpu: Gpu
    model: Model
    weight_precision: str
    kv_precision: str
    engine: EngineProfile
    money: Money
    candidates: tuple[Candidate, ...]
    replica: sizing.Replica | None
    fleet: sizing.Fleet | None
    low: sizing.Fleet | None
    high: sizing.Fleet | None
    sweep: sizing.Fleet | None
    peak_rate_per_s: float
    average_rate_per_s: float
    shortfall: str  # why it does not meet the targets ("" when it does)
    warnings: tuple[str, ...] = ()
    #: a MoE model's routed experts' precision (None: no experts); another than the weights' for gpt-oss as published
    expert_precision: str | None = None
    margin: float = 0.0  # predictions x (1 + margin) meet the targets (docs/export.md, "Margin")
    #: (low, high) residual quantiles of the time model for this GPU and the kept group (``Candidate.time_range``)
    time_range: tuple[float, float] = (0.0, 0.0)
    time_range_note: str = ""  # where that range comes from
    time_range_widened: str = ""  # why it was widened ("" when the data covers this GPU, group and model)
    #: where that range was held to measured GPUs' ends (``ranges.NoDataFloor``), None elsewhere
    time_range_floor: NoDataFloor | None = None
    tpot_goal_s: float = math.nan  # target / (1 + margin): what the central prediction must meet
    ttft_goal_s: float = math.nan
    #: the simulated run of one replica at the planned peak, when replicas were sized on percentiles (else None)
    under_load: Sizing | None = None
    #: why the simulation sized no fleet where the option was simulated (it then keeps Little's law's count); ""
    under_load_refused: str = ""
    #: each group the simulation skipped because its KV cache cannot hold the longest request drawn (no number of its
    #: replicas serves it), in ``planner plan``'s words ("2 x H100 SXM 80GB: skipped, its KV cache holds 10,144 tokens
    #: and the longest request is ..."), smallest first; () where none was, or the option was not sized under load
    groups_skipped: tuple[str, ...] = ()
    #: where every group's search for a fleet under load stopped unmet at ``evaluate``'s ``most_gpus``: that bound,
    #: GPUs (the fleet, if any meets, has at least that many; ``shortfall`` says so); None where the search did not stop
    #: there
    search_stopped_at_gpus: float | None = None
    #: the planned fleet's latency against traffic (sized on percentiles only; else None)
    load_curve: LoadCurve | None = None
    #: the fleet at the slow end of the held-out ranges under load, the end without the one source that sets it
    #: (``planner.export.slow_end``; the review's own options sized on percentiles, with the ranges' table; else None)
    slow_end: SlowEnd | None = None
    #: the same at the full range's slow end, where that differs (an end one source sets); else None
    slow_end_full_range: SlowEnd | None = None
    #: the fleet at the median ratio of the deployment's own published runs, where most exceed the margin
    #: (``planner.export.own_runs``; trial 26, F18); else None
    own_runs: OwnRunsBudget | None = None
    #: where no fleet of the kept group meets the targets at the held-out slow end: the cheapest other group size of
    #: the option whose fleet there does, sized as the plan is, its ``slow_end`` set
    #: (``planner.export.slow_end.with_group_meeting_slow_end``; trial 27 F3); else None
    slow_end_group: Result | None = field(default=None, repr=False, compare=False)
    #: the calibration file in effect and what it does to this GPU and engine (None: no calibration file)
    calibration: CalibrationUse | None = None
    #: (multiplier of the planned peak, the option sized afresh there): the sensitivity's -/+ traffic_change and the
    #: stress case, by the plan's own code (``planner.export.evaluate.sized_again``); the review's own meeting
    #: options only (``planner.export.review``), whose ``low`` and ``high`` are these fleets
    again: tuple[tuple[float, Result], ...] = field(default=(), repr=False, compare=False)
    #: each layout the review sized the option in, where the scenario leaves its layout to the review (a MoE model:
    #: tensor parallelism and data-parallel attention, ``planner.api.layouts_to_size``), the kept one (this result's
    #: ``option.parallelism``) among them; () where the option sets ``parallelism`` or has one layout to size
    layouts: tuple[LayoutSized, ...] = field(default=(), repr=False, compare=False)
    #: the kept group's memory chain behind its batch (``planner.export.memory_chain``; trial 25 F2), where the
    #: option meets the targets; else None
    memory: MemoryChain | None = field(default=None, repr=False, compare=False)
    #: where the batch cap (max_num_seqs at what memory holds at the high-percentile lengths) sets the fleet: the
    #: fleet at the engine's own limit as ``planner plan`` sizes it, no margin (``planner.export.batch_cap``; trial
    #: 29 F16); else None
    engine_limit: EngineLimitFleet | None = field(default=None, repr=False, compare=False)

    @property
    def meets(self) -> bool:
        return self.fleet is not None

    @property
    def layout_chosen(self) -> str:
        """Where the review chose the option's layout (``layouts``), the choice in words: "layout dp-ep, the cheaper
        of those sized (dp-ep 20 GPUs, $75,154/month; tp 32 GPUs, $120,245/month)"; "" where the option sets its own."""
        if len(self.layouts) < 2:
            return ""
        kept = self.option.parallelism or "tp"
        which = "the cheaper of those sized" if self.meets else "none meets the targets"
        ordered = sorted(self.layouts, key=lambda s: s.parallelism != kept)  # the kept one first
        return f"layout {kept}, {which} ({'; '.join(s.words for s in ordered)}; parallelism in the option fixes it)"

    def sized_at(self, multiplier: float) -> Result | None:
        """The option sized afresh at the planned peak x ``multiplier`` (``again``); None where it was not."""
        return next((r for m, r in self.again if math.isclose(m, multiplier)), None)

    @property
    def weights_label(self) -> str:
        """The weights as ``planner plan`` names them: "bf16 + mxfp4 experts" where the routed experts are kept in
        another format (gpt-oss as published), else the weights' precision."""
        return self.weight_precision + experts_words(self.weight_precision, self.expert_precision)

    @property
    def filling_text(self) -> str:
        """The planned fleet's replicas by kind where whole nodes (bought) or instances (rented) add replicas to the
        serving and spare ones (``sizing.filling_text``): "8 serving + 1 spare + 3 filling whole 8-GPU nodes"; ""
        where they add none, or the option does not meet the targets."""
        if self.fleet is None:
            return ""
        return sizing.filling_text(
            int(self.fleet.replicas), int(self.fleet.replicas_needed), int(self.option.spare_replicas),
            int(self.money.node_size), "nodes" if self.money.pricing == "purchase" else "instances",
        )  # fmt: skip

    @property
    def gpus(self) -> int:
        return int(self.fleet.gpus) if self.fleet is not None else 0

    @property
    def monthly_usd(self) -> float:
        return float(self.fleet.monthly_usd) if self.fleet is not None else math.nan

    @property
    def pessimistic_high(self) -> float:
        """The slow end of the time model's range as a share over the prediction, never below 0: where measured
        times ran at or under the predictions (a negative upper quantile), the pessimistic figure is the prediction."""
        return max(0.0, float(self.time_range[1]))

    @property
    def batch_per_replica(self) -> int:
        """The most sequences a replica runs at once, as the review states it: what memory holds at the
        high-percentile lengths where the fleet was sized on simulated percentiles (the simulation's max_num_seqs,
        ``Candidate.slots``), else the closed form's batch (Little's law's slots); 0 where it meets no target."""
        if self.replica is None:
            return 0
        return self.candidate.slots if self.under_load is not None else int(self.replica.batch)

    @property
    def candidate(self) -> Candidate | None:
        """The tensor-parallel group that was kept (None when the option does not meet the targets)."""
        if self.replica is None:
            return None
        return next(c for c in self.candidates if c.gpus_per_replica == int(self.replica.gpus))


@dataclass(frozen=True)
class Lever:
    """One lever applied to the baseline: what changes, its result, and the saving (positive) or extra cost."""

    name: str
    change: str
    result: Result | None
    saving_usd_per_month: float  # baseline - lever; NaN when the lever does not meet the targets
    note: str


@dataclass(frozen=True)
class Review:
    scenario: Scenario
    source: str
    date: str
    version: str
    results: tuple[Result, ...]  # ranked: meeting options by monthly cost, then the others
    recommended: Result
    baseline: Result
    levers: tuple[Lever, ...]
    sweep_multipliers: tuple[float, ...]
    reason: str
    assumptions: tuple[Assumption, ...]
    warnings: tuple[str, ...] = field(default=())
    #: like-for-like grid, the margin's price, ownership over the horizon, demand cases (``planner.export.outlook``)
    outlook: Outlook | None = None
    #: each [[mix]] of the scenario, its parts sized at their shares (``planner.export.mix``): budget lines, not ranked
    mixes: tuple[MixSized, ...] = ()
    #: where the scenario's named ``baseline`` does not meet the targets, what that means for the levers (sized from it,
    #: no saving booked; trial 31 F8: the review had stopped there); "" where it meets them
    baseline_misses: str = ""


# -- what the review adds for a finance team (built by planner.export.outlook) ----------------------------


@dataclass(frozen=True)
class Ownership:
    """One option's cash over the horizon, its fleet phased by quarter (and, for comparison, at full size)."""

    horizon_months: int
    gpus_by_quarter: tuple[int, ...]  # the fleet each quarter (owned: the GPUs bought so far)
    year1_cash_usd: float  # phased
    year1_cash_full_usd: float  # the planned-peak fleet from month 1, as the review's monthly figure assumes
    total_usd: float  # phased, undiscounted, less the residual value
    total_full_usd: float
    present_value_usd: float  # phased, discounted at the cost of capital, less the residual's present value
    residual_usd: float
    commitment: str  # what signing commits to
    #: cash out each month 1 .. horizon, phased, undiscounted, no residual (``planner.export.breakeven``'s input)
    cash_by_month: tuple[float, ...] = ()
    #: a reserved option's contracts where its term is known (``finance.reserved_cash``): the basis taken, the cash
    #: committed beyond the horizon, the alternative's; None otherwise (cash phased as if billed monthly)
    reserved: ReservedCash | None = None

    @property
    def beyond_horizon_usd(self) -> float:
        """Cash committed by reserved contracts that falls due after the horizon (0 without them)."""
        return self.reserved.beyond_horizon_usd if self.reserved is not None else 0.0


@dataclass(frozen=True)
class Case:
    """One demand case of one option: the planned peak x multiplier."""

    name: str
    multiplier: float
    gpus: int
    monthly_usd: float
    total_usd: float  # over the horizon, phased


@dataclass(frozen=True)
class OptionOutlook:
    """What the review adds to one option that meets the targets."""

    name: str
    ownership: Ownership
    cases: tuple[Case, ...]
    gpus_without_margin: int  # the same option sized with no latency margin (0 when even that cannot be sized)
    monthly_without_margin_usd: float

    def margin_gpus(self, result: Result) -> int:
        return result.gpus - self.gpus_without_margin

    def margin_usd_per_month(self, result: Result) -> float:
        return result.monthly_usd - self.monthly_without_margin_usd


@dataclass(frozen=True)
class GridRow:
    """One cell of the like-for-like grid: the option it derives from, re-priced and re-sized, or why it could not be."""

    gpu: str
    price_kind: str
    weight_precision: str
    result: Result | None
    ownership: Ownership | None
    note: str  # why there is no result, or the price's provider and date

    @property
    def monthly_usd(self) -> float:
        """The row's monthly cost as the grid shows and ranks it: a reserved row with a term, its horizon's reserved
        cash / the horizon's months (``finance.ReservedCash.monthly_usd``); else the fleet's (NaN: no result)."""
        if self.ownership is not None and self.ownership.reserved is not None:
            return self.ownership.reserved.monthly_usd
        return self.result.monthly_usd if self.result is not None else math.nan


@dataclass(frozen=True)
class Outlook:
    options: tuple[OptionOutlook, ...]  # the meeting options, in the review's order
    grid: tuple[GridRow, ...]  # meeting rows ranked by monthly cost, then the rest
    quality: tuple[QualityNote | SixteenBitSwap | ModelSwitch, ...]

    def of(self, name: str) -> OptionOutlook | None:
        return next((o for o in self.options if o.name == name), None)


# -- a mixed fleet: several options at once, each serving a share of the traffic (planner.export.mix) ---------------


@dataclass(frozen=True)
class MixPart:
    """One part of a mix: the option sized alone at its share of the traffic (``result``: its fleet, shortfall, rates),
    its ownership over the horizon and demand cases at that share (None and () where it meets no target)."""

    option: str
    share: float
    result: Result
    ownership: Ownership | None
    cases: tuple[Case, ...] = ()


@dataclass(frozen=True)
class MixSized:
    """A [[mix]]: its parts, each sized alone at its share; its figures are their sums (NaN where a part meets no
    target: no total is given for a fleet one part of which cannot be sized)."""

    name: str
    parts: tuple[MixPart, ...]

    @property
    def meets(self) -> bool:
        return all(p.result.meets for p in self.parts)

    def _sum(self, values) -> float:
        return math.fsum(values) if self.meets else math.nan

    @property
    def gpus(self) -> int:
        return sum(p.result.gpus for p in self.parts) if self.meets else 0

    @property
    def monthly_usd(self) -> float:
        return self._sum(p.result.monthly_usd for p in self.parts)

    @property
    def year1_cash_usd(self) -> float:
        return self._sum(p.ownership.year1_cash_usd for p in self.parts if p.ownership is not None)

    @property
    def total_usd(self) -> float:
        return self._sum(p.ownership.total_usd for p in self.parts if p.ownership is not None)

    def case_monthly_usd(self, k: int) -> float:
        """The mix's monthly cost in its parts' demand case ``k`` (0 low, 1 base, 2 high)."""
        return self._sum(p.cases[k].monthly_usd for p in self.parts)

    def case_gpus(self, k: int) -> int:
        return sum(p.cases[k].gpus for p in self.parts) if self.meets else 0
