"""Arithmetic of a float16/bfloat16 tensor with a scalar, as eager computes it.

Eager's CPU kernels treat a Python number, a host number and a 0-d CPU tensor of
another dtype differently per op (measured over every such pairing, torch 2.13):
`mul` and `div` by a scalar compute in float32 with the scalar's float32 value and
round once (`x * 1.0004` is not `x * 1.0`; `x * 70000` is not `x * inf`); `s / x`
is `x.reciprocal() * s`; `add`, `sub` and `pow` round the scalar to the tensor's
dtype first. An exported graph rounds every scalar to the tensor's dtype, and
Inductor computes a 0-d float32 tensor in float32, so the sub-DNN's graph states
which one eager does.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import fx
from xdsl.dialects.builtin import TensorType, f64, i64

from dycl.frontend.values import resolve_qualname
from dycl.types import dtype_of

_HALF = (torch.float16, torch.bfloat16)
_MUL = frozenset({"_operator.mul", "torch.mul", "torch.multiply", "mul", "multiply", "__mul__", "__rmul__"})
_DIV = frozenset({"_operator.truediv", "torch.div", "torch.true_divide", "torch.divide", "div", "divide",
                  "true_divide", "__truediv__"})
_ROUNDED = frozenset({"_operator.add", "torch.add", "_operator.sub", "torch.sub", "torch.subtract", "_operator.pow",
                      "torch.pow", "add", "sub", "subtract", "pow", "__add__", "__radd__", "__sub__", "__rsub__",
                      "__pow__", "__rpow__"})
HALF_SCALAR_OPS = _MUL | _DIV | _ROUNDED | {"__rtruediv__"}


def half_scalar_op(graph: fx.Graph, name: str, is_method: bool, pos: list[Any], args: list[Any],
                   kwargs: dict[str, Any], result: Any) -> fx.Node | None:
    """The node computing `name(*args)` as eager does where it is a float16/bfloat16
    tensor's arithmetic with a scalar and an exported graph would not; else None.
    `pos` are the operands' IR values (their types), `args` their graph values."""
    if name not in HALF_SCALAR_OPS or kwargs or len(args) != 2 or not isinstance(result, TensorType):
        return None
    dtype = dtype_of(result.element_type)
    if dtype not in _HALF:
        return None
    kinds = [_kind(a, v.type, dtype) for a, v in zip(args, pos)]
    if "tensor" not in kinds or kinds.count("tensor") == 2:
        return None
    t = 0 if kinds[0] == "tensor" else 1
    tensor, scalar, kind = args[t], args[1 - t], kinds[1 - t]
    if kind == "exact":
        return None
    if name == "__rtruediv__" or name in _DIV and t == 1 and kind != "zero_dim":
        # s / x with s a number (Tensor.__rtruediv__): x.reciprocal() * s
        name, tensor = "mul", graph.call_method("reciprocal", (tensor,))
    if name in _MUL and (t == 0 or kind != "zero_dim") or name in _DIV and t == 0:
        wide = graph.call_method("float", (tensor,))
        s = graph.call_method("float", (scalar,)) if isinstance(scalar, fx.Node) else scalar
        op = torch.mul if name in _MUL else torch.div
        return graph.call_method("to", (graph.call_function(op, (wide, s)), dtype))
    if isinstance(scalar, fx.Node):  # the scalar rounds to the tensor's dtype first
        rounded = graph.call_method("to", (scalar, dtype))
        new = [tensor, rounded] if t == 0 else [rounded, tensor]
        if is_method:
            return graph.call_method(name, tuple(new))
        return graph.call_function(resolve_qualname(name), tuple(new))
    return None


def _kind(value: Any, ir: Any, dtype: torch.dtype) -> str:
    """'tensor' (a tensor of the result's dtype), 'number' (a Python number `dtype`
    does not hold exactly, or a host number), 'zero_dim' (a 0-d tensor of another
    dtype), 'exact' (a Python number `dtype` holds), or 'other'."""
    if isinstance(value, bool):
        return "other"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return "exact"
        try:
            return "exact" if torch.tensor(value, dtype=dtype).item() == value else "number"
        except (RuntimeError, OverflowError):
            return "number"
    if not isinstance(value, fx.Node):
        return "other"
    if ir in (f64, i64):
        return "number"
    if isinstance(ir, TensorType):
        if ir.get_shape() == () and dtype_of(ir.element_type) != dtype:
            return "zero_dim"
        return "tensor" if dtype_of(ir.element_type) == dtype else "other"
    return "other"
