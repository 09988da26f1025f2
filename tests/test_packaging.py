"""The installed package is self-contained: the catalog ships inside the wheel, the public API is explicit."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import planner

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_packaging")

ROOT = Path(__file__).parents[1]


def test_all_lists_exactly_the_public_names():
    public = {n for n in dir(planner) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(planner, n)).__name__ == "module"}
    assert set(planner.__all__) - {"__version__"} == public - modules


def test_the_issue_names_are_importable():
    from planner import kv_bytes, max_batch, ridge, throughput, tpot, ttft, weight_bytes  # noqa: F401


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{run.stderr[-2000:]}")
    return next(out.glob("planner-*.whl"))


def test_the_wheel_carries_the_catalog(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for f in ("gpus.toml", "models.toml", "precisions.toml", "reference/seed_cases.toml"):
        assert f"planner/_catalogs/{f}" in names


def test_the_installed_package_finds_its_catalog_from_another_folder(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import planner, planner.catalog.loader as l; "
        "print(l.shipped_catalog_dir()); print(planner.max_batch('H100','llama2-70b',8192,kv_precision='fp16',gpus=2,"
        "memory_utilization=1.0, engine='ideal', reserve_bytes=0))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    folder, batch = run.stdout.split()
    assert folder.startswith(str(site)) and folder.endswith("_catalogs")
    assert batch == "12"  # the seeds' trailer size


def test_the_package_docstring_examples_run():
    import doctest

    result = doctest.testmod(planner)
    assert result.attempted >= 2 and result.failed == 0
