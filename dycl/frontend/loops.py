"""Lowering of `for` and `while` loops, with break/continue and early return.

Loops whose iterations are known at compile time and whose bodies need per-
iteration values (module lists, Python lists, break) are unrolled here; counted
loops over `range` become `dycl.for` (unrolled later by `unroll-loops` when the
bounds are constants); data-dependent `while` loops become `dycl.while` with a
required iteration bound.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from torch import nn
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, NoneAttr, TensorType, UnitAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from dycl.diagnostics import FrontendError
from dycl.dialects import dycl as d
from dycl.frontend.inplace import bound_values, maybe_tensor
from dycl.frontend.state import is_state_key
from dycl.frontend.restructure import (RETURN_SLOT, always_exits, contains_exit, guard_breaks, init_flag,
                                      loop_else_as_if, restructure, unless)
from dycl.frontend.values import (Closure, DictVal, ObjectRef, ObjectVal, GlobalRef, ModuleRef, PathDependent, SeqVal,
                                  Static, StaticObject, Value, copy_env, same_value)

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

_BOUND_COMMENT = re.compile(r"#\s*dycl:\s*max_iterations\s*=\s*(\d+)")

# Compile-time values whose iteration order is fixed (sets are not: hash seeds differ).
_ITERABLE_CONSTANTS = (range, tuple, list, str, dict, type({}.keys()), type({}.values()), type({}.items()))

# Ops one loop with `break` may emit while each path gets its own copy of the
# code after it; past this the loop is lowered again with a flag (no copies).
PER_PATH_BUDGET = 2_000


class UnsafeJoin(Exception):
    """A join under a break flag would merge lists of different lengths or modules read later."""


class OverBudget(Exception):
    """Raised by `Lowerer.emit` when the outermost per-path loop outgrows its budget."""

    def __init__(self, owner: object):
        self.owner = owner


def _snapshot(scopes: list[_Scope]) -> Any:
    """What lowering may mutate in `scopes` (envs, lists in them, exits); returns a restorer."""
    seqs: dict[int, tuple[SeqVal, list[Any], list[Any]]] = {}

    def visit(v: Any) -> None:
        if isinstance(v, SeqVal) and id(v) not in seqs:
            seqs[id(v)] = (v, list(v.items), list(getattr(v, "keys", ())))
            for x in v.items:
                visit(x)

    saved = []
    for sc in scopes:
        saved.append((sc, dict(sc.env), sc.terminated, list(sc.returned), sc.raised))
        for v in sc.env.values():
            visit(v)
        for v in sc.returned:
            visit(v)

    def restore() -> None:
        for seq, items, keys in seqs.values():
            seq.items = list(items)  # a copy: restore may run twice
            if isinstance(seq, DictVal):
                seq.keys = list(keys)
        for sc, env, terminated, returned, raised in saved:
            sc.env.clear()
            sc.env.update(env)
            sc.terminated = terminated
            sc.returned[:] = returned
            sc.raised = raised

    return restore


class _Marker:
    """Synthetic AST nodes hold lowering state, not source: copies of a statement
    (`hoist_walrus` copies before it rewrites) share them."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self


class _Injected(_Marker, ast.expr):
    """An expression whose lowered value is already known (a loop item)."""

    _fields = ()

    def __init__(self, value: Value, like: ast.AST):
        super().__init__()
        self.value = value
        ast.copy_location(self, like)


class _Continuation(_Marker, ast.stmt):
    """Stands for the statements after a loop with `break` (lowered on each path)."""

    _fields = ()

    def __init__(self, stmts: list[ast.stmt], like: ast.AST):
        super().__init__()
        self.stmts = stmts
        ast.copy_location(self, like)


class _Again(_Marker, ast.stmt):
    """The next iteration of a `while` unrolled per path (lowered only where reached)."""

    _fields = ()

    def __init__(self, loop: ast.While, k: int, cont: _Continuation):
        super().__init__()
        self.loop, self.k, self.cont = loop, k, cont
        ast.copy_location(self, loop)


# Iterations a `while` whose body needs compile-time values may be unrolled to.
WHILE_UNROLL_LIMIT = 128


@dataclass(frozen=True)
class RuntimeRange:
    """`range(a, b, c)` with a bound known only at run time."""

    start: Value
    stop: Value
    step: Value


class _MoreCarried(Exception):
    """The body updated outer tensors in place (`h += e` on an alias): carry them too."""

    def __init__(self, names: set[str]):
        self.names = names


class NeedsStatic(Exception):
    """Raised inside a rolled loop body when a value must be known per iteration."""


class _ListsChanged(NeedsStatic):
    """A rolled body changed outer Python lists (through a helper, `extend`): the
    host may hold them, and the loop be lowered again."""

    def __init__(self, names: set[str]):
        super().__init__()
        self.names = names


class InPlaceSharing(NeedsStatic):
    """A rolled body updates a tensor in place that another name shares across
    iterations: one block argument per name cannot keep them one tensor."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class _Zipped:
    """`enumerate(...)`/`zip(...)` of iterables (or of other such calls) known at run time."""

    kind: str
    parts: list[Any]
    start: Value


@dataclass
class _RolledLoop:
    carried: list[str]
    run_time: bool = False  # a `for` over a run-time count: never unrolled by the frontend


class LoopLowering:
    """Mixin of Lowerer: everything about loops."""

    loops: list[_RolledLoop]

    # ----------------------------------------------------------------- for

    def lower_for(self: Lowerer, s: ast.For, rest: list[ast.stmt], scope: _Scope) -> bool:
        """Lower `s`; returns True if it also consumed `rest` (the code after it)."""
        mark = self._mark()
        if (zipped := self._zipped_parts(s.iter, scope)) is not None:
            if (bounded := self._bounded_zip(s, zipped, scope)) is not None:
                self._rollback(mark)  # (the parts are evaluated again, once, by the rewritten loop)
                self._lower_body(bounded, scope)
                return False
            if s.orelse and contains_exit(s.body, (ast.Break,)):
                self._rollback(mark)
                self._lower_body(loop_else_as_if(s), scope)  # its else block as an `if` on a flag
            else:
                self._zipped_for(s, zipped, rest, scope)
            return False
        self._rollback(mark)
        if self._changes_its_list(s, scope):
            return self._as_index_while(s, rest, scope)
        it = self.expr(s.iter, scope)
        items = self.iter_items(it, s.iter)
        if items is None and (bounded := self._bounded_zip(s, _Zipped("for", [it], Static(0)), scope)) is not None:
            self._rollback(mark)  # (`for c in x.split(2)`: unrolled to its part count, see _bounded_zip)
            self._lower_body(bounded, scope)
            return False
        if isinstance(it, SSAValue) and maybe_tensor(it):
            self._refuse_rows_updated(s, it, scope)
        has_break = contains_exit(s.body, (ast.Break,))
        if s.orelse and has_break and items is None:
            # A rolled loop: its else block as an `if` on a flag the breaks clear.
            self._rollback(mark)
            self._lower_body(loop_else_as_if(s), scope)
            return False
        held = it if isinstance(it, SSAValue) and isinstance(it.type, d.ListType) else None
        if held is not None:
            # `for tok in tokens` over a list the host holds: over its indices, as
            # long as it is at the start (the body must not append to it)
            if isinstance(s.iter, ast.Name) and s.iter.id in _appended_names(s.body):
                raise self.unsupported(s, "appending to the list a for loop iterates over")
            it = RuntimeRange(Static(0), self.emit(d.ListLenOp(held), s).result, Static(1))
        rows = it if items is None and self.run_time_rows(it) else None
        if rows is not None and isinstance(s.target, ast.Name) and _read_after_loop({s.target.id}, rest):
            # (after the loop the name is the last row, or unbound where there was none)
            raise self.unsupported(s, f"'{s.target.id}', the row of a loop over a run-time count of rows, read "
                                      "after the loop")
        bind = None
        if rows is not None:
            # `for r in t` over a tensor whose row count is not known yet: a loop over
            # range(len(t)) taking t[i] (unroll-loops unrolls it once the count is known)
            it = RuntimeRange(Static(0), self.call_function("builtins.len", [rows], {}, s.iter), Static(1))
            if isinstance(s.target, (ast.Tuple, ast.List)):
                bind = self._unpacked_rows(s, rows)
        if items is None:
            if isinstance(it, RuntimeRange):
                try:
                    self._rolled_for(s, (it.start, it.stop, it.step), scope, held, hold_lists=True, rows=rows,
                                     bind=bind)
                except NeedsStatic as e:
                    raise self.unsupported(s, e.message if isinstance(e, InPlaceSharing) else (
                        "a loop over a run-time range whose body needs per-iteration compile-time values")) from None
                self._lower_body(s.orelse, scope)  # no break: the else block always runs
                return False
            raise self.unsupported(s.iter, "for loop over a run-time value (iterate over range(), a module list, or a Python sequence)")
        if isinstance(it, Static) and isinstance(it.value, range) and not has_break and self.fn is not None and not self.fn.inline:
            try:
                r = it.value
                if len(r):
                    self._rolled_for(s, (Static(r.start), Static(r.stop), Static(r.step)), scope)
                self._lower_body(s.orelse, scope)
                return False
            except NeedsStatic:
                pass
        return self._unrolled_for(s, items, rest if has_break else None, scope)

    def _unpacked_rows(self: Lowerer, s: ast.For, rows: SSAValue) -> Any:
        """`for a, b in t`: each row unpacked by `dycl.tensor_ops.unpack`, which raises
        eager's ValueError for a row of another length (a starred target runs as Python)."""
        elts = s.target.elts  # type: ignore[attr-defined]
        if any(isinstance(e, ast.Starred) for e in elts):
            raise self.unsupported(s.target, "a starred target over the rows of a tensor")

        def bind(i: SSAValue) -> Value:
            row = self.call_function(_row_function(rows), [rows, i], {}, s)
            parts = self.call_function("dycl.tensor_ops.unpack", [row, Static(len(elts))], {}, s)
            return SeqVal([self.emit(d.GetItemOp(parts, k), s).results[0] for k in range(len(elts))])
        return bind

    def _zipped_parts(self: Lowerer, e: ast.expr, scope: _Scope) -> _Zipped | None:
        """`enumerate(t[, start])` / `zip(a, b, ...)` (nested in each other too) with
        some part iterable only at run time (a tensor's rows, a list the host holds, a
        run-time range); None for anything else (lowered as before, after a rollback)."""
        tree = self._zip_tree(e, scope)
        return tree if tree is not None and not self._all_static(tree, e) else None

    def _bounded_zip(self: Lowerer, s: ast.For, tree: _Zipped, scope: _Scope) -> list[ast.stmt] | None:
        """`for chunk, expert in zip(x.chunk(E), self.experts)` / `for i, part in
        enumerate(torch.split(x, [2, 3]))`: a run-time sequence beside a compile-time one
        (modules, names), or one with a compile-time bound on its length. The loop as
        Python runs it, unrolled to that bound with a stop where the run-time sequence
        ends, so each iteration has its module or index at compile time:

            __r = x.chunk(E)
            for __k, __s in enumerate(zip(self.experts)):
                if __k >= len(__r): break
                chunk, expert = __r[__k], __s[0]
                <body>

        None where that does not apply (a rolled loop then reads the parts by index)."""
        e = s.iter
        if s.orelse or not isinstance(e, ast.Call) and tree.kind != "for" or any(isinstance(p, _Zipped) for p in tree.parts):
            return None
        nodes = [e] if tree.kind == "for" else e.args if tree.kind == "zip" else e.args[:1]
        known = {k: items for k, p in enumerate(tree.parts)
                 if not isinstance(p, RuntimeRange) and (items := self.iter_items(p, e)) is not None}
        static = list(known)
        bound = _split_count(tree.parts[0]) if tree.kind in ("enumerate", "for") else None
        objects = any(not (isinstance(x, Static) and isinstance(x.value, (int, float, bool))) and not isinstance(
            x, SSAValue) for items in known.values() for x in items)
        if not (static and objects or bound is not None and bound <= 64):
            return None
        tag = f"__dycl_zip_{s.lineno}_{s.col_offset}"

        def name(n: str, load: bool = True) -> ast.Name:
            return ast.Name(id=n, ctx=ast.Load() if load else ast.Store())
        out: list[ast.stmt] = [ast.Assign(targets=[name(f"{tag}_{k}", False)], value=nodes[k])
                               for k in range(len(nodes)) if k not in static]
        if static:
            over = ast.Call(func=name("enumerate"), args=[ast.Call(func=name("zip"), args=[nodes[k] for k in static],
                                                                   keywords=[])], keywords=[])
            target: ast.expr = ast.Tuple(elts=[name(f"{tag}_k", False), name(f"{tag}_s", False)], ctx=ast.Store())
        else:
            over = ast.Call(func=name("range"), args=[ast.Constant(bound)], keywords=[])
            target = name(f"{tag}_k", False)
        stop = [ast.If(test=ast.Compare(left=name(f"{tag}_k"), ops=[ast.GtE()], comparators=[
            ast.Call(func=name("len"), args=[name(f"{tag}_{k}")], keywords=[])]), body=[ast.Break()], orelse=[])
            for k in range(len(nodes)) if k not in static]
        items = [ast.Subscript(value=name(f"{tag}_s"), slice=ast.Constant(static.index(k)), ctx=ast.Load())
                 if k in static else ast.Subscript(value=name(f"{tag}_{k}"), slice=name(f"{tag}_k"), ctx=ast.Load())
                 for k in range(len(nodes))]
        if tree.kind == "for":
            value = items[0]
        elif tree.kind == "enumerate":
            start = (e.args[1:] + [k.value for k in e.keywords] or [ast.Constant(0)])[0]
            value: ast.expr = ast.Tuple(elts=[ast.BinOp(left=start, op=ast.Add(), right=name(f"{tag}_k")), items[0]],
                                        ctx=ast.Load())
        else:
            value = ast.Tuple(elts=items, ctx=ast.Load())
        loop = ast.For(target=target, iter=over, body=[*stop, ast.Assign(targets=[s.target], value=value), *s.body],
                       orelse=[])
        out.append(loop)
        for node in out:
            ast.copy_location(node, s)
            ast.fix_missing_locations(node)
        return out

    def _zip_tree(self: Lowerer, e: ast.expr, scope: _Scope) -> _Zipped | None:
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("enumerate", "zip")
                and self.global_object(e.func.id) in (enumerate, zip) and e.func.id not in scope.env
                and not any(isinstance(a, ast.Starred) for a in e.args)):
            return None
        kind = e.func.id
        if kind == "zip" and (e.keywords or not e.args) or kind == "enumerate" and not (
                1 <= len(e.args) + len(e.keywords) <= 2 and all(k.arg == "start" for k in e.keywords)):
            return None
        start: Value = Static(0)
        sources = e.args
        if kind == "enumerate":
            rest = e.args[1:] + [k.value for k in e.keywords]
            start = self.expr(rest[0], scope) if rest else Static(0)
            sources = e.args[:1]
        parts = [self._zip_tree(a, scope) or self.expr(a, scope) for a in sources]
        return _Zipped(kind, parts, start)

    def _all_static(self: Lowerer, tree: _Zipped, node: ast.AST) -> bool:
        return all(self._all_static(p, node) if isinstance(p, _Zipped) else
                   not isinstance(p, RuntimeRange) and self.iter_items(p, node) is not None for p in tree.parts)

    def _changes_its_list(self: Lowerer, s: ast.For, scope: _Scope) -> bool:
        """`for item in items:` whose body changes `items` (appends, pops) without
        binding the name again: Python's iterator sees the change."""
        from dycl.frontend.regions import mutated_names
        from dycl.frontend.scopes import _assigned_names

        if not isinstance(s.iter, ast.Name):
            return False
        v = scope.env.get(s.iter.id)
        return isinstance(v, SeqVal) and v.is_list and not isinstance(v, DictVal) and \
            s.iter.id in mutated_names(s.body, scope.env) and s.iter.id not in _assigned_names(s.body)

    def _as_index_while(self: Lowerer, s: ast.For, rest: list[ast.stmt], scope: _Scope) -> bool:
        """The loop as Python's list iterator runs it: `i = 0; while i < len(items):
        item = items[i]; i += 1; <body>`, its length read again each iteration."""
        index = f"__dycl_index_{s.lineno}_{s.col_offset}"
        assert isinstance(s.iter, ast.Name)
        items = s.iter.id

        def name(n: str, ctx: ast.expr_context) -> ast.Name:
            return ast.Name(id=n, ctx=ctx)
        start = ast.Assign(targets=[name(index, ast.Store())], value=ast.Constant(0))
        loop = ast.While(
            test=ast.Compare(left=name(index, ast.Load()), ops=[ast.Lt()],
                             comparators=[ast.Call(func=name("len", ast.Load()), args=[name(items, ast.Load())],
                                                   keywords=[])]),
            body=[ast.Assign(targets=[copy.deepcopy(s.target)],
                             value=ast.Subscript(value=name(items, ast.Load()), slice=name(index, ast.Load()),
                                                 ctx=ast.Load())),
                  ast.AugAssign(target=name(index, ast.Store()), op=ast.Add(), value=ast.Constant(1)), *s.body],
            orelse=s.orelse)
        for node in (start, loop):
            ast.copy_location(node, s)
            ast.fix_missing_locations(node)
        self._lower_body([start], scope)
        return self.lower_while(loop, rest, scope)

    def _zipped_for(self: Lowerer, s: ast.For, tree: _Zipped, rest: list[ast.stmt], scope: _Scope) -> None:
        """`for i, r in enumerate(t)` / `for a, b in zip(x, y)` over run-time iterables:
        one `dycl.for` over the shortest one's length, each part read at the index."""
        targets = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
        if _read_after_loop(targets, rest):
            raise self.unsupported(s, "a loop variable of a loop over a run-time count read after the loop")
        count, bind = self._zip_reader(s, tree, scope)
        try:
            self._rolled_for(s, (Static(0), count, Static(1)), scope, hold_lists=True, bind=bind)
        except NeedsStatic as e:
            raise self.unsupported(s, e.message if isinstance(e, InPlaceSharing) else (
                "a loop over a run-time range whose body needs per-iteration compile-time values")) from None
        self._lower_body(s.orelse, scope)  # no break here (see lower_for): the else block always runs

    def _zip_reader(self: Lowerer, s: ast.For, tree: _Zipped, scope: _Scope) -> tuple[Value, Any]:
        """(length, the element at an index) of an enumerate/zip over run-time iterables."""
        lengths: list[Value] = []
        readers: list[Any] = []
        for p in tree.parts:
            if isinstance(p, _Zipped):
                n, reader = self._zip_reader(s, p, scope)
                lengths.append(n)
                readers.append(reader)
            elif isinstance(p, RuntimeRange) or isinstance(p, Static) and isinstance(p.value, range):
                r = p if isinstance(p, RuntimeRange) else RuntimeRange(Static(p.value.start), Static(p.value.stop),
                                                                       Static(p.value.step))
                if not (isinstance(r.step, Static) and isinstance(r.step.value, int) and r.step.value):
                    raise self.unsupported(s.iter, "enumerate/zip over a range whose step only the run time knows")
                k = r.step.value
                count = self._binop(ast.Sub(), r.stop, r.start, s.iter)
                if k != 1:  # len(range(a, b, k)) = ceil((b - a) / k)
                    count = self._binop(ast.FloorDiv(), self._binop(ast.Add(), count, Static(k - (1 if k > 0 else -1)),
                                                                    s.iter), Static(k), s.iter)
                lengths.append(self.call_function("builtins.max", [count, Static(0)], {}, s.iter))
                readers.append(lambda i, r=r, k=k: self._binop(
                    ast.Add(), r.start, i if k == 1 else self._binop(ast.Mult(), i, Static(k), s), s))
            elif isinstance(p, SSAValue) and isinstance(p.type, d.ListType):
                if any(isinstance(a, ast.Name) and a.id in _appended_names(s.body) for a in ast.walk(s.iter)):
                    raise self.unsupported(s, "appending to the list a for loop iterates over")
                lengths.append(self.emit(d.ListLenOp(p), s.iter).result)
                readers.append(lambda i, p=p: self.emit(d.ListGetOp(p, i), s).result)
            elif isinstance(p, SSAValue) and maybe_tensor(p) and not (p.type == d.ANY and maybe_sequence(p)) and not (
                    isinstance(p.type, TensorType) and not p.type.get_shape()):
                self._refuse_rows_updated(s, p, scope)
                lengths.append(self.call_function("builtins.len", [p], {}, s.iter))
                readers.append(lambda i, p=p: self.call_function(_row_function(p), [p, i], {}, s))
            else:
                what = "a Python sequence of tensors whose length only the run time knows (a split, chunk or " \
                    "unbind, a module's or Python code's result)" if isinstance(p, SSAValue) and maybe_sequence(p) \
                    else "a value that is not a tensor, a list or a range"
                raise self.unsupported(s.iter, f"{tree.kind} over {what}, read at a run-time index")
        count = lengths[0]
        for n in lengths[1:]:
            count = self.call_function("builtins.min", [count, n], {}, s.iter)

        def bind(i: SSAValue) -> Value:
            items = [reader(i) for reader in readers]
            if tree.kind == "enumerate":
                return SeqVal([self._binop(ast.Add(), tree.start, i, s), items[0]])
            return SeqVal(items)
        return count, bind

    def in_run_time_loop(self: Lowerer) -> bool:
        """Inside a `for` whose count only the run knows: per-iteration compile-time
        values cannot come from unrolling it, so run-time forms are taken instead."""
        return bool(self.loops) and self.loops[-1].run_time

    def run_time_rows(self: Lowerer, it: Value | RuntimeRange) -> bool:
        """`it` is a tensor whose row count only the run knows (not a tuple a call made)."""
        return isinstance(it, SSAValue) and (it.type == d.ANY and not maybe_sequence(it) or (
            isinstance(it.type, TensorType) and bool(it.type.get_shape()) and it.type.get_shape()[0] < 0))

    def _refuse_rows_updated(self: Lowerer, s: ast.For, it: SSAValue, scope: _Scope) -> None:
        # `for r in y: y += 1`: the rows are views of y, and the later ones see the update
        roots = self.roots_of(it)
        if any(isinstance(v := scope.env.get(n), SSAValue) and roots & self.roots_of(v)
               for n in _updated_in_place(s.body)):
            raise self.unsupported(s, "a for loop over the rows of a tensor that its body updates in place")

    def iter_items(self: Lowerer, it: Value | RuntimeRange, node: ast.AST) -> list[Value] | None:
        """What iterating `it` yields, when that is known at compile time: Python
        sequences and dicts (keys), module containers, and the rows of a tensor
        whose first dimension is static. None if it is known only at run time."""
        if isinstance(it, Static) and isinstance(it.value, _ITERABLE_CONSTANTS):
            return [Static(x) for x in it.value]
        if isinstance(it, ObjectVal):
            if it.probe is None:
                return None  # a dataclass instance is not iterable
            found = self.probe_answer(it, list, node)
            return list(found.items) if isinstance(found, SeqVal) else None
        if isinstance(it, DictVal):
            return [Static(k) for k in it.keys]
        if isinstance(it, SeqVal):
            return list(it.items)
        if isinstance(it, SSAValue) and isinstance(it.type, TensorType) and it.type.get_shape():
            n = it.type.get_shape()[0]
            if n < 0:
                return None
            return [self.call_function("_operator.getitem", [it, Static(i)], {}, node) for i in range(n)]
        if isinstance(it, ModuleRef) and isinstance(it.module, (nn.Sequential, nn.ModuleList)):
            return list(it.members())
        if isinstance(it, ModuleRef) and isinstance(it.module, nn.ModuleDict):
            return [Static(k) for k in it.module.keys()]
        if isinstance(it, (StaticObject, ObjectRef)) and isinstance(it.obj, (list, tuple)) and it.obj and \
                all(_plain_object(x) for x in it.obj):
            # a list of processor objects held by the model (HF's LogitsProcessorList)
            return [StaticObject(x, f"{it.expr}[{i}]") for i, x in enumerate(it.obj)]
        return None

    def _unrolled_for(self: Lowerer, s: ast.For, items: list[Value], rest: list[ast.stmt] | None, scope: _Scope) -> bool:
        seq: list[ast.stmt] = []
        for item in items:
            bind = ast.copy_location(ast.Assign(targets=[s.target], value=_Injected(item, s)), s)
            seq.append(bind)
            seq.extend(restructure(s.body, (ast.Continue,), lambda _: []))
        seq.extend(s.orelse)  # reached only when no iteration broke out
        if rest is None:
            self._lower_body(seq, scope)
            return False
        # A break jumps to the code after the loop: each path runs its own copy, so
        # values that differ by path (lists of different lengths, modules) stay apart.
        # Copies multiply with every further loop that breaks; past the budget the
        # loop is lowered with a flag instead and the paths join after it, unless a
        # join would merge what must stay apart: then per path after all.
        restore = _snapshot([scope, *self._caller_scopes])
        if self._attempt(lambda: self._per_path_for(s, seq, rest, scope), OverBudget, PER_PATH_BUDGET):
            return True
        restore()
        self.strict_joins.append(self.names_read_after([s]))
        try:
            flagged = self._attempt(lambda: self._flagged_for(s, items, scope), UnsafeJoin)
            if not flagged:
                # Lists of different lengths by path (`out.append(...)` before a break): held by
                # the host, one list value the paths share, as in a loop over a run-time range.
                restore()
                flagged = self._attempt(lambda: self._held_lists_flagged_for(s, items, scope), UnsafeJoin)
        finally:
            self.strict_joins.pop()
        if flagged:
            return False
        restore()
        self._per_path_for(s, seq, rest, scope)
        return True

    def _held_lists_flagged_for(self: Lowerer, s: ast.For, items: list[Value], scope: _Scope) -> None:
        if not self._hold_lists(_appended_names(s.body), s.body, scope, s):
            raise UnsafeJoin  # (no list to hold: the join merges something else)
        self._flagged_for(s, items, scope)

    def _per_path_for(self: Lowerer, s: ast.For, seq: list[ast.stmt], rest: list[ast.stmt], scope: _Scope) -> None:
        cont = _Continuation(rest, s)
        self._lower_body(restructure(seq + [cont], (ast.Break,), lambda _: [cont]), scope)

    def _attempt(self: Lowerer, lower: Any, gives_up: type[Exception], budget: int | None = None) -> bool:
        """Lower into a scratch block and keep the ops, or return False if `lower` gave
        up (went over `budget` ops, or joined values that must stay apart)."""
        block = Block()
        owner = object()
        if budget is not None:
            self.budgets.append((owner, self.emitted + budget))
        try:
            with self._in_block(block):
                lower()
        except gives_up as e:
            if isinstance(e, OverBudget) and e.owner is not owner:
                raise
            return False
        finally:
            if budget is not None:
                self.budgets.pop()
        for op in list(block.ops):
            op.detach()
            self.block.add_op(op)
        return True

    def _flagged_for(self: Lowerer, s: ast.For, items: list[Value], scope: _Scope) -> None:
        """Unrolled with a flag: `break` sets it, later iterations run only while it is unset."""
        flag = f"__dycl_broke_{s.lineno}_{s.col_offset}_{len(self.budgets)}"
        seq: list[ast.stmt] = [init_flag(flag, s)]
        for item in items:
            bind = ast.copy_location(ast.Assign(targets=[s.target], value=_Injected(item, s)), s)
            iteration = guard_breaks([bind, *restructure(s.body, (ast.Continue,), lambda _: [])], flag)
            seq.append(unless(flag, iteration, s))
        if s.orelse:
            seq.append(unless(flag, list(s.orelse), s))
        self._lower_body(seq, scope)
        scope.env.pop(flag, None)

    def _rolled_for(self: Lowerer, s: ast.For, bounds: tuple[Value, Value, Value], scope: _Scope,
                    elements: SSAValue | None = None, hold_lists: bool = False, rows: SSAValue | None = None,
                    bind: Any = None) -> None:
        """Emit `dycl.for` (the target bound to the index, or to that element of
        `elements`, or to that row of the tensor `rows`, or to `bind(index)`); raises
        NeedsStatic when the body needs per-iteration values. `hold_lists`: lists the
        body changes are held by the host (a run-time range)."""
        extra: set[str] = set()
        if hold_lists:
            self._hold_lists(_appended_names(s.body), s.body, scope, s)
        while True:
            try:
                return self._rolled_for_carrying(s, bounds, scope, extra, elements, rows, bind)
            except _MoreCarried as e:
                extra |= e.names
            except _ListsChanged as e:
                if not hold_lists or not self._hold_lists(e.names, s.body, scope, s):
                    raise

    def _rolled_for_carrying(self: Lowerer, s: ast.For, bounds: tuple[Value, Value, Value], scope: _Scope,
                             extra: set[str], elements: SSAValue | None, rows: SSAValue | None = None,
                             bind: Any = None) -> None:
        target_names = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
        if not isinstance(s.target, ast.Name) and bind is None:
            raise NeedsStatic
        # The loop variable read after the loop (`for i in ...: if c: break` then `i`): its
        # last value is carried out; bound to the unbound marker before, where it was unbound
        # (after no iteration eager raises where it is read).
        kept = {n for n in target_names if self._read_after(s, {n})} if self._in_source(s) else set()
        fresh = self._unbound_before(s, kept, scope)
        try:
            self._rolled_for_target_carried(s, bounds, scope, extra | kept, elements, rows, bind, target_names)
        except (NeedsStatic, _MoreCarried):
            for n in fresh:
                scope.env.pop(n, None)
            raise
        for n in fresh:
            self.maybe_unbound.add(scope.env[n])  # (the loop's result: unbound after no iteration)

    def _rolled_for_target_carried(self: Lowerer, s: ast.For, bounds: tuple[Value, Value, Value], scope: _Scope,
                                   extra: set[str], elements: SSAValue | None, rows: SSAValue | None, bind: Any,
                                   target_names: set[str]) -> None:
        carried = self._carried(s.body, scope, extra)
        mark = self._mark()
        body_block: Block | None = None
        try:
            inits = [self._loop_init(n, scope, s) for n in carried]
            body_block = Block(arg_types=[i64] + _carried_types(inits))
            self._loop_entries.update(zip(body_block.args[1:], inits))
            lb, ub, st = (self._index_value(b, s) for b in bounds)
            sub = self._loop_scope(scope, carried, body_block.args[1:])
            body_block.args[0].name_hint = s.target.id if elements is None and rows is None and bind is None \
                else None
            self.loops.append(_RolledLoop(carried, not all(isinstance(b, Static) for b in bounds)))
            self.loop_depth += 1
            try:
                with self._in_block(body_block):
                    target = body_block.args[0] if elements is None else self.emit(
                        d.ListGetOp(elements, body_block.args[0]), s).result
                    if rows is not None:
                        target = self.call_function(_row_function(rows), [rows, body_block.args[0]], {}, s)
                    if bind is not None:
                        target = bind(body_block.args[0])
                    self._assign(s.target, target, sub)
                    self._lower_body(restructure(s.body, (ast.Continue,), lambda _: []), sub)
                    if not sub.terminated:
                        body_block.add_op(d.YieldOp(*[self.materialize(sub.env[n], s) for n in carried]))
                    else:
                        raise NeedsStatic
                    self._lists_unchanged(scope, sub)
                    self._check_carried(scope, sub, carried)
                    self._check_inplace_sharing(s.body, scope, sub, carried)
            finally:
                self.loop_depth -= 1
                self.loops.pop()
            if self._escaping(s, scope, target_names):
                raise NeedsStatic
        except (NeedsStatic, _MoreCarried):
            if body_block is not None:
                body_block.erase(safe_erase=False)
            self._rollback(mark)
            raise
        for_op = self.emit(d.ForOp(lb, ub, st, inits, Region(body_block)), s)
        self.check_loop_none_tests(for_op, s)
        for n, res in zip(carried, for_op.results):
            res.name_hint = n if n.isidentifier() else None  # (`$state:...` keys: no SSA name)
            scope.env[n] = res

    def _index_value(self: Lowerer, v: Value, node: ast.AST) -> SSAValue:
        ssa = self.materialize(v, node)
        if ssa.type not in (i64, d.ANY):
            raise self.error(node, f"range() bound must be an integer, got {ssa.type}")
        if ssa.type == d.ANY:
            ssa = self.emit(d.ItemOp(ssa, i64), node).results[0]
        return ssa

    # --------------------------------------------------------------- while

    def lower_while(self: Lowerer, s: ast.While, rest: list[ast.stmt], scope: _Scope) -> bool:
        """Lower `s`; returns True if it also consumed `rest` (unrolled per path)."""
        if s.orelse and contains_exit(s.body, (ast.Break,)):
            # Its else block as an `if` on a flag the breaks clear.
            first, loop, then = loop_else_as_if(s)
            self._lower_body([first], scope)
            assert isinstance(loop, ast.While)
            if self.lower_while(loop, [then, *rest], scope):
                return True
            self._lower_body([then], scope)
            return False
        restore, mark = _snapshot([scope, *self._caller_scopes]), self._mark()
        try:
            self._lower_while(s, scope)
        except NeedsStatic as e:
            self._rollback(mark)
            # The body needs per-iteration compile-time values (a growing Python list,
            # a module picked by a counter): unroll it per path while every path
            # ends within the limit, as eager's would (`while True: ... if
            # len(outputs) == max_steps: break`).
            restore()
            if not isinstance(e, InPlaceSharing) and self._attempt(
                    lambda: self._unrolled_while(s, rest, scope), (OverBudget, NeedsStatic), PER_PATH_BUDGET):
                return True
            restore()
            raise self.unsupported(s, e.message if isinstance(e, InPlaceSharing) else (
                "a data-dependent loop whose body needs per-iteration compile-time values (module list "
                f"index, growing Python list) and does not end within {WHILE_UNROLL_LIMIT} unrolled "
                "iterations on every path")) from None
        if not scope.terminated:
            self._lower_body(s.orelse, scope)  # no break: the else block runs when the test fails
        return False

    def _unrolled_while(self: Lowerer, s: ast.While, rest: list[ast.stmt], scope: _Scope) -> None:
        cont = _Continuation(rest, s)
        self._lower_body([self.while_iteration(_Again(s, 0, cont))], scope)

    def while_iteration(self: Lowerer, again: _Again) -> ast.stmt:
        """`if test: body; <next iteration> else: orelse; <after the loop>`, with
        `continue` skipping to the next iteration and `break` to after the loop."""
        s = again.loop
        if again.k >= WHILE_UNROLL_LIMIT:
            raise NeedsStatic
        body = restructure(s.body, (ast.Continue,), lambda _: [])
        body = restructure(body + [_Again(s, again.k + 1, again.cont)], (ast.Break,), lambda _: [again.cont])
        return ast.copy_location(ast.If(test=s.test, body=body, orelse=[*s.orelse, again.cont]), s)

    def _lower_while(self: Lowerer, s: ast.While, scope: _Scope) -> None:
        # Iterations decided at compile time run here; the rest becomes dycl.while.
        for _ in range(100_000):
            mark = self._mark()
            scratch = Block()
            with self._in_block(scratch):
                test = self.truth(s.test, scope)
            scratch.erase(safe_erase=False)
            self._rollback(mark)
            if not isinstance(test, Static):
                break
            if not test.value:
                return
            if contains_exit(s.body, (ast.Break, ast.Continue)):
                break  # `while True: ... break`: a host loop, as long as eager's
            self._lower_body(s.body, scope)
            if scope.terminated:
                return
        else:
            raise self.error(s, "while loop with a compile-time condition does not terminate")
        if always_exits(s.body) and not contains_exit(s.body, (ast.Continue,)):
            # Every path through the body breaks or returns: it runs at most once, so it
            # is an `if` (values may then change type, as in `t = 2; while c: t -= 0.5; break`).
            once = ast.If(test=s.test, body=restructure(s.body, (ast.Break,), lambda _: []), orelse=[])
            self._lower_body([ast.copy_location(once, s)], scope)
            return
        self._rolled_while(s, scope)

    def _loop_bound(self: Lowerer, s: ast.While) -> int | None:
        """An optional guard (`# dycl: max_iterations=N`); without one the host loops
        as long as eager would."""
        assert self.fn is not None
        line = self.fn.source_lines[s.lineno - 1] if s.lineno - 1 < len(self.fn.source_lines) else ""
        m = _BOUND_COMMENT.search(line)
        if m:
            return int(m.group(1))
        return self.max_iterations

    def _loop_init(self: Lowerer, name: str, scope: _Scope, node: ast.AST) -> SSAValue:
        """What `name` enters a rolled loop with; an early return's slot, still None,
        is marked as not read before it is set."""
        v = self.materialize(scope.env[name], node)
        owner = v.owner
        if name.startswith(RETURN_SLOT) and isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr):
            owner.attributes[d.UNSET_ATTR] = UnitAttr()
        return v

    def _rolled_while(self: Lowerer, s: ast.While, scope: _Scope) -> None:
        from dycl.frontend.scopes import _assigned_names

        held = self._hold_lists(_appended_names(s.body), s.body, scope, s)
        kept = self._unbound_before(s, _assigned_names(s.body), scope)
        try:
            self._rolled_while_kept(s, scope, held, set(kept))
        except BaseException:
            for n in kept:
                scope.env.pop(n, None)
            raise
        for n in kept:
            self.maybe_unbound.add(scope.env[n])  # (the loop's result: unbound after no iteration)

    def _unbound_before(self: Lowerer, s: ast.For | ast.While, names: set[str], scope: _Scope) -> list[str]:
        """Of `names`, those a loop binds first and code after it reads (`while True:
        y = f(x); if c: break` then `y`): bound to the unbound marker before the loop
        and carried out of it (after no iteration eager raises where one is read)."""
        if isinstance(s, ast.For) and not self._in_source(s):
            return []  # (a comprehension's loop: its variable is its own)
        kept = sorted(n for n in names - set(scope.env) if self._read_after(s, {n}))
        for n in kept:
            scope.env[n] = self.unbound_marker(s)
        return kept

    def _rolled_while_kept(self: Lowerer, s: ast.While, scope: _Scope, held: bool, extra: set[str]) -> None:
        while True:
            try:
                return self._rolled_while_carrying(s, scope, extra)
            except _MoreCarried as e:
                extra |= e.names
            except _ListsChanged as e:
                if not self._hold_lists(e.names, s.body, scope, s):
                    raise
                held = True
            except FrontendError:
                if held:  # the body does with a list what a held one cannot (`pop`): unrolled, as before
                    raise NeedsStatic from None
                raise

    def _rolled_while_carrying(self: Lowerer, s: ast.While, scope: _Scope, extra: set[str]) -> None:
        bound = self._loop_bound(s)
        carried = self._carried(s.body, scope, extra)
        mark = self._mark()
        inits = [self._loop_init(n, scope, s) for n in carried]
        cond_block = Block(arg_types=_carried_types(inits))
        body_block = Block(arg_types=_carried_types(inits))
        for block in (cond_block, body_block):
            self._loop_entries.update(zip(block.args, inits))
        with self._in_block(cond_block):
            sub = self._loop_scope(scope, carried, cond_block.args)
            c = self.to_bool(self.truth(s.test, sub), s.test)
            cond_block.add_op(d.ConditionOp(c))
        sub = self._loop_scope(scope, carried, body_block.args)
        self.loops.append(_RolledLoop(carried))
        self.loop_depth += 1
        try:
            with self._in_block(body_block):
                self._lower_body(restructure(s.body, (ast.Continue,), lambda _: []), sub)
                if not sub.terminated:
                    body_block.add_op(d.YieldOp(*[self.materialize(sub.env[n], s) for n in carried]))
                self._lists_unchanged(scope, sub)
                self._check_carried(scope, sub, carried)
                self._check_inplace_sharing(s.body, scope, sub, carried)
        except _MoreCarried:
            self._rollback(mark)
            raise
        except NeedsStatic:
            self._rollback(mark)
            raise  # lower_while unrolls it, or refuses
        finally:
            self.loop_depth -= 1
            self.loops.pop()
        if sub.terminated and not any(True for _ in body_block.ops):
            raise self.error(s, "while loop body always leaves the loop")
        loop = self.emit(d.WhileOp(inits, bound, Region(cond_block), Region(body_block)), s)
        self.check_loop_none_tests(loop, s)
        for n, res in zip(carried, loop.results):
            res.name_hint = n if n.isidentifier() else None  # (`$state:...` keys: no SSA name)
            scope.env[n] = res
        # Names first assigned in the body are unbound if it never runs: reading one
        # after the loop is an error there (a later assignment makes it fine again).
        from dycl.frontend.scopes import _assigned_names

        for n in _assigned_names(s.body) - set(carried):
            scope.env[n] = PathDependent(
                n, f"'{n}' is first assigned inside the data-dependent loop at line {self._loc(s).line} (unbound if it "
                   "runs no iteration); assign it before the loop")

    # ---------------------------------------------------------- break/continue

    def lower_break(self: Lowerer, s: ast.Break, scope: _Scope) -> None:
        if not self.loops:
            raise self.unsupported(s, "break here")
        loop = self.loops[-1]
        self.emit(d.BreakOp(*[self.materialize(scope.env[n], s) for n in loop.carried]), s)
        scope.terminated = True

    # ------------------------------------------------------------- helpers

    def _carried(self: Lowerer, body: list[ast.stmt], scope: _Scope, extra: set[str]) -> list[str]:
        from dycl.frontend.scopes import _assigned_names

        # A name that may be unbound or names different modules is a fresh local of the body.
        names = sorted(n for n in _assigned_names(body) | extra
                       if n in scope.env and not isinstance(scope.env[n], PathDependent))
        for n in names:
            v = scope.env[n]
            if isinstance(v, (SeqVal, ModuleRef, GlobalRef, Closure)):
                raise NeedsStatic
        return names

    def _hold_lists(self: Lowerer, names: set[str], body: list[ast.stmt], scope: _Scope, node: ast.AST) -> bool:
        """Lists a data-dependent loop appends to (`tokens.append(t.item())`) are held
        by the host from here on: their length is the trip count's. A list another
        name or container also holds, or the caller's, stays a compile-time list.
        Whether any list is held now that was not."""
        from dycl.frontend.scopes import _assigned_names

        held_any = False
        updated = _updated_in_place(body)
        for name in sorted(names - _assigned_names(body)):
            v = scope.env.get(name)
            if type(v) is not SeqVal or not v.is_list or v.argument is not None or self._holders(v, scope) != 1:
                continue
            if _appended_values(body, name) & updated:
                # `h += x; outs.append(h)`: eager's list holds h itself, each element the last h;
                # the IR's holds each iteration's value (unrolled or run as Python instead)
                continue
            held = self.held_copy(v, node)
            if held is None:
                continue  # (a list of tuples or lists: Python objects the IR does not type)
            held.name_hint = name
            scope.env[name] = held
            held_any = True
        return held_any

    def _holders(self: Lowerer, seq: SeqVal, scope: _Scope) -> int:
        """How many names and container elements hold `seq`, here and in callers."""
        count = 0
        for env in [scope.env] + [sc.env for sc in self._caller_scopes if sc is not scope]:
            stack = list(env.values())
            while stack:
                x = stack.pop()
                count += x is seq
                if isinstance(x, SeqVal) and x is not seq:
                    stack.extend(x.items)
        return count

    def _lists_unchanged(self: Lowerer, scope: _Scope, sub: _Scope) -> None:
        """A rolled body must not grow an outer Python list (its length would depend on the trip count)."""
        changed = {n for n, v in scope.env.items() if isinstance(v, SeqVal) and not same_value(v, sub.env.get(n))}
        if changed:
            raise _ListsChanged(changed)

    def _check_carried(self: Lowerer, scope: _Scope, sub: _Scope, carried: list[str]) -> None:
        """Names the body changed without assigning them (in-place updates of aliases)."""
        changed = {
            n for n, v in scope.env.items()
            if n not in carried and not isinstance(v, (SeqVal, PathDependent)) and not sub.terminated
            and sub.env.get(n) is not v
        }
        if changed:
            # Module state the body lost track of (a region ran) is the host's from the start.
            lost = {n for n in changed if is_state_key(n) and n not in sub.env}
            for n in lost:
                del scope.env[n]
            raise _MoreCarried(changed - lost)

    def _check_inplace_sharing(self: Lowerer, body: list[ast.stmt], scope: _Scope, sub: _Scope,
                               carried: list[str]) -> None:
        """`h op= e` in a rolled body must reach every name sharing h's storage. Inside
        one iteration it does; across iterations each carried name is its own block
        argument, so sharing at loop entry or at the end of an iteration is lost."""
        targets = sorted({
            n.target.id for st in body for n in ast.walk(st)
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
        } | {  # h.add_(e): the same update
            n.func.value.id for st in body for n in ast.walk(st)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
            and n.func.attr.endswith("_") and not n.func.attr.endswith("__")
        })
        if not targets:
            return

        def sharing(v: Value, holders: list[tuple[str, SSAValue]], skip: str) -> str | None:
            if not maybe_tensor(v):
                return None
            roots = self.roots_of(v)  # type: ignore[arg-type]
            for other, w in holders:
                if other != skip and maybe_tensor(w) and roots & self.roots_of(w):
                    return other
            return None

        fix = "; write `{0} = {0} + ...` (not `+=`) in the loop, or clone the tensor before it"
        entry = [hw for env in [scope.env, *(sc.env for sc in self._caller_scopes)] for hw in bound_values(env)]
        for t in targets:
            if t in scope.env and (other := sharing(scope.env[t], [(o, w) for o, w in entry if not (o == t and w is scope.env[t])], t)):
                raise InPlaceSharing(f"in-place update of '{t}' in a loop body while '{other}' shares its storage at loop entry" + fix.format(t))
        at_yield = [(n, w) for n in carried for _, w in bound_values({n: sub.env[n]})]
        for t in targets:
            if t in carried and (other := sharing(sub.env[t], at_yield, t)):
                raise InPlaceSharing(f"in-place update of '{t}' in a loop body while '{other}' shares its storage from one iteration to the next" + fix.format(t))

    def _escaping(self: Lowerer, s: ast.For, scope: _Scope, allowed: set[str]) -> bool:
        """A name first assigned in the loop body may be read after the loop (before
        code binds it again: a read in a branch the loop's own branch excludes, or in a
        later loop binding it first, does not count)."""
        from dycl.frontend.scopes import _assigned_names

        new = _assigned_names(s.body) - set(scope.env) - allowed
        return bool(new) and self._read_after(s, new)

    def _in_source(self: Lowerer, s: ast.For | ast.While) -> bool:
        """`s` is a loop statement of the function (not one made for a comprehension,
        whose variable is its own)."""
        assert self.fn is not None and self.fn.tree is not None
        tree = self.fn.tree
        root = tree.body[0] if isinstance(tree, ast.Module) and len(tree.body) == 1 else tree
        return _path_to(root, s) is not None

    def _read_after(self: Lowerer, s: ast.For | ast.While, new: set[str]) -> bool:
        """Whether code after the loop `s` may read one of `new` (see _escaping)."""
        assert self.fn is not None and self.fn.tree is not None
        tree = self.fn.tree
        root = tree.body[0] if isinstance(tree, ast.Module) and len(tree.body) == 1 else tree  # (the def itself)
        path = _path_to(root, s)
        if path is None:  # (a synthesized loop: textual order, as before)
            return bool(new & self.names_read_after(s.body))
        for owner, stmts, i in reversed(path):
            after = stmts[i + 1:]
            if isinstance(owner, (ast.For, ast.While)) and stmts is owner.body:
                after = stmts + owner.orelse  # later iterations run the whole body again, then the else block
            elif isinstance(owner, ast.Try) and stmts is not owner.finalbody:
                after = after + [h for x in owner.handlers for h in x.body] + owner.orelse + owner.finalbody
            if _read_after_loop(new, after):
                return True
        return False

    def _loop_scope(self: Lowerer, scope: _Scope, carried: list[str], args: Any) -> _Scope:
        from dycl.frontend.scopes import _Scope

        sub = _Scope(env=copy_env(scope.env))
        for n, a in zip(carried, args):
            a.name_hint = n if n.isidentifier() else None
            sub.env[n] = a
        return sub

    def _mark(self: Lowerer) -> Operation | None:
        return self.block.last_op

    def _rollback(self: Lowerer, mark: Operation | None) -> None:
        """Erase ops emitted into the current block after `mark` (a failed attempt)."""
        while self.block.last_op is not None and self.block.last_op is not mark:
            self.block.erase_op(self.block.last_op, safe_erase=False)


def _split_count(value: Any) -> int | None:
    """At most how many parts `torch.split(x, [2, 3])`, `x.chunk(4)`,
    `x.tensor_split(4)` or `x.split(2)` (x of a static size) gives, where that is
    known at compile time."""
    if not (isinstance(value, SSAValue) and isinstance(call := value.owner, (d.CallFunctionOp, d.CallMethodOp))):
        return None
    method = call.method.data if isinstance(call, d.CallMethodOp) else call.target.data.removeprefix("torch.")
    if method not in ("split", "chunk", "tensor_split", "split_with_sizes") or (
            isinstance(call, d.CallFunctionOp) and not call.target.data.startswith("torch.")):
        return None
    positional, keyword = call.positional_and_keyword()
    size = positional[1].owner if len(positional) > 1 else None
    dim = positional[2].owner if len(positional) > 2 else keyword["dim"].owner if "dim" in keyword else None
    if isinstance(size, d.MakeTupleOp) and method in ("split", "split_with_sizes"):
        return len(size.operands)
    if not (isinstance(size, arith.ConstantOp) and isinstance(size.value, IntegerAttr)) or size.value.value.data <= 0:
        return None
    n = size.value.value.data
    if method in ("chunk", "tensor_split"):
        return n
    k = dim.value.value.data if isinstance(dim, arith.ConstantOp) and isinstance(dim.value, IntegerAttr) else \
        0 if dim is None else None
    t = positional[0].type
    if k is None or not isinstance(t, TensorType) or not -len(t.get_shape()) <= k < len(t.get_shape()) or \
            t.get_shape()[k] < 0:
        return None
    return max(1, -(-t.get_shape()[k] // n))  # (split(x, n) of a length-0 dimension: one empty part)


# Calls whose result may be a Python tuple of tensors (a loop over it is not a loop over rows).
_SEQUENCE_RESULTS = frozenset({
    "unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split",
    "unsafe_chunk", "unsafe_split_with_sizes", "meshgrid", "broadcast_tensors", "topk", "sort", "max", "min",
    "median", "nanmedian", "mode", "kthvalue", "var_mean", "std_mean", "aminmax", "frexp", "unique",
    "unique_consecutive", "histogram", "lu", "qr", "svd", "slogdet", "eig", "eigh", "lstsq", "cummax", "cummin",
    "where", "atleast_1d", "atleast_2d", "atleast_3d", "list", "tuple", "zip", "enumerate", "reversed"})


def _path_to(tree: ast.AST, target: ast.stmt) -> list[tuple[ast.AST, list[ast.stmt], int]] | None:
    """The statement lists enclosing `target` (found by its position: lowering may
    work on copies of the function's statements), outermost first: (their owner, the
    list, the index of the statement holding `target` in it)."""
    where = _position(target)
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        block = getattr(tree, field, None)
        if not isinstance(block, list):
            continue
        for i, st in enumerate(block):
            if type(st) is type(target) and _position(st) == where:
                return [(tree, block, i)]
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            inner = _path_to(st, target)
            if inner is not None:
                # (an except handler or a match case is no statement list of its own owner)
                return ([(tree, block, i)] if isinstance(st, ast.stmt) else []) + inner
    return None


def _position(node: ast.AST) -> tuple[Any, ...]:
    return tuple(getattr(node, k, None) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset"))


def _row_function(rows: SSAValue) -> str:
    """How the i-th element of `rows` is read: a list `tolist()` made by subscript,
    a tensor's row by dycl.tensor_ops.row (which refuses a tuple at trace time)."""
    listed = isinstance(rows.owner, d.CallMethodOp) and rows.owner.method.data == "tolist"
    return "_operator.getitem" if listed else "dycl.tensor_ops.row"


def _loads(nodes: list[Any]) -> set[str]:
    """Names `nodes` read from the enclosing function (a comprehension's own targets
    and a lambda's parameters are its own)."""
    out: set[str] = set()
    stack = [(x, frozenset()) for x in nodes]
    while stack:
        node, own = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
            out.add(node.id)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            own = own | {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            own = own | {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        stack.extend((c, own) for c in ast.iter_child_nodes(node))
    return out


def _read_after_loop(names: set[str], rest: list[ast.stmt]) -> bool:
    """Whether code after a loop may read one of `names` (its variables: the last
    element, or unbound after no iteration) before binding it again. Reads in the body
    of a later loop that binds the name itself do not count, also inside an `if`."""
    pending = set(names)
    for st in rest:
        if not pending:
            return False
        if isinstance(st, ast.For):
            bound = {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
            if _loads([st.iter]) & pending or _read_after_loop(pending - bound, st.body) or \
                    _read_after_loop(pending, st.orelse):
                return True
            continue  # (after no iteration the names keep their old values)
        if isinstance(st, (ast.If, ast.While)):
            if _loads([st.test]) & pending or _read_after_loop(pending, st.body) or \
                    _read_after_loop(pending, st.orelse):
                return True
            continue
        if _loads([st]) & pending:
            return True
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            pending -= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return False


# Calls whose result is a tuple of tensors (each element a tensor, none a tuple).
_TENSOR_TUPLES = _SEQUENCE_RESULTS - {"list", "tuple", "zip", "enumerate", "reversed"} | {"unpack"}


def maybe_sequence(v: SSAValue) -> bool:
    """`v` may be a Python sequence: a module's result (an LSTM's (out, (h, c))), a
    region's, or a call that returns tuples (`unbind`, `split`, `topk`, `unique(...,
    return_counts=True)`)."""
    op = v.owner
    if isinstance(op, d.GetItemOp) and isinstance(src := op.operands[0].owner, (d.CallFunctionOp, d.CallMethodOp)):
        # an element of topk/sort/max(dim)/split/unbind...'s result is a tensor (`vals, ids = x.topk(3)`)
        name = src.target.data.rsplit(".", 1)[-1] if isinstance(src, d.CallFunctionOp) else src.method.data
        from_torch = isinstance(src, d.CallMethodOp) or src.target.data.startswith(("torch.", "dycl.tensor_ops."))
        return not (from_torch and name in _TENSOR_TUPLES)
    if isinstance(op, (d.CallModuleOp, d.PyRegionOp, d.MakeTupleOp, d.GetItemOp)) or not isinstance(op, Operation):
        return True
    if isinstance(op, d.CallFunctionOp):
        name = op.target.data.rsplit(".", 1)[-1]
        return name in _SEQUENCE_RESULTS and not (name == "unique" and op.kwargs is None) or \
            not op.target.data.startswith(("torch.", "_operator.", "dycl."))
    if isinstance(op, d.CallMethodOp):
        name = op.method.data
        return name in _SEQUENCE_RESULTS and not (name == "unique" and op.kwargs is None)
    return True


def _plain_object(x: Any) -> bool:
    """An instance of a class of the model's own Python (not a tensor, a module, a
    container or a constant): folded where it is read, its changes noticed."""
    import torch

    return not isinstance(x, (torch.Tensor, nn.Module, type, list, tuple, dict, set, str, bytes, int, float,
                              bool, type(None))) and type(x).__module__.split(".")[0] not in ("torch", "builtins")


def _carried_types(inits: list[SSAValue]) -> list[Any]:
    """Block argument types of loop-carried values: a list the host holds stays one
    (its uses in the body are list ops); the rest `shape-inference` types."""
    return [d.ListType(d.ANY) if isinstance(v.type, d.ListType) else d.ANY for v in inits]


def _appended_names(body: list[ast.stmt]) -> set[str]:
    """Names `name.append(...)` is called on in `body`."""
    return {n.func.value.id for st in body for n in ast.walk(st)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
            and isinstance(n.func.value, ast.Name)}


def _appended_values(body: list[ast.stmt], name: str) -> set[str]:
    """The names `name.append(...)` / `name.extend([...])` put into the list in `body`."""
    out: set[str] = set()
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == name:
                out |= set().union(*(_object_names(arg) for arg in n.args))
    return out


def _object_names(e: ast.expr) -> set[str]:
    """Names whose tensor `e` may be or view: `h`, `h[0]`, `h.view(-1)`, `[h, g]`."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.Subscript):
        return _object_names(e.value)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        return _object_names(e.func.value)
    if isinstance(e, (ast.List, ast.Tuple)):
        return set().union(*(_object_names(x) for x in e.elts))
    if isinstance(e, ast.Starred):
        return _object_names(e.value)
    return set()


def _updated_in_place(body: list[ast.stmt]) -> set[str]:
    """Names whose tensor `body` may change in place: `h += e`, `h.add_(e)`, `h[i] = v`."""
    out: set[str] = set()
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.attr.endswith("_") and not n.func.attr.endswith("__"):
                out.add(n.func.value.id)
            elif isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                out |= {t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
    return out
