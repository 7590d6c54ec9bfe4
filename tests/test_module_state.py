"""Module state forward itself changes, as published models keep it: counters
(`self.steps += 1`), buffers updated in place (`self.count += 1`, an EMA with
`mul_().add_()`, `copy_`, a ring buffer `self.hist[self.ptr] = v`), a hidden state
carried from one call to the next, state in a submodule. Compiled, not run as
Python: the host reads the state where eager reads it and stores it where eager
stores it, so every call's result and the module afterwards equal eager's, on
every path, call after call."""

from __future__ import annotations

import collections
import copy
import logging
import random
import warnings

import pytest
import torch
from torch import nn

import dycl
from dycl.diagnostics import FallbackWarning
from models import warn_once

pytestmark = pytest.mark.slow


class StepCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        h = self.fc(x)
        if h.sum() > 0:
            return h * self.steps
        return h - self.steps


class BufferCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            self.count += 1
        return h + self.count


class Ema(nn.Module):
    """torch.no_grad() around a chained in-place update, as normalisation layers write it."""

    def __init__(self, momentum=0.9):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.momentum = momentum
        self.register_buffer("ema", torch.zeros(4))
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            self.ema.mul_(self.momentum).add_(h.mean(0), alpha=1 - self.momentum)
            self.seen += x.shape[0]
        if self.ema.sum() > 0:
            return h - self.ema
        return h + self.ema * 2


class RunningMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running_max", torch.full((4,), -1.0))

    def forward(self, x):
        m = x.amax(0)
        if (m > self.running_max).any():
            self.running_max.copy_(torch.maximum(m, self.running_max))
        return x / self.running_max.abs().clamp(min=1e-3)


class RingBuffer(nn.Module):
    """A history of the last `n` means, written at a pointer kept as a Python int."""

    def __init__(self, n=3):
        super().__init__()
        self.n = n
        self.ptr = 0
        self.register_buffer("hist", torch.zeros(n))

    def forward(self, x):
        self.hist[self.ptr] = x.mean()
        self.ptr = (self.ptr + 1) % self.n
        if self.hist.sum() > 0:
            return x * self.hist.max()
        return x + self.hist.min()


class Recurrent(nn.Module):
    """A hidden state carried from call to call in a plain attribute."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 4)
        self.h = torch.zeros(1, 4)

    def forward(self, x):
        self.h = torch.tanh(self.cell(torch.cat([x, self.h], 1)))
        if self.h.sum() > 0:
            return self.h * 2
        return self.h


class AliasedBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(4))

    def forward(self, x):
        before = self.acc.clone()
        a = self.acc
        if x.sum() > 0:
            a.add_(x[0])
        else:
            a.sub_(x[0])
        return before, self.acc * 1


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.last = 0.0

    def forward(self, x):
        self.calls += 1
        y = self.fc(x)
        self.last = float(y.mean())
        return y


class StateInSubmodule(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()

    def forward(self, x):
        y = self.cell(x)
        if self.cell.last > 0:
            return y * self.cell.calls
        return y - self.cell.calls


MODELS = {
    "step_counter": (StepCounter, (2, 4)),
    "buffer_counter": (BufferCounter, (2, 4)),
    "ema": (Ema, (2, 4)),
    "running_max": (RunningMax, (2, 4)),
    "ring_buffer": (RingBuffer, (2, 4)),
    "recurrent": (Recurrent, (1, 4)),
    "aliased_buffer": (AliasedBuffer, (1, 4)),
    "state_in_submodule": (StateInSubmodule, (2, 4)),
}


def _inputs(shape, calls=6):
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(*shape, generator=gen) * (2.0 if k % 3 else -2.0) for k in range(calls)]


def _state(m):
    return {**{k: v.clone() for k, v in m.state_dict().items()},
            **{f"{p}.{k}": v for p, mod in m.named_modules() for k, v in vars(mod).items()
               if not k.startswith("_") and isinstance(v, (int, float, torch.Tensor))}}


def _same(a, b, exact):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y, exact) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b) if exact else torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    return a == b if exact or not isinstance(a, float) else abs(a - b) <= 1e-6 * max(1.0, abs(b))


def _check(name, backend):
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    eager = copy.deepcopy(model)
    xs = _inputs(shape)
    cm = dycl.compile(model, (xs[0].clone(),), backend=backend, fallback="error")
    assert cm.manifest.get("module_state"), "the host reads the module's state"
    for x in xs:
        with warnings.catch_warnings():
            warnings.simplefilter("error", FallbackWarning)  # no call runs as eager
            got = cm(x.clone())
        with torch.no_grad():
            want = eager(x.clone())
        assert _same(got, want, exact=backend == "torch"), (name, got, want)
        now, then = _state(model), _state(eager)
        assert now.keys() == then.keys()
        for k in now:
            assert _same(now[k], then[k], exact=backend == "torch"), (name, k, now[k], then[k])
    return cm, model, eager


@pytest.mark.parametrize("name", sorted(MODELS))
def test_state_compiles_and_matches_eager_call_after_call(name):
    _check(name, "torch")


@pytest.mark.parametrize("name", ["ema", "ring_buffer", "recurrent", "state_in_submodule"])
def test_state_on_a_real_backend(name):
    _check(name, "auto")


def test_buffers_keep_their_identity():
    """`self.seen += n` and `self.ema.mul_(m).add_(...)` update the module's own
    tensors, as eager does."""
    torch.manual_seed(0)
    model = Ema().eval()
    seen, ema = model.seen, model.ema
    cm = dycl.compile(model, (torch.randn(2, 4),), backend="torch")
    for _ in range(4):
        cm(torch.randn(2, 4))
    assert model.seen is seen and model.ema is ema and seen.item() == 8 and ema.abs().sum() > 0


def test_state_changed_by_the_caller_to_another_type_is_compiled_for():
    """The caller sets the state to a tensor of another shape (a reset for another
    batch size): the compiled program was built for the old one, so that call
    compiles a variant for the new one (it ran eager, with a warning, on every call)."""
    torch.manual_seed(0)
    model = Recurrent().eval()
    eager = copy.deepcopy(model)
    cm = dycl.compile(model, (torch.randn(1, 4),), backend="torch")
    model.h = eager.h = torch.zeros(2, 4)
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        for _ in range(2):
            assert torch.equal(cm(x), eager(x).detach())
    assert len(cm._variants) == 1
    model.steps = eager.steps = 0
    model.h = eager.h = torch.zeros(1, 4)  # back to the compiled type: compiled again
    x = torch.randn(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert torch.equal(cm(x), eager(x).detach())


def test_a_saved_artifact_carries_the_state_on(tmp_path):
    """A reloaded artifact reads the state off the model saved with it, and goes on
    from where the compiled model was when it was saved."""
    cm, model, eager = _check("ring_buffer", "torch")
    cm.save(tmp_path / "a")
    loaded = dycl.load(tmp_path / "a")
    for x in _inputs((2, 4))[:4]:
        assert torch.equal(loaded(x.clone()), eager(x.clone()))


def test_the_host_reads_and_stores_where_eager_does():
    """The generated host: a read of each state (a copy for tensors), a store in
    place for the buffer, and no fallback region."""
    torch.manual_seed(0)
    cm = dycl.compile(Ema().eval(), (torch.randn(2, 4),), backend="torch")
    host = (cm.path / "host.py").read_text()
    assert "_read_state(rt.state_0, 'ema', 'tensor', (4,), 'float32')" in host
    assert "_store_in_place(rt.state_0, 'ema', " in host
    assert "_store_in_place(rt.state_0, 'seen', " in host
    assert not cm.fallbacks


# ------------------------------------------------- found by a probe in other styles


class _Bump(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("n", n)

    def forward(self, x):
        self.n += 1
        return x + self.n


class SharedBuffer(nn.Module):
    """One tensor registered in two submodules: an update through one is seen through the other."""

    def __init__(self):
        super().__init__()
        shared = torch.zeros(())
        self.a, self.b = _Bump(shared), _Bump(shared)

    def forward(self, x):
        return self.a(self.b(self.a(x)))


class ForeachEma(nn.Module):
    """timm-style EMA over a list of buffers with torch._foreach_lerp_."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("ew", torch.zeros(4, 4))
        self.register_buffer("eb", torch.zeros(4))

    def forward(self, x):
        with torch.no_grad():
            torch._foreach_lerp_([self.ew, self.eb], [self.fc.weight, self.fc.bias], 0.5)
        return x @ self.ew.t() + self.eb


class FunctionForms(nn.Module):
    """nn.init.zeros_ in a reset() forward calls, torch.clamp_ on a buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("h", torch.zeros(4))
        self.register_buffer("acc", torch.linspace(-2.0, 2.0, 4))
        self.steps = 0

    def reset(self):
        nn.init.zeros_(self.h)
        self.steps = 0

    def forward(self, x):
        if self.steps >= 2:
            self.reset()
        self.h.add_(x.mean(0))
        self.steps += 1
        y = x + self.acc
        torch.clamp_(self.acc, -0.5, 0.5)
        return y + self.acc + self.h


class LazyHasattr(nn.Module):
    def forward(self, x):
        if not hasattr(self, "running"):
            self.running = torch.zeros(4)
        self.running = self.running * 0.9 + x.mean(0)
        return x - self.running


class ListInADict(nn.Module):
    """A region appends to a list inside a dict attribute; a later read of it was
    folded (the first call returned 0), and the compile's own runs left it appended."""

    def __init__(self):
        super().__init__()
        self.extra = {"seen": []}

    def forward(self, x):
        self.extra["seen"].append(2)
        return x * 2, len(self.extra["seen"])


class _Counter:
    def __init__(self):
        self.count = 0

    def __call__(self, h):
        if h.mean() > 0:
            self.count += 1
        return h


class CallableHelper(nn.Module):
    """A callable helper object counting its calls: the compile's runs counted too."""

    def __init__(self):
        super().__init__()
        self.cb = _Counter()

    def forward(self, x):
        return self.cb(x * 2), self.cb.count


class _Suppressor:
    def __init__(self, owner):
        self.owner = owner

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is RuntimeError:
            self.owner.suppressed += 1
            return True
        return False


class ExitWritesTheModel(nn.Module):
    """A context manager's __exit__ counts on the model: the read after it was folded."""

    def __init__(self):
        super().__init__()
        self.suppressed = 0

    def forward(self, x):
        out = x
        with _Suppressor(self):
            if x.sum() > 0:
                raise RuntimeError("skip")
            out = x * 2
        return out, self.suppressed


class TensorInAList(nn.Module):
    """A tensor in a Python list, updated in place: the compile's runs updated it too."""

    def __init__(self):
        super().__init__()
        self.mem = [torch.zeros(4)]

    def forward(self, x):
        self.mem[0] += x[0]
        return self.mem[0] * 1


class _History:
    def __init__(self):
        self.items = []

    def push(self, v):
        self.items.append(v)


class HelperObjects(nn.Module):
    """Callbacks in a list and a history object whose method appends: the compile's
    runs counted and appended too."""

    def __init__(self):
        super().__init__()
        self.callbacks = [_Counter() for _ in range(2)]
        self.hist = _History()

    def forward(self, x):
        h = x
        for cb in self.callbacks:
            h = cb(h)
        self.hist.push(float(x.sum()))
        return h - len(self.hist.items), [c.count for c in self.callbacks]


class DefaultTensor(nn.Module):
    """A helper's default tensor updated in place (one tensor, made once)."""

    def acc(self, h, store=torch.zeros(4)):
        if h.sum() > 0:
            store += h[0]
        return store.clone()

    def forward(self, x):
        return x + self.acc(x)


MODELS.update({"shared_buffer": (SharedBuffer, (2, 4)), "foreach_ema": (ForeachEma, (2, 4)),
               "function_forms": (FunctionForms, (2, 4)), "lazy_hasattr": (LazyHasattr, (2, 4)),
               "list_in_a_dict": (ListInADict, (2, 4)), "callable_helper": (CallableHelper, (2, 4)),
               "exit_writes_the_model": (ExitWritesTheModel, (2, 4)), "tensor_in_a_list": (TensorInAList, (2, 4)),
               "helper_objects": (HelperObjects, (2, 4))})


@pytest.mark.parametrize("name", ["shared_buffer", "foreach_ema", "function_forms", "lazy_hasattr", "list_in_a_dict",
                                  "callable_helper", "exit_writes_the_model", "tensor_in_a_list", "helper_objects"])
def test_styles_a_probe_found_match_eager(name):
    """These gave other values than eager (a shared buffer counted once, the EMA and
    the clamp never reached the buffers, the lazily made state started again each
    call); now compiled or run as Python, and equal."""
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    eager = copy.deepcopy(model)
    xs = _inputs(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, (xs[0].clone(),), backend="torch")
        for x in xs:
            got = cm(x.clone())
            with torch.no_grad():
                want = eager(x.clone())
            assert _same(got, want, exact=True), (name, got, want)
            now, then = _state(model), _state(eager)
            assert all(_same(now[k], then[k], exact=True) for k in then), name


class _ClassHistory(nn.Module):
    history = []
    kinds = set()

    def forward(self, x):
        type(self).history.append(1)
        type(self).kinds.add(len(type(self).kinds))
        return x * 2, len(self.history), len(type(self).kinds)


def _record(items, v):
    items.append(v)


class _ClassHistoryThroughHelpers(nn.Module):
    hist = []
    seen = []

    def forward(self, x):
        _record(type(self).hist, 1)  # (inlined: the helper's list was a compile-time copy)
        h = type(self).seen
        h.insert(0, 2)
        return x * 2, len(type(self).hist), len(h)


def test_class_level_containers_forward_changes_through_a_helper_or_an_alias():
    model, x = _ClassHistoryThroughHelpers(), torch.ones(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="torch")
    got = [cm(x)[1:] for _ in range(2)]
    _ClassHistoryThroughHelpers.hist.clear()
    _ClassHistoryThroughHelpers.seen.clear()
    assert got == [model(x)[1:] for _ in range(2)] == [(1, 1), (2, 2)]


def test_class_level_containers_forward_changes():
    # `type(self).history.append(1)` lowered to `list.append(1)` without its list: dropped
    # silently, and `len(self.history)` folded to 0.
    model = _ClassHistory()
    x = torch.ones(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="torch")
    assert _ClassHistory.history == [] and _ClassHistory.kinds == set()  # (the compile's runs are undone)
    want = [model(x)[1:] for _ in range(2)]
    _ClassHistory.history.clear()
    _ClassHistory.kinds.clear()
    assert [cm(x)[1:] for _ in range(2)] == want == [(1, 1), (2, 2)]


def test_the_compile_leaves_a_default_tensor_as_it_was():
    (store,) = DefaultTensor.acc.__defaults__
    model, x = DefaultTensor(), torch.ones(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="torch")
    assert torch.equal(store, torch.zeros(4))  # (the compile's own runs added to it)
    got = [cm(x) for _ in range(2)]
    store.zero_()
    want = [model(x) for _ in range(2)]
    store.zero_()
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_the_compile_leaves_pythons_random_state():
    class Draws(nn.Module):
        def forward(self, x):
            r = random.random()  # (a region: run by the compile on its examples too)
            return x * r

    x = torch.ones(1, 4)
    random.seed(123)
    want = random.random()
    random.seed(123)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        dycl.compile(Draws(), [x], backend="torch")
    assert random.random() == want


class _ClassInstantier(collections.OrderedDict):
    """transformers' ACT2FN: a mapping whose `[]` builds a module from the class it holds."""

    def __getitem__(self, key):
        return super().__getitem__(key)()


ACT2FN = _ClassInstantier({"gelu": nn.GELU, "relu": nn.ReLU})


class ActivationFromAMapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = ACT2FN["gelu"]

    def forward(self, x):
        return self.act(self.fc(x))


def test_the_compile_leaves_a_computing_mapping_as_it_was():
    # (its snapshot and restore went through the subclass's `[]`: the compile failed,
    # and left the global mapping empty)
    model, x = ActivationFromAMapping(), torch.randn(2, 4)
    cm = dycl.compile(model, [x], backend="torch")
    assert list(dict.items(ACT2FN)) == [("gelu", nn.GELU), ("relu", nn.ReLU)]
    assert torch.equal(cm(x), model(x))


class WarnsOnce(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            warn_once.warning_once("positive input")
        return self.fc(x)


def test_the_compile_leaves_a_helper_modules_globals(caplog):
    # (the compile's own runs of `warning_once` filled its module's set: eager's first
    # call logged, the compiled model's did not)
    warn_once._warned.clear()
    model, x = WarnsOnce(), torch.ones(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="torch")
    assert warn_once._warned == set()
    with caplog.at_level(logging.WARNING, logger="tests.models.warn_once"):
        assert torch.equal(cm(x), model(x))
    assert [r.getMessage() for r in caplog.records if r.name == "tests.models.warn_once"] == ["positive input"]


class CholeskyAfterStore(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count += 1
        a = x.t() @ x + 1e-3 * torch.eye(4)
        return torch.linalg.cholesky(a) * self.count


def test_a_store_before_an_op_that_raises_happens_first():
    """The update of `count` before a cholesky that raises on a NaN batch is on the
    module after the exception, as in eager (it was stored after the sub-DNN)."""
    model = CholeskyAfterStore()
    cm = dycl.compile(model, (torch.randn(6, 4),), backend="torch")
    bad = torch.randn(6, 4)
    bad[0, 0] = float("nan")
    with pytest.raises(torch.linalg.LinAlgError):
        cm(bad)
    assert model.count.item() == 1.0


class RecurrentRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 4)
        self.h = torch.zeros(2, 4)

    def forward(self, x):
        self.h = torch.tanh(self.cell(torch.cat([x, self.h], 1)))
        return self.h * 2 if self.h.sum() > 0 else self.h


def test_state_reset_to_a_strided_tensor_on_tvm():
    """A hidden state set by the caller to a transposed (dense, not contiguous)
    tensor of the compiled shape: read as a contiguous copy (TVM refused the
    strided one on every call, and the model stayed broken)."""
    torch.manual_seed(0)
    model = RecurrentRows().eval()
    eager = copy.deepcopy(model)
    cm = dycl.compile(model, (torch.randn(2, 4),), backend="tvm")
    model.h = torch.randn(4, 2).t()
    eager.h = model.h.clone()
    assert not model.h.is_contiguous()
    for _ in range(2):
        x = torch.randn(2, 4)
        assert torch.allclose(cm(x), eager(x).detach(), rtol=1e-5, atol=1e-6)


class StateAsSize(nn.Module):
    """A counter (module state) used as a size: `torch.ones(self.n, 4)`, `x.repeat(self.k, 1)`."""

    def __init__(self):
        super().__init__()
        self.n = 1
        self.k = 1

    def forward(self, x):
        pad = torch.ones(self.n, 4)
        y = torch.cat([x, pad], 0)
        self.n = self.n % 3 + 1
        self.k = 3 - self.k
        return y.sum(0) + x.repeat(self.k, 1).sum(0)


def test_state_used_as_a_size_follows_the_calls():
    """The Python that makes a tensor of a state's size reads state: its sizes are
    known at run time (it was typed with the compile's value, and every later call
    raised)."""
    model = StateAsSize()
    eager = copy.deepcopy(model)
    cm = dycl.compile(model, (torch.randn(2, 4),), backend="torch")
    for _ in range(5):
        x = torch.randn(2, 4)
        assert torch.equal(cm(x), eager(x)) and (model.n, model.k) == (eager.n, eager.k)


def test_a_loaded_artifact_names_state_of_another_type(tmp_path):
    """A reloaded artifact has no live model to fall back to: state of another
    shape is a RuntimeError naming the attribute, never a computation on it."""
    from dycl.runtime.host_support import StateTypeError

    torch.manual_seed(0)
    cm = dycl.compile(Recurrent().eval(), (torch.randn(1, 4),), backend="torch")
    cm.save(tmp_path / "a")
    loaded = dycl.load(tmp_path / "a")
    loaded(torch.randn(1, 4))
    loaded.program.root.h = torch.zeros(2, 4)
    with pytest.raises(StateTypeError, match=r"module state 'h' holds a 2x4 float32 tensor.*compiled for a 1x4 float32"):
        loaded(torch.randn(1, 4))


class SpectralNormCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.spectral_norm(nn.Linear(4, 4))
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count += 1
        return self.fc(x) * self.count


def test_an_artifact_of_a_spectral_norm_model_reloads(tmp_path):
    """Its pickle names the hooks spectral_norm attaches: the artifact saved, and its
    load refused them (found by a probe); they load now, and the state continues."""
    torch.manual_seed(0)
    model = SpectralNormCounter().eval()
    eager = copy.deepcopy(model)
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="torch", out_dir=tmp_path / "art")
    loaded = dycl.load(tmp_path / "art")
    for _ in range(3):
        assert torch.allclose(loaded(x), eager(x), atol=1e-6)


class HoldsACounter(nn.Module):
    def __init__(self):
        super().__init__()
        import datetime

        self.timeout = datetime.timedelta(seconds=3)
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count += 1
        return x * self.count


def test_a_model_the_loader_would_refuse_is_said_at_save(tmp_path):
    """A pickle naming a class the loader refuses (here datetime.timedelta) is not
    written: the artifact says why where it is loaded, not that the pickle is unsafe."""
    from dycl.diagnostics import DyclError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(HoldsACounter(), [torch.randn(2)], backend="torch", out_dir=tmp_path / "art")
    info = cm.manifest["fallback_model"]
    assert info["file"] is None and "datetime.timedelta" in info["error"], info
    assert not (tmp_path / "art" / "model.pt").exists()
    with pytest.raises(DyclError, match="holds no saved model.*datetime.timedelta"):
        dycl.load(tmp_path / "art")(torch.randn(2))


class _PlusOne(nn.Module):
    def forward(self, x):
        return x + 1


_KEPT: list = []  # compiled models a script keeps in its globals


def test_compiled_models_in_the_scripts_globals_are_left_alone():
    # (the compile's snapshot reached the builtins through a kept compiled model's guard and
    # "restored" them by clearing them first: NameError: name 'dict' is not defined)
    x = torch.ones(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        _KEPT.append(dycl.compile(WarnsOnce(), [x], backend="torch"))
    cm = dycl.compile(_PlusOne(), [x], backend="torch")
    assert torch.equal(cm(x), x + 1) and len(dict(a=1)) == 1
    _KEPT.clear()


class NoiseSchedule:
    """A plain Python object holding tensors, as diffusers' schedulers do."""

    def __init__(self, n=10):
        self.alphas_cumprod = torch.cumprod(1 - torch.linspace(1e-4, 0.2, n), 0)
        self.timesteps = list(range(n - 1, -1, -3))

    def step(self, eps, t, x):
        a = self.alphas_cumprod[t]
        return (x - (1 - a).sqrt() * eps) / a.sqrt()


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)
        self.scheduler = NoiseSchedule()

    @torch.no_grad()
    def forward(self, x):
        for t in self.scheduler.timesteps:
            x = self.scheduler.step(self.net(x), t, x)
            if x.abs().max() > 50:
                break
        return x


def test_tensors_a_plain_object_holds_are_read_as_eager_reads_them():
    """`self.scheduler.alphas_cumprod[t]` of a plain object: every sampling step ran as
    Python ("tensor attribute 'alphas_cumprod' is neither a parameter nor a buffer;
    register it as a buffer", advice a non-Module cannot take). The tensor is a
    constant now; replaced or changed in place after the compile, calls follow it."""
    torch.manual_seed(0)
    model = Sampler()
    cm = dycl.compile(model, (torch.randn(2, 4),), backend="torch")
    assert not cm.fallbacks
    xs = [torch.randn(2, 4), torch.randn(2, 4) * 40]  # (the second breaks early)
    for x in xs:
        assert torch.equal(cm(x), model(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        model.scheduler.alphas_cumprod.mul_(0.5)
        for x in xs:
            assert torch.equal(cm(x), model(x))
        model.scheduler.alphas_cumprod = torch.full((10,), 0.25)
        for x in xs:
            assert torch.equal(cm(x), model(x))


class DecayingSchedule:
    def __init__(self):
        self.scale = torch.tensor([0.9, 0.8, 0.7])


class DecaysInPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.sched = DecayingSchedule()

    def forward(self, x):
        self.sched.scale.mul_(0.5)  # (forward changes it: Python)
        return self.fc(x) * self.sched.scale


def test_the_compile_leaves_tensors_plain_objects_hold():
    """Compile-time runs of Python that updates a plain object's tensor in place
    (`self.sched.scale.mul_(0.5)`) left it updated: every later call, compiled or
    eager, started from a scale halved at compile time."""
    torch.manual_seed(0)
    model, twin = DecaysInPlace(), DecaysInPlace()
    twin.load_state_dict(model.state_dict())
    x = torch.randn(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, (x,), backend="torch")
        assert torch.equal(model.sched.scale, twin.sched.scale)
        for _ in range(2):
            assert torch.equal(cm(x), twin(x))
            assert torch.equal(model.sched.scale, twin.sched.scale)


class BumpsABufferSlice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.zeros(4, 2))

    def forward(self, x):
        p = self.table[:2]
        p += 1  # a view of the buffer: the buffer changes
        return x + p


def test_an_augmented_assignment_through_a_view_of_a_buffer_updates_the_buffer():
    """`p = self.table[:2]; p += 1` ran `p += 1` as Python on the program's copy of
    the slice: every call returned 2 and the buffer never changed (eager: 2, 3, 4)."""
    model, eager = BumpsABufferSlice(), BumpsABufferSlice()
    with pytest.warns(dycl.FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(model, [torch.ones(2, 2)], backend="torch")
    for _ in range(3):
        assert torch.equal(cm(torch.ones(2, 2)), eager(torch.ones(2, 2)))
        assert torch.equal(model.table, eager.table)


class UpdatesAListedTensor(torch.nn.Module):
    """Transformer-XL style memories: a list attribute of tensors updated through a name."""

    def __init__(self):
        super().__init__()
        self.mems = [torch.zeros(2, 2), torch.zeros(2, 2)]

    def forward(self, x):
        m = self.mems[-1]
        m.add_(x)
        return x + self.mems[-1]


class UpdatesAViewOfAListedTensor(UpdatesAListedTensor):
    def forward(self, x):
        m = self.mems[0]
        row = m[0]
        row.mul_(2).add_(x[0])
        return x * 2 + self.mems[0].sum()


class UpdatesADictedTensorFromAHelper(UpdatesAListedTensor):
    def __init__(self):
        super().__init__()
        self.cache = {"a": torch.zeros(2, 2)}

    def _get(self, key):
        return self.cache[key]

    def forward(self, x):
        m = self._get("a")
        m += x
        return x.relu() + m


@pytest.mark.parametrize("cls", [UpdatesAListedTensor, UpdatesAViewOfAListedTensor, UpdatesADictedTensorFromAHelper])
def test_an_update_in_place_through_a_name_reaches_the_tensor_a_list_or_dict_attribute_holds(cls):
    """`m = self.mems[-1]` runs as Python (a list of tensors is no IR value); the
    program then updated its copy of `m`, so the list's tensor never changed and
    every call returned `x` (eager: x + 1, x + 2, ...). An update through what such a
    region returns now runs as Python too."""
    model, eager = cls(), cls()
    x = torch.ones(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        cm = dycl.compile(model, [x], backend="onnxruntime")
    for _ in range(3):
        assert torch.equal(cm(x), eager(x))
        held = [*model.mems, *getattr(model, "cache", {}).values()]
        assert all(torch.equal(a, b) for a, b in zip(held, [*eager.mems, *getattr(eager, "cache", {}).values()]))


class RotaryCache(torch.nn.Module):
    """LLaMA's rotary embedding: forward re-registers a longer cache when a longer
    sequence comes."""

    def __init__(self):
        super().__init__()
        self._grow(2)

    def _grow(self, n):
        self.n_cached = n
        self.register_buffer("cache", torch.arange(n, dtype=torch.float32), persistent=False)

    def forward(self, x, seq_len=None):
        if seq_len > self.n_cached:
            self._grow(seq_len)
        return self.cache[:seq_len]


class UsesARotaryCache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rot = RotaryCache()

    def forward(self, x):
        cache = self.rot(x, seq_len=x.shape[0])
        return x + cache


def test_a_buffer_a_submodule_re_registers_longer_is_read_with_its_new_shape():
    """The read of `self.cache` after `register_buffer` (run as Python) kept the type
    the buffer had before: a longer sequence raised StateTypeError where eager grows
    the cache."""
    model, eager = UsesARotaryCache(), UsesARotaryCache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FallbackWarning)
        cm = dycl.compile(model, [torch.ones(2)], backend="torch")
        for n in (2, 3, 3, 1, 5):
            assert torch.equal(cm(torch.ones(n)), eager(torch.ones(n)))
            assert torch.equal(model.rot.cache, eager.rot.cache)
    # (the longer buffer forward registered is compiled for, not "replaced after the compile")
    assert not [w for w in caught if "after the compile" in str(w.message)]


class KeepsTheLastRows(torch.nn.Module):
    """Memories on `self` that grow until they hold three rows (Transformer-XL style)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.mem = torch.zeros(0, 4)

    def forward(self, x):
        self.mem = torch.cat([self.mem, x], 0)[-3:]
        if self.mem.sum() > 0:
            return self.lin(self.mem).sum(0)
        return self.lin(x)[0]


def test_module_state_forward_gives_another_shape_is_compiled_for():
    """`self.mem` of 0, 1, 2 and then 3 rows: the program held the compiled shape, so
    from the second call on the guard said "no longer holds a tensor of shape [0, 4]
    ... after the compile" and every call ran as eager. Each new shape now compiles a
    variant once (three here); later calls run the last one."""
    torch.manual_seed(0)
    model = KeepsTheLastRows()
    eager = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch")
        for i in range(6):
            x = torch.randn(1, 4) * (1 if i % 2 else -1)
            assert torch.equal(cm(x), eager(x))
            assert torch.equal(model.mem, eager.mem)
    assert len(cm._variants) == 3


def test_a_variant_that_fails_to_compile_leaves_the_calls_to_eager():
    """Compiling for the new state is best effort: where it fails, the call runs the
    live model as eager, with the warning, as before variants (not the compile's error)."""
    torch.manual_seed(0)
    model = KeepsTheLastRows()
    eager = copy.deepcopy(model)
    cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch")

    def refuse(_inputs):
        raise dycl.DyclError("refused for the test")

    cm.recompile = refuse
    x = torch.randn(1, 4)
    assert torch.equal(cm(x), eager(x))
    with pytest.warns(FallbackWarning, match="module state"):
        assert torch.equal(cm(x), eager(x))
    assert cm._variants == [] and cm.recompile is None
