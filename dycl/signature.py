"""Input signatures: shapes, dtypes and symbolic dimensions with ranges.

Shared by the CLI (`--input "b x 3 x h x w x f32, b x i64" --dim b=1..64
--dim h=w=32..512`) and the API (`dycl.compile(..., signature=..., dims=[...])`),
recorded in the manifest, and checked on every call of a compiled model.

A dimension is a size (`3`), a name (`b`: every dimension with that name has the
same size on a call) or `?` (any size, its own). `x` separates dimensions, so a
name may not start with `x`. Ranges are inclusive; `b=1..` has no upper bound.
Names without a declared range take any size from 1 up.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dycl.diagnostics import InputError, UsageError

DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
          "i64": "int64", "i32": "int32", "i8": "int8", "ui8": "uint8", "i1": "bool"}
SHORT = {v: k for k, v in DTYPES.items()}

_GRAMMAR = r"""
    full: signature (";" dims)*
    signature: input ("," input)*
    input: (dim _X)* DTYPE
    ?dim: INT -> size
        | NAME -> name
        | "?" -> anonymous
    dims: NAME ("=" NAME)* "=" INT _DOTS INT? -> dim_range

    DTYPE.2: /(f32|f64|f16|bf16|i64|i32|i8|ui8|i1)(?![A-Za-z0-9_])/
    _X: "x"
    _DOTS: ".."
    NAME: /(?!x)[A-Za-z_][A-Za-z0-9_]*/
    %import common.INT
    %import common.WS
    %ignore WS
"""


@functools.cache
def _parser(start: str) -> Any:
    from lark import Lark

    return Lark(_GRAMMAR, start=start, parser="lalr")


_EXPECTED = {
    "full": "a dimension (a size, a name or ?) or a dtype (f32, i64, ...), or '; NAME=LOW..HIGH'",
    "signature": "a dimension (a size, a name or ?) or a dtype (f32, i64, ...)",
    "dims": "NAME=LOW..HIGH (e.g. b=1..64, h=w=32..512, n=1..)",
}


def _parse(text: str, start: str, what: str) -> Any:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

    try:
        return _parser(start).parse(text)
    except UnexpectedInput as e:
        col = len(text) + 1 if isinstance(e, UnexpectedEOF) else getattr(e, "column", 1)
        if isinstance(e, UnexpectedToken) and e.token.type == "$END":
            col = len(text) + 1
        found = "the end" if col > len(text) else repr(text[col - 1])
        if isinstance(e, UnexpectedCharacters):
            found = repr(text[col - 1])
        hint = ""
        if start != "dims" and col > len(text) and ";" not in text:
            hint = ("\n  each input ends with its dtype (f32, i64, ...); write a name apart from the x "
                    "after it ('b x 3', not 'bx3')")
        raise UsageError(f"bad {what} at column {col}: found {found}, expected {_EXPECTED[start]}\n"
                         f"  {text}\n  {' ' * (col - 1)}^{hint}") from None


@dataclass(frozen=True)
class InputSpec:
    dims: tuple[int | str, ...]  # a size, or a symbol's name ("?k" for anonymous ones)
    dtype: str  # torch's name: "float32"

    def text(self) -> str:
        return " x ".join([*(str(d) if not str(d).startswith("?") else "?" for d in self.dims), SHORT[self.dtype]])


@dataclass(frozen=True)
class Signature:
    inputs: tuple[InputSpec, ...]
    ranges: Mapping[str, tuple[int, int | None]] = field(default_factory=dict)

    # ------------------------------------------------------------ building

    @staticmethod
    def parse(text: str, dims: Iterable[str] | Mapping[str, tuple[int, int | None]] = (),
              what: str = "input signature") -> Signature:
        """`"b x 8 x f32, b x i64"` with `["b=1..64"]`, or the whole `text()` form
        (`"b x 8 x f32, b x i64; b=1..64"`). `what` names the text in errors."""
        full = _parse(text, "full", what)
        tree, ranges = full.children[0], [_range(r) for r in full.children[1:]]
        inputs: list[InputSpec] = []
        anonymous = 0
        for node in tree.children:
            shape: list[int | str] = []
            for d in node.children[:-1]:
                if d.data == "size":
                    shape.append(int(d.children[0]))
                elif d.data == "name":
                    shape.append(str(d.children[0]))
                else:
                    shape.append(f"?{anonymous}")
                    anonymous += 1
            inputs.append(InputSpec(tuple(shape), DTYPES[str(node.children[-1])]))
        declared: dict[str, tuple[int, int | None]] = {}
        for names, r in ranges:
            for n in names:
                if n in declared:
                    raise UsageError(f"the {what} gives '{n}' two ranges ({_range_text(declared[n])} and "
                                     f"{_range_text(r)})")
                declared[n] = r
        given = parse_ranges(dims)
        if twice := sorted(set(declared) & set(given)):
            raise UsageError(f"'{twice[0]}' has a range in the {what} ({_range_text(declared[twice[0]])}) and in "
                             f"--dim/dims ({_range_text(given[twice[0]])})")
        sig = Signature(tuple(inputs), {**declared, **given})
        unused = set(sig.ranges) - sig.names()
        if unused:
            raise UsageError(f"--dim names {', '.join(sorted(unused))}, which no input dimension uses "
                             f"(the signature: {sig.text()})")
        return sig

    @staticmethod
    def of_examples(inputs: Sequence[Any], dynamic: bool, dims: Iterable[str] = ()) -> Signature:
        """The examples' own shapes; with `dynamic`, the first dimension of every
        input is the batch size `b` (one size shared by all of them)."""
        specs = []
        for x in inputs:
            shape: list[int | str] = list(x.shape)
            if dynamic and shape:
                shape[0] = "b"
            specs.append(InputSpec(tuple(shape), str(x.dtype).removeprefix("torch.")))
        return Signature(tuple(specs), parse_ranges(dims))

    # ----------------------------------------------------------- questions

    def names(self) -> set[str]:
        return {d for i in self.inputs for d in i.dims if isinstance(d, str)}

    @property
    def dynamic(self) -> bool:
        return bool(self.names())

    def range_of(self, name: str) -> tuple[int, int | None]:
        return self.ranges.get(name, (1, None))

    def text(self) -> str:
        ranges = "".join(f"; {n}={lo}..{'' if hi is None else hi}" for n, (lo, hi) in sorted(self.ranges.items()))
        return ", ".join(i.text() for i in self.inputs) + ranges

    def to_json(self) -> dict[str, Any]:
        return {"inputs": [{"dims": list(i.dims), "dtype": i.dtype} for i in self.inputs],
                "ranges": {n: list(r) for n, r in sorted(self.ranges.items())}}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Signature:
        return Signature(tuple(InputSpec(tuple(i["dims"]), i["dtype"]) for i in data["inputs"]),
                         {n: (r[0], r[1]) for n, r in data.get("ranges", {}).items()})

    # -------------------------------------------------------------- checks

    def bind(self, inputs: Sequence[Any]) -> dict[str, int]:
        """Each symbol's size on `inputs`; an InputError naming the violated
        constraint (`b = 80 is outside 1..64`) if they do not fit."""
        import torch

        if len(inputs) != len(self.inputs):
            raise InputError(f"expected {len(self.inputs)} inputs ({self.text()}), got {len(inputs)}")
        sizes: dict[str, int] = {}
        where: dict[str, str] = {}
        for k, (x, spec) in enumerate(zip(inputs, self.inputs)):
            if not isinstance(x, torch.Tensor):
                raise InputError(f"input {k}: expected a tensor of {spec.text()}, got {type(x).__name__}")
            got = f"{'x'.join(map(str, x.shape))} {str(x.dtype).removeprefix('torch.')}"
            if str(x.dtype).removeprefix("torch.") != spec.dtype or x.dim() != len(spec.dims):
                raise InputError(f"input {k}: expected shape/dtype {spec.text()}, got {got}")
            for axis, (n, d) in enumerate(zip(x.shape, spec.dims)):
                if isinstance(d, int):
                    if n != d:
                        raise InputError(f"input {k}: expected shape/dtype {spec.text()}, got {got} "
                                         f"(dimension {axis} must be {d})")
                    continue
                if d in sizes and sizes[d] != n:
                    raise InputError(f"input {k}: dimension {axis} is {d} = {n}, but {where[d]} gave "
                                     f"{d} = {sizes[d]} (every {d} has one size)")
                lo, hi = self.range_of(d)
                if n < lo or (hi is not None and n > hi):
                    name = "?" if d.startswith("?") else d
                    raise InputError(f"input {k}: dimension {axis} is {name} = {n}, which is outside "
                                     f"{lo}..{'' if hi is None else hi}")
                sizes[d], where[d] = n, f"input {k} dimension {axis}"
        return sizes


def parse_ranges(dims: Iterable[str] | Mapping[str, tuple[int, int | None]]) -> dict[str, tuple[int, int | None]]:
    """`["b=1..64", "h=w=32..512"]` → {"b": (1, 64), "h": (32, 512), "w": (32, 512)}."""
    if isinstance(dims, Mapping):
        return {n: (int(r[0]), None if r[1] is None else int(r[1])) for n, r in dims.items()}
    if isinstance(dims, str):
        dims = [dims]
    out: dict[str, tuple[int, int | None]] = {}
    for text in dims:
        names, (lo, hi) = _range(_parse(text, "dims", "--dim"))
        if hi is not None and hi < lo:
            raise UsageError(f"bad --dim '{text}': the range {lo}..{hi} is empty")
        for name in names:
            if name in out:
                raise UsageError(f"bad --dim '{text}': '{name}' already has a range ({_range_text(out[name])})")
            out[name] = (lo, hi)
    return out


def _range_text(r: tuple[int, int | None]) -> str:
    return f"{r[0]}..{'' if r[1] is None else r[1]}"


def _range(tree: Any) -> tuple[list[str], tuple[int, int | None]]:
    parts = [str(t) for t in tree.children]
    bounds = [int(p) for p in parts if p.isdigit()]
    return [p for p in parts if not p.isdigit()], (bounds[0], bounds[1] if len(bounds) > 1 else None)
