"""Output objects whose class has code of its own, read at compile time through a probe.

A dataclass with a `__post_init__`, or one that is also a dict (the `ModelOutput`
of published encoders and decoders: `out.hidden_states`, `out["logits"]`,
`out[0]`, `out.to_tuple()`), cannot be modelled from its fields alone: the
class's own code decides what indexing and its methods give. So the class runs
for real at compile time, on stand-ins for the values known only at run time
(tensors of the right shape and dtype, or marker objects), and what its code
hands back is mapped from stand-ins to the lowered values. The object is built
for real on the host only where it escapes (returned, handed to Python).

It is used only when the probe gives each field back as the very stand-in it was
given (the class does not transform its fields), and for methods that read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from dycl.frontend.values import SeqVal, Static

# Methods of such an object that only read it (a dict's, and ModelOutput's to_tuple).
READING_METHODS = frozenset({"to_tuple", "keys", "values", "items", "get", "__getitem__", "__len__",
                             "__contains__", "__iter__"})
_SCALARS = (bool, int, float, str, type(None))


class _Marker:
    """Stands in for a run-time value that is not a tensor."""

    __slots__ = ()


def needs_probe(cls: type) -> bool:
    """A dataclass whose code could change what its fields read as."""
    return dataclasses.is_dataclass(cls) and (hasattr(cls, "__post_init__") or issubclass(cls, dict))


def _standin(v: Any) -> Any:
    if isinstance(v, Static):
        return v.value
    if isinstance(v, SSAValue) and isinstance(v.type, TensorType):
        from dycl.types import dtype_of

        shape = [n if n >= 0 else 1 for n in v.type.get_shape()]
        return torch.zeros(shape, dtype=dtype_of(v.type.element_type))
    if isinstance(v, SeqVal) and type(v) is SeqVal:
        items = [_standin(x) for x in v.items]
        return items if v.is_list else tuple(items)
    return _Marker()


def make_probe(cls: type, names: Sequence[str], values: Sequence[Any]) -> tuple[Any, list[Any]] | None:
    """The object built on stand-ins, and the stand-in of each field; None when the
    class fails on them or does not give every field back as it was given."""
    standins = [_standin(v) for v in values]
    try:
        with torch.no_grad():
            probe = cls(**dict(zip(names, standins)))
        same = all(getattr(probe, n) is s or (isinstance(s, _SCALARS) and getattr(probe, n) == s)
                   for n, s in zip(names, standins))
    except Exception:  # noqa: BLE001 (the class's own code refused the stand-ins)
        return None
    return (probe, standins) if same else None


class NotFoldable(Exception):
    """What the probe gave holds something that is not a stand-in or a constant."""


def from_probe(result: Any, standins: Sequence[Any], items: Sequence[Any]) -> Any:
    """`result` of the probe with each stand-in replaced by its field's lowered value."""
    for s, v in zip(standins, items):
        if result is s and not isinstance(s, _SCALARS):
            return v
    if isinstance(result, _SCALARS):
        return Static(result)
    if isinstance(result, (tuple, list)) and type(result) in (tuple, list):
        return SeqVal([from_probe(r, standins, items) for r in result], is_list=type(result) is list)
    if type(result).__name__ in ("dict_keys", "dict_values", "dict_items", "odict_keys", "odict_values",
                                 "odict_items"):
        return SeqVal([from_probe(tuple(r) if isinstance(r, tuple) else r, standins, items) for r in result])
    raise NotFoldable(type(result).__name__)
