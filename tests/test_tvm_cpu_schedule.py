"""dycl's default CPU schedules for TVM (dycl/backends/tvm_cpu_schedule.py): each kernel
gives bit-for-bit the values of TVM's unscheduled build (NaN and inf included), and the
kernels that should be vectorized are."""

import os
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

tvm = pytest.importorskip("tvm")

from tvm import relax  # noqa: E402

from dycl.backends.tvm import keep_nan  # noqa: E402
from dycl.backends.tvm_cpu_schedule import cpu_pipeline, rules  # noqa: E402


class Relu(nn.Module):
    def forward(self, x, p):
        return torch.relu(x), p[0, 1] > 0.5


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(64, 48), nn.Linear(48, 10)

    def forward(self, x, p):
        return torch.softmax(self.b(torch.tanh(self.a(x))), -1), x.sum() > 0


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)

    def forward(self, x, p):
        return F.relu(self.bn(self.conv(x)) + x), F.max_pool2d(x, 2)


class Shortcut(nn.Module):
    """BlockDrop's parameter-free shortcut: pool, zero-pad the channels."""

    def forward(self, x, p):
        y = F.avg_pool2d(x, 2)
        return F.relu(torch.cat([y, y.mul(0)], 1)), x.mean(dim=(2, 3))


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell, self.out = nn.LSTMCell(24, 32), nn.Linear(32, 12)

    def forward(self, x, p):
        h, c = self.cell(x[0])
        return self.out(h).argmax(-1), torch.where(c > 0, c, p.sum()), x.flip(-1)[:, 1::2]


class UnitReduction(nn.Module):
    """A matmul over k = 1 with an epilogue: dlight calls the matmul block injective
    (its k loop has extent 1) and the epilogue was inlined into its init and update
    both: every value wrong."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 128, bias=False)

    def forward(self, x, p):
        return torch.sigmoid(self.lin(x)) * x.sum(-1, keepdim=True), p


class Downsample(nn.Module):
    """A ResNet downsampling block: the stride-2 conv's window loads are strided vectors."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16)

    def forward(self, x, p):
        return F.relu(self.bn(self.conv(x))), F.avg_pool2d(x, 3, stride=2)


CASES = {
    "unit_reduction": (UnitReduction(), (3, 1)),
    "downsample": (Downsample(), (1, 8, 16, 16)),
    "relu": (Relu(), (1, 8, 32, 32)),
    "mlp": (Mlp(), (1, 64)),
    "conv": (ConvBlock(), (1, 8, 16, 16)),
    "shortcut": (Shortcut(), (1, 8, 16, 16)),
    "recurrent": (Recurrent(), (1, 1, 24)),
}


def _inputs(shape, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g)
    if kind == "nonfinite":  # NaN, +inf and -inf scattered through the input
        flat = x.view(-1)
        flat[::7] = float("nan")
        flat[3::11] = float("inf")
        flat[5::13] = float("-inf")
    return x, torch.rand(1, 6, generator=g)


def _run(mod, tgt, pipeline, args):
    ex = tvm.compile(mod, tgt, relax_pipeline=pipeline)
    out = relax.VirtualMachine(ex, tvm.cpu())["main"](*[tvm.runtime.from_dlpack(a) for a in args])
    return [out[i].numpy() for i in range(len(out))] if not isinstance(out, tvm.runtime.Tensor) else [out.numpy()]


@pytest.fixture(scope="module")
def target():
    from dycl.backends.base import Target
    from dycl.backends.tvm import tvm_target

    return tvm_target(Target.parse("llvm"))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_scheduled_kernels_give_the_unscheduled_bits(name, target):
    model, shape = CASES[name]
    model.eval()
    example = _inputs(shape, "finite")
    from tvm.relax.frontend.torch import from_exported_program

    mod = keep_nan(from_exported_program(torch.export.export(model, example)))
    for kind in ("finite", "nonfinite"):
        args = _inputs(shape, kind)
        plain = _run(mod, target, relax.get_default_pipeline(target), args)
        scheduled = _run(mod, target, cpu_pipeline(target), args)
        for a, b in zip(plain, scheduled):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a, b, equal_nan=True), f"{name}, {kind} inputs"


def _scheduled_tir(model, shape, target) -> str:
    from tvm.relax.frontend.torch import from_exported_program
    from tvm.relax.backend.cpu_generic import pipeline as cpu
    from tvm.s_tir import dlight as dl

    mod = keep_nan(from_exported_program(torch.export.export(model.eval(), _inputs(shape, "finite"))))
    with target:
        mod = tvm.transform.Sequential(cpu.legalize_passes(target) + [dl.ApplyDefaultSchedule(*rules())])(mod)
    return "\n".join(f.script() for _, f in mod.functions_items() if not isinstance(f, relax.Function))


class _First(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, p):
        return self.inner(x)


ALONE = {  # one kernel each: a vector loop in it is the reduction's own
    "matmul": (nn.Linear(64, 48, bias=False), (1, 64)),
    "conv": (nn.Conv2d(8, 8, 3, padding=1, bias=False), (1, 8, 16, 16)),
    "stride2_conv": (nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), (1, 8, 16, 16)),
}


@pytest.mark.parametrize("name", ["relu", "matmul", "conv", "stride2_conv"])
def test_elementwise_matmul_and_conv_kernels_are_vectorized(name, target):
    """The relu with its NaN check is one loop (not three through intermediate buffers),
    and it, the matmul and the 3x3 convolutions (stride 1 and 2) each have a vector loop."""
    model, shape = ALONE[name] if name in ALONE else CASES[name]
    if name in ALONE:
        model = _First(model)
    tir = _scheduled_tir(model, shape, target)
    assert "T.vectorized" in tir
    if name in ALONE:  # the reduction's update itself (a padding block's loop would not count)
        assert re.search(r"T\.vectorized\(.*\n\s*with T\.sblock\(\"\w*_update\"\)", tir), tir
    if name == "relu":
        assert "sblock_alloc_buffer" not in tir  # isnan, max and where fused into one pass


class MulAdd(nn.Module):
    def forward(self, x, p):
        return x * 1.5 + 0.2, (x - 0.3) * p.sum() + x * x


@pytest.mark.slow
def test_multiply_add_rounds_twice_as_eager(target):
    """One fused loop `x * 1.5 + 0.2` must not become a fused multiply-add (rounded
    once): with FMA on, 28% of these elements differed from eager in the last bit."""
    from tvm.relax.frontend.torch import from_exported_program

    args = _inputs((1, 4096), "finite")
    mod = from_exported_program(torch.export.export(MulAdd(), args))
    got = _run(mod, target, cpu_pipeline(target), args)
    for a, b in zip(got, MulAdd()(*args)):
        assert np.array_equal(a, b.numpy())


class EmptyReductions(nn.Module):
    """Reductions over a dimension that is 0 at run time (`order[:k]` with k = 0)."""

    def forward(self, idx, x):
        ok = ((idx >= 0) & (idx < 6)).all()
        f = idx.float()
        return ok, f.sum(), f.prod(), x.sum(0), torch.all(x > 0, dim=0), x.mean(0)


def test_reductions_over_an_empty_dynamic_dimension_give_eagers_values(tmp_path):
    """TIR runs a reduction's init inside its loop (`if k == 0`): with no iteration the
    output kept whatever its buffer held, a different sum each call (an index-bounds
    check's `all()` said out of range on the first call after a build, found by a
    probe); and TVM imports `all` as `not max(int8(not t))` from -128, False for an
    empty tensor. Inits now come before the loops; `all` counts the false elements."""
    from dycl.backends.base import SubgraphSpec, Target
    from dycl.backends.tvm import TvmBackend
    from dycl.runtime.loaders.tvm import load

    model = EmptyReductions()
    gm = torch.fx.symbolic_trace(model)
    spec = SubgraphSpec("sub_e", gm, [torch.tensor([1, 2, 3]), torch.randn(5, 6)], dynamic=((0, 0), (1, 0)))
    run = load(str(tmp_path / TvmBackend().build(spec, Target(), tmp_path)), {"kind": "llvm"})
    for idx, x in [(torch.zeros(0, dtype=torch.long), torch.randn(0, 6))] * 4 + [(torch.tensor([1, 7]), torch.randn(3, 6))]:
        torch.randn(4096)  # (other allocations between the calls)
        want = model(idx, x)
        got = [torch.from_dlpack(t) if not isinstance(t, torch.Tensor) else t for t in run(idx, x)]
        for w, g in zip(want, got):
            assert torch.equal(w, g) or torch.allclose(w, g, equal_nan=True), (idx, w, g)


def test_a_gather_builds_without_tvms_fast_mode_warning_on_stderr(capfd):
    # (TVM logs it from C++ for every gather; the host checks those indices itself)
    from dycl.backends.tvm import _without_take_warning

    class Embed(nn.Module):
        def forward(self, w, ids):
            return torch.index_select(w, 0, ids) * 2

    ep = torch.export.export(Embed(), (torch.randn(5, 3), torch.tensor([0, 4])))
    from tvm.relax.frontend.torch import from_exported_program

    mod = from_exported_program(ep)
    target = tvm.target.Target("llvm")
    with _without_take_warning():
        os.write(2, b"other output\n")
        tvm.compile(mod, target, relax_pipeline=cpu_pipeline(target))
    err = capfd.readouterr().err
    assert "Fast mode segfaults" not in err and "other output" in err
