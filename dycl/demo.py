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


def max_abs_error(a: Any, b: Any) -> float:
    """Largest elementwise difference; `inf` when the structure, types, shapes or dtypes differ."""
    if type(a) is not type(b) and not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return float("inf")
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return float("inf")
        return (a.float() - b.float()).abs().max().item() if a.numel() else 0.0
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
        return abs(a - b)
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
