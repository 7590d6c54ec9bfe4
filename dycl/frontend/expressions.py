"""Expressions: names, attributes, constants and the static evaluation of Python
on compile-time values (arithmetic, comparisons, `and`/`or`, indexing, f-strings);
what depends on tensor values becomes IR (`dycl.call_function "_operator.add"`,
`dycl.to_bool`, `dycl.get_item`)."""

from __future__ import annotations

import ast
import collections
import builtins
import enum
import inspect
import math
import operator
import re
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from xdsl.dialects import arith
from xdsl.dialects.builtin import (ArrayAttr, DenseIntOrFPElementsAttr, Float64Type, IntegerAttr, IntegerType, NoneAttr,
                                   StringAttr, TensorType, i1, i64)
from xdsl.ir import BlockArgument, Operation, SSAValue

from dycl.dialects import dycl as d
from dycl.frontend.loops import NeedsStatic, _Injected, maybe_sequence
from dycl.frontend.regions import where_of
from dycl.frontend.state import NewState, state_type
from dycl.types import dtype_of, tensor_type_of
from dycl.frontend.values import (
    DictVal,
    ModuleSlice,
    ExceptionVal,
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
    name_held_class,
    qualname_of,
    resolve_qualname,
)
from dycl.frontend.scopes import _Scope

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer


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


UNSUPPORTED_EXPRS: dict[type[ast.expr], str] = {
    ast.Yield: "yield (generator)",
    ast.YieldFrom: "yield from (generator)",
    ast.Await: "await",
    ast.SetComp: "set comprehension",
    ast.Set: "set literal",
    ast.NamedExpr: "assignment expression (:=)",
    ast.Starred: "starred expression outside a call",
}


_MISSING = object()
# A tensor held outside the model (a global, a default argument) becomes an IR
# constant up to this many elements; a larger one stays Python (a fallback region).
OUTSIDE_TENSOR_LIMIT = 1 << 16
_DENSE_DTYPES = frozenset({torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                           torch.int16, torch.int8, torch.uint8, torch.bool})


def _as_seq(v: Value, other: Value) -> Value:
    """A constant tuple (list) as the sequence of its items, beside a SeqVal of its kind."""
    if isinstance(v, Static) and isinstance(other, SeqVal) and type(v.value) is (list if other.is_list else tuple):
        return SeqVal([Static(x) for x in v.value], other.is_list)
    return v


def _importable_name(cls: type, owner: type, attr: str) -> str | None:
    """A name that imports `cls`: its own, or its owner's and the attribute's."""
    from dycl.pyregion import resolve

    for q in (qualname_of(cls), (o := qualname_of(owner)) and f"{o}.{attr}"):
        try:
            if q and resolve(q) is cls:
                name_held_class(cls, q)  # (how the host makes it: qualname_of)
                return q
        except Exception:  # noqa: BLE001 (not importable so)
            continue
    return None


def _gives_tensor(m: nn.Module, attr: str) -> bool:
    """The property `attr` of `m` reads as a tensor now."""
    try:
        return isinstance(getattr(m, attr), torch.Tensor)
    except Exception:
        return False


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


def _member_items(v: Value) -> list[Value] | None:
    """The items of a tuple, list, set or range of constant numbers, strings or None
    and run-time numbers (not tensors: `in` compares them by identity first)."""
    def plain(x: Any) -> bool:
        return x is None or type(x) in (bool, int, float, str)

    if isinstance(v, Static) and isinstance(v.value, (tuple, list, set, frozenset, range)) and all(map(plain, v.value)):
        return [Static(x) for x in v.value]
    def number(x: Any) -> bool:  # (`t.item()` is typed by shape inference, later)
        return isinstance(x, SSAValue) and (isinstance(x.type, (IntegerType, Float64Type)) or isinstance(
            x.owner, d.ItemOp) or isinstance(x.owner, d.CallFunctionOp) and x.owner.target.data in (
            "builtins.int", "builtins.float", "builtins.bool"))

    if isinstance(v, SeqVal) and not isinstance(v, DictVal) and all(
            isinstance(x, Static) and plain(x.value) or number(x) for x in v.items):
        return list(v.items)
    return None


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


def _readable(expr: str) -> str:
    """`__dycl_root.get_submodule('enc').config` -> `enc.config`."""
    expr = re.sub(r"__dycl_root\.get_submodule\('([^']*)'\)", r"\1", expr)
    return expr.removeprefix("__dycl_root.").removeprefix("__dycl_root")


def _mark_may_be_none(region: d.PyRegionOp, index: int) -> None:
    marked = region.attributes.get(d.MAY_BE_NONE_ATTR)
    indices = {a.value.data for a in marked.data} if isinstance(marked, ArrayAttr) else set()
    if index not in indices:
        region.attributes[d.MAY_BE_NONE_ATTR] = ArrayAttr([IntegerAttr(i, 64) for i in sorted(indices | {index})])


class ExpressionLowering:
    """Mixin of Lowerer: expressions."""

    def expr(self: Lowerer, e: ast.expr, scope: _Scope) -> Value:
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
                if isinstance(owner, ModuleRef) and (state := self.read_state(owner, attr, scope, e)) is not None:
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

    def _fstring(self: Lowerer, e: ast.JoinedStr, scope: _Scope) -> Value:
        """An f-string: folded over compile-time values (a submodule's name), else
        formatted on the host where Python formats it (a `raise`'s message)."""
        parts: list[Value] = []
        for v in e.values:
            if isinstance(v, ast.Constant):
                parts.append(Static(str(v.value)))
                continue
            assert isinstance(v, ast.FormattedValue)
            x = self.expr(v.value, scope)
            spec = self.expr(v.format_spec, scope) if v.format_spec is not None else Static("")
            conv = {115: "str", 114: "repr", 97: "ascii"}.get(v.conversion)
            if isinstance(x, Static) and isinstance(spec, Static):
                parts.append(Static(format(getattr(builtins, conv)(x.value) if conv else x.value, spec.value)))
                continue
            if self.loop_depth and not self.in_run_time_loop():
                raise NeedsStatic  # unrolled, each iteration's values known
            if conv is not None:
                x = self.call_function(f"builtins.{conv}", [x], {}, e)
            parts.append(self.call_function("builtins.format", [x, spec], {}, e))
        text: Value = Static("")
        for part in parts:
            if isinstance(text, Static) and isinstance(part, Static):
                text = Static(text.value + part.value)
            elif not (isinstance(part, Static) and part.value == ""):
                text = part if isinstance(text, Static) and text.value == "" else \
                    self.call_function("_operator.add", [text, part], {}, e)
        return text

    def _name(self: Lowerer, name: str, node: ast.AST, scope: _Scope) -> Value:
        assert self.fn is not None
        if name in self.fn.declared_global:
            raise self.unsupported(node, f"the global variable '{name}', which forward changes")
        if name in scope.env:
            v = scope.env[name]
            if isinstance(v, PathDependent):
                raise self.error(node, v.message or f"'{name}' names different modules depending on a run-time condition")
            if isinstance(v, SSAValue) and v in self.maybe_unbound:
                v = self.check_bound(name, v, node)
            if isinstance(v, ObjectRef) and isinstance(v.obj, torch.Tensor):  # a tensor default argument
                # (not rebound: an attempt rolled back would leave the name on an erased op)
                v = self.outside_tensor(v.obj, node, f"the default argument '{name}'")
            return v
        obj = self.global_object(name, _MISSING)
        if obj is _MISSING:
            raise self.error(node, f"name '{name}' is not defined here (assigned only on some paths, or unknown)")
        if name not in self.fn.closure and self.fn.globals.get(name, _MISSING) is obj:
            self.folded_reads.setdefault((id(self.fn.globals), name), (self.fn.globals, name, "global"))
        return self._global(obj, name, node)

    def outside_tensor(self: Lowerer, t: torch.Tensor, node: ast.AST, what: str) -> SSAValue:
        """A tensor the model's code reaches outside the model (a global, a closure
        variable, a default argument): eager reads that one object on every call, so
        it is a constant of the program. The live guard notices an in-place change
        (its version counter); forward changing it in place runs as eager."""
        if t.numel() > OUTSIDE_TENSOR_LIMIT or t.layout != torch.strided or t.device.type != "cpu" or \
                t.is_quantized or t.is_complex() or t.dtype not in _DENSE_DTYPES:
            raise self.unsupported(node, f"{what}, a tensor held outside the model that cannot be a constant "
                                         f"(more than {OUTSIDE_TENSOR_LIMIT} elements, or not a dense CPU tensor)")
        self.folded_reads.setdefault((id(t), "_version"), (t, "_version", "attr"))
        attr = DenseIntOrFPElementsAttr.from_list(tensor_type_of(t), t.detach().flatten().tolist())
        value = self.emit(d.ConstantOp(attr), node).results[0]
        self.outside_tensors.add(value)
        return value

    def global_object(self: Lowerer, name: str, default: Any = None) -> Any:
        """What a name that is not a local means in the current function: a variable
        of the enclosing function (a class made in a factory), a global, a builtin."""
        assert self.fn is not None
        for space in (self.fn.closure, self.fn.globals, vars(builtins)):
            if name in space:
                return space[name]
        return default

    def _fold_read(self: Lowerer, obj: Any, attr: str, node: ast.AST) -> None:
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

    def _global(self: Lowerer, obj: Any, name: str, node: ast.AST) -> Value:
        if isinstance(obj, (bool, int, float, str, type(None), tuple, torch.dtype)):
            return Static(obj)
        if isinstance(obj, torch.Tensor):
            return self.outside_tensor(obj, node, f"the global '{name}'")
        if isinstance(obj, (list, dict, set)):
            raise self.unsupported(node, f"closure over the mutable global '{name}'")
        if isinstance(obj, nn.Module):
            raise self.unsupported(node, f"module '{name}' held in a global (make it a submodule)")
        q = qualname_of(obj)
        if q is None:
            raise self.error(node, f"cannot resolve the global '{name}' to an importable name")
        return GlobalRef(q, obj)

    def _note_folded(self: Lowerer, name: str, node: ast.AST) -> None:
        """A model attribute read at compile time (recorded in the manifest)."""
        if name not in self.folded_names:
            self.folded_names[name] = where_of(self, node)

    def _attribute(self: Lowerer, base: Value, attr: str, node: ast.AST) -> Value:
        if isinstance(base, SuperRef):
            return MethodRef(base, attr)
        if isinstance(base, (ModuleRef, StaticObject)) and attr == "__class__":
            cls = type(base.module if isinstance(base, ModuleRef) else base.obj)  # as type(self)
            return self._global(cls, cls.__name__, node)
        if isinstance(base, ModuleRef):
            m = base.module
            if attr in m._modules:
                if isinstance(m._modules[attr], (nn.ParameterList, nn.ParameterDict)):
                    self._fold_read(m, attr, node)  # (one forward changes is read where Python reads it)
                    return self._parameters_held(base.child(attr), node)
                return base.child(attr)
            if attr in m._parameters or attr in m._buffers:
                if (id(m), attr) in self.dirty_attrs:  # (read as `self.buf`, it is state: read_state)
                    raise self.unsupported(node, f"a read of the buffer '{attr}', which forward changes, "
                                                 "spelled other than as an attribute")
                t = getattr(m, attr)
                if t is None:
                    return Static(None)
                path = f"{base.path}.{attr}" if base.path else attr
                return self.emit(d.ParamOp(path, tensor_type_of(t)), node).results[0]
            static = inspect.getattr_static(m, attr, None)
            if isinstance(static, property) and static.fget is not None and (
                    _writes_state(static.fget) or _gives_tensor(m, attr)):
                # runs where forward reads it (`self.lin.weight[0]`: a new view each read,
                # which a constant would guard against as changed)
                return self._inline(static.fget, base, [], {}, node)
            if inspect.isclass(static) and attr not in m.__dict__ and (
                    q := _importable_name(static, type(m), attr)) is not None:
                return GlobalRef(q, static)  # `self.Out(...)`: a class held by the model's class (a namedtuple)
            if hasattr(type(m), attr) and callable(getattr(type(m), attr)) and not isinstance(static, property) \
                    and attr not in m.__dict__:  # (an instance attribute shadows the class's method)
                return MethodRef(base, attr)
            self._fold_read(m, attr, node)
            try:
                val = getattr(m, attr)
            except AttributeError:
                raise self.error(node, f"module '{base.path or 'self'}' ({type(m).__name__}) has no attribute '{attr}'") from None
            if isinstance(val, torch.Tensor):
                if state_type(val) is not None and (id(m), attr) not in self.dirty_attrs and attr in m.__dict__:
                    raise NewState({(id(m), attr)})  # a plain tensor attribute: read on the host, as module state
                if attr not in m.__dict__ and (id(m), attr) not in self.dirty_attrs:
                    # a class attribute (YOLO's ANCHORS): one tensor for every instance, as a global is
                    return self.outside_tensor(val, node, f"the class attribute '{attr}'")
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
            if isinstance(obj, torch.Tensor):  # `consts.MEAN` of an imported module, a class's tensor
                self._fold_read(base.obj, attr, node)
                return self.outside_tensor(obj, node, f"'{base.qualname}.{attr}'")
            if isinstance(obj, (list, dict, set)) and (inspect.isclass(base.obj) or inspect.ismodule(base.obj)):
                # `type(self).history`, `Config.sizes`: read now (state where forward changes it;
                # one of constants as a copy, whose `.append` is a change the host makes)
                self._fold_read(base.obj, attr, node)
                if _simple(obj):
                    return self._object_value(obj, f"{base.qualname}.{attr}", attr, node)
            if isinstance(getattr(obj, "__self__", None), (list, dict, set, bytearray, collections.deque)):
                # (a bound method of a container has no importable name: `list.append` lost its list)
                raise self.unsupported(node, f"'{attr}' of a Python {type(obj.__self__).__name__} held by "
                                             f"'{base.qualname}'")
            if inspect.isclass(obj) and inspect.isclass(base.obj) and (
                    q := _importable_name(obj, base.obj, attr)) is not None:
                return GlobalRef(q, obj)  # `Model.Out`: a namedtuple made in the class body
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
            if attr == "is_cuda" and isinstance(base.type, TensorType) and self.on_cpu():
                return Static(False)
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

    def _parameters_held(self: Lowerer, ref: ModuleRef, node: ast.AST) -> Value:
        """An nn.ParameterList or nn.ParameterDict: its parameters, iterated, indexed and
        counted at compile time as a list or dict of them is (changing it is not)."""
        m = ref.module
        if len(m._parameters) != len(m) or m._modules or m._buffers:
            return ref  # (it holds other objects too: what reads it runs as Python)
        items = [Static(None) if p is None else self.emit(d.ParamOp(f"{ref.path}.{k}", tensor_type_of(p)), node).results[0]
                 for k, p in m._parameters.items()]
        name = f"'self.{ref.path}'"
        if isinstance(m, nn.ParameterDict):
            return DictVal(items, False, list(m._parameters), held_by=name)
        return SeqVal(items, True, held_by=name)

    def _object_value(self: Lowerer, val: Any, expr: str, attr: str, node: ast.AST) -> Value:
        """A Python attribute value for compiled code: constants and containers of
        them fold; other objects (configs) are read through; the rest is left to the host."""
        if _simple(val):
            return Static(list(val) if isinstance(val, list) else dict(val) if isinstance(val, dict) else val)
        if isinstance(val, torch.Tensor):
            # A tensor a plain object holds (a scheduler's `alphas_cumprod`): read each
            # call as it is now, so a constant; the live guard sees it replaced or changed.
            return self.outside_tensor(val, node, f"the tensor attribute '{attr}' of {_readable(expr)}")
        if isinstance(val, nn.Module) or callable(val) or isinstance(val, (list, tuple, dict, set)):
            return ObjectRef(expr, val)  # run-time only: a fallback region reaches it
        return StaticObject(val, expr)

    def _binop(self: Lowerer, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
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

    def _unary(self: Lowerer, op: ast.unaryop, operand: ast.expr, scope: _Scope, node: ast.AST) -> Value:
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

    def _compare(self: Lowerer, e: ast.Compare, scope: _Scope) -> Value:
        left = self.expr(e.left, scope)
        result: Value | None = None
        for op, right_node in zip(e.ops, e.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right_node, ast.Set):
                # (`k in {1, 2}`: only its members matter; a set literal is no value of its own here)
                right = SeqVal([self.expr(x, scope) for x in right_node.elts], False)
            else:
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
                elif isinstance(op, (ast.In, ast.NotIn)) and (items := _member_items(right)) is not None:
                    part = self._contains(left, items, e)
                    if isinstance(op, ast.NotIn):
                        part = Static(not part.value) if isinstance(part, Static) else self.emit(arith.XOrIOp(
                            self.to_bool(part, e), self.materialize(Static(True), e)), e).results[0]
                else:
                    raise self.unsupported(e, f"'{type(op).__name__}' comparison on a run-time value")
            else:
                part = self._compare_values(op, left, right, e)
            result = part if result is None else self._and_values(result, part, e)
            left = right
        assert result is not None
        return result

    def _contains(self: Lowerer, v: Value, items: list[Value], node: ast.AST) -> Value:
        """`v in items` for constant numbers, strings or None and run-time numbers:
        Python's `item is v or item == v` for each. A run-time value is never one of the
        constant objects, and one run-time number is another only where it is the same
        value (`v in (v, 1)` holds for a NaN too); else `==` (a tensor's `bool(t == c)`
        raises on the first item where it raises on any)."""
        found: Value = Static(False)
        for c in items:
            if c is v:
                return Static(True) if isinstance(found, Static) else found
            equal = Static(False) if isinstance(c, Static) and c.value is None and not isinstance(v, Static) \
                else self._compare_values(ast.Eq(), v, c, node)
            if isinstance(found, Static) and not found.value:
                found = equal
            elif not (isinstance(equal, Static) and not equal.value):
                found = self.emit(arith.OrIOp(self.to_bool(found, node), self.to_bool(equal, node)), node).results[0]
        return found

    def _compare_values(self: Lowerer, op: ast.cmpop, a: Value, b: Value, node: ast.AST) -> Value:
        name, fn = CMPOPS[type(op)]
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(fn(a.value, b.value))
        return self.call_function(f"_operator.{name}", [a, b], {}, node)

    def _may_be_none(self: Lowerer, v: SSAValue, seen: set[SSAValue] | None = None) -> bool:
        """Whether `v` may hold None: a None constant, a region's result, or a join or
        loop-carried value with either. Asked for `v is None`: a region result that
        may reach it is marked, so it is typed as a Python object (the region's
        compile-time runs may all have given a number or a tensor)."""
        seen = seen if seen is not None else set()
        if v in seen:
            return False
        seen.add(v)
        owner = v.owner
        if isinstance(owner, d.PyRegionOp):
            _mark_may_be_none(owner, v.index)
            return True
        if isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr):
            return True
        if isinstance(v, BlockArgument) and v in self._loop_entries and v.block.parent_op() is None:
            # Asked while its loop's body is lowered: what enters it (its yields are checked
            # once the loop is built, see `check_loop_none_tests`).
            if self._may_be_none(self._loop_entries[v], seen):
                return True
            self._assumed_not_none.add(v)
            return False
        if isinstance(owner, d.CallFunctionOp) and owner.target.data == "builtins.getattr" and \
                isinstance(name := owner.args[1].owner, d.ConstantOp) and isinstance(name.value, StringAttr) and \
                name.value.data in ("grad_fn", "grad"):
            return True  # (autograd's graph: None where no graph is recorded)
        if isinstance(owner, d.GetItemOp):  # `k, y = self.pick(x)` of `return 1, y` / `return None, None`
            return self._item_may_be_none(owner.source, owner.index.value.data, seen)
        if isinstance(owner, d.CallFunctionOp) and owner.target.data == "_operator.getitem" and len(owner.args) == 2:
            # `t[0]` of a tuple some path made with None (`t = (None, 0)`, then `t = (x[i], i)`)
            index = owner.args[1].owner
            k = index.value.value.data if isinstance(index, arith.ConstantOp) and \
                isinstance(index.value, IntegerAttr) else None
            return self._item_may_be_none(owner.args[0], k, seen)
        return any([self._may_be_none(p, seen) for p in self._sources(v)])

    def _sources(self: Lowerer, v: SSAValue) -> list[SSAValue]:
        """The values that may reach `v`: the paths joined into it, or what enters or
        goes round the loop that carries it (`found = None; for ...: if c: found = x[:, i]`)."""
        owner = v.owner
        loop, k = (owner, v.index) if isinstance(owner, (d.ForOp, d.WhileOp)) else (None, 0)
        if isinstance(v, BlockArgument) and isinstance(parent := v.block.parent_op(), (d.ForOp, d.WhileOp)):
            loop, k = parent, v.index - (1 if isinstance(parent, d.ForOp) else 0)
        if loop is not None and k >= 0:
            return [loop.iter_args[k]] + [op.operands[k] for op in loop.body.walk()
                                          if isinstance(op, (d.YieldOp, d.BreakOp)) and len(op.operands) > k]
        return list(self._joins.get(v, ()))

    def check_loop_none_tests(self: Lowerer, loop: Operation, node: ast.AST) -> None:
        """A value an `is None` test in the body took as never None (it enters the loop
        as a tensor) must not become None in a later iteration."""
        for region in loop.regions:
            for arg in region.block.args:
                self._loop_entries.pop(arg, None)
                items = [a for a in self._assumed_not_none if isinstance(a, tuple) and a[0] is arg]
                self._assumed_not_none.difference_update(items)
                if any(self._item_may_be_none(arg, k, set()) for _, k in items):
                    raise self.unsupported(node, "an `is None` test on an item of a loop-carried tuple that "
                                                 "becomes None in a later iteration")
                if arg in self._assumed_not_none:
                    self._assumed_not_none.discard(arg)
                    if self._may_be_none(arg):
                        raise self.unsupported(node, "an `is None` test on a loop-carried value that becomes "
                                                     "None in a later iteration")

    def _item_may_be_none(self: Lowerer, t: SSAValue, k: int | None, seen: set[SSAValue]) -> bool:
        """Whether element `k` (any, for None) of the tuple `t` may hold None (through
        the joins and loops that made `t`)."""
        owner = t.owner
        if isinstance(owner, d.MakeTupleOp):
            items = list(owner.operands)
            if k is None:
                return any([self._may_be_none(item, seen) for item in items])
            return -len(items) <= k < len(items) and self._may_be_none(items[k], seen)
        if isinstance(owner, d.PyRegionOp):
            _mark_may_be_none(owner, t.index)
            return True
        if isinstance(owner, d.ConstantOp) and isinstance(owner.value, NoneAttr):
            return False  # (indexing None raises: no item)
        if isinstance(t, BlockArgument) and t in self._loop_entries and t.block.parent_op() is None:
            # (its loop's body is being lowered: what enters it, checked again once it is built)
            if self._item_may_be_none(self._loop_entries[t], k, seen):
                return True
            self._assumed_not_none.add((t, k))
            return False
        if t in seen:
            return False
        seen.add(t)
        return any([self._item_may_be_none(p, k, seen) for p in self._sources(t)])

    def _and_values(self: Lowerer, a: Value, b: Value, node: ast.AST) -> Value:
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(a.value and b.value)
        ca, cb = self.to_bool(a, node), self.to_bool(b, node)
        return self.emit(arith.AndIOp(ca, cb), node).results[0]

    def _boolop(self: Lowerer, e: ast.BoolOp, scope: _Scope) -> Value:
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

    def truth(self: Lowerer, e: ast.expr, scope: _Scope) -> Value:
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

    def _boolop_value(self: Lowerer, e: ast.BoolOp, scope: _Scope) -> Value:
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

    def _ifexp(self: Lowerer, test: ast.expr, body: ast.expr, orelse: ast.expr, scope: _Scope, node: ast.AST) -> Value:
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

    def to_bool(self: Lowerer, v: Value, node: ast.AST) -> SSAValue:
        """The i1 truth value of `v` (a device→host read when `v` is a tensor)."""
        if isinstance(v, Static):
            return self.materialize(Static(bool(v.value)), node)
        ssa = self.materialize(v, node)
        if ssa.type == i1:
            return ssa
        if _many_elements(ssa):  # fails when run, as in Python (dead code folds away)
            ssa = self.emit(d.CallFunctionOp("builtins.bool", [ssa]), node).results[0]
        return self.emit(d.ToBoolOp(ssa), node).results[0]

    def _index(self: Lowerer, index: ast.expr, scope: _Scope) -> Value:
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

    def _subscript(self: Lowerer, base: Value, index: Value, node: ast.AST) -> Value:
        if isinstance(base, ModuleRef):
            m = base.module
            if not isinstance(index, Static):
                if self.loop_depth and not self.in_run_time_loop():
                    raise NeedsStatic  # unrolled, each iteration's index known
                if isinstance(m, (nn.Sequential, nn.ModuleList, nn.ModuleDict)) and isinstance(index, SSAValue):
                    return IndexedModule(base, index)  # (a ModuleDict by a key chosen at run time)
                raise self.error(node, "indexing a module container needs a compile-time index")
            if isinstance(m, nn.ModuleDict):
                if index.value not in m._modules:
                    raise self.error(node, f"'{base.path}' has no key {index.value!r}")
                return base.member(index.value)
            if isinstance(m, (nn.Sequential, nn.ModuleList)):
                keys = list(m._modules)
                if isinstance(index.value, slice):
                    if type(m).forward is not nn.Sequential.forward and isinstance(m, nn.Sequential):
                        raise self.unsupported(node, "slicing a module container whose class has its own forward")
                    return ModuleSlice([base.member(k) for k in keys[index.value]],
                                       sequential=isinstance(m, nn.Sequential))
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
        if isinstance(base, (StaticObject, ObjectRef)) and isinstance(index, Static) and type(index.value) is int:
            items = self.iter_items(base, node)  # (a list of processor objects)
            if items is not None and -len(items) <= index.value < len(items):
                return items[index.value]
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
        if isinstance(base, SSAValue) and base.type == d.ANY and isinstance(index, SSAValue) and \
                index.type in (i64, d.ANY) and maybe_sequence(base):
            # `x.split(1)[int(i)]`: a tuple indexed by a run-time int is no tensor's row (a
            # traced sub-DNN would keep the example's index); dycl.tensor_ops.row refuses it
            return self.call_function("dycl.tensor_ops.row", [base, index], {}, node)
        return self.call_function("_operator.getitem", [base, index], {}, node)

    def _list_get(self: Lowerer, held: SSAValue, index: Value, node: ast.AST) -> SSAValue:
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

    def _get_at_run_time(self: Lowerer, seq: SeqVal, index: Value, node: ast.AST) -> SSAValue:
        """`seqs[best]`, a Python sequence indexed by a run-time number (beam search
        picking its best hypothesis): the host holds a copy and picks."""
        if isinstance(seq, (DictVal, NamedSeq)):
            raise self.unsupported(node, "indexing a dict or named tuple with a run-time value")
        held = self.held_copy(seq, node)
        if held is None:
            raise self.unsupported(node, "indexing a sequence of Python objects with a run-time value")
        return self._list_get(held, index, node)

    def held_copy(self: Lowerer, seq: SeqVal, node: ast.AST) -> SSAValue | None:
        """`dycl.make_list` of `seq`'s elements; None (nothing emitted) where one is a
        Python object or a list, which a held list's element type cannot be."""
        mark = self.block.last_op
        elems = [self.materialize(e, node) for e in seq.items]
        if any(e.type == d.PYOBJ or isinstance(e.type, d.ListType) for e in elems):
            while self.block.last_op is not mark:
                self.block.erase_op(self.block.last_op, safe_erase=False)  # type: ignore[arg-type]
            return None
        return self.emit(d.MakeListOp(elems), node).result

    def _starred_display(self: Lowerer, e: ast.Tuple | ast.List, scope: _Scope) -> Value:
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
