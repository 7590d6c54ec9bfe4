"""The first dynamic network end to end: frontend → passes → TVM → Python host."""

import json

import pytest
import torch

import dycl
from dycl.demo import max_abs_error


def test_every_path_matches_eager(branchy, branchy_compiled):
    model, cm = branchy_compiled
    paths = branchy.branch_inputs()
    assert set(paths) == {"a", "b"}
    with torch.no_grad():
        for x in paths.values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


def test_structure(branchy_compiled):
    _, cm = branchy_compiled
    assert sorted(cm.subgraphs) == ["sub_0", "sub_1", "sub_2"]
    assert {s["backend"] for s in cm.subgraphs.values()} == {"tvm"}
    counts = cm.hcfg.counts()
    assert counts["tensor_nodes"] == 3 and counts["condition_nodes"] == 1
    dot = cm.hcfg.to_dot()
    assert dot.startswith("digraph hcfg") and "shape=diamond" in dot and '"true"' in dot


def test_host_reads_back_only_the_predicate(branchy_compiled):
    _, cm = branchy_compiled
    host = (cm.path / "host.py").read_text()
    assert host.count("_to_bool(") == 2  # its definition and the one predicate
    assert "numpy()" not in host.split("def forward", 1)[1]
    assert "import torch" not in host  # tvm sub-DNNs need only the tvm runtime


def test_save_and_load(branchy, branchy_compiled, tmp_path):
    model, cm = branchy_compiled
    cm.save(tmp_path / "saved")
    cm2 = dycl.load(tmp_path / "saved")
    manifest = json.loads((tmp_path / "saved" / "manifest.json").read_text())
    assert manifest["inputs"] == [{"shape": [1, 16], "dtype": "float32"}]
    for x in branchy.branch_inputs().values():
        assert torch.equal(cm(*x), cm2(*x))


def test_wrong_shape_names_expected_and_got(branchy_compiled):
    _, cm = branchy_compiled
    with pytest.raises(dycl.InputError, match=r"expected shape/dtype 1x16 float32, got 2x16 float32"):
        cm(torch.randn(2, 16))


def test_wrong_dtype(branchy_compiled):
    _, cm = branchy_compiled
    with pytest.raises(dycl.InputError, match="got 1x16 float64"):
        cm(torch.randn(1, 16, dtype=torch.float64))


def test_wrong_arity(branchy_compiled):
    _, cm = branchy_compiled
    with pytest.raises(dycl.InputError, match="expected 1 inputs, got 2"):
        cm(torch.randn(1, 16), torch.randn(1, 16))


def test_non_contiguous_input(branchy, branchy_compiled):
    model, cm = branchy_compiled
    x = torch.randn(1, 32)[:, ::2]
    assert not x.is_contiguous()
    with torch.no_grad():
        assert max_abs_error(model(x), cm(x)) <= 1e-5
