"""The eager PyTorch backend: the reference, and the fallback for what others cannot take."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.backends.tvm import export


class TorchBackend(Backend):
    name = "torch"
    loader = "dycl.runtime.loaders.torch_eager:load"

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        file = f"{spec.name}.pt2"
        ep = export(spec, out_dir)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            # (constants that share storage, a complex buffer and its view_as_real: saved
            # from their storage; the build's check compares what loads back)
            warnings.filterwarnings("ignore", "No complete tensor found in the group", UserWarning)
            torch.export.save(ep, str(out_dir / file))
        if any(n.op == "call_function" and not isinstance(n.meta.get("val"), torch.Tensor) for n in ep.graph.nodes):
            # (a value other than a tensor: a size, a read of one, an assert on them)
            _check_loads(out_dir / file, spec.name)
        return file


def _check_loads(path: Path, name: str) -> None:
    """A graph with symbolic-size ops (timm's pad_same: `ceil(ih / s)` of a size) may
    save in a form torch.export.load refuses: every call would fail, so the build does."""
    import logging

    from dycl.diagnostics import BackendError
    from dycl.runtime.loaders.torch_eager import load

    log = logging.getLogger("torch.export")
    level = log.level
    log.setLevel(logging.CRITICAL)  # (it logs the deserializer's traceback before raising)
    try:
        load(str(path), {"kind": "llvm"})
    except Exception as e:  # noqa: BLE001
        raise BackendError(f"sub-DNN {name} does not load back from torch.export's file: "
                           f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    finally:
        log.setLevel(level)
