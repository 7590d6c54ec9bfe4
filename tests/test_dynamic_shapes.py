"""Data-dependent shapes inside tensor code (sparse MoE dispatch, boolean masks):
each compiled backend builds sub-DNNs whose inputs have a dynamic dimension, and
the compiled model equals eager on inputs that select different numbers of rows."""

import copy
import json

import pytest
import torch

import dycl
from dycl.demo import max_abs_error
from models.fallbacks import CASES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm", "auto"])
@pytest.mark.parametrize("name", ["sparse_moe_block", "masked_experts", "selected_rows"])
def test_dynamic_rows_on_every_backend(name, backend, tmp_path):
    factory, inputs, _, _ = CASES[name]
    torch.manual_seed(0)
    model = factory().eval()
    cm = dycl.compile(copy.deepcopy(model), [x.clone() for x in inputs[0]], backend=backend, fallback="error",
                      out_dir=tmp_path / "art")
    with torch.no_grad():
        for args in inputs:
            assert max_abs_error(model(*args), cm(*args)) <= 1e-5, args


def test_dynamic_inputs_are_declared_in_the_manifest(tmp_path):
    factory, inputs, _, _ = CASES["selected_rows"]
    torch.manual_seed(0)
    dycl.compile(factory().eval(), inputs[0], backend="onnxruntime", out_dir=tmp_path / "art")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text())
    # Built for any number of rows by ONNX Runtime itself (dynamic axes), not by a fallback.
    dynamic = [s for s in manifest["subgraphs"].values()
               if any("?" in t for t in s["inputs"]) and all(t.startswith("tensor") for t in s["outputs"])]
    assert dynamic and all(s["backend"] == "onnxruntime" for s in dynamic), manifest["subgraphs"]
