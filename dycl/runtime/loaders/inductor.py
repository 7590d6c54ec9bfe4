"""Loads an Inductor-built sub-DNN (an AOTInductor `.aoti.pt2` package) for the host."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dycl.runtime.loaders import scalar_array


def load(path: str, target: dict[str, Any]) -> Callable[..., list[Any]]:
    import torch
    import torch._inductor

    runner = torch._inductor.aoti_load_package(path)

    def convert(a):
        if isinstance(a, torch.Tensor):
            # The compiled code indexes its inputs as dense buffers (a permuted view
            # read as one would be wrong).
            return a if a.is_contiguous() else a.contiguous()
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
            return torch.from_numpy(scalar_array(a))
        return torch.from_dlpack(a).contiguous()

    def run(*args):
        with torch.no_grad():
            out = runner(*[convert(a) for a in args])
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        # Outputs keep eager's strides (a permute is a view): dense for the sub-DNNs after.
        return [o if not isinstance(o, torch.Tensor) or o.is_contiguous() else o.contiguous() for o in out]

    return run
