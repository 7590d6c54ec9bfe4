"""Arguments that are not (only) tensors: what `forward` is called with, as the
compiled program's flat tensor inputs plus a spec of everything else.

`forward(self, x, feats: list, k: int = 3, mask=None)` called with
`(x, [a, b], 5)` binds every parameter: tensors become program inputs, numbers,
strings, booleans and None are compile-time constants, lists, tuples and dicts
(keyed by constants) keep their structure, and a parameter left to a default eager re-creates on each
call (a list, a tensor) stays ABSENT (the frontend reads the default object).
A call whose spec differs from the compiled one (another constant, a list of
another length, a mask given where it was None) is another program: compiled on
first use like another input shape (`dynamic="auto"`), else an InputError.
"""

from __future__ import annotations

import inspect
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import torch

from dycl.diagnostics import InputError

ABSENT = ["absent"]


class ArgumentError(InputError, TypeError):
    """A call Python itself would not bind (eager raises TypeError for it)."""  # a parameter not passed, whose default is an object forward reads

    def __str__(self) -> str:
        return self.message  # (eager's TypeError's words, no diagnostic prefix)


class ObjectArgument(InputError):
    """An argument of a kind a program does not take (an object: a KV cache class)."""


def is_constant(v: Any) -> bool:
    return v is None or type(v) in (bool, int, float, str)


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # "positional", "keyword" (keyword-only), "variadic" (one of *args, as the example call gave them)
    default: Any = None
    has_default: bool = False
    constant_default: bool = False  # an immutable default: bound as a constant

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.has_default:
            out["default"] = self.default if self.constant_default else "<object>"
            out["constant_default"] = self.constant_default
        return out

    @staticmethod
    def from_json(j: Mapping[str, Any]) -> Parameter:
        return Parameter(j["name"], j["kind"], j.get("default"), "default" in j, bool(j.get("constant_default")))


@dataclass(frozen=True)
class Arguments:
    """How forward's arguments are made of the program's tensors: one spec per parameter."""
    params: list[Parameter]
    specs: list[Any]


def parameters_of(model: torch.nn.Module, positional: int | None = None) -> list[Parameter] | None:
    """forward's parameters, or None where they cannot be bound by name (*args).
    With `positional` (how many positional arguments a call passes), *args is that
    many "variadic" parameters, bound by position; **kwargs takes nothing."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return None
    out: list[Parameter] = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL and positional is not None:
            named = sum(1 for q in out if q.kind == "positional")
            out += [Parameter(f"args[{j}]", "variadic") for j in range(max(0, positional - named))]
            continue
        if p.kind == p.VAR_KEYWORD and positional is not None:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        has = p.default is not p.empty
        out.append(Parameter(p.name, "keyword" if p.kind == p.KEYWORD_ONLY else "positional",
                             p.default if has and is_constant(p.default) else None, has,
                             has and is_constant(p.default)))
    return out


def python_message(params: Sequence[Parameter], args: Sequence[Any], kwargs: Mapping[str, Any],
                   qualname: str) -> str | None:
    """The TypeError message eager gives for this call (Python's own: a function of
    the same parameters called so), or None where it binds or cannot be rebuilt."""
    if any(p.kind == "variadic" or not p.name.isidentifier() for p in params):
        return None
    parts, star = ["self"], False
    for p in params:
        if p.kind == "keyword" and not star:
            parts.append("*")
            star = True
        parts.append(f"{p.name}=None" if p.has_default else p.name)
    namespace: dict[str, Any] = {}
    exec(f"def forward({', '.join(parts)}): pass", {}, namespace)  # noqa: S102 (parameter names only)
    stub = namespace["forward"]
    stub.__qualname__ = qualname  # (what the message names)
    try:
        stub.__code__ = stub.__code__.replace(co_qualname=qualname)
    except (TypeError, ValueError):  # (before Python 3.11: the name alone)
        pass
    try:
        stub(None, *args, **kwargs)
    except TypeError as e:
        return str(e)
    return None


def bind(params: Sequence[Parameter], args: Sequence[Any], kwargs: Mapping[str, Any],
         qualname: str = "forward") -> list[Any]:
    """One value per parameter (ABSENT where an object default applies), as Python
    binds a call; trailing ABSENTs dropped. Errors are Python's TypeError's, as eager
    raises them."""
    def error(fallback: str) -> ArgumentError:
        return ArgumentError(python_message(params, args, kwargs, qualname) or fallback)

    positional = [p for p in params if p.kind in ("positional", "variadic")]
    if len(args) > len(positional):
        # (counting self, as Python's message does)
        raise error(f"forward() takes {len(positional) + 1} positional arguments but {len(args) + 1} were given")
    values: dict[str, Any] = {p.name: a for p, a in zip(positional, args)}
    names = {p.name for p in params}
    for k, v in kwargs.items():
        if k not in names:
            raise error(f"forward got an unexpected keyword argument '{k}'")
        if k in values:
            raise error(f"forward got multiple values for argument '{k}'")
        values[k] = v
    out = []
    for p in params:
        if p.name in values:
            out.append(values[p.name])
        elif p.constant_default:
            out.append(p.default)
        elif p.has_default:
            out.append(ABSENT)
        else:
            raise error(f"forward missing required argument '{p.name}'")
    while out and out[-1] is ABSENT:
        out.pop()
    return out


def flatten(values: Sequence[Any]) -> tuple[list[torch.Tensor], list[Any]]:
    """(the tensors, in order; the spec of each value) — a spec is JSON."""
    flat: list[torch.Tensor] = []

    def spec(v: Any, where: str) -> Any:
        if v is ABSENT:
            return ABSENT
        if isinstance(v, torch.Tensor):
            flat.append(v)
            return ["tensor"]
        if is_constant(v):
            return ["constant", type(v).__name__, v]
        if type(v) in (list, tuple):
            return [type(v).__name__, [spec(x, f"{where}[{i}]") for i, x in enumerate(v)]]
        if type(v) in (dict, OrderedDict):
            if not all(is_constant(k) for k in v):
                raise InputError(f"{where} is a dict with a key that is not a number, string, boolean or None")
            return [type(v).__name__, [spec(x, f"{where}[{k!r}]") for k, x in v.items()],
                    [spec(k, where) for k in v]]
        raise ObjectArgument(f"{where} is a {type(v).__name__}; dycl takes tensors, numbers, strings, booleans, "
                             "None and lists, tuples or dicts of them as arguments")

    return flat, [spec(v, f"argument {i}") for i, v in enumerate(values)]


def unflatten(flat: Sequence[Any], specs: Sequence[Any]) -> list[Any]:
    """The values `flatten` took apart (ABSENT where a parameter was not passed)."""
    it = iter(flat)

    def build(s: Any) -> Any:
        if s == ABSENT:
            return ABSENT
        if s[0] == "tensor":
            return next(it)
        if s[0] == "constant":
            return s[2]
        items = [build(x) for x in s[1]]
        if s[0] in _DICTS:
            return _DICTS[s[0]](zip(_keys(s), items))
        return items if s[0] == "list" else tuple(items)

    return [build(s) for s in specs]


_DICTS = {"dict": dict, "OrderedDict": OrderedDict}


def _keys(s: Any) -> list[Any]:
    """A dict spec's keys: ["dict", [value specs], [key specs (constants)]]."""
    return [k[2] for k in s[2]]


def key(specs: Sequence[Any]) -> str:
    """Specs compared as text: `1` and `True` differ by type, NaN equals NaN."""
    return json.dumps(specs)


def is_plain(specs: Sequence[Any]) -> bool:
    """Tensors only, in order: the program's inputs are forward's arguments."""
    return all(s == ["tensor"] for s in specs)


def describe(params: Sequence[Parameter], specs: Sequence[Any]) -> str:
    def text(s: Any) -> str:
        if s == ABSENT:
            return "(default)"
        if s[0] == "tensor":
            return "a tensor"
        if s[0] == "constant":
            return repr(s[2])
        if s[0] in _DICTS:
            return "{" + ", ".join(f"{k!r}: {text(x)}" for k, x in zip(_keys(s), s[1])) + "}"
        inner = ", ".join(text(x) for x in s[1])
        return f"[{inner}]" if s[0] == "list" else f"({inner}{',' if len(s[1]) == 1 else ''})"

    return ", ".join(f"{p.name}={text(s)}" for p, s in zip(params, specs))


def python_call(params: Sequence[Parameter], specs: Sequence[Any], names: Sequence[str]) -> str:
    """`x=x0, feats=[x1, x2], k=5`: forward's call in Python source, tensors named `names`."""
    it = iter(names)

    def expr(s: Any) -> str:
        if s[0] == "tensor":
            return next(it)
        if s[0] == "constant":
            v = s[2]
            return f"float({str(v)!r})" if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")) \
                else repr(v)
        if s[0] in _DICTS:
            pairs = ", ".join(f"({expr(k)}, {expr(x)})" for k, x in zip(s[2], s[1]))
            return f"__import__('collections').{s[0]}([{pairs}])" if s[0] == "OrderedDict" else f"dict([{pairs}])"
        inner = ", ".join(expr(x) for x in s[1])
        return f"[{inner}]" if s[0] == "list" else f"({inner}{',' if len(s[1]) == 1 else ''})"

    # With *args, positional parameters are passed by position (`f(x=a, 1)` is not Python).
    by_position = any(p.kind == "variadic" for p in params)
    return ", ".join(expr(s) if by_position and p.kind != "keyword" else f"{p.name}={expr(s)}"
                     for p, s in zip(params, specs) if s != ABSENT)
