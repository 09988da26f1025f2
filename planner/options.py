"""A deployment's options, defined once: their names, types, defaults and help text.

Every public capacity function takes the GPU, the model and the tokens, then its options by keyword:
``max_batch("H100", "llama2-70b", 8192, kv_precision="fp16")``. The options are written here and nowhere else:

- ``Options``: a frozen dataclass with every option, its default and its help text (``option_doc``); the API
  turns a call's keywords into one ``Options`` (``Options.read``) and hands it to ``planner.deploy``.
- The ``TypedDict``s below say which options each function takes, typed; a function's signature reads
  ``**options: Unpack[DecodeOptions]`` (PEP 692), which type checkers and editors expand into the keywords, so
  ``kv_precison="fp16"`` is an error before the code runs, and a ``TypeError`` naming the options when it does.
- The Excel functions' optional arguments (``planner.excel.support``) and the CLI's options (``planner.cli``)
  take their help text from ``option_doc``.

Adding an option: a field of ``Options`` (default and help) and a key in the ``TypedDict`` of the functions that
take it; ``tests/test_options.py`` checks that the two agree.

Imports: the catalog, engine profiles and argument checks (for types), nothing of the surfaces.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypedDict

import numpy as np

from planner.catalog import Catalog, as_catalog
from planner.checks import Errors, check_errors, one_value
from planner.engines.profiles import EngineProfile
from planner.errors import InvalidInputError, UnknownKeywordError

#: What to do instead of an array of engines or layouts (each is one name per call).
ENGINE_HINT = "loop over engines: [max_batch(gpu, model, context, engine=e) for e in engines]"
PARALLELISM_HINT = "loop over layouts: [max_batch(gpu, model, context, parallelism=p) for p in layouts]"


def _option(default: Any, doc: str) -> Any:
    """A field of ``Options``: its default and its help text (Python docs, Excel argument help, CLI help)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Options:
    """Every option of the capacity functions with its one default; a function reads the keys it takes.

    Any numeric option may be a scalar, a numpy array or a pandas Series; arrays broadcast with the GPU, model
    and tokens. ``None`` means "the default rule" named in each option's help.
    """

    batch: Any = _option(1, "sequences decoded together; default 1")
    kv_precision: Any = _option(None, "KV-cache precision, e.g. fp16 or fp8; default: the model's activation dtype")
    gpus: Any = _option(
        None,
        "GPUs in the tensor-parallel group (a size vLLM accepts); default: the smallest of 1, 2, 4, 8 ... 64 that fits",
    )
    weight_precision: Any = _option(None, "weight precision, e.g. fp8 or int4; default: as published")
    memory_utilization: Any = _option(
        None, "fraction of GPU memory the engine may use (0 to 1); default: the engine's (0.9 for vLLM)"
    )
    engine: str | EngineProfile | None = _option(
        None,
        "memory budgeting rule: vllm (default), tensorrt-llm, lmdeploy, ideal, or an EngineProfile; one name per call",
    )
    reserve_bytes: Any = _option(
        None, "bytes per GPU kept from the KV cache besides the weights; default: the engine's activation peak"
    )
    check_fit: bool = _option(True, "False: time a batch on a given group even where it does not fit in memory")
    catalog: Catalog | None = _option(
        None,
        "catalog to read names from: a Catalog (load_catalog) or a folder of *.toml files, read as --catalog reads "
        "it; default: the shipped one and $PLANNER_CATALOG",
    )
    errors: Errors = _option(
        "raise", '"raise": the first bad scenario raises; "coerce": NaN for each bad one; no other value'
    )
    calibration: Any = _option(
        None, "calibration file or Calibration for time predictions; default: $PLANNER_CALIBRATION, else none"
    )
    parallelism: Any = _option(
        None,
        "how the group splits the model: tp (tensor parallel), tp-ep (experts spread whole), dp-ep (data-parallel "
        "attention + expert parallel, MoE models), pp (pipeline parallel, one GPU per stage), pp2, pp4 ... (that many "
        "pipeline stages, each a tensor-parallel group of gpus / stages); one name per call; default tp",
    )

    def __post_init__(self) -> None:
        """The options that take one value per call checked here, once (``errors``, ``engine``, ``parallelism``,
        ``check_fit``), and a catalog given as a folder read as ``--catalog DIR`` reads it."""
        set_ = object.__setattr__
        set_(self, "errors", check_errors(self.errors))
        if not (self.engine is None or type(self.engine) is str or isinstance(self.engine, EngineProfile)):
            set_(self, "engine", one_value(self.engine, "engine", ENGINE_HINT))
        if not (self.parallelism is None or type(self.parallelism) is str):
            set_(self, "parallelism", one_value(self.parallelism, "parallelism", PARALLELISM_HINT))
        if type(self.check_fit) is not bool:
            value = one_value(self.check_fit, "check_fit", "time each setting in its own call")
            if not isinstance(value, (bool, np.bool_)):
                raise InvalidInputError(f"check_fit must be True or False; got {value!r}")
            set_(self, "check_fit", bool(value))
        if self.catalog is not None and not isinstance(self.catalog, Catalog):
            set_(self, "catalog", as_catalog(self.catalog))

    @classmethod
    def read(cls, takes: type, given: dict[str, Any], function: Callable[..., Any]) -> Options:
        """The options of a call to ``function``: ``given`` (its ``**options``), checked against the keys of ``takes``
        (its ``TypedDict``); an option it does not take is an ``UnknownKeywordError`` (a ``TypeError``) naming the
        closest of its keywords, its own keyword-only arguments and the options it does take."""
        allowed = takes.__optional_keys__
        if not given.keys() <= allowed:
            unknown = sorted(given.keys() - allowed)[0]
            own = [
                p.name
                for p in inspect.signature(function).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in allowed
            ]
            near = difflib.get_close_matches(unknown, [*own, *allowed], n=1, cutoff=0.5)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            keywords = f"its keyword arguments: {', '.join(own)}; " if own else ""
            raise UnknownKeywordError(
                f"{function.__name__}() got an unexpected keyword argument {unknown!r}{hint}; "
                f"{keywords}its options: {', '.join(name for name in OPTION_NAMES if name in allowed)}"
            )
        return cls(**given)


#: The two settings a deployment states for speculative decoding, with their help text: written here once, read by the
#: serving simulation (``planner.serving.speculative.speculation_for``), the scenario file's options
#: (``planner.export.scenario``), the Excel load functions (TTFT_P*, TPOT_P*) and ``planner plan --rate``. Not fields
#: of ``Options``: only the simulation under load models speculation (a decode step of the capacity functions emits
#: one token per sequence).
SPECULATION_OPTIONS = {
    "speculative_tokens": "draft tokens proposed per step and sequence (vLLM num_speculative_tokens, SGLang "
    "--speculative-num-steps); blank: no speculative decoding",
    "acceptance_length": "mean tokens a speculative step emits per sequence, the bonus token included (1 to "
    "speculative_tokens + 1), as the draft's source publishes it for your kind of prompts; needed with "
    "speculative_tokens",
    "speculative_method": "the draft: mtp (the checkpoint's own multi-token-prediction layers: vLLM "
    "--speculative-config method mtp, SGLang --speculative-algorithm EAGLE with the NextN weights, TensorRT-LLM MTP), "
    "eagle3 (an EAGLE-3 head shaped like the model) or ngram (prompt lookup); blank: mtp where the checkpoint ships "
    "MTP layers (DeepSeek-V3/R1, GLM-4.5, Qwen3.5), else eagle3",
}

#: The options in their documented order.
OPTION_NAMES = tuple(f.name for f in fields(Options))


def option_doc(name: str) -> str:
    """The help text of option ``name`` (one line; ends with its default)."""
    return next(f.metadata["doc"] for f in fields(Options) if f.name == name)


# -- which function takes which options (PEP 692: ``**options: Unpack[...]``) ---------------------------


class CommonOptions(TypedDict, total=False):
    """Options every deployment function takes: precisions, the engine's memory rule, catalog, errors."""

    kv_precision: Any
    weight_precision: Any
    memory_utilization: Any
    engine: str | EngineProfile | None
    reserve_bytes: Any
    catalog: Catalog | None
    errors: Errors
    calibration: Any
    parallelism: Any


class GroupOptions(CommonOptions, total=False):
    """``max_batch``'s options: the common ones and the GPU group."""

    gpus: Any


class BatchOptions(CommonOptions, total=False):
    """``min_gpus``'s options: the common ones and the batch the group must hold."""

    batch: Any


class DeploymentOptions(GroupOptions, BatchOptions, total=False):
    """``memory_plan``'s and ``prefill``'s (``ttft`` ...) options: the common ones, the group and the batch."""


class ReplicaOptions(TypedDict, total=False):
    """``planner.serving.fleet.load_percentile``'s options: one replica of the serving simulation (its group, how
    the group splits the model, its precisions, the engine whose memory budget, batching limits and step costs it
    runs under, as ``planner plan --engine`` names it), the catalog and errors."""

    gpus: Any
    weight_precision: Any
    kv_precision: Any
    engine: str | EngineProfile | None
    catalog: Catalog | None
    errors: Errors
    parallelism: Any


class BenchmarkOptions(ReplicaOptions, total=False):
    """``planner.serving.benchmark.predict_benchmark``'s options: a replica's and the calibration of its step
    times."""

    calibration: Any


class StepOptions(DeploymentOptions, total=False):
    """``prefill``'s options: a deployment's, and whether a batch the group's memory does not hold is timed anyway."""

    check_fit: bool


class DecodeOptions(StepOptions, total=False):
    """``decode_step``'s (``tpot``, ``throughput`` ...) and ``cost_per_mtok``'s options: all of them."""
