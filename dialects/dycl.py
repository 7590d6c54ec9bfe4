"""The `dycl` dialect: PyTorch programs with data-dependent control flow.

Tensor ops mirror torch.fx node kinds (`call_module`, `call_function`,
`call_method`, `param`, `constant`) so that a branch-free region lowers 1:1 to an
FX graph. Control flow is structured (`if`, `for`, `while`) and may leave the
enclosing function early with `dycl.return` or a loop with `dycl.break`.
The host/device boundary is explicit: `dycl.to_bool` and `dycl.item` read a
tensor back to the host. After outlining, `dycl.call_subgraph` calls a
`func.func` that carries the `dycl.subgraph` unit attribute.

Values whose type has not been inferred yet have type `!dycl.any`; opaque Python
objects (None, strings, dtypes) have type `!dycl.pyobj`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence, Set as AbstractSet

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FlatSymbolRefAttrConstr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    NoneType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    UnrankedTensorType,
    Float64Type,
    f64,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import (
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasParent,
    MemoryEffect,
    IsTerminator,
    Pure,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from dycl.symbols import lookup_symbol

# --------------------------------------------------------------------------- types


@irdl_attr_definition
class AnyValueType(ParametrizedAttribute, TypeAttribute):
    """A value whose type the frontend could not know; `shape-inference` replaces it.

    ```mlir
    %y = dycl.call_module "fc"(%x) : (tensor<1x8xf32>) -> !dycl.any
    ```
    """

    name = "dycl.any"


@irdl_attr_definition
class PyObjType(ParametrizedAttribute, TypeAttribute):
    """An opaque Python object living on the host (None, a string, a dtype, a list).

    ```mlir
    %none = dycl.constant none : !dycl.pyobj
    ```
    """

    name = "dycl.pyobj"


@irdl_attr_definition
class GlobalAttr(ParametrizedAttribute):
    """A reference to a Python global by qualified name, e.g. a dtype.

    ```mlir
    %dt = dycl.constant #dycl.global<"torch.float32"> : !dycl.pyobj
    ```
    """

    name = "dycl.global"
    qualname: StringAttr = param_def()

    def __init__(self, qualname: str | StringAttr):
        if isinstance(qualname, str):
            qualname = StringAttr(qualname)
        super().__init__(qualname)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal()),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.qualname.data)


@irdl_attr_definition
class ListType(ParametrizedAttribute, TypeAttribute):
    """A Python list whose length only the run time knows, held by the host: what a
    data-dependent loop appends to (`tokens.append(t.item())`). Its elements share
    one type (`!dycl.any` until `shape-inference` knows it, e.g. for `[]`).

    ```mlir
    %l = dycl.make_list(%a) : (i64) -> !dycl.list<i64>
    ```
    """

    name = "dycl.list"
    element: Attribute = param_def()

    def __init__(self, element: Attribute):
        super().__init__(element)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element)


ANY = AnyValueType()
PYOBJ = PyObjType()
HOST_SCALAR_TYPES = (IntegerType, Float64Type)


def is_tensor_type(t: Attribute) -> bool:
    return isinstance(t, (TensorType, UnrankedTensorType))


def contains_tensor_type(t: Attribute) -> bool:
    """True for tensors and for tuples holding a tensor somewhere inside."""
    if isinstance(t, TupleType):
        return any(contains_tensor_type(e) for e in t.types)
    return is_tensor_type(t)


def is_host_scalar_type(t: Attribute) -> bool:
    return isinstance(t, HOST_SCALAR_TYPES)


def type_accepts(expected: Attribute, got: Attribute) -> bool:
    """`got` may flow where `expected` is declared: equal, `expected` not inferred
    yet, `expected` an opaque Python object (which any value can be), or the same
    tensor type where `expected` names fewer dimensions (a join of paths that name a
    dimension differently keeps it unnamed: `tensor<?x8xf32>` takes `["b", ""]`) or
    has an unnamed `?` where `got` has a size; a held list takes a tuple it grows from."""
    if expected == got or expected == ANY or expected == PYOBJ:
        return True
    if isinstance(expected, ListType) and isinstance(got, ListType):
        # `[]` is a list of anything; a list typed before its elements were known takes any
        return ANY in (expected.element, got.element) or type_accepts(expected.element, got.element)
    if isinstance(expected, ListType) and (got == PYOBJ or isinstance(got, TupleType) and all(
            type_accepts(expected.element, t) for t in got.types.data)):
        return True  # a tuple a loop grows, carried as a held list, enters as the tuple it starts as
    if isinstance(expected, TupleType) and isinstance(got, TupleType):
        return types_accept(expected.types.data, got.types.data)
    if not (isinstance(expected, TensorType) and isinstance(got, TensorType)
            and expected.element_type == got.element_type and len(expected.get_shape()) == len(got.get_shape())):
        return False
    # A static size flows where any size (an unnamed `?`) is declared: a loop-carried
    # tensor that grows enters the loop with its first size.
    return all(e == g or e == DYNAMIC_INDEX and n == "" for e, g, n in zip(expected.get_shape(), got.get_shape(),
                                                                 _dim_names(expected))) \
        and all(e in ("", g) for e, g in zip(_dim_names(expected), _dim_names(got)))


def _dim_names(t: TensorType) -> list[str]:
    enc = t.encoding
    rank = len(t.get_shape())
    if isinstance(enc, ArrayAttr) and len(enc.data) == rank and all(isinstance(e, StringAttr) for e in enc.data):
        return [e.data for e in enc.data]
    return [""] * rank if isinstance(enc, NoneAttr) else ["\0"] * rank  # another encoding: only equal types


def types_accept(expected: Sequence[Attribute], got: Sequence[Attribute]) -> bool:
    return len(expected) == len(got) and all(map(type_accepts, expected, got))


# ---------------------------------------------------------------- helpers for ops

_IMPURE_FUNCTIONS = {"torch.manual_seed", "torch.seed", "builtins.print", "builtins.input"}


# Calls that only read a list the host holds (others may change it: kept by dce).
_READS_LISTS = frozenset({"torch.tensor", "torch.as_tensor", "torch.stack", "torch.cat", "torch.concat",
                          "builtins.sum", "builtins.max", "builtins.min", "builtins.any", "builtins.all",
                          "builtins.len", "builtins.list", "builtins.sorted", "_operator.getitem",
                          "_operator.contains", "index", "count"})

# Functions of these modules compute values; calls of anything else are kept even when unused.
_PURE_CALL_MODULES = ("torch.", "_operator.", "math.", "builtins.", "collections.", "dycl.tensor_ops.")


# Methods that update a Python container (`seen.add(t)`, `toks.sort()`, a Counter's
# `subtract`) under a name a tensor's pure method has too: on a value not typed yet, kept.
_CONTAINER_UPDATES = frozenset({"add", "sort", "subtract"})


@functools.lru_cache(maxsize=None)
def _is_tensor_method(name: str) -> bool:
    import torch

    return hasattr(torch.Tensor, name)


def _may_be_python_object(v: SSAValue, depth: int = 0) -> bool:
    """Whether an untyped value may be a Python object rather than a tensor: what user
    code, a fallback region or a Python object's method or attribute made, or a join
    of such (`boxes = Boxes(t)`, then `boxes.clip(size)`)."""
    if v.type == PYOBJ:
        return True
    if v.type != ANY or depth > 8:
        return False
    owner = v.owner
    if isinstance(owner, PyRegionOp):
        return True
    if isinstance(owner, CallFunctionOp):
        name = owner.target.data
        if not name.startswith(_PURE_CALL_MODULES):
            return True
        return name == "builtins.getattr" and _may_be_python_object(owner.operands[0], depth + 1)
    if isinstance(owner, CallMethodOp):
        return bool(owner.operands) and _may_be_python_object(owner.operands[0], depth + 1)
    if isinstance(owner, IfOp):
        return any(isinstance(r.block.last_op, YieldOp) and v.index < len(r.block.last_op.operands)
                   and _may_be_python_object(r.block.last_op.operands[v.index], depth + 1) for r in owner.regions)
    return False


class _CallEffects(MemoryEffect):
    """Calls are pure (models are compiled in eval mode), except in-place methods
    (`x.add_()`), a few functions with global effects, methods of Python objects and
    functions outside torch/operator/math/builtins: those are kept by dce."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        name = ""
        if isinstance(op, CallMethodOp):
            name = op.method.data
            if op.operands and (op.operands[0].type == PYOBJ or (
                    op.operands[0].type == ANY and (not _is_tensor_method(name) or name in _CONTAINER_UPDATES
                                                    or _may_be_python_object(op.operands[0])))):
                # a method of a Python object (`logger.warning(...)`, a detectron2 Boxes'
                # `clip`, named like a tensor's): anything may happen
                return None
        elif isinstance(op, CallFunctionOp):
            name = op.target.data
            if name in _IMPURE_FUNCTIONS or not name.startswith(_PURE_CALL_MODULES):
                return None
        if any(isinstance(v.type, ListType) for v in op.operands) and (
                name not in _READS_LISTS or EMPTY_LIST_DTYPE_ATTR in op.attributes):
            return None  # `toks.sort()` may change the list; an empty list's dtype is checked
        if name.endswith("_") and not name.endswith("__"):
            return None
        if isinstance(op, CallFunctionOp) and may_raise_on_data(name, op):
            return None  # (`a = math.log(s)` unused: eager raises for s < 0, so must the host)
        return set()


# Calls that raise on some values of host scalars: a domain error (`math.log(-1)`),
# division by zero, an index out of range, NaN or inf to int.
_RAISES_ON_SCALARS = frozenset({"_operator.truediv", "_operator.floordiv", "_operator.mod", "_operator.pow",
                                "builtins.divmod", "builtins.pow", "builtins.int", "builtins.round"})
_MATH_NEVER_RAISES = frozenset({"math.isnan", "math.isinf", "math.isfinite", "math.copysign", "math.fabs",
                                "math.isclose"})


CONSTANT_OPS = ("arith.constant", "dycl.constant", "dycl.make_tuple")


def is_constant(v: SSAValue, depth: int = 0) -> bool:
    """Whether `v` is a compile-time constant (a tuple of them too: `x[0, i]`'s index is not)."""
    owner = v.owner
    if not isinstance(owner, Operation) or owner.name not in CONSTANT_OPS:
        return False  # (an input, a block argument, a computed value)
    return depth < 16 and all(is_constant(o, depth + 1) for o in owner.operands)


def may_raise_on_data(name: str, op: Operation) -> bool:
    """Whether the call may raise for some values of its run-time operands (not for
    sizes, which shape-inference checks): kept where its result is unused."""
    constant = is_constant
    if all(map(constant, op.operands)):
        return False  # (folded, or raising for every input)
    if name == "_operator.getitem":
        return len(op.operands) == 2 and not constant(op.operands[1])
    if name.startswith("math."):
        return name not in _MATH_NEVER_RAISES
    return name in _RAISES_ON_SCALARS and not any(isinstance(v.type, TensorType) for v in op.operands)


class _ItemEffects(MemoryEffect):
    """`int(t)` raises for NaN and inf (`n = int(x.sum())` unused still raises in eager);
    `float(t)`, `bool(t)` and `.item()` of a float do not."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        assert isinstance(op, ItemOp)
        t = op.input.type
        of_ints = t in (i64, i1) or isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
        return None if op.result.type in (i64, ANY) and not of_ints else set()


class _Canonicalization(HasCanonicalizationPatternsTrait):
    """Folding patterns (shared with constant-propagation) for upstream `canonicalize`."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from dycl.passes.constant_propagation import canonicalization_patterns

        return canonicalization_patterns()


def _check_kwargs(op: IRDLOperation, n_args: int) -> None:
    kwargs = op.properties.get("kwargs")
    if kwargs is None:
        return
    assert isinstance(kwargs, ArrayAttr)
    names = [k.data for k in kwargs.data if isinstance(k, StringAttr)]
    if len(names) != len(kwargs.data):
        raise VerifyException(f"'{op.name}' kwargs must be an array of strings")
    if len(names) > n_args:
        raise VerifyException(
            f"'{op.name}' names {len(names)} keyword arguments but has only "
            f"{n_args} operands"
        )
    if len(set(names)) != len(names):
        raise VerifyException(f"'{op.name}' has a repeated keyword argument name")


class _CallOpBase(IRDLOperation):
    """Shared shape of the three FX-style call ops.

    Operands are the Python arguments in order; the last `len(kwargs)` of them are
    keyword arguments with those names. Python constants are SSA constants.
    """

    args = var_operand_def()
    kwargs = opt_prop_def(ArrayAttr[StringAttr])
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(_CallEffects(), _Canonicalization())

    def positional_and_keyword(self) -> tuple[list[SSAValue], dict[str, SSAValue]]:
        return _positional_and_keyword(self.args, self.kwargs)

    def verify_(self) -> None:
        _check_kwargs(self, len(self.args))


def _positional_and_keyword(args: Sequence[SSAValue], kwargs: ArrayAttr[StringAttr] | None,
                            ) -> tuple[list[SSAValue], dict[str, SSAValue]]:
    """Python's arguments of a call-like op: the last `len(kwargs)` operands are by keyword."""
    names = [k.data for k in kwargs.data] if kwargs else []
    n_pos = len(args) - len(names)
    return list(args[:n_pos]), dict(zip(names, args[n_pos:]))


def _kwargs_attr(kwargs: Sequence[str]) -> ArrayAttr[StringAttr] | None:
    return ArrayAttr([StringAttr(k) for k in kwargs]) if kwargs else None


@irdl_op_definition
class CallModuleOp(_CallOpBase):
    """Calls a leaf submodule of the compiled model (an FX `call_module` node).

    `path` is the dotted path from the root module, as in `named_modules()`.

    ```mlir
    %y = dycl.call_module "layer1.0.conv1"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32>
    ```
    """

    name = "dycl.call_module"
    path = prop_def(StringAttr)

    assembly_format = "$path `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def __init__(
        self,
        path: str,
        args: Sequence[SSAValue | Operation],
        kwargs: Sequence[str] = (),
        result_type: Attribute = ANY,
    ):
        props: dict[str, Attribute] = {"path": StringAttr(path)}
        if (kw := _kwargs_attr(kwargs)) is not None:
            props["kwargs"] = kw
        super().__init__(operands=[args], properties=props, result_types=[result_type])

    def verify_(self) -> None:
        super().verify_()
        if not self.path.data or any(not p for p in self.path.data.split(".")):
            raise VerifyException(
                f"'dycl.call_module' path '{self.path.data}' is not a dotted module path"
            )


@irdl_op_definition
class CallFunctionOp(_CallOpBase):
    """Calls a Python function by qualified name (an FX `call_function` node).

    Operators use the `_operator` module, as FX does (`_operator.add`).

    ```mlir
    %y = dycl.call_function "torch.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %s = dycl.call_function "torch.sum"(%x, %c1) {kwargs = ["dim"]} : (tensor<2x3xf32>, i64) -> tensor<2xf32>
    ```
    """

    name = "dycl.call_function"
    target = prop_def(StringAttr)

    assembly_format = (
        "$target `(` $args `)` attr-dict `:` functional-type($args, $result)"
    )

    def __init__(
        self,
        target: str,
        args: Sequence[SSAValue | Operation],
        kwargs: Sequence[str] = (),
        result_type: Attribute = ANY,
    ):
        props: dict[str, Attribute] = {"target": StringAttr(target)}
        if (kw := _kwargs_attr(kwargs)) is not None:
            props["kwargs"] = kw
        super().__init__(operands=[args], properties=props, result_types=[result_type])

    def verify_(self) -> None:
        super().verify_()
        parts = self.target.data.split(".")
        if len(parts) < 2 or any(not p.isidentifier() for p in parts):
            raise VerifyException(
                f"'dycl.call_function' target '{self.target.data}' is not a "
                "qualified Python name (module.function)"
            )


@irdl_op_definition
class CallMethodOp(_CallOpBase):
    """Calls a method on its first operand (an FX `call_method` node).

    ```mlir
    %m = dycl.call_method "mean"(%h) : (tensor<1x4xf32>) -> tensor<f32>
    ```
    """

    name = "dycl.call_method"
    method = prop_def(StringAttr)

    assembly_format = (
        "$method `(` $args `)` attr-dict `:` functional-type($args, $result)"
    )

    def __init__(
        self,
        method: str,
        args: Sequence[SSAValue | Operation],
        kwargs: Sequence[str] = (),
        result_type: Attribute = ANY,
    ):
        props: dict[str, Attribute] = {"method": StringAttr(method)}
        if (kw := _kwargs_attr(kwargs)) is not None:
            props["kwargs"] = kw
        super().__init__(operands=[args], properties=props, result_types=[result_type])

    def verify_(self) -> None:
        super().verify_()
        if not self.method.data.isidentifier():
            raise VerifyException(
                f"'dycl.call_method' method '{self.method.data}' is not an identifier"
            )
        n_kw = len(self.kwargs.data) if self.kwargs else 0
        if len(self.args) - n_kw < 1:
            raise VerifyException(
                "'dycl.call_method' needs the receiver as its first positional operand"
            )


@irdl_op_definition
class ParamOp(IRDLOperation):
    """A parameter or buffer of the compiled model, by dotted path.

    ```mlir
    %w = dycl.param "fc.weight" : tensor<10x64xf32>
    ```
    """

    name = "dycl.param"
    path = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())

    assembly_format = "$path attr-dict `:` type($result)"

    def __init__(self, path: str, result_type: Attribute = ANY):
        super().__init__(
            properties={"path": StringAttr(path)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        if not (is_tensor_type(self.result.type) or self.result.type == ANY):
            raise VerifyException(
                f"'dycl.param' must produce a tensor, got {self.result.type}"
            )


_PYOBJ_VALUE_ATTRS = (StringAttr, NoneAttr, NoneType, GlobalAttr, ArrayAttr)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A Python or tensor literal that is not a host scalar (those use `arith.constant`).

    Tensors take a dense attribute; `!dycl.pyobj` takes a string, `none`, a
    `#dycl.global<...>` or an array of those and of integers/floats. A `none`
    marked `dycl.unset` starts a slot no path reads before it is set (the value an
    early `return` from a loop leaves): shape-inference types it from what is stored.

    ```mlir
    %t = dycl.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %n = dycl.constant none : !dycl.pyobj
    %r = dycl.constant none {dycl.unset} : !dycl.pyobj
    %s = dycl.constant "bilinear" : !dycl.pyobj
    ```
    """

    name = "dycl.constant"
    value = prop_def(Attribute)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: Attribute, result_type: Attribute | None = None):
        if result_type is None:
            result_type = (
                value.type if isinstance(value, DenseIntOrFPElementsAttr) else PYOBJ
            )
        super().__init__(properties={"value": value}, result_types=[result_type])

    def verify_(self) -> None:
        t = self.result.type
        v = self.value
        if is_tensor_type(t):
            if not isinstance(v, DenseIntOrFPElementsAttr):
                raise VerifyException(
                    "'dycl.constant' of tensor type needs a dense elements value"
                )
            if v.type != t:
                raise VerifyException(
                    f"'dycl.constant' value type {v.type} does not match result type {t}"
                )
        elif t == PYOBJ:
            if not _valid_pyobj_value(v):
                raise VerifyException(
                    "'dycl.constant' of type !dycl.pyobj needs a string, none, "
                    "#dycl.global or an array of literals"
                )
        else:
            raise VerifyException(
                f"'dycl.constant' result must be a tensor or !dycl.pyobj, got {t} "
                "(use arith.constant for host scalars)"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = parser.parse_attribute()
        attrs = parser.parse_optional_attr_dict()
        if isinstance(value, DenseIntOrFPElementsAttr):
            result_type: Attribute = value.type
        else:
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
        op = cls(value, result_type)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)
        if not isinstance(self.value, DenseIntOrFPElementsAttr):
            printer.print_string(" : ")
            printer.print_attribute(self.result.type)


def _valid_pyobj_value(v: Attribute) -> bool:
    if isinstance(v, ArrayAttr):
        return all(
            isinstance(e, (IntegerAttr, FloatAttr)) or _valid_pyobj_value(e)
            for e in v.data
        )
    return isinstance(v, _PYOBJ_VALUE_ATTRS)


@irdl_op_definition
class MakeTupleOp(IRDLOperation):
    """Builds a Python tuple (`is_list` unset) or list (`is_list` set) of values.

    ```mlir
    %t = dycl.make_tuple(%a, %b) : (tensor<2xf32>, i64) -> tuple<tensor<2xf32>, i64>
    %l = dycl.make_tuple(%a, %b) {is_list} : (tensor<2xf32>, tensor<2xf32>) -> !dycl.pyobj
    ```
    """

    name = "dycl.make_tuple"
    elements = var_operand_def()
    is_list = opt_prop_def(UnitAttr)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    assembly_format = "`(` $elements `)` attr-dict `:` functional-type($elements, $result)"

    def __init__(self, elements: Sequence[SSAValue], is_list: bool = False):
        types = [e.type for e in elements]
        if ANY in types and not is_list:
            result_type: Attribute = ANY  # shape-inference decides
        elif is_list or not types or not all(contains_tensor_type(t) for t in types):
            result_type = PYOBJ
        else:
            result_type = TupleType(tuple(types))
        super().__init__(
            operands=[elements],
            properties={"is_list": UnitAttr()} if is_list else {},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        t = self.result.type
        if isinstance(t, TupleType):
            if self.is_list is not None:
                raise VerifyException("'dycl.make_tuple' building a list must give !dycl.pyobj")
            if list(t.types.data) != [e.type for e in self.elements]:
                raise VerifyException(
                    "'dycl.make_tuple' result tuple type does not match its elements"
                )
        elif t not in (PYOBJ, ANY):
            raise VerifyException(
                f"'dycl.make_tuple' must produce a tuple type or !dycl.pyobj, got {t}"
            )


@irdl_op_definition
class GetItemOp(IRDLOperation):
    """Reads element `index` of a tuple, e.g. the `(h, c)` state of an LSTM.

    ```mlir
    %h = dycl.get_item %t[0] : tuple<tensor<1x8xf32>, tensor<1x8xf32>> -> tensor<1x8xf32>
    ```
    """

    name = "dycl.get_item"
    source = operand_def()
    index = prop_def(IntegerAttr[IntegerType])
    result = result_def()
    traits = traits_def(Pure())

    assembly_format = "$source `[` $index `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, index: int, result_type: Attribute = ANY):
        if isinstance(source.type, TupleType) and result_type == ANY:
            result_type = source.type.types.data[index]
        super().__init__(
            operands=[source],
            properties={"index": IntegerAttr(index, i64)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        t = self.source.type
        idx = self.index.value.data
        if isinstance(t, TupleType):
            n = len(t.types.data)
            if not 0 <= idx < n:
                raise VerifyException(
                    f"'dycl.get_item' index {idx} out of range for a tuple of {n}"
                )
            if self.result.type not in (t.types.data[idx], ANY):
                raise VerifyException(
                    f"'dycl.get_item' result type {self.result.type} does not match "
                    f"tuple element {idx} of type {t.types.data[idx]}"
                )
        elif t not in (ANY, PYOBJ):
            raise VerifyException(
                f"'dycl.get_item' source must be a tuple, got {t}"
            )


# ------------------------------------------------------------ host/device boundary


def _may_have_one_element(t: TensorType) -> bool:
    """Every static dim is 1; a `?` dim may be 1 at run time (torch raises if not)."""
    return all(dim in (1, DYNAMIC_INDEX) for dim in t.get_shape())


@irdl_op_definition
class ToBoolOp(IRDLOperation):
    """Python truthiness of a value: `bool(t)`. On a tensor this is a device→host sync.

    ```mlir
    %c = dycl.to_bool %t : tensor<i1>
    ```
    """

    name = "dycl.to_bool"
    input = operand_def()
    result = result_def(i1)
    traits = traits_def(Pure(), _Canonicalization())

    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[i1])

    def verify_(self) -> None:
        t = self.input.type
        if isinstance(t, TensorType):
            if not _may_have_one_element(t):
                raise VerifyException(
                    f"'dycl.to_bool' needs a one-element tensor, got {t} "
                    "(bool() of a multi-element tensor is ambiguous)"
                )


@irdl_op_definition
class ItemOp(IRDLOperation):
    """Reads a one-element tensor into a host scalar (`.item()`, `int(t)`, `float(t)`).

    The result is i1, i64 or f64 (Python's bool, int, float), or `!dycl.any`
    until `shape-inference` picks one from the tensor's dtype.

    ```mlir
    %v = dycl.item %t : tensor<i64> -> i64
    ```
    """

    name = "dycl.item"
    input = operand_def()
    result = result_def()
    traits = traits_def(_ItemEffects())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: Attribute):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        t = self.input.type
        if not (is_tensor_type(t) or t == ANY or is_host_scalar_type(t)):
            raise VerifyException(f"'dycl.item' reads a tensor or converts a host scalar, got {t}")
        if isinstance(t, TensorType) and not _may_have_one_element(t):
            raise VerifyException(f"'dycl.item' needs a one-element tensor, got {t}")
        if self.result.type not in (i1, i64, f64, ANY):
            raise VerifyException(
                f"'dycl.item' produces a host scalar (i1, i64, f64), got {self.result.type}"
            )


# ------------------------------------------------------------ run-time lists


def _list_element(op: Operation, t: Attribute) -> Attribute:
    if not isinstance(t, ListType):
        raise VerifyException(f"'{op.name}' needs a !dycl.list, got {t}")
    return t.element


def _check_element(op: Operation, element: Attribute, value: SSAValue) -> None:
    if not (element == ANY or value.type == ANY or type_accepts(element, value.type)):
        raise VerifyException(f"'{op.name}' puts a {value.type} into a list of {element}")


class _WritesItsList(MemoryEffect):
    """`dycl.list_append` changes the list it is given."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        return None  # (unknown effects: kept by dce, never merged or moved)


@irdl_op_definition
class MakeListOp(IRDLOperation):
    """A list the host holds, of the given elements, that may grow at run time.

    ```mlir
    %l = dycl.make_list(%a, %b) : (tensor<1x4xf32>, tensor<1x4xf32>) -> !dycl.list<tensor<1x4xf32>>
    %e = dycl.make_list() : () -> !dycl.list<!dycl.any>
    ```
    """

    name = "dycl.make_list"
    elements = var_operand_def()
    result = result_def(ListType)
    traits = traits_def(Pure())

    assembly_format = "`(` $elements `)` attr-dict `:` functional-type($elements, $result)"

    def __init__(self, elements: Sequence[SSAValue], element_type: Attribute = ANY):
        super().__init__(operands=[elements], result_types=[ListType(element_type)])

    def verify_(self) -> None:
        element = _list_element(self, self.result.type)
        for e in self.elements:
            _check_element(self, element, e)


@irdl_op_definition
class ListAppendOp(IRDLOperation):
    """`list.append(value)`: the host appends to the list in place, as Python does
    (every name and container holding it sees the element), and the result is the
    same list, its next version for the code after (not a copy: reading the
    operand afterwards sees the element too). Never removed as unused.

    ```mlir
    %m = dycl.list_append %l, %v : !dycl.list<i64>, i64 -> !dycl.list<i64>
    ```
    """

    name = "dycl.list_append"
    source = operand_def(ListType)
    value = operand_def()
    result = result_def(ListType)
    traits = traits_def(_WritesItsList())

    assembly_format = "$source `,` $value attr-dict `:` type($source) `,` type($value) `->` type($result)"

    def __init__(self, source: SSAValue, value: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[source, value], result_types=[result_type or source.type])

    def verify_(self) -> None:
        element = _list_element(self, self.result.type)
        if not type_accepts(self.result.type, self.source.type):
            raise VerifyException(f"'dycl.list_append' of a {self.source.type} cannot give a {self.result.type}")
        _check_element(self, element, self.value)


@irdl_op_definition
class ListGetOp(IRDLOperation):
    """`list[index]`, Python's indexing (negative from the end; IndexError past it).

    ```mlir
    %v = dycl.list_get %l[%i] : !dycl.list<i64> -> i64
    ```
    """

    name = "dycl.list_get"
    source = operand_def(ListType)
    index = operand_def(i64)
    result = result_def()
    traits = traits_def(Pure())

    assembly_format = "$source `[` $index `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, index: SSAValue):
        element = source.type.element if isinstance(source.type, ListType) else ANY
        super().__init__(operands=[source, index], result_types=[element])

    def verify_(self) -> None:
        element = _list_element(self, self.source.type)
        if element != ANY and self.result.type not in (element, ANY):
            raise VerifyException(f"'dycl.list_get' of a list of {element} gives {self.result.type}")


@irdl_op_definition
class ListLenOp(IRDLOperation):
    """`len(list)` on the host.

    ```mlir
    %n = dycl.list_len %l : !dycl.list<i64>
    ```
    """

    name = "dycl.list_len"
    source = operand_def(ListType)
    result = result_def(i64)
    traits = traits_def(Pure())

    assembly_format = "$source attr-dict `:` type($source)"

    def __init__(self, source: SSAValue):
        super().__init__(operands=[source], result_types=[i64])


# ------------------------------------------------------------------ control flow


def _print_region(printer: Printer, region: Region) -> None:
    printer.print_region(
        region,
        print_entry_block_args=False,
        print_empty_block=True,
        print_block_terminators=True,
    )


def _terminator_types(block: Block) -> list[Attribute] | None:
    """Types a block passes to its parent, or None if it leaves by return/break."""
    last = block.last_op
    if isinstance(last, YieldOp):
        return [a.type for a in last.values]
    return None


def _check_yields(op: Operation, region: Region, expected: Sequence[Attribute], what: str) -> None:
    if len(region.blocks) != 1:
        raise VerifyException(f"'{op.name}' {what} region must have exactly one block")
    block = region.block
    last = block.last_op
    # Only these leave a region in a way the lowering and the host runtime know.
    if not isinstance(last, (YieldOp, ReturnOp, BreakOp)):
        got = f", got {last.name}" if last is not None else ""
        raise VerifyException(
            f"'{op.name}' {what} region must end with dycl.yield, dycl.return or dycl.break{got}"
        )
    got = _terminator_types(block)
    if got is not None and not types_accept(expected, got):
        raise VerifyException(
            f"'{op.name}' {what} region yields ({', '.join(map(str, got))}) but the op "
            f"produces ({', '.join(map(str, expected))})"
        )


@irdl_op_definition
class IfOp(IRDLOperation):
    """Two-way branch on a host boolean, producing values from the branch taken.

    A branch ends with `dycl.yield` (values flow to the results), `dycl.return`
    (the enclosing function returns) or `dycl.break` (the enclosing loop exits).

    ```mlir
    %r = dycl.if %c -> (tensor<1x4xf32>) {
      dycl.return %a : tensor<1x4xf32>
    } else {
      dycl.yield %b : tensor<1x4xf32>
    }
    ```
    """

    name = "dycl.if"
    cond = operand_def(i1)
    output = var_result_def()
    then_region = region_def()
    else_region = region_def()
    traits = traits_def(_Canonicalization())

    def __init__(
        self,
        cond: SSAValue,
        result_types: Sequence[Attribute],
        then_region: Region,
        else_region: Region,
    ):
        super().__init__(
            operands=[cond],
            result_types=[result_types],
            regions=[then_region, else_region],
        )

    def verify_(self) -> None:
        types = list(self.output.types)
        _check_yields(self, self.then_region, types, "then")
        _check_yields(self, self.else_region, types, "else")

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.parse_operand(i1)
        types: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            types = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
        then_region = parser.parse_region()
        parser.parse_keyword("else")
        else_region = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        op = cls(cond, types, then_region, else_region)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        if self.output:
            printer.print_string(" -> (")
            printer.print_list(self.output.types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        _print_region(printer, self.then_region)
        printer.print_string(" else ")
        _print_region(printer, self.else_region)
        printer.print_op_attributes(self.attributes)


def _parse_assignments(
    parser: Parser,
) -> tuple[list[Parser.UnresolvedArgument], list[UnresolvedOperand]]:
    args: list[Parser.UnresolvedArgument] = []
    inits: list[UnresolvedOperand] = []

    def one() -> None:
        args.append(parser.parse_argument(expect_type=False))
        parser.parse_punctuation("=")
        inits.append(parser.parse_unresolved_operand())

    parser.parse_comma_separated_list(parser.Delimiter.PAREN, one)
    return args, inits


def _resolve_any(
    parser: Parser, operands: Sequence[UnresolvedOperand], types: Sequence[Attribute]
) -> list[SSAValue]:
    """Resolve loop inits: a `!dycl.any` slot accepts a value of any type."""
    out: list[SSAValue] = []
    for operand, t in zip(operands, types):
        defined = parser.ssa_values.get(operand.operand_name)
        if t == ANY and defined is not None and operand.index < len(defined):
            out.append(defined[operand.index])
        else:
            out.append(parser.resolve_operand(operand, t))
    return out


def _print_assignments(printer: Printer, args: Sequence[SSAValue], inits: Sequence[SSAValue]) -> None:
    printer.print_string("(")
    for i, (a, v) in enumerate(zip(args, inits)):
        if i:
            printer.print_string(", ")
        printer.print_ssa_value(a)
        printer.print_string(" = ")
        printer.print_ssa_value(v)
    printer.print_string(")")


@irdl_op_definition
class ForOp(IRDLOperation):
    """Counted loop over i64 `lb` ≤ i < `ub` by `step`, threading loop-carried values.

    The body's first block argument is the induction variable, the rest the
    carried values; it ends with `dycl.yield` of the next carried values. A
    `dycl.break` in a nested `dycl.if` leaves the loop with its operands as results.
    `unroll-loops` expands loops whose bounds are constants.

    ```mlir
    %r = dycl.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (!dycl.any) {
      %n = dycl.call_module "block"(%h) : (!dycl.any) -> !dycl.any
      dycl.yield %n : !dycl.any
    }
    ```
    """

    name = "dycl.for"
    lb = operand_def(i64)
    ub = operand_def(i64)
    step = operand_def(i64)
    iter_args = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")

    def __init__(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        iter_args: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[Attribute] | None = None,
    ):
        if result_types is None:
            result_types = [a.type for a in body.block.args[1:]]
        super().__init__(
            operands=[lb, ub, step, iter_args],
            result_types=[result_types],
            regions=[body],
        )

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    def verify_(self) -> None:
        block = self.body.block
        carried = [a.type for a in self.iter_args]
        if len(block.args) != 1 + len(carried):
            raise VerifyException(
                f"'dycl.for' body must take the induction variable and {len(carried)} "
                f"carried values, got {len(block.args)} block arguments"
            )
        if block.args[0].type != i64:
            raise VerifyException("'dycl.for' induction variable must be i64")
        arg_types = [a.type for a in block.args[1:]]
        if not types_accept(arg_types, carried):
            raise VerifyException(
                "'dycl.for' body argument types must match its iter_args types"
            )
        if list(self.res.types) != arg_types:
            raise VerifyException("'dycl.for' result types must match its body argument types")
        _check_yields(self, self.body, arg_types, "body")

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_operand(i64)
        parser.parse_keyword("to")
        ub = parser.parse_operand(i64)
        parser.parse_keyword("step")
        step = parser.parse_operand(i64)
        args: list[Parser.UnresolvedArgument] = []
        inits: list[UnresolvedOperand] = []
        types: list[Attribute] = []
        pos = parser.pos
        if parser.parse_optional_keyword("iter_args"):
            args, inits = _parse_assignments(parser)
            parser.parse_punctuation("->")
            types = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
            if len(types) != len(inits):
                parser.raise_error(
                    f"'dycl.for' has {len(inits)} iter_args but {len(types)} types", pos
                )
        init_vals = _resolve_any(parser, inits, types)
        block_args = [indvar.resolve(i64)] + [a.resolve(t) for a, t in zip(args, types)]
        body = parser.parse_region(block_args)
        attrs = parser.parse_optional_attr_dict()
        op = cls(lb, ub, step, init_vals, body)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        block = self.body.block
        printer.print_string(" ")
        printer.print_ssa_value(block.args[0])
        printer.print_string(" = ")
        printer.print_operand(self.lb)
        printer.print_string(" to ")
        printer.print_operand(self.ub)
        printer.print_string(" step ")
        printer.print_operand(self.step)
        if self.iter_args:
            printer.print_string(" iter_args")
            _print_assignments(printer, block.args[1:], self.iter_args)
            printer.print_string(" -> (")
            printer.print_list(self.res.types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        _print_region(printer, self.body)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class WhileOp(IRDLOperation):
    """Input-dependent loop: `while cond(vals): vals = body(vals)`.

    The `cond` region computes the continuation predicate from the carried values
    and ends with `dycl.condition`; the `body` region ends with `dycl.yield` of the
    next carried values. The optional `max_iterations` is a guard: going past it
    raises at run time. Without it the host loops as long as eager would.

    ```mlir
    %r = dycl.while (%h = %x) -> (tensor<1x4xf32>) max_iterations 16 cond {
      %m = dycl.call_method "sum"(%h) : (tensor<1x4xf32>) -> tensor<f32>
      %c = dycl.to_bool %m : tensor<f32>
      dycl.condition %c
    } do {
    ^bb0(%h: tensor<1x4xf32>):
      %n = dycl.call_module "step"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      dycl.yield %n : tensor<1x4xf32>
    }
    ```
    """

    name = "dycl.while"
    iter_args = var_operand_def()
    res = var_result_def()
    max_iterations = opt_prop_def(IntegerAttr[IntegerType])
    cond_region = region_def("single_block")
    body = region_def("single_block")

    def __init__(
        self,
        iter_args: Sequence[SSAValue],
        max_iterations: int | None,
        cond_region: Region,
        body: Region,
        result_types: Sequence[Attribute] | None = None,
    ):
        if result_types is None:
            result_types = [a.type for a in cond_region.block.args]
        props = {} if max_iterations is None else {"max_iterations": IntegerAttr(max_iterations, i64)}
        super().__init__(
            operands=[iter_args],
            result_types=[result_types],
            properties=props,
            regions=[cond_region, body],
        )

    @property
    def bound(self) -> int | None:
        return None if self.max_iterations is None else self.max_iterations.value.data

    def verify_(self) -> None:
        carried = list(self.res.types)
        if self.max_iterations is not None and self.max_iterations.value.data <= 0:
            raise VerifyException("'dycl.while' max_iterations must be positive")
        if not types_accept(carried, [a.type for a in self.iter_args]):
            raise VerifyException("'dycl.while' iter_args types must match its result types")
        for region, what in ((self.cond_region, "cond"), (self.body, "body")):
            if [a.type for a in region.block.args] != carried:
                raise VerifyException(
                    f"'dycl.while' {what} region arguments must match its result types"
                )
        last = self.cond_region.block.last_op
        if not isinstance(last, ConditionOp):
            got = f", got {last.name}" if last is not None else ""
            raise VerifyException(f"'dycl.while' cond region must end with dycl.condition{got}")
        _check_yields(self, self.body, carried, "body")

    @classmethod
    def parse(cls, parser: Parser) -> WhileOp:
        pos = parser.pos
        args, inits = _parse_assignments(parser)
        parser.parse_punctuation("->")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        if len(types) != len(inits):
            parser.raise_error(
                f"'dycl.while' has {len(inits)} iter_args but {len(types)} types", pos
            )
        init_vals = _resolve_any(parser, inits, types)
        bound = parser.parse_integer() if parser.parse_optional_keyword("max_iterations") else None
        parser.parse_keyword("cond")
        cond = parser.parse_region([a.resolve(t) for a, t in zip(args, types)])
        parser.parse_keyword("do")
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        op = cls(init_vals, bound, cond, body)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_assignments(printer, self.cond_region.block.args, self.iter_args)
        printer.print_string(" -> (")
        printer.print_list(self.res.types, printer.print_attribute)
        printer.print_string(")" + (f" max_iterations {self.bound}" if self.bound is not None else "") + " cond ")
        printer.print_region(self.cond_region, print_entry_block_args=False)
        printer.print_string(" do ")
        printer.print_region(self.body, print_entry_block_args=True)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ConditionOp(IRDLOperation):
    """Ends the `cond` region of `dycl.while`: continue looping while `%c` holds.

    ```mlir
    dycl.condition %c
    ```
    """

    name = "dycl.condition"
    cond = operand_def(i1)
    traits = traits_def(IsTerminator())

    assembly_format = "$cond attr-dict"

    def __init__(self, cond: SSAValue):
        super().__init__(operands=[cond])

    def verify_(self) -> None:
        # Here rather than in the parent's verifier: nested ops verify first.
        parent = self.parent_op()
        if isinstance(parent, WhileOp) and self.parent_region() is parent.cond_region:
            return
        if isinstance(parent, WhileOp):
            where = "the body of a dycl.while"
        else:
            where = f"a {parent.name} region" if parent is not None else "a detached block"
        raise VerifyException(
            f"'dycl.condition' can only end the cond region of a dycl.while, not {where}"
        )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `dycl.if` branch, a loop body or a `dycl.tensor_region`, passing values on.

    ```mlir
    dycl.yield %a, %b : tensor<2xf32>, i64
    ```
    """

    name = "dycl.yield"
    values = var_operand_def()
    traits = lazy_traits_def(
        lambda: (IsTerminator(), HasParent(IfOp, ForOp, WhileOp, TensorRegionOp))
    )

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


def _enclosing(op: Operation, kinds: tuple[type[Operation], ...]) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kinds):
        parent = parent.parent_op()
    return parent


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """`return` from the enclosing host function: at the end of its body, or early
    from inside a branch (also within loops). Unlike `func.return`, the values only
    need to fit the function's result types (`!dycl.any`/`!dycl.pyobj` take any
    value), so paths may return values of different types. Right after a `dycl.raise`
    it returns no values: it only ends the block (it is never reached).

    ```mlir
    dycl.if %c {
      dycl.return %out : tensor<1x10xf32>
    } else {
      dycl.yield
    }
    ```
    """

    name = "dycl.return"
    values = var_operand_def()
    traits = traits_def(IsTerminator())

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        func = _enclosing(self, (FuncOp,))
        if func is None:
            raise VerifyException("'dycl.return' must be inside a func.func")
        assert isinstance(func, FuncOp)
        expected = list(func.function_type.outputs.data)
        got = [v.type for v in self.values]
        unreachable = isinstance(self.prev_op, RaiseOp) and not got  # only ends the block after a raise
        if not unreachable and not types_accept(expected, got):
            raise VerifyException(
                f"'dycl.return' returns ({', '.join(map(str, got))}) but the enclosing "
                f"function returns ({', '.join(map(str, expected))})"
            )
        if _enclosing(self, (TensorRegionOp,)) is not None:
            raise VerifyException("'dycl.return' cannot leave a dycl.tensor_region")


@irdl_op_definition
class BreakOp(IRDLOperation):
    """Leaves the innermost enclosing `dycl.for`/`dycl.while`; operands become its results.

    ```mlir
    dycl.if %done {
      dycl.break %h : tensor<1x4xf32>
    } else {
      dycl.yield
    }
    ```
    """

    name = "dycl.break"
    values = var_operand_def()
    traits = traits_def(IsTerminator())

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        if _enclosing(self, (TensorRegionOp,)) is not None:
            raise VerifyException("'dycl.break' cannot leave a dycl.tensor_region")
        loop = _enclosing(self, (ForOp, WhileOp, FuncOp))
        if not isinstance(loop, (ForOp, WhileOp)):
            raise VerifyException("'dycl.break' must be inside a dycl.for or dycl.while")
        expected = list(loop.res.types)
        got = [v.type for v in self.values]
        if not types_accept(expected, got):
            raise VerifyException(
                f"'dycl.break' passes ({', '.join(map(str, got))}) but the loop "
                f"produces ({', '.join(map(str, expected))})"
            )


# ------------------------------------------------------------------ HCFG / outlining


@irdl_op_definition
class TensorRegionOp(IRDLOperation):
    """A branch-free region of tensor computation: one HCFG tensor node.

    Made by `extract-hcfg`, turned into a sub-DNN by `outline-subgraphs`. It holds
    no control flow and no host reads; values from above are its inputs.

    ```mlir
    %h, %p = dycl.tensor_region -> (tensor<1x4xf32>, tensor<i1>) {
      ...
      dycl.yield %h, %p : tensor<1x4xf32>, tensor<i1>
    }
    ```
    """

    name = "dycl.tensor_region"
    output = var_result_def()
    body = region_def("single_block")

    def __init__(self, result_types: Sequence[Attribute], body: Region):
        super().__init__(result_types=[result_types], regions=[body])

    def verify_(self) -> None:
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            got = f", got {last.name}" if last is not None else ""
            raise VerifyException(f"'dycl.tensor_region' must end with dycl.yield{got}")
        _check_yields(self, self.body, list(self.output.types), "body")
        for op in self.body.block.ops:
            if isinstance(op, HOST_ONLY_OPS):
                raise VerifyException(
                    f"'dycl.tensor_region' cannot contain host operation '{op.name}'"
                )

    @classmethod
    def parse(cls, parser: Parser) -> TensorRegionOp:
        types: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        op = cls(types, body)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.output:
            printer.print_string(" -> (")
            printer.print_list(self.output.types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        _print_region(printer, self.body)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class PyRegionOp(IRDLOperation):
    """A piece of the user's Python that the frontend could not translate: run as
    Python by the host (a fallback region), on the real model.

    `code` defines one function `__dycl_region(__dycl_root, *live_ins)`; the host
    calls it with the model and the operands and binds its results (the live-outs,
    or the value it returns when `tail` is set: then the region ends its function).
    `globals` names the Python module whose globals the code runs in; `loc`,
    `construct` and `reason` say where it came from and why it was not compiled.
    It is a host operation with unknown side effects: a barrier to hoisting and
    outlining, never folded or removed.

    ```mlir
    %y = dycl.py_region(%x) {code = "def __dycl_region(__dycl_root, x):\0A    print(x)\0A    y = x\0A    return (y,)\0A",
                             globals = "model", loc = "model.py:12:9", construct = "print", reason = "a call with side effects"}
         : (tensor<1x4xf32>) -> !dycl.any
    ```
    """

    name = "dycl.py_region"
    args = var_operand_def()
    res = var_result_def()
    code = prop_def(StringAttr)
    globals = prop_def(StringAttr)
    loc = prop_def(StringAttr)
    construct = prop_def(StringAttr)
    reason = prop_def(StringAttr)
    tail = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "`(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, args: Sequence[SSAValue], result_types: Sequence[Attribute], code: str, globals_name: str,
                 loc: str, construct: str, reason: str, tail: bool = False):
        props: dict[str, Attribute] = {
            "code": StringAttr(code), "globals": StringAttr(globals_name), "loc": StringAttr(loc),
            "construct": StringAttr(construct), "reason": StringAttr(reason),
        }
        if tail:
            props["tail"] = UnitAttr()
        super().__init__(operands=[args], properties=props, result_types=[result_types])

    def verify_(self) -> None:
        import ast

        try:
            tree = ast.parse(self.code.data)
        except SyntaxError as e:
            raise VerifyException(f"'dycl.py_region' code is not valid Python: {e.msg} (line {e.lineno})") from None
        if len(tree.body) != 1 or not isinstance(fn := tree.body[0], ast.FunctionDef) or fn.name != "__dycl_region":
            raise VerifyException("'dycl.py_region' code must define exactly one function '__dycl_region'")
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise VerifyException("'__dycl_region' takes plain positional parameters only")
        if len(a.args) != len(self.args) + 1:
            raise VerifyException(
                f"'__dycl_region' takes {len(a.args)} parameters; expected the model and "
                f"{len(self.args)} operand(s)"
            )
        if self.tail is not None and len(self.res) != 1:
            raise VerifyException("a tail 'dycl.py_region' has exactly one result (the returned value)")
        if not self.globals.data:
            raise VerifyException("'dycl.py_region' needs the name of the globals it runs in")


SUBGRAPH_ATTR = "dycl.subgraph"
BACKEND_ATTR = "dycl.backend"
# On a py_region: the results code after it tests with `is None` (typed as Python objects).
MAY_BE_NONE_ATTR = "dycl.may_be_none"
READS_STATE_ATTR = "dycl.reads_state"  # on a py_region: it reads module state forward writes after it
# On a py_region shape-inference ran: what it changes that the caller sees, as
# "module.path:name" per module attribute it rebinds or whose list/dict it changes,
# and "*" for anything else (see dycl.region_effects); absent where it did not run.
EFFECTS_ATTR = "dycl.region_effects"
# On a `dycl.constant none` a loop carries: a slot no path reads before it is set (the
# value an early `return` in a loop leaves, read only where the return ran), so
# shape-inference types the slot from what is stored in it.
UNSET_ATTR = "dycl.unset"
READ_OF_A_NAME = "read of a name"  # a py_region's construct: the check that a name is bound where it is read
# On a call whose result size depends on its inputs' values (set by shape-inference).
DATA_DEPENDENT_ATTR = "dycl.data_dependent_shape"
# On a tensor call the host runs itself, with torch (set by cut-data-dependent-shapes).
ON_HOST_ATTR = "dycl.on_host"
# On a call of a list the host holds whose result has another dtype when the list is
# empty (`torch.tensor([])`: float32): the host checks the dtype it was compiled for.
EMPTY_LIST_DTYPE_ATTR = "dycl.empty_list_dtype"
# On a call or a fallback region inside `with torch.no_grad()` (or a decorated
# helper): the grad-mode switches it runs in (see dycl.grad_modes), for what
# `t.requires_grad` or `torch.is_grad_enabled()` give and whether a region's tensors
# record autograd's graph; ops without it run in the caller's mode.
GRAD_MODE_ATTR = "dycl.grad_mode"
# On the module: the caller's grad mode shape-inference decided such queries for
# (the compiled model checks it at each call).
CALLER_GRAD_MODE_ATTR = "dycl.caller_grad_mode"
# On the module: some query could not be decided for that mode (requires_grad that
# differs by path): calls in it run the model as eager.
AUTOGRAD_IN_EAGER_ATTR = "dycl.autograd_in_eager"


class _CallSubgraphSymbolUser(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallSubgraphOp)
        callee = lookup_symbol(op, op.callee)  # indexed: a scan per call is quadratic
        if not isinstance(callee, FuncOp):
            raise VerifyException(
                f"'dycl.call_subgraph' callee {op.callee} is not a func.func in scope"
            )
        if SUBGRAPH_ATTR not in callee.attributes:
            raise VerifyException(
                f"'dycl.call_subgraph' callee {op.callee} lacks the {SUBGRAPH_ATTR} marker"
            )
        ft = callee.function_type
        if [a.type for a in op.args] != list(ft.inputs.data):
            raise VerifyException(
                f"'dycl.call_subgraph' operand types do not match {op.callee}'s inputs"
            )
        if list(op.res.types) != list(ft.outputs.data):
            raise VerifyException(
                f"'dycl.call_subgraph' result types do not match {op.callee}'s outputs"
            )


@irdl_op_definition
class CallSubgraphOp(IRDLOperation):
    """Runs an outlined sub-DNN (a `func.func` marked `dycl.subgraph`) from the host.

    ```mlir
    %h, %p = dycl.call_subgraph @sub_0(%x) : (tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<i1>)
    ```
    """

    name = "dycl.call_subgraph"
    callee = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()
    res = var_result_def()
    traits = traits_def(_CallSubgraphSymbolUser())

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(
        self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[args],
            properties={"callee": SymbolRefAttr(callee)},
            result_types=[result_types],
        )


@irdl_op_definition
class RaiseOp(IRDLOperation):
    """Raises a Python exception on the host: an `assert` or `raise` of the model's
    code whose condition is known only at run time, so the compiled model fails
    where eager fails, with the same exception type and arguments.

    `exception` is the importable name of the exception class; the operands are
    the arguments of its constructor (a message, numbers, tensors it carries), the
    last `len(kwargs)` of them by keyword. With `message`, the exception takes one
    text instead: `message` with each `{}` replaced by the Python text of the next
    operand (eager's "index 7 is out of bounds ..." for an index only the run
    knows). It never returns, so nothing after it in its block runs.

    ```mlir
    dycl.if %too_big {
      %msg = dycl.constant "too big"
      dycl.raise "builtins.ValueError"(%msg) : !dycl.pyobj
      dycl.yield
    } else {
      dycl.yield
    }
    ```
    """

    name = "dycl.raise"
    args = var_operand_def()
    exception = prop_def(StringAttr)
    kwargs = opt_prop_def(ArrayAttr[StringAttr])
    message = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$exception `(` $args `)` attr-dict (`:` type($args)^)?"

    def __init__(self, exception: str, args: Sequence[SSAValue] = (), kwargs: Sequence[str] = (),
                 message: str | None = None):
        props: dict[str, Attribute] = {"exception": StringAttr(exception)}
        if (kw := _kwargs_attr(kwargs)) is not None:
            props["kwargs"] = kw
        if message is not None:
            props["message"] = StringAttr(message)
        super().__init__(operands=[args], properties=props)

    def message_parts(self) -> list[str]:
        """`message` split at its `{}`s: one part more than the operands."""
        assert self.message is not None
        return self.message.data.split("{}")

    def positional_and_keyword(self) -> tuple[list[SSAValue], dict[str, SSAValue]]:
        return _positional_and_keyword(self.args, self.kwargs)

    def verify_(self) -> None:
        _check_kwargs(self, len(self.args))
        if self.message is not None and (self.kwargs or len(self.message_parts()) != len(self.args) + 1):
            raise VerifyException(f"'dycl.raise' with a message needs one operand per '{{}}' in it and no "
                                  f"keywords, got {len(self.args)} operands for {self.message.data!r}")
        parts = self.exception.data.split(".")
        if len(parts) < 2 or not all(p.isidentifier() for p in parts):
            raise VerifyException(
                f"'dycl.raise' needs the qualified name of an exception class (e.g. builtins.ValueError), "
                f"got {self.exception.data!r}")


@irdl_op_definition
class SetAttrOp(IRDLOperation):
    """Stores a value into an attribute of the model or of one of its submodules
    (`module` is its dotted path, empty for the model itself), on the host: module
    state that `forward` writes (`self.hidden = h`, `self.steps += 1`).

    The frontend keeps such attributes as SSA values inside the call (later reads
    use the value, not the module) and emits this store where eager assigns, so the
    module holds eager's values during and after the call. It has side effects:
    never folded, removed or moved past another host operation.

    ```mlir
    dycl.set_attr "decoder" "hidden"(%h) : tensor<1x16xf32>
    ```
    """

    name = "dycl.set_attr"
    value = operand_def()
    module = prop_def(StringAttr)
    attr_name = prop_def(StringAttr)
    in_place = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$module $attr_name `(` $value `)` attr-dict `:` type($value)"

    def __init__(self, module: str, attr_name: str, value: SSAValue, in_place: bool = False):
        super().__init__(operands=[value],
                         properties={"module": StringAttr(module), "attr_name": StringAttr(attr_name),
                                     **({"in_place": UnitAttr()} if in_place else {})})

    def verify_(self) -> None:
        _verify_attr_path(self.name, self.module.data, self.attr_name.data)
        if self.in_place is not None and not (is_tensor_type(self.value.type) or self.value.type == ANY):
            raise VerifyException(f"'dycl.set_attr' in place stores a tensor, got {self.value.type}")


def _verify_attr_path(op_name: str, path: str, attr: str) -> None:
    if path and not all(p.isidentifier() or p.isdigit() for p in path.split(".")):
        raise VerifyException(f"'{op_name}' module path {path!r} is not a dotted submodule path")
    if not attr.isidentifier():
        raise VerifyException(f"'{op_name}' attribute name {attr!r} is not an identifier")


@irdl_op_definition
class GetAttrOp(IRDLOperation):
    """Reads module state on the host, where eager reads it: an attribute of the
    model or of a submodule (`module` is its dotted path) that `forward` itself
    writes (`self.steps += 1`, a buffer updated in place, `self.h` carried from
    the previous call), so it cannot be built in as a constant.

    The result has the type the attribute had when the model was compiled (a
    tensor's shape and dtype; `i64`, `f64`, `i1` for Python numbers); the host
    checks it on every read and raises where the attribute no longer has it.
    With `copy` the host reads a copy of the tensor: a later in-place store
    (`dycl.set_attr {in_place}`) updates the module's tensor, and the value read
    before it must keep its old contents (values are immutable in the IR).
    Not pure: it reads what earlier `dycl.set_attr` and fallback regions stored.

    ```mlir
    %n = dycl.get_attr "" "steps" : i64
    %c = dycl.get_attr "norm" "count" {copy} : tensor<f32>
    ```
    """

    name = "dycl.get_attr"
    module = prop_def(StringAttr)
    attr_name = prop_def(StringAttr)
    copy = opt_prop_def(UnitAttr)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$module $attr_name attr-dict `:` type($result)"

    def __init__(self, module: str, attr_name: str, result_type: Attribute, copy: bool = False):
        super().__init__(result_types=[result_type],
                         properties={"module": StringAttr(module), "attr_name": StringAttr(attr_name),
                                     **({"copy": UnitAttr()} if copy else {})})

    def verify_(self) -> None:
        _verify_attr_path(self.name, self.module.data, self.attr_name.data)
        t = self.result.type
        if not (isinstance(t, TensorType) and all(n >= 0 for n in t.get_shape())) and t not in (i64, f64, i1):
            raise VerifyException(f"'dycl.get_attr' reads a tensor of static shape or an i64, f64 or i1, got {t}")
        if self.copy is not None and not isinstance(t, TensorType):
            raise VerifyException(f"'dycl.get_attr' copies tensors only, got {t}")


HOST_ONLY_OPS: tuple[type[Operation], ...] = (
    ToBoolOp,
    ItemOp,
    IfOp,
    ForOp,
    WhileOp,
    ConditionOp,
    ReturnOp,
    BreakOp,
    CallSubgraphOp,
    TensorRegionOp,
    PyRegionOp,
    RaiseOp,
    SetAttrOp,
    GetAttrOp,
)

TENSOR_OPS: tuple[type[Operation], ...] = (
    CallModuleOp,
    CallFunctionOp,
    CallMethodOp,
    ParamOp,
)


DYCL = Dialect(
    "dycl",
    [
        CallModuleOp,
        CallFunctionOp,
        CallMethodOp,
        ParamOp,
        ConstantOp,
        MakeTupleOp,
        GetItemOp,
        ToBoolOp,
        ItemOp,
        MakeListOp,
        ListAppendOp,
        ListGetOp,
        ListLenOp,
        IfOp,
        ForOp,
        WhileOp,
        ConditionOp,
        YieldOp,
        ReturnOp,
        BreakOp,
        TensorRegionOp,
        CallSubgraphOp,
        PyRegionOp,
        RaiseOp,
        SetAttrOp,
        GetAttrOp,
    ],
    [AnyValueType, PyObjType, ListType, GlobalAttr],
)

__all__ = ["DYCL", "FunctionType"]
