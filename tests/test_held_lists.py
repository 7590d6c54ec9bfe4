"""Lists a data-dependent loop appends to are held by the host (`!dycl.list`): the
loop stays compiled (no fallback region) and equals eager on every trip count."""

import math

import pytest
import torch

import dycl
from models.held_lists import ALIASING, ALIASING_INPUTS, CASES


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and bool(
            torch.allclose(a, b, atol=1e-5, equal_nan=True))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if type(a) is float and type(b) is float:
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) or a != a and b != b
    return type(a) is type(b) and (a == b or a != a and b != b)


def _outcome(f, args):
    try:
        return f(*args)
    except Exception as e:  # the compiled model raises what eager raises
        return type(e), str(e)


def _shapes(out):
    """What differs with the trip count: shapes, list lengths."""
    if isinstance(out, torch.Tensor):
        return tuple(out.shape)
    if isinstance(out, (tuple, list)):
        return (len(out), *map(_shapes, out))
    return out if type(out) is int else None


def check(name, backend):
    factory, inputs = CASES[name]
    torch.manual_seed(0)
    model = factory().eval()
    cm = dycl.compile(model, inputs[0], backend=backend, fallback="error")
    seen = set()
    with torch.no_grad():
        for args in inputs:
            want, got = _outcome(model, args), _outcome(cm, args)
            assert _same(want, got), (name, args, want, got)
            seen.add(_shapes(want))
    assert len(seen) > 1, f"{name}: every input took the same trip count ({seen})"
    return cm


@pytest.mark.parametrize("name", sorted(CASES))
def test_held_list_loop_matches_eager(name):
    check(name, "torch")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
@pytest.mark.parametrize("name", ["greedy_token_ids", "stacked_step_logits", "scores_grown_as_a_tuple"])
def test_held_list_loop_on_a_compiler(name, backend):
    cm = check(name, backend)
    assert {s["backend"] for s in cm.subgraphs.values()} <= {backend, "torch"}, cm.subgraphs


def test_held_list_artifact_reloads(tmp_path):
    cm = check("greedy_token_ids", "onnxruntime")
    cm.save(tmp_path / "art")
    loaded = dycl.load(tmp_path / "art")
    factory, inputs = CASES["greedy_token_ids"]
    torch.manual_seed(0)
    model = factory().eval()
    for args in inputs:
        assert torch.equal(model(*args), loaded(*args))


@pytest.mark.parametrize("name", sorted(ALIASING))
def test_lists_shared_as_python_shares_them(name):
    model = ALIASING[name]().eval()
    cm = dycl.compile(model, [ALIASING_INPUTS[0]], backend="torch")
    for x in ALIASING_INPUTS:
        want, got = _outcome(model, (x,)), _outcome(cm, (x,))
        assert repr(want) == repr(got), (name, x, want, got)


def test_an_empty_list_s_float32_is_an_error_not_another_dtype():
    """`torch.tensor([])` is float32 in eager: code compiled for the elements' dtype
    says so when the list turns out empty, never computes on (or folds the dtype)."""
    class Ids(torch.nn.Module):
        def forward(self, x):
            ids = []
            i = 0
            while x[i] > 0:
                ids.append(bool(x[i] > 1))
                i += 1
            return torch.tensor(ids).dtype, torch.tensor(ids).sum() * 2

    cm = dycl.compile(Ids(), [ALIASING_INPUTS[0]], backend="torch")
    assert cm(ALIASING_INPUTS[1])[0] == torch.bool
    with pytest.raises(RuntimeError, match="empty list gives torch.float32"):
        cm(ALIASING_INPUTS[2])
