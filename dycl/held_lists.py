"""Lists the host holds at run time (`!dycl.list`), as shape inference sees them.

A data-dependent loop that appends (`tokens.append(t.item())`, `outs.append(logits)`)
makes a list whose length only the run time knows. Shape inference holds it as
one element value standing for all of them; a call that takes the list
(`torch.tensor(tokens)`, `torch.stack(outs, 1)`) runs on the host, and what it
gives is found by running it on lists of one and of two elements: a size that
differs between the two is the list's length, a dynamic dimension.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute

from dycl.dialects import dycl as d
from dycl.types import type_of_value


@dataclass(frozen=True)
class HeldList:
    """A run-time list: `element` stands for each of its elements (a fake tensor
    or an unknown scalar), None while every path seen leaves it empty. `is_tuple`:
    a tuple the code grows in a loop (`scores += (s,)`), held alike."""

    element: Any
    is_tuple: bool = False


def holds_list(args: Any) -> bool:
    return any(isinstance(a, HeldList) for a in args)


def element_type(element: Any, type_of: Callable[[Any], Attribute]) -> Attribute:
    return d.ANY if element is None else type_of(element)


def appended(held: HeldList, value: Any, type_of: Callable[[Any], Attribute],
             empty: Callable[[TensorType], Any]) -> HeldList:
    """`held` after appending `value`: one element type for all, a tensor whose
    size differs from the earlier elements' with that dimension dynamic."""
    if held.element is None:
        return HeldList(value, held.is_tuple)
    old, new = type_of(held.element), type_of(value)
    if old == new:
        return held
    if isinstance(old, TensorType) and isinstance(new, TensorType) and old.element_type == new.element_type \
            and len(old.get_shape()) == len(new.get_shape()):
        return HeldList(empty(TensorType(old.element_type, [a if a == b else DYNAMIC_INDEX for a, b in
                                                            zip(old.get_shape(), new.get_shape())])), held.is_tuple)
    raise TypeError(f"a {new} appended to a list of {old}")


def on_lists(fn: Any, args: list[Any], kwargs: dict[str, Any], stand_in: Callable[[Any], Any],
             run: Callable[[Any, list[Any], dict[str, Any]], Any], sizes: tuple[int, ...] = (1, 2)) -> tuple[Any, ...]:
    """`fn`'s results with each held list `sizes` elements long, one run a size
    (`stand_in` gives a value for an unknown one, an element or another argument)."""
    def concrete(v: Any, n: int) -> Any:
        if not isinstance(v, HeldList):
            return stand_in(v)
        items = [] if v.element is None or n == 0 else [stand_in(v.element)] * n
        return tuple(items) if v.is_tuple else items

    return tuple(run(fn, [concrete(a, n) for a in args], {k: concrete(v, n) for k, v in kwargs.items()})
                 for n in sizes)


def joined_result(one: Any, two: Any, empty: Callable[[TensorType], Any], unknown: Callable[[Attribute], Any],
                  element: Any = None) -> Any:
    """What a call on a held list gives, from its results on one and two elements:
    a tensor whose sizes that differ are dynamic, an unknown scalar, or another
    held list of the same elements (`tokens[-3:]`, `list(tokens)`)."""
    if type(one) is list and type(two) is list:
        return HeldList(element if one or two else None)
    if type(one) is tuple and type(two) is tuple and len(one) != len(two) and not all(isinstance(x, torch.Tensor) for x in two):
        raise TypeError("it gives a tuple of elements that are not all tensors")
    if type(one) is tuple and type(two) is tuple and len(one) != len(two):  # `scores + (s,)`: the held tuple, its elements joined
        held = HeldList(element, is_tuple=True)
        for x in two:
            held = appended(held, x, type_of_value, empty)
        return held
    if isinstance(one, torch.Tensor) and isinstance(two, torch.Tensor):
        a, b = type_of_value(one), type_of_value(two)
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        if a.element_type != b.element_type or len(a.get_shape()) != len(b.get_shape()):
            raise TypeError("its result type depends on the list's length")
        return empty(TensorType(a.element_type, [x if x == y else DYNAMIC_INDEX
                                                 for x, y in zip(a.get_shape(), b.get_shape())]))
    t = type_of_value(one)
    if type(one) in (bool, int, float) and type(two) is type(one):
        return unknown(t)
    raise TypeError(f"it gives a {type(one).__name__}, not a tensor or a number")
