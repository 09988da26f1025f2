"""Serving under load: a step-by-step simulation of an engine's scheduler and the benchmark runs it predicts.

- ``simulate``: continuous batching with chunked prefill, preemption and each engine's admission policy.
- ``state``: the simulated run's requests, grouped in cohorts of the same progress.
- ``benchmark``: a published benchmark run (prompts, rate, concurrency) predicted by the simulation.
- ``load``: latency under load for one replica (arrivals, length distributions, percentiles of TTFT/TPOT/ITL).
- ``approx``: a closed-form approximation of ``load`` over arrays of rates, for sweeps and first guesses.
- ``fleet``: the fewest replicas whose simulated percentiles meet the targets.
- ``speculative``: speculative decoding's step (draft passes and a verify pass) and the acceptance length it emits.

May import ``planner.api`` (a run's steps are its ``decode_step`` and ``prefill``) and its argument checks
(``planner.checks``, ``planner.deploy``, ``planner.options``), ``planner.model``,
``planner.engines.profiles``, ``planner.catalog``, ``planner.errors`` and ``planner.units`` (how a duration is
read); never a surface.
"""
