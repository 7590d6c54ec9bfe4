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
        if not _holds_anyway(spec, ep, text):
            guards.append(text)
    if guards:
        guards_file(out_dir, spec.name).write_text(json.dumps(guards, indent=2) + "\n")
        named = [t for t in (in_named_dims(g, spec) for g in guards) if t is not None]
        if named:
            dims_file(out_dir, spec.name).write_text(json.dumps(named, indent=2) + "\n")


_UNIT_GUARD = re.compile(r"a\[(\d+)\]\.shape\[(\d+)\] != ([01])")


def _holds_anyway(spec: Any, ep: Any, guard: str) -> bool:
    """Whether the export also gives its torch graph's answer where `guard`, a
    size-oblivious export's `a[i].shape[k] != 1` (or `!= 0`), fails: its graph
    run at that size on random inputs equals the torch graph's. (An expert that
    exactly one token chose: the export of `out[sel] = f(x[sel])` guards `!= 1`,
    and the host refused the model's own example.) The build is then checked at
    that size too (verify_build's probes)."""
    import torch

    from dycl.backends.verify_build import _leaves, _resized, _same
    from dycl.runtime.loaders.torch_eager import lifted

    m = _UNIT_GUARD.fullmatch(guard.strip("() "))
    if m is None or (int(m[1]), int(m[2])) not in spec.dynamic or not spec.allows(int(m[3])):
        return False
    size = int(m[3])
    try:
        exported = lifted(ep)  # (ep.module() would check the guard itself)
        for seed in range(3):
            inputs = _resized(spec, size, 100 + seed)
            if inputs[int(m[1])].shape[int(m[2])] != size:
                return False
            with torch.no_grad():
                want, got = _leaves(spec.graph_module(*inputs)), _leaves(exported(*inputs))
            if len(want) != len(got) or not all(map(_same, want, got)):
                return False
    except Exception:  # noqa: BLE001 (the export does not take that size: the guard stays)
        return False
    return True


def dims_file(out_dir: Path, name: str) -> Path:
    """The guards that can be said in the signature's named dimensions (`t != 1`):
    the compiled model checks them before running anything, so a size in the
    declared range that a build does not hold for compiles a specialisation (or is
    an input error) before any state is written or a random number drawn."""
    return out_dir / f"{name}.dims.json"


def in_named_dims(guard: str, spec: Any) -> str | None:
    """`guard` over the signature's named dimensions, or None where it reads a size
    that has no name (a data-dependent one)."""
    names = dict(zip(spec.dynamic, spec.dynamic_names))
    failed = False

    def size(m: re.Match[str]) -> str:
        nonlocal failed
        i, k = int(m.group(1)), int(m.group(2))
        if (i, k) in names:
            name = _python_size(names[(i, k)])
            failed |= name is None
            return name if name is None or name.isidentifier() else f"({name})"
        if i >= len(spec.example_inputs):
            failed = True
            return "0"
        return str(spec.example_inputs[i].shape[k])  # a static size

    text = re.sub(r"a\[(\d+)\]\.shape\[(\d+)\]", size, guard)
    return None if failed or "a[" in text else text


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


_SIZE_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Call, ast.Load, ast.operator,
               ast.unaryop)


def _python_size(name: str) -> str | None:
    """A named dimension's size expression (`2*b`, sympy's `Min(s, 4)`) as Python
    over the signature's names, or None ("" for a data-dependent size; `floor`...)."""
    text = re.sub(r"\bMin\(", "min(", re.sub(r"\bMax\(", "max(", name))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, _SIZE_NODES) or isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
            return None
    return text if text else None
