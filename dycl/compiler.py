"""`dycl.compile`: model → IR → passes → sub-DNN builds + host program → artifact."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from dycl.backends.base import BuildOptions, SubgraphSpec, Target, get_backend
from dycl.dialects import dycl as d
from dycl.frontend.lowering import lower_module
from dycl.fx import example_inputs, to_graph_module
from dycl.hcfg import Hcfg
from dycl.host.python import emit_host_python
from dycl.models import register_live
from dycl.parallel_build import BuildJob, build_subgraphs
from dycl.printing import module_text
from dycl.types import tensor_type_of

MANIFEST_VERSION = 1
# Passes whose time is spent building and running sub-DNNs in backends.
_BACKEND_PASSES = {"assign-backends"}


@dataclass
class CompileReport:
    """What a compile did and how long each part took (seconds)."""

    pass_seconds: dict[str, float] = field(default_factory=dict)
    frontend_seconds: float = 0.0
    # One-time import of torch's tracing stack, which torch.export needs anyway.
    import_seconds: float = 0.0
    backend_seconds: dict[str, float] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)
    cache_hits: int = 0  # sub-DNNs taken from the disk cache
    deduplicated: int = 0  # sub-DNNs identical to one built earlier in the same compile

    @property
    def dycl_seconds(self) -> float:
        own = {k: v for k, v in self.pass_seconds.items() if k not in _BACKEND_PASSES}
        return self.frontend_seconds + sum(own.values())

    @property
    def total_backend_seconds(self) -> float:
        measuring = sum(v for k, v in self.pass_seconds.items() if k in _BACKEND_PASSES)
        return sum(self.backend_seconds.values()) + measuring


def context() -> Context:
    from xdsl.dialects import arith, builtin

    from dycl.dialects.dycl import DYCL

    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, DYCL):
        ctx.load_dialect(dialect)
    return ctx


def run_pipeline(module: ModuleOp, passes: Sequence[ModulePass], report: CompileReport | None = None,
                 dump_after: str | None = None) -> dict[str, str]:
    """Apply passes in order, verifying after each; returns IR dumps asked for."""
    ctx = context()
    dumps: dict[str, str] = {}
    for p in passes:
        start = time.perf_counter()
        p.apply(ctx, module)
        if report is not None:
            report.pass_seconds[p.name] = report.pass_seconds.get(p.name, 0.0) + time.perf_counter() - start
        module.verify()
        if dump_after in (p.name, "all"):
            dumps[p.name] = module_text(module)
    return dumps


def lower_and_optimize(model: nn.Module, inputs: Sequence[torch.Tensor], pipeline: str = "dycl-default",
                       report: CompileReport | None = None, model_key: str | None = None) -> ModuleOp:
    from dycl.passes.pipelines import pipeline_passes

    start = time.perf_counter()
    import torch._dynamo  # noqa: F401  (fake tensors and torch.export both load it)

    if report is not None:
        report.import_seconds = time.perf_counter() - start
    start = time.perf_counter()
    module = lower_module(model, inputs, model_key or register_live(model))
    if report is not None:
        report.frontend_seconds = time.perf_counter() - start
    run_pipeline(module, pipeline_passes(pipeline), report)
    return module


def build_artifact(module: ModuleOp, model: nn.Module, inputs: Sequence[torch.Tensor], out_dir: Path,
                   target: Target, backend: str, report: CompileReport | None = None, *, jobs: int = 1,
                   options: BuildOptions = BuildOptions()) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    builds: list[BuildJob] = []
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or d.SUBGRAPH_ATTR not in f.attributes:
            continue
        chosen = f.attributes.get(d.BACKEND_ATTR)
        be = get_backend(chosen.data if isinstance(chosen, StringAttr) else backend, options)
        builds.append(BuildJob(be, SubgraphSpec(f.sym_name.data, to_graph_module(f, model), example_inputs(f)), f))
    built = build_subgraphs(builds, model, target, out_dir, jobs, report)
    subgraphs: dict[str, Any] = {}
    loaders: dict[str, str] = {}
    for job in builds:
        name = job.spec.name
        result = built[name]
        if report is not None:
            report.backend_seconds[name] = result.seconds
        loaders[result.backend] = get_backend(result.backend).loader_source()
        subgraphs[name] = {
            "backend": result.backend,
            "file": result.file,
            "inputs": [str(t) for t in job.fn.function_type.inputs.data],
            "outputs": [str(t) for t in job.fn.function_type.outputs.data],
        }
    host = emit_host_python(module, loaders, type(model).__name__)
    (out_dir / "host.py").write_text(host)
    (out_dir / "module.mlir").write_text(module_text(module))
    hcfg = Hcfg.from_module(module)
    (out_dir / "hcfg.dot").write_text(hcfg.to_dot())
    manifest = {
        "version": MANIFEST_VERSION,
        "model": type(model).__name__,
        "target": target.to_json(),
        "inputs": [{"shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch.")} for x in inputs],
        "subgraphs": subgraphs,
        "hcfg": hcfg.counts(),
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def compile(
    model: nn.Module,
    example_inputs: Sequence[torch.Tensor],
    target: str = "llvm",
    backend: str = "tvm",
    *,
    arch: str | None = None,
    out_dir: str | Path | None = None,
    pipeline: str = "dycl-default",
    jobs: int = 1,
    tune_trials: int = 0,
    tuning_dir: str | Path | None = None,
) -> Any:
    """Compile a dynamic `model` for `target`; returns a callable `CompiledModel`.

    `jobs` builds that many sub-DNNs at once (worker processes); `tune_trials`
    tunes TVM's kernels with MetaSchedule (that many trials per task, llvm only),
    recording the results in `tuning_dir` (default: the build cache's `tuning/`).
    """
    from dycl.runtime import CompiledModel

    inputs = list(example_inputs)
    report = CompileReport()
    tgt = Target.parse(target, arch)
    options = build_options(tgt, tune_trials, tuning_dir)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if backend != "fastest":
        get_backend(backend)  # fail early on a typo
    module = lower_and_optimize(model, inputs, pipeline, report)
    if backend == "fastest":
        choose_fastest_backends(module, tgt, report)
        backend = "torch"  # every sub-DNN now names its own
    if out_dir is None:
        out = Path(tempfile.mkdtemp(prefix="dycl-"))
    else:
        out = Path(out_dir)
        if out.exists() and any(out.iterdir()) and not (out / "manifest.json").exists():
            raise FileExistsError(f"output directory '{out}' exists and is not a dycl artifact")
    try:
        build_artifact(module, model, inputs, out, tgt, backend, report, jobs=jobs, options=options)
    except BaseException:
        if out_dir is not None and not (out / "manifest.json").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise
    cm = CompiledModel(out, module=module, report=report)
    if out_dir is None:  # a temporary artifact lives as long as the model
        weakref.finalize(cm, shutil.rmtree, out, ignore_errors=True)
    return cm


def build_options(target: Target, tune_trials: int = 0, tuning_dir: str | Path | None = None) -> BuildOptions:
    if tune_trials < 0:
        raise ValueError("tune_trials must be >= 0")
    if tune_trials and target.kind != "llvm":
        raise ValueError("tuning measures kernels on this machine's CPU: --tune-trials needs --target llvm")
    return BuildOptions(tune_trials, str(tuning_dir) if tuning_dir is not None else None)


def choose_fastest_backends(module: ModuleOp, target: Target, report: CompileReport | None = None) -> None:
    """Run assign-backends{policy=fastest}: each sub-DNN measured on every backend."""
    from dycl.passes.assign_backends import AssignBackendsPass

    run_pipeline(module, [AssignBackendsPass(policy="fastest", target=target.kind, arch=target.arch or "")], report)


def input_type_text(x: torch.Tensor) -> str:
    return str(tensor_type_of(x))
