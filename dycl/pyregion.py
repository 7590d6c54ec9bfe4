"""Fallback regions at run time: the user's own Python, run by the host.

A `dycl.py_region` carries the source of a function `__dycl_region(__dycl_root,
*live_ins)` made from the user's statements. It runs in the globals of the
user's module (so `torch`, `F` and the user's helpers resolve as in eager) on the
real model. Importable without the compiler: generated hosts use it.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from dycl.diagnostics import DyclError

class _Unbound:
    """What a fallback region returns for a name it left unbound (read later: an error)."""

    def __repr__(self) -> str:
        return "<unbound local variable>"


UNBOUND = _Unbound()
UNBOUND_NAME = "dycl.pyregion.UNBOUND"  # its name in IR (a loop variable unbound before its loop)

# Globals dicts that `sys.modules` cannot reach (code run with exec, say), by key.
_GLOBALS: dict[str, dict[str, Any]] = {}


def globals_key(g: dict[str, Any]) -> str:
    """A name under which `resolve_globals` finds `g` again."""
    name = g.get("__name__")
    if isinstance(name, str) and (m := sys.modules.get(name)) is not None and m.__dict__ is g:
        return name
    key = f"<dycl-globals-{id(g):x}>"
    _GLOBALS[key] = g
    return key


def resolve_globals(key: str) -> dict[str, Any]:
    if key in _GLOBALS:
        return _GLOBALS[key]
    module = sys.modules.get(key)
    if module is None:
        module = importlib.import_module(key)
    return module.__dict__


def resolve(qualname: str) -> Any:
    """`torch.nn.functional.relu` → the object (longest importable module prefix)."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(f"cannot resolve Python name '{qualname}'")


def make_region(code: str, globals_name: str, where: str) -> Callable[..., Any]:
    """The region's function, compiled in its module's globals."""
    namespace: dict[str, Any] = {}
    exec(compile(code, f"<dycl fallback region {where}>", "exec"), resolve_globals(globals_name), namespace)
    return namespace["__dycl_region"]


def to_torch(value: Any, _seen: set[int] | None = None) -> Any:
    """Backend tensors → torch tensors (zero-copy via DLPack), through tuples, lists
    and dicts. Lists and dicts are converted in place and keep their identity: a
    fallback region that appends to a list or updates a dict changes the host's
    object, as the same code changes it in eager (a list holding itself, once)."""
    import torch

    if isinstance(value, (list, dict)):
        _seen = set() if _seen is None else _seen
        if id(value) in _seen:
            return value
        _seen.add(id(value))

    if isinstance(value, (torch.Tensor, torch.Size)) or type(value).__module__ == "numpy":
        return value  # (a numpy array the model's own Python made stays one, as in eager)
    if hasattr(value, "__dlpack_device__"):
        return _from_dlpack(value)
    if isinstance(value, tuple):
        # One backend tensor returned twice (`return t, t`) is one torch tensor twice, as in eager.
        done: dict[int, Any] = {}
        items = tuple(done[id(v)] if id(v) in done else done.setdefault(id(v), to_torch(v, _seen)) for v in value)
        if all(a is b for a, b in zip(items, value)):
            return value
        # Named tuples (torch.return_types.*, collections.namedtuple) keep their type.
        if type(value) is tuple:
            return items
        return type(value)(items) if hasattr(type(value), "n_fields") else type(value)(*items)
    if isinstance(value, list):
        for i, v in enumerate(value):
            if (t := to_torch(v, _seen)) is not v:
                value[i] = t
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            if (t := to_torch(v, _seen)) is not v:
                value[k] = t
        return value
    if hasattr(value, "__dlpack__") and not isinstance(value, (int, float, bool)):
        return torch.from_dlpack(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # An output object (`EncoderOutput(last_hidden_state=...)`): its fields, in place.
        for f in dataclasses.fields(value):
            v = getattr(value, f.name, None)
            if (t := to_torch(v)) is not v:
                object.__setattr__(value, f.name, t)
        return value
    return value


_DL_CPU = 1  # DLPack's kDLCPU


def _from_dlpack(value: Any) -> Any:
    """A backend's tensor as torch's, sharing its memory. On the CPU through the
    capsule (no stream to hand over): 1.7 us where torch.from_dlpack(value), which
    negotiates the protocol's version and stream first, takes 3.7 us."""
    import torch.utils.dlpack

    if value.__dlpack_device__()[0] == _DL_CPU:
        return torch.utils.dlpack.from_dlpack(value.__dlpack__())
    return torch.from_dlpack(value)


class StateHolder:
    """Where a reloaded artifact without fallback regions, loaded without its model,
    stores the module state forward writes: a plain object per submodule path."""

    def __init__(self) -> None:
        self._modules: dict[str, Any] = {}

    def get_submodule(self, path: str) -> Any:
        import types

        return self if not path else self._modules.setdefault(path, types.SimpleNamespace())


def load_model(path: str, manifest: dict[str, Any]) -> Any:
    """The model an artifact's fallback regions run on, unpickled from the artifact.

    This runs the model's code: its classes' modules (copies stored in the artifact
    where they are not importable here). The pickle itself is read with torch's
    weights-only unpickler, allowed only the model's own classes and functions,
    nn.Module classes and torch types: it cannot call anything else."""
    import importlib.util
    import os

    info = manifest.get("fallback_model") or {}
    if not info.get("file"):
        raise DyclError("this artifact runs parts of the model as Python but holds no saved model"
                           + (f" ({info['error']})" if info.get("error") else ""))
    _check_main_classes(info.get("main_classes", {}))
    for src in info.get("sources", []):
        name = src["module"]
        if name == "__main__":
            _check_same_script(os.path.join(path, src["file"]))
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, os.path.join(path, src["file"]))
        if spec is None or spec.loader is None:
            raise DyclError(f"cannot load the model source {src['file']}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    import torch

    file = os.path.join(path, info["file"])
    allowed = _pickle_globals(torch.serialization.get_unsafe_globals_in_checkpoint(file), set(info.get("modules", [])))
    with torch.serialization.safe_globals(allowed):
        return torch.load(file, weights_only=True)


def source_digest(obj: Any) -> str | None:
    import hashlib
    import inspect

    try:
        return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def _check_main_classes(digests: dict[str, str | None]) -> None:
    """Each model class the compiling script (`__main__`) defined is defined here, with
    the same source: else another class of that name would run instead, silently."""
    main = sys.modules.get("__main__")
    for qualname, digest in digests.items():
        obj: Any = main
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
        if digest is None or obj is None or source_digest(obj) != digest:
            raise DyclError(
                f"this artifact's model class {qualname} was defined in the script that compiled it (__main__), "
                + ("and this process's __main__ defines a different one" if obj is not None else
                   "which this process's __main__ does not define")
                + (" (and its source was not available to check)" if digest is None else "")
                + ": define the model in a module the loading code can import, and compile again")


def _check_same_script(stored: str) -> None:
    """A model defined in the compiling script (`__main__`) is named by the pickle and
    the regions as `__main__.X`: they can only mean this process's script if it is
    that script. Another script's `X` would run instead of the model's, silently."""
    main = sys.modules.get("__main__")
    here = getattr(main, "__file__", None)
    try:
        same = here is not None and Path(here).read_bytes() == Path(stored).read_bytes()
    except OSError:
        same = False
    if not same:
        raise DyclError("this artifact's model is defined in the script that compiled it (__main__), and this "
                        f"process runs {'another script' if here else 'no script file'}: its classes would not be "
                        "the model's. Define the model in a module (a .py file the loading code can import) and "
                        "compile again, or load the artifact from the script that compiled it")


def bound_method(obj: Any, name: str) -> Any:
    """`obj.name`, a method its class defines: how a saved model holds a method
    bound on an instance (`self.forward = self.forward_wo_pooling`). Nothing but
    a function of the object's class is returned (the pickle cannot reach other
    attributes through it)."""
    import inspect

    fn = inspect.getattr_static(type(obj), name, None)
    if not inspect.isfunction(fn):
        raise DyclError(f"the artifact's saved model binds '{name}', which is not a method of {type(obj).__name__}")
    return fn.__get__(obj)


def check_saved_model(file: str, modules: list[str]) -> None:
    """Raise the DyclError `load_model` would raise for what this pickle names."""
    import torch

    _pickle_globals(torch.serialization.get_unsafe_globals_in_checkpoint(file), set(modules))


def model_pickler() -> Any:
    """A pickle module for `torch.save(model, ...)` whose pickles `load_model` can
    read: a bound method is saved as `bound_method(obj, name)` (pickle's own
    `getattr`, which the loader must refuse, reaches anything)."""
    import inspect
    import pickle
    import types

    class Pickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type):
                name = obj.__func__.__name__
                if inspect.getattr_static(type(obj.__self__), name, None) is obj.__func__:
                    return bound_method, (obj.__self__, name)
            return NotImplemented

    module = types.ModuleType("pickle")  # (torch.save reads its name)
    module.__dict__.update({k: v for k, v in vars(pickle).items() if not k.startswith("__")}, Pickler=Pickler)
    return module


# Harmless config holders a model may keep (`self.config = SimpleNamespace(...)`).
_CONFIG_CLASSES = ("types.SimpleNamespace", "argparse.Namespace")


def _pickle_globals(names: list[str], model_modules: set[str]) -> list[Any]:
    """What the model's pickle names, each checked: a class or function defined in one
    of the model's own modules, an nn.Module class, a torch type, a class of
    torch.nn.utils (the hooks spectral_norm and weight_norm attach), or a
    torch.nn.functional function. Anything else (os.system, torch.load, ...) is refused."""
    import inspect

    import torch

    found = []
    for name in names:
        module_name, _, qualname = name.rpartition(".")
        if module_name.split(".")[0] == "numpy":
            found.append(_numpy_global(name, _resolve(name, module_name, qualname)))
            continue
        if name in _CONFIG_CLASSES or name == f"{__name__}.bound_method":
            found.append(_resolve(name, module_name, qualname))
            continue
        if module_name not in model_modules and module_name.split(".")[0] != "torch":
            raise DyclError(f"the artifact's saved model names '{name}', outside the model's modules; "
                            "refusing to load it")
        obj = _resolve(name, module_name, qualname)
        own = module_name in model_modules and getattr(obj, "__module__", None) == module_name \
            and (inspect.isclass(obj) or inspect.isfunction(obj))
        module_class = inspect.isclass(obj) and issubclass(obj, torch.nn.Module)
        torch_type = inspect.isclass(obj) and (issubclass(obj, torch.Tensor) or obj in (
            torch.Size, torch.dtype, torch.device, torch.layout, torch.memory_format))
        functional = module_name == "torch.nn.functional" and callable(obj)
        # The hook objects torch.nn.utils attaches to a module (spectral_norm's, weight_norm's)
        hook = inspect.isclass(obj) and (module_name.startswith("torch.nn.utils.")
                                         or name == "torch.nn.modules.module._WrappedHook")
        if not (own or module_class or torch_type or functional or hook):
            raise DyclError(f"the artifact's saved model names '{name}', which is not a model class or a "
                            "torch type; refusing to load it")
        found.append(obj)
    if any(n.split(".")[0] == "numpy" for n in names):
        import numpy as np

        # An array's dtype is rebuilt from its class (numpy.dtypes.Float64DType), which
        # the pickle does not name as a global.
        found += [c for c in vars(np.dtypes).values() if isinstance(c, type) and issubclass(c, np.dtype)]
    return found


def _resolve(name: str, module_name: str, qualname: str) -> Any:
    """The object a pickle names (imported, not yet allowed)."""
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise DyclError(f"the artifact's saved model names '{name}', which does not exist here") from None
    return obj


def _numpy_global(name: str, obj: Any) -> Any:
    """What a pickled numpy array or scalar needs (a model's `self.mean = np.zeros(3)`):
    the array and dtype classes and the two reconstruction functions, nothing else."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    if obj in (np.ndarray, np.dtype, core.multiarray._reconstruct, core.multiarray.scalar) or (
            isinstance(obj, type) and issubclass(obj, np.dtype)):
        return obj
    raise DyclError(f"the artifact's saved model names '{name}', which is not a numpy array or dtype; refusing to load it")
