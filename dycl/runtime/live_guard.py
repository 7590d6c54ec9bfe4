"""What a compile built in from the live model, checked before each call.

Sub-DNNs hold the parameters and buffers as constants, and the frontend folds the
attributes forward reads (`self.temperature`, `self.training`, a config object's
fields, a module-level constant). A change after the compile (an optimizer step,
`load_state_dict`, `model.train()`, `m.temperature = 0.1`, a submodule replaced)
would not be seen: the compiled model's answer would silently be the old model's.
The guard notices such changes, as torch.compile's guards do; the caller then runs
the live model as eager Python. Measured cost (2-core VM, one call of
`changed()`): branchy (8 tensors) 3.2 us, blockdrop (126 tensors, 344 torch.nn
settings) 32 us, BlockDrop ResNet-110 (987 tensors, 2059 settings) 0.2 ms.
Not seen: a write through `.data` in place (`p.data.add_(...)` bumps no version
counter and moves no storage); in-place updates under `torch.no_grad()` (what
optimizers do) and `p.data = t` are seen.
"""

from __future__ import annotations

import copy
import enum
import functools
from collections.abc import Iterable
from itertools import repeat
from operator import attrgetter, call, is_
from typing import Any

_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), enum.Enum)
_version = attrgetter("_version")
_training = attrgetter("training")
_TORCH_NN = ("torch.nn.", "torch.ao.nn.")


def _forward(cls: type) -> Any:
    """A class's forward (None where reading it raises: TorchScript's classes)."""
    try:
        return getattr(cls, "forward", None)
    except Exception:  # noqa: BLE001
        return None


def _is_module(v: Any) -> bool:
    import torch

    return isinstance(v, torch.nn.Module)


def _is_tensor(v: Any) -> bool:
    import torch

    return isinstance(v, torch.Tensor)


def _dict_version() -> Any:
    """CPython's version tag of a dict, as torch's own guards read it (None where absent)."""
    try:
        from torch._C._dynamo.guards import dict_version
    except ImportError:
        return None
    return dict_version


def _storage_id(t: Any) -> int:
    """Which storage a tensor has (its pointer may move: shared memory)."""
    return t.untyped_storage()._cdata


def _lazy(t: Any) -> bool:
    import torch

    return torch.nn.parameter.is_lazy(t)


def _containers() -> tuple[type, ...]:
    import torch.nn as nn  # (the guard runs only with a live torch model)

    return nn.ModuleList, nn.ModuleDict, nn.Sequential, nn.ParameterList, nn.ParameterDict


def _torch_nn_class(cls: type) -> bool:
    return cls.__module__.startswith(_TORCH_NN) and not issubclass(cls, _containers())


def _one_element(t: Any) -> bool:
    import torch

    return not torch.nn.parameter.is_lazy(t) and t.numel() == 1


class LiveModelGuard:
    """`changed()` names the first thing that differs from the compile's model, or None."""

    def __init__(self, model: Any, folded_reads: Iterable[tuple[Any, str, str]] = ()) -> None:
        self._modules = [m for _, m in model.named_modules(remove_duplicate=False)]
        self._names = {id(m): path or type(model).__name__ for path, m in model.named_modules()}
        self._training = list(map(_training, self._modules))
        folded_reads = list(folded_reads)
        # Module state the host reads at run time ("state": its type is what the
        # program was compiled for) and buffers forward itself writes ("written":
        # their updates and replacements are no change of the model).
        own = {(id(h), n) for h, n, kind in folded_reads if kind == "written"}
        self._state = [(h, n, _state_spec(getattr(h, n, None))) for h, n, kind in folded_reads if kind == "state"]
        # Every parameter, buffer and submodule by its owner's dict and name: replaced
        # objects differ by identity, updated tensors by their version counter.
        # (TorchScript modules keep other mappings: they run as themselves, reading
        # their weights live.)
        slots = [(m, kind, d, name, v) for m in self._modules
                 for kind, d in (("parameter", m._parameters), ("buffer", m._buffers), ("submodule", m._modules))
                 if isinstance(d, dict) for name, v in d.items() if (id(m), name) not in own]
        self._slots = slots
        self._dicts = [d for _, _, d, _, _ in slots]
        self._keys = [name for _, _, _, name, _ in slots]
        self._held = [v for _, _, _, _, v in slots]
        self._tensors = [v for _, kind, _, _, v in slots if kind != "submodule" and v is not None]
        self._versions = list(map(_version, self._tensors))
        # `w.data = t` swaps a tensor's storage and keeps its version counter.
        import torch

        self._data_ptr = torch.Tensor.data_ptr
        self._storages = [t for t in self._tensors if not _lazy(t)]
        self._pointers = list(map(self._data_ptr, self._storages))
        self._storage_ids = {id(t): _storage_id(t) for t in self._storages}
        self._reads = [(holder, name, kind, _snapshot(_read(holder, name, kind))) for holder, name, kind in folded_reads
                       if kind not in ("state", "written")]
        # The common case in one C-level list comparison: every slot and every
        # module's `training` (its __dict__ entry) against what the compile saw.
        # Lists compare items by identity first; an item that is not the same object
        # compares by value, which for a one-element tensor could call a replaced
        # parameter "equal": those slots (and modules whose `training` is not a plain
        # attribute) are checked by identity, separately.
        plain = [k for k, v in enumerate(self._held) if not (_is_tensor(v) and _one_element(v))]
        flags = [m for m in self._modules if type(m.__dict__.get("training")) is bool]
        self._fast = ([self._dicts[k] for k in plain] + [m.__dict__ for m in flags],
                      [self._keys[k] for k in plain] + ["training"] * len(flags))
        fast = set(plain)
        rest = [k for k in range(len(self._held)) if k not in fast]
        self._rest = ([self._dicts[k] for k in rest], [self._keys[k] for k in rest], [self._held[k] for k in rest])
        flagged = {id(m) for m in flags}
        self._odd_modules = [m for m in self._modules if id(m) not in flagged]
        self._odd_training = list(map(_training, self._odd_modules))
        # What nn.Module.__call__ would run: an instance `forward` set after the compile
        # (a patch, a wrapper), a class's forward replaced, a module appended to a
        # container, a global forward hook registered.
        self._own = [m.__dict__ for m in self._modules if isinstance(m.__dict__, dict)]
        self._own_forward = [d.get("forward") for d in self._own]
        # (in the one C-level comparison of slots above)
        self._fast[0].extend(self._own)
        self._fast[1].extend(["forward"] * len(self._own))
        self._classes = list({type(m): None for m in self._modules})
        self._class_forward = list(map(_forward, self._classes))
        self._sized = [d for m in self._modules if isinstance(m, _containers()) for d in (m._modules, m._parameters)
                       if isinstance(d, dict)] + _global_hooks()
        self._sizes = list(map(len, self._sized))
        # What the common case compares, each kind in one C-level map: version
        # counters, slots and `training`/`forward` entries, classes' forward and
        # container sizes (together), odd modules' `training`.
        self._fast_held = list(map(dict.get, *self._fast))
        # torch.nn's own modules run whole inside sub-DNNs: their settings (eps,
        # negative_slope, stride, scale_factor) are compiled in as their weights are.
        # One version tag per module's __dict__ tells whether any was written (a
        # write of the same object keeps the tag; another object, equal or not,
        # sends the check to comparing the values, which re-arms the tags).
        leaves = [m for m in self._modules if _torch_nn_class(type(m)) and type(m.__dict__) is dict]
        self._settings = [(m, k, v if isinstance(v, _IMMUTABLE) else copy.deepcopy(v))
                          for m in leaves for k, v in m.__dict__.items()
                          if not k.startswith("_") and k not in ("training", "forward")
                          and (isinstance(v, _IMMUTABLE) or _plain_container(v))]
        self._dict_version = _dict_version()
        self._setting_dicts = [m.__dict__ for m in leaves] if self._dict_version else []
        if not self._dict_version:  # (each setting in the one comparison of slots instead)
            self._fast[0].extend(m.__dict__ for m, _, _ in self._settings)
            self._fast[1].extend(k for _, k, _ in self._settings)
            self._fast_held.extend(v for _, _, v in self._settings)
        # (storages and settings' tags in the one comparison of classes and sizes)
        self._misc = ([_forward] * len(self._classes) + [len] * len(self._sized) + [self._data_ptr] * len(
            self._storages) + [self._dict_version] * len(self._setting_dicts),
                      [*self._classes, *self._sized, *self._storages, *self._setting_dicts])
        self._misc_held = list(map(call, *self._misc))
        self._tags_at = len(self._misc_held) - len(self._setting_dicts)
        self._more = bool(self._rest[0] or self._odd_modules or self._reads or self._state)
        self.recompilable = False  # (of the last change `changed()` found)

    def changed(self) -> str | None:
        # (no method calls on the common path: a small model's guard measured 3.0 us with them, 1.6 us without)
        try:
            if list(map(_version, self._tensors)) == self._versions and \
                    list(map(dict.get, *self._fast)) == self._fast_held and \
                    list(map(call, *self._misc)) == self._misc_held and (not self._more or (
                        all(map(is_, map(dict.get, *self._rest[:2]), self._rest[2])) and
                        list(map(_training, self._odd_modules)) == self._odd_training and
                        self._read_changed() is None)):
                return None
        except Exception:  # noqa: BLE001 (a replaced tensor compared by value, a class without forward: look closer)
            pass
        return self._what_changed()

    def _same_classes_and_sizes(self) -> bool:
        return all(map(is_, map(_forward, self._classes), self._class_forward)) and \
            list(map(len, self._sized)) == self._sizes

    def _same_code(self) -> bool:
        return all(map(is_, map(dict.get, self._own, repeat("forward")), self._own_forward)) and \
            self._same_classes_and_sizes()

    def _read_changed(self) -> str | None:
        for holder, name, kind, (value, deep) in self._reads:
            now = _read(holder, name, kind)
            if isinstance(deep, tuple):  # a partial: its function and arguments
                if now is not value or not _same(_partial_state(now), deep):
                    return f"{_label(holder, name, kind)} changed"
            elif now is not value and not (deep and _same(now, value)):
                self.recompilable = kind == "attr" and name != "_version" and _is_module(holder) and deep
                return f"{'the global ' if kind == 'global' else ''}{_label(holder, name, kind)} changed"
        for holder, name, spec in self._state:
            if _state_spec(getattr(holder, name, None)) != spec:
                self.recompilable = True
                return f"{self._where(holder, name)} (module state) no longer holds a {spec[0]}" + (
                    f" of shape {list(spec[1])} and dtype {str(spec[2]).removeprefix('torch.')}" if len(spec) > 1 else "")
        return None

    def _what_changed(self) -> str | None:
        # `recompilable`: a change a program compiled again can hold, made by forward itself
        # or set once (module state of another type, a buffer forward re-registers, a
        # module's attribute, a torch.nn setting). Weights (an optimizer step, running
        # statistics, `train()`) change again and again; code, hooks and objects outside
        # the model run as eager.
        self.recompilable = False
        if list(map(_version, self._tensors)) != self._versions:
            t = next(t for t, v in zip(self._tensors, self._versions) if t._version != v)
            m, kind, _, name, _ = next(s for s in self._slots if s[4] is t)
            return f"{self._where(m, name)} ({kind}) was changed in place"
        pointers = list(map(self._data_ptr, self._storages))
        if pointers != self._pointers:
            # Another storage (`w.data = t`); the same storage moved (shared memory for a
            # worker process: `share_memory_()` keeps the storage and its values) is none.
            other = next((t for t, p, q in zip(self._storages, self._pointers, pointers)
                          if p != q and _storage_id(t) != self._storage_ids[id(t)]), None)
            if other is not None:
                m, kind, _, name, _ = next(s for s in self._slots if s[4] is other)
                return f"{self._where(m, name)} ({kind}) was given new data"
        if not all(map(is_, map(dict.get, self._dicts, self._keys), self._held)):
            m, kind, _, name, _ = next(s for s in self._slots if s[2].get(s[3]) is not s[4])
            self.recompilable = kind == "buffer"
            return f"{self._where(m, name)} ({kind}) was replaced"
        if list(map(_training, self._modules)) != self._training:
            m = next(m for m, t in zip(self._modules, self._training) if m.training != t)
            return f"{self._names.get(id(m), type(m).__name__)}.training changed"
        versions = list(map(self._dict_version, self._setting_dicts))
        for m, k, v in self._settings:
            if not _same(m.__dict__.get(k, _MISSING), v):
                self.recompilable = True
                return f"{self._where(m, k)} ({type(m).__name__} setting) changed"
        if not self._same_code():
            for d, f in zip(self._own, self._own_forward):
                if d.get("forward") is not f:
                    m = next(m for m in self._modules if m.__dict__ is d)
                    return f"{self._names.get(id(m), type(m).__name__)}.forward was replaced"
            for c, f in zip(self._classes, self._class_forward):
                if _forward(c) is not f:
                    return f"{c.__name__}.forward was replaced"
            return "a module or parameter was added to a container, or a global forward hook registered"
        what = self._read_changed()
        if what is None:  # (settings written with equal values, storages moved: the checks re-armed)
            self._pointers = pointers
            self._misc_held = self._misc_held[:self._tags_at - len(pointers)] + pointers + versions
        return what

    def _where(self, module: Any, name: str) -> str:
        path = self._names.get(id(module), type(module).__name__)
        return f"{path}.{name}"


_MISSING = object()


def _state_spec(value: Any) -> tuple[Any, ...]:
    """What the host's read of module state relies on: a number's type, a tensor's shape, dtype and device."""
    if _is_tensor(value):
        return ("tensor", tuple(value.shape), value.dtype, value.device.type)
    return (type(value).__name__,)


def _read(holder: Any, name: str, kind: str) -> Any:
    if kind == "global":
        return holder.get(name, _MISSING)
    if kind == "method":  # the function itself (getattr would bind a new method object)
        own = getattr(holder, "__dict__", {}).get(name, _MISSING)
        if own is not _MISSING:
            return own
        return next((vars(c)[name] for c in type(holder).__mro__ if name in vars(c)), _MISSING)
    return getattr(holder, name, _MISSING)


def _global_hooks() -> list[dict]:
    try:
        from torch.nn.modules import module
    except ImportError:
        return []
    return [d for d in (getattr(module, "_global_forward_hooks", None), getattr(module, "_global_forward_pre_hooks", None))
            if isinstance(d, dict)]


def _snapshot(value: Any) -> tuple[Any, Any]:
    """The value to compare with later, and whether equal values count as unchanged
    (numbers, strings, containers of them: copied); other objects by identity."""
    if isinstance(value, _IMMUTABLE) or _plain_container(value):
        return (value if isinstance(value, _IMMUTABLE) else copy.deepcopy(value)), True
    if isinstance(value, functools.partial):  # (its keywords changed in place: `act.keywords["slope"] = 5`)
        return value, _partial_state(value)
    try:
        import torch

        if isinstance(value, (torch.dtype, torch.device, torch.Size)):
            return value, True
    except ImportError:  # (the runtime needs no torch without torch models)
        pass
    return value, False


def _partial_state(p: functools.partial) -> tuple[Any, ...]:
    """What a partial calls with (copies of its arguments where they are plain values)."""
    args, keywords = p.args, p.keywords
    return (p.func, copy.deepcopy(args) if _plain_container(list(args)) else args,
            copy.deepcopy(keywords) if _plain_container(keywords) else dict(keywords))


def _plain_container(value: Any) -> bool:
    if type(value) in (list, tuple, set, frozenset):
        return all(isinstance(v, _IMMUTABLE) or _plain_container(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, _IMMUTABLE) and (isinstance(v, _IMMUTABLE) or _plain_container(v))
                   for k, v in value.items())
    return False


def _same(now: Any, then: Any) -> bool:
    # 1 == 1.0 == True: equal values of another type were not what was compiled.
    if type(now) is not type(then):
        return False
    try:
        return bool(now == then)
    except Exception:  # an object whose == raises or is ambiguous: not the same
        return False


def _label(holder: Any, name: str, kind: str) -> str:
    if name == "_version" and type(holder).__name__ in ("Tensor", "Parameter"):
        return f"a tensor of shape {list(holder.shape)} held outside the model (a global or a default argument)"
    if kind == "global":
        return f"{holder.get('__name__', '?')}.{name}"
    return f"{type(holder).__name__}.{name}"
