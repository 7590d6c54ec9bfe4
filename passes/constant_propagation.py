"""constant-propagation: fold what is known at compile time, including branches."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NoneAttr,
    StringAttr,
    TensorType,
    TupleType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.frontend.values import resolve_qualname
from dycl.passes.shape_inference import arith_constant_value, python_constant
from dycl.passes.split_paths import ops_after
from dycl.types import dtype_of, fits_i64

# Pure Python functions that may run at compile time on constant arguments.
_FOLDABLE_MODULES = ("_operator.", "math.")
_FOLDABLE_BUILTINS = {"builtins.len", "builtins.min", "builtins.max", "builtins.abs", "builtins.int",
                      "builtins.float", "builtins.bool", "builtins.round", "builtins.slice"}
_SHAPE_METHODS = {"size", "dim", "numel"}
_TYPE_INFO = {"torch.finfo": torch.finfo, "torch.iinfo": torch.iinfo}
_NO_VALUE = object()


def constant_of(v: SSAValue) -> Any:
    """The Python value of `v` if it is a compile-time constant, else _NO_VALUE."""
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return arith_constant_value(op)
    if isinstance(op, d.ConstantOp) and not d.is_tensor_type(op.result.type):
        try:
            return python_constant(op.value)
        except Exception:
            return _NO_VALUE
    if isinstance(op, d.CallFunctionOp) and op.target.data == "torch.Size" and len(op.operands) == 1:
        dims = constant_of(op.operands[0])
        return _NO_VALUE if dims is _NO_VALUE else torch.Size(dims)
    if isinstance(op, d.CallFunctionOp) and op.target.data in _TYPE_INFO and len(op.operands) == 1:
        # torch.finfo(torch.float32): an object with no IR form, read by getattr (`.min`)
        dtype = constant_of(op.operands[0])
        return _TYPE_INFO[op.target.data](dtype) if isinstance(dtype, torch.dtype) else _NO_VALUE
    if isinstance(op, d.MakeTupleOp):
        items = [constant_of(e) for e in op.elements]
        if any(i is _NO_VALUE for i in items):
            return _NO_VALUE
        return list(items) if op.is_list else tuple(items)
    return _NO_VALUE


def materialize(value: Any, loc: Attribute) -> list[Operation] | None:
    """Ops producing `value` as a constant, or None if it has no IR form."""
    ops: list[Operation]
    if isinstance(value, bool):
        ops = [arith.ConstantOp(IntegerAttr(int(value), i1))]
    elif isinstance(value, int):
        if not fits_i64(value):
            return None  # (no i64 holds it: the host computes it, as a Python int)
        ops = [arith.ConstantOp(IntegerAttr(value, i64))]
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        ops = [arith.ConstantOp(FloatAttr(value, f64))]
    elif value is None:
        ops = [d.ConstantOp(NoneAttr())]
    elif isinstance(value, str):
        ops = [d.ConstantOp(StringAttr(value))]
    elif isinstance(value, torch.dtype):
        ops = [d.ConstantOp(d.GlobalAttr(str(value)))]  # `torch.float32`
    elif isinstance(value, torch.Size):
        dims = d.ConstantOp(ArrayAttr([IntegerAttr(x, i64) for x in value]))
        ops = [dims, d.CallFunctionOp("torch.Size", [dims.result], result_type=d.PYOBJ)]  # eager's type
    elif isinstance(value, tuple) and all(isinstance(x, float) or isinstance(x, int) and not isinstance(x, bool)
                                          and fits_i64(x) for x in value):
        ops = [d.ConstantOp(ArrayAttr([IntegerAttr(x, i64) if isinstance(x, int) else FloatAttr(x, f64) for x in value]))]
    else:
        return None
    for o in ops:
        o.location = loc
    return ops


def _replace_with_value(op: Operation, value: Any, rewriter: PatternRewriter) -> None:
    ops = materialize(value, op.location)
    if ops is not None:
        rewriter.replace(op, ops)


class FoldPureCall(RewritePattern):
    """`_operator.add(2, 3)` → 5, `math.sqrt(4.0)` → 2.0 and friends."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.CallFunctionOp, rewriter: PatternRewriter) -> None:
        target = op.target.data
        if target == "builtins.getattr" and len(op.operands) == 2 and isinstance(
                info := constant_of(op.operands[0]), (torch.finfo, torch.iinfo)):
            name = constant_of(op.operands[1])
            if isinstance(name, str) and isinstance(value := getattr(info, name, None), (int, float)):
                _replace_with_value(op, value, rewriter)  # torch.finfo(dtype).min
            return
        if target == "builtins.len" and len(op.operands) == 1 and isinstance(t := op.operands[0].type, TensorType):
            n = _shape_value(t, 0) if t.get_shape() else _NO_VALUE  # (len() of a 0-d tensor raises)
            if isinstance(n, int):
                _replace_with_value(op, n, rewriter)  # len(x): its first dimension, if static
            return
        if target == "builtins.len" and len(op.operands) == 1 and isinstance(t := op.operands[0].type, TupleType):
            _replace_with_value(op, len(t.types), rewriter)  # a tuple's length is in its type
            return
        if not (target.startswith(_FOLDABLE_MODULES) or target in _FOLDABLE_BUILTINS):
            return
        pos, kw = op.positional_and_keyword()
        args = [constant_of(v) for v in pos]
        kwargs = {k: constant_of(v) for k, v in kw.items()}
        if any(a is _NO_VALUE for a in args) or any(a is _NO_VALUE for a in kwargs.values()):
            return
        try:
            value = resolve_qualname(target)(*args, **kwargs)
        except Exception:
            return  # leave it; the run time raises the same error
        _replace_with_value(op, value, rewriter)


@dataclass(frozen=True)
class _OutOfRange:
    """A shape query or get_item whose index is known to be out of range."""

    message: str


def _shape_value(t: TensorType, i: int) -> Any:
    """Dimension `i` of `t` (negative counts from the end), if static."""
    shape = tuple(t.get_shape())
    if not -len(shape) <= i < len(shape):
        return _OutOfRange(f"dimension {i} is out of range for {t} (rank {len(shape)})")
    return _NO_VALUE if shape[i] == DYNAMIC_INDEX else shape[i]


def _full_shape(t: TensorType) -> Any:
    shape = tuple(t.get_shape())
    return _NO_VALUE if DYNAMIC_INDEX in shape else torch.Size(shape)


def _shape_of(v: SSAValue) -> TensorType | None:
    """The tensor type whose whole shape `v` is (`x.size()` or `x.shape`), if any."""
    op = v.owner
    if isinstance(op, d.CallMethodOp) and op.method.data == "size":
        pos, kw = op.positional_and_keyword()
        if len(pos) == 1 and not kw and isinstance(pos[0].type, TensorType):
            return pos[0].type
    elif isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.getattr":
        pos, kw = op.positional_and_keyword()
        if len(pos) == 2 and not kw and isinstance(pos[0].type, TensorType) and constant_of(pos[1]) == "shape":
            return pos[0].type
    return None


def _shape_query_value(op: Operation) -> Any:
    """What a shape query or `dycl.get_item` computes, if known at compile time:
    a value, _NO_VALUE, or _OutOfRange for an index that must fail.

    Dynamic (`?`) dimensions are known only at run time.
    """
    if isinstance(op, d.CallMethodOp) and op.method.data in _SHAPE_METHODS:
        pos, kw = op.positional_and_keyword()
        t = pos[0].type
        if not isinstance(t, TensorType) or kw:
            return _NO_VALUE
        rest = [constant_of(v) for v in pos[1:]]
        name = op.method.data
        if rest:
            # Only `size(i)` takes an argument; anything else is left to the run time.
            if name != "size" or len(rest) != 1 or type(rest[0]) is not int:
                return _NO_VALUE
            return _shape_value(t, rest[0])
        if name == "dim":
            return len(t.get_shape())
        shape = _full_shape(t)
        if name == "numel" and shape is not _NO_VALUE:
            return math.prod(shape)
        return shape
    if isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.getattr":
        pos, _ = op.positional_and_keyword()
        t = pos[0].type
        attr = constant_of(pos[1]) if len(pos) > 1 else _NO_VALUE
        if isinstance(t, TensorType) and attr == "shape":
            return _full_shape(t)
        if isinstance(t, TensorType) and attr == "ndim":
            return len(t.get_shape())
        if isinstance(t, TensorType) and attr == "dtype":
            return dtype_of(t.element_type)
        return _NO_VALUE
    if isinstance(op, d.GetItemOp):
        i = op.index.value.data
        if (t := _shape_of(op.source)) is not None:
            return _shape_value(t, i)  # `x.shape[1]` folds even when another dim is `?`
        src = constant_of(op.source)
        if not isinstance(src, (tuple, list, str)):
            return _NO_VALUE
        if not -len(src) <= i < len(src):
            return _OutOfRange(f"index {i} is out of range for a {type(src).__name__} of {len(src)} elements")
        return src[i]
    return _NO_VALUE


class FoldShapeQuery(RewritePattern):
    """`x.size(1)`, `x.dim()`, `x.numel()`, `x.shape`, `x.shape[1]` on a tensor type
    where the dimensions asked for are static; `dycl.get_item` of a constant.
    An out-of-range index is left for ConstantPropagationPass to report."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        value = _shape_query_value(op)
        if value is not _NO_VALUE and not isinstance(value, _OutOfRange):
            _replace_with_value(op, value, rewriter)


class FoldToBool(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.ToBoolOp, rewriter: PatternRewriter) -> None:
        value = constant_of(op.input)
        if value is not _NO_VALUE:
            _replace_with_value(op, bool(value), rewriter)
        elif op.input.type == i1:
            rewriter.replace(op, [], [op.input])


class FoldBoolArith(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fns = {arith.XOrIOp: lambda a, b: a != b, arith.AndIOp: lambda a, b: a and b, arith.OrIOp: lambda a, b: a or b}
        fn = fns.get(type(op))
        if fn is None or op.results[0].type != i1:
            return
        a, b = (constant_of(v) for v in op.operands)
        if a is not _NO_VALUE and b is not _NO_VALUE:
            _replace_with_value(op, bool(fn(a, b)), rewriter)


class FoldConstantIf(RewritePattern):
    """`dycl.if` on a known condition → the taken branch, inlined."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.IfOp, rewriter: PatternRewriter) -> None:
        cond = constant_of(op.cond)
        if cond is _NO_VALUE:
            return
        taken = (op.then_region if cond else op.else_region).block
        term = taken.last_op
        assert term is not None
        parent = op.parent
        assert parent is not None
        if isinstance(term, d.YieldOp):
            values = list(term.values)
            rewriter.erase(term)
            rewriter.inline_block(taken, _before(op))
            rewriter.replace(op, [], values)
            return
        # The branch leaves (return/break): what follows the if is dead.
        for dead in ops_after(op):
            _drop(dead, rewriter)
        rewriter.inline_block(taken, _before(op))
        for r in op.results:
            for use in list(r.uses):
                _drop(use.operation, rewriter)
        rewriter.erase(op, safe_erase=False)


class DropUnusedIfResults(RewritePattern):
    """`dycl.if` results nobody reads are not yielded (a Python name assigned on
    some paths and never read again must not constrain types or keep work alive)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.IfOp, rewriter: PatternRewriter) -> None:
        keep = [i for i, r in enumerate(op.results) if r.uses]
        if len(keep) == len(op.results):
            return
        for region in (op.then_region, op.else_region):
            term = region.block.last_op
            if isinstance(term, d.YieldOp):
                rewriter.replace(term, d.YieldOp(*(term.values[i] for i in keep)))
        else_region = op.detach_region(op.else_region)  # the last first: detaching renumbers
        then_region = op.detach_region(op.then_region)
        new = d.IfOp(op.cond, [op.results[i].type for i in keep], then_region, else_region)
        new.location = op.location
        for j, i in enumerate(keep):
            new.results[j].name_hint = op.results[i].name_hint
        rewriter.replace(op, new, [new.results[keep.index(i)] if i in keep else None for i in range(len(op.results))])


def _before(op: Operation):
    from xdsl.rewriter import InsertPoint

    return InsertPoint.before(op)


def _drop(op: Operation, rewriter: PatternRewriter) -> None:
    if op.parent is not None:
        for r in op.results:
            for use in list(r.uses):
                _drop(use.operation, rewriter)
        if op.parent is not None:
            rewriter.erase(op, safe_erase=False)


class FoldInPlaceResult(RewritePattern):
    """`dycl.tensor_ops.inplace_result(new, old)` (what `old += e` leaves in old) is
    `new` where that changes nothing: a host number updated (`steps += 1`), or a
    tensor result already of old's dtype and shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.CallFunctionOp, rewriter: PatternRewriter) -> None:
        if op.target.data != "dycl.tensor_ops.inplace_result" or len(op.operands) != 2:
            return
        new, old = op.operands
        scalar = str(old.type) in ("i64", "f64", "i1")
        same = isinstance(new.type, TensorType) and isinstance(old.type, TensorType) and \
            new.type.element_type == old.type.element_type and new.type.get_shape() == old.type.get_shape() \
            and all(n >= 0 for n in old.type.get_shape())
        if scalar or same:
            rewriter.replace(op, [], [new])


def canonicalization_patterns() -> tuple[RewritePattern, ...]:
    return (FoldPureCall(), FoldShapeQuery(), FoldToBool(), FoldBoolArith(), FoldConstantIf(), DropUnusedIfResults(),
            FoldInPlaceResult())


@dataclass(frozen=True)
class ConstantPropagationPass(ModulePass):
    """Folds compile-time values and the branches they decide.

    Expects: dycl IR. Guarantees: Python arithmetic and comparisons on constants
    (`_operator.*`, `math.*`, pure builtins) become constants; shape queries
    (`x.size(i)`, `x.shape`, `x.dim()`, `x.numel()`) become constants where the
    dimensions they read are static (`?` ones stay run-time queries); an in-place
    update's cast to its target (`inplace_result`) goes where it changes nothing; an index
    known to be out of range (`x.size(5)` of a 2-d tensor, item 3 of a constant
    pair) that survives folding is a located error; `dycl.to_bool` of a
    constant and i1 logic fold; a `dycl.if` whose condition is known is
    replaced by its taken branch (a taken early `dycl.return` ends the function
    there). Dead constants are removed.
    Config attributes and `self.training` arrive as constants from the frontend.
    """

    name = "constant-propagation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(list(canonicalization_patterns())),
            apply_recursively=True,
        ).rewrite_module(op)
        # After folding, so a query in a branch a constant condition removed is no error.
        for o in op.walk():
            if isinstance(err := _shape_query_value(o), _OutOfRange):
                raise PassError(err.message, o)
