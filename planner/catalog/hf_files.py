"""Read a local Hugging Face model, offline: its ``config.json`` and the parameter count its safetensors state.

A model is found as a ``config.json`` file, a folder holding one (``save_pretrained`` output or a
``huggingface-cli download`` folder), or an entry of the Hugging Face cache (``models--org--name`` with
``snapshots/<revision>/``). The exact parameter count comes from ``model.safetensors.index.json``'s
``metadata.total_parameters`` when present, otherwise from the safetensors headers (the documented format:
an 8-byte little-endian header length, then a JSON header giving each tensor's dtype and shape); the count is
the number of stored elements, as the Hub reports it. Every problem is an ``InvalidInputError`` in one line.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.errors import InvalidInputError

#: A config.json larger than this is not a model config (real ones are a few kB).
MAX_CONFIG_BYTES = 4 * 2**20
#: The safetensors format caps the JSON header at 100 MB.
MAX_HEADER_BYTES = 100_000_000


@dataclass(frozen=True)
class LocalModel:
    """What a local model folder says: its config, the repo id its cache path names, its stored parameters."""

    config: dict[str, Any]
    config_path: Path
    hf_id: str  # "" when the path does not name one
    params: int | None  # stored elements over all safetensors; None when no weights are present
    params_source: str  # how ``params`` was read
    notes: tuple[str, ...]


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(path: Path, what: str = "config.json", limit: int = MAX_CONFIG_BYTES) -> Any:
    """Parse a JSON file strictly: no NaN or Infinity, bounded size and nesting."""
    try:
        size = path.stat().st_size
        data = path.read_bytes() if size <= limit else b""
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if size > limit:
        raise InvalidInputError(f"{path}: {size:,} bytes is too large for a {what} (limit {limit:,})")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path}: not a UTF-8 JSON file") from None
    except RecursionError:
        raise InvalidInputError(f"{path}: nested too deeply to be a {what}") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer of thousands of digits
        raise InvalidInputError(f"{path}: not a valid {what} ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def _snapshot(entry: Path, notes: list[str]) -> Path:
    """The revision folder of a Hugging Face cache entry: the one refs/main names, else the only one."""
    snapshots = entry / "snapshots"
    ref = entry / "refs" / "main"
    if ref.is_file():
        revision = ref.read_text(encoding="utf-8", errors="replace").strip()
        if revision and "/" not in revision and (snapshots / revision).is_dir():
            return snapshots / revision
    revisions = sorted(p for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    if not revisions:
        raise InvalidInputError(f"{entry}: a Hugging Face cache entry without snapshots; download the model first")
    if len(revisions) > 1:
        newest = max(revisions, key=lambda p: p.stat().st_mtime)
        notes.append(f"{len(revisions)} cached revisions and no refs/main: read the newest, {newest.name}")
        return newest
    return revisions[0]


def _hf_id_from_cache_name(path: Path) -> str:
    for part in reversed(path.parts):
        if part.startswith("models--") and part.count("--") >= 2:
            return part.removeprefix("models--").replace("--", "/", 1)
    return ""


def locate(path: Path) -> tuple[Path, str, list[str]]:
    """(config.json path, repo id named by the cache path or "", notes) for a file, model folder or cache entry."""
    notes: list[str] = []
    path = Path(path)
    if path.is_dir() and (path / "snapshots").is_dir():
        try:
            path = _snapshot(path, notes)
        except OSError as exc:
            raise InvalidInputError(f"{path}: cannot read the cache entry ({exc.strerror or exc})") from None
    config = path if path.is_file() else path / "config.json"
    if not config.is_file():
        raise InvalidInputError(f"{path}: no config.json there; give a config.json, a model folder or a cache entry")
    return config, _hf_id_from_cache_name(config.resolve().parent), notes


def safetensors_header_params(path: Path) -> tuple[int, int]:
    """(stored elements, tensors) of one .safetensors file, from its header alone."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            raw = f.read(8)
            length = struct.unpack("<Q", raw)[0] if len(raw) == 8 else None
            body = f.read(length) if length is not None and length <= min(MAX_HEADER_BYTES, size - 8) else b""
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if length is None:
        raise InvalidInputError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
    if length > MAX_HEADER_BYTES or length > size - 8:
        raise InvalidInputError(f"{path}: not a safetensors file (header length {length:,} exceeds the file)")
    try:
        header = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        header = None
    if not isinstance(header, dict):
        raise InvalidInputError(f"{path}: not a safetensors file (its header is not a JSON object)")
    total = tensors = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = info.get("shape") if isinstance(info, dict) else None
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise InvalidInputError(f"{path}: tensor {str(name)[:60]!r} has no valid shape in the safetensors header")
        total += math.prod(shape)
        tensors += 1
    return total, tensors


def _shard_name(name: object, index: Path) -> str:
    if (
        not isinstance(name, str)
        or not name.endswith(".safetensors")
        or "/" in name
        or "\\" in name
        or name.startswith(".")
    ):
        raise InvalidInputError(f"{index}: weight_map names {str(name)[:60]!r}, not a .safetensors file in the folder")
    return name


def stored_params(folder: Path) -> tuple[int | None, str, list[str]]:
    """Stored parameter count of the weights in ``folder``: (count or None, how it was read, notes)."""
    index = folder / "model.safetensors.index.json"
    single = folder / "model.safetensors"
    if index.is_file():
        data = read_json(index, "safetensors index", limit=64 * 2**20)
        if not isinstance(data, dict):
            raise InvalidInputError(f"{index}: not a safetensors index (expected a JSON object)")
        meta = data.get("metadata")
        stated = meta.get("total_parameters") if isinstance(meta, dict) else None
        if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
            return stated, "metadata.total_parameters of model.safetensors.index.json", []
        weight_map = data.get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise InvalidInputError(f"{index}: not a safetensors index (no weight_map)")
        shards = sorted({_shard_name(v, index) for v in weight_map.values()})
        missing = [s for s in shards if not (folder / s).is_file()]
        if missing:
            return None, "", [f"{len(missing)} of {len(shards)} safetensors shards absent: no stored parameter count"]
        counts = [safetensors_header_params(folder / s) for s in shards]
        total, tensors = sum(c for c, _ in counts), sum(t for _, t in counts)
        return _counted(total, f"headers of {len(shards)} safetensors shards ({tensors:,} tensors)")
    if single.is_file():
        total, tensors = safetensors_header_params(single)
        return _counted(total, f"header of model.safetensors ({tensors:,} tensors)")
    return None, "", ["no safetensors weights in the folder: no stored parameter count"]


def _counted(total: int, how: str) -> tuple[int | None, str, list[str]]:
    """A stored count, or none when the headers list no elements (an empty header ``{}``: nothing to count)."""
    if total > 0:
        return total, how, []
    return None, "", [f"the {how} list no stored elements: no stored parameter count"]


def read_local_model(path: Path) -> LocalModel:
    """Config, repo id and stored parameter count of a local model (file, folder or cache entry)."""
    config_path, hf_id, notes = locate(path)
    config = read_json(config_path)
    if not isinstance(config, dict):
        raise InvalidInputError(f"{config_path}: config.json must hold a JSON object")
    params, how, more = stored_params(config_path.parent)
    return LocalModel(config, config_path, hf_id, params, how, tuple(notes + more))
