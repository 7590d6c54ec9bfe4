"""What a Python name can stand for while a forward is being lowered.

A name is bound either to an SSA value (known only at run time) or to something
the compiler knows statically: a Python constant, a submodule, a global such as
`torch.nn.functional`, or a tuple/list whose elements are any of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from xdsl.ir import SSAValue


# Methods that change a Python container in place.
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
                     "discard", "sort", "reverse", "popitem"}


@dataclass(frozen=True)
class Static:
    """A Python value known at compile time (int, float, bool, None, str, dtype, slice...)."""

    value: Any


@dataclass(frozen=True)
class ModuleRef:
    """A submodule of the compiled model; `path` is its dotted name from the root."""

    path: str
    module: nn.Module

    def child(self, name: str) -> ModuleRef:
        return ModuleRef(f"{self.path}.{name}" if self.path else name, getattr(self.module, name))

    def member(self, name: str) -> ModuleRef | Static:
        """A registered child; `None` entries (e.g. of a ModuleList) stay `None`."""
        if self.module._modules[name] is None:
            return Static(None)
        return self.child(name)

    def members(self) -> list[ModuleRef | Static]:
        """The children in order, `None` entries included (what iteration yields)."""
        return [self.member(k) for k in self.module._modules]


@dataclass(frozen=True)
class IndexedModule:
    """`container[i]` with `i` known only at run time: a call picks the child."""

    container: ModuleRef
    index: SSAValue


@dataclass(frozen=True)
class GlobalRef:
    """A Python global: a module (torch, F), a function or a class, by qualified name."""

    qualname: str
    obj: Any


@dataclass(frozen=True)
class SuperRef:
    """`super()` (or `super(cls, self)`) in a method of a module: attributes are
    looked up after `cls` in the module's class hierarchy."""

    receiver: ModuleRef
    cls: type


@dataclass(frozen=True)
class MethodRef:
    """`receiver.name` not yet called: a tensor method or a helper method of a module."""

    receiver: Any
    name: str


@dataclass
class SeqVal:
    """A Python tuple or list whose elements are lowered values (lists may grow)."""

    items: list[Any] = field(default_factory=list)
    is_list: bool = False
    argument: str | None = field(default=None, kw_only=True)  # the caller's list, passed to forward as this parameter
    # Which Python object this is (copies made for branches keep it); a join of
    # different objects (`l = a if c else b`) remembers theirs in `sources`.
    origin: Any = field(default=None, kw_only=True, compare=False, repr=False)
    sources: frozenset[Any] = field(default=frozenset(), kw_only=True, compare=False, repr=False)
    # The module container it reads (an nn.ParameterList's parameters): forward changing it runs as Python.
    held_by: str | None = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        if self.origin is None:
            self.origin = object()

    def like(self, items: list[Any]) -> SeqVal:
        """A value of the same kind (tuple, list, dict with the same keys) holding `items`."""
        return SeqVal(items, self.is_list)

    def same_kind(self, other: Any) -> bool:
        return type(other) is type(self) and other.is_list == self.is_list and len(other.items) == len(self.items)


@dataclass
class ModuleSlice(SeqVal):
    """`self.blocks[1:3]` of an nn.ModuleList or nn.Sequential: its member modules
    (iterated, indexed, counted as the container they make); a Sequential's is called
    as the chain of its members."""

    sequential: bool = field(default=False, kw_only=True)

    def like(self, items: list[Any]) -> ModuleSlice:
        return ModuleSlice(items, False, sequential=self.sequential)


@dataclass
class DictVal(SeqVal):
    """A Python dict built in forward (a literal, `dict(...)`, a comprehension, the
    `**kwargs` of a helper): keys known at compile time, values lowered; `items`
    holds the values in key order."""

    keys: list[Any] = field(default_factory=list)
    factory: str = "builtins.dict"  # or collections.OrderedDict: the type eager builds

    def like(self, items: list[Any]) -> DictVal:
        return DictVal(items, False, list(self.keys), self.factory)

    def same_kind(self, other: Any) -> bool:
        return type(other) is type(self) and other.keys == self.keys and other.factory == self.factory

    def get(self, key: Any) -> Any:
        return self.items[self.keys.index(key)]

    def set(self, key: Any, value: Any) -> None:
        if key in self.keys:
            self.items[self.keys.index(key)] = value
        else:
            self.keys.append(key)
            self.items.append(value)


@dataclass
class NamedSeq(SeqVal):
    """A `collections.namedtuple` instance built in forward: a tuple whose fields
    are read by name; eager's class is rebuilt on the host where it escapes."""

    cls: Any = None

    def like(self, items: list[Any]) -> NamedSeq:
        return NamedSeq(items, False, self.cls)

    def same_kind(self, other: Any) -> bool:
        return isinstance(other, NamedSeq) and other.cls is self.cls and len(other.items) == len(self.items)


@dataclass
class ObjectVal(DictVal):
    """A dataclass instance built in forward (a model output object): its fields
    by name (`keys`), rebuilt as eager's class on the host where it escapes."""

    cls: Any = None
    # The class's own code run on stand-ins (see frontend/objects.py), for classes
    # with a __post_init__ or that are dicts; None for plain dataclasses.
    probe: Any = None
    standins: list[Any] = field(default_factory=list)

    def like(self, items: list[Any]) -> ObjectVal:
        return ObjectVal(items, False, list(self.keys), self.factory, self.cls, self.probe, self.standins)

    def same_kind(self, other: Any) -> bool:
        return isinstance(other, ObjectVal) and other.cls is self.cls and other.keys == self.keys and \
            _probe_signature(other) == _probe_signature(self)


def _probe_signature(v: ObjectVal) -> Any:
    """Objects whose probes answer alike: the same constant fields (None where a
    field was not given), the same kinds of run-time ones."""
    if v.probe is None:
        return None
    return tuple(s if isinstance(s, (bool, int, float, str, type(None))) else type(s).__name__ for s in v.standins)


@dataclass(frozen=True)
class StaticObject:
    """A Python object held by the model (a config object, a SimpleNamespace, a
    dataclass): its attributes are read at compile time, unless forward writes them.
    `expr` reaches it from a fallback region (`__dycl_root.config`)."""

    obj: Any
    expr: str


@dataclass(frozen=True)
class ObjectRef:
    """A Python object whose contents may change between calls (a mutable default
    argument, a tensor default): never folded; a fallback region reaches it by
    `expr`, Python source evaluated in the region."""

    expr: str
    obj: Any


@dataclass(frozen=True)
class PathDependent:
    """A name bound to different modules or globals on the paths into a join.

    Legal Python as long as it is not read again (a loop variable after an early
    `break`, say); reading it is an error, since the choice would need a run-time
    module value. Also marks a name that may be unbound after a data-dependent
    loop (`message` then says why).
    """

    name: str
    message: str | None = None


@dataclass(frozen=True, eq=False)
class Partial:
    """`functools.partial(f, *args, **kwargs)` made in forward: calling it calls `f`
    with these arguments first."""

    fn: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(frozen=True, eq=False)
class Closure:
    """A function defined inside the code being lowered (`def f(...)`, `lambda`).

    Calling it inlines its body. Free names are read when it is called, as Python
    does: from the caller's current bindings when it is called in the function that
    defined it, else from that function's last bindings. `defaults` are the default
    values, evaluated where it was defined.
    """

    node: Any  # ast.FunctionDef | ast.Lambda
    fn: Any  # the _Function being lowered where it was defined
    scope: Any  # the _Scope it was defined in
    defaults: tuple[Any, ...] = ()
    kw_defaults: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass(eq=False)
class ExceptionVal:
    """An exception built in forward (`ExitNow(outputs, i)`): its class, the
    arguments it was made with and the attributes its `__init__` set (`e.outputs`)."""

    cls: type
    args: list[Any]  # `e.args`: what BaseException.__init__ received
    attrs: dict[str, Any] = field(default_factory=dict)
    made_with: tuple[list[Any], dict[str, Any]] = ((), {})  # the constructor call's arguments


def copy_env(env: dict[str, Any]) -> dict[str, Any]:
    """A copy whose lists/tuples are fresh objects (aliasing between names kept).

    Each branch or loop body mutates (`append`s to) its own copy; the join
    compares them with `same_value`.
    """
    memo: dict[int, SeqVal] = {}

    def cp(v: Any) -> Any:
        if not isinstance(v, SeqVal):
            return v
        if id(v) not in memo:
            memo[id(v)] = c = v.like([])
            c.items = [cp(x) for x in v.items]
            c.argument, c.origin, c.sources, c.held_by = v.argument, v.origin, v.sources, v.held_by
        return memo[id(v)]

    return {k: cp(v) for k, v in env.items()}


def same_value(a: Any, b: Any) -> bool:
    """`a` and `b` are the same value, or lists/tuples of the same values."""
    if a is b:
        return True
    if isinstance(a, SeqVal) and isinstance(b, SeqVal):
        return a.same_kind(b) and all(
            same_value(x, y) for x, y in zip(a.items, b.items)
        )
    return False


Value = (SSAValue | Static | ModuleRef | GlobalRef | MethodRef | SeqVal | IndexedModule | PathDependent | Closure
         | ExceptionVal)

CONTAINER_MODULES = (nn.Sequential, nn.ModuleList, nn.ModuleDict)


def is_leaf_module(module: nn.Module) -> bool:
    """torch.nn's own modules are kept as leaf calls; user modules are inlined."""
    if isinstance(module, CONTAINER_MODULES):
        return False
    if isinstance(module, torch.jit.ScriptModule):  # scripted or traced: its Python source is not the model's
        return True
    mod = type(module).__module__
    return mod.startswith("torch.nn.") or mod.startswith("torch.ao.nn.")


# Classes importable only through the class that holds them (`Model.Out`, a namedtuple
# made in a class body): id -> (the class, that name).
_HELD_CLASSES: dict[int, tuple[Any, str]] = {}


def name_held_class(cls: type, name: str) -> None:
    _HELD_CLASSES[id(cls)] = (cls, name)


def qualname_of(obj: Any) -> str | None:
    """The importable name FX would use for a global callable or module."""
    import types

    held = _HELD_CLASSES.get(id(obj))
    if held is not None and held[0] is obj:
        return held[1]

    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if isinstance(obj, types.MethodType) and isinstance(obj.__self__, type):
        # a classmethod bound to its class (`Clamp.apply` of an autograd.Function: the
        # function's own qualname names the base class, whose forward is abstract)
        owner = qualname_of(obj.__self__)
        return f"{owner}.{obj.__name__}" if owner else None
    if obj is getattr(torch, getattr(obj, "__name__", ""), None):
        return f"torch.{obj.__name__}"
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, (types.ModuleType, type)):
        return None  # a method bound to an object (`random.random`: the module's hidden Random): no global name
    mod = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if mod is None and isinstance(obj, types.BuiltinFunctionType):
        mod = "builtins"
    if mod and name and "<" not in name:
        if mod == "torch._C._nn":
            return f"torch.nn.functional.{name}" if hasattr(torch.nn.functional, name) else None
        if mod.startswith("torch._C") or mod == "torch._tensor":
            return f"torch.{name}" if getattr(torch, name, None) is obj else None
        return f"{mod}.{name}"
    return None


def resolve_qualname(qualname: str) -> Any:
    """Import `a.b.c` and return the object it names."""
    from dycl.pyregion import resolve

    return resolve(qualname)


# Ops whose eager result is a `torch.return_types` named tuple only when given a dim.
_NAMED_WITH_DIM = {"max", "min", "median", "nanmedian"}


def return_type_of(op: str, args: list[Any], kwargs: dict[str, Any]) -> str | None:
    """`torch.return_types.<op>` when eager's result of `op(x, *args, **kwargs)` is
    that named tuple (`x.max(1)`, `torch.topk(x, 2)`), else None."""
    import torch.return_types

    if not isinstance(getattr(torch.return_types, op, None), type):
        return None
    if op in _NAMED_WITH_DIM:
        dim = kwargs.get("dim", args[0] if args else None)
        if not (isinstance(dim, Static) and isinstance(dim.value, int)) or "other" in kwargs:
            return None
    return f"torch.return_types.{op}"
