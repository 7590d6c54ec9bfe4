"""Finding the `nn.Module` an IR module was lowered from.

Passes that need weights or submodules (shape inference, backends) look up the
module's `dycl.model` attribute: either a key of a model registered in this
process by `dycl.compile`, or a `path/to/file.py:factory` spec that is imported
and called (that is what `dycl import` records, so `dycl-opt --model SPEC` can rerun
passes). A spec read from IR is imported only when the user named it too: opening
someone's `.mlir` file must not run their Python.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from torch import nn
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dycl.diagnostics import DyclError, user_code_error

MODEL_ATTR = "dycl.model"
_LIVE: dict[str, nn.Module] = {}
_LOADED: dict[str, Any] = {}


_TRUSTED: set[str] = set()


def trust_model_spec(spec: str) -> None:
    """Allow passes to import `spec` (given by the user on a command line, not read from IR)."""
    _TRUSTED.add(spec)


def register_live(model: nn.Module) -> str:
    key = f"live:{type(model).__name__}@{id(model):x}"
    _LIVE[key] = model
    return key


def load_spec(spec: str) -> Any:
    """Import `file.py:name` (or `package.module:name`) and return `name`."""
    if spec in _LOADED:
        return _LOADED[spec]
    if ":" not in spec:
        raise DyclError(f"model spec '{spec}' must look like path/to/file.py:make_model")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise DyclError(f"model file '{where}' does not exist")
        # Stable across processes: fallback regions name the module whose globals they use.
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
        mod_name = f"dycl_user_{path.stem}_{digest}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)  # its sibling modules import, as when Python runs the file
        try:
            module_spec.loader.exec_module(module)
        except SyntaxError:
            raise  # reported with its own location
        except Exception as e:
            del sys.modules[mod_name]
            raise user_code_error(e, f"importing '{where}'") from e
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise DyclError(f"'{where}' has no attribute '{name}'")
    _LOADED[spec] = getattr(module, name)
    return _LOADED[spec]


def model_from_spec(spec: str) -> nn.Module:
    if spec in _LIVE:
        return _LIVE[spec]
    factory = load_spec(spec)
    try:
        model = factory() if not isinstance(factory, nn.Module) else factory
    except Exception as e:
        raise user_code_error(e, f"'{spec}'") from e
    if not isinstance(model, nn.Module):
        raise DyclError(f"'{spec}' did not produce an nn.Module")
    _LIVE[spec] = model
    return model


def model_of(module: ModuleOp, override: str | None = None) -> nn.Module:
    key = override
    if key is None:
        attr = module.attributes.get(MODEL_ATTR)
        if not isinstance(attr, StringAttr):
            raise DyclError(
                f"the IR module has no '{MODEL_ATTR}' attribute; pass the model as a "
                "pass option, e.g. shape-inference{model=\"examples/branchy.py:make_model\"}"
            )
        key = attr.data
        if key not in _LIVE and key not in _TRUSTED:
            raise DyclError(
                f"the IR names its model in '{MODEL_ATTR}' ({key}), but Python files named inside IR are not "
                f"imported: give it on the command line, e.g. dycl-opt --model {key}")
    return model_from_spec(key)


# What a pass may call or import for IR it did not make in this process (dycl-opt on
# a file): torch, operator, math, dycl's own tensor ops, these builtins, and the
# model's own module.
_IR_ROOTS = ("torch", "_operator", "operator", "math")
_IR_BUILTINS = frozenset({
    "len", "min", "max", "abs", "int", "float", "bool", "round", "slice", "getattr", "hasattr", "isinstance",
    "range", "tuple", "list", "dict", "set", "frozenset", "sum", "any", "all", "enumerate", "zip", "reversed",
    "sorted", "divmod", "pow", "str", "repr", "format", "type", "print", "dir"})


def check_ir_name(qualname: str, model_key: str | None, model: nn.Module) -> None:
    """Refuse a Python name that IR read from a file asks a pass to import or call
    (`os.system`), beyond what model code uses: a model compiled in this process is
    trusted, IR text is not."""
    if model_key is None or model_key.startswith("live:"):
        return
    root, _, rest = qualname.partition(".")
    if root in _IR_ROOTS or qualname.startswith("dycl.tensor_ops.") or qualname == "dycl.pyregion.UNBOUND" or (root == "builtins" and (rest in _IR_BUILTINS or rest.endswith(("Error", "Exception",
                                                                                            "Warning")))):
        return
    own = type(model).__module__
    if qualname == own or qualname.startswith(own + "."):
        return
    raise DyclError(f"the IR names the Python object '{qualname}', which passes do not import or call for IR "
                    f"read from a file (only torch, operator, math, Python's builtins for values, and the "
                    f"model's own module '{own}')")
