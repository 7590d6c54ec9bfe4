"""The backend interface: one class per DL compiler, registered by name."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import fx
from dycl.diagnostics import UsageError, unknown
from dycl.runtime.loaders import check_path

# A loaded sub-DNN: takes backend-native or torch tensors, returns a list of outputs.
SubgraphFn = Callable[..., list[Any]]


@dataclass(frozen=True)
class Target:
    """Where sub-DNNs run: `llvm` (this CPU) or `cuda` with an `arch` like sm_90."""

    kind: str = "llvm"
    arch: str | None = None

    @staticmethod
    def parse(spec: str, arch: str | None = None) -> Target:
        kind = spec.split()[0] if spec else "llvm"
        if kind not in ("llvm", "cuda"):
            raise UsageError(f"unknown target '{spec}' (expected llvm or cuda)")
        if kind == "cuda" and arch is None:
            arch = "sm_90"
        return Target(kind, arch)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **({"arch": self.arch} if self.arch else {})}


@dataclass(frozen=True)
class BuildOptions:
    """How backends build: tuning for TVM and where its records persist."""

    tune_trials: int = 0  # MetaSchedule trials per tuning task (tvm); 0 builds untuned
    tuning_dir: str | None = None  # the persistent tuning database; default <cache>/tuning


@dataclass
class SubgraphSpec:
    """What a backend needs to build one sub-DNN."""

    name: str
    graph_module: fx.GraphModule
    example_inputs: list[torch.Tensor]
    meta: dict[str, Any] = field(default_factory=dict)
    # (input, dimension) pairs whose size is known only at run time (`?` in the
    # sub-DNN's type, e.g. the rows a boolean mask selected): built for any size.
    dynamic: tuple[tuple[int, int], ...] = ()
    # Each dynamic dimension's size as an expression of the signature's named
    # dimensions (`b`, `2*b`), "" where unnamed: related dimensions get related
    # example sizes.
    dynamic_names: tuple[str, ...] = ()
    # The declared range of each named dimension (the signature's `b=1..64`): sizes
    # the host refuses need not be probed.
    name_ranges: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    # (input, tensor input, dim): a host int input that is that tensor's size
    # (`x.view(x.shape[0], -1)`); examples and probes keep the two consistent.
    sizes_of: tuple[tuple[int, int, int], ...] = ()

    def consistent(self, inputs: list[Any]) -> list[Any]:
        """`inputs` with each size input set to its tensor's size."""
        out = list(inputs)
        for i, j, k in self.sizes_of:
            if isinstance(out[j], torch.Tensor) and out[j].dim() > k:
                out[i] = torch.tensor(out[j].shape[k], dtype=torch.int64)
        return out

    def allows(self, base: int) -> bool:
        """Whether the host can see every dynamic dimension at size `base` (its named
        ones in their ranges; an unnamed one, a data-dependent size, can be any)."""
        import re

        for name in self.dynamic_names:
            for symbol in re.findall(r"[A-Za-z_]\w*", name):
                lo, hi = self.name_ranges.get(symbol, (1, None))
                if base < lo or (hi is not None and base > hi):
                    return False
        return True

    def example_size(self, k: int, base: int) -> int:
        """The size of dynamic dimension `k` when each named dimension is `base`."""
        name = self.dynamic_names[k] if k < len(self.dynamic_names) else ""
        if not name:
            return base
        try:
            import sympy

            expr = sympy.sympify(name)
            value = int(expr.subs({s: base for s in expr.free_symbols}))
        except Exception:  # noqa: BLE001 (an expression sympy cannot evaluate: the plain size)
            return base
        return value if value >= 0 else base


class Backend(ABC):
    """A DL compiler that builds sub-DNNs to files and loads them back.

    `build` runs at compile time; `loader` names, by import path, the function that
    loads what it built where the compiled model runs (the generated host imports
    it; dycl/runtime/loaders/ holds dycl's own).
    """

    name: str = ""
    # The loader of this backend's built files, "package.module:function":
    # `load(path, target) -> run`, where `path` is the file `build` returned (in the
    # artifact), `target` the manifest's target (`{"kind": "llvm"}` or `{"kind":
    # "cuda", "arch": "sm_90"}`), and `run(*inputs)` returns the list of the
    # sub-DNN's outputs. Inputs come as torch tensors, other runtimes' tensors
    # (convert them by DLPack) or host scalars (bool, int, float: make 0-d
    # tensors). It runs without the compiler: put it in a module that imports
    # neither dycl's compiler (xDSL, dycl.backends) nor the backend's build tools,
    # and that imports its runtime inside `load`. A plugin backend names a
    # function in its own package.
    loader: str = ""
    options: BuildOptions = BuildOptions()
    # Whether the `auto` policy measures it against the built-in candidates (llvm only).
    auto_candidate: bool = False
    # Whether it builds ops whose output size depends on data (nonzero, x[mask]);
    # if not, the pipeline cuts sub-DNNs there (cut-data-dependent-shapes).
    data_dependent_shapes: bool = True
    # Whether a check its kernels make can end the process (an assert inside an
    # OpenMP region): its builds' probes then run in a child process.
    probes_may_end_the_process: bool = False

    def cache_tag(self) -> str:
        """What, besides the sub-DNN and target, decides this backend's output."""
        return self.name

    @abstractmethod
    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        """Compile `spec` into `out_dir`; return the artifact's file name."""


# dycl's own backends, imported on first use (each pulls in its compiler).
_BUILTIN: dict[str, tuple[str, str]] = {
    "tvm": ("dycl.backends.tvm", "TvmBackend"),
    "torch": ("dycl.backends.torch_eager", "TorchBackend"),
    "onnxruntime": ("dycl.backends.onnxruntime", "OnnxRuntimeBackend"),
    "inductor": ("dycl.backends.inductor", "InductorBackend"),
}
POLICIES = ("auto", "fastest")  # names that choose a backend per sub-DNN, not backends
_REGISTERED: dict[str, Callable[[], Backend]] = {}  # by register_backend, in this process


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Add a backend for this process (an installed package uses the `dycl.backends`
    entry point instead, see dycl/plugins.py). Built-in and plugin names are taken."""
    from dycl.plugins import BACKENDS_GROUP, discover
    from dycl.runtime.loaders import register

    _check_name(name, "register_backend")
    if name in _BUILTIN or name in POLICIES:
        raise UsageError(f"cannot register backend '{name}': dycl's built-in "
                         f"{'policy' if name in POLICIES else 'backend'} has that name")
    plugin = discover(BACKENDS_GROUP).get(name)
    if plugin is not None:
        raise UsageError(f"cannot register backend '{name}': {plugin.describe()} has that name")
    _REGISTERED[name] = factory
    register(name)  # artifacts naming it load in this process


def get_backend(name: str, options: BuildOptions | None = None) -> Backend:
    factories = _factories()
    if name not in factories:
        raise unknown("backend", name, sorted(factories) + list(POLICIES))
    backend = factories[name]()
    if options is not None:
        backend.options = options
    return backend


def backend_names() -> list[str]:
    return sorted(_factories())


def builtin_backend_names() -> list[str]:
    return sorted(_BUILTIN)


def auto_candidates() -> list[str]:
    """Plugin and registered backends that ask to be measured by the `auto` policy."""
    return [n for n, make in sorted(_factories().items()) if n not in _BUILTIN and make().auto_candidate]


def _factories() -> dict[str, Callable[[], Backend]]:
    """Every backend by name: built-in, then plugins, then registered in this process
    (looked up on each call, so none hides another, whatever the order of events)."""
    from dycl.plugins import BACKENDS_GROUP, clash, discover

    table: dict[str, Callable[[], Backend]] = {n: _builtin(m, c) for n, (m, c) in _BUILTIN.items()}
    for name, plugin in discover(BACKENDS_GROUP).items():
        if name in _BUILTIN or name in POLICIES:
            raise clash(plugin, "dycl's built-in " + ("policy" if name in POLICIES else "backend"))
        if name in _REGISTERED:
            raise clash(plugin, "the backend registered in this process by register_backend")
        table[name] = _plugin_backend(plugin)
    return {**table, **{n: _checked(n, f, "register_backend") for n, f in _REGISTERED.items()}}


def _builtin(module: str, cls: str) -> Callable[[], Backend]:
    def factory() -> Backend:
        import importlib

        return getattr(importlib.import_module(module), cls)()

    return factory


def _plugin_backend(plugin: Any) -> Callable[[], Backend]:
    def load() -> Backend:
        from dycl.plugins import PluginError

        obj = plugin.load()
        try:
            return obj() if callable(obj) else obj  # a Backend subclass or a factory function
        except Exception as e:
            raise PluginError(f"{plugin.describe()} failed: {type(e).__name__}: {e}") from e

    _check_name(plugin.name, plugin.describe())
    return _checked(plugin.name, load, plugin.describe())


def _checked(name: str, make: Callable[[], Backend], source: str) -> Callable[[], Backend]:
    def factory() -> Backend:
        backend = make()
        if not isinstance(backend, Backend):
            raise UsageError(f"{source} gives {backend!r} for backend '{name}': expected a "
                             "dycl.backends.base.Backend (or a class or function making one)")
        if backend.name != name:  # the manifest and host program name it by `name`
            raise UsageError(f"{source}: backend '{name}' is a {type(backend).__name__} whose name is "
                             f"'{backend.name}'; they must agree")
        problem = check_path(backend.loader) if backend.loader else "it names none"
        if problem is not None:
            old = " (loader_source() is no longer read)" if hasattr(backend, "loader_source") else ""
            raise UsageError(f"{source}: backend '{name}' ({type(backend).__name__}) needs the import path of its "
                             f"loader{old}: {problem}",
                             note="set the class attribute loader = \"package.module:function\", a function "
                                  "load(path, target) returning the loaded sub-DNN (see dycl/backends/base.py)")
        return backend

    return factory


def _check_name(name: str, source: str) -> None:
    if not name.isidentifier():  # one spelling for the manifest, the host program and the CLI
        raise UsageError(f"{source}: backend name '{name}' must be a Python identifier")
