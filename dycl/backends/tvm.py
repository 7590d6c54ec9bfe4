"""TVM Relax backend: torch.export → Relax → tvm.compile for LLVM or CUDA."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.diagnostics import BackendError


def tvm_target(target: Target):
    import tvm

    if target.kind == "llvm":
        return tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()})
    return tvm.target.Target({"kind": "cuda", "arch": target.arch}, host={"kind": "llvm"})


def export(spec: SubgraphSpec) -> torch.export.ExportedProgram:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            return torch.export.export(spec.graph_module, tuple(spec.example_inputs))
        except Exception as e:
            raise BackendError(f"sub-DNN {spec.name} could not be exported: {str(e).splitlines()[0]}") from None


def build_relax(spec: SubgraphSpec, target: Target):
    """The compiled Relax executable for one sub-DNN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's pytree deprecation, inside TVM
        return _build_relax(spec, target)


def _build_relax(spec: SubgraphSpec, target: Target):
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    ep = export(spec)
    try:
        mod = from_exported_program(ep)
    except Exception as e:
        raise BackendError(f"TVM cannot import sub-DNN {spec.name}: {str(e).splitlines()[0]}") from None
    tgt = tvm_target(target)
    if target.kind == "cuda":
        from tvm.s_tir import dlight as dl

        with tgt:
            mod = relax.get_default_pipeline(tgt)(mod)
            mod = dl.ApplyDefaultSchedule(
                dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback()
            )(mod)
        ex = tvm.compile(mod, tgt)
        if not any(m.kind == "cuda" for m in ex.mod.imports) and not _has_cuda(ex):
            raise BackendError(f"sub-DNN {spec.name}: the CUDA build produced no CUDA module")
        return ex
    return tvm.compile(mod, tgt, relax_pipeline=relax.get_default_pipeline(tgt))


def _has_cuda(ex) -> bool:
    return bool(cuda_sources(ex))


def cuda_sources(ex) -> list[str]:
    """CUDA C of every cuda submodule of a built executable."""
    found: list[str] = []
    stack = [ex.mod]
    while stack:
        m = stack.pop()
        if m.kind == "cuda":
            found.append(m.inspect_source())
        stack.extend(m.imports)
    return found


class TvmBackend(Backend):
    name = "tvm"
    runtime_imports = ("tvm",)

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        ex = build_relax(spec, target)
        file = f"{spec.name}.so"
        ex.export_library(str(out_dir / file))
        return file

    @staticmethod
    def loader_source() -> str:
        return '''
def load_tvm(path, target):
    import tvm
    from tvm import relax

    dev = tvm.cuda(0) if target["kind"] == "cuda" else tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.runtime.load_module(path), dev)
    main = vm["main"]
    from_dlpack = tvm.runtime.from_dlpack
    native = tvm.runtime.Tensor

    def convert(a):
        if isinstance(a, native):
            return a
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
            import numpy

            return tvm.runtime.tensor(numpy.array(a, dtype="float32" if isinstance(a, float) else None), dev)
        return from_dlpack(a)

    def run(*args):
        out = main(*[convert(a) for a in args])
        return list(out) if not isinstance(out, native) else [out]

    return run
'''
