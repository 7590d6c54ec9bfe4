"""outline-subgraphs: turn each HCFG tensor region into a sub-DNN function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, TensorType, TupleType, UnitAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass

from dycl.classify import FREE, TENSOR, classify, is_static_value
from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.passes.constant_propagation import constant_of
from dycl.types import dim_names


def _captured(region_op: Operation) -> list[SSAValue]:
    """Values defined outside `region_op` and used inside it, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in region_op.walk():
        for v in op.operands:
            owner = v.owner
            inside = (
                isinstance(owner, Operation) and region_op.is_ancestor(owner)
            ) or (isinstance(owner, Block) and owner.parent_op() is not None and region_op.is_ancestor(owner.parent_op()))
            if not inside and v not in seen:
                seen[v] = None
    return list(seen)


def _clone_static(v: SSAValue, body: Block, mapping: dict[SSAValue, SSAValue]) -> SSAValue:
    """Copy the constant expression defining `v` into `body` (once)."""
    if v in mapping:
        return mapping[v]
    op = v.owner
    assert isinstance(op, Operation)
    for operand in op.operands:
        _clone_static(operand, body, mapping)
    clone = op.clone(value_mapper=mapping)
    body.add_op(clone)
    for old, new in zip(op.results, clone.results):
        mapping[old] = new
    return mapping[v]


def _leaf_types(t: Attribute) -> list[Attribute]:
    if isinstance(t, TupleType):
        return [leaf for e in t.types.data for leaf in _leaf_types(e)]
    return [t]


def _unpack(v: SSAValue, emit: Callable[[Operation], None]) -> list[SSAValue]:
    """The leaves of a (nested) tuple value, read with dycl.get_item."""
    if not isinstance(v.type, TupleType):
        return [v]
    leaves: list[SSAValue] = []
    for i in range(len(v.type.types.data)):
        item = d.GetItemOp(v, i)
        emit(item)
        leaves.extend(_unpack(item.result, emit))
    return leaves


def _pack(t: Attribute, leaves: list[SSAValue], emit: Callable[[Operation], None]) -> SSAValue:
    """Rebuild a value of type `t` from its leaves (consumed from the front)."""
    if not isinstance(t, TupleType):
        return leaves.pop(0)
    elems = [_pack(e, leaves, emit) for e in t.types.data]
    op = d.MakeTupleOp(elems)
    emit(op)
    return op.result


def _is_index_structure(op: object) -> bool:
    """Tuples/slices built on the host to index a tensor (`p[0, t]` with a run-time t)."""
    if isinstance(op, d.MakeTupleOp) and op.is_list is None:
        return True
    return isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.slice"


def outline(module: ModuleOp, region_op: d.TensorRegionOp, name: str) -> func.FuncOp:
    """Tuples never cross the boundary: they are passed and returned as their leaves."""
    captured = _captured(region_op)
    parent = region_op.parent
    assert parent is not None
    host_before: list[Operation] = []
    call_args: list[SSAValue] = []
    body = Block()
    mapping: dict[SSAValue, SSAValue] = {}

    def bring_in(v: SSAValue) -> SSAValue:
        """The value `v` inside the sub-DNN: a copied constant, a rebuilt index
        tuple/slice (its run-time scalars become inputs), or new inputs."""
        if v in mapping:
            return mapping[v]
        owner = v.owner
        if is_static_value(v):
            return _clone_static(v, body, mapping)
        if v.type == d.PYOBJ and _is_index_structure(owner):
            assert isinstance(owner, Operation)
            for operand in owner.operands:
                bring_in(operand)
            clone = owner.clone(value_mapper=mapping)
            body.add_op(clone)
            mapping[v] = clone.results[0]
            return mapping[v]
        if v.type == d.PYOBJ:
            user = next((u.operation for u in v.uses if region_op.is_ancestor(u.operation)), region_op)
            if isinstance(owner, d.CallFunctionOp):
                made = f"{owner.name} '{owner.target.data}'"
            elif isinstance(owner, d.CallMethodOp):
                made = f"{owner.name} '{owner.method.data}'"
            else:
                made = owner.name if isinstance(owner, Operation) else "a function argument"
            name = f"'{v.name_hint}' " if v.name_hint else ""
            raise PassError(f"a Python object computed at run time ({name}made by {made}) cannot enter a sub-DNN: "
                            f"its value is not known when the sub-DNN is built", user)
        leaves = _unpack(v, host_before.append)
        args = []
        for leaf in leaves:
            a = body.insert_arg(leaf.type, len(body.args))
            a.name_hint = v.name_hint
            args.append(a)
        call_args.extend(leaves)
        mapping[v] = _pack(v.type, args, body.add_op)
        return mapping[v]

    for v in captured:
        bring_in(v)
    inner = region_op.body.block
    for op in list(inner.ops):
        if isinstance(op, d.YieldOp):
            outs: list[SSAValue] = []
            for v in op.values:
                outs.extend(_unpack(mapping.get(v, v), body.add_op))
            ret = func.ReturnOp(*outs)
            continue
        op.detach()
        for i, v in enumerate(op.operands):
            if v in mapping:
                op.operands[i] = mapping[v]
        for nested in op.walk():
            for i, v in enumerate(nested.operands):
                if v in mapping:
                    nested.operands[i] = mapping[v]
        body.add_op(op)
    body.add_op(ret)
    out_types = [r.type for r in ret.operands]
    fn = func.FuncOp(name, ([a.type for a in body.args], out_types), Region(body))
    fn.attributes[d.SUBGRAPH_ATTR] = UnitAttr()
    if sizes := _sizes_of_inputs(call_args):
        fn.attributes[SIZES_ATTR] = ArrayAttr([DenseArrayBase.from_list(i64, list(t)) for t in sizes])
    fn.location = region_op.location
    call = d.CallSubgraphOp(name, call_args, out_types)
    host_after: list[Operation] = []
    leaves = list(call.results)
    rebuilt = [_pack(r.type, leaves, host_after.append) for r in region_op.results]
    for op in [*host_before, call, *host_after]:
        op.location = region_op.location
        parent.insert_op_before(op, region_op)
    for old, new in zip(region_op.results, rebuilt):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    parent.erase_op(region_op)
    return fn


# [input, tensor input, dim] per host int input that is a size of another input
# (`x.view(x.shape[0], -1)`): example and probe inputs keep them consistent.
SIZES_ATTR = "dycl.input_sizes"


def _sizes_of_inputs(args: list[SSAValue]) -> list[tuple[int, int, int]]:
    out = []
    for i, v in enumerate(args):
        if v.type != i64:
            continue
        op, tensor, dim = v.owner, None, None
        if isinstance(op, d.CallFunctionOp) and op.target.data == "_operator.getitem" and len(op.operands) == 2:
            shape = op.operands[0].owner
            if isinstance(shape, d.CallFunctionOp) and shape.target.data == "builtins.getattr" and \
                    len(shape.operands) == 2 and constant_of(shape.operands[1]) == "shape":
                tensor, dim = shape.operands[0], constant_of(op.operands[1])
        elif isinstance(op, d.CallMethodOp) and op.method.data == "size" and len(op.operands) == 2:
            tensor, dim = op.operands[0], constant_of(op.operands[1])
        elif isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.len" and len(op.operands) == 1:
            tensor, dim = op.operands[0], 0
        if not (isinstance(dim, int) and isinstance(tensor, SSAValue) and isinstance(tensor.type, TensorType)):
            continue
        rank = len(tensor.type.get_shape())
        if not -rank <= dim < rank:
            continue
        dim %= rank
        if tensor in args:
            out.append((i, args.index(tensor), dim))
        elif name := (dim_names(tensor.type) or [""] * rank)[dim]:
            # a size of another value, named: an input's dimension of that name
            same = next(((j, k) for j, a in enumerate(args) for k, n in enumerate(dim_names(a.type)) if n == name),
                        None)
            if same is not None:
                out.append((i, *same))
    return out


def check_outlined(module: ModuleOp) -> None:
    """The guarantees of outline-subgraphs, checked on the result."""
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        is_sub = d.SUBGRAPH_ATTR in f.attributes
        for op in f.walk():
            if op is f:
                continue
            if is_sub and isinstance(op, d.HOST_ONLY_OPS):
                raise PassError(f"sub-DNN @{f.sym_name.data} contains host operation '{op.name}'", op)
            if not is_sub and isinstance(op, IRDLOperation) and classify(op) == TENSOR and not isinstance(
                op, (d.MakeTupleOp, d.GetItemOp)  # tuples of sub-DNN results, rebuilt on the host
            ):
                raise PassError(f"host function @{f.sym_name.data} still computes on tensors ('{op.name}')", op)


@dataclass(frozen=True)
class OutlineSubgraphsPass(ModulePass):
    """Outlines every `dycl.tensor_region` into `func.func @sub_N` marked `dycl.subgraph`.

    Expects: the output of extract-hcfg. Guarantees: each region is replaced by a
    `dycl.call_subgraph @sub_N(inputs)`; the inputs are the non-constant values it
    used from the host, constants are copied in; no sub-DNN contains control flow
    or host reads, and host functions hold no tensor compute (checked). A host int
    input that is the size of another input (`x.shape[k]`, `x.size(k)`, `len(x)`) is
    recorded in the sub-DNN's `dycl.input_sizes` ([input, tensor input, dim] each), so
    that the examples a backend builds and is checked with keep them consistent.
    """

    name = "outline-subgraphs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        existing = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        counter = 0
        new_funcs: list[func.FuncOp] = []
        for f in list(op.ops):
            if not isinstance(f, func.FuncOp) or d.SUBGRAPH_ATTR in f.attributes:
                continue
            regions = [r for r in f.walk() if isinstance(r, d.TensorRegionOp)]
            for r in regions:
                while f"sub_{counter}" in existing:
                    counter += 1
                name = f"sub_{counter}"
                existing.add(name)
                new_funcs.append(outline(op, r, name))
        op.body.block.add_ops(new_funcs)
        _remove_dead_statics(op)
        check_outlined(op)


def _remove_dead_statics(module: ModuleOp) -> None:
    changed = True
    while changed:
        changed = False
        for op in list(module.walk()):
            if isinstance(op, IRDLOperation) and op.parent is not None and classify(op) == FREE and all(
                not r.uses for r in op.results
            ):
                op.parent.erase_op(op)
                changed = True
