"""Named pipelines, accepted by `-p` like any pass and run by `dycl compile`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from dycl.diagnostics import unknown

# The one place the pipelines are defined.
PIPELINES: dict[str, tuple[str, ...]] = {
    "dycl-default": (
        "inline-calls",
        "unroll-loops",
        "constant-propagation",
        "shape-inference",
        "constant-propagation",
        "check-index-bounds",
        "sink-state-stores",
        "sink-into-branches",
        "extract-hcfg",
        "hoist-computation-free",
        "outline-subgraphs",
        "lower-host-scalars",
    ),
    "dycl-no-hoist": (
        "inline-calls",
        "unroll-loops",
        "constant-propagation",
        "shape-inference",
        "constant-propagation",
        "check-index-bounds",
        "sink-state-stores",
        "sink-into-branches",
        "extract-hcfg",
        "outline-subgraphs",
        "lower-host-scalars",
    ),
}


def pipeline_stages(name: str, cut_data_dependent: bool = False) -> list[str]:
    """The pass names of pipeline `name`; with `cut_data_dependent`, for a backend
    that cannot build data-dependent output sizes, `cut-data-dependent-shapes` runs
    before the HCFG is formed."""
    if name not in PIPELINES:
        raise unknown("pipeline", name, sorted(PIPELINES))
    stages = list(PIPELINES[name])
    if cut_data_dependent:
        at = next(i for i, p in enumerate(stages) if p in ("sink-state-stores", "extract-hcfg"))
        stages.insert(at, "cut-data-dependent-shapes")
    return stages


def pipeline_passes(name: str, cut_data_dependent: bool = False) -> list[ModulePass]:
    from dycl.registry import PASSES

    return [PASSES[p]()() for p in pipeline_stages(name, cut_data_dependent)]


@dataclass(frozen=True)
class _NamedPipeline(ModulePass):
    pipeline: ClassVar[str]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in pipeline_passes(self.pipeline):
            p.apply(ctx, op)


@dataclass(frozen=True)
class DyclDefaultPipelinePass(_NamedPipeline):
    """The full dycl pipeline: unroll, fold, infer shapes, build the HCFG, hoist
    computation-free ops to the host and outline sub-DNNs."""

    name = "dycl-default"
    pipeline = "dycl-default"


@dataclass(frozen=True)
class DyclNoHoistPipelinePass(_NamedPipeline):
    """`dycl-default` without hoist-computation-free (for A/B comparison)."""

    name = "dycl-no-hoist"
    pipeline = "dycl-no-hoist"
