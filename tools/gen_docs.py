"""Writes the reference generated from the code: docs/dialect.md and docs/passes.md.

    python -m dycl.tools.gen_docs           # regenerate
    python -m dycl.tools.gen_docs --check   # exit 1 naming each stale file (tests/test_docs.py)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from xdsl.passes import ModulePass

from dycl.pass_info import Option, doc_paragraphs, options

DOCS = Path(__file__).resolve().parent.parent / "docs"

# "Expects: dycl IR. Guarantees: ..." → a paragraph each, so a reader finds them.
_SECTION = re.compile(r"(?:^|[ \n]+)\b(Expects|Guarantees|Options): *(?=\S|\n)")


def render_pass(name: str, cls: type[ModulePass]) -> list[str]:
    from dycl.passes.pipelines import PIPELINES

    paragraphs = doc_paragraphs(cls)
    out = [f"## `{name}`", "", f"`{cls.__module__}.{cls.__name__}`", ""]
    if not paragraphs:
        out += ["*(no docstring)*", ""]
    else:
        out += [" ".join(paragraphs[0].split()), ""]
    rest = "\n\n".join(paragraphs[1:])
    if rest:
        out += [_SECTION.sub(lambda m: f"\n\n**{m.group(1)}:** ", rest).strip("\n").replace(":** \n", ":**\n"), ""]
    if (pipeline := PIPELINES.get(getattr(cls, "pipeline", None) or "")) is not None:
        out += ["Runs, in order: " + " → ".join(f"`{p}`" for p in pipeline) + ".", ""]
    opts = options(cls)
    if opts:
        out += ["| option | type | default |", "|---|---|---|"]
        out += [f"| `{o.name}` | `{o.type}` | {_default(o)} |" for o in opts] + [""]
    return out


def _default(o: Option) -> str:
    if o.required:
        return "required"
    return "unset" if o.default is None else f"`{o.default}`"


def render_passes(passes: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    out = ["# dycl passes", "",
           "<!-- Generated from dycl/registry.py (BUILTIN_PASSES) by `python -m dycl.tools.gen_docs`; do not edit. -->", "",
           "Every pass below runs in `dycl-opt -p 'NAME{option=value}'`; "
           "`dycl compile` runs `dycl-default` unless given `--pipeline`.",
           "`dycl-opt --list-passes` prints the same list, then the upstream xDSL passes.", ""]
    out += [f"- [`{name}`](#{name})" for name in passes] + [""]
    for name, factory in passes.items():
        out += render_pass(name, factory())
    return "\n".join(out).rstrip("\n") + "\n"


def generate() -> dict[str, str]:
    """File name under docs/ → its content."""
    from dycl.dialects.dycl import DYCL
    from dycl.registry import BUILTIN_PASSES  # not installed plugins': the output is the same everywhere
    from dycl.tools.dialect_doc import render_dialect

    return {"dialect.md": render_dialect(DYCL), "passes.md": render_passes(BUILTIN_PASSES)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dycl.tools.gen_docs", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    ap.add_argument("--out", type=Path, default=DOCS, help="the docs directory (default: %(default)s)")
    args = ap.parse_args(argv)
    stale = []
    for name, text in generate().items():
        path = args.out / name
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(text)
            print(f"wrote {path}")
    for path in stale:
        print(f"{path} is stale: regenerate it with `python -m dycl.tools.gen_docs`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
