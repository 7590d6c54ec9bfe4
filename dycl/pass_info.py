"""What a pass class says about itself: summary, description and options.

A `ModulePass` is a frozen dataclass: its fields are its command-line options and
its docstring is its documentation (summary line, then what it expects and
guarantees). `dycl-opt --list-passes` and `docs/passes.md` are both read from here.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, get_type_hints

from xdsl.passes import ModulePass


class Option(NamedTuple):
    name: str  # as written on the command line (kebab-case)
    type: str
    default: str | None  # in pass-spec syntax; None when unset or required
    required: bool


def doc_paragraphs(cls: type) -> list[str]:
    """The class's own docstring, split into paragraphs (not an inherited one, and
    not the signature that `@dataclass` invents for a class without a docstring)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{cls.__name__}("):
        return []
    return [p for p in inspect.cleandoc(doc).split("\n\n") if p.strip()]


def summary(cls: type) -> str:
    """The first sentence of the first paragraph, on one line."""
    paragraphs = doc_paragraphs(cls)
    first = " ".join(paragraphs[0].split()) if paragraphs else ""
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`])", first, maxsplit=1)[0]


def options(cls: type[ModulePass]) -> list[Option]:
    try:
        hints: dict[str, Any] = get_type_hints(cls)
    except Exception:  # an annotation naming something only imported for type checking
        hints = {}
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "name":
            continue
        if f.default is not dataclasses.MISSING:
            value: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            value = dataclasses.MISSING
        required = value is dataclasses.MISSING
        default = None if required or value is None else _spec_value(value)
        out.append(Option(f.name.replace("_", "-"), type_text(hints.get(f.name, f.type)), default, required))
    return out


def type_text(t: object) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, type):
        return t.__name__
    return str(t).replace("typing.", "")


def _spec_value(v: object) -> str:
    """A default as the user would write it in `-p pass{option=...}`."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (tuple, list)):
        return ",".join(_spec_value(e) for e in v)
    return str(v)


def option_text(o: Option) -> str:
    """`max-trip-count: int = 4096`"""
    if o.required:
        return f"{o.name}: {o.type} (required)"
    return f"{o.name}: {o.type}" + (f" = {o.default}" if o.default is not None else "")


def format_pass_list(available: Mapping[str, Callable[[], type[ModulePass]]], first: Sequence[str] = ()) -> str:
    """`dycl-opt --list-passes`: dycl's passes (`first` in that order, then any other
    pass not defined by xDSL, e.g. a plugin's) with their options, then xDSL's."""
    classes: dict[str, type[ModulePass]] = {}
    broken: dict[str, str] = {}
    for name, factory in available.items():
        try:
            classes[name] = factory()
        except Exception as e:  # a plugin's import error must not hide every other pass
            broken[name] = f"(cannot be loaded: {type(e).__name__}: {e})"
    upstream = sorted(n for n, c in classes.items() if c.__module__.split(".")[0] == "xdsl")
    rest = sorted(n for n in [*classes, *broken] if n not in upstream and n not in first)
    lines = ["dycl passes:"]
    for name in [n for n in first if n in classes or n in broken] + rest:
        if name in broken:
            lines.append(_row(name, broken[name]))
            continue
        lines.append(_row(name, summary(classes[name])))
        lines += [f"      {option_text(o)}" for o in options(classes[name])]
    lines += ["", "xDSL passes:"]
    lines += [_row(name, summary(classes[name])) for name in upstream]
    return "\n".join(lines) + "\n"


def _row(name: str, text: str) -> str:
    return f"  {name:<34} {text}".rstrip() if len(name) <= 34 else f"  {name}\n  {'':<34} {text}".rstrip()
