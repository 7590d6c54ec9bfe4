"""hoist-computation-free: move results that need no computation out of sub-DNNs."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dycl.classify import FREE, classify
from dycl.dialects import dycl as d
from dycl.passes.constant_propagation import constant_of

# Ops that return their (first) input unchanged when the result type equals it.
# (Not `clone`: its result is a tensor of its own, which Python code in a fallback region
# may update in place without touching the original.)
_IDENTITY_METHODS = {"contiguous", "detach", "view", "reshape", "view_as", "reshape_as", "float", "to", "type_as"}
_IDENTITY_FUNCTIONS = {"torch.reshape", "torch.flatten", "torch.squeeze", "torch.unsqueeze", "torch.nn.functional.dropout",
                       "torch.dropout", "torch.detach"}
_IDENTITY_MODULES = ("Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout")


@dataclass
class HoistStats:
    identities: int = 0
    passthrough_outputs: int = 0
    constant_outputs: int = 0
    tuple_outputs: int = 0
    removed_regions: int = 0
    merged_regions: int = 0
    moved_ops: int = field(default=0)

    def summary(self) -> str:
        return (
            f"removed {self.identities} identity ops, moved {self.passthrough_outputs} pass-through and "
            f"{self.constant_outputs} constant outputs to the host, built {self.tuple_outputs} tuples there, removed {self.removed_regions} empty "
            f"regions, merged {self.merged_regions} adjacent regions"
        )


def _is_identity(op: Operation, module_types: dict[str, str]) -> SSAValue | None:
    if not isinstance(op, (d.CallMethodOp, d.CallFunctionOp, d.CallModuleOp)):
        return None
    pos, kw = op.positional_and_keyword()
    if not pos or pos[0].type != op.result.type or not d.is_tensor_type(op.result.type):
        return None
    if isinstance(op, d.CallMethodOp) and op.method.data in _IDENTITY_METHODS:
        return pos[0]
    if isinstance(op, d.CallFunctionOp) and op.target.data in _IDENTITY_FUNCTIONS:
        if op.target.data.endswith("dropout"):
            # Identity only in eval mode: F.dropout defaults to training=True.
            training = kw.get("training", pos[2] if len(pos) > 2 else None)
            if training is None or constant_of(training) is not False:
                return None
        return pos[0]
    if isinstance(op, d.CallModuleOp) and module_types.get(op.path.data, "") in _IDENTITY_MODULES and len(pos) == 1:
        return pos[0]
    return None


def hoist_region(region: d.TensorRegionOp, stats: HoistStats, module_types: dict[str, str]) -> None:
    body = region.body.block
    for op in list(body.ops):
        src = _is_identity(op, module_types)
        if src is not None:
            op.results[0].replace_all_uses_with(src)
            body.erase_op(op)
            stats.identities += 1
    term = body.last_op
    assert isinstance(term, d.YieldOp)
    if not any(_hoistable(v, body) for v in term.values):
        return
    # The region keeps yielding what needs computing; the host rebuilds the rest
    # (pass-throughs, constants, tuples of these and of region outputs) after it.
    outputs: list[SSAValue] = []
    recipes = [_recipe(v, body, outputs, stats, top=True) for v in term.values]
    body.erase_op(term)
    body.add_op(d.YieldOp(*outputs))
    for op in reversed(list(body.ops)):  # what moved to the host is dead here now
        if (isinstance(op, d.MakeTupleOp) or classify(op) == FREE) and not any(r.uses for r in op.results):
            body.erase_op(op)
    new = d.TensorRegionOp([v.type for v in outputs], region.detach_region(region.body))
    new.location = region.location
    Rewriter.insert_op(new, InsertPoint.before(region))
    for r, v in zip(new.results, outputs):
        r.name_hint = v.name_hint
    last: list[Operation] = [new]  # host tuples go after the region, in order
    for old, recipe in zip(region.results, recipes):
        value = _materialize(recipe, new, last)
        if old.name_hint and value.name_hint is None:
            value.name_hint = old.name_hint
        old.replace_all_uses_with(value)
    region.parent.erase_op(region, safe_erase=False)  # type: ignore[union-attr]


# How the host gets a region output: ("host", v) it has v already; ("const", op) a
# clone of a computation-free op; ("out", i) the rebuilt region's i-th result;
# ("tuple", op, parts) a clone of a dycl.make_tuple over the parts.
_Recipe = tuple


def _hoistable(v: SSAValue, body: Block) -> bool:
    owner = v.owner
    if not (isinstance(owner, Operation) and owner.parent is body):
        return True
    return classify(owner) == FREE or isinstance(owner, d.MakeTupleOp)


def _recipe(v: SSAValue, body: Block, outputs: list[SSAValue], stats: HoistStats, top: bool = False) -> _Recipe:
    owner = v.owner
    if not (isinstance(owner, Operation) and owner.parent is body):
        stats.passthrough_outputs += top
        return ("host", v)
    if classify(owner) == FREE:
        stats.constant_outputs += top
        return ("const", owner, owner.results.index(v))
    if isinstance(owner, d.MakeTupleOp):
        stats.tuple_outputs += top
        return ("tuple", owner, [_recipe(e, body, outputs, stats) for e in owner.elements])
    if v not in outputs:
        outputs.append(v)
    return ("out", outputs.index(v))


def _materialize(recipe: _Recipe, region: d.TensorRegionOp, last: list[Operation]) -> SSAValue:
    match recipe:
        case ("host", v):
            return v
        case ("const", op, i):
            clone = op.clone()
            Rewriter.insert_op(clone, InsertPoint.before(region))
            return clone.results[i]
        case ("out", i):
            return region.results[i]
        case ("tuple", op, parts):
            values = [_materialize(p, region, last) for p in parts]
            tup = d.MakeTupleOp(values, is_list=op.is_list is not None)
            Rewriter.insert_op(tup, InsertPoint.after(last[0]))
            last[0] = tup
            return tup.results[0]
    raise AssertionError(recipe)


def _only_free_between(a: Operation, b: Operation) -> bool:
    op = a.next_op
    while op is not None and op is not b:
        if classify(op) != FREE:
            return False
        op = op.next_op
    return op is b


def simplify_block(block: Block, stats: HoistStats, module_types: dict[str, str]) -> None:
    for op in list(block.ops):
        if isinstance(op, d.TensorRegionOp):
            hoist_region(op, stats, module_types)
        else:
            for r in op.regions:
                for b in r.blocks:
                    simplify_block(b, stats, module_types)
    for op in list(block.ops):
        if isinstance(op, d.TensorRegionOp) and not op.results:
            block.erase_op(op)  # its tensor work feeds nothing
            stats.removed_regions += 1
    _merge_adjacent(block, stats)


def _merge_adjacent(block: Block, stats: HoistStats) -> None:
    regions = [op for op in block.ops if isinstance(op, d.TensorRegionOp)]
    i = 0
    while i + 1 < len(regions):
        a, b = regions[i], regions[i + 1]
        if not _only_free_between(a, b):
            i += 1
            continue
        merged = _merge(a, b)
        regions[i : i + 2] = [merged]
        stats.merged_regions += 1


def _merge(a: d.TensorRegionOp, b: d.TensorRegionOp) -> d.TensorRegionOp:
    """One region computing both; outputs of `a` used only by `b` become internal."""
    block = a.parent
    assert block is not None
    # Constants between the two move above `a`, so the merged region can use them.
    op = a.next_op
    while op is not b:
        assert op is not None
        nxt = op.next_op
        op.detach()
        block.insert_op_before(op, a)
        op = nxt
    ya, yb = a.body.block.last_op, b.body.block.last_op
    assert isinstance(ya, d.YieldOp) and isinstance(yb, d.YieldOp)
    inner_a = list(ya.values)
    for r, v in zip(a.results, inner_a):
        for use in list(r.uses):
            if b.is_ancestor(use.operation):
                use.operation.operands[use.index] = v
    outputs = [(r, v) for r, v in zip(a.results, inner_a) if r.uses] + list(zip(b.results, yb.values))
    a.body.block.erase_op(ya)
    b.body.block.erase_op(yb)
    for op in list(b.body.block.ops):
        op.detach()
        a.body.block.add_op(op)
    a.body.block.add_op(d.YieldOp(*[v for _, v in outputs]))
    new = d.TensorRegionOp([v.type for _, v in outputs], a.detach_region(a.body))
    new.location = a.location
    block.insert_op_before(new, a)
    for (old, _), r in zip(outputs, new.results):
        r.name_hint = old.name_hint
        old.replace_all_uses_with(r)
    block.erase_op(b, safe_erase=False)
    block.erase_op(a, safe_erase=False)
    return new


@dataclass(frozen=True)
class HoistComputationFreePass(ModulePass):
    """The DyCL graph optimisation: computation-free results leave the sub-DNNs.

    Expects: the output of extract-hcfg. Guarantees: identity ops (dropout in
    eval mode, nn.Identity, same-shape view/reshape/contiguous/clone) are
    removed; region outputs that are pass-throughs of region inputs or constants
    are produced by the host instead; regions left without outputs disappear;
    adjacent regions with no condition between them merge into one.

    Options: `report` prints what moved to stderr.
    """

    name = "hoist-computation-free"

    report: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        module_types = _module_types(op)
        stats = HoistStats()
        from xdsl.dialects import func

        for f in op.ops:
            if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes:
                simplify_block(f.body.block, stats, module_types)
        LAST_STATS[0] = stats
        if self.report:
            print(f"hoist-computation-free: {stats.summary()}", file=sys.stderr)


LAST_STATS: list[HoistStats] = [HoistStats()]


def _module_types(op: ModuleOp) -> dict[str, str]:
    """Submodule path → class name, when the IR names its model (else unknown)."""
    from dycl.models import MODEL_ATTR, model_of

    if MODEL_ATTR not in op.attributes:
        return {}
    try:
        model = model_of(op)
    except Exception:
        return {}
    return {name: type(m).__name__ for name, m in model.named_modules()}
