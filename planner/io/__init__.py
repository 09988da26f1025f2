"""Files and text at the edges: atomic writes, text made safe for each sink, TOML, LibreOffice, the C heap.

- ``files``: exclusive create and atomic replace of every output planner writes.
- ``safetext``: user text made safe for xlsx, terminal and CSV.
- ``toml_text``: reading and writing TOML.
- ``libreoffice``: headless conversion and recalculation.
- ``xlsx_values``: a saved xlsx's formula cells given the values readers show.
- ``heap``: glibc's malloc thresholds for large sweeps.

Imports nothing from planner but ``planner.errors``.
"""
