"""Helpers as functions (dycl/frontend/outlining.py): a helper whose body translates
on its own is a `func.func` of its own, called with `func.call`, and inline-calls
inlines it; one that reads or changes what lives outside the call, or whose result
the caller could write through or test for None, is translated where it is called.
Either way the compiled model equals eager on every path."""

import copy

import pytest
import torch
from xdsl.dialects import func

import dycl
from dycl.frontend.lowering import lower_module
from models import helper_functions as hf

# Paths: gates open at the first, second or no block; None on some paths and not others.
INPUTS = [torch.randn(2, 4, generator=torch.Generator().manual_seed(s)) + shift
          for s, shift in ((0, 0.0), (1, 2.0), (2, -2.0), (3, 0.6), (4, -0.1))]


def _functions(model, fallback="statement") -> list[str]:
    module = lower_module(model, [INPUTS[0]], fallback=fallback)
    return [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data != "forward"]


def _check(cls, backend="torch"):
    torch.manual_seed(0)
    model = cls().eval()
    eager = copy.deepcopy(model)
    cm = dycl.compile(model, [INPUTS[0]], backend=backend)
    with torch.no_grad():
        for x in INPUTS:
            given, taken = x.clone(), x.clone()
            want, got = eager(given), cm(taken)
            want, got = (v if isinstance(v, tuple) else (v,) for v in (want, got))
            assert len(want) == len(got) and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(want, got)), x
            assert torch.equal(given, taken), "the caller's tensor after the call"  # an update in place
    return cm


def test_standalone_helpers_are_functions_one_per_specialisation():
    assert _functions(hf.Helpers().eval()) == [
        "blocks.0.forward", "Helpers._gate", "Helpers._head", "blocks.1.forward", "blocks.2.forward",
        "Helpers._head_2"]


@pytest.mark.parametrize("backend", ["torch", "onnxruntime"])
def test_standalone_helpers_equal_eager_on_every_path(backend):
    _check(hf.Helpers, backend)


@pytest.mark.parametrize("cls", [hf.CountingHelper, hf.MaybeNone, hf.InPlaceOnArgument, hf.ReturnsBuffer])
def test_helpers_that_reach_outside_the_call_stay_where_they_are_called(cls):
    """Module state, None on some paths, an argument updated in place, a module tensor returned."""
    assert _functions(cls().eval()) == []
    _check(cls)


@pytest.mark.parametrize("cls", [hf.ViewOfArgument, hf.AliasedResults])
def test_results_that_view_an_argument_or_each_other_are_written_through_as_in_eager(cls):
    """`r = self._first(x); r += 1` changes x too: taken as a function's fresh result,
    the compiled model gave x[0] + 1 + x[0] (eager: 2 * (x[0] + 1)). `a, b = self._two(x)`
    with `return h, h.t()`, then `b.add_(1)`, changes `a` too: it was returned unchanged
    (probe 25a). Such helpers stay inline, where the frontend sees the views (the
    statement that writes runs as Python)."""
    assert _functions(cls().eval(), fallback="tail") == []
    with pytest.warns(dycl.FallbackWarning, match="runs? as Python"):
        _check(cls)


def test_nested_functions_and_lambdas_are_functions_of_their_parameters_and_free_names():
    """`def mix(u, k=2.0)` reading `scale` and `self.lin`, and a lambda: one function
    per specialisation, the free tensor an argument of it."""
    module = lower_module(hf.Closures().eval(), [INPUTS[0]])
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    assert sorted(functions) == ["Closures.forward.lambda", "Closures.forward.mix", "Closures.forward.mix_2",
                                 "Closures.forward.mix_3", "Closures.forward.mix_4", "forward"]
    assert len(functions["Closures.forward.mix"].args) == 2  # u and the free `scale`


@pytest.mark.parametrize("cls", [hf.Closures, hf.ClosureOverAChangingName, hf.ClosureWritesAFreeTensor])
def test_nested_functions_equal_eager_on_every_path(cls):
    _check(cls)


def test_a_nested_function_that_updates_a_free_tensor_stays_where_it_is_called():
    assert _functions(hf.ClosureWritesAFreeTensor().eval()) == []
