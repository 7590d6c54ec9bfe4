"""Every build checked against the sub-DNN's own torch graph before it is used.

DL compilers and exporters differ from eager PyTorch in places: simplifications
that assume no NaN (`x != x` is false, `x * 0` is 0), lowerings that truncate
where torch floors (`//` through ONNX), an `alpha` or a dtype promotion dropped,
sizes assumed from the example (Inductor's adaptive pooling at other image
sizes). So each build runs a few probes against the torch graph it was built
from; a difference is a build failure, and the next backend of the chain takes
the sub-DNN (the torch backend, last, is the graph itself).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import weakref
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import torch

from dycl.backends.base import SubgraphSpec, Target, get_backend
from dycl.backends.shape_guards import guards_file
from dycl.diagnostics import BackendError


class BuildMismatch(BackendError):
    """A build that differs from its sub-DNN's torch graph on a probe: never used or cached."""

# 0 and 1 (an expert no token chose: special cases to torch.export), and odd sizes,
# neither multiples of the example size nor of the usual strides.
PROBE_SIZES = (0, 1, 37, 45)


def load_built(backend: str, directory: Path, file: str, target: Target) -> Any:
    """The callable of a built sub-DNN, through the same loader the host program uses."""
    from dycl.runtime.loaders import resolve

    return resolve(backend, get_backend(backend).loader)(str(directory / file), target.to_json())


def _resized(spec: SubgraphSpec, size: int, seed: int, unnamed_only: bool = False) -> list[Any]:
    gen = torch.Generator().manual_seed(seed)
    sizes = {d: spec.example_size(k, size) for k, d in enumerate(spec.dynamic)  # `2*b` twice `b`
             if not (unnamed_only and k < len(spec.dynamic_names) and spec.dynamic_names[k])}
    out = []
    for i, x in enumerate(spec.example_inputs):
        shape = [sizes.get((i, k), n) for k, n in enumerate(x.shape)]
        if x.dtype.is_floating_point:
            out.append(torch.randn(shape, generator=gen).to(x.dtype))
        elif x.dtype == torch.bool:
            out.append(torch.randint(0, 2, shape, generator=gen).bool())
        else:
            out.append(torch.randint(0, 2, shape, generator=gen).to(x.dtype))
    return out


def _leaves(v: Any) -> list[Any]:
    from dycl.pyregion import to_torch

    v = to_torch(v)
    return [x for x in (v if isinstance(v, (tuple, list)) else [v])]


# Values a float input is probed with, one at a time, where compilers cut corners:
# NaN and inf (fast-math simplifications, clamps to FLT_MAX), signed zeros, and
# magnitudes past exp's range (log-sigmoid, softplus).
SPECIAL_VALUES = (float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 100.0, -100.0, 1e30, -1e30)


def _divides(gm: torch.fx.GraphModule) -> bool:
    """Whether the graph divides (integer division of the extremes could trap the process)."""
    return any(n.op in ("call_function", "call_method") and any(
        w in str(getattr(n.target, "__name__", n.target)) for w in ("div", "mod", "remainder", "fmod"))
        for n in gm.graph.nodes)


def _probes(spec: SubgraphSpec) -> list[tuple[str, list[Any]]]:
    """(what, inputs): the examples, larger and negative values, integers with
    negative values, each special value, and other sizes of dynamic dimensions."""
    base = list(spec.example_inputs)
    out = [("its example inputs", base)]
    scaled = [x * 7 if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in base]
    out.append(("larger values", scaled))
    # Past the thresholds models compare with (`s[-1] > 10`), both signs: a build that
    # answers a comparison wrong for every input looked right on small randn values.
    # (Magnitudes like the scaled probe's: far larger ones amplify float reassociation
    # past the tolerance in deep sub-DNNs.)
    for sign in (1, -1):
        far = [(x.abs() * 10 + 1) * sign if isinstance(x, torch.Tensor) and x.is_floating_point() else x
               for x in base]
        out.append((f"values {'above 1' if sign > 0 else 'below -1'}", far))
    signed = [((torch.arange(x.numel()) * 5) % 15 - 7).reshape(x.shape).to(x.dtype)  # -7..7, both signs
              if isinstance(x, torch.Tensor) and not x.is_floating_point() and x.dtype != torch.bool else x
              for x in base]
    out.append(("negative integers", signed))
    # Host numbers the sub-DNN takes (`torch.roll(x, int(k), 1)`): an exporter that keeps
    # the example's value as a constant answers every other value wrong.
    scalars = [i for i, x in enumerate(base) if isinstance(x, torch.Tensor) and x.dim() == 0
               and not x.is_floating_point() and x.dtype != torch.bool]
    out += [(f"its integer scalars {shift} above the example's",
             [x + shift if i in scalars else x for i, x in enumerate(base)]) for shift in ((1, 2) if scalars else ())]
    # Past float64's 53 bits (int64) and float32's 24 (int32): runtimes that reduce
    # integers in floating point (ONNX Runtime's int64 ReduceSum/ReduceProd) round.
    big = {torch.int64: 2 ** 53 + 1, torch.int32: 2 ** 24 + 1}
    ints = [i for i, x in enumerate(base) if isinstance(x, torch.Tensor) and x.dtype in big and x.numel()
            and x.dim()]
    if ints:
        large, extreme = list(base), list(base)
        for i in ints:
            x = base[i]
            k = torch.arange(x.numel())
            large[i] = ((k * 2 + big[x.dtype]) * (1 - 2 * (k % 2))).reshape(x.shape).to(x.dtype)
            # The extremes, where `abs`, negation and `max` overflow (INT_MIN's abs is
            # INT_MIN in torch; LLVM may take it for poison).
            extreme[i] = x.clone()
            info = torch.iinfo(x.dtype)
            extreme[i].view(-1)[0], extreme[i].view(-1)[-1] = info.min, info.max
            if x.numel() > 2:
                extreme[i].view(-1)[1] = -1
        out.append(("integers past a float's precision", large))
        if not _divides(spec.graph_module):  # (INT_MIN / -1 traps torch's own kernel: SIGFPE)
            out.append(("the smallest and largest integers", extreme))
    # Zeros of both signs, paired across inputs: max/min/where of -0.0 and 0.0 keep a
    # sign that 1/x or atan2 then shows.
    floats_in = [i for i, x in enumerate(base) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim()]
    if floats_in:
        zeros = list(base)
        for n, i in enumerate(floats_in):
            signs = (torch.arange(base[i].numel()) + n) % 2
            zeros[i] = torch.where(signs.bool(), -0.0, 0.0).reshape(base[i].shape).to(base[i].dtype)
        out.append(("zeros of both signs", zeros))
    # Every element equal (rows of padding): ties, where topk/sort/argmax pick by position
    # and runtimes pick other positions than torch (ONNX Runtime's TopK).
    out.append(("equal values", [torch.full_like(x, 0.5) if isinstance(x, torch.Tensor) and x.is_floating_point()
                                 else x for x in base]))
    floats = [i for i, x in enumerate(base) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel()]
    # Each float input on its own (`remainder(x, inf)`), or all at once where there are many.
    groups = [[i] for i in floats] if len(floats) <= 3 else [floats]
    for v in SPECIAL_VALUES:
        out += [(f"an input holding {v}", _poisoned(base, group, v)) for group in groups]
    if len(groups) == 1 and len(floats) > 1:
        # NaN in one input alone too: poisoning all at once can hide a build that loses a
        # NaN guard (`p.masked_fill(p != p, 0)` simplified away) behind NaN from the others.
        out += [("an input holding nan", _poisoned(base, [i], float("nan"))) for i in floats]
    for group in groups:  # NaN elsewhere than first: ops whose NaN handling depends on the position (topk)
        longer = [i for i in group if base[i].numel() > 1]
        if longer:  # (a one-element input had its NaN probe above)
            poisoned = list(base)
            for i in longer:
                poisoned[i] = base[i].clone()
                poisoned[i].view(-1)[-1] = float("nan")
            out.append(("an input holding nan at its last element", poisoned))
    if spec.dynamic:
        out += [(f"size {size} of its dynamic dimensions", _resized(spec, size, k))
                for k, size in enumerate(PROBE_SIZES) if spec.allows(size)]
        named = [k < len(spec.dynamic_names) and bool(spec.dynamic_names[k]) for k in range(len(spec.dynamic))]
        if any(named) and not all(named):
            # A data-dependent size (`order[:k]`) may be 0 where the named ones (a batch
            # declared 1..64) may not: empty reductions, empty index checks.
            out.append(("size 0 of its data-dependent dimensions", _resized(spec, 0, 7, unnamed_only=True)))
    return [(what, spec.consistent(inputs)) for what, inputs in out]


_NON_FINITE_PROBES = {f"an input holding {v}" for v in SPECIAL_VALUES if not math.isfinite(v)} | {
    "an input holding nan at its last element"}
def _poisoned(base: list[Any], group: list[int], value: float) -> list[Any]:
    """`base` with the first element of each input in `group` set to `value` (copies)."""
    poisoned = list(base)
    for i in group:
        poisoned[i] = base[i].clone()
        poisoned[i].view(-1)[0] = value
    return poisoned


# The finite special values: past exp's range, where a sum over the graph's layers
# may also cancel terms of that size (a convolution over a map holding -1e30).
_MAGNITUDE_PROBES = {f"an input holding {v}" for v in SPECIAL_VALUES if v == v and abs(v) not in (0.0, float("inf"))}
# How much further from the exact answer than eager's largest rounding error (per
# output) a build may be on them: on Shallow-Deep MobileNet's 1e29-sized maps eager's
# was 2-4e-7 of the largest value and ONNX Runtime's smaller.
NOISE_FACTOR = 10


def _within_rounding(spec: SubgraphSpec, inputs: list[Any], want: list[Any], got: list[Any]) -> bool:
    """Whether a build that differs from eager's float32 answer elementwise is as
    exact as it, against the torch graph's own float64 answer: summing terms of
    the input's size in another order gives other small values where they cancel
    (a convolution chain over a map holding -1e30), and eager's own answer may be
    such noise (then it is not held against the build). False where the graph
    does not run in float64."""
    try:
        double = _in_float64(spec.graph_module)
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            exact = _leaves(double(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                                     for x in inputs]))
    except Exception:  # noqa: BLE001 (a graph that builds float32 tensors itself: no second answer)
        return False
    if len(exact) != len(want) or len(got) != len(want):
        return False
    if not all(_same(w, e.to(w.dtype) if isinstance(w, torch.Tensor) and isinstance(e, torch.Tensor) else e)
               for w, e in zip(want, exact)):
        return True  # eager's answer is rounding noise here: nothing to compare
    return all(_as_exact_as_eager(w, e, g) for w, e, g in zip(want, exact, got))


_FLOAT64_GRAPHS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _in_float64(graph: Any) -> Any:
    """A float64 copy of a sub-DNN's graph, made once (each magnitude probe of each
    backend of the chain asks for it; a VGG block's copy is hundreds of MB)."""
    import copy

    if graph not in _FLOAT64_GRAPHS:
        _FLOAT64_GRAPHS[graph] = copy.deepcopy(graph).double()
    return _FLOAT64_GRAPHS[graph]


def _as_exact_as_eager(want: Any, exact: Any, got: Any) -> bool:
    """Each element of `got` within NOISE_FACTOR times eager's largest rounding error
    of that output (plus `_same`'s tolerances) from the exact answer: another order of
    the same sums passes, a wrong value among huge ones does not."""
    if not (isinstance(want, torch.Tensor) and want.is_floating_point() and isinstance(exact, torch.Tensor)):
        return _same(want, got)
    got = torch.as_tensor(got)
    if got.shape != want.shape or got.dtype != want.dtype or not (
            torch.equal(want.isnan(), got.isnan()) and torch.equal(want.isinf(), got.isinf())):
        return False
    finite = torch.isfinite(exact) & torch.isfinite(got) & torch.isfinite(want)
    if not finite.any():
        return True
    exact, want64, got64 = exact[finite], want[finite].double(), got[finite].double()
    noise = (want64 - exact).abs().max().item()
    return bool(((got64 - exact).abs() <= NOISE_FACTOR * noise + 1e-3 * exact.abs() + 1e-4).all())


def _special(t: torch.Tensor) -> torch.Tensor:
    """Per element: 0 finite, 1 NaN, 2 +inf, 3 -inf."""
    return t.isnan().int() + 2 * t.isposinf().int() + 3 * t.isneginf().int()


def _eager_defined(want: Any, ref: Any, got: Any, non_finite: bool) -> Any:
    """``want`` where eager's kernel and torch's reference math agree; where they
    differ in special values (eager's vectorised GELU gives NaN at +inf, the scalar
    kernel and the formula inf: the answer depends on the tensor's length), the
    build's answer if it is one of the two. On a probe holding NaN or inf, an output
    that is no float (a count of `gelu(h) > 0`) may be the reference's as a whole."""
    if not (isinstance(want, torch.Tensor) and isinstance(ref, torch.Tensor)
            and ref.shape == want.shape and ref.dtype == want.dtype):
        return want
    got = torch.as_tensor(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        return want
    if not want.is_floating_point():
        return ref if non_finite and torch.equal(got, ref) else want
    undefined = _special(want) != _special(ref)
    takes_ref = undefined & ((got == ref) | (got.isnan() & ref.isnan()))
    return torch.where(takes_ref, ref, want)


def _reference(spec: SubgraphSpec, inputs: list[Any]) -> list[Any] | None:
    """The sub-DNN through torch's reference decompositions (the math each op is
    defined by, as torch.compile runs it), or None where they do not trace."""
    from torch._decomp import decomposition_table
    from torch.fx.experimental.proxy_tensor import make_fx

    try:
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            return _leaves(make_fx(spec.graph_module, decomposition_table=decomposition_table)(*inputs)(*inputs))
    except Exception:  # noqa: BLE001 (no second opinion: eager's answer alone decides)
        return None


def _same(want: Any, got: Any) -> bool:
    if not isinstance(want, torch.Tensor):
        return True  # host scalars and structure: compared by the host's own checks
    got = torch.as_tensor(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if not want.is_floating_point():
        return bool(torch.equal(got, want))
    if not (torch.equal(want.isnan(), got.isnan()) and torch.equal(want.isinf(), got.isinf())):
        return False
    inf = want.isinf()
    if not torch.equal(want[inf], got[inf]):
        return False
    finite = ~(want.isnan() | inf)
    if want.dtype in (torch.float16, torch.bfloat16):
        # Within 1e-3 is within an ulp here: ONNX Runtime's CPU kernels compute float16
        # chains in float32 without rounding between ops (`x * y + z`: a quarter of all
        # elements an ulp or more off). Eager rounds every op; so must a build.
        return bool(torch.equal(got[finite], want[finite]))
    return bool(torch.allclose(got[finite].double(), want[finite].double(), rtol=1e-3, atol=1e-4))


class _ProbeError(Exception):
    """An exception a build raised in the probe process (its type's name kept)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


def _runs(backend: str, out_dir: Path, file: str, target: Target,
          cases: list[tuple[str, list[Any], list[Any]]]) -> Iterator[tuple[str, list[Any], list[Any], Any]]:
    """(what, inputs, want, got) per probe, `got` the build's outputs, the exception
    it raised, or ("crash", why) where it ended the probe process (the last one)."""
    impl = get_backend(backend)
    if impl.probes_may_end_the_process:
        from dycl.backends.isolated_probes import run_probes

        results = run_probes(impl.loader, backend, out_dir / file, target.to_json(), [c[1] for c in cases])
        for (what, inputs, want), result in zip(cases, results):
            if result[0] == "crash":
                yield what, inputs, want, result
                return
            yield what, inputs, want, (_leaves(result[1]) if result[0] == "ok" else _ProbeError(*result[1:]))
        return
    run = load_built(backend, out_dir, file, target)
    for what, inputs, want in cases:
        try:
            got: Any = _leaves(run(*inputs))
        except Exception as e:  # noqa: BLE001
            got = e
        yield what, inputs, want, got


def check_build(backend: str, spec: SubgraphSpec, out_dir: Path, file: str, target: Target) -> str | None:
    """Why the built sub-DNN differs from its own torch graph on some probe, or None.

    Probes: the example inputs, larger and negative values, equal values (ties), each
    special value, and
    for dynamic dimensions two other sizes. Where the torch graph itself raises on a
    probe (an index out of range), or the shape guards refuse its sizes, the probe
    is skipped. The torch backend is the reference and is not checked.
    """
    if backend == "torch" or target.kind != "llvm":
        return None
    path = guards_file(out_dir, file.split(".", 1)[0])
    guards = json.loads(path.read_text()) if path.exists() else []
    scope = {"__builtins__": {}, "max": max, "min": min, "abs": abs}
    cases = []
    for what, inputs in _probes(spec):
        if not all(eval(g, scope, {"a": inputs}) for g in guards):  # noqa: S307 (our own guard text)
            continue  # the host refuses these sizes anyway
        try:
            # FX prints the traceback of a failing call itself: a probe the graph does not take is no news.
            with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
                cases.append((what, inputs, _leaves(spec.graph_module(*inputs))))
        except Exception:  # noqa: BLE001 (the sub-DNN itself does not take these inputs)
            continue
    compared = 0
    for what, inputs, want, got in _runs(backend, out_dir, file, target, cases):
        if isinstance(got, tuple) and got[0] == "crash":
            return f"{got[1]} on {what}"
        if isinstance(got, Exception):
            if what.startswith("size 0 "):
                continue  # empty inputs some runtimes refuse (TVM's strides check): loud, never wrong
            name = got.name if isinstance(got, _ProbeError) else type(got).__name__
            return f"it fails on {what}: {name}: {str(got).splitlines()[0] if str(got) else ''}"
        compared += 1
        if len(got) != len(want):
            return f"it gives other results than its torch graph on {what}"
        if not all(_same(w, g) for w, g in zip(want, got)):
            ref = _reference(spec, inputs)
            if ref is None or len(ref) != len(want) or not all(
                    _same(_eager_defined(w, r, g, what in _NON_FINITE_PROBES), g) for w, r, g in zip(want, ref, got)):
                if what in _MAGNITUDE_PROBES and _within_rounding(spec, inputs, want, got):
                    continue  # as exact as eager's answer, or eager's is rounding noise here
                return f"it gives other results than its torch graph on {what}"
    if not compared:
        # (Example inputs that do not fit together, e.g. a size passed as a scalar and a
        # tensor resized apart from it: a build checked on nothing is not used.)
        return "its torch graph takes none of the probe inputs, so the build cannot be checked"
    return None
