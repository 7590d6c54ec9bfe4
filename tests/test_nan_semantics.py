"""NaN and ±inf in the inputs give what eager torch gives, on every backend (issue #13).

TVM's `max`/`min` lower to `select(a > b, a, b)`, which drops NaN (relu, clip,
max-pool, max/min reductions, argmax) and starts reductions from the lowest finite
value instead of -inf; dycl.backends.tvm.keep_nan rewrites those ops.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import dycl

BACKENDS = ["tvm", "onnxruntime", "torch", "inductor"]
# "onnxruntime-guarded": every wrapped node behind its `If` (large inputs take the
# exact nodes only when they hold a NaN or an infinity; these inputs are small).
VARIANTS = [*BACKENDS, "onnxruntime-guarded"]
NAN, INF = float("nan"), float("inf")
OUTPUTS = ["relu", "max_pool_padded", "conv_bn_relu_pool", "linear", "softmax", "mean", "sum", "adaptive_avg_pool",
           "clamp", "relu6", "hardtanh", "max_dim_values", "max_dim_indices", "max", "min", "maximum", "argmax", "argmin"]
# ONNX Runtime's MaxPool, ReduceMax/Min and ArgMax/Min kernels skip NaN; dycl wraps
# them in the exported graph (dycl/backends/onnx_nan.py), so nothing is exempt.
ORT_DIVERGES: set[str] = set()


class Ops(nn.Module):
    """One sub-DNN holding the ops whose TVM kernels dropped NaN, and their neighbours."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(64, 8)

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        h = self.fc(torch.flatten(y, 1))
        return (
            torch.relu(x),
            F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
            y,
            h,
            torch.softmax(h, -1),
            x.mean(dim=(2, 3)),
            x.sum(),
            F.adaptive_avg_pool2d(x, 1),
            x.clamp(-1.0, 1.0),
            F.relu6(x),
            F.hardtanh(x),
            torch.max(x, 3)[0],
            torch.max(x, 3)[1],
            x.max(),
            x.min(),
            torch.maximum(x, torch.zeros_like(x)),
            torch.argmax(x.flatten(1), 1),
            torch.argmin(x.flatten(1), 1),
        )


def _inputs():
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    cases = {}
    for name, value in (("nan", NAN), ("inf", INF), ("-inf", -INF)):
        one = x.clone()
        one[0, 1, 2, 3] = value
        cases[f"one {name}"] = one
        cases[f"all {name}"] = torch.full_like(x, value)
    one = x.clone()  # NaN and inf together: a NaN must win over the inf
    one[1, 0, 0, 0], one[1, 0, 0, 1] = INF, NAN
    cases["nan and inf"] = one
    return x, cases


EXAMPLE, CASES = _inputs()


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = Ops().eval()
    with torch.no_grad():  # a non-trivial batch norm
        m.bn.running_mean.uniform_(-0.5, 0.5)
        m.bn.running_var.uniform_(0.5, 2.0)
    return m


@pytest.fixture(scope="module", params=VARIANTS)
def compiled(request, model, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"nan-{request.param}")
    backend, _, guarded = request.param.partition("-")
    with pytest.MonkeyPatch.context() as mp:
        if guarded:
            from dycl.backends import onnx_nan

            mp.setattr(onnx_nan, "GUARD_MIN_ELEMENTS", 1)
            mp.setenv("DYCL_CACHE_DIR", str(tmp_path_factory.mktemp("nan-cache")))  # not the other variant's build
        return dycl.compile(model, [EXAMPLE], backend=backend, out_dir=out)


def assert_same_specials(want, got, what):
    got = torch.as_tensor(got)
    assert got.shape == want.shape, what
    if not want.is_floating_point():
        assert torch.equal(got.to(want.dtype), want), what
        return
    assert torch.equal(got.isnan(), want.isnan()), f"{what}: NaN positions differ"
    assert torch.equal(got == INF, want == INF) and torch.equal(got == -INF, want == -INF), f"{what}: inf differs"
    torch.testing.assert_close(got.to(want.dtype), want, rtol=1e-4, atol=1e-4, equal_nan=True, msg=what)


def _checked(backend):
    return [i for i, name in enumerate(OUTPUTS) if not (backend == "onnxruntime" and name in ORT_DIVERGES)]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_special_values_match_eager(model, compiled, case):
    x = CASES[case]
    with torch.no_grad():
        want = model(x)
    got = compiled(x)
    assert len(got) == len(want) == len(OUTPUTS)
    for i in _checked(compiled.subgraphs["sub_0"]["backend"]):
        assert_same_specials(want[i], got[i], f"{case}: {OUTPUTS[i]}")


@pytest.mark.slow
def test_ordinary_inputs_still_match(model, compiled):
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = model(x)
    got = compiled(x)
    for i in range(len(OUTPUTS)):
        assert_same_specials(want[i], got[i], OUTPUTS[i])


class HostIntPastInt64(nn.Module):
    """A host number computed past int64 (`int(x.sum()) * 2 ** 40`) handed to a sub-DNN."""

    def forward(self, x):
        n = int(x.sum())
        return x + n * 2 ** 40


@pytest.mark.parametrize("backend", ["torch", "onnxruntime", "tvm"])
def test_a_host_int_past_int64_raises_eagers_overflow_error(backend):
    """numpy made an object array of it: a TypeError (torch), ONNX Runtime's
    INVALID_ARGUMENT about a string tensor, where eager raises OverflowError."""
    model = HostIntPastInt64()
    cm = dycl.compile(model, [torch.tensor([1, 2])], backend=backend)
    x = torch.tensor([10 ** 12, 0])
    with pytest.raises(OverflowError, match="int too big to convert"):
        model(x)
    with pytest.raises(OverflowError, match="int too big to convert"):
        cm(x)
    assert torch.equal(cm(torch.tensor([3, 4])), model(torch.tensor([3, 4])))
