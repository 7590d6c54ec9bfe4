"""An outlined sub-DNN (`func.func` marked `dycl.subgraph`) → torch.fx GraphModule.

Each dycl tensor op maps 1:1 to an FX node; constants become literal arguments.
"""

from __future__ import annotations

import functools
import operator
import re
import types
from typing import Any

import torch
from torch import fx, nn
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from dycl.backends.base import SubgraphSpec
from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.frontend.values import resolve_qualname
from dycl.half_scalars import half_scalar_op
from dycl.passes.outline_subgraphs import SIZES_ATTR
from dycl.passes.shape_inference import arith_constant_value, python_constant
from dycl.tensor_ops import int_floor_divide, int_remainder
from dycl.types import dim_names, dtype_of


def dense_to_tensor(attr: DenseIntOrFPElementsAttr) -> torch.Tensor:
    assert isinstance(attr.type, TensorType)
    values = [x for x in attr.get_values()]
    return torch.tensor(values, dtype=dtype_of(attr.type.element_type)).reshape(attr.type.get_shape())


# A Python float meets a tensor at the tensor's precision; float32 keeps that in
# backends whose type promotion would widen to float64.
_SCALAR_EXAMPLES = {
    f64: lambda: torch.tensor(0.3, dtype=torch.float32),  # exact in no float type: rounding shows
    i64: lambda: torch.tensor(1, dtype=torch.int64),
    i1: lambda: torch.tensor(True),
}


# The example size of a dynamic dimension: not 0 or 1, which torch.export specializes,
# and large enough that sizes computed from it (an image size halved per stage) are
# not 0 or 1 either (the export's guards on them are checked per call; see
# dycl/backends/shape_guards.py).
DYNAMIC_EXAMPLE_SIZE = 32


def dynamic_dims(fn: func.FuncOp) -> tuple[tuple[int, int], ...]:
    """(input, dimension) of each dynamic (`?`) dimension of the function's inputs."""
    return tuple((i, k) for i, t in enumerate(fn.function_type.inputs.data) if isinstance(t, TensorType)
                 for k, n in enumerate(t.get_shape()) if n < 0)


def dynamic_names(fn: func.FuncOp) -> tuple[str, ...]:
    """The name (a size expression of named dimensions, or "") of each dynamic_dims entry."""
    types = fn.function_type.inputs.data
    return tuple(dim_names(types[i])[k] for i, k in dynamic_dims(fn))


def _declared_ranges(fn: func.FuncOp) -> dict[str, tuple[int, int | None]]:
    """The ranges the signature on the host function @forward declares (`b=1..64`)."""
    from xdsl.dialects.builtin import ModuleOp, StringAttr

    from dycl.signature import Signature
    from dycl.types import SIGNATURE_ATTR

    module = fn.parent_op()
    if not isinstance(module, ModuleOp):
        return {}
    for f in module.ops:
        if isinstance(f, func.FuncOp) and isinstance(text := f.attributes.get(SIGNATURE_ATTR), StringAttr):
            sig = Signature.parse(text.data)
            return {n: sig.range_of(n) for n in sig.names()}
    return {}


def subgraph_spec(fn: func.FuncOp, model: nn.Module) -> SubgraphSpec:
    """What a backend needs to build the sub-DNN `fn`."""
    sizes = fn.attributes.get(SIZES_ATTR)
    spec = SubgraphSpec(fn.sym_name.data, to_graph_module(fn, model), [], dynamic=dynamic_dims(fn),
                        dynamic_names=dynamic_names(fn), name_ranges=_declared_ranges(fn),
                        sizes_of=tuple(tuple(a.get_values()) for a in sizes.data) if sizes is not None else ())
    spec.example_inputs = spec.consistent(example_inputs(fn, spec=spec))
    return spec


def computes_in_double(fn: func.FuncOp) -> bool:
    """A sub-DNN with float64 tensors: host floats enter it as float64 (as Python's
    float meets `x.double()` in eager), not float32."""
    def double(t: Any) -> bool:
        return isinstance(t, TensorType) and t.element_type == f64

    return any(double(r.type) for op in fn.walk() for r in op.results) or any(
        double(t) for t in fn.function_type.inputs.data)


def example_inputs(fn: func.FuncOp, seed: int = 0, spec: SubgraphSpec | None = None) -> list[torch.Tensor]:
    """Random inputs of the function's input types (for export and tuning); a
    dynamic dimension gets DYNAMIC_EXAMPLE_SIZE (with `spec`, related dimensions
    related sizes: `2*b` twice `b`)."""
    gen = torch.Generator().manual_seed(seed)
    sizes = {d: spec.example_size(k, DYNAMIC_EXAMPLE_SIZE) for k, d in enumerate(spec.dynamic)} if spec else {}
    out = []
    for i, t in enumerate(fn.function_type.inputs.data):
        if t == f64 and computes_in_double(fn):
            out.append(torch.tensor(0.5, dtype=torch.float64))  # (the host hands it over so: _f64)
            continue
        if t in _SCALAR_EXAMPLES:  # host scalars enter sub-DNNs as 0-d tensors
            out.append(_SCALAR_EXAMPLES[t]())
            continue
        if not isinstance(t, TensorType):
            raise PassError(f"sub-DNN @{fn.sym_name.data} takes a non-tensor input of type {t}", fn)
        dtype = dtype_of(t.element_type)
        shape = [n if n >= 0 else sizes.get((i, k), DYNAMIC_EXAMPLE_SIZE) for k, n in enumerate(t.get_shape())]
        if dtype.is_floating_point:
            out.append(torch.randn(shape, generator=gen).to(dtype))
        elif dtype == torch.bool:
            out.append(torch.randint(0, 2, shape, generator=gen).bool())
        else:  # 0 and 1: integer inputs are often indices, valid into any dimension of 2 or more
            out.append(torch.randint(0, 2, shape, generator=gen).to(dtype))
    return out


def to_graph_module(fn: func.FuncOp, model: nn.Module) -> fx.GraphModule:
    graph = fx.Graph()
    owned: dict[str, Any] = {}
    env: dict[SSAValue, Any] = {}
    host_ints: set[fx.Node] = set()  # host ints, which enter as 0-d tensors
    for i, arg in enumerate(fn.body.block.args):
        hint = re.sub(r"\W", "_", arg.name_hint or "arg").strip("_") or "arg"
        env[arg] = graph.placeholder(f"{hint}_{i}")
        if arg.type == i64:
            host_ints.add(env[arg])
    for op in fn.body.block.ops:
        match op:
            case arith.ConstantOp():
                env[op.result] = arith_constant_value(op)
            case d.ConstantOp():
                if isinstance(op.value, DenseIntOrFPElementsAttr):
                    name = f"_dycl_const_{len(owned)}"
                    owned[name] = dense_to_tensor(op.value)
                    env[op.result] = graph.get_attr(name)
                else:
                    env[op.result] = python_constant(op.value)
            case d.ParamOp():
                path = op.path.data
                try:
                    owned[path] = model.get_parameter(path)
                except AttributeError:
                    owned[path] = model.get_buffer(path)
                env[op.result] = graph.get_attr(path)
            case d.CallModuleOp():
                args, kwargs = _args(op, env)
                owned[op.path.data] = model.get_submodule(op.path.data)
                env[op.result] = graph.call_module(op.path.data, tuple(args), kwargs)
            case d.CallFunctionOp():
                args, kwargs = _args(op, env)
                target = _printable(resolve_qualname(op.target.data))
                if op.target.data in _ARITHMETIC:
                    args = _promote_operands(graph, op, args)
                elif op.target.data in _COMPARISONS:
                    args = _promote_compared(graph, op, args)
                if op.target.data == "_operator.getitem" and len(args) == 2:
                    args = [args[0], _nonnegative_index(args[1], op.operands[0].type)]
                if op.target.data in (*_FLOOR_DIVIDE, *_REMAINDER) and _integer_result(op) and not kwargs and \
                        len(args) == 2 and any(isinstance(a, fx.Node) for a in args):
                    # INT_MIN // -1 and % -1: the CPU's idiv traps where torch wraps
                    target = int_floor_divide if op.target.data in _FLOOR_DIVIDE else int_remainder
                elif op.target.data in _FLOOR_DIVIDE and any(isinstance(a, fx.Node) for a in args):
                    # torch floors; ONNX's Div (what the exporter makes of //) truncates
                    target, kwargs = torch.div, {**kwargs, "rounding_mode": "floor"}
                elif target is operator.pow and args and not isinstance(args[0], fx.Node):
                    target = torch.pow  # FX prints `-2.0 ** x`, which Python reads as -(2.0 ** x)
                if target is operator.getitem and (node := _index_by_host_int(graph, *args, host_ints)) is not None:
                    env[op.result] = node
                elif (node := half_scalar_op(graph, op.target.data, False, op.positional_and_keyword()[0], args,
                                             kwargs, op.result.type)) is not None:
                    env[op.result] = node
                elif target is len and len(args) == 1 and isinstance(args[0], fx.Node):
                    # a size, not a Python int: export keeps a dynamic dimension symbolic
                    env[op.result] = graph.call_method("size", (args[0], 0))
                elif all(not isinstance(a, fx.Node) for a in _flat(args, kwargs)) and (op.target.data in (
                    "builtins.slice", "builtins.getattr", "torch.Size") or op.target.data.startswith("_operator.")
                        and op.result.type == d.PYOBJ):  # Python values known at build time
                    env[op.result] = target(*args, **kwargs)
                else:
                    env[op.result] = graph.call_function(target, tuple(args), kwargs)
            case d.CallMethodOp():
                args, kwargs = _args(op, env)
                if op.method.data in _ARITHMETIC_METHODS:
                    args = _promote_operands(graph, op, args)
                elif op.method.data in _COMPARISON_METHODS:
                    args = _promote_compared(graph, op, args)
                method = op.method.data
                if method == "view" and not any(isinstance(a, torch.dtype) for a in args[1:]):
                    # Values, not storage: a `.contiguous()` before it was dropped as an
                    # identity, and view refuses a permuted layout that reshape copies.
                    method = "reshape"
                half = half_scalar_op(graph, method, True, op.positional_and_keyword()[0], args, kwargs,
                                      op.results[0].type)
                if half is not None:
                    env[op.result] = half
                elif op.method.data in ("__floordiv__", "floor_divide"):
                    env[op.result] = graph.call_function(torch.div, tuple(args), {**kwargs, "rounding_mode": "floor"})
                else:
                    env[op.result] = graph.call_method(method, tuple(args), kwargs)
            case d.MakeTupleOp():
                items = [env[v] for v in op.elements]
                env[op.result] = list(items) if op.is_list else tuple(items)
            case d.GetItemOp():
                src = env[op.source]
                idx = op.index.value.data
                env[op.result] = (
                    graph.call_function(operator.getitem, (src, idx)) if isinstance(src, fx.Node) else src[idx]
                )
            case func.ReturnOp():
                graph.output(tuple(env[v] for v in op.operands))
            case _:
                raise PassError(f"op '{op.name}' cannot be part of a sub-DNN", op)
    root = nn.Module()
    # Modules first: a parameter under an installed module is already in place.
    for path, obj in sorted(owned.items(), key=lambda kv: not isinstance(kv[1], nn.Module)):
        _install(root, path, obj)
    gm = fx.GraphModule(root, graph, class_name=f"Dycl_{fn.sym_name.data}")
    # Not gm.eval(): that would switch the user's own submodules (installed above) too.
    gm.training = False
    return gm


_ARITHMETIC = frozenset(
    f"{m}.{f}" for m in ("_operator", "torch") for f in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "div")
)
_ARITHMETIC_METHODS = frozenset({"add", "sub", "mul", "div", "__add__", "__sub__", "__mul__", "__truediv__",
                                 "__radd__", "__rsub__", "__rmul__", "__floordiv__", "__mod__", "__pow__"})


_FLOOR_DIVIDE = frozenset({"_operator.floordiv", "torch.floor_divide"})
_REMAINDER = frozenset({"_operator.mod", "torch.remainder"})


def _integer_result(op: Any) -> bool:
    t = op.result.type
    return isinstance(t, TensorType) and not dtype_of(t.element_type).is_floating_point and \
        dtype_of(t.element_type) != torch.bool
_COMPARISON_NAMES = ("lt", "le", "gt", "ge", "eq", "ne")
_COMPARISONS = frozenset(f"{m}.{f}" for m in ("_operator", "torch") for f in _COMPARISON_NAMES)
_COMPARISON_METHODS = frozenset([*_COMPARISON_NAMES, *(f"__{f}__" for f in _COMPARISON_NAMES)])


def _promote_compared(graph: fx.Graph, op: d.CallFunctionOp | d.CallMethodOp, args: list[Any]) -> list[Any]:
    """An integer tensor compared with a float (a Python float, a float tensor) is
    compared as floats, as in torch (`i < 0.5` is true for 0); TVM's importer cast
    the float to the integer type instead (`0 < 0`: false)."""
    pos, _ = op.positional_and_keyword()
    if len(pos) != 2:
        return args

    def float_dtype(t: Any) -> torch.dtype | None:
        if t == f64 or isinstance(t, TensorType) and not t.get_shape() and _is_float(t):
            return torch.get_default_dtype()  # a scalar: its kind promotes, not its width
        return dtype_of(t.element_type) if isinstance(t, TensorType) and _is_float(t) else None

    target = next((f for v in pos if (f := float_dtype(v.type)) is not None), None)
    if target is None:
        return args
    return [graph.call_method("to", (a, target)) if isinstance(a, fx.Node) and isinstance(v.type, TensorType)
            and v.type.element_type != i1 and not _is_float(v.type) else a for a, v in zip(args, pos)]


def _is_float(t: TensorType) -> bool:
    return dtype_of(t.element_type).is_floating_point


def _nonnegative_index(index: Any, source: Attribute) -> Any:
    """Negative int indices and slice bounds of a subscript made positive, where the
    dims are known: TVM 0.27 read `s[-1]` wrong (every value compared false)."""
    if not isinstance(source, TensorType):
        return index
    shape = source.get_shape()
    items = list(index) if isinstance(index, tuple) else [index]
    if any(i is Ellipsis or isinstance(i, fx.Node) for i in items):
        return index  # an Ellipsis, or tensor indices (a mask takes several dims): not counted here
    out, dim = [], 0
    for i in items:
        n = shape[dim] if dim < len(shape) else -1
        if i is None:
            out.append(i)
            continue
        if isinstance(i, int) and not isinstance(i, bool) and -n <= i < 0:
            i += n  # (past -n stays as it is: torch raises IndexError, as eager does)
        elif isinstance(i, slice) and n >= 0:
            # a bound before the start clamps to 0, as Python's slices do (x[-3:] of 2 rows is both)
            i = slice(*(max(b + n, 0) if isinstance(b, int) and not isinstance(b, bool) and b < 0 and k < 2 else b
                        for k, b in enumerate((i.start, i.stop, i.step))))
        out.append(i)
        dim += 1
    return tuple(out) if isinstance(index, tuple) else out[0]


def _promote_operands(graph: fx.Graph, op: d.CallFunctionOp | d.CallMethodOp, args: list[Any]) -> list[Any]:
    """Operands of arithmetic cast to the result's dtype first where torch's
    promotion changes their kind: bool tensors with a non-bool result (TVM 0.27's
    importer casts the other operand to bool instead: `(i < 0) * 4` gives 1), and
    integer tensors with a floating result (it keeps the integer dtype:
    `i * 1.5`, `i / 2` stay integers)."""
    result = op.results[0].type
    if not isinstance(result, TensorType) or result.element_type == i1:
        return args
    pos, _ = op.positional_and_keyword()
    dtype = dtype_of(result.element_type)

    def kind_changes(t: Any) -> bool:
        elem = t.element_type if isinstance(t, TensorType) else t
        if elem == i1:
            return True
        return dtype.is_floating_point and isinstance(t, TensorType) and not dtype_of(elem).is_floating_point

    return [graph.call_method("to", (a, dtype)) if isinstance(a, fx.Node) and kind_changes(v.type) else a
            for a, v in zip(args, pos)]


def _index_by_host_int(graph: fx.Graph, src: Any, index: Any, host_ints: set[fx.Node]) -> fx.Node | None:
    """`x[0, i]` with `i` a host int (a 0-d tensor in the sub-DNN): export would read
    it back with `.item()`, which TVM cannot import; `index_select` keeps it a tensor.
    None for any other indexing."""
    items = index if isinstance(index, tuple) else (index,)
    if not isinstance(src, fx.Node) or not any(isinstance(i, fx.Node) and i in host_ints for i in items):
        return None
    if not all(isinstance(i, (int, slice)) or (isinstance(i, fx.Node) and i in host_ints) for i in items):
        return None
    node, dim = src, 0
    for i in items:
        if isinstance(i, slice):
            if i != slice(None):
                node = graph.call_function(operator.getitem, (node, (slice(None),) * dim + (i,)))
            dim += 1
        elif isinstance(i, int):
            node = graph.call_method("select", (node, dim, i))
        else:
            flat = graph.call_method("reshape", (i, 1))
            size = graph.call_method("size", (node, dim))
            # Python's negative indices count from the end; index_select's do not.
            negative = graph.call_function(operator.lt, (flat, 0))
            wrapped = graph.call_function(torch.where, (negative, graph.call_function(operator.add, (flat, size)), flat))
            node = graph.call_method("squeeze", (graph.call_method("index_select", (node, dim, wrapped)), dim))
    return node


def _install(root: nn.Module, path: str, obj: Any) -> None:
    *parents, leaf = path.split(".")
    m = root
    for p in parents:
        if not hasattr(m, p):
            m.add_module(p, nn.Module())
        m = getattr(m, p)
    if hasattr(m, leaf):
        return
    if isinstance(obj, nn.Module):
        m.add_module(leaf, obj)
    elif isinstance(obj, nn.Parameter):
        m.register_parameter(leaf, obj)
    else:
        m.register_buffer(leaf, obj)


@functools.cache
def _bound_classmethod(target: types.MethodType) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **kwargs)

    call.__name__ = call.__qualname__ = f"{target.__self__.__name__}_{target.__name__}"
    call.__module__ = target.__self__.__module__
    return call


def _printable(target: Any) -> Any:
    """FX prints a call's target by its __module__ and __name__: a classmethod bound to
    the model's class (`Clamp.apply` of an autograd.Function) would print as torch's
    base class's, whose forward is abstract. Such a target is called through a function."""
    if isinstance(target, types.MethodType) and isinstance(target.__self__, type) and \
            not target.__self__.__module__.startswith("torch"):
        return _bound_classmethod(target)
    return target


def _args(op: d.CallModuleOp | d.CallFunctionOp | d.CallMethodOp, env: dict[SSAValue, Any]) -> tuple[list[Any], dict[str, Any]]:
    pos, kw = op.positional_and_keyword()
    return [env[v] for v in pos], {k: env[v] for k, v in kw.items()}


def _flat(args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    return list(args) + list(kwargs.values())
