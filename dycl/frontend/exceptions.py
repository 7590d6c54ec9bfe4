"""`try`, `raise` and `assert`: exceptions as control flow.

A `raise` (or a failing `assert`) inside a `try` of `forward` whose handler
catches it — directly, or two inlined calls deep (`raise ExitNow(outputs, i)` in
a submodule's layer loop) — is a structured early exit: on that path the handler,
the `finally` block and the rest of `forward` run right there, with the names
`forward` had when the call was made and `e` bound to the exception (its
`__init__` is inlined: `e.outputs` is a value). A raise nothing catches is a
`dycl.raise` of eager's exception type and arguments on the host.

Other exceptions (torch's) are caught only where the body may raise them: for the
compiled shapes, what can fail at run time is what depends on tensor values (an
index read from data, `int()` of NaN, an embedding lookup, a gather, a division by
a host integer). A `try` whose handlers catch such errors and whose body holds one
of them is left whole to the frontend's fallback (it runs as Python).
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import f64, i1, i64
from xdsl.ir import Operation

from dycl.dialects import dycl as d
from dycl.frontend.restructure import contains_exit
from dycl.frontend.state import sync_state
from dycl.frontend.values import ExceptionVal, GlobalRef, SeqVal, Static, Value, copy_env

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

# Calls that may raise depending on tensor values (indices, factorizations, casts).
_DATA_DEPENDENT_FAILURES = {
    "embedding", "embedding_bag", "gather", "scatter", "scatter_add", "scatter_reduce", "index_select",
    "index_add", "index_copy", "index_fill", "index_put", "take", "take_along_dim", "one_hot", "multinomial",
    "cholesky", "inverse", "inv", "solve", "bincount", "repeat_interleave", "item", "tolist", "nonzero",
}
_MODULES_THAT_INDEX = ("Embedding", "EmbeddingBag")
_EXITS = (ast.Return, ast.Break, ast.Continue)


class PathEnded(Exception):
    """The path being lowered ended in a raise (every path of an inlined call raised):
    the statement stops here; whoever catches this marks its scope as raised."""


@dataclass
class _Handler:
    classes: tuple[type, ...]  # empty: a bare `except:`
    name: str | None
    body: list[ast.stmt]


@dataclass
class _TryContext:
    """A `try` of forward being lowered: where a matching raise jumps to."""

    handlers: list[_Handler]
    finalbody: list[ast.stmt]
    rest: list[ast.stmt]  # forward's statements after the try
    scope: Any  # forward's scope lowering the try body
    depth: int  # len(_caller_scopes) when the try began
    fn: Any
    handler_ops: set[int] = field(default_factory=set)  # ops emitted for handler paths
    at_top: bool = True  # a try of forward itself (one in a called function: its raises are not lowered)

    def handler_for(self, cls: type) -> _Handler | None:
        for h in self.handlers:
            if not h.classes or issubclass(cls, h.classes):
                return h
        return None


def _may_fail(op: Operation, lowerer: Lowerer) -> str | None:
    """Why `op` may raise at run time for some tensor values, or None."""
    if isinstance(op, d.ItemOp) and op.results[0].type == i64:
        return "an int read from a tensor (NaN cannot convert)"
    if isinstance(op, d.ListGetOp) and (not isinstance(op.index.owner, Operation) or op.index.owner.name not in
                                        d.CONSTANT_OPS):
        return "indexing a list with a value computed at run time"
    if isinstance(op, d.WhileOp) and op.properties.get("max_iterations") is not None:
        return "a loop with an iteration guard"
    if isinstance(op, (d.CallFunctionOp, d.CallMethodOp)):
        target = op.target.data if isinstance(op, d.CallFunctionOp) else op.method.data
        name = target.rpartition(".")[2]
        if name in _DATA_DEPENDENT_FAILURES:
            return f"'{name}', which fails on some tensor values"
        if name == "getitem" and not all(d.is_constant(v) for v in op.operands[1:]):
            return "indexing with a value computed at run time"
        if not target.startswith("_operator.") and any(_run_time_number(v) for v in op.operands):
            # (`x.reshape(n, -1)`, `x.topk(k)` with `n`, `k` read from data)
            return f"'{name}' with an argument computed at run time"
        if name in ("truediv", "floordiv", "mod") and op.operands[1].type == i64:
            return "a division by a host integer"
        if isinstance(op, d.CallFunctionOp) and d.may_raise_on_data(target, op):
            return f"'{name}' of run-time numbers, which raises for some of them (math domain, zero division)"
        if name in ("floordiv", "mod", "remainder", "fmod", "floor_divide", "div") and not d.is_constant(op.operands[1]):
            return f"'{name}' by a run-time divisor (an integer tensor's zero raises)"
        if isinstance(op, d.CallFunctionOp) and op.target.data.startswith("builtins.") and name not in (
                "getattr", "slice", "len", "isinstance", "dict"):
            return f"the Python builtin '{name}'"
    if isinstance(op, d.CallModuleOp):
        module = lowerer.model.get_submodule(op.path.data)
        if type(module).__name__ in _MODULES_THAT_INDEX:
            return f"'{op.path.data}' ({type(module).__name__}), which fails on out-of-range indices"
    return None


def _run_time_number(v: Any, depth: int = 0) -> bool:
    """Whether `v` is a host number (or Python object) computed at run time: typed so,
    or host arithmetic on such numbers (`int(t.sum()) + 1`, typed later)."""
    if d.is_constant(v):
        return False
    if v.type in (i64, f64, i1) or isinstance(v.type, d.PyObjType):
        return True
    owner = v.owner
    return depth < 16 and isinstance(owner, d.CallFunctionOp) and owner.target.data.startswith("_operator.") and \
        v.type == d.ANY and any(_run_time_number(o, depth + 1) for o in owner.operands) and \
        all(d.is_constant(o) or _run_time_number(o, depth + 1) for o in owner.operands)


def _catches_builtin_errors(handlers: list[_Handler]) -> bool:
    """Whether a handler catches exceptions torch or Python raise (not only the model's own)."""
    return any(not h.classes or any(c.__module__ == "builtins" for c in h.classes) for h in handlers)


class TryLowering:
    """Mixin of Lowerer: `try`/`except`/`else`/`finally`, `raise`, failing `assert`s."""

    try_stack: list[_TryContext]

    def _handler_classes(self: Lowerer, h: ast.ExceptHandler, scope: _Scope) -> tuple[type, ...]:
        if h.type is None:
            return ()
        v = self.expr(h.type, scope)
        items = v.items if isinstance(v, SeqVal) else [v]
        classes = []
        for x in items:
            obj = x.obj if isinstance(x, GlobalRef) else x.value if isinstance(x, Static) else None
            objs = obj if isinstance(obj, tuple) else (obj,)
            for c in objs:
                if not (isinstance(c, type) and issubclass(c, BaseException)):
                    raise self.unsupported(h, "except clause naming something other than exception classes")
                classes.append(c)
        return tuple(classes)

    def lower_try(self: Lowerer, s: ast.Try, scope: _Scope, rest: list[ast.stmt]) -> None:
        body, tail = s.body, s.orelse + s.finalbody
        # A return may end the body (then neither else nor finally may exist); other exits
        # would have to run the finally block or skip the else block on the way out.
        exits_at_end = isinstance(body[-1], ast.Return) and not tail
        if contains_exit(body[:-1] if exits_at_end else body, _EXITS) or contains_exit(tail, _EXITS):
            raise self.unsupported(s, "try/except with return, break or continue inside")
        handlers = [_Handler(self._handler_classes(h, scope), h.name, h.body) for h in s.handlers]
        # Raises jump to handlers only from forward's own top level (their path then ends forward).
        at_top = self.fn is not None and not self.fn.inline and scope.env is not None and self._fn_body is not None \
            and any(st is s for st in self._fn_body)
        ctx = _TryContext(handlers, s.finalbody, rest, scope, len(self._caller_scopes), self.fn, at_top=at_top)
        mark = self._mark()
        saved = self.fallback
        self.fallback = "none"  # an untranslatable statement makes the whole try a region
        self.try_stack.append(ctx)
        try:
            self._lower_body(body, scope)
            if not scope.terminated:
                self._lower_body(s.orelse, scope)
        finally:
            self.fallback = saved
            self.try_stack.pop()
        if _catches_builtin_errors(handlers):
            ops = list(self.block.ops)
            start = ops.index(mark) + 1 if mark is not None else 0
            skip = ctx.handler_ops
            for top in ops[start:]:
                for op in top.walk():
                    if id(op) in skip:
                        continue
                    why = "it raises " + op.exception.data.removeprefix("builtins.") if isinstance(
                        op, d.RaiseOp) else _may_fail(op, self)
                    if why is not None:
                        raise self.unsupported(s, f"try/except whose body may raise at run time ({why})")
        if not scope.terminated:
            self._lower_body(s.finalbody, scope)

    # ----------------------------------------------------------------- raise

    def lower_raise(self: Lowerer, s: ast.Raise, scope: _Scope) -> None:
        if s.exc is None or s.cause is not None:
            raise self.unsupported(s, "re-raise or raise ... from")
        exc = s.exc
        if isinstance(exc, ast.Call):
            if any(isinstance(a, ast.Starred) for a in exc.args) or any(k.arg is None for k in exc.keywords):
                raise self.unsupported(exc, "raise with starred arguments")
            cls = self.expr(exc.func, scope)
            args = [self.expr(a, scope) for a in exc.args]
            kwargs = {k.arg: self.expr(k.value, scope) for k in exc.keywords if k.arg is not None}
        else:
            cls, args, kwargs = self.expr(exc, scope), [], {}
        if isinstance(cls, ExceptionVal):
            self.raise_exception(cls, scope, s)
            return
        if not (isinstance(cls, GlobalRef) and isinstance(cls.obj, type) and issubclass(cls.obj, BaseException)):
            raise self.unsupported(exc, "raise of something other than an exception class or a call of one")
        self.raise_exception(self.make_exception(cls.obj, args, kwargs, exc), scope, s)

    def make_exception(self: Lowerer, cls: type, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> ExceptionVal:
        """The exception `cls(*args, **kwargs)`; a Python `__init__` is inlined to see
        what it stores (`self.outputs = outputs`)."""
        e = ExceptionVal(cls, list(args), made_with=(list(args), dict(kwargs)))
        init = inspect.getattr_static(cls, "__init__", None)
        if inspect.isfunction(init):
            e.args = []  # what super().__init__(...) receives, as Python sets args
            self._inline(init, e, args, kwargs, node)
        elif kwargs:
            raise self.unsupported(node, f"keyword arguments to {cls.__name__}")
        return e

    def raise_exception(self: Lowerer, e: ExceptionVal, scope: _Scope, node: ast.AST) -> None:
        """This path raises `e`: to the handler of an enclosing try of forward that
        catches it, else on the host (`dycl.raise`). Either way the path ends here."""
        for ctx in reversed(self.try_stack):
            handler = ctx.handler_for(e.cls)
            if handler is not None and not ctx.at_top:
                raise self.unsupported(node, "a raise caught by a try/except inside a called function")
            if handler is not None:
                self._run_handler(ctx, handler, e, scope, node)
                break
            if ctx.finalbody:
                raise self.unsupported(node, "a raise passing through try/finally")
        else:
            # The host builds it as eager did: the same class, called with the same arguments.
            args, kwargs = e.made_with if e.made_with != ((), {}) else (e.args, {})
            operands = [self.materialize(a, node) for a in [*args, *kwargs.values()]]
            self.emit(d.RaiseOp(f"{e.cls.__module__}.{e.cls.__qualname__}", operands, list(kwargs)), node)
            self.emit(d.ReturnOp(), node)  # unreachable: keeps the block well formed
        scope.terminated = True
        scope.raised = True

    def _run_handler(self: Lowerer, ctx: _TryContext, handler: _Handler, e: ExceptionVal, scope: _Scope,
                     node: ast.AST) -> None:
        # forward's names as they were when the raising call was made
        outer = scope if len(self._caller_scopes) <= ctx.depth or self.fn is ctx.fn else self._caller_scopes[ctx.depth]
        hscope = self._new_scope(copy_env(outer.env))
        sync_state(hscope.env, scope.env)  # module state as the raise leaves it
        if handler.name:
            hscope.env[handler.name] = e
        saved = (self.fn, self._fn_body, self.loop_depth, self.loops, self.try_stack)
        mark = self._mark()
        try:
            self.fn, self._fn_body, self.loop_depth, self.loops = ctx.fn, None, 0, []
            self.try_stack = self.try_stack[: self.try_stack.index(ctx)]
            self._lower_body(handler.body + ctx.finalbody + ctx.rest, hscope)
            if not hscope.terminated:
                self._emit_return(hscope, None, node, top=False)  # forward falls off its end
        finally:
            self.fn, self._fn_body, self.loop_depth, self.loops, self.try_stack = saved
        ops = list(self.block.ops)
        for op in ops[ops.index(mark) + 1 if mark is not None else 0:]:
            ctx.handler_ops.update(id(o) for o in op.walk())

    # --------------------------------------------------------------- objects

    def exception_attribute(self: Lowerer, e: ExceptionVal, attr: str, node: ast.AST) -> Value:
        if attr in e.attrs:
            return e.attrs[attr]
        if attr == "args":
            return SeqVal(list(e.args)) if any(not isinstance(a, Static) for a in e.args) else Static(
                tuple(a.value for a in e.args))
        raise self.error(node, f"{e.cls.__name__} object has no attribute '{attr}' here")

    def exception_super_init(self: Lowerer, e: ExceptionVal, args: list[Value]) -> Value:
        e.args = list(args)
        return Static(None)


def is_super_init(call: ast.Call) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)`."""
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == "__init__" and isinstance(f.value, ast.Call) and isinstance(
        f.value.func, ast.Name) and f.value.func.id == "super"

