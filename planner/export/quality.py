"""What quantized weights may do to answers: published evaluation deltas and the sign-off the review asks for.

``catalogs/quality/quantized.toml`` holds, per catalog model and weight precision, a quantized checkpoint's
score on a public benchmark against its original's (16-bit, or the published precision where lower), each from the checkpoint's model card with its date.
A review whose options run weights below the model's published precision gets one line per (model, precision):
the delta where one is published, "none published" where not, and who signs off either way. fp16 weights of a model
published as bf16 (or bf16 of one published as fp16) are no quantization: both store 16 bits a value, so there is
no saving to book and nothing to sign off; such options get one neutral line saying so (``SixteenBitSwap``; trial 29
F12: Llama-3.3-70B served in fp16 today was asked for sign-off "before this saving is booked").
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.loader import shipped_catalog_dir

QUALITY_FILE = Path("quality") / "quantized.toml"
#: Who signs off answer quality where a scenario names no one (``finance.quality_sign_off``).
DEFAULT_SIGN_OFF = "the model owner"


class PublishedDelta(BaseModel):
    """One model card's scores: the quantized checkpoint and its 16-bit original on one benchmark."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="catalog model name")
    weight_precision: str = Field(min_length=1)
    checkpoint: str = Field(min_length=3)
    benchmark: str = Field(min_length=3)
    quantized_score: float
    reference_score: float = Field(gt=0)
    reference_precision: str = Field(
        default="16-bit",
        min_length=2,
        description="what the reference score was run at: the 16-bit original, or the model's published precision "
        "where that is lower (DeepSeek-R1: fp8)",
    )
    date: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$")
    url: str = Field(pattern=r"^https://")
    source: str = Field(min_length=10)

    @property
    def delta_points(self) -> float:
        """Quantized minus reference score, in the benchmark's points (negative: the quantized model scores lower)."""
        return self.quantized_score - self.reference_score

    @property
    def recovery(self) -> float:
        """Quantized / reference score: 0.999 = 99.9% of the original's score kept."""
        return self.quantized_score / self.reference_score


class _QualityFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    quality: tuple[PublishedDelta, ...]


@functools.cache
def published_deltas() -> tuple[PublishedDelta, ...]:
    """The shipped deltas (read once)."""
    path = shipped_catalog_dir() / QUALITY_FILE
    return _QualityFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8"))).quality


#: The 16-bit float formats: one stored as the other is the same bytes, not a quantization (``same_width``).
SIXTEEN_BIT = ("bf16", "fp16")


def _sixteen_bit_words(label: str) -> str:
    """``label`` (a weights label, "bf16 + mxfp4 experts") with each 16-bit float format named alike."""
    return " ".join("16-bit" if w in SIXTEEN_BIT else w for w in label.split(" "))


def same_width(weights: str, native: str) -> bool:
    """Whether weights labelled ``weights`` store what the published ``native`` weights do, value for value: the same
    label, or the two differing only between bf16 and fp16 (both 16-bit floats: no quantization, the same bytes).
    "fp16" against "bf16": True; "fp16 + mxfp4 experts" against "bf16 + mxfp4 experts": True; "fp8" against
    "bf16": False."""
    return weights == native or _sixteen_bit_words(weights) == _sixteen_bit_words(native)


@dataclass(frozen=True)
class SixteenBitSwap:
    """The neutral quality line for options running a model's published 16-bit weights in the other 16-bit format
    (fp16 for bf16): no quantization and no saving, so no sign-off; the formats differ in range and steps only."""

    model: str
    weight_precision: str
    native_precision: str
    options: tuple[str, ...]

    @property
    def text(self) -> str:
        return (
            f"Quality: {self.model} with {self.weight_precision} weights (published as {self.native_precision}; "
            f"{', '.join(self.options)}): both are 16-bit, so no quantization and no saving; fp16 has the narrower "
            "range (largest value 65,504, against bf16's about 3.4e38) and the finer steps (10 mantissa bits against 7)."
        )


@dataclass(frozen=True)
class QualityNote:
    """The quality line for one model at one quantized weight precision, and the deltas it quotes."""

    model: str
    weight_precision: str
    native_precision: str
    options: tuple[str, ...]  # the review's options (and grid rows) that run these weights
    deltas: tuple[PublishedDelta, ...]
    sign_off: str

    @property
    def text(self) -> str:
        head = (
            f"Quality: {self.model} with {self.weight_precision} weights (published as {self.native_precision}; "
            f"{', '.join(self.options)}): "
        )
        if self.deltas:
            quoted = "; ".join(_quoted(group) for group in _by_card(self.deltas))
        else:
            quoted = "no published evaluation of this model at this precision is in the catalog; evaluate it first"
        return (
            f"{head}{quoted}. A benchmark average does not cover your prompts: sign-off by {self.sign_off} on an "
            "evaluation of your own traffic before this saving is booked."
        )


def _by_card(deltas: tuple[PublishedDelta, ...]) -> list[list[PublishedDelta]]:
    """``deltas`` grouped by model card (checkpoint, reference precision, date), in first-seen order."""
    groups: dict[tuple[str, str, str], list[PublishedDelta]] = {}
    for d in deltas:
        groups.setdefault((d.checkpoint, d.reference_precision, d.date), []).append(d)
    return list(groups.values())


def _quoted(group: list[PublishedDelta]) -> str:
    """One model card's scores: a single benchmark as a sentence, several as one list naming the largest drop."""
    d = group[0]
    if len(group) == 1:
        return (
            f"{d.checkpoint} scores {d.quantized_score:.2f} against {d.reference_score:.2f} for the "
            f"{d.reference_precision} model on the {d.benchmark.split(' (')[0]} ({d.delta_points:+.2f} points, "
            f"{d.recovery:.1%} kept; model card, {d.date})"
        )
    worst = min(group, key=lambda x: x.delta_points)
    scores = ", ".join(
        f"{x.benchmark.split(' (')[0]} {x.quantized_score:.2f} against {x.reference_score:.2f} "
        f"({x.delta_points:+.2f}{' points, the largest drop' if x is worst and x.delta_points < 0 else ''})"
        for x in group
    )
    return f"{d.checkpoint} against the {d.reference_precision} model (model card, {d.date}): {scores}"


@dataclass(frozen=True)
class ModelSwitch:
    """The quality line for a recommendation that serves another model than other options do: a different model
    answers differently, and no benchmark average in the catalog compares two models on your prompts."""

    model: str
    others: tuple[str, ...]  # the other models the review's options serve
    sign_off: str

    @property
    def text(self) -> str:
        return (
            f"Quality: the recommendation serves {self.model} where other options serve {', '.join(self.others)}: "
            "another model answers differently, and its cost is no like-for-like saving. Sign-off by "
            f"{self.sign_off} on an evaluation of your own traffic before it is booked."
        )


def model_switch(models: list[str], sign_off: str) -> ModelSwitch | None:
    """``models``: the models of the review's options that meet the targets, the recommendation's first. A
    ``ModelSwitch`` where the others serve any other model; None where all serve the recommendation's."""
    if not models:
        return None
    others = tuple(dict.fromkeys(m for m in models[1:] if m != models[0]))
    return ModelSwitch(models[0], others, sign_off) if others else None


def quality_notes(
    runs: list[tuple[str, str, str, str]], sign_off: str, deltas: tuple[PublishedDelta, ...] | None = None
) -> tuple[QualityNote | SixteenBitSwap, ...]:
    """One note per (model, weight precision) among ``runs`` = (option name, model, weights, native weights) whose
    weights differ from the model's published precision, in first-seen order: a ``QualityNote`` (delta, sign-off)
    where they are quantized, a ``SixteenBitSwap`` (no sign-off, no saving) where they differ only between bf16 and
    fp16 (``same_width``)."""
    table = published_deltas() if deltas is None else deltas
    seen: dict[tuple[str, str], list] = {}
    for name, model, weights, native in runs:
        if weights == native:
            continue
        seen.setdefault((model, weights), [native, []])[1].append(name)
    return tuple(
        SixteenBitSwap(model, weights, native, tuple(names))
        if same_width(weights, native)
        else QualityNote(
            model,
            weights,
            native,
            tuple(names),
            tuple(d for d in table if d.model == model and d.weight_precision == weights),
            sign_off,
        )
        for (model, weights), (native, names) in seen.items()
    )


def lever_quality_text(option: str, model: str, weights: str, native: str, sign_off: str = DEFAULT_SIGN_OFF) -> str:
    """The review's quality line for one option running ``model`` with ``weights`` (``QualityNote.text``), "" where
    those are its published weights or the same 16 bits in the other format (``same_width``: no quantization): the
    what-if workbook's Weights fp8 lever carries the same caveat as the review (trial 19 F7: its cheapest fleet was
    fp8 weights with no word on quality)."""
    notes = quality_notes([(option, model, weights, native)], sign_off)
    return notes[0].text if notes and isinstance(notes[0], QualityNote) else ""
