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
            torch.export.save(ep, str(out_dir / file))
        return file
