"""`with` blocks whose context manager cannot change forward's values are their bodies.

Grad-mode switches (`torch.no_grad()`, `inference_mode`, `set_grad_enabled`),
`contextlib.nullcontext` and profiler ranges (`record_function`) only decide
whether autograd records or a profiler sees the code: a compiled model computes
the same values without them. The rewrite runs on the AST before lowering, so a
`return` inside such a block is an ordinary return. Only code that asks about
autograd (`t.requires_grad`, `torch.is_grad_enabled()`) sees the mode: each
statement of a grad-mode block keeps it (`GRAD_MODE_FIELD`), and the ops lowered
from it carry it for shape inference. Any other context manager is left for the
frontend (a fallback region, or a diagnostic with `fallback="error"`).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
from typing import Any

import torch

from dycl.grad_modes import compose

_MISSING = object()
# Statements inside `with torch.no_grad():` and the like: the grad-mode switches made
# around them (dycl.grad_modes), inside their function's mode.
GRAD_MODE_FIELD = "_dycl_grad_mode"


def _transparent() -> tuple[Any, ...]:
    import torch.autograd.profiler
    import torch.profiler

    return (torch.no_grad, torch.enable_grad, torch.inference_mode, torch.set_grad_enabled,
            contextlib.nullcontext, torch.autograd.profiler.record_function, torch.profiler.record_function)


def resolve_static(e: ast.expr, globals_: dict[str, Any]) -> Any:
    """The object a dotted name (`torch.no_grad`) refers to through `globals_`."""
    if isinstance(e, ast.Name):
        return globals_.get(e.id, getattr(builtins, e.id, _MISSING))
    if isinstance(e, ast.Attribute):
        base = resolve_static(e.value, globals_)
        return _MISSING if base is _MISSING else getattr(base, e.attr, _MISSING)
    return _MISSING


class _Flatten(ast.NodeTransformer):
    def __init__(self, globals_: dict[str, Any], local_names: set[str]):
        self.globals = globals_
        self.local_names = local_names
        self.transparent = _transparent()

    def visit_With(self, node: ast.With) -> Any:
        self.generic_visit(node)
        prelude: list[ast.stmt] = []
        switches: list[str] = []
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call) or _root_name(call.func) in self.local_names:
                return node  # a local name may shadow the global
            obj = resolve_static(call.func, self.globals)
            if not any(obj is t for t in self.transparent):
                return node
            if obj in (torch.no_grad, torch.enable_grad, torch.inference_mode, torch.set_grad_enabled):
                mode = _static_grad_mode(obj, call)
                if mode is _MISSING:
                    return node  # (`set_grad_enabled(flag)`: the mode is a run-time value)
                switches.append(mode)
            if item.optional_vars is not None:
                # Only nullcontext(x) gives back a value: `as y` binds y = x.
                if obj is not contextlib.nullcontext:
                    return node
                value = call.args[0] if call.args else ast.copy_location(ast.Constant(None), call)
                prelude.append(ast.copy_location(ast.Assign(targets=[item.optional_vars], value=value), node))
        for mode in reversed(switches):  # (a later item is entered inside the earlier ones)
            _stamp(node.body, mode)
        return [*prelude, *node.body]


def _static_grad_mode(factory: Any, call: ast.Call) -> Any:
    """The grad mode `factory(...)` switches to (see dycl.grad_modes.SWITCHES);
    _MISSING where an argument is not a literal."""
    args = [*call.args, *(k.value for k in call.keywords)]
    if any(not isinstance(a, ast.Constant) for a in args):
        return _MISSING
    flag = bool(args[0].value) if args else True  # type: ignore[attr-defined]
    if factory is torch.no_grad:
        return "off"
    if factory is torch.enable_grad:
        return "on"
    if factory is torch.set_grad_enabled:
        return "on" if flag else "off" if args else _MISSING
    return "inference" if flag else "no-inference"


def grad_mode_of_decorator(ctx: Any) -> str | None:
    """The grad mode a `@torch.no_grad()`-style decorator's context object sets."""
    if isinstance(ctx, torch.no_grad):
        return "off"
    if isinstance(ctx, torch.enable_grad):
        return "on"
    if isinstance(ctx, torch.set_grad_enabled):
        return "on" if getattr(ctx, "mode", True) else "off"
    if isinstance(ctx, torch.inference_mode):
        return "inference" if getattr(ctx, "mode", True) else "no-inference"
    return None


def _stamp(body: list[ast.stmt], mode: str) -> None:
    """Every statement of `body` runs in `mode`, those of a nested `with` in theirs
    made inside it, and the bodies of functions defined there in their caller's."""
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.stmt):
            setattr(n, GRAD_MODE_FIELD, compose(mode, getattr(n, GRAD_MODE_FIELD, None)))
        todo.extend(ast.iter_child_nodes(n))


def _root_name(e: ast.expr) -> str | None:
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def flatten_transparent_with(tree: ast.Module, globals_: dict[str, Any]) -> ast.Module:
    """`tree` with every `with` over transparent context managers replaced by its body."""
    local_names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local_names |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in (*n.args, *n.kwonlyargs)}
    return _Flatten(globals_, local_names).visit(tree)


def restore_grad_switches(stmts: list[ast.stmt], outer: str | None = None) -> list[ast.stmt]:
    """Copies of `stmts` with their grad-mode switches made again around them (the
    `with torch.no_grad():` blocks flattening removed), for Python a region runs."""
    out: list[ast.stmt] = []
    for s in stmts:
        mode = getattr(s, GRAD_MODE_FIELD, outer)
        s = _with_bodies_restored(s, mode)
        if mode != outer and mode is not None:
            if out and getattr(out[-1], _MADE_FIELD, None) == mode:
                out[-1].body.append(s)  # type: ignore[attr-defined]
                continue
            switch = ast.parse(f"__import__('dycl.grad_modes', fromlist=['switched']).switched({mode!r})",
                               mode="eval").body
            s = ast.copy_location(ast.With(items=[ast.withitem(switch)], body=[s]), s)
            setattr(s, _MADE_FIELD, mode)
        out.append(s)
    return out


_MADE_FIELD = "_dycl_grad_switches_made"


def _with_bodies_restored(node: ast.AST, mode: str | None) -> Any:
    """A copy of `node` whose statement lists (bodies, handlers, match cases) have
    their switches made again; functions defined there run in their caller's mode."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node
    node = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            setattr(node, field, restore_grad_switches(value, mode))
        elif isinstance(value, list) and value and isinstance(value[0], (ast.excepthandler, ast.match_case)):
            setattr(node, field, [_with_bodies_restored(h, mode) for h in value])
    return node
