"""Python `ast` of a module's `forward` → dycl IR.

Submodule forwards and helper methods are inlined; torch.nn's own modules stay as
`dycl.call_module`. Everything known at compile time (config attributes,
`self.training`, submodule lookups, Python arithmetic on constants) is evaluated
here; what depends on tensor values becomes IR. Every op carries the Python
`file:line:col` it came from.

This module holds the driver (`Lowerer`: functions, statements, assignments,
`lower_module`); the rest is in mixins named for what they lower: scopes.py
(scopes and the join of branches), expressions.py (names, attributes, static
evaluation, operators, indexing), calls.py (modules, methods, globals),
functions.py (inlined Python functions and closures), containers.py, loops.py,
exceptions.py, contexts.py, regions.py (what runs as Python), state.py (module
attributes forward writes), inplace.py (aliasing of in-place updates).
"""

from __future__ import annotations

import ast
import builtins
import enum
import inspect
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr, FloatAttr, IntegerAttr, ModuleOp, NoneAttr, StringAttr, UnitAttr, f64, i1, i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dycl.arguments import ABSENT, Arguments, python_call
from dycl.diagnostics import FrontendError, SourceLoc
from dycl.dialects import dycl as d
from dycl.frontend.containers import ContainerLowering
from dycl.frontend.scopes import ScopeLowering, _Function, _Scope
from dycl.frontend.expressions import ExpressionLowering
from dycl.frontend.calls import CallLowering, _has_hooks
from dycl.grad_modes import compose
from dycl.frontend.contexts import GRAD_MODE_FIELD, flatten_transparent_with, grad_mode_of_decorator
from dycl.frontend.exceptions import PathEnded, TryLowering
from dycl.frontend.functions import FunctionLowering
from dycl.frontend.outlining import OutlineLowering, Outlined, used_functions
from dycl.frontend.restructure import hoist_walrus
from dycl.frontend.state import NewState, StateLowering
from dycl.frontend.statements import StatementLowering
from dycl.signature import Signature
from dycl.frontend.loops import LoopLowering, OverBudget, _Again, _Continuation, _snapshot
from dycl.frontend.regions import RegionLowering, RegionRecord, Widen, has_loose_exit, has_return
from dycl.types import fits_i64, mark_signature, signature_types, tensor_type_of
from dycl.frontend.inplace import possible_roots
from dycl.frontend.values import (
    Closure, DictVal, NamedSeq, ObjectVal, GlobalRef, ObjectRef, MethodRef, ModuleRef, SeqVal, Static, Value, qualname_of, return_type_of,
)

# Tensor methods whose results depend on the memory layout, not the values.
LAYOUT_QUERIES = frozenset({"is_contiguous", "stride", "storage_offset", "data_ptr", "is_non_overlapping_and_dense",
                            "untyped_storage", "is_set_to"})
LAYOUT_ATTR = "dycl.layout_sensitive"
MUTATES_ARGUMENTS_ATTR = "dycl.mutates_arguments"


class Lowerer(ScopeLowering, StatementLowering, ExpressionLowering, CallLowering, LoopLowering, RegionLowering, ContainerLowering, FunctionLowering, TryLowering, StateLowering, OutlineLowering):
    """Lowers one model: `lower()` returns a module with `func.func @forward`.

    `fallback` says what an untranslatable statement becomes: an error ("none"),
    the smallest fallback region ("statement"), or a region from it to the end of
    its function ("tail"). `dirty_attrs` are module attributes that forward
    changes at run time: reading them is left to the host.
    """

    def __init__(self, model: nn.Module, example_inputs: Sequence[Any], model_key: str | None = None,
                 max_iterations: int | None = None, fallback: str = "none",
                 dirty_attrs: set[tuple[int, str]] | None = None, signature: Signature | None = None,
                 as_python: Mapping[SourceLoc, str] | None = None, arguments: Arguments | None = None):
        self.model = model
        self.signature = signature
        self.arguments = arguments  # forward's arguments where they are not its tensor inputs as they are
        self.arguments_mutated: set[str] = set()  # list arguments forward changes, with where
        self.fallback = fallback
        # Where a pass or backend failed on a translated expression: its statement runs as Python.
        self.as_python = as_python or {}
        self.dirty_attrs = dirty_attrs or set()
        self.written_attrs: set[tuple[int, str]] = set()
        self.region_written: set[tuple[int, str]] = set()  # (of those: by code run as Python)
        # Module state of this call: state key -> (module path, attribute, module); what the host reads.
        self.state_owners: dict[str, tuple[str, str, Any]] = {}
        self.state_reads: dict[tuple[int, str], tuple[Any, str, str]] = {}
        # Values a module tensor holds (a read of state, updated in place since): stores in place.
        self.module_held: set[SSAValue] = set()
        self._tensor_holders: dict[int, int] | None = None
        self.folded_attrs: dict[tuple[int, str], str] = {}
        # What was folded, to guard at run time: (object, attribute, "attr") and
        # (a function's globals, name, "global") for module-level constants.
        self.folded_reads: dict[tuple[int, str], tuple[Any, str, str]] = {}
        self.folded_names: dict[str, str] = {}  # readable name -> where it was first read
        self.unknown_writes = False
        self.regions: list[RegionRecord] = []
        self._fn_body: list[ast.stmt] | None = None
        self.max_iterations = max_iterations
        self.loops = []
        self.example_inputs = list(example_inputs)
        self._on_cpu = all(t.device.type == "cpu" for t in _tensors_in(self.example_inputs))
        self.model_key = model_key
        self.block: Block = Block()
        self.fn: _Function | None = None
        self.loop_depth = 0
        self._if_depth = 0
        self._inline_stack: list[str] = []
        self._caller_scopes: list[_Scope] = []
        self._call_scopes: list[_Scope] = []  # scopes of the calls being lowered (call_value)
        self._caller_if_depths: list[int] = []  # how deep in branches each caller's call was made
        self._joins: dict[SSAValue, list[SSAValue]] = {}  # dycl.if result -> what each path yields
        # a rolled loop's block argument -> its initial value (while the loop op is not built yet)
        self._loop_entries: dict[SSAValue, SSAValue] = {}
        # entries (or an item of one: (entry, index)) `is None` took as never None
        self._assumed_not_none: set[SSAValue | tuple[SSAValue, int | None]] = set()
        self._listed: set[SSAValue] = set()  # storages of tensors appended to lists the host holds
        self.maybe_unbound: set[SSAValue] = _ValueSet()  # region results a name may be unbound in (check_bound)
        # Constants of tensors held outside the model (outside_tensor), and where forward changes one.
        self.outside_tensors: set[SSAValue] = set()
        self.outside_tensor_written: str | None = None
        # Region results that may be a tensor a Python object holds (`m = self.mems[-1]`).
        self.python_held: set[SSAValue] = set()
        self._closure_functions: dict[int, tuple[Any, Any]] = {}  # functions.py: _closure_function
        self.emitted = 0  # ops emitted so far
        # The grad mode of the statement being lowered, and of its function's statements
        # outside any `with torch.no_grad()` (None: the caller's, known at the call only).
        self.grad_mode: str | None = None
        self.grad_base: str | None = None
        self.budgets: list[tuple[object, int]] = []  # per-path loops being lowered: (owner, op limit)
        self.strict_joins: list[set[str]] = []  # flagged loops being lowered: names read after each
        self.try_stack = []  # tries of forward being lowered (where raises jump)
        self.named_tuples: dict[SSAValue, str] = {}
        # Helpers called as functions of their own (outlining.py), by specialisation.
        self.outlined: dict[Any, Outlined] = {}
        self.not_outlined: set[Any] = set()
        self.outlined_funcs: list[func.FuncOp] = []
        self.in_place_updates = 0
        self.tuple_fields: dict[SSAValue, tuple[str, ...]] = {}  # joins of different named tuples  # results that are torch.return_types.* in eager

    # ------------------------------------------------------------------ driver

    def lower(self) -> ModuleOp:
        if _has_hooks(self.model) or type(self.model).__call__ is not nn.Module.__call__:
            raise FrontendError(f"{type(self.model).__name__} has forward hooks or a custom __call__, "
                                "which run around forward")
        training = [p or type(self.model).__name__ for p, m in self.model.named_modules() if _trains_differently(m)]
        if training:
            # Batch statistics, running-stat updates, random dropout: compiled sub-DNNs compute inference.
            raise FrontendError(f"{', '.join(training[:3])} {'is' if len(training) == 1 else 'are'} in training mode",
                                note="dycl compiles inference: call model.eval() before dycl.compile")
        lazy = [n for n, t in (*self.model.named_parameters(), *self.model.named_buffers())
                if torch.nn.parameter.is_lazy(t)]
        if lazy:  # their shapes are set by the first call
            raise FrontendError(f"{', '.join(lazy[:3])} {'is' if len(lazy) == 1 else 'are'} not initialised yet "
                                "(a lazy module)", note="call the model once on an example before dycl.compile")
        forward = self._forward_of(self.model, None)
        tree, fn = self._parse(forward, type(self.model).__name__, inline=False)
        fdef = tree.body[0]
        assert isinstance(fdef, ast.FunctionDef)
        params = self._params(fdef, fn)
        n_defaults = len(fdef.args.defaults)
        required = len(params) - n_defaults
        vararg, kwarg = fdef.args.vararg, fdef.args.kwarg
        if self.arguments is None and not required <= len(self.example_inputs) <= (
                len(self.example_inputs) if vararg else len(params)):
            expected = f"{required} to {len(params)}" if n_defaults else f"{len(params)}"
            raise FrontendError(
                f"forward takes {expected} inputs but {len(self.example_inputs)} "
                "example inputs were given",
                self._loc(fdef, fn),
            )
        # Parameters left to their defaults are compile-time constants.
        self.fn = fn
        self.grad_base = self.grad_mode = fn.grad_mode
        # The default objects themselves (a tensor default is one tensor, made once).
        # (`@torch.no_grad()` on forward: a wrapper taking *args, the defaults its __wrapped__'s)
        holder, where = forward, "__dycl_root.forward"
        while getattr(holder, "__wrapped__", None) is not None and \
                not (getattr(holder, "__defaults__", None) or getattr(holder, "__kwdefaults__", None)):
            holder, where = holder.__wrapped__, where + ".__wrapped__"
        default_values = getattr(holder, "__defaults__", None) or ()
        defaults = {
            name: Static(value) if _immutable(value) else ObjectRef(f"{where}.__defaults__[{k}]", value)
            for k, (name, value) in enumerate(zip(params[required:], default_values))
        }
        # Keyword-only parameters (`*, temperature=1.0`): their defaults, or what a call gave.
        keyword_only = [x.arg for x in fdef.args.kwonlyargs]
        for name, value in (getattr(holder, "__kwdefaults__", None) or {}).items():
            defaults[name] = Static(value) if _immutable(value) else ObjectRef(
                f"{where}.__kwdefaults__[{name!r}]", value)
        if self.arguments is None:
            given = params[: len(self.example_inputs)]
            names = [*given, *(f"args[{k}]" for k in range(len(self.example_inputs) - len(given)))]
            arg_types = [self._input_type(x, name, fdef, fn) for name, x in zip(names, self.example_inputs)]
        else:
            arg_types = [self._input_type(x, f"input {i}", fdef, fn) for i, x in enumerate(self.example_inputs)]
        arg_types = signature_types(arg_types, self.signature)
        entry = Block(arg_types=arg_types)
        extra: list[Value] = []  # (what *args takes)
        if self.arguments is None:
            bound: dict[str, Value] = dict(zip(given, entry.args))
            for arg, name in zip(entry.args, given):
                arg.name_hint = name
            extra = list(entry.args[len(given):])
            for k, arg in enumerate(extra):
                arg.name_hint = f"{vararg.arg}{k}" if vararg else None
        else:
            block_args = iter(entry.args)
            bound = {}
            for p, spec in zip(self.arguments.params, self.arguments.specs):
                if spec != ABSENT:
                    value = _bind_argument(spec, block_args, p.name.replace("[", "").replace("]", ""))
                    if p.kind == "variadic":
                        extra.append(value)
                    else:
                        bound[p.name] = value
        if vararg is not None:  # (the positional arguments past the named ones, as a tuple)
            bound[vararg.arg] = SeqVal(extra) if any(not isinstance(x, Static) for x in extra) else Static(
                tuple(x.value for x in extra))  # type: ignore[union-attr]
        if kwarg is not None:  # (calls with keywords into **kwargs run as eager: the compile's took none)
            bound[kwarg.arg] = DictVal()
        self.block = self._entry = entry
        receiver = (*fdef.args.posonlyargs, *fdef.args.args)[0].arg if fdef.args.posonlyargs or fdef.args.args \
            else "self"
        env: dict[str, Value] = {receiver: ModuleRef("", self.model), **defaults, **bound}
        scope = _Scope(env=env)
        self._fn_body = fdef.body
        self._lower_body(fdef.body, scope)
        if not scope.terminated:
            self._emit_return(scope, None, fdef, top=True)
        func_op = func.FuncOp("forward", (arg_types, [d.ANY]), Region(entry))
        func_op.location = self._loc(fdef, fn).to_attr()
        mark_signature(func_op, self.signature)
        module = ModuleOp([func_op, *used_functions(func_op, self.outlined_funcs)])
        _drop_detached_uses(module)
        if self.model_key is not None:
            module.attributes["dycl.model"] = StringAttr(self.model_key)
        if self.arguments_mutated:
            module.attributes[MUTATES_ARGUMENTS_ATTR] = ArrayAttr([StringAttr(a) for a in sorted(self.arguments_mutated)])
        if any(isinstance(op, d.CallMethodOp) and op.method.data in LAYOUT_QUERIES for op in module.walk()):
            # Passes fold these for dense inputs; a call with strided inputs runs eager.
            module.attributes[LAYOUT_ATTR] = UnitAttr()
        if self.folded_names:
            module.attributes[FOLDED_ATTR] = ArrayAttr(
                [StringAttr(f"{name} @ {where}") for name, where in sorted(self.folded_names.items())])
        return module

    def _parse(self, function: Any, owner: str, inline: bool) -> tuple[ast.Module, _Function]:
        grad_mode = _decorated_grad_mode(function)
        function = inspect.unwrap(function, stop=lambda f: not _transparent_wrapper(f))
        # A wrapper of another decorator is what the call runs: its own source (inspect's
        # functions would read the wrapped function's), its closure holding the original.
        source = function.__code__ if hasattr(function, "__wrapped__") and hasattr(function, "__code__") else function
        try:
            lines, first_line = inspect.getsourcelines(source)
            file = inspect.getsourcefile(source) or "<unknown>"
        except (OSError, TypeError) as e:
            raise FrontendError(f"cannot read the Python source of {owner}.{function.__name__}: {e}")
        tree = flatten_transparent_with(ast.parse(textwrap.dedent("".join(lines))), function.__globals__)
        if (found := _changes_how_modules_run(tree)) is not None:
            # (inside the call too: a module called after it must run as eager runs it)
            why, node = found
            raise FrontendError(f"{owner}.{function.__name__} {why}",
                                SourceLoc(file, first_line + node.lineno - 1, node.col_offset + 1))
        if function.__name__ == "<lambda>":
            tree = _lambda_as_def(tree, function, owner)
        indent = len(lines[0]) - len(lines[0].lstrip())
        fn = _Function(f"{owner}.{function.__name__}", file, first_line, function.__globals__, inline, indent,
                       [line.rstrip("\n") for line in lines], tree,
                       _declared_global(tree.body[0]) if tree.body else set(), _closure_of(function), grad_mode)
        return tree, fn

    def _params(self, fdef: ast.FunctionDef, fn: _Function) -> list[str]:
        """forward's named positional parameters, past `self`."""
        return [x.arg for x in (*fdef.args.posonlyargs, *fdef.args.args)[1:]]

    def _input_type(self, x: Any, name: str, node: ast.AST, fn: _Function) -> Attribute:
        if isinstance(x, torch.Tensor):
            return tensor_type_of(x)
        raise FrontendError(
            f"example input '{name}' is a {type(x).__name__}; dycl compiles tensor inputs",
            self._loc(node, fn),
        )

    # --------------------------------------------------------------- utilities

    def roots_of(self, v: SSAValue) -> set[SSAValue]:
        """Every storage `v` may share (inplace.possible_roots): through joins, built
        loops, and the loop being lowered, whose carried value is first what enters it
        (`for _ in range(2): x.add_(1)` updates the caller's x)."""
        joins, entries = self._joins, self._loop_entries

        class Sources:
            @staticmethod
            def get(u: SSAValue, default: Any = ()) -> list[SSAValue]:
                return [*joins.get(u, default), *([entries[u]] if u in entries else [])]

        return possible_roots(v, self.model, Sources())  # type: ignore[arg-type]

    def plain_roots_of(self, v: SSAValue) -> set[SSAValue]:
        """`roots_of` without the loop being lowered's entries."""
        return possible_roots(v, self.model, self._joins)

    def _loc(self, node: ast.AST, fn: _Function | None = None) -> SourceLoc:
        fn = fn or self.fn
        assert fn is not None
        line = getattr(node, "lineno", 1) + fn.first_line - 1
        col = getattr(node, "col_offset", 0) + 1 + fn.indent
        return SourceLoc(fn.file, line, col)

    def error(self, node: ast.AST, message: str, note: str | None = None) -> FrontendError:
        assert self.fn is not None
        return FrontendError(f"{message} (in function '{self.fn.qualname}')", self._loc(node), note)

    def unsupported(self, node: ast.AST, construct: str) -> FrontendError:
        return self.error(
            node,
            f"unsupported Python construct: {construct}",
            "see docs/frontend.md for the supported subset",
        )

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        op.location = self._loc(node).to_attr()
        if self.grad_mode is not None and isinstance(op, (d.CallFunctionOp, d.CallMethodOp, d.CallModuleOp, d.PyRegionOp)):
            op.attributes[d.GRAD_MODE_ATTR] = StringAttr(self.grad_mode)
        self.block.add_op(op)
        self.emitted += 1
        if self.budgets and self.emitted > self.budgets[0][1]:
            raise OverBudget(self.budgets[0][0])
        return op

    @contextmanager
    def _in_block(self, block: Block) -> Iterator[Block]:
        saved = self.block
        self.block = block
        try:
            yield block
        finally:
            self.block = saved


    def materialize(self, v: Value, node: ast.AST) -> SSAValue:
        """An SSA value for `v`, emitting constants for statically known values."""
        if isinstance(v, SSAValue):
            return v
        if isinstance(v, Static):
            x = v.value
            if isinstance(x, enum.Enum) and "<locals>" not in type(x).__qualname__:
                # the member itself (an IntEnum is an int, but its type is what eager returns)
                q = f"{type(x).__module__}.{type(x).__qualname__}.{x.name}"
                return self.emit(d.ConstantOp(d.GlobalAttr(q)), node).results[0]
            if isinstance(x, bool):
                return self.emit(arith.ConstantOp(IntegerAttr(int(x), i1)), node).results[0]
            if isinstance(x, int) and not fits_i64(x):
                # `2 ** 64`: no i64 holds it; the host makes it (an i64 constant wrapped around)
                digits = self.emit(d.ConstantOp(StringAttr(str(x))), node).results[0]
                return self.emit(d.CallFunctionOp("builtins.int", [digits], result_type=d.PYOBJ), node).results[0]
            if isinstance(x, int):
                return self.emit(arith.ConstantOp(IntegerAttr(x, i64)), node).results[0]
            if isinstance(x, float):
                return self.emit(arith.ConstantOp(FloatAttr(x, f64)), node).results[0]
            if x is None:
                return self.emit(d.ConstantOp(NoneAttr()), node).results[0]
            if isinstance(x, str):
                return self.emit(d.ConstantOp(StringAttr(x)), node).results[0]
            if isinstance(x, torch.dtype):
                return self.emit(d.ConstantOp(d.GlobalAttr(str(x))), node).results[0]
            if isinstance(x, slice):
                parts = [self.materialize(Static(p), node) for p in (x.start, x.stop, x.step)]
                return self.emit(d.CallFunctionOp("builtins.slice", parts, result_type=d.PYOBJ), node).results[0]
            if x is Ellipsis:
                return self.emit(d.ConstantOp(d.GlobalAttr("builtins.Ellipsis")), node).results[0]
            if isinstance(x, tuple) and type(x) not in (tuple, torch.Size) and hasattr(type(x), "_fields") and (
                    q := qualname_of(type(x))) is not None:  # a namedtuple held by the model: its own type
                items = [self.materialize(Static(e), node) for e in x]
                return self.emit(d.CallFunctionOp(q, items, result_type=d.PYOBJ), node).results[0]
            if isinstance(x, (tuple, list)):
                items = self.materialize(SeqVal([Static(e) for e in x], isinstance(x, list)), node)
                if isinstance(x, torch.Size):  # eager's type, for code that checks it
                    return self.emit(d.CallFunctionOp("torch.Size", [items], result_type=d.PYOBJ), node).results[0]
                return items
            if isinstance(x, torch.Tensor):
                raise self.error(node, "tensor constants held as Python attributes must be registered buffers")
            raise self.error(node, f"cannot use a Python {type(x).__name__} value at run time")
        if isinstance(v, DictVal):
            factory = qualname_of(v.cls) if isinstance(v, ObjectVal) else v.factory
            if not all(isinstance(k, str) and k.isidentifier() for k in v.keys) and not isinstance(v, ObjectVal):
                # (torchvision's OrderedDict of features keyed "0", "1": built from its pairs)
                pairs = self.materialize(SeqVal([SeqVal([Static(k), x]) for k, x in zip(v.keys, v.items)],
                                                is_list=True), node)
                return self.emit(d.CallFunctionOp(factory, [pairs], result_type=d.PYOBJ), node).results[0]
            if not all(isinstance(k, str) and k.isidentifier() for k in v.keys):
                raise self.error(node, "a dict whose keys are not all identifier strings cannot be used at run time")
            values = [self.materialize(e, node) for e in v.items]
            return self.emit(d.CallFunctionOp(factory, values, list(v.keys), result_type=d.PYOBJ), node).results[0]
        if isinstance(v, NamedSeq):
            items = [self.materialize(e, node) for e in v.items]
            return self.emit(d.CallFunctionOp(qualname_of(v.cls), items, result_type=d.PYOBJ), node).results[0]
        if isinstance(v, SeqVal):
            elems = [self.materialize(e, node) for e in v.items]
            return self.emit(d.MakeTupleOp(elems, is_list=v.is_list), node).results[0]
        if isinstance(v, Closure):
            raise self.error(node, f"the function '{v.name}' cannot be used as a run-time value, only called")
        if isinstance(v, ModuleRef):
            raise self.error(node, f"submodule '{v.path or 'self'}' cannot be used as a value, only called")
        if isinstance(v, GlobalRef):
            return self.emit(d.ConstantOp(d.GlobalAttr(v.qualname)), node).results[0]
        if isinstance(v, ObjectRef) and isinstance(v.obj, torch.Tensor):  # a tensor default argument
            return self.outside_tensor(v.obj, node, f"the default argument {v.expr}")
        if isinstance(v, MethodRef) and isinstance(v.receiver, SSAValue) and v.receiver.type in (d.PYOBJ, d.ANY):
            # `torch.finfo(dtype).min`, `out.hidden_states` of an object a Python region made:
            # an attribute of a Python object, read where it is used
            return self.call_function("builtins.getattr", [v.receiver, Static(v.name)], {}, node)
        if isinstance(v, MethodRef):
            raise self.unsupported(node, f"the method '{v.name}' used as a value (it can only be called here)")
        raise self.error(node, "unsupported value")

    def call_function(self, target: str, args: Sequence[Value], kwargs: dict[str, Value], node: ast.AST) -> SSAValue:
        ops = [self.materialize(a, node) for a in args] + [self.materialize(v, node) for v in kwargs.values()]
        kind = {"result_type": d.PYOBJ} if target in _PYTHON_OBJECT_RESULTS else {}
        result = self.emit(d.CallFunctionOp(target, ops, list(kwargs), **kind), node).results[0]
        op = target.rpartition(".")[2]
        if target.startswith("torch.linalg."):
            op = f"linalg_{op}"
        if target.startswith("torch.") and (named := return_type_of(op, args[1:], kwargs)):
            self.named_tuples[result] = named
        return result

    def for_python(self, v: Value, node: ast.AST) -> Value:
        """`v` as eager's Python code sees it: `torch.return_types.*` results get
        their named-tuple type back (a plain tuple inside compiled code)."""
        if isinstance(v, SSAValue) and v in self.named_tuples:
            return self.emit(d.CallFunctionOp(self.named_tuples[v], [v]), node).results[0]
        if isinstance(v, SeqVal):
            return v.like([self.for_python(x, node) for x in v.items])
        return v

    # -------------------------------------------------------------- statements

    def _lower_body(self, stmts: Sequence[ast.stmt], scope: _Scope) -> None:
        top = stmts is self._fn_body
        assert self.fn is not None
        stmts = hoist_walrus(stmts, {n for n in ("any", "all")  # (not a global `any` = torch.any)
                                     if self.fn.globals.get(n, getattr(builtins, n)) is getattr(builtins, n)})
        if self.as_python:
            stmts = self._split_failed_tests(stmts)
        checkpoints: list[tuple[Any, Operation | None, int]] = []
        for i, s in enumerate(stmts):
            if scope.terminated:
                return  # code after return/break is dead, as in Python
            if self.fallback == "none" or isinstance(s, (_Continuation, _Again)):
                try:
                    if self._lower_stmt(s, stmts, i, scope):
                        return
                except PathEnded:
                    scope.terminated = scope.raised = True
                    return
                continue
            checkpoints.append((self._checkpoint_state(scope), self._mark(), self.emitted))
            try:
                if self.as_python and (failed := self._failed_in_compiled_code(s)) is not None:
                    raise failed
                if self._lower_stmt(s, stmts, i, scope):
                    return
                continue
            except PathEnded:
                scope.terminated = scope.raised = True
                return
            except (FrontendError, Widen) as e:
                error = e.error if isinstance(e, Widen) else e
            self._restore(checkpoints[i])
            if self._region_at(stmts, i, scope, error, top, checkpoints):
                return

    def _split_failed_tests(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """`if <test>:` whose test compiled code failed on (`(a > 0.5).cpu().numpy().any()`):
        the test alone runs as Python (`t = <test>`, then `if t:`), not the whole
        statement with its body."""
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.If) and any(hasattr(n, "lineno") and self._loc(n) in self.as_python
                                             for n in ast.walk(s.test)):
                name = f"__dycl_test_{s.test.lineno}_{s.test.col_offset}"
                assign = ast.copy_location(ast.Assign([ast.copy_location(ast.Name(name, ast.Store()), s.test)],
                                                      s.test), s.test)
                assign.end_lineno, assign.end_col_offset = s.test.end_lineno, s.test.end_col_offset
                test = ast.copy_location(ast.Name(name, ast.Load()), s)  # (not the failed place)
                s = ast.copy_location(ast.If(test, s.body, s.orelse), s)
                out.append(assign)
            out.append(s)
        return out

    def _failed_in_compiled_code(self, s: ast.stmt) -> FrontendError | None:
        """The error to run `s` as Python with, where an expression of it (of its
        header, for a compound statement: the body's statements are checked one by
        one) is one a pass or a backend failed on."""
        header: list[ast.AST] = {ast.If: lambda: [s.test], ast.While: lambda: [s.test],  # type: ignore[attr-defined]
                                 ast.For: lambda: [s.target, s.iter],  # type: ignore[attr-defined]
                                 ast.With: lambda: list(s.items),  # type: ignore[attr-defined]
                                 ast.Try: lambda: []}.get(type(s), lambda: [s])()
        for part in header:
            for n in ast.walk(part):
                if hasattr(n, "lineno") and (why := self.as_python.get(self._loc(n))) is not None:
                    return self.error(n, f"compiling it failed after translation ({why})")
        return None

    def _lower_stmt(self, s: ast.stmt, stmts: list[ast.stmt], i: int, scope: _Scope) -> bool:
        """Lower one statement; True if it also consumed the statements after it."""
        saved, self.grad_mode = self.grad_mode, compose(self.grad_base, getattr(s, GRAD_MODE_FIELD, None))
        try:
            return self._lower_stmt_in_mode(s, stmts, i, scope)
        finally:
            self.grad_mode = saved

    def _lower_stmt_in_mode(self, s: ast.stmt, stmts: list[ast.stmt], i: int, scope: _Scope) -> bool:
        if isinstance(s, ast.For):
            return self.lower_for(s, stmts[i + 1 :], scope)
        if isinstance(s, ast.Try):
            self.lower_try(s, scope, stmts[i + 1 :])
            return False
        if isinstance(s, ast.While):
            return self.lower_while(s, stmts[i + 1 :], scope)
        if isinstance(s, _Again):
            self._lower_body([self.while_iteration(s)], scope)
        elif isinstance(s, _Continuation):
            self._lower_body(s.stmts, scope)
        else:
            self._stmt(s, scope)
        return False

    def _checkpoint_state(self, scope: _Scope) -> Any:
        """A restorer of the scopes and of which storages lists hold (a region starting
        earlier, before a list took a tensor's rows, may update that tensor)."""
        restore_scopes, listed = _snapshot([scope, *self._caller_scopes]), set(self._listed)

        def restore() -> None:
            restore_scopes()
            self._listed = set(listed)
        return restore

    def _restore(self, checkpoint: tuple[Any, Operation | None, int]) -> None:
        restore, mark, emitted = checkpoint
        restore()
        self._rollback(mark)
        self.emitted = emitted

    def _region_at(self, stmts: list[ast.stmt], i: int, scope: _Scope, error: FrontendError, top: bool,
                   checkpoints: list[tuple[Any, Operation | None, int]]) -> bool:
        """Run `stmts[i]` as a fallback region (True: it ended the function)."""
        s = stmts[i]
        if self.fallback == "statement" and isinstance(s, ast.Return) and s.value is not None and not has_return(
                [ast.Expr(value=s.value)]):
            # Only the returned value is untranslatable: compute it in a region.
            assign = ast.copy_location(ast.Assign(
                targets=[ast.copy_location(ast.Name(id="__dycl_ret", ctx=ast.Store()), s)], value=s.value), s)
            self.make_region([assign], scope, error, tail=False, node=s)
            self._emit_return(scope, scope.env.pop("__dycl_ret"), s, top=False)
            return True
        if self.fallback == "statement" and not has_return([s]):
            if has_loose_exit([s]):
                raise Widen(error)
            self.make_region([s], scope, error, tail=False, node=s)
            return False
        if not top:
            raise Widen(error)
        # A tail region: from here to the end of the function; if a value it reads
        # cannot be handed over, start it earlier.
        for j in range(i, -1, -1):
            if j < i:
                self._restore(checkpoints[j])
            try:
                (result,) = self.make_region(stmts[j:], scope, error, tail=True, node=stmts[j])
            except Widen:
                continue
            self._emit_return(scope, result, stmts[j], top=False)
            return True
        raise Widen(error)


    def _emit_return(self, scope: _Scope, v: Value | None, node: ast.AST, top: bool) -> None:
        assert self.fn is not None
        value = Static(None) if v is None else v
        if self.fn.inline:
            scope.returned.append(value)
            scope.terminated = True
            return
        self.emit(d.ReturnOp(self.materialize(self.for_python(value, node), node)), node)
        scope.terminated = True

    # ------------------------------------------------------------------- if


    # ------------------------------------------------------------ expressions


    # -------------------------------------------------------------- indexing


    # ------------------------------------------------------------------ calls


_HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                           "register_full_backward_pre_hook", "register_module_forward_hook",
                           "register_module_forward_pre_hook"})


def _changes_how_modules_run(tree: ast.AST) -> tuple[str, ast.AST] | None:
    """(why, where) where a function registers forward hooks, switches a module between
    train and eval mode, or writes a module's `__dict__`: modules it calls afterwards,
    in the same call, run otherwise than at the compile."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in _HOOK_METHODS:
                return f"registers forward hooks ({n.func.attr})", n
            if n.func.attr in ("train", "eval") and len(n.args) <= 1 and not n.keywords and \
                    isinstance(n.func.value, (ast.Name, ast.Attribute, ast.Subscript)):
                return f"switches a module to {n.func.attr} mode ({n.func.attr}())", n
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "__dict__":
                return "writes an object's __dict__", n
    return None


def _transparent_wrapper(function: Any) -> bool:
    """A decorator wrapper that changes nothing a compiled forward computes: torch's
    grad modes (`@torch.no_grad()`, `@torch.inference_mode()`) and
    `@torch.compiler.disable`. Others (`@torch.autocast`, a user's `functools.wraps`
    decorator) run their own code around the function."""
    factory = _closure_of(function).get("ctx_factory")
    grad_mode = (torch.no_grad, torch.enable_grad, torch.inference_mode, torch.set_grad_enabled)
    if isinstance(getattr(factory, "__self__", None), grad_mode):
        return True
    disable = getattr(getattr(torch, "_dynamo", None), "eval_frame", None)
    return disable is not None and any(isinstance(v, disable.DisableContext) for v in _closure_of(function).values())


def _decorated_grad_mode(function: Any) -> str | None:
    """The grad-mode switches `@torch.no_grad()`-style decorators make around the
    function's body (outermost first); None where none does."""
    mode = None
    while hasattr(function, "__wrapped__") and _transparent_wrapper(function):
        factory = _closure_of(function).get("ctx_factory")
        mode = compose(mode, grad_mode_of_decorator(getattr(factory, "__self__", None)))
        function = function.__wrapped__
    return mode


def _closure_of(function: Any) -> dict[str, Any]:
    """The values of the free variables `function` closes over (filled cells only)."""
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    out: dict[str, Any] = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # not yet assigned
            continue
    return out


def _immutable(x: Any) -> bool:
    if isinstance(x, (tuple, frozenset)):
        return all(_immutable(e) for e in x)
    return x is None or isinstance(x, (bool, int, float, complex, str, bytes, torch.dtype, torch.Size, range, slice))


class _ValueSet(set):
    """A set of SSA values that other lowered values (a list's SeqVal, unhashable) are
    simply not members of."""

    def __contains__(self, v: object) -> bool:
        return isinstance(v, SSAValue) and super().__contains__(v)

    def add(self, v: Any) -> None:
        if isinstance(v, SSAValue):
            super().add(v)


def _bind_argument(spec: Any, block_args: Iterator[SSAValue], name: str) -> Value:
    """A parameter's value from its argument spec: a tensor input, a constant, a list, tuple or dict."""
    if spec[0] == "tensor":
        arg = next(block_args)
        arg.name_hint = name if name.isidentifier() else None
        return arg
    if spec[0] == "constant":
        return Static(spec[2])
    items = [_bind_argument(s, block_args, f"{name}_{i}") for i, s in enumerate(spec[1])]
    if spec[0] in ("dict", "OrderedDict"):
        return DictVal(items, False, [k[2] for k in spec[2]], "builtins.dict" if spec[0] == "dict"
                       else "collections.OrderedDict", argument=name)
    if spec[0] == "tuple" and all(isinstance(x, Static) for x in items):
        return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
    return SeqVal(items, is_list=spec[0] == "list", argument=name if spec[0] == "list" else None)


def _lambda_as_def(tree: ast.Module, function: Any, owner: str) -> ast.Module:
    """The statement holding a lambda, as `def <lambda>(...): return body`."""
    code = function.__code__
    params = list(code.co_varnames[:code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == params]
    if len(found) != 1:
        raise FrontendError(f"cannot tell which lambda of its line {owner}.<lambda> is")
    lam = found[0]
    fdef = ast.copy_location(ast.FunctionDef(name="<lambda>", args=lam.args, body=[
        ast.copy_location(ast.Return(value=lam.body), lam.body)], decorator_list=[], returns=None, type_params=[]), lam)
    return ast.fix_missing_locations(ast.Module(body=[fdef], type_ignores=[]))


def _declared_global(fdef: ast.AST) -> set[str]:
    """Names a function declares `global`/`nonlocal` (its nested functions aside)."""
    names: set[str] = set()
    stack = list(ast.iter_child_nodes(fdef))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return names


def _trains_differently(m: nn.Module) -> bool:
    """A module in training mode that computes differently from eval mode."""
    if not m.training:
        return False
    if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)):
        return m.track_running_stats or isinstance(m, nn.modules.batchnorm._BatchNorm)
    if isinstance(m, nn.modules.dropout._DropoutNd):
        return m.p > 0
    if isinstance(m, nn.RReLU):
        return True  # a random slope per element in training mode
    return isinstance(m, (nn.RNNBase, nn.MultiheadAttention)) and getattr(m, "dropout", 0) > 0


# torch functions whose result is a Python object (its attributes are values: `.min`).
_PYTHON_OBJECT_RESULTS = {"torch.finfo", "torch.iinfo"}

# Module attribute listing the model's attributes (and its config objects') that
# the compile read and folded in, as "name @ file:line:col".
FOLDED_ATTR = "dycl.folded_attributes"


def _drop_detached_uses(module: ModuleOp) -> None:
    """Abandoned attempts (rolled back for a fallback region) may leave ops in
    detached blocks that still use live values: drop those uses."""
    live = set(module.walk())
    for op in live:
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            for use in list(v.uses):
                if use.operation not in live:
                    use.operation.drop_all_references()


def _outside_tensor_written(where: str) -> FrontendError:
    return FrontendError(f"forward changes a tensor held outside the model in place ({where}), which compiled "
                         "code would hold as a constant", note="the model runs as eager Python (fallback='python')")


def lower_module(model: nn.Module, example_inputs: Sequence[Any], model_key: str | None = None,
                 max_iterations: int | None = None, fallback: str = "none", reason: str = "",
                 signature: Signature | None = None, as_python: Mapping[SourceLoc, str] | None = None,
                 arguments: Arguments | None = None, folded_reads: list[tuple[Any, str, str]] | None = None
                 ) -> ModuleOp:
    """Lower `model.forward` (and what it calls) to a dycl module with `@forward`.

    `max_iterations` bounds data-dependent `while` loops that carry no
    `# dycl: max_iterations=N` annotation of their own. `fallback` is "none" (an
    untranslatable construct is an error), "statement" or "tail" (it becomes a
    fallback region; see `Lowerer`), or "whole" (forward runs as one region).
    A `signature` with symbolic dimensions makes those input dimensions dynamic.
    `folded_reads`, when given, receives what was read at compile time and built in
    (for dycl/runtime/live_guard.py).
    """
    if fallback == "whole":
        module = whole_forward_module(model, example_inputs, model_key, reason or "requested", signature, arguments)
        module.verify()
        return module
    if (sparse := _sparse_argument(example_inputs)) is not None:
        # (no backend takes one; the export densifies it without a word)
        raise FrontendError(f"a sparse tensor argument ({sparse}): forward runs as Python")
    dirty: set[tuple[int, str]] = set()
    for _ in range(16):
        lowerer = Lowerer(model, example_inputs, model_key, max_iterations, fallback, dirty, signature, as_python,
                          arguments)
        try:
            module = lowerer.lower()
        except Widen as w:
            if lowerer.outside_tensor_written:
                raise _outside_tensor_written(lowerer.outside_tensor_written) from None
            raise w.error from None
        except NewState as found:
            dirty |= found.keys
            continue
        if lowerer.outside_tensor_written:
            raise _outside_tensor_written(lowerer.outside_tensor_written)
        if lowerer.unknown_writes and lowerer.folded_attrs:
            raise FrontendError("a fallback region writes attributes of an object the compiler cannot follow, "
                                "and compiled code reads module attributes that it may change")
        params = {(id(m), n): f"{path + '.' if path else ''}{n}" for path, m in model.named_modules()
                  for n, _ in m.named_parameters(recurse=False)}
        buffers = {(id(m), n) for m in model.modules() if isinstance(m._buffers, dict) for n in m._buffers}
        changed = sorted(params[k] for k in lowerer.written_attrs if k in params)
        reads_weights = any(isinstance(op, d.ParamOp) for op in module.walk())
        if changed or (lowerer.unknown_writes and reads_weights):
            # Sub-DNNs hold parameters as constants: they would not see the change.
            what = f"its parameters ({', '.join(changed)})" if changed else "tensors it may hold"
            raise FrontendError(f"forward changes {what} in place, which compiled sub-DNNs hold as constants",
                                note="the model runs as eager Python (fallback='python'), or call it without the update")
        # Attributes a region writes are state: reading them at compile time was wrong;
        # buffers forward writes are state too, not constants of the sub-DNNs.
        new = {k for k in lowerer.written_attrs if k in lowerer.folded_attrs or k in buffers} - dirty
        if not new:
            break
        dirty |= new
    else:
        raise FrontendError("module state written during forward did not settle")
    module.verify()
    if folded_reads is not None:
        folded_reads.extend(lowerer.folded_reads.values())
        # What the host reads at run time (its type is checked), and buffers forward
        # itself writes (their changes are no change of the model).
        folded_reads.extend(lowerer.state_reads.values())
        modules = {id(m): m for m in model.modules()}
        folded_reads.extend((modules[k], n, "written") for k, n in sorted(dirty, key=str)
                            if k in modules and isinstance(n, str) and n in modules[k]._buffers)
    return module


def _tensors_in(values: Any) -> Iterator[torch.Tensor]:
    """The tensors among forward's arguments (in lists, tuples and dicts)."""
    if isinstance(values, torch.Tensor):
        yield values
    elif isinstance(values, (list, tuple, Mapping)):
        for v in values.values() if isinstance(values, Mapping) else values:
            yield from _tensors_in(v)


def _sparse_argument(values: Any) -> str | None:
    """The layout of the first tensor among `values` that is not strided (dense)."""
    return next((str(t.layout) for t in _tensors_in(values) if t.layout != torch.strided), None)


def whole_forward_module(model: nn.Module, example_inputs: Sequence[Any], model_key: str | None,
                         reason: str, signature: Signature | None = None,
                         arguments: Arguments | None = None) -> ModuleOp:
    """`@forward` as one fallback region that calls the model as eager does."""
    types = signature_types([tensor_type_of(x) if isinstance(x, torch.Tensor) else d.PYOBJ for x in example_inputs],
                            signature)
    entry = Block(arg_types=types)
    params = [f"x{i}" for i in range(len(types))]
    for a, p in zip(entry.args, params):
        a.name_hint = p
    call = ", ".join(params) if arguments is None else python_call(arguments.params, arguments.specs, params)
    code = (f"def __dycl_region({', '.join(['__dycl_root', *params])}):\n"
            f"    return __dycl_root({call})\n")
    try:
        fwd = inspect.unwrap(model.forward)  # (`@torch.no_grad()` wraps it: its own lines, not torch's)
        file = inspect.getsourcefile(fwd) or "<unknown>"
        line = inspect.getsourcelines(fwd)[1]
    except (OSError, TypeError):
        file, line = "<unknown>", 1
    loc = SourceLoc(file, line, 1)
    where = f"{file.rsplit('/', 1)[-1]}:{line}:1"
    region = d.PyRegionOp(list(entry.args), [d.ANY], code, "dycl.pyregion", where, "forward", reason, tail=True)
    region.location = loc.to_attr()
    entry.add_op(region)
    ret = d.ReturnOp(region.results[0])
    ret.location = loc.to_attr()
    entry.add_op(ret)
    func_op = func.FuncOp("forward", (types, [d.ANY]), Region(entry))
    func_op.location = loc.to_attr()
    mark_signature(func_op, signature)
    module = ModuleOp([func_op])
    if model_key is not None:
        module.attributes["dycl.model"] = StringAttr(model_key)
    return module
