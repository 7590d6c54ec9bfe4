"""The Inductor backend (AOTInductor packages): every path equals eager, artifacts reload
in a fresh process, and it is the chain's step between ONNX Runtime and eager torch."""

import subprocess
import sys

import pytest
import torch

import dycl
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def compiled(branchy, tmp_path_factory):
    model = branchy.make_model()
    out = tmp_path_factory.mktemp("inductor") / "art"
    return model, dycl.compile(model, branchy.example_inputs(), backend="inductor", out_dir=out)


def test_every_path_equals_eager(compiled, branchy):
    model, cm = compiled
    assert {v["backend"] for v in cm.subgraphs.values()} == {"inductor"}
    assert all(v["file"].endswith(".aoti.pt2") for v in cm.subgraphs.values())
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


def test_the_artifact_reloads_in_a_fresh_process(compiled, tmp_path):
    model, cm = compiled
    x = torch.randn(1, 16, generator=torch.Generator().manual_seed(1))
    torch.save(x, tmp_path / "x.pt")
    probe = (f"import torch, dycl\ncm = dycl.load({str(cm.path)!r})\n"
             f"torch.save(cm(torch.load({str(tmp_path / 'x.pt')!r})), {str(tmp_path / 'y.pt')!r})\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    with torch.no_grad():
        assert max_abs_error(model(x), torch.load(tmp_path / "y.pt")) <= 1e-5


def test_onnxruntime_failing_falls_to_inductor(branchy, monkeypatch, capsys, tmp_path):
    from dycl.backends.onnxruntime import OnnxRuntimeBackend

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path))

    def broken(self, spec, target, out_dir):
        raise RuntimeError("no kernel for this op")

    monkeypatch.setattr(OnnxRuntimeBackend, "build", broken)
    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs(), backend="onnxruntime")
    assert {v["backend"] for v in cm.subgraphs.values()} == {"inductor"}
    assert "onnxruntime cannot compile it (RuntimeError: no kernel for this op); trying inductor" in capsys.readouterr().err
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


def test_a_cuda_target_is_refused_with_a_reason():
    from dycl.backends.base import SubgraphSpec, Target
    from dycl.backends.inductor import InductorBackend
    from dycl.diagnostics import BackendError

    gm = torch.fx.symbolic_trace(torch.nn.Linear(2, 2))
    with pytest.raises(BackendError, match="builds for the CPU here"):
        InductorBackend().build(SubgraphSpec("sub_0", gm, [torch.randn(1, 2)]), Target("cuda", "sm_90"), None)
