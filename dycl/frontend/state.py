"""Module state written during `forward` (`self.hidden = h`, `self.steps += 1`).

Inside one call such an attribute is a variable, as mem2reg makes memory one: its
value lives in the scope under a `$state:` key, so later reads use it, branches
join it and loops carry it like any name, and inlined calls hand it in and back.
Each write is also stored on the module where eager assigns it (`dycl.set_attr`),
so Python code of fallback regions, exceptions and the caller after the call see
eager's values. A key is only a cache of what the host holds: where the frontend
loses track (a fallback region ran, one path of a branch forgot it), it drops the
key, and reads of the attribute go to the host (`Lowerer.dirty_attrs`).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import torch
from xdsl.ir import SSAValue

from dycl.dialects import dycl as d
from dycl.frontend.values import ModuleRef, SeqVal, Static, Value

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

STATE_PREFIX = "$state:"
_PLAIN = (type(None), bool, int, float, str, torch.dtype, torch.device)


def state_key(module: Any, attr: str) -> str:
    return f"{STATE_PREFIX}{id(module)}:{attr}"


def is_state_key(name: str) -> bool:
    return name.startswith(STATE_PREFIX)


def sync_state(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """`dst`'s module state becomes `src`'s: keys `src` lacks are unknown there too."""
    for k in [k for k in dst if is_state_key(k) and k not in src]:
        del dst[k]
    dst.update({k: v for k, v in src.items() if is_state_key(k)})


def forget_state(env: dict[str, Any]) -> None:
    """After Python the frontend cannot follow ran (a fallback region): reads go to the host."""
    for k in [k for k in env if is_state_key(k)]:
        del env[k]


def _storable(v: Value) -> bool:
    """A value that can be both a variable and stored on the module as eager stores it."""
    if isinstance(v, SSAValue):
        return True
    if isinstance(v, Static):
        return isinstance(v.value, _PLAIN) or (isinstance(v.value, tuple) and all(
            isinstance(x, _PLAIN) for x in v.value))
    if isinstance(v, SeqVal) and not v.is_list and type(v) is SeqVal:
        return all(_storable(x) for x in v.items)  # a tuple of tensors: (h, c)
    return False


class StateLowering:
    """Mixin of Lowerer: module attributes written in forward."""

    def store_state(self: Lowerer, owner: ModuleRef, attr: str, v: Value, scope: _Scope, node: Any) -> bool:
        """`owner.attr = v`: True if it is kept as state (else the caller refuses it)."""
        m = owner.module
        if attr in m._modules or attr in m._parameters or attr in m._buffers or not _storable(v):
            return False
        declared = inspect.getattr_static(type(m), attr, None)
        if declared is not None and (hasattr(declared, "__set__") or callable(declared)):
            return False  # a property, slot or method: assigning runs or shadows class code
        self.written_attrs.add((id(m), attr))
        value = self.materialize(self.for_python(v, node), node)
        self.emit(d.SetAttrOp(owner.path, attr, value), node)
        scope.env[state_key(m, attr)] = v
        return True

    def read_state(self: Lowerer, owner: ModuleRef, attr: str, scope: _Scope) -> Value | None:
        return scope.env.get(state_key(owner.module, attr))
