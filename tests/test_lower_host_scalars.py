"""lower-host-scalars keeps Python's answers: each lowered call, evaluated as the
Python host spells its arith/math ops, equals Python's own result on ints, floats
(NaN, ±inf, -0.0) and bools, or the call is left to Python."""

from __future__ import annotations

import builtins
import itertools
import math
import operator

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, Float64Type, IntegerAttr, f64, i1, i64
from xdsl.ir import Block, SSAValue

from dycl.dialects import dycl as d
from dycl.host.scalar_exprs import python_expr
from dycl.passes.lower_host_scalars import lower_call

INTS = [-7, -3, -1, 0, 1, 2, 3, 8, 2**40]
FLOATS = [-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, float("inf"), float("-inf"), float("nan")]
BOOLS = [False, True]
TYPES = {bool: i1, int: i64, float: f64}

BINARY = ["eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "and_", "or_", "xor", "floordiv", "mod",
          "truediv"]
UNARY = ["_operator.not_", "_operator.truth", "_operator.neg", "_operator.pos", "builtins.bool", "builtins.float",
         "builtins.int", "builtins.abs", "math.fabs", "math.isnan", "math.isinf", "math.isfinite"]


def python_function(target: str):
    module, _, name = target.rpartition(".")
    return getattr({"_operator": operator, "builtins": builtins, "math": math}[module], name)


def result_type(value):
    return TYPES[type(value)]


def evaluate(target: str, values: list, constant_operands: bool) -> tuple[bool, object]:
    """(lowered?, value) of `target(*values)` through lower_call and python_expr."""
    block = Block(arg_types=[TYPES[type(v)] for v in values])
    env: dict[SSAValue, object] = {}
    operands = []
    for v, arg in zip(values, block.args):
        if constant_operands:  # a divisor the lowering sees as a constant
            c = arith.ConstantOp(IntegerAttr(-1 if v is True else int(v), TYPES[type(v)])) if not isinstance(
                v, float) else arith.ConstantOp(FloatAttr(v, f64))
            block.add_op(c)
            env[c.result] = v
            operands.append(c.result)
        else:
            env[arg] = v
            operands.append(arg)
    try:
        expected = python_function(target)(*values)
    except (ZeroDivisionError, TypeError, ValueError, OverflowError):
        expected = Exception
    rtype = result_type(expected) if expected is not Exception else f64
    call = d.CallFunctionOp(target, operands, result_type=rtype)
    made = []

    def emit(op):
        made.append(op)
        return op.results[0]

    value = lower_call(call, emit)
    if value is None:
        return False, expected
    names: dict[SSAValue, str] = {}

    def name(v: SSAValue) -> str:
        names.setdefault(v, f"v{len(names)}")
        return names[v]

    scope = {name(k): v for k, v in env.items()}
    for op in made:
        if isinstance(op, arith.ConstantOp):
            attr = op.value
            raw = attr.value.data
            scope[name(op.result)] = (bool(raw) if str(attr.type) == "i1" else
                                      float(raw) if isinstance(attr.type, Float64Type) else int(raw))
        else:
            scope[name(op.results[0])] = eval(python_expr(op, name), {"abs": abs}, scope)  # noqa: S307
    return True, (expected, scope[name(value)])


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("name", BINARY)
def test_binary_operators(name):
    lowered = 0
    for a, b in itertools.product(INTS + FLOATS + BOOLS, repeat=2):
        for constant in (False, True):
            ok, got = evaluate(f"_operator.{name}", [a, b], constant)
            if not ok:
                continue
            expected, value = got
            assert expected is not Exception, f"{name}({a!r}, {b!r}) raises in Python but was lowered"
            assert same(expected, value), f"{name}({a!r}, {b!r}): Python {expected!r}, lowered {value!r}"
            lowered += 1
    assert lowered  # each operator is lowered for some operands


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(name):
    for a in INTS + FLOATS + BOOLS:
        ok, got = evaluate(name, [a], False)
        if ok:
            expected, value = got
            assert expected is not Exception, f"{name}({a!r}) raises in Python but was lowered"
            assert same(expected, value), f"{name}({a!r}): Python {expected!r}, lowered {value!r}"


@pytest.mark.parametrize("name", ["builtins.min", "builtins.max"])
def test_min_max_keep_the_first_of_ties_and_nan(name):
    for a, b in itertools.product(INTS + FLOATS, repeat=2):
        if type(a) is not type(b):
            continue
        ok, got = evaluate(name, [a, b], False)
        assert ok
        expected, value = got
        assert same(expected, value), f"{name}({a!r}, {b!r}): Python {expected!r}, lowered {value!r}"


def test_division_by_a_run_time_value_stays_python():
    for name in ("floordiv", "mod", "truediv"):
        ok, _ = evaluate(f"_operator.{name}", [7, 2], False)
        assert not ok
