"""peel-loops: run the first iteration of a `dycl.while` before the loop.

`cost = 0; while c: cost = cost + t.mean()` (or `for t in range(n):`) carries a host number into the loop
and a tensor out of its first iteration: no one type holds it across
iterations. Peeling gives that first iteration its own code,

    if cond(inits) { vals = body(inits); while cond(vals) { body } } else { inits }

so the loop proper carries the tensor, and the path where the loop never runs
keeps eager's number (`split-paths` then gives each path its own types).
`shape-inference` peels the loops whose carried values change type this way;
this pass peels the ones marked `dycl.peel`, so the step can be seen on its own.
A `break` in the first iteration (`past = None; while True: ...; if done: break`)
skips the loop: `vals, broke = body(inits); if broke { vals } else { while ... }`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.passes.split_paths import continue_in_branch, ops_after, retyped_if, yielded

PEEL_ATTR = "dycl.peel"
PEELED_ATTR = "dycl.peeled"


def _own_breaks(loop: Operation) -> list[list[Operation]]:
    """For each `dycl.break` that leaves `loop` itself (not a loop nested in it), the
    ops between it and the loop, innermost first."""
    out = []
    for inner in loop.walk():
        if isinstance(inner, d.BreakOp):
            between: list[Operation] = []
            owner = inner.parent_op()
            while owner is not None and not isinstance(owner, (d.ForOp, d.WhileOp)):
                between.append(owner)
                owner = owner.parent_op()
            if owner is loop:
                out.append(between)
    return out


def has_own_break(loop: Operation) -> bool:
    """A `dycl.break` that leaves `loop` itself (not a loop nested in it)."""
    return bool(_own_breaks(loop))


def constant_int(v: SSAValue) -> int | None:
    """The value of an i64 `arith.constant`, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def why_not_peelable(op: d.WhileOp | d.ForOp) -> str | None:
    if PEELED_ATTR in op.attributes:
        return "its first iteration was peeled already"
    if has_own_break(op) and (why := _why_breaks_stay(op)) is not None:
        return why
    if isinstance(op, d.WhileOp) and op.bound == 1:
        return "its bound allows one iteration only"
    if isinstance(op, d.ForOp):
        lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
        if step is None or step <= 0:
            return "its step is known only at run time"
        if lb is not None and ub is not None and lb >= ub:
            return "it runs no iteration"
    return None


def _why_breaks_stay(op: d.WhileOp | d.ForOp) -> str | None:
    """Why a first iteration's `break`s cannot become a flag: one is nested in
    another op than `dycl.if` (see _breaks_to_flag)."""
    for between in _own_breaks(op):
        if (other := next((o for o in between if not isinstance(o, d.IfOp)), None)) is not None:
            return f"it breaks from inside '{other.name}'"
    return None


def peel(op: d.WhileOp | d.ForOp) -> None:
    """The loop's first iteration on its own (see the module's docstring)."""
    if isinstance(op, d.ForOp):
        peel_first_for(op)
    else:
        peel_first_iteration(op)


def _leaves_by_break(op: Operation) -> bool:
    """`op` is, or holds, a `dycl.break` of the loop around it (not of a loop inside it)."""
    if isinstance(op, d.BreakOp):
        return True
    if isinstance(op, (d.ForOp, d.WhileOp)):
        return False
    return any(_leaves_by_break(inner) for r in op.regions for b in r.blocks for inner in b.ops)


def _breaks_to_flag(block: Block) -> str | None:
    """Rewrite a copy of a loop body, out of its loop, so that no `dycl.break` of
    that loop is left in it: the code after an `if` that may break moves into the
    branches that go on (as early returns are eliminated), and the block ends by
    yielding the values it leaves with and whether it broke (an `i1`)."""
    for op in list(block.ops)[:-1]:
        if not _leaves_by_break(op):
            continue
        if not isinstance(op, d.IfOp):
            return f"it breaks from inside '{op.name}'"
        tail = ops_after(op)
        for region in (op.then_region, op.else_region):
            mapping = yielded(op, region.block)
            if mapping is not None:
                continue_in_branch(region.block, op, tail, mapping)
            reason = _breaks_to_flag(region.block)
            if reason is not None:
                return reason
        for t in reversed(tail):
            t.detach()
            t.erase()
        last = op.then_region.block.last_op
        assert last is not None
        merged = retyped_if(op, [d.ANY] * (len(last.operands) - 1) + [i1])
        block.add_op(d.YieldOp(*merged.results))
        return None
    term = block.last_op
    if not isinstance(term, (d.YieldOp, d.BreakOp)):
        return f"its body ends with '{term.name if term else 'nothing'}'"
    flag = arith.ConstantOp(IntegerAttr(int(isinstance(term, d.BreakOp)), i1))
    flag.location = term.location
    block.insert_op_before(flag, term)
    out = d.YieldOp(*term.operands, flag.result)
    out.location = term.location
    block.insert_op_before(out, term)
    block.erase_op(term)
    return None


def _first_iteration(op: d.WhileOp | d.ForOp, values: list[SSAValue]) -> tuple[Block, list[SSAValue], SSAValue | None]:
    """A block holding a copy of `op`'s body on `values` (no terminator), the values
    that iteration hands on, and (where the body has a `break` of its own) whether it broke."""
    body = op.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, values))
    block = Block()
    for inner in body.ops:
        block.add_op(inner.clone(value_mapper=mapping))
    breaks = has_own_break(op)
    if breaks:
        reason = _breaks_to_flag(block)
        assert reason is None, reason  # (why_not_peelable asked first)
    last = block.last_op
    assert isinstance(last, d.YieldOp)
    outs = list(last.operands)
    broke = outs.pop() if breaks else None
    block.erase_op(last)
    return block, outs, broke


def _then_loop(block: Block, firsts: list[SSAValue], broke: SSAValue | None, loop: Operation) -> list[SSAValue]:
    """Add `loop` (which goes on from `firsts`) to `block`, run only where the first
    iteration did not break; the values the two leave with."""
    if broke is None:
        block.add_op(loop)
        return list(loop.results)
    rest = Block([loop, d.YieldOp(*loop.results)])
    after = d.IfOp(broke, [d.ANY] * len(firsts), Region(Block([d.YieldOp(*firsts)])), Region(rest))
    after.location = loop.location
    block.add_op(after)
    return list(after.results)


def peel_first_for(op: d.ForOp) -> None:
    """`for i in range(lb, ub)` with constant bounds (at least one iteration):
    `body(lb, inits)` before the loop, which then starts at `lb + step` from the
    values it made (or is gone, where that was its only iteration). A `break`
    in that first iteration skips the loop."""
    lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
    assert step is not None
    parent = op.parent
    assert parent is not None
    known = lb is not None and ub is not None
    then = Block()
    if known:  # (at least one iteration: the copy runs before the loop)
        first = arith.ConstantOp(IntegerAttr(lb, i64))
        first.location = op.location
        parent.insert_op_before(first, op)
        block, firsts, broke = _first_iteration(op, [first.result, *op.iter_args])
        for inner in list(block.ops):
            inner.detach()
            parent.insert_op_before(inner, op)
        if lb + step >= ub:  # that was its only iteration
            for r, v in zip(list(op.results), firsts):
                r.replace_all_uses_with(v)
            parent.erase_op(op, safe_erase=False)
            return
        start: Operation = arith.ConstantOp(IntegerAttr(lb + step, i64))
        parent.insert_op_before(start, op)
    else:  # `if lb < ub { body(lb); loop from lb + step } else { inits }`, as for `while`
        runs = arith.CmpiOp(op.lb, op.ub, "slt")
        runs.location = op.location
        parent.insert_op_before(runs, op)
        then, firsts, broke = _first_iteration(op, [op.lb, *op.iter_args])
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
    results = _then_loop(then, firsts, broke, loop)
    if known:
        for inner in list(then.ops):
            inner.detach()
            parent.insert_op_before(inner, op)
    else:
        then.add_op(d.YieldOp(*results))
        if_op = d.IfOp(runs.result, [d.ANY] * n, Region(then), Region(Block([d.YieldOp(*op.iter_args)])))
        if_op.location = op.location
        parent.insert_op_before(if_op, op)
        results = list(if_op.results)
    for r, new in zip(list(op.results), results):
        r.replace_all_uses_with(new)
    parent.erase_op(op, safe_erase=False)


def _inline_copy(block: Block, values: list[SSAValue], before: Operation) -> list[SSAValue]:
    """Copies of `block`'s ops (its args mapped to `values`) placed before `before`;
    the operands of its terminator, mapped."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, values))
    for inner in block.ops:
        if inner is block.last_op:
            return [mapping.get(v, v) for v in inner.operands]
        before.parent.insert_op_before(inner.clone(value_mapper=mapping), before)  # type: ignore[union-attr]
    raise AssertionError("a loop region without a terminator")


def peel_first_iteration(op: d.WhileOp) -> None:
    """Rewrite `op` as `if cond(inits) { body(inits); op } else { inits }` (with a
    `break` of its own: `op` runs only where the first iteration did not break); the
    loop left is marked `dycl.peeled` and carries `!dycl.any` values (typed again)."""
    inits = list(op.iter_args)
    (cond,) = _inline_copy(op.cond_region.block, inits, op)
    then, firsts, broke = _first_iteration(op, inits)
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
    then.add_op(d.YieldOp(*_then_loop(then, firsts, broke, loop)))
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
    (with constant bounds: the copy before the loop, no `if`). Where the body
    has a `dycl.break` of its own, the copy yields whether it broke as well (the
    code after each `dycl.if` that may break moves into the branches that go on)
    and the loop runs only where it did not. A marked loop with a break nested
    in another op than `dycl.if`, a bound of one iteration, a run-time step or
    no iteration at all is an error at its location.
    """

    name = "peel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, (d.WhileOp, d.ForOp)) and PEEL_ATTR in o.attributes]:
            why = why_not_peelable(loop)
            if why is not None:
                raise PassError(f"cannot peel this loop: {why}", loop)
            peel(loop)
