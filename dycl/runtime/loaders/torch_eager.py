"""Loads a sub-DNN the eager PyTorch backend saved (a torch.export `.pt2`) for the host."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from dycl.runtime.loaders import scalar_array

# torch reads TORCH_FORCE_WEIGHTS_ONLY_LOAD on every load: set for one load at a time.
_TORCH_LOAD_LOCK = threading.Lock()


def load(path: str, target: dict[str, Any]) -> Callable[..., list[Any]]:
    import torch

    device = "cuda" if target["kind"] == "cuda" else "cpu"
    # torch.export.load unpickles sample inputs and constants, retrying with
    # weights_only=False when that fails: a replaced pickle would run its payload.
    # Forced weights-only while loading (torch reads the variable on every load).
    # (its deserializer warns of a size symbol the graph no longer uses: nothing to act on)
    serde_log = logging.getLogger("torch._export.serde.serialize")
    with _TORCH_LOAD_LOCK:
        before = os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
        os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"
        level = serde_log.level
        serde_log.setLevel(logging.ERROR)
        try:
            ep = torch.export.load(path)
        finally:
            serde_log.setLevel(level)
            if before is None:
                del os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"]
            else:
                os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = before
    module = lifted(ep, device)

    def convert(a):
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
            return torch.from_numpy(scalar_array(a)).to(device)
        return torch.from_dlpack(a)

    def run(*args):
        with torch.no_grad():
            out = module(*[convert(a) for a in args])
        # Views at an offset (`p[0, i]`) or strided (a permute) are copied: other
        # runtimes need dense, aligned data.
        return [o.clone(memory_format=torch.contiguous_format)
                if isinstance(o, torch.Tensor) and (o.storage_offset() or not o.is_contiguous()) else o for o in out]

    return run


def lifted(ep: Any, device: str = "cpu") -> Callable[..., list[Any]]:
    """The export's lifted graph, called with its parameters directly: no pytree or
    guard checks per call (4x less overhead than `ep.module()` on a small sub-DNN)."""
    from torch.export.graph_signature import InputKind, OutputKind

    graph = ep.graph_module.to(device)
    state = {k: v.to(device) for k, v in {**ep.state_dict, **ep.constants}.items()}
    slots = [None if s.kind == InputKind.USER_INPUT else state[s.target] for s in ep.graph_signature.input_specs]
    outputs = ep.graph_signature.output_specs
    user = [i for i, s in enumerate(outputs) if s.kind == OutputKind.USER_OUTPUT]
    mutated = [(i, state[s.target]) for i, s in enumerate(outputs) if s.kind == OutputKind.BUFFER_MUTATION]

    def module(*args):
        given = iter(args)
        out = graph(*[next(given) if s is None else s for s in slots])
        for i, buffer in mutated:
            buffer.copy_(out[i])
        return [out[i] for i in user]

    return module
