"""Conversions between torch values and dycl/builtin types."""

from __future__ import annotations

from typing import Any

import torch
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    TupleType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute

from dycl.dialects import dycl as d

_DTYPES: list[tuple[torch.dtype, Attribute]] = [
    (torch.float32, Float32Type()),
    (torch.float64, Float64Type()),
    (torch.float16, Float16Type()),
    (torch.bfloat16, BFloat16Type()),
    (torch.int64, IntegerType(64)),
    (torch.int32, IntegerType(32)),
    (torch.int16, IntegerType(16)),
    (torch.int8, IntegerType(8)),
    (torch.uint8, IntegerType(8, Signedness.UNSIGNED)),
    (torch.bool, IntegerType(1)),
    (torch.complex64, ComplexType(Float32Type())),
    (torch.complex128, ComplexType(Float64Type())),
]


def element_type_of(dtype: torch.dtype) -> Attribute:
    for t, a in _DTYPES:
        if t == dtype:
            return a
    raise TypeError(f"unsupported tensor dtype {dtype}")


def dtype_of(element_type: Attribute) -> torch.dtype:
    for t, a in _DTYPES:
        if a == element_type:
            return t
    raise TypeError(f"no torch dtype for element type {element_type}")


def tensor_type_of(t: torch.Tensor) -> TensorType:
    """Its type; a size known only at run time (a symbolic size of a fake tensor,
    e.g. how many rows a boolean mask selects) is a dynamic dimension (`?`)."""
    return TensorType(element_type_of(t.dtype), [n if isinstance(n, int) else DYNAMIC_INDEX for n in t.shape])


def fits_i64(n: int) -> bool:
    return -(2 ** 63) <= n < 2 ** 63


def type_of_value(v: Any) -> Attribute:
    """The IR type of a value computed at compile time (fake tensors included)."""
    if isinstance(v, torch.Tensor):
        return tensor_type_of(v)
    if isinstance(v, bool):
        return i1
    if isinstance(v, int):
        return i64 if fits_i64(v) else d.PYOBJ  # (Python's ints have no bound: a big one is an object)
    if isinstance(v, float):
        return f64
    if isinstance(v, tuple) and not isinstance(v, torch.Size) and v:
        types = tuple(type_of_value(x) for x in v)
        if all(isinstance(t, (TensorType, TupleType)) for t in types):
            return TupleType(types)
    return d.PYOBJ


def describe(t: Attribute) -> str:
    """`1x3x32x32xf32`-style text for messages."""
    if isinstance(t, TensorType):
        dims = "x".join(str(x) if x >= 0 else "?" for x in t.get_shape())
        return f"{dims}x{t.element_type}" if dims else f"{t.element_type}"
    return str(t)


_KINDS = {"i64": "an int", "f64": "a float", "i1": "a bool", "!dycl.pyobj": "a Python object"}


def kind_of(t: Attribute) -> str:
    """What a value of type `t` is, in Python's words, for messages."""
    if isinstance(t, TensorType):
        return f"a {describe(t)} tensor"
    if isinstance(t, TupleType):
        return "a tuple"
    if isinstance(t, d.ListType):
        return "a list"
    return _KINDS.get(str(t), str(t))


# On @forward: the input signature (dycl/signature.py) whose named dimensions are
# the `?` dimensions of its arguments; shape-inference gives each name one size.
SIGNATURE_ATTR = "dycl.signature"


def signature_types(types: list[Attribute], signature: Any) -> list[Attribute]:
    """The argument types with the signature's symbolic dimensions dynamic and
    named (`tensor<?x8xf32, ["b", ""]>`)."""
    if signature is None or not signature.dynamic:
        return types
    out: list[Attribute] = []
    for t, spec in zip(types, signature.inputs):
        if isinstance(t, TensorType):
            names = [s if isinstance(s, str) and not s.startswith("?") else "" for s in spec.dims]
            t = with_dim_names(TensorType(t.element_type, [DYNAMIC_INDEX if isinstance(s, str) else n
                                                           for n, s in zip(t.get_shape(), spec.dims)]), names)
        out.append(t)
    return out


def with_dim_names(t: TensorType, names: list[str]) -> TensorType:
    """`t` with its dynamic dimensions named (the tensor encoding: one string per
    dimension, "" for a size or an unnamed `?`); no names, no encoding."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    shape = t.get_shape()
    names = [n if shape[k] < 0 else "" for k, n in enumerate(names)]
    if not any(names):
        return TensorType(t.element_type, shape)
    return TensorType(t.element_type, shape, ArrayAttr([StringAttr(n) for n in names]))


def dim_names(t: Attribute) -> list[str]:
    """The names of a tensor type's dimensions ("" where none): a name relates the
    dimensions that carry it (one size on a call), across values and functions."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    if not isinstance(t, TensorType):
        return []
    enc = t.encoding
    rank = len(t.get_shape())
    if isinstance(enc, ArrayAttr) and len(enc.data) == rank and all(isinstance(e, StringAttr) for e in enc.data):
        return [e.data for e in enc.data]
    return [""] * rank


def mark_signature(f: Any, signature: Any) -> None:
    from xdsl.dialects.builtin import StringAttr

    if signature is not None and signature.dynamic:
        f.attributes[SIGNATURE_ATTR] = StringAttr(signature.text())
