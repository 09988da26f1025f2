"""Files and text at the edges: atomic writes, text made safe for each sink, TOML, LibreOffice, the C heap.

- ``files``: exclusive create and atomic replace of every output planner writes; private temporary folders;
  removal of what a killed writer left.
- ``safetext``: user text made safe for xlsx, terminal and CSV (the one place for every sink).
- ``limits``: bounds on what planner reads (file sizes, counts, TOML key depth), checked before the work.
- ``toml_text``: reading and writing TOML.
- ``libreoffice``: headless conversion and recalculation.
- ``xlsx_values``: a saved xlsx's formula cells given the values readers show.
- ``paper``: the printed measures (page, text sizes, a column's printed width) every xlsx is laid out by.
- ``heap``: glibc's malloc thresholds for large sweeps.

May import ``planner.errors`` only.
"""
