"""The one explicit loader: shipped catalog, then user folders that extend or override it.

A catalog folder holds TOML files whose top-level arrays are ``[[gpu]]``, ``[[model]]`` and
``[[precision]]``, and in a user folder ``[[price]]``: a quote for a GPU the catalog already has (``gpu = "H100"``
plus a ``[[gpu.prices]]`` quote's fields), added to that GPU's prices without copying its entry. Folders are read in order: the shipped one, those named in the environment variable
``PLANNER_CATALOG`` (separated by ``os.pathsep``), then those passed in. An entry whose name matches an earlier
entry's name replaces it; one whose alias only is an earlier entry's name is refused (it would replace a model of
another name without saying so); other entries are added.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from planner.catalog import names
from planner.catalog.schema import Gpu, GpuPrice, Model, Precision, normalize_name
from planner.errors import CatalogError, EmptyCatalogFolderError, InvalidInputError, UnknownNameError
from planner.io.limits import MAX_CATALOG_ENTRIES, MAX_CATALOG_FILE_BYTES, MAX_CATALOG_FILES, read_text_bounded
from planner.io.toml_text import loads_toml, toml_repr

ENV_VAR = "PLANNER_CATALOG"
KINDS: dict[str, type[BaseModel]] = {"gpu": Gpu, "model": Model, "precision": Precision}
#: The price-only table of a user folder (``GpuPrice``): read beside ``KINDS``, applied after the folder's GPUs.
PRICE_KIND = "price"

E = TypeVar("E", Gpu, Model, Precision)


def shipped_catalog_dir() -> Path:
    """The catalog inside the installed package, or the repository's ``catalogs/`` in a source checkout."""
    packaged = Path(__file__).resolve().parent.parent / "_catalogs"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "catalogs"


@dataclass(frozen=True)
class Table(Generic[E]):
    """Entries of one kind, found by name or alias (case, spaces, hyphens and underscores ignored)."""

    kind: str
    entries: tuple[E, ...]
    _index: Mapping[str, E] = field(repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[str, E] = {}
        for entry in self.entries:
            for alias in entry.all_names():
                index.setdefault(normalize_name(alias), entry)
        object.__setattr__(self, "_index", index)

    def get(self, name: str | E) -> E:
        if isinstance(name, BaseModel):
            return name  # already an entry
        if not isinstance(name, str):
            raise UnknownNameError(self.kind, name, self.names())
        try:
            return self._index[normalize_name(name)]
        except KeyError:
            raise UnknownNameError(self.kind, name.strip(), self.names() + self.aliases()) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name) in self._index

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def aliases(self) -> list[str]:
        return [a for e in self.entries for a in e.aliases]


@dataclass(frozen=True)
class Catalog:
    """GPUs, models and precisions, with the folders they were read from."""

    gpus: Table[Gpu]
    models: Table[Model]
    precisions: Table[Precision]
    folders: tuple[Path, ...] = ()
    #: shipped entries a user folder replaced: (kind, name, folder); every surface that uses one says so
    replaced: tuple[tuple[str, str, str], ...] = ()
    #: entries a user folder added or replaced: (kind, name, folder), in load order (a review names them)
    from_folders: tuple[tuple[str, str, str], ...] = ()
    #: quotes a user folder's ``[[price]]`` entries added to a GPU: (GPU name, provider, kind, folder)
    added_prices: tuple[tuple[str, str, str, str], ...] = ()
    #: ``names.gpu_name`` / ``names.model_name`` answers already read, by (kind, text): the catalog is frozen, so a
    #: written name means the same entry every time (the accuracy fits read the same published names thousands of
    #: times). Not an init field, so ``dataclasses.replace`` gives a new catalog an empty one.
    name_reads: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def replaced_note(self, *entries: Any) -> str:
        """Which of ``entries`` (catalog entries) a user folder put in place of a shipped one of that name:
        "Llama-3.1-8B is /my/cat's entry, not the shipped one"; "" where none is."""
        names = {e.name for e in entries if e is not None}
        hits = [(name, folder) for _, name, folder in self.replaced if name in names]
        return "; ".join(f"{name} is {folder}'s entry, not the shipped one" for name, folder in hits)

    def gpu(self, name: str | Gpu) -> Gpu:
        """The GPU of a name, an alias, or a name as logs write it ("NVIDIA H100", "H100 80GB": ``names.gpu_name``)."""
        return _get_or_read(self.gpus, name, lambda text: names.gpu_name(text, self))

    def model(self, name: str | Model) -> Model:
        """The model of a name, an alias, or a hub checkpoint's name ("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8":
        the base model; ``names.model_name``). The precision such a name states: ``names.checkpoint_precision``;
        its quantization block (Qwen's "-FP8": 128, ``names.checkpoint_block_size``) is the entry's
        ``weight_block_size``, so a group that splits a block is refused as for DeepSeek-V3."""
        entry = _get_or_read(self.models, name, lambda text: names.model_name(text, self))
        block = names.checkpoint_block_size(name)  # an alias too: "Qwen/Qwen3.5-35B-A3B-FP8" is one
        if block and not entry.weight_block_size:
            key = ("checkpoint", name.strip())
            if key not in self.name_reads:
                self.name_reads[key] = entry.model_copy(update={"weight_block_size": block})
            return self.name_reads[key]
        return entry

    def precision(self, name: str | Precision) -> Precision:
        return self.precisions.get(name)

    def table(self, kind: str) -> Table:
        return {"gpu": self.gpus, "model": self.models, "precision": self.precisions}[kind]


def _get_or_read(table: Table[E], name: str | E, read) -> E:
    """``table.get(name)``; for text it does not know, the entry ``read(name)`` names (None: the unknown-name error,
    with its nearest names, stands). The error, whose nearest names cost a difflib pass over every name, is
    built only when ``read`` finds nothing either (published names such as "NVIDIA H100 SXM 80GB" are read on
    every lookup: the accuracy protocol asks for 100,000 of them)."""
    if isinstance(name, str) and name not in table:
        found = read(name)
        if found is not None:
            return table.get(found)
    return table.get(name)


def _describe(exc: ValidationError, model: type[BaseModel]) -> str:
    errors = exc.errors()
    extra = [e for e in errors if e["type"] == "extra_forbidden"]
    if extra:  # a typo explains the "missing" error that comes with it
        key = str(extra[0]["loc"][-1])
        close = difflib.get_close_matches(key, list(model.model_fields), n=1)
        return f"unknown field {key!r}" + (f"; did you mean {close[0]!r}?" if close else "")
    err = errors[0]
    where = ".".join(str(p) for p in err["loc"]) or "(entry)"
    msg = err["msg"].removeprefix("Value error, ")
    got = f"; got {toml_repr(err['input'])}" if err["type"] != "value_error" and "input" in err else ""
    extra = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"field '{where}': {msg}{got}{extra}"


def _read_file(path: Path) -> dict[str, list]:
    try:
        data = loads_toml(read_text_bounded(path, MAX_CATALOG_FILE_BYTES, "a catalog file"))
    except InvalidInputError as exc:
        raise CatalogError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read catalog file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - set(KINDS) - {PRICE_KIND}
    if unknown:
        raise CatalogError(
            f"{path}: unknown table {sorted(unknown)[0]!r}; a catalog file holds [[gpu]], [[model]], [[precision]] "
            'and [[price]] (a quote for a GPU the catalog has: gpu = "H100" and a [[gpu.prices]] quote\'s fields)'
        )
    return data


def _validate(path: Path, kind: str, raw: object, position: int) -> BaseModel:
    label = raw.get("name", f"#{position}") if isinstance(raw, dict) else f"#{position}"
    if not isinstance(raw, dict):
        raise CatalogError(f"{path}: {kind} {label}: expected a table ([[{kind}]]), got {type(raw).__name__}")
    try:
        return KINDS[kind](**raw)
    except ValidationError as exc:
        raise CatalogError(f"{path}: {kind} {label!r}: {_describe(exc, KINDS[kind])}") from None


def _validate_price(path: Path, raw: object, position: int) -> tuple[GpuPrice, Path]:
    label = f"price #{position}" + (f" (gpu {raw['gpu']!r})" if isinstance(raw, dict) and "gpu" in raw else "")
    if not isinstance(raw, dict):
        raise CatalogError(f"{path}: {label}: expected a table ([[price]]), got {type(raw).__name__}")
    try:
        return GpuPrice(**raw), path
    except ValidationError as exc:
        raise CatalogError(f"{path}: {label}: {_describe(exc, GpuPrice)}") from None


def _add_prices(gpus: list[Gpu], prices: Iterable[tuple[GpuPrice, Path]], added: list) -> list[Gpu]:
    """``gpus`` with each ``[[price]]`` quote appended to the prices of the GPU it names (by name or alias)."""
    merged = list(gpus)
    for entry, path in prices:
        key = normalize_name(entry.gpu)
        hits = [i for i, g in enumerate(merged) if key in {normalize_name(n) for n in g.all_names()}]
        if not hits:
            near = difflib.get_close_matches(entry.gpu, [g.name for g in merged], n=1)
            raise CatalogError(
                f"{path}: [[price]] for gpu {entry.gpu!r}: no GPU of that name or alias in the catalog (the shipped "
                "one and the folders up to this one)" + (f"; did you mean {near[0]!r}?" if near else "")
            )
        g = merged[hits[0]]
        merged[hits[0]] = g.model_copy(update={"prices": (*g.prices, entry.quote())})
        added.append((g.name, entry.provider, entry.kind, str(path.parent)))
    return merged


def read_folder(folder: Path) -> dict[str, list[BaseModel]]:
    """All entries in a catalog folder's ``*.toml`` files (sorted by file name), validated. A folder without any
    ``*.toml`` file is refused (``EmptyCatalogFolderError``): from every surface that names one (``--catalog``,
    ``$PLANNER_CATALOG``, the xlwings config, =PLANNER_RELOAD), it is a wrong folder, not an empty catalog."""
    folder = Path(folder)
    if folder.is_file():
        raise CatalogError(f"{folder}: a file, not a folder; give the folder that holds your *.toml catalog files")
    if not folder.is_dir():
        raise CatalogError(f"{folder}: catalog folder not found")
    found: dict[str, list[BaseModel]] = {k: [] for k in KINDS}
    paths = sorted(itertools.islice(folder.glob("*.toml"), MAX_CATALOG_FILES + 1))
    if not paths:
        raise EmptyCatalogFolderError(folder)
    if len(paths) > MAX_CATALOG_FILES:
        raise CatalogError(
            f"{folder}: more than {MAX_CATALOG_FILES:,} *.toml files; a catalog folder holds at most that"
        )
    for path in paths:
        for kind, items in _read_file(path).items():
            if not isinstance(items, list):
                raise CatalogError(f"{path}: '{kind}' must be an array of tables ([[{kind}]])")
            if kind == PRICE_KIND:
                found.setdefault(PRICE_KIND, []).extend(
                    _validate_price(path, raw, i + 1) for i, raw in enumerate(items)
                )
                continue
            if len(found[kind]) + len(items) > MAX_CATALOG_ENTRIES:
                raise CatalogError(
                    f"{path}: more than {MAX_CATALOG_ENTRIES:,} {kind} entries in {folder}; a catalog holds at most that"
                )
            found[kind].extend(_validate(path, kind, raw, i + 1) for i, raw in enumerate(items))
    return found


def _merge(base: list[E], overrides: Iterable[E], kind: str, folder: Path, replaced: list | None = None) -> list[E]:
    merged = list(base)
    first: dict[str, int] = {}  # an entry's normalized name -> the first place it holds (one lookup per name)
    for i, old in enumerate(merged):
        first.setdefault(normalize_name(old.name), i)
    for entry in overrides:
        hits = [first[k] for k in {normalize_name(n) for n in entry.all_names()} if k in first]
        if hits and normalize_name(entry.name) not in first:  # only an alias is an earlier entry's name
            taken = next(a for a in entry.aliases if normalize_name(a) in first)
            other = merged[first[normalize_name(taken)]].name
            raise CatalogError(
                f"{folder}: {kind} {entry.name!r}: alias {taken!r} is the name of the catalog's {other!r}, which it "
                f"would replace; name the entry {other!r} to replace that {kind}, or give it another alias"
            )
        if hits:  # replaces the earlier entry of its name
            i = min(hits)
            old_key = normalize_name(merged[i].name)
            if first.get(old_key) == i:  # (two entries of one name are refused below, after the merge)
                del first[old_key]
            if replaced is not None:
                replaced.append((kind, entry.name, str(folder)))
            merged[i] = entry
            key = normalize_name(entry.name)
            first[key] = min(first.get(key, i), i)
        else:
            first.setdefault(normalize_name(entry.name), len(merged))
            merged.append(entry)
    # a name may not point at two entries
    owner: dict[str, str] = {}
    for entry in merged:
        for alias in entry.all_names():
            key = normalize_name(alias)
            if owner.setdefault(key, entry.name) != entry.name:
                raise CatalogError(
                    f"{folder}: {kind} {entry.name!r}: name or alias {alias!r} already belongs to {owner[key]!r}"
                )
    return merged


def env_folders() -> list[Path]:
    value = os.environ.get(ENV_VAR, "")
    return [Path(p) for p in value.split(os.pathsep) if p.strip()]


def load_catalog(*folders: str | os.PathLike, use_env: bool = True, shipped: bool = True) -> Catalog:
    """Read the shipped catalog, then ``$PLANNER_CATALOG`` folders, then ``folders``; later entries override."""
    order = (
        ([shipped_catalog_dir()] if shipped else []) + (env_folders() if use_env else []) + [Path(f) for f in folders]
    )
    entries: dict[str, list] = {k: [] for k in KINDS}
    replaced: list[tuple[str, str, str]] = []
    from_folders: list[tuple[str, str, str]] = []
    added: list[tuple[str, str, str, str]] = []
    for folder in order:
        user = not (shipped and folder == order[0])
        found = read_folder(folder) if user else _read_shipped(folder)
        prices = found.pop(PRICE_KIND, [])
        for kind, items in found.items():
            entries[kind] = _merge(entries[kind], items, kind, folder, replaced if user else None)
            if user:
                from_folders += [(kind, e.name, str(folder)) for e in items]
        if prices:
            entries["gpu"] = _add_prices(entries["gpu"], prices, added)
    catalog = Catalog(
        gpus=Table("GPU", tuple(entries["gpu"])),
        models=Table("model", tuple(entries["model"])),
        precisions=Table("precision", tuple(entries["precision"])),
        folders=tuple(order),
        replaced=tuple(replaced),
        from_folders=tuple(from_folders),
        added_prices=tuple(added),
    )
    _check_references(catalog)
    return catalog


#: The shipped folder's entries read so far in this process, keyed by each file's path, size and modification time:
#: every ``load_catalog`` with a user folder (``--catalog``, ``$PLANNER_CATALOG``, ``catalog import-hf``'s check)
#: read and validated the shipped files again (~0.25 s CPU). The entries are frozen; each call gets new lists.
_SHIPPED_ENTRIES: dict[tuple, dict[str, tuple[BaseModel, ...]]] = {}


def _read_shipped(folder: Path) -> dict[str, list[BaseModel]]:
    """``read_folder(folder)`` for the shipped catalog folder, read once while its files are unchanged."""
    paths = sorted(Path(folder).glob("*.toml"))
    key = (str(folder), *((str(p), st.st_size, st.st_mtime_ns) for p in paths for st in [p.stat()]))
    if key not in _SHIPPED_ENTRIES:
        _SHIPPED_ENTRIES.clear()
        _SHIPPED_ENTRIES[key] = {kind: tuple(items) for kind, items in read_folder(folder).items()}
    return {kind: list(items) for kind, items in _SHIPPED_ENTRIES[key].items()}


def _check_references(catalog: Catalog) -> None:
    """Every precision a model or a GPU's ``weight_precisions`` names is in the catalog: a CatalogError here, not an
    IndexError in ``export``.

    A catalog read without any precisions (``shipped=False`` over a folder of models only) is not checked.
    """
    if not len(catalog.precisions):
        return
    for m in catalog.models:
        for key in ("native_precision", "native_expert_precision"):
            name = getattr(m, key)
            if name is not None and name not in catalog.precisions:
                folders = ", ".join(str(f) for f in catalog.folders)
                raise CatalogError(
                    f"model {m.name!r}: {key}: {UnknownNameError('precision', name, catalog.precisions.names())} "
                    f"(catalog folders: {folders})"
                )
    for g in catalog.gpus:
        for name in g.weight_precisions or ():
            if name not in catalog.precisions or catalog.precision(name).name != name:
                folders = ", ".join(str(f) for f in catalog.folders)
                raise CatalogError(
                    f"GPU {g.name!r}: weight_precisions: {name!r} is not a precision's own name; known: "
                    f"{', '.join(catalog.precisions.names())} (catalog folders: {folders})"
                )


@functools.lru_cache(maxsize=8)
def _cached(folders: tuple[str, ...], env: str) -> Catalog:
    return load_catalog(*folders)


def default_catalog(*folders: str | os.PathLike) -> Catalog:
    """The catalog for this process: read once per set of folders (and ``$PLANNER_CATALOG``), then reused."""
    return _cached(tuple(str(f) for f in folders), os.environ.get(ENV_VAR, ""))


def as_catalog(catalog: Any) -> Catalog:
    """The catalog a function's ``catalog=`` names: a ``Catalog`` as it is; a folder (``str`` or path) read as
    ``planner plan --catalog DIR`` reads it, the shipped catalog and ``$PLANNER_CATALOG`` first, once per process
    (``default_catalog(folder)``; ``reload_catalog()`` reads edited files again); None: ``default_catalog()``. Any
    other value is an InvalidInputError saying what is accepted."""
    if catalog is None:
        return default_catalog()
    if isinstance(catalog, Catalog):
        return catalog
    if isinstance(catalog, (str, os.PathLike)):
        return default_catalog(catalog)  # a missing or empty folder: the CatalogError --catalog gives
    raise InvalidInputError(
        f"catalog must be a Catalog (load_catalog(folder)) or a folder of *.toml catalog files; got "
        f"{type(catalog).__name__} {catalog!r}"[:300]
    )


def reload_catalog() -> None:
    """Forget cached catalogs, so the next call reads the files again (new entries, edited prices)."""
    _cached.cache_clear()
    _SHIPPED_ENTRIES.clear()
