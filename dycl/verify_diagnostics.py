"""`dycl-opt --verify-diagnostics`, as in MLIR.

Expectations are comments in the input: `// expected-error {{text}}` for a
diagnostic on the same line, `@+N` / `@-N` for N lines below / above, `@below` /
`@above` for the nearest line that is not itself an expectation. Likewise
`expected-warning` and `expected-note`. Every expectation must be met by a
diagnostic on its line whose text contains `text`, and every diagnostic must be
expected; otherwise each mismatch is reported and the run fails.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from dycl.diagnostics import DyclError, format_exception, loc_of

_EXPECT = re.compile(r"//\s*expected-(error|warning|note|remark)\s*(@(?:[+-]\d+|above|below))?\s*\{\{(.*?)\}\}")
_LOCATED = re.compile(r"^[^\s:]+:(\d+):\d+: (?:error|warning): ")


@dataclass
class Expected:
    severity: str
    line: int
    text: str
    written_at: int
    met: bool = False


@dataclass
class Diagnostic:
    severity: str
    line: int | None
    text: str


def expectations(text: str, first_line: int) -> list[Expected]:
    """The `expected-*` comments of a chunk whose first line is `first_line` (1-based)."""
    lines = text.split("\n")
    is_expect = [bool(_EXPECT.search(line)) for line in lines]
    out = []
    for i, line in enumerate(lines):
        for m in _EXPECT.finditer(line):
            severity, where, body = m.group(1), m.group(2), m.group(3)
            target = i
            if where in ("@above", "@below"):
                step = -1 if where == "@above" else 1
                target = i + step
                while 0 <= target < len(lines) and is_expect[target]:
                    target += step
            elif where:
                target = i + int(where[1:])
            out.append(Expected(severity, first_line + target, body.strip(), first_line + i))
    return out


def diagnostics_of(error: BaseException | None, caught: list[warnings.WarningMessage]) -> list[Diagnostic]:
    """What the run said: the error (and its note), then each warning, with their lines."""
    out = []
    if error is not None:
        line = _line_of(error)
        text = format_exception(error, "dycl-opt") or f"{type(error).__name__}: {error}"
        out.append(Diagnostic("error", line, text))
        if isinstance(error, DyclError) and error.note:
            out.append(Diagnostic("note", line, error.note))
    for w in caught:
        if not issubclass(w.category, UserWarning):  # deprecations and the like are not diagnostics
            continue
        m = _LOCATED.match(str(w.message))
        out.append(Diagnostic("warning", int(m.group(1)) if m else None, str(w.message)))
    return out


def _line_of(e: BaseException) -> int | None:
    if isinstance(e, DyclError):
        return e.loc.line if e.loc else None
    op = getattr(e, "dycl_op", None)
    if op is not None:
        loc = loc_of(op)
        return loc.line if loc else None
    span = getattr(e, "span", None)
    if span is not None:
        return span.get_location().line
    return None


def check(expected: list[Expected], said: list[Diagnostic], file: str) -> list[str]:
    """Mismatches, each a located message; empty when every expectation was met exactly."""
    problems = []
    for d in said:
        match = next((e for e in expected if not e.met and e.severity == d.severity and e.line == d.line
                      and e.text in d.text), None)
        if match is not None:
            match.met = True
        else:
            where = f"{file}:{d.line}" if d.line is not None else file
            problems.append(f"{where}: error: unexpected {d.severity}: {d.text}")
    for e in expected:
        if not e.met:
            problems.append(f"{file}:{e.written_at}: error: expected {e.severity} \"{e.text}\" on line {e.line} "
                            "was not produced")
    return problems


def run_chunk(text: str, first_line: int, file: str,
              process: Callable[[], ModuleOp | None]) -> tuple[ModuleOp | None, list[str]]:
    """Run `process` on one chunk, then hold what it said against the chunk's expectations."""
    error: BaseException | None = None
    module = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module = process()
        except Exception as e:  # a diagnostic to match, whatever raised it
            error = e
    problems = check(expectations(text, first_line), diagnostics_of(error, caught), file)
    return (module if error is None else None), problems
