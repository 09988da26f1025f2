"""Every number the review used, with its unit and where it came from: the review's Assumptions sheet.

Values stay numbers (a writer formats them); a source is a short label with a link when one is known, and the
full text (a catalog ``source`` can run to a paragraph) for a writer that has room for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from planner import __version__, api
from planner.accuracy.ranges import coverage_note, stated_coverage
from planner.accuracy.same_deployment import FIGURE_WORDS, Deployment, same_deployment_runs
from planner.catalog import Gpu
from planner.export import sizing
from planner.export.margin_releases import margin_releases_text
from planner.export.ownership import (
    ON_PREMISES_LEFT_OUT,
    RENT_HOURS,
    SIZED_AFRESH,
    Money,
    Sourced,
    amortization_rule,
    billing_unit_words,
    book_value_note,
    ownership_defaults,
    quote_text,
    reserved_terms,
    stale_words,
)
from planner.export.scenario import Scenario, Workload
from planner.serving.speculative import speculation_for
from planner.units import counted, gb_unit_with_gib

_URL = re.compile(r"https?://[^\s,;)'\"]+")
LABEL_CHARS = 60
#: The unit of an engine's kernel efficiency factors (``EngineProfile.bandwidth_efficiency``,
#: ``prefill_flop_efficiency``): each multiplies the bandwidth or FLOP/s the GPU's kernels were measured at
#: (``planner.model.operators``), so divides the modelled kernel time; not an achieved fraction of peak.
KERNEL_FACTOR_UNIT = "x (1: kernels as measured)"
#: How the simulated peak's requests reach the replicas (``Workload.routing``; ``planner.serving.fleet.
#: replica_burstiness``), as the Assumptions row labels it and the Method row's "Replicas" says it.
ROUTING_WORDS = {
    "random": "each request to a replica drawn at random",
    "round-robin": "each request to the next in turn",
}
ROUTED = {"random": "routed at random", "round-robin": "dealt round-robin"}


@dataclass(frozen=True)
class Assumption:
    what: str
    value: float | str
    unit: str
    label: str  # short source label
    url: str = ""  # http(s) link, or ""
    source: str = ""  # the full source text
    #: (name, link) of each source beyond ``url`` where a row rests on several (a median price: every quote's page,
    #: trial 25 F6); () for a row with one source
    links: tuple[tuple[str, str], ...] = ()

    @property
    def label_with_links(self) -> str:
        """The label, then each of ``links`` as "name address" (a cell holds one hyperlink: the others as text)."""
        if not self.links:
            return self.label
        return f"{self.label}; each quote's page: " + "; ".join(f"{name} {url}" for name, url in self.links)


def first_url(text: str) -> str:
    """The first http(s) address in a source text, without trailing punctuation ("" when there is none): "...355414:
    FP32" and "...pull/2904." are sentences around an address, not part of it (trial 25 F5)."""
    m = _URL.search(text or "")
    return m.group(0).rstrip(".:") if m else ""


def short_label(text: str) -> str:
    """A source text without its addresses, cut at the first sentence break or LABEL_CHARS characters."""
    plain = _URL.sub("", text or "")
    plain = re.sub(r"\(\s*\)|\s+", " ", plain).strip(" ,;:(")
    if len(plain) > LABEL_CHARS:
        for stop in (". ", "; ", " (", ": '"):
            cut = plain.find(stop)
            if 10 < cut < LABEL_CHARS:
                plain = plain[:cut]
    plain = plain.strip(" ,;:(")
    if len(plain) > LABEL_CHARS:
        plain = plain[: LABEL_CHARS - 1].rsplit(" ", 1)[0] + "…"
    if not plain:  # a bare address: name its site
        url = first_url(text)
        plain = url.split("/")[2] if url.count("/") >= 2 else (text or "")
    return plain


def sourced(what: str, value: float | str, unit: str, source: str) -> Assumption:
    """A row whose source is a catalog text: label and link taken from it."""
    return Assumption(what, value, unit, short_label(source), first_url(source), source)


def quote_links(money: Money, gpu) -> tuple[tuple[str, str], ...]:
    """(provider, link) of each quote a median price is made of (``Gpu.price``: every quote of its kind), in the
    catalog's order, those with a link; () for one provider's quote or the scenario's own price. The median's source
    links the first quote only (trial 25 F6: a checker re-deriving $3.595 had to open catalogs/gpus.toml for the
    other three)."""
    q = money.quote
    if q is None or not q.is_median:
        return ()
    quotes = [p for p in gpu.prices if p.kind == q.kind]
    return tuple((p.provider, url) for p in quotes if (url := first_url(p.source)))


def _priced(what: str, value: float, money: Money, date: str = "", gpu=None) -> Assumption:
    """A price row: which quotes it is, with their amounts and dates, in its "what" ("H100, rented: on-demand price per
    GPU-hour (median of 2 quotes: Lambda 2.99 (2026-05-18), Hyperstack 3.20 (2026-08-26))"), which wraps, and a short
    label linking to the catalog's source (a trial: the label, cut at ``LABEL_CHARS``, lost the quotes and dates to
    "..."; a linked cell does not wrap in LibreOffice, so the quotes cannot go there whole)."""
    if money.quote is None:  # the scenario's own price
        return sourced(what, value, "US$", money.price_source)
    stale = stale_words(money.price_date, date) if date else ""  # a median's oldest quote, as stale_text reads it
    what += f" ({stale})" if stale else ""
    label = f"catalog {money.price_kind} price"
    url = first_url(money.price_source)
    if not url:  # an internal quote (a contract, a PO number): its own words are the evidence (trial 18 F5)
        label = f"{label}: {money.quote.source}"
    links = quote_links(money, gpu) if gpu is not None else ()
    if links:  # a median: the hyperlink to the first quote with a page, every quote's page in the label
        url = links[0][1]
    return Assumption(
        f"{what} ({quote_text(money, with_gap=False)})", value, "US$", label, url, money.price_source, links
    )


def catalog_folders_row(catalog, results) -> Assumption:
    """Which catalog folders the review read ("shipped + my/catalog"), and which of the entries and quotes it used
    came from a user folder rather than the shipped catalog (trial 18 F5: a user's GPU looked like a shipped one)."""
    from pathlib import Path

    from planner.catalog.loader import shipped_catalog_dir

    shipped = shipped_catalog_dir().resolve()
    folders = [Path(f) for f in getattr(catalog, "folders", ())]
    user = [str(f) for f in folders if f.resolve() != shipped]
    value = " + ".join((["shipped"] if len(user) < len(folders) else []) + user) or "shipped"
    used = {r.gpu.name for r in results} | {r.model.name for r in results}
    mine = [
        f"{name} ({kind}) from {path}" for (kind, name), path in getattr(catalog, "origins", {}).items() if name in used
    ]
    mine += [
        f"{provider} {kind} quote for {gpu} from {folder}"
        for gpu, provider, kind, folder in getattr(catalog, "added_prices", ())
        if gpu in used
    ]
    if mine:
        label = "used from a user folder: " + "; ".join(dict.fromkeys(mine))
    elif user:
        label = "--catalog / $PLANNER_CATALOG (no entry the review used comes from them)"
    else:
        label = "the catalog shipped with planner"
    return Assumption("Catalog folders (later wins)", value, "", label)


_NODE_FIGURE_WORDS = {"host_server_usd": "host server", "networking_usd": "network", "host_power_w": "host power"}


def _and_list(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _borrowed_node_figures(gpu: Gpu, money: Money) -> dict[str, str]:
    """{words: field} of the per-node figures a bought ``gpu_name`` takes from the catalog's default node (DGX
    H100) for want of its own, leaving out those the scenario gives."""
    return {
        _NODE_FIGURE_WORDS[f]: f
        for f in ownership_defaults().borrowed_fields(gpu)
        if not getattr(money, f).label.startswith("scenario file")
    }


def _reused_host_figures(result) -> dict[str, str]:
    """{words: field} of the node figures a bought option of another generation than H100/H200 takes from the DGX
    H100 (``_borrowed_node_figures``); none for a rented option or an H100/H200 one, whose node the DGX H100 is."""
    if result.money.pricing != "purchase" or any(k in result.gpu.name for k in ("H100", "H200")):
        return {}
    return _borrowed_node_figures(result.gpu, result.money)


#: The node figures that are capex (host power is opex: power and colocation).
_CAPEX_NODE_FIELDS = ("host_server_usd", "networking_usd")

#: A GPU of this board power or more is named beside the reused DGX H100 figures (8 x 700 W H100s; trial 27 F7).
HIGH_BOARD_POWER_W = 1000


def reused_host_warning(results) -> str:
    """The review's Warnings line for the bought options whose host server, network or host power are DGX H100's
    (the Assumptions' "host figures" rows, trial 27 F7): which options, the share of each one's capex those figures
    are (host server + network per node / GPUs a node, over capex per GPU), and the scenario keys that replace them;
    a GPU of ``HIGH_BOARD_POWER_W`` or more is named with its catalog board power and form factor, and the DGX H100's
    fans only where its host power is among the reused figures (DGX B200's and MI355X's own host power are not;
    ownership.toml [nodes]). "" when none."""
    parts, keys, hot, fans = [], {}, {}, False
    for r in results:
        borrowed = _reused_host_figures(r)
        if not borrowed:
            continue
        keys.update({f: None for f in borrowed.values()})
        m = r.money
        capex = [w for w, f in borrowed.items() if f in _CAPEX_NODE_FIELDS]
        rest = [w for w, f in borrowed.items() if f not in _CAPEX_NODE_FIELDS]
        said = []
        if capex:
            share = sum(getattr(m, borrowed[w]).value for w in capex) / m.node_size / m.capex_usd_per_gpu
            said.append(f"{_and_list(capex)} ({share:.0%} of its capex)")
        if rest:
            said.append(_and_list(rest))
        parts.append(f"{r.option.name}: {' and '.join(said)}")
        if r.gpu.tdp_w >= HIGH_BOARD_POWER_W:
            form = f", {r.gpu.form_factor}" if r.gpu.form_factor else ""
            hot.setdefault(r.gpu.name, f"{r.gpu.name} ({r.gpu.tdp_w:,.0f} W{form})")
            fans = fans or "host_power_w" in borrowed.values()
    if not parts:
        return ""
    host = ownership_defaults().host_server_usd
    bom = (
        f"; host server: {host.label}, {host.date}, a component cost without the server maker's margin"
        if "host_server_usd" in keys
        else ""
    )
    line = (
        f"Host figures reused from another platform: {'; '.join(parts)} are a DGX H100's "
        f"(catalogs/costs/ownership.toml{bom}); give {_and_list(list(keys))} from a quote for these nodes"
    )
    if hot:
        line += (
            f". {_and_list(list(hot.values()))} draw{'s' if len(hot) == 1 else ''} 1,000 W or more a GPU: the reused "
            f"figures are priced for a DGX H100 node of 8 x 700 W GPUs"
        ) + (", whose host power counts its fans" if fans else "")
    return line + "."


def _given(what: str, x: Sourced, unit: str, date: str = "") -> Assumption:
    """A row of a sourced figure; one dated more than a year before the review's ``date`` says so in its "what", which
    wraps (``ownership.stale_words``: the rule GPU quotes are flagged by; trial 23 F7)."""
    stale = stale_words(x.date, date) if date else ""
    return Assumption(what + (f" ({stale})" if stale else ""), x.value, unit, x.label, x.url, x.source or x.label)


def _first_per(results, key) -> list:
    """The first result of each key (a GPU, model or engine name), in order."""
    first: dict = {}
    for r in results:
        first.setdefault(key(r), r)
    return list(first.values())


def _uncertainty_rows(results) -> list[tuple[str, object]]:
    """(where, result) for each distinct range and margin: one row per GPU, model, engine and group, the engine
    named where the options use more than one and the option named where two options of one such key still differ
    (trial 24 F4: an SGLang option's +38% margin was shown as its vLLM neighbour's +25%)."""
    engines = {r.engine.name for r in results}
    kept = _first_per(
        results,
        lambda r: (r.gpu.name, r.model.name, r.engine.name, r.candidate and r.candidate.gpus_per_replica,
                   tuple(r.time_range), r.margin),
    )  # fmt: skip

    def where(r) -> str:
        group = f", {counted(r.candidate.gpus_per_replica, 'GPU')} per replica" if r.meets else ""
        return f"{r.gpu.name}, {r.model.name}" + (f", engine {r.engine.name}" if len(engines) > 1 else "") + group

    said = [where(r) for r in kept]
    return [(w if said.count(w) == 1 else f"{w} ({r.option.name})", r) for w, r in zip(said, kept, strict=True)]


def assumptions(scenario: Scenario, results, catalog, date: str, workload_source: str) -> tuple[Assumption, ...]:
    """Rows for every number the review used: scenario, catalog facts with sources, costs, then the rules."""
    rows: list[Assumption] = []
    w = scenario.workload
    rows += [
        Assumption("Planner version", __version__, "", "planner package"),
        Assumption("Review date", date, "", "--date, SOURCE_DATE_EPOCH or today"),
        Assumption("Scenario", scenario.title, "", "scenario file"),
        catalog_folders_row(catalog, results),
    ]
    unit = "requests/s" if w.by_rate else "concurrent requests"
    for what, value, u in (
        ("Peak traffic today", w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests, unit),
        ("Average traffic today", w.average_requests_per_s if w.by_rate else w.average_concurrent_requests, unit),
        ("Prompt length, mean", w.prompt_tokens_mean, "tokens"),
        (f"Prompt length, p{w.high_percentile:g}", w.prompt_tokens_high, "tokens"),
        ("Output length, mean", w.output_tokens_mean, "tokens"),
        (f"Output length, p{w.high_percentile:g}", w.output_tokens_high, "tokens"),
        (w.target_labels()[0], w.ttft_target_s, "s"),
        (w.target_labels()[1], w.tpot_target_s * 1e3, "ms"),
        (f"Traffic growth over {w.horizon_months} months", w.growth_over_horizon, "share"),
    ):
        source = workload_source
        if what.endswith(", mean") and not float(value).is_integer():  # computed in whole tokens, as validation does
            whole = dict(zip(("Prompt length, mean", "Output length, mean"), w.request_tokens, strict=True))[what]
            source += f"; each request {whole:,} tokens (the mean rounded, planner.serving.load.fixed_length_tokens)"
        if what == "Average traffic today" and w.monthly_rate_note:  # trial 34 F1: given as a month's requests
            source += f"; {w.monthly_rate_note} (average_requests_per_month)"
        rows.append(Assumption(what, value, u, source))
    from planner.serving.load import CLIENT_COMMANDS, dataset_load, dataset_statistics

    own_prefix = 0  # the dataset's own shared prefix, tokens
    if w.dataset is not None:  # the lengths above are the dataset's, as its benchmark client sends them
        t = dataset_load(w.dataset)
        client = CLIENT_COMMANDS.get(t.client, t.client)
        rows.append(Assumption(f"Lengths from dataset {t.name} (as {client} sends it)", t.name, "", t.source))
        own_prefix = dataset_statistics(w.dataset, t.client).prefix_tokens
    if w.lengths_file is not None:  # the lengths above are the file's (means, high-percentile lengths)
        rows.append(Assumption(f"Lengths from file {w.lengths_file}", w.lengths_file, "", w.lengths_file_note))
    if w.prefix_hit_rate > 0 and not own_prefix:  # the scenario's own share (workload.prefix_hit_rate)
        rows.append(Assumption("Prefix cache hit (as given)", w.prefix_hit_rate, "share", workload_source))
    elif w.dataset is not None:
        rows.append(
            Assumption(
                "Prefix cache hit (the dataset's shared prefix)",
                w.prefix_hit_rate,
                "share",
                "planner.serving.load.shared_prefix_hit_rate (1,000 requests, 16-token blocks)",
            )
        )
    if w.sizing == "simulated":  # how the simulated peak's requests arrive
        arrival = "Poisson" if w.burstiness == 1 else ("burstier than Poisson" if w.burstiness < 1 else "smoother")
        rows.append(
            Assumption(
                f"Arrivals at the peak: gamma shape ({arrival})",
                w.burstiness,
                "",
                "scenario (workload.burstiness) / default 1: Poisson (vllm bench serve --burstiness)",
            )
        )
        rows.append(
            Assumption(
                f"Routing over the replicas ({ROUTING_WORDS[w.routing]})",
                w.routing,
                "",
                "scenario (workload.routing) / default random: the burstier share (planner plan --routing)",
            )
        )
    rows.append(
        Assumption("Sensitivity: traffic change", scenario.traffic_change, "share", "scenario (traffic_change)")
    )
    rows.append(
        Assumption(
            "Latency margin",
            "model range (upper residual quantile per GPU)"
            if w.latency_margin == "model-range"
            else float(w.latency_margin),
            "" if w.latency_margin == "model-range" else "share",
            "scenario (workload.latency_margin)",
        )
    )
    rows += horizon_rows(scenario)
    for r in _first_per(results, lambda r: r.gpu.name):
        g = r.gpu
        rows += [
            # SI, as the what-if workbook, its GiB beside it: "85.90 GB (80 GiB)" for an "80GB" H100 (trial 30 F13)
            sourced(f"{g.name}: memory", g.memory_bytes / 1e9, gb_unit_with_gib(g.memory_bytes), g.source),
            sourced(
                f"{g.name}: memory bandwidth ({g.memory_type or 'HBM'})",
                g.hbm_bandwidth_bytes_per_s / 1e12,
                "TB/s",
                g.source,
            ),
            sourced(
                f"{g.name}: dense peak (bf16/fp16)",
                api.gpu_peak_flop_per_s(g, catalog.precision("bf16")) / 1e12,
                "TFLOP/s",
                g.source,
            ),
            sourced(f"{g.name}: board power (TDP)", g.tdp_w, "W", g.source),
        ]
        if g.interconnect_bytes_per_s:
            rows.append(  # one direction, as the time model reads it; datasheets often print both summed
                sourced(
                    f"{g.name}: GPU-to-GPU bandwidth", g.interconnect_bytes_per_s / 1e9, "GB/s per direction", g.source
                )
            )
        if g.engine_visible_memory_bytes:
            rows.append(
                sourced(
                    f"{g.name}: memory the engine sees",
                    g.engine_visible_memory_bytes / 1e9,
                    "GB",
                    g.engine_visible_memory_source,
                )
            )
    for r in results:
        o, money = r.option, r.money
        if money.pricing == "purchase":
            rows += [
                _priced(f"{o.name}: GPU purchase price", money.purchase_usd, money, date, r.gpu),
                _given(f"{o.name}: host server per node", money.host_server_usd, "US$", date),
                _given(f"{o.name}: network per node", money.networking_usd, "US$", date),
                _given(f"{o.name}: host power per node", money.host_power_w, "W", date),
                _given(f"{o.name}: colocation", money.colocation_usd_per_kw_month, "US$/kW-month", date),
                _given(f"{o.name}: electricity", money.power_usd_per_kwh, "US$/kWh", date),
                _given(f"{o.name}: PUE", money.pue, "", date),
                Assumption(f"{o.name}: amortization", o.amortization_months, "months", "scenario / default 36"),
                Assumption(f"{o.name}: bought in nodes of", o.nodes_of, "GPUs", "scenario / default 8 when bought"),
            ]
            borrowed = _reused_host_figures(r)
            if borrowed:
                rows.append(
                    Assumption(
                        f"{o.name}: host figures",
                        "DGX H100's",
                        "",
                        f"{_and_list(list(borrowed))} {'is' if len(borrowed) == 1 else 'are'} DGX H100's; no "
                        f"{r.gpu.name} node figure for {'it' if len(borrowed) == 1 else 'them'} in "
                        f"catalogs/costs/ownership.toml: give {_and_list(list(borrowed.values()))} for this node",
                    )
                )
        else:
            rows += [
                _priced(
                    f"{o.name}: {money.price_kind} price per GPU-hour", money.cloud_usd_per_gpu_hour, money, date, r.gpu
                ),
                Assumption(
                    f"{o.name}: rented in instances of",
                    money.node_size,
                    "GPUs",
                    billing_unit_words(money, r.gpu, o.node_size),
                ),
            ]
        if not w.by_rate and r.meets:  # requests in flight -> requests/s at this option's own latency
            rows.append(in_flight_row(scenario, r))
        if o.speculative_tokens is not None:  # it changes the fleet: stated beside the option
            rows.append(
                Assumption(
                    f"{o.name}: speculative decoding (draft tokens a step / accepted tokens a step)",
                    f"{o.speculative_tokens} / {o.acceptance_length:g}",
                    "tokens",
                    "scenario (speculative_tokens, acceptance_length as you state it); the draft: "
                    f"{_draft(o, catalog)} (planner.serving.speculative)",
                )
            )
        rows += [
            Assumption(f"{o.name}: spare replicas", o.spare_replicas, "replicas", "scenario / default 1 (N+1)"),
            Assumption(
                f"{o.name}: weights / KV cache / engine",
                f"{r.weights_label} / {r.kv_precision} / {r.engine.name}",
                "",
                _layer_sources(o),
            ),
        ]
        util, util_src = _memory_utilization(r)
        rows += memory_rows(r, Assumption(f"{o.name}: memory utilization", util, "share", util_src), w)
    for r in _first_per(results, lambda r: r.model.name):
        m = r.model
        rows += [
            sourced(f"{m.name}: parameters", m.published_params_total / 1e9, "billion", m.published_params_source),
            sourced(
                f"{m.name}: attention",
                f"{m.attention_kind}, {m.num_layers} layers, {m.num_kv_heads} KV heads",
                "",
                m.source,
            ),
            sourced(f"{m.name}: trained context", m.max_context, "tokens", m.source),
        ]
    for r in _first_per(results, lambda r: r.engine.name):
        e = r.engine
        src = f"planner.engines.profiles profile '{e.name}' (fitted to public measurements; docs/accuracy.md)"
        rows += [
            Assumption(
                f"engine {e.name}: factor on the measured kernels' bandwidth (kernel time / this)",
                e.bandwidth_efficiency,
                KERNEL_FACTOR_UNIT,
                src,
            ),
            Assumption(
                f"engine {e.name}: factor on the measured kernels' FLOP/s in prefill (kernel time / this)",
                e.prefill_flop_efficiency,
                KERNEL_FACTOR_UNIT,
                src,
            ),
            Assumption(f"engine {e.name}: per-step overhead", e.step_overhead_s * 1e3, "ms", src),
        ]
    for r in _first_per(results, lambda r: (r.gpu.name, r.engine.name)):
        if r.calibration is not None:  # the file in effect: what it did to this GPU's times and ranges
            rows.append(
                Assumption(
                    f"{r.gpu.name}, engine {r.engine.name}: calibration",
                    r.calibration.text,
                    "",
                    "--calibration or $PLANNER_CALIBRATION",
                )
            )
    for where, r in _uncertainty_rows(results):
        low, high = r.time_range
        rows.append(
            Assumption(
                f"{where}: uncertainty of TPOT and TTFT",
                f"{low:+.0%} / {high:+.0%}",
                "of the prediction",
                f"10th / 90th percentile of measured / predicted - 1: {r.time_range_note} (docs/accuracy.md)",
            )
        )
        older = margin_releases_text(r) if w.latency_margin == "model-range" else ""
        rows.append(
            Assumption(
                f"{where}: margin used",
                r.margin,
                "share",
                "workload.latency_margin" + (f"; {older}" if older else ""),
            )
        )
    rows += [row for r in results if (row := published_runs_row(r))]
    if results and (first := stated_coverage()):
        rows.append(
            Assumption(
                f"How often those uncertainty ranges held ({first[0].quantity} figures inside)",
                first[0].inside / first[0].figures,
                "share",
                f"the uncertainty ranges above (not a calibration file's): {coverage_note()}",
            )
        )
    rules = "planner.export.sizing (docs/export.md)"
    rows += [
        Assumption("Hours per month", sizing.HOURS_PER_MONTH, "h", "8,760 h / 12"),
        Assumption(
            "Sequence length memory holds",
            w.sizing_context_tokens,
            "tokens",
            f"p{w.high_percentile:g} prompt + p{w.high_percentile:g} output",
        ),
        Assumption(  # trial 25 F3: what the figure feeds, and what it does not
            "Context the group screening's TPOT curve is taken at (which groups and batches meet the TPOT goal)"
            + (
                "; the simulated TPOT at peak, which sizes the replicas, runs each simulated request at its own context"
                if w.sizing == "simulated"
                else "; Little's law's TPOT at peak too"
            ),
            w.inflight_context_tokens,
            "tokens",
            "mean prompt + E[o^2] / (2 E[o]) of the output length o: the contexts in flight (docs/export.md); "
            + (
                f"{w.spread_fit_note}"
                if w.spread_fit_note
                else "o lognormal with the mean and high output, so mean output x exp(s^2) / 2"
            ),
        ),
        *_method_rows(scenario, results, rules),
        Assumption(
            "Owned GPU per month",
            f"capex {amortization_rule(scenario.finance)} + IT power x PUE x $/kWh x 730 h + colocation",
            "",
            rules,
        ),
        Assumption("Rented GPU per month", f"$/GPU-hour x 730 h: {RENT_HOURS}", "", rules),
        Assumption(
            "Cost per million tokens", "monthly cost split by prefill/decode time, / tokens at average load", "", rules
        ),
        Assumption("Not included", _not_included(scenario), "", ""),
    ]
    return tuple(rows)


def in_flight_row(scenario: Scenario, r) -> Assumption:
    """The "planned peak as requests/s" row of an option whose traffic is given as requests in flight N: the rate R
    it was sized on, how it was derived (Little's law, R = N / the time a request takes on the sized fleet) and the
    check R x that time = N, with the requests in flight it puts on each serving replica. Sized under load, the time
    is the simulated mean (``planner.export.evaluate._simulated_in_flight``: trial 24 F18); by Little's law, the
    closed form's TTFT + mean output x TPOT at the replica's batch."""
    w, o = scenario.workload, r.option
    n_peak, n_avg = w.peak_concurrent_requests * w.growth_factor, w.average_concurrent_requests * w.growth_factor
    rate, avg = r.peak_rate_per_s, r.average_rate_per_s
    if r.under_load is not None:
        replicas, took = r.under_load.replicas, float(r.under_load.result.e2e_s.mean)
        how = (
            f"Little's law on the sized fleet: {n_peak:,.0f} requests in flight at the planned peak / {took:.2f} s, "
            f"the simulated mean time a request takes (queue, TTFT and decode) on {replicas:,} replicas at this rate, "
            "the rate found again from that time until it settles (latency rises with the rate)"
        )
    else:
        rep = r.replica
        replicas = int(round(float(r.fleet.replicas_needed) - o.spare_replicas))
        took = float(rep.ttft_mean_s + w.output_tokens_mean * rep.tpot_s)
        how = (
            f"Little's law: {n_peak:,.0f} requests in flight at the planned peak / {took:.2f} s a request, TTFT "
            f"{rep.ttft_mean_s:.2f} s + {w.output_tokens_mean:,.0f} output tokens x TPOT {rep.tpot_s * 1e3:.1f} ms at "
            f"a batch of {rep.batch:,.0f} (the closed form, as the fleet was sized)"
        )
    return Assumption(
        f"{o.name}: planned peak as requests/s",
        round(rate, 2),
        "requests/s",
        f"{how}; check: {rate:,.2f} x {took:.2f} s = {rate * took:,.0f} in flight, {rate * took / replicas:,.1f} per "
        f"serving replica. The average's {n_avg:,.0f} in flight: {avg:,.2f} requests/s the same way. A faster option "
        "completes more requests a second with the same requests in flight",
    )


def simulated_lengths_words(w: Workload) -> str:
    """What requests the sizing simulation sends (``Workload.simulated_lengths``), in words: drawn around the means
    and the high lengths, a dataset's own, or every one at the means."""
    q = f"p{w.high_percentile:g}"
    kind = w.simulated_lengths_kind
    if kind == "means" and w.sizing_lengths == "spread":  # the high lengths at the means: fixed lengths (trial 33 F8)
        return (
            "every request at the mean lengths: prompt_tokens_high and output_tokens_high are the means (their "
            "default, as planner plan --rate's without --prompt-tokens-high): fixed lengths, no spread"
        )
    if kind == "means":
        return 'every request at the mean lengths (sizing_lengths = "spread" draws them around the high lengths)'
    lengths = w.simulated_lengths()
    from planner.serving.load import past_context_note

    # requests past the slot each replica's batch cap is set at: plan's note on --context, in the same words
    past = past_context_note(lengths, w.sizing_context_tokens, f"the {q} prompt + {q} output slot")
    past = f"; {past}" if past else ""
    if kind == "dataset":
        return f"{w.dataset}'s own requests, {len(lengths):,} of them{past}"
    if kind == "file":
        return (
            f"{len(lengths):,} requests drawn from lengths_file {w.lengths_file} (its {w.lengths_sample.rows:,} rows at "
            f"random with replacement, seeded, a row's prompt and output together; as planner plan --lengths){past}"
        )
    return (
        f"each request's prompt and output drawn lognormal with the mean and {q} lengths ({len(lengths):,} requests, "
        "seeded; the spread docs/export.md 'Two contexts' fits"
        + (
            f"; a length past any lognormal's spread from one truncated at the {w.sizing_context_tokens:,}-token slot)"
            if w.spread_fit_note
            else ")"
        )
        + past
    )


def _cap_words(w: Workload) -> str:
    """What a replica's batch cap is what memory holds at (``Workload.batch_cap_context_tokens``), in words: the
    high-percentile sequence, or, where the mean context in flight is longer, that context (trial 27 F12: the row
    said 16,000 tokens where the cap was set at 23,444)."""
    q = f"p{w.high_percentile:g}"
    slot = f"{q} prompt + {q} output ({w.sizing_context_tokens:,} tokens)"
    if w.batch_cap_context_tokens == w.sizing_context_tokens:
        return f"what memory holds when every sequence may reach the {slot}"
    return (
        f"what memory holds when every sequence is at the mean context a decode step reads "
        f"({w.batch_cap_context_tokens:,} tokens, longer than the {slot}: the output's lognormal tail runs past it)"
    )


def _method_rows(scenario: Scenario, results, rules: str) -> list[Assumption]:
    """How each option's batch and replicas were found, as the review sized them (a trial: the sheet stated the
    closed form's TPOT-best batch and ceil(peak / rate) where the fleet was sized on simulated percentiles). Sized on
    simulated percentiles (``evaluate._cheapest_under_load``, ``evaluate._simulated``): each replica runs at most what
    memory holds at the high-percentile lengths (``Candidate.slots``), and the serving replicas are the fewest whose
    simulated TTFT and TPOT at that percentile meet the targets less the margin
    (``planner.serving.fleet.fewest_replicas``); the group is the one whose fleet costs least. By Little's law
    (``sizing = "littles-law"``, or an option the simulation could not size, which its warning names): the closed
    form's batch and rate (``evaluate._best_batch``, ``sizing.size``). Either way: spares added, GPUs rounded up to
    whole nodes (``sizing.gpus_to_buy``)."""
    w = scenario.workload
    q, sized = f"p{w.high_percentile:g}", f"p{w.sizing_percentile:g}"
    nodes = "spares added; GPUs = replicas x GPUs per replica, rounded up to whole nodes (instances when rented)"
    closed = [
        Assumption(
            "Sequences in flight per replica (batch), by Little's law",
            "the batch (its KV cache fits at the high-percentile lengths) that lets a replica take the most requests/s",
            "",
            rules,
        ),
        Assumption(
            "Prompts and decode share a replica, by Little's law",
            "taking x requests/s, a replica spends x x prompt time of each second on prompts",
            "",
            "continuous batching; " + rules,
        ),
        Assumption(
            "Replicas, by Little's law", f"ceil(peak rate / requests per second a replica takes); {nodes}", "", rules
        ),  # fmt: skip
    ]
    if w.sizing != "simulated":
        return [replace(a, what=a.what.removesuffix(", by Little's law")) for a in closed]
    where = "planner.export.evaluate with planner.serving (docs/export.md, How an option is sized, step 5)"
    simulated = [
        Assumption(
            "Sequences in flight per replica (batch)",
            f"{_cap_words(w)}, within the engine's limit: the simulated replica's max_num_seqs "
            "(the traffic sets how many run at once, up to it)",
            "",
            where,
        ),
        Assumption(
            "Replicas",
            f"the fewest serving replicas whose simulated {sized} TTFT and {sized} TPOT at the planned peak (the traffic "
            f"{ROUTED[w.routing]} over them; {simulated_lengths_words(w)}; the engine's scheduler simulated step by "
            f"step) meet the targets less the margin; {nodes}",
            "",
            where,
        ),
        Assumption(
            "GPUs per replica",
            f"each tensor-parallel group whose model fits and that meets the targets for one {q} prompt alone and "
            "one sequence decoding is sized as above; the group whose fleet costs least a month is kept, and of groups "
            "that cost the same, the one with the most headroom at peak (the more traffic carried within the targets)"
            + _groups_skipped_words(results),
            "",
            where,
        ),
    ]
    fell_back = any(r.meets and r.under_load is None for r in results)  # its warning: "sized by Little's law"
    return simulated + (closed if fell_back else [])


def _groups_skipped_words(results) -> str:
    """The groups the simulation skipped (``Result.groups_skipped``: a KV cache shorter than the longest request
    drawn), one line each naming its option, in ``planner plan``'s words; "" where none was (trial 28 F1: a reader saw
    4 GPUs per replica kept and no word of why 2 were not)."""
    lines = [f"{r.option.name}: {note}" for r in results for note in r.groups_skipped]
    if not lines:
        return ""
    return (
        "; a group whose KV cache cannot hold the longest request drawn is skipped (no number of its replicas "
        "serves it):\n" + ";\n".join(lines)
    )


def _draft(option, catalog) -> str:
    """The draft an option speculates with, in words (``SpeculativeDecoding.draft``): its speculative_method, else
    the checkpoint's MTP layers where it ships them, else an EAGLE-3 head."""
    spec = speculation_for(
        option.model, option.speculative_tokens, option.acceptance_length, catalog=catalog,
        method=option.speculative_method,
    )  # fmt: skip
    return f"{spec.draft}; {spec.held}"


def _not_included(scenario: Scenario) -> str:
    """What no figure of the review includes: interest and residual value only where [finance] leaves them at 0 (the
    monthly costs and the Ownership sheet apply them where it sets them); where an option buys, the on-premises
    operating costs (``ON_PREMISES_LEFT_OUT``) and that they favour renting."""
    fin = scenario.finance
    left = ["storage", "staff", "software licences"]
    left += [] if fin.cost_of_capital else ["interest (cost_of_capital 0)"]
    booked = any(book_value_note(o, fin) for o in scenario.option)  # valued at its book value (trial 26 F13)
    left += [] if fin.residual_value_share or booked else ["residual value (residual_value_share 0)"]
    text = ", ".join([*left, "discounts"])
    if any(o.pricing == "purchase" for o in scenario.option):
        text += (
            f"; for bought GPUs, on-premises operating costs: {ON_PREMISES_LEFT_OUT} (a rent includes the provider's "
            "own, so each would add to buying's cost alone: they favour renting)"
        )
    return text


#: The published runs of an option's deployment its Assumptions row names (plan names as many).
PUBLISHED_RUNS_SHOWN = 3


def option_deployment(r) -> Deployment | None:
    """The deployment an option plans: its kept group's GPUs, layout, weight and KV precisions; None where it keeps
    no group."""
    if not r.meets:
        return None
    return Deployment.planned(
        r.gpu.name,
        r.model.name,
        r.engine.name,
        r.option.parallelism or "tp",
        r.candidate.gpus_per_replica,
        r.weight_precision,
        r.kv_precision,
    )


def published_runs_row(r) -> Assumption | None:
    """The option's row naming the shipped published runs of its deployment (the kept group's GPUs, layout, weight
    and KV precisions) with ``planner validate``'s signed error on each, the farthest off first, as ``planner plan``
    names them (``planner.accuracy.same_deployment``); None where the option keeps no group or no run matches."""
    d = option_deployment(r)
    runs = same_deployment_runs(d) if d is not None else []
    if not runs:
        return None
    shown = "; ".join(
        f"{run.record_id} " + ", ".join(f"{FIGURE_WORDS[c.quantity]} {c.error:+.0%}" for c in run.figures)
        for run in runs[:PUBLISHED_RUNS_SHOWN]
    )
    return Assumption(
        f"{r.option.name}: published runs of this deployment ({d.layout}), farthest off first",
        shown,
        "predicted / published - 1",
        f"planner validate's error on the {counted(len(runs), 'shipped published run')} of the same GPU, model, "
        f"engine (any release), layout and group, weight and KV precision ({d.words(r.expert_precision)}), each predicted as it ran "
        "(catalogs/reference/published_run_errors.csv; planner plan names them too)",
    )


def grid_prices(results, grid) -> tuple[Assumption, ...]:
    """A row for each price the like-for-like grid pays (``planner.export.outlook.like_for_like``) that no option of
    the review pays (those are listed with their option): GPU, price kind, the rate or purchase price, its source;
    a reserved one says what it is (``ownership.reserved_terms``: Hyperstack's are 'from' rates whose term is set per
    contract; trial 14 found the grid's reserved prices listed nowhere)."""
    paid = {(r.gpu.name, r.money.price_kind, _price_of(r.money)) for r in results if r.money is not None}
    rows: dict[tuple, Assumption] = {}
    for g in grid:
        r = g.result
        if r is None:
            continue
        key = (r.gpu.name, r.money.price_kind, _price_of(r.money))
        if key in paid or key in rows:
            continue
        m = r.money
        terms = reserved_terms(r)
        what = f"Like for like: {r.gpu.name}, {m.price_kind} price" + (
            " per GPU" if m.pricing == "purchase" else " per GPU-hour"
        )
        rows[key] = sourced(what + (f" ({terms})" if terms else ""), key[2], "US$", m.price_source)
    return tuple(rows.values())


def _price_of(money) -> float:
    """The price a ``Money`` pays: the GPU's purchase price when bought, else its rate per GPU-hour."""
    return float(money.purchase_usd if money.pricing == "purchase" else money.cloud_usd_per_gpu_hour)


def horizon_rows(scenario: Scenario) -> list[Assumption]:
    """The review's time and demand assumptions (trial 14 F10 found them only in docs/export.md): traffic flat after
    the growth horizon, the ownership horizon (another key of the same name), what a quarter is, how the quarters'
    fleets and the other traffic levels are sized, the stress case and the grid's price kinds."""
    w, fin = scenario.workload, scenario.finance
    growth = "[workload] growth_months / default 12"
    owned = "[finance] horizon_months / default 36 (not [workload] growth_months, the months traffic grows over)"
    return [
        Assumption(
            f"Traffic after the growth horizon (month {w.horizon_months})",
            "flat at the planned peak: no growth in later months",
            "",
            f"{growth}; planner.export.finance.traffic_share_of_plan (docs/export.md)",
        ),
        Assumption(
            "Cost-of-ownership horizon (Ownership, Like for like, Demand cases)", fin.horizon_months, "months", owned
        ),
        Assumption(
            "Quarters (Fleet by quarter, the phased cash)",
            "Q1 = months 1-3 counted from the plan's first month; not fiscal or calendar quarters",
            "",
            "planner.export.finance.quarter_end_months",
        ),
        Assumption(
            "Each quarter's fleet",
            "the planned fleet scaled to the peak of the quarter's last month, the peak growing linearly (the same "
            "step each month, not compounding) from today's to the planned peak (same group and requests/s per "
            "replica), not sized again",
            "",
            "planner.export.evaluate.fleet_at",
        ),
        Assumption(
            f"High demand case (stress): planned peak x this; with the -/+ {scenario.traffic_change:.0%} "
            f"sensitivity, each option {SIZED_AFRESH}",
            fin.stress_multiplier,
            "x",
            "[finance] stress_multiplier / default 2; planner.export.evaluate.sized_again",
        ),
        Assumption(
            "Like for like: price kinds tried",
            ", ".join(fin.grid_price_kinds),
            "",
            "[finance] grid_price_kinds / default purchase, reserved, on-demand (spot added when an option pays it)",
        ),
    ] + reserved_term_rows(fin)


def reserved_term_rows(fin) -> list[Assumption]:
    """The reserved contracts' term and rule where [finance] reserved_term_months sets one (F17); none otherwise
    (each reserved price's own words then say its cash is phased as if billed monthly)."""
    if fin.reserved_term_months is None:
        return []
    return [
        Assumption(
            "Reserved price: contract term (each step up of the fleet signs a contract for the GPUs added, paid "
            "monthly for its whole term, past the horizon too; or the peak signed from month 1, whichever commits "
            "less in all; the monthly cost shown is the horizon's reserved cash / its months)",
            fin.reserved_term_months,
            "months",
            "[finance] reserved_term_months; planner.export.finance.reserved_cash",
        )
    ]


def memory_rows(r, utilization: Assumption, w: Workload) -> list[Assumption]:
    """The memory chain behind an option's batch, per GPU of its kept group, as ``planner plan`` prints it (trial 25 F2:
    a checker could not reproduce "107 sequences in flight" from the review): memory the engine sees, the engine's
    ``utilization`` row, weights, the reserve (the one fitted figure, with its source), the KV budget, KV bytes per
    token (the model's and one GPU's), the cache's tokens in whole blocks, the sequences memory holds, the engine's
    max_num_seqs and the max batch. Every value is ``Result.memory`` (``planner.export.memory_chain``: the memory plan
    the sizing read); only ``utilization`` where the option meets no target (no group kept)."""
    c = r.memory
    if c is None:
        return [utilization]
    o, g, n = r.option, r.gpu, c.gpus
    at = f"{o.name}: per GPU ({n} per replica)"
    ctx = f"{c.context_tokens:,}"
    seen = f"{at}: memory the engine sees"
    seen_row = (
        sourced(seen, c.visible_bytes_per_gpu / 1e9, "GB", g.engine_visible_memory_source)
        if g.engine_visible_memory_source
        else Assumption(
            seen,
            c.visible_bytes_per_gpu / 1e9,
            "GB",
            "no measured figure: physical memory x (1 - ECC share) x the engine's visible share "
            "(planner.model.memory.visible_memory_bytes)",
        )
    )
    budget_rule = (
        "utilization x (memory seen - weights - reserve)"
        if c.budget_mode == "free"
        else "memory seen x utilization - weights - reserve"
    )
    blocks = f"{c.block_tokens:,}-token blocks" if c.block_tokens > 1 else "tokens"
    return [
        seen_row,
        replace(utilization, what=f"{at}: x {utilization.what.split(': ', 1)[1]}"),
        Assumption(
            f"{at}: - weights (whole model {c.weight_bytes / 1e9:,.2f} GB)",
            c.weight_bytes_per_gpu / 1e9,
            "GB",
            f"parameters x bytes per weight ({r.weights_label}) / GPUs per replica (planner.api.weight_bytes; "
            "planner.api.weight_bytes_per_gpu)",
        ),
        Assumption(
            f"{at}: - activation and runtime reserve (the one fitted figure)",
            c.reserve_bytes_per_gpu / 1e9,
            "GB",
            c.reserve_source,
        ),
        Assumption(
            f"{at}: = KV cache budget",
            c.kv_budget_bytes_per_gpu / 1e9,
            "GB",
            f"{budget_rule} (planner.model.memory.kv_budget_bytes_per_gpu)",
        ),
        Assumption(
            f"{o.name}: KV cache per token, whole model ({r.kv_precision})",
            c.kv_bytes_per_token,
            "B",
            "K and V values a token caches over every layer x bytes each (planner.api.kv_bytes_per_token; GQA/MHA: "
            "2 x layers x KV heads x head dim x bytes)",
        ),
        Assumption(
            f"{at}: KV cache per token",
            c.kv_bytes_per_token_per_gpu,
            "B",
            "each GPU caches its share of the KV heads (a copy of a head where the group has more GPUs than KV "
            "heads; planner.model.memory.memory_plan)",
        ),
        Assumption(
            f"{o.name}: KV cache tokens per replica (whole {blocks})",
            c.kv_cache_tokens,
            "tokens",
            f"floor(KV cache budget / (KV per token per GPU x {c.block_tokens:,})) x {c.block_tokens:,}: every GPU "
            "holds its share of every token (planner.model.memory.kv_cache_tokens; vLLM's 'GPU KV cache size')",
        ),
        Assumption(
            f"{o.name}: KV block (a sequence takes whole blocks)",
            c.block_tokens,
            "tokens",
            f"engine profile '{r.engine.name}' (block_size)",
        ),
        Assumption(
            f"{o.name}: sequences of {ctx} tokens memory holds per replica",
            c.memory_max_batch,
            "sequences",
            f"KV cache tokens / {ctx} tokens (p{w.high_percentile:g} prompt + p{w.high_percentile:g} output) in "
            "whole blocks, rounded down (planner.api.max_batch, the memory plan the sizing read)",
        ),
        Assumption(
            f"{o.name}: engine's max_num_seqs on {g.name}",
            c.max_num_seqs,
            "sequences",
            f"engine profile '{r.engine.name}': its default by this GPU's memory and name (1,024 on an H100, "
            "256 on an A100 or a smaller GPU; EngineProfile.batching_limits, planner.api.engine_sequence_limit)"
            if r.engine.name.startswith("vllm")
            else f"engine profile '{r.engine.name}': its default for this GPU (EngineProfile.batching_limits, "
            "planner.api.engine_sequence_limit)",
        ),
        Assumption(
            f"{o.name}: max batch: sequences in flight per replica, at most",
            c.max_batch,
            "sequences",
            "min(sequences memory holds, max_num_seqs): the engine's cap (planner.api.served_batch), Options' "
            "'Sequences in flight per replica, at most'; at the traffic fewer run",
        ),
    ]


def _layer_sources(o) -> str:
    """Where the option's weights / KV cache / engine came from, in that order (the scenario, else the default)."""
    weights = "scenario" if o.weight_precision is not None else "as published"
    kv = "scenario" if o.kv_precision is not None else "activation dtype"
    engine = "scenario" if "engine" in o.model_fields_set else f"default {o.engine}"
    return f"{weights} / {kv} / {engine}"


def _memory_utilization(r) -> tuple[float, str]:
    """The memory utilization this option's replicas used, with its source: the scenario's, SGLang's own rule on
    this GPU and group (``planner.engines.sglang.default_memory_fraction``), else the engine profile's. An option
    that meets no target takes the rule too, on the group it was held to, else its largest group that holds the
    model (``_group_tried``): one path for every option (trial 31 F12: 83%, the profile's, for the H200 SGLang
    option that missed, where the sized options and ``planner plan`` showed the rule's 76%)."""
    o, e = r.option, r.engine
    if o.memory_utilization is not None:
        return float(o.memory_utilization), "scenario (memory_utilization)"
    profile = f"planner.engines.profiles profile '{e.name}' (fitted to public measurements; docs/accuracy.md)"
    n = _group_tried(r)
    if not e.memory_fraction_rule or n is None:
        return e.memory_utilization, profile
    from planner.engines.sglang import default_memory_fraction

    layout = o.parallelism or "tp"
    ranks = n if layout == "dp-ep" else 1
    g = r.gpu
    measured = getattr(g, "engine_visible_memory_bytes", None)
    usable = g.memory_bytes * (1.0 - (getattr(g, "ecc_reserved_fraction", 0.0) or 0.0))
    visible = measured if measured else usable * e.visible_memory_fraction  # as planner.model.visible_memory_bytes
    util = float(default_memory_fraction(e.memory_fraction_rule, visible, n, ranks, r.model.mla is not None))
    where = f"{n} x {r.gpu.name}" + (f", data-parallel attention over {n}" if layout == "dp-ep" else f", TP{n}")
    return round(util, 4), (
        f"SGLang's own rule ({e.memory_fraction_rule}: mem_fraction_static on {where}; "
        "planner.engines.sglang.default_memory_fraction)"
    )


def _group_tried(r) -> int | None:
    """The GPUs per replica an option's memory utilization is stated for: its kept group where it meets the
    targets, else the group the option is held to (``gpus_per_replica``), else the largest group tried that holds the
    model (its ``candidates``); None where none does."""
    if r.replica is not None:
        return int(r.replica.gpus)
    if r.option.gpus_per_replica:
        return int(r.option.gpus_per_replica)
    fitting = [c.gpus_per_replica for c in r.candidates if c.fits]
    return max(fitting) if fitting else None
