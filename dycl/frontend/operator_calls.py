"""Calls that are statements: `operator.setitem(h, 0, v)` is `h[0] = v`,
`operator.iadd(h, 1)`, `h.__iadd__(1)` and `torch.Tensor.__iadd__(h, 1)` are
`h += 1` on a tensor or a list (a number, a tuple or a string is not changed:
the call's value is the sum). As calls, their unused results were dropped with
the change they make."""

from __future__ import annotations

import ast
import operator
from typing import Any

import torch

IN_PLACE_OPS: dict[str, type[ast.operator]] = {
    "__iadd__": ast.Add, "__isub__": ast.Sub, "__imul__": ast.Mult, "__itruediv__": ast.Div,
    "__ifloordiv__": ast.FloorDiv, "__imod__": ast.Mod, "__ipow__": ast.Pow, "__iand__": ast.BitAnd,
    "__ior__": ast.BitOr, "__ixor__": ast.BitXor, "__ilshift__": ast.LShift, "__irshift__": ast.RShift,
    "__imatmul__": ast.MatMult,
}
STATEMENT_DUNDERS = frozenset({*IN_PLACE_OPS, "__setitem__", "__delitem__"})


def _dunder(name: str) -> str:
    return name if name.startswith("__") else f"__{name}__"


# The functions (not methods) that stand for such a statement, by the dunder they call.
_FUNCTIONS: dict[int, str] = {}
for _name in STATEMENT_DUNDERS:
    _FUNCTIONS[id(getattr(operator, _name))] = _name
    if hasattr(torch.Tensor, _name):
        _FUNCTIONS[id(getattr(torch.Tensor, _name))] = _name
for _name in ("setitem", "delitem", *(n.strip("_") for n in IN_PLACE_OPS)):
    _FUNCTIONS[id(getattr(operator, _name))] = _dunder(_name)


def statement_function(obj: Any) -> str | None:
    """The dunder `obj` calls on its first argument, where `obj` is one of the
    functions above (`operator.iadd`, `torch.Tensor.__setitem__`)."""
    return _FUNCTIONS.get(id(obj))


def as_statement(dunder: str, target: ast.expr, args: list[ast.expr], like: ast.AST) -> ast.stmt:
    """The statement `target.<dunder>(*args)` performs."""
    def place(node: ast.AST) -> Any:
        return ast.copy_location(node, like)

    if dunder == "__setitem__":
        key, value = args
        return place(ast.Assign([place(ast.Subscript(target, key, ast.Store()))], value))
    if dunder == "__delitem__":
        (key,) = args
        return place(ast.Delete([place(ast.Subscript(target, key, ast.Del()))]))
    (value,) = args
    store = place(type(target)(**{**{f: getattr(target, f) for f in target._fields}, "ctx": ast.Store()}))
    return place(ast.AugAssign(store, IN_PLACE_OPS[dunder](), value))
