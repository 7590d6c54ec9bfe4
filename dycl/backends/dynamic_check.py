"""Sub-DNNs built for dynamic dimensions, checked at sizes other than the example's.

A backend traces a sub-DNN at one example size. Its export's guards catch the
size decisions torch records (dycl/backends/shape_guards.py), but a compiler may
still assume more (Inductor's adaptive pooling, for one, keeps the example's
divisibility). So each dynamic build is run at two other sizes against the
sub-DNN's own torch graph before it is used; a difference is a build failure, and
the next backend of the chain takes the sub-DNN.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from dycl.backends.base import SubgraphSpec, Target, get_backend
from dycl.backends.shape_guards import guards_file

# Odd sizes, neither multiples of the example size nor of the usual strides.
PROBE_SIZES = (37, 45)


def load_built(backend: str, directory: Path, file: str, target: Target) -> Any:
    """The callable of a built sub-DNN, through the same loader the host program uses."""
    namespace: dict[str, Any] = {"os": os, "json": json}
    exec(get_backend(backend).loader_source(), namespace)  # noqa: S102 (our own loader source)
    return namespace[f"load_{backend}"](str(directory / file), target.to_json())


def _resized(spec: SubgraphSpec, size: int, seed: int) -> list[Any]:
    gen = torch.Generator().manual_seed(seed)
    dynamic = set(spec.dynamic)
    out = []
    for i, x in enumerate(spec.example_inputs):
        shape = [size if (i, k) in dynamic else n for k, n in enumerate(x.shape)]
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


def check_other_sizes(backend: str, spec: SubgraphSpec, out_dir: Path, file: str, target: Target) -> str | None:
    """Why the build is wrong at other sizes of its dynamic dimensions, or None."""
    if not spec.dynamic or target.kind != "llvm":
        return None
    path = guards_file(out_dir, file.split(".", 1)[0])
    guards = json.loads(path.read_text()) if path.exists() else []
    run = load_built(backend, out_dir, file, target)
    for k, size in enumerate(PROBE_SIZES):
        inputs = _resized(spec, size, k)
        scope = {"__builtins__": {}, "max": max, "min": min, "abs": abs}
        if not all(eval(g, scope, {"a": inputs}) for g in guards):  # noqa: S307 (our own guard text)
            continue  # the host refuses these sizes anyway
        try:
            with torch.no_grad():
                want = _leaves(spec.graph_module(*inputs))
        except Exception:  # noqa: BLE001 (the sub-DNN itself does not take this size)
            continue
        try:
            got = _leaves(run(*inputs))
        except Exception as e:  # noqa: BLE001
            return f"it fails at size {size} of its dynamic dimensions: {type(e).__name__}: {str(e).splitlines()[0]}"
        for w, g in zip(want, got):
            if not isinstance(w, torch.Tensor):
                continue
            if g.shape != w.shape or not torch.allclose(g.to(w.dtype), w, rtol=1e-3, atol=1e-4, equal_nan=True):
                return f"it gives other values than its torch graph at size {size} of its dynamic dimensions"
    return None
