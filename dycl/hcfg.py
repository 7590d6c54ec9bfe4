"""The heterogeneous control-flow graph (HCFG), read off the IR.

Tensor nodes are sub-DNNs (`dycl.call_subgraph`, or `dycl.tensor_region` before
outlining); condition nodes are `dycl.if`s with the predicate they test; loops
are `dycl.for`/`dycl.while`. Edges follow control flow from entry to exit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation

from dycl.diagnostics import loc_of
from dycl.dialects import dycl as d

Pred = tuple[str, str]  # (node id, edge label)


@dataclass
class Node:
    id: str
    kind: str  # entry, exit, tensor, condition, loop, python (a fallback region)
    label: str


@dataclass
class Hcfg:
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    @staticmethod
    def from_module(module: ModuleOp, function: str = "forward") -> Hcfg:
        g = Hcfg()
        host = next(
            (f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == function), None
        )
        if host is None:
            raise ValueError(f"no function @{function} in the module")
        g.nodes.append(Node("entry", "entry", "entry"))
        g.nodes.append(Node("exit", "exit", "exit"))
        g._block(host.body.block, [("entry", "")], [])
        return g

    def _add(self, kind: str, label: str) -> str:
        nid = f"n{len(self.nodes)}"
        self.nodes.append(Node(nid, kind, label))
        return nid

    def _connect(self, preds: list[Pred], to: str) -> None:
        for p, label in preds:
            self.edges.append((p, to, label))

    def _block(self, block: Block, preds: list[Pred], loops: list[str]) -> list[Pred]:
        for op in block.ops:
            if isinstance(op, (d.CallSubgraphOp, d.TensorRegionOp)):
                nid = self._add("tensor", _tensor_label(op))
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
                nid = self._add("condition", f"if {_where(op)}")
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

    def to_dot(self) -> str:
        shapes = {"entry": "oval", "exit": "oval", "tensor": "box", "condition": "diamond", "loop": "hexagon",
                  "python": "note"}
        lines = ["digraph hcfg {", "  rankdir=TB;"]
        for n in self.nodes:
            label = n.label.replace('"', '\\"')
            lines.append(f'  {n.id} [shape={shapes[n.kind]}, label="{label}"];')
        for a, b, label in self.edges:
            attr = f' [label="{label}"]' if label else ""
            lines.append(f"  {a} -> {b}{attr};")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _where(op: Operation) -> str:
    loc = loc_of(op)
    return f"@ line {loc.line}" if loc else ""


def _tensor_label(op: Operation) -> str:
    if isinstance(op, d.CallSubgraphOp):
        return op.callee.root_reference.data
    assert isinstance(op, d.TensorRegionOp)
    return f"region ({len(op.body.block.ops) - 1} ops)"
