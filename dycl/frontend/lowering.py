"""Python `ast` of a module's `forward` → dycl IR.

Submodule forwards and helper methods are inlined; torch.nn's own modules stay as
`dycl.call_module`. Everything known at compile time (config attributes,
`self.training`, submodule lookups, Python arithmetic on constants) is evaluated
here; what depends on tensor values becomes IR. Every op carries the Python
`file:line:col` it came from.
"""

from __future__ import annotations

import ast
import builtins
import collections
import enum
import inspect
import itertools
import math
import operator
import functools
import re
import textwrap
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NoneAttr,
    StringAttr,
    TensorType,
    TupleType,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from dycl.arguments import ABSENT, Arguments, python_call
from dycl.diagnostics import FrontendError, SourceLoc
from dycl.dialects import dycl as d
from dycl.frontend.containers import ContainerLowering
from dycl.frontend.contexts import flatten_transparent_with
from dycl.frontend.exceptions import PathEnded, TryLowering, is_super_init
from dycl.frontend.functions import FunctionLowering
from dycl.frontend.restructure import always_exits, hoist_walrus, lift_loop_returns, restructure
from dycl.frontend.state import StateLowering, is_state_key
from dycl.nesting import allow_depth
from dycl.signature import Signature
from dycl.frontend.inplace import bound_values, maybe_tensor, possible_roots, rebind
from dycl.frontend.loops import LoopLowering, NeedsStatic, OverBudget, RuntimeRange, UnsafeJoin, _Again, _Continuation, _Injected, _snapshot
from dycl.frontend.regions import RegionLowering, RegionRecord, Widen, has_loose_exit, has_return
from dycl.types import dtype_of, mark_signature, signature_types, tensor_type_of
from dycl.frontend.values import (
    Closure,
    Partial,
    DictVal,
    ExceptionVal,
    MUTATING_METHODS,
    NamedSeq,
    ObjectVal,
    GlobalRef,
    ObjectRef,
    StaticObject,
    IndexedModule,
    MethodRef,
    ModuleRef,
    PathDependent,
    SeqVal,
    Static,
    SuperRef,
    Value,
    copy_env,
    is_leaf_module,
    same_value,
    qualname_of,
    resolve_qualname,
    return_type_of,
)

BINOPS: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("add", operator.add),
    ast.Sub: ("sub", operator.sub),
    ast.Mult: ("mul", operator.mul),
    ast.Div: ("truediv", operator.truediv),
    ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod),
    ast.Pow: ("pow", operator.pow),
    ast.MatMult: ("matmul", operator.matmul),
    ast.BitAnd: ("and_", operator.and_),
    ast.BitOr: ("or_", operator.or_),
    ast.BitXor: ("xor", operator.xor),
    ast.LShift: ("lshift", operator.lshift),
    ast.RShift: ("rshift", operator.rshift),
}
CMPOPS: dict[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Gt: ("gt", operator.gt),
    ast.GtE: ("ge", operator.ge),
    ast.Lt: ("lt", operator.lt),
    ast.LtE: ("le", operator.le),
    ast.Eq: ("eq", operator.eq),
    ast.NotEq: ("ne", operator.ne),
}
STATIC_OK_CMPOPS = {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}

# Globals that may be evaluated at compile time when all arguments are constants.
PURE_BUILTINS = {
    len, min, max, abs, int, float, bool, round, range, tuple, list, sum,
    isinstance, enumerate, zip, divmod, pow, str,
}

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
UNSUPPORTED_EXPRS: dict[type[ast.expr], str] = {
    ast.Yield: "yield (generator)",
    ast.YieldFrom: "yield from (generator)",
    ast.Await: "await",
    ast.SetComp: "set comprehension",
    ast.Set: "set literal",
    ast.NamedExpr: "assignment expression (:=)",
    ast.Starred: "starred expression outside a call",
}
FORBIDDEN_CALLS = {
    "exec": "exec()", "eval": "eval()", "print": "print()", "input": "input()",
    "open": "open()", "setattr": "setattr()", "delattr": "delattr()",
    "random.random": "Python-side randomness (random)", "random.randint": "Python-side randomness (random)",
}


_LAYOUT_ONLY_METHODS = {"flatten_parameters"}
# Calls whose point is what they do, not a value: warnings, logging, the process.
_SIDE_EFFECT_MODULES = ("warnings.", "_warnings.", "logging.", "sys.", "os.", "time.", "builtins.input", "pdb.", "traceback.")
# In-place methods that change the receiver's shape or strides (a functional form would not).
_SHAPE_CHANGING_IN_PLACE = {"resize_", "resize_as_", "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_",
                            "set_", "share_memory_", "swapdims_", "swapaxes_", "put_", "index_put_", "masked_scatter_"}
# Random fills: eager draws from torch's generator; only eager code gets the same numbers.
_RANDOM_IN_PLACE = {"random", "uniform", "normal", "bernoulli", "exponential", "geometric", "cauchy", "log_normal"}
_IN_PLACE_AS = {"copy_", "zero_", "fill_"}


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


_AUG_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@", ast.FloorDiv: "//",
               ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


def _assigned_names(stmts: Sequence[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


_MISSING = object()
_ITERTOOLS = (itertools.product, itertools.chain, itertools.combinations, itertools.permutations)
# Calls that only annotate their value's type, for TorchScript or a type checker.
_TYPE_ANNOTATIONS = (torch.jit.annotate, typing.cast)
# "Is this code being scripted, traced, exported, compiled?": not in eager.
_NOT_COMPILING = tuple(f for f in (torch.jit.is_scripting, torch.jit.is_tracing, torch.compiler.is_compiling,
                                   torch.compiler.is_dynamo_compiling, torch.compiler.is_exporting,
                                   torch.onnx.is_in_onnx_export) if f is not None)
# torch.nn modules whose results are tuples: their structure (None: a tensor).
_LEAF_RESULTS: dict[type, tuple[Any, ...]] = {
    nn.LSTM: (None, (None, None)), nn.GRU: (None, None), nn.RNN: (None, None), nn.LSTMCell: (None, None)}
# Tensor methods whose results depend on the memory layout, not the values.
LAYOUT_QUERIES = frozenset({"is_contiguous", "stride", "storage_offset", "data_ptr", "is_non_overlapping_and_dense",
                            "untyped_storage", "is_set_to"})
LAYOUT_ATTR = "dycl.layout_sensitive"
MUTATES_ARGUMENTS_ATTR = "dycl.mutates_arguments"


def _as_seq(v: Value, other: Value) -> Value:
    """A constant tuple (list) as the sequence of its items, beside a SeqVal of its kind."""
    if isinstance(v, Static) and isinstance(other, SeqVal) and type(v.value) is (list if other.is_list else tuple):
        return SeqVal([Static(x) for x in v.value], other.is_list)
    return v


class Lowerer(LoopLowering, RegionLowering, ContainerLowering, FunctionLowering, TryLowering, StateLowering):
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
        self._listed: set[SSAValue] = set()  # storages of tensors appended to lists the host holds
        self.emitted = 0  # ops emitted so far
        self.budgets: list[tuple[object, int]] = []  # per-path loops being lowered: (owner, op limit)
        self.strict_joins: list[set[str]] = []  # flagged loops being lowered: names read after each
        self.try_stack = []  # tries of forward being lowered (where raises jump)
        self.named_tuples: dict[SSAValue, str] = {}
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
        if self.arguments is None and not required <= len(self.example_inputs) <= len(params):
            expected = f"{required} to {len(params)}" if n_defaults else f"{len(params)}"
            raise FrontendError(
                f"forward takes {expected} inputs but {len(self.example_inputs)} "
                "example inputs were given",
                self._loc(fdef, fn),
            )
        # Parameters left to their defaults are compile-time constants.
        self.fn = fn
        # The default objects themselves (a tensor default is one tensor, made once).
        default_values = getattr(forward, "__defaults__", None) or ()
        defaults = {
            name: Static(value) if _immutable(value) else ObjectRef(f"__dycl_root.forward.__defaults__[{k}]", value)
            for k, (name, value) in enumerate(zip(params[required:], default_values))
        }
        # Keyword-only parameters (`*, temperature=1.0`): their defaults, or what a call gave.
        keyword_only = [x.arg for x in fdef.args.kwonlyargs]
        for name, value in (getattr(forward, "__kwdefaults__", None) or {}).items():
            defaults[name] = Static(value) if _immutable(value) else ObjectRef(
                f"__dycl_root.forward.__kwdefaults__[{name!r}]", value)
        if self.arguments is None:
            given = params[: len(self.example_inputs)]
            arg_types = [self._input_type(x, name, fdef, fn) for name, x in zip(given, self.example_inputs)]
        else:
            arg_types = [self._input_type(x, f"input {i}", fdef, fn) for i, x in enumerate(self.example_inputs)]
        arg_types = signature_types(arg_types, self.signature)
        entry = Block(arg_types=arg_types)
        if self.arguments is None:
            bound: dict[str, Value] = dict(zip(given, entry.args))
            for arg, name in zip(entry.args, given):
                arg.name_hint = name
        else:
            block_args = iter(entry.args)
            bound = {name: _bind_argument(spec, block_args, name)
                     for name, spec in zip(params + keyword_only, self.arguments.specs) if spec != ABSENT}
        self.block = self._entry = entry
        receiver = fdef.args.args[0].arg if fdef.args.args else "self"
        env: dict[str, Value] = {receiver: ModuleRef("", self.model), **defaults, **bound}
        scope = _Scope(env=env)
        self._fn_body = fdef.body
        self._lower_body(fdef.body, scope)
        if not scope.terminated:
            self._emit_return(scope, None, fdef, top=True)
        func_op = func.FuncOp("forward", (arg_types, [d.ANY]), Region(entry))
        func_op.location = self._loc(fdef, fn).to_attr()
        mark_signature(func_op, self.signature)
        module = ModuleOp([func_op])
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
                       _declared_global(tree.body[0]) if tree.body else set(), _closure_of(function))
        return tree, fn

    def _params(self, fdef: ast.FunctionDef, fn: _Function) -> list[str]:
        a = fdef.args
        if a.vararg or a.kwarg or a.posonlyargs:
            raise FrontendError(
                f"unsupported signature in function '{fn.qualname}': *args, **kwargs and "
                "positional-only parameters are not supported",
                self._loc(fdef, fn),
            )
        return [x.arg for x in a.args[1:]]

    def _input_type(self, x: Any, name: str, node: ast.AST, fn: _Function) -> Attribute:
        if isinstance(x, torch.Tensor):
            return tensor_type_of(x)
        raise FrontendError(
            f"example input '{name}' is a {type(x).__name__}; dycl compiles tensor inputs",
            self._loc(node, fn),
        )

    # --------------------------------------------------------------- utilities

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

    def _new_scope(self, env: dict[str, Value]) -> _Scope:
        return _Scope(env=env)

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
            if not all(isinstance(k, str) and k.isidentifier() for k in v.keys):
                raise self.error(node, "a dict whose keys are not all identifier strings cannot be used at run time")
            values = [self.materialize(e, node) for e in v.items]
            factory = qualname_of(v.cls) if isinstance(v, ObjectVal) else v.factory
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
        stmts = hoist_walrus(stmts)
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
            checkpoints.append((_snapshot([scope, *self._caller_scopes]), self._mark(), self.emitted))
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

    def _stmt(self, s: ast.stmt, scope: _Scope) -> None:
        if isinstance(s, (ast.Global, ast.Nonlocal)) and self.fallback != "none":
            return  # the names are run-time state: their reads and writes become regions
        if isinstance(s, ast.FunctionDef):
            scope.env[s.name] = self._closure(s, s.args, s.decorator_list, scope)
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
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    # `z[i] += v`: z[i] is read, updated and written back (`z[i] = z[i] + v`).
                    base = scope.env.get(target.value.id)
                    if isinstance(base, SSAValue) and maybe_tensor(base):
                        v = self._binop(op, self.expr(load, scope), self.expr(value, scope), s)
                        if self._assign_tensor_item(target, v, scope):
                            return
                if not isinstance(target, ast.Name):
                    raise self.unsupported(s, "augmented assignment to an attribute or item (in-place mutation)")
                old = self.expr(load, scope)
                if isinstance(old, SeqVal) and old.is_list and not isinstance(old, DictVal) and \
                        isinstance(op, (ast.Add, ast.Mult)):
                    # `l += [...]`, `l *= 2` change the list itself: every name bound to it sees it
                    other = self.expr(value, scope)
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

    def _update_in_place(self, name: str, old: SSAValue, new: SSAValue, scope: _Scope, node: ast.AST) -> None:
        """`name op= e` on a tensor: every name holding the tensor, here or in a caller, sees `new`."""
        envs = [scope.env] + [sc.env for sc in self._caller_scopes]
        for sc, depth in zip(self._caller_scopes, self._caller_if_depths):
            # A caller's name cannot be rebound to a value made inside a branch below its
            # call: that branch's join merges the callee's names only.
            if sc is not scope and depth < self._if_depth and any(w is old for _, w in bound_values(sc.env)):
                raise self.unsupported(node, f"in-place update of '{name}' inside a branch while the calling code "
                                             "holds the same tensor")
        roots = possible_roots(old, self.model, self._joins)
        if roots & self._listed or any(isinstance(r.owner, d.ListGetOp) for r in roots):
            # the list holds the very tensor (eager's element changes too); the IR's holds a value
            raise self.unsupported(node, f"in-place update of '{name}', a tensor a list held at run time also holds")
        for env in envs:
            for other, w in bound_values(env):
                if w is not old and maybe_tensor(w) and roots & possible_roots(w, self.model, self._joins):
                    raise self.unsupported(
                        node,
                        f"in-place update of '{name}', which shares its storage with '{other}' "
                        "(a view, or the same tensor on some paths only); "
                        f"write `{name} = {name} {_AUG_SYMBOL.get(type(getattr(node, 'op', None)), '+')} ...` instead",  # type: ignore[attr-defined]
                    )
        if any(isinstance(r, BlockArgument) and r.owner is self._entry for r in roots):
            raise self.unsupported(node, f"in-place update of the input '{name}' (the caller's tensor changes too)")
        if any(is_state_key(k) for env in envs for k, w in bound_values(env) if w is old):
            raise self.unsupported(node, f"in-place update of '{name}', which a module attribute also holds")
        for env in envs:
            rebind(env, old, new)

    def _expr_stmt(self, value: ast.expr, scope: _Scope) -> None:
        # `seq.append(x)` on a Python list grows it at compile time.
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("append", "extend"):
            target = self.expr(value.func.value, scope)
            if isinstance(target, SeqVal):
                self.check_not_one_of_several(target, scope, value)
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

    def check_not_one_of_several(self, seq: SeqVal, scope: _Scope, node: ast.AST) -> None:
        """`l = a if c else b; l.append(x)`: Python changes a or b, the compile-time list
        `l` is neither; while another name still holds one of them, this is refused
        (inside a loop, which is then unrolled or run as Python whole)."""
        if self.one_of_several(seq, scope):
            if self.loop_depth:
                raise NeedsStatic
            raise self.unsupported(node, "changing a list that is one of several lists, picked at run time")

    def held_elsewhere(self, seq: SeqVal, name: str, envs: list[dict[str, Value]]) -> bool:
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

    def one_of_several(self, seq: SeqVal, scope: _Scope) -> bool:
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

    def _append_to_held_list(self, old: SSAValue, item: Value, scope: _Scope, node: ast.AST) -> SSAValue:
        """`tokens.append(t)` on a list the host holds: every name holding the list
        (here or in a caller, also inside tuples) now holds the longer one."""
        for sc, depth in zip(self._caller_scopes, self._caller_if_depths):
            if sc is not scope and depth < self._if_depth and any(w is old for _, w in bound_values(sc.env)):
                raise self.unsupported(node, "appending inside a branch to a list the calling code holds")
        value = self.materialize(item, node)
        if value.type == d.PYOBJ or isinstance(value.type, d.ListType):
            raise self.unsupported(node, "a list of Python objects or lists held at run time")
        if maybe_tensor(value):
            self._listed |= possible_roots(value, self.model, self._joins)
        new = self.emit(d.ListAppendOp(old, value), node).result
        for env in [scope.env] + [sc.env for sc in self._caller_scopes]:
            rebind(env, old, new)
        return new

    def _assign(self, target: ast.expr, v: Value, scope: _Scope) -> None:
        match target:
            case ast.Name(id=name) if self.fn is not None and name in self.fn.declared_global:
                raise self.unsupported(target, f"assignment to the global variable '{name}'")
            case ast.Name(id=name):
                if isinstance(v, SSAValue) and v.name_hint is None and name.isidentifier():
                    v.name_hint = name
                scope.env[name] = v
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
            case ast.Attribute():
                raise self.unsupported(target, "assignment to a module attribute (in-place mutation of the model)")
            case ast.Subscript() if self.assign_item(target, v, scope) or self._assign_tensor_item(target, v, scope):
                return
            case ast.Subscript():
                raise self.unsupported(target, "item assignment (in-place tensor mutation)")
            case _:
                raise self.unsupported(target, f"assignment target {type(target).__name__}")

    def _assign_tensor_item(self, target: ast.Subscript, v: Value, scope: _Scope) -> bool:
        """`t[i] = v` (a mask, slices, indices) on a tensor named `t`: `t` and every name
        holding it now hold the updated copy, as for `t += ...`; a view, an input or a
        module's tensor is refused (its base, the caller or the module would change too)."""
        if not isinstance(target.value, ast.Name):
            return False
        name = target.value.id
        base = scope.env.get(name)
        if not isinstance(base, SSAValue) or not maybe_tensor(base):
            return False
        index = self._index(target.slice, scope)
        new = self.call_function("dycl.tensor_ops.setitem", [base, index, v], {}, target)
        assert isinstance(new, SSAValue)
        self._update_in_place(name, base, new, scope, target)
        scope.env[name] = new
        return True

    def note_argument_mutated(self, seq: SeqVal, node: ast.AST) -> None:
        """forward changes a list the caller passed (`feats.append(x)`): the caller
        sees that in eager, so calls run the model itself (see CompiledModel)."""
        self.arguments_mutated.add(f"{seq.argument} ({self._loc(node)})")

    def _structured(self, v: SSAValue, shape: Any, node: ast.AST) -> Value:
        """A leaf module's result as the tuples eager returns (`out, (h, c)` of an
        LSTM), so `isinstance(h, tuple)` and unpacking are known at compile time."""
        if shape is None:
            return v
        return SeqVal([self._structured(self.emit(d.GetItemOp(v, i), node).results[0], sub, node)
                       for i, sub in enumerate(shape)])

    def _unpack(self, v: Value, n: int, node: ast.AST) -> list[Value]:
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
        if isinstance(v, SSAValue):
            return [self.emit(d.GetItemOp(v, i), node).results[0] for i in range(n)]
        raise self.error(node, "cannot unpack this value")

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

    def _if(self, s: ast.If, scope: _Scope) -> None:
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
        for i, (block, _) in enumerate(merging):
            with self._in_block(block):
                yielded.append([self.materialize(vals[i], node) for vals in slots])
        fields = self._name_mixed_tuples(merging, yielded, node)
        result_types: list[Attribute] = []
        for i in range(len(slots)):
            ts = {vals[i].type for vals in yielded}
            result_types.append(ts.pop() if len(ts) == 1 else d.ANY)
        for (block, _), vals in zip(merging, yielded):
            block.add_op(d.YieldOp(*vals))
        if_op = self.emit(
            d.IfOp(cond, result_types, Region(branches[0][0]), Region(branches[1][0])), node
        )
        results = list(if_op.results)
        for k, r in enumerate(results):
            self._joins[r] = [vals[k] for vals in yielded]
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

    def _check_caller_containers(self, scope: _Scope, names: list[str], live: list[tuple[Block, _Scope]],
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

    def _name_mixed_tuples(self, merging: list[tuple[Block, Any]], yielded: list[list[SSAValue]],
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

    def _merge_values(self, vals: list[Value], name: str, slots: list[list[Value]]) -> Value:
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

    def names_read_after(self, body: list[ast.stmt]) -> set[str]:
        """Names loaded in the current function after the given statements."""
        assert self.fn is not None and self.fn.tree is not None
        end = max(getattr(b, "end_lineno", 0) or 0 for b in body)
        return {
            n.id for n in ast.walk(self.fn.tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno > end
        }

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.expr, scope: _Scope) -> Value:
        if type(e) in UNSUPPORTED_EXPRS:
            raise self.unsupported(e, UNSUPPORTED_EXPRS[type(e)])
        match e:
            case _Injected():
                return e.value
            case ast.Constant(value=value):
                return Static(value)
            case ast.Name(id=name):
                return self._name(name, e, scope)
            case ast.Attribute(value=base, attr=attr):
                owner = self.expr(base, scope)
                if isinstance(owner, ModuleRef) and (state := self.read_state(owner, attr, scope)) is not None:
                    return state
                return self._attribute(owner, attr, e)
            case ast.Tuple(elts=elts) | ast.List(elts=elts) if any(isinstance(x, ast.Starred) for x in elts):
                return self._starred_display(e, scope)
            case ast.Tuple(elts=elts):
                items = [self.expr(x, scope) for x in elts]
                if all(isinstance(x, Static) for x in items):
                    return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
                return SeqVal(items)
            case ast.List(elts=elts):
                return SeqVal([self.expr(x, scope) for x in elts], is_list=True)
            case ast.Dict(keys=keys, values=values):
                out = DictVal()
                for k, v in zip(keys, values):
                    if k is None:  # {**other}
                        other = self.expr(v, scope)
                        for kk, vv in self._dict_items(other, v):
                            out.set(kk, vv)
                        continue
                    key = self.expr(k, scope)
                    if not isinstance(key, Static):
                        raise self.unsupported(k, "dict key computed at run time")
                    out.set(key.value, self.expr(v, scope))
                return out
            case ast.ListComp() | ast.GeneratorExp() | ast.DictComp():
                return self._comprehension(e, scope)
            case ast.Lambda(args=args, body=body):
                return self._closure(e, args, [], scope)
            case ast.JoinedStr():
                return self._fstring(e, scope)
            case ast.BinOp(left=left, op=op, right=right):
                return self._binop(op, self.expr(left, scope), self.expr(right, scope), e)
            case ast.UnaryOp(op=op, operand=operand):
                return self._unary(op, operand, scope, e)
            case ast.Compare():
                return self._compare(e, scope)
            case ast.BoolOp():
                return self._boolop_value(e, scope)
            case ast.IfExp(test=test, body=body, orelse=orelse):
                return self._ifexp(test, body, orelse, scope, e)
            case ast.Call():
                return self._call(e, scope)
            case ast.Subscript(value=value, slice=index):
                return self._subscript(self.expr(value, scope), self._index(index, scope), e)
            case ast.Slice():
                return self._index(e, scope)
            case _:
                raise self.unsupported(e, type(e).__name__)

    def _fstring(self, e: ast.JoinedStr, scope: _Scope) -> Value:
        """An f-string over compile-time values (e.g. building a submodule name)."""
        parts: list[str] = []
        for v in e.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
                continue
            assert isinstance(v, ast.FormattedValue)
            x = self.expr(v.value, scope)
            if not isinstance(x, Static):
                if self.loop_depth:
                    raise NeedsStatic
                raise self.unsupported(e, "f-string over a run-time value")
            spec = self.expr(v.format_spec, scope) if v.format_spec is not None else Static("")
            conv = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda y: y)
            parts.append(format(conv(x.value), spec.value))  # type: ignore[union-attr]
        return Static("".join(parts))

    def _name(self, name: str, node: ast.AST, scope: _Scope) -> Value:
        assert self.fn is not None
        if name in self.fn.declared_global:
            raise self.unsupported(node, f"the global variable '{name}', which forward changes")
        if name in scope.env:
            v = scope.env[name]
            if isinstance(v, PathDependent):
                raise self.error(node, v.message or f"'{name}' names different modules depending on a run-time condition")
            return v
        obj = self.global_object(name, _MISSING)
        if obj is _MISSING:
            raise self.error(node, f"name '{name}' is not defined here (assigned only on some paths, or unknown)")
        if name not in self.fn.closure and self.fn.globals.get(name, _MISSING) is obj:
            self.folded_reads.setdefault((id(self.fn.globals), name), (self.fn.globals, name, "global"))
        return self._global(obj, name, node)

    def global_object(self, name: str, default: Any = None) -> Any:
        """What a name that is not a local means in the current function: a variable
        of the enclosing function (a class made in a factory), a global, a builtin."""
        assert self.fn is not None
        for space in (self.fn.closure, self.fn.globals, vars(builtins)):
            if name in space:
                return space[name]
        return default

    def _fold_read(self, obj: Any, attr: str, node: ast.AST) -> None:
        """Record a compile-time read of `obj.attr`; an attribute forward changes at
        run time cannot be read so. A class attribute read through an instance is
        keyed by its class too, so `type(self).calls += 1` makes `self.calls` state."""
        keys = [(id(obj), attr)]
        if inspect.isclass(obj) or attr not in getattr(obj, "__dict__", {}):
            owner = next((c for c in (obj if inspect.isclass(obj) else type(obj)).__mro__ if attr in vars(c)), None)
            if owner is not None and owner is not obj:
                keys.append((id(owner), attr))
        if any(k in self.dirty_attrs for k in keys):
            err = self.unsupported(node, f"a read of '{attr}', which forward changes at run time (state)")
            err.reads_state = True  # type: ignore[attr-defined]  (the region's tensor sizes may change per call)
            raise err
        for k in keys:
            self.folded_attrs.setdefault(k, str(self._loc(node)))
        self.folded_reads.setdefault((id(obj), attr), (obj, attr, "attr"))

    def _global(self, obj: Any, name: str, node: ast.AST) -> Value:
        if isinstance(obj, (bool, int, float, str, type(None), tuple, torch.dtype)):
            return Static(obj)
        if isinstance(obj, (list, dict, set)):
            raise self.unsupported(node, f"closure over the mutable global '{name}'")
        if isinstance(obj, nn.Module):
            raise self.unsupported(node, f"module '{name}' held in a global (make it a submodule)")
        q = qualname_of(obj)
        if q is None:
            raise self.error(node, f"cannot resolve the global '{name}' to an importable name")
        return GlobalRef(q, obj)

    def _note_folded(self, name: str, node: ast.AST) -> None:
        """A model attribute read at compile time (recorded in the manifest)."""
        if name not in self.folded_names:
            loc = self._loc(node)
            self.folded_names[name] = f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}:{loc.col}"

    def _attribute(self, base: Value, attr: str, node: ast.AST) -> Value:
        if isinstance(base, SuperRef):
            return MethodRef(base, attr)
        if isinstance(base, ModuleRef):
            m = base.module
            if attr in m._modules:
                return base.child(attr)
            if attr in m._parameters or attr in m._buffers:
                t = getattr(m, attr)
                if t is None:
                    return Static(None)
                path = f"{base.path}.{attr}" if base.path else attr
                return self.emit(d.ParamOp(path, tensor_type_of(t)), node).results[0]
            static = inspect.getattr_static(m, attr, None)
            if isinstance(static, property) and static.fget is not None and _writes_state(static.fget):
                return self._inline(static.fget, base, [], {}, node)  # runs where forward reads it
            if hasattr(type(m), attr) and callable(getattr(type(m), attr)) and not isinstance(static, property) \
                    and attr not in m.__dict__:  # (an instance attribute shadows the class's method)
                return MethodRef(base, attr)
            self._fold_read(m, attr, node)
            try:
                val = getattr(m, attr)
            except AttributeError:
                raise self.error(node, f"module '{base.path or 'self'}' ({type(m).__name__}) has no attribute '{attr}'") from None
            if isinstance(val, torch.Tensor):
                raise self.error(node, f"tensor attribute '{attr}' is neither a parameter nor a buffer; register it as a buffer")
            self._note_folded(f"{base.path}.{attr}" if base.path else attr, node)
            root = "__dycl_root" if not base.path else f"__dycl_root.get_submodule({base.path!r})"
            return self._object_value(val, f"{root}.{attr}", attr, node)
        if isinstance(base, StaticObject):
            self._fold_read(base.obj, attr, node)
            try:
                val = getattr(base.obj, attr)
            except AttributeError:
                raise self.error(node, f"{type(base.obj).__name__} object has no attribute '{attr}'") from None
            self._note_folded(f"{_readable(base.expr)}.{attr}", node)
            return self._object_value(val, f"{base.expr}.{attr}", attr, node)
        if isinstance(base, GlobalRef):
            obj = getattr(base.obj, attr, None)
            if obj is None and not hasattr(base.obj, attr):
                raise self.error(node, f"'{base.qualname}' has no attribute '{attr}'")
            if isinstance(obj, (bool, int, float, str, torch.dtype, enum.Enum)):
                if inspect.isclass(base.obj) or inspect.ismodule(base.obj):
                    self._fold_read(base.obj, attr, node)  # `Model.calls`: state if forward changes it
                return Static(obj)
            q = qualname_of(obj) or f"{base.qualname}.{attr}"
            return GlobalRef(q, obj)
        if isinstance(base, SSAValue):
            if attr == "data":  # the tensor without autograd history: detach()
                return self.emit(d.CallMethodOp("detach", [base]), node).results[0]
            if base in self.named_tuples or base in self.tuple_fields:
                fields = self.tuple_fields.get(base) or resolve_qualname(self.named_tuples[base]).__match_args__
                if attr in fields:
                    return self.emit(d.GetItemOp(base, fields.index(attr)), node).results[0]
            if attr in ("shape", "ndim") and isinstance(base.type, TensorType) and all(n >= 0 for n in base.type.get_shape()):
                shape = torch.Size(base.type.get_shape())
                return Static(shape if attr == "shape" else len(shape))
            if attr == "dtype" and isinstance(base.type, TensorType):
                return Static(dtype_of(base.type.element_type))
            if attr in ("shape", "dtype", "device", "ndim", "T", "mT", "data", "is_cuda"):
                return self.call_function("builtins.getattr", [base, Static(attr)], {}, node)
            if not getattr(node, "_dycl_callee", False) and (base.type in (d.ANY, d.PYOBJ) or isinstance(base.type, TensorType)):
                # Read where Python reads it (`v = y.H`, then `y.add_(1)`: v sees the update)
                return self.call_function("builtins.getattr", [base, Static(attr)], {}, node)
            return MethodRef(base, attr)
        if isinstance(base, ObjectVal):
            if attr in base.keys:
                return base.get(attr)
            if base.probe is not None and hasattr(base.probe, attr):
                if callable(getattr(base.probe, attr)):
                    return MethodRef(base, attr)
                return self.probe_answer(base, lambda o: getattr(o, attr), node)  # a property
            raise self.error(node, f"{base.cls.__name__} object has no attribute '{attr}' here")
        if isinstance(base, NamedSeq) and attr in base.cls._fields:
            return base.items[base.cls._fields.index(attr)]
        if isinstance(base, SeqVal):
            return MethodRef(base, attr)
        if isinstance(base, ExceptionVal):
            return self.exception_attribute(base, attr, node)
        if isinstance(base, Static):
            if isinstance(base.value, enum.Enum) and attr in ("name", "value"):
                return Static(getattr(base.value, attr))
            if isinstance(base.value, (int, float, str, tuple, list, dict)) and hasattr(base.value, attr):
                return MethodRef(base, attr)
        raise self.error(node, f"attribute '{attr}' is not supported on this value")

    def _object_value(self, val: Any, expr: str, attr: str, node: ast.AST) -> Value:
        """A Python attribute value for compiled code: constants and containers of
        them fold; other objects (configs) are read through; the rest is left to the host."""
        if _simple(val):
            return Static(list(val) if isinstance(val, list) else dict(val) if isinstance(val, dict) else val)
        if isinstance(val, torch.Tensor):
            raise self.error(node, f"tensor attribute '{attr}' is neither a parameter nor a buffer; register it as a buffer")
        if isinstance(val, nn.Module) or callable(val) or isinstance(val, (list, tuple, dict, set)):
            return ObjectRef(expr, val)  # run-time only: a fallback region reaches it
        return StaticObject(val, expr)

    def _binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
        name, fn = BINOPS[type(op)]
        if isinstance(a, Static) and isinstance(b, Static):
            try:
                return Static(fn(a.value, b.value))
            except Exception as ex:
                raise self.error(node, f"constant expression fails: {ex}") from None
        if name == "add" and SeqVal in (type(a), type(b)):
            # `outs = () ; outs = outs + (x,)`: a constant tuple (list) and one of run-time items
            a, b = (_as_seq(v, b if v is a else a) for v in (a, b))
        if isinstance(a, SeqVal) and isinstance(b, SeqVal) and name == "add":
            return SeqVal(a.items + b.items, a.is_list)
        if name == "mul" and isinstance(a, SeqVal) and isinstance(b, Static) and isinstance(b.value, int):
            return SeqVal(a.items * b.value, a.is_list)
        if name == "mul" and isinstance(b, SeqVal) and isinstance(a, Static) and isinstance(a.value, int):
            return SeqVal(b.items * a.value, b.is_list)
        return self.call_function(f"_operator.{name}", [a, b], {}, node)

    def _unary(self, op: ast.unaryop, operand: ast.expr, scope: _Scope, node: ast.AST) -> Value:
        v = self.truth(operand, scope) if isinstance(op, ast.Not) else self.expr(operand, scope)
        if isinstance(op, ast.Not):
            if isinstance(v, Static):
                return Static(not v.value)
            c = self.to_bool(v, operand)
            true = self.materialize(Static(True), node)
            return self.emit(arith.XOrIOp(c, true), node).results[0]
        fn = {ast.USub: ("neg", operator.neg), ast.UAdd: ("pos", operator.pos), ast.Invert: ("invert", operator.invert)}[type(op)]
        if isinstance(v, Static):
            return Static(fn[1](v.value))
        return self.call_function(f"_operator.{fn[0]}", [v], {}, node)

    def _compare(self, e: ast.Compare, scope: _Scope) -> Value:
        left = self.expr(e.left, scope)
        result: Value | None = None
        for op, right_node in zip(e.ops, e.comparators):
            right = self.expr(right_node, scope)
            if type(op) in STATIC_OK_CMPOPS:
                if isinstance(left, Static) and isinstance(right, Static):
                    part: Value = Static(STATIC_OK_CMPOPS[type(op)](left.value, right.value))
                elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(left, Static) and isinstance(right, ObjectVal) \
                        and right.probe is not None:
                    found = self.probe_answer(right, lambda o: left.value in o, e)
                    assert isinstance(found, Static)
                    part = Static(found.value == isinstance(op, ast.In))
                elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(left, Static) and isinstance(right, DictVal):
                    part = Static((left.value in right.keys) == isinstance(op, ast.In))
                elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(left, Static) and isinstance(right, ModuleRef) \
                        and isinstance(right.module, nn.ModuleDict):
                    part = Static((left.value in right.module._modules) == isinstance(op, ast.In))
                elif isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, Static) and right.value is None:
                    if isinstance(left, SSAValue) and self._may_be_none(left):
                        # None on some paths only: decided at run time.
                        name = "is_not" if isinstance(op, ast.IsNot) else "is_"
                        part = self.to_bool(self.call_function(f"_operator.{name}", [left, right], {}, e), e)
                    else:
                        part = Static(isinstance(op, ast.IsNot))  # a run-time tensor is never None
                else:
                    raise self.unsupported(e, f"'{type(op).__name__}' comparison on a run-time value")
            else:
                part = self._compare_values(op, left, right, e)
            result = part if result is None else self._and_values(result, part, e)
            left = right
        assert result is not None
        return result

    def _compare_values(self, op: ast.cmpop, a: Value, b: Value, node: ast.AST) -> Value:
        name, fn = CMPOPS[type(op)]
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(fn(a.value, b.value))
        return self.call_function(f"_operator.{name}", [a, b], {}, node)

    def _may_be_none(self, v: SSAValue, seen: set[SSAValue] | None = None) -> bool:
        """Whether `v` may hold None: a None constant, a region's result, or a join with either."""
        seen = seen if seen is not None else set()
        if v in seen:
            return False
        seen.add(v)
        owner = v.owner
        if isinstance(owner, d.PyRegionOp):
            return True
        if isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr):
            return True
        return any(self._may_be_none(p, seen) for p in self._joins.get(v, ()))

    def _and_values(self, a: Value, b: Value, node: ast.AST) -> Value:
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(a.value and b.value)
        ca, cb = self.to_bool(a, node), self.to_bool(b, node)
        return self.emit(arith.AndIOp(ca, cb), node).results[0]

    def _boolop(self, e: ast.BoolOp, scope: _Scope) -> Value:
        """`and`/`or` with Python's short-circuit, on truth values."""
        is_and = isinstance(e.op, ast.And)
        first = self.truth(e.values[0], scope)
        rest = e.values[1:]
        if isinstance(first, Static):
            if bool(first.value) != is_and:  # decided: False and ..., True or ...
                return first
            if not rest:
                return first
            return self.truth(ast.copy_location(ast.BoolOp(op=e.op, values=rest), e), scope) if len(rest) > 1 else self.truth(rest[0], scope)
        c = self.to_bool(first, e.values[0])
        if not rest:
            return c
        tail = ast.copy_location(ast.BoolOp(op=e.op, values=rest), e) if len(rest) > 1 else rest[0]

        def evaluate_rest(sub: _Scope) -> None:
            # `p or len(xs) == n`: a rest known at compile time keeps the join static where both agree.
            v = self.truth(tail, sub)
            sub.env["$cond"] = Static(bool(v.value)) if isinstance(v, Static) else self.to_bool(v, tail)

        def short(sub: _Scope) -> None:
            sub.env["$cond"] = Static(not is_and)

        outer = _Scope(env=copy_env(scope.env))
        outer.env["$cond"] = Static(None)
        self._branch(
            c, [], [], outer, e,
            then_fn=evaluate_rest if is_and else short,
            else_fn=short if is_and else evaluate_rest,
        )
        self._join_into(scope, outer)
        return outer.env["$cond"]

    def _join_into(self, scope: _Scope, outer: _Scope) -> None:
        """After branches inside an expression (`a if c else b`, `and`/`or`): names they
        changed (a tensor updated in place on one path) hold the joined values."""
        for k, v in outer.env.items():
            if (not k.startswith("$") or is_state_key(k)) and k in scope.env and not same_value(scope.env[k], v):
                scope.env[k] = v
        for k in [k for k in scope.env if is_state_key(k) and k not in outer.env]:
            del scope.env[k]

    def truth(self, e: ast.expr, scope: _Scope) -> Value:
        """`e` where only its truth matters (an `if`/`while` test, `not`, `assert`):
        `a and b` may then be a plain truth value instead of the operand Python returns."""
        if isinstance(e, ast.BoolOp):
            return self._boolop(e, scope)
        v = self.expr(e, scope)
        if isinstance(v, ObjectVal):  # an object is true unless its class says otherwise
            if v.probe is not None:
                return self.probe_answer(v, bool, e)
            if hasattr(v.cls, "__bool__") or hasattr(v.cls, "__len__"):
                raise self.unsupported(e, f"the truth of a {v.cls.__name__} object")
            return Static(True)
        if isinstance(v, SeqVal):  # `while stack:` over a list known at compile time: its length
            return Static(bool(v.items))
        return v

    def _boolop_value(self, e: ast.BoolOp, scope: _Scope) -> Value:
        """`a and b` / `a or b` as a value: the operand Python returns (`h or x` is a
        tensor), decided with Python's short-circuit."""
        is_and = isinstance(e.op, ast.And)
        first = self.expr(e.values[0], scope)
        rest = e.values[1:]
        tail = (ast.copy_location(ast.BoolOp(op=e.op, values=rest), e) if len(rest) > 1 else rest[0]) if rest else None
        if isinstance(first, (Static, SeqVal)):
            truth = bool(first.items) if isinstance(first, SeqVal) else bool(first.value)
            if tail is None or truth != is_and:  # decided: False and ..., True or ...
                return first
            return self.expr(tail, scope)
        if tail is None:
            return first
        c = self.to_bool(first, e.values[0])
        outer = _Scope(env=copy_env(scope.env))
        outer.env["$v"] = Static(None)

        def evaluate_rest(sub: _Scope) -> None:
            sub.env["$v"] = self.expr(tail, sub)

        def keep_first(sub: _Scope) -> None:
            sub.env["$v"] = first

        self._branch(c, [], [], outer, e, then_fn=evaluate_rest if is_and else keep_first,
                     else_fn=keep_first if is_and else evaluate_rest)
        self._join_into(scope, outer)
        return outer.env["$v"]

    def _ifexp(self, test: ast.expr, body: ast.expr, orelse: ast.expr, scope: _Scope, node: ast.AST) -> Value:
        cond = self.truth(test, scope)
        if isinstance(cond, Static):
            return self.expr(body if cond.value else orelse, scope)
        c = self.to_bool(cond, test)
        outer = _Scope(env=copy_env(scope.env))
        outer.env["$v"] = Static(None)

        def branch(x: ast.expr) -> Callable[[_Scope], None]:
            def run(sub: _Scope) -> None:
                sub.env["$v"] = self.expr(x, sub)
            return run

        self._branch(c, [], [], outer, node, then_fn=branch(body), else_fn=branch(orelse))
        self._join_into(scope, outer)
        return outer.env["$v"]

    def to_bool(self, v: Value, node: ast.AST) -> SSAValue:
        """The i1 truth value of `v` (a device→host read when `v` is a tensor)."""
        if isinstance(v, Static):
            return self.materialize(Static(bool(v.value)), node)
        ssa = self.materialize(v, node)
        if ssa.type == i1:
            return ssa
        if _many_elements(ssa):  # fails when run, as in Python (dead code folds away)
            ssa = self.emit(d.CallFunctionOp("builtins.bool", [ssa]), node).results[0]
        return self.emit(d.ToBoolOp(ssa), node).results[0]

    # -------------------------------------------------------------- indexing

    def _index(self, index: ast.expr, scope: _Scope) -> Value:
        if isinstance(index, ast.Slice):
            parts = [Static(None) if p is None else self.expr(p, scope) for p in (index.lower, index.upper, index.step)]
            if all(isinstance(p, Static) for p in parts):
                return Static(slice(*(p.value for p in parts)))  # type: ignore[union-attr]
            return self.call_function("builtins.slice", parts, {}, index)
        if isinstance(index, ast.Tuple):
            items = [self._index(x, scope) for x in index.elts]
            if all(isinstance(x, Static) for x in items):
                return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
            return SeqVal(items)
        return self.expr(index, scope)

    def _subscript(self, base: Value, index: Value, node: ast.AST) -> Value:
        if isinstance(base, ModuleRef):
            m = base.module
            if not isinstance(index, Static):
                if self.loop_depth:
                    raise NeedsStatic
                if isinstance(m, (nn.Sequential, nn.ModuleList)) and isinstance(index, SSAValue):
                    return IndexedModule(base, index)
                raise self.error(node, "indexing a module container needs a compile-time index")
            if isinstance(m, nn.ModuleDict):
                if index.value not in m._modules:
                    raise self.error(node, f"'{base.path}' has no key {index.value!r}")
                return base.member(index.value)
            if isinstance(m, (nn.Sequential, nn.ModuleList)):
                keys = list(m._modules)
                if isinstance(index.value, slice):
                    raise self.unsupported(node, "slicing a module container")
                try:
                    return base.member(keys[index.value])
                except (IndexError, TypeError):
                    raise self.error(node, f"index {index.value!r} out of range for '{base.path}' ({len(keys)} modules)") from None
            raise self.error(node, f"module '{base.path}' is not indexable")
        if isinstance(base, Static) and isinstance(index, Static):
            try:
                return Static(base.value[index.value])
            except Exception as ex:
                raise self.error(node, f"constant indexing fails: {ex}") from None
        if isinstance(base, Static) and isinstance(base.value, (list, tuple)):
            if self.loop_depth:
                raise NeedsStatic
            return self._get_at_run_time(SeqVal([Static(e) for e in base.value]), index, node)
        if isinstance(base, ObjectVal):
            if base.probe is None:
                raise self.error(node, f"'{base.cls.__name__}' object is not subscriptable")
            if not isinstance(index, Static):
                raise self.unsupported(node, f"indexing a {base.cls.__name__} object with a run-time index")
            return self.probe_answer(base, lambda o: o[index.value], node)
        if isinstance(base, DictVal):
            if not isinstance(index, Static):
                raise self.unsupported(node, "indexing a Python dict with a run-time key")
            if index.value not in base.keys:
                raise self.error(node, f"KeyError: {index.value!r} is not in this dict")
            return base.get(index.value)
        if isinstance(base, SeqVal):
            if not isinstance(index, Static):
                if self.loop_depth:
                    raise NeedsStatic  # unrolled, each iteration's index known
                return self._get_at_run_time(base, index, node)
            sel = base.items[index.value]
            return SeqVal(sel, base.is_list) if isinstance(sel, list) else sel
        if isinstance(base, SSAValue) and isinstance(base.type, d.ListType):
            return self._list_get(base, index, node)
        return self.call_function("_operator.getitem", [base, index], {}, node)

    def _list_get(self, held: SSAValue, index: Value, node: ast.AST) -> SSAValue:
        if isinstance(index, Static) and isinstance(index.value, slice):  # `tokens[-3:]`: a list, by the host
            operands = [held, self.materialize(index, node)]
            return self.emit(d.CallFunctionOp("_operator.getitem", operands, result_type=d.ListType(d.ANY)),
                             node).results[0]
        at = self.materialize(index, node)
        if at.type == d.ANY:  # `seqs[scores.argmax()]`: a tensor index, read on the host
            at = self.emit(d.ItemOp(at, i64), node).results[0]
        if at.type != i64:
            raise self.unsupported(node, "indexing a list held at run time by a run-time slice")
        return self.emit(d.ListGetOp(held, at), node).result

    def _get_at_run_time(self, seq: SeqVal, index: Value, node: ast.AST) -> SSAValue:
        """`seqs[best]`, a Python sequence indexed by a run-time number (beam search
        picking its best hypothesis): the host holds a copy and picks."""
        if isinstance(seq, (DictVal, NamedSeq)):
            raise self.unsupported(node, "indexing a dict or named tuple with a run-time value")
        held = self.held_copy(seq, node)
        if held is None:
            raise self.unsupported(node, "indexing a sequence of Python objects with a run-time value")
        return self._list_get(held, index, node)

    def held_copy(self, seq: SeqVal, node: ast.AST) -> SSAValue | None:
        """`dycl.make_list` of `seq`'s elements; None (nothing emitted) where one is a
        Python object or a list, which a held list's element type cannot be."""
        mark = self.block.last_op
        elems = [self.materialize(e, node) for e in seq.items]
        if any(e.type == d.PYOBJ or isinstance(e.type, d.ListType) for e in elems):
            while self.block.last_op is not mark:
                self.block.erase_op(self.block.last_op, safe_erase=False)  # type: ignore[arg-type]
            return None
        return self.emit(d.MakeListOp(elems), node).result

    # ------------------------------------------------------------------ calls

    def _call(self, e: ast.Call, scope: _Scope) -> Value:
        # An inlined callee may update a caller's tensor in place (see _update_in_place).
        self._caller_scopes.append(scope)
        self._caller_if_depths.append(self._if_depth)
        try:
            return self._dispatch_call(e, scope)
        finally:
            self._caller_scopes.pop()
            self._caller_if_depths.pop()

    def _starred_display(self, e: ast.Tuple | ast.List, scope: _Scope) -> Value:
        """`(*xs, y)`, `[*a, *b]`: the elements of what is known at compile time, and
        `+` of the pieces where a starred value is known only at run time (a tuple a
        loop grows): `tuple(xs) + (y,)`."""
        is_list = isinstance(e, ast.List)
        pieces: list[Value] = []
        items: list[Value] = []
        for x in e.elts:
            if not isinstance(x, ast.Starred):
                items.append(self.expr(x, scope))
                continue
            value = self.expr(x.value, scope)
            known = self.iter_items(value, x)
            if known is not None:
                items.extend(known)
                continue
            if items:
                pieces.append(SeqVal(items, is_list=is_list))
                items = []
            kind = list if is_list else tuple
            pieces.append(self.call_value(GlobalRef(f"builtins.{kind.__name__}", kind), [value], {}, x, scope))
        if not pieces:
            if not is_list and all(isinstance(x, Static) for x in items):
                return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
            return SeqVal(items, is_list=is_list)
        if items:
            pieces.append(SeqVal(items, is_list=is_list))
        out = pieces[0]
        for piece in pieces[1:]:
            out = self._binop(ast.Add(), out, piece, e)
        return out

    def _dispatch_call(self, e: ast.Call, scope: _Scope) -> Value:
        if is_super_init(e) and self.fn is not None and self.fn.tree is not None:
            fdef = self.fn.tree.body[0]  # type: ignore[attr-defined]
            me = scope.env.get(fdef.args.args[0].arg) if isinstance(fdef, ast.FunctionDef) and fdef.args.args else None
            if isinstance(me, ExceptionVal):
                return self.exception_super_init(me, [self.expr(a, scope) for a in e.args])
        if isinstance(e.func, ast.Name) and e.func.id == "super" and "super" not in scope.env:
            return self._super(e, scope)
        e.func._dycl_callee = True  # type: ignore[attr-defined] (an attribute there is a method, not a value)
        fn = self.expr(e.func, scope)
        args: list[Value] = []
        for a in e.args:
            if isinstance(a, ast.Starred):  # f(*xs): the elements, known at compile time
                value = self.expr(a.value, scope)
                items = self.iter_items(value, a)
                if items is None and len(e.args) == 1 and isinstance(e.func, ast.Attribute) and \
                        e.func.attr in _SIZE_VARARGS:
                    args.append(value)  # x.view(*shape) is x.view(shape): torch takes either
                    continue
                if items is None:
                    raise self.unsupported(a, "*args over a run-time value")
                args.extend(items)
            else:
                args.append(self.expr(a, scope))
        kwargs: dict[str, Value] = {}
        for k in e.keywords:
            if k.arg is None:  # f(**kw)
                for key, v in self._dict_items(self.expr(k.value, scope), k.value):
                    if not isinstance(key, str):
                        raise self.error(k.value, "keywords must be strings")
                    kwargs[key] = v
            else:
                kwargs[k.arg] = self.expr(k.value, scope)
        return self.call_value(fn, args, kwargs, e, scope)

    def _super(self, e: ast.Call, scope: _Scope) -> Value:
        """`super()` in a method of a module (the class is the method's `__class__`
        cell, the instance its first parameter), or `super(cls, self)`."""
        assert self.fn is not None
        if e.args:
            args = [self.expr(a, scope) for a in e.args]
            cls = args[0].obj if len(args) == 2 and isinstance(args[0], (GlobalRef, StaticObject)) else None
            me = args[1] if len(args) == 2 else None
        else:
            fdef = self.fn.tree.body[0] if self.fn.tree is not None else None  # type: ignore[attr-defined]
            first = fdef.args.args[0].arg if isinstance(fdef, ast.FunctionDef) and fdef.args.args else None
            cls, me = self.fn.closure.get("__class__"), scope.env.get(first) if first else None
        if not (isinstance(cls, type) and isinstance(me, ModuleRef) and isinstance(me.module, cls)):
            raise self.unsupported(e, "super() outside a method of a module")
        return SuperRef(me, cls)

    def call_value(self, fn: Value, args: list[Value], kwargs: dict[str, Value], e: ast.AST, scope: _Scope) -> Value:
        self._call_scopes.append(scope)  # where an inlined callee's module state comes from and goes back to
        try:
            return self._call_value(fn, args, kwargs, e, scope)
        finally:
            self._call_scopes.pop()

    def _call_value(self, fn: Value, args: list[Value], kwargs: dict[str, Value], e: ast.AST, scope: _Scope) -> Value:
        if isinstance(fn, ModuleRef):
            return self._call_module(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, IndexedModule):
            return self._call_indexed(fn, args, kwargs, e, scope)  # type: ignore[arg-type]
        if isinstance(fn, MethodRef):
            return self._call_method(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, Partial):
            return self.call_value(fn.fn, [*fn.args, *args], {**fn.kwargs, **kwargs}, e, scope)
        if isinstance(fn, GlobalRef):
            if fn.obj is getattr(torch, "cond", None):
                return self.call_cond(args, kwargs, e, scope)
            if fn.obj is functools.partial and args and isinstance(
                    args[0], (MethodRef, ModuleRef, Closure, GlobalRef, Partial, IndexedModule)):
                return Partial(args[0], tuple(args[1:]), dict(kwargs))
            return self._call_global(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, Closure):
            return self._call_closure(fn, args, kwargs, e, scope)
        if isinstance(fn, StaticObject) and type(fn.obj) in STATELESS_MODULES:
            qualname, fields = STATELESS_MODULES[type(fn.obj)]
            settings = {f: Static(getattr(fn.obj, f)) for f in fields}
            if len(args) != 1 or kwargs:
                raise self.error(e, f"{type(fn.obj).__name__} takes one positional input")
            if settings.pop("inplace", Static(False)).value:
                return self._in_place_call(qualname, args, settings, e)  # type: ignore[arg-type]
            return args[0] if qualname == "" else self.call_function(qualname, args, settings, e)
        if isinstance(fn, (ObjectRef, StaticObject)):
            target = fn.obj
            if isinstance(target, functools.partial) and all(_simple(a) for a in (*target.args, *target.keywords.values())):
                # self.act = functools.partial(F.leaky_relu, negative_slope=0.2)
                kwargs = {**{k: Static(v) for k, v in target.keywords.items()}, **kwargs}
                args, target = [*(Static(a) for a in target.args), *args], target.func
            if inspect.isfunction(target) and not isinstance(target, types.MethodType):
                # a function or lambda held in an attribute: self.act = F.gelu, lambda t: t * 2
                q = qualname_of(target)
                if q is not None:
                    return self._call_global(GlobalRef(q, target), args, kwargs, e)  # type: ignore[arg-type]
                return self._inline(target, None, args, kwargs, e)
            if callable(target) and (q := qualname_of(target)) is not None and _importable(q, target):
                return self._call_global(GlobalRef(q, target), args, kwargs, e)  # type: ignore[arg-type]
        raise self.error(e, "this value is not callable")

    def _call_module(self, m: ModuleRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call,
                     temporary: bool = False) -> Value:
        """`temporary`: the input is the previous layer's output inside an nn.Sequential
        (no name holds it), not the call's argument."""
        if _has_hooks(m.module):
            raise self.unsupported(node, f"module '{m.path}' with forward hooks (they run when it is called)")
        if isinstance(m.module, torch.jit.ScriptModule):  # no backend exports TorchScript; its interpreter runs it
            raise self.unsupported(node, f"TorchScript submodule '{m.path}' (scripted or traced)")
        if isinstance(m.module, nn.Sequential):
            if kwargs or len(args) != 1:
                raise self.error(node, "nn.Sequential takes exactly one positional input")
            v = args[0]
            for k, (name, child) in enumerate((n, c) for n, c in m.module._modules.items() if c is not None):
                v = self._call_module(m.child(name), [v], {}, node, temporary=temporary or k > 0)
            return v
        if isinstance(m.module, (nn.ModuleList, nn.ModuleDict)) and "forward" not in {
                k for c in type(m.module).__mro__ if c not in (nn.ModuleList, nn.ModuleDict, nn.Module) for k in vars(c)}:
            raise self.error(node, f"'{m.path}' is a {type(m.module).__name__}, which is not callable")
        if is_leaf_module(m.module):
            ops = [self.materialize(a, node) for a in args] + [self.materialize(v, node) for v in kwargs.values()]
            result = self.emit(d.CallModuleOp(m.path, ops, list(kwargs)), node).results[0]
            if getattr(m.module, "inplace", False) is True and args and maybe_tensor(args[0]) and not temporary:
                # nn.ReLU(inplace=True): its input holds the result too, as in eager
                return self._rebind_in_place(args[0], node.args[0] if node.args else None, result, node)
            return self._structured(result, _LEAF_RESULTS.get(type(m.module)), node)
        if type(m.module).__call__ is not nn.Module.__call__:
            raise self.unsupported(node, f"module '{m.path}' with a custom __call__")
        return self._inline(self._forward_of(m.module, node), m, args, kwargs, node)

    def _forward_of(self, m: nn.Module, node: ast.AST | None) -> Any:
        """What `nn.Module.__call__` calls: an instance attribute `forward` (set in
        `__init__`, e.g. `self.forward = self.forward_w_pooling`) shadows the class's."""
        own = m.__dict__.get("forward")
        if own is None:
            return type(m).forward
        if inspect.ismethod(own) and own.__self__ is m:
            return own.__func__
        message = f"'forward' of {type(m).__name__} is an instance attribute that is not one of its methods"
        if node is None:
            raise FrontendError(message)
        raise self.unsupported(node, message)

    def _call_indexed(self, fn: IndexedModule, args: list[Value], kwargs: dict[str, Value], node: ast.Call, scope: _Scope) -> Value:
        """`self.experts[i](x)` with a run-time `i`: an if-chain over the children."""
        members = fn.container.members()
        n = len(members)

        def pick(k: int, sub: _Scope) -> None:
            if k == n - 1:
                m = members[k]
                if not isinstance(m, ModuleRef):
                    raise self.error(node, "calling a None entry of a module list")
                sub.env["$v"] = self._call_module(m, args, kwargs, node)
                return
            hit = self._compare_index(fn.index, k, n, node)
            inner = _Scope(env=copy_env(sub.env))
            self._branch(hit, [], [], inner, node,
                         then_fn=lambda s2: pick_last(k, s2), else_fn=lambda s2: pick(k + 1, s2))
            sub.env["$v"] = inner.env["$v"]

        def pick_last(k: int, sub: _Scope) -> None:
            m = members[k]
            if not isinstance(m, ModuleRef):
                raise self.error(node, "calling a None entry of a module list")
            sub.env["$v"] = self._call_module(m, args, kwargs, node)

        outer = _Scope(env=copy_env(scope.env))
        outer.env["$v"] = Static(None)
        pick(0, outer)
        self._join_into(scope, outer)
        return outer.env["$v"]

    def _compare_index(self, index: SSAValue, k: int, n: int, node: ast.AST) -> SSAValue:
        """`index == k or index == k - n` (Python's negative indices)."""
        eq = self.call_function("_operator.eq", [index, Static(k)], {}, node)
        neg = self.call_function("_operator.eq", [index, Static(k - n)], {}, node)
        return self.emit(arith.OrIOp(self.to_bool(eq, node), self.to_bool(neg, node)), node).results[0]

    def _call_method(self, mref: MethodRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
        recv = mref.receiver
        if isinstance(recv, SuperRef):
            method = getattr(super(recv.cls, recv.receiver.module), mref.name, None)
            if not inspect.ismethod(method):
                raise self.unsupported(node, f"super().{mref.name}, which is not a method")
            if (method.__module__ or "").startswith("torch."):
                raise self.unsupported(node, f"super().{mref.name} into torch's own {type(method.__self__).__name__}")
            return self._inline(method.__func__, recv.receiver, args, kwargs, node)
        if isinstance(recv, ModuleRef):
            if mref.name == "forward":
                return self._call_module(recv, args, kwargs, node)
            if isinstance(recv.module, (nn.ModuleDict, nn.ModuleList, nn.Sequential)) and mref.name in (
                    "items", "keys", "values", "children", "named_children") and not args and not kwargs:
                names = list(recv.module._modules)
                members = {"items": [SeqVal([Static(k), recv.member(k)]) for k in names],
                           "named_children": [SeqVal([Static(k), recv.member(k)]) for k in names],
                           "keys": [Static(k) for k in names],
                           "values": [recv.member(k) for k in names], "children": [recv.member(k) for k in names]}
                return SeqVal(members[mref.name])
            if is_leaf_module(recv.module):
                # torch.nn's internals are never inlined; a method that only changes how
                # weights are laid out (cuDNN's flatten_parameters) changes no result.
                if mref.name in _LAYOUT_ONLY_METHODS:
                    return Static(None)
                raise self.unsupported(node, f"method '{mref.name}' of the torch.nn module '{recv.path}' "
                                             f"({type(recv.module).__name__})")
            static = self.static_method_call(recv, mref.name, args, kwargs, node)
            if static is not None:
                return static
            method = getattr(type(recv.module), mref.name)
            # a method replaced after the compile (on the instance or its class) is noticed
            self.folded_reads.setdefault((id(recv.module), f"method {mref.name}"), (recv.module, mref.name, "method"))
            if (getattr(method, "__module__", None) or "").startswith("torch."):
                # nn.Module's own machinery (register_buffer, parameters, apply): its
                # internals are not the model's code; called as Python, its writes recorded.
                raise self.unsupported(node, f"torch's nn.Module.{mref.name}")
            return self._inline(method, recv, args, kwargs, node)
        if isinstance(recv, SeqVal):
            return self.container_method(recv, mref.name, args, kwargs, node)
        if isinstance(recv, Static):
            if isinstance(recv.value, (list, dict, set)) and mref.name in MUTATING_METHODS:
                raise self.unsupported(node, f"'{mref.name}' on a Python container held by the model (mutable state)")
            if all(isinstance(a, Static) for a in args) and all(isinstance(v, Static) for v in kwargs.values()):
                if not _pure_receiver(recv.value):
                    # logger.warning(...), warnings.warn(...): an effect each call has, not a value
                    raise self.unsupported(node, f"method '{mref.name}' of a {type(recv.value).__name__} object "
                                                 "(it may have effects each call)")
                return Static(getattr(recv.value, mref.name)(
                    *(a.value for a in args), **{k: v.value for k, v in kwargs.items()}))  # type: ignore[union-attr]
            if self.loop_depth:
                raise NeedsStatic
            raise self.error(node, f"method '{mref.name}' of a Python constant with run-time arguments")
        if mref.name == "item" and not args:
            return self._item(recv, node, d.ANY)
        if mref.name.endswith("_") and not mref.name.endswith("__"):
            return self._in_place_method(recv, mref.name, args, kwargs, node)
        if mref.name in MUTATING_METHODS and (not hasattr(torch.Tensor, mref.name) or (
                isinstance(recv, SSAValue) and isinstance(recv.type, d.ListType))):
            # words.append(w) on a list a region made: a side effect the IR cannot hold.
            raise self.unsupported(node, f"'{mref.name}' on a Python container computed at run time")
        ops = [self.materialize(recv, node)] + [self.materialize(a, node) for a in args]
        ops += [self.materialize(v, node) for v in kwargs.values()]
        result = self.emit(d.CallMethodOp(mref.name, ops, list(kwargs)), node).results[0]
        if named := return_type_of(mref.name, args, kwargs):
            self.named_tuples[result] = named
        return result

    def _in_place_call(self, qualname: str, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
        """`F.relu(y, inplace=True)`, `nn.ReLU(inplace=True)(y)`: y now holds the result,
        for every name bound to it, as for `y.relu_()` (the call's value is y)."""
        new = self.call_function(qualname, args, kwargs, node)
        return self._rebind_in_place(args[0], node.args[0] if node.args else None, new, node)

    def _rebind_in_place(self, recv: Value, receiver: ast.expr | None, new: SSAValue, node: ast.Call) -> Value:
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and \
                receiver.func.attr.endswith("_") and not receiver.func.attr.endswith("__"):
            receiver = receiver.func.value  # F.relu(y.sub_(2), inplace=True): y.sub_ returns y itself
        if isinstance(receiver, (ast.Call, ast.BinOp, ast.UnaryOp)):
            return new  # a temporary nobody else holds: `F.relu(self.bn(x), inplace=True)`
        scope = self._caller_scopes[-1]
        if not (isinstance(recv, SSAValue) and isinstance(receiver, ast.Name) and scope.env.get(receiver.id) is recv):
            raise self.unsupported(node, "an in-place call (inplace=True) on a value that is not a named tensor")
        new = self.call_function("dycl.tensor_ops.inplace_result", [new, recv], {}, node)
        new = self.emit(d.CallMethodOp("clone", [new]), node).results[0]
        self._update_in_place(receiver.id, recv, new, scope, node)
        return new

    def _in_place_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value],
                         node: ast.Call) -> Value:
        """`h.add_(e)`: `h` now holds `h.add(e)` (in h's dtype and shape, as the in-place
        op keeps them), for every name bound to it, as `h += e` does; a view of `h` or
        an input is refused (its base or the caller would have to change too)."""
        if name in ("requires_grad_", "detach_"):
            return recv  # autograd bookkeeping: no value changes
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None  # type: ignore[attr-defined]
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and \
                receiver.func.attr.endswith("_"):  # h.mul_(2).add_(1): both update h
            receiver = receiver.func.value
        scope = self._caller_scopes[-1]
        if isinstance(receiver, ast.Name) and scope.env.get(receiver.id) is not recv:
            receiver = None
        out_of_place = name[:-1]
        if not isinstance(recv, SSAValue) or not isinstance(receiver, ast.Name) or name in _SHAPE_CHANGING_IN_PLACE \
                or name.rstrip("_") in _RANDOM_IN_PLACE or not (hasattr(torch.Tensor, out_of_place) or name in _IN_PLACE_AS):
            raise self.unsupported(node, f"in-place tensor method '{name}' (in-place mutation)" + (
                f"; use '{out_of_place}'" if hasattr(torch.Tensor, out_of_place) else ""))
        if name == "copy_":
            (src,) = args
            new = self.emit(d.CallMethodOp("type_as", [self.materialize(src, node), recv]), node).results[0]
            new = self.emit(d.CallMethodOp("expand_as", [new, recv]), node).results[0]
            new = self.emit(d.CallMethodOp("clone", [new]), node).results[0]
        elif name == "zero_":
            new = self.call_function("torch.zeros_like", [recv], {}, node)
        elif name == "fill_":
            new = self.call_function("torch.full_like", [recv, *args], {}, node)
        else:
            ops = [recv, *(self.materialize(a, node) for a in args), *(self.materialize(v, node) for v in kwargs.values())]
            new = self.emit(d.CallMethodOp(out_of_place, ops, list(kwargs)), node).results[0]
            # The in-place op keeps the receiver's dtype and shape (eager fails where it cannot).
            new = self.call_function("dycl.tensor_ops.inplace_result", [new, recv], {}, node)
            new = self.emit(d.CallMethodOp("clone", [new]), node).results[0]
        self._update_in_place(receiver.id, recv, new, scope, node)
        return new

    def _item(self, v: Value, node: ast.AST, result_type: Attribute) -> SSAValue:
        """A host read of a one-element tensor; `!dycl.any` takes the tensor's dtype."""
        ssa = self.materialize(v, node)
        if isinstance(v, SSAValue) and v.type in (i64, f64, i1):
            return ssa
        if _many_elements(ssa):  # fails when run, as in Python (dead code folds away)
            return self.emit(d.CallMethodOp("item", [ssa]), node).results[0]
        return self.emit(d.ItemOp(ssa, result_type), node).results[0]

    def _call_global(self, g: GlobalRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
        obj = g.obj
        if g.qualname in FORBIDDEN_CALLS or g.qualname.removeprefix("builtins.") in FORBIDDEN_CALLS:
            raise self.unsupported(node, FORBIDDEN_CALLS.get(g.qualname, FORBIDDEN_CALLS.get(g.qualname.removeprefix("builtins."), g.qualname)))
        if g.qualname.startswith(("random.", "numpy.random")):
            raise self.unsupported(node, "Python-side randomness")
        if g.qualname.startswith(_SIDE_EFFECT_MODULES):
            raise self.unsupported(node, f"a call with side effects ({g.qualname})")  # runs as Python, as in eager
        statics = all(isinstance(a, Static) for a in args) and all(isinstance(v, Static) for v in kwargs.values())
        if any(obj is f for f in _TYPE_ANNOTATIONS) and len(args) == 2 and not kwargs:  # torch.jit.annotate(List[Tensor], [])
            return args[1]
        if any(obj is f for f in _NOT_COMPILING) and not args and not kwargs:  # eager is neither scripting nor tracing
            return Static(False)
        if obj is range:
            if not statics:
                full = [Static(0), args[0], Static(1)] if len(args) == 1 else list(args) + [Static(1)] * (3 - len(args))
                return RuntimeRange(*full)  # type: ignore[return-value]
            return Static(range(*(a.value for a in args)))  # type: ignore[union-attr]
        if obj is len:
            (a,) = args
            if isinstance(a, ObjectVal):
                if a.probe is None:
                    raise self.unsupported(node, f"len() of a {a.cls.__name__} object")
                return self.probe_answer(a, len, node)
            if isinstance(a, SeqVal):
                return Static(len(a.items))
            if isinstance(a, SSAValue) and isinstance(a.type, d.ListType):
                return self.emit(d.ListLenOp(a), node).result
            if isinstance(a, ModuleRef):
                return Static(len(a.module))
        if (obj in (dict, collections.OrderedDict, reversed) or not statics) and (
                over := self.sequence_builtin(obj, args, kwargs, node)) is not None:
            return over
        if obj in (enumerate, zip):
            seqs = [self._as_sequence(a, node) for a in args]
            if obj is enumerate:
                start = kwargs.get("start", Static(0))
                assert isinstance(start, Static)
                return SeqVal([SeqVal([Static(i + start.value), x]) for i, x in enumerate(seqs[0])])
            return SeqVal([SeqVal(list(t)) for t in zip(*seqs)])
        if any(obj is f for f in _ITERTOOLS) and not kwargs and (obj in (itertools.product, itertools.chain) or all(
                isinstance(a, Static) for a in args[1:])):
            # over compile-time sequences: itertools.product(range(2), self.heads)
            if obj in (itertools.combinations, itertools.permutations):
                seqs, rest = [self._as_sequence(args[0], node)], [a.value for a in args[1:]]  # type: ignore[union-attr]
            else:
                seqs, rest = [self._as_sequence(a, node) for a in args], []
            if obj is itertools.chain:
                return SeqVal([x for seq in seqs for x in seq])
            return SeqVal([SeqVal(list(t)) for t in obj(*seqs, *rest)])
        if obj in (getattr, hasattr) and len(args) >= 2 and isinstance(args[1], Static):
            target, name = args[0], args[1].value
            if obj is hasattr:
                if isinstance(target, ModuleRef):
                    return Static(hasattr(target.module, name))
                if isinstance(target, StaticObject):
                    return Static(hasattr(target.obj, name))
            elif isinstance(target, (ModuleRef, GlobalRef, StaticObject)):
                if len(args) == 3 and isinstance(target, StaticObject) and not hasattr(target.obj, name):
                    return args[2]
                if len(args) == 3 and isinstance(target, ModuleRef) and not hasattr(target.module, name):
                    # Absent now; recorded as read, so a forward that sets it is redone with this read on the host.
                    self._fold_read(target.module, name, node)
                    return args[2]
                return self._attribute(target, name, node)
        if obj in (getattr, hasattr) and len(args) >= 2 and isinstance(args[0], ModuleRef):
            if self.loop_depth:
                raise NeedsStatic
            raise self.error(node, f"{obj.__name__}() on a module needs a compile-time attribute name")
        if obj is type and len(args) == 1 and isinstance(args[0], (ModuleRef, StaticObject)):
            target = args[0]
            cls = type(target.module if isinstance(target, ModuleRef) else target.obj)
            return self._global(cls, cls.__name__, node)
        if obj is isinstance:
            (v, cls) = args
            classes = _classes_of(cls)
            if isinstance(v, (StaticObject, ModuleRef)) and classes is not None:
                return Static(isinstance(v.obj if isinstance(v, StaticObject) else v.module, classes))
            kind = _python_type_of(v)
            if kind is not None and classes is not None:
                return Static(issubclass(kind, classes))
            raise self.unsupported(node, "isinstance() of a value whose Python type is known only at run time")
        if statics and (obj in PURE_BUILTINS or g.qualname.startswith("math.") or obj is builtins.__import__):
            # (`__import__('logging')`: the module, whose calls are then the model's own Python)
            return Static(obj(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()}))  # type: ignore[union-attr]
        if obj in (int, float, bool) and len(args) == 1:
            return self._convert_scalar(obj, args[0], node)
        if isinstance(obj, type) and issubclass(obj, nn.Module):
            if obj in STATELESS_MODULES and all(isinstance(a, Static) for a in (*args, *kwargs.values())):
                # `nn.Softmax(dim=-1)(h)` (old HF BERT): a module without state, built now
                made = obj(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})  # type: ignore[union-attr]
                return StaticObject(made, ast.unparse(node))
            raise self.unsupported(node, "creating a module inside forward")
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return self.make_exception(obj, args, kwargs, node)
        if (built := self.python_object(obj, args, kwargs, node)) is not None:
            return built
        if inspect.isfunction(obj) and not g.qualname.startswith("torch."):
            return self._inline(obj, None, args, kwargs, node)
        if "out" in kwargs and not (isinstance(kwargs["out"], Static) and kwargs["out"].value is None):
            raise self.unsupported(node, f"{g.qualname}(..., out=...), which writes an existing tensor")
        if isinstance(kwargs.get("inplace"), Static) and kwargs["inplace"].value is True and args:  # type: ignore[union-attr]
            return self._in_place_call(g.qualname, args, {k: v for k, v in kwargs.items() if k != "inplace"}, node)
        if g.qualname in _PROCESS_EFFECTS or g.qualname.startswith(_PROCESS_EFFECT_PREFIXES):
            # Not a value: reseeding, a check that raises, a global setting. As an op its
            # unused result was dropped (torch.manual_seed, torch._assert never happened).
            raise self.unsupported(node, f"'{g.qualname}', which acts on the process or raises")
        return self.call_function(g.qualname, args, kwargs, node)

    def _convert_scalar(self, kind: type, v: Value, node: ast.AST) -> SSAValue:
        if kind is bool:
            return self.to_bool(v, node)
        want = i64 if kind is int else f64
        if isinstance(v, SSAValue) and v.type in (i64, f64, i1) and v.type != want:
            # float(n) of a host int is a float (7.0), int(b) of a bool an int: a conversion, not a read
            return self.call_function(f"builtins.{kind.__name__}", [v], {}, node)
        return self._item(v, node, want)

    def _as_sequence(self, v: Value, node: ast.AST) -> list[Value]:
        items = self.iter_items(v, node)
        if items is None:
            raise self.unsupported(node, "enumerate/zip over a run-time value")
        return items

# torch.nn modules without parameters or buffers that forward may create and call
# (`nn.Softmax(dim=-1)(x)`): the functional call and the settings it passes on.
_F = "torch.nn.functional."
STATELESS_MODULES: dict[type, tuple[str, tuple[str, ...]]] = {
    nn.Softmax: (_F + "softmax", ("dim",)), nn.LogSoftmax: (_F + "log_softmax", ("dim",)),
    nn.Softmin: (_F + "softmin", ("dim",)), nn.ReLU: (_F + "relu", ("inplace",)),
    nn.ReLU6: (_F + "relu6", ("inplace",)), nn.LeakyReLU: (_F + "leaky_relu", ("negative_slope", "inplace")),
    nn.ELU: (_F + "elu", ("alpha", "inplace")), nn.GELU: (_F + "gelu", ("approximate",)),
    nn.SiLU: (_F + "silu", ("inplace",)), nn.Mish: (_F + "mish", ("inplace",)),
    nn.Hardswish: (_F + "hardswish", ("inplace",)), nn.Hardsigmoid: (_F + "hardsigmoid", ("inplace",)),
    nn.Hardtanh: (_F + "hardtanh", ("min_val", "max_val", "inplace")),
    nn.Softplus: (_F + "softplus", ("beta", "threshold")), nn.Sigmoid: ("torch.sigmoid", ()),
    nn.Tanh: ("torch.tanh", ()), nn.Flatten: ("torch.flatten", ("start_dim", "end_dim")), nn.Identity: ("", ()),
}


# Methods and torch functions whose sizes `f(*size)` may also be given as one
# sequence `f(size)` (HF's `x.view(*(x.size()[:-1] + (heads, head_dim)))`).
_SIZE_VARARGS = frozenset({"view", "reshape", "expand", "permute", "repeat", "tile", "new_zeros", "new_ones",
                           "new_empty", "zeros", "ones", "empty", "rand", "randn"})


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


def _writes_state(function: Any) -> bool:
    """A property getter that assigns to attributes or items, or rebinds globals:
    each read changes state, so it is compiled as the call it is rather than read
    once at compile time (a counter advanced by the compile and by the live guard)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False
    for n in ast.walk(tree):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
            n, (ast.AugAssign, ast.AnnAssign)) else []
        if isinstance(n, (ast.Global, ast.Nonlocal)) or any(
                isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
            return True
    return False


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


def _many_elements(v: SSAValue) -> bool:
    t = v.type
    if not isinstance(t, TensorType):
        return False
    shape = t.get_shape()
    return all(n >= 0 for n in shape) and math.prod(shape) != 1


def _simple(x: Any, depth: int = 0) -> bool:
    """A constant, or a list/tuple/dict of constants: folded at compile time."""
    if x is None or isinstance(x, (bool, int, float, str, torch.dtype, enum.Enum)):
        return True
    if depth > 3:
        return False
    if isinstance(x, (list, tuple)):
        return all(_simple(e, depth + 1) for e in x)
    if type(x) is dict:
        return all(_simple(k, depth + 1) and _simple(v, depth + 1) for k, v in x.items())
    return False


def _immutable(x: Any) -> bool:
    if isinstance(x, (tuple, frozenset)):
        return all(_immutable(e) for e in x)
    return x is None or isinstance(x, (bool, int, float, complex, str, bytes, torch.dtype, torch.Size, range, slice))


# torch functions called for an effect (random state, checks that raise, global
# settings): the model's own Python runs them, where eager does.
_PROCESS_EFFECTS = frozenset({
    "torch.manual_seed", "torch.seed", "torch.set_rng_state", "torch._assert", "torch._assert_async",
    "torch._check", "torch._check_value", "torch._check_index", "torch._check_type", "torch._check_is_size",
    "torch._check_not_implemented", "torch._check_with", "torch.use_deterministic_algorithms"})
_PROCESS_EFFECT_PREFIXES = ("torch.random.", "torch.cuda.", "torch.backends.", "torch.set_", "torch.autograd.set_")

# Objects whose methods on constant arguments compute values and nothing else, so
# they may run once at compile time.
_PURE_TYPES = (str, bytes, int, float, complex, bool, tuple, list, dict, set, frozenset, range, slice,
               type(None), torch.dtype, torch.device, torch.Size)
_PURE_MODULES = frozenset({"math", "operator", "string", "itertools", "functools", "numbers"})


def _pure_receiver(obj: Any) -> bool:
    if isinstance(obj, types.ModuleType):
        return obj.__name__ in _PURE_MODULES
    return isinstance(obj, _PURE_TYPES) or isinstance(obj, (torch.finfo, torch.iinfo))


_INT_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "element_size"})


def _bind_argument(spec: Any, block_args: Iterator[SSAValue], name: str) -> Value:
    """A parameter's value from its argument spec: a tensor input, a constant, a list or tuple."""
    if spec[0] == "tensor":
        arg = next(block_args)
        arg.name_hint = name if name.isidentifier() else None
        return arg
    if spec[0] == "constant":
        return Static(spec[2])
    items = [_bind_argument(s, block_args, f"{name}_{i}") for i, s in enumerate(spec[1])]
    if spec[0] == "tuple" and all(isinstance(x, Static) for x in items):
        return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
    return SeqVal(items, is_list=spec[0] == "list", argument=name if spec[0] == "list" else None)


def _importable(qualname: str, obj: Any) -> bool:
    try:
        return resolve_qualname(qualname) is obj
    except Exception:
        return False


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


def _classes_of(cls: Value) -> tuple[type, ...] | None:
    """isinstance()'s second argument: a class or a tuple of classes, known now."""
    if isinstance(cls, GlobalRef) and isinstance(cls.obj, type):
        return (cls.obj,)
    if isinstance(cls, Static) and isinstance(cls.value, type):
        return (cls.value,)
    items = cls.items if isinstance(cls, SeqVal) else cls.value if isinstance(cls, Static) and isinstance(
        cls.value, tuple) else None
    if items is None:
        return None
    parts = [_classes_of(c if isinstance(c, (GlobalRef, Static, SeqVal)) else Static(c)) for c in items]
    return None if any(p is None for p in parts) else tuple(c for p in parts for c in p)  # type: ignore[union-attr]


def _python_type_of(v: Value) -> type | None:
    """The Python type eager's value has, where the IR says: a host int/float/bool,
    a tensor, a tuple or list being built; None where only the run time knows."""
    if isinstance(v, Static):
        return type(v.value)
    if isinstance(v, SeqVal):
        return dict if isinstance(v, DictVal) else list if v.is_list else tuple
    if isinstance(v, SSAValue):
        if d.is_tensor_type(v.type):
            return torch.Tensor
        if isinstance(v.type, TupleType):
            return tuple  # (an LSTM's (h, c); named tuples are tuples too)
        op = v.owner
        if isinstance(op, d.CallMethodOp) and op.method.data in _INT_METHODS and (
                op.method.data != "size" or len(op.operands) == 2):
            return int  # x.size(0), x.dim(): typed only by shape inference, ints in eager
        return {str(i64): int, str(f64): float, str(i1): bool}.get(str(v.type))
    return None


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


def _has_hooks(m: nn.Module) -> bool:
    from torch.nn.modules import module as torch_module

    own = (m._forward_hooks, m._forward_pre_hooks, getattr(m, "_forward_hooks_with_kwargs", None))
    shared = (torch_module._global_forward_hooks, torch_module._global_forward_pre_hooks)
    return any(bool(h) for h in (*own, *shared))


# torch functions whose result is a Python object (its attributes are values: `.min`).
_PYTHON_OBJECT_RESULTS = {"torch.finfo", "torch.iinfo"}

# Module attribute listing the model's attributes (and its config objects') that
# the compile read and folded in, as "name @ file:line:col".
FOLDED_ATTR = "dycl.folded_attributes"


def _readable(expr: str) -> str:
    """`__dycl_root.get_submodule('enc').config` -> `enc.config`."""
    expr = re.sub(r"__dycl_root\.get_submodule\('([^']*)'\)", r"\1", expr)
    return expr.removeprefix("__dycl_root.").removeprefix("__dycl_root")


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
    dirty: set[tuple[int, str]] = set()
    for _ in range(16):
        lowerer = Lowerer(model, example_inputs, model_key, max_iterations, fallback, dirty, signature, as_python,
                          arguments)
        try:
            module = lowerer.lower()
        except Widen as w:
            raise w.error from None
        if lowerer.unknown_writes and lowerer.folded_attrs:
            raise FrontendError("a fallback region writes attributes of an object the compiler cannot follow, "
                                "and compiled code reads module attributes that it may change")
        weights = {(id(m), n): f"{path + '.' if path else ''}{n}" for path, m in model.named_modules()
                   for n, _ in (*m.named_parameters(recurse=False), *m.named_buffers(recurse=False))}
        changed = sorted(weights[k] for k in lowerer.written_attrs if k in weights)
        reads_weights = any(isinstance(op, d.ParamOp) for op in module.walk())
        if changed or (lowerer.unknown_writes and reads_weights):
            # Sub-DNNs hold parameters and buffers as constants: they would not see the change.
            what = f"its parameters or buffers ({', '.join(changed)})" if changed else "tensors it may hold"
            raise FrontendError(f"forward changes {what} in place, which compiled sub-DNNs hold as constants",
                                note="the model runs as eager Python (fallback='python'), or call it without the update")
        # Attributes a region writes are state: reading them at compile time was wrong.
        new = {k for k in lowerer.written_attrs if k in lowerer.folded_attrs} - dirty
        if not new:
            break
        dirty |= new
    else:
        raise FrontendError("module state written during forward did not settle")
    module.verify()
    if folded_reads is not None:
        folded_reads.extend(lowerer.folded_reads.values())
    return module


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
        fwd = model.forward
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
