"""What a fallback region returns, found by running it at compile time.

The region is the user's own code: it runs on fake tensors when it can, else
once on real stand-in values (random floats, zero integers). Either way it must
leave no trace: module attributes, lists held by modules, buffers, the random
generator, printed output, warnings and log records are restored or swallowed.
The host checks at run time that each tensor result has the shape found here.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import logging
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from dycl.dialects import dycl as d
from dycl.pyregion import make_region, resolve_globals
from dycl.types import type_of_value


def _containers(values: Any) -> list[tuple[Any, Any]]:
    """(container, copy of its contents) for the mutable containers among `values`."""
    out = []
    for v in values:
        if isinstance(v, list):
            out.append((v, list(v)))
        elif isinstance(v, (dict, set)):
            out.append((v, v.copy()))
    return out


_GONE = object()


def _user_classes(model: nn.Module) -> list[type]:
    """The model's own classes (not torch's), bases included."""
    out: list[type] = []
    for m in model.modules():
        for c in type(m).__mro__:
            if c not in out and c is not object and not (c.__module__ or "").startswith("torch"):
                out.append(c)
    return out


def _restore_containers(saved: list[tuple[Any, Any]]) -> None:
    for container, contents in saved:
        if isinstance(container, list):
            container[:] = contents
        else:
            container.clear()
            container.update(contents)


@contextlib.contextmanager
def protected(model: nn.Module, user_globals: dict[str, Any] | None = None) -> Iterator[None]:
    """Run user code at compile time without changing the model, its module's
    globals (and the lists/dicts they hold), forward's mutable defaults, or printing."""
    saved = []
    glob = dict(user_globals) if user_globals is not None else None
    user_values = [v for k, v in (glob or {}).items() if not k.startswith("__")]
    classes = _user_classes(model)
    class_attrs = [(c, {k: v for k, v in vars(c).items() if not k.startswith("__") and not callable(v)})
                   for c in classes]
    defaults = [d for c in classes for f in vars(c).values() if inspect.isfunction(f)
                for d in (*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values())]
    held = _containers([*user_values, *(getattr(model.forward, "__defaults__", None) or ()), *defaults,
                        *(v for _, attrs in class_attrs for v in attrs.values())])
    for m in model.modules():
        attrs = dict(m.__dict__)
        inner = {k: dict(v) for k, v in attrs.items() if isinstance(v, dict)}
        lists = {k: list(v) for k, v in attrs.items() if isinstance(v, list)}
        saved.append((m, attrs, inner, lists))
    # Parameters, buffers and plain tensor attributes: a region may update any in place.
    tensors: dict[int, torch.Tensor] = {}
    for m in model.modules():
        for t in (*m._parameters.values(), *m._buffers.values(), *(v for v in m.__dict__.values() if isinstance(v, torch.Tensor))):
            if t is not None and not t.is_meta:
                tensors.setdefault(id(t), t)
    buffers = [(t, t.detach().clone()) for t in tensors.values()]
    rng = torch.get_rng_state()
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(logging.NOTSET)
        torch.set_rng_state(rng)
        if user_globals is not None and glob is not None:
            for k in [k for k in user_globals if k not in glob]:
                del user_globals[k]
            user_globals.update(glob)
        _restore_containers(held)
        for c, attrs in class_attrs:  # `type(self).calls += 1` ran too
            for k, v in attrs.items():
                if vars(c).get(k, _GONE) is not v:
                    setattr(c, k, v)
        for m, attrs, inner, lists in saved:
            m.__dict__.clear()
            m.__dict__.update(attrs)
            for k, v in inner.items():
                attrs[k].clear()
                attrs[k].update(v)
            for k, v in lists.items():
                attrs[k][:] = v
        with torch.no_grad():
            for b, value in buffers:
                if b.shape == value.shape:
                    b.copy_(value)


def _real(v: Any, placeholder: Callable[[Any], Any], unknown: type) -> Any:
    if isinstance(v, unknown):
        return placeholder(v)
    if isinstance(v, torch.Tensor):
        if v.dtype.is_floating_point:
            return torch.randn(v.shape, dtype=v.dtype)
        return torch.zeros(v.shape, dtype=v.dtype)
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_real(x, placeholder, unknown) for x in v)
    return v


def _abstract(v: Any, mode: Any, unknown: type) -> Any:
    """Results as shape inference holds them: fake tensors, unknown scalars."""
    if isinstance(v, torch.Tensor):
        return v if v.__class__.__name__ == "FakeTensor" else mode.from_tensor(v, static_shapes=True)
    if isinstance(v, (bool, int, float)):
        return unknown(type_of_value(v))
    if isinstance(v, tuple) and not isinstance(v, torch.Size) and not hasattr(v, "_fields"):
        return tuple(_abstract(x, mode, unknown) for x in v)
    if isinstance(v, list):
        return [_abstract(x, mode, unknown) for x in v]
    if v is None or isinstance(v, (str, torch.dtype, torch.Size)):
        return v
    return unknown(d.PYOBJ)


def type_region(op: d.PyRegionOp, model: nn.Module, mode: Any, args: list[Any],
                placeholder: Callable[[Any], Any], unknown: type) -> list[Any]:
    fn = make_region(op.code.data, op.globals.data, op.loc.data)
    fake_args = [_real(a, placeholder, unknown) if isinstance(a, unknown) else a for a in args]
    # The user's own `except` could catch what fake tensors raise on data reads and
    # take a path eager never takes: code with `try` runs on real stand-ins.
    fake_ok = not any(isinstance(n, ast.Try) for n in ast.walk(ast.parse(op.code.data)))
    with protected(model, None if op.globals.data == "dycl.pyregion" else resolve_globals(op.globals.data)):
        try:
            if not fake_ok:
                raise NotImplementedError
            with mode:
                out = fn(model, *fake_args)
        except Exception:
            out = fn(model, *[_real(a, placeholder, unknown) for a in args])
        values = [out] if op.tail is not None else list(out)
        with mode:
            return [_abstract(v, mode, unknown) for v in values]
