"""sink-state-stores: move each `dycl.set_attr` (and each index-bounds check) down
past the tensor work after it.

The frontend stores module state where the Python assigns it (`self.h = h`),
often between tensor ops that would otherwise form one sub-DNN; `extract-hcfg`
cuts a region at every host op. Tensor ops cannot observe module attributes
(they compute on values the host read), so a store may wait until the next host
op of its block (a branch, a loop, a region, a raise, the return), or the next
tensor op that raises on some data in eager (`cholesky`, `inverse`): the module
holds the same values whenever anything on the host can look.

The checks `check-index-bounds` adds (a predicate read and a `dycl.if` marked
`dycl.bounds_check` that raises) wait the same way: the tensor work between
computes on clamped indices and has no effect the host could see, so raising a
little later raises the same exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from dycl.classify import FREE, TENSOR, classify
from dycl.dialects import dycl as d
from dycl.passes.check_index_bounds import BOUNDS_CHECK_ATTR


def sink_block(block: Block) -> None:
    """Sink the stores of `block` and of the blocks nested in it, keeping their order."""
    pending: list[Operation] = []
    for op in list(block.ops):
        if isinstance(op, d.SetAttrOp) or _is_check(op) or _reads_for_check(op):
            pending.append(op)
            continue
        if classify(op) in (TENSOR, FREE) and not op.regions and not may_raise(op):
            continue
        for store in _live(pending):
            store.detach()
            block.insert_op_before(store, op)
        pending = []
        for region in op.regions:
            for b in region.blocks:
                sink_block(b)
    for store in _live(pending):  # a block without a terminator: they stay last
        store.detach()
        block.add_op(store)


# Tensor ops that raise on some data in eager (a matrix that is not positive
# definite, a singular one, negative probabilities): a store before one happens
# before it, as the module after the exception shows.
_RAISING = frozenset({"cholesky", "inverse", "inv", "solve", "multinomial", "_assert", "cholesky_inverse",
                      "cholesky_solve", "lu_factor", "lu", "eigh", "eig", "svd", "matrix_power", "det"})


def may_raise(op: Operation) -> bool:
    name = op.target.data if isinstance(op, d.CallFunctionOp) else op.method.data if isinstance(
        op, d.CallMethodOp) else ""
    return name.rsplit(".", 1)[-1] in _RAISING


def _live(pending: list[Operation]) -> list[Operation]:
    """`pending` without the stores a later one overwrites before anything could see
    them (the same attribute, stored the same way, no check between that could raise):
    `self.ema.mul_(m).add_(x)` stores the module's tensor once."""
    kept: list[Operation] = []
    for op in reversed(pending):
        if isinstance(op, d.SetAttrOp):
            later = next((o for o in kept if _is_check(o) or isinstance(o, d.SetAttrOp) and (
                o.module.data, o.attr_name.data) == (op.module.data, op.attr_name.data)), None)
            if isinstance(later, d.SetAttrOp) and (later.in_place is None) == (op.in_place is None):
                op.detach()
                op.erase()
                continue
        kept.insert(0, op)
    return kept


def _is_check(op: Operation) -> bool:
    return isinstance(op, d.IfOp) and BOUNDS_CHECK_ATTR in op.attributes


def _reads_for_check(op: Operation) -> bool:
    """The predicate read of a bounds check (its only use is the check)."""
    return isinstance(op, d.ToBoolOp) and op.result.uses.get_length() == 1 and _is_check(next(iter(op.result.uses)).operation)


@dataclass(frozen=True)
class SinkStateStoresPass(ModulePass):
    """Move module-state stores (`dycl.set_attr`) past the tensor ops that follow
    them, to just before the next host operation, so that they do not cut
    sub-DNNs apart.

    Index-bounds checks (`dycl.if` marked `dycl.bounds_check`, with the predicate
    read feeding it) move the same way.

    Expects: dycl IR, before `extract-hcfg`.
    A store that the next one overwrites before any host op or check (the same
    attribute, stored the same way) is dropped.

    Guarantees: every `dycl.set_attr` and bounds check is followed only by other
    stores and checks up to a host operation of its block (or the block's end);
    they keep their order and never leave their block.
    """

    name = "sink-state-stores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            for region in f.regions:
                for b in region.blocks:
                    sink_block(b)
