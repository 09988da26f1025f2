"""The Excel surface: user-defined functions for xlwings (desktop, Office.js and Lite).

- ``functions``: the ``=MAX_BATCH(...)`` family, each a thin call of ``planner.api``.
- ``support``, ``cells``: arguments read from cells, errors turned into Excel error values.
- ``catalog``: the catalog as cell ranges (lists of GPUs, models, precisions).

May import ``planner`` (its version), ``planner.api``, ``planner.options``, ``planner.accuracy`` (its
``loaded_ranges``: LOADED_RANGE's table) and below them ``planner.serving``, ``planner.engines``,
``planner.catalog``, ``planner.model``, ``planner.io``, ``planner.units`` and ``planner.errors``; nothing imports
this package but the CLI's add-in builder.
"""
