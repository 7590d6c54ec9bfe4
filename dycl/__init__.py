"""dycl: a compiler for dynamic neural networks.

    cm = dycl.compile(model, example_inputs, target="llvm", backend="tvm")
    out = cm(*inputs)
"""

from dycl.compiler import compile
from dycl.diagnostics import BackendError, DyclError, FallbackWarning, FrontendError, InputError, PassError
from dycl.runtime import CompiledModel, load

__all__ = ["compile", "load", "CompiledModel", "DyclError", "FrontendError", "PassError", "BackendError", "InputError", "FallbackWarning"]
