"""Helpers the way model code calls them: submodule forwards, methods with
compile-time settings, helpers whose body reads or changes what lives outside the
call, results a caller writes through or tests for None."""

import torch
from torch import nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, c)

    def forward(self, x, scale=1.0):
        return F.relu(self.fc(x)) * scale + x


class Helpers(nn.Module):
    """Standalone helpers: each becomes a function; `_head(x, k)` one per `k`."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block(4) for _ in range(3))
        self.out = nn.Linear(4, 2)

    def _head(self, x, k):
        return self.out(x) * k, k + 1

    @staticmethod
    def _gate(x):
        return x.mean() > 0

    def forward(self, x):
        for i, b in enumerate(self.blocks):
            x = b(x, scale=0.5 * i)
            if self._gate(x):
                y, n = self._head(x, 2)
                return y + n
        y, n = self._head(x, 3)
        return y - n


class CountingHelper(nn.Module):
    """A helper that changes module state: the count must be eager's after each call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

    def _step(self, x):
        self.calls += 1
        return torch.tanh(self.fc(x))

    def forward(self, x):
        h = self._step(x)
        if h.sum() > 0:
            h = self._step(h)
        return h * self.calls


class ViewOfArgument(nn.Module):
    """`first(x)` returns a view of its argument; the caller's `r += 1` changes x too."""

    def _first(self, x):
        return x[0]

    def forward(self, x):
        r = self._first(x)
        r += 1
        return r + x[0]


class MaybeNone(nn.Module):
    """A helper that returns None on one path; the caller tests for it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def _pick(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return None

    def _combine(self, x, extra):
        if extra is None:
            return x * 2
        return x + extra

    def forward(self, x):
        r = self._pick(x)
        if r is None:
            r = -x
        extra = x if x.mean() > 0.5 else None
        return self._combine(r, extra)


class InPlaceOnArgument(nn.Module):
    """A helper that updates its argument in place: the caller sees the change."""

    def _bump(self, t):
        t.add_(1)
        return t.sum()

    def forward(self, x):
        y = x * 2
        s = self._bump(y)
        return y, s


class ReturnsBuffer(nn.Module):
    """A helper returning a module tensor: a write through the result is a write to the buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(4.0))

    def _row(self, x):
        return self.table

    def forward(self, x):
        return self._row(x) + x


class AliasedResults(nn.Module):
    """Two results sharing storage (`h, h.t()`): a write through one changes the other."""

    def _two(self, x):
        h = x * 1
        return h, h.t()

    def forward(self, x):
        a, b = self._two(x)
        b.add_(1)
        return a


class Closures(nn.Module):
    """A nested function over a free tensor and a submodule, with a default; a lambda;
    both called at several sites, one inside a branch."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        scale = x.mean()

        def mix(u, k=2.0):
            return torch.tanh(self.lin(u) * k + scale)

        act = lambda v: torch.relu(v) - 0.5  # noqa: E731
        h = act(mix(x)) + mix(x, 3.0)
        if h.sum() > 0:
            return act(mix(h))
        return mix(h, k=3.0)


class ClosureOverAChangingName(nn.Module):
    """A free name rebound between calls: each call reads its binding at that call."""

    def forward(self, x):
        step = x.sum()

        def add(u):
            return u + step

        a = add(x)
        step = x.max()
        b = add(x)
        if b.mean() > 0:
            step = step * 2
        return a, add(b)


class ClosureWritesAFreeTensor(nn.Module):
    """A nested function updating a free tensor in place: the caller's name changes."""

    def forward(self, x):
        acc = x * 1

        def bump(u):
            acc.add_(u)
            return u * 2

        y = bump(x)
        return acc + y
