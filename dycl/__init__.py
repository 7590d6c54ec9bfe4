"""dycl: a compiler for dynamic neural networks.

    cm = dycl.compile(model, example_inputs, target="llvm", backend="tvm")
    out = cm(*inputs)

`dycl.load` (running a saved artifact) does not import the compiler: xDSL, the
frontend and the passes load on the first `dycl.compile`.
"""

from typing import Any

from dycl.diagnostics import (BackendError, DyclError, FallbackWarning, FrontendError, InputError, PassError,
                              UsageError)
from dycl.runtime import CompiledModel, load

__all__ = ["compile", "load", "CompiledModel", "DyclError", "FrontendError", "PassError", "BackendError", "InputError",
           "UsageError", "FallbackWarning"]


def __getattr__(name: str) -> Any:
    if name == "compile":
        from dycl.compiler import compile

        return compile
    raise AttributeError(f"module 'dycl' has no attribute {name!r}")
