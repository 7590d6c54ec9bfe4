"""The whole host program as one ONNX graph, for ONNX Runtime to run in one call.

Where the host function holds nothing but sub-DNN calls, predicate reads
(`dycl.to_bool`) and `dycl.if` (early `return` included), the per-sub-DNN ONNX
exports compose into one model: each call's nodes inlined, each `dycl.if` an ONNX
`If` whose branches hold their calls, and the code after an `if` whose branch
returns copied into the branch that falls through. One `session.run` then replaces
a Python host step, a session call and a hand-over per HCFG node; the predicates
are still computed, by the same nodes, so every path gives what the split program
gives. Anything else in the host (loops, scalars, Python fallback regions, module
state) leaves the program split: `compose` raises NotComposable.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import onnx
import torch
from onnx import TensorProto, helper
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from dycl.types import dtype_of


class NotComposable(Exception):
    """The host function holds something one ONNX graph cannot express."""


# Host scalars as 0-d tensors of Python's precision (a Python float is a double).
_SCALARS = {"i1": TensorProto.BOOL, "i64": TensorProto.INT64, "f64": TensorProto.DOUBLE}


def _element(t: Any) -> int:
    return helper.np_dtype_to_tensor_dtype(torch.empty((), dtype=dtype_of(t)).numpy().dtype)


def _value_info(name: str, t: Any) -> onnx.ValueInfoProto:
    if str(t) in _SCALARS:
        return helper.make_tensor_value_info(name, _SCALARS[str(t)], [])
    if not isinstance(t, TensorType):
        raise NotComposable(f"a {t} value crosses the host")
    return helper.make_tensor_value_info(name, _element(t.element_type), [n if n >= 0 else None for n in t.get_shape()])


# arith comparisons ONNX has, by predicate: (op, negated). Ordered float predicates are
# false with a NaN, as ONNX's comparisons are; `une` is true with one.
_COMPARE = {"eq": ("Equal", False), "ne": ("Equal", True), "slt": ("Less", False), "sle": ("LessOrEqual", False),
            "sgt": ("Greater", False), "sge": ("GreaterOrEqual", False), "oeq": ("Equal", False),
            "une": ("Equal", True), "olt": ("Less", False), "ole": ("LessOrEqual", False),
            "ogt": ("Greater", False), "oge": ("GreaterOrEqual", False)}
_LOGIC = {"arith.andi": "And", "arith.ori": "Or", "arith.xori": "Xor"}
_FLOAT_ARITH = {"arith.addf": "Add", "arith.subf": "Sub", "arith.mulf": "Mul"}


# Every host op the composer translates (some only for some types: `seq` checks those).
HOST_OPS = frozenset({"dycl.call_subgraph", "dycl.to_bool", "dycl.make_tuple", "dycl.get_item", "dycl.item",
                      "dycl.if", "dycl.yield", "dycl.return", "func.return", "arith.constant", "arith.cmpi",
                      "arith.cmpf", "arith.select", "arith.sitofp", "arith.fptosi", "arith.extui", "arith.extsi",
                      *_LOGIC,
                      *_FLOAT_ARITH})


def check_host_ops(forward: func.FuncOp) -> None:
    """Raises NotComposable where `forward` holds an op no ONNX graph here expresses."""
    for op in forward.body.walk():
        if op.name not in HOST_OPS:
            raise NotComposable(f"the host runs {op.name}")


# (the `if` whose branch fell through, the ops after it, the continuation around that)
_Then = tuple[Operation, list[Operation], "Any"]


class _Composer:
    def __init__(self, subs: Mapping[str, onnx.ModelProto], forward: func.FuncOp):
        self.subs = subs
        # Each call's weights live in the graph that uses them: ONNX Runtime treats an outer
        # scope's initializers as inputs inside an If branch, so a branch's Conv weights would be
        # neither prepacked nor moved to its blocked layout.
        self.initializers: list[list[onnx.TensorProto]] = [[]]
        self.ids = itertools.count()
        # forward's results as tensors: a tuple is its elements, rebuilt by the host (structure).
        self.results: list[Any] = []
        self.structure = [self.leaves_of(t) for t in forward.function_type.outputs.data]
        # ONNX names that are forward's own inputs: the split host returns such a value as is
        # (the caller's tensor), a session a copy of it.
        self.aliases = {f"in{i}" for i in range(len(forward.body.block.args))}

    def leaves_of(self, t: Any) -> Any:
        """`t`'s structure (None: a tensor, a list: a tuple of structures), its tensors added to results."""
        if hasattr(t, "types"):
            return [self.leaves_of(e) for e in t.types.data]
        if not isinstance(t, TensorType):
            raise NotComposable("forward returns something other than tensors and tuples of them")
        self.results.append(t)
        return None

    def fresh(self, what: str) -> str:
        return f"dycl_{what}_{next(self.ids)}"

    def graph(self, ops: list[Operation], names: dict[SSAValue, str], types: list[Any],
              then: _Then | None = None) -> tuple[onnx.GraphProto, list[bool]]:
        """A branch's graph, and which of its outputs are forward's inputs passed on."""
        nodes: list[onnx.NodeProto] = []
        self.initializers.append([])
        values = self.seq(ops, dict(names), nodes, then)
        aliased = [v in self.aliases for v in values]
        outputs = []
        for v, t in zip(values, types, strict=True):
            if isinstance(v, tuple):
                raise NotComposable("a branch yields a tuple")
            out = self.fresh("out")  # a branch's outputs are its own values, never an outer name
            nodes.append(helper.make_node("Identity", [v], [out]))
            outputs.append(_value_info(out, t))
        return helper.make_graph(nodes, self.fresh("branch"), [], outputs, initializer=self.initializers.pop()), aliased

    def seq(self, ops: list[Operation], names: dict[SSAValue, str], nodes: list[onnx.NodeProto],
            then: _Then | None = None) -> list[str]:
        """Translates `ops` up to their terminator; the ONNX names it yields or returns."""
        for i, op in enumerate(ops):
            match op.name:
                case "dycl.call_subgraph":
                    self.call(op, names, nodes)
                case "dycl.to_bool":
                    self.predicate(op, names, nodes)
                case "dycl.make_tuple":
                    names[op.results[0]] = tuple(names[v] for v in op.operands)  # type: ignore[assignment]
                case "dycl.get_item":
                    held = names[op.operands[0]]
                    if not isinstance(held, tuple):
                        raise NotComposable("an item of something other than a tuple")
                    names[op.results[0]] = held[op.properties["index"].value.data]  # type: ignore[union-attr]
                case "dycl.item":
                    self.item(op, names, nodes)
                case "arith.constant":
                    self.constant(op, names, nodes)
                case "arith.cmpi" | "arith.cmpf":
                    self.compare(op, names, nodes)
                case name if name in _LOGIC and str(op.results[0].type) == "i1" or name in _FLOAT_ARITH:
                    out = self.fresh("host")
                    nodes.append(helper.make_node(_LOGIC.get(name) or _FLOAT_ARITH[name],
                                                  [names[v] for v in op.operands], [out]))
                    names[op.results[0]] = out
                case "arith.sitofp" | "arith.fptosi" | "arith.extui" | "arith.extsi" \
                        if str(op.results[0].type) in _SCALARS:
                    out = self.fresh("cast")  # float(n), int(flag): exact, or rounded to nearest as Python does
                    nodes.append(helper.make_node("Cast", [names[op.operands[0]]], [out],
                                                  to=_SCALARS[str(op.results[0].type)]))
                    names[op.results[0]] = out
                case "arith.select":
                    out = self.fresh("select")
                    c, a, b = (names[v] for v in op.operands)
                    if str(op.results[0].type) == "i1":  # (ONNX Runtime has no Where of bools)
                        taken, other, not_c = self.fresh("taken"), self.fresh("other"), self.fresh("not")
                        nodes += [helper.make_node("And", [c, a], [taken]), helper.make_node("Not", [c], [not_c]),
                                  helper.make_node("And", [not_c, b], [other]),
                                  helper.make_node("Or", [taken, other], [out])]
                    else:
                        nodes.append(helper.make_node("Where", [c, a, b], [out]))
                    names[op.results[0]] = out
                case "dycl.if":
                    cond = names[op.operands[0]]
                    if isinstance(cond, tuple):
                        raise NotComposable("a branch on a tuple")
                    if any(o.name == "dycl.return" for r in op.regions for o in r.walk()):
                        # A branch returns: the rest of this block runs in each branch that falls through.
                        after = (op, ops[i + 1:], then)
                        (then_graph, _), (else_graph, _) = [self.graph(list(r.block.ops), names, self.results, after)
                                                            for r in op.regions]
                        outs = [self.fresh("ret") for _ in self.results]
                        nodes.append(helper.make_node("If", [cond], outs, then_branch=then_graph,
                                                      else_branch=else_graph))
                        return outs
                    types = [r.type for r in op.results]
                    (then_graph, then_aliased), (else_graph, else_aliased) = [
                        self.graph(list(r.block.ops), names, types) for r in op.regions]
                    outs = [self.fresh("if") for _ in op.results]
                    nodes.append(helper.make_node("If", [cond], outs, then_branch=then_graph, else_branch=else_graph))
                    names.update(zip(op.results, outs))
                    self.aliases.update(o for o, a, b in zip(outs, then_aliased, else_aliased) if a or b)
                case "dycl.yield":
                    values = [names[v] for v in op.operands]
                    if then is None:
                        return values
                    if_op, rest, outer = then
                    names.update(zip(if_op.results, values))
                    return self.seq(rest, names, nodes, outer)
                case "dycl.return" | "func.return":
                    leaves = _flatten([names[v] for v in op.operands])
                    if len(leaves) != len(self.results):
                        raise NotComposable("forward returns a tuple of another structure than its type's")
                    if any(n in self.aliases for n in leaves):
                        raise NotComposable("forward returns one of its inputs (the split host returns it as is)")
                    return leaves
                case other:
                    raise NotComposable(f"the host runs {other}")
        raise NotComposable("a block without a terminator")

    def call(self, op: Operation, names: dict[SSAValue, str], nodes: list[onnx.NodeProto]) -> None:
        callee = op.properties["callee"].root_reference.data  # type: ignore[union-attr]
        sub = self.subs.get(callee)
        if sub is None:
            raise NotComposable(f"{callee} has no ONNX build")
        prefix = f"c{next(self.ids)}_"
        graph = onnx.compose.add_prefix_graph(sub.graph, prefix)
        for given in graph.input:
            position = int(given.name.removeprefix(prefix + "in"))  # the exporter names inputs in<position>
            value = op.operands[position]
            if isinstance(names[value], tuple):
                raise NotComposable(f"{callee} takes a tuple")
            if isinstance(value.type, TensorType):
                nodes.append(helper.make_node("Identity", [names[value]], [given.name]))
            else:  # a host scalar, as the loaders hand it over (dycl.runtime.loaders.scalar_array)
                nodes.append(helper.make_node("Cast", [names[value]], [given.name],
                                              to=given.type.tensor_type.elem_type))
        nodes.extend(graph.node)
        self.initializers[-1].extend(graph.initializer)
        if len(graph.output) != len(op.results):
            raise NotComposable(f"{callee}'s ONNX graph has {len(graph.output)} outputs, the call {len(op.results)}")
        names.update(zip(op.results, (o.name for o in graph.output)))

    def item(self, op: Operation, names: dict[SSAValue, str], nodes: list[onnx.NodeProto]) -> None:
        t, result = op.operands[0].type, str(op.results[0].type)
        if not isinstance(t, TensorType) or any(n < 0 for n in t.get_shape()) or math.prod(t.get_shape()) != 1:
            raise NotComposable("an item of a tensor that is not one element of static shape")
        dtype = dtype_of(t.element_type)
        natural = "i1" if dtype == torch.bool else "f64" if dtype.is_floating_point else "i64"
        if result != natural or dtype.is_complex:
            raise NotComposable(f"a {dtype} tensor read as {result}")
        shape, scalar, out = self.fresh("shape"), self.fresh("scalar"), self.fresh("item")
        nodes.append(helper.make_node("Constant", [], [shape], value=helper.make_tensor(shape, TensorProto.INT64,
                                                                                          [0], [])))
        nodes.append(helper.make_node("Reshape", [names[op.operands[0]], shape], [scalar]))
        nodes.append(helper.make_node("Cast", [scalar], [out], to=_SCALARS[result]))
        names[op.results[0]] = out

    def constant(self, op: Operation, names: dict[SSAValue, str], nodes: list[onnx.NodeProto]) -> None:
        kind = str(op.results[0].type)
        if kind not in _SCALARS:
            raise NotComposable(f"a constant of type {kind}")
        value = op.properties["value"].value.data  # type: ignore[union-attr]
        if kind == "i1":
            value = bool(value)
        out = self.fresh("const")
        nodes.append(helper.make_node("Constant", [], [out], value=helper.make_tensor(out, _SCALARS[kind], [],
                                                                                      [value])))
        names[op.results[0]] = out

    def compare(self, op: Operation, names: dict[SSAValue, str], nodes: list[onnx.NodeProto]) -> None:
        predicates = arith.CMPI_COMPARISON_OPERATIONS if op.name == "arith.cmpi" else arith.CMPF_COMPARISON_OPERATIONS
        predicate = predicates[op.predicate.value.data]  # type: ignore[attr-defined]
        if predicate not in _COMPARE or (str(op.operands[0].type) == "i1" and predicate not in ("eq", "ne")):
            raise NotComposable(f"the comparison '{predicate}'")
        kind, negated = _COMPARE[predicate]
        out = self.fresh("cmp")
        nodes.append(helper.make_node(kind, [names[v] for v in op.operands], [out]))
        if negated:
            nodes.append(helper.make_node("Not", [out], [out + "_not"]))
            out += "_not"
        names[op.results[0]] = out

    def predicate(self, op: Operation, names: dict[SSAValue, str], nodes: list[onnx.NodeProto]) -> None:
        t = op.operands[0].type
        if not isinstance(t, TensorType) or any(n < 0 for n in t.get_shape()) or math.prod(t.get_shape()) != 1:
            raise NotComposable("a predicate that is not a one-element tensor of static shape")
        src = names[op.operands[0]]
        if dtype_of(t.element_type) != torch.bool:  # bool(t) is t != 0, NaN true: ONNX's Cast to BOOL
            cast = self.fresh("cond")
            nodes.append(helper.make_node("Cast", [src], [cast], to=TensorProto.BOOL))
            src = cast
        names[op.results[0]] = src


def compose(forward: func.FuncOp, subs: Mapping[str, onnx.ModelProto]) -> tuple[onnx.ModelProto, list[Any]]:
    """One ONNX model computing `forward` (inputs in<i>, outputs out<k>: the tensors of its
    results, tuples' elements in order), from each sub-DNN's ONNX model by name, and the
    results' structure (None: a tensor, a list: a tuple of structures). Raises NotComposable."""
    if not subs:
        raise NotComposable("no sub-DNNs")
    composer = _Composer(subs, forward)
    block: Block = forward.body.block
    names: dict[SSAValue, str] = {}
    inputs = []
    for i, arg in enumerate(block.args):
        assert isinstance(arg, BlockArgument)
        names[arg] = f"in{i}"
        inputs.append(_value_info(f"in{i}", arg.type))
    nodes: list[onnx.NodeProto] = []
    returned = composer.seq(list(block.ops), names, nodes)
    outputs = []
    for k, (v, t) in enumerate(zip(returned, composer.results, strict=True)):
        nodes.append(helper.make_node("Identity", [v], [f"out{k}"]))
        outputs.append(_value_info(f"out{k}", t))
    graph = helper.make_graph(nodes, "dycl_program", inputs, outputs, initializer=composer.initializers[0])
    model = helper.make_model(graph, opset_imports=_opsets(subs.values()),
                              ir_version=max(m.ir_version for m in subs.values()),
                              functions=_functions(subs.values()))
    return model, composer.structure


def _flatten(values: Any) -> list[str]:
    return [n for v in values for n in (_flatten(v) if isinstance(v, tuple) else [v])]


def _opsets(models: Any) -> list[onnx.OperatorSetIdProto]:
    versions: dict[str, int] = {}
    for m in models:
        for o in m.opset_import:
            versions.setdefault(o.domain, o.version)
            if versions[o.domain] != o.version:
                raise NotComposable(f"sub-DNNs exported for different opsets of '{o.domain or 'ai.onnx'}'")
    return [helper.make_opsetid(domain, version) for domain, version in versions.items()]


def _functions(models: Any) -> list[onnx.FunctionProto]:
    found: dict[tuple[str, str], onnx.FunctionProto] = {}
    for m in models:
        for f in m.functions:
            key = (f.domain, f.name)
            if key in found and found[key].SerializeToString() != f.SerializeToString():
                raise NotComposable(f"two sub-DNNs define ONNX function {f.name} differently")
            found[key] = f
    return list(found.values())
