"""`jobs > 1`: sub-DNNs built in worker processes give the same artifact as a serial build."""

import json

import pytest
import torch

import dycl
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow


def test_parallel_build_matches_serial_and_eager(monkeypatch, tmp_path):
    import skipnet

    monkeypatch.setenv("DYCL_CACHE_DIR", "off")  # every sub-DNN really built, in both compiles
    model = skipnet.make_model()
    serial = dycl.compile(model, skipnet.example_inputs(), backend="tvm", out_dir=tmp_path / "serial")
    parallel = dycl.compile(model, skipnet.example_inputs(), backend="tvm", out_dir=tmp_path / "parallel", jobs=2)
    manifests = [json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("serial", "parallel")]
    assert manifests[0]["subgraphs"] == manifests[1]["subgraphs"]
    assert len(manifests[1]["subgraphs"]) > 2
    assert parallel.report.deduplicated == serial.report.deduplicated
    with torch.no_grad():
        for x in skipnet.branch_inputs().values():
            assert max_abs_error(model(*x), parallel(*x)) <= 1e-5
            assert max_abs_error(serial(*x), parallel(*x)) == 0.0


def test_parallel_build_falls_back_per_sub_dnn(monkeypatch):
    """A backend error in a worker gives the same note and next-in-chain fallback as in-process."""
    from test_backend_onnxruntime import UsesSvd

    monkeypatch.setenv("DYCL_CACHE_DIR", "off")
    model = UsesSvd().eval()
    cm = dycl.compile(model, [torch.randn(4, 4)], backend="onnxruntime", jobs=2)
    backends = {name: s["backend"] for name, s in cm.subgraphs.items()}
    assert set(backends.values()) == {"inductor", "onnxruntime"}, backends  # onnxruntime -> inductor
    assert any("could not be exported to ONNX" in note and "svdvals" in note for note in cm.report.fallbacks)
    with torch.no_grad():
        for x in (torch.randn(4, 4) * 10, torch.zeros(4, 4)):
            assert max_abs_error(model(x), cm(x)) <= 1e-5


def test_auto_builds_its_candidates_in_workers(branchy, monkeypatch, tmp_path):
    """With jobs > 1 every candidate (ONNX Runtime, TVM) of every sub-DNN is built in
    a worker process: a build in this process fails the test. The measuring and the
    final build then find them in the build cache."""
    from dycl.backends.onnxruntime import OnnxRuntimeBackend
    from dycl.backends.tvm import TvmBackend

    def in_process(*a, **k):
        raise AssertionError("a candidate was built in the compiling process")

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(TvmBackend, "build", in_process)
    monkeypatch.setattr(OnnxRuntimeBackend, "build", in_process)
    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs(), jobs=2, out_dir=tmp_path / "a")
    for info in json.loads((tmp_path / "a" / "manifest.json").read_text())["subgraphs"].values():
        assert "failed" not in info["why"], info
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


class _Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return h * 2 if h.sum() > 0 else h - 1


def test_the_chains_notes_are_said_once_per_model(monkeypatch, capsys, tmp_path):
    """A compile for new input sizes (or again) meets the same backend failures: their
    notes were printed again each time (55 lines for two models under ONNX Runtime)."""
    from dycl.backends.tvm import TvmBackend

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path))

    def broken(self, spec, target, out_dir):
        raise RuntimeError("no kernel for this op")

    monkeypatch.setattr(TvmBackend, "build", broken)
    model = _Gate()
    cm = dycl.compile(model, (torch.randn(2, 4),), backend="tvm")
    note = "tvm cannot compile it (RuntimeError: no kernel for this op); trying onnxruntime"
    assert capsys.readouterr().err.count(note) == len(cm.subgraphs) > 0
    dycl.compile(model, (torch.randn(3, 4),), backend="tvm")
    assert note not in capsys.readouterr().err
    dycl.compile(_Gate(), (torch.randn(2, 4),), backend="tvm")  # another model: said again
    assert capsys.readouterr().err.count(note) == len(cm.subgraphs)
