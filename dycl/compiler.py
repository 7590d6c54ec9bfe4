"""`dycl.compile`: model → IR → passes → sub-DNN builds + host program → artifact."""

from __future__ import annotations

import functools
import inspect
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from dycl.runtime.artifact import seal
from dycl.runtime.compiled_model import _import_host
from dycl.diagnostics import DyclError, FrontendError, SourceLoc, quiet_logger, user_stacklevel
from dycl.arguments import Arguments, Parameter, bind, flatten, parameters_of
from dycl.backends.base import POLICIES, BuildOptions, Target, get_backend
from dycl.dialects import dycl as d
from dycl.frontend.lowering import FOLDED_ATTR, LAYOUT_ATTR, MUTATES_ARGUMENTS_ATTR, lower_module
from dycl.fx import subgraph_spec
from dycl.hcfg import Hcfg
from dycl.ir_dump import IrDumper, check_stages
from dycl.host.python import emit_host_python
from dycl.models import register_live
from dycl.parallel_build import BuildJob, build_subgraphs
from dycl.printing import module_text
from dycl.signature import Signature
from dycl.types import tensor_type_of
from dycl.whole_program import mode as whole_program_mode
from dycl.whole_program import try_whole_program
from dycl.diagnostics import InputError, OutputError, SymbolicDimsError, UsageError

CHOICE_ATTR = "dycl.backend_choice"  # set by assign-backends{policy=auto}
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
    # Failed compiles before the one that succeeded (fallback="python" widens regions).
    fallback_attempts: list[str] = field(default_factory=list)
    ir_dumps: dict[str, str] = field(default_factory=dict)  # stage (dycl/ir_dump.py) -> IR after it
    cache_hits: int = 0  # sub-DNNs taken from the disk cache
    deduplicated: int = 0  # sub-DNNs identical to one built earlier in the same compile
    # What the frontend read from the model and its globals and built in (live_guard.py).
    folded_reads: list[tuple[Any, str, str]] | None = None

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
                 dumper: IrDumper | None = None) -> None:
    """Apply passes in order, verifying after each; `dumper` takes the IR after those asked for."""
    ctx = context()
    for p in passes:
        start = time.perf_counter()
        p.apply(ctx, module)
        if report is not None:
            report.pass_seconds[p.name] = report.pass_seconds.get(p.name, 0.0) + time.perf_counter() - start
        module.verify()
        if dumper:
            dumper.after(p.name, module)


def lower_and_optimize(model: nn.Module, inputs: Sequence[torch.Tensor], pipeline: str = "dycl-default",
                       report: CompileReport | None = None, model_key: str | None = None,
                       fallback: str = "none", dumper: IrDumper | None = None, reason: str = "",
                       cut_data_dependent: bool = False, signature: Signature | None = None,
                       as_python: dict[SourceLoc, str] | None = None, arguments: Arguments | None = None) -> ModuleOp:
    from dycl.passes.pipelines import pipeline_passes

    start = time.perf_counter()
    import torch._dynamo  # noqa: F401  (fake tensors and torch.export both load it)

    if report is not None:
        report.import_seconds = time.perf_counter() - start
    start = time.perf_counter()
    folded: list[tuple[Any, str, str]] = []
    module = lower_module(model, inputs, model_key or register_live(model), fallback=fallback, reason=reason,
                          signature=signature, as_python=as_python, arguments=arguments, folded_reads=folded)
    if report is not None:
        report.folded_reads = folded
    if report is not None:
        report.frontend_seconds = time.perf_counter() - start
    if dumper:
        dumper.frontend(module)
    run_pipeline(module, pipeline_passes(pipeline, cut_data_dependent), report, dumper)
    return module


def build_artifact(module: ModuleOp, model: nn.Module, inputs: Sequence[torch.Tensor], out_dir: Path,
                   target: Target, backend: str, report: CompileReport | None = None, *, jobs: int = 1,
                   options: BuildOptions = BuildOptions(), outputs: list[dict[str, Any]] | None = None,
                   signature: Signature | None = None, arguments: Arguments | None = None,
                   policy: str | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    builds: list[BuildJob] = []
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or d.SUBGRAPH_ATTR not in f.attributes:
            continue
        chosen = f.attributes.get(d.BACKEND_ATTR)
        be = get_backend(chosen.data if isinstance(chosen, StringAttr) else backend, options)
        builds.append(BuildJob(be, subgraph_spec(f, model), f))
    built = build_subgraphs(builds, model, target, out_dir, jobs, report)
    subgraphs: dict[str, Any] = {}
    loaders: dict[str, str] = {}
    for job in builds:
        name = job.spec.name
        result = built[name]
        if report is not None:
            report.backend_seconds[name] = result.seconds
        loaders[result.backend] = get_backend(result.backend).loader
        why = job.fn.attributes.get(CHOICE_ATTR)
        subgraphs[name] = {
            "backend": result.backend,
            **({"why": why.data} if isinstance(why, StringAttr) else {}),
            "file": result.file,
            "inputs": [str(t) for t in job.fn.function_type.inputs.data],
            "outputs": [str(t) for t in job.fn.function_type.outputs.data],
        }
    host = emit_host_python(module, loaders, type(model).__name__)
    regions = [op for op in module.walk() if isinstance(op, d.PyRegionOp)]
    (out_dir / "host.py").write_text(host)
    (out_dir / "module.mlir").write_text(module_text(module))
    hcfg = Hcfg.from_module(module, subgraphs=subgraphs)
    (out_dir / "hcfg.dot").write_text(hcfg.to_dot())
    manifest = {
        "model": type(model).__name__,
        "target": target.to_json(),
        "inputs": [{"shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch.")} for x in inputs],
        # What a call may pass: the example shapes, or symbolic dimensions with ranges.
        "signature": (signature or Signature.of_examples(inputs, dynamic=False)).to_json(),
        # forward's parameters (calls by keyword) and, where they are not all tensors, what each was.
        **({"parameters": [p.to_json() for p in params]}
           if (params := arguments.params if arguments is not None else _call_parameters(model, inputs)) is not None
           else {}),
        **({"var_keyword": True} if _takes(model, "VAR_KEYWORD") else {}),
        **({"var_positional": True} if _takes(model, "VAR_POSITIONAL") else {}),
        **({"argument_spec": spec} if (spec := argument_spec(model, inputs, arguments)) is not None else {}),
        **({"outputs": outputs} if outputs is not None else {}),
        "subgraphs": subgraphs,
        "hcfg": hcfg.counts(),
        "fallbacks": fallback_records(module),
        # The model's attributes read at compile time and built into the program.
        "folded_attributes": [a.data for a in module.attributes.get(FOLDED_ATTR, ArrayAttr([])).data],
    }
    if isinstance(mode := module.attributes.get(d.CALLER_GRAD_MODE_ATTR), StringAttr):
        # forward asks about autograd: decided for calls in this grad mode, checked at each call
        manifest["grad_mode"] = mode.data
        if d.AUTOGRAD_IN_EAGER_ATTR in module.attributes:
            manifest["grad_mode_runs_eager"] = True  # (some answer differs by path: eager gives it)
    if LAYOUT_ATTR in module.attributes:
        # forward asks for strides: built for dense inputs, other layouts run the model as eager does.
        manifest["layout_sensitive"] = True
    if MUTATES_ARGUMENTS_ATTR in module.attributes:
        # forward changes lists the caller passed: calls run the model, as eager does
        manifest["mutates_arguments"] = [a.data for a in module.attributes[MUTATES_ARGUMENTS_ATTR].data]
    state = sorted({f"{op.module.data}.{op.attr_name.data}".lstrip(".") for op in module.walk()
                    if isinstance(op, d.GetAttrOp)})
    if state:
        # Module state the host reads at run time: a reloaded artifact reads it off the saved model.
        manifest["module_state"] = state
    if regions or state or LAYOUT_ATTR in module.attributes or MUTATES_ARGUMENTS_ATTR in module.attributes:
        manifest["fallback_model"] = save_fallback_model(model, regions, out_dir)
    (out_dir / "manifest.json").write_text(json.dumps(seal(out_dir, manifest), indent=2) + "\n")
    entry = try_whole_program(module, model, list(inputs), out_dir, target, policy or backend, builds, built,
                              manifest, lambda: _import_host(out_dir).load(str(out_dir)))
    if entry is not None:
        manifest["whole_program"] = entry
        if entry["used"]:
            (out_dir / "host.py").write_text(emit_host_python(module, loaders, type(model).__name__, whole=entry))
        (out_dir / "manifest.json").write_text(json.dumps(seal(out_dir, manifest), indent=2) + "\n")


HOSTS = ("python", "cpp")


def _cpp_backend(backend: str) -> str:
    from dycl.host.cpp import CPP_BACKENDS

    if backend == "auto":
        return "tvm"  # the C++ host's default; Inductor's (.aoti.pt2 through libtorch) when asked for
    if backend not in CPP_BACKENDS:  # tvm, inductor
        raise UsageError(f"the C++ host loads sub-DNNs built by {', '.join(sorted(CPP_BACKENDS))}; "
                         f"backend {backend!r} is not one of them")
    return backend


def add_cpp_host(module: ModuleOp, out_dir: Path, model_name: str, target: Target) -> None:
    """Emit host.cpp into the built artifact `out_dir`, build it, and reseal the manifest."""
    from dycl.host.cpp import emit_host_cpp
    from dycl.host.cpp_build import EXECUTABLE, LIBRARY, build_cpp_host
    from dycl.signature import Signature

    manifest_file = out_dir / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    guards = {}
    for name, info in manifest["subgraphs"].items():  # the backend each sub-DNN got, fallbacks included
        fn = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
        fn.attributes[d.BACKEND_ATTR] = StringAttr(info["backend"])
        found = out_dir / (info["file"].split(".", 1)[0] + ".guards.json")
        if found.exists():
            guards[name] = json.loads(found.read_text())
    sig = manifest.get("signature")
    source = emit_host_cpp(module, model_name, "cuda" if target.kind == "cuda" else "cpu",
                           files={info["file"]: manifest["files"][info["file"]] for info in manifest["subgraphs"].values()
                                  if info["file"] in manifest["files"]},
                           signature=Signature.from_json(sig) if sig else None, guards=guards)
    (out_dir / "host.cpp").write_text(source)
    build_cpp_host(out_dir, out_dir / "host.cpp")
    manifest["cpp_host"] = {"source": "host.cpp", "library": LIBRARY, "executable": EXECUTABLE}
    manifest_file.write_text(json.dumps(seal(out_dir, {k: v for k, v in manifest.items() if k != "files"}),
                                        indent=2) + "\n")


# How far an untranslatable construct widens, tried in order (fallback="python").
FALLBACK_TIERS = ("statement", "tail", "whole")
FALLBACK_MODES = ("python", "error")


_BATCH_DYNAMIC = threading.local()  # compile(dynamic=True) trying the batch dimension symbolic
_RNG_KEPT = threading.local()  # set while a compile keeps the caller's RNG state


def _quiet_fake_tensors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """torch's fake tensors log each op that fails on them with a traceback (an op on a
    region's result of unknown size, tried by a pass): dycl's diagnostics say what matters."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with quiet_logger("torch._subclasses.fake_tensor"):
            return fn(*args, **kwargs)

    return wrapper


@_quiet_fake_tensors
def compile(
    model: nn.Module,
    example_inputs: Sequence[torch.Tensor],
    target: str = "llvm",
    backend: str = "auto",
    *,
    arch: str | None = None,
    out_dir: str | Path | None = None,
    pipeline: str = "dycl-default",
    jobs: int = 1,
    tune_trials: int = 0,
    tuning_dir: str | Path | None = None,
    fallback: str = "python",
    dump_ir: Sequence[str] = (),
    on_ir: Callable[[str, str], None] | None = None,
    dump_ir_after: str | None = None,
    model_key: str | None = None,
    dynamic: bool | str = "auto",
    signature: str | None = None,
    dims: Sequence[str] | Mapping[str, tuple[int, int | None]] = (),
    host: str = "python",
) -> Any:
    """Compile a dynamic `model` for `target`; returns a callable `CompiledModel`.

    `example_inputs` are forward's arguments, by position or (a mapping) by name:
    tensors, and numbers, strings, booleans, None and lists/tuples of them, which
    are compile-time constants (dycl/arguments.py). The compiled model binds its
    calls as Python does (keywords, defaults); a call with other constants or
    list lengths compiles for them on first use under `dynamic="auto"`.

    `backend="auto"` gives each sub-DNN the measurably fastest backend (see
    dycl/backends/auto.py). `jobs` builds that many sub-DNNs at once (worker
    processes); `tune_trials` tunes TVM's kernels with MetaSchedule (that many
    trials per task, llvm only; with the default backend it selects TVM),
    recording the results in `tuning_dir` (default: the build cache's `tuning/`).
    `fallback="python"` runs what the frontend cannot translate as the model's
    own Python in the host (listed in `cm.fallbacks`, warned about once);
    `fallback="error"` makes it a located error instead.

    `dump_ir` names stages whose IR to keep, in `cm.ir_after` (stage -> text): a
    pass of the pipeline (`"shape-inference"`; `"constant-propagation#2"` for its
    second run), `"assign-backends"` when a policy chooses backends, `"frontend"`
    (before any pass) or `"all"`. `on_ir(stage, text)` is called as each is taken,
    so a compile that fails later still shows them. `dump_ir_after="X"` is the
    older spelling of `dump_ir=["X"]`.

    Shapes: `signature="b x 8 x f32, b x i64"` with `dims=["b=1..64"]` (the
    language of dycl/signature.py) compiles one model for every size of the
    named dimensions; `dynamic=True` without a signature makes the first
    dimension of every input the batch size `b` (where the model's code needs
    its value, a warning says so and it compiles as `dynamic="auto"`). `dynamic="auto"` (the default)
    compiles the example shapes and, called with other shapes, compiles a
    specialisation for them on first use (reusing every cached sub-DNN build; at
    most MAX_SPECIALIZATIONS); `dynamic=False` accepts only the example shapes.

    `host="cpp"` also builds the C++ host in the artifact (host.cpp, the
    `dycl_model` command and `libdycl_model.so` with the C API of dycl_model.h; run
    it with `dycl run OUT --host cpp`). It needs sub-DNNs C++ can load (TVM, the
    default then, or Inductor through libtorch) and a program without Python in its host (no
    fallback regions, module-state stores or data-dependent sizes): anything else
    is an error listing each such place. The artifact loads in Python as before.
    """
    params = dict(locals())
    if not getattr(_RNG_KEPT, "active", False):
        # Compiling runs the model and its sub-DNNs (shape inference, build checks):
        # the caller's random stream must be where it was (a seeded call right after
        # a compile, or one that compiles a specialisation, draws eager's numbers).
        _RNG_KEPT.active = True
        try:
            with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))
                                       if torch.cuda.is_initialized() else []):
                return compile(**params)
        finally:
            _RNG_KEPT.active = False
    if dynamic is True and signature is None and not dims and not getattr(_BATCH_DYNAMIC, "trying", False):
        # dynamic=True asks for one model for every batch size; where torch's code
        # needs the batch size's value (nn.GRU's checks), each new size compiles on
        # first use instead (dynamic="auto"): never a refusal, only more compiles.
        _BATCH_DYNAMIC.trying = True
        try:
            return compile(**params)
        except SymbolicDimsError as e:
            import warnings

            from dycl.diagnostics import FallbackWarning

            warnings.warn(f"dycl: the batch size cannot stay symbolic ({e.format().splitlines()[0]}); "
                          "each new input shape compiles on first use (dynamic='auto')", FallbackWarning,
                          stacklevel=user_stacklevel())
        finally:
            _BATCH_DYNAMIC.trying = False
        return compile(**{**params, "dynamic": "auto"})
    from dycl.runtime import CompiledModel

    call_args, call_kwargs = ((), dict(example_inputs)) if isinstance(example_inputs, Mapping) else (
        tuple(example_inputs), {})
    inputs, arguments = bind_examples(model, call_args, call_kwargs)
    tgt = Target.parse(target, arch)
    options = build_options(tgt, tune_trials, tuning_dir)
    if jobs < 1:
        raise UsageError(f"jobs must be at least 1, got {jobs}")
    if fallback not in FALLBACK_MODES:
        raise UsageError(f"fallback must be one of {', '.join(FALLBACK_MODES)}, got {fallback!r}")
    sig = input_signature(inputs, dynamic, signature, dims)
    if host not in HOSTS:
        raise UsageError(f"host must be one of {', '.join(HOSTS)}, got {host!r}")
    if host == "cpp":
        backend = _cpp_backend(backend)
    if tune_trials and backend == "auto":
        backend = "tvm"  # asking for MetaSchedule tuning is asking for TVM
    whole_program_mode()  # a bad DYCL_WHOLE_PROGRAM fails here, not after the build
    if backend not in POLICIES:
        from dycl.runtime.loaders import resolve

        # Fail early on a typo, and on a loader that cannot be imported (a plugin's).
        resolve(backend, get_backend(backend).loader)
    from dycl.passes.pipelines import pipeline_passes

    pipeline_passes(pipeline)  # likewise
    if isinstance(dump_ir, str):
        dump_ir = [dump_ir]  # one name, not its letters
    wanted = [*dump_ir, *([dump_ir_after] if dump_ir_after else [])]
    # A backend that cannot build data-dependent output sizes gets sub-DNNs cut at them.
    cut = backend not in POLICIES and not get_backend(backend).data_dependent_shapes
    _check_dump_ir(wanted, pipeline, backend in POLICIES, cut)
    eager_error, outputs = _eager_error(model, call_args, call_kwargs)
    final: Path | None = None
    if out_dir is None:
        out = Path(tempfile.mkdtemp(prefix="dycl-"))
    else:
        if not str(out_dir).strip():
            raise UsageError("the output directory must not be empty (it would be the current directory)")
        final = Path(out_dir)
        if final.exists() and not final.is_dir():
            raise OutputError(f"output '{final}' exists and is not a directory")
        if final.exists() and any(final.iterdir()) and not (final / "manifest.json").exists():
            raise OutputError(f"output directory '{final}' exists and is not a dycl artifact")
        # Built beside it and renamed at the end: an interrupted or failed compile
        # leaves `final` as it was (absent, or the previous artifact whole).
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            out = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
        except OSError as e:
            raise OutputError(f"cannot write the artifact '{final}': {e.strerror or e}") from None
    tiers = FALLBACK_TIERS if fallback == "python" else ("none",)
    attempts: list[str] = []
    as_python: dict[SourceLoc, str] = {}  # where passes or backends failed: those statements run as Python
    k = 0
    while k < len(tiers):
        tier = tiers[k]
        report = CompileReport()
        dumper = IrDumper(wanted, report.ir_dumps, on_ir)
        try:
            module = lower_and_optimize(model, inputs, pipeline, report, model_key, tier, dumper,
                                        reason=attempts[0].split(": ", 1)[1] if attempts else "",
                                        cut_data_dependent=cut, signature=sig, as_python=as_python,
                                        arguments=arguments)
            chosen = backend
            if backend in POLICIES:
                choose_backends(module, tgt, report, backend, dumper, jobs)
                chosen = "torch"  # every sub-DNN now names its own
            build_artifact(module, model, inputs, out, tgt, chosen, report, jobs=jobs, options=options,
                           outputs=outputs, signature=sig, arguments=arguments, policy=backend)
            break
        except BaseException as e:
            shutil.rmtree(out, ignore_errors=True)
            if k == len(tiers) - 1 or not isinstance(e, Exception) or _is_input_error(e):
                if eager_error is not None and isinstance(e, Exception) and not isinstance(e, (FrontendError, InputError)):
                    raise eager_error from e  # eager's reason is the one to show
                raise
            out.mkdir()
            if not isinstance(e, DyclError):
                warn_internal_error(e, type(model).__name__, tier)
            # Compile more of the model as Python (never a wrong answer, only slower).
            message = e.format().splitlines()[0] if isinstance(e, DyclError) else f"{type(e).__name__}: {e}"
            attempts.append(f"{tier}: {message}")
            if tier == "statement" and _in_model_code(e) and e.loc not in as_python and len(as_python) < 8:
                # that statement alone, next time (a sub-DNN no backend builds: each of its statements)
                places = [loc for loc in getattr(e, "locs", None) or [e.loc] if loc not in as_python]
                if len(as_python) + len(places) <= 16:
                    as_python.update(dict.fromkeys(places, e.message))
                    continue
            k += 1
    report.fallback_attempts = attempts
    if host == "cpp":
        try:
            add_cpp_host(module, out, type(model).__name__, tgt)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    if eager_error is not None:
        _check_raises_too(out, module, report, model, call_args, call_kwargs, eager_error)
    if final is not None:
        _replace_dir(out, final)
        out = final
    cm = CompiledModel(out, module=module, report=report, model=model)
    if out_dir is None:  # a temporary artifact lives as long as the model
        weakref.finalize(cm, shutil.rmtree, out, ignore_errors=True)
    if dynamic == "auto" or sig.dynamic:
        # Other shapes compile on first use, with these options (never with an out_dir:
        # the artifact on disk stays the one for the example shapes). Under a signature,
        # the sizes in its ranges that a sub-DNN's build does not hold for (torch.export
        # decided something at a length of 1, say) compile so too.
        cm.specialize = functools.partial(
            _specialize, model, target=target, backend=backend, arch=arch, pipeline=pipeline, jobs=jobs,
            tune_trials=tune_trials, tuning_dir=tuning_dir, fallback=fallback, model_key=model_key, dynamic=False)
    if out_dir is None:
        # What forward itself changes (module state of another shape, a buffer it
        # re-registers) or the caller sets (an attribute, `train()`) compiles on first use.
        cm.recompile = functools.partial(
            _specialize, model, target=target, backend=backend, arch=arch, pipeline=pipeline, jobs=jobs,
            tune_trials=tune_trials, tuning_dir=tuning_dir, fallback=fallback, model_key=model_key,
            dynamic=dynamic, signature=signature, dims=dims, host=host)
    if cm.fallbacks:
        locs = {r["loc"] for r in cm.fallbacks}
        warned = _WARNED_REGIONS.setdefault(model, set())
        if not (getattr(_SPECIALIZING, "on", False) and locs <= warned):
            warn_fallbacks(cm.fallbacks)  # (not again for each input shape compiled on first use)
        warned |= locs
    if cm._dim_check is not None:
        import warnings

        from dycl.diagnostics import FallbackWarning

        rules = "; ".join(f"{sub}: {rule}" for sub, rule in cm._dim_guards)
        warnings.warn(FallbackWarning(f"some sizes the signature allows are not covered by the build ({rules}): "
                                      "this compiled model compiles them on first use, a loaded artifact refuses them"),
                      stacklevel=user_stacklevel())
    return cm


def input_signature(inputs: list[Any], dynamic: bool | str, signature: str | None,
                    dims: Sequence[str] | Mapping[str, tuple[int, int | None]]) -> Signature:
    """The signature the compiled model accepts; the example inputs must fit it."""
    if dynamic not in (True, False, "auto"):
        raise UsageError(f"dynamic must be True, False or 'auto', got {dynamic!r}")
    if signature is None and not all(isinstance(x, torch.Tensor) for x in inputs):
        return Signature(())  # refused with its own diagnostic by the frontend
    if isinstance(signature, (list, tuple)) and all(isinstance(s, str) for s in signature):
        signature = ", ".join(signature)  # one entry per input
    if signature is not None and not isinstance(signature, str):
        raise UsageError(f"signature must be a string such as 'b x 3 x h x w x f32, b x i64' (or a list of one per "
                         f"input), got {type(signature).__name__}")
    if signature is not None:
        sig = Signature.parse(signature, dims)
        if sig.dynamic and dynamic is False:
            raise UsageError(f"the signature '{signature}' has symbolic dimensions, and dynamic=False asks "
                             "for the example shapes only")
    else:
        sig = Signature.of_examples(inputs, dynamic is True, dims)
        unused = set(sig.ranges) - sig.names()
        if unused:
            raise UsageError(f"dims names {', '.join(sorted(unused))}, which no input dimension uses; "
                             "name dimensions with signature= (or dynamic=True: the first of each input is b)")
    try:
        sig.bind(inputs)
    except InputError as e:
        raise UsageError(f"the example inputs do not fit the signature {sig.text()}: "
                         f"{e.message}") from None
    return sig


def _replace_dir(new: Path, final: Path) -> None:
    """`final` becomes `new`; an earlier artifact there is moved aside first and then
    removed, so no moment holds a mix of the two."""
    if final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
        new.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(final)


def _check_dump_ir(names: list[str], pipeline: str, policy: bool, cut: bool = False) -> None:
    from dycl.passes.pipelines import pipeline_stages

    passes = [*pipeline_stages(pipeline, cut), *(["assign-backends"] if policy else [])]
    check_stages(names, pipeline, passes, "to dump the IR after")


def bind_examples(model: nn.Module, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """The program's example tensors, and how forward's arguments are made of them
    (None where they are forward's positional arguments as they are)."""
    params = parameters_of(model)
    if params is None and not kwargs and not all(isinstance(x, torch.Tensor) for x in args):
        params = parameters_of(model, len(args))  # forward(self, x, *args): constants bound by position
    elif params is None and kwargs:  # forward(self, input_ids, mask=None, **kwargs) by its parameters' names
        named = parameters_of(model, len(args))
        if named is not None and not any(p.kind == "variadic" for p in named) and set(kwargs) <= {p.name for p in named}:
            params = named
    if params is None or (not kwargs and all(isinstance(x, torch.Tensor) for x in args)):
        if kwargs:
            raise UsageError("example inputs by name need a forward without *args/**kwargs")
        return list(args), None
    flat, specs = flatten(bind(params, args, kwargs))
    return flat, Arguments(params, specs)


def _call_parameters(model: nn.Module, inputs: Sequence[Any]) -> list[Parameter] | None:
    """forward's parameters as a call binds them: with *args/**kwargs, the named ones
    (and *args as the example's extra positional arguments; **kwargs takes none)."""
    return parameters_of(model) or parameters_of(model, len(inputs))


def _takes(model: nn.Module, kind: str) -> bool:
    """Whether forward has a parameter of this kind (VAR_KEYWORD: **kwargs, VAR_POSITIONAL: *args)."""
    try:
        return any(p.kind == getattr(p, kind) for p in inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return False


def argument_spec(model: nn.Module, inputs: Sequence[Any], arguments: Arguments | None) -> list[Any] | None:
    """What each of forward's parameters was at compile time, for the manifest (calls
    by keyword, and calls with other constants, compare against it)."""
    if arguments is not None:
        return arguments.specs
    params = _call_parameters(model, inputs)
    if params is None:
        return None
    try:
        return flatten(bind(params, inputs, {}))[1]
    except InputError:
        return None


def _eager_error(model: nn.Module, args: Sequence[Any],
                 kwargs: Mapping[str, Any] = {}) -> tuple[InputError | None, list[dict[str, Any]] | None]:
    """Eager's verdict on the example inputs. A torch op rejecting them (a dtype the
    weights do not take, a wrong shape) is a compile error here, as in eager; the
    model's own `raise`/`assert` is returned, to compare with the compiled model's."""
    from dycl.diagnostics import user_code_error
    from dycl.region_typing import protected

    if any(isinstance(x, torch.Tensor) and x.is_meta for x in (*args, *kwargs.values())):
        return None, None  # refused with its own diagnostic by the input checks
    try:
        with protected(model, getattr(sys.modules.get(type(model).__module__), "__dict__", None)), torch.no_grad():
            # Clones: a model that updates its input in place must not change the caller's examples.
            result = model(*_cloned(args), **dict(zip(kwargs, _cloned(kwargs.values()))))
    except Exception as e:
        err = user_code_error(e, "the model, run eagerly on the example inputs,")
        error = InputError(err.message, err.loc, "eager PyTorch rejects these inputs, so dycl does too")
        error.eager_exception = e  # what a call with such inputs re-raises (CompiledModel specialising)
        if not _raised_by_the_model(e):
            raise error from None
        return error, None
    return None, _describe_outputs(result)


def _describe_outputs(result: Any) -> list[dict[str, Any]]:
    """The flattened outputs on the example inputs, for the manifest (other paths may
    return other shapes: this is what the example inputs gave)."""
    leaves, _ = torch.utils._pytree.tree_flatten(result)
    described = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            described.append({"shape": list(leaf.shape), "dtype": str(leaf.dtype).removeprefix("torch.")})
        else:
            described.append({"python": type(leaf).__name__})
    return described


def _raised_by_the_model(e: BaseException) -> bool:
    """Whether `e` is the model's own doing (a `raise`, an `assert`, a missing
    attribute: part of what it computes), not a torch op refusing its arguments
    (torch reports a wrong dtype or shape as a RuntimeError)."""
    import linecache

    if not isinstance(e, RuntimeError):
        return True
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    file = tb.tb_frame.f_code.co_filename
    if file.startswith((os.path.dirname(torch.__file__) + os.sep, "<")):
        return False
    return linecache.getline(file, tb.tb_lineno).lstrip().startswith(("raise", "assert"))


def _cloned(values: Any) -> list[Any]:
    """Copies (lists and tuples too): running the model on them changes none of the caller's."""
    def copy(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            with torch.inference_mode(x.is_inference()):  # (a call in inference mode: the caller's kind of tensor)
                return x.clone()
        return type(x)(copy(v) for v in x) if type(x) in (list, tuple) else x

    return [copy(x) for x in values]


def _check_raises_too(out: Path, module: Any, report: CompileReport, model: nn.Module, args: Sequence[Any],
                      kwargs: Mapping[str, Any], eager_error: InputError) -> None:
    """A model that raises on its example inputs compiles only if the compiled model
    raises on them too (a data-dependent `raise` is part of its meaning); one that
    runs where eager raised would be a silently different program."""
    from dycl.region_typing import protected
    from dycl.runtime import CompiledModel

    try:
        with protected(model, getattr(sys.modules.get(type(model).__module__), "__dict__", None)):
            CompiledModel(out, module=module, report=report, model=model)(
                *_cloned(args), **dict(zip(kwargs, _cloned(kwargs.values()))))
    except Exception:
        return
    shutil.rmtree(out, ignore_errors=True)
    raise eager_error


def _is_input_error(e: BaseException) -> bool:
    """Errors about the example inputs or the declared signature: no fallback makes them right."""
    return (isinstance(e, FrontendError) and "example input" in e.message) or isinstance(e, SymbolicDimsError)


def _in_model_code(e: BaseException) -> bool:
    """A failure after translation located in the model's source (a pass or a
    backend on one expression), which running that statement as Python avoids."""
    import dycl

    if not (isinstance(e, DyclError) and not isinstance(e, (FrontendError, InputError)) and e.loc is not None):
        return False
    file = str(Path(e.loc.file).resolve())
    return not any(file.startswith(str(Path(pkg.__file__).parent.resolve())) for pkg in (dycl, torch))


# The regions each model's compiles warned of; a compile for other input shapes
# (on first use) says only new ones.
_WARNED_REGIONS: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_SPECIALIZING = threading.local()


def _specialize(*args: Any, **kwargs: Any) -> Any:
    """`compile` for other input shapes of a compiled model, on first use."""
    _SPECIALIZING.on = True
    try:
        return compile(*args, **kwargs)
    finally:
        _SPECIALIZING.on = False


def warn_internal_error(e: BaseException, model: str, tier: str) -> None:
    """An exception of dycl's own (not a diagnostic) made a compile attempt fail: the
    model still compiles, with more of it as Python, but the bug must not hide."""
    import traceback
    import warnings

    from dycl.diagnostics import InternalErrorWarning

    frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    text = str(e).splitlines()[0][:200] if str(e) else ""
    warnings.warn(f"dycl: internal error compiling {model} ({type(e).__name__}{where}: {text}); this is a bug "
                  f"in dycl (please report it): the compile goes on with more of the model as Python (after "
                  f"the '{tier}' attempt)", InternalErrorWarning, stacklevel=user_stacklevel())


def warn_fallbacks(records: list[dict[str, Any]]) -> None:
    import warnings

    from dycl.diagnostics import FallbackWarning

    where = ", ".join(f"{r['loc']} ({r['construct']}{', x%d' % r['copies'] if r['copies'] > 1 else ''})"
                      for r in records[:6]) + (", ..." if len(records) > 6 else "")
    n = sum(r["copies"] for r in records)
    warnings.warn(f"dycl: {n} region{'s' if n > 1 else ''} run{'' if n > 1 else 's'} as Python: {where} "
                  "(cm.fallbacks or `dycl compile --explain` says why)", FallbackWarning, stacklevel=user_stacklevel())


def fallback_records(module: ModuleOp) -> list[dict[str, Any]]:
    """Each fallback region's code: where, what, why, in how many copies (one per
    unrolled iteration or path), and its share of the tensor calls (calls in its
    copies against the tensor ops compiled into sub-DNNs)."""
    import ast

    compiled = sum(1 for op in module.walk() if isinstance(op, d.TENSOR_OPS) and _in_subgraph(op))
    calls: dict[tuple[str, str, str], int] = {}
    copies: dict[tuple[str, str, str], int] = {}
    for op in module.walk():
        if not isinstance(op, d.PyRegionOp):
            continue
        key = (op.loc.data, op.construct.data, op.reason.data)
        calls[key] = calls.get(key, 0) + sum(isinstance(n, ast.Call) for n in ast.walk(ast.parse(op.code.data)))
        copies[key] = copies.get(key, 0) + 1
    return [{"loc": loc, "construct": construct, "reason": reason, "copies": copies[k],
             "tensor_op_share": round(calls[k] / max(1, calls[k] + compiled), 3)}
            for k in calls for loc, construct, reason in [k]]


def _in_subgraph(op: Any) -> bool:
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    return f is not None and d.SUBGRAPH_ATTR in f.attributes


def _importable(name: str) -> bool:
    """Whether `name` imports from its file where it is (a module made with
    types.ModuleType or runpy has no spec: find_spec raises ValueError)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ValueError, ImportError):
        return False


def main_class_digests(model: nn.Module) -> dict[str, str | None]:
    """The model's classes defined in the compiling script (`__main__`: a script, a
    notebook), each by its source's hash (None where Python has no source, `python -c`):
    a reload checks that `__main__` there defines the same ones (pyregion.load_model)."""
    from dycl.pyregion import source_digest

    return {type(m).__qualname__: source_digest(type(m)) for m in model.modules() if type(m).__module__ == "__main__"}


def save_fallback_model(model: nn.Module, regions: list[Any], out_dir: Path) -> dict[str, Any]:
    """Store the model (pickled) and the sources of its non-installed modules, for
    the regions of a reloaded artifact; loading it runs that code."""
    import sysconfig

    from dycl.pyregion import check_saved_model, model_pickler

    installed = {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    names = {type(m).__module__ for m in model.modules()} | {op.globals.data for op in regions}
    sources = []
    (out_dir / "model_src").mkdir(exist_ok=True)
    for name in sorted(names):
        mod = sys.modules.get(name)
        file = getattr(mod, "__file__", None)
        if mod is None or not file or not Path(file).is_file() or any(file.startswith(p) for p in installed) \
                or name.startswith("dycl."):
            continue
        if name != "__main__" and _importable(name) and not name.startswith("dycl_user_"):
            continue  # importable where it is
        dest = Path("model_src") / f"{name}.py"
        shutil.copyfile(file, out_dir / dest)
        sources.append({"module": name, "file": str(dest)})
    modules = sorted(n for n in names if not n.startswith("torch"))
    try:
        torch.save(model, out_dir / "model.pt", pickle_module=model_pickler())
        check_saved_model(str(out_dir / "model.pt"), modules)  # what loading it would refuse, said now
    except Exception as e:  # e.g. a lambda held by the model
        (out_dir / "model.pt").unlink(missing_ok=True)
        why = e.message if isinstance(e, DyclError) else f"{type(e).__name__}: {e}"
        return {"file": None, "error": f"the model could not be saved for loading: {why}"}
    # The modules whose classes and functions the pickle may name (see pyregion.load_model).
    return {"file": "model.pt", "sources": sources, "modules": modules, "main_classes": main_class_digests(model)}


def build_options(target: Target, tune_trials: int = 0, tuning_dir: str | Path | None = None) -> BuildOptions:
    if tune_trials < 0:
        raise UsageError("tune_trials must be >= 0")
    if tune_trials and target.kind != "llvm":
        raise UsageError("tuning measures kernels on this machine's CPU: --tune-trials needs --target llvm")
    return BuildOptions(tune_trials, str(tuning_dir) if tuning_dir is not None else None)




def choose_backends(module: ModuleOp, target: Target, report: CompileReport | None = None,
                    policy: str = "auto", dumper: IrDumper | None = None, jobs: int = 1) -> None:
    """Run assign-backends with `policy` (auto: measured, with a margin; fastest: plain medians);
    auto builds its candidates `jobs` at a time."""
    from dycl.passes.assign_backends import AssignBackendsPass

    run_pipeline(module, [AssignBackendsPass(policy=policy, target=target.kind, arch=target.arch or "", jobs=jobs)],
                 report, dumper)


def input_type_text(x: torch.Tensor) -> str:
    return str(tensor_type_of(x))
