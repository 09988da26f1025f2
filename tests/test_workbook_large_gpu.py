"""The GPUs sheet's engine batching defaults, recalculated by LibreOffice, equal ``EngineProfile.batching_limits``:
vLLM's large-GPU rule by device name (``large_gpu_formula``), on every catalog GPU, under the shipped rule (0.9.0+:
no "a100" in the name, v0.9.2 vllm/engine/arg_utils.py l.1629), under 0.8.4's ("h100" or "h200" in it, l.1669-1682)
and under 0.28.0's (16,384 / 1,024 from 160 GiB whatever the name, v0.28.0 l.2582-2591).
"""

from __future__ import annotations

import pytest
from workbook_support import convert_to_csv_sheets, read_csv_sheet, require_libreoffice

from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile, vllm_batching_release
from planner.workbook.build import build_whatif
from planner.workbook.layout import GPUS_SHEET
from planner.workbook.writer import write_workbook

pytestmark = pytest.mark.libreoffice

HEADERS = ("GPU", "Large GPU class (engine)", "Profiling tokens (engine)", "Sampler sequences (engine)")
PROFILES = {
    "shipped": engine_profile("vllm"),
    "0.8.4": engine_profile("vllm").with_(**vllm_batching_release("0.8.4")[1]),
    "0.28.0": engine_profile("vllm").with_(**vllm_batching_release("0.28.0")[1]),
}


@pytest.fixture(scope="module")
def gpu_sheets(tmp_path_factory):
    """Each profile's workbook (no Load sheet) recalculated in one soffice call: its GPUs sheet's cells."""
    require_libreoffice()
    tmp = tmp_path_factory.mktemp("large_gpu")
    paths = [
        write_workbook(build_whatif(engine=eng, load=False), tmp / f"{key}.xlsx", force=True)
        for key, eng in PROFILES.items()
    ]
    outputs = convert_to_csv_sheets(paths, [GPUS_SHEET], tmp / "csv", timeout_s=900)
    return {key: read_csv_sheet(out[GPUS_SHEET]) for key, out in zip(PROFILES, outputs, strict=True)}


def columns(cells: dict) -> dict[str, str]:
    """The column letter of each of ``HEADERS`` in row 1."""
    found = {v: ref[:-1] for ref, v in cells.items() if ref.endswith("1") and ref[:-1].isalpha() and v in HEADERS}
    assert set(found) == set(HEADERS), found
    return found


@pytest.mark.parametrize("key", list(PROFILES))
def test_every_gpu_gets_the_profiles_class_and_limits(gpu_sheets, key):
    """Row by row: LibreOffice's large class, tokens and sequences are the profile's on that GPU's device name."""
    cells, eng = gpu_sheets[key], PROFILES[key]
    col = columns(cells)
    gpus = default_catalog().gpus
    for r, g in enumerate(gpus, 2):
        assert cells[f"{col['GPU']}{r}"] == g.name
        large = eng.large_gpu(g.memory_bytes, g.engine_device_name)
        want = eng.batching_limits(g.memory_bytes, g.engine_device_name)
        got = (cells[f"{col['Profiling tokens (engine)']}{r}"], cells[f"{col['Sampler sequences (engine)']}{r}"])
        assert (bool(cells[f"{col['Large GPU class (engine)']}{r}"]), got) == (large, want), (key, g.name)


def test_the_a800_is_large_and_the_a100_small_in_the_shipped_book(gpu_sheets):
    """The rows this rule moved: A800 SXM 80GB 8,192 / 1,024; A100 SXM 80GB 2,048 / 256 (v0.9.2 l.1629)."""
    cells = gpu_sheets["shipped"]
    col = columns(cells)
    rows = {cells[f"{col['GPU']}{r}"]: r for r in range(2, 2 + len(default_catalog().gpus))}
    tokens, seqs = col["Profiling tokens (engine)"], col["Sampler sequences (engine)"]
    assert (cells[f"{tokens}{rows['A800 SXM 80GB']}"], cells[f"{seqs}{rows['A800 SXM 80GB']}"]) == (8192, 1024)
    assert (cells[f"{tokens}{rows['A100 SXM 80GB']}"], cells[f"{seqs}{rows['A100 SXM 80GB']}"]) == (2048, 256)


def test_the_b200_takes_the_160_gib_class_in_the_0_28_book(gpu_sheets):
    """v0.28.0 l.2582-2591: B200 180GB 16,384 / 1,024; H200 141GB keeps 8,192 / 1,024; the shipped book's B200 too."""
    for key, want in (("0.28.0", (16384, 1024)), ("shipped", (8192, 1024))):
        cells = gpu_sheets[key]
        col = columns(cells)
        rows = {cells[f"{col['GPU']}{r}"]: r for r in range(2, 2 + len(default_catalog().gpus))}
        tokens, seqs = col["Profiling tokens (engine)"], col["Sampler sequences (engine)"]
        assert (cells[f"{tokens}{rows['B200 180GB']}"], cells[f"{seqs}{rows['B200 180GB']}"]) == want, key
        assert (cells[f"{tokens}{rows['H200 SXM 141GB']}"], cells[f"{seqs}{rows['H200 SXM 141GB']}"]) == (8192, 1024)
