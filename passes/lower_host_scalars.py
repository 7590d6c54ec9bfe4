"""lower-host-scalars: the host's Python arithmetic on ints, floats and bools as `arith`/`math`.

After outlining, the host still spells scalar work as calls of Python functions
(`dycl.call_function "_operator.eq"(%idx, %c0) : (i64, i64) -> i1`). Each call
whose operands and result are host scalars (i1, i64, f64) and whose Python
meaning `arith`/`math` express exactly becomes those ops, so a host target needs
no Python to run it. Python's rules are kept: bools and ints promote (i1 → i64 →
f64) before arithmetic, `//` and `%` floor (the remainder takes the divisor's
sign), `!=` is true for NaN, `min`/`max` return the first of equal or unordered
operands, `not` and `bool()` test against zero.

What Python answers with an exception is left as the call (the Python host runs
it): `//`, `%` and `/` by a divisor not known to be non-zero, `int()` of a float,
and the `math` functions with domain or range errors. An int compares with a float
exactly, as in Python (`2**53 + 1 > 2.0**53`: as ints where the float holds an
integer); an int's true division stays a call unless the int is a constant or the
divisor a power of two (Python rounds the quotient once). `i64` arithmetic is 64-bit:
where Python's integers would grow past that, the C++ host stops with an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import FloatAttr, Float64Type, IntegerAttr, IntegerType, ModuleOp, f64, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from dycl.dialects import dycl as d
from dycl.passes.shape_inference import arith_constant_value

# A lowering builds ops into `emit` and returns the value that replaces the call,
# or None when it does not apply (the call stays).
Emit = Callable[[Operation], SSAValue]


def _kind(t: Attribute) -> int | None:
    """Python's numeric tower: 0 bool, 1 int, 2 float."""
    if t == i1:
        return 0
    if isinstance(t, IntegerType) and t.width.data == 64:
        return 1
    if isinstance(t, Float64Type):
        return 2
    return None


def _promote(v: SSAValue, kind: int, emit: Emit) -> SSAValue:
    have = _kind(v.type)
    if have == kind:
        return v
    if kind == 1:  # bool → int
        return emit(arith.ExtUIOp(v, i64))
    if have == 0:  # bool → float
        return emit(arith.UIToFPOp(v, f64))
    return emit(arith.SIToFPOp(v, f64))


def _const(value: int | float | bool, t: Attribute, emit: Emit) -> SSAValue:
    if t == i1:
        return emit(arith.ConstantOp(IntegerAttr(-1 if value else 0, i1)))
    if t == f64:
        return emit(arith.ConstantOp(FloatAttr(float(value), f64)))
    return emit(arith.ConstantOp(IntegerAttr(int(value), i64)))


def _known_nonzero(v: SSAValue) -> bool:
    op = v.owner
    if isinstance(op, (arith.SIToFPOp, arith.UIToFPOp, arith.ExtUIOp)):
        return _known_nonzero(op.input)
    return isinstance(op, arith.ConstantOp) and arith_constant_value(op) not in (0, 0.0, False)


_CMPI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
# Ordered comparisons are false with a NaN operand, as in Python; `!=` is true.
_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
# Bools compare as 0 and 1: unsigned on i1 (signed, `true` is -1).
_CMPI_BOOL = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}
_INT_OPS = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp}
_FLOAT_OPS = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp}
_BITWISE = {"and_": arith.AndIOp, "or_": arith.OrIOp, "xor": arith.XOrIOp}


def _compare(name: str, x: SSAValue, y: SSAValue, emit: Emit) -> SSAValue:
    """`x <name> y` on operands of one kind."""
    kind = _kind(x.type)
    if kind == 2:
        return emit(arith.CmpfOp(x, y, _CMPF[name]))
    return emit(arith.CmpiOp(x, y, (_CMPI_BOOL if kind == 0 else _CMPI)[name]))


_FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _exact_in_float(v: SSAValue) -> bool:
    """Whether the value converted to a float compares as itself: a bool, an int
    constant a float64 holds exactly, or a float constant below 2**53 in size (no
    int past 2**53 rounds to it; NaN and infinities compare alike)."""
    op = v.owner
    if _kind(v.type) == 0:
        return True
    if not isinstance(op, arith.ConstantOp):
        return False
    value = arith_constant_value(op)
    return abs(value) < 2 ** 53 or value != value or abs(value) == float("inf") if _kind(v.type) == 2 \
        else abs(value) <= 2 ** 53


def _power_of_two(v: SSAValue) -> bool:
    """An int constant 2**k (or its negative): dividing a float by it is exact."""
    op = v.owner
    if not isinstance(op, arith.ConstantOp) or _kind(v.type) != 1:
        return False
    value = abs(arith_constant_value(op))
    return value > 0 and value & (value - 1) == 0


def _int_float_compare(name: str, n: SSAValue, f: SSAValue, emit: Emit) -> SSAValue:
    """`n <name> f` for an int and a float, exactly as Python compares them: as
    floats where `float(n)` differs from `f` (rounding keeps the order), else as ints
    (`f` then holds an integer; 2**63 is above every int64)."""
    as_float = emit(arith.SIToFPOp(n, f64))
    by_floats = emit(arith.CmpfOp(as_float, f, _CMPF[name]))
    same = emit(arith.CmpfOp(as_float, f, "oeq"))
    beyond = emit(arith.CmpfOp(f, _const(2.0 ** 63, f64, emit), "oge"))
    zero = _const(0.0, f64, emit)  # (what converts where `f` is no int64: NaN, infinities, 2**63)
    f_int = emit(arith.FPToSIOp(emit(arith.SelectOp(beyond, zero, emit(arith.SelectOp(same, f, zero)))), i64))
    by_ints = emit(arith.SelectOp(beyond, _const(name in ("ne", "lt", "le"), i1, emit),
                                  emit(arith.CmpiOp(n, f_int, _CMPI[name]))))
    return emit(arith.SelectOp(same, by_ints, by_floats))


def _binary(name: str, a: SSAValue, b: SSAValue, emit: Emit) -> SSAValue | None:
    ka, kb = _kind(a.type), _kind(b.type)
    assert ka is not None and kb is not None
    if name in _BITWISE:
        if 2 in (ka, kb):
            return None  # a TypeError in Python
        kind = max(ka, kb)
        return emit(_BITWISE[name](_promote(a, kind, emit), _promote(b, kind, emit)))
    if name in _CMPI:
        kind = max(ka, kb)
        if {ka, kb} == {1, 2} and not (_exact_in_float(a) or _exact_in_float(b)):
            # Python compares an int with a float exactly (2**53 + 1 > 2.0**53)
            return _int_float_compare(name, a, b, emit) if ka == 1 else _int_float_compare(_FLIPPED[name], b, a, emit)
        return _compare(name, _promote(a, kind, emit), _promote(b, kind, emit), emit)
    kind = max(ka, kb, 1)  # arithmetic on bools is arithmetic on ints
    x, y = _promote(a, kind, emit), _promote(b, kind, emit)
    if name in _INT_OPS:
        return emit((_FLOAT_OPS if kind == 2 else _INT_OPS)[name](x, y))
    if not _known_nonzero(b):
        return None  # ZeroDivisionError in Python: the host keeps the call
    if name == "truediv":
        if kind == 1 and not _exact_in_float(a) and not _power_of_two(b):
            return None  # Python rounds an int quotient once; float(n) / 3 rounds twice past 2**53
        return emit(arith.DivfOp(_promote(x, 2, emit), _promote(y, 2, emit)))
    if kind == 2:
        return None  # float // and %: Python's rounding rules, not worth their cost here
    if name == "floordiv":
        return emit(arith.FloorDivSIOp(x, y))
    if name == "mod":  # remainder with the divisor's sign
        r = emit(arith.RemSIOp(x, y))
        zero = _const(0, i64, emit)
        if isinstance(y.owner, arith.ConstantOp) and arith_constant_value(y.owner) > 0:
            fix = emit(arith.CmpiOp(r, zero, "slt"))  # the usual `i % n`
        else:
            nonzero = emit(arith.CmpiOp(r, zero, "ne"))
            signs = emit(arith.XOrIOp(emit(arith.CmpiOp(r, zero, "slt")), emit(arith.CmpiOp(y, zero, "slt"))))
            fix = emit(arith.AndIOp(nonzero, signs))
        return emit(arith.SelectOp(fix, emit(arith.AddiOp(r, y)), r))
    return None


def _truth(v: SSAValue, emit: Emit) -> SSAValue:
    k = _kind(v.type)
    if k == 0:
        return v
    if k == 1:
        return emit(arith.CmpiOp(v, _const(0, i64, emit), "ne"))
    return emit(arith.CmpfOp(v, _const(0.0, f64, emit), "une"))  # NaN is true


def _unary(name: str, a: SSAValue, result: Attribute, emit: Emit) -> SSAValue | None:
    k = _kind(a.type)
    match name:
        case "_operator.not_":
            return emit(arith.XOrIOp(_truth(a, emit), _const(True, i1, emit)))
        case "_operator.truth" | "builtins.bool":
            return _truth(a, emit)
        case "_operator.neg":
            if k == 2:
                return emit(arith.NegfOp(a))
            return emit(arith.SubiOp(_const(0, i64, emit), _promote(a, 1, emit)))
        case "_operator.pos":
            return _promote(a, max(k or 0, 1), emit)
        case "builtins.float":
            return _promote(a, 2, emit)
        case "builtins.int" | "_operator.index" if k in (0, 1):
            return _promote(a, 1, emit)
        case "builtins.abs" | "_operator.abs":
            if k == 2:
                return emit(math.AbsFOp(a))
            return emit(math.AbsIOp(_promote(a, 1, emit)))
        case "math.fabs":
            return emit(math.AbsFOp(_promote(a, 2, emit)))
        case "math.isnan":
            x = _promote(a, 2, emit)
            return emit(arith.CmpfOp(x, x, "uno"))
        case "math.isinf" if k == 2:
            return emit(arith.CmpfOp(emit(math.AbsFOp(a)), _const(float("inf"), f64, emit), "oeq"))
        case "math.isfinite" if k == 2:
            return emit(arith.CmpfOp(emit(math.AbsFOp(a)), _const(float("inf"), f64, emit), "olt"))
    return None


def _extremum(name: str, a: SSAValue, b: SSAValue, emit: Emit) -> SSAValue | None:
    """Python's min(a, b) is `b if b < a else a` (max: `>`): the first operand wins
    ties and unordered (NaN) comparisons."""
    if _kind(a.type) != _kind(b.type):
        return None  # min(2.5, 2) is the int 2: Python's result type depends on the values
    x, y = a, b
    better = _compare("lt" if name == "builtins.min" else "gt", y, x, emit)
    return emit(arith.SelectOp(better, y, x))


def lower_call(op: d.CallFunctionOp, emit: Emit) -> SSAValue | None:
    """The arith/math value of a scalar Python call, or None to keep the call."""
    if op.kwargs is not None and op.kwargs.data:
        return None
    args = list(op.args)
    if not args or any(_kind(a.type) is None for a in args) or _kind(op.result.type) is None:
        return None
    target = op.target.data
    if len(args) == 1:
        value = _unary(target, args[0], op.result.type, emit)
    elif len(args) == 2 and target in ("builtins.min", "builtins.max"):
        value = _extremum(target, args[0], args[1], emit)
    elif len(args) == 2 and target.startswith("_operator."):
        value = _binary(target.removeprefix("_operator."), args[0], args[1], emit)
    else:
        value = None
    if value is not None and value.type != op.result.type:
        return None  # Python's result type is not the one inferred: leave it to Python
    return value


def _lower_item(op: d.ItemOp, emit: Emit) -> SSAValue | None:
    """`int(b)`, `float(i)`, `bool(i)` of host scalars (dycl.item on a scalar)."""
    src, want = _kind(op.input.type), _kind(op.result.type)
    if src is None or want is None:
        return None
    if want == 0:
        return _truth(op.input, emit)
    if src == 2 and want == 1:
        return None  # int(float): truncation, but an error for NaN and inf
    return _promote(op.input, want, emit)


def lower_function(f: func.FuncOp) -> int:
    lowered = 0
    for op in list(f.walk()):
        if not isinstance(op, (d.CallFunctionOp, d.ItemOp)) or op.parent is None:
            continue
        block = op.parent
        new: list[Operation] = []

        def emit(o: Operation, new: list[Operation] = new, loc: Attribute = op.location) -> SSAValue:
            o.location = loc
            new.append(o)
            return o.results[0]

        value = lower_call(op, emit) if isinstance(op, d.CallFunctionOp) else _lower_item(op, emit)
        if value is None:
            continue
        block.insert_ops_before(new, op)
        if value.name_hint is None:
            value.name_hint = op.results[0].name_hint
        op.results[0].replace_all_uses_with(value)
        block.erase_op(op)
        lowered += 1
    return lowered


_DEAD_IF_UNUSED = (arith.ConstantOp, d.ConstantOp, d.MakeTupleOp, d.GetItemOp)


def remove_dead_host_values(f: func.FuncOp) -> None:
    """Constants and tuples nothing reads (left by folding and by this pass)."""
    changed = True
    while changed:
        changed = False
        for op in list(f.walk()):
            if op.parent is not None and all(not r.uses for r in op.results) and op.results and (
                isinstance(op, _DEAD_IF_UNUSED) or (op.dialect_name() in ("arith", "math"))
            ):
                op.parent.erase_op(op)
                changed = True


@dataclass(frozen=True)
class LowerHostScalarsPass(ModulePass):
    """Lower the host's scalar Python calls (operators, `min`/`max`/`abs`,
    `int`/`float`/`bool`, `math.fabs`/`isnan`/`isinf`/`isfinite`) on i1/i64/f64 to
    `arith`/`math` ops with Python's semantics, and remove host constants and
    tuples nothing reads.

    Expects: host functions (func.func without `dycl.subgraph`), usually after
    outline-subgraphs. Guarantees: a scalar call is replaced only where arith/math
    give Python's exact answer for every input (calls that can raise in Python,
    e.g. a division by a run-time value, stay calls; so does an int's true division
    by a constant other than a power of two, which Python rounds once); sub-DNNs
    are not touched.
    """

    name = "lower-host-scalars"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes:
                lower_function(f)
                remove_dead_host_values(f)
