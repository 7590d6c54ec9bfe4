"""AST rewrites that turn early exits (return/break/continue) into nested branches.

After `restructure(stmts, kinds)`, an exit statement of one of `kinds` only ever
ends a branch: whatever followed it on the fall-through path has moved into the
other branch. Exits of nested loops are left alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

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
