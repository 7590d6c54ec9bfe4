"""backend="auto": per sub-DNN, the fastest backend that is clearly faster, measured."""

import json

import pytest
import torch
from torch import fx, nn

import dycl
from dycl.backends import auto
from dycl.backends.auto import candidates_for, decide


def _rounds(*values):
    return list(values) * 5


def test_a_clear_winner_replaces_the_cheaper_backend():
    choice = decide({"torch": _rounds(10e-6, 11e-6, 10e-6), "onnxruntime": _rounds(4e-6, 5e-6, 4e-6)})
    assert choice.backend == "onnxruntime"
    assert choice.reason.startswith("onnxruntime: 2.") and "in 15 of 15 rounds" in choice.reason
    assert choice.timings_us == {"torch": 10.0, "onnxruntime": 4.0}


def test_a_difference_within_noise_keeps_the_cheaper_backend():
    # Faster in the median, but only in half of the rounds: not a real difference.
    choice = decide({"torch": _rounds(10e-6, 10e-6, 4e-6), "onnxruntime": _rounds(4e-6, 11e-6, 11e-6)[:15]})
    assert choice.backend == "torch"
    assert choice.reason == "torch: the cheapest to build"


def test_a_small_margin_does_not_switch():
    choice = decide({"onnxruntime": _rounds(10e-6), "tvm": _rounds(9.7e-6)})
    assert choice.backend == "onnxruntime"


def test_a_candidate_is_timed_only_after_torch_s_threads_stop_spinning():
    # Eager torch's OpenMP workers spin on after a parallel op: ONNX Runtime timed right
    # after it ran 3-4x slower than alone, and auto kept torch for convolutions.
    import time

    events = []

    def runner(name):
        return lambda: events.append((name, time.perf_counter()))

    auto.interleaved_timings({"torch": runner("torch"), "onnxruntime": runner("onnxruntime")}, rounds=4)
    gaps = [b[1] - a[1] for a, b in zip(events, events[1:]) if a[0] == "torch" and b[0] != "torch"]
    assert len(gaps) >= 3 and min(gaps) >= auto.SETTLE_SECONDS


def test_every_backend_is_a_candidate_on_the_cpu_and_tvm_alone_on_cuda():
    """Convolutions included: with dycl's default CPU schedules (tvm_cpu_schedule) TVM's
    3x3 convolutions run ahead of ONNX Runtime on small feature maps (blockdrop's
    blocks: auto picked TVM for three of them), so they are measured, not ruled out."""
    conv = fx.symbolic_trace(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()))
    linear = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4)))
    assert candidates_for(conv, "llvm")[0] == ["torch", "onnxruntime", "tvm"]
    assert candidates_for(linear, "llvm")[0] == ["torch", "onnxruntime", "tvm"]
    assert candidates_for(linear, "cuda")[0] == ["tvm"]


@pytest.mark.slow
def test_auto_is_the_default_and_says_why(branchy, monkeypatch):
    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs())
    manifest = json.loads((cm.path / "manifest.json").read_text())
    for info in manifest["subgraphs"].values():
        assert info["backend"] in ("torch", "onnxruntime", "tvm")
        assert info["why"].startswith(info["backend"] + ":")
    with torch.no_grad():
        for s in range(8):
            x = torch.randn(1, 16, generator=torch.Generator().manual_seed(s)) * 3
            assert torch.allclose(cm(x), model(x), atol=1e-5)

    # A recompile reuses the decisions: nothing is measured again.
    def no_measuring(*a, **k):
        raise AssertionError("measured again")

    monkeypatch.setattr(auto, "interleaved_timings", no_measuring)
    import dycl.passes.assign_backends as ab

    monkeypatch.setattr(ab, "interleaved_timings", no_measuring)
    again = dycl.compile(model, branchy.example_inputs())
    assert {k: v["backend"] for k, v in again.subgraphs.items()} == {k: v["backend"] for k, v in cm.subgraphs.items()}


@pytest.mark.slow
def test_a_backend_that_fails_to_build_falls_down_the_chain(branchy, monkeypatch, capsys, tmp_path):
    from dycl.backends.tvm import TvmBackend

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path))  # no earlier TVM build to reuse
    def broken(self, spec, target, out_dir):
        raise RuntimeError("LLVM module verification failed")

    monkeypatch.setattr(TvmBackend, "build", broken)
    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert {v["backend"] for v in cm.subgraphs.values()} == {"onnxruntime"}
    assert "tvm cannot compile it (RuntimeError: LLVM module verification failed); trying onnxruntime" in (
        capsys.readouterr().err)
    x = torch.randn(1, 16)
    with torch.no_grad():
        assert torch.allclose(cm(x), model(x), atol=1e-5)


class MaxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = torch.relu(self.fc(x)).view(1, 4, 2).amax(dim=2)  # ONNX Runtime's ReduceMax drops NaN
        if h.sum() > 0:
            return h * 2
        return h - 1


@pytest.mark.slow
def test_auto_never_picks_a_backend_that_drops_nan(tmp_path, monkeypatch):
    """Whatever auto picks keeps eager's NaN/inf (TVM's and ONNX Runtime's max kernels
    are patched to); a candidate that still drops NaN is never chosen."""
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = MaxHead().eval()
    cm = dycl.compile(model, [torch.randn(1, 4)])
    with torch.no_grad():
        for special in (float("nan"), float("inf"), float("-inf")):
            for k in range(4):
                x = torch.randn(1, 4)
                x[0, k] = special
                want, got = model(x), cm(x)
                assert torch.equal(want.isnan(), got.isnan()) and torch.equal(want.isinf(), got.isinf())
                fin = want.isfinite()
                assert torch.allclose(want[fin], got[fin], atol=1e-5)
