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


class Backend(ABC):
    """A DL compiler that builds sub-DNNs to files and loads them back."""

    name: str = ""
    # The Python import the generated host needs to load this backend's artifacts.
    runtime_imports: tuple[str, ...] = ()
    options: BuildOptions = BuildOptions()

    def cache_tag(self) -> str:
        """What, besides the sub-DNN and target, decides this backend's output."""
        return self.name

    @abstractmethod
    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        """Compile `spec` into `out_dir`; return the artifact's file name."""

    @staticmethod
    @abstractmethod
    def loader_source() -> str:
        """Python source of `load_<name>(path, target) -> callable`, for the host file."""


_REGISTRY: dict[str, Callable[[], Backend]] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    _REGISTRY[name] = factory


def get_backend(name: str, options: BuildOptions | None = None) -> Backend:
    _load_builtin()
    if name not in _REGISTRY:
        raise unknown("backend", name, sorted(_REGISTRY) + ["auto", "fastest"])
    backend = _REGISTRY[name]()
    if options is not None:
        backend.options = options
    return backend


def backend_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def _load_builtin() -> None:
    if _REGISTRY:
        return
    from dycl.backends.inductor import InductorBackend
    from dycl.backends.onnxruntime import OnnxRuntimeBackend
    from dycl.backends.torch_eager import TorchBackend
    from dycl.backends.tvm import TvmBackend

    register_backend("tvm", TvmBackend)
    register_backend("torch", TorchBackend)
    register_backend("onnxruntime", OnnxRuntimeBackend)
    register_backend("inductor", InductorBackend)
