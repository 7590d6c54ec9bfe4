"""Functional forms of tensor statements, called by name from dycl IR.

The frontend turns Python's in-place item assignment on a tensor into one of
these and rebinds every name holding the tensor (as for `+=`); torch.export
traces through them into aten ops (`index_put`, `slice_scatter`, ...).
"""

from __future__ import annotations

from typing import Any

import torch


def setitem(t: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """`t[index] = value`, as a new tensor (`value` cast and broadcast as Python's does)."""
    out = t.clone()
    out[index] = value
    return out
