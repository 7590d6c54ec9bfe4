"""Calls as `func.call`: a helper (a submodule's `forward`, a method, a function, a
nested function or lambda, whose free names are extra parameters) that translates
on its own becomes a private `func.func`, one per helper and compile-time
specialisation, and its call sites `func.call` it; `inline-calls` inlines them, as
MLIR frontends leave inlining to a pass.

"On its own" is checked after translating the body into a block of its own:
everything it uses is a parameter of that block, and it leaves nothing behind but
its result. A call whose body reads or writes module state, updates a tensor in
place, appends to a list, raises, holds a fallback region, or whose result a
caller could write through (a view of an argument or of a module tensor), or may
be None, is translated where it is called instead (as before). So is a call inside
a `try`, or inside a loop being unrolled path by path. What the caller knows of a
result it cannot see through the call (constants, Python containers) keeps the
call inline too: the frontend evaluates such values at compile time.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import NoneAttr, f64, i1, i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from dycl.diagnostics import FrontendError, SourceLoc
from dycl.dialects import dycl as d
from dycl.frontend.exceptions import PathEnded
from dycl.frontend.inplace import host_list, maybe_tensor
from dycl.frontend.state import is_state_key
from dycl.frontend.values import ModuleRef, SeqVal, Static, Value
from dycl.frontend.scopes import _Scope

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer

_PLAIN = (type(None), bool, int, float, str, torch.dtype, torch.device)
_SCALARS = (i64, f64, i1)
# Ops a standalone body must not hold: they read or change what lives outside the call.
_NOT_STANDALONE = (d.PyRegionOp, d.RaiseOp, d.SetAttrOp, d.GetAttrOp, d.ListAppendOp, d.MakeListOp,
                   d.TensorRegionOp, d.ReturnOp)
# Ops whose result a caller may look through (folding, `is None` tests, list reads).
_SEEN_THROUGH = (d.ConstantOp, arith.ConstantOp, d.MakeTupleOp, d.MakeListOp, d.ListGetOp, d.PyRegionOp, d.ItemOp,
                 d.ParamOp, d.GetAttrOp)


class Inline(Exception):
    """The call is translated where it is made."""


def _skeleton(v: Value, leaves: list[SSAValue], modules: bool = True) -> Any:
    """`v` with its run-time values taken out into `leaves` (they become the call's
    operands or results): a hashable shape, part of the specialisation's key."""
    if isinstance(v, SSAValue):
        leaves.append(v)
        return ("value",)
    if isinstance(v, Static) and _plain(v.value):
        return ("static", _typed(v.value))
    if isinstance(v, ModuleRef) and modules:
        return ("module", v.path, id(v.module))
    if type(v) is SeqVal and not v.is_list and v.argument is None and v.held_by is None:
        return ("tuple", tuple(_skeleton(x, leaves, modules) for x in v.items))
    raise Inline


def _rebuild(shape: Any, leaves: list[SSAValue], original: Value | None = None) -> Value:
    """The Value `shape` describes, its run-time values taken from `leaves` in order."""
    kind = shape[0]
    if kind == "value":
        return leaves.pop(0)
    if kind == "static":
        return Static(_untyped(shape[1]))
    if kind == "module":
        assert isinstance(original, ModuleRef)
        return original
    items = original.items if isinstance(original, SeqVal) else [None] * len(shape[1])
    return SeqVal([_rebuild(s, leaves, o) for s, o in zip(shape[1], items)])


def _plain(x: Any) -> bool:
    return isinstance(x, _PLAIN) or (type(x) is tuple and all(_plain(y) for y in x))


def _typed(x: Any) -> Any:
    """`1`, `1.0` and `True` are equal keys in Python; not here."""
    return tuple(_typed(y) for y in x) if type(x) is tuple else (type(x).__name__, x)


def _untyped(x: Any) -> Any:
    if len(x) == 2 and isinstance(x[0], str) and not isinstance(x[1], tuple):
        return x[1]
    return tuple(_untyped(y) for y in x)


@dataclass
class Outlined:
    """One helper's `func.func` for one specialisation, and how its result is rebuilt."""

    op: func.FuncOp
    result: Any  # the result's _skeleton (its compile-time parts are in it)


class OutlineLowering:
    """Mixin of Lowerer: helper calls as `func.call`s of their own `func.func`s."""

    def outline_call(self: Lowerer, function: Any, self_ref: Any, args: list[Value], kwargs: dict[str, Value],
                     node: ast.AST, inline: Callable[[list[Value], dict[str, Value]], Value]) -> Value:
        """`inline(args, kwargs)` translates the call's body where it is made; this calls
        it on block arguments instead, and makes that body a function when it is standalone."""
        try:
            key, leaves, shapes = self._outline_key(function, self_ref, args, kwargs)
        except Inline:
            return inline(args, kwargs)
        outlined = self.outlined.get(key)
        if outlined is None:
            if key in self.not_outlined:
                return inline(args, kwargs)
            try:
                outlined = self._outline(function, self_ref, leaves, shapes, args, kwargs, node, inline)
            except Inline:
                self.not_outlined.add(key)
                return inline(args, kwargs)
            self.outlined[key] = outlined
        call = self.emit(func.CallOp(outlined.op.sym_name.data, list(leaves),
                                     list(outlined.op.function_type.outputs)), node)
        return _rebuild(outlined.result, list(call.results))

    def _outline_key(self: Lowerer, function: Any, self_ref: Any, args: list[Value], kwargs: dict[str, Value]
                     ) -> tuple[Any, list[SSAValue], tuple[Any, Any]]:
        if not isinstance(self_ref, (ModuleRef, type(None))) or self.fn is None or self.try_stack or \
                self.budgets or self.strict_joins:
            raise Inline
        leaves: list[SSAValue] = []
        shapes = (tuple(_skeleton(a, leaves) for a in args),
                  tuple((k, _skeleton(v, leaves)) for k, v in sorted(kwargs.items())))
        for v in leaves:
            # What the caller knows of an argument and a block argument would not carry.
            if not (d.is_tensor_type(v.type) or v.type == d.ANY or v.type in _SCALARS) or \
                    isinstance(v.owner, (*_SEEN_THROUGH, d.GetItemOp)) or host_list(v) or \
                    v in self.named_tuples or v in self.tuple_fields or v in self.maybe_unbound or \
                    _may_hold_none(self, v, set()):
                raise Inline
        receiver = ("module", self_ref.path, id(self_ref.module)) if isinstance(self_ref, ModuleRef) else None
        key = (id(function), receiver, shapes, tuple(str(v.type) for v in leaves), self.grad_mode, self.grad_base,
               bool(self.loop_depth), self.in_run_time_loop())
        return key, leaves, shapes

    def _outline(self: Lowerer, function: Any, self_ref: ModuleRef | None, leaves: list[SSAValue],
                 shapes: tuple[Any, Any], args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                 inline: Callable[[list[Value], dict[str, Value]], Value]) -> Outlined:
        block = Block(arg_types=[v.type for v in leaves])
        params = list(block.args)
        inner_args = [_rebuild(s, params, a) for s, a in zip(shapes[0], args)]
        inner_kwargs = {k: _rebuild(s, params, kwargs[k]) for k, s in shapes[1]}
        # The body is translated as if nothing called it: no caller's names or module
        # state to update (a body that would is kept inline), and what it records of
        # itself is taken back if it is.
        caller = _Scope(env={k: v for k, v in self._call_scopes[-1].env.items() if is_state_key(k)}) \
            if self._call_scopes else _Scope(env={})
        state_before = dict(caller.env)
        saved_lowerer = _save(self)
        saved = self.block, self._call_scopes, self._caller_scopes, self._caller_if_depths
        self.block, self._call_scopes, self._caller_scopes, self._caller_if_depths = block, [caller], [], []
        try:
            try:
                result = inline(inner_args, inner_kwargs)
            finally:
                self.block, self._call_scopes, self._caller_scopes, self._caller_if_depths = saved
            outs: list[SSAValue] = []
            shape = _skeleton(result, outs, modules=False)
            if self.in_place_updates != saved_lowerer["in_place_updates"] or caller.env != state_before or \
                    _changed(self, saved_lowerer, _RECORDS):
                raise Inline
            if not outs:
                raise Inline  # (a result known at compile time: nothing to call)
            inside = _defined_in(block)
            if any(isinstance(op, _NOT_STANDALONE) for op in block.walk()) or \
                    any(o not in inside for op in block.walk() for o in op.operands):
                raise Inline
            claimed: set[SSAValue] = set()  # storages the results so far may view
            for v in outs:
                if v not in inside or isinstance(v, BlockArgument) or isinstance(v.owner, _SEEN_THROUGH) or \
                        v.type == d.PYOBJ or _may_hold_none(self, v, set()) or v in self.maybe_unbound or \
                        v in self.named_tuples or v in self.tuple_fields or host_list(v):
                    raise Inline
                roots = self.roots_of(v) if maybe_tensor(v) else set()
                if any(r not in inside or isinstance(r, BlockArgument) or isinstance(r.owner, _SEEN_THROUGH) or
                       r in self.outside_tensors for r in roots):
                    raise Inline  # a write through the result would reach an argument or a module tensor
                if roots & claimed:
                    raise Inline  # `return h, h.t()`: a write through one result changes the other
                claimed |= roots
        except (Inline, FrontendError, PathEnded) as e:
            _discard(block)
            _restore(self, saved_lowerer)
            raise Inline from e
        code = getattr(inspect.unwrap(function), "__code__", None)
        where = (SourceLoc(code.co_filename, code.co_firstlineno, 1) if code is not None else self._loc(node)).to_attr()
        block.add_op(ret := func.ReturnOp(*outs))
        ret.location = where
        name = self._outline_name(function, self_ref)
        op = func.FuncOp(name, ([a.type for a in block.args], [v.type for v in outs]), Region(block),
                         visibility="private")
        op.location = where
        self.outlined_funcs.append(op)
        return Outlined(op, shape)

    def _outline_name(self: Lowerer, function: Any, self_ref: ModuleRef | None) -> str:
        """`@b1.forward` (a submodule's method, by its path), `@Net._pool` (the model's own, a function)."""
        base = getattr(function, "__qualname__", None) or getattr(function, "__name__", "helper")
        if self_ref is not None and self_ref.path:
            base = f"{self_ref.path}.{getattr(function, '__name__', 'helper')}"
        base = base.replace("<locals>.", "").replace("<", "").replace(">", "")
        taken = {f.sym_name.data for f in self.outlined_funcs}
        name, k = base, 1
        while name in taken or name == "forward":
            k += 1
            name = f"{base}_{k}"
        return name


# What the frontend records of a call's effects: any change keeps the call inline.
_RECORDS = ("regions", "loops", "arguments_mutated", "written_attrs", "region_written", "state_owners", "state_reads", "_listed",
            "maybe_unbound", "outside_tensors", "python_held", "module_held", "unknown_writes", "outside_tensor_written")
# The frontend's own bookkeeping of the call being translated, and its results.
_NOT_SAVED = frozenset({"block", "fn", "model", "outlined", "not_outlined", "outlined_funcs", "_closure_functions",
                        "example_inputs",
                        "_call_scopes", "_caller_scopes", "_caller_if_depths"})


def _save(lowerer: Any) -> dict[str, Any]:
    """A copy of what translating a call may change on the Lowerer."""
    saved: dict[str, Any] = {}
    for name, v in vars(lowerer).items():
        if name in _NOT_SAVED:
            continue
        if isinstance(v, (list, set, dict)):
            saved[name] = (v, v.copy())
        elif v is None or isinstance(v, (bool, int, float, str)):
            saved[name] = v
    return saved


def _changed(lowerer: Any, saved: dict[str, Any], names: tuple[str, ...]) -> bool:
    for name in names:
        now, then = getattr(lowerer, name), saved.get(name)
        if isinstance(then, tuple) and then[0] is now:
            then = then[1]
        if now != then:
            return True
    return False


def _restore(lowerer: Any, saved: dict[str, Any]) -> None:
    """Undo a translation attempt's records (in place: other objects hold these containers)."""
    for name, v in saved.items():
        if isinstance(v, tuple):
            obj, copy = v
            if isinstance(obj, list):
                obj[:] = copy
            else:
                obj.clear()
                obj.update(copy)
            setattr(lowerer, name, obj)
        else:
            setattr(lowerer, name, v)


def _may_hold_none(lowerer: Any, v: SSAValue, seen: set[SSAValue]) -> bool:
    """Whether `v` may be None at run time, erring towards yes (Lowerer._may_be_none
    answers for an `is None` test and marks the regions it passes)."""
    if v in seen:
        return False
    seen.add(v)
    owner = v.owner
    if isinstance(owner, (d.PyRegionOp, d.GetItemOp, d.MakeTupleOp, d.ListGetOp)) or \
            (isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr)) or \
            (isinstance(owner, d.CallFunctionOp) and owner.target.data in ("builtins.getattr", "_operator.getitem")) or \
            v in lowerer._loop_entries:
        return True
    return any(_may_hold_none(lowerer, p, seen) for p in lowerer._sources(v))


def _defined_in(block: Block) -> set[SSAValue]:
    inside: set[SSAValue] = set(block.args)
    for op in block.walk():
        inside.update(op.results)
        for region in op.regions:
            for b in region.blocks:
                inside.update(b.args)
    return inside


def _discard(block: Block) -> None:
    for op in list(block.walk()):
        op.drop_all_references()



def used_functions(entry: func.FuncOp, functions: list[func.FuncOp]) -> list[func.FuncOp]:
    """The functions `entry` calls, directly or through each other (in `functions`' order);
    those of call sites the frontend dropped (a path translated again) are left out."""
    by_name = {f.sym_name.data: f for f in functions}
    used: set[str] = set()
    work = [entry]
    while work:
        for op in work.pop().walk():
            if isinstance(op, func.CallOp) and (name := op.callee.root_reference.data) not in used and \
                    name in by_name:
                used.add(name)
                work.append(by_name[name])
    return [f for f in functions if f.sym_name.data in used]
