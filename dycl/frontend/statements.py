"""Statements of the code being lowered: assignments (to names, attributes, items,
starred and nested targets), augmented assignments and in-place updates of
tensors with eager's aliasing, expression statements (`torch._assert`, appends to
lists), and the statements the frontend refuses."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from dycl.diagnostics import FrontendError
from dycl.dialects import dycl as d
from dycl.frontend.scopes import _Scope
from dycl.frontend.state import is_state_key, state_key
from dycl.frontend.inplace import bound_values, host_list, maybe_tensor, python_container, rebind, storage_root
from dycl.frontend.loops import InPlaceSharing
from dycl.frontend.loops import NeedsStatic
from dycl.frontend.values import PathDependent, DictVal, ExceptionVal, ObjectVal, GlobalRef, ModuleRef, SeqVal, Static, Value

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer

# Statements the frontend does not translate (they run as Python), and what they are called.
UNSUPPORTED_STMTS: dict[type[ast.stmt], str] = {
    ast.Try: "try/except",
    ast.With: "with statement",
    ast.AsyncWith: "async with",
    ast.AsyncFor: "async for",
    ast.AsyncFunctionDef: "nested async function",
    ast.ClassDef: "nested class definition",
    ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Delete: "del statement",
    ast.Import: "import statement",
    ast.ImportFrom: "import statement",
}


_AUG_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@", ast.FloorDiv: "//",
               ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


def _dotted_name(e: ast.expr, last: str) -> bool:
    """`torch._assert`, `_assert` for `last="_assert"`: a name or attributes of names ending
    in `last` (so that looking it up has no effect and other statements are not looked up)."""
    if (e.attr if isinstance(e, ast.Attribute) else getattr(e, "id", None)) != last:
        return False
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name)


class StatementLowering:
    """Mixin of Lowerer: statements."""

    def _stmt(self: Lowerer, s: ast.stmt, scope: _Scope) -> None:
        if isinstance(s, (ast.Global, ast.Nonlocal)) and self.fallback != "none":
            return  # the names are run-time state: their reads and writes become regions
        if isinstance(s, ast.FunctionDef):
            scope.env[s.name] = self._closure(s, s.args, s.decorator_list, scope)
            return
        if isinstance(s, ast.Delete) and all(isinstance(t, ast.Name) and t.id in scope.env for t in s.targets):
            # `del query, key` (the Annotated Transformer's attention): the names are unbound;
            # a later read is Python's UnboundLocalError, which the code run as Python raises.
            for t in s.targets:
                scope.env[t.id] = PathDependent(t.id, f"a read of '{t.id}' after 'del {t.id}'")
            return
        if type(s) in UNSUPPORTED_STMTS:
            raise self.unsupported(s, UNSUPPORTED_STMTS[type(s)])
        match s:
            case ast.Expr(value=ast.Constant()):
                return  # docstring or bare literal
            case ast.Expr(value=value):
                self._expr_stmt(value, scope)
            case ast.Pass():
                return
            case ast.Assign(targets=targets, value=value):
                v = self.expr(value, scope)
                for t in targets:
                    self._assign(t, v, scope)
            case ast.AnnAssign(target=target, value=value) if value is not None:
                self._assign(target, self.expr(value, scope), scope)
            case ast.AugAssign(target=target, op=op, value=value):
                load = ast.copy_location(
                    ast.Name(id=target.id, ctx=ast.Load()) if isinstance(target, ast.Name) else target, target
                )
                if isinstance(target, ast.Attribute):
                    # `self.steps += 1` on a number is `self.steps = self.steps + 1` (on a tensor, in place).
                    owner = self.expr(target.value, scope)
                    old = self.expr(load, scope) if isinstance(owner, ModuleRef) else None
                    if old is not None and not maybe_tensor(old) and not isinstance(old, SeqVal):
                        self._assign(target, self._binop(op, old, self.expr(value, scope), s), scope)
                        return
                    if isinstance(old, SSAValue) and maybe_tensor(old) and \
                            scope.env.get(state_key(owner.module, target.attr)) is old:  # type: ignore[union-attr]
                        # a tensor of module state, updated in place (`self.count += 1`)
                        v = self._binop(op, old, self.expr(value, scope), s)
                        if isinstance(v, SSAValue):
                            v = self.call_function("dycl.tensor_ops.inplace_result", [v, old], {}, s)
                            self._update_in_place(ast.unparse(target), old, v, scope, s)
                            return
                    if isinstance(old, SSAValue) and isinstance(old.owner, d.ParamOp):
                        self.buffers_written([old.owner.path.data])  # `self.count += 1` on a buffer: state
                if isinstance(target, ast.Subscript) and isinstance(target.value, (ast.Name, ast.Attribute)):
                    # `z[i] += v`: z[i] is read, updated and written back (`z[i] = z[i] + v`).
                    base = scope.env.get(target.value.id) if isinstance(target.value, ast.Name) else \
                        self.read_state(owner, target.value.attr, scope, target.value) if isinstance(
                            owner := self.expr(target.value.value, scope), ModuleRef) else None
                    if isinstance(base, SSAValue) and maybe_tensor(base):
                        current, rhs = self.expr(load, scope), self.expr(value, scope)
                        self._refuse_overlapping_source(base, rhs, s)
                        v = self._binop(op, current, rhs, s)
                        if self._assign_tensor_item(target, v, scope):
                            return
                if not isinstance(target, ast.Name):
                    raise self.unsupported(s, "augmented assignment to an attribute or item (in-place mutation)")
                old = self.expr(load, scope)
                if isinstance(old, SeqVal) and old.is_list and not isinstance(old, DictVal) and \
                        isinstance(op, (ast.Add, ast.Mult)):
                    # `l += [...]`, `l *= 2` change the list itself: every name bound to it sees it
                    other = self.expr(value, scope)
                    if old.held_by is not None:
                        raise self.unsupported(s, f"'+=' on {old.held_by}, a module container")
                    if old.argument is not None:
                        self.note_argument_mutated(old, s)
                    if isinstance(op, ast.Add) and (more := self.iter_items(other, s)) is not None:
                        old.items.extend(more)
                        return
                    if isinstance(op, ast.Mult) and isinstance(other, Static) and type(other.value) is int:
                        old.items[:] = old.items * max(other.value, 0)
                        return
                    raise self.unsupported(s, "list += or *= with a value known only at run time")
                v = self._binop(op, old, self.expr(value, scope), s)
                if maybe_tensor(old) and isinstance(v, SSAValue):
                    # in place: old's dtype (acc int32 += int64 stays int32), or eager's error
                    v = self.call_function("dycl.tensor_ops.inplace_result", [v, old], {}, s)
                    self._update_in_place(target.id, old, v, scope, s)  # type: ignore[arg-type]
                self._assign(target, v, scope)
            case ast.If():
                self._if(s, scope)
            case ast.While():
                self.lower_while(s, [], scope)
            case ast.Return(value=value):
                v = Static(None) if value is None else self.expr(value, scope)
                self._emit_return(scope, v, s, top=False)
            case ast.Break():
                self.lower_break(s, scope)
            case ast.Continue():
                raise self.unsupported(s, "continue outside a loop")
            case ast.Assert(test=test, msg=msg):
                v = self.truth(test, scope)
                if isinstance(v, Static):
                    if not v.value:
                        raise self.error(s, "assertion is always false for this model")
                    return
                # A host check: the failing path raises AssertionError(msg), as eager does.
                self._branch(self.to_bool(v, test), [], [], scope, s, then_fn=lambda sub: None,
                             else_fn=lambda sub: self.raise_exception(
                                 ExceptionVal(AssertionError, [] if msg is None else [self.expr(msg, sub)]), sub, s))
            case ast.Raise():
                self.lower_raise(s, scope)
            case _:
                raise self.unsupported(s, type(s).__name__)

    def _update_in_place(self: Lowerer, name: str, old: SSAValue, new: SSAValue, scope: _Scope, node: ast.AST) -> None:
        """`name op= e` on a tensor: every name holding the tensor, here or in a caller, sees `new`."""
        self.in_place_updates += 1
        envs = [scope.env] + [sc.env for sc in self._caller_scopes]
        for sc, depth in zip(self._caller_scopes, self._caller_if_depths):
            # A caller's name cannot be rebound to a value made inside a branch below its
            # call: that branch's join merges the callee's names only.
            if sc is not scope and depth < self._if_depth and any(w is old for _, w in bound_values(sc.env)):
                raise self.unsupported(node, f"in-place update of '{name}' inside a branch while the calling code "
                                             "holds the same tensor")

        def unsupported(text: str) -> None:
            raise self.unsupported(node, text)

        def unroll(text: str) -> None:
            raise InPlaceSharing(text)

        def refuse(roots_of: Any, fail: Any) -> None:
            roots = roots_of(old)
            if roots & self._listed or any(isinstance(r.owner, d.ListGetOp) for r in roots):
                # the list holds the very tensor (eager's element changes too); the IR's holds a value
                fail(f"in-place update of '{name}', a tensor a list held at run time also holds")
            for env in envs:
                for other, w in bound_values(env):
                    if w is not old and maybe_tensor(w) and roots & roots_of(w):
                        if other in self.state_owners:
                            path, attr, _ = self.state_owners[other]
                            other = f"self.{path + '.' if path else ''}{attr}"
                        symbol = _AUG_SYMBOL.get(type(getattr(node, 'op', None)), '+')  # type: ignore[attr-defined]
                        if fail is unroll:
                            fail(f"in-place update of '{name}' in a loop body while '{other}' shares its storage at "
                                 f"loop entry; write `{name} = {name} + ...` (not `+=`) in the loop, or clone the "
                                 "tensor before it")
                        fail(f"in-place update of '{name}', which shares its storage with '{other}' (a view, or the "
                             f"same tensor on some paths only); write `{name} = {name} {symbol} ...` instead")
            if any(isinstance(r, BlockArgument) and r.owner is self._entry for r in roots):
                fail(f"in-place update of the input '{name}' (the caller's tensor changes too)")
            if roots & self.outside_tensors:
                # (`G.add_(1)` on a global, a default argument: eager's object changes for later calls)
                self.outside_tensor_written = f"in-place update of '{name}' at {self._loc(node)}"
                fail(f"in-place update of '{name}', a tensor held outside the model")
            if roots & self.python_held:
                # (`m = self.mems[-1]` run as Python, then `m.add_(x)`: the list's tensor changes)
                fail(f"in-place update of '{name}', a tensor Python code gave that an object "
                                             "(the module, a list) may also hold")
            if any(isinstance(r.owner, d.ParamOp) for r in roots):
                # (`b = self.buf; b.add_(x)`, `self.buf.view(3)[0] = v`: the module's own tensor changes)
                self.buffers_written([r.owner.path.data for r in roots if isinstance(r.owner, d.ParamOp)])
                fail(f"in-place update of '{name}', a module parameter or buffer or a view of one")

        refuse(self.plain_roots_of, unsupported)
        if self.loops:
            # In a loop being lowered the carried value is first what enters the loop:
            # sharing only with that (the caller's input, `same = h` before the loop)
            # asks for the loop unrolled, where each update is seen as what it is.
            refuse(self.roots_of, unroll)
        # Module state holding the tensor itself (`b = self.buf; b.add_(x)`) is stored too.
        held = list(dict.fromkeys(k for env in envs for k, w in env.items() if is_state_key(k) and w is old))
        if any(is_state_key(k) and k not in held for env in envs for k, w in bound_values(env) if w is old) or \
                any(k not in self.state_owners for k in held):
            raise self.unsupported(node, f"in-place update of '{name}', which a module attribute also holds")
        for env in envs:
            rebind(env, old, new)
        for k in held:
            self.store_state_in_place(k, new, old, node)

    def _expr_stmt(self: Lowerer, value: ast.expr, scope: _Scope) -> None:
        if (check := self._torch_assert(value, scope)) is not None:
            self._lower_body([check], scope)  # `torch._assert(c, msg)` is `if not c: raise AssertionError(msg)`
            return
        # `seq.append(x)` on a Python list grows it at compile time.
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("append", "extend"):
            target = self.expr(value.func.value, scope)
            if isinstance(target, SeqVal):
                self.check_not_one_of_several(target, scope, value)
                if target.held_by is not None:
                    raise self.unsupported(value, f"'{value.func.attr}' on {target.held_by}, a module container")
            if isinstance(target, SeqVal) and target.is_list:
                if target.argument is not None:
                    self.note_argument_mutated(target, value)
                arg = self.expr(value.args[0], scope)
                if value.func.attr == "append":
                    target.items.append(arg)
                elif isinstance(arg, SeqVal):
                    target.items.extend(arg.items)
                else:
                    raise self.unsupported(value, "list.extend with a run-time value")
                return
            if isinstance(target, SSAValue) and isinstance(target.type, d.ListType) and len(value.args) == 1 \
                    and not value.keywords:
                arg = self.expr(value.args[0], scope)
                if value.func.attr == "extend" and not isinstance(arg, SeqVal):
                    raise self.unsupported(value, "extending a list held at run time by a run-time sequence")
                for item in arg.items if value.func.attr == "extend" else [arg]:  # type: ignore[union-attr]
                    target = self._append_to_held_list(target, item, scope, value)
                return
        self.expr(value, scope)

    def _torch_assert(self: Lowerer, value: ast.expr, scope: _Scope) -> ast.Assert | None:
        """`torch._assert(cond, message)` as the `assert` statement it wraps (an op would be dropped unused)."""
        if not (isinstance(value, ast.Call) and _dotted_name(value.func, "_assert")
                and not any(isinstance(a, ast.Starred) for a in value.args) and all(k.arg for k in value.keywords)):
            return None  # (only `..._assert` is looked up: `a.mul_(2).add_` would run `mul_` twice)
        try:
            target = self.expr(value.func, scope)
        except FrontendError:
            return None
        if not (isinstance(target, GlobalRef) and target.obj is torch._assert):
            return None
        given = dict(zip(("condition", "message"), value.args)) | {k.arg: k.value for k in value.keywords}
        if set(given) != {"condition", "message"} or len(value.args) + len(value.keywords) != 2:
            return None  # (eager's TypeError: run as Python)
        return ast.copy_location(ast.Assert(test=given["condition"], msg=given["message"]), value)

    def check_not_one_of_several(self: Lowerer, seq: SeqVal, scope: _Scope, node: ast.AST) -> None:
        """`l = a if c else b; l.append(x)`: Python changes a or b, the compile-time list
        `l` is neither; while another name still holds one of them, this is refused
        (inside a loop, which is then unrolled or run as Python whole)."""
        if self.one_of_several(seq, scope):
            if self.loop_depth:
                raise NeedsStatic
            raise self.unsupported(node, "changing a list that is one of several lists, picked at run time")

    def held_elsewhere(self: Lowerer, seq: SeqVal, name: str, envs: list[dict[str, Value]]) -> bool:
        """Another name or a container (this function's or a caller's) holds the list
        `name` holds (the same Python object)."""
        stack: list[tuple[str | None, Value]] = [(k, v) for env in envs for k, v in env.items()]
        seen: set[int] = set()
        while stack:
            k, v = stack.pop()
            if isinstance(v, SeqVal):
                if v.origin is seq.origin and k != name:
                    return True
                if id(v) not in seen:
                    seen.add(id(v))
                    stack.extend((None, x) for x in v.items)
        return False

    def one_of_several(self: Lowerer, seq: SeqVal, scope: _Scope) -> bool:
        """`seq` is a join of lists (`a if c else b`) one of which another name holds."""
        if not seq.sources:
            return False
        stack = [v for env in [scope.env] + [sc.env for sc in self._caller_scopes] for v in env.values()]
        seen: set[int] = set()
        while stack:
            v = stack.pop()
            if isinstance(v, SeqVal) and id(v) not in seen:
                seen.add(id(v))
                if v is not seq and (v.origin in seq.sources or v.sources & seq.sources):
                    return True
                stack.extend(v.items)
        return False

    def _append_to_held_list(self: Lowerer, old: SSAValue, item: Value, scope: _Scope, node: ast.AST) -> SSAValue:
        """`tokens.append(t)` on a list the host holds: every name holding the list
        (here or in a caller, also inside tuples) now holds the longer one."""
        for sc, depth in zip(self._caller_scopes, self._caller_if_depths):
            if sc is not scope and depth < self._if_depth and any(w is old for _, w in bound_values(sc.env)):
                raise self.unsupported(node, "appending inside a branch to a list the calling code holds")
        value = self.materialize(item, node)
        if value.type == d.PYOBJ or isinstance(value.type, d.ListType):
            raise self.unsupported(node, "a list of Python objects or lists held at run time")
        if maybe_tensor(value):
            self._listed |= self.roots_of(value)
        new = self.emit(d.ListAppendOp(old, value), node).result
        for env in [scope.env] + [sc.env for sc in self._caller_scopes]:
            rebind(env, old, new)
        return new

    @staticmethod
    def _attribute_write(owner: Value, attr: str) -> str:
        """What an attribute assignment the frontend leaves to Python changes."""
        if isinstance(owner, ModuleRef):
            return f"assignment to the attribute '{attr}' of module '{owner.path or 'self'}' " \
                   "(in-place mutation of the model)"
        obj = getattr(owner, "obj", None)
        if obj is not None:
            return f"assignment to the attribute '{attr}' of a {type(obj).__name__} object (a Python object changed in place)"
        return f"assignment to the attribute '{attr}' of a value known only at run time"

    def _assign(self: Lowerer, target: ast.expr, v: Value, scope: _Scope) -> None:
        match target:
            case ast.Name(id=name) if self.fn is not None and name in self.fn.declared_global:
                raise self.unsupported(target, f"assignment to the global variable '{name}'")
            case ast.Name(id=name):
                if isinstance(v, SSAValue) and v.name_hint is None and name.isidentifier():
                    v.name_hint = name
                scope.env[name] = v
            case ast.Tuple(elts=elts) | ast.List(elts=elts) if any(isinstance(t, ast.Starred) for t in elts):
                self._assign_starred(elts, v, scope, target)
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                items = self._unpack(v, len(elts), target)
                for t, item in zip(elts, items):
                    self._assign(t, item, scope)
            case ast.Attribute(value=base, attr=attr) if isinstance(owner := self.expr(base, scope), ExceptionVal):
                owner.attrs[attr] = v  # an exception's __init__ storing its payload
            case ast.Attribute(value=base, attr=attr) if isinstance(owner := self.expr(base, scope), ObjectVal):
                if getattr(owner.cls, "__dataclass_params__").frozen:
                    raise self.error(target, f"cannot assign to field '{attr}' of a frozen {owner.cls.__name__}")
                if owner.probe is not None:
                    # its own __setattr__ or __post_init__ may act on the value: the host's object does
                    raise self.unsupported(target, f"assignment to a field of a {owner.cls.__name__} object")
                owner.set(attr, v)
            case ast.Attribute(value=base, attr=attr) if isinstance(owner := self.expr(base, scope), ModuleRef) and \
                    self.store_state(owner, attr, v, scope, target):
                return
            case ast.Attribute(value=base, attr=attr):
                raise self.unsupported(target, self._attribute_write(self.expr(base, scope), attr))
            case ast.Subscript() if self.assign_item(target, v, scope) or self._assign_tensor_item(target, v, scope):
                return
            case ast.Subscript(value=base):
                held = self.expr(base, scope)
                if isinstance(held, SSAValue) and maybe_tensor(held) and held.type != d.PYOBJ:
                    raise self.unsupported(target, "item assignment (in-place tensor mutation)")
                what = "a dict or list that differs between the paths into this point (keys or length)" \
                    if isinstance(held, PathDependent) or isinstance(held, SSAValue) and isinstance(
                        held.owner, (d.IfOp, d.ForOp, d.WhileOp)) else \
                    "a Python object known only at run time" if isinstance(held, SSAValue) else f"a {type(held).__name__}"
                raise self.unsupported(target, f"item assignment to {what}")
            case _:
                raise self.unsupported(target, f"assignment target {type(target).__name__}")

    def _assign_tensor_item(self: Lowerer, target: ast.Subscript, v: Value, scope: _Scope) -> bool:
        """`t[i] = v` (a mask, slices, indices) on a tensor named `t`: `t` and every name
        holding it now hold the updated copy, as for `t += ...`; a view, an input or a
        module's tensor is refused (its base, the caller or the module would change too)."""
        if isinstance(target.value, ast.Attribute) and isinstance(owner := self.expr(target.value.value, scope), ModuleRef):
            # `self.buf[i] = v` on a tensor of module state: stored in place
            name = ast.unparse(target.value)
            base = self.read_state(owner, target.value.attr, scope, target.value)
            if base is None and target.value.attr in owner.module._buffers:
                self.buffers_written([f"{owner.path}.{target.value.attr}".lstrip(".")])
            if not isinstance(base, SSAValue) or not maybe_tensor(base):
                return False
        elif isinstance(target.value, ast.Name):
            name = target.value.id
            base = scope.env.get(name)
            if not isinstance(base, SSAValue) or not maybe_tensor(base):
                return False
        else:
            return False
        self._refuse_overlapping_source(base, v, target)
        index = self._index(target.slice, scope)
        new = self.call_function("dycl.tensor_ops.setitem", [base, index, v], {}, target)
        assert isinstance(new, SSAValue)
        self._update_in_place(name, base, new, scope, target)
        if isinstance(target.value, ast.Name):
            scope.env[name] = new
        return True

    def _refuse_overlapping_source(self: Lowerer, base: SSAValue, v: Value, node: ast.AST) -> None:
        """`y[:, 1:] += y[:, :-1]`, `y[1:] = y[:-1]`: eager updates in place from a view
        of the same tensor, reading elements it already wrote (in its kernel's order),
        or raises for some shapes; the compiled program would read the old values."""
        if isinstance(v, SSAValue) and maybe_tensor(v) and not python_container(base) and \
                storage_root(v, self.model) is not v and \
                self.roots_of(v) & self.roots_of(base):
            raise self.unsupported(node, "an in-place update from a view of the same tensor (the two may overlap)")

    def on_cpu(self: Lowerer) -> bool:
        """No example input is on the GPU: the tensors forward makes are CPU tensors."""
        return self._on_cpu

    def note_argument_mutated(self: Lowerer, seq: SeqVal, node: ast.AST) -> None:
        """forward changes a list or dict the caller passed (`feats.append(x)`): the caller
        sees that in eager, so calls run the model itself (see CompiledModel)."""
        self.arguments_mutated.add(f"{seq.argument} ({self._loc(node)})")

    def _structured(self: Lowerer, v: SSAValue, shape: Any, node: ast.AST) -> Value:
        """A leaf module's result as the tuples eager returns (`out, (h, c)` of an
        LSTM), so `isinstance(h, tuple)` and unpacking are known at compile time."""
        if shape is None:
            return v
        return SeqVal([self._structured(self.emit(d.GetItemOp(v, i), node).results[0], sub, node)
                       for i, sub in enumerate(shape)])

    def _assign_starred(self: Lowerer, elts: list[ast.expr], v: Value, scope: _Scope, node: ast.AST) -> None:
        """`b, *rest = x.shape`, `first, *mid, last = rows`: the starred name gets a list."""
        k = next(i for i, t in enumerate(elts) if isinstance(t, ast.Starred))
        if sum(isinstance(t, ast.Starred) for t in elts) > 1:
            raise self.error(node, "multiple starred expressions in assignment")
        length = self._static_length(v)
        if length is None:
            raise self.unsupported(node, "starred assignment (`a, *rest = ...`) of a value whose length only the "
                                         "run time knows")
        fixed = len(elts) - 1
        if length < fixed:
            raise self.error(node, f"ValueError: not enough values to unpack (expected at least {fixed}, got {length})")
        items = self._unpack(v, length, node)
        after = length - (fixed - k)
        for t, item in zip(elts[:k], items[:k]):
            self._assign(t, item, scope)
        self._assign(elts[k].value, SeqVal(list(items[k:after]), True), scope)  # type: ignore[attr-defined]
        for t, item in zip(elts[k + 1:], items[after:]):
            self._assign(t, item, scope)

    @staticmethod
    def _static_length(v: Value) -> int | None:
        if isinstance(v, SeqVal):
            return len(v.keys) if isinstance(v, DictVal) else len(v.items)
        if isinstance(v, Static) and isinstance(v.value, (tuple, list, torch.Size)):
            return len(v.value)
        if isinstance(v, SSAValue) and isinstance(v.type, TensorType) and (shape := v.type.get_shape()) and \
                shape[0] >= 0:  # type: ignore[attr-defined]
            return shape[0]
        return None

    def _unpack(self: Lowerer, v: Value, n: int, node: ast.AST) -> list[Value]:
        if isinstance(v, DictVal):
            v = SeqVal([Static(k) for k in v.keys])
        if isinstance(v, SeqVal):
            if len(v.items) != n:
                raise self.error(node, f"cannot unpack {len(v.items)} values into {n} names")
            return list(v.items)
        if isinstance(v, Static) and isinstance(v.value, (tuple, list, torch.Size)):
            if len(v.value) != n:
                raise self.error(node, f"cannot unpack {len(v.value)} values into {n} names")
            return [Static(x) for x in v.value]
        if isinstance(v, SSAValue) and isinstance(v.type, TensorType):  # `a, b = x`: x's rows
            shape = v.type.get_shape()  # type: ignore[attr-defined]
            if not shape:
                raise self.error(node, "iteration over a 0-d tensor")
            if shape[0] >= 0 and shape[0] != n:
                raise self.error(node, f"cannot unpack {shape[0]} rows into {n} names")
            return [self.call_function("_operator.getitem", [v, Static(i)], {}, node) for i in range(n)]
        if isinstance(v, SSAValue) and host_list(v):
            # a list whose length only the run time knows (`[int(v) for v in t.tolist()]`,
            # `a, b = x.nonzero()[:, 0].tolist()`): eager's ValueError for another length
            v = self.call_function("dycl.tensor_ops.unpack", [v, Static(n)], {}, node)
        if isinstance(v, SSAValue):
            return [self.emit(d.GetItemOp(v, i), node).results[0] for i in range(n)]
        raise self.error(node, "cannot unpack this value")
