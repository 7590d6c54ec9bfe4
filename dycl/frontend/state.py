"""Module state written during `forward` (`self.hidden = h`, `self.steps += 1`).

Inside one call such an attribute is a variable, as mem2reg makes memory one: its
value lives in the scope under a `$state:` key, so later reads use it, branches
join it and loops carry it like any name, and inlined calls hand it in and back.
Each write is also stored on the module where eager assigns it (`dycl.set_attr`),
so Python code of fallback regions, exceptions and the caller after the call see
eager's values. A key is only a cache of what the host holds: where the frontend
loses track (a fallback region ran, one path of a branch forgot it), it drops the
key, and reads of the attribute go to the host (`Lowerer.dirty_attrs`).

Such a read, the first of the call or the first after Python the frontend cannot
follow, is a host read (`dycl.get_attr`) typed as the attribute was at compile
time: a number, or a tensor of its shape and dtype (read as a copy, so that
values stay immutable in the IR). Buffers that forward updates (`self.count += 1`,
`self.ema.mul_(m).add_(x)`, `self.buf = t`) are state too, not constants of the
sub-DNNs; an update in place is stored with `dycl.set_attr {in_place}`, which
writes the module's own tensor, as eager does. Parameters stay constants:
forward writing one is refused.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import torch
from xdsl.dialects.builtin import f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from dycl.dialects import dycl as d
from dycl.frontend.values import ModuleRef, SeqVal, Static, Value
from dycl.types import tensor_type_of

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
        if attr in m._buffers:
            # a buffer forward rebinds (`self.buf = t`): state, where it holds a tensor
            if not (isinstance(v, SSAValue) and (d.is_tensor_type(v.type) or v.type == d.ANY)):
                return False  # (not a tensor: eager's TypeError, run as Python)
            if (id(m), attr) not in self.dirty_attrs:
                raise NewState({(id(m), attr)})
        elif attr in m._modules or attr in m._parameters or not _storable(v):
            return False
        declared = inspect.getattr_static(type(m), attr, None)
        if declared is not None and (hasattr(declared, "__set__") or callable(declared)):
            return False  # a property, slot or method: assigning runs or shadows class code
        self.written_attrs.add((id(m), attr))
        value = self.materialize(self.for_python(v, node), node)
        self.emit(d.SetAttrOp(owner.path, attr, value), node)
        scope.env[state_key(m, attr)] = v
        self.state_owners[state_key(m, attr)] = (owner.path, attr, m)
        return True

    def read_state(self: Lowerer, owner: ModuleRef, attr: str, scope: _Scope, node: Any = None) -> Value | None:
        """The attribute's value in this call, if forward changes it: the value last
        stored, else a host read of it; None where it is no state (or one whose type
        the host cannot read: the caller refuses the read, as Python runs it)."""
        m = owner.module
        key = state_key(m, attr)
        if key in scope.env or node is None:
            return scope.env.get(key)
        if (id(m), attr) not in self.dirty_attrs or attr in m._parameters or attr in m._modules or (
                attr not in m._buffers and attr not in getattr(m, "__dict__", {})):
            return None  # (a class attribute or property: Python reads it)
        value = getattr(m, attr)
        t = state_type(value)
        if t is None:
            return None
        if d.is_tensor_type(t) and (id(m), attr) in self.region_written:
            # (`self.register_buffer("cache", t)` run as Python with a longer `t`, LLaMA's
            # rotary cache: the program's type of it would be the one it had before)
            raise self.unsupported(node, f"a read of '{attr}', a tensor that code run as Python earlier in this "
                                         "call may have replaced (its shape may differ)")
        if d.is_tensor_type(t) and self.tensor_holders().get(id(value), 0) > 1:
            # One tensor held by two modules (or names): an update through one is seen
            # through the other in eager; the frontend keeps state per attribute.
            raise self.unsupported(node, f"a read of '{attr}', a tensor forward changes that several module "
                                         "attributes hold (shared)")
        v = self.emit(d.GetAttrOp(owner.path, attr, t, copy=d.is_tensor_type(t)), node).results[0]
        v.name_hint = attr if attr.isidentifier() and not attr[0].isdigit() else None
        scope.env[key] = v
        self.state_owners[key] = (owner.path, attr, m)
        self.state_reads[(id(m), attr)] = (m, attr, "state")
        if d.is_tensor_type(t):
            self.module_held.add(v)
        return v

    def tensor_holders(self: Lowerer) -> dict[int, int]:
        """How many module attributes (parameters, buffers, plain attributes) hold each tensor."""
        if self._tensor_holders is None:
            counts: dict[int, int] = {}
            for m in self.model.modules():
                for slots in (m._parameters, m._buffers, getattr(m, "__dict__", {})):
                    if not isinstance(slots, dict):
                        continue
                    for v in slots.values():
                        if isinstance(v, torch.Tensor):
                            counts[id(v)] = counts.get(id(v), 0) + 1
            self._tensor_holders = counts
        return self._tensor_holders

    def buffers_written(self: Lowerer, paths: list[str]) -> None:
        """Forward writes these module tensors (dotted paths): where they are all
        buffers not yet taken as state, lowering starts again with them as state."""
        keys = set()
        for path in paths:
            owner, _, name = path.rpartition(".")
            m = self.model.get_submodule(owner)
            if name not in m._buffers:
                return  # a parameter: refused
            keys.add((id(m), name))
        if keys and not keys <= self.dirty_attrs:
            raise NewState(keys)

    def store_state_in_place(self: Lowerer, key: str, new: SSAValue, old: SSAValue, node: Any) -> None:
        """An update in place of the tensor module state `key` holds (`self.count += 1`,
        `b = self.buf; b.add_(x)`): the module's own tensor where the call read it
        (a `dycl.get_attr`), else the tensor stored earlier in this call, which only
        the module holds, is replaced."""
        path, attr, m = self.state_owners[key]
        self.written_attrs.add((id(m), attr))
        # (values the module's own tensor holds: read in this call, or updated in place since)
        in_place = old in self.module_held
        if in_place:
            self.module_held.add(new)
        self.emit(d.SetAttrOp(path, attr, self.materialize(new, node), in_place=in_place), node)


class NewState(Exception):
    """Buffers forward writes, found while lowering with them as constants: the
    lowering starts again with them as state (`lower_module`)."""

    def __init__(self, keys: set[tuple[int, str]]):
        super().__init__("module state found")
        self.keys = keys


def state_type(value: Any) -> Attribute | None:
    """The IR type of module state the host reads (None: not one it reads)."""
    if type(value) is bool:
        return i1
    if type(value) is int and -2**63 <= value < 2**63:
        return i64
    if type(value) is float:
        return f64
    if isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Buffer) and not value.requires_grad \
            and value.device.type == "cpu" and value.layout == torch.strided:
        return tensor_type_of(value)
    return None
