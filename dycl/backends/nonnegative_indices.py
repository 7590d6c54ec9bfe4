"""Whether every tensor index a torch graph subscripts with is never negative.

torch.onnx exports advanced indexing by several tensors (`w[rows, top]`) with a
flattened Gather that is wrong for negative indices, and warns so; dycl refuses such
an export unless each index is non-negative by construction: a `remainder` by a
positive size (what check-index-bounds wraps run-time indices with), `arange` from
0, `argmax`, `topk`'s or `sort`'s indices, `nonzero`, and what reshapes, converts
or selects between such values.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import torch
from torch import fx

from dycl import tensor_ops

_INDEX_MAKERS = frozenset({"argmax", "argmin", "argsort", "nonzero", "argwhere", "bincount", "numel"})
_SHAPERS = frozenset({"long", "int", "to", "type", "reshape", "view", "unsqueeze", "squeeze", "expand", "expand_as",
                      "flatten", "contiguous", "clone", "repeat", "t", "transpose", "permute", "detach",
                      "reshape_as", "view_as", "__getitem__", "repeat_interleave", "flip", "roll"})
_INDICES_AT_1 = frozenset({"topk", "sort", "max", "min", "kthvalue", "mode", "median", "cummax", "cummin"})


def _name(n: fx.Node) -> str:
    t = n.target
    return t if isinstance(t, str) else getattr(t, "__name__", "")


def nonnegative(v: Any, depth: int = 0) -> bool:
    """`v` (a graph value or a constant) is never negative."""
    if isinstance(v, bool) or isinstance(v, (int, float)) and v >= 0:
        return True
    if isinstance(v, fx.Node) and v.op == "get_attr":  # (a constant tensor the graph holds)
        try:
            t = functools.reduce(getattr, v.target.split("."), v.graph.owning_module)
        except AttributeError:
            return False
        return isinstance(t, torch.Tensor) and not t.is_complex() and bool((t >= 0).all())
    if not isinstance(v, fx.Node) or depth > 32 or v.op not in ("call_function", "call_method"):
        return False
    name, args = _name(v), v.args
    if v.target in (torch.remainder, tensor_ops.int_remainder, operator.mod) or name == "remainder":
        return len(args) == 2 and _positive(args[1])  # (Python's sign: that of the divisor)
    if name in _INDEX_MAKERS or name == "size" or v.target is getattr and args[1:] == ("shape",):
        return True  # (sizes too: `torch.arange(w.shape[0])`)
    if v.target is torch.arange or name == "arange":
        return all(nonnegative(a, depth + 1) for a in args[:2]) and (len(args) < 3 or _positive(args[2]))
    if v.target is operator.getitem and len(args) == 2 and isinstance(args[0], fx.Node) and args[1] == 1 and \
            _returns_indices(args[0]):
        return True  # (the indices of topk/sort/max(dim)...)
    if v.target is operator.getitem and len(args) == 2 and not _holds_node(args[1]):
        return nonnegative(args[0], depth + 1)  # (rows or elements of such a tensor)
    if v.op == "call_method" and name in _SHAPERS or name in ("reshape", "flatten", "unsqueeze", "squeeze"):
        return nonnegative(args[0], depth + 1)
    if v.target is torch.where and len(args) == 3:
        return nonnegative(args[1], depth + 1) and nonnegative(args[2], depth + 1)
    if v.target in (operator.add, operator.mul, torch.add, torch.mul) and len(args) == 2:
        return nonnegative(args[0], depth + 1) and nonnegative(args[1], depth + 1)
    return False


def _returns_indices(n: fx.Node) -> bool:
    """topk, sort, ... or max/min/median along a dim (not `torch.max(a, b)`): (values, indices)."""
    name = _name(n)
    if name not in _INDICES_AT_1:
        return False
    if name in ("max", "min", "median"):
        return len(n.args) > 1 and isinstance(n.args[1], int) or "dim" in n.kwargs
    return True


def _positive(v: Any) -> bool:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v > 0
    # A size from the run, where(n < 1, 1, n) (check-index-bounds' divisor: at least 1).
    return isinstance(v, fx.Node) and v.target is torch.where and len(v.args) == 3 and \
        isinstance(v.args[1], int) and v.args[1] >= 1 and _is_lt_one(v.args[0], v.args[2])


def _is_lt_one(cond: Any, value: Any) -> bool:
    return isinstance(cond, fx.Node) and cond.target is operator.lt and cond.args == (value, 1)


def _holds_node(index: Any) -> bool:
    found: list[fx.Node] = []
    fx.node.map_arg(index, found.append)
    return bool(found)


def subscripts_are_nonnegative(gm: fx.GraphModule) -> bool:
    """Every tensor index of every subscript and `index`/`index_put` in the graph is
    never negative."""
    for n in gm.graph.nodes:
        indices: list[fx.Node] = []
        if n.target is operator.getitem and len(n.args) == 2:
            fx.node.map_arg(n.args[1], indices.append)
        elif _name(n) in ("index", "index_put", "index_put_", "_index_put_impl_"):
            fx.node.map_arg(n.args[1] if len(n.args) > 1 else (), indices.append)
        if not all(nonnegative(i) for i in indices):
            return False
    return True
