"""Parsing textual IR with a source location on every op."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser


class LocatingParser(Parser):
    """Records `file:line:col` on every parsed op, so verifier errors can point at it."""

    line_offset: int = 0

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file), IntAttr(start.line + self.line_offset), IntAttr(start.col)
            )
        return op
