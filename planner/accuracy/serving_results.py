"""A serving benchmark's result file, as the engines' clients write it, read as the rows of a decode CSV.

Two clients, their keys read from source:

- ``vllm bench serve --save-result`` (``vllm/benchmarks/serve.py``, ``main_async`` and ``benchmark``; before it
  ``benchmarks/benchmark_serving.py``): one JSON object per run (``--append-result``: one a line), with ``backend``
  (the API it called: "vllm", "openai", "openai-chat", "sglang" ...), ``model_id``, ``num_prompts``,
  ``request_rate`` (a number, or "inf": every prompt at once), ``burstiness``, ``max_concurrency`` (null: no limit),
  ``completed``, ``total_input_tokens`` and ``total_output_tokens`` (of the completed requests),
  ``output_throughput`` (output tokens / duration, tok/s), ``mean_/median_/std_ttft_ms``, the same for ``tpot`` and
  ``itl``, ``p99_ttft_ms`` ... (one ``pNN_`` key per ``--metric-percentiles``, 99 by default), any
  ``--metadata KEY=VALUE`` pairs, and with ``--save-detailed`` ``input_lens`` / ``output_lens`` (each request's,
  0 output for a failed one), ``ttfts``, ``itls``, ``generated_texts``, ``errors``.
- ``python -m sglang.bench_serving --output-file`` (``python/sglang/bench_serving.py``, ``benchmark``): JSON Lines,
  one object appended per run, with ``backend`` ("sglang", "sglang-oai", "vllm", "lmdeploy", "trt" ...),
  ``dataset_name``, ``request_rate`` (inf written as ``Infinity``), ``max_concurrency``, ``random_input_len``,
  ``random_output_len``, ``random_range_ratio``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
  ``output_throughput``, the same ``mean_/median_/p99_`` TTFT, TPOT and ITL keys, and with ``--output-details``
  ``input_lens`` / ``output_lens``. It writes no model and no ``num_prompts``: --model names the model, and the run
  is taken to have sent its ``completed`` requests.

Neither says the GPU, the GPUs of the server's group, its release or its precision: the caller gives them (``gpu``,
``gpus``; the release through ``--metadata engine_version=X`` in the file or validate's --engine vllm==X, else
validate assumes the release plan models, ``planner.accuracy.releases``). vLLM's ``burstiness`` is read: the run's
arrival gaps are gamma-distributed with that shape (``get_request``: ``theta = 1.0 / (request_rate * burstiness)``,
``np.random.gamma(shape=burstiness, scale=theta)``), and the run is simulated so. Each result becomes the row a decode CSV would hold
for the same run (``result_cells``) and is read by the CSV's own reader (``published.decode_rows_of_cells``), so a
result file and a CSV of the same run are predicted and compared alike: the prompt and output lengths are the means
total_input_tokens / completed and total_output_tokens / completed, unless the file lists each request's, which are
then simulated as sent (``DecodeRow.request_lengths``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from planner.accuracy.published import (
    CLIENT_FIGURE_KEYS,
    NOT_JSON,
    CsvRow,
    DecodeRow,
    data_parallel_size,
    decode_rows_of_cells,
    json_lines,
    read_measurement_text,
    resolve_gpu_name,
    resolve_model_name,
)
from planner.catalog import Catalog
from planner.errors import InvalidInputError, UnknownNameError
from planner.io.limits import MAX_MEASUREMENT_ROWS, check_count

#: What ``planner validate --decode`` reads as a result file, for its messages.
RESULT_FILES = (
    "the result JSON of vllm bench serve --save-result (or benchmark_serving.py) or the JSON Lines of "
    "sglang.bench_serving --output-file"
)

#: The keys every result must have: the run's size and lengths.
NEEDED_KEYS = ("completed", "total_input_tokens", "total_output_tokens")

#: The result's figure keys (milliseconds, tok/s) and the decode CSV column each is compared as: the one table of the
#: clients' key names, which a decode CSV also reads as column names (``published.CLIENT_FIGURE_KEYS``, trial 29 F8).
FIGURE_KEYS = CLIENT_FIGURE_KEYS

#: Figure keys the clients write that are known and not compared: every other statistic of TTFT, TPOT, ITL and the
#: end-to-end latency (``std_ttft_ms``, ``p75_itl_ms``; vLLM's ``e2el``, SGLang's ``e2e_latency``), the other
#: throughputs (vLLM's ``benchmark`` and SGLang's ``benchmark`` result dicts) and the per-request lists of
#: ``--save-detailed`` / ``--output-details``. Any other key that looks like a figure (``planner.accuracy.unread``) is
#: unknown: named, not dropped silently (trial 15 F2: ``medain_ttft_ms``).
KNOWN_STATISTIC_KEY = re.compile(r"(mean|median|std|min|max|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|e2e_latency)_ms")
KNOWN_UNREAD_FIGURE_KEYS = frozenset({
    "request_throughput", "input_throughput", "total_token_throughput", "total_throughput",
    "total_throughput_retokenized", "max_output_tokens_per_s", "ttfts", "itls", "tpots", "e2els",
})  # fmt: skip

#: ``--metadata KEY=VALUE`` keys (vllm bench serve) read as the decode CSV column of the same name: the GPU, the
#: tensor-parallel size, the release, the precisions, the prefix cache, the layout (``data_parallel_size``,
#: ``expert_parallel_size``, ``pipeline_parallel_size``: ``published.parallelism_of``) and ``notes``, which the CSV
#: reads for the server command's flags (``--enable-expert-parallel``, ``-dp 8``: ``published.command_cells``).
METADATA_COLUMNS = ("gpu", "tensor_parallel_size", "engine_version", "weight_dtype", "kv_cache_dtype", "prefix_cache",
                    "data_parallel_size", "expert_parallel_size", "pipeline_parallel_size", "notes")  # fmt: skip
#: ``--metadata`` keys of the layout, which validate's --parallelism replaces (the CLI wins over the file).
LAYOUT_METADATA = ("data_parallel_size", "expert_parallel_size", "pipeline_parallel_size")
#: The keys ``vllm bench serve`` writes itself beside its figures (``FIGURE_KEYS``, ``KNOWN_STATISTIC_KEY``,
#: ``KNOWN_UNREAD_FIGURE_KEYS``): ``main_async``'s (date, endpoint_type, backend, label, model_id, tokenizer_id,
#: num_prompts, request_rate, burstiness, max_concurrency, ramp_up_*) and ``benchmark``'s (duration, completed,
#: failed, ... rtfx, the ``--save-detailed`` lists; ``probe_*``, ``spec_decode_*`` and ``diffusion_*`` where those
#: ran), vllm/benchmarks/serve.py at 009e6d4a; ``request_goodput:`` as benchmark_serving.py 0.8 spelt it. Any other
#: key of a vLLM result is a ``--metadata`` pair (``main_async`` writes them between num_prompts and request_rate):
#: read where it is in ``METADATA_COLUMNS``, else named as not read (``unread_metadata``). SGLang's client takes no
#: metadata.
CLIENT_KEYS = frozenset({
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
    "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
    "request_goodput", "request_goodput:", "max_concurrent_requests", "rtfx", "input_lens", "output_lens", "latencies",
    "start_times", "queue_times", "generated_texts", "errors", "rps_change_events", "total_input_sequences",
    "input_sequence_throughput",
})  # fmt: skip
#: Starts of the keys vllm bench serve writes for optional measurements (see ``CLIENT_KEYS``).
CLIENT_KEY_STARTS = ("ramp_up_", "probe_", "spec_decode_", "diffusion_")

#: A percentile key that is not compared (p75_ttft_ms, p99.9_itl_ms: the median, p90, p95 and p99 are).
_OTHER_PERCENTILE = re.compile(r"p\d+(?:\.\d+)?_(ttft|tpot|itl)_ms")

#: The engine each ``backend`` value names (by its start); others ("openai", "openai-chat", "tgi") name an API.
BACKEND_ENGINES = (("vllm", "vllm"), ("sglang", "sglang"), ("lmdeploy", "lmdeploy"), ("tensorrt", "tensorrt-llm"),
                   ("trt", "tensorrt-llm"))  # fmt: skip


def looks_like_result_file(path: Path) -> bool:
    """Whether ``path`` is JSON (its name ends .json, .jsonl or .ndjson, or its first non-blank character is { or [)
    rather than a CSV."""
    if path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        return True
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            return f.read(4096).lstrip()[:1] in ("{", "[")
    except OSError:
        return False


def read_results(path: Path) -> list[dict[str, Any]]:
    """The result objects of ``path``: one JSON object, an array of them, or JSON Lines (one a line, as
    ``--append-result`` and ``--output-file`` append them). InvalidInputError in one line for anything else."""
    text = read_measurement_text(path, "a benchmark result file", f"validate --decode reads a CSV or {RESULT_FILES}")
    try:
        data = json.loads(text)
        results = data if isinstance(data, list) else [data]
    except (json.JSONDecodeError, RecursionError):
        results = []
        for line, raw, obj in json_lines(text):
            if obj is NOT_JSON:
                raise InvalidInputError(
                    f"{path}: line {line} is not JSON ({raw.strip()[:40]!r}); validate --decode reads a CSV or "
                    f"{RESULT_FILES}"
                ) from None
            results.append(obj)
    check_count(len(results), MAX_MEASUREMENT_ROWS, "results", str(path))
    if not results:
        raise InvalidInputError(f"{path}: no results; validate --decode reads a CSV or {RESULT_FILES}")
    for i, r in enumerate(results, 1):
        missing = [k for k in NEEDED_KEYS if not isinstance(r, dict) or k not in r]
        if missing or not any(k in r for k in FIGURE_KEYS):
            what = "no " + ", ".join(missing) if missing else "no figure (median_ttft_ms ... output_throughput)"
            raise InvalidInputError(
                f"{path}: result {i} is not a serving benchmark's result ({what}); validate --decode reads a CSV or "
                f"{RESULT_FILES}"
            )
    return results


def client_of(result: dict[str, Any]) -> str:
    """ "sglang" for a result of ``sglang.bench_serving`` (its ``dataset_name`` and retokenized totals, no
    ``model_id``), else "vllm" (``vllm bench serve``'s ``model_id``, ``tokenizer_id`` and ``date``)."""
    sglang_keys = ("total_output_tokens_retokenized", "dataset_name")
    return "sglang" if "model_id" not in result and any(k in result for k in sglang_keys) else "vllm"


def backend_engine(result: dict[str, Any]) -> str | None:
    """The engine the result's ``backend`` names; None where it names an API only ("openai", "openai-chat")."""
    backend = str(result.get("backend") or "").strip().lower()
    return next((engine for start, engine in BACKEND_ENGINES if backend.startswith(start)), None)


def _number(result: dict[str, Any], key: str, path: Path, i: int) -> float:
    value = result.get(key)
    try:
        x = float(value)  # (bool is an int: refused below as not a count)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(value, bool) or not math.isfinite(x) or x < 0:
        raise InvalidInputError(f"{path}: result {i}: {key} {value!r} is not a count; {RESULT_FILES} write a number")
    return x


def unread_metadata(results: list[dict[str, Any]]) -> list[str]:
    """The keys of the vLLM client's results that are neither its own (``CLIENT_KEYS``, the figures and the statistics
    known and not compared) nor a ``--metadata`` key read (``METADATA_COLUMNS``), in file order: ``--metadata`` pairs
    that change nothing here (a key that looks like a figure is ``unread.unknown_result_keys``' to name)."""
    keys = dict.fromkeys(str(k) for r in results if isinstance(r, dict) and client_of(r) == "vllm" for k in r)
    return [
        k
        for k in keys
        if k not in CLIENT_KEYS
        and not k.startswith(CLIENT_KEY_STARTS)
        and k not in METADATA_COLUMNS
        and k not in FIGURE_KEYS
        and k not in KNOWN_UNREAD_FIGURE_KEYS
        and not KNOWN_STATISTIC_KEY.fullmatch(k)
        and not _OTHER_PERCENTILE.fullmatch(k)
    ]


def result_cells(
    result: dict[str, Any],
    path: Path,
    i: int,
    *,
    gpu: str | None,
    gpus: int | None,
    model: str | None,
    layout_given: bool = False,
) -> CsvRow:
    """The decode CSV row (``published.DECODE_COLUMNS``) of one result: gpu, model and tensor_parallel_size from
    the options (else ``--metadata gpu=... tensor_parallel_size=...`` in the file; the model from its ``model_id``),
    the engine its ``backend`` names, num_prompts (vLLM's; SGLang's ``completed``), request_rate, the closed loop of
    ``max_concurrency``, burstiness (vLLM's, at a rate: the gamma shape of the gaps, ``get_request`` in
    ``vllm/benchmarks/serve.py``), input_len / output_len the means over completed requests, and each compared figure
    (``FIGURE_KEYS``). The ``--metadata`` keys of ``METADATA_COLUMNS`` are the CSV's columns of the same name, the
    layout's (``LAYOUT_METADATA``) left out where the caller gives the layout (``layout_given``: validate's
    --parallelism). ``gpus`` is the server's whole group: with a data-parallel size N (``data_parallel_size``, or
    ``-dp N`` in a vLLM ``notes``), N ranks of gpus / N GPUs each (vLLM ``-tp 1 -dp 8``: ``--gpus 8``)."""
    where = f"{path}" if i == 1 else f"{path}: result {i}"
    gpu = gpu or str(result.get("gpu") or "").strip() or None
    group = gpus or str(result.get("tensor_parallel_size") or "").strip() or None
    if not gpu or not group:
        give = [
            *([] if gpu else ["--gpu NAME (the run's GPU, e.g. H100)"]),
            *([] if group else ["--gpus N (the GPUs of the server's tensor-parallel group)"]),
        ]
        raise InvalidInputError(f"{where} names no GPU{' count' if gpu else ''}; give {' and '.join(give)}")
    server_info = result.get("server_info") if isinstance(result.get("server_info"), dict) else {}
    model = model or str(result.get("model_id") or server_info.get("model_path") or "").strip() or None
    if not model:
        raise InvalidInputError(f"{where} names no model (sglang.bench_serving writes none); give --model NAME")
    completed = _number(result, "completed", path, i)
    if completed < 1:
        raise InvalidInputError(f"{path}: result {i}: completed {result.get('completed')!r}: no request completed")
    client = client_of(result)
    prompts = result.get("num_prompts") if client == "vllm" and result.get("num_prompts") else completed
    rate = str(result.get("request_rate") if result.get("request_rate") is not None else "inf").strip().lower()
    rate = "inf" if rate in ("inf", "infinity", "+inf") else rate
    concurrency = result.get("max_concurrency")
    closed = concurrency not in (None, "", 0) and rate == "inf"  # with a rate, the rate decides (as in the CSV)
    cells = CsvRow(
        record_id=f"{path.stem}#{i}",
        gpu=gpu,
        model=model,
        tensor_parallel_size=str(group),
        engine=backend_engine(result) or client,
        num_prompts=str(int(float(prompts))),
        request_rate="" if closed else rate,
        kind="serving_concurrency" if closed else "serving_rate",
        batch=str(concurrency) if closed else "",
        input_len=repr(_number(result, "total_input_tokens", path, i) / completed),
        output_len=repr(_number(result, "total_output_tokens", path, i) / completed),
        source=str(path),
    )
    burstiness = result.get("burstiness")  # vllm bench serve's gamma shape of the gaps (1.0: Poisson); at inf unread
    if burstiness is not None and not isinstance(burstiness, (dict, list)) and rate != "inf" and not closed:
        cells["burstiness"] = str(burstiness)
    for key in METADATA_COLUMNS[2:]:  # --metadata engine_version=0.11.0 ...: the CSV's column of that name
        if result.get(key) not in (None, "") and not (layout_given and key in LAYOUT_METADATA):
            cells[key] = str(result[key])
    if gpus:  # the group given: with N data-parallel ranks (a -dp N in notes too), each has gpus / N
        try:
            dp = data_parallel_size(cells)
        except ValueError:  # (another engine's data_parallel_size: the reader says why)
            dp = 1
        if dp > 1:
            if gpus % dp:
                raise InvalidInputError(
                    f"{where}: data-parallel size {dp} (its --metadata) does not divide --gpus {gpus}; give --gpus "
                    "the server's whole group (vLLM -tp 1 -dp 8: --gpus 8)"
                )
            cells["tensor_parallel_size"] = str(gpus // dp)
    if client == "sglang" and str(result.get("dataset_name") or ""):
        name = str(result["dataset_name"])  # its random draws reproduced as the CSV path does for its runs
        flags = [f"--{k.replace('_', '-')} {result[k]}" for k in ("random_input_len", "random_output_len",
                 "random_range_ratio") if name.startswith("random") and result.get(k) is not None]  # fmt: skip
        cells["dataset"] = f"{name} ({' '.join(flags)})" if flags else name
        cells["batching"] = "python -m sglang.bench_serving"
    for key, column in FIGURE_KEYS.items():
        value = result.get(key)
        if value is not None and not isinstance(value, (dict, list)):
            cells[column] = str(value)
    return cells


def request_lengths(result: dict[str, Any]) -> tuple[tuple[int, int], ...] | None:
    """Each completed request's (prompt, output) tokens where the result lists them (``input_lens`` and
    ``output_lens`` of equal length; a failed request, output 0, left out); None otherwise."""
    ins, outs = result.get("input_lens"), result.get("output_lens")
    if not isinstance(ins, list) or not isinstance(outs, list) or len(ins) != len(outs) or not ins:
        return None
    try:
        pairs = tuple((int(a), int(b)) for a, b in zip(ins, outs, strict=True) if int(b) > 0)
    except (TypeError, ValueError):
        return None
    return pairs if pairs and all(a >= 1 for a, _ in pairs) else None


def unread_percentiles(results: list[dict[str, Any]]) -> list[str]:
    """The percentile keys of the results that are not compared (p75_ttft_ms, p99.9_itl_ms), in file order."""
    return list(dict.fromkeys(k for r in results for k in r if _OTHER_PERCENTILE.fullmatch(k) and k not in FIGURE_KEYS))


def read_result_rows(
    path: Path,
    catalog: Catalog,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    model: str | None = None,
    results: list[dict[str, Any]] | None = None,
    layout_given: bool = False,
) -> tuple[list[DecodeRow], list[str]]:
    """The ``DecodeRow`` of each run of a result file (``read_results``), read as the same run's decode CSV row, and
    the notes to print (a backend that names an API, not an engine). The GPU and model are checked against the
    catalog first: an unknown name is refused with the closest catalog names."""
    results = read_results(path) if results is None else results  # (a caller that read them already passes them)
    cells = [
        result_cells(r, path, i, gpu=gpu, gpus=gpus, model=model, layout_given=layout_given)
        for i, r in enumerate(results, 1)
    ]
    for i, c in enumerate(cells, 1):
        what = "--model" if model else ("model_id" if "model_id" in results[i - 1] else "model")
        try:
            resolve_gpu_name(c["gpu"], catalog)
        except UnknownNameError as exc:
            raise InvalidInputError(f"{path}: result {i}: {exc} (--gpu: the run's GPU)") from None
        try:
            resolve_model_name(c["model"], catalog)
        except UnknownNameError as exc:
            hint = f"did you mean {', '.join(exc.suggestions)}? " if exc.suggestions else ""
            raise InvalidInputError(
                f"{path}: result {i}: {what} {c['model']!r} is not in the catalog; {hint}give --model with a catalog "
                "name (planner catalog list models), or add the model with --catalog"
            ) from None
    rows = decode_rows_of_cells(path, cells)
    rows = [
        row if (lengths := request_lengths(r)) is None else _with_lengths(row, lengths)
        for row, r in zip(rows, results, strict=True)
    ]
    notes = []
    apis = sorted({str(r.get("backend")) for r in results if backend_engine(r) is None})
    if apis:
        notes.append(
            f"{path}: backend {', '.join(apis)} names the API the client called, not the engine; taken as "
            f"{', '.join(sorted({client_of(r) for r in results if backend_engine(r) is None}))} (the client's own): "
            "give --engine to say which served it"
        )
    return rows, notes


def _with_lengths(row: DecodeRow, lengths: tuple[tuple[int, int], ...]) -> DecodeRow:
    from dataclasses import replace

    return replace(row, request_lengths=lengths, num_prompts=len(lengths))
