"""A formula checker's reading of the review's sources (trial 25): links that open, labels that say what the figure
is and on which basis."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.export.assumptions import first_url

pytestmark = pytest.mark.xdist_group("test_export_review")


@pytest.mark.parametrize(
    ("text", "url"),
    [
        # catalogs/gpus.toml, L40S source: the colon starts the figures quoted from the page
        (
            "NVIDIA L40S datasheet (L40/L40S table reproduced at https://www.mullet.se/product.html?product_id=355414: "
            "FP32 91.6",
            "https://www.mullet.se/product.html?product_id=355414",
        ),
        (
            "see https://github.com/vllm-project/vllm/issues/16570: 39.38 GiB",
            "https://github.com/vllm-project/vllm/issues/16570",
        ),
        ("as in https://github.com/sgl-project/sglang/pull/2904.", "https://github.com/sgl-project/sglang/pull/2904"),
        ("https://example.com/a:b/c", "https://example.com/a:b/c"),  # a colon inside an address stays
    ],
)
def test_a_sources_link_stops_before_the_sentences_punctuation(text, url):
    assert first_url(text) == url


def test_no_catalog_gpu_source_links_end_in_punctuation():
    """Every GPU's source link as the review writes it (trial 25 F5: three reached a review ending in ':')."""
    for g in default_catalog().gpus.entries:
        for field in ("source", "engine_visible_memory_source", "interconnect_source"):
            url = first_url(getattr(g, field, "") or "")
            assert not url.endswith((".", ":", ",")), (g.name, field, url)


def test_the_assumptions_name_the_memory_and_the_links_direction(readme_example_review):
    """L40S memory is GDDR6, not HBM; NVLink's 450 GB/s is one direction of the datasheet's 900 GB/s (trial 25 F4)."""
    rows = {a.what: a for a in readme_example_review.assumptions}
    assert "L40S: memory bandwidth (GDDR6)" in rows
    assert "H100 SXM 80GB: memory bandwidth (HBM3)" in rows
    link = rows["H100 SXM 80GB: GPU-to-GPU bandwidth"]
    assert (link.value, link.unit) == (450, "GB/s per direction")
