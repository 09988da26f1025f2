"""The what-if workbook names the input it refuses (s155): an input that passes its cell's own check (a GPU count of
3, a batch above what fits) turned every result #NUM! with nothing saying which input or what is accepted.

LibreOffice recalculates the shipped workbook with one input changed; Inputs' "why" cell beside the results must give
the reason, worded as the CLI's refusal, and stay empty when every result computes.
"""

from __future__ import annotations

import pytest
from workbook_support import recalculate_inputs, require_libreoffice

from planner.workbook.build import build_whatif
from planner.workbook.inputs import why_error_row
from planner.workbook.layout import INPUTS_SHEET

pytestmark = pytest.mark.libreoffice

#: Inputs the baseline refuses (on the shipped opening: Llama-2-70B, 4,096 tokens, 4 x H100), each with its reason.
CASES = {
    "opening": ({}, None),
    "gpu_count": ({"gpus": 3}, "Error: 3 GPUs is not a tensor-parallel group the engine runs for this model"),
    "too_few": ({"gpus": 1}, "Error: the weights and one sequence of the context do not fit on 1 GPU:"),
    "batch": ({"batch": 100000}, "Error: batch 100000 is more than the max batch that fits (117)"),
    "utilization": ({"memory_utilization": 90}, "Error: memory utilization: give a fraction above 0 and at most 1"),
    "kv": ({"kv_precision": "mxfp4"}, "Error: KV-cache precision mxfp4 is not a format the engine caches"),
    "gpu": ({"gpu": "H10"}, "Error: GPU H10 is not in the catalog: pick one from the list (GPUs sheet)"),
    "context": ({"context": 0}, "Error: context: give a whole number of tokens from 1 to 16,777,216"),
}


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_libreoffice()
    inputs = {key: changes for key, (changes, _) in CASES.items()}
    return recalculate_inputs(build_whatif(), inputs, tmp_path_factory.mktemp("why"))


@pytest.mark.parametrize("key", list(CASES))
def test_the_refused_input_is_named(books, key):
    why = books[key][INPUTS_SHEET][f"D{why_error_row()}"].value
    said = CASES[key][1]
    if said is None:
        assert why in (None, ""), why
    else:
        assert why is not None and why.startswith(said), why
