"""inline-calls: behaviour the lit tests do not pin down, and a differential check.

The differential check generates random callees with nested `dycl.if`s, early
`dycl.return`s and if results, interprets the caller before and after inlining
on every assignment of its boolean inputs, and wants the same value: an early
return from the callee must return from the callee only.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.parser import Parser

from dycl.diagnostics import PassError
from dycl.dialects import dycl as d
from dycl.passes.inline_calls import InlineCallsPass
from dycl.registry import PASSES

# dycl.if/dycl.for's custom parsers still call xDSL's deprecated untyped
# parse_operand(); that is the dialect's business, not this pass's.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:Calling parse_operand\(\) without a type is deprecated:DeprecationWarning"
)


def _ctx() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, d.DYCL):
        ctx.load_dialect(dialect)
    return ctx


def _parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(_ctx(), text, "test.mlir").parse_module()
    if verify:
        module.verify()
    return module


def _run(text: str, verify: bool = True, **options: Any) -> ModuleOp:
    module = _parse(text, verify)
    InlineCallsPass(**options).apply(_ctx(), module)
    module.verify()
    return module


def _funcs(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def _calls(op: func.FuncOp) -> list[str]:
    return [c.callee.root_reference.data for c in op.walk() if isinstance(c, func.CallOp)]


def test_registered() -> None:
    assert PASSES["inline-calls"]() is InlineCallsPass
    assert InlineCallsPass.name == "inline-calls"


def test_missing_callee_is_a_located_pass_error() -> None:
    text = """
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
"""
    module = _parse(text, verify=False)
    call = next(op for op in module.walk() if isinstance(op, func.CallOp))
    from dycl.diagnostics import SourceLoc

    call.location = SourceLoc("model.py", 3, 8).to_attr()
    with pytest.raises(PassError) as info:
        InlineCallsPass().apply(_ctx(), module)
    assert info.value.format() == "model.py:3:8: error: func.call callee @missing is not a func.func in scope"


RECURSIVE = """
func.func private @loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
"""


def test_recursion_is_left_in_place_or_strict_error() -> None:
    module = _run(RECURSIVE)
    fs = _funcs(module)
    assert _calls(fs["forward"]) == ["loop"] and _calls(fs["loop"]) == ["loop"]
    with pytest.raises(PassError, match="cannot inline the call to @loop: it is recursive"):
        _run(RECURSIVE, strict=True)


def test_only_inlined_private_functions_are_removed() -> None:
    text = """
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func private @never_called(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @public(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func private @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  dycl.return %x : tensor<4xf32>
}
func.func @entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @public(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @forward(%b) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %c : tensor<4xf32>
}
"""
    module = _run(text)
    assert list(_funcs(module)) == ["never_called", "public", "forward", "entry"]
    assert _calls(_funcs(module)["entry"]) == []
    kept = _run(text, remove_dead_callees=False)
    assert list(_funcs(kept)) == ["helper", "never_called", "public", "forward", "entry"]


def test_refined_result_feeding_an_exact_use_is_left() -> None:
    # `@refine` returns a tensor<4xf32> as `!dycl.any`; func.return of the caller
    # checks types exactly, so the call stays; a dycl op may take the refined value.
    text = """
func.func private @refine(%a: tensor<4xf32>) -> !dycl.any {
  dycl.return %a : tensor<4xf32>
}
func.func @forward(%x: tensor<4xf32>) -> (!dycl.any, !dycl.any) {
  %p = func.call @refine(%x) : (tensor<4xf32>) -> !dycl.any
  %q = func.call @refine(%x) : (tensor<4xf32>) -> !dycl.any
  %r = dycl.call_function "torch.relu"(%q) : (!dycl.any) -> !dycl.any
  func.return %p, %r : !dycl.any, !dycl.any
}
"""
    module = _run(text)
    assert _calls(_funcs(module)["forward"]) == ["refine"]
    with pytest.raises(PassError, match="a value it returns has a different type"):
        _run(text, strict=True)


def test_control_flow_callee_stays_out_of_tensor_regions() -> None:
    text = """
func.func private @branchy(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = dycl.if %c -> (tensor<4xf32>) {
    dycl.yield %a : tensor<4xf32>
  } else {
    %b = dycl.call_module "fc"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
func.func private @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dycl.call_module "fc"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func @forward(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %t = dycl.tensor_region -> (tensor<4xf32>) {
    %y = func.call @branchy(%x, %c) : (tensor<4xf32>, i1) -> tensor<4xf32>
    %z = func.call @plain(%y) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %z : tensor<4xf32>
  }
  dycl.return %t : tensor<4xf32>
}
"""
    module = _run(text)
    assert _calls(_funcs(module)["forward"]) == ["branchy"]
    assert "plain" not in _funcs(module)


# ------------------------------------------------------------------ differential


class _Return(Exception):
    def __init__(self, values: list[Any]):
        self.values = values


def _eval_block(block: Block, env: dict[SSAValue, Any], funcs: dict[str, func.FuncOp]) -> list[Any]:
    """Runs `block`; returns what its dycl.yield passes on, raises _Return on a return."""
    for op in block.ops:
        if isinstance(op, arith.ConstantOp):
            assert isinstance(op.value, IntegerAttr)
            env[op.result] = op.value.value.data
        elif isinstance(op, d.CallModuleOp):
            env[op.results[0]] = (op.path.data, *(env[a] for a in op.operands))
        elif isinstance(op, d.IfOp):
            taken = op.then_region if env[op.cond] else op.else_region
            for r, v in zip(op.results, _eval_block(taken.block, env, funcs)):
                env[r] = v
        elif isinstance(op, func.CallOp):
            results = _call(funcs[op.callee.root_reference.data], [env[a] for a in op.arguments], funcs)
            for r, v in zip(op.results, results):
                env[r] = v
        elif isinstance(op, d.YieldOp):
            return [env[v] for v in op.values]
        elif isinstance(op, (d.ReturnOp, func.ReturnOp)):
            raise _Return([env[v] for v in op.operands])
        else:
            raise AssertionError(f"the test interpreter does not know {op.name}")
    raise AssertionError("block without terminator")


def _call(f: func.FuncOp, args: list[Any], funcs: dict[str, func.FuncOp]) -> list[Any]:
    env: dict[SSAValue, Any] = dict(zip(f.body.block.args, args))
    try:
        _eval_block(f.body.block, env, funcs)
    except _Return as r:
        return r.values
    raise AssertionError("function did not return")


class _Gen:
    """Random callee bodies: module calls, nested ifs with or without a result,
    branches that fall through or return early."""

    CONDS = 3

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.n = 0
        self.lines: list[str] = []

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("  " * indent + line)

    def compute(self, indent: int, cur: str) -> str:
        v = self.fresh()
        self.emit(indent, f'{v} = dycl.call_module "m{self.n}"({cur}) : (tensor<4xf32>) -> tensor<4xf32>')
        return v

    def body(self, indent: int, depth: int, cur: str) -> str:
        """Statements; returns the current value at the end."""
        for _ in range(self.rng.randint(0, 3)):
            if depth < 3 and self.rng.random() < 0.5:
                cur = self.if_(indent, depth, cur)
            else:
                cur = self.compute(indent, cur)
        return cur

    def if_(self, indent: int, depth: int, cur: str) -> str:
        cond = f"%c{self.rng.randrange(self.CONDS)}"
        has_result = self.rng.random() < 0.5
        result = self.fresh() if has_result else None
        head = f"{result} = dycl.if {cond} -> (tensor<4xf32>) {{" if result else f"dycl.if {cond} {{"
        self.emit(indent, head)
        for i in range(2):
            if i:
                self.emit(indent, "} else {")
            end = self.body(indent + 1, depth + 1, cur)
            if self.rng.random() < 0.35:
                self.emit(indent + 1, f"dycl.return {end} : tensor<4xf32>")
            elif has_result:
                self.emit(indent + 1, f"dycl.yield {end} : tensor<4xf32>")
            else:
                self.emit(indent + 1, "dycl.yield")
        self.emit(indent, "}")
        return result or cur

    def program(self) -> str:
        args = ", ".join(f"%c{i}: i1" for i in range(self.CONDS))
        types = ", ".join(["tensor<4xf32>"] + ["i1"] * self.CONDS)
        operands = ", ".join(["%x"] + [f"%c{i}" for i in range(self.CONDS)])
        self.emit(0, f"func.func private @callee(%x: tensor<4xf32>, {args}) -> tensor<4xf32> {{")
        end = self.body(1, 0, "%x")
        terminator = "func.return" if self.rng.random() < 0.5 else "dycl.return"
        self.emit(1, f"{terminator} {end} : tensor<4xf32>")
        self.emit(0, "}")
        self.emit(0, f"func.func @forward(%x: tensor<4xf32>, {args}) -> tensor<4xf32> {{")
        self.emit(1, f"%y = func.call @callee({operands}) : ({types}) -> tensor<4xf32>")
        self.emit(1, "%z = func.call @callee(%y, %c2, %c1, %c0) : " f"({types}) -> tensor<4xf32>")
        self.emit(1, '%w = dycl.call_module "after"(%z) : (tensor<4xf32>) -> tensor<4xf32>')
        self.emit(1, "dycl.return %w : tensor<4xf32>")
        self.emit(0, "}")
        return "\n".join(self.lines)


@pytest.mark.parametrize("seed", range(150))
def test_inlining_keeps_what_the_caller_computes(seed: int) -> None:
    text = _Gen(random.Random(seed)).program()
    before = _parse(text)
    after = _run(text)
    fs_before, fs_after = _funcs(before), _funcs(after)
    assert list(fs_after) == ["forward"], text
    assert _calls(fs_after["forward"]) == []
    for conds in itertools.product((0, 1), repeat=_Gen.CONDS):
        args = ["x", *conds]
        expected = _call(fs_before["forward"], args, fs_before)
        got = _call(fs_after["forward"], args, fs_after)
        assert got == expected, f"{conds}\n{text}"
