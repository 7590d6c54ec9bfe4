"""The heterogeneous control-flow graph (HCFG), read off the IR.

Tensor nodes are sub-DNNs (`dycl.call_subgraph`, or `dycl.tensor_region` before
outlining); condition nodes are `dycl.if`s with the predicate they test; loops
are `dycl.for`/`dycl.while`. Edges follow control flow from entry to exit.
Each sub-DNN node carries its op count, input/output types and backend (from the
artifact's manifest where given, else the IR's `dycl.backend`), drawn in `to_dot()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, OpResult

from dycl.diagnostics import loc_of
from dycl.dialects import dycl as d

Pred = tuple[str, str]  # (node id, edge label)


@dataclass
class Node:
    id: str
    kind: str  # entry, exit, tensor, condition, loop, python (a fallback region)
    label: str
    details: list[str] = field(default_factory=list)  # further label lines (a sub-DNN's backend, ops, types)


@dataclass
class Hcfg:
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    # Sub-DNN functions by name, and the manifest's record of each (its final backend).
    _funcs: dict[str, func.FuncOp] = field(default_factory=dict, repr=False, compare=False)
    _built: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_module(module: ModuleOp, function: str = "forward", subgraphs: dict[str, Any] | None = None) -> Hcfg:
        """The HCFG of `function`; `subgraphs` is an artifact's manifest entry of that
        name (the backend that really built each sub-DNN, after any fallback)."""
        g = Hcfg()
        g._funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        g._built = subgraphs or {}
        host = g._funcs.get(function)
        if host is None:
            raise ValueError(f"no function @{function} in the module")
        g.nodes.append(Node("entry", "entry", "entry"))
        g.nodes.append(Node("exit", "exit", "exit"))
        g._block(host.body.block, [("entry", "")], [])
        return g

    def _add(self, kind: str, label: str, details: list[str] | None = None) -> str:
        nid = f"n{len(self.nodes)}"
        self.nodes.append(Node(nid, kind, label, details or []))
        return nid

    def _connect(self, preds: list[Pred], to: str) -> None:
        for p, label in preds:
            self.edges.append((p, to, label))

    def _block(self, block: Block, preds: list[Pred], loops: list[str]) -> list[Pred]:
        for op in block.ops:
            if isinstance(op, (d.CallSubgraphOp, d.TensorRegionOp)):
                nid = self._add("tensor", _tensor_label(op), self._tensor_details(op))
                self._connect(preds, nid)
                preds = [(nid, "")]
            elif isinstance(op, d.PyRegionOp):
                why = op.reason.data.removeprefix("unsupported Python construct: ").split(" (in function")[0]
                nid = self._add("python", f"python {op.loc.data} ({op.construct.data})\\n{why[:60]}")
                self._connect(preds, nid)
                if op.tail is not None:  # it returns from the function
                    self._connect([(nid, "")], "exit")
                    return []
                preds = [(nid, "")]
            elif isinstance(op, d.IfOp):
                nid = self._add("condition", f"if {_where(op)}".rstrip(), _predicate(op))
                self._connect(preds, nid)
                preds = self._block(op.then_region.block, [(nid, "true")], loops) + self._block(
                    op.else_region.block, [(nid, "false")], loops
                )
            elif isinstance(op, (d.ForOp, d.WhileOp)):
                kind = "for" if isinstance(op, d.ForOp) else "while"
                nid = self._add("loop", f"{kind} {_where(op)}")
                self._connect(preds, nid)
                body = op.cond_region.block if isinstance(op, d.WhileOp) else None
                entry = self._block(body, [(nid, "")], loops) if body is not None else [(nid, "")]
                end = self._block(op.body.block, [(p, "body" if p == nid else lab) for p, lab in entry], loops + [nid])
                self._connect(end, nid)
                preds = [(nid, "done")]
            elif isinstance(op, (d.ReturnOp, func.ReturnOp)):
                self._connect(preds, "exit")
                return []
            elif isinstance(op, d.BreakOp):
                self._connect([(p, "break") for p, _ in preds], loops[-1])
                return []
        return preds

    def counts(self) -> dict[str, int]:
        kinds = [n.kind for n in self.nodes]
        return {
            "nodes": len(self.nodes),
            "edges": len(self.edges),
            "tensor_nodes": kinds.count("tensor"),
            "condition_nodes": kinds.count("condition"),
            "loops": kinds.count("loop"),
            "python_nodes": kinds.count("python"),
        }

    def summary(self) -> str:
        c = self.counts()
        return (
            f"HCFG: {c['nodes']} nodes ({c['tensor_nodes']} sub-DNNs, {c['condition_nodes']} conditions, "
            f"{c['loops']} loops"
            + (f", {c['python_nodes']} run as Python" if c["python_nodes"] else "")
            + f"), {c['edges']} edges"
        )

    def _tensor_details(self, op: Operation) -> list[str]:
        if not isinstance(op, d.CallSubgraphOp):
            return []
        name = op.callee.root_reference.data
        fn = self._funcs.get(name)
        built = self._built.get(name)
        backend = built.get("backend") if isinstance(built, dict) else None
        if backend is None and fn is not None and isinstance(fn.attributes.get(d.BACKEND_ATTR), StringAttr):
            backend = fn.attributes[d.BACKEND_ATTR].data  # type: ignore[union-attr]
        lines = [f"backend: {backend}"] if backend else []
        if fn is not None:
            ops = sum(isinstance(o, d.TENSOR_OPS) and not isinstance(o, d.ParamOp) for o in fn.walk())
            lines.append(f"{ops} op{'s' if ops != 1 else ''}")
            lines.append("in: " + ", ".join(_short_type(t) for t in fn.function_type.inputs.data))
            lines.append("out: " + ", ".join(_short_type(t) for t in fn.function_type.outputs.data))
        return lines

    def to_dot(self) -> str:
        lines = ["digraph hcfg {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];',
                 '  edge [fontname="Helvetica", fontsize=9];']
        for n in self.nodes:
            label = "\\n".join(x.replace('"', '\\"') for x in [n.label, *n.details])  # DOT's \n breaks a line
            lines.append(f'  {n.id} [{_STYLE[n.kind]}, label="{label}"];')
        for a, b, label in self.edges:
            attr = f' [label="{label}"]' if label else ""
            lines.append(f"  {a} -> {b}{attr};")
        lines.append("}")
        return "\n".join(lines) + "\n"


# Condition (host) and sub-DNN (device) nodes told apart by shape and colour.
_STYLE = {
    "entry": "shape=oval",
    "exit": "shape=oval",
    "tensor": 'shape=box, style="rounded,filled", fillcolor="#d6e6f5", color="#2b6cb0"',
    "condition": 'shape=diamond, style=filled, fillcolor="#fdebc8", color="#b7791f"',
    "loop": 'shape=hexagon, style=filled, fillcolor="#ece4f7", color="#6b46c1"',
    "python": "shape=note",
}


def _short_type(t: Attribute) -> str:
    """`tensor<1x16xf32>` → `1x16xf32`; scalars as they are."""
    if isinstance(t, TensorType):
        return "x".join([*(str(s) if s >= 0 else "?" for s in t.get_shape()), str(t.element_type)])
    return str(t)


def _predicate(op: d.IfOp) -> list[str]:
    """What the condition tests, where a sub-DNN computes it: `sub_0 result 1`."""
    value = op.cond
    if isinstance(value.owner, d.ToBoolOp):
        value = value.owner.input
    owner = value.owner
    if isinstance(owner, d.CallSubgraphOp) and isinstance(value, OpResult):
        return [f"{owner.callee.root_reference.data} result {value.index}"]
    return []


def _where(op: Operation) -> str:
    loc = loc_of(op)
    return f"@ line {loc.line}" if loc else ""


def _tensor_label(op: Operation) -> str:
    if isinstance(op, d.CallSubgraphOp):
        return op.callee.root_reference.data
    assert isinstance(op, d.TensorRegionOp)
    return f"region ({len(op.body.block.ops) - 1} ops)"
