"""unroll-loops: expand `dycl.for` loops whose bounds are compile-time constants."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dycl.dialects import dycl as d
from dycl.passes.peel_loops import constant_int, has_own_break


@dataclass
class UnrollConstantFor(RewritePattern):
    max_trip_count: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: d.ForOp, rewriter: PatternRewriter) -> None:
        bounds = [constant_int(v) for v in (op.lb, op.ub, op.step)]
        if any(b is None for b in bounds) or bounds[2] == 0:
            return
        trips = range(*bounds)  # type: ignore[arg-type]
        if len(trips) > self.max_trip_count or has_own_break(op):
            return
        current: list[SSAValue] = list(op.iter_args)
        body = op.body.block
        new_ops: list[Operation] = []
        for i in trips:
            index = arith.ConstantOp(IntegerAttr(i, i64))
            index.location = op.location
            new_ops.append(index)
            mapping: dict[SSAValue, SSAValue] = {body.args[0]: index.result}
            mapping.update(zip(body.args[1:], current))
            for inner in body.ops:
                if isinstance(inner, d.YieldOp):
                    current = [mapping.get(v, v) for v in inner.values]
                    break
                clone = inner.clone(value_mapper=mapping)
                new_ops.append(clone)
        rewriter.replace(op, new_ops, current)


@dataclass(frozen=True)
class UnrollLoopsPass(ModulePass):
    """Fully unrolls every `dycl.for` whose lb/ub/step are constants.

    Expects: dycl IR. Guarantees: each such loop with at most `max-trip-count`
    iterations (and no `dycl.break` of its own) is replaced by copies of its body,
    the induction variable becoming a constant per copy and the carried values
    threaded through; loops with run-time bounds, more iterations, or a break stay
    rolled. Early `dycl.return`s inside the body are kept in every copy.

    Options: `max-trip-count` (default 4096).
    """

    name = "unroll-loops"

    max_trip_count: int = 4096

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            UnrollConstantFor(self.max_trip_count), apply_recursively=True
        ).rewrite_module(op)
