"""eliminate-early-exits: returns nested in branches become results of the branches.

A function whose body returns from inside a `dycl.if` (an early exit) is
rewritten so that only its last op returns: the code after the if moves into the
branches that fall through, and the if yields what each path returns. This is
the one implementation of that rewrite; `inline-calls` applies it to each callee
before inlining it (a call site can only take a body that ends in one return).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.passes.split_paths import continue_in_branch, ops_after, retyped_if, yielded


def _returns_within(op: Operation) -> bool:
    return any(isinstance(inner, d.ReturnOp) for inner in op.walk())


def refines_into_exact_use(old: SSAValue, new: SSAValue, exact: tuple[type[Operation], ...]) -> bool:
    """Replacing `old` by `new` changes a type seen by an op that checks it exactly."""
    return old.type != new.type and any(isinstance(u.operation, exact) for u in old.uses)


def _erase_detached(ops: Sequence[Operation]) -> None:
    for op in reversed(ops):
        op.detach()
        op.erase()


def eliminate_early_returns(block: Block, result_types: Sequence[Attribute]) -> str | None:
    """Rewrite `block`, which ends by returning from its function, so that no
    `dycl.return` is left nested in its ops (only its own terminator returns).

    The first top-level `dycl.if` holding a `dycl.return` absorbs the rest of the
    block: each branch that falls through (`dycl.yield`) gets a copy of the ops
    after the if, the branches are processed the same way, every branch then
    yields the values it returns, and the new if (typed like the function
    results) feeds the block's terminator. A return nested in a loop has no such
    form: the reason is returned and the block must be thrown away.
    """
    for op in list(block.ops)[:-1]:
        if not _returns_within(op):
            continue
        if not isinstance(op, d.IfOp):
            return f"it returns early from inside '{op.name}'"
        tail = ops_after(op)
        for region in (op.then_region, op.else_region):
            branch = region.block
            last = branch.last_op
            mapping = yielded(op, branch)
            if mapping is not None:
                if any(
                    refines_into_exact_use(old, new, (func.CallOp, d.CallSubgraphOp))
                    for old, new in mapping.items()
                ):
                    return "a value it computes after an early return changes type"
                continue_in_branch(branch, op, tail, mapping)
            elif not isinstance(last, d.ReturnOp):
                return f"a branch holding an early return ends with '{last.name if last else 'nothing'}'"
            reason = eliminate_early_returns(branch, result_types)
            if reason is not None:
                return reason
            ret = branch.last_op
            assert ret is not None
            yield_op = d.YieldOp(*ret.operands)
            yield_op.location = ret.location
            _erase_detached([ret])
            branch.add_op(yield_op)
        _erase_detached(tail)
        merged = retyped_if(op, result_types)
        ret = d.ReturnOp(*merged.output)
        ret.location = merged.location
        block.add_op(ret)
        return None
    return None


@dataclass(frozen=True)
class EliminateEarlyExitsPass(ModulePass):
    """Rewrite every function so that it returns only at the end of its body:
    each `dycl.if` holding a `dycl.return` takes the code after it into the
    branches that fall through, and yields what each path returns.

    Expects: dycl IR; returns from inside loops were already made `dycl.break`s
    and a return after the loop (the frontend does this), since a loop cannot
    yield a return.
    Guarantees: in every `func.func` not marked `dycl.subgraph`, no
    `dycl.return` is nested in another op; functions return the same values on
    every path as before. A return left inside a loop is an error at its location.
    """

    name = "eliminate-early-exits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.ops):
            if not isinstance(f, func.FuncOp) or d.SUBGRAPH_ATTR in f.attributes or not f.body.blocks:
                continue
            reason = eliminate_early_returns(f.body.block, list(f.function_type.outputs))
            if reason is not None:
                raise PassError(f"cannot move the early returns of @{f.sym_name.data} to its end: {reason}", f)
