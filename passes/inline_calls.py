"""inline-calls: inline `func.call`s of non-subgraph functions of the same module."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from dycl.diagnostics import PassError
from dycl.passes.eliminate_early_exits import eliminate_early_returns, refines_into_exact_use
from dycl.symbols import lookup_symbol
from dycl.dialects import dycl as d

# Ops whose verifier wants operand types to equal a signature exactly: a value
# refined from `!dycl.any` to a concrete type must not flow into them.
_EXACT_TYPE_USERS: tuple[type[Operation], ...] = (func.CallOp, func.ReturnOp, d.CallSubgraphOp)


def _callee_name(call: func.CallOp) -> str:
    return call.callee.root_reference.data


def _lookup(call: func.CallOp) -> func.FuncOp | None:
    callee = lookup_symbol(call, call.callee)
    return callee if isinstance(callee, func.FuncOp) else None


def recursive_functions(module: ModuleOp) -> set[func.FuncOp]:
    """The functions that can reach themselves through `func.call`s (directly or
    mutually); calls to them are never inlined, so inlining always terminates."""
    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp)]
    edges: dict[func.FuncOp, set[func.FuncOp]] = {
        f: {c for call in f.walk() if isinstance(call, func.CallOp) and (c := _lookup(call)) is not None}
        for f in funcs
    }
    # On a call-graph cycle = in a strongly connected component with an edge
    # inside it (Tarjan's algorithm, iterative; a DFS per function was quadratic).
    recursive: set[func.FuncOp] = set()
    index: dict[func.FuncOp, int] = {}
    low: dict[func.FuncOp, int] = {}
    on_stack: set[func.FuncOp] = set()
    stack: list[func.FuncOp] = []
    for root in funcs:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            f, it = work[-1]
            g = next(it, None)
            if g is not None:
                if g not in edges:
                    continue  # not a function of this module's walk
                if g not in index:
                    index[g] = low[g] = len(index)
                    stack.append(g)
                    on_stack.add(g)
                    work.append((g, iter(edges[g])))
                elif g in on_stack:
                    low[f] = min(low[f], index[g])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[f])
            if low[f] == index[f]:
                component = []
                while True:
                    g = stack.pop()
                    on_stack.discard(g)
                    component.append(g)
                    if g is f:
                        break
                if len(component) > 1 or f in edges[f]:
                    recursive.update(component)
    return recursive


@dataclass
class InlineCall(RewritePattern):
    """`%r = func.call @f(%a)` → the body of `@f` with `%a` for its arguments."""

    recursive: set[func.FuncOp]
    strict: bool
    inlined: set[func.FuncOp] = field(default_factory=lambda: set[func.FuncOp]())

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        callee = _lookup(op)
        if callee is None:
            raise PassError(f"func.call callee @{_callee_name(op)} is not a func.func in scope", op)
        if d.SUBGRAPH_ATTR in callee.attributes:
            return
        prepared = self._prepare(op, callee)
        if isinstance(prepared, str):
            if self.strict:
                raise PassError(f"cannot inline the call to @{_callee_name(op)}: {prepared}", op)
            return
        body = prepared.body.block
        term = body.last_op
        assert term is not None
        rewriter.inline_block(body, InsertPoint.before(op), op.arguments)
        values = list(term.operands)
        rewriter.erase(term)
        rewriter.replace(op, [], values)
        prepared.erase()
        self.inlined.add(callee)

    def _prepare(self, op: func.CallOp, callee: func.FuncOp) -> func.FuncOp | str:
        """A detached copy of `callee` ready to inline at `op`, or why there is none."""
        if callee in self.recursive:
            return "it is recursive"
        if not callee.body.blocks:
            return "it has no body"
        if len(callee.body.blocks) != 1:
            return "its body has more than one block"
        if len(op.arguments) != len(callee.body.block.args) or len(op.res) != len(
            callee.function_type.outputs
        ):
            return "the call does not match its signature"
        copy = callee.clone()
        reason = self._check(op, copy)
        if reason is not None:
            copy.erase()
            return reason
        return copy

    @staticmethod
    def _check(op: func.CallOp, copy: func.FuncOp) -> str | None:
        body = copy.body.block
        reason = eliminate_early_returns(body, list(copy.function_type.outputs))
        if reason is not None:
            return reason
        term = body.last_op
        if not isinstance(term, (func.ReturnOp, d.ReturnOp)):
            return "its body does not end with func.return or dycl.return"
        values = list(term.operands)
        if len(values) != len(op.res):
            return "it returns a different number of values than the call has results"
        if any(refines_into_exact_use(old, new, _EXACT_TYPE_USERS) for old, new in zip(op.res, values)):
            return "a value it returns has a different type than the call's result"
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, d.TensorRegionOp):
            parent = parent.parent_op()
        if parent is not None and any(
            isinstance(inner, d.HOST_ONLY_OPS) for o in body.ops if o is not term for inner in o.walk()
        ):
            return "its body has host operations and the call is inside a dycl.tensor_region"
        return None


def _symbol_refs(attr: Attribute) -> list[str]:
    if isinstance(attr, SymbolRefAttr):
        return [attr.root_reference.data]
    if isinstance(attr, ArrayAttr):
        return [name for a in attr.data for name in _symbol_refs(a)]
    if isinstance(attr, DictionaryAttr):
        return [name for a in attr.data.values() for name in _symbol_refs(a)]
    return []


def _referenced_symbols(op: Operation) -> set[str]:
    """Symbols referenced by `op` or anything nested in it."""
    used: set[str] = set()
    for inner in op.walk():
        for attr in (*inner.properties.values(), *inner.attributes.values()):
            used.update(_symbol_refs(attr))
    return used


def is_removable(f: func.FuncOp) -> bool:
    """Only private helpers may go: `@forward`, public entry points and
    sub-DNNs stay whatever uses they have."""
    return (
        f.sym_visibility is not None
        and f.sym_visibility.data == "private"
        and f.sym_name.data != "forward"
        and d.SUBGRAPH_ATTR not in f.attributes
    )


@dataclass(frozen=True)
class InlineCallsPass(ModulePass):
    """Inlines `func.call`s of functions defined in the same module.

    The frontend emits a helper whose body translates on its own (a submodule's
    forward, a method, a function) as a private `func.func` per compile-time
    specialisation, called with `func.call` (dycl/frontend/outlining.py); this
    pass inlines those, and calls in IR from elsewhere (hand-written, other importers).

    Expects: verified dycl IR; callees are single-block `func.func`s of the
    module (their body may hold `dycl.if`/`dycl.for`/`dycl.while`) ending with
    `func.return` or `dycl.return`. A call whose callee is missing or is not a
    `func.func` is a located error (the verifier reports it first under dycl-opt).

    Guarantees: every `func.call` to a callee without `dycl.subgraph` is replaced
    by a copy of the callee's body, the arguments substituted and the returned
    values taking the place of the call's results (the inlined ops keep the
    callee's source locations); calls in the inlined bodies are inlined too.
    An early `dycl.return` nested in the callee's `dycl.if`s returns from the
    callee, not the caller: that if absorbs the callee code after it (copied into
    each of its branches that falls through, so code may grow) and yields what
    the callee returns, and the caller's code after the call runs on every path.
    Calls stay in place, legal IR and no diagnostic, when inlining them cannot be
    expressed:
      - the callee is recursive (directly or mutually, found on the call graph
        before inlining, so the pass always terminates); calls from a recursive
        function to non-recursive ones are still inlined;
      - the callee returns early from inside a `dycl.for`/`dycl.while` (or any op
        other than `dycl.if`), which structured control flow cannot express;
      - the callee is a declaration or has several blocks;
      - a value declared `!dycl.any`/`!dycl.pyobj` (the call's result, or a
        result of an if that absorbs code) would take the narrower type of
        what is returned or yielded while an op that checks types exactly
        (`func.return`, `func.call`, `dycl.call_subgraph`) uses it;
      - the call is in a `dycl.tensor_region` and the callee has host operations
        (control flow, host reads).
    Calls to sub-DNNs (`dycl.subgraph`) are never inlined.

    Options:
      - `remove-dead-callees` (default true): afterwards, erase the functions
        that were inlined and have no symbol use left (uses from inside the
        function itself do not count); only `sym_visibility = "private"`
        functions go, never `@forward`, a public entry point or a sub-DNN.
      - `strict` (default false): a call left in place is a located error
        ("cannot inline the call to @f: it is recursive") instead.
    """

    name = "inline-calls"

    remove_dead_callees: bool = True
    strict: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = InlineCall(recursive_functions(op), self.strict)
        PatternRewriteWalker(pattern, apply_recursively=True).rewrite_module(op)
        if not self.remove_dead_callees:
            return
        top_level = op.body.block
        candidates = {f for f in pattern.inlined if f.parent is top_level and is_removable(f)}
        refs: dict[Operation, set[str]] = {top: _referenced_symbols(top) for top in top_level.ops}
        refs[op] = {n for a in (*op.properties.values(), *op.attributes.values()) for n in _symbol_refs(a)}
        # Reference counts and a worklist: rescanning every function per removal was cubic.
        own = {top: top.sym_name.data if isinstance(top, func.FuncOp) else None for top in refs}
        users: dict[str, int] = {}
        for top, used in refs.items():
            for name in used:
                if name != own[top]:
                    users[name] = users.get(name, 0) + 1
        by_name = {f.sym_name.data: f for f in candidates}
        work = [f for f in candidates if not users.get(f.sym_name.data)]
        while work:
            f = work.pop()
            name = f.sym_name.data
            if by_name.pop(name, None) is None:
                continue
            for used in refs.pop(f):
                if used != name:
                    users[used] -= 1
                    if not users[used] and used in by_name:
                        work.append(by_name[used])
            f.detach()
            f.erase()
