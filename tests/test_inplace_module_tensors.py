"""In-place writes that reach a module's parameters or buffers, in the spellings
published code uses: the value the rest of forward reads, the state the next call
sees and the caller's view of the module equal eager's (these ran as Python but the
sub-DNNs after them read the old buffer, or the write never reached it)."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from torch import nn

import dycl

pytestmark = pytest.mark.slow


class _Buffered(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))


class ClassSpelledAdd(_Buffered):
    def forward(self, x):
        if x.sum() > 0:
            torch.Tensor.add_(self.buf, x)
        return self.buf * 2 + x


class LocalAlias(_Buffered):
    def forward(self, x):
        b = self.buf
        if x.sum() > 0:
            b.add_(x)
        return self.buf * 2 + x


class ViewWrite(_Buffered):
    def forward(self, x):
        v = self.buf.view(3)
        if x.sum() > 0:
            v[0] = x[0]
        return self.buf * 2 + x


class OutIntoBuffer(_Buffered):
    def forward(self, x):
        if x.sum() > 0:
            torch.add(x, 1, out=self.buf)
        return self.buf * 2 + x


class OutIntoData(_Buffered):
    def forward(self, x):
        if x.sum() > 0:
            torch.cumsum(x, 0, out=self.buf.data)
        return self.buf * 2 + x


class GetattrAdd(_Buffered):
    def forward(self, x):
        if x.sum() > 0:
            getattr(self, "buf").add_(x)
        return self.buf * 2 + x


@pytest.mark.parametrize("cls", [ClassSpelledAdd, LocalAlias, ViewWrite, OutIntoBuffer, OutIntoData, GetattrAdd])
def test_writes_to_module_tensors_match_eager_across_calls(cls):
    eager, compiled = cls(), cls()
    cm = dycl.compile(compiled, [torch.tensor([1.0, 2.0, 3.0])], backend="torch")
    for x in ([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0], [4.0, 5.0, 6.0]):
        x = torch.tensor(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a later call runs eager: the guard saw the buffer change)
            got = cm(x.clone())
        want = eager(x.clone())
        assert torch.equal(got, want), (cls.__name__, x, got, want)
        assert torch.equal(compiled.buf, eager.buf), (cls.__name__, x, compiled.buf, eager.buf)


class _ViewsOfFunctions(nn.Module):
    """A view made by one of these functions, written in a branch: the base changes too."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        h = x.clone()
        if self.kind == "broadcast_tensors":
            v = torch.broadcast_tensors(h, x)[0]
        elif self.kind == "unsafe_chunk":
            v = torch.unsafe_chunk(h, 2)[1]
        elif self.kind == "split_with_sizes":
            v = torch.split_with_sizes(h, [1, 1])[0]
        elif self.kind == "einsum":
            v = torch.einsum("ij->ji", h)
        else:
            v = torch.unsafe_split(h, 1)[0]
        if x.sum() > 0:
            v.mul_(10)
        return h


@pytest.mark.parametrize("kind", ["broadcast_tensors", "unsafe_chunk", "split_with_sizes", "unsafe_split", "einsum"])
def test_writes_through_views_of_these_functions_reach_the_base(kind):
    m = _ViewsOfFunctions(kind)
    cm = dycl.compile(copy.deepcopy(m), [torch.tensor([[1.0, 2.0], [3.0, 4.0]])], backend="torch")
    for x in (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), -torch.tensor([[1.0, 2.0], [3.0, 4.0]])):
        assert torch.equal(cm(x), m(x)), kind
