"""The eager PyTorch backend: the reference, and the fallback for what others cannot take."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.backends.tvm import export


class TorchBackend(Backend):
    name = "torch"
    runtime_imports = ("torch",)

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        file = f"{spec.name}.pt2"
        ep = export(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            torch.export.save(ep, str(out_dir / file))
        return file

    @staticmethod
    def loader_source() -> str:
        return '''
def load_torch(path, target):
    import torch

    module = torch.export.load(path).module()
    device = "cuda" if target["kind"] == "cuda" else "cpu"
    module.to(device)

    def convert(a):
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
            import numpy

            return torch.from_numpy(numpy.array(a, dtype="float32" if isinstance(a, float) else None)).to(device)
        return torch.from_dlpack(a)

    def run(*args):
        with torch.no_grad():
            out = module(*[convert(a) for a in args])
        # Views at an offset (e.g. `p[0, i]`) are copied: other runtimes need aligned data.
        return [o.clone() if isinstance(o, torch.Tensor) and o.storage_offset() else o for o in out]

    return run
'''
