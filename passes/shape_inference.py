"""shape-inference: give every value a static type by running each op on fake tensors."""

from __future__ import annotations

import contextlib
import functools
import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv, statically_known_true
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
    TupleType,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dycl.classify import TEXT_FUNCTIONS
from dycl.diagnostics import DyclError, PassError, SymbolicDimsError, quiet_logger
from dycl.symbols import lookup_symbol
from dycl.dialects import dycl as d
from dycl.frontend.values import MUTATING_METHODS, resolve_qualname
from dycl.grad_modes import MODES as GRAD_MODES, asks_autograd, code_asks_autograd, current_grad_mode, \
    grad_mode_context, placeholder_answer
from dycl.models import MODEL_ATTR, check_ir_name, model_of
from dycl import unit_sizes
from dycl.held_lists import HeldList, appended, element_type, holds_list, joined_result, on_lists
from dycl.passes.peel_loops import peel, why_not_peelable
from dycl.pyregion import UNBOUND as UNBOUND_VALUE, UNBOUND_NAME
from dycl.passes.split_paths import can_split, erase_from, split_paths, split_target
from dycl.signature import Signature
from dycl.types import SIGNATURE_ATTR, dtype_of, fits_i64, kind_of, signature_types, type_of_value, with_dim_names


class Unknown:
    """A host value only the run time knows: a scalar, or a Python object made from
    one (`slice(n, None)`), which then stands for either of its two `picks`."""

    def __init__(self, type: Attribute, symbol: Any = None, picks: tuple[Any, Any] | None = None):
        self.type = type
        self.symbol = symbol  # a size symbol it equals (x.size(0) of a dynamic dimension), if any
        self.picks = picks  # what it is made of each stand-in value (see _substitute)
        # A Python object a region's compile-time run returned: only other regions'
        # runs take it (compiled code is never typed by one sample's values).
        self.sample: Any = None


class _Unset:
    """The value of a slot no path reads before it is set (`d.UNSET_ATTR`): where it
    meets what is stored in it, that value stands for both."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()
_PLACEHOLDERS = {i64: (1, 2), f64: (1.0, 2.0), i1: (True, False)}
# Tried where an op rejects the first two (an index into a dim of size 1 or 2).
_FURTHER_STAND_INS = {i64: (0, -1)}
# A carried number whose Python type changes by iteration stands for itself and one of another type.
_OTHER_NUMBER = {bool: 1.0, int: 1.0, float: 1}


def _run_torch(op: Operation, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        # FakeTensor (and the shape env, for a guard on a size only the run knows) logs every
        # failing op with a traceback; the diagnostic below says it all.
        with quiet_logger("torch._subclasses.fake_tensor"), quiet_logger("torch.fx.experimental.symbolic_shapes"):
            return fn(*args, **kwargs)
    except Exception as e:
        error = PassError(f"shape inference failed: {_torch_failure(e)}", op)
        error.original = e  # type: ignore[attr-defined]
        raise error from None


def _torch_failure(e: Exception) -> str:
    """What torch's failure on fake tensors says, in the user's terms: a guard on a
    size only the run knows (`sum([l > t for l in lengths.tolist()])`) names the test."""
    first = str(e).splitlines()[0] if str(e) else ""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    if isinstance(e, GuardOnDataDependentSymNode):  # (torch's text names its own symbols: u0 > u1)
        return "it needs to decide a test on numbers that follow tensor data (data-dependent), which only the run knows"
    return f"{type(e).__name__}: {first}"


class EagerRaises(Exception):
    """An op that raises for the shapes and dtypes it is compiled for, whatever the
    values (`x.transpose(1, 2).view(n, -1)`): eager's exception, raised on that path."""

    def __init__(self, error: BaseException, diagnostic: PassError):
        super().__init__(str(error))
        self.error = error
        self.diagnostic = diagnostic


def _end_with_raise(block: Block, op: Operation, exception: str, message: str) -> None:
    """`op` and what follows it in `block` replaced by a raise of `exception` (the path
    ends there), at `op`'s location."""
    erase_from(op)
    text = d.ConstantOp(StringAttr(message))
    for o in (text, d.RaiseOp(exception, [text.result]), d.ReturnOp()):
        o.location = op.location
        block.add_op(o)


def _fake_limits() -> tuple[type, ...]:
    """Failures of fake tensors themselves (no meta kernel, data-dependent output), not of the op."""
    from torch._subclasses import fake_tensor
    from torch.fx.experimental import symbolic_shapes

    return (NotImplementedError, fake_tensor.UnsupportedOperatorException, fake_tensor.DynamicOutputShapeException,
            fake_tensor.DataDependentOutputException, symbolic_shapes.GuardOnDataDependentSymNode)


def _torch_op(op: Operation, values: list[Any]) -> bool:
    """A tensor method, a torch function or a leaf module: eager's own op (not one of
    dycl's helpers, whose failure on a stand-in says nothing of eager)."""
    if isinstance(op, d.CallMethodOp):
        return bool(values) and isinstance(values[0], torch.Tensor)
    if isinstance(op, d.CallFunctionOp):
        return op.target.data.startswith("torch.")
    return isinstance(op, d.CallModuleOp)


def _real_filled(v: Any, fill: float) -> Any:
    """Fake tensors of static shapes as real ones of the same strides, filled; None where
    a size is symbolic or a value is one only the run knows."""
    if isinstance(v, torch.Tensor):
        if not all(isinstance(n, int) for n in (*v.shape, *v.stride())):
            return None
        extent = 1 + sum((n - 1) * k for n, k in zip(v.shape, v.stride()) if n > 0)
        return torch.full([extent if v.numel() else 0], fill).to(v.dtype).as_strided(v.shape, v.stride())
    if isinstance(v, (list, tuple)):
        items = [_real_filled(x, fill) for x in v]
        return None if any(i is None and x is not None for i, x in zip(items, v)) else type(v)(items)
    if isinstance(v, (Unknown, HeldList, _Unset)):
        return None
    return v


def eager_raises(error: PassError, call: Any, args: list[Any], kwargs: dict[str, Any]) -> BaseException | None:
    """Eager's exception where `call` raises on real tensors of these shapes, strides
    and dtypes alike when filled with zeros and with ones; else None."""
    original = getattr(error, "original", None)
    if original is None or isinstance(original, _fake_limits()):
        return None
    raised = []
    for fill in (0.0, 1.0):
        real_args, real_kwargs = _real_filled(args, fill), {k: _real_filled(v, fill) for k, v in kwargs.items()}
        if real_args is None or any(r is None and v is not None for r, v in zip(real_kwargs.values(), kwargs.values())):
            return None
        try:
            with torch.no_grad():
                call(*real_args, **real_kwargs)
        except Exception as e:  # noqa: BLE001 (the op's own error, as eager raises it)
            raised.append(e)
        else:
            return None
    first, second = raised
    return first if type(first) is type(second) and str(first) == str(second) else None


class _Inferrer:
    def __init__(self, module: ModuleOp, model: torch.nn.Module, model_key: str | None = None,
                 grad_mode: str | None = None):
        self.module = module
        self.model = model
        self.model_key = model_key  # what names the model: IR read from a file calls only safe names
        # A shape environment lets ops whose output size depends on data (nonzero,
        # boolean-mask indexing) produce symbolic sizes: dynamic dimensions.
        self.mode = FakeTensorMode(allow_non_fake_inputs=True, shape_env=ShapeEnv())
        self.env: dict[SSAValue, Any] = {}
        self.breaks: list[list[Any]] = []
        self.loop_depth = 0  # loop bodies being run (once, for every iteration)
        self.symbol_names: dict[Any, str] = {}  # size symbol of a signature's named dimension -> name
        # Autograd queries (`t.requires_grad`, `torch.is_grad_enabled()`) are decided for
        # calls in this grad mode; stand-ins whose requires_grad differs by path or
        # iteration (by id, kept alive) cannot answer them.
        self.caller_grad_mode = grad_mode or current_grad_mode()
        self.grad_varies: dict[int, Any] = {}
        self.asks_autograd = False
        self.autograd_in_eager = False
        self.autograd_queries: dict[Operation, Any] = {}  # in loop bodies: replaced once the loop is typed

    # -------------------------------------------------------------- values

    def fake(self, t: Attribute, op: Operation | None = None) -> Any:
        if isinstance(t, TensorType):
            return self.empty(t)
        if t in _PLACEHOLDERS:
            return Unknown(t)
        raise PassError(f"cannot infer shapes from an input of type {t}", op)

    def empty(self, t: TensorType, sizes: list[Any] | None = None) -> Any:
        """A fake tensor of type `t`; each dynamic dimension a fresh size symbol,
        or the one `sizes` gives for it."""
        shape: list[Any] = []
        for k, n in enumerate(t.get_shape()):
            if n < 0:
                n = sizes[k] if sizes is not None else None
                if n is None:
                    n = self.mode.shape_env.create_unbacked_symint()
                    torch._check(n >= 0)
            shape.append(n)
        with self.mode, torch.inference_mode(False):  # (an ordinary tensor, as inputs are in calls in any mode)
            return torch.empty(shape, dtype=dtype_of(t.element_type))

    def set(self, v: SSAValue, value: Any, joined: list[Any] | None = None) -> SSAValue:
        """`v` holds `value` (one of `joined`, the values of the paths that meet here)."""
        value = _symbolic_scalar(value)
        if joined is not None and len(joined) > 1:
            value = self._joined_value(value, [_symbolic_scalar(j) for j in joined])
        t = _type_of(value) if isinstance(value, (Unknown, HeldList)) else self.named_type(value, joined or [value])
        if joined is not None and len(joined) > 1 and isinstance(value, torch.Tensor) and isinstance(t, TensorType) \
                and len({tuple(map(str, j.shape)) for j in joined if isinstance(j, torch.Tensor)}) > 1:
            value = self.empty(t)  # sizes that differ by path: fresh symbols, not one path's
        if joined is not None and len(joined) > 1 and isinstance(value, torch.Tensor) and isinstance(t, TensorType):
            value = self._grad_joined(value, t, joined)
        if v.type != t:
            if not d.type_accepts(v.type, t) and v.type != d.PYOBJ:
                owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
                raise PassError(f"value declared as {v.type} is inferred as {t}", owner)
            if v.type == d.ANY or v.type == d.ListType(d.ANY):
                v = Rewriter.replace_value_with_new_type(v, t)
        self.env[v] = value
        return v

    def get(self, v: SSAValue) -> Any:
        return self.env[v]

    def replace_autograd_queries(self) -> None:
        for op, result in self.autograd_queries.items():
            if op.parent is not None:
                replace_autograd_query(op, result, self.set)
        self.autograd_queries = {}

    def _grad_joined(self, value: torch.Tensor, t: TensorType, joined: list[Any]) -> torch.Tensor:
        """Where paths meet, a tensor that requires grad on some paths only stands for
        both (a query on it is decided at run time only); on all paths, it requires grad."""
        tensors = [j for j in joined if isinstance(j, torch.Tensor)]
        flags = {j.requires_grad for j in tensors}
        if len(flags) > 1 or any(id(j) in self.grad_varies for j in tensors):
            return self._grad_varying(t)
        if flags == {True} and not value.requires_grad:
            return self.empty(t).requires_grad_()
        return value

    def _grad_varying(self, t: TensorType) -> torch.Tensor:
        value = self.empty(t)
        self.grad_varies[id(value)] = value
        return value

    def run_autograd_aware(self, op: d.CallModuleOp | d.CallFunctionOp | d.CallMethodOp) -> None:
        """The call run in its grad mode (its `dycl.grad_mode`, else the caller's).

        An autograd query becomes the constant it gives here, for calls in the caller's
        grad mode: the run's tensors come from sub-DNNs, which record no autograd graph,
        so the run could not answer it. Where this cannot decide it (requires_grad that
        differs by path or iteration, a tensor made from such a one, a `grad_fn` that is
        no None) calls in this grad mode run the model as eager (`autograd_in_eager`)."""
        varying = [v for v in op.operands if id(self.env.get(v)) in self.grad_varies]
        query = asks_autograd(op, self.get)
        mode = op.attributes.get(d.GRAD_MODE_ATTR)
        result: Any = None
        if not (query and varying):
            with grad_mode_context(self.caller_grad_mode, mode.data if isinstance(mode, StringAttr) else None):
                result = self.call(op)
        if not query:
            if varying and isinstance(result, torch.Tensor):
                self.grad_varies[id(result)] = result
            self.set(op.result, result)
            return
        if not isinstance(mode, StringAttr) or any(isinstance(self.get(v), torch.Tensor) for v in op.operands):
            self.asks_autograd = True  # (the caller's mode decides it; `@torch.no_grad()`'s own query does not)
        if varying or result is not None and type(result) is not bool or \
                self.autograd_queries.setdefault(op, result) is not result:
            self.autograd_in_eager = True  # (decided below for this run only: its program is never run)
            result = result if type(result) is bool else placeholder_answer(op, self.get)
        if self.loop_depth:
            self.set(op.result, result)  # (a loop's body may run again, on tensors whose requires_grad varies)
            return
        self.autograd_queries.pop(op, None)  # (not there where it varies: decided above for this run only)
        replace_autograd_query(op, result, self.set)

    @staticmethod
    def _joined_value(value: Any, joined: list[Any]) -> Any:
        """Where paths meet, a host number one path knows and another does not
        (`k = 1 if n < 1 else n`) is known only at run time; so is a size symbol
        that another path does not share."""
        if type(value) in (bool, int, float):
            if all(type(j) is type(value) and j == value for j in joined):
                return value
            return Unknown(type_of_value(value))
        if isinstance(value, Unknown) and value.symbol is not None and not all(j is value for j in joined):
            return Unknown(value.type)
        if type(value) is list and _plain_constant(value) and not all(type(j) is list and j == value for j in joined):
            # a list of numbers whose values differ by path (`if c: s[0] = 3`): those only the run knows
            if all(type(j) is list and len(j) == len(value) for j in joined):
                return [_Inferrer._joined_value(v, [j[k] for j in joined]) for k, v in enumerate(value)]
            return Unknown(d.PYOBJ)
        return value

    # ------------------------------------------------------------------ ops

    def run_function(self, f: func.FuncOp) -> None:
        block = f.body.block
        names = self.signature_names(f)
        for _ in range(_MAX_SPLITS):
            self.env = {}
            self.grad_varies, self.autograd_queries = {}, {}
            sizes: dict[str, Any] = {}
            for k, arg in enumerate(list(block.args)):
                if names and isinstance(arg.type, TensorType):
                    self.set(arg, self.empty(arg.type, [self.symbol(n, sizes, names) for n in names[0][k]]))
                else:
                    self.set(arg, self.fake(arg.type, f))
            returns: list[list[Attribute]] = []
            try:
                self.run_block(block, returns)
                break
            except _SplitPaths:
                continue  # the IR changed: infer again from the top
            except PassError as e:
                if names and ("data-dependent" in e.message or "symbolic sizes" in e.message):
                    dims = ", ".join(sorted({n for per_arg in names[0] for n in per_arg if n and n[0] != "?"}))
                    what = f"'{_op_label(e.op)}' " if e.op is not None else ""
                    raise SymbolicDimsError(
                        f"the input dimensions declared symbolic ({dims or '?'}) cannot stay symbolic here: "
                        f"torch's {what}needs their value to compute this", e.op,
                        note="compile without them: dynamic='auto' compiles each new input shape on first use"
                    ) from None
                raise
        else:
            raise PassError("too many per-path signatures (each needs its own copy of the code after a branch)", f)
        self.replace_autograd_queries()
        outs = self._join_returns(returns, f)
        f.function_type = FunctionType.from_lists(list(f.function_type.inputs.data), outs)

    def _join_returns(self, returns: list[list[Attribute]], f: Operation) -> list[Attribute]:
        if not returns:
            return list(f.function_type.outputs.data) if isinstance(f, func.FuncOp) else []
        outs: list[Attribute] = []
        for i in range(len(returns[0])):
            ts = {r[i] for r in returns}
            outs.append(ts.pop() if len(ts) == 1 else d.PYOBJ)
        return outs

    def signature_names(self, f: func.FuncOp) -> tuple[list[list[str | None]], dict[str, Any]] | None:
        """Per argument and dimension, the name the function's `dycl.signature`
        gives its dynamic dimension (None: a size), with the signature's ranges;
        None without a signature. The signature must describe the argument types."""
        attr = f.attributes.get(SIGNATURE_ATTR)
        if attr is None:
            return None
        assert isinstance(attr, StringAttr)
        try:
            sig = Signature.parse(attr.data)
        except DyclError as e:
            raise PassError(f"bad {SIGNATURE_ATTR}: {e.message}", f) from None
        args = f.function_type.inputs.data
        if len(sig.inputs) != len(args):
            raise PassError(f"{SIGNATURE_ATTR} describes {len(sig.inputs)} inputs, the function takes {len(args)}", f)
        out: list[list[str | None]] = []
        for k, (t, spec) in enumerate(zip(args, sig.inputs)):
            want = signature_types([t], Signature((spec,)))[0] if isinstance(t, TensorType) else None
            if (not isinstance(t, TensorType) or t != want or len(spec.dims) != len(t.get_shape())
                    or str(dtype_of(t.element_type)).removeprefix("torch.") != spec.dtype):
                raise PassError(f"{SIGNATURE_ATTR}: input {k} is {spec.text()}, the argument is {t} "
                                f"(expected {want}: a named dimension is ? in the type, with its name)", f)
            out.append([d if isinstance(d, str) else None for d in spec.dims])
        return out, dict(sig.ranges)

    def named_type(self, value: Any, joined: list[Any]) -> Attribute:
        """The type of `value`, its dimensions that are the signature's symbols (or
        expressions of them) named, where every path in `joined` agrees."""
        t = type_of_value(value)
        if not self.symbol_names:
            return t
        if isinstance(t, TensorType) and isinstance(value, torch.Tensor):
            per_path = [self.dim_names(x) for x in joined]
            return with_dim_names(t, [n if all(len(p) > k and p[k] == n for p in per_path) else ""
                                      for k, n in enumerate(per_path[0])])
        if isinstance(t, TupleType) and isinstance(value, (tuple, list)):
            return TupleType(tuple(self.named_type(v, [j[i] if isinstance(j, (tuple, list)) and len(j) > i else v
                                                       for j in joined]) for i, v in enumerate(value)))
        return t

    def dim_names(self, value: Any) -> list[str]:
        """Per dimension of a (fake) tensor, its size as an expression of the named
        symbols (`b`, `2*b`), or "" for a size or an unnamed one."""
        import sympy

        if not isinstance(value, torch.Tensor):
            return []
        out = []
        for n in value.shape:
            expr = n.node.expr if isinstance(n, torch.SymInt) else None
            if expr is None or not expr.free_symbols or not expr.free_symbols <= set(self.symbol_names):
                out.append("")
                continue
            out.append(str(expr.xreplace({s: sympy.Symbol(self.symbol_names[s]) for s in expr.free_symbols})))
        return out

    def symbol(self, name: str | None, sizes: dict[str, Any], names: Any) -> Any:
        """The size symbol of a named dimension, one per name, within its range."""
        if name is None:
            return None
        if name not in sizes:
            n = self.mode.shape_env.create_unbacked_symint()
            lo, hi = names[1].get(name, (1, None))
            torch._check(n >= 0)
            torch._check(n >= lo)
            if hi is not None:
                torch._check(n <= hi)
            sizes[name] = n
            if not name.startswith("?"):  # `?`: a size of its own, related to nothing, unnamed
                self.symbol_names[n.node.expr] = name
        return sizes[name]

    def run_block(self, block: Block, returns: list[list[Attribute]]) -> list[Any] | None:
        """Run ops in order; the yielded values, or None if the block leaves otherwise."""
        for op in list(block.ops):
            if isinstance(op, d.YieldOp):
                return [self.get(v) for v in op.values]
            if isinstance(op, (d.ReturnOp, func.ReturnOp)):
                returns.append([v.type for v in op.operands])
                return None
            if isinstance(op, d.BreakOp):
                self.breaks.append([self.get(v) for v in op.values])
                return None
            if isinstance(op, d.RaiseOp):
                return None  # the path ends here: what follows never runs
            if _reads_unbound(op):
                # A name this path never bound (a loop that ran no iteration): the read raises
                # eager's UnboundLocalError, and what follows never runs.
                _end_with_raise(block, op, "builtins.UnboundLocalError", _unbound_message(op))
                return None
            try:
                self.run_op(op, returns)
            except EagerRaises as e:
                if isinstance(block.parent_op(), func.FuncOp):
                    # Every call fails here, the examples' too: the diagnostic, not a program that only raises.
                    raise e.diagnostic from None
                # What follows never runs on this path: eager's exception instead.
                kind = type(e.error)
                _end_with_raise(block, op, f"{kind.__module__}.{kind.__qualname__}", str(e.error))
                return None
        return None

    def run_op(self, op: Operation, returns: list[list[Attribute]]) -> None:
        match op:
            case arith.ConstantOp():
                self.set(op.result, arith_constant_value(op))
            case d.ConstantOp():
                self.set(op.result, self.constant_value(op))
            case d.ParamOp():
                try:
                    t = self.model.get_parameter(op.path.data)
                except AttributeError:
                    try:
                        t = self.model.get_buffer(op.path.data)
                    except AttributeError:
                        raise PassError(f"the model has no parameter or buffer '{op.path.data}'", op) from None
                with self.mode:
                    self.set(op.result, self.mode.from_tensor(t, static_shapes=True))
            case d.CallFunctionOp() if op.target.data == "_operator.getitem" and len(op.operands) == 2 and \
                    isinstance(op.operands[0].owner, d.CallModuleOp) and \
                    _module_none(self.get(op.operands[0]), self.get(op.operands[1])):
                self._none_constant(op)
            case d.CallFunctionOp() if op.target.data == "builtins.isinstance":
                # Decided by the types found here (a tensor on every path): a constant. Else the
                # host would see a backend's tensor, which is no torch.Tensor: run as Python.
                if not _decided(op.result):
                    raise PassError("isinstance() of a value whose Python type is known only at run time", op)
                found = arith.ConstantOp(IntegerAttr(int(self._isinstance(op)), i1))
                found.location = op.location
                Rewriter.replace_op(op, found)
                self.set(found.result, bool(found.value.value.data))
            case d.CallModuleOp() | d.CallFunctionOp() | d.CallMethodOp():
                self.fold_static_lists(op)
                sizes = len(self.mode.shape_env.var_to_range)
                self.run_autograd_aware(op)
                if len(self.mode.shape_env.var_to_range) > sizes:
                    # Its output size depends on the values of its inputs (nonzero, x[mask]):
                    # cut-data-dependent-shapes can run it on the host for backends that need it.
                    op.attributes[d.DATA_DEPENDENT_ATTR] = UnitAttr()
            case d.MakeListOp() | d.ListAppendOp() | d.ListGetOp() | d.ListLenOp():
                self.set(op.results[0], self.list_op(op))
            case d.MakeTupleOp():
                vals = [self.get(v) for v in op.elements]
                self.set(op.result, list(vals) if op.is_list else tuple(vals))
            case d.GetItemOp() if isinstance(self.get(op.source), torch.Tensor):
                # `a, b = x[:2]`: unpacking what turned out to be a tensor takes its rows
                index = arith.ConstantOp(IntegerAttr(op.index.value.data, i64))
                row = d.CallFunctionOp("_operator.getitem", [op.source, index.result])
                index.location = row.location = op.location
                Rewriter.replace_op(op, [index, row])
                self.set(index.result, op.index.value.data)
                self.run_op(row, returns)
            case d.GetItemOp():
                src = self.get(op.source)
                idx = op.index.value.data
                if isinstance(src, Unknown) and src.picks is not None and \
                        all(isinstance(p, (tuple, list)) and -len(p) <= idx < len(p) for p in src.picks):
                    # `a, b = row` of a `tolist()` only the run knows: each element, as its stand-ins have
                    self.set(op.result, _unknown_of(tuple(p[idx] for p in src.picks)))
                    return
                if isinstance(src, Unknown):
                    raise PassError("cannot index a value whose structure is unknown", op)
                if not isinstance(src, (tuple, list)):
                    # (a loop's early `return` carries None until it is taken: see restructure.lift_loop_returns)
                    raise PassError(f"cannot index a {type(src).__name__} value here (a value that is None on "
                                    "some paths)", op)
                if isinstance(src, (tuple, list)) and not -len(src) <= idx < len(src):
                    raise PassError(f"index {idx} is out of range for a {type(src).__name__} of {len(src)} elements "
                                    "(on a path these shapes may never take)", op)
                if src[idx] is None and isinstance(op.source.owner, d.CallModuleOp):
                    self._none_constant(op)
                    return
                self.set(op.result, src[idx])
            case d.ToBoolOp():
                src = self.get(op.input)
                if isinstance(src, torch.Tensor) and isinstance(src.numel(), int) and src.numel() != 1:
                    raise PassError(f"bool() of a tensor with {src.numel()} elements is ambiguous", op)
                # A number decided by static sizes (`x.size(-1) % 2`): its branch is the only one taken.
                known = type(src) in (bool, int, float) and _decided(op.input)
                self.set(op.result, bool(src) if known else Unknown(i1))
            case d.ItemOp():
                src = self.get(op.input)
                t = op.result.type
                if isinstance(src, (Unknown, int, float, bool)):  # int()/float() of a host scalar
                    if t == d.ANY:
                        t = src.type if isinstance(src, Unknown) else type_of_value(src)
                    if type(src) in (int, float, bool) and t in (i64, f64, i1) and _decided(op.input):
                        # a number static sizes decide (`int(x.numel())`): the same on every run, a
                        # constant (a sub-DNN then sees `F.one_hot(i, int(g.shape[1]))`'s classes)
                        value = {i64: int, f64: float, i1: bool}[t](src)  # type: ignore[index]
                        const = arith.ConstantOp(FloatAttr(value, f64) if t == f64 else IntegerAttr(int(value), t))
                        const.location = op.location
                        Rewriter.replace_op(op, const)
                        self.set(const.result, value)
                        return
                elif not isinstance(src, torch.Tensor) or isinstance(src.numel(), int) and src.numel() != 1:
                    # (a size only the run time knows: the host's item() checks it, as eager)
                    raise PassError("dycl.item needs a one-element tensor", op)
                elif t == d.ANY:
                    t = f64 if src.dtype.is_floating_point else (i1 if src.dtype == torch.bool else i64)
                self.set(op.result, Unknown(t))
            case arith.XOrIOp() | arith.AndIOp() | arith.OrIOp() | arith.CmpiOp() | arith.CmpfOp():
                self.set(op.results[0], _host_arith(op, [self.get(v) for v in op.operands]))
            case d.IfOp():
                self.run_if(op, returns)
            case d.ForOp():
                if any(self.get(v) is None for v in op.iter_args) and why_not_peelable(op) is None:
                    peel(op)  # (`prev = None; for ...: prev = y`, as for `while`)
                    raise _SplitPaths
                inits = self.as_declared(list(op.body.block.args)[1:], [self.get(v) for v in op.iter_args])
                self.run_loop(op, op.body.block, [Unknown(i64)] + inits, returns)
            case d.WhileOp():
                if any(self.get(v) is None for v in op.iter_args) and why_not_peelable(op) is None:
                    # (`prev = None; while c: ...; prev = y`: typed from None, the body's
                    # `if prev is not None` branch could not be; the first iteration on its own)
                    peel(op)
                    raise _SplitPaths
                inits = self.as_declared(list(op.body.block.args), [self.get(v) for v in op.iter_args])
                self.loop_depth += 1
                try:
                    self.run_block_with_args(op.cond_region.block, inits, returns)
                finally:
                    self.loop_depth -= 1
                self.run_loop(op, op.body.block, inits, returns)
            case d.TensorRegionOp():
                vals = self.run_block(op.body.block, returns)
                assert vals is not None
                self.set_results(op, vals)
            case d.PyRegionOp() if op.construct.data == d.READ_OF_A_NAME and len(op.args) == 1 and \
                    self.get(op.args[0]) is not UNBOUND_VALUE and _surely_bound(op.args[0], set()):
                # The check that a name is bound, where every path reaching it binds it (a loop
                # over a static size ran; the path where it did not went its own way): no check.
                op.res[0].replace_all_uses_with(op.args[0])
                op.detach()
                op.erase()
            case d.PyRegionOp():
                if code_asks_autograd(op.code.data):
                    # Python asking about autograd on the program's tensors (no graph, not
                    # inference tensors): its answers are eager's in calls with no grad only.
                    self.asks_autograd = True
                    self.autograd_in_eager |= self.caller_grad_mode != "off"
                # (Python run in the caller's grad mode: whether its tensors require grad is the run's)
                vals = run_region(self, op)
                self.grad_varies.update((id(v), v) for v in vals if isinstance(v, torch.Tensor))
                self.set_results(op, vals)
            case d.CallSubgraphOp():
                callee = lookup_symbol(self.module, op.callee)
                sub = _Inferrer(self.module, self.model, self.model_key, self.caller_grad_mode)
                sub.mode = self.mode
                assert isinstance(callee, func.FuncOp)
                for a, v in zip(list(callee.body.block.args), op.args):
                    sub.set(a, self.get(v))
                rets: list[list[Attribute]] = []
                sub.run_block(callee.body.block, rets)
                self.asks_autograd |= sub.asks_autograd
                self.autograd_in_eager |= sub.autograd_in_eager
                sub.replace_autograd_queries()
                callee.function_type = FunctionType.from_lists([a.type for a in op.args], rets[0])
                self.set_results(op, [self.fake(t, op) for t in rets[0]])
            case _:
                for r in op.results:
                    if r.type == d.ANY:
                        raise PassError(f"shape inference does not know op '{op.name}'", op)
                    self.set(r, Unknown(r.type) if r.type in _PLACEHOLDERS else self.fake(r.type, op))

    def fold_static_lists(self, op: d.CallModuleOp | d.CallFunctionOp | d.CallMethodOp) -> None:
        """A list of sizes the program built and edited (`shape = list(idx.shape);
        shape[1:] = [1] * k`) given to a tensor op: its value here, as literals in
        the op's operands, so that the op compiles with its sub-DNN (exporters
        trace no Python list arguments). Only a value the same on every run and
        edited in this block alone (no branch, loop or region of Python changes it)."""
        if isinstance(op, d.CallModuleOp) or isinstance(op, d.CallFunctionOp) and \
                not (op.target.data.startswith("torch.") or op.target.data == "_operator.getitem"):
            return
        if not any(isinstance(self.env.get(v), torch.Tensor) for v in op.operands):
            return
        for i, v in enumerate(op.operands):
            value = self.env.get(v)
            if v.type != d.PYOBJ or type(value) not in (list, tuple) or not _plain_constant(value) or \
                    isinstance(v.owner, (d.ConstantOp, d.MakeTupleOp)) or not _decided(v) or \
                    not _edited_here_only(v, op):
                continue
            ops, result = _literal(value)
            for o in ops:
                o.location = op.location
            Rewriter.insert_op(ops, InsertPoint.before(op))
            for o in ops:
                self.set(o.results[0], arith_constant_value(o) if isinstance(o, arith.ConstantOp) else
                         None if isinstance(o, d.ConstantOp) else
                         [self.get(e) for e in o.operands] if o.is_list else tuple(self.get(e) for e in o.operands))
            op.operands[i] = result

    def _none_constant(self, op: Operation) -> None:
        """`a, _ = mha(q, k, v, need_weights=False)`: a module's None (its structure
        follows its arguments) is a constant, not a value a sub-DNN would return."""
        none = d.ConstantOp(NoneAttr())
        none.location = op.location
        Rewriter.replace_op(op, [none])
        self.set(none.results[0], None)

    def run_block_with_args(self, block: Block, values: list[Any], returns: list[list[Attribute]]) -> list[Any] | None:
        for a, v in zip(list(block.args), values):
            self.set(a, v)
        return self.run_block(block, returns)

    def list_op(self, op: Operation) -> Any:
        """What an op on a list the host holds gives (see dycl.held_lists)."""
        if isinstance(op, d.ListLenOp):
            return Unknown(i64)
        if isinstance(op, d.MakeListOp):
            held = HeldList(None)
            values = [self.get(e) for e in op.elements]
        else:
            held = self.get(op.source)
            values = [self.get(op.value)] if isinstance(op, d.ListAppendOp) else []
        assert isinstance(held, HeldList)
        for v in values:
            try:
                held = appended(held, _abstract_scalar(v), _type_of, self.empty)
            except TypeError as e:
                raise PassError(f"a list held at run time takes one type of element: {e}", op) from None
        if not isinstance(op, d.ListGetOp):
            return held
        if held.element is None:
            raise PassError("indexing a list that is empty on every path seen here", op)
        t = _type_of(held.element)
        return self.empty(t) if isinstance(t, TensorType) else Unknown(t)

    def _call_on_lists(self, op: Operation, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """A call that takes a list the host holds (`torch.stack(outs)`): the host
        runs it with torch; its result type from lists of one and two elements."""
        def stand_in(v: Any) -> Any:
            if any(u.picks is None and u.symbol is None and u.type not in _PLACEHOLDERS for u in _unknowns(v)):
                raise PassError("a list held at run time whose elements are Python objects only the run makes "
                                "(tuples, lists)", op)
            return _substitute(v, 0)

        def run(f: Any, a: list[Any], k: dict[str, Any]) -> Any:
            try:
                with self.mode:
                    return _run_torch(op, f, a, k)
            except PassError as e:
                if "data-dependent" not in e.message:
                    raise
            # It reads the elements' values (`any(t > 2 for t in toks)`, `max(scores)`):
            # on real zeros of their types, for the result's type only.
            return _run_torch(op, f, _real_zeros(a), _real_zeros(k))

        one, two = on_lists(fn, args, kwargs, stand_in, run)
        op.attributes[d.ON_HOST_ATTR] = UnitAttr()
        if isinstance(one, torch.Tensor):
            try:  # `torch.tensor([])` is float32 whatever the elements would have been
                (none,) = on_lists(fn, args, kwargs, stand_in, run, sizes=(0,))
            except PassError:
                none = None  # (`torch.stack([])` raises in eager too)
            if isinstance(none, torch.Tensor) and none.dtype != one.dtype:
                op.attributes[d.EMPTY_LIST_DTYPE_ATTR] = StringAttr(str(none.dtype))
        element = next(a.element for a in (*args, *kwargs.values()) if isinstance(a, HeldList))
        try:
            return joined_result(one, two, self.empty, Unknown, element)
        except TypeError as e:
            raise PassError(f"'{_op_label(op)}' of a list held at run time: {e}", op) from None

    def set_results(self, op: Operation, vals: list[Any]) -> None:
        for r, v in zip(list(op.results), vals):
            self.set(r, v)

    def run_if(self, op: d.IfOp, returns: list[list[Attribute]]) -> None:
        cond = self.env.get(op.cond)
        # (a known condition made from static sizes only: a join's value is one path's)
        taken = (op.then_region if cond else op.else_region).block if type(cond) is bool and _decided(op.cond) \
            else None
        if taken is not None and isinstance(taken.last_op, d.YieldOp) and not self.loop_depth:
            # Decided by static sizes: the other branch never runs (its shapes may not even
            # fit: `cat` to an odd width, then `view(-1, 2)`), so it goes now. (Not in a
            # loop body, run once for every iteration: its numbers are the first's.)
            self.run_block(taken, returns)
            if isinstance(taken.last_op, d.YieldOp):
                yielded = list(taken.last_op.values)
                for o in list(taken.ops)[:-1]:
                    o.detach()
                    Rewriter.insert_op(o, InsertPoint.before(op))
                for r, v in zip(list(op.results), yielded):
                    r.replace_all_uses_with(v)
                op.detach()
                op.erase()
                return
            # (it read a name this path never bound: it ends there now, as below)
        if taken is not None and isinstance(taken.last_op, d.ReturnOp) and not self.loop_depth:
            # Decided, and that branch leaves: the code after the if is dead on this path
            # (it may not even be typable: `if y is None: return ...` then `y * k`).
            block = op.parent
            assert block is not None
            for o in list(taken.ops):
                o.detach()
                block.insert_op_before(o, op)
            erase_from(op)
            raise _SplitPaths
        runs = [self.run_branch(r.block, op, returns) for r in (op.then_region, op.else_region)]
        outs = [out for out, _ in runs]
        live = [o for o in outs if o is not None]
        self.join_edited([edited for out, edited in runs if out is not None])
        for i, r in enumerate(list(op.results)):
            stored = [o[i] for o in live if o[i] is not UNSET]
            if len(stored) < len(live):
                # A slot set on some paths only (an early return's value): what is stored
                # stands for it, as a Python object (None where nothing was).
                if stored:
                    r = Rewriter.replace_value_with_new_type(r, d.PYOBJ) if r.type == d.ANY else r
                self.set(r, _joined_parts(stored) if stored else UNSET)
                continue
            types = {_type_of(o[i]) for o in live}
            if len(types) > 1 and all(isinstance(t, d.ListType) for t in types):
                # a held list appended to on one branch: one list type for both
                joined: Attribute | None = functools.reduce(lambda a, b: a and _widened(a, b), types)
                if joined is not None:
                    self.set(r, self._declared_list(joined, HeldList(None)))
                    continue
            target = split_target(op)
            if (len(types) > 1 or len({_structure(o[i]) for o in live}) > 1) and can_split(target):
                # (also Python tuples whose parts differ by path: `(y, j)` or `(None, -1)`)
                split_paths(target)
                raise _SplitPaths
            if len(types) > 1 and all(isinstance(t, TensorType) for t in types) and \
                    (joined := functools.reduce(lambda a, b: a and _widened(a, b), types)) is not None:
                # Where the code after it cannot be copied (a loop body going on to its next
                # iteration): one tensor whose differing sizes are known at run time
                # (`if c: out = torch.cat([out, row])` on a loop-carried `out`).
                self.set(r, self.empty(joined), [o[i] for o in live])
                continue
            if len(types) > 1 and all(_is_number(o[i]) for o in live):
                # A Python number whose type depends on the path (`best = -1`, later `best =
                # x[i].item()`): a Python object standing for either, as eager has it.
                if r.type == d.ANY:
                    r = Rewriter.replace_value_with_new_type(r, d.PYOBJ)
                self.set(r, _unknown_of(tuple(_stand_ins(o[i])[0] if isinstance(o[i], Unknown) else o[i]
                                              for o in live[:2])))
                continue
            if len(types) > 1:
                raise PassError(
                    f"{_named(r, f'result #{i} of the if')} is "
                    + " on one path and ".join(kind_of(_type_of(o[i])) for o in live[:2]) + " on the other",
                    op,
                    "per-path signatures are not supported yet; make both branches produce the same shape",
                )
            self.set(r, _joined_parts([o[i] for o in live]), [o[i] for o in live])

    def run_branch(self, block: Block, op: d.IfOp,
                   returns: list[list[Attribute]]) -> tuple[list[Any] | None, dict[SSAValue, Any]]:
        """Run one branch of `op` on its own copies of the Python containers it reads
        (lists, dicts, sets it may edit in place, `s[0] = 3`: the other path must not
        see that). A container a branch edits is, after the join, what the paths share."""
        memo: dict[int, Any] = {}
        originals = {v: self.env[v] for v in _read_from_outside(block, op)
                     if v in self.env and _has_container(self.env[v])}
        for v, value in originals.items():
            self.env[v] = _copied(value, memo)
        try:
            out = self.run_block(block, returns)
        finally:
            after = {v: self.env[v] for v in originals}
            self.env.update(originals)
        return out, after

    def join_edited(self, ends: list[dict[SSAValue, Any]]) -> None:
        """After an if: each container a path that goes on edited holds what those paths leave."""
        for v in {v for end in ends for v in end}:
            left = [end.get(v, self.env[v]) for end in ends]
            if any(not _same_containers(x, self.env[v]) for x in left):
                self.env[v] = self._joined_value(left[0], left)

    def run_loop(self, op: Operation, block: Block, inits: list[Any], returns: list[list[Attribute]],
                 rerun: int = 0) -> None:
        saved, self.breaks = self.breaks, []
        self.loop_depth += 1
        try:
            out = self.run_block_with_args(block, inits, returns)
        finally:
            self.loop_depth -= 1
        carried = inits[1:] if isinstance(op, d.ForOp) else inits
        ends = ([out] if out is not None else []) + self.breaks
        skip = 1 if isinstance(op, d.ForOp) else 0
        widen: dict[int, Attribute] = {}
        unset = {i for i, a in enumerate(carried) if a is UNSET and any(vals[i] is not UNSET for vals in ends)}
        for vals in ends:
            for i, (a, b) in enumerate(zip(carried, vals)):
                if i in unset or b is UNSET:
                    continue  # (typed by what is stored in it, below)
                ta, tb = _type_of(a), _type_of(b)
                if ta != tb and _is_number(a) and _is_number(b) and (d.PYOBJ in (ta, tb) or why_not_peelable(op) is not None):
                    # A number whose Python type changes by path inside the loop (else the
                    # first iteration is peeled, below): carried as a Python object.
                    if block.args[i + skip].type != d.PYOBJ:
                        widen[i] = d.PYOBJ
                    continue
                if ta != tb:
                    widened = _widened(ta, tb) or self._grown_tuple(a, b)
                    if widened is not None and widened != block.args[i + skip].type:
                        widen[i] = _widened(widen[i], widened) or widened if i in widen else widened
                        continue
                    if widened is not None and i in widen:
                        continue
                    if isinstance(op, (d.WhileOp, d.ForOp)) and not isinstance(ta, TensorType) and \
                            why_not_peelable(op) is None:
                        # (`cost = 0; while c: cost = cost + t`: the first iteration on its own; a
                        # tensor changing rank every iteration changes again after a peel)
                        self.breaks = saved
                        peel(op)
                        raise _SplitPaths
                    raise PassError(
                        f"{_named(op.results[i], f'loop-carried value #{i}')} changes from {kind_of(ta)} to "
                        f"{kind_of(tb)} across the loop's iterations",
                        op,
                        "run unroll-loops first so each iteration gets its own types",
                    )
        self.breaks = saved
        rejoined = _rejoined(carried, ends)
        for i, entry in enumerate(carried):
            # (`h = layer(h)` from an input: requires grad from the second iteration on)
            if isinstance(entry, torch.Tensor) and i not in rejoined and id(entry) not in self.grad_varies and any(
                    isinstance(vals[i], torch.Tensor) and (vals[i].requires_grad != entry.requires_grad or
                                                           id(vals[i]) in self.grad_varies)
                    for vals in ends if len(vals) > i):
                arg_type = block.args[i + skip].type
                rejoined[i] = self._grad_varying(arg_type if isinstance(arg_type, TensorType) else _type_of(entry))
        for i in unset:
            # An early return's slot, None on entry: carried as a Python object that
            # stands for what the loop stores in it.
            rejoined[i] = _joined_parts([vals[i] for vals in ends if vals[i] is not UNSET])
            for v in [*(region.block.args[i + skip] for region in op.regions if len(region.block.args) > i + skip),
                      op.results[i]]:
                if v.type == d.ANY:
                    Rewriter.replace_value_with_new_type(v, d.PYOBJ)
        if rejoined and not widen and rerun < 4:
            # A Python tuple whose parts change kind by iteration (`t = (None, 0)`, then
            # `t = (x[i], i)`): the body again, on a tuple whose such parts are known at
            # run time only (else `t[0] is None` after the loop takes the first's None).
            inits = list(inits)
            for i, v in rejoined.items():
                inits[i + skip] = v
            if isinstance(op, d.WhileOp):
                self.loop_depth += 1
                try:
                    self.run_block_with_args(op.cond_region.block, inits, returns)
                finally:
                    self.loop_depth -= 1
            return self.run_loop(op, block, inits, returns, rerun + 1)
        if widen:
            # Tensors that grow (`ids = torch.cat([ids, nxt], 1)`), together (an attention
            # mask grows with its ids): carried with dynamic sizes, typed again from the start.
            for i, t in widen.items():
                _widen_carried(op, i, t)
            raise _SplitPaths
        for k, (r, v) in enumerate(zip(list(op.results), carried)):
            r = self.set(r, v, [v, *(vals[k] for vals in ends)])
            # Carried values are typed as the loop's results: names every iteration
            # agrees on (`t` on entry, `t + 1` after: unnamed).
            for region in op.regions:
                if len(region.block.args) > k + skip and region.block.args[k + skip].type != r.type and \
                        d.type_accepts(r.type, region.block.args[k + skip].type):
                    arg = region.block.args[k + skip]
                    value = self.env.pop(arg, None)
                    new = Rewriter.replace_value_with_new_type(arg, r.type)
                    if value is not None:
                        self.env[new] = value

    def as_declared(self, args: list[BlockArgument], inits: list[Any]) -> list[Any]:
        """A loop's initial values, each as its block argument is declared: a tensor
        carried with a dynamic size (see `_widen_carried`) enters as any size; a host
        number as any number (`i = 0; while ...: x[i:]; i += 2`: the body is typed for
        every iteration, not the first's value)."""
        shared: dict[int, Any] = {}

        def grown(t: TensorType, v: torch.Tensor) -> Any:
            # Dimensions that entered with one size grow alike (ids and their mask): one
            # symbol each, so that `emb(ids) * mask[..., None]` needs no guard on them.
            for k, n in zip(t.get_shape(), v.shape):
                if k < 0 and isinstance(n, int) and n not in shared:
                    shared[n] = self.mode.shape_env.create_unbacked_symint()
                    torch._check(shared[n] >= 0)
            return self.empty(t, [shared.get(n) if k < 0 and isinstance(n, int) else None
                                  for k, n in zip(t.get_shape(), v.shape)])

        return [grown(a.type, v) if isinstance(a.type, TensorType) and isinstance(v, torch.Tensor)
                and type_of_value(v) != a.type and DYNAMIC_INDEX in a.type.get_shape() else
                Unknown(type_of_value(v)) if type(v) in (bool, int, float) and (a.type in _PLACEHOLDERS or a.type == d.ANY) else
                _unknown_of((v, _OTHER_NUMBER[type(v)])) if type(v) in (bool, int, float) and a.type == d.PYOBJ else
                self._declared_list(a.type, v) for a, v in zip(args, inits)]

    def _grown_tuple(self, a: Any, b: Any) -> Attribute | None:
        """A tuple the loop grows (`scores += (s,)` until a condition holds): carried
        as a held list of its elements, whose number only the run time knows."""
        if not (type(a) in (tuple, HeldList) and type(b) in (tuple, HeldList) and HeldList in (type(a), type(b))
                or type(a) is tuple and type(b) is tuple and len(a) != len(b)):
            return None
        try:
            held = self._held_tuple(a, b)
        except TypeError:
            return None
        return d.ListType(element_type(held.element, _type_of))

    def _held_tuple(self, *values: Any) -> HeldList:
        held = HeldList(None, is_tuple=True)
        for v in values:
            for x in ([] if v.element is None else [v.element]) if isinstance(v, HeldList) else v:
                if not isinstance(x, (torch.Tensor, Unknown)):
                    raise TypeError("not a tensor")
                held = appended(held, x, _type_of, self.empty)
        return held

    def _declared_list(self, t: Attribute, v: Any) -> Any:
        """A held list entering a loop whose argument names its element type (found
        on an earlier run over the body): it stands for elements of that type."""
        if isinstance(t, d.ListType) and type(v) is tuple:
            try:
                v = self._held_tuple(v)  # (see _grown_tuple)
            except TypeError:
                return v
        if not (isinstance(v, HeldList) and isinstance(t, d.ListType) and t.element != d.ANY
                and _type_of(v) != t):
            return v
        e = t.element
        return HeldList(self.empty(e) if isinstance(e, TensorType) else Unknown(e), v.is_tuple)

    def _isinstance(self, op: d.CallFunctionOp) -> bool:
        """isinstance() of a value whose type is decided: a host number answers as the
        Python number of its type (not as the stand-ins shape inference runs on)."""
        value, classes = (self.get(v) for v in op.operands[:2])
        if isinstance(value, Unknown):
            value = {i64: 0, f64: 0.0, i1: False}.get(value.type, value)
        try:
            return isinstance(value, classes)
        except TypeError as e:  # (not a class: eager raises this at run time)
            raise PassError(f"isinstance() fails: {e}", op) from None

    def constant_value(self, op: d.ConstantOp) -> Any:
        if d.UNSET_ATTR in op.attributes:
            return UNSET
        v = op.value
        if isinstance(v, DenseIntOrFPElementsAttr):
            assert isinstance(v.type, TensorType)
            return self.empty(v.type)
        if isinstance(v, d.GlobalAttr):
            try:
                check_ir_name(v.qualname.data, self.model_key, self.model)
            except DyclError as e:
                raise PassError(e.message, op) from None
        return python_constant(v)

    def call(self, op: d.CallModuleOp | d.CallFunctionOp | d.CallMethodOp) -> Any:
        pos, kw = op.positional_and_keyword()
        args = [self.get(v) for v in pos]
        kwargs = {k: self.get(v) for k, v in kw.items()}
        if isinstance(op, d.CallModuleOp):
            try:
                fn: Any = self.model.get_submodule(op.path.data)
            except AttributeError:
                raise PassError(f"the model has no submodule '{op.path.data}'", op) from None
        elif isinstance(op, d.CallFunctionOp):
            try:
                check_ir_name(op.target.data, self.model_key, self.model)
                fn = resolve_qualname(op.target.data)
            except DyclError as e:
                raise PassError(e.message, op) from None
            except (ImportError, AttributeError):
                raise PassError(f"unknown function '{op.target.data}'", op) from None
        elif isinstance(args[0], HeldList):  # `tokens.index(t)`: list's own method, on the host
            return self._call_on_lists(op, getattr(list, op.method.data), args, kwargs)
        else:
            recv, args = args[0], args[1:]
            if isinstance(recv, (list, dict, set)) and op.method.data in MUTATING_METHODS:
                # `toks.sort()` on a list a region made: Python that changes it in place
                raise PassError(f"'{op.method.data}' changes a Python {type(recv).__name__} in place", op)
            if isinstance(recv, Unknown):
                what = "scalar" if recv.type in _PLACEHOLDERS else "Python object"
                raise PassError(f"method '{op.method.data}' on a {what} only the run time has", op)
            if isinstance(recv, torch.Tensor) and op.method.data == "numpy":
                raise PassError("'.numpy()' hands a tensor's data to numpy, which runs as Python", op)
            fn = getattr(recv, op.method.data, None)
            if fn is None:
                raise PassError(f"{type(recv).__name__} has no method '{op.method.data}'", op)
        if isinstance(op, d.CallMethodOp) and op.method.data == "tolist" and not args and not kwargs and \
                isinstance(recv, torch.Tensor) and not all(isinstance(n, int) for n in recv.shape):
            # the Python list of a tensor whose sizes only the run knows: it stands for such
            # lists of two lengths (of zeros: what uses it may depend on its length, not its values)
            return _unknown_of(tuple(torch.zeros([k if not isinstance(n, int) else n for n in recv.shape],
                                                 dtype=recv.dtype).tolist() for k in (2, 3)))
        if fn is len and args and isinstance(args[0], torch.Tensor):
            fn = _first_size  # len() must return an int; a dynamic size is a symbol
        if isinstance(op, d.CallFunctionOp) and op.target.data == "dycl.tensor_ops.row" and \
                isinstance(args[0], torch.Tensor):
            # a row of what proved a tensor is its subscript (bounds-checked, read by every backend)
            op.properties["target"] = StringAttr("_operator.getitem")
            fn = operator.getitem
        if isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.slice" and not kwargs:
            # `best[b, :hlens[b]]`: a bound that is a 0-d integer tensor is read as an int (`__index__`)
            for k, a in enumerate(args):
                if _int_scalar_tensor(a):
                    op.operands[k] = self._read_int(op, op.operands[k], op)
                    args[k] = Unknown(i64)
        if isinstance(op, d.CallFunctionOp) and op.target.data in _SIZE_ARGUMENTS:
            # `F.one_hot(loc, num_classes=torch.max(counts))`: a size given as a 0-d integer
            # tensor is read as an int (`__index__`), one the host knows at run time only
            at, name = _SIZE_ARGUMENTS[op.target.data]
            k = at if at < len(pos) else len(pos) + list(kw).index(name) if name in kw else None
            if k is not None and _int_scalar_tensor(self.get(op.operands[k])):
                op.operands[k] = self._read_int(op, op.operands[k], op)
                if k < len(pos):
                    args[k] = Unknown(i64)
                else:
                    kwargs[name] = Unknown(i64)
        if isinstance(op, d.CallFunctionOp) and op.target.data == "_operator.getitem" and len(args) == 2:
            args[1] = self._integer_index(op, args[1])
            if type(args[0]) is tuple and type(args[1]) is int and -len(args[0]) <= args[1] < len(args[0]):
                return args[0][args[1]]  # (a part known at run time only: that part, unknown)
        if isinstance(op, d.CallFunctionOp) and op.target.data == "dycl.tensor_ops.unpack" and \
                isinstance(args[0], HeldList) and type(args[1]) is int:
            # `a, b = held`: n elements of the list's element type (its length checked at run time)
            return tuple(args[0].element for _ in range(args[1])) if args[0].element is not None \
                else tuple(Unknown(d.ANY) for _ in range(args[1]))
        if holds_list((*args, *kwargs.values())):
            return self._call_on_lists(op, fn, args, kwargs)
        if isinstance(op, d.CallFunctionOp) and op.target.data in TEXT_FUNCTIONS and \
                any(isinstance(t, torch.Tensor) for t in torch.utils._pytree.tree_leaves(args)):
            # The text of a tensor (`f"{loss:.3f}"`) shows its data: the host makes it. It
            # shows autograd's graph too (`grad_fn=<...>`), which sub-DNNs' tensors lack.
            self.asks_autograd = True
            if any(isinstance(t, torch.Tensor) and t.requires_grad for t in torch.utils._pytree.tree_leaves(args)):
                self.autograd_in_eager = True
            return Unknown(d.PYOBJ, picks=("0", "1"))
        if not any(_has_unknown(a) for a in (*args, *kwargs.values())):
            env = self.mode.shape_env
            values = [self.get(v) for v in op.operands]
            if isinstance(op, d.CallMethodOp):  # (the receiver is an input too)
                name = op.method.data
                at_risk = unit_sizes.probes(env, lambda r, *a, **k: getattr(r, name)(*a, **k), [values[0], *args],
                                            kwargs, unit_sizes.checked(op, values))
            else:
                at_risk = unit_sizes.probes(env, fn, args, kwargs, unit_sizes.checked(op, values))
            before = (env.num_deferred_runtime_asserts, len(env.replacements))
            try:
                with self.mode:
                    result = _run_torch(op, fn, args, kwargs)
            except PassError as e:
                call, real = (fn, args) if not isinstance(op, d.CallMethodOp) else (
                    lambda r, *a, **k: getattr(r, op.method.data)(*a, **k), [values[0], *args])
                if _torch_op(op, values) and (raised := eager_raises(e, call, real, kwargs)) is not None:
                    raise EagerRaises(raised, e) from None
                raise
            if at_risk and (env.num_deferred_runtime_asserts, len(env.replacements)) == before:
                # (where the op related sizes, `Eq(u0, u1)`, the run time checks it: no split)
                self._split_on_unit(op, values, [p for p in at_risk if unit_sizes.sensitive(p, result)])
            return result
        # A run-time scalar argument: the result type must not depend on its value.
        if any(fn is f for f in (torch.tensor, torch.as_tensor)) and args and _has_unknown(args[0]):
            # `torch.tensor([ids[-1]])`: made from numbers only the host has, by the host
            op.attributes[d.ON_HOST_ATTR] = UnitAttr()
        if any(u.symbol is None and u.picks is None and u.type not in _PLACEHOLDERS
               for u in _unknowns((*args, *kwargs.values()))):
            # (a part of a Python tuple that is None on some paths, a tensor on others)
            if fn in (operator.is_, operator.is_not):
                return Unknown(i1)
            raise PassError(f"'{_op_label(op)}' of a Python object whose kind only the run time knows "
                            "(None on some paths)", op)
        results = self._on_stand_ins(op, fn, args, kwargs)
        if isinstance(op, d.CallFunctionOp) and op.target.data == "_operator.getitem" and len(args) == 2 and \
                isinstance(results[0], torch.Tensor):
            results = [self._sliced_at_run_time(op, fn, args, r) for r in results]
        if isinstance(results[0], (torch.SymInt, torch.SymFloat, torch.SymBool)) and \
                not _same_object(results[0], results[1]):
            # `n + x[i:i + 1].numel()`: a number from a run-time size and a run-time scalar
            # (one that follows sizes alone, `x.shape[0] * 2`, keeps its size expression)
            return Unknown(_symbolic_scalar(results[0]).type)
        t0, t1 = type_of_value(results[0]), type_of_value(results[1])
        if t0 != t1 and _is_number(results[0]) and _is_number(results[1]):
            return _unknown_of((results[0], results[1]))  # (`best + 1` of an int or a float)
        if t0 != t1 and (sized := _sized_by_scalars(op, t0, t1)) is not None:
            # `torch.arange(n)`, `x.narrow(0, 0, n)` of a host int n: the host runs it with
            # torch (no sub-DNN takes a size from a number), its result's sizes `?` where they follow n
            op.attributes[d.ON_HOST_ATTR] = UnitAttr()
            return self.empty(sized)
        if t0 != t1:
            raise PassError(f"the result's type depends on a run-time value ({t0} or {t1})", op)
        if not isinstance(results[0], torch.Tensor) and t0 in _PLACEHOLDERS:
            return Unknown(t0)
        if not isinstance(results[0], torch.Tensor) and not _same_object(results[0], results[1]):
            # `slice(n, None)` of a run-time n: what uses it sees both, and finds out
            # whether its result shape depends on n (it must not take one of them).
            return Unknown(t0, picks=(results[0], results[1]))
        return results[0]


    def _sliced_at_run_time(self, op: Operation, fn: Any, args: list[Any], result: Any) -> Any:
        """`result` with each dimension a slice with run-time bounds makes dynamic.
        Its length depends on the bounds' values (`x[n:n + 1]` is empty for n past the
        end), which two stand-ins need not show (n = 1 and 2 both give one row)."""
        base, index = args
        parts = index if isinstance(index, tuple) else (index,)
        if not any(_run_time_slice(p) for p in parts):
            return result

        def cut(to: slice) -> Any:
            made = tuple(to if _run_time_slice(p) else _substitute(p, 0) for p in parts)
            with self.mode:
                return _run_torch(op, fn, [base, made if isinstance(index, tuple) else made[0]], {})

        try:
            whole, empty = cut(slice(None)), cut(slice(0, 0))
        except PassError:
            return result
        if whole.dim() != result.dim():
            return result
        # (sizes only the run knows, a nonzero's: different unless provably equal, never a guard on them)
        varies = {k for k, (a, b) in enumerate(zip(whole.shape, empty.shape)) if not statically_known_true(a == b)}
        if not varies:
            return result
        t = type_of_value(result)
        assert isinstance(t, TensorType)
        return self.empty(TensorType(t.element_type, [DYNAMIC_INDEX if k in varies else n
                                                      for k, n in enumerate(t.get_shape())]))

    def _read_int(self, op: Operation, operand: SSAValue, before: Operation) -> SSAValue:
        item = d.ItemOp(operand, i64)
        item.location = op.location
        Rewriter.insert_op(item, InsertPoint.before(before))
        self.set(item.result, Unknown(i64))
        return item.result

    def _integer_index(self, op: d.CallFunctionOp, index: Any) -> Any:
        """`h[tok]` with `tok` a 0-d integer tensor (an argmax) is `h[int(tok)]` in eager
        (negative from the end, IndexError past it): the host reads it, as an int index
        (also inside an index tuple, `probs[0, tok]`, built for this use only)."""
        scalar = _int_scalar_tensor

        def read(operand: SSAValue, before: Operation) -> SSAValue:
            return self._read_int(op, operand, before)

        if scalar(index):
            op.operands[1] = read(op.operands[1], op)
            return Unknown(i64)
        owner = op.operands[1].owner
        if isinstance(index, tuple) and any(map(scalar, index)) and isinstance(owner, d.MakeTupleOp) and \
                sum(1 for _ in owner.result.uses) == 1:
            for k, v in enumerate(index):
                if scalar(v):
                    owner.operands[k] = read(owner.operands[k], owner)
            if isinstance(owner.result.type, TupleType):  # (typed already: a loop body inferred again)
                Rewriter.replace_value_with_new_type(owner.result, TupleType([o.type for o in owner.operands]))
            index = tuple(Unknown(i64) if scalar(v) else v for v in index)
            self.env[owner.result] = index
        return index

    def _split_on_unit(self, op: Operation, values: list[Any], found: list[unit_sizes.Probe]) -> None:
        """`op`'s result differs at a size of 1 (`x[mask].squeeze(0)` with one row
        kept): the path splits on that size, each copy typed for its sizes."""
        for p in found:
            where = unit_sizes.operand_with(op, values, p.symbol)
            if where is None:
                continue
            if self.loop_depth or not can_split(op):
                raise PassError(f"'{_op_label(op)}' gives another shape where a run-time size is 1, and the code "
                                "after it cannot be copied for that case (a loop body)", op)
            unit_sizes.split_on_unit(op, *where)
            raise _SplitPaths

    def _on_stand_ins(self, op: Operation, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The op's results for two stand-in values of its run-time scalars. A
        stand-in the op rejects (`probs[0, k]` with k = 2 where the dim has 2)
        says nothing of the values the run time has (an argmax over that dim):
        further ones are tried, and the op fails only where every one does."""
        results: list[Any] = []
        error: PassError | None = None
        for pick in range(max(len(_stand_ins(u)) for u in _unknowns((*args, *kwargs.values())))):
            a2 = [_substitute(a, pick) for a in args]
            k2 = {k: _substitute(a, pick) for k, a in kwargs.items()}
            try:
                with self.mode:
                    results.append(_run_torch(op, fn, a2, k2))
            except PassError as e:
                error = error or e
            if len(results) == 2:
                return results
        if results:
            # One stand-in alone is valid (an index into a size-1 dim), or the op takes
            # few values of it (`x.reshape(n, -1)`: n = 1 or 3 of 3 elements, of
            # different shapes): other ints, the sizes of its tensors among them.
            for n in _more_ints(args, kwargs):
                try:
                    with self.mode:
                        return results + [_run_torch(op, fn, _with_ints(args, n), _with_ints(kwargs, n))]
                except PassError:
                    continue
            return results * 2
        assert error is not None
        raise error


_MAX_SPLITS = 64


def replace_autograd_query(op: Operation, result: bool | None, set_value: Any) -> None:
    """The query `op` replaced by the constant it gives (None: `t.grad_fn` with no graph)."""
    found = d.ConstantOp(NoneAttr()) if result is None else arith.ConstantOp(IntegerAttr(int(result), i1))
    found.location = op.location
    Rewriter.replace_op(op, found)
    set_value(found.results[0], result)
# Ops whose results are not decided by the static shapes of their operands: data
# reads, joins of paths (a representative value), loops, regions, sub-DNN calls.
_UNDECIDED = (d.ItemOp, d.IfOp, d.ForOp, d.WhileOp, d.PyRegionOp, d.CallSubgraphOp, d.TensorRegionOp)


def _has_container(v: Any, depth: int = 0) -> bool:
    if type(v) in (list, dict, set):
        return True
    return isinstance(v, tuple) and depth < 8 and any(_has_container(x, depth + 1) for x in v)


def _copied(v: Any, memo: dict[int, Any]) -> Any:
    """`v` with its lists, dicts and sets copied (one copy of each, as aliased as before)."""
    if id(v) in memo:
        return memo[id(v)]
    if type(v) is list:
        memo[id(v)] = out = []
        out.extend(_copied(x, memo) for x in v)
        return out
    if type(v) is dict:
        memo[id(v)] = out = {}
        out.update((k, _copied(x, memo)) for k, x in v.items())
        return out
    if type(v) is set:
        return memo.setdefault(id(v), set(v))
    if isinstance(v, tuple) and _has_container(v):
        items = [_copied(x, memo) for x in v]
        return memo.setdefault(id(v), type(v)(*items) if hasattr(v, "_fields") else type(v)(items))
    return v


def _same_containers(a: Any, b: Any, depth: int = 0) -> bool:
    """Whether `a` (a copy of `b` a branch ran on) still holds what `b` does."""
    if a is b:
        return True
    if type(a) is not type(b) or depth > 8:
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_containers(x, y, depth + 1) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same_containers(a[k], b[k], depth + 1) for k in a)
    if type(a) is set:
        return len(a) == len(b) and all(any(x is y for y in b) or x in b for x in a)
    return type(a) in (int, float, bool, str) and a == b


def _read_from_outside(block: Block, op: Operation) -> list[SSAValue]:
    """The values ops in `block` (at any depth) read that are made outside `op`."""
    found: dict[SSAValue, None] = {}
    for o in block.walk():
        for v in o.operands:
            if not op.is_ancestor(v.owner):
                found[v] = None
    return list(found)


def _plain_constant(v: Any, depth: int = 0) -> bool:
    if type(v) in (list, tuple):
        return depth < 8 and all(_plain_constant(x, depth + 1) for x in v)
    return v is None or type(v) is bool or type(v) is int and fits_i64(v) or type(v) is float and math.isfinite(v)


def _literal(value: Any) -> tuple[list[Operation], SSAValue]:
    """Ops making the plain constant `value` (lists stay lists: `x[[0, 1]]` is no `x[0, 1]`)."""
    if type(value) in (list, tuple):
        ops: list[Operation] = []
        elements = []
        for x in value:
            made, r = _literal(x)
            ops += made
            elements.append(r)
        tup = d.MakeTupleOp(elements, is_list=type(value) is list)
        return ops + [tup], tup.result
    if value is None:
        none = d.ConstantOp(NoneAttr())
        return [none], none.result
    c = arith.ConstantOp(IntegerAttr(int(value), i1) if type(value) is bool else
                         IntegerAttr(value, i64) if type(value) is int else FloatAttr(value, f64))
    return [c], c.result


def _edited_here_only(v: SSAValue, use: Operation) -> bool:
    """Whether every op that reads or edits the Python object `v` holds (through
    `dycl.tensor_ops.setitem`, which gives it back) is in `use`'s block and none is
    Python run as a region: so its value at `use` is the one this pass saw."""
    root = v
    while isinstance(root.owner, d.CallFunctionOp) and root.owner.target.data == "dycl.tensor_ops.setitem":
        root = root.owner.operands[0]
    block = use.parent_block()
    todo, seen = [root], set()
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        for u in x.uses:
            if u.operation.parent_block() is not block or isinstance(u.operation, d.PyRegionOp):
                return False
            if isinstance(u.operation, d.CallFunctionOp) and u.operation.target.data == "dycl.tensor_ops.setitem" \
                    and u.index == 0:
                todo.append(u.operation.results[0])
    return True


def _decided(v: SSAValue, depth: int = 0) -> bool:
    """Whether a host value is the same on every run: made from constants and static
    sizes only (not from data, a join of paths, a loop's iteration or a region)."""
    if isinstance(v.type, TensorType):
        return all(n >= 0 for n in v.type.get_shape())  # its sizes: what a number computed from it reads
    owner = v.owner
    if isinstance(owner, d.ItemOp) and owner.input.type in (i64, f64, i1):
        return _decided(owner.input, depth + 1)  # (item() of a host number: that number)
    if depth > 64 or not isinstance(owner, Operation) or isinstance(owner, _UNDECIDED):
        return False  # (a block argument: a loop's iteration, a branch's value)
    if isinstance(owner, d.ToBoolOp) and isinstance(owner.input.type, TensorType):
        return False  # bool() of tensor data
    if isinstance(owner, d.CallFunctionOp) and owner.target.data == "builtins.isinstance":
        # of a value typed here (a tensor, a host number) or a constant (None): the same on every run
        v = owner.operands[0]
        if isinstance(v.owner, d.CallFunctionOp) and v.owner.target.data in ("_operator.pow", "builtins.pow"):
            return False  # (`k ** k`: an int, or a float where k < 0)
        return isinstance(v.type, TensorType) or v.type in (i64, f64, i1) or isinstance(v.owner, d.ConstantOp)
    return all(_decided(x, depth + 1) for x in owner.operands)


_CMPI = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge}


def _host_arith(op: Operation, args: list[Any]) -> Any:
    """An arith op on host numbers this pass knows (`0 < n` of a peeled loop over a
    static size): its value; else known at run time only."""
    t = op.results[0].type
    if not all(type(a) in (int, bool) for a in args):
        return Unknown(t)
    a, b = args
    if isinstance(op, arith.CmpiOp) and op.predicate.value.data in _CMPI:
        return bool(_CMPI[op.predicate.value.data](a, b))
    if isinstance(op, (arith.AndIOp, arith.OrIOp, arith.XOrIOp)) and t == i1:
        fn = operator.and_ if isinstance(op, arith.AndIOp) else operator.or_ if isinstance(op, arith.OrIOp) \
            else operator.xor
        return bool(fn(bool(a), bool(b)))
    return Unknown(t)


def _named(v: SSAValue, otherwise: str) -> str:
    """A value as the user's code names it, for messages."""
    name = v.name_hint or ""
    return f"'{name}'" if name.isidentifier() and not name.startswith("__dycl") else otherwise


def _reads_unbound(op: Operation) -> bool:
    """`op` checks that a name is bound, of the unbound marker itself."""
    return isinstance(op, d.PyRegionOp) and op.construct.data == d.READ_OF_A_NAME and len(op.args) == 1 and \
        _is_unbound_marker(op.args[0].owner)


def _is_unbound_marker(op: Any) -> bool:
    return isinstance(op, d.ConstantOp) and isinstance(op.value, d.GlobalAttr) and \
        op.value.qualname.data == UNBOUND_NAME


def _unbound_message(op: d.PyRegionOp) -> str:
    """What eager's UnboundLocalError says where the region reads its name (this
    Python's wording: the region's own code, run on the marker)."""
    namespace: dict[str, Any] = {}
    exec(compile(op.code.data, op.loc.data, "exec"), {}, namespace)  # noqa: S102 (the frontend's own code)
    try:
        namespace["__dycl_region"](None, UNBOUND_VALUE)
    except UnboundLocalError as e:
        return str(e)
    raise PassError("the check that a name is bound did not raise on the unbound marker", op)


def _surely_bound(v: SSAValue, seen: set[SSAValue]) -> bool:
    """No path gives `v` the unbound marker: it is not made by a fallback region (whose
    name may be unbound on some of its paths) or the marker itself, through joins and loops."""
    if v in seen:
        return True
    seen.add(v)
    owner = v.owner
    if isinstance(owner, d.PyRegionOp):
        return False
    if isinstance(owner, d.ConstantOp):
        return not _is_unbound_marker(owner)
    loop, k = (owner, v.index) if isinstance(owner, (d.ForOp, d.WhileOp)) else (None, 0)
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        if not isinstance(parent, (d.ForOp, d.WhileOp)):
            return isinstance(parent, func.FuncOp)  # (a function's argument)
        loop, k = parent, v.index - (1 if isinstance(parent, d.ForOp) else 0)
        if k < 0:
            return True  # the induction variable
    if loop is not None:
        passed = [loop.iter_args[k]] + [o.operands[k] for o in loop.body.walk()
                                        if isinstance(o, (d.YieldOp, d.BreakOp)) and len(o.operands) > k
                                        and _loop_of(o) is loop]
        return all(_surely_bound(p, seen) for p in passed)
    if isinstance(owner, d.IfOp):
        ends = [r.block.last_op for r in owner.regions]
        return all(_surely_bound(e.operands[v.index], seen) for e in ends if isinstance(e, d.YieldOp))
    return True


def _loop_of(op: Operation) -> Operation | None:
    """The loop whose iteration a `dycl.yield`/`dycl.break` ends (None for an if's yield)."""
    parent = op.parent_op()
    if isinstance(op, d.YieldOp):
        return parent if isinstance(parent, (d.ForOp, d.WhileOp)) else None
    while parent is not None and not isinstance(parent, (d.ForOp, d.WhileOp)):
        parent = parent.parent_op()
    return parent


def _typed_use(v: SSAValue, depth: int = 0) -> bool:
    """Whether compiled code (not a return, not another region) may use `v`."""
    for use in v.uses:
        user = use.operation
        if isinstance(user, d.PyRegionOp) and depth < 8:
            # Another region that needs it to run (`result.classes = ...` on the object this
            # one made), or the host's check that a name is bound, handing it on as it is.
            if any(_typed_use(r, depth + 1) for r in user.res):
                return True
            continue
        if isinstance(user, (d.ReturnOp, func.ReturnOp, d.PyRegionOp)):
            continue
        if isinstance(user, d.MakeTupleOp) and depth < 8 and not _typed_use(user.result, depth + 1):
            continue
        return True
    return False


def run_region(inferrer: _Inferrer, op: d.PyRegionOp) -> list[Any]:
    """The results of a fallback region, for their types: run on fake tensors, or,
    where its code reads tensor data, once on real stand-in values. Module state,
    output and the random generator are restored afterwards."""
    from dycl.region_effects import RegionEffects

    effects = RegionEffects()
    if not op.res or not any(_typed_use(r) for r in op.res):
        # No result, or one only returned or handed to other regions: compiled code
        # never sees it. It runs only for what it changes (a result the code after it
        # was not compiled for can then run the call again as eager Python).
        if op.tail is None:
            with contextlib.suppress(Exception):  # (what it raises on stand-ins says nothing here)
                _type_region(inferrer, op, effects, typed=False)
                _note_effects(inferrer, op, effects)
        return [Unknown(d.PYOBJ) for _ in op.res]
    try:
        values = _type_region(inferrer, op, effects)
        _note_effects(inferrer, op, effects)
        marked = op.attributes.get(d.MAY_BE_NONE_ATTR)
        for a in marked.data if isinstance(marked, ArrayAttr) else ():
            # Tested with `is None` after the region: None on other inputs, whatever the
            # compile-time runs gave (`next((i for ...), None)`).
            values[a.value.data] = Unknown(d.PYOBJ)
        return values
    except Exception as e:  # the user's code failed on stand-in values
        if op.tail is not None:
            return [Unknown(d.PYOBJ)]  # it ends the function: nothing compiled uses it
        raise PassError(f"cannot infer what the fallback region at {op.loc.data} returns: run on stand-ins for "
                        "the values only the run knows, it raised "
                        f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", op) from None


def _type_region(inferrer: _Inferrer, op: d.PyRegionOp, effects: Any, typed: bool = True) -> list[Any]:
    from dycl.region_typing import type_region

    # (a Python object only the run time has, e.g. the value a region of an earlier
    # iteration assigned, which this one overwrites: None stands in)
    args = [None if inferrer.get(v) is UNSET else _as_python_list(inferrer.get(v), op) for v in op.args]
    mode = op.attributes.get(d.GRAD_MODE_ATTR)
    with grad_mode_context(inferrer.caller_grad_mode, mode.data if isinstance(mode, StringAttr) else None):
        return type_region(op, inferrer.model, inferrer.mode, args,
                           lambda u: _sample(u, _PLACEHOLDERS.get(u.type, (None, None))[0]), Unknown,
                           lambda u: _sample(u, _PLACEHOLDERS.get(u.type, (None, None))[1]),
                           lambda u: _sample(u, (_FURTHER_STAND_INS.get(u.type) or
                                                 _PLACEHOLDERS.get(u.type, (None,)))[0]), effects, typed)


def _note_effects(inferrer: _Inferrer, op: d.PyRegionOp, effects: Any) -> None:
    from dycl.region_effects import region_effects

    from dycl.pyregion import resolve_globals

    user_globals = None if op.globals.data == "dycl.pyregion" else resolve_globals(op.globals.data)
    entries = region_effects(op.code.data, inferrer.model, effects, user_globals)
    op.attributes[d.EFFECTS_ATTR] = ArrayAttr([StringAttr(e) for e in entries])


def _sample(u: Unknown, placeholder: Any) -> Any:
    """What a region's compile-time run takes for `u`: the Python object an earlier
    region's run made (a detectron2 `Instances` it fills), else the placeholder."""
    return u.sample if u.sample is not None else placeholder


def _as_python_list(v: Any, region: d.PyRegionOp) -> Any:
    """A held list as a region's code receives it: a Python list (of two elements)."""
    if not isinstance(v, HeldList):
        return v
    element = v.element
    if isinstance(element, Unknown):
        if element.picks is None and element.symbol is None and element.type not in _PLACEHOLDERS:
            raise PassError(f"cannot infer what the fallback region at {region.loc.data} returns: it takes a list "
                            "of Python objects whose structure only the run time knows", region)
        element = _stand_ins(element)[0]
    from dycl.region_typing import HeldSample, HeldTupleSample

    items = [] if element is None else [element, element]
    return HeldTupleSample(items) if v.is_tuple else HeldSample(items)


def _widened(a: Attribute, b: Attribute) -> Attribute | None:
    """`a` with the dimensions where `b` differs dynamic (`?`), for two tensor types
    of one rank and dtype (or two lists of them); a list typed once its elements
    are known; None otherwise."""
    if isinstance(a, d.ListType) and isinstance(b, d.ListType):
        if d.ANY in (a.element, b.element):
            return b if a.element == d.ANY else a
        element = _widened(a.element, b.element)
        return d.ListType(element) if element is not None else None
    if not (isinstance(a, TensorType) and isinstance(b, TensorType) and a.element_type == b.element_type
            and len(a.get_shape()) == len(b.get_shape())):
        return None
    return TensorType(a.element_type, [x if x == y else DYNAMIC_INDEX for x, y in zip(a.get_shape(), b.get_shape())])


def _widen_carried(op: Operation, i: int, t: Attribute) -> None:
    """Carry loop value #i as `t`: its block arguments and the loop's result, and
    every tensor typed inside the loop is inferred again."""
    skip = 1 if isinstance(op, d.ForOp) else 0
    for region in op.regions:
        block = region.block
        if len(block.args) > i + skip:
            Rewriter.replace_value_with_new_type(block.args[i + skip], t)
    Rewriter.replace_value_with_new_type(op.results[i], t)
    for inner in op.walk():
        if inner is op:
            continue
        for r in list(inner.results):
            if isinstance(r.type, (TensorType, TupleType)):
                Rewriter.replace_value_with_new_type(r, d.ANY)
            elif isinstance(r.type, d.ListType):
                Rewriter.replace_value_with_new_type(r, d.ListType(d.ANY))


class _SplitPaths(Exception):
    """The IR was rewritten so that each path has its own static shapes."""


def _op_label(op: Operation) -> str:
    if isinstance(op, d.CallFunctionOp):
        return op.target.data
    if isinstance(op, d.CallMethodOp):
        return f".{op.method.data}()"
    if isinstance(op, d.CallModuleOp):
        return op.path.data
    return op.name


def _first_size(t: torch.Tensor) -> Any:
    if t.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return t.shape[0]


def _symbolic_scalar(v: Any) -> Any:
    """A size symbol read on the host (`len(t)`, `t.shape[0]` of a dynamic dimension)
    and what is computed from it: a scalar only the run time knows."""
    if isinstance(v, torch.SymBool):
        return Unknown(i1)
    if isinstance(v, torch.SymInt):
        return Unknown(i64, v)
    if isinstance(v, torch.SymFloat):
        return Unknown(f64)
    return v


def _real_zeros(v: Any) -> Any:
    """Fake tensors (in lists, tuples, dicts) as real zeros of their dtype; a
    dynamic size as 2."""
    if isinstance(v, torch.Tensor):
        return torch.zeros([n if isinstance(n, int) else 2 for n in v.shape], dtype=v.dtype)
    if isinstance(v, (list, tuple)):
        return type(v)(_real_zeros(x) for x in v)
    if isinstance(v, dict):
        return {k: _real_zeros(x) for k, x in v.items()}
    return v


def _type_of(v: Any) -> Attribute:
    """The IR type of a value as shape inference holds it."""
    if isinstance(v, Unknown):
        return v.type
    if isinstance(v, HeldList):
        return d.ListType(element_type(v.element, _type_of))
    return type_of_value(v)


def _structure(v: Any, depth: int = 0) -> Any:
    """What code after a join may rely on in a value: its type, and of a Python
    tuple, its length and each part's (None is a kind of its own)."""
    if isinstance(v, tuple) and not isinstance(v, torch.Size) and depth < 8:
        return tuple(_structure(x, depth + 1) for x in v)
    return "None" if v is None else _type_of(v)


def _joined_parts(values: list[Any]) -> Any:
    """One value for paths that meet (the first path's), where each part of a
    Python tuple that differs in kind by path is known at run time only."""
    first = values[0]
    if not isinstance(first, tuple) or isinstance(first, torch.Size) or hasattr(first, "_fields") or \
            len({_structure(v) for v in values}) == 1:
        return first
    if not all(type(v) is tuple and len(v) == len(first) for v in values):
        return Unknown(d.PYOBJ)
    out = []
    for parts in zip(*values):
        types = {_type_of(p) for p in parts}
        if isinstance(parts[0], tuple) or len({_structure(p) for p in parts}) == 1:
            out.append(_joined_parts(list(parts)))
        else:
            out.append(Unknown(types.pop() if len(types) == 1 else d.PYOBJ))
    return tuple(out)


def _rejoined(carried: list[Any], ends: list[list[Any]]) -> dict[int, Any]:
    """The carried Python tuples whose parts differ in kind between entry and the
    ends of an iteration, each with those parts known at run time only."""
    out: dict[int, Any] = {}
    for i, entry in enumerate(carried):
        parts = [entry, *(vals[i] for vals in ends if len(vals) > i)]
        if len({_type_of(p) for p in parts}) == 1 and len({_structure(p) for p in parts}) > 1:
            joined = _joined_parts(parts)
            if _structure(joined) != _structure(entry):
                out[i] = joined
    return out


def _abstract_scalar(v: Any) -> Any:
    """A list element that is a number known here stands for any number of its type."""
    return Unknown(type_of_value(v)) if type(v) in (bool, int, float) else v


def _same_object(a: Any, b: Any) -> bool:
    try:
        with quiet_logger("torch.fx.experimental.symbolic_shapes"):  # (sizes only the run knows: no guard, no log)
            return bool(a == b)
    except Exception:  # noqa: BLE001 (objects that do not compare: treat as different)
        return False


def _is_number(v: Any) -> bool:
    """A Python number: known, of a known type, or of a type only the run time knows."""
    if isinstance(v, Unknown):
        return v.type in _PLACEHOLDERS or v.type == d.PYOBJ and v.picks is not None and \
            all(type(p) in (bool, int, float) for p in v.picks)
    return type(v) in (bool, int, float)


def _has_unknown(v: Any) -> bool:
    if isinstance(v, Unknown):
        return True
    return isinstance(v, (tuple, list)) and any(_has_unknown(x) for x in v)


def _unknown_of(picks: tuple[Any, Any]) -> Any:
    """A run-time value whose two stand-ins are `picks`: a number of their type, or a
    Python object standing for either."""
    symbolic = [_symbolic_scalar(p) for p in picks]
    if all(isinstance(p, Unknown) for p in symbolic) and len({p.type for p in symbolic}) == 1:
        return Unknown(symbolic[0].type)  # (`x0` of `boxes.tolist()`: an int only the run reads)
    t = type_of_value(picks[0])
    if t in _PLACEHOLDERS and type_of_value(picks[1]) == t:
        return Unknown(t)
    return Unknown(d.PYOBJ, picks=picks)


def _stand_ins(v: Unknown) -> tuple[Any, ...]:
    if v.picks is not None:
        return v.picks
    # A size symbol stands for itself: `x.view(x.size(0), -1)` keeps its shape.
    return (v.symbol,) if v.symbol is not None else _PLACEHOLDERS[v.type] + _FURTHER_STAND_INS.get(v.type, ())


def _unknowns(v: Any) -> Iterator[Unknown]:
    if isinstance(v, Unknown):
        yield v
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _unknowns(x)


def _module_none(result: Any, index: Any) -> bool:
    """Element `index` of a module's tuple result is None."""
    return isinstance(result, tuple) and type(index) is int and -len(result) <= index < len(result) and \
        result[index] is None


def _sized_by_scalars(op: Operation, t0: Attribute, t1: Attribute) -> TensorType | None:
    """The type of a tensor function's result whose sizes follow run-time scalars
    (`t0`, `t1` on two stand-ins): dynamic where they differ; None for other kinds
    of difference (dtype, rank, a module's result)."""
    if isinstance(op, d.CallModuleOp) or not (isinstance(t0, TensorType) and isinstance(t1, TensorType)) or \
            t0.element_type != t1.element_type or len(t0.get_shape()) != len(t1.get_shape()):
        return None
    return TensorType(t0.element_type, [a if a == b else DYNAMIC_INDEX for a, b in zip(t0.get_shape(), t1.get_shape())])


# Functions with a size argument eager also takes as a 0-d integer tensor: (position, name).
_SIZE_ARGUMENTS = {"torch.nn.functional.one_hot": (1, "num_classes")}


def _int_scalar_tensor(v: Any) -> bool:
    """A 0-d integer tensor: where Python wants an int, eager reads it (`__index__`)."""
    return isinstance(v, torch.Tensor) and v.dim() == 0 and not v.dtype.is_floating_point \
        and not v.dtype.is_complex and v.dtype != torch.bool


def _run_time_slice(v: Any) -> bool:
    """A slice with a bound only the run time knows (`slice(n, n + 1)`)."""
    return isinstance(v, Unknown) and v.picks is not None and isinstance(v.picks[0], slice)


def _more_ints(args: list[Any], kwargs: dict[str, Any]) -> list[int]:
    """Ints to try for run-time ints beyond their stand-ins: the sizes and element
    counts of the op's tensors, and a few small ones."""
    tried = set(_PLACEHOLDERS[i64] + _FURTHER_STAND_INS[i64])
    sizes = {n for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)
             for n in (*a.shape, a.numel()) if isinstance(n, int)}
    return sorted(({*sizes, 3, 4, 5, 6, 7, 8} | {-n for n in sizes}) - tried, key=abs)


def _with_ints(v: Any, n: int) -> Any:
    """`v` with every run-time int that has no stand-ins of its own (also inside
    tuples, lists and dicts) replaced by `n`."""
    if isinstance(v, Unknown):
        return n if v.type == i64 and v.picks is None and v.symbol is None else _substitute(v, 0)
    if isinstance(v, dict):
        return {k: _with_ints(x, n) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return type(v)(_with_ints(x, n) for x in v)
    return v


def _substitute(v: Any, pick: int) -> Any:
    """Unknown scalars (also inside index tuples) → their stand-in value `pick`
    (the last one past their count)."""
    if isinstance(v, Unknown):
        options = _stand_ins(v)
        return options[min(pick, len(options) - 1)]
    if isinstance(v, (tuple, list)):
        return type(v)(_substitute(x, pick) for x in v)
    return v


def arith_constant_value(op: arith.ConstantOp) -> int | float | bool:
    v = op.value
    if isinstance(v, IntegerAttr):
        return bool(v.value.data) if v.type == i1 else v.value.data
    if isinstance(v, FloatAttr):
        return v.value.data
    raise PassError("arith.constant of a non-scalar is not a host value", op)


def python_constant(v: Attribute) -> Any:
    """The Python value of a `dycl.constant` attribute (non-tensor)."""
    from xdsl.dialects.builtin import ArrayAttr

    if isinstance(v, (NoneAttr, NoneType)):
        return None
    if isinstance(v, StringAttr):
        return v.data
    if isinstance(v, d.GlobalAttr):
        return resolve_qualname(v.qualname.data)
    if isinstance(v, IntegerAttr):
        return v.value.data
    if isinstance(v, FloatAttr):
        return v.value.data
    if isinstance(v, ArrayAttr):
        return tuple(python_constant(x) for x in v.data)
    raise TypeError(f"not a Python constant: {v}")


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    """Infers a static type for every value of every function.

    Expects: dycl IR whose function inputs have static tensor types; the module's
    `dycl.model` attribute (or the `model` option, a `file.py:factory` spec) names
    the model whose submodules and parameters the IR refers to.

    Guarantees: no `!dycl.any` remains; every tensor value has a static shape and
    dtype, or a dynamic dimension (`?`) where a size depends on the data (the op
    that first computes such a size is marked `dycl.data_dependent_shape`); function result types are updated. Ops are run on fake tensors, so no
    real compute happens. An op that fails on its inferred inputs is reported with
    its source location. Loop-carried values must keep their rank and dtype
    (unroll first); a size that changes across iterations (a tensor grown by
    `torch.cat`) is carried as a dynamic dimension.
    An op whose result differs where a dynamic size is 1 (`x[mask].squeeze(0)`:
    torch's symbolic sizes assume it is not) splits the path on `size == 1`
    (`dycl/unit_sizes.py`): one copy sees a static 1, the other any other size.
    A Python number whose type differs by path (`best = -1`, later a float) is
    typed `!dycl.pyobj`, and so is arithmetic on it. Where a path reads a name it
    never bound (a loop that ran no iteration), that read becomes a `dycl.raise` of
    eager's UnboundLocalError and the rest of the path is dropped.
    Autograd queries (`t.requires_grad`, `torch.is_grad_enabled()`, `t.is_inference()`)
    become constants for calls in the `grad_mode` option's mode ("on", "off",
    "inference"; default: the running thread's), each call run in the switches its
    `dycl.grad_mode` names; the module's `dycl.caller_grad_mode` records that mode, and
    `dycl.autograd_in_eager` where an answer differs by path or iteration.
    """

    name = "shape-inference"

    model: str | None = None
    # The caller's grad mode autograd queries are decided for ("on", "off", "inference");
    # by default the mode of the thread running the pass.
    grad_mode: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        model = model_of(op, self.model)
        key = self.model or (op.attributes[MODEL_ATTR].data if isinstance(op.attributes.get(MODEL_ATTR), StringAttr)
                             else None)
        if self.grad_mode is not None and self.grad_mode not in GRAD_MODES:
            raise PassError(f"shape-inference: grad_mode must be one of {', '.join(GRAD_MODES)}; got "
                            f"'{self.grad_mode}'")
        inferrer = _Inferrer(op, model, key, self.grad_mode)
        # (an op that raises on fake tensors is logged with its traceback by torch; here
        # it is an answer the pass acts on: an error with the user's location, or a region)
        with quiet_logger("torch._subclasses.fake_tensor"):
            for f in list(op.ops):
                if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes:
                    inferrer.run_function(f)
        if inferrer.asks_autograd:
            op.attributes[d.CALLER_GRAD_MODE_ATTR] = StringAttr(inferrer.caller_grad_mode)
        if inferrer.autograd_in_eager:
            op.attributes[d.AUTOGRAD_IN_EAGER_ATTR] = UnitAttr()
