"""Shape guards of sub-DNNs built for dynamic dimensions.

torch.export traces a sub-DNN once, at example sizes; where torch's code decides
something from a size (`h // 2 == 1`, whether a pooled size divides evenly), the
export keeps one decision and records a guard. A compiled sub-DNN (TVM, Inductor,
the lifted torch graph) does not check them, so they are written next to its
artifact (`<name>.guards.json`, expressions over its inputs `a[i].shape[k]`) and
the host checks them on every call: a size the build does not hold for is an
error, never a wrong answer.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from dycl.diagnostics import BackendError

_ALLOWED = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Subscript,
            ast.Attribute, ast.Name, ast.Constant, ast.Load, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_FUNCTIONS = {"max", "min", "abs"}


def guards_file(out_dir: Path, name: str) -> Path:
    return out_dir / f"{name}.guards.json"


def write_guards(spec: Any, ep: Any, out_dir: Path | None) -> None:
    """The export's guards on the sub-DNN's dynamic input sizes, as host checks."""
    if out_dir is None or not spec.dynamic:
        return
    positions = {n.name: i for i, n in enumerate(n for n in spec.graph_module.graph.nodes if n.op == "placeholder")}
    guards = []
    for code in getattr(ep, "_guards_code", []) or []:
        text = re.sub(r"L\['([^']+)'\]", lambda m: f"a[{positions.get(m.group(1), -1)}]", code)
        text = text.replace(".size()[", ".shape[")
        if "a[-1]" in text or not _checkable(text):
            raise BackendError(f"sub-DNN {spec.name}: its export holds only where {code}, which dycl cannot check")
        guards.append(text)
    if guards:
        guards_file(out_dir, spec.name).write_text(json.dumps(guards, indent=2) + "\n")


def _checkable(text: str) -> bool:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            return False
        if isinstance(node, ast.Name) and node.id not in {"a", *_FUNCTIONS}:
            return False
        if isinstance(node, ast.Attribute) and node.attr != "shape":
            return False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
            return False
    return True
