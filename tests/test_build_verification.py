"""Every build is checked against its sub-DNN's own torch graph before use
(dycl/backends/verify_build.py): backends that differ from eager on ordinary or
special inputs hand the sub-DNN on, and the compiled model equals eager. Each case
here was a silent wrong answer of some backend."""

import dataclasses
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import dycl

pytestmark = pytest.mark.slow


class Alpha(nn.Module):  # TVM 0.27 dropped alpha
    def forward(self, x, y):
        return torch.sub(x, y, alpha=2), torch.add(x, y, alpha=3)


class FloorDivide(nn.Module):  # ONNX's Div truncates
    def forward(self, x):
        b = (x * 10).long()
        return b // 3, x // 2, torch.floor_divide(b, -3)


class IntTimesFloat(nn.Module):  # TVM kept the integer dtype
    def forward(self, x):
        i = (x * 10).to(torch.int32)
        return i * 1.5 + 0.25, i / 4


class NanChecks(nn.Module):  # TVM simplified x != x to false
    def forward(self, x):
        h = x * 2
        return torch.where(h != h, torch.zeros_like(h), h), (h == h).all(), x * 0


class RightShift(nn.Module):  # ONNX shifted negative integers logically
    def forward(self, i):
        return i >> 1


class HalfCast(nn.Module):  # Inductor kept float32 through .half()
    def forward(self, x):
        return x.half().float() + x, x.to(torch.bfloat16).float()


class TopkOfTiedScores(nn.Module):  # ONNX Runtime's TopK picks other tied positions
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 1)

    def forward(self, x):
        return torch.topk(self.router(x).squeeze(-1), 3, dim=1).indices


def _inputs(name):
    x = torch.tensor([[-1.05, -0.2, 0.5, -2.0], [1.3, -0.77, 2.5, 0.01]])
    special = x.clone()
    special[0, 0], special[1, 1] = float("nan"), float("inf")
    if name == "Alpha":
        return [[x, torch.ones(2, 4)], [special, x]]
    if name == "RightShift":
        return [[torch.tensor([[-7, -1, 7, -8]])]]
    if name == "TopkOfTiedScores":  # identical rows (padding): every score ties
        return [[torch.randn(2, 6, 4)], [torch.ones(2, 6, 4)]]
    return [[x], [special]]


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    b = torch.as_tensor(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if not a.is_floating_point():
        return torch.equal(a, b)
    return torch.equal(a.isnan(), b.isnan()) and torch.allclose(a.nan_to_num(), b.nan_to_num(), atol=1e-6)


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
@pytest.mark.parametrize("cls", [Alpha, FloorDivide, IntTimesFloat, NanChecks, RightShift, TopkOfTiedScores])
def test_builds_that_differ_from_their_torch_graph_are_not_used(cls, backend):
    model = cls().eval()
    cases = _inputs(cls.__name__)
    cm = dycl.compile(model, cases[0], backend=backend, fallback="error")
    for args in cases:
        assert _same(model(*args), cm(*args)), (cls.__name__, backend, args)


def test_inductor_rounds_casts_as_eager():
    model = HalfCast().eval()
    x = torch.tensor([[-1.2, 0.1, 3.3775, 7.0001]])
    cm = dycl.compile(model, [x], backend="inductor", fallback="error")
    assert {s["backend"] for s in cm.subgraphs.values()} == {"inductor"}  # correct by itself, not by fallback
    assert _same(model(x), cm(x))


class Gelu(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x * 2) + 1


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_special_values_eager_leaves_implementation_defined(backend):
    """At +inf eager's vectorised GELU gives NaN, its scalar kernel and its formula
    inf: the answer depends on the tensor's length. A backend giving inf is
    eager-faithful and keeps the sub-DNN (all of a transformer's FFNs went to torch
    before); elsewhere the backend still equals eager."""
    model = Gelu().eval()
    x = torch.tensor([[-1.05, -0.2, 0.5, -2.0, 1.3, -0.77, 2.5, 0.01]])
    cm = dycl.compile(model, [x], backend=backend, fallback="error")
    assert cm.report.fallbacks == [] and {s["backend"] for s in cm.subgraphs.values()} == {backend}
    assert _same(model(x), cm(x))
    special = x.clone()
    special[0, 0], special[0, 3] = float("inf"), float("-inf")
    got = cm(special)
    assert torch.isnan(model(special)[0, 0])  # eager's vectorised kernel
    assert got[0, 0] == model(special[:, :1])[0, 0] == float("inf")  # eager's scalar kernel
    assert _same(model(special)[:, 1:], got[:, 1:])


class GeluGate(nn.Module):
    def forward(self, x):
        y = torch.nn.functional.gelu(x * 2)
        return y, (y > 0).sum()


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_a_count_of_an_implementation_defined_value_may_be_the_reference_s(backend):
    """A count over GELU's output differs where GELU does at +inf (eager's NaN is not
    > 0, the formula's inf is): on a NaN/inf probe, a non-float output equal to torch's
    reference math's is accepted too (such sub-DNNs went to the torch backend)."""
    model = GeluGate().eval()
    x = torch.tensor([[-1.05, -0.2, 0.5, -2.0, 1.3, -0.77, 2.5, 0.01]])
    cm = dycl.compile(model, [x], backend=backend, fallback="error")
    assert {s["backend"] for s in cm.subgraphs.values()} == {backend}
    assert all(_same(a, b) for a, b in zip(model(x), cm(x)))


@dataclasses.dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor
    pooled: torch.Tensor


class DataclassOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return EncoderOutput(h, h.mean(0))


def test_dataclass_outputs_hold_torch_tensors():
    torch.manual_seed(0)
    model = DataclassOut().eval()
    x = torch.randn(2, 4)
    out = dycl.compile(model, [x], backend="tvm")(x)
    assert isinstance(out, EncoderOutput)
    assert type(out.last_hidden_state) is torch.Tensor and type(out.pooled) is torch.Tensor
    with torch.no_grad():
        assert torch.allclose(out.last_hidden_state, model(x).last_hidden_state, atol=1e-6)


class ViewBySize(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] * 2, 4)[-1]


def test_a_build_no_probe_can_check_is_not_used():
    """The sub-DNN takes `2*b` as a scalar next to x; its example inputs did not fit
    together, the torch graph raised on every probe, and the unchecked TVM build
    returned garbage at every batch size."""
    model = ViewBySize()
    cm = dycl.compile(model, (torch.randn(3, 8),), backend="tvm", signature="b x 8 x f32", dims=["b=1..16"])
    for b in (1, 3, 5):
        x = torch.arange(b * 8, dtype=torch.float32).reshape(b, 8)
        assert torch.equal(cm(x), model(x))


class EmptyCacheStart(torch.nn.Module):
    """A KV cache started empty (`torch.zeros(b, 0, d)`), then grown."""

    def forward(self, x):
        c = torch.zeros(x.shape[0], 0, 4)
        return torch.cat([c, x], 1) * 2


def test_a_build_its_runtime_cannot_load_goes_down_the_chain():
    """TVM builds the sub-DNN, but its 0-size constant cannot be loaded ("Invalid
    DLTensor file format"): that error escaped the backend chain and all of forward
    ran as Python (with fallback="error", a raw TVM InternalError; probe O)."""
    model = EmptyCacheStart()
    x = torch.randn(2, 3, 4)
    cm = dycl.compile(model, [x], backend="tvm", fallback="error")
    assert torch.equal(cm(x), model(x))
    assert any("cannot be loaded or run" in note for note in cm.report.fallbacks)


class BeamStep(nn.Module):
    def forward(self, scores):
        return scores.view(scores.shape[0], -1).topk(3, -1).indices


def test_probes_keep_a_size_input_equal_to_its_tensors_size():
    """`scores.view(scores.shape[0], -1)` with a symbolic batch: the host passes the
    size in, and the probes gave it 1 against a batch of 32, so the equal-values probe
    ranked 480 ties where the model ranks 15 and passed ONNX Runtime's other tie order
    (found by a probe: [0, 1, 2] for eager's [9, 10, 11] on every call)."""
    model = BeamStep()
    cm = dycl.compile(model, (torch.randn(2, 3, 5),), backend="onnxruntime", dynamic=True)
    for b in (2, 7):
        x = torch.zeros(b, 3, 5)
        assert torch.equal(cm(x), model(x))


class IntegerReductions(nn.Module):
    def forward(self, x):
        if x[0] > 0:
            return x.sum(), x.prod(), x.sum(0, keepdim=True)
        return x.sum() * 2, x.prod(), x.cumsum(0)


def test_int64_reductions_stay_exact_past_53_bits():
    """ONNX Runtime reduces int64 in floating point: a sum past 2**53 was off by one
    and a product saturated where eager wraps; the build check's integers were small."""
    x = torch.tensor([2 ** 53 + 1, 2 ** 53 + 3, 5])
    model = IntegerReductions()
    cm = dycl.compile(model, (x,), backend="onnxruntime")
    for v in (x, -x):
        for got, want in zip(cm(v), model(v)):
            assert torch.equal(got, want)


class AbsMax(nn.Module):
    def forward(self, x):
        if x.float().sum() != 0:
            return x.abs().max()
        return x.max()


def test_the_smallest_integer_is_probed():
    """TVM's abs of INT_MIN then max gave INT_MIN (eager: abs wraps to INT_MIN, max
    is another element): probes held no extreme integers."""
    x = torch.tensor([torch.iinfo(torch.int32).min, -1, 5], dtype=torch.int32)
    cm = dycl.compile(AbsMax(), (x,), backend="tvm")
    assert cm(x).item() == AbsMax()(x).item() == 5


class MaxOfZeros(nn.Module):
    def forward(self, x, y):
        if x.sum() < 1:
            return 1.0 / torch.maximum(x, y), 1.0 / F.relu6(x)
        return x, y


def test_zeros_of_both_signs_are_probed():
    """Inductor's maximum(-0.0, 0.0) kept another zero than eager's: 1 / it was +inf
    for eager's -inf."""
    x, y = torch.tensor([-0.0, 0.0]), torch.tensor([0.0, -0.0])
    cm = dycl.compile(MaxOfZeros(), (x, y), backend="inductor")
    for got, want in zip(cm(x, y), MaxOfZeros()(x, y)):
        assert torch.equal(got, want)


def test_data_dependent_dimensions_are_probed_at_size_0_under_a_named_range():
    """`order[:k]` with k = 0 beside a batch declared b=1..64: the size-0 probe needs
    every dimension at 0, which the range refuses, so a build wrong on empty
    data-dependent sizes (TVM's reductions before dycl wrote their inits first) was
    never checked there. They get a probe of their own."""
    from dycl.backends.base import SubgraphSpec
    from dycl.backends.verify_build import _probes

    gm = torch.fx.symbolic_trace(lambda idx, x: (idx.float().sum(), x * 2))
    spec = SubgraphSpec("sub_p", gm, [torch.tensor([1, 2, 3]), torch.randn(5, 6)], dynamic=((0, 0), (1, 0)),
                        dynamic_names=("", "b"), name_ranges={"b": (1, 64)})
    probes = dict(_probes(spec))
    idx, x = probes["size 0 of its data-dependent dimensions"]
    assert idx.shape == (0,) and x.shape == (5, 6)
    assert "size 0 of its dynamic dimensions" not in probes



def _cancelling() -> nn.Module:
    """Two terms of the input's size that cancel to a 2**-20 of it (as convolution
    chains over a map holding -1e30 do, by chance, somewhere in a large map)."""
    net = nn.Sequential(nn.Linear(1, 2, bias=False), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[1.0], [1.0 + 2.0 ** -20]]))
        net[1].weight.copy_(torch.tensor([[1.0, -1.0]]))
    return net.eval()


def test_magnitude_probes_compare_builds_with_the_exact_answer():
    """On a -1e30 probe a convolution chain cancels terms of that size: another
    summation order gives other small values there. A build as near the graph's
    float64 answer as eager (relative to each output's largest value) is kept; where
    eager's own answer is rounding noise, nothing is held against the build. A wrong
    answer still is (SkipNet-38's recurrent blocks and Shallow-Deep MobileNet's
    went to eager torch so, and their whole programs could not be composed)."""
    from types import SimpleNamespace

    from dycl.backends.verify_build import _within_rounding

    net = torch.fx.symbolic_trace(_cancelling())
    spec = SimpleNamespace(graph_module=net)
    x, huge = torch.tensor([[0.7]]), torch.tensor([[-1e30]])
    with torch.no_grad():
        noise = [net(huge)]
        assert _within_rounding(spec, [huge], noise, [noise[0] * 3])  # eager's answer: noise
        want = [net(x)]
        assert _within_rounding(spec, [x], want, want)
        assert not _within_rounding(spec, [x], want, [want[0] + 1e-3])
        softplus = torch.fx.symbolic_trace(nn.Softplus())
        spec = SimpleNamespace(graph_module=softplus)
        wide = torch.tensor([[-1e30, 1e30, 2.0]])
        want = [softplus(wide)]
        assert _within_rounding(spec, [wide], want, want)
        assert not _within_rounding(spec, [wide], want, [torch.tensor([[0.0, float("inf"), 2.126928]])])
        assert not _within_rounding(spec, [wide], want, [torch.tensor([[0.0, 1e30, 0.0]])])


class _GuardedAttention(nn.Module):
    """Attention with a fully masked row (NaN out of softmax) and the usual guard."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.o = nn.Linear(16, 16)

    def forward(self, x, mask):
        B, T, H = x.size()
        q, k, v = self.qkv(x).chunk(3, -1)
        q = q.view(B, T, 2, 8).permute(0, 2, 1, 3)
        k = k.view(B, T, 2, 8).permute(0, 2, 3, 1)
        v = v.view(B, T, 2, 8).permute(0, 2, 1, 3)
        scores = torch.matmul(q, k) / 8 ** 0.5
        scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        probs = torch.softmax(scores, -1)
        if torch.isnan(probs).any():
            probs = probs.masked_fill(probs != probs, 0.0)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(B, T, H)
        return x + self.o(ctx)


def test_nan_is_probed_in_each_input_alone():
    """The guard's sub-DNN on TVM returned NaN for the masked row (its `p != p` lost),
    and passed: the NaN probe poisoned all five inputs at once, and NaN from the others
    hid the difference. Each input alone is probed too."""
    torch.manual_seed(0)
    model = _GuardedAttention().eval()
    x = torch.randn(2, 4, 16)
    cm = dycl.compile(model, [x, torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])], backend="tvm")
    mask = torch.tensor([[0, 0, 0, 0], [1, 1, 0, 0]])
    got, want = cm(x, mask), model(x, mask)
    assert not got.isnan().any() and torch.allclose(got, want, atol=1e-5)


def test_probes_that_end_the_process_fail_the_build_not_the_compile(monkeypatch, tmp_path):
    """AOTInductor's kernels assert their indices inside OpenMP regions: a probe that
    fits the torch graph but not the kernel's assumptions (a size input and a table
    resized apart from it) called std::terminate and killed the compile (SIGABRT,
    per-graph pooling with index_add_, bincount and scatter_reduce). Such backends'
    probes run in a child process, where a crash is a result."""
    from dycl.backends.isolated_probes import run_probes

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent / "models"))
    inputs = [[torch.tensor([0.5])], [torch.tensor([2.0])], [torch.tensor([1.0])], [torch.tensor([0.0])]]
    ok, error, crash = run_probes("aborting_loader:load", "aborting", tmp_path / "none", {"kind": "llvm"}, inputs)
    assert ok[0] == "ok" and torch.equal(ok[1][0], torch.tensor([1.0]))
    assert error == ("error", "ValueError", "two is refused")
    assert crash[0] == "crash" and "SIGABRT" in crash[1]


def test_inductor_builds_are_probed_in_a_child_process(monkeypatch):
    """check_build hands Inductor's probes to the child and reports a crash as the
    build's failure (the chain then takes the next backend)."""
    from dycl.backends import isolated_probes
    from dycl.backends.base import SubgraphSpec, Target
    from dycl.backends.verify_build import check_build

    seen = []

    def crashing(loader, backend, path, target, inputs):
        seen.append((loader, backend, len(inputs)))
        return [("ok", [torch.relu(inputs[0][0])]), ("crash", "it ended the process (SIGABRT: index out of bounds)")]

    monkeypatch.setattr(isolated_probes, "run_probes", crashing)
    gm = torch.fx.symbolic_trace(nn.Sequential(nn.ReLU()))
    why = check_build("inductor", SubgraphSpec("sub_0", gm, [torch.randn(2, 3)]), Path("/nonexistent"), "sub_0.pt2",
                      Target("llvm"))
    assert seen and seen[0][:2] == ("dycl.runtime.loaders.inductor:load", "inductor")
    assert why == "it ended the process (SIGABRT: index out of bounds) on larger values"
