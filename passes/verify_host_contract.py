"""verify-host-contract: check that the IR is what the host targets take, and nothing else.

Like torch-mlir's backend contract: the emitters of `-t python-host` and
`-t cpp-host` rely on this and on nothing else. After outline-subgraphs and
lower-host-scalars the host function holds only

- structured control flow (`dycl.if/for/while/condition/yield/break/return`,
  `func.return`),
- `arith` and `math` scalars (i1, i64, f64),
- `dycl.call_subgraph`, predicate and scalar reads (`dycl.to_bool`, `dycl.item`),
- tuple plumbing (`dycl.make_tuple`, `dycl.get_item`),
- `dycl.raise` of a builtin exception with constant arguments (an `assert`),

and every sub-DNN is a branch-free `func.func` over ranked tensors and host
scalars. With `allow-python=true` (the Python host) the host may also run Python:
fallback regions, module-state reads and stores, calls of Python functions and of torch
(data-dependent sizes, calls on lists), lists held at run time (`!dycl.list`),
any raise and any Python constant.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, TupleType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from dycl.diagnostics import PassError, loc_of
from dycl.dialects import dycl as d

_CONTROL = (d.IfOp, d.ForOp, d.WhileOp, d.ConditionOp, d.YieldOp, d.BreakOp, d.ReturnOp, func.ReturnOp)
_CORE = (*_CONTROL, d.CallSubgraphOp, d.ToBoolOp, d.ItemOp, d.MakeTupleOp, d.GetItemOp)
_LISTS = (d.MakeListOp, d.ListAppendOp, d.ListGetOp, d.ListLenOp)
_PYTHON = (d.PyRegionOp, d.SetAttrOp, d.GetAttrOp, d.RaiseOp, d.CallFunctionOp, d.CallMethodOp, d.ConstantOp, *_LISTS)


def _scalar_or_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) or d.is_host_scalar_type(t)


def _host_value_type(t: Attribute) -> bool:
    if isinstance(t, TupleType):
        return all(_host_value_type(e) for e in t.types.data)
    return _scalar_or_tensor(t) or t == d.PYOBJ


def _constant_message(v: SSAValue) -> bool:
    op = v.owner
    return (isinstance(op, d.ConstantOp) and isinstance(op.value, StringAttr)) or _scalar_or_tensor(v.type)


def _why_not(op: Operation) -> str | None:
    """Why `op` may not be in a host function under the strict contract."""
    if op.dialect_name() in ("arith", "math"):
        if all(d.is_host_scalar_type(v.type) for v in (*op.operands, *op.results)):
            return None
        return "arith/math on values other than host scalars (i1, i64, f64)"
    if isinstance(op, d.RaiseOp):
        if op.exception.data.startswith("builtins.") and all(_constant_message(a) for a in op.args):
            return None
        return f"raising {op.exception.data} with Python objects"
    if isinstance(op, d.ConstantOp):
        if isinstance(op.value, StringAttr) and all(isinstance(u.operation, d.RaiseOp) for u in op.result.uses):
            return None  # a raise's message
        return "a Python constant"
    if isinstance(op, d.PyRegionOp):
        return f"a fallback region ({op.construct.data}: {op.reason.data}) at {op.loc.data}, Python code"
    if isinstance(op, d.SetAttrOp):
        return "a module-state store (Python objects)"
    if isinstance(op, d.GetAttrOp):
        return "a module-state read (Python objects)"
    if isinstance(op, _LISTS):
        return "a list held at run time (a Python list the loop appends to)"
    if isinstance(op, (d.CallFunctionOp, d.CallMethodOp)):
        what = op.target.data if isinstance(op, d.CallFunctionOp) else f".{op.method.data}()"
        if any(isinstance(v.type, d.ListType) for v in op.operands):
            return f"call '{what}' of a list held at run time (Python, run by the host)"
        if d.ON_HOST_ATTR in op.attributes:
            return f"tensor call '{what}' run on the host (its result's size depends on the data)"
        return f"Python call '{what}' (lower-host-scalars lowers only calls arith/math express exactly)"
    if isinstance(op, _CORE):
        return None
    return f"'{op.name}'"


def host_contract_violations(module: ModuleOp, allow_python: bool = False) -> list[tuple[Operation, str]]:
    """Each op that breaks the contract, with why, in program order."""
    found: list[tuple[Operation, str]] = []
    host = [f for f in module.ops if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR not in f.attributes]
    if [f.sym_name.data for f in host] != ["forward"]:
        found.append((module, "the host is exactly one function @forward (got "
                      + (", ".join(f"@{f.sym_name.data}" for f in host) or "none") + ")"))
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            if not allow_python:
                found.append((f, f"'{f.name}' at module level"))
            continue
        if d.SUBGRAPH_ATTR in f.attributes:
            found += _sub_dnn_violations(f)
            continue
        for op in f.walk():
            if op is f or any(isinstance(a, d.TensorRegionOp) for a in _ancestors(op, f)):
                continue
            if isinstance(op, d.TensorRegionOp):
                found.append((op, "tensor work not outlined into a sub-DNN (run outline-subgraphs)"))
                continue
            if allow_python and isinstance(op, _PYTHON):
                continue
            why = _why_not(op)
            if why is None and not allow_python:
                bad = next((v for v in op.results if not _host_value_type(v.type)), None)
                if bad is not None:
                    why = f"a value of type {bad.type}"
            if why is not None and (not allow_python or not isinstance(op, _CORE)):
                found.append((op, why))
    return found


def _ancestors(op: Operation, stop: Operation) -> list[Operation]:
    found = []
    parent = op.parent_op()
    while parent is not None and parent is not stop:
        found.append(parent)
        parent = parent.parent_op()
    return found


def _sub_dnn_violations(f: func.FuncOp) -> list[tuple[Operation, str]]:
    name = f"sub-DNN @{f.sym_name.data}"
    found: list[tuple[Operation, str]] = []
    for t in (*f.function_type.inputs.data, *f.function_type.outputs.data):
        if not _scalar_or_tensor(t):
            found.append((f, f"{name} takes or returns {t} (ranked tensors and host scalars only)"))
    for op in f.walk():
        if op is f:
            continue
        if op.regions or isinstance(op, d.HOST_ONLY_OPS):
            found.append((op, f"{name} holds '{op.name}' (sub-DNNs are branch-free tensor work)"))
    return found


def format_violations(found: list[tuple[Operation, str]], target: str) -> str:
    lines = [f"the {target} cannot run this program ({len(found)} operation(s) outside the host contract):"]
    for op, why in found:
        loc = loc_of(op)
        lines.append(f"  {loc or op.name}: {why}")
    return "\n".join(lines)


def check_host_contract(module: ModuleOp, target: str, allow_python: bool = False) -> None:
    found = host_contract_violations(module, allow_python)
    if found:
        note = None if allow_python else ("compile with the Python host (--host python), or rewrite the listed code; "
                                          "fallback regions are listed by `dycl compile --explain`")
        raise PassError(format_violations(found, target), found[0][0], note)


@dataclass(frozen=True)
class VerifyHostContractPass(ModulePass):
    """Check the host contract: one host function @forward holding only structured
    control flow, arith/math on host scalars, sub-DNN calls, predicate/scalar
    reads, tuple plumbing and builtin raises with constant messages; every sub-DNN
    a branch-free func.func over ranked tensors and host scalars. With
    `allow-python=true`, Python the Python host runs is allowed too (fallback
    regions, state stores, Python and host-torch calls, Python constants).

    Expects: the output of outline-subgraphs (and lower-host-scalars). Guarantees:
    the IR is unchanged; an error lists every operation outside the contract with
    its source location and why.
    """

    name = "verify-host-contract"
    allow_python: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_host_contract(op, "Python host" if self.allow_python else "C++ host", self.allow_python)
