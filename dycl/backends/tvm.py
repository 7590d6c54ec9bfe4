"""TVM Relax backend: torch.export → Relax → tvm.compile for LLVM or CUDA."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import sys
import tempfile
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from dycl.backends.base import Backend, BuildOptions, SubgraphSpec, Target
from dycl.backends.shape_guards import write_guards
from dycl.backends.tvm_cpu_schedule import cpu_pipeline
from dycl.diagnostics import BackendError, quiet_logger


def tvm_target(target: Target):
    import tvm

    if target.kind == "llvm":
        # No FMA: TVM's LLVM contracts `a * b + c` into one fused multiply-add, rounded
        # once where eager rounds twice (`x * 1.5 + 0.2` differed from eager in the last
        # bit on 28% of elements once the ops were fused into one loop). Measured cost on
        # a matmul and a 3x3 conv: within noise.
        return tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu(), "mattr": ["-fma"]})
    return tvm.target.Target({"kind": "cuda", "arch": target.arch}, host={"kind": "llvm"})


def dynamic_shapes(spec: SubgraphSpec) -> tuple[dict[int, Any] | None, ...] | None:
    """torch.export's spec of the sub-DNN's dynamic dimensions (None: all static)."""
    if not spec.dynamic:
        return None
    dims: list[dict[int, Any] | None] = [None] * len(spec.example_inputs)
    for i, k in spec.dynamic:
        dims[i] = {**(dims[i] or {}), k: torch.export.Dim.DYNAMIC}
    return tuple(dims)


def export(spec: SubgraphSpec, out_dir: Path | None = None) -> torch.export.ExportedProgram:
    """torch.export of the sub-DNN; with dynamic dimensions, its shape guards are
    written to `out_dir` for the host to check (dycl/backends/shape_guards.py)."""
    ep = _export(spec)
    write_guards(spec, ep, out_dir)
    return ep


def _export(spec: SubgraphSpec) -> torch.export.ExportedProgram:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        # nn.LSTM/GRU re-gather their weights on every call (a torch internal, not the model's state).
        warnings.filterwarnings("ignore", message=r"The tensor attributes self\..*_flat_weights.* were assigned during export")
        import torch.fx.experimental._config as fx_config

        try:
            # Size-oblivious: a dynamic size may be 0 or 1 at run time (an expert no token
            # chose, one row selected), not only the 2.. torch.export assumes by default.
            # (A failing export prints its partial graph to stderr and warns about unbacked
            # symbols: the reason goes into the note, the chain goes on.)
            with fx_config.patch(backed_size_oblivious=bool(spec.dynamic)), \
                    contextlib.redirect_stderr(io.StringIO()), quiet_logger("torch.fx.experimental.symbolic_shapes"):
                return torch.export.export(spec.graph_module, tuple(spec.example_inputs),
                                           dynamic_shapes=dynamic_shapes(spec))
        except Exception as e:
            raise BackendError(f"sub-DNN {spec.name} could not be exported: {str(e).splitlines()[0]}") from None


_ALL_OPS = (torch.ops.aten.all.default, torch.ops.aten.all.dim, torch.ops.aten.all.dims)


def _all_as_count() -> dict[Any, Any]:
    """`t.all()` as "no element is false": TVM imports it as `not max(int8(not t))`
    from -128, which is False for an empty tensor (eager: True)."""
    def none_false(t: torch.Tensor, dim: Any = None, keepdim: bool = False) -> torch.Tensor:
        false = torch.logical_not(t).to(torch.int64)
        count = false.sum() if dim is None else false.sum(dim, keepdim=keepdim)
        return count == 0

    return {torch.ops.aten.all.default: none_false, torch.ops.aten.all.dim: none_false,
            torch.ops.aten.all.dims: lambda t, dim=None, keepdim=False: none_false(t, dim if dim else None, keepdim)}


def build_relax(spec: SubgraphSpec, target: Target, options: BuildOptions = BuildOptions(),
                out_dir: Path | None = None):
    """The compiled Relax executable for one sub-DNN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's pytree deprecation, inside TVM
        return _build_relax(spec, target, options, out_dir)


def _build_relax(spec: SubgraphSpec, target: Target, options: BuildOptions, out_dir: Path | None):
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    ep = export(spec, out_dir)
    if (scan := _scan_of_a_dynamic_size(ep)) is not None:
        raise BackendError(f"sub-DNN {spec.name}: TVM's {scan} kernel writes element 0 of its result even when "
                           "the tensor is empty (a crash for a size that may be 0 at run time)")
    if any(n.target in _ALL_OPS for n in ep.graph.nodes):
        ep = ep.run_decompositions(_all_as_count())
    try:
        mod = from_exported_program(ep)
    except Exception as e:
        raise BackendError(f"TVM cannot import sub-DNN {spec.name}: {str(e).splitlines()[0]}") from None
    mod = keep_nan(mod)
    tgt = tvm_target(target)
    if options.tune_trials > 0:
        from dycl.backends.tuning import tune_and_compile

        return tune_and_compile(mod, tgt, options)[0]
    # For cuda the default pipeline also schedules every kernel (dlight), and the
    # kernel launches of statically planned parts are captured in CUDA graphs on
    # the first call and replayed after: 1.1-1.6x faster on every zoo path that
    # has such parts (H200, docs/gpu.md), never slower.
    graphs = target.kind == "cuda"
    # On the CPU, TVM's own pipeline schedules nothing: dycl's rules vectorize (tvm_cpu_schedule).
    pipeline = relax.get_default_pipeline(tgt) if target.kind == "cuda" else cpu_pipeline(tgt)
    with tvm.transform.PassContext(config={"relax.backend.use_cuda_graph": True}) if graphs else nullcontext(), \
            _without_take_warning():
        try:
            ex = tvm.compile(mod, tgt, relax_pipeline=pipeline)
        except tvm.error.InternalError:
            if target.kind != "cuda":
                raise
            # TVM 0.27's dlight Reduction rule crashes on a reduction fused with an
            # elementwise epilogue (e.g. `x.mean() > 0`); GeneralReduction handles it.
            ex = tvm.compile(mod, tgt, relax_pipeline=cuda_pipeline_without_reduction_rule(tgt))
    if target.kind == "cuda" and not cuda_sources(ex):
        raise BackendError(f"sub-DNN {spec.name}: the CUDA build produced no CUDA module")
    return ex


# TVM's C++ log line for every gather it builds in "fast" mode (no bounds check): the
# host checks those indices first (check-index-bounds), so it says nothing to the user.
_TAKE_WARNING = b"Fast mode segfaults when there are out-of-bounds indices"


@contextlib.contextmanager
def _without_take_warning():
    """Run with the process's stderr captured, and give back every line but TVM's
    take warning (other output, TVM's or not, is written as it came)."""
    fd = 2  # (where TVM's C++ writes, whatever Python's sys.stderr is)
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), fd)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().splitlines(keepends=True) if _TAKE_WARNING not in line]
            if kept:
                os.write(fd, b"".join(kept))


_SCANS = {torch.ops.aten.cumsum.default: "cumsum", torch.ops.aten.cumprod.default: "cumprod"}


def _scan_of_a_dynamic_size(ep: torch.export.ExportedProgram) -> str | None:
    """The first cumsum/cumprod whose input has a size known only at run time."""
    for n in ep.graph.nodes:
        if n.target in _SCANS and n.args and isinstance(n.args[0], torch.fx.Node):
            val = n.args[0].meta.get("val")
            if isinstance(val, torch.Tensor) and not all(isinstance(k, int) for k in val.shape):
                return _SCANS[n.target]
    return None


def keep_nan(mod):
    """Rewrite the Relax ops whose TVM kernels drop NaN so that they propagate NaN
    and inf as eager torch does.

    TIR `max(a, b)`/`min(a, b)` lower to `select(a > b, a, b)` (LLVM: `fcmp ogt` +
    select; CUDA: fmaxf), which returns `b` whenever either side is NaN: relu and
    clip (`max(x, 0)`) turn NaN into 0, and max/min reductions and max-pooling drop
    a NaN unless it comes last. Those reductions also start from the lowest finite
    value, not -inf, so a window of -inf gives -FLT_MAX. argmax/argmin compare with
    `>`/`<` and never pick the NaN that torch picks. No fast-math is involved: the
    LLVM target has no fast-math flags by default. Built from standard Relax ops, so
    the fix survives fusion, dlight scheduling (CUDA) and tuning.
    """
    from tvm import relax

    rewriter = _keep_nan_mutator()(mod)
    for gv, func in list(mod.functions_items()):
        if isinstance(func, relax.Function):
            mod[gv] = rewriter.visit_expr(func)
    return relax.transform.Normalize()(mod)


@functools.cache
def _keep_nan_mutator():  # a class made on first use: it needs TVM
    from tvm import ir, relax
    from tvm.relax import op as R

    def floating(e) -> bool:
        ty = getattr(e, "ty", None)
        return isinstance(ty, relax.TensorType) and ty.dtype in ("float16", "bfloat16", "float32", "float64")

    @relax.expr_functor.mutator
    class KeepNaN(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if not isinstance(call.op, ir.Op) or not call.args or not floating(call.args[0]):
                return call
            name, x = call.op.name, call.args[0]
            if name == "relax.multiply":
                # x * 0 is NaN for x = NaN or +-inf; TVM's simplifier makes it 0 (a
                # zero-padding shortcut, `torch.cat([x, x.mul(0)], 1)`, hits this).
                for a, b in ((call.args[0], call.args[1]), (call.args[1], call.args[0])):
                    if floating(a) and isinstance(b, ir.expr.Constant) and not b.value.numpy().any():
                        nonfinite = self.builder_.emit(R.logical_not(R.isfinite(a)))
                        return R.where(nonfinite, relax.const(float("nan"), a.ty.dtype), call)
                return call
            if name in ("relax.nn.relu", "relax.clip"):
                return R.where(R.isnan(x), x, call)
            if name in ("relax.maximum", "relax.minimum") and floating(call.args[1]):
                y = call.args[1]
                either = self.builder_.emit(R.logical_or(R.isnan(x), R.isnan(y)))
                return R.where(either, self.builder_.emit(R.add(x, y)), call)  # a NaN sum
            if name in ("relax.max", "relax.min"):
                return self._extremum(call, x, name == "relax.max", lambda v: R.sum(v, call.attrs.axis, call.attrs.keepdims))
            if name in ("relax.nn.max_pool1d", "relax.nn.max_pool2d", "relax.nn.max_pool3d"):
                a = call.attrs
                avg = getattr(R.nn, name.replace("relax.nn.max_", "avg_"))
                return self._extremum(call, x, True, lambda v: avg(
                    v, a.pool_size, a.strides, a.padding, a.dilation, a.ceil_mode, False, a.layout, a.out_layout))
            if name in ("relax.argmax", "relax.argmin"):
                return self._arg_extremum(call, x, call.attrs.axis, call.attrs.keepdims, name == "relax.argmax")
            if name == "relax.topk" and int(call.attrs.k) == 1 and bool(call.attrs.largest) and call.attrs.ret_type == "both":
                # max(dim) imports as topk(k=1): torch ranks NaN above everything.
                axis = int(call.attrs.axis)
                values = self.builder_.emit(self._extremum(R.max(x, axis, True), x, True, lambda v: R.sum(v, axis, True)))
                index = self.builder_.emit(self._arg_extremum(R.argmax(x, axis, True), x, axis, True, True))
                return relax.Tuple([values, R.astype(index, call.attrs.dtype)])
            return call

        def _extremum(self, call, x, is_max: bool, reduce):
            """The reduction `call` (max or min over windows), with torch's NaN and
            all-inf results. `reduce` sums a tensor like x over the same windows."""
            dtype = x.ty.dtype
            inf = relax.const(float("inf") if is_max else float("-inf"), dtype)
            # Per window: NaN if it holds a NaN, else how many entries are not -inf
            # (not +inf for min); padding counts as -inf, as in torch's max-pool.
            count = R.where(R.equal(x, R.negative(inf)), relax.const(0, dtype), relax.const(1, dtype))
            t = self.builder_.emit(reduce(self.builder_.emit(R.where(R.isnan(x), x, count))))
            r = self.builder_.emit(call)
            return R.where(R.isnan(t), t, R.where(R.equal(t, relax.const(0, dtype)), R.negative(inf), r))

        def _arg_extremum(self, call, x, axis, keepdims, is_max: bool):
            """argmax/argmin that, like torch, point at the first NaN if there is one,
            and at 0 when all are -inf (+inf for argmin), where TVM's finite start
            value is never beaten."""
            def i32(v):
                return relax.const(v, "int32")

            inf = relax.const(float("-inf") if is_max else float("inf"), x.ty.dtype)
            # 2: NaN, 0: the value that cannot win, 1: any other.
            key = self.builder_.emit(R.where(R.isnan(x), i32(2), R.where(R.equal(x, inf), i32(0), i32(1))))
            ordinary = self.builder_.emit(R.equal(R.max(key, axis, keepdims), i32(1)))
            first = self.builder_.emit(R.argmax(key, axis, keepdims))
            return R.where(ordinary, self.builder_.emit(call), first)

    return KeepNaN


def cuda_pipeline_without_reduction_rule(tgt):
    import tvm
    from tvm.relax.backend.cuda import pipeline as cuda
    from tvm.s_tir import dlight as dl

    @tvm.transform.module_pass(opt_level=0)
    def run(mod, _ctx):
        with tgt:
            legalize = [p for p in cuda.legalize_passes(tgt) if not isinstance(p, dl.ApplyDefaultSchedule)]
            schedule = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.GeneralReduction(), dl.gpu.Fallback())
            passes = (
                cuda.library_dispatch_passes(tgt) + legalize + [schedule]
                + cuda.dataflow_lower_passes(tgt) + cuda.finalize_passes(tgt)
            )
            return tvm.transform.Sequential(passes)(mod)

    return run


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


def compile_cuda(source: str, arch: str, target_format: str) -> bytes:
    """CUDA C → `ptx` or `cubin` with nvcc (no GPU needed)."""
    import tvm
    from tvm.support import nvcc

    with tvm.target.Target({"kind": "cuda", "arch": arch}):  # nvcc.py reads the arch from here
        return bytes(nvcc.compile_cuda(source, target_format=target_format, arch=arch, compiler="nvcc"))


def write_cubins(ex, target: Target, out_dir: Path, name: str) -> None:
    """Compile each CUDA module ahead of time, so the deployment machine needs no
    CUDA compiler: the loader hands these to TVM instead of compiling at load."""
    index = {}
    for i, source in enumerate(cuda_sources(ex)):
        file = f"{name}.{i}.cubin"
        (out_dir / file).write_bytes(compile_cuda(source, target.arch or "sm_90", "cubin"))
        index[hashlib.sha256(source.encode()).hexdigest()] = file
    (out_dir / f"{name}.cuda.json").write_text(json.dumps(index, indent=2) + "\n")


class TvmBackend(Backend):
    name = "tvm"
    loader = "dycl.runtime.loaders.tvm:load"
    data_dependent_shapes = False  # Relax's importer has no nonzero and no boolean-mask indexing

    def cache_tag(self) -> str:
        return f"tvm+tune{self.options.tune_trials}" if self.options.tune_trials else "tvm"

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        if self.options.tune_trials and target.kind != "llvm":
            raise BackendError("--tune-trials tunes on this machine's CPU: it needs an llvm target")
        ex = build_relax(spec, target, self.options, out_dir)
        file = f"{spec.name}.so"
        ex.export_library(str(out_dir / file))
        if target.kind == "cuda":
            write_cubins(ex, target, out_dir, spec.name)
        return file
