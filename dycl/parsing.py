"""Parsing textual IR with a source location on every op."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation, Region
from xdsl.parser import Parser
from xdsl.utils.lexer import Location

from dycl.diagnostics import DyclError, SourceLoc
from dycl.nesting import MAX_DEPTH, allow_depth, too_deep


class _SSAScope(dict):
    """The parser's SSA name table. xDSL snapshots it with `copy()` on entering
    every region (O(names in scope) per region: quadratic on large functions);
    here the snapshot is free and `LocatingParser.parse_optional_region` restores
    the scope by popping the names the region added (a region can only add
    names, redefinition is an error, and dicts pop in LIFO insertion order)."""

    def copy(self) -> _SSAScope:  # type: ignore[override]
        return self


class LocatingParser(Parser):
    """Records `file:line:col` on every parsed op, so verifier errors can point at it."""

    line_offset: int = 0
    _line_starts: list[int] | None = None
    _depth = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ssa_values = _SSAScope(self.ssa_values)

    def _location(self, pos: int, line_offset: int) -> Location:
        # Span.get_location counts newlines from the file's start on every call
        # (quadratic over a file); bisect over line starts computed once instead.
        content = self.lexer.input.content
        if self._line_starts is None:
            nl = "\n" if isinstance(content, str) else b"\n"
            self._line_starts = [0] + [m.end() for m in re.finditer(re.escape(nl), content)]
        line = bisect_right(self._line_starts, pos)
        return Location(self.lexer.input.name, line + line_offset, pos - self._line_starts[line - 1] + 1)

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        start = self._location(span.start, span.line_offset)
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file), IntAttr(start.line + self.line_offset), IntAttr(start.col)
            )
        return op

    def parse_optional_region(self, arguments: Iterable[Parser.Argument] | None = None) -> Region | None:
        if self._depth >= MAX_DEPTH and self._current_token.text == "{":
            span = self._current_token.span
            at = self._location(span.start, span.line_offset)
            raise DyclError(too_deep(self._depth + 1), SourceLoc(at.file, at.line + self.line_offset, at.col),
                            "split the computation into functions, or flatten the nesting")
        allow_depth(self._depth + 1)
        values = self.ssa_values
        names = len(values)
        self._depth += 1
        try:
            region = super().parse_optional_region(arguments)
        finally:
            self._depth -= 1
        if isinstance(values, _SSAScope):
            while len(values) > names:  # close the region's scope
                values.popitem()
            self.ssa_values = values
        return region
