"""The IR at any stage of the pipeline, for pass authors.

Used by `dycl.compile(dump_ir=[...])` (the texts land in `cm.ir_after`),
`dycl compile --print-ir-after PASS` (printed to stderr as each is taken, so a pass
that fails later still shows what it received) and `dycl import --stop-after PASS`.

A stage is named after the pass that ends it (`shape-inference`), plus `frontend`
(the IR before any pass) and, with `--print-ir-after`/`dump_ir`, `all`. A pass the
pipeline runs more than once (constant-propagation in dycl-default) names its first
run `NAME` and later ones `NAME#2`, `NAME#3`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import ModuleOp

from dycl.diagnostics import UsageError, unknown
from dycl.printing import module_text

FRONTEND = "frontend"
ALL = "all"


def stage_names(passes: Iterable[str]) -> list[str]:
    """The stage after each pass of `passes`, in order (`NAME#k` for a k-th run)."""
    seen: Counter[str] = Counter()
    stages = []
    for name in passes:
        seen[name] += 1
        stages.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return stages


def check_stages(wanted: Iterable[str], pipeline: str, passes: Iterable[str], what: str,
                 allow_all: bool = True) -> None:
    """A `UsageError` for the first name in `wanted` that is no stage of `passes`."""
    from dycl.registry import PASSES

    stages = [FRONTEND, *stage_names(passes)]
    choices = ([ALL] if allow_all else []) + stages
    for name in wanted:
        if name in choices:
            continue
        if name.split("#")[0] in PASSES:  # a real pass, just not one this pipeline runs (that often)
            raise UsageError(f"pass '{name}' {what}: pipeline {pipeline} has no such stage "
                             f"(its stages: {', '.join(stages)})")
        raise unknown("pass", name, choices, f" {what} (pipeline {pipeline})")


class IrDumper:
    """Takes the IR text after the wanted stages into `into` (and hands each to `sink`)."""

    def __init__(self, wanted: Iterable[str], into: dict[str, str],
                 sink: Callable[[str, str], None] | None = None):
        self.wanted = set(wanted)
        self.into = into
        self.sink = sink
        self.seen: Counter[str] = Counter()

    def __bool__(self) -> bool:
        return bool(self.wanted)

    def frontend(self, module: ModuleOp) -> None:
        self._take(FRONTEND, module)

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self.seen[pass_name] += 1
        n = self.seen[pass_name]
        self._take(pass_name if n == 1 else f"{pass_name}#{n}", module)

    def _take(self, stage: str, module: ModuleOp) -> None:
        if ALL in self.wanted or stage in self.wanted:
            text = module_text(module)
            self.into[stage] = text
            if self.sink is not None:
                self.sink(stage, text)


def banner(stage: str) -> str:
    """MLIR's header line for a dump (`-mlir-print-ir-after`)."""
    return f"// -----// IR Dump After {stage} //----- //"
