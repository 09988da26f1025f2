"""Trial 23 F11: ``planner catalog show`` reads a name as ``plan`` and ``export`` read it (a GPU as price pages and
logs write it), where it had refused "NVIDIA H100 Tensor Core GPU" that the export had read as the H100 SXM."""

from __future__ import annotations

from cli_support import one_line, run

import planner


def test_catalog_show_reads_a_marketing_gpu_name_as_plan_does():
    # NVIDIA's product page calls the SXM part "NVIDIA H100 Tensor Core GPU"; plan and export read it as the
    # catalog's H100 SXM 80GB (planner.catalog.names.gpu_name strips "NVIDIA", "Tensor Core" and "GPU").
    name = "NVIDIA H100 Tensor Core GPU"
    assert planner.default_catalog().gpu(name).name == "H100 SXM 80GB"
    shown = run("catalog", "show", name)
    assert shown.exit_code == 0, shown.output
    assert 'name = "H100 SXM 80GB"' in shown.output
    assert f"# {name!r} read as 'H100 SXM 80GB', as plan and export read it" in shown.output


def test_catalog_show_of_a_catalog_name_adds_no_reading_line():
    shown = run("catalog", "show", "gpu", "H100 SXM 80GB")
    assert shown.exit_code == 0, shown.output
    assert "read as" not in shown.output


def test_catalog_show_still_refuses_an_unknown_name_with_suggestions():
    assert one_line(run("catalog", "show", "H10"), 2).startswith("planner: error: unknown catalog entry 'H10'")
