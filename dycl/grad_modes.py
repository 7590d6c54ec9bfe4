"""Autograd's modes as dycl sees them: what `t.requires_grad`, `torch.is_grad_enabled()`
and `t.is_inference()` answer depends on the grad mode the code runs in.

A compiled model computes the same values in every mode, but code that asks about
autograd can branch on the answer. Shape inference decides such queries for one
caller's mode ("on", "off" under `torch.no_grad()`, "inference" under
`torch.inference_mode()`), and the compiled model checks the caller's mode at each call.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import torch

MODES = ("on", "off", "inference")
# What asks about autograd: these functions, attributes and methods.
QUERY_FUNCTIONS = frozenset({"torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch._C.is_grad_enabled",
                             "torch._C._is_grad_enabled", "torch.is_inference"})
QUERY_ATTRIBUTES = frozenset({"requires_grad", "grad_fn", "is_leaf", "grad"})
GRAPH_ATTRIBUTES = frozenset({"grad_fn", "grad"})  # (None, or autograd's objects; the others are bools)
QUERY_METHODS = frozenset({"is_inference"})
# The same in Python a fallback region runs (`requires_grad_` is no query).
QUERY_WORDS = re.compile(r"\.(requires_grad|grad_fn|is_leaf|grad|is_inference)\b|"
                         r"\b(is_grad_enabled|is_inference_mode_enabled)\b")
# `.numpy()` raises on a tensor that requires grad (not through `.detach()`, `.data`, force=True).
_NUMPY_CALL = re.compile(r"\.numpy\(\s*\)")


def code_asks_autograd(code: str) -> bool:
    """Whether Python a region runs asks about autograd, or acts on it as `.numpy()` does."""
    return QUERY_WORDS.search(code) is not None or any(
        _NUMPY_CALL.search(line) and "detach" not in line and ".data" not in line for line in code.splitlines())


def current_grad_mode() -> str:
    """The calling thread's grad mode."""
    if torch.is_inference_mode_enabled():
        return "inference"
    return "on" if torch.is_grad_enabled() else "off"


# The switches a `with` block or a decorator makes ("no-inference": `inference_mode(False)`).
SWITCHES = ("on", "off", "inference", "no-inference")


def compose(outer: str | None, inner: str | None) -> str | None:
    """The switches of `inner` made inside those of `outer` (comma-separated, outer first)."""
    return ",".join(s for s in (outer, inner) if s) or None


@contextlib.contextmanager
def grad_mode_context(caller: str, switches: str | None = None) -> Iterator[None]:
    """Code run inside sees the caller's mode ("on", "off" or "inference") with
    `switches` (see SWITCHES) made in turn."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.inference_mode(caller == "inference"))
        if caller != "inference":
            stack.enter_context(torch.set_grad_enabled(caller == "on"))
        stack.enter_context(switched(switches))
        yield


@contextlib.contextmanager
def switched(switches: str | None) -> Iterator[None]:
    """Code run inside sees the current mode with `switches` (see SWITCHES) made in turn."""
    with contextlib.ExitStack() as stack:
        for switch in (switches or "").split(","):
            if switch in ("on", "off"):
                stack.enter_context(torch.set_grad_enabled(switch == "on"))
            elif switch in ("inference", "no-inference"):
                stack.enter_context(torch.inference_mode(switch == "inference"))
        yield


def placeholder_answer(op: Any, value_of: Callable[[Any], Any]) -> bool | None:
    """A query's answer of the right kind, for a program that never runs it."""
    from dycl.dialects import dycl as d

    graph = isinstance(op, d.CallFunctionOp) and op.target.data == "builtins.getattr" and \
        value_of(op.operands[1]) in GRAPH_ATTRIBUTES
    return None if graph else False


def asks_autograd(op: Any, value_of: Callable[[Any], Any]) -> bool:
    """Whether a dycl call op asks about autograd (`value_of` gives an operand's
    compile-time value, for getattr's attribute name)."""
    from dycl.dialects import dycl as d

    if isinstance(op, d.CallFunctionOp):
        target = op.target.data
        if target in QUERY_FUNCTIONS:
            return True
        if target == "builtins.getattr" and len(op.operands) >= 2:
            try:
                return value_of(op.operands[1]) in QUERY_ATTRIBUTES
            except KeyError:
                return False
        return False
    return isinstance(op, d.CallMethodOp) and op.method.data in QUERY_METHODS
