"""extract-hcfg: separate branch-free tensor regions from the host control flow."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from dycl.classify import FREE, TENSOR, classify
from dycl.dialects import dycl as d


def _group_results(group: list[Operation]) -> list[SSAValue]:
    members = set(group)
    out: list[SSAValue] = []
    for op in group:
        for r in op.results:
            if any(_top_user(u.operation, members) is None for u in r.uses):
                out.append(r)
    return out


def _top_user(user: Operation, members: set[Operation]) -> Operation | None:
    """The member containing `user` (itself or an ancestor), or None if outside."""
    op: Operation | None = user
    while op is not None:
        if op in members:
            return op
        op = op.parent_op()
    return None


def _wrap(group: list[Operation], free: list[Operation], block: Block) -> None:
    for c in free:  # constants between members must dominate the new region
        c.detach()
        block.insert_op_before(c, group[0])
    results = _group_results(group)
    body = Block()
    region_op = d.TensorRegionOp([r.type for r in results], Region(body))
    region_op.location = group[0].location
    block.insert_op_before(region_op, group[0])
    for op in group:
        op.detach()
        body.add_op(op)
    body.add_op(d.YieldOp(*results))
    for old, new in zip(results, region_op.results):
        old.name_hint, new.name_hint = None, old.name_hint
        for use in list(old.uses):
            if _top_user(use.operation, {region_op}) is None:
                use.operation.operands[use.index] = new


def extract_block(block: Block) -> int:
    """Wrap maximal runs of tensor ops in `block` (and nested blocks); count regions."""
    count = 0
    group: list[Operation] = []
    free: list[Operation] = []
    for op in list(block.ops):
        kind = classify(op)
        if kind == TENSOR:
            group.append(op)
            continue
        if kind == FREE:
            if group:
                free.append(op)
            continue  # constants neither start nor end a region; outlining copies them
        if group:
            _wrap(group, free, block)
            count += 1
            group, free = [], []
        for region in op.regions:
            for b in region.blocks:
                count += extract_block(b)
    if group:
        _wrap(group, free, block)
        count += 1
    return count


@dataclass(frozen=True)
class ExtractHcfgPass(ModulePass):
    """Builds the heterogeneous control-flow graph (HCFG) in the IR.

    Expects: dycl IR (ideally after shape-inference). Guarantees: every tensor
    operation of every host function sits in a `dycl.tensor_region` (an HCFG
    tensor node) holding no control flow and no host reads; control flow,
    `dycl.to_bool`/`dycl.item` and host scalar arithmetic stay outside (HCFG
    condition nodes). Constants are left in place and copied into regions by
    outline-subgraphs. `dycl hcfg` renders the graph as Graphviz DOT.
    """

    name = "extract-hcfg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes:
                extract_block(f.body.block)
