"""What a generated host program (an artifact's `host.py`) runs on.

`host.py` holds the model's control flow, `forward(rt, ...)`, and the tables it
needs: the loader of each backend by import path, the fallback regions, the
module state it writes. It imports from here the helpers `forward` calls (as
`_to_bool`, `_item`, ...: names the host's own variables never take) and
`Program`, which loads the sub-DNNs and calls `forward` with itself as `rt`.
Importable without the compiler, torch or any backend's runtime: each loader
imports its own.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as _np

from dycl.pyregion import resolve as resolve_name
from dycl.pyregion import to_torch  # noqa: F401 (the host's `_t`: backend tensors to torch for Python it runs)
from dycl.runtime.loaders import resolve

# The names `forward` calls these helpers by (the generated code's spelling).
HOST_NAMES = {
    "_to_bool": "to_bool",
    "_item": "item",
    "_dense": "dense",
    "_region_output": "region_output",
    "_region_tuple": "region_tuple",
    "_resolve": "resolve_global",
    "_t": "to_torch",
    "_f64": "double_scalar",
    "_list_result": "list_result",
    "_read_state": "read_state",
    "_store_in_place": "store_in_place",
    "_grad_switches": "grad_switches",
}


class StateTypeError(RuntimeError):
    """Module state the host reads no longer has the type the program was compiled for."""


_DTYPES: dict[str, Any] = {}


def read_state(owner: Any, name: str, kind: str, shape: tuple[int, ...] = (), dtype: str = "") -> Any:
    """`owner.name`, module state forward changes, read where eager reads it: a
    number of `kind`, or (kind "tensor") a copy of a tensor of `shape` and `dtype`
    (a later store in place must not change the value read here)."""
    v = getattr(owner, name)
    if kind == "tensor":
        import torch

        want = _DTYPES.get(dtype) or _DTYPES.setdefault(dtype, getattr(torch, dtype))
        if isinstance(v, torch.Tensor) and v.shape == shape and v.dtype is want and v.device.type == "cpu":
            return v.detach().clone(memory_format=torch.contiguous_format)  # (backends take dense buffers)
        got = (f"a {'x'.join(map(str, v.shape)) or 'scalar'} {str(v.dtype).removeprefix('torch.')} tensor on "
               f"{v.device}") if isinstance(v, torch.Tensor) else repr(type(v).__name__)
        raise StateTypeError(f"dycl: module state '{name}' holds {got}; the program was compiled for a "
                             f"{'x'.join(map(str, shape)) or 'scalar'} {dtype} CPU tensor (compile the model again)")
    if type(v).__name__ != kind:
        raise StateTypeError(f"dycl: module state '{name}' holds a {type(v).__name__}; the program was compiled for "
                             f"a {kind} (compile the model again)")
    return v


def store_in_place(owner: Any, name: str, value: Any) -> None:
    """`owner.name` updated in place with `value` (`self.count += 1` on a buffer):
    the module keeps its own tensor, as in eager; the host's values are copies."""
    import torch

    with torch.no_grad():
        getattr(owner, name).copy_(to_torch(value))


def grad_switches(switches: str) -> Any:
    """The grad-mode switches (`torch.no_grad()`, ...) around Python the host runs."""
    from dycl.grad_modes import switched

    return switched(switches)


def list_result(value: Any, dtype: str, call: str) -> Any:
    """`torch.tensor(tokens)` of a list that turned out empty is float32 in eager; the
    code after it was compiled for the elements' dtype: say so, never compute on."""
    if str(getattr(value, "dtype", dtype)) != dtype:
        raise RuntimeError(f"dycl: {call} of an empty list gives {value.dtype} (eager's dtype for []); the code "
                           f"after it was compiled for {dtype}, the elements' dtype (pass dtype= to {call})")
    return value


def double_scalar(v: float) -> Any:
    """A host float for a sub-DNN that computes in float64: a 0-d float64 tensor
    (the loaders hand bare floats over as float32, where float32 math meets them)."""
    import torch

    return torch.tensor(v, dtype=torch.float64)


def host_array(t: Any) -> Any:
    """A CPU tensor of any runtime as numpy, without a copy (np.from_dlpack: 0.4 us,
    where TVM's .numpy() takes 8-17 us); GPU tensors are copied over."""
    try:
        return _np.from_dlpack(t)
    except (BufferError, RuntimeError, TypeError, AttributeError, ValueError):
        if hasattr(t, "detach"):  # torch: requires grad, or on a device
            return t.detach().cpu().numpy()
        return t.numpy()


def to_bool(t: Any) -> bool:
    """bool() of a one-element tensor: the only device→host read of a predicate."""
    if type(t).__module__ == "torch":  # torch's own read: ~0.3 us, where DLPack to numpy takes ~2 us
        if t.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if t.numel() == 0 else 'more than one value'}"
                               " is ambiguous")
        return bool(t)
    if isinstance(t, (bool, int, float, list, tuple, dict, type(None), _np.ndarray, _np.generic)):
        return bool(t)  # a Python value a region made (`if not picked:`, `if arr.any():`), as Python takes it
    try:
        a = host_array(t)
    except AttributeError:  # another Python object a region made: its own __bool__
        return bool(t)
    if a.size != 1:  # eager's error, not numpy's
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if a.size == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(a)


def item(t: Any) -> Any:
    if isinstance(t, (bool, int, float)):
        return t
    if type(t).__module__ == "torch":  # (see to_bool)
        if t.numel() != 1:
            raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
        return t.item()
    a = host_array(t)
    if a.size != 1:  # eager's error, not numpy's
        raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
    return a.item()


class RegionMismatch(RuntimeError):
    """A fallback region returned what the code after it was not compiled for (its
    shape or length follows data no compile-time run showed). `replay`: nothing
    done so far in the call is left visible (the Program put back what it saved),
    so the call can run again as eager Python."""

    def __init__(self, message: str, replay: bool) -> None:
        super().__init__(message if replay else message + "; the call cannot run again as eager Python, since "
                         "code before this point changed what the caller sees")
        self.replay = replay


def region_output(value: Any, shape: tuple[int | None, ...], dtype: str, where: str, replay: bool = False) -> Any:
    """A fallback region's tensor result must have the shape the sub-DNNs after it were built for."""
    if type(value).__name__ == "_Unbound":
        return value  # a name the region left unbound: reading it fails, as in eager
    got_shape = tuple(getattr(value, "shape", ()))
    if len(got_shape) != len(shape) or any(w is not None and g != w for g, w in zip(got_shape, shape)) or \
            str(getattr(value, "dtype", "")) != dtype:  # (None: a dynamic dimension, any size)
        got = f"{tuple(value.shape)} {value.dtype}" if hasattr(value, "shape") else type(value).__name__
        raise RegionMismatch(f"dycl: the fallback region at {where} returned {got}; the code after it was "
                             f"compiled for {shape} {dtype} (its result shape depends on the data)", replay)
    return value


def region_tuple(value: Any, lengths: Any, where: str, replay: bool = False) -> Any:
    """A fallback region's tuple result must have the structure the code after it was compiled for."""
    def check(v: Any, want: Any) -> bool:
        if want is None:
            return True
        return isinstance(v, (tuple, list)) and len(v) == len(want) and all(check(x, w) for x, w in zip(v, want))

    if type(value).__name__ != "_Unbound" and not check(value, lengths):
        raise RegionMismatch(f"dycl: the fallback region at {where} returned a {type(value).__name__} whose length "
                             f"differs from the one the code after it was compiled for (it depends on the data)",
                             replay)
    return value


_MISSING = object()
RANDOM_GENERATORS = "<random generators>"  # (dycl.host.replay.RANDOM_STATE's name)


def _random_states() -> tuple[Any, Any, Any]:
    import random

    import torch

    return torch.get_rng_state(), random.getstate(), _np.random.get_state()


def _set_random_states(states: tuple[Any, Any, Any]) -> None:
    import random

    import torch

    torch.set_rng_state(states[0])
    random.setstate(states[1])
    _np.random.set_state(states[2])


def _saved(owners: list[tuple[Any, str]]) -> list[tuple[Any, str, Any, Any]]:
    """Each (object, attribute)'s value, and a list's, dict's or set's contents."""
    out = []
    for owner, name in owners:
        v = getattr(owner, name, _MISSING)
        contents = list.copy(v) if isinstance(v, list) else dict.copy(v) if isinstance(v, dict) else \
            set.copy(v) if isinstance(v, set) else None
        out.append((owner, name, v, contents))
    return out


def _put_back(saved: list[tuple[Any, str, Any, Any]]) -> None:
    for owner, name, v, contents in saved:
        if v is _MISSING:
            if hasattr(owner, name):
                delattr(owner, name)
            continue
        if getattr(owner, name, _MISSING) is not v:
            setattr(owner, name, v)
        if isinstance(v, list):
            list.__setitem__(v, slice(None), contents)
        elif isinstance(v, dict):
            dict.clear(v)
            dict.update(v, contents)
        elif isinstance(v, set):
            set.clear(v)
            set.update(v, contents)


def dense(t: Any) -> Any:
    """A tensor Python made, as the dense buffer at offset 0 that sub-DNNs take
    (torch.where's results are strided views of one buffer)."""
    if hasattr(t, "is_contiguous"):
        if not t.is_contiguous():
            return t.contiguous()
        if t.storage_offset():
            return t.clone()
    return t


def resolve_global(qualname: str) -> Any:
    """A Python object by its dotted name (`builtins.ValueError`, `pkg.mod.Level.HIGH`:
    the longest importable module prefix, then attributes; found once)."""
    found = _RESOLVED.get(qualname, _RESOLVED)
    if found is not _RESOLVED:
        return found
    _RESOLVED[qualname] = found = resolve_name(qualname)
    return found


_RESOLVED: dict[str, Any] = {}


class SizeGuardError(RuntimeError):
    """Sizes a sub-DNN's build does not hold for (its export's shape guards)."""


def guarded(fn: Callable[..., Any], path: str, name: str) -> Callable[..., Any]:
    """A sub-DNN built for dynamic dimensions holds where its export's shape guards
    hold (sizes the trace decided on): checked on every call, an error otherwise."""
    if not os.path.exists(path):
        return fn
    with open(path) as f:
        guards = json.load(f)
    scope = {"__builtins__": {}, "max": max, "min": min, "abs": abs}
    check = compile(" and ".join(f"({g})" for g in guards), path, "eval")

    def call(*a):
        if not eval(check, scope, {"a": a}):  # noqa: S307 (guards dycl wrote, in a sealed artifact)
            failed = next(g for g in guards if not eval(g, scope, {"a": a}))  # noqa: S307
            sizes = ", ".join("x".join(map(str, x.shape)) for x in a if hasattr(x, "shape"))
            raise SizeGuardError(f"dycl: sub-DNN {name} was built for input sizes where {failed} "
                               f"(a = its inputs: {sizes}); compile with example inputs of these sizes")
        return fn(*a)

    return call


WHOLE_PROGRAM_LOADER = "dycl.runtime.loaders.onnxruntime:load"


class Program:
    """The compiled model: sub-DNNs loaded from `path`, control flow in `forward`.

    `forward(rt, *inputs)` reaches everything through `rt`, this object: each
    sub-DNN, fallback region and written module by its name in the host program.
    `loaders` maps each backend to its loader's import path; `regions` each
    fallback region to its (code, globals name, location); `state` each host name
    to the path of a module whose attributes forward writes. `model`, when given,
    is the live model that fallback regions and module state act on.
    """

    def __init__(self, path: str, forward: Callable[..., Any], loaders: Mapping[str, str],
                 regions: Mapping[str, tuple[str, str, str]] | None = None,
                 state: Mapping[str, str] | None = None, model: Any = None,
                 whole: Callable[..., Any] | None = None, undo: list[tuple[str, str]] | None = None):
        with open(os.path.join(path, "manifest.json")) as f:
            manifest = json.load(f)
        target = manifest["target"]
        entry = manifest.get("whole_program") or {}
        if whole is not None and entry.get("used"):
            # The host and its sub-DNNs composed into one ONNX Runtime session (dycl.whole_program).
            self.whole_program = resolve("onnxruntime", WHOLE_PROGRAM_LOADER)(os.path.join(path, entry["file"]), target)
            forward = whole
        else:
            loader = {backend: resolve(backend, where) for backend, where in loaders.items()}
            for name, info in manifest["subgraphs"].items():
                fn = loader[info["backend"]](os.path.join(path, info["file"]), target)
                setattr(self, name, guarded(fn, os.path.join(path, info["file"].split(".", 1)[0] + ".guards.json"),
                                            name))
        self._forward = forward
        self._on_gpu = target.get("kind") == "cuda"
        if regions or state:
            from dycl.pyregion import StateHolder, load_model, make_region

            # Fallback regions run the model's own Python on the model itself;
            # module state written by forward is stored on it (without regions and
            # without a model, on plain objects: the artifact holds no model).
            if model is not None:
                self.root = model
            else:
                self.root = load_model(path, manifest) if regions or manifest.get("layout_sensitive") or \
                    manifest.get("module_state") else StateHolder()
            for name, (code, globals_name, where) in (regions or {}).items():
                setattr(self, name, make_region(code, globals_name, where))
            for name, module_path in (state or {}).items():
                setattr(self, name, self.root.get_submodule(module_path))
        # Module attributes a call may change before a region's result shows that the
        # call must run again as eager: saved at each call's start, put back then (and
        # the random generators' states, where the Python before it draws).
        self._undo = [(self.root.get_submodule(path), name) for path, name in undo or () if name != RANDOM_GENERATORS]
        self._random = any(name == RANDOM_GENERATORS for _, name in undo or ())
        self._replays = undo is not None

    def __call__(self, *inputs: Any) -> Any:
        if self._on_gpu:  # host tensors go to the GPU once (as the C++ host takes them), not per sub-DNN
            inputs = tuple(x.cuda() if getattr(getattr(x, "device", None), "type", None) == "cpu" else x
                           for x in inputs)
        if not self._replays:
            return self._forward(self, *inputs)
        saved = _saved(self._undo)
        generators = _random_states() if self._random else None
        try:
            return self._forward(self, *inputs)
        except RegionMismatch as e:
            if e.replay:
                _put_back(saved)
                if generators is not None:
                    _set_random_states(generators)
            raise
