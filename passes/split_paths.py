"""split-paths: copy the code after a branch into each of its branches.

After `dycl.if`, the two paths join: a value that has one shape on one path and
another on the other (a list that grew on one path only, a tensor sliced
differently) has no single static type. Copying the rest of the block into each
branch (tail duplication) gives every path its own code, so each copy gets its
own types and its own sub-DNNs, and the host picks the path. This is the one
implementation of that rewrite: `shape-inference` applies it to each branch whose
join it finds differing, and this pass to the branches marked `dycl.split_paths`
(so each step can be seen with `dycl-opt`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d

SPLIT_ATTR = "dycl.split_paths"


def split_target(op: d.IfOp) -> d.IfOp:
    """The if whose continuation must be copied: an if whose results are
    yielded straight out of an enclosing if has nothing after it to copy, so
    the enclosing if (recursively) is split instead."""
    while isinstance(op.next_op, d.YieldOp) and isinstance(parent := op.parent_op(), d.IfOp):
        op = parent
    return op


def can_split(op: d.IfOp) -> bool:
    """The code after `op` ends its function (or loop body) with return/break, or
    ends a branch of an enclosing `dycl.if`, so it can be copied into both
    branches without changing what it means (in the last case the enclosing if
    may need splitting in turn, up to the function's return)."""
    block = op.parent
    if block is None:
        return False
    last = block.last_op
    return isinstance(last, (d.ReturnOp, d.BreakOp)) or (
        isinstance(last, d.YieldOp) and isinstance(block.parent_op(), d.IfOp)
    )


def ops_after(op: Operation) -> list[Operation]:
    """The ops after `op` in its block, its terminator included."""
    rest: list[Operation] = []
    nxt = op.next_op
    while nxt is not None:
        rest.append(nxt)
        nxt = nxt.next_op
    return rest


def erase_from(op: Operation) -> None:
    """Erase `op` and what follows it in its block (a path that ends before them)."""
    for o in reversed([op, *ops_after(op)]):
        o.detach()
        o.erase(safe_erase=False)


def continue_in_branch(branch: Block, if_op: d.IfOp, rest: Sequence[Operation],
                       mapping: dict[SSAValue, SSAValue]) -> None:
    """Replace `branch`'s yield by copies of `rest` (the code after `if_op`), with
    `mapping` (the if's results → what the branch yields) applied: the one
    continuation copy that early-exit elimination and path splitting share."""
    term = branch.last_op
    assert isinstance(term, d.YieldOp)
    branch.erase_op(term)
    for r in rest:
        branch.add_op(r.clone(value_mapper=mapping))


def retyped_if(op: d.IfOp, result_types: Sequence[Attribute]) -> d.IfOp:
    """`op` replaced by an if with its condition, attributes and branches and the
    given result types (its old results must have no uses left)."""
    block = op.parent
    assert block is not None
    then_region, else_region = op.then_region, op.else_region
    new = d.IfOp(op.cond, result_types, op.detach_region(then_region), op.detach_region(else_region))
    new.attributes |= op.attributes
    new.location = op.location
    block.insert_op_before(new, op)
    block.erase_op(op, safe_erase=False)
    return new


def yielded(if_op: d.IfOp, branch: Block) -> dict[SSAValue, SSAValue] | None:
    """The if's results → what `branch` yields, or None where it does not fall through."""
    term = branch.last_op
    return dict(zip(if_op.results, term.values)) if isinstance(term, d.YieldOp) else None


def split_paths(op: d.IfOp) -> None:
    """Copy the code after `op` into each branch: values that reach it with
    different shapes along the two paths then each get their own static type
    (each copy compiles its own sub-DNNs, and the host picks the path)."""
    block = op.parent
    assert block is not None
    rest = ops_after(op)
    for region in (op.then_region, op.else_region):
        mapping = yielded(op, region.block)
        if mapping is not None:  # (else this branch already leaves)
            continue_in_branch(region.block, op, rest, mapping)
    for r in reversed(rest):
        block.erase_op(r, safe_erase=False)
    else_region = op.detach_region(op.else_region)
    then_region = op.detach_region(op.then_region)
    # Ending a branch of an enclosing if: each copy yields that if's values.
    ends_in_yield = isinstance(rest[-1], d.YieldOp)
    width = len(rest[-1].operands) if ends_in_yield else 0
    new = d.IfOp(op.cond, [d.ANY] * width, then_region, else_region)
    new.location = op.location
    block.insert_op_before(new, op)
    block.erase_op(op, safe_erase=False)
    if ends_in_yield:
        block.add_op(d.YieldOp(*new.results))
        return
    # Both branches now leave; the else branch's code follows the if, so the block
    # still ends with its return/break.
    else_block = new.else_region.block
    for moved in list(else_block.ops):
        moved.detach()
        block.add_op(moved)
    else_block.add_op(d.YieldOp())


@dataclass(frozen=True)
class SplitPathsPass(ModulePass):
    """Copy the code after each `dycl.if` marked `dycl.split_paths` into its
    branches, so that each path has its own copy of what follows.

    Expects: dycl IR; the code after each marked if ends its function (or loop
    body) with `dycl.return`/`dycl.break`, or ends a branch of an enclosing if,
    which is then split in turn, up to the function's end.
    Guarantees: no op follows a marked if in its block but the block's
    terminator; both branches end by leaving (or yield out of the enclosing if).
    A marked if whose continuation cannot be copied (inside a loop body that
    falls through to the next iteration) is an error at its location.
    """

    name = "split-paths"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        marked = [o for o in op.walk() if isinstance(o, d.IfOp) and SPLIT_ATTR in o.attributes]
        for if_op in marked:
            if if_op.parent is None:
                continue  # an enclosing split already copied it (each copy keeps the mark)
            del if_op.attributes[SPLIT_ATTR]
            target = split_target(if_op)
            if not can_split(target):
                raise PassError("cannot split the paths at this branch: the code after it does not end "
                                "its function or a branch (a loop body goes on to its next iteration)", if_op)
            split_paths(target)
        # Copies made by splitting an enclosing if carry the mark too: split those as well.
        if any(isinstance(o, d.IfOp) and SPLIT_ATTR in o.attributes for o in op.walk()):
            self.apply(ctx, op)
