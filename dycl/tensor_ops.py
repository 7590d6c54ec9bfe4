"""Functional forms of tensor statements, called by name from dycl IR.

The frontend turns Python's in-place item assignment on a tensor into one of
these and rebinds every name holding the tensor (as for `+=`); torch.export
traces through them into aten ops (`index_put`, `slice_scatter`, ...).
"""

from __future__ import annotations

from typing import Any

import torch


def setitem(t: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """`t[index] = value`, as a new tensor (`value` cast and broadcast as Python's does).
    On a Python container (a list whose type only the run showed: `s = list(y.shape)`)
    the item assignment itself, in place, as Python does it."""
    if not isinstance(t, torch.Tensor):
        t[index] = value
        return t
    if isinstance(index, torch.Tensor) and index.dim() == 0 and t.dim() > 0 and \
            index.dtype in (torch.int64, torch.int32, torch.int16, torch.int8):
        # A host int handed over as a 0-d tensor: `out[i] = v` would read it back (an
        # unbacked size); index_copy keeps it a tensor (check-index-bounds keeps it in range).
        return t.index_copy(0, (index % t.shape[0]).view(1), _row(t, value).unsqueeze(0))
    if isinstance(index, torch.SymInt) and t.dim() > 0:
        # An index the host computes (`self.hist[self.ptr] = v`; check-index-bounds keeps it
        # in range): `out[u0] = v` cannot be traced with an unbacked size, select_scatter can.
        n = t.shape[0]
        torch._check(index >= -n)
        torch._check(index < n)
        return torch.select_scatter(t, _row(t, value).clone(), 0, index % n)
    out = t.clone()
    out[index] = value
    return out


def row(t: Any, i: Any) -> Any:
    """`t[i]` for `for r in t` over a tensor's rows (frontend: a loop over range(len(t))).
    Only a tensor: a tuple indexed by a run-time int in a traced sub-DNN would be
    specialised to the example's index (every iteration the same element)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"dycl: a loop over a tensor's rows met a {type(t).__name__}")
    return t[i]


def unpack(t: Any, n: int) -> tuple[Any, ...]:
    """`a, b = t` for a row `t` of `for a, b in rows` (a tensor, or a list `tolist()`
    made): its `n` elements, or eager's ValueError for another count."""
    if isinstance(t, torch.Tensor) and t.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    if len(t) != n:  # (a row of `x.tolist()` is a list)
        raise ValueError(f"too many values to unpack (expected {n})" if len(t) > n
                         else f"not enough values to unpack (expected {n}, got {len(t)})")
    return tuple(t[k] for k in range(n))


def _row(t: torch.Tensor, value: Any) -> torch.Tensor:
    """`value` as one row of `t` (`t[i] = value` broadcasts it; leading 1s drop)."""
    row = torch.as_tensor(value, dtype=t.dtype, device=t.device)
    while row.dim() > t.dim() - 1 and row.shape[0] == 1:
        row = row[0]
    return row.expand(t.shape[1:])


_SCALAR_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
                 torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
                 torch.uint8: "Byte", torch.bool: "Bool", torch.complex64: "ComplexFloat",
                 torch.complex128: "ComplexDouble"}


def inplace_result(new: Any, old: Any) -> Any:
    """What `old op= e` / `old.op_(e)` leaves in `old`: `new` (the out-of-place
    result) in old's dtype and shape, with the errors eager raises where an in-place
    op cannot write it (a float result into an integer tensor, a larger shape)."""
    if not isinstance(new, torch.Tensor) or not isinstance(old, torch.Tensor):
        return new
    if not torch.can_cast(new.dtype, old.dtype):
        raise RuntimeError(f"result type {_SCALAR_NAMES.get(new.dtype, new.dtype)} can't be cast to the desired "
                           f"output type {_SCALAR_NAMES.get(old.dtype, old.dtype)}")
    if new.shape != old.shape:
        shape = torch.broadcast_shapes(new.shape, old.shape)
        if shape != old.shape:
            raise RuntimeError(f"output with shape {list(old.shape)} doesn't match the broadcast shape {list(shape)}")
        new = new.expand_as(old)
    return new.to(old.dtype)


def int_floor_divide(a: Any, b: Any) -> torch.Tensor:
    """Integer `a // b` with torch's result for INT_MIN // -1 (it wraps): compiled
    code divides with the CPU's idiv, which traps (SIGFPE killed the process)."""
    if not isinstance(b, torch.Tensor):
        return -a if b == -1 else torch.div(a, b, rounding_mode="floor")
    minus_one = b == -1
    q = torch.div(a, torch.where(minus_one, torch.ones_like(b), b), rounding_mode="floor")
    return torch.where(minus_one, -(a.to(q.dtype) if isinstance(a, torch.Tensor) else a), q)


def int_remainder(a: Any, b: Any) -> torch.Tensor:
    """Integer `a % b` (Python's sign), 0 for b == -1 where the CPU's idiv traps."""
    if not isinstance(b, torch.Tensor):
        return a * 0 if b == -1 else torch.remainder(a, b)
    minus_one = b == -1
    r = torch.remainder(a, torch.where(minus_one, torch.ones_like(b), b))
    return torch.where(minus_one, torch.zeros_like(r), r)
