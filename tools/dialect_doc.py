"""Markdown reference of a dialect, read from its IRDL definitions and docstrings."""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys

from xdsl.dialects.builtin import ArrayOfConstraint, FlatSymbolRefAttrConstr
from xdsl.ir import Dialect, TypeAttribute
from xdsl.irdl import (
    AllOf,
    AnyAttr,
    AnyOf,
    BaseAttr,
    EqAttrConstraint,
    MessageConstraint,
    OptionalDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
    SingleBlockRegionDef,
    VariadicDef,
)
from xdsl.irdl.operations import IRDLOperation

_MLIR_BLOCK = re.compile(r"```mlir\n(.*?)```", re.DOTALL)


def split_doc(cls: type) -> tuple[str, list[str], list[str]]:
    """(summary, further paragraphs, ```mlir examples) of the class's own docstring,
    followed by the description of the private bases it shares with its siblings."""
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    examples = [m.strip("\n") for m in _MLIR_BLOCK.findall(doc)]
    paragraphs = [p.strip("\n") for p in _MLIR_BLOCK.sub("", doc).split("\n\n") if p.strip()]
    for base in cls.__mro__[1:]:
        if base.__name__.startswith("_") and issubclass(base, IRDLOperation):
            paragraphs += split_doc(base)[1]  # e.g. how the call ops pass keyword arguments
    return (paragraphs[0] if paragraphs else ""), paragraphs[1:], examples


def constraint(c: object) -> str:
    """An IRDL constraint as a reader would say it (`i64`, `StringAttr`, `any`)."""
    if c == FlatSymbolRefAttrConstr:
        return "FlatSymbolRefAttr"
    if isinstance(c, AnyAttr):
        return "any"
    if isinstance(c, EqAttrConstraint):
        return str(c.attr)
    if isinstance(c, BaseAttr):
        return c.attr.__name__
    if isinstance(c, (RangeOf, RangeLengthConstraint)):  # the range kind is said separately
        return constraint(c.constr if isinstance(c, RangeOf) else c.constraint)
    if isinstance(c, MessageConstraint):
        return constraint(c.constr)
    if isinstance(c, AnyOf):
        return " or ".join(sorted(constraint(a) for a in c.attr_constrs))
    if isinstance(c, AllOf):
        return " and ".join(sorted(constraint(a) for a in c.attr_constrs))
    if isinstance(c, ArrayOfConstraint):
        return f"ArrayAttr[{constraint(c.elem_range_constraint)}]"
    if isinstance(c, ParamAttrConstraint):
        return f"{c.base_attr.__name__}[{', '.join(constraint(p) for p in c.param_constrs)}]"
    return repr(c)


def _cell(c: object) -> str:
    text = constraint(c)
    return text if text == "any" else f"`{text}`"


def _kind(d: object) -> str:
    if isinstance(d, OptionalDef):
        return "optional"
    return "variadic" if isinstance(d, VariadicDef) else "single"


def trait(t: object) -> tuple[str, str]:
    """(`Pure` or `HasParent(dycl.if, ...)`, what it means): a private trait is shown
    by its public base and its own docstring."""
    cls = type(t)
    public = next(c for c in cls.__mro__ if not c.__name__.startswith("_"))
    text = public.__name__
    if dataclasses.is_dataclass(t):
        values = [getattr(t, f.name) for f in dataclasses.fields(t)]
        shown = [v for v in values if v not in ((), None)]
        if shown:
            text += "(" + ", ".join(_trait_value(v) for v in shown) + ")"
    doc = split_doc(cls)[0] if public is not cls else ""
    return text, " ".join(doc.split())


def _trait_value(v: object) -> str:
    if isinstance(v, tuple):
        return ", ".join(_trait_value(e) for e in v)
    return getattr(v, "name", None) or repr(v)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return []
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def render_op(op: type[IRDLOperation]) -> list[str]:
    d = op.get_irdl_definition()
    summary, rest, examples = split_doc(op)
    out = [f"### `{d.name}` ({op.__name__})", "", summary, ""]
    for p in rest:
        out += [p, ""]
    if d.assembly_format:
        out += ["Syntax:", "", "```", d.assembly_format, "```", ""]
    else:
        out += ["Syntax: custom (see the example).", ""]
    out += _table(("operand", "kind", "constraint"),
                  [(f"`{n}`", _kind(o), _cell(o.constr)) for n, o in d.operands])
    out += _table(("result", "kind", "constraint"),
                  [(f"`{n}`", _kind(r), _cell(r.constr)) for n, r in d.results])
    out += _table(("property", "constraint", "presence"),
                  [(f"`{n}`", _cell(p.constr), "optional" if isinstance(p, OptionalDef) else "required")
                   for n, p in d.properties.items()])
    out += _table(("attribute", "constraint", "presence"),
                  [(f"`{n}`", _cell(a.constr), "optional" if isinstance(a, OptionalDef) else "required")
                   for n, a in d.attributes.items()])
    out += _table(("region", "kind", "blocks"),
                  [(f"`{n}`", _kind(r), "exactly one" if isinstance(r, SingleBlockRegionDef) else "any number")
                   for n, r in d.regions])
    traits = sorted(trait(t) for t in d.traits)  # a frozenset: sorted for stable output
    out += ["Traits:" + (" none" if not traits else ""), ""]
    out += [f"- `{name}`" + (f" — {doc}" if doc else "") for name, doc in traits]
    out += [""] if traits else []
    for ex in examples:
        out += ["```mlir", ex, "```", ""]
    return out


def render_attr(attr: type) -> list[str]:
    d = attr.get_irdl_definition()
    sigil = "!" if issubclass(attr, TypeAttribute) else "#"
    summary, rest, examples = split_doc(attr)
    out = [f"### `{sigil}{d.name}` ({attr.__name__})", "", summary, ""]
    for p in rest:
        out += [p, ""]
    out += _table(("parameter", "constraint"), [(f"`{n}`", _cell(p.constr)) for n, p in d.parameters])
    for ex in examples:
        out += ["```mlir", ex, "```", ""]
    return out


def render_dialect(dialect: Dialect) -> str:
    ops, attrs = list(dialect.operations), list(dialect.attributes)
    module = sys.modules[ops[0].__module__]
    out = [f"# The `{dialect.name}` dialect", "",
           f"<!-- Generated from {module.__name__} by `python -m dycl.tools.gen_docs`; do not edit. -->", "",
           inspect.cleandoc(module.__doc__ or ""), "", "## Operations", ""]
    out += [f"- [`{op.get_irdl_definition().name}`](#{_anchor(op.get_irdl_definition().name, op.__name__)})"
            for op in ops]
    out += [""]
    for op in ops:
        out += render_op(op)
    out += ["## Types and attributes", ""]
    for attr in attrs:
        out += render_attr(attr)
    return "\n".join(out).rstrip("\n") + "\n"


def _anchor(name: str, cls: str) -> str:
    """GitHub's anchor of the heading `` `dycl.if` (IfOp) ``."""
    return re.sub(r"[^a-z0-9 _-]", "", f"{name} ({cls})".lower()).replace(" ", "-")
