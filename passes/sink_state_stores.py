"""sink-state-stores: move each `dycl.set_attr` down past the tensor work after it.

The frontend stores module state where the Python assigns it (`self.h = h`),
often between tensor ops that would otherwise form one sub-DNN; `extract-hcfg`
cuts a region at every host op. Tensor ops cannot observe module attributes
(parameters and buffers are never stored this way), so a store may wait until the
next host op of its block (a branch, a loop, a region, a raise, the return): the
module holds the same values whenever anything on the host can look.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from dycl.classify import FREE, TENSOR, classify
from dycl.dialects import dycl as d


def sink_block(block: Block) -> None:
    """Sink the stores of `block` and of the blocks nested in it, keeping their order."""
    pending: list[Operation] = []
    for op in list(block.ops):
        if isinstance(op, d.SetAttrOp):
            pending.append(op)
            continue
        if classify(op) in (TENSOR, FREE) and not op.regions:
            continue
        for store in pending:
            store.detach()
            block.insert_op_before(store, op)
        pending = []
        for region in op.regions:
            for b in region.blocks:
                sink_block(b)
    for store in pending:  # a block without a terminator: they stay last
        store.detach()
        block.add_op(store)


@dataclass(frozen=True)
class SinkStateStoresPass(ModulePass):
    """Move module-state stores (`dycl.set_attr`) past the tensor ops that follow
    them, to just before the next host operation, so that they do not cut
    sub-DNNs apart.

    Expects: dycl IR, before `extract-hcfg`.
    Guarantees: every `dycl.set_attr` is followed only by other stores up to a
    host operation of its block (or the block's end); stores keep their order and
    never leave their block.
    """

    name = "sink-state-stores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            for region in f.regions:
                for b in region.blocks:
                    sink_block(b)
