"""The host targets' spelling of `arith`/`math` ops on host scalars (i1, i64, f64).

One table per target language, side by side, so the two hosts agree on what each
op means (MLIR's semantics: i1 is a bool; `cmpi` on i1 compares as unsigned;
ordered float predicates are false on NaN).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from dycl.diagnostics import PassError

# Python and C++ spell these comparisons alike.
_PY_CMP = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
           "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=",
           "oeq": "==", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "une": "!="}
_C_BINARY = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.AddfOp: "+", arith.SubfOp: "-",
             arith.MulfOp: "*", arith.DivfOp: "/"}


def _predicate(op: arith.CmpiOp | arith.CmpfOp) -> str:
    names = arith.CMPI_COMPARISON_OPERATIONS if isinstance(op, arith.CmpiOp) else arith.CMPF_COMPARISON_OPERATIONS
    return names[op.predicate.value.data]


def _bool(op: Operation) -> bool:
    return str(op.results[0].type) == "i1"


def python_expr(op: Operation, name: Callable[[SSAValue], str]) -> str:
    """The Python expression computing `op`'s one result."""
    a = [name(v) for v in op.operands]
    match op:
        case arith.CmpiOp() | arith.CmpfOp():
            pred = _predicate(op)
            if pred == "uno":
                return f"({a[0]} != {a[0]} or {a[1]} != {a[1]})"
            if pred == "ord":
                return f"({a[0]} == {a[0]} and {a[1]} == {a[1]})"
            if pred == "one":  # ordered and unequal: false with a NaN
                return f"({a[0]} == {a[0]} and {a[1]} == {a[1]} and {a[0]} != {a[1]})"
            if pred not in _PY_CMP:
                raise PassError(f"the Python host has no spelling of the comparison '{pred}'", op)
            return f"{a[0]} {_PY_CMP[pred]} {a[1]}"
        case arith.AndIOp():
            return f"{a[0]} and {a[1]}" if _bool(op) else f"{a[0]} & {a[1]}"
        case arith.OrIOp():
            return f"{a[0]} or {a[1]}" if _bool(op) else f"{a[0]} | {a[1]}"
        case arith.XOrIOp():
            return f"{a[0]} != {a[1]}" if _bool(op) else f"{a[0]} ^ {a[1]}"
        case arith.FloorDivSIOp():
            return f"{a[0]} // {a[1]}"
        case arith.RemSIOp():  # truncating, as C's %
            return f"(abs({a[0]}) % abs({a[1]})) * (-1 if {a[0]} < 0 else 1)"
        case arith.ExtUIOp():
            return f"int({a[0]})"
        case arith.SIToFPOp() | arith.UIToFPOp():
            return f"float({a[0]})"
        case arith.FPToSIOp():  # (of a float holding an integer: exact)
            return f"int({a[0]})"
        case arith.SelectOp():
            return f"({a[1]} if {a[0]} else {a[2]})"
        case arith.NegfOp():
            return f"-{a[0]}"
        case math.AbsFOp() | math.AbsIOp():
            return f"abs({a[0]})"
    if type(op) in _C_BINARY:
        return f"{a[0]} {_C_BINARY[type(op)]} {a[1]}"
    raise PassError(f"the Python host cannot run '{op.name}'", op)


def cpp_expr(op: Operation, name: Callable[[SSAValue], str]) -> str:
    """The C++ expression computing `op`'s one result (i1 → bool, i64 → int64_t, f64 → double)."""
    a = [name(v) for v in op.operands]
    match op:
        case arith.CmpiOp() | arith.CmpfOp():
            pred = _predicate(op)
            if pred == "uno":
                return f"(std::isnan({a[0]}) || std::isnan({a[1]}))"
            if pred == "ord":
                return f"(!std::isnan({a[0]}) && !std::isnan({a[1]}))"
            if pred == "one":
                return f"(!std::isnan({a[0]}) && !std::isnan({a[1]}) && {a[0]} != {a[1]})"
            if pred not in _PY_CMP:
                raise PassError(f"the C++ host has no spelling of the comparison '{pred}'", op)
            # C++'s != on doubles is true for NaN (une), == and < are ordered (oeq, olt): as MLIR says.
            return f"({a[0]} {_PY_CMP[pred]} {a[1]})"
        case arith.AndIOp():
            return f"({a[0]} {'&&' if _bool(op) else '&'} {a[1]})"
        case arith.OrIOp():
            return f"({a[0]} {'||' if _bool(op) else '|'} {a[1]})"
        case arith.XOrIOp():
            return f"({a[0]} {'!=' if _bool(op) else '^'} {a[1]})"
        case arith.FloorDivSIOp():
            return f"floordiv_i64({a[0]}, {a[1]})"
        case arith.RemSIOp():
            return f"rem_i64({a[0]}, {a[1]})"
        case arith.ExtUIOp():
            return f"static_cast<int64_t>({a[0]})"
        case arith.SIToFPOp() | arith.UIToFPOp():
            return f"static_cast<double>({a[0]})"
        case arith.FPToSIOp():
            return f"static_cast<int64_t>({a[0]})"
        case arith.SelectOp():
            return f"({a[0]} ? {a[1]} : {a[2]})"
        case arith.NegfOp():
            return f"(-{a[0]})"
        case math.AbsFOp():
            return f"std::fabs({a[0]})"
        case math.AbsIOp():
            return f"abs_i64({a[0]})"
    if type(op) in (arith.AddiOp, arith.SubiOp, arith.MuliOp):  # Python's ints do not wrap: overflow is an error
        return f"checked_{type(op).__name__[:3].lower()}({a[0]}, {a[1]})"
    if type(op) in _C_BINARY:
        return f"({a[0]} {_C_BINARY[type(op)]} {a[1]})"
    raise PassError(f"the C++ host cannot run '{op.name}'", op)
