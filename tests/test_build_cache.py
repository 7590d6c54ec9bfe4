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
    first = dycl.compile(model, branchy.example_inputs())
    assert first.report.cache_hits == 0
    second = dycl.compile(model, branchy.example_inputs())
    assert second.report.cache_hits == 3
    assert sum(second.report.backend_seconds.values()) < sum(first.report.backend_seconds.values())
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert torch.equal(first(*x), second(*x))
            assert max_abs_error(model(*x), second(*x)) <= 1e-5
        model.b.weight.add_(1.0)  # only sub-DNNs using `b` must be rebuilt
    third = dycl.compile(model, branchy.example_inputs())
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
    dycl.compile(model, branchy.example_inputs())
    assert dycl.compile(model, branchy.example_inputs()).report.cache_hits == 3
    monkeypatch.setattr(build_cache, "_VERSIONS", None)
    monkeypatch.setattr(build_cache, "_source_digest", lambda: "edited-sources")
    assert dycl.compile(model, branchy.example_inputs()).report.cache_hits == 0
