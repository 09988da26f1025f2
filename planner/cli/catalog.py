"""``planner catalog``: list, show and import catalog entries."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import click
import tomli_w

from planner.catalog.hf import model_from_hf_config
from planner.catalog.hf_files import read_local_model
from planner.catalog.listing import catalog_records
from planner.catalog.resolve import kv_engines
from planner.catalog.schema import PRICE_STALE_AFTER_DAYS, Gpu, Model, Precision, no_rental_price
from planner.cli.options import Whole, catalog_option, load, output_option
from planner.cli.terminal import echo
from planner.cli.terminal import table as aligned
from planner.engines.architecture import param_counts
from planner.errors import UnknownNameError
from planner.io.files import write_file
from planner.units import GiB, fmt_gb, fmt_usd_per_gpu_hour

KINDS = ("gpus", "models", "precisions")


#: A computed parameter count this far from the checkpoint's (a share) is warned at import.
PARAMS_OFF_WARN = 0.10


def entry_to_toml(kind: str, entry: Gpu | Model | Precision) -> str:
    """One entry as a ``[[kind]]`` TOML table, the form the loader reads back."""
    data = entry.model_dump(mode="json", exclude_defaults=True)
    data = {"name": data.pop("name"), **data}  # name first, for the reader
    return tomli_w.dumps({kind: [data]})


def price_cell(g: Gpu, today: datetime.date | None = None) -> str:
    """The GPU's default price for a listing: on-demand, else the first quote; kind, date and a stale flag."""
    price = g.price("on-demand") or (g.prices[0] if g.prices else None)
    if price is None:
        return "no price"
    if no_rental_price(g):  # purchase quotes only: the words plan and the Python error give it
        bought = g.price("purchase")
        several = sum(p.kind == "purchase" for p in g.prices)
        median = f" (median of {several})" if several > 1 else ""
        stale = " STALE" if bought.is_stale(today) else ""
        return f"no rental price; ${bought.purchase_usd:,.0f} purchase {bought.date}{median}{stale}"
    amount = (
        f"${price.purchase_usd:,.0f}"
        if price.kind == "purchase"
        else f"{fmt_usd_per_gpu_hour(price.usd_per_gpu_hour)}/h"
    )
    quotes = [p for p in g.prices if p.kind == price.kind]
    median = f" (median of {len(quotes)})" if len(quotes) > 1 else ""
    newest = max(quotes, key=lambda p: p.quoted_on()).date if quotes else price.date
    # Gpu.price dates a median by its oldest quote (what STALE is judged on); the range shows the newest too
    dates = price.date if newest == price.date else f"{price.date} to {newest}"
    return f"{amount} {price.kind} {dates}{median}" + (" STALE" if price.is_stale(today) else "")


def price_lines(g: Gpu, today: datetime.date | None = None) -> list[str]:
    """``catalog show``'s comment lines under a GPU's TOML: each quote with its age, STALE where ``catalog list`` would
    mark it (quoted more than ``PRICE_STALE_AFTER_DAYS`` days ago), and a month-only date said to be one."""
    today = today or datetime.date.today()
    stale_any = any(price.is_stale(today) for price in g.prices)
    legend = f"; STALE: quoted more than {PRICE_STALE_AFTER_DAYS} days ago" if stale_any else ", none stale"
    lines = [f"# prices as of {today.isoformat()}{legend}:"]
    for price in g.prices:
        amount = (
            f"${price.purchase_usd:,.0f}/GPU" if price.kind == "purchase" else f"${price.usd_per_gpu_hour:,.2f}/GPU-h"
        )
        date = price.date + (" (month only: counted from its 1st)" if len(price.date) == 7 else "")
        stale = f" STALE ({price.age_days(today)} days old)" if price.is_stale(today) else ""
        lines.append(f"#   {amount} {price.kind}, {price.provider}, {date}{stale}")
    return lines


def _gpu_row(g: Gpu) -> tuple[str, ...]:
    peak = g.peak_flop_per_s.get("bf16") or g.peak_flop_per_s.get("fp16")
    return (
        g.name,
        # trial 33 F6: "206.2 GB" alone read as a wrong figure for a "192 GB" MI300X; the vendor's GiB beside it
        f"{fmt_gb(g.memory_bytes, 1)} ({round(g.memory_bytes / GiB, 1):g} GiB)",
        f"{g.hbm_bandwidth_bytes_per_s / 1e9:,.0f} GB/s",  # the datasheet's figure: 1,555 GB/s, not "1.55 TB/s"
        f"{peak / 1e12:,.1f} TFLOP/s",
        price_cell(g),
        ", ".join(g.aliases[:3]),
    )


def _model_row(m: Model) -> tuple[str, ...]:
    total, active = param_counts(m)
    size = f"{total / 1e9:.1f}B" + (f" ({active / 1e9:.1f}B active)" if m.moe else "")
    return (
        m.name,
        size,
        m.attention_kind,
        f"{m.num_layers} layers",
        f"{m.max_context:,} ctx",
        ", ".join(m.aliases[:2]),
    )


def _precision_row(p: Precision) -> tuple[str, ...]:
    engines = kv_engines(p)  # the engines whose KV cache takes it (int4: lmdeploy and the 'ideal' what-if)
    kv = f"KV cache in {', '.join(engines)}" if engines else "weights only"
    return (p.name, f"{p.bytes_per_element:.6g} B/element", f"math {p.math}", kv)


#: Each listing's row and its right-aligned columns (``planner.cli.terminal.table`` sizes every column to its cells).
LISTINGS = {"gpus": (_gpu_row, (1, 2, 3)), "models": (_model_row, (3, 4)), "precisions": (_precision_row, (1,))}


@click.group("catalog")
def catalog_group() -> None:
    """List, show and import catalog entries (GPUs, models, precisions).

    Example:

        planner catalog list models
    """


@catalog_group.command("list")
@click.argument("kind", type=click.Choice(("all", *KINDS, *(k[:-1] for k in KINDS))), default="all")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: an object of lists of records in base units (planner.catalog_records), one key per kind.",
)
@catalog_option
def list_command(kind: str, as_json: bool, catalog_dirs) -> None:
    """List GPUs, models and precisions with their headline numbers (KIND: one of them [default: all]).

    Example:

        planner catalog list gpus

        planner catalog list gpus --json
    """
    kind = kind if kind == "all" or kind.endswith("s") else f"{kind}s"  # "gpu" as `catalog show gpu` takes it
    cat = load(catalog_dirs)
    if as_json:
        kinds = KINDS if kind == "all" else (kind,)
        echo(json.dumps({key: catalog_records(key, cat) for key in kinds}, indent=2))
        return
    sections = {
        "gpus": ("GPUs", cat.gpus),
        "models": ("Models", cat.models),
        "precisions": ("Precisions", cat.precisions),
    }
    for key in KINDS if kind == "all" else (kind,):
        title, entries = sections[key]
        row, right = LISTINGS[key]
        echo(f"{title} ({len(entries)})")
        notes = [cat.origin_note(key[:-1], entry) for entry in entries]  # a user folder's entry: its file
        rows = [
            row(entry) + ((f"({note})",) if note else ("",) if any(notes) else ())
            for entry, note in zip(entries, notes, strict=True)
        ]
        for line in aligned(rows, right):
            echo("  " + line.rstrip())
        echo()
    if kind in ("all", "gpus"):
        echo(
            f"Prices: on-demand where the catalog has one, else its first quote; STALE: quoted more than "
            f"{PRICE_STALE_AFTER_DAYS} days ago (`planner catalog show NAME` lists every quote)."
        )
    echo("Catalog folders: " + ", ".join(str(f) for f in cat.folders))


#: The kinds ``catalog show`` takes before a name, as people type them (``catalog list gpus``'s words too).
SHOW_KINDS = {"gpu": "gpu", "gpus": "gpu", "model": "model", "models": "model", "precision": "precision",
              "precisions": "precision"}  # fmt: skip


@catalog_group.command("show")
@click.argument("words", nargs=-1, required=True, metavar="[KIND] NAME")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of TOML.")
@catalog_option
def show_command(words: tuple[str, ...], as_json: bool, catalog_dirs) -> None:
    """Show one entry (GPU, model or precision) with every field and its source. KIND (gpu, model or precision)
    narrows the search; a name of several words needs no quotes.

    Example:

        planner catalog show llama2-70b

        planner catalog show gpu H100 SXM 80GB
    """
    wanted = SHOW_KINDS.get(words[0].lower()) if len(words) > 1 else None
    name = " ".join(words[1:] if wanted else words)
    cat = load(catalog_dirs)
    known = []
    for kind, table in (("gpu", cat.gpus), ("model", cat.models), ("precision", cat.precisions)):
        if wanted not in (None, kind):
            continue
        entry = _read_name(cat, kind, name)
        if entry is not None:
            if as_json:
                echo(json.dumps(entry.model_dump(mode="json"), indent=2))
                return
            echo(entry_to_toml(kind, entry).rstrip())
            if name not in table:  # a name as logs or price pages write it ("NVIDIA H100 Tensor Core GPU")
                echo(f"# {name!r} read as {entry.name!r}, as plan and export read it")
            origin = cat.origin_note(kind, entry)
            if origin:  # a user folder's entry: which file, and what it replaces
                echo(f"# {origin}")
            if isinstance(entry, Gpu) and entry.prices:
                for line in price_lines(entry):
                    echo(line)
            if isinstance(entry, Model):
                total, active = param_counts(entry)
                echo(
                    f"# computed: {total:,} parameters ({total / 1e9:.1f} billion), {active:,} active; "
                    f"published {entry.published_params_total:,}"
                    + ("" if entry.published_params_verified else " (unverified: see published_params_source)")
                )
            return
        known += table.names() + table.aliases()
    error = UnknownNameError(wanted or "catalog entry", name, known)
    elsewhere = [k for k, t in (("gpu", cat.gpus), ("model", cat.models), ("precision", cat.precisions)) if name in t]
    if elsewhere and wanted:  # "catalog show model H100": the name is a GPU's
        noun = "GPU" if elsewhere[0] == "gpu" else elsewhere[0]
        error.args = (f"{error.args[0].split(';')[0]}; {name!r} is a {noun}: planner catalog show "
                      f"{elsewhere[0]} {name}",)  # fmt: skip
    elif not error.suggestions:  # nothing close: the listing, not the alphabet's first dozen aliases
        error.args = (f"{error.args[0].split(';')[0]}; `planner catalog list` lists every name",)
    raise error


def _read_name(cat, kind: str, name: str) -> Gpu | Model | Precision | None:
    """The entry ``name`` names in ``kind``'s table, read as ``plan`` and ``export`` read it (a GPU as logs write it,
    a model as its hub checkpoint's name: ``Catalog.gpu``, ``Catalog.model``; trial 23 F11: ``catalog show`` refused
    "NVIDIA H100 Tensor Core GPU", which export had read as the H100 SXM), or None."""
    read = {"gpu": cat.gpu, "model": cat.model, "precision": cat.precision}[kind]
    try:
        return read(name)
    except UnknownNameError:
        return None


def _target_catalog(catalog_dirs, folder: Path | None):
    """The catalog the imported entry will be loaded with: the shipped one, ``$PLANNER_CATALOG``, the ``--catalog``
    folders and the ``--to`` folder where it already holds catalog files (trial 18 F3: an alias that clashed with an
    entry of the ``--to`` folder was written, and every later command on that folder failed)."""
    from planner.catalog import default_catalog

    dirs = list(catalog_dirs)
    if folder is not None and folder.is_dir() and any(folder.glob("*.toml")):
        if all(Path(d).resolve() != folder.resolve() for d in dirs):
            dirs.append(folder)
    return default_catalog(*dirs)


def _check_aliases_free(name: str, aliases, catalog=None, model=None, folder: Path | None = None) -> None:
    """Refuse an alias that already names another model of the catalog in effect: loaded beside it, the entry would
    be refused (``planner.catalog.loader``: an alias may not take another entry's name); naming the entry as that
    model replaces it, which ``--name`` does. With ``model``, the entry is also merged into ``catalog`` as the
    loader would merge it from ``folder``, so any clash the loader refuses is refused here, before a file is
    written."""
    from planner.catalog import default_catalog
    from planner.catalog.loader import _merge
    from planner.catalog.schema import normalize_name
    from planner.errors import CatalogError, InvalidInputError

    cat = catalog if catalog is not None else default_catalog()
    models = cat.models
    where = "" if len(cat.folders) <= 1 else f" (catalog folders: {', '.join(str(f) for f in cat.folders[1:])})"
    for alias in aliases:
        try:
            other = models.get(alias)
        except UnknownNameError:
            continue
        if normalize_name(other.name) != normalize_name(name):
            raise InvalidInputError(
                f"--alias {alias!r} already names the catalog's {other.name!r}{where}; give --name {other.name!r} to "
                "replace that model, or another alias"
            )
    if model is not None:
        try:
            to = folder or Path(".")
            _merge(
                [(m, Path(cat.origins.get(("model", m.name), "catalog"))) for m in models], [(model, to)], "model", to
            )
        except CatalogError as exc:
            raise InvalidInputError(f"not written: {exc}") from None


def _replaced_model(name: str, catalog=None) -> list[str]:
    """The note for an entry named as a model the catalog in effect has: loaded from a folder it replaces that model
    and its aliases (the loader's override by name), which a user naming "mixtral-8x7b" may not mean."""
    from planner.catalog import default_catalog

    try:
        other = (catalog if catalog is not None else default_catalog()).models.get(name)
    except UnknownNameError:
        return []
    shown = ", ".join(other.aliases[:4]) + (", ..." if len(other.aliases) > 4 else "")
    return [
        f"{name!r} names the catalog's {other.name!r}: loaded, this entry replaces it"
        + (f" and its aliases ({shown})" if other.aliases else "")
        + "; give another --name to keep both"
    ]


def _config_source(local, hf_id: str) -> str:
    """The entry's ``source``: the config's address on the Hub, at the cached revision where the path names one
    (``.../snapshots/<revision>/config.json``); without ``--hf-id``, the file read and the date (trial 18 F13: a bare
    "config.json" said nothing of where the numbers came from)."""
    path = local.config_path
    revision = path.parent.name if path.parent.parent.name == "snapshots" else ""
    if hf_id:
        return f"https://huggingface.co/{hf_id}/blob/{revision or 'main'}/config.json"
    return (
        f"config.json read from {path.resolve()} by planner catalog import-hf on {datetime.date.today().isoformat()} "
        "(no --hf-id: the repository it came from is not recorded)"
    )


@catalog_group.command("import-hf")
@click.argument("config", type=click.Path(exists=True, path_type=Path))
@click.option("--name", required=True, help="Catalog name for the model, e.g. 'My-Llama-8B'.")
@click.option("--alias", "aliases", multiple=True, help="Short name people will type (repeatable).")
@click.option("--hf-id", default="", help="Hugging Face repo id, e.g. meta-llama/Llama-3.1-8B (used in the source).")
@click.option(
    "--params",
    "published_params",
    type=Whole("a parameter count of 1 or more, e.g. 8030261248", min=1),
    help="Published parameter count, to check the computed one against.",
)
@output_option(
    "--to", "folder", folder=True, help="Catalog folder to write <name>.toml into (default: print the entry)."
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@catalog_option
def import_hf_command(
    config: Path, name: str, aliases, hf_id: str, published_params, folder, force: bool, catalog_dirs
) -> None:
    """Turn a local Hugging Face model into a model entry, offline.

    CONFIG is a config.json, a model folder holding one, or a Hugging Face cache entry
    (~/.cache/huggingface/hub/models--org--name). Where the folder holds safetensors weights, their
    headers (or the index's total_parameters) give the exact parameter count the entry records.

    Example:

    \b
        planner catalog import-hf ~/.cache/huggingface/hub/models--Qwen--Qwen3-8B \\
            --name My-Qwen3-8B --to ~/planner-catalog
    """
    local = read_local_model(config)
    hf_id = hf_id or local.hf_id
    source = ""
    if published_params is None and local.params is not None:
        published_params = local.params
        source = f"stored parameters of {hf_id or local.config_path.parent.name}: {local.params_source}"
    model, notes = model_from_hf_config(
        local.config,
        name,
        hf_id,
        source=_config_source(local, hf_id),
        aliases=tuple(aliases),
        published_params=published_params,
        published_params_source=source,
    )
    catalog = _target_catalog(catalog_dirs, folder)
    _check_aliases_free(name, aliases, catalog, model, folder)
    replaced = _replaced_model(name, catalog)
    text = entry_to_toml("model", model)
    for note in (*local.notes, *notes, *replaced):
        echo(f"note: {note}", err=True)
    if published_params and model.published_params_total == published_params:  # recorded, not a packed count
        total, _ = param_counts(model)
        stated = "stored in safetensors" if source else "published"
        if model.published_total_includes_tied_copy:
            published_params -= model.vocab_size * model.hidden_size
            stated += " (less the tied copy)"
        off = total / published_params - 1
        echo(f"note: computed {total:,} parameters vs {stated} {published_params:,} ({off:+.2%})", err=True)
        if abs(off) > PARAMS_OFF_WARN:  # the shape read is not the checkpoint's: plans budget the computed weights
            echo(
                f"warning: the config's shape, as planner reads it (model_type {model.family or 'unknown'}), gives "
                f"{off:+.0%} the parameters the checkpoint has: its layers are not the ones modelled (a vision tower "
                "in the checkpoint also does this), and plans on this entry budget the computed weights; check the "
                "entry before you use it",
                err=True,
            )
    if folder is None:
        echo(text.rstrip())
        return
    target = folder / f"{''.join(c if c.isalnum() or c in '-_.' else '-' for c in name)}.toml"
    if target.stem != name:
        echo(f"note: --name {name!r} is written to {target.name} (a file name keeps letters, digits, - _ .)", err=True)
    write_file(target, text, force=force, make_parents=True)
    echo(f"wrote {target}; use it with --catalog {folder} or PLANNER_CATALOG={folder}")
