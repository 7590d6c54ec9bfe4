"""Indices from data: where eager raises (an embedding id past the table, a
negative `gather` index, ...), the compiled model raises the same exception
class on every backend and host, and never reads out of range (TVM read past the
table: garbage, a crash for a huge id; ONNX Runtime's Gather wrapped negative
ids). In-range indices, negative subscripts included, equal eager."""

from __future__ import annotations

import shutil

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import dycl


class Lookups(nn.Module):
    """An embedding, a gather, an index_select and a subscript, each fed by its own
    input, behind a data-dependent branch."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10)

    def forward(self, ids, x, g, sel, sub):
        h = self.emb(ids).mean(1)  # (1, 4)
        if h.sum() > 0:
            h = h * 2
        scores = self.head(h) + torch.gather(x, 1, g).sum() + x.index_select(1, sel).sum()
        again = self.emb(scores.argmax(-1))  # always in range: no check
        return scores + x[:, sub].sum(), again


GOOD = (torch.tensor([[1, 2, 3]]), torch.randn(1, 10), torch.tensor([[0, 9]]), torch.tensor([4, 5]),
        torch.tensor([-1, 3]))


def _bad_cases():
    """(what, inputs) where exactly one lookup is out of range."""
    ids, x, g, sel, sub = GOOD
    return [
        ("embedding past the table", (torch.tensor([[1, 2, 10]]), x, g, sel, sub)),
        ("embedding, negative", (torch.tensor([[1, -1, 3]]), x, g, sel, sub)),
        ("embedding, huge", (torch.tensor([[2**40, 0, 0]]), x, g, sel, sub)),
        ("gather past the row", (ids, x, torch.tensor([[0, 10]]), sel, sub)),
        ("gather, negative", (ids, x, torch.tensor([[-1, 0]]), sel, sub)),
        ("index_select", (ids, x, g, torch.tensor([4, 11]), sub)),
        ("subscript past the end", (ids, x, g, sel, torch.tensor([10, 0]))),
        ("subscript, too negative", (ids, x, g, sel, torch.tensor([-11, 0]))),
    ]


def _eager(model, inputs):
    try:
        with torch.no_grad():
            return model(*inputs), None
    except Exception as e:  # noqa: BLE001 (the exception is what is compared)
        return None, e


def _raises_as(error, cm, *inputs):
    """`cm(*inputs)` raises eager's `error`: its class and its text (the index out of
    range and the dimension eager names: before, the text lacked the index)."""
    with pytest.raises(type(error)) as got:
        cm(*inputs)
    assert str(got.value) == str(error)


def _check(model, cm):
    for scale in (1.0, -1.0):  # both sides of the branch
        inputs = (GOOD[0], GOOD[1] * scale, *GOOD[2:])
        want, _ = _eager(model, inputs)
        got = cm(*inputs)
        for w, g in zip(want, got):
            assert torch.allclose(w, g, atol=1e-5), (w, g)
    for what, inputs in _bad_cases():
        _, eager_error = _eager(model, inputs)
        assert eager_error is not None, what
        _raises_as(eager_error, cm, *inputs)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Lookups().eval()


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_out_of_range_indices_raise_as_in_eager(model, backend):
    cm = dycl.compile(model, GOOD, backend=backend, fallback="error")
    _check(model, cm)


@pytest.mark.slow
def test_out_of_range_indices_raise_as_in_eager_inductor(model):
    _check(model, dycl.compile(model, GOOD, backend="inductor", fallback="error"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="the C++ host needs g++")
def test_out_of_range_indices_stop_the_cpp_host(model, tmp_path):
    from test_cpp_host import assert_same, run_cpp

    out = tmp_path / "lookups"
    cm = dycl.compile(model, GOOD, backend="tvm", host="cpp", out_dir=out, fallback="error")
    with torch.no_grad():
        got, done = run_cpp(out, GOOD, tmp_path / "good")
        assert done.returncode == 0, done.stderr
        assert_same(model(*GOOD), got)
    for i, (what, inputs) in enumerate(_bad_cases()):
        _, eager_error = _eager(model, inputs)
        _, done = run_cpp(out, inputs, tmp_path / f"bad{i}")
        assert done.returncode == 1 and f"error: {type(eager_error).__name__}: {eager_error}" in done.stderr, \
            (what, done.stderr)
    _check(model, cm)


class WritesAndDivides(nn.Module):
    """x[idx] = v, scatter_reduce, index_add/index_copy, one_hot and integer % and //
    by a tensor: each raises in eager on a bad input (kernels read out of range,
    wrap, or trap with SIGFPE on a zero divisor)."""

    def forward(self, x, w, s, a, b, h):
        out = torch.zeros(6)
        out[w] = x
        red = torch.zeros(4).scatter_reduce(0, s, x, reduce="amax", include_self=False)
        added = torch.zeros(4).index_add(0, s, x) + torch.zeros(4).index_copy(0, s, x)
        hot = F.one_hot(h, num_classes=6)
        return out, red, added, a % b, a // b, hot


WD_GOOD = (torch.tensor([1.0, 2.0]), torch.tensor([0, -1]), torch.tensor([0, 3]), torch.tensor([7, -8]),
           torch.tensor([2, -3]), torch.tensor([0, 5]))


def _wd_bad():
    x, w, s, a, b, h = WD_GOOD
    return [
        ("setitem past the end", (x, torch.tensor([6, 0]), s, a, b, h)),
        ("setitem too negative", (x, torch.tensor([-7, 0]), s, a, b, h)),
        ("scatter_reduce negative", (x, w, torch.tensor([-1, 0]), a, b, h)),
        ("index_add past the end", (x, w, torch.tensor([4, 0]), a, b, h)),
        ("remainder by zero", (x, w, s, a, torch.tensor([0, 3]), h)),
        ("one_hot past num_classes", (x, w, s, a, b, torch.tensor([6, 0]))),
        ("one_hot negative", (x, w, s, a, b, torch.tensor([-1, 0]))),
    ]


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_bad_writes_and_zero_divisors_raise_as_in_eager(backend):
    model = WritesAndDivides()
    cm = dycl.compile(model, WD_GOOD, backend=backend, fallback="error")
    for got, want in zip(cm(*WD_GOOD), model(*WD_GOOD)):
        assert torch.equal(got, want)
    for what, inputs in _wd_bad():
        _, eager_error = _eager(model, inputs)
        assert eager_error is not None, what
        _raises_as(eager_error, cm, *inputs)


class HostDivisor(nn.Module):
    """`a % n` with `n` read from data: a zero `n` trapped (SIGFPE) in TVM's kernel."""

    def forward(self, a, x):
        n = int((x > 0).sum())
        y = a % n + a // n
        return y * 2 if y.sum() > 3 else y


def test_a_zero_host_divisor_raises_as_in_eager():
    model = HostDivisor()
    a = torch.tensor([7, -8])
    cm = dycl.compile(model, (a, torch.tensor([1.0, 2.0, -3.0])), backend="tvm", fallback="error")
    # the read of n, the divisions (+ the predicate), y * 2: the check adds no cut
    assert len(cm.subgraphs) == 3
    for x in ([1.0, 2.0, -3.0], [1.0, 1.0, 1.0]):
        x = torch.tensor(x)
        assert torch.equal(cm(a, x), model(a, x))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        model(a, -torch.ones(3))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        cm(a, -torch.ones(3))


class LookupsInSelectedRows(nn.Module):
    """Tables whose row count is known only at run time (the rows a mask kept):
    MoE-style gathers of tokens per expert."""

    def __init__(self, op):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.op = op

    def forward(self, x, ids):
        h = self.lin(x[x[:, 0] > 0])
        if self.op == "index_select":
            return h.index_select(0, ids)
        if self.op == "gather":
            return torch.gather(h, 0, ids.unsqueeze(1).expand(-1, 4))
        if self.op == "embedding":
            return F.embedding(ids, h)
        if self.op == "subscript":
            return h[ids]
        if self.op == "host int":
            return h[ids[0].item()], h[:, 1][int(ids[-1])]
        if self.op == "index_add":
            return torch.zeros_like(h).index_add(0, ids, torch.ones(ids.shape[0], 4))
        return torch.repeat_interleave(x[:, 1], ids.repeat(3)[: x.shape[0]])  # "repeats"


ROWS = torch.tensor([[1.0, 0.5, 0.0, 2.0], [-1.0, 1.0, 1.0, 1.0], [2.0, -0.5, 1.0, 0.0], [3.0, 1.0, 0.0, 1.0],
                     [-2.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])  # 4 rows kept


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
@pytest.mark.parametrize("op", ["index_select", "gather", "embedding", "subscript", "host int", "index_add", "repeats"])
def test_indices_into_rows_known_only_at_run_time(op, backend):
    """Unchecked before (sizes unknown at compile time): TVM read garbage past the
    rows, ONNX Runtime wrapped -1 to the last row; eager raises."""
    torch.manual_seed(0)
    model = LookupsInSelectedRows(op)
    cm = dycl.compile(model, [ROWS, torch.tensor([0, 1])], backend=backend)
    none_kept = -ROWS.abs()  # (an empty table: TVM's kernels read it before the host raised, SIGSEGV)
    for rows, ids in [(ROWS, [0, 3]), (ROWS, [1, -1]), (ROWS, [4, 0]), (ROWS, [100, 0]), (ROWS, [-9, 1]),
                      (none_kept, [0, 1])]:
        ids = torch.tensor(ids)
        try:
            want = model(rows, ids)
        except (IndexError, RuntimeError) as e:
            if op in ("gather", "repeats") and rows is none_kept:
                with pytest.raises(type(e)):  # (the text of eager's kernel for an empty table differs by op)
                    cm(rows, ids)
            else:
                _raises_as(e, cm, rows, ids)
            continue
        if op == "index_add" and rows is none_kept:
            continue  # (eager adds nothing to an empty table, unchecked; dycl raises: docs/frontend.md)
        got = cm(rows, ids)
        assert all(torch.allclose(g, w) for g, w in zip(got, want)) if isinstance(want, tuple) else \
            torch.allclose(got, want), (op, ids)


class ReduceKept(nn.Module):
    """Reductions without an identity over the rows a mask kept (detection heads)."""

    def forward(self, x, s, ids):
        sel = x[s > 0.5]
        best = sel.max(0)
        kept = ids[s > 0.5]
        return best.values, best.indices, sel.argmin(-2), sel.amax(0), sel.min(), kept.max(0).values, sel.argmax()


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
def test_reductions_over_no_rows_raise_eagers_error(backend):
    """Nothing kept: eager raises IndexError (a dim given) or RuntimeError (none);
    ONNX Runtime's ArgMax raised its own RuntimeError first (probe N). The kernel now
    reduces one more row of -inf/+inf (never chosen) and the host raises eager's
    error; results with rows, NaN and ties included, are eager's."""
    torch.manual_seed(0)
    model = ReduceKept()
    x, ids = torch.randn(6, 3), torch.randint(-5, 5, (6,))
    cm = dycl.compile(model, [x, torch.tensor([.9, 0, .9, 0, 0, .9]), ids], backend=backend)
    nan_row = x.clone()
    nan_row[2, 1] = float("nan")
    ties = torch.full((6, 3), -float("inf"))
    for xs, s in [(x, [.9, 0, .9, 0, 0, .9]), (x, [0, 0, 0, 0, .9, 0]), (nan_row, [.9, .9, .9, 0, 0, 0]),
                  (ties, [0, .9, .9, 0, 0, 0]), (x, [.9] * 6)]:
        inputs = (xs, torch.tensor(s), ids)
        want, got = model(*inputs), cm(*inputs)
        for w, g in zip(want, got):
            assert torch.equal(w, g) or torch.allclose(w, g, equal_nan=True), (s, w, g)
    empty = (x, torch.zeros(6), ids)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        model(*empty)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        cm(*empty)


class NarrowKept(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, ids):
        h = self.lin(x[x[:, 0] > 0])  # the rows a mask kept: a size only the run time knows
        return h.narrow(0, ids[0].item(), 2)


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
def test_narrow_of_rows_known_only_at_run_time(backend):
    """A host-int start narrowing a `?` dim: eager raises IndexError for a start
    outside [-n, n] and RuntimeError where start + length passes the end; the
    compiled model returned fewer rows, silently (probe K)."""
    torch.manual_seed(0)
    model = NarrowKept()
    x = torch.randn(8, 4)
    x[:, 0] = x[:, 0].abs()
    x[5:, 0] *= -1  # 5 rows kept
    cm = dycl.compile(model, [x, torch.tensor([1, 0])], backend=backend)
    for start in (0, 3, -2, -5):
        ids = torch.tensor([start, 0])
        assert torch.allclose(cm(x, ids), model(x, ids)), start
    for start, error in ((4, RuntimeError), (5, RuntimeError), (6, IndexError), (-6, IndexError)):
        ids = torch.tensor([start, 0])
        with pytest.raises(error):
            model(x, ids)
        with pytest.raises(error):
            cm(x, ids)


class ZeroDimIndex(nn.Module):
    """A decoder's `h[tok]` with `tok` a 0-d tensor (an argmax): eager indexes by its
    int value (negative from the end), also inside an index tuple."""

    def forward(self, x, k):
        tok = torch.argmax(x)
        return x[tok], x[tok - 8], x.view(1, 8)[0, tok], x[tok + k]


@pytest.mark.parametrize("backend", ["torch", "onnxruntime"])
def test_zero_dim_tensor_index(backend):
    model = ZeroDimIndex()
    cm = dycl.compile(model, [torch.randn(8), torch.tensor(0)], backend=backend, fallback="error")
    gen = torch.Generator().manual_seed(0)
    raised = 0
    for i in range(24):
        inputs = (torch.randn(8, generator=gen), torch.tensor(i % 6 - 2))
        want, want_exc = _eager(model, inputs)
        got, got_exc = _eager(cm, inputs)
        assert type(want_exc) is type(got_exc) and str(want_exc) == str(got_exc), (inputs, want_exc, got_exc)
        raised += want_exc is not None
        if want_exc is None:
            assert all(torch.equal(a, b) for a, b in zip(want, got)), inputs
    assert 0 < raised < 24


class TruncDivision(nn.Module):
    def forward(self, a, b):
        return torch.div(a, b.sum(), rounding_mode="trunc"), a.index_fill(0, b.clamp(-4, 3), 0)


@pytest.mark.slow
def test_integer_division_and_negative_fill_indices_on_tvm():
    # An integer trunc division by zero trapped the process (SIGFPE) in TVM's kernel, and the
    # build check's probe of INT_MIN / -1 trapped torch's own (inside dycl.compile); index_fill
    # takes negative indices, which the bounds check refused.
    a, b = torch.tensor([7, -7, 5, -5]), torch.tensor([2, 2, -3, -3])
    model = TruncDivision()
    cm = dycl.compile(model, [a, b], backend="tvm")
    for bb in (b, torch.tensor([-1, 0, 2, -4]), torch.tensor([1, -1, 0, 0])):
        try:
            want = model(a, bb)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                cm(a, bb)
            continue
        got = cm(a, bb)
        assert all(torch.equal(g, w) for g, w in zip(got, want))


class SegmentationLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 4, 1)

    def forward(self, x, target):
        loss = F.cross_entropy(self.head(x), target, ignore_index=255)
        return loss * 2 if loss > 1.0 else loss, F.nll_loss(self.head(x)[:, :, 0, 0], target[:, 0, 0], reduction="none")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_class_targets_out_of_range_raise_as_in_eager(backend):
    # A target past the classes returned a loss (TVM read past the input: -3e-41).
    torch.manual_seed(0)
    model = SegmentationLoss().eval()
    x = torch.randn(2, 3, 2, 2)
    target = torch.tensor([[[1, 2], [255, 0]], [[3, 3], [0, 1]]])
    cm = dycl.compile(model, [x, target], backend=backend)
    bad = target.clone()
    bad[1, 0, 0] = 9
    for t in (target, bad, target - 1, torch.full_like(target, 255)):
        try:
            want = model(x, t)
        except IndexError as e:
            with pytest.raises(IndexError) as got:
                cm(x, t)
            assert str(got.value) == str(e)  # "Target 9 is out of bounds." (the first one out of range)
            continue
        got = cm(x, t)
        assert all(torch.allclose(g, w, atol=1e-5, equal_nan=True) for g, w in zip(got, want))
