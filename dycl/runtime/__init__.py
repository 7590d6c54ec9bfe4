"""Running and reloading compiled models, without the compiler.

    compiled_model.py  CompiledModel (call it like the original module) and `load`
    artifact.py        what makes an artifact trustworthy to load: the sealed manifest
    host_support.py    what a generated host.py imports: its helpers and `Program`
    loaders/           each backend's loader of its sub-DNNs, by import path

Nothing here imports xDSL, the frontend, the passes or a backend's compiler; the
loaders import their runtime (TVM, onnxruntime, torch) on first use. This package
imports nothing heavy itself: `CompiledModel`, `load` and `MAX_SPECIALIZATIONS`
(which need torch) are read from compiled_model.py when first asked for, so a
host program importing host_support does not pull in torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dycl.runtime.compiled_model import MAX_SPECIALIZATIONS, CompiledModel, load

__all__ = ["CompiledModel", "load", "MAX_SPECIALIZATIONS"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from dycl.runtime import compiled_model

        return getattr(compiled_model, name)
    raise AttributeError(f"module 'dycl.runtime' has no attribute {name!r}")
