"""Identical sub-DNNs are built once; rebuilds come from the disk cache unless weights or dycl change."""

import pytest
import torch

import dycl
from dycl import build_cache
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow


def test_second_compile_hits_the_cache_and_new_weights_miss(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    first = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert first.report.cache_hits == 0
    second = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert second.report.cache_hits == 3
    assert sum(second.report.backend_seconds.values()) < sum(first.report.backend_seconds.values())
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert torch.equal(first(*x), second(*x))
            assert max_abs_error(model(*x), second(*x)) <= 1e-5
        model.b.weight.add_(1.0)  # only sub-DNNs using `b` must be rebuilt
    third = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert third.report.cache_hits == 2
    with torch.no_grad():
        x = branchy.branch_inputs()["b"]
        assert max_abs_error(model(*x), third(*x)) <= 1e-5


def test_identical_sub_dnns_are_built_once(monkeypatch, tmp_path):
    import captioner

    monkeypatch.setenv("DYCL_CACHE_DIR", "off")
    model = captioner.make_model()
    cm = dycl.compile(model, captioner.example_inputs(), backend="torch")
    assert cm.report.deduplicated >= 1
    with torch.no_grad():
        for x in captioner.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


def test_an_edited_dycl_never_reuses_builds(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert dycl.compile(model, branchy.example_inputs(), backend="tvm").report.cache_hits == 3
    monkeypatch.setattr(build_cache, "_VERSIONS", None)
    monkeypatch.setattr(build_cache, "_source_digest", lambda: "edited-sources")
    assert dycl.compile(model, branchy.example_inputs(), backend="tvm").report.cache_hits == 0


def test_a_damaged_cache_entry_is_rebuilt_not_reused(monkeypatch, tmp_path, branchy, capsys):
    """Swapped, truncated or emptied files in an entry: discarded with a note, rebuilt."""
    import json

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs(), backend="onnxruntime")
    entries = sorted((tmp_path / "cache" / "builds").iterdir())
    assert len(entries) == 3
    onnx = [sorted(e.glob("*.onnx"))[0] for e in entries]
    onnx[0].write_bytes(onnx[0].read_bytes()[:100])  # truncated
    onnx[1].write_bytes(onnx[2].read_bytes())  # swapped with another sub-DNN's
    (entries[2] / "done").write_text("")  # emptied marker
    capsys.readouterr()
    cm = dycl.compile(model, branchy.example_inputs(), backend="onnxruntime")
    assert cm.report.cache_hits == 0
    assert capsys.readouterr().err.count("discarding a damaged build-cache entry") == 3
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5
    for e in entries:  # stored anew, whole
        done = json.loads((e / "done").read_text())
        assert set(done["sha256"]) == {p.name for p in e.iterdir() if p.name != "done"}
