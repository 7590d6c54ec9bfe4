"""Scopes and joins: what each Python name holds while lowering (`_Scope`), the
function being lowered (`_Function`), and how branches join — an `if` on a run-time
condition lowers both sides in copies of the scope and merges the names they
assign (`dycl.if` results), or splits the path where values cannot merge."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.ir import Attribute, Block, Region, SSAValue

from dycl.diagnostics import FrontendError
from dycl.dialects import dycl as d
from dycl.frontend.exceptions import PathEnded
from dycl.frontend.inplace import maybe_tensor
from dycl.frontend.state import is_state_key
from dycl.nesting import allow_depth
from dycl.frontend.loops import UnsafeJoin, _snapshot
from dycl.frontend.values import (
    Closure,
    Partial,
    ExceptionVal,
    GlobalRef,
    IndexedModule,
    MethodRef,
    ModuleRef,
    PathDependent,
    SeqVal,
    Static,
    Value,
    copy_env,
    same_value,
    resolve_qualname,
)

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer


@dataclass
class _Function:
    """The Python function being lowered (forward or an inlined helper)."""

    qualname: str
    file: str
    first_line: int
    globals: dict[str, Any]
    inline: bool
    indent: int = 0  # columns removed by dedenting the source
    source_lines: list[str] = field(default_factory=list)
    tree: ast.AST | None = None
    declared_global: set[str] = field(default_factory=set)  # `global`/`nonlocal` names: run-time state
    closure: dict[str, Any] = field(default_factory=dict)  # the free variables it closes over, by name
    grad_mode: str | None = None  # switches its decorators make (`@torch.no_grad()`): see dycl.grad_modes


@dataclass
class _Scope:
    env: dict[str, Value]
    terminated: bool = False
    # For inlined functions: the value each returning path produced.
    returned: list[Value] = field(default_factory=list)
    raised: bool = False  # terminated by a `dycl.raise`: the path yields nothing
    comp_names: set[str] = field(default_factory=set)  # a comprehension's own names


@dataclass(frozen=True)
class _Slot:
    """A merged value that is the k-th result of the `dycl.if` being built."""

    index: int


def _fill_slots(v: Value, results: list[SSAValue], name: str) -> Value:
    if isinstance(v, _Slot):
        r = results[v.index]
        if name.isidentifier() and r.name_hint is None:
            r.name_hint = name
        return r
    if isinstance(v, SeqVal):
        filled = v.like([_fill_slots(x, results, name) for x in v.items])
        filled.origin, filled.sources = v.origin, v.sources  # the same Python object(s)
        return filled
    return v


def _lists_grown_apart(vals: list[Value]) -> bool:
    """The paths' values are the model's own lists (not an argument's: the caller's
    object) of different lengths, or such a list and one the host holds already."""
    own = [v for v in vals if type(v) is SeqVal and v.is_list and v.argument is None]
    held = [v for v in vals if isinstance(v, SSAValue) and isinstance(v.type, d.ListType)]
    return bool(own) and len(own) + len(held) == len(vals) and (
        bool(held) or len({len(v.items) for v in own}) > 1)


def _assigned_names(stmts: Sequence[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


class ScopeLowering:
    """Mixin of Lowerer: scopes and joins."""

    def _new_scope(self: Lowerer, env: dict[str, Value]) -> _Scope:
        return _Scope(env=env)

    def _if(self: Lowerer, s: ast.If, scope: _Scope) -> None:
        if self.fallback == "statement":
            restore, mark, emitted = _snapshot([scope, *self._caller_scopes]), self._mark(), self.emitted
            try:
                cond = self.truth(s.test, scope)
            except FrontendError as e:
                self._restore((restore, mark, emitted))
                self._branch(self.bool_region(s.test, scope, e), s.body, s.orelse, scope, s)
                return
        else:
            cond = self.truth(s.test, scope)
        if isinstance(cond, Static) or isinstance(cond, (ModuleRef, GlobalRef)):
            taken = s.body if (cond.value if isinstance(cond, Static) else True) else s.orelse
            self._lower_body(taken, scope)
            return
        c = self.to_bool(cond, s.test)
        self._branch(c, s.body, s.orelse, scope, s)

    def _branch(
        self,
        cond: SSAValue,
        then_body: Sequence[ast.stmt],
        else_body: Sequence[ast.stmt],
        scope: _Scope,
        node: ast.AST,
        then_fn: Callable[[_Scope], None] | None = None,
        else_fn: Callable[[_Scope], None] | None = None,
    ) -> list[SSAValue]:
        """Emit a `dycl.if` whose branches run the statements and merge names after."""
        branches: list[tuple[Block, _Scope]] = []
        self._if_depth += 1
        allow_depth(self._if_depth + 1)  # passes recurse per level; raise Python's limit to match
        try:
            for body, fn in ((then_body, then_fn), (else_body, else_fn)):
                sub = _Scope(env=copy_env(scope.env))
                block = Block()
                with self._in_block(block):
                    if fn is not None:
                        try:
                            fn(sub)
                        except PathEnded:
                            sub.terminated = sub.raised = True
                    else:
                        self._lower_body(body, sub)
                branches.append((block, sub))
        finally:
            self._if_depth -= 1
        live = [(b, sc) for b, sc in branches if not sc.terminated]
        self._bind_unbound_on_other_paths(node, scope, live)
        names = sorted(
            n
            for n in set().union(*(sc.env.keys() for _, sc in live))
            if all(n in sc.env for _, sc in live) and not all(same_value(sc.env[n], scope.env.get(n)) for _, sc in live)
        ) if live else []
        # Inlined functions: the returned value is merged like a name.
        self._check_caller_containers(scope, names, live, node)
        # A path that raised ends in `dycl.raise` and an unreachable return: it merges nothing.
        ret_live = self.fn is not None and self.fn.inline and all(
            sc.terminated and (sc.returned or sc.raised) for _, sc in branches) and any(
            not sc.raised for _, sc in branches)
        # Module state a path lost track of is the host's (see dycl.frontend.state).
        ending = [sc for _, sc in branches if not sc.raised] if ret_live else [sc for _, sc in live]
        state = {k for sc in ending for k in sc.env if is_state_key(k)} | {k for k in scope.env if is_state_key(k)}
        lost = {k for k in state if not all(k in sc.env for sc in ending)}
        for k in lost & set(scope.env):
            del scope.env[k]
        ret_state = sorted(k for k in state - lost if ending and not all(
            same_value(sc.env[k], scope.env.get(k)) for sc in ending)) if ret_live else []
        merging = (
            [(b, {"$ret": sc.returned[-1], **{k: sc.env[k] for k in ret_state}}) for b, sc in branches
             if not sc.raised] if ret_live
            else [(b, {n: sc.env[n] for n in names}) for b, sc in live]
        )
        slots: list[list[Value]] = []  # the values to yield: one per branch, per slot
        keys = ["$ret", *ret_state] if ret_live else names
        merged = {n: self._merge_values([m[n] for _, m in merging], n, slots) for n in keys}
        yielded: list[list[SSAValue]] = []
        grown = [_lists_grown_apart(vals) for vals in slots]
        for i, (block, _) in enumerate(merging):
            with self._in_block(block):
                yielded.append([self._joined_list(vals[i], node) if held else self.materialize(vals[i], node)
                                for vals, held in zip(slots, grown)])
        fields = self._name_mixed_tuples(merging, yielded, node)
        result_types: list[Attribute] = []
        for i in range(len(slots)):
            ts = {vals[i].type for vals in yielded}
            if len(ts) > 1 and all(isinstance(t, d.ListType) for t in ts):
                ts = {d.ListType(d.ANY)}  # (`[]` on one path, elements on the other)
            result_types.append(ts.pop() if len(ts) == 1 else d.ANY)
        for (block, _), vals in zip(merging, yielded):
            block.add_op(d.YieldOp(*vals))
        if_op = self.emit(
            d.IfOp(cond, result_types, Region(branches[0][0]), Region(branches[1][0])), node
        )
        results = list(if_op.results)
        for k, r in enumerate(results):
            self._joins[r] = [vals[k] for vals in yielded]
            if any(vals[k] in self.maybe_unbound for vals in yielded):
                self.maybe_unbound.add(r)
            kinds = {self.named_tuples.get(vals[k]) for vals in yielded}
            if len(kinds) == 1 and (kind := kinds.pop()) is not None:
                self.named_tuples[r] = kind  # the same torch.return_types on every path
            elif fields[k] is not None:
                self.tuple_fields[r] = fields[k]
        for n in keys:
            merged[n] = _fill_slots(merged[n], results, n)
        if ret_live:
            scope.returned.append(merged["$ret"])
            scope.env.update({k: merged[k] for k in ret_state})
            scope.terminated = True
            return results
        scope.env.update(merged)
        if not live:
            # Both branches leave: the else branch's code moves after the if, so the
            # enclosing block still ends with its return/break.
            else_block = if_op.else_region.block
            for moved in list(else_block.ops):
                moved.detach()
                self.block.add_op(moved)
            else_block.add_op(d.YieldOp())
            scope.terminated = True
            scope.raised = all(sc.raised for _, sc in branches)
        return results

    def _bind_unbound_on_other_paths(self: Lowerer, node: ast.AST, scope: _Scope,
                                     live: list[tuple[Block, _Scope]]) -> None:
        """A name an `if` binds on some of its paths only and code after it reads
        (`if c: y = x * 2`, later `if c: return y`): bound to the unbound marker on
        the others, so the read is eager's (the value, or UnboundLocalError)."""
        if not isinstance(node, ast.If) or len(live) < 2:
            return
        some = {n for _, sc in live for n in sc.env if n not in scope.env and n.isidentifier()
                and not n.startswith("__dycl") and not all(n in other.env for _, other in live)}
        for n in sorted(some):
            if not self._read_after(node, {n}):
                continue
            for block, sc in live:
                if n not in sc.env:
                    with self._in_block(block):
                        sc.env[n] = self.unbound_marker(node)

    def _check_caller_containers(self: Lowerer, scope: _Scope, names: list[str], live: list[tuple[Block, _Scope]],
                                 node: ast.AST) -> None:
        """A list or dict the calling code also holds, changed on some paths of this
        branch only: the join merges this function's names, not the caller's."""
        held: set[int] = set()
        for sc in self._caller_scopes:
            if sc is not scope:
                stack = list(sc.env.values())
                while stack:
                    v = stack.pop()
                    if isinstance(v, SeqVal) and id(v) not in held:
                        held.add(id(v))
                        stack.extend(v.items)
        for n in names:
            before = scope.env.get(n)
            if isinstance(before, SeqVal) and id(before) in held and any(
                    not same_value(before, sc.env[n]) for _, sc in live):
                raise self.unsupported(node, f"'{n}', a list or dict the calling code also holds, changed on "
                                             "some paths only")

    def _name_mixed_tuples(self: Lowerer, merging: list[tuple[Block, Any]], yielded: list[list[SSAValue]],
                           node: ast.AST) -> list[tuple[str, ...] | None]:
        """Paths yielding different `torch.return_types` (`x.max(1)` here, `x.min(1)`
        there) give each its Python type before the join; the field names every path
        shares stay readable after it."""
        fields: list[tuple[str, ...] | None] = []
        for k in range(len(yielded[0]) if yielded else 0):
            kinds = [self.named_tuples.get(vals[k]) for vals in yielded]
            if len(set(kinds)) == 1:
                fields.append(None)
                continue
            for (block, _), vals, kind in zip(merging, yielded, kinds):
                if kind is not None:
                    with self._in_block(block):
                        vals[k] = self.emit(d.CallFunctionOp(kind, [vals[k]]), node).results[0]
            names = {resolve_qualname(kind).__match_args__ if kind else None for kind in kinds}
            fields.append(names.pop() if len(names) == 1 else None)
        return fields

    def _joined_list(self: Lowerer, v: Value, node: ast.AST) -> SSAValue:
        """A list one path grew more than another (`if r.sum() > 0: picks.append(r)`):
        the host holds it from the join on, so later appends and loops over it compile."""
        if not isinstance(v, SeqVal):
            return v  # (held already on this path)
        if any(isinstance(e, SeqVal) for e in v.items):
            return self.materialize(v, node)  # (tuples, lists: elements a held list does not type)
        held = self.held_copy(v, node)
        if held is None:  # (elements a held list cannot type: a Python list, as before)
            return self.materialize(v, node)
        for e in v.items:
            if isinstance(e, SSAValue) and maybe_tensor(e):
                # eager's list holds these very tensors: an in-place update of one later is refused
                self._listed |= self.roots_of(e)
        return held

    def _merge_values(self: Lowerer, vals: list[Value], name: str, slots: list[list[Value]]) -> Value:
        """What `name` holds after a join; the values that differ become `_Slot`s."""
        first = vals[0]
        if all(v is first for v in vals) or (
            all(isinstance(v, Static) for v in vals)
            and all(type(v.value) is type(first.value) and v.value == first.value for v in vals)  # type: ignore[union-attr]
        ):
            return first
        if isinstance(first, SeqVal) and all(first.same_kind(v) for v in vals):
            merged = first.like([self._merge_values([v.items[i] for v in vals], name, slots)  # type: ignore[union-attr]
                                 for i in range(len(first.items))])
            if all(v.origin is first.origin for v in vals):  # type: ignore[union-attr]
                merged.origin, merged.sources = first.origin, first.sources
            else:  # one of several lists: which one, only the run time knows
                merged.sources = frozenset().union(*(v.sources or {v.origin} for v in vals))  # type: ignore[union-attr]
            return merged
        if self.strict_joins and any(isinstance(v, SeqVal) for v in vals):
            raise UnsafeJoin
        if any(isinstance(v, (ModuleRef, GlobalRef, MethodRef, PathDependent, IndexedModule, Closure, ExceptionVal,
                              Partial)) for v in vals):
            if any(name in names for names in self.strict_joins):
                raise UnsafeJoin
            return next((v for v in vals if isinstance(v, PathDependent) and v.message), PathDependent(name))
        for k, other in enumerate(slots):
            # Names bound to the same value on every path stay one value after the
            # join: in-place updates later must reach them all (aliases).
            if all(a is b for a, b in zip(other, vals)):
                return _Slot(k)
        slots.append(vals)
        return _Slot(len(slots) - 1)

    def names_read_after(self: Lowerer, body: list[ast.stmt]) -> set[str]:
        """Names loaded in the current function after the given statements."""
        assert self.fn is not None and self.fn.tree is not None
        end = max(getattr(b, "end_lineno", 0) or 0 for b in body)
        return {
            n.id for n in ast.walk(self.fn.tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno > end
        }

    def _join_into(self: Lowerer, scope: _Scope, outer: _Scope) -> None:
        """After branches inside an expression (`a if c else b`, `and`/`or`): names they
        changed (a tensor updated in place on one path) hold the joined values."""
        for k, v in outer.env.items():
            if (not k.startswith("$") or is_state_key(k)) and k in scope.env and not same_value(scope.env[k], v):
                scope.env[k] = v
        for k in [k for k in scope.env if is_state_key(k) and k not in outer.env]:
            del scope.env[k]
