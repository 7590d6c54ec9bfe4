"""The loaders of sub-DNNs, by backend: what a generated host calls to turn a built
file back into a callable.

A loader is a function `load(path, target) -> run`, named by import path
("package.module:function"): `path` is the sub-DNN's file in the artifact,
`target` the manifest's target (`{"kind": "llvm"}` or `{"kind": "cuda", "arch":
"sm_90"}`), and `run(*inputs)` returns the list of the sub-DNN's outputs. Each
backend names its loader (`Backend.loader`, dycl/backends/base.py); the host
program lists the loaders its sub-DNNs need and imports them when it loads.

dycl's own loaders live here, one module per backend, and import their runtime
(TVM, onnxruntime, torch) on first use. A plugin backend names a function in its
own package; the backends a loaded artifact may use are these, the plugins'
(`dycl.backends` entry points, read from package metadata without importing
them) and those registered in this process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from dycl.diagnostics import DyclError

BUILTIN_LOADERS: dict[str, str] = {
    "inductor": "dycl.runtime.loaders.inductor:load",
    "onnxruntime": "dycl.runtime.loaders.onnxruntime:load",
    "torch": "dycl.runtime.loaders.torch_eager:load",
    "tvm": "dycl.runtime.loaders.tvm:load",
}
_REGISTERED: set[str] = set()  # backends registered in this process (dycl.backends.base.register_backend)


class LoaderError(DyclError):
    """A backend's loader that cannot be imported or is not a function."""


def register(name: str) -> None:
    """Artifacts may name backend `name` (registered in this process, not a plugin)."""
    _REGISTERED.add(name)


def known_backends() -> set[str]:
    """The backends whose sub-DNNs an artifact loaded here may hold."""
    from dycl.plugins import BACKENDS_GROUP, discover

    return set(BUILTIN_LOADERS) | _REGISTERED | set(discover(BACKENDS_GROUP))


def check_path(where: Any) -> str | None:
    """Why `where` is not a loader's import path ("package.module:function"), or None."""
    if not isinstance(where, str):
        return f"expected an import path 'package.module:function', got {where!r}"
    module, sep, attr = where.partition(":")
    if not sep or not all(p.isidentifier() for p in module.split(".")) or \
            not all(p.isidentifier() for p in attr.split(".")):
        return f"'{where}' is not an import path 'package.module:function'"
    return None


def resolve(backend: str, where: str) -> Callable[..., Any]:
    """The loader of `backend`, imported from `where` ("package.module:function")."""
    problem = check_path(where)
    if problem is not None:
        raise LoaderError(f"the loader of backend '{backend}': {problem}")
    module, _, attr = where.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in attr.split("."):
            found = getattr(found, part)
    except Exception as e:  # noqa: BLE001 (the loader's own module failing to import: say whose)
        first = next((line for line in str(e).splitlines() if line.strip()), "")
        raise LoaderError(f"cannot import the loader of backend '{backend}' ({where}): {type(e).__name__}: {first}",
                          note=_provider(backend)) from e
    if not callable(found):
        raise LoaderError(f"the loader of backend '{backend}' ({where}) is {found!r}, not a function",
                          note=_provider(backend))
    return found


def _provider(backend: str) -> str:
    if backend in BUILTIN_LOADERS:
        return f"'{backend}' is one of dycl's own backends; its runtime must be installed where the model is loaded"
    from dycl.plugins import BACKENDS_GROUP, discover

    plugin = discover(BACKENDS_GROUP).get(backend)
    if plugin is not None:
        return f"backend '{backend}' comes from {plugin.describe()}; the loader it names must be importable"
    return f"backend '{backend}' must be installed where the model is loaded"


def scalar_array(a: bool | int | float) -> Any:
    """A host scalar as the 0-d array a sub-DNN takes: a float as float32, an int as
    int64, a bool as bool. An int past int64 raises eager's OverflowError (numpy made
    an object array of it, which every runtime refused with another error)."""
    import numpy

    if type(a) is int and not -(1 << 63) <= a < (1 << 63):
        raise OverflowError("int too big to convert")
    return numpy.array(a, dtype="float32" if isinstance(a, float) else None)
