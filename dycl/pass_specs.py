"""Checking a pass pipeline string (`-p a,b{opt=1}`) before anything runs.

xDSL reports an unknown pass or option as a bare `ValueError`; dycl names the pass,
the option and what it expects, and suggests the closest name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from dycl.diagnostics import UsageError, unknown


def option_names(cls: type[ModulePass]) -> list[str]:
    """A pass's options as written on the command line (kebab-case)."""
    return [f.name.replace("_", "-") for f in dataclasses.fields(cls) if f.init and f.name != "name"]


def check_pipeline(spec: str, available: Mapping[str, Callable[[], type[ModulePass]]]) -> list[ArgSpec]:
    """The parsed pipeline; a `UsageError` naming the first bad pass or option."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        # xDSL's text: a header, `pass-pipeline:1:COL`, the spec, a caret, the reason.
        lines = str(e).splitlines()[1:]
        reason = lines[-1].strip() if lines else "malformed pass pipeline"
        where = lines[0].rsplit(":", 1)[-1] if lines else "?"
        raise UsageError(f"bad pass pipeline at column {where}: {reason}\n  {spec}\n  " + " " * (
            int(where) - 1 if where.isdigit() else 0) + "^") from None
    for s in specs:
        if s.name not in available:
            e = unknown("pass", s.name, sorted(available))
            # Too many passes to list in one line: point at the listing instead.
            raise e if "did you mean" in e.message else UsageError(f"{e.message} (dycl-opt --list-passes lists them)")
        cls = available[s.name]()
        names = option_names(cls)
        for given in s.parameters:
            if given.replace("_", "-") not in names:
                raise unknown("option", given, names, f" for pass '{s.name}'") if names else UsageError(
                    f"pass '{s.name}' takes no options (given '{given}')")
        try:
            cls.from_pass_spec(s)
        except (ValueError, TypeError) as e:
            hints = get_type_hints(cls)
            expects = ", ".join(f"{n}: {_type_name(hints.get(n.replace('-', '_')))}" for n in names)
            raise UsageError(f"bad options for pass '{s.name}': {e} (options: {expects})") from None
    return specs


def _type_name(t: object) -> str:
    return getattr(t, "__name__", None) or str(t).replace("typing.", "")
