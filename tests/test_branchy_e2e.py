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
    assert host.count("_to_bool(") == 1  # the one predicate (the helper is dycl.runtime.host_support's)
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
    loaded = dycl.load(cm.path)  # without the model: it cannot compile other shapes
    with pytest.raises(dycl.InputError, match=r"expected shape/dtype 1x16 float32, got 2x16 float32"):
        loaded(torch.randn(2, 16))


def test_other_shapes_compile_on_first_use_up_to_a_limit_then_run_eager(branchy, tmp_path):
    from dycl.runtime import MAX_SPECIALIZATIONS

    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs(), backend="torch")
    with torch.no_grad():
        for b in (2, 3, 2):
            x = torch.randn(b, 16)
            assert max_abs_error(model(x), cm(x)) <= 1e-6
    assert len(cm._specializations) == 2
    cm._specializations.update({(None, ((100 + k, 16), torch.float32, "cpu")): cm
                                for k in range(MAX_SPECIALIZATIONS - 2)})
    x = torch.randn(7, 16)
    with pytest.warns(dycl.FallbackWarning, match=f"already compiled for {MAX_SPECIALIZATIONS} other input shapes"):
        got = cm(x)  # (eager's answer past the limit, not a refusal)
    assert torch.equal(got, model(x))
    fixed = dycl.compile(model, branchy.example_inputs(), backend="torch", dynamic=False)
    with pytest.raises(dycl.InputError, match="expected shape/dtype 1x16 float32, got 2x16 float32"):
        fixed(torch.randn(2, 16))


def test_wrong_dtype(branchy, branchy_compiled):
    """Another dtype is compiled for on first use, as another shape is: where eager
    refuses it (float32 weights), the call raises eager's error."""
    model, cm = branchy_compiled
    x = torch.randn(1, 16, dtype=torch.float64)
    with pytest.raises(RuntimeError) as want:
        model(x)
    with pytest.raises(RuntimeError) as got:
        cm(x)
    assert str(got.value) == str(want.value)
    with pytest.raises(dycl.InputError, match="got 1x16 float64"):
        dycl.load(cm.path)(x)  # (a loaded artifact compiles nothing)


def test_wrong_arity(branchy_compiled):
    _, cm = branchy_compiled
    with pytest.raises(dycl.InputError, match=r"forward\(\) takes 2 positional arguments but 3 were given"):
        cm(torch.randn(1, 16), torch.randn(1, 16))  # (a TypeError too, as eager's)


def test_non_contiguous_input(branchy, branchy_compiled):
    model, cm = branchy_compiled
    x = torch.randn(1, 32)[:, ::2]
    assert not x.is_contiguous()
    with torch.no_grad():
        assert max_abs_error(model(x), cm(x)) <= 1e-5
