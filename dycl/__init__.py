"""dycl: a compiler for dynamic neural networks.

    cm = dycl.compile(model, example_inputs, target="llvm", backend="tvm")
    out = cm(*inputs)

`dycl.load` (running a saved artifact) does not import the compiler: xDSL, the
frontend and the passes load on the first `dycl.compile`. `load` and
`CompiledModel` (dycl/runtime/) load on first use too, so a generated host
program, which imports only dycl.runtime.host_support, needs no torch unless its
sub-DNNs do.
"""

from typing import TYPE_CHECKING, Any

from dycl.diagnostics import (BackendError, DyclError, FallbackWarning, FrontendError, InputError,
                              InternalErrorWarning, PassError, UsageError)

if TYPE_CHECKING:
    from dycl.compiler import compile
    from dycl.runtime import CompiledModel, load

__all__ = ["compile", "load", "CompiledModel", "DyclError", "FrontendError", "PassError", "BackendError", "InputError",
           "UsageError", "FallbackWarning", "InternalErrorWarning"]


def __getattr__(name: str) -> Any:
    if name == "compile":
        from dycl.compiler import compile

        return compile
    if name in ("load", "CompiledModel"):
        from dycl.runtime import compiled_model

        return getattr(compiled_model, name)
    raise AttributeError(f"module 'dycl' has no attribute {name!r}")
