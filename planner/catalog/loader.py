"""The one explicit loader: shipped catalog, then user folders that extend or override it.

A catalog folder holds TOML files whose top-level arrays are ``[[gpu]]``, ``[[model]]`` and
``[[precision]]``, and in a user folder ``[[price]]``: a quote for a GPU the catalog already has (``gpu = "H100"``
plus a ``[[gpu.prices]]`` quote's fields), added to that GPU's prices without copying its entry. Folders are read in order: the shipped one, those named in the environment variable
``PLANNER_CATALOG`` (separated by ``os.pathsep``), then those passed in. An entry whose name matches an earlier
folder's entry's name replaces it (``Catalog.replaced``, said by plan, export, ``catalog list`` and ``show``); one whose
alias only is an earlier entry's name is refused (it would replace a model of another name without saying so); other
entries are added. Within one folder, two entries one name finds are refused, naming both files.

Every broken entry of a folder is refused in one CatalogError, each problem with its file and line (found by a scan
of the text: tomllib keeps no positions), quotes counted from 1 ("price 2 ([[gpu.prices]] at line 51)"), in planner's
words rather than pydantic's.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from planner.catalog import names
from planner.catalog.schema import Gpu, GpuPrice, Model, Precision, normalize_name
from planner.errors import CatalogError, EmptyCatalogFolderError, InvalidInputError, UnknownNameError
from planner.io.limits import MAX_CATALOG_ENTRIES, MAX_CATALOG_FILE_BYTES, MAX_CATALOG_FILES, read_bytes_bounded
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
            raise UnknownNameError(
                self.kind, name.strip(), self.names() + self.aliases(), lambda n: id(self._index[normalize_name(n)])
            ) from None

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
    #: entries a user folder replaced: (kind, name, folder, file, the name it replaced, that entry's file: "" for the
    #: shipped catalog's); every surface that uses one says so (``replaced_note``), ``catalog list``/``show`` too
    replaced: tuple[tuple[str, ...], ...] = ()
    #: the file of each entry read from a user folder, by (kind, name); shipped entries are not in it
    origins: Mapping[tuple[str, str], str] = field(default_factory=dict, compare=False)
    #: quotes a user folder's ``[[price]]`` entries added to a GPU: (GPU name, provider, kind, folder)
    added_prices: tuple[tuple[str, str, str, str], ...] = ()
    #: ``names.gpu_name`` / ``names.model_name`` answers already read, by (kind, text): the catalog is frozen, so a
    #: written name means the same entry every time (the accuracy fits read the same published names thousands of
    #: times). Not an init field, so ``dataclasses.replace`` gives a new catalog an empty one.
    name_reads: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def replaced_note(self, *entries: Any) -> str:
        """Which of ``entries`` (catalog entries) a user folder put in place of an earlier one of that name:
        "Llama-3.1-8B is /my/cat's entry, not the shipped one (/my/cat/m.toml)", or "... is /b's entry (/b/x.toml),
        replacing /a's (/a/y.toml)"; "" where none is."""
        names = {e.name for e in entries if e is not None}
        notes = []
        for name in dict.fromkeys(n for _, n, *_ in self.replaced if n in names):
            chain = [r for r in self.replaced if r[1] == name]
            _, _, folder, path, old_name, old_path = chain[-1]
            shipped = next((r[4] for r in chain if not r[5]), None)  # the shipped entry's name, where one was replaced
            if not old_path:
                was = f" ({old_name!r})" if old_name != name else ""
                notes.append(f"{name} is {folder}'s entry, not the shipped one{was} ({path})")
            else:
                also = (
                    "" if shipped is None else ", not the shipped one" + (f" ({shipped!r})" if shipped != name else "")
                )
                notes.append(f"{name} is {folder}'s entry ({path}), replacing {old_path}'s{also}")
        return "; ".join(notes)

    def origin_note(self, kind: str, entry: Any) -> str:
        """Where a user folder's entry comes from, for ``catalog list``/``show``: "from my/catalog/h100.toml,
        replaces the shipped one"; "" for a shipped entry."""
        path = self.origins.get((kind, entry.name))
        if path is None:
            return ""
        chain = [r for r in self.replaced if r[0] == kind and r[1] == entry.name]
        if not chain:
            return f"from {path}"
        shipped = next((r[4] for r in chain if not r[5]), None)
        if not chain[-1][5]:
            was = f" ({shipped!r})" if shipped != entry.name else ""
            return f"from {path}, replaces the shipped one{was}"
        also = (
            ""
            if shipped is None
            else " (itself in place of the shipped one" + (f", {shipped!r})" if shipped != entry.name else ")")
        )
        return f"from {path}, replaces {chain[-1][5]}'s{also}"

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


#: Problems one refusal lists (every problem of every broken entry in a folder, up to this many).
MAX_PROBLEMS_SHOWN = 25

#: pydantic's words for a wrong type, in planner's: the error type -> what the field takes.
_TYPE_WORDS = {
    "tuple_type": "expected an array",
    "list_type": "expected an array",
    "dict_type": "expected a table (e.g. { fp16 = 989.4e12, bf16 = 989.4e12 })",
    "model_type": "expected a table",
    "model_attributes_type": "expected a table",
    "string_type": "expected text in quotes",
}

#: Array-of-tables fields, by the word one of their tables is called in a message ("price 2").
_SUBTABLES = {"prices": "price"}


class _Lines:
    """Where an entry, its sub-tables and its fields are in a catalog file's text (1-based lines), found by a scan
    of the text: tomllib keeps no positions. The k-th ``[[gpu]]`` header is entry k; a field is the first line of
    the entry's span that assigns it. None where the scan cannot tell (an inline array of tables)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def _headers(self, table: str, start: int = 0, end: int | None = None) -> list[int]:
        pattern = re.compile(r"^\s*\[\[\s*" + r"\s*\.\s*".join(map(re.escape, table.split("."))) + r"\s*\]\]")
        stop = len(self.lines) if end is None else end
        return [i for i in range(start, stop) if pattern.match(self.lines[i])]

    def entry(self, kind: str, position: int, count: int, name: object) -> tuple[int, int] | None:
        """(first, end) line indexes (0-based, end exclusive) of entry ``position`` (1-based) of ``count``."""
        heads = self._headers(kind)
        if len(heads) == count:
            start = heads[position - 1]
        elif isinstance(name, str):  # an inline array: the line naming it
            wanted = re.compile(r"\bname\s*=\s*[\"']" + re.escape(name) + r"[\"']")
            start = next((i for i, line in enumerate(self.lines) if wanted.search(line)), None)
            if start is None:
                return None
            return start, start + 1
        else:
            return None
        later = [i for i in range(start + 1, len(self.lines)) if re.match(r"^\s*\[\[?\s*[\w\-]+\s*\]\]?\s*(#.*)?$",
                                                                        self.lines[i])]  # fmt: skip
        return start, later[0] if later else len(self.lines)

    def sub(self, kind: str, field: str, index: int, span: tuple[int, int] | None) -> tuple[int, int] | None:
        """The span of the ``index``-th (0-based) ``[[kind.field]]`` table inside ``span``."""
        if span is None or span[1] - span[0] <= 1:
            return None
        heads = self._headers(f"{kind}.{field}", *span)
        if index >= len(heads):
            return None
        nxt = [i for i in range(heads[index] + 1, span[1]) if self.lines[i].lstrip().startswith("[")]
        return heads[index], nxt[0] if nxt else span[1]

    def field(self, name: str, span: tuple[int, int] | None) -> int | None:
        """The 0-based line in ``span`` that assigns ``name`` (``name =``, ``name.key =``), else None."""
        if span is None:
            return None
        pattern = re.compile(r"^\s*[\"']?" + re.escape(name) + r"[\"']?\s*[=.]")
        return next((i for i in range(*span) if pattern.match(self.lines[i])), None)


def _problems(exc: ValidationError, model: type[BaseModel], kind: str, where: _Lines, span) -> list[str]:
    """Every problem of one entry in planner's words, each with its line: 'price 2 ([[gpu.prices]] at line 51):
    field 'date' (required) is missing'; 'field 'tdp_w' (line 20): expected a finite number; got nan'."""
    errors = exc.errors()
    missing: dict[tuple, list[str]] = {}
    out: list[str] = []
    typos = {}
    for err in errors:
        if err["type"] == "extra_forbidden":
            key = str(err["loc"][-1])
            parent = _model_at(model, err["loc"][:-1])
            close = difflib.get_close_matches(key, list(parent.model_fields) if parent else [], n=1)
            typos[(*err["loc"][:-1], close[0] if close else None)] = key
    for err in errors:
        loc = tuple(err["loc"])
        prefix, sub_span, rest = _locate(loc, kind, where, span)
        field = ".".join(str(p) for p in rest)
        if err["type"] == "missing":
            if loc in typos:  # the typo beside it explains it
                continue
            missing.setdefault((prefix, sub_span or span), []).append(field)
            continue
        line = where.field(str(rest[0]), sub_span or span) if rest else None
        at = f" (line {line + 1})" if line is not None else ""
        if err["type"] == "extra_forbidden":
            key = str(rest[-1]) if rest else field
            close = [k[-1] for k, v in typos.items() if v == key and k[:-1] == loc[:-1] and k[-1]]
            text = f"unknown field {key!r}" + (f"; did you mean {close[0]!r}?" if close else "") + at
        else:
            text = _words(err, field, at, None if prefix else span, kind)
        out.append(f"{prefix}: {text}" if prefix else text)
    for (prefix, sp), fields in missing.items():
        at = f" (the [[{kind}]] table at line {sp[0] + 1})" if sp and not prefix else ""  # a prefix says its line
        names = ", ".join(repr(f) for f in fields)
        text = f"missing {'field' if len(fields) == 1 else 'fields'} {names} (required){at}"
        out.insert(0, f"{prefix}: {text}" if prefix else text)
    return out


def _model_at(model: type[BaseModel] | None, loc: tuple) -> type[BaseModel] | None:
    """The pydantic model a location inside ``model`` is a field of (``prices.1`` -> Price), else None."""
    for part in loc:
        if model is None or isinstance(part, int):
            continue
        info = model.model_fields.get(str(part))
        if info is None:
            return None
        nxt = None
        for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
            for inner in (arg, *getattr(arg, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    nxt = inner
        model = nxt
    return model


def _locate(loc: tuple, kind: str, where: _Lines, span) -> tuple[str, tuple[int, int] | None, tuple]:
    """(prefix, sub-table span, the rest of ``loc``): ('prices', 1, 'date') -> ('price 2 ([[gpu.prices]] at line
    51)', its span, ('date',)); numbers 1-based as people count the tables."""
    if len(loc) >= 2 and loc[0] in _SUBTABLES and isinstance(loc[1], int):
        sub = where.sub(kind, str(loc[0]), loc[1], span)
        at = f" ([[{kind}.{loc[0]}]] at line {sub[0] + 1})" if sub else ""
        return f"{_SUBTABLES[loc[0]]} {loc[1] + 1}{at}", sub, tuple(loc[2:])
    rest = tuple(f"item {p + 1}" if isinstance(p, int) else p for p in loc if p != "[key]")
    return "", None, rest


def _words(err: dict, field: str, at: str, span, kind: str) -> str:
    """One problem in planner's words: a value error as the schema says it; a wrong type as what the field takes."""
    msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    given = err.get("input")
    if err["type"] == "value_error":
        if not field:  # the entry as a whole
            head = f" (the [[{kind}]] table at line {span[0] + 1})" if span and not at else at
            return f"{msg}{head}"
        if msg.startswith(field.split(".")[0]):  # the message names the field itself
            return f"{msg}{at}"
        return f"field {field!r}{at}: {msg}"
    got = f"; got {toml_repr(given)}" if "input" in err else ""
    if err["type"] in _TYPE_WORDS:
        words = _TYPE_WORDS[err["type"]]
        if err["type"] in ("tuple_type", "list_type") and isinstance(given, dict) and field in _SUBTABLES:
            words += f" of tables: write [[{kind}.{field}]] (doubled brackets) above each {_SUBTABLES[field]}"
        return f"field {field!r}{at}: {words}{got}"
    if err["type"] == "string_pattern_mismatch" and field.endswith("date"):
        return f'field {field!r}{at}: expected a date, "YYYY-MM-DD" or "YYYY-MM" (date = 2026-11-15){got}'
    msg = msg.replace("Input should be ", "expected ").replace("String should", "text should")
    if isinstance(given, str) and err["type"] in ("float_type", "int_type") and _number(given):
        got += " (text: write the number without quotes)"
    if isinstance(given, float) and err["type"] == "int_type" and given == int(given):
        got += f" (write the whole number: {int(given)})"
    return f"field {field!r}{at}: {msg}{got}"


def _number(text: str) -> bool:
    try:
        float(text.replace("_", ""))
    except ValueError:
        return False
    return True


def _decode(path: Path, data: bytes) -> str:
    """A catalog file's text: UTF-8, a byte-order mark (Windows Notepad) dropped; anything else refused, naming the
    line and the byte (a Windows-1252 dash or quote is the usual one)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise CatalogError(
            f"{path}: line {line}: byte 0x{byte} is not UTF-8 (a Windows-1252 character such as a curly quote or a "
            "dash?); save the file as UTF-8"
        ) from None


def _read_file(path: Path) -> tuple[dict[str, list], str]:
    """The tables of one catalog file, and its text (for the lines of its entries)."""
    try:
        text = _decode(path, read_bytes_bounded(path, MAX_CATALOG_FILE_BYTES, "a catalog file"))
        data = loads_toml(text)
    except InvalidInputError as exc:
        raise CatalogError(str(exc)) from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read catalog file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - set(KINDS) - {PRICE_KIND}
    if unknown:
        raise CatalogError(
            f"{path}: unknown table {sorted(unknown)[0]!r}; a catalog file holds [[gpu]], [[model]], [[precision]] "
            'and [[price]] (a quote for a GPU the catalog has: gpu = "H100" and a [[gpu.prices]] quote\'s fields)'
        )
    return data, text


def _validate(path: Path, kind: str, raw: object, position: int, count: int, where: _Lines) -> BaseModel | list[str]:
    """The entry, or the problems with it (each line: 'path: gpu 'Name': ...')."""
    label = raw.get("name", f"#{position}") if isinstance(raw, dict) else f"#{position}"
    if not isinstance(raw, dict):
        return [f"{path}: {kind} {label}: expected a table ([[{kind}]]), got {type(raw).__name__}"]
    try:
        return KINDS[kind](**raw)
    except ValidationError as exc:
        span = where.entry(kind, position, count, raw.get("name"))
        problems = _problems(exc, KINDS[kind], kind, where, span)
        many = f"{len(problems)} problems: " if len(problems) > 1 else ""
        return [f"{path}: {kind} {label!r}: {many}" + "; ".join(problems)]


def _refuse(problems: list[str]) -> None:
    """One CatalogError for every problem found (the first ``MAX_PROBLEMS_SHOWN`` said, the rest counted)."""
    if problems:
        shown = problems[:MAX_PROBLEMS_SHOWN]
        more = f" | and {len(problems) - len(shown)} more broken entries" if len(problems) > len(shown) else ""
        raise CatalogError(" | ".join(shown) + more)


def _validate_price(path: Path, raw: object, position: int, count: int, where: _Lines) -> tuple[GpuPrice, Path]:
    label = f"price {position}" + (f" (gpu {raw['gpu']!r})" if isinstance(raw, dict) and "gpu" in raw else "")
    if not isinstance(raw, dict):
        raise CatalogError(f"{path}: {label}: expected a table ([[price]]), got {type(raw).__name__}")
    try:
        return GpuPrice(**raw), path
    except ValidationError as exc:
        span = where.entry(PRICE_KIND, position, count, None)
        problems = _problems(exc, GpuPrice, PRICE_KIND, where, span)  # each says the table's line
        raise CatalogError(f"{path}: {label}: " + "; ".join(problems)) from None


def _add_prices(
    gpus: list[tuple[Gpu, Path]], prices: Iterable[tuple[GpuPrice, Path]], added: list
) -> list[tuple[Gpu, Path]]:
    """``gpus`` (each with its file) with each ``[[price]]`` quote appended to the prices of the GPU it names (by
    name or alias)."""
    merged = list(gpus)
    for entry, path in prices:
        key = normalize_name(entry.gpu)
        hits = [i for i, (g, _) in enumerate(merged) if key in {normalize_name(n) for n in g.all_names()}]
        if not hits:
            near = difflib.get_close_matches(entry.gpu, [g.name for g, _ in merged], n=1)
            raise CatalogError(
                f"{path}: [[price]] for gpu {entry.gpu!r}: no GPU of that name or alias in the catalog (the shipped "
                "one and the folders up to this one)" + (f"; did you mean {near[0]!r}?" if near else "")
            )
        g, g_path = merged[hits[0]]
        merged[hits[0]] = (g.model_copy(update={"prices": (*g.prices, entry.quote())}), g_path)
        added.append((g.name, entry.provider, entry.kind, str(path.parent)))
    return merged


def read_folder(folder: Path) -> dict[str, list[BaseModel]]:
    """All entries in a catalog folder's ``*.toml`` files (sorted by file name), validated. A folder without any
    ``*.toml`` file is refused (``EmptyCatalogFolderError``): from every surface that names one (``--catalog``,
    ``$PLANNER_CATALOG``, the xlwings config, =PLANNER_RELOAD), it is a wrong folder, not an empty catalog. Every
    broken entry of the folder is named in one CatalogError, each problem with its file and line; two entries of one
    name (or an alias that is another entry's name) in one folder are refused, naming both files."""
    return {kind: [entry for entry, _ in pairs] for kind, pairs in _read_folder(folder).items()}


def _read_folder(folder: Path) -> dict[str, list[tuple[BaseModel, Path]]]:
    """``read_folder``, each entry with the file it was read from."""
    folder = Path(folder)
    if folder.is_file():
        raise CatalogError(f"{folder}: a file, not a folder; give the folder that holds your *.toml catalog files")
    if not folder.is_dir():
        raise CatalogError(f"{folder}: catalog folder not found")
    found: dict[str, list[tuple[BaseModel, Path]]] = {k: [] for k in KINDS}
    paths = sorted(itertools.islice(folder.glob("*.toml"), MAX_CATALOG_FILES + 1))
    if not paths:
        raise EmptyCatalogFolderError(folder)
    if len(paths) > MAX_CATALOG_FILES:
        raise CatalogError(
            f"{folder}: more than {MAX_CATALOG_FILES:,} *.toml files; a catalog folder holds at most that"
        )
    problems: list[str] = []
    for path in paths:
        data, text = _read_file(path)
        where = _Lines(text)
        for kind, items in data.items():
            if not isinstance(items, list):
                hint = f"; write [[{kind}]] (doubled brackets)" if isinstance(items, dict) else ""
                raise CatalogError(f"{path}: '{kind}' must be an array of tables ([[{kind}]]){hint}")
            if kind == PRICE_KIND:
                found.setdefault(PRICE_KIND, []).extend(
                    _validate_price(path, raw, i + 1, len(items), where) for i, raw in enumerate(items)
                )
                continue
            if len(found[kind]) + len(items) > MAX_CATALOG_ENTRIES:
                raise CatalogError(
                    f"{path}: more than {MAX_CATALOG_ENTRIES:,} {kind} entries in {folder}; a catalog holds at most that"
                )
            for i, raw in enumerate(items):
                entry = _validate(path, kind, raw, i + 1, len(items), where)
                if isinstance(entry, list):
                    problems += entry
                else:
                    found[kind].append((entry, path))
    _refuse(problems)
    for kind, pairs in found.items():
        if kind != PRICE_KIND:  # a quote has no name of its own: many may name one GPU
            _refuse_twins(kind, pairs)
    return found


def _refuse_twins(kind: str, pairs: list[tuple[BaseModel, Path]]) -> None:
    """Two entries of one folder that one name would find (names compare without case, spaces, hyphens and
    underscores): refused, naming both files; which of them the folder means cannot be told."""
    owner: dict[str, tuple[BaseModel, Path]] = {}
    problems = []
    for entry, path in pairs:
        for alias in dict.fromkeys(normalize_name(a) for a in entry.all_names()):
            first = owner.setdefault(alias, (entry, path))
            if first[0] is entry:
                continue
            said = next(a for a in entry.all_names() if normalize_name(a) == alias)
            files = f"both in {path}" if first[1] == path else f"in {first[1]} and {path}"
            if normalize_name(first[0].name) == normalize_name(entry.name):
                what = f"two {kind} entries named {entry.name!r}"
                if first[0].name != entry.name:
                    what += f" and {first[0].name!r} (names compare without case, spaces, '-' and '_')"
                problems.append(
                    f"{what}, {files}; keep one (a later folder, --catalog A --catalog B, replaces an earlier "
                    "folder's entry of its name)"
                )
            elif alias == normalize_name(first[0].name) or normalize_name(entry.name) == alias:
                # an alias that is the other entry's name: said as the merge across folders says it
                (aliased, a_path), (named, n_path) = (
                    ((entry, path), first) if alias == normalize_name(first[0].name) else (first, (entry, path))
                )
                taken = next(a for a in aliased.aliases if normalize_name(a) == alias)
                problems.append(
                    f"{a_path}: {kind} {aliased.name!r}: alias {taken!r} is the name of the catalog's {named.name!r} "
                    f"({n_path}), which it would replace; name the entry {named.name!r} to replace that {kind}, or "
                    "give it another alias"
                )
            else:
                problems.append(
                    f"{path}: {kind} {entry.name!r}: name or alias {said!r} already belongs to {first[0].name!r} "
                    f"({first[1]}); one name finds one entry: give another alias"
                )
            break
    _refuse(problems)


def _merge(
    base: list[tuple[E, Path]],
    overrides: Iterable[tuple[E, Path]],
    kind: str,
    folder: Path,
    replaced: list | None = None,
    shipped: Path | None = None,
) -> list[tuple[E, Path]]:
    """``base`` (entries with their files) with a folder's entries: one of an earlier entry's name replaces it (a
    ``replaced`` record: kind, name, folder, file, the name and file it replaced); an alias that is only an earlier
    entry's name is refused. ``shipped``: the shipped folder, whose files are called "the shipped" in messages."""
    merged = list(base)
    first: dict[str, int] = {}  # an entry's normalized name -> the first place it holds (one lookup per name)
    for i, (old, _) in enumerate(merged):
        first.setdefault(normalize_name(old.name), i)

    def whose(path: Path) -> str:
        return f"the shipped {path.name}" if shipped is not None and path.parent == shipped else str(path)

    for entry, path in overrides:
        hits = [first[k] for k in {normalize_name(n) for n in entry.all_names()} if k in first]
        if hits and normalize_name(entry.name) not in first:  # only an alias is an earlier entry's name
            taken = next(a for a in entry.aliases if normalize_name(a) in first)
            other, other_path = merged[first[normalize_name(taken)]]
            raise CatalogError(
                f"{path}: {kind} {entry.name!r}: alias {taken!r} is the name of the catalog's {other.name!r} "
                f"({whose(other_path)}), which it would replace; name the entry {other.name!r} to replace that {kind}, "
                "or give it another alias"
            )
        if hits:  # replaces the earlier entry of its name
            i = min(hits)
            old, old_path = merged[i]
            old_key = normalize_name(old.name)
            if first.get(old_key) == i:  # (two entries of one name are refused below, after the merge)
                del first[old_key]
            if replaced is not None:
                was_shipped = shipped is not None and old_path.parent == shipped
                replaced.append(
                    (kind, entry.name, str(folder), str(path), old.name, "" if was_shipped else str(old_path))
                )
            merged[i] = (entry, path)
            key = normalize_name(entry.name)
            first[key] = min(first.get(key, i), i)
        else:
            first.setdefault(normalize_name(entry.name), len(merged))
            merged.append((entry, path))
    # a name may not point at two entries
    owner: dict[str, tuple[str, Path]] = {}
    for entry, path in merged:
        for alias in entry.all_names():
            key = normalize_name(alias)
            if owner.setdefault(key, (entry.name, path))[0] != entry.name:
                other, other_path = owner[key]
                raise CatalogError(
                    f"{path}: {kind} {entry.name!r}: name or alias {alias!r} already belongs to {other!r} "
                    f"({whose(other_path)}); give the entry another name or alias, or name it {other!r} to replace it"
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
    replaced: list[tuple[str, ...]] = []
    added: list[tuple[str, str, str, str]] = []
    for folder in order:
        user = not (shipped and folder == order[0])
        found = _read_folder(folder) if user else _read_shipped(folder)
        prices = found.pop(PRICE_KIND, [])
        for kind, items in found.items():
            entries[kind] = _merge(
                entries[kind], items, kind, folder, replaced if user else None, order[0] if shipped else None
            )
        if prices:
            entries["gpu"] = _add_prices(entries["gpu"], prices, added)
    first_user = 1 if shipped else 0
    user_files = {Path(f) for f in order[first_user:]}
    catalog = Catalog(
        gpus=Table("GPU", tuple(e for e, _ in entries["gpu"])),
        models=Table("model", tuple(e for e, _ in entries["model"])),
        precisions=Table("precision", tuple(e for e, _ in entries["precision"])),
        folders=tuple(order),
        replaced=tuple(replaced),
        added_prices=tuple(added),
        origins={
            (kind, e.name): str(path)
            for kind, pairs in entries.items()
            for e, path in pairs
            if path.parent in user_files
        },
    )
    _check_references(catalog)
    return catalog


#: The shipped folder's entries read so far in this process, keyed by each file's path, size and modification time:
#: every ``load_catalog`` with a user folder (``--catalog``, ``$PLANNER_CATALOG``, ``catalog import-hf``'s check)
#: read and validated the shipped files again (~0.25 s CPU). The entries are frozen; each call gets new lists.
_SHIPPED_ENTRIES: dict[tuple, dict[str, tuple[tuple[BaseModel, Path], ...]]] = {}


def _read_shipped(folder: Path) -> dict[str, list[tuple[BaseModel, Path]]]:
    """``read_folder(folder)`` for the shipped catalog folder, read once while its files are unchanged."""
    paths = sorted(Path(folder).glob("*.toml"))
    key = (str(folder), *((str(p), st.st_size, st.st_mtime_ns) for p in paths for st in [p.stat()]))
    if key not in _SHIPPED_ENTRIES:
        _SHIPPED_ENTRIES.clear()
        _SHIPPED_ENTRIES[key] = {kind: tuple(items) for kind, items in _read_folder(folder).items()}
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
