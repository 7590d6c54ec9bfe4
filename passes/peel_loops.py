"""peel-loops: run the first iteration of a `dycl.while` before the loop.

`cost = 0; while c: cost = cost + t.mean()` (or `for t in range(n):`) carries a host number into the loop
and a tensor out of its first iteration: no one type holds it across
iterations. Peeling gives that first iteration its own code,

    if cond(inits) { vals = body(inits); while cond(vals) { body } } else { inits }

so the loop proper carries the tensor, and the path where the loop never runs
keeps eager's number (`split-paths` then gives each path its own types).
`shape-inference` peels the loops whose carried values change type this way;
this pass peels the ones marked `dycl.peel`, so the step can be seen on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d

PEEL_ATTR = "dycl.peel"
PEELED_ATTR = "dycl.peeled"


def has_own_break(loop: Operation) -> bool:
    """A `dycl.break` that leaves `loop` itself (not a loop nested in it)."""
    for inner in loop.walk():
        if isinstance(inner, d.BreakOp):
            owner = inner.parent_op()
            while owner is not None and not isinstance(owner, (d.ForOp, d.WhileOp)):
                owner = owner.parent_op()
            if owner is loop:
                return True
    return False


def constant_int(v: SSAValue) -> int | None:
    """The value of an i64 `arith.constant`, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def why_not_peelable(op: d.WhileOp | d.ForOp) -> str | None:
    if PEELED_ATTR in op.attributes:
        return "its first iteration was peeled already"
    if has_own_break(op):
        return "its body has a `break`"
    if isinstance(op, d.WhileOp) and op.bound == 1:
        return "its bound allows one iteration only"
    if isinstance(op, d.ForOp):
        lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
        if step is None or step <= 0:
            return "its step is known only at run time"
        if lb is not None and ub is not None and lb >= ub:
            return "it runs no iteration"
    return None


def peel(op: d.WhileOp | d.ForOp) -> None:
    """The loop's first iteration on its own (see the module's docstring)."""
    if isinstance(op, d.ForOp):
        peel_first_for(op)
    else:
        peel_first_iteration(op)


def peel_first_for(op: d.ForOp) -> None:
    """`for i in range(lb, ub)` with constant bounds (at least one iteration):
    `body(lb, inits)` before the loop, which then starts at `lb + step` from the
    values it made (or is gone, where that was its only iteration)."""
    lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
    assert step is not None
    known = lb is not None and ub is not None
    if known:  # (at least one iteration: the copy runs before the loop)
        then = None
        first = arith.ConstantOp(IntegerAttr(lb, i64))
        first.location = op.location
        op.parent.insert_op_before(first, op)  # type: ignore[union-attr]
        firsts = _inline_copy(op.body.block, [first.result, *op.iter_args], op, None)
        if lb + step >= ub:  # that was its only iteration
            for r, v in zip(list(op.results), firsts):
                r.replace_all_uses_with(v)
            op.parent.erase_op(op, safe_erase=False)  # type: ignore[union-attr]
            return
        start: Operation = arith.ConstantOp(IntegerAttr(lb + step, i64))
        op.parent.insert_op_before(start, op)  # type: ignore[union-attr]
    else:  # `if lb < ub { body(lb); loop from lb + step } else { inits }`, as for `while`
        runs = arith.CmpiOp(op.lb, op.ub, "slt")
        runs.location = op.location
        op.parent.insert_op_before(runs, op)  # type: ignore[union-attr]
        then = Block()
        firsts = _inline_copy(op.body.block, [op.lb, *op.iter_args], op, then)
        start = arith.AddiOp(op.lb, op.step)
        then.add_op(start)
    start.location = op.location
    for v in [*op.body.block.args[1:], *op.results]:
        Rewriter.replace_value_with_new_type(v, d.ANY)
    n = len(firsts)
    loop = d.ForOp(start.results[0], op.ub, op.step, firsts, op.detach_region(op.body), [d.ANY] * n)
    loop.attributes |= {k: v for k, v in op.attributes.items() if k != PEEL_ATTR}
    loop.attributes[PEELED_ATTR] = IntegerAttr(1, i64)
    loop.location = op.location
    if then is None:
        op.parent.insert_op_before(loop, op)  # type: ignore[union-attr]
        results = list(loop.results)
    else:
        then.add_op(loop)
        then.add_op(d.YieldOp(*loop.results))
        if_op = d.IfOp(runs.result, [d.ANY] * n, Region(then), Region(Block([d.YieldOp(*op.iter_args)])))
        if_op.location = op.location
        op.parent.insert_op_before(if_op, op)  # type: ignore[union-attr]
        results = list(if_op.results)
    for r, new in zip(list(op.results), results):
        r.replace_all_uses_with(new)
    op.parent.erase_op(op, safe_erase=False)  # type: ignore[union-attr]


def _inline_copy(block: Block, values: list[SSAValue], before: Operation, into: Block | None) -> list[SSAValue]:
    """Copies of `block`'s ops (its args mapped to `values`) placed before `before`
    (or at the end of `into`); the operands of its terminator, mapped."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, values))
    for inner in block.ops:
        if inner is block.last_op:
            return [mapping.get(v, v) for v in inner.operands]
        clone = inner.clone(value_mapper=mapping)
        if into is None:
            before.parent.insert_op_before(clone, before)  # type: ignore[union-attr]
        else:
            into.add_op(clone)
    raise AssertionError("a loop region without a terminator")


def peel_first_iteration(op: d.WhileOp) -> None:
    """Rewrite `op` as `if cond(inits) { body(inits); op } else { inits }`; the loop
    left is marked `dycl.peeled` and carries `!dycl.any` values (typed again)."""
    inits = list(op.iter_args)
    (cond,) = _inline_copy(op.cond_region.block, inits, op, None)
    then = Block()
    firsts = _inline_copy(op.body.block, inits, op, then)
    n = len(inits)
    if_op = d.IfOp(cond, [d.ANY] * n, Region(then), Region(Block([d.YieldOp(*inits)])))
    if_op.location = op.location
    op.parent.insert_op_before(if_op, op)  # type: ignore[union-attr]
    for r, new in zip(list(op.results), if_op.results):
        r.replace_all_uses_with(new)
    op.detach()
    # (typed again from the first iteration's values: the host number is a tensor now)
    for v in [*op.cond_region.block.args, *op.body.block.args, *op.results]:
        Rewriter.replace_value_with_new_type(v, d.ANY)
    cond_region, body = op.cond_region, op.body
    cond_region, body = op.detach_region(cond_region), op.detach_region(body)
    loop = d.WhileOp(firsts, None if op.bound is None else op.bound - 1, cond_region, body, [d.ANY] * n)
    loop.attributes |= {k: v for k, v in op.attributes.items() if k != PEEL_ATTR}
    loop.attributes[PEELED_ATTR] = IntegerAttr(1, i64)
    loop.location = op.location
    then.add_op(loop)
    then.add_op(d.YieldOp(*loop.results))
    op.erase(safe_erase=False)


@dataclass(frozen=True)
class PeelLoopsPass(ModulePass):
    """Peel the first iteration of each `dycl.while` or `dycl.for` marked `dycl.peel`.

    Expects: dycl IR. Guarantees: each marked `dycl.while` is replaced by
    `dycl.if` on its condition over the initial values, whose then-branch holds a
    copy of the body on those values followed by the loop (marked `dycl.peeled`,
    its bound one less, its carried values `!dycl.any`), and whose else-branch
    yields the initial values; a marked `dycl.for` (constant positive step) the
    same with `lb < ub` as the condition and the loop starting at `lb + step`
    (with constant bounds: the copy before the loop, no `if`). A marked loop with
    a `dycl.break` of its own, a bound of one iteration, a run-time step or no
    iteration at all is an error at its location.
    """

    name = "peel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, (d.WhileOp, d.ForOp)) and PEEL_ATTR in o.attributes]:
            why = why_not_peelable(loop)
            if why is not None:
                raise PassError(f"cannot peel this loop: {why}", loop)
            peel(loop)
