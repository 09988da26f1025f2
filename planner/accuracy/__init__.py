"""How right the model is, on measurements it was or was not fitted to.

- ``published``: public measurements (benchmark tables, logs) as typed rows, each with its source.
- ``predict``: the model's prediction for a row, and the time ranges (``tpot_range`` and kin).
- ``validation``: ``planner validate``: a user's file of measurements against the predictions.
- ``fit``, ``holdout``: fitting the engine profiles' time factors, and the leave-sources-out protocol.
- ``measure``, ``calibration``: a user's own measurements, as a calibration file the model reads.
- ``ranges``: the honest range around a prediction, from held-out residuals.
- ``bootstrap``: how much a held-out median moves by chance (resampling whole sources), and paired comparisons.

May import ``planner.api`` and ``planner.options``, and below them ``planner.serving``, ``planner.engines``,
``planner.catalog``, ``planner.model``, ``planner.io``, ``planner.units`` and ``planner.errors``; never a surface.
"""
