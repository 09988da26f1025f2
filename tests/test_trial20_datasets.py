"""Trial 20 F4: --dataset sharegpt sends the shipped sample's requests, not every request at the paper's means."""

from __future__ import annotations

import numpy as np
import pytest

from planner.accuracy.datasets import sharegpt_sample
from planner.cli.plan import dataset_line
from planner.serving.load import dataset_load


def test_sharegpt_sends_the_shipped_samples_requests():
    t = dataset_load("sharegpt")
    sample = sharegpt_sample()
    assert t.lengths == [sample[i % len(sample)] for i in range(1000)] and not t.at_means
    assert (t.prompt_mean_tokens, t.output_mean_tokens) == pytest.approx((213.3, 212.0), abs=0.1)
    assert np.percentile([p for p, _ in sample], 95) > 2.5 * t.prompt_mean_tokens  # a spread the means hid
    line = dataset_line(t)
    assert "as vllm bench serve sends it, each request's own lengths from a shipped sample" in line
    assert "seed-0 ShareGPT sample" in line


def test_a_dataset_of_means_says_its_percentiles_are_narrow():
    line = dataset_line(dataset_load("alpaca"))
    assert "at the dataset's mean lengths" in line and "narrower than the dataset's spread" in line
    assert "sends it" not in line
    assert dataset_line(dataset_load("sonnet")).startswith("  dataset sonnet as vllm bench serve sends it")
