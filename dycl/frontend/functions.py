"""Calls of Python functions in the code being lowered: helper methods, module-level
functions, `@staticmethod`/`@classmethod` helpers, nested functions and lambdas
(closures), each a function of its own where its body translates on its own
(outlining.py), else inlined; parameter binding with defaults, `*args`, `**kwargs` and
keyword-only parameters; `torch.cond(pred, f, g, operands)` as an `if`."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from dycl.diagnostics import FrontendError
from dycl.frontend.exceptions import PathEnded
from dycl.frontend.restructure import always_exits, lift_loop_returns, restructure
from dycl.frontend.state import sync_state
from dycl.grad_modes import compose
from dycl.frontend.values import Closure, DictVal, ModuleRef, ObjectRef, SeqVal, Static, Value

# A recursive helper is inlined while its depth is known at compile time (a tree
# given as nested tuples); deeper, its depth is taken to depend on run-time values.
MAX_RECURSION = 8

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Function, _Scope


class FunctionLowering:
    """Mixin of Lowerer: inlining calls of Python functions."""

    def _closure(self: Lowerer, node: ast.FunctionDef | ast.Lambda, args: ast.arguments, decorators: list[ast.expr],
                 scope: _Scope) -> Closure:
        if decorators:
            raise self.unsupported(node, "decorated nested function")
        defaults = tuple(self.expr(x, scope) for x in args.defaults)
        kw_defaults = tuple(None if x is None else self.expr(x, scope) for x in args.kw_defaults)
        return Closure(node, self.fn, scope, defaults, kw_defaults)

    def bind_params(self: Lowerer, a: ast.arguments, args: list[Value], kwargs: dict[str, Value],
                    default: Callable[[int], Value], kw_default: Callable[[int], Value | None], qualname: str,
                    node: ast.AST) -> dict[str, Value]:
        """Python's argument binding; `default(i)` / `kw_default(j)` give the i-th
        positional / j-th keyword-only default when it is needed."""
        positional = [x.arg for x in (*a.posonlyargs, *a.args)]
        kwonly = [x.arg for x in a.kwonlyargs]
        env: dict[str, Value] = dict(zip(positional, args))
        extra_pos = list(args[len(positional):])
        if extra_pos and a.vararg is None:
            raise self.error(node, f"'{qualname}' takes {len(positional)} positional arguments, got {len(args)}")
        if a.vararg is not None:
            env[a.vararg.arg] = SeqVal(extra_pos) if any(not isinstance(x, Static) for x in extra_pos) else Static(
                tuple(x.value for x in extra_pos))  # type: ignore[union-attr]
        extra_kw = DictVal()
        posonly = {x.arg for x in a.posonlyargs}
        for k, v in kwargs.items():
            if (k in positional and k not in posonly) or k in kwonly:
                if k in env:
                    raise self.error(node, f"'{qualname}' got multiple values for argument '{k}'")
                env[k] = v
            elif a.kwarg is not None:
                extra_kw.set(k, v)
            else:
                raise self.error(node, f"'{qualname}' has no parameter '{k}'")
        first_default = len(positional) - len(a.defaults)
        for i, n in enumerate(positional):
            if n not in env:
                if i < first_default:
                    raise self.error(node, f"'{qualname}' is missing argument '{n}'")
                env[n] = default(i - first_default)
        for j, n in enumerate(kwonly):
            if n not in env:
                value = kw_default(j)
                if value is None:
                    raise self.error(node, f"'{qualname}' is missing keyword argument '{n}'")
                env[n] = value
        if a.kwarg is not None:
            env[a.kwarg.arg] = extra_kw
        return env

    def _inline(self: Lowerer, function: Any, self_ref: Any, args: list[Value], kwargs: dict[str, Value],
                node: ast.AST) -> Value:
        """Call a Python function; `self_ref` (a module, or a class for a classmethod)
        is bound to its first parameter. A standalone body becomes a `func.func` of
        its own (see outlining.py), others are translated here."""
        return self.outline_call(function, self_ref, args, kwargs, node,
                                 lambda a, k: self._inline_here(function, self_ref, a, k, node))

    def _inline_here(self: Lowerer, function: Any, self_ref: Any, args: list[Value], kwargs: dict[str, Value],
                     node: ast.AST) -> Value:
        path = self_ref.path if isinstance(self_ref, ModuleRef) else ""
        key = f"{getattr(function, '__qualname__', function)}@{path}"
        if self._inline_stack.count(key) >= MAX_RECURSION:
            raise self.unsupported(node, f"recursive call of {getattr(function, '__qualname__', function)} more than "
                                         f"{MAX_RECURSION} deep at compile time (its depth depends on run-time values)")
        owner = type(self_ref.module).__name__ if isinstance(self_ref, ModuleRef) else getattr(function, "__module__", "")
        tree, fn = self._parse(function, owner, inline=True)
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            raise self.unsupported(node, "calling a non-function")
        if _is_generator(fdef):  # its body's `yield` is not a statement of its own: the call runs as Python
            raise self.unsupported(node, f"calling the generator function {fn.qualname} (yield)")
        if self_ref is not None:
            args = [self_ref, *args]
        defaults = fdef.args.defaults
        kw_defaults = fdef.args.kw_defaults

        held = _default_objects(function, self_ref)

        def default(i: int) -> Value:
            if i - len(defaults) + len(held) in range(len(held)) and (ref := held[i - len(defaults) + len(held)]):
                return ref  # `cache=[]`: one list for every call, changed by the calls (state)
            return self._in_function(fn, lambda: self.expr(defaults[i], self._new_scope({})))

        def kw_default(j: int) -> Value | None:
            x = kw_defaults[j]
            return None if x is None else self._in_function(fn, lambda: self.expr(x, self._new_scope({})))

        env = self.bind_params(fdef.args, args, kwargs, default, kw_default, fn.qualname, node)
        return self._inline_body(fn, fdef.body, env, key, node)

    def _call_closure(self: Lowerer, c: Closure, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                      scope: _Scope) -> Value:
        fdef = c.node
        key = f"closure@{id(fdef)}"
        if self._inline_stack.count(key) >= MAX_RECURSION:
            raise self.unsupported(node, f"recursive call of the nested function '{c.name}' more than {MAX_RECURSION} "
                                         "deep at compile time (its depth depends on run-time values)")
        if any(isinstance(n, (ast.Nonlocal, ast.Global)) for n in ast.walk(fdef)):
            raise self.unsupported(node, f"nested function '{c.name}' that rebinds an outer name (nonlocal/global)")
        if isinstance(fdef, ast.FunctionDef) and _is_generator(fdef):
            raise self.unsupported(node, f"calling the generator function '{c.name}' (yield)")
        fn = dataclasses.replace(c.fn, qualname=f"{c.fn.qualname}.<locals>.{c.name}", inline=True)
        params = self.bind_params(fdef.args, args, kwargs, lambda i: c.defaults[i], lambda j: c.kw_defaults[j],
                                  fn.qualname, node)
        # Free names: the caller's current bindings when called where it was defined.
        outer = scope.env if self.fn is c.fn else c.scope.env
        own = {n: c.scope.env[n] for n in c.scope.comp_names if n in c.scope.env}  # made in a comprehension
        body = fdef.body if isinstance(fdef, ast.FunctionDef) else [
            ast.copy_location(ast.Return(value=fdef.body), fdef.body)]
        # A function of its parameters and of the free names it reads (outlining.py).
        free = sorted({n.id for st in body for n in ast.walk(st) if isinstance(n, ast.Name) and
                       isinstance(n.ctx, ast.Load)} & (set(outer) | set(own)) - set(params))
        names = [*params, *free]
        values = [*params.values(), *({**outer, **own}[n] for n in free)]

        def here(given: list[Value], _: dict[str, Value]) -> Value:
            return self._inline_body(fn, body, {**outer, **own, **dict(zip(names, given))}, key, node)
        return self.outline_call(self._closure_function(fdef, fn.qualname), None, values, {}, node, here)

    def _closure_function(self: Lowerer, fdef: ast.AST, qualname: str) -> Any:
        """What stands for a nested function in outlining's keys and names: one per
        definition (held, so that its id is never another's)."""
        held = self._closure_functions.get(id(fdef))
        if held is None:
            held = self._closure_functions[id(fdef)] = (fdef, _NestedFunction(qualname.replace("<lambda>", "lambda")))
        return held[1]

    def _inline_body(self: Lowerer, fn: _Function, stmts: list[ast.stmt], env: dict[str, Value], key: str,
                     node: ast.AST) -> Value:
        saved = self.fn, self.loop_depth, self._fn_body, self.grad_base
        caller = self._call_scopes[-1] if self._call_scopes else None
        if caller is not None:
            sync_state(env, caller.env)  # the module state as the call finds it
        call_site = f"{self._loc(node)} (in function '{self.fn.qualname}')" if self.fn is not None else None
        self._inline_stack.append(key)
        try:
            self.fn = fn
            self.grad_base = compose(self.grad_mode, fn.grad_mode)  # (a decorator's switches inside the call's mode)
            scope = self._new_scope(env)
            # An early exit from a loop is a `break` and a return after the loop; falling
            # off the end is `return None`, so that every path of the body returns.
            body = list(stmts)
            if not always_exits(body):
                body.append(ast.copy_location(ast.Return(value=None), body[-1]))
            self._fn_body = restructure(lift_loop_returns(body), (ast.Return,))
            self._lower_body(self._fn_body, scope)
            if scope.raised and not scope.returned:
                raise PathEnded  # every path of the call raised: so does the caller's statement
            if caller is not None:
                sync_state(caller.env, scope.env)  # and as the call leaves it
            return scope.returned[-1] if scope.returned else Static(None)
        except FrontendError as e:
            if call_site is not None:
                e.called_from(call_site)  # an error in library code names the user's line that led there
            raise
        finally:
            self._inline_stack.pop()
            self.fn, self.loop_depth, self._fn_body, self.grad_base = saved

    def _in_function(self: Lowerer, fn: _Function, run: Callable[[], Value]) -> Value:
        saved = self.fn
        self.fn = fn
        try:
            return run()
        finally:
            self.fn = saved

    def static_method_call(self: Lowerer, recv: ModuleRef, name: str, args: list[Value], kwargs: dict[str, Value],
                           node: ast.AST) -> Value | None:
        """`self.helper(x)` where `helper` is a @staticmethod or @classmethod."""
        from dycl.frontend.values import GlobalRef, qualname_of

        raw = inspect.getattr_static(type(recv.module), name, None)
        if isinstance(raw, staticmethod):
            return self._inline(raw.__func__, None, args, kwargs, node)
        if isinstance(raw, classmethod):
            cls = type(recv.module)
            return self._inline(raw.__func__, GlobalRef(qualname_of(cls) or cls.__qualname__, cls), args, kwargs, node)
        return None

    def call_cond(self: Lowerer, args: list[Value], kwargs: dict[str, Value], node: ast.AST, scope: _Scope) -> Value:
        """`torch.cond(pred, true_fn, false_fn, operands)`: an `if` calling one of them."""
        names = ["pred", "true_fn", "false_fn", "operands"]
        bound = dict(zip(names, args)) | kwargs
        if set(bound) - set(names) or len(bound) < 3:
            raise self.error(node, "torch.cond takes (pred, true_fn, false_fn, operands)")
        operands = self.iter_items(bound.get("operands", Static(())), node)
        if operands is None:
            raise self.unsupported(node, "torch.cond operands that are not a tuple or list")
        pred = bound["pred"]
        if isinstance(pred, Static):
            return self.call_value(bound["true_fn" if pred.value else "false_fn"], operands, {}, node, scope)
        outer = self._new_scope(dict(scope.env))
        outer.env["$v"] = Static(None)

        def branch(which: str) -> Callable[[_Scope], None]:
            def run(sub: _Scope) -> None:
                sub.env["$v"] = self.call_value(bound[which], operands, {}, node, sub)
            return run

        self._branch(self.to_bool(pred, node), [], [], outer, node, then_fn=branch("true_fn"), else_fn=branch("false_fn"))
        sync_state(scope.env, outer.env)
        return outer.env["$v"]


def _default_objects(function: Any, self_ref: Any) -> list[Any]:
    """Per positional default of `function`: an ObjectRef where it is a mutable object
    (a list, dict, set or tensor: the same object on every call, as eager's), else None."""
    values = getattr(function, "__defaults__", None) or ()
    if not any(isinstance(v, (list, dict, set, torch.Tensor)) for v in values):
        return [None] * len(values)
    name = getattr(function, "__name__", "")
    if isinstance(self_ref, ModuleRef):
        root = "__dycl_root" if not self_ref.path else f"__dycl_root.get_submodule({self_ref.path!r})"
        if getattr(type(self_ref.module), name, None) is not function:
            return [None] * len(values)
        where = f"type({root}).{name}"
    elif "<" not in getattr(function, "__qualname__", "<"):
        where = f"__import__({function.__module__!r}, fromlist=['_']).{function.__qualname__}"
    else:
        return [None] * len(values)
    return [ObjectRef(f"{where}.__defaults__[{k}]", v) if isinstance(v, (list, dict, set, torch.Tensor)) else None
            for k, v in enumerate(values)]


def _is_generator(fdef: ast.FunctionDef) -> bool:
    """`yield` in the function's own body (not in a function nested in it)."""
    stack: list[ast.AST] = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


@dataclasses.dataclass(eq=False)
class _NestedFunction:
    """A nested function or lambda, as outlining names it."""

    __qualname__: str
