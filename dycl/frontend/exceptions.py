"""`try` statements: compiled as their body when the body cannot raise at run time.

For the compiled shapes, what can fail in eager at run time is what depends on
tensor values: an index read from data (`x[int(i)]`, an embedding lookup, a
gather), converting NaN to an int, a division by a host integer, a bound on a
loop. A `try` whose body holds none of these — and no `raise`, no untranslatable
code (fallback regions inside a `try` would raise past its handlers) — runs its
body, `else` and `finally` blocks in order, exactly as eager does on every input.
Anything else is left whole to the frontend's fallback (the `try` runs as Python).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Operation

from dycl.dialects import dycl as d
from dycl.frontend.restructure import contains_exit

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

# Calls that may raise depending on tensor values (indices, factorizations, casts).
_DATA_DEPENDENT_FAILURES = {
    "embedding", "embedding_bag", "gather", "scatter", "scatter_add", "scatter_reduce", "index_select",
    "index_add", "index_copy", "index_fill", "index_put", "take", "take_along_dim", "one_hot", "multinomial",
    "cholesky", "inverse", "inv", "solve", "bincount", "repeat_interleave", "item", "tolist", "nonzero",
}
_MODULES_THAT_INDEX = ("Embedding", "EmbeddingBag")
_CONSTANT_OPS = ("arith.constant", "dycl.constant")
_EXITS = (ast.Return, ast.Break, ast.Continue)


def _may_fail(op: Operation, lowerer: Lowerer) -> str | None:
    """Why `op` may raise at run time for some tensor values, or None."""
    if isinstance(op, d.RaiseOp):
        return f"it raises {op.exception.data.removeprefix('builtins.')}"
    if isinstance(op, d.ItemOp) and op.results[0].type == i64:
        return "an int read from a tensor (NaN cannot convert)"
    if isinstance(op, d.WhileOp) and op.properties.get("max_iterations") is not None:
        return "a loop with an iteration guard"
    if isinstance(op, (d.CallFunctionOp, d.CallMethodOp)):
        name = (op.target.data if isinstance(op, d.CallFunctionOp) else op.method.data).rpartition(".")[2]
        if name in _DATA_DEPENDENT_FAILURES:
            return f"'{name}', which fails on some tensor values"
        if name == "getitem" and any(v.owner is None or v.owner.name not in _CONSTANT_OPS + ("dycl.make_tuple",)
                                     for v in op.operands[1:]):
            return "indexing with a value computed at run time"
        if name in ("truediv", "floordiv", "mod") and op.operands[1].type == i64:
            return "a division by a host integer"
        if isinstance(op, d.CallFunctionOp) and op.target.data.startswith("builtins.") and name not in (
                "getattr", "slice", "len", "isinstance", "dict"):
            return f"the Python builtin '{name}'"
    if isinstance(op, d.CallModuleOp):
        module = lowerer.model.get_submodule(op.path.data)
        if type(module).__name__ in _MODULES_THAT_INDEX:
            return f"'{op.path.data}' ({type(module).__name__}), which fails on out-of-range indices"
    return None


class TryLowering:
    """Mixin of Lowerer: `try`/`except`/`else`/`finally`."""

    def lower_try(self: Lowerer, s: ast.Try, scope: _Scope) -> None:
        body, tail = s.body, s.orelse + s.finalbody
        # A return may end the body (then neither else nor finally may exist); other exits
        # would have to run the finally block or skip the else block on the way out.
        exits_at_end = isinstance(body[-1], ast.Return) and not tail
        if contains_exit(body[:-1] if exits_at_end else body, _EXITS) or contains_exit(tail, _EXITS):
            raise self.unsupported(s, "try/except with return, break or continue inside")
        mark = self._mark()
        saved = self.fallback
        self.fallback = "none"  # an untranslatable statement makes the whole try a region
        try:
            self._lower_body(body, scope)
            if not scope.terminated:
                self._lower_body(s.orelse, scope)
        finally:
            self.fallback = saved
        ops = list(self.block.ops)
        start = ops.index(mark) + 1 if mark is not None else 0
        for top in ops[start:]:
            for op in top.walk():
                if (why := _may_fail(op, self)) is not None:
                    raise self.unsupported(s, f"try/except whose body may raise at run time ({why})")
        if not scope.terminated:
            self._lower_body(s.finalbody, scope)
