"""How a group of GPUs splits a model: the layout names and what a pipeline layout's name says. Pure.

"tp" everything tensor-parallel (vLLM's default); "tp-ep" attention and dense layers tensor-parallel, experts spread
whole (``--tensor-parallel-size g --enable-expert-parallel``); "dp-ep" data-parallel attention, experts spread
(``--data-parallel-size g --enable-expert-parallel``, SGLang ``--enable-dp-attention``; ``planner.model.parallel``);
"pp" a pipeline of one GPU per stage (``--pipeline-parallel-size g``), "ppN" one of N stages, each a tensor-parallel
group of g / N GPUs (``--tensor-parallel-size g/N --pipeline-parallel-size N``; ``planner.model.pipeline``).
"""

from __future__ import annotations

import re

from planner.model.facts import ArrayLike

#: The layout names; a pipeline of N stages of several GPUs each is also "ppN" (``pipeline_stages``).
PARALLELISMS = ("tp", "tp-ep", "dp-ep", "pp")
_STAGES = re.compile(r"pp(\d{1,4})")


def spreads_experts(parallelism: str) -> bool:
    """Whether the layout spreads a MoE model's experts over the group ("tp-ep", "dp-ep"): a dense model has none to
    spread, and an engine may load spread experts at another width (``memory.experts_as_loaded``)."""
    return parallelism in ("tp-ep", "dp-ep")


def is_pipeline(parallelism: str) -> bool:
    """Whether the layout is a pipeline ("pp" or "ppN")."""
    return parallelism == "pp" or _STAGES.fullmatch(parallelism) is not None


def stages_named(parallelism: str) -> int | None:
    """N of a "ppN" layout; None for "pp" (as many stages as GPUs) and the other layouts."""
    hit = _STAGES.fullmatch(parallelism)
    return int(hit[1]) if hit else None


def pipeline_stages(parallelism: str, gpus: ArrayLike) -> ArrayLike:
    """Stages of a layout on ``gpus`` GPUs: "pp" g, "ppN" N, any other layout 1."""
    if parallelism == "pp":
        return gpus
    named = stages_named(parallelism)
    return float(named) if named is not None else 1.0


def layout_label(parallelism: str, gpus: int) -> str:
    """A group as benchmark sources name it (TensorRT-LLM's and InferenceMAX's tables): TP8; TEP8 (experts spread
    whole, attention tensor-parallel); DEP8 (data-parallel attention, experts spread); PP4 (one GPU a stage);
    TP4xPP2 (two stages of four)."""
    g = int(gpus)
    if parallelism == "dp-ep":
        return f"DEP{g}"
    if parallelism == "tp-ep":
        return f"TEP{g}"
    stages = int(pipeline_stages(parallelism, g))
    if stages == 1:
        return f"TP{g}"
    return f"PP{g}" if stages == g else f"TP{g // stages}xPP{stages}"
