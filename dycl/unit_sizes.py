"""Ops whose result depends on whether a run-time size is 1.

Shape inference types a dynamic dimension (`?`: the rows a mask kept, a
signature's `b`) with a size symbol, and torch's symbolic shapes assume such a
symbol is not 1 where it has to decide (`squeeze`, broadcasting): `x[mask].squeeze(0)`
is typed `?x4`, while eager returns a `4` when the mask keeps one row. Left so,
the compiled program folds `y.dim()` to 2 and takes the other branch: a silent
wrong answer. `probe` runs such an op once more, in a shape environment of its
own, with the symbol set to 1; where that result is not the symbolic one with 1
put in, the op is size-1 sensitive and shape inference splits the path on
`size == 1` (`split_on_unit`): one copy sees a static 1, the other any other size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._pytree import tree_flatten
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dycl.dialects import dycl as d

# Marks an op already split on a size: its other copy sees sizes other than 1.
CHECKED_ATTR = "dycl.unit_size_checked"


@dataclass
class Probe:
    """A symbol at risk and the op's result with it set to 1 (None: the op fails there)."""

    symbol: sympy.Symbol
    result: Any
    others: dict[sympy.Symbol, sympy.Symbol]  # the op's other symbols -> the probe's


def _symbols(values: list[Any]) -> list[sympy.Symbol]:
    found: list[sympy.Symbol] = []
    for v in tree_flatten(values)[0]:
        for n in (v.shape if isinstance(v, torch.Tensor) else (v,) if isinstance(v, torch.SymInt) else ()):
            if isinstance(n, torch.SymInt) and isinstance(n.node.expr, sympy.Symbol) and n.node.expr not in found:
                found.append(n.node.expr)
    return found


def _may_be_one(shape_env: ShapeEnv, s: sympy.Symbol) -> bool:
    r = shape_env.var_to_range.get(s)
    return r is None or (r.lower <= 1 <= r.upper)


def probes(shape_env: ShapeEnv, fn: Any, args: list[Any], kwargs: dict[str, Any],
           skip: set[sympy.Symbol]) -> list[Probe]:
    """For each size symbol of the op's inputs that may be 1 (but those in `skip`),
    its result with that size 1 (run before the op itself, whose run may relate
    symbols for good)."""
    leaves = [*args, *kwargs.values()]
    found = []
    for u in _symbols(leaves):
        if u in skip or not _may_be_one(shape_env, u):
            continue
        mode = FakeTensorMode(allow_non_fake_inputs=True, shape_env=ShapeEnv())
        others: dict[sympy.Symbol, sympy.Symbol] = {}
        sizes: dict[sympy.Symbol, Any] = {u: 1}

        def size(n: Any) -> Any:
            if not isinstance(n, torch.SymInt):
                return n
            expr = n.node.expr
            for s in expr.free_symbols:
                if s not in sizes:
                    fresh = mode.shape_env.create_unbacked_symint()
                    torch._check(fresh >= 0)
                    sizes[s] = fresh
                    others[s] = fresh.node.expr
            value = sympy.sympify(expr.xreplace({s: (v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v))
                                                 for s, v in sizes.items()}))
            if value.is_Integer:
                return int(value)
            if isinstance(value, sympy.Symbol):
                return next(v for v in sizes.values() if isinstance(v, torch.SymInt) and v.node.expr == value)
            raise _Unprobed  # a size expression: not worth rebuilding

        def rebuild(v: Any) -> Any:
            if isinstance(v, torch.Tensor) and isinstance(v, torch._subclasses.FakeTensor):
                shape = [size(n) for n in v.shape]
                with mode:
                    return torch.empty(shape, dtype=v.dtype)
            if isinstance(v, torch.SymInt):
                return size(v)
            if isinstance(v, (list, tuple)):
                items = [rebuild(x) for x in v]
                try:  # (a named tuple, e.g. a PackedSequence, takes its fields one by one)
                    return type(v)(*items) if hasattr(type(v), "_fields") else type(v)(items)
                except Exception:  # noqa: BLE001 (a container that cannot be rebuilt: not probed)
                    raise _Unprobed from None
            return v

        try:
            a2 = [rebuild(a) for a in args]
            k2 = {k: rebuild(v) for k, v in kwargs.items()}
        except _Unprobed:
            continue
        try:
            with mode:
                result = fn(*a2, **k2)
        except Exception:  # noqa: BLE001 (size 1 is an error there, as it is in eager)
            result = None
        found.append(Probe(u, result, others))
    return found


class _Unprobed(Exception):
    pass


def sensitive(probe: Probe, result: Any) -> bool:
    """Whether the op's symbolic result, with the probe's symbol set to 1, is not
    what the op gives at size 1 (another rank, another size)."""
    if probe.result is None:
        return False
    got, spec = tree_flatten(result)
    want, spec1 = tree_flatten(probe.result)
    if spec != spec1:
        return True
    subst = {probe.symbol: 1, **probe.others}
    for g, w in zip(got, want):
        if isinstance(g, torch.Tensor) != isinstance(w, torch.Tensor):
            return True
        if isinstance(g, torch.Tensor):
            if g.dim() != w.dim() or g.dtype != w.dtype:
                return True
            pairs = list(zip(g.shape, w.shape))
        else:
            if type(g) is bool or type(w) is bool:  # (`past is None`: a truth value, no size)
                if type(g) is not type(w) or g != w:
                    return True
                continue
            pairs = [(g, w)] if isinstance(g, (int, torch.SymInt)) and isinstance(w, (int, torch.SymInt)) else []
        for a, b in pairs:
            ea = sympy.sympify(sympy.sympify(a.node.expr if isinstance(a, torch.SymInt) else a).xreplace(subst))
            eb = sympy.sympify(b.node.expr if isinstance(b, torch.SymInt) else b)
            known = set(probe.others.values())
            if not (ea.free_symbols <= known and eb.free_symbols <= known):
                continue  # a size the op made (nonzero's count): nothing to compare
            try:
                if sympy.simplify(ea - eb) != 0:
                    return True
            except TypeError:  # (a size that became a truth value, `Eq(u0, 1)` at u0 = 1: not comparable)
                return True
    return False


def operand_with(op: Operation, values: list[Any], symbol: sympy.Symbol) -> tuple[SSAValue, int] | None:
    """The op's tensor operand with a dimension of size `symbol`, and that dimension."""
    for v, fake in zip(op.operands, values):
        if isinstance(fake, torch.Tensor):
            for k, n in enumerate(fake.shape):
                if isinstance(n, torch.SymInt) and n.node.expr == symbol:
                    return v, k
    return None


def split_on_unit(op: Operation, value: SSAValue, dim: int) -> d.IfOp:
    """Before `op`: `if value.size(dim) == 1` yielding `value.narrow(dim, 0, 1)` (a
    static 1) or `value`; what follows uses the if's result. The two results'
    types differ, so shape inference then copies what follows into each branch."""
    loc = op.location
    k, one = (arith.ConstantOp(IntegerAttr(n, i64)) for n in (dim, 1))
    size = d.CallMethodOp("size", [value, k.result])
    eq = d.CallFunctionOp("_operator.eq", [size.result, one.result])
    cond = d.ToBoolOp(eq.result)
    k2, start, length = (arith.ConstantOp(IntegerAttr(n, i64)) for n in (dim, 0, 1))
    narrow = d.CallMethodOp("narrow", [value, k2.result, start.result, length.result])
    then_block = Block([k2, start, length, narrow, d.YieldOp(narrow.result)])
    else_block = Block([d.YieldOp(value)])
    if_op = d.IfOp(cond.result, [d.ANY], Region(then_block), Region(else_block))
    for o in (k, one, size, eq, cond, k2, start, length, narrow, if_op):
        o.location = loc
    block = op.parent
    assert block is not None
    after = _ops_from(op)
    Rewriter.insert_op([k, one, size, eq, cond, if_op], InsertPoint.before(op))
    for use in list(value.uses):
        user = use.operation
        top = user
        while top.parent is not block and top.parent_op() is not None:
            top = top.parent_op()
        if top in after:
            user.operands[use.index] = if_op.results[0]
    index = next(i for i, v in enumerate(op.operands) if v is if_op.results[0])
    done = op.attributes.get(CHECKED_ATTR)
    op.attributes[CHECKED_ATTR] = ArrayAttr([*(done.data if isinstance(done, ArrayAttr) else ()),
                                            StringAttr(f"{index}:{dim}")])
    return if_op


def checked(op: Operation, values: list[Any]) -> set[sympy.Symbol]:
    """The symbols of the operand dimensions `op` was already split on."""
    done = op.attributes.get(CHECKED_ATTR)
    out = set()
    for entry in done.data if isinstance(done, ArrayAttr) else ():
        i, k = map(int, entry.data.split(":"))
        fake = values[i] if i < len(values) else None
        if isinstance(fake, torch.Tensor) and k < fake.dim() and isinstance(fake.shape[k], torch.SymInt):
            out.add(fake.shape[k].node.expr)
    return out


def _ops_from(op: Operation) -> set[Operation]:
    out = set()
    o: Operation | None = op
    while o is not None:
        out.add(o)
        o = o.next_op
    return out
