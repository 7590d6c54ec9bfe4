"""User-facing errors: every one carries a location and ends a CLI with exit code 1."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:  # xDSL is imported where IR is at hand: loading a compiled model needs none of it
    from xdsl.dialects.builtin import FileLineColLoc
    from xdsl.ir import Operation


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def to_attr(self) -> FileLineColLoc:
        from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

        return FileLineColLoc(StringAttr(self.file), IntAttr(self.line), IntAttr(self.col))


def loc_of(op: Operation | None) -> SourceLoc | None:
    """The Python source location recorded on an op (or its nearest ancestor)."""
    from xdsl.dialects.builtin import FileLineColLoc

    while op is not None:
        loc = op.location
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
        self.call_chain: list[str] = []  # where the function holding `loc` was called from, innermost first
        super().__init__(self.format())

    def called_from(self, where: str) -> None:
        """Add the call site (`model.py:155:12 in Encoder.forward`) that led to the error."""
        self.call_chain.append(where)
        self.args = (self.format(),)

    def format(self) -> str:
        text = f"{self.loc}: error: {self.message}" if self.loc else f"error: {self.message}"
        if self.note:
            text += f"\n  note: {self.note}"
        for where in self.call_chain:
            text += f"\n  note: called from {where}"
        return text

    def __str__(self) -> str:
        return self.format()


class FrontendError(DyclError):
    """The model's Python uses something the frontend cannot lower."""


class PassError(DyclError):
    """A pass found the IR outside what it accepts (with the op's source location)."""

    def __init__(self, message: str, op: Operation | None = None, note: str | None = None):
        self.op = op
        super().__init__(message, loc_of(op), note)


class SymbolicDimsError(PassError):
    """Code that needs the value of a dimension the signature declares symbolic."""


class BackendError(DyclError):
    """A sub-DNN could not be built by the requested backend."""


class UsageError(DyclError, ValueError):
    """A bad argument to the API or a command: an unknown name, an out-of-range number."""


def unknown(kind: str, name: str, choices: list[str], where: str = "") -> UsageError:
    """`unknown backend 'tmv' (available: ...); did you mean 'tvm'?`"""
    import difflib

    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    listed = f" (available: {', '.join(choices)})" if len(choices) <= 16 else ""
    return UsageError(f"unknown {kind} '{name}'{where}{listed}{hint}")


class OutputError(DyclError, FileExistsError):
    """An output path dycl must not write to (a file, a foreign directory, unwritable)."""


class FallbackWarning(UserWarning):
    """Parts of a model run as Python in the host (fallback regions); said once per compile."""


class InternalErrorWarning(UserWarning):
    """A bug in dycl made a compile attempt fail; the compile went on with more of the
    model as Python (a correct answer, slower). Please report it."""


class InputError(DyclError, ValueError):
    """A compiled model was called with inputs that do not match its signature."""


def user_code_error(e: BaseException, what: str) -> DyclError:
    """`e`, raised by the user's own Python, as a diagnostic at the innermost frame of their code."""
    import os
    import traceback

    import torch

    library = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(__file__) + os.sep)
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.startswith(library) and not f.filename.startswith("<")]
    loc = SourceLoc(frames[-1].filename, frames[-1].lineno or 0, (frames[-1].colno or 0) + 1) if frames else None
    message = str(e).splitlines()[0] if str(e) else ""
    return DyclError(f"{what} raised {type(e).__name__}" + (f": {message}" if message else ""), loc)


def report_and_exit(e: BaseException, prog: str) -> NoReturn:
    """Print a diagnostic for `e` and exit 1; only internal errors print a traceback."""
    if isinstance(e, SystemExit):
        raise e
    if isinstance(e, KeyboardInterrupt):
        sys.exit(130)
    text = format_exception(e, prog)
    if text is None:  # not something a user can cause: a bug, said as one
        import traceback

        traceback.print_exception(e)
        text = (f"{prog}: internal error: {type(e).__name__}: {e}\n"
                f"  note: this is a bug in dycl; please report it with the traceback above")
    print(text, file=sys.stderr)
    sys.exit(1)


def format_exception(e: BaseException, prog: str = "dycl") -> str | None:
    """One diagnostic for an error a user can cause (`file:line:col: error: message`), else None."""
    if isinstance(e, DyclError):
        return e.format() if e.loc else f"{prog}: {e.format()}"
    message = str(e).rstrip() or type(e).__name__
    op = getattr(e, "dycl_op", None)
    if op is not None and _is_operation(op):
        loc = loc_of(op)
        where = f"{loc}: " if loc else f"{prog}: "
        return f"{where}error: '{op.name}' {message}" if not message.startswith("'") else f"{where}error: {message}"
    name = type(e).__name__
    if name == "ParseError":  # already `file:line:col` plus the source line
        return message
    if name in ("VerifyException", "DiagnosticException", "PassFailedException"):
        return f"{prog}: error: {message}"
    if isinstance(e, SyntaxError):
        where = f"{e.filename}:{e.lineno}:{e.offset or 1}: " if e.filename and e.lineno else f"{prog}: "
        line = f"\n  {e.text.rstrip()}\n  {' ' * ((e.offset or 1) - 1)}^" if e.text else ""
        return f"{where}error: {e.msg}{line}"
    if isinstance(e, UnicodeDecodeError):
        return f"{prog}: error: the input is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})"
    if isinstance(e, OSError) and e.strerror:
        return f"{prog}: error: {e.strerror}: '{e.filename}'" if e.filename else f"{prog}: error: {e.strerror}"
    return None


def _is_operation(obj: object) -> bool:
    from xdsl.ir import Operation

    return isinstance(obj, Operation)


@contextmanager
def capture_failing_ops() -> Iterator[None]:
    """Remember which op a verifier error came from, so its location can be shown.

    xDSL reports the failing op only inside a printed dump of the whole module.
    """
    from xdsl.ir import Operation
    from xdsl.utils.diagnostic import Diagnostic

    original = Diagnostic.raise_exception

    def raise_with_op(self: Diagnostic, ir: object, underlying_error: Exception):
        if isinstance(ir, Operation) and not hasattr(underlying_error, "dycl_op"):
            setattr(underlying_error, "dycl_op", ir)
        return original(self, ir, underlying_error)  # type: ignore[arg-type]

    original_verify = Operation.verify

    def verify_with_op(self: Operation, verify_nested_ops: bool = True) -> None:
        try:
            original_verify(self, verify_nested_ops)
        except Exception as e:  # the innermost op that failed is the one to point at
            if not hasattr(e, "dycl_op"):
                setattr(e, "dycl_op", self)
            raise

    Diagnostic.raise_exception = raise_with_op  # type: ignore[method-assign]
    Operation.verify = verify_with_op  # type: ignore[method-assign]
    try:
        yield
    finally:
        Diagnostic.raise_exception = original  # type: ignore[method-assign]
        Operation.verify = original_verify  # type: ignore[method-assign]


def user_stacklevel() -> int:
    """The `stacklevel` for a `warnings.warn` made by the caller of this function that
    points at the first frame outside dycl (the user's `dycl.compile(...)` or call line),
    however many of dycl's own frames lie between."""
    import os
    import sys

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # dycl/, passes/, dialects/
    ours = tuple(os.path.join(here, p) + os.sep for p in ("dycl", "passes", "dialects"))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(ours):
        frame, level = frame.f_back, level + 1
    return level


@contextmanager
def quiet_logger(logger: str) -> Iterator[None]:
    """`logger`'s records dropped inside (torch's handlers hold stderr itself, so
    redirecting it does not silence them)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)
