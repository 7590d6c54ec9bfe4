"""The one registry of dycl's dialects and passes (imported lazily).

Feeds `dycl-opt` and the `xdsl.universe` entry point, so `xdsl-opt` sees them too.
`DIALECTS` and `PASSES` also hold those of installed plugins (dycl/plugins.py);
`BUILTIN_DIALECTS` and `BUILTIN_PASSES` are dycl's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from dycl.plugins import DIALECTS_GROUP, PASSES_GROUP, Plugin, PluginError, clash, discover


def _dycl_dialect() -> Dialect:
    from dycl.dialects.dycl import DYCL

    return DYCL


def _pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def factory() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(f"dycl.passes.{module}"), cls)

    return factory


BUILTIN_DIALECTS: dict[str, Callable[[], Dialect]] = {"dycl": _dycl_dialect}

BUILTIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "inline-calls": _pass("inline_calls", "InlineCallsPass"),
    "unroll-loops": _pass("unroll_loops", "UnrollLoopsPass"),
    "constant-propagation": _pass("constant_propagation", "ConstantPropagationPass"),
    "shape-inference": _pass("shape_inference", "ShapeInferencePass"),
    "cut-data-dependent-shapes": _pass("cut_data_dependent_shapes", "CutDataDependentShapesPass"),
    "check-index-bounds": _pass("check_index_bounds", "CheckIndexBoundsPass"),
    "sink-state-stores": _pass("sink_state_stores", "SinkStateStoresPass"),
    "sink-into-branches": _pass("sink_into_branches", "SinkIntoBranchesPass"),
    "extract-hcfg": _pass("extract_hcfg", "ExtractHcfgPass"),
    "hoist-computation-free": _pass("hoist_computation_free", "HoistComputationFreePass"),
    "outline-subgraphs": _pass("outline_subgraphs", "OutlineSubgraphsPass"),
    "assign-backends": _pass("assign_backends", "AssignBackendsPass"),
    "lower-host-scalars": _pass("lower_host_scalars", "LowerHostScalarsPass"),
    "verify-host-contract": _pass("verify_host_contract", "VerifyHostContractPass"),
    # Outside the default pipeline: the rewrites inline-calls and shape-inference apply, on their own.
    "eliminate-early-exits": _pass("eliminate_early_exits", "EliminateEarlyExitsPass"),
    "split-paths": _pass("split_paths", "SplitPathsPass"),
    "peel-loops": _pass("peel_loops", "PeelLoopsPass"),
    "dycl-default": _pass("pipelines", "DyclDefaultPipelinePass"),
    "dycl-no-hoist": _pass("pipelines", "DyclNoHoistPipelinePass"),
}

def _target(cls: str) -> Callable[[], type]:
    def factory() -> type:
        from dycl.host import targets

        return getattr(targets, cls)

    return factory


# `dycl-opt -t <name>`: host programs printed from IR.
TARGETS: dict[str, Callable[[], type]] = {"python-host": _target("PythonHostTarget"),
                                          "cpp-host": _target("CppHostTarget")}

# xDSL ships its own `shape-inference`; dycl-opt overrides it, the shared universe
# (seen by xdsl-opt) must not clash with it.
_SHADOWING_XDSL = {"shape-inference"}

DYCL_UNIVERSE = Universe(
    all_dialects=BUILTIN_DIALECTS,
    all_passes={k: v for k, v in BUILTIN_PASSES.items() if k not in _SHADOWING_XDSL},
    all_targets=TARGETS,
)

T = TypeVar("T")


class PluginTable(Mapping[str, Callable[[], T]], Generic[T]):
    """dycl's own entries, then those of installed plugins (looked up on each use, so
    `dycl.plugins.clear_cache()` takes effect; a plugin's module loads when its factory runs)."""

    def __init__(self, builtin: dict[str, Callable[[], T]], group: str,
                 adopt: Callable[[Plugin], Callable[[], T]], upstream: Callable[[], Mapping[str, object]]):
        self.builtin, self.group, self.adopt, self.upstream = builtin, group, adopt, upstream
        self._merged: tuple[dict[str, Plugin], dict[str, Callable[[], T]]] | None = None

    def entries(self) -> dict[str, Callable[[], T]]:
        found = discover(self.group)
        if not found:
            return self.builtin
        if self._merged is not None and self._merged[0] is found:  # discovered anew only after clear_cache()
            return self._merged[1]
        table = dict(self.builtin)
        upstream = self.upstream()
        kind = "pass" if self.group == PASSES_GROUP else "dialect"
        for name, plugin in found.items():
            if name in self.builtin:
                raise clash(plugin, f"dycl's built-in {kind}")
            if name in upstream:  # dycl-opt would let one hide the other
                raise clash(plugin, f"xDSL's built-in {kind}")
            table[name] = self.adopt(plugin)
        self._merged = (found, table)
        return table

    def __getitem__(self, name: str) -> Callable[[], T]:
        return self.entries()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.entries())


def _plugin_pass(plugin: Plugin) -> Callable[[], type[ModulePass]]:
    def factory() -> type[ModulePass]:
        cls = _call_if_factory(plugin, plugin.load(), lambda o: isinstance(o, type))
        if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
            raise PluginError(f"{plugin.describe()} gives {cls!r}: expected a ModulePass subclass "
                              "or a function returning one")
        if cls.name != plugin.name:  # xDSL finds a pass's options by its name
            raise PluginError(f"{plugin.describe()}: pass class {cls.__name__} is named '{cls.name}', "
                              f"not '{plugin.name}'")
        return cls

    return factory


def _plugin_dialect(plugin: Plugin) -> Callable[[], Dialect]:
    def factory() -> Dialect:
        dialect = _call_if_factory(plugin, plugin.load(), lambda o: isinstance(o, Dialect))
        if not isinstance(dialect, Dialect):
            raise PluginError(f"{plugin.describe()} gives {dialect!r}: expected an xDSL Dialect "
                              "or a function returning one")
        if dialect.name != plugin.name:
            raise PluginError(f"{plugin.describe()}: dialect is named '{dialect.name}', not '{plugin.name}'")
        return dialect

    return factory


def _call_if_factory(plugin: Plugin, obj: object, is_product: Callable[[object], bool]) -> object:
    if is_product(obj) or not callable(obj):
        return obj
    try:
        return obj()
    except Exception as e:
        raise PluginError(f"{plugin.describe()} failed: {type(e).__name__}: {e}") from e


def _xdsl_passes() -> Mapping[str, object]:
    from xdsl.transforms import get_all_passes

    return get_all_passes()


def _xdsl_dialects() -> Mapping[str, object]:
    from xdsl.dialects import get_all_dialects

    return get_all_dialects()


DIALECTS: Mapping[str, Callable[[], Dialect]] = PluginTable(BUILTIN_DIALECTS, DIALECTS_GROUP, _plugin_dialect,
                                                            _xdsl_dialects)
PASSES: Mapping[str, Callable[[], type[ModulePass]]] = PluginTable(BUILTIN_PASSES, PASSES_GROUP, _plugin_pass,
                                                                   _xdsl_passes)
