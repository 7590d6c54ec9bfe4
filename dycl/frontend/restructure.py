"""AST rewrites that turn early exits (return/break/continue) into nested branches.

After `restructure(stmts, kinds)`, an exit statement of one of `kinds` only ever
ends a branch: whatever followed it on the fall-through path has moved into the
other branch. Exits of nested loops are left alone.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Collection, Iterator, Sequence

_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_TERMINATORS = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def walk_same_loop(stmts: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """Like ast.walk, but does not enter nested loops' bodies (their break/continue)."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _LOOPS):
            stack.extend(n for n in ast.walk(node) if isinstance(n, ast.Return))
            stack.extend(node.orelse)  # (its `else:` block is the enclosing loop's code)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def contains_exit(stmts: Sequence[ast.stmt], kinds: tuple[type[ast.stmt], ...]) -> bool:
    return any(isinstance(n, kinds) for n in walk_same_loop(stmts))


def always_exits(stmts: Sequence[ast.stmt]) -> bool:
    """Every path through `stmts` ends in return/break/continue/raise."""
    for s in stmts:
        if isinstance(s, _TERMINATORS):
            return True
        if isinstance(s, ast.If) and always_exits(s.body) and always_exits(s.orelse):
            return True
    return False


def restructure(
    stmts: Sequence[ast.stmt],
    kinds: tuple[type[ast.stmt], ...],
    replace: Callable[[ast.stmt], list[ast.stmt]] | None = None,
) -> list[ast.stmt]:
    """Move fall-through code into the non-exiting branches; `replace` rewrites exits."""
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, _LOOPS) and s.orelse and contains_exit(s.orelse, kinds):
            # `for ...: ... break` / `else: continue`: the else block as an `if` after the
            # loop, on a flag its breaks clear, so its exit can move the code after it.
            return out + restructure([*loop_else_as_if(s), *stmts[i + 1 :]], kinds, replace)
        if isinstance(s, ast.If) and contains_exit([s], kinds):
            rest = list(stmts[i + 1 :])
            body = s.body if always_exits(s.body) else s.body + rest
            orelse = s.orelse if always_exits(s.orelse) else s.orelse + rest
            new = ast.If(test=s.test, body=restructure(body, kinds, replace), orelse=restructure(orelse, kinds, replace))
            out.append(ast.copy_location(new, s))
            return out
        if isinstance(s, kinds):
            out.extend(replace(s) if replace is not None else [s])
            return out
        out.append(s)
        if isinstance(s, _TERMINATORS):
            return out
    return out


def loop_else_as_if(loop: ast.For | ast.While | ast.AsyncFor) -> list[ast.stmt]:
    """`loop ... else: E` as `flag = True; loop (each own break: flag = False) ;
    if flag: E`: the else block runs when no break left the loop, as in Python."""
    flag = f"__dycl_no_break_{loop.lineno}_{loop.col_offset}"
    new = ast.copy_location(type(loop)(**{f: getattr(loop, f) for f in loop._fields}), loop)
    new.body, new.orelse = _clear_on_break(loop.body, flag), []
    test = ast.copy_location(ast.Name(id=flag, ctx=ast.Load()), loop)
    return [_set(flag, True, loop), new, ast.copy_location(ast.If(test=test, body=list(loop.orelse), orelse=[]), loop)]


def _clear_on_break(stmts: Sequence[ast.stmt], flag: str) -> list[ast.stmt]:
    """Each `break` of this loop (not of a nested one) preceded by `flag = False`."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Break):
            out += [_set(flag, False, s), s]
            continue
        if isinstance(s, (ast.If, ast.With, ast.Try, *_LOOPS)):
            s = copy.copy(s)
            for field in ("body", "orelse", "finalbody") if not isinstance(s, _LOOPS) else ("orelse",):
                if hasattr(s, field):
                    setattr(s, field, _clear_on_break(getattr(s, field), flag))
            if isinstance(s, ast.Try):
                s.handlers = [ast.copy_location(ast.ExceptHandler(h.type, h.name, _clear_on_break(h.body, flag)), h)
                              for h in s.handlers]
        out.append(s)
    return out


def guard_breaks(stmts: Sequence[ast.stmt], flag: str) -> list[ast.stmt]:
    """`break` becomes `flag = True`; code after a statement that may break runs under `if not flag`.

    Unlike `restructure`, nothing is copied: the paths join after each `if`.
    """
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Break):
            out.append(_set(flag, True, s))
            return out
        if isinstance(s, ast.If) and contains_exit([s], (ast.Break,)):
            new = ast.If(test=s.test, body=guard_breaks(s.body, flag), orelse=guard_breaks(s.orelse, flag))
            out.append(ast.copy_location(new, s))
            rest = stmts[i + 1 :]
            if rest:
                out.append(unless(flag, guard_breaks(rest, flag), rest[0]))
            return out
        out.append(s)
        if isinstance(s, _TERMINATORS):
            return out
    return out


def _set(flag: str, value: bool, like: ast.AST) -> ast.stmt:
    target = ast.copy_location(ast.Name(id=flag, ctx=ast.Store()), like)
    return ast.copy_location(ast.Assign(targets=[target], value=ast.copy_location(ast.Constant(value), like)), like)


def init_flag(flag: str, like: ast.AST) -> ast.stmt:
    return _set(flag, False, like)


def unless(flag: str, body: list[ast.stmt], like: ast.AST) -> ast.stmt:
    """`if not flag: body`."""
    test = ast.UnaryOp(op=ast.Not(), operand=ast.copy_location(ast.Name(id=flag, ctx=ast.Load()), like))
    return ast.copy_location(ast.If(test=ast.copy_location(test, like), body=body, orelse=[]), like)


def _returns_in(node: ast.AST) -> bool:
    """A `return` of this function inside `node` (nested functions aside)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _name(id_: str, like: ast.AST, store: bool = False) -> ast.Name:
    return ast.copy_location(ast.Name(id=id_, ctx=ast.Store() if store else ast.Load()), like)


def _assign(target: str, value: ast.expr, like: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Assign(targets=[_name(target, like, True)], value=value), like)


RETURN_SLOT = "__dycl_ret_"  # the name prefix of the value an early return from a loop leaves


def lift_loop_returns(stmts: Sequence[ast.stmt], counter: list[int] | None = None) -> list[ast.stmt]:
    """`return v` inside a loop becomes `ret = (v,); returned = True; break` (and a
    `break` out of each enclosing loop), followed after the outermost loop by
    `if returned: return ret[0]`: an early exit from a loop in terms of `break`,
    which the loop lowering handles. `ret` starts as None, a value never read
    (`UNSET_ATTR` on its constant where a loop carries it)."""
    counter = counter if counter is not None else [0]
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, _LOOPS) and _returns_in(s):
            k = counter[0]
            counter[0] += 1
            flag, ret = f"__dycl_returned_{k}", f"{RETURN_SLOT}{k}"
            out.append(_assign(flag, ast.copy_location(ast.Constant(False), s), s))
            out.append(_assign(ret, ast.copy_location(ast.Constant(None), s), s))
            out.append(_lift_loop(s, flag, ret))
            item = ast.copy_location(ast.Subscript(value=_name(ret, s), slice=ast.copy_location(ast.Constant(0), s),
                                                   ctx=ast.Load()), s)
            back = ast.copy_location(ast.Return(value=item), s)
            out.append(ast.copy_location(ast.If(test=_name(flag, s), body=[back], orelse=[]), s))
        elif isinstance(s, ast.If):
            out.append(ast.copy_location(ast.If(test=s.test, body=lift_loop_returns(s.body, counter),
                                                orelse=lift_loop_returns(s.orelse, counter)), s))
        else:
            out.append(s)
    return out


def _lift_loop(loop: ast.For | ast.While | ast.AsyncFor, flag: str, ret: str) -> ast.stmt:
    new = ast.copy_location(type(loop)(**{f: getattr(loop, f) for f in loop._fields}), loop)
    new.body = _lift_body(loop.body, flag, ret)
    return new


def _lift_body(stmts: Sequence[ast.stmt], flag: str, ret: str) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Return):
            value = s.value if s.value is not None else ast.copy_location(ast.Constant(None), s)
            # (in a 1-tuple: the slot, None until a return sets it, holds a Python object
            # on every path; its item after the loop has the returned value's own type)
            boxed = ast.copy_location(ast.Tuple(elts=[value], ctx=ast.Load()), s)
            out += [_assign(ret, boxed, s), _assign(flag, ast.copy_location(ast.Constant(True), s), s),
                    ast.copy_location(ast.Break(), s)]
            return out  # the rest of the block is dead
        if isinstance(s, _LOOPS) and _returns_in(s):
            out.append(_lift_loop(s, flag, ret))
            leave = ast.copy_location(ast.Break(), s)
            out.append(ast.copy_location(ast.If(test=_name(flag, s), body=[leave], orelse=[]), s))
        elif isinstance(s, ast.If) and _returns_in(s):
            out.append(ast.copy_location(ast.If(test=s.test, body=_lift_body(s.body, flag, ret),
                                                orelse=_lift_body(s.orelse, flag, ret)), s))
        else:
            out.append(s)  # a `return` inside with/try stays: the frontend falls back for it
    return out


_CONDITIONAL = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def hoist_walrus(stmts: Sequence[ast.stmt], builtins: Collection[str] = ()) -> list[ast.stmt]:
    """`if (s := x.sum()) > 0:` as `s = x.sum()` before `if s > 0:`: assignment
    expressions evaluated whenever their statement is (not under `and`/`or`, a
    conditional expression, a lambda or a comprehension, nor in a `while` test).
    So are `any(...)`/`all(...)` of a generator (where `builtins` holds the name): a
    loop that stops at the first item that decides them, as Python's do (later items'
    side effects and errors never run)."""
    out: list[ast.stmt] = []
    for s in stmts:
        fields = {ast.If: ("test",), ast.Assign: ("value",), ast.AnnAssign: ("value",), ast.Expr: ("value",),
                  ast.Return: ("value",), ast.AugAssign: ("value",)}.get(type(s), ())
        hoisted: list[ast.stmt] = []
        if not any(isinstance(n, ast.NamedExpr) or _short_circuit_call(n, builtins) is not None
                   for f in fields for n in ast.walk(getattr(s, f) or ast.Pass())):
            out.append(s)
            continue
        # Only the rewritten expression is copied (the parsed function is lowered again:
        # retries, unrolled calls): a statement nested in this one may share it (an
        # unrolled loop's next iteration), and is hoisted when it is lowered.
        s = copy.copy(s)
        for name in fields:
            value = getattr(s, name)
            if value is not None:
                setattr(s, name, _Hoister(hoisted, builtins).visit(copy.deepcopy(value)))
        out.extend(hoisted)
        out.append(s)
    return out


class _Hoister(ast.NodeTransformer):
    def __init__(self, hoisted: list[ast.stmt], builtins: Collection[str]):
        self.hoisted = hoisted
        self.builtins = builtins

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return node if isinstance(node, _CONDITIONAL) else super().generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
        value = self.visit(node.value)
        self.hoisted.append(_assign(node.target.id, value, node))
        return _name(node.target.id, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        which = _short_circuit_call(node, self.builtins)
        if which is None:
            return self.generic_visit(node)
        gen = node.args[0]
        assert isinstance(gen, ast.GeneratorExp)
        (comp,) = gen.generators
        # The generator's own names, renamed: its scope is its own, not the function's.
        names = {n.id for n in ast.walk(comp.target) if isinstance(n, ast.Name)}
        rename = _Renamed({n: f"__dycl_{which}_{node.lineno}_{node.col_offset}_{n}" for n in names})
        result = f"__dycl_{which}_{node.lineno}_{node.col_offset}"
        decided = ast.copy_location(ast.Constant(which == "any"), node)
        elt = rename.visit(copy.deepcopy(gen.elt))
        test = elt if which == "any" else ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=elt), elt)
        body: list[ast.stmt] = [ast.copy_location(ast.If(test=test, body=[
            _assign(result, decided, node), ast.copy_location(ast.Break(), node)], orelse=[]), node)]
        for cond in reversed(comp.ifs):
            body = [ast.copy_location(ast.If(test=rename.visit(copy.deepcopy(cond)), body=body, orelse=[]), cond)]
        self.hoisted.append(_assign(result, ast.copy_location(ast.Constant(which != "any"), node), node))
        self.hoisted.append(ast.copy_location(ast.For(target=rename.visit(copy.deepcopy(comp.target)),
                                                      iter=self.visit(comp.iter), body=body, orelse=[]), node))
        return _name(result, node)


def _short_circuit_call(node: ast.AST, builtins: Collection[str]) -> str | None:
    """"any" or "all" for `any(<generator>)` / `all(<generator>)` of one `for` clause."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in builtins and \
            len(node.args) == 1 and not node.keywords and isinstance(gen := node.args[0], ast.GeneratorExp) and \
            len(gen.generators) == 1 and not gen.generators[0].is_async:
        return node.func.id
    return None


class _Renamed(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self.names[node.id], ctx=node.ctx), node) \
            if node.id in self.names else node
