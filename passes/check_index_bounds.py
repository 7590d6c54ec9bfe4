"""check-index-bounds: eager's index errors for indices computed from data
(and its error for an integer division by zero).

`nn.Embedding`, `index_select`, `gather` and integer-tensor indexing raise in
eager when an index is out of range. Compiled kernels do not check: TVM reads
past the table (garbage, or a crash for a huge index), ONNX Runtime's Gather
wraps negative indices. So a model fed a bad token id would return a value
where eager raises — a silent wrong answer.

This pass guards every such op whose indices are not known to be in range: the
tensor code computes `all(lo <= idx < n)` and indexes with `idx % n` (so the
kernel never reads out of bounds), and the host raises eager's
exception, with eager's message (the first index out of range, which the tensor
code finds and the host reads only then), when the check failed. A table whose
size is known only at run time is read with one zero row more, so the wrapped
index is in range even where it is empty. The check is marked `dycl.bounds_check`, so
that `sink-state-stores` moves it past the tensor work after it: it costs one
predicate read per sub-DNN, not a cut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dycl.classify import TENSOR, classify
from dycl.dialects import dycl as d
from dycl.models import model_of
from dycl.types import dtype_of

BOUNDS_CHECK_ATTR = "dycl.bounds_check"

# What eager raises (class, message; {dim} and {size} filled in).
_RANGE = ("builtins.IndexError", "index out of range in self")
# ({index}: the first index out of range, which only the run knows)
_SELECT_INNER = ("builtins.RuntimeError", "INDICES element is out of DATA bounds, id={index} axis_dim={size}")
_GATHER = ("builtins.RuntimeError", "index {index} is out of bounds for dimension {dim} with size {size}")
_SUBSCRIPT = ("builtins.IndexError", "index {index} is out of bounds for dimension {dim} with size {size}")
_COPY = ("builtins.IndexError", "index_copy_(): index {index} is out of bounds for dimension {dim} with size {size}")
_ONE_HOT = ("builtins.RuntimeError", "Class values must be smaller than num_classes.")
_ONE_HOT_NEGATIVE = "Class values must be non-negative."  # (eager's text where the first bad one is < 0)
_DIVIDE = ("builtins.RuntimeError", "ZeroDivisionError")
_NEGATIVE_POWER = ("builtins.RuntimeError", "Integers to negative integer powers are not allowed.")
_NARROW = ("builtins.RuntimeError", "start + length exceeds dimension size ({size}).")
_NARROW_START = ("builtins.IndexError", "start out of range (expected to be in range of [-n, n] for the dimension "
                                        "size n = {size})")
_REPEATS = ("builtins.RuntimeError", "repeats can not be negative")
_TARGET = ("builtins.IndexError", "Target {index} is out of bounds.")
# Losses over class indices: (target's argument position, ignore_index's default).
_CLASS_LOSSES = {"torch.nn.functional.cross_entropy": 1, "torch.nn.functional.nll_loss": 1}

# Ops taking (input, dim, index, ...), by what eager raises for a bad index.
_DIM_INDEX_OPS = {
    "index_select": "select",
    **{n: "scatter" for n in ("gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
                              "scatter_reduce_", "index_add", "index_add_")},  # (index_add: RuntimeError too)
    **{n: "copy" for n in ("index_copy", "index_copy_", "index_fill", "index_fill_")},
}
# Reductions without an identity: eager raises on an empty input, kernels give NaN.
_NO_IDENTITY = frozenset({"max", "min", "argmax", "argmin", "amax", "amin"})
# Integer division and remainder: eager raises for a zero divisor, kernels trap (SIGFPE).
_DIVISIONS = frozenset({"_operator.mod", "_operator.floordiv", "torch.remainder", "torch.fmod", "torch.floor_divide",
                        "remainder", "fmod", "floor_divide", "__mod__", "__floordiv__"})

# Ops that keep the values of their first operand (so its bounds).
_SAME_VALUES = frozenset({"unsqueeze", "squeeze", "view", "reshape", "flatten", "long", "int", "to", "clone",
                          "contiguous", "expand", "expand_as", "detach", "_operator.getitem", "t", "permute",
                          "transpose", "torch.unsqueeze", "torch.squeeze", "torch.reshape", "torch.flatten",
                          "torch.cat", "torch.stack", "repeat"})


@dataclass
class _Site:
    """One operand to guard: `operand` of `op`, an index valid in `lo <= i < size`,
    or (`nonzero`) an integer divisor."""
    op: Operation
    operand: int
    lo: int
    size: int
    dim: int
    error: tuple[str, str]
    nonzero: bool = False
    nonempty: bool = False  # `operand` must hold at least one element (a max of nothing)
    wrap: int = 0  # a negative host int counts from this size (narrow's start)
    # A size known only at run time (`?`): dim `dim` of this tensor (then `size` is -1).
    sized: SSAValue | None = None
    nonnegative: bool = False  # `operand` must be >= 0 (repeat counts)
    ignore: int | None = None  # a value allowed besides the range (a loss's ignore_index)
    # The dimension eager's message names, where it is not `dim`: a subscript's
    # integer tensor is counted among the tuple's tensor indices.
    shown_dim: int | None = None
    # (op, operand) of a table whose `sized` dim may be 0 that the op reads: padded
    # with one row there, so a kernel never reads an empty table (TVM: SIGSEGV on
    # `x[x[:, 0] > 0][i]` where the mask selected nothing) before the host raises.
    table: tuple[Operation, int] | None = None


def _name(op: Operation) -> str:
    if isinstance(op, d.CallFunctionOp):
        return op.target.data
    if isinstance(op, d.CallMethodOp):
        return op.method.data
    return ""


def _int_tensor(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, TensorType) and isinstance(t.element_type, IntegerType) and t.element_type != i1


def _static_size(v: SSAValue, dim: int) -> int | None:
    t = v.type
    if not isinstance(t, TensorType):
        return None
    shape = t.get_shape()
    if not -len(shape) <= dim < len(shape):
        return None
    n = shape[dim]
    return n if n > 0 else None  # dynamic (-1) or empty: not checked


def _size_of(v: SSAValue, dim: int) -> tuple[int, SSAValue | None] | None:
    """Dim `dim` of tensor `v`: (size, None) where known, (-1, v) where only known at
    run time (`?`: read in the tensor code), None where it cannot be checked."""
    t = v.type
    if not isinstance(t, TensorType) or not -len(t.get_shape()) <= dim < len(t.get_shape()):
        return None
    n = t.get_shape()[dim]
    return (n, None) if n > 0 else (-1, v) if n < 0 else None


def _int_constant(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _string_constant(v: SSAValue) -> str | None:
    owner = v.owner
    return owner.value.data if isinstance(owner, d.ConstantOp) and isinstance(owner.value, StringAttr) else None


def _arg(op: Operation, i: int, keyword: str) -> int | None:
    """The operand index of Python argument `i` (or `keyword=`) of a call op."""
    assert isinstance(op, (d.CallFunctionOp, d.CallMethodOp, d.CallModuleOp))
    names = [k.data for k in op.kwargs.data] if op.kwargs else []
    n_pos = len(op.args) - len(names)
    if i < n_pos:
        return i
    if keyword in names:
        return n_pos + names.index(keyword)
    return None


def _sites(op: Operation, model: nn.Module) -> list[_Site]:
    """The index operands of `op` that eager checks."""
    if isinstance(op, d.CallModuleOp):
        try:
            m = model.get_submodule(op.path.data)
        except AttributeError:
            return []
        if type(m) is nn.Embedding and (k := _arg(op, 0, "input")) is not None:
            return [_Site(op, k, 0, m.num_embeddings, 0, _RANGE)]
        return []
    name = _name(op)
    if name == "torch.nn.functional.embedding":
        k, w = _arg(op, 0, "input"), _arg(op, 1, "weight")
        if k is not None and w is not None and (known := _size_of(op.args[w], 0)) is not None:
            return [_Site(op, k, 0, known[0], 0, _RANGE, sized=known[1], table=(op, w))]
        return []
    base = name.removeprefix("torch.")
    if base in _DIM_INDEX_OPS and (name == base) == isinstance(op, d.CallMethodOp):
        method = isinstance(op, d.CallMethodOp)
        # `x.gather(dim, idx)` and `torch.gather(x, dim, idx)`: operands (x, dim, idx) either way
        src = 0 if method else _arg(op, 0, "input")
        dim_at, idx_at = _arg(op, 1, "dim"), _arg(op, 2, "index")
        if src is None or dim_at is None or idx_at is None:
            return []
        dim = _int_constant(op.args[dim_at])
        if dim is None or (known := _size_of(op.args[src], dim)) is None:
            return []
        rank = len(op.args[src].type.get_shape())  # type: ignore[attr-defined]
        dim %= rank
        kind = _DIM_INDEX_OPS[base]
        # as eager's CPU kernels raise
        error = _GATHER if kind == "scatter" else (_COPY if base.startswith("index_copy") else _SUBSCRIPT) \
            if kind == "copy" else _SELECT_INNER if base == "index_select" and dim else _RANGE
        if base.startswith("index_add") and rank == 1:
            error = _RANGE  # (eager's kernel for a 1-D input indexes as index_select does)
        # (index_fill takes negative indices, counted from the end, as eager does)
        lo = -known[0] if base.startswith("index_fill") and known[1] is None else 0
        reads = base in ("index_select", "gather")
        return [_Site(op, idx_at, lo, known[0], dim, error, sized=known[1], table=(op, src) if reads else None)]
    if name in _CLASS_LOSSES and (target := _arg(op, 1, "target")) is not None and _int_tensor(op.args[target]) \
            and isinstance(op.args[0].type, TensorType) and len(op.args[0].type.get_shape()) >= 1:
        shape = op.args[0].type.get_shape()
        classes = shape[1] if len(shape) >= 2 else shape[0]
        at = _arg(op, 4, "ignore_index")
        ignore = -100 if at is None else _int_constant(op.args[at])
        if classes >= 0 and ignore is not None:
            # (eager raises for a class index out of range; kernels read past the input)
            return [_Site(op, target, 0, classes, 1, _TARGET, ignore=ignore)]
    if base == "repeat_interleave" and (name == base) == isinstance(op, d.CallMethodOp) and len(op.args) >= 2 and \
            _int_tensor(op.args[1]):
        return [_Site(op, 1, 0, 0, 0, _REPEATS, nonnegative=True)]
    if name == "torch.nn.functional.one_hot" and (k := _arg(op, 0, "tensor")) is not None:
        classes = _arg(op, 1, "num_classes")
        n = _int_constant(op.args[classes]) if classes is not None else None
        return [_Site(op, k, 0, n, 0, _ONE_HOT)] if n is not None and n > 0 else []
    if base in _NO_IDENTITY and isinstance(op.args[0].type, TensorType) and (
            name == base) == isinstance(op, d.CallMethodOp) and _may_be_empty(op):
        return [_Site(op, 0, 0, 0, 0, _empty_reduction(op, base), nonempty=True)]
    if base in ("div", "divide", "div_", "divide_") and (name == base) == isinstance(op, d.CallMethodOp) and \
            (rounding := _arg(op, 2, "rounding_mode")) is not None and _string_constant(op.args[rounding]) in (
                "trunc", "floor") and _int_tensor(op.args[0]) and (
            _int_tensor(op.args[1]) or op.args[1].type == i64 and _int_constant(op.args[1]) is None):
        # (an integer division by zero traps the process in compiled kernels: SIGFPE)
        return [_Site(op, 1, 0, 0, 0, _DIVIDE, nonzero=True)]
    if name in _DIVISIONS and len(op.args) == 2 and _int_tensor(op.args[0]) and (
            _int_tensor(op.args[1]) or op.args[1].type == i64 and _int_constant(op.args[1]) is None):
        return [_Site(op, 1, 0, 0, 0, _DIVIDE, nonzero=True)]
    if name == "_operator.getitem" and len(op.args) == 2 or name == "dycl.tensor_ops.setitem" and len(op.args) == 3:
        return _subscript_sites(op)
    if name in ("_operator.pow", "torch.pow", "pow") and len(op.args) == 2 and _int_tensor(op.args[0]) and \
            _host_int(op.args[1]):
        return [_Site(op, 1, 0, 2**62, 0, _NEGATIVE_POWER)]  # eager refuses `int_tensor ** -1`
    if base == "narrow" and (name == base) == isinstance(op, d.CallMethodOp) and len(op.args) == 4 and \
            _host_int(op.args[2]) and (dim := _int_constant(op.args[1])) is not None and \
            (length := _int_constant(op.args[3])) is not None and (n := _static_size(op.args[0], dim)) is not None \
            and 0 <= length <= n:
        # a start in -n..n-length (wrapped as eager wraps it) keeps the slice inside the dim
        return [_Site(op, 2, 0, n - length + 1, dim, _NARROW, wrap=n)]
    if base == "narrow" and (name == base) == isinstance(op, d.CallMethodOp) and len(op.args) == 4 and \
            _host_int(op.args[2]) and (dim := _int_constant(op.args[1])) is not None and \
            (length := _int_constant(op.args[3])) is not None and length >= 0 and \
            isinstance(op.args[0].type, TensorType) and -len(shape := op.args[0].type.get_shape()) <= dim < len(shape) \
            and shape[dim] < 0:
        # a `?` dim: `-n <= start <= n - length`, n read in the tensor code
        return [_Site(op, 2, 0, length, dim % len(shape), _NARROW, sized=op.args[0])]
    return []


def _empty_reduction(op: Operation, name: str) -> tuple[str, str]:
    """What eager raises for `name` over an empty input: IndexError naming the dim
    (max/min/argmax/argmin normalise it, amax/amin do not); without a dim, a
    RuntimeError (an IndexError for argmax/argmin)."""
    dim_at = _arg(op, 1, "dim")
    if dim_at is None:
        arg = name in ("argmax", "argmin")
        return ("builtins.IndexError" if arg else "builtins.RuntimeError",
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                + ("" if arg else " Specify the reduction dim with the 'dim' argument."))
    dim = _int_constant(op.args[dim_at])
    assert dim is not None  # (_may_be_empty)
    if name not in ("amax", "amin") and dim < 0:
        dim += len(op.args[0].type.get_shape())  # type: ignore[attr-defined]
    return "builtins.IndexError", f"{name}(): Expected reduction dim {dim} to have non-zero size."


def _may_be_empty(op: Operation) -> bool:
    """A reduction over the whole input, or over one dim, whose size is known only
    at run time (`?`) while the other sizes are known and not 0."""
    shape = op.args[0].type.get_shape()  # type: ignore[attr-defined]
    dynamic = [n < 0 for n in shape]
    if 0 in shape or not any(dynamic):
        return False  # (empty at compile time: shape-inference already raised eager's error)
    dim_at = _arg(op, 1, "dim")
    if dim_at is None:
        return True
    dim = _int_constant(op.args[dim_at])
    return dim is not None and -len(shape) <= dim < len(shape) and dynamic[dim] and sum(dynamic) == 1


def _subscript_sites(op: Operation) -> list[_Site]:
    """`x[idx]`, `x[0, idx]`, `x[:, idx]`, `x[None, idx]`: an integer tensor indexes
    one dim, negative values from its end (as Python's); ints and slices take one
    dim, None none. A mask or an Ellipsis leaves the subscript unchecked."""
    src, index = op.operands[0], op.operands[1]
    if not isinstance(src.type, TensorType):
        return []
    shape = src.type.get_shape()
    table = (op, 0) if _name(op) == "_operator.getitem" else None
    if (_int_tensor(index) or _host_int(index)) and shape and shape[0] < 0:
        return [_Site(op, 1, 0, -1, 0, _SUBSCRIPT, sized=src, table=table)]
    if _int_tensor(index) or _host_int(index):
        return [_Site(op, 1, -shape[0], shape[0], 0, _SUBSCRIPT)] if shape and shape[0] > 0 else []
    tup = index.owner
    if not isinstance(tup, d.MakeTupleOp) or index.uses.get_length() != 1:
        return []
    sites: list[_Site] = []
    dim = advanced = 0
    for k, v in enumerate(tup.elements):
        owner = v.owner
        # (eager names an int's or a 0-d tensor's own dim, and counts the other integer
        # tensors among themselves: `y[:, t]` out of range is "for dimension 0")
        shown = None if not (isinstance(v.type, TensorType) and v.type.get_shape()) else advanced
        advanced += shown is not None
        if (_int_tensor(v) or _host_int(v)) and dim < len(shape) and shape[dim] < 0:
            sites.append(_Site(tup, k, 0, -1, dim, _SUBSCRIPT, sized=src, shown_dim=shown, table=table))
            dim += 1
        elif _int_tensor(v) or _host_int(v):
            if dim >= len(shape) or shape[dim] <= 0:
                return []
            sites.append(_Site(tup, k, -shape[dim], shape[dim], dim, _SUBSCRIPT, shown_dim=shown))
            dim += 1
        elif v.type == i64 or _name(owner) == "builtins.slice":
            dim += 1
        elif not (isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr)):
            return []  # a mask, an Ellipsis, something unknown: left as it is
    return sites


def _host_int(v: SSAValue) -> bool:
    """An int the host computes (`i = int(x.sum())`): compiled kernels read past the
    end with it (garbage, or a crash) where eager raises IndexError."""
    return v.type == i64 and _int_constant(v) is None


def _known_range(v: SSAValue, depth: int = 0) -> tuple[int, int] | None:
    """Bounds (inclusive) of the values of integer tensor `v`, where they are
    known at compile time: constants, `argmax`/`argmin` (a position along a
    dim), and ops that only move values around."""
    op = v.owner
    if depth > 32 or not isinstance(op, Operation):
        return None
    if isinstance(op, d.ItemOp):  # k = int(probs.argmax()): the host int holds the tensor's value
        return _known_range(op.operands[0], depth + 1)
    if isinstance(op, d.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        values = [int(x) for x in op.value.get_values()]
        return (min(values), max(values)) if values else None
    name = _name(op)
    if name in ("argmax", "argmin", "torch.argmax", "torch.argmin"):
        src = op.operands[0]
        dim_at = _arg(op, 1, "dim")
        if not isinstance(src.type, TensorType):
            return None
        shape = src.type.get_shape()
        if dim_at is None:
            n = int(np.prod(shape)) if all(s > 0 for s in shape) else 0
        else:
            dim = _int_constant(op.args[dim_at])
            n = shape[dim] if dim is not None and -len(shape) <= dim < len(shape) else 0
        return (0, n - 1) if n > 0 else None
    if name in ("torch.tensor", "torch.full") and isinstance(op, d.CallFunctionOp):
        fill = op.args[1] if name == "torch.full" and len(op.args) > 1 else op.args[0]
        values = _constant_ints(fill)
        return (min(values), max(values)) if values else None
    if name in _SAME_VALUES and op.operands:
        ranges = [_known_range(x, depth + 1) for x in op.operands if _int_tensor(x)]
        if ranges and all(r is not None for r in ranges):
            return min(r[0] for r in ranges if r), max(r[1] for r in ranges if r)
    return None


def _constant_ints(v: SSAValue) -> list[int]:
    """The ints of a constant (nested lists/tuples of) Python ints, else []."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and v.type == i64:
        return [op.value.value.data]
    if isinstance(op, d.MakeTupleOp):
        out: list[int] = []
        for e in op.elements:
            inner = _constant_ints(e)
            if not inner:
                return []
            out += inner
        return out
    return []


def _guard(site: _Site, model_op: Operation) -> None:
    """Insert before `site.op`: the check of its index operand, and the operand
    wrapped into range; after it, the host's raise when the check failed."""
    idx = site.op.operands[site.operand]
    t = idx.type
    ops: list[Operation] = []

    def emit(o: Operation) -> SSAValue:
        o.location = site.op.location
        ops.append(o)
        return o.results[0]

    if t == i64 and site.sized is not None and site.error is _NARROW:
        _guard_sized_narrow(site, idx, emit, ops, model_op)
        return
    if t == i64 and site.sized is not None:
        # A host int into a dim whose size only the tensor code knows: checked there,
        # as a 0-d index tensor (which indexes as the int does).
        t = TensorType(i64, [])
        idx = emit(d.CallFunctionOp("torch.as_tensor", [idx], result_type=t))
    elif t == i64:
        (_guard_host_divisor if site.nonzero else _guard_host_index)(site, idx, model_op)
        return
    assert isinstance(t, TensorType)
    mask_type = TensorType(i1, t.get_shape(), t.encoding)

    if site.nonempty:
        ones = emit(d.CallFunctionOp("torch.ones_like", [idx], result_type=t))
        ok = emit(d.CallMethodOp("any", [ones], result_type=TensorType(i1, [])))
        padded = _padded_for_reduction(site, idx, t, emit)
        if padded is None:
            Rewriter.insert_op(ops, InsertPoint.before(site.op))
            _raise_unless(site, ok, model_op)
        else:
            _finish(site, ops, padded, ok, model_op)
        return
    if site.nonzero:
        zero = emit(arith.ConstantOp(IntegerAttr(0, i64)))
        one = emit(arith.ConstantOp(IntegerAttr(1, i64)))
        is_zero = emit(d.CallFunctionOp("_operator.eq", [idx, zero], result_type=mask_type))
        ok = emit(d.CallMethodOp("all", [emit(d.CallFunctionOp("_operator.ne", [idx, zero], result_type=mask_type))],
                                 result_type=TensorType(i1, [])))
        # A zero divisor divides by 1 instead: the kernel never traps, the host raises.
        safe = emit(d.CallFunctionOp("torch.where", [is_zero, one, idx], result_type=t))
        _finish(site, ops, safe, ok, model_op)
        return
    if site.nonnegative:
        zero = emit(arith.ConstantOp(IntegerAttr(0, i64)))
        ok = emit(d.CallMethodOp("all", [emit(d.CallFunctionOp("_operator.ge", [idx, zero], result_type=mask_type))],
                                 result_type=TensorType(i1, [])))
        safe = emit(d.CallFunctionOp("torch.clamp", [idx, zero], result_type=t))  # no huge repeat for -1
        _finish(site, ops, safe, ok, model_op)
        return
    if site.sized is not None:
        # The size as the tensor code reads it (`h.shape[dim]`), at least 1 for the
        # wrap below: an index into an empty table fails the check all the same.
        # (Bounds from it computed as tensors: the sub-DNN takes the size itself, which
        # its build's probes keep equal to the table's, not host ints derived from it.)
        n = _run_time_size(site, emit)
        scalar = TensorType(i64, [])
        n_t = emit(d.CallFunctionOp("torch.as_tensor", [n], result_type=scalar))
        one = emit(arith.ConstantOp(IntegerAttr(1, i64)))
        hi = emit(d.CallFunctionOp("_operator.sub", [n_t, one], result_type=scalar))
        lo = emit(d.CallFunctionOp("_operator.neg", [n_t], result_type=scalar)) if _subscript(site) else \
            emit(arith.ConstantOp(IntegerAttr(site.lo, i64)))
        # (a where, not a clamp: TVM cannot legalize an integer clip without an upper bound)
        empty = emit(d.CallFunctionOp("_operator.lt", [n_t, one], result_type=TensorType(i1, [])))
        size = emit(d.CallFunctionOp("torch.where", [empty, one, n_t], result_type=scalar))
    else:
        lo = emit(arith.ConstantOp(IntegerAttr(site.lo, i64)))
        hi = emit(arith.ConstantOp(IntegerAttr(site.size - 1, i64)))
    ge = emit(d.CallFunctionOp("_operator.ge", [idx, lo], result_type=mask_type))
    le = emit(d.CallFunctionOp("_operator.le", [idx, hi], result_type=mask_type))
    both = emit(d.CallFunctionOp("_operator.and_", [ge, le], result_type=mask_type))
    if site.ignore is not None:  # (a loss's ignore_index passes as it is)
        skip = emit(arith.ConstantOp(IntegerAttr(site.ignore, i64)))
        ignored = emit(d.CallFunctionOp("_operator.eq", [idx, skip], result_type=mask_type))
        both = emit(d.CallFunctionOp("_operator.or_", [both, ignored], result_type=mask_type))
    ok = emit(d.CallMethodOp("all", [both], result_type=TensorType(i1, [])))
    bad = _first_outside(idx, both, emit) if "{index}" in site.error[1] or site.error is _ONE_HOT else None
    if site.sized is None:
        size = emit(arith.ConstantOp(IntegerAttr(site.size, i64)))
    # Wrapped into 0..size-1 (negative subscripts as Python wraps them): kernels
    # never read out of range, nor see a negative index (TVM's take does not wrap).
    safe = emit(d.CallFunctionOp("torch.remainder", [idx, size], result_type=t))
    if site.ignore is not None:
        safe = emit(d.CallFunctionOp("torch.where", [ignored, idx, safe], result_type=t))
    if site.table is not None:
        _pad_table(site, site.table, emit)
    _finish(site, ops, safe, ok, model_op, bad, n if site.sized is not None else None)


def _pad_table(site: _Site, table: tuple[Operation, int], emit: Any) -> None:
    """The table read with one zero row more along `site.dim` (`F.pad`): `idx % max(n, 1)`
    is then in range even where the table is empty."""
    reader, at = table
    t = reader.operands[at].type
    assert isinstance(t, TensorType)
    rank = len(t.get_shape())
    widths = [0] * (2 * (rank - site.dim))
    widths[2 * (rank - 1 - site.dim) + 1] = 1  # (F.pad lists the last dim first: its end)
    spec = emit(d.MakeTupleOp([emit(arith.ConstantOp(IntegerAttr(w, i64))) for w in widths]))
    reader.operands[at] = emit(d.CallFunctionOp("torch.nn.functional.pad", [reader.operands[at], spec], result_type=t))


def _first_outside(idx: SSAValue, inside: SSAValue, emit: Any) -> SSAValue:
    """The first element of `idx` where `inside` is false, for eager's message: a
    one-element tensor the host reads only when it raises. Both get one element more, last
    and outside, so the argmax never runs over nothing (it raises in every runtime)."""
    shape = idx.type.get_shape()  # type: ignore[attr-defined]
    n = math.prod(shape) if all(k >= 0 for k in shape) else -1

    def const(v: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(v, i64)))

    def flat_with(x: SSAValue, last: int) -> SSAValue:
        et = x.type.element_type  # type: ignore[attr-defined]
        flat = emit(d.CallMethodOp("reshape", [x, const(-1)], result_type=TensorType(et, [n])))
        pad = emit(d.CallMethodOp("new_full", [flat, emit(d.MakeTupleOp([const(1)])), const(last)],
                                  result_type=TensorType(et, [1])))
        both = emit(d.MakeTupleOp([flat, pad], is_list=True))
        return emit(d.CallFunctionOp("torch.cat", [both, const(0)], result_type=TensorType(et, [n + 1 if n >= 0 else -1])))

    outside = emit(d.CallFunctionOp("torch.where", [inside, const(0), const(1)], result_type=TensorType(i64, shape)))
    first = emit(d.CallMethodOp("argmax", [flat_with(outside, 1)], result_type=TensorType(i64, [])))
    at = emit(d.CallMethodOp("reshape", [first, const(1)], result_type=TensorType(i64, [1])))
    # (index_select: TVM's importer takes no subscript by a 0-d tensor)
    return emit(d.CallMethodOp("index_select", [flat_with(idx, 0), const(0), at],
                               result_type=TensorType(idx.type.element_type, [1])))  # type: ignore[attr-defined]


def _run_time_size(site: _Site, emit: Any) -> SSAValue:
    """Dim `site.dim` of `site.sized` as the tensor code reads it (`h.shape[dim]`)."""
    assert site.sized is not None
    shape = emit(d.CallFunctionOp("builtins.getattr", [site.sized, emit(d.ConstantOp(StringAttr("shape"), d.PYOBJ))],
                                  result_type=d.PYOBJ))
    return emit(d.CallFunctionOp("_operator.getitem", [shape, emit(arith.ConstantOp(IntegerAttr(site.dim, i64)))],
                                 result_type=i64))


def _guard_sized_narrow(site: _Site, start: SSAValue, emit: Any, ops: list[Operation], model_op: Operation) -> None:
    """`h.narrow(dim, start, length)` of a host int start on a dim only the tensor
    code knows (`site.size` is the length): `-n <= start <= n - length` checked
    there; the kernels' slice clamps, so the op itself reads nothing out of range."""
    scalar = TensorType(i1, [])
    start_t = emit(d.CallFunctionOp("torch.as_tensor", [start], result_type=TensorType(i64, [])))
    n = _run_time_size(site, emit)
    lo = emit(d.CallFunctionOp("_operator.neg", [n], result_type=i64))
    ge = emit(d.CallFunctionOp("_operator.ge", [start_t, lo], result_type=scalar))
    le = emit(d.CallFunctionOp("_operator.le", [start_t, n], result_type=scalar))
    in_range = emit(d.CallFunctionOp("_operator.and_", [ge, le], result_type=scalar))
    # as eager: a negative start counts from the end, then start + length <= n
    zero = emit(arith.ConstantOp(IntegerAttr(0, i64)))
    wrapped = emit(d.CallFunctionOp("torch.where", [emit(d.CallFunctionOp("_operator.lt", [start_t, zero],
                                                                          result_type=scalar)),
                                                    emit(d.CallFunctionOp("_operator.add", [start_t, n],
                                                                          result_type=TensorType(i64, []))),
                                                    start_t], result_type=TensorType(i64, [])))
    end = emit(d.CallFunctionOp("_operator.add", [wrapped, emit(arith.ConstantOp(IntegerAttr(site.size, i64)))],
                                result_type=TensorType(i64, [])))
    fits = emit(d.CallFunctionOp("_operator.le", [end, n], result_type=scalar))
    # The kernels slice `start:start + length` without wrapping a negative start
    # (narrow(0, -2, 2) gave no rows): the rows are gathered at the wrapped start
    # (in range whatever the start: the host raises for a bad one).
    op = site.op
    length = site.size
    rows_type = TensorType(i64, [length])
    rows = emit(d.CallFunctionOp("_operator.add", [
        emit(d.CallFunctionOp("torch.arange", [emit(arith.ConstantOp(IntegerAttr(length, i64)))],
                              result_type=rows_type)), wrapped], result_type=rows_type))
    at_least_one = emit(d.CallFunctionOp("builtins.max", [n, emit(arith.ConstantOp(IntegerAttr(1, i64)))],
                                         result_type=i64))
    rows = emit(d.CallFunctionOp("torch.remainder", [rows, at_least_one], result_type=rows_type))
    gathered = emit(d.CallMethodOp("index_select", [site.sized, op.operands[1], rows], result_type=op.results[0].type))
    Rewriter.insert_op(ops, InsertPoint.before(op))
    _raise_unless(site, fits, model_op)
    # (inserted after it, so checked first, as eager checks the start first)
    _raise_unless(replace(site, error=_NARROW_START), in_range, model_op)
    op.results[0].replace_all_uses_with(gathered)
    op.detach()
    op.erase()


def _subscript(site: _Site) -> bool:
    """A Python subscript (negative indices count from the end), not an index op."""
    return site.error is _SUBSCRIPT and _name(site.op) in ("_operator.getitem", "dycl.tensor_ops.setitem", "")


def _guard_host_index(site: _Site, i: SSAValue, model_op: Operation) -> None:
    """A subscript the host computed: `lo <= i < size` on the host where `i` is made,
    the op reads index 0 when it fails (never out of range), the raise after it."""
    where = InsertPoint.after(i.owner) if isinstance(i.owner, Operation) else InsertPoint.at_start(i.owner)
    given = i
    zero = arith.ConstantOp(IntegerAttr(0, i64))
    ops: list[Operation] = [zero]
    if site.wrap:  # narrow(dim, -2, 2): checked and used as the start eager wraps it to
        n = arith.ConstantOp(IntegerAttr(site.wrap, i64))
        negative = arith.CmpiOp(i, zero.result, "slt")
        plus = arith.AddiOp(i, n.result)
        wrapped = arith.SelectOp(negative.result, plus.result, i)
        ops += [n, negative, plus, wrapped]
        i = wrapped.result
    lo = arith.ConstantOp(IntegerAttr(site.lo, i64))
    size = arith.ConstantOp(IntegerAttr(site.size, i64))
    ge = arith.CmpiOp(i, lo.result, "sge")
    lt = arith.CmpiOp(i, size.result, "slt")
    ok = arith.AndIOp(ge.result, lt.result)
    safe = arith.SelectOp(ok.result, i, zero.result)
    ops += [lo, size, ge, lt, ok, safe]
    for o in ops:
        o.location = site.op.location
    Rewriter.insert_op(ops, where)
    site.op.operands[site.operand] = safe.result
    _raise_unless(site, ok.result, model_op, given)


def _guard_host_divisor(site: _Site, n: SSAValue, model_op: Operation) -> None:
    """A divisor the host computed (`a % n`, `n = int(...)`): `n + (n == 0)` and
    `n != 0` computed on the host where `n` is made (no new cut), the raise after
    the op as for the others."""
    zero = arith.ConstantOp(IntegerAttr(0, i64))
    is_zero = arith.CmpiOp(n, zero.result, "eq")
    as_int = arith.ExtUIOp(is_zero.result, i64)
    safe = arith.AddiOp(n, as_int.result)
    ok = arith.CmpiOp(n, zero.result, "ne")
    ops = [zero, is_zero, as_int, safe, ok]
    for o in ops:
        o.location = site.op.location
    where = InsertPoint.after(n.owner) if isinstance(n.owner, Operation) else InsertPoint.at_start(n.owner)
    Rewriter.insert_op(ops, where)
    site.op.operands[site.operand] = safe.result
    _raise_unless(site, ok.result, model_op)


def _padded_for_reduction(site: _Site, x: SSAValue, t: TensorType, emit: Any) -> SSAValue | None:
    """`x` with one more row of the reduction's identity-like value (-inf for a max,
    +inf for a min) along its dynamic dim: a kernel never reduces nothing (ONNX
    Runtime's ArgMax raises its own error on an empty input, before the host's
    check could raise eager's); with rows, the result is unchanged (the extra
    row comes last, so it never wins a tie). None where it would move an index
    (argmax without a dim over a later dim) or for bool."""
    op = site.op
    name = _name(op).rpartition(".")[2]
    shape = t.get_shape()
    dyn = next(k for k, n in enumerate(shape) if n < 0)
    dtype = dtype_of(t.element_type)
    if dtype == torch.bool or name in ("argmax", "argmin") and dyn != 0 and _arg(op, 1, "dim") is None:
        return None
    low = name in ("max", "argmax", "amax")
    if dtype.is_floating_point:
        fill = emit(arith.ConstantOp(FloatAttr(float("-inf") if low else float("inf"), f64)))
    else:
        info = torch.iinfo(dtype)
        fill = emit(arith.ConstantOp(IntegerAttr(info.min if low else info.max, i64)))
    sizes = [emit(arith.ConstantOp(IntegerAttr(1 if k == dyn else n, i64))) for k, n in enumerate(shape)]
    size = emit(d.MakeTupleOp(sizes))
    pad_type = TensorType(t.element_type, [1 if k == dyn else n for k, n in enumerate(shape)])
    pad = emit(d.CallMethodOp("new_full", [x, size, fill], result_type=pad_type))
    both = emit(d.MakeTupleOp([x, pad], is_list=True))
    axis = emit(arith.ConstantOp(IntegerAttr(dyn, i64)))
    return emit(d.CallFunctionOp("torch.cat", [both, axis], result_type=t))


def _finish(site: _Site, ops: list[Operation], safe: SSAValue, ok: SSAValue, model_op: Operation,
            index: SSAValue | None = None, size: SSAValue | None = None) -> None:
    """Insert the check's tensor ops before the guarded op, which takes `safe`, and
    the host's raise (when `ok` is false) after `model_op`."""
    Rewriter.insert_op(ops, InsertPoint.before(site.op))
    site.op.operands[site.operand] = safe
    _raise_unless(site, ok, model_op, index, size)


# What eager raises for an index into an empty dim, by the site's usual error.
_EMPTY = {_SUBSCRIPT: ("builtins.IndexError", "index is out of bounds for dimension with size 0"),
          _RANGE: ("builtins.RuntimeError", "index_select(): self indexing axis dim should be positive")}


def _unless_empty(size: SSAValue, raising: list[Operation], error: tuple[str, str]) -> list[Operation]:
    """`raising` where the indexed dim is not empty; eager's own `error` where it is."""
    return _otherwise(size, "eq", error, raising)


def _unless_negative(index: SSAValue, raising: list[Operation]) -> list[Operation]:
    """one_hot's `raising` where the first class out of range is too large; eager's
    other text where it is negative (the index read stays before the test)."""
    return [*raising[:-2], *_otherwise(index, "slt", (_ONE_HOT[0], _ONE_HOT_NEGATIVE), raising[-2:])]


def _otherwise(value: SSAValue, predicate: str, error: tuple[str, str], raising: list[Operation]) -> list[Operation]:
    """Where `value <predicate> 0`, eager's other `error`; `raising` where not."""
    zero = arith.ConstantOp(IntegerAttr(0, i64))
    test = arith.CmpiOp(value, zero.result, predicate)
    text = d.ConstantOp(StringAttr(error[1]), d.PYOBJ)
    then_block = Block([text, d.RaiseOp(error[0], [text.result]), d.YieldOp()])
    return [zero, test, d.IfOp(test.result, [], Region(then_block), Region(Block([*raising, d.YieldOp()])))]


def _raise_unless(site: _Site, ok: SSAValue, model_op: Operation, index: SSAValue | None = None,
                  size: SSAValue | None = None) -> None:
    """After `model_op`: the host reads `ok` and raises the site's error when false,
    with the first index out of range (`index`: a host int, or a 0-d tensor read
    there) and the run's size (`size`, where only the run knows it) in the text."""
    cls, message = site.error
    then_block = Block()
    then_block.add_op(d.YieldOp())
    else_block = Block()
    raising: list[Operation] = []
    if index is not None and isinstance(index.type, TensorType):
        raising.append(item := d.ItemOp(index, i64))
        index = item.result
    if index is None:  # (eager's text without the value: better than a wrong one)
        message = message.replace("index {index} ", "index ").replace("id={index} ", "")
    known = {"index": index, "size": size if site.sized is not None else None}
    fields = {"dim": site.dim if site.shown_dim is None else site.shown_dim,
              "size": site.wrap or (site.size if site.sized is None else "(its size at run time)"),
              **{k: f"\0{k}\0" for k, v in known.items() if v is not None}}
    # Split at the run's values: static text at even positions, their names at odd ones.
    pieces = message.format(**fields).split("\0")
    values = [known[k] for k in pieces[1::2]]
    if values:
        raising.append(d.RaiseOp(cls, values, message="{}".join(pieces[0::2])))  # type: ignore[arg-type]
    else:
        raising += [msg := d.ConstantOp(StringAttr(pieces[0]), d.PYOBJ), d.RaiseOp(cls, [msg.result])]
    checked = site.op.operands[site.operand].type
    if known["size"] is not None and (site.error is _RANGE or site.error is _SUBSCRIPT and isinstance(
            checked, TensorType) and checked.get_shape()):  # (an int's or 0-d tensor's text is the usual one)
        raising = _unless_empty(known["size"], raising, _EMPTY[site.error])  # type: ignore[arg-type]
    if site.error is _ONE_HOT and index is not None:
        raising = _unless_negative(index, raising)
    for o in raising:
        for inner in o.walk():
            inner.location = site.op.location
        else_block.add_op(o)
    else_block.add_op(d.YieldOp())
    read = d.ToBoolOp(ok)
    check = d.IfOp(read.result, [], Region(then_block), Region(else_block))
    check.attributes[BOUNDS_CHECK_ATTR] = UnitAttr()
    for o in (read, check):
        o.location = site.op.location
    Rewriter.insert_op([read, check], InsertPoint.after(model_op))


@dataclass(frozen=True)
class CheckIndexBoundsPass(ModulePass):
    """Guard indices that come from data as eager does: embedding lookups
    (`nn.Embedding`, `F.embedding`), `index_select`, `gather` and integer-tensor
    subscripts get a check of `lo <= idx < size` and the index wrapped into range
    (`idx % size`)
    in the tensor code, and a host `dycl.raise` of eager's exception
    (`IndexError: index out of range in self`, ...) when the check fails.

    Expects: typed dycl IR (after `shape-inference`); the module's `dycl.model`
    (or the `model` option) names the model, whose `nn.Embedding` submodules are
    recognised by type.
    Guarantees: every such op in tensor code whose indices are not known to be in
    range (constants, `argmax`/`argmin` of a dim no longer than the table, and
    reshapes of those are) reads only in-range entries, and the call raises where
    eager raises. A size known only at run time (`?`, rows a mask selected) is read
    in the tensor code (`h.shape[0]`), for index tensors and for host ints (made a
    0-d index tensor there); a host int narrowing such a dim is checked there
    (eager's IndexError/RuntimeError) and the rows are gathered (`index_select`)
    at the start wrapped as eager wraps it.
    Negative `repeat_interleave` counts raise eager's RuntimeError (the kernel gets
    them clamped at 0). A max/min/argmax/argmin/amax/amin over a `?` dim raises
    eager's IndexError/RuntimeError when it is empty; its kernel reduces one more
    element of -inf/+inf (last, so never chosen), never an empty input. Each check
    is a `dycl.if` marked `dycl.bounds_check` right after the op.
    """

    name = "check-index-bounds"

    model: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        model = model_of(op, self.model)
        for o in list(op.walk()):
            if not isinstance(o, (d.CallModuleOp, d.CallFunctionOp, d.CallMethodOp)) or classify(o) != TENSOR:
                continue
            for site in _sites(o, model):
                idx = site.op.operands[site.operand]
                known = None if site.nonempty else _known_range(idx)
                if known is not None and (not (known[0] <= 0 <= known[1]) if site.nonzero
                                          else site.lo <= known[0] and known[1] < site.size):
                    continue
                _guard(site, o)
