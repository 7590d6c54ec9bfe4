"""What a fallback region returns, found by running it at compile time.

The region is the user's own code: it runs on fake tensors when it can, else
once on real stand-in values (random floats, zero integers). Either way it must
leave no trace: module attributes, lists held by modules, buffers, the random
generator, printed output, warnings and log records are restored or swallowed.
The host checks at run time that each tensor result has the shape found here.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import copy
import functools
import inspect
import io
import logging
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn
from torch._subclasses.fake_tensor import unset_fake_temporarily

from xdsl.dialects.builtin import i64

from dycl.dialects import dycl as d
from dycl.pyregion import make_region, resolve_globals
from dycl.region_effects import RegionEffects, watched
from dycl.types import type_of_value


def _nested(values: Any, depth: int) -> list[Any]:
    """`values` and what the lists, tuples, dicts and sets among them hold, `depth`
    levels down, each object once."""
    out: list[Any] = []
    seen: set[int] = _namespaces()
    todo = [(v, 0) for v in values]
    while todo:
        v, level = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        out.append(v)
        if isinstance(v, (list, tuple, dict, set)) and level < depth:
            todo += [(x, level + 1) for x in (v.values() if isinstance(v, dict) else v)]
    return out


def _namespaces() -> set[int]:
    """Ids of every module's globals and of the builtins: never snapshot and restored as
    containers (restoring the builtins clears them first: `dict` is gone mid-restore)."""
    import builtins

    return {id(vars(builtins))} | {id(m.__dict__) for m in list(sys.modules.values()) if hasattr(m, "__dict__")}


def _dycl_object(v: Any) -> bool:
    """An object of dycl's own (a compiled model the user's globals hold, its guard):
    nothing forward's code changes."""
    return type(v).__module__.split(".")[0] == "dycl"


def _containers(values: Any, depth: int = 4) -> list[tuple[Any, Any]]:
    """(container, copy of its contents) for the mutable containers among `values`
    and those they hold, `depth` levels down (`{"seen": []}`: the dict and its list).
    Copied and restored through the builtin base's own methods: a subclass's
    `__getitem__` or `copy` may compute (transformers' ACT2FN instantiates)."""
    return [(v, _contents(v)) for v in _nested(values, depth) if isinstance(v, (list, dict, set))]


def _contents(v: Any) -> Any:
    if isinstance(v, list):
        return list.copy(v)
    if isinstance(v, collections.OrderedDict):
        return list(collections.OrderedDict.items(v))
    return dict.copy(v) if isinstance(v, dict) else set.copy(v)


_GONE = object()


def _same_items(a: Any, b: Any) -> bool:
    """Two snapshots of a container hold the very same objects."""
    if isinstance(a, dict):
        return list(a) == list(b) and all(a[k] is b[k] for k in a)
    if isinstance(a, (set, frozenset)):
        return a == b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _changed(saved: list[tuple[Any, Any]]) -> list[Any]:
    """The containers among `saved` whose contents differ from their snapshot."""
    out = []
    for c, contents in saved:
        now = _contents(c)
        if isinstance(c, collections.OrderedDict):  # (its snapshot: (key, value) pairs)
            same = len(now) == len(contents) and all(k == j and v is w for (k, v), (j, w) in zip(now, contents))
        else:
            same = _same_items(now, contents)
        if not same:
            out.append(c)
    return out


def _user_classes(model: nn.Module) -> list[type]:
    """The model's own classes (not torch's), bases included."""
    out: list[type] = []
    for m in model.modules():
        for c in type(m).__mro__:
            if c not in out and c is not object and not (c.__module__ or "").startswith("torch"):
                out.append(c)
    return out


def _object_restorers(values: Any, tensors: list[torch.Tensor]) -> list[tuple[Callable[[], None], Callable[[], bool]]]:
    """Functions that put back the state of the stateful objects among `values` (and
    of plain objects' attributes, one level down): a deque's contents, a random
    generator's state (torch, random, numpy), a closure's cells, an object's
    attributes. Compile-time runs of forward advanced them: a call then drew other
    random numbers, or counted from 2, than eager's first call. The tensors those
    objects hold (a scheduler's `alphas_cumprod` updated in place) go to `tensors`.
    Each comes with a test of whether its object changed since."""
    out: list[tuple[Callable[[], None], Callable[[], bool]]] = []
    seen: set[int] = _namespaces()

    def visit(v: Any, depth: int) -> None:
        if id(v) in seen or isinstance(v, (torch.Tensor, nn.Module, type, str, bytes, int, float, bool)) or v is None \
                or _dycl_object(v):
            return
        seen.add(id(v))
        if isinstance(v, (list, tuple, dict)) and depth < 3:
            # (the callbacks in `self.callbacks = [Counter(), ...]`; their lists are restored apart)
            for x in (v.values() if isinstance(v, dict) else v):
                visit(x, depth + 1)
        elif isinstance(v, collections.deque):
            items = list(v)
            out.append((lambda v=v, items=items: (v.clear(), v.extend(items)),
                        lambda v=v, items=items: not _same_items(list(v), items)))
        elif isinstance(v, torch.Generator):
            state = v.get_state()
            out.append((lambda v=v, state=state: v.set_state(state),
                        lambda v=v, state=state: not torch.equal(v.get_state(), state)))
        elif isinstance(v, random.Random):
            state = v.getstate()
            out.append((lambda v=v, state=state: v.setstate(state), lambda v=v, state=state: v.getstate() != state))
        elif type(v).__module__.startswith("numpy.random") and hasattr(v, "bit_generator"):
            state = v.bit_generator.state
            out.append((lambda v=v, state=state: setattr(v.bit_generator, "state", state),
                        lambda v=v, state=state: repr(v.bit_generator.state) != repr(state)))
        elif type(v).__module__.startswith("numpy.random") and hasattr(v, "get_state"):
            state = v.get_state()
            out.append((lambda v=v, state=state: v.set_state(state),
                        lambda v=v, state=state: repr(v.get_state()) != repr(state)))
        elif inspect.isfunction(v) and v.__closure__:
            cells = []
            for cell in v.__closure__:
                with contextlib.suppress(ValueError):  # (an empty cell)
                    cells.append((cell, cell.cell_contents))
            out.append((lambda cells=cells: [setattr(c, "cell_contents", x) for c, x in cells],
                        lambda cells=cells: any(c.cell_contents is not x for c, x in cells)))
        elif depth < 3 and hasattr(v, "__dict__") and not inspect.isroutine(v) and not inspect.ismodule(v) \
                and not isinstance(v, functools.partial) and isinstance(vars(v), dict):
            # (a callable object too: `self.cb = Counter()` counting its calls)
            attrs = dict(vars(v))
            tensors.extend(_tensors_held(attrs.values()))
            held = _containers(attrs.values())  # (`self.items = []` a method appends to)
            out.append((lambda v=v, attrs=attrs, held=held: (vars(v).clear(), vars(v).update(attrs),
                                                              _restore_containers(held)),
                        lambda v=v, attrs=attrs, held=held: not _same_items(vars(v), attrs) or bool(_changed(held))))
            for x in attrs.values():
                visit(x, depth + 1)

    for v in values:
        visit(v, 0)
    return out


def _tensors_held(values: Any, depth: int = 3) -> list[torch.Tensor]:
    """The tensors among `values` and in the lists, tuples and dicts they hold
    (`self.mem = [torch.zeros(3)]`, a helper's default `store=torch.zeros(2)`)."""
    return [v for v in _nested(values, depth) if isinstance(v, torch.Tensor)]


def _np_random() -> Any:
    """numpy's global random module where numpy is loaded (never imported for this)."""
    np = sys.modules.get("numpy")
    return getattr(np, "random", None) if np is not None else None


def _fresh_iterators(attrs: dict[str, Any]) -> None:
    """Copies of itertools' iterators in `attrs` (their state cannot be set back in
    place): what the attributes get back after the compile-time runs."""
    for k, v in attrs.items():
        if type(v).__module__ == "itertools":
            with contextlib.suppress(Exception):  # (a tee or chain that does not copy)
                attrs[k] = copy.copy(v)


def _restore_containers(saved: list[tuple[Any, Any]]) -> None:
    for container, contents in saved:
        if isinstance(container, list):
            list.__setitem__(container, slice(None), contents)
        elif isinstance(container, collections.OrderedDict):
            collections.OrderedDict.clear(container)
            for k, v in contents:
                collections.OrderedDict.__setitem__(container, k, v)
        elif isinstance(container, dict):
            dict.clear(container)
            dict.update(container, contents)
        else:
            set.clear(container)
            set.update(container, contents)


_LIBRARIES = ("torch", "numpy", "dycl", "xdsl", "tvm", "onnx", "onnxruntime", "typing_extensions")


def _helper_module_globals(values: list[Any], user_globals: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The globals of the modules the model's module uses: those of its functions,
    classes and imported modules (not the standard library's or torch's)."""
    out: dict[int, dict[str, Any]] = {}
    for v in values:
        module = v if inspect.ismodule(v) else sys.modules.get(getattr(v, "__module__", None) or "") \
            if inspect.isfunction(v) or inspect.isclass(v) else None
        name = getattr(module, "__name__", "")
        top = name.partition(".")[0]
        if module is None or top in sys.stdlib_module_names or top in _LIBRARIES or top == "builtins":
            continue
        g = vars(module)
        if g is not user_globals and isinstance(g, dict):
            out.setdefault(id(g), g)
    return list(out.values())


def _defaults_of(f: Any) -> list[Any]:
    """A function's default values, and those of what it wraps (`@torch.no_grad()`)."""
    out: list[Any] = []
    for _ in range(8):
        out += [*(getattr(f, "__defaults__", None) or ()), *(getattr(f, "__kwdefaults__", None) or {}).values()]
        f = getattr(f, "__wrapped__", None)
        if f is None:
            break
    return out


@contextlib.contextmanager
def protected(model: nn.Module, user_globals: dict[str, Any] | None = None,
              effects: RegionEffects | None = None) -> Iterator[None]:
    """Run user code at compile time without changing the model, its module's
    globals (and the lists/dicts they hold), forward's mutable defaults, or printing.
    `effects`: where to note what the code changed before it is put back."""
    saved = []
    glob = dict(user_globals) if user_globals is not None else None
    user_values = [v for k, v in (glob or {}).items() if not k.startswith("__")]
    classes = _user_classes(model)
    class_attrs = [(c, {k: v for k, v in vars(c).items() if not k.startswith("__") and not callable(v)})
                   for c in classes]
    # Globals of the helpers' own modules too (transformers' `warning_once` adds to a
    # set in its logging module): rebound names and the containers they hold.
    reached = [(g, dict(g)) for g in _helper_module_globals(user_values, user_globals)]
    # Mutable defaults (`acc=[]`) of methods, static and class methods, and functions of those modules.
    functions = [*(f for c in classes for f in vars(c).values()),
                 *user_values, *(v for _, values in reached for v in values.values())]
    defaults = [d for g in functions if inspect.isfunction(f := g.__func__ if isinstance(g, (staticmethod, classmethod))
                                                       else g) for d in _defaults_of(f)]
    held = _containers([*user_values, *_defaults_of(model.forward), *defaults,
                        *(v for _, attrs in class_attrs for v in attrs.values()),
                        *(v for _, values in reached for k, v in values.items() if not k.startswith("__"))])
    class_keys = [(c, set(vars(c))) for c in classes]  # `type(self).calls += 1` of a base's `calls`
    objects_tensors: list[torch.Tensor] = []
    objects = _object_restorers([*user_values, *(v for m in model.modules() for v in m.__dict__.values()),
                                 *(v for _, attrs in class_attrs for v in attrs.values())], objects_tensors)
    for m in model.modules():
        attrs = dict(m.__dict__)
        _fresh_iterators(attrs)
        saved.append((m, attrs))
    attribute_containers = _containers([v for _, attrs in saved for v in attrs.values()])
    if glob is not None:
        _fresh_iterators(glob)
    # Parameters, buffers, plain tensor attributes and tensors plain objects hold: a
    # region may update any in place.
    tensors: dict[int, torch.Tensor] = {id(t): t for t in objects_tensors if not t.is_meta}
    for m in model.modules():
        for t in (*m._parameters.values(), *m._buffers.values(), *_tensors_held(m.__dict__.values()),
                  *_tensors_held(defaults)):
            if t is not None and not t.is_meta:
                tensors.setdefault(id(t), t)
    buffers = [(t, t.detach().clone(), t._version) for t in tensors.values()]
    rng = torch.get_rng_state()
    python_rng = random.getstate()  # (`random.random()` in a region: the first call's draw)
    numpy_rng = _np_random().get_state() if _np_random() is not None else None
    printed = io.StringIO()
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(logging.NOTSET)
        if effects is not None:
            other = effects.other
            if printed.getvalue():
                other.append("it prints")
            if user_globals is not None and glob is not None and not _same_items(user_globals, glob) or \
                    any(not _same_items(g, values) for g, values in reached):
                other.append("it changes a global")
            if _changed(held) or any(not _same_items({k: v for k, v in vars(c).items() if k in attrs}, attrs)
                                     for c, attrs in class_attrs) or any(set(vars(c)) - keys for c, keys in class_keys):
                other.append("it changes a global's or a class's attributes, or a default")
            if any(changed() for _, changed in objects):
                other.append("it changes a Python object the model holds")
            buffer_ids = {id(b) for m in model.modules() for b in m._buffers.values() if b is not None}
            if any(b._version != version or id(b) in buffer_ids and b.shape == value.shape and not torch.equal(b, value)
                   for b, value, version in buffers):
                other.append("it updates a tensor the model holds in place")
            _note_module_changes(effects, model, saved, attribute_containers)
        torch.set_rng_state(rng)
        random.setstate(python_rng)
        if numpy_rng is not None:
            _np_random().set_state(numpy_rng)
        if user_globals is not None and glob is not None:
            for k in [k for k in user_globals if k not in glob]:
                del user_globals[k]
            user_globals.update(glob)
        for g, values in reached:
            for k in [k for k in g if k not in values]:
                del g[k]
            g.update(values)
        _restore_containers(held)
        for c, attrs in class_attrs:  # `type(self).calls += 1` ran too
            for k, v in attrs.items():
                if vars(c).get(k, _GONE) is not v:
                    setattr(c, k, v)
        for c, keys in class_keys:
            for k in set(vars(c)) - keys:
                delattr(c, k)
        for restore, _ in objects:
            restore()
        for m, attrs in saved:
            m.__dict__.clear()
            m.__dict__.update(attrs)
        _restore_containers(attribute_containers)
        # With their version counters as they were: a compiled model's
        # live guard (dycl/runtime/live_guard.py) reads an update of the version as a
        # change of the weights (a specialisation compiled later would send every
        # call of the first compiled model to eager).
        # (Every one: kernels such as batch norm's update running statistics without
        # counting a version.)
        with torch.no_grad():
            for b, value, _ in buffers:
                if b.shape == value.shape:
                    b.copy_(value)
        if buffers:
            _set_versions([b for b, _, _ in buffers], [v for _, _, v in buffers])


def _note_module_changes(effects: RegionEffects, model: nn.Module, saved: list[tuple[nn.Module, dict[str, Any]]],
                         containers: list[tuple[Any, Any]]) -> None:
    """Module attributes rebound, and the modules' own lists and dicts changed, as
    (module path, name); a change deeper down goes to `effects.other`."""
    paths = {id(m): name for name, m in model.named_modules(remove_duplicate=False)}
    owners: dict[int, tuple[str, str | None]] = {}
    for m, attrs in saved:
        path = paths.get(id(m), "?")
        for k, v in attrs.items():
            if k in ("_parameters", "_buffers", "_modules"):
                owners[id(v)] = (path, None)  # (a change names the parameter, buffer or submodule)
            elif isinstance(v, (list, dict, set)):
                owners.setdefault(id(v), (path, k))
        now = vars(m)
        for k in set(attrs) | set(now):
            old = attrs.get(k, _GONE)
            if now.get(k, _GONE) is not old and type(old).__module__ != "itertools":
                effects.attributes.add((path, k))
    for c in _changed(containers):
        owner = owners.get(id(c))
        if owner is None:
            effects.other.append("it changes a list or dict a module holds")
        elif owner[1] is not None:
            effects.attributes.add(owner)
        else:
            before = dict(next(contents for d, contents in containers if d is c))
            effects.attributes.update((owner[0], k) for k in set(before) | set(c) if before.get(k) is not c.get(k))


def _set_versions(tensors: list[torch.Tensor], versions: list[int]) -> None:
    setter = getattr(torch._C._autograd, "_unsafe_set_version_counter", None)
    if setter is not None:  # (a torch without it: the guard sees a change, and calls run eager)
        setter(tuple(tensors), tuple(versions))


def _real(v: Any, placeholder: Callable[[Any], Any], unknown: type, other: bool = False,
          negative: bool = False) -> Any:
    """A real stand-in for `v`: random floats, zero integers (`other`: other random
    floats, larger and shifted, and ones; `negative`: those floats negated)."""
    if isinstance(v, unknown):
        return placeholder(v)
    if isinstance(v, torch.Tensor):
        shape = [_concrete_size(n, other) for n in v.shape]
        if v.dtype.is_floating_point:
            x = torch.randn(shape, dtype=v.dtype)
            return -(x * 3 + 1) if negative else x * 3 + 1 if other else x
        if v.dtype == torch.bool:
            return torch.full(shape, other)
        return (torch.ones if other else torch.zeros)(shape, dtype=v.dtype)
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        items = [_real(x, placeholder, unknown, other, negative) for x in v]
        return type(v)(*items) if hasattr(type(v), "_fields") else type(v)(items)  # (a PackedSequence)
    return v


class HeldSample(list):
    """A held list (its length known only at run time) as a region's compile-time
    runs receive it: two elements, three on the run that looks for varying sizes."""


class HeldTupleSample(tuple):
    """A held tuple, as HeldSample."""


def _longer(v: Any) -> Any:
    """A held sample with one more element (other runs: a result sized by it varies)."""
    return type(v)([*v, v[0]]) if isinstance(v, (HeldSample, HeldTupleSample)) and v else v


def _concrete_size(n: Any, other: bool) -> int:
    """A size for a real stand-in: a symbolic one (a mask's count of rows, `u0`) as
    its hint where it has one, else 2 (3 for the other run)."""
    if isinstance(n, int):
        return n
    hint = getattr(getattr(n, "node", None), "hint", None)
    return int(hint) if isinstance(hint, int) else 3 if other else 2


def _abstract(v: Any, mode: Any, unknown: type, dims: Any = None) -> Any:
    """Results as shape inference holds them: fake tensors (a fresh size symbol for
    each of `dims`, the dims whose size varies with the data), unknown scalars."""
    if isinstance(dims, _Held):
        return _held(dims, mode, unknown)
    if isinstance(v, torch.Tensor) and v.layout != torch.strided:
        # a sparse tensor: a Python object to compiled code (no backend takes one)
        out = unknown(d.PYOBJ)
        out.sample = v
        return out
    if isinstance(v, torch.Tensor):
        if isinstance(dims, set) and mode.shape_env is not None:
            shape = []
            for k, n in enumerate(v.shape):
                if k in dims:
                    n = mode.shape_env.create_unbacked_symint()
                    torch._check(n >= 0)
                shape.append(n)
            return torch.empty(shape, dtype=v.dtype)
        if v.__class__.__name__ == "FakeTensor":
            return v
        with unset_fake_temporarily():
            v = v.detach()  # (from_tensor warns on reading a non-leaf's .grad)
        return mode.from_tensor(v, static_shapes=True)
    if isinstance(v, (bool, int, float)):
        return unknown(type_of_value(v))
    each = dims if isinstance(dims, list) else [None] * (len(v) if isinstance(v, (tuple, list)) else 0)
    if isinstance(v, tuple) and not isinstance(v, torch.Size) and not hasattr(v, "_fields"):
        return tuple(_abstract(x, mode, unknown, k) for x, k in zip(v, each))
    if isinstance(v, list):
        return [_abstract(x, mode, unknown, k) for x, k in zip(v, each)]
    if v is None or isinstance(v, (str, torch.dtype, torch.Size)):
        return v
    out = unknown(d.PYOBJ)
    out.sample = v  # (what a later region's run takes for it)
    return out


# How long one compile-time run of a region may take: on stand-in values a loop the
# real data ends may never end (NMS over random boxes whose IoU never passes).
RUN_SECONDS = 20.0


class RegionTimeout(Exception):
    """A region ran past RUN_SECONDS on stand-in values."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise RegionTimeout in the user's Python (not torch's) once `seconds` pass:
    checked on each line of the model's own code."""
    deadline = time.monotonic() + seconds
    previous = sys.gettrace()

    def on_line(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and time.monotonic() > deadline:
            raise RegionTimeout(f"it ran more than {seconds:g} s on stand-in values (a loop the data ends?)")
        return on_line

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        # (never in importlib's frames, a library's or the standard library's: stopped
        # there, a module imported lazily would be left half-made)
        name = frame.f_code.co_filename
        own = name.startswith("<dycl") or not (name.startswith(("<", sys.prefix, sys.base_prefix))
                                                or "site-packages" in name or "/torch/" in name)
        return on_line if own else None

    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(previous)


def type_region(op: d.PyRegionOp, model: nn.Module, mode: Any, args: list[Any],
                placeholder: Callable[[Any], Any], unknown: type,
                other_placeholder: Callable[[Any], Any] | None = None,
                third_placeholder: Callable[[Any], Any] | None = None,
                effects: RegionEffects | None = None, typed: bool = True) -> list[Any]:
    """The region's results, for their types. `effects`: where to note what its runs
    change that a caller would see; `typed` False: one run, for those only."""
    fn = make_region(op.code.data, op.globals.data, op.loc.data)
    if effects is not None:
        fn = watched(fn, [a.arg for a in ast.parse(op.code.data).body[0].args.args[1:]],  # type: ignore[attr-defined]
                     effects, _tensors_held)
    fake_args = [_real(a, placeholder, unknown) if isinstance(a, unknown) else a for a in args]
    # The user's own `except` could catch what fake tensors raise on data reads and
    # take a path eager never takes: code with `try` runs on real stand-ins.
    fake_ok = not any(isinstance(n, ast.Try) for n in ast.walk(ast.parse(op.code.data)))
    user_globals = None if op.globals.data == "dycl.pyregion" else resolve_globals(op.globals.data)
    with protected(model, user_globals, effects), _time_limit(RUN_SECONDS):
        try:
            if not fake_ok:
                raise NotImplementedError
            with _sizes_kept(mode):
                out = fn(model, *fake_args)
            real = False
        except RegionTimeout:
            raise
        except Exception:
            out = fn(model, *[_real(a, placeholder, unknown) for a in args])
            real = True
        values = [out] if op.tail is not None else list(out)
        if not typed:
            return []
        varying: list[Any] = [None] * len(values)
        stateful = any(_holds_state(a) for a in args)
        held = any(isinstance(a, (HeldSample, HeldTupleSample)) for a in args)
        if real or stateful or held or any(isinstance(a, unknown) for a in args):
            # Sizes may follow values the compile does not know: tensor data its code read
            # (`x[:, :int(x.sum())]`, a loop that stops on a condition), a host number
            # (`x[:, :n]`) or a Python object the region updates (a KV cache grown on
            # each call, in each unrolled iteration). Run once more, on other stand-ins
            # and after the first run's updates; a size that differs is known only at
            # run time (`?`), not the first run's.
            other = other_placeholder or placeholder
            args = [_longer(a) for a in args]
            try:
                again = _run_again(fn, model, mode, args, other, unknown, real, op)
            except RegionTimeout:
                raise
            except Exception:  # noqa: BLE001 (other values it refuses: the first run's sizes)
                again = values
            varying = [_varying_dims(v, w) for v, w in zip(values, again)]
            if all(x is None for x in varying):
                # Both runs may pass a threshold alike (`k = int((x > 0).sum())` on one row):
                # a third on negated values and a host int 0 (`torch.split(x, [k, n - k])`).
                third_value = third_placeholder or other
                try:
                    third = _run_again(fn, model, mode, args, third_value, unknown, real, op, negative=True)
                    varying = [_varying_dims(v, w) for v, w in zip(values, third)]
                except RegionTimeout:
                    raise
                except Exception:  # noqa: BLE001 (values it refuses: what the two runs showed)
                    pass
            if all(x is None for x in varying):
                alike = _rerun_sized_alike(fn, model, mode, args, other, unknown, real, values, op)
                varying = [_varying_dims(v, w) for v, w in zip(values, alike)]
            if all(x is None for x in varying):
                varying = _varying_at_sizes(fn, model, mode, args, other, unknown, real, values, op)
        varying = [_held_where(v, dims, grown) for v, dims, grown in zip(values, varying, _loop_grown(op))]
        if any(getattr(a, "sample", None) is not None for a in args if isinstance(a, unknown)):
            # It takes an object an earlier region's run made from stand-ins (a set of the
            # values above a threshold): sizes computed from it are the run time's.
            varying = [_every_dim(v) for v in values]
        if d.READS_STATE_ATTR in op.attributes:
            # It reads state forward writes after it (a KV cache grown on each call): one
            # call's sizes say nothing of the next's, so each tensor's are known at run time.
            varying = [_every_dim(v) for v in values]
    with mode:
        return [_abstract(v, mode, unknown, dims) for v, dims in zip(values, varying)]


class _AssumedSizes(Exception):
    """A compile-time run on fake tensors that held a run-time size to one value
    (`mean + torch.ones(4, H)` on a stand-in H = 2 makes torch assume `u0 == 2`)."""


_SIZE_FACTS = ("axioms", "var_to_range", "replacements", "replacements_slocs", "_unbacked_replacements")


@contextlib.contextmanager
def _sizes_kept(mode: Any) -> Iterator[None]:
    """Run in `mode`, undoing what the run assumed of the sizes before it: a run on
    stand-ins proves nothing of the run time's sizes, yet torch records its guesses in
    the shape environment every fake tensor of the compile reads (the symbol would
    then read 2 everywhere). Such a run raises _AssumedSizes."""
    env = mode.shape_env
    facts = {k: copy.copy(getattr(env, k)) for k in _SIZE_FACTS if hasattr(env, k)}
    asserts = {k: list(v) for k, v in env.deferred_runtime_asserts.items()}
    count = env.num_deferred_runtime_asserts
    try:
        with mode:
            yield
    finally:
        assumed = _restore_if_assumed(env, facts, asserts, count)
    if assumed:
        raise _AssumedSizes


def _restore_if_assumed(env: Any, facts: dict[str, Any], asserts: dict[Any, list[Any]], count: int) -> bool:
    assumed = any(env.replacements.get(k) != v for k, v in facts["replacements"].items()) or \
        any(k in facts["var_to_range"] and facts["var_to_range"][k] != r for k, r in env.var_to_range.items()) or \
        any(k in facts["var_to_range"] and k in env.replacements for k in env.replacements) or \
        any(len(env.deferred_runtime_asserts.get(k, ())) != len(v) for k, v in asserts.items())
    if not assumed:
        return False
    for k, v in facts.items():
        setattr(env, k, v)
    env.deferred_runtime_asserts.clear()
    env.deferred_runtime_asserts.update(asserts)
    env.num_deferred_runtime_asserts = count
    env._version_counter += 1  # (caches keyed on these read the facts again)
    env._replacements_version_counter += 1
    if hasattr(env, "fake_tensor_cache"):
        env.fake_tensor_cache.clear()
    return True


def _rerun_sized_alike(fn: Callable[..., Any], model: nn.Module, mode: Any, args: list[Any],
                      other: Callable[[Any], Any], unknown: type, real: bool, values: list[Any],
                      op: d.PyRegionOp) -> list[Any]:
    """The other run once more, its host ints the size its tensors' run-time sizes
    stand at: the two may be one number (`H = int(n)`, `torch.zeros(H)`, then
    `mean + torch.ones(4, H)`), which the other run's unrelated stand-ins broke (it
    raised, or its own `except` took another path). Where that fails too, the first
    run's values."""
    size = _concrete_size(None, True)
    ints = _free_ints(args, unknown)
    sized_tensors = any(isinstance(t, torch.Tensor) and not all(isinstance(n, int) for n in t.shape)
                        for t in _tensors_held(args))
    if not sized_tensors or not ints:
        return values

    def sized(u: Any) -> Any:
        return size if _free_int(u, unknown) else other(u)

    try:
        return _run_again(fn, model, mode, args, sized, unknown, real, op)
    except RegionTimeout:
        raise
    except Exception:  # noqa: BLE001
        return values


def _varying_at_sizes(fn: Callable[..., Any], model: nn.Module, mode: Any, args: list[Any],
                      other: Callable[[Any], Any], unknown: type, real: bool, values: list[Any],
                      op: d.PyRegionOp) -> list[Any]:
    """Runs with host ints equal to the region's tensors' sizes and counts: an int
    only those fit may take a path no other stand-in took (`x.reshape(n, -1)` in a
    `try` whose handler ran for every other n). Dims that differ in any run vary."""
    varying: list[Any] = [None] * len(values)
    ints = _free_ints(args, unknown)
    if not ints:
        return varying
    sizes = sorted({int(n) for t in _tensors_held(args) for n in (*t.shape, t.numel()) if isinstance(n, int)})

    for size in sizes[:4]:
        try:
            again = _run_again(fn, model, mode, args, lambda u, k=size: k if u in ints else other(u), unknown, real, op)
        except RegionTimeout:
            raise
        except Exception:  # noqa: BLE001 (a size it refuses says nothing)
            continue
        varying = [_varying_dims(v, w) if x is None else x for v, w, x in zip(values, again, varying)]
    return varying


def _free_int(u: Any, unknown: type) -> bool:
    """A host int only the run knows that no earlier run fixed (not picked from a
    list, no sample of an earlier region's object)."""
    return isinstance(u, unknown) and getattr(u, "type", None) == i64 and u.picks is None and u.sample is None


def _free_ints(args: list[Any], unknown: type) -> list[Any]:
    return [a for a in _nested(args, 3) if _free_int(a, unknown)]


def _run_again(fn: Callable[..., Any], model: nn.Module, mode: Any, args: list[Any],
               value_of: Callable[[Any], Any], unknown: type, real: bool, op: d.PyRegionOp,
               negative: bool = False) -> list[Any]:
    """One more run of the region, its unknowns given by `value_of`: on real tensors
    where the first run needed them, else on fakes whose size assumptions are undone."""
    if real:
        out = fn(model, *[_real(a, value_of, unknown, other=True, negative=negative) for a in args])
    else:
        with _sizes_kept(mode):
            out = fn(model, *[value_of(a) if isinstance(a, unknown) else a for a in args])
    return [out] if op.tail is not None else list(out)


class _Held:
    """A tuple or list whose length depends on the data (a loop that appends until a
    condition holds): typed as a held list of its elements, seen in `samples`."""

    def __init__(self, *samples: Any):
        self.samples = samples


def _is_sequence(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and not isinstance(v, torch.Size) and not hasattr(v, "_fields")


def _held_where(v: Any, dims: Any, grown: Any) -> Any:
    """`dims` with a sequence the region grows in a loop that can stop early marked
    held, even where both compile-time runs happened to give one length."""
    if grown is True and _is_sequence(v) and not isinstance(dims, _Held):
        return _Held(v)
    if isinstance(grown, list) and _is_sequence(v) and len(grown) == len(v) and not isinstance(dims, _Held):
        each = dims if isinstance(dims, list) else [None] * len(v)
        return [_held_where(x, k, g) for x, k, g in zip(v, each, grown)]
    return dims


def _loop_grown(op: d.PyRegionOp) -> list[Any]:
    """For each value the region gives, where it returns a name its code grows
    (`+=`, `append`, `extend`, `x = x + ...`) inside a `while` loop or a `for` loop
    that can stop early: True for such a name, a list for a tuple display, else None."""
    fn = ast.parse(op.code.data).body[0]
    grown: set[str] = set()
    for loop in ast.walk(fn):
        if not (isinstance(loop, ast.While) or isinstance(loop, ast.For) and any(
                isinstance(n, (ast.Break, ast.Return, ast.Raise)) for n in ast.walk(loop))):
            continue
        for n in ast.walk(loop):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                grown.add(n.target.id)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    n.func.attr in ("append", "extend", "insert") and isinstance(n.func.value, ast.Name):
                grown.add(n.func.value.id)
            elif isinstance(n, ast.Assign):
                read = {x.id for x in ast.walk(n.value) if isinstance(x, ast.Name)}
                grown.update(t.id for t in n.targets if isinstance(t, ast.Name) and t.id in read)

    def marks(e: ast.expr | None) -> Any:
        if isinstance(e, ast.Name):
            return True if e.id in grown else None
        if isinstance(e, (ast.Tuple, ast.List)):
            return [marks(x) for x in e.elts]
        return None

    def merged(a: Any, b: Any) -> Any:
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return [merged(x, y) for x, y in zip(a, b)]
        return a if a is not None else b

    out: Any = None
    for n in ast.walk(fn):
        if isinstance(n, ast.Return):
            out = merged(out, marks(n.value))
    if op.tail is not None:
        return [out]
    n = len(op.res)
    return out if isinstance(out, list) and len(out) == n else [None] * n


def _held(held: _Held, mode: Any, unknown: type) -> Any:
    """The held list for a data-length sequence: its elements must be tensors of one
    dtype and rank (the sizes that differ among them dynamic), or numbers of one type."""
    from dycl.held_lists import HeldList

    items = [x for s in held.samples for x in s]
    is_tuple = all(type(s) is tuple for s in held.samples)
    if not items:
        return HeldList(None, is_tuple)
    first = items[0]
    if all(isinstance(x, torch.Tensor) for x in items) and \
            len({(x.dtype, x.dim()) for x in items}) == 1:
        dims = {k for k in range(first.dim()) if len({x.shape[k] for x in items}) > 1}
        return HeldList(_abstract(first, mode, unknown, dims or None), is_tuple)
    if all(type(x) is type(first) for x in items) and type(first) in (bool, int, float):
        return HeldList(unknown(type_of_value(first)), is_tuple)
    raise TypeError("it returns a sequence whose length depends on the data, of elements of different "
                    "kinds (not tensors of one dtype and rank, nor numbers of one type)")


def _holds_state(v: Any) -> bool:
    """A Python object a region may update (not a tensor, number, string or None)."""
    return not isinstance(v, (torch.Tensor, int, float, bool, str, bytes, type(None), torch.dtype, torch.device)) \
        and not callable(v)


def _every_dim(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return set(range(v.dim())) or None
    if isinstance(v, (tuple, list)) and not isinstance(v, torch.Size):
        return [_every_dim(x) for x in v]
    return None


def _varying_dims(a: Any, b: Any) -> Any:
    """Where the two runs' tensors differ in size: a set of dims per tensor (nested
    as the values are), None where nothing varies."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return {k for k, (m, n) in enumerate(zip(a.shape, b.shape)) if m != n} or None \
            if a.dim() == b.dim() else None
    if _is_sequence(a) and _is_sequence(b) and len(a) != len(b):
        return _Held(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b) and \
            not isinstance(a, torch.Size):
        return [_varying_dims(x, y) for x, y in zip(a, b)]
    return None
