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


_TENSOR_ATTRIBUTES = frozenset({"device", "dtype", "layout"})


def _is_attribute_read(op: Operation) -> bool:
    """`t.device`, `t.dtype` of a tensor: a Python object, free to read again."""
    if not (isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.getattr" and len(op.operands) == 2
            and op.result.type == d.PYOBJ and d.contains_tensor_type(op.operands[0].type)):
        return False
    name = op.operands[1].owner
    return isinstance(name, d.ConstantOp) and getattr(name.value, "data", None) in _TENSOR_ATTRIBUTES


def rematerialize_attribute_reads(block: Block) -> None:
    """A copy of each `t.device` read next to each of its uses: `torch.ones(n,
    device=q.device)` in a later sub-DNN then reads it itself (a device object made
    by another sub-DNN cannot be handed in)."""
    for op in [o for o in block.walk() if _is_attribute_read(o)]:
        for use in list(op.result.uses):
            user = use.operation
            clone = op.clone()
            user.parent.insert_op_before(clone, user)  # type: ignore[union-attr]
            user.operands[use.index] = clone.result
        op.parent.erase_op(op)  # type: ignore[union-attr]


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
    outline-subgraphs; a read of a tensor's `device`/`dtype` is copied next to
    each of its uses first, so each region reads it itself. `dycl hcfg` renders the graph as Graphviz DOT.
    """

    name = "extract-hcfg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes:
                rematerialize_attribute_reads(f.body.block)
                extract_block(f.body.block)
