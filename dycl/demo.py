"""`dycl demo`: compile a bundled example, check every path against eager, time both."""

from __future__ import annotations

import dataclasses

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from dycl.diagnostics import DyclError

TOLERANCE = 1e-5


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    for _ in range(max(3, runs // 10)):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def float64_outputs(model: Any, inputs: Any) -> list[Any] | None:
    """The model's outputs computed in float64 (a copy of it, inputs cast), as leaves;
    None where it does not run so (a float32 state it makes itself)."""
    import copy

    try:
        with torch.no_grad():
            out = copy.deepcopy(model).double()(*[t.double() if t.is_floating_point() else t for t in inputs])
    except RuntimeError:
        return None
    return [torch.as_tensor(x, dtype=torch.float64) if isinstance(x, float) else torch.as_tensor(x)
            for x in torch.utils._pytree.tree_flatten(out)[0]]


def rounding_only(model: Any, inputs: Any, want: Any, got: Any) -> bool:
    """Whether `got`, further than TOLERANCE from eager's `want`, is within rounding of
    the exact answer: every float output no further from the float64 run than twice
    eager's own distance (+1e-6), other outputs equal. (Blockdrop's logits reach 42,
    where eager itself is 5e-6 from float64: a build that sums in another order lands
    1.1e-5 from eager and nearer the exact answer.) False where there is no float64 run."""
    exact = float64_outputs(model, inputs)
    want, got = torch.utils._pytree.tree_flatten(want)[0], torch.utils._pytree.tree_flatten(got)[0]
    if exact is None or not len(exact) == len(want) == len(got):
        return False
    for w, g, x in zip(want, got, exact):
        if not isinstance(w, torch.Tensor) or not w.is_floating_point():
            if max_abs_error(w, g) != 0:
                return False
            continue
        if max_abs_error(w, g) == float("inf"):
            return False
        eager_err = (w.double() - x).abs().max().item() if w.numel() else 0.0
        ours = (g.double() - x).abs().max().item() if g.numel() else 0.0
        if not ours <= 2 * eager_err + 1e-6:
            return False
    return True


def max_abs_error(a: Any, b: Any) -> float:
    """Largest elementwise difference; `inf` when the structure, types, shapes or dtypes
    differ, or NaNs are not at the same places."""
    if type(a) is not type(b) and not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return float("inf")
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return float("inf")
        if not a.numel():
            return 0.0
        if a.is_complex():  # (both parts compared)
            a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
        a, b = a.double(), b.double()
        if not torch.equal(a.isnan(), b.isnan()):
            return float("inf")
        # NaN where both are NaN, and equal infinities, differ by nothing
        return torch.where((a == b) | a.isnan(), 0.0, (a - b).abs()).max().item()
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            return float("inf")
        return max((max_abs_error(x, y) for x, y in zip(a, b)), default=0.0)
    if dataclasses.is_dataclass(a):
        return max_abs_error(dataclasses.asdict(a), dataclasses.asdict(b))
    if isinstance(a, dict):
        if list(a) != list(b):
            return float("inf")
        return max((max_abs_error(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, float):
        return 0.0 if a == b or a != a and b != b else abs(a - b)
    return 0.0 if a == b else float("inf")


def load_example(path: str) -> tuple[torch.nn.Module, list[torch.Tensor], dict[str, tuple[torch.Tensor, ...]]]:
    """A zoo example file's model, its example inputs, and one input per path
    (`make_model`, `example_inputs` and `branch_inputs` in the file)."""
    from dycl.models import load_spec

    model = load_spec(f"{path}:make_model")()
    inputs = list(load_spec(f"{path}:example_inputs")())
    paths: dict[str, tuple[torch.Tensor, ...]] = load_spec(f"{path}:branch_inputs")()
    return model, inputs, paths


def run_demo(path: str, target: str = "llvm", backend: str = "tvm", runs: int = 200) -> None:
    import dycl

    model, inputs, paths = load_example(path)
    start = time.perf_counter()
    cm = dycl.compile(model, inputs, target=target, backend=backend)
    print(f"compiled {type(model).__name__} from {path} for {target}/{backend} in {time.perf_counter() - start:.1f} s")
    print(cm.hcfg.summary())
    for name, info in cm.subgraphs.items():
        print(f"  {name}: {info['backend']}  {', '.join(info['inputs'])} -> {', '.join(info['outputs'])}")
    worst = 0.0
    with torch.no_grad():
        for name, x in paths.items():
            err = max_abs_error(model(*x), cm(*x))
            worst = max(worst, err)
            print(f"path {name!r}: max abs error vs eager {err:.2e}")
        for name, x in paths.items():
            eager = median_ms(lambda: model(*x), runs)
            compiled = median_ms(lambda: cm(*x), runs)
            print(f"path {name!r}: eager {eager:.3f} ms, dycl {compiled:.3f} ms ({eager / compiled:.2f}x)")
    if worst > TOLERANCE:
        raise DyclError(f"compiled model differs from eager by {worst:.2e} (> {TOLERANCE})")
    print("OK: compiled model matches eager on every path")
