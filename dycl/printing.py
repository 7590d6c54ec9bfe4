"""Printing IR to text."""

from __future__ import annotations

from io import StringIO

from xdsl.ir import Operation
from xdsl.printer import Printer


def module_text(op: Operation, debuginfo: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_debuginfo=debuginfo).print_op(op)
    return out.getvalue() + "\n"
