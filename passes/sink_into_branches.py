"""sink-into-branches: copy the tensor work after a branch into its branches.

`extract-hcfg` cuts a sub-DNN at every host op, and a `dycl.if` is one: the
tensor work a branch ends with and the tensor work after the join run as two
sub-DNNs, two calls on every path, where one would do (a gate's next block and
the next gate's score; the chosen expert and the head after it). Copying the
run of tensor ops that follows the if into each branch that falls through
(tail duplication, as far as the next host op) lets each branch end with one
sub-DNN that does both. Tensor ops before the if that only the tail uses (an
index into the gate's probabilities) move into the tail first.

Each path still runs the same ops in the same order; only sub-DNN boundaries
move. The copies cost build time, so the pass copies a tail only where a branch
gains a call from it, and stops at a budget of copied ops per function.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from dycl.classify import FREE, TENSOR, classify
from dycl.dialects import dycl as d
from dycl.passes.split_paths import yielded

# Ops copied into branches, per function: past it, tails stay where they are.
COPY_BUDGET = 2000
# Ops drawing random numbers keep their place relative to the branch's own (by name).
_RANDOM = ("rand", "bernoulli", "multinomial", "normal", "uniform", "poisson", "dropout", "exponential_",
           "geometric_", "cauchy_", "log_normal_", "random_")

# Ops with effects the caller can see, besides state stores (which tensor ops
# cannot raise after: indices read from data are checked by check-index-bounds,
# and shapes are known).
_EFFECTS = (d.RaiseOp, d.PyRegionOp)


def _pure_tensor(op: Operation) -> bool:
    return not op.regions and classify(op) in (TENSOR, FREE)


def _is_tensor_work(op: Operation) -> bool:
    return not op.regions and classify(op) == TENSOR


def _trailing_stores(block: Block) -> Operation:
    """The first of the state stores (and constants) that end `block` before its
    yield, or the yield: the tail's copy goes there, before the stores, as
    `sink-state-stores` would have put them after it (tensor ops cannot see
    module attributes)."""
    at = block.last_op
    assert at is not None
    while (prev := at.prev_op) is not None and not prev.regions and (
            isinstance(prev, d.SetAttrOp) or classify(prev) == FREE):
        at = prev
    return at


def _ends_with_tensor_work(block: Block) -> bool:
    """The branch's last op before its yield (past stores and constants) is tensor work."""
    op = _trailing_stores(block).prev_op
    return op is not None and _is_tensor_work(op)


def _draws_random(op: Operation) -> bool:
    """A random draw (`torch.rand`, `x.bernoulli()`), or a module call, which may be one (dropout)."""
    name = op.target.data if isinstance(op, d.CallFunctionOp) else op.method.data if isinstance(
        op, d.CallMethodOp) else ""
    return isinstance(op, d.CallModuleOp) or any(r in name.lower() for r in _RANDOM)


def _tail(if_op: d.IfOp) -> list[Operation]:
    """The run of pure tensor ops right after `if_op`, up to the next host op."""
    run: list[Operation] = []
    op = if_op.next_op
    while op is not None and _pure_tensor(op):
        run.append(op)
        op = op.next_op
    return run


def _top(op: Operation, block: Block) -> Operation | None:
    """`op` or its ancestor that is an op of `block`."""
    while op is not None and op.parent is not block:
        op = op.parent_op()
    return op


def sink_tail(if_op: d.IfOp, budget: list[int]) -> d.IfOp | None:
    """Copy the tensor run after `if_op` into its branches that fall through and
    return the if that replaces it; None where no branch would gain a call or
    the budget is spent."""
    block = if_op.parent
    assert block is not None
    branches = [r.block for r in (if_op.then_region, if_op.else_region)]
    falling = [b for b in branches if isinstance(b.last_op, d.YieldOp)]
    if not any(_ends_with_tensor_work(b) for b in falling):
        return None
    tail = _tail(if_op)
    # Past a raise or the model's own Python, a head op would run after effects eager
    # has after it: none move there.
    head = [] if any(isinstance(o, _EFFECTS) for o in if_op.walk()) else _head(if_op, block)
    # Tensor work after the join, or every branch merging with what it gets: else
    # a branch ending in host work would run the moved head ops as a call of their own.
    if not (any(_is_tensor_work(o) for o in tail) or (head and all(_ends_with_tensor_work(b) for b in falling))):
        return None
    if (len(tail) + len(head)) * len(falling) > budget[0]:
        return None
    for o in head:  # (last first: each goes right after the if, so they keep their order)
        o.detach()
        block.insert_op_after(o, if_op)
    _hoist_static(if_op, block)
    tail = _tail(if_op)
    budget[0] -= len(tail) * len(falling)
    members = set(tail)
    live = [v for v in (*if_op.results, *(r for o in tail for r in o.results))
            if any(_top(u.operation, block) not in members for u in v.uses)]
    for branch in falling:
        mapping = yielded(if_op, branch)
        assert mapping is not None
        term = branch.last_op
        at = _trailing_stores(branch)
        for o in tail:
            branch.insert_op_before(o.clone(value_mapper=mapping), at)
        branch.insert_op_before(d.YieldOp(*(mapping.get(v, v) for v in live)), term)
        branch.erase_op(term)
    else_region = if_op.detach_region(if_op.else_region)  # (the last first: detaching renumbers)
    new = d.IfOp(if_op.cond, [v.type for v in live], if_op.detach_region(if_op.then_region), else_region)
    new.location = if_op.location
    new.attributes |= if_op.attributes
    block.insert_op_before(new, if_op)
    for old, res in zip(live, new.results):
        res.name_hint = old.name_hint
        old.replace_all_uses_with(res)
    for o in reversed(tail):
        block.erase_op(o, safe_erase=False)
    block.erase_op(if_op, safe_erase=False)
    return new


def _hoist_static(if_op: d.IfOp, block: Block) -> None:
    """Move the tail's static values (constants, `x.shape`'s attribute name) that do
    not depend on the branch before it: copied, one used after the tail would
    become a result of the if, a run-time value to what uses it."""
    tail = _tail(if_op)
    stays = {if_op, *tail}
    for o in tail:
        if classify(o) == FREE and not any(isinstance(v.owner, Operation) and v.owner in stays
                                           for v in o.operands):
            o.detach()
            block.insert_op_before(o, if_op)
            stays.discard(o)


def _head(if_op: d.IfOp, block: Block) -> list[Operation]:
    """Tensor ops before `if_op` (back to the previous op with regions) that only
    ops after it use, last first."""
    out: list[Operation] = []
    moving: set[Operation] = set()
    order = {o: i for i, o in enumerate(block.ops)}
    op = if_op.prev_op
    while op is not None and not op.regions:
        if _is_tensor_work(op) and not _draws_random(op) and all(
                (top := _top(u.operation, block)) is not None and (order[top] > order[if_op] or top in moving)
                for r in op.results for u in r.uses):
            out.append(op)
            moving.add(op)
        op = op.prev_op
    return out


def sink_block(block: Block, budget: list[int]) -> None:
    """Sink the tails of the ifs of `block`, outer ifs first, then of the blocks
    nested in it (the copies included)."""
    op = block.first_op
    while op is not None:
        if isinstance(op, d.IfOp):
            op = sink_tail(op, budget) or op
        for region in op.regions:
            for b in region.blocks:
                sink_block(b, budget)
        op = op.next_op


@dataclass(frozen=True)
class SinkIntoBranchesPass(ModulePass):
    """Copy the run of tensor ops after each `dycl.if` into its branches that
    fall through, where a branch ends with tensor work, so the branch and what
    follows the join become one sub-DNN per path (one call fewer).

    Expects: dycl IR with static types, before `extract-hcfg`.
    Guarantees: every path runs the same ops in the same order as before, but
    for pure tensor ops moved from before an if to after it (never module calls
    or ops drawing random numbers);
    at most `COPY_BUDGET` ops are copied per function.
    """

    name = "sink-into-branches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                budget = [COPY_BUDGET]
                for b in f.body.blocks:
                    sink_block(b, budget)
