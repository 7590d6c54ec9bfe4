"""The one registry of dycl's dialects and passes (imported lazily).

Feeds `dycl-opt` and the `xdsl.universe` entry point, so `xdsl-opt` sees them too.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _dycl_dialect() -> Dialect:
    from dycl.dialects.dycl import DYCL

    return DYCL


def _pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def factory() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(f"dycl.passes.{module}"), cls)

    return factory


DIALECTS: dict[str, Callable[[], Dialect]] = {"dycl": _dycl_dialect}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "inline-calls": _pass("inline_calls", "InlineCallsPass"),
    "unroll-loops": _pass("unroll_loops", "UnrollLoopsPass"),
    "constant-propagation": _pass("constant_propagation", "ConstantPropagationPass"),
    "shape-inference": _pass("shape_inference", "ShapeInferencePass"),
    "extract-hcfg": _pass("extract_hcfg", "ExtractHcfgPass"),
    "hoist-computation-free": _pass("hoist_computation_free", "HoistComputationFreePass"),
    "outline-subgraphs": _pass("outline_subgraphs", "OutlineSubgraphsPass"),
    "assign-backends": _pass("assign_backends", "AssignBackendsPass"),
    "dycl-default": _pass("pipelines", "DyclDefaultPipelinePass"),
    "dycl-no-hoist": _pass("pipelines", "DyclNoHoistPipelinePass"),
}

# xDSL ships its own `shape-inference`; dycl-opt overrides it, the shared universe
# (seen by xdsl-opt) must not clash with it.
_SHADOWING_XDSL = {"shape-inference"}

DYCL_UNIVERSE = Universe(
    all_dialects=DIALECTS,
    all_passes={k: v for k, v in PASSES.items() if k not in _SHADOWING_XDSL},
)
