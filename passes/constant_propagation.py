"""constant-propagation: fold what is known at compile time, including branches."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NoneAttr,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dycl.dialects import dycl as d
from dycl.frontend.values import resolve_qualname
from dycl.passes.shape_inference import arith_constant_value, python_constant

# Pure Python functions that may run at compile time on constant arguments.
_FOLDABLE_MODULES = ("_operator.", "math.")
_FOLDABLE_BUILTINS = {"builtins.len", "builtins.min", "builtins.max", "builtins.abs", "builtins.int",
                      "builtins.float", "builtins.bool", "builtins.round", "builtins.slice"}
_SHAPE_METHODS = {"size", "dim", "numel"}
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
        ops = [arith.ConstantOp(IntegerAttr(value, i64))]
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        ops = [arith.ConstantOp(FloatAttr(value, f64))]
    elif value is None:
        ops = [d.ConstantOp(NoneAttr())]
    elif isinstance(value, str):
        ops = [d.ConstantOp(StringAttr(value))]
    elif isinstance(value, tuple) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
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


class FoldShapeQuery(RewritePattern):
    """`x.size(1)`, `x.dim()`, `x.numel()`, `x.shape` on a static tensor type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, d.CallMethodOp) and op.method.data in _SHAPE_METHODS:
            pos, kw = op.positional_and_keyword()
            t = pos[0].type
            if not isinstance(t, TensorType) or kw:
                return
            shape = tuple(t.get_shape())
            rest = [constant_of(v) for v in pos[1:]]
            if any(r is _NO_VALUE for r in rest):
                return
            name = op.method.data
            if name == "dim":
                value: Any = len(shape)
            elif name == "numel":
                value = math.prod(shape)
            else:
                value = shape[rest[0]] if rest else shape
            _replace_with_value(op, value, rewriter)
        elif isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.getattr":
            pos, _ = op.positional_and_keyword()
            t = pos[0].type
            attr = constant_of(pos[1]) if len(pos) > 1 else _NO_VALUE
            if isinstance(t, TensorType) and attr == "shape":
                _replace_with_value(op, tuple(t.get_shape()), rewriter)
            elif isinstance(t, TensorType) and attr == "ndim":
                _replace_with_value(op, len(t.get_shape()), rewriter)
        elif isinstance(op, d.GetItemOp):
            src = constant_of(op.source)
            if src is not _NO_VALUE:
                _replace_with_value(op, src[op.index.value.data], rewriter)


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
        for dead in _ops_after(op):
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


def _ops_after(op: Operation) -> list[Operation]:
    out = []
    nxt = op.next_op
    while nxt is not None:
        out.append(nxt)
        nxt = nxt.next_op
    return out


def _drop(op: Operation, rewriter: PatternRewriter) -> None:
    if op.parent is not None:
        for r in op.results:
            for use in list(r.uses):
                _drop(use.operation, rewriter)
        if op.parent is not None:
            rewriter.erase(op, safe_erase=False)


def canonicalization_patterns() -> tuple[RewritePattern, ...]:
    return (FoldPureCall(), FoldShapeQuery(), FoldToBool(), FoldBoolArith(), FoldConstantIf(), DropUnusedIfResults())


@dataclass(frozen=True)
class ConstantPropagationPass(ModulePass):
    """Folds compile-time values and the branches they decide.

    Expects: dycl IR. Guarantees: Python arithmetic and comparisons on constants
    (`_operator.*`, `math.*`, pure builtins) become constants; shape queries
    (`x.size(i)`, `x.shape`, `x.dim()`, `x.numel()`) on statically typed tensors
    become constants; `dycl.to_bool` of a constant and i1 logic fold; a `dycl.if`
    whose condition is known is replaced by its taken branch (a taken early
    `dycl.return` ends the function there). Dead constants are removed.
    Config attributes and `self.training` arrive as constants from the frontend.
    """

    name = "constant-propagation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(list(canonicalization_patterns())),
            apply_recursively=True,
        ).rewrite_module(op)
