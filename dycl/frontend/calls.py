"""Calls: of submodules (`dycl.call_module` for torch.nn's own modules, inlined
forwards for the model's), of methods (tensor methods, in-place updates, Python
objects' methods), and of globals (torch functions, builtins evaluated at compile
time on constants, the model's helper functions)."""

from __future__ import annotations

import ast
import builtins
import collections
import inspect
import itertools
import functools
import types
import typing
from typing import TYPE_CHECKING, Any

import torch
import torch.utils.checkpoint
from torch import nn
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType, TupleType, f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from dycl.diagnostics import FrontendError
from dycl.types import dtype_of
from dycl.dialects import dycl as d
from dycl.frontend.exceptions import is_super_init
from dycl.frontend.inplace import maybe_tensor
from dycl.frontend.state import state_key
from dycl.frontend.loops import NeedsStatic, RuntimeRange
from dycl.frontend.operator_calls import IN_PLACE_OPS, STATEMENT_DUNDERS, as_statement, statement_function
from dycl.frontend.values import (
    Closure,
    ModuleSlice,
    Partial,
    DictVal,
    ExceptionVal,
    MUTATING_METHODS,
    ObjectVal,
    GlobalRef,
    ObjectRef,
    StaticObject,
    IndexedModule,
    MethodRef,
    ModuleRef,
    SeqVal,
    Static,
    SuperRef,
    Value,
    copy_env,
    is_leaf_module,
    qualname_of,
    resolve_qualname,
    return_type_of,
)
from dycl.frontend.expressions import _many_elements, _simple
from dycl.frontend.scopes import _Scope

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer


# Globals that may be evaluated at compile time when all arguments are constants.
PURE_BUILTINS = {
    len, min, max, abs, int, float, bool, round, range, tuple, list, sum,
    isinstance, enumerate, zip, divmod, pow, str,
}


FORBIDDEN_CALLS = {
    "exec": "exec()", "eval": "eval()", "print": "print()", "input": "input()",
    "open": "open()", "setattr": "setattr()", "delattr": "delattr()",
    "object.__setattr__": "object.__setattr__()", "object.__delattr__": "object.__delattr__()",
    # Sparse tensors: no backend takes one, and the export densifies it (`_nnz()` read 0)
    **{f"torch.sparse_{k}_tensor": f"a sparse tensor (torch.sparse_{k}_tensor)"
       for k in ("coo", "csr", "csc", "bsr", "bsc", "compressed")},
    "random.random": "Python-side randomness (random)", "random.randint": "Python-side randomness (random)",
    # A PackedSequence is a Python object only recurrent modules take (as Python, with it)
    "torch.nn.utils.rnn.pack_padded_sequence": "a packed sequence (pack_padded_sequence)",
    "torch.nn.utils.rnn.pack_sequence": "a packed sequence (pack_sequence)",
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
    # Losses (`loss_fct = CrossEntropyLoss(); loss_fct(logits, labels)`, HF heads) take
    # (input, target); built without a class weight only.
    nn.CrossEntropyLoss: (_F + "cross_entropy", ("ignore_index", "reduction", "label_smoothing")),
    nn.NLLLoss: (_F + "nll_loss", ("ignore_index", "reduction")), nn.MSELoss: (_F + "mse_loss", ("reduction",)),
    nn.L1Loss: (_F + "l1_loss", ("reduction",)), nn.SmoothL1Loss: (_F + "smooth_l1_loss", ("reduction", "beta")),
    nn.BCEWithLogitsLoss: (_F + "binary_cross_entropy_with_logits", ("reduction",)),
    nn.KLDivLoss: (_F + "kl_div", ("reduction", "log_target")),
}
_LOSSES = frozenset({nn.CrossEntropyLoss, nn.NLLLoss, nn.MSELoss, nn.L1Loss, nn.SmoothL1Loss, nn.BCEWithLogitsLoss,
                     nn.KLDivLoss})


# Methods and torch functions whose sizes `f(*size)` may also be given as one
# sequence `f(size)` (HF's `x.view(*(x.size()[:-1] + (heads, head_dim)))`).
_SIZE_VARARGS = frozenset({"view", "reshape", "expand", "permute", "repeat", "tile", "new_zeros", "new_ones",
                           "new_empty", "zeros", "ones", "empty", "rand", "randn"})


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


def _importable(qualname: str, obj: Any) -> bool:
    try:
        return resolve_qualname(qualname) is obj
    except Exception:
        return False


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


def _legacy_tensor_type(c: Any) -> bool:
    """torch.FloatTensor, torch.cuda.LongTensor, ...: classes of a dtype and device."""
    return type(c) is type(torch.FloatTensor)


def _legacy_type_named(name: Any) -> Any:
    """The legacy tensor type a string names ('torch.LongTensor'), else None."""
    if not isinstance(name, str) or not name.startswith("torch."):
        return None
    try:
        found = resolve_qualname(name)
    except Exception:  # noqa: BLE001 (not a name torch has)
        return None
    return found if _legacy_tensor_type(found) else None


@functools.cache
def _cpu_type_string(dtype: torch.dtype) -> str:
    """`x.type()` of a CPU tensor of `dtype` ('torch.FloatTensor')."""
    return torch.empty(0, dtype=dtype).type()


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


def _has_hooks(m: nn.Module) -> bool:
    from torch.nn.modules import module as torch_module

    own = (m._forward_hooks, m._forward_pre_hooks, getattr(m, "_forward_hooks_with_kwargs", None))
    shared = (torch_module._global_forward_hooks, torch_module._global_forward_pre_hooks)
    return any(bool(h) for h in (*own, *shared))


# Calls that make a new tensor (no view of another): an in-place method on their
# result changes nothing anyone else holds.
_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
                        "new_zeros", "new_ones", "new_full", "new_empty", "new", "clone", "arange", "tensor", "eye"})


def _fresh_tensor(receiver: ast.expr | None) -> bool:
    """`torch.zeros(n, d)`, `x.new_zeros(...)`, `x.clone()`, `(a + b)`: an expression
    whose tensor is new (not a name's, not a view of one)."""
    if isinstance(receiver, (ast.BinOp, ast.UnaryOp)):
        return True
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and \
            receiver.func.attr in _SAME_OR_CONVERTED:
        return _fresh_tensor(receiver.func.value)  # `torch.zeros(1, 1).type_as(src)`: still nobody else's
    return isinstance(receiver, ast.Call) and isinstance(receiver.func, (ast.Attribute, ast.Name)) and \
        (receiver.func.attr if isinstance(receiver.func, ast.Attribute) else receiver.func.id) in _FACTORIES


# Methods that give back their receiver or a converted copy of it.
_SAME_OR_CONVERTED = frozenset({"type_as", "to", "type", "float", "double", "half", "long", "int", "bool",
                                "contiguous"})


# Code that is not the model's own: never inlined as a processor object's __call__.
_LIBRARY_MODULES = ("torch", "builtins", "functools", "typing")


def _compile_time_values(values: list[Value]) -> list[Any] | None:
    """The Python values of constants, objects folded at compile time and sequences
    of them; None where one is known only at run time."""
    out: list[Any] = []
    for v in values:
        if isinstance(v, Static):
            out.append(v.value)
        elif isinstance(v, StaticObject):
            out.append(v.obj)
        elif type(v) is SeqVal and (items := _compile_time_values(v.items)) is not None:
            out.append(items if v.is_list else tuple(items))
        else:
            return None
    return out


def _own_python_call(target: Any) -> tuple[Any, Any] | None:
    """(function, object) where calling `target` runs Python code of the model's own
    classes on a plain object: a bound method of one, or an instance whose class
    defines `__call__` (HF's logits processors). Not modules, torch or builtins."""
    if isinstance(target, types.MethodType):
        function, obj = target.__func__, target.__self__
    elif not isinstance(target, type):
        function, obj = getattr(type(target), "__call__", None), target
    else:
        return None
    if not inspect.isfunction(function) or isinstance(obj, (nn.Module, type)):
        return None
    if (function.__module__ or "").split(".")[0] in _LIBRARY_MODULES:
        return None
    return function, obj



_CHECKPOINTS = (torch.utils.checkpoint.checkpoint, torch.utils.checkpoint.checkpoint_sequential)
_CHECKPOINT_OPTIONS = {"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"}


# Methods that make or read sparse tensors: no backend takes one, and the export
# densifies it (`_nnz()` read 0). They run as Python.
_SPARSE_METHODS = {"to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc", "to_sparse_coo",
                   "_nnz", "coalesce", "is_coalesced", "sparse_dim", "dense_dim", "_indices", "_values",
                   "crow_indices", "col_indices", "ccol_indices", "row_indices", "to_dense"}
_ARGUMENT_CHANGING_MODULES = ("heapq.", "_heapq.", "bisect.", "_bisect.")


def _changes_its_arguments(obj: Any, qualname: str) -> bool:
    """Library calls that change a Python container passed to them: heapq's and
    bisect's functions, container methods called unbound (`list.append(l, v)`),
    operator's in-place forms (`operator.iadd(l, m)`)."""
    if qualname.startswith(_ARGUMENT_CHANGING_MODULES):
        return qualname.rsplit(".", 1)[-1] not in ("nlargest", "nsmallest", "merge", "bisect", "bisect_left",
                                                   "bisect_right")
    if getattr(obj, "__objclass__", None) in (list, dict, set, collections.deque, collections.OrderedDict):
        return True
    name = qualname.rsplit(".", 1)[-1]
    return qualname.startswith(("_operator.", "operator.")) and name.startswith("i") and name[1:] in _BINARY_NAMES


_BINARY_NAMES = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
                 "rshift", "concat"}


def _scripted_function(obj: Any) -> Any:
    """A @torch.jit.script function's Python function (inlined, as torch.compile does:
    no backend exports TorchScript), else None."""
    if isinstance(obj, torch.jit.ScriptFunction) and inspect.isfunction(
            original := getattr(obj, "_torchdynamo_inline", None)):
        return original
    return None


def _in_place_tensor_method(obj: Any) -> str | None:
    """The in-place tensor method a call of `obj` is on its first argument:
    `torch.Tensor.add_`, `torch.clamp_` and `F.relu_` (torch's function forms),
    `nn.init.zeros_`/`ones_`/`constant_` (zero_, fill_); else None."""
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str) or not name.endswith("_") or name.startswith("_"):
        return None
    if getattr(torch.Tensor, name, None) is obj:
        return name
    if obj in _INIT_AS_METHOD:
        return _INIT_AS_METHOD[obj]
    if hasattr(torch.Tensor, name) and obj in (getattr(torch, name, None), getattr(torch.nn.functional, name, None)):
        return name
    return None


_INIT_AS_METHOD = {torch.nn.init.zeros_: "zero_", torch.nn.init.constant_: "fill_", torch.nn.init.ones_: "fill_"}


def in_place_function(obj: Any) -> str | None:
    """The name of a torch function that updates a tensor argument in place and is no
    tensor method's form (`torch._foreach_lerp_`, `F.elu_`, a random `nn.init.*_`)."""
    name = getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None) or ""
    if isinstance(name, str) and name.endswith("_") and not name.endswith("__") and (
            module.startswith("torch") or getattr(torch, name, None) is obj):
        return name
    return None

class CallLowering:
    """Mixin of Lowerer: calls."""

    def _call(self: Lowerer, e: ast.Call, scope: _Scope) -> Value:
        # An inlined callee may update a caller's tensor in place (see _update_in_place).
        self._caller_scopes.append(scope)
        self._caller_if_depths.append(self._if_depth)
        try:
            return self._dispatch_call(e, scope)
        finally:
            self._caller_scopes.pop()
            self._caller_if_depths.pop()

    def _dispatch_call(self: Lowerer, e: ast.Call, scope: _Scope) -> Value:
        if is_super_init(e) and self.fn is not None and self.fn.tree is not None:
            fdef = self.fn.tree.body[0]  # type: ignore[attr-defined]
            me = scope.env.get(fdef.args.args[0].arg) if isinstance(fdef, ast.FunctionDef) and fdef.args.args else None
            if isinstance(me, ExceptionVal):
                return self.exception_super_init(me, [self.expr(a, scope) for a in e.args])
        if isinstance(e.func, ast.Name) and e.func.id == "super" and "super" not in scope.env:
            return self._super(e, scope)
        e.func._dycl_callee = True  # type: ignore[attr-defined] (an attribute there is a method, not a value)
        fn = self.expr(e.func, scope)
        if (done := self._call_as_statement(fn, e, scope)) is not None:
            return done
        if isinstance(fn, GlobalRef) and (method := _in_place_tensor_method(fn.obj)) and e.args and \
                not isinstance(e.args[0], ast.Starred):
            # `torch.Tensor.add_(self.buf, x)` is `self.buf.add_(x)`: the receiver is what changes
            rest = e.args[1:] if fn.obj is not torch.nn.init.ones_ else [ast.Constant(1.0)]
            call = ast.Call(func=ast.copy_location(ast.Attribute(e.args[0], method, ast.Load()), e),
                            args=rest, keywords=e.keywords)
            return self.expr(ast.copy_location(call, e), scope)
        if isinstance(fn, GlobalRef) and (name := in_place_function(fn.obj)) is not None:
            # (a call of it would run on the program's copies: what it changes would be lost)
            raise self.unsupported(e, f"'{fn.qualname}' updates its tensor arguments in place")
        args: list[Value] = []
        sizes: list[Value] = []  # `x.view(*x.shape[:-1], h, d)`: one sequence of sizes, made at run time
        for a in e.args:
            if isinstance(a, ast.Starred):  # f(*xs): the elements, known at compile time
                value = self.expr(a.value, scope)
                items = self.iter_items(value, a)
                if items is None and isinstance(e.func, ast.Attribute) and e.func.attr in _SIZE_VARARGS:
                    # x.view(*shape) is x.view(shape): torch takes either
                    sizes += [SeqVal(args), value] if args else [value]
                    args = []
                    continue
                if items is None:
                    raise self.unsupported(a, "*args over a run-time value")
                args.extend(items)
            else:
                args.append(self.expr(a, scope))
        if sizes:
            whole = sizes[0]
            for part in [*sizes[1:], *([SeqVal(args)] if args else [])]:
                whole = self.call_function("_operator.add", [whole, part], {}, e)
            args = [whole]
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

    def _call_as_statement(self: Lowerer, fn: Value, e: ast.Call, scope: _Scope) -> Value | None:
        """`operator.setitem(h, 0, v)`, `h.__iadd__(1)`, `torch.Tensor.__iadd__(h, 1)`:
        lowered as the statement they perform (see dycl.frontend.operator_calls)."""
        if isinstance(fn, MethodRef) and fn.name in STATEMENT_DUNDERS and isinstance(e.func, ast.Attribute) and \
                not (isinstance(fn.receiver, Static) and not hasattr(fn.receiver.value, fn.name)):
            dunder, target, rest = fn.name, e.func.value, list(e.args)
        elif isinstance(fn, GlobalRef) and (dunder := statement_function(fn.obj)) is not None and e.args:
            target, rest = e.args[0], list(e.args[1:])
        else:
            return None
        if e.keywords or any(isinstance(a, ast.Starred) for a in e.args) or \
                len(rest) != (2 if dunder == "__setitem__" else 1):
            raise self.unsupported(e, f"'{dunder}' called with these arguments")
        if dunder in IN_PLACE_OPS:
            old = self.expr(target, scope)
            if not isinstance(target, (ast.Name, ast.Subscript, ast.Attribute)) or \
                    not (maybe_tensor(old) or isinstance(old, SeqVal) and old.is_list):
                # nothing named changes: a number's or a tuple's new value, or a temporary's
                v = self._binop(IN_PLACE_OPS[dunder](), old, self.expr(rest[0], scope), e)
                if maybe_tensor(old) and isinstance(v, SSAValue):
                    v = self.call_function("dycl.tensor_ops.inplace_result", [v, old], {}, e)
                return v
        self._stmt(as_statement(dunder, target, rest, e), scope)
        return self.expr(target, scope) if dunder in IN_PLACE_OPS else Static(None)

    def _super(self: Lowerer, e: ast.Call, scope: _Scope) -> Value:
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

    def checkpoint_sequential(self: Lowerer, args: list[Value], kwargs: dict[str, Value], e: ast.AST,
                              scope: _Scope) -> Value:
        """`checkpoint_sequential(functions, segments, input)`: the functions in order."""
        named = dict(zip(("functions", "segments", "input"), args)) | kwargs
        functions, x = named.get("functions"), named.get("input")
        if functions is None or x is None or len(args) > 3:
            raise self.error(e, "checkpoint_sequential() takes (functions, segments, input)")
        if isinstance(functions, ModuleRef) and isinstance(functions.module, nn.Sequential):
            return self.call_value(functions, [x], {}, e, scope)
        items = self.iter_items(functions, e)
        if items is None:
            raise self.unsupported(e, "checkpoint_sequential() of functions known only at run time")
        for f in items:
            x = self.call_value(f, [x], {}, e, scope)
        return x

    def call_value(self: Lowerer, fn: Value, args: list[Value], kwargs: dict[str, Value], e: ast.AST, scope: _Scope) -> Value:
        self._call_scopes.append(scope)  # where an inlined callee's module state comes from and goes back to
        try:
            return self._call_value(fn, args, kwargs, e, scope)
        finally:
            self._call_scopes.pop()

    def _call_value(self: Lowerer, fn: Value, args: list[Value], kwargs: dict[str, Value], e: ast.AST, scope: _Scope) -> Value:
        if isinstance(fn, ModuleRef):
            return self._call_module(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, IndexedModule):
            return self._call_indexed(fn, args, kwargs, e, scope)  # type: ignore[arg-type]
        if isinstance(fn, ModuleSlice) and fn.sequential:
            return self._call_chain(fn.items, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, MethodRef):
            return self._call_method(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, Partial):
            return self.call_value(fn.fn, [*fn.args, *args], {**fn.kwargs, **kwargs}, e, scope)
        if isinstance(fn, GlobalRef):
            if statement_function(fn.obj) is not None:
                # (`functools.reduce(operator.iadd, outs)`: an update of the first, not a value)
                raise self.unsupported(e, f"'{fn.qualname}' called as a function value (an in-place update)")
            if fn.obj is getattr(torch, "cond", None):
                return self.call_cond(args, kwargs, e, scope)
            if fn.obj in _CHECKPOINTS and args:
                # Activation checkpointing recomputes in backward; the values are the call's.
                own = {k: v for k, v in kwargs.items() if k not in _CHECKPOINT_OPTIONS}
                if fn.obj is torch.utils.checkpoint.checkpoint:
                    return self.call_value(args[0], args[1:], own, e, scope)
                return self.checkpoint_sequential(args, own, e, scope)
            if fn.obj is functools.partial and args and isinstance(
                    args[0], (MethodRef, ModuleRef, Closure, GlobalRef, Partial, IndexedModule)):
                return Partial(args[0], tuple(args[1:]), dict(kwargs))
            return self._call_global(fn, args, kwargs, e)  # type: ignore[arg-type]
        if isinstance(fn, Closure):
            return self._call_closure(fn, args, kwargs, e, scope)
        if isinstance(fn, StaticObject) and type(fn.obj) in STATELESS_MODULES:
            qualname, fields = STATELESS_MODULES[type(fn.obj)]
            settings = {f: Static(getattr(fn.obj, f)) for f in fields}
            inputs = 2 if type(fn.obj) in _LOSSES else 1
            if len(args) != inputs or kwargs:
                raise self.error(e, f"{type(fn.obj).__name__} takes {'(input, target)' if inputs == 2 else 'one input'}"
                                    " as positional arguments here")
            if settings.pop("inplace", Static(False)).value:
                return self._in_place_call(qualname, args, settings, e)  # type: ignore[arg-type]
            return args[0] if qualname == "" else self.call_function(qualname, args, settings, e)
        if isinstance(fn, (ObjectRef, StaticObject)):
            target = fn.obj
            if isinstance(target, functools.partial) and all(_simple(a) for a in (*target.args, *target.keywords.values())):
                # self.act = functools.partial(F.leaky_relu, negative_slope=0.2)
                kwargs = {**{k: Static(v) for k, v in target.keywords.items()}, **kwargs}
                args, target = [*(Static(a) for a in target.args), *args], target.func
            target = _scripted_function(target) or target
            if inspect.isfunction(target) and not isinstance(target, types.MethodType):
                # a function or lambda held in an attribute: self.act = F.gelu, lambda t: t * 2
                q = qualname_of(target)
                if q is not None:
                    return self._call_global(GlobalRef(q, target), args, kwargs, e)  # type: ignore[arg-type]
                return self._inline(target, None, args, kwargs, e)
            if callable(target) and (q := qualname_of(target)) is not None and _importable(q, target):
                return self._call_global(GlobalRef(q, target), args, kwargs, e)  # type: ignore[arg-type]
            if (called := _own_python_call(target)) is not None:
                # A processor object (`self.warper(ids, scores)`, a method of a config
                # object): its class's Python code, inlined with the object as `self`.
                function, obj = called
                receiver = StaticObject(obj, fn.expr if obj is target else fn.expr.rsplit(".", 1)[0])
                self._fold_read(obj, "__class__", e)
                return self._inline(function, receiver, args, kwargs, e)
        raise self.error(e, "this value is not callable")

    def _call_module(self: Lowerer, m: ModuleRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call,
                     temporary: bool = False) -> Value:
        """`temporary`: the input is the previous layer's output inside an nn.Sequential
        (no name holds it), not the call's argument."""
        if _has_hooks(m.module):
            raise self.unsupported(node, f"module '{m.path}' with forward hooks (they run when it is called)")
        if isinstance(m.module, torch.jit.ScriptModule):  # no backend exports TorchScript; its interpreter runs it
            raise self.unsupported(node, f"TorchScript submodule '{m.path}' (scripted or traced)")
        if isinstance(m.module, nn.Sequential) and type(m.module).forward is nn.Sequential.forward and \
                "forward" not in m.module.__dict__:
            members = [m.child(name) for name, child in m.module._modules.items() if child is not None]
            return self._call_chain(members, args, kwargs, node, temporary)
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

    def _call_chain(self: Lowerer, members: list[ModuleRef], args: list[Value], kwargs: dict[str, Value],
                    node: ast.Call, temporary: bool = False) -> Value:
        """nn.Sequential's forward (a whole one, or a slice of one): each member on the
        previous member's output."""
        if kwargs or len(args) != 1:
            raise self.error(node, "nn.Sequential takes exactly one positional input")
        v = args[0]
        for k, member in enumerate(members):
            v = self._call_module(member, [v], {}, node, temporary=temporary or k > 0)
        return v

    def _forward_of(self: Lowerer, m: nn.Module, node: ast.AST | None) -> Any:
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

    def _call_indexed(self: Lowerer, fn: IndexedModule, args: list[Value], kwargs: dict[str, Value], node: ast.Call, scope: _Scope) -> Value:
        """`self.experts[i](x)` with a run-time `i`: an if-chain over the children
        (an index out of range raises eager's IndexError); `self.heads[key](x)` of a
        ModuleDict compares the key with each of its keys (no match: KeyError)."""
        members = fn.container.members()
        n = len(members)
        keys = list(fn.container.module._modules) if isinstance(fn.container.module, nn.ModuleDict) else None

        def pick(k: int, sub: _Scope) -> None:
            if k == n:  # no child matched: eager's KeyError, or IndexError (out of range)
                if keys is not None:
                    error = ExceptionVal(KeyError, [fn.index])
                else:
                    i = fn.index if fn.index.type == i64 else self.emit(d.ItemOp(fn.index, i64), node).results[0]
                    at = self.call_function("builtins.str", [i], {}, node)
                    text = self.call_function("_operator.add", [Static("index "), at], {}, node)
                    error = ExceptionVal(IndexError, [self.call_function("_operator.add", [text, Static(
                        " is out of range")], {}, node)])
                self.raise_exception(error, sub, node)
                sub.env["$v"] = Static(None)
                return
            hit = self._compare_index(fn.index, k, n, node) if keys is None else self.to_bool(
                self.call_function("_operator.eq", [fn.index, Static(keys[k])], {}, node), node)
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

    def _compare_index(self: Lowerer, index: SSAValue, k: int, n: int, node: ast.AST) -> SSAValue:
        """`index == k or index == k - n` (Python's negative indices)."""
        eq = self.call_function("_operator.eq", [index, Static(k)], {}, node)
        neg = self.call_function("_operator.eq", [index, Static(k - n)], {}, node)
        return self.emit(arith.OrIOp(self.to_bool(eq, node), self.to_bool(neg, node)), node).results[0]

    def _call_method(self: Lowerer, mref: MethodRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
        recv = mref.receiver
        if isinstance(recv, SuperRef):
            method = getattr(super(recv.cls, recv.receiver.module), mref.name, None)
            if not inspect.ismethod(method):
                raise self.unsupported(node, f"super().{mref.name}, which is not a method")
            if method.__func__ is nn.Sequential.forward:  # (a Sequential subclass's own forward calls the chain)
                members = [recv.receiver.child(n) for n, c in recv.receiver.module._modules.items() if c is not None]
                return self._call_chain(members, args, kwargs, node)
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
        if mref.name in _SPARSE_METHODS and isinstance(recv, SSAValue):
            raise self.unsupported(node, f"a sparse tensor ('{mref.name}')")
        if mref.name == "item" and not args:
            return self._item(recv, node, d.ANY)
        if mref.name in ("size", "dim") and isinstance(recv, SSAValue) and isinstance(recv.type, TensorType) and \
                all(n >= 0 for n in recv.type.get_shape()) and all(isinstance(a, Static) for a in args) and not kwargs:
            # a static shape's `x.size()`, `x.size(-1)`, `x.dim()`: Python ints, as `x.shape` is
            # (so `math.ceil(ih / s)` folds; a run-time int would go to the sub-DNNs)
            shape = torch.Size(recv.type.get_shape())
            try:
                return Static(len(shape) if mref.name == "dim" else shape[args[0].value] if args else shape)
            except (IndexError, TypeError):
                pass  # eager's error, raised where eager raises it
        if mref.name == "type" and isinstance(recv, SSAValue) and not kwargs:
            # legacy type names: `x.type() == 'torch.FloatTensor'`, `x.type(torch.LongTensor)` (by its name)
            if not args and isinstance(recv.type, TensorType) and self.on_cpu():
                return Static(_cpu_type_string(dtype_of(recv.type.element_type)))
            legacy = args[0].obj if len(args) == 1 and isinstance(args[0], GlobalRef) else \
                _legacy_type_named(args[0].value) if len(args) == 1 and isinstance(args[0], Static) else None
            if _legacy_tensor_type(legacy) and not legacy.is_cuda and not legacy.is_sparse and self.on_cpu():
                # (a CPU tensor's cast; torch.export's file does not load `.type(...)` back)
                return self._call_method(MethodRef(recv, "to"), [Static(legacy.dtype)], {}, node)
            if _legacy_tensor_type(legacy):
                args = [Static(f"{legacy.__module__}.{legacy.__name__}")]
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

    def _in_place_call(self: Lowerer, qualname: str, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
        """`F.relu(y, inplace=True)`, `nn.ReLU(inplace=True)(y)`: y now holds the result,
        for every name bound to it, as for `y.relu_()` (the call's value is y)."""
        new = self.call_function(qualname, args, kwargs, node)
        return self._rebind_in_place(args[0], node.args[0] if node.args else None, new, node)

    def _rebind_in_place(self: Lowerer, recv: Value, receiver: ast.expr | None, new: SSAValue, node: ast.Call) -> Value:
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

    def _in_place_method(self: Lowerer, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value],
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
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, (ast.Name, ast.Attribute)) and isinstance(
                owner := self.expr(receiver.value, scope), ModuleRef) and \
                scope.env.get(state_key(owner.module, receiver.attr)) is recv:
            receiver = ast.Name(id=ast.unparse(receiver))  # module state: `self.ema.mul_(m)` (named for messages)
        elif isinstance(recv, SSAValue) and isinstance(recv.owner, d.ParamOp) and name not in _SHAPE_CHANGING_IN_PLACE:
            self.buffers_written([recv.owner.path.data])  # a buffer forward updates: state
        out_of_place = name[:-1]
        fresh = _fresh_tensor(receiver) and isinstance(recv, SSAValue) and (hasattr(torch.Tensor, out_of_place) or
                                                                           name in _IN_PLACE_AS)
        if fresh and name in _IN_PLACE_AS and not kwargs:
            # `torch.zeros(1, 1).fill_(start)` (the Annotated Transformer's greedy_decode)
            return self._value_in_place(recv, name, args, node)
        if fresh and name not in _SHAPE_CHANGING_IN_PLACE and name.rstrip("_") not in _RANDOM_IN_PLACE and \
                name not in _IN_PLACE_AS:
            # `torch.zeros(n, d).scatter_add_(0, idx, src)`: a tensor nobody else holds
            ops = [recv, *(self.materialize(a, node) for a in args), *(self.materialize(v, node) for v in kwargs.values())]
            new = self.emit(d.CallMethodOp(out_of_place, ops, list(kwargs)), node).results[0]
            return self.call_function("dycl.tensor_ops.inplace_result", [new, recv], {}, node)
        if not isinstance(recv, SSAValue) or not isinstance(receiver, ast.Name) or name in _SHAPE_CHANGING_IN_PLACE \
                or name.rstrip("_") in _RANDOM_IN_PLACE or not (hasattr(torch.Tensor, out_of_place) or name in _IN_PLACE_AS):
            raise self.unsupported(node, f"in-place tensor method '{name}' (in-place mutation)" + (
                f"; use '{out_of_place}'" if hasattr(torch.Tensor, out_of_place) else ""))
        if name in _IN_PLACE_AS:
            new = self._value_in_place(recv, name, args, node)
        else:
            ops = [recv, *(self.materialize(a, node) for a in args), *(self.materialize(v, node) for v in kwargs.values())]
            new = self.emit(d.CallMethodOp(out_of_place, ops, list(kwargs)), node).results[0]
            # The in-place op keeps the receiver's dtype and shape (eager fails where it cannot).
            new = self.call_function("dycl.tensor_ops.inplace_result", [new, recv], {}, node)
            new = self.emit(d.CallMethodOp("clone", [new]), node).results[0]
        self._update_in_place(receiver.id, recv, new, scope, node)
        return new

    def _value_in_place(self: Lowerer, recv: SSAValue, name: str, args: list[Value], node: ast.Call) -> SSAValue:
        """What `recv.copy_(src)`, `recv.zero_()` or `recv.fill_(v)` leaves in `recv`."""
        if name == "copy_":
            (src,) = args
            new = self.emit(d.CallMethodOp("type_as", [self.materialize(src, node), recv]), node).results[0]
            new = self.emit(d.CallMethodOp("expand_as", [new, recv]), node).results[0]
            return self.emit(d.CallMethodOp("clone", [new]), node).results[0]
        if name == "zero_":
            return self.call_function("torch.zeros_like", [recv], {}, node)
        return self.call_function("torch.full_like", [recv, *args], {}, node)

    def _item(self: Lowerer, v: Value, node: ast.AST, result_type: Attribute) -> SSAValue:
        """A host read of a one-element tensor; `!dycl.any` takes the tensor's dtype."""
        ssa = self.materialize(v, node)
        if isinstance(v, SSAValue) and v.type in (i64, f64, i1):
            return ssa
        if _many_elements(ssa):  # fails when run, as in Python (dead code folds away)
            return self.emit(d.CallMethodOp("item", [ssa]), node).results[0]
        return self.emit(d.ItemOp(ssa, result_type), node).results[0]

    def _call_global(self: Lowerer, g: GlobalRef, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> Value:
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
        if obj is reversed and len(args) == 1 and isinstance(args[0], RuntimeRange) and \
                isinstance(args[0].step, Static) and args[0].step.value:
            return self._reversed_range(args[0], node)
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
        if obj is functools.reduce and not kwargs and 2 <= len(args) <= 3 and \
                (items := self.iter_items(args[1], node)) is not None:
            # reduce(f, xs[, start]) over a compile-time sequence: f's calls, in order
            if len(args) == 2 and not items:
                raise self.error(node, "reduce() of empty iterable with no initial value")
            acc, rest = (args[2], items) if len(args) == 3 else (items[0], items[1:])
            for item in rest:
                acc = self.call_value(args[0], [acc, item], {}, node, self._caller_scopes[-1])
            return acc
        if obj in (getattr, hasattr) and len(args) >= 2 and isinstance(args[1], Static):
            target, name = args[0], args[1].value
            if obj is hasattr:
                if isinstance(target, (ModuleRef, StaticObject)):
                    # Recorded as read: a forward that sets it (`if not hasattr(self, "running"):
                    # self.running = ...`) is redone with this read on the host, and the guard
                    # sees an attribute appear after the compile.
                    held = target.module if isinstance(target, ModuleRef) else target.obj
                    self._fold_read(held, name, node)
                    return Static(hasattr(held, name))
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
            if isinstance(v, SSAValue) and isinstance(v.owner, d.ParamOp) and classes is not None:
                # the model's own tensor: an nn.Parameter where it is one (a buffer is not)
                path = v.owner.path.data
                owner, _, name = path.rpartition(".")
                held = getattr(self.model.get_submodule(owner), name)
                return Static(isinstance(held, classes))
            if classes is not None and any(map(_legacy_tensor_type, classes)) and isinstance(v, SSAValue) and \
                    isinstance(v.type, TensorType) and self.on_cpu():
                # `isinstance(mask, torch.ByteTensor)`: the dtype (and CPU) decides
                dtype = dtype_of(v.type.element_type)
                return Static(any(c.dtype == dtype and not c.is_cuda and not c.is_sparse if _legacy_tensor_type(c)
                                  else issubclass(torch.Tensor, c) for c in classes))
            kind = _python_type_of(v)
            if kind is not None and classes is not None:
                return Static(issubclass(kind, classes))
            if isinstance(v, SSAValue) and isinstance(cls, GlobalRef) and isinstance(cls.obj, type):
                # (`x = x[:2]` on one path: a tensor either way, which shape inference finds and folds)
                return self.call_function("builtins.isinstance", [v, cls], {}, node)
            raise self.unsupported(node, "isinstance() of a value whose Python type is known only at run time")
        if statics and (obj in PURE_BUILTINS or g.qualname.startswith("math.") or obj is builtins.__import__):
            # (`__import__('logging')`: the module, whose calls are then the model's own Python)
            made = obj(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})  # type: ignore[union-attr]
            if type(made) is list:  # `idx = list(range(4))`: a new list of the function's own, to change
                return SeqVal([Static(x) for x in made], is_list=True)
            return Static(made)
        if obj in (int, float, bool) and len(args) == 1:
            return self._convert_scalar(obj, args[0], node)
        if isinstance(obj, type) and issubclass(obj, nn.Module):
            if obj in STATELESS_MODULES and all(isinstance(a, Static) for a in (*args, *kwargs.values())):
                # `nn.Softmax(dim=-1)(h)` (old HF BERT): a module without state, built now
                made = obj(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})  # type: ignore[union-attr]
                if all(b is None for b in made._buffers.values()):  # (a loss's class weight: no)
                    return StaticObject(made, ast.unparse(node))
            raise self.unsupported(node, "creating a module inside forward")
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return self.make_exception(obj, args, kwargs, node)
        if (built := self.python_object(obj, args, kwargs, node)) is not None:
            return built
        if isinstance(obj, type) and not issubclass(obj, nn.Module) and \
                inspect.isfunction(getattr(obj, "__call__", None)) and \
                (obj.__module__ or "").split(".")[0] not in _LIBRARY_MODULES and \
                (known := _compile_time_values([*args, *kwargs.values()])) is not None:
            # `TemperatureLogitsWarper(0.7)`, `LogitsProcessorList([...])` built in forward
            # from constants and such objects: made now (their __call__ is inlined)
            made = obj(*known[:len(args)], **dict(zip(kwargs, known[len(args):])))
            return StaticObject(made, ast.unparse(node))
        if inspect.isfunction(obj) and not g.qualname.startswith("torch."):
            return self._inline(obj, None, args, kwargs, node)
        if (original := _scripted_function(obj)) is not None:
            return self._inline(original, None, args, kwargs, node)
        if "out" in kwargs and not (isinstance(kwargs["out"], Static) and kwargs["out"].value is None):
            raise self.unsupported(node, f"{g.qualname}(..., out=...), which writes an existing tensor")
        if isinstance(kwargs.get("inplace"), Static) and kwargs["inplace"].value is True and args:  # type: ignore[union-attr]
            return self._in_place_call(g.qualname, args, {k: v for k, v in kwargs.items() if k != "inplace"}, node)
        if _changes_its_arguments(obj, g.qualname) and any(
                isinstance(a, SeqVal) and (a.is_list or isinstance(a, DictVal)) or
                isinstance(a, SSAValue) and not isinstance(a.type, TensorType) for a in (*args, *kwargs.values())):
            # (a list built here would be passed as a copy, and a call on one the run made,
            # its result unused, would be dropped as dead: the change lost either way)
            raise self.unsupported(node, f"'{g.qualname}', which changes a list or dict passed to it")
        if g.qualname in _PROCESS_EFFECTS or g.qualname.startswith(_PROCESS_EFFECT_PREFIXES):
            # Not a value: reseeding, a check that raises, a global setting. As an op its
            # unused result was dropped (torch.manual_seed, torch._assert never happened).
            raise self.unsupported(node, f"'{g.qualname}', which acts on the process or raises")
        return self.call_function(g.qualname, args, kwargs, node)

    def _convert_scalar(self: Lowerer, kind: type, v: Value, node: ast.AST) -> SSAValue:
        if kind is bool:
            return self.to_bool(v, node)
        want = i64 if kind is int else f64
        if isinstance(v, SSAValue) and v.type in (i64, f64, i1) and v.type != want:
            # float(n) of a host int is a float (7.0), int(b) of a bool an int: a conversion, not a read
            return self.call_function(f"builtins.{kind.__name__}", [v], {}, node)
        return self._item(v, node, want)

    def _reversed_range(self: Lowerer, r: RuntimeRange, node: ast.AST) -> RuntimeRange:
        """reversed(range(a, b, k)) for a compile-time k: range(last, a - k, -k), where
        last = a + (b - a - sign(k)) // k * k (below a, so empty, when the range is)."""
        k = r.step.value  # type: ignore[union-attr]
        span = self._binop(ast.Sub(), self._binop(ast.Sub(), r.stop, r.start, node), Static(1 if k > 0 else -1), node)
        last = self._binop(ast.Add(), r.start, self._binop(
            ast.Mult(), self._binop(ast.FloorDiv(), span, Static(k), node), Static(k), node), node)
        return RuntimeRange(last, self._binop(ast.Sub(), r.start, Static(k), node), Static(-k))

    def _as_sequence(self: Lowerer, v: Value, node: ast.AST) -> list[Value]:
        items = self.iter_items(v, node)
        if items is None:
            raise self.unsupported(node, "enumerate/zip over a run-time value")
        return items
