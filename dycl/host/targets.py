"""The host targets of `dycl-opt -t`: print the host program from IR, as `dycl compile` does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.target import Target


def model_name(module: ModuleOp) -> str:
    attr = module.attributes.get("dycl.model")
    return attr.data if isinstance(attr, StringAttr) else "model"


@dataclass(frozen=True)
class PythonHostTarget(Target):
    """`-t python-host`: host.py for IR whose sub-DNNs are outlined (the host
    contract with Python allowed); each backend named by `dycl.backend` names its loader."""

    name = "python-host"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from xdsl.dialects import func

        from dycl.backends.base import get_backend
        from dycl.dialects import dycl as d
        from dycl.host.python import emit_host_python

        backends = sorted({f.attributes[d.BACKEND_ATTR].data for f in module.ops  # type: ignore[attr-defined]
                           if isinstance(f, func.FuncOp) and d.BACKEND_ATTR in f.attributes})
        loaders = {b: get_backend(b).loader for b in backends}
        output.write(emit_host_python(module, loaders, model_name(module)))


@dataclass(frozen=True)
class CppHostTarget(Target):
    """`-t cpp-host{device=cpu|cuda}`: host.cpp for IR that meets the strict host
    contract (verify-host-contract) with TVM or Inductor sub-DNNs."""

    name = "cpp-host"
    device: str = "cpu"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from dycl.host.cpp import emit_host_cpp

        output.write(emit_host_cpp(module, model_name(module), self.device))
