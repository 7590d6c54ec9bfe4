"""Fallback regions: what the frontend cannot translate runs as the user's Python.

When a statement cannot be translated faithfully, it becomes a `dycl.py_region`:
its source, made into a function of the values it reads (live-ins) that returns
the names it assigns (live-outs), run by the host on the real model. The region
is as small as the semantics allow:

- one statement (an `if` whose test alone fails keeps its branches compiled);
- a statement holding `break`/`continue` of an enclosing loop widens to that
  loop; one holding `return` widens to the end of its function (a *tail* region
  whose result is the function's result);
- a value the region cannot receive (a module chosen at run time, say), or a
  tensor it may update in place while another name views it, widens it to the
  enclosing statement, up to the whole function.

Module attributes a region writes are run-time state: the compile is redone with
reads of them left to the host (see `Lowerer.dirty_attrs`).
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from xdsl.dialects.builtin import UnitAttr, i1
from xdsl.ir import Attribute, BlockArgument, SSAValue

from dycl.diagnostics import FrontendError
from dycl.frontend.contexts import restore_grad_switches
from dycl.dialects import dycl as d
from dycl.frontend.inplace import bound_values, maybe_tensor, rebind
from dycl.frontend.state import forget_state
from dycl.frontend.values import (MUTATING_METHODS, DictVal, GlobalRef, MethodRef, ModuleRef, NamedSeq, ObjectRef, ObjectVal,
                                  SeqVal, Static, StaticObject, Value, qualname_of)
from dycl.pyregion import UNBOUND_NAME, globals_key

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
# Callees known not to update their tensor arguments in place.
_PURE_ROOTS = {"torch", "F", "math", "print", "len", "isinstance", "str", "int", "float", "bool", "repr", "format",
               "range", "enumerate", "zip", "min", "max", "abs", "sum", "any", "all", "tuple", "list", "dict",
               "sorted", "round", "type", "hasattr", "getattr", "id", "hash", "warnings", "logger", "logging"}


_CONTAINER_TYPES = {"list", "dict", "set", "tuple"}
# Methods called by name that change their receiver (`s.__setattr__("n", 5)`).
_CHANGING_DUNDERS = {"__setattr__", "__delattr__", "__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__",
                     "__ior__", "__iand__"}


def _writes_tensors_in_place(stmts: list[ast.stmt]) -> bool:
    """An in-place method (`h2.div_(2)`), an item store (`h[0] = v`), an augmented
    assignment or an `out=`/`inplace=True` call among the statements."""
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.AugAssign) or isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.Call) and (
                isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") and not node.func.attr.endswith("__")
                or any(k.arg in ("out", "inplace") for k in node.keywords)):
            return True
    return False


def _copied_by_the_program(v: SSAValue) -> bool:
    """A view compiled code makes (handed to Python as a copy); a region's result is
    Python's own object (a view stays one)."""
    op = v.owner
    while isinstance(op, d.GetItemOp):
        op = op.source.owner
    return not isinstance(op, d.PyRegionOp)


class Widen(Exception):
    """No region can be made at this statement: the enclosing one must hold it."""

    def __init__(self, error: FrontendError):
        super().__init__(str(error))
        self.error = error


@dataclass
class RegionRecord:
    """What the compile reports about one region."""

    loc: str
    construct: str
    reason: str


def construct_of(s: ast.stmt) -> str:
    names = {ast.Try: "try/except", ast.With: "with", ast.Raise: "raise", ast.Assert: "assert",
             ast.Delete: "del", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Import: "import",
             ast.ImportFrom: "import", ast.FunctionDef: "nested function", ast.ClassDef: "class definition",
             ast.For: "for loop", ast.While: "while loop", ast.If: "if", ast.Return: "return",
             ast.AugAssign: "augmented assignment", ast.Assign: "assignment", ast.Expr: "expression statement"}
    if hasattr(ast, "TryStar") and isinstance(s, ast.TryStar):
        return "try/except*"
    return names.get(type(s), type(s).__name__)


def _walk_scope(nodes: list[ast.AST]) -> Iterator[tuple[ast.AST, bool]]:
    """Every node, with whether it sits inside a nested function/lambda/comprehension."""
    stack: list[tuple[ast.AST, bool]] = [(n, False) for n in nodes]
    while stack:
        node, nested = stack.pop()
        yield node, nested
        inner = nested or isinstance(node, _NESTED)
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))


def _in_function(node: ast.AST, stmts: list[ast.stmt]) -> bool:
    """Whether `node` sits inside a function or lambda defined in `stmts`."""
    return any(node in set(ast.walk(f)) for s in stmts for f in ast.walk(s)
               if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def names_of(stmts: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """(names read, names bound at the region's own level)."""
    loads: set[str] = set()
    stores: set[str] = set()
    for node, nested in _walk_scope(list(stmts)):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.add(node.id)
            elif not nested:
                stores.add(node.id)
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name) and \
                not _in_function(node, stmts):
            stores.add(node.target.id)  # (a walrus in a comprehension binds in the enclosing scope: PEP 572)
        if nested:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stores.add(node.name)
    return loads, stores


def where_of(lowerer: Lowerer, node: ast.AST) -> str:
    """`file.py:line:col` of `node`, as regions are named."""
    loc = lowerer._loc(node)
    return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}:{loc.col}"


def _may_update(stmts: list[ast.stmt], names: set[str]) -> str | None:
    """Which of `names` `stmts` may update in place (a tensor they hold): `g.add_(...)`,
    `g += ...`, `g[i] = ...` (also `g[i] += ...`), or `g` handed to a call (which may do
    either); None if none."""
    if not names:
        return None
    for node in (n for s in stmts for n in ast.walk(s)):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names:
            return node.target.id
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id in names:
            return node.value.id
        if isinstance(node, ast.Call) and (given := [a.id for a in [*node.args, *(k.value for k in node.keywords)]
                                                     if isinstance(a, ast.Name) and a.id in names]) and (
                not isinstance(node.func, ast.Attribute) or not isinstance(node.func.value, ast.Name)
                or node.func.value.id not in _PURE_ROOTS or node.func.attr.endswith("_")):
            return given[0]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names and \
                node.attr.endswith("_"):
            return node.value.id
    return None


def definitely_bound(stmts: list[ast.stmt]) -> set[str]:
    """Names every path through `stmts` that ends normally binds: targets of its own
    top-level assignments, and those both sides of an `if` bind, or a `try` and each of
    its handlers (a side that raises, returns or leaves the loop does not end here)."""
    bound = _bound_on_normal_exit(stmts)
    return set() if bound is None else bound


def _bound_on_normal_exit(stmts: list[ast.stmt]) -> set[str] | None:
    """As definitely_bound; None where no path through `stmts` ends normally."""
    names: set[str] = set()
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return None
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(
            s, (ast.AnnAssign, ast.AugAssign)) and (not isinstance(s, ast.AnnAssign) or s.value is not None) else []
        names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(s.name)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in s.names}
        elif isinstance(s, ast.If):
            sides = [_bound_on_normal_exit(s.body), _bound_on_normal_exit(s.orelse)]
            ends = [b for b in sides if b is not None]
            if not ends:
                return None
            names |= set.intersection(*ends)
        elif isinstance(s, ast.Try):
            body = _bound_on_normal_exit(s.body + s.orelse)
            sides = [body] + [_bound_on_normal_exit(h.body) for h in s.handlers]
            ends = [b for b in sides if b is not None]
            final = _bound_on_normal_exit(s.finalbody)
            if not ends or final is None:
                return None
            names |= set.intersection(*ends) | final
    return names


def has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) and not nested for n, nested in _walk_scope(list(stmts)))


def has_loose_exit(stmts: list[ast.stmt]) -> bool:
    """A break/continue that leaves a loop enclosing the region."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, _LOOPS + _NESTED):
            if isinstance(node, _LOOPS):
                stack.extend(node.orelse)  # `else` of a loop belongs to the outer one
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def is_synthetic(stmts: list[ast.stmt]) -> bool:
    """Statements made by the frontend that have no Python source (loop items)."""
    std = (ast.AST,)
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if type(node).__module__ != "ast" or not isinstance(node, std):
            return True
    return False


def mutated_names(stmts: list[ast.stmt], env: dict[str, Value]) -> set[str]:
    """Names whose value the region may update in place (tensors, lists)."""
    out: set[str] = set()
    for node, _ in _walk_scope(list(stmts)):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and (not f.attr.startswith("__") or f.attr in _CHANGING_DUNDERS):
                base = f.value
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value  # v[0].add_(...) writes into v
                held = env.get(base.id) if isinstance(base, ast.Name) else None
                if isinstance(base, ast.Name) and (f.attr.endswith("_") or f.attr in _CHANGING_DUNDERS or
                                                   isinstance(held, SeqVal) or (
                        f.attr in MUTATING_METHODS and (isinstance(held, SSAValue) or isinstance(held, Static) and
                                                        isinstance(held.value, (list, dict, set))))):
                    out.add(base.id)  # x.add_(...), xs.append(...) (also a list made at run time)
                elif not isinstance(base, ast.Name) and (f.attr.endswith("_") or f.attr in MUTATING_METHODS):
                    # `(pos if c else neg).append(v)`: whichever the receiver turns out to be
                    out.update(n for n in _aliased_names(base) if isinstance(env.get(n), (SeqVal, SSAValue)))
            for k in node.keywords:  # torch.add(y, 5, out=y); F.relu(y, inplace=True)
                if k.arg == "out":
                    out.update(n.id for n in ast.walk(k.value) if isinstance(n, ast.Name))
                elif k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value) and \
                        node.args and isinstance(node.args[0], ast.Name):
                    out.add(node.args[0].id)
            root = f
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if not (isinstance(root, ast.Name) and root.id in _PURE_ROOTS) or (
                    root is not f and root.id in _CONTAINER_TYPES):  # (`list.append(l, v)`: l changes)
                # A user function or module may update its arguments.
                out.update(a.id for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name))
                out.update(a.value.id for a in node.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            # `l = a if c else b` (or `l = a`): changes made through l change a or b
            out.update(n for n in _aliased_names(node.value) if isinstance(env.get(n), SeqVal))
    return out


def _shares_changed_containers(env: dict[str, Value], mutated: set[str]) -> bool:
    """Whether a list or dict the region may change is reachable twice among the names
    in scope (an alias, or one inner list held twice)."""
    def reach(v: Any, depth: int = 0) -> Iterator[SeqVal]:
        if isinstance(v, SeqVal) and depth < 16:
            if v.is_list or isinstance(v, DictVal):
                yield v
            for x in v.items:
                yield from reach(x, depth + 1)

    changed = {id(c) for n in mutated for c in reach(env.get(n))}
    if not changed:
        return False
    seen: set[int] = set()
    for v in env.values():
        for c in reach(v):
            if id(c) in changed:
                if id(c) in seen:
                    return True
                seen.add(id(c))
    return False


def _tensors_in(v: Any, depth: int = 0) -> Iterator[SSAValue]:
    """The run-time tensors `v` is or holds (a list's, tuple's, dict's or object's items)."""
    if isinstance(v, SSAValue):
        if maybe_tensor(v):
            yield v
    elif isinstance(v, SeqVal) and depth < 16:
        for x in v.items:
            yield from _tensors_in(x, depth + 1)


_RETURNED = "<return>"  # (a tail region's result, for _held_names)


def _held_names(stmts: list[ast.stmt], outs: list[str], env: dict[str, Value],
                globals_: dict[str, Any]) -> Iterator[str]:
    """Which of the region's results may be a tensor an object outside the region
    holds (the module, a list attribute, a global): a name bound to an attribute or
    item read of one (`m = self.mems[-1]`, `for m in self.mems:`), or to what a method
    of one returns (`m = self._last()`)."""
    def outside(e: ast.expr) -> bool:
        while isinstance(e, (ast.Attribute, ast.Subscript)):
            e = e.value
        if not isinstance(e, ast.Name):
            return False
        if e.id in env:
            return not isinstance(env[e.id], SSAValue)
        return not isinstance(globals_.get(e.id), types.ModuleType)  # (`torch.f(x)`, `F.f(x)`: new tensors)

    def held(e: ast.expr | None) -> bool:
        if isinstance(e, ast.IfExp):
            return held(e.body) or held(e.orelse)
        if isinstance(e, ast.BoolOp):
            return any(held(x) for x in e.values)
        if isinstance(e, ast.Call):
            if isinstance(e.func, ast.Name) and e.func.id == "getattr":
                return bool(e.args) and outside(e.args[0])
            # a method of the object; a submodule's call makes a new tensor
            return isinstance(e.func, ast.Attribute) and not isinstance(_base(e.func, env), nn.Module) and \
                outside(e.func.value)
        # (a name alone: the region's given values are joined already)
        return isinstance(e, (ast.Attribute, ast.Subscript)) and outside(e)

    wanted = set(outs)
    for node in (n for s in stmts for n in ast.walk(s)):
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, ast.Return):
            pairs = [(ast.Name(_RETURNED), node.value)]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
            pairs = [(node.target, node.value)]
        elif isinstance(node, (ast.For, ast.comprehension)):
            pairs = [(node.target, node.iter)]
        for target, value in pairs:
            if held(value):
                for t in ast.walk(target):
                    if isinstance(t, ast.Name) and t.id in wanted:
                        wanted.discard(t.id)
                        yield t.id


def _base(e: ast.expr, env: dict[str, Value]) -> Any:
    """The module an attribute chain on a module names (`self.blocks[0]`), else None."""
    path: list[ast.expr] = []
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        path.append(e)
        e = e.value
    base = env.get(e.id) if isinstance(e, ast.Name) else None
    if not isinstance(base, ModuleRef):
        return None
    obj: Any = base.module
    for step in reversed(path):
        try:
            if isinstance(step, ast.Attribute):
                obj = getattr(obj, step.attr)
            elif isinstance(step.slice, ast.Constant):
                obj = obj[step.slice.value]
            else:
                return None
        except Exception:
            return None
    return obj


def module_tensor_path(v: SSAValue) -> str | None:
    """The dotted path of the module tensor `v` is the program's copy of (a parameter,
    a buffer, a tensor of module state read on the host), or None."""
    op = v.owner
    if isinstance(op, d.ParamOp):
        return op.path.data
    if isinstance(op, d.GetAttrOp) and op.copy is not None:
        return f"{op.module.data}.{op.attr_name.data}".lstrip(".")
    return None


def _writes_in_place(node: ast.AST) -> bool:
    """An in-place tensor update: `t.add_(...)`, `torch.Tensor.add_(t, ...)`, `torch._foreach_mul_(ts, m)`,
    `zeros_(t)`, `f(..., out=t)`, `t[i] = v`; or a call through a table of functions
    (`RULES[name](self.avg, x)`), which may be one."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name is not None and name.endswith("_") and not name.endswith("__"):
            return True
        return isinstance(func, ast.Subscript) or any(k.arg == "out" for k in node.keywords)
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Subscript) for t in targets)
    return False


def _aliased_names(e: ast.expr) -> set[str]:
    """Names whose object `e` may evaluate to (itself, not a copy)."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.IfExp):
        return _aliased_names(e.body) | _aliased_names(e.orelse)
    if isinstance(e, ast.BoolOp):
        return set().union(*(_aliased_names(v) for v in e.values))
    return set()


def _literal(x: Any) -> str | None:
    """Python source that evaluates to `x` (a compile-time constant), or None."""
    if x is None or isinstance(x, (bool, int, str, bytes)):
        return repr(x)
    if isinstance(x, float):
        return repr(x) if math.isfinite(x) else f"float({str(x)!r})"
    if isinstance(x, torch.dtype):
        return f"__import__('torch').{str(x).removeprefix('torch.')}"
    if isinstance(x, (range, slice)):
        parts = [_literal(p) for p in ((x.start, x.stop, x.step))]
        return None if None in parts else f"{type(x).__name__}({', '.join(parts)})"  # type: ignore[arg-type]
    if x is Ellipsis:
        return "..."
    if isinstance(x, (tuple, list, torch.Size)):
        items = [_literal(e) for e in x]
        if None in items:
            return None
        body = ", ".join(items) + ("," if isinstance(x, tuple) and len(items) == 1 else "")  # type: ignore[arg-type]
        text = f"[{body}]" if isinstance(x, list) else f"({body})"
        return f"__import__('torch').Size({text})" if isinstance(x, torch.Size) else text
    if isinstance(x, dict):
        pairs = [(_literal(k), _literal(v)) for k, v in x.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


class RegionLowering:
    """Mixin of Lowerer: building `dycl.py_region`s."""

    def region_capture(self: Lowerer, v: Value, operands: list[SSAValue], params: list[str]) -> str | None:
        """A Python expression for `v` inside the region (adding operands), or None."""
        if isinstance(v, SSAValue):
            operands.append(v)
            params.append(f"__dycl_a{len(params)}")
            return params[-1]
        if isinstance(v, Static):
            return _literal(v.value)
        if isinstance(v, ModuleRef):
            return "__dycl_root" if not v.path else f"__dycl_root.get_submodule({v.path!r})"
        if isinstance(v, GlobalRef):
            return f"__import__('dycl.pyregion', fromlist=['resolve']).resolve({v.qualname!r})"
        if isinstance(v, (ObjectVal, NamedSeq)):  # eager's object, rebuilt in the region (not a dict or tuple)
            where = qualname_of(v.cls)
            values = [self.region_capture(x, operands, params) for x in v.items]
            if where is None or None in values:
                return None
            made = f"__import__('dycl.pyregion', fromlist=['resolve']).resolve({where!r})"
            if isinstance(v, NamedSeq):
                return f"{made}({', '.join(values)}{',' if len(values) == 1 else ''})"  # type: ignore[arg-type]
            return f"{made}(**{{{', '.join(f'{k!r}: {x}' for k, x in zip(v.keys, values))}}})"
        if isinstance(v, DictVal):
            keys = [_literal(k) for k in v.keys]
            values = [self.region_capture(x, operands, params) for x in v.items]
            if None in keys or None in values:
                return None
            literal = "{" + ", ".join(f"{k}: {x}" for k, x in zip(keys, values)) + "}"
            if v.factory == "builtins.dict":
                return literal
            # (an OrderedDict, a defaultdict's factory aside: eager's own type, in order)
            return f"__import__('dycl.pyregion', fromlist=['resolve']).resolve({v.factory!r})({literal})"
        if isinstance(v, SeqVal):
            items = [self.region_capture(x, operands, params) for x in v.items]
            if None in items:
                return None
            body = ", ".join(items) + ("," if not v.is_list and len(items) == 1 else "")  # type: ignore[arg-type]
            return f"[{body}]" if v.is_list else f"({body})"
        if isinstance(v, (ObjectRef, StaticObject)):
            return v.expr
        if isinstance(v, MethodRef):
            recv = self.region_capture(v.receiver, operands, params)
            return None if recv is None else f"{recv}.{v.name}"
        return None

    def _may_write_module_tensors(self: Lowerer, stmts: list[ast.stmt], loads: set[str], scope: _Scope) -> bool:
        """`stmts` update some tensor in place and can reach a module's parameters or buffers."""
        # `p += 1` on a view of a buffer (`p = self.buf[:2]`) updates the buffer in place.
        if any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and
               self._views_module_tensor(scope.env.get(n.target.id)) for st in stmts for n in ast.walk(st)):
            return True
        if not any(_writes_in_place(n) for st in stmts for n in ast.walk(st)):
            return False
        return any(isinstance(v := scope.env.get(name), ModuleRef) or self._views_module_tensor(v)
                   for name in loads)

    def _views_module_tensor(self: Lowerer, v: Any) -> bool:
        """`v` may be (a view of) a parameter, buffer or module-state tensor, or of a
        tensor Python code gave that the module may hold."""
        return isinstance(v, SSAValue) and maybe_tensor(v) and any(
            module_tensor_path(r) is not None or r in self.python_held
            for r in self.roots_of(v))

    def make_region(self: Lowerer, stmts: list[ast.stmt], scope: _Scope, error: FrontendError, *, tail: bool,
                    node: ast.AST, result_type: Attribute | None = None) -> list[SSAValue]:
        """Emit a region over `stmts`; binds its live-outs in `scope` (or, for a tail
        region, returns the function's result). Raises Widen if it cannot be made."""
        assert self.fn is not None
        if is_synthetic(stmts):
            raise Widen(error)
        loads, stores = names_of(stmts)
        # Zero-argument super() needs the `__class__` cell a method has and the region's
        # function has not: it is given the class and the instance explicitly.
        fdef = self.fn.tree.body[0] if self.fn.tree is not None else None  # type: ignore[attr-defined]
        first = fdef.args.args[0].arg if isinstance(fdef, ast.FunctionDef) and fdef.args.args else None
        code_stmts = stmts
        if uses_bare_super(stmts):
            if first is None or "__class__" not in self.fn.closure:
                raise Widen(error)
            loads = loads | {first}
            code_stmts = [_ExplicitSuper(first).visit(copy.deepcopy(st)) for st in stmts]
        envs = [scope.env] + [sc.env for sc in self._caller_scopes]
        writes_module = self._may_write_module_tensors(stmts, loads, scope)
        if writes_module and (not tail or self.fn.inline):
            # The region would update a parameter or buffer in place (`torch.Tensor.add_(self.buf, x)`,
            # `b = self.buf; b.add_(x)`, `out=self.buf`): the sub-DNNs after it hold the old value as a
            # constant. Only Python to the end of forward reads the new one.
            raise Widen(error)
        mutated = mutated_names(stmts, scope.env) & set(scope.env)
        if _writes_tensors_in_place(stmts) and self._loads_stale_view(loads, scope):
            raise Widen(error)
        if _shares_changed_containers(scope.env, mutated):
            # (`ref = groups[1]`, or `[[]] * 2`, then the region appends through `groups`: the
            # region would get copies that share nothing, and `ref` would miss the change)
            raise Widen(error)
        if any(isinstance(scope.env[n], Static) and isinstance(scope.env[n].value, (list, dict, set))  # type: ignore[union-attr]
               for n in mutated):
            # (`record(type(self).hist, 1)` inlined: `lst` holds a compile-time copy of the class's
            # list, and the region would append to that copy; the caller's code reaches the list)
            raise Widen(error)
        operands: list[SSAValue] = []
        params: list[str] = []
        prelude: list[str] = []
        # (`global` names are the module's, read and written there: never handed over.)
        for name in sorted((loads | stores | mutated) & set(scope.env) - self.fn.declared_global):
            v = scope.env[name]
            if writes_module and isinstance(v, SSAValue) and (path := module_tensor_path(v)) is not None:
                # the module's own tensor, which the region updates (the program's is a copy)
                prelude.append(f"{name} = __import__('operator').attrgetter({path!r})(__dycl_root)")
                continue
            if writes_module and self._views_module_tensor(v) and _copied_by_the_program(v):
                raise Widen(error)  # a view of one: made before the region, from the program's copy
            if isinstance(v, SSAValue):
                operands.append(self.for_python(v, node))  # type: ignore[arg-type]
                params.append(name)
                continue
            expr = self.region_capture(self.for_python(v, node) if isinstance(v, SeqVal) else v, operands, params)
            if expr is None:
                if name in loads:
                    raise Widen(error)
                continue  # only assigned here: its old value is not needed
            prelude.append(f"{name} = {expr}")
        outside = {n for n in loads - set(scope.env) if isinstance(self.global_object(n), torch.Tensor)}
        if changed := _may_update(stmts, outside):
            # it may change a global tensor compiled code holds as a constant (eager's changes for later calls)
            self.outside_tensor_written = f"'{changed}' changed by Python at {where_of(self, node)}"
            raise Widen(error)
        # Variables of an enclosing function: the region's code runs with the module's
        # globals only, so their values are bound first (or the region widens).
        for name in sorted(loads - set(scope.env) - stores):
            if name in self.fn.closure and name not in self.fn.declared_global:
                try:
                    expr = self.region_capture(self._global(self.fn.closure[name], name, node), operands, params)
                except FrontendError:
                    expr = None
                if expr is None:
                    raise Widen(error)
                prelude.append(f"{name} = {expr}")
        # Locals of the function no path has bound here (a loop's variable after no
        # iteration): handed over unbound, so a read raises eager's UnboundLocalError.
        assert self.fn.tree is not None
        local = _function_locals(self.fn.tree)
        for name in sorted((loads - set(scope.env) - stores) & local - set(self.fn.closure) - self.fn.declared_global):
            operands.append(self.unbound_marker(node))
            params.append(name)
        if code_stmts is not stmts:  # super(): the method's class, bound first
            try:
                expr = self.region_capture(self._global(self.fn.closure["__class__"], "__class__", node),
                                           operands, params)
            except FrontendError:
                expr = None
            if expr is None:
                raise Widen(error)
            prelude.append(f"__dycl_class = {expr}")
        # An in-place update must reach every name sharing the storage: names holding
        # the same value are rebound below; a view elsewhere cannot be, so widen.
        updated: list[tuple[str, SSAValue]] = []
        later = self._read_later(stmts) if mutated else set()
        for name in sorted(mutated):
            v = scope.env[name]
            if isinstance(v, ObjectRef) and isinstance(v.obj, torch.Tensor) or isinstance(v, SSAValue) and \
                    self.roots_of(v) & self.outside_tensors:
                # a tensor held outside the model (a default argument): eager changes it for later calls
                self.outside_tensor_written = f"'{name}' changed by Python at {where_of(self, node)}"
                raise Widen(error)
            if not maybe_tensor(v):
                continue
            assert isinstance(v, SSAValue)
            roots = self.roots_of(v)
            if roots & self._listed:
                raise Widen(error)  # a list the host holds has views of it (its rows): they change too
            if roots - {v} and _copied_by_the_program(v) and any(self._is_forward_argument(r) for r in roots):
                # a view of forward's argument made before the region (the program's copy):
                # the caller's tensor would miss the update
                raise Widen(error)
            for env in envs:
                for other, w in bound_values(env):
                    if env is scope.env and other not in later:
                        continue  # nothing reads it after the region: the update is not seen through it
                    if w is not v and maybe_tensor(w) and roots & self.roots_of(w):
                        raise Widen(error)
                    if w is v and other != name and name in stores:
                        # `w = a; while ...: w = b; w.add_(3)`: which tensor the update reached
                        # only the run knows; `a` cannot simply take w's new value
                        raise Widen(error)
            for sc, depth in zip(self._caller_scopes, self._caller_if_depths):
                if sc is not scope and depth < self._if_depth and any(w is v for _, w in bound_values(sc.env)):
                    raise Widen(error)  # the caller's name would get a value made inside a branch
            updated.append((name, v))
        lists_held_by_callers = {id(w) for sc, depth in zip(self._caller_scopes, self._caller_if_depths)
                                 if sc is not scope and depth < self._if_depth for w in sc.env.values()}
        if any(id(scope.env[n]) in lists_held_by_callers for n in mutated if isinstance(scope.env[n], SeqVal)):
            raise Widen(error)
        if any(isinstance(v := scope.env[n], SeqVal) and self.one_of_several(v, scope) or isinstance(v, SSAValue) and any(
                isinstance(w.owner, d.MakeTupleOp) and w.owner.is_list is not None for w in self._joins.get(v, ()))
               for n in mutated):
            raise Widen(error)  # `l = a if c else b; l.append(x)`: the region must also pick the list
        if any(isinstance(v := scope.env[n], SeqVal) and self.held_elsewhere(v, n, envs) for n in mutated):
            raise Widen(error)  # `t = (toks, 1)`: the region's new toks would not reach t
        if tail and any(isinstance(v := scope.env[n], SeqVal) and (v.is_list or isinstance(v, DictVal)) and any(
                w is v for sc in self._caller_scopes if sc is not scope for w in sc.env.values()) for n in mutated):
            raise Widen(error)  # a tail hands back only the return value: the caller's list would keep its old contents
        # Lists and dicts the region may change in place: it hands back their new contents.
        lists = [n for n in sorted(mutated) if isinstance(v := scope.env[n], SeqVal) and (v.is_list or isinstance(v, DictVal))]
        self.note_attribute_writes(stmts, scope)
        outs = [] if tail else sorted((self._live_after(stmts, stores) | {n for n, _ in updated} | set(lists))
                                      - self.fn.declared_global)
        code = self._region_code(code_stmts, params, prelude, None if tail else outs)
        where = where_of(self, node)
        construct = construct_of(stmts[0]) if len(stmts) == 1 or not tail else f"{construct_of(stmts[0])} to the end of {self.fn.qualname}"
        types = [result_type or d.ANY] * (1 if tail else len(outs))
        op = d.PyRegionOp(operands, types, code, globals_key(self.fn.globals), where, construct, error.message, tail)
        state_names = {a for _, a in self.dirty_attrs if isinstance(a, str)}
        if getattr(error, "reads_state", False) or any(
                isinstance(n, ast.Attribute) and n.attr in state_names for st in stmts for n in ast.walk(st)):
            # (it reads state forward changes: `torch.ones(self.n, 4)` has other sizes each call)
            op.attributes[d.READS_STATE_ATTR] = UnitAttr()
        self.emit(op, node)
        forget_state(scope.env)  # the region may write module attributes: reads go to the host
        results = list(op.results)
        for r, name in zip(results, outs):
            r.name_hint = name if name.isidentifier() and not name.startswith("__") else None
        self.regions.append(RegionRecord(where, construct, error.message))
        # What the region hands back may share storage with what it was given
        # (`y = F.relu(x, inplace=True)`, `y = registry["flat"](h)`): an update through
        # it must reach them too, so in-place updates see it as a possible view of each.
        given = [o for o in op.operands if maybe_tensor(o)]
        for r in results:
            if maybe_tensor(r) and given:
                self._joins[r] = list(given)
        if tail:
            if _RETURNED in _held_names(stmts, [_RETURNED], scope.env, self.fn.globals):
                self.python_held.update(results)
            return results
        by_name = dict(zip(outs, results))
        for name in _held_names(stmts, outs, scope.env, self.fn.globals):
            self.python_held.add(by_name[name])
        for name, old in updated:
            # The region updated that tensor in place: its result is the same storage
            # (an input stays the caller's tensor, a view stays a view of its base).
            self._joins[by_name[name]] = [old]
            for env in envs:
                rebind(env, old, by_name[name])
        for name in lists:
            old_seq = scope.env[name]
            for env in envs:
                for k, val in list(env.items()):
                    if val is old_seq:
                        env[k] = by_name[name]
        bound = definitely_bound(stmts)
        # `del h`, `except ... as e` (Python deletes `e` after its handler): unbound on some paths
        unbinds = {t.id for n in ast.walk(ast.Module(body=list(stmts), type_ignores=[]))
                   if isinstance(n, ast.Delete) for t in n.targets if isinstance(t, ast.Name)} | {
                   n.name for s in stmts for n in ast.walk(s) if isinstance(n, ast.ExceptHandler) and n.name}
        for name in outs:
            before = scope.env.get(name)
            if name in unbinds or name not in bound and (before is None or before in self.maybe_unbound):
                self.maybe_unbound.add(by_name[name])  # bound on some of the region's paths only
            scope.env[name] = by_name[name]
        return results

    def _loads_stale_view(self: Lowerer, loads: set[str], scope: _Scope) -> bool:
        """The region reads a view made before it (the program's copy) of a tensor it may
        change in place through another name (`h = x[1:]`, then `x.narrow(...).div_(2)`
        in the region): its copy would miss the change."""
        # (through containers too: `l = [h, h[0]]` hands the region two copies that share nothing)
        tensors = list({id(v): v for n in loads & set(scope.env) for v in _tensors_in(scope.env[n])}.values())
        roots = {id(v): self.roots_of(v) for v in tensors}
        return any(roots[id(v)] - {v} and _copied_by_the_program(v) and (any(
            self._is_forward_argument(r) or r in self.python_held for r in roots[id(v)]) or any(
            roots[id(v)] & roots[id(w)] for w in tensors if w is not v)) for v in tensors)

    def _is_forward_argument(self: Lowerer, v: SSAValue) -> bool:
        """One of the compiled forward's own arguments (the caller's tensors)."""
        return isinstance(v, BlockArgument) and v.block is getattr(self, "_entry", None)

    def unbound_marker(self: Lowerer, node: ast.AST) -> SSAValue:
        """The value of a name no path has bound yet (a read of it is checked: check_bound)."""
        marker = self.emit(d.ConstantOp(d.GlobalAttr(UNBOUND_NAME)), node).results[0]
        self.maybe_unbound.add(marker)
        return marker

    def check_bound(self: Lowerer, name: str, v: SSAValue, node: ast.AST) -> SSAValue:
        """A read of `name`, which a region may have left unbound: there eager raises
        UnboundLocalError (`for r in rows: s = ...` over no rows, then `s` read), so the
        host checks it where it is read, with eager's message."""
        assert self.fn is not None
        code = (f"def __dycl_region(__dycl_root, {name}):\n"
                "    __dycl_unbound = __import__('dycl.pyregion', fromlist=['UNBOUND']).UNBOUND\n"
                f"    if {name} is __dycl_unbound:\n        del {name}\n    return ({name},)\n")
        op = d.PyRegionOp([v], [v.type], code, globals_key(self.fn.globals), where_of(self, node), d.READ_OF_A_NAME,
                          f"'{name}' is bound on some paths of the Python before it only")
        self.emit(op, node)
        checked = op.results[0]
        checked.name_hint = v.name_hint
        self._joins[checked] = [v]
        return checked  # (each read checks: an attempt rolled back must not leave names on an erased op)

    def _live_after(self: Lowerer, stmts: list[ast.stmt], stores: set[str]) -> set[str]:
        """The names the region binds that code outside it may read (a name used only
        inside it need not be bound when it ends, e.g. after an exception)."""
        assert self.fn is not None and self.fn.tree is not None
        inside = {id(n) for s in stmts for n in ast.walk(s)}
        read = {n.id for n in ast.walk(self.fn.tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Load, ast.Del)) and id(n) not in inside}
        read |= {n.target.id for n in ast.walk(self.fn.tree)  # `y += 1` reads y
                 if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and id(n) not in inside}
        return {n for n in stores if n in read or n.startswith("__dycl")}

    def _read_later(self: Lowerer, stmts: list[ast.stmt]) -> set[str]:
        """The names the region itself or this function after it may read (every name
        the function reads, inside a loop). (`row += 1; return z` in one region: `z` is
        handed in, and `row`, made by a sub-DNN, is a copy of its row, not a view.)"""
        assert self.fn is not None and self.fn.tree is not None
        end = (stmts[-1].end_lineno or 0, stmts[-1].end_col_offset or 0)
        inside = {id(n) for s in stmts for n in ast.walk(s)}
        reads = [n for n in ast.walk(self.fn.tree) if
                 isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Load, ast.Del))
                 or isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)]
        return {n.id if isinstance(n, ast.Name) else n.target.id for n in reads  # type: ignore[attr-defined]
                if self.loop_depth or id(n) in inside or (n.lineno, n.col_offset) > end}

    def _region_code(self: Lowerer, stmts: list[ast.stmt], params: list[str], prelude: list[str],
                     outs: list[str] | None) -> str:
        lines = [f"def __dycl_region({', '.join(['__dycl_root', *params])}):"]
        assert self.fn is not None
        loads, stores = names_of(stmts)
        if shared := sorted((loads | stores) & self.fn.declared_global):
            lines.append(f"    global {', '.join(shared)}")
        lines += [f"    {p}" for p in prelude]
        named = [p for p in params if not p.startswith("__dycl")]
        if named:  # a name an earlier region left unbound is unbound here too
            lines.append("    __dycl_unbound = __import__('dycl.pyregion', fromlist=['UNBOUND']).UNBOUND")
            lines += [f"    if {p} is __dycl_unbound:\n        del {p}" for p in named]
        for s in restore_grad_switches(stmts):
            lines.append(textwrap.indent(ast.unparse(s), "    "))
        if outs is not None:
            # A name bound on some paths only is unbound when the others ran: eager
            # fails where it is read, so it comes back as a marker, not as an error here.
            items = ", ".join(f"__dycl_bound.get({n!r}, __dycl_unbound)" for n in outs)
            lines.append("    __dycl_bound = locals()")
            lines.append("    __dycl_unbound = __import__('dycl.pyregion', fromlist=['UNBOUND']).UNBOUND")
            lines.append(f"    return ({items}{',' if len(outs) == 1 else ''})")
        elif len(lines) == 1 + len(prelude):
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    # ----------------------------------------------------------- module state

    def note_attribute_writes(self: Lowerer, stmts: list[ast.stmt], scope: _Scope, depth: int = 0) -> None:
        """Record (module, attribute) pairs the region may write: run-time state."""
        for node, _ in _walk_scope(list(stmts)):
            target: ast.AST | None = None
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node
            elif isinstance(node, (ast.Subscript,)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node.value
            elif isinstance(node, ast.Call) and (named := _named_attribute_write(node)) is not None:
                # self.register_buffer("cos_cached", t), setattr(self, "k", v): that attribute changes
                owner = self._static_object(named[0], scope)
                if owner is not None:
                    self.written_attrs.add((id(owner), named[1]))
                    self.region_written.add((id(owner), named[1]))
                else:
                    self.unknown_writes = True
                continue
            elif isinstance(node, ast.Call):
                # self.xs.append(...), self.h.add_(...): the attribute's value changes.
                if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Attribute) and not \
                        self._reads_container(node.func, scope):
                    target = node.func.value
                elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Subscript) and \
                        node.func.attr in MUTATING_METHODS:
                    target = node.func.value  # `self.extra["seen"].append(2)`: `extra` changes
                self._note_call_writes(node.func, scope, depth)
                self._note_modules_passed(node, scope)
            while isinstance(target, ast.Subscript):
                target = target.value
            if isinstance(target, ast.Attribute):
                owner = self._static_object(target.value, scope)
                if owner is not None:
                    self.written_attrs.add((id(owner), target.attr))
                    self.region_written.add((id(owner), target.attr))
                elif not isinstance(target.value, ast.Name) or target.value.id not in scope.env:
                    self.unknown_writes = True

    def _note_modules_passed(self: Lowerer, call: ast.Call, scope: _Scope) -> None:
        """`Suppressor(self)`, `hook(self.block)`: code that is not the model's, handed a
        module, may set any of its attributes (a context manager's `__exit__` counting),
        and handed a container the model or a class holds, may change it."""
        root = call.func
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name) and root.id in _PURE_ROOTS:
            return
        for arg in (*call.args, *(k.value for k in call.keywords)):
            module = self._static_module(arg, scope)
            if module is not None:
                self.written_attrs |= {(id(m), a) for m in module.modules() for a in vars(m) if not a.startswith("_")}
            elif isinstance(arg, ast.Attribute) and (owner := self._static_object(arg.value, scope)) is not None and \
                    isinstance(getattr(owner, arg.attr, None), (list, dict, set)):
                self.written_attrs.add((id(owner), arg.attr))  # `record(type(self).hist, v)` may append

    def _reads_container(self: Lowerer, method: ast.Attribute, scope: _Scope) -> bool:
        """`self.config.get(k)`: a method of a Python dict/list/str held by the model
        that does not change it (unlike `self.xs.append`, or any method of other objects)."""
        assert isinstance(method.value, ast.Attribute)
        owner = self._static_object(method.value.value, scope)
        value = getattr(owner, method.value.attr, None) if owner is not None else None
        return type(value) in (dict, list, tuple, str, set, frozenset) and method.attr not in MUTATING_METHODS

    def _note_call_writes(self: Lowerer, func: ast.expr, scope: _Scope, depth: int) -> None:
        """What a call inside a region may write: the code of a submodule or method
        it names; any module state the model's methods write if it cannot tell."""
        callee = self._static_module(func, scope)
        if callee is not None:  # self.block(x): the submodule's forward
            if is_leaf(callee):
                return
            owner = callee
            try:
                method = self._forward_of(callee, None)
            except FrontendError:
                method = None
        elif isinstance(func, ast.Attribute) and (owner := self._static_module(func.value, scope)) is not None:
            method = inspect.getattr_static(owner, func.attr, None)
            if isinstance(method, (staticmethod, classmethod)):
                method = method.__func__
            if is_leaf(owner) and not inspect.isfunction(method):
                return
        else:
            root = func
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and (root.id in _PURE_ROOTS or isinstance(scope.env.get(root.id), SSAValue)):
                return  # torch, F, print...; tensor methods
            if isinstance(func, ast.Name) and func.id not in scope.env and inspect.isclass(
                    cls := self.global_object(func.id)) and issubclass(cls, BaseException):
                return  # `raise Exit(outputs, i)`: an exception keeps what it is given
            if isinstance(func, ast.Attribute) and not func.attr.endswith("_") and hasattr(torch.Tensor, func.attr) \
                    and func.attr not in MUTATING_METHODS and not any(hasattr(type(m), func.attr)
                                                                     for m in self.model.modules()):
                return  # `x.sum()` on a callee's local: a tensor method (no set's `add`, no module's method)
            self.written_attrs |= model_state_writes(self.model)  # unknown callee: be safe
            return
        if not inspect.isfunction(method) or depth >= 4:
            self.written_attrs |= model_state_writes(self.model)
            return
        fdef = _function_ast(method)
        if fdef is None:
            self.written_attrs |= model_state_writes(self.model)
            return
        if not fdef.args.args:
            return
        from dycl.frontend.scopes import _Scope

        inner = _Scope(env={fdef.args.args[0].arg: ModuleRef("", owner)})
        self.note_attribute_writes(fdef.body, inner, depth + 1)

    def _static_object(self: Lowerer, e: ast.expr, scope: _Scope) -> Any:
        """The object a `self.config`-style expression names at compile time, or None."""
        if isinstance(e, ast.Name):
            if e.id not in scope.env:  # a global class or Python module: `Model.calls += 1`
                obj = self.global_object(e.id)
                return obj if inspect.isclass(obj) or inspect.ismodule(obj) else None
            v = scope.env.get(e.id)
            return v.module if isinstance(v, ModuleRef) else v.obj if isinstance(v, (StaticObject, ObjectRef)) else None
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "type" and len(e.args) == 1 \
                and self.global_object("type") is type:
            base = self._static_object(e.args[0], scope)  # type(self).calls += 1
            return None if base is None else type(base)
        if isinstance(e, ast.Attribute):
            base = self._static_object(e.value, scope)
            if base is not None and e.attr == "__class__":
                return type(base)
            if base is not None:
                if isinstance(base, nn.Module) and e.attr in base._modules:
                    return base._modules[e.attr]
                try:
                    value = inspect.getattr_static(base, e.attr)
                except AttributeError:
                    return None
                return None if _is_constant(value) else getattr(base, e.attr, None)
        return None

    def _static_module(self: Lowerer, e: ast.expr, scope: _Scope) -> nn.Module | None:
        obj = self._static_object(e, scope)
        return obj if isinstance(obj, nn.Module) else None

    def bool_region(self: Lowerer, test: ast.expr, scope: _Scope, error: FrontendError) -> SSAValue:
        """`bool(test)` computed by a region (an `if`/`while` test the frontend cannot translate)."""
        name = "__dycl_test"
        assign = ast.copy_location(ast.Assign(
            targets=[ast.copy_location(ast.Name(id=name, ctx=ast.Store()), test)],
            value=ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(id="bool", ctx=ast.Load()), test),
                                             args=[test], keywords=[]), test)), test)
        ast.fix_missing_locations(assign)
        self.make_region([assign], scope, error, tail=False, node=test, result_type=i1)
        v = scope.env.pop(name)
        assert isinstance(v, SSAValue)
        return v


def _function_ast(fn: Any) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    return fdef if isinstance(fdef, ast.FunctionDef) else None


_CLASS_WRITES: dict[type, frozenset[str]] = {}


def _class_writes(cls: type) -> frozenset[str]:
    """Attributes any method of `cls` (but `__init__`) assigns on its receiver."""
    if cls not in _CLASS_WRITES:
        names: set[str] = set()
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if name == "__init__" or (fn.__module__ or "").startswith("torch."):  # (None: code run by exec)
                continue
            fdef = _function_ast(fn)
            if fdef is None or not fdef.args.args:
                continue
            me = fdef.args.args[0].arg
            for node in ast.walk(fdef):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(
                        node.value, ast.Name) and node.value.id == me:
                    names.add(node.attr)
        _CLASS_WRITES[cls] = frozenset(names)
    return _CLASS_WRITES[cls]


def model_state_writes(model: nn.Module) -> set[tuple[int, str]]:
    """Every (module, attribute) some method of the model may assign."""
    return {(id(m), a) for m in model.modules() for a in _class_writes(type(m))}


_REGISTERS = ("register_buffer", "register_parameter", "register_module", "add_module")


def _named_attribute_write(call: ast.Call) -> tuple[ast.expr, str] | None:
    """(owner, name) of `owner.register_buffer("name", ...)` or `setattr(owner, "name", v)`."""
    f, args = call.func, call.args
    if isinstance(f, ast.Attribute) and f.attr in _REGISTERS and args and isinstance(args[0], ast.Constant) \
            and isinstance(args[0].value, str):
        return f.value, args[0].value
    if isinstance(f, ast.Name) and f.id in ("setattr", "delattr") and len(args) >= 2 and \
            isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
        return args[0], args[1].value
    return None


def _is_constant(x: Any) -> bool:
    return x is None or isinstance(x, (bool, int, float, str, bytes, torch.dtype))


def is_leaf(m: nn.Module) -> bool:
    from dycl.frontend.values import is_leaf_module

    return is_leaf_module(m)


def uses_bare_super(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super" and not n.args
               for st in stmts for n in ast.walk(st))


class _ExplicitSuper(ast.NodeTransformer):
    """`super()` → `super(__dycl_class, self)`."""

    def __init__(self, first: str):
        self.first = first

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args:
            node.args = [ast.Name("__dycl_class", ast.Load()), ast.Name(self.first, ast.Load())]
        return node


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)


def _function_locals(tree: ast.AST) -> set[str]:
    """The names the function (the tree's first def) binds itself: not those of nested
    functions, classes or comprehensions, which have scopes of their own."""
    fdef = tree.body[0] if isinstance(tree, ast.Module) else tree  # type: ignore[attr-defined]
    out: set[str] = set()
    todo = list(ast.iter_child_nodes(fdef))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)  # (bound here; its body is its own scope)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
        if not isinstance(n, _SCOPES):
            todo += ast.iter_child_nodes(n)
    return out
