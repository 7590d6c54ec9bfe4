"""forward that asks about autograd (`t.requires_grad`, `torch.is_grad_enabled()`,
`t.is_inference()`) answers as eager does: in `with torch.no_grad()` blocks, under
`@torch.no_grad()`, and in the caller's grad mode at each call."""

import contextlib
import warnings

import pytest
import torch
from torch import nn

import dycl
from dycl.diagnostics import FallbackWarning
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow

MODES = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference": torch.inference_mode}


class NoGradBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        with torch.no_grad():
            y = self.fc(x)
        if y.requires_grad:
            return y * 2
        z = self.fc(y)  # (after the block: the caller's mode again)
        return y - 1, z.requires_grad


class DecoratedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    @torch.no_grad()
    def forward(self, x):
        y = self.fc(x)
        with torch.enable_grad():
            z = self.fc(x)
            on = torch.is_grad_enabled()
        return y.requires_grad, torch.is_grad_enabled(), z.requires_grad, on


class CallersMode(nn.Module):
    """The typical case: compiled in grad mode, called under `torch.no_grad()`."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = self.fc(x)
        if torch.is_grad_enabled() and y.requires_grad:
            return y * 2
        return y if not torch.is_inference_mode_enabled() else y + 100


class InferenceTensors(nn.Module):
    def forward(self, x):
        with torch.inference_mode():
            y = x + 1
        return y.is_inference(), x.is_inference(), y * 3


class NoGradHelper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    @torch.no_grad()
    def features(self, x):
        return self.fc(x), torch.is_grad_enabled()

    def forward(self, x):
        f, enabled = self.features(x)
        g = self.fc(f)
        return (g + 1 if g.requires_grad else g - 1), enabled


class SetGradEnabled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        with torch.set_grad_enabled(False):
            y = self.fc(x)
        return y.grad_fn is None, y


class NestedSwitches(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def helper(self, x):
        return self.fc(x).requires_grad, torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def forward(self, x):
        with torch.inference_mode():
            with torch.no_grad():
                a = (x + 1).is_inference(), torch.is_inference_mode_enabled()
            with torch.enable_grad():
                b = self.helper(x)
        with torch.no_grad(), torch.enable_grad():
            c = self.helper(x)
        with torch.inference_mode(False):
            d = self.helper(x)
        return a, b, c, d


class RequiresGradByPath(nn.Module):
    """Requires grad on one path only: decided at run time, by the path taken."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = self.fc(x) if x.sum() > 0 else x * 2
        if y.requires_grad:
            return y + 10
        return y - 10


class RequiresGradByIteration(nn.Module):
    """h.requires_grad is False on the first iteration only (in grad mode)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        h, n, flags = x, 0, []
        while h.sum() > -5 and n < 3:
            flags.append(h.requires_grad)
            h = self.fc(h) - 1
            n += 1
        return h, flags


class QueryInARegion(nn.Module):
    """`match` runs as Python (a fallback region), on the program's tensors."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = self.fc(x)
        match int(x.sum() > 0):
            case 1:
                flag = y.requires_grad
            case _:
                flag = torch.is_grad_enabled()
        return y * 2 if flag else y


CASES = [NoGradBlock, DecoratedForward, CallersMode, InferenceTensors, NoGradHelper, SetGradEnabled,
         NestedSwitches, RequiresGradByPath, RequiresGradByIteration, QueryInARegion]
INPUTS = [torch.tensor([[1.0, 2.0]]), torch.tensor([[-1.0, -2.0]])]


def _plain(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(x) for x in v)
    return v


def _matches(got, want):
    got, want = _plain(got), _plain(want)
    assert type(got) is type(want), (got, want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _matches(g, w)
    elif isinstance(want, torch.Tensor):
        assert max_abs_error(want, got) <= 1e-6, (got, want)
    else:
        assert got == want, (got, want)


@pytest.mark.parametrize("compiled_in", ["grad", "no_grad"])
@pytest.mark.parametrize("cls", CASES, ids=lambda c: c.__name__)
def test_autograd_queries_answer_as_eager_in_every_grad_mode(cls, compiled_in):
    torch.manual_seed(0)
    model = cls().eval()
    with MODES[compiled_in]():
        cm = dycl.compile(model, [INPUTS[0]], backend="torch", fallback="python")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        for mode in ("grad", "no_grad", "inference", "grad"):
            for x in INPUTS:
                a, b = x.clone(), x.clone()  # (ordinary tensors: made outside inference mode)
                with MODES[mode]():
                    _matches(cm(a), model(b))


def test_queries_are_compiled_and_the_callers_mode_checked():
    torch.manual_seed(0)
    model = CallersMode().eval()
    cm = dycl.compile(model, [INPUTS[0]], backend="torch", fallback="error")
    assert cm.manifest["grad_mode"] == "on"
    assert not cm.fallbacks  # decided at compile time: no Python runs them
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # another mode compiles again, it does not run eager
        with torch.no_grad():
            _matches(cm(INPUTS[0]), model(INPUTS[0]))
    # An input that requires grad: eager's answer (the model run as Python, in the caller's mode).
    x = INPUTS[0].clone().requires_grad_()
    with pytest.warns(FallbackWarning, match="asks about autograd"):
        got = cm(x)
    _matches(got, model(x))


def test_models_that_ask_nothing_about_autograd_are_not_checked():
    model = nn.Sequential(nn.Linear(2, 2)).eval()
    with contextlib.nullcontext():
        cm = dycl.compile(model, [INPUTS[0]], backend="torch")
    assert "grad_mode" not in cm.manifest


class NumpyOfAnOutput(nn.Module):
    """`y.numpy()` of a Linear's output: eager raises where grad is on (y requires
    grad); the region's y came from a sub-DNN, without grad, and returned a value."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = self.fc(x)
        return y, float(abs(y.numpy()).max())


def test_numpy_of_a_tensor_that_requires_grad_raises_as_eager():
    torch.manual_seed(0)
    model = NumpyOfAnOutput().eval()
    cm = dycl.compile(model, [INPUTS[0]], backend="torch", fallback="python")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            model(INPUTS[0])
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            cm(INPUTS[0])
        for mode in ("no_grad", "inference"):
            with MODES[mode]():
                _matches(cm(INPUTS[0].clone()), model(INPUTS[0].clone()))


class TextOfAnOutput(nn.Module):
    """The text of a tensor (`repr`, an f-string) shows autograd's `grad_fn` where it
    requires grad: sub-DNNs' tensors have none, so in grad mode the model runs as eager."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = self.fc(x)
        return y, repr(y[0]) if y.sum() > 0 else f"{y} at {y.sum():.2f}"


def test_text_of_a_tensor_that_requires_grad_shows_its_grad_fn_as_eager():
    torch.manual_seed(0)
    model = TextOfAnOutput().eval()
    cm = dycl.compile(model, [INPUTS[0]], backend="torch", fallback="error")
    for x in (INPUTS[0], -INPUTS[0], INPUTS[0] * 3):
        got, want = cm(x.clone())[1], model(x.clone())[1]
        assert got == want and "grad_fn" in want
        for mode in ("no_grad", "inference"):
            with MODES[mode]():
                got, want = cm(x.clone())[1], model(x.clone())[1]
                assert got == want and "grad_fn" not in want


class RegionInANoGradBlock(nn.Module):
    """Python run as a region inside `with torch.no_grad()`: its tensors, and the
    state it stores, record no graph, as in eager; code after the block does."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.cache = None

    def forward(self, x):
        with torch.no_grad():
            match int(x.sum() > 0):  # (a region)
                case 1:
                    self.cache = self.fc(x)
                case _:
                    self.cache = self.fc(-x)
            with torch.enable_grad():
                match int(x.sum() > 0):
                    case 1:
                        on = self.fc(x)
                    case _:
                        on = self.fc(x) * 2
        match int(x.sum() > 1):  # (the caller's mode again)
            case 1:
                after = self.fc(self.cache)
            case _:
                after = self.fc(x)
        return self.cache * 1, on, after


class RegionUnderADecorator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.cache = None

    @torch.no_grad()
    def forward(self, x):
        for _ in range(2):
            match int(x.sum() > 0):
                case 1:
                    x = self.fc(x)
                case _:
                    self.cache = x = self.fc(x) - 1
        return x


@pytest.mark.parametrize("cls", [RegionInANoGradBlock, RegionUnderADecorator], ids=lambda c: c.__name__)
def test_regions_run_in_the_grad_mode_of_the_code_around_them(cls):
    """Before: a fallback region ran in the caller's mode whatever `with torch.no_grad()`
    block or `@torch.no_grad()` decorator was around it, so its results and the module
    state it stored recorded autograd's graph (requires_grad where eager's do not)."""
    torch.manual_seed(0)
    model, twin = cls(), cls()
    twin.load_state_dict(model.state_dict())
    cm = dycl.compile(model, [INPUTS[0]], backend="torch")
    assert cm.fallbacks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        for x in INPUTS:
            got, want = cm(x.clone()), twin(x.clone())
            got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
            assert [t.requires_grad for t in got] == [t.requires_grad for t in want]
            _matches(got, want)
            if twin.cache is not None:
                assert model.cache.requires_grad == twin.cache.requires_grad
                assert max_abs_error(twin.cache.detach(), model.cache.detach()) <= 1e-6
