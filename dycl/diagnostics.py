"""User-facing errors: every one carries a location and ends a CLI with exit code 1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Attribute, Operation


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def to_attr(self) -> FileLineColLoc:
        return FileLineColLoc(StringAttr(self.file), IntAttr(self.line), IntAttr(self.col))


def loc_of(op: Operation | None) -> SourceLoc | None:
    """The Python source location recorded on an op (or its nearest ancestor)."""
    while op is not None:
        loc: Attribute = op.location
        if isinstance(loc, FileLineColLoc):
            return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
        op = op.parent_op()
    return None


class DyclError(Exception):
    """Base of every error a user can cause; `str()` is the full diagnostic."""

    def __init__(self, message: str, loc: SourceLoc | None = None, note: str | None = None):
        self.message = message
        self.loc = loc
        self.note = note
        super().__init__(self.format())

    def format(self) -> str:
        text = f"{self.loc}: error: {self.message}" if self.loc else f"error: {self.message}"
        if self.note:
            text += f"\n  note: {self.note}"
        return text


class FrontendError(DyclError):
    """The model's Python uses something the frontend cannot lower."""


class PassError(DyclError):
    """A pass found the IR outside what it accepts (with the op's source location)."""

    def __init__(self, message: str, op: Operation | None = None, note: str | None = None):
        self.op = op
        super().__init__(message, loc_of(op), note)


class BackendError(DyclError):
    """A sub-DNN could not be built by the requested backend."""


class FallbackWarning(UserWarning):
    """Parts of a model run as Python in the host (fallback regions); said once per compile."""


class InputError(DyclError, ValueError):
    """A compiled model was called with inputs that do not match its signature."""


def report_and_exit(e: BaseException, prog: str) -> NoReturn:
    """Print a diagnostic for `e` (no traceback) and exit non-zero."""
    if isinstance(e, SystemExit):
        raise e
    if isinstance(e, KeyboardInterrupt):
        sys.exit(130)
    print(format_exception(e), file=sys.stderr)
    sys.exit(1)


def format_exception(e: BaseException) -> str:
    """One diagnostic for any error: `file:line:col: error: message`."""
    if isinstance(e, DyclError):
        return e.format()
    message = str(e).rstrip() or type(e).__name__
    op = getattr(e, "dycl_op", None)
    if isinstance(op, Operation):
        loc = loc_of(op)
        where = f"{loc}: " if loc else ""
        return f"{where}error: '{op.name}' {message}" if not message.startswith("'") else f"{where}error: {message}"
    if type(e).__name__ == "ParseError":  # already `file:line:col` plus the source line
        return message
    return f"error: {type(e).__name__}: {message}"


@contextmanager
def capture_failing_ops() -> Iterator[None]:
    """Remember which op a verifier error came from, so its location can be shown.

    xDSL reports the failing op only inside a printed dump of the whole module.
    """
    from xdsl.utils.diagnostic import Diagnostic

    original = Diagnostic.raise_exception

    def raise_with_op(self: Diagnostic, ir: object, underlying_error: Exception):
        if isinstance(ir, Operation) and not hasattr(underlying_error, "dycl_op"):
            setattr(underlying_error, "dycl_op", ir)
        return original(self, ir, underlying_error)  # type: ignore[arg-type]

    Diagnostic.raise_exception = raise_with_op  # type: ignore[method-assign]
    try:
        yield
    finally:
        Diagnostic.raise_exception = original  # type: ignore[method-assign]
